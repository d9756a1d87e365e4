"""The reference-free checks on a project's own loop: each judges what the runner observed.

Same families and ids as kata's checks on loop files (``steps.per_batch``, ``modes.eval``...), with messages
that speak of the project's own functions and put the line where the fault was seen in front.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from checker.base.i18n import Message
from checker.project.binding import takes
from checker.project.frames import Place, place_of
from checker.project.report import Result, Status
from checker.setting.instruments import plain_number

GRAD_TOL = 1e-4
"""Relative distance between the gradient step() used and the batch's own one that is round-off only."""

OVERFIT_RATIO = 0.1
"""steps.overfit: the loss on a few examples must fall under this fraction of where it started."""


def _name(fn: Callable | None, default: str) -> str:
    name = getattr(fn, "__name__", default)
    return default if name == "<lambda>" else name


def _result(id: str, title: Message, status: Status, message: Message, place: Place | None = None,
            **params: Any) -> Result:
    return Result(id, title, status, message, params, place)


# ---------------------------------------------------------------------------- steps

PER_BATCH = Message(en="one optimizer step per batch", es="un paso del optimizador por lote")
PER_BATCH_OK = Message(en="{epochs} epochs of {batches} batches gave {batches} optimizer steps each",
                       es="{epochs} épocas de {batches} lotes dieron {batches} pasos del optimizador cada una")
PER_BATCH_MORE = Message(
    en="in epoch {epoch}, {function}() called optimizer.step() {steps} times for {batches} batches: an extra "
    "step() applies a gradient a second time (or an empty one), so the weights move where no batch asked",
    es="en la época {epoch}, {function}() llamó a optimizer.step() {steps} veces para {batches} lotes: un "
    "step() de más aplica un gradiente por segunda vez (o uno vacío), así que los pesos se mueven hacia donde "
    "ningún lote pidió",
)
PER_BATCH_FEWER = Message(
    en="in epoch {epoch}, {function}() called optimizer.step() {steps} time(s) for {batches} batches: the "
    "weights should change once for every batch, else most batches teach the model nothing",
    es="en la época {epoch}, {function}() llamó a optimizer.step() {steps} vez/veces para {batches} lotes: los "
    "pesos deberían cambiar una vez por cada lote, si no la mayoría de los lotes no le enseña nada al modelo",
)


def per_batch(p, run) -> Result:
    fn = _name(p.train, "train")
    for epoch, batches in enumerate(run.batches, start=1):
        steps = [e for e in run.log.of("step") if e.epoch == epoch]
        if len(steps) > batches:
            return _result("steps.per_batch", PER_BATCH, Status.FAILED, PER_BATCH_MORE, steps[batches].place,
                           epoch=epoch, function=fn, steps=len(steps), batches=batches)
        if len(steps) < batches:
            place = steps[-1].place if steps else place_of(p.train)
            return _result("steps.per_batch", PER_BATCH, Status.FAILED, PER_BATCH_FEWER, place,
                           epoch=epoch, function=fn, steps=len(steps), batches=batches)
    return _result("steps.per_batch", PER_BATCH, Status.PASSED, PER_BATCH_OK, epochs=len(run.batches),
                   batches=run.batches[0] if run.batches else 0)


FRESH = Message(en="fresh gradients at every step", es="gradientes frescos en cada paso")
FRESH_OK = Message(en="at all {n} steps, step() used exactly the current batch's gradient",
                   es="en los {n} pasos, step() usó exactamente el gradiente del lote actual")
