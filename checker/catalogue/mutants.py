"""The mutation engine: mutants as data (``mutants/<id>.toml``), applied to the reference loop.

Public API:
- ``load_mutants(mutants_dir=None) -> dict[id, Mutant]``: every mutant file, read into typed
  dataclasses by ``checker.base.toml``'s loader; a bad file raises ``MutantFileError`` naming the
  file and the field;
- ``apply(mutant, reference_source) -> str``: the reference with the mutant's steps applied, comments
  and layout kept; a target that matches no place or several raises ``MutantError`` naming both;
- ``mutant_source(id) -> str``: the same for the shipped reference, by id.

The file format is described in ``mutants/README.md``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.base.toml import (
    BOOL,
    POSITIVE_INT,
    STRINGS,
    TEXT,
    Field,
    loads_toml,
    read_toml,
    refuse_unknown,
    take,
)
from checker.setting.tracks import get_track

ENV_DIR = "KATA_MUTANTS_DIR"
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CHECK_PATTERN = re.compile(r"^[a-z]+\.[a-z_]+$")


class MutantFileError(ValueError):
    """A mutant file is malformed: the message names the file and the field."""


class MutantError(ValueError):
    """A mutant cannot be applied to the reference: the message names the mutant and the target."""


@dataclass(frozen=True)
class Step:
    """One edit of the reference (``mutants/README.md``, "A mutant file")."""

    operator: str
    """The operator's name, a key of ``operators.OPERATORS``."""
    function: str
    """The reference function the edit happens in."""
    target: str
    """The code the edit changes, matched on normalised code."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """The operator's own arguments."""
    every: bool = False
    """Edit every place the target matches (otherwise it must match one)."""
    call: str | None = None
    """Only places inside this call (its callee or whole text); an argument target may be a keyword name."""
    occurrence: int | None = None
    """Of several matching places, the n-th in file order (from 1)."""

    def describe(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.args.items())
        where = (f", call={self.call!r}" if self.call else "") + (
            f", occurrence={self.occurrence}" if self.occurrence else "")
        return f"{self.operator}({self.function}: {self.target!r}{where}{extra})"


@dataclass(frozen=True)
class Mutant:
    """One deliberate bug (``mutants/<id>.toml``)."""

    id: str
    title: str
    description: str
    steps: tuple[Step, ...]
    killed_by: tuple[str, ...]
    documented_in: str
    equivalent: str | None = None
    """Why the mutant cannot be told from the reference (it is then Ignored), or None."""
    path: Path | None = None
    teaches: str | None = None
    """One line: what a learner who fixed it knows (docs/katas.md's last column)."""

    @property
    def operator(self) -> str:
        """The operator name(s), joined with '+' for several steps (Stryker's mutatorName)."""
        names = []
        for step in self.steps:
            if step.operator not in names:
                names.append(step.operator)
        return "+".join(names)

    @property
    def functions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.function for s in self.steps))


def resolve_dir(override: str | os.PathLike | None = None, track=None) -> Path:
    """The mutants folder: the argument, else ``$KATA_MUTANTS_DIR``, else the track's (default: moons)."""
    if override is not None:
        return Path(override)
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])

    return (track or get_track()).mutants_dir


def reference_source(track=None) -> str:
    """The reference loop of ``track`` (a ``checker.setting.tracks.Track``; default: moons), as text."""

    return (track or get_track()).reference.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- reading files

MUTANT_SCHEMA = (
    Field("id", TEXT, doc="lowercase words joined by '-', the file's name"),
    Field("title", TEXT, doc="one line saying what is wrong"),
    Field("description", TEXT, doc="what the bug does"),
    Field("killed_by", STRINGS, doc="the check ids that must kill this mutant"),
    Field("documented_in", TEXT, doc="where the mistake is explained"),
    Field("equivalent", TEXT, required=False),
    Field("teaches", TEXT, required=False),
)
STEP_SCHEMA = (
    Field("operator", TEXT),
    Field("function", TEXT),
    Field("target", TEXT),
    Field("every", BOOL, required=False),
    Field("call", TEXT, required=False),
    Field("occurrence", POSITIVE_INT, required=False),
)
MUTANT_FIELDS = {f.name for f in MUTANT_SCHEMA} | {"steps"}
STEP_FIELDS = {f.name for f in STEP_SCHEMA}


def _step(data: dict, where: str, *, check_operator: bool = True) -> Step:
    values = take(data, STEP_SCHEMA, where, MutantFileError)
    operator = values["operator"]
    args = {k: v for k, v in data.items() if k not in STEP_FIELDS}
    if not check_operator:  # reading for `kata list` (no libcst): apply() and verify check the rest
        return Step(operator, values["function"], values["target"], args, bool(values["every"]),
                    values["call"], values["occurrence"])
    from checker.catalogue.operators import OPERATORS, operator_params

    if operator not in OPERATORS:
        raise MutantFileError(
            f"{where}: field `operator`: unknown operator {operator!r} (known: {', '.join(OPERATORS)})"
        )
    required, optional = operator_params(operator)
    for key in args:
        if key not in required and key not in optional:
            allowed = ", ".join(sorted(STEP_FIELDS | set(required) | set(optional)))
            raise MutantFileError(
                f"{where}: field `{key}` is not an argument of {operator} (allowed: {allowed})"
            )
        if not isinstance(args[key], str):
            raise MutantFileError(f"{where}: field `{key}` must be a string, got {args[key]!r}")
    for key in required:
        if key not in args:
            raise MutantFileError(f"{where}: missing field `{key}` (operator {operator} needs it)")
    return Step(operator, values["function"], values["target"], args, bool(values["every"]),
                values["call"], values["occurrence"])


