"""``coldrun-analyze plan RESULTS --target 1%``: per key, the executions and iterations a CI target needs.

The math is ``analysis.plan`` (Kalibera & Jones); here the input is read, each key's steady iterations
and costs are found, and the plan is rendered (a text table, or ``--json``).

- **Steady iterations**: each execution's steady state as the summary table cuts it (the changepoint
  classification's steady segments, outliers left out: ``classify.steady_state`` and
  ``classify.bootstrap_segments``, as steady perf). An execution with no steady state contributes its last
  ``--steady`` iterations (the classifier's, default a quarter of them), counted in the note; one without
  data, or too short to classify, is left out.
- **Costs**: c1 is a key's mean steady iteration. c2, what an execution costs besides its steady
  iterations, is its reboot and waits + its process's start-up and exit + its warm-up: the reboot and
  waits are the median gap between one execution's end and the next one's start in a native export's
  records (``started_at``/``ended_at``: reboot, boot settle, sync, temperature waits); start-up and exit
  are each record's duration less its iterations (Krun's ``eta_estimates``, in both formats); the warm-up
  is each execution's iterations before its steady part, every planned execution running as many as the
  longest seen in an execution with a steady state (only without any: in those without). Krun results
  record no reboots: the reboot and waits are then
  :data:`DEFAULT_EXECUTION_OVERHEAD` unless ``--execution-overhead`` gives them, and the output says
  which. ``--execution-overhead`` replaces the reboot and waits and the start-up and exit, measured or not.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from typing import Callable

from contracts.keys import Key
from analysis.errors import AnalysisError

# Reboot + waits per execution when the input does not record them: a reboot and Krun's 2-minute settle.
DEFAULT_EXECUTION_OVERHEAD = 180.0


def add_plan_command(subparsers, *, level: Callable, analysis_arguments: Callable, options: Callable) -> None:
    """Register ``plan`` (``level``: the front door's confidence type; ``analysis_arguments``: its options
    for analysing raw results; ``options``: args -> AnalysisOptions)."""
    plan = subparsers.add_parser(
        "plan", help="executions and iterations a CI target needs, and how long (Kalibera & Jones)",
        description="Per key: how many process executions of how many iterations bring the CI half-width of "
                    "the steady mean to --target, at the cheapest total time on this machine (reboots "
                    "included), from the variance between and within the executions of RESULTS.")
    plan.add_argument("results", metavar="RESULTS", help="results: Krun, coldrun native export, annotated, CSV")
    plan.add_argument("--target", required=True,
                      help='CI half-width: a percentage of the mean ("1%%" = mean ±1%%) or a time ("50us", '
                           '"0.2ms", "0.001" seconds)')
    plan.add_argument("--confidence", type=level, default="0.99", help="CI level (default 0.99, as the table)")
    plan.add_argument("--execution-overhead", metavar="TIME",
                      help="an execution's cost besides its iterations: reboot, waits, start-up and exit "
                           f"(\"90s\", \"2min\"; default: measured in a native export, else "
                           f"{DEFAULT_EXECUTION_OVERHEAD:g} s assumed)")
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    plan.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    analysis_arguments(plan, summary=False)
    plan.set_defaults(func=lambda args: run_plan(args, options(args)))


@dataclass
class KeyInput:
    """What one key's executions give the plan."""

    steady: list[list[float]] = field(default_factory=list)   # steady iterations, outliers left out
    warmup_iterations: list[int] = field(default_factory=list)
    steady_found: list[bool] = field(default_factory=list)   # False: no steady state, the last --steady kept
    warmup_seconds: list[float] = field(default_factory=list)
    process_seconds: list[float] = field(default_factory=list)  # duration less the iterations
    no_steady_state: int = 0
    left_out: int = 0


def key_inputs(annotated: dict, typed=None) -> dict[str, KeyInput]:
    """Each key's steady iterations, warm-ups and process overheads (module doc); ``typed``: the
    annotations as analysed already (``prepare.PreparedInput.typed``), else read from ``annotated``."""
    from analysis import annotated_results, classify, execution_states
    from analysis.last_iterations import figure_ranges

    if typed is None:
        typed = annotated_results.read_annotations(annotated, annotated[execution_states.STATES_KEY])
    steady, delta = typed.classifier.steady, typed.classifier.delta
    eta = annotated.get("eta_estimates")
    if not isinstance(eta, dict):
        eta = {}
    out = {}
    for key, annotation in typed.annotations.items():
        got = out[key] = KeyInput()
        durations = eta.get(key)
        if not isinstance(durations, list):
            durations = []
        for i, (times, e) in enumerate(zip(typed.times[key], annotation.executions)):
            if e.classification is None or not times:
                got.left_out += 1
                continue
            got.no_steady_state += e.classification == classify.NO_STEADY_STATE
            ranges = figure_ranges(times, e, delta, steady)
            values = [v for seg in classify.bootstrap_segments(times, e.outliers, ranges) for v in seg]
            if len(values) < 2:
                got.left_out += 1
                continue
            begin = ranges[0][0]
            got.steady.append(values)
            got.warmup_iterations.append(begin)
            got.steady_found.append(e.classification != classify.NO_STEADY_STATE)
            got.warmup_seconds.append(math.fsum(times[:begin]))
            duration = durations[i] if i < len(durations) else None
            if isinstance(duration, (int, float)) and duration > 0:
                got.process_seconds.append(max(0.0, duration - math.fsum(times)))
    return out


