"""TOML files as typed data: the one loader that tracks, kata, mutant and course files share.

- ``read_toml(path, error)``: a TOML file as a dict, read once per process while it is unchanged
  (keyed by path, size and modification time), any problem raised as ``error`` naming the file;
- ``Field`` / ``take(data, fields, where, error)``: the fields of a table converted to typed values
  (non-empty text, English/Spanish messages, lists of strings, booleans, positive integers), with a
  message naming the file and the field for anything missing, mistyped or unknown.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.base.i18n import LANGS, Message

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_CACHE: dict[tuple[str, int, int], dict] = {}


def read_toml(path: Path, error: type[Exception]) -> dict:
    """The file's TOML as a dict (a fresh copy); ``error`` names the file when it cannot be read."""
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in _CACHE:
            _CACHE[key] = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    return json.loads(json.dumps(_CACHE[key]))


def loads_toml(text: str, path: Path, error: type[Exception]) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


TEXT, BOOL, STRINGS, POSITIVE_INT, MESSAGE, MESSAGES, TABLE, NUMBER, FRACTION, INTS = (
    "text", "bool", "strings", "positive int", "message", "messages", "table", "positive number", "fraction",
    "positive ints")


@dataclass(frozen=True)
class Field:
    """One field of a catalogue file: its name, kind, whether it is required, and what it means."""

    name: str
    kind: str
    required: bool = True
    doc: str = ""


class _Bad:
    """Builds the error for a value of the wrong kind: the file, the field, what was expected, what came."""

    def __init__(self, value: Any, f: Field, where: str, error: type[Exception]):
        self.value, self.f, self.where, self.error = value, f, where, error

    def __call__(self, expected: str) -> Exception:
        return self.error(f"{self.where}: field `{self.f.name}` must be {expected}, got {self.value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, bad: _Bad) -> str:
    if not isinstance(value, str) or not value.strip():
        raise bad("a non-empty string")
    return value.strip()


def _bool(value: Any, bad: _Bad) -> bool:
    if not isinstance(value, bool):
        raise bad("true or false")
    return value


def _positive_int(value: Any, bad: _Bad) -> int:
    if not _is_int(value) or value < 1:
        raise bad("a whole number from 1")
    return value


def _number(value: Any, bad: _Bad) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise bad("a number above 0")
    return float(value)


def _fraction(value: Any, bad: _Bad) -> float:
    number = _number(value, bad)
    if not number < 1:
        raise bad("a number between 0 and 1")
    return number


def _ints(value: Any, bad: _Bad) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or not all(_is_int(v) and v >= 1 for v in value):
        raise bad("a non-empty list of whole numbers from 1")
    return tuple(value)


def _strings(value: Any, bad: _Bad) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise bad("a non-empty list of strings")
    return tuple(v.strip() for v in value)


def _table(value: Any, bad: _Bad) -> dict:
    if not isinstance(value, dict):
        raise bad("a table")
    return value


def _message(item: Any, at: str, bad: _Bad) -> Message:
    """One {en, es} table as a Message; ``at`` names the field (and its position in an array)."""
    where, error = bad.where, bad.error
    if not isinstance(item, dict):
        raise error(f"{where}: field {at} must be a table with 'en' and 'es' strings")
    for lang in LANGS:
        if not isinstance(item.get(lang), str) or not item[lang].strip():
            raise error(f"{where}: field {at}: '{lang}' must be a non-empty string")
    extra = sorted(set(item) - set(LANGS))
    if extra:
        raise error(f"{where}: field {at}: unknown key(s) {', '.join(extra)} (only 'en' and 'es')")
    return Message(en=item["en"].strip(), es=item["es"].strip())


def _one_message(value: Any, bad: _Bad) -> Message:
    return _message(value, f"`{bad.f.name}`", bad)


def _messages(value: Any, bad: _Bad) -> tuple[Message, ...]:
    if not isinstance(value, list) or not value:
        raise bad("a non-empty array of tables, each with 'en' and 'es' strings")
    return tuple(_message(item, f"`{bad.f.name}` #{i}", bad) for i, item in enumerate(value, start=1))


_CONVERTERS: dict[str, Callable[[Any, _Bad], Any]] = {
    TEXT: _text, BOOL: _bool, POSITIVE_INT: _positive_int, NUMBER: _number, FRACTION: _fraction, INTS: _ints,
    STRINGS: _strings, TABLE: _table, MESSAGE: _one_message, MESSAGES: _messages,
}
"""Field kind -> its converter: the value as typed data, or the error naming the file and the field."""


def _convert(value: Any, f: Field, where: str, error: type[Exception]) -> Any:
    converter = _CONVERTERS.get(f.kind)
    if converter is None:
        raise ValueError(f"unknown field kind {f.kind!r}")
    return converter(value, _Bad(value, f, where, error))


def take(
    data: Mapping[str, Any],
    fields: Iterable[Field],
    where: str,
    error: type[Exception],
    *,
    missing_hint: Callable[[Field], str] | None = None,
) -> dict[str, Any]:
    """The values of ``fields`` in ``data``, converted (absent optional fields are None)."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.name not in data or data[f.name] is None:
            if f.required:
                hint = missing_hint(f) if missing_hint else (f" ({f.doc})" if f.doc else "")
                raise error(f"{where}: missing field `{f.name}`{hint}")
            out[f.name] = None
            continue
        out[f.name] = _convert(data[f.name], f, where, error)
    return out


def refuse_unknown(data: Mapping[str, Any], known: Iterable[str], where: str, error: type[Exception]) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise error(f"{where}: unknown field(s) {', '.join(f'`{u}`' for u in unknown)} "
                    f"(known: {', '.join(sorted(known))})")
