"""Mutation operators: small edits over libcst trees, so comments and layout survive.

A mutant step names an operator, a function of the loop file and a target: a snippet of code
matched on the *normalised* code of the nodes inside that function (comments, spacing, quotes
and line breaks do not matter; ``optimizer.zero_grad()`` matches the statement
``optimizer.zero_grad()  # clear``). A compound statement is matched by its header
(``for x, y in loader``, ``with torch.no_grad()``, ``if clip_norm is not None``), an argument by
its code (``shuffle=True``, ``*val``). A target that matches no place, or several, is a
``TargetError``; ``every = true`` on a step asks for all of several places on purpose.

Each operator is a small function ``op(site, node, **args)`` that records its edit on the site's
plan; the plan is applied in one pass, so moves and swaps use the nodes as they were found.
Every operator is registered in ``OPERATORS``; its docstring's first line reads "before -> after".
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

STATEMENT, EXPRESSION, ARGUMENT, PARAMETER = "statement", "expression", "argument", "parameter"
POSITIONS = ("before", "after", "first_in", "last_in")


class TargetError(ValueError):
    """A target matched no place or several places, or cannot be read as code."""


class OperatorError(ValueError):
    """An operator cannot apply where its target is (for example, drop_assignment on a call)."""


# --------------------------------------------------------------------------- normalised code


def _header(stmt: ast.stmt) -> str:
    for name in ("body", "orelse", "handlers", "finalbody"):
        if hasattr(stmt, name):
            setattr(stmt, name, [ast.Pass()] if name == "body" else [])
    if hasattr(stmt, "decorator_list"):
        stmt.decorator_list = []
    return ast.unparse(stmt).splitlines()[0].rstrip().removesuffix(":")


def _canonical_statement(code: str) -> str:
    tree = ast.parse(code)
    if len(tree.body) != 1:
        raise SyntaxError("more than one statement")
    stmt = tree.body[0]
    if isinstance(stmt, _COMPOUND):
        return _header(stmt)
    return ast.unparse(stmt)


_COMPOUND = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.If,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _canonical_expression(code: str) -> str:
    return ast.unparse(ast.parse(f"(\n{code}\n)", mode="eval"))


def _canonical_argument(code: str) -> str:
    call = ast.parse(f"f(\n{code}\n)", mode="eval").body
    assert isinstance(call, ast.Call)
    if len(call.args) + len(call.keywords) != 1:
        raise SyntaxError("not exactly one argument")
    return ast.unparse(call)[2:-1]


def canonical(code: str, kind: str) -> str:
    """The normalised form of ``code`` read as a ``kind``; SyntaxError when it is not one."""
    code = code.strip()
    if kind == STATEMENT:
        try:
            return _canonical_statement(code)
        except SyntaxError:
            # a compound statement's header alone: "with torch.no_grad():" or without the colon
            return _canonical_statement(code.rstrip().removesuffix(":") + ":\n    pass")
    if kind == EXPRESSION:
        return _canonical_expression(code)
    if kind == ARGUMENT:
        return _canonical_argument(code)
    if kind == PARAMETER:
        if not code.isidentifier():
            raise SyntaxError("a parameter is named by its name alone")
        return code
    raise ValueError(f"unknown kind {kind!r}")


def target_kind(target: str, kinds: Sequence[str]) -> str:
    """The first of ``kinds`` the target can be read as."""
    for kind in kinds:
        try:
            canonical(target, kind)
        except SyntaxError:
            continue
        return kind
    raise TargetError(f"target {target!r} is not valid Python code for a {' or '.join(kinds)}")


# --------------------------------------------------------------------------- locating


class _Index(cst.CSTVisitor):
    """Every statement, expression and argument inside one function, and each node's parent."""

    def __init__(self) -> None:
        self.parent: dict[int, cst.CSTNode] = {}
        self.nodes: dict[str, list[cst.CSTNode]] = {STATEMENT: [], EXPRESSION: [], ARGUMENT: []}
        self._names_not_expressions: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        for child in node.children:
            self.parent[id(child)] = node
        if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            self.nodes[STATEMENT].append(node)
        elif isinstance(node, cst.Arg):
            self.nodes[ARGUMENT].append(node)
            if node.keyword is not None:
                self._names_not_expressions.add(id(node.keyword))
        elif isinstance(node, cst.BaseExpression) and id(node) not in self._names_not_expressions:
            self.nodes[EXPRESSION].append(node)
        if isinstance(node, cst.Attribute):
            self._names_not_expressions.add(id(node.attr))
        elif isinstance(node, cst.Param | cst.FunctionDef | cst.ClassDef):
            self._names_not_expressions.add(id(node.name))
        return True


