"""`kata check PATH`: grade a loop file with the behavioural checks."""

from __future__ import annotations

from dataclasses import replace

import click

from checker.cli.common import (
    current_lang,
    current_workdir,
    secret_option,
    session_options,
    stored_lang_option,
    track_option,
    use_course,
)
from checker.cli.run import run_settings_of
from checker.engine.checking import FORMATS, emit_report
from checker.engine.request import CheckRequest


@click.command("check")
@click.argument("path", required=False, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--only", multiple=True, metavar="CHECK_ID", help="Run only this check (repeatable).")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("-v", "--verbose", is_flag=True, help="Also show what passing checks measured.")
@click.option("--timeout", type=click.FloatRange(min=0.1), envvar="KATA_CHECK_TIMEOUT", default=None,
              metavar="SECONDS", help="Most seconds any one check may run (default: each check's own limit; "
              "env KATA_CHECK_TIMEOUT).")
@click.option("--course", "course", type=click.Path(exists=True), default=None, metavar="PATH",
              help="A course file, or a course folder (its kata.toml): its [points] choose the checks and weigh "
                   "them in every format (Gradescope's max_score, JUnit, JSON).")
@secret_option
@track_option
@session_options
def check_cmd(path, as_json, fmt, only, device, verbose, timeout, secret, track, course):
    """Grade the loop in PATH with every behavioural check (without PATH: the current kata).

    Exit status: 0 every check passes, 1 some check fails, 2 the file cannot be graded.
    """
    use_course(course)
    request = CheckRequest(path=path, track=track, device=device, lang=current_lang(None), only=only,
                           timeout=timeout, secret=secret, format="json" if as_json else fmt, verbose=verbose,
                           course=course)
    if path is None:  # the current kata (`kata next`), graded and recorded in the working folder
        from checker.learn.learning import check_current

        raise SystemExit(check_current(request, current_workdir(None), run_settings_of))
    from checker.learn.learning import check_current, kata_folder_of

    folder = kata_folder_of(path, current_workdir(None), request.lang)
    if folder is not None:  # the current kata's own file, named by its path: checked and recorded alike
        raise SystemExit(check_current(replace(request, path=None), folder, run_settings_of))
    from checker.learn.check import check
    from checker.setting.course import weighing_course

    # a file that is no kata's: a course found from the working folder weighs it in full, as --course does
    request = replace(request, course=weighing_course(course, only))
    # a kata's file in the working folder is graded against that kata's track
    outcome = check(request, workdir=current_workdir(None))
    if outcome.note:  # said first: which track the file was graded against
        click.echo(outcome.note, err=request.format != "text")
    emit_report(outcome.report, request.format, request.lang, verbose, weights=outcome.weights)
    if outcome.hint:
        click.echo(outcome.hint)
    raise SystemExit(outcome.report.exit_code)


@click.command("checks")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@track_option
@stored_lang_option
def checks_cmd(as_json, track):
    """List every behavioural check of a track (default: moons): its id, family and what it verifies."""
    import json

    from checker.checks import REGISTRY, ordered_ids
    from checker.setting.tracks import track_named

    lang = current_lang(None)
    chosen = track_named(track)
    rows = [{"id": cid, "family": REGISTRY[cid].family, "title": REGISTRY[cid].title.render(lang),
             "devices": list(REGISTRY[cid].devices)} for cid in ordered_ids(None, device="cpu", track=chosen)]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    from checker.base.term import console

    table = Table(box=None, pad_edge=False)
    for column in ("id", "familia", "título") if lang == "es" else ("id", "family", "title"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["family"], row["title"])
    console().print(table)


@click.command("tracks")
@click.option("--json", "as_json", is_flag=True, help="Print the tracks as JSON.")
@stored_lang_option
def tracks_cmd(as_json):
    """List the tracks: each a setting (data, model, thresholds) with its reference, mutants and katas."""
    import json

    from checker.base.errors import UsageProblem
    from checker.setting.tracks import TrackError, all_tracks

    lang = current_lang(None)
    try:
        tracks = all_tracks()
    except TrackError as exc:
        raise UsageProblem(str(exc)) from None
    rows = [{"track": t.id, "title": t.title.render(lang), "data": t.data.call(),
             "split": f"{t.data.n_train}/{t.data.n_val}", "model": t.model.layers, "protocol": list(t.protocol),
             "reference": t.reference_path} for t in tracks.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.markup import escape

    from checker.base.term import console
    from checker.learn.messages import TRACK_DETAILS, TRACKS_USE

    out = console()
    for row in rows:
        out.print(f"[bold cyan]{escape(row['track'])}[/]  {escape(row['title'])}")
        details = TRACK_DETAILS.render(lang, data=row["data"], split=row["split"], model=row["model"],
                                       protocol=" + ".join(row["protocol"]), reference=row["reference"])
        out.print(f"  [dim]{escape(details)}[/]")
    out.print(f"[dim]{escape(TRACKS_USE.render(lang))}[/]")
