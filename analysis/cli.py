"""``coldrun-analyze``: warmup_stats' analysis without R -- the one command-line module.

    coldrun-analyze annotate RESULTS -o ANNOTATED.json.bz2
    coldrun-analyze summary RESULTS... -o summary.json
    coldrun-analyze table RESULTS... [--format text|html|latex] [--layout columns|sections]
        [--plan-target 1%|none] [-o FILE]
    coldrun-analyze plot RESULTS -o DIR [--key K] [--execution N]
    coldrun-analyze diff BEFORE AFTER [--format ...] [--json FILE]
    coldrun-analyze startup RESULTS... [--format text|latex|json] [--all-keys] [-o FILE]
    coldrun-analyze pilot RESULTS... | --readings FILE | --wps FILE.csv   (analysis/pilot/command.py)
    coldrun-analyze compare A B [--json FILE] | --method welch A B | --welch M1 V1 N1 M2 V2 N2
        (analysis/compare_command.py)
    coldrun-analyze bca FILE | screen (RESULTS | --table FILE.csv) | boots RESULTS   (analysis/screen/command.py)
    coldrun-analyze plan RESULTS --target 1%|50us [--execution-overhead 90s] [--json]   (analysis/plan_command.py)

Options keep warmup_stats' defaults: --window int(0.1 x iterations),
--steady int(0.25 x iterations), but for --delta: 2% of the fastest segment's
mean (classify.DEFAULT_DELTA; the paper's, bit for bit: --delta 0.001),
--resamples 100000 (--quality low: 10000), --confidence 0.99. The bootstrap
is seeded, by default with bootstrap.DEFAULT_SEED (--seed chooses another), so
every output of one analysis shows the same numbers; the seed is recorded in
the summary JSON and printed under every table. Inputs are read by ``analysis.inputs`` (raw
results, annotated results or a summary JSON, recognised by content; see
there) and brought to the needed stage by ``analysis.prepare``. Bad input
ends in one line naming the file and the problem, exit status 2; problems
that leave the rest analysable are warnings on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

# Only what the parser needs is imported here: --help must not load numpy,
# scipy or matplotlib; each command imports its machinery when it runs.
from analysis import bootstrap, classify
from analysis.compare_command import add_compare_command
from analysis.duet.command import add_duet_command
from analysis.errors import AnalysisError, one_line
from analysis.output import emit as _emit
from analysis.output import write_output as _write_output
from analysis.pilot.command import add_pilot_commands
from analysis.plan_command import add_plan_command
from analysis.screen.command import add_screen_commands, is_screening, screening_section

if TYPE_CHECKING:
    from analysis.prepare import AnalysisOptions
    from analysis.reports.html import EmbeddedPlot

PROG = "coldrun-analyze"
TABLE_FORMATS = ("text", "html", "latex")
PLOT_SUFFIXES = ("png", "pdf", "svg")
# Resolution of the plots embedded in the HTML report (keeps the page small).
EMBEDDED_PLOT_DPI = 72
_DEFAULT_SHOWN = classify.DEFAULT_DELTA.replace("%", "%%")   # argparse help is %-formatted
DELTA_HELP = (f'equivalence delta: "N%%" of the fastest segment\'s mean (default "{_DEFAULT_SHOWN}") or seconds '
              f'("{classify.PAPER_DELTA}": the paper\'s, for warmup_stats\' classes bit for bit)')


def _plan_target(text: str):
    """``table --plan-target``: analysis.plan.parse_target's target, or None for "none"."""
    if text.strip().lower() == "none":
        return None
    from analysis.plan import parse_target

    try:
        return parse_target(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--target: ")) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def _delta(text: str) -> str:
    try:
        classify.parse_delta(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _confidence(text: str) -> str:
    try:
        level = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.99, got {text!r}") from None
    if not (0 < level < 1):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text!r}")
    return text


def _add_input_options(p: argparse.ArgumentParser) -> None:
    csv = p.add_argument_group("warmup_stats CSV input")
    csv.add_argument("--vm", help="VM / implementation name for CSV input (key bench:VM:default-LANGUAGE)")
    csv.add_argument("--language", help="language for CSV input")
    csv.add_argument("--uname", help="uname -a of the machine, for CSV input (machine = its second word)")


def _add_classifier_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=_positive_int, help="outlier window (default: int(0.1 x iterations))")
    p.add_argument("--steady", type=_positive_int, help="steady state expected before the last N iterations "
                   "(default: int(0.25 x iterations))")
    p.add_argument("--delta", type=_delta, default=classify.DEFAULT_DELTA,
                   help=DELTA_HELP)
    p.add_argument("--jobs", "-j", type=_positive_int, default=None,
                   help="worker processes (default: one per CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _analysis_arguments(parser: argparse.ArgumentParser, *, summary: bool = True) -> None:
    """Options that only matter when RESULTS still need analysing."""
    group = parser.add_argument_group("analysis of raw results")
    if summary:
        group.add_argument("--quality", choices=("high", "low"), default="high",
                           help="steady perf bootstrap size: 100000 (high) or 10000 (low) resamples")
        group.add_argument("--seed", type=int, default=bootstrap.DEFAULT_SEED,
                           help=f"bootstrap seed (default {bootstrap.DEFAULT_SEED}; printed under the table)")
    group.add_argument("--jobs", type=int, default=1, help="worker processes (also for plotting)")
    group.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (drawn on a terminal)")
    group.add_argument("--window", type=int, help="outlier window (default: int(0.1 x iterations))")
    group.add_argument("--steady", type=int, help="steady-state iterations (default: int(0.25 x iterations))")
    group.add_argument("--delta", help=DELTA_HELP)
    csv = parser.add_argument_group("warmup_stats CSV input")
    csv.add_argument("--vm", help="VM name for CSV input")
    csv.add_argument("--language", help="language for CSV input")
    csv.add_argument("--uname", help="uname -a of the machine, for CSV input")


def add_report_commands(subparsers) -> None:
    """Register table, plot and diff on an argparse subparsers object."""
    table = subparsers.add_parser("table", help="summary table (text, HTML or LaTeX)",
                                  description="Summary table from results, annotated results or summary JSON.")
    table.add_argument("results", nargs="+", metavar="RESULTS",
                       help="results file(s), annotated results or summary JSON (.json or .json.bz2)")
    table.add_argument("--format", choices=TABLE_FORMATS, default="text")
    table.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    table.add_argument("--layout", choices=("auto", "columns", "sections"), default="auto",
                       help="text: a column group per machine and their environments compared (columns), "
                            "or a table per machine (sections); auto: columns for several machines")
    table.add_argument("--no-plots", action="store_true",
                       help="HTML: do not embed run-sequence plots")
    table.add_argument("--plots-from", action="append", metavar="RESULTS",
                       help="HTML: embed the plots of these results (e.g. next to a summary JSON)")
    table.add_argument("--no-pilot", action="store_true",
                       help="HTML: leave out the Pilot section (stable segments and CIs per key)")
    table.add_argument("--without-preamble", action="store_true",
                       help="LaTeX: only the tables, for \\input into a document")
    table.add_argument("--plan-target", type=_plan_target, default="1%", metavar="TARGET|none",
                       help="text and HTML: a Plan line per key under the table, the executions and iterations "
                            "this CI half-width of the steady mean needs at the table's confidence (`plan "
                            "--target`; default 1%%: the mean ±1%%); none: no Plan section")
    _analysis_arguments(table)
    table.set_defaults(func=run_table)

    startup = subparsers.add_parser(
        "startup", help="start-up times (mode = \"startup\"; the paper's startup table)",
        description="Start-up times of a results file: per key, the mean of (inner runner's clock reading - "
                    "outer runner's) over its process executions, with a bootstrap CI, as warmup_experiment's "
                    "table_startup_results computed it.")
    startup.add_argument("results", nargs="+", metavar="RESULTS", help="Krun-shaped results (.json or .json.bz2)")
    startup.add_argument("--format", choices=("text", "latex", "json"), default="text")
    startup.add_argument("--all-keys", action="store_true",
                         help="every key is a start-up key (a results file of Krun's own startup experiment, "
                              "which does not say so; coldrun's export lists its start-up keys)")
    startup.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    startup.add_argument("--seed", type=int, default=bootstrap.DEFAULT_SEED, help="bootstrap seed")
    startup.add_argument("--confidence", type=_confidence, default=bootstrap.CONFIDENCE_LEVEL)
    startup.set_defaults(func=run_startup)

    plot = subparsers.add_parser("plot", help="run-sequence plots, one file per process execution")
    plot.add_argument("results", metavar="RESULTS", help="results file or annotated results")
    plot.add_argument("-o", "--output", metavar="DIR", required=True, help="directory for the plots")
    plot.add_argument("--key", metavar="BENCH:VM:VARIANT", help="only this benchmark")
    plot.add_argument("--execution", type=int, metavar="N",
                      help="only process execution N: Krun's 0-based index, as in file names and JSON "
                           "(reports and plot titles number from 1, as the paper did: #1 is --execution 0)")
    plot.add_argument("--machine", help="machine name for titles (default: from the audit's uname)")
    plot.add_argument("--image-format", choices=PLOT_SUFFIXES, default="png")
    _analysis_arguments(plot, summary=False)
    plot.set_defaults(func=run_plot)

    diff = subparsers.add_parser("diff", help="compare two result sets (warmup_stats' diff)")
    diff.add_argument("before", metavar="BEFORE")
    diff.add_argument("after", metavar="AFTER")
    diff.add_argument("--format", choices=TABLE_FORMATS, default="text")
    diff.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    diff.add_argument("--json", metavar="FILE", help="also write warmup_stats' diff_summary JSON")
    diff.add_argument("--vms", nargs=2, metavar=("VM_BEFORE", "VM_AFTER"),
                      help="compare VM_BEFORE in BEFORE with VM_AFTER in AFTER")
    _analysis_arguments(diff)
    diff.set_defaults(func=run_diff)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="warmup_stats-exact analysis of benchmark results.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ann = sub.add_parser("annotate", help="add outliers, changepoints and classifications to results",
                         description="Write the results with warmup_stats' annotation keys added (Krun format).")
    ann.add_argument("results", metavar="RESULTS", help="Krun results (.json/.json.bz2), coldrun native export or CSV")
    ann.add_argument("-o", "--output", required=True, metavar="ANNOTATED",
                     help="output file (bzip2-compressed when the name ends .bz2)")
    _add_input_options(ann)
    _add_classifier_options(ann)
    ann.set_defaults(func=run_annotate)

    summ = sub.add_parser("summary", help="warmup_stats' summary JSON (--output-json)",
                          description="Summarise results (one file per machine) as warmup_stats' JSON.")
    summ.add_argument("results", nargs="+", metavar="RESULTS")
    summ.add_argument("-o", "--output", required=True, metavar="SUMMARY_JSON")
    _add_input_options(summ)
    _add_classifier_options(summ)
    summ.add_argument("--resamples", type=_positive_int, default=None,
                      help=f"bootstrap resamples (default {bootstrap.RESAMPLES_HIGH})")
    summ.add_argument("--quality", choices=("high", "low"), default="high",
                      help=f"high: {bootstrap.RESAMPLES_HIGH} resamples, low: {bootstrap.RESAMPLES_LOW}")
    summ.add_argument("--confidence", type=_confidence, default=bootstrap.CONFIDENCE_LEVEL,
                      help="bootstrap confidence level (default 0.99, as warmup_stats)")
    summ.add_argument("--seed", type=int, default=bootstrap.DEFAULT_SEED,
                      help=f"bootstrap seed (default {bootstrap.DEFAULT_SEED}; recorded in the JSON)")
    summ.set_defaults(func=run_summary)

    add_report_commands(sub)
    add_pilot_commands(sub)
    add_compare_command(sub, count=_positive_int)
    add_duet_command(sub, level=_confidence, count=_positive_int)
    add_screen_commands(sub, level=_confidence, count=_positive_int)
    add_plan_command(sub, level=_confidence, analysis_arguments=_analysis_arguments, options=_options)
    return parser