FRESH_NO_BACKWARD = Message(
    en="optimizer.step() ran with no backward() since the previous step, and found .grad empty: the update "
    "uses no gradient at all, so the model never learns",
    es="optimizer.step() se ejecutó sin ningún backward() desde el paso anterior y encontró .grad vacío: la "
    "actualización no usa ningún gradiente, así que el modelo no aprende nunca",
)
FRESH_DETACHED = Message(
    en="the loss backward() ran on here has no autograd path back to the model's weights (its gradient with "
    "respect to them is empty): something between the model's output and the loss cut the graph (.detach(), "
    ".item(), a new tensor), so the model cannot learn from it",
    es="la pérdida sobre la que se ejecutó backward() aquí no tiene camino de autograd hasta los pesos del "
    "modelo (su gradiente respecto a ellos está vacío): algo entre la salida del modelo y la pérdida cortó el "
    "grafo (.detach(), .item(), un tensor nuevo), así que el modelo no puede aprender de ella",
)
FRESH_MISSING = Message(
    en="optimizer.step() found .grad empty (None or all zeros), although the batch's loss has a gradient of norm "
    "{raw:.3g}: zero_grad() ran between backward() and step(), or step() ran before backward()",
    es="optimizer.step() encontró .grad vacío (None o todo ceros), aunque la pérdida del lote tiene un gradiente "
    "de norma {raw:.3g}: zero_grad() se ejecutó entre backward() y step(), o step() antes de backward()",
)
FRESH_ACCUMULATED = Message(
    en="optimizer.step() used the gradients of {k} batches added up (norm {norm:.3g}, this batch's own is "
    "{raw:.3g}): .grad still held the earlier batches' gradients, since zero_grad() did not run before this "
    "batch's backward()",
    es="optimizer.step() usó los gradientes de {k} lotes sumados (norma {norm:.3g}; la del propio lote es "
    "{raw:.3g}): .grad conservaba los gradientes de lotes anteriores, porque zero_grad() no se ejecutó antes "
    "del backward() de este lote",
)
FRESH_OTHER = Message(
    en="optimizer.step() used a gradient that differs from the current batch's own by {rel:.1%} (norm {norm:.3g} "
    "instead of {raw:.3g}): the update does not follow the batch just seen",
    es="optimizer.step() usó un gradiente que difiere del propio del lote actual en un {rel:.1%} (norma "
    "{norm:.3g} en lugar de {raw:.3g}): la actualización no sigue al lote recién visto",
)


def _rel(got, want) -> float:
    scale = float(want.norm())
    diff = float((got - want).norm())
    return diff / scale if scale > 0 else (0.0 if diff == 0 else math.inf)


def _clipped(grad, clip: float | None):
    if clip is None:
        return grad
    return grad * min(1.0, clip / (float(grad.norm()) + 1e-6))


def _step_rows(p, run) -> list[dict]:
    """Each training step with the batch's own gradient (the sum of the backward()s since the step before)."""
    rows, since, prev = [], [], None
    for e in run.log.events:
        if e.phase != "train":
            continue
        if e.kind == "backward":
            since.append(e)
        elif e.kind == "step":
            own = sum((b.data["grad"] for b in since), start=0 * e.data["grad"]) if since else None
            rows.append({"event": e, "own": own, "since": since, "prev": prev})
            since, prev = [], e.data["grad"]
    return rows


def _fresh_fault(row: dict, clip: float | None) -> tuple[Message, Place | None, dict] | None:
    e, own, since = row["event"], row["own"], row["since"]
    got = e.data["grad"]
    if not since:
        return (FRESH_NO_BACKWARD, e.place, {}) if e.data["missing"] else None
    detached = next((b for b in since if not b.data.get("connected", True)), None)
    if detached is not None:
        return FRESH_DETACHED, detached.place, {}
    raw = float(own.norm())
    if e.data["missing"]:
        return FRESH_MISSING, e.place, {"raw": raw}
    if min(_rel(got, own), _rel(got, _clipped(own, clip))) <= GRAD_TOL:
        return None
    prev = row["prev"]
    if prev is not None and min(_rel(got, prev + own), _rel(got, _clipped(prev + own, clip))) <= GRAD_TOL:
        # the step before used its own batch's gradient (else it failed first): two batches added up here
        return FRESH_ACCUMULATED, e.place, {"k": 2, "norm": float(got.norm()), "raw": raw}
    return FRESH_OTHER, e.place, {"rel": _rel(got, own), "norm": float(got.norm()), "raw": raw}


def fresh_grads(p, run) -> Result:
    rows = _step_rows(p, run)
    for row in rows:
        fault = _fresh_fault(row, p.clip_norm)
        if fault is not None:
            message, place, params = fault
            return _result("steps.fresh_grads", FRESH, Status.FAILED, message, place, **params)
    return _result("steps.fresh_grads", FRESH, Status.PASSED, FRESH_OK, n=len(rows))


