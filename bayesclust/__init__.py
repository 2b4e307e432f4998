"""bayesclust: probabilistic clustering, sampled and in its hard limit.

Every model is a NumPyro program (:mod:`bayesclust.models`); beside it lives a
JIT-compiled JAX implementation of its small-variance (hard) limit
(:mod:`bayesclust.inference`).  Both share the numerical kernels in
:mod:`bayesclust.kernels` and the evaluation code in :mod:`bayesclust.metrics`;
:mod:`bayesclust.compare` sets a posterior beside its hard limit, and
:mod:`bayesclust.estimators` is the scikit-learn facade.

This module only re-exports; see ``docs/architecture.md`` for the layout.
"""

import importlib

__version__ = "0.1.0"

# Every public name is loaded on first use (PEP 562): ``import bayesclust`` imports
# neither JAX nor NumPyro, SciPy, scikit-learn or matplotlib, and each entry point
# pays only for the modules it needs.
_LAZY = {
    ".comparison": ("compare", "small_variance_path"),
    # inference, one family folder each
    ".inference.mixtures.convergence": ("ConvergenceWarning",),
    ".inference.mixtures.gibbs": ("gibbs_dp_gmm",),
    ".inference.mixtures.gibbs_gaussian": ("GaussianClusterPrior", "default_gaussian_prior",
                                           "gibbs_dp_gaussian", "gaussian_log_marginal",
                                           "gaussian_predictive_logpdf"),
    ".inference.mixtures.hdp_gibbs": ("gibbs_hdp_gmm",),
    ".inference.mixtures.mcmc": ("run_nuts", "run_svi"),
    ".inference.mixtures.posterior": ("Posterior",),
    ".inference.mixtures.mcmc_kernels": ("DPCollapsedGibbs", "HDPGibbs", "posterior_from_mcmc"),
    ".inference.hard.dp_means": ("DPMeansResult", "dp_means", "farthest_first_lambda"),
    ".inference.hard.hard_hdp": ("HardHDPResult", "hard_hdp", "hard_hdp_penalties"),
    ".inference.hard.kernel_dp_means": ("kernel_dp_means",),
    ".inference.hard.spectral_dp_means": ("spectral_dp_means",),
    ".inference.hard.penalized_ncut": ("penalized_ncut",),
    ".inference.consensus.acccs": ("ACCCSInfo", "ACCCSResult", "ACCCSState", "acccs", "acccs_step",
                                   "init_acccs_state"),
    ".inference.consensus.aspect_em": ("AspectEMInfo", "AspectEMResult", "AspectEMState", "aspect_em",
                                       "aspect_em_step", "init_aspect_em_state", "select_n_aspects"),
    ".inference.consensus.coassociation": ("coassociation",),
    ".inference.consensus.consensus_bayes": ("aspect_posterior", "memberships_posterior"),
    ".inference.consensus.consensus_selection": ("consensus_candidates", "select_consensus",
                                                 "validity_index"),
    ".inference.consensus.constrained": ("ConstrainedLinkageResult", "constrained_linkage_consensus",
                                         "constrained_shortest_paths", "constraint_satisfaction",
                                         "random_constraints"),
    ".inference.consensus.embedding": ("EmbeddingResult", "embed_coassociation", "embedded_consensus"),
    ".inference.consensus.ensembles": ("clustering_ensemble", "kmeans_ensemble", "spectral_grid_ensemble"),
    ".inference.consensus.hypergraph": ("HypergraphResult", "cspa", "hypergraph_consensus", "mcla"),
    ".inference.consensus.linkage": ("linkage_consensus",),
    ".inference.consensus.mixture_of_ensembles": ("MixtureEnsembleResult", "MixtureOfEnsemblesInfo",
                                                  "MixtureOfEnsemblesState",
                                                  "init_mixture_of_ensembles_state", "mixture_of_ensembles",
                                                  "mixture_of_ensembles_step"),
    ".inference.consensus.ppc": ("PPCInfo", "PPCResult", "PPCState", "init_ppc_state", "ppc", "ppc_step"),
    ".inference.consensus.temporal": ("DenoiseResult", "TemporalStatesResult", "denoise_sequence",
                                      "temporal_states", "window_indicator"),
    ".inference.consensus.weacs": ("WEACSResult", "weacs"),
    ".inference.increments.did_hierarchy": ("DIDHierarchyResult", "GDIDCut", "gdid_cut", "gdid_index",
                                            "sl_aglo", "sl_did"),
    ".inference.increments.gmd": ("GMDResult", "gmd"),
    ".inference.increments.gmdid": ("GMDIDResult", "gmdid", "kmdid"),
    ".inference.increments.map_did": ("MAPDIDModel", "map_did_fit", "map_did_predict"),
    ".inference.information.cecib": ("CECIBResult", "beta_0", "cecib", "cecib_cost", "critical_beta"),
    ".inference.information.smic": ("SMICResult", "SMICSelection", "lsmi", "smic", "smic_predict",
                                    "smic_select"),
    ".models.did": ("DID", "did_clusters", "map_did"),
    ".kernels": ("did_logpdf", "did_cdf", "description_length"),
    ".structured.proximal": ("soft_threshold", "prox_l1_squared", "prox_l1_squared_weighted",
                             "prox_lq_power", "prox_block_norms"),
    ".structured.online": ("OnlineProximalResult", "online_proximal", "proximal_update"),
    ".structured.decoding": ("multiclass_decode", "viterbi"),
    ".structured.spom": ("SPOMResult", "spom", "spom_predict", "spom_decision"),
    ".structured.kernel_spom": ("KernelSPOMResult", "spom_kernel", "spom_kernel_decision"),
    ".structured.classifier": ("MKLClassifier",),
    ".graphs": ("increments", "increments_to", "gaps"),
    ".models.dp_gmm": ("TruncationWarning", "alpha_from_lam", "dp_gmm", "log_alpha_from_lam"),
    ".models.pairwise_memberships": ("pairwise_memberships",),
    ".models.hdp_gmm": ("hdp_concentrations_from_lam", "hdp_gmm",
                        "hdp_log_concentrations_from_lam"),
    # the estimators import scikit-learn
    ".estimators": (
        "DPMeans", "DPGaussianMixture", "HardHDP", "HDPGaussianMixture",
        "DiscriminativeClustering", "SpectralDPMeans", "PenalizedNormalizedCut",
        "EmbeddedConsensus",
        "EvidenceAccumulation", "ConstrainedEAC", "AspectConsensus", "PairwiseConsensus", "ACCCS", "SMIC",
        "HypergraphConsensus",
        "CECIB",
        "SLDID", "SLAGLO", "GMDID", "MAPDIDClassifier",
    ),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}
