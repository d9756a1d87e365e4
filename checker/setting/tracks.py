"""Tracks: a setting as data. The one place that says what a setting is.

A track is a TOML file in ``tracks/`` (one per track) that declares:

- its **data**: a scikit-learn generator from ``sklearn.datasets`` (``make_moons``, ``make_blobs``, ...)
  with its parameters, and the held-out part (``n_val``, stratified or not). The generator and the
  split both take ``random_state=seed``; float32 features, int64 labels;
- its **model**: an MLP by layer widths (``[2, 16, 2]``), optionally with ``BatchNorm1d`` after each
  hidden Linear and ``Dropout(p)`` after each hidden ReLU;
- its **thresholds**: the lesson's batch size, overfitting a few examples (how many, steps, lr, the
  loss to get under) and convergence (epochs and lr of Adam, the validation accuracy to reach, and what
  the reference reaches, quoted in messages);
- its **protocol**: the named groups of functions a loop file of the track defines
  (``checker.loopfile.protocol.PROTOCOLS``); a check runs on a track when every function it calls is declared by
  the track with the signature the check was written for;
- where its **reference**, **mutants** and **katas** live (paths relative to the project root);
- optionally its **costs**: how long each check takes on the reference, in milliseconds (measured by
  ``benchmarks/calibrate_costs.py``), so ``kata check`` shares the checks between its processes evenly.

The moons track (``tracks/moons.toml``) is protocol v1 and the lesson's setting, number for number.
Checks read everything setting-dependent from ``lab.track``; none hard-codes moons.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.base.paths import TRACKS_DIR
from checker.base.toml import (
    BOOL,
    FRACTION,
    INTS,
    MESSAGE,
    NUMBER,
    POSITIVE_INT,
    STRINGS,
    TABLE,
    TEXT,
    Field,
    read_toml,
    refuse_unknown,
    take,
)
from checker.loopfile.protocol import PROTOCOLS, functions_of
from checker.setting.course import CourseError, find_course

DEFAULT = "moons"
"""The track of protocol v1, and of every command run without ``--track``."""
TRACKS_ENV = "KATA_TRACKS"
"""More folders of track files (separated like PATH), e.g. a course's own: ``KATA_TRACKS=~/course/tracks``.
Paths inside a track file are relative to its folder's parent."""


class TrackError(Exception):
    """A track file that cannot be used; the message names the file and the field."""


# --------------------------------------------------------------------------- the parts of a track


SOURCES = ("generator", "dataset", "file", "reference")
"""Where a track's data comes from: a ``make_*`` generator, a bundled ``load_*`` dataset of scikit-learn, a file
the course ships beside the track file (CSV or NPZ), or the reference loop's own ``make_data(seed=0)``."""
TRUSTED_SOURCES = ("file", "reference")
"""Sources read only in kata's own (trusted) process, the data handed to every child with the lab: the track's
folder and its reference are hidden from graded children."""


@dataclass(frozen=True)
class DataSpec:
    generator: str
    """A ``make_*`` function of ``sklearn.datasets`` that takes ``n_samples`` and ``random_state``; a ``load_*``
    one (``dataset``); ``file:NAME`` (``file``); ``reference`` (the reference's make_data)."""
    params: tuple[tuple[str, Any], ...]
    """Its other keyword arguments as (name, value) pairs, e.g. ``(("noise", 0.2),)`` or ``(("centers", 3),)``."""
    n_samples: int
    n_val: int
    """Examples held out for validation (``train_test_split(test_size=n_val)``)."""
    stratify: bool = True
    source: str = "generator"
    """One of ``SOURCES``."""
    path: str | None = None
    """The file (``file``) or the reference loop (``reference``), absolute."""
    scale: float | None = None
    """Features multiplied by this before the split (load_digits' pixels: 1/16)."""
    standardize: bool = False
    """Features standardised after the split, with the training part's mean and standard deviation."""

    @property
    def n_train(self) -> int:
        return self.n_samples - self.n_val

    @property
    def trusted(self) -> bool:
        """Whether only kata's own process may compute this data (see ``TRUSTED_SOURCES``)."""
        return self.source in TRUSTED_SOURCES

    def call(self) -> str:
        """The data as a learner would write it, for messages."""
        if self.source == "dataset":
            text = f"{self.generator}()"
        elif self.source == "file":
            text = f"{Path(self.path or '').name} ({self.n_samples} rows)"
        elif self.source == "reference":
            text = f"the reference's make_data ({self.n_samples} rows)"
        else:
            args = [f"n_samples={self.n_samples}", *(f"{k}={v!r}" for k, v in self.params)]
            text = f"{self.generator}({', '.join(args)})"
        if self.scale is not None:
            text += f" * {self.scale:g}"
        if self.standardize:
            text += ", standardised on the training split"
        return text


