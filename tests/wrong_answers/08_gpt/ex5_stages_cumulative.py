"""08 exercise 5: times each stage together with the stages before it.

Hint: given the previous stage's result
"""

import time
import numpy as np


def gelu_stage_times(x, repeat=7):
    def median_time(fn):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    cube = x**3
    u = SQRT_2_OVER_PI * (x + 0.044715 * cube)
    t = np.tanh(u)

    return {
        "cube": median_time(lambda: x**3),
        "tanh": median_time(lambda: np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))),
        "rest": median_time(
            lambda: 0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
        ),
    }