OVERFIT = Message(en="overfit a few examples", es="sobreajustar unos pocos ejemplos")
OVERFIT_OK = Message(
    en="{epochs} epoch(s) of {function}() on {n} examples took its loss from {first:.4g} to {last:.4g}",
    es="{epochs} época(s) de {function}() sobre {n} ejemplos bajaron su pérdida de {first:.4g} a {last:.4g}",
)
OVERFIT_FAIL = Message(
    en="{epochs} epochs of {function}() on just {n} examples took its loss only from {first:.4g} to {last:.4g} "
    "(should fall under a tenth of where it started): a model memorises a handful of examples easily, so the "
    "steps do not learn; look at what happens between the forward pass, the loss and the update",
    es="{epochs} épocas de {function}() sobre solo {n} ejemplos bajaron su pérdida solo de {first:.4g} a "
    "{last:.4g} (debería quedar bajo una décima parte de la inicial): un modelo memoriza unos pocos ejemplos "
    "sin esfuerzo, así que los pasos no aprenden; mira qué pasa entre la pasada hacia delante, la pérdida y la "
    "actualización",
)
OVERFIT_NO_LOSS = Message(
    en="{function}() never called backward() on a loss with a single value, so kata could not follow its loss",
    es="{function}() no llamó nunca a backward() sobre una pérdida de un solo valor, así que kata no pudo "
    "seguir su pérdida",
)
NOT_POSITIVE = Message(
    en="the loss {function}() computes started at {first:.4g}, below zero: a loss that measures an error "
    "(cross-entropy, the NLL of log-probabilities, MSE) never is; nll_loss given probabilities instead of "
    "log-probabilities, or a softmax before a loss that applies its own, gives this",
    es="la pérdida que calcula {function}() empezó en {first:.4g}, bajo cero: una pérdida que mide un error "
    "(entropía cruzada, la NLL de log-probabilidades, MSE) nunca lo está; nll_loss con probabilidades en vez de "
    "log-probabilidades, o un softmax antes de una pérdida que aplica el suyo, da esto",
)


def overfit(p, observed: tuple[list[float], Place | None], n: int) -> Result:
    losses, place = observed
    fn = _name(p.train, "train")
    if not losses:
        return _result("steps.overfit", OVERFIT, Status.FAILED, OVERFIT_NO_LOSS, place_of(p.train), function=fn)
    first, last = losses[0], losses[-1]
    if first < 0:
        return _result("steps.overfit", OVERFIT, Status.FAILED, NOT_POSITIVE, place, function=fn, first=first)
    params = dict(epochs=len(losses), function=fn, n=n, first=first, last=last)
    if last <= OVERFIT_RATIO * first:
        return _result("steps.overfit", OVERFIT, Status.PASSED, OVERFIT_OK, **params)
    return _result("steps.overfit", OVERFIT, Status.FAILED, OVERFIT_FAIL, place, **params)


# ---------------------------------------------------------------------------- modes

TRAIN_MODE = Message(en="training mode in training", es="modo entrenamiento al entrenar")
TRAIN_MODE_OK = Message(en="all {n} forward passes in {function}() ran in training mode",
                        es="las {n} pasadas hacia delante de {function}() se hicieron en modo entrenamiento")
TRAIN_MODE_FAIL = Message(
    en="in epoch {epoch}, {function}() ran the model in eval mode (after an evaluation left it there): call "
    "model.train() at the start of every training epoch, or dropout and batch norm train as if evaluating",
    es="en la época {epoch}, {function}() ejecutó el modelo en modo evaluación (una evaluación lo dejó así): "
    "llama a model.train() al empezar cada época de entrenamiento, o el dropout y la batch norm entrenan como si "
    "evaluasen",
)


def train_mode(p, run) -> Result:
    fn = _name(p.train, "train")
    forwards = run.log.of("forward", "train")
    bad = next((e for e in forwards if not e.data["training"]), None)
    if bad is not None:
        return _result("modes.train", TRAIN_MODE, Status.FAILED, TRAIN_MODE_FAIL, bad.place, epoch=bad.epoch,
                       function=fn)
    return _result("modes.train", TRAIN_MODE, Status.PASSED, TRAIN_MODE_OK, n=len(forwards), function=fn)


EVAL_MODE = Message(en="eval mode and no graph in evaluation", es="modo evaluación y sin grafo al evaluar")
EVAL_MODE_OK = Message(en="all {n} forward passes in {function}() ran in eval mode, building no graph",
                       es="las {n} pasadas hacia delante de {function}() se hicieron en modo evaluación, sin "
                          "construir grafo")
