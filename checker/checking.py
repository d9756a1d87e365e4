"""Grading one file for `kata check`: the file read and compiled here, graded in sandboxed children,
and the report printed in the format asked for. The click command lives in ``checker.cli.check``.
"""

from __future__ import annotations

import click

from checker.usage import UsageProblem, prepared_lab, read_loop_file

FORMATS = ("text", "json", "gradescope", "junit")


def grade_path(path: str, *, lang: str, device: str = "cpu", only: tuple[str, ...] = (),
               timeout: float | None = None, track=None):
    """Grade one file on both cores; a bad file or an unknown check id is a UsageProblem.

    ``timeout`` caps the seconds any one check (and the file's import) may take; ``track`` (a
    ``checker.tracks.Track``, default: moons) says which setting and reference the file is graded against.
    """
    from checker.checks import ordered_ids
    from checker.usage import track_named

    source, filename = read_loop_file(path)
    track = track or track_named(None)
    try:
        ids = ordered_ids(list(only) or None, device=device, track=track)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]} (see `kata checks`)") from None
    if only and not ids:
        raise UsageProblem(f"check(s) {', '.join(only)} do not apply to track {track.id!r} (see `kata checks "
                           f"--track {track.id}`)")
    lab = prepared_lab(device, track)
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
