"""The training loss: it falls epoch after epoch, and the epoch's figure is a mean over examples."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.common import LOSS_FN_UNUSED, close, is_nan, num
from checker.checks.confirm import confirms, witness_epochs, witness_marks

STUCK = 1e-4
"""A change smaller than this share of the loss is float noise, not a fall (the reference falls by > 1%)."""
MEAN_TOL = 1e-5
"""Relative difference allowed from the mean over examples: float32 accumulation round-off."""

# ---------------------------------------------------------------------------- loss.falls

FALLS_TITLE = Message(
    en="the training loss falls every epoch", es="la pérdida de entrenamiento baja cada época"
)
FALLS_OK = Message(
    en="over {epochs} epochs of SGD at lr={lr} the training loss fell every epoch, from {first:.4f} to "
    "{last:.4f}",
    es="en {epochs} épocas de SGD con lr={lr} la pérdida de entrenamiento bajó en cada época, de {first:.4f} a "
    "{last:.4f}",
)
FALLS_FAIL = Message(
    en="over {epochs} epochs of SGD at lr={lr} the training loss rose at epoch {epoch}: {prev:.4f} -> "
    "{cur:.4f} (epoch by epoch: {losses}). At this small lr a correct loop lowers it every epoch",
    es="en {epochs} épocas de SGD con lr={lr} la pérdida de entrenamiento subió en la época {epoch}: "
    "{prev:.4f} -> {cur:.4f} (época a época: {losses}). Con este lr pequeño un bucle correcto la baja en cada "
    "época",
)
FALLS_STUCK = Message(
    en="over {epochs} epochs of SGD at lr={lr} the training loss stopped moving at epoch {epoch}: {prev:.4f} -> "
    "{cur:.4f} (epoch by epoch: {losses}). At this lr a loop that learns lowers it clearly every epoch; a loss "
    "that stands still means the weights are not changing",
    es="en {epochs} épocas de SGD con lr={lr} la pérdida de entrenamiento dejó de moverse en la época {epoch}: "
    "{prev:.4f} -> {cur:.4f} (época a época: {losses}). Con este lr un bucle que aprende la baja claramente en "
    "cada época; una pérdida quieta significa que los pesos no cambian",
)
FALLS_NAN = Message(
    en="over {epochs} epochs of SGD at lr={lr} the training loss became NaN at epoch {epoch} (epoch by epoch: "
    "{losses}): the numbers overflowed or were poisoned somewhere in the step",
    es="en {epochs} épocas de SGD con lr={lr} la pérdida de entrenamiento se volvió NaN en la época {epoch} "
    "(época a época: {losses}): los números se desbordaron o se estropearon en algún punto del paso",
)
FALLS_SHORT = Message(
    en="fit(..., epochs={epochs}) trained {ran} epoch(s) (the loader was iterated {ran} time(s))",
    es="fit(..., epochs={epochs}) entrenó {ran} época(s) (el cargador se recorrió {ran} vez/veces)",
)


@check("loss.falls", family="loss", calls=("fit", "make_optimizer"), title=FALLS_TITLE, cost=12, timeout=20.0)
def falls(loop, lab) -> dict:
    from checker.setting.instruments import Rig, epoch_means

    t = lab.track.thresholds
    rig = Rig(lab, lr=t.falls_lr, anchored=True, loss_grads=True)
    rig.optimizer = loop.make_optimizer(rig.model, name="sgd", lr=t.falls_lr)  # the file's own optimizer
    witness = rig.witness()  # its steps too: where they are plain SGD's, no weights need to travel
    history = loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, t.falls_epochs, device=rig.device)
    calls = len([e for e in rig.tape.of("loss") if e["grad_enabled"]])
    # what the file itself reported per epoch (its history's train_loss, plain numbers only): the figures a
    # learner sees in `kata run`, shown again under the report; the verdict reads the spy's means
    rows = history if isinstance(history, list) else []
    reported = [r.get("train_loss") if isinstance(r, dict) else None for r in rows]
    reported = [x if isinstance(x, int | float) and not isinstance(x, bool) else None for x in reported]
    return {"epochs": t.falls_epochs, "losses": epoch_means(rig.tape), "loss_calls": calls, "reported": reported,
            "witness": witness.figures()}


@confirms("loss.falls")
def _(measured: dict, lab) -> dict:
    """The epochs' mean losses again, from the child's witness (checker.checks.confirm), in a trusted process: each
    batch's loss taken again on the weights it was computed with, the first of them the anchored initial ones."""
    from checker.setting.instruments import Rig, epoch_means, replay

    t = lab.track.thresholds
    rig = Rig(lab, lr=t.falls_lr, anchored=True)
    tape = replay(witness_marks(measured), rig.model, device=rig.device, epochs=witness_epochs(measured),
                  data=rig.data, chained=False)
    reported = measured.get("reported")
    return {"epochs": t.falls_epochs, "losses": epoch_means(tape),
            "loss_calls": len([e for e in tape.of("loss") if e["grad_enabled"]]),
            "reported": reported if isinstance(reported, list) else []}


