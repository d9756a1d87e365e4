"""The five steps per batch: overfitting a tiny batch proves the steps learn at all."""

from __future__ import annotations

from checker.checks.base import check, failed, passed
from checker.i18n import Message

OVERFIT_STEPS, OVERFIT_LR, OVERFIT_N, OVERFIT_MAX_LOSS = 500, 0.5, 8, 0.1

OVERFIT_TITLE = Message(en="overfit 8 examples", es="sobreajustar 8 ejemplos")
OVERFIT_OK = Message(
    en="{steps} SGD steps at lr={lr} took the loss on 8 examples from {first:.3f} to {loss:.4f}, all 8 right",
    es="{steps} pasos de SGD con lr={lr} bajaron la pérdida en 8 ejemplos de {first:.3f} a {loss:.4f}, los 8 bien",
)
OVERFIT_FAIL = Message(
    en="after {steps} SGD steps at lr={lr} on just 8 examples the loss went from {first:.3f} to {loss:.4f} "
    "(should be under {max_loss}) and {correct}/8 are classified right. An MLP with 82 parameters memorises "
    "8 points easily, so the steps of your loop do not learn: look at what happens between the forward pass "
    "and the update",
    es="tras {steps} pasos de SGD con lr={lr} sobre solo 8 ejemplos la pérdida pasó de {first:.3f} a {loss:.4f} "
    "(debería quedar bajo {max_loss}) y {correct}/8 se clasifican bien. Un MLP de 82 parámetros memoriza 8 puntos "
    "sin esfuerzo, así que los pasos de tu bucle no aprenden: mira qué pasa entre la pasada hacia delante y la "
    "actualización",
)


@check("steps.overfit", family="steps", title=OVERFIT_TITLE, cost=3.0)
def overfit(loop, lab) -> dict:
    import torch
    from torch import nn

    X, y = lab.data.X_train[:OVERFIT_N], lab.data.y_train[:OVERFIT_N]
    loss_fn = nn.CrossEntropyLoss()
    model = loop.make_model(seed=0)
    with torch.no_grad():
        first = loss_fn(model(X), y).item()
    optimizer = loop.make_optimizer(model, name="sgd", lr=OVERFIT_LR)
    loader = loop.make_loader(X, y, batch_size=OVERFIT_N, seed=0)
    for _ in range(OVERFIT_STEPS):
        loop.train_epoch(model, loader, optimizer, loss_fn)
    model.eval()
    with torch.no_grad():
        logits = model(X)
        loss = loss_fn(logits, y).item()
        correct = int((logits.argmax(dim=1) == y).sum().item())
    return {"first_loss": first, "loss": loss, "correct": correct}


@overfit.judge
def _(m: dict):
    params = dict(steps=OVERFIT_STEPS, lr=OVERFIT_LR, first=m["first_loss"], loss=m["loss"],
                  correct=m["correct"], max_loss=OVERFIT_MAX_LOSS)
    ok = m["loss"] < OVERFIT_MAX_LOSS and m["correct"] == OVERFIT_N
    return (passed if ok else failed)(OVERFIT_OK if ok else OVERFIT_FAIL, **params)
