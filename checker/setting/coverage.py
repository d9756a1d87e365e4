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
  those rows repeated, past any cap a loop might put on its validation); and the count of right answers over
  its own domain: every row predicted right on 2**k + 1 rows for every k up to the top, and on the top's rows,
  and every row but one right at the top (a count kept in a narrow float rounds first just past a power of two);
- training runs (``train_epoch``/``fit``): both optimizers, a clip norm that binds and one that does
  not, no clip, a batch of 1 where the model allows it, a batch above 64, the whole set, an lr above 1,
  one run at the protocol's defaults, a ``fit`` with more epochs than any plausible patience.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from checker.base.i18n import Message
from checker.setting.domains import BATCH_HIGH, Domain, domain_of

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
        """Simplicity, smallest first: defaults, then the domain's own points (an end, a value the course uses),
        then small and round values."""
        value = self.value if isinstance(self.value, int | float) else 0
        facts = dict(self.facts)
        point = "edge" in facts or "where_en" in facts or self.kind.endswith(".point")
        return (not self.default, not point, len(str(int(abs(value)))), not _round(value), abs(value))

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
        return _marked(text, facts)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "value": self.value, "facts": dict(self.facts), "default": self.default}

    @classmethod
    def from_dict(cls, d: dict) -> Case:
        return cls(d["kind"], d["value"], tuple(sorted(d["facts"].items())), d["default"])


EDGES = {"low": Message(en="the bottom of its domain", es="el mínimo de su dominio"),
         "high": Message(en="the top of its domain", es="el máximo de su dominio")}


def marks(domain: Domain, value) -> tuple[tuple[str, Any], ...]:
    """The facts that place ``value`` in ``domain``: ``edge`` ("low"/"high") at an end, ``where_en``/``where_es``
    where the course itself uses the value (a label then says so: "the top of its domain: the lesson's ...")."""
    out: list[tuple[str, Any]] = []
    if domain.edge(value):
        out.append(("edge", domain.edge(value)))
    use = domain.use_of(value) if value is not None else None
    if use is not None:
        out += [("where_en", use.where.en), ("where_es", use.where.es)]
    return tuple(out)


