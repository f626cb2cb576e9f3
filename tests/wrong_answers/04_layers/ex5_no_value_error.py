"""04 exercise 5: returns a non-positive size instead of raising ValueError.

Hint: fits nowhere: expected ValueError
"""

def conv_output_size(n, kernel_size, stride=1, padding=0):
    return (n + 2 * padding - kernel_size) // stride + 1
