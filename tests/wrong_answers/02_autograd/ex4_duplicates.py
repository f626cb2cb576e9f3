"""02 exercise 4: appends a node each time it is reached.

Hint: a node appears twice
"""

def backward_order(parents, root):
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(parents[node])
    return order
