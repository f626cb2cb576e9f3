"""tensorlib.distributions: probability distributions with ``sample``, ``rsample``, ``log_prob``
and ``entropy``, and ``kl_divergence`` between them, mirroring ``torch.distributions`` (chapter 3,
"Initialization", section 13); transforms and ``TransformedDistribution`` build new ones by a
change of variables, ``constraints`` names the sets they map between, and ``biject_to`` and
``transform_to`` (``constraint_registry``) find a transform onto a given set; ``utils`` holds
PyTorch's helpers for writing one (``probs_to_logits``, ``broadcast_all``, ...).

Written by hand, re-exports only: each class lives in a module generated from
book/03_init.ipynb, under the module name PyTorch uses.
"""

from tensorlib.distributions import constraint_registry, constraints, transforms, utils
from tensorlib.distributions.bernoulli import Bernoulli
from tensorlib.distributions.beta import Beta
from tensorlib.distributions.binomial import Binomial
from tensorlib.distributions.categorical import Categorical
from tensorlib.distributions.cauchy import Cauchy
from tensorlib.distributions.chi2 import Chi2
from tensorlib.distributions.constraint_registry import biject_to, transform_to
from tensorlib.distributions.continuous_bernoulli import ContinuousBernoulli
from tensorlib.distributions.dirichlet import Dirichlet
from tensorlib.distributions.distribution import Distribution
from tensorlib.distributions.exp_family import ExponentialFamily
from tensorlib.distributions.exponential import Exponential
from tensorlib.distributions.fisher_snedecor import FisherSnedecor
from tensorlib.distributions.gamma import Gamma
from tensorlib.distributions.generalized_pareto import GeneralizedPareto
from tensorlib.distributions.geometric import Geometric
from tensorlib.distributions.gumbel import Gumbel
from tensorlib.distributions.half_cauchy import HalfCauchy
from tensorlib.distributions.half_normal import HalfNormal
from tensorlib.distributions.independent import Independent
from tensorlib.distributions.inverse_gamma import InverseGamma
from tensorlib.distributions.kl import kl_divergence, register_kl
from tensorlib.distributions.kumaraswamy import Kumaraswamy
from tensorlib.distributions.lkj_cholesky import LKJCholesky
from tensorlib.distributions.laplace import Laplace
from tensorlib.distributions.log_normal import LogNormal
from tensorlib.distributions.logistic_normal import LogisticNormal
from tensorlib.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from tensorlib.distributions.mixture_same_family import MixtureSameFamily
from tensorlib.distributions.multinomial import Multinomial
from tensorlib.distributions.multivariate_normal import MultivariateNormal
from tensorlib.distributions.negative_binomial import NegativeBinomial
from tensorlib.distributions.normal import Normal
from tensorlib.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from tensorlib.distributions.pareto import Pareto
from tensorlib.distributions.poisson import Poisson
from tensorlib.distributions.relaxed_bernoulli import RelaxedBernoulli
from tensorlib.distributions.relaxed_categorical import RelaxedOneHotCategorical
from tensorlib.distributions.studentT import StudentT
from tensorlib.distributions.transformed_distribution import TransformedDistribution
from tensorlib.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from tensorlib.distributions.uniform import Uniform
from tensorlib.distributions.von_mises import VonMises
from tensorlib.distributions.weibull import Weibull
from tensorlib.distributions.wishart import Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
    "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
    "LogNormal",
    "LogisticNormal", "LowRankMultivariateNormal", "LowerCholeskyTransform",
    "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
    "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
    "Wishart",
    "biject_to", "constraint_registry", "constraints", "identity_transform", "kl_divergence",
    "register_kl", "transform_to", "transforms", "utils",
]
