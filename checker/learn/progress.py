"""A learner's progress, kept in their working folder as ``.kata/progress.json``.

The working folder is ``--dir``, else ``$KATA_DIR``, else the current directory; it holds the
learner's kata files and this record, so a class folder can be zipped and handed in whole.
The file's format is documented in docs/progress.md; ``SCHEMA`` is its version.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from checker.base.i18n import Message
from checker.setting.tracks import Track, track_named

SCHEMA = 1
WORKDIR_ENV = "KATA_DIR"
STATE_DIR = ".kata"
PROGRESS_FILE = "progress.json"

NOT_A_FOLDER = Message(
    en="{path} is not a folder; give your working folder with --dir or $KATA_DIR",
    es="{path} no es una carpeta; indica tu carpeta de trabajo con --dir o $KATA_DIR",
)
DAMAGED = Message(
    en="{path} is damaged ({why}).\nFix it by hand (see docs/progress.md), or move it away to start over: "
       "mv {path} {path}.old\nYour kata files are not touched either way.",
    es="{path} está dañado ({why}).\nArréglalo a mano (ver docs/progress.md) o apártalo para empezar "
       "de nuevo: mv {path} {path}.old\nTus archivos de kata no se tocan en ningún caso.",
)
TOO_NEW = Message(
    en="{path} was written by a newer kata (format {found}, this one reads {known}); update kata",
    es="{path} lo escribió un kata más reciente (formato {found}, este lee {known}); actualiza kata",
)
CANNOT_WRITE = Message(
    en="cannot write {path} ({why})",
    es="no se puede escribir {path} ({why})",
)


class ProgressError(Exception):
    """The working folder or its progress file cannot be used; ``render(lang)`` says how to fix it."""

    def __init__(self, message: Message, **params: Any):
        self.message = message
        self.params = params
        super().__init__(self.render("en"))

    def render(self, lang: str = "en") -> str:
        params = {k: v.render(lang) if isinstance(v, Message) else v for k, v in self.params.items()}
        return self.message.render(lang, **params)


def now() -> str:
    """The current time as ISO 8601 UTC, to the second (``2025-01-31T09:15:02Z``)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_workdir(explicit: str | Path | None = None) -> Path:
    """The learner's working folder: ``explicit``, else ``$KATA_DIR``, else the current directory."""
    chosen = explicit if explicit is not None else (os.environ.get(WORKDIR_ENV) or os.getcwd())
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise ProgressError(NOT_A_FOLDER, path=path)
    return path


@dataclass
class KataRecord:
    """What the progress file remembers about one kata."""

    file: str
    started: str
    starter_sha256: str
    hints: int = 0
    solved: str | None = None
    checks: int = 0
    track: str | None = None
    """The kata's track (None in a file written before kata recorded it): its file is graded on this track in any
    shell, even where another track has a kata of the same name."""

    def to_json(self) -> dict[str, Any]:
        data = {"file": self.file, "started": self.started, "starter_sha256": self.starter_sha256,
                "hints": self.hints, "solved": self.solved, "checks": self.checks}
        return data | ({"track": self.track} if self.track else {})


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "file": (str,), "started": (str,), "starter_sha256": (str,), "hints": (int,),
    "solved": (str, type(None)), "checks": (int,), "track": (str, type(None)),
}
_REQUIRED = ("file", "started", "starter_sha256")


def _damaged(path: Path, en: str, es: str) -> ProgressError:
    """The error for a damaged progress file, saying why in both languages."""
    return ProgressError(DAMAGED, path=path, why=Message(en, es))


def _read_json(path: Path) -> Any:
    """The progress file's JSON; ProgressError when it cannot be read or parsed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise _damaged(path, "not UTF-8 text", "no es texto UTF-8") from None
    except json.JSONDecodeError as exc:
        raise _damaged(path, f"not valid JSON: {exc.msg}, line {exc.lineno}",
                       f"no es JSON válido: {exc.msg}, línea {exc.lineno}") from None
    except OSError as exc:
        raise _damaged(path, exc.strerror or str(exc), exc.strerror or str(exc)) from None


def _top_level(path: Path, data: Any) -> tuple[str | None, dict]:
    """(current, katas) of the file's top level, its schema checked; ProgressError when damaged or too new."""
    if not isinstance(data, dict):
        raise _damaged(path, "the top level is not an object", "el nivel superior no es un objeto")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise _damaged(path, "'schema' is missing or not a number", "'schema' falta o no es un número")
    if schema > SCHEMA:
        raise ProgressError(TOO_NEW, path=path, found=schema, known=SCHEMA)
    current = data.get("current")
    if current is not None and not isinstance(current, str):
        raise _damaged(path, "'current' is neither a kata name nor null",
                       "'current' no es un nombre de kata ni null")
    katas = data.get("katas", {})
    if not isinstance(katas, dict):
        raise _damaged(path, "'katas' is not an object", "'katas' no es un objeto")
    return current, katas


