"""The differential checks and the trusted reference process.

Judges get hand-made answers (every branch, both languages); grading tests run real children:
the reference process answers for a draw the parent made, the learner's answers are compared in
the parent, and a reference that cannot answer never yields a pass.
"""

from __future__ import annotations

from pathlib import Path

from checker.checks import REGISTRY
from checker.checks import memory as memory_checks
from checker.checks import reference as ref
from checker.engine.grading import ERROR, PASS, SKIPPED, Status, Submission, grade, grade_one
from checker.setting.draws import Draw, TrainDraw

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "solutions" / "loop.py").read_text()
IDS = [cid for cid, chk in REGISTRY.items() if chk.reference and chk.family == "reference"]


def judge(cid: str, mine: dict, want: dict):
    verdict = REGISTRY[cid].judge(mine, want)
    en, es = verdict.render("en"), verdict.render("es")
    assert en and es and en != es
    return verdict, en, es


# ---------------------------------------------------------------------------- draws


def test_draws_are_fresh_and_reproducible_from_a_seed():
    a, b = Draw.fresh(), Draw.fresh()
    assert a != b  # 64 bits from the OS: two runs never share arguments
    assert Draw.from_seed(5) == Draw.from_seed(5) and Draw.from_seed(5) != Draw.from_seed(6)
    for d in (Draw.from_seed(s) for s in range(40)):
        assert d.loader_seed != d.loader_other_seed
        assert 150 % d.loader_batch != 0  # a short last batch, always
        assert d.fit.epochs == 3 and d.train_epoch.scheduler is None
        assert 0 < d.sgd_lr < 1 and 0 < d.adam_lr < 0.1


def test_every_protocol_function_has_a_differential_check():
    assert sorted(IDS) == sorted(f"reference.{f}" for f in (
        "seed_everything", "make_data", "make_loader", "make_model", "make_optimizer", "train_epoch", "fit",
        "evaluate"))
    assert all(REGISTRY[c].family == "reference" for c in IDS)


# ---------------------------------------------------------------------------- judges


def test_seed_everything_judge_names_the_generator():
    want = {"seed": 123, "draws": {"random": [0.1, 0.2, 0.3], "NumPy": [0.4, 0.5, 0.6], "torch": [0.7, 0.8, 0.9]}}
    assert judge("reference.seed_everything", want, want)[0].passed
    mine = {**want, "draws": {**want["draws"], "torch": [0.11, 0.2, 0.3]}}
    v, en, es = judge("reference.seed_everything", mine, want)
    assert not v.passed and "seed_everything(seed=123)" in en and "torch drew (0.11, 0.2, 0.3)" in en
    assert "torch sacó" in es


def test_make_data_judge():
    part = {"name": "X_train", "form": "float32 (2, 2)", "values": [1.0, 2.0, 3.0, 4.0], "width": 2,
            "as_seed0": False}
    want = {"seed": 77, "parts": [part] * 4}
    assert judge("reference.make_data", want, want)[0].passed
    swapped = {**part, "values": [3.0, 4.0, 1.0, 2.0]}
    v, en, _ = judge("reference.make_data", {**want, "parts": [swapped] + [part] * 3}, want)
    assert not v.passed and v.message is ref.DATA_ORDER and "seed=77" in en
    seed0 = {**part, "values": [9.0, 2.0, 3.0, 4.0], "as_seed0": True}
    v, en, _ = judge("reference.make_data", {**want, "parts": [seed0] * 4}, want)
    assert v.message is ref.DATA_SEED_IGNORED and "largest" not in en and "8" in en
    off = {**part, "values": [1.0, 2.0, 3.0, 4.5]}
    v, en, _ = judge("reference.make_data", {**want, "parts": [off] + [part] * 3}, want)
    assert v.message is ref.DATA_VALUES and "0.5" in en
    v, en, _ = judge("reference.make_data", {"seed": 77, "parts": None, "returned": "dict"}, want)
    assert v.message is ref.DATA_FORM and "a dict" in en
    assert judge("reference.make_data", {**want, "parts": [{**part, "values": [1.0, 2.0, 3.0, 4.0000005]}] * 4},
                 want)[0].passed  # float32 round-off


