"""`--device cuda` where CUDA exists (skipped on CPU-only machines).

The same battery runs with the model and batches on the GPU; memory.graphs also reads
torch.cuda.memory_allocated() at every epoch's start, and device.moved checks tensors' devices.
"""

from __future__ import annotations

import json

import pytest
import torch

from checker.catalogue.mutants import mutant_source
from checker.cli import main
from tests.conftest import REFERENCE

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def check_json(runner, path, *extra):
    result = runner.invoke(main, ["check", str(path), "--device", "cuda", "--json", *extra])
    return result.exit_code, json.loads(result.output)


def test_reference_passes_every_check_on_cuda(runner):
    code, report = check_json(runner, REFERENCE)
    assert code == 0, [c for c in report["checks"] if c["status"] != "pass"]
    memory = next(c for c in report["checks"] if c["id"] == "memory.graphs")
    starts = memory["measured"]["cuda_at_start"]
    # epoch 1 starts before gradients and the cuBLAS workspace exist; from epoch 2 on, memory stays flat
    assert starts and len(starts) > 2 and max(starts[1:]) == min(starts[1:])


@pytest.mark.parametrize(
    "mutant, check",
    [("to-device-dropped", "device.moved"), ("labels-not-moved", "device.moved"),
     ("loss-tensor-kept", "memory.graphs"), ("no-grad-missing", "modes.eval")],
)
def test_mutants_are_killed_on_cuda(runner, tmp_path, mutant, check):
    path = tmp_path / f"{mutant}.py"
    path.write_text(mutant_source(mutant))
    code, report = check_json(runner, path, "--only", check)
    assert code == 1
    assert report["checks"][0]["status"] in ("fail", "error")


def test_kata_run_on_cuda_matches_cpu(runner):
    args = ["run", str(REFERENCE), "--epochs", "5", "--json"]
    gpu = json.loads(runner.invoke(main, [*args, "--device", "cuda"]).output)
    cpu = json.loads(runner.invoke(main, args).output)
    for g, c in zip(gpu, cpu, strict=True):
        assert g["train_loss"] == pytest.approx(c["train_loss"], abs=1e-3)
        assert g["val_acc"] == pytest.approx(c["val_acc"], abs=0.021)
