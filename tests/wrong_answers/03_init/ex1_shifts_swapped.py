"""03 exercise 1: uses the shifts 27 and 30 in the wrong order.

Hint: check the mixer's shifts
"""

def splitmix64_next(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 27)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 30)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)
