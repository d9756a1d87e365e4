"""What `kata mutants verify` shows and writes: the kill matrix on a terminal, Stryker's JSON, an HTML page.

The JSON follows Stryker's mutation-testing-report-schema, version 2 (the mutated file is the
reference, each mutant one entry; the checks are the "tests"), so any tool that reads Stryker
reports (mutation-testing-elements, dashboards) reads ours.
"""

from __future__ import annotations

import inspect
import os
import platform
import sys
from pathlib import Path
from typing import Any

from checker import __version__
from checker.base.files import atomic_write
from checker.base.term import dumps
from checker.checks import REGISTRY
from checker.mutation.verify import (
    COMPILE_ERROR,
    IGNORED,
    KILLED,
    RUNTIME_ERROR,
    SURVIVED,
    TIMEOUT,
    MutantResult,
    Verification,
    change_span,
    unified_diff,
)

SCHEMA_URL = "https://git.io/mutation-testing-schema"
THRESHOLDS = {"high": 100, "low": 90}
"""Every mutant must die: anything under 100 is a gap; under 90 the battery is badly broken."""

# one glyph per cell, readable without colour
DECLARED_KILL, EXTRA_KILL, MISSED, PASSES = "●", "○", "✗", "·"
LEGEND = (
    f"{DECLARED_KILL} killed by a declared check   {EXTRA_KILL} killed by another check too   "
    f"{MISSED} declared check did not kill it   {PASSES} passes   E/T: by an error/timeout   "
    "blank: not run (it reaches nothing the mutant changed)"
)
_STATUS_STYLE = {
    KILLED: "green",
    TIMEOUT: "green",
    SURVIVED: "bold red",
    RUNTIME_ERROR: "bold red",
    COMPILE_ERROR: "bold red",
    IGNORED: "dim",
}


def cell(result: MutantResult, cid: str) -> tuple[str, str]:
    """(glyph, rich style) of one matrix cell."""
    status = result.checks.get(cid)
    declared = cid in result.mutant.killed_by
    if status is None:
        return (MISSED, "bold red") if declared and result.status not in (IGNORED,) else (" ", "")
    if status == "pass":
        return (MISSED, "bold red") if declared else (PASSES, "dim")
    glyph = {"error": "E", "timeout": "T"}.get(status, DECLARED_KILL if declared else EXTRA_KILL)
    return glyph, "green" if declared else "yellow"


# --------------------------------------------------------------------------- terminal


def _reference_cells(v: Verification) -> list[str]:
    """The reference's row of the matrix: per check, passed under every seed, failed, flaky or not run."""
    cells = []
    for cid in v.check_ids:
        statuses = v.reference.verdicts.get(cid, [])
        if not statuses:
            cells.append("[red]?[/]")
        elif all(s == "pass" for s in statuses):
            cells.append("[green]✓[/]")
        else:
            cells.append("[bold red]~[/]" if cid in v.reference.flaky else "[bold red]✗[/]")
    return cells


