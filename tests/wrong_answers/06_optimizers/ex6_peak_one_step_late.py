"""06 exercise 6: the warmup reaches base_lr at step warmup instead of warmup - 1 (a ramp of W + 1
steps).

Hint: during warmup
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, eta_min=0.0):
    if step < warmup:
        return base_lr * (step + 1) / (warmup + 1)
    return (
        eta_min
        + (base_lr - eta_min) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2
    )
