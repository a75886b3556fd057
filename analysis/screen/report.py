"""One screening analysis of a table, as the plain dict the JSON, text and
HTML outputs all render (fields in ``analysis.screen.command``'s docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from analysis.errors import AnalysisError
from analysis.screen import anova, block_plots, effects, material, split_plot, t_intervals
from analysis.screen.bca import BcaError
from analysis.screen.replication import Replication, bca_intervals, default_resolution

if TYPE_CHECKING:
    import numpy as np

    from analysis.screen.table import ScreenTable


@dataclass(frozen=True)
class ScreenOptions:
    confidence: float = 0.95
    replication: Replication = Replication()
    adaptive: bool = True
    exclusions: Sequence[str] = field(default_factory=tuple)  # "FACTOR=LEVEL,..." each
    material_n: int = material.DEFAULT_SAMPLE_SIZE
    # "auto" (t for effects; for means t below t_intervals.BCA_MIN_SAMPLES, else BCa), "t", "bca"
    interval: str = "auto"


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
    rules = [effects.parse_exclusion(text, table.factors, table.source, table.level_names)
             for text in options.exclusions]
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


def _interval_methods(options: ScreenOptions, found: list[effects.Treatment]) -> dict[str, dict[str, str]]:
    """{"means" | "effects": {"method": "BCa" or "t", "reason"}} (bench/bench_coverage.py's figures)."""
    if options.interval != "auto":
        method = "BCa" if options.interval == "bca" else "t"
        why = f"asked for (--interval {options.interval})"
        return {"means": {"method": method, "reason": why}, "effects": {"method": method, "reason": why}}
    effects_why = ("t on the within-batch residual covers at every sample size measured, normal and skewed; "
                   "BCa does not on skewed data even at 100 samples; --interval bca forces BCa")
    smallest = min(t.values.shape[0] for t in found)
    if smallest >= t_intervals.BCA_MIN_SAMPLES:
        means = ("BCa", f"every treatment holds {t_intervals.BCA_MIN_SAMPLES} or more samples (TN 1855's method)")
    else:
        means = ("t", f"the smallest treatment holds {smallest} sample(s), under {t_intervals.BCA_MIN_SAMPLES}, "
                      "where BCa covers less than it claims; --interval bca forces BCa")
    return {"means": dict(zip(("method", "reason"), means)), "effects": {"method": "t", "reason": effects_why}}


def _bca(table: ScreenTable, found: list[effects.Treatment], rows: np.ndarray, options: ScreenOptions):
    samples = [t.values for t in found]
    names = [f"{table.metric}|{','.join(map(str, t.levels))}" for t in found]
    resolution = options.replication.resolution
    if options.adaptive and resolution is None:
        resolution = default_resolution(samples)
    replication = Replication(options.replication.batch, options.replication.limit,
                              resolution if options.adaptive else None, options.replication.seed)
    try:
        return replication, bca_intervals(samples, names, rows, options.confidence, replication)
    except BcaError as exc:
        raise AnalysisError(f"{table.source}: {exc}") from None


def _entry(estimate: float, test: t_intervals.StratumTest, method: str, stratum: str) -> dict:
    return {"effect": estimate, "ci": None if test.low is None else [test.low, test.high], "p": test.p,
            "df": test.dof, "method": None if test.low is None else method, "stratum": stratum, "why": test.why}


def _analyse_treatments(table: ScreenTable, found: list[effects.Treatment], options: ScreenOptions) -> dict:
    import numpy as np

    found_effects, notes = effects.effects(table.factors, found)
    sets = effects.alias_sets(found_effects)
    single = sum(1 for t in found if t.values.shape[0] < 2)
    if single:
        notes.append(f"{single} treatment(s) hold one sample: nothing shows their spread, so their intervals "
                     "are missing (t) or have no width (BCa)")
    means = np.array([float(t.values.mean()) for t in found])
    notes.append("treatment-mean intervals are unreliable on skewed samples: on lognormal execution means "
                 "(sigma 1) t covers 80-90% and BCa 43-92% for a nominal 95% at 2-100 samples "
                 "(bench/bench_coverage.py); "
                 "effects, as differences, are not affected")
    methods = _interval_methods(options, found)
    plots = split_plot.whole_plots(table.factors, found, table.whole_plot)
    chosen = [members[0] for _, members in sets]
    replication, result = None, None
    if "BCa" in (methods["means"]["method"], methods["effects"]["method"]):
        rows = np.vstack([np.eye(len(found))] + [e.coefficients[None, :] for e in chosen])
        replication, result = _bca(table, found, rows, options)
    split = plots is not None and plots.dof >= 1
    variance, dof = (t_intervals.residual_variance(found) if methods["effects"]["method"] == "t" or split
                     else (math.nan, 0))
    treatments = []
    ci: list[Any] | None
    for i, t in enumerate(found):
        if methods["means"]["method"] == "BCa":
            assert result is not None     # computed above whenever a method is BCa
            iv = result.intervals[i]
            ci, cover = [iv.low, iv.high], "BCa"
        else:
            if split and dof >= 1:
                assert plots is not None     # split: there are whole plots
                test = split_plot.mean_test(t, plots, variance, dof, options.confidence)
            else:
                test = t_intervals.mean_test(t, options.confidence)
            ci, cover = (None if test.low is None else [test.low, test.high]), "t"
        treatments.append({"levels": _levels(table, t.levels), "n": int(t.values.shape[0]), "mean": float(means[i]),
                           "ci": ci, "method": cover})
    within = "within batches" if plots is not None else "between samples"
    main: dict[str, dict[str, dict]] = {f: {} for f in table.factors}
    interactions: dict[str, dict] = {}
    named: dict[str, float] = {}
    for k, (name, members) in enumerate(sets):
        e = members[0]
        estimate = float(e.coefficients @ means)
        if plots is not None and split_plot.is_whole_plot_effect(e.coefficients, found, plots):
            entry = _entry(estimate, split_plot.whole_plot_test(estimate, e.coefficients, found, plots,
                                                                options.confidence), "t", "between batches")
        elif methods["effects"]["method"] == "BCa":
            assert result is not None     # computed above whenever a method is BCa
            iv = result.intervals[len(found) + k]
            entry = {"effect": estimate, "ci": [iv.low, iv.high], "p": None, "df": None, "method": "BCa",
                     "stratum": within, "why": None}
        else:
            entry = _entry(estimate, t_intervals.contrast_test(estimate, e.coefficients, found, variance, dof,
                                                               options.confidence), "t", within)
        entry["name"] = name
        entry["aliases"] = [m.name for m in members[1:]]
        if e.kind == "main":
            main[e.factors[0]][str(e.level)] = entry
        else:
            interactions[e.name] = entry
        named[name] = estimate
    all_two_level = all({t.levels[j] for t in found} == {0, 1} for j in range(len(table.factors)))
    seed = options.replication.seed
    return {
        "factors": {f: [table.level_name(f, lvl) for lvl in sorted({t.levels[j] for t in found})]
                    for j, f in enumerate(table.factors)},
        "samples": int(sum(t.values.shape[0] for t in found)),
        "confidence": options.confidence,
        "intervals": methods,
        "seed": seed,
        "resamples": 0 if result is None else result.resamples,
        "batches": 0 if result is None else result.batches,
        "resolution": None if replication is None else replication.resolution,
        "monte_carlo_error": None if result is None else result.monte_carlo_error,
        "treatments": treatments,
        "main_effects": main,
        "interactions": interactions,
        "aliases": [name for name, members in sets if len(members) > 1],
        "whole_plot": None if plots is None else {
            "factors": list(plots.names), "batches": len(plots.batch_means), "combinations": plots.cells,
            "dof": plots.dof, "why": plots.untestable_reason() if plots.dof < 1 else None},
        "block_plots": block_plots.block_plots(table.factors, found, () if plots is None else plots.names),
        "anova": anova.anova(table.factors, found, plots),
        # one point per alias set: the independent contrasts only
        "half_normal": effects.half_normal(list(named), list(named.values())) if all_two_level else None,
        "material_significance": material.material_significance(found, named, options.material_n,
                                                                options.confidence, seed),
        "notes": notes,
    }