def _jobs(args: argparse.Namespace) -> int:
    from analysis.pipeline import default_jobs

    return args.jobs if args.jobs else default_jobs()


def _progress(args: argparse.Namespace) -> bool:
    """A progress bar only on a terminal, unless --no-progress."""
    return not getattr(args, "no_progress", False) and sys.stderr.isatty()


def run_annotate(args: argparse.Namespace) -> int:
    from analysis.inputs import ANNOTATION_KEYS
    from analysis.json_text import object_chunks
    from analysis.output import StreamedWrite
    from analysis.pipeline import annotate, load_results

    by_machine = load_results([args.results], vm=args.vm, language=args.language, uname=args.uname)
    (results,) = by_machine.values()
    # The input part of the output is written (and bzip2-compressed) while the workers annotate.
    head: dict = {}
    writer: list[StreamedWrite] = []

    def started(known: dict) -> None:
        head.update((k, v) for k, v in known.items() if k not in ANNOTATION_KEYS)
        writer.append(StreamedWrite(Path(args.output), object_chunks(head.items(), close=False)))

    try:
        annotated = annotate(results, window=args.window, steady=args.steady, delta=args.delta,
                             jobs=_jobs(args), progress=_progress(args), started=started)
    except BaseException as exc:
        for w in writer:
            w.abandon(exc)
        raise
    if any(annotated[k] is not v for k, v in head.items()):
        raise AssertionError("annotate replaced a part of the output already written")
    writer[0].finish(object_chunks([(k, v) for k, v in annotated.items() if k not in head], opened=True))
    wct = annotated["wallclock_times"]
    _say_wrote(args.output, sum(map(len, wct.values())), len(wct))
    return 0


