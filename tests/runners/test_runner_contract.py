"""Contract A: runner_command, KNOWN_RUNNERS, benchmark_filename, document validation."""

from __future__ import annotations

import json
import os

import pytest

import iteration_runners as ir
from iteration_runners.protocol import ProtocolError, parse_document, validate_document


def test_python_argv_is_in_krun_order_with_vm_args_before_the_runner():
    argv, env = ir.runner_command("python", "/usr/bin/python3", ["-X", "dev"], "/b/bench.py", 10, 7, True)
    assert argv == ["/usr/bin/python3", "-X", "dev", str(ir.PYTHON_RUNNER), "/b/bench.py", "10", "7", "1"]
    assert env["COLDRUN_RESULTS_FD"] == "3"
    for key in ("COLDRUN_KRUNTIME_EXTENSION", "COLDRUN_LIBKRUNTIME"):
        assert os.path.isabs(env[key]) and os.path.isfile(env[key]), key


def test_c_runner_is_the_built_binary_unless_one_is_given():
    argv, env = ir.runner_command("c", "", [], "/b/bench.so", 3, 0, False)
    assert argv == [str(ir.C_RUNNER), "/b/bench.so", "3", "0", "0"]
    assert os.access(argv[0], os.X_OK)
    assert env == {"COLDRUN_RESULTS_FD": "3"}
    argv, _ = ir.runner_command("c", "/opt/my_runner", [], "/b/bench.so", 3, 0, False)
    assert argv[0] == "/opt/my_runner"


def test_unknown_runner_names_the_known_ones():
    with pytest.raises(ValueError, match="known runners: python, c"):
        ir.runner_command("cobol", "x", [], "b", 1, 1, False)
    with pytest.raises(ValueError, match="python, c"):
        ir.benchmark_filename("cobol")


@pytest.mark.parametrize("iterations", [0, -1, True, "5"])
def test_bad_iteration_counts_are_rejected(iterations):
    with pytest.raises(ValueError, match="iterations"):
        ir.runner_command("python", "python3", [], "b.py", iterations, 1, False)


def test_c_runner_takes_no_vm_args():
    with pytest.raises(ValueError, match="vm_args"):
        ir.runner_command("c", "", ["-x"], "b.so", 1, 1, False)


def test_benchmark_filenames():
    assert ir.KNOWN_RUNNERS == ("python", "c", "pypy", "lua", "javascript", "java", "ruby", "php")
    assert ir.benchmark_filename("python") == "bench.py"
    assert ir.benchmark_filename("c") == "bench.so"
    assert ir.benchmark_filename("lua") == "bench.lua"


def test_language_runners_dispatch_through_contract_a():
    argv, env = ir.runner_command("ruby", "", [], "/b/bench.rb", 5, 7, False)
    assert argv[-4:] == ["/b/bench.rb", "5", "7", "0"] and env["COLDRUN_RESULTS_FD"] == "3"
    with pytest.raises(ValueError, match="pypy and java only"):
        ir.runner_command("c", "", [], "/b/bench.so", 5, 7, False, instrument=True)


def test_startup_document_is_validated():
    from iteration_runners.protocol import ProtocolError, parse_document

    startup = {"clock": "monotonic_raw", "wrapper_time": "1.0", "runner_time": "1.5", "seconds": 0.5}
    assert parse_document(_doc(wallclock_times=[0.5], startup=startup))["startup"]["seconds"] == 0.5
    with pytest.raises(ProtocolError, match="startup.seconds"):
        parse_document(_doc(wallclock_times=[0.5], startup={**startup, "seconds": 0.7}))


def _doc(**over):
    doc = {"protocol_version": 1, "wallclock_times": [0.5, 0.25], "core_cycle_counts": [],
           "aperf_counts": [], "mperf_counts": [], "counters": {"available": False, "reason": "VM"}}
    doc.update(over)
    return json.dumps(doc)


def test_valid_documents_parse():
    assert parse_document(_doc())["wallclock_times"] == [0.5, 0.25]
    with_counters = _doc(core_cycle_counts=[[1, 2]], aperf_counts=[[3, 4]], mperf_counts=[[2**64 - 1, 0]],
                         counters={"available": True, "reason": None}, instrumentation={"jit": []})
    assert parse_document(with_counters)["mperf_counts"] == [[2**64 - 1, 0]]


