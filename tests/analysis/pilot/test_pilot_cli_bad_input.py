"""Bad input to ``coldrun-analyze pilot`` / ``compare``: one line naming the file (and line) or the
option, exit 2, no traceback."""

from __future__ import annotations

import json

import pytest

from analysis import cli
from pilot_golden import INPUTS


def fails(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:  # argparse's own refusals exit through SystemExit
        raise SystemExit(cli.main(argv))
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text,needle", [
    ("", "empty file; expected one reading (a number) per line"),
    ("\n\n  \n", "empty file"),
    ("1.0\n2.0\nabc\n4.0\n", "line 3: reading 'abc' is not a number"),
    ("1.0\nnan\n3.0\n", "line 2: reading 'nan' is not a finite number"),
    ("1.0\n2.0\ninf\n", "line 3: reading 'inf' is not a finite number"),
    ("-1.5\n2.0\n3.0\n", "line 1: reading is -1.5; it must be >= 0"),
    ("1.0\n2.0\n", "2 reading(s); Pilot's analysis needs at least 3"),
])
def test_readings_file(text, needle, tmp_path, capsys):
    path = write(tmp_path, "r.txt", text)
    line = fails(["pilot", "--readings", path, "--json"], capsys)
    assert line.startswith(f"coldrun-analyze: error: {path}: ") and needle in line


def test_missing_readings_file(tmp_path, capsys):
    path = str(tmp_path / "absent.txt")
    assert fails(["pilot", "--readings", path], capsys) == f"coldrun-analyze: error: {path}: no such file"


def test_readings_a_harmonic_mean_refuses_zero(tmp_path, capsys):
    path = write(tmp_path, "r.txt", "1\n0\n2\n3\n")
    line = fails(["pilot", "--readings", path, "--mean", "harmonic"], capsys)
    assert path in line and "a harmonic mean needs values > 0" in line


def test_subsession_size_too_large(capsys):
    line = fails(["pilot", "--readings", str(INPUTS / "ferrari48.txt"), "--subsession-size", "30"], capsys)
    assert "subsession size 30 makes 1 subsession(s) of the 48 readings" in line


@pytest.mark.parametrize("option,value", [("--ci-width", "0"), ("--ci-percent", "0"), ("--ci-percent", "0%"),
                                          ("--ci-width", "-1"), ("--confidence", "1"), ("--ac-limit", "0"),
                                          ("--ci-percent", "10")])
def test_zero_or_out_of_range_target(option, value, capsys):
    line = fails(["pilot", "--readings", str(INPUTS / "ferrari48.txt"), option, value], capsys)
    assert line.startswith("coldrun-analyze pilot: error: argument " + option) and repr(value) in line


def test_zero_target_from_a_zero_mean(tmp_path, capsys):
    path = write(tmp_path, "zeros.txt", "0\n0\n0\n0\n")
    line = fails(["pilot", "--readings", path], capsys)
    assert path in line and "target CI width is 0" in line and "ci_width" in line


@pytest.mark.parametrize("text,needle", [
    ("work_amount,duration_ns\n10,100\n0,200\n30,300\n", "line 3: work amount is 0; it must be > 0"),
    ("work_amount,duration_ns\n10,100\n20,-5\n30,300\n", "line 3: duration (ns) is -5; it must be > 0"),
    ("work_amount,duration_ns\n10,100\n20,x\n", "line 3: duration (ns) 'x' is not a number"),
    ("work,duration\n10,100\n", "line 1: no column work_amount, duration_ns"),
    ("work_amount,duration_ns\n", "no rounds"),
    ("work_amount,duration_ns\n10,100\n20\n", "line 3: 1 column(s); expected 2"),
    ("work_amount,duration_ns\n10,100000\n20,200000\n", "WPS needs at least 3"),
])
def test_wps_file(text, needle, tmp_path, capsys):
    path = write(tmp_path, "w.csv", text)
    line = fails(["pilot", "--wps", path], capsys)
    assert line.startswith(f"coldrun-analyze: error: {path}: ") and needle in line


@pytest.mark.parametrize("argv,needle", [
    (["pilot"], "give RESULTS files, --readings FILE or --wps FILE.csv (exactly one of them)"),
    (["pilot", "--readings", "r.txt", "--wps", "w.csv"], "exactly one of them"),
    (["pilot", "--readings", "r.txt", "--variant", "fork"], "--variant: not used with --readings"),
    (["pilot", "--wps", "w.csv", "--ci-width", "1"], "--ci-width: not used with --wps"),
    (["pilot", "results.json", "--mean", "harmonic"], "--mean: not used with RESULTS files"),
    (["compare", "a.json"], "compare takes two results files A B (got 1)"),
    (["compare", "--welch", "1", "2", "x", "4", "5", "6"], "--welch N1: expected a whole number"),
    (["compare", "--welch", "1", "-2", "3", "4", "5", "6"], "first variance is -2.0; a variance cannot be negative"),
    (["compare", "--welch", "1", "0", "3", "4", "0", "6"], "both variances are 0"),
    (["compare", "a.json", "--welch", "1", "2", "3", "4", "5", "6"], "not both"),
])
def test_options_that_do_not_fit(argv, needle, capsys):
    assert needle in fails(argv, capsys)


def test_html_for_one_series_is_refused(capsys):
    line = fails(["pilot", "--readings", str(INPUTS / "ferrari48.txt"), "--format", "html"], capsys)
    assert "--format html is for results files" in line


def test_results_file_problems(tmp_path, capsys):
    missing = str(tmp_path / "none.json")
    assert fails(["pilot", missing], capsys) == f"coldrun-analyze: error: {missing}: no such file"
    summary = write(tmp_path, "summary.json", json.dumps({"machines": {}}))
    assert "is a summary JSON, which has no per-iteration times" in fails(["pilot", summary], capsys)
    empty = write(tmp_path, "empty.json", "")
    assert f"{empty}: empty file" in fails(["compare", empty, summary], capsys)


def test_csv_results_need_vm_and_language(tmp_path, capsys):
    path = write(tmp_path, "r.csv", "pexec,bench,t0\n0,fib,1.0\n")
    assert "CSV input needs --vm and --language" in fails(["pilot", path], capsys)
