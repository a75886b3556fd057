"""``coldrun-analyze bca``, ``screen`` and ``boots``: screening experiments (NIST TN 1855).

    coldrun-analyze bca FILE [--json] [--confidence C] [--seed S] [replication options]
    coldrun-analyze screen --table FILE.csv [--json | --format text|html] [-o FILE] [options]
    coldrun-analyze screen RESULTS [--samples executions|iterations] [--no-steady-state] [options]
    coldrun-analyze boots RESULTS [--json] [--confidence C] [--no-steady-state]

``bca --json`` (FILE: one number per line) prints ``mean``, ``ci`` [low, high],
``acceleration``, ``bias_correction`` (z0), ``resamples`` (in all), and
``n``, ``confidence``, ``seed``, ``batches``, ``resolution``,
``monte_carlo_error`` (null for one batch).

Replication (``analysis.screen.replication``): batches of ``--resamples``
(default 25,000) until the Monte-Carlo error of every interval is below
``--resolution`` (default 0.001 x the mean magnitude of the response), at
most ``--max-resamples`` (default 1,500,000); ``--fixed`` draws one batch.
Seeded (``--seed``, default 1).

``screen --json`` prints, for a table, the analysis object (``analysis.screen.report``):
``factors`` {factor: [level names]}, ``samples``, ``confidence``,
``intervals`` {means, effects: {method ("t" or "BCa", ``--interval``), reason}},
``seed``, ``resamples``, ``batches``, ``resolution``, ``monte_carlo_error``
(0/null for t); ``treatments`` [{levels {factor: level}, n, mean, ci, method}]
in level order (first column slowest); ``main_effects`` {factor: {level:
effect}} (levels other than 0) and ``interactions`` {"A:B": effect} (2-level
pairs, column order), each effect {effect, ci (null: untestable), p (t only),
df, method, stratum ("between batches": a whole-plot effect; "within
batches"; "between samples" without batches), why (no CI), name (the alias
set, e.g. "A:B = C:D"), aliases (the other members, reported nowhere else)};
``aliases`` [alias set names]; ``whole_plot`` (null without batches or
reboot factors) {factors, batches, combinations, dof, why};
``block_plots`` {factor: {levels, boxes [{others, means, n, complete,
order}], complete_boxes, consistent (null: cannot tell, under 2 complete
boxes), ordering, chance, why}}; ``anova`` {balanced, reason, terms {term:
{df, sum_sq, F, p, stratum}}}; ``half_normal`` (2-level designs, else null,
one point per alias set) [{effect, abs_effect, quantile}]; ``material_significance``
{sample_size, pooled_sd, ci_width, median_effect, max_effect, effects {name:
{effect, ratio, material}}}; ``notes``; and with ``--exclude``, ``abridged``:
the same object without those treatments, plus ``excluded``.
For RESULTS (a native export of a screening experiment) it prints
``{"source", "design", "design_seed", "metric", "samples_are", "steady_state", "responses": {benchmark:
analysis object}, "boots": the boots report, "boot_check": TN 1855's boot-dependency check (null without
one) {confidence, groups {benchmark and levels: boots split + p, boot_dependent}}, "design_aliases": the
design's alias sets from its generators (coldrun check's), "notes"}``.

``boots --json``: see ``analysis.screen.boots``.

numpy, scipy and statsmodels are imported only when a command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from analysis.errors import AnalysisError

ArgumentType = Callable[[str], object]
DEFAULT_CONFIDENCE = "0.95"  # TN 1855's intervals
SAMPLE_UNITS = ("executions", "iterations")


def _resolution(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.001, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


def _replication_arguments(p: argparse.ArgumentParser, level: ArgumentType, count: ArgumentType) -> None:
    from analysis.screen import replication as r  # no numpy: constants only

    g = p.add_argument_group("bootstrap (BCa, adaptive as TN 1855 / JCGM 101 §7.9.4)")
    g.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE, help="CI level (default 0.95, as TN 1855)")
    g.add_argument("--seed", type=count, default=r.DEFAULT_SEED, help=f"bootstrap seed (default {r.DEFAULT_SEED})")
    g.add_argument("--resamples", type=count, default=r.DEFAULT_BATCH,
                   help=f"resamples per batch (default {r.DEFAULT_BATCH}, bootBCa's M)")
    g.add_argument("--resolution", type=_resolution,
                   help="stop when the Monte-Carlo error of every interval is below this, in the response's units "
                        "(default: 0.001 x the mean magnitude of the response)")
    g.add_argument("--max-resamples", type=count, default=r.DEFAULT_LIMIT,
                   help=f"stop here whatever the error (default {r.DEFAULT_LIMIT}, bootBCa's Mlimit)")
    g.add_argument("--fixed", action="store_true", help="one batch of --resamples, not adaptive")


def _steady_state_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-steady-state", action="store_true",
                   help="RESULTS: keep every iteration (default: each execution's warmup_stats steady state, "
                        "analysis.screen.executions)")


def add_screen_commands(subparsers, *, level: ArgumentType, count: ArgumentType) -> None:
    """Register ``bca``, ``screen`` and ``boots`` (``level``/``count``: the front door's argument types)."""
    bca = subparsers.add_parser("bca", help="BCa bootstrap CI of a mean (TN 1855's, adaptive)",
                                description="BCa bootstrap interval of the mean of the numbers in FILE "
                                            "(one per line), with adaptive replication.")
    bca.add_argument("file", metavar="FILE", help="one number per line")
    bca.add_argument("--json", action="store_true", help="print one JSON object (the machine interface)")
    _replication_arguments(bca, level, count)
    bca.set_defaults(func=run_bca)

    screen = subparsers.add_parser(
        "screen", help="screening experiment: effects, interactions, block plots (TN 1855)",
        description="Analyse a screening experiment (NIST TN 1855): treatment means, main effects and "
                    "2-factor interactions with BCa CIs, block plots, ANOVA, material significance.")
    screen.add_argument("results", nargs="?", metavar="RESULTS", help="native export of a screening experiment")
    screen.add_argument("--table", metavar="FILE.csv",
                        help="a per-sample table: one integer-level column per factor and 'response'")
    screen.add_argument("--json", action="store_true", help="print one JSON object (the machine interface)")
    screen.add_argument("--format", choices=("text", "html"), default="text", help="report format (default text)")
    screen.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    screen.add_argument("--exclude", action="append", default=[], metavar="FACTOR=LEVEL[,...]",
                        help="also analyse without the treatments matching all these levels (repeatable)")
    screen.add_argument("--material-n", type=count, default=40,
                        help="sample size for material significance (default 40, TN 1855's example)")
    screen.add_argument("--interval", choices=("auto", "t", "bca"), default="auto",
                        help="intervals of means and within-batch effects: t, BCa, or auto (default: t for effects; "
                             "for means t below 100 samples per treatment, where BCa under-covers, BCa from there)")
    screen.add_argument("--samples", choices=SAMPLE_UNITS, default="executions",
                        help="RESULTS: one sample per execution (its mean; default) or per iteration")
    _steady_state_flag(screen)
    screen.add_argument("--metric", choices=("wallclock", "core-cycles", "aperf", "mperf"), default="wallclock",
                        help="RESULTS: the response per iteration (counters summed over cores; default wallclock)")
    _replication_arguments(screen, level, count)
    screen.set_defaults(func=run_screen)

    boots = subparsers.add_parser(
        "boots", help="boot dependency: between-boot share of each key's variance",
        description="One-way random-effects split of each key's variance into between-execution (= between-boot) "
                    "and within-execution parts, with a CI for the between share.")
    boots.add_argument("results", metavar="RESULTS", help="native export or Krun results")
    boots.add_argument("--json", action="store_true", help="print one JSON object")
    boots.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE, help="CI level (default 0.95)")
    _steady_state_flag(boots)
    boots.set_defaults(func=run_boots)


