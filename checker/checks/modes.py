"""Train and eval modes, on a model with dropout (where the mode changes the output).

``modes.train``: every optimizer step happens in training mode, also after a validation.
``modes.eval``: ``evaluate`` runs in eval mode, records no graph, and repeats itself exactly.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed

DROPOUT = 0.5
TRAIN_EPOCHS = 3

# ---------------------------------------------------------------------------- modes.train

TRAIN_TITLE = Message(en="training steps in training mode", es="pasos de entrenamiento en modo entrenamiento")
TRAIN_OK = Message(
    en="all {n} optimizer steps ran in training mode, including the {after} after a validation",
    es="los {n} pasos del optimizador se ejecutaron en modo entrenamiento, incluidos los {after} posteriores a "
    "una validación",
)
TRAIN_NO_STEPS = Message(
    en="fit made no optimizer step in {epochs} epochs, so the mode of training could not be checked",
    es="fit no hizo ningún paso del optimizador en {epochs} épocas, así que no se pudo comprobar el modo de "
    "entrenamiento",
)
TRAIN_AFTER_VAL = Message(
    en="{bad} of {n} optimizer steps ran with the model in eval mode (dropout switched off), the first at step "
    "{step} of epoch {epoch}, after the validation of epoch {prev}: once evaluated, the model kept training in "
    "the mode validation left it in",
    es="{bad} de {n} pasos del optimizador se ejecutaron con el modelo en modo evaluación (dropout "
    "desactivado), el primero en el paso {step} de la época {epoch}, tras la validación de la época {prev}: "
    "una vez evaluado, el modelo siguió entrenando en el modo en que lo dejó la validación",
)
TRAIN_FROM_START = Message(
    en="{bad} of {n} optimizer steps ran with the model in eval mode (dropout switched off), from the very "
    "first step: the model came to fit in eval mode and training never switched it back",
    es="{bad} de {n} pasos del optimizador se ejecutaron con el modelo en modo evaluación (dropout "
    "desactivado), desde el primer paso: el modelo llegó a fit en modo evaluación y el entrenamiento nunca lo "
    "cambió",
)

TRAIN_SWITCHED = Message(
    en="{bad} of {n} optimizer steps ran with the model in eval mode (dropout switched off), the first at step "
    "{step} of epoch {epoch}, before any validation: something inside training switches the model to eval mode",
    es="{bad} de {n} pasos del optimizador se ejecutaron con el modelo en modo evaluación (dropout "
    "desactivado), el primero en el paso {step} de la época {epoch}, antes de cualquier validación: algo dentro "
    "del entrenamiento pone el modelo en modo evaluación",
)


@check("modes.train", family="modes", calls=("fit",), title=TRAIN_TITLE, cost=7, timeout=20.0)
def train(loop, lab) -> dict:
    from checker.setting.instruments import Rig

    rig = Rig(lab, optimizer="recording-sgd", dropout=DROPOUT, probe=True)
    rig.model.eval()  # as a validation would leave it
    loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, TRAIN_EPOCHS, val=rig.val, device=rig.device)
    steps, rows = 0, []
    validated_epochs: set[int] = set()
    counts: dict[int, int] = {}
    for event in rig.tape.events:
        if event["kind"] == "forward" and not event["grad_enabled"]:
            validated_epochs.add(event["epoch"])
        elif event["kind"] == "step":
            steps += 1
            counts[event["epoch"]] = counts.get(event["epoch"], 0) + 1
            if not event["training"]:
                before = [e for e in validated_epochs if e < event["epoch"]]
                rows.append({"epoch": event["epoch"], "step": counts[event["epoch"]],
                             "after_val": max(before) if before else None})
    after = sum(n for e, n in counts.items() if any(v < e for v in validated_epochs))
    return {"epochs": TRAIN_EPOCHS, "steps": steps, "eval_steps": len(rows),
            "first": rows[0] if rows else None,
            "after_val": after}


@train.judge
def _(m: dict):
    if not m["steps"]:
        return failed(TRAIN_NO_STEPS, epochs=m["epochs"])
    first = m["first"]
    if first is None:
        return passed(TRAIN_OK, n=m["steps"], after=m["after_val"])
    params = dict(bad=m["eval_steps"], n=m["steps"], step=first["step"], epoch=first["epoch"])
    if first["after_val"] is not None:
        return failed(TRAIN_AFTER_VAL, prev=first["after_val"], **params)
    if (first["epoch"], first["step"]) == (1, 1):
        return failed(TRAIN_FROM_START, **params)
    return failed(TRAIN_SWITCHED, **params)


# ---------------------------------------------------------------------------- modes.eval

EVAL_TITLE = Message(en="validation in eval mode, no graph", es="validación en modo evaluación, sin grafo")
EVAL_OK = Message(
    en="evaluate ran {n} forward pass(es) in eval mode without recording a graph, and two calls gave the same "
    "{loss:.4f} / {acc:.3f}",
    es="evaluate hizo {n} pasada(s) hacia delante en modo evaluación sin registrar grafo, y dos llamadas "
    "dieron el mismo {loss:.4f} / {acc:.3f}",
)
EVAL_NO_FORWARD = Message(
    en="evaluate(model, X, y, loss_fn) never ran the model it was given (no forward pass seen)",
    es="evaluate(model, X, y, loss_fn) no ejecutó nunca el modelo que recibió (no se vio ninguna pasada hacia "
    "delante)",
)
EVAL_TRAIN_MODE = Message(
    en="evaluate ran {bad} of {n} forward pass(es) with the model in training mode: dropout stayed active, and "
    "two calls on the same model and data gave different results ({l1:.4f} / {a1:.3f}, then {l2:.4f} / "
    "{a2:.3f})",
    es="evaluate hizo {bad} de {n} pasada(s) hacia delante con el modelo en modo entrenamiento: el dropout "
    "siguió activo, y dos llamadas con el mismo modelo y datos dieron resultados distintos ({l1:.4f} / "
    "{a1:.3f}, luego {l2:.4f} / {a2:.3f})",
)
EVAL_GRAPH = Message(
    en="evaluate's forward passes recorded an autograd graph ({bad} of {n} outputs require grad): validation "
    "keeps activations in memory for a backward pass that never comes",
    es="las pasadas hacia delante de evaluate registraron un grafo de autograd ({bad} de {n} salidas requieren "
    "gradiente): la validación guarda activaciones en memoria para un backward que nunca llega",
)
EVAL_UNSTABLE = Message(
    en="two evaluate calls on the same model and data gave different results ({l1:.4f} / {a1:.3f}, then "
    "{l2:.4f} / {a2:.3f})",
    es="dos llamadas a evaluate con el mismo modelo y datos dieron resultados distintos ({l1:.4f} / {a1:.3f}, "
    "luego {l2:.4f} / {a2:.3f})",
)
EVAL_CHANGED = Message(
    en="evaluate changed the model's weights (largest change {diff:.3g}); validation must only measure",
    es="evaluate cambió los pesos del modelo (mayor cambio {diff:.3g}); la validación solo debe medir",
)


@check("modes.eval", family="modes", calls=("evaluate",), title=EVAL_TITLE, cost=1, timeout=20.0)
def eval_(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import Rig, plain_number

    rig = Rig(lab, dropout=DROPOUT, probe=True)
    before = [p.detach().clone() for p in rig.model.parameters()]
    rig.model.train()  # as training leaves it
    # Dropout draws from the global generator: seed it, so the figures a message quotes repeat run to run.
    torch.manual_seed(0)
    results = []
    for _ in range(2):
        out = loop.evaluate(rig.model, *rig.val, rig.loss_fn, device=rig.device)
        pair = list(out) if isinstance(out, tuple | list) else [out, None]
        results.append([plain_number(v) for v in pair[:2]])
    forwards = rig.tape.of("forward")
    now = rig.model.parameters()
    diff = max(float((p.detach() - b).abs().max()) for p, b in zip(now, before, strict=True))
    return {
        "forwards": len(forwards), "train_mode": sum(f["training"] for f in forwards),
        "graph": sum(f["graph"] for f in forwards), "results": results, "weights_changed": diff,
    }


@eval_.judge
def _(m: dict):
    (l1, a1), (l2, a2) = [[x if x is not None else float("nan") for x in r] for r in m["results"]]
    params = dict(l1=l1, a1=a1, l2=l2, a2=a2, n=m["forwards"])
    if not m["forwards"]:
        return failed(EVAL_NO_FORWARD)
    if m["train_mode"]:
        return failed(EVAL_TRAIN_MODE, bad=m["train_mode"], **params)
    if m["graph"]:
        return failed(EVAL_GRAPH, bad=m["graph"], **params)
    if not m["weights_changed"] == 0.0:
        return failed(EVAL_CHANGED, diff=m["weights_changed"])
    if not (m["results"][0] == m["results"][1] and None not in m["results"][0]):
        return failed(EVAL_UNSTABLE, **params)
    return passed(EVAL_OK, loss=l1, acc=a1, n=m["forwards"] // 2)
