"""Scaffolding a new mutant and its kata (`kata new`): two data files, every field explained in comments.

The mutant file is validated with the mutation engine's own parser and applied to the reference
before anything is written, so a scaffold always loads; the texts it cannot know are marked TODO
for the author. The kata file is validated with the catalogue's own parser the same way.
"""

from __future__ import annotations

import difflib
import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.base.files import atomic_write
from checker.catalogue.katas import KataFileError, load_katas, parse_kata
from checker.catalogue.mutants import load_mutants, resolve_dir
from checker.catalogue.proofs import drafts_of
from checker.checks import REGISTRY
from checker.setting.tracks import all_tracks, get_track

TODO = "TODO"
STEP = 10
"""Katas are numbered 010, 020, ...; a new one takes the next multiple of ten after the last."""


class AuthoringError(ValueError):
    """The scaffold cannot be written; the message says why and what to change."""


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _operators_comment() -> str:
    from checker.catalogue.operators import OPERATORS, describe, operator_params

    width = max(map(len, OPERATORS))
    lines = []
    for name in OPERATORS:
        required, optional = operator_params(name)
        params = ", ".join(required + [f"{p} (optional)" for p in optional])
        extra = f"   [arguments: {params}]" if params else ""
        lines.append(f"#   {name:<{width}}  {describe(name)}{extra}")
    return "\n".join(lines)


MUTANT_TEMPLATE = """\
# Mutant {id}: one deliberate bug in the reference loop ({reference}).
# Every field is explained in the comment above it; the format is described in mutants/README.md.
# When the TODO texts are filled in, prove the checks catch it:  kata mutants verify --only {id}

# The mutant's id: lowercase words joined by '-', the same as this file's name.
id = {id_s}

# A few words naming the fault, for instructors (`kata mutants verify` lists mutants by it).
title = {title_s}

# What the bug does to training and why, in a sentence or two.
description = \"\"\"
{description}\"\"\"

# The check(s) that must fail on this mutant (ids as `kata check --json` lists them). `kata mutants
# verify` runs every check on the mutant and says which of these did not fail, and which others did.
killed_by = [{killed_by}]

# Where the mistake is documented: the lesson's section, the pitfalls article, the library's docs.
documented_in = {documented_in_s}

# One line for the catalogue (docs/katas.md): what a learner who fixed it now knows.
teaches = {teaches_s}

# Optional: when the mutant cannot be told apart from the reference by any behaviour, say why here;
# verify then lists it as Ignored instead of running it.
# equivalent = "..."

# ---- The edit: how the reference becomes the broken loop ---------------------------------------
# operator: one of
{operators}
# function: the function of {reference} that the edit happens in.
# target: the code to change, written as in that function (spacing, quotes and comments do not
#   matter; a block such as a `for` or `with` is named by its first line without the colon). It must
#   match exactly one place; add `every = true` to change every place it matches.
# call (optional): only places inside this call, named by its callee ("torch.optim.Adam") or its whole
#   text; an argument's target may then be just the keyword's name ("lr").
# occurrence (optional): of several places the target matches, the n-th in file order (1 = the first).
# Any other key is an argument of the operator (see the list above).
# An edit in several places uses [[steps]] tables instead, each with these same keys.
operator = {operator_s}
function = {function_s}
target = {target_s}
{args}"""

