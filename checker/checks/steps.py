"""The five steps per batch: one update per batch, with this batch's gradient, that learns.

These checks drive the learner's ``train_epoch`` with the checker's own model, loader, spy
loss and recording optimizer, so a fault elsewhere in the file (its model, its loader) does
not show up here.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.common import LOSS_FN_UNUSED, grad_ok, num
from checker.checks.confirm import confirms, witness_epochs, witness_marks

EPOCHS = 2

# ---------------------------------------------------------------------------- steps.per_batch

PER_BATCH_TITLE = Message(en="one optimizer step per batch", es="un paso del optimizador por lote")
PER_BATCH_OK = Message(
    en="{epochs} epochs of {batches} batches gave {steps} optimizer steps per epoch",
    es="{epochs} épocas de {batches} lotes dieron {steps} pasos del optimizador por época",
)
PER_BATCH_MORE = Message(
    en="in epochs of {batches} batches, train_epoch called optimizer.step() {steps} time(s) per epoch (epoch "
    "by epoch: {per_epoch}): more updates than batches. An extra step() applies a gradient a second time (or "
    "an empty one), so the weights move where no batch asked them to",
    es="en épocas de {batches} lotes, train_epoch llamó a optimizer.step() {steps} vez/veces por época (época "
    "a época: {per_epoch}): más actualizaciones que lotes. Un step() de más aplica un gradiente por segunda "
    "vez (o uno vacío), así que los pesos se mueven hacia donde ningún lote pidió",
)
PER_BATCH_FAIL = Message(
    en="in epochs of {batches} batches, train_epoch called optimizer.step() {steps} time(s) per epoch (epoch "
    "by epoch: {per_epoch}). The weights should change once for every batch: with fewer steps most batches "
    "teach the model nothing",
    es="en épocas de {batches} lotes, train_epoch llamó a optimizer.step() {steps} vez/veces por época (época "
    "a época: {per_epoch}). Los pesos deberían cambiar una vez por cada lote: con menos pasos la mayoría de "
    "los lotes no le enseña nada al modelo",
)


@check("steps.per_batch", family="steps", calls=("train_epoch",), title=PER_BATCH_TITLE, cost=4, timeout=20.0)
def per_batch(loop, lab) -> dict:
    from checker.setting.instruments import Rig

    rig = Rig(lab, optimizer="recording-sgd")
    for _ in range(EPOCHS):
        loop.train_epoch(rig.model, rig.loader, rig.optimizer, rig.loss_fn, device=rig.device)
    steps = [len(group) for group in rig.tape.by_epoch("step")]
    return {"batches": len(rig.loader), "steps": steps}


@per_batch.judge
def _(m: dict):
    steps, batches = m["steps"], m["batches"]
    per_epoch = ", ".join(map(str, steps)) or "-"
    if bool(steps) and all(s == batches for s in steps):
        return passed(PER_BATCH_OK, epochs=len(steps), batches=batches, steps=batches, per_epoch=per_epoch)
    # the wording follows the direction measured: the first epoch that differs says which
    odd = next((s for s in steps if s != batches), 0)
    message = PER_BATCH_MORE if odd > batches else PER_BATCH_FAIL
    return failed(message, epochs=len(steps), batches=batches, steps=odd, per_epoch=per_epoch)


# ---------------------------------------------------------------------------- steps.fresh_grads

FRESH_TITLE = Message(en="fresh gradients at every step", es="gradientes frescos en cada paso")
FRESH_OK = Message(
    en="at all {n} steps, step() used exactly the current batch's gradient (largest relative difference "
    "{worst:.1e})",
    es="en los {n} pasos, step() usó exactamente el gradiente del lote actual (mayor diferencia relativa "
    "{worst:.1e})",
)
FRESH_NO_STEPS = Message(
    en="train_epoch never called optimizer.step() in {epochs} epochs, so no gradient could be checked",
    es="train_epoch no llamó nunca a optimizer.step() en {epochs} épocas, así que no se pudo comprobar ningún "
    "gradiente",
)
FRESH_DETACHED = Message(
    en="at step {step} of epoch {epoch}, the loss computed on the batch had no autograd path back to the "
    "model's weights (its gradient with respect to them is empty), so backward() cannot give them a gradient; "
    "when step() ran, the gradient norm was {norm:.3g}. The model cannot learn from a loss cut off from it",
    es="en el paso {step} de la época {epoch}, la pérdida calculada sobre el lote no tenía camino de autograd "
    "hasta los pesos del modelo (su gradiente respecto a ellos está vacío), así que backward() no puede darles "
    "gradiente; cuando se ejecutó step(), la norma del gradiente era {norm:.3g}. El modelo no puede aprender "
    "de una pérdida desconectada de él",
)
FRESH_MISSING = Message(
    en="when step() ran at step {step} of epoch {epoch}, the weights' .grad was empty (None or all zeros), "
    "although that batch's loss has a gradient of norm {raw:.3g}: the update did not use the batch's gradient",
    es="cuando se ejecutó step() en el paso {step} de la época {epoch}, el .grad de los pesos estaba vacío "
    "(None o todo ceros), aunque la pérdida de ese lote tiene un gradiente de norma {raw:.3g}: la "
    "actualización no usó el gradiente del lote",
)
FRESH_ACCUMULATED = Message(
    en="at step {step} of epoch {epoch}, the gradient step() used was {ratio:.2f}x the size of the current "
    "batch's gradient: it was this batch's gradient plus the one used at the step before. Gradients from "
    "earlier batches are still in .grad and add up, so the loss may fall fast at first and then turn around",
    es="en el paso {step} de la época {epoch}, el gradiente que usó step() medía {ratio:.2f} veces el del lote "
    "actual: era el gradiente de este lote más el usado en el paso anterior. Los gradientes de lotes "
    "anteriores siguen en .grad y se suman, así que la pérdida puede bajar rápido al principio y luego darse "
    "la vuelta",
)
FRESH_OTHER = Message(
    en="at step {step} of epoch {epoch}, the gradient step() used differs from the current batch's gradient by "
    "{rel:.1%} (norm {norm:.3g} instead of {raw:.3g}): the update does not follow the batch just seen",
    es="en el paso {step} de la época {epoch}, el gradiente que usó step() difiere del gradiente del lote "
    "actual en un {rel:.1%} (norma {norm:.3g} en lugar de {raw:.3g}): la actualización no sigue al lote recién "
    "visto",
)

FRESH_NONFINITE = Message(
    en="at step {step} of epoch {epoch}, the gradient step() used contained NaN or infinite values, while this "
    "batch's own gradient has norm {raw:.3g}: the update wrecks the weights",
    es="en el paso {step} de la época {epoch}, el gradiente que usó step() contenía valores NaN o infinitos, "
    "mientras que el propio gradiente de este lote tiene norma {raw:.3g}: la actualización estropea los pesos",
)


@check("steps.fresh_grads", family="steps", calls=("train_epoch",), title=FRESH_TITLE, cost=7, timeout=20.0)
def fresh_grads(loop, lab) -> dict:
    from checker.setting.instruments import Rig, parameters_of, step_gradients

    rig = Rig(lab, optimizer="recording-sgd", keep_grads=True, loss_grads=True, anchored=True)
    witness = rig.witness()
    for _ in range(EPOCHS):
        loop.train_epoch(rig.model, rig.loader, rig.optimizer, rig.loss_fn, device=rig.device)
    losses = [e for e in rig.tape.of("loss") if e["grad_enabled"]]
    rows = step_gradients(rig.tape, parameters_of(rig.model))
    return {"epochs": EPOCHS, "loss_calls": len(losses), "rows": rows, "witness": witness.figures()}


@confirms("steps.fresh_grads")
def _(measured: dict, lab) -> dict:
    """The rows again, from the child's witness (checker.checks.confirm), in a trusted process."""
    from checker.setting.instruments import Rig, parameters_of, replay, step_gradients

    rig = Rig(lab, optimizer="recording-sgd", anchored=True)
    tape = replay(witness_marks(measured), rig.model, sgd=True, device=rig.device, epochs=witness_epochs(measured),
                  data=rig.data)
    losses = [e for e in tape.of("loss") if e["grad_enabled"]]
    return {"epochs": EPOCHS, "loss_calls": len(losses), "rows": step_gradients(tape, parameters_of(rig.model))}


