"""Gradient clipping: step() sees a norm of at most ``clip_norm``, and this batch's gradient, scaled."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.checks.common import LOSS_FN_UNUSED, grad_ok, num
from checker.checks.confirm import confirms, witness_epochs, witness_marks

CLIP_NORM, EPOCHS = 0.05, 2
"""Below every batch gradient's norm in this setting, so every step must be clipped."""

NORM_TOL = 1e-5

NORM_TITLE = Message(
    en="gradient clipping between backward and step", es="recorte del gradiente entre backward y step"
)
NORM_OK = Message(
    en="with clip_norm={clip}, every one of the {n} steps saw this batch's gradient scaled to norm {top:.4g} "
    "at most (unclipped norms up to {raw:.3g})",
    es="con clip_norm={clip}, cada uno de los {n} pasos vio el gradiente de este lote escalado a norma "
    "{top:.4g} como mucho (normas sin recortar de hasta {raw:.3g})",
)
NORM_NO_STEPS = Message(
    en="fit(..., clip_norm={clip}) made no optimizer step, so no clipping could be checked",
    es="fit(..., clip_norm={clip}) no hizo ningún paso del optimizador, así que no se pudo comprobar el "
    "recorte",
)
NORM_TOO_BIG = Message(
    en="with clip_norm={clip}, the gradient's norm when step() ran at step {step} of epoch {epoch} was "
    "{norm:.4g} (this batch's unclipped norm: {raw:.4g}): the update used a gradient that was not clipped",
    es="con clip_norm={clip}, la norma del gradiente cuando se ejecutó step() en el paso {step} de la época "
    "{epoch} era {norm:.4g} (norma sin recortar de este lote: {raw:.4g}): la actualización usó un gradiente "
    "sin recortar",
)
NORM_PARTLY = Message(
    en="with clip_norm={clip}, the gradient's norm when step() ran at step {step} of epoch {epoch} was "
    "{norm:.4g}: smaller than this batch's unclipped {raw:.4g}, so something shrank it, but still above "
    "{clip}. Clipping by norm scales the whole gradient down to norm {clip}; clipping each value, or only some "
    "of the parameters, leaves the norm above it",
    es="con clip_norm={clip}, la norma del gradiente cuando se ejecutó step() en el paso {step} de la época "
    "{epoch} era {norm:.4g}: menor que la de este lote sin recortar, {raw:.4g}, así que algo la redujo, pero "
    "sigue por encima de {clip}. Recortar por norma escala el gradiente entero hasta la norma {clip}; recortar "
    "cada valor, o solo algunos parámetros, la deja por encima",
)
PARTLY_TOL = 1e-3
"""A norm this much (relative) below the batch's own counts as shrunk by something."""
NORM_NOT_SCALED = Message(
    en="with clip_norm={clip}, the gradient step() used at step {step} of epoch {epoch} had norm {norm:.4g} "
    "but differs by {rel:.1%} from this batch's gradient scaled down to that norm: clipping must shrink the "
    "batch's own gradient, keeping its direction",
    es="con clip_norm={clip}, el gradiente que usó step() en el paso {step} de la época {epoch} tenía norma "
    "{norm:.4g} pero difiere en un {rel:.1%} del gradiente de este lote reducido a esa norma: el recorte debe "
    "encoger el propio gradiente del lote, manteniendo su dirección",
)
NORM_MISSING = Message(
    en="with clip_norm={clip}, when step() ran at step {step} of epoch {epoch} the weights had no gradient "
    "(this batch's loss has one of norm {raw:.4g})",
    es="con clip_norm={clip}, cuando se ejecutó step() en el paso {step} de la época {epoch} los pesos no "
    "tenían gradiente (la pérdida de este lote tiene uno de norma {raw:.4g})",
)
NORM_NONFINITE = Message(
    en="with clip_norm={clip}, the gradient step() used at step {step} of epoch {epoch} contained NaN or "
    "infinite values (this batch's own gradient has norm {raw:.4g})",
    es="con clip_norm={clip}, el gradiente que usó step() en el paso {step} de la época {epoch} contenía "
    "valores NaN o infinitos (el propio gradiente de este lote tiene norma {raw:.4g})",
)


@check("clip.norm", family="clip", calls=("fit",), title=NORM_TITLE, cost=6, timeout=20.0)
def norm(loop, lab) -> dict:
    from checker.setting.instruments import Rig, parameters_of, step_gradients

    rig = Rig(lab, optimizer="recording-sgd", keep_grads=True, loss_grads=True, anchored=True)
    witness = rig.witness(clip=CLIP_NORM)
    loop.fit(rig.model, rig.optimizer, rig.loader, rig.loss_fn, EPOCHS, clip_norm=CLIP_NORM,
             device=rig.device)
    calls = len([e for e in rig.tape.of("loss") if e["grad_enabled"]])
    rows = step_gradients(rig.tape, parameters_of(rig.model), clip_norm=CLIP_NORM)
    return {"clip": CLIP_NORM, "loss_calls": calls, "rows": rows, "witness": witness.figures()}


@confirms("clip.norm")
def _(measured: dict, lab) -> dict:
    """The rows again, from the child's witness (checker.checks.confirm), in a trusted process."""
    from checker.setting.instruments import Rig, parameters_of, replay, step_gradients

    rig = Rig(lab, optimizer="recording-sgd", anchored=True)
    tape = replay(witness_marks(measured), rig.model, sgd=True, device=rig.device, epochs=witness_epochs(measured),
                  data=rig.data, clip=CLIP_NORM)
    calls = len([e for e in tape.of("loss") if e["grad_enabled"]])
    return {"clip": CLIP_NORM, "loss_calls": calls,
            "rows": step_gradients(tape, parameters_of(rig.model), clip_norm=CLIP_NORM)}


@norm.judge
def _(m: dict):
    rows, clip = m["rows"], m["clip"]
    if not m["loss_calls"]:
        return failed(LOSS_FN_UNUSED, where="fit", calls=0)
    if not rows:
        return failed(NORM_NO_STEPS, clip=clip)
    for r in rows:
        params = dict(clip=clip, step=r["step"], epoch=r["epoch"], raw=num(r["raw_norm"]),
                      norm=num(r["norm"]))
        if not r["finite"]:
            return failed(NORM_NONFINITE, **params)
        if r["norm"] == 0.0 and (r["raw_norm"] or 0) > 0:
            return failed(NORM_MISSING, **params)
        if not (r["norm"] is not None and r["norm"] <= clip * (1 + NORM_TOL)):
            shrunk = r["norm"] is not None and r["raw_norm"] and r["norm"] < r["raw_norm"] * (1 - PARTLY_TOL)
            return failed(NORM_PARTLY if shrunk else NORM_TOO_BIG, **params)
        if not grad_ok(r):
            return failed(NORM_NOT_SCALED, rel=num(r["rel"]), **params)
    return passed(NORM_OK, clip=clip, n=len(rows), top=max(r["norm"] for r in rows),
                  raw=max(r["raw_norm"] for r in rows))