@dataclass
class Plan:
    """Edits keyed by the identity of the nodes they touch, applied together by ``Site.apply``."""

    replace: dict[int, Any] = field(default_factory=dict)
    before: dict[int, list[cst.CSTNode]] = field(default_factory=dict)
    after: dict[int, list[cst.CSTNode]] = field(default_factory=dict)
    prepend: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    append: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)

    def touched(self) -> set[int]:
        return set(self.replace) | set(self.before) | set(self.after) | set(self.prepend) | set(self.append)


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: Plan):
        super().__init__()
        self.plan = plan
        self.touched = plan.touched()

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
        key = id(original)
        plan = self.plan
        if isinstance(updated, cst.IndentedBlock):
            body = [*plan.prepend.get(key, ()), *updated.body, *plan.append.get(key, ())]
            updated = updated.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])
        elif isinstance(updated, cst.Call) and any(id(a) in self.touched for a in original.args):
            updated = _fix_commas(original, updated)
        result = plan.replace.get(key, updated)
        pre, post = plan.before.get(key, []), plan.after.get(key, [])
        if not pre and not post:
            return result
        middle = (
            []
            if isinstance(result, cst.RemovalSentinel)
            else (list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result])
        )
        return cst.FlattenSentinel([*pre, *middle, *post])


def _fix_commas(original: cst.Call, updated: cst.Call) -> cst.Call:
    """After arguments were removed or added: no stray trailing comma, the closing layout kept."""
    args = list(updated.args)
    if not args:
        return updated
    last_original = original.args[-1]
    trailing = last_original.comma
    fixed = []
    for i, arg in enumerate(args):
        if i == len(args) - 1:
            arg = arg.with_changes(
                comma=trailing if isinstance(trailing, cst.Comma) else cst.MaybeSentinel.DEFAULT,
                whitespace_after_arg=last_original.whitespace_after_arg,
            )
        elif not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        fixed.append(arg)
    # an original argument that is no longer last keeps its comma; one that was last gets ", "
    return updated.with_changes(args=fixed)


def _function_named(module: cst.Module, name: str) -> cst.FunctionDef:
    """The top-level function ``name``, or with ``Class.method`` a method of a top-level class."""
    scope, _, method = name.rpartition(".")
    body = module.body
    if scope:
        classes = [n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == scope]
        if not classes:
            names = ", ".join(n.name.value for n in module.body if isinstance(n, cst.ClassDef)) or "none"
            raise TargetError(f"no class {scope!r} in the reference (its classes: {names})")
        body = classes[0].body.body
    matches = [n for n in body if isinstance(n, cst.FunctionDef) and n.name.value == method]
    if not matches:
        names = ", ".join(n.name.value for n in body if isinstance(n, cst.FunctionDef))
        where = f"class {scope}" if scope else "the reference"
        raise TargetError(f"no function {method!r} in {where} (it defines: {names})")
    return matches[0]


