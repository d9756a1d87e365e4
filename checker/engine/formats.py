"""Rendering a grading report: text for people, JSON for scripts, Gradescope's results.json, JUnit XML."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from checker import __version__
from checker.base.i18n import Message
from checker.base.term import dumps
from checker.engine.grading import PASS, Report

SUMMARY = Message(en="{passed}/{total} checks pass", es="{passed}/{total} comprobaciones correctas")
ALL_PASS = Message(en="every check passes", es="todas las comprobaciones pasan")
CANNOT_GRADE = Message(en="cannot grade {file}", es="no se puede evaluar {file}")
OUTPUT_DROPPED = Message(
    en="(your loop printed {dropped:,} more bytes, not shown)",
    es="(tu bucle imprimió {dropped:,} bytes más, no mostrados)",
)

POINTS = Message(en="course points: {points}/{max}", es="puntos del curso: {points}/{max}")
HELD_CHECK = Message(
    en="held for review: this check passed, but the file is held for a person to read, so it scores 0 for now",
    es="retenido para revisión: esta comprobación pasó, pero el archivo queda retenido para que lo lea una persona, "
       "así que por ahora puntúa 0",
)
HELD = Message(en="held for review: {reasons}", es="retenido para revisión: {reasons}")
HELD_TITLE = Message(
    en="held for review: the file does what no training loop needs, so it is not reported as passing",
    es="retenido para revisión: el archivo hace algo que ningún bucle de entrenamiento necesita, "
    "así que no se da por aprobado",
)


def integrity(report: Report) -> list[str]:
    """The integrity note's reasons (checker.engine.integrity), [] when none."""
    return list(getattr(report, "integrity", None) or [])


def held_for_review(report: Report) -> bool:
    held = getattr(report, "held_for_review", None)
    return bool(integrity(report)) if held is None else bool(held)


def passed(report: Report) -> bool:
    """Whether to show the report as passing: never while it is held for review."""
    return report.passed and not held_for_review(report)


_MARKS = {"pass": ("✓", "green"), "fail": ("✗", "red"), "error": ("!", "red"), "timeout": ("⧗", "red")}


def points(report: Report, weights: Mapping[str, float] | None) -> tuple[float, float]:
    """(points earned, points possible): each check worth its weight (else one point); none while held."""
    worth = [(weights or {}).get(c.id, POINTS_PER_CHECK) for c in report.checks]
    earned = 0.0 if held_for_review(report) else sum(w for w, c in zip(worth, report.checks, strict=True)
                                                     if c.passed)
    possible = sum(weights.values()) if weights else float(len(report.checks))
    return earned, possible


def render_json(report: Report, weights: Mapping[str, float] | None = None) -> str:
    data = report.to_json()
    held = held_for_review(report)
    if held:  # whatever Report.to_json says, a held report is not a pass
        data["passed"] = False
        data.setdefault("integrity", integrity(report))
        data["held_for_review"] = True
    if weights is not None:
        earned, possible = points(report, weights)
        data["points"], data["max_points"] = earned, possible
        for check in data.get("checks", []):
            if isinstance(check, dict) and check.get("id") in weights:
                check["max_points"] = weights[check["id"]]
                check["points"] = weights[check["id"]] if check.get("status") == PASS and not held else 0.0
                if held and check.get("status") == PASS:
                    check["held_for_review"] = True
    return dumps(data, indent=2)


def render_text(report: Report, out, lang: str = "en", verbose: bool = False,
                weights: Mapping[str, float] | None = None) -> None:
    """Print a report on a rich console: a line per check, the failures' messages, a summary."""
    from rich.markup import escape

    if report.error is not None:
        out.print(f"[bold red]{escape(CANNOT_GRADE.render(lang, file=report.file))}[/]")
        out.print(escape(report.error))
        _render_held(report, out, lang)
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
    ok = passed(report)
    colour = "green" if ok else "red"
    out.print(f"[bold {colour}]{summary}[/]" + (f" — {ALL_PASS.render(lang)}" if ok else ""))
    if weights is not None:
        earned, possible = points(report, weights)
        out.print(POINTS.render(lang, points=f"{earned:g}", max=f"{possible:g}"))
    if report.output_dropped:
        out.print(f"[dim]{OUTPUT_DROPPED.render(lang, dropped=report.output_dropped)}[/]")
    _render_held(report, out, lang)


def _render_held(report: Report, out, lang: str) -> None:
    from rich.markup import escape

    if held_for_review(report):
        out.print(f"[bold yellow]{escape(HELD_TITLE.render(lang))}[/]")
        for reason in integrity(report):
            out.print(f"    {escape(reason)}")


