"""Three-class track: reporting the best validation epoch and keeping the best weights.

The checks of protocol group "best" (``checker.loopfile.protocol.BEST``): ``best_epoch(history)`` and
``fit_best(...)``. They call only those two functions; the model, the data, the loader, the loss and the
optimizer are the checker's own (the track's MLP and split), so what they see is the two functions alone.

- ``best.best_epoch`` (differential): histories drawn fresh in the parent (from the draw's seed) with
  their lowest validation loss never at the last epoch, once at the first, twice tied with a later
  epoch, and the highest accuracy and the lowest training loss elsewhere; the file's answers are
  compared with the reference's.
- ``best.restores``: ``fit_best`` at a large SGD lr, where the validation loss turns up before the end;
  the model handed back must have the validation loss of the history's best epoch.
- ``best.history``: the exercise's run (Adam, the track's epochs): one row per epoch with its keys, the
  best epoch it names, and a model that generalises.
"""

from __future__ import annotations

import random
from typing import Any

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed
from checker.checks.common import close, nest, repeated_rows, scaled_loss, validation_set
from checker.setting.domains import domain_of

N_HISTORIES = 5
"""Histories drawn per run of ``best.best_epoch``."""
TIED = (1, 3)
"""Which of them hold a tie: a later epoch with the same lowest validation loss."""
LOSS_TOL = 1e-5
"""The model's validation loss against the one its history recorded: the same computation, re-associated."""
KEYS = ("epoch", "lr", "train_loss", "val_loss", "val_acc")
RESTORE_EPOCHS, RESTORE_LR = 12, 1.0
"""SGD at lr 1.0 for 12 epochs from model seed 0: on the reference the validation loss is lowest at
epoch 10 (0.2238), then turns up (0.5758, 0.4726), so the last weights are not the best."""


def _answer(value: Any) -> int | str:
    """A returned epoch as a JSON figure: a Python int as itself, anything else described (a NumPy integer
    too: the protocol asks for a Python int, which JSON, ``history[best - 1]`` and ``==`` all take as is)."""
    from checker.setting.instruments import type_name

    if type(value) is int:
        return value
    return f"a {type_name(value)} ({repr(value)[:40]})"


def _lowest(losses: list) -> int | None:
    """The epoch (from 1) of the first lowest of ``losses``; None if one is not a number."""
    if not losses or not all(isinstance(v, int | float) and v == v for v in losses):
        return None
    return losses.index(min(losses)) + 1


# ---------------------------------------------------------------------------- best.best_epoch


def draw_histories(seed: int) -> list[list[dict]]:
    """``N_HISTORIES`` histories shaped like ``fit``'s, drawn from ``seed`` (the parent redraws them to judge).

    In each one the lowest ``val_loss`` is never at the last epoch (and at the first in history 0); the
    histories in ``TIED`` repeat that lowest value at a later epoch; the training loss falls every epoch
    (its lowest is the last) and the highest ``val_acc`` sits at another epoch than the lowest loss. So
    the last epoch, the lowest training loss, the highest accuracy, the highest loss, a count from 0 and
    the last of a tie all give other answers than the right one.
    """
    rng = random.Random(seed)
    histories = []
    for k in range(N_HISTORIES):
        n = rng.randint(6, 40)
        best = 0 if k == 0 else rng.randrange(1, n - 1)
        low = round(rng.uniform(0.05, 0.6), 4)
        val = [round(low + rng.uniform(0.001, 1.5), 4) for _ in range(n)]
        val[best] = low
        if k in TIED:
            val[rng.randrange(best + 1, n)] = low
        step = rng.uniform(0.01, 0.02)
        train = [round(1.0 - i * step, 4) for i in range(n)]
        acc = [round(rng.uniform(0.4, 0.9), 4) for _ in range(n)]
        acc[rng.choice([i for i in range(n) if val[i] != low])] = round(rng.uniform(0.95, 1.0), 4)
        histories.append([
            {"epoch": i + 1, "lr": 0.1, "train_loss": train[i], "val_loss": val[i], "val_acc": acc[i]}
            for i in range(n)
        ])
    return histories


