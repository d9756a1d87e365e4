"""A news-topic classifier with an EmbeddingBag, in the style of PyTorch's text classification tutorial, on
synthetic token sequences (no download)."""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

VOCAB_SIZE = 200
NUM_CLASS = 4


class SyntheticNews(Dataset):
    """Token sequences of 5 to 20 tokens: each topic draws most of its tokens from its own quarter of the
    vocabulary, the rest from anywhere."""

    def __init__(self, n=400, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            label = int(torch.randint(0, NUM_CLASS, (1,), generator=g))
            length = int(torch.randint(5, 21, (1,), generator=g))
            own = torch.randint(0, VOCAB_SIZE // NUM_CLASS, (length,), generator=g) + label * VOCAB_SIZE // NUM_CLASS
            noise = torch.randint(0, VOCAB_SIZE, (length,), generator=g)
            keep = torch.rand(length, generator=g) < 0.7
            self.items.append((label, torch.where(keep, own, noise)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for label, tokens in batch:
        label_list.append(label)
        text_list.append(tokens)
        offsets.append(tokens.size(0))
    label = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text = torch.cat(text_list)
    return label, text, offsets


def make_loader(dataset, batch_size, seed):
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=collate_batch, generator=generator)


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size=VOCAB_SIZE, embed_dim=32, num_class=NUM_CLASS):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


def train(model, dataloader, optimizer, criterion, device, max_norm=0.1, log_interval=50):
    model.train()
    total_acc, total_count = 0, 0
    start_time = time.time()
    for idx, (label, text, offsets) in enumerate(dataloader):
        label, text, offsets = label.to(device), text.to(device), offsets.to(device)
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
        if idx % log_interval == 0 and idx > 0:
            elapsed = time.time() - start_time
            print(f"| {idx:5d}/{len(dataloader):5d} batches | accuracy {total_acc / total_count:8.3f} | {elapsed:.2f}s")
            total_acc, total_count = 0, 0
            start_time = time.time()


def evaluate(model, dataloader, criterion, device):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for label, text, offsets in dataloader:
            label, text, offsets = label.to(device), text.to(device), offsets.to(device)
            predicted_label = model(text, offsets)
            criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = make_loader(SyntheticNews(400, seed=0), batch_size=64, seed=0)
    valid_loader = make_loader(SyntheticNews(100, seed=1), batch_size=64, seed=1)
    model = TextClassificationModel().to(device)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    for epoch in range(1, 11):
        train(model, train_loader, optimizer, criterion, device)
        accu_val = evaluate(model, valid_loader, criterion, device)
        scheduler.step()
        print(f"| end of epoch {epoch:3d} | valid accuracy {accu_val:8.3f}")
