"""Convergence: the track's final setting (moons: Adam at lr 0.01, 100 epochs) generalises."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.confirm import confirms

ADAM_TITLE = Message(en="Adam generalises to validation", es="Adam generaliza a validación")
ADAM_OK = Message(
    en="after {epochs} epochs of Adam at lr={lr} the model classifies {acc:.0%} of the {n} validation points "
    "right (validation loss {loss:.3f})",
    es="tras {epochs} épocas de Adam con lr={lr} el modelo clasifica bien el {acc:.0%} de los {n} puntos de "
    "validación (pérdida de validación {loss:.3f})",
)
ADAM_FAIL = Message(
    en="after {epochs} epochs of Adam at lr={lr} the model classifies only {acc:.0%} of the {n} validation "
    "points right (validation loss {loss:.3f}, last training loss {train:.3f}); the track's reference reaches "
    "about {reached:.0%}, and at least {min_acc:.0%} is expected",
    es="tras {epochs} épocas de Adam con lr={lr} el modelo clasifica bien solo el {acc:.0%} de los {n} puntos "
    "de validación (pérdida de validación {loss:.3f}, última pérdida de entrenamiento {train:.3f}); el bucle "
    "de referencia del recorrido llega a un {reached:.0%}, y se espera al menos un {min_acc:.0%}",
)
ADAM_SHORT = Message(
    en="fit(..., epochs={epochs}) trained {ran} epoch(s)",
    es="fit(..., epochs={epochs}) entrenó {ran} época(s)",
)


@check("converge.adam", family="converge", calls=("fit", "make_optimizer"), title=ADAM_TITLE, cost=180, timeout=40.0)
def adam(loop, lab) -> dict:
    from checker.setting.instruments import Rig, epoch_means, final_state

    t = lab.track.thresholds
    rig = Rig(lab, optimizer="adam", lr=t.converge_lr, batch_size=t.batch_size)
    rig.optimizer = loop.make_optimizer(rig.model, name="adam", lr=t.converge_lr)  # the file's own optimizer
    loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, t.converge_epochs, val=rig.val, device=rig.device)
    loss, acc = rig.figures(*rig.val)
    means = epoch_means(rig.tape)
    return {"epochs": t.converge_epochs, "ran": len(means), "acc": acc, "loss": loss, "n": len(rig.val[1]),
            "train": means[-1] if means else None, "final": final_state(rig.model)}


@confirms("converge.adam")
def _(measured: dict, lab) -> dict:
    """Validation loss and accuracy again, in a trusted process, from the weights the child's model ended with."""
    from checker.setting.instruments import Rig, load_state

    t = lab.track.thresholds
    rig = Rig(lab, optimizer="sgd", lr=t.converge_lr)
    load_state(rig.model, measured.get("final"))
    loss, acc = rig.figures(*rig.val)
    ran, train = measured.get("ran"), measured.get("train")
    return {"epochs": t.converge_epochs, "ran": ran if isinstance(ran, int) and not isinstance(ran, bool) else 0,
            "acc": acc, "loss": loss, "n": len(rig.val[1]), "train": train if isinstance(train, float) else None}


@adam.judge
def _(m: dict):
    if m["ran"] != m["epochs"]:
        return failed(ADAM_SHORT, epochs=m["epochs"], ran=m["ran"])
    t = judged_track().thresholds
    if m["epochs"] != t.converge_epochs:
        return failed(ADAM_SHORT, epochs=t.converge_epochs, ran=m["ran"])
    params = dict(epochs=m["epochs"], lr=t.converge_lr, acc=m["acc"], n=m["n"], loss=m["loss"],
                  train=m["train"] if m["train"] is not None else float("nan"), min_acc=t.converge_acc,
                  reached=t.converge_reached)
    ok = m["acc"] >= t.converge_acc
    return (passed if ok else failed)(ADAM_OK if ok else ADAM_FAIL, **params)
