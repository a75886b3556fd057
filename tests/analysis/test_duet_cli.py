"""coldrun-analyze duet --pairs: the machine interface, the text report and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from analysis.cli import main

TOY = {"x": [[10, 11, 10.5, 12], [20, 19, 21, 22], [9, 9.5, 9, 10]],
       "y": [[9, 10, 10, 11], [18, 18, 19, 20], [8.5, 9, 8, 9.5]]}
TOY_GMS = [1.0877573059372772, 1.0927586208054845, 1.0725891493349424]
KEYS = {"pairs", "executions", "iterations", "gms", "ggms", "ci", "relative_ci_width", "sequential_difference",
        "sequential_ci", "sequential_relative_ci_width", "sequential_method", "reduction", "shuffle_pairing",
        "shuffle_gms", "shuffle_ci", "shuffle_relative_ci_width", "seed", "confidence", "resamples",
        "steady_state", "procedure", "excluded", "notes", "y_mean", "ci_reliable", "t_ci"}


def write(tmp_path, document, name="pairs.json") -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def run_json(capsys, *argv) -> dict:
    assert main(["duet", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_toy_data_json(tmp_path, capsys):
    doc = run_json(capsys, "--pairs", write(tmp_path, TOY), "--seed", "5", "--resamples", "2000", "--steady-state")
    assert set(doc) == KEYS
    assert doc["gms"] == pytest.approx(TOY_GMS, abs=1e-12, rel=0)
    assert doc["ggms"] == pytest.approx(1.08433435181084, abs=1e-12, rel=0)
    assert doc["ci"] == pytest.approx([TOY_GMS[2], TOY_GMS[1]], abs=1e-12)  # the exhaustive support at 99 %
    assert doc["relative_ci_width"] == pytest.approx((TOY_GMS[1] - TOY_GMS[2]) / doc["ggms"], rel=1e-9)
    assert doc["reduction"] == pytest.approx(doc["sequential_relative_ci_width"] / doc["relative_ci_width"])
    assert doc["reduction"] > 10
    assert (doc["seed"], doc["confidence"], doc["resamples"], doc["steady_state"]) == (5, 0.99, 2000, True)
    assert doc["executions"] == 3 and doc["iterations"] == [4, 4, 4]
    # 4 iterations are too short for EDM: steady-state removal keeps them whole and says so
    for r, e in enumerate(doc["excluded"]):
        assert e["execution"] == r and e["kept"] == [0, 4]
        assert e["excluded_before"] == e["excluded_after"] == 0
        assert "too short for EDM" in e["x_note"] and "too short for EDM" in e["y_note"]


def test_same_seed_same_answer_and_options_reach_it(tmp_path, capsys):
    """Issue 28 (4): without --seed the seed is 1, as every analysis, so two runs give the same intervals."""
    path = write(tmp_path, TOY)
    first = run_json(capsys, "--pairs", path)
    assert first["seed"] == 1
    assert run_json(capsys, "--pairs", path) == first
    again = run_json(capsys, "--pairs", path, "--seed", str(first["seed"]))
    assert first == again
    other = run_json(capsys, "--pairs", path, "--seed", "1", "--confidence", "0.5")
    assert other["confidence"] == 0.5 and other["steady_state"] is False and first["steady_state"] is False
    assert other["procedure"].startswith("Bulej et al. 2020: every iteration's ratio")
    assert other["ci"][1] - other["ci"][0] < first["ci"][1] - first["ci"][0]
    assert all(e["x_note"] == "steady-state removal off" for e in other["excluded"])


def test_text_report(tmp_path, capsys):
    assert main(["duet", "--pairs", write(tmp_path, TOY), "--seed", "5", "--steady-state"]) == 0
    out = capsys.readouterr().out
    assert "ggms (x/y, ratio)  1.084   99% CI [1.073, 1.093]" in out
    assert re.search(r"sequential x - y   [+-]\d+\.?\d* (s|ms|µs|ns)   99% CI \[.*\] (s|ms|µs|ns)   relative width", out)
    assert "reduction" in out and "shuffle control" in out and "seed 5, 10000 resamples" in out
    assert out.count("too short for EDM") == 6


@pytest.mark.parametrize("document, problem", [
    ({"x": [[1.0, 2.0]], "y": [[1.0]]}, "execution #1 has 2 x iterations but 1 y iterations"),
    ({"x": [[1.0], [1.0]], "y": [[1.0]]}, '"x" has 2 executions but "y" has 1'),
    ({"x": [[1.0, 0]], "y": [[1.0, 1.0]]}, "x[0][1] is 0; iteration times must be positive finite numbers"),
    ({"x": [[1.0, -3]], "y": [[1.0, 1.0]]}, "x[0][1] is -3"),
    ('{"x": [[1.0, NaN]], "y": [[1.0, 1.0]]}', "x[0][1] is NaN"),
    ('{"x": [[1.0]], "y": [[Infinity]]}', "y[0][0] is Infinity"),
    ({"x": [[1.0]], "y": [["1.0"]]}, 'y[0][0] is "1.0"'),
    ({"x": [[True]], "y": [[1.0]]}, "x[0][0] is true"),
    ({"x": [[]], "y": [[]]}, "x[0] is empty"),
    ({"x": [], "y": []}, '"x" has no executions'),
    ({"x": [[1.0]]}, '"y" must be a list'),
    ({"x": [1.0], "y": [1.0]}, "x[0] must be a list of iteration times"),
    ([1, 2], "expected an object"),
    ('{"x": [[1.0]], "y": ', "not valid JSON"),
    ({"x": [[1.0]], "y": [[1.0]]}, "at least 2 executions"),
])
def test_bad_input_is_one_line_naming_the_file(tmp_path, capsys, document, problem):
    path = write(tmp_path, document)
    assert main(["duet", "--pairs", path, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and problem in lines[0]
    assert lines[0].startswith(f"coldrun-analyze: error: {path}: ")


def test_missing_file(tmp_path, capsys):
    assert main(["duet", "--pairs", str(tmp_path / "none.json")]) == 2
    assert "none.json: cannot read" in capsys.readouterr().err


def test_zero_resamples(tmp_path, capsys):
    assert main(["duet", "--pairs", write(tmp_path, TOY), "--resamples", "0"]) == 2
    assert capsys.readouterr().err == "coldrun-analyze: error: --resamples must be at least 1\n"


@pytest.mark.parametrize("option", [["--confidence", "1"], ["--resamples", "-1"], ["--seed", "x"],
                                    ["--seed", "-1"]])
def test_bad_options_are_usage_errors(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as exc:
        main(["duet", "--pairs", write(tmp_path, TOY), *option])
    assert exc.value.code == 2
    assert option[0] in capsys.readouterr().err


def test_registering_the_command_imports_neither_numpy_nor_scipy():
    code = ("import sys, analysis.duet.command, analysis.duet.overlap, analysis.duet.pairs; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_paper_procedure_is_the_default_and_the_cut_is_named(tmp_path, capsys):
    path = write(tmp_path, TOY)
    default = run_json(capsys, "--pairs", path, "--seed", "2")
    cut = run_json(capsys, "--pairs", path, "--seed", "2", "--steady-state")
    assert default["steady_state"] is False and cut["steady_state"] is True
    assert "Bulej" in default["procedure"] and "EDM" not in default["procedure"]
    assert cut["procedure"].startswith("coldrun's variant (--steady-state)")
    assert main(["duet", "--pairs", path, "--seed", "2"]) == 0
    assert "procedure          Bulej et al. 2020" in capsys.readouterr().out
    with pytest.raises(SystemExit):    # one or the other
        main(["duet", "--pairs", path, "--steady-state", "--no-steady-state"])


def test_few_executions_mark_the_percentile_ci_unreliable_and_give_the_t_interval_of_logs(tmp_path, capsys):
    doc = run_json(capsys, "--pairs", write(tmp_path, TOY), "--seed", "2")
    assert doc["ci_reliable"] is False and any(n.startswith("CI unreliable: 3 executions") for n in doc["notes"])
    logs = np.log(TOY_GMS)
    half = 9.924843200918282 * logs.std(ddof=1) / np.sqrt(3)      # t(0.995, 2)
    assert doc["t_ci"] == pytest.approx([np.exp(logs.mean() - half), np.exp(logs.mean() + half)], rel=1e-9)
    assert doc["t_ci"][0] < doc["ci"][0] and doc["ci"][1] < doc["t_ci"][1]
    many = {"x": [[1.0 + 0.01 * ((r * 7) % 5), 1.0] for r in range(30)],
            "y": [[1.0, 1.0 + 0.01 * ((r * 3) % 4)] for r in range(30)]}
    assert run_json(capsys, "--pairs", write(tmp_path, many, "many.json"), "--seed", "2")["ci_reliable"] is True
