"""The integrity column: a static (AST) note on constructs no training loop needs.

``review_reasons(source, filename)`` reads the file (it runs nothing) and lists, one short line each,
what a training loop never needs: reaching kata's own code, reading or writing files, running code
from strings, introspecting the interpreter (frames, the garbage collector, the import system),
processes, sockets and signals, dunder-attribute games, and patching what another module defines.

It never grants a pass and never judges correctness: a flagged submission is *held for review* (not
reported as passed), with the reasons, for a person to look at. The code under
``if __name__ == "__main__":`` is not read: it never runs while the file is graded, unless the file can make
the guard true (it rebinds ``__name__``, or reaches its own globals another way): then that block is read
like the rest, and the rebinding itself is named. No correct loop in
an ordinary style is flagged (tests/test_integrity.py runs the note over the reference, every correct
loop of the corpus and every starter).
"""

from __future__ import annotations

import ast

from checker.base.i18n import Message

REASONS = {
    "kata": Message(en="imports kata's own code ({name})", es="importa el código del propio kata ({name})"),
    "module": Message(en="imports {name}, which no training loop needs",
                      es="importa {name}, que ningún bucle de entrenamiento necesita"),
    "files": Message(en="reads or writes files ({name})", es="lee o escribe archivos ({name})"),
    "dynamic": Message(en="runs code built at run time ({name})", es="ejecuta código construido en ejecución ({name})"),
    "introspect": Message(en="inspects the interpreter ({name})", es="inspecciona el intérprete ({name})"),
    "process": Message(en="manages processes or signals ({name})", es="gestiona procesos o señales ({name})"),
    "proc": Message(en="reaches /proc ({name})", es="accede a /proc ({name})"),
    "dunder": Message(en="plays with dunder attributes ({name})", es="manipula atributos especiales ({name})"),
    "patch": Message(en="replaces something another module defines ({name})",
                     es="reemplaza algo que define otro módulo ({name})"),
    "hooks": Message(en="registers a global torch hook or mode ({name})",
                     es="registra un hook o modo global de torch ({name})"),
    "main": Message(en="rebinds __name__ ({name}), so its `if __name__ == \"__main__\":` block can run while graded",
                    es="reasigna __name__ ({name}), así que su bloque `if __name__ == \"__main__\":` puede ejecutarse "
                       "durante la corrección"),
}
LINE = Message(en="line {line}: {reason}", es="línea {line}: {reason}")

_KATA_MODULES = ("checker", "kata", "solutions")
_MODULES = {
    "ctypes": "introspect", "_ctypes": "introspect", "cffi": "introspect", "gc": "introspect",
    "inspect": "introspect", "dis": "introspect", "marshal": "dynamic", "types": "dynamic",
    "importlib": "dynamic", "runpy": "dynamic", "code": "dynamic", "codeop": "dynamic", "builtins": "dynamic",
    "subprocess": "process", "pty": "process", "signal": "process", "socket": "process", "ssl": "process",
    "http": "process", "urllib": "process", "requests": "process", "mmap": "introspect", "resource": "process",
    "shutil": "files", "tempfile": "files", "glob": "files", "fcntl": "files",
}
_IO_FILES = {"open", "open_code", "FileIO"}
"""What of ``io`` touches files; ``io.BytesIO`` (best weights kept in memory with torch.save) does not."""
_CALLS = {
    "eval": "dynamic", "exec": "dynamic", "compile": "dynamic", "__import__": "dynamic",
    "open": "files", "globals": "introspect", "setattr": "patch", "delattr": "patch",
    "breakpoint": "introspect",
}
_ATTRS = {
    ("sys", "modules"): "introspect", ("sys", "_getframe"): "introspect", ("sys", "settrace"): "introspect",
    ("sys", "setprofile"): "introspect", ("sys", "addaudithook"): "introspect",
    ("sys", "_current_frames"): "introspect", ("sys", "meta_path"): "dynamic", ("sys", "path_hooks"): "dynamic",
    ("sys", "path"): "dynamic", ("sys", "stdout"): None, ("os", "write"): "files", ("os", "open"): "files",
    ("os", "_exit"): "process", ("os", "fork"): "process", ("os", "forkpty"): "process", ("os", "kill"): "process",
    ("os", "killpg"): "process", ("os", "system"): "process", ("os", "popen"): "process",
    ("os", "setsid"): "process", ("os", "dup2"): "files", ("os", "fdopen"): "files", ("os", "remove"): "files",
    ("os", "unlink"): "files", ("os", "rename"): "files", ("os", "replace"): "files", ("os", "listdir"): "files",
    ("os", "scandir"): "files", ("os", "walk"): "files", ("os", "chdir"): "files", ("os", "posix_spawn"): "process",
    ("os", "environb"): None,
}
_OS_PREFIXES = ("exec", "spawn")
_PATH_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "open", "unlink", "touch", "rename",
                 "replace", "rmdir", "mkdir", "iterdir", "glob", "rglob"}