EVAL_MODE_TRAINING = Message(
    en="{function}() ran the model in training mode (as training left it): call model.eval() before evaluating, "
    "or dropout keeps dropping units and batch norm keeps updating its statistics on evaluation data",
    es="{function}() ejecutó el modelo en modo entrenamiento (como lo dejó el entrenamiento): llama a "
    "model.eval() antes de evaluar, o el dropout sigue apagando unidades y la batch norm sigue actualizando sus "
    "estadísticas con los datos de evaluación",
)
EVAL_MODE_GRAPH = Message(
    en="{function}() built an autograd graph for its forward pass: evaluate inside torch.no_grad() (or "
    "torch.inference_mode()), else every batch's activations are kept for a backward() that never comes",
    es="{function}() construyó un grafo de autograd en su pasada hacia delante: evalúa dentro de "
    "torch.no_grad() (o torch.inference_mode()), si no se guardan las activaciones de cada lote para un "
    "backward() que nunca llega",
)
EVAL_NOT_GIVEN = Message(en="pass evaluate=your evaluation function to check it",
                         es="pasa evaluate=tu función de evaluación para comprobarla")
EVAL_NO_FORWARD = Message(en="{function}() never ran the model, so no evaluation was observed",
                          es="{function}() no ejecutó nunca el modelo, así que no se observó ninguna evaluación")


def eval_mode(p, run) -> Result:
    if p.evaluate is None:
        return _result("modes.eval", EVAL_MODE, Status.NOT_RUN, EVAL_NOT_GIVEN)
    fn = _name(p.evaluate, "evaluate")
    forwards = run.log.of("forward", "eval")
    if not forwards:
        return _result("modes.eval", EVAL_MODE, Status.FAILED, EVAL_NO_FORWARD, place_of(p.evaluate), function=fn)
    bad = next((e for e in forwards if e.data["training"]), None)
    if bad is not None:
        return _result("modes.eval", EVAL_MODE, Status.FAILED, EVAL_MODE_TRAINING, bad.place, function=fn)
    bad = next((e for e in forwards if e.data["graph"]), None)
    if bad is not None:
        return _result("modes.eval", EVAL_MODE, Status.FAILED, EVAL_MODE_GRAPH, bad.place, function=fn)
    return _result("modes.eval", EVAL_MODE, Status.PASSED, EVAL_MODE_OK, n=len(forwards), function=fn)


# ---------------------------------------------------------------------------- memory

GRAPHS = Message(en="no graph outlives its batch", es="ningún grafo sobrevive a su lote")
GRAPHS_OK = Message(
    en="after each of {epochs} epochs no autograd graph of an earlier epoch was alive ({graphs} graphs seen){gpu}",
    es="tras cada una de {epochs} épocas no quedaba vivo ningún grafo de autograd de una época anterior ({graphs} "
    "grafos vistos){gpu}",
)
GRAPHS_FAIL = Message(
    en="after epoch {epoch}, {alive} autograd graph(s) of earlier epochs were still alive, the first one the "
    "{what} made here in epoch {made}: something keeps a tensor that carries its graph (a loss summed without "
    ".item(), an output stored in a list), so memory grows with every batch{gpu}",
    es="tras la época {epoch}, seguían vivos {alive} grafo(s) de autograd de épocas anteriores, el primero el de "
    "la {what} hecha aquí en la época {made}: algo guarda un tensor que lleva su grafo (una pérdida sumada sin "
    ".item(), una salida guardada en una lista), así que la memoria crece con cada lote{gpu}",
)
WHAT = {"loss": Message(en="loss", es="pérdida"), "output": Message(en="forward pass", es="pasada hacia delante")}


def _gpu(run) -> Message | str:
    if not run.cuda_bytes:
        return ""
    mib = ", ".join(f"{b / 2**20:.1f}" for b in run.cuda_bytes)
    return Message(en=f"; GPU memory allocated after each epoch (MiB): {mib}",
                   es=f"; memoria de GPU reservada tras cada época (MiB): {mib}")


def graphs(p, run) -> Result:
    for epoch, stale in enumerate(run.stale_after, start=1):
        if stale:  # a loss kept holds its forward pass too: the loss's line says more
            made, what, place = min(stale, key=lambda g: (g[1] != "loss", g[0]))
            return _result("memory.graphs", GRAPHS, Status.FAILED, GRAPHS_FAIL, place, epoch=epoch,
                           alive=len(stale), what=WHAT[what], made=made, gpu=_gpu(run))
    return _result("memory.graphs", GRAPHS, Status.PASSED, GRAPHS_OK, epochs=len(run.stale_after),
                   graphs=run.log.graphs.count, gpu=_gpu(run))


