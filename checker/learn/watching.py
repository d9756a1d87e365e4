"""`kata watch`: re-check a file on every save; after the current kata passes, move on to the next.

torch stays imported in this process, so a re-check after a save starts at once. Passes are
recorded as `kata check` records them (``Session.record_check``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from rich.markup import escape

from checker.base.errors import UsageProblem
from checker.catalogue.katas import Kata
from checker.grade.formats import render_text
from checker.grade.grading import grade_one
from checker.learn import messages as M
from checker.learn.learning import loss_curve, out, present, what_next
from checker.learn.session import Session, choose_next, open_kata, shown_path
from checker.loopfile.loading import read_loop_file
from checker.setting.lab import prepared_lab
from checker.setting.tracks import track_named


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def watch_loop(path: Path, batches: Iterable[Iterable[tuple[object, str]]],
               recheck: Callable[[], Path | None], *, max_checks: int | None = None,
               on_missing: Callable[[], None] | None = None) -> int:
    """Call ``recheck()`` whenever the watched file changes; the number of re-checks done.

    ``batches`` yields sets of ``(change, path)`` (what watchfiles yields; an empty set is a
    periodic tick). A batch naming the file triggers a re-check, and so does a tick that finds
    the file's content changed (a save made before the watcher was ready is not lost).
    ``recheck`` may return another path: the file watched from then on (the next kata's).
    Stops after ``max_checks`` re-checks when given.
    """
    target = os.path.realpath(path)
    last = _digest(path)
    done = 0
    if max_checks is not None and max_checks <= 0:
        return 0
    for batch in batches:
        named = any(os.path.realpath(p) == target for _, p in batch)
        digest = _digest(Path(target))
        if digest is None:
            if named and on_missing:
                on_missing()
            last = None
            continue
        if not named and digest == last:
            continue
        last = digest
        moved = recheck()
        done += 1
        if moved is not None:
            target, last = os.path.realpath(moved), _digest(moved)
        if max_checks is not None and done >= max_checks:
            break
    return done


def status_line(report, seconds: float, lang: str) -> tuple[str, str]:
    """The watch's one-line summary and its colour."""
    if report.exit_code == 2:  # the file could not be graded
        return f"! {M.STATUS_CANNOT.render(lang)} — {seconds:.1f} s", "red"
    n_pass = sum(c.status == "pass" for c in report.checks)
    total = len(report.checks)
    if report.passed:
        return f"✓ {n_pass}/{total} — {M.STATUS_PASS.render(lang)} — {seconds:.1f} s", "green"
    failing = [c.id for c in report.checks if c.status != "pass"]
    more = M.STATUS_MORE.render(lang, n=len(failing) - 1) if len(failing) > 1 else ""
    return f"✗ {n_pass}/{total} — {M.STATUS_FAILS.render(lang, id=failing[0])}{more} — {seconds:.1f} s", "red"


class Watch:
    """One `kata watch`: the file watched, the kata it belongs to (if any), how to re-check it."""

    def __init__(self, session: Session, target: Path, kata: Kata | None, device: str, stay: bool):
        self.session, self.target, self.kata, self.stay, self.device = session, target, kata, stay, device
        self.out = out()
        self.labs: dict[str, object] = {}
        if kata is None or kata.practice is None:
            self._lab()  # torch imported now, before the first save

    def _lab(self):
        """The lab of the watched file's track (the kata's, else the one its folder belongs to), made once."""
        track = self.kata.setting if self.kata is not None else track_named(None, str(self.target))
        if track.id not in self.labs:
            self.labs[track.id] = prepared_lab(self.device, track)
        return self.labs[track.id]

    def recheck(self) -> Path | None:
        """Check the file once and print the outcome; the next kata's file when it moved on."""
        session, out = self.session, self.out
        started = time.perf_counter()
        passed, summary, body = self._grade()
        seconds = time.perf_counter() - started
        out.clear()
        stamp = datetime.now().strftime("%H:%M:%S")
        line, colour = summary(seconds)
        out.print(f"[bold {colour}]{escape(line)}[/]  [dim]{stamp} {escape(shown_path(self.target))}[/]")
        body()
        moved = None
        if self.kata is not None and passed is not None:
            newly = session.record_check(self.kata, passed)
            if newly:
                session.tell(out, M.SOLVED_NOW, "bold green", path=shown_path(session.progress.path))
            if passed:
                moved = self._move_on()
        session.tell(out, M.WATCHING, "dim", path=shown_path(self.target))
        return moved

    def _grade(self):
        """(passed or None when ungradable, summary(seconds) -> (line, colour), body() printing details)."""
        session, out = self.session, self.out
        if self.kata is not None and self.kata.practice is not None:
            from checker.learn.learning import practice_verdicts, print_practice

            try:
                verdicts, exercise = practice_verdicts(session, self.kata)
            except UsageProblem as exc:
                problem = exc.message
                return None, self._cannot, lambda: out.print(escape(problem))
            passed = all(v.status == "pass" for v in verdicts)
            right = sum(v.status == "pass" for v in verdicts)

            def summary(seconds: float) -> tuple[str, str]:
                text = session.say(M.PRACTICE_SUMMARY, right=right, total=len(verdicts))
                return f"{'✓' if passed else '✗'} {text} — {seconds:.1f} s", "green" if passed else "red"

            return passed, summary, lambda: print_practice(session, self.kata, verdicts, exercise, out)

        try:
            source, filename = read_loop_file(str(self.target), session.lang)
        except UsageProblem as exc:
            problem = exc.message
            return None, self._cannot, lambda: out.print(escape(problem))
        lab = self._lab()
        report = grade_one(source, filename, lab, lang=session.lang)

        def body() -> None:
            out.print("")
            render_text(report, out, session.lang)
            curve = loss_curve(report, session.lang, lab.track)
            if curve:
                out.print(f"[dim]{escape(curve)}[/]")

        return (None if report.exit_code == 2 else report.passed), (
            lambda seconds: status_line(report, seconds, session.lang)), body

    def _cannot(self, seconds: float) -> tuple[str, str]:
        return f"! {M.STATUS_CANNOT.render(self.session.lang)} — {seconds:.1f} s", "red"

    def _move_on(self) -> Path | None:
        """After a pass: open the next unsolved kata and watch its file (unless --stay)."""
        session, out = self.session, self.out
        left = len(session.unsolved())
        nxt, _ = choose_next(session, skip=False) if left else (None, False)
        if self.stay or nxt is None:
            session.tell(out, M.AFTER_PASS if left else M.AFTER_PASS_LAST, left=left)
            return None

        path, _ = open_kata(session, nxt)
        out.print("")
        present(session, nxt, out)
        session.tell(out, M.WATCH_MOVED, "cyan", path=shown_path(path))
        what_next(session, nxt, out)
        self.kata, self.target = nxt, path
        if nxt.practice is None:
            self._lab()
        return path


def watch(session: Session, target: Path, kata: Kata | None, *, device: str, max_checks: int | None,
          stay: bool) -> None:
    """Check ``target`` now, then again on every save, until Ctrl-C (or ``max_checks`` re-checks)."""
    if not target.exists():
        raise UsageProblem(session.say(M.FILE_MISSING, path=shown_path(target)))
    if kata is None and target.suffix == ".toml":
        raise UsageProblem(session.say(M.PRACTICE_ANYFILE, path=shown_path(target)))
    w = Watch(session, target, kata, device, stay)
    try:
        w.recheck()
        if max_checks == 0:
            return
        import watchfiles

        folder = str(w.target.resolve().parent)
        batches = watchfiles.watch(folder, yield_on_timeout=True, rust_timeout=1000, debounce=400,
                                   watch_filter=lambda _change, p: os.path.basename(p) == w.target.name)
        watch_loop(w.target, batches, w.recheck, max_checks=max_checks,
                   on_missing=lambda: session.tell(w.out, M.WATCH_WAITING, "yellow", path=shown_path(w.target)))
    except KeyboardInterrupt:
        w.out.print("")
        session.tell(w.out, M.WATCH_STOPPED)
