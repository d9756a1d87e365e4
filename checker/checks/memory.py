"""Memory: no autograd graph outlives its batch, so memory stays flat however many epochs run.

On every device the checker counts the bytes that live autograd graphs hold (saved-tensor
hooks: deterministic, unlike the process's RSS), at each epoch's start and after ``fit``. On
CUDA it also reads ``torch.cuda.memory_allocated()`` at each epoch's start.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.sandbox.hardening import seal

EPOCHS = 4
CUDA_SLACK = 0
"""Bytes ``memory_allocated`` may grow between epoch starts: none, everything live is the loop's."""

GRAPHS_TITLE = Message(en="no graph outlives its batch", es="ningún grafo sobrevive a su lote")
GRAPHS_OK = Message(
    en="over {epochs} epochs no autograd graph stayed alive between epochs or after fit (0 bytes held), and "
    "the history holds plain numbers",
    es="en {epochs} épocas ningún grafo de autograd siguió vivo entre épocas ni tras fit (0 bytes retenidos), "
    "y el historial guarda números simples",
)
GRAPHS_GROW = Message(
    en="autograd graphs kept alive grew epoch after epoch: {starts} KiB at the start of epochs 1-{epochs}, and "
    "{after} KiB still held after fit returned. Something keeps tensors that remember how they were computed "
    "(fit's history holds: {types}); on a real model memory climbs until it runs out",
    es="los grafos de autograd mantenidos vivos crecieron época tras época: {starts} KiB al comienzo de las "
    "épocas 1-{epochs}, y {after} KiB aún retenidos cuando fit terminó. Algo guarda tensores que recuerdan "
    "cómo se calcularon (el historial de fit contiene: {types}); con un modelo real la memoria sube hasta "
    "agotarse",
)
GRAPHS_KEPT = Message(
    en="after fit returned, autograd graphs holding {after} KiB were still alive (at the start of epochs "
    "1-{epochs}: {starts} KiB): some tensor that remembers how it was computed outlives the training",
    es="cuando fit terminó, seguían vivos grafos de autograd que retienen {after} KiB (al comienzo de las "
    "épocas 1-{epochs}: {starts} KiB): algún tensor que recuerda cómo se calculó sobrevive al entrenamiento",
)
GRAPHS_HISTORY = Message(
    en="fit's history holds {types} values instead of plain Python numbers ({graphs} of them still carry an "
    "autograd graph)",
    es="el historial de fit guarda valores {types} en lugar de números simples de Python ({graphs} de ellos "
    "aún llevan un grafo de autograd)",
)
GRAPHS_CUDA = Message(
    en="torch.cuda.memory_allocated() grew across epochs: {starts} KiB at the start of epochs 1-{epochs}",
    es="torch.cuda.memory_allocated() creció de una época a otra: {starts} KiB al comienzo de las épocas "
    "1-{epochs}",
)


GRAPHS_BATCHES = Message(
    en="at step {step} of epoch {epoch}, the autograd graphs of {stale} earlier batches were still alive "
    "({what}), and by the end of fit up to {most} were alive at once. Something keeps tensors that still carry "
    "their graph (a loss or a model output kept in a list, summed as a tensor, stored on an object), so every "
    "batch's graph stays in memory and memory climbs with every step",
    es="en el paso {step} de la época {epoch}, los grafos de autograd de {stale} lotes anteriores seguían vivos "
    "({what}), y hasta el final de fit llegaron a estar vivos {most} a la vez. Algo guarda tensores que aún "
    "llevan su grafo (una pérdida o una salida del modelo guardada en una lista, sumada como tensor, guardada "
    "en un objeto), así que el grafo de cada lote se queda en memoria y la memoria sube con cada paso",
)
GRAPHS_AFTER = Message(
    en="after fit returned, the autograd graphs of {batches} different batches were still alive ({what}): "
    "tensors that remember how they were computed outlive the training (kept in the history, a global or an "
    "object)",
    es="cuando fit terminó, seguían vivos los grafos de autograd de {batches} lotes distintos ({what}): "
    "tensores que recuerdan cómo se calcularon sobreviven al entrenamiento (en el historial, una variable global "
    "o un objeto)",
)
KINDS = {"loss": ("losses", "pérdidas"), "output": ("model outputs", "salidas del modelo")}


def _what(counts: dict) -> Message:
    def say(i: int) -> str:
        return ", ".join(f"{n} {KINDS.get(k, (k, k))[i]}" for k, n in sorted(counts.items()) if n)

    return Message(en=say(0), es=say(1))


