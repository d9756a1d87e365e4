"""The loader: every example once per epoch, in an order set by the loader's seed alone.

The learner's ``make_loader`` gets the track's training features with labels replaced by the
examples' indices (0..149 on moons), so every batch says exactly which examples it holds.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.common import worst_case
from checker.setting.coverage import DIGITS, LOW_BITS, Case, loader_rows_cases, seed_collisions


def want_sizes(n: int, batch_size: int) -> list[int]:
    """The batch sizes a shuffled loader without drop_last gives ``n`` examples: 32, 32, 32, 32, 22 for 150."""
    return [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])


def index_batches(loop, lab, *, seed: int, epochs: int,
                  batch_size: int | None = None) -> tuple[list[list[list[int]]], bool]:
    """Per epoch, the index batches the loop's loader yields; and whether rows stayed with their labels."""
    import torch

    X = lab.data.X_train
    batch_size = batch_size or lab.track.thresholds.batch_size
    index = torch.arange(len(X))
    loader = loop.make_loader(X, index, batch_size=batch_size, seed=seed)
    epochs_seen, paired = [], True
    for _ in range(epochs):
        batches = []
        for xb, ib in loader:
            ib = ib.detach().cpu().long().reshape(-1)
            paired = paired and bool(torch.equal(xb.detach().cpu().reshape(len(ib), -1), X[ib]))
            batches.append(ib.tolist())
        epochs_seen.append(batches)
    return epochs_seen, paired


# ---------------------------------------------------------------------------- loader.coverage

COVERAGE_TITLE = Message(en="every example once per epoch", es="cada ejemplo una vez por época")
COVERAGE_OK = Message(
    en="at batch_size {b} each epoch gives batches of {sizes}: all {n_train} examples, once each",
    es="con batch_size {b} cada época da lotes de {sizes}: los {n_train} ejemplos, una vez cada uno",
)
COVERAGE_FAIL = Message(
    en="at batch_size {b}, epoch {epoch} gave batches of {sizes} ({n} examples, {distinct} different): "
    "{missing} of the {n_train} training examples never appeared and {repeated} appeared more than once. Examples "
    "left out of every epoch are never learned from",
    es="con batch_size {b}, la época {epoch} dio lotes de {sizes} ({n} ejemplos, {distinct} distintos): "
    "{missing} de los {n_train} ejemplos de entrenamiento no aparecieron nunca y {repeated} aparecieron más de una "
    "vez. Los ejemplos que faltan en todas las épocas nunca enseñan nada",
)
COVERAGE_SIZES = Message(
    en="at batch_size {b}, epoch {epoch} gave batches of {sizes}; with {n_train} examples the lesson's loader "
    "gives {want}",
    es="con batch_size {b}, la época {epoch} dio lotes de {sizes}; con {n_train} ejemplos el cargador de la "
    "lección da {want}",
)
COVERAGE_UNPAIRED = Message(
    en="the loader's batches do not keep each example's features with its own label: a row of X arrived with "
    "another example's label",
    es="los lotes del cargador no mantienen las características de cada ejemplo con su propia etiqueta: una "
    "fila de X llegó con la etiqueta de otro ejemplo",
)


@check("loader.coverage", early=True, family="loader", calls=("make_loader",), title=COVERAGE_TITLE, cost=2,
       timeout=20.0)
def coverage(loop, lab) -> dict:
    epochs, paired = index_batches(loop, lab, seed=0, epochs=2)
    rows = []
    for batches in epochs:
        seen = [i for b in batches for i in b]
        rows.append({
            "sizes": [len(b) for b in batches], "n": len(seen), "distinct": len(set(seen)),
            "missing": len(set(range(len(lab.data.X_train))) - set(seen)), "repeated": len(seen) - len(set(seen)),
        })
    return {"epochs": rows, "paired": paired}


def _sizes(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) or "none"


