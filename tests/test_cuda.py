"""`--device cuda` where CUDA exists (skipped on CPU-only machines).

The same battery runs with the model and batches on the GPU; memory.graphs also reads
torch.cuda.memory_allocated() at every epoch's start, and device.moved checks tensors' devices.
First run on a GPU (an H200, torch 2.11) on 2026-12-04; what it found is fixed and tested on the CPU too
(tests/test_zygote.py: the zygote's warm-up runs no backward where torch has CUDA, a GPU job's memory cap is
on data, an early job outlives the twin's dismissal).
"""

from __future__ import annotations

import json

import pytest
import torch

from checker.catalogue.mutants import mutant_source
from checker.cli import main
from checker.setting.tracks import get_track

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

TRACKS = ["moons", "three-classes", "data-pipeline"]


def check_json(runner, path, *extra):
    result = runner.invoke(main, ["check", str(path), "--device", "cuda", "--json", *extra])
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("track", TRACKS)
def test_each_reference_passes_every_check_on_cuda(runner, track):
    code, report = check_json(runner, get_track(track).reference, "--track", track)
    assert code == 0, [c for c in report["checks"] if c["status"] != "pass"]
    assert report["isolation"] == "full"
    memory = next((c for c in report["checks"] if c["id"] == "memory.graphs"), None)
    if memory is not None:
        starts = memory["measured"]["cuda_at_start"]
        # from epoch 2 on (gradients and optimizer state exist), the memory held at an epoch's start never grows
        assert starts and len(starts) > 2 and all(later <= starts[1] for later in starts[2:]), starts


@pytest.mark.parametrize(
    "mutant, check, words",
    [("to-device-dropped", "device.moved", "inputs"), ("labels-not-moved", "device.moved", "labels"),
     ("loss-tensor-kept", "memory.graphs", "graph"), ("no-grad-missing", "modes.eval", "graph")],
)
def test_mutants_are_killed_on_cuda_for_their_reason(runner, tmp_path, mutant, check, words):
    path = tmp_path / f"{mutant}.py"
    path.write_text(mutant_source(mutant))
    code, report = check_json(runner, path, "--only", check)
    assert code == 1
    [result] = report["checks"]
    assert result["status"] == "fail" and words in result["message"], result


def test_kata_run_on_cuda_matches_cpu(runner):
    args = ["run", str(get_track("moons").reference), "--epochs", "5", "--json"]
    gpu = json.loads(runner.invoke(main, [*args, "--device", "cuda"]).output)
    cpu = json.loads(runner.invoke(main, args).output)
    for g, c in zip(gpu, cpu, strict=True):
        assert g["train_loss"] == pytest.approx(c["train_loss"], abs=1e-3)
        assert g["val_acc"] == pytest.approx(c["val_acc"], abs=0.021)
