"""The measuring instruments the checks drive a loop with. They record; they never judge.

Every instrument writes into one shared :class:`Tape`, so the order of events (an epoch
starts, a loss is computed, the optimizer steps, the model runs forward) is kept:

- :func:`lesson_mlp`: the track's MLP (optionally with dropout), built from a seed
  without touching the global random state;
- :class:`TapedLoader`: a real ``DataLoader`` over the lesson's data (same order as the
  lesson's seeded loader) that marks the start of every epoch on the tape;
- :class:`SpyLoss`: ``CrossEntropyLoss`` that records each call's batch size and value, where its
  tensors came from, and (optionally) the gradient of that loss with respect to the model;
- :class:`RecordingSGD` / :class:`RecordingAdam`: real ``torch.optim.SGD`` / ``Adam`` (schedulers
  and ``isinstance`` work) whose ``step()`` records the gradients, lr and model mode it sees;
- :class:`ForwardProbe`: forward hooks recording mode, grad recording and graph building;
- :class:`SavedTensorMeter`: bytes of tensors currently saved by live autograd graphs;
- :class:`HostTensor`: a tensor that loses its tag on ``.to()``/``.cpu()``/``.cuda()``, so a
  dropped ``x.to(device)`` is visible even when ``device`` is the CPU;
- :class:`Rig`: the usual set of the above, assembled for one check;
- :class:`Witness`: what a trusted process needs to recompute a check's figures (:func:`replay`), so that no
  verdict rests only on figures the learner's own process reports.

These run only in the sandboxed child, next to the learner's code.
"""

from __future__ import annotations

import math
import random
import weakref
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

# ---------------------------------------------------------------------------- the tape


