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
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst

import checker
from checker.base.files import atomic_write
from checker.catalogue.mutants import Mutant, Step, reference_source
from checker.catalogue.operators import (
    ARGUMENT,
    EXPRESSION,
    OPERATORS,
    STATEMENT,
    OperatorError,
    Site,
    TargetError,
    apply_step,
)
from checker.checks import ordered_ids
from checker.engine.grading import Submission, grade
from checker.loopfile.protocol import FUNCTIONS
from checker.mutation.verify import (
    KILLED,
    REFERENCE_NAME,
    SURVIVED,
    TIMEOUT,
    MutantResult,
    ReferenceResult,
    Verification,
    settle,
)

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
        yield from _statement_candidates(site, node, text)
    yield from _expression_candidates(site)
    yield from _argument_candidates(site)


def _statement_candidates(site: Site, node: cst.CSTNode, text: str) -> Iterator[tuple[str, cst.CSTNode, str, dict]]:
    """The edits of one statement: deleted, swapped, moved across its loop, unwrapped, dropped, uncalled."""
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
        yield from _into_loop_candidates(site, text, body, i)
    if isinstance(node, cst.With):
        yield "unwrap_with", node, text, {}
    if _simple(node, cst.Assign) and ".to(" in site.code(node.body[0].value):
        yield "drop_assignment", node, text, {}
    if _simple(node, cst.Expr) and isinstance(node.body[0].value, cst.Call):
        call = node.body[0].value
        yield "remove_call", call, site.canonical_of(call, EXPRESSION), {}


def _into_loop_candidates(site: Site, text: str, body: Sequence, i: int) -> Iterator[tuple[str, Any, str, dict]]:
    """The loop ``body[i]``'s neighbours moved into it: the next one last, the previous one first."""
    if i + 1 < len(body) and not _simple(body[i + 1], cst.Return):
        after = site.canonical_of(body[i + 1], STATEMENT)
        yield "move_statement", body[i + 1], after, {"anchor": text, "position": "last_in"}
    if i > 0:
        before = site.canonical_of(body[i - 1], STATEMENT)
        yield "move_statement", body[i - 1], before, {"anchor": text, "position": "first_in"}


def _expression_candidates(site: Site) -> Iterator[tuple[str, cst.CSTNode, str, dict]]:
    """Each ``.item()`` / ``.to()`` call dropped."""
    for node, text in site.places(EXPRESSION):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in METHODS_TO_DROP
        ):
            yield "drop_method_call", node, text, {}


def _argument_candidates(site: Site) -> Iterator[tuple[str, cst.CSTNode, str, dict]]:
    """Each keyword argument removed, and each boolean one flipped."""
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
    """Why swapping two neighbouring statements cannot be observed, when the code shows it; else None."""
    guards = _equality_guard(a), _equality_guard(b)
    if all(guards) and guards[0][0] == guards[1][0] and guards[0][1] != guards[1][1]:
        return f"the two conditions on {guards[0][0]} exclude each other, so at most one block runs"
    if _jumps(a) or _jumps(b):
        return None
    return _independent(a, b) or _zero_grad_apart(a, b) or _seeds_apart(a, b)


def _independent(a: ast.stmt, b: ast.stmt) -> str | None:
    """The reason when the two statements share no written variable and one or both only compute values."""
    wa, ra, ca = _names(a)
    wb, rb, cb = _names(b)
    conflict = (wa & (rb | wb)) | (wb & ra)
    if not conflict and _pure(ca) and _pure(cb):
        return "the two statements share no variable one of them writes, and call nothing with side effects"
    if not conflict and (_pure(ca) or _pure(cb)) and not (ra & rb):
        return (
            "they share no variable, and one of them only computes values (it cannot see the other's effects)"
        )
    return None


def _zero_grad_apart(a: ast.stmt, b: ast.stmt) -> str | None:
    """The reason when one statement is a lone ``zero_grad()`` and the other never touches gradients."""
    for one, other in ((a, b), (b, a)):
        calls = _names(one)[2]
        if isinstance(one, ast.Expr) and len(calls) == 1 and calls[0].endswith(".zero_grad"):
            text = ast.unparse(other)
            if not any(g in c for c in _names(other)[2] for g in _GRAD_CALLS) and ".grad" not in text:
                return "zero_grad() only clears .grad; the other statement neither reads nor writes gradients"
    return None


