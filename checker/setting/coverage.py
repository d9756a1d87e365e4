"""Argument classes: what a plausible bug in a protocol function could condition on, covered on every run.

A bug that shows at part of the argument space (a ``drop_last`` that depends on the remainder, a
``min(batch_size, 64)``, a default changed) passes a check that draws one argument per run most of the
time. So each differential check calls its function once per *class* of arguments, every run, with a
value drawn fresh inside the class (from the draw's generator). Every case carries its class (``kind``)
and the figures that make it readable, so a failure can name the simplest case that shows it and a
passing case for contrast ("batch 16: 150 = 9·16 + 6, last batch under half"; at batch 32 it matches).

The classes, per function (``docs/checks.md`` has the table):

- batch sizes over ``n`` examples: the default (32), one that divides ``n``, remainder 1, a short last
  batch under half a batch (``r < b // 2``), half a batch (``r`` is ``b // 2`` or ``(b + 1) // 2``), over
  half, 1, the whole set, more than the set, above 64;
- seeds: the default (0), a small one and its neighbour (adjacent seeds), one far away (near 2**31);
- learning rates by decade, per optimizer name (SGD: 1e-4..1e-3, 1e-2..1e-1, 0.1..1, above 1; Adam:
  1e-4..1e-3, 1e-3..1e-2, 1e-2..1e-1), and the defaults (``name="sgd"``, ``lr=0.1``);
- evaluate's rows: 1, under 16, a multiple of 16 and of 32 (chunks split evenly), 64, between two
  multiples of 16, above 64 (rows from the training and validation sets together), thousands (above 4096:
  those rows repeated, past any cap a loop might put on its validation);
- training runs (``train_epoch``/``fit``): both optimizers, a clip norm that binds and one that does
  not, no clip, a batch of 1 where the model allows it, a batch above 64, the whole set, an lr above 1,
  one run at the protocol's defaults, a ``fit`` with more epochs than any plausible patience.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from checker.base.i18n import Message

# ---------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Case:
    """One call's argument and the class it stands for.

    ``kind`` names the class (a key of ``LABELS``); ``value`` is the argument drawn inside it (None: not
    passed, the function's default); ``facts`` are the figures the class's label quotes.
    """

    kind: str
    value: Any
    facts: tuple[tuple[str, Any], ...] = ()
    default: bool = False
    """The call leaves the argument out: the function's documented default applies."""

    @property
    def rank(self) -> tuple:
        """Simplicity, smallest first: defaults, then small and round values."""
        value = self.value if isinstance(self.value, int | float) else 0
        return (not self.default, len(str(int(abs(value)))), not _round(value), abs(value))

    def label(self) -> Message:
        template = LABELS[self.kind]
        facts = dict(self.facts, value=self.value)
        text = Message(en=template.en.format(**facts), es=template.es.format(**facts))
        if self.kind == "batch.above-64":  # also name the remainder class the size falls in
            rest = _REMAINDER[remainder_class(facts["n"], batch_size_of(self))]
            text = Message(en=f"{text.en}, {rest.en}", es=f"{text.es}, {rest.es}")
        elif self.kind.startswith("rows.") and self.kind not in ("rows.above-64", "rows.thousands") \
                and (self.value or 0) > 64:
            text = Message(en=f"{text.en}, above 64", es=f"{text.es}, más de 64")  # the other class it is in
        return text

    def as_dict(self) -> dict:
        return {"kind": self.kind, "value": self.value, "facts": dict(self.facts), "default": self.default}

    @classmethod
    def from_dict(cls, d: dict) -> Case:
        return cls(d["kind"], d["value"], tuple(sorted(d["facts"].items())), d["default"])


def _round(value: float) -> bool:
    """A number a person would pick: 0, a power of two, a multiple of 10, or one significant digit."""
    if value == 0:
        return True
    if float(value).is_integer():
        v = int(abs(value))
        return v & (v - 1) == 0 or v % 10 == 0
    return float(f"{value:.1g}") == value


def simplest(cases: list[Case]) -> list[Case]:
    """``cases`` in order of simplicity (the one a message should name first)."""
    return sorted(cases, key=lambda c: c.rank)


@dataclass(frozen=True)
class TrainCase:
    """One short training run of ``train_epoch`` or ``fit`` and the classes it covers.

    ``defaults`` calls the function with only its required arguments (no scheduler, clip norm, device or
    validation), as the lesson's script does.
    """

    optimizer: str
    lr: float
    batch_size: int
    loader_seed: int
    model_seed: int
    epochs: int
    clip: float | None
    classes: tuple[str, ...]
    defaults: bool = False
    scheduler: str | None = None
    step_size: int = 1
    gamma: float = 0.5
    rows: int | None = None
    """Train on the first ``rows`` training examples only (None: all): a batch of 1 stays cheap."""

    @property
    def rank(self) -> tuple:
        return (not self.defaults, self.epochs, self.batch_size)

    def label(self) -> Message:
        parts = [LABELS[k] for k in self.classes]
        return Message(en=", ".join(p.en for p in parts), es=", ".join(p.es for p in parts))


# ---------------------------------------------------------------------------- labels

LABELS: dict[str, Message] = {
    # batch sizes over n examples
    "batch.default": Message(en="the default batch size (32): {n} = {q}·32 + {r}",
                             es="el tamaño de lote por defecto (32): {n} = {q}·32 + {r}"),
    "batch.divides": Message(en="batch {value}: {n} = {q}·{value}, no short batch",
                             es="lote {value}: {n} = {q}·{value}, sin lote corto"),
    "batch.remainder-1": Message(en="batch {value}: {n} = {q}·{value} + 1, a last batch of one",
                                 es="lote {value}: {n} = {q}·{value} + 1, un último lote de uno"),
    "batch.under-half": Message(en="batch {value}: {n} = {q}·{value} + {r}, last batch under half",
                                es="lote {value}: {n} = {q}·{value} + {r}, último lote por debajo de la mitad"),
    "batch.half": Message(en="batch {value}: {n} = {q}·{value} + {r}, last batch half a batch",
                          es="lote {value}: {n} = {q}·{value} + {r}, último lote de medio lote"),
    "batch.over-half": Message(en="batch {value}: {n} = {q}·{value} + {r}, last batch over half",
                               es="lote {value}: {n} = {q}·{value} + {r}, último lote por encima de la mitad"),
    "batch.one": Message(en="batch 1: one example per batch", es="lote 1: un ejemplo por lote"),
    "batch.whole": Message(en="batch {value}: the whole set in one batch",
                           es="lote {value}: todo el conjunto en un lote"),
    "batch.more": Message(en="batch {value}: more than the {n} examples", es="lote {value}: más que los {n} ejemplos"),
    "batch.above-64": Message(en="batch {value}: above 64 ({n} = {q}·{value} + {r})",
                              es="lote {value}: por encima de 64 ({n} = {q}·{value} + {r})"),
    # seeds
    "seed.default": Message(en="the default seed (0)", es="la semilla por defecto (0)"),
    "seed.small": Message(en="seed {value}, a small one", es="semilla {value}, una pequeña"),
    "seed.adjacent": Message(en="seed {value}, next to seed {other}", es="semilla {value}, vecina de la {other}"),
    "seed.far": Message(en="seed {value}, a far one", es="semilla {value}, una lejana"),
    # optimizer settings
    "opt.defaults": Message(en='the defaults (name="sgd", lr=0.1)', es='los valores por defecto (name="sgd", lr=0.1)'),
    "opt.default-name": Message(en='the default name ("sgd") at lr={value:g}',
                                es='el nombre por defecto ("sgd") con lr={value:g}'),
    "opt.decade": Message(en="{name} at lr={value:g}, in [{low:g}, {high:g})",
                          es="{name} con lr={value:g}, en [{low:g}, {high:g})"),
    # evaluate's rows
    "rows.one": Message(en="1 row", es="1 fila"),
    "rows.few": Message(en="{value} rows, under 16", es="{value} filas, menos de 16"),
    "rows.chunks-32": Message(en="{value} rows, a multiple of 16 and 32", es="{value} filas, múltiplo de 16 y de 32"),
    "rows.chunks-16": Message(en="{value} rows, a multiple of 16, not of 32",
                              es="{value} filas, múltiplo de 16, no de 32"),
    "rows.64": Message(en="64 rows", es="64 filas"),
    "rows.uneven": Message(en="{value} rows, no multiple of 16", es="{value} filas, no múltiplo de 16"),
    "rows.above-64": Message(en="{value} rows, above 64", es="{value} filas, más de 64"),
    "rows.thousands": Message(en="{value} rows, above 4096 (the training and validation rows repeated)",
                              es="{value} filas, más de 4096 (las filas de entrenamiento y validación repetidas)"),
    "eval.defaults": Message(en="the protocol's defaults (no device given)",
                             es="los valores por defecto del protocolo (sin dispositivo)"),
    # training runs
    "train.defaults": Message(en="only the required arguments (the protocol's defaults)",
                              es="solo los argumentos obligatorios (los valores por defecto del protocolo)"),
    "train.sgd": Message(en="SGD", es="SGD"),
    "train.adam": Message(en="Adam", es="Adam"),
    "train.lr-above-1": Message(en="an lr above 1", es="un lr por encima de 1"),
    "train.clip-binds": Message(en="a clip norm that binds", es="una norma de recorte que actúa"),
    "train.clip-loose": Message(en="a clip norm that never binds", es="una norma de recorte que nunca actúa"),
    "train.no-clip": Message(en="no clip norm", es="sin norma de recorte"),
    "train.batch-one": Message(en="batch 1", es="lote 1"),
    "train.batch-above-64": Message(en="a batch above 64", es="un lote por encima de 64"),
    "train.whole": Message(en="the whole set as one batch", es="todo el conjunto como un lote"),
    "train.scheduled": Message(en="a scheduler", es="un planificador"),
    "train.long": Message(en="more epochs than any patience", es="más épocas que cualquier paciencia"),
    "train.device": Message(en="a device given", es="un dispositivo dado"),
}

DEFAULT_BATCH = 32
MAX_SEED = 2**31 - 1


# ---------------------------------------------------------------------------- drawing the cases


def remainder_class(n: int, b: int) -> str:
    """Which remainder class batch size ``b`` falls in over ``n`` examples (a ``batch.*`` kind)."""
    r = n % b
    return ("batch.divides" if r == 0 else "batch.remainder-1" if r == 1
            else "batch.under-half" if r < b // 2 else "batch.half" if r <= (b + 1) // 2 else "batch.over-half")


_REMAINDER = {
    "batch.divides": Message(en="no short batch", es="sin lote corto"),
    "batch.remainder-1": Message(en="a last batch of one", es="un último lote de uno"),
    "batch.under-half": Message(en="last batch under half", es="último lote por debajo de la mitad"),
    "batch.half": Message(en="last batch half a batch", es="último lote de medio lote"),
    "batch.over-half": Message(en="last batch over half", es="último lote por encima de la mitad"),
}


def batch_cases(rng: random.Random, n: int, *, more: bool = True, default: bool = True) -> tuple[Case, ...]:
    """One batch size of every class over ``n`` examples (fresh inside each class)."""
    classes: dict[str, list[int]] = {"batch.divides": [], "batch.remainder-1": [], "batch.under-half": [],
                                     "batch.half": [], "batch.over-half": []}
    for b in range(2, n):
        key = remainder_class(n, b)
        if key == "batch.remainder-1" or b <= min(64, n // 2):
            classes[key].append(b)
    cases = []
    if default:
        cases.append(Case("batch.default", None, (("n", n), ("q", n // DEFAULT_BATCH), ("r", n % DEFAULT_BATCH)),
                          default=True))
    for kind, sizes in classes.items():
        if sizes:
            b = rng.choice(sizes)
            cases.append(Case(kind, b, (("n", n), ("q", n // b), ("r", n % b))))
    cases.append(Case("batch.one", 1))
    cases.append(Case("batch.whole", n, (("n", n),)))
    if more:
        cases.append(Case("batch.more", n + rng.randint(1, 40), (("n", n),)))
    if n > 65:
        b = rng.randrange(65, n)
        cases.append(Case("batch.above-64", b, (("n", n), ("q", n // b), ("r", n % b))))
    return tuple(cases)


def batch_size_of(case: Case) -> int:
    return DEFAULT_BATCH if case.value is None else int(case.value)


def seed_cases(rng: random.Random) -> tuple[Case, ...]:
    """The default seed, a small one and its neighbour, and a far one."""
    small = rng.randint(1, 9)
    return (Case("seed.default", None, default=True), Case("seed.small", small),
            Case("seed.adjacent", small + 1, (("other", small),)),
            Case("seed.far", rng.randrange(2**30, MAX_SEED)))


def seed_of(case: Case) -> int:
    return 0 if case.value is None else int(case.value)


LOW_BITS, DIGITS, FLOAT32 = "seed.low-bits", "seed.digits", "seed.float32"
"""The classes of distinct seeds a seed cut short would confuse (``collision_pairs``)."""
FLOAT32_EXACT = 2**24
"""Above this, a float32 no longer tells neighbouring whole numbers apart."""


def collision_pairs(small: int, far: int) -> tuple[tuple[int, int, str, int], ...]:
    """Distinct seeds that a seed cut short would confuse, as ``(seed, other, class, k)``: ``small`` and
    ``small + 2**k`` for k = 1..20 (only the low k bits kept: ``seed % 2**k``, a mask, a narrow integer type),
    ``small`` and ``small + 10**k`` for k = 1..6 (the last k decimal digits kept), and ``far`` and ``far + 1``,
    both above 2**24 (a seed passed through a float32, which cannot tell them apart). Every other seed stays
    below 2**32: torch's CPU generator itself keeps only a seed's low 32 bits."""
    if far <= FLOAT32_EXACT:
        raise ValueError(f"the far seed must be above 2**24, got {far}")
    pairs = [(small, small + 2**k, LOW_BITS, k) for k in range(1, 21)]
    pairs += [(small, small + 10**k, DIGITS, k) for k in range(1, 7)]
    pairs.append((far, far + 1, FLOAT32, 0))
    return tuple(pairs)


def collision_bases(draw) -> tuple[int, int]:
    """The small and the far seed ``collision_pairs`` starts from: the run's own (``Draw.coverage``'s small and far
    seed classes, fresh every run), else 3 and 2**30 + 12345."""
    cov = getattr(draw, "coverage", None)
    if cov is None:
        return 3, 2**30 + 12345
    by_kind = {c.kind: c.value for c in cov.seeds}
    return int(by_kind["seed.small"]), int(by_kind["seed.far"])


def seed_collisions(first_order, draw, limit: int = 3) -> list[dict]:
    """Which pairs of ``collision_pairs`` get one and the same order from ``first_order(seed)`` (a loader's first
    epoch, as a list of example indices): at most ``limit``, the closest seeds first, each as ``a``, ``b`` (the
    seeds), ``kind``, ``k`` and ``order`` (its first six indices)."""
    orders: dict[int, tuple] = {}

    def order_at(seed: int) -> tuple:
        if seed not in orders:
            orders[seed] = tuple(first_order(seed))
        return orders[seed]

    found = [{"a": a, "b": b, "kind": kind, "k": k, "order": list(order_at(a)[:6])}
             for a, b, kind, k in collision_pairs(*collision_bases(draw)) if order_at(a) == order_at(b)]
    return sorted(found, key=lambda c: c["b"] - c["a"])[:limit]


SGD_DECADES = ((1e-4, 1e-3), (1e-2, 1e-1), (0.1, 1.0), (1.0, 5.0))
ADAM_DECADES = ((1e-4, 1e-3), (1e-3, 1e-2), (1e-2, 1e-1))


def _lr(rng: random.Random, low: float, high: float) -> float:
    """Log-uniform strictly between ``low`` and ``high``, 3 significant digits (readable in messages). Never ``low``
    itself: rounding once gave the class "SGD above 1" an lr of exactly 1, at which ``min(lr, 1)`` is right, and a
    loop that caps its lr at 1 passed that run."""
    value = float(f"{low * (high / low) ** rng.random():.3g}")
    return min(max(value, float(f"{low * 1.01:.3g}")), float(f"{high * 0.995:.3g}"))


def optimizer_cases(rng: random.Random) -> tuple[Case, ...]:
    """make_optimizer at its defaults, at the default name, and per name at one lr of each decade."""
    cases = [Case("opt.defaults", None, (("name", "sgd"),), default=True),
             Case("opt.default-name", _lr(rng, 1e-3, 1e-2), (("name", "sgd"),), default=True)]
    for name, decades in (("sgd", SGD_DECADES), ("adam", ADAM_DECADES)):
        for low, high in decades:
            cases.append(Case("opt.decade", _lr(rng, low, high), (("name", name), ("low", low), ("high", high))))
    return tuple(cases)


def rows_cases(rng: random.Random, n_rows: int) -> tuple[Case, ...]:
    """Row counts for evaluate, up to ``n_rows`` (training and validation rows together)."""
    cases = [Case("rows.one", 1), Case("rows.few", rng.randint(2, 15))]
    cases.append(Case("rows.chunks-32", rng.choice([b for b in (32, 96, 128) if b <= n_rows])))
    cases.append(Case("rows.chunks-16", rng.choice([b for b in (16, 48, 80, 112) if b <= n_rows])))
    cases.append(Case("rows.64", 64))
    cases.append(Case("rows.uneven", rng.choice([b for b in range(17, 64) if b % 16])))
    if n_rows > 65:
        cases.append(Case("rows.above-64", rng.choice([b for b in range(65, n_rows + 1) if b % 16])))
    # a cap on the rows evaluated (256, 1000, 1024, 4096, ...) shows only past it
    cases.append(Case("rows.thousands", rng.choice([b for b in range(4097, 8192) if b % 16])))
    return tuple(cases)


@dataclass(frozen=True)
class Coverage:
    """Every class's case for one run, drawn together (see ``Draw.coverage``)."""

    loader: tuple[Case, ...]
    seeds: tuple[Case, ...]
    optimizers: tuple[Case, ...]
    rows: tuple[Case, ...]
    train: tuple[TrainCase, ...]
    fit: tuple[TrainCase, ...]


def train_cases(rng: random.Random, n: int, *, batchnorm: bool,
                seed) -> tuple[tuple[TrainCase, ...], tuple[TrainCase, ...]]:
    """A few short runs that together cover every class of ``train_epoch`` and ``fit``."""

    def leaves_one(b: int) -> bool:
        return batchnorm and n % b == 1

    def size(choices) -> int:
        fit = [b for b in choices if not leaves_one(b)]
        return rng.choice(fit or [n])

    big = size(range(65, n)) if n > 65 else n
    train = (
        TrainCase("sgd", 0.1, DEFAULT_BATCH if not leaves_one(DEFAULT_BATCH) else size(range(20, 40)),
                  seed(), seed(), 1, None, ("train.defaults", "train.sgd", "train.no-clip"), defaults=True),
        TrainCase("adam", _lr(rng, 1e-3, 5e-2), size(range(6, 25)), seed(), seed(), 1,
                  float(f"{rng.uniform(0.01, 0.1):.2f}"), ("train.adam", "train.clip-binds", "train.device")),
        TrainCase("sgd", _lr(rng, 1.0, 3.0), big, seed(), seed(), 1, float(rng.randint(1000, 5000)),
                  ("train.sgd", "train.lr-above-1", "train.clip-loose", "train.batch-above-64", "train.device")),
    )
    if not batchnorm:  # BatchNorm cannot train on a batch of one
        train += (TrainCase("sgd", _lr(rng, 1e-2, 1e-1), 1, seed(), seed(), 1, None,
                            ("train.sgd", "train.batch-one", "train.no-clip", "train.device"),
                            rows=rng.randint(24, 40)),)
    fit = (
        TrainCase("sgd", 0.1, n, seed(), seed(), rng.randint(2, 3), None, ("train.defaults", "train.whole"),
                  defaults=True),
        # a clip that binds here too (the whole set's gradient at the start has norm 0.28 or more on every
        # track): a fit that handles clip_norm itself, or only passes some values on, shows
        TrainCase("sgd", _lr(rng, 0.05, 0.5), n, seed(), seed(), rng.randint(21, 26),
                  float(f"{rng.uniform(0.12, 0.25):.2f}"), ("train.long", "train.whole", "train.clip-binds",
                                                           "train.device")),
    )
    return train, fit


def draw(rng: random.Random, track) -> Coverage:
    """Every class's case for ``track``, drawn from ``rng`` (deterministic given ``rng``)."""
    n_train, n_val = track.data.n_train, track.data.n_val

    def seed() -> int:
        return rng.randrange(1, MAX_SEED)

    loader = batch_cases(rng, n_train)
    seeds = seed_cases(rng)
    optimizers = optimizer_cases(rng)
    rows = rows_cases(rng, n_train + n_val)
    train, fit = train_cases(rng, n_train, batchnorm=track.model.batchnorm, seed=seed)
    return Coverage(loader=loader, seeds=seeds, optimizers=optimizers, rows=rows, train=train, fit=fit)
