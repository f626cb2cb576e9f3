"""08 exercise 5: returns milliseconds.

Hint: in seconds
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

    return {"cube": 1e3 * median_time(lambda: x**3), "tanh": 1e3 * median_time(lambda: np.tanh(u)),
            "rest": 1e3 * median_time(lambda: 0.5 * x * (1 + t))}
