"""Grading a class: every submission in a folder, each in its own sandboxed children, into a gradebook.

``kata grade DIR -o OUT`` is this module plus a progress bar. A submission that cannot be read or
compiled is recorded as ungradable (with the reason) without running anything; the rest are graded
together by ``checker.engine.grading.grade``, a submission per job, ``workers`` jobs at a time, so a
submission that hangs or crashes costs its own time limit and nothing else.

Only regular files inside the class folder are read, never a link that leaves it nor anything inside OUT
(``checker.base.files.read_inside``); a link out, a FIFO, a socket or a device is a row with the reason.

Outputs, written once every file is graded, each file atomically (``write_gradebook``): the class-wide files
first (grades.csv, results.json, changes.md, canvas.csv and moodle.csv: ``checker.gradebook.roster``), then
similar.csv and class.html, then each student's feedback file on its own, so no student's row can stop the
class's files. Every cell is neutralised where it lands (``checker.engine.formats.csv_cell``, ``md_text``;
the class page is HTML-escaped), and messages name the submission, not the grader's folders (``plain_report``):
- ``grades.csv``: ``submission, passed, score, points, max_points``, then one column per check id
  holding its status (pass/fail/error/timeout/skipped), then ``integrity`` (why the file is held for
  review, else empty) and ``error`` (why it could not be graded, else empty). ``passed`` is ``true``
  when every check passes and nothing holds it for review; ``score`` is ``points / max_points`` (0-1),
  the points being those of a course file (``--course``: per-check points, and which checks count),
  else one per check;
- ``results.json``: a list with each submission's ``Report.to_json()`` plus ``submission``, ``score``,
  ``points``, ``max_points``, ``feedback`` (the path of its feedback file) and ``sha256`` (of the file's
  bytes, to tell next time whether it changed);
- ``feedback/<submission>.md``: for the student: the score, each check that did not pass with the
  message that says what was measured, and what to read (the course's ``[read]``, else the kata that
  teaches that check);
- ``changes.md``: when OUT already held a results.json, what changed since (scores, and the checks
  whose status moved, with the message that says why), and, per submission, whether its file changed;
- ``class.html`` (``class_page``, from ``templates/class.html.j2``): pass rates per check, a row per
  submission linking to its feedback file, the similar pairs; ``similar.csv``: the identical or
  near-identical pairs (``checker.gradebook.similarity``), for a person to look at: no grade changes.

Each file gets the mode the umask gives a new file (``checker.base.files.atomic_write``), so a course's other
accounts can read the gradebook; only ``.secret`` stays 0600. A class folder holds files, or one subfolder per
student (``find_class``): the submission is then named after the subfolder.

Grades are reproducible: every submission's arguments derive from a grading secret and its code
(``checker.setting.draws``). Without ``--secret`` (or ``KATA_SECRET``), ``kata grade`` makes one and keeps it in
``OUT/.secret`` (readable by its owner only, never in a feedback file), so grading again into the same
OUT repeats every unchanged file's grade.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import secrets
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from checker.base.errors import LoopFileError
from checker.base.files import NotGiven, atomic_write, read_inside, resolved_inside
from checker.base.i18n import Message
from checker.base.term import dumps
from checker.base.toml import TABLE, TEXT, Field, read_toml, refuse_unknown, take
from checker.checks import ordered_ids
from checker.engine.formats import csv_cell, md_code, md_lines, md_text, one_line
from checker.engine.grading import PASS, CheckResult, Report, Status, Submission, grade
from checker.engine.request import CheckRequest
from checker.gradebook.similarity import NEAR, NEAR_CHANGED, similar_csv, similar_pairs
from checker.loopfile.loading import compile_source, read_source
from checker.sandbox.jobs import Limits
from checker.setting.course import COURSE_FILE, PYPROJECT, CourseError, parse_course
from checker.setting.tracks import TrackError, hidden_paths

SUFFIXES = (".py", ".ipynb")
OUTPUT_FILES = ("grades.csv", "results.json")


def find_submissions(folder: Path) -> list[Path]:
    """The ``.py`` and ``.ipynb`` entries directly in ``folder`` (not its subfolders, not hidden), sorted; links,
    FIFOs and the like among them too (by their own kind, never followed), for ``read_source`` to refuse by name."""
    return sorted(
        p for p in folder.iterdir()
        if p.suffix in SUFFIXES and not p.name.startswith(".") and not stat.S_ISDIR(p.lstat().st_mode)
    )


@dataclass(frozen=True)
class Found:
    """One submission of a class folder: a file directly in it, or a student's subfolder (the student's name
    is the subfolder's; the file graded is the one ``.py`` or ``.ipynb`` directly in it)."""

    path: Path
    """The file to grade; for a subfolder that holds none or several, the subfolder."""
    name: str
    """The submission's name in the gradebook: the file's name, or the student's subfolder's."""
    problem: str | None = None
    """Why a subfolder cannot be graded (it holds no file to grade, or several), else None."""


FOLDER_EMPTY = Message(en="{name}/ holds no .py or .ipynb file to grade",
                       es="{name}/ no contiene ningún archivo .py o .ipynb que evaluar")
FOLDER_SEVERAL = Message(
    en="{name}/ holds {n} files to grade ({files}): a student's folder holds one .py or .ipynb",
    es="{name}/ contiene {n} archivos que evaluar ({files}): la carpeta de un estudiante contiene un solo .py o "
       ".ipynb")
FOLDER_UNREADABLE = Message(en="{name}/ cannot be read ({why})", es="{name}/ no se puede leer ({why})")
FOLDER_OUTSIDE = Message(
    en="{name}/ is a link to a folder outside the class folder: it was not read",
    es="{name}/ es un enlace a una carpeta fuera de la carpeta de la clase: no se leyó")


def _student_folder(path: Path, folder: Path, lang: str) -> Found:
    """A student's subfolder: its one file to grade, or why it has none."""
    try:
        resolved_inside(path, folder)
    except NotGiven:
        return Found(path, path.name, FOLDER_OUTSIDE.render(lang, name=path.name))
    try:
        inside = find_submissions(path)
    except OSError as exc:
        return Found(path, path.name, FOLDER_UNREADABLE.render(lang, name=path.name, why=exc.strerror or exc))
    if len(inside) == 1:
        return Found(inside[0], path.name)
    if not inside:
        return Found(path, path.name, FOLDER_EMPTY.render(lang, name=path.name))
    files = ", ".join(p.name for p in inside)
    return Found(path, path.name, FOLDER_SEVERAL.render(lang, name=path.name, n=len(inside), files=files))