def _matrix(v: Verification):
    """The kill matrix as a rich table: the reference, one row per mutant, the kills per check."""
    from rich.markup import escape
    from rich.table import Table

    ref = v.reference
    table = Table(box=None, pad_edge=False, padding=(0, 1), show_edge=False)
    table.add_column("mutant", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for i, _ in enumerate(v.check_ids, start=1):
        table.add_column(str(i), justify="center", no_wrap=True)
    seeds = len(ref.seeds)
    ref_status = "[green]passes[/]" if ref.passed else "[bold red]FAILS[/]"
    table.add_row(f"[bold]reference[/] ×{seeds} seed{'s' if seeds > 1 else ''}", ref_status, *_reference_cells(v))
    for r in v.results:
        cells = []
        for cid in v.check_ids:
            glyph, style = cell(r, cid)
            cells.append(f"[{style}]{glyph}[/]" if style else glyph)
        style = _STATUS_STYLE.get(r.status, "")
        flag = "" if not r.missing and not r.unknown else " [bold red]![/]"
        table.add_row(escape(r.mutant.id), f"[{style}]{r.status}[/]{flag}", *cells)
    kills = [sum(r.checks.get(c, "pass") != "pass" for r in v.results) for c in v.check_ids]
    table.add_row("[dim]kills per check[/]", "", *(f"[dim]{k}[/]" for k in kills))
    return table


def _print_key(v: Verification, out) -> None:
    """The legend of the glyphs and the checks' names under their column numbers."""
    out.print(f"[dim]{LEGEND}[/]")
    width = max((len(c) for c in v.check_ids), default=0)
    columns = [f"{i:>2} {c:<{width}}" for i, c in enumerate(v.check_ids, start=1)]
    per_line = max(1, 100 // (width + 5))
    for start in range(0, len(columns), per_line):
        out.print("[dim]" + "  ".join(columns[start : start + per_line]) + "[/]")
    out.print()


def _print_score(v: Verification, out) -> None:
    """The reference's verdict, the mutation score with its counts, and the check runs left out."""
    from rich.markup import escape

    ref = v.reference
    if ref.error:
        out.print(f"[bold red]the reference cannot be graded:[/] {escape(ref.error)}")
    elif ref.passed:
        out.print(
            f"[green]reference passes all {len(v.check_ids)} checks under {len(ref.seeds)} seed(s)[/]"
            + ("" if not ref.flaky else f" [yellow](flaky: {', '.join(ref.flaky)})[/]")
        )
    counts = ", ".join(
        f"{v.count(s)} {s.lower()}"
        for s in (KILLED, SURVIVED, TIMEOUT, RUNTIME_ERROR, COMPILE_ERROR, IGNORED)
        if v.count(s)
    )
    colour = "green" if v.score == 100.0 and not v.problems else "bold red"
    out.print(
        f"[{colour}]mutation score {v.score:.1f}%[/] ({v.detected}/{v.valid} detected; {counts}) "
        f"in {v.seconds.get('total', 0.0):.1f} s"
    )
    left_out = sum(len(r.not_run) for r in v.results)
    if left_out:
        ran = sum(len(r.checks) for r in v.results)
        out.print(f"[dim]{left_out} of {left_out + ran} check runs on mutants left out: they reach none of the code "
                  f"the mutant changed (--all-checks runs them)[/]")


def _print_findings(v: Verification, out) -> None:
    """The checks that kill nothing, the undeclared kills, and the problems (or that there are none)."""
    from rich.markup import escape

    idle = v.idle_checks
    if idle:
        out.print(f"[yellow]checks that kill nothing:[/] {', '.join(idle)}")
    extras = [(r.mutant.id, r.extra) for r in v.results if r.extra]
    if extras:
        out.print("[dim]also killed by undeclared checks:[/]")
        for mid, extra in extras:
            out.print(f"[dim]  {mid}: {', '.join(extra)}[/]")
    problems = v.problems
    if problems:
        out.print(f"[bold red]{len(problems)} problem(s):[/]")
        for line in problems:
            out.print(f"  [red]-[/] {escape(line)}")
    else:
        out.print("[bold green]every mutant is killed by its declared checks[/]")


def render_terminal(v: Verification, out) -> None:
    """The kill matrix, its key, the score and the findings, printed on ``out`` (a rich console)."""
    out.print(_matrix(v))
    _print_key(v, out)
    _print_score(v, out)
    _print_findings(v, out)


# --------------------------------------------------------------------------- Stryker JSON


def _check_tests(check_ids: list[str]) -> dict[str, Any]:
    """The checks as Stryker 'tests', grouped by the module that defines them."""

    root = Path(__file__).resolve().parents[2]
    files: dict[str, Any] = {}
    for cid in check_ids:
        chk = REGISTRY[cid]
        fn = inspect.unwrap(chk.measure)
        test: dict[str, Any] = {"id": cid, "name": f"{cid}: {chk.title.render('en')}"}
        try:
            path = Path(inspect.getsourcefile(fn) or "").resolve()
            line = inspect.getsourcelines(fn)[1]
            key = str(path.relative_to(root)) if path.is_relative_to(root) else path.name
            test["location"] = {"start": {"line": max(line, 1), "column": 1}}
        except (OSError, TypeError):
            key = "checker/checks"
        files.setdefault(key, {"tests": []})["tests"].append(test)
    return files


def _mutant_entry(v: Verification, r: MutantResult) -> dict[str, Any]:
    m = r.mutant
    entry: dict[str, Any] = {"id": m.id, "mutatorName": m.operator, "status": r.status}
    if r.source is not None:
        entry["location"], entry["replacement"] = change_span(v.reference_source, r.source)
    else:
        entry["location"] = {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}
    entry["description"] = f"{m.title}. {m.description} Documented in: {m.documented_in}"
    reason = r.reason
    if r.missing and r.status not in (SURVIVED,):
        reason += f"\nnot killed by declared {', '.join(r.missing)}"
    if reason:
        entry["statusReason"] = reason
    if r.checks:
        entry["killedBy"] = r.killers
        entry["coveredBy"] = list(r.checks)  # the checks that reach the code it changed (checker.mutation.reach)
        entry["testsCompleted"] = len(r.checks)
        entry["duration"] = round(r.seconds * 1000, 1)
    return entry


def stryker_report(v: Verification) -> dict[str, Any]:
    versions = {}
    for name in ("torch", "libcst", "sklearn"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__version__", None):
            versions[name] = str(module.__version__)
    return {
        "$schema": SCHEMA_URL,
        "schemaVersion": "2",
        "thresholds": dict(THRESHOLDS),
        "projectRoot": str(Path(__file__).resolve().parents[2]),
        "files": {
            v.reference_name: {
                "language": "python",
                "source": v.reference_source,
                "mutants": [_mutant_entry(v, r) for r in v.results],
            }
        },
        "testFiles": _check_tests(v.check_ids),
        "performance": {
            k: round(v.seconds.get(k, 0.0) * 1000, 1) for k in ("setup", "initialRun", "mutation")
        },
        "framework": {"name": "kata mutants verify", "version": __version__, "dependencies": versions},
        "system": {
            "ci": bool(os.environ.get("CI")),
            "os": {"platform": sys.platform, "description": platform.platform()},
            "cpu": {"logicalCores": os.cpu_count() or 1},
        },
        "config": {
            **v.config,
            "reference": {
                "seeds": v.reference.seeds,
                "passed": v.reference.passed,
                "failing": v.reference.failing,
                "flaky": v.reference.flaky,
            },
            "declared": {r.mutant.id: list(r.mutant.killed_by) for r in v.results},
        },
    }


def write_json(v: Verification, path: str | Path) -> None:
    Path(path).write_text(dumps(stryker_report(v), indent=2) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- HTML

def _diff_rows(lines: list[str]) -> list[tuple[str, str]]:
    """(css class, text) for each line of a unified diff, without its two file headers."""
    out = []
    for line in lines[2:]:
        cls = "add" if line.startswith("+") else "del" if line.startswith("-") else (
            "hunk" if line.startswith("@@") else "")
        out.append((cls, line))
    return out


_CELL_CLASS = {"green": "c-declared", "yellow": "c-extra", "bold red": "c-missed", "dim": "c-pass"}


def render_html(v: Verification) -> str:
    """A self-contained page (inline CSS, no script, no network), from ``templates/verify.html.j2``."""
    import jinja2


    ref = v.reference
    errors = v.count(RUNTIME_ERROR) + v.count(COMPILE_ERROR)
    cards = [
        ("mutation score", f"{v.score:.1f}%", "ok" if v.score == 100.0 and not v.problems else "bad"),
        ("killed", v.count(KILLED) + v.count(TIMEOUT), "ok"),
        ("survived", v.count(SURVIVED), "bad" if v.count(SURVIVED) else "ok"),
        ("errors", errors, "bad" if errors else "ok"),
        ("ignored", v.count(IGNORED), "dim"),
        ("reference", f"{'passes' if ref.passed else 'FAILS'} ×{len(ref.seeds)}", "ok" if ref.passed else "bad"),
    ]
    checks = [(cid, REGISTRY[cid].title.render("en") if cid in REGISTRY else cid) for cid in v.check_ids]
    reference_cells = [bool(ref.verdicts.get(cid)) and all(s == "pass" for s in ref.verdicts[cid])
                       for cid in v.check_ids]
    rows = []
    for r in v.results:
        cells = []
        for cid in v.check_ids:
            glyph, style = cell(r, cid)
            cells.append({"glyph": glyph, "cls": _CELL_CLASS.get(style, ""), "check": cid,
                          "status": r.checks.get(cid, "not run")})
        diff = (_diff_rows(unified_diff(v.reference_source, r.source, r.mutant.id, v.reference_name))
                if r.source is not None else None)
        rows.append({"r": r, "m": r.mutant, "cells": cells, "flag": bool(r.missing or r.unknown), "diff": diff})
    kills = [sum(r.checks.get(c, "pass") != "pass" for r in v.results) for c in v.check_ids]
    env = jinja2.Environment(loader=jinja2.PackageLoader("checker", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("verify.html.j2").render(
        v=v, ref=ref, cards=cards, checks=checks, reference_cells=reference_cells, rows=rows, kills=kills,
        problems=v.problems, idle=v.idle_checks, reference_name=v.reference_name,
        seconds=f"{v.seconds.get('total', 0.0):.1f}",
    )


def write_html(v: Verification, path: str | Path) -> None:
    atomic_write(Path(path), render_html(v))
