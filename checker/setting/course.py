"""The course folder: a directory holding ``kata.toml`` (or a ``pyproject.toml`` with a ``[tool.kata]`` table),
found from the working folder upwards, or named with ``--course DIR``.

It names what an instructor's course adds to kata, all inside the course folder (never in the installed
package):

- ``tracks``: folders of track files (default ``["tracks"]``), relative to the course folder; each track file
  names its reference, mutants and katas folders relative to its folder's parent (``checker.setting.tracks``),
  so `kata new` and `kata mutants verify` write there;
- ``track``: the course's default track (commands run without ``--track``);
- ``mutants`` and ``katas``: folders holding one subfolder per track, for the course's track files that name
  no folder of their own;
- ``language``: the course's default language (``en`` or ``es``), after ``--lang`` and ``$KATA_LANG``;
- ``title``, ``[points]`` and ``[read]``: the course's weights, as a course file says them
  (``checker.gradebook.book.load_course``).

``$KATA_TRACKS`` still adds folders of track files. ``$KATA_COURSE`` names the course folder when the working
folder is not inside it. A learner's working folder remembers its course and track in ``.kata/course.json``
(written by `kata next`): every later command run there (or with ``--dir``/``$KATA_DIR`` naming it) finds the
course from it, in any shell, with nothing set.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checker.base.errors import UsageProblem
from checker.base.i18n import LANGS, Message, resolve_lang
from checker.base.toml import BOOL, STRINGS, TABLE, TEXT, Field, read_toml, refuse_unknown, take

COURSE_FILE = "kata.toml"
PYPROJECT = "pyproject.toml"
COURSE_ENV = "KATA_COURSE"
"""A course folder to use when the working folder is not inside one."""
WORKDIR_ENV = "KATA_DIR"
"""The learner's working folder, when not the current one (``--dir`` sets it)."""
RECORD = os.path.join(".kata", "course.json")
"""In a learner's working folder: ``{"course": "/abs/course/folder" or null, "track": "digits"}``, what `kata next`
opened there last (docs/progress.md)."""
PACKAGE = Path(__file__).resolve().parents[1]
"""The installed ``checker`` package: nothing an instructor writes goes in here."""


class CourseError(Exception):
    """A kata.toml (or [tool.kata]) that cannot be used; the message names the file and the field."""


COURSE_FIELDS = (
    Field("title", TEXT, required=False, doc="the course's name (feedback files)"),
    Field("language", TEXT, required=False, doc="en or es: the course's default language"),
    Field("track", TEXT, required=False, doc="the default track of commands run in the course"),
    Field("tracks", STRINGS, required=False, doc="folders of track files, relative to the course folder "
          "(default: its tracks/ folder, if it has one)"),
    Field("mutants", TEXT, required=False, doc="folder of the course's mutants, one subfolder per track: where a "
          "track file of the course that names no `mutants` keeps them (<mutants>/<track id>)"),
    Field("katas", TEXT, required=False, doc="folder of the course's katas, one subfolder per track: where a track "
          "file of the course that names no `katas` keeps them (<katas>/<track id>)"),
    Field("points", TABLE, required=False, doc="check id = points: the course's weights"),
    Field("read", TABLE, required=False, doc="check id = what to read when it fails"),
    Field("students", BOOL, required=False, doc="true in a students' copy (`kata autograder students`): its references "
          "and mutants stay with the graders; `kata next` writes the starters kept in starters/<track id>/, and "
          "`kata check` runs the checks that need no reference"),
)
STARTERS = "starters"
"""In a students' copy: one folder per track holding each kata's starter, ``<slug>.py``, written from the
reference and the mutant when the copy was made."""