def find_class(folder: Path, lang: str = "en", exclude: Sequence[Path] = ()) -> list[Found]:
    """The submissions of a class folder, sorted by name: each ``.py``/``.ipynb`` directly in it, and each
    subfolder (one per student; hidden ones, ``__pycache__`` and ``exclude`` left out) with its one such file.

    Nothing is followed out of ``folder``: an entry is what ``lstat`` says it is, a link is what it resolves to
    only while that stays inside ``folder`` (a link to a folder outside is listed with why it was not read), and a
    ``.py`` that is a link out, a FIFO, a socket or a device is listed for ``read_source`` to refuse by name."""
    skip = {p.resolve() for p in exclude}
    found = []
    for path in sorted(Path(folder).absolute().iterdir()):  # absolute: messages then name it as plain_report says
        # realpath, not resolve(): a loop of links is a submission to refuse, never an error of kata's
        if path.name.startswith(".") or path.name == "__pycache__" or Path(os.path.realpath(path)) in skip:
            continue
        if _is_folder(path):
            found.append(_student_folder(path, folder, lang))
        elif path.suffix in SUFFIXES:
            found.append(Found(path, path.name))
    return found


def _is_folder(path: Path) -> bool:
    """A folder, or a link to one (inside the class folder or not: ``_student_folder`` tells which)."""
    try:
        return stat.S_ISDIR(path.lstat().st_mode) or (path.is_symlink() and path.is_dir())
    except OSError:
        return False


def existing_outputs(out: Path) -> list[Path]:
    return [out / name for name in OUTPUT_FILES if (out / name).exists()]


SECRET_FILE = ".secret"
"""The grading secret ``kata grade`` made for an OUT folder (mode 0600), reused by every regrade into it."""


class SecretFileError(ValueError):
    """OUT's secret file cannot be made or read: the message names the file."""


def kept_secret(out_dir: Path) -> tuple[bytes, bool]:
    """The grading secret kept in ``out_dir`` (made when it has none, readable by its owner only): the secret,
    and whether it was made now."""
    path = out_dir / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SecretFileError(f"{path}: cannot keep the grading secret there ({exc.strerror})") from None
    else:
        made = secrets.token_hex(32)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(made + "\n")
        return made.encode("ascii"), True
    kept = _read_kept(path, out_dir)
    if not kept:
        raise SecretFileError(f"{path} is empty: remove it to make a new secret, or give --secret")
    return kept, False


def _read_kept(path: Path, out_dir: Path) -> bytes:
    """The secret kept in ``path``: a regular file in ``out_dir`` (never a link), read without following one."""
    if path.is_symlink():
        raise SecretFileError(f"{path} is not a regular file: remove it, or give --secret")
    try:
        return read_inside(path, out_dir, 4096).strip()
    except NotGiven:
        raise SecretFileError(f"{path} is not a regular file: remove it, or give --secret") from None
    except OSError as exc:
        raise SecretFileError(f"{path}: cannot read the grading secret kept there ({exc.strerror}); "
                              "give --secret, or remove the file to make a new one") from None


def file_hashes(paths: Sequence[Path], root: Path | None = None, exclude: Sequence[Path] = ()) -> dict[str, str]:
    """``str(path)`` -> the SHA-256 of its bytes, for each regular file inside ``root`` (default: its own folder)
    that can be read (to tell next time whether it changed); nothing else is read."""
    from checker.loopfile.loading import MAX_SOURCE_BYTES

    hashes = {}
    for path in paths:
        try:
            data = read_inside(path, root or Path(path).absolute().parent, MAX_SOURCE_BYTES, exclude)
        except (OSError, NotGiven):
            continue
        hashes[str(path)] = hashlib.sha256(data).hexdigest()
    return hashes


def prepare(paths: Sequence[Path], root: Path | None = None,
            exclude: Sequence[Path] = ()) -> tuple[list[Submission], list[Report]]:
    """Read and compile each file (running nothing): gradable submissions, and reports for the rest. Only regular
    files inside ``root`` (the class folder; default: each file's own) and outside ``exclude`` are read."""
    submissions, ungradable = [], []
    for path in paths:
        try:
            source, filename = read_source(path, root, exclude)
            compile_source(source, filename)
        except LoopFileError as exc:
            ungradable.append(Report(file=str(path), error_kind=exc.kind, error=exc.message))
            continue
        submissions.append(Submission(source, filename))
    return submissions, ungradable


def _not_read(hide: Sequence[Path], root: Path | None) -> list[Path]:
    """The folders hidden from the children that lie apart from the class folder (the gradebook's): never read."""
    return [h for h in hide if root is None or Path(h) != Path(root)]


def grade_folder(
    paths: Sequence[Path],
    lab: Any,
    request: CheckRequest,
    *,
    check_ids: Sequence[str],
    on_report: Callable[[Report], None] | None = None,
    hide: Sequence[Path] = (),
    root: Path | None = None,
) -> list[Report]:
    """Grade every file as ``request`` (the class's shared request: lang, timeout, secret, workers, split) asks;
    the reports come back in the order of ``paths``. With a grading secret each file's arguments derive from it
    and the file's code, so the same file and secret get the same report. ``hide``: folders no child may see
    besides kata's own data (the class folder, the gradebook's, its secret). ``root``: the class folder, the only
    place files are read from (the gradebook's folder in ``hide`` never, even inside it)."""
    timeout, secret, lang = request.timeout, request.secret, request.lang
    submissions, ungradable = prepare(paths, root, _not_read(hide, root))
    for report in ungradable:
        if on_report:
            on_report(report)
    hidden = hidden_paths(hide)
    limits = Limits(step_timeout=timeout, hide=hidden) if timeout else Limits(hide=hidden)
    graded = grade(submissions, lab, check_ids=check_ids, workers=request.workers, split=request.children,
                   lang=lang, limits=limits, secret=secret, on_report=on_report)
    by_file = {r.file: r for r in [*graded, *ungradable]}
    return [by_file[str(p)] for p in paths]


# --------------------------------------------------------------------------- the course file


