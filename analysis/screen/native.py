"""A native export of a screening experiment -> one per-sample table per benchmark.

The bundle carries, at the top level, ``"screening": {"factors": {name:
[level, ...]}, "design": str, "seed": int}`` and, in each execution slot,
``"screening": {"treatment": int, "levels": {name: level}, "batch": int,
"replicate": int}`` with the levels as read back from the machine. A level
is coded by its index in the factor's list (so the first level is the
reference, level 0); the factors keep the bundle's order.

Samples: by default one per completed execution, the mean of its kept
iterations (executions are the independent units: each is its own boot);
``per_iteration`` makes every kept iteration a sample, which is only sound
when the boot-dependency section shows no between-boot variance. Kept
iterations: ``analysis.screen.executions``. The response is the wall-clock
time per iteration, or (``metric``) a counter summed over the cores; an
execution without that counter is left out and noted. Responses are grouped by the
key's benchmark (a variant or runner factor changes the rest of the key).
A treatment with any execution whose record carries post-check ``flags``
(kernel log, throttling, ...) is left out of the ``abridged`` re-analysis,
with any ``--exclude``d ones. Boot dependency is reported per benchmark and treatment (within a treatment
every execution ran the same way, so their spread is the boots').

Split plot: each execution's ``batch`` is its whole plot, and the bundle's
``screening.reboot_factors`` are the whole-plot factors (older bundles: the
factors that keep one level within every batch), tested against
batch-to-batch variation (``analysis.screen.split_plot``).  The boot check's
executions (``screening.boot_check_batch``) are never pooled into the
treatments: they are TN 1855's boot-dependency check, reported on their own
(``boot_check``: per benchmark and level, the between-boot share, its CI and
the F-test's p-value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts.keys import Key
from analysis.errors import AnalysisError, stderr_warning
from analysis.execution_states import execution_number
from analysis.screen.report import ScreenOptions, analyse, finite

if TYPE_CHECKING:
    import numpy as np


def _design(bundle: Any, path: str) -> dict[str, list[str]]:
    screening = bundle.get("screening") if isinstance(bundle, dict) else None
    if not isinstance(screening, dict):
        raise AnalysisError(f"{path}: not a screening experiment (no top-level 'screening' object in a coldrun "
                            "native export); use 'coldrun-analyze table' for other results")
    factors = screening.get("factors")
    if not isinstance(factors, dict) or not factors or not all(
            isinstance(levels, list) and len(levels) >= 2 and all(isinstance(lv, str) for lv in levels)
            for levels in factors.values()):
        raise AnalysisError(f"{path}: screening.factors must map each factor to a list of at least two level names")
    return factors


def _levels(entry: dict, factors: dict[str, list[str]], where: str) -> tuple[int, ...]:
    screening = entry.get("screening")
    levels = screening.get("levels") if isinstance(screening, dict) else None
    if not isinstance(levels, dict):
        raise AnalysisError(f"{where}: no 'screening.levels' in a completed execution of a screening experiment")
    unknown = sorted(set(levels) - set(factors))
    if unknown:
        raise AnalysisError(f"{where}: screening.levels names unknown factor {unknown[0]!r} "
                            f"(factors: {', '.join(factors)})")
    out = []
    for name, names in factors.items():
        if name not in levels:
            raise AnalysisError(f"{where}: screening.levels lacks factor {name!r}")
        if levels[name] not in names:
            raise AnalysisError(f"{where}: screening.levels.{name} is {levels[name]!r}, not one of {names}")
        out.append(names.index(levels[name]))
    return tuple(out)


@dataclass
class _Collected:
    """Kept iterations per benchmark and treatment, and what was left out."""
    cells: dict[str, dict[tuple[int, ...], list[np.ndarray]]] = field(default_factory=dict)
    batches: dict[str, dict[tuple[int, ...], list[str]]] = field(default_factory=dict)   # each cell's batch ids
    boot_check: dict[str, dict[tuple[int, ...], list[np.ndarray]]] = field(default_factory=dict)
    flagged: dict[str, set[tuple[int, ...]]] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# --metric: the response, per in-process iteration. Counters are summed over cores.
METRICS = {"wallclock": "wallclock_times", "core-cycles": "core_cycle_counts", "aperf": "aperf_counts",
           "mperf": "mperf_counts"}


def _series(results: dict, metric: str, key: Any, pexec: Any) -> list[float]:
    """One execution's response per iteration ([] when it has none)."""
    executions = results.get(METRICS[metric], {}).get(key, [])
    if not isinstance(pexec, int) or not 0 <= pexec < len(executions) or not executions[pexec]:
        return []
    if metric == "wallclock":
        return executions[pexec]
    per_core = executions[pexec]
    return [float(sum(values)) for values in zip(*per_core)]


