"""02 exercise 8: perturbs x itself and never restores it.

Hint: check_gradient must leave x unchanged
"""

import numpy as np


def check_gradient(fn, x, eps=1e-6, atol=1e-5, rtol=1e-3):
    leaf = tl.tensor(x, requires_grad=True)
    fn(leaf).backward()
    analytic = leaf.grad.numpy()
    numerical = np.zeros_like(x)

    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + eps
        up = fn(tl.tensor(x)).item()
        x[index] = saved - eps
        numerical[index] = (up - fn(tl.tensor(x)).item()) / (2 * eps)
    excess = np.abs(analytic - numerical) / (atol + rtol * np.abs(numerical))
    worst = np.unravel_index(int(np.argmax(excess)), x.shape) if x.size else ()
    return bool(np.all(excess <= 1.0)), tuple(int(i) for i in worst)
