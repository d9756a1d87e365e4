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

from typing import Any

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.checks.common import is_nan
from checker.checks.loader import index_batches
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
    en="after seed_everything(seed={seed}), random, NumPy and torch draw exactly what they draw after the "
    "reference's",
    es="tras seed_everything(seed={seed}), random, NumPy y torch sacan exactamente lo mismo que tras la de la "
    "referencia",
)
SEED_DIFF = Message(
    en="after seed_everything(seed={seed}), {source} drew {got}; after the reference's it draws {want}: {source} "
    "is not seeded with the seed given",
    es="tras seed_everything(seed={seed}), {source} sacó {got}; tras la de la referencia saca {want}: {source} "
    "no queda fijado con la semilla dada",
)


@check("reference.seed_everything", family="reference", calls=("seed_everything",),
       title=SEED_TITLE, cost=0.1, timeout=20.0, reference=True)
def seed_everything(loop, lab) -> dict:
    import random

    import numpy as np
    import torch

    from checker.setting.instruments import scramble_global_rng

    seed = lab.draw.seed_everything
    scramble_global_rng(seed % 1000 + 1)
    loop.seed_everything(seed=seed)
    draws = {
        "random": [random.random() for _ in range(3)],
        "NumPy": [float(v) for v in np.random.rand(3)],
        "torch": [float(v) for v in torch.rand(3)],
    }
    return {"seed": seed, "draws": draws}


@seed_everything.judge
def _(mine: dict, ref: dict):
    for source, want in ref["draws"].items():
        got = mine["draws"].get(source)
        if got != want:
            return failed(SEED_DIFF, seed=ref["seed"], source=source, got=_shown(got), want=_shown(want))
    return passed(SEED_OK, seed=ref["seed"])


# ---------------------------------------------------------------------------- make_data

DATA_TITLE = Message(en="make_data matches the reference at any seed",
                     es="make_data coincide con la referencia con cualquier semilla")
DATA_OK = Message(
    en="make_data(seed={seed}) gives exactly the reference's four tensors",
    es="make_data(seed={seed}) da exactamente los cuatro tensores de la referencia",
)
DATA_FORM = Message(
    en="make_data(seed={seed}) returned {got}; the reference returns four tensors: {want}",
    es="make_data(seed={seed}) devolvió {got}; la referencia devuelve cuatro tensores: {want}",
)
DATA_SEED_IGNORED = Message(
    en="make_data(seed={seed}) returned the same data as make_data(seed=0): the seed argument is ignored, so "
    "the data cannot be drawn again with another seed (the reference's {name} differs by up to {diff:.3g})",
    es="make_data(seed={seed}) devolvió los mismos datos que make_data(seed=0): el argumento seed se ignora, "
    "así que los datos no se pueden volver a generar con otra semilla (el {name} de la referencia difiere "
    "hasta {diff:.3g})",
)
DATA_ORDER = Message(
    en="make_data(seed={seed}): {name} holds the reference's rows in another order",
    es="make_data(seed={seed}): {name} tiene las filas de la referencia en otro orden",
)
DATA_VALUES = Message(
    en="make_data(seed={seed}): {name} differs from the reference's by up to {diff:.3g}",
    es="make_data(seed={seed}): {name} difiere del de la referencia hasta {diff:.3g}",
)
DATA_NAMES = ("X_train", "y_train", "X_val", "y_val")


@check("reference.make_data", family="reference", calls=("make_data",),
       title=DATA_TITLE, cost=0.3, timeout=20.0, reference=True)
