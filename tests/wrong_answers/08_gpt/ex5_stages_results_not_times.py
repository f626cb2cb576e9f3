"""08 exercise 5: returns each stage's result instead of its time.

Hint: expected a positive number of seconds
"""

import numpy as np


def gelu_stage_times(x, repeat=7):
    cube = x**3
    u = SQRT_2_OVER_PI * (x + 0.044715 * cube)
    t = np.tanh(u)
    return {"cube": cube, "tanh": t, "rest": 0.5 * x * (1 + t)}
