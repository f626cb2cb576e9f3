"""05 exercise 3: S̄ = P ⊙ P̄, forgetting the softmax's row-sum term.

Hint: dQ for T_q=3, T_k=3
"""

import numpy as np


def attention_backward(q, k, v, grad_out, scale):
    scores = scale * q @ k.T
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ds = p * (grad_out @ v.T)
    return scale * ds @ k, scale * ds.T @ q, p.T @ grad_out
