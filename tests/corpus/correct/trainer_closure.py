# correct: a Trainer class; step(closure) with zero_grad, forward, backward and clipping inside the closure; p.grad = None; a while loop over iter(loader); evaluation in chunks under inference_mode; a running mean of the epoch loss
"""Moons, written from the protocol in an object style: a Trainer holds the loop's state."""

import math
import random

import numpy
import torch
import torch.nn.functional as F  # noqa: F401  (a habit; the loss always comes from loss_fn)
from sklearn import datasets, model_selection
from torch import nn, optim
from torch.utils import data as tud


def seed_everything(seed=0):
    for seeder in (random.seed, numpy.random.seed, torch.manual_seed):
        seeder(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def make_data(seed=0):
    features, labels = datasets.make_moons(n_samples=200, noise=0.2, random_state=seed)
    parts = model_selection.train_test_split(features, labels, test_size=50, random_state=seed, stratify=labels)
    x_tr, x_va, y_tr, y_va = (numpy.asarray(p) for p in parts)
    return (torch.from_numpy(x_tr).float(), torch.from_numpy(y_tr).long(),
            torch.from_numpy(x_va).float(), torch.from_numpy(y_va).long())


def make_loader(X, y, batch_size=32, seed=0):
    gen = torch.Generator()
    gen.manual_seed(seed)
    sampler = tud.RandomSampler(range(len(X)), generator=gen)
    return tud.DataLoader(tud.TensorDataset(X, y), batch_size=batch_size, sampler=sampler)


class MoonNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def make_model(seed=0):
    torch.random.manual_seed(seed)
    return MoonNet()


def make_optimizer(model, name="sgd", lr=0.1):
    builders = {"sgd": optim.SGD, "adam": optim.Adam}
    if name not in builders:
        raise ValueError(f"no optimizer called {name}")
    return builders[name](params=model.parameters(), lr=lr)


class Trainer:
    def __init__(self, model, optimizer, loss_fn, device, clip_norm=None):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.device, self.clip_norm = device, clip_norm

    def _clear(self):
        for p in self.model.parameters():
            p.grad = None

    def step(self, xb, yb):
        def closure():
            self._clear()
            loss = self.loss_fn(self.model(xb), yb)
            loss.backward()
            if self.clip_norm is not None:
                nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.clip_norm)
            return loss

        loss = self.optimizer.step(closure)
        return float(loss.detach())

    def epoch(self, loader):
        self.model.train(True)
        mean, count = 0.0, 0
        batches = iter(loader)
        while True:
            try:
                xb, yb = next(batches)
            except StopIteration:
                break
            xb, yb = xb.to(self.device), yb.to(self.device)
            value = self.step(xb, yb)
            count += yb.shape[0]
            mean += (value - mean) * yb.shape[0] / count
        return mean

    @torch.inference_mode()
    def score(self, X, y, chunk=16):
        self.model.eval()
        loss_sum, right = 0.0, 0
        for start in range(0, len(X), chunk):
            xb = X[start:start + chunk].to(self.device)
            yb = y[start:start + chunk].to(self.device)
            out = self.model(xb)
            loss_sum += self.loss_fn(out, yb).item() * len(yb)
            right += int((out.argmax(-1) == yb).sum())
        return loss_sum / len(X), right / len(X)


def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
    result = Trainer(model, optimizer, loss_fn, device, clip_norm).epoch(loader)
    if scheduler:
        scheduler.step()
    return result


def evaluate(model, X, y, loss_fn, *, device="cpu"):
    return Trainer(model, None, loss_fn, device).score(X, y)


def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, clip_norm=None, device="cpu"):
    trainer = Trainer(model, optimizer, loss_fn, device, clip_norm)
    rows = []
    epoch = 0
    while epoch < epochs:
        epoch += 1
        row = dict(epoch=epoch, lr=float(optimizer.param_groups[0]["lr"]))
        row["train_loss"] = trainer.epoch(loader)
        if scheduler is not None:
            scheduler.step()
        if val is not None:
            row["val_loss"], row["val_acc"] = trainer.score(*val)
        rows.append(row)
    return rows


if __name__ == "__main__":
    seed_everything(0)
    X_tr, y_tr, X_va, y_va = make_data()
    net = make_model()
    history = fit(net, make_optimizer(net, "adam", 0.01), make_loader(X_tr, y_tr), nn.CrossEntropyLoss(), 100,
                  val=(X_va, y_va))
    print(history[-1], math.isfinite(history[-1]["train_loss"]))
