"""warmup_stats' summary JSON (``--output-json``, format "2", plus coldrun's keys): written from
``analysis.key_results.Summary`` and read back into plain rows, its shape checked, for the tables.

Written: ``{"warmup_format_version": "2", "machines": {machine: {vm: {bench: {...}}}},
"bootstrap": {...}, "failed_process_executions": {...}}`` (the last only when
some execution has no data; see ``analysis.summary`` for each field).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, overload

from contracts.keys import Key
from analysis.classify import parse_delta
from analysis.errors import AnalysisError
from analysis.execution_states import label
from analysis.key_results import Interval, KeySummary, LastIterations, Summary

WARMUP_FORMAT_VERSION = "2"
# coldrun's summary key for process executions without data, never classified:
# {machine: {vm: {bench: [{"index", "state"}]}}}.
FAILED_KEY = "failed_process_executions"
# coldrun's: completed process executions the supervisor flagged (a native export's records), with their flags.
FLAGGED_KEY = "flagged_process_executions"
# coldrun's summary key for how steady perf was bootstrapped:
# {"seed": int or null, "resamples": int, "confidence": str}; a merged
# summary whose inputs differ holds a list of them. Absent in warmup_stats'.
BOOTSTRAP_KEY = "bootstrap"
# coldrun's summary key for the equivalence delta the classes were made with, as annotated results record it:
# {"delta": str}; a list of them when machines (or merged inputs) differ. Absent in warmup_stats'.
CLASSIFIER_KEY = "classifier"
# coldrun's table of each key without steady perf's last-iterations figure (analysis.last_iterations):
# {machine: {vm: {bench: {"mean", "half_width", "iterations", "executions", "confidence"}}}}.
LAST_ITERATIONS_KEY = "last_iterations"
# coldrun's per-machine tables beside "machines" (merged and renamed with it).
MACHINE_TABLES = (FAILED_KEY, FLAGGED_KEY, LAST_ITERATIONS_KEY)

# Process-execution classes, in the order warmup_stats' tables list them.
PEXEC_CLASSES = ("flat", "warmup", "slowdown", "no steady state")
# Pair classes: the four above plus the two inconsistent verdicts.
PAIR_CLASSES = PEXEC_CLASSES + ("good inconsistent", "bad inconsistent")
INCONSISTENT = ("good inconsistent", "bad inconsistent")


def _spread(value: Interval | None) -> tuple[float | None, list[float] | None]:
    return (None, None) if value is None else (value.median, [value.low, value.high])


def benchmark_entry(s: KeySummary) -> dict[str, Any]:
    """One benchmark's entry, as warmup_stats writes it."""
    iteration, iteration_range = _spread(s.steady_iteration)
    to_reach, to_reach_range = _spread(s.time_to_steady)
    return {
        "classification": s.classification,
        "detailed_classification": s.counts,
        "steady_state_iteration": iteration,
        "steady_state_iteration_iqr": iteration_range,
        "steady_state_iteration_list": s.steady_iterations,
        "steady_state_time_to_reach_secs": to_reach,
        "steady_state_time_to_reach_secs_iqr": to_reach_range,
        "steady_state_time_to_reach_secs_list": s.times_to_steady,
        "steady_state_time": s.steady_perf,
        "steady_state_time_ci": s.steady_perf_ci,
        "steady_state_time_list": s.steady_means,
        "process_executons": [  # sic: warmup_stats' spelling
            {"index": i, "classification": e.classification, "outliers": e.outliers,
             "changepoints": e.changepoints, "segment_means": e.means}
            for i, e in enumerate(s.executions)
        ],
    }


