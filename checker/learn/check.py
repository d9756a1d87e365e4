"""The one service behind `kata check` and `kata watch`: check the current kata's file, or any file, as a
``CheckRequest`` asks, and say what came of it (``CheckOutcome``). Each command presents the outcome its own
way (checker.cli.check and checker.learn.learning for `kata check`, checker.learn.watching for `kata watch`).

Practice katas (answers files, not loops) are not checked here: see ``learning.practice_verdicts``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.catalogue.katas import Kata
from checker.engine.checking import (
    FOUND_BY_DATA,
    PROTOCOL_HINT,
    grade_request,
    hold_other_track,
    track_by_data,
    track_hint,
    ungradable_report,
    with_track_probe,
)
from checker.engine.grading import Report
from checker.engine.request import CheckRequest
from checker.gradebook.book import Course, CourseFileError, follows_other_track, load_course
from checker.learn import messages as M
from checker.learn.progress import track_for_file
from checker.learn.session import Session, open_session, shown_path
from checker.setting.lab import prepared_lab
from checker.setting.tracks import Track

KATA_TRACK = Message(en="--track {track}: the current kata, {kata}, belongs to track {own!r}",
                     es="--track {track}: la kata actual, {kata}, es del recorrido {own!r}")
PRACTICE = Message(en="{kata} is a practice kata: its answers are checked by `kata check`, not as a loop",
                   es="{kata} es un kata de práctica: `kata check` comprueba sus respuestas, no un bucle")


@dataclass(frozen=True)
class CheckOutcome:
    """What checking one file gave: the report and what the commands do with it."""

    report: Report
    """The checks' report (exit_code 2: the file could not be graded)."""
    track: Track
    """The track the file was graded against."""
    path: Path | None
    """The file checked (None: a source given as text)."""
    kata: Kata | None = None
    """The kata whose file this is (the current one), else None: a kata's check is recorded in its progress."""
    hint: str | None = None
    """When the file seems to follow another track than the one guessed (no --track given; text format): which
    --track to use."""
    only: bool = False
    """Only some checks ran (--only): a pass does not solve the kata."""
    course: Course | None = None
    """--course: the course whose [points] chose the checks and weigh them (every format shows them)."""
    note: str | None = None
    """When the file was found to follow another track than the one guessed (its data's shapes): which one it
    was graded against; said before the report."""

    @property
    def weights(self) -> dict[str, float] | None:
        return dict(self.course.points) if self.course is not None else None

    @property
    def gradable(self) -> bool:
        return self.report.exit_code != 2

    @property
    def solved(self) -> bool:
        """Every check of the track ran and passed."""
        return self.gradable and self.report.passed and not self.only

    @property
    def records(self) -> bool:
        """Whether this check counts in the kata's progress (a kata's file that could be graded)."""
        return self.kata is not None and self.gradable

    def record(self, session: Session) -> bool:
        """Count this check in ``session``'s progress when it counts; True when it solved the kata just now."""
        return session.record_check(self.kata, self.solved) if self.records else False


def current_kata(request: CheckRequest, session: Session) -> tuple[Kata, Path]:
    """The current kata and its file, for a request that names no file; exit 2 when --track names another
    track or the file is missing."""
    kata = session.current()
    if request.track and request.track != kata.track:
        raise UsageProblem(KATA_TRACK.render(session.lang, track=request.track, kata=kata.slug, own=kata.track))
    path = session.file_of(kata)
    if not path.exists():
        raise UsageProblem(session.say(M.FILE_MISSING, path=shown_path(path)))
    return kata, path


def track_of(request: CheckRequest, kata: Kata | None, workdir: str | None) -> Track:
    """The track a request's file is graded against: the kata's, else --track, else the track of the kata whose
    file it is, else of its folder, else moons."""
    if kata is not None:
        return kata.setting
    return track_for_file(request.track, None if request.path is None else str(request.path), workdir)


