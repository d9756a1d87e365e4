"""`kata autograder gradescope|github|docker`: each artefact built and checked as its grader would use it.

The Gradescope zip's run_autograder runs for real, in a scratch root laid out as Gradescope lays out
/autograder (AUTOGRADER_ROOT), with this checkout's kata (KATA_BIN); setup.sh, which installs system
packages, is checked by `bash -n` and by what it installs, in which order.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from checker.cli import main
from tests.conftest import REFERENCE

KATA_BIN = Path(sys.executable).parent / "kata"
ONLY = "steps.overfit"  # one quick check: the run is real, not the whole battery


def _build(runner, kind: str, out: Path, *args: str, env: dict | None = None):
    result = runner.invoke(main, ["autograder", kind, "-o", str(out), *args], env=env or {"KATA_SECRET": None})
    return result


def _unzip(zip_path: Path, root: Path) -> Path:
    """The zip's content in ``root/source`` with its modes, as Gradescope unpacks it."""
    source = root / "source"
    source.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            target.chmod((info.external_attr >> 16) & 0o777)
    (root / "submission").mkdir()
    return source


def _run_autograder(root: Path, kata_bin: Path = KATA_BIN) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "KATA_BIN": str(kata_bin)}
    env.pop("KATA_SECRET", None)
    proc = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def gradescope_zip(tmp_path_factory):
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("gradescope")
    result = _build(CliRunner(), "gradescope", out, "--only", ONLY, "--secret", "the course's secret",
                    "--lang", "en")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out / "autograder.zip")
    return out / "autograder.zip"


def test_the_zip_holds_the_scripts_kata_and_the_secret(gradescope_zip):
    with zipfile.ZipFile(gradescope_zip) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        names = set(infos)
        assert {"setup.sh", "run_autograder", "secret", "kata/pyproject.toml", "kata/README.md",
                "kata/checker/__init__.py", "kata/solutions/loop.py", "kata/checker/templates/class.html.j2",
                "kata/checker/templates/autograder/run_autograder.j2"} <= names
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        assert not [n for n in names if n.startswith("kata/tests/") or n.startswith("kata/.venv")]
        mode = {n: (i.external_attr >> 16) & 0o777 for n, i in infos.items()}
        assert mode["setup.sh"] == mode["run_autograder"] == 0o755 and mode["secret"] == 0o600
        assert zf.read("secret") == b"the course's secret\n"
        assert zf.read("kata/solutions/loop.py") == REFERENCE.read_bytes()
    # the zip itself follows the umask like every other file kata writes
    assert stat.S_IMODE(gradescope_zip.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_run_autograder_grades_the_submission_as_gradescope_runs_it(gradescope_zip, tmp_path):
    root = tmp_path / "autograder"
    _unzip(gradescope_zip, root)
    (root / "submission" / "my_loop.py").write_text(REFERENCE.read_text())
    results = _run_autograder(root)
    assert results["score"] == 1.0 and [t["status"] for t in results["tests"]] == ["passed"]
    assert results["tests"][0]["name"].startswith(f"{ONLY}:") and results["tests"][0]["max_score"] == 1.0
    assert results["extra_data"]["passed"] is True
    assert results["extra_data"]["file"].endswith("submission/my_loop.py")
    assert not (root / "results" / "results.json.part").exists()


def test_run_autograder_wants_exactly_one_file(gradescope_zip, tmp_path):
    root = tmp_path / "autograder"
    _unzip(gradescope_zip, root)
    for name in ("a.py", "b.ipynb"):
        (root / "submission" / name).write_text("x = 1\n")
    results = _run_autograder(root)
    assert results == {"score": 0, "output": "Submit exactly one .py or .ipynb file (found 2).",
                       "output_format": "text", "tests": []}


def test_run_autograder_says_so_when_kata_itself_fails(gradescope_zip, tmp_path):
    root = tmp_path / "autograder"
    _unzip(gradescope_zip, root)
    (root / "submission" / "loop.py").write_text(REFERENCE.read_text())
    broken = tmp_path / "kata"
    broken.write_text("#!/bin/sh\necho 'Traceback' >&2\nexit 3\n")
    broken.chmod(0o755)
    results = _run_autograder(root, broken)
    assert results["score"] == 0 and "exit status 3" in results["output"] and results["tests"] == []


def _commands(script: str) -> list[list[str]]:
    """The script's commands, one per logical line, comments left out."""
    lines, pending = [], ""
    for line in script.splitlines():
        line = line.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line and not line.startswith("#"):
            lines.append(shlex.split(line, comments=True))
    return lines


def test_setup_sh_installs_torch_cpu_first_then_kata(gradescope_zip, tmp_path):
    source = _unzip(gradescope_zip, tmp_path / "autograder")
    setup = source / "setup.sh"
    assert subprocess.run(["bash", "-n", str(setup)], capture_output=True).returncode == 0
    installs = [c[2:] for c in _commands(setup.read_text()) if c[:2] == ["$VENV/bin/pip", "install"]]
    assert installs[0] == ["--upgrade", "pip"]
    assert installs[1] == ["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"]
    assert installs[2] == ["$ROOT/source/kata"] and len(installs) == 3
    commands = _commands(setup.read_text())
    assert ["rm", "-rf", "$ROOT/source/kata"] in commands  # no submission reads kata's source afterwards
    assert ["chmod", "600", "$ROOT/source/secret"] in commands
    assert subprocess.run(["bash", "-n", str(source / "run_autograder")], capture_output=True).returncode == 0


def test_a_course_folder_travels_and_kata_runs_inside_it(runner, tmp_path):
    course = tmp_path / "lab4"
    (course / "notes").mkdir(parents=True)
    (course / "kata.toml").write_text("# the course\n")
    (course / "notes" / "read.md").write_text("lesson 4\n")
    (course / ".git").mkdir()
    (course / ".git" / "config").write_text("[core]\n")  # hidden: left out
    result = _build(runner, "gradescope", tmp_path / "out", "--course", str(course), "--kata",
                    "kata @ git+https://example.org/kata", "--lang", "es")
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "out" / "autograder.zip") as zf:
        names = set(zf.namelist())
        run = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
    assert {"course/kata.toml", "course/notes/read.md"} <= names and not [n for n in names if "/.git" in n]
    assert "secret" not in names and not [n for n in names if n.startswith("kata/")]
    assert ["cd", "$ROOT/source/course"] in [c[:2] for c in _commands(run)]
    assert "Entrega exactamente un archivo" in run and "'--lang' 'es'" in run
    assert "'--course'" not in run  # a course folder without [points]: nothing to weigh
    installs = [c[2:] for c in _commands(setup) if c[:2] == ["$VENV/bin/pip", "install"]]
    assert installs[1][0] == "torch==2.13.0" and installs[2] == ["kata @ git+https://example.org/kata"]


