"""Where a report's numbers come from: what each input file records about the
machine, the software and the experiment, and why failed executions failed.

Only what an input holds is reported; anything else is NOT_RECORDED, never
guessed. A coldrun native export records the most (experiment name, start and
end of every execution, the platform audit, each execution's environment); a
Krun results file records ``audit`` (uname and whatever the platform added)
and the experiment ``config`` text; a summary JSON records none of it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Sequence

from analysis.classify import DEFAULT_DELTA, describe_delta
from analysis.execution_states import execution_number
from analysis.inputs import NATIVE_FORMAT, machine_from_uname

NOT_RECORDED = "not recorded"
# Per-execution fields of a native record that describe its environment; a
# report lists those whose values differ between executions.
ENVIRONMENT_FIELDS = ("containment", "platform_before", "platform_after", "supervisor_version", "counters.available")
# Parts of those fields that differ by key, not by environment: every key's own file digests (issue 26).
PER_KEY_PARTS = {"platform_before": ("key_files_sha256",)}
# Audit entries longer than this (Krun's dmesg, cpuinfo) are cut in the report.
AUDIT_VALUE_CHARS = 160


@dataclass(frozen=True)
class Provenance:
    """What one input file records about where its numbers come from."""

    source: str
    machine: str = NOT_RECORDED
    kernel: str = NOT_RECORDED
    experiment: str = NOT_RECORDED
    dates: str = NOT_RECORDED
    supervisor_versions: str = NOT_RECORDED
    # (audit entry, value) of everything the platform audit holds besides uname.
    audit: list[tuple[str, str]] = field(default_factory=list)
    # Lines such as "containment: cgroup (16 executions), none (2 executions)";
    # None: the input does not record per-execution environments.
    environment_differences: list[str] | None = None


def coldrun_version() -> str:
    """The installed coldrun's version (the analysis that wrote the report)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coldrun")
    except PackageNotFoundError:
        return NOT_RECORDED


def is_native(document: Any) -> bool:
    return isinstance(document, dict) and document.get("format") == NATIVE_FORMAT


def _records(document: dict) -> list[dict]:
    return [e for e in document.get("executions") or [] if isinstance(e, dict) and "record_version" in e]


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _dates(records: list[dict]) -> str:
    starts = [r["started_at"] for r in records if isinstance(r.get("started_at"), (int, float))]
    ends = [r["ended_at"] for r in records if isinstance(r.get("ended_at"), (int, float))]
    if not starts or not ends:
        return NOT_RECORDED
    return f"{_utc(min(starts))} to {_utc(max(ends))}"


def _experiment_name(document: dict) -> str:
    experiment = document.get("experiment")
    if isinstance(experiment, dict) and isinstance(experiment.get("name"), str):
        return experiment["name"]
    config = document.get("config")
    if isinstance(config, str) and config:
        import tomllib

        try:
            name = tomllib.loads(config).get("name")
        except tomllib.TOMLDecodeError:
            return NOT_RECORDED  # a Krun config is Python, not TOML
        return name if isinstance(name, str) else NOT_RECORDED
    return NOT_RECORDED


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= AUDIT_VALUE_CHARS else text[:AUDIT_VALUE_CHARS] + " …"


