"""Can the benchmark user reach every file its runner needs?

On a real run the runner executes as a fresh unprivileged user (the
platform's launch prefix drops to it with setpriv / runas), who is neither
the owner nor in the group of coldrun's files, so only the "others"
permission bits count: every directory on the way needs x, the files need r
(and x for what is executed).  A coldrun installed under /root (mode 0700)
is the usual failure; it would show up only as runners dying with
"Permission denied" after the first reboot, so ``coldrun check`` warns and a
real ``coldrun start`` refuses before anything changes.  ACLs are not read:
none names a fresh user, so the others bits (an ACL's "other" entry) decide.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from contracts.keys import Key
from supervisor.experiment.model import Experiment
from supervisor.launch.runner_command import KRUN_EXTERNAL_ADAPTER, Launch, benchmark_path, runner_launch

# Runner environment variables that hold paths of files the runner loads.
PATH_VARIABLES = ("COLDRUN_KRUNTIME_EXTENSION", "COLDRUN_LIBKRUNTIME", "COLDRUN_KRUN_JNI",
                  "COLDRUN_KRUN_NODE_ADDON")
DIR_FIX = ("install coldrun and the benchmarks outside {where} (e.g. python3 -m venv /opt/coldrun) or "
           "chmod o+{bits} {where}; or set platform.benchmark_user = false to run benchmarks as root")
FILE_FIX = "chmod o+{bits} {where}; or set platform.benchmark_user = false to run benchmarks as root"

READ, EXECUTE = "read", "execute"
NOBODY = 65534   # owns no file and is in no group: sees coldrun's files as the benchmark user will
NOBODY_NAME = "nobody"


def unprivileged_prefix() -> list[str]:
    """argv prefix that runs a command as nobody, before the benchmark user exists (the runner probe).

    [] when not root (no switch possible; the command then runs as the
    invoking user) or where setpriv is missing (OpenBSD: doas/sudo would
    close the results channel, see platforms/runas.py).
    """
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return []
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


class Blocker:
    """A path component that keeps "others" out: ``where``, and the mode bits they lack."""

    def __init__(self, where: Path, is_dir: bool, text: str, bits: str):
        self.where, self.is_dir, self.text, self.bits = where, is_dir, text, bits

    def fix(self) -> str:
        return (DIR_FIX if self.is_dir else FILE_FIX).format(where=self.where, bits=self.bits)


def _others_mode_problem(path: Path, want_dir: bool, need: str) -> Blocker | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None          # existence is checked elsewhere (resolve.py)
    except OSError as e:
        return Blocker(path, False, f"{path} cannot be inspected ({e.strerror})", "r")
    mode = stat.S_IMODE(st.st_mode)
    is_dir = stat.S_ISDIR(st.st_mode)
    if is_dir:
        bits = stat.S_IXOTH | (stat.S_IROTH if want_dir else 0)
        words = "rx" if want_dir else "x"
    else:
        bits = stat.S_IROTH | (stat.S_IXOTH if need == EXECUTE else 0)
        words = "rx" if need == EXECUTE else "r"
    if mode & bits != bits:
        return Blocker(path, is_dir, f"{path} is mode {mode:04o} (others need {words})", words)
    return None


def _chain(path: Path) -> list[Path]:
    """``path``'s ancestors, outermost first, then ``path`` itself."""
    return list(reversed(path.parents)) + [path]


def first_blocker(path: str | Path, need: str, *, dir_listable: bool = False) -> Blocker | None:
    """The first path component that keeps "others" from ``need``-ing ``path``; None when reachable.

    Both the path as written and its symlink-resolved form are walked (a venv's
    python is a symlink into the interpreter's real home).
    """
    p = Path(os.path.abspath(path))
    seen = []
    for candidate in (p, Path(os.path.realpath(p))):
        if candidate in seen:
            continue
        seen.append(candidate)
        for comp in _chain(candidate)[:-1]:
            if comp == Path(comp.anchor):
                continue
            problem = _others_mode_problem(comp, False, READ)
            if problem:
                return problem
        if candidate.is_dir():
            problem = _others_mode_problem(candidate, True, READ)
        else:
            problem = _others_mode_problem(candidate, False, need)
            if not problem and dir_listable:
                problem = _others_mode_problem(candidate.parent, True, READ)
        if problem:
            return problem
    return None


def needed_files(launch: Launch, bench_file: Path | None) -> list[tuple[str, str, bool]]:
    """(path, read|execute, parent must be listable) for every file a runner needs."""
    out: list[tuple[str, str, bool]] = [(launch.argv[0], EXECUTE, False)]
    rest = launch.argv[1:]
    if Path(launch.argv[0]).name == "startup_wrapper" and rest:
        out.append((rest[0], EXECUTE, False))     # startup-time mode: the wrapper execs the VM
        rest = rest[1:]
    if rest[:1] == ["-I"] and len(rest) > 2 and Path(rest[1]).name == KRUN_EXTERNAL_ADAPTER:
        out += [(rest[1], READ, False), (rest[2], EXECUTE, False)]   # the adapter runs the Krun script
        rest = rest[3:]
    for arg in rest:
        if os.path.isabs(arg) and os.path.exists(arg):
            # Benchmarks are imported/loaded from their directory (Python lists it).
            out.append((arg, READ, Path(arg) == bench_file))
    for name in PATH_VARIABLES:
        if launch.env.get(name):
            out.append((launch.env[name], READ, False))
    for entry in launch.env.get("CLASSPATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            out.append((entry, READ, False))
    return out


def unreachable_files(exp: Experiment, exp_dir: Path, exp_path: str, keys: list[str]) -> list[str]:
    """One line per file the benchmark user cannot reach, naming the first key whose runner needs it."""
    return unreachable_lines(unreachable_by_key(exp, exp_dir, exp_path, keys))


def unreachable_lines(blocked: dict[str, tuple[tuple[str, str], str]]) -> list[str]:
    """``unreachable_by_key``'s answer as one line per file (the first key needing it named)."""
    lines: dict[tuple[str, str], str] = {}
    for need_path, line in blocked.values():
        lines.setdefault(need_path, line)
    return list(lines.values())


def unreachable_by_key(exp: Experiment, exp_dir: Path, exp_path: str,
                       keys: list[str]) -> dict[str, tuple[tuple[str, str], str]]:
    """Key -> ((path, need), the line naming it) for the first file its runner needs that the benchmark
    user cannot reach; keys it can run are absent."""
    problems: dict[str, tuple[tuple[str, str], str]] = {}
    blockers: dict[tuple[str, str], Blocker | None] = {}
    for key in keys:
        bench, vm_name, variant = Key.parse(key)
        launch = runner_launch(exp, exp_dir, exp_path, bench, vm_name, variant, home="/nonexistent")
        bench_file = benchmark_path(exp, exp_dir, bench, variant, exp.vms[vm_name].runner)
        for path, need, listable in needed_files(launch, bench_file):
            if (path, need) not in blockers:
                blockers[(path, need)] = first_blocker(path, need, dir_listable=listable)
            blocker = blockers[(path, need)]
            if blocker:
                problems[key] = ((path, need), f"{exp_path}: vms.{vm_name} ({key}): the benchmark user cannot "
                                               f"{need} {path}: {blocker.text}; {blocker.fix()}")
                break
    return problems
