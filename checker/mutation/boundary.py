"""Boundary mutants: the checks' argument classes, mutation-tested.

A bug that shows on one side of a threshold only (``lr = min(lr, 5.0)``, a loader that drops its remainder
when ``batch_size > 64``, a clip forgotten above some norm) passes every check whose calls all stay on the
other side. So every parameter of every protocol function of a track gets, at several thresholds T spread
over its declared domain (``checker.setting.domains``), each edit that can condition on it:

- ``clamp_above`` (a cap: ``p = min(p, T)``) and ``clamp_below`` (a floor: ``p = max(p, T)``), for numbers;
- ``keep_rows``: only the first T rows of a data argument (X and y, a Dataset, a loader's batches, ``val``);
- ``switch_past``: a behaviour switched on past T (a step skipped through a zero lr, the clip dropped, the
  remainder rows dropped, the seed reduced modulo T, validation left out of long runs).

The edit is inserted at the function's entry, so the mutant is the reference, runnable, with one parameter
rebound. Each is a generated mutant (never a kata), declaring as its killer the check that compares the
function with the reference, when the track has one. ``kata mutants verify --boundary --seeds N`` grades them
under N draws of the checks' arguments: a mutant must be killed under every one. A survivor is a hole in the
classes; a threshold at or past the domain's end, where the edit changes no value inside it, is equivalent.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import libcst as cst

from checker.catalogue.mutants import Mutant, Step, reference_source
from checker.catalogue.operators import OperatorError, TargetError, apply_step
from checker.checks import ordered_ids
from checker.mutation.verify import KILLED, SURVIVED, TIMEOUT, Verification, run_verify

BOUNDARY_OPERATORS = ("clamp_above", "clamp_below", "keep_rows", "switch_past")


class DomainLike(Protocol):
    low: Any
    high: Any


@dataclass(frozen=True)
class Edit:
    """One way a bug can condition on a parameter: the operator, its arguments at threshold T, what it means."""

    operator: str
    args: Callable[[Any], dict[str, Any] | None]
    """The operator's arguments at threshold T; None where the edit makes no sense at that T."""
    says: str
    """What the bug does, for the mutant's title: ``{p}`` the parameter, ``{t}`` the threshold."""
    upward: bool = True
    """The edit changes values above T (a cap, a switch past T); False: values below T (a floor)."""
    slug: str = ""
    """The mutant id's word for the edit where one operator makes several edits of a parameter (else the operator's
    name)."""


def _at(operator: str, says: str, upward: bool = True, **extra: Any) -> Edit:
    return Edit(operator, lambda t: {"threshold": t, **extra}, says, upward)


def _switch(code: str, says: str, *, minimum: float | None = None, of: str = "", below: bool = False,
            slug: str = "") -> Edit:
    """``switch_past`` with ``code`` (``{t}``: the threshold), left out at thresholds under ``minimum``; ``of`` and
    ``below``: see the operator."""
    def args(t: Any) -> dict[str, Any] | None:
        if minimum is not None and t < minimum:
            return None
        return {"threshold": t, "code": code.format(t=t), **({"of": of} if of else {}), **({"below": True} if below
                                                                                          else {})}
    return Edit("switch_past", args, says, upward=not below, slug=slug)


OPTIMIZER_LR = '{p}.param_groups[0]["lr"]'
"""An optimizer handed in is judged by its lr: the figure a loop may put a threshold on."""
SET_LR = 'for group in optimizer.param_groups:\n    group["lr"] = {t}'
OPTIMIZER_EDITS = (
    _switch(SET_LR, "the optimizer's lr capped at {t} (written into its groups)", of=OPTIMIZER_LR, slug="lr-cap"),
    _switch(SET_LR, "the optimizer's lr raised to at least {t} (written into its groups)", of=OPTIMIZER_LR,
            below=True, slug="lr-floor"),
    _switch("clip_norm = 0.01", "a clip of 0.01 forced once the optimizer's lr > {t}", of=OPTIMIZER_LR,
            slug="clip-on"),
)
"""``train_epoch``'s and ``fit``'s optimizer, by its lr (make_optimizer's lr domain)."""


CAP = _at("clamp_above", "{p} capped at {t}")
FLOOR = _at("clamp_below", "{p} raised to at least {t}", upward=False)

