"""[duet]: pair executions, both sides at once, a barrier before every iteration (Bulej et al. 2020)."""
