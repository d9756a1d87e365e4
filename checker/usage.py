"""What commands need before they work: a usage error (exit 2), a loop file read and compiled, the lab."""

from __future__ import annotations

import click

from checker.i18n import Message
from checker.loading import LoopFileError, compile_source, read_source


class UsageProblem(click.ClickException):
    """A bad input: printed as 'Error: ...' with exit code 2, never a traceback."""

    exit_code = 2


ANSWERS_NOT_A_LOOP = Message(
    en="{path} holds a practice kata's answers, not a training loop: `kata check` without a path compares them "
       "with a run (in the folder where `kata next` wrote it)",
    es="{path} contiene las respuestas de una kata de práctica, no un bucle de entrenamiento: `kata check` sin "
       "ruta las compara con una ejecución (en la carpeta donde lo escribió `kata next`)",
)


def read_loop_file(path: str) -> tuple[str, str]:
    """Read and compile (without running) a loop file; any problem is a UsageProblem (exit 2)."""
    if str(path).endswith(".toml"):
        from checker.cli.common import current_lang

        raise UsageProblem(ANSWERS_NOT_A_LOOP.render(current_lang(None), path=path))
    try:
        source, filename = read_source(path)
        compile_source(source, filename)
    except LoopFileError as exc:
        raise UsageProblem(exc.message) from None
    return source, filename


def track_named(name: str | None, path: str | None = None):
    """The track of a command: ``--track NAME``, else the track whose folders hold ``path``, else moons.

    An unknown name (or a broken track file) is a UsageProblem naming the known tracks.
    """
    from pathlib import Path

    from checker.tracks import TrackError, get_track, track_of_path

    try:
        if name:
            return get_track(name)
        found = track_of_path(Path(path)) if path else None
        return found or get_track()
    except TrackError as exc:
        raise UsageProblem(f"--track: {exc}") from None


def track_for_file(track: str | None, path: str | None, workdir: str | None = None):
    """``--track``, else the track of the kata whose file PATH is (in the working folder's progress), else of
    the folder holding PATH, else moons."""
    if track is None and path is not None:
        from checker.learning import track_of_file

        track = track_of_file(path, workdir)
    return track_named(track, path)


def prepared_lab(device: str = "cpu", track=None):
    """Import torch and scikit-learn once, build the lab; children fork from here.

    That takes a few seconds: on a terminal a transient status line says so (on stderr).
    """
    from checker.term import console

    if device != "cpu" and not device.startswith("cuda"):
        raise UsageProblem(f"--device {device}: use cpu or cuda[:N]")
    err = console(stderr=True)
    if not err.is_terminal:
        return _prepare(device, track)
    with err.status("importing torch and scikit-learn…", spinner="dots"):
        return _prepare(device, track)


def _prepare(device: str, track=None):
    import checker.sandbox  # noqa: F401  (sets the fork-safe CUDA check before torch is asked)
    from checker.lab import Lab

    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UsageProblem(f"--device {device}: CUDA is not available on this machine (use --device cpu)")
    from checker.tracks import TrackError

    try:
        return Lab(device=device, track=track).prepare()
    except TrackError as exc:
        raise UsageProblem(str(exc)) from None
