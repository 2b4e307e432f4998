"""Agreement of two partitions: contingency tables, entropies, NMI and mutual information, ARI,
Hungarian-matched accuracy, the consistency index, purity, label matching; the coherence of
several partitions (their mean pairwise NMI).

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from .._validation import (
    check_array,
    check_ensemble,
    check_labels,
    check_same_length,
)

__all__ = [
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
    "match_labels",
    "coherence",
]

_AVERAGE_METHODS = ("arithmetic", "geometric", "min", "max")


def check_pair(
    labels_true: Any, labels_pred: Any, names: tuple[str, str] = ("labels_true", "labels_pred")
) -> tuple[np.ndarray, np.ndarray]:
    """Two label vectors of the same length; errors name them by ``names``."""
    a = check_labels(labels_true, names[0])
    b = check_labels(labels_pred, names[1])
    check_same_length(a, b, *names)
    return a, b


def contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Contingency table of two validated label vectors (rows: sorted values of ``a``)."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    ka, kb = int(ia.max()) + 1, int(ib.max()) + 1
    return np.bincount(ia.reshape(-1) * kb + ib.reshape(-1), minlength=ka * kb).reshape(ka, kb)


def cells(a: np.ndarray, b: np.ndarray, ka: int, kb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-zero cells of the contingency table of codes ``a`` in ``[0, ka)``, ``b`` in ``[0, kb)``.

    Returns the rows, columns and counts of the cells in row-major order (the order of
    ``np.nonzero`` on the dense table), so sums over them round exactly as on the table.
    """
    flat = a * kb + b
    if ka * kb <= 4 * flat.shape[0] + 1024:
        # One bincount, linear in n: the fast path of the ensemble indices.
        counts = np.bincount(flat, minlength=ka * kb)
        idx = np.flatnonzero(counts)
        nij = counts[idx]
    else:  # a table much larger than the data (e.g. singletons on both sides)
        idx, nij = np.unique(flat, return_counts=True)
    i, j = np.divmod(idx, kb)
    return i, j, nij.astype(np.int64)


