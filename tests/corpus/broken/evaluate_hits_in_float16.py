# expect: reference.evaluate
# fault: evaluate counts its right answers in float16 (sum(dtype=torch.float16)): exact up to 2048 right answers, rounded past it, so the accuracy is off only on sets where more than 2048 rows are right and the count is not a float16 number
# names: every one predicted right|every one but the last|on 10000 rows|on 20000 rows|above 4096
"""The hooked loop, with its right answers counted in float16: exact up to 2048 of them, rounded past it."""

import math
import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler


class Pairs(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.X[i], self.y[i]

    def __getitems__(self, indices):
        # one fancy-indexing call per batch instead of one call per row
        index = torch.as_tensor(indices)
        return [(self.X[index], self.y[index])]


class OwnOrder(Sampler):
    def __init__(self, n, seed):
        self.n = n
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self):
        return self.n

    def __iter__(self):
        yield from torch.randperm(self.n, generator=self.generator).tolist()


def _whole_batch(items):
    (pair,) = items
    return pair


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.random.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(X, y, test_size=50, random_state=seed, stratify=y)
    X_train, X_val, y_train, y_val = parts
    as_x = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    as_y = lambda a: torch.tensor(a, dtype=torch.int64)  # noqa: E731
    return as_x(X_train), as_y(y_train), as_x(X_val), as_y(y_val)


def make_loader(X, y, batch_size=32, seed=0):
    return DataLoader(Pairs(X, y), batch_size=batch_size, sampler=OwnOrder(len(y), seed),
                      collate_fn=_whole_batch)


def make_model(seed=0):
    torch.manual_seed(seed)
    widths = [2, 16, 2]
    layers = []
    for n_in, n_out in zip(widths, widths[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def make_optimizer(model, name="sgd", lr=0.1):
    kinds = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    if name not in kinds:
        raise ValueError(f"no optimizer called {name!r}")
    return kinds[name](model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    optimizer.zero_grad()
    handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: opt.zero_grad())
    parts = []
    try:
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            loss.backward()
            if clip_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)
            optimizer.step()
            parts.append((loss.item(), y.shape[0]))
    finally:
        handle.remove()
    if scheduler is not None:
        scheduler.step()
    return math.fsum(value * n for value, n in parts) / sum(n for _, n in parts)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    with torch.inference_mode(False), torch.no_grad():
        X, y = X.to(device), y.to(device)
        out = model(X)
        hits = torch.eq(out.argmax(-1), y).sum(dtype=torch.float16).item()  # half: a count in 2 bytes
        return float(loss_fn(out, y)), hits / y.numel()


def _records(model, optimizer, loader, loss_fn, epochs, scheduler, val, clip_norm, device):
    for epoch in range(1, epochs + 1):
        row = {"epoch": epoch, "lr": optimizer.param_groups[0]["lr"]}
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        yield row


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    return list(_records(model, optimizer, loader, loss_fn, epochs, scheduler, val, clip_norm, device))


if __name__ == "__main__":
    seed_everything(0)
    X_train, y_train, X_val, y_val = make_data()
    model = make_model()
    history = fit(model, make_optimizer(model, "adam", lr=0.01), make_loader(X_train, y_train),
                  nn.CrossEntropyLoss(), 100, val=(X_val, y_val))
    for row in history[-3:]:
        print(row)
