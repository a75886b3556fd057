"""The experiment file's [platform] section: which controls to apply and check.

Defaults are the paper's settings for a production run on bare metal.  Every
control can be switched off with the value "ignore", so the real Linux
platform also runs inside a VM that has no cpufreq, MSRs or sensors.
Fields that only report ("report") record the value in the audit/log and
never fail.  See docs/architecture.md, "Platform layer", for the table.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from supervisor.cpulist import parse_cpulist
from supervisor.experiment.union_forms import one_of

Ignore = Literal["ignore"]
# CPU package/core sensors: hwmon coretemp (Intel), k10temp and zenpower (AMD); thermal zones
# x86_pkg_temp (Intel) and the device-tree CPU zones of ARM SoCs (cpu-thermal, cpu0-thermal,
# cpu_thermal, soc_thermal; Documentation/devicetree/bindings/thermal).
CPU_SENSORS = ("coretemp", "k10temp", "zenpower", "x86_pkg_temp", "cpu*thermal*", "soc*thermal*")
# mypy cannot follow one_of's union built at run time: it checks the plain union (the same branches) instead.
if TYPE_CHECKING:
    IntOrIgnore = int | Ignore
    TurboForm = bool | Literal["off", "on", "ignore"]
    BoolOrIgnore = bool | Ignore
    OvercommitForm = int | Literal["report", "ignore"]
else:
    IntOrIgnore = one_of(int, Ignore)
    TurboForm = one_of(bool, Literal["off", "on", "ignore"])
    BoolOrIgnore = one_of(bool, Ignore)
    OvercommitForm = one_of(int, Literal["report", "ignore"])


# The kernel's own names (Documentation/admin-guide/pm/cpufreq.rst, intel_pstate.rst): a value outside them
# would only fail at the first boot's apply, after the machine was changed.
GOVERNORS = ("performance", "powersave", "ondemand", "conservative", "schedutil", "userspace")
EPP_VALUES = ("default", "performance", "balance_performance", "balance_power", "power")
MALLOC_OPTION_LETTERS = "CcDdFfGgJjRrSsUuXx<>"    # OpenBSD malloc.conf(5)


def _one_of(field: str, value: str, allowed: tuple[str, ...]) -> str:
    if value != "ignore" and value not in allowed:
        raise ValueError(f"{value!r} is not a {field} the kernel knows; use one of {', '.join(allowed)}, or "
                         f"\"ignore\" to leave it alone")
    return value


class PlatformPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # --- CPU frequency -------------------------------------------------
    governor: str = Field(
        default="performance",
        description='cpufreq scaling governor on every core; "ignore" leaves it alone')
    turbo: TurboForm = Field(
        default="off",
        description='"off" (paper), "on", or "ignore"; false/true mean off/on')
    energy_performance_preference: str = Field(
        default="performance",
        description='EPP on drivers that have one (intel_pstate, amd-pstate active); "ignore" leaves it')
    msr_turbo: bool = Field(
        default=True,
        description="allow IA32_MISC_ENABLE bit 38 (rdmsr/wrmsr, Intel) when no sysfs turbo switch exists")
    intel_pstate: Literal["disable", "allow", "ignore"] = Field(
        default="disable",
        description='"disable": the active intel_pstate driver is a problem (paper used acpi-cpufreq)')

    intel_perf_pct: Literal["pin", "ignore"] = Field(
        default="pin",
        description='intel_pstate only: "pin" raises min_perf_pct to max_perf_pct (100), so HWP holds one '
                    'P-state (the highest non-turbo with turbo off); firmware-forced HWP leaves no other way')

    # --- kernel ----------------------------------------------------------
    clocksource: Literal["check", "ignore"] = Field(
        default="check",
        description='"check": on x86 with an invariant TSC (constant_tsc, nonstop_tsc) the clock source must be '
                    'tsc (set when the kernel offers it); elsewhere the kernel\'s choice is recorded')
    tickless: Literal["require", "ignore"] = Field(
        default="require",
        description="CONFIG_NO_HZ_FULL=y and nohz_full= covering the benchmark cores")
    perf_max_sample_rate: IntOrIgnore = Field(
        default=1, description="kernel.perf_event_max_sample_rate (paper: 1)")
    perf_cpu_time_max_percent: IntOrIgnore = Field(
        default="ignore",
        description="kernel.perf_cpu_time_max_percent; 0 stops the kernel changing the sample rate itself")
    aslr: BoolOrIgnore = Field(
        default=True, description="address space randomisation (paper: on, randomize_va_space=2)")
    smt: Literal["report", "require_off", "ignore"] = Field(
        default="report", description="simultaneous multithreading: report, or require it off")
    overcommit_memory: OvercommitForm = Field(
        default="report", description="vm.overcommit_memory: report, or a mode 0/1/2 to set")
    swap: Literal["report", "require_off", "ignore"] = Field(
        default="report", description="swap devices: report, or require none active")
    transparent_hugepages: Literal["report", "ignore", "always", "madvise", "never"] = Field(
        default="report", description="THP mode: report, or a mode to set")

    timers: Literal["stop", "report", "ignore"] = Field(
        default="stop",
        description='systemd timers (apt-daily, tmpfiles-clean, fstrim, man-db, logrotate, ...): "stop" masks every '
                    'active one for the experiment (undone at the end), "report" records them; either way a unit '
                    'that ran during an execution flags it')

    # --- hardware counters (cycles, APERF, MPERF read by libkruntime) --------
    counters: Literal["if_available", "require", "off"] = Field(
        default="if_available",
        description='"if_available": open counter access where the machine has the PMUs, never fail '
                    'without them (VMs); "require": no PMU/access is a problem; "off": wall-clock only')
    perf_event_paranoid: IntOrIgnore = Field(
        default=0,
        description="kernel.perf_event_paranoid while the experiment runs (<= 0 lets the unprivileged "
                    "benchmark user open per-CPU events); \"ignore\": access arranged otherwise")

    # --- isolation -------------------------------------------------------
    pinning: bool = Field(
        default=False,
        description="run benchmarks in a cgroup v2 cpuset partition on benchmark_cpus")
    benchmark_cpus: str | None = Field(
        default=None,
        description='cpu list like "1-3", or a core kind as `platform show` names it ("cpu_core"); default: '
                    'the fastest kind without the first CPU and its SMT siblings')

    # --- checks around each process execution ----------------------------
    temperatures: Literal["check", "ignore"] = Field(
        default="check",
        description="wait for the temperature_sensors to return to their baselines; none is fatal on bare metal")
    temperature_sensors: list[str] = Field(
        default_factory=lambda: list(CPU_SENSORS),
        description="the sensors waited on: fnmatch patterns of hwmon chip names, thermal zone types or whole "
                    "sensor names as `platform show` lists them; default: the CPU's own sensors")
    warm_up_when_cold: bool = Field(
        default=True, description="busy-loop to warm a sensor below its baseline (as Krun)")
    throttle_counters: Literal["check", "ignore"] = Field(
        default="check", description="thermal_throttle counters before/after each run")
    kernel_log: Literal["check", "ignore"] = Field(
        default="check", description="new kernel log lines not in the allow-list flag the run")
    kernel_log_allow: list[str] = Field(
        default_factory=list, description="extra regexes (re.search) for harmless kernel log lines")
    amperf: Literal["check", "ignore"] = Field(
        default="check", description="APERF/MPERF ratio check on busy cores")
    amperf_ratio_bounds: tuple[float, float] = Field(
        default=(0.995, 1.005), description="(low, high): below = throttle, above = turbo")
    amperf_busy_fraction: float = Field(
        default=0.5, gt=0, le=1,
        description="a core is busy in an iteration when APERF/s >= this fraction of the nominal rate")
    amperf_nominal_hz: float | None = Field(
        default=None, gt=0,
        description="nominal (base) frequency; default: cpufreq base_frequency, the CPU model name, or max MPERF/s")

    # --- benchmark process ----------------------------------------------
    benchmark_user: bool = Field(
        default=True, description="fresh unprivileged user created and deleted around each run")
    benchmark_user_name: str = Field(default="coldrunbench", description="must not be an existing account")
    nice: int = Field(default=-20, ge=-20, le=19, description="niceness of the benchmark (paper: -20)")

    # --- audit -----------------------------------------------------------
    audit_allow_changes: list[str] = Field(
        default_factory=list,
        description='audit keys allowed to change between boots ("*" = all); others stop the experiment')

    # --- OpenBSD ---------------------------------------------------------
    apm_performance: Literal["high", "ignore"] = Field(
        default="high", description="OpenBSD: hw.perfpolicy=high (as apm -H), so hw.setperf=100")
    malloc_options: str = Field(
        default="cfgrux", description="OpenBSD MALLOC_OPTIONS for benchmarks (paper: cfgrux)")

    @field_validator("turbo", mode="before")
    @classmethod
    def _turbo_bool(cls, v: object) -> object:
        if v is True:
            return "on"
        if v is False:
            return "off"
        return v

    @field_validator("governor")
    @classmethod
    def _governor(cls, v: str) -> str:
        return _one_of("cpufreq governor", v, GOVERNORS)

    @field_validator("energy_performance_preference")
    @classmethod
    def _epp(cls, v: str) -> str:
        # A raw 0-255 EPP number is the kernel's vocabulary too.
        return v if v.isdigit() and int(v) <= 255 else _one_of("energy_performance_preference", v, EPP_VALUES)

    @field_validator("malloc_options")
    @classmethod
    def _malloc_options(cls, v: str) -> str:
        wrong = sorted(set(v) - set(MALLOC_OPTION_LETTERS))
        if wrong:
            raise ValueError(f"{v!r} has letters OpenBSD's malloc does not know ({''.join(wrong)}); "
                             f"malloc.conf(5) options are {MALLOC_OPTION_LETTERS}")
        return v

    @field_validator("perf_event_paranoid")
    @classmethod
    def _paranoid(cls, v: int | str) -> int | str:
        if v != "ignore" and v not in (-1, 0):
            raise ValueError(f"{v} would keep the benchmark user from opening per-CPU counters; "
                             "use -1 or 0, or \"ignore\" to leave kernel.perf_event_paranoid alone")
        return v

    @field_validator("benchmark_user_name")
    @classmethod
    def _user_name(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,30}", v):
            raise ValueError(f"{v!r} is not a valid user name (lower case letters, digits, _ and -)")
        return v

    @field_validator("kernel_log_allow")
    @classmethod
    def _regexes(cls, v: list[str]) -> list[str]:
        for rx in v:
            try:
                re.compile(rx)
            except re.error as e:
                raise ValueError(f"kernel_log_allow regex {rx!r} does not compile: {e}") from None
        return v

    @field_validator("benchmark_cpus")
    @classmethod
    def _cpus(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[a-z][a-z0-9_-]*", v):
            parse_cpulist(v)  # raises ValueError with the reason; a kind name is checked on the machine
        return v

    @model_validator(mode="after")
    def _bounds(self) -> "PlatformPolicy":
        lo, hi = self.amperf_ratio_bounds
        if not 0 < lo <= 1 <= hi:
            raise ValueError(f"amperf_ratio_bounds must satisfy 0 < low <= 1 <= high, got ({lo}, {hi})")
        return self
