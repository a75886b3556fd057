"""Fuzzing experiment files through `coldrun check` (issue 10 §6).

Hypothesis writes experiment files: valid experiments (configs/demo.toml and
the integration tests' fake-runner experiment) with one field replaced, removed
or misspelt, random TOML documents, and text-level mutations (brackets, quotes,
NUL, invalid UTF-8, deep nesting).  Each goes through `coldrun check`
in-process (supervisor.cli.main, for speed), a few through a real subprocess,
and for every file:

- no traceback (any exception other than the CLI's handled ones fails the test);
- a refused file exits non-zero and every stderr line is "coldrun: FILE: ...",
  the same lines the loader's error holds (one per problem), and a problem with
  a field names the field that was changed;
- exit 0 only for a file whose experiment really loads;
- nothing is written, and a bad file never touches an existing state dir.

COLDRUN_FUZZ_EXAMPLES (default 150) sets the examples per property; the cases
are the same on every run unless COLDRUN_FUZZ_RANDOM=1 (then explore new ones).
"""

from __future__ import annotations

import contextlib
import datetime
import io
import math
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisor.cli import main
from supervisor.errors import ColdrunError
from supervisor.experiment.model import Experiment, dotted, parse_experiment
from supervisor.kinds.stop.table import Stop, Wps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from coldrun_helpers import REPO as REPO_ROOT, coldrun, make_experiment  # noqa: E402  (integration helpers, not a package)

