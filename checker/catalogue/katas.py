"""The kata catalogue: one TOML file per kata under ``katas/``, ordered by its number.

A kata file is ``katas/<NNN>-<slug>.toml`` (``NNN`` orders the katas, gaps allowed; the slug names
the kata and its starter file ``<slug>.py``)::

    mutant = "zero-grad-missing"            # the mutant (mutants/<id>.toml) that breaks the loop

    [title]                                 # a few words
    en = "..."
    es = "..."

    [story]                                 # the symptom the learner can see with `kata run`
    en = "..."
    es = "..."

    [[hints]]                               # 2-3 of them, from vague to precise
    en = "..."
    es = "..."

    [read]                                  # what to read once solved
    en = "..."
    es = "..."

    [try]                                   # the `kata run` flags that show the symptom
    args = ["--optimizer", "sgd", "--lr", "0.1", "--epochs", "10"]

    guide = ["step", "overfit"]             # guide sections to read (`kata read step`), at least one

A *practice* kata has no mutant and no broken loop: it asks the learner to predict what a run of
the lesson's loop will measure, in an answers file ``<slug>.toml``, and `kata check` compares the
answers with figures it measures (checker/learn/practice.py)::

    [practice]
    exercise = "trace"                      # which measurement and questions (practice.EXERCISES)
    runs = [["trace", "--lesson"]]          # the kata commands that show the answers (without `kata`)

Any mistake in a file raises KataFileError naming the file and the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from checker.base.i18n import Message
from checker.base.paths import KATAS_DIR
from checker.base.toml import MESSAGE, MESSAGES, STRINGS, TABLE, TEXT, Field
from checker.catalogue.mutants import mutant_source
from checker.catalogue.mutants import reference_source as of_track
from checker.catalogue.proofs import without_drafts
from checker.setting.tracks import TrackError, all_tracks, get_track

KATAS_DIR_ENV = "KATA_KATAS_DIR"
"""Environment variable naming another catalogue folder (tests, an instructor's own katas)."""

FILE_PATTERN = re.compile(r"^(?P<number>\d{3})-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.toml$")
def _kata_fields():
    """The fields of a kata file, typed (``checker.base.toml.Field``): the loader mutants use too."""

    return (
        Field("mutant", TEXT, False, "the id of a mutant, a file mutants/<id>.toml; none for a practice kata"),
        Field("title", MESSAGE, True, "a table with 'en' and 'es' strings"),
        Field("story", MESSAGE, True, "a table with 'en' and 'es' strings: the symptom, never the cause"),
        Field("hints", MESSAGES, True, "[[hints]]: 2-3 tables with 'en' and 'es', vague to precise"),
        Field("read", MESSAGE, True, "a table with 'en' and 'es' strings: outside reading"),
        Field("try", TABLE, False, "[try] args: the `kata run` flags that show the symptom"),
        Field("symptom", TABLE, False, "[symptom]: the story's claim, as data (see CONTRIBUTING.md)"),
        Field("guide", STRINGS, False, "guide section ids (see `kata read`)"),
        Field("practice", TABLE, False, "[practice]: exercise and runs, for a kata that breaks no loop"),
    )


KNOWN_FIELDS = {"mutant", "title", "story", "hints", "read", "try", "symptom", "guide", "practice"}


class KataFileError(ValueError):
    """A kata file (or the catalogue folder) is malformed; the message names the file and field."""


class UnknownKata(KeyError):
    """No kata has that slug (or number)."""

    def __init__(self, name: str, known: list[str]):
        super().__init__(name)
        self.name = name
        self.known = known

    def __str__(self) -> str:
        return f"no kata named {self.name!r}"


@dataclass(frozen=True)
class Kata:
    slug: str
    number: int
    path: Path
    mutant: str
    """The mutant that breaks the loop; empty for a practice kata."""
    title: Message
    story: Message
    hints: tuple[Message, ...]
    read: Message
    try_args: tuple[str, ...]
    symptom: dict | None = None
    """The story's claim about what `kata run` shows, as data (checked by tests/test_kata_stories.py)."""
    guide: tuple[str, ...] = ()
    """The guide sections (docs/guide, `kata read ID`) this kata sends the learner to."""
    practice: Practice | None = None
    """Set for a practice kata: a prediction to make, checked against a measured run (no mutant)."""
    track: str = "moons"
    """The track (``tracks/<id>.toml``) whose katas folder holds this kata: its setting, reference and mutants."""

    @property
    def setting(self):
        """The ``checker.setting.tracks.Track`` this kata belongs to."""

        return get_track(self.track)

    @property
    def filename(self) -> str:
        """The starter's file name in the learner's folder: the loop, or a practice kata's answers."""
        return f"{self.slug}.toml" if self.practice is not None else f"{self.slug}.py"


@dataclass(frozen=True)
class Practice:
    """What a practice kata asks: an exercise of checker/learn/practice.py and the commands that measure it."""

    exercise: str
    runs: tuple[tuple[str, ...], ...]


def resolve_katas_dir(explicit: str | Path | None = None, track=None) -> Path:
    """The catalogue folder: ``explicit``, else ``$KATA_KATAS_DIR``, else ``track``'s katas folder, else the
    packaged ``katas/`` (the moons track's); the twin of ``checker.catalogue.mutants.resolve_dir``."""
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get(KATAS_DIR_ENV)
    if env:
        return Path(env)
    if track is not None:
        return track.katas_dir

    return KATAS_DIR


def parse_kata(path: Path, track: str = "moons") -> Kata:
    """Read and validate one kata file (of ``track``)."""
    match = FILE_PATTERN.match(path.name)
    if not match:
        raise KataFileError(
            f"{path}: a kata file is named NNN-slug.toml (three digits, a dash, lowercase words joined "
            f"by dashes), e.g. 010-zero-grad.toml"
        )
    from checker.base.toml import (
        read_toml,  # the loader kata and mutant files share (issue 12)
        refuse_unknown,
        take,
    )

    data = read_toml(path, KataFileError)
    where = str(path)
    refuse_unknown(data, KNOWN_FIELDS, where, KataFileError)
    if data.get("mutant") == "" or (data.get("mutant") is not None and not isinstance(data.get("mutant"), str)):
        raise KataFileError(f"{where}: 'mutant' must be the id of a mutant (a file mutants/<id>.toml)")
    fields = take(data, _kata_fields(), where, KataFileError,
                  missing_hint=lambda f: f" ({f.doc})" if f.doc else "")
    practice = _practice(fields["practice"], where)
    mutant = fields["mutant"] if fields["mutant"] is not None else ("" if practice else None)
    if practice is None and not mutant:
        raise KataFileError(f"{where}: 'mutant' must be the id of a mutant (a file mutants/<id>.toml)")
    if practice is not None and mutant:
        raise KataFileError(f"{where}: a practice kata has no 'mutant' (it breaks no loop)")
    guide = fields["guide"] or ()
    title, story, read, hints = fields["title"], fields["story"], fields["read"], fields["hints"]
    try_table = fields["try"] or {}
    args = try_table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise KataFileError(f"{where}: [try] args must be a list of strings (the `kata run` flags)")
    extra = sorted(set(try_table) - {"args"})
    if extra:
        raise KataFileError(f"{where}: [try] unknown key(s) {', '.join(extra)} (only 'args')")
    symptom = fields["symptom"]
    if symptom is not None and not isinstance(symptom.get("kind"), str):
        raise KataFileError(f"{where}: [symptom] must be a table with a 'kind' (see CONTRIBUTING.md)")
    return Kata(
        slug=match["slug"], number=int(match["number"]), path=path, mutant=mutant.strip(),
        title=title, story=story, hints=hints, read=read, try_args=tuple(args), symptom=symptom,
        guide=guide, practice=practice, track=track,
    )


EXERCISES = ("trace", "batch-sizes", "seed-sources")
"""The practice exercises a kata may name: each is measured and asked by ``checker.learn.practice.EXERCISES``
(one entry per name, in this order; tests/test_layers.py holds the two to the same names)."""


def _practice(value: object, where: str) -> Practice | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise KataFileError(f"{where}: [practice] must be a table with 'exercise' and 'runs'")
    extra = sorted(set(value) - {"exercise", "runs"})
    if extra:
        raise KataFileError(f"{where}: [practice] unknown key(s) {', '.join(extra)} (only 'exercise', 'runs')")
    exercise = value.get("exercise")
    if exercise not in EXERCISES:
        raise KataFileError(f"{where}: [practice] exercise must be one of {', '.join(EXERCISES)}")
    runs = value.get("runs")
    if (not isinstance(runs, list) or not runs
            or not all(isinstance(r, list) and r and all(isinstance(w, str) for w in r) for r in runs)):
        raise KataFileError(f"{where}: [practice] runs must list kata commands, each a list of strings")
    return Practice(exercise, tuple(tuple(r) for r in runs))


def _folders(katas_dir: str | Path | None, track: str | None) -> list[tuple[str, Path]]:
    """(track id, katas folder) pairs to read: an explicit folder or ``$KATA_KATAS_DIR`` (of ``track``, default
    moons), else every track's folder (or only ``track``'s), in the tracks' order."""

    if katas_dir is not None or os.environ.get(KATAS_DIR_ENV):
        return [(track or "moons", resolve_katas_dir(katas_dir))]
    try:
        tracks = [get_track(track)] if track else list(all_tracks().values())
    except TrackError as exc:
        raise KataFileError(str(exc)) from None
    return [(t.id, t.katas_dir) for t in tracks if t.katas_dir.is_dir() or t.id == "moons"]


def load_katas(katas_dir: str | Path | None = None, *, drafts: bool = False, track: str | None = None) -> list[Kata]:
    """Every kata of the catalogue, in order (by track, then number); a malformed file raises KataFileError.

    ``track`` keeps one track's katas. Drafts (katas not ready for learners, see ``checker.catalogue.proofs``) are
    left out unless ``drafts`` or ``KATA_DRAFTS=1`` asks for them."""
    katas: list[Kata] = []
    for track_id, folder in _folders(katas_dir, track):
        if not folder.is_dir():
            raise KataFileError(f"{folder}: the kata catalogue folder does not exist")
        katas += sorted((parse_kata(p, track_id) for p in sorted(folder.glob("*.toml"))), key=lambda k: k.number)
    seen: dict[str, Path] = {}
    numbers: dict[tuple[str, int], Path] = {}
    for kata in katas:
        if kata.slug in seen:
            raise KataFileError(f"{kata.path}: slug {kata.slug!r} is already used by {seen[kata.slug]}")
        if (kata.track, kata.number) in numbers:
            raise KataFileError(
                f"{kata.path}: number {kata.number:03d} is already used by {numbers[kata.track, kata.number].name}"
            )
        seen[kata.slug] = kata.path
        numbers[kata.track, kata.number] = kata.path
    ordered = katas
    # --- drafts (issue 12; the rules live in checker/catalogue/proofs.py) ---
    if drafts:
        return ordered

    return without_drafts(ordered)


def find_kata(katas: list[Kata], name: str) -> Kata:
    """The kata called ``name``: its slug, its place in the list (``3``, as `kata list` shows it),
    or its file number written with three digits (``030``)."""
    for kata in katas:
        if kata.slug == name or (len(name) == 3 and name.isdigit() and int(name) == kata.number):
            return kata
    if name.isdigit() and 1 <= int(name) <= len(katas):
        return katas[int(name) - 1]
    raise UnknownKata(name, [k.slug for k in katas])


STARTER_HEADER = """kata {number:03d} · {slug}

EN: One line of this training loop is wrong. See the symptom with `kata run {filename}`
(the kata's story says which flags), fix the loop, then grade it with `kata check`.
ES: Una línea de este bucle de entrenamiento está mal. Mira el síntoma con `kata run {filename}`
(la historia de la kata dice qué opciones usar), arregla el bucle y evalúalo con `kata check`.
"""


def mutant_text(kata: Kata) -> str:
    """The reference with the kata's mutant applied, comments and all (what `kata solution` compares)."""

    return mutant_source(kata.mutant, track=kata.setting)


def starter_source(kata: Kata) -> str:
    """The file the learner starts from: the kata's mutant, without the reference's comments.

    The reference's comments say why each line is where it is; next to a moved or deleted
    line they would give the fault away, so the starter carries a short kata header instead.
    The commented reference is what the learner reads after solving (`kata solution`).
    """
    return learner_copy(mutant_text(kata), starter_header(kata))


def starter_header(kata: Kata) -> str:
    """The docstring a starter carries in place of the reference's."""
    return STARTER_HEADER.format(number=kata.number, slug=kata.slug, filename=kata.filename)


def learner_copy(source: str, header: str) -> str:
    """``source`` with every comment removed and its module docstring replaced by ``header``."""
    import libcst as cst

    class _Strip(cst.CSTTransformer):
        def leave_EmptyLine(self, original, updated):
            return cst.RemoveFromParent() if updated.comment else updated

        def leave_TrailingWhitespace(self, original, updated):
            return updated.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))

    module = cst.parse_module(source).visit(_Strip())
    body = list(module.body)
    docstring = cst.SimpleStatementLine([cst.Expr(cst.SimpleString('"""' + header.rstrip("\n") + '\n"""'))])
    if body and _is_docstring(body[0]):
        body[0] = docstring
    else:
        body.insert(0, docstring)
    text = module.with_changes(body=body, header=[]).code
    # a comment-only line leaves a blank line behind; never more than the two PEP 8 allows
    return re.sub(r"\n{4,}", "\n\n\n", text)


def _is_docstring(stmt) -> bool:
    import libcst as cst

    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString))


def reference_source(track=None) -> str:
    """The reference loop of ``track`` (default: moons), as text."""

    return of_track(track)
