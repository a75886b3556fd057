"""The supervisor's judging of a results document: the protocol's one validator, given what the run implies."""

import pytest

from iteration_runners.protocol import ProtocolError, parse_document
from runner_documents import document, encoded


def test_valid_document():
    assert parse_document(encoded(document()), iterations=3)["wallclock_times"] == [0.1, 0.2, 0.3]
    no_counters = document(cores=0, counters={"available": False, "reason": "VM"})
    assert parse_document(encoded(no_counters), iterations=3)["counters"]["reason"] == "VM"


@pytest.mark.parametrize("raw,iters,reason", [
    (b"", 3, "no results"),
    (b"nope", 3, "not valid JSON"),
    (b"[1]", 3, "not a JSON object"),
    (encoded(document()), 4, "3 iterations, configured 4"),
    (encoded(document(extra=1)), 3, "unknown keys ['extra']"),
    (encoded(document(protocol_version=2)), 3, "protocol_version"),
    (encoded(document(protocol_version=True)), 3, "protocol_version True"),
    (encoded(document(wallclock_times=[0.1, "x", 0.3])), 3, "finite non-negative"),
    (encoded(document(wallclock_times=[0.1, True, 0.3])), 3, "finite non-negative"),
    (b'{"protocol_version": 1, "wallclock_times": [NaN]}', 1, "NaN is not a number JSON allows"),
    (b'{"protocol_version": 1, "wallclock_times": [1e999]}', 1, "out of range"),
    (encoded(document(core_cycle_counts=[[1, 2], [4, 5, 6]])), 3, "core_cycle_counts[0] has 2 entries"),
    (encoded(document(aperf_counts=[[1, 1, 1]])), 3, "aperf_counts 1"),
    (encoded(document(mperf_counts=[[1, 1.5, 1], [1, 1, 1]])), 3, "mperf_counts[0][1] is 1.5, not an unsigned 64-bit"),
    (encoded(document(mperf_counts=[[1, 2**64, 1], [1, 1, 1]])), 3, "not an unsigned 64-bit count"),
    (encoded(document(counters={"available": "yes", "reason": None})), 3, "counters"),
    (encoded(document(counters={"available": False, "reason": "off"})), 3, "available is false"),
    (encoded(document(instrumentation=[1])), 3, "instrumentation"),
])
def test_protocol_violations_have_reasons(raw, iters, reason):
    with pytest.raises(ProtocolError) as e:
        parse_document(raw, iterations=iters)
    assert reason in str(e.value)
    assert "\n" not in str(e.value)


def _largest(iterations: int, cores: int, indent: int | None = None) -> int:
    """Bytes of the largest document such a run writes: 20-digit counts, 17-digit times, a timeline."""
    import json
    times = [0.12345678901234567] * iterations
    doc = document(times, cores=cores, iteration_start_ns=[2 ** 63 - 1] * iterations,
                   iteration_end_ns=[2 ** 63 - 1] * iterations, barrier_wait_ns=[2 ** 63 - 1] * iterations)
    for key in ("core_cycle_counts", "aperf_counts", "mperf_counts"):
        doc[key] = [[2 ** 64 - 1] * iterations for _ in range(cores)]
    return len(json.dumps(doc, indent=indent).encode())


@pytest.mark.parametrize("cores", [1, 2, 19, 64, 256])
def test_the_results_cap_follows_the_run(cores):
    """Issue 26 item 6: the cap was a fixed 64 MiB, reached by per-core counters at ~19 cores x 100k
    iterations (each such run was recorded errored with no data).  It now follows iterations x cores x
    counters: the largest document of any run fits, compact or indented (measured on 1000 iterations, a
    document grows linearly with them), and the supervisor's limit for an execution is that one."""
    from iteration_runners.protocol import DOCUMENT_FLOOR, document_bytes, document_limit
    from supervisor.boot.execution import results_limit
    from supervisor.experiment.model import parse_experiment
    per_1000 = _largest(1000, cores)
    assert per_1000 <= document_bytes(1000, cores)
    assert _largest(1000, cores, indent=1) <= 2 * document_bytes(1000, cores)
    assert document_limit(100_000, cores) >= 100 * _largest(1000, cores, indent=1)
    if cores >= 19:
        assert 100 * per_1000 > DOCUMENT_FLOOR      # what the fixed cap refused
    exp = parse_experiment(b'name = "x"\nexecutions = 1\nbenchmarks = {a = 1}\nvariants.v = {target = "b"}\n'
                           b'vms.p = {runner = "external", executable = "/bin/sh", iterations = 9, variants = ["v"]}\n',
                           "exp.toml")
    import os
    assert results_limit(exp.vms["p"], 100_000) == document_limit(100_000, os.cpu_count())
