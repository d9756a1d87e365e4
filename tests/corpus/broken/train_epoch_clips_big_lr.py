# expect: reference.train_epoch
# fault: train_epoch clips the gradient norm to 1 by itself once the optimizer's lr is above 2.5 (issue 30, blind try): the lesson's lr 10 stops diverging
# names: an optimizer at lr=3|an optimizer at lr=10
"""Blind try (issue 30): train_epoch clips the gradient norm to 1 by itself when the optimizer's lr is above
2.5 and no clip_norm was asked, a "safety net" nobody asked for: the lesson's lr 10 no longer diverges as it
should, and every lr past 2.5 trains differently from the reference. The threshold sits in an object handed in
(the optimizer's own lr), not in a parameter of train_epoch.

The reference training loop of lesson 4: a small MLP learns the two moons.

Every kata is this file with one line broken. Read it top to bottom: each step
carries one short comment saying why the line is where it is.

Run it as a script to train the lesson's final setup (Adam, lr 0.01, 100 epochs,
validation after every epoch) and print the history as a table.
"""

import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def seed_everything(seed=0):
    # One call seeds every source of randomness the loop may touch.
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    # 200 noisy moons, split 150/50 with both classes halved evenly (stratify).
    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=50, random_state=seed, stratify=y
    )
    # Features as float32 (what nn.Linear expects), labels as int64 (what
    # CrossEntropyLoss expects).
    return (
        torch.tensor(X_train, dtype=torch.float32),
        torch.tensor(y_train, dtype=torch.int64),
        torch.tensor(X_val, dtype=torch.float32),
        torch.tensor(y_val, dtype=torch.int64),
    )


def make_loader(X, y, batch_size=32, seed=0):
    # A private, seeded generator: the order depends on `seed` alone, and
    # shuffle=True draws a new order every epoch.
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(
        TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=generator
    )


def make_model(seed=0):
    # Seed right before building, so the initial weights depend on `seed` alone.
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def make_optimizer(model, name="sgd", lr=0.1):
    # Build it from this model's own parameters, after the model is on its device.
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr)
    if name == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr)
    raise ValueError(f"unknown optimizer {name!r}: use 'sgd' or 'adam'")


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    # Training mode every epoch: a validation before may have left eval mode on.
    model.train()
    total_loss, n_seen = 0.0, 0
    for x, y in loader:
        # .to() returns a moved copy; it does not move the tensor in place.
        x, y = x.to(device), y.to(device)
        # Gradients add up across backward() calls: clear the last batch's first.
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, y)
        # backward() fills .grad with this batch's gradient.
        loss.backward()
        # Clip after backward (the gradients exist) and before step (they are used).
        if clip_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        elif optimizer.param_groups[0]["lr"] > 2.5:
            # a "safety net": large learning rates get their gradients clipped, unasked
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        # .item() keeps a plain number; the tensor would keep its whole graph alive.
        # Weighting by the batch size makes the epoch loss a mean over examples.
        total_loss += loss.item() * len(y)
        n_seen += len(y)
    # Schedules count epochs here: one step, after the epoch's last optimizer step.
    if scheduler is not None:
        scheduler.step()
    return total_loss / n_seen


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    # eval() switches dropout and batch norm to inference behaviour ...
    model.eval()
    X, y = X.to(device), y.to(device)
    # ... and no_grad() stops recording a graph nobody will backpropagate.
    with torch.no_grad():
        logits = model(X)
        loss = loss_fn(logits, y).item()
        # One prediction per row: the argmax over the class dimension.
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    return loss, accuracy


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    for epoch in range(1, epochs + 1):
        # Read the lr before training: it is the lr this epoch's steps will use.
        lr = optimizer.param_groups[0]["lr"]
        train_loss = train_epoch(
            model, loader, optimizer, loss_fn,
            scheduler=scheduler, clip_norm=clip_norm, device=device,
        )
        record = {"epoch": epoch, "lr": lr, "train_loss": train_loss}
        if val is not None:
            record["val_loss"], record["val_acc"] = evaluate(model, *val, loss_fn, device=device)
        history.append(record)
    return history


def main():
    seed_everything(0)
    X_train, y_train, X_val, y_val = make_data()
    loader = make_loader(X_train, y_train)
    model = make_model()
    optimizer = make_optimizer(model, "adam", lr=0.01)
    history = fit(model, optimizer, loader, nn.CrossEntropyLoss(), 100, val=(X_val, y_val))
    print(f"{'epoch':>5}  {'lr':>8}  {'train loss':>10}  {'val loss':>8}  {'val acc':>7}")
    for row in history:
        print(
            f"{row['epoch']:>5}  {row['lr']:>8.4g}  {row['train_loss']:>10.4f}"
            f"  {row['val_loss']:>8.4f}  {row['val_acc']:>7.3f}"
        )


if __name__ == "__main__":
    main()
