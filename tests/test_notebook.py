"""Notebooks as loop files: code cells in order, IPython-only lines skipped with a note, errors by cell
and line, and the starter written as a notebook."""

from __future__ import annotations

import json

import nbformat
import pytest

from checker.base.errors import LoopFileError
from checker.base.i18n import Message
from checker.catalogue.katas import Kata
from checker.cli import main
from checker.engine.grading import grade_one
from checker.loopfile.loading import compile_source, learner_traceback, load_loop, read_source
from checker.loopfile.notebook import _POSITIONS, cell_position, starter_notebook
from tests.conftest import REFERENCE


def reference_cells() -> list[str]:
    """The reference cut at its top-level blank-line pairs: header, then one definition per cell."""
    return [chunk.strip("\n") for chunk in REFERENCE.read_text().split("\n\n\n") if chunk.strip()]


def notebook(cells: list[tuple[str, str]], **metadata) -> str:
    nb = nbformat.v4.new_notebook()
    for kind, text in cells:
        cell = nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text)
        nb.cells.append(cell)
    for index, tags in metadata.get("tags", {}).items():
        nb.cells[index].metadata["tags"] = tags
    return nbformat.writes(nb)


def reference_notebook(edit=None) -> list[tuple[str, str]]:
    """A markdown title, a setup cell with IPython lines, then the reference in cells (``edit`` alters)."""
    cells = reference_cells()
    if edit:
        cells = edit(cells)
    return ([("markdown", "# My loop")]
            + [("code", "%matplotlib inline\n!pip list\n" + cells[0])]
            + [("code", c) for c in cells[1:]])


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_code_cells_are_taken_in_order_and_markdown_is_left_out(tmp_path):
    nb = notebook([("markdown", "some *notes*"), ("code", "a = 1"), ("markdown", "more"),
                   ("code", "b = a + 1")])
    source, _ = read_source(write(tmp_path, "nb.ipynb", nb))
    assert "notes" not in source and "more" not in source
    assert source.index("# %% cell 2\na = 1") < source.index("# %% cell 4\nb = a + 1")
    namespace: dict = {}
    exec(compile_source(source, "nb.ipynb"), namespace)
    assert namespace["b"] == 2


def test_magics_and_shell_lines_are_skipped_with_a_note(tmp_path):
    nb = notebook([
        ("code", "%matplotlib inline\n!pip list\nfiles = !ls\nx = 1\n"
                 "if x:\n    %time y = x + 1\n    !echo hi"),
        ("code", "%%bash\necho this is shell\nls -l"),
        ("code", "%%time\nz = 3"),
        ("code", "model = 2\nmodel?"),
    ])
    source, _ = read_source(write(tmp_path, "nb.ipynb", nb))
    assert "pass  # kata: skipped IPython magic `%matplotlib inline`" in source
    assert "pass  # kata: skipped shell line `!pip list`" in source
    assert "pass  # kata: skipped shell line `files = !ls`" in source
    assert "    pass  # kata: skipped shell line `!echo hi`" in source
    assert "pass  # kata: skipped cell magic, and the cell with it `%%bash`" in source
    assert "# echo this is shell" in source
    assert "pass  # kata: skipped IPython help line `model?`" in source
    namespace: dict = {}
    exec(compile_source(source, "nb.ipynb"), namespace)
    # `%time stmt` and a `%%time` cell run their Python once in IPython, so they still run here
    assert namespace["y"] == 2 and namespace["z"] == 3 and namespace["model"] == 2
    assert "files" not in namespace


def test_a_cell_that_is_plain_python_is_never_rewritten(tmp_path):
    code = 'x = (10\n% 3)\ntext = """\n!not a shell line\n%not a magic\n"""'
    source, _ = read_source(write(tmp_path, "nb.ipynb", notebook([("code", code)])))
    assert code in source
    namespace: dict = {}
    exec(compile_source(source, "nb.ipynb"), namespace)
    assert namespace["x"] == 1 and "!not a shell line" in namespace["text"]


def test_the_reference_as_a_notebook_with_magics_loads_and_follows_the_protocol(tmp_path):
    source, filename = read_source(write(tmp_path, "ref.ipynb", notebook(reference_notebook())))
    module = load_loop(source, filename)
    assert module.make_model().__class__.__name__ == "Sequential"


