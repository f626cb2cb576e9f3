"""06 exercise 1: starts the buffer at zeros, so the first step is damped.

Hint: without dampening
"""

def sgd_momentum_step(
    param, grad, buffer, lr, momentum, dampening=0.0, weight_decay=0.0, nesterov=False
):
    if buffer is None:
        buffer = 0 * grad
    grad = grad + weight_decay * param
    buffer = momentum * buffer + (1 - dampening) * grad
    direction = grad + momentum * buffer if nesterov else buffer
    return param - lr * direction, buffer
