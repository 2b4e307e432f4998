"""Shared JAX numerics used by every model and every hard limit, one module per topic.

Written once, used everywhere: the squared distances of the DP mixture's
likelihood are the distances of DP-means' assignment step; the sufficient
statistics of the Gibbs sampler's mean update are the M-step of DP-means.

All functions are pure, jit-compatible and shape-polymorphic in the usual JAX
sense (static shapes, dynamic values).  Matrix products take an explicit
``precision`` so that GPUs never silently use TF32 for distance products.

The package imports only jax, numpy (and scipy for host-side float64 evaluation),
and the package's native XLA:CPU kernels (``bayesclust._native``), which
replace the nearest-centre step on CPUs when they are built.

* :mod:`~bayesclust.kernels.nearest` -- distances, the nearest centre, segment statistics,
  padded rows, label compaction;
* :mod:`~bayesclust.kernels.mixture` -- mixture-model terms (Gaussian log-densities,
  rank-one Cholesky updates, responsibilities, stick breaking, the CRP prior);
* :mod:`~bayesclust.kernels.discriminative` -- Voronoi memberships and the Dirichlet-marginalised
  class term of discriminative clustering;
* :mod:`~bayesclust.kernels.did` -- the dissimilarity increments laws;
* :mod:`~bayesclust.kernels.multinomial` -- count rows: KL costs to cluster distributions
  (dense, segment and one-row forms), pooled counts, the Polya (Dirichlet-multinomial) score.

Every public name is re-exported here (``bayesclust.kernels.nearest_center``).
"""

from __future__ import annotations

from .did import (
    DID2_FISHER,
    description_length,
    did_cdf,
    did_chi_mean_abs_difference,
    did_logpdf,
)
from .discriminative import (
    class_counts,
    polya_log_evidence,
    polya_log_predictive,
    voronoi_memberships,
)
from .mixture import (
    categorical_inverse_cdf,
    cholesky_rank_one,
    complete_data_log_likelihood,
    crp_log_prior,
    gaussian_logpdf_full,
    isotropic_gaussian_logpdf,
    log_responsibilities,
    stick_breaking,
)
from .multinomial import (
    CountRows,
    kl_costs,
    kl_costs_row,
    kl_costs_segments,
    log_distributions,
    merge_costs,
    polya_move_score,
    pooled_counts,
    row_negentropy,
)
from .nearest import (
    NEVER,
    PRECISION,
    NearestCenter,
    SegmentStats,
    assigned_squared_distances,
    assignment_block_size,
    compact_labels,
    map_row_blocks,
    nearest_center,
    nearest_center_stats,
    padded_rows,
    segment_stats,
    squared_distances,
    squared_norms,
    sum_rows,
    weighted_means,
)

__all__ = [
    "PRECISION",
    "NEVER",
    "squared_norms",
    "squared_distances",
    "nearest_center",
    "nearest_center_stats",
    "NearestCenter",
    "assigned_squared_distances",
    "segment_stats",
    "SegmentStats",
    "weighted_means",
    "compact_labels",
    "assignment_block_size",
    "padded_rows",
    "sum_rows",
    "map_row_blocks",
    "isotropic_gaussian_logpdf",
    "gaussian_logpdf_full",
    "cholesky_rank_one",
    "log_responsibilities",
    "categorical_inverse_cdf",
    "complete_data_log_likelihood",
    "stick_breaking",
    "crp_log_prior",
    "voronoi_memberships",
    "class_counts",
    "polya_log_evidence",
    "polya_log_predictive",
    "did_logpdf",
    "did_cdf",
    "did_chi_mean_abs_difference",
    "DID2_FISHER",
    "description_length",
    "CountRows",
    "row_negentropy",
    "kl_costs",
    "kl_costs_segments",
    "kl_costs_row",
    "log_distributions",
    "pooled_counts",
    "polya_move_score",
    "merge_costs",
]
