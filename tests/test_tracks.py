"""Tracks: the setting as data (checker/setting/tracks.py).

The moons track is the lesson's setting number for number; track files are validated with messages
naming the file and the field; checks run on the tracks whose protocol has the functions they call;
and a third track added by following CONTRIBUTING.md, in a temporary copy of the project with no edit
to checker/, verifies and grades.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from checker.checks import REGISTRY, ordered_ids
from checker.setting.tracks import TrackError, all_tracks, get_track, parse_track

ROOT = Path(__file__).resolve().parent.parent


def test_moons_is_the_lessons_setting_number_for_number():
    from sklearn.datasets import make_moons
    from sklearn.model_selection import train_test_split

    t = get_track("moons")
    assert (t.data.n_samples, t.data.n_train, t.data.n_val) == (200, 150, 50)
    assert t.data.call() == "make_moons(n_samples=200, noise=0.2)"
    assert (t.model.arch, t.model.n_params, t.model.n_classes) == ("2-16-2", 82, 2)
    assert t.model.layers == "Linear(2, 16) -> ReLU -> Linear(16, 2)"
    th = t.thresholds
    assert (th.batch_size, th.overfit_examples, th.overfit_steps, th.overfit_lr, th.overfit_loss) == (32, 8, 500, 0.5,
                                                                                                     0.1)
    assert (th.converge_epochs, th.converge_lr, th.converge_acc) == (100, 0.01, 0.9)
    X, y = make_moons(n_samples=200, noise=0.2, random_state=0)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=50, random_state=0, stratify=y)
    data = t.split(0)
    assert torch.equal(data.X_train, torch.tensor(X_tr, dtype=torch.float32))
    assert torch.equal(data.y_val, torch.tensor(y_va, dtype=torch.int64))
    assert t.reference == ROOT / "solutions" / "loop.py"


def test_model_spec_builds_the_mlp_torch_manual_seed_gives():
    torch.manual_seed(0)
    lesson = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    built = get_track("moons").model.build(0)
    assert all(torch.equal(a, b) for a, b in zip(lesson.parameters(), built.parameters(), strict=True))


def test_three_classes_is_the_lessons_practice_setting():
    t = get_track("three-classes")
    assert t.data.call() == "make_blobs(n_samples=300, centers=3)"
    assert (t.data.n_train, t.data.n_val, t.model.arch, t.model.n_params) == (240, 60, "2-16-3", 99)
    assert t.thresholds.overfit_loss == 0.05
    data = t.split(0)
    assert torch.bincount(data.y_val).tolist() == [20, 20, 20]  # stratified


def test_checks_run_on_the_tracks_whose_protocol_has_what_they_call():
    moons = ordered_ids(track=get_track("moons"))
    assert moons == [c for c in ordered_ids(track=get_track("moons"))]
    assert not any(REGISTRY[c].protocol != "v1" for c in moons)  # moons runs protocol v1 checks only
    three = ordered_ids(track=get_track("three-classes"))
    assert set(moons) <= set(three) and any(REGISTRY[c].family == "best" for c in three)
    pipeline = get_track("data-pipeline")
    mine = ordered_ids(track=pipeline)
    # the pipeline's make_loader takes a Dataset: checks written for v1's make_loader(X, y, ...) do not run
    assert "loader.coverage" not in mine and "reference.make_loader" not in mine
    for cid in mine:
        chk = REGISTRY[cid]
        assert all(name in pipeline.functions for name in chk.calls)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """id = "{id}"