EXAMPLES = int(os.environ.get("COLDRUN_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                derandomize=os.environ.get("COLDRUN_FUZZ_RANDOM") != "1",
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CASES = {"tried": 0, "refused": 0, "accepted": 0}

# Whole-experiment problems name the field that breaks the whole rather than the one changed.
WHOLE_EXPERIMENT_FIELDS = ("executions", "skip", "vms.", "stop")


# -- writing TOML (tomllib only reads) -----------------------------------------------------------------

def _toml_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_string(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def toml_document(doc: dict) -> str:
    """Top-level keys one per line, every table inline: any structure of values round-trips."""
    return "".join(f"{_toml_string(k)} = {toml_value(v)}\n" for k, v in doc.items())


# -- what the fuzzer writes -----------------------------------------------------------------------------

EDGE_INTS = [0, 1, -1, 2, 1000, 99_999, 100_000, 100_001, 10 ** 7, 2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1,
             2 ** 63 - 1, -2 ** 63, 10 ** 30]
EDGE_STRINGS = ["", "0", "0B", "1KiB", "64MiB", "63MiB", "1MiB", "1023KiB", "2GiB", "9" * 30 + "TiB", "1s", "0.5s",
                "500ms", "30d", "31d", "3 fortnights", "nan", "inf", "*:*:*", "fib:*:*", "a:b", "python", "c",
                "external", "@python", "no-such-vm", "startup", "iterations", "random", "round-robin", "requeue",
                "bench.py", "../../etc/passwd", "a\x00b", "a\nb", "ünïcode", "[", "{shell = 1}"]
characters = st.characters(exclude_categories=("Cs",))   # TOML text is UTF-8: no lone surrogates
keys = st.one_of(st.text(characters, min_size=1, max_size=12),
                 st.sampled_from([f for m in (Experiment, Stop, Wps) for f in m.model_fields] + ["shell", "to", "quota"]))
scalars = st.one_of(
    st.booleans(), st.integers(), st.sampled_from(EDGE_INTS),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e9, 1e300, 5.0, 0.5]),
    st.text(characters, max_size=20), st.sampled_from(EDGE_STRINGS), st.dates(), st.times(),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


def paths(doc, prefix=()):
    """Every key and list position of a parsed document, tables before their contents."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        yield prefix + (k,)
        yield from paths(v, prefix + (k,))


def set_at(doc, path, action, value):
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "replace":
        parent[last] = value
    elif action == "remove":
        del parent[last]
    elif action == "add" and isinstance(parent[last], dict):
        parent[last][value[0]] = value[1]
    elif action == "misspell" and isinstance(parent, dict):
        parent[str(last)[:-1] + "x"] = parent.pop(last)


# -- the oracle -----------------------------------------------------------------------------------------

def run_check(path: Path) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["check", str(path)])   # anything but a handled error escapes here and fails the test
    # check's problems (stdout, exit 1) are held to the same contract as its refusals (stderr, exit 2)
    problems = [f"coldrun: {ln.removeprefix('problem: ')}" for ln in out.getvalue().splitlines()
                if ln.startswith("problem: ")]
    return rc, err.getvalue().splitlines() + problems, out.getvalue()


def check_file(path: Path, text: bytes) -> tuple[int, list[str], ColdrunError | None]:
    """Run check on ``text`` and assert the contract; return exit code, stderr lines and the loader's error."""
    path.write_bytes(text)
    before = sorted(path.parent.iterdir())
    rc, lines, out = run_check(path)
    CASES["tried"] += 1
    try:
        parse_experiment(text, str(path))
        loader_error = None
    except ColdrunError as e:
        loader_error = e
    assert sorted(path.parent.iterdir()) == before, "check wrote something"
    if rc == 0:
        CASES["accepted"] += 1
        assert loader_error is None, "check accepted a file the loader refuses"
        assert lines == [] and out.startswith(f"{path}: OK")
    else:
        CASES["refused"] += 1
        assert lines, "non-zero exit without a message"
        assert "Traceback" not in out
        for line in lines:
            assert line.startswith(f"coldrun: {path}: ") and len(line) > len(f"coldrun: {path}: "), line
        if loader_error is not None:
            assert lines == [f"coldrun: {ln}" for ln in str(loader_error).split("\n")]
            assert not any("more problem" in ln for ln in lines)
    return rc, lines, loader_error


def fields_named(lines: list[str], path: Path) -> list[str]:
    return [ln[len(f"coldrun: {path}: "):].split(": ", 1)[0] for ln in lines]


# -- the base experiments ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Valid experiments, each in its own directory with its benchmark files, checked to pass."""
    out = {}
    demo_dir = tmp_path_factory.mktemp("demo")
    (demo_dir / "demo").symlink_to(REPO_ROOT / "configs" / "demo")
    demo_text = (REPO_ROOT / "configs" / "demo.toml").read_bytes()
    out["demo"] = (demo_dir / "exp.toml", tomllib.loads(demo_text.decode()))
    adaptive_dir = tmp_path_factory.mktemp("adaptive")          # a [stop] table, and [stop.wps] added below
    (adaptive_dir / "demo").symlink_to(REPO_ROOT / "configs" / "demo")
    adaptive = tomllib.loads((REPO_ROOT / "configs" / "adaptive.toml").read_text())
    out["adaptive"] = (adaptive_dir / "exp.toml", adaptive)
    wps_dir = tmp_path_factory.mktemp("wps")
    (wps_dir / "demo").symlink_to(REPO_ROOT / "configs" / "demo")
    wps = tomllib.loads((REPO_ROOT / "configs" / "adaptive.toml").read_text())
    del wps["stop"]["adapt_iterations"], wps["stop"]["max_iterations"]
    wps["stop"]["wps"] = {"min_param": 10, "max_param": 30, "session": "20s"}
    out["wps"] = (wps_dir / "exp.toml", wps)
    fake_dir = tmp_path_factory.mktemp("fake")
    fake = make_experiment(fake_dir, {"a": "ok", "b": "ok"}, executions=2)
    out["fake"] = (fake_dir / "exp.toml", tomllib.loads(fake.read_text()))
    for path, doc in out.values():
        if os.geteuid() == 0:     # as root the benchmarks would run as nobody, who cannot reach /root (root_runs.py)
            doc.setdefault("platform", {}).setdefault("benchmark_user", False)
        rc, lines, _ = check_file(path, toml_document(doc).encode())
        assert rc == 0, lines
    return out


# -- properties -------------------------------------------------------------------------------------------

@FUZZ
@given(data=st.data())
def test_one_field_changed(bases, data):
    """Replace, remove, misspell or add to one field of a valid experiment: handled, and named when refused."""
    name = data.draw(st.sampled_from(sorted(bases)), label="base")
    path, doc = bases[name]
    doc = tomllib.loads(toml_document(doc))      # a fresh copy
    where = data.draw(st.sampled_from(list(paths(doc))), label="field")
    action = data.draw(st.sampled_from(["replace", "replace", "replace", "remove", "add", "misspell"]))
    value = data.draw(st.tuples(keys, values) if action == "add" else values, label="value")
    set_at(doc, where, action, value)
    rc, lines, loader_error = check_file(path, toml_document(doc).encode())
    if loader_error is not None and not any(ln.startswith(f"coldrun: {path}: malformed TOML") for ln in lines):
        named = fields_named(lines, path)
        changed = [dotted(where)]
        if action == "misspell":
            changed.append(dotted(where[:-1] + (str(where[-1])[:-1] + "x",)))
        parent = dotted(where[:-1])
        assert any(f.startswith(c) or c.startswith(f) for f in named for c in changed) or any(
            (parent and f.startswith(parent)) or f.startswith(WHOLE_EXPERIMENT_FIELDS) for f in named), \
            (changed, lines)


@FUZZ
@given(doc=st.dictionaries(keys, values, max_size=8))
def test_random_documents(bases, doc):
    path = bases["fake"][0].with_name("random.toml")
    rc, lines, _ = check_file(path, toml_document(doc).encode())
    assert rc != 0          # no random document is a complete experiment with benchmark files


MUTATIONS = st.sampled_from(["[", "]", "{", "}", "[[", '"', "'", '"""', "\\", "=", "\n", "#", ",", ".", "\x00",
                             "\\u0000", "nan", "inf", "true", "1e9", "9223372036854775807", "[a]\n", "\ufeff"])


@FUZZ
@given(data=st.data())
def test_text_mutations(bases, data):
    """Insert TOML punctuation, delete spans, duplicate lines or break UTF-8 in a valid file's text."""
    path, doc = bases[data.draw(st.sampled_from(sorted(bases)), label="base")]
    text = bytearray(toml_document(doc).encode()) if data.draw(st.booleans()) else \
        bytearray((REPO_ROOT / "configs" / "demo.toml").read_bytes())
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, len(text)), label="at")
        kind = data.draw(st.sampled_from(["insert", "insert", "delete", "duplicate", "byte"]))
        if kind == "insert":
            text[at:at] = data.draw(st.one_of(MUTATIONS, st.text(characters, max_size=8))).encode()
        elif kind == "delete":
            del text[at:at + data.draw(st.integers(1, 40))]
        elif kind == "duplicate":
            start = text.rfind(b"\n", 0, at) + 1
            end = text.find(b"\n", at)
            text[start:start] = text[start:end + 1 if end >= 0 else len(text)]
        else:
            text[at:at] = bytes([data.draw(st.integers(0, 255))])
    check_file(path, bytes(text))


