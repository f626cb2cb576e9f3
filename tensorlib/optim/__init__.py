"""tensorlib.optim: optimizers and learning-rate schedules, mirroring torch.optim.

Written by hand, re-exports only.
"""

# Chapter 6, Optimizers (tensorlib.optim.*)
from tensorlib.optim.adam import Adam as Adam
from tensorlib.optim.adam import AdamW as AdamW
from tensorlib.optim.optimizer import Optimizer as Optimizer