order = 9
protocol = ["v1"]
reference = "solutions/{id}/loop.py"
mutants = "mutants/{id}"
katas = "katas/{id}"
[title]
en = "A"
es = "B"
[data]
generator = "make_circles"
n_samples = 100
n_val = 20
params = {{ noise = 0.1 }}
[model]
widths = [2, 8, 2]
"""


@pytest.mark.parametrize("change, expected", [
    (("n_val = 20", "n_val = 200"), "n_val (200) must be below n_samples (100)"),
    (("make_circles", "make_nothing_at_all; x"), "is not a make_* function"),
    (('protocol = ["v1"]', 'protocol = ["v9"]'), "unknown group(s) v9"),
    (("widths = [2, 8, 2]", "widths = [2, 0, 2]"), "field `widths` must be a non-empty list of whole numbers"),
    (("[model]", "colour = 3\n[model]"), "unknown field(s) `colour`"),
    (('id = "t"', 'id = "other"'), "the file is named t.toml"),
    (("[model]", '[costs]\n"converge.adam" = 0\n[model]'), "'converge.adam' must be a number of milliseconds"),
    (("[model]", '[costs]\n"steps.overfit" = "slow"\n[model]'), "'steps.overfit' must be a number of millis"),
    (("[model]", '[costs]\n"steps.overfit" = true\n[model]'), "'steps.overfit' must be a number of millis"),
    (("[model]", '[costs]\noverfit = 3\n[model]'), "'overfit' is not a check id"),
])
def test_a_bad_track_file_is_named_with_its_field(tmp_path, change, expected):
    text = GOOD.format(id="t").replace(*change)
    with pytest.raises(TrackError, match=None) as info:
        parse_track(_write(tmp_path / "tracks" / "t.toml", text), tmp_path)
    assert expected in str(info.value) and "t.toml" in str(info.value)


def test_a_costs_table_is_read_as_sorted_milliseconds_and_never_compared(tmp_path):
    text = GOOD.format(id="t") + '[costs]\n"steps.overfit" = 211\n"converge.adam" = 190.5\n'
    track = parse_track(_write(tmp_path / "tracks" / "t.toml", text), tmp_path)
    assert track.costs == (("converge.adam", 190.5), ("steps.overfit", 211.0))
    plain = parse_track(_write(tmp_path / "tracks" / "t.toml", GOOD.format(id="t")), tmp_path)
    assert plain.costs == () and plain == track  # how checks are shared out is no part of the setting


def test_each_shipped_track_costs_every_check_it_runs_and_only_those():
    # measured by benchmarks/calibrate_costs.py on the track's reference: a check added or dropped without a new
    # measurement would be shared out by a guess (`python benchmarks/calibrate_costs.py --track ID --write`)
    for track in all_tracks().values():
        listed, runs = set(dict(track.costs)), set(ordered_ids(None, track=track))
        fix = f"python benchmarks/calibrate_costs.py --track {track.id} --write"
        wrong = f"missing {sorted(runs - listed)}, extra {sorted(listed - runs)}"
        assert listed == runs, f"{track.file} [costs]: {wrong}: {fix}"


def test_kata_tracks_folders_add_tracks_and_refuse_a_duplicate(tmp_path, monkeypatch):
    _write(tmp_path / "tracks" / "extra.toml", GOOD.format(id="extra"))
    monkeypatch.setenv("KATA_TRACKS", str(tmp_path / "tracks"))
    tracks = all_tracks()
    assert "extra" in tracks and tracks["extra"].reference == tmp_path / "solutions" / "extra" / "loop.py"
    _write(tmp_path / "tracks" / "moons.toml", GOOD.format(id="moons"))
    with pytest.raises(TrackError, match="already declared"):
        all_tracks()


def kata(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, timeout=600)


def test_an_unknown_track_is_a_usage_error():
    proc = kata("check", "--track", "nope", "solutions/loop.py", cwd=ROOT)
    assert proc.returncode == 2 and "no track called 'nope'" in proc.stderr and "moons" in proc.stderr
    proc = kata("tracks", "--json", cwd=ROOT)
    assert {row["track"] for row in json.loads(proc.stdout)} >= {"moons", "three-classes", "data-pipeline"}


# ------------------------------------------------------------------ a third track, following CONTRIBUTING.md

CIRCLES = """id = "circles"
order = 4
protocol = ["v1"]
reference = "solutions/circles/loop.py"
mutants = "mutants/circles"
katas = "katas/circles"

[title]
en = "Circles: a deeper MLP"
es = "Círculos: un MLP más profundo"

[data]
generator = "make_circles"
n_samples = 240
n_val = 60
params = { noise = 0.1, factor = 0.5 }

[model]
widths = [2, 12, 12, 2]

[thresholds]
overfit_loss = 0.1
converge_acc = 0.85
converge_reached = 0.95
falls_lr = 0.02
falls_epochs = 5
"""

ZERO_GRAD = """id = "zero-grad-missing"
title = "optimizer.zero_grad() is missing"
description = "Gradients add up across batches, so every step uses the sum of all the gradients so far."
killed_by = ["steps.fresh_grads"]
documented_in = "pitfalls article, table of mistakes: no optimizer.zero_grad() before backward()"
operator = "delete_statement"
function = "train_epoch"
target = "optimizer.zero_grad()"
"""

KATA = """mutant = "zero-grad-missing"

