"""The instructor's commands: `kata grade` (a class folder into a gradebook) and `kata new` (scaffolding)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest

from checker.cli import main
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
    (folder / ".drafts").mkdir()  # a hidden folder is no student's
    (folder / ".drafts" / "ignored.py").write_text("this is not searched")
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

    assert header == ["submission", "passed", "score", "points", "max_points", *ordered_ids(list(GRADE_CHECKS)),
                      "integrity", "error"]
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
    # it hangs in train_epoch: the first check that calls it times out, the other one is skipped
    assert (hang["steps.fresh_grads"], hang["steps.overfit"]) == ("timeout", "skipped")
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
    # the hang cost its time limit once, in the first check that called train_epoch; the other check calls it
    # too, so it is skipped, naming the function and where it hung
    by_id = {c["id"]: c for c in hang["checks"]}
    assert by_id["steps.fresh_grads"]["status"] == "timeout"
    assert f"did not finish within {TIMEOUT:g} s" in by_id["steps.fresh_grads"]["message"]
    assert by_id["steps.overfit"]["status"] == "skipped"
    assert (f"calls train_epoch, which did not return within {TIMEOUT:g} s in steps.fresh_grads"
            in by_id["steps.overfit"]["message"])
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
    """`kata new`, the kata's slug being the mutant's id behind "seen-" (a slug names a symptom)."""
    mutants, katas = catalogue
    return runner.invoke(main, ["new", mutant_id, *NEW_ARGS, *extra, "--slug", f"seen-{mutant_id}",
                                "--mutants-dir", str(mutants), "--katas-dir", str(katas)])


def _every_field_is_explained(text: str) -> None:
    """Each paragraph that sets a field opens with a comment explaining it."""
    for paragraph in text.split("\n\n"):
        lines = [ln for ln in paragraph.splitlines() if ln.strip()]
        if any(not ln.startswith("#") for ln in lines):
            assert lines[0].startswith("#"), f"unexplained field(s):\n{paragraph}"


def test_kata_new_scaffolds_a_mutant_and_a_kata_that_load(runner, catalogue):
    from checker.catalogue.katas import load_katas
    from checker.catalogue.mutants import apply, load_mutants, reference_source

    mutants, katas = catalogue
    result = _new(runner, catalogue, "zero-grad-twice")
    assert result.exit_code == 0, result.output
    mutant_file, kata_file = mutants / "zero-grad-twice.toml", katas / "010-seen-zero-grad-twice.toml"
    assert mutant_file.exists() and kata_file.exists()
    mutant = load_mutants(mutants)["zero-grad-twice"]
    assert mutant.killed_by == ("steps.fresh_grads",) and mutant.operator == "insert_statement"
    mutated = apply(mutant, reference_source())
    assert mutated.count("optimizer.zero_grad()") == reference_source().count("optimizer.zero_grad()") + 1
    (kata,) = load_katas(katas)
    assert (kata.slug, kata.number, kata.mutant) == ("seen-zero-grad-twice", 10, "zero-grad-twice")
    for text in (mutant_file.read_text(), kata_file.read_text()):
        _every_field_is_explained(text)
        assert "TODO" in text
    for name in ("delete_statement", "move_statement", "replace_expression"):
        assert f"#   {name}" in mutant_file.read_text()  # the operators are listed for the author
    assert "kata new --check seen-zero-grad-twice" in result.output
    assert "+        optimizer.zero_grad()" in result.output  # the author sees the edit


def test_kata_new_numbers_after_the_last_kata(runner, catalogue):
    _, katas = catalogue
    assert _new(runner, catalogue, "first-one").exit_code == 0
    (katas / "035-someone-else.toml").write_text((katas / "010-seen-first-one.toml").read_text())
    assert _new(runner, catalogue, "second-one").exit_code == 0
    assert (katas / "040-seen-second-one.toml").exists()


def test_kata_new_refuses_to_overwrite(runner, catalogue):
    mutants, katas = catalogue
    assert _new(runner, catalogue, "zero-grad-twice").exit_code == 0
    (mutants / "zero-grad-twice.toml").write_text("# edited by the author\n")
    result = _new(runner, catalogue, "zero-grad-twice")
    assert result.exit_code == 2 and "already exists" in result.output
    assert (mutants / "zero-grad-twice.toml").read_text() == "# edited by the author\n"
    assert sorted(p.name for p in katas.iterdir()) == ["010-seen-zero-grad-twice.toml"]


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


def test_kata_new_names_the_kata_after_the_symptom_and_asks_for_it(runner, catalogue):
    mutants, katas = catalogue
    result = runner.invoke(main, ["new", "zero-grad-twice", *NEW_ARGS, "--mutants-dir", str(mutants),
                                  "--katas-dir", str(katas)], input="grads-pile-up\n")
    assert result.exit_code == 0, result.output
    assert "Kata slug" in result.output  # it asked
    (kata_file,) = katas.iterdir()
    assert kata_file.name == "010-grads-pile-up.toml"
    assert 'mutant = "zero-grad-twice"' in kata_file.read_text()
    silent = runner.invoke(main, ["new", "third-fault", *NEW_ARGS, "--mutants-dir", str(mutants),
                                  "--katas-dir", str(katas)], input="")  # nobody to answer: say what to give
    assert silent.exit_code == 2 and "give --slug" in silent.output
    same = runner.invoke(main, ["new", "other-fault", *NEW_ARGS, "--slug", "other-fault",
                                "--mutants-dir", str(mutants), "--katas-dir", str(katas)])
    assert same.exit_code == 2 and "name the symptom" in same.output


# --- drafts --------------------------------------------------------------------------------------

def test_the_shipped_katas_are_no_drafts_and_their_proofs_are_current():
    """Every shipped kata is ready: texts, [symptom], and a proof in mutants/proofs.json that its mutant is
    killed, recorded for the mutant as it is now (test_mutation.py's full verify proves the kills again)."""
    from checker.catalogue.katas import load_katas
    from checker.catalogue.proofs import drafts_of

    katas = load_katas(drafts=True)
    assert drafts_of(katas) == {}


def test_a_kata_without_symptom_or_with_a_survivor_is_a_draft(tmp_path, monkeypatch):
    import shutil

    from checker.catalogue.katas import load_katas
    from checker.catalogue.mutants import load_mutants, reference_source
    from checker.catalogue.proofs import Proof, draft_reasons, load_proofs
    from tests.conftest import ROOT

    folder = tmp_path / "katas"
    folder.mkdir()
    src = next((ROOT / "katas").glob("*-falls-then-rises.toml"))
    text = src.read_text()
    (folder / "010-falls-then-rises.toml").write_text(text.split("[symptom]")[0])  # no claim
    monkeypatch.setenv("KATA_DRAFTS", "0")
    assert load_katas(folder) == []
    (kata,) = load_katas(folder, drafts=True)
    mutants, proofs, ref = load_mutants(), load_proofs(ROOT / "mutants"), reference_source()
    assert any("no [symptom] table" in r for r in draft_reasons(kata, mutants, proofs, ref))
    shutil.copy(src, folder / "010-falls-then-rises.toml")
    (kata,) = load_katas(folder)  # complete and proven: listed
    assert draft_reasons(kata, mutants, proofs, ref) == []
    survived = {**proofs, kata.mutant: Proof(proofs[kata.mutant].key, "Survived", ("steps.fresh_grads",))}
    assert any("survives" in r for r in draft_reasons(kata, mutants, survived, ref))
    assert any("not proven" in r for r in draft_reasons(kata, mutants, {}, ref))
    wrong_quote = text.replace('"0.3885"', '"0.3886"', 1)
    assert wrong_quote != text
    (folder / "010-falls-then-rises.toml").write_text(wrong_quote)
    (kata,) = load_katas(folder, drafts=True)
    assert "the en story does not quote 0.3886, which [symptom] says it does" in draft_reasons(
        kata, mutants, proofs, ref)


def test_the_catalogue_doc_is_generated_from_the_data():
    """docs/katas.md is what `kata mutants doc` writes from the kata and mutant files, byte for byte."""
    from checker.author.authoring import catalogue_markdown
    from tests.conftest import ROOT

    committed = (ROOT / "docs" / "katas.md").read_text(encoding="utf-8")
    assert committed == catalogue_markdown(), "run: kata mutants doc -o docs/katas.md"


# --- CONTRIBUTING.md's walk-through, end to end, in a copy of the catalogue -----------------------

def _walkthrough_blocks() -> tuple[list[list[str]], str]:
    """The `kata ...` commands of each bash block of the walk-through, and its [symptom] TOML block."""
    import re
    import shlex

    from tests.conftest import ROOT

    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text.split("## Add a mutant and its kata, without Python")[1].split("\n## ")[0]
    blocks = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        commands = []
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("#")[0].split("&&"):
                words = shlex.split(part)
                if words and words[0] == "kata":
                    commands.append(words[1:])
        blocks.append(commands)
    (symptom,) = re.findall(r"```toml\n(\[symptom\].*?)```", section, re.S)
    return blocks, symptom


def _fill(path: Path, texts: list[str]) -> None:
    """Replace the TODO strings of a scaffold, in order, as an author does in an editor."""
    import re

    source = path.read_text()
    todos = re.findall(r'"TODO[^"\n]*"|"""\nTODO.*?"""', source, re.S)
    assert len(todos) == len(texts), todos
    for todo, new in zip(todos, texts, strict=True):
        source = source.replace(todo, json.dumps(new, ensure_ascii=False), 1)
    path.write_text(source)


STORY_EN = ("With a StepLR from lr 1.0 the rate should hold until epoch 10, yet the lr column already "
            "reads 0.5 at epoch 6 and keeps halving twice as often.")
STORY_ES = ("Con un StepLR desde lr 1.0 la tasa debería mantenerse hasta la época 10, pero la columna lr ya "
            "marca 0.5 en la época 6 y sigue dividiéndose a la mitad el doble de veces.")


def test_contributing_walkthrough_works_as_written(tmp_path, runner, monkeypatch):
    import shutil

    from tests.conftest import ROOT

    for name in ("katas", "mutants", "docs"):
        shutil.copytree(ROOT / name, tmp_path / name)
    env = {"KATA_KATAS_DIR": str(tmp_path / "katas"), "KATA_MUTANTS_DIR": str(tmp_path / "mutants"),
           "KATA_DRAFTS": "0", "KATA_LANG": "en"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    (scaffold, see, check, learner), symptom = _walkthrough_blocks()

    def kata(args: list[str], code: int = 0):
        args = [a.replace("/tmp/", f"{tmp_path}/") for a in args]
        result = runner.invoke(main, args)
        assert result.exit_code == code, (args, result.output)
        assert "Traceback" not in result.output
        return result.output

    # 2. scaffold: the kata is named after the symptom, and it is a draft
    (new_args,) = scaffold
    kata(new_args)
    mutant_file = tmp_path / "mutants" / "scheduler-stepped-twice.toml"
    (kata_file,) = (tmp_path / "katas").glob("*-lr-halves-too-soon.toml")
    slugs = [k["kata"] for k in json.loads(kata(["list", "--json"]))]
    assert "lr-halves-too-soon" not in slugs and len(slugs) == len(list((ROOT / "katas").glob("*.toml")))
    (check_args,) = check
    out = kata(check_args, code=1)
    assert "is a draft" in out and "no [symptom] table" in out and "[story] (en) is still a placeholder" in out
    out = kata([*check_args, "--lang", "es"], code=1)  # instructors read it in Spanish too
    assert "es un borrador" in out and "no tiene tabla [symptom]" in out

    # 3. fill in the texts (5. included: the [symptom] table, as CONTRIBUTING shows it)
    _fill(mutant_file, [
        "the scheduler is stepped twice per epoch",
        "train_epoch steps the scheduler once more after the first call, so the lr schedule runs twice as fast.",
        "lesson section 7 (schedules, stepped once per epoch); pitfalls article: scheduler.step() misplaced",
        "A scheduler counts its step() calls: one per epoch, in one place.",
    ])
    _fill(kata_file, [
        "The lr halves too soon", "La tasa se divide demasiado pronto",
        STORY_EN, STORY_ES,
        "Look at what happens at the end of an epoch.", "Mira lo que pasa al final de una época.",
        "How many times is the scheduler stepped per epoch?", "¿Cuántas veces avanza el scheduler por época?",
        "Lesson section 7 on schedules.", "Lección, sección 7, sobre los schedules.",
    ])
    text = kata_file.read_text().replace(
        'args = ["--optimizer", "sgd", "--lr", "0.1", "--epochs", "10"]',
        'args = ["--optimizer", "sgd", "--lr", "1.0", "--epochs", "30", "--scheduler", "step"]')
    kata_file.write_text(text + "\n" + symptom)

    # 4. see the symptom
    show, export, run = see
    assert "+        scheduler.step()" in kata(show)
    kata(export)
    table = kata(run)
    epoch6 = next(line for line in table.splitlines() if line.split()[:1] == ["6"])
    assert epoch6.split()[1].startswith("0.5")

    # 6. check the draft: ready, proven, and the catalogue page lists it
    out = kata(check_args)
    assert "ready" in out and "kill mutant scheduler-stepped-twice" in out
    proofs = json.loads((tmp_path / "mutants" / "proofs.json").read_text())["proofs"]
    assert proofs["scheduler-stepped-twice"]["status"] == "Killed"
    assert "| `lr-halves-too-soon` | The lr halves too soon | `scheduler-stepped-twice` |" in (
        tmp_path / "docs" / "katas.md").read_text()
    assert "lr-halves-too-soon" in [k["kata"] for k in json.loads(kata(["list", "--json"]))]

    # 7. try it as a learner
    (tmp_path / "try").mkdir()
    next_args, hint_args = learner
    kata(next_args)
    assert (tmp_path / "try" / "lr-halves-too-soon.py").exists()
    assert "Look at what happens at the end of an epoch." in kata(hint_args)


# --- grading a class with a course file: weights, feedback, changes since the last run -------------

COURSE = """\
title = "Lab 4: the training loop"

[points]
"data.lesson" = 1
"optimizer.setup" = 2
"steps.fresh_grads" = 3
"loss.epoch_mean" = 2

[read]
"optimizer.setup" = "Lesson 4, section 5: build the optimizer from this model's own parameters"
"""


@pytest.fixture(scope="module")
def twenty(tmp_path_factory):
    """20 submissions (the reference and 19 mutants), graded once with a course file."""
    from click.testing import CliRunner

    from checker.catalogue.mutants import load_mutants, mutant_source

    folder = tmp_path_factory.mktemp("twenty")
    (folder / "s00_reference.py").write_text(REFERENCE.read_text())
    chosen = ["zero-grad-missing", "optimizer-other-model", "epoch-loss-batch-mean", "data-unstratified"]
    chosen += [m for m in sorted(load_mutants()) if m not in chosen][: 19 - len(chosen)]
    for i, mid in enumerate(chosen, start=1):
        (folder / f"s{i:02d}_{mid}.py").write_text(mutant_source(mid))
    course = folder.parent / "course.toml"
    course.write_text(COURSE)
    out = folder.parent / "out"
    result = CliRunner().invoke(main, ["grade", str(folder), "-o", str(out), "--course", str(course),
                                       "--lang", "en"])
    assert result.exit_code == 0, result.output
    return folder, course, out, result


def _rows(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open(newline="") as fh:
        return {r["submission"]: r for r in csv.DictReader(fh)}


def test_a_course_file_weighs_the_checks_that_count(twenty):
    import tomllib

    folder, course, out, _ = twenty
    points = tomllib.loads(course.read_text())["points"]
    rows = _rows(out)
    assert len(rows) == 20
    for name, row in rows.items():
        earned = sum(p for cid, p in points.items() if row[cid] == "pass")
        assert float(row["points"]) == earned and float(row["max_points"]) == sum(points.values()), name
        assert float(row["score"]) == pytest.approx(earned / sum(points.values()), abs=1e-4), name
    assert rows["s00_reference.py"]["score"] == "1.0000"
    # only the course's checks were run
    assert {k for k in next(iter(rows.values())) if "." in k} == set(points)
    broken = rows["s01_zero-grad-missing.py"]
    assert broken["steps.fresh_grads"] == "fail" and float(broken["points"]) <= 8 - 3
    assert len({r["score"] for r in rows.values()}) >= 3  # the weights separate the submissions


def test_each_student_gets_a_feedback_file_with_what_failed_and_what_to_read(twenty):
    from checker.catalogue.katas import load_katas
    from checker.catalogue.mutants import load_mutants

    folder, _, out, _ = twenty
    results = {e["submission"]: e for e in json.loads((out / "results.json").read_text())}
    assert sorted(p.name for p in (out / "feedback").iterdir()) == sorted(f"{n}.md" for n in results)
    text = (out / "feedback" / "s01_zero-grad-missing.py.md").read_text()
    entry = results["s01_zero-grad-missing.py"]
    assert entry["feedback"] == "feedback/s01_zero-grad-missing.py.md"
    assert f"**{entry['points']:g} of 8 points**" in text and "Lab 4: the training loop" in text
    failed = [c for c in entry["checks"] if c["status"] != "pass"]
    assert failed
    mutants = load_mutants()
    for c in failed:
        assert f"`{c['id']}`" in text
        assert c["message"].strip().splitlines()[0] in text  # the measured message, quoted
        teaching = next(k for k in load_katas() if k.mutant and c["id"] in mutants[k.mutant].killed_by)
        assert teaching.read.en in text and f"kata next {teaching.slug}" in text
    other = (out / "feedback" / "s02_optimizer-other-model.py.md").read_text()
    assert "Lesson 4, section 5: build the optimizer" in other  # the course's own [read] first
    assert "Every check passes" in (out / "feedback" / "s00_reference.py.md").read_text()


def test_grading_again_says_what_changed_and_why(twenty, tmp_path):
    import shutil

    from click.testing import CliRunner

    folder, course, out, _ = twenty
    again_in, again_out = tmp_path / "class", tmp_path / "out"
    shutil.copytree(folder, again_in)
    shutil.copytree(out, again_out)
    before = _rows(out)
    fixed = "s01_zero-grad-missing.py"
    broke = "s00_reference.py"
    (again_in / fixed).write_text(REFERENCE.read_text())
    (again_in / broke).write_text((folder / fixed).read_text())
    refused = CliRunner().invoke(main, ["grade", str(again_in), "-o", str(again_out), "--course", str(course)])
    assert refused.exit_code == 2 and "--force" in refused.output
    result = CliRunner().invoke(main, ["grade", str(again_in), "-o", str(again_out), "--course", str(course),
                                       "--force", "--lang", "en"])
    assert result.exit_code == 0, result.output
    assert "2 submission(s) changed" in result.output
    changes = (again_out / "changes.md").read_text()
    listed = [line.split("|")[1].strip() for line in changes.splitlines() if line.startswith("| s") and ".py" in line]
    assert sorted(listed) == [broke, fixed]
    after = _rows(again_out)
    assert f"| {fixed} | {float(before[fixed]['score']):.4f} | 1.0000 | steps.fresh_grads fail -> pass" in changes
    assert f"| {broke} | 1.0000 | {float(after[broke]['score']):.4f} | " in changes
    assert "steps.fresh_grads pass -> fail" in changes
    assert not list(again_out.glob(".*.tmp"))


def test_bad_course_files_are_usage_errors(tmp_path, runner):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a.py").write_text("x = 1\n")
    cases = {
        "unknown.toml": ('[points]\n"steps.nope" = 1\n', "unknown check(s) steps.nope"),
        "zero.toml": ('[points]\n"steps.overfit" = 0\n', "points must be a number above 0"),
        "empty.toml": ("[points]\n", "lists no check"),
        "extra.toml": ('colour = "red"\n[points]\n"steps.overfit" = 1\n', "unknown field(s) `colour`"),
        "broken.toml": ("[points\n", "not valid TOML"),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text)
        result = runner.invoke(main, ["grade", str(folder), "-o", str(tmp_path / "out"),
                                      "--course", str(tmp_path / name)])
        assert result.exit_code == 2 and expected in result.output and "Traceback" not in result.output, name
    assert not (tmp_path / "out").exists()


def test_integrity_reasons_reach_the_csv_and_the_feedback(tmp_path):
    from checker.engine.grading import CheckResult, Report
    from checker.gradebook.book import Course, write_gradebook

    report = Report("sneaky.py", checks=[CheckResult("steps.overfit", "steps", "overfit 8", "pass", "ok")])
    report.integrity = ["reads the file it is graded from"]
    write_gradebook([report], Course.equal(["steps.overfit"]), tmp_path)
    row = _rows(tmp_path)["sneaky.py"]
    assert row["integrity"] == "reads the file it is graded from"
    feedback = (tmp_path / "feedback" / "sneaky.py.md").read_text()
    assert "Held for review" in feedback and "reads the file it is graded from" in feedback


def test_grade_files_are_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    import os

    from checker.catalogue import proofs as catalogue
    from checker.engine.grading import CheckResult, Report
    from checker.gradebook.book import Course, write_gradebook

    (tmp_path / "grades.csv").write_text("the old grades\n")
    report = Report("a.py", checks=[CheckResult("steps.overfit", "steps", "overfit 8", "fail", "no")])
    real = os.replace

    def failing(src, dst):
        if str(dst).endswith("grades.csv"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(catalogue.os, "replace", failing)
    with pytest.raises(OSError):
        write_gradebook([report], Course.equal(["steps.overfit"]), tmp_path)
    assert (tmp_path / "grades.csv").read_text() == "the old grades\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_changes_name_what_moved_in_english_and_spanish():
    from checker.gradebook.book import changes_markdown, compare

    before = [{"submission": "a.py", "score": 0.5, "checks": [{"id": "steps.overfit", "status": "fail"}]},
              {"submission": "gone.py", "score": 1.0, "checks": []},
              {"submission": "same.py", "score": 1.0, "checks": [{"id": "steps.overfit", "status": "pass"}]},
              {"submission": "weights.py", "score": 0.5, "checks": [{"id": "steps.overfit", "status": "pass"}]}]
    now = [{"submission": "a.py", "score": 1.0, "checks": [{"id": "steps.overfit", "status": "pass",
                                                           "message": "the loss reached 0.05"}]},
           {"submission": "new.py", "score": 0.0, "checks": []},
           {"submission": "same.py", "score": 1.0, "checks": [{"id": "steps.overfit", "status": "pass"}]},
           {"submission": "weights.py", "score": 0.75, "checks": [{"id": "steps.overfit", "status": "pass"}]}]
    changes = compare(before, now)
    assert {c.submission: c.why for c in changes} == {
        "a.py": "steps.overfit fail -> pass", "new.py": "new submission", "gone.py": "no longer in the folder",
        "weights.py": "the course's points changed"}
    assert "a.py, `steps.overfit` fail -> pass: the loss reached 0.05" in changes_markdown(changes, 4)
    spanish = changes_markdown(changes, 4, "es")
    assert "entrega nueva" in spanish and "ya no está en la carpeta" in spanish
    assert "Nada cambió en las 3 entrega(s)" in changes_markdown([], 3, "es")


def test_kata_new_check_measures_the_numbers_a_story_quotes(lab):
    """A [symptom] quote is trained as `kata run` trains it: a true one passes, a false one is named."""
    import dataclasses

    from checker.author.quotes import false_quotes
    from checker.catalogue.katas import load_katas
    from checker.catalogue.mutants import mutant_source, reference_source
    from checker.cli.run import run_settings_of

    kata = next(k for k in load_katas() if k.slug == "falls-then-rises")
    mutant, reference = mutant_source(kata.mutant), reference_source()
    assert false_quotes(kata, mutant, reference, lab, parse_flags=run_settings_of) == []
    run, epoch, column, text = kata.symptom["quotes"][0]
    wrong = f"{float(text) + 0.0101:.4f}"
    bent = dataclasses.replace(kata, symptom={**kata.symptom, "quotes": [[run, epoch, column, wrong]]})
    assert false_quotes(bent, mutant, reference, lab, parse_flags=run_settings_of) == [
        f"the story quotes {wrong} for the {run}'s {column} at epoch {epoch}, but `kata run` prints {text} there"]
    bad_flags = dataclasses.replace(kata, try_args=("--epochs", "ten"))
    (reason,) = false_quotes(bad_flags, mutant, reference, lab, "es", parse_flags=run_settings_of)
    assert "no son opciones de `kata run`" in reason


def test_the_documented_course_file_loads(tmp_path):
    import re

    from checker.checks import REGISTRY
    from checker.gradebook.book import load_course
    from tests.conftest import ROOT

    (example,) = re.findall(r"```toml\n(.*?)```", (ROOT / "docs" / "grading.md").read_text(), re.S)
    (tmp_path / "course.toml").write_text(example)
    course = load_course(tmp_path / "course.toml", list(REGISTRY))
    assert course.points == {"steps.fresh_grads": 3.0, "steps.overfit": 2.0, "loss.falls": 1.0, "modes.eval": 2.0}
    assert course.max_points == 8 and course.title == "Lab 4: the training loop"
