"""Getting an experiment ready to run, shared by `coldrun check` (which reports) and `coldrun start` (which refuses).

Load and validate the file, expand the schedule, then find every problem that
would make executions fail after the first reboot, all of them in one pass:
missing benchmark files and interpreters, pre/post commands that cannot run,
files a fresh benchmark user cannot reach, and runners that cannot start at
all.  (Loading every key's benchmark is check's own step, boot/load_check.py,
on the ``ready_keys``.)  Nothing here changes the machine or writes a state dir.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from supervisor.errors import ColdrunError
from supervisor.boot.kinds import Plain, kind_for
from supervisor.boot.kinds.plain import Readying
from contracts.keys import Key, pair_sides
from supervisor.experiment.model import Experiment, load_experiment
from supervisor.experiment.plan import JobSpec
from supervisor.boot.user_commands import command_problems
from supervisor.launch.runner_access import unreachable_by_key, unreachable_lines
from supervisor.launch.runner_command import file_problems
from supervisor.launch.runner_probe import probe_failures
from supervisor.platforms.factory import Machine


@dataclass
class PreparedExperiment:
    experiment_file: str
    exp: Experiment
    kind: Plain               # what differs between plain, [stop], [duet] and [screening] experiments
    text: bytes               # the file as read (its sha256 goes into the schedule)
    exp_dir: Path
    seed: int
    jobs: list[JobSpec]
    run_keys: list[str]       # keys with at least one job that is not skipped
    unreachable: list[str]    # benchmark_user policy only: files a fresh user cannot reach, one line each
    problems: list[str]       # what start refuses whoever runs it: missing files, commands, runners, one line each
    ready_keys: list[str]     # run keys with none of these problems: the ones worth loading

    @property
    def n_run(self) -> int:
        return sum(1 for j in self.jobs if not j.skipped)


def prepare(experiment_file: str, *, random_seed: int | None = None,
            as_benchmark_user: bool = False,
            machine: Machine | None = None, simulate: bool = False) -> PreparedExperiment:
    """Everything a start needs to know before it changes anything; ColdrunError for bad input.

    ``random_seed`` is used for order = "random" when the file names no seed
    (start draws one; check shows seed 0).  ``as_benchmark_user``: runners will
    run as the policy's fresh benchmark user (a real start), so probe them so.
    ``machine`` and ``simulate``: what the experiment's kind needs of the machine before
    anything starts (``Plain.get_ready``), e.g. the CPUs a [duet] experiment's pairs may use.
    """
    exp, text = load_experiment(experiment_file)
    kind = kind_for(exp)
    if exp.seed is not None:
        seed = exp.seed
    else:
        seed = random_seed if kind.draws_seed() and random_seed is not None else 0
    kind.get_ready(Readying(experiment_file, machine or Machine(), simulate, seed))
    exp_dir = Path(experiment_file).absolute().parent
    jobs = kind.plan(seed)
    run_keys = sorted({key for j in jobs if not j.skipped for key in pair_sides(j.key) or (j.key,)})
    problems, ready = file_problems(exp, exp_dir, experiment_file, run_keys)
    problems += command_problems(exp, experiment_file)
    blocked = unreachable_by_key(exp, exp_dir, experiment_file, ready) if exp.platform.benchmark_user else {}
    unreachable = unreachable_lines(blocked)
    failing = probe_failures(exp, exp_dir, experiment_file, ready,
                             as_benchmark_user=as_benchmark_user and exp.platform.benchmark_user)
    problems += failing.values()
    ready = [k for k in ready if k not in blocked and Key.parse(k).vm not in failing]
    return PreparedExperiment(experiment_file, exp, kind, text, exp_dir, seed, jobs, run_keys, unreachable, problems,
                              ready)


def refuse_problems(prep: PreparedExperiment, *, as_benchmark_user: bool) -> None:
    """`start`: one clear line for the first thing that would make runners fail, and how many more."""
    problems = prep.problems + (prep.unreachable if as_benchmark_user else [])
    if problems:
        more = f" (and {len(problems) - 1} more; coldrun check lists them)" if len(problems) > 1 else ""
        raise ColdrunError(problems[0] + more)
