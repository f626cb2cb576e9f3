"""tensorlib.jit: PyTorch's ``torch.jit`` names, for a library without TorchScript.

Written by hand, re-exports only: each name lives in a module generated from book/08_gpt.ipynb
(section 16): ``tensorlib.jit._script`` (``script``, ``trace`` and the decorators, which return
what they are given) and ``tensorlib.jit.annotations`` (the typing names TorchScript code imports).
"""

from tensorlib.jit import annotations as annotations
from tensorlib.jit._script import (
    Final,
    annotate,
    ignore,
    is_scripting,
    is_tracing,
    script,
    trace,
    unused,
)

__all__ = [
    "Final",
    "annotate",
    "annotations",
    "ignore",
    "is_scripting",
    "is_tracing",
    "script",
    "trace",
    "unused",
]
