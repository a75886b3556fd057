"""The state dir belongs to its owner alone: who may own it and its parents, and the modes coldrun creates."""

from __future__ import annotations

import errno
import grp
import os
import stat
import struct
from pathlib import Path

import pytest

from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.experiment.model import load_experiment
from supervisor.boot.kinds import kind_for
from supervisor.cli import main
from supervisor.state import posix_acl
from supervisor.state.posix_acl import GROUP, MASK, USER, UnreadableAcl
from supervisor.state.statedir import StateDir, _group_shared, location_problem

from cycle_helpers import experiment

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: files owned by another user are made "
                                "with chown")
needs_acls = pytest.mark.skipif(os.geteuid() != 0 or _group_shared(0, 0),
                                reason="needs root (an ACL for nobody is set as root) and a group root with no "
                                "other member (a 0775 root-group parent is then safe by its mode)")
UNDEFINED = 0xFFFFFFFF   # the id of an entry that names no one (owner, owning group, mask, others)


def acl_bytes(*entries: tuple[int, int, int]) -> bytes:
    """system.posix_acl_access as the kernel stores it: version 2, then (tag, permissions, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def give_acl(d: Path, *named: tuple[int, int, int], mask: int = 0o7) -> None:
    """What setfacl -m does: ``d``'s mode bits as the base entries, the ``named`` entries and ``mask``
    (which becomes the mode's group bits)."""
    m = mode(d)
    entries = [(posix_acl.USER_OBJ, m >> 6 & 7, UNDEFINED), (posix_acl.GROUP_OBJ, m >> 3 & 7, UNDEFINED),
               (MASK, mask, UNDEFINED), (posix_acl.OTHER, m & 7, UNDEFINED), *named]
    try:
        os.setxattr(d, posix_acl.ATTRIBUTE, acl_bytes(*sorted(entries, key=lambda e: (e[0], e[2]))))
    except OSError as e:
        if e.errno not in posix_acl.NO_ACL:
            raise
        pytest.skip(f"{d}: its filesystem has no POSIX ACLs")


def root_dir(d: Path, dir_mode: int) -> Path:
    d.mkdir()
    os.chown(d, 0, 0)
    d.chmod(dir_mode)
    return d


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


@needs_acls
def test_parent_an_acl_lets_another_user_write_in_is_refused(tmp_path):
    parent = root_dir(tmp_path / "acl", 0o755)
    assert location_problem(parent / "s") is None
    give_acl(parent, (USER, 0o7, NOBODY))              # setfacl -m u:nobody:rwx
    assert mode(parent) == 0o775                        # root's group, alone in it: the mode alone looks safe
    line = location_problem(parent / "s")
    assert line == (f"{parent / 's'}: parent directory {parent} is writable by user nobody (ACL) without the "
                    f"sticky bit, so they could replace the state dir; run setfacl -x u:nobody {parent} or "
                    f"choose another --state-dir")
    parent.chmod(0o1775)
    assert location_problem(parent / "s") is None       # the sticky bit keeps nobody off our entries


@needs_acls
@pytest.mark.parametrize("named, mask", [((USER, 0o7, NOBODY), 0o5),     # m::r-x masks nobody's w
                                         ((USER, 0o7, 0), 0o7),          # root may write anyway
                                         ((USER, 0o5, NOBODY), 0o7),     # u:nobody:r-x
                                         ((GROUP, 0o7, 0), 0o7)])        # root's group, no one else in it
def test_an_acl_that_lets_no_one_else_write_is_accepted(tmp_path, named, mask):
    parent = root_dir(tmp_path / "acl", 0o755)
    give_acl(parent, named, mask=mask)
    state = root_dir(parent / "s", 0o700)
    give_acl(state, named, mask=mask)
    assert location_problem(state) is None


@needs_acls
def test_parent_an_acl_lets_a_shared_group_write_in_is_refused(tmp_path):
    parent = root_dir(tmp_path / "acl", 0o755)
    give_acl(parent, (GROUP, 0o7, NOBODY))             # nogroup: nobody's primary group
    name = grp.getgrgid(NOBODY).gr_name
    line = location_problem(parent / "s")
    assert line and f"parent directory {parent} is writable by group {name} (ACL) without" in line
    assert f"run setfacl -x g:{name} {parent} or choose another --state-dir" in line


@needs_acls
def test_state_dir_an_acl_lets_another_user_write_in_is_refused(tmp_path):
    state = root_dir(tmp_path / "s", 0o700)
    give_acl(state, (USER, 0o7, NOBODY))
    assert mode(state) == 0o770
    assert location_problem(state) == (f"{state}: state dir is writable by user nobody (ACL); run setfacl -b "
                                       f"{state}")


@needs_acls
def test_start_refuses_a_parent_an_acl_opens_with_one_line(tmp_path, capsys):
    exp = experiment(tmp_path, {"a": "ok"})
    parent = root_dir(tmp_path / "acl", 0o755)
    give_acl(parent, (USER, 0o7, NOBODY))
    code = main(["start", "--simulate-reboots", "--state-dir", str(parent / "s"), str(exp)])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1
    assert err.startswith(f"coldrun: {parent / 's'}: parent directory {parent} is writable by user nobody (ACL)")
    assert list(parent.iterdir()) == []


def test_acl_entries_are_read_as_the_kernel_stores_them():
    entries = [(posix_acl.USER_OBJ, 7, UNDEFINED), (USER, 7, 1000), (USER, 5, 1001),
               (posix_acl.GROUP_OBJ, 5, UNDEFINED), (GROUP, 6, 50), (MASK, 7, UNDEFINED),
               (posix_acl.OTHER, 5, UNDEFINED)]
    assert posix_acl.parse(acl_bytes(*entries)) == entries
    assert posix_acl.named_writers(entries, USER) == [1000] and posix_acl.named_writers(entries, GROUP) == [50]
    masked = [(MASK, 5, UNDEFINED) if tag == MASK else (tag, perm, ident) for tag, perm, ident in entries]
    assert posix_acl.named_writers(masked, USER) == [] and posix_acl.named_writers(masked, GROUP) == []


@pytest.mark.parametrize("data, reason", [(b"\x02\x00\x00", "3 bytes, not a 4-byte header and 8-byte entries"),
                                          (acl_bytes((USER, 7, 1000))[:-2], "10 bytes, not a 4-byte header"),
                                          (struct.pack("<I", 1), "version 1, not 2"),
                                          (acl_bytes((0x40, 7, 0)), "unknown entry tag 0x40")])
def test_a_malformed_acl_is_unreadable_not_a_crash(data, reason):
    with pytest.raises(UnreadableAcl, match=reason):
        posix_acl.parse(data)


def test_a_dir_whose_acl_cannot_be_read_is_refused_and_no_acl_is_fine(tmp_path, monkeypatch):
    state = tmp_path / "s"
    state.mkdir(mode=0o700)
    stored = {state: struct.pack("<I", 3)}     # the kernel would not store it: read through a double

    def getxattr(path, name, *, follow_symlinks=True):
        found = stored.get(Path(path), OSError(errno.ENODATA, os.strerror(errno.ENODATA)))
        if isinstance(found, OSError):
            raise found
        return found
    monkeypatch.setattr(os, "getxattr", getxattr)
    assert location_problem(state) == (f"{state}: state dir is writable by whoever its ACL names (unreadable: "
                                       f"version 3, not 2); run setfacl -b {state}")
    stored[state] = OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))   # a filesystem without ACLs
    assert location_problem(state) is None