def test_a_syntax_error_names_the_cell_and_the_line(tmp_path):
    def broken(cells):
        i = next(i for i, c in enumerate(cells) if c.startswith("def make_model"))
        cells[i] = cells[i].replace("    torch.manual_seed(seed)", "    torch.manual_seed(seed")
        return cells

    cells = reference_notebook(broken)
    cell_no = next(i for i, (_, c) in enumerate(cells, start=1) if c.startswith("def make_model"))
    line_no = cells[cell_no - 1][1].splitlines().index("    torch.manual_seed(seed") + 1
    path = write(tmp_path, "nb.ipynb", notebook(cells))
    source, filename = read_source(path)
    with pytest.raises(LoopFileError) as err:
        compile_source(source, filename)
    assert err.value.kind == "syntax"
    assert f"nb.ipynb, cell {cell_no}, line " in err.value.message
    # the parser may blame the unclosed line or the one after it; either is in the right cell
    blamed = int(err.value.message.split(", line ")[1].split(":")[0])
    assert blamed in (line_no, line_no + 1)


def test_a_syntax_error_through_the_cli_exits_2_naming_the_cell(tmp_path, runner):
    cells = [("markdown", "x"), ("code", "a = 1"), ("code", "b = 2\nc = (")]
    path = write(tmp_path, "nb.ipynb", notebook(cells))
    result = runner.invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert "cell 3, line 2" in result.output
    assert "Traceback" not in result.output


def test_a_traceback_from_a_check_names_the_cell_and_the_line(tmp_path, lab):
    def raising(cells):
        i = next(i for i, c in enumerate(cells) if c.startswith("def train_epoch"))
        cells[i] = cells[i].replace("    model.train()\n",
                                    "    model.train()\n    raise RuntimeError('boom')\n")
        return cells

    cells = reference_notebook(raising)
    cell_no = next(i for i, (_, c) in enumerate(cells, start=1) if c.startswith("def train_epoch"))
    line_no = cells[cell_no - 1][1].splitlines().index("    raise RuntimeError('boom')") + 1
    source, filename = read_source(write(tmp_path, "nb.ipynb", notebook(cells)))
    report = grade_one(source, filename, lab, check_ids=["steps.overfit"])
    (res,) = report.checks
    assert res.status == "error"
    assert f'nb.ipynb", cell {cell_no}, line {line_no}, in train_epoch' in res.message
    assert "RuntimeError: boom" in res.message


def test_positions_are_rebuilt_from_the_markers_when_not_registered(tmp_path):
    cells = [("markdown", "m"), ("code", "def f():\n    return 1 / 0")]
    source, filename = read_source(write(tmp_path, "nb.ipynb", notebook(cells)))
    registered = cell_position(filename, source.splitlines().index("    return 1 / 0") + 1)
    _POSITIONS.pop(filename)
    module = load_loop.__globals__["load_module"](source, filename)
    with pytest.raises(ZeroDivisionError) as err:
        module.f()
    assert registered == (2, 2)
    assert 'cell 2, line 2, in f' in learner_traceback(err.value, filename)


def test_a_cell_tagged_kata_skip_is_left_out(tmp_path):
    cells = [("code", "a = 1"), ("code", "while True:\n    pass"), ("code", "b = a")]
    nb = notebook(cells, tags={1: ["kata-skip"]})
    source, _ = read_source(write(tmp_path, "nb.ipynb", nb))
    assert "while True" not in source and "cell 2 skipped (tagged kata-skip)" in source
    namespace: dict = {}
    exec(compile_source(source, "nb.ipynb"), namespace)
    assert namespace["b"] == 1


@pytest.mark.parametrize("text, expected", [
    ("this is not json", "not valid JSON"),
    ("[1, 2]", "not a readable Jupyter notebook"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 3}), "'cells' is not a list"),
    (json.dumps({"metadata": {}}), "not a readable Jupyter notebook"),
])
def test_a_malformed_notebook_is_a_notebook_error(tmp_path, text, expected):
    with pytest.raises(LoopFileError) as err:
        read_source(write(tmp_path, "bad.ipynb", text))
    assert err.value.kind == "notebook"
    assert "bad.ipynb" in err.value.message and expected in err.value.message


def test_a_malformed_notebook_through_the_cli_exits_2_without_a_traceback(tmp_path, runner):
    result = runner.invoke(main, ["check", str(write(tmp_path, "bad.ipynb", "{oops"))])
    assert result.exit_code == 2
    assert "bad.ipynb is not a Jupyter notebook" in result.output
    assert "Traceback" not in result.output


def test_a_notebook_without_code_is_empty(tmp_path):
    with pytest.raises(LoopFileError) as err:
        read_source(write(tmp_path, "nb.ipynb", notebook([("markdown", "only words")])))
    assert err.value.kind == "empty"