def _lab(labs: dict | None, device: str, track: Track):
    """The prepared lab for ``device`` and ``track`` kept in ``labs`` (made and kept on first use); None without
    ``labs`` (grading makes its own)."""
    if labs is None:
        return None
    key = (device, track.id)
    if key not in labs:
        labs[key] = prepared_lab(device, track)
    return labs[key]


def _file_of(request: CheckRequest, session: Session | None, kata: Kata | None, workdir: str | None):
    """(session, kata, path, the request naming its file): the current kata's file when the request asks for it."""
    if not request.current_kata:
        return session, kata, Path(request.path) if request.path is not None else None, request
    session = session or open_session(workdir, request.lang)
    kata, path = current_kata(request, session)
    if kata.practice is not None:
        raise UsageProblem(PRACTICE.render(session.lang, kata=kata.slug))
    return session, kata, path, replace(request, path=str(path))


def _first_report(request: CheckRequest, request_file: CheckRequest, kata: Kata | None, track: Track,
                  labs: dict | None) -> Report:
    """The file graded against ``track``; for the formats graders read, a report saying why it cannot be."""
    report = None
    if kata is None and request.path is not None and request.format in ("gradescope", "junit"):
        # Gradescope and CI read a report even when the file cannot be graded (score 0, the reason given)
        report = ungradable_report(request.path)
    if report is None:
        report = grade_request(request_file, track, _lab(labs, request.device, track))
    return report


def _by_data(request: CheckRequest, request_file: CheckRequest, track: Track, report: Report, labs: dict | None,
             note: str | None = None):
    """(note, track, report): regraded against the track the file's data follows, when it is another; else
    ``note`` (what was to be said anyway), ``track`` and ``report`` as they are."""
    other = track_by_data(report, track)
    if other is None:
        return note, track, report
    # the file follows another track: graded against it, never judged by this one
    note = FOUND_BY_DATA.render(request.lang, other=other.id, track=track.id,
                                split=f"{other.data.n_train}/{other.data.n_val}")
    return note, other, grade_request(request_file, other, _lab(labs, request.device, other))


def _protocol_problem(request: CheckRequest, report: Report, track: Track) -> None:
    """A protocol error with a guessed track: exit 2 for text, else the hint added to the report's error."""
    # exit 2 rather than a verdict of the wrong track: what the file lacks first (most often the cause: a
    # function missing or misnamed), then which track it was graded against and how to name another (a
    # format a program reads still gets its report, both in the error)
    said = PROTOCOL_HINT.render(request.lang, track=track.id)
    if request.format == "text":
        raise UsageProblem(f"{report.error}\n{said}")
    report.error = f"{report.error}\n{said}"


def check(request: CheckRequest, *, session: Session | None = None, kata: Kata | None = None,
          workdir: str | None = None, labs: dict | None = None) -> CheckOutcome:
    """Check the file ``request`` names (without one: the current kata's, in ``session`` or the working folder
    ``workdir``) and return the outcome; nothing is printed or recorded here.

    ``kata``: the kata whose file ``request.path`` is (its track is used, its check may be recorded).
    ``labs``: prepared labs to reuse, by (device, track id), filled as they are made (`kata watch` keeps torch
    and the labs between saves). A file that cannot be read is a UsageProblem, except for the formats graders
    read (gradescope, junit), which get a report saying why.
    """
    session, kata, path, request_file = _file_of(request, session, kata, workdir)
    folder = str(session.workdir) if session is not None else workdir
    track = track_of(request_file, kata, folder)
    course, probed, request_file = _assignment(request, request_file, track)
    asked_only = bool(request_file.only)
    request_file, withheld = _without_reference(request_file, track)
    report = _first_report(request, request_file, kata, track, labs)
    guessed = kata is None and request.track is None
    note = withheld
    if course is not None:  # the course's track is the assignment's: another track's file is held, said first
        note = _held_if_other(report, track, request.lang, probed)
    elif guessed and report.error is None:
        note, track, report = _by_data(request, request_file, track, report, labs, note)
    if guessed and report.error_kind == "protocol":
        _protocol_problem(request, report, track)
    hint = track_hint(report, track, request.lang) if guessed and request.format == "text" else None
    if note is not None:
        hint = None
    return CheckOutcome(report=report, track=track, path=path, kata=kata, hint=hint, only=asked_only,
                        course=course, note=note)


