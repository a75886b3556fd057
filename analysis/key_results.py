"""The analysis' results, typed, one benchmark key at a time.

Inside the analysis (``pipeline``, ``summary``, ``prepare``) a key's
annotations and summary travel as these values; warmup_stats' shapes (the
annotated Krun results, the summary JSON) are made and read only at the
edges, by ``analysis.annotated_results`` and ``analysis.summary_json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Classifier:
    """The settings the executions were classified with (warmup_stats' ``window_size`` and ``classifier``)."""

    window: int  # outlier window
    steady: int  # a steady state must start before the last ``steady`` iterations
    delta: str  # equivalence delta: seconds ("0.001") or "N%"


@dataclass(frozen=True)
class ExecutionAnnotation:
    """One process execution's annotations; ``classification`` None: not classified
    (no data, or too short for changepoints), and then no changepoints, means or variances."""

    outliers: list[int]
    changepoints: list[int]
    means: list[float]  # one per segment
    variances: list[float]  # one per segment, R's variance
    classification: str | None


@dataclass(frozen=True)
class KeyAnnotation:
    """Every process execution of one benchmark key, annotated."""

    executions: list[ExecutionAnnotation]
    common_outliers: list[list[int]]  # outliers that most executions share at that iteration
    unique_outliers: list[list[int]]


@dataclass(frozen=True)
class Interval:
    """A median with its 5th and 95th percentiles (warmup_stats' "iqr"), or a bootstrap median with its range."""

    median: float
    low: float
    high: float


@dataclass(frozen=True)
class LastIterations:
    """A key without a steady state's figure, marked as such in every table (``analysis.last_iterations``):
    the mean over executions of each one's mean of its last ``iterations`` iterations, outliers left out."""

    mean: float
    half_width: float | None  # of the t interval over the executions' means; None: one execution
    iterations: int  # the classifier's --steady window
    executions: int  # classified executions that gave a mean
    confidence: str  # the table's level ("0.99")


@dataclass(frozen=True)
class KeySummary:
    """One benchmark key's summary (warmup_stats' per-benchmark entry)."""

    classification: str  # the pair classification
    counts: dict[str, int]  # process-execution class -> count, every class present
    steady_iterations: list[int]  # per execution with a steady state
    times_to_steady: list[float]
    steady_means: list[float]
    steady_iteration: Interval | None  # None: some execution has no steady state, or all are flat
    time_to_steady: Interval | None
    executions: list[ExecutionAnnotation]  # every process execution, classified or not
    steady_perf: float | None = None  # bootstrapped; None: some execution has no steady state
    steady_perf_ci: float | None = None
    last_iterations: LastIterations | None = None  # only where steady_perf is None


@dataclass(frozen=True)
class KeyOutcome:
    """A key's summary as computed (None: the key is skipped) and the warnings it raised."""

    summary: KeySummary | None
    notes: list[str]


@dataclass(frozen=True)
class SummarySettings:
    """How steady perf is bootstrapped."""

    resamples: int
    seed: int | None
    confidence: str  # a decimal level as text ("0.99"): the bootstrap reads it with Decimal


@dataclass(frozen=True)
class AnnotatedResults:
    """One machine's results, annotated: its times and states and each key's annotations, in key order."""

    times: dict[str, list[list[float]]]
    states: dict[str, list[str]]
    classifier: Classifier
    annotations: dict[str, KeyAnnotation]
    # Keys already summarised in their annotate worker (pipeline.analyse with summary settings).
    summaries: dict[str, KeyOutcome] = field(default_factory=dict)


@dataclass(frozen=True)
class Summary:
    """Every machine's key summaries, and the executions without data (the summary JSON's content)."""

    settings: SummarySettings
    keys: dict[str, dict[str, KeySummary]]  # machine -> key -> summary (skipped keys absent)
    failed: dict[str, dict[str, list[tuple[int, str]]]]  # machine -> key -> (index, state)
    deltas: tuple[str, ...] = ()  # the equivalence delta(s) the classes were made with (one per distinct setting)
