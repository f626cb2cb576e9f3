"""08 exercise 2: gives the loss in bits.

Hint: that is log2
"""

import math


def predict_initial_loss(vocab_size):
    return math.log2(vocab_size)
