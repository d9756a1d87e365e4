"""Verdicts by coverage, not by luck: every argument class on every run (``checker.setting.coverage``).

The cases (cheap, no loop runs): every class is drawn for each track, inside its class, the same for the same
rng; the simplest failing case is the one named, with a passing case for contrast.

The corpus (expensive, marked ``coverage``: ``pytest -m coverage tests/test_coverage.py``): every bug of
issue 18 that shows at part of the argument space or in a call pattern (``tests/corpus/*`` files with a
``# names:`` header) is graded 5 times, each with a fresh draw, and fails its expected checks 5 times out of 5
with a message that names the class or the pattern; every correct loop passes every differential check 5 times
out of 5. One ``grade()`` call per track takes every submission of every run (both cores).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from checker.base.i18n import Message
from checker.checks import REGISTRY, ordered_ids
from checker.checks.base import failed, passed
from checker.checks.common import worst_case
from checker.setting import coverage
from checker.setting.domains import domain_of
from checker.setting.draws import Draw
from checker.setting.tracks import get_track

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
RUNS = int(os.environ.get("KATA_COVERAGE_RUNS", "5"))


def header(path: Path, key: str) -> str | None:
    match = re.search(rf"^# {key}: (.*)$", path.read_text(), re.M)
    return match.group(1).strip() if match else None


# ---------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_every_class_is_drawn_on_every_run(track_id):
    track = get_track(track_id)
    n, top = track.data.n_train, domain_of("make_loader", "batch_size").high
    for seed in range(30):
        cov = Draw.from_seed(seed, track).coverage
        kinds = {c.kind for c in cov.loader}
        assert {"batch.default", "batch.divides", "batch.under-half", "batch.over-half", "batch.one", "batch.whole",
                "batch.more", "batch.above-64"} <= kinds
        for c in cov.loader:
            b = coverage.batch_size_of(c)
            assert {"batch.divides": n % b == 0, "batch.remainder-1": n % b == 1,
                    "batch.under-half": 1 < n % b < b // 2, "batch.half": b // 2 <= n % b <= (b + 1) // 2,
                    "batch.over-half": n % b > (b + 1) // 2,
                    "batch.one": b == 1, "batch.whole": b == n, "batch.more": b > n,
                    "batch.above-64": 64 < b < n, "batch.default": b == 32, "batch.top": b == top > n}[c.kind], (c, n)
        assert [c.kind for c in cov.seeds][:4] == ["seed.default", "seed.small", "seed.adjacent", "seed.far"]
        assert {c.value for c in cov.seeds} >= {0, 1, 10, 10**9, 2**32 - 1}  # both ends, every decade, the lesson's
        assert cov.seeds[2].value == cov.seeds[1].value + 1 and cov.seeds[3].value > 2**30
        lrs = {(dict(c.facts)["name"], c.value) for c in cov.optimizers if not c.default}
        assert {name for name, _ in lrs} == {"sgd", "adam"}
        assert any(lr > 1 for name, lr in lrs if name == "sgd") and any(lr < 1e-3 for _, lr in lrs)
        for c in cov.optimizers:
            if c.kind == "opt.decade":
                facts = dict(c.facts)
                assert facts["low"] <= c.value < facts["high"]
        rows = [c.value for c in cov.rows]
        assert 1 in rows and 64 in rows and any(r > 64 and r % 16 for r in rows)
        assert any(r % 32 == 0 for r in rows) and any(r % 16 for r in rows if r < 64)
        classes = {k for t in cov.train + cov.fit for k in t.classes}
        assert {"train.defaults", "train.sgd", "train.adam", "train.clip-binds", "train.clip-loose",
                "train.no-clip", "train.lr-above-1", "train.batch-above-64", "train.long", "train.device"} <= classes
        assert ("train.batch-one" in classes) != track.model.batchnorm  # BatchNorm cannot train on one example
        for t in cov.train + cov.fit:
            assert not track.model.leaves_one(t.rows or n, t.batch_size)
    assert Draw.from_seed(4, track) == Draw.from_seed(4, track)  # deterministic given the rng
    assert Draw.from_seed(4, track).coverage != Draw.from_seed(5, track).coverage  # fresh inside each class


def test_the_simplest_failing_case_is_named_with_a_passing_one_for_contrast():
    ok, bad = Message(en="ok", es="bien"), Message(en="dropped {k}", es="perdió {k}")
    n = 150
    cases = [coverage.Case("batch.above-64", 140, (("n", n), ("q", 1), ("r", 10))),
             coverage.Case("batch.under-half", 16, (("n", n), ("q", 9), ("r", 6))),
             coverage.Case("batch.default", None, (("n", n), ("q", 4), ("r", 22)), default=True)]
    verdict = worst_case([(cases[0], failed(bad, k=10)), (cases[1], failed(bad, k=6)),
                                   (cases[2], passed(ok))])
    en, es = verdict.render("en"), verdict.render("es")
    assert not verdict.passed
    assert en == ("dropped 6 [batch 16: 150 = 9·16 + 6, last batch under half]; at the default batch size (32): "
                  "150 = 4·32 + 22 it matches the reference")
    assert es.startswith("perdió 6 [lote 16: 150 = 9·16 + 6, último lote por debajo de la mitad]; con el tamaño")
    assert worst_case([(cases[2], passed(ok))]) is None
    # defaults first, then fewer digits, then round numbers
    assert [c.value for c in coverage.simplest(cases)] == [None, 16, 140]


def test_a_numpy_integer_is_not_the_protocol_int():
    from checker.checks import best

    seed = 7
    want = [best._lowest([r["val_loss"] for r in h]) for h in best.draw_histories(seed)]
    classes = [best._lowest([r["val_loss"] for r in h]) for h, _ in best.class_histories(seed)]
    ref = {"seed": seed, "answers": want, "classes": classes}
    assert REGISTRY["best.best_epoch"].judge(ref, ref).passed
    import numpy as np

    mine = {**ref, "answers": [best._answer(np.int64(v)) for v in want]}
    verdict = REGISTRY["best.best_epoch"].judge(mine, ref)
    assert not verdict.passed and "a numpy.int64" in verdict.render("en") and "int de Python" in verdict.render("es")
    assert best._answer(3) == 3 and best._answer(True) != 1


# ---------------------------------------------------------------------------- the corpus, graded 5 times


def _bugs(folder: str) -> list[Path]:
    return sorted(p for p in (CORPUS / folder).glob("*.py") if header(p, "names"))


TRACKS = {
    "moons": ([ROOT / "solutions" / "loop.py", *sorted((CORPUS / "correct").glob("*.py"))], _bugs("broken")),
    "three-classes": ([ROOT / "solutions" / "three-classes" / "loop.py",
                       CORPUS / "three-classes" / "trainer_bytesio.py"], _bugs("three-classes")),
    "data-pipeline": ([ROOT / "solutions" / "data-pipeline" / "loop.py",
                       *sorted(p for p in (CORPUS / "data-pipeline").glob("*.py") if header(p, "correct"))],
                      _bugs("data-pipeline")),
}


@pytest.mark.coverage
@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("track_id", list(TRACKS))
def test_every_partial_bug_fails_every_run_and_every_correct_loop_passes(track_id):
    from checker.engine.grading import Submission, grade
    from checker.setting.lab import Lab

    correct, bugs = TRACKS[track_id]
    assert bugs, "each track has bugs of issue 18 in its corpus folder"
    lab = Lab(track=track_id).prepare()
    differential = [c for c in ordered_ids(track=lab.track) if REGISTRY[c].reference]
    subs = []
    for run in range(RUNS):
        draw = Draw.fresh(lab.track)  # a fresh draw per run, shared by its files
        subs += [Submission(p.read_text(), f"{run}/{p}", check_ids=differential, draw=draw) for p in correct]
        subs += [Submission(p.read_text(), f"{run}/{p}", draw=draw,
                            check_ids=[c.strip() for c in header(p, "expect").split(",")]) for p in bugs]
    reports = {r.file: r for r in grade(subs, lab, workers=2)}
    problems = []
    for run in range(RUNS):
        for p in correct:
            report = reports[f"{run}/{p}"]
            if not report.passed:
                problems.append(f"run {run}: {p.name} should pass: {report.error or ''}" + "; ".join(
                    f"{c.id}: {c.message}" for c in report.checks if not c.passed))
        for p in bugs:
            report = reports[f"{run}/{p}"]
            got = {c.id: c for c in report.checks}
            names = header(p, "names").split("|")
            for cid in [c.strip() for c in header(p, "expect").split(",")]:
                if cid not in got or got[cid].status != "fail":
                    status = f"{got[cid].status}: {got[cid].message}" if cid in got else f"missing ({report.error})"
                    problems.append(f"run {run}: {p.name}: {cid} is {status}")
            messages = " ".join(c.message for c in report.checks if not c.passed)
            if not any(name in messages for name in names):
                problems.append(f"run {run}: {p.name}: no message names {names}: {messages}")
    assert not problems, "\n".join(problems)


def test_every_lr_class_is_drawn_strictly_inside_its_bounds():
    # rounding to 3 digits once drew exactly 1.0 for "SGD above 1": a loop capping its lr at 1 then passed
    import random

    for seed in range(3000):
        rng = random.Random(seed)
        for c in coverage.optimizer_cases(rng):
            if c.kind == "opt.decade":
                facts = dict(c.facts)
                assert facts["low"] < c.value < facts["high"], c
        for t in coverage.draw(random.Random(seed), get_track("moons")).train:
            if "train.lr-above-1" in t.classes:
                assert t.lr > 1, t


def test_distinct_seeds_a_cut_seed_would_confuse_are_paired_in_every_class():
    pairs = coverage.collision_pairs(5, 2**30 + 7)
    kinds = [kind for _, _, kind, _ in pairs]
    assert kinds.count(coverage.LOW_BITS) == 20 and kinds.count(coverage.DIGITS) == 6 and kinds[-2] == coverage.FLOAT32
    assert pairs[-1] == (2**32 - 2, 2**32 - 1, coverage.TOP, 0)  # the top of the domain: a seed clamped below it
    for a, b, kind, k in pairs:
        assert a != b and max(a, b) < 2**32  # torch's CPU generator keeps a seed's low 32 bits: no pair past them
        assert b - a == {coverage.LOW_BITS: 2**k, coverage.DIGITS: 10**k, coverage.FLOAT32: 1, coverage.TOP: 1}[kind]
    # a float32 cannot tell the far pair apart, and only that pair
    import numpy as np

    assert [(a, b) for a, b, _, _ in pairs if np.float32(a) == np.float32(b)] == [(2**30 + 7, 2**30 + 8),
                                                                                  (2**32 - 2, 2**32 - 1)]
    with pytest.raises(ValueError, match="above 2\\*\\*24"):
        coverage.collision_pairs(5, 2**24)
    # fresh inside the classes: the run's small and far seeds
    cov = Draw.from_seed(11, get_track("moons")).coverage
    small, far = coverage.collision_bases(Draw.from_seed(11, get_track("moons")))
    assert small == cov.seeds[1].value and far == cov.seeds[3].value and far > 2**24
    assert coverage.collision_bases(None) == (3, 2**30 + 12345)


def test_seed_collisions_name_the_closest_pair_and_none_for_a_real_generator():
    import torch

    def order(keep):
        return lambda seed: torch.randperm(50, generator=torch.Generator().manual_seed(keep(seed))).tolist()

    draw = Draw.from_seed(3, get_track("moons"))
    small, _ = coverage.collision_bases(draw)
    assert coverage.seed_collisions(order(lambda s: s), draw) == []
    found = coverage.seed_collisions(order(lambda s: s % 8), draw)
    assert len(found) == 3 and found[0]["kind"] == coverage.LOW_BITS and found[0]["k"] == 3
    assert (found[0]["a"], found[0]["b"]) == (small, small + 8) and len(found[0]["order"]) == 6
    digits = coverage.seed_collisions(order(lambda s: s % 1000), draw)
    assert [(c["kind"], c["k"]) for c in digits] == [(coverage.DIGITS, 3), (coverage.DIGITS, 4), (coverage.DIGITS, 5)]


def test_a_case_at_a_domain_point_names_its_edge_and_where_the_course_uses_it_first():
    cov = Draw.from_seed(2, get_track("moons")).coverage
    top = next(c for c in cov.optimizers if c.kind == "opt.point" and dict(c.facts)["name"] == "sgd" and c.value == 10)
    assert top.label().en == "sgd at lr=10, the top of its domain: the lesson's 'raise the lr to 10' (kata explore)"
    assert top.label().es == "sgd con lr=10, el máximo de su dominio: el «sube la lr a 10» de la lección (kata explore)"
    fresh = next(c for c in cov.optimizers if c.kind == "opt.decade" and dict(c.facts)["low"] == 1.0)
    assert 1 < fresh.value < 10 and "domain" not in fresh.label().en
    # among failing cases, a point of the domain is named before a fresh draw of fewer digits
    assert coverage.simplest([fresh, top])[0] is top
    bottom = next(c for c in cov.seeds if c.value == 0 and not c.default)
    assert bottom.label().en == "seed 0, the bottom of its domain: the protocol's default"
    assert "el mínimo de su dominio" in bottom.label().es
