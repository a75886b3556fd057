"""Any bad analysis input ends in one line naming the file, exit status 2 (issue 10 §6).

Hand-picked bad files first (each through every command that reads a file),
then hypothesis: arbitrary and mutated documents, plain, compressed or cut
short, through the input loader and the commands behind it. Never a
traceback; a refusal is exactly one line, naming the file.
"""

from __future__ import annotations

import bz2
import copy
import json
import math
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.cli import main
from analysis.inputs import MAX_JSON_DEPTH

from shared_paths import GOLDEN

SUMMARY = json.loads((GOLDEN / "warmup_stats" / "corpus_500" / "summary.json").read_text())
UNAME = "Linux rig1 6.1.0"
ERROR = "coldrun-analyze: error: "


def _series(seed: int, n: int = 24) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(1.0 + rng.normal(0, 0.001)) for _ in range(n)]


RAW = {"wallclock_times": {"a:vm:v": [_series(1), _series(2)], "b:vm:v": [_series(3), []]},
       "pexec_flags": {"a:vm:v": ["C", "C"], "b:vm:v": ["C", "E"]}, "audit": {"uname": UNAME}}
NATIVE = {"format": "coldrun-native", "format_version": 1, "audit": {"uname": UNAME},
          "jobs": [{"index": 0, "key": "a:vm:v", "pexec": 0, "state": "completed"},
                   {"index": 1, "key": "a:vm:v", "pexec": 1, "state": "errored"}],
          "executions": [{"key": "a:vm:v", "pexec": 0, "state": "completed", "wallclock_times": _series(4)},
                         {"key": "a:vm:v", "pexec": 1, "state": "errored", "wallclock_times": []}]}


def _annotated() -> dict:
    from analysis.pipeline import annotate
    return annotate(copy.deepcopy(RAW), jobs=1, warn=lambda _: None)


