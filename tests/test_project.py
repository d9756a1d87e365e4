"""The trusted runner (kata.check_loop) on small loops written as projects write them: a correct one passes every
check, each fault fails the check that names it at the line where it was observed, bad pieces get one line."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import kata  # noqa: E402
from kata import ProjectInputError, Status  # noqa: E402


def blobs(n=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    X = torch.randn(n, 2, generator=g) + 4.0 * y[:, None].float()
    return X, y


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(16, 2))


def make_loader(dataset, batch_size, seed):
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                       generator=torch.Generator().manual_seed(seed))


def train(model, loader, optimizer, loss_fn, device, scheduler=None, clip_norm=None):
    model.train()
    total, seen = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        total += loss.item() * len(y)
        seen += len(y)
    if scheduler is not None:
        scheduler.step()
    return total / seen


@torch.no_grad()
def evaluate(model, loader, loss_fn, device):
    model.eval()
    return sum(loss_fn(model(x.to(device)), y.to(device)).item() for x, y in loader)


def pieces(**changes):
    base = dict(model=make_model, data=blobs(), loader=make_loader, loss_fn=torch.nn.CrossEntropyLoss(),
                optimizer=lambda model: torch.optim.SGD(model.parameters(), lr=0.5),
                scheduler=lambda optimizer: torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.9),
                train=train, evaluate=evaluate, clip_norm=0.05)
    base.update(changes)
    return base


def line_of(fn, marker: str) -> int:
    """The line of ``fn`` holding ``marker`` (the test knows where each fault is; kata never reads it)."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if marker in text)


def test_a_correct_loop_passes_every_check():
    report = kata.check_loop(**pieces())
    assert report.ok, report.render("en")
    assert not report.not_run, report.render("en")
    report.assert_ok()


# ---------------------------------------------------------------------------- faults, each at its line


def train_no_zero_grad(model, loader, optimizer, loss_fn, device):
    model.train()
    for x, y in loader:
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()  # <- fault


def train_scheduler_per_batch(model, loader, optimizer, loss_fn, device, scheduler):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x.to(device)), y.to(device)).backward()
        optimizer.step()
        scheduler.step()  # <- fault


def train_keeps_loss(model, loader, optimizer, loss_fn, device):
    model.train()
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()  # <- fault
        optimizer.step()
        total += loss
    return total / len(loader)


def train_not_moved(model, loader, optimizer, loss_fn, device):
    model.train()
    for x, y in loader:
        x.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y.to(device))  # <- fault
        loss.backward()
        optimizer.step()


def evaluate_with_graph(model, loader, loss_fn, device):
    model.eval()
    return sum(loss_fn(model(x.to(device)), y.to(device)).detach() for x, y in loader)  # <- fault


def train_clip_after_step(model, loader, optimizer, loss_fn, device, clip_norm):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x.to(device)), y.to(device)).backward()
        optimizer.step()  # <- fault
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)


def train_batch_mean(model, loader, optimizer, loss_fn, device):
    model.train()
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def unseeded_loader(dataset, batch_size, seed):
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True)  # <- fault


FAULTS = [
    ("steps.fresh_grads", dict(train=train_no_zero_grad), train_no_zero_grad, "gradients of 2 batches"),
    ("schedule.step", dict(train=train_scheduler_per_batch), train_scheduler_per_batch, "ran 4 times"),
    ("memory.graphs", dict(train=train_keeps_loss), train_keeps_loss, "still alive"),
    ("device.moved", dict(train=train_not_moved), train_not_moved, "without .to(device)"),
    ("modes.eval", dict(evaluate=evaluate_with_graph), evaluate_with_graph, "autograd graph"),
    ("clip.norm", dict(train=train_clip_after_step), train_clip_after_step, "above clip_norm=0.05"),
    ("loss.epoch_mean", dict(train=train_batch_mean), None, "mean over examples"),
    ("loader.order", dict(loader=unseeded_loader), unseeded_loader, "two different orders"),
]


@pytest.mark.parametrize(("check", "changes", "where", "words"), FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_fails_its_check_at_its_line(check, changes, where, words):
    report = kata.check_loop(**pieces(**changes))
    result = report[check]
    assert result.status is Status.FAILED, report.render("en")
    assert words in result.text("en")
    assert Path(result.place.path).name == "test_project.py"
    fn = changes.get("train") or changes.get("evaluate") or changes.get("loader")
    expected = line_of(where, "# <- fault") if where is not None else inspect.getsourcelines(fn)[1]
    assert result.place.line == expected, result.line()
    assert result.line("en").startswith(f"{result.place.path}:{expected}: {check}: ")
    with pytest.raises(kata.LoopCheckFailed, match=check.replace(".", r"\.")):
        report.assert_ok()
    assert result.text("es") != result.text("en")


# ---------------------------------------------------------------------------- what a project need not give


def test_checks_needing_a_missing_piece_are_listed_as_not_run_saying_what_to_pass():
    def bare(model, loader, optimizer, device):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
            optimizer.step()

    report = kata.check_loop(model=make_model, data=blobs(), train=bare,
                             optimizer=lambda opt_model=None, model=None: torch.optim.SGD(model.parameters(), lr=0.5))
    assert report.ok, report.render("en")
    not_run = {r.id: r.text("en") for r in report.not_run}
    assert set(not_run) == {"modes.eval", "schedule.step", "clip.norm", "loss.epoch_mean", "loader.coverage",
                            "loader.order"}
    assert "evaluate=" in not_run["modes.eval"] and "loader=" in not_run["loader.order"]
    assert "not run loader.order: pass loader=" in report.render("en")


# ---------------------------------------------------------------------------- bad pieces: one clear line


def test_a_parameter_kata_cannot_bind_is_named():
    def train_args(args, model, loader, optimizer):
        pass

    with pytest.raises(ProjectInputError) as info:
        kata.check_loop(**pieces(train=train_args))
    assert "'args'" in str(info.value) and "bind={'args': ...}" in str(info.value)
    assert info.value.exit_code == 2


def test_data_of_the_wrong_shape_says_where_the_project_raised():
    X, y = blobs()
    with pytest.raises(ProjectInputError) as info:
        kata.check_loop(**pieces(data=(torch.randn(60, 3), y)))
    text = str(info.value)
    assert "RuntimeError" in text and "test_project.py:" in text and "train() raised" in text
    with pytest.raises(ProjectInputError, match="same first dimension"):
        kata.check_loop(**pieces(data=(X, y[:10])))
    with pytest.raises(ProjectInputError, match="must be a torch Dataset"):
        kata.check_loop(**pieces(data="mnist"))


def test_bound_extras_reach_the_function():
    seen = []

    def train_args(args, model, loader, optimizer, loss_fn):
        seen.append(args)
        return train(model, loader, optimizer, loss_fn, "cpu")

    report = kata.check_loop(**pieces(train=train_args, scheduler=None, clip_norm=None, bind={"args": "A"}))
    assert report.ok and seen and set(seen) == {"A"}
