"""Calling a project's function by binding its parameters by name.

``train(args, model, device, train_loader, optimizer, epoch)`` gets the model kata built, the device, the
loader kata wraps, the optimizer it watches, the epoch number, and ``args`` from what the project passed as
``bind``. A parameter kata cannot fill (and that has no default) is one clear error naming it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from checker.base.i18n import Message
from checker.project.report import ProjectInputError

ALIASES: dict[str, tuple[str, ...]] = {
    "model": ("model", "net", "network", "module"),
    "loader": ("loader", "train_loader", "dataloader", "data_loader", "train_dataloader", "trainloader",
               "test_loader", "val_loader", "valid_loader", "eval_loader", "test_dataloader", "val_dataloader",
               "testloader", "iterator", "batches"),
    "optimizer": ("optimizer", "opt", "optim"),
    "loss_fn": ("loss_fn", "criterion", "loss_func", "loss_function", "lossfn"),
    "device": ("device", "dev"),
    "scheduler": ("scheduler", "sched", "lr_scheduler"),
    "epoch": ("epoch", "ep", "epoch_idx"),
    "clip_norm": ("clip_norm", "max_norm", "clip", "grad_clip", "max_grad_norm", "clip_grad_norm"),
    "dataset": ("dataset", "data", "ds", "train_dataset", "train_data"),
    "batch_size": ("batch_size", "bs"),
    "seed": ("seed",),
    "generator": ("generator", "rng", "g"),
    "params": ("params", "parameters"),
}
"""For each piece kata hands over, the parameter names it binds to."""

_BY_NAME = {alias: piece for piece, names in ALIASES.items() for alias in names}

UNBINDABLE = Message(
    en="{function}{signature}: kata cannot tell what to pass as '{name}' (it binds {known} by name). Pass it "
    "as bind={{'{name}': ...}}, or wrap {function} in a small lambda taking the pieces kata names",
    es="{function}{signature}: kata no sabe qué pasar como '{name}' (enlaza {known} por su nombre). Pásalo "
    "como bind={{'{name}': ...}}, o envuelve {function} en una lambda corta que reciba las piezas que kata "
    "nombra",
)
NOT_CALLABLE = Message(
    en="{what} must be a function (or a class) kata can call; got {got}",
    es="{what} debe ser una función (o una clase) que kata pueda llamar; se recibió {got}",
)
NO_SIGNATURE = Message(
    en="{function}: kata cannot read its parameters (inspect.signature failed: {error}); wrap it in a lambda",
    es="{function}: kata no puede leer sus parámetros (inspect.signature falló: {error}); envuélvela en una "
       "lambda",
)


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


def signature_of(fn: Callable, what: str) -> inspect.Signature:
    if not callable(fn):
        raise ProjectInputError(NOT_CALLABLE, what=what, got=type(fn).__name__)
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ProjectInputError(NO_SIGNATURE, function=_name(fn), error=str(exc)) from None


def takes(fn: Callable, piece: str) -> bool:
    """Whether ``fn`` has a parameter kata binds to ``piece`` (by one of its names)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return any(_BY_NAME.get(name) == piece for name in params)


def bind(fn: Callable, what: str, pieces: Mapping[str, Any], extra: Mapping[str, Any]) -> tuple[list, dict]:
    """The positional and keyword arguments to call ``fn`` with: each parameter from ``extra`` (by its exact
    name) or the piece its name stands for; parameters with a default kata has no piece for keep it."""
    sig = signature_of(fn, what)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in extra:
            value = extra[name]
        elif _BY_NAME.get(name) in pieces:
            value = pieces[_BY_NAME[name]]
        elif param.default is not param.empty:
            continue
        else:
            known = ", ".join(sorted({n for n, p in _BY_NAME.items() if p in pieces}))
            raise ProjectInputError(UNBINDABLE, function=_name(fn), signature=str(sig), name=name, known=known)
        if param.kind is param.POSITIONAL_ONLY:
            args.append(value)
        else:
            kwargs[name] = value
    return args, kwargs