def replication_of(args: argparse.Namespace):
    from analysis.screen.replication import Replication

    if args.resamples < 2:
        raise AnalysisError("--resamples must be at least 2")
    if not args.fixed and args.max_resamples < 2 * args.resamples:
        raise AnalysisError("--max-resamples must be at least twice --resamples (adaptive replication "
                            "needs two batches); or use --fixed")
    return Replication(args.resamples, args.max_resamples, args.resolution, args.seed)


def bca_report(path: str, *, confidence: float, replication, adaptive: bool = True) -> dict:
    """The ``bca --json`` object for the numbers in ``path``."""
    import numpy as np

    from analysis.inputs import read_readings
    from analysis.screen.bca import BcaError
    from analysis.screen.replication import Replication, bca_intervals, default_resolution

    values = np.array(read_readings(path, signed=True))
    resolution = None
    if adaptive:
        resolution = replication.resolution or default_resolution([values])
    chosen = Replication(replication.batch, replication.limit, resolution, replication.seed)
    try:
        result = bca_intervals([values], ["bca"], np.eye(1), confidence, chosen)
    except BcaError as exc:
        raise AnalysisError(f"{path}: {exc}") from None
    (found,) = result.intervals
    return {"mean": found.estimate, "ci": [found.low, found.high], "acceleration": found.acceleration,
            "bias_correction": found.bias_correction, "resamples": result.resamples, "n": int(values.shape[0]),
            "confidence": confidence, "seed": chosen.seed, "batches": result.batches, "resolution": resolution,
            "monte_carlo_error": result.monte_carlo_error}


