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
- where its **reference**, **mutants** and **katas** live (paths relative to the project root).

The moons track (``tracks/moons.toml``) is protocol v1 and the lesson's setting, number for number.
Checks read everything setting-dependent from ``lab.track``; none hard-codes moons.
"""

from __future__ import annotations

import functools
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

DEFAULT = "moons"
"""The track of protocol v1, and of every command run without ``--track``."""
TRACKS_ENV = "KATA_TRACKS"
"""More folders of track files (separated like PATH), e.g. a course's own: ``KATA_TRACKS=~/course/tracks``.
Paths inside a track file are relative to its folder's parent."""


class TrackError(Exception):
    """A track file that cannot be used; the message names the file and the field."""


# --------------------------------------------------------------------------- the parts of a track


@dataclass(frozen=True)
class DataSpec:
    generator: str
    """A ``make_*`` function of ``sklearn.datasets`` that takes ``n_samples`` and ``random_state``."""
    params: tuple[tuple[str, Any], ...]
    """Its other keyword arguments as (name, value) pairs, e.g. ``(("noise", 0.2),)`` or ``(("centers", 3),)``."""
    n_samples: int
    n_val: int
    """Examples held out for validation (``train_test_split(test_size=n_val)``)."""
    stratify: bool = True

    @property
    def n_train(self) -> int:
        return self.n_samples - self.n_val

    def call(self) -> str:
        """The generator call as a learner would write it, for messages."""
        args = [f"n_samples={self.n_samples}", *(f"{k}={v!r}" for k, v in self.params)]
        return f"{self.generator}({', '.join(args)})"


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
        """Whether ``check`` applies: the track declares every function it calls, with the signature it expects."""

        expected = {f.name: f for f in PROTOCOLS[check.protocol]}
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


@functools.lru_cache(maxsize=8)
def split_of(spec: DataSpec, seed: int = 0) -> LessonData:
    import sklearn.datasets
    import torch
    from sklearn.model_selection import train_test_split

    make = getattr(sklearn.datasets, spec.generator, None)
    if not callable(make):
        raise TrackError(f"[data] generator {spec.generator!r} is not a function of sklearn.datasets")
    try:
        X, y = make(n_samples=spec.n_samples, random_state=seed, **dict(spec.params))
    except (TypeError, ValueError) as exc:
        raise TrackError(f"[data] {spec.call()} failed: {exc}") from None
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=spec.n_val, random_state=seed,
                                              stratify=y if spec.stratify else None)
    return LessonData(
        torch.tensor(X_tr, dtype=torch.float32), torch.tensor(y_tr, dtype=torch.int64),
        torch.tensor(X_va, dtype=torch.float32), torch.tensor(y_va, dtype=torch.int64),
    )


# --------------------------------------------------------------------------- reading track files

TRACK_FIELDS = (
    Field("id", TEXT, doc="the track's name, as `--track` takes it"),
    Field("title", MESSAGE, doc="a [title] table with en and es"),
    Field("order", POSITIVE_INT, doc="where `kata list` shows the track"),
    Field("protocol", STRINGS, doc="protocol groups the loop files define, e.g. [\"v1\"]"),
    Field("reference", TEXT, doc="path of the reference loop, e.g. \"solutions/<track>/loop.py\""),
    Field("mutants", TEXT, doc="folder of the track's mutants"),
    Field("katas", TEXT, doc="folder of the track's katas"),
    Field("data", TABLE, doc="a [data] table"),
    Field("model", TABLE, doc="a [model] table"),
    Field("thresholds", TABLE, required=False, doc="a [thresholds] table"),
)
DATA_FIELDS = (
    Field("generator", TEXT, doc="a make_* function of sklearn.datasets"),
    Field("n_samples", POSITIVE_INT),
    Field("n_val", POSITIVE_INT, doc="examples held out for validation"),
    Field("stratify", BOOL, required=False),
    Field("params", TABLE, required=False, doc="the generator's other keyword arguments"),
)
MODEL_FIELDS = (
    Field("widths", INTS, doc="features in, hidden widths, classes out, e.g. [2, 16, 2]"),
    Field("batchnorm", BOOL, required=False),
    Field("dropout", FRACTION, required=False),
)
THRESHOLD_FIELDS = (
    Field("batch_size", POSITIVE_INT, required=False),
    Field("overfit_examples", POSITIVE_INT, required=False),
    Field("overfit_steps", POSITIVE_INT, required=False),
    Field("overfit_lr", NUMBER, required=False),
    Field("overfit_loss", NUMBER, required=False),
    Field("converge_epochs", POSITIVE_INT, required=False),
    Field("converge_lr", NUMBER, required=False),
    Field("converge_acc", FRACTION, required=False),
    Field("converge_reached", FRACTION, required=False),
    Field("falls_lr", NUMBER, required=False),
    Field("falls_epochs", POSITIVE_INT, required=False),
    Field("epochs", POSITIVE_INT, required=False),
)


