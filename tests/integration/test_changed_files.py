"""A benchmark, runner or interpreter changed between executions (issue 26, item 2): start pins each key's files
by digest; a change stops the experiment before the next execution, or (on_changed_files = "flag") runs it
with the change named in its record."""

from __future__ import annotations

import bz2
import json
import shutil
import sys

from cycle_helpers import boot_quiet, experiment, run_to_end, start_quiet
from supervisor.state.outcome import EXIT_CLEAN, EXIT_STOPPED
from supervisor.state.schedule import Schedule
from supervisor.views.status import status_report
from supervisor.views.status_text import status_text


def records(state) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((state / "executions").iterdir())]


def test_start_pins_every_key_s_files(tmp_path):
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = tmp_path / "s"
    start_quiet(exp, state)
    pinned = json.loads((state / "key_files.json").read_text())
    assert sorted(pinned) == ["a:fake:v", "b:fake:v"]
    a = pinned["a:fake:v"]
    assert str((tmp_path / "benchmarks" / "a" / "b.txt").resolve()) in a               # the benchmark
    assert any(p.endswith("fake_runner.py") for p in a)                                # the runner file
    assert str(__import__("os").path.realpath(sys.executable)) in a                    # the interpreter
    assert all(v.startswith("sha256=") for v in a.values())
    assert run_to_end(state) == EXIT_CLEAN
    assert all(len(r["platform_before"]["key_files_sha256"][r["key"]]) == 64 for r in records(state))


def test_a_benchmark_replaced_after_two_executions_stops_the_experiment(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"}, executions=4)
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0 and boot_quiet(state) == 0
    bench = tmp_path / "benchmarks" / "a" / "b.txt"
    bench.write_text("slow")                          # another program, same key
    assert boot_quiet(state) == EXIT_STOPPED
    sched = Schedule.load(state / "schedule")
    assert [j.state for j in sched.jobs] == ["C", "C", "O", "O"] and sched.status == "stopped"
    reason = (state / "stop_reason").read_text()
    assert f"a:fake:v: files changed since the experiment started ({bench.resolve()}: content changed)" in reason
    assert 'on_changed_files = "flag"' in reason and "resume --continue" in reason
    assert len(records(state)) == 2


def test_a_changed_interpreter_is_noticed_too(tmp_path):
    interpreter = tmp_path / "bin" / "python3"
    interpreter.parent.mkdir()
    shutil.copy2(sys.executable, interpreter)
    exp = experiment(tmp_path, {"a": "ok"}, executions=2)
    exp.write_text(exp.read_text().replace(f'executable = "{sys.executable}"', f'executable = "{interpreter}"'))
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0
    with open(interpreter, "ab") as f:
        f.write(b"\0")                                 # an upgrade overnight
    assert boot_quiet(state) == EXIT_STOPPED
    assert f"{interpreter}: content changed" in (state / "stop_reason").read_text()


def test_with_flag_the_change_is_recorded_and_flagged(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"}, executions=4, extra='on_changed_files = "flag"', iterations=8)
    state = tmp_path / "s"
    start_quiet(exp, state)
    assert boot_quiet(state) == 0 and boot_quiet(state) == 0
    bench = tmp_path / "benchmarks" / "a" / "b.txt"
    bench.write_text("slow")
    assert run_to_end(state) == EXIT_CLEAN
    recs = records(state)
    assert [("files_changed" in r["flags"]) for r in recs] == [False, False, True, True]
    assert recs[2]["platform_before"]["changed_files"] == [f"{bench.resolve()}: content changed"]
    assert "changed_files" not in recs[0]["platform_before"]
    digests = {r["platform_before"]["key_files_sha256"]["a:fake:v"] for r in recs}
    assert len(digests) == 2                           # what ran before and after the change
    text = status_text(status_report(str(state)))
    assert "ran with files changed since start, flagged files_changed (2): a:fake:v #2 attempt 1, a:fake:v #3" in text

    # Every report of coldrun-analyze says which executions ran so, and what the flag means.
    from analysis.cli import main as analyze
    from coldrun_helpers import coldrun
    bundle = tmp_path / "native.json"
    r = coldrun("export", str(state), "--format", "native", "-o", str(bundle))
    assert r.returncode == 0, r.stderr
    # ... and so do the annotated results and the summary JSON made from it, and the tables made from them.
    # The Krun export carries them too (execution_flags beside execution_states; warmup_stats reads neither).
    krun = tmp_path / "krun_results.json.bz2"
    r = coldrun("export", str(state), "--format", "krun", "-o", str(krun))
    assert r.returncode == 0, r.stderr
    assert json.loads(bz2.decompress(krun.read_bytes()))["execution_flags"] == {
        "a:fake:v": [[], [], ["files_changed"], ["files_changed"]]}
    annotated, summary = tmp_path / "annotated.json", tmp_path / "summary.json"
    assert analyze(["annotate", str(bundle), "-o", str(annotated), "--no-progress"]) == 0
    assert analyze(["summary", str(bundle), "-o", str(summary), "--quality", "low", "--no-progress"]) == 0
    assert json.loads(summary.read_text())["flagged_process_executions"] == {
        "vm": {"fake": {"a": [{"index": 2, "flags": ["files_changed"]}, {"index": 3, "flags": ["files_changed"]}]}}}
    for fmt, source in [("text", bundle), ("latex", bundle), ("html", bundle), ("text", annotated),
                        ("text", summary), ("text", krun)]:
        out = tmp_path / f"table.{source.stem}.{fmt}"
        assert analyze(["table", str(source), "--format", fmt, "--quality", "low", "--no-progress", "-o", str(out)]
                       + (["--no-plots", "--no-pilot"] if fmt == "html" else [])) == 0
        report = out.read_text()
        assert "Flagged executions (2)" in report, (fmt, source.name)
        if fmt == "latex":
            report = report.replace("\\#", "#").replace("\\_", "_")
        assert "a  fake  #3: files_changed" in report and "a  fake  #4: files_changed" in report, fmt
        assert "#2: files_changed" not in report
        assert "differed from its digest at start" in report, fmt
