"""The instructor's commands: `kata grade` (a class folder into a gradebook) and `kata new` (scaffolding)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest

from checker.cli import main
from checker.grading import RERUN_MIN_SECONDS
from tests.conftest import REFERENCE

GRADE_CHECKS = ("steps.overfit", "steps.fresh_grads")

TIMEOUT = 8  # seconds per check: far above what a check takes on the reference, short for a hang


def _edit(old: str, new: str) -> str:
    source = REFERENCE.read_text()
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _notebook_of_reference() -> str:
    """The reference cut into cells at its top-level blank-line pairs, with a magic and a shell line."""
    chunks = [c.strip("\n") for c in REFERENCE.read_text().split("\n\n\n") if c.strip()]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# My training loop"),
                nbformat.v4.new_code_cell("%matplotlib inline\n!pip list\n" + chunks[0])]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in chunks[1:]]
    return nbformat.writes(nb)


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("class")
    (folder / "a_correct.py").write_text(REFERENCE.read_text())
    (folder / "b_no_zero_grad.py").write_text(_edit("        optimizer.zero_grad()\n", ""))
    (folder / "c_notebook.ipynb").write_text(_notebook_of_reference())
    hang = "    model.train()\n    while True:\n        pass\n"
    (folder / "d_hangs.py").write_text(_edit("    model.train()\n", hang))
    crash = "    model.train()\n    import os\n    os._exit(3)\n"
    (folder / "e_crashes.py").write_text(_edit("    model.train()\n", crash))
    (folder / "f_syntax.py").write_text(_edit("def make_model(seed=0):", "def make_model(seed=0)"))
    (folder / "notes.txt").write_text("not a submission")
    (folder / "sub").mkdir()
    (folder / "sub" / "ignored.py").write_text("this is not searched")
    return folder


@pytest.fixture(scope="module")
def graded(class_folder, tmp_path_factory):
    """One `kata grade` run over the class folder, shared by the tests that read its outputs."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("out") / "grades"
    args = ["grade", str(class_folder), "-o", str(out), "--timeout", str(TIMEOUT), "--lang", "en"]
    for cid in GRADE_CHECKS:
        args += ["--only", cid]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    results = json.loads((out / "results.json").read_text())
    return result, out, rows, results


def test_grades_csv_has_a_row_per_submission_and_a_column_per_check(graded):
    _, out, rows, _ = graded
    with (out / "grades.csv").open(newline="") as fh:
        header = next(csv.reader(fh))
    from checker.checks import ordered_ids

    assert header == ["submission", "passed", "score", *ordered_ids(list(GRADE_CHECKS)), "error"]
    assert [r["submission"] for r in rows] == [
        "a_correct.py", "b_no_zero_grad.py", "c_notebook.ipynb", "d_hangs.py", "e_crashes.py", "f_syntax.py"]


def test_each_submission_gets_the_right_verdict(graded):
    _, _, rows, _ = graded
    by_name = {r["submission"]: r for r in rows}
    for name in ("a_correct.py", "c_notebook.ipynb"):
        row = by_name[name]
        assert (row["passed"], row["score"], row["error"]) == ("true", "1.0000", ""), row
        assert all(row[c] == "pass" for c in GRADE_CHECKS)
    broken = by_name["b_no_zero_grad.py"]
    assert broken["passed"] == "false" and broken["steps.fresh_grads"] == "fail"
    hang = by_name["d_hangs.py"]
    assert hang["passed"] == "false" and hang["score"] == "0.0000"
    assert {hang[c] for c in GRADE_CHECKS} == {"timeout"}
    crash = by_name["e_crashes.py"]
    assert crash["passed"] == "false" and {crash[c] for c in GRADE_CHECKS} == {"error"}
    syntax = by_name["f_syntax.py"]
    assert syntax["passed"] == "false" and syntax["score"] == "0.0000"
    assert all(syntax[c] == "" for c in GRADE_CHECKS)
    assert "f_syntax.py:" in syntax["error"] and "syntax error" in syntax["error"]


