"""04 exercise 5: pads only one side.

Hint: the padding is added on both sides
"""

def conv_output_size(n, kernel_size, stride=1, padding=0):
    span = n + padding - kernel_size
    if span < 0:
        raise ValueError("the window does not fit")
    return span // stride + 1
