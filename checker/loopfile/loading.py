"""Load a loop file by path (or source text) and validate it against the loop protocol.

Everything here that executes the learner's code runs in a sandboxed child; the parent
only reads and compiles the text, which executes nothing.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import os
import sys
import traceback
import types
from collections.abc import Sequence
from pathlib import Path

from checker.base.errors import LoopFileError, UsageProblem
from checker.base.files import NotGiven, read_inside
from checker.base.i18n import Message, resolve_lang
from checker.loopfile.notebook import cell_position
from checker.loopfile.protocol import FUNCTIONS

MAX_SOURCE_BYTES = 1_000_000
_counter = itertools.count()


NOT_GIVEN = {
    "outside": Message(en="{path} leads outside {root} (a symbolic link, or a folder that links elsewhere): only "
                          "files inside it are graded, so it was not read",
                       es="{path} lleva fuera de {root} (un enlace simbólico, o una carpeta que enlaza a otro "
                          "sitio): solo se evalúan archivos de dentro, así que no se leyó"),
    "loop": Message(en="{path} is a loop of symbolic links that lead to each other: it was not read",
                    es="{path} es un bucle de enlaces simbólicos que llevan unos a otros: no se leyó"),
    "swapped": Message(en="{path} changed while kata opened it (a link put in its place): it was not read",
                       es="{path} cambió mientras kata lo abría (un enlace puesto en su lugar): no se leyó"),
    "fifo": Message(en="{path} is a named pipe, not a regular file: it was not read",
                    es="{path} es una tubería con nombre, no un archivo normal: no se leyó"),
    "socket": Message(en="{path} is a socket, not a regular file: it was not read",
                      es="{path} es un socket, no un archivo normal: no se leyó"),
    "device": Message(en="{path} is a device, not a regular file: it was not read",
                      es="{path} es un dispositivo, no un archivo normal: no se leyó"),
    "other": Message(en="{path} is not a regular file: it was not read",
                     es="{path} no es un archivo normal: no se leyó"),
}


def refusal(kind: str, path: object, root: object) -> LoopFileError:
    """The LoopFileError for a path ``read_inside`` refused (``checker.base.files.NotGiven``'s kind)."""
    message = NOT_GIVEN.get(kind, NOT_GIVEN["other"])
    return LoopFileError("not_given" if kind in ("outside", "swapped", "loop") else "not_file",
                         message.render("en", path=path, root=root), message.render("es", path=path, root=root))


def _read_given(p: Path, folder: Path, exclude: Sequence[Path]) -> bytes:
    """``read_inside``'s bytes, or the LoopFileError that says why the file was not read."""
    try:
        return read_inside(p, folder, MAX_SOURCE_BYTES, exclude)
    except NotGiven as exc:
        if exc.kind == "folder":
            raise LoopFileError("not_file", f"{p} is a directory; give the path of a .py or .ipynb loop file",
                                f"{p} es una carpeta; da la ruta de un archivo de bucle .py o .ipynb") from None
        if exc.kind == "missing":
            raise LoopFileError("not_found", f"{p}: no such file (a link to nothing)",
                                f"{p}: no existe ese archivo (un enlace a nada)") from None
        raise refusal(exc.kind, p, folder) from None
    except OSError as exc:
        raise LoopFileError("unreadable", f"{p}: cannot read it ({exc.strerror})",
                            f"{p}: no se puede leer ({exc.strerror})") from None


def read_source(path: str | Path, root: str | Path | None = None, exclude: Sequence[Path] = ()) -> tuple[str, str]:
    """Return ``(source, filename)`` for a loop file (``.py`` or ``.ipynb``), or raise LoopFileError.

    Only a regular file inside ``root`` (default: the folder the path names it in) is read, with every link
    resolved, opened without following links and checked again once open (``checker.base.files.read_inside``):
    a link that leaves the folder, a FIFO, a socket or a device is refused without reading a byte of it; so is one
    that leads into ``exclude`` (the gradebook's folder, where it lies inside the class folder)."""
    p = Path(path)
    folder = Path(root) if root is not None else p.absolute().parent
    if not os.path.lexists(p):
        raise LoopFileError("not_found", f"{p}: no such file", f"{p}: no existe ese archivo")
    data = _read_given(p, folder, exclude)
    if len(data) > MAX_SOURCE_BYTES:
        raise LoopFileError("too_big", f"{p} is over {MAX_SOURCE_BYTES:,} bytes, the most a loop file may be",
                            f"{p} ocupa más de {MAX_SOURCE_BYTES:,} bytes, lo máximo de un archivo de bucle")
    if b"\0" in data:
        raise LoopFileError("binary", f"{p} is a binary file, not Python source",
                            f"{p} es un archivo binario, no código Python")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoopFileError("binary", f"{p} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#x})") from None
    if p.suffix == ".ipynb":
        from checker.loopfile.notebook import notebook_to_source

        text = notebook_to_source(text, str(p))
    if not text.strip():
        raise LoopFileError("empty", f"{p} is empty; a loop file defines the protocol functions",
                            f"{p} está vacío; un archivo de bucle define las funciones del protocolo")
    return text, str(p)


def compile_source(source: str, filename: str) -> types.CodeType:
    """Compile without running; a syntax error names file:line and shows the offending line."""
    try:
        return compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        # the line from the source compiled (a notebook's cells), never re-read from the file on disk
        lines = source.splitlines()
        line = (lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else exc.text or "").rstrip("\n")
        where = f"{filename}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
        if filename.endswith(".ipynb"):  # a notebook: say which cell and line
            from checker.loopfile.notebook import describe_position

            where = describe_position(filename, exc.lineno, source) or where
        caret = ""
        if line and exc.offset:
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            caret = "\n    " + " " * max(exc.offset - 1 - indent, 0) + "^"
            line = stripped
        shown = f"\n    {line}{caret}" if line else ""
        raise LoopFileError("syntax", f"{where}: syntax error: {exc.msg}{shown}",
                            f"{where}: error de sintaxis: {exc.msg}{shown}") from None


TRACEBACK_HEAD = Message(en="Traceback (your file's frames only):",
                         es="Traceback (solo los marcos de tu archivo):")


def learner_traceback(exc: BaseException, filename: str, lang: str = "en") -> str:
    """The traceback of ``exc`` trimmed to the frames in the learner's file (its heading in ``lang``)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = [TRACEBACK_HEAD.render(lang)] if frames else []
    formatted = zip(traceback.format_list(frames), frames, strict=True)
    lines += [_in_cell(line.rstrip("\n"), frame, filename) for line, frame in formatted]
    lines += [line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)


def _in_cell(text: str, frame: traceback.FrameSummary, filename: str) -> str:
    """A formatted frame, its 'line N' as 'cell C, line M' when the file is a notebook."""
    if not filename.endswith(".ipynb"):
        return text

    pos = cell_position(filename, frame.lineno)
    if pos is None:
        return text
    return text.replace(f", line {frame.lineno},", f", cell {pos[0]}, line {pos[1]},", 1)


def load_module(source: str, filename: str, module_file: str | None = None) -> types.ModuleType:
    """Execute the source as a fresh module with a private name (so its __main__ block never runs).

    ``module_file``: what the module's ``__file__`` says, when not ``filename`` (a sandboxed child's private
    folder, where the course's data file was copied: ``Path(__file__).with_name(...)`` finds the copy there).
    The code is still compiled as ``filename``: tracebacks and the audit hook name the real file.
    """
    code = compile_source(source, filename)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    name = f"_kata_loop_{next(_counter)}"
    module = types.ModuleType(name)
    module.__file__ = module_file or filename
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except SystemExit as exc:
        raise LoopFileError(
            "exit",
            f"{filename} called exit({exc.code!r}) while being imported; "
            "move that into `if __name__ == \"__main__\":`",
            f"{filename} llamó a exit({exc.code!r}) al importarse; "
            "pon eso dentro de `if __name__ == \"__main__\":`",
        ) from None
    except ModuleNotFoundError as exc:
        shown, mostrado = learner_traceback(exc, filename), learner_traceback(exc, filename, "es")
        raise LoopFileError(
            "import", f"{filename} imports {exc.name!r}, which is not installed\n{shown}",
            f"{filename} importa {exc.name!r}, que no está instalado\n{mostrado}",
        ) from None
    except Exception as exc:
        shown, mostrado = learner_traceback(exc, filename), learner_traceback(exc, filename, "es")
        raise LoopFileError(
            "import", f"{filename} raised an error while being imported\n{shown}",
            f"{filename} lanzó un error al importarse\n{mostrado}",
        ) from None
    return module


def protocol_problems(module: types.ModuleType, track=None) -> list[str]:
    """One line per protocol function that is missing, not callable, or not callable as the checker calls it.

    ``track``: a ``checker.setting.tracks.Track`` whose protocol the file follows (default: protocol v1).
    """
    return [problem.en for problem in _problems(module, track)]


def _problems(module: types.ModuleType, track=None) -> list[Message]:
    """``protocol_problems``, each in English and Spanish."""
    problems = []
    for spec in (FUNCTIONS if track is None else tuple(track.functions.values())):
        fn = getattr(module, spec.name, None)
        if fn is None:
            problems.append(Message(en=f"missing function {spec.name}: expected {spec.signature}",
                                    es=f"falta la función {spec.name}: se espera {spec.signature}"))
            continue
        if not callable(fn):
            kind = type(fn).__name__
            problems.append(Message(en=f"{spec.name} is a {kind}, not a function: expected {spec.signature}",
                                    es=f"{spec.name} es un {kind}, no una función: se espera {spec.signature}"))
            continue
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        args, kwargs = spec.probe_call()
        try:
            sig.bind(*args, **kwargs)
        except TypeError as exc:
            problems.append(Message(en=f"{spec.name}{sig} cannot be called as {spec.signature}: {exc}",
                                    es=f"{spec.name}{sig} no se puede llamar como {spec.signature}: {exc}"))
    return problems


def validate_module(module: types.ModuleType, filename: str, track=None) -> None:
    problems = _problems(module, track)
    if problems:
        if track is None or track.protocol == ("v1",):
            which = Message(en="loop protocol v1", es="el protocolo de bucle v1")
        else:
            which = Message(en=f"the protocol of track {track.id!r} ({' + '.join(track.protocol)})",
                            es=f"el protocolo del recorrido {track.id!r} ({' + '.join(track.protocol)})")
        raise LoopFileError(
            "protocol", f"{filename} does not follow {which.en}:\n" + "\n".join(f"  - {p.en}" for p in problems),
            f"{filename} no sigue {which.es}:\n" + "\n".join(f"  - {p.es}" for p in problems),
        )


def load_loop(source: str, filename: str, track=None, module_file: str | None = None) -> types.ModuleType:
    """Load and validate: the module, ready for the checks, or LoopFileError (``track``: see protocol_problems;
    ``module_file``: see load_module)."""
    module = load_module(source, filename, module_file)
    validate_module(module, filename, track)
    return module


# --------------------------------------------------------------------------- for the commands

ANSWERS_NOT_A_LOOP = Message(
    en="{path} holds a practice kata's answers, not a training loop: `kata check` without a path compares them "
       "with a run (in the folder where `kata next` wrote it)",
    es="{path} contiene las respuestas de una kata de práctica, no un bucle de entrenamiento: `kata check` sin "
       "ruta las compara con una ejecución (en la carpeta donde lo escribió `kata next`)",
)


def read_loop_file(path: str, lang: str | None = None) -> tuple[str, str]:
    """Read and compile (without running) a loop file; any problem is a UsageProblem (exit 2)."""
    if str(path).endswith(".toml"):
        raise UsageProblem(ANSWERS_NOT_A_LOOP.render(resolve_lang(lang), path=path))
    try:
        source, filename = read_source(path)
        compile_source(source, filename)
    except LoopFileError as exc:
        raise UsageProblem(exc.render(resolve_lang(lang))) from None
    return source, filename
