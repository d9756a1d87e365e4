# correct: a DataLoader with batch_size=None over a sampler of index lists (TensorDataset indexed once a batch), the model built inside fork_rng, the epoch as functools.reduce, gradients set to None by hand, evaluation under set_grad_enabled(False) (issue 30, this session's blind try)
"""A correct loop in a style no other corpus file uses: the loader's sampler yields whole batches of indices
(a DataLoader with ``batch_size=None`` and a sampler of index lists, so TensorDataset is indexed once per
batch), the model is built inside ``torch.random.fork_rng`` (its weights depend on the seed alone and the global
generator is left as it was), the epoch is a ``functools.reduce`` over the batches, gradients are cleared by
setting them to None by hand, evaluation runs under ``torch.set_grad_enabled(False)`` with ``train(False)``, and
``fit`` counts its epochs with ``itertools``."""

import functools
import itertools
import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def seed_everything(seed=0):
    for seed_one in (random.seed, np.random.seed, torch.manual_seed):
        seed_one(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    kinds = (torch.float32, torch.float32, torch.int64, torch.int64)
    X_train, X_val, y_train, y_val = (torch.as_tensor(p, dtype=k) for p, k in zip(parts, kinds))
    return X_train, y_train, X_val, y_val


class IndexBatches(Sampler):
    """Each epoch, one permutation from the sampler's own generator, cut into lists of indices."""

    def __init__(self, n, batch_size, seed):
        self.n, self.batch_size = n, batch_size
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self):
        order = torch.randperm(self.n, generator=self.generator).tolist()
        for start in range(0, self.n, self.batch_size):
            yield order[start:start + self.batch_size]

    def __len__(self):
        return -(-self.n // self.batch_size)


def make_loader(X, y, batch_size=32, seed=0):
    return DataLoader(TensorDataset(X, y), batch_size=None, sampler=IndexBatches(len(y), batch_size, seed))


def make_model(seed=0):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        kind = OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}") from None
    return kind(model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    params = [p for group in optimizer.param_groups for p in group["params"]]

    def one_batch(totals, batch):
        x, y = (t.to(device) for t in batch)
        for p in params:
            p.grad = None
        loss = loss_fn(model(x), y)
        loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm=clip_norm)
        optimizer.step()
        return totals[0] + loss.item() * y.shape[0], totals[1] + y.shape[0]

    total, seen = functools.reduce(one_batch, loader, (0.0, 0))
    if scheduler is not None:
        scheduler.step()
    return total / seen


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    with torch.set_grad_enabled(False):
        X, y = X.to(device), y.to(device)
        logits = model(X)
        hits = torch.eq(torch.argmax(logits, 1), y).sum().item()
        return loss_fn(logits, y).item(), hits / y.numel()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    for epoch in itertools.islice(itertools.count(1), epochs):
        row = dict(epoch=epoch, lr=optimizer.param_groups[0]["lr"])
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        history.append(row)
    return history
