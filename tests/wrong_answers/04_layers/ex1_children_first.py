"""04 exercise 1: lists the children's parameters before the node's own.

Hint: a node's own parameters come first
"""

def named_parameters(node, prefix=""):
    seen, result = set(), []

    def walk(node, prefix):
        for name, child in node.get("children", {}).items():
            walk(child, prefix + name + ".")
        for name, array in node.get("params", {}).items():
            if id(array) not in seen:
                seen.add(id(array))
                result.append((prefix + name, array))

    walk(node, prefix)
    return result