class CourseFileError(ValueError):
    """A course file is malformed: the message names the file and the field."""


@dataclass(frozen=True)
class Course:
    """What counts in a course: the checks run and their points, and what to read when one fails."""

    points: dict[str, float]
    """Check id -> points, in the battery's order; only these checks are run and counted."""
    reading: dict[str, str] = field(default_factory=dict)
    """Check id -> what to read when it fails (else: the [read] of the kata that teaches it)."""
    title: str | None = None
    path: Path | None = None

    @property
    def check_ids(self) -> list[str]:
        return list(self.points)

    @property
    def max_points(self) -> float:
        return sum(self.points.values())

    @classmethod
    def equal(cls, check_ids: Sequence[str]) -> Course:
        """Every check worth one point (no course file)."""
        return cls({cid: 1.0 for cid in check_ids})


COURSE_SCHEMA = (
    Field("title", TEXT, required=False, doc="the course's name, shown in the feedback files"),
    Field("points", TABLE, doc="check id = points: the checks that count, and what each is worth"),
    Field("read", TABLE, required=False, doc="check id = what to read when it fails"),
)


def load_course(path: Path, known: Sequence[str], track=None) -> Course:
    """A course file (TOML), or a course folder (a directory, its kata.toml or pyproject.toml: the same fields in
    it), validated; CourseFileError names the file and the field.

    ::

        title = "Lab 4: the training loop"
        [points]                       # the checks that count, and their points (others are not run)
        "steps.fresh_grads" = 3
        "loss.falls" = 1
        [read]                         # optional: what to read when a check fails
        "steps.fresh_grads" = "Lesson 4, section 4"
    """

    data, where, path = _course_data(Path(path))
    values = take(data, COURSE_SCHEMA, where, CourseFileError)
    points, reading = values["points"], values["read"] or {}
    _check_course_tables(points, reading, known, where)
    order = ordered_ids(list(points), device="cpu", track=track)
    skipped = [cid for cid in points if cid not in order]
    if skipped:
        raise CourseFileError(f"{where}: [points] names check(s) {', '.join(skipped)} that do not apply to the "
                              f"track graded (`kata checks --track NAME` lists those that do)")
    return Course({cid: float(points[cid]) for cid in order}, {k: v.strip() for k, v in reading.items()},
                  values["title"], path)


def _course_data(path: Path) -> tuple[dict, str, Path]:
    """The course's fields, where they were read (for messages) and the file: a course folder's kata.toml or a
    course file."""
    if path.is_dir() or path.name in (COURSE_FILE, PYPROJECT):  # a course folder: its kata.toml's weights
        try:
            folder = parse_course(path)
        except CourseError as exc:
            raise CourseFileError(str(exc)) from None
        data = {k: v for k, v in folder.raw.items() if k in {f.name for f in COURSE_SCHEMA}}
        where = str(folder.file)
        if not data.get("points"):
            raise CourseFileError(f"{where}: no [points]: list the checks that count and what each is worth "
                                  f"(docs/grading.md, \"The course file\")")
        return data, where, folder.file
    if not path.is_file():
        raise CourseFileError(f"{path}: no such course file")
    data = read_toml(path, CourseFileError)
    where = str(path)
    refuse_unknown(data, {f.name for f in COURSE_SCHEMA}, where, CourseFileError)
    return data, where, path


def _check_course_tables(points: dict, reading: dict, known: Sequence[str], where: str) -> None:
    """[points] names known checks, each worth a number above 0; [read] names known checks, each a text."""
    if not points:
        raise CourseFileError(f"{where}: [points] lists no check: name at least one (`kata checks` lists them)")
    for table, name in ((points, "points"), (reading, "read")):
        unknown = [cid for cid in table if cid not in known]
        if unknown:
            raise CourseFileError(f"{where}: [{name}] names unknown check(s) {', '.join(unknown)} "
                                  "(`kata checks` lists them)")
    for cid, value in points.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise CourseFileError(f"{where}: [points] {cid} = {value!r}: points must be a number above 0 "
                                  "(leave a check out to not count it)")
    for cid, value in reading.items():
        if not isinstance(value, str) or not value.strip():
            raise CourseFileError(f"{where}: [read] {cid} must be a non-empty string")


# --------------------------------------------------------------------------- scores


def points_of(report: Report, course: Course) -> float:
    """Points earned: those of every passed check; none while the file is held for review or ungradable."""
    if report.error is not None or getattr(report, "held_for_review", False):
        return 0.0
    return sum(course.points.get(c.id, 0.0) for c in report.checks if c.passed)


def weighted_score(report: Report, course: Course) -> float:
    return points_of(report, course) / course.max_points if course.max_points else 0.0


def _num(x: float) -> str:
    return f"{x:g}"


# --------------------------------------------------------------------------- feedback

FEEDBACK = {
    "title": Message(en="Feedback on {name}", es="Comentarios sobre {name}"),
    "score": Message(en="Score: **{points} of {max} points** ({percent:.0f}%); {passed} of {total} checks pass.",
                     es="Nota: **{points} de {max} puntos** ({percent:.0f}%); pasan {passed} de {total} "
                        "comprobaciones."),
    "held": Message(en="**Held for review.** Every pass counts once a person has read your file, because:",
                    es="**Pendiente de revisión.** Los aprobados cuentan cuando una persona haya leído tu "
                       "archivo, porque:"),
    "error": Message(en="**Your file could not be graded:**", es="**Tu archivo no se pudo evaluar:**"),
    "failed": Message(en="What did not pass", es="Lo que no pasó"),
    "measured": Message(en="What was measured", es="Lo que se midió"),
    "read": Message(en="What to read", es="Qué leer"),
    "practise": Message(en="Practise it with `kata next {slug}{on_track}`.",
                        es="Practícalo con `kata next {slug}{on_track}`."),
    "status": Message(en="status", es="estado"),
    "points": Message(en="{points} point(s)", es="{points} punto(s)"),
    "passed": Message(en="What passed", es="Lo que pasó"),
    "all": Message(en="Every check passes. Well done.", es="Pasan todas las comprobaciones. Bien hecho."),
}