@coverage.judge
def _(m: dict):
    track = judged_track()
    n_train, b = track.data.n_train, track.thresholds.batch_size
    want = want_sizes(n_train, b)
    for e, row in enumerate(m["epochs"], start=1):
        if row["missing"] or row["repeated"] or row["n"] != n_train:
            return failed(COVERAGE_FAIL, epoch=e, sizes=_sizes(row["sizes"]), n=row["n"],
                          distinct=row["distinct"], b=b, n_train=n_train,
                          missing=row["missing"], repeated=row["repeated"])
        if row["sizes"] != want:
            return failed(COVERAGE_SIZES, epoch=e, sizes=_sizes(row["sizes"]), b=b, n_train=n_train,
                          want=_sizes(want))
    if not m["paired"]:
        return failed(COVERAGE_UNPAIRED)
    return passed(COVERAGE_OK, sizes=_sizes(want), b=b, n_train=n_train)


# ---------------------------------------------------------------------------- loader.order

ORDER_TITLE = Message(en="a seeded, reshuffled order", es="un orden con semilla, barajado cada época")
ORDER_OK = Message(
    en="the order depends on the loader's seed alone (seed 0 starts {a}…, seed 1 starts {c}…) and changes "
    "every epoch",
    es="el orden depende solo de la semilla del cargador (la semilla 0 empieza {a}…, la 1 empieza {c}…) y "
    "cambia en cada época",
)
ORDER_UNSHUFFLED = Message(
    en="the loader gives the examples in their stored order ({a}…) in every epoch: nothing is shuffled, so "
    "every epoch shows the model the same batches in the same sequence",
    es="el cargador da los ejemplos en su orden de almacenamiento ({a}…) en todas las épocas: no se baraja "
    "nada, así que cada época enseña al modelo los mismos lotes en la misma secuencia",
)
ORDER_GLOBAL = Message(
    en="two loaders built with seed=0 gave different orders ({a}… and {b}…) because the global random state "
    "differed when they were built and used: the order does not depend on the loader's seed alone, so two runs "
    "of the same script will not match",
    es="dos cargadores creados con seed=0 dieron órdenes distintos ({a}… y {b}…) porque el estado aleatorio "
    "global era distinto al crearlos y usarlos: el orden no depende solo de la semilla del cargador, así que "
    "dos ejecuciones del mismo script no coincidirán",
)
ORDER_SEED_IGNORED = Message(
    en="loaders built with seed=0 and seed=1 give the same order ({a}…): the seed argument has no effect",
    es="los cargadores creados con seed=0 y seed=1 dan el mismo orden ({a}…): el argumento seed no tiene "
    "efecto",
)
ORDER_COLLIDE_BITS = Message(
    en="loaders built with seed={s1} and seed={s2} give the same order ({a}…): the two seeds differ only from bit "
    "{k} up ({s2} = {s1} + 2^{k}), so the loader seems to keep only the seed's last {k} bit(s) (a modulo, a mask, "
    "a narrow integer type). Distinct seeds must give distinct orders, or runs meant to differ repeat each other",
    es="los cargadores creados con seed={s1} y seed={s2} dan el mismo orden ({a}…): las dos semillas solo difieren "
    "a partir del bit {k} ({s2} = {s1} + 2^{k}), así que el cargador parece quedarse solo con los últimos {k} "
    "bit(s) de la semilla (un módulo, una máscara, un tipo entero estrecho). Semillas distintas deben dar órdenes "
    "distintos; si no, ejecuciones que debían diferir se repiten",
)
ORDER_COLLIDE_DIGITS = Message(
    en="loaders built with seed={s1} and seed={s2} give the same order ({a}…): the two seeds share their last {k} "
    "digit(s) ({s2} = {s1} + 10^{k}), so the loader seems to keep only those (a modulo by a power of ten). "
    "Distinct seeds must give distinct orders, or runs meant to differ repeat each other",
    es="los cargadores creados con seed={s1} y seed={s2} dan el mismo orden ({a}…): las dos semillas comparten sus "
    "últimas {k} cifra(s) ({s2} = {s1} + 10^{k}), así que el cargador parece quedarse solo con ellas (un módulo "
    "por una potencia de diez). Semillas distintas deben dar órdenes distintos; si no, ejecuciones que debían "
    "diferir se repiten",
)
ORDER_COLLIDE_FLOAT = Message(
    en="loaders built with seed={s1} and seed={s2}, neighbours above 2^24, give the same order ({a}…): a float32 "
    "cannot tell them apart, so the seed seems to pass through a float on its way to the generator. Distinct seeds "
    "must give distinct orders",
    es="los cargadores creados con seed={s1} y seed={s2}, vecinas por encima de 2^24, dan el mismo orden ({a}…): "
    "un float32 no las distingue, así que la semilla parece pasar por un float antes de llegar al generador. "
    "Semillas distintas deben dar órdenes distintos",
)
ORDER_SAME_EPOCHS = Message(
    en="the loader repeats one shuffled order ({a}…) in every epoch instead of drawing a new one each epoch",
    es="el cargador repite un mismo orden barajado ({a}…) en todas las épocas en lugar de sacar uno nuevo en "
    "cada época",
)