class Tape:
    """An ordered log of what the instruments saw, shared by all of them.

    ``epoch`` counts the epochs started so far (loader iterations); every event carries
    the epoch it happened in, 0 before the first.
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.epoch = 0
        self.epoch_probes: list[Callable[[], dict[str, Any]]] = []
        """Called at each epoch start; what they return is stored on the ``epoch`` event."""
        self.muted = False
        """While True, events are not kept (the checker's own forward passes)."""
        self.graphs: GraphTracker | None = None
        """When set, the spy loss and the forward probe tag every graph they see."""

    def add(self, kind: str, **data: Any) -> dict[str, Any]:
        data["kind"] = kind
        data["epoch"] = self.epoch
        if not self.muted:
            self.events.append(data)
        return data

    def start_epoch(self) -> None:
        self.epoch += 1
        extra: dict[str, Any] = {}
        for probe in self.epoch_probes:
            extra.update(probe())
        self.add("epoch", **extra)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    def by_epoch(self, kind: str) -> list[list[dict[str, Any]]]:
        """Events of ``kind`` grouped by epoch (index 0 is epoch 1); events before epoch 1 are left out."""
        groups: list[list[dict[str, Any]]] = [[] for _ in range(self.epoch)]
        for e in self.events:
            if e["kind"] == kind and e["epoch"] >= 1:
                groups[e["epoch"] - 1].append(e)
        return groups


# ---------------------------------------------------------------------------- models


def lesson_mlp(seed: int = 0, *, dropout: float | None = None, device: str = "cpu", track=None) -> nn.Sequential:
    """The track's MLP (default: the moons track's 2-16-2) with its initial weights for ``seed``.

    With ``dropout``, a ``Dropout(p)`` sits after each hidden ReLU (same parameters), so train and eval
    mode give different outputs. The global random state is left as it was.
    """
    if track is None:
        from checker.setting.tracks import get_track

        track = get_track()
    return track.model.build(seed, dropout=dropout, device=device)


def parameters_of(model: nn.Module) -> list[torch.Tensor]:
    return list(model.parameters())


# ---------------------------------------------------------------------------- data


class HostTensor(torch.Tensor):
    """A tensor tagged as "not moved yet": ``.to()``, ``.cpu()`` and ``.cuda()`` return plain tensors.

    Every other operation keeps the tag (indexing, stacking, a forward pass), so a tensor that
    reaches the model or the loss still tagged was never the result of a move. On the CPU,
    ``x.to("cpu")`` returns ``x`` itself, which is why a dropped result is otherwise invisible.
    """

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
            target = _move_target(func, args, kwargs) if func in _MOVES else None
            if target is not None:
                if MOVES is not None:
                    MOVES.append(target)
                return result.as_subclass(torch.Tensor) if isinstance(result, torch.Tensor) else result
            if func in torch.overrides.get_default_nowrap_functions():
                return result
            return torch._tensor._convert(result, cls)


_MOVES = {torch.Tensor.to, torch.Tensor.cpu, torch.Tensor.cuda}

MOVES: list[str] | None = None
"""While :func:`recording_moves` runs: the device of every move of a tagged tensor, as ``str(torch.device)``."""


def _move_target(func, args, kwargs) -> str | None:
    """Where a ``.to()``/``.cpu()``/``.cuda()`` call sends a tensor; None when it names no device.

    ``x.to(None)`` or ``x.to(torch.float32)`` moves nothing: the tensor keeps its tag, as it keeps its place.
    """
    if func is torch.Tensor.cpu:
        return "cpu"
    if func is torch.Tensor.cuda:
        return str(torch.device("cuda", args[1])) if len(args) > 1 and isinstance(args[1], int) else "cuda"
    device = kwargs.get("device")
    for arg in args[1:]:
        if device is not None:
            break
        if isinstance(arg, str | torch.device):
            device = arg
        elif isinstance(arg, torch.Tensor):
            device = arg.device
    return str(torch.device(device)) if device is not None else None


@contextmanager
def recording_moves():
    """Record in a list the device of every move of a tagged tensor while the block runs."""
    global MOVES
    MOVES = []
    try:
        yield MOVES
    finally:
        MOVES = None


def tag(t: torch.Tensor) -> HostTensor:
    """``t`` as a :class:`HostTensor` (same storage)."""
    return t.as_subclass(HostTensor)


def untag(t: torch.Tensor) -> torch.Tensor:
    """A plain ``torch.Tensor`` view of ``t`` (tagged or not)."""
    with torch._C.DisableTorchFunctionSubclass():
        return t.as_subclass(torch.Tensor) if type(t) is not torch.Tensor else t


def is_tagged(t: Any) -> bool:
    return isinstance(t, HostTensor)


class BatchDataset(TensorDataset):
    """``TensorDataset`` that hands a whole batch over at once (``__getitems__``): same batches, less work."""

    last_rows: torch.Tensor | None = None
    """The rows of the latest batch handed over (a witness sends them instead of the batch)."""

    def __getitems__(self, indices: Sequence[int]) -> tuple[torch.Tensor, ...]:
        idx = torch.as_tensor(indices, dtype=torch.int64)
        self.last_rows = idx
        return tuple(t[idx] for t in self.tensors)


def _batch_as_is(batch):
    return list(batch)


class TapedLoader(DataLoader):
    """A real ``DataLoader`` over ``(X, y)``, in the lesson's order for ``seed``; ``iter()`` marks an epoch.

    The order equals ``DataLoader(TensorDataset(X, y), batch_size, shuffle=True,
    generator=torch.Generator().manual_seed(seed))``; batches come as ``[x, y]``.
    """

    def __init__(self, X: torch.Tensor, y: torch.Tensor, tape: Tape, *, batch_size: int = 32, seed: int = 0,
                 drop_last: bool = False):
        self.tape = tape
        super().__init__(
            BatchDataset(X, y), batch_size=batch_size, shuffle=True,
            generator=torch.Generator().manual_seed(seed), collate_fn=_batch_as_is, drop_last=drop_last,
        )

    def __iter__(self):
        self.tape.start_epoch()
        return super().__iter__()


# ---------------------------------------------------------------------------- loss


class SpyLoss(nn.CrossEntropyLoss):
    """``CrossEntropyLoss`` (mean) that writes a ``loss`` event for every call.

    Each event holds ``n`` (batch size), ``value``, ``grad_enabled``, ``requires_grad`` (the loss
    has a graph), ``input_tagged``/``target_tagged`` (:class:`HostTensor` arrived), the two
    devices, and, when ``params`` is given and the loss has a graph, ``grads``: the gradient of
    this very loss with respect to ``params`` (``None`` where it does not depend on one), taken
    without touching ``.grad``.
    """

    def __init__(self, tape: Tape, params: Sequence[torch.Tensor] | None = None):
        super().__init__()
        self.tape = tape
        self.params = list(params) if params is not None else None
        self.witness: Witness | None = None

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = super().forward(input, target)
        if self.witness is not None and not self.tape.muted:
            self.witness.loss(input, target, torch.is_grad_enabled())
        event = self.tape.add(
            "loss",
            n=int(target.shape[0]) if target.dim() else 1,
            value=float(loss.detach()),
            grad_enabled=torch.is_grad_enabled(),
            requires_grad=bool(loss.requires_grad),
            input_tagged=is_tagged(input), target_tagged=is_tagged(target),
            input_device=str(input.device), target_device=str(target.device),
        )
        if self.tape.graphs is not None and not self.tape.muted:
            self.tape.graphs.tag(loss, "loss")
        if self.params is not None and loss.requires_grad:
            grads = torch.autograd.grad(loss, self.params, retain_graph=True, allow_unused=True)
            event["grads"] = [None if g is None else g.detach().clone() for g in grads]
        return loss


# ---------------------------------------------------------------------------- optimizers


def grad_norm(grads: Sequence[torch.Tensor | None]) -> float:
    """Euclidean norm of all the gradients together (missing ones count as zero), as a float."""
    total = 0.0
    for g in grads:
        if g is not None:
            total += float(g.detach().double().pow(2).sum())
    return math.sqrt(total)


class _Recording:
    """Mixin for a torch optimizer: ``step()`` first writes a ``step`` event, then steps as usual.

    The event holds ``lrs`` (one per param group), ``training`` (every module of ``model`` in
    training mode) and ``norm`` (the gradients' total norm), plus ``grads`` (clones, ``None``
    where ``.grad`` is None) when ``keep_grads``.
    """

    def __init__(self, params, *, tape: Tape, model: nn.Module | None = None, keep_grads: bool = False, **kw):
        super().__init__(params, **kw)  # type: ignore[call-arg]
        self.tape = tape
        self.model = model
        self.keep_grads = keep_grads

    def step(self, closure=None):
        # Step first, then record: with ``step(closure)`` the gradients only exist once the closure has
        # run inside the step, and SGD/Adam never modify ``.grad``, so what is read afterwards is exactly
        # what the update used.
        loss = super().step(closure)  # type: ignore[misc]
        params = [p for group in self.param_groups for p in group["params"]]  # type: ignore[attr-defined]
        grads = [None if p.grad is None else p.grad.detach() for p in params]
        event = self.tape.add(
            "step",
            lrs=[float(group["lr"]) for group in self.param_groups],  # type: ignore[attr-defined]
            training=None if self.model is None else all(m.training for m in self.model.modules()),
            norm=grad_norm(grads),
        )
        if self.keep_grads:
            event["grads"] = [None if g is None else g.clone() for g in grads]
        return loss


class RecordingSGD(_Recording, torch.optim.SGD):
    """``torch.optim.SGD`` whose steps are written on the tape."""


class RecordingAdam(_Recording, torch.optim.Adam):
    """``torch.optim.Adam`` whose steps are written on the tape."""


class _RecordingSchedule:
    """Mixin for a scheduler that writes a ``sched`` event at every ``step()`` after construction
    (the scheduler's own first step inside ``__init__`` is not the loop's)."""

    def __init__(self, optimizer, *args, tape: Tape, **kwargs):
        self.tape = None
        super().__init__(optimizer, *args, **kwargs)
        self.tape = tape

    def step(self, *args, **kwargs):
        if self.tape is not None:
            self.tape.add("sched")
        return super().step(*args, **kwargs)


class RecordingStepLR(_RecordingSchedule, torch.optim.lr_scheduler.StepLR):
    """``StepLR`` whose steps are written on the tape."""


class RecordingCosineLR(_RecordingSchedule, torch.optim.lr_scheduler.CosineAnnealingLR):
    """``CosineAnnealingLR`` whose steps are written on the tape."""


# ---------------------------------------------------------------------------- graphs


class _Token:
    """Stored in a graph node's ``metadata``: it dies exactly when the node does."""

    __slots__ = ("__weakref__",)


class GraphTracker:
    """Which batches' autograd graphs are still alive, wherever they are referenced from.

    The spy loss and the forward probe tag the ``grad_fn`` node of every loss and model output
    they see (``Node.metadata``); a token stored there dies with the node, so the tracker knows
    when a graph is freed, whether the last reference was a local, a list, a module global, a
    tensor summed into a running total or an attribute of the model. Saved-tensor accounting
    cannot see those: ``backward()`` frees the saved tensors but not the nodes.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        """Per kind ("loss", "output"): how many graphs were tagged so far."""
        self.live: dict[tuple[str, int], bool] = {}

    def tag(self, tensor: Any, kind: str) -> None:
        node = getattr(tensor, "grad_fn", None)
        if node is None:
            return
        number = self.counts.get(kind, 0) + 1
        self.counts[kind] = number
        token = _Token()
        node.metadata["kata_graph"] = token
        key = (kind, number)
        self.live[key] = True
        weakref.finalize(token, self.live.pop, key, None)

    def stale(self) -> dict[str, int]:
        """Per kind, how many graphs older than the newest one are still alive."""
        return {kind: sum(1 for (k, n) in list(self.live) if k == kind and n < last)
                for kind, last in self.counts.items()}

    def alive(self) -> dict[str, int]:
        """Per kind, how many tagged graphs are alive."""
        out = {kind: 0 for kind in self.counts}
        for kind, _ in list(self.live):
            out[kind] += 1
        return out


# ---------------------------------------------------------------------------- hooks


class ForwardProbe:
    """Forward hooks on ``model``: a ``forward`` event per call of the whole model.

    The event holds ``training`` (any module in training mode), ``grad_enabled``,
    ``inference`` (inference mode on), ``graph`` (the output requires grad, i.e. a graph is being
    built), ``input_tagged`` and ``input_device``.
    """

    def __init__(self, model: nn.Module, tape: Tape):
        self.model, self.tape = model, tape
        self._pending: list[dict[str, Any]] = []
        self._handles = [
            model.register_forward_pre_hook(self._pre),
            model.register_forward_hook(self._post),
        ]

    def _pre(self, module, args) -> None:
        x = args[0] if args else None
        self._pending.append({
            "input_tagged": is_tagged(x),
            "input_device": str(x.device) if isinstance(x, torch.Tensor) else None,
        })

    def _post(self, module, args, output) -> None:
        info = self._pending.pop() if self._pending else {}
        self.tape.add(
            "forward",
            training=any(m.training for m in module.modules()),
            grad_enabled=torch.is_grad_enabled(),
            inference=torch.is_inference_mode_enabled(),
            graph=bool(isinstance(output, torch.Tensor) and output.requires_grad),
            **info,
        )
        if self.tape.graphs is not None and not self.tape.muted and isinstance(output, torch.Tensor):
            self.tape.graphs.tag(output, "output")

    def unfinished(self) -> list[str | None]:
        """The input devices of the forward passes that started and did not finish (one raised)."""
        return [info.get("input_device") for info in self._pending]

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


class _Saved:
    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class SavedTensorMeter:
    """Bytes of tensors that autograd graphs built inside ``with meter:`` still hold.

    Autograd hands every tensor it saves for backward to ``pack``; we wrap it in a holder
    whose death (the graph freed) subtracts its bytes again. ``live_bytes`` is exact and
    deterministic (no RSS, no allocator caching); it stays counted after the ``with`` ends.
    """

    def __init__(self) -> None:
        self.live_bytes = 0
        self.live_count = 0
        self.packed = 0
        self._ctx = None

    def _release(self, nbytes: int) -> None:
        self.live_bytes -= nbytes
        self.live_count -= 1

    def _pack(self, tensor: torch.Tensor) -> _Saved:
        # detach(): the same storage without the tensor's own grad_fn, else a saved output
        # would hold its graph node, which holds the holder: a cycle Python cannot free.
        holder = _Saved(tensor.detach())
        nbytes = tensor.numel() * tensor.element_size()
        self.live_bytes += nbytes
        self.live_count += 1
        self.packed += 1
        weakref.finalize(holder, self._release, nbytes)
        return holder

    @staticmethod
    def _unpack(holder: _Saved) -> torch.Tensor:
        return holder.tensor

    def __enter__(self) -> SavedTensorMeter:
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        assert self._ctx is not None
        self._ctx.__exit__(*exc)
        self._ctx = None


# ---------------------------------------------------------------------------- helpers


def scramble_global_rng(seed: int) -> None:
    """Put Python's, NumPy's and torch's global generators in a state chosen by ``seed``."""
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def plain_number(value: Any) -> float | None:
    """A returned figure as a float: numbers and one-element tensors convert, anything else is None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, torch.Tensor):
        return float(value.detach().reshape(-1)[0]) if value.numel() == 1 else None
    try:
        import numbers

        if isinstance(value, numbers.Real):
            return float(value)
    except (TypeError, ValueError):
        pass
    return None


def is_plain_number(value: Any) -> bool:
    """An int/float (NumPy scalars included), not a tensor."""
    import numbers

    return isinstance(value, numbers.Real) and not isinstance(value, torch.Tensor)


def finite(value: float | None) -> float | None:
    """``value`` if it is a finite number, else None (measured figures stay valid JSON)."""
    return value if value is not None and math.isfinite(value) else None


def type_name(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def epoch_means(tape: Tape) -> list[float]:
    """Per epoch, the mean over examples of the losses the spy saw with grad on (training batches)."""
    means = []
    for events in tape.by_epoch("loss"):
        batches = [e for e in events if e["grad_enabled"]]
        n = sum(e["n"] for e in batches)
        means.append(sum(e["value"] * e["n"] for e in batches) / n if n else float("nan"))
    return means


class Rig:
    """One check's usual instruments: tape, lesson model, taped loader, spy loss, optimizer.

    ``optimizer`` is ``"sgd"``/``"adam"`` (plain torch), or ``"recording-sgd"``/``"recording-adam"``.
    ``loss_grads`` makes the spy take each loss's own gradient; ``keep_grads`` makes a recording
    optimizer keep the gradients it stepped with; ``probe`` adds forward hooks; ``tagged`` feeds
    :class:`HostTensor` batches.
    """

    def __init__(
        self, lab, *, optimizer: str = "sgd", lr: float = 0.1, dropout: float | None = None,
        seed: int = 0, batch_size: int | None = None, X: torch.Tensor | None = None, y: torch.Tensor | None = None,
        keep_grads: bool = False, loss_grads: bool = False, probe: bool = False, tagged: bool = False,
        anchored: bool = False,
    ):
        self.device = getattr(lab, "device", "cpu")
        self.tape = Tape()
        self.model = lesson_mlp(seed, dropout=dropout, device=self.device, track=lab.track)
        if anchored:  # weights no earlier run had: a recorded run's figures cannot stand in for this one's
            anchor(self.model, getattr(lab, "anchor", None))
        X = lab.data.X_train if X is None else X
        y = lab.data.y_train if y is None else y
        self.X_val, self.y_val = lab.data.X_val, lab.data.y_val
        if tagged:
            X, y = tag(X), tag(y)
            self.X_val, self.y_val = tag(self.X_val), tag(self.y_val)
        batch_size = batch_size or lab.track.thresholds.batch_size
        # BatchNorm cannot train on a batch of one: a track whose model has it never gets one
        single = lab.track.model.leaves_one(len(X), batch_size)
        self.loader = TapedLoader(X, y, self.tape, batch_size=batch_size, seed=seed, drop_last=single)
        params = parameters_of(self.model)
        self.loss_fn = SpyLoss(self.tape, params if loss_grads else None)
        kinds = {
            "sgd": torch.optim.SGD, "adam": torch.optim.Adam,
            "recording-sgd": RecordingSGD, "recording-adam": RecordingAdam,
        }
        cls = kinds[optimizer]
        if optimizer.startswith("recording"):
            self.optimizer = cls(params, lr=lr, tape=self.tape, model=self.model, keep_grads=keep_grads)
        else:
            self.optimizer = cls(params, lr=lr)
        self.probe = ForwardProbe(self.model, self.tape) if probe else None

    @property
    def data(self) -> torch.Tensor:
        """The training inputs the loader hands out batches of (a witness's ``rows`` name rows of it)."""
        return untag(self.loader.dataset.tensors[0])

    @property
    def val(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.X_val, self.y_val

    def witness(self, steps: bool = True, clip: float | None = None) -> Witness:
        """Start recording what :func:`replay` needs (every forward pass, loss and, with ``steps``, optimizer step);
        ``clip``: the norm the check asks the loop to clip its gradients at."""
        witness = Witness(self.model, self.tape, data=self.data, dataset=self.loader.dataset, clip=clip)
        self.loss_fn.witness = witness
        if steps:
            witness.watch(self.optimizer)
        return witness

    def figures(self, X: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
        """The model's true mean cross-entropy and accuracy on ``(X, y)``, in eval mode, no graph."""
        was_training, self.tape.muted = self.model.training, True
        self.model.eval()
        try:
            with torch.no_grad():
                X, y = untag(X).to(self.device), untag(y).to(self.device)
                logits = self.model(X)
                loss = float(nn.functional.cross_entropy(logits, y))
                acc = float((logits.argmax(dim=1) == y).double().mean())
        finally:
            self.model.train(was_training)
            self.tape.muted = False
        return loss, acc


def _flat(grads: Sequence[torch.Tensor | None], like: Sequence[torch.Tensor]) -> torch.Tensor:
    return torch.cat([
        (g.detach().double().reshape(-1) if g is not None else torch.zeros(p.numel(), dtype=torch.float64,
                                                                           device=p.device))
        for g, p in zip(grads, like, strict=True)
    ])


def step_gradients(tape: Tape, params: Sequence[torch.Tensor], clip_norm: float | None = None) -> list[dict]:
    """For every ``step`` event (with ``keep_grads``): the gradient it used against the batch's own.

    The batch's gradient is the one the :class:`SpyLoss` took of the latest loss computed with grad on or,
    when the loop computed several losses since the previous step (micro-batches, each backward-ed into
    ``.grad`` before one step), their mean weighted by examples: whichever of the two the step is closer to.
    With ``clip_norm`` it is scaled as ``clip_grad_norm_`` scales it. Each row:
    ``epoch``, ``step`` (1-based within the epoch), ``norm`` (what step() saw), ``raw_norm`` (the
    batch's own gradient norm), ``ratio`` (norm / raw_norm), ``rel`` (relative distance to the
    reference), ``missing`` (.grad empty or all zero), ``connected`` (the loss had a gradient at
    all), ``accumulated`` (what step() saw equals the previous step's gradient plus this one's) and
    ``finite`` (no NaN or infinity in what step() saw). Non-finite figures are None.
    """
    rows: list[dict] = []
    since_step: list[dict] = []
    last_loss: dict | None = None
    prev_got: torch.Tensor | None = None
    counts: dict[int, int] = {}
    for event in tape.events:
        if event["kind"] == "loss" and event["grad_enabled"]:
            last_loss = event
            since_step.append(event)
            continue
        if event["kind"] != "step":
            continue
        counts[event["epoch"]] = counts.get(event["epoch"], 0) + 1
        got = _flat(event["grads"], params)
        grads = (last_loss or {}).get("grads")
        connected = grads is not None and any(g is not None for g in grads)
        want, raw, rel = _batch_gradient(got, grads, since_step, params, clip_norm)
        since_step = []
        rows.append({"epoch": event["epoch"], "step": counts[event["epoch"]],
                     **_step_row(got, prev_got, want, raw, rel, connected)})
        prev_got = got
    return rows


def _compare_gradient(got: torch.Tensor, want: torch.Tensor,
                      clip_norm: float | None) -> tuple[torch.Tensor, float, float | None]:
    """``want`` (clipped as ``clip_norm`` says), its raw norm and ``got``'s relative distance to it."""
    raw = float(want.norm())
    if clip_norm is not None:
        want = want * min(1.0, clip_norm / (raw + 1e-6))
    want_norm, diff = float(want.norm()), float((got - want).norm())
    return want, raw, diff / want_norm if want_norm > 0 else (0.0 if diff == 0 else None)


def _batch_gradient(got: torch.Tensor, grads, since_step: list[dict], params: Sequence[torch.Tensor],
                    clip_norm: float | None) -> tuple[torch.Tensor, float, float | None]:
    """The batch's gradient a step is compared with: the latest loss's, or the micro-batches' mean if closer."""
    want, raw, rel = _compare_gradient(got, _flat(grads, params) if grads is not None else torch.zeros_like(got),
                                       clip_norm)
    parts = [e for e in since_step if e.get("grads") is not None]
    if len(parts) > 1:  # micro-batches: the examples' mean gradient over every loss since the last step
        total = sum(e["n"] for e in parts)
        mean = sum(_flat(e["grads"], params) * (e["n"] / total) for e in parts)
        candidate = _compare_gradient(got, mean, clip_norm)
        if candidate[2] is not None and (rel is None or candidate[2] < rel):
            want, raw, rel = candidate
    return want, raw, rel


def _step_row(got: torch.Tensor, prev_got: torch.Tensor | None, want: torch.Tensor, raw: float,
              rel: float | None, connected: bool) -> dict:
    """One step's figures: norms, ratio, distance, and whether its gradient is missing, accumulated or finite."""
    norm = float(got.norm())
    accumulated = False
    if prev_got is not None and raw > 0:
        accumulated = float((got - prev_got - want).norm()) <= 1e-4 * raw and float(prev_got.norm()) > 0
    return {
        "norm": finite(norm), "raw_norm": finite(raw),
        "ratio": finite(norm / raw) if raw > 0 else (None if norm > 0 else 0.0), "rel": finite(rel),
        "missing": norm == 0.0, "connected": connected, "accumulated": accumulated,
        "finite": bool(torch.isfinite(got).all()),
    }


# ---------------------------------------------------------------------------- witness and replay

ANCHOR_SCALE = 1e-3
"""How far :func:`anchor` moves each initial weight (a standard deviation): far beyond float noise, so a run from
other weights cannot pass for this one, and far below what changes how the lesson's model trains."""


def anchor(model: nn.Module, value: int | None) -> None:
    """Move ``model``'s parameters by a small draw seeded by ``value`` (the parent's, per grading; None: nothing)."""
    if value is None:
        return
    generator = torch.Generator().manual_seed(int(value))
    with torch.no_grad():
        for p in model.parameters():
            p.add_((torch.randn(p.shape, generator=generator, dtype=p.dtype) * ANCHOR_SCALE).to(p.device))


WITNESS_BYTES = 6 * 1024 * 1024
"""Encoded bytes one check's witness may take: it travels in one event line (``checker.sandbox.events.MAX_LINE``, 8
MiB) and a job runs at most three checks that keep one, well under the job's 64 MiB. A witness that would pass it is
dropped and said (``too_large``): the check is then not confirmed, and held for review, never passed."""
WITNESS_ITEMS = 50_000
"""JSON items one check's witness may hold (an event's figures may hold 100,000); a step takes about 35, so this
bound comes first: about 1,300 steps per check."""
CHUNK = 48 * 1024
"""Characters of base64 per string of a packed tensor (an event's texts may hold 64 KiB)."""
SAME, SGD, LOSS, CLIP = "same", "sgd", "loss", "clip"
"""References a witness sends instead of a tensor the replay knows already: ``same``, the weights it holds now (those
of the latest forward pass or step; the first weights always travel whole) or the generator state the latest forward
pass left; ``sgd``, a step's weights after, which plain SGD gives from the weights before and the step's gradients;
``loss``, a step's gradients, equal to those of the latest loss; ``clip``, those clipped as ``clip_grad_norm_`` clips
them at the check's own norm."""

_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8, torch.int8, torch.int16, torch.int32,
    torch.int64, torch.bool)}


def _flat_cpu(tensors) -> torch.Tensor:
    """``tensors`` as one flat tensor on the CPU, in their own dtype (promoted only where they differ: exact)."""
    parts = [untag(t).detach().reshape(-1).to("cpu") for t in tensors]
    return torch.cat(parts) if parts else torch.zeros(0)


def pack(t: torch.Tensor) -> dict[str, Any]:
    """``t`` as plain figures, exactly: its dtype, its shape and its bytes in base64 (:func:`unpack` takes it back)."""
    import base64

    t = untag(t).detach().to("cpu").contiguous()
    raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    text = base64.b64encode(raw).decode("ascii")
    return {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
            "b64": [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)]}


def unpack(value: Any, size: int | None = None) -> torch.Tensor:
    """The tensor :func:`pack` packed (``size``: the elements it must hold); ``Unconfirmed`` if it is anything else."""
    import base64
    import binascii

    dtype, shape, chunks = _header(value)
    numel = math.prod(shape)
    if size is not None and numel != size:
        raise Unconfirmed(f"{numel} values where the model has {size}")
    try:
        raw = base64.b64decode("".join(chunks), validate=True)
    except (binascii.Error, ValueError):
        raise Unconfirmed("a packed tensor that is not base64") from None
    if len(raw) != numel * dtype.itemsize:
        raise Unconfirmed("a packed tensor whose bytes do not fill its shape")
    if not numel:
        return torch.zeros(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)


def _header(value: Any) -> tuple[torch.dtype, list[int], list[str]]:
    """A packed tensor's dtype, shape and base64 chunks, each of the kind :func:`pack` writes; else ``Unconfirmed``."""
    if not isinstance(value, dict) or set(value) != {"dtype", "shape", "b64"}:
        raise Unconfirmed("a figure that is not a packed tensor")
    dtype, shape, chunks = _DTYPES.get(value["dtype"]) if isinstance(value["dtype"], str) else None, value["shape"], \
        value["b64"]
    if dtype is None or not isinstance(shape, list) or not isinstance(chunks, list) or len(shape) > 8 or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 1 << 30 for n in shape) or not all(
            isinstance(c, str) for c in chunks):
        raise Unconfirmed("a packed tensor of an unknown dtype or shape")
    return dtype, shape, chunks


