"""The three-classes track: its file, its reference, the "best" checks and its mutants.

Measures run in this process on trusted code (the track's reference and its mutants, built from it), so
every check's measure and judge is called directly: ``measure(loop, lab)``, then ``judge(measured)`` or,
for a differential check, ``judge(measured, measured_on_the_reference)``, with the three-classes track as
the judged track.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.catalogue.mutants import apply, load_mutants
from checker.checks import REGISTRY, ordered_ids
from checker.checks import best as best_checks
from checker.checks.base import judging
from checker.loopfile.loading import load_loop
from checker.setting.draws import Draw
from checker.setting.tracks import get_track

ROOT = Path(__file__).resolve().parent.parent
TRACK = get_track("three-classes")
REFERENCE_SOURCE = TRACK.reference.read_text(encoding="utf-8")
MUTANTS = load_mutants(TRACK.mutants_dir)
BEST_IDS = ["best.best_epoch", "best.restores", "best.history"]
DRAW_SEEDS = (1, 2)


@pytest.fixture(scope="module")
def lab():
    from checker.setting.lab import Lab

    return Lab(track=TRACK).prepare()


@pytest.fixture(scope="module")
def reference():
    return load_loop(REFERENCE_SOURCE, "loop.py")


def verdict(cid: str, loop, reference, lab, draw_seed: int = 1):
    """``cid``'s verdict on ``loop`` (the reference's answer from ``reference``, for a differential check)."""
    chk = REGISTRY[cid]
    lab.draw = Draw.from_seed(draw_seed, TRACK)
    measured = chk.measure(loop, lab)
    with judging(TRACK):
        if chk.reference:
            return chk.judge(measured, chk.measure(reference, lab))
        return chk.judge(measured)


# ---------------------------------------------------------------------------- the track file


def test_track_file_has_the_exercise_numbers(lab):
    assert TRACK.protocol == ("v1", "best")
    assert TRACK.data.generator == "make_blobs" and dict(TRACK.data.params) == {"centers": 3}
    assert (TRACK.data.n_samples, TRACK.data.n_val, TRACK.data.n_train) == (300, 60, 240)
    assert TRACK.data.stratify
    X_train, y_train, X_val, y_val = lab.data.as_tuple()
    assert tuple(X_train.shape) == (240, 2) and tuple(X_val.shape) == (60, 2)
    assert str(X_train.dtype) == "torch.float32" and str(y_train.dtype) == "torch.int64"
    # stratified: 80 of each class to train on, 20 to validate
    assert y_train.bincount().tolist() == [80, 80, 80] and y_val.bincount().tolist() == [20, 20, 20]
    assert TRACK.model.widths == (2, 16, 3) and TRACK.model.arch == "2-16-3"
    assert TRACK.model.n_params == 2 * 16 + 16 + 16 * 3 + 3 == 99
    t = TRACK.thresholds
    assert (t.overfit_examples, t.overfit_loss, t.epochs, t.converge_epochs) == (8, 0.05, 50, 50)
    assert TRACK.reference == ROOT / "solutions" / "three-classes" / "loop.py"
    assert TRACK.mutants_dir == ROOT / "mutants" / "three-classes"
    assert TRACK.katas_dir == ROOT / "katas" / "three-classes"


def test_track_runs_the_best_checks_and_moons_does_not():
    assert set(BEST_IDS) <= set(ordered_ids(track=TRACK))
    assert not set(BEST_IDS) & set(ordered_ids(track=get_track("moons")))
    assert {REGISTRY[c].protocol for c in BEST_IDS} == {"best"}


def test_reference_data_and_model_are_the_tracks(lab, reference):
    import torch

    for got, want in zip(reference.make_data(), lab.data.as_tuple(), strict=True):
        assert got.dtype == want.dtype and torch.equal(got, want)
    model = reference.make_model(seed=5)
    built = TRACK.model.build(5)
    assert sum(p.numel() for p in model.parameters()) == 99
    for a, b in zip(model.parameters(), built.parameters(), strict=True):
        assert torch.equal(a, b)


# ---------------------------------------------------------------------------- the reference's figures


def test_reference_overfits_eight_examples_well_under_the_threshold(lab, reference):
    overfit = REGISTRY["steps.overfit"]
    measured = overfit.measure(reference, lab)
    with judging(TRACK):
        assert overfit.judge(measured).passed
    assert measured["correct"] == 8
    assert measured["loss"] < TRACK.thresholds.overfit_loss / 10  # 0.0012 against 0.05


def test_reference_exercise_run_reports_epoch_26(lab, reference):
    """The exercise's run (Adam, lr 0.01, 50 epochs, seeds 0): the figures the track file and katas quote."""
    from torch import nn

    X_train, y_train, X_val, y_val = reference.make_data()
    model = reference.make_model()
    optimizer = reference.make_optimizer(model, "adam", lr=0.01)
    history, best = reference.fit_best(model, optimizer, reference.make_loader(X_train, y_train),
                                       nn.CrossEntropyLoss(), 50, val=(X_val, y_val))
    assert len(history) == 50 and [row["epoch"] for row in history] == list(range(1, 51))
    assert best == reference.best_epoch(history) == 26
    assert round(history[25]["val_loss"], 4) == 0.1547
    assert round(history[-1]["val_acc"], 3) == TRACK.thresholds.converge_reached == 0.967
    assert reference.evaluate(model, X_val, y_val, nn.CrossEntropyLoss()) == (history[25]["val_loss"],
                                                                               history[25]["val_acc"])


