"""`coldrun-analyze screen --table`: the toy effects and block-plot chance of
methods.md §3.7, interactions, the abridged re-analysis, ANOVA, the half-normal
plot, material significance, the text/HTML reports and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.cli import main

# methods.md §3.7: treatment means in Table-3 order (os slowest, prf fastest).
TOY_MEANS = [7.40, 7.62, 7.55, 7.43, 7.66, 7.58, 7.45, 7.70, 7.60, 7.49, 7.73, 7.64]
# Deviations summing to 0, so each treatment's mean is exactly its toy mean.
SPREAD = (-0.02, -0.01, 0.01, 0.02)


def toy_rows(means=TOY_MEANS, spread=SPREAD):
    rows, i = [], 0
    for os_ in range(2):
        for fp in range(2):
            for prf in range(3):
                rows += [(os_, fp, prf, means[i] + d) for d in spread]
                i += 1
    return rows


def write_csv(tmp_path, rows, header="os,fp,prf,response", name="t.csv") -> str:
    path = tmp_path / name
    path.write_text(header + "\n" + "".join(",".join(str(v) for v in r) + "\n" for r in rows))
    return str(path)


def screen_json(capsys, *argv) -> dict:
    assert main(["screen", *argv, "--json", "--fixed", "--resamples", "5000"]) == 0
    return json.loads(capsys.readouterr().out)


def test_toy_effects_and_block_plot_chance(tmp_path, capsys):
    doc = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows()))
    assert [t["mean"] for t in doc["treatments"]] == pytest.approx(TOY_MEANS, abs=1e-12)
    assert [list(t["levels"].values()) for t in doc["treatments"]][:4] == [[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0]]
    assert all(t["n"] == 4 for t in doc["treatments"])
    main_effects = doc["main_effects"]
    assert main_effects["os"]["1"]["effect"] == pytest.approx(0.0616667, abs=1e-7)
    assert main_effects["fp"]["1"]["effect"] == pytest.approx(0.0350000, abs=1e-7)
    assert main_effects["prf"]["1"]["effect"] == pytest.approx(0.2350000, abs=1e-7)
    assert main_effects["prf"]["2"]["effect"] == pytest.approx(0.1500000, abs=1e-7)
    assert "0" not in main_effects["os"]
    assert list(doc["interactions"]) == ["os:fp"]  # prf has 3 levels
    assert doc["interactions"]["os:fp"]["effect"] == pytest.approx(0.0016667, abs=1e-7)
    fp = doc["block_plots"]["fp"]
    assert fp["complete_boxes"] == 6 and fp["consistent"] and fp["ordering"] == [0, 1]
    assert fp["chance"] == pytest.approx(0.03125)
    for entry in [main_effects["os"]["1"], main_effects["prf"]["2"], doc["interactions"]["os:fp"]]:
        assert entry["ci"][0] < entry["effect"] < entry["ci"][1]
    for t in doc["treatments"]:
        assert t["ci"][0] <= t["mean"] <= t["ci"][1]


def test_block_plot_inconsistent_ordering_and_three_levels(tmp_path, capsys):
    means = list(TOY_MEANS)
    means[3] = 7.35  # os=0, fp=1, prf=0 now below fp=0 in that box
    doc = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows(means)))
    assert not doc["block_plots"]["fp"]["consistent"] and doc["block_plots"]["fp"]["ordering"] is None
    prf = doc["block_plots"]["prf"]
    assert prf["complete_boxes"] == 4 and prf["ordering"] == [0, 2, 1]
    assert prf["chance"] == pytest.approx(1 / 6 ** 3)


def test_interaction_is_half_the_difference_of_simple_effects(tmp_path, capsys):
    cells = {(0, 0): 1.0, (0, 1): 3.0, (1, 0): 2.0, (1, 1): 7.0}
    rows = [(a, b, cells[(a, b)] + d) for (a, b) in cells for d in SPREAD]
    doc = screen_json(capsys, "--table", write_csv(tmp_path, rows, "a,b,response"))
    assert doc["interactions"]["a:b"]["effect"] == pytest.approx(((7 - 2) - (3 - 1)) / 2)
    assert doc["main_effects"]["a"]["1"]["effect"] == pytest.approx((2 + 7) / 2 - (1 + 3) / 2)
    names = [p["effect"] for p in doc["half_normal"]]
    assert names == ["a:b", "a=1", "b=1"]  # |1.5| < |2.5| < |3.5|
    assert [p["quantile"] for p in doc["half_normal"]] == sorted(p["quantile"] for p in doc["half_normal"])


def test_abridged_reanalysis_without_excluded_treatments(tmp_path, capsys):
    doc = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows()), "--exclude", "fp=0,prf=2")
    abridged = doc["abridged"]
    assert abridged["excluded"] == ["fp=0,prf=2"]
    assert len(abridged["treatments"]) == 10 and len(doc["treatments"]) == 12
    # fp's block plot loses the two boxes at prf=2: the exclusion stays local.
    assert abridged["block_plots"]["fp"]["complete_boxes"] == 4
    assert abridged["block_plots"]["fp"]["chance"] == pytest.approx(1 / 8)
    assert abridged["main_effects"]["prf"]["2"]["effect"] == pytest.approx((7.58 + 7.64) / 2 - np.mean(TOY_MEANS[0::3]))
    assert abridged["anova"]["balanced"] is False and "not a full factorial" in abridged["anova"]["reason"]
    assert doc["anova"]["balanced"] is True


def test_anova_matches_the_toy_sums_of_squares(tmp_path, capsys):
    doc = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows()))
    terms = doc["anova"]["terms"]
    grand = np.mean(TOY_MEANS)
    os_means = [np.mean(TOY_MEANS[:6]), np.mean(TOY_MEANS[6:])]
    assert terms["os"]["sum_sq"] == pytest.approx(24 * sum((m - grand) ** 2 for m in os_means), rel=1e-9)
    assert terms["residual"]["df"] == 48 - 12 + 2  # no 3-factor term in the model
    assert terms["prf"]["p"] < 1e-10 and terms["os:fp"]["p"] > 0.5


def test_material_significance_uses_the_t_width_at_n(tmp_path, capsys):
    from scipy.stats import t

    doc = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows()), "--material-n", "10")
    material = doc["material_significance"]
    sd = np.sqrt(sum(d * d for d in SPREAD) / 3)
    assert material["pooled_sd"] == pytest.approx(sd)
    assert material["ci_width"] == pytest.approx(2 * t.ppf(0.975, 9) * sd / np.sqrt(10))
    assert material["effects"]["prf=1"]["material"] and not material["effects"]["os:fp"]["material"]
    assert material["max_effect"] == pytest.approx(0.235)


def test_same_seed_same_numbers_different_path(tmp_path, capsys):
    a = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows(), name="a.csv"), "--interval", "bca")
    b = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows(), name="b.csv"), "--interval", "bca")
    c = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows(), name="c.csv"), "--seed", "9",
                    "--interval", "bca")
    assert a["main_effects"] == b["main_effects"]
    assert a["main_effects"] != c["main_effects"]


def test_text_and_html_reports(tmp_path, capsys):
    path = write_csv(tmp_path, toy_rows())
    assert main(["screen", "--table", path, "--fixed", "--resamples", "2000"]) == 0
    out = capsys.readouterr().out
    assert "os:fp" in out and "0.03125" in out and "ANOVA" in out
    html = tmp_path / "r.html"
    assert main(["screen", "--table", path, "--fixed", "--resamples", "2000", "--format", "html",
                 "-o", str(html)]) == 0
    page = html.read_text()
    assert page.count("data:image/png;base64,") == 3  # block, main effects, interactions (prf: no half-normal)
    assert "Block plots" in page and "<table>" in page


@pytest.mark.parametrize("content, expected", [
    ("", "empty file"),
    ("os,fp,value\n0,1,2.0\n", "no column 'response'"),
    ("response\n1.0\n", "no factor columns"),
    ("os,response\n0,1.0\n0.5,2.0\n", "line 3: level '0.5' of factor 'os' is not a whole number"),
    ("os,response\n0,1.0\n-1,2.0\n", "line 3: level -1 of factor 'os' is negative"),
    ("os,response\n0,1.0\n0,2.0\n", "factor 'os' has one level (0)"),
    ("os,response\n1,1.0\n2,2.0\n", "factor 'os' has no level 0"),
    ("os,response\n0,1.0\n1,x\n", "line 3: response 'x' is not a number"),
    ("os,response\n0,1.0\n\n1,x\n", "line 4: response 'x' is not a number"),   # blank rows keep their number
    ("os,response\n0,1.0\n1,inf\n", "line 3: response 'inf' is not a finite number"),
    ("os,response\n0,1.0\n1\n", "line 3: 1 column(s); the header has 2"),
    ("os,os,response\n0,0,1.0\n", "column names must be distinct"),
    ("os,response\n", "no samples"),
])
def test_bad_tables_are_one_line_exit_2(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["screen", "--table", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and str(path) in err


@pytest.mark.parametrize("rule, expected", [
    ("cpu=1", "unknown factor 'cpu'"),
    ("os", "expected FACTOR=LEVEL"),
    ("os=x", "level 'x' is not a whole number"),
    ("os=0", None),  # leaves os with one level: the abridged analysis has no os effect
])
def test_exclusions(tmp_path, capsys, rule, expected):
    code = main(["screen", "--table", write_csv(tmp_path, toy_rows()), "--exclude", rule, "--json",
                 "--fixed", "--resamples", "1000"])
    captured = capsys.readouterr()
    if expected is None:
        assert code == 0
        abridged = json.loads(captured.out)["abridged"]
        assert abridged["main_effects"]["os"] == {} and len(abridged["treatments"]) == 6
    else:
        assert code == 2 and expected in captured.err


def test_excluding_everything_is_an_error(tmp_path, capsys):
    rows = [(a, 1.0 + a + d) for a in (0, 1) for d in SPREAD]
    path = write_csv(tmp_path, rows, "a,response")
    assert main(["screen", "--table", path, "--exclude", "a=0", "--exclude", "a=1"]) == 2
    assert "the exclusions remove every treatment" in capsys.readouterr().err


def test_table_and_results_are_exclusive(tmp_path, capsys):
    assert main(["screen"]) == 2
    assert "give either RESULTS" in capsys.readouterr().err


def test_coverage_by_subsampling(tmp_path, capsys):
    rng = np.random.default_rng(12)
    rows = [(a, 1.0 + 0.1 * a + v) for a in (0, 1) for v in rng.normal(0, 0.05, 2000 if a == 0 else 100)]
    doc = screen_json(capsys, "--table", write_csv(tmp_path, rows, "a,response"), "--material-n", "20")
    cov = doc["material_significance"]["coverage"]
    assert cov["treatment"] == [0] and cov["reason"] is None and cov["subsamples"] == 1000
    assert 0.92 <= cov["t_coverage"] <= 0.98
    assert 0.85 <= cov["bca_coverage"] <= 0.98
    small = screen_json(capsys, "--table", write_csv(tmp_path, toy_rows(), name="toy.csv"))
    assert small["material_significance"]["coverage"]["t_coverage"] is None
    assert "fewer than 2 x 40" in small["material_significance"]["coverage"]["reason"]
