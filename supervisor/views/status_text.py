"""The text form of `coldrun status`, rendered from the same StatusReport as --json (so the two agree)."""

from __future__ import annotations

import time

from contracts.status_report import BatchProgress, KeyProgress, RunLength, StatusReport
from supervisor.experiment.quantities import format_duration


def status_json(report: StatusReport) -> str:
    """`coldrun status --json`: one object; NaN or infinite numbers become null (strict JSON)."""
    return report.model_dump_json(indent=2)


def status_text(report: StatusReport) -> str:
    c = report.counts
    lines = [f"experiment {report.experiment}: {report.status} ({report.mode}), boot {report.boots}",
             f"progress: {report.done}/{report.total} done "
             f"({100.0 * report.done / report.total if report.total else 100:.0f}%)",
             f"  completed {c.completed}, errored {c.errored}, timed out {c.timed_out}, crashed {c.crashed}, "
             f"outstanding {c.outstanding}, running {c.running}, skipped {c.skipped}"]
    if report.run_length is not None:
        lines.append(f"run length: {report.run_length.target}")
        lines.extend(_key_line(k, report.run_length) for k in report.run_length.keys)
    if report.pairs is not None:
        lines.append("pairs (a / b):")
        lines.extend(f"  {p.a} / {p.b}: {p.completed} completed, {p.failed} failed, {p.remaining} to run"
                     + (f" ({p.kept_sides} side(s) of failed pair executions kept, marked partner_failed)"
                        if p.kept_sides else "") for p in report.pairs)
    if report.screening is not None:
        lines.append(f"screening ({report.screening.design}): "
                     + "; ".join(_batch_text(b) for b in report.screening.batches))
    if report.status == "running":
        lines.append(_eta_line(report))
    if report.unattended:
        lines.append(f"no supervisor is running it: nothing happens until coldrun resume {report.state_dir} (on "
                     f"the benchmark machine, its next boot); a killed supervisor's job is settled then")
    if report.supervisor_pid is not None:
        lines.append(f"supervisor: pid {report.supervisor_pid} (lock file; may be stale after a reboot)")
    if report.last_error is not None:
        e = report.last_error
        lines.append(f"last error: {e.key} #{e.pexec} attempt {e.attempt}: {e.reason}")
    if report.failures:
        lines.append(f"failed executions ({len(report.failures)}):")
        lines.extend(f"  {f.key} #{f.pexec} attempt {f.attempt}: {f.state.replace('_', ' ')}: {f.reason}"
                     for f in report.failures)
    if report.files_changed:
        lines.append(f"ran with files changed since start, flagged files_changed ({len(report.files_changed)}): "
                     + ", ".join(report.files_changed))
    if report.status == "stopped":
        lines.append(f"stop reason: {report.stop_reason}")
    if report.altered:
        lines.append(f"ALTERED: {len(report.altered)} problem(s) with the records; resume stops and export refuses "
                     f"until they are fixed (restore the files from a backup):")
        lines.extend(f"  {line}" for line in report.altered)
    return "\n".join(lines)


def _eta_line(report: StatusReport) -> str:
    if report.eta_seconds is None:
        return "ETA: unknown until every outstanding key has run once"
    known = f" for the {report.counts.outstanding + report.counts.running} jobs now known" + (
        f" and the {report.more_expected} more executions the run-length targets expect"
        if report.more_expected else "")
    finish = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + report.eta_seconds))
    return f"ETA: {format_duration(report.eta_seconds)} left{known} (about {finish}), reboots not included"


def _batch_text(b: BatchProgress) -> str:
    """"batch 1 (os=b): 2/4 treatments done (9/12 runs)"."""
    name = "boot check" if b.boot_check else f"batch {b.batch}"
    # the boot check's levels are empty
    levels = f" ({' '.join(f'{k}={v}' for k, v in b.levels.items())})" if b.levels else ""
    return f"{name}{levels}: {b.treatments_done}/{b.treatments} treatments done ({b.runs_done}/{b.runs} runs)"


def _amount(value: float | None, measure: str) -> str:
    """A mean or a width as people read it: a duration for seconds, else the number."""
    if value is None:
        return "unknown"
    if measure.startswith("seconds"):
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
            if abs(value) >= scale:
                return f"{value / scale:.4g}{unit}"
        return f"{value / 1e-9:.4g}ns"
    return f"{value:.4g}"


def _key_line(k: KeyProgress, run_length: RunLength) -> str:
    """One key's progress towards its target."""
    if k.decided_on is None:
        first = 1 if run_length.wps else run_length.min_executions
        return f"  {k.key}: waiting for its first {first} executions ({k.executions} done)"
    m = k.measure or ""
    seconds = m.startswith("seconds")
    numbers = (f"{'mean' if seconds else 'v'} {_amount(k.mean, m)}{'/iteration' if seconds else ' param/s'}, "
               f"CI width {_amount(k.ci_width, m)}"
               + (f" ({k.ci_width / k.mean * 100:.2g} % of it)" if k.ci_width is not None and k.mean else "")
               + f", target {_amount(k.target_width, m)}")
    if k.converged:
        state = f"converged after {k.decided_on} executions"
    elif k.done:
        state = f"NOT CONVERGED: stopped at max_executions ({k.decided_on} executions)"
    else:
        older = "" if k.decided_on == k.executions else f" (decided on {k.decided_on})"
        more = "?" if k.more_expected is None else k.more_expected
        state = f"running: {k.executions} executions{older}, about {more} more expected"
    return f"  {k.key}: {state}: {numbers}; {k.reason or ''}"
