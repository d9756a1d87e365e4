"""Figures confirmed outside the learner's process (issue 31).

The key that signs a child's events lives where the learner's code runs, so code there can read it and send any
figures it likes. A check whose verdict rests on what the instruments measured in the child (not on a comparison
with the trusted reference's answers) therefore also reports a witness (``checker.setting.instruments.Witness``: the
weights, inputs and targets of every forward pass, loss and optimizer step, from weights anchored by a draw of the
parent's), and a trusted process that never loads a learner's file recomputes the check's figures from it
(``confirm``). The verdict is judged on the recomputed figures: the learner's process may make its tensors right,
never report them right. A witness that does not hold together is said (``{"unconfirmed": why}``) and never passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CONFIRM: dict[str, Callable[[dict, Any], dict]] = {}
"""Check id -> ``recompute(measured, lab) -> figures``: the check's figures, recomputed from the child's witness in a
trusted process (it may raise ``checker.setting.instruments.Unconfirmed``)."""

UNCONFIRMED = "unconfirmed"
TOO_LARGE = "too_large"
"""Beside ``UNCONFIRMED``: the child dropped its witness as too large to send (the model's parameters): not the
loop's fault and no sign of forgery, so the check is held for review, never passed."""


def confirms(check_id: str) -> Callable[[Callable[[dict, Any], dict]], Callable[[dict, Any], dict]]:
    """Declare how the figures of ``check_id`` are recomputed from its witness."""

    def deco(fn: Callable[[dict, Any], dict]) -> Callable[[dict, Any], dict]:
        CONFIRM[check_id] = fn
        return fn

    return deco


def confirm(check_id: str, measured: Any, lab) -> dict:
    """The figures of ``check_id`` recomputed from ``measured`` (what the child reported), else
    ``{"unconfirmed": why}``."""
    from checker.setting.instruments import TooLarge, Unconfirmed

    if not isinstance(measured, dict):
        return {UNCONFIRMED: "no figures were reported"}
    try:
        return CONFIRM[check_id](measured, lab)
    except TooLarge as exc:
        return {UNCONFIRMED: str(exc)[:300], TOO_LARGE: exc.params}
    except Unconfirmed as exc:
        return {UNCONFIRMED: str(exc)[:300]}


def witness_marks(measured: dict) -> Any:
    """The witness's marks; the witness itself where the child said it too large (``replay`` says so)."""
    witness = measured.get("witness")
    if isinstance(witness, dict) and TOO_LARGE in witness:
        return witness
    return witness.get("marks") if isinstance(witness, dict) else None


def witness_epochs(measured: dict) -> int:
    """The epochs the child's loader was iterated (the last ones may have seen no batch)."""
    witness = measured.get("witness")
    epochs = witness.get("epochs") if isinstance(witness, dict) else None
    return epochs if isinstance(epochs, int) and not isinstance(epochs, bool) and 0 <= epochs <= 10_000 else 0
