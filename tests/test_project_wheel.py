"""Issue 33: kata installed from its wheel into a fresh virtual environment (torch 2.13.0 first), then README's
"Check your own loop" test, in a project folder of its own outside the repository (benchmarks/own_loop_wheel.py).

Minutes of installing, so marked slow: CI runs it with the suite; `pytest -m "not slow"` leaves it out.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_wheel_and_readmes_ten_lines_work_in_a_project_of_its_own(tmp_path):
    work = tmp_path / "outside"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "own_loop_wheel.py"), "--work", str(work)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=1400)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-4000:]
    assert not work.resolve().is_relative_to(ROOT.resolve())
    assert "1 passed" in said  # README's test, unmodified project
    assert "mnist.py:" in said and ": steps.fresh_grads: optimizer.step() used the gradients of 2" in said, said
    assert said.rstrip().endswith("the wheel, README's test and kata project work in a project folder of their own")
