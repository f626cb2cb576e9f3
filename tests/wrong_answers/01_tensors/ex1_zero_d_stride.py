"""01 exercise 1: gives the 0-d tensor a stride.

Hint: a 0-d tensor has no axes, so it has no strides
"""

def strides_by_hand():
    return (48, 16, 4), (24, 24, 8), (1,), (2,)