CLASS_HISTORIES = (
    Message(en="a history of one epoch", es="un historial de una época"),
    Message(en="the lowest at the last epoch", es="la menor en la última época"),
    Message(en="the lowest after {plateau} epochs without improvement, past any patience",
            es="la menor tras {plateau} épocas sin mejora, más allá de cualquier paciencia"),
    Message(en="a history of {n} epochs, the top of its domain, the lowest at its last epoch, {at}",
            es="un historial de {n} épocas, el máximo de su dominio, la menor en su última época, la {at}"),
)
"""The argument classes ``draw_histories`` leaves out (it keeps the lowest off the last epoch)."""


def class_histories(seed: int) -> list[tuple[list[dict], dict]]:
    """One history per class of ``CLASS_HISTORIES``, drawn from ``seed``, with the figures its label quotes."""
    rng = random.Random(seed ^ 0x5EED)

    def history(val: list[float]) -> list[dict]:
        acc = [round(rng.uniform(0.4, 0.9), 4) for _ in val]
        others = [i for i, v in enumerate(val) if v != min(val)]
        if others:  # the highest accuracy away from the lowest loss, as in draw_histories
            acc[rng.choice(others)] = round(rng.uniform(0.95, 1.0), 4)
        return [{"epoch": i + 1, "lr": 0.1, "train_loss": round(1.0 - i * 0.01, 4), "val_loss": v,
                 "val_acc": acc[i]} for i, v in enumerate(val)]

    one = [round(rng.uniform(0.1, 1.0), 4)]
    n = rng.randint(6, 30)
    last = [round(rng.uniform(0.5, 1.5), 4) for _ in range(n - 1)] + [round(rng.uniform(0.05, 0.4), 4)]
    first_low, plateau = rng.randint(3, 8), rng.randint(25, 40)
    early = [round(rng.uniform(0.5, 1.5), 4) for _ in range(first_low - 1)] + [0.45]
    flat = [round(rng.uniform(0.46, 0.9), 4) for _ in range(plateau)]
    late = early + flat + [round(rng.uniform(0.05, 0.4), 4)] + [round(rng.uniform(0.46, 0.9), 4)
                                                               for _ in range(rng.randint(0, 5))]
    # the longest history of the domain, its lowest at its last epoch: a best_epoch that looks at the first T epochs
    # only, for any T below, misses it
    top = domain_of("best_epoch", "history").high
    at = top
    longest = [round(rng.uniform(0.3, 1.5), 4) for _ in range(top)]
    longest[at - 1] = 0.05
    return [(history(one), {}), (history(last), {}), (history(late), {"plateau": plateau}),
            (history(longest), {"n": top, "at": at})]


BEST_TITLE = Message(en="best_epoch names the epoch of the lowest validation loss",
                     es="best_epoch nombra la época de menor pérdida de validación")
BEST_OK = Message(
    en="on {count} histories drawn with seed {seed} (6 to 40 epochs, two with a tie) best_epoch names the "
    "reference's epoch every time: the first with the lowest val_loss, counted from 1",
    es="en {count} historiales sacados con la semilla {seed} (de 6 a 40 épocas, dos con empate) best_epoch "
    "nombra siempre la época de la referencia: la primera con la menor val_loss, contando desde 1",
)
BEST_WRONG = Message(
    en="best_epoch(history) returned {got} for a {n}-epoch history (drawn with seed {seed}, history {k}) whose "
    "lowest val_loss, {low:.4f}, is at epoch {want}{tie}; {where}",
    es="best_epoch(history) devolvió {got} para un historial de {n} épocas (sacado con la semilla {seed}, "
    "historial {k}) cuya menor val_loss, {low:.4f}, está en la época {want}{tie}; {where}",
)
BEST_TIE = Message(en=" and again at epoch {later} (the first one counts)",
                   es=" y otra vez en la época {later} (cuenta la primera)")
BEST_AT = Message(
    en="epoch {got} has val_loss {loss:.4f}, train_loss {train:.4f} and val_acc {acc:.4f}",
    es="la época {got} tiene val_loss {loss:.4f}, train_loss {train:.4f} y val_acc {acc:.4f}",
)
BEST_NONE = Message(en="the history has no epoch {got}: epochs count from 1 to {n}",
                    es="el historial no tiene época {got}: las épocas van de 1 a {n}")
