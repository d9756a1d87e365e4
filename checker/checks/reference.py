"""Differential checks: every protocol function against the trusted reference, at arguments drawn fresh.

The parent draws the arguments (``checker.setting.draws``) before any child forks. The same ``measure``
runs in the learner's child on the learner's file and in the reference process on
``solutions/loop.py`` (a process that never loads a learner file); the parent's ``judge``
compares the two answers. A file cannot tune itself for arguments it cannot predict, and it
cannot forge the answers without computing them, which takes a correct loop.

Tolerances admit float re-association (a mean taken in chunks, a running sum, zero_grad moved
around) and nothing larger.
"""

from __future__ import annotations

import math
from typing import Any

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.checks.common import is_nan, repeated_rows, scaled_loss, validation_set, worst_case
from checker.checks.loader import index_batches
from checker.setting.coverage import ALL_BUT_ONE, ALL_RIGHT, Case, TrainCase, seed_of
from checker.setting.draws import TrainDraw

DATA_TOL = 1e-6
"""make_data: float32 round-off of numbers below 3."""
WEIGHT_TOL = 1e-5
"""Weights after training, relative to the largest weight (at least 1): re-association only."""
LOSS_TOL = 1e-5
"""Reported losses, relative (at least 1): a mean of float32 losses however it is summed."""
IMPLEMENTATION_FLAGS = frozenset({"foreach", "fused", "capturable", "differentiable"})
"""Optimizer options that change how the update is computed, not what it is."""

# ---------------------------------------------------------------------------- shared helpers


def _plain(value: Any) -> Any:
    """A figure as JSON: tensors and NumPy scalars as floats, tuples as lists."""
    import numbers

    import torch

    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().reshape(-1).tolist() if value.numel() != 1 else float(value)
    if isinstance(value, numbers.Real):
        return float(value) if not isinstance(value, int) else int(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return repr(value)


def _weights(model) -> list[list]:
    """The model's parameters as ``[shape, values]`` pairs, in a canonical order (by shape, then values)."""
    pairs = [[list(p.shape), p.detach().cpu().double().reshape(-1).tolist()] for p in model.parameters()]
    return sorted(pairs, key=lambda pair: (pair[0], pair[1][:1]))


def _weight_diff(got: list[list], want: list[list]) -> tuple[float | None, str | None]:
    """Largest difference between two weight lists, relative to the largest reference weight (at least 1).

    None when the shapes differ; the second item names the tensor that differs most.
    """
    if [g[0] for g in got] != [w[0] for w in want]:
        return None, None
    scale = max([1.0] + [abs(v) for _, values in want for v in values])
    worst, where = 0.0, None
    for (shape, a), (_, b) in zip(got, want, strict=True):
        diff = max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)
        if diff != diff:  # NaN
            return float("inf"), "x".join(map(str, shape))
        if diff > worst:
            worst, where = diff, "x".join(map(str, shape))
    return worst / scale, where


def _close(a, b, tol: float) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(
            _close(x, y, tol) for x, y in zip(a, b, strict=True))
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


def _cases(one, mine: dict, ref: dict):
    """``one`` (the verdict on one call's answers) on the main call and on every argument class's case.

    A failing class is reported before the main call: the simplest failing case, its class named, with a
    passing case for contrast (``checker.checks.common.worst_case``)."""

    main = one(mine, ref)
    results = []
    for got, want in zip(mine.get("cases", []), ref.get("cases", []), strict=False):
        results.append((Case.from_dict(want["case"]), one(got, want)))
    worst = worst_case(results)
    if worst is not None:
        return worst
    if main.passed and results:
        return passed(COVERED, ok=_nest(main), k=len(results))
    return main


def _nest(verdict) -> Message:
    return Message(en=verdict.render("en"), es=verdict.render("es"))


COVERED = Message(en="{ok}; and the same at every argument class ({k} cases)",
                  es="{ok}; y lo mismo en cada clase de argumentos ({k} casos)")
RAISED = Message(en="{call} raised {error}; the reference's runs without error",
                 es="{call} lanzó {error}; la de la referencia se ejecuta sin error")


def _raised(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


def _device(lab) -> str:
    """The device a differential check passes: on the CPU ``"cpu:0"``, the CPU under another name, so a
    tensor moved to the protocol's default ``"cpu"`` instead of the device given shows (``recording_moves``)."""
    return "cpu:0" if lab.device == "cpu" else lab.device


class _Watch:
    """Counts tagged tensors (never moved) reaching a model's forward or a loss, on the CPU as on a GPU."""

    def __init__(self):
        self.inputs = self.labels = 0

    def model(self, model):
        from checker.setting.instruments import is_tagged

        def pre(module, args):
            self.inputs += any(is_tagged(a) for a in args)

        return model.register_forward_pre_hook(pre)

    def loss(self):
        from torch import nn

        from checker.setting.instruments import is_tagged

        watch = self

        class WatchedLoss(nn.CrossEntropyLoss):
            def forward(self, input, target):
                watch.inputs += is_tagged(input)
                watch.labels += is_tagged(target)
                return super().forward(input, target)

        return WatchedLoss()


MOVED_ELSEWHERE = Message(
    en="{call}: tensors were moved to {got}, while the reference moves every one to {want}: the device given is "
    "not passed on to every step (a function called without device= falls back to its default)",
    es="{call}: los tensores se movieron a {got}, mientras que la referencia los mueve todos a {want}: el "
    "dispositivo dado no llega a cada paso (una función llamada sin device= usa su valor por defecto)",
)
UNMOVED = Message(
    en="{call}: {inputs} input and {labels} label tensor(s) reached the model or the loss without a move to the "
    "device (.to(device) with device None, or its result dropped); the reference moves every one: on a GPU they "
    "would meet a model on another device",
    es="{call}: {inputs} tensor(es) de entrada y {labels} de etiquetas llegaron al modelo o a la pérdida sin "
    "moverse al dispositivo (.to(device) con device None, o su resultado descartado); la referencia los mueve "
    "todos: en una GPU encontrarían un modelo en otro dispositivo",
)


def _device_verdict(call: str, mine: dict, ref: dict):
    """Where the tensors went: every move to the reference's devices, none left unmoved; None when so."""
    if "moves" not in ref:
        return None
    if mine.get("unmoved_inputs", 0) > ref.get("unmoved_inputs", 0) or \
            mine.get("unmoved_labels", 0) > ref.get("unmoved_labels", 0):
        return failed(UNMOVED, call=call, inputs=mine["unmoved_inputs"], labels=mine["unmoved_labels"])
    if set(mine["moves"]) - set(ref["moves"]):
        return failed(MOVED_ELSEWHERE, call=call, got=", ".join(repr(d) for d in mine["moves"]),
                      want=", ".join(repr(d) for d in ref["moves"]))
    return None


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "(" + ", ".join(_shown(v) for v in value) + ")"
    return str(value)


class _EpochOrder:
    """A sampler whose order for epoch k depends on (seed, k) alone.

    A ``RandomSampler`` draws once more from its generator when its iterator is run to the end, so
    a correct loop that stops after ``len(loader)`` batches would see other orders from epoch 2 on.
    Here every epoch's order is fixed in advance, however the loop iterates.
    """

    def __init__(self, n: int, seed: int):
        self.n, self.seed, self.epoch = n, seed, 0

    def __iter__(self):
        import torch

        generator = torch.Generator().manual_seed(self.seed * 7919 + self.epoch)
        self.epoch += 1
        return iter(torch.randperm(self.n, generator=generator).tolist())

    def __len__(self) -> int:
        return self.n


class _PartOrder(_EpochOrder):
    """A sampler over part of the set: two thirds of the examples (which ones set by the seed), in a new order every
    epoch."""

    def __init__(self, n: int, seed: int):
        import torch

        super().__init__(n, seed)
        self.part = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:max(2, 2 * n // 3)].tolist()

    def __iter__(self):
        order = list(super().__iter__())
        return iter([self.part[i] for i in order if i < len(self.part)])

    def __len__(self) -> int:
        return len(self.part)


class _UnequalBatches:
    """A batch sampler whose batches differ in size (between 2 and twice ``batch_size``, set by the seed; never a
    batch of one), over the whole set in a new order every epoch."""

    def __init__(self, n: int, seed: int, batch_size: int):
        import random

        rng = random.Random(seed)
        sizes, left = [], n
        while left > 0:
            size = min(left, rng.randint(2, max(2, 2 * batch_size)))
            if left - size == 1:
                size += 1
            sizes.append(size)
            left -= size
        self.sizes, self.order = sizes, _EpochOrder(n, seed)

    def __iter__(self):
        order = list(iter(self.order))
        start = 0
        for size in self.sizes:
            yield order[start:start + size]
            start += size

    def __len__(self) -> int:
        return len(self.sizes)


LOSS_BY_SET = ("drop-last", "subset-sampler")
"""Loader kinds whose epoch sees fewer examples than its dataset holds: the mean loss of such an epoch may be taken
over the examples seen or over the dataset (a correct style divides by ``len(loader.dataset)``), so their runs
compare the weights and the validation figures, not the training loss."""


def _case_loader(case, X, y):
    """The loader a training case hands in (``TrainCase.loader``), over tagged ``X`` and ``y``, a whole batch taken
    at a time."""
    from torch.utils.data import DataLoader

    from checker.setting.instruments import BatchDataset

    data, n, seed = BatchDataset(X, y), len(X), case.loader_seed
    kind = getattr(case, "loader", "kata")
    if kind == "unequal-batches":
        return DataLoader(data, batch_sampler=_UnequalBatches(n, seed, case.batch_size), collate_fn=list)
    sampler = _PartOrder(n, seed) if kind == "subset-sampler" else _EpochOrder(n, seed)
    return DataLoader(data, batch_size=case.batch_size, sampler=sampler, collate_fn=list,
                      drop_last=kind == "drop-last")


def _loader(X, y, batch_size: int, seed: int):
    """The checker's own loader for a training run (the same batches in both processes)."""
    from torch.utils.data import DataLoader, TensorDataset

    return DataLoader(TensorDataset(X, y), batch_size=batch_size, sampler=_EpochOrder(len(X), seed))


def _scheduler(optimizer, d):
    import torch

    if d.scheduler == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=d.step_size, gamma=d.gamma)
    if d.scheduler == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=d.epochs)
    return None


