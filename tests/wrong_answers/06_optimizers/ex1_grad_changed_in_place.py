"""06 exercise 1: adds the weight decay to the given gradient in place.

Hint: changed the gradient it was given
"""

def sgd_momentum_step(
    param, grad, buffer, lr, momentum, dampening=0.0, weight_decay=0.0, nesterov=False
):
    grad += weight_decay * param
    buffer = grad.copy() if buffer is None else momentum * buffer + (1 - dampening) * grad
    direction = grad + momentum * buffer if nesterov else buffer
    return param - lr * direction, buffer
