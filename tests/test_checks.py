"""The check battery: on the reference, on legitimate rewrites, on broken loops, and judge by judge.

The corpus runs through ``checker.engine.grading.grade`` once per session (both cores, every file in
its own sandboxed child). The judge tests feed hand-made figures, so each branch of each
verdict, and its message in both languages, is exercised without running any loop.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from checker.catalogue.mutants import load_mutants, mutant_source
from checker.checks import (
    REGISTRY,
    common,
    data,
    device,
    eval,
    loader,
    loss,
    memory,
    model,
    modes,
    optimizer,
    ordered_ids,
    repro,
    steps,
)
from checker.checks import clip as clip_checks
from checker.checks import converge as converge_checks
from checker.checks import reference as reference_checks
from checker.checks import schedule as sched
from checker.setting.tracks import get_track
from tests.test_mutation import MUTANT_IDS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "solutions" / "loop.py"
CORPUS = Path(__file__).resolve().parent / "corpus"
CORRECT = sorted((CORPUS / "correct").glob("*.py"))
BROKEN = sorted((CORPUS / "broken").glob("*.py"))
MUTANTS = load_mutants()

FIXED_IDS = [
    "data.lesson", "loader.coverage", "loader.order", "model.init", "optimizer.setup", "steps.per_batch",
    "steps.fresh_grads", "steps.overfit", "loss.falls", "loss.epoch_mean", "schedule.step", "schedule.cosine",
    "clip.norm", "modes.train", "modes.eval", "eval.figures", "memory.graphs", "repro.seeds", "device.moved",
    "converge.adam", "reference.seed_everything", "reference.make_data", "reference.make_loader",
    "reference.make_model", "reference.make_optimizer", "reference.train_epoch", "reference.fit",
    "reference.evaluate",
]


def header(path: Path, key: str) -> str | None:
    match = re.search(rf"^# {key}: (.*)$", path.read_text(), re.M)
    return match.group(1).strip() if match else None


# ---------------------------------------------------------------------------- the corpus, graded once


def expected(path: Path) -> list[str]:
    return [c.strip() for c in (header(path, "expect") or "").split(",") if c.strip()]


@pytest.fixture(scope="session")
def corpus(lab):
    """Every corpus file graded in one go: the whole battery on the reference and the correct rewrites
    (no false positive anywhere), the expected checks on each broken loop."""
    from checker.engine.grading import Submission, grade

    subs = [Submission(p.read_text(), str(p)) for p in [REFERENCE, *CORRECT]]
    subs += [Submission(p.read_text(), str(p), check_ids=expected(p)) for p in BROKEN]
    subs += [Submission(mutant_source(mid), f"{mid}.py", check_ids=list(MUTANTS[mid].killed_by)) for mid in MUTANTS]
    reports = grade(subs, lab, workers=2)
    return {Path(r.file).name if Path(r.file) != REFERENCE else "REFERENCE": r for r in reports}


def failures(report) -> str:
    lines = [f"{c.id} [{c.status}]: {c.message}" for c in report.checks if not c.passed]
    return "\n".join(lines) or str(report.error)


def test_the_battery_is_exactly_the_fixed_ids():
    assert ordered_ids() == FIXED_IDS  # the moons track, in catalogue order: by family, as the brief lists them
    others = set(REGISTRY) - set(FIXED_IDS)  # the other tracks' own checks
    assert others and all(REGISTRY[c].family in ("best", "pipeline") and REGISTRY[c].protocol != "v1" for c in others)
    for cid, chk in REGISTRY.items():
        assert cid.split(".")[0] == chk.family
        assert chk.title.en and chk.title.es and chk.title.en != chk.title.es


def test_reference_passes_every_check_with_plain_json_figures(corpus):
    report = corpus["REFERENCE"]
    assert report.passed, failures(report)
    assert [c.id for c in report.checks] == FIXED_IDS
    for res in report.checks:
        json.dumps(res.measured, allow_nan=False)  # plain JSON: no NaN, no tensors
        assert res.seconds > 0
        assert res.message  # a pass also says what was measured


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_rewrite_passes(corpus, path):
    assert header(path, "correct"), "each correct rewrite says what it does differently"
    report = corpus[path.name]
    assert report.passed, failures(report)


BROKEN_CASES = [(p.name, expected(p), header(p, "status") or "fail") for p in BROKEN]
"""Hand-written broken loops: variants of a fault written otherwise than its mutant, and faults with none."""
MUTANT_CASES = [(f"{mid}.py", list(m.killed_by), "fail") for mid, m in MUTANTS.items()]
"""Every mutant: its declared checks must fail (not error: the faults are silent)."""


@pytest.mark.parametrize("name, want, status", BROKEN_CASES + MUTANT_CASES,
                         ids=[c[0].removesuffix(".py") for c in BROKEN_CASES + MUTANT_CASES])
def test_broken_loop_fails_its_checks(corpus, name, want, status):
    assert want and all(c in REGISTRY for c in want)
    report = corpus[name]
    assert report.error is None, report.error
    assert report.exit_code == 1
    by_id = {c.id: c for c in report.checks}
    for cid in want:
        res = by_id[cid]
        assert res.status == status, f"{cid}: {res.status}: {res.message}"
        assert res.message


def test_broken_loops_cover_every_mutant_idea():
    assert set(MUTANT_IDS) <= set(MUTANTS)
    assert BROKEN and len(CORRECT) >= 8


def test_messages_quote_what_was_measured(corpus):
    """A few failures whose figures a learner needs to see."""
    msg = {name: {c.id: c.message for c in r.checks} for name, r in corpus.items()}
    assert "1 time(s) per epoch" in msg["step-outside-loop.py"]["steps.per_batch"]
    assert "the plain mean of the 5 batch losses" in msg["epoch-loss-batch-mean.py"]["loss.epoch_mean"]
    assert "still in .grad" in msg["zero-grad-missing.py"]["steps.fresh_grads"]
    assert "no autograd path" in msg["logits-detached.py"]["steps.fresh_grads"]
    assert "22 of the 150" in msg["loader_drop_last.py"]["loader.coverage"]
    assert "training set" in msg["val-on-train-data.py"]["eval.figures"]
    assert "stepped 5 times during that epoch" in msg["scheduler_per_batch.py"]["schedule.cosine"]
    assert "epoch 10" in msg["lr-logged-after-step.py"]["schedule.step"]
    # bugs outside the catalogue: the message names the argument or the step that showed them
    assert "betas is (0.8, 0.99); the reference's is (0.9, 0.999)" in msg["adam_other_betas.py"][
        "reference.make_optimizer"]
    assert "weight_decay is 0.0001" in msg["weight_decay_everywhere.py"]["reference.make_optimizer"]
    assert "momentum is 0.9" in msg["sgd_momentum.py"]["reference.make_optimizer"]
    assert "the seed argument is ignored" in msg["data_seed_ignored.py"]["reference.make_data"]
    assert "torch drew" in msg["seed_torch_constant.py"]["reference.seed_everything"]
    assert re.search(r"make_loader\(X, y, batch_size=\d+, seed=\d+\) gave batches of 32, 32",
                     msg["loader_batch_size_ignored.py"]["reference.make_loader"])
    assert "at step 3 of epoch 1" in msg["logits_kept_in_a_list.py"]["memory.graphs"]
    assert "2 model outputs" in msg["logits_kept_in_a_list.py"]["memory.graphs"]
    assert "2 losses" in msg["running_loss_tensor.py"]["memory.graphs"]
    assert "6 time(s) per epoch" in msg["extra_step_after_loop.py"]["steps.per_batch"]
    assert "more updates than batches" in msg["extra_step_after_loop.py"]["steps.per_batch"]


# ---------------------------------------------------------------------------- judges, one by one


def judge(cid: str, measured: dict, reference: dict | None = None):
    chk = REGISTRY[cid]
    verdict = chk.judge(measured, reference) if chk.reference else chk.judge(measured)
    en, es = verdict.render("en"), verdict.render("es")
    assert en and es and en != es  # both languages, really translated
    return verdict, en, es


def test_data_lesson_judge():
    parts = [{"name": n, "type": "torch.Tensor", "shape": s, "dtype": d, "diff": 0.0, "same_rows": True}
             for n, s, d in zip(data.NAMES, data.shapes(get_track()), data.DTYPES, strict=True)]
    counts = {"y_train": [75, 75], "y_val": [25, 25], "want_train": [75, 75], "want_val": [25, 25]}
    ok = {"count": 4, "returned": "tuple", "parts": parts, "counts": counts}
    assert judge("data.lesson", ok)[0].passed
    unstratified = json.loads(json.dumps(ok))
    unstratified["parts"][0].update(diff=2.5, same_rows=False)
    unstratified["counts"].update(y_train=[72, 78], y_val=[28, 22])
    v, en, es = judge("data.lesson", unstratified)
    assert not v.passed and "72/78" in en and "28/22" in es
    wrong_dtype = json.loads(json.dumps(ok))
    wrong_dtype["parts"][1]["dtype"] = "torch.float32"
    v, en, _ = judge("data.lesson", wrong_dtype)
    assert not v.passed and "y_train" in en and "int64" in en
    assert not judge("data.lesson", {"count": 3, "returned": "tuple"})[0].passed


def test_loader_judges():
    row = {"sizes": [32, 32, 32, 32, 22], "n": 150, "distinct": 150, "missing": 0, "repeated": 0}
    assert judge("loader.coverage", {"epochs": [row, row], "paired": True})[0].passed
    dropped = {"sizes": [32, 32, 32, 32], "n": 128, "distinct": 128, "missing": 22, "repeated": 0}
    v, en, es = judge("loader.coverage", {"epochs": [dropped, dropped], "paired": True})
    assert not v.passed and "32, 32, 32, 32 (128" in en and "22" in es
    assert not judge("loader.coverage", {"epochs": [row], "paired": False})[0].passed
    good = {"a": [5, 9], "b": [5, 9], "c": [7, 1], "same_seed_same_order": True, "seeds_differ": True,
            "reshuffles": True, "shuffled": True}
    assert judge("loader.order", good)[0].passed
    for key, text in [("same_seed_same_order", "global random state"), ("seeds_differ", "no effect"),
                      ("reshuffles", "every epoch")]:
        v, en, _ = judge("loader.order", {**good, key: False})
        assert not v.passed and text in en
    v, en, _ = judge("loader.order", {**good, "a": [0, 1], "shuffled": False, "reshuffles": False})
    assert not v.passed and "nothing is shuffled" in en


def test_model_and_optimizer_judges():
    ok = {"module": True, "n": 82, "shapes": get_track().model.shapes, "out": [4, 2], "same_seed_diff": 0.0,
          "seeds_differ": True, "function_diff": 2e-7, "probabilities": False}
    assert judge("model.init", ok)[0].passed
    # the same 82 weights, but not Linear -> ReLU -> Linear (a softmax at the end)
    v, en, es = judge("model.init", {**ok, "function_diff": 0.684, "probabilities": True})
    assert not v.passed and v.message is model.INIT_PROBABILITIES and "0.684" in en and "suman 1" in es
    v, en, _ = judge("model.init", {**ok, "function_diff": 0.2})
    assert not v.passed and v.message is model.INIT_FUNCTION
    assert not judge("model.init", {**ok, "function_diff": None})[0].passed
    v, en, _ = judge("model.init", {**ok, "same_seed_diff": 0.37})
    assert not v.passed and "0.37" in en
    v, en, _ = judge("model.init", {**ok, "n": 114, "shapes": [[2], [2, 16], [16], [16, 3]]})
    assert not v.passed and "114" in en
    assert not judge("model.init", {**ok, "seeds_differ": False})[0].passed
    assert not judge("model.init", {"module": False, "type": "list"})[0].passed

    def row(**kw):
        base = {"name": "sgd", "lr": 0.05, "want": "SGD", "type": "torch.optim.sgd.SGD", "kind_ok": True,
                "own": 4, "total": 4, "foreign": 0, "duplicates": 0, "lrs": [0.05]}
        return {**base, **kw}

    assert judge("optimizer.setup", {"rows": [row()]})[0].passed
    v, en, _ = judge("optimizer.setup", {"rows": [row(own=0, foreign=4)]})
    assert not v.passed and "4 parameter tensor(s) that are not this model's" in en
    v, en, _ = judge("optimizer.setup", {"rows": [row(lrs=[0.1])]})
    assert not v.passed and "lr is 0.1" in en
    assert not judge("optimizer.setup", {"rows": [row(kind_ok=False)]})[0].passed
    assert not judge("optimizer.setup", {"rows": [row(own=3)]})[0].passed


def grad_row(**kw) -> dict:
    base = {"epoch": 1, "step": 1, "norm": 0.5, "raw_norm": 0.5, "ratio": 1.0, "rel": 0.0, "missing": False,
            "connected": True, "accumulated": False, "finite": True}
    return {**base, **kw}


def test_steps_judges():
    assert judge("steps.per_batch", {"batches": 5, "steps": [5, 5]})[0].passed
    v, en, _ = judge("steps.per_batch", {"batches": 5, "steps": [1, 1]})
    assert not v.passed and "1 time(s) per epoch" in en

    fresh = {"epochs": 2, "loss_calls": 10, "rows": [grad_row(step=k) for k in range(1, 6)]}
    v, en, _ = judge("steps.fresh_grads", fresh)
    assert v.passed and "5 steps" in en
    # within float32 round-off passes; just beyond does not
    assert judge("steps.fresh_grads", {**fresh, "rows": [grad_row(rel=common.GRAD_TOL)]})[0].passed
    cases = [
        (grad_row(step=2, rel=1.3, ratio=1.9, norm=0.95, accumulated=True), "1.90x", "still in .grad"),
        (grad_row(norm=0.0, ratio=0.0, rel=1.0, missing=True), ".grad was empty", "0.5"),
        (grad_row(connected=False, norm=0.0, rel=None, ratio=None, missing=True), "no autograd path",
         "norm was 0"),
        (grad_row(rel=0.25, ratio=0.8, norm=0.4), "25.0%", "0.4 instead of 0.5"),
        (grad_row(rel=None, norm=None, ratio=None, finite=False), "NaN or infinite", "0.5"),
        (grad_row(rel=2 * common.GRAD_TOL), "0.0%", "step 1 of epoch 1"),
    ]
    for row, *texts in cases:
        v, en, es = judge("steps.fresh_grads", {**fresh, "rows": [grad_row(), row]})
        assert not v.passed
        for text in texts:
            assert text in en, (text, en)
    assert not judge("steps.fresh_grads", {**fresh, "rows": []})[0].passed
    v, en, _ = judge("steps.fresh_grads", {**fresh, "loss_calls": 0})
    assert not v.passed and "loss_fn" in en

    ok = {"first_loss": 0.84, "loss": 0.009, "correct": 8, "loss_calls": 500}
    assert judge("steps.overfit", ok)[0].passed
    v, en, _ = judge("steps.overfit", {**ok, "loss": 0.337})
    assert not v.passed and v.message is steps.OVERFIT_STALLED and "0.3370" in en
    v, en, _ = judge("steps.overfit", {**ok, "loss": 0.69, "correct": 4})
    assert not v.passed and v.message is steps.OVERFIT_FAIL and "4/8" in en
    assert not judge("steps.overfit", {**ok, "loss": float("nan"), "correct": 5})[0].passed


def test_loss_judges():
    falling = [0.7 - 0.03 * k for k in range(10)]
    assert judge("loss.falls", {"epochs": 10, "losses": falling, "loss_calls": 50})[0].passed
    rising = falling[:5] + [0.6, 0.62, 0.65, 0.7, 0.75]
    v, en, _ = judge("loss.falls", {"epochs": 10, "losses": rising, "loss_calls": 50})
    assert not v.passed and "epoch 6" in en and "0.5800 -> 0.6000" in en
    v, en, _ = judge("loss.falls", {"epochs": 10, "losses": [float("nan")] * 10, "loss_calls": 50})
    assert not v.passed and "NaN" in en
    assert not judge("loss.falls", {"epochs": 10, "losses": falling[:3], "loss_calls": 15})[0].passed
    # a frozen loss drifting by float noise is not a fall, and is named as standing still
    frozen = [0.752 - 1e-8 * k for k in range(10)]
    v, en, es = judge("loss.falls", {"epochs": 10, "losses": frozen, "loss_calls": 50})
    assert not v.passed and v.message is loss.FALLS_STUCK and "epoch 2" in en and "dejó de moverse" in es

    m = {"got": 0.710782, "type": "float", "want": 0.710782, "batch_mean": 0.711382, "n": 150, "batches": 5,
         "last": 22}
    assert judge("loss.epoch_mean", m)[0].passed
    assert judge("loss.epoch_mean", {**m, "got": 0.710782 * (1 + 0.5 * loss.MEAN_TOL)})[0].passed
    v, en, es = judge("loss.epoch_mean", {**m, "got": 0.711382})
    assert not v.passed and v.message is loss.MEAN_BATCH_MEAN and "0.711382" in en and "22" in es
    v, _, _ = judge("loss.epoch_mean", {**m, "got": 106.6})
    assert not v.passed and v.message is loss.MEAN_WRONG
    assert not judge("loss.epoch_mean", {**m, "got": None, "type": "list"})[0].passed


def lr_run(want, **kw) -> dict:
    base = {"epochs": 30, "lrs": [[want(e)] for e in range(1, 31)], "sched_before": list(range(30)),
            "sched_total": 30, "history_lr": [want(e) for e in range(1, 31)]}
    return {**base, **kw}


def test_schedule_judges():
    assert sched.step_lr(10) == 1.0 and sched.step_lr(11) == 0.5 and sched.step_lr(21) == 0.25
    assert sched.cosine_lr(16) == pytest.approx(0.5, abs=1e-12)
    v, en, _ = judge("schedule.step", lr_run(sched.step_lr))
    assert v.passed and "0.25" in en
    assert judge("schedule.cosine", lr_run(sched.cosine_lr))[0].passed
    # stepped once per batch: five lrs within epoch 1
    per_batch = lr_run(sched.cosine_lr, lrs=[[1.0, 0.997, 0.989, 0.976, 0.957]] + [[0.5]] * 29,
                       sched_before=[0, 5, 10])
    v, en, es = judge("schedule.cosine", per_batch)
    assert not v.passed and "5 different lrs" in en and "5 veces" in es
    # never stepped
    v, en, _ = judge("schedule.step", lr_run(lambda e: 1.0, sched_before=[0] * 30, sched_total=0))
    assert not v.passed and "epoch 11" in en and "stepped 0 time(s)" in en
    # history written after the scheduler moved on
    late = [sched.step_lr(e + 1) for e in range(1, 31)]
    v, en, _ = judge("schedule.step", lr_run(sched.step_lr, history_lr=late))
    assert not v.passed and v.message is sched.STEP_HISTORY and "epoch 10" in en
    assert not judge("schedule.step", lr_run(sched.step_lr, lrs=[[1.0]] * 3))[0].passed
    off = lr_run(sched.cosine_lr)
    off["lrs"][15] = [0.5 + 1e-6]
    assert not judge("schedule.cosine", off)[0].passed


def test_clip_judge():
    c = clip_checks.CLIP_NORM
    ok = {"clip": c, "loss_calls": 10, "rows": [grad_row(norm=c, raw_norm=0.6, ratio=c / 0.6)]}
    assert judge("clip.norm", ok)[0].passed
    v, en, _ = judge("clip.norm", {**ok, "rows": [grad_row(norm=0.6, raw_norm=0.6, rel=11.0)]})
    assert not v.passed and "0.6" in en and "not clipped" in en
    v, en, _ = judge("clip.norm", {**ok, "rows": [grad_row(norm=c, raw_norm=0.6, rel=0.3)]})
    assert not v.passed and v.message is clip_checks.NORM_NOT_SCALED and "30.0%" in en
    # shrunk, but not to the norm (clip_grad_value_, or a clip of some parameters only)
    v, en, es = judge("clip.norm", {**ok, "rows": [grad_row(norm=0.26, raw_norm=0.59, rel=0.2)]})
    assert not v.passed and v.message is clip_checks.NORM_PARTLY and "0.26" in en and "0.59" in en
    assert "not clipped" not in en and "0.26" in es
    assert not judge("clip.norm", {**ok, "rows": [grad_row(norm=0.0, missing=True, rel=1.0)]})[0].passed
    assert not judge("clip.norm", {**ok, "rows": []})[0].passed


def test_modes_judges():
    ok = {"epochs": 3, "steps": 15, "eval_steps": 0, "first": None, "after_val": 10}
    assert judge("modes.train", ok)[0].passed
    after_val = {"epoch": 2, "step": 1, "after_val": 1}
    v, en, _ = judge("modes.train", {**ok, "eval_steps": 10, "first": after_val})
    assert not v.passed and v.message is modes.TRAIN_AFTER_VAL and "10 of 15" in en and "epoch 2" in en
    from_start = {"epoch": 1, "step": 1, "after_val": None}
    v, _, _ = judge("modes.train", {**ok, "eval_steps": 15, "first": from_start})
    assert not v.passed and v.message is modes.TRAIN_FROM_START

    ok = {"forwards": 2, "train_mode": 0, "graph": 0, "results": [[0.75, 0.5], [0.75, 0.5]],
          "weights_changed": 0.0}
    assert judge("modes.eval", ok)[0].passed
    v, en, _ = judge("modes.eval", {**ok, "train_mode": 2, "results": [[0.80, 0.5], [0.78, 0.48]]})
    assert not v.passed and "0.8000 / 0.500" in en and "0.7800 / 0.480" in en
    v, en, _ = judge("modes.eval", {**ok, "graph": 2})
    assert not v.passed and "autograd graph" in en
    assert not judge("modes.eval", {**ok, "forwards": 0})[0].passed
    assert not judge("modes.eval", {**ok, "weights_changed": 0.01})[0].passed
    assert not judge("modes.eval", {**ok, "results": [[0.75, 0.5], [0.7, 0.5]]})[0].passed


def test_eval_judge():
    ev = {"n": 50, "returned": "tuple", "got": [0.7528, 0.5], "want": [0.7528, 0.5]}
    fit = {"keys": ["epoch", "lr", "train_loss", "val_acc", "val_loss"], "got": [0.59, 0.82],
           "val": [0.59, 0.82], "train": [0.60, 0.78]}
    ok = {"evaluate": [ev, {**ev, "n": 150}], "fit": fit}
    assert judge("eval.figures", ok)[0].passed
    v, en, es = judge("eval.figures", {**ok, "fit": {**fit, "got": [0.60, 0.78]}})
    assert not v.passed and v.message is eval.FIGURES_FIT_TRAIN and "0.6000" in en and "0.7800" in es
    v, en, _ = judge("eval.figures", {**ok, "evaluate": [{**ev, "got": [0.7528, 0.52]}]})
    assert not v.passed and "0.5200" in en and "50.0%" in en
    assert not judge("eval.figures", {**ok, "fit": {**fit, "got": [None, None], "keys": ["epoch"]}})[0].passed
    assert not judge("eval.figures", {**ok, "evaluate": [{**ev, "got": None, "returned": "float"}]})[0].passed
    nan = float("nan")
    assert judge("eval.figures", {"evaluate": [{**ev, "got": [nan, 0.5], "want": [nan, 0.5]}],
                                  "fit": {**fit, "got": [nan, 0.5], "val": [nan, 0.5]}})[0].passed


def test_memory_judge():
    ok = {"epochs": 4, "saved_at_start": [0, 0, 0, 0], "saved_after": 0, "history_types": [],
          "history_graphs": 0, "cuda_at_start": None}
    assert judge("memory.graphs", ok)[0].passed
    kept = {**ok, "saved_at_start": [0, 25600, 51200, 76800], "saved_after": 102400,
            "history_types": ["torch.Tensor"], "history_graphs": 4}
    v, en, es = judge("memory.graphs", kept)
    assert not v.passed and v.message is memory.GRAPHS_GROW
    assert "0.0, 25.0, 50.0, 75.0" in en and "100.0" in es
    v, _, _ = judge("memory.graphs", {**ok, "saved_after": 4096})
    assert not v.passed and v.message is memory.GRAPHS_KEPT
    v, en, _ = judge("memory.graphs", {**ok, "history_types": ["numpy.ndarray"]})
    assert not v.passed and "numpy.ndarray" in en
    v, en, _ = judge("memory.graphs", {**ok, "cuda_at_start": [1024, 4096, 6144, 8192]})
    assert not v.passed and v.message is memory.GRAPHS_CUDA
    assert judge("memory.graphs", {**ok, "cuda_at_start": [1024, 4096, 4096, 4096]})[0].passed


def test_repro_judge():
    ok = {"epochs": 3, "diff": None, "same_weights": True, "same_order": True,
          "seeded": {"random": True, "numpy": True, "torch": True}}
    assert judge("repro.seeds", ok)[0].passed
    diff = {"epoch": 1, "key": "train_loss", "a": 0.68, "b": 0.72}
    v, en, _ = judge("repro.seeds", {**ok, "diff": diff, "same_weights": False})
    assert not v.passed and v.message is repro.SEEDS_WEIGHTS and "0.68 vs 0.72" in en
    v, _, _ = judge("repro.seeds", {**ok, "diff": diff, "same_order": False})
    assert v.message is repro.SEEDS_ORDER
    v, _, _ = judge("repro.seeds", {**ok, "diff": diff})
    assert v.message is repro.SEEDS_OTHER
    v, en, _ = judge("repro.seeds", {**ok, "seeded": {"random": True, "numpy": False, "torch": True}})
    assert not v.passed and "numpy" in en


def test_device_judge():
    part = {"forwards": 5, "losses": 5, "inputs_unmoved": 0, "labels_unmoved": 0, "input_devices": ["cpu"],
            "label_devices": ["cpu"]}
    one = {**part, "forwards": 1, "losses": 1}
    ok = {"device": "cpu", "how": "tag", "train_epoch": part, "evaluate": one}
    assert judge("device.moved", ok)[0].passed
    v, en, _ = judge("device.moved", {**ok, "train_epoch": {**part, "inputs_unmoved": 5}})
    assert not v.passed and v.message is device.MOVED_INPUTS and "5 of 5" in en
    v, en, _ = judge("device.moved", {**ok, "evaluate": {**part, "labels_unmoved": 1, "losses": 1}})
    assert not v.passed and v.message is device.MOVED_LABELS and "in evaluate" in en
    assert not judge("device.moved", {**ok, "train_epoch": {**part, "forwards": 0}})[0].passed


def test_converge_judge():
    ok = {"epochs": 100, "ran": 100, "acc": 0.96, "loss": 0.105, "n": 50, "train": 0.08}
    v, en, _ = judge("converge.adam", ok)
    assert v.passed and "96%" in en
    v, en, _ = judge("converge.adam", {**ok, "acc": 0.5, "loss": math.log(2)})
    assert not v.passed and "50%" in en and "90%" in en
    assert not judge("converge.adam", {**ok, "ran": 1})[0].passed
    assert get_track().thresholds.converge_acc == 0.9


def test_messages_never_name_the_fix():
    """Symptoms, not answers: no failure message tells the learner which call to add."""
    answers = ("zero_grad()", "model.train()", "model.eval()", "no_grad", ".item()", "generator=", "stratify",
               "drop_last", "requires_grad_", "softmax")
    modules = (data, loader, model, optimizer, steps, loss, sched, clip_checks, modes, eval, memory, repro,
               device, converge_checks, common, reference_checks)
    for module in modules:
        for name, value in vars(module).items():
            if hasattr(value, "en") and hasattr(value, "es") and not name.endswith(("_OK", "_TITLE")):
                for answer in answers:
                    assert answer not in value.en and answer not in value.es, (module.__name__, name, answer)