def _describe(d) -> Message:
    """The drawn training setting, as a reader would write the call."""
    name = "SGD" if d.optimizer == "sgd" else "Adam"
    parts = [f"{name} lr={d.lr:g}", f"batch_size={d.batch_size}"]
    if d.scheduler == "step":
        parts.append(f"StepLR(step_size={d.step_size}, gamma={d.gamma:g})")
    elif d.scheduler == "cosine":
        parts.append(f"CosineAnnealingLR(T_max={d.epochs})")
    if d.clip is not None:
        parts.append(f"clip_norm={d.clip:g}")
    setting = ", ".join(parts)
    return Message(en=f"{setting} (loader seed {d.loader_seed}, model seed {d.model_seed})",
                   es=f"{setting} (semilla del cargador {d.loader_seed}, semilla del modelo {d.model_seed})")


# ---------------------------------------------------------------------------- seed_everything

SEED_TITLE = Message(en="seed_everything matches the reference at any seed",
                     es="seed_everything coincide con la referencia con cualquier semilla")
SEED_OK = Message(
    en="after {call}, random, NumPy and torch draw exactly what they draw after the reference's",
    es="tras {call}, random, NumPy y torch sacan exactamente lo mismo que tras la de la referencia",
)
SEED_DIFF = Message(
    en="after {call}, {source} drew {got}; after the reference's it draws {want}: {source} is not seeded with "
    "the seed given",
    es="tras {call}, {source} sacó {got}; tras la de la referencia saca {want}: {source} no queda fijado con la "
    "semilla dada",
)


def _seed_call(name: str, figures: dict) -> str:
    """How the check called ``name``: ``name()`` at the default seed, else ``name(seed=S)``."""
    return f"{name}()" if figures.get("default") else f"{name}(seed={figures['seed']})"


@check("reference.seed_everything", early=True, family="reference", calls=("seed_everything",),
       title=SEED_TITLE, cost=1, timeout=20.0, reference=True)
def seed_everything(loop, lab) -> dict:
    def one(seed: int, default: bool) -> dict:
        import random

        import numpy as np
        import torch

        from checker.setting.instruments import scramble_global_rng

        scramble_global_rng(seed % 1000 + 1)
        loop.seed_everything() if default else loop.seed_everything(seed=seed)
        draws = {
            "random": [random.random() for _ in range(3)],
            "NumPy": [float(v) for v in np.random.rand(3)],
            "torch": [float(v) for v in torch.rand(3)],
        }
        return {"seed": seed, "draws": draws, "default": default}

    out = one(lab.draw.seed_everything, False)
    cov = lab.draw.coverage
    if cov is not None:
        out["cases"] = [{**one(seed_of(c), c.default), "case": c.as_dict()} for c in cov.seeds]
    return out


def _seed_one(mine: dict, ref: dict):
    call = _seed_call("seed_everything", ref)
    for source, want in ref["draws"].items():
        got = mine["draws"].get(source)
        if got != want:
            return failed(SEED_DIFF, call=call, source=source, got=_shown(got), want=_shown(want))
    return passed(SEED_OK, call=call)


@seed_everything.judge
def _(mine: dict, ref: dict):
    return _cases(_seed_one, mine, ref)


# ---------------------------------------------------------------------------- make_data

DATA_TITLE = Message(en="make_data matches the reference at any seed",
                     es="make_data coincide con la referencia con cualquier semilla")
DATA_OK = Message(
    en="{call} gives exactly the reference's four tensors",
    es="{call} da exactamente los cuatro tensores de la referencia",
)
DATA_FORM = Message(
    en="{call} returned {got}; the reference returns four tensors: {want}",
    es="{call} devolvió {got}; la referencia devuelve cuatro tensores: {want}",
)
DATA_SEED_IGNORED = Message(
    en="{call} returned the same data as make_data(seed=0): the seed argument is ignored, so "
    "the data cannot be drawn again with another seed (the reference's {name} differs by up to {diff:.3g})",
    es="{call} devolvió los mismos datos que make_data(seed=0): el argumento seed se ignora, "
    "así que los datos no se pueden volver a generar con otra semilla (el {name} de la referencia difiere "
    "hasta {diff:.3g})",
)
DATA_ORDER = Message(
    en="{call}: {name} holds the reference's rows in another order",
    es="{call}: {name} tiene las filas de la referencia en otro orden",
)
DATA_VALUES = Message(
    en="{call}: {name} differs from the reference's by up to {diff:.3g}",
    es="{call}: {name} difiere del de la referencia hasta {diff:.3g}",
)
DATA_NAMES = ("X_train", "y_train", "X_val", "y_val")


@check("reference.make_data", early=True, family="reference", calls=("make_data",),
       title=DATA_TITLE, cost=4, timeout=20.0, reference=True)
def make_data(loop, lab) -> dict:
    out = _data_one(loop, lab, lab.draw.data_seed, False)
    cov = lab.draw.coverage
    if cov is not None:
        out["cases"] = [{**_data_one(loop, lab, seed_of(c), c.default), "case": c.as_dict()} for c in cov.seeds]
    return out


def _data_one(loop, lab, seed: int, default: bool) -> dict:
    import torch

    from checker.setting.instruments import type_name

    out = loop.make_data() if default else loop.make_data(seed=seed)
    if not isinstance(out, tuple | list) or len(out) != 4:
        return {"seed": seed, "default": default, "parts": None, "returned": type_name(out)}
    parts = []
    for name, got, lesson in zip(DATA_NAMES, out, lab.data.as_tuple(), strict=True):
        if not isinstance(got, torch.Tensor):
            parts.append({"name": name, "form": type_name(got)})
            continue
        values = got.detach().cpu()
        width = values.shape[1] if values.dim() == 2 else 1
        parts.append({
            "name": name, "form": f"{str(got.dtype).replace('torch.', '')} {tuple(got.shape)}",
            **_values_of(values.double().reshape(-1), width), "width": width,
            "as_seed0": seed != 0 and values.shape == lesson.shape and bool(torch.equal(values.double(),
                                                                                       lesson.double())),
        })
    return {"seed": seed, "default": default, "parts": parts}


