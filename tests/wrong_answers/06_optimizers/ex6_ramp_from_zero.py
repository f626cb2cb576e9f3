"""06 exercise 6: the warmup ramps from 0 instead of start_factor * base_lr.

Hint: at step 0 (during warmup)
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, start_factor=0.01, eta_min=0.0):
    if step < warmup:
        return base_lr * step / warmup
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2