def _kata() -> Kata:
    return Kata(
        slug="zero-grad", number=10, path=REFERENCE, mutant="zero-grad-missing",
        title=Message(en="The loss turns around", es="La pérdida da la vuelta"),
        story=Message(en="The loss falls, then climbs.", es="La pérdida baja y luego sube."),
        hints=(Message(en="h", es="p"),), read=Message(en="r", es="l"),
        try_args=("--optimizer", "sgd", "--epochs", "10"),
    )


@pytest.mark.parametrize("lang, title, story, command", [
    ("en", "The loss turns around", "The loss falls, then climbs.", "kata check zero-grad.ipynb"),
    ("es", "La pérdida da la vuelta", "La pérdida baja y luego sube.", "kata check zero-grad.ipynb"),
])
def test_starter_notebook_has_the_story_then_the_loop(tmp_path, lang, title, story, command):
    text = starter_notebook(_kata(), lang, source=REFERENCE.read_text())
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    first, *code = nb.cells
    assert first.cell_type == "markdown"
    assert first.source.startswith(f"# {title}\n\n{story}")
    assert command in first.source and "kata run zero-grad.ipynb --optimizer sgd --epochs 10" in first.source
    assert all(c.cell_type == "code" for c in code) and len(code) > 5
    # nothing lost or reordered: the cells joined are the source, blank lines aside
    joined = [ln for c in code for ln in c.source.splitlines() if ln.strip()]
    assert joined == [ln for ln in REFERENCE.read_text().splitlines() if ln.strip()]
    assert any(c.source.startswith("def train_epoch(") for c in code)
    # and the checker reads it back as a loop that follows the protocol
    source, filename = read_source(write(tmp_path, "zero-grad.ipynb", text))
    load_loop(source, filename)


KATA_TOML = """\
mutant = "zero-grad-missing"
[title]
en = "Test kata title"
es = "Título de la kata de prueba"
[story]
en = "Test story in English."
es = "Historia de prueba en español."
[[hints]]
en = "a hint"
es = "una pista"
[read]
en = "something"
es = "algo"
[try]
args = ["--epochs", "10"]
"""


def test_kata_next_notebook_writes_a_gradable_starter_notebook(tmp_path, runner, monkeypatch):
    katas, work = tmp_path / "katas", tmp_path / "work"
    katas.mkdir()
    work.mkdir()
    (katas / "010-zero-grad.toml").write_text(KATA_TOML)
    monkeypatch.setenv("KATA_KATAS_DIR", str(katas))
    result = runner.invoke(main, ["next", "--notebook", "--dir", str(work), "--lang", "es"])
    assert result.exit_code == 0, result.output
    path = work / "zero-grad.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].cell_type == "markdown"
    assert nb.cells[0].source.startswith("# Título de la kata de prueba\n\nHistoria de prueba en español.")
    assert "kata run zero-grad.ipynb --epochs 10" in nb.cells[0].source
    assert not (work / "zero-grad.py").exists()
    # the same starter again: an identical file, so it is recognised as untouched
    again = runner.invoke(main, ["next", "--notebook", "--dir", str(work), "--lang", "es"])
    assert again.exit_code == 0, again.output
    assert "ya estaba, sigue siendo el inicial" in again.output
    # and the checker grades it: the kata's bug is caught
    checked = runner.invoke(main, ["check", str(path), "--only", "steps.fresh_grads", "--json"])
    assert checked.exit_code == 1, checked.output
    assert json.loads(checked.output)["checks"][0]["status"] == "fail"


def test_starter_notebook_is_the_same_text_every_time():
    source = REFERENCE.read_text()
    assert starter_notebook(_kata(), "en", source=source) == starter_notebook(_kata(), "en", source=source)


def test_a_syntax_error_shows_the_cells_code_not_the_notebooks_json(tmp_path, runner):
    cells = [("markdown", "x"), ("code", "a = 1"), ("code", "b = 2\nc = = 3")]
    path = write(tmp_path, "nb.ipynb", notebook(cells))
    result = runner.invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    excerpt = result.output.split("syntax error")[1]
    assert "c = = 3" in excerpt and '"source"' not in excerpt and '"cell_type"' not in excerpt, result.output