class Site:
    """One function of a module being mutated: finds targets, collects edits, applies them.

    ``function`` is a top-level function's name, or ``Class.method`` for a method of a top-level class.
    """

    def __init__(self, module: cst.Module, function: str):
        self.module = module
        self.function = function
        self.func = _function_named(module, function)
        self.index = _Index()
        self.func.body.visit(self.index)
        self.plan = Plan()
        self._canon: dict[int, str | None] = {}
        self._positions: Any = None

    # -- reading
    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def canonical_of(self, node: cst.CSTNode, kind: str) -> str | None:
        key = id(node)
        if key not in self._canon:
            code = self.code(node)
            try:
                if kind == STATEMENT:
                    if isinstance(node, cst.SimpleStatementLine) and len(node.body) != 1:
                        raise SyntaxError("several statements on one line")
                    if isinstance(node, cst.BaseCompoundStatement):
                        code = self.code(node.with_changes(leading_lines=()))
                    self._canon[key] = canonical(code, STATEMENT)
                else:
                    self._canon[key] = canonical(code, kind)
            except SyntaxError:
                self._canon[key] = None
        return self._canon[key]

    def places(self, kind: str) -> Iterator[tuple[cst.CSTNode, str]]:
        """Every node of ``kind`` in the function with its normalised code."""
        for node in self.index.nodes[kind]:
            text = self.canonical_of(node, kind)
            if text is not None:
                yield node, text

    def parameters(self) -> list[cst.Param]:
        """The function's parameters, in the order of its signature."""
        params = self.func.params
        return [*params.posonly_params, *params.params, *params.kwonly_params]

    def find_all(self, target: str, kind: str) -> list[cst.CSTNode]:
        if kind == PARAMETER:
            return [p for p in self.parameters() if p.name.value == target.strip()]
        try:
            wanted = canonical(target, kind)
        except SyntaxError as exc:
            raise TargetError(f"target {target!r} is not a valid {kind} ({exc.msg})") from None
        return [node for node, text in self.places(kind) if text == wanted]

    def find(
        self,
        target: str,
        kind: str,
        *,
        every: bool = False,
        call: str | None = None,
        occurrence: int | None = None,
    ) -> list[cst.CSTNode]:
        """The nodes the target names: exactly one, or (``every``) at least one.

        ``call`` keeps only the places inside a call whose callee (``torch.optim.Adam``) or whole
        text (``torch.optim.Adam(model.parameters(), lr=lr)``) it names; an argument target may then
        be just the keyword's name (``lr``). ``occurrence`` (1-based, in file order) picks one of several.
        """
        found = self.find_all(target, kind)
        if kind == ARGUMENT and target.strip().isidentifier():
            found = self._with_keyword(found, target.strip())
        if call is not None:
            found = self._inside_call(found, call, target, kind)
        if not found:
            raise TargetError(f"target {target!r} matches no {kind} in {self.function}()")
        if occurrence is not None:
            return [self._occurrence(found, occurrence, target, kind)]
        if len(found) > 1 and not every:
            raise self._ambiguous(found, target, kind)
        return found

    def _with_keyword(self, found: list[cst.CSTNode], name: str) -> list[cst.CSTNode]:
        """``found`` and every keyword argument called ``name``, in file order."""
        named = {id(n) for n in found} | {id(n) for n in self.index.nodes[ARGUMENT]
                                          if n.keyword is not None and n.keyword.value == name}
        return [n for n in self.index.nodes[ARGUMENT] if id(n) in named]  # file order, as visited

    def _inside_call(self, found: list[cst.CSTNode], call: str, target: str, kind: str) -> list[cst.CSTNode]:
        """The places of ``found`` inside a call ``call`` names; TargetError when there are none."""
        calls = self._calls_named(call)
        if not calls:
            raise TargetError(f"call {call!r} matches no call in {self.function}()")
        found = [n for n in found if any(self.contains(c, n) and c is not n for c in calls)]
        if not found:
            raise TargetError(f"target {target!r} matches no {kind} inside a call to {call!r} "
                              f"in {self.function}()")
        return found

    def _occurrence(self, found: list[cst.CSTNode], occurrence: int, target: str, kind: str) -> cst.CSTNode:
        """The ``occurrence``-th place of ``found`` (1-based); TargetError when out of range."""
        if not 1 <= occurrence <= len(found):
            raise TargetError(f"occurrence = {occurrence}, but target {target!r} matches {len(found)} "
                              f"{kind}(s) in {self.function}() (count from 1, in file order)")
        return found[occurrence - 1]

    def _ambiguous(self, found: list[cst.CSTNode], target: str, kind: str) -> TargetError:
        """The error for a target that names several places, with their lines and how to name one."""
        lines = ", ".join(str(self.line_of(n)) for n in found)
        hint = "make it longer so it names one place"
        if kind == ARGUMENT:
            hint = "name the call it belongs to (call = \"torch.optim.Adam\")"
        return TargetError(
            f"target {target!r} matches {len(found)} {kind}s in {self.function}() (lines {lines}); "
            f"{hint}, or pick one with occurrence = N (1 = line {lines.split(',')[0]}), "
            "or set every = true"
        )

    def _calls_named(self, call: str) -> list[cst.Call]:
        """The calls whose callee, or whole text, is ``call`` (normalised)."""
        try:
            wanted = canonical(call, EXPRESSION)
        except SyntaxError as exc:
            raise TargetError(f"call {call!r} is not a valid expression ({exc.msg})") from None
        out = []
        for node, text in self.places(EXPRESSION):
            if isinstance(node, cst.Call) and (text == wanted or self.canonical_of(node.func, EXPRESSION) == wanted):
                out.append(node)
        return out

    def line_of(self, node: cst.CSTNode) -> int:
        """The line where ``node`` starts in the module (1-based)."""
        if self._positions is None:
            wrapper = cst.metadata.MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(cst.metadata.PositionProvider)
        return self._positions[node].start.line if node in self._positions else 0

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.index.parent.get(id(node))

    def block_of(self, stmt: cst.CSTNode) -> tuple[Sequence[cst.CSTNode], int]:
        """The statement sequence holding ``stmt``, and its index there."""
        parent = self.parent(stmt)
        body = parent.body if isinstance(parent, cst.IndentedBlock) else self.func.body.body
        for i, node in enumerate(body):
            if node is stmt:
                return body, i
        raise OperatorError("statement is not directly inside a block")

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        node: cst.CSTNode | None = inner
        while node is not None:
            if node is outer:
                return True
            node = self.parent(node)
        return False

    # -- editing
    def remove(self, node: cst.CSTNode) -> None:
        self.plan.replace[id(node)] = cst.RemoveFromParent()

    def replace(self, node: cst.CSTNode, new: cst.CSTNode | Sequence[cst.CSTNode]) -> None:
        if isinstance(new, cst.CSTNode):
            self.plan.replace[id(node)] = new
        else:
            self.plan.replace[id(node)] = cst.FlattenSentinel(list(new)) if new else cst.RemoveFromParent()

    def insert(self, anchor: cst.CSTNode, nodes: Sequence[cst.CSTNode], position: str) -> None:
        if position not in POSITIONS:
            raise OperatorError(f"position {position!r}: use one of {', '.join(POSITIONS)}")
        if position in ("before", "after"):
            table = self.plan.before if position == "before" else self.plan.after
            table.setdefault(id(anchor), []).extend(nodes)
            return
        body = getattr(anchor, "body", None)
        if not isinstance(body, cst.IndentedBlock):
            raise OperatorError(
                f"position {position!r} needs a block statement (for, if, with, ...) as anchor"
            )
        table = self.plan.prepend if position == "first_in" else self.plan.append
        table.setdefault(id(body), []).extend(nodes)

    def apply(self) -> cst.Module:
        new_func = self.func.visit(_Apply(self.plan))
        if any(node is self.func for node in self.module.body):  # a top-level function: no walk of the module
            return self.module.with_changes(body=[new_func if n is self.func else n for n in self.module.body])
        return self.module.deep_replace(self.func, new_func)


