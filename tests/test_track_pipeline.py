"""The data-pipeline track: its numbers, its reference passing every pipeline check, its mutants killed.

Checks are called directly (measure, then judge) in this process, on the track's prepared lab: the
sandboxed runs are the grading machinery's tests. Faults in the Dataset's methods (``__len__``,
``__getitem__``) are written here as edits of the reference, as the mutation operators reach top-level
functions only.
"""

from __future__ import annotations

import pytest

from checker.catalogue.mutants import apply, load_mutants
from checker.checks import REGISTRY, ordered_ids
from checker.loopfile.loading import load_module
from checker.loopfile.protocol import BY_NAME, PROTOCOLS
from checker.setting.tracks import get_track
from tests.conftest import ROOT

TRACK = "data-pipeline"
PIPELINE_CHECKS = sorted(c for c, chk in REGISTRY.items() if chk.family == "pipeline")


@pytest.fixture(scope="module")
def track():
    return get_track(TRACK)


@pytest.fixture(scope="module")
def plab(track):
    from checker.setting.lab import Lab

    return Lab(track=track).prepare()


@pytest.fixture(scope="module")
def ref_source(track) -> str:
    return track.reference.read_text(encoding="utf-8")


def _load(source: str, name: str):
    return load_module(source, f"/tmp/kata-pipeline-{name}.py")


def _verdicts(loop, lab, ids):
    """Each check's verdict on ``loop``; a differential check's measure runs on the track's reference too."""
    out = {}
    for cid in ids:
        chk = REGISTRY[cid]
        mine = chk.measure(loop, lab)
        out[cid] = chk.judge(mine, chk.measure(_reference(lab), lab)) if chk.reference else chk.judge(mine)
    return out


_REFERENCES: dict = {}


def _reference(lab):
    if lab.track.id not in _REFERENCES:
        _REFERENCES[lab.track.id] = _load(lab.track.reference.read_text(encoding="utf-8"), "the-reference")
    return _REFERENCES[lab.track.id]


# ------------------------------------------------------------------------------------------ the track


def test_track_loads_with_its_numbers(track):
    assert track.protocol == ("pipeline",)
    assert (track.data.n_samples, track.data.n_val, track.data.n_train) == (300, 75, 225)
    assert track.data.n_train % track.thresholds.batch_size == 1  # a last batch of ONE without drop_last
    assert track.model.widths == (2, 32, 2) and track.model.batchnorm and track.model.dropout == 0.1
    assert track.model.layers == "Linear(2, 32) -> BatchNorm1d(32) -> ReLU -> Dropout(0.1) -> Linear(32, 2)"
    assert track.reference == ROOT / "solutions" / "data-pipeline" / "loop.py"
    assert track.mutants_dir.is_dir() and track.katas_dir.is_dir()
    split = track.split(0)
    assert tuple(split.X_train.shape) == (225, 2) and tuple(split.X_val.shape) == (75, 2)


def test_protocol_reuses_v1_where_the_call_is_the_same():
    pipeline = {f.name: f for f in PROTOCOLS["pipeline"]}
    for name in ("seed_everything", "make_data", "make_model", "make_optimizer", "train_epoch", "evaluate", "fit"):
        assert pipeline[name] is BY_NAME[name]
    assert pipeline["make_loader"] != BY_NAME["make_loader"]  # v1's loader checks do not run here
    assert "make_dataset" in pipeline


def test_pipeline_checks_run_on_this_track_only(track):
    assert set(PIPELINE_CHECKS) <= set(ordered_ids(track=track))
    assert not set(PIPELINE_CHECKS) & set(ordered_ids(track=get_track("moons")))
    assert len(PIPELINE_CHECKS) >= 6
    for cid in PIPELINE_CHECKS:
        assert REGISTRY[cid].protocol == "pipeline" and REGISTRY[cid].calls


# ------------------------------------------------------------------------------------------ reference


def test_reference_passes_every_pipeline_check(plab, ref_source):
    loop = _load(ref_source, "reference")
    for cid, verdict in _verdicts(loop, plab, PIPELINE_CHECKS).items():
        assert verdict.passed, f"{cid}: {verdict.render('en')}"
        assert verdict.render("es") != verdict.render("en")


# ------------------------------------------------------------------------------------------ mutants

MUTANTS = load_mutants(ROOT / "mutants" / "data-pipeline")


def test_at_least_eight_mutants():
    assert len(MUTANTS) >= 8