@dataclass(frozen=True)
class ModelSpec:
    widths: tuple[int, ...]
    """Features in, hidden widths, classes out: ``(2, 16, 2)`` is Linear(2, 16) -> ReLU -> Linear(16, 2)."""
    batchnorm: bool = False
    dropout: float | None = None

    def leaves_one(self, n: int, batch_size: int) -> bool:
        """Whether batches of ``batch_size`` over ``n`` examples end in a batch of one that this model cannot
        train on (BatchNorm in training mode needs two or more)."""
        return self.batchnorm and n % batch_size == 1

    @property
    def n_features(self) -> int:
        return self.widths[0]

    @property
    def n_classes(self) -> int:
        return self.widths[-1]

    @property
    def n_params(self) -> int:
        linear = sum(a * b + b for a, b in zip(self.widths, self.widths[1:], strict=False))
        norms = 2 * sum(self.widths[1:-1]) if self.batchnorm else 0
        return linear + norms

    @property
    def arch(self) -> str:
        """``2-16-2``: how the lesson names the MLP."""
        return "-".join(map(str, self.widths))

    @property
    def layers(self) -> str:
        """``Linear(2, 16) -> ReLU -> Linear(16, 2)``, for messages."""
        parts: list[str] = []
        for i, (a, b) in enumerate(zip(self.widths, self.widths[1:], strict=False)):
            parts.append(f"Linear({a}, {b})")
            if i < len(self.widths) - 2:
                if self.batchnorm:
                    parts.append(f"BatchNorm1d({b})")
                parts.append("ReLU")
                if self.dropout:
                    parts.append(f"Dropout({self.dropout:g})")
        return " -> ".join(parts)

    @property
    def shapes(self) -> list[list[int]]:
        """The sorted parameter shapes, as ``check model.init`` compares them."""
        shapes: list[list[int]] = []
        for i, (a, b) in enumerate(zip(self.widths, self.widths[1:], strict=False)):
            shapes += [[b, a], [b]]
            if self.batchnorm and i < len(self.widths) - 2:
                shapes += [[b], [b]]
        return sorted(shapes)

    def build(self, seed: int = 0, *, dropout: float | None = None, device: str = "cpu"):
        """This MLP with the initial weights ``torch.manual_seed(seed)`` gives; global random state untouched.

        ``dropout`` adds a ``Dropout(p)`` after each hidden ReLU when the track's model has none (the modes
        checks need train and eval mode to differ); the parameters are the same either way.
        """
        import torch
        from torch import nn

        p = self.dropout or dropout
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # the CPU generator is the one nn.Linear draws from
            layers: list[nn.Module] = []
            for i, (a, b) in enumerate(zip(self.widths, self.widths[1:], strict=False)):
                layers.append(nn.Linear(a, b))
                if i < len(self.widths) - 2:
                    if self.batchnorm:
                        layers.append(nn.BatchNorm1d(b))
                    layers.append(nn.ReLU())
                    if p:
                        layers.append(nn.Dropout(p))
            model = nn.Sequential(*layers)
        return model.to(device)


@dataclass(frozen=True)
class Thresholds:
    batch_size: int = 32
    """The lesson's batch size (the loader checks, ``kata run``'s default)."""
    overfit_examples: int = 8
    overfit_steps: int = 500
    overfit_lr: float = 0.5
    overfit_loss: float = 0.1
    """Overfitting ``overfit_examples`` with SGD must bring the loss under this."""
    converge_epochs: int = 100
    converge_lr: float = 0.01
    converge_acc: float = 0.9
    """Adam at ``converge_lr`` for ``converge_epochs`` must classify this share of validation right."""
    converge_reached: float = 0.96
    """What the track's reference reaches there (quoted in the failure message)."""
    falls_lr: float = 0.1
    falls_epochs: int = 10
    """SGD at ``falls_lr`` must lower the training loss in every one of ``falls_epochs`` epochs."""
    epochs: int = 30
    """The track's usual run."""


