"""A [stop] experiment: each key runs until its mean's confidence interval is narrow enough (Pilot's stopping
rule, or WPS), between its min and max executions; the boot decides and appends one job at a time
(kinds/stop/decisions.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.boot.context import Boot
from supervisor.boot.kinds.plain import Plain, Readying
from supervisor.kinds.stop.decisions import settle_run_length
from supervisor.errors import ColdrunError
from supervisor.experiment.model import VM
from supervisor.kinds.stop.table import Stop
from supervisor.kinds.stop.analysis import run_length_analysis
from supervisor.kinds.stop.state import load_decisions, expected_jobs, run_length_progress, target_text, unconverged
from supervisor.state.schedule import Schedule


class StopKind(Plain):
    name = "stop"

    @property
    def stop(self) -> Stop:
        """The experiment's [stop] table: this kind is registered for experiments that have one."""
        assert self.exp.stop is not None
        return self.exp.stop

    def short_of_target(self, state_path: Path) -> list[str]:
        return unconverged(load_decisions(state_path))

    def short_of_target_text(self, keys: list[str]) -> str:
        return (f"{len(keys)} key(s) stopped at max_executions without reaching the run-length target "
                f"({', '.join(keys)})")

    def get_ready(self, ready: Readying) -> None:
        missing = run_length_analysis(ready.machine.seams).unavailable()
        if missing:
            raise ColdrunError(f"{ready.experiment_file}: stop: {missing}")

    def first_executions(self) -> int:
        # WPS: one, since each next param depends on the last execution's duration.
        stop = self.stop
        return 1 if stop.wps is not None else stop.min_executions

    def growth(self) -> int:
        return self.stop.max_executions

    def most_iterations(self, vm: VM) -> int:
        stop = self.stop
        if stop.adapt_iterations:
            assert stop.max_iterations is not None   # required with adapt_iterations (table.py's problems)
            return stop.max_iterations
        return vm.iterations

    def first_param(self, bench: str) -> int:
        wps = self.stop.wps
        return wps.min_param if wps is not None else self.exp.benchmarks[bench]

    def run_length_text(self) -> str:
        return f"run length: {target_text(self.stop)}"

    def key_text(self, vm: VM) -> str:
        stop = self.stop
        iterations = f"{vm.iterations}..{stop.max_iterations}" if stop.adapt_iterations else f"{vm.iterations}"
        if stop.wps:
            iterations += f", param {stop.wps.min_param}..{stop.wps.max_param} (WPS)"
        return f"{stop.min_executions}..{stop.max_executions} x {iterations} iterations"

    def settle(self, ctx: Boot) -> str | None:
        failed = settle_run_length(ctx)
        return f"run length: {failed}" if failed else None

    def expected_jobs(self, state_path: Path, schedule: Schedule) -> dict[str, tuple[int, int]]:
        return expected_jobs(schedule, load_decisions(state_path))

    def status_parts(self, state_path: Path, schedule: Schedule, kept_sides: Any) -> dict[str, Any]:
        return {**super().status_parts(state_path, schedule, kept_sides),
                "run_length": run_length_progress(state_path, schedule, load_decisions(state_path), self.stop)}
