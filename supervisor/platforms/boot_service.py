"""Runs ``coldrun resume <state dir>`` once at every boot, until the experiment ends.

systemd: one template unit, ``coldrun@.service``, whose instance name is the
state dir escaped the way ``systemd-escape --path`` does it, so that
``%f`` in the unit gives the state dir back.  OpenBSD: an rc.d script
``coldrun`` whose flags (``rcctl set coldrun flags``) name the state dir.

The unit text carries the absolute path of the ``coldrun`` being run, so the
boot service uses the same installation the user started the experiment
with.  Both functions are idempotent and end with ``sync``: a power cut at
any point leaves either the old or the new state on disk, and running the
function again finishes the job.  The shipped copies of both files are in
``systemd/`` at the top of the source tree; a unit test keeps them equal to
what is rendered here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from supervisor.errors import ColdrunError
from supervisor.system import Commands, SystemRoot
from supervisor.durable import fsync_dir, write_atomic

SYSTEMD_UNIT_DIR = "/etc/systemd/system"
SYSTEMD_TEMPLATE = "coldrun@.service"
OPENBSD_RC_SCRIPT = "/etc/rc.d/coldrun"
EXECUTABLE_PLACEHOLDER = "@COLDRUN@"

SYSTEMD_UNIT_TEMPLATE = """\
# Installed by `coldrun start`, removed by coldrun when the experiment ends
# or on `coldrun abort`.  Do not enable by hand: the instance name is the
# experiment's state dir, escaped with `systemd-escape --path`.
[Unit]
Description=coldrun benchmark experiment in %f (one process execution per boot)
# Start once the machine has finished booting, without holding up the boot.
After=multi-user.target
ConditionPathIsDirectory=%f

[Service]
# exec: the boot is done once coldrun has started; a missing executable
# still shows as a failed unit.
Type=exec
ExecStart=@COLDRUN@ resume %f
# A process execution may take hours: never time it out, never restart it
# (the next boot resumes the experiment; a restart would run a job twice).
TimeoutStartSec=infinity
Restart=no
StandardOutput=journal
StandardError=journal
SyslogIdentifier=coldrun

[Install]
WantedBy=multi-user.target
"""

OPENBSD_RC_TEMPLATE = """\
#!/bin/ksh
#
# Installed by `coldrun start`, removed by coldrun when the experiment ends
# or on `coldrun abort`.  The state dir comes from `rcctl set coldrun flags`.

daemon="@COLDRUN@"
daemon_flags="resume /nonexistent"

. /etc/rc.d/rc.subr

# coldrun is a script: the process rc starts is its #! interpreter running
# it, so rc.subr's pexp (daemon and flags) would never match (rc_check and
# `rcctl check` would fail, and every boot would wait daemon_timeout).
pexp="@INTERPRETER@${daemon}${daemon_flags:+ ${daemon_flags}}"

# In the background so that the boot finishes.  No stop, restart or reload:
# a process execution is never interrupted by rc (nor by the `stop` that
# /etc/rc shutdown sends package scripts when coldrun itself reboots);
# `coldrun abort <state dir>` ends the experiment.
rc_bg=YES
rc_stop=NO
rc_reload=NO

