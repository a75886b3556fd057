"""The audit: a fingerprint of what must not change during an experiment.

Compared at every boot with the one taken at start (``compare_audit``);
volatile facts (uptime, boot id, kernel log tail) sit under "volatile" and
are recorded, never compared.  The supervisor adds the experiment file's
hash under "experiment_sha256" before storing it.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from typing import Any

VOLATILE = "volatile"


def coldrun_version() -> str:
    try:
        return version("coldrun")
    except Exception:
        return "unknown"


def digest_lines(text: str) -> str:
    """Order-independent digest of a package list."""
    lines = sorted(ln for ln in text.splitlines() if ln.strip())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


def compare_audit(old: dict[str, Any], new: dict[str, Any], allowed: list[str] | tuple[str, ...] = ()) -> list[str]:
    """One line per fact that differs, except volatile ones and ``allowed`` keys ("*" = all)."""
    if "*" in allowed:
        return []
    diffs = []
    for key in sorted(set(old) | set(new)):
        if key == VOLATILE or key in allowed:
            continue
        if key not in new:
            diffs.append(f"{key}: was {_short(old[key])}, now missing")
        elif key not in old:
            diffs.append(f"{key}: not recorded at start, now {_short(new[key])}")
        elif old[key] != new[key]:
            diffs.append(f"{key}: was {_short(old[key])}, now {_short(new[key])}")
    return diffs
