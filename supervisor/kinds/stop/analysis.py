"""The supervisor's one door into the analysis: Pilot's run-length numerics (analysis.pilot).

DESIGN.md "Two install profiles": the supervisor does not import ``analysis``,
except here, for an experiment with a [stop] table, and only between
executions (kinds/stop/decisions.py), never while a benchmark runs.  The modules
are imported on first use, so other experiments and commands never load numpy.

``Machine.seams["run_length"]`` may hold one of these (the seam; ``run_length_analysis``
gives it, or the real one); tests hand in one built on test doubles with the same API
(tests/run_length_doubles.py).  What comes
out is plain data (dicts of numbers and strings), which the state dir keeps as
JSON: the supervisor never holds an analysis type.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from types import ModuleType
from typing import Any, Sequence

from supervisor.errors import ColdrunError

# The analysis extra (pyproject.toml): what analysis.pilot computes with.
REQUIRED_MODULES = ("numpy", "scipy")
INSTALL_HINT = "install it with pip install 'coldrun[analysis]' (numpy, scipy), or remove [stop]"


def _plain(value: Any) -> Any:
    """JSON-ready: dataclasses and named tuples as dicts, numpy scalars as Python numbers, nan/inf as None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (int, float, str, bool)):
        value = value.item()           # a numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


SEAM = "run_length"     # its name among a Machine's (and a boot's) kind seams


def run_length_analysis(seams: dict[str, Any]) -> RunLengthAnalysis:
    """The analysis the seams hold (a test's double), else the real one."""
    return seams.get(SEAM) or RunLengthAnalysis()


class RunLengthAnalysis:
    """Pilot's stopping rule (analysis.pilot.stopping) and WPS (analysis.pilot.wps), imported when first used.

    ``stopping`` and ``wps``: modules (or objects) with the agreed API, in
    place of analysis.pilot's; ``required``: modules the analysis needs.
    """

    def __init__(self, stopping: Any = None, wps: Any = None, required: Sequence[str] = REQUIRED_MODULES):
        self._stopping, self._wps, self._required = stopping, wps, tuple(required)

    def unavailable(self) -> str | None:
        """Why the analysis cannot run in this installation (one line without the file), or None."""
        for name in self._required:
            try:
                importlib.import_module(name)
            except ImportError as e:
                return f"needs coldrun's analysis extra, but {name} cannot be imported ({e}); {INSTALL_HINT}"
        try:
            self._api("stopping")
            self._api("wps")
        except ColdrunError as e:
            return str(e)
        return None

    def _api(self, which: str) -> Any:
        if getattr(self, f"_{which}") is None:
            try:
                # The supervisor's only imports of the analysis (.importlinter names them), on first use.
                module: ModuleType
                if which == "stopping":
                    from analysis.pilot import stopping as module
                else:
                    from analysis.pilot import wps as module
            except ImportError as e:
                raise ColdrunError(f"[stop] needs coldrun's analysis extra, but analysis.pilot.{which} cannot be "
                                   f"imported ({e}); {INSTALL_HINT}") from None
            setattr(self, f"_{which}", module)
        return getattr(self, f"_{which}")

    # -- analysis.pilot.stopping -------------------------------------------------------------------------------
    def target(self, stop: Any) -> Any:
        """StopTarget from the experiment's [stop] table (supervisor.kinds.stop.table.Stop)."""
        return self._api("stopping").StopTarget(
            ci_percent=stop.ci_percent, ci_width=stop.ci_width, confidence=stop.confidence,
            min_executions=stop.min_executions, max_executions=stop.max_executions, estimate=stop.estimate,
            ac_limit=stop.ac_limit, min_samples=stop.min_samples)

    def execution_estimate(self, times: Sequence[float], target: Any) -> dict[str, Any]:
        return _plain(self._api("stopping").execution_estimate(list(times), target))

    def decide_key(self, estimates: Sequence[dict[str, Any]], iterations_run: Sequence[int], target: Any,
                   max_iterations: int | None) -> dict[str, Any]:
        api = self._api("stopping")
        rebuilt = [api.ExecutionEstimate(**dict(e, segment=tuple(e["segment"]) if e.get("segment") else None))
                   for e in estimates]
        return _plain(api.decide_key(rebuilt, list(iterations_run), target, max_iterations=max_iterations))

    # -- analysis.pilot.wps ------------------------------------------------------------------------------------
    def next_wps_work_amount(self, last_work: int, last_duration_s: float, min_work: int, max_work: int,
                             desired_session_s: float, slices: int | None) -> tuple[int, int]:
        work, slices = self._api("wps").next_wps_work_amount(last_work, last_duration_s, min_work, max_work,
                                                              desired_session_s=desired_session_s, slices=slices)
        return int(work), int(slices)

    def wps_fit(self, work_amounts: Sequence[int], durations_ns: Sequence[float], *, ac_limit: float,
                confidence: float) -> dict[str, Any]:
        return _plain(self._api("wps").wps_fit(list(work_amounts), list(durations_ns), ac_limit=ac_limit,
                                               confidence=confidence))
