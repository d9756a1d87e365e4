"""The instructor's commands: `kata grade` (a class folder into a gradebook) and `kata new` (scaffold a
mutant and its kata).

Only click code: each command reads its arguments and calls checker.author.instructing, which grades, scaffolds,
checks a draft and prints.
"""

from __future__ import annotations

from pathlib import Path

import click

from checker.cli.common import current_lang, lang_option, secret_option, track_option
from checker.cli.run import run_settings_of


def _ask(question: str) -> str | None:
    """The answer typed to ``question`` (on stderr), stripped; None at the end of input."""
    try:
        return click.prompt(question, err=True).strip()
    except click.Abort:
        return None


@click.command("grade", short_help="Grade a folder of submissions: grades, feedback, changes since last time.")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Folder for grades.csv, results.json, class.html and feedback/ (created if missing).")
@click.option("--course", "course_path", type=click.Path(path_type=Path), default=None,
              help="A course file (TOML), or a course folder (its kata.toml): the checks that count and their "
                   "points, what to read.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Submissions graded at the same time (one core each).")
@click.option("--timeout", type=click.FloatRange(min=0.5), default=None,
              help="Seconds one check may run on one submission (default: each check's own limit).")
@click.option("--only", multiple=True, metavar="CHECK_ID", help="Grade only this check (repeatable).")
@click.option("--force", is_flag=True,
              help="Grade again into an OUT that holds grades; the new grades are compared with them.")
@click.option("--update", is_flag=True,
              help="Grade DIRECTORY's submissions into an OUT that holds grades and keep every other row there "
                   "(regrade one student, or a late few).")
@click.option("--roster", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="The class list (one name per line, or a CSV with a 'name' column): each student without a "
                   "submission gets a row saying so.")
@click.option("--deadline", default=None, metavar="WHEN",
              help="ISO 8601 date and time (local unless it names a zone): each submission's time (its file's "
                   "modification time) and whether it is late go into grades.csv.")
@click.option("--base", default=None, metavar="FILE|KATA",
              help="The starter every submission began from (a file, or a kata's slug): similar.csv compares what "
                   "each file changed from it.")
@secret_option
@track_option
@lang_option
def grade_cmd(directory: Path, out_dir: Path, course_path: Path | None, workers: int, timeout: float | None,
              only: tuple[str, ...], force: bool, update: bool, roster: Path | None, deadline: str | None,
              base: str | None, secret: bytes | None, lang: str | None, track: str | None) -> None:
    """Grade every .py and .ipynb file in DIRECTORY, and each student's subfolder, into OUT.

    A subfolder is a student: the one .py or .ipynb directly in it is graded, under the
    subfolder's name (one with none or several is listed as ungradable). Each submission
    runs in its own sandboxed process with a time limit per check; one that hangs or crashes
    is recorded as such and the others are graded as usual. A file that cannot be read or
    compiled is listed as ungradable, with the reason.

    OUT gets grades.csv, results.json, feedback/<submission>.md (what failed, what was
    measured, what to read), class.html (pass rates per check, a row per student) and
    similar.csv (identical or near-identical pairs to look at; no grade changes), all written
    at the end, each file atomically and readable as the umask says. With --course, the
    course file's [points] say which checks count and what each is worth. Grading again into
    the same OUT (--force) writes changes.md: what changed since, and why, and whether each
    file changed. Grades are reproducible: each file's arguments derive from a grading secret
    and its code; without --secret (or $KATA_SECRET) one is made and kept in OUT/.secret, so a
    regrade into OUT repeats every unchanged file's grade. Exit status 0 once the gradebook is
    written, 2 for a bad argument. A course file (docs/grading.md):

    \b
        title = "Lab 4: the training loop"
        [points]                 # the checks that count, and their points
        "steps.fresh_grads" = 3
        "loss.falls" = 1
        [read]                   # optional: what to read when a check fails
        "steps.fresh_grads" = "Lesson 4, section 4"
    """
    from checker.author.instructing import grade_class
    from checker.cli.common import use_course
    from checker.setting.course import weighing_course

    use_course(course_path)
    # a course found from the working folder weighs the grades in full, as --course does
    found = weighing_course(course_path, only)
    course_path = Path(found) if found is not None else None

    from checker.gradebook.classbook import ClassOptions

    grade_class(directory, out_dir, course_path=course_path, workers=workers, timeout=timeout, only=only,
                force=force, lang=current_lang(lang), track=track, secret=secret,
                options=ClassOptions(update=update, roster=roster, deadline=deadline, base=base))