EDITS: dict[str, tuple[Edit, ...]] = {
    "lr": (CAP, FLOOR, _switch("lr = 0.0", "no update once lr > {t} (the step skipped: lr 0)")),
    "seed": (CAP, FLOOR, _switch("seed = seed % {t}", "seed reduced modulo {t} past {t}", minimum=2)),
    "epochs": (CAP, FLOOR),
    "clip_norm": (CAP, FLOOR, _switch("clip_norm = None", "no clipping once clip_norm > {t}")),
    "num_workers": (CAP, FLOOR),
}
"""The edits of a parameter, by its name (a name means one thing across the protocol groups)."""

DROP_REMAINDER = {
    "X": "X, y = X[:len(X) - len(X) % batch_size], y[:len(y) - len(y) % batch_size]",
    "dataset": "dataset = torch.utils.data.Subset(dataset, range(len(dataset) - len(dataset) % batch_size))",
}
"""``batch_size`` past T drops the rows a last short batch would hold, by what the loader is built from."""

ROWS = {"X": ("tensor", "y"), "dataset": ("dataset", ""), "loader": ("loader", ""), "val": ("pair", ""),
        "history": ("tensor", "")}
"""Data parameters: ``keep_rows``'s form and the parameters cut alongside (``y`` goes with ``X``)."""


def edits_of(function: str, parameter: str, parameters: Sequence[str]) -> tuple[Edit, ...]:
    """The edits worth making on ``parameter`` of ``function`` (whose parameters are ``parameters``)."""
    if parameter == "batch_size":
        source = next((p for p in DROP_REMAINDER if p in parameters), None)
        extra = (_switch(DROP_REMAINDER[source], "the remainder rows dropped once batch_size > {t}"),) if source else ()
        return (CAP, FLOOR, *extra)
    if parameter == "epochs" and "val" in parameters and function == "fit":
        return (*EDITS["epochs"], _switch("val = None", "no validation once epochs > {t}"))
    if parameter == "optimizer":
        return OPTIMIZER_EDITS if "clip_norm" in parameters else OPTIMIZER_EDITS[:2]
    if parameter in ROWS and (parameter != "X" or "y" in parameters):
        form, together = ROWS[parameter]
        return (_at("keep_rows", "only the first {t} rows of {p}", form=form, together=together),)
    return EDITS.get(parameter, ())


# --------------------------------------------------------------------------- generating


@dataclass(frozen=True)
class BoundaryMutant:
    """One generated boundary mutant and where it sits: function, parameter, threshold."""

    mutant: Mutant
    function: str
    parameter: str
    threshold: Any
    operator: str
    track: str
    source: str = ""

    @property
    def where(self) -> str:
        return f"{self.function}({self.parameter}) {self.operator} T={self.threshold}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def _equivalent(edit: Edit, threshold: Any, domain: DomainLike) -> str | None:
    """Why an edit at ``threshold`` changes no value of the domain, when it does not."""
    low, high = getattr(domain, "low", None), getattr(domain, "high", None)
    if edit.upward and high is not None and threshold >= high:
        return f"T = {threshold} is at or above the top of the domain ({high}): no value inside it changes"
    if not edit.upward and low is not None and threshold <= low:
        return f"T = {threshold} is at or below the bottom of the domain ({low}): no value inside it changes"
    return None


def _killer(function: str, battery: Sequence[str]) -> tuple[str, ...]:
    """The check comparing ``function`` with the reference, when the track's battery has one."""
    check = f"reference.{function}"
    return (check,) if check in battery else ()


def generate_boundary(
    track,
    *,
    domains: Callable[[str, str], tuple[DomainLike, Sequence[Any]] | None],
    functions: Sequence[str] | None = None,
    reference: str | None = None,
) -> list[BoundaryMutant]:
    """Every boundary mutant of ``track``'s reference: each edit at each threshold, for every parameter of every
    protocol function (or of ``functions``). ``domains(function, parameter)`` gives the parameter's domain and
    its thresholds, or None for a parameter without one (a model, a loss, a device)."""
    from checker.loopfile.protocol import functions_of

    reference = reference if reference is not None else reference_source(track)
    protocol = functions_of(track.protocol)
    battery = ordered_ids(None, track=track)
    module = cst.parse_module(reference)
    out: list[BoundaryMutant] = []
    seen: set[str] = set()
    for function in functions or tuple(protocol):
        spec = protocol[function]
        parameters = (*spec.positional, *spec.keywords)
        for parameter in parameters:
            found = domains(function, parameter)
            if found is None:
                continue
            domain, thresholds = found
            for edit in edits_of(function, parameter, parameters):
                for bm in _at_thresholds(track, function, parameter, edit, domain, thresholds, battery, module):
                    if bm.mutant.id not in seen:
                        seen.add(bm.mutant.id)
                        out.append(bm)
    return out