@dataclass(frozen=True)
class CourseFolder:
    root: Path
    """The course folder (where kata.toml, or the pyproject.toml, is)."""
    file: Path
    title: str | None = None
    language: str | None = None
    track: str | None = None
    tracks: tuple[str, ...] = ()
    mutants: str | None = None
    """Folder (relative to ``root``) holding one mutants folder per track: the default of a course track file
    that names none."""
    katas: str | None = None
    """The same for katas."""
    students: bool = False
    """A students' copy (``kata autograder students``): no reference, no mutant; the katas' starters written out."""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """The whole table (``points``, ``read``, ``title``: the course's weights, read by the grade layer)."""

    @property
    def track_folders(self) -> list[Path]:
        return [self.root / t for t in self.tracks]

    def track_defaults(self, track_id: str) -> dict[str, Path]:
        """Where a track file of this course that names no ``mutants`` or ``katas`` folder keeps them."""
        given = {"mutants": self.mutants, "katas": self.katas}
        return {name: self.root / folder / track_id for name, folder in given.items() if folder}

    @property
    def has_points(self) -> bool:
        return bool(self.raw.get("points"))

    def starter(self, track_id: str, slug: str) -> Path:
        """Where a students' copy keeps the starter of kata ``slug`` of track ``track_id``."""
        return self.root / STARTERS / track_id / f"{slug}.py"


def _table_of(path: Path) -> dict | None:
    data = read_toml(path, CourseError)
    if path.name == PYPROJECT:
        kata = data.get("tool", {}).get("kata") if isinstance(data.get("tool"), dict) else None
        return kata if isinstance(kata, dict) else None
    return data


def parse_course(path: Path) -> CourseFolder:
    """The course that ``path`` (a kata.toml, a pyproject.toml with [tool.kata], or a folder holding one)
    declares; CourseError names the file and the field."""
    path = Path(path).expanduser()
    if path.is_dir():
        for name in (COURSE_FILE, PYPROJECT):
            if (path / name).is_file() and _table_of(path / name) is not None:
                return parse_course(path / name)
        raise CourseError(f"{path}: no {COURSE_FILE} (nor a {PYPROJECT} with [tool.kata]) in this folder")
    if not path.is_file():
        raise CourseError(f"{path}: no such course file or folder")
    raw = _table_of(path)
    where = f"{path} [tool.kata]" if path.name == PYPROJECT else str(path)
    if raw is None:
        raise CourseError(f"{path}: no [tool.kata] table")
    refuse_unknown(raw, [f.name for f in COURSE_FIELDS], where, CourseError)
    values = take(raw, COURSE_FIELDS, where, CourseError)
    language = values["language"]
    if language is not None and language not in LANGS:
        raise CourseError(f"{where}: field `language` is {language!r} (use {' or '.join(LANGS)})")
    root = path.resolve().parent
    # no `tracks` field: the course's tracks/ folder, where there is one
    tracks = tuple(values["tracks"] or (("tracks",) if (root / "tracks").is_dir() else ()))
    for name in tracks:
        if not (root / name).is_dir():
            raise CourseError(f"{where}: field `tracks`: {root / name} is not a folder")
    return CourseFolder(root=root, file=path.resolve(), title=values["title"], language=language,
                        track=values["track"], tracks=tracks, mutants=values["mutants"], katas=values["katas"],
                        students=bool(values["students"]), raw=raw)


@dataclass(frozen=True)
class Recorded:
    """What a learner's working folder remembers (``.kata/course.json``)."""

    folder: Path
    """The working folder holding the record."""
    course: Path | None
    """The course folder its katas come from (None: kata's own tracks)."""
    track: str | None
    """The track of the kata `kata next` opened last."""


def record_course(workdir: Path, course: CourseFolder | None, track: str | None) -> None:
    """Remember in ``workdir`` the course (its folder) and the track a learner works on; best effort (a folder that
    cannot be written keeps working as before, with $KATA_COURSE or --track)."""
    path = Path(workdir) / RECORD
    data = {"course": str(course.root) if course is not None else None, "track": track}
    try:
        if path.is_file() and json.loads(path.read_text(encoding="utf-8")) == data:
            return
    except (OSError, ValueError):
        pass
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _read_record(folder: Path) -> Recorded | None:
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    course, track = data.get("course"), data.get("track")
    return Recorded(folder, Path(course) if isinstance(course, str) and course else None,
                    track if isinstance(track, str) and track else None)


_WORKDIR: list[Path] = []
"""The working folder a command was given (``--dir``), where its record is read first."""


def use_workdir(path: str | Path | None) -> None:
    """The working folder this command was given (``--dir``): its record comes first."""
    _WORKDIR[:] = [Path(path).expanduser()] if path else []


