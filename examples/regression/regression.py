"""Disease progression regression on scikit-learn's bundled diabetes data: an MLP, MSE, a per-epoch StepLR,
and a Dataset read by 2 worker processes."""

import numpy as np
import torch
from sklearn.datasets import load_diabetes
from torch import nn
from torch.utils.data import DataLoader, Dataset


class DiabetesDataset(Dataset):
    """The 442 patients, features and target standardised with the training split's statistics."""

    def __init__(self, split="train"):
        X, y = load_diabetes(return_X_y=True)
        rng = np.random.default_rng(0)
        order = rng.permutation(len(X))
        cut = int(0.8 * len(X))
        train_idx = order[:cut]
        idx = train_idx if split == "train" else order[cut:]
        mean, std = X[train_idx].mean(0), X[train_idx].std(0)
        y_mean, y_std = y[train_idx].mean(), y[train_idx].std()
        self.features = ((X[idx] - mean) / std).astype(np.float32)
        self.targets = ((y[idx] - y_mean) / y_std).astype(np.float32)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return torch.from_numpy(self.features[i]), torch.tensor([self.targets[i]])


def make_loader(dataset, batch_size=32, seed=0):
    generator = torch.Generator()
    generator.manual_seed(seed)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=2, persistent_workers=True,
                      generator=generator)


def build_model():
    return nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 1))


def train_one_epoch(model, loader, optimizer, loss_fn, device, scheduler=None):
    model.train()
    total_loss, n_seen = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        preds = model(inputs)
        loss = loss_fn(preds, targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(targets)
        n_seen += len(targets)
    if scheduler is not None:
        scheduler.step()
    return total_loss / n_seen


@torch.no_grad()
def validate(model, loader, loss_fn, device):
    model.eval()
    total, n = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        total += loss_fn(model(inputs), targets).item() * len(targets)
        n += len(targets)
    return total / n


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_loader = make_loader(DiabetesDataset("train"), batch_size=32, seed=0)
    val_loader = make_loader(DiabetesDataset("val"), batch_size=64, seed=1)
    model = build_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(1, 31):
        train_loss = train_one_epoch(model, train_loader, optimizer, nn.MSELoss(), device, scheduler)
        val_loss = validate(model, val_loader, nn.MSELoss(), device)
        print(f"epoch {epoch:2d}  train {train_loss:.3f}  val {val_loss:.3f}")
