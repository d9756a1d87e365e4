"""Figures confirmed outside the learner's process (issue 31, checker/checks/confirm.py).

The checks whose verdicts rest on what the instruments measure in the child (steps.fresh_grads, clip.norm,
loss.falls, converge.adam) also report a witness; a trusted process recomputes their figures from it, and the
verdict is judged on those. These tests run the measures and the recomputation in this process: a correct run is
confirmed with the same figures, and every way of reporting what the run did not produce is not.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from checker.checks import REGISTRY
from checker.checks.confirm import CONFIRM, UNCONFIRMED, confirm
from tests.test_integrity import broken_loop

ROOT = Path(__file__).resolve().parent.parent
CONFIRMED = ("steps.fresh_grads", "clip.norm", "loss.falls", "converge.adam")


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    return load(ROOT / "solutions" / "loop.py", "kata_confirm_reference")


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    path = tmp_path_factory.mktemp("broken") / "broken.py"
    path.write_text(broken_loop())
    return load(path, "kata_confirm_broken")


@pytest.fixture
def lab():
    from checker.setting.lab import Lab

    lab = Lab()
    lab.anchor = 7
    return lab


_MEASURED: dict[tuple[str, str, int], str] = {}


def measured(cid: str, loop, lab) -> dict:
    """What the child sends: the figures through JSON, as the event pipe carries them (each run measured once)."""
    key = (cid, loop.__name__, lab.anchor)
    if key not in _MEASURED:
        _MEASURED[key] = json.dumps(REGISTRY[cid].measure(loop, lab))
    return json.loads(_MEASURED[key])


def verdict(cid: str, figures: dict) -> bool:
    return REGISTRY[cid].judge(figures).passed


def test_the_confirmed_checks_are_those_whose_verdicts_rest_on_the_childs_figures():
    assert set(CONFIRM) == set(CONFIRMED)
    assert not any(REGISTRY[c].reference for c in CONFIRM)  # the differential ones compare with trusted answers


@pytest.mark.parametrize("cid", CONFIRMED)
def test_a_correct_run_is_confirmed_with_its_own_figures(cid, reference, lab):
    child = measured(cid, reference, lab)
    trusted = confirm(cid, child, lab)
    assert UNCONFIRMED not in trusted, trusted
    assert verdict(cid, trusted) and verdict(cid, child)
    assert "witness" not in trusted and "final" not in trusted  # what the report keeps is the recomputed figures
    for key in ("rows", "losses", "acc", "loss_calls"):
        if key in child:
            assert json.dumps(trusted[key]) == json.dumps(child[key]), key


@pytest.mark.parametrize("cid", ["steps.fresh_grads", "clip.norm", "loss.falls"])
def test_a_run_from_other_initial_weights_is_not_confirmed(cid, reference, lab):
    """A recording of another run (the lesson's fixed setting, the reference's) cannot stand in for this one."""
    child = measured(cid, reference, lab)
    lab.anchor = 8
    trusted = confirm(cid, child, lab)
    assert "forward pass 1" in trusted.get(UNCONFIRMED, ""), trusted


@pytest.mark.parametrize("cid", ["steps.fresh_grads", "clip.norm", "loss.falls"])
def test_a_broken_loops_witness_recomputes_its_own_failure(cid, broken, reference, lab):
    """Its figures swapped for the reference's (the forgery of the issue): the recomputation fails as the loop does."""
    own = measured(cid, broken, lab)
    assert not verdict(cid, own)
    forged = dict(measured(cid, reference, lab), witness=own["witness"])
    assert verdict(cid, forged)
    trusted = confirm(cid, forged, lab)
    assert UNCONFIRMED not in trusted and not verdict(cid, trusted)
    assert REGISTRY[cid].judge(trusted).render() == REGISTRY[cid].judge(own).render()


def test_a_forged_final_model_is_judged_on_the_weights_it_reports(broken, reference, lab):
    own = measured("converge.adam", broken, lab)
    forged = dict(measured("converge.adam", reference, lab), final=own["final"])
    trusted = confirm("converge.adam", forged, lab)
    assert verdict("converge.adam", forged) and not verdict("converge.adam", trusted)
    assert trusted["acc"] == own["acc"]


def test_weights_changed_outside_step_break_the_chain(tmp_path, lab):
    path = tmp_path / "clamped.py"
    path.write_text((ROOT / "solutions" / "loop.py").read_text() + '''

_train_epoch = train_epoch


def train_epoch(model, loader, optimizer, loss_fn, **kwargs):
    result = _train_epoch(model, loader, optimizer, loss_fn, **kwargs)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.001)
    return result
''')
    child = measured("steps.fresh_grads", load(path, "kata_confirm_clamped"), lab)
    assert verdict("steps.fresh_grads", child)  # each step still used its batch's gradient
    trusted = confirm("steps.fresh_grads", child, lab)
    assert "neither the initial ones nor the last optimizer step left" in trusted[UNCONFIRMED]