def readings(lang: str, katas: Sequence[Any] | None = None,
             mutants: dict | None = None, track=None) -> dict[str, tuple[str, str]]:
    """Check id -> (kata slug, its [read] text, the track): the first kata (in order) of the graded ``track``
    (default: moons) whose mutant that check kills."""
    if katas is None or mutants is None:
        try:
            from checker.catalogue.katas import load_katas
            from checker.catalogue.mutants import load_mutants, resolve_dir

            katas = load_katas(track=track.id if track is not None else "moons")
            mutants = load_mutants(resolve_dir(None, track) if track is not None else None)
        except (ValueError, OSError, TrackError):  # a broken catalogue only costs the suggestions
            return {}
    out: dict[str, tuple[str, str]] = {}
    for kata in katas:
        mutant = mutants.get(getattr(kata, "mutant", None) or "")
        for cid in mutant.killed_by if mutant else ():
            out.setdefault(cid, (kata.slug, kata.read.render(lang), getattr(kata, "track", None) or "moons"))
    return out


FOLLOWS = Message(
    en="Note: this file's make_data gives the shapes of track {other} ({split}), not those of track {track}, which "
       "this assignment is graded on: it seems to follow another exercise",
    es="Nota: el make_data de este archivo da las formas del recorrido {other} ({split}), no las del recorrido "
       "{track}, con el que se evalúa esta tarea: parece seguir otro ejercicio",
)


def follows_other_track(report: Report, track, lang: str) -> str | None:
    """The note for a submission whose data has another track's shapes (``track``: the one graded), else None."""
    from checker.engine.checking import track_by_data

    other = track_by_data(report, track) if track is not None else None
    if other is None:
        return None
    return FOLLOWS.render(lang, other=other.id, track=track.id, split=f"{other.data.n_train}/{other.data.n_val}")


def submission_name(report: Report, names: dict[str, str] | None = None) -> str:
    """The submission's name in the gradebook: ``names[report.file]`` (a student's subfolder), else the file's."""
    return (names or {}).get(report.file) or Path(report.file).name


STATUS_WORDS = {
    "pass": Message(en="pass", es="pasa"),
    "fail": Message(en="fail", es="falla"),
    "error": Message(en="error", es="error"),
    "timeout": Message(en="timeout", es="tiempo agotado"),
    "skipped": Message(en="skipped", es="omitida"),
}


def status_word(status: object, lang: str) -> str:
    """A check's status in ``lang`` (the feedback's words; grades.csv keeps the values)."""
    value = str(getattr(status, "value", status))
    return STATUS_WORDS[value].render(lang) if value in STATUS_WORDS else value


def _feedback_head(report: Report, course: Course, lang: str, say: dict, name: str, note: str | None) -> list[str]:
    """The feedback's title, course, note, score, and why the file is held or could not be graded."""
    lines = [f"# {say['title'](lang, name=md_text(name))}", ""]
    if course.title:
        lines += [f"*{course.title}*", ""]
    if note:
        lines += [f"**{note}**", ""]
    passed = [c for c in report.checks if c.passed]
    earned = points_of(report, course)
    percent = 100 * earned / course.max_points if course.max_points else 0.0
    lines += [say["score"](lang, points=_num(earned), max=_num(course.max_points), percent=percent,
                           passed=len(passed), total=len(report.checks)), ""]
    integrity = list(getattr(report, "integrity", []) or [])
    if integrity:
        lines += [say["held"](lang), "", *(f"- {md_text(reason)}" for reason in integrity), ""]
    if report.error is not None:
        lines += [say["error"](lang), "", md_code(report.error.strip()), ""]
    return lines


def _failed_section(c, course: Course, lang: str, say: dict, reading: dict[str, tuple[str, str]]) -> list[str]:
    """One failed check's section: its status and points, what was measured, and what to read or practise."""
    points = say["points"](lang, points=_num(course.points.get(c.id, 0.0)))
    status = status_word(c.status, lang)
    lines = [f"### ✗ `{c.id}`: {c.title}", "", f"{say['status'](lang)}: **{status}** · {points}", "",
             f"{say['measured'](lang)}:", ""]
    lines += [f"> {line}" if line else ">" for line in md_lines((c.message or "").strip())]
    lines.append("")
    what = course.reading.get(c.id)
    kata = reading.get(c.id)
    if what or kata:
        lines += [f"{say['read'](lang)}: {what or kata[1]}"]
        if kata:
            on_track = f" --track {kata[2]}" if len(kata) > 2 and kata[2] != "moons" else ""
            lines += ["", say["practise"](lang, slug=kata[0], on_track=on_track)]
        lines.append("")
    return lines


