"""Data shapes shared by the supervisor and the analysis, which must not import each other.

``execution_record``: the record of one process execution attempt, as the
supervisor writes it to ``executions/`` and as exports carry it.
``status_report``: `coldrun status --json`, for tools outside coldrun (versioned).
"""
