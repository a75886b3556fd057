"""What a key runs, pinned at start: digests of its benchmark files, runner files, interpreter and libraries.

A benchmark replaced half-way through a night would otherwise give half its
executions of another program, recorded as one key.  ``coldrun start`` writes
the digests of every file a key's launch names (state dir ``key_files.json``):
every regular file under the benchmark's own directory, and every file the
runner command names by absolute path in its argv or environment (the
interpreter, the runner file, libkruntime, the language's binding).  Libraries
an interpreter links dynamically are not followed (an ldd per key and boot is
not cheap, and they change with the system's packages, which the audit sees).
Before every execution the boot compares them again (``changes``: content
only, not files that appeared or went); what differs stops the experiment,
or with ``on_changed_files = "flag"`` runs and is named in the record
(``platform_before.changed_files``, flag ``files_changed``).  Files over ``LARGE_FILE`` are pinned by size and
modification time only, so a data set does not cost a read at every boot.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from contracts.keys import Key, pair_sides
from supervisor.experiment.model import Experiment
from supervisor.launch.runner_command import benchmark_path, runner_launch
from supervisor.state import layout

LARGE_FILE = 64 * 1024 * 1024
SHOWN_CHANGES = 3     # in a stop reason; the record lists all


def _digest(path: Path, st: os.stat_result) -> str:
    if st.st_size > LARGE_FILE:
        return f"size={st.st_size} mtime_ns={st.st_mtime_ns}"
    with open(path, "rb") as f:
        return "sha256=" + hashlib.file_digest(f, "sha256").hexdigest()


def _tree(top: Path) -> list[Path]:
    """Regular files under ``top`` (symlinks to files followed, directory symlinks not, so no loop), without the
    byte code a Python runner may write there itself."""
    found = []
    for here, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [Path(here) / name for name in sorted(files) if not name.endswith(".pyc")]
    return found


def key_paths(exp: Experiment, exp_dir: Path, exp_path: str, key: str, home: str) -> tuple[list[Path], list[Path]]:
    """(the files without which the key cannot launch, every file the key's digest covers).  ColdrunError when
    its launch cannot be built (the launch path reports that)."""
    bench, vm_name, variant = Key.parse(key)
    launch = runner_launch(exp, exp_dir, exp_path, bench, vm_name, variant, home=home)
    named = [launch.argv[0] if "/" in launch.argv[0] else
             (shutil.which(launch.argv[0], path=launch.env.get("PATH", "")) or launch.argv[0])]
    named += [a for a in (*launch.argv[1:], *launch.env.values()) if os.path.isabs(a) and os.path.isfile(a)]
    needed = [Path(os.path.realpath(p)) for p in named[:1]]
    bench_file = benchmark_path(exp, exp_dir, bench, variant, exp.vms[vm_name].runner)
    covered = [Path(os.path.realpath(p)) for p in named]
    if bench_file is not None:
        needed.append(bench_file)
        covered += [Path(os.path.realpath(p)) for p in _tree(bench_file.parent)]
    return needed, sorted(set(covered))


def key_digests(exp: Experiment, exp_dir: Path, exp_path: str, key: str, home: str) -> dict[str, str]:
    _, covered = key_paths(exp, exp_dir, exp_path, key, home)
    out = {}
    for p in covered:
        try:
            st = os.stat(p)
            if stat.S_ISREG(st.st_mode):
                out[str(p)] = _digest(p, st)
        except OSError as e:
            raise ColdrunError(f"{p}: cannot read it to pin the benchmark's files ({e.strerror}); make it "
                               f"readable, or move it out of the benchmark's directory") from None
    return out


def single_keys(job_keys: list[str]) -> list[str]:
    """The bench:vm:variant keys behind job keys (a pair job's two sides)."""
    return sorted({k for job_key in job_keys for k in (pair_sides(job_key) or (job_key,))})


def record_at_start(state_path: Path, exp: Experiment, exp_dir: Path, exp_path: str, job_keys: list[str],
                    home: str) -> None:
    pinned = {key: key_digests(exp, exp_dir, exp_path, key, home) for key in single_keys(job_keys)}
    write_atomic(state_path / layout.KEY_FILES, json.dumps(pinned, indent=1, sort_keys=True).encode(), 0o600)


def summary(digests: dict[str, str]) -> str:
    """One digest for a key's whole file set, for each record (key_files.json has the per-file list)."""
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()


def changes(state_path: Path, exp: Experiment, exp_dir: Path, exp_path: str, key: str,
            home: str) -> tuple[list[str], str | None]:
    """(one line per file of ``key`` whose content differs from start's digest, the digest of its files now).

    Nothing when the key cannot launch (a missing benchmark file or interpreter, a bad runner): the launch says
    so with its own reason, as for a first execution.  A state dir from before digests were pinned: nothing."""
    try:
        pinned_all = json.loads((state_path / layout.KEY_FILES).read_text())
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as e:
        raise ColdrunError(f"{state_path / layout.KEY_FILES}: unreadable ({e}); the state dir was altered") from None
    pinned = pinned_all.get(key)
    if not isinstance(pinned, dict):
        return [], None
    try:
        needed, _ = key_paths(exp, exp_dir, exp_path, key, home)
    except ColdrunError:
        return [], None
    if not all(p.is_file() for p in needed):
        return [], None
    now = key_digests(exp, exp_dir, exp_path, key, home)
    # Only content that changed: a file that appeared may be the benchmark's own output, and a file that went
    # fails the launch or the benchmark (errored, with its reason; a pair's partner may share the directory),
    # where a changed one would be measured silently.
    lines = [f"{p}: content changed" for p in sorted(set(now) & set(pinned)) if now[p] != pinned[p]]
    return lines, summary(now)
