"""The learner's commands: `kata next / show / hint / list / reset / solution / watch / read`.

Only click code: each command reads its arguments and calls the package (checker.learn.session for the
working folder and progress, checker.learn.learning for what is printed, checker.learn.watching for `watch`).
``--lang`` and ``--dir`` are declared once, in checker.cli.common.session_options.
"""

from __future__ import annotations

from pathlib import Path

import click

from checker.cli.common import (
    Options,
    UsageProblem,
    current_lang,
    pass_options,
    secret_option,
    session_options,
    track_option,
)
from checker.cli.run import run_settings_of
from checker.learn import messages as M


@click.command("next", short_help="Open the next kata: its starter file and story.")
@click.argument("kata", required=False)
@click.option("--skip", is_flag=True, help="Move on even if the current kata is not solved yet.")
@click.option("--notebook", is_flag=True, help="Write the starter as a Jupyter notebook (<kata>.ipynb).")
@click.option("--json", "as_json", is_flag=True, help='Print {"kata", "path", "title"} as JSON.')
@click.option("--drafts", is_flag=True,
              help="Also show draft katas (texts incomplete or mutant unproven), as KATA_DRAFTS=1 does.")
@track_option
@session_options
@pass_options
def next_cmd(options: Options, kata, skip, notebook, as_json, drafts, track):
    """Open the next unsolved kata: write its starter file and tell its story.

    With KATA (a name or number from `kata list`), open that kata instead; with --track, the next
    kata of that track (`kata tracks` lists them). A file already in your folder that differs from
    the starter is never overwritten.
    """
    from checker.catalogue.drafts import drafts_shown
    from checker.learn.learning import open_next

    with drafts_shown(drafts):
        open_next(options.session(track=track), kata, skip=skip, notebook=notebook, as_json=as_json)


@click.command("hint", short_help="Reveal the current kata's next hint.")
@session_options
@pass_options
def hint_cmd(options: Options):
    """Reveal the current kata's next hint (from vague to precise); hints are remembered."""
    from checker.learn.learning import reveal_hint

    reveal_hint(options.session())


@click.command("show", short_help="Repeat the current kata's story and hints.")
@click.argument("kata", required=False)
@session_options
@pass_options
def show_cmd(options: Options, kata):
    """Repeat the current kata's story, the hints revealed so far and what to run."""
    from checker.learn.learning import show

    session = options.session()
    show(session, session.kata(kata) if kata is not None else session.current())


@click.command("list", short_help="Every kata with its status; your progress.")
@click.option("--json", "as_json", is_flag=True, help='Print [{"kata", "title", "status"}] as JSON.')
@click.option("--drafts", is_flag=True,
              help="Also show draft katas (texts incomplete or mutant unproven), as KATA_DRAFTS=1 does.")
@track_option
@session_options
@pass_options
def list_cmd(options: Options, as_json, drafts, track):
    """Every kata in order, grouped by track, with its status (solved, current, pending) and your progress.

    With --track, only that track's katas.
    """
    from checker.catalogue.drafts import drafts_shown
    from checker.learn.learning import list_katas

    with drafts_shown(drafts):
        list_katas(options.session(track=track), as_json=as_json)


def confirm(question: str, lang: str) -> bool:
    """Ask a yes/no question (y/yes, and s/si/sí in Spanish); no by default or at end of input."""
    try:
        answer = click.prompt(f"{question} {M.YES_NO.render(lang)}", default="", show_default=False,
                              prompt_suffix=" ")
    except click.Abort:
        click.echo("")
        return False
    return answer.strip().lower() in ("y", "yes", "s", "si", "sí")


@click.command("reset", short_help="Restore the current kata's starter file.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before restoring the starter.")
@session_options
@pass_options
def reset_cmd(options: Options, yes):
    """Restore the current kata's starter file (your version is kept as a backup)."""
    from checker.learn.learning import reset

    if not reset(options.session(), confirm=None if yes else confirm):
        raise SystemExit(1)


@click.command("solution", short_help="The reference's fix, once a kata is solved.")
@click.argument("kata", required=False)
@session_options
@pass_options
def solution_cmd(options: Options, kata):
    """Once a kata is solved: the reference's version of the part that was broken, and what to read."""
    from checker.learn.learning import show_solution
    from checker.learn.messages import SOLUTION_LOCKED

    session = options.session()
    chosen = session.kata(kata) if kata is not None else session.current()
    if not session.progress.is_solved(chosen.slug):
        raise UsageProblem(session.say(SOLUTION_LOCKED, kata=chosen.slug))
    show_solution(session, chosen)


@click.command("watch", short_help="Re-check a loop file on every save.")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--only", multiple=True, metavar="CHECK_ID", help="Run only this check (repeatable); a pass with "
              "--only does not solve the kata.")
@click.option("--timeout", type=click.FloatRange(min=0.1), envvar="KATA_CHECK_TIMEOUT", default=None,
              metavar="SECONDS", help="Most seconds any one check may run (default: each check's own limit; "
              "env KATA_CHECK_TIMEOUT).")
@click.option("-v", "--verbose", is_flag=True, help="Also show what passing checks measured.")
@click.option("--stay", is_flag=True, help="Stay on a solved kata instead of moving on to the next one.")
@click.option("--max-checks", type=click.IntRange(0), default=None,
              help="Stop after this many re-checks (for scripts and tests).")
@secret_option
@track_option
@session_options
@pass_options
def watch_cmd(options: Options, path, device, only, timeout, verbose, stay, max_checks, secret, track):
    """Re-check a loop file every time you save it (default: the current kata's file).

    Each save is checked as `kata check` checks it (the same --only, --timeout, --secret and
    --track). Once the current kata passes, its next kata is opened and watched (--stay stays).
    torch stays imported in this process, so a re-check after a save starts at once.
    """
    from checker.engine.request import CheckRequest
    from checker.learn.learning import file_is_kata
    from checker.learn.watching import watch

    session = options.session(need_katas=path is None)
    request = CheckRequest(track=track, device=device, lang=session.lang, only=only, timeout=timeout, secret=secret,
                           verbose=verbose)
    if path is None:
        kata = session.current()
        target = session.file_of(kata)
    else:
        target = Path(path)
        kata = file_is_kata(session, target)  # watching the current kata's file records a pass
    watch(session, target, kata, request, max_checks=max_checks, stay=stay, settings_of=run_settings_of)


@click.command("read", short_help="Read the guide: what the katas teach, section by section.")
@click.argument("section", required=False)
@session_options
@pass_options
def read_cmd(options: Options, section):
    """Read a section of kata's guide in the terminal; without SECTION, list the sections.

    SECTION is an id or a number from the list (`kata read step`, `kata read 5`).
    """
    from checker.learn.learning import read_guide

    read_guide(section, current_lang(options.lang))


COMMANDS = (next_cmd, show_cmd, hint_cmd, list_cmd, reset_cmd, solution_cmd, watch_cmd, read_cmd)


def register(group: click.Group) -> None:
    """Add every learner command to the `kata` group."""
    for command in COMMANDS:
        group.add_command(command)
