"""Gradebooks as instructors keep them (issue 32, item 5): regrading some students into an OUT and keeping the
others, a roster that names who is missing, LMS exports (Canvas, Moodle), late submissions, similarity measured on
what each file changed from its starter, errors on one line naming the submission, statuses in the course's
language; and the similarity step bounded (issue 31: winnowed fingerprints, not whole-file comparison)."""

from __future__ import annotations

import csv
import io
import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.cli import main
from tests.conftest import REFERENCE

ONLY = "steps.fresh_grads"


def _broken() -> str:
    from checker.catalogue.mutants import mutant_source

    return mutant_source("zero-grad-missing")


def _rows(out: Path, name: str = "grades.csv") -> dict[str, dict]:
    with (out / name).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    key = next(iter(rows[0])) if rows else "submission"
    return {r[key]: r for r in rows}


def _grade(folder: Path, out: Path, *extra: str):
    result = CliRunner().invoke(main, ["grade", str(folder), "-o", str(out), "--only", ONLY, "--lang", "en",
                                       "--secret", "s3cr3t", *extra])
    assert result.exit_code == 0, result.output
    return result


# --------------------------------------------------------------------------- one class, graded then regraded


@pytest.fixture(scope="module")
def kept_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("habits")
    folder, out = root / "class", root / "out"
    folder.mkdir()
    (folder / "alice.py").write_text(REFERENCE.read_text())
    (folder / "bob.py").write_text(_broken())
    (folder / "zoe.py").write_text(_broken())
    past, recent = time.time() - 3 * 86400, time.time()
    os.utime(folder / "alice.py", (past, past))
    os.utime(folder / "bob.py", (recent, recent))
    roster = root / "roster.csv"
    roster.write_text("Name,SIS User ID,Email\nalice,1001,alice@uni.example\nbob,1002,bob@uni.example\n"
                      "carol,1003,carol@uni.example\nzoe,1004,zoe@uni.example\n")
    deadline = time.strftime("%Y-%m-%dT%H:%M", time.localtime(time.time() - 86400))
    first = _grade(folder, out, "--roster", str(roster), "--deadline", deadline)
    before = _rows(out)
    # one student fixes their file; only that file is graded again, into the class's OUT
    again = root / "again"
    again.mkdir()
    (again / "bob.py").write_text(REFERENCE.read_text() + "\n# fixed\n")
    second = _grade(again, out, "--update", "--roster", str(roster))
    return out, before, _rows(out), first, second


def test_the_roster_names_who_is_missing(kept_class):
    _, before, _, first, _ = kept_class
    assert list(before) == ["alice.py", "bob.py", "zoe.py", "carol"]
    assert "no submission from carol" in before["carol"]["error"] and before["carol"]["score"] == "0.0000"


def test_late_submissions_are_noted_with_their_time(kept_class):
    _, before, _, _, _ = kept_class
    assert before["alice.py"]["late"] == "false" and before["bob.py"]["late"] == "true"
    assert before["bob.py"]["submitted"][:4].isdigit() and "T" in before["bob.py"]["submitted"]


def test_regrading_one_student_keeps_the_other_rows(kept_class):
    out, before, after, _, second = kept_class
    assert list(after) == ["alice.py", "bob.py", "zoe.py", "carol"]
    assert after["bob.py"]["passed"] == "true" and before["bob.py"]["passed"] == "false"
    for name in ("alice.py", "zoe.py"):
        assert {k: after[name][k] for k in ("passed", "score", ONLY)} == {k: before[name][k]
                                                                          for k in ("passed", "score", ONLY)}
    changes = (out / "changes.md").read_text()
    assert "no longer in the folder" not in changes and "| bob.py |" in changes
    assert "| alice.py |" not in changes and "| zoe.py |" not in changes
    results = {e["submission"]: e for e in json.loads((out / "results.json").read_text())}
    assert set(results) == {"alice.py", "bob.py", "zoe.py", "carol"}


def test_lms_exports_hold_canvas_and_moodle_columns(kept_class):
    out, _, _, _, _ = kept_class
    canvas = list(csv.reader(io.StringIO((out / "canvas.csv").read_text())))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "kata"]
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == "1"
    by_name = {row[0]: row for row in canvas[2:]}
    assert by_name["bob"][2] == "1002" and by_name["bob"][-1] == "1" and by_name["zoe"][-1] == "0"
    assert by_name["carol"][-1] == ""  # nothing handed in: no grade, not a zero
    moodle = list(csv.DictReader(io.StringIO((out / "moodle.csv").read_text())))
    assert list(moodle[0]) == ["Full name", "ID number", "Username", "Email address", "Grade", "Feedback"]
    assert {r["Full name"]: r["Email address"] for r in moodle}["alice"] == "alice@uni.example"


def test_update_needs_an_earlier_grading(tmp_path):
    (tmp_path / "a.py").write_text(REFERENCE.read_text())
    result = CliRunner().invoke(main, ["grade", str(tmp_path), "-o", str(tmp_path / "out"), "--update"])
    assert result.exit_code == 2 and "--update" in result.output and "Traceback" not in result.output