KATA_TEMPLATE = """\
# Kata {id}: what the learner sees. The number in this file's name orders the katas (gaps allowed);
# the name after it is the kata's slug, which names the learner's file ({id}.py): the symptom, never the fault.
# Until every TODO is replaced, [symptom] is filled in and the mutant is proven killed, the kata is a
# draft: `kata list` and `kata next` hide it. `kata new --check {id}` says what is missing.
# Every text comes in English (en) and Spanish (es), each written in your own words.
# Replace every TODO, then check:  kata new --check {id}

# The mutant (mutants/<id>.toml) whose broken loop is the learner's starter file.
mutant = {mutant_s}

# A few words: the kata's name in `kata list` and at the top of `kata next`.
[title]
en = "TODO: a few words naming the symptom"
es = "TODO: unas palabras que nombren el síntoma"

# The symptom, as the learner can see it with `kata run` and the [try] flags below. Describe what
# the numbers or the curve do, never the cause: finding the cause is the exercise.
[story]
en = "TODO: what the learner sees when training with this loop"
es = "TODO: lo que ve quien entrena con este bucle"

# Two or three hints, from vague to precise; `kata hint` reveals one at a time.
[[hints]]
en = "TODO: a vague hint (which part of the loop to look at)"
es = "TODO: una pista vaga (qué parte del bucle mirar)"

# The next hint, more precise than the one before (add a third [[hints]] the same way if needed).
[[hints]]
en = "TODO: a precise hint (which operation, and what it should do)"
es = "TODO: una pista precisa (qué operación, y qué debería hacer)"

# What to read once it is solved: the lesson's section, the article's table, the docs.
[read]
en = "TODO: where to read more about this mistake"
es = "TODO: dónde leer más sobre este error"

# The `kata run` flags that show the symptom best (the learner is told to run them).
[try]
args = [{try_args}]

# The story's claim, as data: what `kata run` shows with the flags above, and every number the story
# quotes ([run, epoch, column, text as printed]). tests/test_kata_stories.py checks it against the
# mutant and the reference; the kinds are listed in CONTRIBUTING.md. Without it the kata stays a draft.
# Uncomment and fill in:
# [symptom]
# kind = "falls_then_rises"
# epoch = 5
# quotes = [
#     ["mutant", 5, "train_loss", "0.0000"],
# ]
"""


@dataclass(frozen=True)
class Scaffold:
    mutant_path: Path
    kata_path: Path
    mutant_text: str
    kata_text: str
    diff: str
    unknown_checks: tuple[str, ...]