def _packed_size(value: dict[str, Any]) -> int:
    return sum(len(c) for c in value["b64"]) + 64


def _rng_state(device: torch.device | None) -> str:
    import base64

    if device is not None and device.type == "cuda":
        return "cuda:" + base64.b64encode(torch.cuda.get_rng_state(device).numpy().tobytes()).decode("ascii")
    return "cpu:" + base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii")


def clipped(grads: Sequence[torch.Tensor | None], max_norm: float) -> list[torch.Tensor | None]:
    """``grads`` clipped as ``torch.nn.utils.clip_grad_norm_(parameters, max_norm)`` clips a model's (copies; the
    child and the replay get the same bits from the same figures)."""
    leaves = []
    for g in grads:
        if g is not None:
            leaf = nn.Parameter(torch.empty_like(g))
            leaf.grad = g.detach().clone()
            leaves.append(leaf)
    torch.nn.utils.clip_grad_norm_(leaves, max_norm)
    out, given = [], iter(leaves)
    for g in grads:
        out.append(None if g is None else next(given).grad)
    return out


def sgd_after(before: torch.Tensor, grads: Sequence[torch.Tensor | None], lr: float,
              like: Sequence[torch.Tensor]) -> torch.Tensor:
    """The flat weights plain SGD (no momentum, no decay) leaves from the flat ``before`` with ``grads``, computed as
    ``torch.optim.SGD`` computes them (each parameter's own ``add(grad, alpha=-lr)``): the child and the replay get
    the same bits from the same figures."""
    parts, offset = [], 0
    for g, p in zip(grads, like, strict=True):
        old = before[offset:offset + p.numel()].reshape(p.shape).to(p.dtype)
        parts.append((old if g is None else old.add(g.to(old.dtype).reshape(p.shape), alpha=-lr)).reshape(-1))
        offset += p.numel()
    return torch.cat(parts) if parts else before