# --------------------------------------------------------------------------- helpers


def _statements(code: str) -> list[cst.BaseStatement]:
    try:
        return list(cst.parse_module(code.strip() + "\n").body)
    except cst.ParserSyntaxError as exc:
        raise OperatorError(f"replacement {code!r} is not valid Python statements: {exc.message}") from None


_ATOMIC = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.BaseNumber,
    cst.BaseString,
    cst.Tuple,
    cst.List,
    cst.Dict,
    cst.Set,
)


_BINDS_TIGHTER = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.BooleanOperation,
    cst.Comparison,
    cst.Attribute,
    cst.Subscript,
    cst.Await,
    cst.IfExp,
)
"""Parents in which a compound replacement could bind differently without parentheses."""


def _expression(code: str, parent: cst.CSTNode | None = None, node: cst.CSTNode | None = None) -> cst.BaseExpression:
    """The replacement expression, parenthesised only where its parent would otherwise read it
    differently (an operand, a callee, an attribute's object): elsewhere it keeps the author's text."""
    try:
        expr = cst.parse_expression(code.strip())
    except cst.ParserSyntaxError as exc:
        raise OperatorError(f"replacement {code!r} is not a valid Python expression: {exc.message}") from None
    needs = isinstance(parent, _BINDS_TIGHTER) or (isinstance(parent, cst.Call) and parent.func is node)
    needs = needs or isinstance(expr, cst.Tuple | cst.NamedExpr | cst.Lambda | cst.Yield)
    if needs and not isinstance(expr, _ATOMIC) and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _arguments(code: str) -> list[cst.Arg]:
    if not code.strip():
        return []
    try:
        call = cst.parse_expression(f"f({code.strip()})")
    except cst.ParserSyntaxError as exc:
        raise OperatorError(f"{code!r} is not a valid argument list: {exc.message}") from None
    assert isinstance(call, cst.Call)
    return [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace(""))
        for a in call.args
    ]