def _check_data(data: dict, path: Path, *, check_operators: bool = True) -> Mutant:
    where = str(path)

    def hint(f: Field) -> str:
        return " (the check ids that must kill this mutant)" if f.name == "killed_by" else ""

    values = take(data, MUTANT_SCHEMA, where, MutantFileError, missing_hint=hint)
    mid = values["id"]
    if not ID_PATTERN.match(mid):
        raise MutantFileError(f"{where}: field `id` {mid!r} must be lowercase words joined by '-'")
    if mid != path.stem:
        raise MutantFileError(
            f"{where}: field `id` is {mid!r} but the file is named {path.name}; they must agree"
        )
    bad = [c for c in values["killed_by"] if not CHECK_PATTERN.match(c)]
    if bad:
        raise MutantFileError(
            f"{where}: field `killed_by`: {', '.join(map(repr, bad))} is not a check id "
            "like 'steps.fresh_grads'"
        )
    if "steps" in data:
        if not isinstance(data["steps"], list) or not data["steps"]:
            raise MutantFileError(f"{where}: field `steps` must be a non-empty array of tables ([[steps]])")
        for key in STEP_FIELDS - {"every"}:
            if key in data:
                raise MutantFileError(
                    f"{where}: field `{key}` given both at the top and in [[steps]]; "
                    "with steps, every step carries its own"
                )
        steps = tuple(_step(s, f"{where}: steps[{i}]", check_operator=check_operators)
                      for i, s in enumerate(data["steps"]))
        step_data: dict = {}
    else:
        step_data = {k: v for k, v in data.items() if k not in MUTANT_FIELDS}
        steps = (_step(step_data, where, check_operator=check_operators),)
    refuse_unknown(data, MUTANT_FIELDS | set(step_data), where, MutantFileError)
    return Mutant(
        id=mid, title=values["title"], description=values["description"], steps=steps,
        killed_by=values["killed_by"], documented_in=values["documented_in"],
        equivalent=values["equivalent"], path=path, teaches=values["teaches"],
    )


def parse_mutant(text: str, path: Path) -> Mutant:
    """One mutant file's text, validated; MutantFileError names the file and the field."""
    return _check_data(loads_toml(text, path, MutantFileError), path)


def load_mutants(mutants_dir: str | os.PathLike | None = None, *, check_operators: bool = True) -> dict[str, Mutant]:
    """Every ``*.toml`` mutant in the folder (see ``resolve_dir``), by id, sorted by id.

    Each file is parsed once per process while it is unchanged (``checker.base.toml.read_toml``).
    ``check_operators=False`` skips checking operator names and arguments, so libcst is not imported
    (``kata list`` telling drafts apart; a mutant that cannot apply is never proven anyway).
    """
    root = resolve_dir(mutants_dir)
    if not root.is_dir():
        raise MutantFileError(f"{root}: no such mutants folder")
    found: dict[str, Mutant] = {}
    for path in sorted(root.glob("*.toml")):
        mutant = _check_data(read_toml(path, MutantFileError), path, check_operators=check_operators)
        found[mutant.id] = mutant
    return found


# --------------------------------------------------------------------------- applying


def apply(mutant: Mutant, reference_source: str) -> str:
    """The reference with every step of ``mutant`` applied; MutantError names the mutant and target."""
    import libcst as cst

    from checker.catalogue.operators import OperatorError, TargetError, apply_step

    try:
        module = cst.parse_module(reference_source)
    except cst.ParserSyntaxError as exc:
        raise MutantError(f"mutant {mutant.id}: the reference does not parse: {exc.message}") from None
    for i, step in enumerate(mutant.steps):
        where = f"mutant {mutant.id}" + (f", step {i + 1}" if len(mutant.steps) > 1 else "")
        try:
            module = apply_step(
                module, step.operator, step.function, step.target, every=step.every, call=step.call,
                occurrence=step.occurrence, **step.args
            )
        except (TargetError, OperatorError) as exc:
            raise MutantError(
                f"{where}: {step.operator} on target {step.target!r} in {step.function}(): {exc}"
            ) from None
    code = module.code
    if code == reference_source:
        raise MutantError(f"mutant {mutant.id}: applying it leaves the reference unchanged")
    try:
        compile(code, f"<mutant {mutant.id}>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise MutantError(
            f"mutant {mutant.id}: the mutated source does not compile: {exc.msg} (line {exc.lineno})"
        ) from None
    return code


def mutant_source(mutant_id: str, *, mutants_dir: str | os.PathLike | None = None, track=None) -> str:
    """The track's reference with mutant ``mutant_id`` applied (comments and layout kept)."""
    mutants = load_mutants(mutants_dir=resolve_dir(mutants_dir, track))
    if mutant_id not in mutants:
        raise KeyError(f"no mutant {mutant_id!r} (known: {', '.join(mutants)})")
    return apply(mutants[mutant_id], reference_source(track))


__all__ = [
    "ENV_DIR",
    "Mutant",
    "MutantError",
    "MutantFileError",
    "Step",
    "apply",
    "load_mutants",
    "mutant_source",
    "parse_mutant",
    "reference_source",
    "resolve_dir",
]