@dataclass(frozen=True)
class Track:
    id: str
    title: Message
    order: int
    protocol: tuple[str, ...]
    data: DataSpec
    model: ModelSpec
    thresholds: Thresholds
    root: Path
    """The project folder the paths below are relative to."""
    reference_path: str
    mutants_path: str
    katas_path: str
    file: Path = field(compare=False)
    costs: tuple[tuple[str, float], ...] = field(default=(), compare=False)
    """(check id, milliseconds on the reference) from the track's [costs] table: how ``kata check`` shares the
    checks between its processes so they end together. A check not listed costs what it declares
    (``checker.checks.base.Check.cost``); the table never changes what a check observes or how it is judged."""

    @property
    def reference(self) -> Path:
        return self.root / self.reference_path

    @property
    def mutants_dir(self) -> Path:
        return self.root / self.mutants_path

    @property
    def katas_dir(self) -> Path:
        return self.root / self.katas_path

    @property
    def functions(self) -> dict[str, Any]:
        """Every protocol function a loop file of this track defines, by name."""

        return functions_of(self.protocol)

    def runs(self, check) -> bool:
        """Whether ``check`` applies: the track declares every function it calls, with the signature it expects (its
        protocol group's, else v1's: a check of a group may also call the v1 functions the group builds on)."""

        expected = {f.name: f for f in (*PROTOCOLS["v1"], *PROTOCOLS[check.protocol])}
        mine = self.functions
        return all(name in mine and mine[name] == expected.get(name) for name in check.calls)

    def split(self, seed: int = 0):
        """The track's data for ``seed``: ``LessonData`` (float32 features, int64 labels)."""
        return split_of(self.data, seed)


@dataclass(frozen=True)
class LessonData:
    X_train: Any
    y_train: Any
    X_val: Any
    y_val: Any

    def as_tuple(self) -> tuple:
        return self.X_train, self.y_train, self.X_val, self.y_val


def raw_arrays(spec: DataSpec, seed: int = 0):
    """The data before the split: ``(X, y)`` as numpy arrays, or, for the reference's own make_data, the four
    parts it returns (already split). TrackError names what could not be read."""
    import numpy as np

    if spec.source == "file":
        return _read_file(spec)
    if spec.source == "reference":
        return _reference_data(spec, seed)
    import sklearn.datasets

    make = getattr(sklearn.datasets, spec.generator, None)
    if not callable(make):
        raise TrackError(f"[data] {spec.source} {spec.generator!r} is not a function of sklearn.datasets")
    try:
        if spec.source == "dataset":  # bundled with scikit-learn: nothing downloads
            X, y = make(return_X_y=True, **dict(spec.params))
        else:
            X, y = make(n_samples=spec.n_samples, random_state=seed, **dict(spec.params))
    except (TypeError, ValueError, OSError) as exc:
        raise TrackError(f"[data] {spec.call()} failed: {exc}") from None
    return np.asarray(X), np.asarray(y)


def _read_file(spec: DataSpec):
    """A course's data file: NPZ with arrays ``X`` and ``y``, or CSV (a header row, the label in the last
    column)."""
    import numpy as np

    path = Path(spec.path or "")
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as npz:
                if "X" not in npz or "y" not in npz:
                    raise TrackError(f"[data] file {path}: an NPZ file needs arrays named X and y "
                                     f"(it has {', '.join(npz.files) or 'none'})")
                return np.asarray(npz["X"]), np.asarray(npz["y"])
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except OSError as exc:
        raise TrackError(f"[data] file {path}: cannot read it ({exc})") from None
    except ValueError as exc:
        raise TrackError(f"[data] file {path}: not a CSV of numbers with one header row ({exc})") from None
    return table[:, :-1], table[:, -1]


