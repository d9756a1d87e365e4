"""`kata check PATH`: grade a loop file with the behavioural checks."""

from __future__ import annotations

import click

from checker.cli.common import UsageProblem, current_lang, lang_option, prepared_lab, read_loop_file

FORMATS = ("text", "json", "gradescope", "junit")


def grade_path(path: str, *, lang: str, device: str = "cpu", only: tuple[str, ...] = ()):
    """Grade one file on both cores; a bad file or an unknown check id is a UsageProblem."""
    from checker.checks import ordered_ids

    source, filename = read_loop_file(path)
    try:
        ids = ordered_ids(list(only) or None, device=device)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]} (see `kata checks`)") from None
    lab = prepared_lab(device)
    from checker.grading import grade_one

    return grade_one(source, filename, lab, check_ids=ids, lang=lang)


def emit_report(report, fmt: str, lang: str, verbose: bool = False) -> None:
    from checker import formats
    from checker.term import console

    if fmt == "json":
        click.echo(formats.render_json(report))
    elif fmt == "gradescope":
        click.echo(formats.render_gradescope(report))
    elif fmt == "junit":
        click.echo(formats.render_junit(report))
    else:
        formats.render_text(report, console(), lang, verbose=verbose)


@click.command("check")
@click.argument("path", required=False, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--only", multiple=True, metavar="CHECK_ID", help="Run only this check (repeatable).")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("-v", "--verbose", is_flag=True, help="Also show what passing checks measured.")
@lang_option
def check_cmd(path, as_json, fmt, only, device, verbose, lang):
    """Grade the loop in PATH with every behavioural check.

    Exit status: 0 every check passes, 1 some check fails, 2 the file cannot be graded.
    """
    lang = current_lang(lang)
    if path is None:
        raise UsageProblem("give the loop file to check: kata check PATH")
    report = grade_path(path, lang=lang, device=device, only=only)
    emit_report(report, "json" if as_json else fmt, lang, verbose)
    raise SystemExit(report.exit_code)