def _marked(text: Message, facts: dict) -> Message:
    en, es = text.en, text.es
    if facts.get("edge") in EDGES:
        en, es = f"{en}, {EDGES[facts['edge']].en}", f"{es}, {EDGES[facts['edge']].es}"
    if facts.get("where_en"):
        en, es = f"{en}: {facts['where_en']}", f"{es}: {facts['where_es']}"
    return Message(en=en, es=es)


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
    repeat: int | None = None
    """The training rows repeated to this many (``BIG_ROWS``: a big loader, past every threshold a loop might put on
    the rows it trains on); None: the set's own rows."""
    loss_scale: float | None = None
    """The loss handed in, times this (None: as it is): a gradient norm past the clip norm's top, so a clip of 1e4
    binds."""
    val_repeat: bool = False
    """``fit``'s validation set past ``BIG_ROWS`` rows: the validation rows repeated, then training rows at its end
    (so a loop that validates on only its first rows, anywhere below, reports other figures)."""
    loader: str = "kata"
    """Which kind of loader the run is handed (``checker.setting.domains.LOADER_KINDS``): kata's own (a short last
    batch kept), one that drops its last batch, one whose sampler walks part of the set, one whose batches differ in
    size."""

    @property
    def rank(self) -> tuple:
        """Simplicity: the defaults first, a run under a scaled loss last (its figures read least plainly)."""
        return (not self.defaults, self.loss_scale is not None, self.epochs, self.batch_size)

    def label(self) -> Message:
        parts = [LABELS[k] for k in self.classes]
        facts = {"epochs": self.epochs, "clip": self.clip, "lr": self.lr, "scale": self.loss_scale,
                 "batch": self.batch_size}
        text = Message(en=", ".join(p.en.format(**facts) for p in parts),
                       es=", ".join(p.es.format(**facts) for p in parts))
        if CLIP_POINT in self.classes:  # name the domain's edge, or the course's use, the clip norm sits at
            return _marked(text, dict(marks(domain_of("train_epoch", "clip_norm"), self.clip)))
        if LR_POINT in self.classes:  # the edge of make_optimizer's lr domain, or the course's use, the lr sits at
            return _marked(text, dict(marks(domain_of("make_optimizer", "lr", self.optimizer), self.lr)))
        return text


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
    "batch.top": Message(en="batch {value}: more than the {n} examples", es="lote {value}: más que los {n} ejemplos"),
    "loader.rows": Message(en="a set of {value} row(s) in batches of {b}",
                           es="un conjunto de {value} fila(s) en lotes de {b}"),
    "batch.above-64": Message(en="batch {value}: above 64 ({n} = {q}·{value} + {r})",
                              es="lote {value}: por encima de 64 ({n} = {q}·{value} + {r})"),
    # seeds
    "seed.default": Message(en="the default seed (0)", es="la semilla por defecto (0)"),
    "seed.small": Message(en="seed {value}, a small one", es="semilla {value}, una pequeña"),
    "seed.adjacent": Message(en="seed {value}, next to seed {other}", es="semilla {value}, vecina de la {other}"),
    "seed.far": Message(en="seed {value}, a far one", es="semilla {value}, una lejana"),
    "seed.point": Message(en="seed {value}", es="semilla {value}"),
    # optimizer settings
    "opt.defaults": Message(en='the defaults (name="sgd", lr=0.1)', es='los valores por defecto (name="sgd", lr=0.1)'),
    "opt.default-name": Message(en='the default name ("sgd") at lr={value:g}',
                                es='el nombre por defecto ("sgd") con lr={value:g}'),
    "opt.point": Message(en="{name} at lr={value:g}", es="{name} con lr={value:g}"),
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
    "rows.point": Message(en="{value} rows", es="{value} filas"),
    "rows.all-right": Message(en="{value} rows, every one predicted right", es="{value} filas, todas acertadas"),
    "rows.all-but-one": Message(en="{value} rows, every one but the last predicted right",
                                es="{value} filas, todas acertadas menos la última"),
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
    "train.clip-loose": Message(en="a clip norm that never binds (1e4, the top of its domain)",
                                es="una norma de recorte que nunca actúa (1e4, el máximo de su dominio)"),
    "train.no-clip": Message(en="no clip norm", es="sin norma de recorte"),
    "train.batch-one": Message(en="batch 1", es="lote 1"),
    "train.batch-above-64": Message(en="a batch above 64", es="un lote por encima de 64"),
    "train.whole": Message(en="the whole set as one batch", es="todo el conjunto como un lote"),
    "train.scheduled": Message(en="a scheduler", es="un planificador"),
    "train.long": Message(en="more epochs than any patience", es="más épocas que cualquier paciencia"),
    "train.device": Message(en="a device given", es="un dispositivo dado"),
    "train.drop-last": Message(en="a loader that drops its last batch", es="un cargador que descarta su último lote"),
    "train.subset": Message(en="a loader whose sampler walks part of the set",
                            es="un cargador cuyo muestreador recorre parte del conjunto"),
    "train.unequal": Message(en="batches of unequal sizes", es="lotes de tamaños desiguales"),
    "train.clip-bottom": Message(en="a clip norm at the bottom of its domain (1e-4)",
                                 es="una norma de recorte en el mínimo de su dominio (1e-4)"),
    "train.one-epoch": Message(en="a single epoch, the bottom of the epochs' domain",
                               es="una sola época, el mínimo del dominio de las épocas"),
    "train.epochs-top": Message(en="{epochs} epochs, the top of the epochs' domain",
                                es="{epochs} épocas, el máximo del dominio de las épocas"),
    "train.batch-top": Message(en="one batch of {batch} rows (the top of the batch-size domain), the loss times "
                               "{scale:g}", es="un solo lote de {batch} filas (el máximo del dominio del tamaño de "
                               "lote), la pérdida por {scale:g}"),
    "train.batch-prime": Message(en="one batch of {batch} rows (a prime just under the top: cut in chunks of any size "
                                 "it leaves a short one), the loss times {scale:g}",
                                 es="un solo lote de {batch} filas (un primo justo por debajo del máximo: cortado en "
                                 "trozos de cualquier tamaño deja uno corto), la pérdida por {scale:g}"),
    "train.big-set": Message(en="a loader of 20,480 rows (the training rows repeated) in batches of 1,024",
                             es="un cargador de 20.480 filas (las de entrenamiento repetidas) en lotes de 1.024"),
    "train.big-val": Message(en="a validation set of 21,504 rows (its rows repeated, training rows at the end)",
                             es="un conjunto de validación de 21.504 filas (sus filas repetidas, filas de "
                             "entrenamiento al final)"),
    "train.clip-point": Message(en="clip_norm={clip:g}, binding (the loss times {scale:g}, lr {lr:g})",
                                es="clip_norm={clip:g}, que actúa (la pérdida por {scale:g}, lr {lr:g})"),
    "train.lr-point": Message(en="an optimizer at lr={lr:g}", es="un optimizador con lr={lr:g}"),
    "train.step": Message(en="a StepLR scheduler", es="un planificador StepLR"),
    "train.cosine": Message(en="a cosine scheduler", es="un planificador coseno"),
}

