import json

import pytest

from supervisor.launch.results import BadResults, parse_results


def doc(**over):
    d = {"protocol_version": 1, "wallclock_times": [0.1, 0.2, 0.3], "core_cycle_counts": [[1, 2, 3], [4, 5, 6]],
         "aperf_counts": [[1, 1, 1], [1, 1, 1]], "mperf_counts": [[2, 2, 2], [2, 2, 2]],
         "counters": {"available": True, "reason": None}}
    d.update(over)
    return json.dumps(d).encode()


def test_valid_document():
    assert parse_results(doc(), 3)["wallclock_times"] == [0.1, 0.2, 0.3]
    assert parse_results(doc(core_cycle_counts=[], aperf_counts=[], mperf_counts=[],
                             counters={"available": False, "reason": "VM"}), 3)["counters"]["reason"] == "VM"


@pytest.mark.parametrize("raw,iters,reason", [
    (b"", 3, "no results"),
    (b"nope", 3, "not JSON"),
    (b"[1]", 3, "not a JSON object"),
    (doc(), 4, "3 iterations, configured 4"),
    (doc(extra=1), 3, "unexpected ['extra']"),
    (doc(protocol_version=2), 3, "protocol_version"),
    (doc(wallclock_times=[0.1, "x", 0.3]), 3, "finite non-negative"),
    (doc(wallclock_times=[0.1, True, 0.3]), 3, "finite non-negative"),
    (doc(core_cycle_counts=[[1, 2], [4, 5, 6]]), 3, "core_cycle_counts[0] has 2 entries"),
    (doc(aperf_counts=[[1, 1, 1]]), 3, "1 cores"),
    (doc(mperf_counts=[[1, 1.5, 1], [1, 1, 1]]), 3, "non-negative integers"),
    (doc(counters={"available": "yes", "reason": None}), 3, "counters"),
    (doc(instrumentation=[1]), 3, "instrumentation"),
])
def test_protocol_violations_have_reasons(raw, iters, reason):
    with pytest.raises(BadResults) as e:
        parse_results(raw, iters)
    assert reason in str(e.value)