@pytest.mark.parametrize(
    "raw, message",
    [
        ("", "no results document"),
        ('{"protocol_version": 1', "not valid JSON"),
        (_doc(extra=1), "unknown keys"),
        (_doc(protocol_version=2), "protocol_version"),
        (_doc(wallclock_times=[]), "non-empty"),
        (_doc(core_cycle_counts=[[1]], aperf_counts=[[1]], mperf_counts=[[1]],
              counters={"available": True, "reason": None}), "2 entries"),
        (_doc(core_cycle_counts=[[1, 2]], aperf_counts=[[1, 2]], mperf_counts=[[1, 2]]), "available is false"),
        (_doc(counters={"available": False, "reason": None}), "available is false"),
        (_doc(core_cycle_counts=[[1, -2]], aperf_counts=[[1, 2]], mperf_counts=[[1, 2]],
              counters={"available": True, "reason": None}), "unsigned 64-bit"),
        (_doc(core_cycle_counts=[[1, 2]], aperf_counts=[], mperf_counts=[[1, 2]],
              counters={"available": True, "reason": None}), "different numbers of cores"),
        ('{"protocol_version": 1, "wallclock_times": [NaN, 0.1]}', "NaN is not a number JSON allows"),
        ('{"protocol_version": 1, "wallclock_times": [-Infinity]}', "Infinity is not a number JSON allows"),
        (_doc(wallclock_times=[0.5, 0.25]).replace("0.25", "1e999"), "number '1e999' is out of range"),
        (_doc(protocol_version=True), "protocol_version True"),
        (_doc(instrumentation={"gc": [1.0, float("nan")]}), "not valid JSON"),
        (_doc(wallclock_times=[0.5], startup={"clock": 1, "wrapper_time": "1.0", "runner_time": "1.5",
                                              "seconds": 0.5}), "must be strings"),
    ],
)
def test_invalid_documents_are_rejected_with_a_reason(raw, message):
    with pytest.raises(ProtocolError, match=message):
        parse_document(raw)


def test_documents_parsed_elsewhere_are_held_to_the_same_rules():
    """validate_document on an already-parsed document (json.loads lets NaN through) refuses it too."""
    doc = json.loads(_doc(instrumentation={"gc": {"times": [1.0, float("nan")]}}))
    with pytest.raises(ProtocolError, match=r"instrumentation\['gc'\]\['times'\]\[1\] is nan"):
        validate_document(doc)
    with pytest.raises(ProtocolError, match=r"wallclock_times\[1\] is inf"):
        validate_document(json.loads(_doc(wallclock_times=[0.5, float("inf")])))


def test_what_the_run_implies_is_checked_when_given():
    """The supervisor passes the run's iteration count, startup mode and instrumentation."""
    assert parse_document(_doc(), iterations=2, startup=False)["wallclock_times"] == [0.5, 0.25]
    with pytest.raises(ProtocolError, match="2 iterations, configured 3"):
        parse_document(_doc(), iterations=3)
    with pytest.raises(ProtocolError, match="no startup object"):
        parse_document(_doc(wallclock_times=[0.5]), startup=True)
    with pytest.raises(ProtocolError, match="instrumentation was asked for"):
        parse_document(_doc(), instrument=True)


# wallclock_times [0.5, 0.25] s: iteration 0 from 1e9 to 1.5e9 ns, iteration 1 from 2e9 to 2.25e9 ns.
TIMELINE = {"iteration_start_ns": [10**9, 2 * 10**9], "iteration_end_ns": [15 * 10**8, 225 * 10**7]}


def test_timeline_keys_are_optional_and_checked_when_present():
    doc = parse_document(_doc(**TIMELINE, barrier_wait_ns=[0, 7]), duet=True)
    assert doc["iteration_end_ns"] == [15 * 10**8, 225 * 10**7]
    assert "iteration_start_ns" not in parse_document(_doc(), duet=False)


@pytest.mark.parametrize(
    "over, message",
    [
        ({"iteration_start_ns": TIMELINE["iteration_start_ns"]}, "without both iteration_start_ns and"),
        ({**TIMELINE, "iteration_end_ns": [15 * 10**8]}, r"one entry per iteration \(2\)"),
        ({**TIMELINE, "iteration_start_ns": [10**9, 2.0e9]}, r"iteration_start_ns\[1\] is 2000000000.0"),
        ({**TIMELINE, "iteration_start_ns": [10**9, 14 * 10**8], "iteration_end_ns": [15 * 10**8, 165 * 10**7]},
         r"iteration_start_ns\[1\] 1400000000 is before iteration_end_ns\[0\]"),
        ({"iteration_start_ns": [2 * 10**9, 3 * 10**9], "iteration_end_ns": [10**9, 325 * 10**7]},
         r"iteration_end_ns\[0\] 1000000000 is before"),
        ({**TIMELINE, "iteration_end_ns": [16 * 10**8, 225 * 10**7]}, r"is 600000000 ns but wallclock_times\[0\]"),
        ({**TIMELINE, "barrier_wait_ns": [0, -1]}, r"barrier_wait_ns\[1\] is -1, not an integer .* >= 0"),
    ],
)
def test_bad_timelines_are_rejected(over, message):
    with pytest.raises(ProtocolError, match=message):
        parse_document(_doc(**over))


def test_pair_execution_needs_the_timeline_with_barrier_waits():
    with pytest.raises(ProtocolError, match="must have iteration_start_ns"):
        parse_document(_doc(), duet=True)
    with pytest.raises(ProtocolError, match="must have barrier_wait_ns"):
        parse_document(_doc(**TIMELINE), duet=True)


def test_a_pair_run_without_a_barrier_needs_the_timeline_but_no_barrier_waits():
    assert "barrier_wait_ns" not in parse_document(_doc(**TIMELINE), duet=True, barrier=False)
    with pytest.raises(ProtocolError, match="must have iteration_start_ns, iteration_end_ns$"):
        parse_document(_doc(), duet=True, barrier=False)
