"""A learner on a course's track (tests/digits_course.py: digits, 64 features, a data file the course ships): the
working folder remembers its course and track (`.kata/course.json`), so every later command, in a fresh shell with
nothing set, grades on the course's track with its data; notebook starters run as Jupyter runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.digits_course import digits_reference, make_digits_course

KATA_BIN = Path(sys.executable).parent / "kata"


def kata(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """kata in a fresh shell: none of kata's variables set (but the drafts, as conftest does)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("KATA_")}
    full.update({"KATA_DRAFTS": "1", "LANG": "C", **(env or {})})
    return subprocess.run([str(KATA_BIN), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_digits_course(tmp_path_factory.mktemp("digits") / "course")


def test_a_learners_folder_remembers_its_course_and_track_in_any_shell(course, tmp_path):
    me = tmp_path / "me"
    me.mkdir()
    # started with the course named in the environment, from the learner's own folder
    opened = kata("next", "--track", "digits", cwd=me, env={"KATA_COURSE": str(course)})
    assert opened.returncode == 0, opened.stderr
    assert json.loads((me / ".kata" / "course.json").read_text()) == {"course": str(course.resolve()),
                                                                      "track": "digits"}
    ((_slug, record),) = json.loads((me / ".kata" / "progress.json").read_text())["katas"].items()
    assert record["track"] == "digits" and (me / "digits.npz").is_file()
    mine = me / record["file"]
    starter = mine.read_text(encoding="utf-8")
    # a new shell, nothing set: the kata's file is graded on digits, its data file read, never called interference
    checked = kata("check", str(mine), "--only", "data.lesson", "--json", cwd=me)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["checks"][0]["status"] == "pass"
    ran = kata("run", str(mine), "--epochs", "1", "--json", cwd=me)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)[0]["epoch"] == 1
    # the fix, checked as the current kata from another folder with --dir: graded on the course's track
    mine.write_text(digits_reference(), encoding="utf-8")
    only = [w for cid in ("data.lesson", "reference.make_data", "reference.train_epoch", "loader.order")
            for w in ("--only", cid)]
    fixed = kata("check", "--dir", str(me), "--json", *only, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert {c["status"] for c in json.loads(fixed.stdout)["checks"]} == {"pass"}
    # and the starter, as it was, fails for its own fault only
    mine.write_text(starter, encoding="utf-8")
    broken = kata("check", "--dir", str(me), "--json", *only, cwd=tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    failed = [c["id"] for c in json.loads(broken.stdout)["checks"] if c["status"] != "pass"]
    assert "reference.train_epoch" in failed and "data.lesson" not in failed, failed


def test_a_notebook_starter_runs_as_jupyter_runs_it(course, tmp_path):
    """Jupyter defines no __file__: the starter defines it where the reference reads its data beside itself, and
    every code cell runs in order, as Jupyter runs them, in the working folder."""
    me = tmp_path / "me"
    me.mkdir()
    opened = kata("next", "--notebook", "--track", "digits", cwd=me, env={"KATA_COURSE": str(course)})
    assert opened.returncode == 0, opened.stderr
    (notebook,) = me.glob("*.ipynb")
    cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    code = "\n\n".join("".join(c["source"]) for c in cells)
    code = code.replace('if __name__ == "__main__":', "if False:")  # the lesson's full run: not needed here
    probe = code + "\n\nprint(tuple(make_data()[0].shape))\n"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=me, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("(1500, 64)")
    # and kata grades it as it is
    checked = kata("check", str(notebook), "--only", "data.lesson", "--json", cwd=me)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_explore_and_plot_draw_a_64_feature_track_on_its_principal_plane(course, tmp_path):
    """On the digits track (64 features, the course's file), kata run --plot saves the curves and a boundary on
    the training set's first two principal components, titled with its settings; kata explore writes a page that
    names that plane and carries no folder of the learner's; kata run --compare keeps the steps column."""
    from PIL import Image

    me = tmp_path / "me"
    me.mkdir()
    assert kata("next", "--track", "digits", cwd=me, env={"KATA_COURSE": str(course)}).returncode == 0
    (mine,) = me.glob("*.py")
    plot = tmp_path / "run.png"
    ran = kata("run", mine.name, "--epochs", "2", "--plot", str(plot), cwd=me)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert Image.open(plot).size[0] > 900  # the curves and a boundary panel beside them
    page = tmp_path / "page.html"
    explored = kata("explore", mine.name, "-o", str(page), cwd=me)
    assert explored.returncode == 0, explored.stdout + explored.stderr
    text = page.read_text()
    assert "The data has 64 features" in text and "first two principal components of the training set" in text
    assert str(tmp_path) not in text and mine.name in text
    compared = kata("run", mine.name, "--compare", mine.name, "--epochs", "1", cwd=me)
    assert compared.returncode == 0, compared.stderr
    assert "steps A" in compared.stdout and "steps B" in compared.stdout


def test_a_saved_plot_is_titled_with_its_settings():
    from types import SimpleNamespace

    from checker.learn.plots import plot_title

    settings = SimpleNamespace(optimizer="adam", lr=0.01, epochs=5, batch_size=64, scheduler=None, clip=1.0, seed=3)
    assert plot_title("digits", settings, "en") == (
        "kata run, track digits: adam lr 0.01, 5 epochs, batch size 64, scheduler none, clip 1, seed 3")
    assert "recorrido digits" in plot_title("digits", settings, "es")
