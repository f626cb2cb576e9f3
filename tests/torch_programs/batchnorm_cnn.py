"""A small convolutional classifier with BatchNorm2d and BatchNorm1d: batch statistics in
training, running averages in evaluation. Written for tensorlib's test suite; runs unchanged
on PyTorch and on tensorlib.
"""
import torch
from torch import nn
from torch.nn import functional as F

n = 24
grid = torch.arange(n * 64, dtype=torch.float32).reshape(n, 1, 8, 8)
images = torch.sin(grid * 0.05) + torch.cos(grid * 0.011) * (
    torch.arange(n, dtype=torch.float32) % 3
).reshape(n, 1, 1, 1)
labels = torch.arange(n) % 3

model = nn.Sequential(
    nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
with torch.no_grad():  # the same weights in any library
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + i).reshape(p.shape)
            * 0.4
        )
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(12):
    batch = slice((step % 3) * 8, (step % 3) * 8 + 8)
    loss = F.cross_entropy(model(images[batch]), labels[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: train loss {loss.item():.6f}")
bn = model[1]
print(
    f"running mean {bn.running_mean.sum().item():.6f} running var "
    f"{bn.running_var.sum().item():.6f} "
    f"batches tracked {int(bn.num_batches_tracked)}"
)
model.eval()
with torch.no_grad():
    logits = model(images)
print(
    f"eval loss {F.cross_entropy(logits, labels).item():.6f} accuracy "
    f"{(logits.argmax(1) == labels).float().mean().item():.6f}"
)