def run_bca(args: argparse.Namespace) -> int:
    doc = bca_report(args.file, confidence=float(args.confidence), replication=replication_of(args),
                     adaptive=not args.fixed)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        level = f"{doc['confidence'] * 100:g}%"
        error = "one batch" if doc["monte_carlo_error"] is None else (
            f"Monte-Carlo error {doc['monte_carlo_error']:.3g} (resolution {doc['resolution']:.3g})")
        sys.stdout.write(f"{args.file}: n={doc['n']}  mean {doc['mean']:.6g}  BCa {level} CI "
                         f"[{doc['ci'][0]:.6g}, {doc['ci'][1]:.6g}]\n"
                         f"  acceleration {doc['acceleration']:.6g}, bias correction {doc['bias_correction']:.6g}, "
                         f"{doc['resamples']} resamples in {doc['batches']} batch(es), {error}, seed {doc['seed']}\n")
    return 0


def screen_options(args: argparse.Namespace):
    from analysis.screen.report import ScreenOptions

    return ScreenOptions(confidence=float(args.confidence), replication=replication_of(args),
                         adaptive=not args.fixed, exclusions=tuple(args.exclude), material_n=args.material_n,
                         interval=args.interval)


def run_screen(args: argparse.Namespace) -> int:
    from analysis.output import emit

    if (args.table is None) == (args.results is None):
        raise AnalysisError("screen: give either RESULTS (a native export) or --table FILE.csv")
    if args.material_n < 2:
        raise AnalysisError("--material-n must be at least 2")
    options = screen_options(args)
    if args.table is not None:
        from analysis.screen.report import analyse
        from analysis.screen.table import read_csv_table

        doc = {"source": args.table, "responses": {"response": analyse(read_csv_table(args.table), options)}}
        machine = doc["responses"]["response"]
    else:
        from analysis.screen.native import screen_results

        doc = screen_results(args.results, options, per_iteration=args.samples == "iterations",
                             steady_state=not args.no_steady_state, metric=args.metric)
        machine = doc
    if args.json:
        emit(json.dumps(machine, indent=2) + "\n", args.output)
    else:
        from analysis.reports import screen_tables

        emit(screen_tables.page(doc) if args.format == "html" else screen_tables.text(doc), args.output)
    return 0


def is_screening(document: object) -> bool:
    """A native export of a screening experiment (``table --format html`` adds its section)."""
    return isinstance(document, dict) and isinstance(document.get("screening"), dict)


def screening_section(path: str, bundle: dict) -> str:
    """The HTML report's screening section for a native export already read, at the defaults of ``screen``."""
    from analysis.reports import screen_tables
    from analysis.screen.native import screen_results
    from analysis.screen.report import ScreenOptions

    return screen_tables.section(screen_results(path, ScreenOptions(), bundle=bundle))


def run_boots(args: argparse.Namespace) -> int:
    from analysis.screen.boots import boots_report, render_text

    doc = boots_report(args.results, confidence=float(args.confidence), steady_state=not args.no_steady_state)
    sys.stdout.write(json.dumps(doc, indent=2) + "\n" if args.json else render_text(doc))
    return 0
