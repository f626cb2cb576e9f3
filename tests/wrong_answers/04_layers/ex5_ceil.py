"""04 exercise 5: rounds up, keeping the last partial window.

Hint: floor the division, do not round it up
"""

def conv_output_size(n, kernel_size, stride=1, padding=0):
    span = n + 2 * padding - kernel_size
    if span < 0:
        raise ValueError("the window does not fit")
    return -(-span // stride) + 1
