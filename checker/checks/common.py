"""What several checks share: comparing measured numbers, the message for an unused loss_fn, and the verdict
over argument classes (the simplest failing case named)."""

from __future__ import annotations

import math
from typing import Any

from checker.base.i18n import Message
from checker.checks.base import Verdict, failed
from checker.setting.coverage import BIG_ROWS, BIG_VAL_TAIL

GRAD_TOL = 1e-5
"""Relative distance allowed between two float32 gradients of the same loss: round-off only."""

LOSS_FN_UNUSED = Message(
    en="{where} never called the loss_fn it was given ({calls} calls seen): the checker passes its own loss "
    "function to watch every batch, so the loop must compute its loss through loss_fn",
    es="{where} no llamó nunca a la loss_fn que recibió ({calls} llamadas vistas): el comprobador pasa su "
    "propia función de pérdida para observar cada lote, así que el bucle debe calcular su pérdida con loss_fn",
)


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def close(a: float | None, b: float | None, *, rel: float = 0.0, abs_tol: float = 0.0) -> bool:
    """``a`` equals ``b`` within ``rel`` (relative to ``max(1, |b|)``) or ``abs_tol``; two NaNs are equal.

    None (nothing measured) is never close to anything.
    """
    if a is None or b is None:
        return False
    if is_nan(a) or is_nan(b):
        return is_nan(a) and is_nan(b)
    return abs(a - b) <= max(abs_tol, rel * max(1.0, abs(b)))


def grad_ok(row: dict, tol: float = GRAD_TOL) -> bool:
    """A row of :func:`checker.setting.instruments.step_gradients` whose gradient is the batch's own (as expected)."""
    return bool(row["connected"]) and row["finite"] and row["rel"] is not None and row["rel"] <= tol


def num(value: float | None) -> float:
    """A figure for a message: None shows as nan."""
    return float("nan") if value is None else value


# ---------------------------------------------------------------------------- verdicts over cases

CASE_FAIL = Message(en="{detail} [{label}]{contrast}", es="{detail} [{label}]{contrast}")
CASE_CONTRAST = Message(en="; at {other} it matches the reference", es="; con {other} coincide con la referencia")


def nest(verdict: Verdict) -> Message:
    """A verdict's message with its figures filled, in both languages (to quote inside another message)."""
    return Message(en=verdict.render("en"), es=verdict.render("es"))


def worst_case(results: list[tuple[Any, Verdict]]) -> Verdict | None:
    """The verdict for a list of ``(case, verdict)`` (cases of ``checker.setting.coverage``): the simplest failing
    case's, naming its class and, where one exists, a passing case of another class for contrast; None when
    every case passes."""
    failing = sorted([(c, v) for c, v in results if not v.passed], key=lambda cv: cv[0].rank)
    if not failing:
        return None
    case, verdict = failing[0]
    passing = sorted([c for c, v in results if v.passed and getattr(c, "kind", c) != getattr(case, "kind", case)],
                     key=lambda c: c.rank)
    contrast = Message(en="", es="")
    if passing:
        other = passing[0].label()
        contrast = Message(en=CASE_CONTRAST.en.format(other=other.en), es=CASE_CONTRAST.es.format(other=other.es))
    return failed(CASE_FAIL, detail=nest(verdict), label=case.label(), contrast=contrast)


def repeated_rows(X, y, rows: int | None):
    """``X`` and ``y`` with their rows repeated to ``rows`` (None: as they are)."""
    if not rows:
        return X, y
    import torch

    index = torch.arange(rows) % len(X)
    return X[index], y[index]


def validation_set(lab, big: bool):
    """The validation set ``fit`` is handed: the track's own, or (``big``) its rows repeated to ``BIG_ROWS`` with
    ``BIG_VAL_TAIL`` training rows at the end, so a loop that keeps only the first rows anywhere below reports
    other figures."""
    d = lab.data
    if not big:
        return d.X_val, d.y_val
    import torch

    Xv, yv = repeated_rows(d.X_val, d.y_val, BIG_ROWS)
    Xt, yt = repeated_rows(d.X_train, d.y_train, BIG_VAL_TAIL)
    return torch.cat([Xv, Xt]), torch.cat([yv, yt])


def scaled_loss(loss_fn, scale: float | None):
    """``loss_fn`` times ``scale`` (None: as it is), as a module."""
    if not scale:
        return loss_fn
    from torch import nn

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = loss_fn

        def forward(self, output, target):
            return self.inner(output, target) * scale

    return Scaled()