def test_make_loader_judge_quotes_the_arguments():
    want = {"b": 8, "s": 4113, "other": 9, "n": 20, "paired": True, "sizes": [[8, 8, 4], [8, 8, 4]],
            "missing": [0, 0], "repeated": [0, 0], "same_seed_same_order": True, "seed_matters": True,
            "reshuffles": True}
    assert judge("reference.make_loader", want, want)[0].passed
    v, en, _ = judge("reference.make_loader", {**want, "sizes": [[20], [20]]}, want)
    assert en == "make_loader(X, y, batch_size=8, seed=4113) gave batches of 20; the reference gives 8, 8, 4"
    for key, message in (("same_seed_same_order", ref.LOADER_GLOBAL), ("seed_matters", ref.LOADER_SEED_IGNORED),
                         ("reshuffles", ref.LOADER_SAME_EPOCHS), ("paired", ref.LOADER_UNPAIRED)):
        v, _, _ = judge("reference.make_loader", {**want, key: False}, want)
        assert not v.passed and v.message is message
    v, en, _ = judge("reference.make_loader", {**want, "missing": [0, 3], "repeated": [0, 3]}, want)
    assert v.message is ref.LOADER_COVERAGE and "epoch 2, 3 of the 20" in en


def test_make_model_judge():
    want = {"seed": 5, "weights": [[[2], [0.5, -0.5]], [[2, 2], [1.0, 2.0, 3.0, 4.0]]]}
    assert judge("reference.make_model", {**want, "as_seed0": False}, want)[0].passed
    mine = {"seed": 5, "weights": [[[2], [0.5, -0.5]], [[2, 2], [1.0, 2.0, 3.0, 4.25]]], "as_seed0": True}
    v, en, _ = judge("reference.make_model", mine, want)
    assert v.message is ref.MODEL_SEED_IGNORED and "2x2" in en and "0.0625" in en  # 0.25 / largest weight 4
    v, _, _ = judge("reference.make_model", {**mine, "as_seed0": False}, want)
    assert v.message is ref.MODEL_WEIGHTS
    v, en, _ = judge("reference.make_model", {"seed": 5, "weights": [[[3], [0, 0, 0]]]}, want)
    assert v.message is ref.MODEL_SHAPES and "3" in en


def test_make_optimizer_judge_compares_every_setting_but_implementation_flags():
    sgd = {"name": "sgd", "lr": 0.05, "class": "SGD",
           "per_param": [{"lr": 0.05, "momentum": 0.0, "dampening": 0.0, "nesterov": False, "weight_decay": 0.0}]}
    adam = {"name": "adam", "lr": 0.003, "class": "Adam",
            "per_param": [{"lr": 0.003, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}]}
    want = {"rows": [sgd, adam]}
    assert judge("reference.make_optimizer", want, want)[0].passed
    mine = {"rows": [sgd, {**adam, "per_param": [{**adam["per_param"][0], "betas": [0.8, 0.99]}]}]}
    v, en, es = judge("reference.make_optimizer", mine, want)
    assert 'name="adam", lr=0.003' in en and "betas is (0.8, 0.99); the reference's is (0.9, 0.999)" in en
    mine = {"rows": [{**sgd, "per_param": [{**sgd["per_param"][0], "nesterov": True}]}, adam]}
    v, en, _ = judge("reference.make_optimizer", mine, want)
    assert not v.passed and "nesterov is True" in en
    v, en, _ = judge("reference.make_optimizer", {"rows": [sgd, {**adam, "class": "AdamW"}]}, want)
    assert v.message is ref.OPT_CLASS and "AdamW" in en
    assert ref.IMPLEMENTATION_FLAGS == {"foreach", "fused", "capturable", "differentiable"}


def test_make_optimizer_figures_are_per_parameter_so_groups_with_equal_settings_are_the_same_optimizer():
    """One parameter group, or one per layer with the same settings, update alike: the figures (``_settings``) are
    the same. A group with another setting, or a parameter left out, still shows."""
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    one = ref._settings(torch.optim.SGD(model.parameters(), lr=0.1), model)
    per_layer = ref._settings(torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[2].parameters()}],
                                              lr=0.1), model)
    assert one == per_layer and len(one["per_param"]) == 4 and one["holds_the_model"]
    decayed = ref._settings(torch.optim.SGD([{"params": model[0].parameters()},
                                             {"params": model[2].parameters(), "weight_decay": 0.01}], lr=0.1), model)
    assert decayed != one and decayed["per_param"][2]["weight_decay"] == 0.01
    v, en, _ = judge("reference.make_optimizer", {"rows": [{"name": "sgd", "lr": 0.1, **decayed}]},
                     {"rows": [{"name": "sgd", "lr": 0.1, **one}]})
    assert not v.passed and "weight_decay is 0.01" in en
    partial = ref._settings(torch.optim.SGD(model[0].parameters(), lr=0.1), model)
    assert partial["per_param"][2:] == [None, None] and not partial["holds_the_model"]


