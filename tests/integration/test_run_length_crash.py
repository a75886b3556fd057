"""kill -9 inside [stop]'s decide-and-append, at every step, then at random: nothing lost, nothing twice.

The supervisor SIGKILLs itself at the named crash points (COLDRUN_TEST_PAUSE_AT,
boot/crash_points.py): after a key's decision is written, after the append is
announced, with half of the new job line written, with the line written but
not committed, and after the commit.  Kills at the append steps land both
right after an execution (run_one) and at the next boot's settling of the
same decision.  Then kills at random moments.  The finished experiment must
hold exactly the jobs the rule asks for (the steady key converges at
min_executions, the noisy one runs to max_executions), each with its one
record, and the log must show the unfinished appends discarded.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from coldrun_helpers import (REPO, coldrun, make_experiment, native_export, pause_env as _env,
                             records_match_schedule)

# In order: the first append is cut at each step (the kill in `start` lands right after an execution, the
# next three at the next boots' settling), then a decision is cut before its append, then an append again.
POINTS = ["append-intent", "append-half-written", "append-written", "append-committed", "after-decision",
          "append-intent", "append-committed"]


def test_kills_in_decide_and_append_lose_and_duplicate_nothing(tmp_path):
    seed = int(os.environ.get("COLDRUN_CRASH_SEED", random.randrange(1 << 30)))
    print(f"run-length crash test seed {seed} (set COLDRUN_CRASH_SEED to repeat)")
    rng = random.Random(seed)
    exp = make_experiment(tmp_path, {"steady": "flat", "wild": "noisy"}, executions=None, iterations=40,
                          extra="[stop]\nci_percent = 0.01\nmin_executions = 2\nmax_executions = 9\n"
                                "adapt_iterations = true\nmax_iterations = 80\n"
                                "[rerun]\nmax_attempts = 200\nmax_unexplained_boots = 1000\n")
    state = tmp_path / "state"
    r = coldrun("start", str(exp), "--simulate-reboots", "--state-dir", str(state), env=_env(POINTS[0]))
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    for point in POINTS[1:]:
        r = coldrun("resume", str(state), env=_env(point), timeout=300)
        assert r.returncode == -signal.SIGKILL, (point, r.stderr[-2000:])
        st = coldrun("status", str(state))          # readable between kills, nothing reported altered
        assert st.returncode == 8 and "ALTERED" not in st.stdout, (point, st.stdout, st.stderr)

    kills = len(POINTS)
    # Kills at random moments, analysis and appends included, until the experiment ends.  The window
    # widens while kills land before any new record (a loaded machine can take seconds to import), so
    # the experiment always gets on.
    window, records = 2.0, len(os.listdir(state / "executions"))
    while True:
        proc = subprocess.Popen([sys.executable, "-m", "supervisor", "resume", str(state)], cwd=str(REPO),
                                env=_env(None), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, window))
        proc.send_signal(signal.SIGKILL)
        rc = proc.wait()
        if rc != -signal.SIGKILL:
            assert rc == 9, f"resume exited {rc}"       # finished; wild stopped at max_executions
            break
        kills += 1
        assert kills < 200, "the experiment does not end"
        now = len(os.listdir(state / "executions"))
        window = 2.0 if now > records else min(window * 1.5, 60.0)
        records = now
    r = coldrun("resume", str(state), timeout=300)   # already finished: says so, same exit 9
    assert r.returncode == 9, r.stderr[-3000:]

    bundle = native_export(state, tmp_path)
    assert bundle["status"] == "finished"
    records_match_schedule(bundle)
    counts = {}
    for job in bundle["jobs"]:
        counts[job["key"]] = counts.get(job["key"], 0) + 1
    assert counts == {"steady:fake:fake": 2, "wild:fake:fake": 9}
    assert len({(e["key"], e["pexec"]) for e in bundle["executions"]}) == 11
    assert len(os.listdir(state / "executions")) == 11          # no stray or duplicate record
    decisions = json.loads((state / "run_length.json").read_text())
    assert decisions["steady:fake:fake"]["converged"] and decisions["steady:fake:fake"]["executions"] == 2
    assert decisions["wild:fake:fake"]["done"] and not decisions["wild:fake:fake"]["converged"]
    assert decisions["wild:fake:fake"]["executions"] == 9
    log = (state / "log").read_text()
    assert log.count("discarded an unfinished append to the schedule") >= 4
    print(f"{kills} kills, {bundle['boots']} boots")
