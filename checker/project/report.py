"""What the trusted runner returns: one result per check, and the report that says them in one language."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from checker.base.errors import UsageProblem
from checker.base.i18n import Message, resolve_lang
from checker.project.frames import Place


class Status(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not run"


class ProjectInputError(UsageProblem):
    """The pieces handed to kata cannot be used (a parameter kata cannot bind, data of the wrong shape, the
    project's code raising): one clear line, never a traceback from kata."""


class LoopCheckFailed(AssertionError):
    """Raised by :meth:`Report.assert_ok`: its text is the report's failures, one per line, each at its line."""


@dataclass(frozen=True)
class Result:
    """One check on the project's loop.

    ``message`` is filled from ``params``; ``place`` is the project's line where the fault (or, for a pass,
    nothing) was observed; ``function`` the project's function that was running."""

    id: str
    title: Message
    status: Status
    message: Message
    params: dict[str, Any] = field(default_factory=dict)
    place: Place | None = None

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def text(self, lang: str = "en") -> str:
        return self.message.render(lang, **self.params)

    def line(self, lang: str = "en") -> str:
        """``file:line: check: message``: the form editors and terminals jump to."""
        where = f"{self.place}: " if self.place is not None else ""
        return f"{where}{self.id}: {self.text(lang)}"

    def as_dict(self, lang: str = "en") -> dict[str, Any]:
        return {
            "id": self.id, "status": self.status.value, "message": self.text(lang),
            "file": self.place.path if self.place else None, "line": self.place.line if self.place else None,
            "function": self.place.function if self.place else None,
        }


HEADER_FAIL = Message(
    en="kata found {n} fault(s) in the training loop:",
    es="kata encontró {n} fallo(s) en el bucle de entrenamiento:",
)
HEADER_OK = Message(
    en="kata: the training loop passed {passed} check(s)",
    es="kata: el bucle de entrenamiento pasó {passed} comprobación(es)",
)
NOT_RUN_LINE = Message(en="not run", es="sin ejecutar")


@dataclass
class Report:
    """Every check's result on one project's loop."""

    results: list[Result]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if r.status is Status.FAILED]

    @property
    def not_run(self) -> list[Result]:
        return [r for r in self.results if r.status is Status.NOT_RUN]

    def __getitem__(self, check_id: str) -> Result:
        for result in self.results:
            if result.id == check_id:
                return result
        raise KeyError(check_id)

    def render(self, lang: str | None = None, *, verbose: bool = False) -> str:
        """The failures, one per line at their place; with ``verbose``, every check."""
        lang = resolve_lang(lang)
        passed = sum(r.passed for r in self.results)
        lines = [HEADER_FAIL.render(lang, n=len(self.failures)) if self.failures
                 else HEADER_OK.render(lang, passed=passed)]
        lines += [f"  {r.line(lang)}" for r in self.failures]
        if verbose:
            lines += [f"  ok {r.id}: {r.text(lang)}" for r in self.results if r.passed]
        lines += [f"  {NOT_RUN_LINE.render(lang)} {r.id}: {r.text(lang)}" for r in self.not_run]
        return "\n".join(lines)

    def as_dict(self, lang: str | None = None) -> dict[str, Any]:
        lang = resolve_lang(lang)
        return {"passed": self.ok, "checks": [r.as_dict(lang) for r in self.results]}

    def assert_ok(self, lang: str | None = None) -> None:
        """Raise :class:`LoopCheckFailed` naming each failure at its line, unless every check that ran passed."""
        if not self.ok:
            raise LoopCheckFailed(self.render(lang))
