"""Issue 33's side by side, as a test: each reference-free fault of the mutant catalogue, injected into each
example of examples/ with kata's own operators (benchmarks/own_loop_faults.py, the examples' faults.toml), fails
the check the mutant's killed_by names, at a line of the example's own module; the unmodified example passes.

A minute or two of training per example, so marked slow (CI runs it; `pytest -m "not slow"` leaves it out). The
figures of a full run (and 5 runs of 5 of each unmodified example) are in benchmarks/results/own_loop_faults.json.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/faults.toml"))


def _benchmark():
    spec = importlib.util.spec_from_file_location("own_loop_faults", ROOT / "benchmarks" / "own_loop_faults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_three_examples_have_their_faults() -> None:
    assert EXAMPLES == ["mnist", "regression", "text"]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before:UserWarning")  # the fault's own
@pytest.mark.parametrize("example", EXAMPLES)
def test_each_injected_fault_fails_the_right_check_at_the_examples_line(example: str, tmp_path: Path) -> None:
    bench = _benchmark()
    folder = ROOT / "examples" / example
    module = bench._toml(folder / "faults.toml")["module"]
    clean, _ = bench.check_copy(folder, module)
    assert clean.ok, clean.render("en")
    injected = [(mid, source, killed_by) for mid, source, _, killed_by in bench.faults(folder) if source]
    assert len(injected) >= 15, injected  # 15 (mnist), 22 (regression), 20 (text) when the catalogue was run
    wrong = {}
    for mid, source, killed_by in injected:
        copy = tmp_path / mid
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        (copy / module).write_text(source)
        report, _ = bench.check_copy(copy, module)
        said = bench.verdict(report, killed_by, module)
        if not (said["caught"] and said["right"] and said["line"] and said["said"].startswith(f"{copy / module}:")):
            wrong[mid] = said
    assert wrong == {}
