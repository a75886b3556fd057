"""Bring any input to the stage a command needs: annotated results or a summary.

Raw results go through ``analysis.pipeline`` (outliers, changepoints,
classification) and ``analysis.summary``; annotated results and summaries
are checked and used as they are. The stages come back as values
(:class:`PreparedInput`); the loaded input is left as it was read. Everything
here raises :class:`~analysis.errors.AnalysisError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis import annotated_results, bootstrap, execution_states, inputs, pipeline, summary, summary_json
from analysis.errors import AnalysisError, WarningSink, stderr_warning
from analysis.inputs import LoadedInput
from analysis.key_results import AnnotatedResults, SummarySettings
from analysis.summary_json import BOOTSTRAP_KEY


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


@dataclass(frozen=True)
class PreparedInput:
    """One input at the stages a command asked for."""

    path: Path
    annotated: dict | None  # the annotated Krun results; None for a summary input
    summary: dict | None  # the summary JSON's dict; None when not asked for
    typed: AnnotatedResults | None = None  # the annotations as analysed (None for a summary input)


def summary_of(prepared: PreparedInput) -> dict:
    """The summary of an input prepared ``with_summary`` (which always has one)."""
    assert prepared.summary is not None
    return prepared.summary


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
    if item.kind == "summary":
        raise inputs.summary_given(item.path)
    prepared = prepare(item, options or AnalysisOptions(), warn, with_summary=False)
    assert prepared.annotated is not None
    return prepared.annotated


def to_summary(item: LoadedInput, options: AnalysisOptions | None = None,
               warn: WarningSink = stderr_warning) -> dict:
    """The summary of any input (a summary JSON is checked and returned)."""
    prepared = prepare(item, options or AnalysisOptions(), warn, with_summary=True)
    assert prepared.summary is not None
    return prepared.summary


def prepare(item: LoadedInput, options: AnalysisOptions, warn: WarningSink = stderr_warning, *,
            with_summary: bool) -> PreparedInput:
    """The annotated results of a raw or annotated input and, ``with_summary``, its summary
    (a summary input: checked, and returned as its summary)."""
    if item.kind == "summary":
        try:
            summary_json.summary_rows(item.document)  # validate now, so errors name the file
            summary_json.failed_rows(item.document)
            summary_json.flagged_rows(item.document)
            summary_json.bootstrap_settings(item.document)
            summary_json.classifier_deltas(item.document)
        except AnalysisError as exc:
            raise named(item.path, exc) from None
        return PreparedInput(item.path, None, item.document)
    settings = _summary_settings(options) if with_summary else None
    if item.kind == "annotated":
        annotated = inputs.validate_annotated(item.document, item.path, warn)
        typed = annotated_results.read_annotations(annotated, annotated[execution_states.STATES_KEY])
    else:
        results = raw_results(item, options, warn)
        classifier = {name: getattr(options, name) for name in ("window", "steady", "delta")
                      if getattr(options, name) is not None}
        try:
            annotated = pipeline.one_machine(results)
            found = pipeline.classifier_for(annotated, **classifier)
            annotated = dict(annotated, **{execution_states.STATES_KEY: execution_states.from_flags(
                annotated, "results", warn)})
            # With a summary asked for, each key is bootstrapped in its annotate worker as soon as it is classified.
            typed = pipeline.analyse(annotated, found, summarise=settings, jobs=options.jobs,
                                     progress=options.progress, warn=warn)
        except AnalysisError as exc:
            raise named(item.path, exc) from None
        except ValueError as exc:  # the classifier's own checks (e.g. a bad delta)
            raise AnalysisError(f"{item.path}: {exc}") from None
        annotated_results.add_annotations(annotated, typed)
    if settings is None:
        return PreparedInput(item.path, annotated, None, typed)
    machine = inputs.machine_name(annotated)
    try:
        done = summary.summarise_annotated({machine: typed}, settings, jobs=options.jobs, progress=options.progress,
                                           warn=warn)
    except AnalysisError as exc:
        raise named(item.path, exc) from None
    document = summary_json.summary_document(done)
    summary_json.add_flagged(document, machine, annotated.get(execution_states.FLAGS_KEY))
    return PreparedInput(item.path, annotated, document, typed)


def _summary_settings(options: AnalysisOptions) -> SummarySettings:
    return SummarySettings(bootstrap.RESAMPLES_HIGH if options.resamples is None else options.resamples,
                           options.seed,
                           bootstrap.CONFIDENCE_LEVEL if options.confidence is None else options.confidence)


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
        for table in summary_json.MACHINE_TABLES:
            for machine, vms in (one.get(table) or {}).items():
                for vm, benches in vms.items():
                    merged.setdefault(table, {}).setdefault(machine, {}).setdefault(vm, {}).update(benches)
    return merged
