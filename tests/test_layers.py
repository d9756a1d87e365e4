"""The package's layers (CONTRIBUTING.md, "Code layout"), checked from the source itself.

import-linter (`lint-imports`, run by .ci/run) holds the layers to their order, counting the imports at a
module's top. These tests count every import, inside functions too: no two modules of ``checker`` may
import each other in a loop, however far round it goes.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "checker"
MAX_TOP_LEVEL_MODULES = 15

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its __init__.py)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module an imported name lives in: ``checker.a.b.f`` -> ``checker.a.b`` (when that is a module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> set[str]:
    """The checker modules ``module`` imports anywhere in its text: at the top, in functions, under `if`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            owner = _owner(name) if name.split(".")[0] == "checker" else None
            if owner and owner != module:
                found.add(owner)
    return found


def _graph() -> dict[str, set[str]]:
    return {module: _imported(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop_through_function_level_imports():
    """The finder itself: a loop closed by an import inside a function is a loop, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    source = "import os\n\ndef f():\n    from checker.base import i18n\n"
    tree = ast.parse(source)
    inner = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert inner and inner[0].col_offset > 0  # counted by _imported, which walks the whole tree


def test_no_two_checker_modules_import_each_other_in_a_loop():
    graph = _graph()
    assert len(graph) > 60 and graph["checker.engine.grading"], "the walk found the package's imports"
    assert _cycles(graph) == [], "modules importing each other in a loop (counting imports inside functions)"


def test_checker_has_at_most_fifteen_modules_at_its_top_level():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_only_the_command_line_imports_click():
    outside = sorted(
        module for module, path in MODULES.items()
        if not module.startswith("checker.cli")
        and any(isinstance(n, ast.Import) and any(a.name.split(".")[0] == "click" for a in n.names)
                or isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "click"
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert outside == [], f"click imported outside checker/cli: {outside}"


def _layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return [[f"checker.{name.strip()}" for name in layer.split("|")] for layer in layers["layers"]]


def test_the_declared_layers_cover_every_subpackage_and_hold_for_function_level_imports_too():
    """import-linter reads the layers from pyproject.toml; here every import counts, and every subpackage of
    checker/ must sit in a layer."""
    layers = _layers()
    rank = {package: i for i, layer in enumerate(reversed(layers)) for package in layer}
    subpackages = {f"checker.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(rank), "a subpackage missing from [tool.importlinter]'s layers, or one too many"

    def layer_of(module: str) -> str | None:
        return next((p for p in rank if module == p or module.startswith(p + ".")), None)

    upward = []
    for module, imported in _graph().items():
        mine = layer_of(module)
        for target in imported:
            theirs = layer_of(target)
            if mine and theirs and mine != theirs and rank[theirs] >= rank[mine]:
                upward.append(f"{module} -> {target}")
    assert upward == []


@pytest.mark.parametrize("package", ["checker.sandbox"])
def test_the_sandbox_imports_nothing_above_the_base(package):
    """What a child must not read and what the zygote preloads are passed in: the sandbox names no track,
    no check, no loop file."""
    reached = set()
    for module, imported in _graph().items():
        if module == package or module.startswith(package + "."):
            reached |= {t for t in imported if not (t == package or t.startswith(package + "."))}
    assert reached <= {"checker", "checker.base"} | {m for m in MODULES if m.startswith("checker.base.")}, reached


def test_the_catalogue_and_the_practice_katas_name_the_same_exercises():
    """katas.py validates a practice kata's exercise by name; practice.py measures each one."""
    from checker.catalogue.katas import EXERCISES as NAMES
    from checker.learn.practice import EXERCISES

    assert tuple(EXERCISES) == NAMES
