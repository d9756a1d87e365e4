"""Device placement: the batches the model and the loss receive are the moved copies.

``tensor.to(device)`` returns a moved copy and leaves ``tensor`` where it was. On the CPU a
dropped result changes nothing visible, so there the checker feeds tagged tensors
(:class:`checker.setting.instruments.HostTensor`) that lose their tag only through ``.to()``,
``.cpu()`` or ``.cuda()``: a tagged tensor reaching the model or the loss was never moved.
On CUDA it simply reads each tensor's ``.device``.
"""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed

MOVED_TITLE = Message(en="batches moved to the device", es="lotes movidos al dispositivo")
MOVED_OK = Message(
    en="all {batches} training batches and the {evals} validation pass(es) reached the model and the loss as "
    "tensors moved to device='{device}'",
    es="los {batches} lotes de entrenamiento y la(s) {evals} pasada(s) de validación llegaron al modelo y a la "
    "pérdida como tensores movidos a device='{device}'",
)
MOVED_NOTHING = Message(
    en="train_epoch never ran the model on a batch, so device placement could not be checked",
    es="train_epoch no ejecutó nunca el modelo sobre un lote, así que no se pudo comprobar el dispositivo",
)
MOVED_INPUTS = Message(
    en="in {where}, {bad} of {n} input batches reached the model as the original tensors the data came in, not "
    "as copies moved to device='{device}': on a GPU this forward pass would fail",
    es="en {where}, {bad} de {n} lotes de entrada llegaron al modelo como los tensores originales de los "
    "datos, no como copias movidas a device='{device}': en una GPU esta pasada hacia delante fallaría",
)
MOVED_LABELS = Message(
    en="in {where}, {bad} of {n} label batches reached the loss as the original tensors the data came in, not "
    "as copies moved to device='{device}', while the inputs were moved: on a GPU the loss would fail",
    es="en {where}, {bad} de {n} lotes de etiquetas llegaron a la pérdida como los tensores originales de los "
    "datos, no como copias movidas a device='{device}', aunque las entradas sí se movieron: en una GPU la "
    "pérdida fallaría",
)


@check("device.moved", family="device", calls=("evaluate", "train_epoch"), title=MOVED_TITLE, cost=2, timeout=20.0)
def moved(loop, lab) -> dict:
    from checker.setting.instruments import Rig

    on_cpu = not lab.device.startswith("cuda")
    rig = Rig(lab, probe=True, tagged=on_cpu)

    def unmoved(event: dict, tag_key: str, device_key: str) -> bool:
        if on_cpu:
            return bool(event[tag_key])
        return event[device_key] is None or not event[device_key].startswith("cuda")

    out: dict = {"device": rig.device, "how": "tag" if on_cpu else "device"}

    def call(where: str, run) -> bool:
        """Run one protocol call; on a GPU, a forward pass or loss that fails because a tensor stayed behind is
        the figure (which one, and torch's words), not an error. Whether the call finished."""
        try:
            run()
            return True
        except RuntimeError as exc:
            if on_cpu or "device" not in str(exc):
                raise
            unfinished = rig.probe.unfinished() if rig.probe is not None else []
            inputs = any(not str(device).startswith("cuda") for device in unfinished)
            out["crashed"] = {"where": where, "what": "inputs" if inputs else "labels",
                              "error": str(exc).splitlines()[0][:240]}
            return False

    finished = call("train_epoch", lambda: loop.train_epoch(rig.model, rig.loader, rig.optimizer, rig.loss_fn,
                                                            device=rig.device))
    marker = len(rig.tape.events)
    if finished:
        call("evaluate", lambda: loop.evaluate(rig.model, *rig.val, rig.loss_fn, device=rig.device))
    parts = {"train_epoch": rig.tape.events[:marker], "evaluate": rig.tape.events[marker:]}
    for where, events in parts.items():
        forwards = [e for e in events if e["kind"] == "forward"]
        losses = [e for e in events if e["kind"] == "loss"]
        out[where] = {
            "forwards": len(forwards), "losses": len(losses),
            "inputs_unmoved": sum(unmoved(e, "input_tagged", "input_device") for e in forwards),
            "labels_unmoved": sum(unmoved(e, "target_tagged", "target_device") for e in losses),
            "input_devices": sorted({str(e["input_device"]) for e in forwards}),
            "label_devices": sorted({e["target_device"] for e in losses}),
        }
    return out


MOVED_CRASHED = Message(
    en="in {where}, the {what} of a batch stayed where the data came from instead of moving to device='{device}', "
    "and the GPU refused them: {error}",
    es="en {where}, {what_es} de un lote se quedaron donde estaban los datos en vez de moverse a device='{device}', "
    "y la GPU los rechazó: {error}",
)
_WHAT_ES = {"inputs": "las entradas", "labels": "las etiquetas"}


@moved.judge
def _(m: dict):
    crashed = m.get("crashed")
    if crashed:
        what = crashed["what"]
        return failed(MOVED_CRASHED, where=crashed["where"], what=what, what_es=_WHAT_ES.get(what, what),
                      device=m["device"], error=crashed["error"])
    train = m["train_epoch"]
    if not train["forwards"]:
        return failed(MOVED_NOTHING)
    for where in ("train_epoch", "evaluate"):
        part = m[where]
        if part["inputs_unmoved"]:
            return failed(MOVED_INPUTS, where=where, bad=part["inputs_unmoved"], n=part["forwards"],
                          device=m["device"])
        if part["labels_unmoved"]:
            return failed(MOVED_LABELS, where=where, bad=part["labels_unmoved"], n=part["losses"],
                          device=m["device"])
    return passed(MOVED_OK, batches=train["forwards"], evals=m["evaluate"]["forwards"], device=m["device"])
