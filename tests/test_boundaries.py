"""A bug with a single threshold anywhere inside a declared domain fails on every run (issue 30).

A clamp ``min(x, T)``, a floor ``max(x, T)``, the first T rows kept, a behaviour switched on past T: each shows only
on one side of T. The classes (``checker.setting.coverage``) call every function at both ends of each domain
(``checker.setting.domains``), so every T inside has a call on each side, whatever the draw.

- The property, on many draws (cheap): for thresholds drawn fresh inside each domain, never among the points the
  classes were written from (``domains.thresholds``), every run's cases hold a value on each side of T where the
  bug's behaviour changes.
- The verdicts, on real runs (marked ``coverage``): the lesson's loop with such a threshold bug placed at a fresh
  T, on the protocol function's parameter, fails its differential check on every run.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest

from checker.setting import domains
from checker.setting.domains import domain_of
from checker.setting.draws import Draw
from checker.setting.tracks import get_track

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("KATA_COVERAGE_RUNS", "3"))


def fresh_threshold(rng: random.Random, domain) -> float | int:
    """A threshold strictly inside ``domain``, log-uniform, never one of the points the classes were written from
    (its ends, its decades, the course's values, ``domains.thresholds``)."""
    used = set(domains.thresholds(domain)) | {domain.low, domain.high}
    while True:
        low = max(domain.low, 1e-12 if not domain.integral else 1)
        value = low * (domain.high / low) ** rng.random()
        value = int(value) if domain.integral else float(f"{value:.4g}")
        if domain.low < value < domain.high and value not in used:
            return value


def _sides(values, t) -> tuple[bool, bool]:
    return any(v > t for v in values), any(v < t for v in values)


@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_every_fresh_threshold_has_a_call_on_each_side_on_every_run(track_id):
    track = get_track(track_id)
    rng = random.Random(f"thresholds-{track_id}")
    for seed in range(40):
        cov = Draw.from_seed(seed + 1000, track).coverage
        for name in ("sgd", "adam"):
            d = domain_of("make_optimizer", "lr", name)
            lrs = [c.value for c in cov.optimizers if dict(c.facts)["name"] == name and c.value is not None]
            for _ in range(20):
                t = fresh_threshold(rng, d)
                assert _sides(lrs, t) == (True, True), (name, t, lrs)
        seeds = [0 if c.value is None else c.value for c in cov.seeds]
        for _ in range(20):
            t = fresh_threshold(rng, domain_of("make_model", "seed"))
            assert _sides(seeds, t) == (True, True), t
        # make_loader: min(batch_size, T) changes the batches only where the batch and the set both pass T;
        # max(batch_size, T) only where the batch is under T and under the set; the first T rows only past T
        n = track.data.n_train
        calls = [(n, 32 if c.value is None else c.value) for c in cov.loader]
        calls += [(c.value, dict(c.facts)["b"]) for c in cov.loader_rows]
        for _ in range(20):
            t = fresh_threshold(rng, domain_of("make_loader", "batch_size"))
            assert any(b > t and rows > t for rows, b in calls), (t, calls)
            assert any(b < t and b < rows for rows, b in calls), (t, calls)
            t = fresh_threshold(rng, domain_of("make_loader", "X"))
            assert _sides([rows for rows, _ in calls], t) == (True, True), t
            t = fresh_threshold(rng, domain_of("evaluate", "X"))
            assert _sides([c.value for c in cov.rows], t) == (True, True), t
            t = fresh_threshold(rng, domain_of("fit", "epochs"))
            assert _sides([f.epochs for f in cov.fit], t) == (True, True), t
            # a clip norm capped, floored or dropped past T shows only in a run whose clip binds (every batch's
            # gradient past it: the loss scaled past the domain's top) on T's far side
            t = fresh_threshold(rng, domain_of("train_epoch", "clip_norm"))
            for runs in (cov.train, cov.fit):
                binding = [c.clip for c in runs if c.clip is not None and c.loss_scale
                           and c.loss_scale * 0.28 > domain_of("fit", "clip_norm").high]
                assert _sides(binding, t) == (True, True), t
            # the batches handed to train_epoch and fit are an argument too: a batch handled otherwise past T (cut
            # in chunks of T, skipped, clipped) shows in a batch past T; chunks of T, averaged unweighted, only in
            # a batch past T that T does not divide
            t = fresh_threshold(rng, domain_of("make_loader", "batch_size"))
            for runs in (cov.train, cov.fit):
                big = [c.batch_size for c in runs if c.clip is None and (c.repeat or 0) >= c.batch_size > t]
                assert big and any(b % int(t) for b in big), (t, big)
            # the optimizer handed to train_epoch and fit is an argument too: a loop acting on its lr past T (a
            # clip, a cap, a skipped step) shows only in an unclipped run of that optimizer on T's far side
            for name in ("sgd", "adam"):
                t = fresh_threshold(rng, domain_of("make_optimizer", "lr", name))
                for runs in (cov.train, cov.fit):
                    lrs = [c.lr for c in runs if c.optimizer == name and c.clip is None]
                    assert _sides(lrs, t) == (True, True), (name, t, lrs)


def test_fresh_thresholds_avoid_the_points_the_classes_were_written_from():
    rng = random.Random(5)
    for d in domains.DOMAINS:
        if d.numeric:
            for _ in range(50):
                t = fresh_threshold(rng, d)
                assert d.low < t < d.high and t not in domains.thresholds(d)


# ---------------------------------------------------------------------------- real runs: the verdicts

LESSON = (ROOT / "solutions" / "loop.py").read_text()


def _replace(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new, 1)


def _bugs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(name, check id, source): the lesson's loop with one threshold bug at a fresh T on one parameter."""
    sgd, adam = domain_of("make_optimizer", "lr", "sgd"), domain_of("make_optimizer", "lr", "adam")
    t_sgd, t_adam = fresh_threshold(rng, sgd), fresh_threshold(rng, adam)
    t_batch = fresh_threshold(rng, domain_of("make_loader", "batch_size"))
    t_rows = fresh_threshold(rng, domain_of("make_loader", "X"))
    t_eval = fresh_threshold(rng, domain_of("evaluate", "X"))
    t_epochs = fresh_threshold(rng, domain_of("fit", "epochs"))
    t_seed = fresh_threshold(rng, domain_of("make_model", "seed"))
    t_clip, t_fit_clip = (fresh_threshold(rng, domain_of(f, "clip_norm")) for f in ("train_epoch", "fit"))
    t_opt_sgd, t_opt_adam = fresh_threshold(rng, sgd), fresh_threshold(rng, adam)
    t_chunk = fresh_threshold(rng, domain_of("make_loader", "batch_size"))
    opt = "        return torch.optim.SGD(model.parameters(), lr=lr)"
    adam_line = "        return torch.optim.Adam(model.parameters(), lr=lr)"
    loader = "        TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=generator"
    clip = "            nn.utils.clip_grad_norm_(model.parameters(), clip_norm)"
    fit_clip = "            scheduler=scheduler, clip_norm=clip_norm, device=device,"
    return [
        (f"sgd lr clamped at {t_sgd}", "reference.make_optimizer",
         _replace(LESSON, opt, f"        return torch.optim.SGD(model.parameters(), lr=min(lr, {t_sgd}))")),
        (f"sgd lr floored at {t_sgd}", "reference.make_optimizer",
         _replace(LESSON, opt, f"        return torch.optim.SGD(model.parameters(), lr=max(lr, {t_sgd}))")),
        (f"adam lr clamped at {t_adam}", "reference.make_optimizer",
         _replace(LESSON, adam_line, f"        return torch.optim.Adam(model.parameters(), lr=min(lr, {t_adam}))")),
        (f"batch size clamped at {t_batch}", "reference.make_loader",
         _replace(LESSON, loader, loader.replace("batch_size=batch_size", f"batch_size=min(batch_size, {t_batch})"))),
        (f"first {t_rows} rows loaded", "reference.make_loader",
         _replace(LESSON, loader, loader.replace("TensorDataset(X, y)", f"TensorDataset(X[:{t_rows}], y[:{t_rows}])"))),
        (f"first {t_eval} rows evaluated", "reference.evaluate",
         _replace(LESSON, "    X, y = X.to(device), y.to(device)\n",
                  f"    X, y = X[:{t_eval}].to(device), y[:{t_eval}].to(device)\n")),
        (f"fit stops after {t_epochs} epochs", "reference.fit",
         _replace(LESSON, "    for epoch in range(1, epochs + 1):",
                  f"    for epoch in range(1, min(epochs, {t_epochs}) + 1):")),
        # clip norms: at fresh thresholds and at odd ones nobody would write a class from (37, 3e3)
        (f"train_epoch's clip norm capped at {t_clip}", "reference.train_epoch",
         _replace(LESSON, clip, clip.replace("clip_norm)", f"min(clip_norm, {t_clip}))"))),
        ("train_epoch's clip norm capped at 37", "reference.train_epoch",
         _replace(LESSON, clip, clip.replace("clip_norm)", "min(clip_norm, 37))"))),
        (f"fit's clip dropped past {t_fit_clip}", "reference.fit",
         _replace(LESSON, fit_clip, fit_clip.replace(
             "clip_norm=clip_norm", f"clip_norm=None if clip_norm is None or clip_norm > {t_fit_clip} "
                                    "else clip_norm"))),
        ("fit's clip norm floored at 3e3", "reference.fit",
         _replace(LESSON, fit_clip, fit_clip.replace(
             "clip_norm=clip_norm", "clip_norm=None if clip_norm is None else max(clip_norm, 3e3)"))),
        ("first 12,345 rows loaded", "reference.make_loader",
         _replace(LESSON, loader, loader.replace("TensorDataset(X, y)", "TensorDataset(X[:12345], y[:12345])"))),
        # the optimizer handed in, by its lr: a clip switched on past T, a step skipped under T
        (f"train_epoch clips once the optimizer's lr passes {t_opt_sgd}", "reference.train_epoch",
         _replace(LESSON, clip, clip + f"\n        elif optimizer.param_groups[0]['lr'] > {t_opt_sgd}:\n"
                                       "            nn.utils.clip_grad_norm_(model.parameters(), 0.5)")),
        (f"train_epoch skips the step while Adam's lr is under {t_opt_adam}", "reference.train_epoch",
         _replace(LESSON, "        optimizer.step()\n",
                  f"        if not (isinstance(optimizer, torch.optim.Adam) and "
                  f"optimizer.param_groups[0]['lr'] < {t_opt_adam}):\n            optimizer.step()\n")),
        # the batches handed in: one past T cut in chunks of T, their mean losses averaged unweighted (a chunk size
        # that cuts both big batches almost evenly, 10,000 for one, changes their mean by a few parts in a million:
        # there this bug is nearly equivalent, and it passes)
        *((f"train_epoch averages chunks of {t} unweighted", "reference.train_epoch",
           _replace(LESSON, "        logits = model(x)\n        loss = loss_fn(logits, y)\n",
                    f"        if len(y) > {t}:\n            parts = [loss_fn(model(a), b) for a, b in "
                    f"zip(x.split({t}), y.split({t}))]\n            loss = sum(parts) / len(parts)\n"
                    "        else:\n            logits = model(x)\n            loss = loss_fn(logits, y)\n"))
          for t in (t_chunk,)),
        (f"model seed clamped at {t_seed}", "reference.make_model",
         _replace(LESSON, "    torch.manual_seed(seed)\n    return nn.Sequential",
                  f"    torch.manual_seed(min(seed, {t_seed}))\n    return nn.Sequential")),
    ]


@pytest.mark.coverage
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_threshold_bug_at_a_fresh_threshold_fails_on_every_run():
    from checker.engine.grading import Submission, grade
    from checker.setting.lab import Lab

    lab = Lab(track="moons").prepare()
    subs, expected = [], {}
    for run in range(RUNS):
        draw = Draw.fresh(lab.track)
        for name, check_id, source in _bugs(random.Random(f"bug-{run}")):
            key = f"{run}/{name}"
            expected[key] = check_id
            subs.append(Submission(source, key, check_ids=[check_id], draw=draw))
    reports = {r.file: r for r in grade(subs, lab, workers=2)}
    problems = []
    for key, check_id in expected.items():
        got = {c.id: c for c in reports[key].checks}
        if check_id not in got or got[check_id].status != "fail":
            problems.append(f"{key}: {check_id} is {got[check_id].status if check_id in got else 'missing'}")
    assert not problems, "\n".join(problems)
    assert math.isfinite(len(expected)) and len(expected) == 16 * RUNS


def test_best_epoch_looking_at_the_first_t_epochs_only_fails_for_every_fresh_t():
    from checker.checks import REGISTRY, best

    rng = random.Random(30)
    domain = domain_of("best_epoch", "history")
    for seed in range(8):
        histories = [h for h in best.draw_histories(seed)] + [h for h, _ in best.class_histories(seed)]
        want = [best._lowest([r["val_loss"] for r in h]) for h in histories]
        ref = {"seed": seed, "answers": want[:best.N_HISTORIES], "classes": want[best.N_HISTORIES:]}
        for _ in range(10):
            t = fresh_threshold(rng, domain)
            got = [best._lowest([r["val_loss"] for r in h[:t]]) for h in histories]
            mine = {**ref, "answers": got[:best.N_HISTORIES], "classes": got[best.N_HISTORIES:]}
            assert not REGISTRY["best.best_epoch"].judge(mine, ref).passed, (seed, t)