def _kind(*kinds: str) -> Callable[[Callable], Callable]:
    """Say what the operator's target is: a statement, an expression or an argument."""

    def deco(fn: Callable) -> Callable:
        fn.kinds = kinds  # type: ignore[attr-defined]
        return fn

    return deco


# --------------------------------------------------------------------------- the operators


@_kind(STATEMENT)
def delete_statement(site: Site, node: cst.BaseStatement) -> None:
    """`optimizer.zero_grad()` -> (nothing); its own comment lines go with it."""
    site.remove(node)


@_kind(STATEMENT)
def replace_statement(site: Site, node: cst.BaseStatement, replacement: str) -> None:
    """`n_seen += len(y)` -> `n_seen += 1` (one or more statements; an empty replacement deletes)."""
    new = _statements(replacement)
    if new and isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
        new[0] = new[0].with_changes(leading_lines=node.leading_lines)
    site.replace(node, new)


@_kind(STATEMENT)
def insert_statement(site: Site, node: cst.BaseStatement, code: str, position: str = "after") -> None:
    """`a` -> `a; code` (position: before, after, first_in or last_in the target's block)."""
    site.insert(node, _statements(code), position)


@_kind(STATEMENT)
def move_statement(site: Site, node: cst.BaseStatement, anchor: str, position: str = "after") -> None:
    """`a; b; c` -> `b; c; a` (moved before/after another statement, or first_in/last_in a block)."""
    [where] = site.find(anchor, STATEMENT)
    if site.contains(node, where):
        raise OperatorError(f"cannot move a statement relative to {anchor!r}, which is inside it")
    site.remove(node)
    site.insert(where, [node], position)


@_kind(STATEMENT)
def swap_statements(site: Site, node: cst.BaseStatement) -> None:
    """`a; b` -> `b; a` (the target and the statement right after it in the same block)."""
    body, i = site.block_of(node)
    if i + 1 >= len(body):
        raise OperatorError("the target is the last statement of its block: nothing follows it to swap with")
    nxt = body[i + 1]
    site.replace(node, nxt)
    site.replace(nxt, node)


