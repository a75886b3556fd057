"""Linux cpu list syntax ("0-3,8,10-11", "1-7:2/4"), as in cpuset and nohz_full=."""

from __future__ import annotations

import os


def process_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity, which a cpuset partition of others' CPUs leaves out)."""
    return sorted(os.sched_getaffinity(0))


def parse_cpulist(text: str) -> set[int]:
    """Parse a kernel cpu list; raises ValueError naming the bad part."""
    cpus: set[int] = set()
    text = text.strip()
    if not text:
        return cpus
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                rng, _, stride = part.partition(":")
                lo_s, hi_s = rng.split("-", 1)
                lo, hi = int(lo_s), int(hi_s)
                step, group = 1, None
                if stride:
                    # "used_size/group_size": use the first N of every group of M.
                    used_s, _, group_s = stride.partition("/")
                    step, group = int(used_s), int(group_s)
                if hi < lo:
                    raise ValueError
                if group is None:
                    cpus.update(range(lo, hi + 1))
                else:
                    for start in range(lo, hi + 1, group):
                        cpus.update(c for c in range(start, min(start + step, hi + 1)))
            else:
                cpus.add(int(part))
        except ValueError:
            raise ValueError(f"bad cpu list part {part!r} in {text!r} (expected e.g. \"1-3,5\")") from None
    if any(c < 0 for c in cpus):
        raise ValueError(f"negative cpu number in {text!r}")
    return cpus


def format_cpulist(cpus: set[int] | list[int]) -> str:
    """Compact form: {0,1,2,5} -> "0-2,5"."""
    out: list[str] = []
    run: list[int] = []
    for c in sorted(set(cpus)):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)
