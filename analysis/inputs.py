"""The one input loader of the analysis: every file a command reads comes in here.

An input is recognised by its content (compression by the bzip2 magic bytes,
CSV by the ``.csv`` name):

- a summary JSON (warmup_stats ``--output-json``: top-level ``machines``);
- annotated results: Krun results plus warmup_stats' annotation keys
  (``ANNOTATION_KEYS``; recognised by ``classifications``);
- raw results, turned into Krun's results shape (what warmup_stats reads):
  ``{"wallclock_times": {"bench:vm:variant": [[seconds per in-process
  iteration] per process execution]}, "core_cycle_counts": ..., "audit":
  {"uname": ...}, ...}``. Raw formats:

  - Krun results (JSON, plain or bzip2);
  - coldrun native bundle (``"format": "coldrun-native"``, version 1): its
    slots turned into Krun's shape as coldrun's Krun export turns them
    (contracts.state_view), so both exports of a state dir read the same;
  - warmup_stats CSV: header row; column 0 the process execution index,
    column 1 the benchmark, then one column per iteration; ``crash`` in
    column 2 means an empty execution. The implementation and language come
    from the command line: key = ``bench:VM:default-LANGUAGE``.

Every slot keeps its place and gets a state (``analysis.execution_states``),
stored as ``execution_states``.

Pilot's machine interface reads two small text inputs here too:
:func:`read_readings` (one number per line) and :func:`read_wps_rounds`
(CSV ``work_amount,duration_ns``); any bad line is an error naming the file
and the line.

Machine name: ``audit['uname'].split(' ')[1]`` with any domain removed (as
warmup_stats); a file without ``audit.uname`` is named after the file, with a
warning.

Problems inside raw data are reported one line each through ``warn`` and the
rest is still analysed: an execution with NaN, infinite, negative or
non-numeric times is dropped (state ``invalid``); executions of different
lengths are allowed (each is analysed at its own length) but reported. A
file that cannot be used at all (unreadable, not JSON, nested absurdly deep,
wrong shape, annotations or a summary with wrong types or non-finite numbers,
no usable benchmark) raises :class:`AnalysisError` naming the file and, when
known, the key.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.keys import is_key
from analysis import bzip2_input, classify, json_text
from analysis import execution_states as states
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from contracts import state_view

KRUN_COUNTER_KEYS = state_view.MEASUREMENT_KEYS[1:]
NATIVE_FORMAT = "coldrun-native"
NATIVE_VERSION = 1
# The keys warmup_stats' two marking steps add (mark_outliers_in_json, then
# mark_changepoints_in_json); results carrying all of them are annotated.
OUTLIER_KEYS = ("window_size", "all_outliers", "common_outliers", "unique_outliers")
CHANGEPOINT_KEYS = ("changepoints", "changepoint_means", "changepoint_vars", "classifications", "classifier")
ANNOTATION_KEYS = OUTLIER_KEYS + CHANGEPOINT_KEYS
# Results need 4 levels; anything far deeper is not an analysis input, and
# would exhaust the recursion of json and of the writers later.
MAX_JSON_DEPTH = 64
# A process execution number beyond this is a typo, not a gap to fill.
MAX_PEXECS = 100_000


@dataclass
class LoadedInput:
    path: Path
    kind: str  # "summary", "annotated" or "raw"
    document: Any  # the parsed JSON (None for CSV)


def read_bytes(path: Path, expected: str = "a results file") -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise AnalysisError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AnalysisError(f"{path}: is a directory, expected {expected}") from None
    except PermissionError:
        raise AnalysisError(f"{path}: permission denied") from None
    except OSError as exc:
        raise AnalysisError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_document(path: Path) -> Any:
    """The JSON document in a plain or bzip2-compressed file."""
    raw = read_bytes(path)
    if raw[:3] == b"BZh":
        try:
            raw = bzip2_input.decompress(raw)
        except ValueError:
            raise AnalysisError(f"{path}: the bzip2 data is truncated; re-copy or re-export the file") from None
        except OSError:
            raise AnalysisError(f"{path}: corrupt bzip2 data; re-copy or re-export the file") from None
    elif path.name.endswith(".bz2") and raw:
        raise AnalysisError(f"{path}: not bzip2 data, though the name ends .bz2")
    if not raw.strip():
        raise AnalysisError(f"{path}: empty file; expected results, annotated results or a summary JSON")
    try:
        doc = json_text.loads(raw, max_depth=MAX_JSON_DEPTH)
    except UnicodeDecodeError:
        raise AnalysisError(f"{path}: not text; expected JSON (or bzip2-compressed JSON)") from None
    except json.JSONDecodeError as exc:
        raise AnalysisError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (RecursionError, json_text.TooDeep):
        raise AnalysisError(f"{path}: JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)") from None
    return doc


def classify_document(doc: Any) -> str | None:
    """'summary', 'annotated', 'raw' or None (unrecognised)."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("machines"), dict):
        return "summary"
    if doc.get("format") == NATIVE_FORMAT:
        return "raw"
    if isinstance(doc.get("wallclock_times"), dict):
        return "annotated" if "classifications" in doc else "raw"
    return None