FULL_VALUES = 4_000
"""Most values of one tensor sent as they are; a larger one (a real dataset's features: load_digits has 1,797
rows of 64) is sent as digests of its values and of its sorted rows (rounded to 1e-5), a sample of
``SAMPLE_VALUES`` evenly spaced values and its column means."""
SAMPLE_VALUES = 1_000


def _values_of(flat, width: int) -> dict:
    import hashlib

    import numpy as np

    if flat.numel() <= FULL_VALUES:
        return {"values": flat.tolist()}
    arr = flat.numpy()
    rounded = np.round(arr, 5) + 0.0  # + 0.0: -0.0 and 0.0 alike
    rows = rounded.reshape(-1, width) if arr.size % width == 0 else rounded.reshape(-1, 1)
    ordered = rows[np.lexsort(rows.T[::-1])]
    picks = np.linspace(0, arr.size - 1, SAMPLE_VALUES).astype(np.int64)
    return {"digest": hashlib.sha256(rounded.tobytes()).hexdigest(),
            "rows_digest": hashlib.sha256(ordered.tobytes()).hexdigest(),
            "sample": arr[picks].tolist(), "means": arr.reshape(-1, width).mean(axis=0).tolist()
            if arr.size % width == 0 else [float(arr.mean())]}


def _values_diff(got: dict, want: dict) -> float:
    """The largest difference between two parts' values: exact when both were sent whole, else measured on the
    sample and the column means (0.0 when the digests agree)."""
    if "values" in got and "values" in want:
        return max((abs(a - b) for a, b in zip(got["values"], want["values"], strict=True)), default=0.0)
    if got.get("digest") is not None and got.get("digest") == want.get("digest"):
        return 0.0
    pairs = [*zip(got.get("sample", []), want.get("sample", []), strict=False),
             *zip(got.get("means", []), want.get("means", []), strict=False)]
    return max((abs(a - b) for a, b in pairs), default=math.inf)


def _same_rows(got: dict, want: dict) -> bool:
    if "values" in got and "values" in want:
        return _rows(got["values"], got["width"]) == _rows(want["values"], want["width"])
    return got.get("rows_digest") is not None and got.get("rows_digest") == want.get("rows_digest")


def _rows(values: list[float], width: int) -> list[tuple]:
    return sorted(tuple(values[i:i + width]) for i in range(0, len(values), width))


@make_data.judge
def _(mine: dict, ref: dict):
    return _cases(_data_verdict, mine, ref)


def _data_verdict(mine: dict, ref: dict):
    call = _seed_call("make_data", ref)
    want_form = ", ".join(p["form"] for p in ref["parts"])
    if mine["parts"] is None:
        return failed(DATA_FORM, call=call, got=f"a {mine['returned']}", want=want_form)
    forms = [p["form"] for p in mine["parts"]]
    if forms != [p["form"] for p in ref["parts"]]:
        return failed(DATA_FORM, call=call, got=", ".join(forms), want=want_form)
    worst = None
    for got, want in zip(mine["parts"], ref["parts"], strict=True):
        diff = _values_diff(got, want)
        if not diff <= DATA_TOL:
            worst = worst or (got, want, diff)
    if worst is None:
        return passed(DATA_OK, call=call)
    got, want, diff = worst
    if all(p.get("as_seed0") for p in mine["parts"]):
        return failed(DATA_SEED_IGNORED, call=call, name=got["name"], diff=diff)
    if _same_rows(got, want):
        return failed(DATA_ORDER, call=call, name=got["name"])
    return failed(DATA_VALUES, call=call, name=got["name"], diff=diff)


# ---------------------------------------------------------------------------- make_loader

LOADER_TITLE = Message(en="make_loader matches the reference at any batch size and seed",
                       es="make_loader coincide con la referencia con cualquier tamaño de lote y semilla")
LOADER_OK = Message(
    en="{call} gives batches of {sizes}, every example once per epoch, "
    "in an order set by the seed alone and new every epoch",
    es="{call} da lotes de {sizes}, cada ejemplo una vez por época, en un "
    "orden que fija solo la semilla y que cambia cada época",
)
LOADER_SIZES = Message(
    en="{call} gave batches of {got}; the reference gives {want}",
    es="{call} dio lotes de {got}; la referencia da {want}",
)
LOADER_COVERAGE = Message(
    en="{call}: in epoch {epoch}, {missing} of the {n} examples never "
    "came and {repeated} came more than once",
    es="{call}: en la época {epoch}, {missing} de los {n} ejemplos no "
    "llegaron nunca y {repeated} llegaron más de una vez",
)
LOADER_UNPAIRED = Message(
    en="{call} separated rows from their labels",
    es="{call} separó filas de sus etiquetas",
)
LOADER_GLOBAL = Message(
    en="two loaders from {call} gave different orders when the global "
    "random state differed: the order does not depend on the seed alone",
    es="dos cargadores de {call} dieron órdenes distintos cuando el "
    "estado aleatorio global era distinto: el orden no depende solo de la semilla",
)
LOADER_SEED_IGNORED = Message(
    en="{call} and seed={other} give the same order: the seed is ignored",
    es="{call} y seed={other} dan el mismo orden: la semilla se ignora",
)
LOADER_SAME_EPOCHS = Message(
    en="{call} repeats one order in every epoch",
    es="{call} repite un mismo orden en todas las épocas",
)


LOADER_INTERLEAVED = Message(
    en="two loaders alive at once, {call} and seed={other}, iterated in turns: the first one's order changed "
    "(alone it starts {a}…, next to the other {c}…). The loaders share one random generator, so building or "
    "running one moves the other's order",
    es="dos cargadores vivos a la vez, {call} y seed={other}, recorridos por turnos: el orden del primero cambió "
    "(solo empieza {a}…, junto al otro {c}…). Los cargadores comparten un mismo generador aleatorio, así que "
    "crear o recorrer uno mueve el orden del otro",
)
LOADER_DEFAULTS = Message(
    en="make_loader(X, y) gave another order than make_loader(X, y, batch_size=32, seed=0) ({a}… and {c}…): "
    "the protocol's defaults are batch_size=32 and seed=0",
    es="make_loader(X, y) dio otro orden que make_loader(X, y, batch_size=32, seed=0) ({a}… y {c}…): los "
    "valores por defecto del protocolo son batch_size=32 y seed=0",
)
LOADER_INPUTS = Message(
    en="{call} changed the tensors it was given ({what}): a loader must leave X and y as they are",
    es="{call} cambió los tensores que recibió ({what}): un cargador debe dejar X e y como están",
)


def _loader_call(b, s, rows: int | None = None) -> str:
    if b is None:
        return "make_loader(X, y)"
    data = "X, y" if rows is None else f"X ({rows} rows), y"
    return f"make_loader({data}, batch_size={b}, seed={s})"


@check("reference.make_loader", early=True, family="reference", calls=("make_loader",),
       title=LOADER_TITLE, cost=20, timeout=20.0, reference=True)
