"""04 exercise 1: lists a shared module's parameters once per name it is reached by.

Hint: One object is one parameter
"""

def named_parameters(node, prefix=""):
    result = []
    for name, array in node.get("params", {}).items():
        result.append((prefix + name, array))
    for name, child in node.get("children", {}).items():
        result += named_parameters(child, prefix + name + ".")
    return result