def _reference_data(spec: DataSpec, seed: int):
    from checker.loopfile.loading import load_module

    path = Path(spec.path or "")
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TrackError(f"[data] the reference {path}: cannot read it ({exc})") from None
    try:
        module = load_module(source, str(path))
        out = module.make_data(seed=seed)
    except Exception as exc:  # noqa: BLE001 - the instructor's reference, said in one line
        raise TrackError(f"[data] the reference's make_data(seed={seed}) failed: {type(exc).__name__}: {exc}"
                         ) from None
    if not isinstance(out, tuple | list) or len(out) != 4:
        raise TrackError("[data] the reference's make_data must return X_train, y_train, X_val, y_val")
    return tuple(_numpy(part) for part in out)


def _numpy(part):
    import numpy as np

    detach = getattr(part, "detach", None)
    return np.asarray(detach().cpu().numpy() if callable(detach) else part)


def arrays_of(spec: DataSpec, seed: int = 0) -> tuple:
    """The track's four parts as numpy arrays (float32 features, int64 labels): read, scaled, split, standardised
    as the track declares; TrackError says what does not fit the declared sizes."""
    import numpy as np

    raw = raw_arrays(spec, seed)
    if len(raw) == 4:
        X_tr, y_tr, X_va, y_va = raw
        n = len(X_tr) + len(X_va)
        if n != spec.n_samples or len(X_va) != spec.n_val:
            raise TrackError(f"[data] the reference's make_data gives {len(X_tr)}/{len(X_va)} rows; the track "
                             f"declares n_samples = {spec.n_samples} and n_val = {spec.n_val}")
    else:
        from sklearn.model_selection import train_test_split

        X, y = raw
        if len(X) != spec.n_samples:
            raise TrackError(f"[data] {spec.call()} has {len(X)} rows, but the track declares n_samples = "
                             f"{spec.n_samples}")
        if spec.scale is not None:
            X = X * spec.scale
        X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=spec.n_val, random_state=seed,
                                                  stratify=y if spec.stratify else None)
    if spec.standardize:  # as StandardScaler().fit(X_train) does it, in float64
        X_tr, X_va = np.asarray(X_tr, dtype=np.float64), np.asarray(X_va, dtype=np.float64)
        mean, std = X_tr.mean(axis=0), X_tr.std(axis=0)
        std = np.where(std > 0, std, 1.0)
        X_tr, X_va = (X_tr - mean) / std, (X_va - mean) / std
    return (np.ascontiguousarray(X_tr, dtype=np.float32), np.asarray(y_tr, dtype=np.int64),
            np.ascontiguousarray(X_va, dtype=np.float32), np.asarray(y_va, dtype=np.int64))


def lesson_data(arrays) -> LessonData:
    """Four numpy arrays as the tensors the checks compare with."""
    import torch

    return LessonData(*(torch.tensor(a) for a in arrays))


@functools.lru_cache(maxsize=8)
def split_of(spec: DataSpec, seed: int = 0) -> LessonData:
    return lesson_data(arrays_of(spec, seed))


# --------------------------------------------------------------------------- reading track files