def next_number(katas_dir: Path) -> int:
    numbers = [int(p.name[:3]) for p in katas_dir.glob("*.toml") if re.match(r"^\d{3}-", p.name)]
    return (max(numbers) // STEP + 1) * STEP if numbers else STEP


def _check_names(mutant_id: str, slug: str, mutants_dir: Path, katas_dir: Path, id_pattern) -> None:
    """The id and slug are well formed, both folders exist, and neither file is taken."""
    if not id_pattern.match(mutant_id):
        raise AuthoringError(f"{mutant_id!r} is not a valid id: use lowercase words joined by '-', "
                             "e.g. zero-grad-twice")
    for folder, what in ((mutants_dir, "mutants"), (katas_dir, "katas")):
        if not folder.is_dir():
            raise AuthoringError(f"{folder}: no {what} folder here; run `kata new` in a kata checkout "
                                 f"(or give --{what}-dir)")
    if not id_pattern.match(slug):
        raise AuthoringError(f"--slug {slug!r} is not a valid slug: use lowercase words joined by '-', "
                             "naming the symptom, e.g. schedule-in-a-hurry")
    mutant_path = mutants_dir / f"{mutant_id}.toml"
    if mutant_path.exists():
        raise AuthoringError(f"{mutant_path} already exists; choose another id or edit that file")
    clash = sorted(katas_dir.glob(f"[0-9][0-9][0-9]-{slug}.toml"))
    if clash:
        raise AuthoringError(f"{clash[0]} already exists; choose another id or edit that file")


def _kata_path(katas_dir: Path, slug: str, number: int | None) -> Path:
    """The new kata's file: the number given (or the next free step), which must be three digits and unused."""
    number = next_number(katas_dir) if number is None else number
    if not 0 <= number <= 999:
        raise AuthoringError(f"--number {number}: a kata number has three digits (0-999)")
    taken = sorted(katas_dir.glob(f"{number:03d}-*.toml"))
    if taken:
        raise AuthoringError(f"number {number:03d} is already used by {taken[0].name}; give another --number")
    return katas_dir / f"{number:03d}-{slug}.toml"


def _kata_text(slug: str, mutant_id: str, try_args: Sequence[str], kata_path: Path) -> str:
    """The kata file's text, checked by parsing it as `kata` will (errors name ``kata_path``)."""
    kata_text = KATA_TEMPLATE.format(
        id=slug, mutant=mutant_id, mutant_s=_toml_string(mutant_id),
        try_args=", ".join(_toml_string(a) for a in try_args),
    )
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / kata_path.name
        probe.write_text(kata_text, encoding="utf-8")
        try:
            parse_kata(probe)
        except KataFileError as exc:  # a bug in this template, or a bad --try flag
            raise AuthoringError(str(exc).replace(str(probe), str(kata_path))) from None
    return kata_text


def scaffold(
    mutant_id: str,
    *,
    mutants_dir: Path,
    katas_dir: Path,
    target: str,
    killed_by: Sequence[str],
    operator: str = "delete_statement",
    function: str = "train_epoch",
    args: Mapping[str, str] | None = None,
    number: int | None = None,
    try_args: Sequence[str] = ("--optimizer", "sgd", "--lr", "0.1", "--epochs", "10"),
    slug: str | None = None,
    call: str | None = None,
    occurrence: int | None = None,
    track=None,
) -> Scaffold:
    """Build and validate both files (nothing is written); AuthoringError says what is wrong.

    ``slug`` names the kata and the learner's file after the symptom (default: the mutant's id); ``track``
    (default: moons) gives the reference the mutant is applied to."""
    from checker.catalogue.mutants import (
        ID_PATTERN,
        MutantError,
        MutantFileError,
        apply,
        parse_mutant,
        reference_source,
    )
    from checker.catalogue.operators import OPERATORS

    slug = slug or mutant_id
    _check_names(mutant_id, slug, mutants_dir, katas_dir, ID_PATTERN)
    if operator not in OPERATORS:
        raise AuthoringError(f"unknown operator {operator!r} (known: {', '.join(OPERATORS)})")
    if not killed_by:
        raise AuthoringError("give at least one check that must catch the mutant: --killed-by CHECK_ID")
    mutant_path = mutants_dir / f"{mutant_id}.toml"
    kata_path = _kata_path(katas_dir, slug, number)

    shown = track.reference_path if track is not None else "solutions/loop.py"  # the track's words, not moons'
    aim = {"call": call} if call else {}
    arg_lines = "".join(f"{key} = {_toml_string(value)}\n" for key, value in {**aim, **(args or {})}.items())
    if occurrence is not None:
        arg_lines += f"occurrence = {int(occurrence)}\n"
    mutant_text = MUTANT_TEMPLATE.format(
        id=mutant_id, id_s=_toml_string(mutant_id),
        title_s=_toml_string(f"{TODO}: what is broken, in a few words"),
        description=f"{TODO}: what this bug does to training, and why.",
        killed_by=", ".join(_toml_string(c) for c in killed_by),
        documented_in_s=_toml_string(f"{TODO}: the lesson or article section that explains this mistake"),
        teaches_s=_toml_string(f"{TODO}: what a learner who fixed it now knows, in one line"),
        operators=_operators_comment(),
        operator_s=_toml_string(operator), function_s=_toml_string(function), target_s=_toml_string(target),
        args=arg_lines, reference=shown,
    )
    try:
        mutant = parse_mutant(mutant_text, mutant_path)
        reference = reference_source(track)
        mutated = apply(mutant, reference)
    except MutantFileError as exc:
        raise AuthoringError(str(exc)) from None
    except MutantError as exc:
        hint = (f"(--target is code of the function that --function names, as written in {shown}; "
                "operator arguments go in --arg NAME=VALUE)")
        raise AuthoringError(f"{exc}\n{hint}") from None
    diff = "".join(difflib.unified_diff(reference.splitlines(True), mutated.splitlines(True),
                                        shown, f"mutant {mutant_id}", n=2))

    kata_text = _kata_text(slug, mutant_id, try_args, kata_path)
    unknown = tuple(c for c in killed_by if c not in REGISTRY)
    return Scaffold(mutant_path, kata_path, mutant_text, kata_text, diff, unknown)


def write(sc: Scaffold) -> None:
    """Write both files, never over an existing one (the mutant's is removed if the kata's fails)."""
    with sc.mutant_path.open("x", encoding="utf-8") as fh:
        fh.write(sc.mutant_text)
    try:
        with sc.kata_path.open("x", encoding="utf-8") as fh:
            fh.write(sc.kata_text)
    except OSError:
        sc.mutant_path.unlink()
        raise


# --------------------------------------------------------------------------- docs/katas.md

def _flags(args: Sequence[str]) -> str:
    return " ".join(args)


def _practice_row(k) -> dict:
    """A practice kata's row (nothing broken: the learner predicts a run's figures)."""
    runs = [f"`kata {_flags(run)}`" for run in getattr(k.practice, "runs", ())]
    guide = ", ".join(f"`kata read {g}`" for g in getattr(k, "guide", ()))
    return {"number": k.number, "slug": k.slug, "title": k.title.en, "mutant": "",
            "seen": ", and ".join(runs) or "`kata check`",
            "teaches": "Practice, nothing broken: predict what the run measures, then compare"
                       + (f" ({guide})." if guide else ".")}


def _kata_row(k, mutants: Mapping) -> dict:
    """A bug kata's row: how its symptom is seen and what its mutant teaches."""
    symptom = k.symptom or {}
    seen = f"`kata run {_flags(k.try_args)}`".replace("kata run `", "kata run`")
    if symptom.get("other"):
        seen += f", and again with `{_flags(symptom['other'])}`"
    if symptom.get("kind") == "check_fails":
        seen += ", then `kata check`"
    mutant = mutants.get(getattr(k, "mutant", None) or "")
    return {"number": k.number, "slug": k.slug, "title": k.title.en, "mutant": getattr(k, "mutant", ""),
            "seen": seen, "teaches": (mutant.teaches or mutant.title) if mutant else ""}


def catalogue_markdown(
katas_dir: Path | None = None, mutants_dir: Path | None = None, track=None) -> str:
    """docs/katas.md (moons) or docs/katas-<track>.md, from the data: every ready kata of the track (drafts left
    out) and its mutants without one."""
    import jinja2


    track = track or get_track()
    every = load_katas(katas_dir, drafts=True, track=track.id)
    drafts = drafts_of(every, mutants_dir)
    katas = [k for k in every if k.slug not in drafts]
    mutants = load_mutants(resolve_dir(mutants_dir, track))
    rows = [_practice_row(k) if getattr(k, "practice", None) is not None else _kata_row(k, mutants) for k in katas]
    used = {getattr(k, "mutant", None) for k in every}
    spare = [m for m in mutants.values() if m.id not in used]
    env = jinja2.Environment(loader=jinja2.PackageLoader("checker", "templates"), keep_trailing_newline=True,
                             autoescape=False, undefined=jinja2.StrictUndefined)
    env.filters["cell"] = lambda text: str(text).replace("|", "\\|").replace("\n", " ")
    check_only = sum((k.symptom or {}).get("kind") == "check_fails" for k in katas)
    practice = sum(getattr(k, "practice", None) is not None for k in katas)
    others = [t for t in all_tracks().values() if t.id != track.id and t.katas_dir.is_dir()]
    return env.get_template("katas.md.j2").render(
        katas=katas, rows=rows, spare=spare, check_only=_count_word(check_only), practice=_count_word(practice).lower(),
        track=track, others=others)


def _count_word(n: int) -> str:
    words = ["No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten"]
    return words[n] if n < len(words) else str(n)


def refresh_catalogue_doc(katas_dir: Path, mutants_dir: Path | None = None, track=None) -> Path | None:
    """Rewrite the track's catalogue page (moons: ``docs/katas.md`` beside ``katas_dir``; another track:
    ``docs/katas-<track>.md`` in the project) when it is out of date; the path if it changed."""

    if track is None or track.id == "moons":
        doc = Path(katas_dir).resolve().parent / "docs" / "katas.md"
    else:
        doc = track.root / "docs" / f"katas-{track.id}.md"
    if not doc.parent.is_dir():
        return None
    text = catalogue_markdown(katas_dir, mutants_dir, track)
    if doc.exists() and doc.read_text(encoding="utf-8") == text:
        return None
    atomic_write(doc, text)
    return doc