def load_input(path_text: str | os.PathLike) -> LoadedInput:
    """Read and recognise one input file (not yet validated in depth)."""
    path = Path(path_text)
    if path.name.lower().endswith(".csv"):
        if path.is_dir():
            raise AnalysisError(f"{path}: is a directory, expected a results file")
        if not path.is_file():
            raise AnalysisError(f"{path}: no such file")
        return LoadedInput(path, "raw", None)
    doc = read_document(path)
    kind = classify_document(doc)
    if kind is None:
        raise unrecognised(path)
    return LoadedInput(path, kind, doc)


def unrecognised(path: Path) -> AnalysisError:
    return AnalysisError(f"{path}: not a results file, annotated results or summary JSON "
                         "(expected 'wallclock_times', 'machines' or a coldrun-native bundle at the top level)")


def summary_given(path: Path) -> AnalysisError:
    return AnalysisError(f"{path}: is a summary JSON, which has no per-iteration times; "
                         "pass the results file instead")


def machine_from_uname(uname: Any) -> str | None:
    """warmup_stats' machine name: second word of uname, domain removed."""
    parts = str(uname).split(" ")
    if len(parts) < 2 or not parts[1]:
        return None
    return parts[1].split(".")[0]


def machine_name(results: dict) -> str:
    """The machine a results dict comes from ("unknown" without a usable uname)."""
    audit = results.get("audit")
    name = machine_from_uname(audit.get("uname", "")) if isinstance(audit, dict) else None
    return name or "unknown"


def _finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:  # an integer beyond double range
        return None
    return f if math.isfinite(f) else None


def _plain_valid_floats(times: list) -> bool:
    """True when every time is a plain float, finite and >= 0: the common
    case, checked at C speed (the per-value loop costs seconds on 7 million
    times)."""
    if set(map(type, times)) != {float}:
        return False
    # NaN would slip through min; with no value below 0, the sum is NaN or
    # infinite when any value is (or when it overflows: then the loop decides).
    return min(times) >= 0 and math.isfinite(sum(times))


def _clean_execution(times: Any, where: str, warn: WarningSink) -> list[float] | None:
    """Validated iteration times, or None (with a warning) when unusable."""
    if not isinstance(times, list):
        warn(f"{where}: expected a list of iteration times, got {type(times).__name__}; execution skipped")
        return None
    if _plain_valid_floats(times):
        return times  # what the loop below would rebuild, value for value
    out: list[float] = []
    for i, t in enumerate(times):
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            warn(f"{where}: iteration {i} is not a number ({t!r}); execution skipped")
            return None
        f = _finite_number(t)
        if f is None or f < 0:
            warn(f"{where}: iteration {i} has an invalid time ({t!r}); execution skipped")
            return None
        out.append(f)
    return out


