"""04 exercise 4: takes every position, ignoring the stride.

Hint: The stride is ignored
"""

import numpy as np


def im2col(x, kernel_size, stride=(1, 1), padding=(0, 0)):
    kh, kw = kernel_size
    ph, pw = padding
    c = x.shape[0]
    xp = np.pad(x, ((0, 0), (ph, ph), (pw, pw)))
    h_out, w_out = xp.shape[1] - kh + 1, xp.shape[2] - kw + 1
    cols = np.empty((c, kh, kw, h_out, w_out), dtype=x.dtype)
    for u in range(kh):
        for v in range(kw):
            cols[:, u, v] = xp[:, u : u + h_out, v : v + w_out]
    return cols.reshape(c * kh * kw, h_out * w_out)
