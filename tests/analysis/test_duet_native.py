"""coldrun-analyze duet RESULTS: the pairs of a native export of a [duet] experiment, per pair, with its
HTML section; failed pair executions left out and said so; bad exports refused in one line."""

from __future__ import annotations

import bz2
import json
import pytest

from analysis.cli import main

TOY = {"x": [[10, 11, 10.5, 12], [20, 19, 21, 22], [9, 9.5, 9, 10]],
       "y": [[9, 10, 10, 11], [18, 18, 19, 20], [8.5, 9, 8, 9.5]]}
TOY_GGMS = 1.08433435181084
A, B = "fib:py:fast", "fib:py:slow"


def _slot(pair: str, pexec: int, side: str, key: str, times: list[float], state: str = "completed") -> dict:
    bench, vm, variant = key.split(":")
    return {"key": key, "pexec": pexec, "state": state, "bench": bench, "vm": vm, "variant": variant,
            "wallclock_times": times, "pair_id": f"{pair}#{pexec}", "side": side}


def _export(pairs: dict[str, tuple[dict, list[str]]]) -> dict:
    """pair key -> (x/y times, per-pexec states); a failed pair execution keeps side a's data only."""
    executions = []
    for pair, (times, states) in pairs.items():
        a_key, b_key = pair.split("/")
        for pexec, state in enumerate(states):
            x = times["x"][pexec] if pexec < len(times["x"]) else [1.0, 1.0, 1.0, 1.0]
            y = times["y"][pexec] if state == "completed" else []
            executions += [_slot(pair, pexec, "a", a_key, x, state), _slot(pair, pexec, "b", b_key, y, state)]
    return {"format": "coldrun-native", "format_version": 1, "executions": executions, "jobs": []}


def _write(tmp_path, doc, name="native.json.bz2") -> str:
    path = tmp_path / name
    raw = json.dumps(doc).encode()
    path.write_bytes(bz2.compress(raw) if name.endswith(".bz2") else raw)
    return str(path)


def test_each_pair_of_the_export_gets_the_toy_ggms_and_failed_executions_are_left_out(tmp_path, capsys):
    aa = {"x": TOY["x"], "y": TOY["x"]}
    path = _write(tmp_path, _export({f"{A}/{B}": (TOY, ["completed"] * 3 + ["errored"]),
                                     f"{A}/{A}": (aa, ["completed"] * 3)}))
    html = tmp_path / "duet.html"
    assert main(["duet", path, "--json", "--no-steady-state", "--seed", "3", "--resamples", "2000",
                 "--html", str(html)]) == 0
    doc = json.loads(capsys.readouterr().out)
    ab, aa_doc = doc["pairs"]
    assert (ab["a"], ab["b"], ab["pexecs"], ab["left_out"]) == (A, B, [0, 1, 2], {"3": "errored"})
    assert ab["ggms"] == pytest.approx(TOY_GGMS, abs=1e-12, rel=0)
    assert aa_doc["ggms"] == pytest.approx(1.0, abs=1e-12) and aa_doc["ci"] == pytest.approx([1.0, 1.0])
    assert ab["seed"] == aa_doc["seed"] == 3
    page = html.read_text()
    assert page.count("<svg") == 4 and f"{A} / {B}" in page and "Left out: #4 errored" in page  # pexec 3, numbered from #1 as reports do