def reboot_and_waits(document: object) -> float | None:
    """The median gap between one execution's end and the next one's start in a native export's records
    (None: fewer than two records with both times)."""
    import statistics

    executions = document.get("executions") if isinstance(document, dict) else None
    spans = []
    for record in executions if isinstance(executions, list) else []:
        if isinstance(record, dict):
            start, end = record.get("started_at"), record.get("ended_at")
            if isinstance(start, (int, float)) and math.isfinite(start) and isinstance(end, (int, float)) \
                    and math.isfinite(end) and end >= start:
                spans.append((float(start), float(end)))
    spans.sort()
    gaps = [b[0] - a[1] for a, b in zip(spans, spans[1:]) if b[0] >= a[1]]
    return statistics.median(gaps) if gaps else None


def execution_overhead(document: object, given: float | None) -> tuple[float, str, str]:
    """(the reboot and waits per execution in seconds, where from: "given", "measured" or "assumed", how
    it was found, for the output)."""
    if given is not None:
        return given, "given", f"--execution-overhead {given:g} s (reboot, waits, start-up and exit)"
    gap = reboot_and_waits(document)
    if gap is not None:
        return gap, "measured", (f"measured: median gap between executions {gap:.3g} s (reboot and waits) "
                                 "+ each key's start-up and exit")
    return DEFAULT_EXECUTION_OVERHEAD, "assumed", (
        f"NOT RECORDED in this input: reboot and waits assumed {DEFAULT_EXECUTION_OVERHEAD:g} s per execution "
        "(give --execution-overhead) + each key's start-up and exit where recorded")


def plan_key(got: KeyInput, target, confidence: float, reboot: float, source: str) -> dict:
    """One key's plan as the JSON gives it."""
    from analysis import plan

    notes: list[str] = []
    if got.no_steady_state:
        notes.append(f"{got.no_steady_state} execution(s) without a steady state: their last --steady iterations")
    if got.left_out:
        notes.append(f"{got.left_out} execution(s) left out (no data, or fewer than 2 steady iterations)")
    if len(got.steady) < 2:
        notes.append("needs at least 2 executions with steady iterations")
        return {"executions_used": len(got.steady), "plan": None, "upper_plan": None, "line": None,
                "notes": notes}
    c = plan.variance_components(got.steady)
    c1 = math.fsum(map(math.fsum, got.steady)) / sum(map(len, got.steady))
    process = math.fsum(got.process_seconds) / len(got.process_seconds) if got.process_seconds else 0.0
    fixed = reboot + (process if source != "given" else 0.0)
    # The warm-up every planned execution runs: the longest seen where a steady state was found.
    found = [i for i, ok in enumerate(got.steady_found) if ok] or range(len(got.steady_found))
    warmups = [got.warmup_iterations[i] for i in found]
    warmup_max = max(warmups)
    padding = warmup_max - sum(warmups) / len(warmups)
    c2 = fixed + math.fsum(got.warmup_seconds[i] for i in found) / len(warmups) + padding * c1
    half = target.seconds(c.mean)
    upper = plan.t2_upper(c, confidence)
    level = f"{confidence * 100:g}%"

    def planned(t2_sq: float) -> dict:
        a = plan.allocate(c.t1_sq, t2_sq, c1, c2, half, confidence)
        total = None if a.n2 is None else a.n2 * (c2 + a.n1 * c1)
        return {"executions": a.n2, "steady_iterations": a.n1, "iterations": a.n1 + warmup_max,
                "seconds": total, "half_width": a.half_width, "t2_sq": t2_sq,
                "line": plan.plan_line(target, a.n2, a.n1 + warmup_max, total)}

    if c.t2_sq > 0:
        main, basis = planned(plan.t2_median(c)), "median-unbiased estimate"
        upper_plan = planned(upper) if c.executions < plan.FEW_EXECUTIONS else None
    else:
        main, basis, upper_plan = planned(upper), "upper", None
        notes.append(f"between-execution variance not detectable (T2² = {c.t2_sq:.3g}): planned for its {level} "
                     "upper bound; errs wide")
    if upper_plan is not None:
        notes.append(f"only {c.executions} executions: T2² poorly known; at its {level} upper bound (errs wide) "
                     f"{_short(upper_plan)}")
    if c.batch > 1 and c.t1_sq > 1.5 * c.plain_s1_sq:
        notes.append(f"iterations autocorrelated: T1² from batch means is {c.t1_sq / c.plain_s1_sq:.2g}x "
                     "their plain variance")
    if main["executions"] is None:
        notes.append("target out of reach")
    return {"executions_used": c.executions, "mean": c.mean, "t1_sq": c.t1_sq, "t2_sq": c.t2_sq,
            "t2_sq_median": plan.t2_median(c),
            "t2_sq_upper": upper, "plain_s1_sq": c.plain_s1_sq, "batch": c.batch,
            "cost": {"iteration": c1, "execution": c2, "reboot_and_waits": reboot if source != "given" else None,
                     "start_up_and_exit": process if source != "given" else None,
                     "overhead": fixed, "overhead_source": source, "warmup_iterations": warmup_max},
            "target_seconds": half, "t2_sq_planned": main["t2_sq"], "basis": basis, "plan": main,
            "upper_plan": upper_plan,
            "line": main["line"], "notes": notes}


