"""A custom autograd.Function with ctx (save_for_backward, saved_tensors, needs_input_grad),
checked with gradcheck in float64 and used to fit a learnable activation. Written for
tensorlib's test suite; runs unchanged on PyTorch and on tensorlib.
"""
import torch
from torch import nn


class Swish(torch.autograd.Function):
    """x * sigmoid(beta * x), with its derivative written by hand."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s, beta)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s, beta = ctx.saved_tensors
        grad_x = grad_beta = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output * (s + beta * x * s * (1 - s))
        if ctx.needs_input_grad[1]:
            grad_beta = (grad_output * x * x * s * (1 - s)).sum().reshape(beta.shape)
        return grad_x, grad_beta


x64 = torch.linspace(-2, 2, 7, dtype=torch.float64).requires_grad_()
beta64 = torch.tensor([0.7], dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(Swish.apply, (x64, beta64)))
x = torch.linspace(-1, 1, 5, requires_grad=True)
Swish.apply(x, torch.tensor([1.0])).sum().backward()  # beta needs no gradient
print("dx:", " ".join(f"{v:.6f}" for v in x.grad.tolist()))


class SwishLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor([0.5]))

    def forward(self, x):
        return Swish.apply(x, self.beta)


model = nn.Sequential(nn.Linear(2, 8), SwishLayer(), nn.Linear(8, 1))
with torch.no_grad():  # the same weights in any library
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + i).reshape(p.shape) * 0.6
        )
inputs = torch.stack([torch.linspace(-1, 1, 32), torch.cos(torch.linspace(0, 3, 32))], dim=1)
targets = (inputs[:, :1] * inputs[:, 1:]).tanh()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(15):
    loss = ((model(inputs) - targets) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.6f} beta {model[1].beta.item():.6f}")