ANNOTATED = _annotated()


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _with(doc: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(doc)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return out


def _bad_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, text the error line must contain besides the file name)."""
    files: dict[str, tuple[Path, str]] = {}

    def add(name, path, needle):
        files[name] = (path, needle)

    p = tmp / "deep.json"
    p.write_text("[" * 100_000)
    add("100000 nested [", p, "nested too deeply")
    p = tmp / "deep_closed.json"
    p.write_text("[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5))
    add("nested deeper than the limit", p, "nested too deeply")
    p = tmp / "cut.json.bz2"
    p.write_bytes(bz2.compress(json.dumps(RAW).encode())[:-40])
    add("truncated bz2", p, "truncated")
    p = tmp / "corrupt.json.bz2"
    p.write_bytes(b"BZh9" + b"\x00" * 64)
    add("corrupt bz2", p, "bzip2")
    p = tmp / "plain.json.bz2"
    p.write_text(json.dumps(RAW))
    add("not bz2 despite the name", p, "not bzip2")
    p = tmp / "empty.json"
    p.write_text("")
    add("empty file", p, "empty file")
    p = tmp / "blank.json"
    p.write_text("  \n")
    add("blank file", p, "empty file")
    p = tmp / "empty.json.bz2"
    p.write_bytes(bz2.compress(b""))
    add("empty bz2", p, "empty file")
    p = tmp / "adir.json"
    p.mkdir()
    add("a directory", p, "is a directory")
    p = tmp / "binary.json"
    p.write_bytes(b"\xff\xfe\x00garbage\x80")
    add("binary", p, "")
    add("a JSON number", _write(tmp / "number.json", 3), "not a results file")
    add("wallclock_times a list", _write(tmp / "wct_list.json", {"wallclock_times": [1, 2]}), "")
    add("no usable benchmark", _write(tmp / "nokeys.json", {"wallclock_times": {"bad": [[1.0]]}}),
        "no usable benchmark")
    add("no benchmarks at all", _write(tmp / "nothing.json", {"wallclock_times": {}}), "no usable benchmark")
    add("native wrong version", _write(tmp / "native9.json", dict(NATIVE, format_version="1")), "format_version")
    add("native executions a dict", _write(tmp / "native_dict.json", dict(NATIVE, executions={})), "executions")
    add("summary NaN perf", _write(tmp / "s_nan.json", _with(
        SUMMARY, ("machines", "oraclebox", "Graal", "richards", "steady_state_time"), math.nan)),
        "steady_state_time")
    add("summary inf in list", _write(tmp / "s_inf.json", _with(
        SUMMARY, ("machines", "oraclebox", "Graal", "fasta", "steady_state_iteration_list"), [1.0, math.inf])),
        "steady_state_iteration_list")
    add("summary count a string", _write(tmp / "s_str.json", _with(
        SUMMARY, ("machines", "oraclebox", "Graal", "fasta", "detailed_classification", "flat"), "4")),
        "detailed_classification")
    add("summary iqr of strings", _write(tmp / "s_iqr.json", _with(
        SUMMARY, ("machines", "oraclebox", "Graal", "fasta", "steady_state_iteration_iqr"), ["a", "b"])),
        "steady_state_iteration_iqr")
    add("summary failed list wrong", _write(tmp / "s_failed.json", dict(
        SUMMARY, failed_process_executions={"m": {"v": {"b": [{"index": "1"}]}}})), "failed_process_executions")
    add("annotated NaN mean", _write(tmp / "a_nan.json", _with(
        ANNOTATED, ("changepoint_means", "a:vm:v", 0), [math.nan])), "changepoint_means.a:vm:v[0]")
    add("annotated class unknown", _write(tmp / "a_cls.json", _with(
        ANNOTATED, ("classifications", "a:vm:v", 1), "sideways")), "classifications.a:vm:v[1]")
    add("annotated outlier out of range", _write(tmp / "a_out.json", _with(
        ANNOTATED, ("all_outliers", "a:vm:v", 0), [10_000])), "all_outliers.a:vm:v[0]")
    add("annotated short list", _write(tmp / "a_short.json", _with(
        ANNOTATED, ("changepoints", "a:vm:v"), [[]])), "changepoints.a:vm:v")
    add("annotated inf time", _write(tmp / "a_inf.json", _with(
        ANNOTATED, ("wallclock_times", "a:vm:v", 0, 3), math.inf)), "wallclock_times.a:vm:v[0]")
    add("annotated missing keys", _write(tmp / "a_missing.json", {k: v for k, v in ANNOTATED.items()
                                                                  if k != "all_outliers"}), "all_outliers")
    add("annotated bad delta", _write(tmp / "a_delta.json", _with(
        ANNOTATED, ("classifier", "delta"), "fast")), "classifier.delta")
    add("annotated huge integer time", _write(tmp / "a_big.json", _with(
        ANNOTATED, ("wallclock_times", "a:vm:v", 0, 0), 10 ** 400)), "wallclock_times.a:vm:v[0]")
    return files


def _commands(path: Path, out: Path) -> dict[str, list[str]]:
    return {
        "table": ["table", str(path)],
        "table-html": ["table", str(path), "--format", "html"],
        "plot": ["plot", str(path), "-o", str(out / "plots")],
        "diff": ["diff", str(path), str(path)],
        "summary": ["summary", str(path), "-o", str(out / "s.json")],
        "annotate": ["annotate", str(path), "-o", str(out / "a.json")],
    }


# Annotate and summary re-analyse annotated input from its times, so a broken
# annotation is no error for them, and a bad time only drops its execution
# (with a warning, as for any raw results; test_failed_executions); they
# refuse everything else.
REANALYSED = {"annotated NaN mean", "annotated class unknown", "annotated outlier out of range",
              "annotated short list", "annotated missing keys", "annotated bad delta",
              "annotated inf time", "annotated huge integer time"}


def test_every_bad_file_is_one_line_through_every_command(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    checked = 0
    for name, (path, needle) in _bad_files(tmp_path).items():
        for command, argv in _commands(path, out).items():
            if command in ("summary", "annotate") and (name in REANALYSED or name.startswith("summary")):
                continue  # not an input those commands take the same way; covered below
            # plot never reads a summary
            want = "is a summary JSON" if command == "plot" and name.startswith("summary") else needle
            code = main(argv)
            err = capsys.readouterr().err
            lines = err.strip().splitlines()
            assert code == 2, (name, command, err)
            assert len(lines) == 1 and lines[0].startswith(ERROR), (name, command, err)
            assert str(path) in lines[0] and want in lines[0], (name, command, lines[0])
            checked += 1
    assert checked > 120


def test_summary_json_is_not_raw_results(tmp_path, capsys):
    path = _write(tmp_path / "summary.json", SUMMARY)
    for argv in (["annotate", str(path), "-o", str(tmp_path / "a.json")],
                 ["summary", str(path), "-o", str(tmp_path / "s.json")],
                 ["plot", str(path), "-o", str(tmp_path / "p")]):
        assert main(argv) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(ERROR + str(path)), lines


# -- hypothesis ---------------------------------------------------------------

KEYS = ["wallclock_times", "machines", "classifications", "format", "format_version", "executions", "jobs",
        "key", "pexec", "state", "pexec_flags", "audit", "uname", "a:vm:v", "b:vm:v", "oraclebox",
        "classification", "detailed_classification", "failed_process_executions", "execution_states",
        "index", "flat", "warmup", "window_size", "classifier", "delta", "steady"]
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 400)
           | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(KEYS + ["coldrun-native", "C", "E"])
           | st.text(max_size=8))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5),
                                                                 inner, max_size=4),
    max_leaves=30,
)


def _paths(doc, prefix=()):
    """Every path to a value inside doc."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _mutated(base):
    paths = [p for p in _paths(base) if p]
    return st.tuples(st.sampled_from(paths), JSON_VALUES).map(lambda pv: _with(base, *pv))


