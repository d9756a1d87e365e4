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


# --------------------------------------------------------------------------- protocol group "pipeline"
# The data-pipeline track (tracks/data-pipeline.toml): the v1 loop, fed by a Dataset and a loader with
# worker processes. Its loop files define v1's seed_everything, make_data, make_model, make_optimizer,
# train_epoch, evaluate and fit (the same calls, so the v1 checks of those run on the track too), and
# two data functions of their own:
#
# - ``make_dataset(X, y, *, augment=True)``: a ``torch.utils.data.Dataset`` over the rows of ``X`` and
#   labels ``y``. ``len(dataset) == len(X)``; ``dataset[i]`` is ``(features, label)`` of row ``i``. With
#   ``augment=True`` the features get a small random jitter drawn at every ``__getitem__`` call from
#   NumPy's global generator (``np.random``), which is the generator of whichever process runs it: the
#   main process with ``num_workers=0``, each DataLoader worker otherwise. With ``augment=False`` the row
#   comes back exactly as stored.
# - ``make_loader(dataset, batch_size=32, seed=0, *, num_workers=2)``: a shuffled ``DataLoader`` over
#   ``dataset`` (any Dataset: the checks pass their own instrumented ones). The order and the workers'
#   random streams depend on ``seed`` alone (a private ``torch.Generator``: PyTorch 2.x seeds each
#   worker's torch, ``random`` and NumPy from one draw of it plus the worker id, so workers differ from
#   each other and runs with one seed repeat); a new order every epoch; ``drop_last=True``, so no batch
#   is short (a last batch of one makes BatchNorm fail in training mode); ``persistent_workers`` when
#   there are workers (they are forked once, not every epoch); ``pin_memory`` only where CUDA exists.
#   A ``worker_init_fn`` is optional; one that reseeds NumPy must keep the workers' streams apart and
#   tied to ``seed``.
#
# The track's model has BatchNorm1d and Dropout, so train and eval mode matter in both directions:
# validation in training mode updates BatchNorm's running statistics, training left in eval mode stops.

PIPELINE_DATASET = ProtocolFunction("make_dataset", "make_dataset(X, y, *, augment=True)", ("X", "y"), ("augment",))
PIPELINE_LOADER = ProtocolFunction(
    "make_loader", "make_loader(dataset, batch_size=32, seed=0, *, num_workers=2)", ("dataset",),
    ("batch_size", "seed", "num_workers"),
)
PIPELINE: tuple[ProtocolFunction, ...] = (
    BY_NAME["seed_everything"], BY_NAME["make_data"], PIPELINE_DATASET, PIPELINE_LOADER, BY_NAME["make_model"],
    BY_NAME["make_optimizer"], BY_NAME["train_epoch"], BY_NAME["evaluate"], BY_NAME["fit"],
)
PROTOCOLS["pipeline"] = PIPELINE

# --------------------------------------------------------------------------- group "best"
# The three-class track (tracks/three-classes.toml): v1's loop functions plus two that report the epoch
# that generalised best and hand the model back as it was then.
#
# - ``best_epoch(history)``: ``history`` is a list of dicts as ``fit`` returns them, each with at least
#   ``val_loss``; returns the epoch number (from 1: the row's place in the list plus one) whose
#   ``val_loss`` is lowest, the first of them when several are equal, as a Python int (``type(best) is
#   int``: a NumPy integer such as ``np.argmin(...) + 1`` is not one, and best.best_epoch fails it by name;
#   ``int(...)`` converts it). ``fit_best``'s ``best`` is the same Python int.
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
