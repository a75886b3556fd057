"""A [duet] experiment: pairs of keys run side by side, one pair execution per job, each side pinned to its
own CPU (kinds/duet/execution.py); a pair job's key is its two sides' keys."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from contracts.status_report import PairProgress
from supervisor.boot.context import Boot
from supervisor.boot.execution import JobRun
from supervisor.boot.kinds.plain import Plain, Readying
from supervisor.kinds.duet.execution import PairRun
from supervisor.errors import ColdrunError
from supervisor.kinds.duet.barrier import remove_barrier
from contracts.keys import pair_key, pair_sides
from supervisor.kinds.duet.table import Duet, OneCpu, pair_cpus
from supervisor.platforms.factory import HARDWARE, SIMULATED
from supervisor.state.outcome import FAILED_STATES
from supervisor.state.schedule import JobLine, Schedule


class DuetKind(Plain):
    name = "duet"
    cpus: tuple[int, int] | None = None     # the two CPUs the sides run on (found by get_ready)

    @property
    def duet(self) -> Duet:
        """The experiment's [duet] table: this kind is registered for experiments that have one."""
        assert self.exp.duet is not None
        return self.exp.duet

    def draws_seed(self) -> bool:
        return True     # each pair execution's start order (AB/BA) and CPU assignment are drawn from the seed

    def get_ready(self, ready: Readying) -> None:
        mode = SIMULATED if ready.simulate else HARDWARE
        try:
            self.cpus = pair_cpus(self.duet, ready.machine.cpus(mode, self.exp.platform))
        except OneCpu as e:
            raise ColdrunError(f"{ready.experiment_file}: {e}") from None

    def remove_cut_leftovers(self, state: Any) -> list[str]:
        barrier = state.barrier_in_flight()
        if not barrier:
            return []
        return [f"removed the duet barrier {barrier} (left by the previous boot)" if remove_barrier(barrier)
                else f"could not remove the duet barrier {barrier} left by the previous boot"]

    def keys(self) -> list[str]:
        return [pair_key(p.a, p.b) for p in self.duet.pairs]

    def setup_lines(self) -> list[str]:
        d = self.duet
        sync = (f"a barrier before every iteration (spin {d.spin_us} us, timeout {d.barrier_timeout:g} s)"
                if d.barrier else "no barrier (iterations paired by overlap)")
        cpus = f"CPUs {self.cpus[0]} and {self.cpus[1]}" if self.cpus else "two CPUs"
        return [f"duet: {len(d.pairs)} pairs (a/b), each pair execution runs both sides at once on {cpus} (as on "
                f"hardware; which side gets which is drawn per execution), {sync}"]

    def job_run(self, ctx: Boot, machine: Any, job: JobLine) -> JobRun:
        return PairRun(ctx)

    def status_parts(self, state_path: Path, schedule: Schedule, kept_sides: Counter[str]) -> dict[str, Any]:
        """Each pair's pair executions by state, in the order the schedule first names them."""
        by_pair: dict[str, Counter[str]] = {}
        for job in schedule.jobs:
            by_pair.setdefault(job.key, Counter())[job.state_name] += 1
        pairs = []
        for key, n in by_pair.items():
            sides = pair_sides(key)
            assert sides is not None     # a [duet] schedule holds pair jobs only
            a, b = sides
            pairs.append(PairProgress(pair=key, a=a, b=b, completed=n["completed"],
                                      failed=sum(n[s] for s in FAILED_STATES),
                                      remaining=n["outstanding"] + n["running"], kept_sides=kept_sides[key]))
        return {**super().status_parts(state_path, schedule, kept_sides), "pairs": pairs}