[title]
en = "Circles that will not settle"
es = "Círculos que no se asientan"

[story]
en = "Predict first: with SGD at lr 0.1, should the loss ever climb back? Run it and watch."
es = "Primero, predice: con SGD y lr 0.1, ¿debería volver a subir la pérdida? Ejecútalo y mira."

[[hints]]
en = "What is each update made of: this batch's gradient alone, or more?"
es = "¿De qué está hecha cada actualización: solo del gradiente de este lote, o de algo más?"

[[hints]]
en = "backward() adds into .grad; something must clear it once per batch."
es = "backward() suma sobre .grad; algo debe vaciarlo una vez por lote."

[read]
en = "PyTorch docs: torch.optim.Optimizer.zero_grad."
es = "Documentación de PyTorch: torch.optim.Optimizer.zero_grad."
"""


def circles_reference() -> str:
    """solutions/loop.py turned into the circles setting, as CONTRIBUTING's step 2 says."""
    src = (ROOT / "solutions" / "loop.py").read_text(encoding="utf-8")
    for old, new in (("from sklearn.datasets import make_moons", "from sklearn.datasets import make_circles"),
                     ("make_moons(n_samples=200, noise=0.2, random_state=seed)",
                      "make_circles(n_samples=240, noise=0.1, factor=0.5, random_state=seed)"),
                     ("test_size=50", "test_size=60"),
                     ("nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))",
                      "nn.Sequential(nn.Linear(2, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 2))")):
        assert old in src, old
        src = src.replace(old, new)
    return src


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A temporary copy of the project with the circles track added; checker/ is copied untouched."""
    copy = tmp_path_factory.mktemp("project")
    for name in ("checker", "tracks", "solutions", "mutants", "katas", "docs"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    _write(copy / "tracks" / "circles.toml", CIRCLES)
    _write(copy / "solutions" / "circles" / "loop.py", circles_reference())
    _write(copy / "mutants" / "circles" / "zero-grad-missing.toml", ZERO_GRAD)
    _write(copy / "katas" / "circles" / "010-circles-that-will-not-settle.toml", KATA)
    return copy


def test_a_third_track_added_by_contributing_verifies_and_grades(project, tmp_path):
    before = {p.relative_to(ROOT / "checker"): p.read_bytes() for p in (ROOT / "checker").rglob("*.py")}
    verify = kata("mutants", "--track", "circles", "verify", "--seeds", "1", "-q", cwd=project)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "zero-grad-missing" in verify.stdout
    proofs = json.loads((project / "mutants" / "circles" / "proofs.json").read_text())
    assert proofs["proofs"]["zero-grad-missing"]["status"] == "Killed"

    # the kata is proven now: the learner sees it under its track and can open it
    listed = json.loads(kata("list", "--json", "--track", "circles", "--dir", str(tmp_path), cwd=project).stdout)
    assert [row["kata"] for row in listed] == ["circles-that-will-not-settle"]
    opened = kata("next", "--track", "circles", "--json", "--dir", str(tmp_path), cwd=project)
    assert json.loads(opened.stdout)["kata"] == "circles-that-will-not-settle", opened.stderr

    # a class graded against the track: the reference passes, the mutant fails on its declared check
    subs = tmp_path / "class"
    _write(subs / "alice.py", circles_reference())
    exported = kata("mutants", "--track", "circles", "export", "zero-grad-missing", str(subs / "bob.py"),
                    cwd=project)
    assert exported.returncode == 0, exported.stderr
    graded = kata("grade", str(subs), "-o", str(tmp_path / "out"), "--track", "circles", cwd=project)
    assert graded.returncode == 0, graded.stderr
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows["alice.py"]["passed"] == "true" and rows["bob.py"]["passed"] == "false"
    assert rows["bob.py"]["steps.fresh_grads"] == "fail" and rows["alice.py"]["steps.fresh_grads"] == "pass"
    # graded against the circles setting: moons' sizes would fail alice's data check
    assert rows["alice.py"]["data.lesson"] == "pass"
    after = {p.relative_to(ROOT / "checker"): p.read_bytes() for p in (ROOT / "checker").rglob("*.py")}
    assert before == after
    tracks_module = Path("checker") / "setting" / "tracks.py"
    assert (project / tracks_module).read_bytes() == (ROOT / tracks_module).read_bytes()


def test_a_three_classes_kata_end_to_end_in_spanish(tmp_path):
    """A learner picks the three-classes track: the starter fails on its declared check, the fix passes
    and is recorded, and `kata check FILE` and `kata run FILE` know the file's track from the kata."""
    from checker.catalogue.mutants import load_mutants

    work = ["--dir", str(tmp_path)]
    opened = kata("next", "--track", "three-classes", "--json", *work, cwd=ROOT)
    assert opened.returncode == 0, opened.stderr
    slug, path = json.loads(opened.stdout)["kata"], Path(json.loads(opened.stdout)["path"])
    katas = __import__("checker.catalogue.katas", fromlist=["load_katas"]).load_katas()
    kata_ = next(k for k in katas if k.slug == slug)
    assert kata_.track == "three-classes" and path.exists()
    declared = load_mutants(get_track("three-classes").mutants_dir)[kata_.mutant].killed_by

    failing = kata("check", "--json", "--lang", "es", *work, cwd=ROOT)
    assert failing.returncode == 1, failing.stderr
    report = json.loads(failing.stdout)
    assert {c["id"] for c in report["checks"] if c["status"] == "fail"} >= set(declared)
    assert any(c["id"].startswith("best.") for c in report["checks"])  # graded on the track's battery

    path.write_text(get_track("three-classes").reference.read_text(encoding="utf-8"), encoding="utf-8")
    by_file = kata("check", str(path), "--only", "data.lesson", *work, cwd=ROOT)  # the track, from the kata
    assert by_file.returncode == 0, by_file.stdout + by_file.stderr
    run = kata(*work, "run", str(path), "--epochs", "2", "--json", cwd=ROOT)  # --dir on the group
    assert run.returncode == 0 and len(json.loads(run.stdout)) == 2  # 240 examples: 8 batches of 32 or less
    passing = kata("check", "--lang", "es", *work, cwd=ROOT)
    assert passing.returncode == 0, passing.stdout
    assert "pasan" in passing.stdout.lower()
    listed = json.loads(kata("list", "--json", "--track", "three-classes", *work, cwd=ROOT).stdout)
    assert next(r for r in listed if r["kata"] == slug)["status"] == "solved"
    assert "three-classes" in kata("list", *work, cwd=ROOT).stdout  # the heading of its group


