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
from checker.loopfile.loading import read_loop_file
from checker.sandbox.events import Kind
from checker.sandbox.jobs import Job, Limits, Reporter, run_jobs
from checker.sandbox.zygote import Task
from checker.setting.tracks import hidden_paths, submission_folders

LOAD_TIMEOUT = 20.0


class RunFailed(Exception):
    """A run did not give its figures; the message says why (the file's own error, a time-out...)."""

    def __init__(self, message: str, *, file_error: bool = False):
        super().__init__(message)
        self.message = message
        self.file_error = file_error


@dataclass
class RunResult:
    """What one run measured."""

    name: str
    history: list[dict]
    warnings: list[str] = field(default_factory=list)
    steps: list[int | None] = field(default_factory=list)
    """optimizer steps taken in each epoch (None where the file's fit does not call train_epoch)"""


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
    from checker.grade.worker import run_lesson

    seed, loader_seed, model_seed = settings.seed, settings.loader_seed, settings.model_seed
    steps, undo = _count_steps(loop)
    try:
        driven = loop if (loader_seed, model_seed) == (seed, seed) else _Seeds(loop, loader_seed, model_seed)
        history, warnings = run_lesson(driven, replace(settings, seed=model_seed), lab)
    finally:
        undo()
    counted: list[int | None] = list(steps) if len(steps) == len(history) else [None] * len(history)
    return {"history": history, "warnings": warnings, "steps": counted}


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
    from checker.grade.worker import make_track_loader

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


def _target(source: str, filename: str, what: str, settings: RunSettings | TraceSettings,
            lab) -> Callable[[Reporter], None]:
    def target(rep: Reporter) -> None:
        from checker.base.errors import LoopFileError
        from checker.grade.worker import child_setup, describe_exception
        from checker.loopfile.loading import load_loop

        child_setup()
        rep.start("load", timeout=LOAD_TIMEOUT)
        try:
            loop = load_loop(source, filename, lab.track if lab is not None else None)
        except LoopFileError as exc:
            rep.send({"event": "file_error", "kind": exc.kind, "message": exc.message})
            return
        rep.send({"event": "loaded"})
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


def measure(sources: Sequence[tuple[str, str]], settings_list: Sequence[RunSettings | TraceSettings], lab,
            what: str = "run") -> list[dict[str, Any]]:
    """Run every (source, filename) with the settings at the same index, two children at a time.

    The figures in the order given; RunFailed (``file_error`` set when the file cannot be loaded)
    as soon as one run gives none.
    """
    hide = hidden_paths(submission_folders([name for _, name in sources]))
    jobs = [Job(Task("checker.grade.runs:_target", (src, name, what, settings, lab)),
                Limits(step_timeout=_seconds(settings), hide=hide), tag=i)
            for i, ((src, name), settings) in enumerate(zip(sources, settings_list, strict=True))]
    found: dict[int, dict[str, Any]] = {}
    for outcome in run_jobs(jobs, workers=2):
        i = outcome.job.tag
        name = sources[i][1]
        events = {e.kind: e for e in outcome.events}
        if Kind.FILE_ERROR in events:
            raise RunFailed(events[Kind.FILE_ERROR].message, file_error=True)
        if Kind.FIGURES in events:
            found[i] = events[Kind.FIGURES].figures
            continue
        if Kind.RAISED in events:
            raise RunFailed(f"{name}: the run stopped because the loop raised an error\n{events[Kind.RAISED].error}")
        if Kind.TAMPERED in events:
            raise RunFailed(f"{name}: the run was stopped: {'; '.join(events[Kind.TAMPERED].what)}")
        if outcome.timed_out_step:
            raise RunFailed(f"{name}: the run did not finish within {_seconds(settings_list[i]):g} s")
        raise RunFailed(f"{name}: the process running the loop ended early (exit status {outcome.exit_status})")
    return [found[i] for i in range(len(jobs))]


def run_files(sources: Sequence[tuple[str, str]], settings: RunSettings, lab) -> list[RunResult]:
    """Each file trained with the same settings, side by side."""
    figures = measure(sources, [settings] * len(sources), lab)
    return [RunResult(name, f["history"], f["warnings"], f["steps"]) for (_, name), f in zip(sources, figures,
                                                                                             strict=True)]


# ---------------------------------------------------------------------------------------------
# for the command line

def run_sources(path: str | None, lesson: bool, *more: str | None, track=None,
                lang: str | None = None) -> list[tuple[str, str]]:
    """(source, filename) for PATH or the lesson's loop (``track``'s reference), then for each further path
    (``lang``: the language of a problem's message)."""
    if lesson == (path is not None):
        raise UsageProblem("give a loop file (PATH) or --lesson, one of the two")
    if lesson:
        from checker.setting.tracks import get_track

        first = ((track or get_track()).reference.read_text(encoding="utf-8"), "lesson-loop.py")
    else:
        first = read_loop_file(path, lang)
    return [first, *(read_loop_file(p, lang) for p in more if p)]


def figures_or_usage_error(call):
    """``call()``'s figures; a run that gives none becomes a usage error (exit 2) or a failure (exit 1)."""
    try:
        return call()
    except RunFailed as exc:
        if exc.file_error:
            raise UsageProblem(exc.message) from None
        raise Failure(exc.message) from None