STUDENTS_CHECKS = Message(
    en="{n} of the {total} checks of track {track} compare your loop with the course's reference, which stays with "
       "your instructor's grader (this is a students' copy of the course): they run when your work is graded, not here",
    es="{n} de las {total} comprobaciones del recorrido {track} comparan tu bucle con la referencia del curso, que "
       "guarda el evaluador de tu profesor (esta es una copia del curso para estudiantes): se ejecutan cuando se "
       "evalúa tu trabajo, no aquí",
)
STUDENTS_ONLY_REFERENCE = Message(
    en="--only: {ids} compare with the course's reference, which a students' copy of the course does not hold; "
       "your instructor's grader runs them",
    es="--only: {ids} comparan con la referencia del curso, que una copia del curso para estudiantes no tiene; las "
       "ejecuta el evaluador de tu profesor",
)


def _without_reference(request_file: CheckRequest, track: Track) -> tuple[CheckRequest, str | None]:
    """In a students' copy of a course (no reference there): the request with the checks that need no reference,
    and the note saying which ones run at the grader only; elsewhere the request as it is, and None."""
    from checker.setting.course import students_copy

    if track.reference.is_file() or students_copy() is None:
        return request_file, None
    from checker.checks import REGISTRY, ordered_ids

    asked = request_file.only
    if any(cid not in REGISTRY for cid in asked):  # an unknown id: said as --only says it anywhere
        return request_file, None
    every = ordered_ids(None, device=request_file.device, track=track)
    kept = [cid for cid in every if not REGISTRY[cid].reference and (not asked or cid in asked)]
    if not kept:
        raise UsageProblem(STUDENTS_ONLY_REFERENCE.render(request_file.lang, ids=", ".join(asked)))
    skipped = sum(REGISTRY[cid].reference for cid in every)
    note = STUDENTS_CHECKS.render(request_file.lang, n=skipped, total=len(every), track=track.id)
    return replace(request_file, only=tuple(kept)), note if not asked else None


def _assignment(request: CheckRequest, request_file: CheckRequest, track: Track):
    """(the course of --course, else None; whether the track probe was added; the request with the course's
    checks): an assignment is graded on its track whatever the weights count, data.lesson telling which track the
    file follows."""
    if request.course is None:
        return None, False, request_file
    course = course_of(request.course, track, request.lang)
    if request.only:
        raise UsageProblem(COURSE_AND_ONLY.render(request.lang))
    ids, probed = with_track_probe(course.check_ids, track)
    return course, probed, replace(request_file, only=tuple(ids))


def _held_if_other(report: Report, track: Track, lang: str, probed: bool) -> str | None:
    """The note when the file follows another track than the assignment's (the report then held for review)."""
    note = follows_other_track(report, track, lang) if report.error is None else None
    hold_other_track(report, note, probed)
    return note


COURSE_AND_ONLY = Message(
    en="--course and --only both choose the checks: list them in the course's [points]",
    es="--course y --only eligen ambos las comprobaciones: enuméralas en los [points] del curso",
)


def course_of(path: str, track: Track, lang: str) -> Course:
    """The course file or folder ``path`` (its [points], checked against ``track``); a bad one is exit 2."""
    from checker.checks import REGISTRY

    try:
        return load_course(Path(path), list(REGISTRY), track=track)
    except CourseFileError as exc:
        raise UsageProblem(f"--course: {exc}") from None

