"""08 exercise 2: argues that zero logits give zero loss.

Hint: V=2: predicted 0.0000
"""

def predict_initial_loss(vocab_size):
    return 0.0