def _field(record: dict, dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def environment_differences(records: list[dict]) -> list[str]:
    """One line per ENVIRONMENT_FIELDS entry whose value is not the same in every execution."""
    lines = []
    for name in ENVIRONMENT_FIELDS:
        counts: dict[str, int] = {}
        for r in records:
            raw = _field(r, name)
            if isinstance(raw, dict) and name in PER_KEY_PARTS:
                raw = {k: v for k, v in raw.items() if k not in PER_KEY_PARTS[name]}
            value = _short(raw)
            counts[value] = counts.get(value, 0) + 1
        if len(counts) > 1:
            parts = ", ".join(f"{v} ({n} execution{'s' if n != 1 else ''})" for v, n in sorted(counts.items()))
            lines.append(f"{name}: {parts}")
    return lines


def provenance(source: str, document: Any) -> Provenance:
    """What `document` (a loaded input: native export, Krun or annotated results, or a summary) records."""
    if not isinstance(document, dict) or "machines" in document:
        return Provenance(source)
    audit = document.get("audit")
    if not isinstance(audit, dict):
        audit = {}
    uname = audit.get("uname")
    machine = machine_from_uname(uname) if isinstance(uname, str) else None
    extra = [(k, _short(v)) for k, v in sorted(audit.items()) if k != "uname"]
    native = is_native(document)
    records = _records(document) if native else []
    versions = sorted({str(r.get("supervisor_version")) for r in records if r.get("supervisor_version")})
    return Provenance(
        source=source,
        machine=machine or NOT_RECORDED,
        kernel=_short(uname) if isinstance(uname, str) and uname else NOT_RECORDED,
        experiment=_experiment_name(document),
        dates=_dates(records),
        supervisor_versions=", ".join(versions) or NOT_RECORDED,
        audit=extra,
        environment_differences=environment_differences(records) if records else None,
    )


def _failure_text(record: dict) -> str:
    """How one execution failed, in the record's own words."""
    parts = []
    if record.get("timed_out"):
        parts.append("timed out")
    if record.get("signal_name"):
        parts.append(f"killed by {record['signal_name']}")
    elif isinstance(record.get("exit_code"), int) and record["exit_code"] != 0:
        parts.append(f"exit code {record['exit_code']}")
    for name in ("reason", "launch_error"):
        if record.get(name):
            parts.append(_short(record[name]))
    tail = (record.get("stderr_tail") or "").strip().splitlines()
    if tail:
        parts.append("stderr: " + _short(tail[-1]))
    return "; ".join(parts)


def failure_reasons(document: Any) -> dict[tuple[str, str, str, int], str]:
    """(machine, vm, bench, pexec) -> how it failed, for every failed execution a
    native export has a record of (the latest attempt); other inputs record none."""
    if not is_native(document):
        return {}
    audit = document.get("audit")
    if not isinstance(audit, dict):
        audit = {}
    uname = audit.get("uname")
    machine = machine_from_uname(uname) if isinstance(uname, str) else None
    out: dict[tuple[str, str, str, int], str] = {}
    for r in _records(document):
        if r.get("state") == "completed" or not all(isinstance(r.get(k), str) for k in ("key", "vm", "bench")):
            continue
        text = _failure_text(r)
        if text and isinstance(r.get("pexec"), int):
            out[(machine or "unknown", r["vm"], r["bench"], r["pexec"])] = text
    return out


# What a flag on a completed execution's record means (the supervisor's post-checks, on_changed_files =
# "flag", duet placement): its numbers were measured, under a condition a reader should weigh.
FLAG_MEANINGS = {
    "files_changed": "a benchmark, runner or interpreter file differed from its digest at start "
                     "(on_changed_files = \"flag\")",
    "thermal_throttle": "the CPU's throttle counters rose during it",
    "kernel_log": "the kernel logged during it",
    "clocksource": "the clock source changed",
    "pinning": "its CPU placement could not be verified",
    "systemd_units": "systemd units ran during it",
    "placement_widened": "a duet side could run beyond its CPU",
    "partner_failed": "its duet partner failed",
    "rerun_exhausted": "it was re-run as often as allowed and still flagged",
}


def flagged_lines(flagged: dict[tuple[str, str, str, int], list[str]]) -> list[str]:
    """The flagged executions, one line each, then what each flag means: every report prints these."""
    if not flagged:
        return []
    lines = [f"Flagged executions ({len(flagged)}): completed, but measured under a condition to weigh; "
             f"their times are in the tables above."]
    for (machine, vm, bench, pexec), flags in sorted(flagged.items()):
        lines.append(f"  {machine}  {bench}  {vm}  {execution_number(pexec)}: {', '.join(flags)}")
    for flag in sorted({f for flags in flagged.values() for f in flags}):
        lines.append(f"  {flag}: {FLAG_MEANINGS.get(flag, 'see the execution record')}")
    return lines


def analysis_parameters(window: int | None, steady: int | None, delta: str | None,
                        analysed_here: bool, deltas: Sequence[str | None] | None = None) -> list[tuple[str, str]]:
    """The classifier settings the report's numbers were made with (the
    bootstrap's are in the summary itself). A summary JSON given as input
    was classified elsewhere: its settings are not recorded. ``deltas``: the
    delta each input was classified with (an annotated input's own), else ``delta``."""
    if not analysed_here:
        return [(name, f"{NOT_RECORDED} (input was a summary)") for name in ("window", "steady", "delta")]
    return [
        ("window", str(window) if window is not None else "int(0.1 × iterations) (default)"),
        ("steady", str(steady) if steady is not None else "int(0.25 × iterations) (default)"),
        ("delta", equivalence_rule(deltas if deltas is not None else [delta or DEFAULT_DELTA])),
    ]


def equivalence_rule(deltas: Sequence[str | None]) -> str:
    """The equivalence rule(s) the classifications were made with, in words (None: classified elsewhere,
    in a summary given as input)."""
    known = sorted({d for d in deltas if d is not None})
    if not known:
        return f"{NOT_RECORDED} (input was a summary)"
    rules = "; ".join(f"--delta {d}: {describe_delta(d)}" for d in known)
    if None in deltas:
        rules += f"; a summary input's: {NOT_RECORDED}"
    return rules


def equivalence_note(deltas: Sequence[str | None]) -> str:
    """The line under the text and LaTeX tables naming the equivalence rule(s) of their classes."""
    if all(d is None for d in deltas):
        return f"Classes: equivalence rule {equivalence_rule(deltas)}."
    return f"Classes by {equivalence_rule(deltas)}."
