"""warmup_stats' summary (``warmup_stats --output-json``), reproduced: each key's
``analysis.key_results.KeySummary`` from its annotations; ``analysis.summary_json``
writes and reads the JSON.

JSON shape (``warmup_format_version`` "2", dumped with ``sort_keys=True, indent=4``)::

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

coldrun additions: a key without steady perf gets the mean of its executions' last iterations
(``analysis.last_iterations``), in its own top-level table ``last_iterations``
``{machine: {vm: {bench: {"mean", "half_width", "iterations", "executions", "confidence"}}}}``,
so warmup_stats' per-benchmark entries keep their shape. Executions whose classification is None (no data, or too
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

import dataclasses
from collections import Counter

import numpy as np

from analysis import annotated_results, bootstrap, classify, execution_states, last_iterations, summary_json
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis.inputs import machine_name
from analysis.key_results import (AnnotatedResults, KeyAnnotation, KeyOutcome, KeySummary, Interval, Summary,
                                  SummarySettings)
from analysis.progress import Progress
from analysis.workers import run_parallel

LOW_IQR_BOUND = 5.0
HIGH_IQR_BOUND = 95.0


def median_iqr(values: list[float]) -> Interval:
    """warmup_stats' ``median_iqr``: numpy median and the 5th/95th percentiles."""
    return Interval(float(np.median(values)), float(np.percentile(values, LOW_IQR_BOUND)),
                  float(np.percentile(values, HIGH_IQR_BOUND)))


def pair_classification(classes: list[str]) -> str:
    kinds = set(classes)
    if len(kinds) == 1:
        return classes[0]
    if kinds == {classify.FLAT, classify.WARMUP}:
        return "good inconsistent"
    return "bad inconsistent"


def _key_plan(machine: str, key: str, times: list[list[float]], states: list[str], annotation: KeyAnnotation,
              delta: str, warn: WarningSink) -> tuple[KeySummary, list | None] | None:
    """Everything about one key but the bootstrap, and the bootstrap's input (None: nothing to bootstrap)."""
    if len(times) == 0:
        warn(f"skipping {key} from {machine} (no process executions)")
        return None
    if states[0] == execution_states.EMPTY:
        # warmup_stats' rule, kept for files that record no states: there an
        # empty first execution is all it knows of a crashed benchmark.
        warn(f"skipping {key} from {machine} (benchmark crashed: first process execution is empty)")
        return None
    categories: list[str] = []
    steady_means: list[float] = []
    steady_iters: list[int] = []
    to_steady: list[float] = []
    boot_input: list[list[list[float]]] = []
    for series, e in zip(times, annotation.executions):
        if e.classification is None:
            continue
        categories.append(e.classification)
        if e.classification == classify.NO_STEADY_STATE:
            continue
        st = classify.steady_state(series, e.outliers, e.changepoints, e.means, e.variances, e.classification, delta)
        steady_means.append(st.steady_state_mean)
        steady_iters.append(st.steady_iteration)
        to_steady.append(st.time_to_steady)
        boot_input.append(classify.bootstrap_segments(series, e.outliers, st.bootstrap_ranges))
    if not categories:
        warn(f"skipping {key} from {machine} (no classifiable process executions)")
        return None
    counts = dict(Counter(categories))
    for c in classify.CLASSES:
        counts.setdefault(c, 0)
    needs_bootstrap = counts[classify.NO_STEADY_STATE] == 0
    spread = needs_bootstrap and set(categories) != {classify.FLAT}
    plan = KeySummary(
        classification=pair_classification(categories), counts=counts, steady_iterations=steady_iters,
        times_to_steady=to_steady, steady_means=steady_means,
        steady_iteration=median_iqr([float(v) for v in steady_iters]) if spread else None,
        time_to_steady=median_iqr(to_steady) if spread else None,
        executions=annotation.executions)
    return plan, boot_input if needs_bootstrap else None


def _bootstrap_task(args: tuple) -> tuple[float, float] | None:
    boot, settings, label = args
    if boot is None:
        return None
    result = bootstrap.bootstrap_steady_perf(boot, resamples=settings.resamples, seed=settings.seed, key=label,
                                             confidence=settings.confidence)
    return bootstrap.py2_str_round(result.median), bootstrap.py2_str_round(result.ci)


def _with_perf(plan: KeySummary, outcome: tuple[float, float] | None) -> KeySummary:
    if outcome is None:
        return plan
    return dataclasses.replace(plan, steady_perf=outcome[0], steady_perf_ci=outcome[1])