BEST_FORM = Message(
    en="best_epoch(history) returned {got} for a {n}-epoch history; the protocol asks for the epoch number as "
    "a Python int ({want} here: int(...) turns a NumPy integer into one)",
    es="best_epoch(history) devolvió {got} para un historial de {n} épocas; el protocolo pide el número de la "
    "época como int de Python ({want} aquí: int(...) convierte un entero de NumPy en uno)",
)
BEST_CLASS = Message(en="{detail} [{label}]", es="{detail} [{label}]")


@check("best.best_epoch", early=True, family="best", calls=("best_epoch",), protocol="best", title=BEST_TITLE, cost=1,
       timeout=20.0, reference=True)
def best_epoch(loop, lab) -> dict:
    seed = lab.draw.evaluate_seed
    answers = [_answer(loop.best_epoch(history)) for history in draw_histories(seed)]
    classes = [_answer(loop.best_epoch(history)) for history, _ in class_histories(seed)]
    return {"seed": seed, "answers": answers, "classes": classes}


@best_epoch.judge
def _(mine: dict, ref: dict):
    seed = ref["seed"]
    histories = draw_histories(seed)  # redrawn here, in the parent: the figures quoted are the parent's own
    classes = class_histories(seed)
    pairs = list(zip([h for h, _ in classes] + histories, mine.get("classes", []) + mine["answers"],
                     ref.get("classes", []) + ref["answers"], strict=False))
    for history, got, want in pairs:  # the form first: a NumPy integer is wrong whatever its value
        if not isinstance(got, int):
            return failed(BEST_FORM, got=got, n=len(history), want=want)
    # the simplest first: the argument classes (one epoch, the lowest last, past any patience), then the rest
    for j, ((history, facts), label, got, want) in enumerate(zip(classes, CLASS_HISTORIES, mine.get("classes", []),
                                                                 ref.get("classes", []), strict=False)):
        if got != want:
            detail = nest(_best_wrong(history, got, want, seed, len(histories) + j + 1))
            return failed(BEST_CLASS, detail=detail, label=Message(en=label.en.format(**facts),
                                                                   es=label.es.format(**facts)))
    for k, (history, got, want) in enumerate(zip(histories, mine["answers"], ref["answers"], strict=True)):
        if got == want:
            continue
        return _best_wrong(history, got, want, seed, k + 1)
    return passed(BEST_OK, count=len(histories), seed=seed)


def _best_wrong(history: list[dict], got, want: int, seed: int, k):
    """The verdict on one history where best_epoch returned ``got`` and the reference ``want``."""
    n = len(history)
    if not isinstance(got, int):
        return failed(BEST_FORM, got=got, n=n, want=want)
    val = [row["val_loss"] for row in history]
    low = val[want - 1]
    later = [i + 1 for i, v in enumerate(val) if v == low and i + 1 > want]
    tie = Message(en=BEST_TIE.en.format(later=later[0]), es=BEST_TIE.es.format(later=later[0])) if later \
        else Message(en="", es="")
    if 1 <= got <= n:
        row = history[got - 1]
        where = Message(en=BEST_AT.en.format(got=got, loss=row["val_loss"], train=row["train_loss"],
                                             acc=row["val_acc"]),
                        es=BEST_AT.es.format(got=got, loss=row["val_loss"], train=row["train_loss"],
                                             acc=row["val_acc"]))
    else:
        where = Message(en=BEST_NONE.en.format(got=got, n=n), es=BEST_NONE.es.format(got=got, n=n))
    return failed(BEST_WRONG, got=got, n=n, seed=seed, k=k, low=low, want=want, tie=tie, where=where)


# ---------------------------------------------------------------------------- best.restores