def test_instructor_commands_work_per_track():
    """`kata new --check` finds a track's kata by itself; `kata mutants generate` mutates the track's
    reference (its own functions, a method included); `kata checks --track` lists the track's battery."""
    drafted = kata("new", "--check", "lower-train-higher-val", cwd=ROOT)
    assert drafted.returncode == 0, drafted.stdout + drafted.stderr
    assert "is ready" in drafted.stdout
    generated = kata("mutants", "--track", "three-classes", "generate", "--dry-run", "--function", "fit_best",
                     cwd=ROOT)
    assert generated.returncode == 0, generated.stderr
    assert "generated mutants" in generated.stdout
    unknown = kata("mutants", "--track", "three-classes", "generate", "--dry-run", "--function", "make_dataset",
                   cwd=ROOT)
    assert unknown.returncode == 2 and "make_dataset" in unknown.stderr and "fit_best" in unknown.stderr
    checks = json.loads(kata("checks", "--json", "--track", "data-pipeline", cwd=ROOT).stdout)
    ids = {row["id"] for row in checks}
    assert "pipeline.workers" in ids and "loader.coverage" not in ids and "steps.fresh_grads" in ids


def test_three_classes_loops_written_elsewhere():
    """A correct three-classes loop in a style of its own passes every check with no integrity note; a
    best_epoch that breaks ties the other way fails best.best_epoch, naming the tie."""
    from checker.engine.grading import Submission, grade
    from checker.setting.lab import Lab

    folder = ROOT / "tests" / "corpus" / "three-classes"
    good, tie = (folder / "trainer_bytesio.py").read_text(), (folder / "best_last_on_ties.py").read_text()
    lab = Lab(track="three-classes").prepare()
    ok, bad = grade([Submission(good, "trainer_bytesio.py"), Submission(tie, "best_last_on_ties.py")], lab)
    assert ok.passed and not ok.held_for_review, [(c.id, c.message) for c in ok.checks if not c.passed]
    assert len(ok.checks) == len(ordered_ids(track=lab.track))
    failing = {c.id: c.message for c in bad.checks if not c.passed}
    assert set(failing) == {"best.best_epoch"}, failing
    assert "the first one counts" in failing["best.best_epoch"]