def _say_wrote(path: str, executions: int, keys: int, extra: str = "") -> None:
    """One line on stderr: where the output went and how much it holds."""
    print(f"Wrote {path}: {executions} process executions, {keys} benchmark keys{extra}", file=sys.stderr)


def run_summary(args: argparse.Namespace) -> int:
    from analysis.key_results import SummarySettings
    from analysis.pipeline import analyse, classifier_for, load_results
    from analysis.summary import summarise_annotated
    from analysis.execution_states import FLAGS_KEY
    from analysis.summary_json import add_flagged, dumps, summary_document

    by_machine = load_results(args.results, vm=args.vm, language=args.language, uname=args.uname)
    jobs = _jobs(args)
    resamples = args.resamples if args.resamples else (
        bootstrap.RESAMPLES_LOW if args.quality == "low" else bootstrap.RESAMPLES_HIGH)
    if resamples < 1:
        raise AnalysisError("--resamples must be at least 1")
    settings = SummarySettings(resamples, args.seed, args.confidence)
    analysed = {}
    for machine, results in by_machine.items():
        classifier = classifier_for(results, args.window, args.steady, args.delta)
        # Each key is bootstrapped in its worker as soon as it is classified.
        analysed[machine] = analyse(results, classifier, summarise=settings, machine=machine, jobs=jobs,
                                    progress=_progress(args))
    summary = summary_document(summarise_annotated(analysed, settings, jobs=jobs, progress=_progress(args)))
    for machine, results in by_machine.items():
        add_flagged(summary, machine, results.get(FLAGS_KEY))
    _write_output(Path(args.output), dumps(summary))
    benches = [b for vms in summary["machines"].values() for benchmarks in vms.values() for b in benchmarks.values()]
    _say_wrote(args.output, sum(len(b["process_executons"]) for b in benches), len(benches),
               f", {len(summary['machines'])} machine(s), bootstrap seed {args.seed}")
    return 0