def recorded(start: Path | None = None) -> Recorded | None:
    """The record of the learner's working folder: ``--dir``'s, else ``$KATA_DIR``'s, else the nearest one from
    ``start`` (default: the current folder) upwards; None when there is none."""
    env = os.environ.get(WORKDIR_ENV, "").strip()
    here = Path(start or os.getcwd()).resolve()
    for folder in [*_WORKDIR, *([Path(env).expanduser()] if env else []), here, *here.parents]:
        found = _read_record(folder)
        if found is not None:
            return found
    return None


def find_course_file(start: Path | None = None) -> Path | None:
    """The nearest kata.toml (or pyproject.toml with [tool.kata]) from ``start`` (default: the working folder)
    upwards, else ``$KATA_COURSE``'s, else the course the learner's working folder recorded (``recorded``); None
    when there is none."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / COURSE_FILE).is_file():
            return folder / COURSE_FILE
        pyproject = folder / PYPROJECT
        if pyproject.is_file():
            try:
                if _table_of(pyproject) is not None:
                    return pyproject
            except CourseError:
                pass
    env = os.environ.get(COURSE_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    record = recorded(start)
    if record is not None and record.course is not None:
        return record.course
    return None


def find_course(start: Path | None = None) -> CourseFolder | None:
    """The course folder the working folder is in (see ``find_course_file``), else None; CourseError when its
    kata.toml is malformed. Where the learner's working folder recorded this course, the track it recorded is the
    course's default track there."""
    found = find_course_file(start)
    if found is None:
        return None
    course = parse_course(found)
    record = recorded(start)
    if record is not None and record.track and record.course is not None and _same(record.course, course.root):
        course = replace(course, track=record.track)
    return course


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def current_course() -> CourseFolder | None:
    """The course folder of this command, else None; a malformed kata.toml is a UsageProblem (exit 2)."""
    try:
        return find_course()
    except CourseError as exc:
        raise UsageProblem(str(exc)) from None


def students_copy() -> CourseFolder | None:
    """The course of this command when it is a students' copy (its references and mutants withheld), else None."""
    course = current_course()
    return course if course is not None and course.students else None


NO_REFERENCE = Message(
    en="{what} needs the reference of track {track}, {path}, which is not there (a students' copy of a course keeps no "
       "reference: it stays with the instructor's graders)",
    es="{what} necesita la referencia del recorrido {track}, {path}, que no está ahí (una copia de un curso para "
       "estudiantes no guarda la referencia: la tienen los evaluadores del profesor)",
)


def reference_text(track, what: str, lang: str | None = None) -> str:
    """``track``'s reference loop, as text; a UsageProblem (exit 2) naming ``what`` needs it where it is missing."""
    try:
        return track.reference.read_text(encoding="utf-8")
    except OSError:
        raise UsageProblem(NO_REFERENCE.render(resolve_lang(lang), what=what, track=track.id,
                                               path=track.reference)) from None


def weighing_course(given: str | Path | None, only: tuple[str, ...] = ()) -> str | None:
    """The course whose [points] weigh a grade: ``given`` (--course), else the course folder found from the working
    folder when its kata.toml has [points] (a course found counts in full, as one named does), else None; --only
    chooses the checks itself, so a found course's weights stand aside for it."""
    if given is not None:
        return str(given)
    if only:
        return None
    course = current_course()
    return str(course.root) if course is not None and course.has_points else None


def in_package(path: Path) -> bool:
    """Whether ``path`` is inside the installed ``checker`` package (its ``_data`` included)."""
    real = Path(os.path.realpath(path))
    return real == PACKAGE or PACKAGE in real.parents


IN_PACKAGE = Message(
    en="{what}: {path} is inside the installed kata package, where the next upgrade would lose it; work in a "
       "course folder instead (a folder with a kata.toml whose track files name their own mutants and katas "
       "folders: CONTRIBUTING.md, \"A course folder\") and give --track NAME",
    es="{what}: {path} está dentro del paquete kata instalado, donde la próxima actualización lo perdería; "
       "trabaja en una carpeta de curso (una carpeta con un kata.toml cuyos archivos de recorrido nombran sus propias "
       "carpetas de mutantes y katas: CONTRIBUTING.md, \"A course folder\") y da --track NOMBRE",
)


def refuse_package_write(path: Path, what: str) -> None:
    """A UsageProblem (exit 2) when ``path``, where ``what`` would be written, lies in the installed package."""
    if in_package(path):
        raise UsageProblem(IN_PACKAGE.render(resolve_lang(), what=what, path=path))
