"""Whether a path survives a reboot: a state dir that the boot empties cannot carry an experiment across one.

Two ways a path is lost at boot, both read through SystemRoot:

- its file system lives in memory: tmpfs or ramfs in the mount table (``/proc/self/mountinfo``, the mount
  whose mount point is the longest prefix of the path; proc(5) gives the format); OpenBSD's mfs likewise;
- systemd-tmpfiles empties or ages it (tmpfiles.d(5)): a ``D`` line (contents removed at boot, by
  ``systemd-tmpfiles --boot --remove``; Debian's ``D /tmp``), ``R``/``r`` (the path removed), or any line
  with an age (periodic clean-up by systemd-tmpfiles-clean.timer) whose path holds ours and which no
  ``x``/``X`` line exempts.  Files in /etc/tmpfiles.d override /run/tmpfiles.d, which override
  /usr/lib/tmpfiles.d, by file name.  Lines with specifiers (``%b``, ...) are skipped.

Without a mount table (OpenBSD) only /tmp is known to be emptied at boot (/etc/rc's clean-up).
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path, PurePosixPath

from supervisor.system import SystemRoot

MEMORY_FILE_SYSTEMS = ("tmpfs", "ramfs", "mfs")
TMPFILES_DIRS = ("/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/lib/tmpfiles.d")   # first wins, by file name
FIX = "choose a --state-dir on a disk that survives a reboot, e.g. /var/lib/coldrun/<name>"


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (\\040 ...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def _mount_of(root: SystemRoot, path: PurePosixPath) -> tuple[str, str] | None:
    """(mount point, file system type) of the mount holding ``path``; None without a mount table."""
    try:
        text = root.read_text("/proc/self/mountinfo")
    except OSError:
        return None
    best: tuple[str, str] | None = None
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if not sep or len(fields) < 5 or not tail.split():
            continue
        point = PurePosixPath(_unescape(fields[4]))
        if path == point or point in path.parents:
            if best is None or len(str(point)) >= len(best[0]):    # later lines mount over earlier ones
                best = (str(point), tail.split()[0])
    return best


def _tmpfiles_lines(root: SystemRoot) -> list[tuple[str, str]]:
    """(file, line) of every tmpfiles.d rule in force, files overridden by name as tmpfiles.d(5) says."""
    chosen: dict[str, str] = {}
    for d in TMPFILES_DIRS:
        try:
            names = sorted(os.listdir(root.path(d)))
        except OSError:
            continue
        for name in names:
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = f"{d}/{name}"
    out = []
    for name in sorted(chosen):
        try:
            text = root.read_text(chosen[name])
        except OSError:
            continue
        out += [(chosen[name], ln.strip()) for ln in text.splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    return out


def _holds(pattern: str, path: PurePosixPath, *, strictly: bool) -> bool:
    """Whether ``path`` is the rule's path (unless ``strictly``) or lies under it; the rule may hold globs."""
    return any(fnmatch.fnmatchcase(str(p), pattern) for p in ([] if strictly else [path]) + list(path.parents))


def _cleared_by_tmpfiles(root: SystemRoot, path: PurePosixPath) -> str | None:
    rules = []
    for file, line in _tmpfiles_lines(root):
        f = line.split()
        if len(f) < 2 or "%" in f[1]:
            continue
        kind = f[0].rstrip("!-=~^+")
        age = f[5] if len(f) > 5 else "-"
        rules.append((file, line, kind, f[1], age))
    exempt = [r for r in rules if r[2] in ("x", "X") and _holds(r[3], path, strictly=False)]
    for file, line, kind, pattern, age in rules:
        if kind == "D" and _holds(pattern, path, strictly=True):
            return f"{file} empties {pattern} at every boot ({line!r})"
        if kind in ("R", "r") and (_holds(pattern, path, strictly=False) if kind == "R" else
                                   fnmatch.fnmatchcase(str(path), pattern)):
            return f"{file} removes {pattern} at every boot ({line!r})"
        if (kind in ("d", "D", "e", "v", "q", "Q", "C") and age not in ("-", "") and not exempt
                and _holds(pattern, path, strictly=True)):
            return f"{file} deletes files under {pattern} older than {age.lstrip('~')} ({line!r})"
    return None


def lost_at_boot(root: SystemRoot, path: Path) -> str | None:
    """One line saying why ``path`` would not survive a reboot, with the fix; None when nothing says so."""
    real = PurePosixPath(os.path.realpath(path))
    mount = _mount_of(root, real)
    if mount is not None and mount[1] in MEMORY_FILE_SYSTEMS:
        return f"{path}: state dir is on a {mount[1]} ({mount[0]}), which a reboot empties; {FIX}"
    if mount is None and (real == PurePosixPath("/tmp") or PurePosixPath("/tmp") in real.parents):
        return f"{path}: state dir is under /tmp, which the boot scripts empty; {FIX}"
    cleared = _cleared_by_tmpfiles(root, real)
    if cleared:
        return f"{path}: state dir would be lost: {cleared}; {FIX}"
    return None
