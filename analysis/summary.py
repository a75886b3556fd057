"""warmup_stats' summary JSON (``warmup_stats --output-json``), reproduced.

Shape (``warmup_format_version`` "2", dumped with ``sort_keys=True, indent=4``)::

    {"warmup_format_version": "2",
     "machines": {machine: {vm: {bench: {
         "classification", "detailed_classification" {flat, warmup, slowdown, "no steady state"},
         "steady_state_iteration", "steady_state_iteration_iqr", "steady_state_iteration_list",
         "steady_state_time_to_reach_secs", "..._iqr", "..._list",
         "steady_state_time", "steady_state_time_ci", "steady_state_time_list",
         "process_executons": [{"index", "classification", "outliers", "changepoints", "segment_means"}]}}}}}

(``process_executons`` is warmup_stats' spelling.) Rules kept from
``warmup/summary_statistics.py``:

- Keys are taken in sorted order; a key with no process executions, or whose
  *first* execution is empty, is skipped (with a warning).
- Pair classification: the common class when all executions agree;
  "good inconsistent" when the classes are exactly {flat, warmup}; otherwise
  "bad inconsistent".
- Per-execution steady numbers (see ``analysis.classify``) are listed for
  every execution that is not "no steady state".
- Any "no steady state" execution: steady iter, time and perf are all None.
  All flat: steady iter (#)/(s) None, steady perf bootstrapped. Otherwise:
  steady perf bootstrapped, and steady iter (#)/(s) are ``numpy.median`` with
  ``numpy.percentile`` at 5 and 95 (called "iqr") over all listed
  executions, flat ones contributing 1 and 0.0. Steady iter (#) values are
  turned into floats first, as warmup_stats does.
- Steady perf and its CI come from ``analysis.bootstrap`` and, as in
  warmup_stats, pass through Python 2's ``str()`` (12 significant digits).

coldrun additions: executions whose classification is None (no data, or too
short for changepoints) are left out of the counts and statistics but still
listed under ``process_executons``; the delta and steady used are those
recorded in the annotated results' ``classifier``. Executions without data
(``analysis.execution_states``: errored, timed out, crashed, invalid ...)
are listed, when there are any, under the top-level
``failed_process_executions`` ``{machine: {vm: {bench: [{"index", "state"}]}}}``
-- also for a benchmark none of whose executions could be classified. The
first-execution-empty skip applies only where the file records no states.
The top-level ``bootstrap`` ``{"seed", "resamples", "confidence"}`` records
how steady perf was bootstrapped, so reports made from the file can say so.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis import bootstrap, classify, execution_states
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis.inputs import machine_name
from analysis.pipeline import is_annotated, run_parallel
from analysis.progress import Progress
from analysis.reports.rows import BOOTSTRAP_KEY

WARMUP_FORMAT_VERSION = "2"
# coldrun addition: process executions without data, never classified.
FAILED_KEY = "failed_process_executions"
LOW_IQR_BOUND = 5.0
HIGH_IQR_BOUND = 95.0


def median_iqr(values: list[float]) -> tuple[float, list[float]]:
    """warmup_stats' ``median_iqr``: numpy median and the 5th/95th percentiles."""
    return float(np.median(values)), [
        float(np.percentile(values, LOW_IQR_BOUND)),
        float(np.percentile(values, HIGH_IQR_BOUND)),
    ]


def pair_classification(classes: list[str]) -> str:
    kinds = set(classes)
    if len(kinds) == 1:
        return classes[0]
    if kinds == {classify.FLAT, classify.WARMUP}:
        return "good inconsistent"
    return "bad inconsistent"