def make_loader(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import scramble_global_rng

    b, s, other = lab.draw.loader_batch, lab.draw.loader_seed, lab.draw.loader_other_seed
    X = lab.data.X_train
    X_before = X.clone()

    def epochs(seed: int, rng: int) -> tuple[list[list[list[int]]], bool]:
        scramble_global_rng(rng)
        return index_batches(loop, lab, seed=seed, epochs=2, batch_size=b)

    first, paired = epochs(s, 3)
    again, _ = epochs(s, 4)
    moved, _ = epochs(other, 3)
    flat = [[i for batch in ep for i in batch] for ep in first]
    out = {
        "b": b, "s": s, "other": other, "n": len(X), "paired": paired,
        "sizes": [[len(batch) for batch in ep] for ep in first],
        "missing": [len(set(range(len(X))) - set(ep)) for ep in flat],
        "repeated": [len(ep) - len(set(ep)) for ep in flat],
        "same_seed_same_order": first == again, "seed_matters": first != moved,
        "reshuffles": len(flat) == 2 and flat[0] != flat[1],
    }
    cov = lab.draw.coverage
    if cov is None:
        return out
    cases = _class_cases(loop, X, s, cov) + _loader_rows(loop, X, s, cov.loader_rows)
    out["cases"] = cases
    out["defaults"] = _defaults(loop, X, cases)
    out["interleaved"] = _interleaved(loop, X, b, (s, other), flat[0])
    out["seed_points"] = _seed_points(loop, X, b)
    out["inputs"] = "" if torch.equal(X, X_before) else "X"
    return out


def _class_cases(loop, X, s: int, cov) -> list[dict]:
    """Every batch-size class: one epoch each, its sizes, every example once, rows with their labels."""
    import torch

    index = torch.arange(len(X))
    cases = []
    for case in cov.loader:
        loader = loop.make_loader(X, index) if case.default else loop.make_loader(X, index, batch_size=case.value,
                                                                                  seed=s)
        batches, pair = _one_epoch(loader, X)
        seen = [i for batch in batches for i in batch]
        cases.append({"b": None if case.default else case.value, "s": s, "n": len(X), "paired": pair,
                      "sizes": [[len(batch) for batch in batches]], "missing": [len(set(range(len(X))) - set(seen))],
                      "repeated": [len(seen) - len(set(seen))], "case": case.as_dict(),
                      "order": seen[:6] if case.default else None})
    return cases


def _defaults(loop, X, cases: list[dict]) -> dict:
    """The defaults: make_loader(X, y) is make_loader(X, y, batch_size=32, seed=0)."""
    import torch

    explicit, _ = _one_epoch(loop.make_loader(X, torch.arange(len(X)), batch_size=32, seed=0), X)
    order = [i for bt in explicit for i in bt][:6]
    default = next((c for c in cases if c["b"] is None), None)
    return {"a": default["order"] if default else [], "c": order,
            "same": default is not None and default["order"] == order}


def _interleaved(loop, X, b: int, seeds: tuple[int, int], alone_order: list[int]) -> dict:
    """Two loaders alive at once, iterated in turns: each keeps the order it has alone."""
    import torch

    from checker.setting.instruments import scramble_global_rng

    scramble_global_rng(5)
    index = torch.arange(len(X))
    one, two = (loop.make_loader(X, index, batch_size=b, seed=seed) for seed in seeds)
    turns = [i for (_, ia), _ in zip(one, two, strict=False) for i in ia.reshape(-1).tolist()]
    alone = alone_order[:len(turns)]
    return {"same": turns == alone, "a": alone[:6], "c": turns[:6]}


SEED_HEAD = 16
"""The indices of the first epoch's order kept at each of the seed domain's points."""


def _seed_points(loop, X, b: int) -> list[dict]:
    """The first epoch's order (its first ``SEED_HEAD`` indices) at every point of the seed's domain (0, each power
    of ten, 2**32 - 1, the course's seeds): a seed reduced, capped or raised past some threshold shows as an order
    that leaves the reference's past it."""
    import torch

    from checker.setting.coverage import points
    from checker.setting.domains import domain_of

    index = torch.arange(len(X))
    out = []
    for seed in points(domain_of("make_loader", "seed")):
        batches, _ = _one_epoch(loop.make_loader(X, index, batch_size=b, seed=int(seed)), X)
        out.append({"seed": int(seed), "order": [i for batch in batches for i in batch][:SEED_HEAD]})
    return out


LOADER_SEED_POINT = Message(
    en="make_loader(X, y, batch_size={b}, seed={seed}) gave another first order ({got}…) than the reference "
    "({want}…), while at seed={agree} the two agree: a seed of that size is handled differently (cut short, "
    "capped or raised), so runs meant to differ may repeat each other",
    es="make_loader(X, y, batch_size={b}, seed={seed}) dio otro primer orden ({got}…) que la referencia "
    "({want}…), mientras que con seed={agree} los dos coinciden: una semilla de ese tamaño se trata de otra manera "
    "(recortada, topada o subida), así que ejecuciones que deberían diferir pueden repetirse",
)


def _seed_points_verdict(mine: dict, ref: dict):
    """Where the file's order agrees with the reference's at some seed of the domain, it must agree at every one
    (a loader that shuffles its own correct way agrees at none and is judged by the other cases)."""
    got, want = mine.get("seed_points") or [], ref.get("seed_points") or []
    same = [g["order"] == w["order"] for g, w in zip(got, want, strict=False)]
    if not any(same) or all(same) or len(got) != len(want):
        return None
    agree = next(g["seed"] for g, ok in zip(got, same, strict=True) if ok)
    bad = next((g, w) for g, w, ok in zip(got, want, same, strict=True) if not ok)
    return failed(LOADER_SEED_POINT, b=ref["b"], seed=bad[1]["seed"], got=_head(bad[0]["order"]),
                  want=_head(bad[1]["order"]), agree=agree)


def _loader_rows(loop, X, seed: int, cases) -> list[dict]:
    """make_loader over sets of other sizes (``coverage.loader_rows_cases``): the track's rows repeated, or the
    first rows; one epoch each: its batch sizes, every example once, rows kept with their labels (the order's
    own contract at each size is loader.order's: it needs no reference)."""
    import torch

    out = []
    for case in cases:
        rows, b = int(case.value), int(dict(case.facts)["b"])
        index = torch.arange(rows)
        Xr = X[index % len(X)]
        batches, pair = _one_epoch(loop.make_loader(Xr, index, batch_size=b, seed=seed), Xr)
        seen = [i for batch in batches for i in batch]
        out.append({"b": b, "s": seed, "n": rows, "paired": pair, "sizes": [[len(batch) for batch in batches]],
                    "missing": [len(set(range(rows)) - set(seen))], "repeated": [len(seen) - len(set(seen))],
                    "case": case.as_dict(), "order": None, "rows": rows})
    return out


def _one_epoch(loader, X) -> tuple[list[list[int]], bool]:
    import torch

    batches, paired = [], True
    for xb, ib in loader:
        ib = ib.detach().cpu().long().reshape(-1)
        paired = paired and bool(torch.equal(xb.detach().cpu().reshape(len(ib), -1), X[ib]))
        batches.append(ib.tolist())
    return batches, paired


def _sizes(sizes: list[int]) -> str:
    if len(sizes) > 8:
        return ", ".join(map(str, sizes[:6])) + f", … ({len(sizes)} batches, last {sizes[-1]})"
    return ", ".join(map(str, sizes)) or "none"


def _loader_one(mine: dict, ref: dict):
    args = dict(call=_loader_call(ref["b"], ref["s"], ref.get("rows")))
    for got, want in zip(mine["sizes"], ref["sizes"], strict=False):
        if got != want:
            return failed(LOADER_SIZES, got=_sizes(got), want=_sizes(want), **args)
    if len(mine["sizes"]) != len(ref["sizes"]):
        return failed(LOADER_SIZES, got="none", want=_sizes(ref["sizes"][0]), **args)
    for epoch, (missing, repeated) in enumerate(zip(mine["missing"], mine["repeated"], strict=True), start=1):
        if missing or repeated:
            return failed(LOADER_COVERAGE, epoch=epoch, missing=missing, repeated=repeated, n=ref["n"], **args)
    if not mine["paired"]:
        return failed(LOADER_UNPAIRED, **args)
    if "same_seed_same_order" not in ref:  # one epoch of one class: sizes and coverage only
        return passed(LOADER_OK_CASE, sizes=_sizes(ref["sizes"][0]), **args)
    if not mine["same_seed_same_order"]:
        return failed(LOADER_GLOBAL, **args)
    if not mine["seed_matters"] and ref["seed_matters"]:
        return failed(LOADER_SEED_IGNORED, other=ref["other"], **args)
    if not mine["reshuffles"] and ref["reshuffles"]:
        return failed(LOADER_SAME_EPOCHS, **args)
    return passed(LOADER_OK, sizes=_sizes(ref["sizes"][0]), **args)


LOADER_OK_CASE = Message(en="{call} gives batches of {sizes}, every example once",
                         es="{call} da lotes de {sizes}, cada ejemplo una vez")


@make_loader.judge
def _(mine: dict, ref: dict):
    verdict = _cases(_loader_one, mine, ref)
    if not verdict.passed:
        return verdict
    args = dict(call=_loader_call(ref["b"], ref["s"]), other=ref["other"])
    if mine.get("inputs"):
        return failed(LOADER_INPUTS, what=mine["inputs"], **args)
    if "interleaved" in ref and not mine["interleaved"]["same"] and ref["interleaved"]["same"]:
        return failed(LOADER_INTERLEAVED, a=_head(mine["interleaved"]["a"]), c=_head(mine["interleaved"]["c"]),
                      **args)
    if "defaults" in ref and not mine["defaults"]["same"] and ref["defaults"]["same"]:
        return failed(LOADER_DEFAULTS, a=_head(mine["defaults"]["a"]), c=_head(mine["defaults"]["c"]))
    return _seed_points_verdict(mine, ref) or verdict


def _head(xs: list[int]) -> str:
    return ", ".join(map(str, xs[:6]))


# ---------------------------------------------------------------------------- make_model

MODEL_TITLE = Message(en="make_model matches the reference at any seed",
                      es="make_model coincide con la referencia con cualquier semilla")
MODEL_OK = Message(
    en="{call} starts from exactly the reference's weights",
    es="{call} empieza exactamente con los pesos de la referencia",
)
MODEL_SHAPES = Message(
    en="{call} has parameters of shapes {got}; the reference's has {want}",
    es="{call} tiene parámetros de formas {got}; el de la referencia tiene {want}",
)
MODEL_SEED_IGNORED = Message(
    en="{call} starts from the same weights as make_model(seed=0): the seed argument is "
    "ignored (the reference's {where} weights differ by up to {diff:.3g})",
    es="{call} empieza con los mismos pesos que make_model(seed=0): el argumento seed se "
    "ignora (los pesos {where} de la referencia difieren hasta {diff:.3g})",
)
MODEL_WEIGHTS = Message(
    en="{call}: the {where} weights differ from the reference's at that seed by up to "
    "{diff:.3g}",
    es="{call}: los pesos {where} difieren de los de la referencia con esa semilla hasta "
    "{diff:.3g}",
)


@check("reference.make_model", early=True, family="reference", calls=("make_model",),
       title=MODEL_TITLE, cost=1, timeout=20.0, reference=True)
def make_model(loop, lab) -> dict:
    from checker.setting.instruments import lesson_mlp

    seed0 = _weights(lesson_mlp(0, track=lab.track))
    out = _model_one(loop, lab.draw.model_seed, False, seed0)
    cov = lab.draw.coverage
    if cov is not None:
        out["cases"] = [{**_model_one(loop, seed_of(c), c.default, seed0), "case": c.as_dict()} for c in cov.seeds]
    return out


def _model_one(loop, seed: int, default: bool, seed0: list) -> dict:
    import torch

    from checker.setting.instruments import scramble_global_rng, type_name

    scramble_global_rng(seed % 997 + 5)
    model = loop.make_model() if default else loop.make_model(seed=seed)
    if not isinstance(model, torch.nn.Module):
        return {"seed": seed, "default": default, "weights": None, "returned": type_name(model)}
    weights = _weights(model)
    return {"seed": seed, "default": default, "weights": weights, "as_seed0": seed != 0 and weights == seed0}


def _shapes(weights: list[list]) -> str:
    return ", ".join("x".join(map(str, shape)) for shape, _ in weights)


@make_model.judge
def _(mine: dict, ref: dict):
    return _cases(_model_one_verdict, mine, ref)


def _model_one_verdict(mine: dict, ref: dict):
    call = _seed_call("make_model", ref)
    if mine["weights"] is None:
        return failed(MODEL_SHAPES, call=call, got=f"none (it returned a {mine['returned']})",
                      want=_shapes(ref["weights"]))
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None:
        return failed(MODEL_SHAPES, call=call, got=_shapes(mine["weights"]), want=_shapes(ref["weights"]))
    if diff == 0.0:
        return passed(MODEL_OK, call=call)
    if mine.get("as_seed0"):
        return failed(MODEL_SEED_IGNORED, call=call, where=where, diff=diff)
    return failed(MODEL_WEIGHTS, call=call, where=where, diff=diff)


# ---------------------------------------------------------------------------- make_optimizer

OPT_TITLE = Message(en="make_optimizer matches the reference's every setting",
                    es="make_optimizer coincide con la referencia en cada ajuste")
OPT_OK = Message(
    en="make_optimizer builds {built}: the reference's class and every setting that changes the update",
    es="make_optimizer crea {built}: la clase de la referencia y cada ajuste que cambia la actualización",
)
OPT_CLASS = Message(
    en='{call} built a {got}; the reference builds a torch.optim.{want}',
    es='{call} creó un {got}; la referencia crea un torch.optim.{want}',
)
OPT_SETTING = Message(
    en='{call} built a torch.optim.{want_class} whose {key} is {got}; the '
    "reference's is {want}. That setting changes every update, so training follows another path",
    es='{call} creó un torch.optim.{want_class} cuyo {key} es {got}; el de la '
    "referencia es {want}. Ese ajuste cambia cada actualización, así que el entrenamiento sigue otro camino",
)


def _optimizer_class(opt) -> str:
    import torch

    for cls in type(opt).__mro__:
        if cls.__module__.startswith("torch.optim") and cls is not torch.optim.Optimizer:
            return cls.__name__
    return f"{type(opt).__module__}.{type(opt).__qualname__}"


def _opt_call(row: dict) -> str:
    if row.get("default") == "all":
        return "make_optimizer(model)"
    if row.get("default") == "name":
        return f"make_optimizer(model, lr={row['lr']:g})"
    return f'make_optimizer(model, name="{row["name"]}", lr={row["lr"]:g})'


@check("reference.make_optimizer", family="reference", calls=("make_optimizer",),
       title=OPT_TITLE, cost=1, timeout=20.0, reference=True)
def make_optimizer(loop, lab) -> dict:
    from checker.setting.instruments import lesson_mlp

    def row(name: str, lr: float, default: str | None = None) -> dict:
        model = lesson_mlp(0, device=lab.device, track=lab.track)
        try:
            if default == "all":
                opt = loop.make_optimizer(model)
            elif default == "name":
                opt = loop.make_optimizer(model, lr=lr)
            else:
                opt = loop.make_optimizer(model, name=name, lr=lr)
        except Exception as exc:  # noqa: BLE001 - the file's error is the figure
            return {"name": name, "lr": lr, "default": default, "raised": _raised(exc), "class": None,
                    "per_param": []}
        return {"name": name, "lr": lr, "default": default, **_settings(opt, model)}

    out = {"rows": [row("sgd", lab.draw.sgd_lr), row("adam", lab.draw.adam_lr)]}
    cov = lab.draw.coverage
    if cov is not None:
        cases = []
        for c in cov.optimizers:
            name = dict(c.facts)["name"]
            lr = 0.1 if c.value is None else c.value
            default = ("all" if c.value is None else "name") if c.default else None
            cases.append({"rows": [row(name, lr, default)], "case": c.as_dict()})
        out["cases"] = cases
    return out


@make_optimizer.judge
def _(mine: dict, ref: dict):
    return _cases(_opt_one, mine, ref)


def _opt_one(mine: dict, ref: dict):
    for got, want in zip(mine["rows"], ref["rows"], strict=True):
        args = dict(call=_opt_call(want))
        if got.get("raised") and not want.get("raised"):
            return failed(RAISED, error=got["raised"], **args)
        if got["class"] != want["class"]:
            return failed(OPT_CLASS, got=got["class"], want=want["class"], **args)
        # each parameter's settings, wherever the file grouped it: parameter groups with equal settings update
        # alike; a parameter the optimizer does not hold is optimizer.setup's to report
        for g, w in zip(got["per_param"], want["per_param"], strict=False):
            if g is None or w is None:
                continue
            for key in sorted(set(g) | set(w)):
                if not _close(g.get(key), w.get(key), 1e-9):
                    return failed(OPT_SETTING, want_class=want["class"], key=key, got=_shown(g.get(key)),
                                  want=_shown(w.get(key)), **args)
    built = " and ".join(f"{w['class']} (lr {w['lr']:g})" for w in ref["rows"])
    return passed(OPT_OK, built=built)


# ---------------------------------------------------------------------------- train_epoch and fit

TRAIN_TITLE = Message(en="train_epoch matches the reference with your optimizer",
                      es="train_epoch coincide con la referencia con tu optimizador")
FIT_TITLE = Message(en="fit matches the reference with your optimizer",
                    es="fit coincide con la referencia con tu optimizador")
TRAIN_OK = Message(
    en="{call} with {setting} ends with the reference's weights (largest relative difference {diff:.1e}) and "
    "reports the reference's figures",
    es="{call} con {setting} termina con los pesos de la referencia (mayor diferencia relativa {diff:.1e}) y da "
    "las cifras de la referencia",
)
TRAIN_WEIGHTS = Message(
    en="{call} with {setting} (your make_optimizer) ended with weights that differ from the reference's by up "
    "to {diff:.3g} (relative, in the {where} weights). {blame}",
    es="{call} con {setting} (tu make_optimizer) terminó con pesos que difieren de los de la referencia hasta "
    "{diff:.3g} (relativo, en los pesos {where}). {blame}",
)
TRAIN_WEIGHTS_KATAS = Message(
    en="{call} with {setting} (an optimizer kata built itself) ended with weights that differ from the reference's "
    "by up to {diff:.3g} (relative, in the {where} weights): the training steps themselves do something else",
    es="{call} con {setting} (un optimizador que creó kata) terminó con pesos que difieren de los de la referencia "
    "hasta {diff:.3g} (relativo, en los pesos {where}): son los propios pasos de entrenamiento los que hacen otra "
    "cosa",
)
BLAME_OPTIMIZER = Message(
    en="The optimizer make_optimizer built is not the reference's (another class, another setting, or not "
    "exactly this model's parameters: see reference.make_optimizer and optimizer.setup): start there",
    es="El optimizador que creó make_optimizer no es el de la referencia (otra clase, otro ajuste, o no "
    "exactamente los parámetros de este modelo: mira reference.make_optimizer y optimizer.setup): empieza por "
    "ahí",
)
BLAME_LOOP = Message(
    en="make_optimizer built the reference's optimizer, so the training steps themselves do something else",
    es="make_optimizer creó el optimizador de la referencia, así que son los propios pasos de entrenamiento "
    "los que hacen otra cosa",
)
TRAIN_LOSS = Message(
    en="{call} with {setting} returned a training loss of {got}; the reference's is {want} for the same "
    "batches",
    es="{call} con {setting} devolvió una pérdida de entrenamiento de {got}; la de la referencia es {want} "
    "para los mismos lotes",
)
FIT_ROWS = Message(
    en="{call} with {setting} returned {got} history rows; the reference returns {want}",
    es="{call} con {setting} devolvió {got} filas de historial; la referencia devuelve {want}",
)
FIT_VALUE = Message(
    en="{call} with {setting}: epoch {epoch}'s {key} is {got}; the reference's is {want}",
    es="{call} con {setting}: el {key} de la época {epoch} es {got}; el de la referencia es {want}",
)


def _settings(opt, model) -> dict:
    """What of an optimizer changes the update: its class, the settings of the group that holds each of the
    model's parameters (in ``model.parameters()`` order; None for one it does not hold), and whether it holds
    exactly the model's parameters. Per parameter, not per group: one group or one per layer, with the same
    settings, is the same optimizer."""
    groups = [g for g in getattr(opt, "param_groups", None) or [] if isinstance(g, dict)]
    held = [id(p) for g in groups for p in g.get("params", [])]
    settings = {id(p): {str(k): _plain(v) for k, v in g.items() if k != "params" and k not in IMPLEMENTATION_FLAGS}
                for g in groups for p in g.get("params", [])}
    return {"class": _optimizer_class(opt),
            "per_param": [settings.get(id(p)) for p in model.parameters()],
            "holds_the_model": sorted(held) == sorted(id(p) for p in model.parameters())}


def _training(loop, lab, d, *, fit: bool) -> dict:
    """A short run with the checker's model and loader and the file's own optimizer."""
    import torch
    from torch import nn

    from checker.setting.instruments import lesson_mlp, plain_number

    model = lesson_mlp(d.model_seed, device=lab.device, track=lab.track)
    loader = _loader(lab.data.X_train, lab.data.y_train, d.batch_size, d.loader_seed)
    optimizer = loop.make_optimizer(model, name=d.optimizer, lr=d.lr)
    settings = _settings(optimizer, model)  # before training: a scheduler changes the lr as it goes
    # a model with dropout draws its masks from the global generator: the same state on both sides
    torch.manual_seed(d.model_seed ^ d.loader_seed)
    if fit:
        history = loop.fit(model, optimizer, loader, nn.CrossEntropyLoss(), d.epochs,
                           scheduler=_scheduler(optimizer, d), val=(lab.data.X_val, lab.data.y_val),
                           clip_norm=d.clip, device=lab.device)
        rows = [{str(k): plain_number(v) for k, v in row.items()} if isinstance(row, dict) else None
                for row in (history if isinstance(history, list) else [])]
        return {"history": rows, "weights": _weights(model), "optimizer": settings}
    loss = loop.train_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), clip_norm=d.clip, device=lab.device)
    return {"loss": plain_number(loss), "weights": _weights(model), "optimizer": settings}