def _with_last(s: KeySummary, annotated: AnnotatedResults, key: str, confidence: str) -> KeySummary:
    """Where there is no steady perf, the figure of the last iterations (analysis.last_iterations)."""
    if s.steady_perf is not None:
        return s
    return dataclasses.replace(s, last_iterations=last_iterations.last_iterations(
        annotated.times[key], annotated.annotations[key], annotated.classifier.steady, confidence))


def summarise_key(machine: str, key: str, times: list[list[float]], states: list[str], annotation: KeyAnnotation,
                  delta: str, settings: SummarySettings) -> KeyOutcome:
    """One key's summary, bootstrap done (``pipeline.analyse`` runs it in the key's annotate worker)."""
    notes: list[str] = []
    planned = _key_plan(machine, key, times, states, annotation, delta, notes.append)
    if planned is None:
        return KeyOutcome(None, notes)
    plan, boot = planned
    return KeyOutcome(_with_perf(plan, _bootstrap_task((boot, settings, f"{machine}/{key}"))), notes)


def summarise_annotated(machines: dict[str, AnnotatedResults], settings: SummarySettings, *, jobs: int = 1,
                        progress: bool = False, warn: WarningSink = stderr_warning) -> Summary:
    """Every machine's key summaries (machines and keys sorted); keys the annotate workers already
    summarised (``AnnotatedResults.summaries``) are taken as they are, the rest bootstrapped here."""
    keys: dict[str, dict[str, KeySummary]] = {}
    failed: dict[str, dict[str, list[tuple[int, str]]]] = {}
    plans: list[tuple[str, str, KeySummary, list | None, bool]] = []  # ..., bootstrap input, already done
    for machine in sorted(machines):
        annotated = machines[machine]
        keys[machine] = {}
        for key in sorted(annotated.times):
            without_data = execution_states.failed(annotated.states[key])
            if without_data:
                failed.setdefault(machine, {})[key] = without_data
            ready = annotated.summaries.get(key)
            if ready is not None:
                for note in ready.notes:
                    warn(note)
                if ready.summary is not None:
                    plans.append((machine, key, ready.summary, None, True))
                continue
            planned = _key_plan(machine, key, annotated.times[key], annotated.states[key],
                                annotated.annotations[key], annotated.classifier.delta, warn)
            if planned is not None:
                plans.append((machine, key, *planned, False))
    # Only keys with something to bootstrap go to the workers (none at all: no workers are started).
    tasks = [(boot, settings, f"{m}/{k}") for m, k, _, boot, done in plans if not done and boot is not None]
    if progress:
        with Progress("bootstrap", len(tasks), force=True) as bar:
            computed = iter(run_parallel(_bootstrap_task, tasks, jobs, bar))
    else:
        computed = iter(run_parallel(_bootstrap_task, tasks, jobs, None))
    for machine, key, plan, boot, done in plans:
        keys[machine][key] = _with_last(plan if done or boot is None else _with_perf(plan, next(computed)),
                                        machines[machine], key, settings.confidence)
    return Summary(settings, keys, failed, tuple(sorted({m.classifier.delta for m in machines.values()})))


def summarise(
    annotated_by_machine: dict[str, dict],
    resamples: int = bootstrap.RESAMPLES_HIGH,
    seed: int | None = bootstrap.DEFAULT_SEED,
    *,
    confidence: str = bootstrap.CONFIDENCE_LEVEL,
    jobs: int = 1,
    progress: bool = False,
    warn: WarningSink = stderr_warning,
) -> dict:
    """warmup_stats' summary dict from ``{machine: annotated results}`` (dicts, as read or written).

    A single annotated results dict (with ``wallclock_times`` at the top) is
    accepted too; its machine comes from ``audit['uname']``.

    ``resamples`` is the bootstrap size B (100000 high quality, 10000 low);
    ``seed`` makes the bootstrap reproducible (default
    ``bootstrap.DEFAULT_SEED``; None: fresh entropy, like warmup_stats). ``jobs`` > 1 bootstraps
    benchmarks in forked workers.
    """
    if "wallclock_times" in annotated_by_machine:  # one machine's results given directly
        annotated_by_machine = {machine_name(annotated_by_machine): annotated_by_machine}
    machines = {}
    for machine in sorted(annotated_by_machine):
        results = annotated_by_machine[machine]
        if not annotated_results.is_annotated(results):
            raise AnalysisError(f"results for machine {machine!r} are not annotated; run annotate first")
        # The recorded states when they fit the executions (analysis.inputs
        # adds them), else what pexec_flags and the times say.
        states = execution_states.from_flags(results, machine, warn)
        machines[machine] = annotated_results.read_annotations(results, states)
    settings = SummarySettings(resamples, seed, confidence)
    return summary_json.summary_document(
        summarise_annotated(machines, settings, jobs=jobs, progress=progress, warn=warn))
