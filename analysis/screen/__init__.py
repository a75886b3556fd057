"""Screening experiments (NIST TN 1855, Flater 2014): which factors change performance.

- ``bca``: BCa bootstrap intervals for means and for linear combinations of
  independent samples' means (effects), with the TN's adaptive replication;
- ``table``: the per-sample table (CSV, or built from a native export);
- ``effects``: treatments, main effects, 2-factor interactions, material significance;
- ``block_plots``: block-plot boxes and the consistent-ordering chance;
- ``t_intervals``: t intervals of means and within-batch effects (below 100 samples per treatment);
- ``split_plot``: whole-plot factors (needing a reboot) tested on batch means against batches;
- ``anova``: statsmodels ANOVA where the design is balanced, with a batch stratum for split plots;
- ``boots``: the between-boot share of each key's variance (one-way random effects);
- ``native``: a native export of a screening experiment -> per-sample tables;
- ``command``: the ``bca``, ``screen`` and ``boots`` subcommands and their JSON.

Only ``command`` is imported by the front door; it imports the rest (and
numpy/scipy/statsmodels) when a subcommand runs.
"""