def test_a_loop_that_calls_model_forward_is_confirmed_too(tmp_path, lab):
    """``model.forward(x)`` skips the model's own hooks; the witness watches its first and last layers."""
    path = tmp_path / "forward.py"
    source = (ROOT / "solutions" / "loop.py").read_text()
    assert source.count("logits = model(x)") == 1
    path.write_text(source.replace("logits = model(x)", "logits = model.forward(x)"))
    child = measured("steps.fresh_grads", load(path, "kata_confirm_forward"), lab)
    trusted = confirm("steps.fresh_grads", child, lab)
    assert UNCONFIRMED not in trusted and verdict("steps.fresh_grads", trusted)


def test_a_step_that_moved_the_weights_otherwise_than_it_reports(reference, lab):
    child = measured("steps.fresh_grads", reference, lab)
    from checker.setting.instruments import SGD, pack, unpack

    marks = child["witness"]["marks"]
    step = next(m for m in marks if m["kind"] == "step")
    assert step["after"] == SGD  # plain SGD's own update: the replay derives it
    moved = unpack(marks[0]["params"]).clone()  # the weights before the step (it says SAME)
    moved[0] += 1e-3
    step["after"] = pack(moved)
    trusted = confirm("steps.fresh_grads", child, lab)
    assert "other than lr times the gradients" in trusted[UNCONFIRMED]


@pytest.mark.parametrize("witness", [
    None, "marks", {"marks": "x"}, {"marks": [1, "x"]}, {"marks": [{"kind": "forward", "epoch": 1}]},
    {"marks": [{"kind": "forward", "epoch": 1, "params": "x", "buffers": [], "modes": [], "x": [], "grad": True}]},
    {"marks": [{"kind": "loss", "epoch": 1, "forward": 0, "y": [0], "grad": True}]},
    {"marks": [{"kind": "step", "epoch": 1, "before": [0.0], "after": [0.0], "grads": [], "lrs": [0.1]}]},
    {"marks": [{"kind": "other", "epoch": 0}]}, {"marks": [{"kind": "loss", "epoch": -1}]},
])
def test_a_hostile_witness_is_unconfirmed_and_never_raises(witness, lab):
    for cid in ("steps.fresh_grads", "clip.norm", "loss.falls"):
        assert UNCONFIRMED in confirm(cid, {"witness": witness}, lab)
    assert UNCONFIRMED in confirm("converge.adam", {"final": witness}, lab)
    assert UNCONFIRMED in confirm("converge.adam", "not a dict", lab)


def test_the_grader_judges_the_recomputed_figures_and_holds_a_disagreement_for_review(broken, reference, lab):
    from checker.engine.grading import Submission, _Grader, _State
    from checker.sandbox.events import Measured
    from checker.sandbox.jobs import Limits

    cid = "steps.fresh_grads"
    own = measured(cid, broken, lab)
    forged = dict(measured(cid, reference, lab), witness=own["witness"])
    st = _State(Submission("", "forger.py"), [cid], "en", None)
    grader = _Grader(lab, Limits(), "en", None, None, [st])
    st.confirming[cid] = (forged, 0.1)
    grader._on_confirmed(st, Measured(cid, confirm(cid, forged, lab)))
    assert st.results[cid].status == "fail" and "witness" not in st.results[cid].measured
    assert st.report.integrity and "forged events" in st.report.integrity[0]

    honest = _State(Submission("", "honest.py"), [cid], "es", None)
    grader = _Grader(lab, Limits(), "es", None, None, [honest])
    honest.confirming[cid] = (own, 0.1)
    grader._on_confirmed(honest, Measured(cid, confirm(cid, own, lab)))
    assert honest.results[cid].status == "fail" and not honest.report.integrity  # its own failure: nothing to hold

    unconfirmed = _State(Submission("", "nowitness.py"), [cid], "es", None)
    grader = _Grader(lab, Limits(), "es", None, None, [unconfirmed])
    unconfirmed.confirming[cid] = (measured(cid, reference, lab), 0.1)
    grader._on_confirmed(unconfirmed, Measured(cid, {UNCONFIRMED: "no witness was reported"}))
    assert unconfirmed.results[cid].status == "fail" and "no se pudieron confirmar" in unconfirmed.results[cid].message