def _equal(grads: Sequence[torch.Tensor | None], theirs: Sequence[torch.Tensor | None]) -> bool:
    return len(theirs) == len(grads) and all(
        (a is None) == (b is None) and (a is None or (a.dtype == b.dtype and torch.equal(a.cpu(), b.cpu())))
        for a, b in zip(grads, theirs, strict=True))


class Witness:
    """What a trusted process needs to recompute the figures of a check (:func:`replay`): the learner's process may
    make its tensors right, never report them right.

    ``marks``, in order: a ``forward`` per call of the whole model (its parameters and buffers before the call, each
    module's mode, grad mode, torch's generator where the model has dropout, the input), a ``loss`` per call of the
    spy loss (the forward whose output it took, the target) and a ``step`` per optimizer step (the parameters before
    and after, each gradient, the lrs). Tensors travel packed (:func:`pack`: their own dtype, exactly); what the
    replay holds already travels as a reference (``SAME``, ``SGD``, ``LOSS``), and an input that is a batch of the
    check's own loader as the rows of its data set (``rows``). Past ``WITNESS_BYTES`` the marks are dropped and
    ``too_large`` is said instead.
    """

    def __init__(self, model: nn.Module, tape: Tape, data: torch.Tensor | None = None,
                 dataset: BatchDataset | None = None, clip: float | None = None):
        self.model, self.tape, self.clip = model, tape, clip
        self.marks: list[dict[str, Any]] = []
        self.random = any(isinstance(m, nn.modules.dropout._DropoutNd) for m in model.modules())
        self.data, self.dataset = data, dataset
        self.size = 0
        self.items = 0
        self.too_large = False
        self.n_params = sum(p.numel() for p in model.parameters())
        self._current: torch.Tensor | None = None  # the first weights travel whole: they carry the parent's anchor
        self._buffers: torch.Tensor | None = None
        self._pending: list[dict[str, Any]] = []
        self._last: Any = None
        self._rng: str | None = None
        """The generator's state the latest forward pass left (the replay's own is that too, after running it)."""
        self._forwards = 0
        # on the first and last layers of a Sequential: their hooks fire for model(x) and model.forward(x) alike
        layers = list(model.children()) if isinstance(model, nn.Sequential) else []
        first, last = (layers[0], layers[-1]) if layers else (model, model)
        self._handles = [first.register_forward_pre_hook(self._pre), last.register_forward_hook(self._post)]

    def _weights(self, flat: torch.Tensor) -> Any:
        """``flat`` as a reference to the weights the replay holds now where it equals them, else packed."""
        same = self._current is not None and flat.dtype == self._current.dtype and torch.equal(flat, self._current)
        self._current = flat
        return SAME if same else self._packed(flat)

    def _packed(self, t: torch.Tensor) -> dict[str, Any]:
        value = pack(t)
        self.size += _packed_size(value)
        self.items += 4 + len(value["shape"]) + len(value["b64"])
        return value

    def _input(self, x: torch.Tensor) -> dict[str, Any]:
        """The input: the rows of the check's data set it is (a batch of its own loader, as it came), else packed."""
        rows = getattr(self.dataset, "last_rows", None)
        if rows is not None and self.data is not None:
            plain = untag(x).detach().to("cpu")
            batch = self.data[rows.to(self.data.device)].to("cpu")
            if plain.dtype == batch.dtype and plain.shape == batch.shape and torch.equal(plain, batch):
                return {"rows": self._packed(rows)}
        return {"x": self._packed(x)}

    def _full(self) -> bool:
        """Past the witness's bounds: the marks are dropped, ``too_large`` said (a check then is not confirmed)."""
        if not self.too_large and (self.size > WITNESS_BYTES or self.items > WITNESS_ITEMS):
            self.too_large, self.marks, self._last = True, [], None
        return self.too_large

    def _pre(self, module, args) -> None:
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor) or self.tape.muted or self._full():
            self._pending.append({})
            return
        model = self.model
        buffers = _flat_cpu(model.buffers())
        same = self._buffers is not None and buffers.dtype == self._buffers.dtype and torch.equal(buffers,
                                                                                                 self._buffers)
        self._buffers = buffers
        self._pending.append({
            "kind": "forward", "epoch": self.tape.epoch, "grad": torch.is_grad_enabled(),
            "params": self._weights(_flat_cpu(model.parameters())),
            "buffers": SAME if same else self._packed(buffers),
            "modes": [m.training for m in model.modules()], **self._input(x),
            "rng": self._generator(x.device) if self.random else None,
        })
        self.items += 10 + len(self._pending[-1]["modes"])

    def _post(self, module, args, output) -> None:
        mark = self._pending.pop() if self._pending else {}
        if self.tape.muted or not mark or not isinstance(output, torch.Tensor) or self._full():
            return
        self.marks.append(mark)
        self._forwards += 1
        self._last = (self._forwards - 1, weakref.ref(output), output.detach().clone())
        self._rng = _rng_state(output.device) if self.random else None

    def _generator(self, device: torch.device) -> str:
        """The generator's state before a forward pass: ``SAME`` where the latest forward pass left it so."""
        state = _rng_state(device)
        if state == self._rng:
            return SAME
        self.size += len(state)
        return state

    def loss(self, input: torch.Tensor, target: torch.Tensor, grad: bool) -> None:
        if self._full():
            return
        forward = None
        if self._last is not None:
            index, ref, values = self._last
            if ref() is input or (input.shape == values.shape and torch.equal(untag(input).detach(), values)):
                forward = index
        self.marks.append({"kind": "loss", "epoch": self.tape.epoch, "forward": forward, "grad": grad,
                           "y": self._packed(target)})
        self.items += 6

    def _grads(self, grads: list[torch.Tensor | None]) -> Any:
        """The step's gradients: ``LOSS`` where they are exactly those the spy took of the latest loss, else packed."""
        losses = [e for e in self.tape.events[-64:] if e["kind"] == "loss" and e["grad_enabled"]]
        theirs = losses[-1].get("grads") if losses else None
        if theirs is not None and _equal(grads, theirs):
            return LOSS
        if theirs is not None and self.clip is not None and _equal(grads, clipped(theirs, self.clip)):
            return CLIP
        self.items += len(grads)
        return [None if g is None else self._packed(g.reshape(-1)) for g in grads]

    def watch(self, optimizer) -> None:
        """Record every step of ``optimizer`` (a torch optimizer; anything else is not watched), in the order of the
        model's parameters (the replay's)."""
        if not isinstance(optimizer, torch.optim.Optimizer):
            return
        before: list[torch.Tensor] = []

        def pre(opt, args, kwargs) -> None:
            if not before:
                before.append(_flat_cpu(self.model.parameters()))

        def post(opt, args, kwargs) -> None:
            # once per step: a subclass's step() that calls its base's, both wrapped by torch, fires the hooks twice
            if self.tape.muted or not before or self._full():
                before.clear()
                return
            start = before.pop()
            params = list(self.model.parameters())
            grads = [None if p.grad is None else p.grad.detach().to("cpu") for p in params]
            lrs = [float(group["lr"]) for group in opt.param_groups]
            after = _flat_cpu(params)
            mark = {"kind": "step", "epoch": self.tape.epoch, "before": self._weights(start), "lrs": lrs,
                    "grads": self._grads(grads)}
            derived = len(lrs) == 1 and after.dtype == start.dtype and torch.equal(
                sgd_after(start, grads, lrs[0], params), after)
            mark["after"] = SGD if derived else self._packed(after)
            self._current = after
            self.items += 8 + len(lrs)
            self.marks.append(mark)

        self._handles += [optimizer.register_step_pre_hook(pre), optimizer.register_step_post_hook(post)]

    def figures(self) -> dict[str, Any]:
        """The marks, as the plain figures a child reports, and the epochs the loader was iterated; past the bounds,
        no marks and ``too_large`` (the model's parameters and the bytes the witness had reached)."""
        if self._full():
            return {"marks": [], "epochs": self.tape.epoch,
                    "too_large": {"params": self.n_params, "bytes": self.size}}
        return {"marks": self.marks, "epochs": self.tape.epoch}