def summary_document(summary: Summary) -> dict:
    """The summary JSON's dict (benchmark keys are ``bench:vm:variant``)."""
    settings = summary.settings
    out: dict[str, Any] = {"machines": {}, "warmup_format_version": WARMUP_FORMAT_VERSION,
                           BOOTSTRAP_KEY: {"seed": settings.seed, "resamples": settings.resamples,
                                           "confidence": str(settings.confidence)}}
    if summary.deltas:
        records = [{"delta": d} for d in summary.deltas]
        out[CLASSIFIER_KEY] = records[0] if len(records) == 1 else records
    for machine, keys in summary.keys.items():
        vms: dict[str, Any] = {}
        out["machines"][machine] = vms
        for key, s in keys.items():
            name, vm, _variant = Key.parse(key)
            vms.setdefault(vm, {})[name] = benchmark_entry(s)
            if s.last_iterations is not None:
                li = s.last_iterations
                out.setdefault(LAST_ITERATIONS_KEY, {}).setdefault(machine, {}).setdefault(vm, {})[name] = {
                    "mean": li.mean, "half_width": li.half_width, "iterations": li.iterations,
                    "executions": li.executions, "confidence": li.confidence}
    failures: dict[str, Any] = {}
    for machine, failed_keys in summary.failed.items():
        for key, executions in failed_keys.items():
            name, vm, _variant = Key.parse(key)
            failures.setdefault(machine, {}).setdefault(vm, {})[name] = [
                {"index": i, "state": state} for i, state in executions]
    if failures:  # only then: a clean run's summary adds nothing to warmup_stats' but the bootstrap and classifier
        out[FAILED_KEY] = failures
    return out


def add_flagged(summary: dict, machine: str, execution_flags: dict | None) -> None:
    """``summary``'s FLAGGED_KEY entries for one machine's results, from their FLAGS_KEY table (if any; every
    reader has kept only a well-formed one: execution_states.checked_flags)."""
    for key, per_execution in (execution_flags or {}).items():
        name, vm, _variant = Key.parse(key)
        entries = [{"index": i, "flags": list(flags)} for i, flags in enumerate(per_execution) if flags]
        if entries:
            summary.setdefault(FLAGGED_KEY, {}).setdefault(machine, {}).setdefault(vm, {})[name] = entries


def flagged_rows(summary: dict) -> dict[tuple[str, str, str, int], list[str]]:
    """(machine, vm, bench, index) -> flags, from FLAGGED_KEY."""
    return {(machine, vm, bench, index): flags for machine, vm, bench, index, flags in _execution_entries(
        summary, FLAGGED_KEY, "flags", lambda v: isinstance(v, list) and all(isinstance(f, str) for f in v),
        "[NAME, ...]")}


def dumps(summary: dict) -> str:
    """The summary as warmup_stats writes it (``sort_keys=True, indent=4``)."""
    return json.dumps(summary, sort_keys=True, indent=4)


class SummaryFormatError(AnalysisError):
    """The summary dict does not have warmup_stats' summary shape."""


@dataclass(frozen=True)
class FailedRow:
    """One process execution that has no data to classify."""

    machine: str
    vm: str
    bench: str
    index: int  # 0-based, as in process_executons
    state: str

    @property
    def label(self) -> str:
        return label(self.state)


@dataclass(frozen=True)
class SummaryRow:
    machine: str
    vm: str
    bench: str
    classification: str
    # Process-execution class -> count (only the four pexec classes).
    counts: dict[str, int]
    steady_iter: Interval | None
    steady_iter_list: list[float] = field(default_factory=list)
    steady_time_to_reach: Interval | None = None
    steady_perf: float | None = None
    steady_perf_ci: float | None = None
    # Process executions without data, by label ("errored (no data)": 2);
    # counted apart, never as a class.
    failed: dict[str, int] = field(default_factory=dict)
    # No steady perf: the mean of the executions' last iterations, marked as such (analysis.last_iterations).
    last_iterations: LastIterations | None = None

    @property
    def n_pexecs(self) -> int:
        return sum(self.counts.values())

    @property
    def is_inconsistent(self) -> bool:
        return self.classification in INCONSISTENT


@overload
def _number(where: str, value: Any, *, optional: Literal[False]) -> float: ...
@overload
def _number(where: str, value: Any, *, optional: bool = True) -> float | None: ...


