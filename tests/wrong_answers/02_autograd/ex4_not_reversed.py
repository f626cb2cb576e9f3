"""02 exercise 4: returns the post-order itself: parents first.

Hint: must come before its parent
"""

def backward_order(parents, root):
    order, visited = [], {root}
    stack = [(root, iter(parents[root]))]
    while stack:
        node, pending = stack[-1]
        for parent in pending:
            if parent not in visited:
                visited.add(parent)
                stack.append((parent, iter(parents[parent])))
                break
        else:
            stack.pop()
            order.append(node)
    return order