TRACK_FIELDS = (
    Field("id", TEXT, doc="the track's name, as `--track` takes it"),
    Field("title", MESSAGE, doc="a [title] table with en and es"),
    Field("order", POSITIVE_INT, doc="where `kata list` shows the track"),
    Field("protocol", STRINGS, doc="protocol groups the loop files define, e.g. [\"v1\"]"),
    Field("reference", TEXT, doc="path of the reference loop, e.g. \"solutions/<track>/loop.py\""),
    Field("mutants", TEXT, required=False, doc="folder of the track's mutants (default: the course's `mutants`/<id>)"),
    Field("katas", TEXT, required=False, doc="folder of the track's katas (default: the course's `katas`/<id>)"),
    Field("data", TABLE, doc="a [data] table"),
    Field("model", TABLE, doc="a [model] table"),
    Field("thresholds", TABLE, required=False, doc="a [thresholds] table"),
    Field("costs", TABLE, required=False, doc="a [costs] table: how many milliseconds each check takes on the "
          "track's reference (benchmarks/calibrate_costs.py measures and writes it); only how kata shares the "
          "checks between its processes"),
)
DATA_FIELDS = (
    Field("generator", TEXT, required=False, doc="a make_* function of sklearn.datasets"),
    Field("dataset", TEXT, required=False, doc="a load_* dataset bundled with scikit-learn, e.g. load_digits"),
    Field("file", TEXT, required=False, doc="a CSV or NPZ file beside the track file"),
    Field("source", TEXT, required=False, doc="\"reference\": the reference loop's own make_data(seed=0)"),
    Field("n_samples", POSITIVE_INT, doc="rows in all (a dataset's or file's must match)"),
    Field("n_val", POSITIVE_INT, doc="examples held out for validation"),
    Field("stratify", BOOL, required=False),
    Field("params", TABLE, required=False, doc="the generator's (or dataset's) other keyword arguments"),
    Field("scale", NUMBER, required=False, doc="multiply the features by this before the split (1/16 = 0.0625)"),
    Field("standardize", BOOL, required=False, doc="standardise the features with the training split's mean "
          "and standard deviation"),
)
MODEL_FIELDS = (
    Field("widths", INTS, doc="features in, hidden widths, classes out, e.g. [2, 16, 2]"),
    Field("batchnorm", BOOL, required=False),
    Field("dropout", FRACTION, required=False),
)
THRESHOLD_FIELDS = (
    Field("batch_size", POSITIVE_INT, required=False, doc="the lesson's batch size: the loader checks' and "
          "`kata run`'s default (default 32)"),
    Field("overfit_examples", POSITIVE_INT, required=False, doc="steps.overfit: how many training examples to "
          "overfit (default 8)"),
    Field("overfit_steps", POSITIVE_INT, required=False, doc="steps.overfit: SGD steps on them (default 500)"),
    Field("overfit_lr", NUMBER, required=False, doc="steps.overfit: SGD's lr (default 0.5)"),
    Field("overfit_loss", NUMBER, required=False, doc="steps.overfit: the loss must end under this (default 0.1)"),
    Field("converge_epochs", POSITIVE_INT, required=False, doc="converge.adam: epochs of Adam (default 100)"),
    Field("converge_lr", NUMBER, required=False, doc="converge.adam: Adam's lr (default 0.01)"),
    Field("converge_acc", FRACTION, required=False, doc="converge.adam: the validation accuracy a loop must reach "
          "(default 0.9)"),
    Field("converge_reached", FRACTION, required=False, doc="what the track's reference reaches there, quoted "
          "when the check fails (default 0.96)"),
    Field("falls_lr", NUMBER, required=False, doc="loss.falls: SGD's lr (default 0.1)"),
    Field("falls_epochs", POSITIVE_INT, required=False, doc="loss.falls: epochs in which the training loss must "
          "fall, every one (default 10)"),
    Field("epochs", POSITIVE_INT, required=False, doc="the track's usual run (`kata run`, `kata explore`; "
          "default 30)"),
)