@fresh_grads.judge
def _(m: dict):
    rows = m["rows"]
    if not m["loss_calls"]:
        return failed(LOSS_FN_UNUSED, where="train_epoch", calls=0)
    if not rows:
        return failed(FRESH_NO_STEPS, epochs=m["epochs"])
    bad = next((r for r in rows if not grad_ok(r)), None)
    if bad is None:
        return passed(FRESH_OK, n=len(rows), worst=max(r["rel"] for r in rows))
    params = dict(step=bad["step"], epoch=bad["epoch"], norm=num(bad["norm"]), raw=num(bad["raw_norm"]),
                  ratio=num(bad["ratio"]), rel=num(bad["rel"]))
    if not bad["connected"]:
        return failed(FRESH_DETACHED, **params)
    if not bad["finite"]:
        return failed(FRESH_NONFINITE, **params)
    if bad["missing"]:
        return failed(FRESH_MISSING, **params)
    if bad["accumulated"]:
        return failed(FRESH_ACCUMULATED, **params)
    return failed(FRESH_OTHER, **params)


# ---------------------------------------------------------------------------- steps.overfit


OVERFIT_TITLE = Message(en="overfit a few examples", es="sobreajustar unos pocos ejemplos")
OVERFIT_OK = Message(
    en="{steps} SGD steps at lr={lr} took the loss on {n} examples from {first:.3f} to {loss:.4f} (under "
    "{max_loss}), all {n} right",
    es="{steps} pasos de SGD con lr={lr} bajaron la pérdida en {n} ejemplos de {first:.3f} a {loss:.4f} (bajo "
    "{max_loss}), los {n} bien",
)
OVERFIT_FAIL = Message(
    en="after {steps} SGD steps at lr={lr} on just {n} examples the loss went from {first:.3f} to {loss:.4f} "
    "(should be under {max_loss}) and {correct}/{n} are classified right. An MLP with {n_params} parameters "
    "memorises {n} points easily, so the steps of your loop do not learn: look at what happens between the "
    "forward pass and the update",
    es="tras {steps} pasos de SGD con lr={lr} sobre solo {n} ejemplos la pérdida pasó de {first:.3f} a "
    "{loss:.4f} (debería quedar bajo {max_loss}) y {correct}/{n} se clasifican bien. Un MLP de {n_params} "
    "parámetros memoriza {n} puntos sin esfuerzo, así que los pasos de tu bucle no aprenden: mira qué pasa entre "
    "la pasada hacia delante y la actualización",
)

