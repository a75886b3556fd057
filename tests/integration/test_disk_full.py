"""A full disk, for real: a tiny tmpfs mounted for the test (root only; skipped with the reason otherwise).

Checked: the free-space refusal before the first boot, durable writes failing
with one line and no temp file left, the event log that keeps the supervisor
going and says so once, and a boot whose record cannot be written stopping
with one line while every record already written stays byte-identical.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from supervisor.durable import WriteFailed, write_atomic
from supervisor.errors import ColdrunError
from supervisor.eventlog import make_logger
from supervisor.experiment.model import load_experiment
from supervisor.boot.kinds import kind_for
from supervisor.state.records import list_records
from supervisor.state.schedule import Schedule
from supervisor.state.statedir import StateDir, space_needed

from cycle_helpers import ScriptedPlatform, boot_quiet, experiment, start_quiet
from doubles import FakeMachine
from supervisor.boot.lifecycle import continue_stopped
from supervisor.boot.one_boot import boot
from supervisor.state.outcome import EXIT_STOPPED


@pytest.fixture
def tiny_fs(tmp_path):
    """mount(size) -> a fresh tmpfs of that size, unmounted afterwards."""
    mounted = []

    def mount(size: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tiny tmpfs to fill needs root")
        d = tmp_path / f"fs{len(mounted)}"
        d.mkdir(mode=0o700)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(d)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()})")
        mounted.append(d)
        return d

    yield mount
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], check=False)


def fill(d: Path) -> Path:
    """Fill the filesystem of ``d`` to the last byte."""
    filler = d / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def test_start_refuses_a_filesystem_without_room(tmp_path, tiny_fs):
    fs = tiny_fs("64k")
    exp = experiment(tmp_path, {"a": "ok"})
    with pytest.raises(ColdrunError) as e:
        start_quiet(exp, fs / "state")
    msg = str(e.value)
    assert msg.startswith(f"{fs / 'state'}: only 0.1 MiB free on its filesystem, but the experiment needs about")
    assert "\n" not in msg
    assert not (fs / "state" / "schedule").exists()


def _screening(tmp: Path) -> Path:
    """One key, 4 treatments x 3 replicates: 12 records, though the key alone would say 3."""
    return experiment(tmp, {"a": "ok"}, executions=3, extra='seed = 5\n[screening]\n[screening.factors.e]\n'
                      'kind = "env"\nvariable = "E"\nlevels = ["x", "y"]\n[screening.factors.f]\nkind = "env"\n'
                      'variable = "F"\nlevels = ["x", "y"]\n')


def _duet(tmp: Path) -> Path:
    """2 pairs x 3 pair executions: 12 records (one per side), though the pair keys alone would say 6."""
    from pair_experiments import pair_experiment
    return pair_experiment(tmp, [("ok", "ok"), ("ok", "slow")], executions=3)


@pytest.mark.parametrize("make", [_screening, _duet], ids=["screening", "duet"])
def test_the_estimate_counts_every_record_the_schedule_writes(tmp_path, tiny_fs, make):
    exp_file = make(tmp_path)
    exp, _ = load_experiment(exp_file)
    kind = kind_for(exp)
    records, iterations = kind.records_to_write(kind.plan(5)), kind.most_iterations_of_any()
    assert records == 12
    per_record = space_needed(1, iterations) - space_needed(0, iterations)
    # room for the records one per key (or pair key) would count, not for all of them
    fs = tiny_fs(f"{(space_needed(records, iterations) - 3 * per_record) // 1024}k")
    with pytest.raises(ColdrunError, match="only .* MiB free on its filesystem, but the experiment needs"):
        start_quiet(exp_file, fs / "state")
    assert not (fs / "state" / "schedule").exists()
    fs = tiny_fs(f"{space_needed(records, iterations) // 1024 + 64}k")       # and enough: it starts
    StateDir(fs / "state").prepare_new(records, iterations)


def test_durable_write_on_a_full_disk_is_one_line_and_leaves_no_temp(tiny_fs):
    fs = tiny_fs("64k")
    write_atomic(fs / "kept", b"old")
    fill(fs)
    with pytest.raises(WriteFailed) as e:
        write_atomic(fs / "kept", b"new" * 100000)
    assert str(e.value) == (f"{fs / 'kept'}: cannot write: the filesystem is full (No space left on device); "
                            f"free space on it, then run the command again (nothing already written was lost)")
    assert isinstance(e.value, OSError) and isinstance(e.value, ColdrunError)
    assert (fs / "kept").read_bytes() == b"old"
    assert sorted(p.name for p in fs.iterdir()) == ["filler", "kept"]


def test_event_log_on_a_full_disk_warns_once_and_notes_the_gap(tiny_fs):
    fs = tiny_fs("64k")
    filler = fill(fs)
    err = io.StringIO()
    log = make_logger(fs / "log", err)
    for i in range(3):
        log.info("event", n=i)                  # must not raise
    warnings = [line for line in err.getvalue().splitlines() if "cannot write the event log" in line]
    assert len(warnings) == 1 and "the filesystem is full" in warnings[0]
    assert err.getvalue().count("] event n=") == 3   # the events themselves still reach stderr
    filler.unlink()
    log.info("after")
    lines = [json.loads(x) for x in (fs / "log").read_text().splitlines()]
    assert lines[0]["event"] == "event log was not writable" and lines[0]["missed_events"] >= 3
    assert lines[-1]["event"] == "after"


def test_event_log_replaced_by_a_directory_does_not_stop_the_supervisor(tmp_path):
    (tmp_path / "log").mkdir()
    err = io.StringIO()
    log = make_logger(tmp_path / "log", err)
    log.warning("one")
    log.info("two")
    assert err.getvalue().count("cannot write the event log (Is a directory)") == 1


def test_record_write_on_a_full_disk_stops_the_experiment_and_loses_nothing(tmp_path, tiny_fs):
    fs = tiny_fs("24m")
    exp = experiment(tmp_path, {"a": "ok", "b": "ok"})
    state = fs / "state"
    assert start_quiet(exp, state) == 0
    assert boot_quiet(state) == 0                  # the first job, then a simulated reboot
    before = {k: p.read_bytes() for k, p in list_records(state).items()}
    assert len(before) == 1
    filler = fill(fs)
    err = io.StringIO()
    # Stopped, not left "running" with nobody to run it (issue 26): the reason reaches the log's stderr even
    # where the disk has no room for the stop_reason file.
    assert boot(state, stderr=err, machine=FakeMachine(ScriptedPlatform())) == EXIT_STOPPED
    stopped = [ln for ln in err.getvalue().splitlines() if "experiment stopped" in ln]
    assert len(stopped) == 1 and "the filesystem is full" in stopped[0]
    assert Schedule.load(state / "schedule").status == "stopped"
    assert {k: p.read_bytes() for k, p in list_records(state).items()} == before
    filler.unlink()
    continue_stopped(str(state), machine=FakeMachine(ScriptedPlatform()), stderr=io.StringIO())
    boot_quiet(state)                              # runs on
    sched = Schedule.load(state / "schedule")
    assert {k: p.read_bytes() for k, p in list_records(state).items() if k in before} == before
    assert sched.counts()["outstanding"] + sched.counts()["completed"] + sched.counts()["crashed"] == 2
