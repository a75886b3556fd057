"""One screening analysis of a table, as the plain dict the JSON, text and
HTML outputs all render (fields in ``analysis.screen.command``'s docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from analysis.errors import AnalysisError
from analysis.screen import anova, block_plots, effects, material
from analysis.screen.bca import BcaError
from analysis.screen.replication import Replication, bca_intervals, default_resolution

if TYPE_CHECKING:
    from analysis.screen.table import ScreenTable


@dataclass(frozen=True)
class ScreenOptions:
    confidence: float = 0.95
    replication: Replication = Replication()
    adaptive: bool = True
    exclusions: Sequence[str] = field(default_factory=tuple)  # "FACTOR=LEVEL,..." each
    material_n: int = material.DEFAULT_SAMPLE_SIZE


def finite(value: Any) -> Any:
    """NaN and infinities as None (JSON has neither), recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def analyse(table: ScreenTable, options: ScreenOptions, flagged: Sequence[tuple[int, ...]] = ()) -> dict:
    """The full analysis, plus ``abridged``: the same without the treatments
    ``options.exclusions`` match and the ``flagged`` ones (whose executions
    carry post-check flags), when there are any."""
    rules = [effects.parse_exclusion(text, table.factors, table.source, table.level_names) for text in options.exclusions]
    rules += [dict(enumerate(levels)) for levels in flagged]
    out = _analyse_treatments(table, effects.treatments(table), options)
    if rules:
        abridged = _analyse_treatments(table, effects.treatments(table, rules), options)
        abridged["excluded"] = list(options.exclusions) + [
            "flagged " + ",".join(f"{f}={lv}" for f, lv in zip(table.factors, levels)) for levels in flagged]
        out["abridged"] = abridged
    return finite(out)


def _levels(table: ScreenTable, levels: Sequence[int]) -> dict[str, int]:
    return dict(zip(table.factors, levels))


def _analyse_treatments(table: ScreenTable, found: list[effects.Treatment], options: ScreenOptions) -> dict:
    import numpy as np

    found_effects, notes = effects.effects(table.factors, found)
    single = sum(1 for t in found if t.values.shape[0] < 2)
    if single:
        notes.append(f"{single} treatment(s) hold one sample: a bootstrap cannot show their spread, so their "
                     "intervals have no width")
    samples = [t.values for t in found]
    names = [f"{table.metric}|{','.join(map(str, t.levels))}" for t in found]
    rows = np.vstack([np.eye(len(found))] + [e.coefficients[None, :] for e in found_effects])
    resolution = options.replication.resolution
    if options.adaptive and resolution is None:
        resolution = default_resolution(samples)
    replication = Replication(options.replication.batch, options.replication.limit,
                              resolution if options.adaptive else None, options.replication.seed)
    try:
        result = bca_intervals(samples, names, rows, options.confidence, replication)
    except BcaError as exc:
        raise AnalysisError(f"{table.source}: {exc}") from None
    intervals = result.intervals
    treatments = [{"levels": _levels(table, t.levels), "n": int(t.values.shape[0]),
                   "mean": iv.estimate, "ci": [iv.low, iv.high]}
                  for t, iv in zip(found, intervals)]
    main: dict[str, dict[str, dict]] = {f: {} for f in table.factors}
    interactions: dict[str, dict] = {}
    named: dict[str, float] = {}
    for e, iv in zip(found_effects, intervals[len(found):]):
        entry = {"effect": iv.estimate, "ci": [iv.low, iv.high]}
        if e.kind == "main":
            main[e.factors[0]][str(e.level)] = entry
        else:
            interactions[e.name] = entry
        named[e.name] = iv.estimate
    all_two_level = all({t.levels[j] for t in found} == {0, 1} for j in range(len(table.factors)))
    return {
        "factors": {f: [table.level_name(f, lvl) for lvl in sorted({t.levels[j] for t in found})]
                    for j, f in enumerate(table.factors)},
        "samples": int(sum(s.shape[0] for s in samples)),
        "confidence": options.confidence,
        "seed": replication.seed,
        "resamples": result.resamples,
        "batches": result.batches,
        "resolution": replication.resolution,
        "monte_carlo_error": result.monte_carlo_error,
        "treatments": treatments,
        "main_effects": main,
        "interactions": interactions,
        "block_plots": block_plots.block_plots(table.factors, found),
        "anova": anova.anova(table.factors, found),
        "half_normal": effects.half_normal(list(named), list(named.values())) if all_two_level else None,
        "material_significance": material.material_significance(found, named, options.material_n,
                                                                options.confidence, replication.seed),
        "notes": notes,
    }