# ---------------------------------------------------------------------------- schedule and clipping

SCHEDULE = Message(en="the scheduler steps once per epoch", es="el scheduler avanza una vez por época")
SCHEDULE_OK = Message(en="in each of {epochs} epochs, scheduler.step() ran once, after the epoch's last "
                         "optimizer step", es="en cada una de {epochs} épocas, scheduler.step() se ejecutó una "
                         "vez, tras el último paso del optimizador de la época")
SCHEDULE_NEVER = Message(
    en="in epoch {epoch}, {function}() never called scheduler.step(): the learning rate never follows its "
    "schedule",
    es="en la época {epoch}, {function}() no llamó nunca a scheduler.step(): la tasa de aprendizaje no sigue "
    "nunca su programa",
)
SCHEDULE_MANY = Message(
    en="in epoch {epoch}, scheduler.step() ran {n} times (here the second time): the schedule counts its own "
    "step() calls, so stepped per batch it runs {n} times too fast; step it once per epoch",
    es="en la época {epoch}, scheduler.step() se ejecutó {n} veces (aquí la segunda): el programa cuenta sus "
    "propias llamadas a step(), así que avanzado por lote corre {n} veces demasiado rápido; avánzalo una vez "
    "por época",
)
SCHEDULE_EARLY = Message(
    en="in epoch {epoch}, scheduler.step() ran after {before} of the epoch's {steps} optimizer steps: step the "
    "scheduler after the epoch's last optimizer.step(), or each epoch trains with the next epoch's rate",
    es="en la época {epoch}, scheduler.step() se ejecutó tras {before} de los {steps} pasos del optimizador de "
    "la época: avanza el scheduler tras el último optimizer.step() de la época, o cada época entrena con la "
    "tasa de la siguiente",
)
SCHEDULE_NOT_GIVEN = Message(
    en="pass scheduler=a function of the optimizer returning your scheduler, and a train function taking "
    "`scheduler` that steps it as your loop does",
    es="pasa scheduler=una función del optimizador que devuelva tu scheduler, y una función train que reciba "
    "`scheduler` y lo avance como lo hace tu bucle",
)


def schedule(p, run) -> Result:
    if p.scheduler is None or not takes(p.train, "scheduler"):
        return _result("schedule.step", SCHEDULE, Status.NOT_RUN, SCHEDULE_NOT_GIVEN)
    fn = _name(p.train, "train")
    for epoch in range(1, len(run.batches) + 1):
        events = [e for e in run.log.events if e.epoch == epoch and e.phase == "train" and e.kind in ("step", "sched")]
        scheds = [i for i, e in enumerate(events) if e.kind == "sched"]
        steps = sum(e.kind == "step" for e in events)
        if not scheds:
            return _result("schedule.step", SCHEDULE, Status.FAILED, SCHEDULE_NEVER, place_of(p.train),
                           epoch=epoch, function=fn)
        if len(scheds) > 1:
            return _result("schedule.step", SCHEDULE, Status.FAILED, SCHEDULE_MANY, events[scheds[1]].place,
                           epoch=epoch, n=len(scheds))
        before = sum(e.kind == "step" for e in events[:scheds[0]])
        if before < steps:
            return _result("schedule.step", SCHEDULE, Status.FAILED, SCHEDULE_EARLY, events[scheds[0]].place,
                           epoch=epoch, before=before, steps=steps)
    return _result("schedule.step", SCHEDULE, Status.PASSED, SCHEDULE_OK, epochs=len(run.batches))


CLIP = Message(en="clipping between backward and step", es="recorte entre backward y step")
CLIP_OK = Message(en="at {n} steps whose gradient norm exceeded {clip}, step() used it clipped to {clip}",
                  es="en {n} pasos cuyo gradiente superaba la norma {clip}, step() lo usó recortado a {clip}")