def test_a_bad_roster_or_deadline_is_one_line(tmp_path):
    (tmp_path / "a.py").write_text(REFERENCE.read_text())
    roster = tmp_path / "r.csv"
    roster.write_text("email,id\nx@y,1\n")
    runner = CliRunner()
    result = runner.invoke(main, ["grade", str(tmp_path), "-o", str(tmp_path / "o1"), "--roster", str(roster)])
    assert result.exit_code == 2 and "no 'name' column" in result.output
    result = runner.invoke(main, ["grade", str(tmp_path), "-o", str(tmp_path / "o2"), "--deadline", "friday"])
    assert result.exit_code == 2 and "ISO 8601" in result.output and "Traceback" not in result.output


def test_a_plain_roster_is_one_name_per_line(tmp_path):
    from checker.gradebook.roster import match, read_roster

    path = tmp_path / "roster.txt"
    path.write_text("# lab 4\nalice\n\nbob\n")
    students = read_roster(path)
    owner, missing = match(students, ["alice", "bob.ipynb", "eve.py"])
    assert [s.name for s in students] == ["alice", "bob"] and set(owner) == {"alice", "bob.ipynb"} and not missing
    path.write_text("alice\nAlice\n")
    with pytest.raises(Exception, match="listed twice"):
        read_roster(path)


# --------------------------------------------------------------------------- what the feedback and the CSV say


def _report(error: str | None = None, status: str = "fail"):
    from checker.engine.grading import CheckResult, Report, Status

    checks = [] if error else [CheckResult(ONLY, "steps", "fresh grads", Status(status), "measured")]
    return Report("/home/teacher/class/alice/loop.py", checks=checks, error_kind="syntax" if error else None,
                  error=error)


def test_the_feedback_says_statuses_in_the_courses_language():
    from checker.gradebook.book import Course, feedback_markdown

    course = Course.equal([ONLY])
    spanish = feedback_markdown(_report(), course, "es", {})
    assert "estado: **falla**" in spanish and "**fail**" not in spanish
    assert "status: **fail**" in feedback_markdown(_report(), course, "en", {})


def test_errors_are_one_line_and_name_the_submission_not_the_graders_folder(tmp_path):
    from checker.gradebook.book import Course, write_gradebook

    error = ("/home/teacher/class/alice/loop.py:3:9: syntax error: invalid syntax\n    x = (\n        ^")
    report = _report(error)
    write_gradebook([report], Course.equal([ONLY]), tmp_path, names={report.file: "alice"},
                    roots=(Path("/home/teacher/class"),))
    row = _rows(tmp_path)["alice"]
    assert row["error"] == "alice/loop.py:3:9: syntax error: invalid syntax | x = ("
    for path in (tmp_path / "grades.csv", tmp_path / "class.html", tmp_path / "feedback" / "alice.md"):
        assert "/home/teacher" not in path.read_text(), path


def test_a_csv_cell_never_starts_a_formula():
    from checker.engine.formats import csv_cell

    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert csv_cell(text) == "'" + text
    assert csv_cell("alice") == "alice" and csv_cell("0.5000") == "0.5000"


def test_long_names_are_cut_with_a_hash_and_stay_apart():
    from checker.gradebook.book import MAX_NAME_BYTES, safe_file_name

    a, b = "é" * 126 + "a.py", "é" * 126 + "b.py"  # 256 bytes each, alike until their end
    first, second = safe_file_name(a), safe_file_name(b)
    assert first != second and all(len(n.encode()) <= MAX_NAME_BYTES for n in (first, second))
    assert first.endswith(".md") and first.startswith("é") and safe_file_name("alice") == "alice.md"


def test_a_student_file_that_cannot_be_written_stops_nothing(tmp_path, monkeypatch):
    from checker.gradebook import book as gradebook

    real = gradebook.atomic_write

    def refusing(path, text):
        if path.parent.name == "feedback":
            raise OSError(36, "File name too long")
        return real(path, text)

    monkeypatch.setattr(gradebook, "atomic_write", refusing)
    written = gradebook.write_gradebook([_report()], gradebook.Course.equal([ONLY]), tmp_path)
    assert (tmp_path / "grades.csv").is_file() and (tmp_path / "results.json").is_file()
    assert (tmp_path / "class.html").is_file() and written.failed == ["loop.py.md: File name too long"]


# --------------------------------------------------------------------------- similarity


def _planted_class() -> tuple[dict[str, str], str]:
    """A class written from one starter: honest students fix it their own ways; two plant one copy."""
    from checker.catalogue.katas import find_kata, load_katas, starter_source

    kata = next(k for k in load_katas() if k.mutant == "zero-grad-missing")
    starter = starter_source(find_kata(load_katas(), kata.slug))
    fixed = starter.replace("        loss.backward()", "        optimizer.zero_grad()\n        loss.backward()", 1)
    assert fixed != starter
    helper = '''

def summarize(history):
    best = min(history, key=lambda row: row["val_loss"])
    report = {"best_epoch": best["epoch"], "best_loss": round(best["val_loss"], 4)}
    for key in ("train_loss", "val_loss"):
        report[key + "_curve"] = [round(row[key], 3) for row in history]
    return report
'''
    sources = {f"honest{i}.py": fixed + f"\n# student {i}\nEXTRA_{i} = {i} * 3\n" for i in range(8)}
    sources["cheat_a.py"] = fixed + helper
    sources["cheat_b.py"] = "# my own work\n" + fixed + helper.replace("    ", "  ")
    return sources, starter