def _collect(bundle: dict, factors: dict[str, list[str]], results: dict, metric: str, path: str,
             steady_state: bool) -> _Collected:
    from analysis.screen.executions import kept_iterations

    out = _Collected()
    check_batch = bundle["screening"].get("boot_check_batch")
    for i, entry in enumerate(bundle["executions"]):
        if not isinstance(entry, dict):
            continue
        key: Any = entry.get("key")
        pexec: Any = entry.get("pexec")     # the loader checked the record
        bench = Key.parse(str(key)).benchmark
        if entry.get("state") != "completed":
            # A failed execution leaves its treatment short: say so, not why (the loader did).
            screening = entry.get("screening")
            read = screening.get("levels") if isinstance(screening, dict) else None
            label = f"{bench} " + (",".join(f"{f}={v}" for f, v in read.items()) if isinstance(read, dict) else "?")
            out.missing[label] = out.missing.get(label, 0) + 1
            continue
        times = _series(results, metric, key, pexec)
        if not times:
            if metric != "wallclock" and _series(results, "wallclock", key, pexec):
                out.notes.append(f"{key} execution {pexec} left out: no {metric} counts")
            continue  # no wall-clock times: dropped by the loader, which said why
        levels = _levels(entry, factors, f"{path}: executions[{i}] ({key} {execution_number(pexec)})")
        if entry.get("flags"):
            out.flagged.setdefault(bench, set()).add(levels)
        kept = kept_iterations(times, steady_state)
        if kept.values is None:
            out.notes.append(f"{key} execution {pexec} left out: {kept.note}")
            continue
        batch = entry["screening"].get("batch")
        if check_batch is not None and batch == check_batch:
            out.boot_check.setdefault(bench, {}).setdefault(levels, []).append(kept.values)
            continue
        out.cells.setdefault(bench, {}).setdefault(levels, []).append(kept.values)
        out.batches.setdefault(bench, {}).setdefault(levels, []).append(str(batch))
    out.notes += [f"{name}: {count} execution(s) without data (not completed)"
                  for name, count in sorted(out.missing.items())]
    return out


def screen_results(path: str, options: ScreenOptions, *, per_iteration: bool = False,
                   steady_state: bool = True, metric: str = "wallclock", bundle: dict | None = None) -> dict:
    """The screening analysis of a native export (``bundle``: the file's document when the caller read it
    already, and said its loader warnings)."""
    import numpy as np

    from analysis.inputs import NATIVE_FORMAT, read_document, results_from_document
    from analysis.screen.boots import boot_dependency, warning_text
    from analysis.screen.table import build

    warn = stderr_warning if bundle is None else (lambda message: None)
    bundle = read_document(Path(path)) if bundle is None else bundle
    if not isinstance(bundle, dict) or bundle.get("format") != NATIVE_FORMAT:
        raise AnalysisError(f"{path}: screening needs a coldrun native export (coldrun export --format native)")
    factors = _design(bundle, path)
    reboot_factors = bundle["screening"].get("reboot_factors")   # None (older bundles): from the batches
    collected = _collect(bundle, factors, results_from_document(bundle, Path(path), warn), metric, path, steady_state)
    if not collected.cells:
        raise AnalysisError(f"{path}: no completed execution of the screening experiment has data to analyse")
    responses: dict[str, dict] = {}
    boots: dict[str, dict] = {}
    warnings: list[str] = []
    names = list(factors)
    for bench, by_treatment in sorted(collected.cells.items()):
        rows: list[np.ndarray] = []
        response: list[np.ndarray] = []
        sample_batches: list[str] = []
        for levels, groups in sorted(by_treatment.items()):
            samples = np.concatenate(groups) if per_iteration else np.array([float(g.mean()) for g in groups])
            rows.append(np.tile(np.array(levels, dtype=np.int64), (samples.shape[0], 1)))
            response.append(samples)
            for g, batch in zip(groups, collected.batches[bench][levels]):
                sample_batches += [batch] * (g.shape[0] if per_iteration else 1)
            name = f"{bench} " + ",".join(f"{f}={factors[f][lv]}" for f, lv in zip(names, levels))
            found = boot_dependency(groups, options.confidence)
            boots[name] = found
            if found["more_executions_needed"]:
                warnings.append(warning_text(name, found))
        table = build(f"{path} ({bench})", names, np.vstack(rows), np.concatenate(response), level_names=factors,
                      metric=bench, batches=sample_batches, whole_plot=reboot_factors)
        responses[bench] = analyse(table, options, flagged=sorted(collected.flagged.get(bench, ())))
    screening = bundle["screening"]
    return finite({"source": str(path), "design": screening.get("design"), "design_seed": screening.get("seed"),
                   "metric": metric, "samples_are": "iterations" if per_iteration else "executions",
                   "steady_state": steady_state, "responses": responses,
                   "boots": {"confidence": options.confidence, "groups": boots, "warnings": warnings},
                   "boot_check": boot_check_report(collected.boot_check, factors, options.confidence),
                   "design_aliases": screening.get("aliases"),
                   "notes": collected.notes})


def boot_check_report(runs: dict[str, dict[tuple[int, ...], list[np.ndarray]]], factors: dict[str, list[str]],
                      confidence: float) -> dict | None:
    """TN 1855's boot-dependency check: per benchmark and level, do the boots' means differ by more than their
    iterations' spread explains?  None when the experiment ran no boot check."""
    from analysis.screen.boots import boot_dependency

    if not runs:
        return None
    names = list(factors)
    groups: dict[str, dict] = {}
    for bench, by_levels in sorted(runs.items()):
        for levels, boots in sorted(by_levels.items()):
            found = boot_dependency(boots, confidence)
            found["boot_dependent"] = None if found["p"] is None else found["p"] < 1.0 - confidence
            groups[f"{bench} " + ",".join(f"{f}={factors[f][lv]}" for f, lv in zip(names, levels))] = found
    return {"confidence": confidence, "groups": groups}
