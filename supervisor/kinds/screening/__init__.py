"""[screening]: a designed experiment, treatments in batches (NIST TN 1855)."""
