"""The experiment: the TOML model, its quantities and the plan of jobs."""