def _training_case(loop, lab, case, *, fit: bool) -> dict:
    """One class's run: tagged data (a tensor that reaches the model or the loss unmoved shows), the
    device given under another name than the default's (``_device``), every move recorded; at the
    protocol's defaults (``case.defaults``) only the required arguments are passed."""
    import torch

    from checker.setting.instruments import lesson_mlp, plain_number, recording_moves, tag

    device = _device(lab)
    # at the defaults (no device=) the loop works on the protocol's default device, the CPU: the model is there
    model = lesson_mlp(case.model_seed, device="cpu" if case.defaults else lab.device, track=lab.track)
    X, y = repeated_rows(lab.data.X_train[:case.rows], lab.data.y_train[:case.rows], getattr(case, "repeat", None))
    X_kept, y_kept, Xv_kept, yv_kept = X.clone(), y.clone(), lab.data.X_val.clone(), lab.data.y_val.clone()
    # the batches of the case's kind of loader, taken a whole batch at a time (a tagged tensor costs at every
    # operation)
    loader = _case_loader(case, tag(X), tag(y))
    optimizer = torch.optim.SGD(model.parameters(), lr=case.lr) if case.optimizer == "sgd" else \
        torch.optim.Adam(model.parameters(), lr=case.lr)  # the checker's own: make_optimizer is judged apart
    watch = _Watch()
    hook = watch.model(model)
    loss_fn = scaled_loss(watch.loss(), getattr(case, "loss_scale", None))
    torch.manual_seed(case.model_seed ^ case.loader_seed)
    out: dict = {"draw": _case_dict(case)}
    try:
        with recording_moves() as moves:
            if fit:
                if case.defaults:
                    history = loop.fit(model, optimizer, loader, loss_fn, case.epochs)
                else:
                    val = tuple(tag(t) for t in validation_set(lab, getattr(case, "val_repeat", False)))
                    scheduler = _scheduler(optimizer, case)
                    extra = {} if scheduler is None else {"scheduler": scheduler}
                    history = loop.fit(model, optimizer, loader, loss_fn, case.epochs, val=val, clip_norm=case.clip,
                                       device=device, **extra)
            elif case.defaults:
                loss = loop.train_epoch(model, loader, optimizer, loss_fn)
            else:
                loss = loop.train_epoch(model, loader, optimizer, loss_fn, clip_norm=case.clip, device=device)
    except Exception as exc:  # noqa: BLE001 - the file's error is the figure
        return {**out, "raised": _raised(exc)}
    finally:
        hook.remove()
    model.to(lab.device)
    d = lab.data
    changed = [name for name, t, kept in (("X_train", X, X_kept), ("y_train", y, y_kept), ("X_val", d.X_val, Xv_kept),
                                          ("y_val", d.y_val, yv_kept)) if not torch.equal(t, kept)]
    out.update(weights=_weights(model), moves=sorted(set(moves)), unmoved_inputs=watch.inputs,
               unmoved_labels=watch.labels, changed=changed)
    if fit:
        out["history"] = [{str(k): plain_number(v) for k, v in row.items()} if isinstance(row, dict) else None
                          for row in (history if isinstance(history, list) else [])]
    else:
        out["loss"] = plain_number(loss)
    return out