@pytest.mark.parametrize("mutant_id", sorted(MUTANTS))
def test_mutant_killed_by_its_declared_checks(plab, ref_source, mutant_id):
    mutant = MUTANTS[mutant_id]
    assert set(mutant.killed_by) <= set(PIPELINE_CHECKS) | set(REGISTRY)
    loop = _load(apply(mutant, ref_source), mutant_id)
    for cid, verdict in _verdicts(loop, plab, mutant.killed_by).items():
        assert not verdict.passed, f"{mutant_id} survives {cid}: {verdict.render('en')}"
        # the message quotes what was measured, in both languages
        assert verdict.params and verdict.render("es")


# Faults inside the Dataset's methods, as edits of the reference: (old, new, check, text of the failure)
METHOD_FAULTS = {
    "len-off-by-one": ("return len(self.X)", "return len(self.X) - 1", "pipeline.dataset", "has len 224"),
    "len-one-too-many": ("return len(self.X)", "return len(self.X) + 1", "pipeline.dataset", "has len 226"),
    "jitter-frozen": (
        "        self.X, self.y, self.jitter = X, y, jitter\n",
        "        self.X, self.y, self.jitter = X, y, jitter\n"
        "        self.noise = np.random.normal(0.0, jitter, size=X.shape) if jitter else None\n",
        "pipeline.dataset", "drawn once",
    ),
    "labels-shifted": ("return x, self.y[i]", "return x, self.y[i - 1]", "pipeline.dataset", "with label"),
}


@pytest.mark.parametrize("fault", sorted(METHOD_FAULTS))
def test_dataset_method_faults_are_caught(plab, ref_source, fault):
    old, new, cid, text = METHOD_FAULTS[fault]
    assert old in ref_source
    source = ref_source.replace(old, new, 1)
    if fault == "jitter-frozen":
        source = source.replace(
            "noise = np.random.normal(0.0, self.jitter, size=x.shape)", "noise = self.noise[i]", 1)
    verdict = _verdicts(_load(source, fault), plab, [cid])[cid]
    assert not verdict.passed and text in verdict.render("en"), verdict.render("en")


def test_model_moved_after_the_optimizer_is_harmless():
    """Measured, not taught as a fault: Module.to() keeps the Parameter objects an optimizer holds."""
    import torch

    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = list(model.parameters())
    model.to(torch.float64)
    assert all(a is b for a, b in zip(before, model.parameters(), strict=True))
    assert optimizer.param_groups[0]["params"][0] is model.weight


# ------------------------------------------------------------------------------------------ katas


def _katas():
    from checker.catalogue.katas import load_katas

    return load_katas(track=TRACK, drafts=True)


def test_at_least_eight_katas_each_on_a_mutant_of_the_track():
    katas = _katas()
    assert len(katas) >= 8
    for kata in katas:
        assert kata.mutant in MUTANTS, kata.slug
        assert kata.symptom and kata.story.en and kata.story.es and len(kata.hints) >= 2


@pytest.mark.parametrize("slug", sorted(k.slug for k in _katas()))
def test_kata_quotes_of_check_messages_are_true(plab, ref_source, slug):
    """Each number a story quotes from a check's message is in that message, in both languages.

    (The table numbers the stories quote are ``kata run``'s, checked by tests/test_kata_stories.py.)"""
    kata = next(k for k in _katas() if k.slug == slug)
    texts = list(kata.symptom.get("quotes_text", ()))
    for text in texts + [q[3] for q in kata.symptom.get("quotes", ())]:
        assert text in kata.story.en and text in kata.story.es, (slug, text)
    if not texts:
        return
    mutant = MUTANTS[kata.mutant]
    check_id = kata.symptom.get("check") or mutant.killed_by[0]
    loop = _load(apply(mutant, ref_source), f"kata-{slug}")
    verdict = _verdicts(loop, plab, [check_id])[check_id]
    assert not verdict.passed
    for lang in ("en", "es"):
        for text in texts:
            if text.isascii() and any(c.isdigit() for c in text):
                assert text in verdict.render(lang), (slug, lang, text, verdict.render(lang))
    for text in texts:
        assert text in verdict.render("en"), (slug, text, verdict.render("en"))


# ------------------------------------------------------------------------------------------ the edges of the domain
# Issue 30: a bug with one threshold anywhere inside a parameter's declared domain fails. The thresholds below are
# none of the points the checks were written from (num_workers 0, 1, 2, 8; seeds 0, powers of ten, 2**32 - 1;
# sets of 10, 100, 1000 rows and one past the top): each shows only on the far side of a point.

DROP = "dataset = torch.utils.data.Subset(dataset, range(len(dataset) - len(dataset) % batch_size))"