CLIP_FAIL = Message(
    en="optimizer.step() used a gradient of norm {norm:.3g}, above clip_norm={clip} (the batch's own had norm "
    "{raw:.3g}): clip_grad_norm_ must run after backward() and before step(); before backward() it clips the "
    "zeros, after step() the update has already used the raw gradient",
    es="optimizer.step() usó un gradiente de norma {norm:.3g}, por encima de clip_norm={clip} (el propio del lote "
    "tenía norma {raw:.3g}): clip_grad_norm_ debe ejecutarse tras backward() y antes de step(); antes de "
    "backward() recorta los ceros, tras step() la actualización ya usó el gradiente sin recortar",
)
CLIP_NOT_GIVEN = Message(
    en="pass clip_norm=your clip norm, and a train function taking `clip_norm` (or max_norm) that clips with it",
    es="pasa clip_norm=tu norma de recorte, y una función train que reciba `clip_norm` (o max_norm) y recorte "
    "con ella",
)
CLIP_UNBOUND = Message(
    en="no batch's gradient norm exceeded clip_norm={clip} (largest {largest:.3g}), so clipping never had to act: "
    "pass a smaller clip_norm for this check",
    es="ningún gradiente de lote superó clip_norm={clip} (el mayor, {largest:.3g}), así que el recorte nunca tuvo "
    "que actuar: pasa una clip_norm menor para esta comprobación",
)


def clip(p, run) -> Result:
    if p.clip_norm is None or not takes(p.train, "clip_norm"):
        return _result("clip.norm", CLIP, Status.NOT_RUN, CLIP_NOT_GIVEN)
    rows = [r for r in _step_rows(p, run) if r["own"] is not None]
    bound = [r for r in rows if float(r["own"].norm()) > p.clip_norm * 1.001]
    if not bound:
        largest = max((float(r["own"].norm()) for r in rows), default=0.0)
        return _result("clip.norm", CLIP, Status.NOT_RUN, CLIP_UNBOUND, clip=p.clip_norm, largest=largest)
    for row in bound:
        norm = float(row["event"].data["grad"].norm())
        if norm > p.clip_norm * 1.001:
            return _result("clip.norm", CLIP, Status.FAILED, CLIP_FAIL, row["event"].place, norm=norm,
                           clip=p.clip_norm, raw=float(row["own"].norm()))
    return _result("clip.norm", CLIP, Status.PASSED, CLIP_OK, n=len(bound), clip=p.clip_norm)


# ---------------------------------------------------------------------------- device

DEVICE = Message(en="batches moved to the device", es="lotes movidos al dispositivo")
DEVICE_OK = Message(en="every batch reached the model and the loss through .to({device})",
                    es="cada lote llegó al modelo y a la pérdida a través de .to({device})")
DEVICE_INPUT = Message(
    en="the batch reached the model in {function}() without .to(device): on a GPU the model's weights and its "
    "input would be on different devices (x = x.to(device) keeps the moved tensor; x.to(device) alone does not)",
    es="el lote llegó al modelo en {function}() sin .to(device): en una GPU los pesos del modelo y su entrada "
    "estarían en dispositivos distintos (x = x.to(device) guarda el tensor movido; x.to(device) a secas no)",
)
DEVICE_TARGET = Message(
    en="a tensor of the batch (the labels?) reached the loss backward() ran on here without .to(device): on a "
    "GPU the loss would mix devices",
    es="un tensor del lote (¿las etiquetas?) llegó a la pérdida sobre la que se ejecutó backward() aquí sin "
    ".to(device): en una GPU la pérdida mezclaría dispositivos",
)


def device(p, run) -> Result:
    for e in run.log.events:
        if e.kind == "forward" and e.data["tagged"]:
            fn = _name(p.train if e.phase == "train" else p.evaluate, e.phase)
            return _result("device.moved", DEVICE, Status.FAILED, DEVICE_INPUT, e.place, function=fn)
        if e.kind == "backward" and e.data["tagged"]:
            return _result("device.moved", DEVICE, Status.FAILED, DEVICE_TARGET, e.place)
    return _result("device.moved", DEVICE, Status.PASSED, DEVICE_OK, device=repr(p.device))


# ---------------------------------------------------------------------------- the epoch's loss

EPOCH_MEAN = Message(en="the epoch loss is a mean over examples", es="la pérdida de la época es una media sobre "
                     "ejemplos")
EPOCH_MEAN_OK = Message(en="each epoch, {function}() returned the mean of its batches' losses over examples",
                        es="en cada época, {function}() devolvió la media sobre ejemplos de las pérdidas de sus "
                           "lotes")
