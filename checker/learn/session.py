"""A learner's session: the working folder, its progress, the catalogue, and what changes them.

The learner works in a folder of their own (``--dir``, else ``$KATA_DIR``, else the current
directory): `kata next` writes the kata's file there, and progress lives in ``.kata/progress.json``
(checker/learn/progress.py, docs/progress.md). `kata check` and `kata watch` record passes here, alike.

Every problem is a ``UsageProblem``: a clear message and exit status 2.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.markup import escape

from checker.base.errors import UsageProblem
from checker.base.i18n import Message, resolve_lang
from checker.catalogue.katas import Kata, KataFileError, UnknownKata, find_kata, load_katas, mutant_text, starter_source
from checker.learn.messages import (
    AFTER_PASS,
    AFTER_PASS_LAST,
    AFTER_TRACK_DONE,
    CATALOGUE_BROKEN,
    CATALOGUE_EMPTY,
    CURRENT_GONE,
    DID_YOU_MEAN,
    HEADER,
    HEADER_TRACK,
    NO_CURRENT,
    PRACTICE_AFTER,
    STARTER_BROKEN,
    UNKNOWN_KATA,
)
from checker.learn.progress import Progress, ProgressError, resolve_workdir
from checker.loopfile.notebook import starter_notebook


@dataclass
class Session:
    lang: str
    workdir: Path
    progress: Progress
    katas: list[Kata]

    def say(self, message: Message, **params: object) -> str:
        return message.render(self.lang, **params)

    def tell(self, out, message: Message, style: str = "", **params: object) -> None:
        """Print ``message`` in this session's language (escaped), in ``style`` when given."""
        text = escape(self.say(message, **params))
        out.print(f"[{style}]{text}[/]" if style else text)

    def position(self, kata: Kata) -> int:
        return self.katas.index(kata) + 1

    def kata(self, name: str) -> Kata:
        try:
            return find_kata(self.katas, name)
        except UnknownKata:
            close = difflib.get_close_matches(name, [k.slug for k in self.katas], n=3)
            hint = self.say(DID_YOU_MEAN, names=", ".join(close)) if close else ""
            raise UsageProblem(self.say(UNKNOWN_KATA, name=name, close=hint)) from None

    def current(self) -> Kata:
        """The current kata; exit 2 with a clear message when there is none."""
        slug = self.progress.current
        if slug is None or self.progress.record(slug) is None:
            raise UsageProblem(self.say(NO_CURRENT, dir=shown_path(self.workdir)))
        try:
            return find_kata(self.katas, slug)
        except UnknownKata:
            raise UsageProblem(self.say(CURRENT_GONE, name=slug)) from None

    def file_of(self, kata: Kata) -> Path:
        rec = self.progress.record(kata.slug)
        return self.workdir / (rec.file if rec else kata.filename)

    def save(self) -> None:
        try:
            self.progress.save()
        except ProgressError as exc:
            raise UsageProblem(exc.render(self.lang)) from None

    def title(self, kata: Kata) -> str:
        return kata.title.render(self.lang)

    def header(self, kata: Kata) -> str:
        mine = [k for k in self.katas if k.track == kata.track]  # counted within its track, wherever it is listed
        where = dict(pos=mine.index(kata) + 1, total=len(mine), title=self.title(kata))
        if kata.track == "moons":
            return self.say(HEADER, **where)
        return self.say(HEADER_TRACK, track=kata.track, **where)

    def unsolved(self) -> list[Kata]:
        return [k for k in self.katas if not self.progress.is_solved(k.slug)]

    def after_pass(self, kata: Kata) -> tuple[Message, dict[str, object]]:
        """What to say once ``kata`` passes (in a students' copy of a course: no `kata solution` to offer)."""
        message, params = self._after_pass(kata)
        if kata.practice is None and _students_copy() is not None:
            return (STUDENTS_AFTER if params.get("left") else STUDENTS_AFTER_LAST), {"left": params.get("left", 0)}
        return message, params

    def _after_pass(self, kata: Kata) -> tuple[Message, dict[str, object]]:
        """What to say once ``kata`` passes, counting what is left as its header counts: within its track."""
        left = self.unsolved()
        mine = [k for k in left if k.track == kata.track]
        if mine:
            return (PRACTICE_AFTER if kata.practice is not None else AFTER_PASS), {"left": len(mine)}
        if left:
            return AFTER_TRACK_DONE, {"left": len(left), "track": kata.track}
        return AFTER_PASS_LAST, {}

    def status(self, kata: Kata) -> str:
        """'solved', 'current' or 'pending'."""
        if self.progress.is_solved(kata.slug):
            return "solved"
        if self.progress.current == kata.slug:
            return "current"
        return "pending"

    def dir_flag(self) -> str:
        """`--dir X` to add to suggested commands when the working folder is not the current one."""
        try:
            if self.workdir.resolve() == Path.cwd().resolve():
                return ""
        except OSError:
            pass
        return f" --dir {shlex.quote(str(self.workdir))}"

    def run_command(self, kata: Kata) -> str:
        if kata.practice is not None:
            return " ; ".join("kata " + " ".join(shlex.quote(w) for w in run) for run in kata.practice.runs)
        words = (shown_path(self.file_of(kata)), *kata.try_args)
        return "kata run " + " ".join(shlex.quote(w) for w in words)

    def check_command(self) -> str:
        return "kata check" + self.dir_flag()

    def record_check(self, kata: Kata, passed: bool) -> bool:
        """Count a check of ``kata`` and save; True when this check solved it for the first time."""
        newly = self.progress.checked(kata.slug, passed)
        self.save()
        return newly


