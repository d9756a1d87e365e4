# correct: one optimizer parameter group per layer (same settings), set_grad_enabled(False) for evaluation, a namedtuple batch
"""Moons, with one optimizer param group per layer, set_grad_enabled for evaluation and a namedtuple batch."""
import random
from collections import namedtuple

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

Batch = namedtuple("Batch", "x y")


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=50, random_state=seed, stratify=y)
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    i = lambda a: torch.as_tensor(a, dtype=torch.long)  # noqa: E731
    return f(Xa), i(ya), f(Xb), i(yb)


def make_loader(X, y, batch_size=32, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=g)


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def make_optimizer(model, name="sgd", lr=0.1):
    groups = [{"params": list(layer.parameters())} for layer in model if any(True for _ in layer.parameters())]
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr)
    raise ValueError(f"unknown optimizer {name}")


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    seen, total = 0, 0.0
    for raw in loader:
        b = Batch(*(t.to(device) for t in raw))
        optimizer.zero_grad()
        loss = loss_fn(model(b.x), b.y)
        loss.backward()
        if clip_norm is not None:
            nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], clip_norm)
        optimizer.step()
        total += float(loss) * b.y.numel()
        seen += b.y.numel()
    if scheduler is not None:
        scheduler.step()
    return total / seen


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    with torch.set_grad_enabled(False):
        X, y = X.to(device), y.to(device)
        out = model(X)
        return loss_fn(out, y).item(), out.argmax(1).eq(y).float().mean().item()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    out = []
    for e in range(1, epochs + 1):
        lr = optimizer.param_groups[0]["lr"]
        tl = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler, clip_norm=clip_norm, device=device)
        row = {"epoch": e, "lr": lr, "train_loss": tl}
        if val is not None:
            vl, va = evaluate(model, val[0], val[1], loss_fn, device=device)
            row.update(val_loss=vl, val_acc=va)
        out.append(row)
    return out


if __name__ == "__main__":
    seed_everything(0)
    a, b, c, d = make_data()
    m = make_model()
    for r in fit(m, make_optimizer(m, "adam", 0.01), make_loader(a, b), nn.CrossEntropyLoss(), 100, val=(c, d)):
        print(r)
