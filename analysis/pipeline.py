"""The analysis pipeline: load results, annotate them as warmup_stats does.

Library API (used by the CLI and by the reports helper's commands):

- :func:`load_results` -- read result files (Krun, CSV, coldrun native) into
  ``{machine: krun_results_dict}``.
- :func:`annotate` -- add warmup_stats' keys to one Krun-shaped results dict:
  ``window_size``, ``all_outliers``, ``common_outliers``, ``unique_outliers``,
  ``changepoints``, ``changepoint_means``, ``changepoint_vars``,
  ``classifications`` (each ``{key: [per process execution]}``) and
  ``classifier`` ``{"delta": str, "steady": int}``.
- :func:`analyse` -- the same, typed (``analysis.key_results``), optionally with
  each key summarised in its worker as soon as it is classified.
- ``analysis.summary.summarise`` -- the summary JSON from annotated results.

warmup_stats conventions: the defaults ``window = int(0.1 * iterations)`` and
``steady = int(0.25 * iterations)`` take ``iterations`` from the first
non-empty process execution in the file's key order; outliers use threshold 1
for the common/unique split. coldrun additions: a process execution
without data (``analysis.execution_states``: errored, timed out, crashed,
invalid ...; the warning names its state) or with fewer than 4 iterations
after outlier removal (R's changepoint refuses it) gets empty
changepoints/means/vars and the classification ``None`` (JSON null), with a
warning; everything else is analysed normally. The annotated results carry
each execution's state as ``execution_states``.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from analysis import annotated_results
from analysis import changepoints as cp
from analysis import classify, execution_states, outliers, summary
from analysis.cpus import usable_cpus
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis.inputs import ANNOTATION_KEYS, machine_name, read_results  # noqa: F401 (ANNOTATION_KEYS: API)
from analysis.key_results import (AnnotatedResults, Classifier, ExecutionAnnotation, KeyAnnotation, KeyOutcome,
                                  SummarySettings)
from analysis import key_progress
from analysis.progress import Progress
from analysis.workers import run_parallel


def default_jobs() -> int:
    """Worker processes to use by default: one per CPU this process may use."""
    return usable_cpus()


def load_results(
    paths: Sequence[str | os.PathLike],
    *,
    vm: str | None = None,
    language: str | None = None,
    uname: str | None = None,
    warn: WarningSink = stderr_warning,
) -> dict[str, dict]:
    """Read result files into ``{machine: results}`` (one file per machine).

    ``vm``/``language``/``uname`` are only used for warmup_stats CSV files.
    Two files from the same machine are an error (warmup_stats summarises one
    file per machine).
    """
    by_machine: dict[str, dict] = {}
    origin: dict[str, str] = {}
    for path in paths:
        results = read_results(path, vm=vm, language=language, uname=uname, warn=warn)
        machine = machine_name(results)
        if machine in by_machine:
            raise AnalysisError(
                f"{path}: machine {machine!r} already comes from {origin[machine]}; give one results file per machine"
            )
        by_machine[machine] = results
        origin[machine] = str(path)
    return by_machine


def first_iterations(results: dict) -> int:
    """Length of the first non-empty process execution (warmup_stats' ``iterations``)."""
    for execs in results.get("wallclock_times", {}).values():
        for e in execs:
            if e:
                return len(e)
    return 0


def classifier_for(results: dict, window: int | None = None, steady: int | None = None,
                   delta: str = classify.DEFAULT_DELTA) -> Classifier:
    """The classifier settings for ``results``: warmup_stats' defaults where not given."""
    classify.parse_delta(delta)  # fail early, with a clear message
    iterations = first_iterations(results)
    window = outliers.default_window(iterations) if window is None else int(window)
    steady = classify.default_steady(iterations) if steady is None else int(steady)
    if window < 0 or steady < 0:
        raise AnalysisError("--window and --steady must not be negative")
    return Classifier(window, steady, str(delta))


@dataclass(frozen=True)
class KeyTask:
    """One benchmark key's work for a worker process."""

    key: str
    times: list[list[float]]
    states: list[str]
    classifier: Classifier
    machine: str
    summary: SummarySettings | None  # also summarise the key, in the same worker
    slot: int = -1                   # its place in the progress display (analysis.key_progress); -1: none


@dataclass(frozen=True)
class AnalysedKey:
    annotation: KeyAnnotation
    notes: list[str]  # warnings about executions left unclassified
    outcome: KeyOutcome | None  # the key's summary when the task asked for one


def annotate_key(key: str, times: list[list[float]], states: list[str], classifier: Classifier,
                 notes: list[str], slot: int = -1) -> KeyAnnotation:
    """All annotations of one benchmark key; a warning in ``notes`` for each execution left unclassified.
    ``slot``: where it says how far it is (analysis.key_progress), -1 nowhere."""
    tracker = key_progress.current() if slot >= 0 else None
    if tracker:
        tracker.phase(slot, key_progress.OUTLIERS)
    found = [outliers.find_outliers(e, classifier.window) for e in times]
    executions = []
    for i, (series, outs) in enumerate(zip(times, found)):
        if tracker:
            tracker.phase(slot, key_progress.CHANGEPOINTS, i)
        execution = f"{key} process execution {execution_states.execution_number(i)}"
        # Unclassified: not run, times the C code cannot take (pilot refuses the same ones), too short for R
        reason = execution_states.label(states[i]) if not series else cp.out_of_range(series)
        if reason is None:
            if not any(series):   # pilot refuses these; warmup_stats classifies them flat at 0 s: say so
                notes.append(f"{execution}: every iteration took 0 s (a clock too coarse for the benchmark?); "
                             "its times and steady perf of 0 s are not measurements")
            try:
                seg = cp.segment_execution(series, outs, tracker.step_counter(slot) if tracker else None)
            except cp.TooShortForChangepoints as exc:
                reason = str(exc)
        if reason is not None:
            executions.append(ExecutionAnnotation(outs, [], [], [], None))
            notes.append(f"{execution}: {reason}; not classified")
            continue
        executions.append(ExecutionAnnotation(outs, seg.changepoints, seg.means, seg.variances,
                                              classify.classify_execution(seg.changepoints, seg.means, seg.variances,
                                                                          len(series), classifier.steady,
                                                                          classifier.delta)))
    common, unique = outliers.split_common_unique(found, outliers.DEFAULT_THRESHOLD)
    return KeyAnnotation(executions, common, unique)


def _analyse_key(task: KeyTask) -> AnalysedKey:
    """Runs in a worker: the key's annotations, then (when asked) its summary, bootstrap included."""
    notes: list[str] = []
    annotation = annotate_key(task.key, task.times, task.states, task.classifier, notes, task.slot)
    tracker = key_progress.current() if task.slot >= 0 else None
    outcome = None
    if task.summary is not None:
        if tracker:
            tracker.phase(task.slot, key_progress.SUMMARY)
        outcome = summary.summarise_key(task.machine, task.key, task.times, task.states, annotation,
                                        task.classifier.delta, task.summary)
    if tracker:
        tracker.phase(task.slot, key_progress.DONE)
    return AnalysedKey(annotation, notes, outcome)


def analyse(
    results: dict,
    classifier: Classifier,
    *,
    summarise: SummarySettings | None = None,
    machine: str | None = None,
    jobs: int = 1,
    progress: bool = False,
    warn: WarningSink = stderr_warning,
    started: Callable[[], None] = lambda: None,
) -> AnnotatedResults:
    """One machine's Krun-shaped ``results`` annotated, key by key.

    With ``summarise``, each key is also summarised (bootstrapped) in its
    worker as soon as it is classified, while other keys are still being
    analysed (``AnnotatedResults.summaries``); ``machine`` names the keys in
    its warnings and bootstrap seeds (default: from the results' uname).
    ``jobs`` > 1 analyses keys in
    forked worker processes; ``progress`` draws a bar on stderr; ``started()``
    is called once the workers run.
    """
    wct = results.get("wallclock_times", {})
    # The recorded states when they fit (analysis.inputs adds them), else
    # what pexec_flags and the times say.
    states = execution_states.from_flags(results, "results", warn)
    if machine is None:
        machine = machine_name(results) if summarise is not None else ""
    tasks = [KeyTask(key, wct[key], states[key], classifier, machine, summarise, slot if progress else -1)
             for slot, key in enumerate(sorted(wct))]
    total = sum(len(t.times) for t in tasks)
    tracker = key_progress.start([t.key for t in tasks], [[len(e) for e in t.times] for t in tasks]) \
        if progress else None
    try:
        with Progress("annotate", total, force=progress, detail=tracker.running if tracker else None) \
                if progress else _NoProgress() as bar:
            done = run_parallel(_analyse_key, tasks, jobs, bar if progress else None,
                                weight=lambda t: len(t.times), started=started)
    finally:
        key_progress.stop()
    for task in tasks:
        blind = resolution_note(task.key, task.times, classifier.delta)
        if blind:
            warn(blind)
    for analysed in done:
        for note in analysed.notes:
            warn(note)
    return AnnotatedResults(
        times={t.key: t.times for t in tasks}, states=states, classifier=classifier,
        annotations={t.key: a.annotation for t, a in zip(tasks, done)},
        summaries={t.key: a.outcome for t, a in zip(tasks, done) if a.outcome is not None})


def resolution_note(key: str, times: list[list[float]], delta: str) -> str | None:
    """The warning for a key whose iterations are too short for an absolute ``delta`` (classify.resolution_warning),
    judged on the median of all its iterations; None when the delta resolves them."""
    if classify.parse_delta(delta)[0] is None:
        return None
    every = [t for execution in times for t in execution]
    if not every:
        return None
    return classify.resolution_warning(key, delta, float(np.median(np.asarray(every, dtype=np.float64))))


def annotate(
    results: dict,
    window: int | None = None,
    steady: int | None = None,
    delta: str = classify.DEFAULT_DELTA,
    *,
    jobs: int = 1,
    progress: bool = False,
    warn: WarningSink = stderr_warning,
    started: Callable[[dict], None] = lambda known: None,
) -> dict:
    """A copy of a Krun-shaped ``results`` dict with warmup_stats' annotations added.

    ``window``/``steady`` default to ``int(0.1 * iterations)`` and
    ``int(0.25 * iterations)``; ``delta`` is seconds (``"0.001"``, warmup_stats')
    or ``"N%"`` (coldrun's default ``"2%"``: classify.DEFAULT_DELTA).
    ``jobs`` > 1 analyses benchmark keys in forked worker processes; ``progress`` draws a bar on stderr.
    ``load_results``' ``{machine: results}`` with a single machine is
    accepted too (that machine's results are annotated). ``started(known)``
    is called with the copy as known before the annotations, once the workers
    run (the annotations are then added to that same copy).
    """
    results = one_machine(results)
    classifier = classifier_for(results, window, steady, delta)
    out = copy.copy(results)
    out[execution_states.STATES_KEY] = execution_states.from_flags(results, "results", warn)
    annotated = analyse(out, classifier, jobs=jobs, progress=progress, warn=warn,
                        started=lambda: started(dict(out)))
    return annotated_results.add_annotations(out, annotated)


def one_machine(results: dict) -> dict:
    """One machine's results; ``load_results``' ``{machine: results}`` with a single machine is accepted."""
    if "wallclock_times" in results:
        return results
    machines = [m for m, r in results.items() if isinstance(r, dict) and "wallclock_times" in r]
    if len(machines) != 1 or len(results) != 1:
        raise AnalysisError(
            "annotate takes one machine's results (a dict with 'wallclock_times'); "
            f"got {len(results)} entries -- annotate each machine's results separately"
        )
    return results[machines[0]]


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
