"""The edge between typed annotations and warmup_stats' annotated Krun results."""

from __future__ import annotations

from analysis import annotated_results, execution_states, pipeline
from analysis.inputs import ANNOTATION_KEYS


def _results() -> dict:
    step = [2.0] * 20 + [1.0] * 60
    return {"wallclock_times": {"b:VM:default-x": [step, [], [1.0, 1.0]], "a:VM:default-x": [[1.0] * 80]},
            "pexec_flags": {"b:VM:default-x": ["C", "E", "C"], "a:VM:default-x": ["C"]},
            "audit": {"uname": "Linux rig 6.1"}}


def test_written_keys_are_the_ones_the_loader_requires():
    results = _results()
    annotated = pipeline.annotate(results, warn=lambda m: None)
    added = [k for k in annotated if k not in results and k != execution_states.STATES_KEY]
    assert added == [*annotated_results.OUTLIER_TABLES, *annotated_results.SEGMENT_TABLES,
                     annotated_results.WINDOW_KEY, annotated_results.CLASSIFIER_KEY]
    assert set(added) == set(ANNOTATION_KEYS)
    assert annotated_results.is_annotated(annotated) and not annotated_results.is_annotated(results)


def test_read_back_gives_the_typed_annotations():
    results = _results()
    typed = pipeline.analyse(results, pipeline.classifier_for(results), warn=lambda m: None)
    written = annotated_results.add_annotations(dict(results), typed)
    again = annotated_results.read_annotations(written, typed.states)
    assert again == typed
    assert list(again.annotations) == ["a:VM:default-x", "b:VM:default-x"]  # sorted, as warmup_stats takes them
    b = again.annotations["b:VM:default-x"].executions
    assert b[0].classification == "warmup" and b[0].changepoints == [19]
    assert [e.classification for e in b[1:]] == [None, None]  # no data; too short
    assert written["classifier"] == {"delta": "2%", "steady": 20} and written["window_size"] == 8  # coldrun's default