@FUZZ
@given(depth=st.integers(0, 3000), opener=st.sampled_from(["[", "{a = ", "[{b = "]), close=st.booleans())
def test_nesting(bases, depth, opener, close):
    path, doc = bases["fake"]
    closer = {"[": "]", "{a = ": "}", "[{b = ": "}]"}[opener]
    text = toml_document(doc) + "deep = " + opener * depth + "1" + (closer * depth if close else "") + "\n"
    t = time.process_time()     # CPU, not wall: a loaded machine's wall clock failed this (1.8 s at load 15)
    rc, lines, _ = check_file(path, text.encode())
    assert time.process_time() - t < 1.0
    assert rc != 0


def test_report_cases(bases):
    """Runs after the properties (file order): every case tried was handled one way or the other."""
    print(f"\nexperiment fuzz: {CASES['tried']} files checked, {CASES['refused']} refused with one line per "
          f"problem, {CASES['accepted']} accepted (all really load)")
    assert CASES["tried"] == CASES["refused"] + CASES["accepted"] > 0


# -- a few real processes --------------------------------------------------------------------------------

WORST = {
    "executions": "executions = 9223372036854775807",
    "execution_timeout": "execution_timeout = nan",
    "heap_limit": 'heap_limit = "1KiB"',
    "stack_limit": 'stack_limit = "0B"',
    "skip": 'skip = ["*:*:*"]',
}


def test_subprocess_worst_inputs_and_records_kept(tmp_path):
    """The issue's worst inputs through real `coldrun check` and `start` into an existing state dir."""
    good = make_experiment(tmp_path, {"a": "ok"})
    state = tmp_path / "s"
    r = coldrun("start", str(good), "--simulate-reboots", "--state-dir", str(state))
    assert r.returncode == 0, r.stderr
    records = {f: f.read_bytes() for f in state.rglob("*") if f.is_file()}
    for field, line in WORST.items():
        bad = tmp_path / f"bad-{field}.toml"
        text = good.read_text()
        bad.write_text(text.replace("executions = 1\n", line + "\n") if field == "executions"
                       else text.replace("executions = 1\n", f"executions = 1\n{line}\n"))
        for cmd in (("check", str(bad)), ("start", str(bad), "--simulate-reboots", "--state-dir", str(state))):
            r = coldrun(*cmd)
            assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
            assert r.stderr.splitlines() == [r.stderr.splitlines()[0]]
            assert r.stderr.startswith(f"coldrun: {bad}: {field}: "), r.stderr
    assert {f: f.read_bytes() for f in state.rglob("*") if f.is_file()} == records
