"""06 exercise 6: the cosine decays to 0 whatever eta_min is.

Hint: base_lr 0.0003, warmup 25, total 60
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, eta_min=0.0):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    return base_lr * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2
