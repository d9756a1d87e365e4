"""What several checks share: comparing measured numbers, and the message for an unused loss_fn."""

from __future__ import annotations

import math

from checker.base.i18n import Message

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