def all_plots(annotated: dict, machine: str, jobs: int = 1) -> list[EmbeddedPlot]:
    """PNG of every non-empty process execution, for the HTML report."""
    from analysis.plots import PlotRequest, parse_key, plot_many
    from analysis.reports.html import EmbeddedPlot

    requests = [PlotRequest(key, pexec, machine, dpi=EMBEDDED_PLOT_DPI)
                for key in sorted(annotated.get("wallclock_times", {}))
                for pexec, times in enumerate(annotated["wallclock_times"][key]) if times]
    images = plot_many(annotated, requests, jobs)
    out = []
    for r, png in zip(requests, images):
        assert isinstance(png, bytes)     # a request without an output file gives the PNG itself
        bench, vm, _variant = parse_key(r.key)
        out.append(EmbeddedPlot(machine, bench, vm, r.pexec, png))
    return out


def _options(args: argparse.Namespace) -> AnalysisOptions:
    from analysis.prepare import AnalysisOptions

    resamples = {"high": None, "low": bootstrap.RESAMPLES_LOW}[getattr(args, "quality", "high")]
    extra = {name: getattr(args, name, None) for name in ("window", "steady", "delta", "vm", "language", "uname")}
    return AnalysisOptions(resamples=resamples, seed=getattr(args, "seed", bootstrap.DEFAULT_SEED),
                           jobs=max(1, getattr(args, "jobs", 1) or 1), progress=_progress(args), **extra)