def make_data(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import type_name

    seed = lab.draw.data_seed
    out = loop.make_data(seed=seed)
    if not isinstance(out, tuple | list) or len(out) != 4:
        return {"seed": seed, "parts": None, "returned": type_name(out)}
    parts = []
    for name, got, lesson in zip(DATA_NAMES, out, lab.data.as_tuple(), strict=True):
        if not isinstance(got, torch.Tensor):
            parts.append({"name": name, "form": type_name(got)})
            continue
        values = got.detach().cpu()
        parts.append({
            "name": name, "form": f"{str(got.dtype).replace('torch.', '')} {tuple(got.shape)}",
            "values": values.double().reshape(-1).tolist(), "width": values.shape[1] if values.dim() == 2 else 1,
            "as_seed0": values.shape == lesson.shape and bool(torch.equal(values.double(), lesson.double())),
        })
    return {"seed": seed, "parts": parts}


def _rows(values: list[float], width: int) -> list[tuple]:
    return sorted(tuple(values[i:i + width]) for i in range(0, len(values), width))


@make_data.judge
def _(mine: dict, ref: dict):
    seed = ref["seed"]
    want_form = ", ".join(p["form"] for p in ref["parts"])
    if mine["parts"] is None:
        return failed(DATA_FORM, seed=seed, got=f"a {mine['returned']}", want=want_form)
    forms = [p["form"] for p in mine["parts"]]
    if forms != [p["form"] for p in ref["parts"]]:
        return failed(DATA_FORM, seed=seed, got=", ".join(forms), want=want_form)
    worst = None
    for got, want in zip(mine["parts"], ref["parts"], strict=True):
        diff = max((abs(a - b) for a, b in zip(got["values"], want["values"], strict=True)), default=0.0)
        if not diff <= DATA_TOL:
            worst = worst or (got, want, diff)
    if worst is None:
        return passed(DATA_OK, seed=seed)
    got, want, diff = worst
    if all(p.get("as_seed0") for p in mine["parts"]):
        return failed(DATA_SEED_IGNORED, seed=seed, name=got["name"], diff=diff)
    if _rows(got["values"], got["width"]) == _rows(want["values"], want["width"]):
        return failed(DATA_ORDER, seed=seed, name=got["name"])
    return failed(DATA_VALUES, seed=seed, name=got["name"], diff=diff)


# ---------------------------------------------------------------------------- make_loader

LOADER_TITLE = Message(en="make_loader matches the reference at any batch size and seed",
                       es="make_loader coincide con la referencia con cualquier tamaño de lote y semilla")
LOADER_OK = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}) gives batches of {sizes}, every example once per epoch, "
    "in an order set by the seed alone and new every epoch",
    es="make_loader(X, y, batch_size={b}, seed={s}) da lotes de {sizes}, cada ejemplo una vez por época, en un "
    "orden que fija solo la semilla y que cambia cada época",
)
LOADER_SIZES = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}) gave batches of {got}; the reference gives {want}",
    es="make_loader(X, y, batch_size={b}, seed={s}) dio lotes de {got}; la referencia da {want}",
)
LOADER_COVERAGE = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}): in epoch {epoch}, {missing} of the {n} examples never "
    "came and {repeated} came more than once",
    es="make_loader(X, y, batch_size={b}, seed={s}): en la época {epoch}, {missing} de los {n} ejemplos no "
    "llegaron nunca y {repeated} llegaron más de una vez",
)
LOADER_UNPAIRED = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}) separated rows from their labels",
    es="make_loader(X, y, batch_size={b}, seed={s}) separó filas de sus etiquetas",
)
LOADER_GLOBAL = Message(
    en="two loaders from make_loader(X, y, batch_size={b}, seed={s}) gave different orders when the global "
    "random state differed: the order does not depend on the seed alone",
    es="dos cargadores de make_loader(X, y, batch_size={b}, seed={s}) dieron órdenes distintos cuando el "
    "estado aleatorio global era distinto: el orden no depende solo de la semilla",
)
LOADER_SEED_IGNORED = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}) and seed={other} give the same order: the seed is ignored",
    es="make_loader(X, y, batch_size={b}, seed={s}) y seed={other} dan el mismo orden: la semilla se ignora",
)
LOADER_SAME_EPOCHS = Message(
    en="make_loader(X, y, batch_size={b}, seed={s}) repeats one order in every epoch",
    es="make_loader(X, y, batch_size={b}, seed={s}) repite un mismo orden en todas las épocas",
)


@check("reference.make_loader", family="reference", calls=("make_loader",),
       title=LOADER_TITLE, cost=0.3, timeout=20.0, reference=True)
