"""`python -m supervisor.platforms.cgexec CGROUP_DIR -- ARGV...`: place, verify, exec.

Moves itself into the cgroup v2 directory, checks that the kernel agrees
(/proc/self/cgroup and the CPU affinity both match the cpuset), then execs
ARGV, which inherits the placement and every open fd.  Exit 125 on failure.
"""

from __future__ import annotations

import os
import sys

from supervisor.cpulist import parse_cpulist
from supervisor.platforms.linux_facts import DEFAULT_CGROUP2, parse_cgroup2_mount


def _mount() -> str:
    with open("/proc/self/mountinfo") as f:
        return parse_cgroup2_mount(f.read()) or DEFAULT_CGROUP2


def _inside(want: str) -> bool:
    with open("/proc/self/cgroup") as f:
        return any(ln == want or ln.startswith(want + "/") for ln in f.read().splitlines())


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: cgexec CGROUP_DIR -- ARGV...", file=sys.stderr)
        return 125
    cg, cmd = argv[0], argv[2:]
    try:
        want = "0::/" + os.path.relpath(cg, _mount())
        # The supervisor's per-execution cgroup is a child of CG: already there, stay there.
        if not _inside(want):
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        if not _inside(want):
            with open("/proc/self/cgroup") as f:
                placed = f.read()
            print(f"cgexec: not placed in {cg}: /proc/self/cgroup says {placed.strip()!r}", file=sys.stderr)
            return 125
        with open(os.path.join(cg, "cpuset.cpus.effective")) as f:
            cpus = parse_cpulist(f.read())
        affinity = os.sched_getaffinity(0)
        if cpus and not affinity <= cpus:
            print(f"cgexec: affinity {sorted(affinity)} is outside the cpuset {sorted(cpus)}", file=sys.stderr)
            return 125
    except OSError as e:
        print(f"cgexec: {e}", file=sys.stderr)
        return 125
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:  # e.g. the benchmark user cannot read the interpreter's directory
        print(f"cgexec: cannot run {cmd[0]}: {e.strerror}", file=sys.stderr)
    return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
