# expect: reference.make_optimizer
# fault: make_optimizer caps the lr at 1 (a 'safety' clamp): the lesson's lr-10 exercise silently trains at 1; every decade below 1 matches
# names: sgd at lr=3|sgd at lr=10
"""BUG (outside the catalogue, shows only at lr > 1): make_optimizer caps the lr at 1.

Moons, written as a small pipeline of generators: batches are produced by a sampler object, the epoch's
loss is folded with math.fsum over per-example contributions, the optimizer is looked up by name in a table
of factories, and evaluation runs under torch.no_grad() entered through contextlib.ExitStack."""

import contextlib
import math
import random
from functools import partial

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def seed_everything(seed=0):
    for seeder in (random.seed, np.random.seed, torch.manual_seed):
        seeder(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    X_train, X_val, y_train, y_val = parts
    as_x = partial(torch.tensor, dtype=torch.float32)
    as_y = partial(torch.tensor, dtype=torch.int64)
    return as_x(X_train), as_y(y_train), as_x(X_val), as_y(y_val)


def make_loader(X, y, batch_size=32, seed=0):
    dataset = TensorDataset(X, y)
    sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(seed))
    return DataLoader(dataset, batch_sampler=BatchSampler(sampler, batch_size, drop_last=False))


def make_model(seed=0):
    torch.manual_seed(seed)
    widths = (2, 16, 2)
    first, second = nn.Linear(widths[0], widths[1]), nn.Linear(widths[1], widths[2])
    return nn.Sequential(first, nn.ReLU(), second)


_FACTORIES = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ValueError(f"no optimizer called {name!r}") from None
    # a "safety" cap someone added after a diverging run: no lr above 1
    return factory(params=list(model.parameters()), lr=min(lr, 1.0))


def _batches(loader, device):
    for inputs, targets in loader:
        yield inputs.to(device), targets.to(device)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    contributions, count = [], 0
    for inputs, targets in _batches(loader, device):
        for param in model.parameters():
            param.grad = None
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=clip_norm)
        optimizer.step()
        contributions.append(loss.item() * targets.shape[0])
        count += targets.shape[0]
    if scheduler is not None:
        scheduler.step()
    return math.fsum(contributions) / count


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        inputs, targets = X.to(device), y.to(device)
        scores = model(inputs)
        mean_loss = float(loss_fn(scores, targets))
        hits = (scores.argmax(1) == targets).sum().item()
    return mean_loss, hits / targets.shape[0]


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    rows = []
    for epoch in range(1, epochs + 1):
        row = {"epoch": epoch, "lr": optimizer.param_groups[0]["lr"]}
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        rows.append(row)
    return rows