def _run_fit_best(loop, lab, *, optimizer: str, lr: float, epochs: int) -> dict:
    """``fit_best`` on the checker's model (seed 0), loader (the lesson's order) and optimizer; the figures
    of what it returned and of the model it handed back (measured by the checker, in eval mode)."""
    from checker.setting.instruments import Rig, finite, plain_number, type_name

    rig = Rig(lab, optimizer=optimizer, lr=lr, batch_size=lab.track.thresholds.batch_size)
    out = loop.fit_best(rig.model, rig.optimizer, rig.loader, rig.loss_fn, epochs, val=rig.val, device=rig.device)
    loss, acc = rig.figures(*rig.val)
    figures: dict[str, Any] = {"epochs": epochs, "lr": lr, "loss": finite(loss), "acc": acc,
                               "n_val": len(rig.val[1]), "trained": rig.tape.epoch}
    if not isinstance(out, tuple | list) or len(out) != 2 or not isinstance(out[0], list):
        return {**figures, "returned": f"a {type_name(out)} ({repr(out)[:60]})", "rows": None}
    history, best = out
    rows = []
    for row in history:
        if not isinstance(row, dict):
            rows.append({"form": type_name(row)})
            continue
        rows.append({str(key): plain_number(row[key]) if key in row else None for key in KEYS}
                    | {"missing": [key for key in KEYS if key not in row],
                       "not_plain": [key for key in KEYS if key in row and not isinstance(row[key], int | float)]})
    return {**figures, "returned": None, "rows": rows, "best": _answer(best)}


RESTORE_TITLE = Message(en="fit_best hands the model back with the best epoch's weights",
                        es="fit_best devuelve el modelo con los pesos de la mejor época")
RESTORE_OK = Message(
    en="after fit_best(..., epochs={epochs}) with SGD at lr={lr}, the model handed back has a validation loss of "
    "{loss:.4f}: epoch {want}'s, the lowest of the history, which it named as best (the last epoch's was "
    "{last:.4f})",
    es="tras fit_best(..., epochs={epochs}) con SGD a lr={lr}, el modelo devuelto tiene una pérdida de validación "
    "de {loss:.4f}: la de la época {want}, la menor del historial, que nombró como la mejor (la de la última "
    "época era {last:.4f})",
)
RESTORE_WRONG = Message(
    en="after fit_best(..., epochs={epochs}) with SGD at lr={lr}, the history's lowest val_loss is {low:.4f} at "
    "epoch {want}, but the model handed back has a validation loss of {loss:.4f}{which}: the weights handed back "
    "are not the best epoch's",
    es="tras fit_best(..., epochs={epochs}) con SGD a lr={lr}, la menor val_loss del historial es {low:.4f}, en "
    "la época {want}, pero el modelo devuelto tiene una pérdida de validación de {loss:.4f}{which}: los pesos "
    "devueltos no son los de la mejor época",
)
RESTORE_WHICH = Message(en=", epoch {epoch}'s{last}", es=", la de la época {epoch}{last}")
RESTORE_LAST = Message(en=" (the last)", es=" (la última)")
RESTORE_NAMED = Message(
    en="after fit_best(..., epochs={epochs}) with SGD at lr={lr}, the history's lowest val_loss is {low:.4f} at "
    "epoch {want}, but fit_best returned best={got}",
    es="tras fit_best(..., epochs={epochs}) con SGD a lr={lr}, la menor val_loss del historial es {low:.4f}, en "
    "la época {want}, pero fit_best devolvió best={got}",
)
FIT_BEST_FORM = Message(
    en="fit_best(..., epochs={epochs}) returned {got}; the protocol asks for a pair (history, best): a list of "
    "one dict per epoch and the best epoch's number",
    es="fit_best(..., epochs={epochs}) devolvió {got}; el protocolo pide un par (history, best): una lista con "
    "un dict por época y el número de la mejor época",
)
FIT_BEST_ROWS = Message(
    en="fit_best(..., epochs={epochs}) returned a history of {rows} rows (it trained {trained} epochs); the "
    "protocol asks for one row per epoch, {epochs} here",
    es="fit_best(..., epochs={epochs}) devolvió un historial de {rows} filas (entrenó {trained} épocas); el "
    "protocolo pide una fila por época, {epochs} aquí",
)
FIT_BEST_KEYS = Message(
    en="fit_best(..., epochs={epochs}): row {row} of the history {problem}; every row needs epoch, lr, "
    "train_loss, val_loss and val_acc as plain Python numbers",
    es="fit_best(..., epochs={epochs}): la fila {row} del historial {problem}; cada fila necesita epoch, lr, "
    "train_loss, val_loss y val_acc como números de Python",
)


