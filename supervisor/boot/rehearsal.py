"""`coldrun check --rehearse`: every key runs one process execution of a few iterations, then an ETA.

What loading cannot find (a benchmark that fails in its first iteration, a param it cannot take, a
runner that dies while measuring) is found here, before the first reboot.  Each key runs once, one at
a time (so the times are not two runs sharing the CPUs), through trial_run: its real runner, param,
environment and limits, as the benchmark user's stand-in, no reboot, no platform change, a throwaway
home.  Its mean time per iteration gives the real experiment's ETA: for every planned job, the
rehearsal's process time beyond its iterations (start-up, load, exit) plus the job's iterations at that
mean, plus the waits per execution (boot settle + sync); reboots are not included, a pair job counts its
slower side, and a key that failed its rehearsal is left out (the line says how many executions count).
The times are a rehearsal's: the machine is not in its experiment state, and the
first iterations of a JIT are rarely its steady ones.  A [duet] pair's sides are rehearsed one by one,
unpaired (no barrier); a [screening] key runs with the experiment's own settings, not a treatment's.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.keys import pair_sides
from supervisor.boot.check_defaults import REHEARSAL_ITERATIONS
from supervisor.boot.prepare import PreparedExperiment
from supervisor.boot.trial_run import Trial, run_trial, shown_file
from supervisor.experiment.quantities import format_duration

REHEARSAL_TIMEOUT = 600.0    # seconds one rehearsal execution may take when the experiment sets no timeout
# The paper's (warmup_stats') equivalence delta and the share of an iteration it can resolve: copies of
# analysis.classify.PAPER_DELTA and RESOLVABLE_SHARE (the supervisor does not import analysis).
PAPER_DELTA_SECONDS = 0.001
RESOLVABLE_SHARE = 0.01


@dataclass(frozen=True)
class Rehearsal:
    trials: list[Trial]
    iterations: int
    eta_seconds: float      # the planned executions of keys that rehearsed ok (``eta_executions`` of them)
    eta_executions: int

    @property
    def failed(self) -> list[Trial]:
        return [t for t in self.trials if not t.outcome.completed]


def rehearse(prep: PreparedExperiment, *, iterations: int = REHEARSAL_ITERATIONS, prefix: list[str],
             timeout: float | None = None) -> Rehearsal:
    """Run each of ``prep.ready_keys`` once."""
    exp = prep.exp
    limit = timeout or exp.execution_timeout or REHEARSAL_TIMEOUT
    trials = [run_trial(exp, prep.exp_dir, prep.experiment_file, key, iterations=iterations, prefix=prefix,
                        timeout=limit) for key in prep.ready_keys]
    return Rehearsal(trials, iterations, *_eta(prep, trials))


def execution_seconds(trial: Trial, iterations: int) -> float:
    """An execution of ``iterations`` iterations as the rehearsal predicts it."""
    outside = max(0.0, trial.seconds - sum(trial.wallclock_times))
    return outside + (trial.per_iteration() or 0.0) * iterations


def _eta(prep: PreparedExperiment, trials: list[Trial]) -> tuple[float, int]:
    """Seconds and count of the planned executions whose keys (a pair: both sides) rehearsed ok."""
    done = {t.key: t for t in trials if t.outcome.completed}
    total, counted = 0.0, 0
    for job in prep.jobs:
        sides = pair_sides(job.key) or (job.key,)
        if job.skipped or any(side not in done for side in sides):
            continue
        total += max(execution_seconds(done[side], job.iterations) for side in sides) + prep.exp.waits.per_execution
        counted += 1
    return total, counted


def delta_note(per_iteration: float | None) -> str | None:
    """Under a key's ok line when its iterations are shorter than the paper's 1 ms delta can resolve."""
    if not per_iteration or per_iteration * RESOLVABLE_SHARE >= PAPER_DELTA_SECONDS:
        return None
    unseen = float(f"{PAPER_DELTA_SECONDS / per_iteration * 100:.2g}")
    return (f"    note: under what warmup_stats' --delta {PAPER_DELTA_SECONDS:g} s can resolve (changes below "
            f"~{unseen:g}% go unseen); coldrun-analyze's default relative rule sees them, or raise the param")


def rehearsal_lines(prep: PreparedExperiment, r: Rehearsal) -> list[str]:
    """check's report: one line per key (ok with its time per iteration, or the failure and its reason;
    an ok key too fast for the paper's equivalence delta gets a note under it), then the ETA."""
    lines = [f"rehearsal ({r.iterations} iterations per key, one process execution each, no reboot):"]
    for t in r.trials:
        if t.outcome.completed:
            lines.append(f"  {t.key}: ok, {t.per_iteration():.6g} s per iteration "
                         f"(process {t.seconds:.2f} s)")
            note = delta_note(t.per_iteration())
            if note:
                lines.append(note)
        else:
            lines.append(f"  {t.key}{shown_file(prep.exp, prep.exp_dir, t.key)}: FAILED ({t.outcome.state}): "
                         f"{t.outcome.reason}")
    which = (f"the {prep.n_run} process executions planned" if r.eta_executions == prep.n_run else
             f"{r.eta_executions} of the {prep.n_run} process executions planned (those of keys that rehearsed ok)")
    lines.append(f"ETA: {format_duration(r.eta_seconds)} for {which} (their iterations at the rehearsal's times, "
                 f"start-up and waits), plus reboots")
    return lines
