"""`kata grade`'s class-folder habits: files a course's other accounts can read, a subfolder per student,
identical or near-identical pairs pointed out (never changing a grade), the class page, documented columns."""

from __future__ import annotations

import csv
import json
import os
import re
import stat
from pathlib import Path

import pytest

from checker.cli import main
from tests.conftest import REFERENCE, ROOT

ONLY = "steps.fresh_grads"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _report(name: str, status: str = "pass"):
    from checker.engine.grading import CheckResult, Report

    return Report(name, checks=[CheckResult("steps.overfit", "steps", "overfit 8", status, "measured")])


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_gradebook_files_are_readable_as_the_umask_says(tmp_path, umask):
    from checker.gradebook.book import Course, kept_secret, write_gradebook

    old = os.umask(umask)
    try:
        (tmp_path / "grades.csv").write_text("an older run's grades\n")
        (tmp_path / "grades.csv").chmod(0o600)  # as kata wrote them before: replaced with the umask's mode
        written = write_gradebook([_report("a.py")], Course.equal(["steps.overfit"]), tmp_path)
        kept_secret(tmp_path)
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    assert {p.name: _mode(p) for p in written.files} == {p.name: expected for p in written.files}
    assert {"grades.csv", "results.json", "class.html", "similar.csv", "a.py.md"} <= {p.name for p in written.files}
    assert _mode(tmp_path / ".secret") == 0o600  # the secret stays its owner's


def test_a_subfolder_per_student(tmp_path):
    from checker.gradebook.book import find_class

    (tmp_path / "zed.py").write_text("x = 1\n")
    for name, files in {"alice": ["loop.py"], "bob": ["work.ipynb", "notes.txt"], "carol": ["a.py", "b.py"],
                        "dave": ["readme.md"], ".git": ["x.py"], "__pycache__": ["y.py"], "out": ["grades.py"]}.items():
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("x = 1\n")
    (tmp_path / "alice" / "old").mkdir()
    (tmp_path / "alice" / "old" / "draft.py").write_text("x = 0\n")  # deeper folders are not searched
    found = find_class(tmp_path, exclude=[tmp_path / "out"])
    assert [(f.name, f.path.relative_to(tmp_path).as_posix(), f.problem is None) for f in found] == [
        ("alice", "alice/loop.py", True), ("bob", "bob/work.ipynb", True), ("carol", "carol", False),
        ("dave", "dave", False), ("zed.py", "zed.py", True)]
    problems = {f.name: f.problem for f in found}
    assert problems["carol"] == "carol/ holds 2 files to grade (a.py, b.py): a student's folder holds one .py or .ipynb"
    assert problems["dave"] == "dave/ holds no .py or .ipynb file to grade"
    spanish = {f.name: f.problem for f in find_class(tmp_path, "es", exclude=[tmp_path / "out"])}
    assert spanish["dave"] == "dave/ no contiene ningún archivo .py o .ipynb que evaluar"


