"""Evaluation of clusterings: contingency tables, information and pair-counting scores,
Hungarian-matched accuracy, co-clustering matrices and hard-clustering objectives.

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

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from bayesclust._validation import (
    check_array,
    check_int,
    check_labels,
    check_nonnegative,
    check_same_length,
    check_sample_weight,
)

__all__ = [
    "contingency_matrix",
    "entropy",
    "mutual_info",
    "nmi",
    "ari",
    "accuracy",
    "consistency_index",
    "match_labels",
    "co_clustering_matrix",
    "n_clusters",
    "sse",
    "dp_means_objective",
]

_AVERAGE_METHODS = ("arithmetic", "geometric", "min", "max")


def _check_pair(labels_true: Any, labels_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    a = check_labels(labels_true, "labels_true")
    b = check_labels(labels_pred, "labels_pred")
    check_same_length(a, b, "labels_true", "labels_pred")
    return a, b


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Contingency table of two validated label vectors (rows: sorted values of ``a``)."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    table = np.zeros((ia.max() + 1, ib.max() + 1), dtype=np.int64)
    np.add.at(table, (ia, ib), 1)
    return table


def _entropy_of_counts(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    h = float(-np.sum(p * np.log(p)))
    return h if h > 0.0 else 0.0


def _mutual_info_of_table(table: np.ndarray) -> float:
    n = table.sum()
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    i, j = np.nonzero(table)
    nij = table[i, j].astype(np.float64)
    # The products are exact integers in float64 (n**2 < 2**53), so independent cells give
    # log(1.0) == 0 exactly.
    ratio = (n * nij) / (rows[i].astype(np.float64) * cols[j].astype(np.float64))
    mi = float(np.sum(nij / n * np.log(ratio)))
    return mi if mi > 0.0 else 0.0


def contingency_matrix(labels_true: Any, labels_pred: Any) -> np.ndarray:
    """Contingency table of two labellings.

    Parameters
    ----------
    labels_true : array_like of int, shape (n,)
        Reference classes (any integer values).
    labels_pred : array_like of int, shape (n,)
        Cluster labels (any integer values).

    Returns
    -------
    table : ndarray of int64, shape (n_classes, n_clusters)
        ``table[r, c]`` is the number of points whose class is the ``r``-th smallest value of
        ``labels_true`` and whose cluster is the ``c``-th smallest value of ``labels_pred``
        (same layout as ``sklearn.metrics.cluster.contingency_matrix``).

    Examples
    --------
    >>> contingency_matrix([0, 0, 1, 1], [5, -1, -1, -1])
    array([[1, 1],
           [2, 0]])
    """
    a, b = _check_pair(labels_true, labels_pred)
    return _contingency(a, b)


def entropy(labels: Any) -> float:
    """Shannon entropy (nats) of the partition induced by ``labels``.

    Parameters
    ----------
    labels : array_like of int, shape (n,)

    Returns
    -------
    float
        :math:`H = -\\sum_k (n_k/n) \\log(n_k/n)`, 0 for a single cluster.

    Examples
    --------
    >>> round(entropy([0, 0, 1, 1]), 6)  # log 2
    0.693147
    """
    a = check_labels(labels, "labels")
    return _entropy_of_counts(np.unique(a, return_counts=True)[1])


def mutual_info(labels_true: Any, labels_pred: Any) -> float:
    """Mutual information (nats) between two labellings.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int, shape (n,)

    Returns
    -------
    float
        :math:`I = \\sum_{ij} \\frac{n_{ij}}{n} \\log \\frac{n\\, n_{ij}}{a_i b_j}`, where
        :math:`n_{ij}` is the contingency table and :math:`a_i, b_j` its margins.  Clipped at
        0 against round-off; equals ``sklearn.metrics.mutual_info_score``.

    Examples
    --------
    >>> round(mutual_info([0, 0, 1, 1], [1, 1, 0, 0]), 6)  # log 2
    0.693147
    """
    a, b = _check_pair(labels_true, labels_pred)
    return _mutual_info_of_table(_contingency(a, b))


def nmi(labels_true: Any, labels_pred: Any, average_method: str = "arithmetic") -> float:
    """Normalised mutual information.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int, shape (n,)
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        How the two entropies are averaged in the denominator.

    Returns
    -------
    float in [0, 1]
        :math:`NMI = I(U, V) / \\mathrm{avg}(H(U), H(V))`.  By convention 1.0 when both
        labellings are constant and 0.0 when :math:`I = 0` (e.g. exactly one is constant),
        as in ``sklearn.metrics.normalized_mutual_info_score``.

    Notes
    -----
    ``average_method="geometric"`` is the NMI of Strehl & Ghosh used in the evidence
    accumulation papers; ``"arithmetic"`` is scikit-learn's default (= V-measure).

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002) 583-617.

    Examples
    --------
    >>> nmi([0, 0, 1, 1], [7, 7, 3, 3])
    1.0
    """
    if average_method not in _AVERAGE_METHODS:
        raise ValueError(
            f"average_method must be one of {_AVERAGE_METHODS}, got {average_method!r}"
        )
    a, b = _check_pair(labels_true, labels_pred)
    table = _contingency(a, b)
    if table.shape == (1, 1):
        return 1.0
    mi = _mutual_info_of_table(table)
    if mi == 0.0:
        return 0.0
    h_true = _entropy_of_counts(table.sum(axis=1))
    h_pred = _entropy_of_counts(table.sum(axis=0))
    if average_method == "arithmetic":
        norm = 0.5 * (h_true + h_pred)
    elif average_method == "geometric":
        norm = np.sqrt(h_true * h_pred)
    elif average_method == "min":
        norm = min(h_true, h_pred)
    else:
        norm = max(h_true, h_pred)
    return float(min(mi / norm, 1.0))


def ari(labels_true: Any, labels_pred: Any) -> float:
    """Adjusted Rand index (Hubert & Arabie).

    Parameters
    ----------
    labels_true, labels_pred : array_like of int, shape (n,)

    Returns
    -------
    float in [-0.5, 1]
        With the pair counts ``tp`` (together in both), ``fp``/``fn`` (together in one only)
        and ``tn`` (apart in both), counted over ordered pairs,
        :math:`ARI = \\frac{2 (tp\\,tn - fn\\,fp)}{(tp+fn)(fn+tn) + (tp+fp)(fp+tn)}`,
        and 1.0 when ``fp == fn == 0`` (identical partitions), as in
        ``sklearn.metrics.adjusted_rand_score``.

    References
    ----------
    L. Hubert and P. Arabie, "Comparing partitions", J. Classification 2 (1985) 193-218.

    Examples
    --------
    >>> ari([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    a, b = _check_pair(labels_true, labels_pred)
    table = _contingency(a, b)
    n = int(a.shape[0])
    # Python ints: no overflow for any n.
    sum_sq = int(np.sum(table.astype(object) ** 2))
    rows_sq = int(np.sum(table.sum(axis=1).astype(object) ** 2))
    cols_sq = int(np.sum(table.sum(axis=0).astype(object) ** 2))
    tp = sum_sq - n
    fp = cols_sq - sum_sq  # same cluster, different class
    fn = rows_sq - sum_sq  # same class, different cluster
    tn = n * n - fp - fn - sum_sq
    if fp == 0 and fn == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _matching(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the one-to-one matching that maximises the matched total."""
    return linear_sum_assignment(table, maximize=True)


def accuracy(labels_true: Any, labels_pred: Any) -> float:
    """Clustering accuracy under the best one-to-one matching of clusters to classes.

    Parameters
    ----------
    labels_true, labels_pred : array_like of int, shape (n,)
        The numbers of classes and clusters may differ.

    Returns
    -------
    float in (0, 1]
        :math:`\\frac1n \\max_\\pi \\sum_k |C_k \\cap T_{\\pi(k)}|` over injective matchings
        :math:`\\pi` of the :math:`\\min(K, K^0)` matched pairs; unmatched clusters count as
        errors.  The matching is the Hungarian algorithm
        (``scipy.optimize.linear_sum_assignment``) on the contingency table.

    See Also
    --------
    consistency_index : the same number under the name of Fred & Jain.
    match_labels : the relabelling that achieves it.

    Examples
    --------
    >>> accuracy([0, 0, 1, 1, 1], [2, 2, 0, 0, 1])
    0.8
    """
    a, b = _check_pair(labels_true, labels_pred)
    table = _contingency(a, b)
    r, c = _matching(table)
    return float(table[r, c].sum() / a.shape[0])


def consistency_index(labels_true: Any, labels_pred: Any) -> float:
    """Consistency index CI of Fred & Jain (evidence accumulation).

    Parameters
    ----------
    labels_true : array_like of int, shape (n,)
        Ground truth :math:`P^0` with :math:`K^0` classes.
    labels_pred : array_like of int, shape (n,)
        Partition :math:`P^*` with :math:`K^*` clusters.

    Returns
    -------
    float in (0, 1]
        :math:`CI(P^*, P^0) = \\frac1n \\sum_{k=1}^{\\min(K^*, K^0)} |C^*_k \\cap C^0_k|`
        with clusters put in one-to-one correspondence.  It coincides with :func:`accuracy`.

    Notes
    -----
    The papers do not say how the matching is found; following the project spec
    (``evidence_accumulation_aspect_did.md`` §1.2, ours) we use the optimal one-to-one
    assignment (Hungarian algorithm on the rectangular contingency table).  Fred (2001) used a
    greedy matching, which can give a slightly lower value when :math:`K^* \\ne K^0`.

    References
    ----------
    A. Fred, "Finding consistent clusters in data partitions", MCS 2001, LNCS 2096, 309-318.
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850.

    Examples
    --------
    >>> consistency_index([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1])
    0.8333333333333334
    """
    return accuracy(labels_true, labels_pred)


def match_labels(labels_ref: Any, labels: Any) -> np.ndarray:
    """Relabel ``labels`` so that its clusters best match the classes of ``labels_ref``.

    Parameters
    ----------
    labels_ref : array_like of int, shape (n,)
        Reference labelling.
    labels : array_like of int, shape (n,)
        Labelling to rename.

    Returns
    -------
    ndarray of int64, shape (n,)
        The same partition as ``labels``.  Each cluster matched by the Hungarian assignment of
        :func:`accuracy` takes the id of its reference class; unmatched clusters (when there
        are more clusters than classes) get fresh ids ``max(labels_ref) + 1, + 2, ...`` in
        increasing order of their original label.  Hence
        ``mean(match_labels(ref, l) == ref) == accuracy(ref, l)``.

    Examples
    --------
    >>> match_labels([0, 0, 1, 1, 1], [5, 5, 3, 3, 9])
    array([0, 0, 1, 1, 2])
    """
    ref, lab = check_labels(labels_ref, "labels_ref"), check_labels(labels, "labels")
    check_same_length(ref, lab, "labels_ref", "labels")
    classes = np.unique(ref)
    clusters, inverse = np.unique(lab, return_inverse=True)
    r, c = _matching(_contingency(ref, lab))
    new_ids = np.empty(clusters.shape[0], dtype=np.int64)
    new_ids[c] = classes[r]
    unmatched = np.setdiff1d(np.arange(clusters.shape[0]), c)  # sorted
    new_ids[unmatched] = int(classes.max()) + 1 + np.arange(unmatched.shape[0])
    return new_ids[inverse]


def co_clustering_matrix(label_draws: Any, batch_size: int = 64) -> np.ndarray:
    """Posterior similarity (co-clustering, co-association) matrix of a set of labellings.

    Parameters
    ----------
    label_draws : array_like of int, shape (S, n)
        ``S`` labellings of the same ``n`` points (posterior draws, or an ensemble).  Labels
        are compared within a draw only; each draw may use any integer values.
    batch_size : int, default 64
        Number of draws stacked into one matrix product (memory/speed trade-off only).

    Returns
    -------
    ndarray of float64, shape (n, n)
        :math:`P_{ij} = \\frac1S \\sum_s [z^{(s)}_i = z^{(s)}_j]`; symmetric, unit diagonal.

    Notes
    -----
    Each batch of draws is one-hot encoded into a single ``(n, total clusters)`` matrix
    ``Z`` (one column per cluster of each draw) and accumulated as ``Z @ Z.T``; the counts are
    exact integers in float64.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850 (co-association matrix).

    Examples
    --------
    >>> co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    draws = check_array(label_draws, "label_draws", ndim=2, min_samples=1, dtype=None)
    if draws.dtype.kind == "f":
        if not np.all(draws == np.round(draws)):
            raise ValueError("label_draws must contain integer labels, got non-integer values")
    elif draws.dtype.kind not in "iub":
        raise TypeError(f"label_draws must contain integer labels, got dtype {draws.dtype}")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    S, n = draws.shape
    # Compact labels across all draws, then give each (draw, label) pair its own column.
    _, codes = np.unique(draws, return_inverse=True)
    codes = codes.reshape(S, n)
    n_labels = int(codes.max()) + 1
    counts = np.zeros((n, n), dtype=np.float64)
    rows = np.arange(n)
    for start in range(0, S, batch_size):
        block = codes[start : start + batch_size]
        offsets = np.arange(block.shape[0])[:, None] * n_labels
        _, cols = np.unique(block + offsets, return_inverse=True)
        Z = np.zeros((n, int(cols.max()) + 1), dtype=np.float64)
        Z[np.tile(rows, block.shape[0]), cols.ravel()] = 1.0
        counts += Z @ Z.T
    return counts / S


def n_clusters(labels: Any) -> int:
    """Number of distinct labels (non-empty clusters).

    Examples
    --------
    >>> n_clusters([3, 3, -1, 7])
    3
    """
    return int(np.unique(check_labels(labels, "labels")).shape[0])


def sse(X: Any, labels: Any, centers: Any) -> float:
    """Sum of squared distances of points to their assigned centers.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        Row indices into ``centers``, in ``[0, k)``.
    centers : array_like, shape (k, d)

    Returns
    -------
    float
        :math:`\\sum_i \\lVert x_i - \\mu_{z_i} \\rVert^2`, computed in float64 with direct
        differences (no norm expansion).

    Examples
    --------
    >>> sse([[0., 0.], [2., 0.]], [0, 0], [[1., 0.]])
    2.0
    """
    X = check_array(X, "X", ndim=2, dtype=None).astype(np.float64)
    z = check_labels(labels, "labels", n_samples=X.shape[0])
    C = check_array(centers, "centers", ndim=2, dtype=None).astype(np.float64)
    if C.shape[1] != X.shape[1]:
        raise ValueError(
            f"centers has {C.shape[1]} features but X has {X.shape[1]}"
        )
    if z.min() < 0 or z.max() >= C.shape[0]:
        raise ValueError(
            f"labels must index rows of centers, i.e. lie in [0, {C.shape[0]}), "
            f"got values in [{z.min()}, {z.max()}]"
        )
    return float(np.sum((X - C[z]) ** 2))


def dp_means_objective(X: Any, labels: Any, lam: float, sample_weight: Any = None) -> float:
    """DP-means objective of a labelling, with the cluster means it implies.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        Any integer values; each distinct value is a cluster.
    lam : float
        Penalty per cluster, a **squared** distance (>= 0).
    sample_weight : array_like, shape (n,), optional
        Non-negative weights; ``None`` means unit weights.

    Returns
    -------
    float
        :math:`J = \\sum_i w_i \\lVert x_i - \\mu_{z_i} \\rVert^2 + \\lambda k`, with
        :math:`\\mu_c = \\sum_{i \\in c} w_i x_i / \\sum_{i \\in c} w_i` and :math:`k` the number
        of non-empty clusters, computed in float64 with direct differences.

    Notes
    -----
    Eq. (2) of Kulis & Jordan; the weighted form is the spec's (A3.5).  With weights, a
    cluster counts in :math:`k` when its total weight is positive (weights act as
    multiplicities, so a cluster holding only zero-weight points is empty) -- ours.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012.

    Examples
    --------
    >>> dp_means_objective([[0.], [2.], [10.]], [0, 0, 1], lam=1.0)
    4.0
    """
    X = check_array(X, "X", ndim=2, dtype=None).astype(np.float64)
    z = check_labels(labels, "labels", n_samples=X.shape[0])
    lam = check_nonnegative(lam, "lam")
    w = check_sample_weight(sample_weight, X.shape[0], dtype=np.float64)
    _, idx = np.unique(z, return_inverse=True)
    k = int(idx.max()) + 1
    mass = np.bincount(idx, weights=w, minlength=k)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, idx, w[:, None] * X)
    nonempty = mass > 0
    means = np.zeros_like(sums)
    means[nonempty] = sums[nonempty] / mass[nonempty, None]
    cost = float(np.sum(w * np.sum((X - means[idx]) ** 2, axis=1)))
    return cost + lam * int(nonempty.sum())
