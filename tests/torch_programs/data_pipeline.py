"""A data pipeline with torch.utils.data: a Dataset of dicts, a TensorDataset, DataLoader with
batch_size, drop_last, a short last batch and a seeded shuffle, training a small regression MLP.
Written for tensorlib's test suite; runs unchanged on PyTorch and on tensorlib.

Weights come from a formula and the printed losses come from unshuffled loaders, so both
libraries print the same numbers (a shuffled epoch depends on the library's random generator:
only what does not depend on it is printed).
"""
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Squares(Dataset):
    """x in [-1, 1] and its square, as a dict per example."""

    def __init__(self, n):
        self.x = torch.linspace(-1, 1, n).unsqueeze(1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.x[i] ** 2}


train = Squares(72)
val_x = torch.linspace(-0.9, 0.9, 10).unsqueeze(1)
val = TensorDataset(val_x, val_x ** 2)
# 4 batches; the last 8 examples dropped
loader = DataLoader(train, batch_size=16, shuffle=False, drop_last=True)
val_loader = DataLoader(val, batch_size=4)  # batches of 4, 4 and 2
print(
    "batches per epoch:", len(loader), "| validation batch sizes:", [len(x) for x, _ in val_loader]
)

model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
with torch.no_grad():  # the same weights in any library
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 1.3 + i).reshape(p.shape) * 0.5
        )
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(6):
    total, count = 0.0, 0
    for batch in loader:
        loss = F.mse_loss(model(batch["x"]), batch["y"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total, count = total + loss.item() * len(batch["x"]), count + len(batch["x"])
    with torch.no_grad():
        val_loss = sum(
            F.mse_loss(model(x), y, reduction="sum").item() for x, y in val_loader
        ) / len(val)
    print(f"epoch {epoch}: train loss {total / count:.6f} val loss {val_loss:.6f}")

generator = torch.Generator().manual_seed(0)
shuffled = DataLoader(train, batch_size=16, shuffle=True, generator=generator)
seen = torch.cat([batch["x"][:, 0] for batch in shuffled])
print("shuffled epoch:", len(shuffled), "batches | every example once:",
      bool((seen.sort().values == train.x[:, 0]).all()))