def _case_dict(case) -> dict:
    from dataclasses import asdict

    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(case).items()}


def _train_call(draw: dict, *, fit: bool) -> str:
    if fit:
        if draw.get("defaults"):
            return f"fit(model, optimizer, loader, loss_fn, {draw['epochs']})"
        return f"fit(..., epochs={draw['epochs']}, val=(X_val, y_val), device=...)"
    return "train_epoch(model, loader, optimizer, loss_fn)" if draw.get("defaults") else "train_epoch(...)"


def _train_case_verdict(mine: dict, ref: dict, *, fit: bool):
    """The verdict on one class's run; its class is named by ``_case_results``."""
    d = ref["draw"]
    call = _train_call(d, fit=fit)
    if mine.get("raised"):
        return failed(RAISED, call=call, error=mine["raised"])
    moved = _device_verdict(call, mine, ref)
    if moved is not None:
        return moved
    if mine.get("changed"):
        return failed(TRAIN_CHANGED, call=call, what=", ".join(mine["changed"]))
    return (_fit_one if fit else _train_one)(mine, ref, call=call)


TRAIN_CHANGED = Message(
    en="{call} changed the data it was given ({what}): training reads the data, it must leave it as it is (an "
    "in-place operation on the tensors writes into the dataset every later epoch reads)",
    es="{call} cambió los datos que recibió ({what}): entrenar lee los datos, debe dejarlos como están (una "
    "operación en el sitio sobre los tensores escribe en el dataset que leen las épocas siguientes)",
)