def _table(data: dict, fields: tuple[Field, ...], where: str) -> dict[str, Any]:
    refuse_unknown(data, [f.name for f in fields], where, TrackError)
    values = take(data, fields, where, TrackError)
    return {k: v for k, v in values.items() if v is not None}


def parse_track(path: Path, root: Path) -> Track:
    raw = read_toml(path, TrackError)
    where = str(path)
    refuse_unknown(raw, [f.name for f in TRACK_FIELDS], where, TrackError)
    top = take(raw, TRACK_FIELDS, where, TrackError)
    if top["id"] != path.stem:
        raise TrackError(f"{where}: field `id` is {top['id']!r}, but the file is named {path.name} "
                         f"(they must match)")
    unknown = [p for p in top["protocol"] if p not in PROTOCOLS]
    if unknown:
        raise TrackError(f"{where}: field `protocol`: unknown group(s) {', '.join(unknown)} "
                         f"(known: {', '.join(PROTOCOLS)})")
    data = _table(top["data"], DATA_FIELDS, f"{where} [data]")
    data["params"] = tuple(sorted((data.get("params") or {}).items()))
    data.setdefault("stratify", True)
    spec = DataSpec(**data)
    # whether scikit-learn has it is known only once it is imported (split_of): kept out of `kata list`
    if not spec.generator.startswith("make_") or not spec.generator.isidentifier():
        raise TrackError(f"{where} [data]: generator {spec.generator!r} is not a make_* function of "
                         f"sklearn.datasets")
    if spec.n_val >= spec.n_samples:
        raise TrackError(f"{where} [data]: n_val ({spec.n_val}) must be below n_samples ({spec.n_samples})")
    model = ModelSpec(**_table(top["model"], MODEL_FIELDS, f"{where} [model]"))
    if len(model.widths) < 2:
        raise TrackError(f"{where} [model]: widths needs at least the features in and the classes out")
    thresholds = Thresholds(**_table(top["thresholds"] or {}, THRESHOLD_FIELDS, f"{where} [thresholds]"))
    return Track(
        id=top["id"], title=top["title"], order=top["order"], protocol=top["protocol"], data=spec, model=model,
        thresholds=thresholds, root=root, reference_path=top["reference"], mutants_path=top["mutants"],
        katas_path=top["katas"], file=path,
    )


def tracks_dir() -> Path:
    return TRACKS_DIR


def track_folders() -> list[Path]:
    """The shipped ``tracks/``, then every folder in ``$KATA_TRACKS``."""
    import os

    extra = [Path(p).expanduser() for p in os.environ.get(TRACKS_ENV, "").split(os.pathsep) if p.strip()]
    return [tracks_dir(), *extra]


def all_tracks(folder: Path | None = None) -> dict[str, Track]:
    """Every track (in ``folder``, else in :func:`track_folders`), by id, in their declared order.

    Two tracks with one id, or a ``$KATA_TRACKS`` folder that does not exist, raise TrackError.
    """
    found: dict[str, Track] = {}
    for where in ([folder] if folder else track_folders()):
        if not where.is_dir():
            raise TrackError(f"{where}: no such folder of track files (${TRACKS_ENV})")
        for path in sorted(where.glob("*.toml")):
            track = parse_track(path, where.parent)
            if track.id in found:
                raise TrackError(f"{path}: track {track.id!r} is already declared by {found[track.id].file}")
            found[track.id] = track
    return {t.id: t for t in sorted(found.values(), key=lambda t: (t.order, t.id))}


def get_track(name: str | None = None) -> Track:
    """The track called ``name`` (default: moons); TrackError lists the known ones otherwise."""
    name = name or DEFAULT
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
    (solutions, mutants, katas, tracks, an installed ``checker/_data``), every track's reference, mutants and
    katas folders, a course's ``$KATA_TRACKS`` folders, then ``extra`` (the class folder, the checked file's
    folder, the gradebook's). Absolute, resolved, each once; paths that do not exist are left out."""
    import os

    from checker.base.paths import KATAS_DIR, MUTANTS_DIR, SOLUTIONS_DIR, TRACKS_DIR

    data = Path(__file__).resolve().parents[1] / "_data"
    found: list[Path] = [KATAS_DIR, MUTANTS_DIR, SOLUTIONS_DIR, TRACKS_DIR, data]
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
