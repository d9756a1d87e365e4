"""Every argument's domain, declared once: what each parameter of each protocol function may plausibly be.

One frozen record per (protocol function, parameter) of every protocol group (``checker.loopfile.protocol``:
v1, pipeline, best), the track-specific parameters included. A domain is wide enough for any course, not only
for this one: learning rates from 1e-5 to 10 for SGD (the lesson's own top value) and to 1 for Adam, batch
sizes from 1 to past any set a check builds, seeds over torch's whole 32-bit range, epochs past the longest run
any script, kata or explorer makes, clip norms from far below to far above the first gradient's norm, and data
sizes (the rows handed to ``make_loader``, ``make_dataset`` and ``evaluate``) from one row to tens of
thousands. The objects handed in are arguments too: their domain is the kinds a project builds (a loader that
drops its last batch, one with a sampler over part of the set, one with batches of unequal sizes).

Each domain also lists the values the lesson, the track files, the katas' stories and the explorer use, with
where they come from (``Use``); the argument classes (``checker.setting.coverage``) cover both ends of every
domain, every decade between and every such value, and a failure names the edge it fell on. ``thresholds``
gives the points a boundary bug (a clamp, a floor, a behaviour switched on past some size) may sit at, spread
over the domain: the boundary mutants (``checker.catalogue``) place their thresholds there.

``python -m checker.setting.domains --markdown`` prints the table of ``docs/checks.md`` (a test keeps the two
equal).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Any

from checker.base.i18n import Message


class Kind(str, Enum):
    INT = "int"
    FLOAT = "float"
    LOG_FLOAT = "log-float"
    """A float that spans decades: covered and thresholded decade by decade."""
    CHOICE = "choice"
    """One of ``choices`` (names, or the kinds of an object handed in)."""
    BOOL = "bool"
    DATA_SIZE = "data-size"
    """A number of rows (of ``X``, of a dataset, of a history): an int, covered decade by decade."""


@dataclass(frozen=True)
class Use:
    """A value the course itself uses, and where (quoted in messages: "the lesson's 'raise the lr to 10'")."""

    value: Any
    where: Message


REQUIRED = "required"
"""``Domain.default`` of a parameter the caller must always pass."""


@dataclass(frozen=True)
class Domain:
    """The plausible values of one parameter of one protocol function.

    ``variant`` splits a parameter whose domain depends on another argument (make_optimizer's ``lr`` per
    ``name``). ``low``/``high`` bound the numeric kinds (both inclusive); ``choices`` lists a choice's values.
    ``default`` is the protocol's default (``REQUIRED``: none). ``uses`` are the course's own values.
    """

    function: str
    parameter: str
    kind: Kind
    low: float | int | None = None
    high: float | int | None = None
    default: Any = REQUIRED
    uses: tuple[Use, ...] = ()
    choices: tuple[Any, ...] = ()
    variant: str | None = None
    groups: tuple[str, ...] = ("v1",)
    """The protocol groups whose function has this parameter."""
    note: Message | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        return self.function, self.parameter, self.variant

    @property
    def numeric(self) -> bool:
        return self.kind in (Kind.INT, Kind.FLOAT, Kind.LOG_FLOAT, Kind.DATA_SIZE)

    @property
    def integral(self) -> bool:
        return self.kind in (Kind.INT, Kind.DATA_SIZE)

    def use_values(self) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(u.value for u in self.uses))

    def contains(self, value) -> bool:
        if self.numeric:
            return value is not None and self.low <= value <= self.high
        if self.kind is Kind.BOOL:
            return isinstance(value, bool)
        return value in self.choices

    def decades(self) -> tuple[float | int, ...]:
        """The powers of ten strictly between ``low`` and ``high`` (for an int domain, the whole ones)."""
        if not self.numeric:
            return ()
        first = math.floor(math.log10(max(self.low, 1e-12))) + 1 if self.low > 0 else 0
        out = []
        for k in range(first, math.ceil(math.log10(self.high)) + 1):
            v = 10**k if k >= 0 else float(f"1e{k}")
            if self.low < v < self.high and (not self.integral or float(v).is_integer()):
                out.append(int(v) if self.integral else float(v))
        return tuple(out)

    def edge(self, value) -> str | None:
        """"low" or "high" when ``value`` is an end of the domain, else None."""
        if not self.numeric or value is None:
            return None
        if math.isclose(value, self.low, rel_tol=1e-9):
            return "low"
        if math.isclose(value, self.high, rel_tol=1e-9):
            return "high"
        return None

    def use_of(self, value) -> Use | None:
        for u in self.uses:
            if u.value == value or (self.numeric and value is not None and isinstance(u.value, int | float)
                                    and math.isclose(u.value, value, rel_tol=1e-9)):
                return u
        return None


# ---------------------------------------------------------------------------- where the course's values come from


def _w(en: str, es: str) -> Message:
    return Message(en=en, es=es)


LESSON_DEFAULT = _w("the protocol's default", "el valor por defecto del protocolo")
EXPLORER_TOP = _w("the lesson's 'raise the lr to 10' (kata explore)",
                  "el «sube la lr a 10» de la lección (kata explore)")
EXPLORER_LR = _w("a learning rate of kata explore's page", "una tasa de aprendizaje de la página de kata explore")
EXPLORER_DEFAULT_LR = _w("kata explore's starting lr", "la lr inicial de kata explore")
KATA_SGD = _w("a kata's story ('--optimizer sgd --lr {v}')", "la historia de una kata («--optimizer sgd --lr {v}»)")
KATA_ADAM = _w("the lesson's final setup (Adam, lr 0.01)", "la configuración final de la lección (Adam, lr 0.01)")
OVERFIT_LR = _w("the tracks' overfit check (lr 0.5)", "la comprobación de sobreajuste de los tracks (lr 0.5)")
KATA_EPOCHS = _w("a kata's story ('--epochs {v}')", "la historia de una kata («--epochs {v}»)")
SCRIPT_EPOCHS = _w("the moons script's run (100 epochs)", "la ejecución del script de las lunas (100 épocas)")
TRACK_EPOCHS = _w("a track's epochs ({v})", "las épocas de un track ({v})")
EXPLORER_EPOCHS = _w("kata explore's 40 epochs", "las 40 épocas de kata explore")
TRACE_EPOCHS = _w("kata trace's 2 epochs", "las 2 épocas de kata trace")
KATA_BATCH = _w("a kata's story ('--batch-size {v}')", "la historia de una kata («--batch-size {v}»)")
EXPLORER_BATCH = _w("kata explore's batches of 16", "los lotes de 16 de kata explore")
TRACE_BATCH = _w("kata trace's batches of 4", "los lotes de 4 de kata trace")
OVERFIT_ROWS = _w("the overfit check's 8 examples", "los 8 ejemplos de la comprobación de sobreajuste")
TRACE_ROWS = _w("kata trace's 6 examples", "los 6 ejemplos de kata trace")
KATA_CLIP = _w("a kata's story ('--clip {v}')", "la historia de una kata («--clip {v}»)")
KATA_SEED = _w("a kata's story ('--seed-model 1')", "la historia de una kata («--seed-model 1»)")
KATA_SCHEDULER = _w("a kata's story ('--scheduler {v}')", "la historia de una kata («--scheduler {v}»)")
TRACK_TRAIN = _w("a track's training set ({v} rows)", "el conjunto de entrenamiento de un track ({v} filas)")
TRACK_VAL = _w("a track's validation set ({v} rows)", "el conjunto de validación de un track ({v} filas)")
EXPLORER_ROWS = _w("kata explore's set ({v} rows)", "el conjunto de kata explore ({v} filas)")
WORKERS_TRACK = _w("the data-pipeline track's loader (2 workers)", "el cargador del track data-pipeline (2 workers)")
WORKERS_DEBUG = _w("the kata 'fine until you debug' (num_workers=0)",
                   "la kata «bien hasta que depuras» (num_workers=0)")


def _uses(note: Message, *values) -> tuple[Use, ...]:
    return tuple(Use(v, Message(en=note.en.format(v=f"{v:g}" if isinstance(v, float) else v),
                                es=note.es.format(v=f"{v:g}" if isinstance(v, float) else v))) for v in values)


def _default(value) -> Use:
    return Use(value, LESSON_DEFAULT)


# ---------------------------------------------------------------------------- the domains

SEED_HIGH = 2**32 - 1
"""torch's CPU generator keeps a seed's low 32 bits; NumPy and scikit-learn take seeds below 2**32."""
ROWS_HIGH = 20_000
"""The most rows a check hands ``evaluate`` (a track's rows repeated): one forward pass, cheap at any size."""
LOADER_ROWS_HIGH = ROWS_HIGH
"""The most rows a check hands ``make_loader`` or ``make_dataset``: tens of thousands, as ``evaluate``'s. A loader
reads its set row by row (about 5 ms a thousand rows on a quiet machine, in the learner's process and the
reference's alike), so the top is one set, in one batch."""
BATCH_HIGH = LOADER_ROWS_HIGH
"""Past every track's set, up to the largest set a loader is handed (``LOADER_ROWS_HIGH``): a batch size clamped
anywhere below shows on that set in one batch."""
EPOCHS_HIGH = 128
"""Past the longest run of the course (the moons script and converge: 100 epochs)."""
LR_LOW = 1e-5
SGD_LR_HIGH = 10.0
ADAM_LR_HIGH = 1.0
CLIP_LOW, CLIP_HIGH = 1e-4, 1e4
"""Far below and far above the first gradient's norm (0.28 to about 3 over the tracks' batches)."""
WORKERS_HIGH = 8
HISTORY_HIGH = EPOCHS_HIGH

LOADER_KINDS = ("kata", "drop-last", "subset-sampler", "unequal-batches")
"""The loaders ``train_epoch`` and ``fit`` are handed: kata's own (shuffled, short last batch kept), one that
drops its last batch, one whose sampler walks part of the set, one whose batches differ in size."""
OPTIMIZERS = ("sgd", "adam")
SCHEDULERS = (None, "step", "cosine")
DEVICES = ("cpu", "cuda")

_SEED_USES = (_default(0), *_uses(KATA_SEED, 1))
_ROWS_USES = (*_uses(TRACK_TRAIN, 150, 240, 225), *_uses(TRACK_VAL, 50, 60, 75), *_uses(EXPLORER_ROWS, 120),
              Use(8, OVERFIT_ROWS), Use(6, TRACE_ROWS))


def _seed(function: str, groups=("v1", "pipeline")) -> Domain:
    return Domain(function, "seed", Kind.INT, 0, SEED_HIGH, 0, _SEED_USES, groups=groups)


def _rows(function: str, parameter: str, groups=("v1", "pipeline")) -> Domain:
    high = ROWS_HIGH if function == "evaluate" else LOADER_ROWS_HIGH
    return Domain(function, parameter, Kind.DATA_SIZE, 1, high, REQUIRED, _ROWS_USES, groups=groups,
                  note=_w("rows handed in", "filas recibidas"))


def _choice(function, parameter, choices, default=REQUIRED, uses=(), groups=("v1", "pipeline", "best")) -> Domain:
    return Domain(function, parameter, Kind.CHOICE, default=default, choices=tuple(choices), uses=tuple(uses),
                  groups=groups)


_V1 = ("v1", "pipeline")  # the v1 functions the pipeline group shares
_TRAINERS = ("train_epoch", "fit", "fit_best")

_BATCH_USES = (_default(32), *_uses(KATA_BATCH, 150, 8, 4, 140, 100), Use(16, EXPLORER_BATCH), Use(4, TRACE_BATCH))
_EPOCH_USES = (*_uses(KATA_EPOCHS, 10, 30, 50, 12, 20, 2), *_uses(TRACK_EPOCHS, 30, 50), Use(100, SCRIPT_EPOCHS),
               Use(40, EXPLORER_EPOCHS), Use(2, TRACE_EPOCHS))
_SGD_USES = (_default(0.1), *_uses(KATA_SGD, 0.01, 1.0, 3.0, 0.5), Use(10.0, EXPLORER_TOP),
             *_uses(EXPLORER_LR, 0.03, 0.3), Use(0.3, EXPLORER_DEFAULT_LR), Use(0.5, OVERFIT_LR))
_ADAM_USES = (Use(0.01, KATA_ADAM),)
_CLIP_USES = (_default(None), *_uses(KATA_CLIP, 0.1, 0.05))


def _trainer_domains(function: str, groups) -> tuple[Domain, ...]:
    positional = (
        _choice(function, "model", ("track model",), groups=groups),
        _choice(function, "loader", LOADER_KINDS, uses=(Use("kata", LESSON_DEFAULT),), groups=groups),
        _choice(function, "optimizer", OPTIMIZERS, uses=(Use("sgd", LESSON_DEFAULT), Use("adam", KATA_ADAM)),
                groups=groups),
        _choice(function, "loss_fn", ("cross-entropy",), groups=groups),
    )
    epochs = () if function == "train_epoch" else (
        Domain(function, "epochs", Kind.INT, 1, EPOCHS_HIGH, REQUIRED, _EPOCH_USES, groups=groups),)
    val = () if function == "train_epoch" else (
        _choice(function, "val", (None, "given") if function == "fit" else ("given",),
                default=None if function == "fit" else REQUIRED, groups=groups),)
    return (*positional, *epochs, *val,
            _choice(function, "scheduler", SCHEDULERS, default=None,
                    uses=tuple(Use(s, KATA_SCHEDULER) for s in ("step", "cosine")), groups=groups),
            Domain(function, "clip_norm", Kind.LOG_FLOAT, CLIP_LOW, CLIP_HIGH, None, _CLIP_USES, groups=groups),
            _choice(function, "device", DEVICES, default="cpu", groups=groups))


DOMAINS: tuple[Domain, ...] = (
    _seed("seed_everything"),
    _seed("make_data"),
    # make_loader: v1's (X, y) and the pipeline's (dataset); both take batch_size and seed
    _rows("make_loader", "X", ("v1",)),
    _rows("make_loader", "y", ("v1",)),
    _rows("make_loader", "dataset", ("pipeline",)),
    Domain("make_loader", "batch_size", Kind.INT, 1, BATCH_HIGH, 32, _BATCH_USES, groups=_V1),
    _seed("make_loader"),
    Domain("make_loader", "num_workers", Kind.INT, 0, WORKERS_HIGH, 2,
           (Use(2, WORKERS_TRACK), Use(0, WORKERS_DEBUG)), groups=("pipeline",)),
    _rows("make_dataset", "X", ("pipeline",)),
    _rows("make_dataset", "y", ("pipeline",)),
    Domain("make_dataset", "augment", Kind.BOOL, default=True, choices=(True, False),
           uses=(_default(True), Use(False, _w("validation rows, as stored", "las filas de validación, tal cual"))),
           groups=("pipeline",)),
    _seed("make_model"),
    _choice("make_optimizer", "model", ("track model",), groups=_V1),
    _choice("make_optimizer", "name", OPTIMIZERS, default="sgd", uses=(_default("sgd"), Use("adam", KATA_ADAM)),
            groups=_V1),
    Domain("make_optimizer", "lr", Kind.LOG_FLOAT, LR_LOW, SGD_LR_HIGH, 0.1, _SGD_USES, variant="sgd", groups=_V1),
    Domain("make_optimizer", "lr", Kind.LOG_FLOAT, LR_LOW, ADAM_LR_HIGH, 0.1, _ADAM_USES, variant="adam", groups=_V1),
    *_trainer_domains("train_epoch", _V1),
    _choice("evaluate", "model", ("track model",), groups=_V1),
    _rows("evaluate", "X"),
    _rows("evaluate", "y"),
    _choice("evaluate", "loss_fn", ("cross-entropy",), groups=_V1),
    _choice("evaluate", "device", DEVICES, default="cpu", groups=_V1),
    *_trainer_domains("fit", _V1),
    Domain("best_epoch", "history", Kind.DATA_SIZE, 1, HISTORY_HIGH, REQUIRED, _EPOCH_USES, groups=("best",),
           note=_w("epochs in the history", "épocas en el historial")),
    *_trainer_domains("fit_best", ("best",)),
)

BY_KEY: dict[tuple[str, str, str | None], Domain] = {d.key: d for d in DOMAINS}


def domain_of(function: str, parameter: str, variant: str | None = None) -> Domain:
    """The domain of ``function``'s ``parameter`` (make_optimizer's ``lr``: ``variant`` "sgd", the default
    name, or "adam"). KeyError when the protocol has no such parameter."""
    if (function, parameter, variant) in BY_KEY:
        return BY_KEY[function, parameter, variant]
    for d in DOMAINS:
        if d.function == function and d.parameter == parameter and variant is None:
            return d
    raise KeyError(f"no domain for {function}({parameter}{'' if variant is None else ', ' + variant})")


def domains_of(function: str) -> tuple[Domain, ...]:
    return tuple(d for d in DOMAINS if d.function == function)


def thresholds(domain: Domain) -> tuple[float | int, ...]:
    """Points strictly inside ``domain`` where a boundary bug (``min(x, T)``, ``max(x, T)``, the first T rows,
    a behaviour switched on past T) may sit, spread over it: just inside both ends, every decade, the geometric
    middle of every decade (3·10^k), and every value the course uses that lies strictly inside. Sorted, each once;
    empty for a choice or a bool. A clamp at any of them changes what a call at one end of the domain gets."""
    if not domain.numeric:
        return ()
    low, high = domain.low, domain.high
    if domain.integral:
        points = {low + 1, high - 1}
        points |= set(domain.decades())
        points |= {3 * d for d in domain.decades() if 3 * d < high}
        if low == 0:
            points |= {1, 2}
        points |= {v for v in domain.use_values() if isinstance(v, int) and low < v < high}
        return tuple(sorted(p for p in points if low < p < high))
    points = {float(f"{low * 2:.3g}"), float(f"{high / 2:.3g}")}
    points |= set(domain.decades())
    points |= {float(f"{3 * d:.3g}") for d in (low, *domain.decades()) if 3 * d < high}
    points |= {float(v) for v in domain.use_values() if isinstance(v, int | float) and low < v < high}
    return tuple(sorted(p for p in points if low < p < high))


# ---------------------------------------------------------------------------- the table of docs/checks.md

TABLE_BEGIN = "<!-- domains: generated by `python -m checker.setting.domains --markdown`; do not edit -->"
TABLE_END = "<!-- end of domains -->"


def _fmt(value) -> str:
    if value is REQUIRED or value == REQUIRED:
        return "required"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and value >= 2**16:
        return f"2^{round(math.log2(value + 1))} − 1" if (value + 1) & value == 0 else f"{value:,}"
    return repr(value) if isinstance(value, str) or value is None else str(value)


def markdown() -> str:
    """The table of every domain, as ``docs/checks.md`` holds it between ``TABLE_BEGIN`` and ``TABLE_END``."""
    lines = [TABLE_BEGIN, "",
             "| function | parameter | groups | kind | domain | default | the course uses |",
             "|---|---|---|---|---|---|---|"]
    for d in DOMAINS:
        name = d.parameter if d.variant is None else f"{d.parameter} ({d.variant})"
        span = f"{_fmt(d.low)} .. {_fmt(d.high)}" if d.numeric else ", ".join(_fmt(c) for c in d.choices)
        uses = ", ".join(_fmt(v) for v in d.use_values() if v is not None and v != d.default) or "—"
        lines.append(f"| `{d.function}` | `{name}` | {', '.join(d.groups)} | {d.kind.value} | {span} "
                     f"| {_fmt(d.default)} | {uses} |")
    return "\n".join([*lines, "", TABLE_END]) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["--markdown"]:
        print("usage: python -m checker.setting.domains --markdown", file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
