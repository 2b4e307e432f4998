"""bayesclust: probabilistic clustering, sampled and in its hard limit.

Every model is a NumPyro program (:mod:`bayesclust.models`); beside it lives a
JIT-compiled JAX implementation of its small-variance (hard) limit
(:mod:`bayesclust.inference`).  Both share the numerical kernels in
:mod:`bayesclust.kernels` and the evaluation code in :mod:`bayesclust.metrics`;
:mod:`bayesclust.compare` sets a posterior beside its hard limit, and
:mod:`bayesclust.estimators` is the scikit-learn facade.

This module only re-exports; see ``docs/architecture.md`` for the layout.
"""

from .comparison import compare, small_variance_path
from .inference.aspect_em import aspect_em, select_n_aspects
from .inference.cecib import CECIBResult, beta_0, cecib, cecib_cost, critical_beta
from .inference.coassociation import coassociation
from .inference.convergence import ConvergenceWarning
from .inference.dp_means import DPMeansResult, dp_means, farthest_first_lambda
from .inference.ensembles import kmeans_ensemble
from .inference.gibbs import gibbs_dp_gmm
from .inference.hard_hdp import HardHDPResult, hard_hdp, hard_hdp_penalties
from .inference.hdp_gibbs import gibbs_hdp_gmm
from .inference.linkage import linkage_consensus
from .inference.mcmc import run_nuts, run_svi
from .inference.mixture_of_ensembles import mixture_of_ensembles
from .inference.posterior import Posterior
from .inference.smic import (
    SMICResult,
    SMICSelection,
    lsmi,
    smic,
    smic_predict,
    smic_select,
)
from .inference.spectral import kernel_dp_means, penalized_ncut, spectral_dp_means
from .models.dp_gmm import TruncationWarning, alpha_from_lam, dp_gmm, log_alpha_from_lam
from .models.hdp_gmm import (
    hdp_concentrations_from_lam,
    hdp_gmm,
    hdp_log_concentrations_from_lam,
)

__version__ = "0.1.0"

# The estimators import scikit-learn: loaded on first use, so that the functional
# core does not pay for it.
_ESTIMATORS = (
    "DPMeans", "DPGaussianMixture", "HardHDP", "HDPGaussianMixture", "DiscriminativeClustering",
    "SpectralDPMeans", "PenalizedNormalizedCut", "EvidenceAccumulation", "AspectConsensus",
    "SMIC", "CECIB",
)


def __getattr__(name):
    if name in _ESTIMATORS:
        from . import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'bayesclust' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ESTIMATORS))

__all__ = [
    # the DP Gaussian mixture: sampled, hard, and side by side
    "dp_gmm",
    "gibbs_dp_gmm",
    "alpha_from_lam",
    "log_alpha_from_lam",
    "TruncationWarning",
    "dp_means",
    "DPMeansResult",
    "farthest_first_lambda",
    "compare",
    "small_variance_path",
    "DPMeans",
    "DPGaussianMixture",
    # the HDP Gaussian mixture
    "hdp_gmm",
    "gibbs_hdp_gmm",
    "hdp_concentrations_from_lam",
    "hdp_log_concentrations_from_lam",
    "hard_hdp",
    "HardHDPResult",
    "hard_hdp_penalties",
    "HardHDP",
    "HDPGaussianMixture",
    # any NumPyro program
    "run_nuts",
    "run_svi",
    "Posterior",
    "ConvergenceWarning",
    # discriminative clustering
    "DiscriminativeClustering",
    # graphs and kernels: spectral DP-means, the penalised normalised cut
    "kernel_dp_means",
    "spectral_dp_means",
    "penalized_ncut",
    "SpectralDPMeans",
    "PenalizedNormalizedCut",
    # consensus clustering
    "kmeans_ensemble",
    "coassociation",
    "linkage_consensus",
    "aspect_em",
    "select_n_aspects",
    "mixture_of_ensembles",
    "EvidenceAccumulation",
    "AspectConsensus",
    # information-maximisation clustering
    "smic",
    "smic_predict",
    "smic_select",
    "lsmi",
    "SMICResult",
    "SMICSelection",
    "SMIC",
    # semi-supervised cross-entropy clustering
    "cecib",
    "cecib_cost",
    "beta_0",
    "critical_beta",
    "CECIBResult",
    "CECIB",
]
