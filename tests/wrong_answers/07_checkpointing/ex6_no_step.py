"""07 exercise 6: forgets the step counter that drives the schedule.

Hint: the step (the schedule's position)
"""

def checkpoint(run):
    state = {"model": run["model"].state_dict(), "optimizer": run["optimizer"].state_dict(),
             "generator": run["generator"].get_state(), "step": run["step"]}
    del state["step"]
    return state


def restore(run, state):
    run["model"].load_state_dict(state["model"])
    run["optimizer"].load_state_dict(state["optimizer"])
    run["generator"].set_state(state["generator"])
