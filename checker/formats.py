"""Rendering a grading report: text for people, JSON for scripts."""

from __future__ import annotations

import json

from checker.grading import PASS, Report
from checker.i18n import Message

SUMMARY = Message(en="{passed}/{total} checks pass", es="{passed}/{total} comprobaciones correctas")
ALL_PASS = Message(en="every check passes", es="todas las comprobaciones pasan")
CANNOT_GRADE = Message(en="cannot grade {file}", es="no se puede evaluar {file}")
OUTPUT_DROPPED = Message(
    en="(your loop printed {dropped:,} more bytes, not shown)",
    es="(tu bucle imprimió {dropped:,} bytes más, no mostrados)",
)

_MARKS = {"pass": ("✓", "green"), "fail": ("✗", "red"), "error": ("!", "red"), "timeout": ("⧗", "red")}


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, default=str)


def render_text(report: Report, out, lang: str = "en", verbose: bool = False) -> None:
    """Print a report on a rich console: a line per check, the failures' messages, a summary."""
    from rich.markup import escape

    if report.error is not None:
        out.print(f"[bold red]{escape(CANNOT_GRADE.render(lang, file=report.file))}[/]")
        out.print(escape(report.error))
        return
    width = max((len(c.id) for c in report.checks), default=0)
    for res in report.checks:
        mark, colour = _MARKS.get(res.status, ("?", "red"))
        out.print(f"[{colour}]{mark}[/] {res.id:<{width}}  {escape(res.title)}")
        if res.status != PASS or verbose:
            for line in res.message.splitlines():
                out.print(f"    [dim]{escape(line)}[/]" if res.status == PASS else f"    {escape(line)}")
    n_pass = sum(c.passed for c in report.checks)
    summary = SUMMARY.render(lang, passed=n_pass, total=len(report.checks))
    colour = "green" if report.passed else "red"
    out.print(f"[bold {colour}]{summary}[/]" + (f" — {ALL_PASS.render(lang)}" if report.passed else ""))
    if report.output_dropped:
        out.print(f"[dim]{OUTPUT_DROPPED.render(lang, dropped=report.output_dropped)}[/]")
