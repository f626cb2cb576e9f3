"""06 exercise 6: the warmup reaches base_lr at step warmup - 1.

Hint: during warmup
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, start_factor=0.01, eta_min=0.0):
    if step < warmup:
        return base_lr * (start_factor + (1 - start_factor) * step / max(warmup - 1, 1))
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2
