"""run_length.json: each [stop] key's latest run-length decision, written before the boot acts on it.

One JSON object, key -> decision, replaced whole (temp + fsync + rename).  A
decision is plain data from kinds/stop/decisions.py:

    executions        the key's finished executions it was made from
    usable            of those, how many gave an estimate
    measure           what mean and the widths are of ("seconds per iteration", "v (param units per second)")
    mean, ci_width, target_width   the key's estimate, its full CI width and the width wanted (None: unknown yet)
    more_executions   executions the analysis expects to still need (0 when done)
    done, converged   finished; and whether because the target was met (not max_executions)
    reason            one line for status and the log
    next              {"iterations", "param"} of the key's next job, None when done
    estimates         per job index: the execution's own estimate (kept, so no execution is analysed twice)
    wps_slices        WPS mode: the slice count Pilot's work-amount schedule hands back

Status reads it (no analysis needed); the boot rewrites a key's entry when the
key has finished executions the entry was not made from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contracts.status_report import KeyProgress, RunLength
from supervisor.durable import write_atomic
from supervisor.errors import ColdrunError
from supervisor.state import layout
from supervisor.state.schedule import OUTSTANDING, RUNNING, SKIPPED, JobLine, Schedule


def load_decisions(state_dir: Path) -> dict[str, dict[str, Any]]:
    """Every key's decision; empty before the first one."""
    path = state_dir / layout.RUN_LENGTH
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ColdrunError(f"{path}: unreadable ({getattr(e, 'strerror', None) or e}); it is written atomically, "
                           f"so the state dir was altered: restore it from a backup", 4) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) and isinstance(v.get("executions"), int)
                                             for v in data.values()):
        raise ColdrunError(f"{path}: not the decisions coldrun wrote (key -> object with executions); the state "
                           f"dir was altered: restore it from a backup", 4)
    return data


def save_decisions(state_dir: Path, decisions: dict[str, dict[str, Any]]) -> None:
    write_atomic(state_dir / layout.RUN_LENGTH, json.dumps(decisions, sort_keys=True, indent=1).encode())


def unconverged(decisions: dict[str, dict[str, Any]]) -> list[str]:
    """Keys that stopped at max_executions without reaching their target."""
    return sorted(key for key, d in decisions.items() if d.get("done") and not d.get("converged"))


def target_text(stop: Any) -> str:
    """[stop]'s target in one phrase."""
    wanted = [f"{stop.ci_percent * 100:g} % of the {'rate' if stop.wps else 'mean'}"] if stop.ci_percent else []
    wanted += [f"{stop.ci_width * 1e3:g}ms"] if stop.ci_width else []
    what = "v (WPS)" if stop.wps else f"the mean ({stop.estimate} estimate)"
    return (f"CI width of {what} <= {' or '.join(wanted)} ({stop.confidence * 100:g} % confidence), "
            f"{stop.min_executions} to {stop.max_executions} executions per key")


def jobs_by_key(schedule: Schedule) -> dict[str, list[JobLine]]:
    """The jobs of every key that is not skipped, in schedule order."""
    keys: dict[str, list[JobLine]] = {}
    for job in schedule.jobs:
        if job.state != SKIPPED:
            keys.setdefault(job.key, []).append(job)
    return keys


def expected_jobs(schedule: Schedule, decisions: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """key -> (executions beyond its outstanding jobs that its decision still expects, at which iterations)."""
    out = {}
    for key, jobs in jobs_by_key(schedule).items():
        d = decisions.get(key)
        if d is None or d.get("done") or not d.get("next"):
            continue
        waiting = sum(1 for j in jobs if j.state in (OUTSTANDING, RUNNING))
        more = int(d.get("more_executions") or 0) - waiting
        if more > 0:
            out[key] = (more, int(d["next"]["iterations"]))
    return out


def finished_jobs(jobs: list[JobLine]) -> int:
    """How many of a key's jobs have ended (completed, errored, timed out or crashed)."""
    return sum(1 for j in jobs if j.state not in (OUTSTANDING, RUNNING, SKIPPED))


def run_length_progress(state_path: Path, schedule: Schedule, decisions: dict[str, dict[str, Any]],
                        stop: Any) -> RunLength:
    """status's [stop] part: each key's executions and latest decision."""
    keys = []
    for key, jobs in jobs_by_key(schedule).items():
        d = decisions.get(key) or {}
        try:
            keys.append(KeyProgress(
                key=key, executions=finished_jobs(jobs), decided_on=d.get("executions"), measure=d.get("measure"),
                mean=d.get("mean"), ci_width=d.get("ci_width"), target_width=d.get("target_width"),
                more_expected=d.get("more_executions"), converged=bool(d.get("converged")),
                done=bool(d.get("done")), reason=d.get("reason")))
        except ValidationError as e:
            err = e.errors()[0]
            raise ColdrunError(f"{state_path / layout.RUN_LENGTH}: {key}: {err['loc'][0]}: {err['msg']}; coldrun "
                               f"did not write that, so the state dir was altered: restore it from a backup",
                               4) from None
    return RunLength(target=target_text(stop), wps=stop.wps is not None, min_executions=stop.min_executions,
                     max_executions=stop.max_executions, keys=keys)
