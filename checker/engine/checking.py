"""Grading one file for `kata check`: the file read and compiled here, graded in sandboxed children,
and the report printed in the format asked for. The click command lives in ``checker.cli.check``.
"""

from __future__ import annotations

from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.base.term import echo
from checker.engine.request import FORMATS, CheckRequest
from checker.loopfile.loading import read_loop_file
from checker.setting.lab import prepared_lab

__all__ = ["FORMATS", "check_ids", "emit_report", "grade_request", "track_hint", "ungradable_report"]


def check_ids(request: CheckRequest, track) -> list[str]:
    """The checks ``request`` runs on ``track`` (its --only, in the battery's order; else all the track's);
    an unknown id, or ids none of which apply to the track, is a UsageProblem."""
    from checker.checks import ordered_ids

    try:
        ids = ordered_ids(list(request.only) or None, device=request.device, track=track)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]} (see `kata checks`)") from None
    if request.only and not ids:
        raise UsageProblem(f"check(s) {', '.join(request.only)} do not apply to track {track.id!r} (see `kata "
                           f"checks --track {track.id}`)")
    return ids


def grade_request(request: CheckRequest, track=None, lab=None):
    """Grade the file ``request`` names (its path, or its source) on ``request.children`` cores; a bad file or an
    unknown check id is a UsageProblem.

    ``track`` (a ``checker.setting.tracks.Track``, default: moons) says which setting and reference the file is
    graded against; ``lab``: one already prepared for it and the request's device (else prepared here). The
    request's ``timeout`` caps the seconds any one check (and the file's import) may take; its ``secret`` makes
    the report reproducible: the differential checks' arguments derive from it and the file's code, else they
    are drawn fresh.
    """
    from checker.setting.tracks import track_named

    if request.source is not None:
        source, filename = request.source, request.filename
    else:
        source, filename = read_loop_file(str(request.path), request.lang)
    track = track or track_named(None)
    ids = check_ids(request, track)
    lab = lab or prepared_lab(request.device, track)
    from checker.engine.grading import grade_one
    from checker.sandbox.jobs import Limits

    limits = Limits(step_timeout=request.timeout) if request.timeout else None
    return grade_one(source, filename, lab, check_ids=ids, lang=request.lang, limits=limits, secret=request.secret,
                     split=request.children)


def ungradable_report(path: str):
    """A file that cannot be read or compiled, as a report (for the formats graders read), else None."""
    from checker.base.errors import LoopFileError
    from checker.engine.grading import Report
    from checker.loopfile.loading import compile_source, read_source

    try:
        source, filename = read_source(path)
        compile_source(source, filename)
    except LoopFileError as exc:
        return Report(file=str(path), error_kind=exc.kind, error=exc.message)
    return None


def emit_report(report, fmt: str, lang: str, verbose: bool = False, weights=None) -> None:
    """Print ``report`` as ``fmt``; ``weights``: check id -> points (a course's), shown in every format."""
    from checker.base.term import console
    from checker.engine import formats

    if fmt == "json":
        echo(formats.render_json(report, weights))
    elif fmt == "gradescope":
        echo(formats.render_gradescope(report, lang, weights))
    elif fmt == "junit":
        echo(formats.render_junit(report, lang, weights))
    else:
        formats.render_text(report, console(), lang, verbose=verbose, weights=weights)


TRACK_HINT = Message(
    en="make_data's tensors have the shapes of track {other} ({split}), not of {track}: grade it with --track {other}",
    es="los tensores de make_data tienen las formas del recorrido {other} ({split}), no de {track}: evalúalo con "
       "--track {other}",
)
PROTOCOL_HINT = Message(
    en="graded against track {track}; a file of another track needs --track NAME (`kata tracks` lists them)",
    es="evaluado según el recorrido {track}; un archivo de otro recorrido necesita --track NOMBRE "
       "(`kata tracks` los lista)",
)


FOUND_BY_DATA = Message(
    en="graded against track {other}: make_data's tensors have its shapes ({split}), not those of {track} "
       "(give --track to choose)",
    es="evaluado según el recorrido {other}: los tensores de make_data tienen sus formas ({split}), no las de {track} "
       "(da --track para elegir)",
)


def track_by_data(report, track):
    """The one other track whose data shapes the file's make_data gave (its data.lesson failed on ``track``'s),
    else None."""
    from checker.checks.data import shapes
    from checker.setting.tracks import TrackError, all_tracks

    data = next((c for c in report.checks if c.id == "data.lesson" and not c.passed), None)
    parts = (data.measured or {}).get("parts") if data is not None else None
    if not isinstance(parts, list):
        return None
    got = [p.get("shape") if isinstance(p, dict) else None for p in parts]
    try:
        matching = [t for t in all_tracks().values() if t.id != track.id and got == list(shapes(t))]
    except TrackError:
        return None
    return matching[0] if len(matching) == 1 else None


TRACK_PROBE = "data.lesson"
"""The check whose figures tell which track a file's data follows (its shapes): run whatever the weights count."""


def with_track_probe(check_ids, track) -> tuple[list[str], bool]:
    """``check_ids`` with the track probe (``data.lesson``) added where missing and the track has it: a submission
    is graded on the assignment's track whatever the weights count; (the ids, whether the probe was added)."""
    from checker.checks import ordered_ids

    ids = list(check_ids)
    if not ids or TRACK_PROBE in ids:
        return ids, False
    try:
        ordered_ids([TRACK_PROBE], device="cpu", track=track)
    except KeyError:
        return ids, False
    return [TRACK_PROBE, *ids], True


def hold_other_track(report, note: str | None, probed: bool) -> None:
    """A file whose data follows another track than the assignment's (``note`` says so): held for review, the note
    first among the reasons, so it cannot score full marks; the probe's result dropped where only it added it."""
    if probed:
        report.checks = [c for c in report.checks if c.id != TRACK_PROBE]
    if note and note not in report.integrity:
        report.integrity.insert(0, note)


def track_hint(report, track, lang: str) -> str | None:
    """When the figures show the file belongs to another track (its data has that track's shapes), or it
    does not follow this track's protocol, one line saying which --track to use; else None."""
    from checker.setting.tracks import TrackError, all_tracks

    try:
        others = [t for t in all_tracks().values() if t.id != track.id]
    except TrackError:
        return None
    if not others:
        return None
    if report.error_kind == "protocol":
        return PROTOCOL_HINT.render(lang, track=track.id)
    other = track_by_data(report, track)
    if other is not None:
        split = f"{other.data.n_train}/{other.data.n_val}"
        return TRACK_HINT.render(lang, other=other.id, split=split, track=track.id)
    return None
