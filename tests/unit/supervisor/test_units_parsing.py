import pytest

from supervisor.experiment.quantities import format_duration, parse_duration, parse_size


@pytest.mark.parametrize("text,seconds", [("90s", 90), ("3min", 180), ("1h", 3600), ("500ms", 0.5),
                                          ("1h30min", 5400), ("0", 0), (0, 0), (2.5, 2.5), ("2 min", 120)])
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "3 fortnights", "-1s", -5, True, "s", [1]])
def test_bad_durations(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


@pytest.mark.parametrize("text,size", [("2GiB", 2 << 30), ("512MiB", 512 << 20), ("8M", 8 << 20),
                                      ("1kB", 1000), ("1.5KiB", 1536)])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("bad", [2048, "2QB", "GiB", None])
def test_bad_sizes(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_format_duration():
    assert format_duration(4.24) == "4.2s"
    assert format_duration(185) == "3m05s"
    assert format_duration(3720) == "1h02m"
