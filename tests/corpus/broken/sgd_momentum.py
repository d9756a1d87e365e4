# expect: reference.make_optimizer
# fault: momentum=0.9 added to SGD (and nothing else)
"""Moons in a compact functional style, written from the protocol."""

import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_moons(200, noise=0.2, random_state=seed)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=50, stratify=y, random_state=seed)
    f, i = torch.float32, torch.int64
    return torch.as_tensor(Xa, dtype=f), torch.as_tensor(ya, dtype=i), torch.as_tensor(Xb, dtype=f), torch.as_tensor(yb, dtype=i)


def make_loader(X, y, batch_size=32, seed=0):
    return DataLoader(TensorDataset(X, y), batch_size, True, generator=torch.Generator().manual_seed(seed))


def make_model(seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)]
    return nn.Sequential(*layers)


def make_optimizer(model, name="sgd", lr=0.1):
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return OPTIMIZERS[name](model.parameters(), lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train()
    total = torch.zeros((), dtype=torch.float64)
    seen = 0
    for batch in loader:
        inputs, targets = (t.to(device) for t in batch)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        if clip_norm:
            torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], clip_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        total += loss.detach().double().cpu() * targets.numel()
        seen += targets.numel()
    if scheduler is not None:
        scheduler.step()
    return total.item() / seen


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.eval()
    no_grad = torch.no_grad()
    with no_grad:
        out = model(X.to(device))
        target = y.to(device)
        return loss_fn(out, target).item(), (out.argmax(1) == target).double().mean().item()


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    out = []
    for e in range(epochs):
        lr_now = optimizer.param_groups[0]["lr"]
        tl = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler, clip_norm=clip_norm, device=device)
        row = {"epoch": e + 1, "lr": lr_now, "train_loss": tl}
        if val:
            vl, va = evaluate(model, val[0], val[1], loss_fn, device=device)
            row.update(val_loss=vl, val_acc=va)
        out.append(row)
    return out