def run_table(args: argparse.Namespace) -> int:
    from analysis.inputs import load_input, machine_name
    from analysis.prepare import merge_summaries, named, prepare, summary_of, to_annotated
    from analysis.reports import plan_lines, render_html, render_latex, render_text
    from analysis.machines import distinct_machines
    from analysis.reports.machine_columns import render_columns
    from analysis.reports.provenance import (NOT_RECORDED, analysis_parameters, equivalence_note, failure_reasons,
                                             flagged_lines, provenance)
    from analysis.summary_json import FAILED_KEY, classifier_deltas, flagged_rows

    from analysis.reports import startup_tables
    from analysis.startup import startup_keys, without_startup_keys

    options = _options(args)
    items = [load_input(p) for p in args.results]
    # Start-up keys (mode = "startup") are not warmup data: their own section, out of the warmup analysis.
    confidence = options.confidence or bootstrap.CONFIDENCE_LEVEL
    startup_rows = _startup_rows(items, seed=options.seed, confidence=confidence)
    items = [dataclasses.replace(item, document=without_startup_keys(item.document))
             if item.kind == "raw" and isinstance(item.document, dict) and startup_keys(item.document) else item
             for item in items]
    if startup_rows:
        items = [item for item in items if not (isinstance(item.document, dict) and item.kind == "raw"
                                                and not item.document.get("wallclock_times"))]
        if not items:       # start-up results only
            if args.format != "text":
                raise AnalysisError("these are start-up results only: `coldrun-analyze startup --format "
                                    "latex|json` renders them in other formats")
            _emit(startup_tables.render_text(startup_rows, confidence), args.output)
            return 0
    # Read before the analysis: the loaders clean the documents they check.
    provenances = [provenance(item.path.name, item.document) for item in items]
    # A screening export's HTML section, from the document already read (not the file again).
    screening = [screening_section(str(item.path), item.document) for item in items
                 if args.format == "html" and is_screening(item.document)]
    item_reasons = [failure_reasons(item.document) for item in items]
    analysed_here = any(item.kind != "summary" for item in items)
    prepared = [prepare(item, options, with_summary=True) for item in items]
    summaries, renames = distinct_machines([(p.path, summary_of(p)) for p in prepared])
    summary = merge_summaries(summaries)
    reasons = {(names.get(key[0], key[0]),) + key[1:]: why
               for one, names in zip(item_reasons, renames) for key, why in one.items()}
    notes = flagged_lines(flagged_rows(summary))   # flagged executions, from any input that records them
    deltas = [d for p in prepared for d in classifier_deltas(summary_of(p))]   # each input's equivalence rule(s)
    plan = _table_plan(args, items, prepared, renames, float(confidence))   # under the text and HTML tables
    if args.format == "text":
        machines = set(summary.get("machines", {})) | set(summary.get(FAILED_KEY) or {})
        if args.layout == "columns" or (args.layout == "auto" and len(machines) > 1):
            environments = [(names.get(p.machine, p.machine), p) for p, names in zip(provenances, renames)
                            if p.machine != NOT_RECORDED]
            text = render_columns(summary, environments)
        else:
            text = render_text(summary)
        text += "\n" + "\n".join(notes + [equivalence_note(deltas)]) + "\n"
        text += "\n" + plan_lines.render_text(*plan) if plan else ""
        if startup_rows:
            warmup = "" if text.startswith("No benchmarks in this summary") and not machines else text + "\n"
            text = warmup + startup_tables.render_text(startup_rows, confidence)
    elif args.format == "latex":
        text = render_latex(summary, with_preamble=not args.without_preamble, notes=notes,
                            rule=equivalence_note(deltas))
    else:
        extra = [load_input(p) for p in args.plots_from or []]
        wanted = not (args.no_plots and args.no_pilot)
        annotated = [(p.path, p.annotated) for p in prepared if p.annotated is not None] if wanted else []
        annotated += [(item.path, to_annotated(item, options)) for item in extra] if wanted else []
        plots: list[EmbeddedPlot] = []
        renamed_in = {item.path: names for item, names in zip(items, renames)}
        if not args.no_plots:
            for path, results in annotated:
                try:
                    machine = machine_name(results)
                    machine = renamed_in.get(path, {}).get(machine, machine)
                    plots += all_plots(results, machine, options.jobs)
                except AnalysisError as exc:  # PlotError: which execution, not which file
                    raise named(path, exc) from None
        sections = [] if args.no_pilot or not annotated else [pilot_section(annotated, options.jobs)]
        sections = ([plan_lines.html_section(*plan)] if plan else []) + sections + screening
        parameters = analysis_parameters(options.window, options.steady, options.delta, analysed_here, deltas)
        text = render_html(summary, plots, sections=sections, provenances=provenances,
                           parameters=parameters, failure_reasons=reasons, notes=notes)
    _emit(text, args.output)
    return 0


