"""06 exercise 6: the cosine runs on the global step instead of step - warmup.

Hint: it restarts at t = step - warmup
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, start_factor=0.01, eta_min=0.0):
    if step < warmup:
        return base_lr * (start_factor + (1 - start_factor) * step / warmup)
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * step / total)) / 2
