"""The screening VM test's benchmark: says once, on stderr, what the guest's settings are as it runs
(the test compares that with the levels coldrun recorded), then does a little work per iteration."""

import sys

_reported = False


def _read(path):
    with open(path) as f:
        return f.read().strip()


def run_iter(n):
    global _reported
    if not _reported:
        sys.stderr.write("SCREEN-PROBE rate=%s swappiness=%s\n" % (
            _read("/proc/sys/kernel/perf_event_max_sample_rate"), _read("/proc/sys/vm/swappiness")))
        sys.stderr.flush()
        _reported = True
    total = 0
    for i in range(n):
        total += i * i
    return total
