"""06 exercise 1: adds the weight decay to the step (decoupled, AdamW-style) instead of to the
gradient.

Hint: SGD's weight decay goes into the gradient before the momentum buffer
"""

def sgd_momentum_step(
    param, grad, buffer, lr, momentum, dampening=0.0, weight_decay=0.0, nesterov=False
):
    buffer = grad.copy() if buffer is None else momentum * buffer + (1 - dampening) * grad
    direction = grad + momentum * buffer if nesterov else buffer
    return param - lr * (direction + weight_decay * param), buffer
