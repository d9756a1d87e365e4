"""Training runs for `kata run`, `kata trace` and the practice katas, each in a sandboxed child.

A run trains the lesson's setting with a loop file's own protocol functions (``worker.run_lesson``)
and also counts the optimizer steps of every epoch. The loader's and the model's seeds can differ
(``seed_loader``, ``seed_model``), to see which source of randomness moves the result more.

A trace follows a few examples through ``train_epoch`` batch by batch: what the model received,
with which labels, and how many times ``step()`` was called.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from checker.base.errors import Failure, UsageProblem
from checker.base.i18n import Message
from checker.loopfile.loading import read_loop_file
from checker.runs.boundary import (
    BadFigures,
    bounds_around,
    bounds_of,
    classes_of,
    frame_bytes,
    grid_frame,
    parse_points,
    points_of,
    projection_of,
)
from checker.sandbox.events import Kind
from checker.sandbox.jobs import Job, Limits, Reporter, run_jobs
from checker.sandbox.zygote import Task
from checker.setting.tracks import hidden_paths, shared_files, submission_folders

LOAD_TIMEOUT = 20.0


class RunFailed(Exception):
    """A run did not give its figures; the message says why (the file's own error, a time-out...)."""

    def __init__(self, message: str | Message, *, file_error: bool = False, **params: object):
        self.text = message if isinstance(message, Message) else Message(en=message, es=message)
        self.params = params
        self.message = self.render("en")
        super().__init__(self.message)
        self.file_error = file_error

    def render(self, lang: str = "en") -> str:
        return self.text.render(lang, **self.params) if self.params else self.text.render(lang)


PATH_OR_LESSON = Message(en="give a loop file (PATH) or --lesson, one of the two",
                        es="da un archivo de bucle (PATH) o --lesson, una de las dos cosas")
RUN_RAISED = Message(en="{name}: the run stopped because the loop raised an error\n{error}",
                     es="{name}: la ejecución se detuvo porque el bucle lanzó un error\n{error}")
RUN_TAMPERED = Message(en="{name}: the run was stopped: {what}", es="{name}: la ejecución se detuvo: {what}")
RUN_TIMED_OUT = Message(en="{name}: the run did not finish within {seconds:g} s",
                        es="{name}: la ejecución no terminó en {seconds:g} s")
RUN_ENDED = Message(en="{name}: the process running the loop ended early (exit status {status})",
                    es="{name}: el proceso que ejecutaba el bucle terminó antes de tiempo (estado de salida {status})")


@dataclass
class RunResult:
    """What one run measured."""

    name: str
    history: list[dict]
    warnings: list[str] = field(default_factory=list)
    steps: list[int | None] = field(default_factory=list)
    """optimizer steps taken in each epoch (None where the file's fit does not call train_epoch)"""
    boundary: Boundary | None = None
    """The decision boundary after training (asked for with ``RunSettings.boundary``)."""


@dataclass(frozen=True)
class Boundary:
    """A trained model's predictions over a grid of the plane, and the data it trained on, every field checked
    (``checker.runs.boundary``)."""

    cells: bytes | None
    """``GRID * GRID`` cells, one byte each; None when the model's output over the grid was not one number per
    class."""
    classes: int
    bounds: Any
    points: Any


@dataclass(frozen=True)
class RunSettings:
    """What a run trains: the lesson's setting, with what `kata run` lets a learner change.

    ``kata run``, the practice katas and the tests build runs from this one type.
    """

    optimizer: str = "sgd"
    """"sgd" or "adam", given to the file's make_optimizer."""
    lr: float = 0.1
    epochs: int = 10
    batch_size: int = 32
    scheduler: str | None = None
    """None, "step" (StepLR(step_size=10, gamma=0.5)) or "cosine" (CosineAnnealingLR(T_max=epochs))."""
    clip: float | None = None
    """The gradient norm to clip to, or None."""
    seed: int = 0
    """seed_everything's seed, and the loader's and the model's unless given apart."""
    seed_loader: int | None = None
    seed_model: int | None = None
    device: str = "cpu"
    timeout: float | None = None
    """Seconds the run may take (None: a limit that grows with the epochs)."""
    boundary: bool = False
    """Also evaluate the trained model over a grid of the plane (`kata run --plot`)."""

    @property
    def loader_seed(self) -> int:
        return self.seed if self.seed_loader is None else self.seed_loader

    @property
    def model_seed(self) -> int:
        return self.seed if self.seed_model is None else self.seed_model

    @classmethod
    def from_options(cls, **options: Any) -> RunSettings:
        """From `kata run`'s options (``scheduler="none"`` is no scheduler; other options are ignored)."""
        known = {k: v for k, v in options.items() if k in cls.__dataclass_fields__}
        if known.get("batch_size") is None:  # not given: the track's, where the caller knows it, else 32
            known.pop("batch_size", None)
            if options.get("track") is not None:
                known["batch_size"] = options["track"].thresholds.batch_size
        if known.get("scheduler") == "none":
            known["scheduler"] = None
        return cls(**known)


@dataclass(frozen=True)
class TraceSettings:
    """What `kata trace` follows: a few examples through train_epoch, batch by batch."""

    examples: int = 6
    batch_size: int = 4
    epochs: int = 2
    seed: int = 0
    optimizer: str = "sgd"
    lr: float = 0.1
    timeout: float | None = None


# ---------------------------------------------------------------------------------------------
# in the child

class _Seeds:
    """The loop, with make_loader and make_model given their own seeds (everything else as it is)."""

    def __init__(self, loop, loader_seed: int, model_seed: int):
        self._loop, self._loader_seed, self._model_seed = loop, loader_seed, model_seed

    def __getattr__(self, name: str):
        return getattr(self._loop, name)

    def make_loader(self, *data, batch_size=32, seed=0, **options):
        return self._loop.make_loader(*data, batch_size=batch_size, seed=self._loader_seed, **options)

    def make_model(self, seed=0):
        return self._loop.make_model(seed=self._model_seed)


def _count_steps(loop) -> tuple[list[int | None], Callable[[], None]]:
    """Count optimizer steps per call of the file's train_epoch; (the counts, a function that undoes it).

    A step hook goes on each optimizer the file's make_optimizer builds (never a global one), and
    the file's train_epoch is wrapped where its own fit() finds it, among the module's globals.
    """
    total = [0]
    per_epoch: list[int | None] = []
    originals = {"train_epoch": loop.train_epoch, "make_optimizer": loop.make_optimizer}

    def on_step(_optimizer, _args, _kwargs) -> None:
        total[0] += 1

    def make_optimizer(*args, **kwargs):
        optimizer = originals["make_optimizer"](*args, **kwargs)
        register = getattr(optimizer, "register_step_post_hook", None)
        if callable(register):
            register(on_step)
        return optimizer

    def train_epoch(*args, **kwargs):
        before = total[0]
        try:
            return originals["train_epoch"](*args, **kwargs)
        finally:
            per_epoch.append(total[0] - before)

    loop.train_epoch, loop.make_optimizer = train_epoch, make_optimizer

    def undo() -> None:
        loop.train_epoch, loop.make_optimizer = originals["train_epoch"], originals["make_optimizer"]

    return per_epoch, undo


def measure_run(loop, settings: RunSettings, lab) -> dict[str, Any]:
    """One run of the lesson with ``loop``: its history, warnings and steps per epoch."""
    from checker.engine.worker import run_lesson

    seed, loader_seed, model_seed = settings.seed, settings.loader_seed, settings.model_seed
    steps, undo = _count_steps(loop)
    try:
        driven = loop if (loader_seed, model_seed) == (seed, seed) else _Seeds(loop, loader_seed, model_seed)
        if settings.boundary:
            driven = _Kept(driven)
        history, warnings = run_lesson(driven, replace(settings, seed=model_seed), lab)
    finally:
        undo()
    counted: list[int | None] = list(steps) if len(steps) == len(history) else [None] * len(history)
    figures = {"history": history, "warnings": warnings, "steps": counted}
    if settings.boundary:
        figures["boundary"] = _boundary_figures(driven, lab)
    return figures


class _Kept:
    """The loop, keeping the data its make_data returned and the model its make_model built."""

    def __init__(self, loop):
        self._loop, self.data, self.model = loop, None, None

    def __getattr__(self, name: str):
        return getattr(self._loop, name)

    def make_data(self, *args, **kwargs):
        self.data = self._loop.make_data(*args, **kwargs)
        return self.data

    def make_model(self, *args, **kwargs):
        self.model = self._loop.make_model(*args, **kwargs)
        return self.model


def _boundary_figures(kept: _Kept, lab) -> dict[str, Any]:
    """The trained model over the grid of the track's own data (with a margin), and the file's data points; data
    of more than two features on the plane of its first two principal components (``boundary.projection_of``). The
    track's data is the lab's (a course's file is read by kata's own process, never here)."""
    kata = lab.data
    projection = projection_of(kata.X_train)
    bounds = bounds_around(kata.X_train, kata.X_val, projection=projection)
    classes = lab.track.model.n_classes
    frame = grid_frame(kept.model, bounds, classes, projection=projection) if kept.model is not None else None
    points = (points_of(*kept.data, projection=projection)
              if isinstance(kept.data, tuple | list) and len(kept.data) == 4 else None)
    return {"frame": frame, "bounds": bounds.as_list(), "classes": classes, "points": points}


def parse_boundary(value: Any) -> Boundary | None:
    """A run's boundary figures, checked (``BadFigures`` when a field is off); None when there are none."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"frame", "bounds", "classes", "points"}:
        raise BadFigures("a boundary must have frame, bounds, classes and points")
    classes = classes_of(value["classes"])
    return Boundary(frame_bytes(value["frame"], classes), classes, bounds_of(value["bounds"]),
                    parse_points(value["points"], classes))


def measure_trace(loop, settings: TraceSettings, track=None) -> dict[str, Any]:
    """``epochs`` epochs of train_epoch on the first ``examples`` training examples, batch by batch.

    For each batch: the shape of the features the model received, which examples they were (their
    index among the examples given), and whether every label that reached the loss is that row's own.
    """
    import torch
    from torch import nn

    n, batch_size = settings.examples, settings.batch_size
    seed, epochs = settings.seed, settings.epochs
    loop.seed_everything(seed=seed)
    X_train, y_train, _, _ = loop.make_data(seed=0)
    X, y = X_train[:n], y_train[:n]
    from checker.engine.worker import make_track_loader

    # rows followed by their values: no augmentation, so each batch row is found among the examples
    loader = make_track_loader(loop, track, X, y, batch_size=batch_size, seed=seed, augment=False)
    model = loop.make_model(seed=seed)
    optimizer = loop.make_optimizer(model, name=settings.optimizer, lr=settings.lr)
    batches: list[dict[str, Any]] = []
    pending: list[torch.Tensor] = []
    steps = [0]
    current = [0]  # the epoch being traced

    def on_forward(_module, inputs) -> None:
        if model.training:
            pending.append(inputs[0].detach().cpu())

    class SpyLoss(nn.CrossEntropyLoss):
        def forward(self, logits, target):
            if pending:
                xb = pending.pop()
                yb = target.detach().cpu()
                rows = [_row_index(X, row) for row in xb]
                batches.append({
                    "epoch": current[0], "shape": list(xb.shape), "rows": rows,
                    "labels_kept": len(yb) == len(rows) and all(
                        r is not None and int(y[r]) == int(label) for r, label in zip(rows, yb, strict=False)),
                })
            return super().forward(logits, target)

    def on_step(_optimizer, _args, _kwargs) -> None:
        steps[0] += 1

    hook = model.register_forward_pre_hook(on_forward)
    step_hook = optimizer.register_step_post_hook(on_step)
    per_epoch = []
    try:
        for epoch in range(1, epochs + 1):
            current[0] = epoch
            before = steps[0]
            loop.train_epoch(model, loader, optimizer, SpyLoss())
            per_epoch.append(steps[0] - before)
    finally:
        hook.remove()
        step_hook.remove()
    return {"examples": n, "batch_size": batch_size, "batches": batches, "steps": per_epoch,
            "labels": [int(v) for v in y]}


def _row_index(X, row) -> int | None:
    import torch

    hits = torch.nonzero((X == row).all(dim=1)).flatten().tolist()
    return hits[0] if hits else None


def loaded_loop(source: str, filename: str, track, rep: Reporter):
    """In a child of ``kata run``, ``trace`` or ``explore``: set the child up and load the file, reporting
    ``loaded``; a file that cannot load is reported as ``file_error`` (its Spanish too) and gives None."""
    from checker.base.errors import LoopFileError
    from checker.engine.worker import child_setup, module_file
    from checker.loopfile.loading import load_loop

    child_setup()
    rep.start("load", timeout=LOAD_TIMEOUT)
    try:
        loop = load_loop(source, filename, track, module_file(filename, track))
    except LoopFileError as exc:
        rep.send({"event": "file_error", "kind": exc.kind, "message": exc.message,
                  **({"es": exc.es} if exc.es else {})})
        return None
    rep.send({"event": "loaded"})
    return loop


def _target(source: str, filename: str, what: str, settings: RunSettings | TraceSettings,
            lab) -> Callable[[Reporter], None]:
    def target(rep: Reporter) -> None:
        from checker.engine.worker import describe_exception

        loop = loaded_loop(source, filename, lab.track if lab is not None else None, rep)
        if loop is None:
            return
        rep.start(what, timeout=settings.timeout)
        try:
            figures = (measure_trace(loop, settings, lab.track) if what == "trace"
                       else measure_run(loop, settings, lab))
        except BaseException as exc:
            rep.send({"event": "raised", "check": what, "type": type(exc).__name__,
                      "error": describe_exception(exc, filename)})
            return
        rep.send({"event": "figures", "figures": figures})

    return target


# ---------------------------------------------------------------------------------------------
# in the parent

def _seconds(settings: RunSettings | TraceSettings) -> float:
    return settings.timeout or 60.0 + settings.epochs * 1.0


def _on_gpu(settings: RunSettings | TraceSettings, lab) -> bool:
    """Whether the run may use a GPU (its child's memory cap is then on data, not address space: ``Limits.gpu``)."""
    return any(str(d).startswith("cuda") for d in (getattr(settings, "device", "cpu"), getattr(lab, "device", "cpu")))


def measure(sources: Sequence[tuple[str, str]], settings_list: Sequence[RunSettings | TraceSettings], lab,
            what: str = "run") -> list[dict[str, Any]]:
    """Run every (source, filename) with the settings at the same index, two children at a time.

    The figures in the order given; RunFailed (``file_error`` set when the file cannot be loaded)
    as soon as one run gives none.
    """
    hide = hidden_paths(submission_folders([name for _, name in sources]))
    shared = shared_files(lab.track if lab is not None else None)
    jobs = [Job(Task("checker.runs.training:_target", (src, name, what, settings, lab)),
                Limits(step_timeout=_seconds(settings), hide=hide, shared_files=shared, gpu=_on_gpu(settings, lab)),
                tag=i)
            for i, ((src, name), settings) in enumerate(zip(sources, settings_list, strict=True))]
    found: dict[int, dict[str, Any]] = {}
    for outcome in run_jobs(jobs, workers=2):
        i = outcome.job.tag
        name = sources[i][1]
        events = {e.kind: e for e in outcome.events}
        if Kind.FILE_ERROR in events:
            error = events[Kind.FILE_ERROR]
            raise RunFailed(Message(en=error.message, es=error.es or error.message), file_error=True)
        if Kind.FIGURES in events:
            found[i] = events[Kind.FIGURES].figures
            continue
        if Kind.RAISED in events:
            from checker.engine.worker import in_both

            raise RunFailed(RUN_RAISED, name=name, error=in_both(events[Kind.RAISED].error))
        if Kind.TAMPERED in events:
            raise RunFailed(RUN_TAMPERED, name=name, what="; ".join(events[Kind.TAMPERED].what))
        if outcome.timed_out_step:
            raise RunFailed(RUN_TIMED_OUT, name=name, seconds=_seconds(settings_list[i]))
        raise RunFailed(RUN_ENDED, name=name, status=outcome.exit_status)
    return [found[i] for i in range(len(jobs))]


def run_files(sources: Sequence[tuple[str, str]], settings: RunSettings, lab) -> list[RunResult]:
    """Each file trained with the same settings, side by side."""
    figures = measure(sources, [settings] * len(sources), lab)
    results = []
    for (_, name), f in zip(sources, figures, strict=True):
        try:
            boundary = parse_boundary(f.get("boundary"))
        except BadFigures as exc:
            raise RunFailed(f"{name}: kata refused the boundary the run sent back ({exc})") from None
        results.append(RunResult(name, f["history"], f["warnings"], f["steps"], boundary))
    return results


# ---------------------------------------------------------------------------------------------
# for the command line

def run_sources(path: str | None, lesson: bool, *more: str | None, track=None,
                lang: str | None = None) -> list[tuple[str, str]]:
    """(source, filename) for PATH or the lesson's loop (``track``'s reference), then for each further path
    (``lang``: the language of a problem's message)."""
    if lesson == (path is not None):
        raise UsageProblem(PATH_OR_LESSON.render(lang or "en"))
    if lesson:
        from checker.setting.course import reference_text
        from checker.setting.tracks import get_track

        first = (reference_text(track or get_track(), "--lesson", lang), "lesson-loop.py")
    else:
        first = read_loop_file(path, lang)
    return [first, *(read_loop_file(p, lang) for p in more if p)]


def figures_or_usage_error(call, lang: str = "en"):
    """``call()``'s figures; a run that gives none becomes a usage error (exit 2) or a failure (exit 1), said in
    ``lang``."""
    try:
        return call()
    except RunFailed as exc:
        if exc.file_error:
            raise UsageProblem(exc.render(lang)) from None
        raise Failure(exc.render(lang)) from None
