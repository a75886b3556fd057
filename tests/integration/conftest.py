"""Fixtures for the supervisor integration tests (helpers live in coldrun_helpers.py)."""

import pytest

from coldrun_helpers import make_experiment


@pytest.fixture
def exp_factory(tmp_path):
    def make(behaviours, **kw):
        return make_experiment(tmp_path, behaviours, **kw)
    return make
