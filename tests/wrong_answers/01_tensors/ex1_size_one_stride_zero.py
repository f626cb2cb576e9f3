"""01 exercise 1: gives the size-1 axis a stride of 0.

Hint: byte strides of a float64 tensor of shape (5, 1, 3)
"""

def strides_by_hand():
    return (48, 16, 4), (24, 0, 8), (1,), ()