def feedback_markdown(report: Report, course: Course, lang: str, reading: dict[str, tuple[str, str]],
                      names: dict[str, str] | None = None, note: str | None = None) -> str:
    """One student's feedback file: the score, what failed with the measured message, and what to read;
    ``note``: said first (the file follows another track)."""
    name = submission_name(report, names)
    say = {k: m.render for k, m in FEEDBACK.items()}
    lines = _feedback_head(report, course, lang, say, name, note)
    passed = [c for c in report.checks if c.passed]
    failed = [c for c in report.checks if not c.passed]
    if failed:
        lines += [f"## {say['failed'](lang)}", ""]
        for c in failed:
            lines += _failed_section(c, course, lang, say, reading)
    elif report.error is None and report.checks:
        lines += [say["all"](lang), ""]
    if passed:
        lines += [f"## {say['passed'](lang)}", "", ", ".join(f"`{c.id}`" for c in passed), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


MAX_NAME_BYTES = 120
"""The longest per-student file name kata writes, in bytes (a file system allows 255; a 255-byte submission name
plus ``.md`` would not fit)."""


def safe_file_name(name: str, suffix: str = ".md") -> str:
    """``name`` + ``suffix`` as a file name that any file system takes: a name over ``MAX_NAME_BYTES`` (or one that
    is not a plain name) is cut on a character boundary and followed by 12 hex digits of the full name's SHA-256,
    so two long names that start alike stay apart."""
    raw = name.encode("utf-8", "surrogateescape")
    plain = "/" not in name and "\0" not in name and name not in ("", ".", "..")
    if plain and len(raw) + len(suffix) <= MAX_NAME_BYTES:
        return name + suffix
    digest = hashlib.sha256(raw).hexdigest()[:12]
    cut = raw[: MAX_NAME_BYTES - len(suffix) - 13].decode("utf-8", "ignore").replace("/", "_").replace("\0", "_")
    return f"{cut.lstrip('.')}-{digest}{suffix}"


def feedback_name(report: Report, names: dict[str, str] | None = None) -> str:
    return safe_file_name(submission_name(report, names))


# --------------------------------------------------------------------------- changes since the last run


@dataclass(frozen=True)
class Change:
    submission: str
    before: float | None
    """The previous score (0-1), None for a new submission."""
    after: float | None
    """The new score, None for a submission no longer in the folder."""
    checks: list[tuple[str, str, str, str]]
    """(check id, status before, status now, the message now) for every check whose status changed."""

    @property
    def why(self) -> str:
        return self.reason("en")

    def reason(self, lang: str) -> str:
        """Why the score moved: the checks whose status changed, else what else did."""
        if self.before is None:
            return WHY["new"].render(lang)
        if self.after is None:
            return WHY["gone"].render(lang)
        if self.checks:
            return "; ".join(f"{cid} {a} -> {b}" for cid, a, b, _ in self.checks)
        return WHY["points"].render(lang) if abs(self.before - self.after) > 1e-9 else ""


class FileState(str, Enum):
    """Whether a submission's file changed since the previous grading (its SHA-256 against the one kept)."""

    CHANGED = "changed"
    UNCHANGED = "unchanged"
    NEW = "new"
    UNKNOWN = "unknown"
    """The previous run kept no hash of it (an older kata), or the file cannot be read."""

    def __str__(self) -> str:
        return self.value


def file_states(previous: Sequence[dict], current: Sequence[dict]) -> dict[str, FileState]:
    """Submission -> whether its file changed since the previous results.json, for every current one."""
    before = {e["submission"]: e.get("sha256") for e in previous}
    states = {}
    for entry in current:
        name, now = entry["submission"], entry.get("sha256")
        if name not in before:
            states[name] = FileState.NEW
        elif not before[name] or not now:
            states[name] = FileState.UNKNOWN
        else:
            states[name] = FileState.UNCHANGED if before[name] == now else FileState.CHANGED
    return states


WHY = {
    "new": Message(en="new submission", es="entrega nueva"),
    "gone": Message(en="no longer in the folder", es="ya no está en la carpeta"),
    "points": Message(en="the course's points changed", es="cambiaron los puntos del curso"),
}


def load_previous(out_dir: Path) -> list[dict] | None:
    """The previous run's results.json in OUT, or None (no file, or not one this command wrote)."""
    try:
        data = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list) or not all(isinstance(e, dict) and "submission" in e for e in data):
        return None
    return data


def report_from_entry(entry: dict) -> Report:
    """A report as results.json kept it (``Report.to_json()``), to keep a submission not graded again (``kata
    grade --update``); an entry it cannot read is kept as ungradable, with why."""
    try:
        checks = [CheckResult(c["id"], c.get("family", ""), c.get("title", c["id"]), Status(c["status"]),
                              c.get("message", ""), c.get("measured") or {}, float(c.get("seconds", 0.0)))
                  for c in entry.get("checks", [])]
    except (KeyError, TypeError, ValueError) as exc:
        return Report(file=str(entry.get("file", entry["submission"])), error_kind="kept",
                      error=f"the previous results.json holds an entry kata cannot read ({exc!r})")
    error = entry.get("error") or {}
    return Report(file=str(entry.get("file") or entry["submission"]), checks=checks, error_kind=error.get("kind"),
                  error=error.get("message"), integrity=list(entry.get("integrity") or []),
                  isolation=entry.get("isolation"), isolation_why=list(entry.get("isolation_why") or []),
                  reproducible=bool(entry.get("reproducible")))


def _moved_checks(old: dict, new: dict) -> list[tuple[str, str, str, str]]:
    """The checks whose status moved between two entries (with the first line of the message now); the file
    itself when its error changed and no check moved."""
    old_checks = {c["id"]: c.get("status") for c in old.get("checks", [])}
    moved = []
    for c in new.get("checks", []):
        if c["id"] in old_checks and old_checks[c["id"]] != c.get("status"):
            first = (c.get("message") or "").strip().splitlines()
            moved.append((c["id"], old_checks[c["id"]], c.get("status"), first[0] if first else ""))
    if old.get("error") != new.get("error") and not moved:
        moved.append(("(file)", "ungradable" if old.get("error") else "graded",
                      "ungradable" if new.get("error") else "graded",
                      (new.get("error") or {}).get("message", "")))
    return moved


def compare(previous: Sequence[dict], current: Sequence[dict]) -> list[Change]:
    """What changed between two results.json lists: scores, and the checks whose status moved."""
    before = {e["submission"]: e for e in previous}
    now = {e["submission"]: e for e in current}
    changes = []
    for name in [*now, *(n for n in before if n not in now)]:
        old, new = before.get(name), now.get(name)
        if old is None or new is None:
            changes.append(Change(name, old and old.get("score"), new and new.get("score"), []))
            continue
        moved = _moved_checks(old, new)
        score_moved = abs(float(old.get("score", 0)) - float(new.get("score", 0))) > 1e-9
        if moved or score_moved:
            changes.append(Change(name, old.get("score"), new.get("score"), moved))
    return changes


CHANGES = {
    "title": Message(en="Changes since the previous grading", es="Cambios desde la evaluación anterior"),
    "none": Message(en="Nothing changed in the {n} submission(s) graded before.",
                    es="Nada cambió en las {n} entrega(s) evaluadas antes."),
    "header": Message(en="| submission | score before | score now | why |",
                      es="| entrega | nota antes | nota ahora | por qué |"),
    "now": Message(en="What the checks measure now", es="Lo que miden ahora las comprobaciones"),
    "files": Message(en="Files since the previous grading", es="Archivos desde la evaluación anterior"),
    "files_intro": Message(
        en="{changed} changed, {unchanged} unchanged, {new} new, {unknown} unknown. A changed file is graded at "
           "new arguments (they derive from the grading secret and the file); an unchanged one at the same.",
        es="{changed} cambiados, {unchanged} sin cambios, {new} nuevos, {unknown} desconocidos. Un archivo "
           "cambiado se evalúa con argumentos nuevos (salen del secreto de evaluación y del archivo); uno sin "
           "cambios, con los mismos."),
    "changed": Message(en="changed", es="cambiado"),
    "unchanged": Message(en="unchanged", es="sin cambios"),
    "new": Message(en="new", es="nuevo"),
    "unknown": Message(en="unknown (the previous grading kept no hash of it)",
                       es="desconocido (la evaluación anterior no guardó su huella)"),
    "moved": Message(
        en="unchanged, yet its grade moved: graded with another secret, course or version of kata than last time?",
        es="sin cambios, pero su nota se movió: ¿evaluado con otro secreto, curso o versión de kata que la vez "
           "anterior?"),
}