def open_session(workdir: str | None, lang: str | None, *, need_katas: bool = True,
                 track: str | None = None) -> Session:
    """The working folder, its progress and the catalogue; any problem is a UsageProblem (exit 2).

    With ``need_katas`` False (watching any file), a missing or broken catalogue is not an error. Without
    ``track``, the course folder's default track (its kata.toml's ``track``) where it names one.
    """
    lang = resolve_lang(lang)
    try:
        folder = resolve_workdir(workdir)
        progress = Progress.load(folder)
    except ProgressError as exc:
        raise UsageProblem(exc.render(lang)) from None
    katas: list[Kata] = []
    if not track:  # a course folder's default track (kata.toml), else every track's katas
        from checker.setting.course import CourseError, find_course

        try:
            course = find_course()
        except CourseError as exc:
            raise UsageProblem(str(exc)) from None
        track = course.track if course is not None else None
    try:
        if track:
            from checker.setting.tracks import track_named

            track = track_named(track).id  # an unknown track: exit 2 naming the known ones
        # a students' copy holds the katas that were ready when it was made, and no mutant to prove them again
        katas = load_katas(track=track, drafts=_students_copy() is not None)
    except KataFileError as exc:
        if need_katas:
            raise UsageProblem(CATALOGUE_BROKEN.render(lang, error=exc)) from None
    if not katas and need_katas:
        from checker.catalogue.katas import resolve_katas_dir
        from checker.setting.tracks import get_track

        where = resolve_katas_dir(track=get_track(track) if track else None)
        raise UsageProblem(CATALOGUE_EMPTY.render(lang, dir=where))
    return Session(lang, folder, progress, katas)


def _students_copy():
    """The course when it is a students' copy (``checker.setting.course.students_copy``), else None."""
    from checker.setting.course import students_copy

    return students_copy()


def shown_path(path: Path) -> str:
    """``path`` relative to the current directory when it lies below it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


# ---------------------------------------------------------------------------------------------
# Starters: what `kata next` and `kata reset` write

def _authored(session: Session, kata: Kata, make: Callable[[Kata], str]) -> str:
    copy = _students_copy()
    if copy is not None:  # no reference, no mutant here: the starter written when the copy was made
        return _kept_starter(session, copy, kata, make is mutant_text)
    try:
        return make(kata)
    except Exception as exc:  # an authoring problem (unknown mutant, target not found): say which
        raise UsageProblem(session.say(STARTER_BROKEN, kata=kata.slug, mutant=kata.mutant,
                                       error=f"{type(exc).__name__}: {exc}")) from None


STUDENTS_AFTER = Message(
    en="Next: `kata next` opens the next kata ({left} left). The checks that compare with the course's reference "
       "run when your instructor grades your work.",
    es="Después: `kata next` abre la siguiente kata (quedan {left}). Las comprobaciones que comparan con la "
       "referencia del curso se ejecutan cuando tu profesor evalúa tu trabajo.",
)
STUDENTS_AFTER_LAST = Message(
    en="That was the last unsolved kata! The checks that compare with the course's reference run when your "
       "instructor grades your work.",
    es="¡Era la última kata sin resolver! Las comprobaciones que comparan con la referencia del curso se ejecutan "
       "cuando tu profesor evalúa tu trabajo.",
)
STUDENTS_STARTER = Message(
    en="{path}: a students' copy of the course keeps each kata's starter there, and this one is missing; ask your "
       "instructor for a new copy (`kata autograder students`)",
    es="{path}: una copia del curso para estudiantes guarda ahí el archivo inicial de cada kata, y este falta; pide "
       "a tu profesor una copia nueva (`kata autograder students`)",
)
STUDENTS_REFERENCE = Message(
    en="{kata}: the course's reference stays with your instructor (this is a students' copy), so there is no "
       "solution to show here; `kata check` says whether your fix passes",
    es="{kata}: la referencia del curso la guarda tu profesor (esta es una copia para estudiantes), así que aquí no "
       "hay solución que mostrar; `kata check` dice si tu arreglo pasa",
)


def _kept_starter(session: Session, copy, kata: Kata, commented: bool) -> str:
    """The starter a students' copy keeps for ``kata``; the commented mutant (``commented``) is the reference's, so
    it is refused with one line."""
    if commented:
        raise UsageProblem(session.say(STUDENTS_REFERENCE, kata=kata.slug))
    path = copy.starter(kata.track, kata.slug)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise UsageProblem(session.say(STUDENTS_STARTER, path=path)) from None


def mutant_of(session: Session, kata: Kata) -> str:
    """The reference with the kata's mutant applied, comments and all."""
    return _authored(session, kata, mutant_text)