@check("loader.order", early=True, family="loader", calls=("make_loader",), title=ORDER_TITLE, cost=6, timeout=20.0)
def order(loop, lab) -> dict:
    from checker.setting.instruments import scramble_global_rng

    def orders(seed: int, rng: int) -> list[list[int]]:
        scramble_global_rng(rng)
        epochs, _ = index_batches(loop, lab, seed=seed, epochs=2)
        return [[i for b in batches for i in b] for batches in epochs]

    a, b, c = orders(0, 1), orders(0, 2), orders(1, 1)

    def first_order(seed: int) -> list[int]:
        return [i for batch in index_batches(loop, lab, seed=seed, epochs=1)[0][0] for i in batch]

    return {
        "a": a[0][:6], "b": b[0][:6], "c": c[0][:6],
        "same_seed_same_order": a == b, "seeds_differ": a[0] != c[0], "reshuffles": a[0] != a[1],
        "shuffled": a[0] != sorted(a[0]), "collisions": seed_collisions(first_order, lab.draw),
        "sizes": size_orders(loop, lab),
    }


ORDER_ROWS = 20
"""From this many rows in an epoch up, two seeds (or two epochs) giving one order is no chance (20! orders): below
it a shuffle may coincide (and an epoch with no rows has no order), so only 'the same seed, the same order' is asked
there."""


def size_orders(loop, lab) -> list[dict]:
    """The order's contract at every other set size make_loader is handed (``coverage.loader_rows_cases``: one
    row to the data-size domain's top, the track's rows repeated): the same seed under two global random states
    gives one order; from ``ORDER_ROWS`` rows, another seed another order and a second epoch a new one."""
    import random

    import torch

    cov = lab.draw.coverage if lab.draw is not None else None
    if cov is not None:
        cases, seed, other = cov.loader_rows, lab.draw.loader_seed, lab.draw.loader_other_seed
    else:  # graded without the differential checks' draw: the same sizes, their in-decade values fixed
        cases, seed, other = loader_rows_cases(random.Random(0)), 0, 1
    out = []
    for case in cases:
        rows, b = int(case.value), int(dict(case.facts)["b"])
        if rows < 2:
            continue
        index = torch.arange(rows)
        X = lab.data.X_train[index % len(lab.data.X_train)]
        first, second = _orders(loop, X, index, b, seed, rng=3, epochs=2)
        judged = len(set(first)) >= ORDER_ROWS  # the rows an epoch gave: a loader that drops them all has no order
        out.append({"case": case.as_dict(), "rows": rows, "b": b, "s": seed, "other": other, "a": first[:6],
                    "same": first == _orders(loop, X, index, b, seed, rng=4)[0],
                    "seed_matters": first != _orders(loop, X, index, b, other, rng=3)[0] if judged else None,
                    "reshuffles": first != second if judged else None})
    return out


