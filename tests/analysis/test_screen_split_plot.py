"""Screening statistics that mean what they say (issue 27): whole-plot factors tested against batches, aliases
reported once, intervals that cover at small n, block plots that cannot tell, boot-check runs kept apart.
The simulations are seeded and small (seconds); bench/bench_coverage.py runs the larger ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.cli import main
from analysis.screen import effects, split_plot, t_intervals
from analysis.screen.bca import acceleration, interval, resample_means
from analysis.screen.table import build


def screen_json(capsys, path, *argv) -> dict:
    assert main(["screen", "--table", str(path), "--json", "--fixed", "--resamples", "2000", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def split_plot_rows(rng, batches_per_level=2, replicates=3, batch_sd=1.0, boot_sd=1.0, os_effect=0.0,
                    fp_effect=0.0):
    """os needs a reboot (one level per batch), fp varies within batches; returns (rows, batches, response)."""
    rows, batch_ids, response = [], [], []
    order = [lv for _ in range(batches_per_level) for lv in (0, 1)]
    for b, os_ in enumerate(order):
        offset = rng.normal(0.0, batch_sd)
        for _ in range(replicates):
            for fp in (0, 1):
                rows.append((os_, fp))
                batch_ids.append(f"b{b}")
                response.append(10.0 + offset + os_effect * os_ + fp_effect * fp + rng.normal(0.0, boot_sd))
    return rows, batch_ids, response


def write_csv(tmp_path, rows, batches, response, name="sp.csv"):
    path = tmp_path / name
    path.write_text("os,fp,batch,response\n" + "".join(f"{r[0]},{r[1]},{b},{y!r}\n"
                                                        for r, b, y in zip(rows, batches, response)))
    return path


def os_test(rows, batches, response, confidence=0.95):
    table = build("sim", ["os", "fp"], rows, response, batches=batches)
    found = effects.treatments(table)
    plots = split_plot.whole_plots(table.factors, found, table.whole_plot)
    (main_os, *_), _ = effects.effects(table.factors, found)
    means = np.array([t.values.mean() for t in found])
    return split_plot.whole_plot_test(float(main_os.coefficients @ means), main_os.coefficients, found, plots,
                                      confidence), found, main_os


def test_whole_plot_factor_is_tested_on_batch_means_and_agrees_with_the_anova_stratum(tmp_path, capsys):
    rows, batches, response = split_plot_rows(np.random.default_rng(3), os_effect=2.0)
    doc = screen_json(capsys, write_csv(tmp_path, rows, batches, response))
    assert doc["whole_plot"] == {"factors": ["os"], "batches": 4, "combinations": 2, "dof": 2, "why": None}
    os_ = doc["main_effects"]["os"]["1"]
    assert os_["stratum"] == "between batches" and os_["df"] == 2 and os_["method"] == "t"
    # by hand: batch means, their spread within each os level, a t with 4 - 2 df
    y, b = np.array(response), np.array(batches)
    bm = {k: y[b == k].mean() for k in sorted(set(batches))}     # fp balanced in each batch: the plain mean
    levels = {k: rows[batches.index(k)][0] for k in bm}
    cell = {lv: [m for k, m in bm.items() if levels[k] == lv] for lv in (0, 1)}
    s2 = sum(np.var(v, ddof=1) * (len(v) - 1) for v in cell.values()) / 2
    effect = np.mean(cell[1]) - np.mean(cell[0])
    half = 4.302652729911275 * np.sqrt(s2 * (1 / 2 + 1 / 2))     # t(0.975, 2)
    assert os_["effect"] == pytest.approx(effect, rel=1e-12)
    assert os_["ci"] == pytest.approx([effect - half, effect + half], rel=1e-9)
    terms = doc["anova"]["terms"]
    assert terms["os"]["stratum"] == "between batches" and terms["residual (between batches)"]["df"] == 2
    assert terms["os"]["p"] == pytest.approx(os_["p"], rel=1e-9)          # F = t^2 in the batch stratum
    assert terms["fp"]["p"] == pytest.approx(doc["main_effects"]["fp"]["1"]["p"], rel=1e-9)
    assert terms["residual"]["df"] == 24 - 4 - 2                           # less one per batch, fp, os:fp
    block = doc["block_plots"]["os"]        # its boxes share the batches: shown, not judged
    assert block["consistent"] is None and block["chance"] is None and "not independent" in block["why"]
    assert doc["block_plots"]["fp"]["chance"] == 0.5


def test_one_batch_per_level_gives_no_ci_or_p_and_says_how_many_batches(tmp_path, capsys):
    rows, batches, response = split_plot_rows(np.random.default_rng(4), batches_per_level=1)
    doc = screen_json(capsys, write_csv(tmp_path, rows, batches, response))
    os_ = doc["main_effects"]["os"]["1"]
    assert os_["ci"] is None and os_["p"] is None and os_["method"] is None
    assert "completely confounded with batch-to-batch variation" in os_["why"] and "4 batches" in os_["why"]
    assert doc["anova"]["terms"]["os"]["p"] is None and doc["anova"]["terms"]["os"]["F"] is None
    assert doc["main_effects"]["fp"]["1"]["ci"] is not None            # fp is still tested within batches
    assert main(["screen", "--table", str(write_csv(tmp_path, rows, batches, response)), "--fixed",
                 "--resamples", "500"]) == 0
    assert "no CI or p-value for whole-plot effects: os ran in one batch per level combination" in \
        capsys.readouterr().out


def test_a_batch_effect_without_a_factor_effect_is_significant_in_at_most_5_percent():
    # Issue 27's done-when: batch SD = boot SD, no os effect, 2 batches per level.  The pooled test (batches
    # ignored) is what coldrun did: it rejects far more often, so this test could fail.
    rng = np.random.default_rng(27)
    trials, split_rejects, pooled_rejects = 600, 0, 0
    for _ in range(trials):
        rows, batches, response = split_plot_rows(rng, batch_sd=1.0)
        test, found, main_os = os_test(rows, batches, response)
        split_rejects += test.p < 0.05
        dof = sum(t.values.shape[0] - 1 for t in found)     # batches forgotten: the pooled within-treatment spread
        variance = sum(float(t.values.var(ddof=1)) * (t.values.shape[0] - 1) for t in found) / dof
        pooled = t_intervals.contrast_test(test.low + (test.high - test.low) / 2, main_os.coefficients, found,
                                           variance, dof, 0.95)
        pooled_rejects += pooled.p < 0.05
    assert split_rejects / trials <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / trials)      # 0.068
    assert pooled_rejects / trials > 0.2


def test_small_samples_get_t_intervals_that_cover_where_bca_does_not():
    # a 2 x 2 design with 2 samples per treatment (configs/screening.toml's executions), normal data
    rng = np.random.default_rng(5)
    trials, t_hits, bca_hits = 400, 0, 0
    levels = [(0, 0), (0, 1), (1, 0), (1, 1)]
    for i in range(trials):
        found = [effects.Treatment(lv, rng.normal(0.0, 1.0, 2)) for lv in levels]
        (effect_a, *_), _ = effects.effects(["a", "b"], found)
        means = np.array([t.values.mean() for t in found])
        estimate = float(effect_a.coefficients @ means)
        variance, dof = t_intervals.residual_variance(found)
        t_iv = t_intervals.contrast_test(estimate, effect_a.coefficients, found, variance, dof, 0.95)
        t_hits += t_iv.low <= 0.0 <= t_iv.high
        draws = sum(c * resample_means(t.values, 2000, i, f"s{j}") for j, (c, t) in
                    enumerate(zip(effect_a.coefficients, found)))
        bca = interval(draws, estimate, acceleration([t.values for t in found], effect_a.coefficients), 0.95)
        bca_hits += bca.low <= 0.0 <= bca.high
    assert 0.93 <= t_hits / trials <= 0.97
    assert bca_hits / trials < 0.9


def test_the_default_intervals_are_t_for_effects_and_t_for_means_below_100_samples(tmp_path, capsys):
    rng = np.random.default_rng(6)
    small = tmp_path / "small.csv"
    small.write_text("a,response\n" + "".join(f"{a},{rng.normal()!r}\n" for a in (0, 1) for _ in range(5)))
    doc = screen_json(capsys, small)
    assert doc["intervals"]["means"]["method"] == "t" and "under 100" in doc["intervals"]["means"]["reason"]
    assert doc["intervals"]["effects"]["method"] == "t" and doc["treatments"][0]["method"] == "t"
    assert doc["main_effects"]["a"]["1"]["method"] == "t" and doc["resamples"] == 0
    forced = screen_json(capsys, small, "--interval", "bca")
    assert forced["intervals"]["effects"]["method"] == forced["intervals"]["means"]["method"] == "BCa"
    assert forced["main_effects"]["a"]["1"]["method"] == "BCa" and forced["resamples"] == 2000
    big = tmp_path / "big.csv"
    big.write_text("a,response\n" + "".join(f"{a},{rng.normal()!r}\n" for a in (0, 1) for _ in range(100)))
    doc = screen_json(capsys, big)
    assert doc["intervals"]["means"]["method"] == "BCa" and doc["treatments"][0]["method"] == "BCa"
    assert doc["intervals"]["effects"]["method"] == "t" and doc["main_effects"]["a"]["1"]["method"] == "t"
    assert any(n.startswith("treatment-mean intervals are unreliable on skewed samples") for n in doc["notes"])


def fractional_csv(tmp_path, generators: str, names: list[str], coefficients: dict[str, float]):
    """Two samples per row of a pyDOE3 fractional design; the response adds each named word's ±1 contrast."""
    import pyDOE3

    matrix = pyDOE3.fracfact(generators)
    lines = [",".join(names) + ",response"]
    for row in matrix:
        signs = dict(zip(names, row))
        y = 10.0 + sum(c * np.prod([signs[f] for f in word.split(":")]) for word, c in coefficients.items())
        for d in (-0.01, 0.01):
            lines.append(",".join(str(int(v > 0)) for v in row) + f",{float(y + d)!r}")
    path = tmp_path / "frac.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_resolution_iv_aliases_are_reported_once_and_the_half_normal_plot_has_independent_contrasts(tmp_path,
                                                                                                      capsys):
    doc = screen_json(capsys, fractional_csv(tmp_path, "a b c abc", ["A", "B", "C", "D"], {"A:B": 0.4}))
    assert sorted(doc["aliases"]) == ["A:B = C:D", "A:C = B:D", "A:D = B:C"]
    assert sorted(doc["interactions"]) == ["A:B", "A:C", "A:D"]           # C:D, B:D, B:C not again
    ab = doc["interactions"]["A:B"]
    assert ab["name"] == "A:B = C:D" and ab["aliases"] == ["C:D"] and ab["effect"] == pytest.approx(0.8)
    assert len(doc["half_normal"]) == 7                                     # 8 runs: 7 independent contrasts
    assert {p["effect"] for p in doc["half_normal"]} >= {"A:B = C:D"}
    assert all(p["consistent"] is None for p in doc["block_plots"].values())   # no complete box repeats
    assert main(["screen", "--table", str(tmp_path / "frac.csv"), "--fixed", "--resamples", "500"]) == 0
    out = capsys.readouterr().out
    # the effects table and the aliases note, by the report's names of effects (issue 28)
    assert "cannot tell" in out and out.count("A × B = C × D") == 2


