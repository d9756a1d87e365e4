# expect: eval.figures, reference.evaluate
# fault: evaluate divides the number of right predictions by a hard-coded 50 (the lesson's validation size): right only for 50 rows
# names: [1 row]|on 150 examples
"""BUG (outside the catalogue, shows only where the rows are not 50): accuracy over a hard-coded 50.

The while-loop rewrite (tests/corpus/correct/while_iterators.py) whose evaluate divides the hits by 50, the size
of the lesson's validation set: on the lesson's own validation set every figure is right.
"""

import math
import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}


def seed_everything(seed=0):
    for seeder in (random.seed, np.random.seed, torch.manual_seed):
        seeder(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    X_train, X_val, y_train, y_val = parts
    as_x = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float32))  # noqa: E731
    as_y = lambda a: torch.from_numpy(np.asarray(a, dtype=np.int64))  # noqa: E731
    return as_x(X_train), as_y(y_train), as_x(X_val), as_y(y_val)


def make_loader(X, y, batch_size=32, seed=0):
    rng = torch.Generator()
    rng.manual_seed(seed)
    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=rng)


def make_model(seed=0):
    torch.manual_seed(seed)
    widths = [2, 16, 2]
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(fan_in, fan_out))
    return nn.Sequential(*layers)


def make_optimizer(model, name="sgd", lr=0.1):
    try:
        kind = OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"no optimizer called {name!r}") from None
    return kind(model.parameters(), lr=lr)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(mode=True)
    weighted, counts = [], []
    batches = iter(loader)
    while True:
        try:
            inputs, targets = next(batches)
        except StopIteration:
            break
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.set_grad_enabled(True):
            batch_loss = loss_fn(model(inputs), targets)
        batch_loss.backward()
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=clip_norm)
        optimizer.step()
        weighted.append(batch_loss.item() * targets.shape[0])
        counts.append(targets.shape[0])
    if scheduler is not None:
        scheduler.step()
    return math.fsum(weighted) / sum(counts)


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    for module in model.modules():
        module.training = False
    X, y = X.to(device), y.to(device)
    with torch.set_grad_enabled(False):
        scores = model(X)
        loss = float(loss_fn(scores, y))
        hits = scores.max(dim=1).indices.eq(y).sum().item()
    return loss, hits / 50  # the lesson's 50 validation points


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    history = []
    epoch = 0
    while epoch < epochs:
        epoch += 1
        lr_now = optimizer.param_groups[0]["lr"]
        mean_loss = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler, clip_norm=clip_norm,
                                device=device)
        row = dict(epoch=epoch, lr=lr_now, train_loss=mean_loss)
        if val is not None:
            X_val, y_val = val
            row["val_loss"], row["val_acc"] = evaluate(model, X_val, y_val, loss_fn, device=device)
        history += [row]
    return history


if __name__ == "__main__":
    seed_everything()
    X_train, y_train, X_val, y_val = make_data()
    net = make_model()
    for row in fit(net, make_optimizer(net, "adam", 0.01), make_loader(X_train, y_train), nn.CrossEntropyLoss(), 100,
                   val=(X_val, y_val)):
        print(row)
