"""kata's own errors, one module for every layer: each is said in one line, never as a traceback.

- ``Failure``: a command that cannot do what was asked (exit 1); ``UsageProblem``: a bad input (exit 2).
  Neither knows click: the command line (``checker.cli``) prints ``Error: <message>`` and exits with
  ``exit_code``, exactly as click does for its own errors.
- ``LoopFileError``: a loop file (``.py`` or ``.ipynb``) that cannot be graded; ``kind`` names why.
"""

from __future__ import annotations


class Failure(Exception):
    """A command that cannot do what was asked: printed as 'Error: ...' with exit code 1."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def format_message(self) -> str:
        return self.message


class UsageProblem(Failure):
    """A bad input: printed as 'Error: ...' with exit code 2, never a traceback."""

    exit_code = 2


class LoopFileError(Exception):
    """The file cannot be graded. ``kind`` names why; the message says what to do."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message