# ---------------------------------------------------------------------------------------------
# Gradescope: the autograder's results.json
# (https://gradescope-autograders.readthedocs.io/en/latest/specs/ "Output format"): a top-level
# score and output, and one test per check with name, status, score, max_score and output.

LEARNER_OUTPUT = Message(en="What your loop printed:", es="Lo que imprimió tu bucle:")
STATUS_NOTES = {
    "error": Message(en="(the check could not finish: an error)",
                     es="(la comprobación no pudo terminar: un error)"),
    "timeout": Message(en="(the check could not finish: out of time)",
                       es="(la comprobación no pudo terminar: se acabó el tiempo)"),
}
POINTS_PER_CHECK = 1.0


def _learner_output(report: Report, lang: str) -> str:
    text = report.output.strip("\n")
    if report.output_dropped:
        text += ("\n" if text else "") + OUTPUT_DROPPED.render(lang, dropped=report.output_dropped)
    return f"{LEARNER_OUTPUT.render(lang)}\n{text}" if text else ""


def _check_output(res, lang: str) -> str:
    note = STATUS_NOTES.get(res.status)
    return f"{note.render(lang)}\n{res.message}" if note else res.message


REDUCED = Message(
    en="Graded with reduced isolation (the platform refused a sandbox layer): {why}",
    es="Evaluado con aislamiento reducido (la plataforma rechazó una capa del aislamiento): {why}",
)


def isolation(report: Report) -> dict:
    """``{"isolation": "full"|"reduced", "isolation_why": [...]}`` where the children reported it, else {}."""
    if report.isolation is None:
        return {}
    return {"isolation": report.isolation, **({"isolation_why": list(report.isolation_why)}
                                               if report.isolation_why else {})}


def gradescope_results(report: Report, lang: str = "en", weights: Mapping[str, float] | None = None) -> dict:
    """The results.json object for one report; a file that cannot be graded scores 0 with the reason.

    ``weights``: check id -> points (a course's [points]): each test's max_score; else one point each. A report
    held for review scores 0, and each check that passed says it is held (status failed, not green)."""

    held = held_for_review(report)
    note = HELD.render(lang, reasons="; ".join(integrity(report))) if held else ""
    review = {"held_for_review": True, "integrity": integrity(report)} if held else {}
    review.update(isolation(report))
    if report.isolation == "reduced":
        reduced = REDUCED.render(lang, why="; ".join(report.isolation_why))
        note = f"{note}\n\n{reduced}" if note else reduced
    if report.error is not None:
        output = f"{CANNOT_GRADE.render(lang, file=report.file)}\n{report.error}"
        learner = _learner_output(report, lang)
        return {
            "score": 0.0,
            "output": (f"{note}\n\n" if note else "") + output + (f"\n\n{learner}" if learner else ""),
            "output_format": "text",
            "tests": [],
            "extra_data": {"kata_version": __version__, "file": report.file, "error_kind": report.error_kind,
                           **review},
        }
    def worth(res) -> float:
        return (weights or {}).get(res.id, POINTS_PER_CHECK)

    tests = [
        {
            "name": f"{res.id}: {res.title}",
            "name_format": "text",
            "number": str(i),
            "status": "passed" if res.passed and not held else "failed",
            "score": worth(res) if res.passed and not held else 0.0,
            "max_score": worth(res),
            "output": (f"{HELD_CHECK.render(lang)}\n\n" if held and res.passed else "") + _check_output(res, lang),
            "output_format": "text",
            "tags": [res.family],
            "extra_data": {"check": res.id, "status": res.status, **({"held_for_review": True} if held else {})},
        }
        for i, res in enumerate(report.checks, start=1)
    ]
    n_pass = sum(res.passed for res in report.checks)
    summary = SUMMARY.render(lang, passed=n_pass, total=len(report.checks))
    learner = _learner_output(report, lang)
    earned, _possible = points(report, weights)
    return {
        "score": earned,
        "execution_time": round(sum(res.seconds for res in report.checks)),
        "output": (f"{note}\n\n" if note else "") + summary + (f"\n\n{learner}" if learner else ""),
        "output_format": "text",
        "tests": tests,
        "extra_data": {"kata_version": __version__, "file": report.file, "passed": passed(report), **review},
    }