def _at_thresholds(track, function, parameter, edit, domain, thresholds, battery, module) -> Iterator[BoundaryMutant]:
    for t in thresholds:
        if edit.operator == "keep_rows" and (not isinstance(t, int) or t < 1):
            continue
        args = edit.args(t)
        if args is None:
            continue
        says = edit.says.format(p=parameter, t=t)
        mid = _slug(f"{function}-{parameter}-{edit.slug or edit.operator}-t{t}")
        mutant = Mutant(
            id=mid, title=f"{function}: {says}",
            description=f"boundary mutant: in {function}(), {says} (threshold {t} on {parameter})",
            steps=(Step(edit.operator, function, parameter, args),),
            killed_by=_killer(function, battery),
            documented_in="generated by kata mutants generate --boundary",
            equivalent=_equivalent(edit, t, domain),
        )
        try:
            source = apply_step(module, edit.operator, function, parameter, **args).code
            compile(source, mutant.id, "exec", dont_inherit=True)
        except (TargetError, OperatorError, SyntaxError):
            continue  # the reference's function lacks the parameter (a track's own signature)
        yield BoundaryMutant(mutant, function, parameter, t, edit.operator, track.id, source)


SPREAD = 5
"""Thresholds per parameter by default: both ends of ``checker.setting.domains.thresholds`` and points evenly
spaced between (the whole list, 9 to 22 points a parameter, makes thousands of mutants per track)."""

ROWS_OF_OBJECTS = ("loader", "val")
"""Parameters whose domain is a kind of object, cut by rows: thresholds from the rows a loop is handed."""


@dataclass(frozen=True)
class Span:
    """A numeric domain as the boundary mutants need it (make_optimizer's lr: its variants merged)."""

    low: Any
    high: Any


def spread(points: Sequence[Any], count: int | None) -> list[Any]:
    """``count`` of ``points`` evenly spaced over the sorted list, both ends included (None or 0: all)."""
    points = sorted(points)
    if not count or len(points) <= count:
        return list(points)
    if count == 1:
        return [points[-1]]
    picked = {points[round(i * (len(points) - 1) / (count - 1))] for i in range(count)}
    return sorted(picked)


def track_domains(track, count: int | None = SPREAD) -> Callable[[str, str], tuple[DomainLike, Sequence[Any]] | None]:
    """``checker.setting.domains`` as ``generate_boundary`` asks for it: (domain, thresholds) or None; ``count``
    thresholds per parameter (None: every one the domain declares)."""
    from checker.setting import domains as declared

    def lookup(function: str, parameter: str):
        if parameter in ROWS_OF_OBJECTS:
            function, parameter = "evaluate", "X"
        elif parameter == "optimizer":  # an optimizer handed in: by its lr, make_optimizer's domain
            function, parameter = "make_optimizer", "lr"
        found = [d for d in declared.DOMAINS if d.function == function and d.parameter == parameter
                 and set(d.groups) & set(track.protocol)]
        points = {t for d in found for t in declared.thresholds(d) if not isinstance(t, bool)}
        if not points:
            return None
        return Span(min(d.low for d in found), max(d.high for d in found)), spread(points, count)

    return lookup


# --------------------------------------------------------------------------- verifying under N draws


@dataclass
class BoundaryVerdict:
    """One boundary mutant under every draw: the statuses, in draw order, and the checks that killed it."""

    boundary: BoundaryMutant
    statuses: list[str] = field(default_factory=list)
    killers: list[list[str]] = field(default_factory=list)
    missing: list[list[str]] = field(default_factory=list)
    """Per draw, the declared killer(s) that let it pass (another check may have killed it)."""
    reasons: list[str] = field(default_factory=list)
    """Per draw, verify's reason (what killed it, or why it could not be graded)."""

    @property
    def equivalent(self) -> str | None:
        return self.boundary.mutant.equivalent

    @property
    def survived_on(self) -> list[int]:
        """The draws (from 0) on which no check killed it."""
        return [i for i, s in enumerate(self.statuses) if s == SURVIVED]

    @property
    def ungraded_on(self) -> list[int]:
        """The draws on which the mutated file could not be graded at all (kata check would not pass it either,
        but no check's classes caught it: the reason says why)."""
        return [i for i, s in enumerate(self.statuses) if s not in (KILLED, TIMEOUT, SURVIVED)]

    @property
    def missed_on(self) -> list[int]:
        """The draws on which it was killed, but not by its declared check (the comparison's classes missed it)."""
        return [i for i, m in enumerate(self.missing) if m and i not in self.survived_on]

    @property
    def hole(self) -> bool:
        return self.equivalent is None and bool(self.survived_on)


