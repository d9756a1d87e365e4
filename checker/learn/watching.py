"""`kata watch`: re-check a file on every save; after the current kata passes, move on to the next.

torch stays imported in this process, so a re-check after a save starts at once. Passes are
recorded as `kata check` records them (``Session.record_check``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from rich.markup import escape

from checker.base.errors import UsageProblem
from checker.catalogue.katas import Kata
from checker.engine.checking import check_ids
from checker.engine.formats import render_text
from checker.engine.request import CheckRequest
from checker.learn import messages as M
from checker.learn.check import KATA_TRACK, check, track_of
from checker.learn.learning import loss_curve, not_yet, out, present, story_curve, tell_data, what_next
from checker.learn.session import Session, choose_next, open_kata, place_data, shown_path
from checker.setting.lab import prepared_lab


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

    def __init__(self, session: Session, target: Path, kata: Kata | None, request: CheckRequest, stay: bool,
                 settings_of=None):
        self.session, self.target, self.kata, self.stay, self.request = session, target, kata, stay, request
        self.settings_of = settings_of  # reads a kata's `kata run` flags: its curve is its story's run
        self.out = out()
        self.labs: dict[tuple[str, str], object] = {}
        if kata is None or kata.practice is None:
            check_ids(request, self._track())  # a bad --only: exit 2 now, not on every save
            self._lab()  # torch imported now, before the first save

    def _request(self) -> CheckRequest:
        """The request for the watched file as it is now."""
        return replace(self.request, path=str(self.target))

    def _track(self):
        """The watched file's track: the kata's, else --track, else the one its folder belongs to."""
        return track_of(self._request(), self.kata, str(self.session.workdir))

    def _lab(self):
        """The lab of the watched file's track, made once (the service reuses it)."""
        track = self._track()
        key = (self.request.device, track.id)
        if key not in self.labs:
            self.labs[key] = prepared_lab(self.request.device, track)
        return self.labs[key]

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

            def body() -> None:
                print_practice(session, self.kata, verdicts, exercise, out)
                if not passed:  # as `kata check` ends a wrong prediction
                    rec = session.progress.record(self.kata.slug)
                    session.tell(out, M.PRACTICE_NOT_YET, "yellow", run=session.run_command(self.kata),
                                 shown=rec.hints, total=len(self.kata.hints))

            return passed, summary, body

        try:
            outcome = check(self._request(), session=session, kata=self.kata, labs=self.labs)
        except UsageProblem as exc:
            problem = exc.message
            return None, self._cannot, lambda: out.print(escape(problem))
        report = outcome.report

        def body() -> None:
            out.print("")
            if outcome.note:  # graded against the track the file follows: said first
                out.print(escape(outcome.note))
            render_text(report, out, session.lang, verbose=self.request.verbose)
            curve = ((story_curve(session, self.kata, self.target, self.settings_of) if self.kata else None)
                     or loss_curve(report, session.lang, outcome.track))
            if curve:
                out.print(f"[dim]{escape(curve)}[/]")
            if outcome.hint:
                out.print(escape(outcome.hint))
            if outcome.only and report.passed:
                session.tell(out, M.PARTIAL, "yellow")
            elif self.kata is not None and outcome.gradable and not report.passed:
                not_yet(session, self.kata, out)  # as `kata check` ends a failing check

        return (outcome.solved if outcome.gradable else None), (
            lambda seconds: status_line(report, seconds, session.lang)), body

    def _cannot(self, seconds: float) -> tuple[str, str]:
        return f"! {M.STATUS_CANNOT.render(self.session.lang)} — {seconds:.1f} s", "red"

    def _move_on(self) -> Path | None:
        """After a pass: open the next unsolved kata and watch its file (unless --stay)."""
        session, out = self.session, self.out
        left = len(session.unsolved())
        nxt, _ = choose_next(session, skip=False) if left else (None, False)
        if self.stay or nxt is None:
            message, params = session.after_pass(self.kata)
            session.tell(out, message, **params)
            return None

        # a notebook kata is followed by a notebook (a practice kata's answers file has no notebook form)
        notebook = self.target.suffix == ".ipynb" and nxt.practice is None
        path, _ = open_kata(session, nxt, filename=f"{nxt.slug}.ipynb" if notebook else None)
        out.print("")
        present(session, nxt, out)
        session.tell(out, M.WATCH_MOVED, "cyan", path=shown_path(path))
        tell_data(session, place_data(session, nxt), out)  # a course's data file, as `kata next` puts it
        what_next(session, nxt, out)
        self.kata, self.target = nxt, path
        if nxt.practice is None:
            self._lab()
        return path


def watch(session: Session, target: Path, kata: Kata | None, request: CheckRequest, *, max_checks: int | None,
          stay: bool, settings_of=None) -> None:
    """Check ``target`` now, then again on every save, until Ctrl-C (or ``max_checks`` re-checks).

    ``request``: how each save is checked (device, --only, --timeout, --secret, --track; its path is the
    watched file's), by the same service as `kata check` (``checker.learn.check.check``)."""
    if not target.exists():
        raise UsageProblem(session.say(M.FILE_MISSING, path=shown_path(target)))
    if kata is None and target.suffix == ".toml":
        raise UsageProblem(session.say(M.PRACTICE_ANYFILE, path=shown_path(target)))
    if kata is not None and request.track and request.track != kata.track:
        raise UsageProblem(KATA_TRACK.render(session.lang, track=request.track, kata=kata.slug, own=kata.track))
    w = Watch(session, target, kata, request, stay, settings_of)
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
