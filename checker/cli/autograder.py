"""`kata autograder gradescope|github|docker`: kata packaged for the graders instructors use; `kata autograder
students`: a copy of a course for its students, without its answers.

Only click code: each command reads its options and calls checker.author.packaging, which builds the artefact.
"""

from __future__ import annotations

from pathlib import Path

import click

from checker.cli.common import current_lang, lang_option, secret_option, stored_lang_option, track_option, use_course


def _common(fn):
    """The options every artefact takes."""
    options = [
        click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path),
                     help="Folder to write into (created if missing)."),
        click.option("--course", "course", type=click.Path(path_type=Path), default=None,
                     help="The course folder (the one holding kata.toml): bundled, and kata runs from inside it."),
        click.option("--kata", "kata", default=None, metavar="REQUIREMENT",
                     help="What pip installs as kata: a requirement (e.g. 'kata @ git+https://HOST/YOU/kata') or a "
                          "wheel file (default: a copy of this kata's source, bundled)."),
        click.option("--only", multiple=True, metavar="CHECK_ID", help="Grade only this check (repeatable)."),
        click.option("--force", is_flag=True, help="Replace what an earlier run wrote there."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return track_option(lang_option(fn))


def _options(course, kata, track, only, lang, file="loop.py", **more):
    """The artefact's options. Its language: --lang, else the course's (kata.toml's ``language``: the graders speak
    the course's language, whatever this machine's locale), else this machine's."""
    from checker.author.packaging import Options, course_folder, validate

    lang = lang or click.get_current_context().meta.get("kata.lang")
    if lang is None and course is not None:
        found = course_folder(course, current_lang(None))
        lang = found.language if found is not None else None
    options = Options(kata=kata, course=course, track=track, only=tuple(only), lang=current_lang(lang), file=file,
                      **more)
    validate(options)
    return options


@click.group("autograder", short_help="Package kata for Gradescope, GitHub Actions or Docker.")
@stored_lang_option
def autograder_group() -> None:
    """Package kata for the graders instructors use: a Gradescope autograder zip, a GitHub Actions workflow,
    or a Docker image that grades a class folder with no network (docs/autograding.md)."""


@autograder_group.command("gradescope")
@_common
@secret_option
def gradescope_cmd(out_dir: Path, course: Path | None, kata: str | None, only: tuple[str, ...], force: bool,
                   track: str | None, lang: str | None, secret: bytes | None) -> None:
    """Write OUT/autograder.zip for Gradescope's "Configure autograder".

    The zip holds setup.sh (torch's CPU build, then kata), run_autograder (`kata check` of the one
    submitted file, into results/results.json), kata's source, the course folder (--course) and
    the grading secret (--secret or $KATA_SECRET; keep the zip from the students).
    """
    from checker.author.packaging import build_gradescope

    path = build_gradescope(out_dir, _options(course, kata, track, only, lang), secret=secret, force=force)
    click.echo(str(path))


@autograder_group.command("github")
@_common
@click.option("--file", "file", default="loop.py", show_default=True, metavar="NAME",
              help="The learner's file in the repository.")
@click.option("--course-repo", "course_repo", default=None, metavar="OWNER/NAME",
              help="The private repository holding the course folder (with --course): the workflow fetches it "
                   "with the token in the Actions secret KATA_COURSE_TOKEN; the course never goes in OUT.")
@click.option("--course-ref", "course_ref", default=None, metavar="REF",
              help="The branch or tag of --course-repo to fetch (default: its default branch).")
def github_cmd(out_dir: Path, course: Path | None, kata: str | None, only: tuple[str, ...], force: bool,
               track: str | None, lang: str | None, file: str, course_repo: str | None,
               course_ref: str | None) -> None:
    """Write OUT/.github/workflows/kata.yml: GitHub Actions (and Classroom) checks the learner's file on each push.

    OUT is the assignment's template repository: what every student gets, so the course (its
    reference and mutants) never goes in it. With --course, the workflow fetches the course from
    the private repository --course-repo with a token in the Actions secret KATA_COURSE_TOKEN,
    which students never see. The grading secret is an Actions secret named KATA_SECRET, never
    in the file.
    """
    from checker.author.packaging import build_github

    options = _options(course, kata, track, only, lang, file, course_repo=course_repo, course_ref=course_ref)
    for path in build_github(out_dir, options, force=force):
        click.echo(str(path))


@autograder_group.command("docker")
@_common
def docker_cmd(out_dir: Path, course: Path | None, kata: str | None, only: tuple[str, ...], force: bool,
               track: str | None, lang: str | None) -> None:
    """Write OUT/Dockerfile: an image that grades the class folder mounted at /class into /gradebook.

    Run it with no network, as its first lines say (docker run --network none ...). --course also
    takes a course file of points, as `kata grade` does.
    """
    from checker.author.packaging import build_docker

    for path in build_docker(out_dir, _options(course, kata, track, only, lang), force=force):
        click.echo(str(path))


@autograder_group.command("students")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="A new (or empty) folder for the students' copy.")
@click.option("--course", "course", type=click.Path(path_type=Path), default=None,
              help="The course folder (the one holding kata.toml) to copy for the students.")
@lang_option
def students_cmd(out_dir: Path, course: Path | None, lang: str | None) -> None:
    """Write OUT: the course as its students get it, without its reference and mutants.

    OUT holds the course's kata.toml (no points), its track files and data, its katas, and
    each kata's starter. A student runs `kata next` and `kata check` inside it (or with
    KATA_COURSE naming it); the checks that compare with the reference run at the grader.
    """
    from checker.author.packaging import build_students

    lang = lang or click.get_current_context().meta.get("kata.lang")
    use_course(course)  # its tracks known wherever the command runs
    for path in build_students(course, out_dir, lang=current_lang(lang)):
        click.echo(str(path))