EPOCH_MEAN_FAIL = Message(
    en="in epoch {epoch}, {function}() returned {got:.6g}, but the mean over examples of the losses its batches "
    "computed is {want:.6g} (the plain mean of the batch means is {plain:.6g}): weight each batch's mean loss by "
    "its number of examples, since the last batch is shorter",
    es="en la época {epoch}, {function}() devolvió {got:.6g}, pero la media sobre ejemplos de las pérdidas que "
    "calcularon sus lotes es {want:.6g} (la media simple de las medias de lote es {plain:.6g}): pondera la "
    "pérdida media de cada lote por su número de ejemplos, ya que el último lote es más corto",
)
EPOCH_MEAN_NONE = Message(en="{function}() returns no number, so there is no epoch loss to check",
                          es="{function}() no devuelve ningún número, así que no hay pérdida de época que "
                             "comprobar")


def epoch_mean(p, run) -> Result:
    fn = _name(p.train, "train")
    values = [plain_number(r) if r is not None else None for r in run.returns]
    if not values or any(v is None for v in values):
        return _result("loss.epoch_mean", EPOCH_MEAN, Status.NOT_RUN, EPOCH_MEAN_NONE, function=fn)
    for epoch, got in enumerate(values, start=1):
        batches = [e for e in run.log.of("backward", "train") if e.epoch == epoch and e.data.get("value") is not None]
        total = sum(e.data["n"] or 1 for e in batches)
        want = sum(e.data["value"] * (e.data["n"] or 1) for e in batches) / total if total else math.nan
        plain = sum(e.data["value"] for e in batches) / len(batches) if batches else math.nan
        if not math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6):
            return _result("loss.epoch_mean", EPOCH_MEAN, Status.FAILED, EPOCH_MEAN_FAIL, place_of(p.train),
                           epoch=epoch, function=fn, got=got, want=want, plain=plain)
    return _result("loss.epoch_mean", EPOCH_MEAN, Status.PASSED, EPOCH_MEAN_OK, function=fn)


# ---------------------------------------------------------------------------- seeds and order

REPRO = Message(en="same seeds, same run", es="mismas semillas, misma ejecución")
REPRO_OK = Message(en="two runs of {function}() from seed {seed} ended with identical weights",
                   es="dos ejecuciones de {function}() desde la semilla {seed} acabaron con pesos idénticos")
REPRO_FAIL = Message(
    en="two runs of {function}() from seed {seed} (Python's, NumPy's and torch's generators seeded alike, the "
    "same factories) ended with weights that differ by up to {diff:.3g}: something draws from a generator no "
    "seed controls, so no result of this loop can be reproduced",
    es="dos ejecuciones de {function}() desde la semilla {seed} (los generadores de Python, NumPy y torch "
    "sembrados igual, las mismas fábricas) acabaron con pesos que difieren hasta en {diff:.3g}: algo usa un "
    "generador que ninguna semilla controla, así que ningún resultado de este bucle se puede reproducir",
)


def repro(p, first: list, second: list) -> Result:
    fn = _name(p.train, "train")
    diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(first, second, strict=True)
                if a.numel()), default=0.0)
    if diff == 0.0:
        return _result("repro.seeds", REPRO, Status.PASSED, REPRO_OK, function=fn, seed=p.seed)
    return _result("repro.seeds", REPRO, Status.FAILED, REPRO_FAIL, place_of(p.train), function=fn, seed=p.seed,
                   diff=diff)


COVERAGE = Message(en="every example once per epoch", es="cada ejemplo una vez por época")
COVERAGE_OK = Message(en="in each of 2 epochs, the loader handed out each of the {n} examples exactly once",
                      es="en cada una de 2 épocas, el cargador entregó cada uno de los {n} ejemplos exactamente "
                         "una vez")
COVERAGE_FAIL = Message(
    en="in epoch {epoch}, the loader built here handed out {seen} of the {n} examples ({missing} never, {twice} "
    "more than once): every example should be seen once per epoch (drop_last=True, a sampler drawing with "
    "replacement or a subset leave some out)",
    es="en la época {epoch}, el cargador creado aquí entregó {seen} de los {n} ejemplos ({missing} nunca, "
    "{twice} más de una vez): cada ejemplo debería verse una vez por época (drop_last=True, un muestreador con "
    "reemplazo o un subconjunto dejan algunos fuera)",
)
ORDER = Message(en="a new, seeded order each epoch", es="un orden nuevo y sembrado en cada época")
ORDER_OK = Message(en="the loader's order changes every epoch, is the same for the same seed and differs for "
                      "another", es="el orden del cargador cambia en cada época, es el mismo con la misma semilla "
                      "y distinto con otra")