@_kind(STATEMENT)
def unwrap_with(site: Site, node: cst.BaseStatement) -> None:
    """`with torch.no_grad(): body` -> `body` (the block's statements replace it, one level out)."""
    if not isinstance(node, cst.With):
        raise OperatorError(f"unwrap_with needs a `with` statement, got {type(node).__name__}")
    if not isinstance(node.body, cst.IndentedBlock):
        raise OperatorError("unwrap_with needs a `with` block on its own lines")
    site.replace(node, list(node.body.body))


@_kind(STATEMENT)
def drop_assignment(site: Site, node: cst.BaseStatement) -> None:
    """`x = x.to(device)` -> `x.to(device)` (the value is computed, then thrown away)."""
    small = node.body[0] if isinstance(node, cst.SimpleStatementLine) else None
    if not isinstance(small, cst.Assign | cst.AnnAssign | cst.AugAssign) or small.value is None:
        raise OperatorError(
            f"drop_assignment needs an assignment with a value, got {site.code(node).strip()!r}"
        )
    site.replace(node, node.with_changes(body=[cst.Expr(small.value)]))


@_kind(EXPRESSION, ARGUMENT)
def replace_expression(site: Site, node: cst.CSTNode, replacement: str) -> None:
    """`logits.argmax(dim=1)` -> `logits.argmax()`; an argument `shuffle=True` -> `shuffle=False`."""
    if isinstance(node, cst.Arg):
        site.replace(node, _arguments(replacement))
    else:
        site.replace(node, _expression(replacement, site.parent(node), node))


@_kind(EXPRESSION)
def remove_call(site: Site, node: cst.BaseExpression) -> None:
    """`model.train()` -> `model.train` (the method is named, never called)."""
    if not isinstance(node, cst.Call):
        raise OperatorError(f"remove_call needs a call, got {site.code(node).strip()!r}")
    site.replace(node, node.func.with_changes(lpar=node.lpar, rpar=node.rpar))


@_kind(EXPRESSION)
def drop_method_call(site: Site, node: cst.BaseExpression) -> None:
    """`loss.item()` -> `loss` (the object itself instead of what the method returns)."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        raise OperatorError(
            f"drop_method_call needs a method call obj.name(...), got {site.code(node).strip()!r}"
        )
    site.replace(node, node.func.value)


@_kind(ARGUMENT)
def remove_argument(site: Site, node: cst.Arg) -> None:
    """`DataLoader(ds, shuffle=True, generator=g)` -> `DataLoader(ds, shuffle=True)`."""
    site.remove(node)


@_kind(ARGUMENT)
def insert_argument(site: Site, node: cst.Arg, argument: str, position: str = "after") -> None:
    """`DataLoader(ds, shuffle=True)` -> `DataLoader(ds, shuffle=True, drop_last=True)`."""
    if position not in ("before", "after"):
        raise OperatorError(f"insert_argument position {position!r}: use before or after")
    site.insert(node, _arguments(argument), position)


@_kind(EXPRESSION)
def set_keyword(site: Site, node: cst.BaseExpression, keyword: str, value: str) -> None:
    """`Adam(params, lr=lr)` -> `Adam(params, lr=lr, weight_decay=0.01)` (a keyword added, or its value changed).

    The target names the call, or just its callee (`torch.optim.Adam`)."""
    call = node
    if not isinstance(call, cst.Call):
        parent = site.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            call = parent  # the target names the callee: `torch.optim.Adam`
        else:
            raise OperatorError(f"set_keyword needs a call (or its callee), got {site.code(node).strip()!r}")
    if not keyword.isidentifier():
        raise OperatorError(f"keyword {keyword!r} is not a Python name")
    new_value = _expression(value)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            if site.canonical_of(arg.value, EXPRESSION) == canonical(value, EXPRESSION):
                raise OperatorError(f"{keyword} is already {value} in {site.code(call).strip()!r}")
            site.replace(arg, arg.with_changes(value=new_value))
            return
    if any(a.star == "**" for a in call.args):
        raise OperatorError(f"{site.code(call).strip()!r} passes **kwargs: add the keyword there instead")
    [new_arg] = _arguments(f"{keyword}={value}")
    if call.args:
        site.insert(call.args[-1], [new_arg], "after")
    else:
        site.replace(call, call.with_changes(args=[new_arg]))


# ------------------------------------------------------------------ boundary operators (a threshold on a parameter)
# Each rebinds ONE parameter at the function's entry, so the rest of the function runs as written on a value
# changed on one side of the threshold only: what a bug conditioned on an argument looks like. Generated by
# ``kata mutants generate --boundary`` at thresholds spread over each parameter's domain
# (``checker.setting.domains``); a survivor is a threshold the checks' argument classes never cross.


def _at_entry(site: Site, code: str) -> None:
    """Insert ``code`` as the function's first statements (after its docstring, if it has one)."""
    body = site.func.body.body
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, cst.SimpleString | cst.ConcatenatedString):
        site.insert(body[0], _statements(code), "after")
    else:
        site.insert(site.func, _statements(code), "first_in")