def _kata_record(path: Path, slug: str, record: Any) -> KataRecord:
    """One kata's record, every field's type and value checked; ProgressError when damaged."""
    where = f"katas.{slug}"
    if not isinstance(record, dict):
        raise _damaged(path, f"{where} is not an object", f"{where} no es un objeto")
    for key, types in _FIELD_TYPES.items():
        if key not in record:
            if key in _REQUIRED:
                raise _damaged(path, f"{where}.{key} is missing", f"falta {where}.{key}")
            continue
        value = record[key]
        if not isinstance(value, types) or isinstance(value, bool):
            raise _damaged(path, f"{where}.{key} has the wrong type", f"{where}.{key} tiene un tipo incorrecto")
    name = record["file"]
    if Path(name).name != name or name in ("", ".", ".."):
        raise _damaged(path, f"{where}.file must be a file name in this folder",
                       f"{where}.file debe ser un nombre de archivo de esta carpeta")
    if record.get("hints", 0) < 0 or record.get("checks", 0) < 0:
        raise _damaged(path, f"{where} counts a negative number", f"{where} cuenta un número negativo")
    return KataRecord(**{k: record[k] for k in _FIELD_TYPES if k in record})


@dataclass
class Progress:
    workdir: Path
    current: str | None = None
    katas: dict[str, KataRecord] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.workdir / STATE_DIR / PROGRESS_FILE

    # -- reading -----------------------------------------------------------------------------------
    @classmethod
    def load(cls, workdir: Path) -> Progress:
        """The progress in ``workdir``; empty when there is no file yet, ProgressError when damaged."""
        progress = cls(workdir)
        path = progress.path
        if not path.exists():
            return progress

        data = _read_json(path)
        current, katas = _top_level(path, data)
        for slug, record in katas.items():
            progress.katas[slug] = _kata_record(path, slug, record)
        progress.current = current
        return progress

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "current": self.current,
                "katas": {slug: rec.to_json() for slug, rec in self.katas.items()}}

    # -- writing -----------------------------------------------------------------------------------
    def save(self) -> None:
        """Write the file atomically (a temporary file renamed over it): never half a file."""
        path = self.path
        try:
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise ProgressError(CANNOT_WRITE, path=path, why=exc.strerror or str(exc)) from None

    # -- what commands ask -------------------------------------------------------------------------
    def record(self, slug: str) -> KataRecord | None:
        return self.katas.get(slug)

    def is_solved(self, slug: str) -> bool:
        rec = self.katas.get(slug)
        return rec is not None and rec.solved is not None

    def start(self, slug: str, file: str, starter: str, track: str | None = None) -> KataRecord:
        """Make ``slug`` (of ``track``) the current kata; a kata started before keeps its hints and solved date."""
        rec = self.katas.get(slug)
        if rec is None:
            rec = KataRecord(file=file, started=now(), starter_sha256=sha256(starter), track=track)
            self.katas[slug] = rec
        else:
            rec.file = file
            rec.starter_sha256 = sha256(starter)
            rec.track = track or rec.track
        self.current = slug
        return rec

    def reveal_hint(self, slug: str, available: int) -> int:
        """Reveal one more hint (up to ``available``); the number now revealed."""
        rec = self.katas[slug]
        rec.hints = min(rec.hints + 1, available)
        return rec.hints

    def checked(self, slug: str, passed: bool) -> bool:
        """Count a check; on the first pass record when it was solved. True when newly solved."""
        rec = self.katas[slug]
        rec.checks += 1
        if passed and rec.solved is None:
            rec.solved = now()
            return True
        return False


# --------------------------------------------------------------------------- whose file is it


def track_of_file(path: str, workdir: str | None = None) -> str | None:
    """The track of the kata whose file ``path`` is, in the working folder's progress; None when it is none's."""
    from checker.catalogue.katas import KataFileError, load_katas  # the catalogue: only when a file is named

    try:
        folder = resolve_workdir(workdir)
        progress = Progress.load(folder)
        if not progress.katas:
            return None
        katas = {k.slug: k for k in load_katas(drafts=True)}
    except (ProgressError, KataFileError, OSError):
        return None
    for slug, rec in progress.katas.items():
        mine = folder / rec.file
        try:
            if (rec.track or slug in katas) and mine.exists() and os.path.samefile(mine, path):
                return rec.track or katas[slug].track
        except OSError:
            continue
    return None


def track_for_file(track: str | None, path: str | None, workdir: str | None = None) -> Track:
    """``--track``, else the track of the kata whose file PATH is (in the working folder's progress), else of
    the folder holding PATH, else moons."""
    if track is None and path is not None:
        track = track_of_file(path, workdir)
    return track_named(track, path)