def test_resolution_iii_reports_a_main_effect_under_its_interaction_alias(tmp_path, capsys):
    doc = screen_json(capsys, fractional_csv(tmp_path, "a b -ab", ["A", "B", "C"], {"C": 0.2}))
    assert doc["interactions"] == {}
    c = doc["main_effects"]["C"]["1"]
    assert c["name"] == "C=1 = -A:B" and c["effect"] == pytest.approx(0.4)
    assert len(doc["half_normal"]) == 3


def test_split_plot_anova_equals_rs_aov_with_an_error_batch_stratum(capsys):
    import csv
    from pathlib import Path

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "screening" / "split_plot"
    doc = screen_json(capsys, fixture / "data.csv")
    terms = doc["anova"]["terms"]
    with open(fixture / "aov.csv") as f:
        expected = list(csv.DictReader(f))
    assert len(terms) == len(expected) == 8
    for row in expected:
        name = "residual (between batches)" if row["stratum"] == "batch" and row["term"] == "residual" else row["term"]
        got = terms[name]
        assert got["stratum"] == ("between batches" if row["stratum"] == "batch" else "within batches")
        assert got["df"] == float(row["df"])
        assert got["sum_sq"] == pytest.approx(float(row["sum_sq"]), rel=1e-9)
        if row["F"] != "NA":
            assert got["F"] == pytest.approx(float(row["F"]), rel=1e-9)
            assert got["p"] == pytest.approx(float(row["p"]), rel=1e-7)
    assert doc["whole_plot"]["dof"] == 2 and doc["main_effects"]["os"]["1"]["p"] == pytest.approx(
        float(expected[0]["p"]), rel=1e-7)


