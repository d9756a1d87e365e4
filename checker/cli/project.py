"""`kata project FILE`: kata's checks on a project's own training loop, without pytest."""

from __future__ import annotations

import json

import click

from checker.cli.common import current_lang, stored_lang_option


@click.command("project")
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--device", default=None, help="Run on this device (cpu, cuda[:N]) instead of the file's.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the checks that passed.")
@stored_lang_option
def project_cmd(path, as_json, device, verbose):
    """Check the training loop whose pieces PATH names: a Python file of your project defining kata_pieces(),
    which returns check_loop's arguments (model, data, optimizer, train, and optionally evaluate, loader,
    scheduler, clip_norm, device, bind). Runs in this process: your code is trusted.

    Exit status: 0 every check that ran passes, 1 some check fails, 2 the pieces cannot be used.
    """
    from checker.project.piecesfile import load_pieces
    from checker.project.runner import check_loop

    lang = current_lang(None)
    pieces = load_pieces(path)
    if device is not None:
        pieces["device"] = device
    report = check_loop(**pieces)
    if as_json:
        click.echo(json.dumps(report.as_dict(lang), indent=2, ensure_ascii=False))
    else:
        click.echo(report.render(lang, verbose=verbose))
    raise SystemExit(0 if report.ok else 1)