def _benchmark_plan(machine: str, key: str, results: dict, delta: str, warn: WarningSink) -> dict | None:
    """Everything about one key except the bootstrap, plus its bootstrap input."""
    wct = results["wallclock_times"][key]
    if len(wct) == 0:
        warn(f"skipping {key} from {machine} (no process executions)")
        return None
    if results[execution_states.STATES_KEY][key][0] == execution_states.EMPTY:
        # warmup_stats' rule, kept for files that record no states: there an
        # empty first execution is all it knows of a crashed benchmark.
        warn(f"skipping {key} from {machine} (benchmark crashed: first process execution is empty)")
        return None
    outs = results["all_outliers"][key]
    cpts = results["changepoints"][key]
    means = results["changepoint_means"][key]
    variances = results["changepoint_vars"][key]
    classes = results["classifications"][key]
    categories: list[str] = []
    steady_means: list[float] = []
    steady_iters: list[int] = []
    to_steady: list[float] = []
    boot_input: list[list[list[float]]] = []
    for i, times in enumerate(wct):
        cls = classes[i]
        if cls is None:
            continue
        categories.append(cls)
        if cls == classify.NO_STEADY_STATE:
            continue
        st = classify.steady_state(times, outs[i], cpts[i], means[i], variances[i], cls, delta)
        steady_means.append(st.steady_state_mean)
        steady_iters.append(st.steady_iteration)
        to_steady.append(st.time_to_steady)
        boot_input.append(classify.bootstrap_segments(times, outs[i], st.bootstrap_ranges))
    if not categories:
        warn(f"skipping {key} from {machine} (no classifiable process executions)")
        return None
    counts = dict(Counter(categories))
    for c in classify.CLASSES:
        counts.setdefault(c, 0)
    bench: dict[str, Any] = {
        "classification": pair_classification(categories),
        "detailed_classification": counts,
        "steady_state_iteration": None,
        "steady_state_iteration_iqr": None,
        "steady_state_iteration_list": steady_iters,
        "steady_state_time_to_reach_secs": None,
        "steady_state_time_to_reach_secs_iqr": None,
        "steady_state_time_to_reach_secs_list": to_steady,
        "steady_state_time": None,
        "steady_state_time_ci": None,
        "steady_state_time_list": steady_means,
        "process_executons": [
            {
                "index": i,
                "classification": classes[i],
                "outliers": outs[i],
                "changepoints": cpts[i],
                "segment_means": means[i],
            }
            for i in range(len(wct))
        ],
    }
    needs_bootstrap = counts[classify.NO_STEADY_STATE] == 0
    if needs_bootstrap and set(categories) != {classify.FLAT}:
        bench["steady_state_iteration"], bench["steady_state_iteration_iqr"] = median_iqr([float(v) for v in steady_iters])
        bench["steady_state_time_to_reach_secs"], bench["steady_state_time_to_reach_secs_iqr"] = median_iqr(to_steady)
    return {"bench": bench, "boot": boot_input if needs_bootstrap else None}


def _bootstrap_task(args: tuple) -> tuple[float, float] | None:
    boot, resamples, seed, label, confidence = args
    if boot is None:
        return None
    result = bootstrap.bootstrap_steady_perf(boot, resamples=resamples, seed=seed, key=label, confidence=confidence)
    return bootstrap.py2_str_round(result.median), bootstrap.py2_str_round(result.ci)


@dataclass
class KeySummary:
    """One key's part of a summary, bootstrap done: what ``summarise`` would compute for it."""

    plan: dict | None  # _benchmark_plan's, without its bootstrap input; None: key skipped
    outcome: tuple[float, float] | None  # (steady perf, CI) when bootstrapped
    notes: list[str]  # warnings, said when the key's turn comes


def summarise_key(machine: str, resamples: int, seed: int | None, confidence: str, key: str, executions: list,
                  states: list[str], annotations: dict[str, list], classifier: dict) -> KeySummary:
    """One key's summary from its annotations; a ``pipeline.annotate_then`` follow-up (bind the first
    four with functools.partial), so the bootstrap runs in the worker as soon as the key is classified."""
    one = {name: {key: value} for name, value in annotations.items()}
    one.update({"wallclock_times": {key: executions}, execution_states.STATES_KEY: {key: states}})
    notes: list[str] = []
    plan = _benchmark_plan(machine, key, one, str(classifier["delta"]), notes.append)
    if plan is None:
        return KeySummary(None, None, notes)
    outcome = _bootstrap_task((plan["boot"], resamples, seed, f"{machine}/{key}", confidence))
    return KeySummary(dict(plan, boot=None), outcome, notes)  # the segments need not travel back


