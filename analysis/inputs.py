"""Reading results: Krun files, warmup_stats CSV and coldrun's native export.

Everything is turned into Krun's results shape (what warmup_stats reads):
``{"wallclock_times": {"bench:vm:variant": [[seconds per in-process
iteration] per process execution]}, "core_cycle_counts": ..., "aperf_counts":
..., "mperf_counts": ..., "audit": {"uname": ...}, ...}``; a crashed or
otherwise unusable process execution is an empty list.

Formats, chosen by content (the file name only decides compression):

- Krun results: JSON, bzip2-compressed when the name ends ``.bz2``.
- coldrun native bundle (``"format": "coldrun-native"``, version 1): per key,
  executions ordered by ``pexec``; any execution not ``completed`` becomes an
  empty list; gaps in pexec numbers are filled with empty executions.
  ``pexec_flags`` get ``C`` (completed), ``E`` (errored/crashed), ``T``
  (timed out) or ``O`` (any other state: skipped, outstanding, running).
- warmup_stats CSV (name ends ``.csv``): header row; column 0 the process
  execution index, column 1 the benchmark, then one column per iteration;
  ``crash`` in column 2 means an empty execution. The implementation and
  language come from the command line: key = ``bench:VM:default-LANGUAGE``.

Machine name: ``audit['uname'].split(' ')[1]`` with any domain removed (as
warmup_stats); a file without ``audit.uname`` is named after the file, with a
warning.

Problems in the data are reported one line each through ``warn`` and the
rest is still analysed: an execution with NaN, infinite, negative or
non-numeric times is dropped (kept as an empty execution); executions of
different lengths are allowed (each is analysed at its own length) but
reported. A file that cannot be read at all raises :class:`AnalysisError`.
"""

from __future__ import annotations

import bz2
import csv
import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from analysis.errors import AnalysisError, WarningSink, stderr_warning
from contracts.execution_record import ExecutionSlot, problem

KRUN_COUNTER_KEYS = ("core_cycle_counts", "aperf_counts", "mperf_counts")
NATIVE_FORMAT = "coldrun-native"
NATIVE_VERSION = 1
_NATIVE_FLAGS = {"completed": "C", "errored": "E", "crashed": "E", "timed_out": "T"}


