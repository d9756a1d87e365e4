# fault: best_epoch breaks ties toward the latest epoch; the protocol counts the first
"""Three classes, written as a small Trainer; the best weights are kept as torch.save bytes."""
import io
import random

import numpy as np
import torch
from sklearn.datasets import make_blobs
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    X, y = make_blobs(n_samples=300, centers=3, random_state=seed)
    parts = train_test_split(X, y, test_size=60, random_state=seed, stratify=y)
    X_tr, X_va, y_tr, y_va = parts
    f = lambda a: torch.from_numpy(a).float()  # noqa: E731
    i = lambda a: torch.from_numpy(a).long()  # noqa: E731
    return f(X_tr), i(y_tr), f(X_va), i(y_va)


def make_loader(X, y, batch_size=32, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=g)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def make_model(seed=0):
    torch.manual_seed(seed)
    return MLP()


def make_optimizer(model, name="sgd", lr=0.1):
    if name == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr)
    return torch.optim.SGD(model.parameters(), lr=lr)


class Trainer:
    def __init__(self, model, optimizer, loss_fn, device="cpu", clip_norm=None):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.device, self.clip_norm = device, clip_norm

    def step(self, xb, yb):
        self.optimizer.zero_grad(set_to_none=False)
        loss = self.loss_fn(self.model(xb), yb)
        loss.backward()
        if self.clip_norm is not None:
            nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.clip_norm)
        self.optimizer.step()
        return loss.item() * len(yb)

    def epoch(self, loader, scheduler=None):
        self.model.train()
        seen = total = 0
        for xb, yb in loader:
            total += self.step(xb.to(self.device), yb.to(self.device))
            seen += len(yb)
        if scheduler is not None:
            scheduler.step()
        return total / seen

    @torch.no_grad()
    def score(self, X, y):
        self.model.eval()
        logits = self.model(X.to(self.device))
        y = y.to(self.device)
        return nn.functional.cross_entropy(logits, y).item(), (logits.argmax(1) == y).double().mean().item()


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    return Trainer(model, optimizer, loss_fn, device, clip_norm).epoch(loader, scheduler)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    return Trainer(model, None, loss_fn, device).score(X, y)


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    trainer, rows = Trainer(model, optimizer, loss_fn, device, clip_norm), []
    while len(rows) < epochs:
        row = {"epoch": len(rows) + 1, "lr": optimizer.param_groups[0]["lr"]}
        row["train_loss"] = trainer.epoch(loader, scheduler)
        if val is not None:
            row["val_loss"], row["val_acc"] = trainer.score(*val)
        rows.append(row)
    return rows


def best_epoch(history):
    # the latest of equally good epochs (it trained longest)
    return min(history, key=lambda r: (r["val_loss"], -r["epoch"]))["epoch"]


def fit_best(model, optimizer, loader, loss_fn, epochs, *, val, scheduler=None, clip_norm=None, device="cpu"):
    trainer, rows, kept, low = Trainer(model, optimizer, loss_fn, device, clip_norm), [], None, float("inf")
    for epoch in range(1, epochs + 1):
        row = {"epoch": epoch, "lr": optimizer.param_groups[0]["lr"], "train_loss": trainer.epoch(loader, scheduler)}
        row["val_loss"], row["val_acc"] = trainer.score(*val)
        rows.append(row)
        if row["val_loss"] < low:
            low, kept = row["val_loss"], io.BytesIO()
            torch.save(model.state_dict(), kept)
    kept.seek(0)
    model.load_state_dict(torch.load(kept))
    return rows, best_epoch(rows)
