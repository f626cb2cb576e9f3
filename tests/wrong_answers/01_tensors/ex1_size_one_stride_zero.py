"""01 exercise 1: gives the size-1 axis a stride of 0.

Hint: a size-1 axis still has a stride
"""

def strides_by_hand():
    return (48, 16, 4), (24, 0, 8), (1,), ()
