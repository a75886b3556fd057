import pytest
from hypothesis import given, strategies as st

from supervisor.cpulist import format_cpulist, parse_cpulist


@pytest.mark.parametrize("text,cpus", [
    ("0", {0}), ("1-3", {1, 2, 3}), ("0,2-4,7", {0, 2, 3, 4, 7}), (" 1-2 ,5\n", {1, 2, 5}),
    ("0-7:2/4", {0, 1, 4, 5}), ("", set()),
])
def test_parse_kernel_cpu_lists(text, cpus):
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize("bad", ["a", "3-1", "1-", "1,,2x"])
def test_bad_cpu_list_names_the_part(bad):
    with pytest.raises(ValueError, match="bad cpu list part"):
        parse_cpulist(bad)


@given(st.sets(st.integers(0, 300)))
def test_format_then_parse_round_trips(cpus):
    assert parse_cpulist(format_cpulist(cpus)) == cpus
