"""The instruments of the trusted runner: they watch the project's own model, optimizer and data.

Nothing here asks the project's code to change. Every instrument writes an event, with the project's line
where it happened (:func:`checker.project.frames.project_frame`), on one :class:`Log`:

- :class:`WatchedLoader`: delegates to the loader kata built (or the project's factory did); each ``iter()``
  starts an epoch, each batch is counted (its number of examples) and, when ``tag``, its tensors are
  :class:`~checker.setting.instruments.HostTensor` so a batch that skips ``.to(device)`` is seen;
- :func:`watch_optimizer`: a step pre-hook (``Optimizer.register_step_pre_hook``) recording the gradients
  ``step()`` is about to use, and the model's mode;
- :func:`watching_backward`: ``torch.Tensor.backward`` wrapped for the block: each loss's value, its own
  gradient with respect to the model (``torch.autograd.grad``, ``.grad`` untouched), whether it came from a
  batch left on the host, and its graph tagged for :class:`Graphs`;
- :class:`ModelProbe`: forward hooks recording mode, graph building and inputs left on the host;
- :func:`watch_scheduler`: the scheduler's ``step()`` recorded.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from checker.project.frames import Place, project_frame
from checker.setting.instruments import is_tagged, tag


@dataclass
class Event:
    kind: str
    """'epoch', 'batch', 'forward', 'backward', 'step', 'sched'."""
    epoch: int
    phase: str
    """'train' or 'eval': which of the project's functions was running."""
    place: Place | None
    data: dict[str, Any] = field(default_factory=dict)


class Log:
    """The ordered events of one run; ``epoch`` counts the training calls, ``phase`` says which function runs."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.epoch = 0
        self.phase = "train"
        self.graphs = Graphs()
        self.params: list[torch.Tensor] = []
        self.own_grads = False
        self.last_n: int | None = None
        """The number of examples in the latest batch the loader handed out."""
        """When True, each backward() also takes the loss's own gradient with respect to ``params``."""

    def add(self, kind: str, place: Place | None = None, **data: Any) -> Event:
        event = Event(kind, self.epoch, self.phase, place, data)
        self.events.append(event)
        return event

    def of(self, kind: str, phase: str | None = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (phase is None or e.phase == phase)]


# ---------------------------------------------------------------------------- batches


def _tag_all(batch: Any) -> Any:
    if isinstance(batch, torch.Tensor):
        return tag(batch)
    if isinstance(batch, tuple | list):
        return type(batch)(_tag_all(b) for b in batch) if not hasattr(batch, "_fields") else \
            type(batch)(*(_tag_all(b) for b in batch))
    if isinstance(batch, dict):
        return {k: _tag_all(v) for k, v in batch.items()}
    return batch


def _tensors(batch: Any) -> list[torch.Tensor]:
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, tuple | list):
        return [t for b in batch for t in _tensors(b)]
    if isinstance(batch, dict):
        return [t for b in batch.values() for t in _tensors(b)]
    return []


def batch_size(batch: Any) -> int:
    """How many examples a batch holds: the most common first dimension among its tensors (a text batch's
    labels and offsets outvote its flat tokens); the smaller size on a tie."""
    sizes = [int(t.shape[0]) for t in _tensors(batch) if t.dim() > 0]
    if not sizes:
        return 1
    return min(set(sizes), key=lambda s: (-sizes.count(s), s))


class WatchedLoader:
    """The loader handed to the project's functions: it behaves as the one it wraps (``len``, ``dataset``,
    ``batch_size``... delegate), and logs each epoch and batch."""

    def __init__(self, loader: Any, log: Log, *, tag_batches: bool = False, start_epochs: bool = True):
        self._loader = loader
        self._log = log
        self._tag = tag_batches
        self._start = start_epochs

    def __len__(self) -> int:
        return len(self._loader)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def __iter__(self) -> Iterator[Any]:
        self._log.add("epoch")
        for batch in self._loader:
            self._log.last_n = batch_size(batch)
            self._log.add("batch", n=self._log.last_n)
            yield _tag_all(batch) if self._tag else batch


# ---------------------------------------------------------------------------- graphs


class _Token:
    __slots__ = ("__weakref__",)


