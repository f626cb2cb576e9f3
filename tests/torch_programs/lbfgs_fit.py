"""A least-squares fit with optim.LBFGS and its closure-based step, in the style of PyTorch's
time-sequence-prediction example. Written for tensorlib's test suite; runs unchanged on
PyTorch and on tensorlib.
"""
import torch
from torch import nn

x = torch.linspace(-2, 2, 40).unsqueeze(1)
features = torch.cat([x, x ** 2, torch.sin(x)], dim=1)
target = 0.5 * x - 0.3 * x ** 2 + 1.5 * torch.sin(x) + 0.2
model = nn.Linear(3, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
    model.bias.fill_(0.0)
criterion = nn.MSELoss()
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3, history_size=10)


def closure():
    optimizer.zero_grad()
    loss = criterion(model(features), target)
    loss.backward()
    return loss


for step in range(6):
    loss = optimizer.step(closure)
    print(f"step {step}: loss {loss.item():.6e}")
print(
    "weights",
    " ".join(f"{v:.4f}" for v in model.weight.flatten().tolist()),
    f"bias {model.bias.item():.4f}",
)
