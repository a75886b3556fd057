"""`coldrun-analyze screen RESULTS` on a native export of a screening experiment
(tests/fixtures/screening/native_2x2.json: factors env x variant, 3 replicates,
40 iterations per execution, a small per-boot shift), and `coldrun-analyze boots`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.cli import main
from analysis.screen.boots import boot_dependency

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "screening" / "native_2x2.json"


def bundle() -> dict:
    return json.loads(FIXTURE.read_text())


def write(tmp_path, doc, name="bundle.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def screen_json(capsys, path, *argv) -> dict:
    assert main(["screen", str(path), "--json", "--fixed", "--resamples", "4000", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def cell_means(doc_bundle, per_iteration=False):
    """Expected treatment means from the raw fixture, every iteration kept."""
    cells: dict = {}
    for e in doc_bundle["executions"]:
        levels = e["screening"]["levels"]
        key = (doc_bundle["screening"]["factors"]["env"].index(levels["env"]),
               doc_bundle["screening"]["factors"]["variant"].index(levels["variant"]))
        times = e["wallclock_times"]
        cells.setdefault(key, []).extend(times if per_iteration else [float(np.mean(times))])
    return {k: float(np.mean(v)) for k, v in sorted(cells.items())}


@pytest.mark.parametrize("samples", ["executions", "iterations"])
def test_per_execution_and_per_iteration_samples(capsys, samples):
    doc = screen_json(capsys, FIXTURE, "--samples", samples, "--no-steady-state")
    assert doc["samples_are"] == samples and doc["design"] == "full factorial"
    loop = doc["responses"]["loop"]
    assert loop["factors"] == {"env": ["off", "on"], "variant": ["plain", "fp"]}
    assert loop["samples"] == (12 if samples == "executions" else 480)
    expected = cell_means(bundle(), per_iteration=samples == "iterations")
    got = {(t["levels"]["env"], t["levels"]["variant"]): t["mean"] for t in loop["treatments"]}
    assert got == pytest.approx(expected, rel=1e-12)
    # The fixture's design: env +0.002 s, variant +0.004 s, no interaction.
    assert loop["main_effects"]["env"]["1"]["effect"] == pytest.approx(0.002, abs=5e-4)
    assert loop["main_effects"]["variant"]["1"]["effect"] == pytest.approx(0.004, abs=5e-4)
    ci = loop["interactions"]["env:variant"]["ci"]
    assert ci[0] < 0 < ci[1]


def test_steady_state_default_and_boot_section(capsys):
    doc = screen_json(capsys, FIXTURE)
    assert doc["steady_state"] is True
    groups = doc["boots"]["groups"]
    assert set(groups) == {"loop env=off,variant=plain", "loop env=off,variant=fp",
                           "loop env=on,variant=plain", "loop env=on,variant=fp"}
    assert all(g["executions"] == 3 for g in groups.values())
    assert all(0 <= g["between_share"] <= 1 for g in groups.values())


def test_text_and_html(tmp_path, capsys):
    assert main(["screen", str(FIXTURE), "--fixed", "--resamples", "2000"]) == 0
    out = capsys.readouterr().out
    assert "== loop ==" in out and "Boot dependency" in out and "env: on vs off" in out
    html = tmp_path / "s.html"
    assert main(["screen", str(FIXTURE), "--fixed", "--resamples", "2000", "--format", "html", "-o", str(html)]) == 0
    assert html.read_text().count("data:image/png;base64,") == 4  # 2-level design: half-normal too


@pytest.mark.parametrize("change, expected", [
    (lambda b: b.pop("screening"), "not a screening experiment"),
    (lambda b: b["screening"].update(factors={"env": ["off"]}), "at least two level names"),
    (lambda b: b["executions"][0]["screening"]["levels"].update(env="maybe"),
     "screening.levels.env is 'maybe', not one of ['off', 'on']"),
    (lambda b: b["executions"][0]["screening"]["levels"].update(cpu="x"), "unknown factor 'cpu'"),
    (lambda b: b["executions"][0]["screening"]["levels"].pop("env"), "lacks factor 'env'"),
    (lambda b: b["executions"][0].pop("screening"), "no 'screening.levels'"),
])
def test_bad_bundles_are_one_line_exit_2(tmp_path, capsys, change, expected):
    doc = bundle()
    change(doc)
    path = write(tmp_path, doc)
    assert main(["screen", path, "--json"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_krun_results_are_refused(tmp_path, capsys):
    path = write(tmp_path, {"wallclock_times": {"a:b:c": [[1.0, 2.0]]}, "audit": {"uname": "Linux m"}})
    assert main(["screen", path]) == 2
    assert "needs a coldrun native export" in capsys.readouterr().err


def test_boots_command(capsys):
    assert main(["boots", str(FIXTURE), "--json", "--no-steady-state"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["keys"]) == {"loop:python:plain", "loop:python:fp"}
    # Each key mixes env levels across executions: a between-execution shift.
    for found in doc["keys"].values():
        assert found["executions"] == 6 and found["iterations"] == 240
        assert found["ci"][0] <= found["between_share"] <= found["ci"][1]
    assert main(["boots", str(FIXTURE)]) == 0
    assert "between share" in capsys.readouterr().out


def test_random_effects_split_by_hand():
    # Balanced: k = 3 executions of n = 2 iterations.
    groups = [np.array([1.0, 3.0]), np.array([4.0, 6.0]), np.array([7.0, 9.0])]
    found = boot_dependency(groups, 0.95)
    msw = (2 + 2 + 2) / 3  # each group's squared deviations: 1 + 1
    msb = 2 * ((2 - 5) ** 2 + 0 + (8 - 5) ** 2) / 2
    assert found["within_variance"] == pytest.approx(msw)
    assert found["between_variance"] == pytest.approx((msb - msw) / 2)
    share = (msb - msw) / 2 / ((msb - msw) / 2 + msw)
    assert found["between_share"] == pytest.approx(share)
    assert found["ci"][0] <= share <= found["ci"][1]


def test_ci_covers_the_true_share_and_warns_when_boots_dominate():
    rng = np.random.default_rng(5)
    covered = 0
    trials = 200
    for _ in range(trials):
        groups = [rng.normal(rng.normal(0, 1.0), 1.0, 10) for _ in range(8)]  # true share 0.5
        lo, hi = boot_dependency(groups, 0.9)["ci"]
        covered += lo <= 0.5 <= hi
    assert 0.83 <= covered / trials <= 0.96
    strong = boot_dependency([rng.normal(rng.normal(0, 5.0), 0.1, 50) for _ in range(10)], 0.95)
    assert strong["more_executions_needed"] and strong["mean_variance_between_share"] > 0.99
    none = boot_dependency([rng.normal(0, 1.0, 50) for _ in range(10)], 0.95)
    assert not none["more_executions_needed"]


def test_one_execution_has_no_split():
    found = boot_dependency([np.array([1.0, 2.0, 3.0])], 0.95)
    assert found["between_share"] is None and "at least 2 executions" in found["note"]


def test_flagged_treatments_are_left_out_of_the_abridged_analysis(tmp_path, capsys):
    doc = bundle()
    first = doc["executions"][0]
    first["flags"] = ["thermal_throttle"]
    levels = first["screening"]["levels"]
    out = screen_json(capsys, write(tmp_path, doc))
    loop = out["responses"]["loop"]
    assert len(loop["treatments"]) == 4
    abridged = loop["abridged"]
    env = doc["screening"]["factors"]["env"].index(levels["env"])
    variant = doc["screening"]["factors"]["variant"].index(levels["variant"])
    assert abridged["excluded"] == [f"flagged env={env},variant={variant}"]
    assert len(abridged["treatments"]) == 3
    assert {"env": env, "variant": variant} not in [t["levels"] for t in abridged["treatments"]]
    assert "abridged" not in screen_json(capsys, FIXTURE)["responses"]["loop"]


def test_exclude_by_level_name(capsys):
    out = screen_json(capsys, FIXTURE, "--exclude", "env=on,variant=fp")
    abridged = out["responses"]["loop"]["abridged"]
    assert abridged["excluded"] == ["env=on,variant=fp"]
    assert {"env": 1, "variant": 1} not in [t["levels"] for t in abridged["treatments"]]
    assert len(abridged["treatments"]) == 3
    assert main(["screen", str(FIXTURE), "--exclude", "env=maybe"]) == 2
    assert "not a whole number or one of ['off', 'on']" in capsys.readouterr().err


def test_failed_executions_are_noted_and_left_out(tmp_path, capsys):
    doc = bundle()
    failed = doc["executions"][1]
    failed.update(state="errored", wallclock_times=[])
    levels = failed["screening"]["levels"]
    out = screen_json(capsys, write(tmp_path, doc))
    assert f"loop env={levels['env']},variant={levels['variant']}: 1 execution(s) without data (not completed)" \
        in out["notes"]
    assert out["responses"]["loop"]["samples"] == 11
    assert out["responses"]["loop"]["anova"]["balanced"] is False


def test_counter_metric_sums_cores(tmp_path, capsys):
    doc = bundle()
    for e in doc["executions"]:
        cycles = [round(t * 1e9) for t in e["wallclock_times"]]
        e["core_cycle_counts"] = [cycles, [1000] * len(cycles)]
    doc["executions"][0]["core_cycle_counts"] = []  # no counters in this one
    out = screen_json(capsys, write(tmp_path, doc), "--metric", "core-cycles", "--no-steady-state")
    assert out["metric"] == "core-cycles"
    loop = out["responses"]["loop"]
    assert loop["samples"] == 11
    first = doc["executions"][0]
    assert f"{first['key']} execution {first['pexec']} left out: no core-cycles counts" in out["notes"]
    wall = screen_json(capsys, write(tmp_path, doc), "--no-steady-state")["responses"]["loop"]
    # cycles = 1e9 x seconds + 1000 (second core): the effects scale by 1e9.
    assert loop["main_effects"]["variant"]["1"]["effect"] == pytest.approx(
        1e9 * wall["main_effects"]["variant"]["1"]["effect"], rel=0.05)


def test_table_html_of_a_screening_export_has_the_screening_section(tmp_path, capsys):
    out = tmp_path / "t.html"
    assert main(["table", str(FIXTURE), "--format", "html", "--no-plots", "--no-pilot", "-o", str(out)]) == 0
    page = out.read_text()
    assert "Screening experiment (NIST TN 1855)" in page and "Boot dependency" in page
    assert page.count("data:image/png;base64,") == 4


def test_boot_check_executions_are_their_own_section_and_never_pooled(tmp_path, capsys):
    doc = bundle()
    before = screen_json(capsys, FIXTURE, "--no-steady-state")["responses"]["loop"]
    doc["screening"].update(boot_check_batch=1, reboot_factors=[])
    pexec = max(e["pexec"] for e in doc["executions"]) + 1      # past every key's executions
    rng = np.random.default_rng(1)
    for i, env in enumerate(["off", "on", "on", "off"]):       # 2 boots per level, each boot far slower
        template = next(e for e in doc["executions"] if e["screening"]["levels"] == {"env": env, "variant": "plain"})
        times = list(5.0 + i + rng.normal(0, 0.001, 40))
        doc["executions"].append({**template, "pexec": pexec + i, "job_index": len(doc["jobs"]), "wallclock_times": times,
                                  "screening": {**template["screening"], "batch": 1, "replicate": i}})
        doc["jobs"].append({**doc["jobs"][template["job_index"]], "index": len(doc["jobs"]), "pexec": pexec + i})
    out = screen_json(capsys, write(tmp_path, doc), "--no-steady-state")
    loop = out["responses"]["loop"]
    assert [t["n"] for t in loop["treatments"]] == [t["n"] for t in before["treatments"]]    # 3, not 5
    assert [t["mean"] for t in loop["treatments"]] == pytest.approx([t["mean"] for t in before["treatments"]])
    check = out["boot_check"]["groups"]
    assert set(check) == {"loop env=off,variant=plain", "loop env=on,variant=plain"}
    off = check["loop env=off,variant=plain"]
    assert off["executions"] == 2 and off["boot_dependent"] is True and off["p"] < 1e-6
    assert main(["screen", write(tmp_path, doc), "--no-steady-state", "--fixed", "--resamples", "500"]) == 0
    text = capsys.readouterr().out
    assert "Boot-dependency check (TN 1855" in text and "loop env=on,variant=plain" in text
