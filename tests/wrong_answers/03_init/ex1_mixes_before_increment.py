"""03 exercise 1: mixes the old state instead of the incremented one.

Hint: the output mixes the old state
"""

def splitmix64_next(state):
    z = state
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)