FIT_BEST_TYPE = Message(
    en="fit_best(..., epochs={epochs}) returned best={got}; the protocol asks for the epoch number as a Python int "
    "(int(...) turns a NumPy integer into one)",
    es="fit_best(..., epochs={epochs}) devolvió best={got}; el protocolo pide el número de la época como int de "
    "Python (int(...) convierte un entero de NumPy en uno)",
)


def _shape_problem(m: dict, epochs: int) -> Any:
    """The first problem with what fit_best returned (form, rows, keys), as a Verdict; None when well formed."""
    if m["rows"] is None:
        return failed(FIT_BEST_FORM, epochs=epochs, got=m["returned"])
    if not isinstance(m.get("best"), int):
        return failed(FIT_BEST_TYPE, epochs=epochs, got=m.get("best"))
    if len(m["rows"]) != epochs:
        return failed(FIT_BEST_ROWS, epochs=epochs, rows=len(m["rows"]), trained=m["trained"])
    for i, row in enumerate(m["rows"], start=1):
        if "form" in row:
            problem = Message(en=f"is a {row['form']}, not a dict", es=f"es un {row['form']}, no un dict")
        elif row["missing"]:
            keys = ", ".join(row["missing"])
            problem = Message(en=f"has no {keys}", es=f"no tiene {keys}")
        elif row["not_plain"]:
            keys = ", ".join(row["not_plain"])
            problem = Message(en=f"holds {keys} as something else than a plain number",
                              es=f"guarda {keys} como algo que no es un número de Python")
        else:
            continue
        return failed(FIT_BEST_KEYS, epochs=epochs, row=i, problem=problem)
    return None


@check("best.restores", family="best", calls=("fit_best", "fit"), protocol="best", title=RESTORE_TITLE, cost=18,
       timeout=30.0)
def restores(loop, lab) -> dict:
    out = _run_fit_best(loop, lab, optimizer="sgd", lr=RESTORE_LR, epochs=RESTORE_EPOCHS)
    out["combined"] = _combined(loop, lab)
    out["edges"] = [_combined(loop, lab, edge) for edge in _edge_settings(lab)]
    return out


COMBINED_EPOCHS = 5
"""Epochs of the run with every optional argument of fit_best at once (a scheduler, a clip, a device)."""


def _combined_setting(lab) -> dict:
    """The run's scheduler and clip: from the draw where there is one (fresh every run), else fixed."""
    draw = getattr(getattr(lab, "draw", None), "fit", None)
    rng = random.Random(getattr(draw, "model_seed", 7))
    return {"lr": float(f"{rng.uniform(0.2, 0.8):.2f}"), "gamma": float(f"{rng.uniform(0.3, 0.9):.2f}"),
            "step": rng.choice((1, 2)), "clip": float(f"{rng.uniform(0.05, 0.5):.2f}"), "epochs": COMBINED_EPOCHS}


EDGE_ROWS = 32
"""Rows (taken whole, one batch an epoch) of the run at the top of the epochs' domain."""


def _edge_settings(lab) -> list[dict]:
    """The combined run again at the ends of fit_best's domains: one epoch on a big loader (the training rows
    repeated to 20,480, batches of 1,024) validated on a big set (21,504 rows); one step on a single batch of
    20,000 rows (the batch-size domain's top) and one of 19,997 (a prime), no clip; and 128 epochs on a few rows taken
    whole at SGD's lr 5 with a clip norm at the bottom of its domain (1e-4: it binds, so the steps are lr·1e-4)."""
    from checker.setting.coverage import BATCH_LR, BATCH_SCALE, BIG_BATCH, BIG_BATCHES, BIG_ROWS

    s = _combined_setting(lab)
    return [{**s, "epochs": domain_of("fit_best", "epochs").low, "rows": BIG_ROWS, "batch": BIG_BATCH,
             "big_val": True},
            # the batches handed in at the top of the batch-size domain (``coverage.big_batch_cases``): one step
            *({**s, "epochs": 1, "rows": b, "batch": b, "lr": BATCH_LR, "scale": BATCH_SCALE, "clip": None}
              for b in BIG_BATCHES),
            {**s, "epochs": domain_of("fit_best", "epochs").high, "rows": EDGE_ROWS, "batch": EDGE_ROWS, "lr": 5.0,
             "clip": float(domain_of("fit_best", "clip_norm").low), "take": True},
            *_clip_settings(s), *_lr_settings(s)]


