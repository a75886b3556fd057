"""Errors a user can cause end in one clear line, never a traceback."""


class ColdrunError(Exception):
    """A user-facing failure: the message names the file, field or fix.

    The CLI prints ``coldrun: <message>`` and exits with ``exit_code``.
    """

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class PlatformError(ColdrunError):
    """A platform check or control failed fatally: the experiment must stop."""

    exit_code = 3