def _files_markdown(files: dict[str, FileState], changes: Sequence[Change], lang: str) -> list[str]:
    """Per submission, whether its file changed; an unchanged file whose grade moved is pointed out."""
    moved = {ch.submission for ch in changes if ch.before is not None and ch.after is not None}
    counts = Counter(files.values())
    lines = ["", f"## {CHANGES['files'].render(lang)}", "",
             CHANGES["files_intro"].render(lang, **{s.value: counts.get(s, 0) for s in FileState}), ""]
    for name, state in files.items():
        key = "moved" if state is FileState.UNCHANGED and name in moved else state.value
        lines.append(f"- {md_text(name)}: {CHANGES[key].render(lang)}")
    return lines


def changes_markdown(changes: Sequence[Change], previous_count: int, lang: str = "en",
                     files: dict[str, FileState] | None = None) -> str:
    """changes.md: the submissions whose grade moved and why, then (``files``) whether each file changed."""
    lines = [f"# {CHANGES['title'].render(lang)}", ""]
    tail = _files_markdown(files, changes, lang) if files is not None else []
    if not changes:
        return "\n".join([*lines, CHANGES["none"].render(lang, n=previous_count), *tail, ""])
    lines += [CHANGES["header"].render(lang), "|---|---|---|---|"]

    def fmt(x: float | None) -> str:
        return "—" if x is None else f"{x:.4f}"

    for ch in changes:
        why = ch.reason(lang).replace("|", "/")
        lines.append(f"| {md_text(ch.submission)} | {fmt(ch.before)} | {fmt(ch.after)} | {why} |")
    detail = [ch for ch in changes if ch.checks]
    if detail:
        lines += ["", f"## {CHANGES['now'].render(lang)}", ""]
        for ch in detail:
            for cid, old, new, message in ch.checks:
                lines.append(f"- {md_text(ch.submission)}, `{cid}` {old} -> {new}: {md_text(message)}")
    return "\n".join([*lines, *tail]) + "\n"


# --------------------------------------------------------------------------- writing, once, at the end


GRADES_COLUMNS = ("submission", "passed", "score", "points", "max_points", "<check id>", "integrity", "error")
"""grades.csv's columns; ``<check id>`` stands for one column per counted check, in the battery's order."""


def grades_csv(reports: Sequence[Report], course: Course, names: dict[str, str] | None = None,
               times: dict[str, tuple[str, bool]] | None = None) -> str:
    """grades.csv: a row per report, every cell neutralised for a spreadsheet (``formats.csv_cell``), an error on one
    line. ``times`` (``--deadline``): submission name -> (when it was submitted, whether after the deadline); adds
    the columns ``submitted`` and ``late``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    at = GRADES_COLUMNS.index("<check id>")
    tail = ["submitted", "late"] if times is not None else []
    writer.writerow([*GRADES_COLUMNS[:at], *course.check_ids, *GRADES_COLUMNS[at + 1:], *tail])
    for report in reports:
        writer.writerow([csv_cell(cell) for cell in _grades_row(report, course, names, times)])
    return buf.getvalue()


def _grades_row(report: Report, course: Course, names: dict[str, str] | None,
                times: dict[str, tuple[str, bool]] | None) -> list[str]:
    statuses = {c.id: str(getattr(c.status, "value", c.status)) for c in report.checks}
    name = submission_name(report, names)
    row = [
        name,
        "true" if report.passed else "false",
        f"{weighted_score(report, course):.4f}",
        _num(points_of(report, course)),
        _num(course.max_points),
        *(statuses.get(cid, "") for cid in course.check_ids),
        one_line("; ".join(getattr(report, "integrity", []) or [])),
        one_line(report.error or ""),
    ]
    if times is not None:
        when, late = times.get(name, ("", False))
        row += [when, "true" if late else "false"]
    return row


def results_json(reports: Sequence[Report], course: Course | None = None,
                 hashes: dict[str, str] | None = None, names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Each report as results.json holds it; ``hashes``: ``report.file`` -> the SHA-256 of its bytes."""
    course = course or Course.equal(sorted({c.id for r in reports for c in r.checks}))
    hashes = hashes or {}
    return [{"submission": submission_name(r, names), "score": round(weighted_score(r, course), 4),
             "points": points_of(r, course), "max_points": course.max_points,
             "feedback": f"feedback/{feedback_name(r, names)}", "sha256": hashes.get(r.file), **r.to_json()}
            for r in reports]


@dataclass(frozen=True)
class Written:
    files: list[Path]
    changes: list[Change] | None
    """What changed since the previous run in OUT (None: there was none)."""
    file_states: dict[str, FileState] | None = None
    """Submission -> whether its file changed since the previous run in OUT (None: there was none)."""
    similar: list = field(default_factory=list)
    """The pairs of identical or near-identical submissions (``checker.gradebook.similarity.SimilarPair``)."""
    failed: list[str] = field(default_factory=list)
    """A line per student's file that could not be written (the class-wide files were)."""