def _short(p: dict) -> str:
    from analysis.plan import human_time

    if p["executions"] is None:
        return "out of reach"
    return f"{p['executions']} × {p['iterations']}, {human_time(p['seconds'])}"


def plan_document(path: str, annotated: dict, document: object, target, confidence: float,
                  given: float | None, typed=None) -> dict:
    """The plan of every key of one input (``typed``: its annotations as analysed, see key_inputs): what
    ``plan`` prints, and the ``table`` command's Plan section (table_plan)."""
    reboot, source, how = execution_overhead(document, given)
    keys = {key: plan_key(got, target, confidence, reboot, source)
            for key, got in key_inputs(annotated, typed).items()}
    return {"source": path, "target": target.label(), "target_is": "half-width",
            "relative": target.relative, "confidence": confidence, "interval": "t over the executions' means",
            "execution_overhead": {"source": source, "how": how}, "keys": keys}


def render_text(doc: dict) -> str:
    from analysis.plan import human_time

    level = f"{doc['confidence'] * 100:g}%"
    what = " of the mean" if doc["relative"] else ""
    lines = [f"plan: {doc['source']}",
             f"  target: CI half-width {doc['target']}{what} (the mean {doc['target']}) at {level} confidence, "
             "t over the executions' means",
             "  from each execution's steady iterations (the table's warm-up cut, outliers left out; no steady "
             "state: its last --steady iterations); T1² from batch means (batch = floor(sqrt(shortest)), at least "
             "the plain variance); T2² K&J's, planned at its median-unbiased value",
             f"  execution cost: {doc['execution_overhead']['how']}, + warm-up",
             "  iterations: per execution, warm-up included (steady: those the plan keeps)", ""]
    rows = [("key", "executions", "iterations", "steady", "time", "note")]
    for key, k in doc["keys"].items():
        p = k["plan"]
        if p is None or p["executions"] is None:
            rows.append((key, "-", "-", "-", "-", "; ".join(k["notes"])))
            continue
        rows.append((key, str(p["executions"]), str(p["iterations"]), str(p["steady_iterations"]),
                     human_time(p["seconds"]), "; ".join(k["notes"])))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                      enumerate(zip(r[:5], widths))) + ("  " + r[5] if r[5] else ""))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PlanRow:
    """One key's line in the table command's Plan section."""

    machine: str
    bench: str
    vm: str
    line: str   # plan.plan_line's, or that there is none
    notes: str  # the plan's caveats ("" when none)


def table_plan(inputs: list[tuple[str, str, dict, object, object]], target,
               confidence: float) -> tuple[list[PlanRow], list[str]]:
    """The ``table`` command's Plan section from what the table has analysed already: for each input
    (its name, its machine as the table names it, its annotated results, the document read, its
    typed annotations), a row per key, and how each input's execution cost was found."""
    rows, hows = [], []
    for name, machine, annotated, document, typed in inputs:
        doc = plan_document(name, annotated, document, target, confidence, None, typed)
        hows.append(f"{name}: {doc['execution_overhead']['how']}")
        for key, k in doc["keys"].items():
            bench, vm, _variant = Key.parse(key)
            rows.append(PlanRow(machine, bench, vm, k["line"] or f"{target.label()}: no plan", "; ".join(k["notes"])))
    return sorted(rows, key=lambda r: (r.machine, r.vm, r.bench)), hows


def run_plan(args: argparse.Namespace, options) -> int:
    from analysis import plan
    from analysis.inputs import load_input, summary_given
    from analysis.output import emit
    from analysis.prepare import prepare
    from analysis.screen.report import finite

    try:
        target = plan.parse_target(args.target)
        given = None if args.execution_overhead is None else plan.seconds(args.execution_overhead,
                                                                          "--execution-overhead")
    except ValueError as exc:
        raise AnalysisError(str(exc)) from None
    item = load_input(args.results)
    if item.kind == "summary":
        raise summary_given(item.path)
    document = item.document
    prepared = prepare(item, options, with_summary=False)   # analysed once; the plan reads its typed annotations
    assert prepared.annotated is not None     # not a summary input (refused above)
    doc = plan_document(str(item.path), prepared.annotated, document, target, float(args.confidence), given,
                        prepared.typed)
    emit(json.dumps(finite(doc), indent=2) + "\n" if args.json else render_text(doc), args.output)
    return 0
