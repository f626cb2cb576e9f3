"""tensorlib.distributions: probability distributions with ``sample``, ``rsample``, ``log_prob``
and ``entropy``, and ``kl_divergence`` between them, mirroring ``torch.distributions`` (chapter 3,
"Initialization", section 13); transforms and ``TransformedDistribution`` build new ones by a
change of variables, and ``constraints`` names the sets they map between.

Written by hand, re-exports only: each class lives in a module generated from
book/03_init.ipynb, under the module name PyTorch uses.
"""

from tensorlib.distributions import constraints, transforms
from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.cauchy import Cauchy
from tensorlib.distributions.chi2 import Chi2
from tensorlib.distributions.dirichlet import Dirichlet
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.exponential import Exponential
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.geometric import Geometric
from tensorlib.distributions.gumbel import Gumbel
from tensorlib.distributions.half_cauchy import HalfCauchy
from tensorlib.distributions.half_normal import HalfNormal
from tensorlib.distributions.independent import Independent
from tensorlib.distributions.kl import kl_divergence, register_kl
from tensorlib.distributions.laplace import Laplace
from tensorlib.distributions.log_normal import LogNormal
from tensorlib.distributions.mixture_same_family import MixtureSameFamily
from tensorlib.distributions.multinomial import Multinomial
from tensorlib.distributions.multivariate_normal import MultivariateNormal
from tensorlib.distributions.normal import Normal
from tensorlib.distributions.one_hot_categorical import OneHotCategorical
from tensorlib.distributions.pareto import Pareto
from tensorlib.distributions.poisson import Poisson
from tensorlib.distributions.relaxed_bernoulli import RelaxedBernoulli
from tensorlib.distributions.relaxed_categorical import RelaxedOneHotCategorical
from tensorlib.distributions.studentT import StudentT
from tensorlib.distributions.transformed_distribution import TransformedDistribution
from tensorlib.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from tensorlib.distributions.uniform import Uniform
from tensorlib.distributions.weibull import Weibull

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy",
    "Chi2", "ComposeTransform", "Dirichlet", "Distribution",
    "ExpTransform", "Exponential", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "Independent", "Laplace", "LogNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical", "Pareto", "Poisson",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform",
    "SoftmaxTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution",
    "Uniform", "Weibull", "constraints", "identity_transform", "kl_divergence", "register_kl",
    "transforms",
]
