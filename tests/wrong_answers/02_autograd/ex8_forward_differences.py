"""02 exercise 8: uses forward differences, off by eps on a quadratic.

Hint: forward differences (f(x + eps) - f(x)) / eps are off by eps
"""

import numpy as np


def check_gradient(fn, x, eps=1e-6, atol=1e-5, rtol=1e-3):
    leaf = tl.tensor(x, requires_grad=True)
    fn(leaf).backward()
    analytic = leaf.grad.numpy()
    numerical = np.zeros_like(x)

    probe = x.copy()
    base = fn(tl.tensor(probe)).item()
    for index in np.ndindex(x.shape):
        saved = probe[index]
        probe[index] = saved + eps
        numerical[index] = (fn(tl.tensor(probe)).item() - base) / eps
        probe[index] = saved
    excess = np.abs(analytic - numerical) / (atol + rtol * np.abs(numerical))
    worst = np.unravel_index(int(np.argmax(excess)), x.shape) if x.size else ()
    return bool(np.all(excess <= 1.0)), tuple(int(i) for i in worst)
