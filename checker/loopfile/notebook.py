"""Jupyter notebooks as loop files: code cells in order, IPython-only lines skipped, errors by cell and line.

A notebook becomes one Python source. Each code cell starts with a marker line
``# %% cell N`` (N counts every cell from the top, markdown cells included, as a person
scrolling the notebook counts them) and keeps its lines one for one, so a line of the
source is always "cell N, line M" of the notebook:

    # %% cell 2
    pass  # kata: skipped IPython magic `%matplotlib inline`
    import torch

In a cell that is not plain Python, IPython-only lines (``%magic``, ``!shell``, ``x = !cmd``,
``obj?``) become a ``pass`` with a comment, at their own indentation, so the cell still compiles;
``%time stmt`` keeps ``stmt``, which IPython runs once. A cell that starts with a
cell magic (``%%bash``, ...) is skipped whole, except ``%%time`` and ``%%capture``, whose
body is plain Python that IPython runs once: only their first line is skipped. A cell
tagged ``kata-skip`` (cell metadata ``tags``) is left out, for experiments that should not
run when the checker imports the notebook.

The position table is kept per file name (``cell_position``), and can also be rebuilt from
the markers in the source, so it works in any process that has the source.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path
from typing import Any

from checker.base.errors import LoopFileError
from checker.base.i18n import Message

SKIP_TAG = "kata-skip"
MARKER = "# %% cell {n}"
_MARKER_RE = re.compile(r"^# %% cell (\d+)$")
_PYTHON_CELL_MAGICS = ("time", "capture")
"""Cell magics whose body IPython runs once as ordinary Python in the notebook's namespace."""

_SHELL_ASSIGN_RE = re.compile(r"^[\w.\[\]\s,()*]+=\s*[!%]")
_TIME_RE = re.compile(r"^%time\s+(\S.*)$")
_HELP_RE = re.compile(r"^(\?\??[\w.]+|[\w.]+\?\??)$")

# file name -> (source, table); table[i] is (cell, line) for source line i + 1, or None
_POSITIONS: dict[str, tuple[str, list[tuple[int, int] | None]]] = {}


def _lines(text: str) -> list[str]:
    """Split as Python's tokenizer counts lines (\\n, \\r\\n, \\r), never on form feeds and the like."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _ipython_kind(stripped: str) -> str | None:
    """What IPython-only construct a (stripped) line is, or None for a Python line."""
    if not stripped:
        return None
    if _HELP_RE.match(stripped):
        return "IPython help line"
    match = _SHELL_ASSIGN_RE.match(stripped)
    head = stripped[match.end() - 1] if match else stripped[0]
    if head == "!":
        return "shell line"
    if head == "%":
        return "IPython magic"
    return None


def _skip_note(line: str, what: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    shown = line.strip()
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{indent}pass  # kata: skipped {what} `{shown}`"


def _compiles(text: str) -> bool:
    try:
        compile(text, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def convert_cell(text: str) -> list[str]:
    """A code cell's lines as Python, one output line per input line."""
    lines = _lines(text)
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = (lines[first].strip()[2:].split() or [""])[0]
        if name in _PYTHON_CELL_MAGICS:
            head = lines[:first] + [_skip_note(lines[first], "cell magic")]
            return head + _convert_lines(lines[first + 1:])
        head = lines[:first] + [_skip_note(lines[first], "cell magic, and the cell with it")]
        return head + [f"# {line}" if line.strip() else "" for line in lines[first + 1:]]
    return _convert_lines(lines)


def _convert_lines(lines: list[str]) -> list[str]:
    if _compiles("\n".join(lines)):
        return lines  # plain Python (a `%` or `!` at a line start is then part of an expression or string)
    out = []
    for line in lines:
        stripped = line.strip()
        kind = _ipython_kind(stripped)
        timed = _TIME_RE.match(stripped)
        if timed:  # `%time stmt` runs stmt once: keep the statement, drop the timing
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{timed.group(1)}  # kata: ran without `%time`")
        else:
            out.append(_skip_note(line, kind) if kind else line)
    return out


