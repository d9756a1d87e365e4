# correct: a list of (x, y) pairs as the dataset; an OrderedDict Sequential with named layers; an optimizer table with a KeyError turned into ValueError; zero_grad(set_to_none=True) between the forward pass and backward; math.fsum of weighted batch losses; train(False) and set_grad_enabled(False) for evaluation; a while loop in fit
"""Two moons, written as one might after reading the torch docs cover to cover: named layers, a dataset that is
just a list of pairs, an optimizer table, and gradients cleared between the forward and the backward pass."""

import math
import random
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def seed_everything(seed=0):
    for seeder in (random.seed, np.random.seed, torch.manual_seed):
        seeder(seed)


def make_data(seed=0):
    features, labels = make_moons(200, noise=0.2, random_state=seed)
    X_tr, X_va, y_tr, y_va = train_test_split(features, labels, test_size=0.25, stratify=labels, random_state=seed)
    as_x = lambda a: torch.from_numpy(np.ascontiguousarray(a)).float()  # noqa: E731
    as_y = lambda a: torch.from_numpy(np.ascontiguousarray(a)).long()  # noqa: E731
    return as_x(X_tr), as_y(y_tr), as_x(X_va), as_y(y_va)


def make_loader(X, y, batch_size=32, seed=0):
    pairs = list(zip(X, y))
    order = torch.Generator()
    order.manual_seed(seed)
    return torch.utils.data.DataLoader(pairs, batch_size=batch_size, shuffle=True, generator=order)


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(OrderedDict(hidden=nn.Linear(2, 16), act=nn.ReLU(), out=nn.Linear(16, 2)))


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        kind = OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"no optimizer called {name!r}") from None
    return kind(model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    weighted, sizes = [], []
    for xb, yb in loader:
        xb = xb.to(device)
        yb = yb.to(device)
        loss = loss_fn(model(xb), yb)
        optimizer.zero_grad(set_to_none=True)  # after the forward pass, still before backward
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=clip_norm)
        optimizer.step()
        weighted.append(loss.item() * yb.shape[0])
        sizes.append(yb.shape[0])
    if scheduler is not None:
        scheduler.step()
    return math.fsum(weighted) / sum(sizes)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    X, y = X.to(device), y.to(device)
    with torch.set_grad_enabled(False):
        out = model(X)
        loss = float(loss_fn(out, y))
        right = int((out.max(dim=1).indices == y).sum())
    return loss, right / y.numel()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    epoch = 0
    while epoch < epochs:
        epoch += 1
        row = {"epoch": epoch, "lr": optimizer.param_groups[0]["lr"]}
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        history.append(row)
    return history


if __name__ == "__main__":
    seed_everything()
    X, y, Xv, yv = make_data()
    model = make_model()
    rows = fit(model, make_optimizer(model, "adam", 0.01), make_loader(X, y), nn.CrossEntropyLoss(), 100, val=(Xv, yv))
    print(rows[-1])