def _seeds_apart(a: ast.stmt, b: ast.stmt) -> str | None:
    """The reason when the two statements seed two different random generators and assign nothing."""
    wa, _, ca = _names(a)
    wb, _, cb = _names(b)
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
    track=None,
) -> list[Generated]:
    """Every generated mutant of the track's reference (default: moons), one per distinct mutated source, in
    file order."""
    known = DEFAULT_FUNCTIONS if track is None else tuple(track.functions)
    functions = tuple(functions or known)
    bad = [f for f in functions if f not in known]
    if bad:
        raise GenerateProblem(f"unknown function(s) {', '.join(bad)}: use {', '.join(known)}")
    bad = [o for o in operators or () if o not in OPERATORS]
    if bad:
        raise GenerateProblem(f"unknown operator(s) {', '.join(bad)}: use {', '.join(OPERATORS)}")
    reference = reference if reference is not None else reference_source(track)
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


# --------------------------------------------------------------------------- running, with a cache

CACHE_ENV = "KATA_CACHE_DIR"
CACHE_FILE = "generate-cache.json"
REFERENCE_AGAIN = "solutions/loop.py (again)"


def cache_dir() -> Path:
    """``$KATA_CACHE_DIR``, else ``$XDG_CACHE_HOME/kata``, else ``~/.cache/kata``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kata"


def checker_fingerprint() -> str:
    """The checker's version: kata's version, torch's, and a digest of the checker's grading code.

    Any edit to a check, an instrument or the grading code changes it, so a cached verdict never
    outlives the code that reached it (mutmut keys its cache the same way)."""

    root = Path(checker.__file__).resolve().parent
    digest = hashlib.sha256(checker.__version__.encode())
    try:
        import torch

        digest.update(torch.__version__.encode())
    except ImportError:  # pragma: no cover
        pass
    for path in sorted([*(root / name for name in VERDICT_MODULES), *root.glob("checks/*.py")]):
        if not path.exists():
            continue
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


VERDICT_MODULES = ("grading.py", "sandbox.py", "worker.py", "instruments.py", "tamper.py", "lab.py", "tracks.py",
                   "loading.py", "protocol.py")
"""The checker's files a verdict depends on (beside checks/): the CLI, texts and reports do not count."""


class VerdictCache:
    """Verdicts by (mutated source, checker fingerprint), kept in one JSON file; written atomically."""

    def __init__(self, path: Path | None = None, fingerprint: str | None = None):
        self.path = path or cache_dir() / CACHE_FILE
        self.fingerprint = fingerprint or checker_fingerprint()
        try:
            self.data: dict[str, dict] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.data = {}
        if not isinstance(self.data, dict):
            self.data = {}

    def key(self, source: str) -> str:
        return hashlib.sha256(f"{self.fingerprint}\n{source}".encode()).hexdigest()

    def get(self, source: str) -> dict | None:
        return self.data.get(self.key(source))

    def put(self, source: str, entry: dict) -> None:
        self.data[self.key(source)] = entry

    def save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(self.data))
        except OSError:
            pass  # a cache that cannot be written only costs time


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}/{k}"))
        return out
    if isinstance(value, list | tuple):
        out = {f"{prefix}#len": len(value)}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}/{i}"))
        return out
    return {prefix: value}


def _figures(report) -> dict[str, Any]:
    """Everything the checks measured on one file, flattened: check/key/... -> value."""
    out: dict[str, Any] = {}
    for c in report.checks:
        out.update(_flatten(c.measured, c.id))
        out[f"{c.id}#status"] = c.status
    return out


def identical_behaviour(figures: dict[str, Any], reference: dict[str, Any], noisy: set[str]) -> bool:
    """Did every check measure exactly what it measured on the reference (figures that differ between
    two runs of the reference itself aside)?"""
    keys = (set(figures) | set(reference)) - noisy
    return bool(figures) and all(figures.get(k, _MISSING) == reference.get(k, _MISSING) for k in keys)


_MISSING = object()
IDENTICAL = ("every check measured exactly the same figures as on the reference: nothing the battery can "
             "observe changes, so it is equivalent (behaviourally)")