def _train_answers(weights_delta: float = 0.0, loss: float = 0.5, checker_ok: bool = True) -> tuple[dict, dict]:
    d = TrainDraw(optimizer="adam", lr=0.01, batch_size=20, loader_seed=3, model_seed=4, epochs=1,
                  scheduler=None, step_size=1, gamma=0.5, clip=0.3).__dict__
    adam = {"class": "Adam", "per_param": [{"lr": 0.01, "betas": [0.9, 0.999], "weight_decay": 0.0}]}
    want = {"draw": d, "loss": 0.5, "weights": [[[2], [1.0, 2.0]]], "optimizer": adam}
    mine = {"draw": d, "loss": loss, "weights": [[[2], [1.0, 2.0 + weights_delta]]],
            "optimizer": adam if checker_ok
            else {**adam, "per_param": [{**adam["per_param"][0], "weight_decay": 0.01}]}}
    return mine, want


def test_train_epoch_judge_blames_the_optimizer_or_the_loop():
    mine, want = _train_answers()
    v, en, _ = judge("reference.train_epoch", mine, want)
    assert v.passed and "Adam lr=0.01, batch_size=20, clip_norm=0.3" in en
    mine, want = _train_answers(weights_delta=0.01, checker_ok=False)
    v, en, es = judge("reference.train_epoch", mine, want)
    assert not v.passed and "see reference.make_optimizer" in en and "mira reference.make_optimizer" in es
    mine, want = _train_answers(weights_delta=0.01)
    v, en, _ = judge("reference.train_epoch", mine, want)
    assert "training steps themselves" in en
    mine, want = _train_answers(weights_delta=1e-7)
    assert judge("reference.train_epoch", mine, want)[0].passed  # re-association
    mine, want = _train_answers(loss=0.52)
    v, en, _ = judge("reference.train_epoch", mine, want)
    assert v.message is ref.TRAIN_LOSS and "0.52" in en


def test_fit_judge_names_the_epoch_and_key():
    d = TrainDraw(optimizer="sgd", lr=0.3, batch_size=10, loader_seed=1, model_seed=2, epochs=2,
                  scheduler="step", step_size=1, gamma=0.5, clip=None).__dict__
    rows = [{"epoch": 1, "lr": 0.3, "train_loss": 0.6, "val_loss": 0.5, "val_acc": 0.8},
            {"epoch": 2, "lr": 0.15, "train_loss": 0.4, "val_loss": 0.45, "val_acc": 0.84}]
    want = {"draw": d, "history": rows, "weights": [[[1], [1.0]]]}
    assert judge("reference.fit", want, want)[0].passed
    late = [rows[0], {**rows[1], "lr": 0.3}]
    v, en, _ = judge("reference.fit", {**want, "history": late}, want)
    assert "epoch 2's lr is 0.3; the reference's is 0.15" in en and "StepLR(step_size=1, gamma=0.5)" in en
    v, en, _ = judge("reference.fit", {**want, "history": rows[:1]}, want)
    assert v.message is ref.FIT_ROWS


def test_evaluate_judge():
    want = {"seed": 9, "rows": 17, "result": [0.7, 0.5294117647058824], "returned": ""}
    assert judge("reference.evaluate", want, want)[0].passed
    v, en, _ = judge("reference.evaluate", {**want, "result": [0.7, 0.5]}, want)
    assert not v.passed and "17 validation examples" in en and "model seed 9" in en


def test_memory_judge_sees_graphs_kept_per_batch():
    ok = {"epochs": 4, "saved_at_start": [0, 0, 0, 0], "saved_after": 0, "history_types": [],
          "history_graphs": 0, "cuda_at_start": None, "steps": 20, "most_stale": 1, "first_stale": None,
          "alive_after": {"loss": 1, "output": 1}}
    assert judge_one("memory.graphs", ok).passed  # the last batch's loss kept: constant memory
    kept = {**ok, "most_stale": 19, "first_stale": {"epoch": 1, "step": 3, "stale": {"loss": 0, "output": 2}}}
    v = judge_one("memory.graphs", kept)
    assert v.message is memory_checks.GRAPHS_BATCHES
    assert "step 3 of epoch 1" in v.render("en") and "2 model outputs" in v.render("en")
    assert "2 salidas del modelo" in v.render("es")
    v = judge_one("memory.graphs", {**ok, "alive_after": {"loss": 5, "output": 0}})
    assert v.message is memory_checks.GRAPHS_AFTER and "5 losses" in v.render("en")


def judge_one(cid: str, measured: dict):
    return REGISTRY[cid].judge(measured)


# ---------------------------------------------------------------------------- the reference process


def test_status_is_a_string_enum():
    assert Status.PASS == "pass" and f"{Status.SKIPPED}" == "skipped"
    import json

    assert json.dumps({"s": Status.TIMEOUT}) == '{"s": "timeout"}'


