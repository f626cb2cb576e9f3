"""``tensorlib.autograd``: the backward pass and its tools, at ``torch.autograd``'s paths
(chapter 2).

``grad`` and ``backward`` run the backward pass (``tensorlib.autograd.gradients``); ``gradcheck``
and ``gradgradcheck`` check gradients against central differences
(``tensorlib.autograd.gradcheck``); ``Function`` and ``once_differentiable`` make custom ops
(``tensorlib.autograd.function``); ``tensorlib.autograd.functional`` has whole Jacobians and
Hessians; ``Variable`` is the legacy wrapper (``tensorlib.autograd.variable``); anomaly detection
(``detect_anomaly``, ``set_detect_anomaly``) comes from ``tensorlib.engine.anomaly``, which is also
here as ``anomaly_mode``, PyTorch's name for it. Grad mode's ``no_grad``, ``enable_grad`` and
``set_grad_enabled`` are here too, as in PyTorch. ``tensorlib.autograd.graph`` has the graph's
API at ``torch.autograd.graph``'s path: saved-tensor hooks, ``register_multi_grad_hook``, ``Node``.
"""

from tensorlib.autograd import functional, graph
from tensorlib.autograd.function import Function, once_differentiable
from tensorlib.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from tensorlib.autograd.gradients import backward, grad
from tensorlib.autograd.variable import Variable
from tensorlib.engine import anomaly as anomaly_mode
from tensorlib.engine.anomaly import detect_anomaly, set_detect_anomaly
from tensorlib.engine.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "grad",
    "backward",
    "gradcheck",
    "GradcheckError",
    "detect_anomaly",
    "set_detect_anomaly",
    "gradgradcheck",
    "once_differentiable",
    "Variable",
]