def test_what_you_changed_in_a_notebook_is_a_diff_of_its_code(tmp_path, runner, monkeypatch):
    katas, work = tmp_path / "katas", tmp_path / "work"
    katas.mkdir()
    work.mkdir()
    (katas / "010-zero-grad.toml").write_text(KATA_TOML)
    monkeypatch.setenv("KATA_KATAS_DIR", str(katas))
    assert runner.invoke(main, ["next", "--notebook", "--dir", str(work), "--lang", "en"]).exit_code == 0
    path = work / "zero-grad.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "logits = model(x)" in cell.source:
            cell.source = cell.source.replace("        logits = model(x)",
                                              "        optimizer.zero_grad()\n        logits = model(x)", 1)
    nbformat.write(nb, str(path))
    result = runner.invoke(main, ["check", "--dir", str(work), "--lang", "en"])
    assert result.exit_code == 0, result.output
    diff = result.output.split("What you changed")[1]
    assert "+        optimizer.zero_grad()" in diff
    assert '"source"' not in diff and '\\n"' not in diff, diff


SECOND_KATA_TOML = KATA_TOML.replace('"zero-grad-missing"', '"train-mode-missing"').replace(
    "Test kata title", "Second test kata")


def _fixed_notebook(path) -> None:
    """The learner's session in Jupyter: the fix, a scratch cell added at the top (every cell below is
    renumbered), every cell run (execution counts, outputs)."""
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "logits = model(x)" in cell.source:
            cell.source = cell.source.replace("        logits = model(x)",
                                              "        optimizer.zero_grad()\n        logits = model(x)", 1)
    nb.cells.insert(1, nbformat.v4.new_code_cell("scratch = 1 + 1"))
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"run {n}\n")]
    nbformat.write(nb, str(path))


def test_a_notebook_kata_checked_by_its_path_is_solved_and_next_moves_on(tmp_path, runner, monkeypatch):
    """Issue 21: `kata check NAME.ipynb`, as the notebook says, records the solve; `kata next` moves on."""
    katas, work = tmp_path / "katas", tmp_path / "work"
    katas.mkdir()
    work.mkdir()
    (katas / "010-zero-grad.toml").write_text(KATA_TOML)
    (katas / "020-train-mode.toml").write_text(SECOND_KATA_TOML)
    monkeypatch.setenv("KATA_KATAS_DIR", str(katas))
    monkeypatch.setenv("KATA_LANG", "en")
    monkeypatch.delenv("KATA_DIR", raising=False)
    monkeypatch.chdir(work)
    assert runner.invoke(main, ["next", "--notebook"]).exit_code == 0
    path = work / "zero-grad.ipynb"
    assert "kata check zero-grad.ipynb" in nbformat.read(str(path), as_version=4).cells[0].source
    _fixed_notebook(path)
    result = runner.invoke(main, ["check", "zero-grad.ipynb"])
    assert result.exit_code == 0, result.output
    assert "Solved!" in result.output
    progress = json.loads((work / ".kata" / "progress.json").read_text())
    assert progress["katas"]["zero-grad"]["solved"] and progress["katas"]["zero-grad"]["checks"] == 1
    # the diff is the learner's code: the fix and the added cell, no renumbered cell markers, no outputs
    diff = result.output.split("What you changed")[1].split("Next:")[0]
    added = [ln.strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert "+        optimizer.zero_grad()" in diff and "scratch = 1 + 1" in diff, diff
    assert not any("cell" in ln for ln in diff.splitlines() if ln[:1] in "+-"), diff
    assert "run 0" not in diff and "execution_count" not in diff
    assert len(added) <= 4, diff
    nxt = runner.invoke(main, ["next"])
    assert nxt.exit_code == 0 and "Second test kata" in nxt.output and "not solved yet" not in nxt.output


def test_watch_after_a_notebook_kata_opens_the_next_as_a_notebook(tmp_path, runner, monkeypatch):
    katas, work = tmp_path / "katas", tmp_path / "work"
    katas.mkdir()
    work.mkdir()
    (katas / "010-zero-grad.toml").write_text(KATA_TOML)
    (katas / "020-train-mode.toml").write_text(SECOND_KATA_TOML)
    monkeypatch.setenv("KATA_KATAS_DIR", str(katas))
    monkeypatch.setenv("KATA_LANG", "en")
    monkeypatch.delenv("KATA_DIR", raising=False)
    monkeypatch.chdir(work)
    assert runner.invoke(main, ["next", "--notebook"]).exit_code == 0
    _fixed_notebook(work / "zero-grad.ipynb")
    result = runner.invoke(main, ["watch", "--max-checks", "0"])
    assert result.exit_code == 0, result.output
    progress = json.loads((work / ".kata" / "progress.json").read_text())
    assert progress["katas"]["zero-grad"]["solved"] and progress["current"] == "train-mode"
    assert progress["katas"]["train-mode"]["file"] == "train-mode.ipynb"
    assert (work / "train-mode.ipynb").exists() and not (work / "train-mode.py").exists()