_DUNDERS = {
    "__class__", "__dict__", "__globals__", "__code__", "__closure__", "__subclasses__", "__builtins__",
    "__bases__", "__mro__", "__base__", "__setattr__", "__delattr__", "__getattribute__", "__import__",
    "__loader__", "__spec__", "__self__", "__func__", "__defaults__", "__kwdefaults__", "__wrapped__",
    "__torch_function__", "__torch_dispatch__", "__reduce__", "__reduce_ex__",
    "f_back", "f_locals", "f_globals", "f_code", "f_builtins", "tb_frame", "tb_next", "gi_frame", "cr_frame",
    "ag_frame", "co_code", "co_consts",
}
_NAME_ONLY = {"__class__": {"__name__", "__qualname__"}}
"""A dunder that is fine when only its name is read: ``model.__class__.__name__`` in a log line."""
_HOOK_NAMES = ("register_optimizer_step", "register_module_", "TorchFunctionMode", "TorchDispatchMode",
               "_push_on_torch_function_stack", "_push_on_torch_dispatch_stack", "_set_torch_function_mode")
_PATCH_ALLOWED = ("torch.backends.",)
"""Settings a loop may assign on an imported module (cudnn.deterministic, cudnn.benchmark...)."""


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_main_guard(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


class _Reader(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []
        self.imported: dict[str, str] = {}  # local name -> module path it stands for
        self.parents: dict[int, ast.AST] = {}

    def note(self, node: ast.AST, kind: str, name: str) -> None:
        self.found.append((getattr(node, "lineno", 0), kind, name))

    def _module(self, node: ast.AST, module: str) -> None:
        root = module.split(".")[0]
        if root in _KATA_MODULES:
            self.note(node, "kata", module)
        elif root in _MODULES:
            self.note(node, _MODULES[root], module)
        elif module.startswith(("torch.overrides", "torch.utils._python_dispatch")):
            self.note(node, "hooks", module)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)
            local = alias.asname or alias.name.split(".")[0]
            self.imported[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.note(node, "kata", "." * node.level + module)
        self._module(node, module)
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            self._module(node, full) if module.split(".")[0] not in _MODULES | dict.fromkeys(_KATA_MODULES) else None
            self.imported[alias.asname or alias.name] = full
            if module == "io" and alias.name in _IO_FILES:
                self.note(node, "files", full)
            if any(alias.name.startswith(h) for h in _HOOK_NAMES):
                self.note(node, "hooks", full)

    def _resolved(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        base = self.imported.get(head, head)
        return f"{base}.{rest}" if rest else base

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _DUNDERS:
            self._dunder(node)
        dotted = _dotted(node)
        if dotted:
            self._dotted_name(node, self._resolved(dotted))
        if node.attr in _PATH_METHODS:
            self._path_method(node)
        self.generic_visit(node)

    def _dunder(self, node: ast.Attribute) -> None:
        """A dunder attribute, unless read where only its name is taken (e.g. ``x.__class__.__name__``)."""
        parent = self.parents.get(id(node))
        fine = _NAME_ONLY.get(node.attr, set())
        if not (isinstance(parent, ast.Attribute) and parent.attr in fine and isinstance(node.ctx, ast.Load)):
            self.note(node, "dunder", node.attr)

    def _dotted_name(self, node: ast.Attribute, full: str) -> None:
        """A dotted name that reaches sys, os, io's files or a hook."""
        parts = full.split(".")
        if len(parts) >= 2:
            key = (parts[-2], parts[-1])
            kind = _ATTRS.get(key)
            if kind and parts[-2] in ("sys", "os"):
                self.note(node, kind, f"{key[0]}.{key[1]}")
            elif parts[-2] == "os" and parts[-1].startswith(_OS_PREFIXES):
                self.note(node, "process", f"os.{parts[-1]}")
            elif parts[-2] == "io" and parts[-1] in _IO_FILES:
                self.note(node, "files", f"io.{parts[-1]}")
        if any(part.startswith(_HOOK_NAMES) for part in parts[1:]):
            self.note(node, "hooks", full)

    def _path_method(self, node: ast.Attribute) -> None:
        """pathlib: Path(...).read_text(), p.write_text() ... (a method of that name on anything)."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node and node.attr != "open" or (
                node.attr == "open" and isinstance(parent, ast.Call) and parent.func is node
                and _dotted(node.value) not in ("io",)):
            self.note(node, "files", f".{node.attr}()")

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _CALLS:
            name = node.func.id
            first = node.args[0] if node.args else None
            if not (name in ("setattr", "delattr") and isinstance(first, ast.Name) and first.id == "self"):
                self.note(node, _CALLS[name], f"{name}()")
        if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value in _DUNDERS:
                self.note(node, "dunder", arg.value)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and ("/proc/" in node.value or node.value.rstrip("/") == "/proc"):
            self.note(node, "proc", repr(node.value[:40]))
        if isinstance(node.value, str) and node.value.split(".")[0] in ("checker", "solutions") and (
                node.value.replace(".", "").replace("_", "").isalnum()):
            self.note(node, "kata", repr(node.value))
        self.generic_visit(node)

    def _targets(self, targets) -> None:
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    dotted = _dotted(node)
                    if dotted and dotted.split(".")[0] in self.imported:
                        full = self._resolved(dotted)
                        if not full.startswith(_PATCH_ALLOWED):
                            self.note(node, "patch", full)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets([node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets([node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node.targets)
        self.generic_visit(node)


_REACHES_GLOBALS = {"globals()", "sys.modules", "exec()", "eval()", "compile()", "__import__()", "setattr()",
                    "__dict__", "__globals__", "__builtins__", "f_globals", "f_locals", "builtins"}
"""Ways a file may rebind its own ``__name__`` without naming it in an assignment."""


def _statement_binding(node: ast.AST) -> str | None:
    """How a statement binds ``__name__`` (an assignment, global, import or def), if it does."""
    if isinstance(node, ast.Name) and node.id == "__name__" and isinstance(node.ctx, ast.Store | ast.Del):
        return "__name__ = ..."
    if isinstance(node, ast.Global | ast.Nonlocal) and "__name__" in node.names:
        return "global __name__"
    if isinstance(node, ast.alias) and node.asname == "__name__":
        return "import ... as __name__"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == "__name__":
        return "def __name__"
    return None


def _access_binding(node: ast.AST) -> str | None:
    """How an attribute, a key or a call's argument binds ``__name__``, if it does."""
    if isinstance(node, ast.Attribute) and node.attr == "__name__" and isinstance(node.ctx, ast.Store | ast.Del):
        return f"{_dotted(node) or '...'} = ..."
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del) and isinstance(
            node.slice, ast.Constant) and node.slice.value == "__name__":
        return "[\"__name__\"] = ..."
    if isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "__name__" for a in node.args):
        return f"{_dotted(node.func) or 'a call'}(..., \"__name__\", ...)"
    if isinstance(node, ast.Call) and any(k.arg == "__name__" for k in node.keywords):
        return f"{_dotted(node.func) or 'a call'}(__name__=...)"
    return None


def _name_bindings(tree: ast.AST) -> list[tuple[int, str]]:
    """Where the file binds ``__name__`` (line, how), as a statement, an attribute, a key or an argument."""
    found = []
    for node in ast.walk(tree):
        how = _statement_binding(node) or _access_binding(node)
        if how is not None:
            found.append((getattr(node, "lineno", 0), how))
    return found


def review_reasons(source: str, filename: str = "<loop>", lang: str = "en") -> list[str]:
    """What in ``source`` no training loop needs, one line each (``line N: ...``); [] when nothing.

    A file that does not parse gets no note here (grading reports the syntax error)."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return []
    body = [node for node in tree.body if not _is_main_guard(node)]
    reader = _read(ast.Module(body=body, type_ignores=[]))
    bindings = _name_bindings(tree)
    if bindings or any(name in _REACHES_GLOBALS for _, _, name in reader.found) and len(body) < len(tree.body):
        # the guard can be made true while graded: the whole file is read, the rebinding named
        reader = _read(tree)
        reader.found += [(line, "main", how) for line, how in bindings]
    seen, lines = set(), []
    for line, kind, name in sorted(reader.found):
        if (kind, name) in seen:
            continue
        seen.add((kind, name))
        lines.append(LINE.render(lang, line=line, reason=REASONS[kind].render(lang, name=name)))
    return lines


def _read(module: ast.Module) -> _Reader:
    reader = _Reader()
    for parent in ast.walk(module):
        for child in ast.iter_child_nodes(parent):
            reader.parents[id(child)] = parent
    # imports first, wherever they are, so that names are resolved before they are used
    for node in ast.walk(module):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if isinstance(node, ast.Import):
                    reader.imported[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
                else:
                    full = f"{node.module}.{alias.name}" if node.module else alias.name
                    reader.imported[alias.asname or alias.name] = full
    reader.visit(module)
    return reader