def _number(where: str, value: Any, *, optional: bool = True) -> float | None:
    """A finite JSON number (None allowed when optional)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SummaryFormatError(f"{where}: expected a number, got {value!r}")
    try:
        f = float(value)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f):
        raise SummaryFormatError(f"{where}: expected a finite number, got {value!r}")
    return f


def _interval(where: str, median: Any, rng: Any) -> Interval | None:
    if rng is not None and not (isinstance(rng, (list, tuple)) and len(rng) == 2):
        raise SummaryFormatError(f"{where}: expected a [p5, p95] pair, got {rng!r}")
    mid = _number(where.rsplit("_iqr", 1)[0], median)
    if rng is None:
        if mid is not None:
            raise SummaryFormatError(f"{where}: expected a [p5, p95] pair, got None")
        return None
    low, high = _number(where + "[0]", rng[0], optional=False), _number(where + "[1]", rng[1], optional=False)
    return None if mid is None else Interval(mid, low, high)


def _last(where: str, d: Any) -> LastIterations | None:
    """A LAST_ITERATIONS_KEY entry, its shape checked."""
    if d is None:
        return None
    counts: list[Any] = [d.get(k) if isinstance(d, dict) else None for k in ("iterations", "executions")]
    if not isinstance(d, dict) or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts) \
            or not isinstance(d.get("confidence"), str):
        raise SummaryFormatError(f"{where}: expected {{\"mean\", \"half_width\", \"iterations\", \"executions\", "
                                 "\"confidence\"}")
    half = _number(f"{where}.half_width", d.get("half_width"))
    if half is not None and half < 0:
        raise SummaryFormatError(f"{where}.half_width: negative ({half!r})")
    return LastIterations(_number(f"{where}.mean", d.get("mean"), optional=False), half, counts[0], counts[1],
                          d["confidence"])


def _row(machine: str, vm: str, bench: str, d: Any, failed: dict[str, int],
         last: Any = None) -> SummaryRow:
    where = f"machines.{machine}.{vm}.{bench}"
    if not isinstance(d, dict):
        raise SummaryFormatError(f"{where}: expected an object, got {type(d).__name__}")
    cls = d.get("classification")
    if cls not in PAIR_CLASSES:
        raise SummaryFormatError(f"{where}.classification: unknown class {cls!r}")
    detailed = d.get("detailed_classification")
    if not isinstance(detailed, dict):
        raise SummaryFormatError(f"{where}.detailed_classification: missing or not an object")
    counts = {}
    for c in PEXEC_CLASSES:
        n = detailed.get(c, 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise SummaryFormatError(f"{where}.detailed_classification.{c}: expected a count, got {n!r}")
        counts[c] = n
    perf = _number(f"{where}.steady_state_time", d.get("steady_state_time"))
    ci = _number(f"{where}.steady_state_time_ci", d.get("steady_state_time_ci"))
    if ci is not None and ci < 0:
        raise SummaryFormatError(f"{where}.steady_state_time_ci: negative ({ci!r})")
    iters = d.get("steady_state_iteration_list") or []
    if not isinstance(iters, list):
        raise SummaryFormatError(f"{where}.steady_state_iteration_list: expected a list")
    return SummaryRow(
        machine=machine,
        vm=vm,
        bench=bench,
        classification=cls,
        counts=counts,
        steady_iter=_interval(f"{where}.steady_state_iteration_iqr",
                              d.get("steady_state_iteration"), d.get("steady_state_iteration_iqr")),
        steady_iter_list=[_number(f"{where}.steady_state_iteration_list[{i}]", x, optional=False)
                          for i, x in enumerate(iters)],
        steady_time_to_reach=_interval(f"{where}.steady_state_time_to_reach_secs_iqr",
                                       d.get("steady_state_time_to_reach_secs"),
                                       d.get("steady_state_time_to_reach_secs_iqr")),
        steady_perf=perf,
        steady_perf_ci=ci,
        failed=failed,
        last_iterations=None if perf is not None else _last(f"{LAST_ITERATIONS_KEY}.{machine}.{vm}.{bench}", last),
    )


def _benchmarks(table: Any, name: str) -> Iterator[tuple[str, str, str, Any]]:
    """(machine, vm, bench, value) of a ``{machine: {vm: {bench: value}}}``
    table, sorted, its shape checked."""
    if not isinstance(table, dict):
        raise SummaryFormatError(f"{name}: expected an object of machines")
    for machine in sorted(table):
        vms = table[machine]
        if not isinstance(vms, dict):
            raise SummaryFormatError(f"{name}.{machine}: expected an object of VMs")
        for vm in sorted(vms):
            benches = vms[vm]
            if not isinstance(benches, dict):
                raise SummaryFormatError(f"{name}.{machine}.{vm}: expected an object of benchmarks")
            for bench in sorted(benches):
                yield machine, vm, bench, benches[bench]


def summary_rows(summary: dict) -> list[SummaryRow]:
    """All rows, sorted by machine, VM, benchmark."""
    if not isinstance(summary, dict) or not isinstance(summary.get("machines"), dict):
        raise SummaryFormatError("not a warmup_stats summary: no 'machines' object at the top level")
    failed: dict[tuple[str, str, str], dict[str, int]] = {}
    for f in failed_rows(summary):
        counts = failed.setdefault((f.machine, f.vm, f.bench), {})
        counts[f.label] = counts.get(f.label, 0) + 1
    last = {(m, v, b): d for m, v, b, d in _benchmarks(summary.get(LAST_ITERATIONS_KEY) or {}, LAST_ITERATIONS_KEY)}
    return [_row(machine, vm, bench, d, failed.get((machine, vm, bench), {}), last.get((machine, vm, bench)))
            for machine, vm, bench, d in _benchmarks(summary["machines"], "machines")]


def failed_rows(summary: dict) -> list[FailedRow]:
    """The process executions without data (coldrun's ``failed_process_executions``),
    sorted by machine, VM, benchmark, index."""
    rows = [FailedRow(*entry) for entry in _execution_entries(summary, FAILED_KEY, "state",
                                                              lambda v: isinstance(v, str), "NAME")]
    return sorted(rows, key=lambda r: (r.machine, r.vm, r.bench, r.index))


def _execution_entries(summary: dict, table_key: str, field: str, valid, shown: str
                       ) -> Iterator[tuple[str, str, str, int, Any]]:
    """(machine, vm, bench, index, value of ``field``) of each entry of coldrun's per-execution table
    ``table_key`` ({machine: {vm: {bench: [{"index": N, field: ...}]}}}), each checked."""
    table = summary.get(table_key, {}) if isinstance(summary, dict) else {}
    for machine, vm, bench, entries in _benchmarks(table, table_key):
        where = f"{table_key}.{machine}.{vm}.{bench}"
        if not isinstance(entries, list):
            raise SummaryFormatError(f"{where}: expected a list of process executions")
        for i, e in enumerate(entries):
            ok = isinstance(e, dict) and isinstance(e.get("index"), int) \
                and not isinstance(e.get("index"), bool) and valid(e.get(field))
            if not ok:
                raise SummaryFormatError(f"{where}[{i}]: expected {{\"index\": N, \"{field}\": {shown}}}")
            yield machine, vm, bench, e["index"], e[field]


@dataclass(frozen=True)
class BootstrapSettings:
    """How the steady perf numbers of a summary were made (None: not recorded)."""

    seed: int | None
    resamples: int | None
    confidence: str | None
    recorded: bool = True


def classifier_deltas(summary: dict) -> list[str | None]:
    """The equivalence deltas a summary records (CLASSIFIER_KEY); ``[None]`` when it records none
    (warmup_stats', or coldrun's before it recorded them)."""
    value = summary.get(CLASSIFIER_KEY) if isinstance(summary, dict) else None
    if value is None:
        return [None]
    out: list[str | None] = []
    for i, rec in enumerate(value if isinstance(value, list) else [value]):
        where = CLASSIFIER_KEY if not isinstance(value, list) else f"{CLASSIFIER_KEY}[{i}]"
        delta = rec.get("delta") if isinstance(rec, dict) else None
        try:
            parse_delta(str(delta))
        except ValueError as exc:
            raise SummaryFormatError(f"{where}.delta: {exc}") from None
        if not isinstance(delta, str):
            raise SummaryFormatError(f"{where}: expected {{\"delta\": \"2%\" or \"0.001\"}}, got {rec!r}")
        out.append(delta)
    return out


def bootstrap_settings(summary: dict) -> list[BootstrapSettings]:
    """The bootstrap settings a summary records: one entry, or one per distinct
    setting of merged inputs; ``recorded=False`` for a summary without them."""
    value = summary.get(BOOTSTRAP_KEY) if isinstance(summary, dict) else None
    if value is None:
        return [BootstrapSettings(None, None, None, recorded=False)]
    records = value if isinstance(value, list) else [value]
    out = []
    for i, rec in enumerate(records):
        where = BOOTSTRAP_KEY if not isinstance(value, list) else f"{BOOTSTRAP_KEY}[{i}]"
        if rec is None:
            out.append(BootstrapSettings(None, None, None, recorded=False))
            continue
        if not isinstance(rec, dict):
            raise SummaryFormatError(f"{where}: expected {{\"seed\", \"resamples\", \"confidence\"}}")
        seed, resamples = rec.get("seed"), rec.get("resamples")
        for name, v in (("seed", seed), ("resamples", resamples)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise SummaryFormatError(f"{where}.{name}: expected a whole number, got {v!r}")
        conf = rec.get("confidence")
        out.append(BootstrapSettings(seed, resamples, None if conf is None else str(conf)))
    return out