def run_generated(
    generated: Sequence[Generated],
    *,
    lab=None,
    on_check: Callable | None = None,
    on_done: Callable | None = None,
    cache: VerdictCache | None = None,
    reference: str | None = None,
):
    """Grade the generated mutants (those without a cached verdict) and the reference, twice: the second
    run of the reference tells which figures vary by themselves. A survivor whose figures all equal the
    reference's is marked equivalent. Returns (Verification, {mutant id: behavioural equivalence or None},
    number of verdicts taken from the cache)."""
    started = time.perf_counter()
    ref_source = reference if reference is not None else reference_source(getattr(lab, "track", None))
    ids = ordered_ids(None, device=getattr(lab, "device", "cpu"), track=getattr(lab, "track", None))
    results = [MutantResult(g.mutant, "Pending", source=g.source) for g in generated]  # built once, by generate
    behaviour: dict[str, str | None] = {}
    todo, hits = _from_cache(generated, results, cache, behaviour)
    ref_entry = cache.get(ref_source) if cache else None
    ref = ReferenceResult(seeds=[0])
    if todo or ref_entry is None:
        if lab is None:
            from checker.setting.lab import Lab

            lab = Lab().prepare()
        reports = _grade_with_reference(todo, ref_source, lab, ids, on_check, on_done)
        first, again = reports[0], reports[1]
        ref_figures = _figures(first)
        _fill_reference(ref, first)
        if cache is not None:
            cache.put(ref_source, {"verdicts": ref.verdicts, "messages": ref.messages, "error": ref.error})
        noisy = _noisy(ref_figures, _figures(again))
        _settle_fresh(todo, reports[2:], ref_figures, noisy, cache, behaviour)
        if cache is not None:
            cache.save()
    else:
        ref.verdicts, ref.messages, ref.error = ref_entry["verdicts"], ref_entry["messages"], ref_entry["error"]
    verification = Verification(
        reference=ref, results=results, check_ids=ids, reference_source=ref_source,
        seconds={"total": time.perf_counter() - started}, config={"seeds": 1, "checks": ids, "workers": 2},
        reference_name=lab.track.reference_path if lab is not None else REFERENCE_NAME,
    )
    return verification, behaviour, hits


def _from_cache(generated: Sequence[Generated], results: list[MutantResult], cache: VerdictCache | None,
                behaviour: dict[str, str | None]) -> tuple[list[MutantResult], int]:
    """(results still to grade, verdicts taken from the cache): cached verdicts are filled in ``results``."""
    by_id = {r.mutant.id: r for r in results}
    hits = 0
    todo = []
    for g in generated:
        entry = cache.get(g.source) if cache else None
        r = by_id[g.mutant.id]
        if r.status != "Pending":
            continue
        if entry is None:
            todo.append(r)
            continue
        hits += 1
        r.status, r.reason, r.checks, r.messages = entry["status"], entry["reason"], entry["checks"], {}
        behaviour[g.mutant.id] = IDENTICAL if entry.get("identical") else None
    return todo, hits


def _grade_with_reference(todo: list[MutantResult], ref_source: str, lab, ids, on_check: Callable | None,
                          on_done: Callable | None) -> list:
    """The reports of the reference, the reference again, then each mutant to grade, in that order."""
    subs = [Submission(ref_source, REFERENCE_NAME), Submission(ref_source, REFERENCE_AGAIN)]
    subs += [Submission(r.source, f"mutants/{r.mutant.id}.py") for r in todo]
    names = {s.filename: (s.filename if i < 2 else todo[i - 2].mutant.id) for i, s in enumerate(subs)}

    def _on_check(sub, res) -> None:
        if on_check:
            on_check(names[sub.filename], res.id, res.status)

    def _on_report(report) -> None:
        if on_done:
            on_done(names[report.file], "error" if report.error else ("pass" if report.passed else "fail"))

    return grade(subs, lab, check_ids=ids, workers=2, split=1, on_check=_on_check, on_report=_on_report)


def _noisy(ref_figures: dict[str, Any], again_figures: dict[str, Any]) -> set[str]:
    """The figures that differ between two runs of the reference itself."""
    return {k for k in set(ref_figures) | set(again_figures)
            if ref_figures.get(k, _MISSING) != again_figures.get(k, _MISSING)}


