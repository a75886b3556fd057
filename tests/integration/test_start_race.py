"""Two starts on one state dir (issue 26, item 18): the one that loses changes nothing of the winner's."""

from __future__ import annotations

import pytest

from cycle_helpers import experiment, start_quiet
from supervisor.errors import ColdrunError
from supervisor.state.statedir import StateDir


def test_a_start_that_lost_the_race_writes_nothing_and_replays_nothing(tmp_path, monkeypatch):
    first = tmp_path / "first"
    first.mkdir()
    second = tmp_path / "second"
    second.mkdir()
    exp_a = experiment(first, {"a": "ok"})
    exp_b = experiment(second, {"b": "ok"}, executions=2)
    state = tmp_path / "s"
    real_lock = StateDir.lock
    raced = []

    def lock_after_the_other_start(self):
        if not raced:     # the other start runs to its end between this start's look and its lock
            raced.append(True)
            assert start_quiet(exp_a, state) == 0
        return real_lock(self)

    monkeypatch.setattr(StateDir, "lock", lock_after_the_other_start)
    with pytest.raises(ColdrunError) as refused:
        start_quiet(exp_b, state)
    monkeypatch.undo()
    assert raced
    files = {name: (state / name).read_bytes() for name in ("experiment.toml", "meta.json", "audit.json")}
    assert files["experiment.toml"] == exp_a.read_bytes()
    assert str(exp_a).encode() in files["meta.json"]
    assert "already holds an experiment" in str(refused.value)
    # The winner's experiment still loads: its copy matches its schedule.
    st = StateDir(state)
    st.experiment(st.schedule(), check_source=False)
