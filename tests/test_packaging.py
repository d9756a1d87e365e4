"""kata works from an installed wheel, not only from the checkout: the data folders travel inside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{proc.stderr[-2000:]}")
    (path,) = out.glob("kata-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_carries_katas_mutants_and_the_reference(wheel):
    names = set(wheel.namelist())
    for folder in ("katas", "mutants", "tracks", "solutions"):  # every track's files, subfolders included
        shipped = {n.split("/", 2)[-1] for n in names if n.startswith(f"checker/_data/{folder}/")}
        on_disk = {str(p.relative_to(ROOT / folder.split("/")[0])) for p in (ROOT / folder).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts}
        on_disk = {f"{folder}/{p}" for p in on_disk}
        assert on_disk <= shipped, f"{folder}: missing from the wheel: {sorted(on_disk - shipped)}"
    assert "checker/_data/solutions/loop.py" in names
    assert wheel.read("checker/_data/solutions/loop.py") == (ROOT / "solutions" / "loop.py").read_bytes()


def test_wheel_carries_the_templates(wheel):
    """The pages' and the autograder artefacts' templates (checker/templates/) are package data."""
    names = set(wheel.namelist())
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "checker" / "templates").rglob("*") if p.is_file()}
    assert {"checker/templates/class.html.j2", "checker/templates/autograder/run_autograder.j2"} <= on_disk
    assert on_disk <= names, f"missing from the wheel: {sorted(on_disk - names)}"


def test_wheel_declares_the_kata_command(wheel):
    (entry_points,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "kata = checker.entry:main" in wheel.read(entry_points).decode()


def test_installed_layout_finds_the_data(tmp_path, monkeypatch):
    """Without the checkout's folders beside the package, the paths fall back to checker/_data."""
    import checker.base.paths as paths

    monkeypatch.setattr(paths, "_PACKAGE", tmp_path / "site-packages" / "checker")
    assert paths._data_dir("katas") == tmp_path / "site-packages" / "checker" / "_data" / "katas"


def test_the_quick_exit_keeps_exit_codes_output_and_atexit_handlers(tmp_path):
    """checker.entry skips the interpreter's teardown once torch is loaded: the exit status, everything
    printed and every atexit handler (temporary folders) must survive that."""
    import json
    import subprocess
    import sys

    marker = tmp_path / "atexit-ran"
    script = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('ran'))\n"
        "sys.argv = ['kata', *sys.argv[1:]]\n"
        "from checker.entry import main\n"
        "main()\n"
    )
    ok = subprocess.run([sys.executable, "-c", script, "run", "--lesson", "--epochs", "2", "--json"],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert [row["epoch"] for row in json.loads(ok.stdout)] == [1, 2]
    assert marker.read_text() == "ran"
    bad = subprocess.run([sys.executable, "-c", script, "run", "--lesson", "--batch-size", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--batch-size" in bad.stderr
