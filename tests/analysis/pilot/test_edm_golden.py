"""analysis.pilot.edm gives Pilot's own answers.

Every ``edm`` row of Pilot's golden files (printed by libpilot itself, see
shared/golden/pilot/README.md) is checked field by field with both
algorithms, and so are the check cases of shared/reference/methods.md §1 (a)
and Pilot's own unit tests.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.pilot import edm
from shared_paths import GOLDEN

PILOT = GOLDEN / "pilot"
GOLDEN_FILES = ("golden_original.jsonl", "golden_fork.jsonl")
ROWS_PER_FILE = 36  # 12 series x percent 0.25 / 0.1 / 0.5
ALGORITHMS = ("fast", "reference")


def edm_rows() -> list[tuple[str, dict]]:
    rows = []
    for name in GOLDEN_FILES:
        with open(PILOT / name) as f:
            rows += [(name, row) for row in map(json.loads, f) if row["kind"] == "edm"]
    return rows


ROWS = edm_rows()


def series(name: str) -> list[float]:
    return [float(line) for line in (PILOT / "inputs" / f"{name}.txt").read_text().split()]


def test_every_golden_file_has_its_edm_rows():
    for name in GOLDEN_FILES:
        assert sum(1 for f, _ in ROWS if f == name) == ROWS_PER_FILE, name


def last_changepoint(x, **params):
    """Pilot's ``pilot_find_one_changepoint``: the last EDM changepoint, None when there is none."""
    found = edm.changepoints(x, **params)
    return found[-1] if found else None


def expect(rc: int, ok_rc: int, none_rc: int, value, call):
    """Pilot's return code as this API says it: a value, None, or TooFewReadings."""
    if rc == 30:
        with pytest.raises(edm.TooFewReadings):
            call()
        return
    assert rc in (ok_rc, none_rc), f"unexpected rc {rc}"
    assert call() == (value if rc == ok_rc else None)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("source,row", ROWS,
                         ids=[f"{f.split('_')[1].split('.')[0]}-{r['series']}-{r['percent']}" for f, r in ROWS])
def test_golden_row(source, row, algorithm):
    x = series(row["series"])
    assert len(x) == row["n"]
    params = dict(min_size=row["min_size"], percent=row["percent"], degree=row["degree"], algorithm=algorithm)
    expect(row["rc"], 0, 0, row.get("changepoints"), lambda: edm.changepoints(x, **params))
    expect(row["dominant_rc"], 0, 32, (row.get("dominant_begin"), row.get("dominant_end")),
           lambda: edm.dominant_segment(x, **params))
    expect(row["one_cp_rc"], 0, 34, row.get("one_cp_loc"), lambda: last_changepoint(x, **params))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_methods_check_cases(algorithm):
    a = dict(algorithm=algorithm)
    short_step = [1.1] * 30 + [5.1] * 30 + [1.1] * 30
    assert edm.changepoints(short_step, **a) == [30, 60]
    assert edm.dominant_segment(short_step, **a) is None
    # 131, not 160: the EDM quirk Pilot's own test asserts.
    long_step = [1.1] * 30 + [5.1] * 130 + [1.1] * 30
    assert edm.changepoints(long_step, **a) == [30, 131]
    assert edm.dominant_segment(long_step, **a) == (30, 131)
    assert last_changepoint(long_step, **a) == 131


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_find_one_changepoint_cases(algorithm):
    a = dict(algorithm=algorithm)
    x = [1.1] * 30
    assert last_changepoint(x, **a) is None
    x += [5.1] * 30
    assert last_changepoint(x, **a) == 30
    x += [1.1] * 30
    assert last_changepoint(x, **a) == 60


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_both_segments_need_min_size(algorithm):
    # Pilot's ChangepointNeedsTwoSegments: the change is at 29, but a first
    # segment needs 30 readings.
    x = [1.1] * 29 + [5.1] * 30
    assert edm.changepoints(x, algorithm=algorithm) == []
    assert edm.changepoints(x + [5.1], algorithm=algorithm) == [30]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_constant_series_has_no_changepoint(algorithm):
    x = [3.14] * 500
    assert edm.changepoints(x, algorithm=algorithm) == []
    assert last_changepoint(x, algorithm=algorithm) is None
    assert edm.dominant_segment(x, algorithm=algorithm) == (0, 500)


@pytest.mark.parametrize("call,at_min_size", [(edm.changepoints, []), (edm.dominant_segment, (0, 30)),
                                               (last_changepoint, None)])
def test_fewer_than_min_size_readings_are_too_few(call, at_min_size):
    with pytest.raises(edm.TooFewReadings, match="at least 30 readings, got 29"):
        call([1.0] * 29)
    with pytest.raises(edm.TooFewReadings, match="at least 5 readings, got 4"):
        call([1.0] * 4, min_size=5)
    assert issubclass(edm.TooFewReadings, ValueError)
    # min_size readings are enough (Pilot's pub_const_30): one segment, no changepoint.
    assert call([1.0] * 30) == at_min_size


@pytest.mark.parametrize("bad,word", [(float("nan"), "NaN"), (float("inf"), "inf"), (float("-inf"), "-inf")])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_non_finite_readings_are_refused(bad, word, algorithm):
    x = [1.0] * 40
    x[17] = bad
    with pytest.raises(ValueError, match=f"reading 17 is {word}"):
        edm.changepoints(x, algorithm=algorithm)


def test_bad_parameters_are_refused():
    x = [1.0] * 60
    with pytest.raises(ValueError, match="algorithm"):
        edm.changepoints(x, algorithm="pilot")
    with pytest.raises(ValueError, match="degree"):
        edm.changepoints(x, degree=3)
    with pytest.raises(ValueError, match="min_size"):
        edm.changepoints(x, min_size=0)
    with pytest.raises(ValueError, match="percent"):
        edm.changepoints(x, percent=float("nan"))


def test_numpy_arrays_and_lists_agree():
    x = series("step_noisy_60_260_40")
    want = [59, 289]
    assert edm.changepoints(x) == want
    arr = np.array(x)
    assert edm.changepoints(arr) == want
    assert edm.changepoints(np.repeat(arr, 2)[::2]) == want  # strided view
    assert edm.changepoints(tuple(x)) == want
    # float32 readings are widened, as Pilot's double interface would.
    f32 = np.array(x, dtype=np.float32)
    assert edm.changepoints(f32) == edm.changepoints([float(v) for v in f32])