def _fill_reference(ref: ReferenceResult, first) -> None:
    """The reference's error, verdicts and first message line of each check it did not pass."""
    if first.error is not None:
        ref.error = f"{first.error_kind}: {first.error}"
    for c in first.checks:
        ref.verdicts[c.id] = [c.status]
        if c.status != "pass":
            ref.messages[c.id] = c.message.splitlines()[0] if c.message else ""


def _settle_fresh(todo: list[MutantResult], reports: Sequence, ref_figures: dict[str, Any], noisy: set[str],
                  cache: VerdictCache | None, behaviour: dict[str, str | None]) -> None:
    """Each graded mutant's verdict and behavioural equivalence, put in the cache."""
    for r, report in zip(todo, reports, strict=True):
        settle(r, report)
        same = r.status == SURVIVED and identical_behaviour(_figures(report), ref_figures, noisy)
        behaviour[r.mutant.id] = IDENTICAL if same else None
        if cache is not None:
            cache.put(r.source or "", {"status": r.status, "reason": r.reason, "checks": r.checks,
                                       "identical": same})


def render_generated(result, generated: Sequence[Generated], out, behaviour: dict | None = None,
                     cached: int = 0) -> int:
    """Print the survivors (the gaps) and the per-check kills; the exit code.

    A survivor is equivalent when the code shows it (``Generated.equivalent``) or when every check
    measured the same figures as on the reference (``behaviour``)."""
    behaviour = behaviour or {}
    by_id = {g.mutant.id: g for g in generated}

    def reason(mid: str) -> str | None:
        return by_id[mid].equivalent or behaviour.get(mid)

    survivors = [r for r in result.results if r.status == SURVIVED]
    gaps = [r for r in survivors if not reason(r.mutant.id)]
    ref = result.reference
    if not ref.passed:
        out.print(f"[bold red]the reference does not pass: {', '.join(ref.failing) or ref.error}[/]")
    out.print(
        f"{len(result.results)} generated mutants: {result.count(KILLED) + result.count(TIMEOUT)} killed, "
        f"{len(survivors)} survived ({len(survivors) - len(gaps)} recognised as equivalent); "
        f"score {result.score:.1f}% in {result.seconds.get('total', 0.0):.1f} s"
        + (f" ({cached} verdict(s) from the cache)" if cached else "")
    )
    _print_gaps(out, gaps, by_id)
    _print_equivalents(out, [r for r in survivors if reason(r.mutant.id)], reason)
    _print_flagged_killed(out, result, by_id)
    kills = {c: sum(r.checks.get(c, "pass") != "pass" for r in result.results) for c in result.check_ids}
    out.print("[dim]kills per check: " + ", ".join(f"{c} {k}" for c, k in kills.items()) + "[/]")
    return 0 if ref.passed and not gaps else 1


def _print_gaps(out, gaps: Sequence[MutantResult], by_id: dict[str, Generated]) -> None:
    """The survivors no check notices and nothing recognises as equivalent, with their edits."""
    from rich.markup import escape

    if gaps:
        out.print(f"[bold red]{len(gaps)} survivor(s) no check notices (gaps, or equivalents to judge):[/]")
        for r in gaps:
            g = by_id[r.mutant.id]
            out.print(f"  [red]-[/] {escape(r.mutant.id)}  [dim]{escape(g.summary)}[/]")


def _print_equivalents(out, equivalents: Sequence[MutantResult], reason: Callable[[str], str | None]) -> None:
    """The survivors recognised as equivalent, each with the reason."""
    from rich.markup import escape

    if equivalents:
        out.print("[dim]survivors recognised as equivalent:[/]")
        for r in equivalents:
            out.print(f"[dim]  - {escape(r.mutant.id)}: {escape(reason(r.mutant.id) or '')}[/]")


def _print_flagged_killed(out, result, by_id: dict[str, Generated]) -> None:
    """The mutants the code flagged as equivalent that a check killed all the same (the flag was wrong)."""
    flagged_killed = [
        r for r in result.results if r.status in (KILLED, TIMEOUT) and by_id[r.mutant.id].equivalent
    ]
    if flagged_killed:
        out.print(
            "[yellow]flagged as equivalent but killed (the flag was wrong):[/] "
            + ", ".join(r.mutant.id for r in flagged_killed)
        )