def make_loader(loop, lab) -> dict:
    from checker.setting.instruments import scramble_global_rng

    b, s, other = lab.draw.loader_batch, lab.draw.loader_seed, lab.draw.loader_other_seed
    X = lab.data.X_train

    def epochs(seed: int, rng: int) -> tuple[list[list[list[int]]], bool]:
        scramble_global_rng(rng)
        return index_batches(loop, lab, seed=seed, epochs=2, batch_size=b)

    first, paired = epochs(s, 3)
    again, _ = epochs(s, 4)
    moved, _ = epochs(other, 3)
    flat = [[i for batch in ep for i in batch] for ep in first]
    return {
        "b": b, "s": s, "other": other, "n": len(X), "paired": paired,
        "sizes": [[len(batch) for batch in ep] for ep in first],
        "missing": [len(set(range(len(X))) - set(ep)) for ep in flat],
        "repeated": [len(ep) - len(set(ep)) for ep in flat],
        "same_seed_same_order": first == again, "seed_matters": first != moved,
        "reshuffles": len(flat) == 2 and flat[0] != flat[1],
    }


def _sizes(sizes: list[int]) -> str:
    if len(sizes) > 8:
        return ", ".join(map(str, sizes[:6])) + f", … ({len(sizes)} batches, last {sizes[-1]})"
    return ", ".join(map(str, sizes)) or "none"


@make_loader.judge
def _(mine: dict, ref: dict):
    args = dict(b=ref["b"], s=ref["s"])
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
    if not mine["same_seed_same_order"]:
        return failed(LOADER_GLOBAL, **args)
    if not mine["seed_matters"]:
        return failed(LOADER_SEED_IGNORED, other=ref["other"], **args)
    if not mine["reshuffles"] and ref["reshuffles"]:
        return failed(LOADER_SAME_EPOCHS, **args)
    return passed(LOADER_OK, sizes=_sizes(ref["sizes"][0]), **args)


# ---------------------------------------------------------------------------- make_model

MODEL_TITLE = Message(en="make_model matches the reference at any seed",
                      es="make_model coincide con la referencia con cualquier semilla")
MODEL_OK = Message(
    en="make_model(seed={seed}) starts from exactly the reference's weights",
    es="make_model(seed={seed}) empieza exactamente con los pesos de la referencia",
)
MODEL_SHAPES = Message(
    en="make_model(seed={seed}) has parameters of shapes {got}; the reference's has {want}",
    es="make_model(seed={seed}) tiene parámetros de formas {got}; el de la referencia tiene {want}",
)
MODEL_SEED_IGNORED = Message(
    en="make_model(seed={seed}) starts from the same weights as make_model(seed=0): the seed argument is "
    "ignored (the reference's {where} weights differ by up to {diff:.3g})",
    es="make_model(seed={seed}) empieza con los mismos pesos que make_model(seed=0): el argumento seed se "
    "ignora (los pesos {where} de la referencia difieren hasta {diff:.3g})",
)
MODEL_WEIGHTS = Message(
    en="make_model(seed={seed}): the {where} weights differ from the reference's at that seed by up to "
    "{diff:.3g}",
    es="make_model(seed={seed}): los pesos {where} difieren de los de la referencia con esa semilla hasta "
    "{diff:.3g}",
)


@check("reference.make_model", family="reference", calls=("make_model",),
       title=MODEL_TITLE, cost=0.1, timeout=20.0, reference=True)
