"""Running a project's own loop under kata's instruments, in the project's process (trusted code).

:func:`check_loop` builds the pieces from the project's factories, runs its training function for a couple of
epochs (and its evaluation function after each) on a small slice of its data with every instrument on, then
a few short runs more (overfitting a handful of examples, the same seed twice, the loader's order), and hands
the observations to :mod:`checker.project.checks`, which judge them.
"""

from __future__ import annotations

import copy
import gc
import math
import random
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from checker.base.i18n import Message
from checker.project import checks
from checker.project.binding import bind, signature_of, takes
from checker.project.checks import OVERFIT_RATIO
from checker.project.frames import Place, place_of, project_frame, traceback_place
from checker.project.observe import Log, ModelProbe, WatchedLoader, watch_optimizer, watch_scheduler, watching_backward
from checker.project.report import ProjectInputError, Report

RAISED = Message(
    en="{where}{function}() raised {error}: {detail}. kata ran it with {given}; fix the pieces handed to kata "
    "(data shaped as the model expects, a factory that returns what its name says) or the code at that line",
    es="{where}{function}() lanzó {error}: {detail}. kata la ejecutó con {given}; corrige las piezas que le "
    "pasas a kata (datos con la forma que espera el modelo, una fábrica que devuelva lo que su nombre dice) o "
    "el código de esa línea",
)
BAD_DATA = Message(
    en="data must be a torch Dataset (with __len__ and __getitem__) or a tuple of tensors with the same first "
    "dimension, holding at least 2 examples; got {got}",
    es="data debe ser un Dataset de torch (con __len__ y __getitem__) o una tupla de tensores con la misma "
    "primera dimensión, con al menos 2 ejemplos; se recibió {got}",
)
NOT_A_MODEL = Message(
    en="model must be an nn.Module or a function returning one; it gave {got}",
    es="model debe ser un nn.Module o una función que devuelva uno; devolvió {got}",
)
NOT_AN_OPTIMIZER = Message(
    en="optimizer must be a function of the model (or of its parameters) returning a torch.optim.Optimizer; it "
    "gave {got}",
    es="optimizer debe ser una función del modelo (o de sus parámetros) que devuelva un torch.optim.Optimizer; "
    "devolvió {got}",
)


@dataclass
class Pieces:
    """What the project handed over (see :func:`check_loop`)."""

    model: Any
    data: Any
    optimizer: Callable
    train: Callable
    evaluate: Callable | None = None
    loader: Callable | None = None
    eval_data: Any = None
    loss_fn: Any = None
    scheduler: Callable | None = None
    clip_norm: float | None = None
    device: str = "cpu"
    batch_size: int = 16
    seed: int = 0
    examples: int | None = None
    epochs: int = 2
    bind: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    """One instrumented run: the log, what the training function returned each epoch, the final weights."""

    log: Log
    returns: list[Any]
    batches: list[int]
    final: list[Any]
    cuda_bytes: list[int] = field(default_factory=list)
    stale_after: list[list] = field(default_factory=list)
    """Per epoch from the second: the graphs of earlier epochs still alive after it."""


# ---------------------------------------------------------------------------- building the pieces


def seed_all(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def as_dataset(data: Any):
    """A Dataset from what the project passed as ``data``."""
    import torch
    from torch.utils.data import Dataset, TensorDataset

    if isinstance(data, tuple | list) and data and all(isinstance(t, torch.Tensor) for t in data):
        if len({int(t.shape[0]) if t.dim() else -1 for t in data}) != 1 or data[0].dim() == 0:
            raise ProjectInputError(BAD_DATA, got="tensors of first dimensions "
                                    + ", ".join(str(tuple(t.shape)) for t in data))
        data = TensorDataset(*data)
    if not isinstance(data, Dataset) or not hasattr(data, "__len__"):
        raise ProjectInputError(BAD_DATA, got=type(data).__name__)
    if len(data) < 2:
        raise ProjectInputError(BAD_DATA, got=f"{len(data)} example(s)")
    return data


@contextmanager
def project_code(function: Callable | str, given: str) -> Any:
    """Any exception the project's code raises becomes one clear line at the project's line that raised."""
    try:
        yield
    except ProjectInputError:
        raise
    except Exception as exc:  # the project's own error, said in one line at its place
        place = traceback_place(exc)
        name = function if isinstance(function, str) else getattr(function, "__name__", "the function")
        raise ProjectInputError(RAISED, where=f"{place}: " if place else "", function=name,
                                error=type(exc).__name__, detail=str(exc).splitlines()[0] if str(exc) else "",
                                given=given) from None


def call(fn: Callable, what: str, pieces: dict[str, Any], extra: Mapping[str, Any]) -> Any:
    args, kwargs = bind(fn, what, pieces, extra)
    given = ", ".join(sorted(kwargs)) or "no arguments"
    with project_code(fn, given):
        return fn(*args, **kwargs)


def build_model(p: Pieces):
    from torch import nn

    if isinstance(p.model, nn.Module):
        model = copy.deepcopy(p.model)
    else:
        signature_of(p.model, "model")
        model = call(p.model, "model", {"device": p.device, "seed": p.seed}, p.bind)
    if not isinstance(model, nn.Module):
        raise ProjectInputError(NOT_A_MODEL, got=type(model).__name__)
    return model.to(p.device)


def build_optimizer(p: Pieces, model):
    import torch

    opt = call(p.optimizer, "optimizer", {"model": model, "params": model.parameters()}, p.bind)
    if not isinstance(opt, torch.optim.Optimizer):
        raise ProjectInputError(NOT_AN_OPTIMIZER, got=type(opt).__name__)
    return opt


def build_loader(p: Pieces, dataset, *, seed: int, batch_size: int | None = None, shuffle: bool = True):
    """The project's loader factory on ``dataset`` (else a plain shuffled DataLoader), and where the factory
    built its DataLoader."""
    import torch
    from torch.utils.data import DataLoader

    batch_size = batch_size or p.batch_size
    if p.loader is None:
        return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                          generator=torch.Generator().manual_seed(seed)), None
    places: list[Place | None] = []
    original = DataLoader.__init__

    def init(self, *args, **kwargs):
        places.append(project_frame(2))
        original(self, *args, **kwargs)

    DataLoader.__init__ = init
    try:
        loader = call(p.loader, "loader", {"dataset": dataset, "batch_size": batch_size, "seed": seed,
                                           "generator": torch.Generator().manual_seed(seed)}, p.bind)
    finally:
        DataLoader.__init__ = original
    return loader, (places[0] if places else place_of(p.loader))