DEFAULT_BATCH = 32
BIG_ROWS, BIG_BATCH, BIG_VAL_TAIL = 20_480, 1_024, 1_024
"""The big runs' sizes: a loader of ``BIG_ROWS`` rows (past the data-size domain's top, 20,000) in batches of
``BIG_BATCH`` (20 steps: cheap); a validation set of ``BIG_ROWS`` rows plus ``BIG_VAL_TAIL`` training rows."""
BATCH_TOP, BATCH_PRIME, BATCH_LR, BATCH_SCALE = BATCH_HIGH, 19_997, 1.0, 1e3
BIG_BATCHES = (BATCH_TOP, BATCH_PRIME)
"""The big batches train_epoch, fit and fit_best are handed (``big_batch_cases``): the batch-size domain's top
(``domains.BATCH_HIGH``) and a prime just under it (20,000 cut in chunks of 10,000 or 5,000 gives equal chunks, so
a batch handled in chunks of those sizes, their means averaged unweighted, would still train right there; a prime
cut in chunks of any size leaves a short one). One SGD step each, at lr ``BATCH_LR`` under the loss times
``BATCH_SCALE``: the step outweighs the initial weights, so a gradient off by a part in a thousand shows in them."""
MAX_SEED = 2**31 - 1
CLIP_POINT = "train.clip-point"
LR_POINT = "train.lr-point"
LR_ROWS, LR_BATCH = 16, 4
"""The optimizer's lr sweep (``lr_cases``): one epoch over the first ``LR_ROWS`` training rows in batches of
``LR_BATCH`` (four steps: at Adam's lr 1e-5 the weights move 4e-5, past the weights' tolerance)."""
CLIP_SCALE, CLIP_STEP, CLIP_ROWS = 1e5, 0.1, 32
"""The clip-norm sweep (``clip_cases``): the loss times ``CLIP_SCALE`` puts every batch's gradient norm past the
clip domain's top (the first gradient's norm is 0.28 or more on every track: 2.8e4 scaled), so every clip norm of
the domain binds; SGD at lr ``CLIP_STEP``/clip moves the weights by about ``CLIP_STEP`` a step at every clip; one
epoch over the first ``CLIP_ROWS`` training rows (two batches of 32) keeps each run cheap."""


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


