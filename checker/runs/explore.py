"""`kata explore`'s training: a loop file and the track's reference, each in its own sandboxed child, trained at
several learning rates, with the decision boundary recorded after every epoch.

Two settings:

- **the explorer's** (``EXPLORER``), the lesson's interactive explorer number for number: 180 points of
  ``make_moons(noise=0.2, random_state=0)`` split 120 training / 60 validation (stratified), an MLP 2-8-2
  (one hidden layer of 8 ReLU, ``torch.manual_seed(0)``), SGD with batches of 16 (8 steps an epoch: 7 batches
  of 16 and one of 8). The data and the model are kata's; the loader, the optimizer, ``train_epoch``,
  ``evaluate`` and ``fit`` are the file's own.
- **a track's own** (``track_setting``): the file's own ``make_data`` and ``make_model`` too, at the track's
  batch size and epochs.

Each child runs every learning rate of the setting, one after the other (one fork and one load per loop);
each run opens a step of its own (``lr=<lr>``), so a run that hangs costs its own time limit, and a run that
raises is reported for its learning rate alone. The file's ``train_epoch`` is wrapped where its ``fit`` finds
it: after every call the model is evaluated on the grid (``checker.runs.boundary``). The parent checks every
figure that comes back (``parse_run``) before any of it reaches a page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.base.i18n import Message
from checker.runs.boundary import (
    BadFigures,
    Bounds,
    Points,
    bounds_around,
    bounds_of,
    classes_of,
    frame_bytes,
    grid_frame,
    parse_points,
    points_of,
    projection_of,
)
from checker.runs.training import LOAD_TIMEOUT, RunFailed, loaded_loop
from checker.sandbox.events import Kind
from checker.sandbox.jobs import Job, Limits, Reporter, run_jobs
from checker.sandbox.zygote import Task
from checker.setting.tracks import (
    DataSpec,
    ModelSpec,
    Track,
    TrackError,
    arrays_of,
    hidden_paths,
    lesson_data,
    shared_files,
    split_of,
    submission_folders,
)

LRS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
"""The learning rates every page holds (10: the lesson's "raise the lr to 10")."""
STEP = "lr="
HISTORY_KEYS = ("epoch", "lr", "train_loss", "val_loss", "val_acc")


@dataclass(frozen=True)
class ExploreSetting:
    """What both loops train on, at each of ``lrs``."""

    name: str
    """"explorer", or the track's id."""
    epochs: int
    batch_size: int
    classes: int
    lrs: tuple[float, ...] = LRS
    default_lr: float = 0.3
    data: DataSpec | None = None
    """kata's data (the explorer's), or None: the file's own make_data."""
    model: ModelSpec | None = None
    """kata's model (the explorer's), or None: the file's own make_model."""
    seed: int = 0
    optimizer: str = "sgd"

    def timeout(self) -> float:
        """Seconds one learning rate's run may take."""
        return 30.0 + 1.0 * self.epochs


EXPLORER = ExploreSetting(
    name="explorer", epochs=40, batch_size=16, classes=2, default_lr=0.3,
    data=DataSpec("make_moons", (("noise", 0.2),), n_samples=180, n_val=60, stratify=True),
    model=ModelSpec((2, 8, 2)),
)


def track_setting(track: Track) -> ExploreSetting:
    """A track's own setting: its data and model from the file, its batch size and epochs."""
    lr = track.thresholds.falls_lr
    lrs = LRS if lr in LRS else tuple(sorted({*LRS, lr}))
    return ExploreSetting(name=track.id, epochs=track.thresholds.epochs, batch_size=track.thresholds.batch_size,
                          classes=track.model.n_classes, lrs=lrs, default_lr=lr)


def steps_per_epoch(setting: ExploreSetting, n_train: int) -> list[int]:
    """The batch sizes of one epoch of the setting (without drop_last)."""
    full, rest = divmod(n_train, setting.batch_size)
    return [setting.batch_size] * full + ([rest] if rest else [])


# ---------------------------------------------------------------------------------------------
# in the child

def _data(loop, setting: ExploreSetting, track: Track, arrays=None):
    """(X_train, y_train, X_val, y_val, bounds, projection): the data trained on, and the grid's bounds (and plane,
    for more than two features), which always come
    from kata's own data (so both loops are drawn on one grid; ``arrays``: the track's, read by the parent where
    only it may: ``DataSpec.trusted``)."""

    if setting.data is not None:
        kata = split_of(setting.data, 0)
    else:
        kata = lesson_data(arrays) if arrays is not None else track.split(0)
    # more than two features: the boundary is drawn on the plane of the training set's first two principal
    # components (the page names it), the grid's cells taken back to the data's space for the model
    projection = projection_of(kata.X_train)
    bounds = bounds_around(kata.X_train, kata.X_val, projection=projection)
    if setting.data is not None:  # copies: the split is cached for the whole child
        return (*(t.clone() for t in kata.as_tuple()), bounds, projection)
    return (*loop.make_data(seed=0), bounds, projection)


def explore_run(loop, setting: ExploreSetting, lr: float, track: Track, arrays=None) -> dict[str, Any]:
    """One learning rate: the history ``fit`` returns, and a boundary frame before training and after every
    call of ``train_epoch``."""
    from torch import nn

    from checker.engine.worker import clean_history, make_track_loader, seed_globals

    seed = setting.seed
    seed_globals(seed)
    loop.seed_everything(seed=seed)
    X_train, y_train, X_val, y_val, bounds, projection = _data(loop, setting, track, arrays)
    loader = make_track_loader(loop, track, X_train, y_train, batch_size=setting.batch_size, seed=seed)
    model = setting.model.build(seed) if setting.model is not None else loop.make_model(seed=seed)
    optimizer = loop.make_optimizer(model, name=setting.optimizer, lr=lr)
    frames = [grid_frame(model, bounds, setting.classes, projection=projection)]
    most = 2 * setting.epochs + 1
    original = loop.train_epoch

    def train_epoch(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        finally:
            if len(frames) < most:
                frames.append(grid_frame(model, bounds, setting.classes, projection=projection))

    loop.train_epoch = train_epoch
    try:
        history = loop.fit(model, optimizer, loader, nn.CrossEntropyLoss(), setting.epochs, val=(X_val, y_val))
    finally:
        loop.train_epoch = original
    per_epoch = len(frames) > 1
    if not per_epoch:  # fit trains without train_epoch: the boundary after training only
        frames.append(grid_frame(model, bounds, setting.classes, projection=projection))
    rows, warnings = clean_history(history)
    return {"lr": lr, "history": rows[:most], "warnings": warnings, "frames": frames, "per_epoch": per_epoch,
            "points": points_of(X_train, y_train, X_val, y_val, projection=projection), "bounds": bounds.as_list(),
            "classes": setting.classes}


def _target(source: str, filename: str, setting: ExploreSetting, track: Track,
            arrays=None) -> Callable[[Reporter], None]:
    def target(rep: Reporter) -> None:
        from checker.engine.worker import describe_exception

        loop = loaded_loop(source, filename, track, rep)
        if loop is None:
            return
        for lr in setting.lrs:
            step = f"{STEP}{lr:g}"
            rep.start(step, timeout=setting.timeout())
            try:
                figures = explore_run(loop, setting, lr, track, arrays)
            except BaseException as exc:
                rep.send({"event": "raised", "check": step, "type": type(exc).__name__,
                          "error": describe_exception(exc, filename)})
                continue
            rep.send({"event": "figures", "figures": figures})

    return target


# ---------------------------------------------------------------------------------------------
# in the parent

@dataclass(frozen=True)
class LrRun:
    """One learning rate's run, every field checked."""

    lr: float
    history: tuple[dict[str, float | None], ...]
    """Rows of ``HISTORY_KEYS`` (a missing or non-numeric value is None; NaN and infinities stay)."""
    frames: tuple[bytes | None, ...]
    """The grid's cells before training, then after each epoch (None: the model gave no grid of numbers)."""
    per_epoch: bool
    """False when the file's fit trains without its train_epoch: one frame, after training."""
    points: Points | None
    bounds: Bounds
    warnings: tuple[str, ...] = ()


@dataclass
class Explored:
    """What one loop gave: a run per learning rate, or why a learning rate has none."""

    name: str
    runs: dict[float, LrRun] = field(default_factory=dict)
    errors: dict[float, str | Message] = field(default_factory=dict)
    """Why a learning rate has no run: the loop's own error (a traceback), or kata's words in both languages."""

    def error(self) -> str | Message | None:
        """One error that stands for the loop, when no learning rate gave a run."""
        if self.runs or not self.errors:
            return None
        return next(iter(self.errors.values()))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def parse_run(figures: dict[str, Any], setting: ExploreSetting) -> LrRun:
    """A child's figures for one learning rate, as an ``LrRun``; ``BadFigures`` when any field is off."""
    keys = {"lr", "history", "warnings", "frames", "per_epoch", "points", "bounds", "classes"}
    if set(figures) != keys:
        raise BadFigures("a run's figures have the wrong fields")
    lr = figures["lr"]
    if lr not in setting.lrs or isinstance(lr, bool):
        raise BadFigures("a run at a learning rate nobody asked for")
    if classes_of(figures["classes"]) != setting.classes:
        raise BadFigures("a run with another number of classes")
    most = 2 * setting.epochs + 1
    history = figures["history"]
    if not isinstance(history, list) or len(history) > most or not all(isinstance(r, dict) for r in history):
        raise BadFigures(f"a history must be a list of at most {most} rows")
    rows = tuple({k: _number(row.get(k)) for k in HISTORY_KEYS} for row in history)
    frames = figures["frames"]
    if not isinstance(frames, list) or not 1 <= len(frames) <= most + 1:
        raise BadFigures("a run's frames must be a list of one per epoch")
    if not isinstance(figures["per_epoch"], bool):
        raise BadFigures("per_epoch must be true or false")
    warnings = figures["warnings"]
    if not isinstance(warnings, list) or len(warnings) > 5 or not all(isinstance(w, str) for w in warnings):
        raise BadFigures("warnings must be a few texts")
    return LrRun(lr=float(lr), history=rows, frames=tuple(frame_bytes(f, setting.classes) for f in frames),
                 per_epoch=figures["per_epoch"], points=parse_points(figures["points"], setting.classes),
                 bounds=bounds_of(figures["bounds"]), warnings=tuple(w[:300] for w in warnings))


def _said(message: Message, **params: Any) -> Message:
    """``message`` filled in both languages (rendered in the learner's when shown)."""
    return Message(message.render("en", **params), message.render("es", **params))


def _lr_of(step: Any) -> float | None:
    if isinstance(step, str) and step.startswith(STEP):
        try:
            return float(step[len(STEP):])
        except ValueError:
            return None
    return None


REFUSED = Message("{name}: kata refused what the run sent back ({why})",
                  "{name}: kata rechazó lo que devolvió la ejecución ({why})")
STOPPED = Message("{name}: the run was stopped: {what}", "{name}: se detuvo la ejecución: {what}")
SLOW = Message("{name}: the run at lr {lr:g} did not finish within {seconds:g} s",
               "{name}: la ejecución con lr {lr:g} no terminó en {seconds:g} s")
NOT_RUN = Message("{name}: not run (the run at lr {lr:g} did not finish)",
                  "{name}: sin ejecutar (la ejecución con lr {lr:g} no terminó)")
SLOW_LOAD = Message("{name}: loading the file did not finish within {seconds:g} s",
                    "{name}: la carga del archivo no terminó en {seconds:g} s")
ENDED = Message("{name}: the process running the loop ended early (exit status {status})",
                "{name}: el proceso que ejecutaba el bucle terminó antes de tiempo (estado de salida {status})")


def _collect(outcome, name: str, setting: ExploreSetting) -> Explored:
    """A child's events as runs and errors; a file that cannot be loaded raises RunFailed(file_error=True)."""
    found = Explored(name)
    by_step = {f"{STEP}{lr:g}": lr for lr in setting.lrs}
    for event in outcome.events:
        if event.kind is Kind.FILE_ERROR:
            raise RunFailed(Message(en=event.message, es=event.es or event.message), file_error=True)
        if event.kind is Kind.FIGURES:
            try:
                run = parse_run(event.figures, setting)
            except BadFigures as exc:
                found.runs.clear()
                found.errors = {lr: _said(REFUSED, name=name, why=str(exc)) for lr in setting.lrs}
                return found
            found.runs[run.lr] = run
        elif event.kind is Kind.RAISED and event.check in by_step:
            found.errors[by_step[event.check]] = event.error
        elif event.kind is Kind.TAMPERED:
            found.runs.clear()
            found.errors = {lr: _said(STOPPED, name=name, what="; ".join(event.what)) for lr in setting.lrs}
            return found
    missing = [lr for lr in setting.lrs if lr not in found.runs and lr not in found.errors]
    if missing:
        stuck = _lr_of(outcome.timed_out_step)
        if stuck is not None and stuck in missing:
            found.errors[stuck] = _said(SLOW, name=name, lr=stuck, seconds=setting.timeout())
            why = _said(NOT_RUN, name=name, lr=stuck)
        elif outcome.timed_out_step:
            why = _said(SLOW_LOAD, name=name, seconds=LOAD_TIMEOUT)
        else:
            why = _said(ENDED, name=name, status=outcome.exit_status)
        for lr in missing:
            found.errors.setdefault(lr, why)
    return found


def explore_files(mine: tuple[str, str] | None, reference: tuple[str, str], setting: ExploreSetting,
                  track: Track) -> tuple[Explored | None, Explored]:
    """(the file's runs, the reference's runs), each loop in its own child, both at once.

    ``mine`` and ``reference``: (source, filename). A file that cannot be loaded raises RunFailed with
    ``file_error`` set; a reference that gives nothing raises RunFailed.
    """
    sources: Sequence[tuple[str, str]] = [s for s in (mine, reference) if s is not None]
    hide = hidden_paths(submission_folders([name for _, name in sources]))
    limits = Limits(step_timeout=max(setting.timeout(), LOAD_TIMEOUT), hide=hide, shared_files=shared_files(track))
    arrays = None
    if setting.data is None and track.data.trusted:  # a course's file, the reference's make_data: read here
        try:
            arrays = arrays_of(track.data, 0)
        except TrackError as exc:
            raise RunFailed(str(exc)) from None
    # a fixed total: the load, then one run per learning rate
    seconds = LOAD_TIMEOUT + len(setting.lrs) * limits.step_timeout
    jobs = [Job(Task("checker.runs.explore:_target", (src, name, setting, track, arrays)), limits, tag=i,
                seconds=seconds) for i, (src, name) in enumerate(sources)]
    found: dict[int, Explored] = {}
    for outcome in run_jobs(jobs, workers=2):
        i = outcome.job.tag
        found[i] = _collect(outcome, sources[i][1], setting)
    ref = found[len(sources) - 1]
    if not ref.runs:
        error = ref.error()
        raise RunFailed(f"the reference gave no run: {error.render('en') if isinstance(error, Message) else error}")
    return (found[0] if mine is not None else None), ref

