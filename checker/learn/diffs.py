"""Differences between two versions of a loop: a unified diff drawn by rich, and the functions that changed.

A notebook is compared as its code cells (``# %%`` then the cell's lines), never as JSON: its outputs,
execution counts, cell ids and the cells' numbers are no part of the comparison.
"""

from __future__ import annotations

import ast
import difflib
import re

from rich.syntax import Syntax

from checker.base.errors import LoopFileError
from checker.base.i18n import Message
from checker.loopfile.notebook import notebook_to_source

CELL_MARKER = re.compile(r"^# %% cell \d+$")

DIFF_CUT = Message(en="… {n} more diff lines", es="… {n} líneas más de diferencias")


def as_code(text: str, name: str) -> str:
    """What a person reads as the file's code: a notebook's code cells, any other file as it is."""
    if not name.endswith(".ipynb"):
        return text

    try:
        source = notebook_to_source(text, name)
    except LoopFileError:
        return text
    # the cells' numbers shift when a cell is added or removed above: the diff shows code, not renumbering
    return "\n".join(CELL_MARKER.sub("# %%", line) for line in source.split("\n"))


def unified(a: str, b: str, a_name: str, b_name: str, context: int = 2) -> list[str]:
    """The unified diff of two texts (notebooks compared by their code cells), as lines."""
    a, b = as_code(a, a_name), as_code(b, b_name)
    return [line if line.endswith("\n") else line + "\n"
            for line in difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                             a_name, b_name, n=context)]


def print_diff(lines: list[str], out, *, limit: int = 80, lang: str = "en") -> int:
    """Draw a unified diff with rich (``Syntax(..., "diff")``), at most ``limit`` lines; lines left out."""
    if not lines:
        return 0
    shown = "".join(lines[:limit]).rstrip("\n")
    out.print(Syntax(shown, "diff", theme="ansi_dark", background_color="default", word_wrap=False))
    cut = max(len(lines) - limit, 0)
    if cut:
        out.print(f"[dim]{DIFF_CUT.render(lang, n=cut)}[/]")
    return cut


def changed_functions(before: str, after: str) -> list[tuple[str, int, int]]:
    """Top-level functions of ``after`` whose text differs from ``before``'s: (name, first, last line)."""

    def functions(source: str) -> dict[str, tuple[str, int, int]]:
        found = {}
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                text = ast.get_source_segment(source, node) or ""
                found[node.name] = (text, first, node.end_lineno or first)
        return found

    old, new = functions(before), functions(after)
    return [(name, first, last) for name, (text, first, last) in new.items()
            if name not in old or old[name][0] != text]


def changed_lines(before: str, after: str) -> set[int]:
    """Line numbers (from 1) of ``after`` that differ from ``before``."""
    found: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.update(range(j1 + 1, j2 + 1))
    return found
