"""Output: a rich console that turns plain off a terminal or with NO_COLOR, small charts, strict JSON."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_BLOCKS = "▁▂▃▄▅▆▇█"


def console(stderr: bool = False) -> Console:
    from rich.console import Console  # heavy (70 ms): only a command that prints pays it

    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    plain = bool(os.environ.get("NO_COLOR")) or not tty
    # off a terminal (a pipe, a file) lines are never wrapped; on one, they wrap between words at its width,
    # with NO_COLOR as without (only the colours and styles go)
    width = None if not plain else (shutil.get_terminal_size().columns if tty else 200)
    return Console(
        file=stream, no_color=plain, highlight=False, emoji=False,
        force_terminal=False if plain else None, soft_wrap=not tty, width=width,
    )


FLAT = "▄"
"""The block a flat chart is drawn with: half height, neither a floor nor a peak."""


def sparkline(values: Sequence[float], width: int = 60, digits: int = 4) -> str:
    """A one-line chart of ``values`` (resampled to at most ``width`` points); NaN and inf show as '?'.

    Values that print alike to ``digits`` decimals (as kata's tables print them) draw a flat line:
    a change below print precision is noise, not a shape to show.
    """
    if not values:
        return ""
    if len(values) > width:
        step = len(values) / width
        values = [values[int(i * step)] for i in range(width)]
    finite = [v for v in values if isinstance(v, int | float) and math.isfinite(v)]
    if not finite:
        return "?" * len(values)
    lo, hi = min(finite), max(finite)
    flat = f"{lo:.{digits}f}" == f"{hi:.{digits}f}"
    span = hi - lo or 1.0
    out = []
    for v in values:
        if not (isinstance(v, int | float) and math.isfinite(v)):
            out.append("?")
        elif flat:
            out.append(FLAT)
        else:
            out.append(_BLOCKS[min(int((v - lo) / span * (len(_BLOCKS) - 1) + 0.5), len(_BLOCKS) - 1)])
    return "".join(out)


def fmt(value: object, digits: int = 4) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}" if math.isfinite(value) else str(value)
    return "-" if value is None else str(value)


def strict(value):
    """``value`` with every NaN or infinity replaced by None: JSON has no such numbers (null stands for them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict(v) for v in value]
    return value


def dumps(value, **kwargs) -> str:
    """Strict JSON (no NaN), as kata prints and writes it."""
    return json.dumps(strict(value), allow_nan=False, default=str, **kwargs)


def echo(text: str = "", *, nl: bool = True, err: bool = False) -> None:
    """Print ``text`` (JSON, a report) to stdout or stderr and flush it, as ``click.echo`` does for text."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + ("\n" if nl else ""))
    stream.flush()
