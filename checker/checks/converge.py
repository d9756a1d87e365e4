"""Convergence: the lesson's final setting (Adam at lr 0.01, 100 epochs) generalises."""

from __future__ import annotations

from checker.checks.base import check, failed, passed
from checker.i18n import Message

EPOCHS, LR, MIN_ACC = 100, 0.01, 0.9

ADAM_TITLE = Message(en="Adam 0.01 reaches 90% on validation", es="Adam 0.01 llega al 90% en validación")
ADAM_OK = Message(
    en="after {epochs} epochs of Adam at lr={lr} the model classifies {acc:.0%} of the {n} validation points "
    "right (validation loss {loss:.3f})",
    es="tras {epochs} épocas de Adam con lr={lr} el modelo clasifica bien el {acc:.0%} de los {n} puntos de "
    "validación (pérdida de validación {loss:.3f})",
)
ADAM_FAIL = Message(
    en="after {epochs} epochs of Adam at lr={lr} the model classifies only {acc:.0%} of the {n} validation "
    "points right (validation loss {loss:.3f}, last training loss {train:.3f}); the lesson's loop reaches "
    "about 96%, and at least {min_acc:.0%} is expected",
    es="tras {epochs} épocas de Adam con lr={lr} el modelo clasifica bien solo el {acc:.0%} de los {n} puntos "
    "de validación (pérdida de validación {loss:.3f}, última pérdida de entrenamiento {train:.3f}); el bucle "
    "de la lección llega a un 96%, y se espera al menos un {min_acc:.0%}",
)
ADAM_SHORT = Message(
    en="fit(..., epochs={epochs}) trained {ran} epoch(s)",
    es="fit(..., epochs={epochs}) entrenó {ran} época(s)",
)


@check("converge.adam", family="converge", calls=("fit", "make_optimizer"), title=ADAM_TITLE, cost=18.0, timeout=40.0)
def adam(loop, lab) -> dict:
    from checker.instruments import Rig, epoch_means

    rig = Rig(lab, optimizer="adam", lr=LR)
    rig.optimizer = loop.make_optimizer(rig.model, name="adam", lr=LR)  # the file's own optimizer
    loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, EPOCHS, val=rig.val, device=rig.device)
    loss, acc = rig.figures(*rig.val)
    means = epoch_means(rig.tape)
    return {"epochs": EPOCHS, "ran": len(means), "acc": acc, "loss": loss, "n": len(rig.val[1]),
            "train": means[-1] if means else None}


@adam.judge
def _(m: dict):
    if m["ran"] != m["epochs"]:
        return failed(ADAM_SHORT, epochs=m["epochs"], ran=m["ran"])
    params = dict(epochs=m["epochs"], lr=LR, acc=m["acc"], n=m["n"], loss=m["loss"],
                  train=m["train"] if m["train"] is not None else float("nan"), min_acc=MIN_ACC)
    ok = m["acc"] >= MIN_ACC
    return (passed if ok else failed)(ADAM_OK if ok else ADAM_FAIL, **params)
