"""03 exercise 1: returns the new state as the output.

Hint: the output is the new state itself
"""

def splitmix64_next(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    return state, state
