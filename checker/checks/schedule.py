"""Learning-rate schedules count epochs: the lr every step used, and the lr the history reports.

Both checks run ``fit`` for 30 epochs from lr=1.0 with the checker's recording SGD (each
``step()`` notes its lr) and a scheduler that notes its own steps.
"""

from __future__ import annotations

import math

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed

EPOCHS, LR0 = 30, 1.0
STEP_SIZE, GAMMA = 10, 0.5
LR_TOL = 1e-9
"""The schedulers compute lrs in double precision: only round-off may differ."""


def step_lr(epoch: int) -> float:
    """The lr StepLR(step_size=10, gamma=0.5) gives epoch ``epoch`` (from 1) when stepped once per epoch."""
    return LR0 * GAMMA ** ((epoch - 1) // STEP_SIZE)


def cosine_lr(epoch: int) -> float:
    """The lr CosineAnnealingLR(T_max=30) gives epoch ``epoch`` (from 1) when stepped once per epoch."""
    return LR0 * (1 + math.cos(math.pi * (epoch - 1) / EPOCHS)) / 2


def _lr_run(loop, lab, kind: str) -> dict:
    from checker.setting.instruments import RecordingCosineLR, RecordingStepLR, Rig, plain_number

    rig = Rig(lab, optimizer="recording-sgd", lr=LR0)
    if kind == "step":
        scheduler = RecordingStepLR(rig.optimizer, step_size=STEP_SIZE, gamma=GAMMA, tape=rig.tape)
    else:
        scheduler = RecordingCosineLR(rig.optimizer, T_max=EPOCHS, tape=rig.tape)
    history = loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, EPOCHS, scheduler=scheduler,
                       device=rig.device)
    steps = rig.tape.by_epoch("step")
    # how many scheduler steps had been taken when each epoch made its first optimizer step
    before, count, seen = [], 0, set()
    for event in rig.tape.events:
        if event["kind"] == "sched":
            count += 1
        elif event["kind"] == "step" and event["epoch"] not in seen:
            seen.add(event["epoch"])
            before.append(count)
    hist = []
    if isinstance(history, list):
        for row in history:
            hist.append(plain_number(row.get("lr")) if isinstance(row, dict) else None)
    return {
        "epochs": EPOCHS,
        "lrs": [sorted({e["lrs"][0] for e in group}) for group in steps],
        "sched_before": before,
        "sched_total": count,
        "history_lr": hist,
    }


def _judge(m: dict, want, ok_msg: Message, steps_msg: Message, many_msg: Message, hist_msg: Message,
           short_msg: Message):
    lrs, hist = m["lrs"], m["history_lr"]
    if len(lrs) != m["epochs"]:
        return failed(short_msg, epochs=m["epochs"], ran=len(lrs))
    before = m["sched_before"] + [m["sched_total"]]
    for e, used in enumerate(lrs, start=1):
        if len(used) > 1:
            during = before[e] - before[e - 1] if len(before) > e else 0
            return failed(many_msg, epoch=e, n=len(used), low=min(used), high=max(used),
                          sched=during, lr16=_lr_at(lrs, 16), low_all=_lowest(lrs))
        if not used or abs(used[0] - want(e)) > LR_TOL:
            return failed(steps_msg, epoch=e, got=used[0] if used else float("nan"), want=want(e),
                          sched=before[e - 1] if len(before) >= e else 0, lr16=_lr_at(lrs, 16),
                          low_all=_lowest(lrs))
    for e, logged in enumerate(hist, start=1):
        if logged is None or abs(logged - want(e)) > LR_TOL:
            return failed(hist_msg, epoch=e, logged=logged if logged is not None else float("nan"),
                          used=lrs[e - 1][0])
    if len(hist) != m["epochs"]:
        used = lrs[min(len(hist), len(lrs) - 1)][0]
        return failed(hist_msg, epoch=len(hist) + 1, logged=float("nan"), used=used)
    return passed(ok_msg, lr1=lrs[0][0], lr11=_lr_at(lrs, 11), lr16=_lr_at(lrs, 16), lr21=_lr_at(lrs, 21),
                  lr30=_lr_at(lrs, 30))


def _lr_at(lrs: list[list[float]], epoch: int) -> float:
    return lrs[epoch - 1][0] if len(lrs) >= epoch and lrs[epoch - 1] else float("nan")


def _lowest(lrs: list[list[float]]) -> float:
    return min((x for group in lrs for x in group), default=float("nan"))


# ---------------------------------------------------------------------------- schedule.step

