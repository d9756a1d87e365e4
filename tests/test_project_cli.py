"""`kata project FILE`, the pytest plugin's `kata_loop` fixture, and the examples' own tests through it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROJECT = textwrap.dedent('''
    import torch

    def make_model():
        return torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))

    def train(model, train_loader, opt, device):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

    def data():
        g = torch.Generator().manual_seed(0)
        y = torch.randint(0, 2, (60,), generator=g)
        return torch.randn(60, 2, generator=g) + 4.0 * y[:, None].float(), y
''')

PIECES = textwrap.dedent('''
    import torch
    from project import data, make_model, train

    def kata_pieces():
        return dict(model=make_model, data=data(), train=train,
                    optimizer=lambda model: torch.optim.SGD(model.parameters(), lr=0.5))
''')

PLUGIN_TEST = textwrap.dedent('''
    import torch
    from project import data, make_model, train

    def test_loop(kata_loop):
        kata_loop(model=make_model, data=data(), train=train,
                  optimizer=lambda model: torch.optim.SGD(model.parameters(), lr=0.5))
''')


def project_folder(tmp_path: Path, *, fault: bool = False) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    code = "".join(line for line in PROJECT.splitlines(keepends=True) if not (fault and "zero_grad" in line))
    (tmp_path / "project.py").write_text(code)
    (tmp_path / "pieces.py").write_text(PIECES)
    return tmp_path


def step_line(folder: Path) -> int:
    return 1 + next(i for i, line in enumerate((folder / "project.py").read_text().splitlines())
                    if "opt.step()" in line)


def kata(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=folder, capture_output=True, text=True,
                          timeout=600)


def test_kata_project_passes_a_correct_loop_and_names_the_line_of_a_fault(tmp_path):
    folder = project_folder(tmp_path / "ok")
    done = kata(folder, "project", "pieces.py", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and {c["id"] for c in report["checks"] if c["status"] == "failed"} == set()

    folder = project_folder(tmp_path / "bad", fault=True)
    done = kata(folder, "project", "pieces.py", "--lang", "es")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"project.py:{step_line(folder)}: steps.fresh_grads: optimizer.step() usó los gradientes de 2 lotes" \
        in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(("content", "words"), [
    (None, "no such file"),
    ("x = 1\n", "defines no kata_pieces()"),
    ("import not_a_module_anywhere\n", "ModuleNotFoundError"),
    ("def kata_pieces():\n    return dict(model=1, data=2, optimizer=3, train=4)\n", "must be a function"),
])
def test_kata_project_says_bad_pieces_in_one_line_with_exit_2(tmp_path, content, words):
    if content is not None:
        (tmp_path / "pieces.py").write_text(content)
    done = kata(tmp_path, "project", "pieces.py")
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           *args], cwd=folder, capture_output=True, text=True, timeout=900, env=env)


def test_the_pytest_fixture_fails_the_test_with_katas_message_at_the_line(tmp_path):
    folder = project_folder(tmp_path, fault=True)
    (folder / "test_training.py").write_text(PLUGIN_TEST)
    done = run_pytest(folder, "--kata-lang", "en")
    assert done.returncode == 1, done.stdout
    assert f"project.py:{step_line(folder)}: steps.fresh_grads: optimizer.step() used the gradients of 2 batches" \
        in done.stdout
    assert "checker/project" not in done.stdout  # kata's message, no traceback from kata


def test_each_example_passes_its_own_test_through_the_plugin():
    """examples/ is outside testpaths: its three test_training.py run here, once, each in its own folder."""
    for example in sorted((ROOT / "examples").glob("*/test_training.py")):
        done = run_pytest(example.parent, "test_training.py")
        assert done.returncode == 0, f"{example}:\n{done.stdout[-3000:]}"
        assert "1 passed" in done.stdout
