"""The stages of `kata grade` apart from printing: the class folder found, OUT checked, the grades kept from the
previous run (``--update``), the roster's missing students, the deadline's late ones, the base the similarity is
measured from, and the LMS exports. ``checker.author.instructing.grade_class`` calls them in turn; each bad
argument is a ``UsageProblem`` (exit 2) naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checker.base.errors import LoopFileError, UsageProblem
from checker.base.i18n import Message
from checker.engine.grading import Report
from checker.gradebook.book import (
    Course,
    Extras,
    Found,
    existing_outputs,
    find_class,
    load_previous,
    points_of,
    report_from_entry,
    submission_name,
)
from checker.gradebook.roster import (
    MISSING,
    Row,
    Student,
    canvas_csv,
    late_times,
    match,
    moodle_csv,
    parse_deadline,
    read_roster,
)


@dataclass(frozen=True)
class ClassOptions:
    """The options of `kata grade` that shape the gradebook beyond the grades themselves."""

    update: bool = False
    """--update: grade the folder's submissions into OUT and keep every other row OUT already holds."""
    roster: Path | None = None
    """--roster: the class list; each student without a submission gets a row saying so."""
    deadline: str | None = None
    """--deadline: ISO 8601; each submission's time and whether it is late go into grades.csv."""
    base: str | None = None
    """--base: a starter file (or a kata's slug: its starter) that similarity is measured from."""


NO_FOLDER = Message(en="{path}: no such folder", es="{path}: no existe esa carpeta")
A_FILE = Message(en="{path} is a file; give the folder that holds the submissions",
                 es="{path} es un archivo; da la carpeta que contiene las entregas")
NOTHING = Message(en="{path} holds no .py or .ipynb file to grade, and no student's subfolder",
                  es="{path} no contiene ningún archivo .py o .ipynb que evaluar, ni la subcarpeta de ningún "
                     "estudiante")
UNREADABLE_CLASS = Message(en="{path}: cannot read the folder ({why})",
                           es="{path}: no se puede leer la carpeta ({why})")
OUT_FILE = Message(en="-o {path}: that is a file, not a folder", es="-o {path}: es un archivo, no una carpeta")
CLASH = Message(
    en="{files} already exist(s); use --force to grade again (the new grades are compared with these, in "
       "changes.md), --update to grade these submissions and keep the others, or choose another -o folder",
    es="{files} ya existe(n); usa --force para evaluar de nuevo (las notas nuevas se comparan con estas, en "
       "changes.md), --update para evaluar estas entregas y conservar las demás, o elige otra carpeta -o")
NOTHING_KEPT = Message(
    en="--update: {out} holds no results.json from an earlier grading to keep rows of; grade the whole class first",
    es="--update: {out} no contiene un results.json de una evaluación anterior cuyas filas conservar; evalúa "
       "primero la clase entera")


def open_class(directory: Path, out_dir: Path, lang: str) -> list[Found]:
    """The class folder's submissions (``find_class``), OUT left out; exit 2 when there is nothing to grade."""
    if not directory.exists():
        raise UsageProblem(NO_FOLDER.render(lang, path=directory))
    if not directory.is_dir():
        raise UsageProblem(A_FILE.render(lang, path=directory))
    try:
        found = find_class(directory, lang, exclude=(out_dir,))
    except OSError as exc:
        raise UsageProblem(UNREADABLE_CLASS.render(lang, path=directory, why=exc.strerror or exc)) from None
    if not found:
        raise UsageProblem(NOTHING.render(lang, path=directory))
    return found


def check_out(out_dir: Path, force: bool, options: ClassOptions, lang: str) -> list[dict] | None:
    """OUT can take this grading: the previous run's results (None: none), or exit 2 saying why not; the roster and
    the deadline are checked here too, before anything is graded."""
    if options.roster is not None:
        read_roster(options.roster, lang)
    if options.deadline is not None:
        parse_deadline(options.deadline, lang)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageProblem(OUT_FILE.render(lang, path=out_dir))
    clash = existing_outputs(out_dir) if out_dir.is_dir() else []
    if clash and not (force or options.update):
        raise UsageProblem(CLASH.render(lang, files=", ".join(map(str, clash))))
    previous = load_previous(out_dir) if out_dir.is_dir() else None
    if options.update and previous is None:
        raise UsageProblem(NOTHING_KEPT.render(lang, out=out_dir))
    return previous


