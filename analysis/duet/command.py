"""``coldrun-analyze duet``: the duet report on paired iteration times (the stable machine interface).

    coldrun-analyze duet --pairs FILE.json [--json] [--confidence C] [--resamples N]
                         [--seed S] [--steady-state]
    coldrun-analyze duet RESULTS [--html OUT.html] [same options]

FILE holds ``{"x": [[...], ...], "y": [[...], ...]}`` (``analysis.duet.pairs``);
RESULTS is a coldrun native export of a [duet] experiment (``analysis.duet.native``:
x = side a, y = side b of each completed pair execution), reported per pair
(``--json``: ``{"results", "pairs": [{"pair", "a", "b", "pexecs", "left_out", "pairing",
"overlap", ...the fields below}]}``, pairing "position" or, for pairs run without a barrier,
"overlap" with ``overlap`` per execution {"paired", "a_iterations", "b_iterations"}; ``--html`` writes
the page of ``analysis.reports.duet_html``).
By default every iteration is kept: the paper's procedure (methods.md §2.2).
``--steady-state`` first cuts each execution to its sides' EDM stable
segments (``analysis.duet.steady``; coldrun's, not the paper's: on stationary
data EDM splits plain noise, so the cut loses iterations and widens the
interval; bench/bench_coverage.py measures it). ``--json`` prints one object:

- ``gms`` (per execution), ``ggms``, ``ci`` [low, high], ``relative_ci_width`` (width / ggms);
- ``ci_reliable`` (false under 30 executions, where the percentile bootstrap under-covers; a note says so)
  and ``t_ci`` [low, high], exp of the t interval of the executions' log gms, which covers at any count;
- ``sequential_difference`` (mean x - mean y over the executions' mean times),
  ``sequential_ci``, ``sequential_relative_ci_width`` (width / mean of y),
  ``sequential_method``;
- ``reduction`` (sequential / duet relative width; null when the duet CI has zero width);
- ``y_mean`` (the mean of y's execution means, the sequential widths' reference);
- ``shuffle_pairing``, ``shuffle_gms``, ``shuffle_ci``, ``shuffle_relative_ci_width``;
- ``seed`` (default 1, as every analysis: two runs give the same intervals), ``confidence``,
  ``resamples``, ``steady_state``, ``procedure`` (which procedure made the ratio,
  in words), ``executions``, ``iterations`` (kept per
  execution), ``excluded`` (per execution: kept [begin, end), excluded before
  and after, each side's segment and why a side was kept whole), ``notes``.

numpy and scipy are imported only when the command runs, so registering it
keeps ``coldrun-analyze --help`` fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import fmean
from typing import Callable

from analysis.bootstrap import DEFAULT_SEED
from analysis.errors import AnalysisError
from analysis.execution_states import execution_number

ArgumentType = Callable[[str], object]

# stats.DEFAULT_CONFIDENCE / DEFAULT_RESAMPLES, restated: importing stats here would load numpy.
DEFAULT_CONFIDENCE = "0.99"
DEFAULT_RESAMPLES = 10000
PROCEDURES = {
    False: "Bulej et al. 2020: every iteration's ratio x/y, geometric mean per execution, percentile "
           "bootstrap of their geometric mean over executions",
    True: "coldrun's variant (--steady-state): each execution first cut to its sides' EDM stable segments, "
          "then Bulej et al. 2020's geometric means and percentile bootstrap",
}
SEQUENTIAL_METHOD = ("percentile bootstrap of mean(x) - mean(y) over the executions' mean times "
                     "as two independent samples; relative width = width / mean of y")


def add_duet_command(subparsers, *, level: ArgumentType, count: ArgumentType) -> None:
    """Register ``duet`` on the ``coldrun-analyze`` subparsers object.

    ``level`` and ``count`` are the front door's argument types for a
    confidence level (text) and a non-negative whole number, so every
    subcommand checks them alike.
    """
    duet = subparsers.add_parser(
        "duet", help="duet benchmarking: ratio CI of paired runs vs the sequential baseline",
        description="Duet benchmarking (Bulej et al., ICPE 2020): geometric mean of paired ratios x/y, "
                    "percentile-bootstrap CI over executions, the sequential baseline and a shuffle control.")
    duet.add_argument("results", nargs="?", metavar="RESULTS",
                      help="a coldrun native export (json or json.bz2) of a [duet] experiment: every pair")
    duet.add_argument("--pairs", metavar="FILE.json",
                      help='{"x": [[...], ...], "y": [[...], ...]}: one list per execution, paired by position')
    duet.add_argument("--html", metavar="OUT.html", help="RESULTS only: also write an HTML page with, per pair, "
                                                          "the per-execution ratio plot and the two CIs side by side")
    duet.add_argument("--json", action="store_true", help="print one JSON object (the machine interface)")
    duet.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE,
                      help="CI level (default 0.99, as the paper)")
    duet.add_argument("--resamples", type=count, default=DEFAULT_RESAMPLES, help="bootstrap resamples (default 10000)")
    duet.add_argument("--seed", type=count, default=DEFAULT_SEED,
                      help=f"seed for the bootstrap and the shuffle (default {DEFAULT_SEED}, as every analysis)")
    cut = duet.add_mutually_exclusive_group()
    cut.add_argument("--steady-state", dest="steady_state", action="store_true",
                     help="cut each execution to its sides' EDM stable segments first (not the paper's procedure)")
    cut.add_argument("--no-steady-state", dest="steady_state", action="store_false",
                     help="keep every iteration, the paper's procedure (the default)")
    duet.set_defaults(func=run_duet)


def report(path: str, *, confidence: float = float(DEFAULT_CONFIDENCE), resamples: int = DEFAULT_RESAMPLES,
           seed: int | None = DEFAULT_SEED, steady_state: bool = False) -> dict:
    """The ``--json`` object for the pairs file at ``path``."""
    from analysis.duet.pairs import load_pairs

    return report_runs(load_pairs(path), str(path), confidence=confidence, resamples=resamples, seed=seed,
                       steady_state=steady_state)


def results_report(path: str, *, confidence: float = float(DEFAULT_CONFIDENCE), resamples: int = DEFAULT_RESAMPLES,
                   seed: int | None = DEFAULT_SEED, steady_state: bool = False) -> dict:
    """The ``--json`` object for a native export of a [duet] experiment: one report per pair."""
    from analysis.duet.native import exported_pairs
    from analysis.inputs import read_document

    pairs = exported_pairs(read_document(Path(path)), path, steady_state=steady_state)
    docs = []
    for p in pairs:
        doc = report_runs(p.runs, f"{path}: pair {p.pair}", confidence=confidence, resamples=resamples, seed=seed,
                          steady_state=steady_state, cut=p.cut)
        seed = doc["seed"]      # one seed for the whole report (drawn once if None was asked for)
        docs.append({"pair": p.pair, "a": p.a, "b": p.b, "pexecs": list(p.pexecs),
                     "left_out": {str(k): v for k, v in p.left_out.items()}, "pairing": p.pairing,
                     "overlap": None if p.overlap is None else
                     {str(k): dict(zip(("paired", "a_iterations", "b_iterations"), v)) for k, v in p.overlap.items()},
                     **doc})
    return {"results": str(path), "pairs": docs}


def report_runs(runs, source: str, *, confidence: float, resamples: int, seed: int | None,
                steady_state: bool, cut: dict | None = None) -> dict:
    """The report's fields for paired runs (``source`` names them in errors and in the ``pairs`` field);
    ``cut``: executions already cut to their sides' steady states before overlap pairing."""
    from analysis.duet import steady, stats

    path = source
    if steady_state:
        runs, trims = steady.steady_state(runs, cut)
    else:
        trims = steady.whole(runs)
    try:
        result = stats.analyse(runs, confidence=confidence, resamples=resamples, seed=seed)
    except AnalysisError as exc:  # too few executions: say which file
        raise AnalysisError(f"{path}: {exc}") from None
    return {
        "pairs": str(path),
        "executions": runs.executions,
        "iterations": [len(xr) for xr in runs.x],
        "gms": result.gms,
        "ggms": result.ggms,
        "ci": [result.ci.low, result.ci.high],
        "relative_ci_width": result.ci.relative_width,
        "ci_reliable": runs.executions >= stats.PERCENTILE_MIN_EXECUTIONS,
        "t_ci": [result.t_ci.low, result.t_ci.high],
        "sequential_difference": result.sequential_difference,
        "sequential_ci": [result.sequential_ci.low, result.sequential_ci.high],
        "sequential_relative_ci_width": result.sequential_ci.relative_width,
        "sequential_method": SEQUENTIAL_METHOD,
        "reduction": result.reduction,
        "y_mean": fmean(fmean(yr) for yr in runs.y),
        "shuffle_pairing": result.shuffle_pairing,
        "shuffle_gms": result.shuffle_gms,
        "shuffle_ci": [result.shuffle_ci.low, result.shuffle_ci.high],
        "shuffle_relative_ci_width": result.shuffle_ci.relative_width,
        "seed": result.seed,
        "confidence": result.confidence,
        "resamples": result.resamples,
        "steady_state": steady_state,
        "procedure": PROCEDURES[steady_state],
        "excluded": [t.as_json() for t in trims],
        "notes": result.notes,
    }