def _threshold(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OperatorError(f"threshold {value!r} is not a number")
    return repr(value)


def _optional(node: cst.Param) -> bool:
    """Is the parameter's default None (the argument may be absent)?"""
    return isinstance(node.default, cst.Name) and node.default.value == "None"


def _guarded(node: cst.Param, condition: str, code: str) -> str:
    """``if condition: code``, with an ``is not None`` test first for a parameter that defaults to None."""
    name = node.name.value
    test = f"{name} is not None and {condition}" if _optional(node) else condition
    body = "\n".join(f"    {line}" for line in code.strip().splitlines())
    return f"if {test}:\n{body}\n"


def _clamp(site: Site, node: cst.Param, how: str, threshold: Any) -> None:
    name = node.name.value
    code = f"{name} = {how}({name}, {_threshold(threshold)})"
    _at_entry(site, f"if {name} is not None:\n    {code}\n" if _optional(node) else code)


@_kind(PARAMETER)
def clamp_above(site: Site, node: cst.Param, threshold: Any) -> None:
    """`def f(lr)` -> `def f(lr): lr = min(lr, T)` (a cap: every value above T acts as T)."""
    _clamp(site, node, "min", threshold)


@_kind(PARAMETER)
def clamp_below(site: Site, node: cst.Param, threshold: Any) -> None:
    """`def f(lr)` -> `def f(lr): lr = max(lr, T)` (a floor: every value below T acts as T)."""
    _clamp(site, node, "max", threshold)


ROW_FORMS = ("tensor", "dataset", "loader", "pair")
"""What ``keep_rows`` cuts: a tensor or list (``X[:T]``), a Dataset (its first T items), a loader of ``(x, y)``
batches (its first T rows, every epoch), a pair of tensors such as ``val=(X, y)``."""


@_kind(PARAMETER)
def keep_rows(site: Site, node: cst.Param, threshold: Any, form: str = "tensor", together: str = "") -> None:
    """`def f(X, y)` -> `def f(X, y): X, y = X[:T], y[:T]` (only the first T rows are used; `together`: the
    parameters cut alongside, comma-separated; `form`: tensor, dataset, loader or pair)."""
    name, t = node.name.value, _threshold(threshold)
    if not isinstance(threshold, int) or threshold < 0:
        raise OperatorError(f"keep_rows needs a whole number of rows, got {threshold!r}")
    names = [name, *(n.strip() for n in together.split(",") if n.strip())]
    known = {p.name.value for p in site.parameters()}
    if any(n not in known for n in names):
        raise OperatorError(f"together = {together!r} names a parameter {site.function}() does not have")
    if form == "tensor":
        code = f"{', '.join(names)} = {', '.join(f'{n}[:{t}]' for n in names)}"
    elif form == "dataset":
        code = f"{name} = torch.utils.data.Subset({name}, range(min(len({name}), {t})))"
    elif form == "loader":
        # a loader that can be iterated every epoch, each time stopping after its first T rows
        code = (f"def _first_rows(batches, limit={t}):\n"
                f"    seen = 0\n"
                f"    for x, y in batches:\n"
                f"        if seen >= limit:\n"
                f"            return\n"
                f"        yield x[:limit - seen], y[:limit - seen]\n"
                f"        seen += len(y)\n"
                f"{name} = type('FirstRows', (), {{'__iter__': lambda self, batches={name}: _first_rows(batches)}})()")
    elif form == "pair":
        code = f"{name} = ({name}[0][:{t}], {name}[1][:{t}])"
    else:
        raise OperatorError(f"keep_rows form {form!r}: use one of {', '.join(ROW_FORMS)}")
    _at_entry(site, f"if {name} is not None:\n    {code}\n" if _optional(node) else code)


@_kind(PARAMETER)
def switch_past(site: Site, node: cst.Param, threshold: Any, code: str, of: str = "", below: bool = False) -> None:
    """`def f(clip_norm)` -> `def f(clip_norm): if clip_norm > T: clip_norm = None` (a behaviour, `code`,
    switched on only past T: a clip dropped, a step skipped, the remainder dropped, a seed reduced). `of`: what is
    compared with T instead of the parameter itself, `{p}` standing for it (an object's figure, such as
    `{p}.param_groups[0]["lr"]`); `below`: switched on under T instead of past it."""
    name, t = node.name.value, _threshold(threshold)
    _statements(code)  # a clear error for code that does not parse
    compared = of.replace("{p}", name) if of else name
    try:
        cst.parse_expression(compared)
    except cst.ParserSyntaxError as exc:
        raise OperatorError(f"switch_past: `of` is not an expression: {of!r}") from exc
    _at_entry(site, _guarded(node, f"{compared} {'<' if below else '>'} {t}", code))


OPERATORS: dict[str, Callable[..., None]] = {
    "delete_statement": delete_statement,
    "replace_statement": replace_statement,
    "insert_statement": insert_statement,
    "move_statement": move_statement,
    "swap_statements": swap_statements,
    "unwrap_with": unwrap_with,
    "drop_assignment": drop_assignment,
    "replace_expression": replace_expression,
    "remove_call": remove_call,
    "drop_method_call": drop_method_call,
    "remove_argument": remove_argument,
    "insert_argument": insert_argument,
    "set_keyword": set_keyword,
    "clamp_above": clamp_above,
    "clamp_below": clamp_below,
    "keep_rows": keep_rows,
    "switch_past": switch_past,
}
"""Every operator, by the name mutant files use."""


def operator_params(name: str) -> tuple[list[str], list[str]]:
    """(required, optional) argument names an operator takes besides its target."""
    sig = inspect.signature(OPERATORS[name])
    params = list(sig.parameters.values())[2:]
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    optional = [p.name for p in params if p.default is not inspect.Parameter.empty]
    return required, optional


def describe(name: str) -> str:
    """The operator's one-line 'before -> after'."""
    return (OPERATORS[name].__doc__ or "").strip().splitlines()[0]


def apply_step(
    module: cst.Module,
    operator: str,
    function: str,
    target: str,
    *,
    every: bool = False,
    call: str | None = None,
    occurrence: int | None = None,
    **args: Any,
) -> cst.Module:
    """Apply one operator at the place(s) ``target`` names inside ``function``; the new module.

    ``call`` and ``occurrence`` narrow the target (see ``Site.find``)."""
    if operator not in OPERATORS:
        raise OperatorError(f"unknown operator {operator!r} (known: {', '.join(OPERATORS)})")
    op = OPERATORS[operator]
    site = Site(module, function)
    kinds = op.kinds  # type: ignore[attr-defined]
    if call is not None and ARGUMENT in kinds and target.strip().isidentifier():
        kind = ARGUMENT  # `call` + a keyword's name
    else:
        kind = target_kind(target, kinds)
    for node in site.find(target, kind, every=every, call=call, occurrence=occurrence):
        op(site, node, **args)
    return site.apply()
