"""Evaluation of clusterings: contingency tables, information and pair-counting scores,
Hungarian-matched accuracy, purity, consensus validity indices (ANMI, ACC, diversity of a
consensus partition against an ensemble, where ``-1`` marks an object missing from a
partition), internal validity indices (silhouette, Dunn, Davies-Bouldin in data space or in
the space of a -- possibly sparse -- co-association similarity; the k-NN likelihood index),
co-clustering matrices, hard-clustering objectives, and goodness-of-fit statistics (the
Cramér-von Mises statistic of a sample against a distribution function, the Jensen-Shannon
divergence of two discrete distributions).

Everything here is host-side NumPy/SciPy in float64 (no JAX, no scikit-learn), so it can be
used as an independent check of the JAX algorithms.  Labels may be any integers (negative,
non-contiguous); only the partition they induce matters, except in :func:`sse`, where they
index ``centers``.

Conventions for the degenerate cases follow scikit-learn (checked against version 1.9):

* :func:`nmi` is 1 when both labellings are constant (one cluster each) and 0 when the
  mutual information is 0 (in particular when exactly one of them is constant).
* :func:`ari` is 1 whenever the two labellings induce the same partition (this includes two
  constant labellings and two all-singleton labellings).

Unlike scikit-learn, empty labellings and non-integer labels are rejected.
"""

from __future__ import annotations

from .agreement import (
    accuracy,
    ari,
    coherence,
    consistency_index,
    contingency_matrix,
    entropy,
    match_labels,
    mean_group_nmi,
    membership_entropy,
    mutual_info,
    nmi,
    purity,
)
from .consensus import (
    Diversity,
    acc,
    acc_population,
    anmi,
    diversity,
)
from .goodness_of_fit import (
    cramer_von_mises,
    jensen_shannon,
)
from .losses import (
    binder_loss,
    co_clustering_matrix,
    expected_binder_loss,
    expected_vi_loss,
    set_partitions,
    variation_of_information,
    vi_lower_bound,
)
from .objectives import (
    dc_log_posterior,
    dp_means_objective,
    explained_variance,
    hard_dc_objective,
    hard_hdp_objective,
    kl_means_objective,
    n_clusters,
    sse,
)
from .validity import (
    calinski_harabasz,
    davies_bouldin,
    dunn,
    likelihood_index,
    n1_complexity,
    silhouette,
)

__all__ = [
    "dc_log_posterior",
    "mean_group_nmi",
    "contingency_matrix",
    "entropy",
    "membership_entropy",
    "mutual_info",
    "nmi",
    "ari",
    "accuracy",
    "consistency_index",
    "purity",
    "anmi",
    "acc",
    "acc_population",
    "Diversity",
    "diversity",
    "silhouette",
    "dunn",
    "davies_bouldin",
    "calinski_harabasz",
    "likelihood_index",
    "match_labels",
    "co_clustering_matrix",
    "n_clusters",
    "sse",
    "explained_variance",
    "dp_means_objective",
    "kl_means_objective",
    "hard_hdp_objective",
    "hard_dc_objective",
    "set_partitions",
    "binder_loss",
    "variation_of_information",
    "expected_binder_loss",
    "expected_vi_loss",
    "vi_lower_bound",
    "n1_complexity",
    "coherence",
    "cramer_von_mises",
    "jensen_shannon",
]