def _case_results(mine: dict, ref: dict, *, fit: bool):
    results = []
    for got, want in zip(mine.get("cases", []), ref.get("cases", []), strict=False):
        d = dict(want["draw"])
        case = TrainCase(**{**d, "classes": tuple(d["classes"])})
        results.append((case, _train_case_verdict(got, want, fit=fit)))
    return worst_case(results), len(results)


@check("reference.train_epoch", family="reference", calls=("train_epoch", "make_optimizer"),
       title=TRAIN_TITLE, cost=22, timeout=20.0, reference=True)
def train_epoch(loop, lab) -> dict:
    out = {"draw": lab.draw.train_epoch.__dict__, **_training(loop, lab, lab.draw.train_epoch, fit=False)}
    if lab.draw.coverage is not None:
        out["cases"] = [_training_case(loop, lab, c, fit=False) for c in lab.draw.coverage.train]
    return out


def _blame(mine: dict, ref: dict) -> Message:
    same = mine.get("optimizer") == ref.get("optimizer")
    return BLAME_LOOP if same else BLAME_OPTIMIZER


def _setting(draw: dict) -> Message:
    from dataclasses import fields

    setting = _describe(TrainDraw(**{f.name: draw.get(f.name) for f in fields(TrainDraw)}))
    if draw.get("rows"):
        setting = Message(en=f"{setting.en} on the first {draw['rows']} training examples",
                          es=f"{setting.es} sobre los primeros {draw['rows']} ejemplos de entrenamiento")
    if draw.get("loss_scale"):
        setting = Message(en=f"{setting.en}, loss_fn times {draw['loss_scale']:g}",
                          es=f"{setting.es}, loss_fn por {draw['loss_scale']:g}")
    return setting


def _weights_differ(mine: dict, ref: dict, diff: float | None, where: str | None, args: dict):
    """The failure of a run that ended with other weights than the reference's (``diff`` None: other shapes)."""
    shown = dict(diff=float("inf") if diff is None else diff, where=where or "?", **args)
    if "optimizer" not in ref:  # a class's run: kata built the optimizer, make_optimizer is judged apart
        return failed(TRAIN_WEIGHTS_KATAS, **shown)
    return failed(TRAIN_WEIGHTS, blame=_blame(mine, ref), **shown)


def _train_one(mine: dict, ref: dict, *, call: str = "train_epoch(...)"):
    args = dict(call=call, setting=_setting(ref["draw"]))
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None or not diff <= WEIGHT_TOL:
        return _weights_differ(mine, ref, diff, where, args)
    if ref["draw"].get("loader") not in LOSS_BY_SET and not _close(mine["loss"], ref["loss"], LOSS_TOL):
        return failed(TRAIN_LOSS, got=_shown(mine["loss"]), want=_shown(ref["loss"]), **args)
    return passed(TRAIN_OK, diff=diff, **args)


def _covered_run(mine: dict, ref: dict, *, fit: bool):
    """A training check's verdict: the simplest failing case if any, else the drawn run (noting the cases)."""
    worst, k = _case_results(mine, ref, fit=fit)
    if worst is not None:
        return worst
    main = (_fit_one if fit else _train_one)(mine, ref)
    return passed(COVERED, ok=_nest(main), k=k) if main.passed and k else main


@train_epoch.judge
def _(mine: dict, ref: dict):
    return _covered_run(mine, ref, fit=False)


@check("reference.fit", family="reference", calls=("fit", "make_optimizer"),
       title=FIT_TITLE, cost=25, timeout=20.0, reference=True)
def fit(loop, lab) -> dict:
    out = {"draw": lab.draw.fit.__dict__, **_training(loop, lab, lab.draw.fit, fit=True)}
    if lab.draw.coverage is not None:
        out["cases"] = [_training_case(loop, lab, c, fit=True) for c in lab.draw.coverage.fit]
    return out


def _compared(key: str, draw: dict) -> bool:
    """Whether a history's ``key`` is compared with the reference's in the run ``draw``: not the training loss of a
    loader that sees part of its set (``LOSS_BY_SET``), nor the validation loss under a scaled loss_fn (a correct fit
    may validate with its own criterion, unscaled; the weights and the training loss show the clip)."""
    if key == "train_loss":
        return draw.get("loader") not in LOSS_BY_SET
    return not (key == "val_loss" and draw.get("loss_scale"))


def _fit_one(mine: dict, ref: dict, *, call: str | None = None):
    d = ref["draw"]
    args = dict(call=call or f"fit(..., epochs={d['epochs']}, val=(X_val, y_val))", setting=_setting(d))
    got_rows, want_rows = mine["history"], ref["history"]
    if len(got_rows) != len(want_rows):
        return failed(FIT_ROWS, got=len(got_rows), want=len(want_rows), **args)
    for epoch, (got, want) in enumerate(zip(got_rows, want_rows, strict=True), start=1):
        for key, value in want.items():
            if not _compared(key, d):
                continue
            mine_value = (got or {}).get(key)
            tol = 1e-9 if key in ("epoch", "lr") else LOSS_TOL
            if not _close(mine_value, value, tol):
                return failed(FIT_VALUE, epoch=epoch, key=key, got=_shown(mine_value), want=_shown(value), **args)
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None or not diff <= WEIGHT_TOL:
        return _weights_differ(mine, ref, diff, where, args)
    return passed(TRAIN_OK, diff=diff, **args)


@fit.judge
def _(mine: dict, ref: dict):
    return _covered_run(mine, ref, fit=True)


# ---------------------------------------------------------------------------- evaluate

EVAL_TITLE = Message(en="evaluate matches the reference at random weights",
                     es="evaluate coincide con la referencia con pesos al azar")
EVAL_OK = Message(
    en="evaluate on {rows} validation examples with the weights of model seed {seed} gives the reference's "
    "loss and accuracy ({loss:.4f}, {acc:.3f})",
    es="evaluate sobre {rows} ejemplos de validación con los pesos de la semilla de modelo {seed} da la pérdida "
    "y la exactitud de la referencia ({loss:.4f}, {acc:.3f})",
)
EVAL_DIFF = Message(
    en="evaluate on {rows} validation examples, with the weights of model seed {seed}, returned {got}; the "
    "reference returns ({loss:.6g}, {acc:.6g})",
    es="evaluate sobre {rows} ejemplos de validación, con los pesos de la semilla de modelo {seed}, devolvió "
    "{got}; la referencia devuelve ({loss:.6g}, {acc:.6g})",
)


