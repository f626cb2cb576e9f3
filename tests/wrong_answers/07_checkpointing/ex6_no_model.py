"""07 exercise 6: forgets the model's parameters.

Hint: the losses after the restart differ
"""

def checkpoint(run):
    state = {"model": run["model"].state_dict(), "optimizer": run["optimizer"].state_dict(),
             "generator": run["generator"].get_state(), "step": run["step"]}
    del state["model"]
    return state


def restore(run, state):
    run["optimizer"].load_state_dict(state["optimizer"])
    run["generator"].set_state(state["generator"])
    run["step"] = state["step"]
