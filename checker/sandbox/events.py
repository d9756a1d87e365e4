"""The child's events, as typed records, and the strict parser the parent reads them with.

This is the security boundary between a graded child and kata: a child may be hostile, so the parent
accepts only what is named here. Every line on the event pipe is one JSON object (signed by the job's
key, see ``checker.sandbox.jobs``); ``parse`` turns it into one of the records below or raises ``Malformed``
saying why, and never anything else. It checks:

- the kind is one of ``Kind``, and the keys are exactly that kind's fields (optional ones may be absent);
- each field's type; control numbers (a step's timeout, seconds) finite and not negative;
- sizes: texts, lists and nested figures are bounded, and a line longer than ``MAX_LINE`` bytes is refused
  before it is decoded (``LineBuffer``), so a flood costs the parent linear time and bounded memory.

Figures (``measured``, ``history``, ``figures``) are plain JSON trees: NaN and infinities are allowed
there (a loss that turned NaN is a measurement), nothing else exotic is.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Kind(str, Enum):
    START = "start"
    DONE = "done"
    LOADED = "loaded"
    MEASURED = "measured"
    RAISED = "raised"
    FILE_ERROR = "file_error"
    TAMPERED = "tampered"
    INTERNAL_ERROR = "internal_error"
    HISTORY = "history"
    FIGURES = "figures"
    ISOLATION = "isolation"

    def __str__(self) -> str:
        return self.value


MAX_LINE = 8 * 1024 * 1024
"""Bytes one event line may take (the largest real one, a run's figures, is well under 1 MiB)."""
MAX_TEXT = 64 * 1024
"""Characters a text field may take (tracebacks are cut to 4,000 by the child)."""
MAX_NAME = 200
"""Characters a name (a step, a check id, an exception type) may take."""
MAX_ITEMS = 100_000
"""Items in all the lists and objects of one event's figures, together."""
MAX_DEPTH = 16
MAX_EVENTS = 50_000
"""Events one job may send; past that, the job is treated as tampering."""
MAX_JOB_BYTES = 64 * 1024 * 1024
"""Bytes of event lines one job may send in all (its largest real run sends a few MiB); past that, the job is
tampering and is killed, so what the parent holds for one job stays bounded whatever each line's size."""


class Malformed(ValueError):
    """An event line the parent does not accept; the message says why (it is shown, so it is short)."""


@dataclass(frozen=True)
class Start:
    step: str
    timeout: float | None = None
    kind = Kind.START


@dataclass(frozen=True)
class Done:
    kind = Kind.DONE


@dataclass(frozen=True)
class Loaded:
    kind = Kind.LOADED


@dataclass(frozen=True)
class Measured:
    check: str
    measured: dict[str, Any]
    seconds: float = 0.0
    kind = Kind.MEASURED


@dataclass(frozen=True)
class Raised:
    check: str
    type: str
    error: str
    seconds: float = 0.0
    kind = Kind.RAISED


@dataclass(frozen=True)
class FileError:
    error_kind: str
    message: str
    es: str | None = None
    """The message in Spanish, where the file's error has one."""
    kind = Kind.FILE_ERROR


@dataclass(frozen=True)
class Tampered:
    what: tuple[str, ...] = field(default_factory=tuple)
    kind = Kind.TAMPERED


@dataclass(frozen=True)
class InternalError:
    error: str
    kind = Kind.INTERNAL_ERROR


@dataclass(frozen=True)
class History:
    history: list[Any]
    warnings: tuple[str, ...] = ()
    kind = Kind.HISTORY


@dataclass(frozen=True)
class Figures:
    figures: dict[str, Any]
    kind = Kind.FIGURES


@dataclass(frozen=True)
class Isolation:
    level: str
    """"full" or "reduced"."""
    why: tuple[str, ...] = ()
    layers: dict[str, Any] = field(default_factory=dict)
    kind = Kind.ISOLATION


Event = Start | Done | Loaded | Measured | Raised | FileError | Tampered | InternalError | History | Figures | Isolation

ISOLATION_LEVELS = ("full", "reduced")


# ------------------------------------------------------------------------------------------ field checks


def _name(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise Malformed(f"{key} must be a name of 1 to {MAX_NAME} characters")
    return value


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Malformed(f"{key} must be a text of at most {MAX_TEXT} characters")
    return value


def _texts(value: Any, key: str, most: int = 64) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > most:
        raise Malformed(f"{key} must be a list of at most {most} texts")
    return tuple(_text(v, key)[:2000] for v in value)


def _seconds(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise Malformed(f"{key} must be a finite number of seconds, not {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Budget:
    def __init__(self) -> None:
        self.items = 0


def _tree(value: Any, key: str, budget: _Budget, depth: int = 0) -> Any:
    """A JSON tree of figures, bounded in depth and size; NaN and infinities allowed."""
    if depth > MAX_DEPTH:
        raise Malformed(f"{key} nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise Malformed(f"a text in {key} is longer than {MAX_TEXT} characters")
        return value
    if isinstance(value, list):
        budget.items += len(value)
        if budget.items > MAX_ITEMS:
            raise Malformed(f"{key} holds more than {MAX_ITEMS} items")
        return [_tree(v, key, budget, depth + 1) for v in value]
    if isinstance(value, dict):
        budget.items += len(value)
        if budget.items > MAX_ITEMS:
            raise Malformed(f"{key} holds more than {MAX_ITEMS} items")
        return {k: _tree(v, key, budget, depth + 1) for k, v in value.items()}
    raise Malformed(f"{key} holds a {type(value).__name__}")  # pragma: no cover - json gives only the above


def _object(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{key} must be an object")
    return _tree(value, key, _Budget())


# ------------------------------------------------------------------------------------------ the parser

_FIELDS: dict[Kind, tuple[frozenset[str], frozenset[str]]] = {
    # kind: (required keys, optional keys), besides "event"
    Kind.START: (frozenset({"step"}), frozenset({"timeout"})),
    Kind.DONE: (frozenset(), frozenset()),
    Kind.LOADED: (frozenset(), frozenset()),
    Kind.MEASURED: (frozenset({"check", "measured"}), frozenset({"seconds"})),
    Kind.RAISED: (frozenset({"check", "type", "error"}), frozenset({"seconds"})),
    Kind.FILE_ERROR: (frozenset({"kind", "message"}), frozenset({"es"})),
    Kind.TAMPERED: (frozenset({"what"}), frozenset()),
    Kind.INTERNAL_ERROR: (frozenset({"error"}), frozenset()),
    Kind.HISTORY: (frozenset({"history", "warnings"}), frozenset()),
    Kind.FIGURES: (frozenset({"figures"}), frozenset()),
    Kind.ISOLATION: (frozenset({"level", "why"}), frozenset({"layers"})),
}


def _constant(name: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def parse(payload: bytes) -> Event:
    """One event line (without its signature) as a typed record; ``Malformed`` if it is anything else."""
    if len(payload) > MAX_LINE:
        raise Malformed(f"an event line of {len(payload)} bytes (at most {MAX_LINE})")
    try:
        data = json.loads(payload, parse_constant=_constant)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise Malformed("an event must be a JSON object")
    try:
        kind = Kind(data.get("event"))
    except ValueError:
        raise Malformed(f"unknown event kind {_shown(data.get('event'))}") from None
    required, optional = _FIELDS[kind]
    keys = set(data) - {"event"}
    if not required <= keys or not keys <= required | optional:
        odd = sorted(keys - required - optional) or sorted(required - keys)
        raise Malformed(f"a {kind} event with the wrong keys ({', '.join(map(str, odd))[:80]})")
    return _build(kind, data)


def _build(kind: Kind, d: dict[str, Any]) -> Event:
    if kind is Kind.START:
        timeout = d.get("timeout")
        return Start(_name(d["step"], "step"), None if timeout is None else _seconds(timeout, "timeout"))
    if kind is Kind.DONE:
        return Done()
    if kind is Kind.LOADED:
        return Loaded()
    if kind is Kind.MEASURED:
        return Measured(_name(d["check"], "check"), _object(d["measured"], "measured"),
                        _seconds(d.get("seconds", 0.0), "seconds"))
    if kind is Kind.RAISED:
        return Raised(_name(d["check"], "check"), _name(d["type"], "type"), _text(d["error"], "error"),
                      _seconds(d.get("seconds", 0.0), "seconds"))
    if kind is Kind.FILE_ERROR:
        return FileError(_name(d["kind"], "kind"), _text(d["message"], "message"),
                         _text(d["es"], "es") if "es" in d else None)
    if kind is Kind.TAMPERED:
        return Tampered(_texts(d["what"], "what"))
    if kind is Kind.INTERNAL_ERROR:
        return InternalError(_text(d["error"], "error"))
    if kind is Kind.HISTORY:
        history = d["history"]
        if not isinstance(history, list):
            raise Malformed("history must be a list")
        return History(_tree(history, "history", _Budget()), _texts(d["warnings"], "warnings"))
    if kind is Kind.FIGURES:
        return Figures(_object(d["figures"], "figures"))
    level = d["level"]
    if level not in ISOLATION_LEVELS:
        raise Malformed(f"isolation level {_shown(level)}")
    return Isolation(level, _texts(d["why"], "why"), _object(d.get("layers", {}), "layers"))


class LineBuffer:
    """Splits a byte stream into lines in linear time; a line past ``limit`` bytes is dropped whole and
    counted (``overlong``) instead of being kept."""

    def __init__(self, limit: int = MAX_LINE + 64):
        self.limit = limit
        self._data = bytearray()
        self._skipping = False
        self.overlong = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            elif len(self._data) + end - start > self.limit:
                self.overlong += 1
            else:
                self._data += chunk[start:end]
                lines.append(bytes(self._data))
            self._data.clear()
            start = end + 1
        if not self._skipping:
            self._data += chunk[start:]
            if len(self._data) > self.limit:
                self._data.clear()
                self._skipping = True
                self.overlong += 1
        return lines
