"""The optimizer: the requested kind and lr, over this model's own parameters."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, passed

# lrs no loop would pick by accident (not the protocol's default 0.1 nor the usual 0.01 / 0.001)
ASKED = (("sgd", "SGD", 0.05), ("adam", "Adam", 0.003))

SETUP_TITLE = Message(en="optimizer kind, lr and parameters", es="tipo, lr y parámetros del optimizador")
SETUP_OK = Message(
    en="make_optimizer gives SGD and Adam with the lr asked for ({lrs}), over all {n} of the model's own "
    "parameter tensors",
    es="make_optimizer da SGD y Adam con el lr pedido ({lrs}), sobre los {n} tensores de parámetros del propio "
    "modelo",
)
SETUP_KIND = Message(
    en='make_optimizer(model, name="{name}", lr={lr}) returned a {got}; expected a torch.optim.{want}',
    es='make_optimizer(model, name="{name}", lr={lr}) devolvió un {got}; se esperaba un torch.optim.{want}',
)
SETUP_FOREIGN = Message(
    en='the optimizer from make_optimizer(model, name="{name}", lr={lr}) holds {foreign} parameter tensor(s) '
    'that '
    "are not this model's, and {own} of the model's {total}: its steps update tensors the model does not "
    "use, so "
    "the model's loss stays where it started",
    es='el optimizador de make_optimizer(model, name="{name}", lr={lr}) contiene {foreign} tensor(es) de '
    "parámetros que no son de este modelo, y {own} de los {total} del modelo: sus pasos actualizan tensores "
    "que "
    "el modelo no usa, así que la pérdida del modelo se queda donde empezó",
)
SETUP_PARTIAL = Message(
    en='the optimizer from make_optimizer(model, name="{name}", lr={lr}) holds {own} of the model\'s {total} '
    "parameter tensors ({dup} listed more than once): the others are never updated",
    es='el optimizador de make_optimizer(model, name="{name}", lr={lr}) contiene {own} de los {total} '
    'tensores de '
    "parámetros del modelo ({dup} repetidos): los demás no se actualizan nunca",
)
SETUP_LR = Message(
    en='make_optimizer(model, name="{name}", lr={lr}) built an optimizer whose lr is {got}: the lr asked for '
    'is '
    "not the one used",
    es='make_optimizer(model, name="{name}", lr={lr}) creó un optimizador cuyo lr es {got}: el lr pedido no '
    'es el '
    "que se usa",
)


@check("optimizer.setup", family="optimizer", calls=("make_optimizer",), title=SETUP_TITLE, cost=1, timeout=20.0)
def setup(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import lesson_mlp, type_name

    rows = []
    for name, kind, lr in ASKED:
        model = lesson_mlp(0, device=lab.device, track=lab.track)
        own = {id(p) for p in model.parameters()}
        opt = loop.make_optimizer(model, name=name, lr=lr)
        groups = getattr(opt, "param_groups", None) or []
        held = [p for g in groups for p in g.get("params", [])]
        rows.append({
            "name": name, "lr": lr, "want": kind, "type": type_name(opt),
            "kind_ok": isinstance(opt, getattr(torch.optim, kind)),
            "own": len({id(p) for p in held} & own), "total": len(own),
            "foreign": len([p for p in held if id(p) not in own]),
            "duplicates": len(held) - len({id(p) for p in held}),
            "lrs": sorted({float(g["lr"]) for g in groups if "lr" in g}),
        })
    return {"rows": rows}


@setup.judge
def _(m: dict):
    for r in m["rows"]:
        base = dict(name=r["name"], lr=r["lr"])
        if not r["kind_ok"]:
            return failed(SETUP_KIND, got=r["type"], want=r["want"], **base)
        if r["foreign"]:
            return failed(SETUP_FOREIGN, foreign=r["foreign"], own=r["own"], total=r["total"], **base)
        if r["own"] != r["total"] or r["duplicates"]:
            return failed(SETUP_PARTIAL, own=r["own"], total=r["total"], dup=r["duplicates"], **base)
        if len(r["lrs"]) != 1 or abs(r["lrs"][0] - r["lr"]) > 1e-12 * r["lr"]:
            return failed(SETUP_LR, got=", ".join(f"{x:g}" for x in r["lrs"]) or "missing", **base)
    lrs = ", ".join(f"{r['want']} {r['lr']:g}" for r in m["rows"])
    return passed(SETUP_OK, lrs=lrs, n=m["rows"][0]["total"])