class Unconfirmed(Exception):
    """A witness that does not hold together; the message says where (it is shown)."""


class TooLarge(Unconfirmed):
    """A witness the child dropped as too large for the event pipe (``WITNESS_BYTES``): not confirmed, held for
    review; ``params``: the model's parameters, as the child said them."""

    def __init__(self, params: int):
        super().__init__(f"the model is too large for the witness ({params} parameters)")
        self.params = params


EPS32 = float(torch.finfo(torch.float32).eps)


def _tensor(values: Any, like: torch.Tensor | None = None, size: int | None = None) -> torch.Tensor:
    """A packed tensor as float64 (exact for every float dtype the witness sends), shaped ``like`` and in its dtype
    when given."""
    t = unpack(values, size=size)
    if t.dtype == torch.bool or not (t.is_floating_point() or t.dtype in (torch.int64, torch.int32)):
        raise Unconfirmed("a packed tensor of the wrong kind")
    t = t.to(torch.float64)
    return t.reshape(like.shape).to(like.dtype) if like is not None else t


def _load(model: nn.Module, mark: dict, device: str, params: torch.Tensor | None = None,
          buffers: torch.Tensor | None = None) -> None:
    """Put ``params``/``buffers`` (flat, float64: else the mark's own) and the mark's modes and generator in
    ``model``."""
    model_params, model_buffers = list(model.parameters()), list(model.buffers())
    flat = params if params is not None else _tensor(mark["params"], size=sum(p.numel() for p in model_params))
    bufs = buffers if buffers is not None else _tensor(mark["buffers"], size=sum(b.numel() for b in model_buffers))
    modes = mark["modes"]
    modules = list(model.modules())
    if not isinstance(modes, list) or len(modes) != len(modules):
        raise Unconfirmed("the modules' modes do not match the model")
    with torch.no_grad():
        for tensors, values in ((model_params, flat), (model_buffers, bufs)):
            offset = 0
            for t in tensors:
                t.copy_(values[offset:offset + t.numel()].reshape(t.shape).to(t.dtype))
                offset += t.numel()
    for module, mode in zip(modules, modes, strict=True):
        module.training = bool(mode)
    _set_generator(mark.get("rng"), device)


