"""tensorlib.distributions: probability distributions with ``sample``, ``rsample``, ``log_prob``
and ``entropy``, mirroring ``torch.distributions`` (chapter 3, "Initialization", section 13).

Written by hand, re-exports only: each class lives in a module generated from
book/03_init.ipynb, under the module name PyTorch uses.
"""

from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal"]