def _lr_settings(s: dict) -> list[dict]:
    """One epoch per optimizer at every point of make_optimizer's lr domain for it, without a clip, on the first
    rows in small batches (``coverage.lr_cases``): the optimizer handed in is an argument too, and a fit_best that
    acts on its lr past some threshold trains otherwise than fit there. SGD's loss is scaled by 0.1/lr below 0.1
    so that its steps show."""
    from checker.setting.coverage import LR_BATCH, LR_ROWS, lr_points

    return [{**s, "epochs": 1, "clip": None, "opt": name, "lr": lr, "rows": LR_ROWS, "batch": LR_BATCH, "take": True,
             **({"scale": scale} if scale is not None else {})} for name, lr, scale in lr_points()]


LOSS_SCALE = 1e5
"""The clip runs' loss, scaled: the first gradient's norm (0.28 or more on every track) becomes 2.8e4 or more, above
every point of the clip norm's domain (up to 1e4), so each clip binds."""


def _clip_settings(s: dict) -> list[dict]:
    """One epoch at every point of the clip norm's domain (each power of ten from 1e-4 to 1e4, the course's own),
    under a loss scaled by ``LOSS_SCALE`` so that every one binds, at lr 0.1/clip (steps of 0.1 whatever the clip):
    a clip capped, raised or dropped past any threshold moves the weights otherwise."""
    from checker.setting.coverage import points

    return [{**s, "epochs": 1, "clip": float(c), "lr": float(f"{0.1 / c:.3g}"), "scale": LOSS_SCALE}
            for c in points(domain_of("fit_best", "clip_norm"))]


def _edge_data(lab, s: dict):
    """The training rows and the validation set of setting ``s`` (``_edge_settings``); None: the rig's own."""
    d = lab.data
    if "rows" not in s:
        return None, None, None
    if s.get("take"):
        X, y = d.X_train[:s["rows"]], d.y_train[:s["rows"]]
    else:
        X, y = repeated_rows(d.X_train, d.y_train, s["rows"])
    return X, y, validation_set(lab, s.get("big_val", False))


def _combined(loop, lab, setting: dict | None = None) -> dict:
    """fit_best and the file's own fit, each from the same start, with a StepLR scheduler, a clip norm that binds,
    validation and a device, all at once: fit_best trains exactly as fit does, so their histories must agree.
    ``setting``: another run's epochs, lr, clip and data (``_edge_settings``)."""
    import torch

    from checker.setting.instruments import Rig, plain_number

    s = setting or _combined_setting(lab)
    X, y, val = _edge_data(lab, s)
    histories = []
    for which in ("fit_best", "fit"):
        rig = Rig(lab, optimizer=s.get("opt", "sgd"), lr=s["lr"],
                  batch_size=s.get("batch", lab.track.thresholds.batch_size), X=X, y=y)
        scheduler = torch.optim.lr_scheduler.StepLR(rig.optimizer, step_size=s["step"], gamma=s["gamma"])
        kwargs = dict(val=val or rig.val, scheduler=scheduler, clip_norm=s["clip"], device=rig.device)
        try:
            out = getattr(loop, which)(rig.model, rig.optimizer, rig.loader, scaled_loss(rig.loss_fn, s.get("scale")),
                                       s["epochs"], **kwargs)
        except Exception as exc:  # noqa: BLE001 - the file's error is the figure
            return {**s, "raised": f"{which}: {type(exc).__name__}: {exc}"[:200]}
        history = out[0] if which == "fit_best" and isinstance(out, tuple | list) and len(out) == 2 else out
        histories.append([{k: plain_number(row.get(k)) for k in KEYS} if isinstance(row, dict) else None
                          for row in (history if isinstance(history, list) else [])])
    rows = len(X) if X is not None else len(lab.data.X_train)
    val_rows = len(val[0]) if val is not None else len(lab.data.X_val)
    return {**s, "fit_best": histories[0], "fit": histories[1], "n": rows, "n_val": val_rows}