ORDER_FIXED = Message(
    en="the loader built here gave the same order in epochs 1 and 2{identity}: without shuffling, each epoch "
    "walks the data in one order and the gradient steps follow it",
    es="el cargador creado aquí dio el mismo orden en las épocas 1 y 2{identity}: sin barajar, cada época "
    "recorre los datos en un orden y los pasos de gradiente lo siguen",
)
IDENTITY = Message(en=", the data's own order", es=", el orden de los propios datos")
ORDER_UNSEEDED = Message(
    en="the loader built here with seed {seed} twice gave two different orders (the global random state "
    "differed in between): pass it a generator seeded from the seed, so the order depends on the seed alone",
    es="el cargador creado aquí dos veces con la semilla {seed} dio dos órdenes distintos (el estado aleatorio "
    "global difería entre ambas): pásale un generador sembrado con la semilla, para que el orden dependa solo de "
    "ella",
)
ORDER_SEED_IGNORED = Message(
    en="the loader built here gave the same order for seeds {seed} and {other}: the seed does not reach the "
    "shuffling",
    es="el cargador creado aquí dio el mismo orden con las semillas {seed} y {other}: la semilla no llega al "
    "barajado",
)
LOADER_NOT_GIVEN = Message(
    en="pass loader=your loader factory (taking `dataset`, and `seed` or `generator` to seed its order)",
    es="pasa loader=tu fábrica de cargadores (que reciba `dataset`, y `seed` o `generator` para sembrar su "
       "orden)",
)
NO_SAMPLER = Message(en="the loader has no batch sampler (an IterableDataset?): its order cannot be observed",
                     es="el cargador no tiene muestreador de lotes (¿un IterableDataset?): no se puede observar su "
                        "orden")


def loader_checks(p, orders: dict | None, n: int, place) -> list[Result]:
    """loader.coverage and loader.order from the orders the runner observed (None: no loader factory given;
    a value None: the loader has no batch sampler)."""
    if orders is None:
        return [_result("loader.coverage", COVERAGE, Status.NOT_RUN, LOADER_NOT_GIVEN),
                _result("loader.order", ORDER, Status.NOT_RUN, LOADER_NOT_GIVEN)]
    if any(v is None for v in orders.values()):
        return [_result(i, t, Status.NOT_RUN, NO_SAMPLER) for i, t in (("loader.coverage", COVERAGE),
                                                                        ("loader.order", ORDER))]
    return [_coverage(orders["a"], n, place), _order(p, orders, place)]


def _coverage(orders: list[list[int]], n: int, place) -> Result:
    for epoch, order in enumerate(orders, start=1):
        if sorted(order) != list(range(n)):
            seen = len(set(order))
            return _result("loader.coverage", COVERAGE, Status.FAILED, COVERAGE_FAIL, place, epoch=epoch, n=n,
                           seen=seen, missing=n - seen, twice=len(order) - seen)
    return _result("loader.coverage", COVERAGE, Status.PASSED, COVERAGE_OK, n=n)


def _order(p, orders: dict, place) -> Result:
    a, b, c = orders["a"], orders["b"], orders["c"]
    if a[0] == a[1]:
        identity = IDENTITY if a[0] == sorted(a[0]) else ""
        return _result("loader.order", ORDER, Status.FAILED, ORDER_FIXED, place, identity=identity)
    if a[0] != b[0]:
        return _result("loader.order", ORDER, Status.FAILED, ORDER_UNSEEDED, place, seed=p.seed)
    if a[0] == c[0]:
        return _result("loader.order", ORDER, Status.FAILED, ORDER_SEED_IGNORED, place, seed=p.seed,
                       other=p.seed + 1)
    return _result("loader.order", ORDER, Status.PASSED, ORDER_OK)


# ---------------------------------------------------------------------------- all of them


def judge_run(p, run) -> list[Result]:
    """The checks judged on the main instrumented run."""
    return [per_batch(p, run), fresh_grads(p, run), train_mode(p, run), eval_mode(p, run), graphs(p, run),
            schedule(p, run), clip(p, run), device(p, run), epoch_mean(p, run)]
