"""Loop protocol v1: the functions every loop file defines, and how the checker calls them.

Each entry is the call the checker makes, written as a signature. The checker passes the
required parameters by position and every optional one by keyword, always by the name
written here. A loop file passes validation when every such call can be bound to its
function (extra optional parameters, ``*args`` and ``**kwargs`` are all fine).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolFunction:
    name: str
    signature: str
    positional: tuple[str, ...]
    keywords: tuple[str, ...] = ()

    def probe_call(self) -> tuple[tuple[object, ...], dict[str, object]]:
        """Arguments shaped like the checker's calls, for ``inspect.Signature.bind``."""
        return tuple(object() for _ in self.positional), {k: None for k in self.keywords}


PROTOCOL_VERSION = 1

FUNCTIONS: tuple[ProtocolFunction, ...] = (
    ProtocolFunction("seed_everything", "seed_everything(seed=0)", (), ("seed",)),
    ProtocolFunction("make_data", "make_data(seed=0)", (), ("seed",)),
    ProtocolFunction(
        "make_loader", "make_loader(X, y, batch_size=32, seed=0)", ("X", "y"), ("batch_size", "seed")
    ),
    ProtocolFunction("make_model", "make_model(seed=0)", (), ("seed",)),
    ProtocolFunction("make_optimizer", 'make_optimizer(model, name="sgd", lr=0.1)', ("model",), ("name", "lr")),
    ProtocolFunction(
        "train_epoch",
        'train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu")',
        ("model", "loader", "optimizer", "loss_fn"),
        ("scheduler", "clip_norm", "device"),
    ),
    ProtocolFunction(
        "evaluate", 'evaluate(model, X, y, loss_fn, *, device="cpu")', ("model", "X", "y", "loss_fn"), ("device",)
    ),
    ProtocolFunction(
        "fit",
        "fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, "
        'device="cpu")',
        ("model", "optimizer", "loader", "loss_fn", "epochs"),
        ("scheduler", "val", "clip_norm", "device"),
    ),
)

BY_NAME = {f.name: f for f in FUNCTIONS}

PROTOCOLS: dict[str, tuple[ProtocolFunction, ...]] = {"v1": FUNCTIONS}
"""Named groups of protocol functions. A track declares the groups its loop files define; a check
declares the group it was written against (``Check.protocol``) and the functions it calls."""


def functions_of(groups) -> dict[str, ProtocolFunction]:
    """The functions of protocol ``groups``, by name (a later group's function replaces an earlier one's)."""
    out: dict[str, ProtocolFunction] = {}
    for group in groups:
        out.update({f.name: f for f in PROTOCOLS[group]})
    return out

# --------------------------------------------------------------------------- group "best"
# The three-class track (tracks/three-classes.toml): v1's loop functions plus two that report the epoch
# that generalised best and hand the model back as it was then.
#
# - ``best_epoch(history)``: ``history`` is a list of dicts as ``fit`` returns them, each with at least
#   ``val_loss``; returns the epoch number (from 1: the row's place in the list plus one) whose
#   ``val_loss`` is lowest, the first of them when several are equal, as a Python int.
# - ``fit_best(model, optimizer, loader, loss_fn, epochs, *, val, ...)``: trains and validates every
#   epoch exactly as ``fit`` does (``val`` is required here) and returns ``(history, best)``: the history
#   ``fit`` would return (``epoch``, ``lr``, ``train_loss``, ``val_loss``, ``val_acc``; plain Python
#   numbers) and ``best == best_epoch(history)``. While training it keeps a real copy of the weights of
#   the best epoch so far (``state_dict()`` alone holds the live tensors, which later epochs overwrite),
#   and before returning it loads that copy into ``model``: the model handed back is the best epoch's,
#   with the validation loss that epoch recorded.

BEST_EPOCH = ProtocolFunction("best_epoch", "best_epoch(history)", ("history",))
FIT_BEST = ProtocolFunction(
    "fit_best",
    'fit_best(model, optimizer, loader, loss_fn, epochs, *, val, scheduler=None, clip_norm=None, device="cpu")',
    ("model", "optimizer", "loader", "loss_fn", "epochs"),
    ("val", "scheduler", "clip_norm", "device"),
)
BEST: tuple[ProtocolFunction, ...] = (BEST_EPOCH, FIT_BEST)
PROTOCOLS["best"] = BEST
