"""The track's data and split, exactly (on moons: 200 points split 150/50 with both classes halved evenly).

Every text here says "the track's": the check runs on whatever track is graded (a course's digits as moons)."""

from __future__ import annotations

from checker.base.i18n import Message
from checker.checks.base import check, failed, judged_track, passed

NAMES = ("X_train", "y_train", "X_val", "y_val")


def shapes(track) -> tuple[list[int], ...]:
    d = track.data
    return [d.n_train, track.model.n_features], [d.n_train], [d.n_val, track.model.n_features], [d.n_val]

DTYPES = ("torch.float32", "torch.int64", "torch.float32", "torch.int64")
VALUE_TOL = 1e-6
"""Largest difference allowed from the track's values (float32 round-off of numbers below 3)."""

LESSON_TITLE = Message(en="the track's data and split", es="los datos y la partición del recorrido")
LESSON_OK = Message(
    en="make_data(seed=0) gives the track's {n_train}/{n_val} split: classes {train_counts} in training, "
    "{val_counts} in validation",
    es="make_data(seed=0) da la partición {n_train}/{n_val} del recorrido: clases {train_counts} en entrenamiento, "
    "{val_counts} en validación",
)
LESSON_NOT_FOUR = Message(
    en="make_data(seed=0) returned {what}; the protocol expects four tensors: X_train, y_train, X_val, y_val",
    es="make_data(seed=0) devolvió {what}; el protocolo espera cuatro tensores: X_train, y_train, X_val, y_val",
)
LESSON_FORM = Message(
    en="make_data(seed=0): {name} is {got}, but the track's {name} is a {want_dtype} tensor of shape "
    "{want_shape}",
    es="make_data(seed=0): {name} es {got}, pero el {name} del recorrido es un tensor {want_dtype} de forma "
    "{want_shape}",
)
LESSON_ORDER = Message(
    en="make_data(seed=0): {name} holds the track's rows but in another order, so batches and results will "
    "not match the track's number for number",
    es="make_data(seed=0): {name} tiene las filas del recorrido pero en otro orden, así que los lotes y los "
    "resultados no coincidirán número a número con el recorrido",
)
LESSON_VALUES = Message(
    en="make_data(seed=0): {name} differs from the track's (largest difference {diff:.3g}). Class counts: "
    "{train_counts} in training and {val_counts} in validation; the track's split keeps each class's share "
    "equal in both parts ({want_train} and {want_val})",
    es="make_data(seed=0): {name} difiere del del recorrido (mayor diferencia {diff:.3g}). Recuento de clases: "
    "{train_counts} en entrenamiento y {val_counts} en validación; la partición del recorrido mantiene igual "
    "la proporción de cada clase en ambas partes ({want_train} y {want_val})",
)


@check("data.lesson", early=True, family="data", calls=("make_data",), title=LESSON_TITLE, cost=6, timeout=20.0)
def lesson(loop, lab) -> dict:
    import torch

    from checker.setting.instruments import type_name

    out = loop.make_data(seed=0)
    m: dict = {"count": len(out) if isinstance(out, tuple | list) else None, "returned": type_name(out)}
    if m["count"] != 4:
        return m
    parts = []
    counts = {}
    for name, got, want in zip(NAMES, out, lab.data.as_tuple(), strict=True):
        part: dict = {"name": name, "type": type_name(got)}
        if isinstance(got, torch.Tensor):
            part["shape"], part["dtype"] = list(got.shape), str(got.dtype)
            if got.shape == want.shape:
                a, b = got.detach().cpu().double(), want.double()
                part["diff"] = float((a - b).abs().max()) if a.numel() else 0.0
                if a.dim() == 2:
                    same_rows = sorted(map(tuple, a.tolist())) == sorted(map(tuple, b.tolist()))
                else:
                    same_rows = sorted(a.tolist()) == sorted(b.tolist())
                part["same_rows"] = same_rows
            if name.startswith("y") and got.dim() == 1 and not got.is_floating_point():
                counts[name] = torch.bincount(got.detach().cpu().long(),
                                              minlength=lab.track.model.n_classes).tolist()
        parts.append(part)
    m["parts"] = parts
    m["counts"] = {
        "y_train": counts.get("y_train"), "y_val": counts.get("y_val"),
        "want_train": torch.bincount(lab.data.y_train).tolist(),
        "want_val": torch.bincount(lab.data.y_val).tolist(),
    }
    return m


def _counts(c) -> str:
    return "/".join(map(str, c)) if c else "?"


@lesson.judge
def _(m: dict):
    if m["count"] != 4:
        what = f"a {m['returned']}" + (f" of {m['count']} items" if m["count"] is not None else "")
        return failed(LESSON_NOT_FOUR, what=what)
    counts = m["counts"]
    cparams = dict(train_counts=_counts(counts["y_train"]), val_counts=_counts(counts["y_val"]),
                   want_train=_counts(counts["want_train"]), want_val=_counts(counts["want_val"]))
    track = judged_track()
    for part, shape, dtype in zip(m["parts"], shapes(track), DTYPES, strict=True):
        if part.get("shape") != shape or part.get("dtype") != dtype:
            got = (f"a {part['dtype'].replace('torch.', '')} tensor of shape {tuple(part['shape'])}"
                   if "shape" in part else f"a {part['type']}")
            return failed(LESSON_FORM, name=part["name"], got=got, want_dtype=dtype.replace("torch.", ""),
                          want_shape=tuple(shape))
    for part in m["parts"]:
        if not part["diff"] <= VALUE_TOL:
            if part.get("same_rows"):
                return failed(LESSON_ORDER, name=part["name"])
            return failed(LESSON_VALUES, name=part["name"], diff=part["diff"], **cparams)
    return passed(LESSON_OK, n_train=track.data.n_train, n_val=track.data.n_val, **cparams)