def _parse(text: str, filename: str) -> list[dict[str, Any]]:
    """The notebook's cells as plain dicts, or LoopFileError('notebook', ...) naming what is wrong."""
    import nbformat

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoopFileError(
            "notebook", f"{filename} is not a Jupyter notebook: it is not valid JSON (line {exc.lineno}, "
            f"column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict) or not ({"cells", "worksheets"} & set(data)):
        raise LoopFileError(
            "notebook", f"{filename} is not a readable Jupyter notebook (it is JSON, but holds no notebook "
            "cells); save it again from Jupyter, or give the loop as a .py file"
        )
    if "cells" in data and not isinstance(data["cells"], list):
        raise LoopFileError(
            "notebook", f"{filename} is not a readable Jupyter notebook (its 'cells' is not a list)"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises many kinds for a malformed notebook
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LoopFileError(
            "notebook", f"{filename} is not a readable Jupyter notebook ({reason}); save it again from "
            "Jupyter, or give the loop as a .py file"
        ) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise LoopFileError(
            "notebook", f"{filename} is not a readable Jupyter notebook (it has no list of cells)"
        )
    for i, cell in enumerate(cells, start=1):
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if not isinstance(source, str | list) or (isinstance(source, list)
                                                   and not all(isinstance(part, str) for part in source)):
            raise LoopFileError("notebook", f"{filename}: cell {i} is malformed (no cell type or source)")
    return cells


def _cell_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _skipped_by_tag(cell: dict[str, Any]) -> bool:
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return isinstance(tags, list) and SKIP_TAG in tags


def notebook_to_source(text: str, filename: str) -> str:
    """The notebook's code cells as one Python source; remembers where each line came from."""
    cells = _parse(text, filename)
    out: list[str] = []
    table: list[tuple[int, int] | None] = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        if _skipped_by_tag(cell):
            out.append(f"# kata: cell {number} skipped (tagged {SKIP_TAG})")
            table.append(None)
            continue
        out.append(MARKER.format(n=number))
        table.append(None)
        for line_no, line in enumerate(convert_cell(_cell_text(cell)), start=1):
            out.append(line)
            table.append((number, line_no))
        out.append("")
        table.append(None)
    source = "\n".join(out) + "\n"
    if not any(entry is not None for entry in table):
        source = ""  # read_source then says the file is empty
    _POSITIONS[filename] = (source, table)
    return source


def _table_from_markers(source: str) -> list[tuple[int, int] | None]:
    table: list[tuple[int, int] | None] = []
    cell, start = None, 0
    for i, line in enumerate(_lines(source), start=1):
        match = _MARKER_RE.match(line)
        if match:
            cell, start = int(match.group(1)), i
            table.append(None)
        elif cell is None:
            table.append(None)
        else:
            table.append((cell, i - start))
    return table


def cell_position(filename: str, lineno: int | None, source: str | None = None) -> tuple[int, int] | None:
    """``(cell, line)`` in the notebook for line ``lineno`` of its converted source, if known."""
    if not lineno or not filename.endswith(".ipynb"):
        return None
    known = _POSITIONS.get(filename)
    if known is not None and (source is None or known[0] == source):
        table = known[1]
    else:
        if source is None:
            import linecache

            source = "".join(linecache.getlines(filename))
        if not source:
            return None
        table = _table_from_markers(source)
    return table[lineno - 1] if 0 < lineno <= len(table) else None


def describe_position(filename: str, lineno: int | None, source: str | None = None) -> str | None:
    """``'nb.ipynb, cell 3, line 2'`` for a notebook line, else None."""
    pos = cell_position(filename, lineno, source)
    return None if pos is None else f"{filename}, cell {pos[0]}, line {pos[1]}"


# ---------------------------------------------------------------------------------------------
# Writing a starter as a notebook (`kata next --notebook`)

STARTER_INTRO = Message(
    en="This notebook's training loop has one bug. It runs without an error message, yet something is "
    "wrong with how it trains.\n\n"
    "1. Run the cells, then see the symptom from a terminal: `{try_cmd}`\n"
    "2. Find and fix the bug in the code cells below.\n"
    "3. Check your fix: `kata check {path}`\n\n"
    "Cells are read from top to bottom; lines such as `%matplotlib inline` or `!pip ...` are skipped by "
    "the checker. Tag a cell `kata-skip` to keep it out of the check.",
    es="El bucle de entrenamiento de este cuaderno tiene un error. Se ejecuta sin mensajes de error, pero "
    "algo falla en cómo entrena.\n\n"
    "1. Ejecuta las celdas y mira el síntoma desde una terminal: `{try_cmd}`\n"
    "2. Encuentra y corrige el error en las celdas de código de abajo.\n"
    "3. Comprueba tu arreglo: `kata check {path}`\n\n"
    "Las celdas se leen de arriba abajo; líneas como `%matplotlib inline` o `!pip ...` se saltan al "
    "comprobar. Etiqueta una celda con `kata-skip` para dejarla fuera de la comprobación.",
)


def split_cells(source: str) -> list[str]:
    """Cut a loop file into cells: the header (docstring, imports), then one cell per top-level definition.

    Comment lines and decorators right above a definition go with it; nothing is dropped or reordered.
    """
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [source.rstrip("\n")]
    starts = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.If):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
            while first > 0 and lines[first - 1].lstrip().startswith("#"):
                first -= 1
            starts.append(first)
    bounds = sorted(set([0] + starts)) + [len(lines)]
    cells = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        chunk = "\n".join(lines[a:b]).strip("\n")
        if chunk.strip():
            cells.append(chunk)
    return cells


NO_FILE_IN_JUPYTER = """\
# Jupyter defines no __file__ (kata does, when it checks this notebook): this one stands for the notebook, so that
# Path(__file__).with_name(...) finds a file beside it, in the folder Jupyter runs it in.
try:
    __file__
except NameError:
    __file__ = {path}"""


def starter_notebook(kata: Any, lang: str, source: str, path: str | None = None) -> str:
    """The kata's starter as a notebook (JSON text): a markdown cell with the story, then the loop in cells.

    ``kata`` is a ``checker.catalogue.katas.Kata``; ``source`` is the starter loop (the reference with the
    kata's mutant applied); ``path`` is where the notebook will be written (default ``<slug>.ipynb``),
    quoted in the instructions.
    """
    import nbformat

    path = path or f"{kata.slug}.ipynb"
    try_cmd = " ".join(["kata run", path, *kata.try_args])
    intro = STARTER_INTRO.render(lang, try_cmd=try_cmd, path=path)
    markdown = f"# {kata.title.render(lang)}\n\n{kata.story.render(lang)}\n\n{intro}"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["kata"] = {"kata": kata.slug, "mutant": kata.mutant}
    nb.cells = [nbformat.v4.new_markdown_cell(markdown)]
    if "__file__" in source:  # Jupyter defines none: the loop reads files beside itself, where Jupyter runs it
        nb.cells.append(nbformat.v4.new_code_cell(NO_FILE_IN_JUPYTER.format(path=json.dumps(Path(path).name))))
    nb.cells += [nbformat.v4.new_code_cell(cell) for cell in split_cells(source)]
    for i, cell in enumerate(nb.cells):
        cell.id = f"{kata.slug[:50]}-{i}"  # fixed ids: the same kata always gives the same file
    nbformat.validate(nb)
    return nbformat.writes(nb)