def _table_plan(args: argparse.Namespace, items: list, prepared: list, renames: list[dict[str, str]],
                confidence: float) -> tuple | None:
    """The Plan section's (rows, target, level, hows) for the text and HTML tables, from the inputs the table
    has analysed (analysis.plan_command.table_plan; no analysis is run again); None: --plan-target none,
    LaTeX, or no input with results."""
    from analysis.inputs import machine_name
    from analysis.plan_command import table_plan

    analysed = [(item, p, names) for item, p, names in zip(items, prepared, renames) if p.annotated is not None]
    if args.plan_target is None or args.format == "latex" or not analysed:
        return None
    inputs = [(item.path.name, names.get(machine_name(p.annotated), machine_name(p.annotated)), p.annotated,
               item.document, p.typed) for item, p, names in analysed]
    rows, hows = table_plan(inputs, args.plan_target, confidence)
    return rows, args.plan_target.label(), f"{confidence * 100:g}%", hows


def _startup_rows(items: list, *, all_keys: bool = False, seed: int | None = bootstrap.DEFAULT_SEED,
                  confidence: str = bootstrap.CONFIDENCE_LEVEL) -> list:
    from analysis.inputs import machine_name
    from analysis.prepare import named
    from analysis.startup import summarise

    rows = []
    for item in items:
        if item.kind != "raw" or not isinstance(item.document, dict):
            continue
        try:
            rows += summarise(item.document, machine_name(item.document), all_keys=all_keys, seed=seed,
                              confidence=confidence)
        except AnalysisError as exc:
            raise named(item.path, exc) from None
    return rows


def run_startup(args: argparse.Namespace) -> int:
    from analysis.inputs import load_input
    from analysis.reports import startup_tables

    items = [load_input(p) for p in args.results]
    if any(item.kind != "raw" for item in items):
        bad = next(item for item in items if item.kind != "raw")
        raise AnalysisError(f"{bad.path}: a {bad.kind} file has no start-up readings; give the results file")
    rows = _startup_rows(items, all_keys=args.all_keys, seed=args.seed, confidence=args.confidence)
    if args.format == "latex":
        text = startup_tables.render_latex(rows)
    elif args.format == "json":
        text = startup_tables.render_json(rows)
    else:
        text = startup_tables.render_text(rows, args.confidence)
    _emit(text, args.output)
    return 0