EDGE_BUGS = {
    # id: (operator, parameter, operator's arguments, the check, what its message names)
    "workers-capped-at-5": ("clamp_above", "num_workers", {"threshold": 5}, "pipeline.workers",
                            "num_workers=8, the top of its domain"),
    "workers-at-least-4": ("clamp_below", "num_workers", {"threshold": 4}, "pipeline.workers",
                           "num_workers=0, the bottom of its domain"),
    "seed-capped-at-123456": ("clamp_above", "seed", {"threshold": 123456}, "pipeline.seed_domain",
                              "seed=1000000"),
    "seed-at-least-777": ("clamp_below", "seed", {"threshold": 777}, "pipeline.seed_domain", "seed=0"),
    "seed-modulo-54321": ("switch_past", "seed", {"threshold": 54321, "code": "seed = seed % 54321"},
                          "pipeline.seed_domain", "seed=100000"),
    "remainder-cut-past-777": ("switch_past", "batch_size", {"threshold": 777, "code": DROP}, "pipeline.batches",
                               "never came out"),
    "first-777-rows": ("keep_rows", "dataset", {"threshold": 777, "form": "dataset", "together": ""},
                       "pipeline.batches", "the top of its domain"),
}


@pytest.mark.parametrize("bug", sorted(EDGE_BUGS))
def test_a_threshold_no_check_was_written_from_fails(plab, ref_source, bug):
    """make_loader with one threshold inside a domain fails its check, naming the simplest failing case (and the
    domain's edge where it sits at one), in English and Spanish. These checks take no draw: the same on every run."""
    import libcst as cst

    from checker.catalogue.operators import apply_step

    operator, parameter, args, cid, text = EDGE_BUGS[bug]
    source = apply_step(cst.parse_module(ref_source), operator, "make_loader", parameter, **args).code
    verdict = _verdicts(_load(source, bug), plab, [cid])[cid]
    assert not verdict.passed and text in verdict.render("en"), verdict.render("en")
    assert verdict.render("es") != verdict.render("en")


def test_the_remainder_sets_cross_the_whole_batch_size_domain():
    """Every set leaves one row out of each epoch, and the last is the batch-size domain's top over one row more;
    each runs enough epochs that a shuffled loader misses a row with a chance under one in a million."""
    from checker.checks.pipeline import MISS_CHANCE, remainder_cases
    from checker.setting.domains import domain_of

    cases = remainder_cases()
    assert all(n % b == 1 for n, b, _ in cases)
    assert cases[-1][1] == domain_of("make_loader", "batch_size").high
    assert [b for _, b, _ in cases] == sorted(b for _, b, _ in cases) and cases[0][1] <= 3
    assert all(n * (1 / n) ** e <= MISS_CHANCE * (1 + 1e-9) for n, _, e in cases)


CORRECT = sorted(p for p in (ROOT / "tests" / "corpus" / "data-pipeline").glob("*.py")
                 if p.read_text(encoding="utf-8").startswith("# correct:"))


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_a_correct_loop_of_the_corpus_passes_every_pipeline_check(plab, path):
    """A loader that shuffles its own way agrees with the reference at no seed: pipeline.seed_domain passes it,
    and every row still comes out within a few epochs."""
    verdicts = _verdicts(_load(path.read_text(encoding="utf-8"), path.stem), plab, PIPELINE_CHECKS)
    assert [f"{c}: {v.render('en')}" for c, v in verdicts.items() if not v.passed] == []


def test_there_is_a_correct_loop_that_shuffles_its_own_way():
    assert any(p.stem == "own_sampler" for p in CORRECT)


@pytest.mark.parametrize("draw_seed", [0, 1])
def test_reference_evaluate_passes_the_reference_with_batchnorm_and_dropout(track, ref_source, draw_seed):
    """evaluate's cases whose labels are the model's own predictions take them in eval mode (evaluate's): in training
    mode, Dropout and BatchNorm's batch statistics gave the file's process and the reference's other labels, and the
    track's own reference failed reference.evaluate on every draw of verify."""
    from checker.setting.draws import Draw
    from checker.setting.lab import Lab

    lab = Lab(track=track).prepare()
    lab.draw = Draw.from_seed(draw_seed, track)
    chk = REGISTRY["reference.evaluate"]
    mine = chk.measure(_load(ref_source, "evaluate-mine"), lab)
    verdict = chk.judge(mine, chk.measure(_load(ref_source, "evaluate-ref"), lab))
    assert verdict.passed, verdict.render("en")