STEP_TITLE = Message(en="StepLR counts epochs", es="StepLR cuenta épocas")
STEP_OK = Message(
    en="with StepLR(step_size=10, gamma=0.5) from lr=1.0 the steps used {lr1:g} in epochs 1-10, {lr11:g} in "
    "11-20 and {lr21:g} in 21-30, and the history says the same",
    es="con StepLR(step_size=10, gamma=0.5) desde lr=1.0 los pasos usaron {lr1:g} en las épocas 1-10, {lr11:g} "
    "en la 11-20 y {lr21:g} en la 21-30, y el historial dice lo mismo",
)
STEP_WRONG = Message(
    en="with StepLR(step_size=10, gamma=0.5) from lr=1.0, the steps of epoch {epoch} used lr {got:g}; a "
    "schedule counted in epochs gives {want:g} there. When that epoch's first update ran, the scheduler had "
    "been stepped {sched} time(s)",
    es="con StepLR(step_size=10, gamma=0.5) desde lr=1.0, los pasos de la época {epoch} usaron lr {got:g}; un "
    "programa contado en épocas da {want:g} ahí. Cuando se hizo la primera actualización de esa época, el "
    "programador se había avanzado {sched} vez/veces",
)
STEP_MANY = Message(
    en="with StepLR(step_size=10, gamma=0.5) from lr=1.0, the steps of epoch {epoch} used {n} different lrs "
    "({high:g} down to {low:g}) and the scheduler was stepped {sched} times during that epoch: the lr drops "
    "within epochs, far too early (lowest lr of the run: {low_all:.3g})",
    es="con StepLR(step_size=10, gamma=0.5) desde lr=1.0, los pasos de la época {epoch} usaron {n} lr "
    "distintos (de {high:g} a {low:g}) y el programador avanzó {sched} veces durante esa época: el lr baja "
    "dentro de las épocas, demasiado pronto (lr más bajo de la ejecución: {low_all:.3g})",
)
STEP_HISTORY = Message(
    en="the history reports lr {logged:g} for epoch {epoch}, but that epoch's steps used lr {used:g}: the "
    "history's lr must be the lr the epoch trained with",
    es="el historial indica lr {logged:g} para la época {epoch}, pero los pasos de esa época usaron lr "
    "{used:g}: el lr del historial debe ser el lr con el que entrenó la época",
)
SCHED_SHORT = Message(
    en="fit(..., epochs={epochs}, scheduler=...) trained {ran} epoch(s)",
    es="fit(..., epochs={epochs}, scheduler=...) entrenó {ran} época(s)",
)


@check("schedule.step", family="schedule", calls=("fit",), title=STEP_TITLE, cost=60, timeout=20.0)
def step(loop, lab) -> dict:
    return _lr_run(loop, lab, "step")


@step.judge
def _(m: dict):
    return _judge(m, step_lr, STEP_OK, STEP_WRONG, STEP_MANY, STEP_HISTORY, SCHED_SHORT)


# ---------------------------------------------------------------------------- schedule.cosine

COSINE_TITLE = Message(en="the cosine schedule counts epochs", es="el programa coseno cuenta épocas")
COSINE_OK = Message(
    en="with CosineAnnealingLR(T_max=30) from lr=1.0 the lr fell smoothly, {lr16:.3g} at epoch 16 and "
    "{lr30:.3g} at epoch 30, and the history says the same",
    es="con CosineAnnealingLR(T_max=30) desde lr=1.0 el lr bajó de forma suave, {lr16:.3g} en la época 16 y "
    "{lr30:.3g} en la 30, y el historial dice lo mismo",
)
COSINE_WRONG = Message(
    en="with CosineAnnealingLR(T_max=30) from lr=1.0, the steps of epoch {epoch} used lr {got:.4g}; a cosine "
    "counted in epochs gives {want:.4g} there and passes 0.5 at epoch 16 (this run: {lr16:.4g} at epoch 16). "
    "When that epoch's first update ran, the scheduler had been stepped {sched} time(s)",
    es="con CosineAnnealingLR(T_max=30) desde lr=1.0, los pasos de la época {epoch} usaron lr {got:.4g}; un "
    "coseno contado en épocas da {want:.4g} ahí y pasa por 0.5 en la época 16 (esta ejecución: {lr16:.4g} en "
    "la época 16). Cuando se hizo la primera actualización de esa época, el programador se había avanzado "
    "{sched} vez/veces",
)
COSINE_MANY = Message(
    en="with CosineAnnealingLR(T_max=30) from lr=1.0, the steps of epoch {epoch} used {n} different lrs "
    "({high:.3g} to {low:.3g}) and the scheduler was stepped {sched} times during that epoch: the cosine runs "
    "through its 30 steps within a few epochs, reaching {low_all:.3g} and rising again mid-training",
    es="con CosineAnnealingLR(T_max=30) desde lr=1.0, los pasos de la época {epoch} usaron {n} lr distintos "
    "({high:.3g} a {low:.3g}) y el programador avanzó {sched} veces durante esa época: el coseno recorre sus "
    "30 pasos en pocas épocas, llega a {low_all:.3g} y vuelve a subir a mitad del entrenamiento",
)
COSINE_HISTORY = Message(
    en="the history reports lr {logged:.4g} for epoch {epoch}, but that epoch's steps used lr {used:.4g}: the "
    "history's lr must be the lr the epoch trained with",
    es="el historial indica lr {logged:.4g} para la época {epoch}, pero los pasos de esa época usaron lr "
    "{used:.4g}: el lr del historial debe ser el lr con el que entrenó la época",
)


@check("schedule.cosine", family="schedule", calls=("fit",), title=COSINE_TITLE, cost=60, timeout=20.0)
def cosine(loop, lab) -> dict:
    return _lr_run(loop, lab, "cosine")


@cosine.judge
def _(m: dict):
    return _judge(m, cosine_lr, COSINE_OK, COSINE_WRONG, COSINE_MANY, COSINE_HISTORY, SCHED_SHORT)
