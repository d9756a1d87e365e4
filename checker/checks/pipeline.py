"""Data-pipeline track: Dataset, workers, BatchNorm and seeding, observed on the CPU.

The loop files of the track define ``make_dataset(X, y, *, augment=True)`` and
``make_loader(dataset, batch_size=32, seed=0, *, num_workers=2)`` (``checker.loopfile.protocol``, group
"pipeline"). The checks feed them datasets of their own where that isolates the loader: labels
replaced by the examples' indices (every batch says which rows it holds), or a probe dataset whose
items report the NumPy draw and the process that produced them (which worker served each batch).

- ``pipeline.dataset``: one item per row, each row with its label, jitter only when asked, drawn anew
  at every read;
- ``pipeline.batches``: every batch full (no last batch of one, on which BatchNorm cannot train), no
  example twice in an epoch, and a loader that builds and runs without a warning;
- ``pipeline.order``: the order depends on the loader's seed alone and changes every epoch;
- ``pipeline.workers``: the workers draw different random streams, tied to the loader's seed, and are
  forked once, not every epoch;
- ``pipeline.seeds``: ``seed_everything`` makes the augmentations of a run without workers repeat;
- ``pipeline.batchnorm``: BatchNorm's running statistics move with every training batch and with
  nothing else (not with a validation).

Facts these rest on, measured with PyTorch 2.13 on the CPU: each DataLoader worker seeds its own torch,
``random`` and NumPy generators from one draw of the loader's generator plus the worker id, so workers
draw different streams with no ``worker_init_fn``, and a ``worker_init_fn`` that reseeds NumPy can only
make things worse; with ``num_workers=0`` the dataset draws from the main process's NumPy generator.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed
from checker.checks.common import worst_case
from checker.setting.coverage import EDGES, Case, batch_cases, marks, seed_collisions
from checker.setting.domains import domain_of

SHOWN = 4
"""Values of a random stream quoted in messages."""


def _fmt(values, n: int = SHOWN) -> str:
    return ", ".join(f"{v:.4f}" for v in values[:n])


def _index_data(lab):
    """The track's training features, and their indices 0..n-1 as labels."""
    import torch

    X = lab.data.X_train
    return X, torch.arange(len(X))


def _epochs(loader, epochs: int) -> list[list[list[int]]]:
    """Per epoch, the label batches (as int lists) a loader over ``(X, index)`` yields."""
    out = []
    for _ in range(epochs):
        out.append([[int(i) for i in batch[1].reshape(-1)] for batch in loader])
    return out


# ---------------------------------------------------------------------------- pipeline.dataset

DATASET_TITLE = Message(en="a Dataset with one item per row", es="un Dataset con un elemento por fila")
DATASET_OK = Message(
    en="make_dataset gives len {n} for {n} rows, each row with its own label; augment=False returns rows as "
    "stored and augment=True adds a jitter (std {std:.3f}) drawn anew at every read",
    es="make_dataset da len {n} para {n} filas, cada fila con su etiqueta; augment=False devuelve las filas tal "
    "cual y augment=True les suma un ruido (desviación {std:.3f}) que se sortea de nuevo en cada lectura",
)
DATASET_LEN = Message(
    en="make_dataset over {n} rows has len {got}: the sampler draws indices 0 to {last}, so {what}",
    es="make_dataset sobre {n} filas tiene len {got}: el sampler sortea índices de 0 a {last}, así que {what}",
)
DATASET_LEN_SHORT = Message(
    en="{missing} row(s) (from index {got}) are never read, in any epoch",
    es="{missing} fila(s) (desde el índice {got}) no se leen nunca, en ninguna época",
)
DATASET_LEN_LONG = Message(
    en="it also draws index {first}, one past the last row (reading it: {error})",
    es="también sortea el índice {first}, uno más allá de la última fila (al leerlo: {error})",
)
DATASET_ROWS = Message(
    en="with augment=False, item {i} came back as features {got} with label {label}, but row {i} is {want} with "
    "label {i}: items must be the rows of X with their own labels",
    es="con augment=False, el elemento {i} devolvió las características {got} con etiqueta {label}, pero la fila "
    "{i} es {want} con etiqueta {i}: los elementos deben ser las filas de X con sus propias etiquetas",
)
DATASET_RAISED = Message(
    en="reading item {i} of make_dataset(X, y, augment={augment}) raised {error}",
    es="leer el elemento {i} de make_dataset(X, y, augment={augment}) lanzó {error}",
)
DATASET_NO_JITTER = Message(
    en="with augment=True, {n} reads returned the rows exactly as stored: no augmentation happens",
    es="con augment=True, {n} lecturas devolvieron las filas exactamente como están: no hay aumento de datos",
)
DATASET_FROZEN = Message(
    en="with augment=True, reading rows 0-{last} twice gave the same jitter both times ({a}…): the noise is "
    "drawn once and reused, so every epoch shows the model the same augmented points",
    es="con augment=True, leer dos veces las filas 0-{last} dio el mismo ruido las dos veces ({a}…): el ruido se "
    "sortea una vez y se reutiliza, así que cada época enseña al modelo los mismos puntos aumentados",
)
DATASET_AUGMENTS_ANYWAY = Message(
    en="with augment=False, row {i} came back moved by {d:.4f} from where it is stored: the data that should be "
    "seen as it is (validation, tests) is jittered too",
    es="con augment=False, la fila {i} volvió desplazada {d:.4f} de donde está guardada: los datos que deben "
    "verse tal cual (validación, pruebas) también reciben ruido",
)

DATASET_IN_PLACE = Message(
    en="reading items of make_dataset(X, y, augment={augment}) changed X itself: row {i} of the tensor passed in "
    "moved by {d:.4f}. The jitter is added in place (x += noise on a view of X), so the stored data drift further "
    "at every read and the rows handed back are not X's",
    es="leer elementos de make_dataset(X, y, augment={augment}) cambió el propio X: la fila {i} del tensor recibido "
    "se desplazó {d:.4f}. El ruido se suma en el sitio (x += ruido sobre una vista de X), así que los datos "
    "guardados se desvían más en cada lectura y las filas devueltas no son las de X",
)
DATASET_FLAG_SHARED = Message(
    en="make_dataset(X, y, augment=True) jittered its rows (std {std:.3f}) until make_dataset(X, y, augment=False) "
    "was built; read afterwards it returned them as stored: the augment flag is shared by every dataset (a class "
    "attribute or a global), so building the validation set turns augmentation off for training",
    es="make_dataset(X, y, augment=True) aplicaba ruido a sus filas (desviación {std:.3f}) hasta que se creó "
    "make_dataset(X, y, augment=False); leído después, las devolvió tal cual: el indicador augment es compartido "
    "por todos los datasets (un atributo de clase o una global), así que crear el de validación apaga el aumento "
    "del de entrenamiento",
)

READS = 20
"""Rows read twice to see whether the jitter is drawn anew."""


def _moved_row(X, before) -> dict | None:
    """The first row of ``X`` that is no longer what ``before`` holds, and by how much."""
    import torch

    if torch.equal(X, before):
        return None
    diff = (X - before).abs().reshape(len(X), -1).max(dim=1).values
    i = int(diff.argmax())
    return {"i": i, "d": float(diff[i]), "augment": True}


@check("pipeline.dataset", early=True, family="pipeline", calls=("make_dataset",), protocol="pipeline",
       title=DATASET_TITLE, cost=1, timeout=20.0)