def test_with_the_starter_as_base_planted_copies_top_the_list():
    from checker.gradebook.similarity import similar_pairs

    sources, starter = _planted_class()
    without = similar_pairs(sources)
    assert len(without) >= 28  # every pair of a kata class is alike by nature
    pairs = similar_pairs(sources, base=starter)
    assert [(p.first, p.second) for p in pairs] == [("cheat_a.py", "cheat_b.py")]


def test_similarity_reads_each_file_once_not_each_pair(monkeypatch):
    """Two 12,000-line colluding files: each is tokenized once, and no pair is compared whole."""
    from checker.gradebook import similarity

    body = "\n".join(f"def f{i}(x):\n    y = x * {i} + {i % 7}\n    return y - {i}" for i in range(4000))
    sources = {"a.py": body, "b.py": "# copied\n" + body, "c.py": REFERENCE.read_text()}
    calls = []
    real = similarity.token_stream
    monkeypatch.setattr(similarity, "token_stream", lambda s: calls.append(len(s)) or real(s))
    pairs = similarity.similar_pairs(sources)
    assert [(p.first, p.second, p.identical) for p in pairs] == [("a.py", "b.py", True)]
    assert len(calls) == len(sources)


def test_a_relative_class_folder_is_taken_out_of_messages_by_its_absolute_path_only(tmp_path, monkeypatch):
    from checker.engine.grading import Report
    from checker.gradebook.book import plain_report

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c").mkdir()
    report = Report(str(tmp_path / "c" / "x.py"), error_kind="syntax",
                    error=f"{tmp_path / 'c' / 'x.py'}:1: syntax error (c: a cat) leads outside {tmp_path / 'c'}")
    assert plain_report(report, (Path("c"),)).error == "x.py:1: syntax error (c: a cat) leads outside c/"


def test_the_class_page_says_what_similarity_measures_with_a_base():
    from checker.gradebook.book import Course, class_page

    page = class_page([_report()], Course.equal([ONLY]), "en", based=True)
    assert "changes from the starter (--base) match at 50% or more" in page
    assert "matches at 95% or more" in class_page([_report()], Course.equal([ONLY]), "en")
    assert "respecto al punto de partida" in class_page([_report()], Course.equal([ONLY]), "es", based=True)


def test_the_grades_are_written_before_the_similarity_step_and_never_wait_on_it(tmp_path, monkeypatch):
    from checker.gradebook import book as gradebook

    seen = []

    def similar_pairs(sources, base=None):  # the step, when it runs: the grades are already on disk
        seen.append((tmp_path / "grades.csv").is_file() and (tmp_path / "results.json").is_file())
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(gradebook, "similar_pairs", similar_pairs)
    written = gradebook.write_gradebook([_report()], gradebook.Course.equal([ONLY]), tmp_path,
                                        sources={"loop.py": "x = 1\n"})
    assert seen == [True] and written.similar == [] and written.failed == ["similar.csv's pairs (RecursionError)"]
    assert (tmp_path / "class.html").is_file() and (tmp_path / "feedback" / "loop.py.md").is_file()


def test_integrity_reasons_quoting_a_files_text_cannot_link_in_the_feedback():
    from checker.gradebook.book import Course, feedback_markdown

    report = _report()
    report.integrity = ["opens '[open me](javascript:alert(1))' <img src=x>"]
    text = feedback_markdown(report, Course.equal([ONLY]), "en", {})
    assert "- opens '\\[open me\\](javascript:alert(1))' \\<img src=x\\>" in text and "[open me](" not in text


def test_a_bad_roster_or_deadline_stops_kata_grade_before_anything_is_graded(tmp_path):
    from checker.gradebook.classbook import ClassOptions, check_out

    roster = tmp_path / "r.txt"
    roster.write_text("alice\nalice\n")
    for options, said in ((ClassOptions(roster=roster), "listed twice"), (ClassOptions(deadline="soon"), "ISO 8601")):
        with pytest.raises(Exception, match=said):
            check_out(tmp_path / "out", False, options, "en")


def test_a_student_folder_that_cannot_be_read_is_a_row(tmp_path, monkeypatch):
    """As a plain user, a subfolder without read permission (as root nothing is refused, so it is simulated)."""
    from checker.gradebook import book as gradebook

    (tmp_path / "alice").mkdir()
    def refused(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(gradebook, "find_submissions", refused)
    assert [f.problem for f in gradebook.find_class(tmp_path)] == ["alice/ cannot be read (Permission denied)"]