def render_gradescope(report: Report, lang: str = "en", weights: Mapping[str, float] | None = None) -> str:
    return json.dumps(gradescope_results(report, lang, weights), indent=2, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# JUnit XML, as Jenkins, GitLab and GitHub test reporters read it: <testsuites> holding one
# <testsuite> (counts of tests, failures, errors), a <testcase classname=family name=id> per check
# with <failure> for a failed check and <error> for one that raised or ran out of time; the
# learner's printing goes to the suite's <system-out>.

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: terminal colour codes and other control characters removed."""
    return _NOT_XML.sub("", _ANSI.sub("", text))


def _first_line(text: str, limit: int = 200) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def render_junit(report: Report, lang: str = "en", weights: Mapping[str, float] | None = None) -> str:
    import xml.etree.ElementTree as ET
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "")
    total_time = sum(res.seconds for res in report.checks)
    suite = ET.Element("testsuite", {"name": f"kata check {report.file}", "timestamp": now})
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "file", "value": _xml_text(report.file)})
    failures = errors = 0
    held = held_for_review(report)
    if weights is not None:
        earned, possible = points(report, weights)
        ET.SubElement(props, "property", {"name": "points", "value": f"{earned:g}"})
        ET.SubElement(props, "property", {"name": "max_points", "value": f"{possible:g}"})
    if report.error is not None:
        errors = 1
        case = ET.SubElement(suite, "testcase", {"classname": "kata", "name": "load", "time": "0.000"})
        headline = f"{CANNOT_GRADE.render(lang, file=report.file)}: {_first_line(report.error)}"
        error = ET.SubElement(case, "error", {
            "type": report.error_kind or "error", "message": _xml_text(_first_line(headline)),
        })
        error.text = _xml_text(report.error)
        tests = 1
    else:
        for res in report.checks:
            case = ET.SubElement(suite, "testcase", {
                "classname": res.family, "name": res.id, "time": f"{res.seconds:.3f}",
            })
            if weights is not None:  # the schema allows no properties in a testcase: the suite's name each check
                worth = weights.get(res.id, POINTS_PER_CHECK)
                got = worth if res.passed and not held else 0
                ET.SubElement(props, "property", {"name": f"points:{res.id}", "value": f"{got:g}/{worth:g}"})
            if res.passed:
                continue
            kind = "failure" if res.status == "fail" else "error"
            if kind == "failure":
                failures += 1
            else:
                errors += 1
            attrs = {"type": res.status, "message": _xml_text(_first_line(res.message))}
            element = ET.SubElement(case, kind, attrs)
            element.text = _xml_text(f"{res.title}\n{_check_output(res, lang)}")
        tests = len(report.checks)
    if held:
        failures += 1
        tests += 1
        case = ET.SubElement(suite, "testcase", {"classname": "kata", "name": "integrity", "time": "0.000"})
        reasons = integrity(report)
        failure = ET.SubElement(case, "failure", {
            "type": "held_for_review",
            "message": _xml_text(_first_line(HELD.render(lang, reasons="; ".join(reasons)))),
        })
        failure.text = _xml_text("\n".join([HELD_TITLE.render(lang), *reasons]))
        ET.SubElement(props, "property", {"name": "held_for_review", "value": "true"})
    learner = report.output
    if report.output_dropped:
        learner += ("\n" if learner else "") + OUTPUT_DROPPED.render(lang, dropped=report.output_dropped)
    if learner:
        ET.SubElement(suite, "system-out").text = _xml_text(learner)
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors)}
    suite.attrib.update({**counts, "skipped": "0", "time": f"{total_time:.3f}"})
    root = ET.Element("testsuites", {"name": "kata", **counts, "time": f"{total_time:.3f}"})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


# --------------------------------------------------------------------------- cells that cannot run

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MARKDOWN = re.compile(r"([\\`\[\]<>|])")


def csv_cell(text: object) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with ``= + - @``, a tab or a CR gets a leading
    ``'`` (OWASP's rule against CSV injection), so Excel and LibreOffice never evaluate it as a formula."""
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def md_text(text: str) -> str:
    """Text from a file name or a student's folder, safe inside Markdown: every character that could open a link,
    an image, an autolink, HTML, code or a table cell (``\\ ` [ ] < > |``) escaped with a backslash; line breaks
    become spaces."""
    return _MARKDOWN.sub(r"\\\1", " ".join(str(text).splitlines()))


def md_lines(text: str) -> list[str]:
    """``text``'s lines, each escaped as ``md_text`` escapes a name (a message that quotes a file name)."""
    return [_MARKDOWN.sub(r"\\\1", line) for line in str(text).splitlines()]


def md_code(text: str) -> str:
    """``text`` as a fenced code block, its fence longer than any run of backticks inside: shown, never rendered."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def one_line(text: str, limit: int = 500) -> str:
    """``text`` on one line: its non-blank lines joined by `` | `` (a syntax error's caret line left out), cut at
    ``limit`` characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
    joined = " | ".join(lines)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."
