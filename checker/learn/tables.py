"""What `kata run` and `kata trace` print: per-epoch tables, loss curves, a batch-by-batch trace."""

from __future__ import annotations

import math
from typing import Any

from rich.markup import escape
from rich.table import Table

from checker.base.i18n import Message
from checker.base.term import console, fmt, sparkline
from checker.runs.training import RunResult

COLUMNS = ("epoch", "lr", "train_loss", "val_loss", "val_acc")
HEADINGS = {"en": {"epoch": "epoch", "lr": "lr", "train_loss": "train loss", "val_loss": "val loss",
                   "val_acc": "val acc", "steps": "steps"},
            "es": {"epoch": "época", "lr": "lr", "train_loss": "pérdida entr.", "val_loss": "pérdida val.",
                   "val_acc": "acierto val.", "steps": "pasos"}}
"""The columns' headings in each language (the JSON keeps the English keys)."""
CURVE_LABELS = {"en": ("train loss", "val loss  "), "es": ("pérdida entr.", "pérdida val. ")}
NO_FINITE = Message(en="no finite value", es="ningún valor finito")
WARNING = Message(en="warning:", es="aviso:")
PLOT_SAVED = Message(en="plot saved to {path}", es="gráfica guardada en {path}")


def _cell(row: dict, column: str) -> str:
    return fmt(row.get(column), 6 if column == "lr" else 4)


def _steps(value: int | None) -> str:
    return "-" if value is None else str(value)


def curve_line(label: str, values: list, lang: str = "en") -> str | None:
    """``label ▇▅▃▂▁  (lo .. hi)``, or None when some value is not a number."""
    if not values or not all(isinstance(v, int | float) for v in values):
        return None
    finite = [v for v in values if math.isfinite(v)]
    span = f"{min(finite):.3f} .. {max(finite):.3f}" if finite else NO_FINITE.render(lang)
    return f"{label} {sparkline(values)}  ({span})"


def print_history(result: RunResult, lang: str = "en") -> None:
    out = console()
    heading = HEADINGS["es" if lang == "es" else "en"]
    table = Table(title=escape(result.name), title_justify="left", box=None, pad_edge=False)
    for col in COLUMNS:
        table.add_column(heading[col], justify="right")
    table.add_column(heading["steps"], justify="right")
    steps = result.steps or [None] * len(result.history)
    for row, n in zip(result.history, steps, strict=False):
        table.add_row(*(_cell(row, c) for c in COLUMNS), _steps(n))
    out.print(table)
    for key, label in zip(("train_loss", "val_loss"), CURVE_LABELS["es" if lang == "es" else "en"], strict=True):
        line = curve_line(label, [row.get(key) for row in result.history], lang)
        if line:
            out.print(line)
    for warning in result.warnings:
        out.print(f"[yellow]{WARNING.render(lang)}[/] {escape(warning)}")


def print_compare(results: list[RunResult], lang: str = "en") -> None:
    out = console()
    heading = HEADINGS["es" if lang == "es" else "en"]
    a, b = results
    table = Table(box=None, pad_edge=False)
    table.add_column(heading["epoch"], justify="right")
    for key in COLUMNS[1:]:
        for tag in ("A", "B"):
            table.add_column(f"{heading[key]} {tag}", justify="right")
    for tag in ("A", "B"):  # the optimizer steps of each epoch, as `kata run` shows them for one file
        table.add_column(f"{heading['steps']} {tag}", justify="right")
    steps_a = a.steps or [None] * len(a.history)
    steps_b = b.steps or [None] * len(b.history)
    for i, (ra, rb) in enumerate(zip(a.history, b.history, strict=False)):
        cells = [str(ra.get("epoch"))]
        for key in COLUMNS[1:]:
            cells += [_cell(ra, key), _cell(rb, key)]
        cells += [_steps(steps_a[i] if i < len(steps_a) else None), _steps(steps_b[i] if i < len(steps_b) else None)]
        table.add_row(*cells)
    out.print(f"A = {escape(a.name)}\nB = {escape(b.name)}")
    out.print(table)
    label = CURVE_LABELS["es" if lang == "es" else "en"][0]
    for tag, result in (("A", a), ("B", b)):
        out.print(f"{label} {tag} {sparkline([r.get('train_loss') for r in result.history])}")


TRACE_HEAD = Message(en="{n} examples (numbered 0..{last}, labels {labels}), batch_size={size}",
                     es="{n} ejemplos (numerados 0..{last}, etiquetas {labels}), batch_size={size}")
TRACE_COLUMNS = {"en": ("epoch", "batch", "xb shape", "examples", "labels kept"),
                 "es": ("época", "lote", "forma de xb", "ejemplos", "etiquetas en su fila")}
TRACE_YES_NO = {"en": ("yes", "NO"), "es": ("sí", "NO")}
TRACE_EPOCH = Message(en="epoch {epoch}: {batches} batches, step() called {steps} times",
                      es="época {epoch}: {batches} lotes, step() llamado {steps} veces")


def print_trace(trace: dict[str, Any], lang: str = "en") -> None:
    out = console()
    n, size = trace["examples"], trace["batch_size"]
    out.print(escape(TRACE_HEAD.render(lang, n=n, last=n - 1, labels=trace["labels"], size=size)))
    table = Table(box=None, pad_edge=False)
    for i, col in enumerate(TRACE_COLUMNS[lang]):
        table.add_column(col, justify="right" if i < 2 else "left")
    yes, no = TRACE_YES_NO[lang]
    number = {}
    for batch in trace["batches"]:
        number[batch["epoch"]] = number.get(batch["epoch"], 0) + 1
        rows = ", ".join("?" if r is None else str(r) for r in batch["rows"])
        table.add_row(str(batch["epoch"]), str(number[batch["epoch"]]), f"[{', '.join(map(str, batch['shape']))}]",
                      rows, yes if batch["labels_kept"] else no)
    out.print(table)
    for epoch, steps in enumerate(trace["steps"], start=1):
        out.print(TRACE_EPOCH.render(lang, epoch=epoch, batches=number.get(epoch, 0), steps=steps))
