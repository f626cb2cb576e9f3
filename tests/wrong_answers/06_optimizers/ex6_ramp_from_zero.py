"""06 exercise 6: the warmup ramps from 0 (step / warmup), so step 0 does not train at all.

Hint: at step 0 (during warmup)
"""

import math


def warmup_cosine_lr(step, base_lr, warmup, total, eta_min=0.0):
    if step < warmup:
        return base_lr * step / warmup
    return (
        eta_min
        + (base_lr - eta_min) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) / 2
    )
