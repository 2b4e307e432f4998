r"""WEACS: weighted evidence accumulation over a sub-sampled ensemble.

Every partition's vote in the co-association is weighted by its normalised internal validity,

.. math::

    C_{ij} = \frac{\sum_{l=1}^N IV^l \, [\ell^l_i = \ell^l_j]}{S_{ij}},

with :math:`S_{ij}` the number of partitions whose sub-sample holds both objects.  SWEACS
weights by one validity index, JWEACS by the mean of several.

References
----------
F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency for
cluster ensemble selection", IC3K / KDIR 2009 (WEACS, SWEACS, JWEACS).
F. J. Duarte, A. L. N. Fred, A. Lourenço and M. F. Rodrigues, weighted evidence accumulation
clustering using subsampling (WEACS).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ... import _validation as V
from ... import metrics
from .coassociation import CoAssociation, coassociation
from .ensembles import Ensemble, kmeans_ensemble
from .linkage import linkage_consensus

__all__ = ["WEACS_INDICES", "WEACSResult", "validity_weights", "weacs"]

# name -> (index of (X, labels), True when larger is better)
WEACS_INDICES = {
    "silhouette": (metrics.silhouette, True),
    "davies_bouldin": (metrics.davies_bouldin, False),
    "calinski_harabasz": (metrics.calinski_harabasz, True),
}


class WEACSResult(NamedTuple):
    """Result of :func:`weacs`.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        The consensus partition.
    n_clusters : int
    weights : ndarray of float64, shape (N,)
        :math:`IV^l` in [0, 1], the vote of every partition.
    index_values : dict of str to ndarray of float64, shape (N,)
        The raw validity of every partition per index (NaN where undefined: one cluster).
    ensemble : Ensemble
        The sub-sampled ensemble (``-1`` marks an object left out).
    coassociation : CoAssociation
        The weighted co-association.
    """

    labels: np.ndarray
    n_clusters: int
    weights: np.ndarray
    index_values: dict
    ensemble: Ensemble
    coassociation: CoAssociation


def _check_indices(indices: Any) -> tuple[str, ...]:
    if isinstance(indices, str):
        indices = (indices,)
    try:
        names = tuple(indices)
    except TypeError:
        raise TypeError(f"indices must be a name or a sequence of names, got {indices!r}") from None
    if not names:
        raise ValueError("indices must name at least one validity index")
    for name in names:
        if name not in WEACS_INDICES:
            raise ValueError(f"indices: unknown validity index {name!r}; choose from {sorted(WEACS_INDICES)}")
    return names


def validity_weights(X: Any, ensemble: Any, indices: Any = ("silhouette",)) -> tuple[np.ndarray, dict]:
    r"""Normalised internal validity :math:`IV^l` of every partition of an ensemble.

    Each index is computed on the objects a partition labels, min-max normalised over the
    ensemble (inverted for Davies-Bouldin, where lower is better), and the weights are the
    mean of the normalised indices (JWEACS; SWEACS with one index).

    Parameters
    ----------
    X : array_like, shape (n, d)
    ensemble : array_like of int, shape (N, n), list of label vectors or Ensemble
        ``-1`` marks an object left out of a partition.
    indices : str or sequence of str, default ("silhouette",)
        Among ``"silhouette"``, ``"davies_bouldin"``, ``"calinski_harabasz"``.

    Returns
    -------
    weights : ndarray of float64, shape (N,)
        In [0, 1]; 1 for every partition when an index takes one value over the ensemble; 0
        where every index is undefined (a one-cluster partition).
    index_values : dict of str to ndarray of float64, shape (N,)

    Notes
    -----
    The papers do not say how the indices are normalised: min-max over the ensemble is ours
    (docs/deviations.md#weacs-subsampling-normalisation).

    Examples
    --------
    >>> X = [[0.0], [0.1], [5.0], [5.1], [9.0], [9.2]]
    >>> w, _ = validity_weights(X, [[0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]])
    >>> w.tolist()
    [1.0, 0.0]
    """
    X = V.check_array(X, "X").astype(np.float64)
    V.check_point_range(X, "X")
    codes = V.check_ensemble(ensemble, "ensemble", allow_missing=True)
    if codes.shape[1] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but the partitions of ensemble label {codes.shape[1]} objects")
    names = _check_indices(indices)
    values = {}
    normed = []
    for name in names:
        fn, larger_better = WEACS_INDICES[name]
        v = np.full(codes.shape[0], np.nan)
        for l, row in enumerate(codes):
            obs = row >= 0
            k = np.unique(row[obs]).shape[0]
            if 2 <= k <= obs.sum() - 1:
                v[l] = fn(X[obs], row[obs])
        values[name] = v
        finite = np.isfinite(v)
        z = np.zeros_like(v)
        if finite.any():
            lo, hi = v[finite].min(), v[finite].max()
            if hi > lo:
                z[finite] = (v[finite] - lo) / (hi - lo) if larger_better else (hi - v[finite]) / (hi - lo)
            else:
                z[finite] = 1.0
        normed.append(z)
    return np.mean(normed, axis=0), values


def weacs(
    rng_key: Any,
    X: Any,
    n_clusters: int | None = None,
    *,
    indices: Any = ("silhouette",),
    n_partitions: int = 150,
    n_clusters_range: tuple[int, int] | None = None,
    subsample: float = 0.8,
    method: str = "average",
) -> WEACSResult:
    r"""WEACS consensus: linkage on a co-association whose votes are weighted by validity.

    Builds a sub-sampled k-means ensemble (:func:`~bayesclust.inference.consensus.ensembles.kmeans_ensemble`
    with ``subsample``), weights each partition by its normalised internal validity
    (:func:`validity_weights`: SWEACS with one index, JWEACS with several), accumulates

    .. math::

        C_{ij} = \frac{\sum_l IV^l [\ell^l_i = \ell^l_j \ne -1]}{S_{ij}}

    (:func:`~bayesclust.inference.consensus.coassociation.coassociation` with ``weights``) and extracts
    the consensus by :func:`~bayesclust.inference.consensus.linkage.linkage_consensus`.

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    n_clusters : int, optional
        Fixed number of consensus clusters; default the lifetime criterion.
    indices : str or sequence of str, default ("silhouette",)
        ``"silhouette"``, ``"davies_bouldin"``, ``"calinski_harabasz"``; one name is SWEACS,
        several JWEACS (their mean).
    n_partitions : int, default 150
    n_clusters_range : (int, int), optional
        As in :func:`~bayesclust.inference.consensus.ensembles.kmeans_ensemble`.
    subsample : float in (0, 1], default 0.8
        Fraction of the objects each partition clusters (ours: the papers do not give it,
        docs/deviations.md#weacs-subsampling-normalisation).
    method : str, default "average"
        The linkage (:func:`~bayesclust.inference.consensus.linkage.linkage_consensus`).

    Returns
    -------
    WEACSResult

    References
    ----------
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009 (WEACS).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> res = weacs(0, X, 2, n_partitions=10, n_clusters_range=(3, 6))
    >>> sorted(np.bincount(res.labels).tolist())
    [20, 20]
    """
    X = V.check_array(X, "X")
    V.check_point_range(X, "X")
    names = _check_indices(indices)
    ens = kmeans_ensemble(rng_key, X, n_partitions, n_clusters_range=n_clusters_range, subsample=subsample)
    weights, values = validity_weights(X, ens, names)
    C = coassociation(ens, weights=weights)
    res = linkage_consensus(C, method, n_clusters)
    return WEACSResult(res.labels, int(res.n_clusters), weights, values, ens, C)
