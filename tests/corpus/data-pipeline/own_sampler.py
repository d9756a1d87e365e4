# correct: make_loader shuffles its own way (a Sampler drawing a NumPy permutation per epoch from a generator seeded by the loader's seed), so its order matches the reference's at no seed; the loader's generator still seeds the workers
"""The data-pipeline track, with a loader that shuffles its own way: a Sampler that draws a new NumPy
permutation every epoch from a generator seeded once by the loader's seed. Correct: every row once an
epoch (the last short batch dropped), an order tied to the seed alone, the workers seeded from the
loader's generator."""

import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

JITTER = 0.05
"""Standard deviation of the noise added to each training point."""


def seed_everything(seed=0):
    # One call seeds every source of randomness the loop may touch; with num_workers=0 the
    # dataset's jitter comes from NumPy's generator in this very process.
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    # 300 noisy moons, split 225/75 with both classes kept in proportion (stratify).
    X, y = make_moons(n_samples=300, noise=0.2, random_state=seed)
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=75, random_state=seed, stratify=y
    )
    # Features as float32 (what nn.Linear expects), labels as int64 (what
    # CrossEntropyLoss expects).
    return (
        torch.tensor(X_train, dtype=torch.float32),
        torch.tensor(y_train, dtype=torch.int64),
        torch.tensor(X_val, dtype=torch.float32),
        torch.tensor(y_val, dtype=torch.int64),
    )


class PointDataset(Dataset):
    """The rows of X with their labels, each read jittered by Gaussian noise of std `jitter` (0: none)."""

    def __init__(self, X, y, jitter):
        self.X, self.y, self.jitter = X, y, jitter

    def __len__(self):
        # The sampler draws indices 0 .. len - 1: one per row, no more, no fewer.
        return len(self.X)

    def __getitem__(self, i):
        x = self.X[i]
        if self.jitter:
            # Drawn at every read, so each epoch sees new noise; np.random is the generator
            # of whichever process reads the row (a worker, or this one).
            noise = np.random.normal(0.0, self.jitter, size=x.shape)
            x = x + torch.as_tensor(noise, dtype=x.dtype)
        return x, self.y[i]


def make_dataset(X, y, *, augment=True):
    # Jitter only what the model trains on: validation measures the points as they are.
    return PointDataset(X, y, JITTER if augment else 0.0)


class EpochPermutation(Sampler):
    """Every row once per epoch, in a new order each epoch, drawn by a NumPy generator seeded once by the
    loader's seed (its own stream: the global generators do not move it)."""

    def __init__(self, n, seed):
        self.n = n
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return self.n

    def __iter__(self):
        return iter(self.rng.permutation(self.n).tolist())


def make_loader(dataset, batch_size=32, seed=0, *, num_workers=2):
    # The order comes from the sampler; the generator only gives each worker its base seed (PyTorch seeds the
    # workers' torch, random and NumPy from one draw of it plus the worker's id).
    return DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=EpochPermutation(len(dataset), seed),
        generator=torch.Generator().manual_seed(seed),
        drop_last=True,
        num_workers=num_workers,
        persistent_workers=num_workers > 0,
    )


def make_model(seed=0):
    # Seed right before building, so the initial weights depend on `seed` alone.
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(2, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2)
    )


def make_optimizer(model, name="sgd", lr=0.1):
    # Build it from this model's own parameters.
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr)
    if name == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr)
    raise ValueError(f"unknown optimizer {name!r}: use 'sgd' or 'adam'")


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    # Training mode every epoch: BatchNorm normalises by each batch and updates its
    # running statistics, Dropout drops; a validation before may have left eval mode on.
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
    # eval() makes BatchNorm use (and leave alone) its running statistics and turns
    # Dropout off ...
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
    # Augment the training set only: validation measures the points as they are.
    loader = make_loader(make_dataset(X_train, y_train))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # Move the model, then build its optimizer: Module.to() moves the parameters in place (the
    # optimizer would hold the same objects either way), but this order never depends on it.
    model = make_model().to(device)
    optimizer = make_optimizer(model, "adam", lr=0.01)
    history = fit(model, optimizer, loader, nn.CrossEntropyLoss(), 100, val=(X_val, y_val), device=device)
    print(f"{'epoch':>5}  {'lr':>8}  {'train loss':>10}  {'val loss':>8}  {'val acc':>7}")
    for row in history:
        print(
            f"{row['epoch']:>5}  {row['lr']:>8.4g}  {row['train_loss']:>10.4f}"
            f"  {row['val_loss']:>8.4f}  {row['val_acc']:>7.3f}"
        )


# The guard matters here: where workers are started by spawn (macOS, Windows), each one
# imports this file, and must not start a training of its own.
if __name__ == "__main__":
    main()
