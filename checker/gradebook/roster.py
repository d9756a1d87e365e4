"""A class as an instructor keeps it: the roster (who is missing), the deadline (who is late) and the exports an
LMS imports (Canvas, Moodle).

- **Roster** (``kata grade --roster FILE``): one student per line, or a CSV whose header names a ``name`` column
  (and, optionally, ``id``, ``login``, ``email``, ``section``; Canvas's and Moodle's own headers are understood
  too). A submission belongs to the student whose name, login, id or e-mail's user part is its name (a
  student's subfolder) or its file's stem (``alice.py``); every student with none gets a row saying so.
- **Deadline** (``--deadline 2026-05-01T23:59``, ISO 8601, local time unless it names a zone): each submission's
  time is its file's modification time (the file itself, never a link's target), as an LMS download keeps it
  (kata runs no git in a student's folder: docs/grading.md says how to give cloned files their commit's time);
  grades.csv gets ``submitted`` and ``late``.
- **Exports**: ``canvas.csv`` (Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``,
  then the assignment's points, under a ``Points Possible`` row) and ``moodle.csv`` (Moodle's grade import:
  ``Full name, ID number, Username, Email address, Grade, Feedback``), every cell neutralised for a
  spreadsheet.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.engine.formats import csv_cell, one_line


@dataclass(frozen=True)
class Student:
    """One line of a roster."""

    name: str
    id: str = ""
    login: str = ""
    email: str = ""
    section: str = ""

    def keys(self) -> set[str]:
        """The names a submission of this student may have."""
        keys = {self.name, self.id, self.login, self.email.split("@")[0] if self.email else ""}
        return {k.casefold() for k in keys if k}


_HEADERS = {
    "name": ("name", "student", "full name", "nombre"),
    "id": ("id", "sis user id", "id number", "student id"),
    "login": ("login", "username", "sis login id", "user"),
    "email": ("email", "email address", "e-mail", "correo"),
    "section": ("section", "group", "grupo"),
}

BAD_ROSTER = Message(en="--roster {path}: {why}", es="--roster {path}: {why}")
NO_NAME = Message(en="its header names no 'name' column (a CSV roster needs one; or list one name per line)",
                  es="su cabecera no tiene columna 'name' (un roster CSV la necesita; o pon un nombre por línea)")
TWICE = Message(en="line {line}: {name!r} is listed twice", es="línea {line}: {name!r} aparece dos veces")
UNREADABLE = Message(en="cannot read it ({why})", es="no se puede leer ({why})")
EMPTY = Message(en="it lists no student", es="no lista ningún estudiante")


def read_roster(path: Path, lang: str = "en") -> list[Student]:
    """The students a roster file lists, in its order; a bad file is a UsageProblem naming it."""
    def bad(message: Message, **params) -> UsageProblem:
        return UsageProblem(BAD_ROSTER.render(lang, path=path, why=message.render(lang, **params)))

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise bad(UNREADABLE, why=getattr(exc, "strerror", None) or exc) from None
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise bad(EMPTY)
    if "," in lines[0][1] or ";" in lines[0][1] or "\t" in lines[0][1]:
        students = _csv_roster([ln for _, ln in lines], bad)
        numbered = list(zip((n for n, _ in lines[1:]), students, strict=False))
    else:
        numbered = [(n, Student(ln.strip())) for n, ln in lines]
    seen: set[str] = set()
    for line, student in numbered:
        if student.name.casefold() in seen:
            raise bad(TWICE, line=line, name=student.name)
        seen.add(student.name.casefold())
    return [s for _, s in numbered]


def _csv_roster(lines: list[str], bad) -> list[Student]:
    delimiter = max((",", ";", "\t"), key=lines[0].count)
    rows = list(csv.reader(lines, delimiter=delimiter))
    header = [h.strip().casefold() for h in rows[0]]
    where = {field: next((i for i, h in enumerate(header) if h in names), None) for field, names in _HEADERS.items()}
    if where["name"] is None:
        raise bad(NO_NAME)

    def cell(row: list[str], field: str) -> str:
        i = where[field]
        return row[i].strip() if i is not None and i < len(row) else ""

    return [Student(**{field: cell(row, field) for field in _HEADERS}) for row in rows[1:] if cell(row, "name")]


def match(roster: Sequence[Student], submissions: Sequence[str]) -> tuple[dict[str, Student], list[Student]]:
    """Submission name -> its student, and the students with no submission (in the roster's order)."""
    owner: dict[str, Student] = {}
    for student in roster:
        keys = student.keys()
        for name in submissions:
            if name not in owner and {name.casefold(), Path(name).stem.casefold()} & keys:
                owner[name] = student
    found = {id(s) for s in owner.values()}
    return owner, [s for s in roster if id(s) not in found]


MISSING = Message(en="no submission from {name}: listed in the roster, not in the class folder",
                  es="no hay entrega de {name}: está en el roster, no en la carpeta de la clase")


# --------------------------------------------------------------------------- the deadline

BAD_DEADLINE = Message(
    en="--deadline {value!r}: give a date and time in ISO 8601, e.g. 2026-05-01T23:59 (local time) or "
       "2026-05-01T23:59+02:00",
    es="--deadline {value!r}: da una fecha y hora en ISO 8601, p. ej. 2026-05-01T23:59 (hora local) o "
       "2026-05-01T23:59+02:00")


def parse_deadline(value: str, lang: str = "en") -> datetime:
    """``--deadline``: an ISO 8601 date and time, local time unless it names a zone; a date alone is its end."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageProblem(BAD_DEADLINE.render(lang, value=value)) from None
    if len(value.strip()) == 10:  # a date alone: the deadline is the end of that day
        when = when.replace(hour=23, minute=59, second=59)
    return when if when.tzinfo else when.astimezone()


def submission_time(path: Path) -> datetime:
    """When a submission came: its file's modification time, from ``lstat`` (a link is never followed)."""
    return datetime.fromtimestamp(os.lstat(path).st_mtime, tz=timezone.utc)


def late_times(paths: dict[str, Path], deadline: datetime) -> dict[str, tuple[str, bool]]:
    """Submission name -> (when it came, ISO 8601 in the deadline's zone; whether after the deadline)."""
    times = {}
    for name, path in paths.items():
        try:
            when = submission_time(path).astimezone(deadline.tzinfo)
        except OSError:
            continue
        times[name] = (when.isoformat(timespec="seconds"), when > deadline)
    return times


# --------------------------------------------------------------------------- LMS exports


@dataclass(frozen=True)
class Row:
    """A student's line in an export."""

    name: str
    """The student's name (the roster's), else the submission's."""
    student: Student | None
    points: float | None
    """None: nothing to grade (no submission)."""
    feedback: str


def _write(rows: list[list[object]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell("" if cell is None else cell) for cell in row])
    return buf.getvalue()


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def canvas_csv(rows: Sequence[Row], assignment: str, max_points: float) -> str:
    """Canvas's gradebook import: a row per student, the assignment's column holding its points."""
    out: list[list[object]] = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment],
                               ["Points Possible", "", "", "", "", _num(max_points)]]
    for r in rows:
        s = r.student or Student(r.name)
        out.append([s.name, "", s.id, s.login or s.email, s.section, _num(r.points)])
    return _write(out)


def moodle_csv(rows: Sequence[Row]) -> str:
    """Moodle's grade import (map ``ID number``, ``Username`` or ``Email address`` to the user, ``Grade`` to the
    grade item and ``Feedback`` to its feedback)."""
    out: list[list[object]] = [["Full name", "ID number", "Username", "Email address", "Grade", "Feedback"]]
    for r in rows:
        s = r.student or Student(r.name)
        out.append([s.name, s.id, s.login, s.email, _num(r.points), one_line(r.feedback, 300)])
    return _write(out)