def validate_krun(results: Any, path: Path, warn: WarningSink) -> dict:
    """Check a Krun-shaped dict in place; bad executions become [] (state
    ``invalid``) and every slot gets its state under ``execution_states``."""
    if not isinstance(results, dict):
        raise unrecognised(path)
    wct = results.get("wallclock_times")
    if not isinstance(wct, dict):
        raise AnalysisError(f"{path}: missing key 'wallclock_times'; is this a Krun results file?")
    rejected: dict[str, set[int]] = {}
    skipped: list[str] = []  # said once the file is known to be usable
    for key in list(wct):
        if not is_key(str(key)):
            skipped.append(f"benchmark key {key!r} is not bench:vm:variant")
            del wct[key]
            continue
        execs = wct[key]
        if not isinstance(execs, list):
            skipped.append(f"{key}: expected a list of process executions")
            del wct[key]
            continue
        cleaned = [_clean_execution(e, f"{path}: {key} process execution {states.execution_number(i)}", warn)
                   for i, e in enumerate(execs)]
        rejected[key] = {i for i, e in enumerate(cleaned) if e is None}
        wct[key] = [e or [] for e in cleaned]
        lengths = {len(e) for e in wct[key] if e}
        if len(lengths) > 1:
            warn(
                f"{path}: {key}: process executions have different lengths "
                f"({min(lengths)}..{max(lengths)} iterations); each is analysed at its own length"
            )
    if not wct:
        why = f" ({skipped[0]}{'; ...' if len(skipped) > 1 else ''})" if skipped else ""
        raise AnalysisError(f"{path}: no usable benchmark results in 'wallclock_times'{why}")
    for reason in skipped:
        warn(f"{path}: {reason}; key skipped")
    slot_states = states.from_flags(results, path, warn)
    for key, bad in rejected.items():
        for i in bad:
            slot_states[key][i] = states.INVALID
    results[states.STATES_KEY] = slot_states
    states.checked_flags(results, path, warn)
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
    """Convert a coldrun native export to Krun's results shape (with ``execution_states``)."""
    # Only native exports need the record contract; importing pydantic costs
    # ~60 ms that a table of Krun results should not pay.
    from pydantic import ValidationError

    from contracts.execution_record import ExecutionSlot, problem

    version = bundle.get("format_version")
    if version != NATIVE_VERSION:
        raise AnalysisError(f"{path}: coldrun native format_version {version!r} is not supported "
                            f"(expected {NATIVE_VERSION})")
    executions = bundle.get("executions")
    if not isinstance(executions, list):
        raise AnalysisError(f"{path}: missing key 'executions' in the coldrun native export")
    entries = []
    for i, entry in enumerate(executions):
        try:
            entries.append(ExecutionSlot.model_validate(entry))
        except ValidationError as exc:
            warn(f"{path}: executions[{i}]: {problem(exc)}; skipped")
    jobs = bundle.get("jobs")
    out = state_view.krun_results(state_view.native_slots(entries, jobs if isinstance(jobs, list) else []))
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
        raise AnalysisError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AnalysisError(f"{path}: is a directory, expected a results file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise AnalysisError(f"{path}: cannot read as CSV ({exc})") from None
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
        if not 0 <= pexec < MAX_PEXECS:
            warn(f"{path}: line {lineno}: process execution index {pexec} is outside 0..{MAX_PEXECS - 1}; "
                 "row skipped")
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
            times = _clean_execution(times, where, warn) or []
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


def _check_native_slots(bundle: dict, path: Path) -> None:
    """Process execution numbers must be plausible: the conversion makes one
    slot for every number below the largest."""
    for table in ("jobs", "executions"):
        records = bundle.get(table)
        for i, rec in enumerate(records if isinstance(records, list) else []):
            pexec = rec.get("pexec") if isinstance(rec, dict) else None
            if isinstance(pexec, int) and not 0 <= pexec < MAX_PEXECS:
                raise AnalysisError(f"{path}: {table}[{i}].pexec: {pexec} is not a process execution number "
                                    f"(0..{MAX_PEXECS - 1})")


def results_from_document(data: Any, path: Path, warn: WarningSink = stderr_warning) -> dict:
    """Krun-shaped, validated results from a parsed results document (the
    annotations of annotated results are ignored: they are computed again)."""
    kind = classify_document(data)
    if kind == "summary":
        raise summary_given(path)
    if isinstance(data, dict) and data.get("format") == NATIVE_FORMAT:
        bundle = data
        _check_native_slots(bundle, path)
        try:
            data = native_to_krun(bundle, path, warn)
        except (TypeError, AttributeError) as exc:
            # A record field of the wrong JSON type; the conversion trusts the
            # export's shape, so name the file instead of tracing back.
            raise AnalysisError(f"{path}: malformed coldrun native bundle ({exc})") from None
    elif isinstance(data, dict) and "format" in data and "wallclock_times" not in data:
        raise AnalysisError(f"{path}: unknown format {data.get('format')!r}; expected Krun results or coldrun-native")
    return validate_krun(data, path, warn)


def read_results(
    path: str | os.PathLike,
    *,
    vm: str | None = None,
    language: str | None = None,
    uname: str | None = None,
    warn: WarningSink = stderr_warning,
) -> dict:
    """Read one raw results file of any supported format into Krun's shape."""
    p = Path(path)
    if p.name.endswith(".csv"):
        return validate_krun(read_csv(p, vm, language, uname, warn), p, warn)
    return results_from_document(read_document(p), p, warn)


def _fail(path: Path, where: str, problem: str) -> AnalysisError:
    return AnalysisError(f"{path}: {where}: {problem}")


def _index_list(value: Any, n: int) -> bool:
    return isinstance(value, list) and all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in value)