@click.command("new", short_help="Scaffold a new mutant and its kata; --check says what a draft lacks.")
@click.argument("mutant_id", metavar="ID")
@click.option("--check", "check_only", is_flag=True,
              help="Do not scaffold: say what kata (or mutant) ID still lacks before learners see it, "
                   "running its mutant through the checks it declares.")
@click.option("--slug", default=None, metavar="SLUG",
              help="The kata's slug, naming the symptom (asked for when not given).")
@click.option("--target", default=None, metavar="CODE",
              help="The code to break, as written in the reference, e.g. 'optimizer.zero_grad()'.")
@click.option("--killed-by", "killed_by", multiple=True, metavar="CHECK_ID",
              help="A check that must catch the mutant (repeatable), e.g. steps.fresh_grads.")
@click.option("--operator", default="delete_statement", show_default=True,
              help="How to break it (the mutant file lists every operator).")
@click.option("--function", default="train_epoch", show_default=True,
              help="The reference's function that holds the target.")
@click.option("--call", default=None, metavar="CALL",
              help="Only places inside this call, e.g. torch.optim.Adam (an argument target may then be "
                   "just the keyword's name).")
@click.option("--occurrence", type=click.IntRange(1), default=None,
              help="Of several places the target matches, the n-th in file order.")
@click.option("--arg", "op_args", multiple=True, metavar="NAME=VALUE",
              help="An argument of the operator (repeatable), e.g. --arg anchor='optimizer.step()'.")
@click.option("--number", type=click.IntRange(0, 999), default=None,
              help="The kata's number (default: the next multiple of 10).")
@click.option("--mutants-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_MUTANTS_DIR, else the checkout's mutants/.")
@click.option("--katas-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_KATAS_DIR, else the checkout's katas/.")
@track_option
@lang_option
def new_cmd(mutant_id: str, check_only: bool, slug: str | None, target: str | None, killed_by: tuple[str, ...],
            operator: str, function: str, call: str | None, occurrence: int | None, op_args: tuple[str, ...],
            number: int | None, mutants_dir: Path | None, katas_dir: Path | None, lang: str | None,
            track: str | None) -> None:
    """Scaffold a new mutant ID and its kata: mutants/ID.toml and katas/NNN-SLUG.toml.

    The mutant is applied to the reference before anything is written, so the target must be
    real code of FUNCTION. SLUG names the symptom (the learner's file is SLUG.py): it is asked
    for when --slug is not given. Both files explain every field in comments; fill in their TODO
    texts, then run `kata new --check SLUG`: it names every missing or failing piece, proves the
    checks catch the mutant, and exits 0 only once the kata is ready (until then it is a draft,
    hidden from `kata list` and `kata next`). Existing files are never overwritten.
    """
    from checker.author.instructing import check_draft, scaffold_kata
    from checker.setting.tracks import track_named

    chosen = track_named(track) if track else None
    if check_only:
        raise SystemExit(check_draft(mutant_id, mutants_dir, katas_dir, current_lang(lang), chosen,
                                     parse_flags=run_settings_of))
    scaffold_kata(mutant_id, slug=slug, target=target, killed_by=killed_by, operator=operator, function=function,
                  call=call, occurrence=occurrence, op_args=op_args, number=number, mutants_dir=mutants_dir,
                  katas_dir=katas_dir, track=chosen, ask=_ask)
