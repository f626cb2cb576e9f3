"""03 exercise 3: ignores the receptive field of a convolution weight.

Hint: the receptive field is missing
"""

def fans(shape):
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans")
    return shape[1], shape[0]