def kept_reports(previous: Sequence[dict] | None, found: Sequence[Found], names: dict[str, str],
                 hashes: dict[str, str]) -> list[Report]:
    """``--update``: each previous row whose submission is not graded now, as it was (its name and hash kept in
    ``names`` and ``hashes``)."""
    now = {f.name for f in found}
    taken = {str(f.path) for f in found}
    kept = []
    for entry in previous or []:
        if entry["submission"] in now or (entry.get("error") or {}).get("kind") == "missing":
            continue  # graded now; or a roster's row, which the roster says again
        report = report_from_entry(entry)
        if report.file in taken:  # the same file under another name now: keep the row apart
            report.file = f"{report.file}#{entry['submission']}"
        names[report.file] = entry["submission"]
        if entry.get("sha256"):
            hashes[report.file] = entry["sha256"]
        kept.append(report)
    return kept


@dataclass
class Roll:
    """The roster against the class: who handed in what, and who did not."""

    owner: dict[str, Student] = field(default_factory=dict)
    """Submission name -> its student."""
    missing: list[Report] = field(default_factory=list)
    """A row per student with no submission."""


def call_roll(roster: Path | None, submissions: Sequence[str], names: dict[str, str], lang: str) -> Roll:
    """``--roster``: match it with the submissions; each student with none gets an ungradable row that says so."""
    if roster is None:
        return Roll()
    owner, absent = match(read_roster(roster, lang), submissions)
    missing = []
    for student in absent:
        file = f"(roster)/{student.name}"
        names[file] = student.name
        missing.append(Report(file=file, error_kind="missing", error=MISSING.render(lang, name=student.name)))
    return Roll(owner, missing)


def base_source(base: str | None, track, lang: str) -> str | None:
    """``--base``: a starter file's code, or (a kata's slug) that kata's starter; exit 2 when it is neither."""
    if base is None:
        return None
    from checker.loopfile.loading import read_source

    if Path(base).exists():
        try:
            return read_source(base)[0]
        except LoopFileError as exc:
            raise UsageProblem(f"--base: {exc.render(lang)}") from None
    from checker.catalogue.katas import KataFileError, find_kata, load_katas, starter_source

    try:
        return starter_source(find_kata(load_katas(track=track.id), base))
    except (KataFileError, LookupError, ValueError) as exc:
        raise UsageProblem(BAD_BASE.render(lang, value=base, why=exc)) from None


BAD_BASE = Message(en="--base {value!r}: neither a file nor a kata's slug ({why})",
                   es="--base {value!r}: no es un archivo ni el slug de una kata ({why})")


def extras(reports: Sequence[Report], course: Course, names: dict[str, str], options: ClassOptions, roll: Roll,
           paths: dict[str, Path], base: str | None, lang: str) -> Extras:
    """What the gradebook adds to the grades: late times, the base of the similarity, the LMS exports."""
    times = late_times(paths, parse_deadline(options.deadline, lang)) if options.deadline else None
    rows = []
    for report in reports:
        name = submission_name(report, names)
        student = roll.owner.get(name)
        if report.error_kind == "missing":
            rows.append(Row(name, student or Student(name), None, report.error or ""))
            continue
        points = points_of(report, course)
        feedback = report.error or f"{points:g}/{course.max_points:g}"
        if times and times.get(name, ("", False))[1]:
            feedback += f" (late: {times[name][0]})"
        rows.append(Row(student.name if student else Path(name).stem, student, points, feedback))
    title = course.title or "kata"
    return Extras(times=times, base=base, exports={"canvas.csv": canvas_csv(rows, title, course.max_points),
                                                   "moodle.csv": moodle_csv(rows)})