def test_a_wheel_travels_in_the_zip_and_is_what_setup_sh_installs(runner, tmp_path):
    wheel = tmp_path / "dist" / "kata-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"a wheel's bytes")
    result = _build(runner, "gradescope", tmp_path / "out", "--kata", str(wheel))
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "out" / "autograder.zip") as zf:
        assert zf.read(f"kata/{wheel.name}") == b"a wheel's bytes"
        assert not [n for n in zf.namelist() if n.startswith("kata/") and n != f"kata/{wheel.name}"]
        setup = zf.read("setup.sh").decode()
    installs = [c[2:] for c in _commands(setup) if c[:2] == ["$VENV/bin/pip", "install"]]
    assert installs[1][0] == "torch==2.13.0" and installs[2] == [f"$ROOT/source/kata/{wheel.name}"]


@pytest.mark.parametrize("args, expected", [
    (["--course", "missing"], "no such folder"),
    (["--course", "afile.toml"], "give the course folder"),
    (["--course", "nocourse"], "holds no kata.toml"),
    (["--only", "steps.nope"], "unknown check id(s) steps.nope"),
    (["--kata", "nowhere/kata-0.1.0-py3-none-any.whl"], "no such wheel file"),
])
def test_bad_arguments_exit_2_and_write_nothing(runner, tmp_path, monkeypatch, args, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile.toml").write_text("[points]\n")
    (tmp_path / "nocourse").mkdir()
    result = _build(runner, "gradescope", tmp_path / "out", *args)
    assert result.exit_code == 2 and expected in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out" / "autograder.zip").exists()


def test_nothing_is_replaced_without_force_and_messages_speak_spanish(runner, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "autograder.zip").write_text("the old one")
    result = _build(runner, "gradescope", tmp_path / "out", "--lang", "es", "--kata", "kata")
    assert result.exit_code == 2 and "ya existe" in result.output and "--force" in result.output
    assert (tmp_path / "out" / "autograder.zip").read_text() == "the old one"
    result = _build(runner, "gradescope", tmp_path / "out", "--kata", "kata", "--force")
    assert result.exit_code == 0 and zipfile.is_zipfile(tmp_path / "out" / "autograder.zip")
    (tmp_path / "file").write_text("")
    result = _build(runner, "docker", tmp_path / "file", "--lang", "es")
    assert result.exit_code == 2 and "es un archivo, no una carpeta" in result.output


# --------------------------------------------------------------------------- GitHub Actions


def test_the_workflow_parses_and_checks_the_file_with_the_secret_from_actions(runner, tmp_path):
    yaml = pytest.importorskip("yaml")
    out = tmp_path / "template-repo"
    result = _build(runner, "github", out, "--file", "my_loop.py", "--only", ONLY,
                    env={"KATA_SECRET": "never-in-the-file"})
    assert result.exit_code == 0, result.output
    text = (out / ".github" / "workflows" / "kata.yml").read_text()
    assert "never-in-the-file" not in text
    flow = yaml.safe_load(text)
    assert flow["name"] == "kata" and "push" in flow[True]  # YAML reads the key `on` as true
    steps = flow["jobs"]["check"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[1]["uses"].startswith("actions/setup-python@")
    install = [shlex.split(line) for line in steps[2]["run"].splitlines() if line.strip()]
    assert install[0] == ["pip", "install", "torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"]
    assert install[1] == ["pip", "install", "./.github/kata"]
    assert (out / ".github" / "kata" / "pyproject.toml").is_file()
    assert (out / ".github" / "kata" / "checker" / "cli" / "autograder.py").is_file()
    check = steps[3]
    assert check["env"] == {"KATA_SECRET": "${{ secrets.KATA_SECRET }}"}
    words = shlex.split(check["run"])
    assert words[:3] == ["kata", "check", "$GITHUB_WORKSPACE/my_loop.py"] and words[words.index("--only") + 1] == ONLY
    assert words[words.index("--format") + 1] == "junit" and words[-2:] == [">", "$GITHUB_WORKSPACE/kata-junit.xml"]
    assert steps[4]["with"]["path"] == "kata-junit.xml" and steps[4]["if"] == "always()"


def test_the_workflow_fetches_the_course_and_runs_kata_inside_it(runner, tmp_path):
    """The template repository every student gets never holds the course (its reference and mutants): the
    workflow checks the course's private repository out with a token from an Actions secret, and runs kata inside
    it with its weights (--course) and its language."""
    yaml = pytest.importorskip("yaml")
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "kata.toml").write_text('language = "es"\n[points]\n"steps.overfit" = 2\n')
    (course / "solutions" / "loop.py").write_text("the answer key\n")
    out = tmp_path / "repo"
    result = _build(runner, "github", out, "--course", str(course), "--kata", "kata==0.1.0")
    assert result.exit_code == 2 and "--course-repo" in result.output and not out.exists()
    result = _build(runner, "github", out, "--course-repo", "teacher/course")
    assert result.exit_code == 2 and "--course-repo goes with --course" in result.output
    result = _build(runner, "github", out, "--course", str(course), "--course-repo", "not a repo")
    assert result.exit_code == 2 and "PROPIETARIO/NOMBRE" in result.output  # the course speaks Spanish
    result = _build(runner, "github", out, "--course", str(course), "--kata", "kata==0.1.0", "--course-repo",
                    "teacher/course", "--course-ref", "spring")
    assert result.exit_code == 0, result.output
    assert [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()] == [".github/workflows/kata.yml"]
    text = (out / ".github" / "workflows" / "kata.yml").read_text()
    steps = yaml.safe_load(text)["jobs"]["check"]["steps"]
    fetch = steps[3]
    assert fetch["uses"].startswith("actions/checkout@") and fetch["with"] == {
        "repository": "teacher/course", "ref": "spring", "token": "${{ secrets.KATA_COURSE_TOKEN }}",
        "path": ".kata-course", "persist-credentials": False}
    check = steps[4]
    assert check["working-directory"] == ".kata-course" and "pip install 'kata==0.1.0'" in steps[2]["run"]
    words = shlex.split(check["run"])
    assert words[words.index("--course") + 1] == "." and words[words.index("--lang") + 1] == "es"
    assert not (out / ".github" / "kata").exists()


# --------------------------------------------------------------------------- Docker

INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
                "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}


def _dockerfile(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(comment lines, (instruction, arguments) in order), continuation lines joined."""
    comments, instructions, pending = [], [], ""
    for line in text.splitlines():
        if not pending and line.lstrip().startswith("#"):
            comments.append(line.lstrip("# "))
            continue
        if not line.strip() and not pending:
            continue
        pending += line.rstrip("\\").strip() + " "
        if line.endswith("\\"):
            continue
        word, _, rest = pending.strip().partition(" ")
        instructions.append((word, rest.strip()))
        pending = ""
    assert not pending, "a continuation line runs off the end"
    return comments, instructions


def test_the_dockerfile_grades_a_mounted_folder_with_no_network(runner, tmp_path):
    out = tmp_path / "image"
    result = _build(runner, "docker", out, "--lang", "en")
    assert result.exit_code == 0, result.output
    comments, instructions = _dockerfile((out / "Dockerfile").read_text())
    assert instructions[0][0] == "FROM" and instructions[0][1].startswith("python:3.")
    assert all(word in INSTRUCTIONS and word == word.upper() for word, _ in instructions), instructions
    runs = [args for word, args in instructions if word == "RUN"]
    assert runs[0] == "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    assert runs[1].startswith("pip install /opt/kata-src")
    assert ("COPY", "kata /opt/kata-src") in instructions and (out / "kata" / "pyproject.toml").is_file()
    (entry,) = [json.loads(args) for word, args in instructions if word == "ENTRYPOINT"]
    assert entry[:5] == ["kata", "grade", "/class", "-o", "/gradebook"]
    run_line = " ".join(comments[comments.index(next(c for c in comments if c.startswith("docker run"))):])
    assert re.search(r"docker run .*--network none", run_line) and "/class" in run_line and "/gradebook" in run_line


def test_the_docker_image_takes_a_course_file_of_points(runner, tmp_path):
    course = tmp_path / "course.toml"
    course.write_text('[points]\n"steps.overfit" = 2\n')
    out = tmp_path / "image"
    result = _build(runner, "docker", out, "--course", str(course), "--kata", "kata==0.1.0")
    assert result.exit_code == 0, result.output
    _, instructions = _dockerfile((out / "Dockerfile").read_text())
    (entry,) = [json.loads(args) for word, args in instructions if word == "ENTRYPOINT"]
    assert entry[-2:] == ["--course", "/course/course.toml"] and (out / "course" / "course.toml").is_file()
    assert ("COPY", "course /course") in instructions and not (out / "kata").exists()
    result = _build(runner, "docker", out, "--course", str(course), "--force", "--only", ONLY)
    assert result.exit_code == 2 and "--course and --only" in result.output



def test_the_documented_workflow_is_the_one_written(runner, tmp_path):
    yaml = pytest.importorskip("yaml")
    from tests.conftest import ROOT

    (block,) = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "autograding.md").read_text(), re.S)
    result = _build(runner, "github", tmp_path, "--file", "loop.py", "--lang", "en")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(block) == yaml.safe_load((tmp_path / ".github" / "workflows" / "kata.yml").read_text())


def test_the_bundled_source_builds_kata_as_setup_sh_installs_it(gradescope_zip, tmp_path):
    """pip builds a wheel of the zip's kata/ that carries the package, its templates and its data."""
    source = _unzip(gradescope_zip, tmp_path / "autograder")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheel"),
                           str(source / "kata")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("kata-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"checker/cli/autograder.py", "checker/templates/autograder/setup.sh.j2",
            "checker/_data/solutions/loop.py"} <= names
    for folder in ("katas", "mutants", "tracks", "guide"):
        assert any(n.startswith(f"checker/_data/{folder}/") for n in names), folder
