"""06 exercise 1: steps along the buffer even with nesterov=True.

Hint: Nesterov steps along g + momentum * b
"""

def sgd_momentum_step(
    param, grad, buffer, lr, momentum, dampening=0.0, weight_decay=0.0, nesterov=False
):
    grad = grad + weight_decay * param
    buffer = grad.copy() if buffer is None else momentum * buffer + (1 - dampening) * grad
    return param - lr * buffer, buffer