def _set_generator(rng: Any, device: str) -> None:
    """Put torch's generator in the state a mark sends (``SAME`` or None: leave it as the replay left it)."""
    if isinstance(rng, str) and ":" in rng:
        import base64
        import binascii

        kind, _, packed = rng.partition(":")
        try:
            state = torch.frombuffer(bytearray(base64.b64decode(packed, validate=True)), dtype=torch.uint8)
            if kind == "cuda":
                torch.cuda.set_rng_state(state, device)
            else:
                torch.set_rng_state(state)
        except (ValueError, RuntimeError, binascii.Error):
            raise Unconfirmed("a generator state torch does not take") from None


def final_state(model: nn.Module) -> dict[str, Any]:
    """The weights and buffers ``model`` holds now, as plain figures (:func:`load_state` takes them back); past
    ``WITNESS_BYTES``, ``too_large`` instead (the model's parameters)."""
    state = {"params": pack(_flat_cpu(model.parameters())), "buffers": pack(_flat_cpu(model.buffers()))}
    size = _packed_size(state["params"]) + _packed_size(state["buffers"])
    if size > WITNESS_BYTES:
        return {"too_large": {"params": sum(p.numel() for p in model.parameters()), "bytes": size}}
    return state


def load_state(model: nn.Module, state: Any) -> None:
    """Put the figures of :func:`final_state` back into ``model`` (the same architecture); ``Unconfirmed`` if they do
    not fit it."""
    if not isinstance(state, dict):
        raise Unconfirmed("the model's final weights were not reported")
    if "too_large" in state:
        _marks(state)  # says TooLarge
    _load(model, {"params": state.get("params"), "buffers": state.get("buffers"),
                  "modes": [m.training for m in model.modules()]}, str(next(model.parameters()).device))


