"""06 exercise 1: forgets the dampening: b = momentum * b + g.

Hint: buffer after step 2
"""

def sgd_momentum_step(
    param, grad, buffer, lr, momentum, dampening=0.0, weight_decay=0.0, nesterov=False
):
    grad = grad + weight_decay * param
    buffer = grad.copy() if buffer is None else momentum * buffer + grad
    direction = grad + momentum * buffer if nesterov else buffer
    return param - lr * direction, buffer
