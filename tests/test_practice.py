"""Practice katas: predictions compared with figures measured by running the lesson's loop.

The right answers are never written down: the tests compute them independently (from the lesson's
description, CURRICULUM.md) and check that what kata measures agrees, that a broken loop measures
differently (the measurement is real), and that the katas work end to end in both languages.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from checker.catalogue.katas import load_katas
from checker.cli import main
from checker.learn.practice import BATCH_RUN, BATCH_SIZES, EXERCISES, SEED_RUN, SEEDS, TRACE

PRACTICE = {k.practice.exercise: k for k in load_katas() if k.practice is not None}


def lesson_split():
    X, y = make_moons(n_samples=200, noise=0.2, random_state=0)
    Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=50, random_state=0, stratify=y)
    return (torch.tensor(Xtr, dtype=torch.float32), torch.tensor(ytr, dtype=torch.int64),
            torch.tensor(Xva, dtype=torch.float32), torch.tensor(yva, dtype=torch.int64))


def lesson_run(batch_size: int, epochs: int, loader_seed: int = 0, model_seed: int = 0) -> list[tuple[float, float]]:
    """(train loss, val loss) per epoch of Adam 0.01, written here from the lesson's description."""
    Xtr, ytr, Xva, yva = lesson_split()
    loader = DataLoader(TensorDataset(Xtr, ytr), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(loader_seed))
    torch.manual_seed(model_seed)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rows = []
    for _ in range(epochs):
        total, seen = 0.0, 0
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
            seen += len(yb)
        with torch.no_grad():
            rows.append((total / seen, loss_fn(net(Xva), yva).item()))
    return rows


def answers(measured: dict) -> dict:
    return {key: value for key, (value, _) in measured.items()}


def test_every_exercise_has_a_kata_and_every_question_is_measured(lab) -> None:
    assert set(PRACTICE) == set(EXERCISES) == {"trace", "batch-sizes", "seed-sources"}
    for exercise in EXERCISES.values():
        assert exercise.questions