def _number_list(value: Any) -> bool:
    return isinstance(value, list) and all(_finite_number(v) is not None for v in value)


def validate_annotated(doc: dict, path: Path, warn: WarningSink = stderr_warning) -> dict:
    """Check annotated results strictly (the annotations were computed from
    these times, so nothing can be dropped); adds ``execution_states``."""
    missing = [k for k in ANNOTATION_KEYS if k not in doc]
    if missing:
        raise AnalysisError(f"{path}: annotated results lack {', '.join(missing)}; "
                            "annotate the raw results again (coldrun-analyze annotate)")
    wct = doc["wallclock_times"]
    window = doc["window_size"]
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise _fail(path, "window_size", f"expected a whole number >= 0, got {window!r}")
    classifier = doc["classifier"]
    if not isinstance(classifier, dict):
        raise _fail(path, "classifier", "expected an object with 'delta' and 'steady'")
    steady = classifier.get("steady")
    if isinstance(steady, bool) or not isinstance(steady, int) or steady < 0:
        raise _fail(path, "classifier.steady", f"expected a whole number >= 0, got {steady!r}")
    try:
        classify.parse_delta(str(classifier.get("delta")))
    except ValueError as exc:
        raise _fail(path, "classifier.delta", str(exc)) from None
    tables = {name: doc[name] for name in ANNOTATION_KEYS if name not in ("window_size", "classifier")}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise _fail(path, name, f"expected an object of benchmark keys, got {type(table).__name__}")
    for key, executions in wct.items():
        if not is_key(key):
            raise _fail(path, f"wallclock_times.{key}", "benchmark key is not bench:vm:variant")
        if not isinstance(executions, list):
            raise _fail(path, f"wallclock_times.{key}", "expected a list of process executions")
        for i, times in enumerate(executions):
            if not _number_list(times) or any(t < 0 for t in times):
                raise _fail(path, f"wallclock_times.{key}[{i}]", "expected finite, non-negative iteration times")
        n = len(executions)
        per_key = {}
        for name, table in tables.items():
            value = table.get(key)
            if not isinstance(value, list) or len(value) != n:
                raise _fail(path, f"{name}.{key}", f"expected a list of {n} entries, one per process execution")
            per_key[name] = value
        for i, times in enumerate(executions):
            for name in ("all_outliers", "common_outliers", "unique_outliers", "changepoints"):
                if not _index_list(per_key[name][i], len(times)):
                    raise _fail(path, f"{name}.{key}[{i}]", f"expected iteration indices 0..{len(times) - 1}")
            for name in ("changepoint_means", "changepoint_vars"):
                if not _number_list(per_key[name][i]):
                    raise _fail(path, f"{name}.{key}[{i}]", "expected a list of finite numbers")
            cls = per_key["classifications"][i]
            if cls is None:
                continue
            if cls not in classify.CLASSES:
                raise _fail(path, f"classifications.{key}[{i}]", f"unknown class {cls!r}")
            segments = len(per_key["changepoints"][i]) + 1
            if not times or len(per_key["changepoint_means"][i]) != segments \
                    or len(per_key["changepoint_vars"][i]) != segments:
                raise _fail(path, f"classifications.{key}[{i}]",
                            "classified, but the times, changepoints, means and variances do not match")
    _clean_counters(doc, path, warn)
    doc[states.STATES_KEY] = states.from_flags(doc, path, warn)
    states.checked_flags(doc, path, warn)
    return doc


