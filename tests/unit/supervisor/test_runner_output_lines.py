"""A failed run's stderr as the log and the record's reason show it: whole lines, the failing one named."""

from __future__ import annotations

from supervisor.launch.process import Tail, error_line, last_lines

NODE = """/tmp/b/bench.js:3
    throw new Error("boom");
    ^

Error: boom
    at run_iter (/tmp/b/bench.js:3:11)
    at Object.<anonymous> (/usr/lib/coldrun/iteration_runners/javascript/iterations_runner.js:80:5)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1310:10)
    at Module.load (node:internal/modules/cjs/loader:1119:32)
    at Module._load (node:internal/modules/cjs/loader:960:12)
    at Module.require (node:internal/modules/cjs/loader:1143:19)
    at require (node:internal/modules/cjs/helpers:110:18)
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)

Node.js v18.19.0
"""
PYTHON = """Traceback (most recent call last):
  File "/x/error_handling.py", line 2, in run_iter
    1 / 0
ZeroDivisionError: division by zero
"""


def test_last_lines_start_at_a_line_and_keep_the_end():
    tail = last_lines(NODE, 300)
    assert len(tail) <= 300 and NODE.rstrip("\n").endswith(tail)
    assert NODE.splitlines().count(tail.splitlines()[0]) == 1       # a whole line, not the end of one
    assert tail.splitlines()[-1] == "Node.js v18.19.0"
    assert last_lines("short\n", 300) == "short"
    long_line = "x" * 500 + "END"
    assert last_lines(long_line, 100) == "..." + long_line[-97:]


def test_error_line_is_the_line_that_names_the_failure():
    assert error_line(NODE) == "Error: boom"
    assert error_line(PYTHON) == "ZeroDivisionError: division by zero"
    assert error_line("IterationsRunner: error: cannot load the libkruntime JNI glue\n") == \
        "IterationsRunner: error: cannot load the libkruntime JNI glue"
    assert error_line("just output\nlast words\n") == "last words"
    assert error_line("") is None and error_line("\n \n") is None
    assert error_line("error: " + "y" * 1000, limit=50) == "error: " + "y" * 40 + "..."


def test_a_cut_tail_starts_at_a_line_boundary():
    t = Tail(64)
    t.add(b"first line that will be cut\n" * 10 + b"Error: the failing line\n")
    assert t.text().splitlines()[0] == "first line that will be cut"
    assert t.text().endswith("Error: the failing line\n") and t.truncated
    whole = Tail(1024)
    whole.add(b"partial first\nsecond\n")
    assert whole.text() == "partial first\nsecond\n"


LUAJIT = """/tmp/b/bench.lua:2: attempt to call field 'unpack' (a nil value)
stack traceback:
        /tmp/b/bench.lua:2: in function 'BM_run_iter'
        iterations_runner.lua:131: in function <iterations_runner.lua:96>
        [C]: in function 'xpcall'
iterations_runner.lua: error: the benchmark failed: /tmp/b/bench.lua:2: attempt to call field 'unpack' (a nil value)
"""


def test_the_runner_s_own_last_line_beats_any_other():
    # issue 25: the reason was LuaJIT's "[C]: at 0x..." frame; the runner's line carries Lua's own message
    assert error_line(LUAJIT) == LUAJIT.splitlines()[-1]
    assert error_line(LUAJIT.splitlines()[0] + "\n[C]: at 0x559fb627f2c0\n") == "[C]: at 0x559fb627f2c0"
    # a benchmark's own late "Error" line does not hide the runner's
    noisy = "iterations_runner.py: error: the benchmark raised KeyError: 'x'\nSomeError: in a child's output\n"
    assert error_line(noisy) == "iterations_runner.py: error: the benchmark raised KeyError: 'x'"
    assert error_line("libkruntime: duet barrier abandoned at iteration 3: partner exited\n") == \
        "libkruntime: duet barrier abandoned at iteration 3: partner exited"
    # a debug line of a runner is not its error line
    assert error_line("[iterations_runner.py] iteration 1/2\nZeroDivisionError: x\n") == "ZeroDivisionError: x"
