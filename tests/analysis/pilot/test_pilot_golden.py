"""Every stats, binomial, welch, welch_raw and wps row of Pilot's golden files, both trees.

Integers exactly; doubles to 1e-9 relative with a 1e-12 absolute floor;
``untrusted`` fields skipped; ``ill_conditioned`` fields as the README says.
``edm`` rows belong to analysis.pilot.edm's tests. The number of checks per
file is asserted, so a row that stops being compared fails the test.
"""

from __future__ import annotations

import math

import pytest

from analysis.pilot import subsession as ss
from analysis.pilot import welch, wps
from analysis.pilot.subsession import NotEnoughData
from pilot_golden import Checks, rows, series, wps_rounds

TREES = {"golden_original.jsonl": "ascar", "golden_fork.jsonl": "fork"}
ROWS_PER_KIND = {"stats": 21, "binomial": 3, "welch": 5, "welch_raw": 4, "wps": 120, "edm": 36}
# Checks compared per file: stats 1308, binomial 15, welch 75, welch_raw 20, wps 720 in the
# fork; 552 in the original, whose 28 untrusted wps rows compare their rc only.
EXPECTED_CHECKS = {"golden_original.jsonl": 1970, "golden_fork.jsonl": 2138}
WPS_FIELDS = ("alpha_s", "v_per_s", "v_ci_width", "ssr", "ssr_percent")


