"""Coverage analysis for `kata mutants verify`: which checks can a mutant change the outcome of?

A mutant is the reference with one edit. A check runs the protocol functions it declares (``Check.calls``), and
those run whatever they name in turn. A check that reaches none of the code the edit changed behaves on the
mutant exactly as on the reference, which passes it: running it again proves nothing. Mutation tools call this
coverage analysis (Stryker's ``coverageAnalysis: "perTest"``: run only the tests that cover a mutant).

Here the analysis is static and conservative, over the reference's own source (kata's, or a course's: never a
learner's file):

- the **units** are the module's top-level functions and classes (a class is one unit, its methods included);
  everything else at module level (imports, constants, statements) is the **module part**;
- a unit **reaches** every unit whose name appears anywhere in it, transitively (a name passed as an argument
  counts: ``worker_init_fn=seed_worker`` reaches ``seed_worker``, which then runs in a loader's worker process);
- a mutant **changes** the units whose syntax trees differ from the reference's. A change to the module part, to
  the set of units, or to what a definition evaluates when the module is imported (decorators, default values,
  annotations, a class's own statements) could touch any check: then every check runs.

Verify runs on each mutant only the checks whose declared functions reach a changed unit, and reruns a mutant on
the whole battery whenever that selection leaves it surviving or misses a check it declares, so a mutant's
status (killed, survived, ...) is what the whole battery would say. What the selection cannot see is one check
disturbing the next in the same process (global state the mutant leaves behind): a check that would fail only
that way is reported as not run, never as passing. ``kata mutants verify --all-checks`` runs every check on
every mutant.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

EVERYTHING = None
"""What ``changed_units`` returns when a change may touch any check."""


@dataclass(frozen=True)
class Units:
    """A module split into its top-level definitions and the rest."""

    definitions: dict[str, str]
    """Unit name -> the dump of its whole syntax tree."""
    at_import: dict[str, str]
    """Unit name -> the dump of what its definition evaluates when the module is imported."""
    module: str
    """The dump of every other top-level statement, in order."""
    names: dict[str, frozenset[str]]
    """Unit name -> every name that appears in it."""


def _at_import(node: ast.AST) -> str:
    """What defining ``node`` evaluates at import: decorators, defaults, annotations, a class's bases and the
    statements of its body that are not methods."""
    if isinstance(node, ast.ClassDef):
        parts: list[ast.AST] = [*node.decorator_list, *node.bases, *node.keywords]
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts.append(ast.Tuple(elts=[_evaluated(stmt)], ctx=ast.Load()))
            else:
                parts.append(stmt)
        body = [p if isinstance(p, ast.stmt) else ast.Expr(p) for p in parts]
        return ast.dump(ast.Module(body=body, type_ignores=[]))
    return ast.dump(_evaluated(node))


def _evaluated(fn: ast.AST) -> ast.expr:
    args = fn.args  # type: ignore[attr-defined]
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    annotations = [a.annotation for a in every if a is not None and a.annotation is not None]
    defaults = [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
    returns = [fn.returns] if fn.returns is not None else []  # type: ignore[attr-defined]
    return ast.Tuple(elts=[*fn.decorator_list, *defaults, *annotations, *returns],  # type: ignore[attr-defined]
                     ctx=ast.Load())


def units_of(source: str) -> Units | None:
    """The units of ``source``; None when it does not parse (such a mutant runs on every check)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    definitions: dict[str, str] = {}
    at_import: dict[str, str] = {}
    names: dict[str, frozenset[str]] = {}
    rest: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name not in definitions:
            definitions[node.name] = ast.dump(node)
            at_import[node.name] = _at_import(node)
            names[node.name] = frozenset(
                n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            ) | frozenset(n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute))
        else:
            rest.append(node)
    return Units(definitions, at_import, ast.dump(ast.Module(body=rest, type_ignores=[])), names)


def changed_units(reference: Units, mutant: Units | None) -> frozenset[str] | None:
    """The units ``mutant`` changed, or ``EVERYTHING`` (None) when the change may touch any check."""
    if mutant is None or mutant.module != reference.module or set(mutant.definitions) != set(reference.definitions):
        return EVERYTHING
    changed = frozenset(n for n, dump in reference.definitions.items() if mutant.definitions[n] != dump)
    if any(mutant.at_import[n] != reference.at_import[n] for n in changed):
        return EVERYTHING
    return changed


def reached(units: Units, start: Iterable[str]) -> frozenset[str]:
    """Every unit that ``start``'s units name, transitively (``start``'s own included)."""
    seen: set[str] = set()
    todo = [s for s in start if s in units.definitions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [n for n in units.names[name] if n in units.definitions and n not in seen]
    return frozenset(seen)


def checks_reaching(check_ids: Sequence[str], calls: Callable[[str], Iterable[str]], reference: Units,
                    changed: frozenset[str] | None) -> list[str] | None:
    """The checks of ``check_ids`` (in their order) whose declared functions (``calls(id)``) reach a changed
    unit; None (every check) when the change may touch any of them or none is reached."""
    if changed is EVERYTHING:
        return None
    chosen = [c for c in check_ids if reached(reference, calls(c)) & changed]
    return chosen or None