def summarise(
    annotated_by_machine: dict[str, dict],
    resamples: int = bootstrap.RESAMPLES_HIGH,
    seed: int | None = bootstrap.DEFAULT_SEED,
    *,
    confidence: str = bootstrap.CONFIDENCE_LEVEL,
    jobs: int = 1,
    progress: bool = False,
    warn: WarningSink = stderr_warning,
    done: dict[tuple[str, str], KeySummary] | None = None,
) -> dict:
    """warmup_stats' summary dict from ``{machine: annotated results}``.

    ``done`` holds keys already summarised by :func:`summarise_key` (with the same
    resamples, seed and confidence), by (machine, key): only the rest are computed here.

    A single annotated results dict (with ``wallclock_times`` at the top) is
    accepted too; its machine comes from ``audit['uname']``.

    ``resamples`` is the bootstrap size B (100000 high quality, 10000 low);
    ``seed`` makes the bootstrap reproducible (default
    ``bootstrap.DEFAULT_SEED``; None: fresh entropy, like warmup_stats). ``jobs`` > 1 bootstraps benchmarks in forked workers.
    """
    if "wallclock_times" in annotated_by_machine:  # one machine's results given directly
        annotated_by_machine = {machine_name(annotated_by_machine): annotated_by_machine}
    summary: dict[str, Any] = {"machines": {}, "warmup_format_version": WARMUP_FORMAT_VERSION,
                               BOOTSTRAP_KEY: {"seed": seed, "resamples": resamples, "confidence": str(confidence)}}
    failures: dict[str, Any] = {}
    plans: list[tuple[str, str, KeySummary | None, dict]] = []
    for machine in sorted(annotated_by_machine):
        results = annotated_by_machine[machine]
        if not is_annotated(results):
            raise AnalysisError(f"results for machine {machine!r} are not annotated; run annotate first")
        # The recorded states when they fit the executions (analysis.inputs
        # adds them), else what pexec_flags and the times say.
        results = dict(results, **{execution_states.STATES_KEY: execution_states.from_flags(results, machine, warn)})
        delta = str(results["classifier"]["delta"])
        summary["machines"][machine] = {}
        for key in sorted(results["wallclock_times"]):
            failed = execution_states.failed(results[execution_states.STATES_KEY][key])
            if failed:
                name, vm, _variant = key.split(":")
                failures.setdefault(machine, {}).setdefault(vm, {})[name] = [
                    {"index": i, "state": state} for i, state in failed]
            if done is not None and (machine, key) in done:
                ready = done[(machine, key)]
                for note in ready.notes:
                    warn(note)
                plan = ready.plan
            else:
                ready, plan = None, _benchmark_plan(machine, key, results, delta, warn)
            if plan is not None:
                plans.append((machine, key, ready, plan))
    # Only keys with something to bootstrap go to the workers (none at all: no workers are started).
    tasks = [(p["boot"], resamples, seed, f"{m}/{k}", confidence) for m, k, ready, p in plans
             if ready is None and p["boot"] is not None]
    if progress:
        with Progress("bootstrap", len(tasks), force=True) as bar:
            computed = iter(run_parallel(_bootstrap_task, tasks, jobs, bar))
    else:
        computed = iter(run_parallel(_bootstrap_task, tasks, jobs, None))
    outcomes = [ready.outcome if ready else next(computed) if p["boot"] is not None else None
                for _, _, ready, p in plans]
    for (machine, key, ready, plan), outcome in zip(plans, outcomes):
        bench = plan["bench"]
        if outcome is not None:
            bench["steady_state_time"], bench["steady_state_time_ci"] = outcome
        name, vm, _variant = key.split(":")
        summary["machines"][machine].setdefault(vm, {})[name] = bench
    if failures:  # only then: a clean run's summary adds nothing to warmup_stats' but the bootstrap record
        summary[FAILED_KEY] = failures
    return summary


def dumps(summary: dict) -> str:
    """The summary as warmup_stats writes it (``sort_keys=True, indent=4``)."""
    return json.dumps(summary, sort_keys=True, indent=4)