def _notebook(kata: Kata, source: str, lang: str) -> str:
    return starter_notebook(kata, lang, source)


RENDERERS: dict[str, Callable[[Kata, str, str], str]] = {
    ".py": lambda _kata, source, _lang: source,
    ".ipynb": _notebook,
}
"""How a starter is written for each file suffix: ``render(kata, python_source, lang) -> file text``.
Another format (a notebook) registers its suffix here; `kata next`, `check` and `reset` follow it."""


def starter_text(session: Session, kata: Kata, filename: str | None = None) -> str:
    """The starter as it is written to ``filename`` (by default the kata's own file name)."""
    if kata.practice is not None:
        from checker.learn.practice import answers_template

        return answers_template(kata, session.lang)
    suffix = Path(filename or kata.filename).suffix
    render = RENDERERS.get(suffix, RENDERERS[".py"])
    return render(kata, _authored(session, kata, starter_source), session.lang)


def write_starter(path: Path, text: str) -> str:
    """Write ``text`` to ``path`` unless a different file is there: 'written', 'same' or 'kept'."""
    if path.exists():
        try:
            existing = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return "kept"
        return "same" if existing == text else "kept"
    path.write_text(text, encoding="utf-8")
    return "written"


def open_kata(session: Session, kata: Kata, *, filename: str | None = None) -> tuple[Path, str]:
    """Make ``kata`` current and put its starter in the working folder; (path, write state).

    ``filename`` (default the kata's own) picks the format through its suffix (see RENDERERS).
    """
    name = filename or kata.filename
    text = starter_text(session, kata, name)
    path = session.workdir / name
    try:
        state = write_starter(path, text)
    except OSError as exc:
        raise UsageProblem(f"{path}: {exc.strerror or exc}") from None
    session.progress.start(kata.slug, name, text, kata.track)
    session.save()
    remember_course(session, kata)
    return path, state


def remember_course(session: Session, kata: Kata) -> None:
    """Record in the working folder the course (where one is found) and the track of ``kata``, so that every later
    command there finds them in any shell, with nothing set (``checker.setting.course.record_course``)."""
    from checker.setting.course import CourseError, find_course, record_course

    try:
        course = find_course()
    except CourseError:
        course = None
    record_course(session.workdir, course, kata.track)


def place_data(session: Session, kata: Kata) -> tuple[Path, str] | None:
    """Where ``kata``'s track takes its data from a course's file (``[data] file``): a copy of it in the working
    folder, beside the kata's file, so the learner's ``make_data`` reads it as ``Path(__file__).with_name(NAME)``;
    (path, 'written', 'same' or 'kept': a different file of that name is never overwritten), else None."""
    from checker.setting.tracks import TrackError, get_track, shared_files

    if kata.practice is not None:  # answers, not a loop: no make_data to feed
        return None
    try:
        files = shared_files(get_track(kata.track))
    except TrackError as exc:
        raise UsageProblem(str(exc)) from None
    if not files:
        return None
    source = Path(files[0])
    path = session.workdir / source.name
    try:
        data = source.read_bytes()
        if path.exists() or path.is_symlink():
            try:
                return path, "same" if path.is_file() and path.read_bytes() == data else "kept"
            except OSError:
                return path, "kept"
        path.write_bytes(data)
    except OSError as exc:
        raise UsageProblem(f"{path}: {exc.strerror or exc}") from None
    return path, "written"


def choose_next(session: Session, skip: bool) -> tuple[Kata | None, bool]:
    """The kata `kata next` opens, and whether it is the unsolved current one (the learner stays)."""
    progress, katas = session.progress, session.katas
    slugs = [k.slug for k in katas]
    current = progress.current if progress.current in slugs else None
    if current is not None and not progress.is_solved(current) and not skip:
        return katas[slugs.index(current)], True
    start = slugs.index(current) + 1 if current is not None else 0
    for kata in katas[start:] + katas[:start]:
        if kata.slug != current and not progress.is_solved(kata.slug):
            return kata, False
    if current is not None and not progress.is_solved(current):
        return katas[slugs.index(current)], True
    return None, False


def backup_path(path: Path) -> Path:
    """``<file>.bak-YYYYmmdd-HHMMSS`` beside ``path``, never one that exists already."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate
