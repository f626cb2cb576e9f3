"""03 exercise 1: forgets to reduce modulo 2**64 after the additions and products.

Hint: state and output must be in [0, 2**64)
"""

def splitmix64_next(state):
    state = state + 0x9E3779B97F4A7C15
    z = state
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB
    return state, z ^ (z >> 31)