def test_similar_pairs_compare_code_not_comments_or_layout():
    from checker.gradebook.similarity import similar_pairs

    source = REFERENCE.read_text()
    restyled = "# my own work!\n" + source.replace("\n\n\n", "\n\n").replace("    ", "  ").replace(
        "optimizer.step()", "optimizer.step()  # update")
    assert source.count("        optimizer.zero_grad()\n") == 1
    renamed = source.replace("        optimizer.zero_grad()\n", "")  # one line less: near-identical
    other = "def make_model(seed=0):\n    return None\n" * 3
    pairs = similar_pairs({"a": source, "b": restyled, "c": renamed, "d": other, "e": "", "f": ""})
    listed = {(p.first, p.second): p for p in pairs}
    assert listed[("a", "b")].identical and listed[("a", "b")].similarity == 1.0
    near = listed[("a", "c")]
    assert not near.identical and 0.95 <= near.similarity < 1.0
    assert not [k for k in listed if "d" in k or "e" in k]  # unlike files, and empty ones, are not listed
    assert pairs[0].identical and pairs == sorted(pairs, key=lambda p: -p.similarity)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class folder of subfolders and files, graded once on one check."""
    from click.testing import CliRunner

    from checker.catalogue.mutants import mutant_source

    folder = tmp_path_factory.mktemp("class")
    for student in ("alice", "bob"):
        (folder / student).mkdir()
    (folder / "alice" / "loop.py").write_text(REFERENCE.read_text())
    (folder / "bob" / "my_loop.py").write_text("# Bob's loop\n" + REFERENCE.read_text())  # alice's, commented
    (folder / "carol.py").write_text(mutant_source("zero-grad-missing"))
    (folder / "dave").mkdir()
    for name in ("v1.py", "v2.py"):
        (folder / "dave" / name).write_text(REFERENCE.read_text())
    out = folder / "gradebook"  # inside the class folder: it is no student's
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(main, ["grade", str(folder), "-o", str(out), "--only", ONLY, "--lang", "en"])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    return folder, out, result


def test_students_are_named_after_their_subfolders(graded_class):
    _, out, result = graded_class
    with (out / "grades.csv").open(newline="") as fh:
        rows = {r["submission"]: r for r in csv.DictReader(fh)}
    assert list(rows) == ["alice", "bob", "carol.py", "dave"]
    assert rows["alice"]["passed"] == rows["bob"]["passed"] == "true" and rows["carol.py"][ONLY] == "fail"
    assert "dave/ holds 2 files to grade (v1.py, v2.py)" in rows["dave"]["error"] and rows["dave"][ONLY] == ""
    results = {e["submission"]: e for e in json.loads((out / "results.json").read_text())}
    assert results["alice"]["feedback"] == "feedback/alice.md" and results["alice"]["file"].endswith("alice/loop.py")
    assert "# Feedback on alice" in (out / "feedback" / "alice.md").read_text()
    assert "dave/ holds 2 files" in (out / "feedback" / "dave.md").read_text()
    assert "Graded 4 submission(s)" in result.output
    assert "2 pass every check, 1 fail some check, 1 cannot" in result.output


def test_identical_submissions_are_listed_and_keep_their_grades(graded_class):
    _, out, result = graded_class
    with (out / "similar.csv").open(newline="") as fh:
        pairs = list(csv.DictReader(fh))
    assert pairs[0] == {"first": "alice", "second": "bob", "similarity": "1.0000", "identical": "true"}
    # carol's file is the reference less one line: near-identical to both (files from one starter are alike)
    assert [(p["first"], p["second"], p["identical"]) for p in pairs[1:]] == [
        ("alice", "carol.py", "false"), ("bob", "carol.py", "false")]
    assert all(0.95 <= float(p["similarity"]) < 1 for p in pairs[1:])
    assert "3 pair(s) of submissions are identical or near-identical (1 identical)" in result.output
    with (out / "grades.csv").open(newline="") as fh:
        scores = {r["submission"]: r["score"] for r in csv.DictReader(fh)}
    assert scores["alice"] == scores["bob"] == "1.0000"  # a review aid: no grade moved


def test_every_output_is_readable_by_group_and_others(graded_class):
    _, out, _ = graded_class
    files = [p for p in out.rglob("*") if p.is_file() and p.name != ".secret"]
    assert {"grades.csv", "results.json", "class.html", "similar.csv", "alice.md"} <= {p.name for p in files}
    assert {p.name: _mode(p) for p in files} == {p.name: 0o644 for p in files}
    assert _mode(out / ".secret") == 0o600


def test_the_class_page_shows_rates_rows_links_and_pairs(graded_class):
    _, out, _ = graded_class
    page = (out / "class.html").read_text()
    assert "://" not in page and "<script" not in page  # nothing fetched, nothing run
    assert re.search(rf"<td class='name'>{re.escape(ONLY)}</td>.*?2/3 \(67%\)", page, re.S)
    for name in ("alice", "bob", "carol.py", "dave"):
        link = f"feedback/{name}.md"
        assert f"<a href='{link}'>{name}</a>" in page and (out / link).is_file()
    assert "dave/ holds 2 files to grade" in page
    assert re.search(r"<td class='name'>alice</td><td class='name'>bob</td><td class='num bad'>identical</td>", page)


def test_the_class_page_escapes_names_and_speaks_spanish(tmp_path):
    from checker.gradebook.book import Course, class_page

    report = _report("x.py", "fail")
    page = class_page([report], Course.equal(["steps.overfit"]), "es", {"x.py": "<b>eve</b>"})
    assert "<b>eve" not in page and "&lt;b&gt;eve&lt;/b&gt;" in page
    # a name no file system takes as one file name ('/'): its feedback file is named by a cut name and a hash
    assert re.search(r"feedback/%3Cb%3Eeve%3C_b%3E-[0-9a-f]{12}\.md", page)
    assert "Aprobados por comprobación" in page and "0/1 (0%)" in page


def test_the_class_page_renders_in_a_browser(graded_class, tmp_path):
    from benchmarks.screenshot_html import find_chromium, screenshot

    if find_chromium() is None:
        pytest.skip("Chromium is not installed")
    _, out, _ = graded_class
    png = screenshot(out / "class.html", tmp_path / "class.png", width=1000, height=700)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1000, 700) and len(data) > 20_000  # a blank page compresses to far less


# --------------------------------------------------------------------------- the documented columns


def _documented_columns(doc: str, start: str) -> list[str]:
    """The grades.csv columns the doc lists after ``start``: the first cell of each row of the table that follows
    it, else every backquoted name up to the next blank line."""
    text = (ROOT / "docs" / doc).read_text()
    assert start in text, f"{doc}: no passage starting {start!r}"
    rest = text[text.index(start) + len(start):].lstrip("\n")
    if rest.startswith("|"):
        rows = [line for line in rest.split("\n\n")[0].splitlines() if line.startswith("| `")]
        return [re.match(r"\| `([^`]+)`", row).group(1) for row in rows]
    return re.findall(r"`([^`]+)`", rest.split("\n\n")[0])


def test_the_docs_list_every_grades_csv_column_in_order(tmp_path):
    from checker.gradebook.book import GRADES_COLUMNS, Course, grades_csv

    course = Course.equal(["steps.overfit", "steps.fresh_grads"])
    header = next(csv.reader(grades_csv([_report("a.py")], course).splitlines()))
    at = GRADES_COLUMNS.index("<check id>")
    assert header == [*GRADES_COLUMNS[:at], *course.check_ids, *GRADES_COLUMNS[at + 1:]]
    for doc, start in (("grading.md", "The columns of `grades.csv`, in order:"),
                       ("autograding.md", "- `gradebook/grades.csv`, its columns in order:")):
        assert _documented_columns(doc, start) == list(GRADES_COLUMNS), doc