SMALL_SUMMARY = {"warmup_format_version": "2",
                 "machines": {"m": {"Graal": {b: SUMMARY["machines"]["oraclebox"]["Graal"][b]
                                              for b in ("fasta", "richards")}}}}
DOCUMENTS = (JSON_VALUES | _mutated(RAW) | _mutated(NATIVE) | _mutated(ANNOTATED) | _mutated(SMALL_SUMMARY)
             | st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=5))


@st.composite
def files(draw):
    """(bytes of a file, its name): a document, maybe compressed, maybe cut short."""
    text = json.dumps(draw(DOCUMENTS)).encode()
    packing = draw(st.sampled_from(["plain", "bz2", "bz2-cut", "plain-cut"]))
    if packing.startswith("bz2"):
        text = bz2.compress(text)
    if packing.endswith("cut"):
        text = text[: draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))]
    return text, "input.json.bz2" if packing.startswith("bz2") else "input.json"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=files(), command=st.sampled_from(["table", "diff", "plot", "summary"]))
def test_fuzzed_inputs_never_trace_back(tmp_path, capsys, data, command):
    content, name = data
    path = tmp_path / name
    path.write_bytes(content)
    argv = {"table": ["table", str(path), "--quality", "low", "--seed", "1", "--jobs", "1"],
            "diff": ["diff", str(path), str(path), "--quality", "low", "--seed", "1", "--jobs", "1"],
            "plot": ["plot", str(path), "-o", str(tmp_path / "plots"), "--execution", "0", "--key", "a:vm:v"],
            "summary": ["summary", str(path), "-o", str(tmp_path / "s.json"), "--resamples", "50",
                        "--seed", "1", "--jobs", "1"]}[command]
    code = main(argv)  # an escaping exception fails the test with its traceback
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [ln for ln in err.splitlines() if ln.startswith(ERROR)]
    assert code in (0, 2), err
    if code == 2:
        assert len(errors) == 1 and str(path) in errors[0], err
        # Nothing but warnings before the error line.
        assert all(ln.startswith("coldrun-analyze: warning: ") for ln in err.splitlines()[:-1]), err
    else:
        assert not errors


CSV_CELLS = st.sampled_from(["0", "1", "2", "fib", "crash", "1.0", "0.5", "nan", "-1", "inf", "1e999", "x", "",
                             "99999999999", "-3"]) | st.text(max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(rows=st.lists(st.lists(CSV_CELLS, max_size=7), max_size=7), raw=st.binary(max_size=30),
       as_bytes=st.booleans())
def test_fuzzed_csv_never_traces_back(tmp_path, capsys, rows, raw, as_bytes):
    path = tmp_path / "results.csv"
    if as_bytes:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(",".join(r) for r in rows))
    code = main(["table", str(path), "--vm", "PyPy", "--language", "python", "--quality", "low", "--seed", "1"])
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith(ERROR)]
    assert code in (0, 2) and "Traceback" not in err, err
    if code == 2:
        assert len(errors) == 1 and err.splitlines()[-1] == errors[0] and str(path) in errors[0], err
    else:
        assert not errors


def test_plot_writes_only_inside_its_output_directory(tmp_path, capsys):
    """Issue 26 item 16: a key like ../../x:vm:v in a results file wrote its plot outside -o."""
    doc = {"wallclock_times": {"../../x:vm:v": [_series(5)], "a/b:vm:v": [_series(6)]},
           "pexec_flags": {"../../x:vm:v": ["C"], "a/b:vm:v": ["C"]}, "audit": {"uname": UNAME}}
    work = tmp_path / "in" / "deep"
    work.mkdir(parents=True)
    path = _write(work / "r.json", doc)
    out = work / "plots"
    assert main(["plot", str(path), "-o", str(out), "--jobs", "1"]) == 0
    written = sorted(p for p in tmp_path.rglob("*.png"))
    assert len(written) == 2 and all(p.parent == out for p in written), written


def test_a_key_with_control_characters_stays_on_its_line(tmp_path, capsys):
    """Found by the fuzz test above: a benchmark key holding U+001E (which str.splitlines, like many a log
    reader, takes for a line break) split the error line in two.  Errors and warnings print such characters
    as escapes."""
    path = tmp_path / "input.json"
    for doc in ({"wallclock_times": {"\x1e": None, "x\ny": [[1.0]], "a:vm:v": [[1.0, 1.0]]},     # raw results
                 "audit": {"uname": "Linux m 6"}},
                {**ANNOTATED, "wallclock_times": {"\x1e": None}}):                           # annotated results
        path.write_text(json.dumps(doc))
        assert main(["table", str(path), "--quality", "low", "--seed", "1", "--jobs", "1"]) in (0, 2)
        err = capsys.readouterr().err
        assert all(ln.startswith(("coldrun-analyze: warning: ", ERROR)) for ln in err.splitlines()), err
        assert "\\x1e" in err, err
