# correct: each batch's running mean kept by a coroutine fed with send(), the optimizer picked from a table of classes, gradients cleared by setting .grad to None on a list of the parameters, evaluate in chunks of 37 under an ExitStack holding no_grad, folded with functools.reduce, the model built between get_rng_state and set_rng_state
"""Correct (blind try, 2026-12-05, session 2): a loop written around a coroutine: each batch is sent into a generator that owns the
running sums, functools.reduce folds evaluation chunks, and the optimizer is picked from a table."""
import functools
import operator
import random
from contextlib import ExitStack

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def seed_everything(seed=0):
    for fn in (random.seed, np.random.seed, torch.manual_seed):
        fn(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    x_tr, x_va, y_tr, y_va = (np.asarray(p) for p in parts)
    return (torch.from_numpy(x_tr.astype(np.float32)), torch.from_numpy(y_tr.astype(np.int64)),
            torch.from_numpy(x_va.astype(np.float32)), torch.from_numpy(y_va.astype(np.int64)))


def make_loader(X, y, batch_size=32, seed=0):
    gen = torch.Generator()
    gen.manual_seed(int(seed))
    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=gen)


def make_model(seed=0):
    state = torch.get_rng_state()
    torch.manual_seed(seed)
    try:
        layers = [nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)]
    finally:
        torch.set_rng_state(state)
    return nn.Sequential(*layers)


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        cls = OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}") from None
    return cls(params=list(model.parameters()), lr=lr)


def _accumulator():
    """Receives (loss, count) pairs; yields the running mean."""
    total, count = 0.0, 0
    while True:
        item = yield (total / count if count else float("nan"))
        if item is None:
            return
        value, n = item
        total += value * n
        count += n


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    acc = _accumulator()
    mean = next(acc)
    params = [p for p in model.parameters()]
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        for p in params:
            p.grad = None
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm=clip_norm)
        optimizer.step()
        mean = acc.send((float(loss.detach()), targets.shape[0]))
    acc.close()
    if scheduler is not None:
        scheduler.step()
    return mean


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    with ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        pieces = []
        for xs, ys in zip(torch.split(X, 37), torch.split(y, 37)):
            xs, ys = xs.to(device), ys.to(device)
            out = model(xs)
            pieces.append((loss_fn(out, ys).item() * len(ys), (out.argmax(-1) == ys).sum().item(), len(ys)))
    total, right, n = functools.reduce(lambda a, b: tuple(map(operator.add, a, b)), pieces, (0.0, 0, 0))
    return total / n, right / n


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    def one(epoch):
        row = {"epoch": epoch, "lr": optimizer.param_groups[0]["lr"]}
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        return row
    return [one(e) for e in range(1, epochs + 1)]


if __name__ == "__main__":
    seed_everything(0)
    Xt, yt, Xv, yv = make_data()
    m = make_model()
    hist = fit(m, make_optimizer(m, "adam", 0.01), make_loader(Xt, yt), nn.CrossEntropyLoss(), 100, val=(Xv, yv))
    for r in hist:
        print(r)