PAGE = {
    "title": Message(en="Class grades", es="Notas de la clase"),
    "subtitle": Message(en="{n} submission(s) graded against {checks} check(s) by kata {version}",
                        es="{n} entrega(s) evaluadas con {checks} comprobación(es) por kata {version}"),
    "submissions": Message(en="submissions", es="entregas"),
    "all_pass": Message(en="pass every check", es="pasan todo"),
    "some_fail": Message(en="fail some check", es="fallan algo"),
    "ungradable": Message(en="cannot be graded", es="no evaluables"),
    "held": Message(en="held for review", es="en revisión"),
    "mean": Message(en="mean score", es="nota media"),
    "checks": Message(en="Pass rate per check", es="Aprobados por comprobación"),
    "check": Message(en="check", es="comprobación"),
    "what": Message(en="what it verifies", es="qué verifica"),
    "points": Message(en="points", es="puntos"),
    "pass_rate": Message(en="passed", es="aprobados"),
    "students": Message(en="Submissions", es="Entregas"),
    "submission": Message(en="submission", es="entrega"),
    "score": Message(en="score", es="nota"),
    "note": Message(en="note", es="observación"),
    "legend_pass": Message(en="passes", es="pasa"),
    "legend_fail": Message(en="fails", es="falla"),
    "legend_error": Message(en="error", es="error"),
    "legend_timeout": Message(en="out of time", es="sin tiempo"),
    "legend_skipped": Message(en="skipped", es="omitida"),
    "similar": Message(en="Identical or near-identical submissions", es="Entregas idénticas o casi idénticas"),
    "similar_intro": Message(
        en="Pairs whose code matches at {near:.0f}% or more once comments and layout are set aside, for a person "
           "to look at. Files written from one starter are alike by nature; this list changes no grade.",
        es="Parejas cuyo código coincide en un {near:.0f}% o más sin contar comentarios ni formato, para que una "
           "persona las mire. Los archivos que parten del mismo inicio se parecen por naturaleza; esta lista no "
           "cambia ninguna nota."),
    "similar_base": Message(
        en="Pairs whose changes from the starter (--base) match at {near:.0f}% or more once comments and layout are "
           "set aside, for a person to look at: what the starter gave everyone is not counted. This list changes no "
           "grade.",
        es="Parejas cuyos cambios respecto al punto de partida (--base) coinciden en un {near:.0f}% o más sin contar "
           "comentarios ni formato, para que una persona las mire: lo que el punto de partida dio a todos no cuenta. "
           "Esta lista no cambia ninguna nota."),
    "similarity": Message(en="similarity", es="parecido"),
    "identical": Message(en="identical", es="idénticas"),
    "no_similar": Message(en="No two submissions are identical or near-identical.",
                          es="No hay dos entregas idénticas ni casi idénticas."),
}
_GLYPHS = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "T", "skipped": "–"}


def _similar_intro(lang: str, based: bool) -> str:
    """What the similar pairs measure: the whole files, or (``--base``) what each changed from the starter."""
    if based:
        return PAGE["similar_base"].render(lang, near=100 * NEAR_CHANGED)
    return PAGE["similar_intro"].render(lang, near=100 * NEAR)


def _check_rates(course: Course, graded: Sequence[Report], lang: str) -> list[dict]:
    """Per counted check: its title, points, and how many of the graded files pass it."""
    from checker.checks import REGISTRY

    checks = []
    for cid in course.check_ids:
        passed = sum(any(c.id == cid and c.passed for c in r.checks) for r in graded)
        title = REGISTRY[cid].title.render(lang) if cid in REGISTRY else cid
        checks.append({"id": cid, "title": title, "points": _num(course.points[cid]), "passed": passed,
                       "graded": len(graded), "percent": round(100 * passed / len(graded)) if graded else 0})
    return checks


def _page_row(r: Report, course: Course, names: dict[str, str] | None) -> dict:
    """A submission's row: its score, a cell per check, and why it is held or could not be graded."""
    import urllib.parse

    statuses = {c.id: str(getattr(c.status, "value", c.status)) for c in r.checks}
    name = submission_name(r, names)
    note = "; ".join(getattr(r, "integrity", []) or [])
    if r.error is not None:
        note = one_line(r.error) or r.error_kind or ""
    return {"name": name, "feedback": "feedback/" + urllib.parse.quote(feedback_name(r, names)),
            "score": f"{100 * weighted_score(r, course):.0f}%", "points": _num(points_of(r, course)),
            "cls": "ok" if r.passed else "bad",
            "cells": [{"check": cid, "status": statuses.get(cid), "glyph": _GLYPHS.get(statuses.get(cid), "·")}
                      for cid in course.check_ids], "note": note}


def _page_cards(reports: Sequence[Report], course: Course, say: dict[str, str]) -> list[tuple[str, Any, str]]:
    """The figures at the top of the page (label, value, css class): how many pass, fail, are held; the mean."""
    summary = summarize(reports)
    held = sum(bool(getattr(r, "integrity", None)) for r in reports)
    mean = sum(weighted_score(r, course) for r in reports) / len(reports) if reports else 0.0
    return [(say["submissions"], summary.total, ""), (say["all_pass"], summary.passed, "ok"),
            (say["some_fail"], summary.failed, "bad" if summary.failed else "ok"),
            (say["ungradable"], summary.ungradable, "bad" if summary.ungradable else "ok"),
            (say["held"], held, "warn" if held else "ok"), (say["mean"], f"{100 * mean:.0f}%", "")]


