import json

import pytest

from supervisor.errors import PlatformError
from supervisor.platforms.undo_replay import restore_undo_log
from supervisor.system import SystemRoot
from supervisor.state.undo import UndoLog

from platform_helpers import MemoryLog, make_linux, undo_path, vm_policy


def test_first_original_wins_and_replay_is_reverse(tmp_path):
    u = UndoLog(tmp_path)
    assert u.record("a", "k1", {"action": "write", "path": "/x", "value": "1"})
    assert not u.record("a", "k1", {"action": "write", "path": "/x", "value": "changed-by-us"})
    u.record("b", "k2", {"action": "write", "path": "/y", "value": "2"})
    seen = []
    assert u.replay(lambda e: seen.append(e["key"])) == []
    assert seen == ["k2", "k1"] and not u.path.exists()


def test_failed_entries_stay_for_the_next_restore(tmp_path):
    u = UndoLog(tmp_path)
    u.record("a", "k1", {"action": "write"})
    u.record("b", "k2", {"action": "write"})

    def undo(e):
        if e["key"] == "k1":
            raise OSError("device busy")
    failures = u.replay(undo)
    assert failures == ["a: could not restore k1: device busy"]
    assert [e["key"] for e in u.entries()] == ["k1"]


def test_corrupt_undo_log_is_one_clear_error(tmp_path):
    (tmp_path / "undo.json").write_text("{not json")
    with pytest.raises(PlatformError, match="undo log is corrupt"):
        UndoLog(tmp_path).entries()


def test_a_crashed_experiment_is_restored_at_the_next_start(machine, tmp_path):
    """Apply, then 'crash' (drop the platform object); a new start restores from the old state dir."""
    root = machine("vm-nocpufreq")
    rate = root / "proc/sys/kernel/perf_event_max_sample_rate"
    make_linux(root, tmp_path / "old", vm_policy()).apply_and_verify()
    assert rate.read_text() == "1\n"
    entry = json.loads(undo_path(root, tmp_path / "old").read_text())["entries"][0]
    assert entry["value"] == "100000\n" and entry["control"] == "perf_max_sample_rate"
    failures = restore_undo_log(tmp_path / "old", root=SystemRoot(root), commands=None, log=MemoryLog())
    assert failures == [] and rate.read_text() == "100000\n"