class Graphs:
    """Which autograd graphs of the run are still alive: a token kept in a graph node's ``metadata`` dies
    exactly with the node, wherever the last reference to it was (a local, a list, a running total)."""

    def __init__(self) -> None:
        self.live: dict[int, tuple[int, str, Place | None]] = {}
        self.count = 0

    def tag(self, tensor: Any, what: str, epoch: int, place: Place | None) -> None:
        node = getattr(tensor, "grad_fn", None)
        if node is None or "kata_graph" in node.metadata:
            return
        self.count += 1
        token = _Token()
        node.metadata["kata_graph"] = token
        self.live[self.count] = (epoch, what, place)
        weakref.finalize(token, self.live.pop, self.count, None)

    def alive_from(self, epochs: set[int]) -> list[tuple[int, str, Place | None]]:
        return [v for v in list(self.live.values()) if v[0] in epochs]


# ---------------------------------------------------------------------------- model


class ModelProbe:
    """Forward hooks on the project's model: one ``forward`` event per call of the whole model."""

    def __init__(self, model: nn.Module, log: Log):
        self.log = log
        self._handles = [model.register_forward_pre_hook(self._pre, with_kwargs=True),
                         model.register_forward_hook(self._post)]
        self._pending: list[dict[str, Any]] = []

    def _pre(self, module, args, kwargs) -> None:
        inputs = _tensors(list(args) + list(kwargs.values()))
        self._pending.append({"tagged": any(is_tagged(t) for t in inputs), "place": project_frame(2)})

    def _post(self, module, args, output) -> None:
        info = self._pending.pop() if self._pending else {"tagged": False, "place": project_frame(2)}
        outs = _tensors(output)
        self.log.add("forward", info["place"], training=any(m.training for m in module.modules()),
                     graph=any(t.requires_grad for t in outs), tagged=info["tagged"])
        for t in outs:
            self.log.graphs.tag(t, "output", self.log.epoch, info["place"])

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


# ---------------------------------------------------------------------------- optimizer and scheduler


def _flat(grads: list[torch.Tensor | None], params: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([
        (g.detach().double().reshape(-1) if g is not None
         else torch.zeros(p.numel(), dtype=torch.float64, device=p.device))
        for g, p in zip(grads, params, strict=True)
    ]).cpu()


def watch_optimizer(optimizer: torch.optim.Optimizer, model: nn.Module, log: Log):
    """Record, at every ``step()``, the gradients it is about to use; returns the hook's handle."""

    def pre(opt, args, kwargs) -> None:
        params = log.params
        grads = [p.grad for p in params]
        log.add("step", project_frame(2), grad=_flat(grads, params) if log.own_grads else None,
                missing=all(g is None or not bool(g.ne(0).any()) for g in grads),
                training=all(m.training for m in model.modules()))

    return optimizer.register_step_pre_hook(pre)


def watch_scheduler(scheduler: Any, log: Log) -> None:
    """The scheduler's ``step()`` (from now on) writes a ``sched`` event at the project's line that called it."""
    inner = scheduler.step

    def step(*args, **kwargs):
        log.add("sched", project_frame(2))
        return inner(*args, **kwargs)

    scheduler.step = step


# ---------------------------------------------------------------------------- backward


@contextmanager
def watching_backward(log: Log) -> Iterator[None]:
    """``Tensor.backward`` writes a ``backward`` event while the block runs (then is restored)."""
    original = torch.Tensor.backward
    inside: list[bool] = []

    def backward(self, *args, **kwargs):
        if inside:  # a tensor subclass's __torch_function__ calls Tensor.backward again: one backward, one event
            return original(self, *args, **kwargs)
        inside.append(True)
        try:
            return observed(self, *args, **kwargs)
        finally:
            inside.pop()

    def observed(self, *args, **kwargs):
        place = project_frame(2)
        data: dict[str, Any] = {"tagged": is_tagged(self), "n": log.last_n}
        if self.dim() == 0 or self.numel() == 1:
            data["value"] = float(self.detach().reshape(-1)[0])
        if log.own_grads and log.params:
            if self.requires_grad:
                grads = torch.autograd.grad(self, log.params, retain_graph=True, allow_unused=True)
            else:
                grads = [None] * len(log.params)
            data["connected"] = any(g is not None for g in grads)
            data["grad"] = _flat(list(grads), log.params)
        log.graphs.tag(self, "loss", log.epoch, place)
        log.add("backward", place, **data)
        return original(self, *args, **kwargs)

    torch.Tensor.backward = backward
    try:
        yield
    finally:
        torch.Tensor.backward = original
