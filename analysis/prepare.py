"""Bring any input to the stage a command needs: annotated results or a summary.

Raw results go through ``analysis.pipeline`` (outliers, changepoints,
classification) and ``analysis.summary``; annotated results and summaries
are checked and used as they are. Everything here raises
:class:`~analysis.errors.AnalysisError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from analysis import bootstrap, inputs, pipeline, summary
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis.inputs import LoadedInput
from analysis.reports import summary_rows
from analysis.reports.rows import BOOTSTRAP_KEY, bootstrap_settings, failed_rows


@dataclass
class AnalysisOptions:
    """How raw results are analysed on the way to a report."""

    resamples: int | None = None  # bootstrap size; None: warmup_stats' high quality
    seed: int | None = bootstrap.DEFAULT_SEED
    jobs: int = 1
    # Classifier settings (None: warmup_stats' defaults from the iteration count).
    window: int | None = None
    steady: int | None = None
    delta: str | None = None
    # Only for warmup_stats CSV input.
    vm: str | None = None
    language: str | None = None
    uname: str | None = None
    confidence: str | None = None
    progress: bool = False


def named(path: Path, exc: AnalysisError) -> AnalysisError:
    """The same error, its message starting with the file when it does not name it."""
    text = str(exc)
    return exc if str(path) in text else AnalysisError(f"{path}: {text}")


def raw_results(item: LoadedInput, options: AnalysisOptions, warn: WarningSink = stderr_warning) -> dict:
    """Validated Krun-shaped results of a raw input."""
    if item.document is None:  # CSV
        return inputs.validate_krun(inputs.read_csv(item.path, options.vm, options.language, options.uname, warn),
                                    item.path, warn)
    return inputs.results_from_document(item.document, item.path, warn)


def to_annotated(item: LoadedInput, options: AnalysisOptions | None = None,
                 warn: WarningSink = stderr_warning) -> dict:
    """Annotated results for a raw or annotated input."""
    return _annotated_then(item, options or AnalysisOptions(), warn, None)[0]


def _annotated_then(item: LoadedInput, options: AnalysisOptions, warn: WarningSink,
                    then: Callable[[str], pipeline.FollowUp] | None) -> tuple[dict, dict]:
    """Annotated results, and for raw input ``then(machine)``'s results by key (``pipeline.annotate_then``)."""
    if item.kind == "annotated":
        return inputs.validate_annotated(item.document, item.path, warn), {}
    if item.kind == "summary":
        raise inputs.summary_given(item.path)
    results = raw_results(item, options, warn)
    classifier = {name: getattr(options, name) for name in ("window", "steady", "delta")
                  if getattr(options, name) is not None}
    follow_up = then(inputs.machine_name(results)) if then else None
    try:
        annotated, followed = pipeline.annotate_then(results, follow_up, jobs=options.jobs,
                                                     progress=options.progress, warn=warn, **classifier)
    except AnalysisError as exc:
        raise named(item.path, exc) from None
    except ValueError as exc:  # the classifier's own checks (e.g. a bad delta)
        raise AnalysisError(f"{item.path}: {exc}") from None
    # Later steps (summary, plots) reuse this instead of analysing again.
    item.kind, item.document = "annotated", annotated
    return annotated, followed if then else {}


def to_summary(item: LoadedInput, options: AnalysisOptions | None = None,
               warn: WarningSink = stderr_warning) -> dict:
    """The summary of any input (a summary JSON is checked and returned)."""
    options = options or AnalysisOptions()
    if item.kind == "summary":
        try:
            summary_rows(item.document)  # validate now, so errors name the file
            failed_rows(item.document)
            bootstrap_settings(item.document)
        except AnalysisError as exc:
            raise named(item.path, exc) from None
        return item.document
    resamples = bootstrap.RESAMPLES_HIGH if options.resamples is None else options.resamples
    confidence = bootstrap.CONFIDENCE_LEVEL if options.confidence is None else options.confidence
    # Raw input: each key is bootstrapped in its annotate worker as soon as it is classified.
    annotated, by_key = _annotated_then(item, options, warn, lambda machine: partial(
        summary.summarise_key, machine, resamples, options.seed, confidence))
    machine = inputs.machine_name(annotated)
    done = {(machine, key): part for key, part in by_key.items()} or None
    try:
        return summary.summarise({machine: annotated}, resamples=resamples, seed=options.seed,
                                 confidence=confidence, jobs=options.jobs, progress=options.progress, done=done)
    except AnalysisError as exc:
        raise named(item.path, exc) from None


def merge_summaries(items: list[tuple[Path, dict]]) -> dict:
    """One summary from several; a (machine, VM, benchmark) may appear once."""
    if len(items) == 1:
        return items[0][1]
    merged: dict = {"warmup_format_version": items[0][1].get("warmup_format_version", "2"), "machines": {}}
    # One bootstrap record when the inputs agree, else each distinct one (tables list them all).
    records: list = []
    for _, one in items:
        if one.get(BOOTSTRAP_KEY) not in records:
            records.append(one.get(BOOTSTRAP_KEY))
    if records != [None]:
        merged[BOOTSTRAP_KEY] = records[0] if len(records) == 1 else records
    seen: dict[tuple[str, str, str], Path] = {}
    for path, one in items:
        for machine, vms in one["machines"].items():
            for vm, benches in vms.items():
                for bench, data in benches.items():
                    where = (machine, vm, bench)
                    if where in seen:
                        raise AnalysisError(f"{path}: {bench} on {vm} ({machine}) is also in "
                                            f"{seen[where]}; give each benchmark once")
                    seen[where] = path
                    merged["machines"].setdefault(machine, {}).setdefault(vm, {})[bench] = data
        for machine, vms in (one.get(summary.FAILED_KEY) or {}).items():
            for vm, benches in vms.items():
                failed = merged.setdefault(summary.FAILED_KEY, {}).setdefault(machine, {}).setdefault(vm, {})
                failed.update(benches)
    return merged
