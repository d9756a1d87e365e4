"""Reproducibility: the same seeds give the same run, whatever state the global generators are in."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed

EPOCHS = 3
SEED = 7

SEEDS_TITLE = Message(en="same seeds, same run", es="mismas semillas, misma ejecución")
SEEDS_OK = Message(
    en="two runs with seed 0 (make_model, make_loader, fit for {epochs} epochs) from different global random "
    "states gave identical histories, and seed_everything seeds random, NumPy and torch",
    es="dos ejecuciones con semilla 0 (make_model, make_loader, fit durante {epochs} épocas) desde estados "
    "aleatorios globales distintos dieron historiales idénticos, y seed_everything fija random, NumPy y torch",
)
SEEDS_WEIGHTS = Message(
    en="two runs with the same seeds, started from different global random states, gave different histories "
    "(epoch {epoch} {key}: {a} vs {b}): make_model(seed=0) gave different initial weights each time",
    es="dos ejecuciones con las mismas semillas, empezadas desde estados aleatorios globales distintos, dieron "
    "historiales distintos (época {epoch} {key}: {a} frente a {b}): make_model(seed=0) dio pesos iniciales "
    "distintos cada vez",
)
SEEDS_ORDER = Message(
    en="two runs with the same seeds, started from different global random states, gave different histories "
    "(epoch {epoch} {key}: {a} vs {b}): the loader from make_loader(seed=0) fed the batches in a different "
    "order each time",
    es="dos ejecuciones con las mismas semillas, empezadas desde estados aleatorios globales distintos, dieron "
    "historiales distintos (época {epoch} {key}: {a} frente a {b}): el cargador de make_loader(seed=0) dio los "
    "lotes en un orden distinto cada vez",
)
SEEDS_OTHER = Message(
    en="two runs with the same seeds, started from different global random states, gave different histories "
    "(epoch {epoch} {key}: {a} vs {b}). make_model(seed=0) gave the same weights both times, and the loader of "
    "make_loader(seed=0), iterated at once, the same order; what differed was drawn later, from the global "
    "random state: most often a loader that takes its shuffle from the global generator when it is iterated "
    "(torch.manual_seed in make_loader instead of a torch.Generator of its own), else randomness in "
    "train_epoch or fit",
    es="dos ejecuciones con las mismas semillas, empezadas desde estados aleatorios globales distintos, dieron "
    "historiales distintos (época {epoch} {key}: {a} frente a {b}). make_model(seed=0) dio los mismos pesos las "
    "dos veces, y el cargador de make_loader(seed=0), recorrido en seguida, el mismo orden; lo que cambió se "
    "sacó después del estado aleatorio global: casi siempre un cargador que toma su barajado del generador "
    "global al recorrerse (torch.manual_seed en make_loader en vez de un torch.Generator propio), si no, algo "
    "aleatorio en train_epoch o fit",
)
SEEDS_EVERYTHING = Message(
    en="after seed_everything(seed={seed}) twice, the next draws from {sources} differed between the two "
    "calls: those generators are not seeded",
    es="tras llamar dos veces a seed_everything(seed={seed}), los siguientes valores de {sources} fueron "
    "distintos entre las dos llamadas: esos generadores no quedan fijados",
)


def _draws() -> dict:
    import random

    import numpy as np
    import torch

    return {"random": random.random(), "numpy": float(np.random.rand()), "torch": float(torch.rand(1))}


def _same(a, b) -> bool:
    """Exactly equal (same seeds, same device, same code: bit for bit); two NaNs count as equal."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


@check("repro.seeds", family="repro", calls=("seed_everything", "make_loader", "make_model", "make_optimizer", "fit"),
       title=SEEDS_TITLE, cost=17, timeout=20.0)
def seeds(loop, lab) -> dict:
    import torch
    from torch import nn

    from checker.setting.instruments import plain_number, scramble_global_rng

    X, y = lab.data.X_train, lab.data.y_train
    runs = []
    for rng in (11, 12):
        # the global state is scrambled before every call: only the seeds given may matter
        scramble_global_rng(rng)
        model = loop.make_model(seed=0).to(lab.device)
        weights = torch.cat([p.detach().cpu().reshape(-1) for p in model.parameters()])
        scramble_global_rng(rng + 100)
        order = [int(i) for _, yb in loop.make_loader(X, torch.arange(len(y)), batch_size=32, seed=0)
                 for i in yb.reshape(-1)]
        scramble_global_rng(rng + 200)
        loader = loop.make_loader(X, y, batch_size=32, seed=0)
        optimizer = loop.make_optimizer(model, name="sgd", lr=0.1)
        scramble_global_rng(rng + 300)
        history = loop.fit(model, optimizer, loader, nn.CrossEntropyLoss(), EPOCHS, val=(lab.data.X_val,
                           lab.data.y_val), device=lab.device)
        rows = [{str(k): plain_number(v) for k, v in row.items()} for row in history if isinstance(row, dict)]
        runs.append({"weights": weights, "order": order, "history": rows})
    a, b = runs
    diff = None
    for epoch, (ra, rb) in enumerate(zip(a["history"], b["history"], strict=False), start=1):
        for key in ra:
            if not _same(ra.get(key), rb.get(key)):
                diff = {"epoch": epoch, "key": key, "a": ra.get(key), "b": rb.get(key)}
                break
        if diff:
            break
    if diff is None and len(a["history"]) != len(b["history"]):
        diff = {"epoch": min(len(a["history"]), len(b["history"])) + 1, "key": "rows", "a": len(a["history"]),
                "b": len(b["history"])}
    seeded = {}
    scramble_global_rng(1)
    loop.seed_everything(seed=SEED)
    first = _draws()
    scramble_global_rng(2)
    loop.seed_everything(seed=SEED)
    second = _draws()
    for source in first:
        seeded[source] = first[source] == second[source]
    return {
        "epochs": EPOCHS, "diff": diff,
        "same_weights": a["weights"].shape == b["weights"].shape and torch.equal(a["weights"], b["weights"]),
        "same_order": a["order"] == b["order"], "seeded": seeded,
    }


@seeds.judge
def _(m: dict):
    diff = m["diff"]
    if diff is not None:
        params = dict(epoch=diff["epoch"], key=diff["key"], a=diff["a"], b=diff["b"])
        if not m["same_weights"]:
            return failed(SEEDS_WEIGHTS, **params)
        if not m["same_order"]:
            return failed(SEEDS_ORDER, **params)
        return failed(SEEDS_OTHER, **params)
    unseeded = [k for k, ok in m["seeded"].items() if not ok]
    if unseeded:
        return failed(SEEDS_EVERYTHING, seed=SEED, sources=", ".join(unseeded))
    return passed(SEEDS_OK, epochs=m["epochs"])