COMBINED_DIFF = Message(
    en="fit_best(..., epochs={epochs}, val=..., scheduler=StepLR(step_size={step}, gamma={gamma}), clip_norm={clip}, "
    "device=...) with {opt} at lr={lr} and fit with the same arguments, from the same start, on {n} training and "
    "{n_val} validation rows, disagree: {what}. fit_best trains exactly as fit does, every optional argument "
    "included",
    es="fit_best(..., epochs={epochs}, val=..., scheduler=StepLR(step_size={step}, gamma={gamma}), clip_norm={clip}, "
    "device=...) con {opt} a lr={lr} y fit con los mismos argumentos, desde el mismo inicio, sobre {n} filas de "
    "entrenamiento y {n_val} de validación, no coinciden: {what}. fit_best entrena exactamente como fit, con todos "
    "los argumentos opcionales",
)


def _combined_verdict(c: dict | None):
    """None when fit_best and fit agree on every row of the combined run, else the failure."""
    if not c:
        return None
    args = {k: c[k] for k in ("epochs", "step", "gamma", "clip", "lr")}
    args.update(n=c.get("n", "?"), n_val=c.get("n_val", "?"), opt="Adam" if c.get("opt") == "adam" else "SGD")
    if c.get("raised"):
        return failed(COMBINED_DIFF, what=Message(en=f"{c['raised']} was raised", es=f"se lanzó {c['raised']}"),
                      **args)
    mine, want = c["fit_best"], c["fit"]
    if len(mine) != len(want):
        return failed(COMBINED_DIFF, what=Message(en=f"{len(mine)} history rows against {len(want)}",
                                                  es=f"{len(mine)} filas de historial frente a {len(want)}"), **args)
    for epoch, (got, row) in enumerate(zip(mine, want, strict=True), start=1):
        for key in KEYS:
            g, w = (got or {}).get(key), (row or {}).get(key)
            if w is not None and not close(g, w, rel=LOSS_TOL):
                what = Message(en=f"epoch {epoch}'s {key} is {g} against fit's {w}",
                               es=f"el {key} de la época {epoch} es {g} frente al {w} de fit")
                return failed(COMBINED_DIFF, what=what, **args)
    return None


@restores.judge
def _(m: dict):
    epochs, lr = RESTORE_EPOCHS, RESTORE_LR
    problem = _shape_problem(m, epochs)
    if problem is not None:
        return problem
    val = [row["val_loss"] for row in m["rows"]]
    want = _lowest(val)
    if want is None:
        return failed(FIT_BEST_KEYS, epochs=epochs, row=1,
                      problem=Message(en="holds a val_loss that is not a number",
                                      es="guarda una val_loss que no es un número"))
    low, args = val[want - 1], dict(epochs=epochs, lr=lr, want=want)
    if not close(m["loss"], low, rel=LOSS_TOL):
        # whose weights came back: the epoch whose recorded val_loss the model has now, if any
        same = [i + 1 for i, v in enumerate(val) if close(m["loss"], v, rel=LOSS_TOL)]
        which = Message(en="", es="")
        if same:
            last = RESTORE_LAST if same[-1] == epochs else Message(en="", es="")
            which = Message(en=RESTORE_WHICH.en.format(epoch=same[-1], last=last.en),
                            es=RESTORE_WHICH.es.format(epoch=same[-1], last=last.es))
        loss = m["loss"] if m["loss"] is not None else float("nan")
        return failed(RESTORE_WRONG, low=low, loss=loss, which=which, **args)
    if m["best"] != want:
        return failed(RESTORE_NAMED, low=low, got=m["best"], **args)
    for run in (m.get("combined"), *m.get("edges", ())):
        combined = _combined_verdict(run)
        if combined is not None:
            return combined
    return passed(RESTORE_OK, loss=m["loss"], last=val[-1], **args)


