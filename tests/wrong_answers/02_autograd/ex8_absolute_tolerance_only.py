"""02 exercise 8: compares with atol only, so a 1% error in a large gradient passes.

Hint: not with atol alone
"""

import numpy as np


def check_gradient(fn, x, eps=1e-6, atol=1e-5, rtol=1e-3):
    leaf = tl.tensor(x, requires_grad=True)
    fn(leaf).backward()
    analytic = leaf.grad.numpy()
    numerical = np.zeros_like(x)

    probe = x.copy()
    for index in np.ndindex(x.shape):
        saved = probe[index]
        probe[index] = saved + eps
        up = fn(tl.tensor(probe)).item()
        probe[index] = saved - eps
        numerical[index] = (up - fn(tl.tensor(probe)).item()) / (2 * eps)
        probe[index] = saved
    excess = np.abs(analytic - numerical) / 0.1
    worst = np.unravel_index(int(np.argmax(excess)), x.shape) if x.size else ()
    return bool(np.all(excess <= 1.0)), tuple(int(i) for i in worst)
