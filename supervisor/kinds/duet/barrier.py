"""The duet barrier of one pair execution: made before its two runners start, removed after.

libkruntime (duet.c) keeps the barrier in a POSIX shared-memory segment; the
runners attach to it by the name in COLDRUN_DUET_BARRIER.  The supervisor
(root on a real machine) creates it mode 0600 and, when the runners run as
the fresh benchmark user, gives it to that user: nobody else can open it.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import libkruntime     # its krun_* functions say how to build the C extension when it is missing
from supervisor.errors import ColdrunError

SHM_DIR = "/dev/shm"     # where Linux keeps POSIX shared memory (shm_open's names)


def barrier_env(name: str, timeout: float, spin_us: int) -> dict[str, str]:
    """What each side's runner needs to join the barrier (libkruntime reads these)."""
    return {"COLDRUN_DUET_BARRIER": name, "COLDRUN_DUET_TIMEOUT": f"{timeout:g}", "COLDRUN_DUET_SPIN_US": str(spin_us)}


def remove_barrier(name: str) -> bool:
    """Remove a barrier a killed supervisor left (no error if it is gone); False when it cannot be."""
    try:
        libkruntime.krun_duet_remove(name)
    except OSError:
        return False
    return True


@contextmanager
def pair_barrier(owner: str | None) -> Iterator[str]:
    """A fresh barrier's name while the pair runs; ColdrunError when it cannot be made."""
    name = f"/coldrun-duet-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        libkruntime.krun_duet_create(name, 0o600)
        if owner is not None:
            shutil.chown(os.path.join(SHM_DIR, name.lstrip("/")), user=owner)
    except (OSError, LookupError) as e:
        libkruntime.krun_duet_remove(name)
        raise ColdrunError(f"cannot make the duet barrier {name}: {e}") from None
    try:
        yield name
    finally:
        libkruntime.krun_duet_remove(name)