@check("memory.graphs", family="memory", calls=("fit",), title=GRAPHS_TITLE, cost=9, timeout=20.0)
def graphs(loop, lab) -> dict:
    import gc

    import torch

    from checker.setting.instruments import GraphTracker, Rig, SavedTensorMeter, is_plain_number, type_name

    rig = Rig(lab, probe=True)
    rig.tape.graphs = tracker = GraphTracker()
    meter = SavedTensorMeter()
    on_cuda = rig.device.startswith("cuda")
    per_step: dict = {"steps": 0, "most": 0, "first": None}
    in_epoch: dict[int, int] = {}

    def reading() -> dict:
        data = {"saved": meter.live_bytes}
        if on_cuda:
            torch.cuda.synchronize(rig.device)
            data["cuda"] = torch.cuda.memory_allocated(rig.device)
        return data

    def after_step(optimizer, args, kwargs) -> None:
        per_step["steps"] += 1
        stale = tracker.stale()
        if max(stale.values(), default=0) >= STALE_LIMIT and per_step["first"] is None:
            # graphs kept alive only by a reference cycle are freed by the collector: not a leak. Once a pile-up
            # has survived a collection the verdict is known; collecting at every later step would only cost
            # time (tens of ms each), so "most" may then count a few graphs a collection would have freed.
            gc.collect()
            stale = tracker.stale()
        most = max(stale.values(), default=0)
        per_step["most"] = max(per_step["most"], most)
        in_epoch[rig.tape.epoch] = in_epoch.get(rig.tape.epoch, 0) + 1
        if most >= STALE_LIMIT and per_step["first"] is None:
            per_step["first"] = {"epoch": rig.tape.epoch, "step": in_epoch[rig.tape.epoch], "stale": stale}

    rig.tape.epoch_probes.append(reading)
    # sealed: the optimizer's hook registry is the loop's to read, and after_step's closure holds the figures
    handle = rig.optimizer.register_step_post_hook(seal(after_step))
    with meter:
        history = loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, EPOCHS, val=rig.val,
                           device=rig.device)
    handle.remove()
    if max(tracker.alive().values(), default=0) >= STALE_LIMIT:
        gc.collect()  # a graph only kept alive by a reference cycle is not a leak
    after = meter.live_bytes
    rows = history if isinstance(history, list) else []
    values = [v for row in rows if isinstance(row, dict) for v in row.values()]
    starts = rig.tape.of("epoch")
    return {
        "epochs": EPOCHS,
        "saved_at_start": [e["saved"] for e in starts],
        "saved_after": after,
        "history_types": sorted({type_name(v) for v in values if not is_plain_number(v)}),
        "history_graphs": sum(1 for v in values if isinstance(v, torch.Tensor) and v.requires_grad),
        "cuda_at_start": [e["cuda"] for e in starts] if on_cuda else None,
        "steps": per_step["steps"], "most_stale": per_step["most"], "first_stale": per_step["first"],
        "alive_after": tracker.alive(),
    }


STALE_LIMIT = 2
"""Earlier batches whose graph may still be alive at a step: one (a loop that keeps the previous loss
for a moment holds constant memory); two or more means graphs pile up."""


def _kib(values: list[int]) -> str:
    return ", ".join(f"{v / 1024:.1f}" for v in values)


@graphs.judge
def _(m: dict):
    starts, after = m["saved_at_start"], m["saved_after"]
    types = ", ".join(m["history_types"]) or "plain numbers"
    params = dict(starts=_kib(starts), after=f"{after / 1024:.1f}", epochs=len(starts), types=types)
    first = m.get("first_stale")
    if first is not None:
        return failed(GRAPHS_BATCHES, step=first["step"], epoch=first["epoch"], stale=max(first["stale"].values()),
                      what=_what(first["stale"]), most=m["most_stale"])
    growing = len(starts) > 2 and starts[-1] > starts[1] and starts[1] > starts[0]
    if growing:
        return failed(GRAPHS_GROW, **params)
    if after != 0 or any(s != 0 for s in starts):
        return failed(GRAPHS_KEPT, **params)
    alive = m.get("alive_after") or {}
    if max(alive.values(), default=0) >= STALE_LIMIT:
        return failed(GRAPHS_AFTER, batches=max(alive.values()), what=_what(alive))
    if m["history_types"]:
        return failed(GRAPHS_HISTORY, types=types, graphs=m["history_graphs"])
    cuda = m.get("cuda_at_start")
    if cuda and len(cuda) > 2 and cuda[-1] > cuda[1] + CUDA_SLACK:
        return failed(GRAPHS_CUDA, starts=_kib(cuda), epochs=len(cuda))
    return passed(GRAPHS_OK, epochs=m["epochs"])
