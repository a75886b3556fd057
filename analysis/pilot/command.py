"""``coldrun-analyze pilot`` and ``compare``'s Welch forms: Pilot's methods (Li et al.) on the command line.

``compare A B`` itself is the ratio of analysis/compare_command.py; Pilot's comparison of results files
is ``compare --method welch A B``, of summary statistics ``compare --welch ...`` (both kept as they were).

Human reports (``--format text|json|html``, ``-o FILE``)::

    coldrun-analyze pilot RESULTS...     per key and process execution: stable segment, q, mean,
                                         CI width, required samples; per key: the mean of the
                                         execution means and its CI (analysis.pilot.results)
    coldrun-analyze compare --method welch A B
                                         per key in both: Welch's test on the execution means

RESULTS are anything ``analysis.inputs`` reads (Krun results, coldrun's native
export, warmup_stats CSV with --vm/--language). Statistical settings: ``--preset
quick|normal|strict`` (Pilot's: AC limit 0.8/0.2/0.1, target CI 20/10/10 % of
the mean, 30/50/200 samples); without one, Pilot's library defaults (0.1, 10 %,
200: strict's numbers); ``--ac-limit``, ``--ci-percent``, ``--ci-width``,
``--min-samples``, ``--confidence`` override one by one. ``--ci-width`` alone
replaces the percentage target; both given: the smaller width wins (Pilot).

Machine interface (stable: field names and meanings only grow; ``--json``
prints one JSON object; numbers are JSON numbers, ``null`` = none)::

    coldrun-analyze pilot --readings FILE --json
        FILE: one reading per line (finite, >= 0; at least 3). Options: --mean
        arithmetic|harmonic|binary, --ac-limit (0.1), --subsession-size Q (forces q),
        --confidence (0.95), --ci-percent F (a fraction, 0.1, or "10%") / --ci-width W
        (full widths), --min-samples N (200), --edm-percent (0.25), --edm-min-size (30),
        --no-warmup-removal, --preset.
        Fields: readings (all given), changepoints (EDM's; null when EDM did not run),
        stable_segment ([begin, end) analysed: Pilot's dominant segment; the whole
        series with --no-warmup-removal or fewer than --edm-min-size readings; null:
        no dominant segment, nothing analysed), n (readings analysed), mean, q,
        variance, autocovariance, autocorrelation (subsession statistics at q),
        ci_width (FULL width at q), target_ci_width, required_subsessions (Pilot's
        optimal sample size at q for the target), required_samples (q x
        max(required_subsessions, --min-samples)), notes, and the settings used
        (mean_method, ac_limit, confidence, min_samples, warmup_removal).
        n, mean and every statistic are those of the STABLE SEGMENT: Pilot analyses
        the unit readings it kept. Pilot's published ``bench analyze`` results hold
        anyway (EDM needs 2 x 30 readings for a changepoint, so Ferrari's 48 are one
        segment): ``--preset quick`` gives its default output, ``--preset strict``
        and ``--mean harmonic --preset quick`` its other two; ``--no-warmup-removal``
        is ``bench analyze`` exactly, for any length (analysis/pilot/readings.py).

    coldrun-analyze pilot --wps FILE.csv --json
        CSV header work_amount,duration_ns, one row per round (both > 0). Options:
        --ac-limit, --duration-threshold-ns (0), --confidence, --variant
        textbook|ascar|fork (textbook: analysis/pilot/wps.py). Fields: alpha_s,
        v_per_s, v_ci_width (full width; null: the CI of v has no upper bound),
        ssr, ssr_percent, subsession_size (h, subsessions regressed), q,
        rounds_used, variant.

    coldrun-analyze compare --welch M1 V1 N1 M2 V2 N2 [--confidence C] [--target-p P] --json
        Means, VARIANCES and sizes of two samples. Fields: dof (Welch, unrounded),
        p (two-sided), diff_ci ([low, high] of M1 - M2), samples_for_target_p (the
        second sample's size for p <= P, sample 1 the baseline; null: not asked, or
        unreachable), note. A sample below 2: p 0.5, dof and diff_ci null (Pilot).

Bad input: one line naming the file (and line) or option, exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import NamedTuple

from analysis.errors import AnalysisError
from analysis.pilot.presets import PRESETS, preset

FORMATS = ("text", "json", "html")
MEAN_METHODS = ("arithmetic", "harmonic", "binary")  # analysis.pilot.subsession.MEAN_METHODS
WPS_VARIANTS = ("textbook", "ascar", "fork")  # analysis.pilot.wps.VARIANTS
# Options that belong to one mode; given in another they are refused.
READINGS_ONLY = ("mean", "subsession_size", "edm_percent", "edm_min_size", "no_warmup_removal")
WPS_ONLY = ("variant", "duration_threshold_ns")
FILES_ONLY = ("vm", "language", "uname", "jobs")
TARGET_OPTIONS = ("ci_percent", "ci_width", "min_samples")
DEFAULT_REPORT_CONFIDENCE = 0.95


def _number(text: str, *, low: float, high: float = math.inf, low_open: bool = False,
            high_open: bool = False, what: str, scale: float = 1.0) -> float:
    try:
        value = float(text.strip().removesuffix("%") if scale != 1.0 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number ({what}), got {text!r}") from None
    if not (value > low if low_open else value >= low) or not (value < high if high_open else value <= high):
        if high == math.inf:
            bound = f"{'>' if low_open else '>='} {low:g}"
        else:
            bound = f"within {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise argparse.ArgumentTypeError(f"must be {bound} ({what}), got {text!r}")
    return value


def _confidence(text: str) -> float:
    return _number(text, low=0, high=1, low_open=True, high_open=True, what="a confidence level such as 0.95")


def _ac_limit(text: str) -> float:
    return _number(text, low=0, high=1, low_open=True, what="the autocorrelation limit, Pilot's (0, 1]")


def _probability(text: str) -> float:
    return _number(text, low=0, high=1, low_open=True, high_open=True, what="a p-value such as 0.05")


def _ci_percent(text: str) -> float:
    """A fraction of the mean (0.1) or a percentage with a sign (10%)."""
    if text.strip().endswith("%"):
        return _number(text, low=0, low_open=True, what="a percentage of the mean", scale=0.01)
    value = _number(text, low=0, low_open=True, what='a fraction of the mean such as 0.1, or "10%"')
    if value > 1:
        raise argparse.ArgumentTypeError(f'{text!r} would be more than the mean itself; give a fraction such '
                                         f'as 0.1 or a percentage such as "{text}%"')
    return value


def _ci_width(text: str) -> float:
    return _number(text, low=0, low_open=True, what="a full CI width, in the readings' unit")


def _nonnegative(text: str) -> float:
    return _number(text, low=0, what="a number >= 0")


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
        return value
    return parse


def _add_target_options(p: argparse.ArgumentParser, confidence_help: str = "confidence level (0.95)") -> None:
    g = p.add_argument_group("statistical settings (Pilot's; options override the preset)")
    g.add_argument("--preset", choices=tuple(PRESETS),
                   help="quick: AC 0.8, CI 20%% of the mean, 30 samples; normal: 0.2, 10%%, 50; strict: 0.1, "
                        "10%%, 200 (default: Pilot's library defaults, strict's numbers)")
    g.add_argument("--ac-limit", type=_ac_limit, help="autocorrelation limit for the subsession size q (0.1)")
    g.add_argument("--ci-percent", type=_ci_percent, metavar="F",
                   help='target FULL CI width as a fraction of the mean: 0.1 or "10%%" (0.1)')
    g.add_argument("--ci-width", type=_ci_width, metavar="W",
                   help="target FULL CI width, absolute (alone it replaces --ci-percent; both: the smaller)")
    g.add_argument("--min-samples", type=_count(0), metavar="N",
                   help="Pilot's minimum subsession sample size within one series (200)")
    g.add_argument("--confidence", type=_confidence, default=DEFAULT_REPORT_CONFIDENCE, help=confidence_help)


def _add_format_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--format", choices=FORMATS, default="text")
    g.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def _add_file_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("results files")
    g.add_argument("--jobs", type=_count(1), help="worker processes (default: one per CPU)")
    g.add_argument("--vm", help="VM name for warmup_stats CSV input")
    g.add_argument("--language", help="language for warmup_stats CSV input")
    g.add_argument("--uname", help="uname -a of the machine, for warmup_stats CSV input")


def one_line_errors(parser: argparse.ArgumentParser) -> None:
    """A bad option is one line naming it (argparse would print the whole usage first)."""
    def error(message: str):
        parser.exit(2, f"{parser.prog}: error: {message} (see {parser.prog} --help)\n")
    parser.error = error  # type: ignore[method-assign]


def add_pilot_commands(subparsers) -> None:
    """Register ``pilot`` on an argparse subparsers object (``compare``: analysis/compare_command.py)."""
    pilot = subparsers.add_parser(
        "pilot", help="Pilot's stable segments, subsession CIs and sample sizes",
        description="Pilot's analysis (Li et al.) of results files, or of one series of readings (--readings) "
                    "or WPS rounds (--wps). See the module docstring of analysis/pilot/command.py for the JSON.")
    pilot.add_argument("results", nargs="*", metavar="RESULTS", help="results file(s)")
    source = pilot.add_argument_group("instead of RESULTS: one series (the machine interface)")
    source.add_argument("--readings", metavar="FILE", help="one reading per line")
    source.add_argument("--wps", metavar="FILE.csv", help="CSV work_amount,duration_ns: Pilot's WPS regression")
    _add_target_options(pilot)
    readings = pilot.add_argument_group("--readings only")
    readings.add_argument("--mean", choices=MEAN_METHODS, help="mean method (arithmetic)")
    readings.add_argument("--subsession-size", type=_count(1), metavar="Q", help="force the subsession size q")
    readings.add_argument("--no-warmup-removal", action="store_true",
                          help="analyse every reading (Pilot's bench analyze); default: the EDM stable segment")
    readings.add_argument("--edm-percent", type=_nonnegative, help="EDM percent-change penalty (0.25)")
    readings.add_argument("--edm-min-size", type=_count(2), help="EDM minimum segment length (30)")
    wps = pilot.add_argument_group("--wps only")
    wps.add_argument("--variant", choices=WPS_VARIANTS, help="textbook (default), or Pilot's ascar/fork trees")
    wps.add_argument("--duration-threshold-ns", type=_nonnegative, help="drop rounds this short or shorter (0)")
    _add_file_options(pilot)
    _add_format_options(pilot)
    pilot.set_defaults(func=run_pilot)
    one_line_errors(pilot)


def add_welch_options(compare: argparse.ArgumentParser) -> None:
    """``compare``'s Pilot options (analysis/compare_command.py registers ``compare``): ``--welch``,
    ``--target-p``, the statistical settings and the results-file options; ``--confidence`` defaults to
    None there (the ratio's 0.99, Welch's :data:`DEFAULT_REPORT_CONFIDENCE`)."""
    compare.add_argument("--welch", nargs=6, metavar=("M1", "V1", "N1", "M2", "V2", "N2"),
                         help="Welch: two samples' means, variances and sizes instead of files")
    compare.add_argument("--target-p", type=_probability,
                         help="Welch: p to reach: the sample size needed (files: default 0.05, Pilot's)")
    _add_target_options(compare, "confidence level (ratio: 0.99, as the table; welch: 0.95, Pilot's)")
    _add_file_options(compare)
    compare.set_defaults(confidence=None)


def given_options(args: argparse.Namespace, names) -> list[str]:
    return ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) not in (None, False)]


def refuse_options(args: argparse.Namespace, names, mode: str) -> None:
    given = given_options(args, names)
    if given:
        raise AnalysisError(f"{', '.join(given)}: not used with {mode}")


class PilotTarget(NamedTuple):
    ac_limit: float
    min_samples: int
    ci_percent: float | None
    ci_width: float | None


def resolved_target(args: argparse.Namespace) -> PilotTarget:
    """The preset (or Pilot's library defaults) with the options given one by one laid over it."""
    base = preset(args.preset)
    ci_percent = args.ci_percent
    if ci_percent is None and args.ci_width is None:
        ci_percent = base.ci_percent
    return PilotTarget(args.ac_limit if args.ac_limit is not None else base.ac_limit,
                  args.min_samples if args.min_samples is not None else base.min_samples,
                  ci_percent, args.ci_width)


def _finite(value):
    """``value`` with every non-finite float as None: strict JSON has no NaN or Infinity."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_document(doc) -> str:
    return json.dumps(_finite(doc), indent=2, allow_nan=False) + "\n"


def _lines(doc: dict) -> str:
    """``name value`` lines, as Pilot's ``bench analyze`` prints (lists and notes spelled out)."""
    out = []
    for name, value in doc.items():
        if name == "notes":
            out += [f"note: {n}" for n in value]
        elif isinstance(value, float):
            out.append(f"{name} {value:.10g}")
        elif isinstance(value, list):
            items = ", ".join(f"{v:.10g}" if isinstance(v, float) else str(v) for v in value)
            shown = {"stable_segment": f"[{items})", "diff_ci": f"[{items}]"}.get(name, items or "none")
            out.append(f"{name} {shown}")
        else:
            out.append(f"{name} {'-' if value is None else value}")
    return "\n".join(out) + "\n"


def _render_single(doc: dict, fmt: str) -> str:
    if fmt == "html":
        raise AnalysisError("--format html is for results files; use text or json")
    return json_document(doc) if fmt == "json" else _lines(doc)


def run_pilot(args: argparse.Namespace) -> int:
    from analysis.output import emit

    sources = [bool(args.results), args.readings is not None, args.wps is not None]
    if sum(sources) != 1:
        raise AnalysisError("give RESULTS files, --readings FILE or --wps FILE.csv (exactly one of them)")
    if args.readings is not None:
        refuse_options(args, WPS_ONLY + FILES_ONLY, "--readings")
        text = _render_single(_readings_doc(args), args.format)
    elif args.wps is not None:
        refuse_options(args, READINGS_ONLY + FILES_ONLY + TARGET_OPTIONS, "--wps")
        text = _render_single(_wps_doc(args), args.format)
    else:
        refuse_options(args, READINGS_ONLY + WPS_ONLY, "RESULTS files")
        text = _results_report(args)
    emit(text, args.output)
    return 0


def _readings_doc(args: argparse.Namespace) -> dict:
    from analysis.inputs import read_readings
    from analysis.pilot import edm
    from analysis.pilot.readings import ReadingsSettings, analyse_readings

    target = resolved_target(args)
    settings = ReadingsSettings(
        mean_method=args.mean or "arithmetic", ac_limit=target.ac_limit, subsession_size=args.subsession_size,
        confidence=args.confidence, ci_percent=target.ci_percent, ci_width=target.ci_width,
        min_samples=target.min_samples,
        warmup_removal=not args.no_warmup_removal,
        edm_percent=edm.PERCENT if args.edm_percent is None else args.edm_percent,
        edm_min_size=edm.MIN_SIZE if args.edm_min_size is None else args.edm_min_size)
    readings = read_readings(args.readings)
    try:
        result = analyse_readings(readings, settings)
    except AnalysisError as exc:
        raise AnalysisError(f"{args.readings}: {exc}") from None
    doc = result.as_dict()
    doc.update(mean_method=settings.mean_method, ac_limit=settings.ac_limit, confidence=settings.confidence,
               min_samples=settings.min_samples, warmup_removal="edm" if settings.warmup_removal else "none")
    return doc


def _wps_doc(args: argparse.Namespace) -> dict:
    from analysis.inputs import read_wps_rounds
    from analysis.pilot.wps import wps_fit

    work, durations = read_wps_rounds(args.wps)
    ac = args.ac_limit if args.ac_limit is not None else preset(args.preset).ac_limit
    variant = args.variant or "textbook"
    try:
        fit = wps_fit(work, durations, ac_limit=ac, threshold_ns=args.duration_threshold_ns or 0,
                      confidence=args.confidence, variant=variant)
    except AnalysisError as exc:
        raise AnalysisError(f"{args.wps}: {exc}") from None
    return {"alpha_s": fit.alpha_s, "v_per_s": fit.v_per_s,
            "v_ci_width": fit.v_ci_width,  # inf (no upper bound) prints as null
            "ssr": fit.ssr, "ssr_percent": fit.ssr_percent, "subsession_size": fit.subsession_size, "q": fit.q,
            "rounds_used": fit.rounds_used, "variant": variant, "ac_limit": ac, "confidence": args.confidence}


def _jobs(args: argparse.Namespace) -> int:
    from analysis.pipeline import default_jobs

    return args.jobs or default_jobs()


def _report_target(args: argparse.Namespace, loaded=()):
    """The options' target; with none of them given, the experiment's own [stop] target when the files
    carry one (presets.experiment_target), so the report judges keys as `coldrun status` did."""
    from analysis.pilot.presets import experiment_target
    from analysis.pilot.results import report_target

    chosen = any(getattr(args, name, None) is not None for name in ("preset", "ac_limit", *TARGET_OPTIONS))
    stop = None if chosen or args.confidence != DEFAULT_REPORT_CONFIDENCE else experiment_target(loaded)
    if stop is not None:
        return report_target(**stop)
    return report_target(confidence=args.confidence, **resolved_target(args)._asdict())


def analyse_files(paths, args: argparse.Namespace):
    """(target, [(path, machine, key reports)]) of the results files, read through analysis.inputs."""
    from analysis.inputs import load_input
    from analysis.prepare import AnalysisOptions, raw_results

    options = AnalysisOptions(vm=args.vm, language=args.language, uname=args.uname)
    items = [load_input(path) for path in paths]
    loaded = [(item.path, raw_results(item, options)) for item in items]
    target = _report_target(args, loaded)
    return target, analyse_loaded(loaded, target, _jobs(args))


def analyse_loaded(loaded, target, jobs: int) -> list[tuple[str, str, list]]:
    """(path, machine, key reports) of each (path, Krun-shaped results); warnings name the file."""
    from analysis.errors import warning_for
    from analysis.inputs import machine_name
    from analysis.pilot.results import analyse_results
    from analysis.prepare import named

    out = []
    for path, results in loaded:
        try:
            keys = analyse_results(results, target, jobs=jobs, warn=warning_for(path))
        except AnalysisError as exc:
            raise named(path, exc) from None
        out.append((str(path), machine_name(results), keys))
    return out


def _results_report(args: argparse.Namespace) -> str:
    from analysis.pilot.results import reports_dict
    from analysis.reports import pilot_tables

    target, analysed = analyse_files(args.results, args)
    report = reports_dict(analysed, target)
    if args.format == "json":
        return json_document(report)
    return pilot_tables.render_html(report) if args.format == "html" else pilot_tables.render_text(report)


def _welch_numbers(values: list[str]) -> tuple:
    names = ("M1", "V1", "N1", "M2", "V2", "N2")
    parsed = []
    for name, text in zip(names, values):
        try:
            parsed.append(int(text) if name.startswith("N") else float(text))
        except ValueError:
            kind = "a whole number (sample size)" if name.startswith("N") else "a number"
            raise AnalysisError(f"--welch {name}: expected {kind}, got {text!r}") from None
    return tuple(parsed)


def welch_compare(args: argparse.Namespace) -> tuple[dict, str]:
    """``compare --welch M1 V1 N1 M2 V2 N2`` or ``compare --method welch A B``: (the JSON document, its
    text or HTML in ``args.format``)."""
    if args.confidence is None:
        args.confidence = DEFAULT_REPORT_CONFIDENCE
    if args.welch is not None:
        if args.results:
            raise AnalysisError("give two results files or --welch M1 V1 N1 M2 V2 N2, not both")
        refuse_options(args, FILES_ONLY + TARGET_OPTIONS + ("preset", "ac_limit"), "--welch")
        doc = _welch_doc(args)
        return doc, _render_single(doc, args.format)
    if len(args.results) != 2:
        raise AnalysisError(f"compare takes two results files A B (got {len(args.results)}), "
                            "or --welch M1 V1 N1 M2 V2 N2")
    return _compare_files(args)


def _welch_doc(args: argparse.Namespace) -> dict:
    from analysis.pilot.compare import welch_summary

    m1, v1, n1, m2, v2, n2 = _welch_numbers(args.welch)
    try:
        result = welch_summary(m1, v1, n1, m2, v2, n2, confidence=args.confidence, target_p=args.target_p)
    except AnalysisError as exc:
        raise AnalysisError(f"--welch: {exc}") from None
    doc = result.as_dict()
    doc.update(confidence=args.confidence, target_p=args.target_p)
    return doc


def _compare_files(args: argparse.Namespace) -> tuple[dict, str]:
    from analysis.pilot.compare import DEFAULT_TARGET_P, compare_reports
    from analysis.reports import pilot_tables

    target, ((path_a, _, a), (path_b, _, b)) = analyse_files(args.results, args)
    comparison = compare_reports(a, b, confidence=args.confidence,
                                 target_p=args.target_p if args.target_p is not None else DEFAULT_TARGET_P)
    doc = {"file_a": path_a, "file_b": path_b, **comparison.as_dict()}
    if args.format == "json":
        return doc, json_document(doc)
    if args.format == "html":
        return doc, pilot_tables.render_compare_html(doc)
    return doc, pilot_tables.render_compare_text(doc)
