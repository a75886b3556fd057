"""Data shapes shared by the supervisor and the analysis, which must not import each other.

``execution_record``: the record of one process execution attempt, as the
supervisor writes it to ``executions/`` and as exports carry it.
``state_view``: a state dir's slots and how the Krun and native exports, and the analysis, read them.
``status_report``: `coldrun status --json`, for tools outside coldrun (versioned).
"""
