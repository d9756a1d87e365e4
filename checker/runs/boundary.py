"""Decision boundaries: a model's class probabilities over a grid of the plane, one compact frame per epoch.

In the child (where a learner's model lives) ``grid_frame`` evaluates the model on a ``GRID`` x ``GRID`` grid
that covers the setting's data with a margin, and packs each cell into one byte: the predicted class and how
sure the model is (``encode_cell``), base64 for the event pipe. Only that text, the grid's bounds and the data's
points travel back; the parent checks every field (``frame_bytes``, ``points_of``, ``bounds_of``) and never
trusts a size, a type or a number it has not checked.

One byte per cell: ``class * levels + level`` with ``levels = 255 // classes``, where ``level`` (0 .. levels - 1)
scales the top probability from ``1 / classes`` (a guess) to 1 (certain); ``NAN_CELL`` (255) is a cell whose
output was not a number (a diverged model).
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

GRID = 60
"""Cells per side of the grid (60 x 60 = 3,600 evaluations per frame)."""
MARGIN = 0.5
"""How far the grid reaches past the data on each side, in the features' units."""
NAN_CELL = 255
MAX_CLASSES = 16
MAX_POINTS = 5_000
"""Points (training plus validation) the parent takes back from a child."""
POINT_LIMIT = 1e6
"""A coordinate beyond this is not a plotted point (the parent refuses it)."""


class BadFigures(ValueError):
    """A child's boundary figures the parent does not accept; the message says why."""


def levels(classes: int) -> int:
    return 255 // classes


@dataclass(frozen=True)
class Bounds:
    x0: float
    x1: float
    y0: float
    y1: float

    def as_list(self) -> list[float]:
        return [self.x0, self.x1, self.y0, self.y1]


@dataclass(frozen=True)
class Points:
    """The data a run trained and validated on, as plain numbers (features rounded to 4 decimals)."""

    train_x: tuple[tuple[float, float], ...]
    train_y: tuple[int, ...]
    val_x: tuple[tuple[float, float], ...]
    val_y: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"train_x": [list(p) for p in self.train_x], "train_y": list(self.train_y),
                "val_x": [list(p) for p in self.val_x], "val_y": list(self.val_y)}


# ---------------------------------------------------------------------------------------------
# in the child

@dataclass(frozen=True)
class Projection:
    """The plane a boundary of data with more than two features is drawn on: the first two principal components of
    the training set (its mean, and the two unit axes), computed from kata's own data."""

    mean: Any
    """(features,) tensor."""
    axes: Any
    """(2, features) tensor: the first two principal directions, each signed so its largest entry is positive."""

    def to_plane(self, X):
        """Rows of ``X`` (n, features) as (n, 2) coordinates on the plane."""
        return (X.detach().double().cpu().reshape(len(X), -1) - self.mean) @ self.axes.T

    def from_plane(self, P):
        """(n, 2) coordinates on the plane as rows of the data's space, float32."""
        return (P.double() @ self.axes + self.mean).float()


PROJECTED = "the first two principal components of the training set"
"""What a projected boundary is drawn on (the page and the plot name it; ``PROJECTED_ES`` in Spanish)."""
PROJECTED_ES = "las dos primeras componentes principales del conjunto de entrenamiento"


def projection_of(X_train) -> Projection | None:
    """None for 2-feature data (drawn as it is), else the plane of ``X_train``'s first two principal components."""
    import torch

    X = X_train.detach().double().cpu()
    if X.dim() != 2 or X.shape[1] <= 2 or len(X) < 2:
        return None
    mean = X.mean(dim=0)
    _, _, vh = torch.linalg.svd(X - mean, full_matrices=False)
    axes = vh[:2].clone()
    for i in range(2):  # a fixed sign: the same data, the same picture
        if axes[i][axes[i].abs().argmax()] < 0:
            axes[i] = -axes[i]
    return Projection(mean, axes)


def bounds_around(*tensors, projection: Projection | None = None) -> Bounds:
    """The smallest box holding every row of the 2-feature ``tensors`` (or of their ``projection``), widened by
    ``MARGIN``."""
    import torch

    if projection is not None:
        tensors = tuple(projection.to_plane(t) for t in tensors)
    X = torch.cat([t.detach().float().cpu().reshape(-1, 2) for t in tensors])
    lo, hi = X.min(dim=0).values.tolist(), X.max(dim=0).values.tolist()
    return Bounds(round(lo[0] - MARGIN, 4), round(hi[0] + MARGIN, 4), round(lo[1] - MARGIN, 4),
                  round(hi[1] + MARGIN, 4))


def grid_points(bounds: Bounds, n: int = GRID):
    """The grid's cell centres, row by row from the top (largest second feature) down, as an (n*n, 2) tensor."""
    import torch

    xs = torch.tensor([bounds.x0 + (i + 0.5) * (bounds.x1 - bounds.x0) / n for i in range(n)])
    ys = torch.tensor([bounds.y1 - (j + 0.5) * (bounds.y1 - bounds.y0) / n for j in range(n)])
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=1).float()


def encode_cells(probs) -> bytes:
    """(cells, classes) probabilities as one byte a cell (see the module's docstring)."""
    import torch

    k = probs.shape[1]
    top, cls = probs.max(dim=1)
    steps = levels(k)
    level = ((top - 1.0 / k) / (1.0 - 1.0 / k) * (steps - 1)).round().clamp(0, steps - 1)
    cells = (cls * steps + level.long()).to(torch.uint8)
    bad = ~torch.isfinite(probs).all(dim=1)
    cells[bad] = NAN_CELL
    return bytes(cells.tolist())