def dataset(loop, lab) -> dict:
    import numpy as np
    import torch

    stored, index = _index_data(lab)
    X = stored.clone()  # the file's own copy: a jitter added in place shows as a change to it
    n = len(X)
    out: dict = {"n": n}
    np.random.seed(0)  # any jitter the file draws is then the same in every run: the figures repeat
    # built in sequence, read afterwards: a flag kept on the class is then the last dataset's for both
    aug = loop.make_dataset(X, index, augment=True)
    try:
        early = [float(v) for i in range(READS)
                 for v in (torch.as_tensor(aug[i][0]).detach().cpu().reshape(-1).float() - stored[i])]
    except Exception:  # noqa: BLE001 - read again below, where the error becomes the figure
        early = [0.0]
    out["in_place"] = _moved_row(X, stored)
    X.copy_(stored)
    out["early_std"] = float(np.std(early))
    np.random.seed(0)  # the reads below draw what they drew before the early reads were added
    plain = loop.make_dataset(X, index, augment=False)
    out["len"] = int(len(plain))
    out["raised"] = out["mismatch"] = out["moved"] = out["beyond"] = None
    if out["len"] > n:
        try:
            plain[n]
            out["beyond"] = "no error"
        except Exception as exc:  # noqa: BLE001 - the file's error is the figure
            out["beyond"] = f"{type(exc).__name__}: {exc}"[:200]
    for i in range(n):
        try:
            x, label = plain[i]
        except Exception as exc:  # noqa: BLE001 - the file's error is the figure
            out["raised"] = {"i": i, "error": f"{type(exc).__name__}: {exc}"[:200], "augment": False}
            break
        x = torch.as_tensor(x).detach().cpu().reshape(-1).float()
        if int(torch.as_tensor(label)) != i or x.shape != stored[i].shape:
            out["mismatch"] = {"i": i, "got": [round(float(v), 4) for v in x], "label": int(torch.as_tensor(label)),
                               "want": [round(float(v), 4) for v in stored[i]]}
            break
        d = float((x - stored[i]).abs().max())
        if d > 1e-6:
            out["moved"] = {"i": i, "d": d}
            break
    np.random.seed(0)
    jitters = []
    try:
        for _ in range(2):
            jitters.append([float(v) for i in range(READS)
                            for v in (torch.as_tensor(aug[i][0]).detach().cpu().reshape(-1).float() - stored[i])])
        if out["in_place"] is None:
            out["in_place"] = _moved_row(X, stored)
    except Exception as exc:  # noqa: BLE001
        out["raised"] = out["raised"] or {"i": "0-19", "error": f"{type(exc).__name__}: {exc}"[:200], "augment": True}
        jitters = [[0.0], [0.0]]
    a, b = jitters
    out["jitter"] = a[:SHOWN]
    out["std"] = float(np.std(a))
    out["fresh"] = a != b
    return out


def _at_point(function: str, parameter: str, value, text: Message) -> Message:
    """``text`` followed by where ``value`` sits in ``function``'s ``parameter`` domain (``checker.setting.domains``):
    an end of it, a value the course uses ("num_workers=8, the top of its domain")."""
    facts = dict(marks(domain_of(function, parameter), value))
    en, es = text.en, text.es
    if facts.get("edge") in EDGES:
        en, es = f"{en}, {EDGES[facts['edge']].en}", f"{es}, {EDGES[facts['edge']].es}"
    if facts.get("where_en"):
        en, es = f"{en}: {facts['where_en']}", f"{es}: {facts['where_es']}"
    return Message(en=en, es=es)


def _nested(msg: Message, **params) -> Message:
    """``msg`` with its fields filled, to pass as a parameter of another message (rendered in its language)."""
    return Message(en=msg.en.format(**params), es=msg.es.format(**params))


@dataset.judge
def _(m: dict):
    n, got = m["n"], m["len"]
    if got < n:
        return failed(DATASET_LEN, n=n, got=got, last=got - 1,
                      what=_nested(DATASET_LEN_SHORT, missing=n - got, got=got))
    if got > n:
        return failed(DATASET_LEN, n=n, got=got, last=got - 1,
                      what=_nested(DATASET_LEN_LONG, first=n, error=m["beyond"]))
    if m.get("in_place"):
        return failed(DATASET_IN_PLACE, **m["in_place"])
    if m["raised"]:
        return failed(DATASET_RAISED, **m["raised"])
    if m["mismatch"]:
        return failed(DATASET_ROWS, **m["mismatch"])
    if m["moved"]:
        return failed(DATASET_AUGMENTS_ANYWAY, **m["moved"])
    if m["std"] == 0.0 and m.get("early_std", 0.0) > 0.0:
        return failed(DATASET_FLAG_SHARED, std=m["early_std"])
    if m["std"] == 0.0:
        return failed(DATASET_NO_JITTER, n=READS)
    if not m["fresh"]:
        return failed(DATASET_FROZEN, last=READS - 1, a=_fmt(m["jitter"]))
    return passed(DATASET_OK, n=n, std=m["std"])


# ---------------------------------------------------------------------------- pipeline.batches

BATCHES_TITLE = Message(en="full batches, BatchNorm can train on each",
                        es="lotes completos, BatchNorm entrena con todos")
BATCHES_OK = Message(
    en="at batch_size {bs} each epoch gives {k} full batches of {bs} ({used} of the {n} examples, each once; which "
    "{left} stay out changes every epoch), and the model with BatchNorm trains on every one of them",
    es="con batch_size {bs} cada época da {k} lotes completos de {bs} ({used} de los {n} ejemplos, una vez cada "
    "uno; cuál(es) {left} se queda(n) fuera cambia en cada época), y el modelo con BatchNorm entrena con todos ellos",
)
BATCHES_ONE = Message(
    en="at batch_size {bs}, {n} examples give batches of {sizes} per epoch: the last batch holds ONE example, and "
    "the model's BatchNorm1d in training mode fails on it ({error}). A batch's variance needs two examples at "
    "least; {n} = {k} * {bs} + 1",
    es="con batch_size {bs}, {n} ejemplos dan lotes de {sizes} por época: el último lote tiene UN solo ejemplo, y "
    "el BatchNorm1d del modelo en modo entrenamiento falla con él ({error}). La varianza de un lote necesita al "
    "menos dos ejemplos; {n} = {k} * {bs} + 1",
)
BATCHES_SHORT = Message(
    en="at batch_size {bs}, {n} examples give batches of {sizes} per epoch: a short batch of {short} ends each "
    "epoch, normalised by BatchNorm with far noisier statistics than the others",
    es="con batch_size {bs}, {n} ejemplos dan lotes de {sizes} por época: cada época acaba con un lote corto de "
    "{short}, que BatchNorm normaliza con estadísticas mucho más ruidosas que las de los demás",
)
BATCHES_REPEATED = Message(
    en="epoch {epoch} gave {repeated} example(s) more than once and left {missing} out: an epoch must show each "
    "example at most once",
    es="la época {epoch} dio {repeated} ejemplo(s) más de una vez y dejó fuera {missing}: una época debe enseñar "
    "cada ejemplo como mucho una vez",
)
BATCHES_EMPTY = Message(
    en="the loader gave no batch at all in an epoch over {n} examples at batch_size {bs}",
    es="el cargador no dio ningún lote en una época sobre {n} ejemplos con batch_size {bs}",
)
BATCHES_WARNED = Message(
    en="building and running the loader (num_workers=0) warned: \"{warning}\"",
    es="crear y recorrer el cargador (num_workers=0) produjo un aviso: \"{warning}\"",
)
BATCHES_RAISED = Message(
    en="the model with BatchNorm, in training mode, failed on batch {b} of epoch 1 (size {size}): {error}",
    es="el modelo con BatchNorm, en modo entrenamiento, falló con el lote {b} de la época 1 (tamaño {size}): "
    "{error}",
)