def test_results_json_holds_each_report(graded):
    _, _, _, results = graded
    assert [r["submission"] for r in results][:3] == ["a_correct.py", "b_no_zero_grad.py", "c_notebook.ipynb"]
    for entry in results:
        assert {"submission", "score", "file", "passed", "checks"} <= set(entry)
    good = results[0]
    assert good["passed"] is True and sorted(c["id"] for c in good["checks"]) == sorted(GRADE_CHECKS)
    assert all({"id", "family", "title", "status", "message", "measured", "seconds"} <= set(c)
               for c in good["checks"])
    hang = results[3]
    # the hang cost its time limit once: the first check it hung in was stopped at the full limit, the
    # next one at the shorter limit kept for a file that already hung (grading.RERUN_MIN_SECONDS)
    assert all(c["status"] == "timeout" for c in hang["checks"])
    limits = sorted(float(c["message"].split("within ")[1].split(" s")[0]) for c in hang["checks"])
    assert limits == [RERUN_MIN_SECONDS, TIMEOUT]
    crash = results[4]
    assert all("exit status 3" in c["message"] for c in crash["checks"])
    syntax = results[5]
    assert syntax["checks"] == [] and syntax["error"]["kind"] == "syntax"


def test_the_summary_counts_verdicts_and_names_the_checks_failed_most(graded):
    result, _, _, _ = graded
    out = result.stdout
    assert "Graded 6 submission(s)" in out
    assert "2 pass every check, 3 fail some check, 1 cannot be graded" in out
    assert "steps.fresh_grads" in out and "3/5" in out  # broken, hang and crash
    assert "f_syntax.py  [syntax]" in out


def test_existing_outputs_are_never_overwritten_without_force(graded, class_folder, runner):
    _, out, _, _ = graded
    before = (out / "grades.csv").read_text()
    result = runner.invoke(main, ["grade", str(class_folder), "-o", str(out)])
    assert result.exit_code == 2
    assert "--force" in result.output and "grades.csv" in result.output
    assert (out / "grades.csv").read_text() == before