def _table_cells(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i, j = np.nonzero(table)
    return i, j, table[i, j]


def _entropy_of_counts(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    h = float(-np.sum(p * np.log(p)))
    return h if h > 0.0 else 0.0


def _mutual_info_of_cells(i: np.ndarray, j: np.ndarray, nij: np.ndarray) -> float:
    n = nij.sum()
    rows = np.bincount(i, weights=nij)  # exact integers in float64 (n < 2**53)
    cols = np.bincount(j, weights=nij)
    # The products are exact integers in float64 (n**2 < 2**53), so independent cells give
    # log(1.0) == 0 exactly.
    ratio = (n * nij) / (rows[i] * cols[j])
    mi = float(np.sum(nij / n * np.log(ratio)))
    return mi if mi > 0.0 else 0.0


def _mutual_info_of_table(table: np.ndarray) -> float:
    return _mutual_info_of_cells(*_table_cells(table))


def nmi_of_cells(i: np.ndarray, j: np.ndarray, nij: np.ndarray, average_method: str) -> float:
    """NMI from the non-zero cells of a contingency table, with scikit-learn's conventions."""
    if nij.shape[0] == 1:  # one cell: both labellings constant
        return 1.0
    mi = _mutual_info_of_cells(i, j, nij)
    if mi == 0.0:
        return 0.0
    h_true = _entropy_of_counts(np.bincount(i, weights=nij))
    h_pred = _entropy_of_counts(np.bincount(j, weights=nij))
    if average_method == "arithmetic":
        norm = 0.5 * (h_true + h_pred)
    elif average_method == "geometric":
        norm = np.sqrt(h_true * h_pred)
    elif average_method == "min":
        norm = min(h_true, h_pred)
    else:
        norm = max(h_true, h_pred)
    return float(min(mi / norm, 1.0))


def ari_of_cells(i: np.ndarray, j: np.ndarray, nij: np.ndarray) -> float:
    """ARI from the non-zero cells of a contingency table (exact pair counts)."""
    n = int(nij.sum())
    rows = np.bincount(i, weights=nij).astype(np.int64)
    cols = np.bincount(j, weights=nij).astype(np.int64)
    # Sums of squares are at most n**2: exact in int64 below n = 2**31, Python ints beyond.
    dtype = np.int64 if n < 2**31 else object
    sum_sq = int(np.sum(nij.astype(dtype) ** 2))
    rows_sq = int(np.sum(rows.astype(dtype) ** 2))
    cols_sq = int(np.sum(cols.astype(dtype) ** 2))
    tp = sum_sq - n
    fp = cols_sq - sum_sq  # same cluster, different class
    fn = rows_sq - sum_sq  # same class, different cluster
    tn = n * n - fp - fn - sum_sq
    if fp == 0 and fn == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


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
    a, b = check_pair(labels_true, labels_pred)
    return contingency(a, b)


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


def membership_entropy(memberships: Any) -> np.ndarray:
    r"""Normalised entropy of every object's soft memberships.

    Parameters
    ----------
    memberships : array_like, shape (n, K)
        Rows on the simplex (PPC's or PEnCA's memberships).

    Returns
    -------
    ndarray of float64, shape (n,)
        :math:`h_i = -\sum_k y_{ik} \log y_{ik} / \log K` in [0, 1] (``0 \log 0 = 0``);
        all zeros when ``K = 1``.  Rota Bulò, Lourenço, Fred & Pelillo (2010), §3 (the
        uncertainty of an assignment).

    Examples
    --------
    >>> membership_entropy([[1.0, 0.0], [0.5, 0.5]]).tolist()
    [0.0, 1.0]
    """
    Y = check_array(memberships, "memberships", ndim=2, dtype=None).astype(np.float64)
    if Y.shape[1] < 2:
        return np.zeros(Y.shape[0])
    plogp = Y * np.log(np.where(Y > 0, Y, 1.0))
    return 0.0 - plogp.sum(axis=1) / np.log(Y.shape[1])  # 0.0 - x: no negative zero


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
    a, b = check_pair(labels_true, labels_pred)
    return _mutual_info_of_table(contingency(a, b))


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
    a, b = check_pair(labels_true, labels_pred)
    return nmi_of_cells(*_table_cells(contingency(a, b)), average_method)


def mean_group_nmi(labels_true: Any, labels_pred: Any, average_method: str = "arithmetic") -> float:
    """NMI computed within every data set, averaged over the data sets.

    The score of Kulis & Jordan (2012, §6.3) for clusterings of grouped data.

    Parameters
    ----------
    labels_true, labels_pred : sequence of array_like of int, shape (n_j,) each
        One labelling per data set, in the same order.
    average_method : str
        As in :func:`nmi`.

    Returns
    -------
    float

    Examples
    --------
    >>> mean_group_nmi([[0, 0, 1, 1], [0, 1]], [[5, 5, 2, 2], [0, 0]])
    0.5
    """
    for arg, name in ((labels_true, "labels_true"), (labels_pred, "labels_pred")):
        if arg is None or isinstance(arg, (str, bytes)) or not hasattr(arg, "__len__"):
            raise TypeError(f"{name} must be a list of per-data-set label arrays, got "
                            f"{type(arg).__name__}")
    if isinstance(labels_true, np.ndarray) and labels_true.ndim == 1 or not len(labels_true):
        raise ValueError("labels_true must be a non-empty list of per-data-set label arrays")
    if len(labels_true) != len(labels_pred):
        raise ValueError(f"labels_true has {len(labels_true)} data sets but labels_pred has "
                         f"{len(labels_pred)}")
    return float(np.mean([nmi(a, b, average_method) for a, b in zip(labels_true, labels_pred)]))


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
    a, b = check_pair(labels_true, labels_pred)
    return ari_of_cells(*_table_cells(contingency(a, b)))


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
    a, b = check_pair(labels_true, labels_pred)
    table = contingency(a, b)
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
    The papers do not say how the matching is found; our choice
    (docs/deviations.md#consistency-index-matching) is the optimal one-to-one
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
    ref, lab = check_pair(labels_ref, labels, ("labels_ref", "labels"))
    classes = np.unique(ref)
    clusters, inverse = np.unique(lab, return_inverse=True)
    r, c = _matching(contingency(ref, lab))
    new_ids = np.empty(clusters.shape[0], dtype=np.int64)
    new_ids[c] = classes[r]
    unmatched = np.setdiff1d(np.arange(clusters.shape[0]), c)  # sorted
    new_ids[unmatched] = int(classes.max()) + 1 + np.arange(unmatched.shape[0])
    return new_ids[inverse]


def purity(labels_true: Any, labels_pred: Any) -> float:
    """Purity: each cluster counted by the class it overlaps most (many-to-one matching).

    Parameters
    ----------
    labels_true : array_like of int, shape (n,)
        Ground truth :math:`P^0` with classes :math:`C^0_c`.
    labels_pred : array_like of int, shape (n,)
        Partition with clusters :math:`C_m`.

    Returns
    -------
    float in (0, 1]
        :math:`CI^* = \\frac1n \\sum_m \\max_c |C_m \\cap C^0_c|`: the fraction of points
        correctly clustered when every class is the union of the clusters assigned to it and
        every cluster serves one class.  Unlike :func:`consistency_index` (one-to-one),
        it tends to 1 as clusters are split: it is 1 for an all-singleton partition.

    Notes
    -----
    The :math:`CI^*` reported beside the consistency index CI of Fred & Jain (2005) in the
    dissimilarity-increments papers (Aidos & Fred, 2011), read as purity
    (docs/deviations.md#purity-ci-star); it is never lower than :func:`consistency_index`.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850.
    H. Aidos and A. Fred, "Hierarchical clustering with high order dissimilarities",
    MLDM 2011.

    Examples
    --------
    >>> purity([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])
    0.8333333333333334
    """
    a, b = check_pair(labels_true, labels_pred)
    table = contingency(a, b)
    return float(table.max(axis=0).sum() / a.shape[0])


# --- data complexity and agreement among consensus extractors -------------------------------


def coherence(partitions: Any, average_method: str = "arithmetic") -> float:
    r"""Coherence of a set of partitions: the mean NMI over all their pairs.

    The DR-EAC paper measures how much the eight consensus extractors agree on one
    embedding by the average NMI over the :math:`\binom82 = 28` pairs of their partitions.

    Parameters
    ----------
    partitions : array_like (m, n) or list of label vectors, m >= 2
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        See :func:`nmi` (``"arithmetic"`` is Fred & Jain's NMI, :math:`2I/(H_a + H_b)`).

    Returns
    -------
    float in [0, 1]
        :math:`\binom m2^{-1}\sum_{a<b} NMI(P_a, P_b)`.

    References
    ----------
    A. Lourenço, A. Fred et al., "Dimensionality reduction on the co-association matrix",
    SIMBAD deliverable D2.3 (2010), §4 (Figs. 2-3).

    Examples
    --------
    >>> coherence([[0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 0, 1]])
    0.3333333333333333
    """
    codes = check_ensemble(partitions, "partitions", allow_missing=False)
    m = codes.shape[0]
    if m < 2:
        raise ValueError(f"partitions must hold at least 2 partitions, got {m}")
    vals = [nmi(codes[a], codes[b], average_method) for a in range(m) for b in range(a + 1, m)]
    return float(np.mean(vals))