def batch_cases(rng: random.Random, n: int, *, more: bool = True, default: bool = True,
                domain_points: bool = False) -> tuple[Case, ...]:
    """One batch size of every class over ``n`` examples (fresh inside each class); with ``domain_points``, also
    every point of the batch-size domain below ``n`` (each power of ten, the course's sizes) and its top."""
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
    if domain_points:
        domain = domain_of("make_loader", "batch_size")
        for b in points(domain):
            if 1 < b < n:
                cases.append(Case(remainder_class(n, b), b, (("n", n), ("q", n // b), ("r", n % b),
                                                             *marks(domain, b))))
        if more:
            cases.append(Case("batch.top", domain.high, (("n", n), *marks(domain, domain.high))))
    return tuple(cases)


def loader_rows_cases(rng: random.Random) -> tuple[Case, ...]:
    """make_loader over sets of other sizes than the track's (its rows repeated): one row; every power of ten of
    the data-size domain with a fresh size inside each decade below 1000, each in batches a tenth its size (the
    default under 32 rows); and the domain's top in a single batch (the batch-size domain's top), past every
    threshold on the rows or the batch size a loop may hide."""
    rows_domain, batch_domain = domain_of("make_loader", "X"), domain_of("make_loader", "batch_size")
    sizes = [1, *(v for v in rows_domain.decades() if v <= 1000)]
    sizes += [rng.randrange(low, high) for low, high in ((2, 10), (11, 100), (101, 1000))]
    cases = [Case("loader.rows", r, (("b", DEFAULT_BATCH if r < 32 else r // 10), *marks(rows_domain, r)))
             for r in sorted(sizes)]
    top = rows_domain.high
    cases.append(Case("loader.rows", top, (("b", batch_domain.high), *marks(rows_domain, top))))
    return tuple(cases)


def batch_size_of(case: Case) -> int:
    return DEFAULT_BATCH if case.value is None else int(case.value)


def seed_cases(rng: random.Random) -> tuple[Case, ...]:
    """The default seed, a small one and its neighbour, a far one; and the domain's points
    (``checker.setting.domains``): 0 passed explicitly, every power of ten, the top (2**32 - 1) and the course's
    own seeds."""
    small = rng.randint(1, 9)
    cases = [Case("seed.default", None, default=True), Case("seed.small", small),
             Case("seed.adjacent", small + 1, (("other", small),)),
             Case("seed.far", rng.randrange(2**30, MAX_SEED))]
    domain = domain_of("make_model", "seed")
    for value in points(domain):
        cases.append(Case("seed.point", value, marks(domain, value)))
    return tuple(cases)


def points(domain: Domain) -> tuple:
    """The values every run calls a numeric domain at: both ends, every power of ten between, and every value the
    course uses (``checker.setting.domains``)."""
    values = {domain.low, domain.high, *domain.decades(),
              *(v for v in domain.use_values() if isinstance(v, int | float) and not isinstance(v, bool))}
    return tuple(sorted(values))


def seed_of(case: Case) -> int:
    return 0 if case.value is None else int(case.value)


LOW_BITS, DIGITS, FLOAT32, TOP = "seed.low-bits", "seed.digits", "seed.float32", "seed.top"
"""The classes of distinct seeds a seed cut short would confuse (``collision_pairs``)."""
FLOAT32_EXACT = 2**24
"""Above this, a float32 no longer tells neighbouring whole numbers apart."""
SEED_TOP = 2**32 - 1
"""The top of the seed domain (``checker.setting.domains``): a seed clamped anywhere below it confuses it with its
neighbour."""


def collision_pairs(small: int, far: int) -> tuple[tuple[int, int, str, int], ...]:
    """Distinct seeds that a seed cut short would confuse, as ``(seed, other, class, k)``: ``small`` and
    ``small + 2**k`` for k = 1..20 (only the low k bits kept: ``seed % 2**k``, a mask, a narrow integer type),
    ``small`` and ``small + 10**k`` for k = 1..6 (the last k decimal digits kept), and ``far`` and ``far + 1``,
    both above 2**24 (a seed passed through a float32, which cannot tell them apart), and the top of the seed
    domain with its neighbour (a seed clamped anywhere below). No seed goes past 2**32 - 1: torch's CPU generator
    itself keeps only a seed's low 32 bits."""
    if far <= FLOAT32_EXACT:
        raise ValueError(f"the far seed must be above 2**24, got {far}")
    pairs = [(small, small + 2**k, LOW_BITS, k) for k in range(1, 21)]
    pairs += [(small, small + 10**k, DIGITS, k) for k in range(1, 7)]
    pairs.append((far, far + 1, FLOAT32, 0))
    pairs.append((SEED_TOP - 1, SEED_TOP, TOP, 0))
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


def decade_classes(domain: Domain) -> tuple[tuple[float, float], ...]:
    """``domain``'s classes, decade by decade: [low, 10^k), [10^k, 10^(k+1)), ..., [10^m, high]."""
    edges = (domain.low, *domain.decades(), domain.high)
    return tuple(zip(edges[:-1], edges[1:], strict=True))


def _lr(rng: random.Random, low: float, high: float) -> float:
    """Log-uniform strictly between ``low`` and ``high``, 3 significant digits (readable in messages). Never ``low``
    itself: rounding once gave the class "SGD above 1" an lr of exactly 1, at which ``min(lr, 1)`` is right, and a
    loop that caps its lr at 1 passed that run. (The ends themselves are cases of their own: ``opt.point``.)"""
    value = float(f"{low * (high / low) ** rng.random():.3g}")
    return min(max(value, float(f"{low * 1.01:.3g}")), float(f"{high * 0.995:.3g}"))


def optimizer_cases(rng: random.Random) -> tuple[Case, ...]:
    """make_optimizer at its defaults, at the default name, and per name at every point of its lr domain (both
    ends, every power of ten, the course's lrs) and at one fresh lr inside every decade."""
    cases = [Case("opt.defaults", None, (("name", "sgd"),), default=True),
             Case("opt.default-name", _lr(rng, 1e-3, 1e-2), (("name", "sgd"),), default=True)]
    for name in ("sgd", "adam"):
        domain = domain_of("make_optimizer", "lr", name)
        for value in points(domain):
            cases.append(Case("opt.point", float(value), (("name", name), *marks(domain, value))))
        for low, high in decade_classes(domain):
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
    # the data-size domain's points: every power of ten up to its top, and the course's own set sizes
    domain = domain_of("evaluate", "X")
    cases += [Case("rows.point", r, marks(domain, r)) for r in points(domain) if r > 1]
    # the count of right answers over its own domain (0 .. rows): every row predicted right at each power of two
    # plus one up to the top (a count held in a narrow float rounds there first: 257 in bfloat16, 2049 in
    # float16) and at the top, and every row but one right at the top
    cases += [Case(ALL_RIGHT, r) for r in past_powers_of_two(int(domain.high))]
    cases.append(Case(ALL_RIGHT, int(domain.high)))
    cases.append(Case(ALL_BUT_ONE, int(domain.high)))
    return tuple(cases)


ALL_RIGHT, ALL_BUT_ONE = "rows.all-right", "rows.all-but-one"
"""evaluate's cases whose labels are the model's own predictions (every row right; every row but the last)."""


def past_powers_of_two(top: int) -> list[int]:
    """2**k + 1 for every k >= 1 with 2**k + 1 <= top: 3, 5, 9, ..., the counts a float format first rounds."""
    return [2**k + 1 for k in range(1, top.bit_length()) if 2**k + 1 <= top]


@dataclass(frozen=True)
class Coverage:
    """Every class's case for one run, drawn together (see ``Draw.coverage``)."""

    loader: tuple[Case, ...]
    seeds: tuple[Case, ...]
    optimizers: tuple[Case, ...]
    rows: tuple[Case, ...]
    train: tuple[TrainCase, ...]
    fit: tuple[TrainCase, ...]
    loader_rows: tuple[Case, ...] = ()
    """make_loader over sets of other sizes (``loader_rows_cases``)."""


def clip_cases(seed, *, fit: bool) -> tuple[TrainCase, ...]:
    """One run at every point of the clip norm's domain (both ends, every power of ten between, the course's clip
    norms), each binding (``CLIP_SCALE``): a clamp, a floor or a clip dropped past any threshold T inside the domain
    changes the clip of the run on T's far side, and so its steps. Points, not draws: the same on every run."""
    domain = domain_of("fit" if fit else "train_epoch", "clip_norm")
    classes = ("train.sgd", "train.device", CLIP_POINT)
    return tuple(TrainCase("sgd", float(f"{CLIP_STEP / p:.6g}"), DEFAULT_BATCH, seed(), seed(), 1, float(p),
                           classes, rows=CLIP_ROWS, loss_scale=CLIP_SCALE) for p in points(domain))


def big_batch_cases(seed) -> tuple[TrainCase, ...]:
    """One SGD step on a single batch at the top of the batch-size domain, and one on a prime just under it
    (``BATCH_PRIME``), the training rows repeated to fill it, no clip: a loop that handles a batch past some size
    otherwise (cuts it in chunks, skips it, clips it) trains otherwise there, wherever its threshold lies."""
    return tuple(TrainCase("sgd", BATCH_LR, b, seed(), seed(), 1, None,
                           ("train.sgd", kind, "train.no-clip", "train.device"), repeat=b, loss_scale=BATCH_SCALE)
                 for b, kind in zip(BIG_BATCHES, ("train.batch-top", "train.batch-prime"), strict=True))


def lr_cases(seed) -> tuple[TrainCase, ...]:
    """The optimizer handed in is an argument too: one run per optimizer at every point of make_optimizer's lr
    domain for it (both ends, every power of ten, the course's lrs), without a clip, so a loop that acts on the
    optimizer's lr past some threshold (clips, caps it, skips the step) changes the steps of the run on the far
    side. SGD's loss is scaled by 0.1/lr below lr 0.1, so that a step moves the weights as at lr 0.1 (a step at
    1e-5 shows); Adam's step is lr-sized whatever the loss. Points, not draws: the same on every run."""
    return tuple(TrainCase(name, lr, LR_BATCH, seed(), seed(), 1, None,
                           (f"train.{name}", LR_POINT, "train.no-clip", "train.device"), rows=LR_ROWS, loss_scale=scale)
                 for name, lr, scale in lr_points())


def lr_points() -> list[tuple[str, float, float | None]]:
    """``(optimizer, lr, loss scale)`` of the lr sweep (``lr_cases``, and fit_best's): every point of make_optimizer's
    lr domain per optimizer; SGD's loss times 0.1/lr below 0.1 (None: as it is)."""
    return [(name, float(p), float(f"{CLIP_STEP / p:.6g}") if name == "sgd" and p < CLIP_STEP else None)
            for name in ("sgd", "adam") for p in points(domain_of("make_optimizer", "lr", name))]


def train_cases(rng: random.Random, n: int, *, batchnorm: bool,
                seed) -> tuple[tuple[TrainCase, ...], tuple[TrainCase, ...]]:
    """A few short runs that together cover every class of ``train_epoch`` and ``fit``."""

    def leaves_one(b: int) -> bool:
        return batchnorm and n % b == 1

    def size(choices) -> int:
        fit = [b for b in choices if not leaves_one(b)]
        return rng.choice(fit or [n])

    big = size(range(65, n)) if n > 65 else n
    clip = domain_of("train_epoch", "clip_norm")
    train = (
        TrainCase("sgd", 0.1, DEFAULT_BATCH if not leaves_one(DEFAULT_BATCH) else size(range(20, 40)),
                  seed(), seed(), 1, None, ("train.defaults", "train.sgd", "train.no-clip"), defaults=True),
        TrainCase("adam", _lr(rng, 1e-3, 5e-2), size(range(6, 25)), seed(), seed(), 1, 0.05,
                  ("train.adam", "train.clip-binds", "train.subset", "train.device"), loader="subset-sampler"),
        TrainCase("sgd", _lr(rng, 1.0, 3.0), big, seed(), seed(), 1, float(clip.high),
                  ("train.sgd", "train.lr-above-1", "train.clip-loose", "train.batch-above-64",
                   "train.device")),
        # a last batch under half dropped by the loader, and a clip at the bottom of its domain (binds hard)
        TrainCase("sgd", _lr(rng, 0.05, 0.5), size([b for b in range(8, 40) if 1 < n % b < b // 2]), seed(), seed(),
                  1, float(clip.low), ("train.sgd", "train.drop-last", "train.clip-bottom", "train.device"),
                  loader="drop-last"),
        TrainCase("adam", _lr(rng, 1e-3, 5e-2), size(range(8, 33)), seed(), seed(), 1, None,
                  ("train.adam", "train.unequal", "train.no-clip", "train.device"), loader="unequal-batches"),
    )
    # a big loader (the rows repeated past 20,000), a few dozen steps in large batches
    train += (TrainCase("sgd", _lr(rng, 0.05, 0.5), BIG_BATCH, seed(), seed(), 1, None,
                        ("train.sgd", "train.big-set", "train.no-clip", "train.device"), repeat=BIG_ROWS),)
    # the batches handed in are an argument too: the top of the batch-size domain
    train += big_batch_cases(seed)
    # every point of the clip norm's domain, each binding
    train += clip_cases(seed, fit=False)
    # every point of the optimizer's lr domain (the optimizer handed in), no clip
    train += lr_cases(seed)
    if not batchnorm:  # BatchNorm cannot train on a batch of one
        train += (TrainCase("sgd", _lr(rng, 1e-2, 1e-1), 1, seed(), seed(), 1, None,
                            ("train.sgd", "train.batch-one", "train.no-clip", "train.device"),
                            rows=rng.randint(24, 40)),)
    long, few = domain_of("fit", "epochs").high, rng.randint(24, 40)
    fit = (
        TrainCase("sgd", 0.1, n, seed(), seed(), rng.randint(2, 3), None, ("train.defaults", "train.whole"),
                  defaults=True),
        # every optional argument together: a scheduler, a clip, validation, a device, on unequal batches, one epoch
        TrainCase("adam", _lr(rng, 1e-3, 5e-2), size(range(8, 33)), seed(), seed(), 1, float(clip.high),
                  ("train.one-epoch", "train.step", "train.unequal", "train.clip-loose", "train.device"),
                  scheduler="step", step_size=1, gamma=float(f"{rng.uniform(0.3, 0.9):.2f}"), loader="unequal-batches"),
        # the top of the epochs' domain (past any patience), on a few rows taken whole (one batch an epoch keeps it
        # cheap), with a cosine schedule and a clip that binds: a clip at the bottom of its domain (the whole set's
        # gradient at the start has norm 0.28 or more on every track), so a fit that handles clip_norm itself, or
        # only passes some values on, shows
        TrainCase("sgd", _lr(rng, 0.05, 0.5), few, seed(), seed(), long, float(clip.low),
                  ("train.long", "train.epochs-top", "train.cosine", "train.clip-binds",
                   "train.clip-bottom", "train.device"), scheduler="cosine", rows=few),
        # a big loader and a big validation set: one epoch of a few dozen steps and one forward pass
        TrainCase("adam", _lr(rng, 1e-3, 5e-2), BIG_BATCH, seed(), seed(), 1, None,
                  ("train.adam", "train.big-set", "train.big-val", "train.one-epoch", "train.device"),
                  repeat=BIG_ROWS, val_repeat=True),
        *big_batch_cases(seed),
        *clip_cases(seed, fit=True),
        *lr_cases(seed),
    )
    return train, fit


def draw(rng: random.Random, track) -> Coverage:
    """Every class's case for ``track``, drawn from ``rng`` (deterministic given ``rng``)."""
    n_train, n_val = track.data.n_train, track.data.n_val

    def seed() -> int:
        return rng.randrange(1, MAX_SEED)

    loader = batch_cases(rng, n_train, domain_points=True)
    seeds = seed_cases(rng)
    optimizers = optimizer_cases(rng)
    rows = rows_cases(rng, n_train + n_val)
    train, fit = train_cases(rng, n_train, batchnorm=track.model.batchnorm, seed=seed)
    return Coverage(loader=loader, seeds=seeds, optimizers=optimizers, rows=rows, train=train, fit=fit,
                    loader_rows=loader_rows_cases(rng))