OVERFIT_STALLED = Message(
    en="after {steps} SGD steps at lr={lr} on just {n} examples all {n} are classified right, yet the loss your "
    "loop computes only went from {first:.3f} to {loss:.4f} (should be under {max_loss}): when every "
    "prediction is right and confident, cross-entropy approaches 0, so the loss is not measuring the model's "
    "raw scores the way CrossEntropyLoss expects them",
    es="tras {steps} pasos de SGD con lr={lr} sobre solo {n} ejemplos los {n} se clasifican bien, pero la pérdida "
    "que calcula tu bucle solo pasó de {first:.3f} a {loss:.4f} (debería quedar bajo {max_loss}): cuando todas "
    "las predicciones son correctas y seguras, la entropía cruzada se acerca a 0, así que la pérdida no mide "
    "las puntuaciones en bruto del modelo como las espera CrossEntropyLoss",
)


@check("steps.overfit", family="steps", calls=("train_epoch", "make_optimizer"),
       title=OVERFIT_TITLE, cost=130, timeout=30.0)
def overfit(loop, lab) -> dict:
    from checker.setting.instruments import Rig

    t = lab.track.thresholds
    X, y = lab.data.X_train[:t.overfit_examples], lab.data.y_train[:t.overfit_examples]
    rig = Rig(lab, X=X, y=y, batch_size=t.overfit_examples, lr=t.overfit_lr)
    # the file's own optimizer: the lesson diagnoses a broken make_optimizer with this very test
    rig.optimizer = loop.make_optimizer(rig.model, name="sgd", lr=t.overfit_lr)
    for _ in range(t.overfit_steps):
        loop.train_epoch(rig.model, rig.loader, rig.optimizer, rig.loss_fn, device=rig.device)
    # the loss the loop itself computes (through the spy), first and last batch
    losses = [e["value"] for e in rig.tape.of("loss") if e["grad_enabled"]]
    _, acc = rig.figures(X, y)
    return {"first_loss": losses[0] if losses else None, "loss": losses[-1] if losses else None,
            "correct": round(acc * t.overfit_examples), "loss_calls": len(losses)}


@overfit.judge
def _(m: dict):
    if not m.get("loss_calls", 1):
        return failed(LOSS_FN_UNUSED, where="train_epoch", calls=0)
    track = judged_track()
    t = track.thresholds
    params = dict(steps=t.overfit_steps, lr=t.overfit_lr, first=num(m["first_loss"]), loss=num(m["loss"]),
                  correct=m["correct"], max_loss=t.overfit_loss, n=t.overfit_examples,
                  n_params=track.model.n_params)
    if m["loss"] is not None and m["loss"] < t.overfit_loss and m["correct"] == t.overfit_examples:
        return passed(OVERFIT_OK, **params)
    return failed(OVERFIT_STALLED if m["correct"] == t.overfit_examples else OVERFIT_FAIL, **params)