def optimal_sample_size(x, width: float, method: str, confidence: float, ac_limit: float) -> ss.SampleSize:
    """Pilot's ``pilot_optimal_sample_size`` (ok, q, opt) as the production path computes it:
    ``analyse_sample``'s q and required samples with no minimum (required = q x opt)."""
    a = ss.analyse_sample(x, ci_width=width, min_samples=0, mean_method=method, confidence=confidence,
                          ac_limit=ac_limit)
    if a.required is None:
        return ss.SampleSize(False, None, None)
    assert a.q is not None and a.required % a.q == 0
    return ss.SampleSize(True, a.q, a.required // a.q)


def check_stats(c: Checks, r: dict) -> None:
    x, method, name = series(r["series"]), r["mean_method"], f"{r['series']} ({r['mean_method']})"
    c.equal(f"{name} n", len(x), r["n"])
    mean = ss.sample_mean(x, method)
    c.near(f"{name} mean", mean, r["mean"])
    for per in r["per_q"]:
        q = per["q"]
        where = f"{name} q={q}"
        c.equal(f"{where} h", len(x) // q, per["h"])
        c.near(f"{where} var", ss.subsession_var(x, q, method, mean), per["var"])
        c.near(f"{where} autocov", ss.subsession_autocov(x, q, method, mean), per["autocov"])
        c.near(f"{where} autocorr", ss.subsession_autocorr(x, q, method, mean), per["autocorr"])
        c.near(f"{where} ci95", ss.ci_width(x, q, 0.95, method), per["ci_width_95"])
        c.near(f"{where} ci99", ss.ci_width(x, q, 0.99, method), per["ci_width_99"])
    for limit, q in r["optimal_q"].items():
        c.equal(f"{name} optimal q at {limit}", ss.optimal_subsession_size(x, method, float(limit)), q)
    for o in r["optimal_sample_size"]:
        size = optimal_sample_size(x, o["ci_width_frac_of_mean"] * mean, method, o["confidence_level"], o["ac_limit"])
        where = f"{name} optimal sample size {o['ci_width_frac_of_mean']}/{o['ac_limit']}"
        c.equal(f"{where} ok", size.ok, o["ok"])
        c.equal(f"{where} q", size.q or 0, o["q"])  # Pilot prints 0 when not ok
        c.equal(f"{where} opt", size.opt or 0, o["opt_subsession_sample_size"])


def check_binomial(c: Checks, r: dict) -> None:
    x, name = series(r["series"]), r["series"]
    c.near(f"{name} mean", ss.sample_mean(x, "binary"), r["mean"])
    c.near(f"{name} ci95", ss.ci_width(x, 1, 0.95, "binary"), r["ci_width_95"])
    size = optimal_sample_size(x, 0.1, "binary", 0.95, 0.1)
    want = r["opt_for_abs_width_0.1"]
    c.equal(f"{name} opt ok", size.ok, want["ok"])
    c.equal(f"{name} opt q", size.q, want["q"])
    c.equal(f"{name} opt", size.opt, want["opt_sample_size"])


def check_welch(c: Checks, r: dict) -> None:
    a, b = series(r["a"]), series(r["b"])
    name = f"{r['a']} vs {r['b']}"
    ma, mb = ss.sample_mean(a), ss.sample_mean(b)
    va, vb = ss.subsession_var(a, 1), ss.subsession_var(b, 1)
    for key, got in (("mean_a", ma), ("mean_b", mb), ("var_a", va), ("var_b", vb)):
        c.near(f"{name} {key}", got, r[key])
    c.equal(f"{name} n_a", len(a), r["n_a"])
    c.equal(f"{name} n_b", len(b), r["n_b"])
    c.near(f"{name} dof", welch.welch_dof(va, vb, len(a), len(b)), r["dof"])
    at95 = welch.p_eq(ma, mb, len(a), len(b), va, vb, 0.95)
    at99 = welch.p_eq(ma, mb, len(a), len(b), va, vb, 0.99)
    c.near(f"{name} p", at95.p, r["p"])
    c.near(f"{name} p at 0.99", at99.p, r["p_check_99"])
    for label, result, want in (("ci95", at95, r["diff_ci95"]), ("ci99", at99, r["diff_ci99"])):
        assert result.ci is not None
        c.near(f"{name} {label} low", result.ci[0], want[0])
        c.near(f"{name} {label} high", result.ci[1], want[1])
    opt = r["opt_eq_test"]
    c.equal(f"{name} opt eq rc", 0, opt["rc"])
    c.equal(f"{name} opt eq", welch.optimal_sample_size_for_eq_test(ma, len(a), va, mb, len(b), vb, opt["required_p"]),
            opt["opt_new_sample_size"])


def check_welch_raw(c: Checks, r: dict) -> None:
    name, untrusted = r["label"], set(r.get("untrusted", []))
    result = welch.p_eq(r["mean1"], r["mean2"], r["n1"], r["n2"], r["var1"], r["var2"], r["confidence_level"])
    c.near(f"{name} p", result.p, r["p"])
    c.near(f"{name} dof", math.nan if result.dof is None else result.dof, r["dof"])
    for i, key in enumerate(("ci_left", "ci_right")):
        if key not in untrusted:
            assert result.ci is not None
            c.near(f"{name} {key}", result.ci[i], r[key])
    want = r["opt_eq_test_with_required_p_equal_p"]
    try:
        got, rc = welch.optimal_sample_size_for_eq_test(r["mean1"], r["n1"], r["var1"], r["mean2"], r["n2"], r["var2"], result.p), 0
    except NotEnoughData as exc:
        got, rc = 0, exc.rc
    c.equal(f"{name} opt eq rc", rc, want["rc"])
    if "opt_eq_test_with_required_p_equal_p" in r.get("ill_conditioned", []):
        # The exact answer is n2; Pilot's cast truncates it, so n2 - 1 and n2 both pass.
        c.true(f"{name} opt eq", got in (r["n2"] - 1, r["n2"]), f"got {got}, want {r['n2'] - 1} or {r['n2']}")
    else:
        c.equal(f"{name} opt eq", got, want["opt"])


def fit_or_rc(r: dict, variant: str) -> tuple[wps.WpsResult | None, int]:
    w, t = wps_rounds(r["series"])
    try:
        return wps.wps_fit(w, t, ac_limit=r["ac_limit"], threshold_ns=r["duration_threshold_ns"], variant=variant), 0
    except NotEnoughData as exc:
        return None, exc.rc


def compare_wps_field(c: Checks, where: str, r: dict, field: str, got: float, v_per_s: float) -> None:
    if field in r.get("ill_conditioned", []):
        # Zero in exact arithmetic; the stored numbers are rounding noise (README "Tolerance").
        bound = 1e-9 * abs(v_per_s) if field == "v_ci_width" else 1e-9
        c.true(where, abs(got - float(r[field])) <= bound, f"got {got!r}, Pilot {r[field]!r} (ill-conditioned, bound {bound:g})")
    else:
        c.near(where, got, r[field])


def check_wps(c: Checks, r: dict, variant: str) -> None:
    name = f"{r['series']} ac={r['ac_limit']} threshold={r['duration_threshold_ns']}"
    result, rc = fit_or_rc(r, variant)
    c.equal(f"{name} rc", rc, r["rc"])
    if rc or result is None:
        return
    untrusted = set(r.get("untrusted", []))
    for field in WPS_FIELDS:
        if field not in untrusted:
            compare_wps_field(c, f"{name} {field}", r, field, getattr(result, field), result.v_per_s)
    if "subsession_sample_size" not in untrusted:
        c.equal(f"{name} h", result.subsession_size, r["subsession_sample_size"])


CHECKERS = {"stats": check_stats, "binomial": check_binomial, "welch": check_welch, "welch_raw": check_welch_raw}


@pytest.mark.parametrize("filename", sorted(TREES))
def test_golden_rows_match_pilot(filename):
    lines = rows(filename)
    kinds = {kind: sum(1 for r in lines if r["kind"] == kind) for kind in ROWS_PER_KIND}
    assert kinds == ROWS_PER_KIND, f"{filename}: rows per kind changed: {kinds}"
    c = Checks()
    for r in lines:
        if r["kind"] == "wps":
            check_wps(c, r, TREES[filename])
        elif r["kind"] in CHECKERS:
            CHECKERS[r["kind"]](c, r)
    print(f"{filename}: {c.count} checks compared, {c.count - len(c.failures)} passed")
    assert not c.failures, f"{len(c.failures)} of {c.count} checks differ:\n" + "\n".join(c.failures[:20])
    assert c.count == EXPECTED_CHECKS[filename], f"{filename}: {c.count} checks compared, expected {EXPECTED_CHECKS[filename]}"


def textbook_comparable(r: dict) -> bool:
    """Rows where Pilot's fit is the textbook one: q = 1 and no round filtered out."""
    if r["kind"] != "wps" or r["rc"] != 0 or "untrusted" in r:
        return False
    w, t = wps_rounds(r["series"])
    return min(t) > r["duration_threshold_ns"] and r["subsession_sample_size"] == len(w)


# Per file: 51 comparable rows x (alpha, v, ssr, ssr_percent) = 204 checks; the fork adds
# v_ci_width (the same t-based half-width), 51 more.
TEXTBOOK_CHECKS = {"golden_original.jsonl": 204, "golden_fork.jsonl": 255}


@pytest.mark.parametrize("filename", sorted(TREES))
def test_textbook_wps_matches_pilot_where_pilot_is_textbook(filename):
    c = Checks()
    for r in filter(textbook_comparable, rows(filename)):
        result, rc = fit_or_rc(r, "textbook")
        assert rc == 0 and result is not None and result.q == 1
        name = f"{r['series']} ac={r['ac_limit']} threshold={r['duration_threshold_ns']} textbook"
        for field in ("alpha_s", "v_per_s", "ssr", "ssr_percent"):
            compare_wps_field(c, f"{name} {field}", r, field, getattr(result, field), result.v_per_s)
        if TREES[filename] == "fork":
            inv_v = 1 / result.v_per_s
            if math.isinf(result.v_ci_width):
                # The slope's CI reaches 0: Pilot's finite width means nothing; textbook says inf.
                fork_half = _fork_half_width(float(r["v_ci_width"]), inv_v)
                c.true(f"{name} v_ci_width", inv_v - fork_half <= 0, f"inf, but Pilot's slope CI {inv_v} +- {fork_half} excludes 0")
            else:
                compare_wps_field(c, f"{name} v_ci_width", r, "v_ci_width", result.v_ci_width, result.v_per_s)
    print(f"{filename}: {c.count} textbook checks compared, {c.count - len(c.failures)} passed")
    assert not c.failures, "\n".join(c.failures[:20])
    assert c.count == TEXTBOOK_CHECKS[filename]


def _fork_half_width(v_ci: float, inv_v: float) -> float:
    """Invert Pilot's |1/(b - hw) - 1/(b + hw)| = v_ci for hw (b = 1/v): the root with hw > b when it straddles 0."""
    # |2 hw / (b^2 - hw^2)| = v_ci; with hw > b: 2 hw = v_ci (hw^2 - b^2) -> hw = (1 + sqrt(1 + v_ci^2 b^2)) / v_ci
    return (1 + math.sqrt(1 + (v_ci * inv_v) ** 2)) / v_ci
