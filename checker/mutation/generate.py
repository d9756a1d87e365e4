"""`kata mutants generate`: every operator at every sensible place of the reference: the battery's gaps.

The hand-written mutants are the faults the lesson teaches; these are all the small edits the
operators can make. A generated mutant that survives is either a gap in the battery or a change
that makes no observable difference (an *equivalent* mutant). Equivalents that can be recognised
from the code alone are flagged with the reason; the rest are for a person to judge.

Bounded on purpose: each statement of a protocol function deleted; each statement swapped with
its neighbour; each statement moved out of its loop, and each neighbour of a loop moved into it;
each `with` unwrapped; each assignment of a `.to(...)` result dropped; each call made as a
statement left uncalled; each `.item()` / `.to()` dropped; each keyword argument removed; each
boolean argument flipped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from checker.mutation import Mutant, Step, reference_source
from checker.mutation.operators import (
    ARGUMENT,
    EXPRESSION,
    OPERATORS,
    STATEMENT,
    OperatorError,
    Site,
    TargetError,
    apply_step,
)
from checker.protocol import FUNCTIONS

DEFAULT_FUNCTIONS = tuple(f.name for f in FUNCTIONS)
METHODS_TO_DROP = ("item", "to")
_SEEDERS = {
    "random.seed": "random",
    "np.random.seed": "np.random",
    "numpy.random.seed": "np.random",
    "torch.manual_seed": "torch",
}


class GenerateProblem(ValueError):
    """An unknown function or operator name: the CLI turns it into exit 2."""


@dataclass(frozen=True)
class Generated:
    mutant: Mutant
    source: str
    line: int
    summary: str
    equivalent: str | None = None
    """Why the change cannot be observed, when that is recognisable from the code; else None."""


# --------------------------------------------------------------------------- candidate edits


def _is_docstring(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine)
        and isinstance(node.body[0], cst.Expr)
        and isinstance(node.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _simple(node: cst.CSTNode, kind: type) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], kind)
    )


def _candidates(site: Site) -> Iterator[tuple[str, cst.CSTNode, str, dict]]:
    """(operator, node, target text, extra args) for every edit worth trying in this function."""
    statements = [(n, t) for n, t in site.places(STATEMENT) if not _is_docstring(n)]
    for node, text in statements:
        if not _simple(node, cst.Return):
            yield "delete_statement", node, text, {}
        body, i = site.block_of(node)
        if i + 1 < len(body):
            yield "swap_statements", node, text, {}
        parent = site.parent(site.parent(node)) if site.parent(node) is not None else None
        if isinstance(parent, cst.For | cst.While) and not _simple(node, cst.Return):
            header = site.canonical_of(parent, STATEMENT)
            yield "move_statement", node, text, {"anchor": header, "position": "after"}
            yield "move_statement", node, text, {"anchor": header, "position": "before"}
        if isinstance(node, cst.For | cst.While):
            if i + 1 < len(body) and not _simple(body[i + 1], cst.Return):
                after = site.canonical_of(body[i + 1], STATEMENT)
                yield "move_statement", body[i + 1], after, {"anchor": text, "position": "last_in"}
            if i > 0:
                before = site.canonical_of(body[i - 1], STATEMENT)
                yield "move_statement", body[i - 1], before, {"anchor": text, "position": "first_in"}
        if isinstance(node, cst.With):
            yield "unwrap_with", node, text, {}
        if _simple(node, cst.Assign) and ".to(" in site.code(node.body[0].value):
            yield "drop_assignment", node, text, {}
        if _simple(node, cst.Expr) and isinstance(node.body[0].value, cst.Call):
            call = node.body[0].value
            yield "remove_call", call, site.canonical_of(call, EXPRESSION), {}
    for node, text in site.places(EXPRESSION):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in METHODS_TO_DROP
        ):
            yield "drop_method_call", node, text, {}
    for node, text in site.places(ARGUMENT):
        if node.keyword is None:
            continue
        yield "remove_argument", node, text, {}
        if isinstance(node.value, cst.Name) and node.value.value in ("True", "False"):
            flipped = "False" if node.value.value == "True" else "True"
            yield "replace_expression", node, text, {"replacement": f"{node.keyword.value}={flipped}"}


# --------------------------------------------------------------------------- recognising equivalents


def _names(stmt: ast.AST) -> tuple[set[str], set[str], list[str]]:
    """(names written, names read, calls made) by one statement."""
    written, read, calls = set(), set(), []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (written if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, ast.Call):
            calls.append(ast.unparse(node.func))
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        read.add(stmt.target.id)
    return written, read, calls


_PURE_CALLS = ("len", "float", "int")
_PURE_METHODS = (".item", ".to", ".argmax", ".float", ".mean", ".sum", ".detach", ".cpu")
"""Calls that compute a value and change nothing else (on tensors, as the reference uses them)."""
_GRAD_CALLS = (".backward", ".step", ".zero_grad", "clip_grad_norm_", "clip_grad_value_")


def _pure(calls: Sequence[str]) -> bool:
    return all(c in _PURE_CALLS or c.endswith(_PURE_METHODS) for c in calls)


def _statement_ast(site: Site, node: cst.CSTNode) -> ast.stmt | None:
    try:
        return ast.parse(site.code(node.with_changes(leading_lines=())).strip()).body[0]
    except (SyntaxError, IndexError, ValueError):
        return None


def _cuda_only(site: Site, node: cst.CSTNode) -> bool:
    """Is ``node`` an ``if torch.cuda.is_available()`` block, or inside one?"""
    ancestor: cst.CSTNode | None = node
    while ancestor is not None:
        if isinstance(ancestor, cst.If) and "cuda.is_available" in site.code(ancestor.test):
            return True
        ancestor = site.parent(ancestor)
    return False


def _equality_guard(stmt: ast.stmt) -> tuple[str, object] | None:
    """``if NAME == CONSTANT:`` with no else, as (NAME, CONSTANT)."""
    if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.test, ast.Compare):
        test = stmt.test
        if (
            isinstance(test.left, ast.Name)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant)
        ):
            return test.left.id, test.comparators[0].value
    return None


def _jumps(stmt: ast.stmt) -> bool:
    """Does the statement leave the block early (return, raise, break, continue)?"""
    return any(isinstance(n, ast.Return | ast.Raise | ast.Break | ast.Continue) for n in ast.walk(stmt))


def _swap_is_equivalent(a: ast.stmt, b: ast.stmt) -> str | None:
    guards = _equality_guard(a), _equality_guard(b)
    if all(guards) and guards[0][0] == guards[1][0] and guards[0][1] != guards[1][1]:
        return f"the two conditions on {guards[0][0]} exclude each other, so at most one block runs"
    if _jumps(a) or _jumps(b):
        return None
    wa, ra, ca = _names(a)
    wb, rb, cb = _names(b)
    conflict = (wa & (rb | wb)) | (wb & ra)
    if not conflict and _pure(ca) and _pure(cb):
        return "the two statements share no variable one of them writes, and call nothing with side effects"
    if not conflict and (_pure(ca) or _pure(cb)) and not (ra & rb):
        return (
            "they share no variable, and one of them only computes values (it cannot see the other's effects)"
        )
    for one, other in ((a, b), (b, a)):
        calls = _names(one)[2]
        if isinstance(one, ast.Expr) and len(calls) == 1 and calls[0].endswith(".zero_grad"):
            text = ast.unparse(other)
            if not any(g in c for c in _names(other)[2] for g in _GRAD_CALLS) and ".grad" not in text:
                return "zero_grad() only clears .grad; the other statement neither reads nor writes gradients"
    seeds = [_SEEDERS.get(c[0]) for c in (ca, cb) if len(c) == 1]
    if len(seeds) == 2 and all(seeds) and seeds[0] != seeds[1] and not (wa | wb):
        return "they seed two different random generators; the order does not matter"
    return None


def recognise_equivalent(operator: str, site: Site, node: cst.CSTNode, reference: str) -> str | None:
    """A reason the edit cannot change what any check observes, when the code alone shows it.

    Heuristic and conservative: the reason is shown next to a survivor, never used to skip one.
    """
    cuda = "it only runs when CUDA is available, and the checks run on CPU here"
    if _cuda_only(site, node):
        return cuda
    if operator == "swap_statements":
        body, i = site.block_of(node)
        if _cuda_only(site, body[i + 1]):
            return cuda
        a, b = _statement_ast(site, node), _statement_ast(site, body[i + 1])
        if a is not None and b is not None:
            return _swap_is_equivalent(a, b)
    return None


# --------------------------------------------------------------------------- generating


def generate_mutants(
    *,
    functions: Sequence[str] | None = None,
    operators: Sequence[str] | None = None,
    reference: str | None = None,
) -> list[Generated]:
    """Every generated mutant of the reference, one per distinct mutated source, in file order."""
    functions = tuple(functions or DEFAULT_FUNCTIONS)
    bad = [f for f in functions if f not in DEFAULT_FUNCTIONS]
    if bad:
        raise GenerateProblem(f"unknown function(s) {', '.join(bad)}: use {', '.join(DEFAULT_FUNCTIONS)}")
    bad = [o for o in operators or () if o not in OPERATORS]
    if bad:
        raise GenerateProblem(f"unknown operator(s) {', '.join(bad)}: use {', '.join(OPERATORS)}")
    reference = reference if reference is not None else reference_source()
    module = cst.parse_module(reference)
    out: list[Generated] = []
    seen = {reference}
    counter: dict[str, int] = {}
    for function in functions:
        site = Site(module, function)
        for operator, node, target, args in _candidates(site):
            if operators and operator not in operators:
                continue
            try:
                mutated = apply_step(module, operator, function, target, **args).code
                compile(mutated, "<generated>", "exec", dont_inherit=True)
            except (TargetError, OperatorError, SyntaxError):
                continue  # ambiguous target or an edit that does not fit here
            if mutated in seen:
                continue
            seen.add(mutated)
            line = site.line_of(node)
            base = f"{function.replace('_', '-')}-{operator.replace('_', '-')}-l{line}"
            counter[base] = counter.get(base, 0) + 1
            mid = base if counter[base] == 1 else f"{base}-{counter[base]}"
            extra = "".join(f", {k}={v!r}" for k, v in args.items())
            summary = f"{operator}({function}: {target!r}{extra})"
            mutant = Mutant(
                id=mid,
                title=summary,
                description=f"generated: {summary} at line {line}",
                steps=(Step(operator, function, target, args),),
                killed_by=(),
                documented_in="generated by kata mutants generate",
            )
            out.append(
                Generated(
                    mutant, mutated, line, summary, recognise_equivalent(operator, site, node, reference)
                )
            )
    return out


def run_generated(
    generated: Sequence[Generated],
    *,
    lab=None,
    seeds: int = 1,
    on_check: Callable | None = None,
    on_done: Callable | None = None,
):
    from checker.mutation.verify import run_verify

    return run_verify(
        mutants=[g.mutant for g in generated], seeds=seeds, lab=lab, on_check=on_check, on_done=on_done
    )


def render_generated(result, generated: Sequence[Generated], out) -> int:
    """Print the survivors (the gaps) and the per-check kills; the exit code."""
    from rich.markup import escape

    from checker.mutation.verify import KILLED, SURVIVED, TIMEOUT

    by_id = {g.mutant.id: g for g in generated}
    survivors = [r for r in result.results if r.status == SURVIVED]
    gaps = [r for r in survivors if not by_id[r.mutant.id].equivalent]
    flagged_killed = [
        r for r in result.results if r.status in (KILLED, TIMEOUT) and by_id[r.mutant.id].equivalent
    ]
    ref = result.reference
    if not ref.passed:
        out.print(f"[bold red]the reference does not pass: {', '.join(ref.failing) or ref.error}[/]")
    out.print(
        f"{len(result.results)} generated mutants: {result.count(KILLED) + result.count(TIMEOUT)} killed, "
        f"{len(survivors)} survived ({len(survivors) - len(gaps)} recognised as equivalent); "
        f"score {result.score:.1f}% in {result.seconds.get('total', 0.0):.1f} s"
    )
    if gaps:
        out.print(f"[bold red]{len(gaps)} survivor(s) no check notices (gaps, or equivalents to judge):[/]")
        for r in gaps:
            g = by_id[r.mutant.id]
            out.print(f"  [red]-[/] {escape(r.mutant.id)}  [dim]{escape(g.summary)}[/]")
    equivalents = [r for r in survivors if by_id[r.mutant.id].equivalent]
    if equivalents:
        out.print("[dim]survivors recognised as equivalent:[/]")
        for r in equivalents:
            out.print(f"[dim]  - {escape(r.mutant.id)}: {escape(by_id[r.mutant.id].equivalent or '')}[/]")
    if flagged_killed:
        out.print(
            "[yellow]flagged as equivalent but killed (the flag was wrong):[/] "
            + ", ".join(r.mutant.id for r in flagged_killed)
        )
    kills = {c: sum(r.checks.get(c, "pass") != "pass" for r in result.results) for c in result.check_ids}
    out.print("[dim]kills per check: " + ", ".join(f"{c} {k}" for c, k in kills.items()) + "[/]")
    return 0 if ref.passed and not gaps else 1
