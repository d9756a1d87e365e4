"""Validation figures: ``evaluate`` measures the data it is given; ``fit`` reports the validation set's."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.checks.common import close

LOSS_TOL = 1e-5
"""Relative: a mean of float32 losses, however it is chunked, is this close to the exact one."""
ACC_TOL = 1e-6
FIT_EPOCHS = 2

FIGURES_TITLE = Message(en="validation figures are right", es="las cifras de validación son correctas")
FIGURES_OK = Message(
    en="evaluate's loss and accuracy match the model's on the data given ({n} examples: {loss:.4f} / "
    "{acc:.3f}), and fit's val_loss / val_acc are the validation set's",
    es="la pérdida y la exactitud de evaluate coinciden con las del modelo sobre los datos dados ({n} "
    "ejemplos: {loss:.4f} / {acc:.3f}), y val_loss / val_acc de fit son los del conjunto de validación",
)
FIGURES_EVALUATE = Message(
    en="evaluate(model, X, y, loss_fn) on {n} examples returned loss {gl:.4f} and accuracy {ga:.4f}, but on "
    "those examples the model's mean loss is {wl:.4f} and it classifies {wa:.1%} of them right",
    es="evaluate(model, X, y, loss_fn) sobre {n} ejemplos devolvió pérdida {gl:.4f} y exactitud {ga:.4f}, pero "
    "sobre esos ejemplos la pérdida media del modelo es {wl:.4f} y clasifica bien el {wa:.1%}",
)
FIGURES_NOT_PAIR = Message(
    en="evaluate(model, X, y, loss_fn) returned {what}; the protocol asks for (mean loss, accuracy) as two "
    "numbers",
    es="evaluate(model, X, y, loss_fn) devolvió {what}; el protocolo pide (pérdida media, exactitud) como dos "
    "números",
)
FIGURES_FIT_MISSING = Message(
    en="fit(..., val=(X_val, y_val)) returned history rows without val_loss and val_acc (last row's keys: "
    "{keys})",
    es="fit(..., val=(X_val, y_val)) devolvió filas de historial sin val_loss ni val_acc (claves de la última "
    "fila: {keys})",
)
FIGURES_FIT_TRAIN = Message(
    en="fit's last history row reports val_loss {gl:.4f} and val_acc {ga:.4f}, but on the validation set the "
    "model scores {vl:.4f} and {va:.4f}; the reported figures are the training set's ({tl:.4f}, {ta:.4f}): "
    "validation measured data the model trained on",
    es="la última fila del historial de fit indica val_loss {gl:.4f} y val_acc {ga:.4f}, pero en el conjunto "
    "de validación el modelo obtiene {vl:.4f} y {va:.4f}; las cifras indicadas son las del conjunto de "
    "entrenamiento ({tl:.4f}, {ta:.4f}): la validación midió datos con los que el modelo entrenó",
)
FIGURES_FIT_WRONG = Message(
    en="fit's last history row reports val_loss {gl:.4f} and val_acc {ga:.4f}, but on the validation set the "
    "model scores {vl:.4f} and {va:.4f} after that epoch",
    es="la última fila del historial de fit indica val_loss {gl:.4f} y val_acc {ga:.4f}, pero en el conjunto "
    "de validación el modelo obtiene {vl:.4f} y {va:.4f} tras esa época",
)
FIGURES_FIT_EPOCH = Message(
    en="fit's history row for epoch {epoch} of {epochs} reports val_loss / val_acc {got}, but after that epoch "
    "the model scores {vl:.4f} / {va:.4f} on the validation set: every epoch's row should carry that epoch's "
    "validation",
    es="la fila del historial de fit para la época {epoch} de {epochs} indica val_loss / val_acc {got}, pero "
    "tras esa época el modelo obtiene {vl:.4f} / {va:.4f} en validación: la fila de cada época debería llevar "
    "la validación de esa época",
)


@check("eval.figures", family="eval", calls=("evaluate", "fit"), title=FIGURES_TITLE, cost=4, timeout=20.0)
def figures(loop, lab) -> dict:
    from torch import nn

    from checker.setting.instruments import Rig, plain_number, type_name

    rig = Rig(lab)
    train_set = (lab.data.X_train, lab.data.y_train)
    evaluations = []
    for X, y in (rig.val, train_set):
        out = loop.evaluate(rig.model, X, y, nn.CrossEntropyLoss(), device=rig.device)
        pair = list(out)[:2] if isinstance(out, tuple | list) and len(out) == 2 else None
        evaluations.append({
            "n": len(y), "returned": type_name(out),
            "got": [plain_number(v) for v in pair] if pair is not None else None,
            "want": list(rig.figures(X, y)),
        })
    # The model's weights when each epoch ends: at the start of the next epoch, and after fit for the last.
    snapshots: list[dict] = []

    def snapshot() -> dict:
        if rig.tape.epoch >= 2:
            snapshots.append({k: v.detach().clone() for k, v in rig.model.state_dict().items()})
        return {}

    rig.tape.epoch_probes.append(snapshot)
    history = loop.fit(rig.model, rig.optimizer, rig.loader, nn.CrossEntropyLoss(), FIT_EPOCHS, val=rig.val,
                       device=rig.device)
    snapshots.append({k: v.detach().clone() for k, v in rig.model.state_dict().items()})
    rows = [r for r in history if isinstance(r, dict)] if isinstance(history, list) else []
    last = rows[-1] if rows else {}
    final = {k: v.detach().clone() for k, v in rig.model.state_dict().items()}
    epochs = []
    for row, weights in zip(rows, snapshots, strict=False):
        rig.model.load_state_dict(weights)
        epochs.append({"got": [plain_number(row.get("val_loss")), plain_number(row.get("val_acc"))],
                       "val": list(rig.figures(*rig.val))})
    rig.model.load_state_dict(final)
    return {
        "evaluate": evaluations,
        "fit": {
            "keys": sorted(map(str, last)),
            "got": [plain_number(last.get("val_loss")), plain_number(last.get("val_acc"))],
            "val": list(rig.figures(*rig.val)), "train": list(rig.figures(*train_set)),
            "epochs": epochs,
        },
    }


def same(got: list, want: list) -> bool:
    """Loss within float32 round-off (relative), accuracy within ACC_TOL; a NaN model gives NaN for both."""
    return close(got[0], want[0], rel=LOSS_TOL) and close(got[1], want[1], abs_tol=ACC_TOL)


@figures.judge
def _(m: dict):
    for ev in m["evaluate"]:
        if ev["got"] is None or None in ev["got"]:
            return failed(FIGURES_NOT_PAIR, what=f"a {ev['returned']}")
        if not same(ev["got"], ev["want"]):
            return failed(FIGURES_EVALUATE, n=ev["n"], gl=ev["got"][0], ga=ev["got"][1], wl=ev["want"][0],
                          wa=ev["want"][1])
    fit = m["fit"]
    if None in fit["got"]:
        return failed(FIGURES_FIT_MISSING, keys=", ".join(fit["keys"]) or "none")
    params = dict(gl=fit["got"][0], ga=fit["got"][1], vl=fit["val"][0], va=fit["val"][1], tl=fit["train"][0],
                  ta=fit["train"][1])
    if not same(fit["got"], fit["val"]):
        if same(fit["got"], fit["train"]):
            return failed(FIGURES_FIT_TRAIN, **params)
        return failed(FIGURES_FIT_WRONG, **params)
    for epoch, row in enumerate(fit.get("epochs", []), start=1):
        if None in row["got"] or not same(row["got"], row["val"]):
            got = "none" if None in row["got"] else f"{row['got'][0]:.4f} / {row['got'][1]:.4f}"
            return failed(FIGURES_FIT_EPOCH, epoch=epoch, epochs=len(fit["epochs"]), got=got,
                          vl=row["val"][0], va=row["val"][1])
    first = m["evaluate"][0]
    return passed(FIGURES_OK, n=first["n"], loss=first["got"][0], acc=first["got"][1])
