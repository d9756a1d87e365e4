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
