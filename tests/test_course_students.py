"""A course in its students' hands (tests/digits_course.py: digits, 64 features, a data file the course ships): the
checks' titles follow the track, the track's own data file is never taken for interference, and the students' copy
of the course (`kata course students OUT`) holds no reference and no mutant, yet a learner in a fresh shell, with
nothing set, gets the course's track, its data and a correct verdict from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.digits_course import make_digits_course

KATA_BIN = Path(sys.executable).parent / "kata"


def kata(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """kata in a fresh shell: none of kata's variables set (but the drafts, as conftest does)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("KATA_")}
    full.update({"KATA_DRAFTS": "1", "LANG": "C", **(env or {})})
    return subprocess.run([str(KATA_BIN), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_digits_course(tmp_path_factory.mktemp("digits") / "course")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_checks_of_a_course_track_name_no_lesson_of_moons(course, lang):
    listed = kata("checks", "--track", "digits", "--json", "--lang", lang, cwd=course)
    assert listed.returncode == 0, listed.stderr
    titles = {row["id"]: row["title"] for row in json.loads(listed.stdout)}
    assert len(titles) == 28
    words = ("lesson", "moons") if lang == "en" else ("lección", "moons")
    assert not [t for t in titles.values() if any(w in t.lower() for w in words)], titles
    assert titles["data.lesson"] == ("the track's data and split" if lang == "en"
                                     else "los datos y la partición del recorrido")


def test_a_students_copy_holds_no_answer_and_grades_in_a_fresh_shell(course, tmp_path):
    """`kata autograder students` writes the course without its reference, its mutants and its weights; inside that
    copy, in a fresh shell with nothing set, `kata next` opens the course's kata with its data, and `kata check` fails
    the starter for its own fault and passes the fix, running the checks that need no reference (said first)."""
    from tests.digits_course import digits_reference

    out = tmp_path / "students"
    made = kata("autograder", "students", "-o", str(out), "--course", str(course), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["kata.toml", "katas/digits/010-digits-that-will-not-settle.toml",
                       "starters/digits/digits-that-will-not-settle.py", "tracks/digits.npz", "tracks/digits.toml"]
    # no answer anywhere: none of the reference's comments (they say why each line is where it is), no weights
    comments = {line.strip() for line in digits_reference().splitlines() if line.strip().startswith("# ")}
    texts = [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file() and p.suffix != ".npz"]
    assert comments and not [c for c in comments if any(c in t for t in texts)]
    assert "[points]" not in (out / "kata.toml").read_text() and "students = true" in (out / "kata.toml").read_text()
    # a student, in the copy, nothing set
    opened = kata("next", cwd=out)
    assert opened.returncode == 0, opened.stderr
    mine = out / "digits-that-will-not-settle.py"
    assert mine.read_text() == (out / "starters" / "digits" / mine.name).read_text() and (out / "digits.npz").is_file()
    starter = kata("check", "--json", cwd=out)
    assert starter.returncode == 1, starter.stdout + starter.stderr
    from checker.checks import REGISTRY

    checks = json.loads(starter.stdout)["checks"]
    assert not [c["id"] for c in checks if REGISTRY[c["id"]].reference] and len(checks) == 20
    failed = {c["id"] for c in checks if c["status"] != "pass"}
    assert "steps.fresh_grads" in failed and "data.lesson" not in failed, failed
    assert "8 of the 28 checks of track digits compare your loop with the course's reference" in starter.stderr
    mine.write_text(digits_reference(), encoding="utf-8")
    fixed = kata("check", "--lang", "es", cwd=out)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "copia del curso para estudiantes" in fixed.stdout and "20/20" in fixed.stdout
    assert "kata solution" not in fixed.stdout and "cuando tu profesor evalúa tu trabajo" in fixed.stdout
    solution = kata("solution", cwd=out)
    assert solution.returncode == 2 and "stays with your instructor" in solution.stderr
    assert "Traceback" not in solution.stderr


def test_a_students_copy_refuses_in_one_line(course, tmp_path):
    out = tmp_path / "students"
    assert kata("autograder", "students", "-o", str(out), "--course", str(course), cwd=tmp_path).returncode == 0
    again = kata("autograder", "students", "-o", str(out), "--course", str(course), cwd=tmp_path)
    assert again.returncode == 2 and "the folder is not empty" in again.stderr
    copy = kata("autograder", "students", "-o", str(tmp_path / "b"), "--course", str(out), cwd=tmp_path)
    assert copy.returncode == 2 and "already a students' copy" in copy.stderr
    none = kata("autograder", "students", "-o", str(tmp_path / "c"), cwd=tmp_path)
    assert none.returncode == 2 and "--course DIR" in none.stderr
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_a_spanish_course_speaks_spanish_to_its_learners_with_nothing_set(tmp_path):
    """The course's language (kata.toml) is every learner command's too, after --lang and $KATA_LANG: `kata next`
    in a students' copy of a Spanish course speaks Spanish under LANG=C; KATA_LANG=en still wins."""
    course = make_digits_course(tmp_path / "course", language="es")
    out = tmp_path / "students"
    assert kata("autograder", "students", "-o", str(out), "--course", str(course), cwd=tmp_path).returncode == 0
    assert 'language = "es"' in (out / "kata.toml").read_text()
    opened = kata("next", cwd=out)
    assert opened.returncode == 0, opened.stderr
    assert "Dígitos que no se asientan" in opened.stdout and "del recorrido digits" in opened.stdout
    solution = kata("solution", cwd=out)
    assert solution.returncode == 2 and "resuelve" in solution.stderr.lower(), solution.stderr
    english = kata("show", cwd=out, env={"KATA_LANG": "en"})
    assert english.returncode == 0 and "Digits that will not settle" in english.stdout
    # what needs the reference says so in one line, in the course's language: no traceback
    for command in (["explore", "digits-that-will-not-settle.py", "-o", "page.html"], ["run", "--lesson"]):
        refused = kata(*command, cwd=out)
        assert refused.returncode == 2 and "necesita la referencia del recorrido digits" in refused.stderr
        assert "Traceback" not in refused.stderr
    # and the course itself (its reference there): kata explore's page and lines in Spanish
    me = tmp_path / "me"
    me.mkdir()
    assert kata("next", cwd=me, env={"KATA_COURSE": str(course)}).returncode == 0
    explored = kata("explore", "digits-that-will-not-settle.py", "-o", str(tmp_path / "page.html"), cwd=me)
    assert explored.returncode == 0, explored.stderr
    assert "ábrela en un navegador" in explored.stdout + explored.stderr
    assert "componentes principales" in (tmp_path / "page.html").read_text()


def test_the_tracks_own_data_file_is_read_where_it_lies_and_nothing_beside_it(course, tmp_path):
    """A loop that reads the track's declared data file by its absolute path (the course's tracks/digits.npz), graded
    from a folder with no record of the course (`--course` alone), is graded, never called interference, in `kata
    check` and `kata run`; the track file beside it stays hidden (reading it is still refused)."""
    from tests.digits_course import digits_reference

    data = course / "tracks" / "digits.npz"
    src = digits_reference().replace('Path(__file__).with_name("digits.npz")', repr(str(data)))
    assert repr(str(data)) in src
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "loop.py").write_text(src, encoding="utf-8")
    checked = kata("check", "loop.py", "--course", str(course), "--json", cwd=elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert {c["status"] for c in json.loads(checked.stdout)["checks"]} == {"pass"}
    ran = kata("run", "loop.py", "--track", "digits", "--epochs", "1", "--json", cwd=elsewhere,
               env={"KATA_COURSE": str(course)})
    assert ran.returncode == 0, ran.stderr
    beside = str(course / "tracks" / "digits.toml")
    line = '        X, y = data["X"], data["y"]'
    peek = src.replace(line, f"{line}\n        open({beside!r}).read()")
    assert peek != src
    (elsewhere / "peek.py").write_text(peek, encoding="utf-8")
    peeked = kata("check", "peek.py", "--course", str(course), cwd=elsewhere)
    assert peeked.returncode == 2 and "digits.toml" in peeked.stdout + peeked.stderr
