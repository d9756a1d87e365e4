"""`kata mutants verify`: the reference and every mutant through the whole battery, in one warm parent.

The reference runs first under several global seeds (a check whose verdict on the reference changes
between seeds is *flaky*); then every mutant. All of them go to ``checker.engine.grading.grade`` in ONE call:
the parent has imported torch once, and each submission runs in its own forked child, two at a time.

A mutant's status follows Stryker's vocabulary:
- Killed: some check fails (or raises) on it; Timeout: none fails but one ran out of time;
- Survived: every check passes: a gap in the battery, or a mutant that changes nothing;
- RuntimeError: the mutated file cannot be graded at all (import error, protocol broken);
- CompileError: the mutant cannot be built (its target matches no place, or the result does not compile);
- Ignored: declared ``equivalent`` in its file, with the reason; it is not run.

Beyond its status, each mutant must be killed by *every* check it declares in ``killed_by``; a kill by
another check is reported as an extra, not a fault.
"""

from __future__ import annotations

import difflib
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from checker.catalogue.mutants import Mutant, MutantError, apply, load_mutants, reference_source
from checker.checks import REGISTRY, ordered_ids
from checker.engine.grading import Submission, grade
from checker.mutation.reach import changed_units, checks_reaching, units_of
from checker.setting.draws import Draw


class MutantStatus(str, Enum):
    """What verify found for one mutant; the value is what reports, JSON and ``proofs.json`` say."""

    KILLED = "Killed"
    SURVIVED = "Survived"
    TIMEOUT = "Timeout"
    RUNTIME_ERROR = "RuntimeError"
    COMPILE_ERROR = "CompileError"
    IGNORED = "Ignored"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


KILLED, SURVIVED, TIMEOUT, RUNTIME_ERROR, COMPILE_ERROR, IGNORED = MutantStatus
REFERENCE_NAME = "solutions/loop.py"
SEED_SUFFIX = """

# kata mutants verify: the same reference, imported with every global RNG seeded with {seed}
seed_everything({seed})
"""


@dataclass
class MutantResult:
    mutant: Mutant
    status: MutantStatus
    reason: str = ""
    source: str | None = None
    checks: dict[str, str] = field(default_factory=dict)
    """Check id -> pass/fail/error/timeout, for every check that ran."""
    not_run: list[str] = field(default_factory=list)
    """Checks left out because they reach none of the code the mutant changed (``checker.mutation.reach``)."""
    messages: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def killers(self) -> list[str]:
        return [c for c, s in self.checks.items() if s != "pass"]

    @property
    def missing(self) -> list[str]:
        """Declared killers that did not kill it (or are not in the battery)."""
        if self.status in (IGNORED, COMPILE_ERROR, RUNTIME_ERROR):
            return []
        return [c for c in self.mutant.killed_by if self.checks.get(c, "pass") == "pass"]

    @property
    def unknown(self) -> list[str]:
        """Declared killers that are not checks of the battery that ran."""
        if not self.checks:
            return []
        return [c for c in self.mutant.killed_by if c not in self.checks and c not in self.not_run]

    @property
    def extra(self) -> list[str]:
        """Checks that kill it without being declared."""
        return [c for c in self.killers if c not in self.mutant.killed_by]


@dataclass
class ReferenceResult:
    seeds: list[int]
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    """Check id -> its status under each seed, in ``seeds`` order."""
    messages: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def failing(self) -> list[str]:
        return [c for c, v in self.verdicts.items() if any(s != "pass" for s in v)]

    @property
    def flaky(self) -> list[str]:
        return [c for c, v in self.verdicts.items() if len(set(v)) > 1]

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.verdicts) and not self.failing