# ---------------------------------------------------------------------------- best.history

HISTORY_TITLE = Message(en="fit_best: the exercise's run, one row per epoch, the best epoch named",
                        es="fit_best: la ejecución del ejercicio, una fila por época, la mejor época nombrada")
HISTORY_OK = Message(
    en="fit_best(..., epochs={epochs}) with Adam at lr={lr} returned {epochs} rows with epoch, lr, train_loss, "
    "val_loss and val_acc, and named epoch {best} as best (val_loss {low:.4f}); the model handed back "
    "classifies {acc:.1%} of the {n} validation points right",
    es="fit_best(..., epochs={epochs}) con Adam a lr={lr} devolvió {epochs} filas con epoch, lr, train_loss, "
    "val_loss y val_acc, y nombró la época {best} como la mejor (val_loss {low:.4f}); el modelo devuelto "
    "clasifica bien el {acc:.1%} de los {n} puntos de validación",
)
HISTORY_NUMBERING = Message(
    en="fit_best(..., epochs={epochs}): the history's epochs read {got}; they count from 1 to {epochs}",
    es="fit_best(..., epochs={epochs}): las épocas del historial son {got}; van de 1 a {epochs}",
)
HISTORY_NAMED = Message(
    en="fit_best(..., epochs={epochs}) with Adam at lr={lr} returned best={got}, but the history's lowest "
    "val_loss, {low:.4f}, is at epoch {want}",
    es="fit_best(..., epochs={epochs}) con Adam a lr={lr} devolvió best={got}, pero la menor val_loss del "
    "historial, {low:.4f}, está en la época {want}",
)
HISTORY_ACC = Message(
    en="after fit_best(..., epochs={epochs}) with Adam at lr={lr} the model handed back classifies only "
    "{acc:.1%} of the {n} validation points right (best epoch {best}, val_loss {low:.4f}); the exercise's loop "
    "reaches about {reached:.1%}, and at least {min_acc:.0%} is expected",
    es="tras fit_best(..., epochs={epochs}) con Adam a lr={lr} el modelo devuelto clasifica bien solo el "
    "{acc:.1%} de los {n} puntos de validación (mejor época {best}, val_loss {low:.4f}); el bucle del ejercicio "
    "llega a un {reached:.1%}, y se espera al menos un {min_acc:.0%}",
)


@check("best.history", family="best", calls=("fit_best",), protocol="best", title=HISTORY_TITLE, cost=120,
       timeout=40.0)
def history(loop, lab) -> dict:
    t = lab.track.thresholds
    return _run_fit_best(loop, lab, optimizer="adam", lr=t.converge_lr, epochs=t.epochs)


@history.judge
def _(m: dict):
    t = judged_track().thresholds
    epochs, lr = t.epochs, t.converge_lr
    problem = _shape_problem(m, epochs)
    if problem is not None:
        return problem
    numbers = [row["epoch"] for row in m["rows"]]
    if numbers != list(range(1, epochs + 1)):
        shown = ", ".join(f"{v:g}" if v is not None else "?" for v in numbers[:3]) + f", …, {numbers[-1]:g}"
        return failed(HISTORY_NUMBERING, epochs=epochs, got=shown)
    val = [row["val_loss"] for row in m["rows"]]
    want = _lowest(val)
    if want is None:
        return failed(FIT_BEST_KEYS, epochs=epochs, row=1,
                      problem=Message(en="holds a val_loss that is not a number",
                                      es="guarda una val_loss que no es un número"))
    args = dict(epochs=epochs, lr=lr, low=val[want - 1])
    if m["best"] != want:
        return failed(HISTORY_NAMED, got=m["best"], want=want, **args)
    figures = dict(best=want, acc=m["acc"], n=m["n_val"], **args)
    if m["acc"] < t.converge_acc:
        return failed(HISTORY_ACC, reached=t.converge_reached, min_acc=t.converge_acc, **figures)
    return passed(HISTORY_OK, **figures)
