"""The model: the track's MLP (moons: 2-16-2), whose initial weights depend on its seed alone."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.common import num

INIT_TITLE = Message(en="the track's MLP, seeded", es="el MLP del recorrido, con semilla")
INIT_OK = Message(
    en="make_model builds {n} parameters ({shapes}) whose initial weights depend on the seed alone",
    es="make_model crea {n} parámetros ({shapes}) cuyos pesos iniciales dependen solo de la semilla",
)
INIT_NOT_MODULE = Message(
    en="make_model(seed=0) returned a {type}, not a torch.nn.Module",
    es="make_model(seed=0) devolvió un {type}, no un torch.nn.Module",
)
INIT_SHAPE = Message(
    en="make_model(seed=0) has {n} parameters with shapes {shapes} and maps 4 points to an output of shape "
    "{out}; the track's MLP {arch} has {n_want} ({layers}) and gives one score per class, {classes} in all",
    es="make_model(seed=0) tiene {n} parámetros con formas {shapes} y convierte 4 puntos en una salida de "
    "forma {out}; el MLP {arch} del recorrido tiene {n_want} ({layers}) y da una puntuación por clase, "
    "{classes} en total",
)
INIT_FUNCTION = Message(
    en="make_model(seed=0) does not compute {layers} with its own weights: on 8 "
    "training points its outputs differ from that by up to {diff:.3g}. The track's MLP ends in raw class "
    "scores (logits), which is what CrossEntropyLoss expects",
    es="make_model(seed=0) no calcula {layers} con sus propios pesos: en 8 "
    "puntos de entrenamiento sus salidas se apartan de eso hasta {diff:.3g}. El MLP del recorrido termina en "
    "puntuaciones brutas por clase (logits), que es lo que espera CrossEntropyLoss",
)
INIT_PROBABILITIES = Message(
    en="make_model(seed=0) does not compute {layers} with its own weights: on 8 "
    "training points its outputs differ from that by up to {diff:.3g}, lie between 0 and 1 and sum to 1 in "
    "every row. The track's MLP ends in raw class scores (logits), which is what CrossEntropyLoss expects",
    es="make_model(seed=0) no calcula {layers} con sus propios pesos: en 8 "
    "puntos de entrenamiento sus salidas se apartan de eso hasta {diff:.3g}, están entre 0 y 1 y suman 1 en "
    "cada fila. El MLP del recorrido termina en puntuaciones brutas por clase (logits), que es lo que espera "
    "CrossEntropyLoss",
)
INIT_GLOBAL = Message(
    en="two models built with make_model(seed=0) started from different weights (largest difference "
    "{diff:.3g}) because the global random state differed before each call: the initial weights do not depend "
    "on the seed alone, so two runs of the same script start differently",
    es="dos modelos creados con make_model(seed=0) empezaron con pesos distintos (mayor diferencia {diff:.3g}) "
    "porque el estado aleatorio global era distinto antes de cada llamada: los pesos iniciales no dependen "
    "solo de la semilla, así que dos ejecuciones del mismo script empiezan distinto",
)
INIT_SEED_IGNORED = Message(
    en="make_model(seed=0) and make_model(seed=1) start from identical weights: the seed argument has no "
    "effect",
    es="make_model(seed=0) y make_model(seed=1) empiezan con pesos idénticos: el argumento seed no tiene "
    "efecto",
)


@check("model.init", early=True, family="model", calls=("make_model",), title=INIT_TITLE, cost=2, timeout=20.0)
def init(loop, lab) -> dict:
    import torch
    from torch import nn

    from checker.setting.instruments import scramble_global_rng, type_name

    scramble_global_rng(1)
    first = loop.make_model(seed=0)
    if not isinstance(first, nn.Module):
        return {"module": False, "type": type_name(first)}
    scramble_global_rng(2)
    again = loop.make_model(seed=0)
    other = loop.make_model(seed=1)

    def flat(model) -> torch.Tensor:
        params = [p.detach().cpu().reshape(-1) for p in model.parameters()]
        return torch.cat(params) if params else torch.zeros(0)

    a, b, c = flat(first), flat(again), flat(other)
    with torch.no_grad():
        out = first(lab.data.X_train[:4])
    return {
        **_function(first, lab.data.X_train[:8], lab.track),
        "module": True,
        "n": int(a.numel()),
        "shapes": sorted(list(p.shape) for p in first.parameters()),
        "out": list(out.shape) if isinstance(out, torch.Tensor) else None,
        "same_seed_diff": float((a - b).abs().max()) if a.shape == b.shape and a.numel() else None,
        "seeds_differ": not (a.shape == c.shape and torch.equal(a, c)),
    }


def _matched(mine: list, theirs: list) -> list | None:
    """The model's parameters in the track's MLP order: as listed, else by distinct shape; None if no match."""
    if len(mine) != len(theirs):
        return None
    if [tuple(p.shape) for p in mine] == [tuple(p.shape) for p in theirs]:
        return mine
    by_shape = {tuple(p.shape): p for p in mine}
    if len(by_shape) != len(mine) or len({tuple(p.shape) for p in theirs}) != len(theirs):
        return None
    try:
        return [by_shape[tuple(p.shape)] for p in theirs]
    except KeyError:
        return None


def _load_into(spec, model, theirs: list, mine: list) -> None:
    """Copy the model's parameters, and its buffers when their shapes agree, into the track's MLP (no grad)."""
    for target, value in zip(theirs, mine, strict=True):
        target.copy_(value.cpu())
    # BatchNorm's running statistics too (a forward pass in training mode has moved them)
    buffers = [b.detach() for b in model.buffers()]
    spec_buffers = list(spec.buffers())
    if [tuple(b.shape) for b in buffers] == [tuple(b.shape) for b in spec_buffers]:
        for target, value in zip(spec_buffers, buffers, strict=True):
            target.copy_(value.cpu())


def _function(model, X, track) -> dict:
    """How far the model's outputs are from the track's MLP computed with the model's own weights.

    The model's parameters are loaded into the track's MLP, in the order ``parameters()`` lists them (any
    module layout that registers its layers in order), else by shape when every shape is distinct; both
    run in eval mode on the same points.
    """
    import torch

    spec = track.model.build(0)
    theirs = list(spec.parameters())
    mine = _matched([p.detach() for p in model.parameters()], theirs)
    if mine is None:
        return {"function_diff": None}
    with torch.no_grad():
        _load_into(spec, model, theirs, mine)
        model.eval()
        spec.eval()
        got = model(X)
        want = spec(X)
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return {"function_diff": None}
    got = got.detach().cpu()
    return {
        "function_diff": float((got - want).abs().max()),
        "probabilities": bool(((got >= 0) & (got <= 1)).all()
                              and torch.allclose(got.sum(dim=1), torch.ones(len(X), dtype=got.dtype))),
    }


FUNCTION_TOL = 1e-5
"""Float32 round-off of a small MLP's forward pass is far below this."""


@init.judge
def _(m: dict):
    if not m["module"]:
        return failed(INIT_NOT_MODULE, type=m["type"])
    shapes = ", ".join("x".join(map(str, s)) for s in m["shapes"])
    out = "x".join(map(str, m["out"])) if m["out"] is not None else "none"
    spec = judged_track().model
    if m["n"] != spec.n_params or m["shapes"] != spec.shapes or m["out"] != [4, spec.n_classes]:
        return failed(INIT_SHAPE, n=m["n"], shapes=shapes, out=out, arch=spec.arch, n_want=spec.n_params,
                      layers=spec.layers, classes=spec.n_classes)
    diff = m.get("function_diff")
    if diff is None or not diff <= FUNCTION_TOL:
        message = INIT_PROBABILITIES if m.get("probabilities") else INIT_FUNCTION
        return failed(message, diff=num(diff), layers=spec.layers)
    if m["same_seed_diff"] != 0.0:
        return failed(INIT_GLOBAL, diff=num(m["same_seed_diff"]))
    if not m["seeds_differ"]:
        return failed(INIT_SEED_IGNORED)
    return passed(INIT_OK, n=m["n"], shapes=shapes)