def make_model(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import lesson_mlp, scramble_global_rng, type_name

    seed = lab.draw.model_seed
    scramble_global_rng(seed % 997 + 5)
    model = loop.make_model(seed=seed)
    if not isinstance(model, torch.nn.Module):
        return {"seed": seed, "weights": None, "returned": type_name(model)}
    weights = _weights(model)
    return {"seed": seed, "weights": weights, "as_seed0": weights == _weights(lesson_mlp(0, track=lab.track))}


def _shapes(weights: list[list]) -> str:
    return ", ".join("x".join(map(str, shape)) for shape, _ in weights)


@make_model.judge
def _(mine: dict, ref: dict):
    seed = ref["seed"]
    if mine["weights"] is None:
        return failed(MODEL_SHAPES, seed=seed, got=f"none (it returned a {mine['returned']})",
                      want=_shapes(ref["weights"]))
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None:
        return failed(MODEL_SHAPES, seed=seed, got=_shapes(mine["weights"]), want=_shapes(ref["weights"]))
    if diff == 0.0:
        return passed(MODEL_OK, seed=seed)
    if mine.get("as_seed0"):
        return failed(MODEL_SEED_IGNORED, seed=seed, where=where, diff=diff)
    return failed(MODEL_WEIGHTS, seed=seed, where=where, diff=diff)


# ---------------------------------------------------------------------------- make_optimizer

OPT_TITLE = Message(en="make_optimizer matches the reference's every setting",
                    es="make_optimizer coincide con la referencia en cada ajuste")
OPT_OK = Message(
    en="make_optimizer builds {built}: the reference's class and every setting that changes the update",
    es="make_optimizer crea {built}: la clase de la referencia y cada ajuste que cambia la actualización",
)
OPT_CLASS = Message(
    en='make_optimizer(model, name="{name}", lr={lr:g}) built a {got}; the reference builds a torch.optim.{want}',
    es='make_optimizer(model, name="{name}", lr={lr:g}) creó un {got}; la referencia crea un torch.optim.{want}',
)
OPT_GROUPS = Message(
    en='make_optimizer(model, name="{name}", lr={lr:g}) built {got} parameter group(s); the reference builds '
    "{want}",
    es='make_optimizer(model, name="{name}", lr={lr:g}) creó {got} grupo(s) de parámetros; la referencia crea '
    "{want}",
)
OPT_SETTING = Message(
    en='make_optimizer(model, name="{name}", lr={lr:g}) built a torch.optim.{want_class} whose {key} is {got}; the '
    "reference's is {want}. That setting changes every update, so training follows another path",
    es='make_optimizer(model, name="{name}", lr={lr:g}) creó un torch.optim.{want_class} cuyo {key} es {got}; el de la '
    "referencia es {want}. Ese ajuste cambia cada actualización, así que el entrenamiento sigue otro camino",
)


def _optimizer_class(opt) -> str:
    import torch

    for cls in type(opt).__mro__:
        if cls.__module__.startswith("torch.optim") and cls is not torch.optim.Optimizer:
            return cls.__name__
    return f"{type(opt).__module__}.{type(opt).__qualname__}"


@check("reference.make_optimizer", family="reference", calls=("make_optimizer",),
       title=OPT_TITLE, cost=0.1, timeout=20.0, reference=True)
def make_optimizer(loop, lab) -> dict:
    from checker.setting.instruments import lesson_mlp

    rows = []
    for name, lr in (("sgd", lab.draw.sgd_lr), ("adam", lab.draw.adam_lr)):
        model = lesson_mlp(0, device=lab.device, track=lab.track)
        rows.append({"name": name, "lr": lr, **_settings(loop.make_optimizer(model, name=name, lr=lr), model)})
    return {"rows": rows}


@make_optimizer.judge
def _(mine: dict, ref: dict):
    for got, want in zip(mine["rows"], ref["rows"], strict=True):
        args = dict(name=want["name"], lr=want["lr"])
        if got["class"] != want["class"]:
            return failed(OPT_CLASS, got=got["class"], want=want["class"], **args)
        if len(got["groups"]) != len(want["groups"]):
            return failed(OPT_GROUPS, got=len(got["groups"]), want=len(want["groups"]), **args)
        for g, w in zip(got["groups"], want["groups"], strict=True):
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
    """What of an optimizer changes the update: its class, every group's settings, and whose parameters it holds."""
    groups = getattr(opt, "param_groups", None) or []
    held = [id(p) for g in groups if isinstance(g, dict) for p in g.get("params", [])]
    return {"class": _optimizer_class(opt),
            "groups": [{str(k): _plain(v) for k, v in g.items() if k != "params" and k not in IMPLEMENTATION_FLAGS}
                       for g in groups if isinstance(g, dict)],
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


@check("reference.train_epoch", family="reference", calls=("train_epoch", "make_optimizer"),
       title=TRAIN_TITLE, cost=0.3, timeout=20.0, reference=True)
def train_epoch(loop, lab) -> dict:
    return {"draw": lab.draw.train_epoch.__dict__, **_training(loop, lab, lab.draw.train_epoch, fit=False)}


def _blame(mine: dict, ref: dict) -> Message:
    same = mine.get("optimizer") == ref.get("optimizer")
    return BLAME_LOOP if same else BLAME_OPTIMIZER


def _setting(draw: dict) -> Message:
    return _describe(TrainDraw(**draw))


@train_epoch.judge
def _(mine: dict, ref: dict):
    args = dict(call="train_epoch(...)", setting=_setting(ref["draw"]))
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None or not diff <= WEIGHT_TOL:
        blame = _blame(mine, ref)
        return failed(TRAIN_WEIGHTS, diff=float("inf") if diff is None else diff, where=where or "?",
                      blame=blame, **args)
    if not _close(mine["loss"], ref["loss"], LOSS_TOL):
        return failed(TRAIN_LOSS, got=_shown(mine["loss"]), want=_shown(ref["loss"]), **args)
    return passed(TRAIN_OK, diff=diff, **args)


@check("reference.fit", family="reference", calls=("fit", "make_optimizer"),
       title=FIT_TITLE, cost=0.6, timeout=20.0, reference=True)
def fit(loop, lab) -> dict:
    return {"draw": lab.draw.fit.__dict__, **_training(loop, lab, lab.draw.fit, fit=True)}


@fit.judge
def _(mine: dict, ref: dict):
    d = ref["draw"]
    args = dict(call=f"fit(..., epochs={d['epochs']}, val=(X_val, y_val))", setting=_setting(d))
    got_rows, want_rows = mine["history"], ref["history"]
    if len(got_rows) != len(want_rows):
        return failed(FIT_ROWS, got=len(got_rows), want=len(want_rows), **args)
    for epoch, (got, want) in enumerate(zip(got_rows, want_rows, strict=True), start=1):
        for key, value in want.items():
            mine_value = (got or {}).get(key)
            tol = 1e-9 if key in ("epoch", "lr") else LOSS_TOL
            if not _close(mine_value, value, tol):
                return failed(FIT_VALUE, epoch=epoch, key=key, got=_shown(mine_value), want=_shown(value), **args)
    diff, where = _weight_diff(mine["weights"], ref["weights"])
    if diff is None or not diff <= WEIGHT_TOL:
        return failed(TRAIN_WEIGHTS, diff=float("inf") if diff is None else diff, where=where or "?",
                      blame=_blame(mine, ref), **args)
    return passed(TRAIN_OK, diff=diff, **args)


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


@check("reference.evaluate", family="reference", calls=("evaluate",),
       title=EVAL_TITLE, cost=0.1, timeout=20.0, reference=True)
def evaluate(loop, lab) -> dict:
    from torch import nn

    from checker.setting.instruments import lesson_mlp, plain_number

    seed, rows = lab.draw.evaluate_seed, lab.draw.evaluate_rows
    model = lesson_mlp(seed, device=lab.device, track=lab.track)
    out = loop.evaluate(model, lab.data.X_val[:rows], lab.data.y_val[:rows], nn.CrossEntropyLoss(),
                        device=lab.device)
    pair = [plain_number(v) for v in out] if isinstance(out, tuple | list) and len(out) == 2 else None
    return {"seed": seed, "rows": rows, "result": pair, "returned": repr(out)[:80]}


@evaluate.judge
def _(mine: dict, ref: dict):
    loss, acc = ref["result"]
    args = dict(rows=ref["rows"], seed=ref["seed"], loss=loss, acc=acc)
    got = mine["result"]
    if got is None or not _close(got[0], loss, LOSS_TOL) or not _close(got[1], acc, 1e-6):
        shown = _shown(got) if got is not None else mine["returned"]
        return failed(EVAL_DIFF, got=shown, **args)
    return passed(EVAL_OK, **args)
