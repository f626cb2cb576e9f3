"""08 exercise 2: uses the decimal logarithm.

Hint: the fresh model's loss is
"""

import math


def predict_initial_loss(vocab_size):
    return math.log10(vocab_size)