@dataclass
class Verification:
    reference: ReferenceResult
    results: list[MutantResult]
    check_ids: list[str]
    reference_source: str
    seconds: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    reference_name: str = REFERENCE_NAME
    """The track's reference, as its track file names it (reports and diffs say it)."""

    def count(self, status: MutantStatus) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def detected(self) -> int:
        return self.count(KILLED) + self.count(TIMEOUT)

    @property
    def valid(self) -> int:
        return self.detected + self.count(SURVIVED)

    @property
    def score(self) -> float:
        """Stryker's mutation score: detected / (detected + survived), in percent."""
        return 100.0 * self.detected / self.valid if self.valid else 0.0

    @property
    def idle_checks(self) -> list[str]:
        """Checks that kill no mutant."""
        return [c for c in self.check_ids if not any(r.checks.get(c, "pass") != "pass" for r in self.results)]

    @property
    def problems(self) -> list[str]:
        """Everything that makes verify exit 1, one line each."""
        out = []
        ref = self.reference
        if ref.error:
            out.append(f"the reference cannot be graded: {ref.error}")
        for cid in ref.failing:
            seeds = [str(s) for s, v in zip(ref.seeds, ref.verdicts[cid], strict=True) if v != "pass"]
            what = "flaky on the reference" if cid in ref.flaky else "fails on the reference"
            out.append(f"{cid} {what} (seed {', '.join(seeds)}): {ref.messages.get(cid, '')}".rstrip(": "))
        for r in self.results:
            mid = r.mutant.id
            if r.status == SURVIVED:
                out.append(
                    f"{mid} survived: every check passes on it "
                    f"(declared killer: {', '.join(r.mutant.killed_by)})"
                )
            elif r.status in (RUNTIME_ERROR, COMPILE_ERROR):
                out.append(f"{mid}: {r.status}: {r.reason}")
            else:
                unknown = r.unknown
                if unknown:
                    out.append(f"{mid}: declared killer(s) {', '.join(unknown)} are not in the battery")
                missing = [c for c in r.missing if c not in unknown]
                if missing and r.status != SURVIVED:
                    out.append(
                        f"{mid}: not killed by declared {', '.join(missing)}"
                        + (f" (killed by {', '.join(r.killers)} instead)" if r.killers else "")
                    )
        return out

    @property
    def survivors(self) -> list[str]:
        return [r.mutant.id for r in self.results if r.status == SURVIVED]

    @property
    def exit_code(self) -> int:
        return 0 if not self.problems else 1


class VerifyProblem(ValueError):
    """A bad request (unknown mutant id, bad mutants folder): the CLI turns it into exit 2."""


# --------------------------------------------------------------------------- running


def seeded_reference(source: str, seed: int) -> str:
    """The reference to run under global seed ``seed`` (seed 0: the reference as it is)."""
    return source if seed == 0 else source.rstrip("\n") + SEED_SUFFIX.format(seed=seed)


def build_sources(mutants: Sequence[Mutant], reference: str) -> list[MutantResult]:
    """Apply every mutant; the ones that cannot be built or are declared equivalent are settled here."""
    results = []
    for m in mutants:
        try:
            source = apply(m, reference)
        except MutantError as exc:
            results.append(MutantResult(m, COMPILE_ERROR, str(exc)))
            continue
        if m.equivalent:
            results.append(MutantResult(m, IGNORED, f"declared equivalent: {m.equivalent}", source))
        else:
            results.append(MutantResult(m, "Pending", source=source))
    return results


def settle(result: MutantResult, report) -> None:
    """Turn a grading report into the mutant's status."""
    if report.error is not None:
        result.status, result.reason = RUNTIME_ERROR, f"{report.error_kind}: {report.error}"
        return
    result.checks = {c.id: c.status for c in report.checks}
    result.messages = {c.id: c.message for c in report.checks}
    result.seconds = sum(c.seconds for c in report.checks)
    killers = result.killers
    if any(result.checks[c] in ("fail", "error") for c in killers):
        result.status = KILLED
    elif killers:
        result.status = TIMEOUT
    else:
        result.status = SURVIVED
    declared = [c for c in killers if c in result.mutant.killed_by] or killers
    if result.status == SURVIVED:
        result.reason = "every check passes on this mutant"
    else:
        result.reason = "\n".join(
            f"{c}: {result.messages.get(c, '').splitlines()[0] if result.messages.get(c) else ''}"
            for c in declared
        )


