# correct: StackDataset, a ModuleList model with itertools.pairwise, a table of functools.partial factories, a weighted statistics.fmean for the epoch loss, evaluation under torch.set_grad_enabled(False), a fit driven by itertools.count
"""Moons, written the way a statistics person might: StackDataset, a ModuleList model, a factory
table of partials, weighted statistics.fmean for the epoch loss, set_grad_enabled(False) for eval."""

import contextlib
import functools
import itertools
import random
import statistics

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, StackDataset


def seed_everything(seed=0):
    for seeder in (random.seed, np.random.seed, torch.manual_seed):
        seeder(seed)
    with contextlib.suppress(Exception):
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    train_x, val_x, train_y, val_y = train_test_split(
        features, labels, train_size=150, random_state=seed, stratify=labels)
    as_x = lambda a: torch.from_numpy(np.ascontiguousarray(a)).float()  # noqa: E731
    as_y = lambda a: torch.from_numpy(np.ascontiguousarray(a)).long()  # noqa: E731
    return as_x(train_x), as_y(train_y), as_x(val_x), as_y(val_y)


def make_loader(X, y, batch_size=32, seed=0):
    rng = torch.Generator()
    rng.manual_seed(seed)
    return DataLoader(StackDataset(X, y), batch_size=batch_size, shuffle=True, generator=rng)


class TwoLayer(nn.Module):
    def __init__(self, sizes=(2, 16, 2)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))

    def forward(self, x):
        *hidden, last = self.layers
        for layer in hidden:
            x = F.relu(layer(x))
        return last(x)


def make_model(seed=0):
    torch.manual_seed(seed)
    return TwoLayer()


OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        factory = functools.partial(OPTIMIZERS[name], lr=lr)
    except KeyError:
        raise ValueError(f"no optimizer called {name!r}") from None
    return factory(model.parameters())


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    means, sizes = [], []
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        optimizer.zero_grad(set_to_none=True)
        batch_loss = loss_fn(model(xb), yb)
        batch_loss.backward()
        if clip_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)
        optimizer.step()
        means.append(batch_loss.item())
        sizes.append(yb.shape[0])
    if scheduler is not None:
        scheduler.step()
    return statistics.fmean(means, weights=sizes)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    with torch.set_grad_enabled(False):
        inputs, targets = X.to(device), y.to(device)
        scores = model(inputs)
        hits = torch.eq(scores.argmax(dim=-1), targets).sum().item()
        return loss_fn(scores, targets).item(), hits / targets.numel()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    for epoch in itertools.count(1):
        if epoch > epochs:
            break
        row = dict(epoch=epoch, lr=optimizer.param_groups[0]["lr"])
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        history.append(row)
    return history


if __name__ == "__main__":
    seed_everything()
    Xt, yt, Xv, yv = make_data()
    net = make_model()
    for r in fit(net, make_optimizer(net, "adam", 0.01), make_loader(Xt, yt), nn.CrossEntropyLoss(), 100, val=(Xv, yv)):
        print(r)
