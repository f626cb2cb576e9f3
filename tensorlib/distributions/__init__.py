"""tensorlib.distributions: probability distributions with ``sample``, ``rsample``, ``log_prob``
and ``entropy``, and ``kl_divergence`` between them, mirroring ``torch.distributions`` (chapter 3,
"Initialization", section 13).

Written by hand, re-exports only: each class lives in a module generated from
book/03_init.ipynb, under the module name PyTorch uses.
"""

from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.dirichlet import Dirichlet
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.exponential import Exponential
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.independent import Independent
from tensorlib.distributions.kl import kl_divergence, register_kl
from tensorlib.distributions.laplace import Laplace
from tensorlib.distributions.log_normal import LogNormal
from tensorlib.distributions.multivariate_normal import MultivariateNormal
from tensorlib.distributions.normal import Normal
from tensorlib.distributions.one_hot_categorical import OneHotCategorical
from tensorlib.distributions.poisson import Poisson
from tensorlib.distributions.studentT import StudentT
from tensorlib.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential",
    "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Poisson", "StudentT", "Uniform", "kl_divergence", "register_kl",
]
