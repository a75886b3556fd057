"""A benchmark that forges the runner's results document (issue 26, item 4), through the real Python runner.

Code inside the runner's process can reach every descriptor the process holds (/proc/self/fd lists them all,
whatever their number or close-on-exec flag), so the runner keeps the channel out of the way and the supervisor
refuses what no run could have measured: iteration times adding up to more than the runner lived.
"""

from __future__ import annotations

import json
import sys
import textwrap

from cycle_helpers import run_to_end, start_quiet
from root_runs import runs_as_invoker
from supervisor.state.outcome import EXIT_FAILURES

FORGER = textwrap.dedent("""\
    import json, os, stat

    def run_iter(param):
        doc = json.dumps({"protocol_version": 1, "wallclock_times": [100.0] * 5, "core_cycle_counts": [],
                          "aperf_counts": [], "mperf_counts": [],
                          "counters": {"available": False, "reason": "forged"}}).encode()
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd > 2 and os.path.exists("/proc/self/fd/%d" % fd) and stat.S_ISFIFO(os.fstat(fd).st_mode):
                try:
                    os.write(fd, doc)
                except OSError:
                    pass
        os._exit(0)      # before the runner can write its own document after this one
    """)


def test_a_forged_document_of_impossible_times_is_refused(tmp_path):
    d = tmp_path / "benchmarks" / "forger" / "python"
    d.mkdir(parents=True)
    (d / "bench.py").write_text(FORGER)
    exp = tmp_path / "exp.toml"
    exp.write_text(runs_as_invoker(textwrap.dedent(f"""\
        name = "forged"
        executions = 1
        stop_on_launch_failure = false
        [waits]
        boot_settle = 0
        sync = 0
        [benchmarks]
        forger = 1
        [variants.py]
        target = "bench.py"
        subdir = "python"
        [vms.py]
        runner = "python"
        executable = "{sys.executable}"
        iterations = 5
        variants = ["py"]
        """)))
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert run_to_end(state) == EXIT_FAILURES
    [record] = [json.loads(p.read_text()) for p in (state / "executions").iterdir()]
    assert record["exit_code"] == 0 and record["results_bytes"] > 0     # the forgery reached the supervisor
    assert record["outcome"] == "E" and record["cause"] == "protocol_refusal", record["reason"]
    assert record["reason"].startswith("iteration times add up to 500s") and record["wallclock_times"] == []
