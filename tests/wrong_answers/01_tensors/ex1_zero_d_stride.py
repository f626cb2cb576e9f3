"""01 exercise 1: gives the 0-d tensor a stride.

Hint: byte strides of a float16 tensor of shape ()
"""

def strides_by_hand():
    return (48, 16, 4), (24, 24, 8), (1,), (2,)
