"""The analysis pipeline: load results, annotate them as warmup_stats does.

Library API (used by the CLI and by the reports helper's commands):

- :func:`load_results` -- read result files (Krun, CSV, coldrun native) into
  ``{machine: krun_results_dict}``.
- :func:`annotate` -- add warmup_stats' keys to one Krun-shaped results dict:
  ``window_size``, ``all_outliers``, ``common_outliers``, ``unique_outliers``,
  ``changepoints``, ``changepoint_means``, ``changepoint_vars``,
  ``classifications`` (each ``{key: [per process execution]}``) and
  ``classifier`` ``{"delta": str, "steady": int}``.
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
import gc
import os
from typing import Any, Callable, Sequence

from analysis import changepoints as cp
from analysis import classify, outliers
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis import execution_states
from analysis.cpus import usable_cpus
from analysis.inputs import ANNOTATION_KEYS, machine_name, read_results
from analysis.progress import Progress

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


def _annotate_key(
    key: str, executions: list[list[float]], states: list[str], window: int, steady: int, delta: str
) -> tuple[str, dict[str, list], list[str]]:
    """All annotations of one benchmark key; runs in a worker process."""
    notes: list[str] = []
    all_out = [outliers.find_outliers(e, window) for e in executions]
    cpts, means, variances, classes = [], [], [], []
    for i, (times, outs) in enumerate(zip(executions, all_out)):
        if not times:
            cpts.append([]), means.append([]), variances.append([]), classes.append(None)
            notes.append(f"{key} process execution {i}: {execution_states.label(states[i])}; not classified")
            continue
        try:
            seg = cp.segment_execution(times, outs)
        except ValueError as exc:  # too short for R, or values outside what the C code accepts
            cpts.append([]), means.append([]), variances.append([]), classes.append(None)
            notes.append(f"{key} process execution {i}: {exc}; not classified")
            continue
        cpts.append(seg.changepoints)
        means.append(seg.means)
        variances.append(seg.variances)
        classes.append(classify.classify_execution(seg.changepoints, seg.means, seg.variances, len(times), steady, delta))
    common, unique = outliers.split_common_unique(all_out, outliers.DEFAULT_THRESHOLD)
    return (
        key,
        {
            "all_outliers": all_out,
            "common_outliers": common,
            "unique_outliers": unique,
            "changepoints": cpts,
            "changepoint_means": means,
            "changepoint_vars": variances,
            "classifications": classes,
        },
        notes,
    )


# A follow-up run in the worker right after a key's annotations (picklable:
# a module-level function or a functools.partial of one), with
# (key, executions, states, annotations, classifier); its result is kept by key.
FollowUp = Callable[[str, list, list, dict, dict], Any]


def _annotate_key_star(args: tuple) -> tuple[str, dict[str, list], list[str], Any]:
    *task, then = args
    key, annotations, notes = _annotate_key(*task)
    followed = None
    if then is not None:
        key, executions, states, _window, steady, delta = task
        followed = then(key, executions, states, annotations, {"delta": delta, "steady": steady})
    return key, annotations, notes, followed


def run_parallel(func, tasks: list[tuple], jobs: int, progress: Progress | None, weight=lambda t: 1,
                 started: Callable[[], None] = lambda: None) -> list:
    """``func`` over ``tasks`` in ``jobs`` forked workers, results in task order.

    ``started`` is called once the workers exist: a thread it starts is not
    forked into them (a fork copies only the forking thread, not the locks it
    would need)."""
    results: list[Any] = [None] * len(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        started()
        for i, task in enumerate(tasks):
            results[i] = func(task)
            if progress:
                progress.advance(weight(task))
        return results
    # Here, not at the top: a single-process run (a small table) need not load them.
    import concurrent.futures
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    # Forked workers share the parent's pages until written; the cyclic GC
    # writes to every object it tracks, which would copy the whole loaded
    # data set into each worker. Frozen objects are left alone.
    gc.freeze()
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = {pool.submit(func, task): i for i, task in enumerate(tasks)}
            started()  # every worker is forked by the time all tasks are submitted
            for fut in concurrent.futures.as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                if progress:
                    progress.advance(weight(tasks[i]))
    finally:
        gc.unfreeze()
    return results


def annotate(results: dict, *args: Any, **kwargs: Any) -> dict:
    """A copy of a Krun-shaped ``results`` dict with warmup_stats' annotations added
    (:func:`annotate_then` without a follow-up; the same arguments after ``results``)."""
    return annotate_then(results, None, *args, **kwargs)[0]


def annotate_then(
    results: dict,
    then: FollowUp | None,
    window: int | None = None,
    steady: int | None = None,
    delta: str = classify.DEFAULT_DELTA,
    *,
    jobs: int = 1,
    progress: bool = False,
    warn: WarningSink = stderr_warning,
    started: Callable[[dict], None] = lambda known: None,
) -> tuple[dict, dict[str, Any]]:
    """:func:`annotate`, and ``then`` run on each key in the same worker as soon as its
    annotations are known (``summary`` bootstraps there while other keys are still
    being analysed): (annotated results, ``{key: then's result}``).

    ``window``/``steady`` default to ``int(0.1 * iterations)`` and
    ``int(0.25 * iterations)``; ``delta`` is seconds (``"0.001"``) or
    ``"N%"``. ``jobs`` > 1 analyses benchmark keys in forked worker
    processes; ``progress`` draws a bar on stderr.
    ``load_results``' ``{machine: results}`` with a single machine is
    accepted too (that machine's results are annotated). ``started(known)``
    is called with the copy as known before the annotations, once the workers run.
    """
    classify.parse_delta(delta)  # fail early, with a clear message
    if "wallclock_times" not in results:
        # load_results' {machine: results}: accepted for a single machine.
        machines = [m for m, r in results.items() if isinstance(r, dict) and "wallclock_times" in r]
        if len(machines) != 1 or len(results) != 1:
            raise AnalysisError(
                "annotate takes one machine's results (a dict with 'wallclock_times'); "
                f"got {len(results)} entries -- annotate each machine's results separately"
            )
        results = results[machines[0]]
    iterations = first_iterations(results)
    window = outliers.default_window(iterations) if window is None else int(window)
    steady = classify.default_steady(iterations) if steady is None else int(steady)
    if window < 0 or steady < 0:
        raise AnalysisError("--window and --steady must not be negative")
    out = copy.copy(results)
    wct = results.get("wallclock_times", {})
    # The recorded states when they fit (analysis.inputs adds them), else
    # what pexec_flags and the times say.
    states = out[execution_states.STATES_KEY] = execution_states.from_flags(results, "results", warn)
    tasks = [(key, wct[key], states[key], window, steady, str(delta), then) for key in sorted(wct)]
    total = sum(len(t[1]) for t in tasks)
    with Progress("annotate", total, force=progress) if progress else _NoProgress() as bar:
        done = run_parallel(_annotate_key_star, tasks, jobs, bar if progress else None, weight=lambda t: len(t[1]),
                            started=lambda: started(dict(out)))
    for name in ANNOTATION_KEYS[1:-1]:
        out[name] = {}
    followed: dict[str, Any] = {}
    for key, annotations, notes, after in done:
        for name, value in annotations.items():
            out[name][key] = value
        for note in notes:
            warn(note)
        followed[key] = after
    out["window_size"] = window
    out["classifier"] = {"delta": str(delta), "steady": steady}
    return out, followed


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def is_annotated(results: dict) -> bool:
    return all(k in results for k in ANNOTATION_KEYS)