def test_reference_and_file_agree_under_many_draws(lab):
    """Five draws of the reference against itself and a differently written correct loop: all pass."""
    other = (ROOT / "tests" / "corpus" / "correct" / "trainer_closure.py").read_text()
    subs = []
    for seed in range(5):
        d = Draw.from_seed(1000 + seed)
        subs += [Submission(REFERENCE, f"ref-{seed}.py", check_ids=IDS, draw=d),
                 Submission(other, f"other-{seed}.py", check_ids=IDS, draw=d)]
    for report in grade(subs, lab, workers=2):
        assert report.passed, [(c.id, c.message) for c in report.checks if not c.passed]
        assert [c.id for c in report.checks] == IDS


def test_a_file_tuned_to_one_draw_fails_another(lab):
    """make_data hard-wired to answer one seed right (the one a student saw) fails at the next draw, and
    even at that very draw: every seed class is called on every run (the default seed first)."""
    d = Draw.from_seed(7)
    source = REFERENCE.replace("random_state=seed)", f"random_state={d.data_seed})").replace(
        "random_state=seed, stratify=y", f"random_state={d.data_seed}, stratify=y")
    assert source != REFERENCE
    seen = grade_one(source, "tuned.py", lab, check_ids=["reference.make_data"], draw=d)
    assert not seen.passed and seen.checks[0].message.startswith("make_data(): X_train differs")
    assert "[the default seed (0)]" in seen.checks[0].message
    fresh = grade_one(source, "tuned.py", lab, check_ids=["reference.make_data"])
    assert not fresh.passed and f"seed={d.data_seed})" not in fresh.checks[0].message


def test_no_reference_answer_is_never_a_pass(tmp_path):
    """If the reference process dies, the differential checks are errors that say so, not passes."""
    import dataclasses

    from checker.setting.lab import Lab
    from checker.setting.tracks import get_track

    dying = tmp_path / "loop.py"  # a reference whose make_data ends its process
    ending = "def make_data(seed=0):\n    import os\n    os._exit(3)\n"
    dying.write_text(REFERENCE.replace("def make_data(seed=0):\n", ending, 1))
    track = get_track("moons")
    lab = Lab(track=dataclasses.replace(track, root=tmp_path, reference_path="loop.py"))
    report = grade_one(REFERENCE, "loop.py", lab, check_ids=["reference.make_data", "reference.make_model"])
    by_id = {c.id: c for c in report.checks}
    assert by_id["reference.make_data"].status == ERROR and "reference process" in by_id["reference.make_data"].message
    assert not report.passed


def test_a_forged_second_answer_changes_nothing(lab):
    """The parent takes the first figures a child reports for a check and ignores any repeat."""
    from checker.engine.grading import _Grader, _State
    from checker.sandbox.events import Measured
    from checker.sandbox.jobs import Job, Limits

    st = _State(Submission(REFERENCE, "x.py"), ["steps.per_batch"], "en", None)
    grader = _Grader(lab, Limits(), "en", None, None)
    job = Job(lambda rep: None, tag=(st, ["steps.per_batch"]))
    grader.on_event(job, Measured("steps.per_batch", {"batches": 5, "steps": [6, 6]}))
    grader.on_event(job, Measured("steps.per_batch", {"batches": 5, "steps": [5, 5]}))
    assert st.results["steps.per_batch"].status == "fail"


def test_one_crash_is_shown_once(lab):
    source = REFERENCE.replace("    model.train()\n", "    model.train()\n    raise RuntimeError('boom')\n", 1)
    report = grade_one(source, "crash.py", lab, check_ids=["steps.per_batch", "steps.fresh_grads", "loss.falls"])
    errors = [c for c in report.checks if c.status == ERROR]
    assert len(errors) == 3
    assert sum("RuntimeError: boom" in c.message for c in errors) == 1
    first = next(c for c in errors if "RuntimeError: boom" in c.message)
    others = [c.id for c in errors if c is not first]
    assert all(cid in first.message for cid in others)
    assert all(f"same error as {first.id}" in c.message for c in errors if c is not first)


def test_skipped_is_not_timeout(lab):
    from checker.sandbox.jobs import Limits

    source = REFERENCE.replace("    model.train()\n", "    model.train()\n    while True:\n        pass\n", 1)
    report = grade_one(source, "hang.py", lab, limits=Limits(step_timeout=1.0), workers=1, split=1,
                       check_ids=["data.lesson", "steps.per_batch", "steps.fresh_grads", "loss.falls"])
    statuses = {c.id: c.status for c in report.checks}
    assert statuses == {"data.lesson": PASS, "steps.per_batch": "timeout", "steps.fresh_grads": SKIPPED,
                        "loss.falls": "timeout"}  # loss.falls calls fit, not train_epoch: it runs (and hangs)
    skipped = next(c for c in report.checks if c.status == SKIPPED)
    assert "calls train_epoch, which did not return within 1 s in steps.per_batch" in skipped.message
