# expect: loader.order
# fault: make_loader seeds its generator with seed % 8 ("a few streams are plenty"): seeds 8 apart give one and the same order, so runs meant to differ repeat each other; any two seeds under 8 still differ
# names: differ only from bit 3 up
"""Broken (blind try, 2026-12-05): the loader keeps only the seed's last 3 bits, so seeds 8 apart collide."""
import random

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_moons(200, noise=0.2, random_state=seed)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    i = lambda a: torch.as_tensor(a, dtype=torch.long)  # noqa: E731
    return f(X_tr), i(y_tr), f(X_va), i(y_va)


def make_loader(X, y, batch_size=32, seed=0):
    g = torch.Generator()
    g.manual_seed(seed % 8)  # a few streams are plenty
    return DataLoader(TensorDataset(X, y), batch_size, True, generator=g)


def make_model(seed=0):
    torch.manual_seed(seed)
    hidden = nn.Linear(2, 16)
    out = nn.Linear(16, 2)
    return nn.Sequential(hidden, nn.ReLU(), out)


def make_optimizer(model, name="sgd", lr=0.1):
    table = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    if name not in table:
        raise ValueError(name)
    return table[name](model.parameters(), lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    params = list(model.parameters())

    def one_batch(batch):
        inputs, targets = (t.to(device) for t in batch)
        for p in params:
            p.grad = None
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm=clip_norm)
        optimizer.step()
        return float(loss.detach()) * targets.shape[0], targets.shape[0]

    sums, counts = zip(*map(one_batch, loader))
    if scheduler:
        scheduler.step()
    return sum(sums) / sum(counts)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    with torch.set_grad_enabled(False):
        X = X.to(device)
        y = y.to(device)
        scores = model(X)
        right = torch.eq(scores.max(dim=1).indices, y).sum().item()
        return loss_fn(scores, y).item(), right / y.shape[0]


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    rows = []
    for epoch in range(epochs):
        lr_now = optimizer.param_groups[0]["lr"]
        mean = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler, clip_norm=clip_norm,
                           device=device)
        row = dict(epoch=epoch + 1, lr=lr_now, train_loss=mean)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        rows.append(row)
    return rows


def main():
    seed_everything(0)
    X_tr, y_tr, X_va, y_va = make_data(0)
    model = make_model(0)
    opt = make_optimizer(model, "adam", 0.01)
    hist = fit(model, opt, make_loader(X_tr, y_tr, 32, 0), nn.CrossEntropyLoss(), 100, val=(X_va, y_va))
    print(hist[-1])


if __name__ == "__main__":
    main()
