"""`kata explore`: an interactive page of a loop's decision boundary and losses, beside the reference's."""

from __future__ import annotations

from pathlib import Path

import click

from checker.cli.common import (
    Options,
    UsageProblem,
    current_lang,
    pass_options,
    prepared_lab,
    read_loop_file,
    session_options,
)

TRACK_HELP = ("Train in this track's own setting (the file's data and model, the track's batch size and epochs) "
              "instead of the explorer's (default: the explorer's for a moons file, else the file's track's own).")


@click.command("explore", short_help="A page: the decision boundary and both losses, epoch by epoch.")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Where to write the page (default: beside PATH, loop.py -> loop.explore.html). A file there "
                   "that kata explore did not write is never replaced.")
@click.option("--track", "track", default=None, metavar="NAME", help=TRACK_HELP)
@session_options
@pass_options
def explore_cmd(options: Options, path, output, track):
    """Write a page that shows PATH's training epoch by epoch, beside the reference's.

    The page (one HTML file that works offline) shows the decision boundary over the training and
    validation points and both loss curves, with a slider and a play button, at several learning
    rates (10 among them). Without PATH: the current kata's file. Your loop runs in the sandbox, as in
    `kata run`. A file that cannot be loaded exits 2; a loop that raises at some learning rate gets a
    page where those learning rates show the reference alone, with your error.
    """
    from checker.base.term import echo
    from checker.learn.explorer import PRACTICE, default_output, explore
    from checker.learn.progress import track_for_file
    from checker.setting.tracks import DEFAULT

    session = None
    if path is None:
        session = options.session()
        kata = session.current()
        if kata.practice is not None:
            raise UsageProblem(PRACTICE.render(session.lang, kata=kata.slug))
        file = session.file_of(kata)
        if not file.exists():
            from checker.learn.messages import FILE_MISSING
            from checker.learn.session import shown_path

            raise UsageProblem(session.say(FILE_MISSING, path=shown_path(file)))
        path = str(file)
        chosen = track_for_file(track, None, options.workdir) if track else kata.setting
    else:
        chosen = track_for_file(track, path, options.workdir)
    from checker.setting.course import reference_text

    lang = session.lang if session is not None else current_lang(options.lang)
    mine = read_loop_file(path, lang)
    reference = (reference_text(chosen, "kata explore", lang), chosen.reference_path)
    out = Path(output) if output else default_output(Path(path))
    prepared_lab("cpu", chosen)
    code = explore(mine, reference, chosen, explorer=track is None and chosen.id == DEFAULT, out=out, lang=lang,
                   echo=echo)
    if code:
        raise SystemExit(code)
