"""Helpers shared by the dissimilarity-increments methods of this family: the smallest
positive increment (the floor of a mean increment), the G-DID score of a partition with its
per-cluster tree log-likelihood, and the Gaussian statistics of GMD, GMDID and MAP-DID.

Private to ``inference/increments/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from ...graphs import bridge_increments, increments

#: Cross-distance blocks hold at most this many entries (32 MiB of float64).
_BLOCK = 1 << 22


def _lam_floor(X: np.ndarray) -> float:
    """The smallest positive increment of the data (else the smallest positive distance, else 1)."""
    w = increments(X) if X.shape[0] >= 3 else np.empty(0)
    if np.any(w > 0):
        return float(w[w > 0].min())
    best = np.inf
    step = max(1, _BLOCK // X.shape[0])
    for lo in range(0, X.shape[0], step):
        block = cdist(X[lo:lo + step], X)
        if np.any(block > 0):
            best = min(best, float(block[block > 0].min()))
    return best if np.isfinite(best) else 1.0


def tree_log_likelihood(A: np.ndarray, floor: float) -> tuple[float, int]:
    """2-DID log-likelihood of a cluster's increments along its minimum spanning tree.

    The nearest-neighbour triplet increments and the bridge increments of the cluster's
    tree (:func:`~bayesclust.inference.increments.did_hierarchy.gdid_index`), under the 2-DID of the triplets' mean (floored at ``floor``).

    Parameters
    ----------
    A : ndarray, shape (m, d)
        The cluster's points, ``m >= 3``.
    floor : float
        Smallest mean increment allowed (``> 0``).

    Returns
    -------
    (float, int)
        The log-likelihood and the number of increments.
    """
    from ...kernels import did_logpdf

    w = increments(A)
    lam = max(float(w.mean()), floor)
    w = np.concatenate([w, bridge_increments(A)])
    return float(np.sum(did_logpdf(w, lam))), int(w.size)


def _gdid(X: np.ndarray, labels: np.ndarray, floor: float, cache: dict | None = None) -> float:
    """G-DID of ``labels``; ``cache`` maps a cluster's rows to its (log-likelihood, count)."""
    cache = {} if cache is None else cache
    loglik, m = 0.0, 0
    ids, counts = np.unique(labels, return_counts=True)
    for c in ids[counts >= 3]:
        rows = np.flatnonzero(labels == c)
        key = rows.tobytes()
        if key not in cache:
            cache[key] = tree_log_likelihood(X[rows], floor)
        loglik += cache[key][0]
        m += cache[key][1]
    if m == 0:
        return float("inf")
    return -loglik + 0.5 * ids.size * np.log(m)


def _n_params(d: int) -> float:
    """Free parameters of one full-covariance Gaussian component: ``d + d (d + 1) / 2``."""
    return d + d * (d + 1) / 2.0


def _gaussian(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the rows of ``A``, the covariance regularised by
    ``1e-6 tr(S)/d I`` (``1e-6 I`` if ``S = 0``) so that it is positive definite."""
    d = A.shape[1]
    mu = A.mean(axis=0)
    S = np.cov(A, rowvar=False, bias=True).reshape(d, d) if len(A) > 1 else np.zeros((d, d))
    ridge = 1e-6 * np.trace(S) / d
    return mu, S + (ridge if ridge > 0 else 1e-6) * np.eye(d)