rc_cmd $1
"""
INTERPRETER_PLACEHOLDER = "@INTERPRETER@"


def render_systemd_unit(executable: str) -> str:
    return SYSTEMD_UNIT_TEMPLATE.replace(EXECUTABLE_PLACEHOLDER, executable)


def render_openbsd_rc(executable: str) -> str:
    return (OPENBSD_RC_TEMPLATE.replace(EXECUTABLE_PLACEHOLDER, executable)
            .replace(INTERPRETER_PLACEHOLDER, "".join(f"{word} " for word in script_interpreter(executable))))


def script_interpreter(executable: str) -> list[str]:
    """What the kernel runs before ``executable`` and its arguments when it is a #! script.

    pip writes ``#!/venv/bin/python3``; past execve's 127-character #! limit it
    writes ``#!/bin/sh`` and a second line ``'''exec' /venv/bin/python3 "$0" "$@"``;
    with ``#!/usr/bin/env python3``, env runs ``python3``.  Not a script: nothing.
    """
    try:
        with open(executable, "rb") as f:
            lines = f.read(4096).decode(errors="replace").splitlines()
    except OSError as e:
        raise ColdrunError(f"cannot read the coldrun executable {executable}: {e.strerror}") from None
    if not lines or not lines[0].startswith("#!"):
        return []
    words = lines[0][2:].split()
    if words[:1] == ["/bin/sh"] and len(lines) > 1 and lines[1].startswith("'''exec' "):
        return lines[1].split()[1:2]
    if words and os.path.basename(words[0]) == "env":
        return [w for w in words[1:] if not w.startswith("-")][:1]
    return words


def escape_path(path: str | os.PathLike) -> str:
    """The instance name for a path, as ``systemd-escape --path`` gives it."""
    text = os.path.normpath(str(path)).strip("/")
    if not text:
        return "-"
    out = []
    for i, byte in enumerate(text.encode()):
        ch = chr(byte)
        if ch == "/":
            out.append("-")
        elif (ch.isascii() and (ch.isalnum() or ch in ":_.")) and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def instance_unit(state_dir: str | os.PathLike) -> str:
    return f"coldrun@{escape_path(state_dir)}.service"


def coldrun_executable(argv0: str | None = None) -> str:
    """Absolute path of the ``coldrun`` command being run (the user's install).

    Falls back to ``coldrun`` beside the running interpreter (a venv's bin)
    when coldrun was started some other way (``python -m supervisor``).
    """
    candidates = []
    a0 = argv0 if argv0 is not None else sys.argv[0]
    if a0 and Path(a0).name == "coldrun":
        candidates.append(Path(a0))
    candidates.append(Path(sys.executable).parent / "coldrun")
    for c in candidates:
        p = Path(os.path.abspath(c))
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    raise ColdrunError(
        "cannot find the coldrun executable to run at boot; run `coldrun start` "
        "through the installed `coldrun` command (e.g. /path/to/venv/bin/coldrun)")


def init_system(root: SystemRoot) -> str:
    """'systemd' when it is PID 1, 'openbsd-rc' on OpenBSD, else a clear error."""
    if root.exists("/run/systemd/system"):
        return "systemd"
    if root.exists("/etc/rc.d/rc.subr"):
        return "openbsd-rc"
    raise ColdrunError(
        "no supported init system: real reboots need systemd (Linux) or OpenBSD rc; "
        "use `coldrun start --simulate-reboots` elsewhere")


def _write_atomically(root: SystemRoot, system_path: str, text: str, mode: int) -> bool:
    """Write a file by temp + fsync + rename + fsync(dir); False if already identical."""
    target = root.path(system_path)
    try:
        if target.read_text() == text and (target.stat().st_mode & 0o777) == mode:
            return False
    except FileNotFoundError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text.encode(), mode)
    return True


def _remove(root: SystemRoot, system_path: str) -> bool:
    target = root.path(system_path)
    try:
        target.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(target.parent)
    return True


def _check(result, what: str) -> None:
    if not result.ok:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise ColdrunError(f"{what} failed ({' '.join(result.argv)}: "
                           f"{detail[-1] if detail else 'exit ' + str(result.returncode)})")


def install_and_enable(state_dir: Path, *, root: SystemRoot, commands: Commands, log,
                       executable: str | None = None) -> dict[str, Any]:
    """Make the init system run ``coldrun resume <state_dir>`` at every boot.

    Idempotent; everything is on disk (synced) when it returns, so the
    caller may reboot straight away.  Returns what was installed, for the log.
    """
    state_dir = Path(os.path.abspath(state_dir))
    exe = executable or coldrun_executable()
    kind = init_system(root)
    if kind == "systemd":
        unit = instance_unit(state_dir)
        path = f"{SYSTEMD_UNIT_DIR}/{SYSTEMD_TEMPLATE}"
        changed = _write_atomically(root, path, render_systemd_unit(exe), 0o644)
        _check(commands.run(["systemctl", "daemon-reload"]), "reloading systemd")
        _check(commands.run(["systemctl", "enable", unit]), f"enabling {unit}")
        state = commands.run(["systemctl", "is-enabled", unit])
        if state.stdout.strip() != "enabled":
            raise ColdrunError(f"{unit} is not enabled after `systemctl enable` "
                               f"(systemctl is-enabled says {state.stdout.strip() or state.stderr.strip()!r})")
        info = {"init": kind, "unit": unit, "unit_file": path, "unit_file_written": changed,
                "executable": exe}
    else:
        changed = _write_atomically(root, OPENBSD_RC_SCRIPT, render_openbsd_rc(exe), 0o555)
        # Enable first: rcctl only keeps flags for an enabled package script.
        _check(commands.run(["rcctl", "enable", "coldrun"]), "enabling the coldrun rc.d script")
        _check(commands.run(["rcctl", "set", "coldrun", "flags", "resume", str(state_dir)]),
               "setting the coldrun rc.d flags")
        info = {"init": kind, "rc_script": OPENBSD_RC_SCRIPT, "rc_script_written": changed,
                "executable": exe}
    # systemctl/rcctl do not sync what they wrote; the caller reboots next.
    _check(commands.run(["sync"]), "syncing the boot service files")
    log.info("boot service enabled", state_dir=str(state_dir), **info)
    return info


def disable_and_remove(state_dir: Path, *, root: SystemRoot, commands: Commands, log) -> dict[str, Any]:
    """Stop running coldrun at boot for this experiment and remove what was installed.

    Idempotent and safe to call from inside the running unit.  The shared
    template is removed only when no other experiment still uses it.
    """
    state_dir = Path(os.path.abspath(state_dir))
    kind = init_system(root)
    if kind == "systemd":
        unit = instance_unit(state_dir)
        template = f"{SYSTEMD_UNIT_DIR}/{SYSTEMD_TEMPLATE}"
        if root.exists(template):
            r = commands.run(["systemctl", "disable", unit])
            if not r.ok:
                log.warning("systemctl disable failed; removing the links by hand",
                            unit=unit, stderr=r.stderr.strip())
        # Links left by a cut during disable, or by a template removed by hand.
        for link in root.glob(f"{SYSTEMD_UNIT_DIR}/*.wants/{unit}"):
            _remove(root, link)
        others = [p for p in root.glob(f"{SYSTEMD_UNIT_DIR}/*.wants/coldrun@*.service")]
        removed = False
        if not others:
            removed = _remove(root, template)
        _check(commands.run(["systemctl", "daemon-reload"]), "reloading systemd")
        info = {"init": kind, "unit": unit, "template_removed": removed, "other_experiments": others}
    else:
        r = commands.run(["rcctl", "disable", "coldrun"])
        if not r.ok and root.exists(OPENBSD_RC_SCRIPT):
            log.warning("rcctl disable coldrun failed", stderr=r.stderr.strip())
        removed = _remove(root, OPENBSD_RC_SCRIPT)
        info = {"init": kind, "rc_script_removed": removed}
    _check(commands.run(["sync"]), "syncing the boot service files")
    log.info("boot service disabled", state_dir=str(state_dir), **info)
    return info


def is_enabled(state_dir: Path, *, root: SystemRoot) -> bool:
    """Whether the next boot will resume this experiment (reads files only)."""
    state_dir = Path(os.path.abspath(state_dir))
    if root.exists("/run/systemd/system"):
        unit = instance_unit(state_dir)
        return (root.exists(f"{SYSTEMD_UNIT_DIR}/{SYSTEMD_TEMPLATE}")
                and bool(root.glob(f"{SYSTEMD_UNIT_DIR}/*.wants/{unit}")))
    if root.exists(OPENBSD_RC_SCRIPT) and root.exists("/etc/rc.conf.local"):
        for line in root.read_text("/etc/rc.conf.local").splitlines():
            if line.startswith("pkg_scripts="):
                return "coldrun" in line.split("=", 1)[1].split()
    return False