def pilot_section(annotated: list[tuple[Path, dict]], jobs: int) -> str:
    """The HTML report's Pilot section: Pilot's analysis of each results file against the experiment's
    [stop] target, or Pilot's library defaults without one."""
    from analysis.pilot.presets import LIBRARY_DEFAULTS, experiment_target
    from analysis.pilot.results import report_target, reports_dict
    from analysis.pilot.command import analyse_loaded
    from analysis.reports import pilot_tables

    stop = experiment_target(annotated)   # the experiment's [stop] target, as `coldrun status` judged it
    target = report_target(**stop) if stop else report_target(
        ac_limit=LIBRARY_DEFAULTS.ac_limit, min_samples=LIBRARY_DEFAULTS.min_samples,
        ci_percent=LIBRARY_DEFAULTS.ci_percent, ci_width=None, confidence=0.95)
    return pilot_tables.section(reports_dict(analyse_loaded(annotated, target, jobs), target))


def run_plot(args: argparse.Namespace) -> int:
    from analysis.inputs import load_input, machine_name
    from analysis.plots import PlotRequest, plot_filename, plot_many
    from analysis.prepare import named, to_annotated

    item = load_input(args.results)
    annotated = to_annotated(item, _options(args))
    machine = args.machine or machine_name(annotated)
    keys = sorted(annotated.get("wallclock_times", {}))
    if args.key is not None:
        if args.key not in keys:
            raise AnalysisError(f"{item.path}: no benchmark {args.key!r} (known: {', '.join(keys) or 'none'})")
        keys = [args.key]
    out_dir = Path(args.output)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AnalysisError(f"{out_dir}: cannot create directory ({exc.strerror or exc})") from None
    requests = []
    for key in keys:
        executions = annotated["wallclock_times"][key]
        if args.execution is not None:
            if not 0 <= args.execution < len(executions):
                raise AnalysisError(f"{item.path}: {key} has {len(executions)} process executions "
                                    f"(--execution 0 to {len(executions) - 1}, titled #1 to #{len(executions)}); "
                                    f"--execution {args.execution} does not exist")
            wanted = [args.execution]
        else:
            wanted = [i for i, times in enumerate(executions) if times]
        requests += [PlotRequest(key, pexec, machine, out_dir / plot_filename(key, pexec, "." + args.image_format))
                     for pexec in wanted]
    try:
        plot_many(annotated, requests, max(1, args.jobs))
    except AnalysisError as exc:  # PlotError: which execution, not which file
        raise named(item.path, exc) from None
    print(f"Wrote {len(requests)} plot(s) to {out_dir}", file=sys.stderr)
    return 0


def run_diff(args: argparse.Namespace) -> int:
    from analysis.diff import diff_summaries
    from analysis.inputs import load_input
    from analysis.prepare import prepare, summary_of
    from analysis.reports.diff_tables import render_diff

    options = _options(args)
    before_item, after_item = load_input(args.before), load_input(args.after)
    sides = [prepare(item, options, with_summary=True) for item in (before_item, after_item)]
    before, after = (summary_of(side) for side in sides)
    classifier = None
    for side in sides:  # analysed here or read annotated: the classifier it used
        if side.annotated is not None:
            classifier = side.annotated.get("classifier")
    try:
        result = diff_summaries(before, after, vms=tuple(args.vms) if args.vms else None,
                                classifier=classifier)
    except AnalysisError as exc:  # DiffError: which pair, not which file
        raise AnalysisError(f"{before_item.path} vs {after_item.path}: {exc}") from None
    if args.json:
        _write_output(Path(args.json), json.dumps(result, indent=4, sort_keys=True))
    _emit(render_diff(result, args.format), args.output)
    return 0


# The options that name a file or directory a command writes (a bool --json prints instead).
OUTPUT_OPTIONS = ("output", "json", "html")


def _refuse_state_dir_outputs(args: argparse.Namespace) -> None:
    """Nothing but the supervisor writes into a state dir (contracts/state_dir.py): refused before any work."""
    from contracts.state_dir import output_problem

    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value != "-":
            problem = output_problem(value, "write it outside the state dir")
            if problem:
                raise AnalysisError(problem)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _refuse_state_dir_outputs(args)
        return int(args.func(args) or 0)
    except AnalysisError as exc:
        print(f"{PROG}: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
