"""The state dir: schedule, execution records, undo log, exports and status."""
