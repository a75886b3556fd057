"""Pilot's statistical presets, and the values coldrun uses without one.

Pilot's ``bench`` CLI (cli/run_program.cc; ../shared/reference/methods.md §1)
names three presets: autocorrelation limit, target CI width as a fraction of
the mean, and minimum subsession sample size:

- quick: 0.8, 20 %, 30;
- normal: 0.2, 10 %, 50;
- strict: 0.1, 10 %, 200.

(Pilot's short-round thresholds, 3/10/20 s, concern its own rounds; coldrun
runs none.) Pilot's CLI defaults to quick. coldrun defaults to Pilot's
*library* defaults (workload.hpp: AC limit 0.1 after Ferrari, 10 %, 200
samples), which are strict's numbers: an AC limit of 0.8 accepts strongly
correlated data, not a default for a benchmark report. Options given one by
one override the preset.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.pilot import subsession as ss


@dataclass(frozen=True)
class Preset:
    ac_limit: float
    ci_percent: float  # FULL CI width as a fraction of the mean
    min_samples: int


PRESETS = {
    "quick": Preset(0.8, 0.2, 30),
    "normal": Preset(0.2, 0.1, 50),
    "strict": Preset(0.1, 0.1, 200),
}
LIBRARY_DEFAULTS = Preset(ss.DEFAULT_AC_LIMIT, 0.1, ss.DEFAULT_MIN_SAMPLES)


def preset(name: str | None) -> Preset:
    """The named preset, or the library defaults for None."""
    return LIBRARY_DEFAULTS if name is None else PRESETS[name]


def experiment_target(loaded) -> dict | None:
    """The target of the experiment the results came from: its [stop] table (ci_percent, ci_width,
    confidence, ac_limit, min_samples), read from the experiment file a coldrun export carries ('config'),
    when every file has the same one; else None (a Krun file, no [stop], or files that disagree). The
    analysis then judges keys as `coldrun status` did, not against Pilot's defaults."""
    import tomllib

    stops = []
    for _, results in loaded:
        try:
            stop = tomllib.loads(results.get("config") or "").get("stop")
        except (tomllib.TOMLDecodeError, TypeError, AttributeError):
            return None
        if not isinstance(stop, dict):
            return None
        stops.append(stop)
    if not stops or any(s != stops[0] for s in stops):
        return None
    stop = stops[0]
    return {"ci_percent": stop.get("ci_percent"), "ci_width": stop.get("ci_width"),
            "confidence": float(stop.get("confidence", ss.DEFAULT_CONFIDENCE)),
            "ac_limit": float(stop.get("ac_limit", LIBRARY_DEFAULTS.ac_limit)),
            "min_samples": int(stop.get("min_samples", LIBRARY_DEFAULTS.min_samples))}