@dataclass
class BoundaryRun:
    track: str
    verdicts: list[BoundaryVerdict]
    seeds: int
    reference_problems: list[str]
    seconds: float

    @property
    def holes(self) -> list[BoundaryVerdict]:
        return [v for v in self.verdicts if v.hole]

    @property
    def ungraded(self) -> list[BoundaryVerdict]:
        return [v for v in self.verdicts if v.equivalent is None and not v.hole and v.ungraded_on]

    @property
    def missed(self) -> list[BoundaryVerdict]:
        return [v for v in self.verdicts if v.equivalent is None and not v.hole and v.missed_on]

    @property
    def exit_code(self) -> int:
        return 1 if self.holes or self.reference_problems else 0


def verify_boundary(
    boundary: Sequence[BoundaryMutant],
    *,
    seeds: int,
    lab,
    reference: str,
    on_check: Callable | None = None,
    on_done: Callable | None = None,
    on_plan: Callable | None = None,
    check_ids: Sequence[str] | None = None,
) -> BoundaryRun:
    """Grade every boundary mutant under ``seeds`` draws of the checks' arguments, the reference passing on each
    draw. Declared-equivalent mutants are not run; a mutant that survives a draw is not run on the later ones (it
    is a hole whatever they say).

    Each draw grades in two rounds (``run_verify`` each): first only the checks the mutants declare (the
    comparisons with the reference), which settle every mutant they kill; then the whole battery (or
    ``check_ids``) on the rest, which tells a survivor from a kill by another check."""
    started = time.perf_counter()
    verdicts = [BoundaryVerdict(b) for b in boundary]
    problems: list[str] = []
    hooks = {"on_check": on_check, "on_done": on_done, "on_plan": on_plan}
    for seed in range(seeds):
        # a mutant that survived one draw is a hole already: the later draws grade only the ones still killed
        live = [v.boundary.mutant for v in verdicts
                if v.equivalent is None and not v.survived_on and not v.ungraded_on]
        if not live:
            break
        settled, found = _one_draw(live, lab, reference, check_ids, hooks)
        problems += [f"draw {seed}: {p}" for p in found]
        for v in verdicts:
            r = settled.get(v.boundary.mutant.id)
            if r is None:
                continue
            v.statuses.append(str(r.status))
            v.reasons.append(r.reason)
            v.killers.append(r.killers)
            v.missing.append(r.missing if r.status != SURVIVED else [])
    track = boundary[0].track if boundary else getattr(getattr(lab, "track", None), "id", "")
    return BoundaryRun(track, verdicts, seeds, problems, time.perf_counter() - started)


def _one_draw(live: Sequence[Mutant], lab, reference: str, check_ids, hooks: dict) -> tuple[dict, list[str]]:
    """Every live mutant's result under one draw (by id), and the reference's problems on it."""
    settled: dict = {}
    problems: list[str] = []
    declared = sorted({c for m in live for c in m.killed_by})
    if declared and check_ids is None:
        first = run_verify(mutants=[m for m in live if m.killed_by], seeds=1, lab=lab, reference=reference,
                           check_ids=declared, **hooks)
        problems += _reference_problems(first)
        settled = {r.mutant.id: r for r in first.results if r.status == KILLED and not r.missing}
    rest = [m for m in live if m.id not in settled]
    if rest:
        second = run_verify(mutants=rest, seeds=1, lab=lab, reference=reference, check_ids=check_ids, **hooks)
        problems += _reference_problems(second)
        settled.update({r.mutant.id: r for r in second.results})
    return settled, problems


def _reference_problems(result: Verification) -> list[str]:
    ref = result.reference
    out = [f"the reference cannot be graded: {ref.error}"] if ref.error else []
    out += [f"{c} fails on the reference: {ref.messages.get(c, '')}" for c in ref.failing]
    return out


