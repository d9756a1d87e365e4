"""`kata run`: the lesson's setting on any protocol-v1 file, as a table or as JSON.

The reproduction tests compare `kata run --json` with a minimal loop written here, from the
lesson's description alone (CURRICULUM.md), to 3 decimals.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from checker.cli import main
from tests.conftest import REFERENCE


def lesson_history(optimizer: str, lr: float, epochs: int, scheduler: str | None = None) -> list[dict]:
    """The lesson's training, written independently of solutions/loop.py."""
    X, y = make_moons(n_samples=200, noise=0.2, random_state=0)
    Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=50, random_state=0, stratify=y)
    Xtr, Xva = torch.tensor(Xtr, dtype=torch.float32), torch.tensor(Xva, dtype=torch.float32)
    ytr, yva = torch.tensor(ytr, dtype=torch.int64), torch.tensor(yva, dtype=torch.int64)
    loader = DataLoader(TensorDataset(Xtr, ytr), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(net.parameters(), lr=lr)
    sched = None
    if scheduler == "step":
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    elif scheduler == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    criterion = nn.CrossEntropyLoss()
    rows = []
    for epoch in range(epochs):
        lr_now = opt.param_groups[0]["lr"]
        net.train()
        losses = []
        for xb, yb in loader:
            opt.zero_grad()
            loss = criterion(net(xb), yb)
            loss.backward()
            opt.step()
            losses.append((loss.item(), len(yb)))
        if sched:
            sched.step()
        net.eval()
        with torch.no_grad():
            out = net(Xva)
            val_loss = criterion(out, yva).item()
            val_acc = (out.argmax(1) == yva).float().mean().item()
        rows.append({"epoch": epoch + 1, "lr": lr_now,
                     "train_loss": sum(v * n for v, n in losses) / sum(n for _, n in losses),
                     "val_loss": val_loss, "val_acc": val_acc})
    return rows


def run_json(runner, *args: str) -> list[dict]:
    result = runner.invoke(main, ["run", str(REFERENCE), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--optimizer", "sgd", "--lr", "0.1", "--epochs", "10"], ("sgd", 0.1, 10, None)),
        (["--optimizer", "sgd", "--lr", "1.0", "--epochs", "30", "--scheduler", "step"], ("sgd", 1.0, 30, "step")),
        (["--optimizer", "sgd", "--lr", "3.0", "--epochs", "30", "--scheduler", "cosine"], ("sgd", 3.0, 30, "cosine")),
        (["--optimizer", "adam", "--lr", "0.01", "--epochs", "100"], ("adam", 0.01, 100, None)),
    ],
    ids=["sgd-0.1", "sgd-1.0-step", "sgd-3.0-cosine", "adam-0.01-100"],
)
def test_kata_run_reproduces_the_lesson(runner, lab, args, expected):
    got = run_json(runner, *args)
    want = lesson_history(*expected)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g["epoch"] == w["epoch"]
        for key in ("lr", "train_loss", "val_loss", "val_acc"):
            assert round(g[key], 3) == round(w[key], 3), (g["epoch"], key, g[key], w[key])


def test_lesson_facts_hold(runner, lab):
    """Numbers CURRICULUM.md states: StepLR halves at 11 and 21, cosine passes 0.5 at 16, Adam ~0.96."""
    step = run_json(runner, "--lr", "1.0", "--epochs", "30", "--scheduler", "step")
    assert [r["lr"] for r in step] == [1.0] * 10 + [0.5] * 10 + [0.25] * 10
    cosine = run_json(runner, "--lr", "1.0", "--epochs", "30", "--scheduler", "cosine")
    lrs = [r["lr"] for r in cosine]
    assert lrs[15] == pytest.approx(0.5, abs=1e-9)  # epoch 16 passes half the initial lr
    assert all(lr > 0.5 for lr in lrs[:15]) and all(lr < 0.5 for lr in lrs[16:])
    assert lrs[-1] < 0.01
    adam = run_json(runner, "--optimizer", "adam", "--lr", "0.01", "--epochs", "100")
    assert adam[-1]["val_acc"] == pytest.approx(0.96, abs=0.021)
    big = run_json(runner, "--lr", "10.0", "--epochs", "2")
    initial = lesson_initial_loss()
    assert big[0]["train_loss"] > initial  # lr 10 makes the first epoch's loss rise


def lesson_initial_loss() -> float:
    X, y = make_moons(n_samples=200, noise=0.2, random_state=0)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=50, random_state=0, stratify=y)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    with torch.no_grad():
        return nn.CrossEntropyLoss()(net(torch.tensor(Xtr, dtype=torch.float32)), torch.tensor(ytr)).item()


