"""02 exercise 4: a breadth-first walk, which can place a node before a child that reaches it later.

Hint: must come before its parent
"""

def backward_order(parents, root):
    order, seen, queue = [], {root}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for parent in parents[node]:
            if parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return order
