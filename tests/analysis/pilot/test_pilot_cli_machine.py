"""The machine interface of ``coldrun-analyze pilot`` / ``compare`` against Pilot's own numbers.

- ``--readings``: Pilot's published ``bench analyze`` output for Ferrari's 48
  values (cli/test/unit_test_analyze.sh, printed with %f: quick, strict,
  harmonic), every ``stats`` row of the golden file as ``bench analyze``
  would print it (--no-warmup-removal, each AC limit) and every optimal
  sample size; every ``edm`` row's changepoints and stable segment.
- ``--wps``: Pilot's OrdinaryLeastSquareLinearRegression cases (methods.md),
  all three variants.
- ``compare --welch``: the Yale body temperature and speed-of-light rows.
"""

from __future__ import annotations

import json

import pytest

from analysis import cli
from pilot_golden import INPUTS, close, rows

FERRARI = str(INPUTS / "ferrari48.txt")
FORK = "golden_fork.jsonl"


def machine(argv: list[str], capsys) -> dict:
    code = cli.main(argv + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def pilot_f(x: float) -> str:
    """How Pilot's CLI prints a double (printf %f)."""
    return f"{x:f}"


def test_ferrari48_quick_preset_is_bench_analyze_default(capsys):
    doc = machine(["pilot", "--readings", FERRARI, "--preset", "quick"], capsys)
    assert doc["n"] == 48 and doc["readings"] == 48
    assert pilot_f(doc["mean"]) == "1.756458"
    assert doc["q"] == 1
    assert pilot_f(doc["ci_width"]) == "0.157416"
    assert pilot_f(doc["variance"]) == "0.073474"
    # EDM needs 2 x 30 readings for a changepoint: 48 are one segment, analysed whole.
    assert doc["changepoints"] == [] and doc["stable_segment"] == [0, 48]
    assert doc["ac_limit"] == 0.8 and doc["min_samples"] == 30 and doc["warmup_removal"] == "edm"
    # quick: target 20 % of the mean; opt at q = 1, then q * max(opt, 30).
    assert close(doc["target_ci_width"], 0.2 * doc["mean"])
    assert doc["required_samples"] == max(doc["required_subsessions"], 30)


def test_ferrari48_strict_preset(capsys):
    doc = machine(["pilot", "--readings", FERRARI, "--preset", "strict"], capsys)
    assert doc["n"] == 48 and pilot_f(doc["mean"]) == "1.756458"
    assert doc["q"] == 4
    assert pilot_f(doc["ci_width"]) == "0.291571"
    assert pilot_f(doc["variance"]) == "0.052647"
    assert pilot_f(doc["autocorrelation"]) == "0.082310"
    # unit_test_statistics: optimal sample size 34 for a width of 10 % of the mean (q = 4).
    assert doc["required_subsessions"] == 34
    assert doc["required_samples"] == 4 * 200


def test_ferrari48_harmonic(capsys):
    doc = machine(["pilot", "--readings", FERRARI, "--preset", "quick", "--mean", "harmonic"], capsys)
    assert pilot_f(doc["mean"]) == "1.713913"
    assert pilot_f(doc["ci_width"]) == "0.159384"
    assert pilot_f(doc["variance"]) == "0.075323"
    assert doc["q"] == 1
    assert pilot_f(doc["autocorrelation"]) == "0.646682"
    assert doc["mean_method"] == "harmonic"


def test_defaults_are_pilots_library_defaults(capsys):
    default = machine(["pilot", "--readings", FERRARI], capsys)
    strict = machine(["pilot", "--readings", FERRARI, "--preset", "strict"], capsys)
    assert default == strict
    assert (default["ac_limit"], default["confidence"], default["min_samples"]) == (0.1, 0.95, 200)


def test_options_override_the_preset(capsys):
    doc = machine(["pilot", "--readings", FERRARI, "--preset", "quick", "--ac-limit", "0.1",
                   "--min-samples", "7", "--ci-percent", "2%"], capsys)
    assert doc["q"] == 4 and doc["min_samples"] == 7
    assert doc["required_subsessions"] == 827  # golden: width 0.02 x mean, AC 0.1
    assert doc["required_samples"] == 4 * 827
    forced = machine(["pilot", "--readings", FERRARI, "--subsession-size", "2"], capsys)
    assert forced["q"] == 2 and close(forced["variance"], 0.06308799818840581)


def test_absolute_width_alone_replaces_the_percentage(capsys):
    doc = machine(["pilot", "--readings", FERRARI, "--ci-width", "0.5"], capsys)
    assert doc["target_ci_width"] == 0.5
    both = machine(["pilot", "--readings", FERRARI, "--ci-width", "0.5", "--ci-percent", "0.1"], capsys)
    assert close(both["target_ci_width"], 0.1 * both["mean"])  # the smaller wins (Pilot)


def _stats_rows():
    return [r for r in rows(FORK) if r["kind"] == "stats"]


@pytest.mark.parametrize("row", _stats_rows(), ids=lambda r: f"{r['series']}-{r['mean_method']}")
def test_every_golden_stats_series_as_bench_analyze(row, tmp_path, capsys):
    """--no-warmup-removal is `bench analyze`: q at each AC limit, then var/autocov/autocorr/CI at q."""
    path = str(INPUTS / f"{row['series']}.txt")
    per_q = {p["q"]: p for p in row["per_q"]}
    for limit, want_q in row["optimal_q"].items():
        doc = machine(["pilot", "--readings", path, "--no-warmup-removal", "--ac-limit", limit,
                       "--mean", row["mean_method"]], capsys)
        assert doc["n"] == row["n"] and doc["changepoints"] is None
        assert close(doc["mean"], row["mean"])
        assert doc["q"] == (None if want_q < 0 else want_q)
        if want_q in per_q:
            p = per_q[want_q]
            for field, golden in (("variance", "var"), ("autocovariance", "autocov"),
                                  ("autocorrelation", "autocorr"), ("ci_width", "ci_width_95")):
                assert close(doc[field], p[golden]), (limit, field, doc[field], p[golden])
    for size in row["optimal_sample_size"]:
        doc = machine(["pilot", "--readings", path, "--no-warmup-removal", "--mean", row["mean_method"],
                       "--ac-limit", str(size["ac_limit"]), "--ci-percent", str(size["ci_width_frac_of_mean"])],
                      capsys)
        if size["ok"]:
            assert (doc["q"], doc["required_subsessions"]) == (size["q"], size["opt_subsession_sample_size"])
        else:
            assert doc["q"] is None and doc["required_subsessions"] is None and doc["required_samples"] is None


def _edm_rows():
    return [r for r in rows(FORK) if r["kind"] == "edm"]


@pytest.mark.parametrize("row", _edm_rows(), ids=lambda r: f"{r['series']}-{r['percent']}")
def test_golden_edm_changepoints_and_stable_segment(row, capsys):
    path = str(INPUTS / f"{row['series']}.txt")
    doc = machine(["pilot", "--readings", path, "--edm-percent", str(row["percent"]),
                   "--edm-min-size", str(row["min_size"])], capsys)
    assert doc["changepoints"] == row["changepoints"]
    values = [float(v) for v in (INPUTS / f"{row['series']}.txt").read_text().split()]
    if row["dominant_rc"] == 32:
        assert doc["stable_segment"] is None and doc["n"] == 0 and doc["mean"] is None
        assert any("nothing analysed" in n for n in doc["notes"])
    else:
        b, e = row["dominant_begin"], row["dominant_end"]
        assert doc["stable_segment"] == [b, e] and doc["n"] == e - b
        # The statistics are the stable segment's: the golden stats of the whole series
        # agree only when the segment is the whole series.
        kept = values[b:e]
        assert close(doc["mean"], sum(kept) / len(kept), rel=1e-12)


def test_warmup_removal_changes_the_sample_of_a_series_with_warmup(capsys):
    path = str(INPUTS / "step_noisy_60_260_40.txt")
    removed = machine(["pilot", "--readings", path], capsys)
    whole = machine(["pilot", "--readings", path, "--no-warmup-removal"], capsys)
    golden = next(r for r in _stats_rows() if r["series"] == "step_noisy_60_260_40")
    assert removed["stable_segment"] == [59, 289] and removed["n"] == 230
    assert whole["stable_segment"] == [0, 360] and close(whole["mean"], golden["mean"])
    assert not close(removed["mean"], golden["mean"])


def _wps(name: str, capsys, *extra: str) -> dict:
    return machine(["pilot", "--wps", str(INPUTS / f"{name}.csv"), *extra], capsys)


def test_wps_ols1_every_variant(capsys):
    expected_ci = {"textbook": 0.30160248000899775, "fork": 0.30160248000899775, "ascar": 0.18031725051092712}
    for variant, ci in expected_ci.items():
        doc = _wps("wps_ols1", capsys, "--ac-limit", "1", "--variant", variant)
        assert close(doc["alpha_s"], 40.4) and close(doc["v_per_s"], 0.49800796812749004)
        assert close(doc["ssr"], 2327.6) and close(doc["ssr_percent"], 0.028246608323083705)
        assert doc["subsession_size"] == 5 and doc["q"] == 1 and doc["rounds_used"] == 5
        assert close(doc["v_ci_width"], ci) and doc["variant"] == variant


@pytest.mark.parametrize("name,alpha,v,ssr,fork_ci", [
    ("wps_ols3", 2.029655249066034, 148182202.22358331, 0.2059332822291205, 178441309.31850272),
    ("wps_ols4", 2.6945964769784672, 172572240.77355415, 0.5919330707383702, 141053262.11992693),
])
def test_wps_published_cases(name, alpha, v, ssr, fork_ci, capsys):
    doc = _wps(name, capsys, "--ac-limit", "1", "--variant", "fork")
    assert close(doc["alpha_s"], alpha) and close(doc["v_per_s"], v) and close(doc["ssr"], ssr)
    assert close(doc["v_ci_width"], fork_ci)


def test_wps_threshold_drops_short_rounds(capsys):
    row = next(r for r in rows(FORK) if r["kind"] == "wps" and r["series"] == "wps_synth_short_36"
               and r["duration_threshold_ns"] == 3_000_000_000 and r["ac_limit"] == 1 and r["rc"] == 0)
    doc = _wps("wps_synth_short_36", capsys, "--ac-limit", "1", "--duration-threshold-ns", "3000000000",
               "--variant", "fork")
    assert doc["rounds_used"] == 15  # 21 of the 36 rounds last 3 s or less
    for field in ("alpha_s", "v_per_s", "v_ci_width", "ssr", "ssr_percent"):
        assert close(doc[field], row[field]), field
    assert doc["subsession_size"] == row["subsession_sample_size"]


def _welch_raw(label: str) -> dict:
    return next(r for r in rows(FORK) if r["kind"] == "welch_raw" and r["label"] == label)


def test_welch_yale_body_temperature(capsys):
    r = _welch_raw("yale_body_temp")
    doc = machine(["compare", "--welch", str(r["mean1"]), str(r["var1"]), str(r["n1"]), str(r["mean2"]),
                   str(r["var2"]), str(r["n2"]), "--target-p", repr(r["p"])], capsys)
    assert close(doc["p"], 0.024022856222597727) and close(doc["dof"], 127.52594900691858)
    assert close(doc["diff_ci"][0], -0.53937134791178476) and close(doc["diff_ci"][1], -0.038628652088218252)
    assert doc["samples_for_target_p"] in (64, 65)  # Pilot's truncation of an exact 65 (README)


def test_welch_speed_of_light_at_99_percent(capsys):
    r = _welch_raw("light_published_sd_099")
    doc = machine(["compare", "--welch", str(r["mean1"]), str(r["var1"]), str(r["n1"]), str(r["mean2"]),
                   str(r["var2"]), str(r["n2"]), "--confidence", "0.99"], capsys)
    assert close(doc["p"], 0.0003625356975954895) and abs(doc["dof"] - 27.754) < 0.001
    assert abs(doc["diff_ci"][0] - 30.67544) < 1e-5 and abs(doc["diff_ci"][1] - 161.68977) < 1e-5
    assert doc["samples_for_target_p"] is None and doc["confidence"] == 0.99


def test_welch_sample_below_two_cannot_tell(capsys):
    doc = machine(["compare", "--welch", "1", "1", "1", "2", "1", "5", "--target-p", "0.05"], capsys)
    assert doc["p"] == 0.5 and doc["dof"] is None and doc["diff_ci"] is None
    assert doc["samples_for_target_p"] is None and "at least 2" in doc["note"]


def test_text_formats_name_the_same_fields(capsys):
    assert cli.main(["pilot", "--readings", FERRARI, "--preset", "strict"]) == 0
    text = capsys.readouterr().out
    assert "q 4\n" in text and "stable_segment [0, 48)\n" in text and "required_samples 800\n" in text
    assert cli.main(["pilot", "--wps", str(INPUTS / "wps_ols1.csv"), "--ac-limit", "1"]) == 0
    assert "alpha_s 40.4\n" in capsys.readouterr().out
    assert cli.main(["compare", "--welch", "98.105", "0.488601", "65", "98.394", "0.552049", "65"]) == 0
    text = capsys.readouterr().out
    assert "p 0.02402285622" in text and "diff_ci [-0.539371" in text


def test_wps_unbounded_ci_of_v_is_null(tmp_path, capsys):
    # Noisy rounds: the slope's CI reaches 0, so v's CI has no upper bound (textbook: inf).
    rows_csv = "".join(f"{w},{t * 1_000_000}\n" for w, t in zip(range(1, 9), (100, 300, 150, 400, 120, 500, 200, 450)))
    path = tmp_path / "noisy.csv"
    path.write_text("work_amount,duration_ns\n" + rows_csv)
    doc = machine(["pilot", "--wps", str(path), "--ac-limit", "1"], capsys)
    assert doc["v_ci_width"] is None and doc["v_per_s"] > 0
    assert cli.main(["pilot", "--wps", str(path), "--ac-limit", "1"]) == 0
    assert "v_ci_width inf\n" in capsys.readouterr().out


@pytest.mark.parametrize("row", [r for r in rows(FORK) if r["kind"] == "binomial"], ids=lambda r: r["series"])
def test_binary_readings_binomial_ci(row, capsys):
    doc = machine(["pilot", "--readings", str(INPUTS / f"{row['series']}.txt"), "--mean", "binary",
                   "--no-warmup-removal", "--ci-width", "0.1"], capsys)
    assert doc["n"] == row["n"] and close(doc["mean"], row["mean"]) and doc["q"] == 1
    assert close(doc["ci_width"], row["ci_width_95"])
    assert doc["required_subsessions"] == row["opt_for_abs_width_0.1"]["opt_sample_size"]