EVAL_CASE_DIFF = Message(
    en="{call} on {rows} rows, with the weights of model seed {seed}, returned {got}; the reference returns "
    "({loss:.6g}, {acc:.6g})",
    es="{call} sobre {rows} filas, con los pesos de la semilla de modelo {seed}, devolvió {got}; la referencia "
    "devuelve ({loss:.6g}, {acc:.6g})",
)
EVAL_CASE_OK = Message(en="{call} on {rows} rows gives the reference's loss and accuracy",
                       es="{call} sobre {rows} filas da la pérdida y la exactitud de la referencia")
EVAL_TWICE = Message(
    en="{call} on {rows} rows returned {got} and then {again} on the same model and data: a second evaluation "
    "must give the same figures (nothing may change the model or the data)",
    es="{call} sobre {rows} filas devolvió {got} y luego {again} con el mismo modelo y datos: una segunda "
    "evaluación debe dar las mismas cifras (nada puede cambiar el modelo ni los datos)",
)
EVAL_CHANGED = Message(
    en="{call} on {rows} rows changed {what}: evaluating must leave the model and the data as they were",
    es="{call} sobre {rows} filas cambió {what}: evaluar debe dejar el modelo y los datos como estaban",
)


@check("reference.evaluate", early=True, family="reference", calls=("evaluate",),
       title=EVAL_TITLE, cost=4, timeout=20.0, reference=True)
def evaluate(loop, lab) -> dict:
    from torch import nn

    from checker.setting.instruments import lesson_mlp, plain_number

    seed, rows = lab.draw.evaluate_seed, lab.draw.evaluate_rows
    model = lesson_mlp(seed, device=lab.device, track=lab.track)
    out = loop.evaluate(model, lab.data.X_val[:rows], lab.data.y_val[:rows], nn.CrossEntropyLoss(),
                        device=lab.device)
    pair = [plain_number(v) for v in out] if isinstance(out, tuple | list) and len(out) == 2 else None
    figures = {"seed": seed, "rows": rows, "result": pair, "returned": repr(out)[:80]}
    cov = lab.draw.coverage
    if cov is not None:
        figures["cases"] = [{**_evaluate_case(loop, lab, seed, c.value, default=False, labels=c.kind),
                             "case": c.as_dict()} for c in cov.rows]
        figures["defaults"] = _evaluate_case(loop, lab, seed, len(lab.data.X_val), default=True)
    return figures


def _evaluate_case(loop, lab, seed: int, rows: int, *, default: bool, labels: str = "") -> dict:
    """evaluate twice on ``rows`` rows (validation rows first, then training rows), tagged, at the device
    given under another name (``_device``) or, with ``default``, without a device: the answers, whether the
    inputs and the weights stayed as they were, and where every tensor went. With ``labels`` ALL_RIGHT (or
    ALL_BUT_ONE) the labels are the model's own predictions (all but the last row's)."""
    import torch

    from checker.setting.instruments import lesson_mlp, plain_number, recording_moves, tag

    d = lab.data
    X, y = torch.cat([d.X_val, d.X_train]), torch.cat([d.y_val, d.y_train])
    if rows > len(X):  # more rows than the track has: its rows again, as often as it takes
        times = -(-rows // len(X))
        X, y = X.repeat(times, *([1] * (X.dim() - 1))), y.repeat(times)
    X, y = X[:rows], y[:rows]
    X_before, y_before = X.clone(), y.clone()
    # without device=, evaluate works where the protocol's default puts it: the model is there too
    model = lesson_mlp(seed, device="cpu" if default else lab.device, track=lab.track)
    if labels in (ALL_RIGHT, ALL_BUT_ONE):
        y = _predicted(model, X, last_wrong=labels == ALL_BUT_ONE)
        y_before = y.clone()
    weights = _weights(model)
    watch = _Watch()
    hook = watch.model(model)
    loss_fn = watch.loss()
    call = "evaluate(model, X, y, loss_fn)" if default else "evaluate(model, X, y, loss_fn, device=...)"
    answers = []
    try:
        with recording_moves() as moves:
            for _ in range(2):
                if default:
                    out = loop.evaluate(model, tag(X), tag(y), loss_fn)
                else:
                    out = loop.evaluate(model, tag(X), tag(y), loss_fn, device=_device(lab))
                answers.append([plain_number(v) for v in out] if isinstance(out, tuple | list) and len(out) == 2
                               else None)
    except Exception as exc:  # noqa: BLE001 - the file's error is the figure
        return {"call": call, "rows": rows, "seed": seed, "raised": _raised(exc)}
    finally:
        hook.remove()
    changed = [name for name, same in (("X", torch.equal(X, X_before)), ("y", torch.equal(y, y_before)),
                                       ("the model's weights", _weights(model) == weights)) if not same]
    return {"call": call, "rows": rows, "seed": seed, "result": answers[0], "again": answers[1],
            "returned": repr(out)[:80], "changed": changed, "moves": sorted(set(moves)),
            "unmoved_inputs": watch.inputs, "unmoved_labels": watch.labels}


def _predicted(model, X, *, last_wrong: bool):
    """The model's own predictions for ``X`` as labels (the last one moved to the next class with
    ``last_wrong``): evaluated on them, every row is right, or every row but one."""
    import torch

    training = model.training
    model.eval()  # evaluate's own mode: BatchNorm's running statistics, no Dropout (and neither moves)
    with torch.no_grad():
        logits = model(X.to(next(model.parameters()).device)).cpu()
    model.train(training)
    y = logits.argmax(dim=1)
    if last_wrong:
        y[-1] = (y[-1] + 1) % logits.shape[1]
    return y


def _evaluate_one(mine: dict, ref: dict):
    call, rows = ref["call"], ref["rows"]
    if mine.get("raised"):
        return failed(RAISED, call=call, error=mine["raised"])
    loss, acc = ref["result"]
    got = mine["result"]
    if got is None or not _close(got[0], loss, LOSS_TOL) or not _close(got[1], acc, 1e-6):
        shown = _shown(got) if got is not None else mine["returned"]
        return failed(EVAL_CASE_DIFF, call=call, rows=rows, seed=ref["seed"], got=shown, loss=loss, acc=acc)
    if mine["changed"]:
        return failed(EVAL_CHANGED, call=call, rows=rows, what=", ".join(mine["changed"]))
    if mine["again"] != mine["result"]:
        again = _shown(mine["again"]) if mine["again"] is not None else "?"
        return failed(EVAL_TWICE, call=call, rows=rows, got=_shown(got), again=again)
    moved = _device_verdict(call, mine, ref)
    if moved is not None:
        return moved
    return passed(EVAL_CASE_OK, call=call, rows=rows)


def _evaluate_main(mine: dict, ref: dict):
    loss, acc = ref["result"]
    args = dict(rows=ref["rows"], seed=ref["seed"], loss=loss, acc=acc)
    got = mine["result"]
    if got is None or not _close(got[0], loss, LOSS_TOL) or not _close(got[1], acc, 1e-6):
        shown = _shown(got) if got is not None else mine["returned"]
        return failed(EVAL_DIFF, got=shown, **args)
    return passed(EVAL_OK, **args)


@evaluate.judge
def _(mine: dict, ref: dict):
    results = [(Case.from_dict(want["case"]), _evaluate_one(got, want))
               for got, want in zip(mine.get("cases", []), ref.get("cases", []), strict=False)]
    if "defaults" in ref:
        results.append((Case("eval.defaults", ref["defaults"]["rows"], default=True),
                        _evaluate_one(mine["defaults"], ref["defaults"])))
    worst = worst_case(results)
    if worst is not None:
        return worst
    main = _evaluate_main(mine, ref)
    return passed(COVERED, ok=_nest(main), k=len(results)) if main.passed and results else main
