# expect: clip.norm, reference.train_epoch, reference.fit
# fault: clipping skipped when clip_norm < 1 (a 'stall guard'): every norm that binds here is under 1, so no clip ever happens
# names: a clip norm that binds
"""BUG (outside the catalogue, shows only at clip norms under 1): the clip is skipped below 1.

Moons with an explicit sampler and a step helper; clipping is skipped when clip_norm < 1, as if small norms
were a mistake: every clip that binds on this problem is under 1.
"""
import random

import numpy as np
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def seed_everything(seed=0):
    for seeder in (random.seed, np.random.seed, torch.manual_seed):
        seeder(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    X_tr, X_va, y_tr, y_va = parts
    as_x = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float32))  # noqa: E731
    as_y = lambda a: torch.from_numpy(np.asarray(a, dtype=np.int64))  # noqa: E731
    return as_x(X_tr), as_y(y_tr), as_x(X_va), as_y(y_va)


def make_loader(X, y, batch_size=32, seed=0):
    data = TensorDataset(X, y)
    sampler = RandomSampler(data, generator=torch.Generator().manual_seed(seed))
    return DataLoader(data, batch_sampler=BatchSampler(sampler, batch_size=batch_size, drop_last=False))


def make_model(seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)]
    return nn.Sequential(*layers)


def make_optimizer(model, name="sgd", lr=0.1):
    table = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    if name not in table:
        raise ValueError(name)
    return table[name](model.parameters(), lr=lr)


def _step(model, batch, optimizer, loss_fn, clip_norm, device):
    inputs, targets = (t.to(device) for t in batch)
    loss = loss_fn(model(inputs), targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip_norm is not None and clip_norm >= 1.0:  # small norms would stall training
        torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=clip_norm)
    optimizer.step()
    return loss.detach() * targets.shape[0], targets.shape[0]


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    model.train(True)
    running = torch.zeros((), device=device)
    count = 0
    for batch in loader:
        summed, n = _step(model, batch, optimizer, loss_fn, clip_norm, device)
        running = running + summed
        count += n
    if scheduler:
        scheduler.step()
    return float(running) / count


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    model.train(False)
    with torch.no_grad():
        out = model(X.to(device))
        target = y.to(device)
        return float(loss_fn(out, target)), float((torch.argmax(out, 1) == target).sum()) / len(target)


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    rows = []
    for epoch in range(epochs):
        row = dict(epoch=epoch + 1, lr=float(optimizer.param_groups[0]["lr"]))
        row["train_loss"] = train_epoch(model, loader, optimizer, loss_fn, scheduler=scheduler,
                                        clip_norm=clip_norm, device=device)
        if val:
            row["val_loss"], row["val_acc"] = evaluate(model, val[0], val[1], loss_fn, device=device)
        rows.append(row)
    return rows


if __name__ == "__main__":
    seed_everything()
    Xt, yt, Xv, yv = make_data()
    net = make_model()
    for r in fit(net, make_optimizer(net, "adam", 0.01), make_loader(Xt, yt), nn.CrossEntropyLoss(), 100, val=(Xv, yv)):
        print(r)
