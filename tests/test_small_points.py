"""Issue 21's smaller points: wrapping under NO_COLOR, quoted practice answers, one count in header and footer,
a failing check's summary quoting the file's own figures."""

from __future__ import annotations

import io
import re

import pytest

from checker.base import term


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("no_color", ["1", ""])
def test_on_a_terminal_long_lines_wrap_between_words_with_or_without_colour(monkeypatch, no_color: str) -> None:
    stream = _Terminal()
    monkeypatch.setattr(term.sys, "stdout", stream)
    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setenv("COLUMNS", "40")
    words = [f"word{i:02d}" for i in range(30)]
    term.console().print(" ".join(words))
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).rstrip() for ln in stream.getvalue().splitlines()]
    assert len(lines) > 1 and all(len(ln) <= 40 for ln in lines), lines
    assert " ".join(lines).split() == words  # every word whole, on one line
    if no_color:
        assert "\x1b[" not in stream.getvalue()


def test_off_a_terminal_lines_are_not_wrapped(monkeypatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(term.sys, "stdout", stream)
    monkeypatch.setenv("COLUMNS", "40")
    text = " ".join(f"word{i:02d}" for i in range(30))
    term.console().print(text)
    assert stream.getvalue() == text + "\n"


def test_what_is_left_is_counted_as_the_header_counts(tmp_path, monkeypatch) -> None:
    """`Kata 1/33` in the header and `(32 left)` after the pass: both count within the kata's track."""
    from checker.learn import messages as M
    from checker.learn.session import open_session

    monkeypatch.delenv("KATA_KATAS_DIR", raising=False)
    session = open_session(str(tmp_path), "en")
    tracks = {k.track for k in session.katas}
    assert len(tracks) > 1 and len(session.katas) > 2
    for track in sorted(tracks):
        mine = [k for k in session.katas if k.track == track]
        first = mine[0]
        session.progress.start(first.slug, first.filename, "starter")
        session.progress.checked(first.slug, True)
        total = int(re.search(r"Kata 1/(\d+)", session.header(first))[1])
        message, params = session.after_pass(first)
        assert total == len(mine) and params["left"] == total - 1
        assert message in (M.AFTER_PASS, M.PRACTICE_AFTER)
        assert f"({total - 1} left)" in session.say(message, **params)
    # a track all solved while others are not: said so, with what is left elsewhere
    last = [k for k in session.katas if k.track == "moons"]
    for kata in last:
        session.progress.start(kata.slug, kata.filename, "starter")
        session.progress.checked(kata.slug, True)
    message, params = session.after_pass(last[-1])
    assert message is M.AFTER_TRACK_DONE and params["left"] == len(session.unsolved()) > 0


def test_the_curve_under_a_report_quotes_the_files_own_figures() -> None:
    """The line under `kata check`'s summary shows the train losses the file's fit reported (as `kata run` shows
    them), not the spy loss's means, which a file that computes its epoch loss wrongly never shows."""
    from types import SimpleNamespace

    from checker.learn.learning import loss_curve
    from checker.setting.tracks import get_track

    def report(measured: dict) -> SimpleNamespace:
        return SimpleNamespace(checks=[SimpleNamespace(id="loss.falls", measured=measured)])

    spy, own = [0.7, 0.6, 0.5], [0.35, 0.3, 0.25]
    line = loss_curve(report({"losses": spy, "reported": own}), "en", get_track())
    assert "(0.350 → 0.250)" in line and "0.700" not in line
    # a fit that reported no plain numbers (a tensor, nothing): the spy's means
    line = loss_curve(report({"losses": spy, "reported": [None, None, None]}), "en", get_track())
    assert "(0.700 → 0.500)" in line
    assert "(0.700 → 0.500)" in loss_curve(report({"losses": spy}), "en", get_track())
