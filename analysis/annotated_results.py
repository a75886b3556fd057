"""warmup_stats' annotated results: Krun results with the annotation keys, written from and read into
``analysis.key_results`` values (the one place that knows those keys' shapes).

The keys, as ``mark_outliers_in_json`` and ``mark_changepoints_in_json`` add
them, each ``{key: [one entry per process execution]}``: ``all_outliers``,
``common_outliers``, ``unique_outliers``, ``changepoints``,
``changepoint_means``, ``changepoint_vars``, ``classifications``; then
``window_size`` and ``classifier`` ``{"delta": str, "steady": int}``.
coldrun adds ``execution_states`` (``analysis.execution_states``).
"""

from __future__ import annotations

from analysis.key_results import AnnotatedResults, Classifier, ExecutionAnnotation, KeyAnnotation

# Per-key tables, in the order warmup_stats writes them.
OUTLIER_TABLES = ("all_outliers", "common_outliers", "unique_outliers")
SEGMENT_TABLES = ("changepoints", "changepoint_means", "changepoint_vars", "classifications")
WINDOW_KEY = "window_size"
CLASSIFIER_KEY = "classifier"


def is_annotated(results: dict) -> bool:
    return all(k in results for k in (*OUTLIER_TABLES, *SEGMENT_TABLES, WINDOW_KEY, CLASSIFIER_KEY))


def add_annotations(out: dict, annotated: AnnotatedResults) -> dict:
    """Add the annotation keys to Krun results ``out`` (keys in ``annotated``'s order) and return it."""
    keys = annotated.annotations
    out["all_outliers"] = {k: [e.outliers for e in a.executions] for k, a in keys.items()}
    out["common_outliers"] = {k: a.common_outliers for k, a in keys.items()}
    out["unique_outliers"] = {k: a.unique_outliers for k, a in keys.items()}
    out["changepoints"] = {k: [e.changepoints for e in a.executions] for k, a in keys.items()}
    out["changepoint_means"] = {k: [e.means for e in a.executions] for k, a in keys.items()}
    out["changepoint_vars"] = {k: [e.variances for e in a.executions] for k, a in keys.items()}
    out["classifications"] = {k: [e.classification for e in a.executions] for k, a in keys.items()}
    out[WINDOW_KEY] = annotated.classifier.window
    out[CLASSIFIER_KEY] = {"delta": annotated.classifier.delta, "steady": annotated.classifier.steady}
    return out


def read_annotations(results: dict, states: dict[str, list[str]]) -> AnnotatedResults:
    """The typed annotations of annotated Krun results (their shape already checked), keys sorted."""
    wct = results["wallclock_times"]
    tables = {name: results[name] for name in (*OUTLIER_TABLES, *SEGMENT_TABLES)}
    classifier = results[CLASSIFIER_KEY]
    annotations = {}
    for key in sorted(wct):
        executions = [ExecutionAnnotation(outliers=tables["all_outliers"][key][i],
                                          changepoints=tables["changepoints"][key][i],
                                          means=tables["changepoint_means"][key][i],
                                          variances=tables["changepoint_vars"][key][i],
                                          classification=tables["classifications"][key][i])
                      for i in range(len(wct[key]))]
        annotations[key] = KeyAnnotation(executions, tables["common_outliers"][key], tables["unique_outliers"][key])
    return AnnotatedResults(times={key: wct[key] for key in sorted(wct)}, states=states,
                            classifier=Classifier(results[WINDOW_KEY], classifier["steady"], str(classifier["delta"])),
                            annotations=annotations)
