"""Grading a class: every submission in a folder, each in its own sandboxed children, into a gradebook.

``kata grade DIR -o OUT`` is this module plus a progress bar. A submission that cannot be read or
compiled is recorded as ungradable (with the reason) without running anything; the rest are graded
together by ``checker.grading.grade``, a submission per job, ``workers`` jobs at a time, so a
submission that hangs or crashes costs its own time limit and nothing else.

Outputs:
- ``grades.csv``: ``submission, passed, score``, then one column per check id holding
  pass/fail/error/timeout, then ``error`` (why the file could not be graded, else empty).
  ``passed`` is ``true`` when every check passes; ``score`` is the fraction of checks passed (0-1).
- ``results.json``: a list with each submission's ``Report.to_json()`` plus ``submission`` and ``score``.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.grading import PASS, Report, Submission, grade
from checker.loading import LoopFileError, compile_source, read_source
from checker.sandbox import Limits
from checker.term import dumps

SUFFIXES = (".py", ".ipynb")
OUTPUT_FILES = ("grades.csv", "results.json")


def find_submissions(folder: Path) -> list[Path]:
    """The ``.py`` and ``.ipynb`` files directly in ``folder`` (not its subfolders, not hidden), sorted."""
    return sorted(
        p for p in folder.iterdir()
        if p.suffix in SUFFIXES and not p.name.startswith(".") and p.is_file()
    )


def existing_outputs(out: Path) -> list[Path]:
    return [out / name for name in OUTPUT_FILES if (out / name).exists()]


def prepare(paths: Sequence[Path]) -> tuple[list[Submission], list[Report]]:
    """Read and compile each file (running nothing): gradable submissions, and reports for the rest."""
    submissions, ungradable = [], []
    for path in paths:
        try:
            source, filename = read_source(path)
            compile_source(source, filename)
        except LoopFileError as exc:
            ungradable.append(Report(file=str(path), error_kind=exc.kind, error=exc.message))
            continue
        submissions.append(Submission(source, filename))
    return submissions, ungradable


def grade_folder(
    paths: Sequence[Path],
    lab: Any,
    *,
    check_ids: Sequence[str],
    workers: int = 2,
    timeout: float | None = None,
    lang: str = "en",
    on_report: Callable[[Report], None] | None = None,
) -> list[Report]:
    """Grade every file; the reports come back in the order of ``paths``."""
    submissions, ungradable = prepare(paths)
    for report in ungradable:
        if on_report:
            on_report(report)
    limits = Limits(step_timeout=timeout) if timeout else Limits()
    graded = grade(submissions, lab, check_ids=check_ids, workers=workers, split=1, lang=lang,
                   limits=limits, on_report=on_report)
    by_file = {r.file: r for r in [*graded, *ungradable]}
    return [by_file[str(p)] for p in paths]


def write_grades_csv(reports: Sequence[Report], check_ids: Sequence[str], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["submission", "passed", "score", *check_ids, "error"])
        for report in reports:
            statuses = {c.id: c.status for c in report.checks}
            writer.writerow([
                Path(report.file).name,
                "true" if report.passed else "false",
                f"{report.score:.4f}",
                *(statuses.get(cid, "") for cid in check_ids),
                (report.error or "").strip(),
            ])


def results_json(reports: Sequence[Report]) -> list[dict[str, Any]]:
    return [{"submission": Path(r.file).name, "score": round(r.score, 4), **r.to_json()} for r in reports]


def write_results_json(reports: Sequence[Report], path: Path) -> None:
    path.write_text(dumps(results_json(reports), indent=2) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class ClassSummary:
    total: int
    passed: int
    failed: int
    ungradable: int
    failing_checks: list[tuple[str, int, Counter]]
    """(check id, submissions it did not pass, their statuses), most failed first; failed checks only."""


def summarize(reports: Sequence[Report]) -> ClassSummary:
    counts: dict[str, Counter] = {}
    for report in reports:
        for res in report.checks:
            if res.status != PASS:
                counts.setdefault(res.id, Counter())[res.status] += 1
    failing = sorted(((cid, sum(c.values()), c) for cid, c in counts.items()), key=lambda t: (-t[1], t[0]))
    ungradable = sum(r.error is not None for r in reports)
    passed = sum(r.passed for r in reports)
    return ClassSummary(len(reports), passed, len(reports) - passed - ungradable, ungradable, failing)
