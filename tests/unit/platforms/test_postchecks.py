"""Throttle counters and the APERF/MPERF check on crafted runner documents."""

from supervisor.platforms.amperf import check_amperf
from supervisor.experiment.platform_policy import PlatformPolicy

from platform_helpers import make_linux

NOMINAL = 3.2e9


def doc(aperf, mperf, wall):
    return {"protocol_version": 1, "wallclock_times": wall, "core_cycle_counts": aperf,
            "aperf_counts": aperf, "mperf_counts": mperf, "counters": {"available": True, "reason": None}}


def test_no_counters_means_nothing_to_check():
    r = check_amperf(doc([], [], [0.5, 0.5]), bounds=(0.995, 1.005), busy_fraction=0.5, nominal_hz=NOMINAL)
    assert not r.checked and r.flags() == [] and "unavailable" in r.reason


def test_busy_core_outside_bounds_is_throttle_or_turbo_and_idle_cores_are_ignored():
    wall = [1.0, 1.0, 1.0]
    busy = int(NOMINAL)
    aperf = [[busy, int(busy * 0.98), int(busy * 1.02)],   # core 0: ok, throttled, turbo
             [1000, 500, 3000]]                               # core 1 idle: wild ratios ignored
    mperf = [[busy, busy, busy], [1000, 1000, 1000]]
    r = check_amperf(doc(aperf, mperf, wall), bounds=(0.995, 1.005), busy_fraction=0.5, nominal_hz=NOMINAL)
    assert r.checked and r.busy_iterations == 3
    assert [(c, i) for c, i, _ in r.throttle] == [(0, 1)] and [(c, i) for c, i, _ in r.turbo] == [(0, 2)]
    assert r.flags() == ["amperf_throttle", "amperf_turbo"]


def test_busy_threshold_is_a_fraction_of_the_nominal_rate():
    wall = [0.5]
    aperf = [[int(0.3 * NOMINAL * 0.5)]]   # 30% of nominal: idle at fraction 0.5, busy at 0.25
    mperf = [[int(0.3 * NOMINAL * 0.5 / 0.9)]]  # ratio 0.9
    idle = check_amperf(doc(aperf, mperf, wall), bounds=(0.995, 1.005), busy_fraction=0.5, nominal_hz=NOMINAL)
    busy = check_amperf(doc(aperf, mperf, wall), bounds=(0.995, 1.005), busy_fraction=0.25, nominal_hz=NOMINAL)
    assert idle.flags() == [] and busy.flags() == ["amperf_throttle"]


def test_nominal_rate_estimated_from_mperf_when_unknown():
    wall = [1.0, 1.0]
    r = check_amperf(doc([[2_000_000_000, 10]], [[2_000_000_000, 10]], wall), bounds=(0.995, 1.005),
                     busy_fraction=0.5, nominal_hz=None)
    assert r.nominal_hz == 2e9 and r.nominal_source == "max MPERF rate" and r.busy_iterations == 1


def test_platform_post_checks_set_rerun_for_throttle_and_amperf(machine, tmp_path):
    root = machine("intel-desktop")
    p = make_linux(root, tmp_path / "s", PlatformPolicy(intel_pstate="allow"))
    assert p.nominal_hz() == 3.2e9  # from cpufreq base_frequency
    before = p.snapshot()
    clean = p.post_checks(before, doc([[int(NOMINAL)]], [[int(NOMINAL)]], [1.0]))
    assert clean.flags == [] and not clean.rerun and clean.details["amperf"]["checked"]
    (root / "sys/devices/system/cpu/cpu2/thermal_throttle/package_throttle_count").write_text("4\n")
    res = p.post_checks(before, doc([[int(NOMINAL * 0.9)]], [[int(NOMINAL)]], [1.0]))
    assert res.rerun and res.flags == ["thermal_throttle", "amperf_throttle"]
    assert res.details["thermal_throttle"] == {"cpu2/thermal_throttle/package_throttle_count": [3, 4]}