def test_trace_measures_what_the_lesson_describes(lab) -> None:
    measured = answers(EXERCISES["trace"].measure(lab))
    n, size = TRACE.examples, TRACE.batch_size
    batches = math.ceil(n / size)
    assert measured["batches"] == batches
    assert measured["xb_shapes"] == [[size, 2]] * (n // size) + ([[n % size, 2]] if n % size else [])
    assert measured["steps"] == batches  # one step per batch
    assert measured["labels_kept"] is True
    # the order of epoch 2 is the lesson's loader's own second order, computed here
    Xtr, ytr, _, _ = lesson_split()
    loader = DataLoader(TensorDataset(Xtr[:n], ytr[:n]), batch_size=size, shuffle=True,
                        generator=torch.Generator().manual_seed(TRACE.seed))
    orders = [[int((Xtr[:n] == row).all(dim=1).nonzero()[0]) for xb, _ in loader for row in xb] for _ in range(2)]
    assert measured["same_order"] == (orders[0] == orders[1])


def test_a_broken_loop_measures_differently(lab) -> None:
    """The trace measures the file it runs: a loop that steps once per epoch shows one step."""
    from checker.catalogue.mutants import mutant_source
    from checker.runs.training import measure

    trace = measure([(mutant_source("step-outside-loop"), "broken.py")], [TRACE], lab, what="trace")[0]
    assert trace["steps"] == [1, 1]


def test_batch_sizes_measure_steps_and_the_lower_end(lab) -> None:
    measured = answers(EXERCISES["batch-sizes"].measure(lab))
    assert measured["steps_8"] == math.ceil(150 / 8) and measured["steps_150"] == 1
    last = {b: lesson_run(b, BATCH_RUN["epochs"])[-1][0] for b in BATCH_SIZES}
    assert measured["ends_lower"] == min(last, key=last.__getitem__)


def test_seed_sources_measure_the_larger_spread(lab) -> None:
    measured = answers(EXERCISES["seed-sources"].measure(lab))
    epochs = SEED_RUN["epochs"]
    by_loader = [lesson_run(32, epochs, loader_seed=s)[-1][1] for s in SEEDS]
    by_model = [lesson_run(32, epochs, model_seed=s)[-1][1] for s in SEEDS]
    spread = {"loader": max(by_loader) - min(by_loader), "model": max(by_model) - min(by_model)}
    assert measured["moves_more"] == max(spread, key=spread.__getitem__)
    assert measured["same_seeds_same_table"] is True


def test_run_seed_split_changes_only_the_seed_asked(runner, lab) -> None:
    def final(*args: str) -> float:
        result = runner.invoke(main, ["run", "--lesson", "--optimizer", "adam", "--lr", "0.01", "--epochs", "5",
                                      "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)[-1]["val_loss"]

    assert final("--seed-loader", "2") == pytest.approx(lesson_run(32, 5, loader_seed=2)[-1][1], abs=1e-5)
    assert final("--seed-model", "2") == pytest.approx(lesson_run(32, 5, model_seed=2)[-1][1], abs=1e-5)
    assert final("--seed", "2") == pytest.approx(lesson_run(32, 5, loader_seed=2, model_seed=2)[-1][1], abs=1e-5)


# ------------------------------------------------------------------------------------------------
# End to end: kata next, check, hint, in both languages

@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KATA_KATAS_DIR", raising=False)
    monkeypatch.delenv("KATA_DIR", raising=False)
    monkeypatch.setenv("KATA_LANG", "en")
    return tmp_path


def kata(runner, *args: str):
    return runner.invoke(main, list(args))


def test_trace_kata_end_to_end(runner, lab, folder: Path) -> None:
    slug = PRACTICE["trace"].slug
    result = kata(runner, "next", slug)
    assert result.exit_code == 0, result.output
    answers_file = folder / f"{slug}.toml"
    assert answers_file.exists() and "kata trace --lesson" in result.output
    result = kata(runner, "check")
    assert result.exit_code == 1 and "not answered yet" in result.output, result.output
    result = kata(runner, "hint", "--lang", "es")
    assert result.exit_code == 0 and "Pista 1/" in result.output
    # answer from what `kata trace --json` measures, but get the steps wrong on purpose
    traced = json.loads(kata(runner, "trace", "--lesson", "--json").output)
    first = [b for b in traced["batches"] if b["epoch"] == 1]
    second = [b for b in traced["batches"] if b["epoch"] == 2]
    same = [r for b in first for r in b["rows"]] == [r for b in second for r in b["rows"]]
    lines = [f"batches = {len(first)}", f"xb_shapes = {json.dumps([b['shape'] for b in first])}",
             f"steps = {traced['steps'][0] + 1}", "labels_kept = true", f"same_order = {str(same).lower()}"]
    answers_file.write_text("\n".join(lines) + "\n")
    result = kata(runner, "check", "--lang", "es")
    assert result.exit_code == 1, result.output
    assert "✗ steps" in result.output and "no es lo que midió la ejecución" in result.output
    assert "✓ batches" in result.output
    lines[2] = f"steps = {traced['steps'][0]}"
    answers_file.write_text("\n".join(lines) + "\n")
    result = kata(runner, "check", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["passed"] is True and {c["id"] for c in report["checks"]} == {
        q.key for q in EXERCISES["trace"].questions}
    progress = json.loads((folder / ".kata" / "progress.json").read_text())
    assert progress["katas"][slug]["solved"]
    result = kata(runner, "solution")
    assert result.exit_code == 0 and "`kata read loaders`" in result.output, result.output


@pytest.mark.parametrize("text, needle", [
    ("batches = [\n", "cannot be read as answers"),
    ('batches = "two"\n', "should be a whole number"),
    ("labels_kept = 1\n", "should be true or false"),
    ("colour = 3\n", "is not a question of this kata"),
    ('batches = "2"\n', "is in quotes (batches = \"2\"), which makes it text; write it without them: batches = 2"),
    ('labels_kept = "true"\n', "write it without them: labels_kept = true"),
], ids=["not-toml", "not-a-number", "not-a-bool", "unknown-key", "quoted-number", "quoted-bool"])
def test_bad_answers_exit_2_with_a_clear_message(runner, folder: Path, text: str, needle: str) -> None:
    slug = PRACTICE["trace"].slug
    assert kata(runner, "next", slug).exit_code == 0
    (folder / f"{slug}.toml").write_text(text)
    result = kata(runner, "check")
    assert result.exit_code == 2 and needle in result.output and "Traceback" not in result.output, result.output


def test_practice_kata_refuses_a_notebook_and_other_formats(runner, folder: Path) -> None:
    slug = PRACTICE["seed-sources"].slug
    result = kata(runner, "next", slug, "--notebook")
    assert result.exit_code == 2 and "practice kata" in result.output
    assert kata(runner, "next", slug).exit_code == 0
    result = kata(runner, "check", "--format", "junit")
    assert result.exit_code == 2 and "text or JSON" in result.output


def test_answers_template_in_both_languages(runner, folder: Path) -> None:
    slug = PRACTICE["batch-sizes"].slug
    assert kata(runner, "next", slug, "--lang", "es").exit_code == 0
    text = (folder / f"{slug}.toml").read_text()
    assert "tus predicciones" in text and 'steps_8 = "?"' in text
    result = kata(runner, "reset", "--yes", "--lang", "en")
    assert result.exit_code == 0
    assert "your predictions" in (folder / f"{slug}.toml").read_text()
    assert list(folder.glob(f"{slug}.toml.bak-*")), "the Spanish answers file is kept as a backup"


def test_watch_checks_a_practice_kata_and_moves_on(runner, lab, folder: Path) -> None:
    slug = PRACTICE["trace"].slug
    assert kata(runner, "next", slug).exit_code == 0
    traced = json.loads(kata(runner, "trace", "--lesson", "--json").output)
    first = [b for b in traced["batches"] if b["epoch"] == 1]
    second = [b for b in traced["batches"] if b["epoch"] == 2]
    same = [r for b in first for r in b["rows"]] == [r for b in second for r in b["rows"]]
    (folder / f"{slug}.toml").write_text(
        f"batches = {len(first)}\nxb_shapes = {json.dumps([b['shape'] for b in first])}\n"
        f"steps = {traced['steps'][0]}\nlabels_kept = true\nsame_order = {str(same).lower()}\n")
    result = kata(runner, "watch", "--max-checks", "0", "--lang", "es")
    assert result.exit_code == 0, result.output
    assert "5/5 predicciones coinciden" in result.output and "A por la siguiente kata" in result.output
    progress = json.loads((folder / ".kata" / "progress.json").read_text())
    assert progress["katas"][slug]["solved"] and progress["current"] != slug
    assert (folder / progress["katas"][progress["current"]]["file"]).exists()


def test_checking_an_answers_file_by_path_says_what_to_do(runner, folder: Path) -> None:
    slug = PRACTICE["trace"].slug
    assert kata(runner, "next", slug).exit_code == 0
    elsewhere = folder.parent / "elsewhere"  # a copy that is no current kata's file
    elsewhere.mkdir()
    (elsewhere / f"{slug}.toml").write_text((folder / f"{slug}.toml").read_text())
    copy = str(elsewhere / f"{slug}.toml")
    for args, needle in ((["check", copy], "practice kata's answers"),
                         (["check", copy, "--lang", "es"], "respuestas de una kata de práctica"),
                         (["run", f"{slug}.toml"], "not a training loop")):
        result = kata(runner, *args)
        assert result.exit_code == 2 and needle in result.output, result.output
    # the current kata's own answers file, named by its path: compared, and the check counted (issue 21)
    result = kata(runner, "check", f"{slug}.toml")
    assert result.exit_code == 1 and "not answered yet" in result.output, result.output
    assert json.loads((folder / ".kata" / "progress.json").read_text())["katas"][slug]["checks"] == 1


def _independent_answers(exercise: str) -> str:
    """The answers file a learner who predicted right writes, from this file's own computation."""
    if exercise == "batch-sizes":
        last = {b: lesson_run(b, BATCH_RUN["epochs"])[-1][0] for b in BATCH_SIZES}
        lower = min(last, key=last.__getitem__)
        return f"steps_8 = {math.ceil(150 / 8)}\nsteps_150 = 1\nends_lower = {lower}\n"
    epochs = SEED_RUN["epochs"]
    spread = {}
    for name in ("loader", "model"):
        finals = [lesson_run(32, epochs, **{f"{name}_seed": s})[-1][1] for s in SEEDS]
        spread[name] = max(finals) - min(finals)
    return f'same_seeds_same_table = true\nmoves_more = "{max(spread, key=spread.__getitem__)}"\n'


@pytest.mark.parametrize("exercise", ["batch-sizes", "seed-sources"])
def test_practice_katas_end_to_end_in_both_languages(runner, lab, folder: Path, exercise: str) -> None:
    practice = PRACTICE[exercise]
    result = kata(runner, "next", practice.slug, "--lang", "es")
    assert result.exit_code == 0 and "kata run --lesson" in result.output, result.output
    result = kata(runner, "hint")
    assert result.exit_code == 0 and "Hint 1/" in result.output
    path = folder / f"{practice.slug}.toml"
    right = _independent_answers(exercise)
    wrong = right.replace("= 1\n", "= 2\n") if exercise == "batch-sizes" else right.replace("true", "false")
    path.write_text(wrong)
    result = kata(runner, "check", "--lang", "es")
    assert result.exit_code == 1 and "no es lo que midió la ejecución" in result.output, result.output
    path.write_text(right)
    result = kata(runner, "check")
    assert result.exit_code == 0 and "Solved!" in result.output, result.output