BATCHES_CLASS = Message(
    en="make_loader(dataset, batch_size={b}, seed=0, num_workers=0): an epoch over {n} examples gave batches of "
    "{sizes}; with drop_last=True every batch is full: {want}",
    es="make_loader(dataset, batch_size={b}, seed=0, num_workers=0): una época sobre {n} ejemplos dio lotes de "
    "{sizes}; con drop_last=True todos los lotes están completos: {want}",
)
BATCHES_CLASS_OK = Message(en="batch_size {b} gives {want}", es="batch_size {b} da {want}")
BATCHES_PER_WORKER = Message(
    en="with num_workers={w}, one epoch over {n} examples at batch_size {bs} gave {seen} rows: {repeated} came more "
    "than once (with num_workers=0 each came once). Every worker yields every row: the dataset is iterated whole in "
    "each worker process (an IterableDataset must split its rows between workers), so each epoch repeats the data "
    "{w} times",
    es="con num_workers={w}, una época sobre {n} ejemplos con batch_size {bs} dio {seen} filas: {repeated} llegaron "
    "más de una vez (con num_workers=0 cada una llegó una vez). Cada worker produce todas las filas: el dataset se "
    "recorre entero en cada proceso worker (un IterableDataset debe repartir sus filas entre los workers), así que "
    "cada época repite los datos {w} veces",
)

BATCHES_LEFT_OUT = Message(
    en="make_loader(a set of {n} rows, batch_size={b}, seed=0, num_workers=0): over {e} epochs, {count} row(s) never "
    "came out (row {rows}) [{where}]. Each epoch leaves out the row that does not fill a batch ({n} = {q}·{b} + 1), "
    "drawn anew every epoch, so a shuffled loader shows every row within {e} epochs (it misses one with a chance "
    "under one in a million). The same rows stay out every time: the set is cut to whole batches before it is "
    "shuffled, and those examples are never trained on",
    es="make_loader(un conjunto de {n} filas, batch_size={b}, seed=0, num_workers=0): en {e} épocas, {count} fila(s) "
    "no salieron nunca (fila {rows}) [{where}]. Cada época deja fuera la fila que no completa un lote ({n} = "
    "{q}·{b} + 1), sorteada de nuevo en cada época, así que un cargador que baraja enseña todas las filas en {e} "
    "épocas (se le escapa una con una probabilidad menor que una entre un millón). Siempre quedan fuera las mismas "
    "filas: el conjunto se recorta a lotes completos antes de barajarlo, y con esos ejemplos no se entrena nunca",
)