# ---------------------------------------------------------------------------- the runs


def _subset(dataset, n: int):
    from torch.utils.data import Subset

    return dataset if n >= len(dataset) else Subset(dataset, range(n))


def _epoch(p: Pieces, log: Log, pieces: dict[str, Any], eval_loader, epoch: int) -> Any:
    log.epoch, log.phase = epoch, "train"
    result = call(p.train, "train", {**pieces, "epoch": epoch}, p.bind)
    log.phase = "eval"
    if p.evaluate is not None:
        call(p.evaluate, "evaluate", {**pieces, "loader": eval_loader, "epoch": epoch}, p.bind)
    else:  # as an evaluation would leave it: a train() that forgets model.train() shows
        pieces["model"].eval()
    return result


def instrumented_run(p: Pieces, train_set, eval_set) -> Run:
    """The main run: ``p.epochs`` epochs with every instrument on."""
    import torch

    seed_all(p.seed)
    model = build_model(p)
    optimizer = build_optimizer(p, model)
    scheduler = call(p.scheduler, "scheduler", {"optimizer": optimizer}, p.bind) if p.scheduler else None
    log = Log()
    log.params, log.own_grads = list(model.parameters()), True
    handle = watch_optimizer(optimizer, model, log)
    probe = ModelProbe(model, log)
    if scheduler is not None:
        watch_scheduler(scheduler, log)
    loader = WatchedLoader(build_loader(p, train_set, seed=p.seed)[0], log, tag_batches=True)
    eval_loader = WatchedLoader(build_loader(p, eval_set, seed=p.seed + 1, shuffle=False)[0], log,
                                tag_batches=True)
    pieces = {"model": model, "loader": loader, "optimizer": optimizer, "loss_fn": p.loss_fn,
              "device": torch.device(p.device), "scheduler": scheduler, "clip_norm": p.clip_norm}
    run = Run(log, [], [], [])
    try:
        with watching_backward(log):
            for epoch in range(1, p.epochs + 1):
                run.returns.append(_epoch(p, log, pieces, eval_loader, epoch))
                gc.collect()
                run.stale_after.append(log.graphs.alive_from(set(range(1, epoch))))
                if torch.device(p.device).type == "cuda":
                    torch.cuda.synchronize()
                    run.cuda_bytes.append(int(torch.cuda.memory_allocated()))
    finally:
        handle.remove()
        probe.remove()
    run.batches = [len(loader)] * p.epochs
    run.final = [t.detach().cpu().clone() for t in model.parameters()]
    return run


def plain_run(p: Pieces, train_set, epochs: int = 1) -> list[Any]:
    """Training only, no instrument: the weights after ``epochs`` epochs from the run's seed."""
    import torch

    seed_all(p.seed)
    model = build_model(p)
    optimizer = build_optimizer(p, model)
    scheduler = call(p.scheduler, "scheduler", {"optimizer": optimizer}, p.bind) if p.scheduler else None
    loader = build_loader(p, train_set, seed=p.seed)[0]
    pieces = {"model": model, "loader": loader, "optimizer": optimizer, "loss_fn": p.loss_fn,
              "device": torch.device(p.device), "scheduler": scheduler, "clip_norm": p.clip_norm}
    for epoch in range(1, epochs + 1):
        call(p.train, "train", {**pieces, "epoch": epoch}, p.bind)
    return [t.detach().cpu().clone() for t in model.parameters()]


