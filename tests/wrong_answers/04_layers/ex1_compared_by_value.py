"""04 exercise 1: drops parameters whose values equal an earlier one's.

Hint: two distinct arrays with equal values are two parameters
"""

def named_parameters(node, prefix=""):
    seen, result = [], []

    def walk(node, prefix):
        for name, array in node.get("params", {}).items():
            if not any(array.shape == s.shape and (array == s).all() for s in seen):
                seen.append(array)
                result.append((prefix + name, array))
        for name, child in node.get("children", {}).items():
            walk(child, prefix + name + ".")

    walk(node, prefix)
    return result
