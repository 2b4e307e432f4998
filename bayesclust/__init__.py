"""bayesclust: probabilistic clustering, sampled and in its hard limit.

Every model is a NumPyro program; beside it lives a JIT-compiled JAX
implementation of its small-variance (hard) limit.  Both share the numerical
kernels in :mod:`bayesclust.kernels` and the evaluation code in
:mod:`bayesclust.metrics`.
"""

from .estimators import DPMeans
from .inference.dp_means import DPMeansResult, dp_means, farthest_first_lambda

__version__ = "0.1.0"

__all__ = [
    "DPMeans",
    "DPMeansResult",
    "dp_means",
    "farthest_first_lambda",
]