_SUBMODULES = (
    "comparison", "datasets", "estimators", "graphs", "inference", "jobs", "kernels", "metrics",
    "models", "plotting", "cli", "structured",
)


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'bayesclust' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    # the DP Gaussian mixture: sampled, hard, and side by side
    "dp_gmm",
    "gibbs_dp_gmm",
    "gibbs_dp_gaussian",
    "GaussianClusterPrior",
    "default_gaussian_prior",
    "gaussian_log_marginal",
    "gaussian_predictive_logpdf",
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
    # the Gibbs samplers as numpyro.infer.MCMC kernels
    "DPCollapsedGibbs",
    "HDPGibbs",
    "posterior_from_mcmc",
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
    "clustering_ensemble",
    "coassociation",
    "linkage_consensus",
    "constrained_linkage_consensus",
    "constrained_shortest_paths",
    "constraint_satisfaction",
    "random_constraints",
    "ConstrainedLinkageResult",
    "ppc",
    "PPCResult",
    "PPCState",
    "PPCInfo",
    "init_ppc_state",
    "ppc_step",
    "consensus_candidates",
    "select_consensus",
    "validity_index",
    "aspect_em",
    "AspectEMResult",
    "AspectEMState",
    "AspectEMInfo",
    "init_aspect_em_state",
    "aspect_em_step",
    "select_n_aspects",
    "aspect_posterior",
    "memberships_posterior",
    "pairwise_memberships",
    "mixture_of_ensembles",
    "MixtureEnsembleResult",
    "MixtureOfEnsemblesState",
    "MixtureOfEnsemblesInfo",
    "init_mixture_of_ensembles_state",
    "mixture_of_ensembles_step",
    "EvidenceAccumulation",
    "ConstrainedEAC",
    "AspectConsensus",
    "embed_coassociation",
    "embedded_consensus",
    "EmbeddingResult",
    "EmbeddedConsensus",
    "PairwiseConsensus",
    "cspa",
    "mcla",
    "hypergraph_consensus",
    "HypergraphResult",
    "HypergraphConsensus",
    "acccs",
    "ACCCSResult",
    "ACCCSState",
    "ACCCSInfo",
    "init_acccs_state",
    "acccs_step",
    "spectral_grid_ensemble",
    # temporal data: state detection and GA denoising
    "temporal_states",
    "denoise_sequence",
    "window_indicator",
    "TemporalStatesResult",
    "DenoiseResult",
    "weacs",
    "WEACSResult",
    "ACCCS",
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
    # dissimilarity increments
    "increments",
    "gaps",
    "did_logpdf",
    "did_cdf",
    "description_length",
    "DID",
    "did_clusters",
    "sl_did",
    "sl_aglo",
    "gdid_index",
    "gdid_cut",
    "DIDHierarchyResult",
    "GDIDCut",
    "SLDID",
    "SLAGLO",
    "gmdid",
    "kmdid",
    "GMDIDResult",
    "GMDID",
    "map_did",
    "map_did_fit",
    "map_did_predict",
    "MAPDIDModel",
    "MAPDIDClassifier",
    "increments_to",
    # unsupervised Gaussian mixtures (Figueiredo & Jain), GMDID's initialisation
    "gmd",
    "GMDResult",
    # proximity operators (shared numerics)
    "soft_threshold",
    "prox_l1_squared",
    "prox_l1_squared_weighted",
    "prox_lq_power",
    "prox_block_norms",
    # structured prediction with multiple kernels (SPOM), supervised and separate
    "online_proximal",
    "proximal_update",
    "OnlineProximalResult",
    "multiclass_decode",
    "viterbi",
    "spom",
    "spom_predict",
    "spom_decision",
    "SPOMResult",
    "spom_kernel",
    "spom_kernel_decision",
    "KernelSPOMResult",
    "MKLClassifier",
]
