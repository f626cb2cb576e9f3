"""06 exercise 6: the cosine runs on the global step instead of step - warmup.

Hint: it restarts at t = step - warmup
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, eta_min=0.0):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * step / total)) / 2
