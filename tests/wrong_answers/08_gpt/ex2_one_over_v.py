"""08 exercise 2: returns the probability of the target instead of its negative log.

Hint: V=2: predicted 0.5000
"""

def predict_initial_loss(vocab_size):
    return 1 / vocab_size