OVERFIT_EXAMPLES = 8
OVERFIT_EPOCHS = 100


class _Unscheduled:
    """Handed as the scheduler while overfitting: its ``step()`` leaves the learning rate alone."""

    def step(self, *args, **kwargs) -> None:
        pass

    def get_last_lr(self) -> list[float]:
        return []


def overfit_run(p: Pieces, dataset) -> tuple[list[float], Place | None]:
    """The losses the project's loop computed while training on its first few examples, one batch an epoch,
    until the loss falls under a tenth of where it started (or ``OVERFIT_EPOCHS`` epochs); and the line of the
    last ``backward()`` seen."""
    import torch

    seed_all(p.seed)
    few = _subset(dataset, OVERFIT_EXAMPLES)
    model = build_model(p)
    optimizer = build_optimizer(p, model)
    loader = build_loader(p, few, seed=p.seed, batch_size=len(few))[0]
    log = Log()
    # no schedule (a scheduler whose step() does nothing), a clip norm that never binds: whether the steps learn
    pieces = {"model": model, "loader": loader, "optimizer": optimizer, "loss_fn": p.loss_fn,
              "device": torch.device(p.device), "scheduler": _Unscheduled() if p.scheduler else None,
              "clip_norm": math.inf if p.clip_norm is not None else None}
    losses: list[float] = []
    with watching_backward(log):
        for epoch in range(1, OVERFIT_EPOCHS + 1):
            before = len(log.events)
            call(p.train, "train", {**pieces, "epoch": epoch}, p.bind)
            values = [e.data.get("value") for e in log.events[before:] if e.kind == "backward"]
            if values and values[-1] is not None:
                losses.append(values[-1])
            if losses and (losses[0] <= 0 or losses[-1] <= OVERFIT_RATIO * losses[0]):
                break
    seen = log.of("backward")
    return losses, seen[-1].place if seen else None


def check_loop(
    *, model: Any, data: Any, optimizer: Callable, train: Callable, evaluate: Callable | None = None,
    loader: Callable | None = None, eval_data: Any = None, loss_fn: Any = None, scheduler: Callable | None = None,
    clip_norm: float | None = None, device: str = "cpu", batch_size: int = 16, seed: int = 0,
    examples: int | None = None, bind: Mapping[str, Any] | None = None,
) -> Report:
    """Run kata's reference-free checks on a project's own training loop; the report says each at its line."""
    p = Pieces(model=model, data=data, optimizer=optimizer, train=train, evaluate=evaluate, loader=loader,
               eval_data=eval_data, loss_fn=loss_fn, scheduler=scheduler, clip_norm=clip_norm, device=str(device),
               batch_size=int(batch_size), seed=int(seed), examples=examples, bind=dict(bind or {}))
    for fn, what in ((train, "train"), (optimizer, "optimizer"), (evaluate, "evaluate"), (loader, "loader"),
                     (scheduler, "scheduler")):
        if fn is not None:
            signature_of(fn, what)
    dataset = as_dataset(data)
    n = examples or 3 * p.batch_size + p.batch_size // 2  # a short last batch: a mean over batches shows
    train_set = _subset(dataset, n)
    eval_set = _subset(as_dataset(eval_data), n) if eval_data is not None else train_set
    return judge_all(p, train_set, eval_set)


def _orders(loader, epochs: int = 2) -> list[list[int]] | None:
    sampler = getattr(loader, "batch_sampler", None)
    if sampler is None:
        return None
    return [[int(i) for batch in sampler for i in batch] for _ in range(epochs)]


def loader_orders(p: Pieces, dataset) -> tuple[dict | None, Place | None]:
    """The first two epochs' orders of the project's loader factory: at the run's seed twice (the global random
    state scrambled in between when the factory takes a seed, else seeded through it) and at the next seed."""
    from checker.setting.instruments import scramble_global_rng

    if p.loader is None:
        return None, None
    seeded = takes(p.loader, "seed") or takes(p.loader, "generator")
    orders, place = {}, None
    for key, seed, scramble in (("a", p.seed, 1), ("b", p.seed, 2), ("c", p.seed + 1, 3)):
        if seeded:
            scramble_global_rng(scramble)
        else:
            seed_all(seed)
        loader, place = build_loader(p, dataset, seed=seed)
        orders[key] = _orders(loader)
    return orders, place


def judge_all(p: Pieces, train_set, eval_set) -> Report:
    run = instrumented_run(p, train_set, eval_set)
    results = checks.judge_run(p, run)
    results.append(checks.overfit(p, overfit_run(p, train_set), min(OVERFIT_EXAMPLES, len(train_set))))
    results.append(checks.repro(p, plain_run(p, train_set), plain_run(p, train_set)))
    orders, place = loader_orders(p, train_set)
    results += checks.loader_checks(p, orders, len(train_set), place)
    return Report(results)
