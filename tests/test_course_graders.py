"""One course, every grader: the digits course (tests/digits_course.py: 64 features, a file the course ships, weights
and a language) gives the same points in `kata grade --course`, Gradescope (setup.sh then run_autograder, in a
scratch root laid out as /autograder), the GitHub workflow's steps and the Docker image's entrypoint (without a
Docker daemon), in English and in Spanish. The GitHub template holds no reference and no mutant of the course.
"""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.digits_course import digits_reference, make_digits_course, zero_grad_missing

KATA_BIN = Path(sys.executable).parent / "kata"
SECRET = "one secret for every grader"
SUBMISSION = "loop.py"


def kata(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "KATA_SECRET": SECRET, "LANG": "C", **(env or {})}
    for name in ("KATA_LANG", "KATA_COURSE", "KATA_TRACKS", "KATA_DIR"):
        full.pop(name, None)
    return subprocess.run([str(KATA_BIN), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module", params=["en", "es"])
def setting(request, tmp_path_factory):
    """(course folder, the class folder holding one submission, the language): a course declaring ``language``,
    and a loop without zero_grad, which loses the points of reference.train_epoch and keeps the others."""
    lang = request.param
    root = tmp_path_factory.mktemp(f"graders-{lang}")
    course = make_digits_course(root / "course", language=lang)
    klass = root / "class"
    klass.mkdir()
    (klass / SUBMISSION).write_text(zero_grad_missing(digits_reference()), encoding="utf-8")
    return course, klass, lang


def _grades(out: Path) -> dict[str, str]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    return row


@pytest.fixture(scope="module")
def graded(setting):
    """`kata grade --course`'s points: what every packaged grader must give."""
    course, klass, _lang = setting
    out = klass.parent / "gradebook"
    proc = kata("grade", str(klass), "-o", str(out), "--course", str(course), cwd=klass.parent)
    assert proc.returncode == 0, proc.stderr
    row = _grades(out)
    assert (float(row["points"]), float(row["max_points"])) == (5.0, 10.0), row
    assert row["reference.train_epoch"] == "fail" and row["data.lesson"] == row["loader.order"] == "pass", row
    return float(row["points"]), float(row["max_points"])


def _fake_tools(bin_dir: Path, log: Path) -> None:
    """apt-get and python3 as setup.sh calls them, on no network: python3 -m venv makes a venv whose pip logs its
    arguments and whose kata is this checkout's."""
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho apt-get \"$@\" >> {shlex.quote(str(log))}\n")
    (bin_dir / "python3").write_text(
        "#!/bin/sh\n"
        '[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 9\n'
        'mkdir -p "$3/bin"\n'
        f"printf '#!/bin/sh\\necho pip \"$@\" >> %s\\n' {shlex.quote(shlex.quote(str(log)))} > \"$3/bin/pip\"\n"
        'chmod 755 "$3/bin/pip"\n'
        f'ln -s {shlex.quote(str(KATA_BIN))} "$3/bin/kata"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)


def test_gradescope_gives_the_points_of_kata_grade(setting, graded, tmp_path):
    course, klass, lang = setting
    out = tmp_path / "zip"
    # no --lang: the course's language, whatever this machine's locale says
    built = kata("autograder", "gradescope", "-o", str(out), "--course", str(course), "--kata", "kata==0.1.0",
                 "--secret", SECRET, cwd=tmp_path, env={"LANG": "es_ES.UTF-8" if lang == "en" else "C"})
    assert built.returncode == 0, built.stderr
    root = tmp_path / "autograder"
    source = root / "source"
    with zipfile.ZipFile(out / "autograder.zip") as zf:
        for info in zf.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)
    assert f"'--lang' '{lang}'" in (source / "run_autograder").read_text()
    # setup.sh, as Gradescope runs it once (its system tools faked: no root, no network here)
    log, venv = tmp_path / "setup.log", tmp_path / "venv"
    _fake_tools(tmp_path / "bin", log)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "KATA_VENV": str(venv),
           "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    setup = subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert setup.returncode == 0, setup.stderr
    assert "pip install kata==0.1.0" in log.read_text()
    # then run_autograder for the submission, with /autograder/submission and /autograder/results
    (root / "submission").mkdir()
    shutil.copy(klass / SUBMISSION, root / "submission" / SUBMISSION)
    env = {k: v for k, v in env.items() if k not in ("KATA_SECRET", "KATA_LANG", "KATA_COURSE")}
    proc = subprocess.run([str(source / "run_autograder")], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert (results["score"], sum(t["max_score"] for t in results["tests"])) == graded
    (said,) = [t["output"] for t in results["tests"] if t["name"].startswith("reference.train_epoch")]
    assert ("semilla" in said) == (lang == "es"), said  # in the course's language


def _steps(flow: dict) -> list[dict]:
    return flow["jobs"]["check"]["steps"]


def test_the_github_workflow_gives_the_points_of_kata_grade_without_the_course_in_the_template(setting, graded,
                                                                                               tmp_path):
    yaml = pytest.importorskip("yaml")
    course, klass, lang = setting
    template = tmp_path / "template"
    built = kata("autograder", "github", "-o", str(template), "--course", str(course), "--course-repo",
                 "teacher/digits-course", "--kata", "kata==0.1.0", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    # what every student gets: the workflow alone, no reference, no mutant, no data of the course
    assert sorted(p.relative_to(template).as_posix() for p in template.rglob("*") if p.is_file()) == [
        ".github/workflows/kata.yml"]
    text = (template / ".github" / "workflows" / "kata.yml").read_text()
    assert "zero_grad" not in text and "digits.npz" not in text
    # the workflow's steps, run as a runner runs them: the student's repository, then the course's
    workspace = tmp_path / "workspace"
    shutil.copytree(template, workspace)
    shutil.copy(klass / SUBMISSION, workspace / SUBMISSION)
    junit = None
    for step in _steps(yaml.safe_load(text)):
        uses, run = step.get("uses", ""), step.get("run")
        if uses.startswith("actions/checkout@") and "with" in step:
            assert step["with"]["repository"] == "teacher/digits-course"
            assert step["with"]["token"] == "${{ secrets.KATA_COURSE_TOKEN }}"
            shutil.copytree(course, workspace / step["with"]["path"])  # the private repository's checkout
        elif run and step["name"] == "Check the loop":
            env = {**os.environ, "GITHUB_WORKSPACE": str(workspace), "KATA_SECRET": SECRET, "LANG": "C",
                   "PATH": f"{KATA_BIN.parent}:{os.environ['PATH']}"}
            for name in ("KATA_LANG", "KATA_COURSE", "KATA_TRACKS", "KATA_DIR"):
                env.pop(name, None)
            cwd = workspace / step.get("working-directory", ".")
            proc = subprocess.run(["bash", "-e", "-c", run], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=900)
            assert proc.returncode in (0, 1), proc.stderr
            junit = ET.parse(workspace / "kata-junit.xml").getroot()
    assert junit is not None
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert (float(props["points"]), float(props["max_points"])) == graded
    (case,) = [c for c in junit.iter("testcase") if c.get("name", "").startswith("reference.train_epoch")]
    said = " ".join(f.get("message", "") + (f.text or "") for f in case.iter("failure"))
    assert said and ("semilla" in said) == (lang == "es"), said


def test_the_docker_entrypoint_gives_the_points_of_kata_grade(setting, graded, tmp_path):
    course, klass, lang = setting
    image = tmp_path / "image"
    built = kata("autograder", "docker", "-o", str(image), "--course", str(course), "--kata", "kata==0.1.0",
                 cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    lines = [line for line in (image / "Dockerfile").read_text().splitlines() if line and not line.startswith("#")]
    (entry,) = [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("ENTRYPOINT ")]
    (workdir,) = [line.split(" ", 1)[1] for line in lines if line.startswith("WORKDIR ")]
    assert "COPY course /course" in lines and workdir == "/course"
    assert entry[entry.index("--course") + 1] == "/course" and entry[entry.index("--lang") + 1] == lang
    # the image's file system, without a daemon: /course as COPY made it, /class and /gradebook mounted
    fs = {"/course": image / "course", "/class": klass, "/gradebook": tmp_path / "gradebook"}

    def there(word: str) -> str:
        for inside, outside in fs.items():
            if word == inside or word.startswith(inside + "/"):
                return str(outside) + word[len(inside):]
        return word

    proc = kata(*[there(w) for w in entry[1:]], cwd=Path(there(workdir)))
    assert proc.returncode == 0, proc.stderr
    row = _grades(tmp_path / "gradebook")
    assert (float(row["points"]), float(row["max_points"])) == graded
    feedback = (tmp_path / "gradebook" / "feedback" / f"{SUBMISSION}.md").read_text()
    assert ("puntos" in feedback) == (lang == "es")


def test_kata_check_inside_the_course_counts_its_weights(setting, graded):
    """A course found from the working folder counts in full: its [points] weigh `kata check` with no --course."""
    course, klass, _lang = setting
    proc = kata("check", str(klass / SUBMISSION), "--format", "gradescope", cwd=course)
    assert proc.returncode == 1, proc.stderr
    results = json.loads(proc.stdout)
    assert (results["score"], sum(t["max_score"] for t in results["tests"])) == graded


def test_another_tracks_loop_is_said_first_and_never_scores_full_marks(tmp_path):
    """Weights that count no data check (reference.train_epoch and loader.order) still grade on the assignment's
    track: the moons reference handed in on the digits course is said to follow moons, before the summary, and is
    held (never full marks), in kata grade and kata check alike; the digits reference scores full marks."""
    from tests.conftest import REFERENCE

    course = make_digits_course(tmp_path / "course")
    text = (course / "kata.toml").read_text().replace('"data.lesson" = 2\n', "")
    (course / "kata.toml").write_text(text)
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "moons.py").write_text(REFERENCE.read_text())
    (klass / "digits.py").write_text(digits_reference())
    out = tmp_path / "gradebook"
    graded = kata("grade", str(klass), "-o", str(out), cwd=course)  # the course found from the working folder
    assert graded.returncode == 0, graded.stderr
    assert any(line.startswith("moons.py: Note: this file's make_data gives the shapes of track moons")
               for line in graded.stderr.splitlines()), graded.stderr
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["submission"]: r for r in csv.DictReader(fh)}
    assert "data.lesson" not in rows["moons.py"]  # the probe is no column: the weights' checks only
    assert float(rows["moons.py"]["points"]) < float(rows["moons.py"]["max_points"]) == 8.0
    assert rows["moons.py"]["passed"] == "false" and "track moons" in rows["moons.py"]["integrity"]
    assert float(rows["digits.py"]["points"]) == 8.0 and not rows["digits.py"]["integrity"]
    checked = kata("check", str(klass / "moons.py"), "--format", "gradescope", cwd=course)
    assert checked.returncode == 1
    assert "make_data gives the shapes of track moons" in checked.stderr.splitlines()[0]
    results = json.loads(checked.stdout)
    assert results["score"] < 8.0 and [t["name"].split(":")[0] for t in results["tests"]] == [
        "loader.order", "reference.train_epoch"]
