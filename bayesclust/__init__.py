"""bayesclust: probabilistic clustering, sampled and in its hard limit.

Every model is a NumPyro program; beside it lives a JIT-compiled JAX
implementation of its small-variance (hard) limit.  Both share the numerical
kernels in :mod:`bayesclust.kernels` and the evaluation code in
:mod:`bayesclust.metrics`.
"""

from .bridge import compare, small_variance_path
from .estimators import DiscriminativeClustering, DPGaussianMixture, DPMeans, HardHDP, HDPGaussianMixture
from .inference.dp_means import DPMeansResult, dp_means, farthest_first_lambda
from .inference.gibbs import gibbs_dp_gmm
from .inference.hard_hdp import HardHDPResult, hard_hdp, hard_hdp_penalties
from .inference.hdp_gibbs import gibbs_hdp_gmm
from .inference.mcmc import run_nuts, run_svi
from .inference.posterior import Posterior
from .models.dp_gmm import TruncationWarning, alpha_from_lam, dp_gmm, log_alpha_from_lam
from .models.hdp_gmm import hdp_concentrations_from_lam, hdp_gmm, hdp_log_concentrations_from_lam

# issue 6: consensus clustering (evidence accumulation, PEnCA, MM)
from .consensus import coassociation, kmeans_ensemble, linkage_consensus
from .estimators import AspectConsensus, EvidenceAccumulation
from .inference.aspect_em import aspect_em, mixture_of_ensembles, select_n_aspects
# issue 9: SMIC and LSMI
from .estimators import SMIC
from .information import SMICResult, SMICSelection, lsmi, smic, smic_predict, smic_select

# issue 10: CEC-IB
from .cecib import CECIBResult, beta_0, cecib, cecib_cost, critical_beta
from .estimators import CECIB
# issue 8: kernel / spectral DP-means, penalised normalised cut
from .estimators import PenalizedNormalizedCut, SpectralDPMeans  # noqa: E402
from .inference.spectral import kernel_dp_means, penalized_ncut, spectral_dp_means  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "DPGaussianMixture",
    "DiscriminativeClustering",
    "HardHDP",
    "HDPGaussianMixture",
    "gibbs_hdp_gmm",
    "Posterior",
    "alpha_from_lam",
    "log_alpha_from_lam",
    "dp_gmm",
    "hdp_gmm",
    "hdp_concentrations_from_lam",
    "hdp_log_concentrations_from_lam",
    "run_nuts",
    "run_svi",
    "TruncationWarning",
    "compare",
    "gibbs_dp_gmm",
    "small_variance_path",
    "DPMeans",
    "DPMeansResult",
    "dp_means",
    "farthest_first_lambda",
    "HardHDPResult",
    "hard_hdp",
    "hard_hdp_penalties",
    # issue 6
    "EvidenceAccumulation",
    "AspectConsensus",
    "coassociation",
    "kmeans_ensemble",
    "linkage_consensus",
    "aspect_em",
    "mixture_of_ensembles",
    "select_n_aspects",
    # issue 9: SMIC and LSMI
    "SMIC",
    "SMICResult",
    "SMICSelection",
    "smic",
    "smic_predict",
    "smic_select",
    "lsmi",
    # issue 10: CEC-IB
    "CECIB",
    "CECIBResult",
    "cecib",
    "cecib_cost",
    "beta_0",
    "critical_beta",
    # issue 8
    "SpectralDPMeans",
    "PenalizedNormalizedCut",
    "kernel_dp_means",
    "spectral_dp_means",
    "penalized_ncut",
]
