"""Work spread over forked worker processes, results in task order."""

from __future__ import annotations

import gc
from typing import Any, Callable

from analysis.progress import Progress

_TICK = 0.25   # seconds between redraws of a bar while tasks run


def _in_a_thread(func, task, progress: Progress):
    """``func(task)`` in a thread while this one redraws the bar: the long parts (the changepoint search, the
    bootstrap) run in C without the GIL.  No process is forked meanwhile."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(func, task)
        while True:
            try:
                return fut.result(timeout=_TICK)
            except concurrent.futures.TimeoutError:
                progress.tick()


def run_parallel(func, tasks: list, jobs: int, progress: Progress | None, weight=lambda t: 1,
                 started: Callable[[], None] = lambda: None) -> list:
    """``func`` over ``tasks`` in ``jobs`` forked workers, results in task order.

    ``started`` is called once the workers exist: a thread it starts is not
    forked into them (a fork copies only the forking thread, not the locks it
    would need)."""
    results: list[Any] = [None] * len(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        started()
        for i, task in enumerate(tasks):
            results[i] = _in_a_thread(func, task, progress) if progress else func(task)
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
            pending = set(futures)
            while pending:     # woken now and then, so the bar follows the tasks still running
                finished, pending = concurrent.futures.wait(pending, timeout=_TICK if progress else None,
                                                            return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in finished:
                    i = futures[fut]
                    results[i] = fut.result()
                    if progress:
                        progress.advance(weight(tasks[i]))
                if progress:
                    progress.tick()
    finally:
        gc.unfreeze()
    return results