def run_verify(
    *,
    mutants_dir: str | Path | None = None,
    only: Sequence[str] = (),
    seeds: int = 3,
    lab=None,
    lang: str = "en",
    reference: str | None = None,
    check_ids: Sequence[str] | None = None,
    on_check: Callable[[str, str, str], None] | None = None,
    on_done: Callable[[str, str], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    mutants: Sequence[Mutant] | None = None,
    all_checks: bool = False,
) -> Verification:
    """Grade the reference (under ``seeds`` global seeds) and the chosen mutants in one ``grade()`` call.

    The mutants are ``mutants`` when given, else the files in ``mutants_dir`` (all, or those in ``only``).

    Each mutant runs the checks that reach the code it changed (``checker.mutation.reach``), and the whole
    battery when that selection leaves it surviving or misses a check it declares; ``all_checks``: the whole
    battery on every mutant.

    ``on_check(name, check_id, status)`` is called as each check finishes; ``on_done(name, status)``
    as each submission finishes (name: the mutant id, or "reference (seed N)"); ``on_plan(n)`` with the number
    of check runs planned, before they start and again when a rerun adds some.
    """
    started = time.perf_counter()
    chosen = _chosen_mutants(mutants, mutants_dir, only, seeds)
    ref_source = reference if reference is not None else reference_source(getattr(lab, "track", None))
    ids = ordered_ids(check_ids, device=getattr(lab, "device", "cpu"), track=getattr(lab, "track", None))
    results = build_sources(chosen, ref_source)
    setup = time.perf_counter() - started

    if lab is None:
        from checker.setting.lab import Lab

        lab = Lab().prepare()

    plan = _plan(results, ref_source, ids, seeds, lab.track, all_checks)
    if on_plan:
        on_plan(plan.planned)

    def _on_check(sub, res) -> None:
        if on_check:
            on_check(plan.names[id(sub)], res.id, res.status)

    def _on_report(report) -> None:
        if on_done:
            status = "pass" if report.passed else ("error" if report.error else "fail")
            on_done(plan.by_file[report.file], status)

    def _grade(subs: list[Submission]) -> list:
        return grade(subs, lab, check_ids=ids, workers=2, split=1, lang=lang, on_check=_on_check,
                     on_report=_on_report)

    graded_at = time.perf_counter()
    reports = _grade(plan.subs)
    ref = _reference_result(reports[:seeds], seeds)
    _settle_selected(plan, reports[seeds:], ids)
    # a selection that leaves a mutant surviving, or misses a check it declares: the whole battery decides
    again = [r for r in plan.pending if r.not_run and (r.status == SURVIVED or r.missing)]
    if again:
        if on_plan:
            on_plan(plan.planned + len(ids) * len(again))
        reports += _rerun(plan, again, _grade)
    graded = time.perf_counter() - graded_at
    return Verification(
        reference=ref,
        results=results,
        check_ids=ids,
        reference_source=ref_source,
        seconds=_seconds(reports, seeds, setup, graded, started),
        config={"seeds": seeds, "only": list(only), "checks": ids, "workers": 2,
                "coverageAnalysis": "all" if all_checks else "perTest"},
        reference_name=getattr(getattr(lab, "track", None), "reference_path", REFERENCE_NAME),
    )


def _chosen_mutants(mutants: Sequence[Mutant] | None, mutants_dir: str | Path | None, only: Sequence[str],
                    seeds: int) -> list[Mutant]:
    """The mutants to verify (``mutants``, else those in ``mutants_dir``; all, or those in ``only``)."""
    if seeds < 1:
        raise VerifyProblem("--seeds must be at least 1")
    catalogue = {m.id: m for m in mutants} if mutants is not None else load_mutants(mutants_dir)
    unknown = [i for i in only if i not in catalogue]
    if unknown:
        raise VerifyProblem(f"unknown mutant id(s): {', '.join(unknown)} (see `kata mutants list`)")
    return [catalogue[i] for i in (only or catalogue)]


@dataclass
class _Plan:
    """The submissions of one verification: the reference under each seed, then every pending mutant."""

    subs: list[Submission]
    pending: list[MutantResult]
    selected: dict[str, list[str] | None]  # mutant id -> the checks it runs (None: all of them)
    names: dict[int, str]  # id(submission) -> the name the callbacks see
    by_file: dict[str, str]  # submission file name -> that name
    planned: int  # check runs planned
    shared: Draw  # the mutants' and seed 0's draw, kept for the reruns


def _plan(results: list[MutantResult], ref_source: str, ids: Sequence[str], seeds: int, track,
          all_checks: bool) -> _Plan:
    """The reference under each seed and each pending mutant with the checks it runs, as submissions."""
    ref_names = [REFERENCE_NAME if s == 0 else f"{REFERENCE_NAME} (seed {s})" for s in range(seeds)]
    # Seed 0 shares the run's draw with the mutants; every further seed also brings its own draw of the
    # differential checks' arguments, so "the reference passes under N seeds" covers N draws too.

    shared = Draw.fresh(track)  # the mutants' and seed 0's, kept for the reruns
    subs = [Submission(seeded_reference(ref_source, s), ref_names[s], draw=shared if s == 0 else Draw.fresh(track))
            for s in range(seeds)]
    pending = [r for r in results if r.status == "Pending"]
    selected = {r.mutant.id: None if all_checks else _selection(r, ref_source, ids) for r in pending}
    subs += [Submission(r.source, f"mutants/{r.mutant.id}.py", check_ids=selected[r.mutant.id], draw=shared)
             for r in pending]
    names = {id(s): (ref_names[i] if i < seeds else pending[i - seeds].mutant.id) for i, s in enumerate(subs)}
    by_file = {s.filename: names[id(s)] for s in subs}
    planned = len(ids) * seeds + sum(len(ids if selected[r.mutant.id] is None else selected[r.mutant.id])
                                     for r in pending)
    return _Plan(subs, pending, selected, names, by_file, planned, shared)


def _reference_result(reports: list, seeds: int) -> ReferenceResult:
    """The reference's verdicts per check over its seeds' reports, its first error and failure messages."""
    ref = ReferenceResult(seeds=list(range(seeds)))
    for report in reports:
        if report.error is not None and ref.error is None:
            ref.error = f"{report.error_kind}: {report.error}"
        for c in report.checks:
            ref.verdicts.setdefault(c.id, []).append(c.status)
            if c.status != "pass":
                ref.messages.setdefault(c.id, c.message.splitlines()[0] if c.message else "")
    return ref


def _settle_selected(plan: _Plan, reports: list, ids: Sequence[str]) -> None:
    """Settle each pending mutant from its report; the checks its selection left out are noted as not run."""
    for r, report in zip(plan.pending, reports, strict=True):
        settle(r, report)
        chosen = plan.selected[r.mutant.id]
        if chosen is not None:
            r.not_run = [c for c in ids if c not in chosen]


def _rerun(plan: _Plan, again: list[MutantResult], grade_with: Callable[[list[Submission]], list]) -> list:
    """Grade ``again`` under the whole battery and settle them anew; their reports."""
    rerun = [Submission(r.source, f"mutants/{r.mutant.id}.py", draw=plan.shared) for r in again]
    for s, r in zip(rerun, again, strict=True):
        plan.names[id(s)] = r.mutant.id
    more = grade_with(rerun)
    for r, report in zip(again, more, strict=True):
        r.not_run = []
        settle(r, report)
    return more


def _seconds(reports: list, seeds: int, setup: float, graded: float, started: float) -> dict[str, float]:
    """Stryker's timings: setup, the reference's share of the grading, the mutants' share, and the total."""
    ref_seconds = sum(c.seconds for rep in reports[:seeds] for c in rep.checks)
    mut_seconds = sum(c.seconds for rep in reports[seeds:] for c in rep.checks)
    share = ref_seconds / (ref_seconds + mut_seconds) if ref_seconds + mut_seconds else 0.0
    return {
        "setup": setup,
        "initialRun": graded * share,
        "mutation": graded * (1 - share),
        "total": time.perf_counter() - started,
    }


def _selection(result: MutantResult, reference: str, ids: Sequence[str]) -> list[str] | None:
    """The checks to run on a mutant: those reaching the code it changed, or None (all of them) when that cannot
    be narrowed or would leave out a check the mutant declares."""
    ref_units = _units(reference)
    if ref_units is None or result.source is None:
        return None
    chosen = checks_reaching(ids, lambda cid: REGISTRY[cid].calls, ref_units,
                             changed_units(ref_units, units_of(result.source)))
    if chosen is None or any(c in ids and c not in chosen for c in result.mutant.killed_by):
        return None
    return chosen


@functools.lru_cache(maxsize=8)
def _units(reference: str):
    return units_of(reference)


# --------------------------------------------------------------------------- diffs and locations


def unified_diff(reference: str, mutated: str, name: str, path: str = REFERENCE_NAME) -> list[str]:
    """The mutant against the reference (``path``: the reference's path, for the labels)."""
    return list(
        difflib.unified_diff(
            reference.splitlines(),
            mutated.splitlines(),
            f"a/{path}",
            f"b/{path} ({name})",
            lineterm="",
            n=2,
        )
    )


def change_span(reference: str, mutated: str) -> tuple[dict, str]:
    """Stryker location (1-based, end exclusive) of the changed lines, and what replaces them."""
    a = reference.splitlines(keepends=True)
    b = mutated.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}, ""
    i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    start = {"line": i1 + 1, "column": 1}
    if i2 == i1:  # a pure insertion before line i1 + 1
        return {"start": start, "end": dict(start)}, "".join(b[j1:j2])
    end = {"line": i2, "column": len(a[i2 - 1].rstrip("\r\n")) + 1}
    return {"start": start, "end": end}, "".join(b[j1:j2]).rstrip("\r\n")
