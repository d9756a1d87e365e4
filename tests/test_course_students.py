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
