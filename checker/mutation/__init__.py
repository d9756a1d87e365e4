"""The mutation engine: mutants as data (``mutants/<id>.toml``), applied to the reference loop.

Public API:
- ``load_mutants(mutants_dir=None) -> dict[id, Mutant]``: every mutant file, validated; a bad file
  raises ``MutantFileError`` naming the file and the field;
- ``apply(mutant, reference_source) -> str``: the reference with the mutant's steps applied, comments
  and layout kept; a target that matches no place or several raises ``MutantError`` naming both;
- ``mutant_source(id) -> str``: the same for the shipped reference, by id.

The file format is described in ``mutants/README.md``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from checker.mutation.operators import OPERATORS, OperatorError, TargetError, apply_step, operator_params

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENV_DIR = "KATA_MUTANTS_DIR"
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CHECK_PATTERN = re.compile(r"^[a-z]+\.[a-z_]+$")
MUTANT_FIELDS = {"id", "title", "description", "killed_by", "documented_in", "equivalent", "steps"}
STEP_FIELDS = {"operator", "function", "target", "every"}


class MutantFileError(ValueError):
    """A mutant file is malformed: the message names the file and the field."""


class MutantError(ValueError):
    """A mutant cannot be applied to the reference: the message names the mutant and the target."""


@dataclass(frozen=True)
class Step:
    operator: str
    function: str
    target: str
    args: Mapping[str, Any] = field(default_factory=dict)
    every: bool = False

    def describe(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.args.items())
        return f"{self.operator}({self.function}: {self.target!r}{extra})"


@dataclass(frozen=True)
class Mutant:
    id: str
    title: str
    description: str
    steps: tuple[Step, ...]
    killed_by: tuple[str, ...]
    documented_in: str
    equivalent: str | None = None
    """Why the mutant cannot be told from the reference (it is then Ignored), or None."""
    path: Path | None = None

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


def resolve_dir(override: str | os.PathLike | None = None) -> Path:
    """The mutants folder: the argument, else ``$KATA_MUTANTS_DIR``, else the shipped one."""
    if override is not None:
        return Path(override)
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    from checker.paths import MUTANTS_DIR

    return MUTANTS_DIR


def reference_source() -> str:
    from checker.paths import REFERENCE

    return REFERENCE.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- reading files


def _text(data: dict, key: str, where: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise MutantFileError(f"{where}: missing field `{key}`")
        return None
    if not isinstance(value, str) or not value.strip():
        raise MutantFileError(f"{where}: field `{key}` must be a non-empty string, got {value!r}")
    return value.strip()


def _step(data: dict, where: str) -> Step:
    operator = _text(data, "operator", where)
    if operator not in OPERATORS:
        raise MutantFileError(
            f"{where}: field `operator`: unknown operator {operator!r} (known: {', '.join(OPERATORS)})"
        )
    function = _text(data, "function", where)
    target = _text(data, "target", where)
    every = data.get("every", False)
    if not isinstance(every, bool):
        raise MutantFileError(f"{where}: field `every` must be true or false, got {every!r}")
    required, optional = operator_params(operator)
    args = {k: v for k, v in data.items() if k not in STEP_FIELDS}
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
    return Step(operator, function, target, args, every)  # type: ignore[arg-type]


def parse_mutant(text: str, path: Path) -> Mutant:
    """One mutant file's text, validated; MutantFileError names the file and the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MutantFileError(f"{path}: not valid TOML: {exc}") from None
    where = str(path)
    mid = _text(data, "id", where)
    if not ID_PATTERN.match(mid):
        raise MutantFileError(f"{where}: field `id` {mid!r} must be lowercase words joined by '-'")
    if mid != path.stem:
        raise MutantFileError(
            f"{where}: field `id` is {mid!r} but the file is named {path.name}; they must agree"
        )
    killed_by = data.get("killed_by")
    if killed_by is None:
        raise MutantFileError(
            f"{where}: missing field `killed_by` (the check ids that must kill this mutant)"
        )
    if not isinstance(killed_by, list) or not killed_by or not all(isinstance(c, str) for c in killed_by):
        raise MutantFileError(
            f"{where}: field `killed_by` must be a non-empty list of check ids, got {killed_by!r}"
        )
    bad = [c for c in killed_by if not CHECK_PATTERN.match(c)]
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
        steps = tuple(_step(s, f"{where}: steps[{i}]") for i, s in enumerate(data["steps"]))
        step_data: dict = {}
    else:
        step_data = {k: v for k, v in data.items() if k not in MUTANT_FIELDS}
        steps = (_step(step_data, where),)
    unknown = set(data) - MUTANT_FIELDS - set(step_data)
    if unknown:
        raise MutantFileError(f"{where}: unknown field(s) {', '.join(f'`{u}`' for u in sorted(unknown))}")
    return Mutant(
        id=mid,
        title=_text(data, "title", where),
        description=_text(data, "description", where),
        steps=steps,
        killed_by=tuple(killed_by),
        documented_in=_text(data, "documented_in", where),
        equivalent=_text(data, "equivalent", where, required=False),
        path=path,
    )


def load_mutants(mutants_dir: str | os.PathLike | None = None) -> dict[str, Mutant]:
    """Every ``*.toml`` mutant in the folder (see ``resolve_dir``), by id, sorted by id."""
    root = resolve_dir(mutants_dir)
    if not root.is_dir():
        raise MutantFileError(f"{root}: no such mutants folder")
    found: dict[str, Mutant] = {}
    for path in sorted(root.glob("*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MutantFileError(f"{path}: cannot read it ({exc})") from None
        mutant = parse_mutant(text, path)
        found[mutant.id] = mutant
    return found


# --------------------------------------------------------------------------- applying


def apply(mutant: Mutant, reference_source: str) -> str:
    """The reference with every step of ``mutant`` applied; MutantError names the mutant and target."""
    try:
        module = cst.parse_module(reference_source)
    except cst.ParserSyntaxError as exc:
        raise MutantError(f"mutant {mutant.id}: the reference does not parse: {exc.message}") from None
    for i, step in enumerate(mutant.steps):
        where = f"mutant {mutant.id}" + (f", step {i + 1}" if len(mutant.steps) > 1 else "")
        try:
            module = apply_step(
                module, step.operator, step.function, step.target, every=step.every, **step.args
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


def mutant_source(mutant_id: str, *, mutants_dir: str | os.PathLike | None = None) -> str:
    """The shipped reference with mutant ``mutant_id`` applied (comments and layout kept)."""
    mutants = load_mutants(mutants_dir=mutants_dir)
    if mutant_id not in mutants:
        raise KeyError(f"no mutant {mutant_id!r} (known: {', '.join(mutants)})")
    return apply(mutants[mutant_id], reference_source())


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
