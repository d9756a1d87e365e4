"""A file that names a project's pieces, for ``kata project FILE`` (people without pytest).

The file is a Python module of the project (often its ``test_training.py``) defining ``kata_pieces()``, which
returns the keyword arguments of :func:`checker.project.runner.check_loop`. It is imported as the project's
tests import it: its folder first on ``sys.path``, the working folder kept.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from checker.base.i18n import Message
from checker.project.frames import traceback_place
from checker.project.report import ProjectInputError

FUNCTION = "kata_pieces"

NOT_FOUND = Message(en="{path}: no such file", es="{path}: no existe ese archivo")
NOT_PYTHON = Message(en="{path}: not a Python file (.py)", es="{path}: no es un archivo de Python (.py)")
IMPORT_FAILED = Message(
    en="{path}: importing it raised {error}: {detail}{where}",
    es="{path}: importarlo lanzó {error}: {detail}{where}",
)
NO_FUNCTION = Message(
    en="{path} defines no {function}(): add one returning the pieces as a dict, e.g. "
    "dict(model=Net, data=train_set, optimizer=make_optimizer, train=train)",
    es="{path} no define {function}(): añade una que devuelva las piezas en un dict, p. ej. "
    "dict(model=Net, data=train_set, optimizer=make_optimizer, train=train)",
)
NOT_A_DICT = Message(
    en="{function}() in {path} returned {got}, not a dict of the pieces",
    es="{function}() de {path} devolvió {got}, no un dict con las piezas",
)


def load_pieces(path: str | Path) -> dict[str, Any]:
    """The pieces ``path``'s ``kata_pieces()`` returns; one clear error when there are none."""
    path = Path(path)
    if not path.is_file():
        raise ProjectInputError(NOT_FOUND, path=str(path))
    if path.suffix != ".py":
        raise ProjectInputError(NOT_PYTHON, path=str(path))
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = f"kata_pieces_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        function = getattr(module, FUNCTION, None)
        if not callable(function):
            raise ProjectInputError(NO_FUNCTION, path=str(path), function=FUNCTION)
        pieces = function()
    except ProjectInputError:
        raise
    except Exception as exc:  # the project's own error while importing: one line at its place
        place = traceback_place(exc)
        raise ProjectInputError(IMPORT_FAILED, path=str(path), error=type(exc).__name__,
                                detail=str(exc).splitlines()[0] if str(exc) else "",
                                where=f" (at {place})" if place else "") from None
    if not isinstance(pieces, dict):
        raise ProjectInputError(NOT_A_DICT, path=str(path), function=FUNCTION, got=type(pieces).__name__)
    return pieces
