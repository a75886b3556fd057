"""Duet benchmarking analysis (Bulej et al., ICPE 2020; ../shared/reference/methods.md §2).

Two workloads x and y run at the same time, iteration by iteration; the
interference they share cancels in the ratio x/y. Modules, one job each:

- ``pairs``: the ``--pairs`` file (x and y times per execution, paired by position), validated;
- ``steady``: each side's warm-up removed (Pilot's dominant EDM segment), intersected per execution;
- ``overlap``: pairs for runs without a barrier (iterations overlapping > 40 % of both);
- ``stats``: ratios, gms per execution, ggms, percentile-bootstrap CIs, sequential baseline, shuffle control;
- ``command``: the ``coldrun-analyze duet`` subcommand (numpy/scipy imported only when it runs).
"""