def _want_full(n: int, b: int) -> list[int]:
    return [b] * (n // b)


@check("pipeline.batches", early=True, family="pipeline", calls=("make_dataset", "make_loader"), protocol="pipeline",
       title=BATCHES_TITLE, cost=25, timeout=30.0)
def batches(loop, lab) -> dict:
    out = _batches(loop, lab)
    import random

    X, index = _index_data(lab)
    n = len(X)
    # every batch-size class (fixed within each class: this check has no draw), without workers
    cases = []
    for case in batch_cases(random.Random(n), n, more=False, default=False, domain_points=True):
        loader = loop.make_loader(loop.make_dataset(X, index, augment=False), batch_size=case.value, seed=0,
                                  num_workers=0)
        cases.append({"b": case.value, "sizes": [len(b) for b in _epochs(loader, 1)[0]], "case": case.as_dict()})
    cases += _sized_sets(loop, lab, X)
    out["cases"] = cases
    # the rows of an epoch counted with the track's workers too
    loader = loop.make_loader(loop.make_dataset(X, index, augment=False), batch_size=out["bs"], seed=0,
                              num_workers=WORKERS)
    seen = [i for b in _epochs(loader, 1)[0] for i in b]
    del loader
    out["workers"] = {"w": WORKERS, "seen": len(seen), "repeated": len(seen) - len(set(seen))}
    out["left_out"] = _left_out(loop)
    return out


MISS_CHANCE = 1e-6
"""The chance, at most, that a shuffled loader leaves some row out of every epoch of a ``remainder_cases`` run."""


def remainder_cases() -> list[tuple[int, int, int]]:
    """``(rows, batch_size, epochs)``: sets that leave one row out of each epoch (``drop_last``), across the batch-size
    domain: at each power of ten of the data-size domain below its top, batches of a third of the set (10 = 3·3 + 1,
    100 = 3·33 + 1, ...), and the batch-size domain's top over one row more. A loader that
    shuffles leaves out another row each epoch, and over ``epochs`` (the fewest that make the chance of a row never
    seen at most ``MISS_CHANCE``: rows·(1/rows)^epochs) shows every row; one that cuts the set before shuffling past
    some batch size T always leaves out the same rows. The top case is past every T inside the domain (a batch above
    T needs a set larger than the batch: one row past the data-size domain)."""
    import math

    rows_domain, batch_domain = domain_of("make_loader", "dataset"), domain_of("make_loader", "batch_size")
    sizes = [(int(r), int(r) // 3) for r in rows_domain.decades() if 10 <= r < rows_domain.high]
    sizes.append((int(batch_domain.high) + 1, int(batch_domain.high)))
    return [(n, b, math.ceil(1 - math.log10(MISS_CHANCE) / math.log10(n))) for n, b in sizes]


def _left_out(loop) -> list[dict]:
    """Per ``remainder_cases`` run, without workers: the rows no epoch gave. The set is ``range(rows)``, each row its
    own index (a map-style dataset batched into index tensors: 20,001 rows read three times cost 20 ms, where a
    TensorDataset's rows cost 25 times that)."""
    import torch

    out = []
    for n, b, epochs in remainder_cases():
        loader = loop.make_loader(range(n), batch_size=b, seed=0, num_workers=0)
        seen = {i for _ in range(epochs) for batch in loader for i in torch.as_tensor(batch).reshape(-1).tolist()}
        never = sorted(set(range(n)) - seen)
        out.append({"n": n, "b": b, "e": epochs, "never": never[:SHOWN], "count": len(never)})
    return out


def _sized_sets(loop, lab, X) -> list[dict]:
    """Datasets of other sizes than the track's (its rows repeated; ``coverage.loader_rows_cases``: from one row to
    the top of the data-size domain, drawn with the run), without workers: the batch sizes of one epoch each."""
    import random

    import torch

    from checker.setting.coverage import loader_rows_cases

    cov = getattr(getattr(lab, "draw", None), "coverage", None)
    sized = cov.loader_rows if cov is not None and cov.loader_rows else loader_rows_cases(random.Random(len(X)))
    out = []
    for case in sized:
        rows, b = int(case.value), int(dict(case.facts)["b"])
        index = torch.arange(rows)
        data = loop.make_dataset(X[index % len(X)], index, augment=False)
        loader = loop.make_loader(data, batch_size=b, seed=0, num_workers=0)
        out.append({"b": b, "n": rows, "sizes": [len(bt) for bt in _epochs(loader, 1)[0]], "case": case.as_dict()})
    return out


def _batches(loop, lab) -> dict:
    import warnings

    import torch

    X, index = _index_data(lab)
    bs = lab.track.thresholds.batch_size
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = loop.make_loader(loop.make_dataset(X, index), batch_size=bs, seed=0, num_workers=0)
        epochs = _epochs(loader, 2)
        # the track's model, in training mode, forward on each batch of a third epoch
        model = lab.track.model.build(0).to(lab.device)
        model.train()
        failure = None
        with torch.no_grad():
            for b, (xb, _) in enumerate(loader, start=1):
                try:
                    model(torch.as_tensor(xb).to(lab.device))
                except Exception as exc:  # noqa: BLE001 - BatchNorm's error is the figure
                    failure = {"b": b, "size": len(xb), "error": f"{type(exc).__name__}: {exc}"[:200]}
                    break
    rows = []
    for batches_ in epochs:
        seen = [i for b in batches_ for i in b]
        rows.append({"sizes": [len(b) for b in batches_], "repeated": len(seen) - len(set(seen)),
                     "missing": len(set(range(len(X))) - set(seen))})
    return {"n": len(X), "bs": bs, "epochs": rows, "failure": failure,
            "warnings": [str(w.message)[:300] for w in caught]}


def _sizes(sizes: list[int]) -> str:
    if len(sizes) > 3 and len(set(sizes[:-1])) == 1:
        return f"{sizes[0]} x {len(sizes) - 1}, {sizes[-1]}" if sizes[-1] != sizes[0] else f"{sizes[0]} x {len(sizes)}"
    return ", ".join(map(str, sizes)) or "none"


@batches.judge
def _(m: dict):
    n, bs = m["n"], m["bs"]
    verdict = _batches_verdict(m)
    if not verdict.passed:
        return verdict
    results = []
    for c in m.get("cases", []):
        cn = c.get("n", n)
        want = _sizes(_want_full(cn, c["b"]))
        if c["sizes"] != _want_full(cn, c["b"]):
            results.append((Case.from_dict(c["case"]),
                            failed(BATCHES_CLASS, b=c["b"], n=cn, sizes=_sizes(c["sizes"]), want=want or "none")))
        else:
            results.append((Case.from_dict(c["case"]), passed(BATCHES_CLASS_OK, b=c["b"], want=want or "none")))
    worst = worst_case(results)
    if worst is not None:
        return worst
    w = m.get("workers")
    if w and w["repeated"]:
        return failed(BATCHES_PER_WORKER, n=n, bs=bs, **w)
    return _left_out_verdict(m) or verdict


def _left_out_verdict(m: dict):
    """The smallest ``remainder_cases`` set (the simplest failing case) some row of which no epoch gave, or None."""
    for c in m.get("left_out", []):
        if c["count"]:
            where = _at_point("make_loader", "batch_size", c["b"], Message(en=f"batch_size {c['b']}",
                                                                          es=f"batch_size {c['b']}"))
            return failed(BATCHES_LEFT_OUT, n=c["n"], b=c["b"], e=c["e"], count=c["count"], q=c["n"] // c["b"],
                          rows=", ".join(map(str, c["never"])), where=where)
    return None


def _batches_verdict(m: dict):
    n, bs = m["n"], m["bs"]
    for e, row in enumerate(m["epochs"], start=1):
        sizes = row["sizes"]
        if not sizes:
            return failed(BATCHES_EMPTY, n=n, bs=bs)
        if min(sizes) < 2 and m["failure"]:
            return failed(BATCHES_ONE, n=n, bs=bs, k=n // bs, sizes=_sizes(sizes), error=m["failure"]["error"])
        if m["failure"]:
            return failed(BATCHES_RAISED, **m["failure"])
        if min(sizes) < bs:
            return failed(BATCHES_SHORT, n=n, bs=bs, sizes=_sizes(sizes), short=min(sizes))
        if row["repeated"] or row["missing"] > bs - 1:
            return failed(BATCHES_REPEATED, epoch=e, repeated=row["repeated"], missing=row["missing"])
    if m["warnings"]:
        return failed(BATCHES_WARNED, warning=m["warnings"][0])
    k = n // bs
    return passed(BATCHES_OK, bs=bs, k=k, used=k * bs, n=n, left=n - k * bs)


# ---------------------------------------------------------------------------- pipeline.order

ORDER_TITLE = Message(en="a seeded order, new every epoch", es="un orden con semilla, nuevo en cada época")
ORDER_OK = Message(
    en="the order depends on the loader's seed alone (seed 0 starts {a}…, seed 1 starts {c}…, whatever the global "
    "random state) and changes every epoch",
    es="el orden depende solo de la semilla del cargador (la semilla 0 empieza {a}…, la 1 empieza {c}…, sea cual "
    "sea el estado aleatorio global) y cambia en cada época",
)
ORDER_UNSHUFFLED = Message(
    en="the loader gives the examples in their stored order ({a}…) in every epoch: nothing is shuffled",
    es="el cargador da los ejemplos en su orden de almacenamiento ({a}…) en todas las épocas: no se baraja nada",
)
ORDER_GLOBAL = Message(
    en="two loaders built with seed=0 gave different orders ({a}… and {b}…) because the global random state "
    "differed: the order follows torch's global generator, not the loader's seed, so two runs of the same script "
    "differ (and so do the workers' random streams, which come from the same draw)",
    es="dos cargadores creados con seed=0 dieron órdenes distintos ({a}… y {b}…) porque el estado aleatorio "
    "global era distinto: el orden sigue al generador global de torch, no a la semilla del cargador, así que dos "
    "ejecuciones del mismo script difieren (y también los flujos aleatorios de los workers, que salen del mismo "
    "sorteo)",
)


@check("pipeline.order", early=True, family="pipeline", calls=("make_loader",), protocol="pipeline", title=ORDER_TITLE,
       cost=2, timeout=20.0)
def order(loop, lab) -> dict:
    from torch.utils.data import TensorDataset

    from checker.setting.instruments import scramble_global_rng

    X, index = _index_data(lab)
    bs = lab.track.thresholds.batch_size

    def orders(seed: int, rng: int) -> list[list[int]]:
        scramble_global_rng(rng)
        loader = loop.make_loader(TensorDataset(X, index), batch_size=bs, seed=seed, num_workers=0)
        scramble_global_rng(rng + 50)  # the global state moves between building the loader and using it
        return [[i for b in batches_ for i in b] for batches_ in _epochs(loader, 2)]

    a, b, c = orders(0, 1), orders(0, 2), orders(1, 1)

    def first_order(seed: int) -> list[int]:
        loader = loop.make_loader(TensorDataset(X, index), batch_size=bs, seed=seed, num_workers=0)
        return [i for batch in _epochs(loader, 1)[0] for i in batch]

    return {"a": a[0][:6], "b": b[0][:6], "c": c[0][:6], "same_seed_same_order": a == b,
            "seeds_differ": a[0] != c[0], "reshuffles": a[0] != a[1], "shuffled": a[0] != sorted(a[0]),
            "collisions": seed_collisions(first_order, lab.draw)}


@order.judge
def _(m: dict):
    from checker.checks.loader import order_verdict  # the same decision as loader.order's, in this track's words

    return order_verdict(m, ok=ORDER_OK, unshuffled=ORDER_UNSHUFFLED, global_=ORDER_GLOBAL)


# ---------------------------------------------------------------------------- pipeline.seed_domain

SEED_HEAD = 16
"""The indices of the first epoch's order kept at each point of the seed domain."""

SEED_DOMAIN_TITLE = Message(en="the reference's order at every seed of the domain",
                            es="el orden de la referencia en cada semilla del dominio")
SEED_DOMAIN_OK = Message(
    en="make_loader gives the reference's first order at each of the {k} seeds of the domain (0, every power of ten, "
    "{top}, the course's seeds)",
    es="make_loader da el primer orden de la referencia en cada una de las {k} semillas del dominio (0, cada potencia "
    "de diez, {top}, las semillas del curso)",
)
SEED_DOMAIN_OWN = Message(
    en="make_loader shuffles its own way (its first order differs from the reference's at each of the {k} seeds of "
    "the domain): pipeline.order judges its seeds",
    es="make_loader baraja a su manera (su primer orden difiere del de la referencia en cada una de las {k} semillas "
    "del dominio): pipeline.order juzga sus semillas",
)
SEED_DOMAIN_POINT = Message(
    en="make_loader(dataset, batch_size={b}, seed={seed}, num_workers=0) gave another first order ({got}…) than the "
    "reference ({want}…) [{where}], while at seed={agree} the two agree: a seed of that size is handled differently "
    "(cut short, capped or raised), so runs meant to differ may repeat each other",
    es="make_loader(dataset, batch_size={b}, seed={seed}, num_workers=0) dio otro primer orden ({got}…) que la "
    "referencia ({want}…) [{where}], mientras que con seed={agree} los dos coinciden: una semilla de ese tamaño se "
    "trata de otra manera (recortada, topada o subida), así que ejecuciones que deberían diferir pueden repetirse",
)


@check("pipeline.seed_domain", early=True, family="pipeline", calls=("make_loader",), protocol="pipeline",
       title=SEED_DOMAIN_TITLE, cost=15, timeout=20.0, reference=True)
def seed_domain(loop, lab) -> dict:
    """The first epoch's order (its first ``SEED_HEAD`` indices) at every point of the seed's domain (0, each power
    of ten, 2**32 - 1, the course's seeds), without workers: a seed reduced, capped or raised past some threshold
    shows as an order that leaves the reference's past it (or, for a floor, below it)."""
    from torch.utils.data import TensorDataset

    from checker.setting.coverage import points

    X, index = _index_data(lab)
    bs = lab.track.thresholds.batch_size
    out = []
    for seed in points(domain_of("make_loader", "seed")):
        loader = loop.make_loader(TensorDataset(X, index), batch_size=bs, seed=int(seed), num_workers=0)
        out.append({"seed": int(seed), "order": [i for batch in _epochs(loader, 1)[0] for i in batch][:SEED_HEAD]})
    return {"b": bs, "points": out}


@seed_domain.judge
def _(mine: dict, ref: dict):
    """Where the file's order agrees with the reference's at some seed of the domain, it must agree at every one (a
    loader that shuffles its own correct way agrees at none, and pipeline.order judges it)."""
    got, want = mine.get("points") or [], ref.get("points") or []
    if not want:
        return passed(SEED_DOMAIN_OWN, k=0)
    same = [g["seed"] == w["seed"] and g["order"] == w["order"] for g, w in zip(got, want, strict=False)]
    k, top = len(want), f"{domain_of('make_loader', 'seed').high:,}".replace(",", " ")
    if len(got) == len(want) and not any(same):
        return passed(SEED_DOMAIN_OWN, k=k)
    if len(got) == len(want) and all(same):
        return passed(SEED_DOMAIN_OK, k=k, top=top)
    agree = next((g["seed"] for g, ok in zip(got, same, strict=False) if ok), None)
    bad = next((i for i, ok in enumerate(same) if not ok), len(same))
    g = got[bad] if bad < len(got) else {"order": []}
    w = want[min(bad, len(want) - 1)]
    where = _at_point("make_loader", "seed", w["seed"], Message(en=f"seed {w['seed']}", es=f"semilla {w['seed']}"))
    return failed(SEED_DOMAIN_POINT, b=ref["b"], seed=w["seed"], got=_head(g["order"]), want=_head(w["order"]),
                  agree=agree, where=where)


def _head(xs: list[int]) -> str:
    return ", ".join(map(str, xs[:6]))


# ---------------------------------------------------------------------------- pipeline.workers

WORKERS = 2
EPOCH_WORKERS = 2
"""Epochs the worker check runs through one loader (to see whether the workers are forked again)."""


class ProbeDataset:
    """``n`` items, each ``(one draw of np.random.random(), the id of the process that drew it)``.

    A plain map-style dataset (``__len__``/``__getitem__``): what the learner's loader batches, and where
    each batch came from.
    """

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        import os

        import numpy as np
        import torch

        return torch.tensor([float(np.random.random())], dtype=torch.float64), torch.tensor(os.getpid())


def _worker_run(loop, lab, *, seed: int, rng: int, epochs: int, workers: int | None = WORKERS) -> list[list[dict]]:
    """Per epoch, per batch: the pid that served it and its NumPy draws (``workers`` None: num_workers not passed,
    the protocol's default)."""
    from checker.setting.instruments import scramble_global_rng

    scramble_global_rng(rng)
    extra = {} if workers is None else {"num_workers": workers}
    n, bs = len(lab.data.X_train), lab.track.thresholds.batch_size
    # two batches a worker at least, so that every worker serves some (8 workers over 225 rows: batches of 14)
    bs = max(SHOWN, min(bs, n // (2 * max(workers or WORKERS, 1))))
    loader = loop.make_loader(ProbeDataset(n), batch_size=bs, seed=seed, **extra)
    out = []
    for _ in range(epochs):
        out.append([{"pid": int(pid.reshape(-1)[0]), "draws": [float(v) for v in x.reshape(-1)]}
                    for x, pid in loader])
    del loader  # persistent workers go with their loader
    return out


WORKERS_TITLE = Message(en="workers with their own seeded streams", es="workers con flujos propios y con semilla")
WORKERS_OK = Message(
    en="with num_workers={w} the batches came from {w} worker processes, forked once for {e} epochs; each worker "
    "drew its own NumPy stream (worker A {a}…, worker B {b}…), the same again for the same seed and another for "
    "seed 1",
    es="con num_workers={w} los lotes vinieron de {w} procesos worker, creados una sola vez para {e} épocas; cada "
    "worker sacó su propio flujo de NumPy (worker A {a}…, worker B {b}…), el mismo otra vez con la misma semilla y "
    "otro con la semilla 1",
)
WORKERS_NONE = Message(
    en="make_loader(dataset, num_workers={w}) loaded every batch in the main process: the num_workers argument "
    "never reached the DataLoader",
    es="make_loader(dataset, num_workers={w}) cargó todos los lotes en el proceso principal: el argumento "
    "num_workers no llegó al DataLoader",
)
WORKERS_SAME_STREAM = Message(
    en="the {w} workers drew the same NumPy numbers: worker A's first batch starts {a}… and worker B's starts "
    "{b}…, so batch after batch the two workers give their examples identical augmentations. Something reseeds "
    "NumPy in each worker with one same number",
    es="los {w} workers sacaron los mismos números de NumPy: el primer lote del worker A empieza {a}… y el del "
    "worker B {b}…, así que lote tras lote los dos workers dan a sus ejemplos aumentos idénticos. Algo vuelve a "
    "fijar la semilla de NumPy en cada worker con un mismo número",
)
WORKERS_NOT_REPEATED = Message(
    en="two loaders built with seed=0, from different global random states, gave the workers different NumPy "
    "streams ({a}… and {c}…): the augmentations of a run do not depend on the loader's seed alone",
    es="dos cargadores creados con seed=0, desde estados aleatorios globales distintos, dieron a los workers "
    "flujos de NumPy distintos ({a}… y {c}…): los aumentos de una ejecución no dependen solo de la semilla del "
    "cargador",
)
WORKERS_SEED_IGNORED = Message(
    en="loaders built with seed=0 and seed=1 gave the workers the same NumPy stream ({a}…): the loader's seed "
    "does not reach the workers' random state, so every seed augments the data identically",
    es="los cargadores creados con seed=0 y seed=1 dieron a los workers el mismo flujo de NumPy ({a}…): la semilla "
    "del cargador no llega al estado aleatorio de los workers, así que todas las semillas aumentan los datos igual",
)
WORKERS_SAME_EPOCHS = Message(
    en="the workers drew the same NumPy numbers in epoch 2 as in epoch 1 ({a}…): every epoch repeats the same "
    "augmentations",
    es="los workers sacaron en la época 2 los mismos números de NumPy que en la 1 ({a}…): todas las épocas repiten "
    "los mismos aumentos",
)
WORKERS_REFORKED = Message(
    en="epoch 1 was served by worker processes {p1} and epoch 2 by {p2}: the workers are forked again at every "
    "epoch (each fork copies the process and restarts the workers) instead of being kept (persistent_workers)",
    es="la época 1 la sirvieron los procesos worker {p1} y la época 2 los {p2}: los workers se vuelven a crear en "
    "cada época (cada fork copia el proceso y reinicia los workers) en lugar de conservarse (persistent_workers)",
)


OTHER_WORKERS = int(domain_of("make_loader", "num_workers").high)
"""The top of num_workers' domain (``checker.setting.domains``: 0 to 8): a cap anywhere below it shows there."""
WORKER_POINTS = (0, 1, WORKERS, OTHER_WORKERS)
"""num_workers' domain at its bottom (the main process alone: a floor anywhere above shows), 1, the track's 2 and
the top: the workers that actually served the batches are counted at each."""
WORKERS_POINT = Message(
    en="make_loader(dataset, num_workers={w}) served its batches from {got} [{where}]: the num_workers argument "
    "does not reach the DataLoader as given (a cap or a floor on it)",
    es="make_loader(dataset, num_workers={w}) sirvió sus lotes desde {got} [{where}]: el argumento num_workers no "
    "llega tal cual al DataLoader (un tope o un mínimo sobre él)",
)
SERVED = {"main": Message(en="the main process, with no worker", es="el proceso principal, sin ningún worker"),
          "workers": Message(en="{n} worker process(es)", es="{n} proceso(s) worker")}
WORKERS_COUNT = Message(
    en="make_loader(dataset, num_workers={w}) served its batches from {got} worker process(es) instead of {w}: the "
    "num_workers argument does not reach the DataLoader as given",
    es="make_loader(dataset, num_workers={w}) sirvió sus lotes desde {got} proceso(s) worker en lugar de {w}: el "
    "argumento num_workers no llega tal cual al DataLoader",
)
WORKERS_DEFAULT = Message(
    en="make_loader(dataset) without num_workers served its batches from {got} worker process(es): the protocol's "
    "default is num_workers={w}",
    es="make_loader(dataset) sin num_workers sirvió sus lotes desde {got} proceso(s) worker: el valor por defecto "
    "del protocolo es num_workers={w}",
)
WORKERS_PAIRS = Message(
    en="worker {wa} of the loader with seed={sa} and worker {wb} of the loader with seed={sb} drew the same NumPy "
    "numbers ({a}…), as if each worker's stream followed seed + worker id: runs at neighbouring seeds share part of "
    "their augmentations. Every (seed, worker) pair needs a stream of its own: PyTorch already seeds each worker "
    "from the loader's generator, so no worker_init_fn is needed; one that reseeds NumPy must keep the streams "
    "apart and tied to the seed (for instance from torch.initial_seed(), which differs per worker and per seed)",
    es="el worker {wa} del cargador con seed={sa} y el worker {wb} del cargador con seed={sb} sacaron los mismos "
    "números de NumPy ({a}…), como si el flujo de cada worker siguiera a semilla + id del worker: ejecuciones con "
    "semillas vecinas comparten parte de sus aumentos. Cada par (semilla, worker) necesita su propio flujo: PyTorch "
    "ya fija la semilla de cada worker desde el generador del cargador, así que no hace falta worker_init_fn; uno "
    "que vuelva a fijar NumPy debe mantener los flujos separados y ligados a la semilla (por ejemplo a partir de "
    "torch.initial_seed(), distinto por worker y por semilla)",
)


@check("pipeline.workers", early=True, family="pipeline", calls=("make_loader",), protocol="pipeline",
       title=WORKERS_TITLE, cost=30, timeout=30.0)
def workers(loop, lab) -> dict:
    import os

    main = os.getpid()
    a = _worker_run(loop, lab, seed=0, rng=1, epochs=EPOCH_WORKERS)
    b = _worker_run(loop, lab, seed=0, rng=2, epochs=1)
    c = _worker_run(loop, lab, seed=1, rng=1, epochs=1, workers=None)  # num_workers at its default (2)
    d = _worker_run(loop, lab, seed=2, rng=1, epochs=1, workers=OTHER_WORKERS)

    first = a[0]
    streams = _streams(first)
    draws = [v for batch in first for v in batch["draws"]]
    return {
        "workers": WORKERS, "epochs": EPOCH_WORKERS, **_seed_worker_pairs(main, first, c[0], d[0]),
        "counts": _worker_counts(loop, lab, main, {WORKERS: first, OTHER_WORKERS: d[0]}),
        "in_main": sum(batch["pid"] == main for epoch in a for batch in epoch), **_numbered(a),
        "a": streams[0][0][:SHOWN] if streams else [], "b": streams[1][0][:SHOWN] if len(streams) > 1 else [],
        "c": [v for batch in b[0] for v in batch["draws"]][:SHOWN],
        "same_stream": len(streams) > 1 and streams[0][0] == streams[1][0],
        "repeated": [v for batch in b[0] for v in batch["draws"]] == draws,
        "seeds_differ": [v for batch in c[0] for v in batch["draws"]] != draws,
        "epochs_differ": [v for batch in a[1] for v in batch["draws"]] != draws,
    }


def _pids(epoch: list[dict]) -> list[int]:
    """The processes that served ``epoch``'s batches, in order of appearance."""
    return list(dict.fromkeys(batch["pid"] for batch in epoch))


def _numbered(epochs: list[list[dict]]) -> dict:
    """The workers of each epoch by order of appearance (1, 2, ...), not by process id: the figures, and the
    message, are the same at every grading."""
    number: dict[int, int] = {}
    for epoch in epochs:
        for pid in _pids(epoch):
            number.setdefault(pid, len(number) + 1)
    return {"pids": [sorted(number[p] for p in _pids(e)) for e in epochs], "n_pids": len(_pids(epochs[0]))}


def _streams(epoch: list[dict]) -> list[list]:
    """Each worker's draws in ``epoch``, batch by batch, the workers by order of appearance."""
    return [[batch["draws"] for batch in epoch if batch["pid"] == pid] for pid in _pids(epoch)]


def _seed_worker_pairs(main: int, seed0: list[dict], seed1: list[dict], seed2: list[dict]) -> dict:
    """From the first epochs of seed 0 (2 workers), seed 1 (num_workers at its default) and seed 2
    (``OTHER_WORKERS``): how many workers served seed 1's and seed 2's loaders (0: the main process did), and the
    first (seed, worker) pairs of different seeds, or of seed 2's workers, that drew the same NumPy numbers."""

    def workers_of(epoch: list[dict]) -> list[int]:
        return list(dict.fromkeys(batch["pid"] for batch in epoch))

    def first_draws(epoch: list[dict]) -> list[list[float]]:
        """Each worker's first batch of draws, the workers by order of appearance (worker 0, 1, ...)."""
        return [next(batch["draws"] for batch in epoch if batch["pid"] == pid) for pid in workers_of(epoch)]

    within = _pair_collision({k: [s] for k, s in enumerate(first_draws(seed2))})
    return {"pair": _pair_collision({0: first_draws(seed0), 1: first_draws(seed1), 2: first_draws(seed2)}),
            "default_workers": _served_by(main, seed1),
            "other": {"w": OTHER_WORKERS, "got": _served_by(main, seed2), "same": within}}


def _worker_counts(loop, lab, main: int, served: dict[int, list[dict]]) -> list[dict]:
    """At every point of ``WORKER_POINTS``, how many processes served the batches: ``served`` holds the epochs
    already run (by num_workers), the other points (0: the main process alone, and 1) get one epoch each."""
    counted = {}
    for w in WORKER_POINTS:
        epoch = served[w] if w in served else _worker_run(loop, lab, seed=3, rng=1, epochs=1, workers=w)[0]
        counted[w] = _served_by(main, epoch)
    return [{"w": w, "got": counted[w]} for w in sorted(counted)]


def _counts_verdict(m: dict):
    """The first point of num_workers' domain, from the bottom, whose loader was served by another number of
    processes than it asked for; None when none was."""
    for c in m.get("counts", []):
        if c["got"] != c["w"]:
            served = SERVED["main"] if c["got"] == 0 else _nested(SERVED["workers"], n=c["got"])
            where = _at_point("make_loader", "num_workers", c["w"], Message(en=f"num_workers={c['w']}",
                                                                            es=f"num_workers={c['w']}"))
            return failed(WORKERS_POINT, w=c["w"], got=served, where=where)
    return None


def _served_by(main: int, epoch: list[dict]) -> int:
    """How many worker processes served ``epoch``'s batches (0: the main process served one)."""
    return 0 if any(batch["pid"] == main for batch in epoch) else len(_pids(epoch))


def _pair_collision(by_seed: dict[int, list[list[float]]]) -> dict | None:
    """The first two (seed, worker) pairs of different seeds whose workers drew the same NumPy numbers, or None."""
    seen: dict[tuple, tuple[int, int]] = {}
    for seed, streams in by_seed.items():
        for worker, draws in enumerate(streams):
            key = tuple(draws[:SHOWN])
            if key in seen and seen[key][0] != seed:
                (sa, wa), (sb, wb) = seen[key], (seed, worker)
                return {"sa": sa, "wa": wa, "sb": sb, "wb": wb, "a": list(key)}
            seen.setdefault(key, (seed, worker))
    return None


def _served_verdict(m: dict):
    """Whether the workers asked for served the batches: at every point of num_workers' domain, and at its
    default; then whether two workers drew one stream. None when all is well."""
    w = m["workers"]
    if m["in_main"] and all(c["got"] == 0 for c in m.get("counts", [])):
        return failed(WORKERS_NONE, w=w)
    point = _counts_verdict(m)  # the smallest count first: the simplest failing case
    if point is not None:
        return point
    if m["in_main"] or m["n_pids"] < 2:
        return failed(WORKERS_NONE, w=w)
    if m["same_stream"]:
        return failed(WORKERS_SAME_STREAM, w=w, a=_fmt(m["a"]), b=_fmt(m["b"]))
    other = m.get("other")
    if other and other["got"] != other["w"]:
        return failed(WORKERS_COUNT, w=other["w"], got=other["got"])
    if "default_workers" in m and m["default_workers"] != WORKERS:
        return failed(WORKERS_DEFAULT, w=WORKERS, got=m["default_workers"])
    if other and other["same"]:
        return failed(WORKERS_SAME_STREAM, w=other["w"], a=_fmt(other["same"]["a"]), b=_fmt(other["same"]["a"]))
    return None


@workers.judge
def _(m: dict):
    w = m["workers"]
    served = _served_verdict(m)
    if served is not None:
        return served
    if not m["repeated"]:
        return failed(WORKERS_NOT_REPEATED, a=_fmt(m["a"]), c=_fmt(m["c"]))
    if not m["seeds_differ"]:
        return failed(WORKERS_SEED_IGNORED, a=_fmt(m["a"]))
    if not m["epochs_differ"]:
        return failed(WORKERS_SAME_EPOCHS, a=_fmt(m["a"]))
    if m.get("pair"):  # seeds differ as wholes, yet one seed's worker repeats another seed's worker
        pair = m["pair"]
        return failed(WORKERS_PAIRS, a=_fmt(pair["a"]), **{k: pair[k] for k in ("sa", "wa", "sb", "wb")})
    if m["pids"][0] != m["pids"][-1]:
        return failed(WORKERS_REFORKED, p1=", ".join(f"#{p}" for p in m["pids"][0]),
                      p2=", ".join(f"#{p}" for p in m["pids"][-1]))
    return passed(WORKERS_OK, w=w, e=m["epochs"], a=_fmt(m["a"]), b=_fmt(m["b"]))


# ---------------------------------------------------------------------------- pipeline.seeds

SEEDS_TITLE = Message(en="same seed, same augmentations", es="misma semilla, mismos aumentos")
SEEDS_OK = Message(
    en="two runs of seed_everything(0), make_dataset and make_loader(num_workers=0), from different global random "
    "states, jittered the first batch identically ({a}…), and seed_everything seeds random, NumPy and torch",
    es="dos ejecuciones de seed_everything(0), make_dataset y make_loader(num_workers=0), desde estados aleatorios "
    "globales distintos, aplicaron el mismo ruido al primer lote ({a}…), y seed_everything fija random, NumPy y "
    "torch",
)
SEEDS_JITTER = Message(
    en="two runs of seed_everything(0), make_dataset and make_loader(num_workers=0), from different global random "
    "states, gave the same batches different jitter ({a}… and {b}…): without workers the dataset draws from this "
    "process's NumPy generator, and after seed_everything its next draws still differed ({sources} not seeded)",
    es="dos ejecuciones de seed_everything(0), make_dataset y make_loader(num_workers=0), desde estados aleatorios "
    "globales distintos, aplicaron ruidos distintos a los mismos lotes ({a}… y {b}…): sin workers el dataset sortea "
    "con el generador de NumPy de este proceso, y tras seed_everything sus siguientes valores seguían siendo "
    "distintos ({sources} sin semilla)",
)
SEEDS_JITTER_OTHER = Message(
    en="two runs of seed_everything(0), make_dataset and make_loader(num_workers=0), from different global random "
    "states, gave the same batches different jitter ({a}… and {b}…), although seed_everything seeds random, NumPy "
    "and torch",
    es="dos ejecuciones de seed_everything(0), make_dataset y make_loader(num_workers=0), desde estados aleatorios "
    "globales distintos, aplicaron ruidos distintos a los mismos lotes ({a}… y {b}…), aunque seed_everything fija "
    "random, NumPy y torch",
)
SEEDS_EVERYTHING = Message(
    en="after seed_everything(seed=0) twice, from different global random states, the next draws from {sources} "
    "differed: those generators are not seeded",
    es="tras llamar dos veces a seed_everything(seed=0), desde estados aleatorios globales distintos, los "
    "siguientes valores de {sources} fueron distintos: esos generadores no quedan fijados",
)


@check("pipeline.seeds", early=True, family="pipeline", calls=("seed_everything", "make_dataset", "make_loader"),
       protocol="pipeline", title=SEEDS_TITLE, cost=1, timeout=20.0)
def seeds(loop, lab) -> dict:
    import random

    import numpy as np
    import torch

    from checker.setting.instruments import scramble_global_rng

    X, index = _index_data(lab)
    bs = lab.track.thresholds.batch_size
    draws, jitters = [], []
    for rng in (11, 12):
        scramble_global_rng(rng)
        loop.seed_everything(seed=0)
        draws.append({"random": random.random(), "NumPy": float(np.random.rand()), "torch": float(torch.rand(1))})
        scramble_global_rng(rng + 100)
        loop.seed_everything(seed=0)
        loader = loop.make_loader(loop.make_dataset(X, index, augment=True), batch_size=bs, seed=0, num_workers=0)
        jitter = []
        for xb, ib in loader:
            jitter += [float(v) for v in (torch.as_tensor(xb).detach().cpu().float() - X[ib.long()]).reshape(-1)]
        jitters.append(jitter)
    a, b = jitters
    return {"unseeded": [k for k in draws[0] if draws[0][k] != draws[1][k]], "same": a == b,
            "a": a[:SHOWN], "b": b[:SHOWN]}


@seeds.judge
def _(m: dict):
    sources = ", ".join(m["unseeded"])
    params = dict(a=_fmt(m["a"]), b=_fmt(m["b"]))
    if not m["same"]:
        if m["unseeded"]:
            return failed(SEEDS_JITTER, sources=sources, **params)
        return failed(SEEDS_JITTER_OTHER, **params)
    if m["unseeded"]:
        return failed(SEEDS_EVERYTHING, sources=sources)
    return passed(SEEDS_OK, **params)


# ---------------------------------------------------------------------------- pipeline.batchnorm

BN_EPOCHS = 2

BN_TITLE = Message(en="BatchNorm learns from training batches only",
                   es="BatchNorm aprende solo de los lotes de entrenamiento")
BN_OK = Message(
    en="over {e} epochs of {k} batches with a validation after each, BatchNorm counted {got} batches, one per "
    "training batch; evaluate left its running statistics as they were and gave the same {loss:.4f} / {acc:.3f} "
    "twice",
    es="en {e} épocas de {k} lotes con una validación tras cada una, BatchNorm contó {got} lotes, uno por lote de "
    "entrenamiento; evaluate dejó sus estadísticas acumuladas como estaban y dio el mismo {loss:.4f} / {acc:.3f} "
    "dos veces",
)
BN_EVAL_UPDATES = Message(
    en="evaluate changed BatchNorm's running statistics (batches counted {n0} -> {n1}, running mean moved by "
    "{moved:.4f}) and gave {l1:.4f} / {a1:.3f}, then {l2:.4f} / {a2:.3f} on the same model and data: validation "
    "ran in training mode, normalising by the validation batch itself and folding it into the statistics the "
    "model will use at inference",
    es="evaluate cambió las estadísticas acumuladas de BatchNorm (lotes contados {n0} -> {n1}, media acumulada "
    "desplazada {moved:.4f}) y dio {l1:.4f} / {a1:.3f}, luego {l2:.4f} / {a2:.3f} con el mismo modelo y datos: la "
    "validación se hizo en modo entrenamiento, normalizando con el propio lote de validación e incorporándolo a "
    "las estadísticas que el modelo usará en inferencia",
)
BN_TOO_MANY = Message(
    en="over {e} epochs of {k} training batches with a validation after each, BatchNorm counted {got} batches "
    "instead of {want}: {extra} extra update(s), from the validations, fed the held-out data into the running "
    "statistics",
    es="en {e} épocas de {k} lotes de entrenamiento con una validación tras cada una, BatchNorm contó {got} lotes "
    "en lugar de {want}: {extra} actualización(es) de más, de las validaciones, metieron los datos de validación "
    "en las estadísticas acumuladas",
)
BN_TOO_FEW = Message(
    en="over {e} epochs of {k} training batches with a validation after each, BatchNorm counted {got} batches "
    "instead of {want}: {missing} training batch(es) ran with BatchNorm frozen, in eval mode (and Dropout off), "
    "after a validation left the model there",
    es="en {e} épocas de {k} lotes de entrenamiento con una validación tras cada una, BatchNorm contó {got} lotes "
    "en lugar de {want}: {missing} lote(s) de entrenamiento se procesaron con BatchNorm congelado, en modo "
    "evaluación (y Dropout apagado), después de que una validación dejara el modelo así",
)


def _bn_layers(model):
    from torch import nn

    return [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


@check("pipeline.batchnorm", family="pipeline", calls=("make_dataset", "fit", "evaluate"), protocol="pipeline",
       title=BN_TITLE, cost=2, timeout=20.0)
def batchnorm(loop, lab) -> dict:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader

    d = lab.data
    bs = lab.track.thresholds.batch_size
    model = lab.track.model.build(0).to(lab.device)
    # the file's Dataset, batched by a loader of the checker's (full batches: the loader is not on trial here)
    loader = DataLoader(loop.make_dataset(d.X_train, d.y_train, augment=False), batch_size=bs, shuffle=True,
                        generator=torch.Generator().manual_seed(0), drop_last=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    loop.fit(model, optimizer, loader, loss_fn, BN_EPOCHS, val=(d.X_val, d.y_val), device=lab.device)
    layers = _bn_layers(model)
    counted = int(layers[0].num_batches_tracked) if layers else 0

    def stats():
        return [(t.detach().cpu().clone()) for bn in layers for t in (bn.running_mean, bn.running_var)]

    before, n0 = stats(), [int(bn.num_batches_tracked) for bn in layers]
    first = loop.evaluate(model, d.X_val, d.y_val, loss_fn, device=lab.device)
    second = loop.evaluate(model, d.X_val, d.y_val, loss_fn, device=lab.device)
    after, n1 = stats(), [int(bn.num_batches_tracked) for bn in layers]
    moved = max((float((x - y).abs().max()) for x, y in zip(before, after, strict=True)), default=0.0)
    return {"epochs": BN_EPOCHS, "batches": len(loader), "counted": counted, "n0": n0[0] if n0 else 0,
            "n1": n1[0] if n1 else 0, "moved": moved, "first": [float(v) for v in first],
            "second": [float(v) for v in second]}


@batchnorm.judge
def _(m: dict):
    e, k = m["epochs"], m["batches"]
    want, got = e * k, m["counted"]
    (l1, a1), (l2, a2) = m["first"], m["second"]
    if m["n1"] != m["n0"] or m["moved"] > 0:
        return failed(BN_EVAL_UPDATES, n0=m["n0"], n1=m["n1"], moved=m["moved"], l1=l1, a1=a1, l2=l2, a2=a2)
    if got > want:
        return failed(BN_TOO_MANY, e=e, k=k, got=got, want=want, extra=got - want)
    if got < want:
        return failed(BN_TOO_FEW, e=e, k=k, got=got, want=want, missing=want - got)
    return passed(BN_OK, e=e, k=k, got=got, loss=l1, acc=a1)