@falls.judge
def _(m: dict):
    losses = m["losses"]
    t = judged_track().thresholds
    lr = t.falls_lr
    if not m["loss_calls"]:
        return failed(LOSS_FN_UNUSED, where="fit", calls=0)
    if len(losses) != t.falls_epochs:
        return failed(FALLS_SHORT, epochs=t.falls_epochs, ran=len(losses))
    shown = ", ".join(f"{x:.3f}" for x in losses)
    for e, x in enumerate(losses, start=1):
        if is_nan(x):
            return failed(FALLS_NAN, epochs=m["epochs"], lr=lr, epoch=e, losses=shown)
    for e in range(1, len(losses)):
        prev, cur = losses[e - 1], losses[e]
        if not cur < prev - STUCK * abs(prev):
            message = FALLS_STUCK if abs(cur - prev) <= STUCK * abs(prev) else FALLS_FAIL
            return failed(message, epochs=m["epochs"], lr=lr, epoch=e + 1, prev=prev, cur=cur,
                          losses=shown)
    return passed(FALLS_OK, epochs=m["epochs"], lr=lr, first=losses[0], last=losses[-1])


# ---------------------------------------------------------------------------- loss.epoch_mean

MEAN_TITLE = Message(
    en="epoch loss is a mean over examples", es="la pérdida de la época es una media por ejemplo"
)
MEAN_OK = Message(
    en="train_epoch returned {got:.6f}, the mean loss over the {n} examples (the plain mean of the {batches} "
    "batch losses would be {batch_mean:.6f})",
    es="train_epoch devolvió {got:.6f}, la pérdida media sobre los {n} ejemplos (la media simple de las "
    "{batches} pérdidas de lote sería {batch_mean:.6f})",
)
MEAN_BATCH_MEAN = Message(
    en="train_epoch returned {got:.6f}, the plain mean of the {batches} batch losses; the mean loss over the "
    "epoch's {n} examples was {want:.6f}. The last batch holds only {last} examples, so averaging batches "
    "gives its examples more weight than the others",
    es="train_epoch devolvió {got:.6f}, la media simple de las {batches} pérdidas de lote; la pérdida media "
    "sobre los {n} ejemplos de la época fue {want:.6f}. El último lote tiene solo {last} ejemplos, así que "
    "promediar lotes da a sus ejemplos más peso que a los demás",
)
MEAN_WRONG = Message(
    en="train_epoch returned {got:.6f}, but the mean loss over the epoch's {n} examples was {want:.6f} (the "
    "plain mean of the {batches} batch losses: {batch_mean:.6f})",
    es="train_epoch devolvió {got:.6f}, pero la pérdida media sobre los {n} ejemplos de la época fue "
    "{want:.6f} (la media simple de las {batches} pérdidas de lote: {batch_mean:.6f})",
)
MEAN_NOT_NUMBER = Message(
    en="train_epoch returned a {type}, not a number: the protocol asks for the epoch's mean loss as a Python "
    "float",
    es="train_epoch devolvió un {type}, no un número: el protocolo pide la pérdida media de la época como "
    "float de Python",
)


@check("loss.epoch_mean", family="loss", calls=("train_epoch",), title=MEAN_TITLE, cost=2, timeout=20.0)
def epoch_mean(loop, lab) -> dict:
    from checker.setting.instruments import Rig, plain_number, type_name

    rig = Rig(lab)
    returned = loop.train_epoch(rig.model, rig.loader, rig.optimizer, rig.loss_fn, device=rig.device)
    batches = [e for e in rig.tape.of("loss") if e["grad_enabled"]]
    n = sum(e["n"] for e in batches)
    return {
        "got": plain_number(returned), "type": type_name(returned),
        "want": sum(e["value"] * e["n"] for e in batches) / n if n else None,
        "batch_mean": sum(e["value"] for e in batches) / len(batches) if batches else None,
        "n": n, "batches": len(batches), "last": batches[-1]["n"] if batches else 0,
    }


@epoch_mean.judge
def _(m: dict):
    if not m["batches"]:
        return failed(LOSS_FN_UNUSED, where="train_epoch", calls=0)
    if m["got"] is None:
        return failed(MEAN_NOT_NUMBER, type=m["type"])
    params = dict(got=m["got"], want=num(m["want"]), n=m["n"], batches=m["batches"], last=m["last"],
                  batch_mean=num(m["batch_mean"]))
    if close(m["got"], m["want"], rel=MEAN_TOL):
        return passed(MEAN_OK, **params)
    if close(m["got"], m["batch_mean"], rel=MEAN_TOL):
        return failed(MEAN_BATCH_MEAN, **params)
    return failed(MEAN_WRONG, **params)
