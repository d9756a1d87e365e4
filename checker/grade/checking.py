"""Grading one file for `kata check`: the file read and compiled here, graded in sandboxed children,
and the report printed in the format asked for. The click command lives in ``checker.cli.check``.
"""

from __future__ import annotations

from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.base.term import echo
from checker.loopfile.loading import read_loop_file
from checker.setting.lab import prepared_lab

FORMATS = ("text", "json", "gradescope", "junit")


def grade_path(path: str, *, lang: str, device: str = "cpu", only: tuple[str, ...] = (),
               timeout: float | None = None, track=None, secret: bytes | None = None):
    """Grade one file on both cores; a bad file or an unknown check id is a UsageProblem.

    ``timeout`` caps the seconds any one check (and the file's import) may take; ``track`` (a
    ``checker.setting.tracks.Track``, default: moons) says which setting and reference the file is graded against;
    ``secret`` (a grading secret) makes the report reproducible: the differential checks' arguments derive
    from it and the file's code, else they are drawn fresh.
    """
    from checker.checks import ordered_ids
    from checker.setting.tracks import track_named

    source, filename = read_loop_file(path, lang)
    track = track or track_named(None)
    try:
        ids = ordered_ids(list(only) or None, device=device, track=track)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]} (see `kata checks`)") from None
    if only and not ids:
        raise UsageProblem(f"check(s) {', '.join(only)} do not apply to track {track.id!r} (see `kata checks "
                           f"--track {track.id}`)")
    lab = prepared_lab(device, track)
    from checker.grade.grading import grade_one
    from checker.sandbox.jobs import Limits

    limits = Limits(step_timeout=timeout) if timeout else None
    return grade_one(source, filename, lab, check_ids=ids, lang=lang, limits=limits, secret=secret)


def ungradable_report(path: str):
    """A file that cannot be read or compiled, as a report (for the formats graders read), else None."""
    from checker.base.errors import LoopFileError
    from checker.grade.grading import Report
    from checker.loopfile.loading import compile_source, read_source

    try:
        source, filename = read_source(path)
        compile_source(source, filename)
    except LoopFileError as exc:
        return Report(file=str(path), error_kind=exc.kind, error=exc.message)
    return None


def emit_report(report, fmt: str, lang: str, verbose: bool = False) -> None:
    from checker.base.term import console
    from checker.grade import formats

    if fmt == "json":
        echo(formats.render_json(report))
    elif fmt == "gradescope":
        echo(formats.render_gradescope(report, lang))
    elif fmt == "junit":
        echo(formats.render_junit(report, lang))
    else:
        formats.render_text(report, console(), lang, verbose=verbose)


TRACK_HINT = Message(
    en="make_data's tensors have the shapes of track {other} ({split}), not of {track}: grade it with --track {other}",
    es="los tensores de make_data tienen las formas de la pista {other} ({split}), no de {track}: evalúalo con "
       "--track {other}",
)
PROTOCOL_HINT = Message(
    en="graded against track {track}; a file of another track needs --track NAME (`kata tracks` lists them)",
    es="evaluado según la pista {track}; un archivo de otra pista necesita --track NOMBRE (`kata tracks` las lista)",
)


def track_hint(report, track, lang: str) -> str | None:
    """When the figures show the file belongs to another track (its data has that track's shapes), or it
    does not follow this track's protocol, one line saying which --track to use; else None."""
    from checker.checks.data import shapes
    from checker.setting.tracks import TrackError, all_tracks

    try:
        others = [t for t in all_tracks().values() if t.id != track.id]
    except TrackError:
        return None
    if not others:
        return None
    if report.error_kind == "protocol":
        return PROTOCOL_HINT.render(lang, track=track.id)
    data = next((c for c in report.checks if c.id == "data.lesson" and not c.passed), None)
    parts = (data.measured or {}).get("parts") if data is not None else None
    if not isinstance(parts, list):
        return None
    got = [p.get("shape") if isinstance(p, dict) else None for p in parts]
    for other in others:
        if got == list(shapes(other)):
            split = f"{other.data.n_train}/{other.data.n_val}"
            return TRACK_HINT.render(lang, other=other.id, split=split, track=track.id)
    return None