def test_text_output_has_table_and_curve(runner, lab):
    result = runner.invoke(main, ["run", str(REFERENCE), "--epochs", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line for line in lines if "epoch" in line)
    for column in ("lr", "train loss", "val loss", "val acc"):
        assert column in header
    assert sum(1 for line in lines if line.split() and line.split()[0] in {"1", "2", "3"}) == 3
    assert any(line.startswith("train loss") and "(" in line for line in lines)


def test_json_has_the_documented_shape(runner, lab):
    rows = run_json(runner, "--epochs", "2")
    assert [set(r) for r in rows] == [{"epoch", "lr", "train_loss", "val_loss", "val_acc"}] * 2
    assert all(isinstance(v, int | float) and math.isfinite(v) for r in rows for v in r.values())


ANOTHER_STYLE = '''
import random
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, TensorDataset


def seed_everything(seed=0):
    random.seed(seed); np.random.seed(seed); torch.manual_seed(seed)


def make_data(seed=0):
    X, y = make_moons(200, noise=0.2, random_state=seed)
    a, b, c, d = train_test_split(X, y, test_size=50, random_state=seed, stratify=y)
    return (torch.as_tensor(a).float(), torch.as_tensor(c).long(),
            torch.as_tensor(b).float(), torch.as_tensor(d).long())


def make_loader(X, y, batch_size=32, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return DataLoader(TensorDataset(X, y), batch_size, shuffle=True, generator=g)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(2, 16)
        self.out = torch.nn.Linear(16, 2)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def make_model(seed=0):
    torch.manual_seed(seed)
    return MLP()


def make_optimizer(model, name="sgd", lr=0.1):
    return {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[name](model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    total = torch.zeros(())
    count = 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if clip_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        model.zero_grad(set_to_none=False)
        total += loss.detach() * targets.numel()
        count += targets.numel()
    if scheduler:
        scheduler.step()
    return (total / count).item()


@torch.inference_mode()
def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    logits = model(X.to(device))
    return loss_fn(logits, y.to(device)).item(), (logits.argmax(-1) == y.to(device)).double().mean().item()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    out = []
    for e in range(epochs):
        row = dict(epoch=e + 1, lr=optimizer.param_groups[0]["lr"])
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, clip_norm=clip_norm, device=device)
        if scheduler:
            scheduler.step()
        if val:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        out.append(row)
    return out
'''


def test_any_protocol_file_runs_and_matches(runner, lab, tmp_path):
    other = tmp_path / "other.py"
    other.write_text(ANOTHER_STYLE)
    result = runner.invoke(main, ["run", str(other), "--json", "--epochs", "12", "--lr", "1.0", "--scheduler", "step"])
    assert result.exit_code == 0, result.output
    mine = json.loads(result.output)
    ours = run_json(runner, "--epochs", "12", "--lr", "1.0", "--scheduler", "step")
    for a, b in zip(mine, ours, strict=True):
        assert a["lr"] == b["lr"]
        assert a["train_loss"] == pytest.approx(b["train_loss"], abs=1e-4)
        assert a["val_acc"] == pytest.approx(b["val_acc"], abs=1e-6)


def test_compare_runs_two_files_side_by_side(runner, lab, tmp_path):
    other = tmp_path / "other.py"
    other.write_text(ANOTHER_STYLE)
    result = runner.invoke(main, ["run", str(REFERENCE), "--compare", str(other), "--epochs", "2"])
    assert result.exit_code == 0, result.output
    assert "train loss A" in result.output and "train loss B" in result.output


def test_missing_function_exits_2_naming_it(runner, lab, tmp_path, reference_source):
    bad = tmp_path / "bad.py"
    bad.write_text(reference_source.replace("def evaluate(", "def evaluat("))
    result = runner.invoke(main, ["run", str(bad)])
    assert result.exit_code == 2
    assert "missing function evaluate" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, needle",
    [(["--lr", "-1"], "--lr"), (["--epochs", "0"], "--epochs"), (["--optimizer", "rmsprop"], "--optimizer"),
     (["--scheduler", "linear"], "--scheduler"), (["--device", "tpu"], "--device tpu")],
)
def test_bad_options_exit_2(runner, lab, args, needle):
    result = runner.invoke(main, ["run", str(REFERENCE), *args])
    assert result.exit_code == 2
    assert needle in result.output


