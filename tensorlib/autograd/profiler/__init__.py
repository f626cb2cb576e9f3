"""tensorlib.autograd.profiler: PyTorch's older profiler path, ``torch.autograd.profiler``
(chapter 8, "GPT", section 12.11): ``profile`` (the older context manager), ``record_function``,
``EventList`` and ``FunctionEvent``, the same objects as in :mod:`tensorlib.profiler`.

Written by hand, re-exports only. ``import tensorlib`` imports it last, after the layers it
reads, so ``tl.autograd.profiler.record_function`` works without an import of its own, as in
PyTorch.
"""

from tensorlib.profiler import EventList, FunctionEvent, record_function
from tensorlib.profiler import legacy_profile as profile

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]
