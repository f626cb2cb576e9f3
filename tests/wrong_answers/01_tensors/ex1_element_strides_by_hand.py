"""01 exercise 1: gives the strides in elements, not bytes.

Hint: byte strides of a float32 tensor of shape (2, 3, 4)
"""

def strides_by_hand():
    return (12, 4, 1), (3, 3, 1), (1,), ()
