"""Where in the project's code an instrumented event happened: the innermost frame that is the project's.

Observed, never read: the frame is taken from the running stack at the event (the ``step()`` call, the forward
pass, the ``backward()``, the ``scheduler.step()``); no source text is opened.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Place:
    """A line of the project's code: the file (as the user would open it), the line, the function."""

    path: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def _roots() -> tuple[str, ...]:
    """Folders whose frames are never the project's: torch, kata itself, the standard library, pytest."""
    roots = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
    for name in ("torch", "checker", "kata", "_pytest", "pluggy", "numpy", "click"):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            roots.add(str(Path(file).resolve().parent))
    return tuple(sorted(os.path.join(r, "") for r in roots))


_ROOTS: tuple[str, ...] | None = None


def shown(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it (what an editor opens), else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


def project_frame(skip: int = 1) -> Place | None:
    """The innermost frame of the running stack in the project's code, or None when there is none."""
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _roots()
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(_ROOTS):
            return Place(shown(filename), frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def place_of(fn) -> Place | None:
    """Where a function of the project is defined (its ``def`` line), from its code object."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        call = vars(type(fn)).get("__call__")
        code = getattr(call, "__code__", None)
    if code is None:
        return None
    return Place(shown(code.co_filename), code.co_firstlineno, code.co_name)


def traceback_place(exc: BaseException) -> Place | None:
    """The innermost frame of the project's code in an exception's traceback."""
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _roots()
    found = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(_ROOTS):
            found = Place(shown(filename), tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return found