def fields_markdown() -> str:
    """The fields of a track file and of a course's kata.toml, as the Markdown tables docs/courses.md holds
    (tests/test_course_docs.py keeps them equal): ``python -m checker.setting.tracks``."""
    from checker.setting.course import COURSE_FIELDS

    tables = [("kata.toml (the course)", "", COURSE_FIELDS), ("track file", "", TRACK_FIELDS),
              ("track file", "[data]", DATA_FIELDS), ("track file", "[model]", MODEL_FIELDS),
              ("track file", "[thresholds]", THRESHOLD_FIELDS)]
    out = []
    for where, table, fields in tables:
        out += [f"**{where}{', ' + table if table else ''}**", "", "| field | kind | required | what |",
                "|---|---|---|---|"]
        for f in fields:
            doc = f.doc.replace("|", "\\|").replace("<", "&lt;")
            out.append(f"| `{f.name}` | {f.kind} | {'yes' if f.required else 'no'} | {doc} |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _table(data: dict, fields: tuple[Field, ...], where: str) -> dict[str, Any]:
    refuse_unknown(data, [f.name for f in fields], where, TrackError)
    values = take(data, fields, where, TrackError)
    return {k: v for k, v in values.items() if v is not None}


def _data_spec(data: dict, path: Path, root: Path, reference: str) -> DataSpec:
    """The [data] table as a DataSpec: exactly one source, and sizes that fit."""
    where = f"{path} [data]"
    kind = _source_kind(data, where)
    name = data.get(kind, "reference") if kind != "reference" else "reference"
    file = None
    if kind in ("generator", "dataset"):
        _check_sklearn_name(kind, name, where)
    if kind == "file":
        file = _data_file(path, name, where)
        name = f"file:{file.name}"
    if kind == "reference":
        file = _reference_file(data, root, reference, where)
    if kind in ("file", "reference") and "params" in data:
        raise TrackError(f"{where}: params are a generator's or dataset's arguments; a {kind} takes none")
    spec = DataSpec(generator=name, params=tuple(sorted((data.get("params") or {}).items())),
                    n_samples=data["n_samples"], n_val=data["n_val"], stratify=data.get("stratify", True),
                    source=kind, path=str(file) if file else None, scale=data.get("scale"),
                    standardize=bool(data.get("standardize", False)))
    if spec.n_val >= spec.n_samples:
        raise TrackError(f"{where}: n_val ({spec.n_val}) must be below n_samples ({spec.n_samples})")
    return spec


def _source_kind(data: dict, where: str) -> str:
    """Which one source the [data] table gives: generator, dataset, file or reference; else TrackError."""
    given = [name for name in ("generator", "dataset", "file") if name in data]
    if data.get("source") is not None:
        if data["source"] != "reference":
            raise TrackError(f"{where}: source {data['source']!r}: the only source field is \"reference\" (the "
                             f"reference loop's make_data); else give generator, dataset or file")
        given.append("reference")
    if len(given) != 1:
        raise TrackError(f"{where}: give exactly one of generator (make_*), dataset (load_*), file (CSV or NPZ) "
                         f"or source = \"reference\"" + (f" (found {', '.join(given)})" if given else ""))
    return {"generator": "generator", "dataset": "dataset", "file": "file", "reference": "reference"}[given[0]]


def _check_sklearn_name(kind: str, name: str, where: str) -> None:
    """A generator must name a make_* function of sklearn.datasets, a dataset a load_* one; else TrackError."""
    if kind == "generator" and (not name.startswith("make_") or not name.isidentifier()):
        raise TrackError(f"{where}: generator {name!r} is not a make_* function of sklearn.datasets")
    if kind == "dataset" and (not name.startswith("load_") or not name.isidentifier()):
        raise TrackError(f"{where}: dataset {name!r} is not a load_* function of sklearn.datasets (a dataset "
                         f"bundled with scikit-learn; nothing is downloaded)")


def _data_file(path: Path, name: str, where: str) -> Path:
    """The CSV or NPZ file ``name`` beside the track file; TrackError when it is neither or missing."""
    file = (path.parent / name).resolve()
    if file.suffix not in (".csv", ".npz"):
        raise TrackError(f"{where}: file {name!r}: use a .csv or an .npz file")
    if not file.is_file():
        raise TrackError(f"{where}: file {name!r}: no such file beside the track file ({file})")
    return file


def _reference_file(data: dict, root: Path, reference: str, where: str) -> Path:
    """The reference loop whose make_data gives the data; TrackError when params, scale or standardize are set."""
    file = (root / reference).resolve()
    if data.get("scale") is not None or data.get("standardize") or "params" in data:
        raise TrackError(f"{where}: source = \"reference\": the reference's make_data already gives the "
                         f"split data; leave out params, scale and standardize")
    return file


def parse_track(path: Path, root: Path, defaults: dict[str, str] | None = None) -> Track:
    """The track file at ``path`` (its paths relative to ``root``); ``defaults``: the ``mutants`` and ``katas``
    folders (relative to ``root``) of a file that names none (a course's ``kata.toml`` gives them)."""
    raw = read_toml(path, TrackError)
    where = str(path)
    refuse_unknown(raw, [f.name for f in TRACK_FIELDS], where, TrackError)
    top = take(raw, TRACK_FIELDS, where, TrackError)
    if top["id"] != path.stem:
        raise TrackError(f"{where}: field `id` is {top['id']!r}, but the file is named {path.name} "
                         f"(they must match)")
    for name in ("mutants", "katas"):
        if top[name] is None:
            top[name] = (defaults or {}).get(name)
        if top[name] is None:
            raise TrackError(f"{where}: missing field `{name}` (folder of the track's {name}; or give `{name}` in "
                             f"the course's kata.toml: a folder with one subfolder per track)")
    unknown = [p for p in top["protocol"] if p not in PROTOCOLS]
    if unknown:
        raise TrackError(f"{where}: field `protocol`: unknown group(s) {', '.join(unknown)} "
                         f"(known: {', '.join(PROTOCOLS)})")
    spec = _data_spec(_table(top["data"], DATA_FIELDS, f"{where} [data]"), path, root, top["reference"])
    model = ModelSpec(**_table(top["model"], MODEL_FIELDS, f"{where} [model]"))
    if len(model.widths) < 2:
        raise TrackError(f"{where} [model]: widths needs at least the features in and the classes out")
    thresholds = Thresholds(**_table(top["thresholds"] or {}, THRESHOLD_FIELDS, f"{where} [thresholds]"))
    return Track(
        id=top["id"], title=top["title"], order=top["order"], protocol=top["protocol"], data=spec, model=model,
        thresholds=thresholds, root=root, reference_path=top["reference"], mutants_path=top["mutants"],
        katas_path=top["katas"], file=path, costs=_costs(top["costs"] or {}, f"{where} [costs]"),
    )


_CHECK_ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*")


def _costs(table: dict, where: str) -> tuple[tuple[str, float], ...]:
    """The [costs] table as sorted (check id, milliseconds) pairs: each key a check id, each value above 0."""
    out = []
    for cid, value in sorted(table.items()):
        if not _CHECK_ID.fullmatch(cid):
            raise TrackError(f"{where}: {cid!r} is not a check id (family.name, as `kata check --only` takes it)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
            raise TrackError(f"{where}: {cid!r} must be a number of milliseconds above 0, got {value!r}")
        out.append((cid, float(value)))
    return tuple(out)


def tracks_dir() -> Path:
    return TRACKS_DIR


def track_folders() -> list[Path]:
    """The shipped ``tracks/``, then the course folder's (``kata.toml``, found from the working folder upwards:
    ``checker.setting.course``), then every folder in ``$KATA_TRACKS``."""
    import os

    try:
        course = find_course()
    except CourseError as exc:
        raise TrackError(str(exc)) from None
    ours = course.track_folders if course is not None else []
    extra = [Path(p).expanduser() for p in os.environ.get(TRACKS_ENV, "").split(os.pathsep) if p.strip()]
    found: dict[Path, None] = {}
    for folder in (tracks_dir(), *ours, *extra):
        found.setdefault(folder.resolve() if folder.exists() else folder, None)
    return list(found)


def default_track() -> str:
    """The course's ``track`` (kata.toml), else moons."""
    try:
        course = find_course()
    except CourseError as exc:
        raise TrackError(str(exc)) from None
    return (course.track if course is not None and course.track else None) or DEFAULT


def all_tracks(folder: Path | None = None) -> dict[str, Track]:
    """Every track (in ``folder``, else in :func:`track_folders`), by id, in their declared order.

    Two tracks with one id, or a ``$KATA_TRACKS`` folder that does not exist, raise TrackError.
    """
    found: dict[str, Track] = {}
    course = None
    if folder is None:
        try:
            course = find_course()
        except CourseError as exc:
            raise TrackError(str(exc)) from None
    ours = {f.resolve() for f in course.track_folders if f.exists()} if course is not None else set()
    for where in ([folder] if folder else track_folders()):
        if not where.is_dir():
            raise TrackError(f"{where}: no such folder of track files (${TRACKS_ENV})")
        for path in sorted(where.glob("*.toml")):
            defaults = None
            if course is not None and where.resolve() in ours:  # the course's kata.toml may name their folders
                defaults = {name: os.path.relpath(base, where.parent)
                            for name, base in course.track_defaults(path.stem).items()}
            track = parse_track(path, where.parent, defaults)
            if track.id in found:
                raise TrackError(f"{path}: track {track.id!r} is already declared by {found[track.id].file}")
            found[track.id] = track
    return {t.id: t for t in sorted(found.values(), key=lambda t: (t.order, t.id))}


def get_track(name: str | None = None) -> Track:
    """The track called ``name`` (default: the course's, else moons); TrackError lists the known ones otherwise."""
    name = name or default_track()
    tracks = all_tracks()
    if name not in tracks:
        raise TrackError(f"no track called {name!r} (known: {', '.join(tracks)})")
    return tracks[name]


def track_of_path(path: Path) -> Track | None:
    """The track whose katas, mutants or reference folder holds ``path``, if any (most specific wins)."""
    path = path.resolve()
    best: tuple[int, Track] | None = None
    for track in all_tracks().values():
        for folder in (track.katas_dir, track.mutants_dir, track.reference.parent):
            folder = folder.resolve()
            if path == folder or folder in path.parents:
                depth = len(folder.parts)
                if best is None or depth > best[0]:
                    best = (depth, track)
    return best[1] if best else None


def hidden_paths(extra=()) -> tuple[str, ...]:
    """What no graded child may see (``sandbox.Limits.hide``), computed in the parent: kata's data folders
    (solutions, mutants, katas, tracks, an installed ``checker/_data``), where kata runs from its checkout every
    entry of the checkout but the package and the interpreter's folder (.git, tests, benchmarks, docs...), every
    track's reference, mutants and katas folders, a course's ``$KATA_TRACKS`` folders, then ``extra`` (the class
    folder, the checked file's folder, the gradebook's). Absolute, resolved, each once; paths that do not exist are
    left out. (The sandbox closes whatever lies outside the system's folders anyway; this list also covers a
    checkout kept inside them, and what the audit hook refuses to open.)"""
    import os
    import sys

    from checker.base.paths import KATAS_DIR, MUTANTS_DIR, SOLUTIONS_DIR, TRACKS_DIR

    package = Path(__file__).resolve().parents[1]
    data = package / "_data"
    found: list[Path] = [KATAS_DIR, MUTANTS_DIR, SOLUTIONS_DIR, TRACKS_DIR, data]
    if SOLUTIONS_DIR.parent == package.parent:  # a checkout: the data folders lie beside the package
        prefixes = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        for entry in sorted(package.parent.iterdir()):
            real = entry.resolve()
            if real != package and not any(real == p or real in p.parents for p in prefixes):
                found.append(entry)
    try:
        found += track_folders()
        for track in all_tracks().values():
            found += [track.reference.parent, track.mutants_dir, track.katas_dir]
    except TrackError:  # a broken $KATA_TRACKS: what is known is hidden still
        pass
    found += [Path(p) for p in extra]
    out: dict[str, None] = {}
    for path in found:
        real = os.path.realpath(os.path.expanduser(str(path)))
        if os.path.exists(real):
            out[real] = None
    return tuple(out)


def shared_files(track: Track | None) -> tuple[str, ...]:
    """What a graded child gets a read-only copy of in its private folder (``sandbox.Limits.shared_files``): the
    track's data file when its data is a course's ``file``, so a loop's own ``make_data`` reads it as
    ``Path(__file__).with_name(NAME)`` (or by its bare name), while the track's folder stays hidden."""
    if track is None or track.data.source != "file" or not track.data.path:
        return ()
    return (track.data.path,)


def submission_folders(filenames) -> list[str]:
    """The folder of each file that exists on disk (a classmate's folder, the checked file's own)."""
    import os

    return [os.path.dirname(os.path.realpath(f)) for f in filenames if isinstance(f, str) and os.path.isfile(f)]


def track_named(name: str | None, path: str | None = None) -> Track:
    """The track of a command: ``--track NAME``, else the track whose folders hold ``path``, else moons.

    An unknown name (or a broken track file) is a UsageProblem naming the known tracks.
    """
    try:
        if name:
            known = all_tracks()
            if name not in known:
                raise UsageProblem(NO_SUCH_TRACK, name=name, known=", ".join(known))
            return known[name]
        found = track_of_path(Path(path)) if path else None
        return found or get_track()
    except TrackError as exc:
        raise UsageProblem(f"--track: {exc}") from None


NO_SUCH_TRACK = Message(en="--track: no track called {name!r} (known: {known}; `kata tracks` describes them)",
                        es="--track: no hay ningún recorrido llamado {name!r} (los que hay: {known}; "
                           "`kata tracks` los describe)")


if __name__ == "__main__":  # python -m checker.setting.tracks: the tables of docs/courses.md
    print(fields_markdown(), end="")