def class_page(reports: Sequence[Report], course: Course, lang: str = "en", names: dict[str, str] | None = None,
               pairs: Sequence[Any] = (), based: bool = False) -> str:
    """``class.html``: the class at a glance (a self-contained page: inline CSS, no script, no network): pass
    rates per check, a row per submission linking to its feedback file, and the similar pairs."""
    import jinja2

    from checker import __version__

    say = {k: m.render(lang) for k, m in PAGE.items() if k not in ("subtitle", "similar_intro", "similar_base")}
    say["subtitle"] = PAGE["subtitle"].render(lang, n=len(reports), checks=len(course.check_ids),
                                              version=__version__)
    say["similar_intro"] = _similar_intro(lang, based)
    checks = _check_rates(course, [r for r in reports if r.error is None], lang)
    rows = [_page_row(r, course, names) for r in reports]
    cards = _page_cards(reports, course, say)
    env = jinja2.Environment(loader=jinja2.PackageLoader("checker", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("class.html.j2").render(say=say, lang=lang, cards=cards, checks=checks, rows=rows,
                                                    pairs=list(pairs))


def plain_report(report: Report, roots: Sequence[Path]) -> Report:
    """``report`` with the grader's own folders (``roots``: the class folder, as given and resolved) taken out of
    its error and check messages, so they name the submission (``alice/loop.py:3``), never where the instructor
    keeps it."""
    folders = {str(p): f"{p.name}{os.sep}" for root in roots for p in (Path(root).absolute(), Path(root).resolve())}
    prefixes = sorted(folders, key=len, reverse=True)
    if not prefixes:
        return report

    def plain(text):
        if not isinstance(text, str):
            return text
        for prefix in prefixes:  # "/home/t/class/alice/loop.py" -> "alice/loop.py"; the folder alone by its name
            text = text.replace(prefix + os.sep, "").replace(prefix, folders[prefix])
        return text

    checks = [replace(c, message=plain(c.message),
                      measured={k: plain(v) for k, v in c.measured.items()} if isinstance(c.measured, dict)
                      else c.measured) for c in report.checks]
    return replace(report, checks=checks, error=plain(report.error),
                   integrity=[plain(x) for x in report.integrity])


@dataclass(frozen=True)
class Extras:
    """What a gradebook may add to its files besides the reports (each optional)."""

    times: dict[str, tuple[str, bool]] | None = None
    """``--deadline``: submission name -> (when submitted, ISO 8601; whether after the deadline)."""
    base: str | None = None
    """``--base``: the starter every submission began from; similarity is measured on what each file changed."""
    exports: dict[str, str] = field(default_factory=dict)
    """File name in OUT -> its text (the LMS exports), written with the class-wide files."""


def write_gradebook(reports: Sequence[Report], course: Course, out_dir: Path, *, lang: str = "en",
                    hashes: dict[str, str] | None = None, names: dict[str, str] | None = None,
                    sources: dict[str, str] | None = None, track=None, roots: Sequence[Path] = (),
                    extras: Extras | None = None) -> Written:
    """Every output, each file atomically (a temporary file in OUT, renamed over the old one, readable as the
    umask says): grades.csv and results.json are never left half-written.

    The class-wide files first (grades.csv, results.json, changes.md, the exports), then the similar pairs and
    the class page, then one feedback file per student, each on its own: a student's file that cannot be written
    is listed in ``Written.failed`` and stops nothing. ``hashes`` (``file_hashes``): each file's SHA-256, kept in
    results.json to tell next time which files changed. ``names``: ``report.file`` -> its submission's name (a
    student's subfolder), where not the file's own. ``sources``: submission name -> its code, compared for
    similar.csv and the class page (a review aid: it changes no grade). ``roots``: the class folder, taken out of
    every message (``plain_report``)."""
    extras = extras or Extras()
    reports = [plain_report(r, roots) for r in reports]
    results = results_json(reports, course, hashes, names)
    previous = load_previous(out_dir)
    changes = compare(previous, results) if previous is not None else None
    files = file_states(previous, results) if previous is not None else None
    (out_dir / "feedback").mkdir(parents=True, exist_ok=True)
    written = _write_class_files(out_dir, {
        "grades.csv": grades_csv(reports, course, names, extras.times),
        "results.json": results_text(results),
        **({"changes.md": changes_markdown(changes, len(previous or []), lang, files)} if changes is not None else {}),
        **extras.exports,
    })
    pairs, unsimilar = _similar(sources or {}, extras.base)
    written += _write_class_files(out_dir, {"similar.csv": similar_csv(pairs),
                                            "class.html": class_page(reports, course, lang, names, pairs,
                                                                          based=extras.base is not None)})
    done, failed = _write_feedback(reports, course, out_dir, lang, names, track)
    return Written(written + done, changes, files, pairs, unsimilar + failed)


def results_text(results: list[dict[str, Any]]) -> str:
    """results.json's text: indented, each check's figures (``measured``: up to tens of kilobytes a check, with
    the witness) on one line. The same JSON as ``dumps(results, indent=2)``, written by json's C encoder where it
    weighs: indented, a class of 20 moons files (16 MB) took about 1 s, most of what writing the gradebook costs."""
    token = f"kata-measured-{secrets.token_hex(8)}-"
    figures: list[str] = []

    def held(check: Any) -> Any:
        if not isinstance(check, dict) or "measured" not in check:
            return check
        figures.append(dumps(check["measured"]))
        return {**check, "measured": f"{token}{len(figures) - 1}"}

    shell = [{**entry, "checks": [held(c) for c in entry["checks"]]} if isinstance(entry.get("checks"), list)
             else entry for entry in results]
    parts = dumps(shell, indent=2).split(f'"{token}')
    out = [parts[0]]
    for part in parts[1:]:
        index, _, rest = part.partition('"')
        out += [figures[int(index)], rest]
    return "".join(out) + "\n"


def _similar(sources: dict[str, str], base: str | None) -> tuple[list, list[str]]:
    """The similar pairs; a review aid, so a file that defeats the comparison (nesting past the recursion limit,
    memory) costs the list, never the gradebook: (no pairs, a line saying why)."""
    try:
        return similar_pairs(sources, base=base), []
    except (RecursionError, MemoryError, ValueError) as exc:
        return [], [f"similar.csv's pairs ({type(exc).__name__})"]


def _write_class_files(out_dir: Path, texts: dict[str, str]) -> list[Path]:
    for name, text in texts.items():
        atomic_write(out_dir / name, text)
    return [out_dir / name for name in texts]


def _write_feedback(reports: Sequence[Report], course: Course, out_dir: Path, lang: str,
                    names: dict[str, str] | None, track) -> tuple[list[Path], list[str]]:
    """One feedback file per student, each on its own: (the files written, one line per file that could not be)."""
    reading = readings(lang, track=track)
    done, failed = [], []
    for r in reports:
        path = out_dir / "feedback" / feedback_name(r, names)
        try:
            atomic_write(path, feedback_markdown(r, course, lang, reading, names, follows_other_track(r, track, lang)))
        except (OSError, ValueError) as exc:
            failed.append(f"{path.name}: {getattr(exc, 'strerror', None) or exc}")
            continue
        done.append(path)
    return done, failed


@dataclass(frozen=True)
class ClassSummary:
    total: int
    passed: int
    failed: int
    ungradable: int
    failing_checks: list[tuple[str, int, Counter]]
    """(check id, submissions it did not pass, their statuses), most failed first; failed checks only."""


def summarize(reports: Sequence[Report]) -> ClassSummary:
    counts: dict[str, Counter] = {}
    for report in reports:
        for res in report.checks:
            if res.status != PASS:
                counts.setdefault(res.id, Counter())[str(getattr(res.status, "value", res.status))] += 1
    failing = sorted(((cid, sum(c.values()), c) for cid, c in counts.items()), key=lambda t: (-t[1], t[0]))
    ungradable = sum(r.error is not None for r in reports)
    passed = sum(r.passed for r in reports)
    return ClassSummary(len(reports), passed, len(reports) - passed - ungradable, ungradable, failing)
