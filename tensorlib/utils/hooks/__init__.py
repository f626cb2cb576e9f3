"""tensorlib.utils.hooks: ``RemovableHandle``, the handle every hook registration returns, under
the name PyTorch uses (``torch.utils.hooks.RemovableHandle``).

Written by hand, re-exports only: the class lives in ``tensorlib.engine.hooks``, generated from
book/02_autograd.ipynb (chapter 2, "Autograd", section 25.1, ``Tensor.register_hook``); the
module hooks of chapter 4 ("Layers", section 2.5) return it too.
"""

from tensorlib.engine.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