def test_text_report_names_each_pair_a_over_b(tmp_path, capsys):
    path = _write(tmp_path, _export({f"{A}/{B}": (TOY, ["completed"] * 3)}), "native.json")
    assert main(["duet", path, "--no-steady-state", "--seed", "3", "--resamples", "500"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"pair {A} / {B} (x = a, y = b), pair executions #1, #2, #3\n")
    assert f"ggms (x/y, ratio)  {TOY_GGMS:.4g}" in out


@pytest.mark.parametrize("doc, message", [
    ({"format": "coldrun-native", "format_version": 1, "executions": [], "jobs": []},
     "no pair executions: the export is not of a [duet] experiment"),
    ({"format": "coldrun-native", "format_version": 1, "jobs": [],
      "executions": [_slot(f"{A}/{B}", 0, "a", A, [1.0])]},
     f"pair execution {A}/{B}#0 has only side(s) a"),
    ({"format": "coldrun-native", "format_version": 1, "jobs": [],
      "executions": [_slot(f"{A}/{B}", 0, "a", A, [1.0, 2.0]), _slot(f"{A}/{B}", 0, "b", B, [1.0])]},
     "execution #1 has 2 x iterations but 1 y iterations"),
])
def test_bad_exports_are_one_line_naming_the_file(tmp_path, capsys, doc, message):
    path = _write(tmp_path, doc, "bad.json")
    assert main(["duet", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert captured.err.startswith(f"coldrun-analyze: error: {path}") and message in captured.err, captured.err


def test_results_and_pairs_are_exclusive(tmp_path, capsys):
    assert main(["duet"]) == 2
    assert "give either RESULTS" in capsys.readouterr().err


def test_other_commands_see_each_side_as_an_execution_of_its_key(tmp_path):
    from analysis.inputs import native_to_krun
    bundle = _export({f"{A}/{B}": (TOY, ["completed"] * 3), f"{A}/{A}": ({"x": TOY["x"], "y": TOY["x"]},
                                                                           ["completed", "errored"])})
    bundle["jobs"] = [{"key": f"{A}/{B}", "pexec": 0, "state": "completed"}]   # pair keys are no keys
    results = native_to_krun(bundle, tmp_path / "x.json", warn=lambda line: None)
    assert results["pexec_flags"] == {A: ["C", "C", "C", "C", "C", "E", "E"], B: ["C", "C", "C"]}
    assert results["wallclock_times"][B] == TOY["y"]
    assert results["wallclock_times"][A][:3] == TOY["x"] and results["wallclock_times"][A][5] == []


def _unsynchronised(pair: str, pexec: int, side: str, key: str, starts: list[int], ends: list[int]) -> dict:
    slot = _slot(pair, pexec, side, key, [(e - s) / 1e9 for s, e in zip(starts, ends)])
    return dict(slot, pair={"barrier": None, "spin_us": None}, iteration_start_ns=starts, iteration_end_ns=ends)


# a: three 10 ns iterations; b, started 2 ns later, has a 2 ns one in between: by position the sides do not
# even have the same length; by overlap a[0]/b[0], a[1]/b[2], a[2]/b[3] (8, 6 and 8 ns, > 40% of both)
A_SPAN = ([0, 10, 20], [10, 20, 30])
B_SPAN = ([2, 12, 14, 22], [12, 14, 22, 32])


def test_a_pair_run_without_a_barrier_is_paired_by_overlap_and_the_report_says_so(tmp_path, capsys):
    pair = f"{A}/{B}"
    executions = []
    for pexec in range(3):
        executions += [_unsynchronised(pair, pexec, "a", A, *A_SPAN), _unsynchronised(pair, pexec, "b", B, *B_SPAN)]
    path = _write(tmp_path, {"format": "coldrun-native", "format_version": 1, "executions": executions, "jobs": []})
    assert main(["duet", path, "--json", "--no-steady-state", "--seed", "1", "--resamples", "200"]) == 0
    doc = json.loads(capsys.readouterr().out)["pairs"][0]
    assert doc["pairing"] == "overlap" and doc["iterations"] == [3, 3, 3]
    assert doc["overlap"]["0"] == {"paired": 3, "a_iterations": 3, "b_iterations": 4}
    assert doc["ggms"] == pytest.approx((10 / 8) ** (1 / 3), rel=1e-12)       # ratios 10/10, 10/8, 10/10
    assert main(["duet", path, "--no-steady-state", "--seed", "1", "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "pairing            by overlap (run without a barrier" in text and "#1 3 of 3/4" in text


def test_an_unsynchronised_pair_execution_without_overlap_is_left_out_and_a_missing_timeline_is_one_line(tmp_path, capsys):
    pair = f"{A}/{B}"
    far = ([100, 110, 120], [110, 120, 130])
    executions = []
    for pexec, b_span in enumerate((B_SPAN, B_SPAN, far)):
        executions += [_unsynchronised(pair, pexec, "a", A, *A_SPAN), _unsynchronised(pair, pexec, "b", B, *b_span)]
    doc = {"format": "coldrun-native", "format_version": 1, "executions": executions, "jobs": []}
    assert main(["duet", _write(tmp_path, doc), "--json", "--no-steady-state", "--seed", "1", "--resamples", "200"]) == 0
    out = json.loads(capsys.readouterr().out)["pairs"][0]
    assert out["pexecs"] == [0, 1] and out["left_out"] == {"2": "no iterations overlapping by > 40% (run without a barrier)"}
    del executions[1]["iteration_end_ns"]
    assert main(["duet", _write(tmp_path, doc, "bad.json"), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"pair execution {pair}#0 side b: ran without a barrier" in err and "iteration_end_ns" in err


def _timeline(start: int, durations: list[int]) -> tuple[list[int], list[int]]:
    ends = [start + sum(durations[:i + 1]) for i in range(len(durations))]
    return [e - d for e, d in zip(ends, durations)], ends


def test_an_unsynchronised_pair_is_cut_to_each_sides_own_steady_state_before_overlap_pairing(tmp_path, capsys):
    # a warms up for 40 of its 120 iterations, b for 50: each side's stable segment is found on its own series
    # (the paired list has gaps where the sides' iterations differ in length), then only pairs of steady
    # iterations are kept.
    a = [30 + i % 3 for i in range(40)] + [10 + i % 3 for i in range(80)]
    b = [30 + i % 2 for i in range(50)] + [10 + i % 2 for i in range(70)]
    pair = f"{A}/{B}"
    executions = []
    for pexec in range(3):
        executions += [_unsynchronised(pair, pexec, "a", A, *_timeline(0, a)),
                       _unsynchronised(pair, pexec, "b", B, *_timeline(1, b))]
    path = _write(tmp_path, {"format": "coldrun-native", "format_version": 1, "executions": executions, "jobs": []})
    assert main(["duet", path, "--json", "--seed", "1", "--resamples", "200", "--steady-state"]) == 0
    doc = json.loads(capsys.readouterr().out)["pairs"][0]
    assert doc["pairing"] == "overlap" and doc["steady_state"]
    for trim in doc["excluded"]:    # segments index each side's own 120 iterations, not the shorter paired list
        assert 0 < trim["x_segment"][0] <= 40 and 0 < trim["y_segment"][0] <= 50, trim
        assert trim["x_segment"][1] == trim["y_segment"][1] == 120 and trim["x_note"] is None is trim["y_note"]
    assert main(["duet", path, "--json", "--no-steady-state", "--seed", "1", "--resamples", "200"]) == 0
    whole = json.loads(capsys.readouterr().out)["pairs"][0]
    assert 0 < doc["iterations"][0] == doc["overlap"]["0"]["paired"] < whole["overlap"]["0"]["paired"]
    assert 0.8 < doc["ggms"] < 1.25                    # steady 10-12 ns against 10-11 ns, no 30 ns warm-up



def test_a_pair_both_with_and_without_a_barrier_says_so_in_text_json_and_html(tmp_path, capsys):
    pair = f"{A}/{B}"
    executions = [_slot(pair, 0, "a", A, [10e-9] * 3), _slot(pair, 0, "b", B, [10e-9] * 3),
                  _slot(pair, 1, "a", A, [10e-9] * 3), _slot(pair, 1, "b", B, [8e-9] * 3),
                  _unsynchronised(pair, 2, "a", A, *A_SPAN), _unsynchronised(pair, 2, "b", B, *B_SPAN)]
    path = _write(tmp_path, {"format": "coldrun-native", "format_version": 1, "executions": executions, "jobs": []})
    html = tmp_path / "duet.html"
    assert main(["duet", path, "--no-steady-state", "--seed", "1", "--resamples", "200", "--html", str(html)]) == 0
    assert "; the others by position (barrier)" in capsys.readouterr().out
    assert "iterations paired by overlap where run without a barrier, else position (barrier)." in html.read_text()
