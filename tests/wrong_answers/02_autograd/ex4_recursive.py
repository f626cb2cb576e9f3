"""02 exercise 4: a recursive depth-first search: fine on small graphs, RecursionError on a long
chain.

Hint: hit Python's recursion limit
"""

def backward_order(parents, root):
    order, visited = [], set()

    def visit(node):
        visited.add(node)
        for parent in parents[node]:
            if parent not in visited:
                visit(parent)
        order.append(node)

    visit(root)
    return order[::-1]
