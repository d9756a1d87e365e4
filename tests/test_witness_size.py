"""The witness of the confirmed checks scales with the model and the data (checker/setting/instruments.py ``Witness``).

It once sent every tensor as a JSON list of float64 figures: on the digits course (64 features, 1,797 samples) one
line passed the events' 8 MiB and even the reference loop was refused as tampering. Tensors now travel packed (their
own dtype, base64: exact), what the replay holds already travels as a reference, inputs that are batches of the
check's own loader as their rows, and a witness past ``WITNESS_BYTES`` is said too large: the check is then held for
review, never passed and never taken for tampering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from checker.checks import REGISTRY
from checker.checks.confirm import TOO_LARGE, UNCONFIRMED, confirm
from checker.sandbox.events import MAX_LINE
from checker.setting import instruments
from checker.setting.instruments import LOSS, SAME, SGD, Unconfirmed, pack, unpack
from tests.digits_course import make_digits_course
from tests.test_confirm import ROOT, load

KATA_BIN = Path(sys.executable).parent / "kata"
CONFIRMED = ("steps.fresh_grads", "clip.norm", "loss.falls", "converge.adam")


@pytest.fixture(scope="module")
def reference():
    return load(ROOT / "solutions" / "loop.py", "kata_witness_reference")


@pytest.fixture
def lab():
    from checker.setting.lab import Lab

    lab = Lab()
    lab.anchor = 11
    return lab


def test_the_digits_reference_passes_the_confirmed_checks(tmp_path):
    """64 features, 1,797 samples: every witness within one event line, every figure confirmed."""
    course = make_digits_course(tmp_path / "course")
    env = {k: v for k, v in os.environ.items() if k not in ("KATA_LANG", "KATA_COURSE", "KATA_TRACKS", "KATA_DIR")}
    only = [arg for cid in CONFIRMED for arg in ("--only", cid)]
    proc = subprocess.run([str(KATA_BIN), "check", "solutions/digits/loop.py", "--track", "digits", "--json", *only],
                          cwd=course, env={**env, "LANG": "C"}, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert sorted(c["id"] for c in report["checks"]) == sorted(CONFIRMED)
    assert all(c["status"] == "pass" for c in report["checks"]) and not report.get("integrity")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.uint8])
def test_a_packed_tensor_comes_back_bit_for_bit(dtype):
    t = (torch.randn(3, 70_000, generator=torch.Generator().manual_seed(0)) * 100).to(dtype)
    if dtype.is_floating_point:
        t[0, :3] = torch.tensor([float("nan"), float("inf"), -0.0]).to(dtype)
    packed = json.loads(json.dumps(pack(t)))
    assert packed["dtype"] == str(dtype).removeprefix("torch.") and len(packed["b64"]) > 1  # chunks of 48 KiB
    back = unpack(packed)
    assert back.dtype == dtype and back.shape == t.shape
    assert torch.equal(back.view(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8))
    assert unpack(pack(torch.zeros(0))).numel() == 0


@pytest.mark.parametrize("value", [
    None, [0.0], "AAAA", {"dtype": "float32", "shape": [2], "b64": ["AAAA"]},  # 3 bytes for 8
    {"dtype": "complex64", "shape": [1], "b64": [""]}, {"dtype": "float32", "shape": [-1], "b64": []},
    {"dtype": "float32", "shape": [1], "b64": ["!!!!!!"]}, {"dtype": "float32", "shape": [1], "b64": [7]},
    {"dtype": "float32", "shape": [True], "b64": []}, {"dtype": "float32", "shape": [1], "b64": [], "x": 1},
])
def test_a_malformed_packed_tensor_is_unconfirmed(value):
    with pytest.raises(Unconfirmed):
        unpack(value, size=1)


def test_the_witness_sends_references_where_the_replay_holds_the_tensor(reference, lab):
    """The reference's witness: the first weights whole (they carry the anchor), then SAME; every step plain SGD's
    (SGD) with its loss's gradient (LOSS); every input a batch of the check's loader (rows)."""
    child = json.loads(json.dumps(REGISTRY["steps.fresh_grads"].measure(reference, lab)))
    marks = child["witness"]["marks"]
    forwards = [m for m in marks if m["kind"] == "forward"]
    steps = [m for m in marks if m["kind"] == "step"]
    assert isinstance(forwards[0]["params"], dict) and all(f["params"] == SAME for f in forwards[1:])
    assert all("rows" in f and "x" not in f for f in forwards)
    assert steps and all(s["before"] == SAME and s["after"] == SGD and s["grads"] == LOSS for s in steps)
    assert len(json.dumps(child["witness"])) < 20_000  # 82,426 bytes as float lists
    trusted = confirm("steps.fresh_grads", child, lab)
    assert UNCONFIRMED not in trusted and json.dumps(trusted["rows"]) == json.dumps(child["rows"])


def test_an_input_that_is_no_batch_of_the_loader_travels_packed(tmp_path, lab):
    path = tmp_path / "scaled.py"
    source = (ROOT / "solutions" / "loop.py").read_text()
    assert source.count("logits = model(x)") == 1
    path.write_text(source.replace("logits = model(x)", "logits = model(x.flip(0))"))
    child = json.loads(json.dumps(REGISTRY["steps.fresh_grads"].measure(load(path, "kata_witness_scaled"), lab)))
    forwards = [m for m in child["witness"]["marks"] if m["kind"] == "forward"]
    assert forwards and all("x" in f and "rows" not in f for f in forwards)
    assert REGISTRY["steps.fresh_grads"].judge(confirm("steps.fresh_grads", child, lab)).passed


def test_rows_the_data_does_not_have_and_a_first_same_are_unconfirmed(reference, lab):
    child = json.loads(json.dumps(REGISTRY["steps.fresh_grads"].measure(reference, lab)))
    marks = child["witness"]["marks"]
    first = next(m for m in marks if m["kind"] == "forward")
    first["rows"] = pack(torch.tensor([0, 10_000]))
    assert "rows the check's data does not have" in confirm("steps.fresh_grads", child, lab)[UNCONFIRMED]
    first["params"] = SAME
    assert "not sent whole" in confirm("steps.fresh_grads", child, lab)[UNCONFIRMED]


@pytest.mark.parametrize("cid", ["steps.fresh_grads", "clip.norm", "loss.falls"])
def test_a_witness_past_its_bound_is_said_too_large_and_held_for_review(cid, reference, lab, monkeypatch):
    from checker.engine.grading import Submission, _Grader, _State
    from checker.sandbox.events import Measured
    from checker.sandbox.jobs import Limits

    monkeypatch.setattr(instruments, "WITNESS_BYTES", 2_000)
    n = lab.track.model.n_params
    child = json.loads(json.dumps(REGISTRY[cid].measure(reference, lab)))
    assert child["witness"]["marks"] == [] and child["witness"][TOO_LARGE]["params"] == n
    assert len(json.dumps(child)) < MAX_LINE
    trusted = confirm(cid, child, lab)
    assert trusted[TOO_LARGE] == n and f"too large for the witness ({n} parameters)" in trusted[UNCONFIRMED]

    st = _State(Submission("", "large.py"), [cid], "en", None)
    grader = _Grader(lab, Limits(), "en", None, None, [st])
    st.confirming[cid] = (child, 0.1)
    grader._on_confirmed(st, Measured(cid, trusted))
    result = st.results[cid]
    assert result.status == "error" and "not confirmed: the model is too large" in result.message
    assert st.report.held_for_review and not st.report.passed and "no sign of forgery" in st.report.integrity[0]


def test_the_checks_own_clipping_and_the_loops_own_sgd_travel_as_references(reference, lab):
    """clip.norm: a clipped step's gradients are CLIP (the replay clips its loss's); loss.falls: the loop's own SGD
    steps are watched too, so no forward pass after the first sends weights."""
    clip = json.loads(json.dumps(REGISTRY["clip.norm"].measure(reference, lab)))
    steps = [m for m in clip["witness"]["marks"] if m["kind"] == "step"]
    assert steps and all(s["grads"] in (LOSS, "clip") and s["after"] == SGD for s in steps)
    assert REGISTRY["clip.norm"].judge(confirm("clip.norm", clip, lab)).passed
    falls = json.loads(json.dumps(REGISTRY["loss.falls"].measure(reference, lab)))
    marks = falls["witness"]["marks"]
    forwards = [m for m in marks if m["kind"] == "forward"]
    assert [m for m in marks if m["kind"] == "step"] and all(f["params"] == SAME for f in forwards[1:])
    trusted = confirm("loss.falls", falls, lab)
    assert json.dumps(trusted["losses"]) == json.dumps(falls["losses"])


@pytest.mark.slow
def test_a_100k_parameter_model_on_28x28_batches_stays_far_under_one_event_line():
    """The bound docs/autograding.md states: 101,770 parameters, 2,048 images of 28x28 in batches of 64, two epochs
    (64 steps): the first weights whole (543 KB of base64) and about 1.3 KB a step, against 6 MiB."""
    import copy

    from torch import nn

    from checker.setting.instruments import RecordingSGD, SpyLoss, Tape, TapedLoader, Witness, replay

    g = torch.Generator().manual_seed(0)
    X, y = torch.rand(2048, 784, generator=g), torch.randint(0, 10, (2048,), generator=g)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    initial = copy.deepcopy(model)
    tape = Tape()
    loader = TapedLoader(X, y, tape, batch_size=64)
    loss_fn = SpyLoss(tape, list(model.parameters()))
    optimizer = RecordingSGD(model.parameters(), lr=0.1, tape=tape, model=model)
    witness = Witness(model, tape, data=X, dataset=loader.dataset)
    loss_fn.witness = witness
    witness.watch(optimizer)
    for _ in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss_fn(model(xb), yb).backward()
            optimizer.step()
    figures = json.loads(json.dumps(witness.figures()))
    size = len(json.dumps(figures))
    assert sum(p.numel() for p in model.parameters()) == 101_770 and len(tape.of("step")) == 64
    assert size < 1024 * 1024, size
    again = replay(figures, initial, sgd=True, data=X)
    assert [e["value"] for e in again.of("loss")] == [e["value"] for e in tape.of("loss")]


def test_a_failure_too_large_to_confirm_stands_as_the_loop_reported_it(tmp_path, lab, monkeypatch):
    """Nobody forges a failure: a broken loop's figures that fail are judged as they are, with nothing held."""
    from checker.engine.grading import Submission, _Grader, _State
    from checker.sandbox.events import Measured
    from checker.sandbox.jobs import Limits
    from tests.test_integrity import broken_loop

    path = tmp_path / "broken.py"
    path.write_text(broken_loop())
    monkeypatch.setattr(instruments, "WITNESS_BYTES", 2_000)
    cid = "steps.fresh_grads"
    child = json.loads(json.dumps(REGISTRY[cid].measure(load(path, "kata_witness_broken"), lab)))
    trusted = confirm(cid, child, lab)
    assert TOO_LARGE in trusted and not REGISTRY[cid].judge(child).passed
    st = _State(Submission("", "broken.py"), [cid], "es", None)
    grader = _Grader(lab, Limits(), "es", None, None, [st])
    st.confirming[cid] = (child, 0.1)
    grader._on_confirmed(st, Measured(cid, trusted))
    assert st.results[cid].status == "fail" and not st.report.integrity
    assert st.results[cid].message == REGISTRY[cid].judge(child).render("es")


def test_final_weights_past_the_bound_are_said_too_large(reference, lab, monkeypatch):
    monkeypatch.setattr(instruments, "WITNESS_BYTES", 100)
    child = json.loads(json.dumps(REGISTRY["converge.adam"].measure(reference, lab)))
    assert set(child["final"]) == {TOO_LARGE} and child["final"][TOO_LARGE]["params"] == lab.track.model.n_params
    assert confirm("converge.adam", child, lab)[TOO_LARGE] == lab.track.model.n_params