def render_boundary(run: BoundaryRun, out) -> int:
    """Print the holes (function, parameter, threshold, the draws it survived), the exit code."""
    from rich.markup import escape

    ran = [v for v in run.verdicts if v.equivalent is None]
    equivalent = len(run.verdicts) - len(ran)
    killed = [v for v in ran if not v.hole and not v.ungraded_on]
    out.print(f"track {run.track}: {len(run.verdicts)} boundary mutants, {len(killed)} killed on every one of "
              f"{run.seeds} draw(s), {len(run.holes)} survived some draw, {len(run.ungraded)} could not be graded, "
              f"{equivalent} equivalent (a threshold past the domain's end); {run.seconds:.1f} s")
    for p in run.reference_problems:
        out.print(f"[bold red]{escape(p)}[/]")
    if run.holes:
        out.print(f"[bold red]{len(run.holes)} hole(s) in the argument classes (a threshold no check crosses):[/]")
        for v in run.holes:
            draws = v.survived_on[0]
            out.print(f"  [red]-[/] {escape(v.boundary.where)}  [dim]survived draw {draws} of {run.seeds}: "
                      f"{escape(v.boundary.mutant.title)}[/]")
    if run.ungraded:
        out.print(f"[yellow]{len(run.ungraded)} could not be graded (not a hole: kata check does not pass them "
                  f"either, but no check's classes caught them):[/]")
        for v in run.ungraded:
            i = v.ungraded_on[0]
            out.print(f"  [yellow]-[/] {escape(v.boundary.where)}  [dim]draw {i}: {escape(v.statuses[i])}: "
                      f"{escape(v.reasons[i].splitlines()[0] if v.reasons[i] else '')}[/]")
    if run.missed:
        out.print(f"[yellow]{len(run.missed)} killed, but not by the check comparing the function with the "
                  f"reference on some draw:[/]")
        for v in run.missed:
            others = sorted({c for k in v.killers for c in k})
            out.print(f"  [yellow]-[/] {escape(v.boundary.where)}  [dim]draw(s) "
                      f"{', '.join(str(i) for i in v.missed_on)}; killed by {escape(', '.join(others))}[/]")
    return run.exit_code


# --------------------------------------------------------------------------- the commands


def boundary_of_tracks(tracks, *, only: Sequence[str] = (), functions: Sequence[str] = (),
                       count: int | None = SPREAD) -> dict:
    """Every track's boundary mutants (``only``: those ids; ``functions``: those functions), by track id;
    an unknown id or function is a UsageProblem."""
    from checker.loopfile.protocol import functions_of

    out = {}
    for track in tracks:
        wanted = [f for f in functions if f in functions_of(track.protocol)]
        if functions and not wanted:
            continue
        mutants = generate_boundary(track, domains=track_domains(track, count), functions=wanted or None)
        out[track.id] = [b for b in mutants if not only or b.mutant.id in only]
    _refuse_unknown(out, only, functions)
    return out


def _refuse_unknown(found: dict, only: Sequence[str], functions: Sequence[str]) -> None:
    from checker.base.errors import UsageProblem

    every = [b for mutants in found.values() for b in mutants]
    bad = [f for f in functions if not any(b.function == f for b in every)]
    unknown = [i for i in only if not any(b.mutant.id == i for b in every)]
    if bad or unknown:
        what = f"unknown function(s) {', '.join(bad)}" if bad else \
            f"unknown boundary mutant id(s) {', '.join(unknown)}"
        raise UsageProblem(f"{what} (see `kata mutants generate --boundary --dry-run`)")


def list_boundary(by_track: dict, out) -> None:
    """``generate --boundary --dry-run``: one line per mutant: id, where, the check that must kill it."""
    from rich.markup import escape

    for track, mutants in by_track.items():
        out.print(f"[bold]{track}[/]: {len(mutants)} boundary mutants "
                  f"({sum(b.mutant.equivalent is not None for b in mutants)} equivalent)")
        for b in mutants:
            killer = ", ".join(b.mutant.killed_by) or "any check"
            tail = f"equivalent: {b.mutant.equivalent}" if b.mutant.equivalent else f"killed by {killer}"
            out.print(f"  {escape(b.mutant.id)}  [dim]{escape(b.mutant.title)}; {escape(tail)}[/]")


def run_boundary(by_track: dict, *, seeds: int, out, progress: Callable[[int], Any]) -> int:
    """Verify every track's boundary mutants under ``seeds`` draws; print each track's holes; the exit code.

    ``progress(total)`` returns a context manager with ``check``, ``done`` and ``plan`` callbacks (the CLI's
    progress on stderr)."""
    from checker.setting.lab import prepared_lab

    code = 0
    for track_id, mutants in by_track.items():
        if not mutants:
            continue
        from checker.setting.tracks import track_named

        lab = prepared_lab("cpu", track_named(track_id))
        live = sum(b.mutant.equivalent is None for b in mutants)
        with progress((live + 1) * seeds * len(ordered_ids(None, track=lab.track))) as bar:
            result = verify_boundary(mutants, seeds=seeds, lab=lab, reference=reference_source(lab.track),
                                     on_check=bar.check, on_done=bar.done, on_plan=None)
        code = max(code, render_boundary(result, out))
    return code