def test_force_overwrites(tmp_path, runner):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "broken.py").write_text("def f(:\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("old")
    (out / "results.json").write_text("old")
    result = runner.invoke(main, ["grade", str(folder), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert rows[0]["submission"] == "broken.py" and "syntax error" in rows[0]["error"]
    assert json.loads((out / "results.json").read_text())[0]["error"]["kind"] == "syntax"


@pytest.mark.parametrize("setup, args, expected", [
    (None, ["missing_dir"], "no such folder"),
    ("file", ["a_file.py"], "is a file"),
    ("empty", ["empty"], "holds no .py or .ipynb file"),
    ("one", ["one", "--only", "steps.nope"], "unknown check id(s): steps.nope"),
])
def test_bad_arguments_exit_2_with_a_reason(tmp_path, runner, monkeypatch, setup, args, expected):
    monkeypatch.chdir(tmp_path)
    if setup == "file":
        (tmp_path / "a_file.py").write_text("x = 1\n")
    elif setup == "empty":
        (tmp_path / "empty").mkdir()
    elif setup == "one":
        (tmp_path / "one").mkdir()
        (tmp_path / "one" / "a.py").write_text("x = 1\n")
    result = runner.invoke(main, ["grade", *args, "-o", "out"])
    assert result.exit_code == 2
    assert expected in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "grades.csv").exists()


# --- kata new ------------------------------------------------------------------------------------

NEW_ARGS = ["--target", "optimizer.zero_grad()", "--operator", "insert_statement",
            "--arg", "code=optimizer.zero_grad()", "--killed-by", "steps.fresh_grads"]


@pytest.fixture
def catalogue(tmp_path) -> tuple[Path, Path]:
    mutants, katas = tmp_path / "mutants", tmp_path / "katas"
    mutants.mkdir()
    katas.mkdir()
    return mutants, katas


def _new(runner, catalogue, mutant_id: str, *extra: str):
    mutants, katas = catalogue
    return runner.invoke(main, ["new", mutant_id, *NEW_ARGS, *extra,
                                "--mutants-dir", str(mutants), "--katas-dir", str(katas)])


def _every_field_is_explained(text: str) -> None:
    """Each paragraph that sets a field opens with a comment explaining it."""
    for paragraph in text.split("\n\n"):
        lines = [ln for ln in paragraph.splitlines() if ln.strip()]
        if any(not ln.startswith("#") for ln in lines):
            assert lines[0].startswith("#"), f"unexplained field(s):\n{paragraph}"


def test_kata_new_scaffolds_a_mutant_and_a_kata_that_load(runner, catalogue):
    from checker.katas import load_katas
    from checker.mutation import apply, load_mutants, reference_source

    mutants, katas = catalogue
    result = _new(runner, catalogue, "zero-grad-twice")
    assert result.exit_code == 0, result.output
    mutant_file, kata_file = mutants / "zero-grad-twice.toml", katas / "010-zero-grad-twice.toml"
    assert mutant_file.exists() and kata_file.exists()
    mutant = load_mutants(mutants)["zero-grad-twice"]
    assert mutant.killed_by == ("steps.fresh_grads",) and mutant.operator == "insert_statement"
    mutated = apply(mutant, reference_source())
    assert mutated.count("optimizer.zero_grad()") == reference_source().count("optimizer.zero_grad()") + 1
    (kata,) = load_katas(katas)
    assert (kata.slug, kata.number, kata.mutant) == ("zero-grad-twice", 10, "zero-grad-twice")
    for text in (mutant_file.read_text(), kata_file.read_text()):
        _every_field_is_explained(text)
        assert "TODO" in text
    for name in ("delete_statement", "move_statement", "replace_expression"):
        assert f"#   {name}" in mutant_file.read_text()  # the operators are listed for the author
    assert "kata mutants verify --only zero-grad-twice" in result.output
    assert "+        optimizer.zero_grad()" in result.output  # the author sees the edit


def test_kata_new_numbers_after_the_last_kata(runner, catalogue):
    _, katas = catalogue
    assert _new(runner, catalogue, "first-one").exit_code == 0
    (katas / "035-someone-else.toml").write_text((katas / "010-first-one.toml").read_text())
    assert _new(runner, catalogue, "second-one").exit_code == 0
    assert (katas / "040-second-one.toml").exists()


def test_kata_new_refuses_to_overwrite(runner, catalogue):
    mutants, katas = catalogue
    assert _new(runner, catalogue, "zero-grad-twice").exit_code == 0
    (mutants / "zero-grad-twice.toml").write_text("# edited by the author\n")
    result = _new(runner, catalogue, "zero-grad-twice")
    assert result.exit_code == 2 and "already exists" in result.output
    assert (mutants / "zero-grad-twice.toml").read_text() == "# edited by the author\n"
    assert sorted(p.name for p in katas.iterdir()) == ["010-zero-grad-twice.toml"]


@pytest.mark.parametrize("mutant_id, extra, expected", [
    ("Zero Grad", [], "not a valid id"),
    ("no-such-place", ["--function", "evaluate"], "matches no statement"),
    ("bad-operator", ["--operator", "explode"], "unknown operator"),
])
def test_kata_new_rejects_bad_input_and_writes_nothing(runner, catalogue, mutant_id, extra, expected):
    mutants, katas = catalogue
    result = _new(runner, catalogue, mutant_id, *extra)
    assert result.exit_code == 2
    assert expected in result.output and "Traceback" not in result.output
    assert list(mutants.iterdir()) == [] and list(katas.iterdir()) == []
