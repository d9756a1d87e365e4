# correct: gradients by torch.autograd.grad handed over through .grad, a BatchSampler loader, an itertools fit, chunked inference_mode evaluate
"""A correct loop in another style: gradients taken with torch.autograd.grad and handed to the
optimizer through .grad, a BatchSampler loader, an itertools-driven fit, a stacked evaluate."""
import itertools
import random

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=50, random_state=seed, stratify=y)
    as_x = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    as_y = lambda a: torch.as_tensor(a, dtype=torch.long)  # noqa: E731
    return as_x(Xa), as_y(ya), as_x(Xb), as_y(yb)


def make_loader(X, y, batch_size=32, seed=0):
    data = TensorDataset(X, y)
    sampler = BatchSampler(RandomSampler(data, generator=torch.Generator().manual_seed(seed)),
                           batch_size=batch_size, drop_last=False)
    return DataLoader(data, batch_sampler=sampler)


def make_model(seed=0):
    g = torch.random.fork_rng()
    with g:
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def make_optimizer(model, name="sgd", lr=0.1):
    return {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[name](model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    total, count = torch.zeros((), dtype=torch.float64), 0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        loss = loss_fn(model(xb), yb)
        grads = torch.autograd.grad(loss, params)
        for p, g in zip(params, grads):
            p.grad = g
        if clip_norm is not None:
            nn.utils.clip_grad_norm_(params, clip_norm)
        optimizer.step()
        for p in params:
            p.grad = None
        total += loss.detach().double() * len(yb)
        count += len(yb)
    if scheduler is not None:
        scheduler.step()
    return (total / count).item()


@torch.inference_mode()
def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    X, y = X.to(device), y.to(device)
    logits = torch.cat([model(chunk) for chunk in X.split(7)])
    return F.cross_entropy(logits, y).item(), (logits.argmax(-1) == y).float().mean().item()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    for epoch in itertools.count(1):
        if epoch > epochs:
            break
        lr = optimizer.param_groups[0]["lr"]
        row = {"epoch": epoch, "lr": lr,
               "train_loss": train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                         clip_norm=clip_norm, device=device)}
        if val is not None:
            row["val_loss"], row["val_acc"] = evaluate(model, *val, loss_fn, device=device)
        history.append(row)
    return history


if __name__ == "__main__":
    seed_everything(0)
    Xtr, ytr, Xva, yva = make_data()
    m = make_model()
    print(fit(m, make_optimizer(m, "adam", 0.01), make_loader(Xtr, ytr), nn.CrossEntropyLoss(), 100, val=(Xva, yva))[-1])