def test_cuda_refused_clearly_without_cuda(runner, lab):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = runner.invoke(main, ["run", str(REFERENCE), "--device", "cuda"])
    assert result.exit_code == 2 and "CUDA is not available" in result.output


def test_loop_error_during_run_is_reported_without_our_traceback(runner, lab, tmp_path, reference_source):
    bad = tmp_path / "bad.py"
    bad.write_text(reference_source.replace("    return total_loss / n_seen", "    return total_loss / 0"))
    result = runner.invoke(main, ["run", str(bad), "--epochs", "1"])
    assert result.exit_code == 1
    assert "ZeroDivisionError" in result.output and "bad.py" in result.output
    assert "worker.py" not in result.output


def test_plot_writes_a_png(runner, lab, tmp_path):
    png = tmp_path / "loss.png"
    result = runner.invoke(main, ["run", str(REFERENCE), "--epochs", "3", "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_is_strict_even_when_the_loss_is_nan(runner, lab, tmp_path, reference_source):
    nan = tmp_path / "nan.py"
    nan.write_text(reference_source.replace("    return total_loss / n_seen", "    return float('nan')"))
    result = runner.invoke(main, ["run", str(nan), "--json", "--epochs", "2"])
    assert result.exit_code == 0, result.output

    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    rows = json.loads(result.output, parse_constant=refuse)
    assert [r["train_loss"] for r in rows] == [None, None]
    assert all(isinstance(r["val_loss"], float) for r in rows)


def test_sparkline_is_flat_below_print_precision():
    from checker.base.term import sparkline

    flat = [0.7520 + d for d in (0.00001, 0.00003, 0.0, 0.00002, 0.00004, 0.00003, 0.00004, 0.00001)]
    line = sparkline(flat)
    assert len(set(line)) == 1 and len(line) == len(flat)  # 0.7520 in every row draws no wiggle
    assert len(set(sparkline([0.7520, 0.7521, 0.7522]))) == 3  # a change the table shows is drawn
    assert sparkline([0.5, float("nan"), 0.5]).count("?") == 1


def test_a_frozen_loss_draws_a_flat_curve_in_kata_run(runner, lab, tmp_path):
    from checker.catalogue.mutants import mutant_source

    path = tmp_path / "frozen.py"
    path.write_text(mutant_source("backward-missing"))
    result = runner.invoke(main, ["run", str(path), "--epochs", "10"])
    assert result.exit_code == 0, result.output
    curve = next(line for line in result.output.splitlines() if line.startswith("train loss"))
    assert len(set(curve.split()[2])) == 1, curve


def test_help_says_the_data_comes_from_the_file(runner):
    text = runner.invoke(main, ["run", "--help"]).output
    assert "make_data" in text and "data is the lesson's" not in text.replace("\n", " ")


def test_steps_column_counts_optimizer_steps(runner, lab):
    result = runner.invoke(main, ["run", "--lesson", "--epochs", "2", "--batch-size", "8"])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "epoch" in line)
    assert header.split()[-1] == "steps"
    rows = [line.split() for line in result.output.splitlines() if line.split()[:1] in (["1"], ["2"])]
    assert [r[-1] for r in rows] == [str(math.ceil(150 / 8))] * 2


def test_lesson_or_path_one_of_the_two(runner):
    for args in (["run"], ["run", str(REFERENCE), "--lesson"], ["trace"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and "--lesson" in result.output, (args, result.output)


def test_trace_follows_batches_of_the_file(runner, lab):
    result = runner.invoke(main, ["trace", str(REFERENCE), "--examples", "10", "--batch-size", "4", "--json"])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.output)
    first = [b for b in trace["batches"] if b["epoch"] == 1]
    assert [b["shape"] for b in first] == [[4, 2], [4, 2], [2, 2]]  # 10 items at batch size 4: 4, 4, 2
    assert sorted(r for b in first for r in b["rows"]) == list(range(10)) and trace["steps"] == [3, 2 + 1]
    assert all(b["labels_kept"] for b in trace["batches"])
    text = runner.invoke(main, ["trace", str(REFERENCE)]).output
    assert "step() called 2 times" in text and "xb shape" in text


def test_trace_speaks_spanish(runner, lab):
    result = runner.invoke(main, ["trace", "--lesson", "--lang", "es"])
    assert result.exit_code == 0, result.output
    assert "época 1: 2 lotes, step() llamado 2 veces" in result.output and "forma de xb" in result.output