def _orders(loop, X, labels, b: int, seed: int, *, rng: int, epochs: int = 1) -> list[list[int]]:
    """Each epoch's order of ``make_loader(X, labels, batch_size=b, seed=seed)``, built after the global RNG was
    scrambled with ``rng``."""
    from checker.setting.instruments import scramble_global_rng

    scramble_global_rng(rng)
    loader = loop.make_loader(X, labels, batch_size=b, seed=seed)
    return [[i for _, ib in loader for i in ib.detach().cpu().long().reshape(-1).tolist()] for _ in range(epochs)]


SIZE_CALL = "make_loader(X ({rows} rows), y, batch_size={b}, seed={s})"
SIZE_OK = Message(en=SIZE_CALL + " keeps the order's contract", es=SIZE_CALL + " cumple el contrato del orden")
SIZE_GLOBAL = Message(
    en="two loaders from " + SIZE_CALL + " gave different orders ({a}…) when the global random state differed: "
    "at this size the order does not depend on the seed alone",
    es="dos cargadores de " + SIZE_CALL + " dieron órdenes distintos ({a}…) cuando el estado aleatorio global era "
    "distinto: a este tamaño el orden no depende solo de la semilla",
)
SIZE_SEED = Message(en=SIZE_CALL + " and seed={other} give the same order ({a}…): at this size the seed is ignored",
                    es=SIZE_CALL + " y seed={other} dan el mismo orden ({a}…): a este tamaño se ignora la semilla")
SIZE_SAME = Message(en=SIZE_CALL + " repeats one order ({a}…) in every epoch at this size",
                    es=SIZE_CALL + " repite un mismo orden ({a}…) en todas las épocas a este tamaño")


def _size_verdict(d: dict):
    args = dict(rows=d["rows"], b=d["b"], s=d["s"], other=d["other"], a=_head(d["a"]))
    if not d["same"]:
        return failed(SIZE_GLOBAL, **args)
    if d["seed_matters"] is False:
        return failed(SIZE_SEED, **args)
    if d["reshuffles"] is False:
        return failed(SIZE_SAME, **args)
    return passed(SIZE_OK, **args)


def sizes_verdict(m: dict):
    """The simplest set size whose order breaks the contract (naming its class), or None."""
    return worst_case([(Case.from_dict(d["case"]), _size_verdict(d)) for d in m.get("sizes", [])])


def _head(xs: list[int]) -> str:
    return ", ".join(map(str, xs[:6]))


def order_verdict(m: dict, *, ok: Message = ORDER_OK, unshuffled: Message = ORDER_UNSHUFFLED,
                  global_: Message = ORDER_GLOBAL):
    """The verdict on two epochs' orders at seeds 0 (twice, under two global states) and 1: shuffled, by the
    loader's seed alone, anew every epoch; and on the first epoch's order at pairs of distinct seeds that a seed cut
    short would confuse (``checker.setting.coverage.collision_pairs``): never one order for two seeds.
    pipeline.order judges its loader the same way, in its own words."""
    params = dict(a=_head(m["a"]), b=_head(m["b"]), c=_head(m["c"]))
    if not m["shuffled"] and not m["reshuffles"]:
        return failed(unshuffled, **params)
    if not m["same_seed_same_order"]:
        return failed(global_, **params)
    if not m["seeds_differ"]:
        return failed(ORDER_SEED_IGNORED, **params)
    if m.get("collisions"):  # the closest pair of distinct seeds that gave one order
        c = m["collisions"][0]
        message = {LOW_BITS: ORDER_COLLIDE_BITS, DIGITS: ORDER_COLLIDE_DIGITS}.get(c["kind"], ORDER_COLLIDE_FLOAT)
        return failed(message, s1=c["a"], s2=c["b"], k=c["k"], a=_head(c["order"]))
    if not m["reshuffles"]:
        return failed(ORDER_SAME_EPOCHS, **params)
    return passed(ok, **params)


@order.judge
def _(m: dict):
    verdict = order_verdict(m)
    return (sizes_verdict(m) or verdict) if verdict.passed else verdict
