"""The event log fsyncs warnings and errors (a reconciliation note must survive a power cut in the next boot)."""

from __future__ import annotations

import io
import json
import os

from supervisor.eventlog import make_logger


def _fsynced_events(monkeypatch, tmp_path, emit) -> list[str]:
    path = tmp_path / "log"
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        real_fsync(fd)
        if os.readlink(f"/proc/self/fd/{fd}") == str(path):
            lines = path.read_text().splitlines()
            synced.append(json.loads(lines[-1])["event"])

    monkeypatch.setattr(os, "fsync", spy)
    emit(make_logger(path, io.StringIO()))
    return synced


def test_warnings_and_errors_are_fsynced_info_is_not(monkeypatch, tmp_path):
    def emit(log):
        log.info("boot")
        log.warning("reconcile: discarded an unfinished append")
        log.debug("detail")
        log.error("job failed")

    assert _fsynced_events(monkeypatch, tmp_path, emit) == ["reconcile: discarded an unfinished append",
                                                            "job failed"]
    lines = [json.loads(l)["event"] for l in (tmp_path / "log").read_text().splitlines()]
    assert lines == ["boot", "reconcile: discarded an unfinished append", "detail", "job failed"]
