"""Work spread over forked worker processes, results in task order."""

from __future__ import annotations

import gc
from typing import Any, Callable

from analysis.progress import Progress


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
