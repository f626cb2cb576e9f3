"""04 exercise 1: joins names without the dots.

Hint: join a child's prefix and a name with '.'
"""

def named_parameters(node, prefix=""):
    seen, result = set(), []

    def walk(node, prefix):
        for name, array in node.get("params", {}).items():
            if id(array) not in seen:
                seen.add(id(array))
                result.append((prefix + name, array))
        for name, child in node.get("children", {}).items():
            walk(child, prefix + name)

    walk(node, prefix)
    return result
