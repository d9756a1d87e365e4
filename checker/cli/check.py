"""`kata check PATH`: grade a loop file with the behavioural checks."""

from __future__ import annotations

import click

from checker.cli.common import UsageProblem, current_lang, lang_option, prepared_lab, read_loop_file

FORMATS = ("text", "json", "gradescope", "junit")


def grade_path(path: str, *, lang: str, device: str = "cpu", only: tuple[str, ...] = (),
               timeout: float | None = None):
    """Grade one file on both cores; a bad file or an unknown check id is a UsageProblem.

    ``timeout`` caps the seconds any one check (and the file's import) may take.
    """
    from checker.checks import ordered_ids

    source, filename = read_loop_file(path)
    try:
        ids = ordered_ids(list(only) or None, device=device)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]} (see `kata checks`)") from None
    lab = prepared_lab(device)
    from checker.grading import grade_one
    from checker.sandbox import Limits

    limits = Limits(step_timeout=timeout) if timeout else None
    return grade_one(source, filename, lab, check_ids=ids, lang=lang, limits=limits)


def ungradable_report(path: str):
    """A file that cannot be read or compiled, as a report (for the formats graders read), else None."""
    from checker.grading import Report
    from checker.loading import LoopFileError, compile_source, read_source

    try:
        source, filename = read_source(path)
        compile_source(source, filename)
    except LoopFileError as exc:
        return Report(file=str(path), error_kind=exc.kind, error=exc.message)
    return None


def emit_report(report, fmt: str, lang: str, verbose: bool = False) -> None:
    from checker import formats
    from checker.term import console

    if fmt == "json":
        click.echo(formats.render_json(report))
    elif fmt == "gradescope":
        click.echo(formats.render_gradescope(report, lang))
    elif fmt == "junit":
        click.echo(formats.render_junit(report, lang))
    else:
        formats.render_text(report, console(), lang, verbose=verbose)


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
@click.option("--dir", "workdir", type=click.Path(file_okay=False), default=None,
              help="Without PATH: your working folder (default: $KATA_DIR, else the current directory).")
@lang_option
def check_cmd(path, as_json, fmt, only, device, verbose, timeout, workdir, lang):
    """Grade the loop in PATH with every behavioural check (without PATH: the current kata).

    Exit status: 0 every check passes, 1 some check fails, 2 the file cannot be graded.
    """
    lang = current_lang(lang)
    if path is None:  # the current kata (`kata next`), graded and recorded in the working folder
        from checker.learning import check_current

        raise SystemExit(check_current(workdir, lang=lang, fmt="json" if as_json else fmt, device=device,
                                       only=only, verbose=verbose, timeout=timeout))
    fmt = "json" if as_json else fmt
    # Gradescope and CI read a report even when the file cannot be graded (score 0, the reason given)
    report = ungradable_report(path) if fmt in ("gradescope", "junit") else None
    if report is None:
        report = grade_path(path, lang=lang, device=device, only=only, timeout=timeout)
    emit_report(report, fmt, lang, verbose)
    raise SystemExit(report.exit_code)


@click.command("checks")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@lang_option
def checks_cmd(as_json, lang):
    """List every behavioural check: its id, family and what it verifies."""
    import json

    from checker.checks import REGISTRY, ordered_ids

    lang = current_lang(lang)
    rows = [{"id": cid, "family": REGISTRY[cid].family, "title": REGISTRY[cid].title.render(lang),
             "devices": list(REGISTRY[cid].devices)} for cid in ordered_ids(None, device="cpu")]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    from checker.term import console

    table = Table(box=None, pad_edge=False)
    for column in ("id", "family", "title"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["family"], row["title"])
    console().print(table)