# ---------------------------------------------------------------------------- the "best" checks


@pytest.mark.parametrize("draw_seed", DRAW_SEEDS)
@pytest.mark.parametrize("cid", BEST_IDS)
def test_reference_passes_every_best_check(cid, draw_seed, lab, reference):
    result = verdict(cid, reference, reference, lab, draw_seed)
    assert result.passed, result.render("en")
    assert result.render("es") != result.render("en")


def test_drawn_histories_separate_every_wrong_rule():
    """Each drawn history tells the right answer from the last epoch, the lowest train loss, the highest
    accuracy, the highest loss, a count from 0 and the last of a tie."""
    for seed in range(50):
        for k, history in enumerate(best_checks.draw_histories(seed)):
            n = len(history)
            val = [r["val_loss"] for r in history]
            right = val.index(min(val)) + 1
            wrong = {
                n,
                [r["train_loss"] for r in history].index(min(r["train_loss"] for r in history)) + 1,
                [r["val_acc"] for r in history].index(max(r["val_acc"] for r in history)) + 1,
                val.index(max(val)) + 1,
                right - 1,
            }
            assert right not in wrong
            if k in best_checks.TIED:
                assert n - val[::-1].index(min(val)) > right
    assert best_checks.draw_histories(3) == best_checks.draw_histories(3)
    assert best_checks.draw_histories(3) != best_checks.draw_histories(4)


def test_restore_setting_ends_away_from_its_best(reference, lab):
    """best.restores is only sharp if the last epoch is not the best: on the reference it is epoch 10 of 12."""
    measured = REGISTRY["best.restores"].measure(reference, lab)
    val = [row["val_loss"] for row in measured["rows"]]
    assert measured["best"] == val.index(min(val)) + 1 == 10
    assert val[-1] > 2 * min(val)


# ---------------------------------------------------------------------------- the mutants


def test_the_track_has_its_mutants():
    assert len(MUTANTS) >= 8
    assert "best-weights-not-copied" in MUTANTS
    for mutant in MUTANTS.values():
        assert set(mutant.killed_by) <= set(ordered_ids(track=TRACK)), mutant.id


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
def test_mutant_is_killed_by_its_declared_checks(mutant_id, lab, reference):
    mutant = MUTANTS[mutant_id]
    loop = load_loop(apply(mutant, REFERENCE_SOURCE), f"{mutant_id}.py")
    for cid in mutant.killed_by:
        for draw_seed in DRAW_SEEDS:
            result = verdict(cid, loop, reference, lab, draw_seed)
            assert not result.passed, f"{mutant_id} survives {cid}: {result.render('en')}"


# why each kill happens: a phrase of the failing message, per (mutant, check)
REASONS = {
    ("best-weights-not-copied", "best.restores"): "epoch 12's (the last)",
    ("best-weights-shallow-copy", "best.restores"): "epoch 12's (the last)",
    ("best-weights-not-restored", "best.restores"): "epoch 12's (the last)",
    ("best-by-highest-val-loss", "best.best_epoch"): "whose lowest val_loss",
    ("best-by-train-loss", "best.restores"): "epoch 11's",
    ("best-by-val-acc", "best.best_epoch"): "val_acc 0.9",
    ("best-epoch-from-zero", "best.best_epoch"): "the history has no epoch 0",
    ("fit-best-epoch-short", "best.history"): "a history of 49 rows",
    ("model-two-outputs", "reference.make_model"): "16x2",
    ("data-unstratified", "reference.make_data"): "X_train differs",
    ("labels-float", "reference.make_data"): "float32 (240,)",
}


@pytest.mark.parametrize(("mutant_id", "cid"), sorted(REASONS))
def test_mutant_is_killed_for_its_reason(mutant_id, cid, lab, reference):
    loop = load_loop(apply(MUTANTS[mutant_id], REFERENCE_SOURCE), f"{mutant_id}.py")
    result = verdict(cid, loop, reference, lab)
    assert not result.passed and REASONS[(mutant_id, cid)] in result.render("en"), result.render("en")


# ---------------------------------------------------------------------------- the katas


def test_katas_name_the_tracks_mutants_and_quote_in_both_languages():
    import re

    from checker.catalogue.katas import load_katas

    katas = load_katas(track="three-classes", drafts=True)
    assert len(katas) >= 8
    for kata in katas:
        assert kata.mutant in MUTANTS, kata.slug
        sym = kata.symptom
        assert sym, kata.slug
        if sym["kind"] == "check_fails":
            assert sym["check"] in MUTANTS[kata.mutant].killed_by, kata.slug
        texts = [q[3] for q in sym.get("quotes", ())] + list(sym.get("quotes_text", ()))
        assert texts, kata.slug
        for text in texts:
            for lang in ("en", "es"):
                assert re.search(rf"(?<![\d.]){re.escape(text)}(?!\d)", getattr(kata.story, lang)), (kata.slug, text)
