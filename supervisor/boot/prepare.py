"""Getting an experiment ready to run, shared by `coldrun check` (which reports) and `coldrun start` (which refuses).

Load and validate the file, expand the schedule, require the files every key
needs, then find what would make runners fail before the first reboot: files
a fresh benchmark user cannot reach, and runners that cannot start at all.
Nothing here changes the machine or writes a state dir.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.experiment.duet import OneCpu, pair_cpus, pair_sides
from supervisor.experiment.model import Experiment, load_experiment
from supervisor.experiment.plan import JobSpec, expand, screening_jobs
from supervisor.experiment.screening_plan import ScreeningPlan, plan_screening
from supervisor.boot.screening_check import level_problems
from supervisor.launch.runner_access import unreachable_files
from supervisor.launch.runner_command import validate_files
from supervisor.launch.runner_probe import probe_runners
from supervisor.platforms.factory import HARDWARE, SIMULATED, Machine
from supervisor.run_length_analysis import RunLengthAnalysis


@dataclass
class Prepared:
    experiment_file: str
    exp: Experiment
    text: bytes               # the file as read (its sha256 goes into the schedule)
    exp_dir: Path
    seed: int
    jobs: list[JobSpec]
    run_keys: list[str]       # keys with at least one job that is not skipped
    unreachable: list[str]    # benchmark_user policy only: files a fresh user cannot reach, one line each
    runner_problems: list[str]  # runners that cannot start, one line each
    screening: ScreeningPlan | None = None   # [screening]: the design and each job's treatment
    pair_cpus: tuple[int, int] | None = None  # [duet]: the two CPUs the sides run on

    @property
    def n_run(self) -> int:
        return sum(1 for j in self.jobs if not j.skipped)


def prepare(experiment_file: str, *, random_seed: int | None = None,
            as_benchmark_user: bool = False, run_length: RunLengthAnalysis | None = None,
            machine: Machine | None = None, simulate: bool = False) -> Prepared:
    """Everything a start needs to know before it changes anything; ColdrunError for bad input.

    ``random_seed`` is used for order = "random" when the file names no seed
    (start draws one; check shows seed 0).  ``as_benchmark_user``: runners will
    run as the policy's fresh benchmark user (a real start), so probe them so.
    ``run_length``: the analysis a [stop] experiment needs between executions
    (Machine.run_length); refused here when it cannot be imported.  ``machine`` and
    ``simulate``: the CPUs a [duet] experiment's pairs may use (Machine.cpus; refused without
    two), and where a [screening] experiment's levels must be settable and verifiable.
    """
    exp, text = load_experiment(experiment_file)
    if exp.stop is not None:
        missing = (run_length or RunLengthAnalysis()).unavailable()
        if missing:
            raise ColdrunError(f"{experiment_file}: stop: {missing}")
    machine = machine or Machine()
    cpus = None
    if exp.duet is not None:
        try:
            cpus = pair_cpus(exp.duet, machine.cpus(SIMULATED if simulate else HARDWARE, exp.platform))
        except OneCpu as e:
            raise ColdrunError(f"{experiment_file}: {e}")
    exp_dir = Path(experiment_file).absolute().parent
    if exp.seed is not None:
        seed = exp.seed
    else:
        # A duet experiment's start orders (AB/BA) and a screening design's run order are drawn from the seed too.
        seed = (random_seed if (exp.order == "random" or exp.duet is not None or exp.screening is not None)
                and random_seed is not None else 0)
    screening = None
    if exp.screening is not None:
        try:
            screening = plan_screening(exp, seed)
            problems = level_problems(exp, machine, simulate=simulate)
        except ColdrunError as e:
            raise ColdrunError(f"{experiment_file}: {e}") from None
        if problems:
            raise ColdrunError("\n".join(f"{experiment_file}: {line}" for line in problems))
    jobs = screening_jobs(screening.runs) if screening else expand(exp, seed)
    run_keys = sorted({key for j in jobs if not j.skipped for key in pair_sides(j.key) or (j.key,)})
    validate_files(exp, exp_dir, experiment_file, run_keys)
    unreachable = (unreachable_files(exp, exp_dir, experiment_file, run_keys)
                   if exp.platform.benchmark_user else [])
    runner_problems = probe_runners(exp, exp_dir, experiment_file, run_keys,
                                    as_benchmark_user=as_benchmark_user and exp.platform.benchmark_user)
    return Prepared(experiment_file, exp, text, exp_dir, seed, jobs, run_keys, unreachable, runner_problems,
                    screening, cpus)


def refuse_problems(prep: Prepared, *, as_benchmark_user: bool) -> None:
    """`start`: one clear line for the first thing that would make runners fail, and how many more."""
    problems = (prep.unreachable if as_benchmark_user else []) + prep.runner_problems
    if problems:
        more = f" (and {len(problems) - 1} more; coldrun check lists them)" if len(problems) > 1 else ""
        raise ColdrunError(problems[0] + more)
