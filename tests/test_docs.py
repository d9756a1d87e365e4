"""README's promises: the set-up leaves nothing untracked in the repository, the test command is explained."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"## {title}")[1].split("\n## ")[0]


def _ignored(path: str) -> bool:
    done = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_the_quick_start_folder_is_outside_the_repository_or_ignored() -> None:
    command = re.search(r"```bash\n(.*?)\n```", _section("Quick start"), re.S)[1]
    folders = re.findall(r"mkdir -p (\S+)", command)
    assert folders, command
    for folder in folders:
        outside = folder.startswith(("~", "/", "../"))
        assert outside or _ignored(f"{folder}/a-kata.py"), f"`mkdir -p {folder}` leaves it untracked in the repo"
    # the folder name README mentions for a working folder inside the repository is ignored too
    assert _ignored("my-katas/a-kata.py") and _ignored("my-katas/.kata/progress.json")


def test_the_test_command_says_where_how_long_and_what_is_skipped() -> None:
    text = " ".join(_section("Quick start").split())
    assert "from the repository root" in text
    assert re.search(r"about\s+10 minutes", text)  # with -n 2 --dist loadfile -m "not slow": 9 min 49 s here
    assert "CUDA" in text and "skipped" in text
    assert "python -m pytest -q" in text
    # what the command leaves out, and where it runs instead
    assert '-m "not slow"' in text and "-m slow" in text and "CI runs them" in text


def test_an_installed_kata_finds_the_guide_inside_the_package(tmp_path, monkeypatch) -> None:
    """The wheel maps docs/guide to checker/_data/guide; without a checkout beside it, kata looks there."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from checker.learn import guide

    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert build["force-include"]["docs/guide"] == "checker/_data/guide"
    package = tmp_path / "site-packages" / "checker"
    shutil.copytree(ROOT / "docs" / "guide", package / "_data" / "guide")
    monkeypatch.setattr(guide, "_PACKAGE", package)
    assert guide.guide_dir() == package / "_data" / "guide"
    assert [s.id for s in guide.sections("es")][:2] == ["data", "loaders"]
