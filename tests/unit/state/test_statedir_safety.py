"""The state dir belongs to its owner alone: who may own it and its parents, and the modes coldrun creates."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.experiment.model import load_experiment
from supervisor.boot.kinds import kind_for
from supervisor.state.statedir import StateDir, location_problem

from cycle_helpers import experiment

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: files owned by another user are made "
                                "with chown")


def prepare_new(state: StateDir, exp_file: Path) -> None:
    """What start does before the lock, with the experiment's planned jobs."""
    exp, _ = load_experiment(exp_file)
    kind = kind_for(exp)
    state.prepare_new(kind.records_to_write(kind.plan(0)), kind.most_iterations_of_any())


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


@pytest.fixture
def umask000():
    old = os.umask(0)
    yield
    os.umask(old)


def test_own_0700_dir_under_sticky_tmp_is_accepted(tmp_path):
    parent = tmp_path / "sticky"
    parent.mkdir()
    parent.chmod(0o1777)
    state = parent / "s"
    state.mkdir(mode=0o700)
    assert location_problem(state) is None
    assert location_problem(parent / "not-yet") is None    # start creates it


def test_state_dir_writable_by_others_is_refused_with_the_fix(tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    state.chmod(0o777)
    line = location_problem(state)
    assert line == f"{state}: state dir is writable by others (mode 0777); run chmod 700 {state}"


def test_parent_writable_by_others_without_sticky_bit_is_refused(tmp_path):
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)
    line = location_problem(parent / "s")
    assert line and f"parent directory {parent} is writable by others" in line and "chmod go-w" in line


@needs_root
def test_state_dir_owned_by_someone_else_is_refused(tmp_path):
    state = tmp_path / "s"
    state.mkdir(mode=0o700)
    os.chown(state, NOBODY, NOBODY)
    line = location_problem(state)
    assert line and "owned by nobody, not root" in line and f"chown root {state}" in line


@needs_root
def test_parent_owned_by_another_user_is_refused(tmp_path):
    parent = tmp_path / "theirs"
    parent.mkdir(mode=0o755)
    os.chown(parent, NOBODY, NOBODY)
    line = location_problem(parent / "s")
    assert line and f"parent directory {parent} is owned by nobody" in line


@needs_root
def test_symlink_owned_by_another_user_on_the_way_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    os.lchown(link, NOBODY, NOBODY)
    line = location_problem(link)
    assert line and "is a symlink owned by nobody" in line
    os.lchown(link, 0, 0)
    assert location_problem(link) is None


@needs_root
def test_group_writable_parent_is_refused_when_the_group_has_other_members(tmp_path):
    parent = tmp_path / "g"
    parent.mkdir()
    parent.chmod(0o775)
    os.chown(parent, 0, NOBODY)          # nogroup: nobody's primary group, so someone else can write
    line = location_problem(parent / "s")
    assert line and f"parent directory {parent} is writable by group (mode 0775)" in line
    parent.chmod(0o755)
    assert location_problem(parent / "s") is None


def test_start_creates_the_state_dir_0700_whatever_the_umask(tmp_path, umask000):
    exp = experiment(tmp_path, {"a": "ok"})
    state = StateDir(tmp_path / "new" / "s")
    prepare_new(state, exp)
    assert mode(state.path) == 0o700
    assert mode(state.path.parent) == 0o755          # a missing parent: not 0777 under umask 000
    assert mode(state.path / "executions") == 0o700
    assert mode(state.home_path) == 0o755              # the runner's working directory
    state.write_experiment(exp.read_bytes(), exp, ["coldrun"])
    assert mode(state.experiment_path) == 0o600 and mode(state.meta_path) == 0o600
    fd = state.lock()
    os.close(fd)
    assert mode(state.lock_path) == 0o600


def test_start_refuses_an_unsafe_dir_before_writing_anything(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"})
    d = tmp_path / "open"
    d.mkdir()
    d.chmod(0o777)
    with pytest.raises(ColdrunError, match="writable by others"):
        prepare_new(StateDir(d), exp)
    assert list(d.iterdir()) == []


def test_an_empty_dir_taken_over_becomes_0700(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"})
    d = tmp_path / "empty"
    d.mkdir(mode=0o755)
    prepare_new(StateDir(d), exp)
    assert mode(d) == 0o700


def test_write_atomic_mode_is_exact_under_umask_000(tmp_path, umask000):
    write_atomic(tmp_path / "f", b"x")
    assert mode(tmp_path / "f") == 0o600
    write_atomic(tmp_path / "g", b"x", 0o644)
    assert mode(tmp_path / "g") == 0o644


@pytest.mark.parametrize("planted", [".experiment.toml.tmp", "lock"])
def test_planted_symlink_never_makes_coldrun_write_through_it(tmp_path, planted):
    exp = experiment(tmp_path, {"a": "ok"})
    state = StateDir(tmp_path / "s")
    prepare_new(state, exp)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (state.path / planted).symlink_to(victim)
    try:
        state.write_experiment(exp.read_bytes(), exp, ["coldrun"])
        os.close(state.lock())
    except ColdrunError as e:
        assert planted == "lock" and f"{state.lock_path}: cannot open the lock file" in str(e)
    assert victim.read_text() == "precious\n"
    assert (state.path / planted).is_symlink()       # coldrun neither followed nor removed it


def test_every_command_refuses_a_symlinked_or_wrong_typed_state_file(tmp_path):
    exp = experiment(tmp_path, {"a": "ok"})
    state = StateDir(tmp_path / "s")
    prepare_new(state, exp)
    (state.path / "schedule").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ColdrunError, match=r"/schedule: is a symlink"):
        state.schedule()
    (state.path / "schedule").unlink()
    (state.path / "schedule").mkdir()
    with pytest.raises(ColdrunError, match=r"/schedule: should be a plain file but is a directory"):
        state.check()
    (state.path / "schedule").rmdir()
    (state.path / "executions").rmdir()
    (state.path / "executions").write_text("")
    with pytest.raises(ColdrunError, match=r"/executions: should be a directory"):
        state.check()