@pytest.mark.parametrize("content, expected", [
    ("os,fp,batch,response\n0,0,,1.0\n1,1,b1,2.0\n", "line 2: empty 'batch'; name each sample's batch"),
])
def test_bad_batch_columns_are_one_line(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["screen", "--table", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_a_reboot_factor_changing_within_a_batch_is_refused():
    from analysis.errors import AnalysisError

    with pytest.raises(AnalysisError, match="factor 'os' needs a reboot but changes within batch b0"):
        build("x.json", ["os", "fp"], [(0, 0), (1, 1), (0, 1), (1, 0)], [1.0, 2.0, 3.0, 4.0],
              batches=["b0", "b0", "b1", "b1"], whole_plot=["os"])


def test_treatment_means_in_a_split_plot_cover_and_are_narrower_than_their_own_batch_means():
    rng = np.random.default_rng(8)
    trials, hits, pooled_widths, own_widths = 300, 0, [], []
    for _ in range(trials):
        rows, batches, response = split_plot_rows(rng, batch_sd=1.0)
        table = build("sim", ["os", "fp"], rows, response, batches=batches)
        found = effects.treatments(table)
        plots = split_plot.whole_plots(table.factors, found, table.whole_plot)
        variance, dof = t_intervals.residual_variance(found)
        pooled = split_plot.mean_test(found[0], plots, variance, dof, 0.95)
        own = t_intervals.mean_test(found[0], 0.95)          # t over its own 2 batch means: 1 df
        hits += pooled.low <= 10.0 <= pooled.high
        pooled_widths.append(pooled.high - pooled.low)
        own_widths.append(own.high - own.low)
    assert hits / trials >= 0.95
    assert np.median(own_widths) > 2 * np.median(pooled_widths)
