"""Read-only views of a state dir: `coldrun status` (progress, ETA) and `coldrun export`; each asks the
experiment's kind (boot/kinds) for what it adds."""