def _same(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal as float32, NaN where NaN (weights a NaN gradient wrecked are still those weights)."""
    return got.shape == want.shape and bool(torch.allclose(got.to(torch.float32), want.to(torch.float32), rtol=0,
                                                           atol=0, equal_nan=True))


def _marks(marks: Any) -> list:
    """The marks of a witness (a list, or the witness itself); ``TooLarge`` where the child said it too large."""
    if isinstance(marks, dict) and isinstance(marks.get("too_large"), dict):
        n = marks["too_large"].get("params")
        raise TooLarge(n if isinstance(n, int) and not isinstance(n, bool) else 0)
    marks = marks.get("marks") if isinstance(marks, dict) else marks
    if not isinstance(marks, list):
        raise Unconfirmed("no witness was reported")
    return marks


class _Held:
    """What the replay holds between marks: the weights now (``current``, float64, flat), the weights the chain
    expects (``expected``: the initial ones, then each step's after) and the buffers of the latest forward pass."""

    def __init__(self, params: list[torch.Tensor], buffers: list[torch.Tensor]):
        self.size = sum(p.numel() for p in params)
        self.expected = _flat_cpu(params).to(torch.float64)
        self.current: torch.Tensor | None = None
        """None until a mark sends weights whole: the first do (they must be the anchored ones, which a recording of
        another run does not hold)."""
        self.buffers = _flat_cpu(buffers).to(torch.float64)

    def weights(self, value: Any) -> torch.Tensor:
        """A mark's weights: ``SAME`` is those held now; what it names is held from then on."""
        if isinstance(value, str) and value == SAME:
            if self.current is None:
                raise Unconfirmed("the first weights were not sent whole")
            return self.current
        self.current = _tensor(value, size=self.size)
        return self.current


def replay(marks: Any, model: nn.Module, *, sgd: bool = False, device: str = "cpu", epochs: int = 0,
           chained: bool = True, data: torch.Tensor | None = None, clip: float | None = None) -> Tape:
    """Recompute, in a trusted process, the tape a check's instruments wrote in the child, from its witness marks.

    ``model``: the check's model with its initial weights, built here (anchored as the child's was). Each forward is
    run again from the parameters it reports, which must be the initial ones, then what the last step left (or the
    forward before): a weight that changed outside ``optimizer.step()`` breaks the chain. Each loss is taken again on
    the output of the forward it names (its value, and its gradient with respect to the parameters); with ``sgd``
    (the checker's own SGD: no momentum, no decay) each step's parameters after must be those before minus lr times
    the gradients it reports. ``chained=False`` (the loop's own optimizer: its update rule is its own) holds only
    the first forward pass to the initial weights (and no step to the weights before it). ``data``: the check's own
    training inputs, built here, whose rows an input may name; ``clip``: the norm of the check's own clipping (a
    step's gradients may be said clipped at it). ``Unconfirmed`` says where the witness does not hold together.
    """
    marks = _marks(marks)
    params = list(model.parameters())
    held = _Held(params, list(model.buffers()))
    tape = Tape()
    output: torch.Tensor | None = None
    forwards = 0
    for i, mark in enumerate(marks, start=1):
        kind = mark.get("kind") if isinstance(mark, dict) else None
        epoch = mark.get("epoch") if isinstance(mark, dict) else None
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < tape.epoch:
            raise Unconfirmed(f"mark {i}: an epoch out of order")
        tape.epoch = epoch
        try:
            if kind == "forward":
                output = _replay_forward(model, mark, held, device, data, check=chained or not forwards,
                                         number=forwards + 1)
                forwards += 1
            elif kind == "loss":
                if mark["forward"] != forwards - 1 or output is None:
                    raise Unconfirmed(f"a loss (epoch {epoch}) not computed on the model's latest output")
                _replay_loss(tape, output, mark, params, device)
            elif kind == "step":
                held.expected = held.current = _replay_step(tape, mark, params, held, sgd=sgd, chained=chained,
                                                            clip=clip)
            else:
                raise Unconfirmed(f"mark {i}: an unknown kind")
        except (KeyError, TypeError, IndexError) as exc:
            raise Unconfirmed(f"mark {i}: {type(exc).__name__}") from None
    tape.epoch = max(tape.epoch, epochs)  # the last epochs may have seen no batch
    return tape


def _replay_forward(model: nn.Module, mark: dict, held: _Held, device: str, data: torch.Tensor | None, *,
                    check: bool, number: int) -> torch.Tensor:
    weights = held.weights(mark["params"])
    if check and not _same(weights, held.expected):
        raise Unconfirmed(f"forward pass {number} (epoch {mark['epoch']}) ran on weights that neither the "
                          "initial ones nor the last optimizer step left")
    if mark.get("rng") == SAME and number == 1:
        raise Unconfirmed("the first forward pass's generator state was not sent")
    if not (isinstance(mark["buffers"], str) and mark["buffers"] == SAME):
        held.buffers = _tensor(mark["buffers"], size=held.buffers.numel())
    _load(model, mark, device, params=weights, buffers=held.buffers)
    x = _input(mark, data).to(device)
    with torch.set_grad_enabled(bool(mark["grad"])):
        output = model(x)
    return output


def _input(mark: dict, data: torch.Tensor | None) -> torch.Tensor:
    """A forward pass's input: the rows of the check's own data it names, else the tensor it sends (as float32)."""
    if "rows" in mark:
        rows = unpack(mark["rows"])
        if data is None or rows.dtype != torch.int64 or rows.dim() != 1 or not bool(
                ((rows >= 0) & (rows < len(data))).all()):
            raise Unconfirmed("an input that names rows the check's data does not have")
        return data[rows.to(data.device)]
    return _tensor(mark["x"]).to(torch.float32)


def _replay_loss(tape: Tape, output: torch.Tensor, mark: dict, params: list[torch.Tensor], device: str) -> None:
    y = unpack(mark["y"])
    if y.dtype not in (torch.int64, torch.int32, torch.uint8, torch.int16, torch.int8):
        raise Unconfirmed("a loss whose targets are not class indices")
    y = y.to(torch.int64).to(device)
    grad = bool(mark["grad"])
    with torch.set_grad_enabled(grad):
        loss = nn.functional.cross_entropy(output, y)
    event = tape.add("loss", n=int(y.shape[0]) if y.dim() else 1, value=float(loss.detach()), grad_enabled=grad)
    if grad and loss.requires_grad:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        event["grads"] = [None if g is None else g.detach().clone() for g in grads]


def _step_grads(tape: Tape, raw: Any, params: list[torch.Tensor], clip: float | None) -> list[torch.Tensor | None]:
    """A step's gradients: ``LOSS``, those the replay took of the latest loss (``CLIP``: clipped at ``clip``); else as
    sent, one per parameter."""
    if isinstance(raw, str) and raw in (LOSS, CLIP):
        latest = next((e for e in reversed(tape.events) if e["kind"] == "loss" and e["grad_enabled"]), None)
        grads = latest.get("grads") if latest is not None else None
        if grads is None:
            raise Unconfirmed("a step said to use the gradient of a loss that has none")
        if raw == CLIP:
            if clip is None:
                raise Unconfirmed("a step said to clip its gradients in a check that clips none")
            grads = clipped(grads, clip)
        return [None if g is None else g.detach().to("cpu") for g in grads]
    if not isinstance(raw, list) or len(raw) != len(params):
        raise Unconfirmed("a step's gradients do not match the model")
    return [None if g is None else _tensor(g, p, size=p.numel()) for g, p in zip(raw, params, strict=True)]


def _step_after(value: Any, before: torch.Tensor, grads: list[torch.Tensor | None], lrs: Any,
                params: list[torch.Tensor], size: int) -> torch.Tensor:
    """A step's weights after: ``SGD``, what plain SGD leaves (computed here); else as sent."""
    if isinstance(value, str) and value == SGD:
        if not isinstance(lrs, list) or len(lrs) != 1 or not isinstance(lrs[0], int | float):
            raise Unconfirmed("a step said to be plain SGD's with other than one learning rate")
        return sgd_after(before, grads, float(lrs[0]), params).to(torch.float64)
    return _tensor(value, size=size)


def _replay_step(tape: Tape, mark: dict, params: list[torch.Tensor], held: _Held, *, sgd: bool, chained: bool,
                 clip: float | None) -> torch.Tensor:
    before = held.weights(mark["before"])
    if chained and not _same(before, held.expected):
        raise Unconfirmed(f"an optimizer step (epoch {tape.epoch}) started from weights that neither the initial "
                          "ones nor the last step left")
    grads = _step_grads(tape, mark["grads"], params, clip)
    lrs = mark["lrs"]
    after = _step_after(mark["after"], before, grads, lrs, params, held.size)
    if sgd:
        if not isinstance(lrs, list) or len(lrs) != 1 or not isinstance(lrs[0], int | float):
            raise Unconfirmed("a step with other learning rates than the checker's optimizer has")
        moved = torch.cat([(g if g is not None else torch.zeros_like(p)).detach().reshape(-1).double().cpu()
                           for g, p in zip(grads, params, strict=True)]) * float(lrs[0])
        predicted = before - moved
        room = 4 * EPS32 * torch.maximum(torch.maximum(before.abs(), after.abs()), moved.abs()) + 1e-30
        wrecked = ~torch.isfinite(predicted) & ~torch.isfinite(after)  # a NaN or infinite gradient: so are the weights
        if not bool(((after - predicted).abs() <= room).logical_or(wrecked).all()):
            raise Unconfirmed(f"an optimizer step (epoch {tape.epoch}) moved the weights by other than lr times "
                              "the gradients it reports")
    tape.add("step", grads=grads, lrs=lrs)
    return after