def _clean_counters(results: dict, path: Path, warn: WarningSink) -> None:
    """Per-core counters of the wrong shape are dropped (plots draw them)."""
    for counter in KRUN_COUNTER_KEYS:
        table = results.get(counter)
        if table is None:
            continue
        if not isinstance(table, dict):
            warn(f"{path}: {counter}: expected an object of benchmark keys; ignored")
            results[counter] = {}
            continue
        for key in list(table):
            value = table[key]
            ok = isinstance(value, list) and all(
                e is None or (isinstance(e, list) and all(c is None or _number_list(c) for c in e)) for e in value)
            if not ok:
                warn(f"{path}: {counter}.{key}: expected [process execution][core][iteration] numbers; ignored")
                del table[key]


def text_lines(path: Path, expected: str) -> list[str]:
    """The lines of a small text input (a readings file, a WPS CSV)."""
    raw = read_bytes(path, expected)
    if not raw.strip():
        raise AnalysisError(f"{path}: empty file; expected {expected}")
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise AnalysisError(f"{path}: not text; expected {expected}") from None


def reading(path: Path, lineno: int, text: str, what: str, *, positive: bool = False, signed: bool = False) -> float:
    """One number of a text input: finite and >= 0 (> 0 when ``positive``, any sign when ``signed``),
    or one error line naming it."""
    try:
        value = float(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise AnalysisError(f"{path}: line {lineno}: {what} {shown!r} is not a number") from None
    if not math.isfinite(value):
        raise AnalysisError(f"{path}: line {lineno}: {what} {text!r} is not a finite number")
    if (value < 0 and not signed) or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise AnalysisError(f"{path}: line {lineno}: {what} is {text}; it must be {bound}")
    return value


READINGS_EXPECTED = "one reading (a number) per line"


def read_readings(path_text: str | os.PathLike, *, signed: bool = False) -> list[float]:
    """Readings for Pilot's analysis: one number per line, blank lines ignored.

    Readings are times or rates: finite and >= 0 (any finite number when
    ``signed``, e.g. differences for ``bca``). Any other line is an error
    naming the file and the line.
    """
    path = Path(path_text)
    values = []
    for lineno, line in enumerate(text_lines(path, READINGS_EXPECTED), start=1):
        if line.strip():
            values.append(reading(path, lineno, line.strip(), "reading", signed=signed))
    if not values:
        raise AnalysisError(f"{path}: no readings; expected {READINGS_EXPECTED}")
    return values


WPS_COLUMNS = ("work_amount", "duration_ns")
WPS_EXPECTED = "a CSV with a header row naming work_amount and duration_ns, then one row per round"


def read_wps_rounds(path_text: str | os.PathLike) -> tuple[list[float], list[float]]:
    """(work amounts, durations in ns) of the rounds in a WPS CSV; both must be > 0."""
    path = Path(path_text)
    try:
        rows = list(csv.reader(text_lines(path, WPS_EXPECTED)))
    except csv.Error as exc:
        raise AnalysisError(f"{path}: cannot read as CSV ({exc})") from None
    header = [c.strip() for c in rows[0]]
    missing = [c for c in WPS_COLUMNS if c not in header]
    if missing:
        raise AnalysisError(f"{path}: line 1: no column {', '.join(missing)}; expected {WPS_EXPECTED}")
    cols = [header.index(c) for c in WPS_COLUMNS]
    work: list[float] = []
    durations: list[float] = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(cols):
            raise AnalysisError(f"{path}: line {lineno}: {len(row)} column(s); expected {len(header)}")
        work.append(reading(path, lineno, row[cols[0]].strip(), "work amount", positive=True))
        durations.append(reading(path, lineno, row[cols[1]].strip(), "duration (ns)", positive=True))
    if not work:
        raise AnalysisError(f"{path}: no rounds; expected {WPS_EXPECTED}")
    return work, durations
