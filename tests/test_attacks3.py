"""The parent reads only what it was given, and writes cells that cannot run (issue 31, items 1, 3, 4, 5).

tests/corpus/attacks3/plant.py plants each attack on kata's own process into a class folder beside honest
classmates: links out of the folder (to the gradebook's secret, to kata's reference, a student's folder that
links elsewhere), a FIFO, a socket, a device, a 255-byte file name, a subfolder named as a spreadsheet formula,
Markdown link syntax in a name. The class is graded as a whole; no attack is read or quoted, no honest grade moves.
"""

from __future__ import annotations

import csv
import json
import os
import re
import runpy
import secrets
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.base.files import NotGiven, read_inside
from checker.cli import main
from checker.engine.formats import csv_cell
from tests.conftest import REFERENCE, ROOT

ONLY = "steps.fresh_grads"
PLANT = runpy.run_path(str(ROOT / "tests" / "corpus" / "attacks3" / "plant.py"))


def _broken() -> str:
    from checker.catalogue.mutants import mutant_source

    return mutant_source("zero-grad-missing")


# --------------------------------------------------------------------------- reading: before and after opening


def test_read_inside_reads_a_regular_file_and_a_link_that_stays_inside(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").symlink_to("a.py")
    assert read_inside(tmp_path / "a.py", tmp_path, 100) == read_inside(tmp_path / "b.py", tmp_path, 100) == b"x = 1\n"
    assert read_inside(tmp_path / "a.py", tmp_path, 3) == b"x = "  # the limit, plus one byte to tell it is over


@pytest.mark.parametrize("what", ["link_out", "folder_out", "fifo", "into_excluded"])
def test_read_inside_refuses_what_was_not_given(tmp_path, what):
    folder, elsewhere = tmp_path / "class", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.py").write_text("SECRET = 1\n")
    excluded = ()
    if what == "link_out":
        (folder / "x.py").symlink_to(elsewhere / "secret.py")
        path = folder / "x.py"
    elif what == "folder_out":
        (folder / "student").symlink_to(elsewhere, target_is_directory=True)
        path = folder / "student" / "secret.py"
    elif what == "fifo":
        os.mkfifo(folder / "x.py")
        path = folder / "x.py"
    else:
        (folder / "gradebook").mkdir()
        (folder / "gradebook" / ".secret").write_text("SECRET\n")
        (folder / "x.py").symlink_to("gradebook/.secret")
        path, excluded = folder / "x.py", (folder / "gradebook",)
    with pytest.raises(NotGiven) as caught:
        read_inside(path, folder, 1000, excluded)
    assert caught.value.kind == ("fifo" if what == "fifo" else "outside")


@pytest.mark.parametrize("swap", ["link", "other_file"])
def test_a_file_swapped_between_the_check_and_the_opening_is_not_read(tmp_path, monkeypatch, swap):
    """The check (lstat) passes on a regular file; then, before the open, a link to a secret (or another file) is put
    in its place: O_NOFOLLOW refuses the link, the descriptor's inode tells the other file."""
    from checker.base import files

    (tmp_path / "secret").write_text("SECRET\n")
    folder = tmp_path / "class"
    folder.mkdir()
    target = folder / "x.py"
    target.write_text("x = 1\n")
    real_lstat, resolved = os.lstat, target.resolve()

    def lstat_then_swap(path, *args, **kwargs):
        result = real_lstat(path, *args, **kwargs)
        if isinstance(path, Path) and path == resolved:  # read_inside's own check (resolve() passes strings)
            monkeypatch.setattr(files.os, "lstat", real_lstat)
            if swap == "link":
                target.unlink()
                target.symlink_to(tmp_path / "secret")
            else:  # another file (its own inode, made while the first still holds its own) renamed over it
                (folder / "other").write_text("SECRET = 'another file'\n")
                os.replace(folder / "other", target)
        return result

    monkeypatch.setattr(files.os, "lstat", lstat_then_swap)
    with pytest.raises(NotGiven) as caught:
        files.read_inside(target, folder, 1000)
    assert caught.value.kind == "swapped"


def test_kata_check_refuses_a_link_to_the_reference_a_notebook_outside_and_a_fifo(tmp_path):
    (tmp_path / "mine.py").symlink_to(REFERENCE)
    os.mkfifo(tmp_path / "pipe.py")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    cell = {"cell_type": "code", "metadata": {}, "source": REFERENCE.read_text(), "outputs": [],
            "execution_count": None}
    (elsewhere / "ref.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                     "nbformat_minor": 5}))
    (tmp_path / "mine.ipynb").symlink_to(elsewhere / "ref.ipynb")
    runner = CliRunner()
    for name, said in (("mine.py", "leads outside"), ("pipe.py", "named pipe"), ("mine.ipynb", "leads outside")):
        result = runner.invoke(main, ["check", str(tmp_path / name), "--lang", "en"])
        assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output, result.output
        assert "def train_epoch" not in result.output
    spanish = runner.invoke(main, ["check", str(tmp_path / "mine.py"), "--lang", "es"])
    assert spanish.exit_code == 2 and "lleva fuera de" in spanish.output


# --------------------------------------------------------------------------- a class folder under attack


def _grade(folder: Path, out: Path, *extra: str):
    result = CliRunner().invoke(main, ["grade", str(folder), "-o", str(out), "--only", ONLY, "--lang", "en", *extra])
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open(newline="") as fh:
        return {r["submission"]: r for r in csv.DictReader(fh)}, result


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks3")
    folder, out, outside = root / "submissions", root / "gradebook", root / "elsewhere"
    for path in (folder, out, outside):
        path.mkdir()
    secret = secrets.token_hex(32)
    (out / ".secret").write_text(secret + "\n")  # as a first grading left it, where the docs put it
    (out / ".secret").chmod(0o600)
    (folder / "alice").mkdir()
    (folder / "alice" / "loop.py").write_text(REFERENCE.read_text())
    (folder / "bob.py").write_text(_broken())
    planted = PLANT["plant"](folder, out, REFERENCE, _broken(), outside)
    rows, result = _grade(folder, out)
    honest = root / "honest"
    (honest / "alice").mkdir(parents=True)
    (honest / "alice" / "loop.py").write_text(REFERENCE.read_text())
    (honest / "bob.py").write_text(_broken())
    honest_rows, _ = _grade(honest, root / "honest-out", "--secret", secret)
    return folder, out, planted, rows, honest_rows, secret, result


def test_every_attack_gets_one_row_and_the_class_is_graded(attacked):
    folder, out, planted, rows, _, _, result = attacked
    assert set(rows) == {csv_cell(name) for name in ("alice", "bob.py", *planted)}
    results = {e["submission"]: e for e in json.loads((out / "results.json").read_text())}
    for name, kind in planted.items():
        error = (results[name].get("error") or {})
        if kind == "graded":
            assert not error, name
        else:
            assert error.get("kind") == kind, (name, error)
            row = rows[csv_cell(name)]
            assert row["score"] == "0.0000" and row["passed"] == "false", name
    assert "leads outside" in rows["link_reference.py"]["error"]  # 28/28 before: now a row with the reason
    assert "is a link to a folder outside" in rows["outside"]["error"]
    assert "named pipe" in rows["fifo.py"]["error"]
    assert "loop of symbolic links" in rows["loop_a.py"]["error"]


def test_no_honest_grade_moves(attacked):
    _, _, _, rows, honest_rows, _, _ = attacked
    for name in ("alice", "bob.py"):
        moved = {k: (v, honest_rows[name][k]) for k, v in rows[name].items() if v != honest_rows[name][k]}
        assert not moved, (name, moved)
    assert rows["alice"]["passed"] == "true" and rows["bob.py"][ONLY] == "fail"


def test_nothing_of_a_file_not_given_is_read_or_quoted(attacked):
    folder, out, _, _, _, secret, result = attacked
    reference_line = next(line for line in REFERENCE.read_text().splitlines() if "zero_grad" in line).strip()
    for path in out.rglob("*"):
        if path.is_file() and path.name != ".secret":
            text = path.read_text()
            assert secret not in text and secret[:16] not in text, path
            assert reference_line not in text, path
    assert secret not in result.output


def test_messages_name_the_submission_not_the_graders_folders(attacked):
    folder, out, planted, rows, _, _, _ = attacked
    markdown = PLANT["MARKDOWN"]
    error = rows[markdown]["error"]
    assert "syntax error" in error and "\n" not in error and error.startswith(markdown + ":1:")
    for path in [out / "grades.csv", out / "class.html", *(out / "feedback").iterdir()]:
        text = path.read_text()
        assert str(folder) not in text and str(folder.resolve()) not in text, path


def test_a_255_byte_name_gets_a_row_and_a_feedback_file_of_a_safe_name(attacked):
    _, out, _, rows, _, _, _ = attacked
    long = PLANT["LONG"]
    assert len(long.encode()) == 255 and rows[long][ONLY] == "fail"
    entry = next(e for e in json.loads((out / "results.json").read_text()) if e["submission"] == long)
    feedback = out / entry["feedback"]
    assert feedback.is_file() and len(feedback.name.encode()) <= 120 and feedback.name.startswith("aaaa")
    assert f"# Feedback on {long}" in feedback.read_text()


def test_cells_cannot_run_in_a_spreadsheet_a_page_or_markdown(attacked):
    _, out, _, rows, _, _, _ = attacked
    formula, markdown = PLANT["FORMULA"], PLANT["MARKDOWN"]
    text = (out / "grades.csv").read_text()
    assert "'" + formula in rows and formula not in rows  # OWASP's quote prefix: a text cell, never a formula
    assert not [line for line in text.splitlines() if line.startswith(("=", "+", "-", "@"))]
    page = (out / "class.html").read_text()
    assert "<a href=\"javascript" not in page and "HYPERLINK(&#34;" in page or "HYPERLINK(&quot;" in page
    entry = next(e for e in json.loads((out / "results.json").read_text()) if e["submission"] == markdown)
    feedback = (out / entry["feedback"]).read_text()
    rendered = re.sub(r"```text\n.*?\n```", "", feedback, flags=re.S)  # a code block is shown, never rendered
    assert "```text\n[open me](javascript" in feedback  # the error, quoted in one
    assert "\\[open me\\](javascript:alert(1)).py" in rendered and "[open me](" not in rendered


def test_two_colluding_12000_line_files_top_the_similar_pairs(attacked):
    folder, out, _, rows, _, _, _ = attacked
    assert len((folder / "colluder_a.py").read_text().splitlines()) > 12_000
    assert rows["colluder_a.py"][ONLY] == rows["colluder_b.py"][ONLY] == "fail"  # graded as the broken loops they are
    with (out / "similar.csv").open(newline="") as fh:
        first = next(csv.DictReader(fh))
    assert (first["first"], first["second"], first["identical"]) == ("colluder_a.py", "colluder_b.py", "true")