def grid_frame(model, bounds: Bounds, classes: int, n: int = GRID, projection: Projection | None = None) -> str | None:
    """The model's predictions over the grid (of the ``projection``'s plane, its cells taken back to the data's
    space), one byte a cell, base64; None when its output is not (cells, ``classes``) numbers. Evaluated in eval
    mode without a graph; the model's mode is restored."""
    import torch

    try:
        device = next(model.parameters()).device
    except (StopIteration, AttributeError, TypeError):
        device = torch.device("cpu")
    was_training = bool(getattr(model, "training", False))
    try:
        model.eval()
        points = grid_points(bounds, n)
        if projection is not None:
            points = projection.from_plane(points)
        with torch.no_grad():
            out = model(points.to(device))
    finally:
        model.train(was_training)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n * n, classes):
        return None
    probs = torch.softmax(out.detach().double().cpu(), dim=1)
    return base64.b64encode(encode_cells(probs)).decode("ascii")


def points_of(X_train, y_train, X_val, y_val, projection: Projection | None = None) -> dict[str, Any] | None:
    """The data (on the ``projection``'s plane) as plain lists for the parent; None when it is not 2 features (or
    the projection's) with integer-like labels."""
    try:
        out = {}
        for name, X, y in (("train", X_train, y_train), ("val", X_val, y_val)):
            X = (projection.to_plane(X) if projection is not None else X).detach().float().cpu()
            if X.dim() != 2 or X.shape[1] != 2 or len(X) != len(y) or len(X) > MAX_POINTS:
                return None
            out[f"{name}_x"] = [[round(a, 4), round(b, 4)] for a, b in X.tolist()]
            out[f"{name}_y"] = [int(v) for v in y.detach().cpu().reshape(-1).tolist()]
        return out
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None


# ---------------------------------------------------------------------------------------------
# in the parent: every field checked

def frame_bytes(value: Any, classes: int, n: int = GRID) -> bytes | None:
    """A frame's cells, checked: ``n * n`` bytes, each a valid cell; None stays None (no boundary)."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 4 * (n * n + 2) // 3 + 4:
        raise BadFigures("a boundary frame is not a text of the grid's size")
    try:
        cells = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise BadFigures("a boundary frame is not base64") from None
    if len(cells) != n * n:
        raise BadFigures(f"a boundary frame holds {len(cells)} cells, not {n * n}")
    top = classes * levels(classes)
    if any(c >= top and c != NAN_CELL for c in cells):
        raise BadFigures("a boundary frame holds a cell of no class")
    return cells


def classes_of(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_CLASSES:
        raise BadFigures(f"the number of classes must be 2 to {MAX_CLASSES}")
    return value


def bounds_of(value: Any) -> Bounds:
    if (not isinstance(value, list) or len(value) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                       and abs(v) < POINT_LIMIT for v in value)
            or not (value[0] < value[1] and value[2] < value[3])):
        raise BadFigures("the grid's bounds must be four finite numbers, x0 < x1 and y0 < y1")
    return Bounds(*(float(v) for v in value))


def _coords(value: Any) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, list) or len(value) > MAX_POINTS:
        raise BadFigures(f"points must be a list of at most {MAX_POINTS}")
    out = []
    for p in value:
        if (not isinstance(p, list) or len(p) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                           and abs(v) < POINT_LIMIT for v in p)):
            raise BadFigures("a point must be two finite numbers")
        out.append((float(p[0]), float(p[1])))
    return tuple(out)


def _labels(value: Any, count: int, classes: int) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) != count:
        raise BadFigures("there must be one label a point")
    if not all(isinstance(v, int) and not isinstance(v, bool) and -1 <= v <= MAX_CLASSES for v in value):
        raise BadFigures("a label must be a small integer")
    return tuple(int(v) for v in value)


def parse_points(value: Any, classes: int) -> Points | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"train_x", "train_y", "val_x", "val_y"}:
        raise BadFigures("points must have train_x, train_y, val_x and val_y")
    train_x, val_x = _coords(value["train_x"]), _coords(value["val_x"])
    if len(train_x) + len(val_x) > MAX_POINTS:
        raise BadFigures(f"more than {MAX_POINTS} points")
    return Points(train_x, _labels(value["train_y"], len(train_x), classes), val_x,
                  _labels(value["val_y"], len(val_x), classes))


def decode_cells(cells: bytes, classes: int) -> list[tuple[int, float] | None]:
    """Each cell as (class, top probability), or None where the model gave no number."""
    steps = levels(classes)
    out: list[tuple[int, float] | None] = []
    for c in cells:
        if c == NAN_CELL:
            out.append(None)
            continue
        cls, level = divmod(c, steps)
        out.append((cls, 1.0 / classes + (1.0 - 1.0 / classes) * level / (steps - 1)))
    return out


def class_share(cells: bytes, classes: int, cls: int = 1) -> float:
    """The share of the grid the model gives to class ``cls`` (cells without a number count for none)."""
    steps = levels(classes)
    return sum(1 for c in cells if c != NAN_CELL and c // steps == cls) / len(cells)
