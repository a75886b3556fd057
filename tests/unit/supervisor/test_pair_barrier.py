"""A pair execution's barrier: a fresh shared-memory segment only the benchmark user can open, gone after."""

from __future__ import annotations

import os
import pwd
import stat

import pytest

from supervisor.kinds.duet.barrier import SHM_DIR, barrier_env, pair_barrier, remove_barrier


def test_the_barrier_exists_only_while_the_pair_runs_and_is_private():
    with pair_barrier(None) as name:
        path = os.path.join(SHM_DIR, name.lstrip("/"))
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
        assert barrier_env(name, 1.5, 100) == {"COLDRUN_DUET_BARRIER": name, "COLDRUN_DUET_TIMEOUT": "1.5",
                                               "COLDRUN_DUET_SPIN_US": "100"}
    assert not os.path.exists(path)
    assert remove_barrier(name)          # gone already: removing again is no error


def test_the_barrier_belongs_to_the_benchmark_user_when_runners_run_as_one():
    if os.geteuid() != 0:
        pytest.skip("giving the barrier to another user needs root; run the tests as root to see it")
    nobody = pwd.getpwnam("nobody")
    with pair_barrier("nobody") as name:
        st = os.stat(os.path.join(SHM_DIR, name.lstrip("/")))
        assert st.st_uid == nobody.pw_uid and stat.S_IMODE(st.st_mode) == 0o600


def test_a_barrier_that_cannot_be_given_to_its_user_is_one_error_and_leaves_nothing(monkeypatch):
    from supervisor.errors import ColdrunError
    before = set(os.listdir(SHM_DIR))
    with pytest.raises(ColdrunError, match=r"cannot make the duet barrier /coldrun-duet-\d+-[0-9a-f]+: .*no-such-user"):
        with pair_barrier("no-such-user-coldrun"):
            pass
    assert {n for n in set(os.listdir(SHM_DIR)) - before if n.startswith("coldrun-duet-")} == set()