def test_a_file_of_another_track_is_graded_against_it_or_told_to_give_track(tmp_path):
    """Checked without --track from a folder of no track, a three-classes file is graded against three-classes
    (its data's shapes), which it says first, never a moons verdict; a data-pipeline file, which does not
    follow protocol v1, stops with exit 2, what it lacks first, then the --track hint."""
    three = tmp_path / "mine.py"
    three.write_text(get_track("three-classes").reference.read_text())
    proc = kata("check", str(three), "--only", "data.lesson", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("graded against track three-classes")
    pipeline = tmp_path / "pipe.py"
    pipeline.write_text(get_track("data-pipeline").reference.read_text())
    proc = kata("--lang", "es", "check", str(pipeline), cwd=tmp_path)
    # what the file lacks first, then the --track hint (issue 34)
    assert proc.returncode == 2 and "no sigue el protocolo" in proc.stderr.splitlines()[0], proc.stderr
    assert "--track NOMBRE" in proc.stderr.splitlines()[-1], proc.stderr


def test_checks_are_shared_out_by_the_tracks_measured_costs():
    from checker.engine.grading import split_checks

    ids = ["steps.overfit", "schedule.step", "schedule.cosine", "converge.adam"]
    # by what the checks declare (moons): Adam alone is the longest, so it goes with the shortest
    by_declared = sorted(map(sorted, split_checks(ids, 2)))
    assert by_declared == [["converge.adam", "schedule.cosine"], ["schedule.step", "steps.overfit"]]
    # a track where the schedules are the long ones: each goes with one of the short ones, every group keeping
    # the catalogue's order
    costs = {"steps.overfit": 10, "converge.adam": 10, "schedule.step": 300, "schedule.cosine": 290}
    groups = split_checks(ids, 2, costs)
    assert sorted(map(sorted, groups)) == [["converge.adam", "schedule.step"], ["schedule.cosine", "steps.overfit"]]
    assert all(g == [c for c in ids if c in g] for g in groups)
    # the shipped three-classes table ends its two late groups within 5% of each other
    track = get_track("three-classes")
    late = [c for c in ordered_ids(None, track=track) if not REGISTRY[c].early]
    loads = [sum(dict(track.costs)[c] for c in g) for g in split_checks(late, 2, dict(track.costs))]
    assert len(loads) == 2 and max(loads) <= 1.05 * min(loads), loads


def test_calibrate_costs_replaces_only_the_costs_table(tmp_path):
    from benchmarks.calibrate_costs import costs_table, with_costs

    table = costs_table({"steps.overfit": 211, "converge.adam": 190}, runs=3)
    assert table.splitlines()[0] == "[costs]" and table.splitlines()[-2:] == ['"converge.adam" = 190',
                                                                            '"steps.overfit" = 211']
    plain = GOOD.format(id="t")
    added = with_costs(plain, table)
    assert added.startswith(plain) and added.endswith(table)
    again = with_costs(added, costs_table({"steps.overfit": 5}, runs=1))
    assert again.startswith(plain) and '"converge.adam"' not in again and again.count("[costs]") == 1
    # a table in the middle: the tables after it stay, and the result parses as the track it was
    middle = plain.replace("[model]", '[costs]\n"steps.overfit" = 9\n\n[model]')
    replaced = with_costs(middle, table)
    assert "[model]\nwidths = [2, 8, 2]" in replaced and '"steps.overfit" = 9' not in replaced
    track = parse_track(_write(tmp_path / "tracks" / "t.toml", replaced), tmp_path)
    assert dict(track.costs) == {"steps.overfit": 211.0, "converge.adam": 190.0} and track.model.widths == (2, 8, 2)