def _read_json(path: Path) -> Any:
    name = str(path)
    try:
        if name.endswith(".bz2"):
            with bz2.open(path, "rt", encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file")
    except IsADirectoryError:
        raise AnalysisError(f"{path}: is a directory, expected a results file")
    except PermissionError:
        raise AnalysisError(f"{path}: permission denied")
    except EOFError:
        raise AnalysisError(f"{path}: the bzip2 data is truncated; re-copy or re-export the file")
    except OSError as exc:
        raise AnalysisError(f"{path}: not readable as bzip2 ({exc}); a .bz2 name needs bzip2 data")
    except UnicodeDecodeError:
        raise AnalysisError(f"{path}: not text; expected JSON (or bzip2-compressed JSON named *.bz2)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnalysisError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")


def machine_from_uname(uname: str) -> str | None:
    """warmup_stats' machine name: second word of uname, domain removed."""
    parts = str(uname).split(" ")
    if len(parts) < 2 or not parts[1]:
        return None
    return parts[1].split(".")[0]


def _clean_execution(times: Any, where: str, warn: WarningSink) -> list[float]:
    """Validated iteration times, or [] (with a warning) when unusable."""
    if not isinstance(times, list):
        warn(f"{where}: expected a list of iteration times, got {type(times).__name__}; execution skipped")
        return []
    out: list[float] = []
    for i, t in enumerate(times):
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            warn(f"{where}: iteration {i} is not a number ({t!r}); execution skipped")
            return []
        f = float(t)
        if not math.isfinite(f) or f < 0:
            warn(f"{where}: iteration {i} has an invalid time ({t!r}); execution skipped")
            return []
        out.append(f)
    return out


def validate_krun(results: Any, path: Path, warn: WarningSink) -> dict:
    """Check a Krun-shaped dict in place; bad executions become []."""
    if not isinstance(results, dict):
        raise AnalysisError(f"{path}: unknown format: expected a JSON object (Krun results or coldrun native export)")
    wct = results.get("wallclock_times")
    if not isinstance(wct, dict):
        raise AnalysisError(f"{path}: missing key 'wallclock_times'; is this a Krun results file?")
    for key in list(wct):
        if len(str(key).split(":")) != 3:
            warn(f"{path}: benchmark key {key!r} is not bench:vm:variant; key skipped")
            del wct[key]
            continue
        execs = wct[key]
        if not isinstance(execs, list):
            warn(f"{path}: {key}: expected a list of process executions; key skipped")
            del wct[key]
            continue
        wct[key] = [_clean_execution(e, f"{path}: {key} process execution {i}", warn) for i, e in enumerate(execs)]
        lengths = {len(e) for e in wct[key] if e}
        if len(lengths) > 1:
            warn(
                f"{path}: {key}: process executions have different lengths "
                f"({min(lengths)}..{max(lengths)} iterations); each is analysed at its own length"
            )
    for counter in KRUN_COUNTER_KEYS:
        if not isinstance(results.get(counter), dict):
            results[counter] = {k: [[] for _ in v] for k, v in wct.items()}
    audit = results.get("audit")
    if not isinstance(audit, dict):
        results["audit"] = audit = {}
    if machine_from_uname(audit.get("uname", "")) is None:
        name = _file_stem(path)
        warn(f"{path}: no usable audit['uname']; machine named {name!r} after the file")
        audit["uname"] = f"unknown {name}"
    return results


def _file_stem(path: Path) -> str:
    name = path.name
    for suffix in (".json.bz2", ".bz2", ".json", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def native_to_krun(bundle: dict, path: Path, warn: WarningSink) -> dict:
    """Convert a coldrun native export to Krun's results shape."""
    version = bundle.get("format_version")
    if version != NATIVE_VERSION:
        raise AnalysisError(f"{path}: coldrun native format_version {version!r} is not supported (expected {NATIVE_VERSION})")
    executions = bundle.get("executions")
    if not isinstance(executions, list):
        raise AnalysisError(f"{path}: missing key 'executions' in the coldrun native export")
    jobs = bundle.get("jobs") if isinstance(bundle.get("jobs"), list) else []
    count: dict[str, int] = {}
    for rec in list(jobs) + list(executions):
        if isinstance(rec, dict) and isinstance(rec.get("key"), str) and isinstance(rec.get("pexec"), int):
            count[rec["key"]] = max(count.get(rec["key"], 0), rec["pexec"] + 1)
    chosen: dict[tuple[str, int], ExecutionSlot] = {}
    for i, entry in enumerate(executions):
        try:
            rec = ExecutionSlot.model_validate(entry)
        except ValidationError as exc:
            warn(f"{path}: executions[{i}]: {problem(exc)}; skipped")
            continue
        slot = (rec.key, rec.pexec)
        # A retried execution: the completed attempt wins, else the latest.
        if slot not in chosen or rec.state == "completed" or chosen[slot].state != "completed":
            chosen[slot] = rec
    out: dict[str, Any] = {"wallclock_times": {}, "pexec_flags": {}}
    for counter in KRUN_COUNTER_KEYS:
        out[counter] = {}
    for key in sorted(count):
        n = count[key]
        out["wallclock_times"][key] = []
        out["pexec_flags"][key] = []
        for counter in KRUN_COUNTER_KEYS:
            out[counter][key] = []
        for pexec in range(n):
            rec = chosen.get((key, pexec))
            state = rec.state if rec is not None else "outstanding"
            done = rec is not None and state == "completed"
            out["wallclock_times"][key].append(rec.wallclock_times if done else [])
            for counter in KRUN_COUNTER_KEYS:
                out[counter][key].append(getattr(rec, counter) if done else [])
            out["pexec_flags"][key].append(_NATIVE_FLAGS.get(state, "O"))
    audit = bundle.get("audit")
    out["audit"] = dict(audit) if isinstance(audit, dict) else {}
    experiment = bundle.get("experiment")
    if isinstance(experiment, dict):
        out["config"] = experiment.get("text", "")
    return out


def read_csv(path: Path, vm: str | None, language: str | None, uname: str | None, warn: WarningSink) -> dict:
    """warmup_stats CSV -> Krun shape (see module docstring)."""
    if not vm or not language:
        raise AnalysisError(f"{path}: CSV input needs --vm and --language (the key is bench:VM:default-LANGUAGE)")
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file")
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise AnalysisError(f"{path}: cannot read as CSV ({exc})")
    if not rows:
        raise AnalysisError(f"{path}: empty CSV; expected a header row then one row per process execution")
    by_bench: dict[str, dict[int, list]] = {}
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < 3:
            warn(f"{path}: line {lineno}: fewer than 3 columns (pexec, benchmark, times...); row skipped")
            continue
        try:
            pexec = int(row[0])
        except ValueError:
            warn(f"{path}: line {lineno}: process execution index {row[0]!r} is not an integer; row skipped")
            continue
        bench = row[1].strip()
        where = f"{path}: line {lineno} ({bench} process execution {pexec})"
        if row[2].strip() == "crash":
            times: list = []
        else:
            try:
                times = [float(c) for c in row[2:] if c.strip() != ""]
            except ValueError:
                warn(f"{where}: non-numeric iteration time; execution skipped")
                times = []
            times = _clean_execution(times, where, warn)
        by_bench.setdefault(bench, {})[pexec] = times
    key_fmt = "%s:%s:default-%s"
    wct: dict[str, list] = {}
    for bench, execs in sorted(by_bench.items()):
        n = max(execs) + 1
        if sorted(execs) != list(range(n)):
            warn(f"{path}: {bench}: process execution indices have gaps; missing ones are treated as crashed")
        wct[key_fmt % (bench, vm, language)] = [execs.get(i, []) for i in range(n)]
    results = {
        "wallclock_times": wct,
        "audit": {"uname": uname if uname else f"unknown {_file_stem(path)}"},
    }
    if not uname:
        warn(f"{path}: no --uname given for CSV input; machine named {_file_stem(path)!r} after the file")
    return results


def read_results(
    path: str | os.PathLike,
    *,
    vm: str | None = None,
    language: str | None = None,
    uname: str | None = None,
    warn: WarningSink = stderr_warning,
) -> dict:
    """Read one results file of any supported format into Krun's shape."""
    p = Path(path)
    if p.name.endswith(".csv"):
        results = read_csv(p, vm, language, uname, warn)
    else:
        data = _read_json(p)
        if isinstance(data, dict) and data.get("format") == NATIVE_FORMAT:
            data = native_to_krun(data, p, warn)
        elif isinstance(data, dict) and "format" in data and "wallclock_times" not in data:
            raise AnalysisError(f"{p}: unknown format {data.get('format')!r}; expected Krun results or coldrun-native")
        results = data
    return validate_krun(results, p, warn)


def machine_name(results: dict) -> str:
    """The machine a (validated) results dict comes from."""
    name = machine_from_uname(results.get("audit", {}).get("uname", ""))
    return name or "unknown"