def render_results_text(doc: dict) -> str:
    """Every pair's report, each headed by its two keys (x = a, y = b)."""
    parts = []
    for p in doc["pairs"]:
        left = ("; left out: " + ", ".join(f"{execution_number(int(k))} {v}" for k, v in p["left_out"].items())
                if p["left_out"] else "")
        numbers = ", ".join(execution_number(int(i)) for i in p["pexecs"])
        parts.append(f"pair {p['a']} / {p['b']} (x = a, y = b), pair executions {numbers}{left}\n"
                     + f"  pairing            {_pairing_text(p)}\n" + render_text(p))
    return "\n".join(parts)


def _pairing_text(p: dict) -> str:
    if p["overlap"] is None:
        return "by position (the sides met at a barrier before every iteration)"
    counts = ", ".join(f"{execution_number(int(k))} {v['paired']} of {v['a_iterations']}/{v['b_iterations']}"
                       for k, v in p["overlap"].items())
    mixed = "; the others by position (barrier)" if p["pairing"] != "overlap" else ""
    return (f"by overlap (run without a barrier: iterations paired when they overlap by > 40% of both; "
            f"paired of a/b iterations: {counts}){mixed}")


def render_text(doc: dict) -> str:
    from analysis.reports import formats as f

    level = f"{doc['confidence'] * 100:g}%"
    lines = [
        f"duet: {doc['pairs']}: {doc['executions']} executions, kept iterations {doc['iterations']}",
        f"  ggms (x/y, ratio)  {f.ratio(doc['ggms'])}   {level} CI [{f.ratio(doc['ci'][0])}, {f.ratio(doc['ci'][1])}]"
        f"   relative width {f.percent(doc['relative_ci_width'])}"
        + ("" if doc["ci_reliable"] else "   UNRELIABLE (see note)"),
        f"  t on log gms       {level} CI [{f.ratio(doc['t_ci'][0])}, {f.ratio(doc['t_ci'][1])}]",
        f"  sequential x - y   {f.signed_duration(doc['sequential_difference'])}   {level} CI "
        f"{f.interval(*doc['sequential_ci'])}   relative width {f.percent(doc['sequential_relative_ci_width'])} "
        f"(of y's mean, {f.duration(doc['y_mean'])})",
        "  reduction          " + ("none (the duet CI has zero width)" if doc["reduction"] is None
                                   else f"{f.ratio(doc['reduction'])}x (sequential / duet relative width)"),
        f"  shuffle control    {level} CI [{f.ratio(doc['shuffle_ci'][0])}, {f.ratio(doc['shuffle_ci'][1])}]"
        f"   relative width {f.percent(doc['shuffle_relative_ci_width'])}   (y executions {doc['shuffle_pairing']})",
    ]
    if doc["steady_state"]:
        for e in doc["excluded"]:
            sides = "; ".join(f"{side}: {e[side + '_note'] or 'segment %s' % e[side + '_segment']}"
                              for side in ("x", "y"))
            lines.append(f"  execution {execution_number(e['execution'])}: "
                         f"kept [{e['kept'][0]}, {e['kept'][1]}), excluded "
                         f"{e['excluded_before']} before, {e['excluded_after']} after ({sides})")
    else:
        lines.append("  steady-state removal off: every iteration kept")
    lines.append(f"  procedure          {doc['procedure']}")
    lines += [f"  note: {note}" for note in doc["notes"]]
    lines.append(f"  seed {doc['seed']}, {doc['resamples']} resamples")
    return "\n".join(lines) + "\n"


def run_duet(args: argparse.Namespace) -> int:
    if args.resamples < 1:
        raise AnalysisError("--resamples must be at least 1")
    if (args.results is None) == (args.pairs is None):
        raise AnalysisError("duet: give either RESULTS (a native export of a [duet] experiment) or --pairs FILE")
    options = dict(confidence=float(args.confidence), resamples=args.resamples, seed=args.seed,
                   steady_state=args.steady_state)
    if args.pairs is not None:
        if args.html:
            raise AnalysisError("duet: --html needs RESULTS (a native export), not --pairs")
        doc = report(args.pairs, **options)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n" if args.json else render_text(doc))
        return 0
    doc = results_report(args.results, **options)
    if args.html:
        from analysis.output import write_output
        from analysis.reports.duet_html import duet_page
        write_output(Path(args.html), duet_page(doc))
    sys.stdout.write(json.dumps(doc, indent=2) + "\n" if args.json else render_results_text(doc))
    return 0
