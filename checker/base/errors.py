"""kata's own errors, one module for every layer: each is said in one line, never as a traceback.

- ``Failure``: a command that cannot do what was asked (exit 1); ``UsageProblem``: a bad input (exit 2).
  Neither knows click: the command line (``checker.cli``) prints ``Error: <message>`` and exits with
  ``exit_code``, exactly as click does for its own errors.
- ``LoopFileError``: a loop file (``.py`` or ``.ipynb``) that cannot be graded; ``kind`` names why.
"""

from __future__ import annotations

from checker.base.i18n import Message


class Failure(Exception):
    """A command that cannot do what was asked: printed as 'Error: ...' with exit code 1.

    ``message`` is text, or a bilingual ``checker.base.i18n.Message`` (filled from ``params``): the command line
    then says it in the run's language (``render``); ``message`` is always the English text."""

    exit_code = 1

    def __init__(self, message: str | Message, **params: object):
        self.text = message if isinstance(message, Message) else None
        self.params = params
        self.message = message if self.text is None else self.render("en")
        super().__init__(self.message)

    def render(self, lang: str = "en") -> str:
        if self.text is None:
            return self.message
        return self.text.render(lang, **self.params) if self.params else self.text.render(lang)

    def format_message(self) -> str:
        return self.message


class UsageProblem(Failure):
    """A bad input: printed as 'Error: ...' with exit code 2, never a traceback."""

    exit_code = 2


class LoopFileError(Exception):
    """The file cannot be graded. ``kind`` names why; the message says what to do."""

    def __init__(self, kind: str, message: str, es: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.es = es
        """The message in Spanish, where it has one."""

    def render(self, lang: str = "en") -> str:
        return self.es if lang == "es" and self.es else self.message
