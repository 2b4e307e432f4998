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

from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from bayesclust._validation import (
    check_array,
    check_ensemble,
    check_groups,
    check_int,
    check_labels,
    check_nonnegative,
    check_positive,
    check_same_length,
    check_sample_weight,
    integer_labels,
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
    "hard_hdp_objective",
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

_AVERAGE_METHODS = ("arithmetic", "geometric", "min", "max")


def _check_pair(
    labels_true: Any, labels_pred: Any, names: tuple[str, str] = ("labels_true", "labels_pred")
) -> tuple[np.ndarray, np.ndarray]:
    """Two label vectors of the same length; errors name them by ``names``."""
    a = check_labels(labels_true, names[0])
    b = check_labels(labels_pred, names[1])
    check_same_length(a, b, *names)
    return a, b


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Contingency table of two validated label vectors (rows: sorted values of ``a``)."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    ka, kb = int(ia.max()) + 1, int(ib.max()) + 1
    return np.bincount(ia.reshape(-1) * kb + ib.reshape(-1), minlength=ka * kb).reshape(ka, kb)


def _cells(a: np.ndarray, b: np.ndarray, ka: int, kb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _nmi_of_cells(i: np.ndarray, j: np.ndarray, nij: np.ndarray, average_method: str) -> float:
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


def _ari_of_cells(i: np.ndarray, j: np.ndarray, nij: np.ndarray) -> float:
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
    return _nmi_of_cells(*_table_cells(_contingency(a, b)), average_method)


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
    a, b = _check_pair(labels_true, labels_pred)
    return _ari_of_cells(*_table_cells(_contingency(a, b)))


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
    ref, lab = _check_pair(labels_ref, labels, ("labels_ref", "labels"))
    classes = np.unique(ref)
    clusters, inverse = np.unique(lab, return_inverse=True)
    r, c = _matching(_contingency(ref, lab))
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
    a, b = _check_pair(labels_true, labels_pred)
    table = _contingency(a, b)
    return float(table.max(axis=0).sum() / a.shape[0])


# ------------------------------------------------------------------ consensus validity indices


def _consensus_cells(consensus_labels: Any, ensemble: Any) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per partition of ``ensemble``, the non-zero cells ``(i, j, n_ij)`` of its contingency
    table with the consensus restricted to the partition's objects (rows: consensus clusters)."""
    c = check_labels(consensus_labels, "consensus_labels")
    E = check_ensemble(ensemble, "ensemble", allow_missing=True)
    if c.shape[0] != E.shape[1]:
        raise ValueError(
            f"consensus_labels has length {c.shape[0]} but the partitions of ensemble label "
            f"{E.shape[1]} objects"
        )
    _, c = np.unique(c, return_inverse=True)
    c = c.reshape(-1)
    kc = int(c.max()) + 1
    out = []
    for l, row in enumerate(E):
        # check_ensemble numbered the clusters 0..K_l-1 and kept -1 for a missing object:
        # shifted by one, the missing objects fill column 0, dropped from the cells, so the
        # table of the objects present costs one bincount and no mask.
        i, j, nij = _cells(c, row + 1, kc, int(row.max()) + 2)
        keep = j > 0
        if not keep.any():
            raise ValueError(f"ensemble[{l}] labels no object (every label is -1)")
        if not keep.all():
            i, j, nij = i[keep], j[keep], nij[keep]
        out.append((i, j - 1, nij))
    return out


def anmi(consensus_labels: Any, ensemble: Any, *, per_partition: bool = False) -> float | np.ndarray:
    """Average normalised mutual information between a consensus partition and an ensemble.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*` (any integer ids; ``-1`` is an ordinary id here).
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^1, \\dots, P^N` (:math:`N \\ge 2`), validated by
        :func:`bayesclust._validation.check_ensemble`; ``-1`` marks an object missing from a
        (sub-sampled) partition.  A :class:`~bayesclust.inference.mixtures.posterior.Posterior`
        contributes its pooled label draws.
    per_partition : bool, default False
        Return the ``N`` terms :math:`NMI(P^*_{|O_l}, P^l)` (ndarray of float64, shape
        ``(N,)``) instead of their mean: their spread gives the standard error of ANMI, or of
        the difference of two consensus partitions' ANMI paired by partition.

    Returns
    -------
    float in [0, 1]
        :math:`ANMI(P^*, \\mathbb P) = \\frac1N \\sum_{l=1}^N NMI(P^*_{|O_l}, P^l)`, with
        :math:`NMI = I / \\sqrt{H(P^*) H(P^l)}` (the geometric average, as
        :func:`nmi` with ``average_method="geometric"`` and
        ``sklearn.metrics.normalized_mutual_info_score(average_method="geometric")``),
        each term computed on the objects :math:`O_l` present in :math:`P^l`.  A term is 1
        when both partitions have one cluster on :math:`O_l` and 0 when exactly one has.

    Notes
    -----
    One contingency table (a single ``bincount``) per partition, linear in ``n``.

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002) 583-617, §2 (ANMI, eq. 3-4).

    Examples
    --------
    >>> anmi([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]])
    0.5
    >>> anmi([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]], per_partition=True).tolist()
    [1.0, 0.0]
    """
    if not isinstance(per_partition, (bool, np.bool_)):
        raise TypeError(f"per_partition must be a bool, got {type(per_partition).__name__}")
    terms = np.array([_nmi_of_cells(*cells, "geometric")
                      for cells in _consensus_cells(consensus_labels, ensemble)], np.float64)
    return terms if per_partition else float(np.mean(terms))


def acc(consensus_labels: Any, ensemble: Any, *, weighted: bool = True,
        per_partition: bool = False) -> float | np.ndarray:
    """Average cluster consistency (ACC) of a consensus partition with an ensemble.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*` with clusters :math:`C^*_k`.
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^l` with clusters :math:`C^l_m`; ``-1`` marks an object
        missing from a partition (see :func:`anmi`).
    weighted : bool, default True
        Multiply each overlap by :math:`1 - |C^*_k| / n_l`; False drops the weight.
    per_partition : bool, default False
        Return the ``N`` terms :math:`sim(P^*, P^l)` (ndarray of float64, shape ``(N,)``)
        instead of their mean (as in :func:`anmi`).

    Returns
    -------
    float in [0, 1)
        :math:`ACC(P^*, \\mathbb P) = \\frac1N \\sum_l sim(P^*, P^l)` with

        .. math::

            sim(P^*, P^l) = \\frac1{n_l} \\sum_{m=1}^{K^l} \\max_{1 \\le k \\le K^*}
            \\Big[ |C^*_k \\cap C^l_m| \\Big(1 - \\frac{|C^*_k|}{n_l}\\Big) \\Big],

        where :math:`P^*` is restricted to the :math:`n_l` objects of :math:`P^l` (cluster
        sizes :math:`|C^*_k|` counted on them).  :math:`sim` is large when every cluster of
        :math:`P^l` lies inside one consensus cluster; the weight penalises consensus
        partitions with a giant cluster (for :math:`P^l` nested in :math:`P^*` it gives
        :math:`1 - \\sum_k (|C^*_k| / n_l)^2`).  Without the weight the range is (0, 1].

    Notes
    -----
    The papers state :math:`sim` for :math:`K^l \\ge K^*`.  A partition with fewer clusters
    is scored by the same formula, neither skipped nor warned about: its clusters cannot all
    lie inside consensus clusters, so it scores lower, and the value stays finite.  A
    one-cluster consensus scores 0 with the weight (every weight is 0) and 1 without; an
    all-singleton consensus scores :math:`K^l (1 - 1/n_l) / n_l` (weighted) or
    :math:`K^l / n_l` per partition.

    The weight sits inside the maximum, as in eq. (9) of Duarte et al. (2010); the ACC paper's
    eq. (3) prints it outside, with ``k`` unbound (docs/deviations.md#acc-weight).

    References
    ----------
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009, eq. (3).
    F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
    validation", SSPR 2010, eq. (9).

    Examples
    --------
    >>> acc([0, 0, 1, 1], [[0, 1, 2, 3], [0, 0, 1, 1]])
    0.5
    >>> acc([0, 0, 1, 1], [[0, 1, 2, 3], [0, 0, 1, 1]], weighted=False)
    1.0
    """
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be a bool, got {type(weighted).__name__}")
    if not isinstance(per_partition, (bool, np.bool_)):
        raise TypeError(f"per_partition must be a bool, got {type(per_partition).__name__}")
    sims = []
    for i, j, nij in _consensus_cells(consensus_labels, ensemble):
        n_l = nij.sum()
        value = nij.astype(np.float64)
        if weighted:
            value *= 1.0 - np.bincount(i, weights=nij)[i] / n_l
        # Every column of the table has a non-zero cell and the values are >= 0, so the
        # maximum over the cells present is the maximum over all consensus clusters.
        best = np.zeros(int(j.max()) + 1)
        np.maximum.at(best, j, value)
        sims.append(best.sum() / n_l)
    return np.asarray(sims, np.float64) if per_partition else float(np.mean(sims))


class _EnsembleOneHot(NamedTuple):
    """An ensemble prepared for :func:`acc_population`: its one-hot matrix and bookkeeping."""

    B: np.ndarray  # (n, sum_l K_l) float64, column of cluster m of partition l
    observed: np.ndarray  # (n, N) float64, 1 where object i is labelled by partition l
    n_l: np.ndarray  # (N,) objects labelled by each partition
    part: np.ndarray  # (sum_l K_l,) the partition of each column
    starts: np.ndarray  # (N,) first column of each partition


def _ensemble_one_hot(ensemble: Any) -> _EnsembleOneHot:
    E = check_ensemble(ensemble, "ensemble", allow_missing=True)
    N, n = E.shape
    ks = E.max(axis=1) + 1
    if np.any(ks <= 0):
        raise ValueError(f"ensemble[{int(np.argmax(ks <= 0))}] labels no object (every label is -1)")
    starts = np.concatenate([[0], np.cumsum(ks)[:-1]]).astype(np.int64)
    obs = E >= 0
    rows, parts = np.nonzero(obs.T)
    B = np.zeros((n, int(ks.sum())))
    B[rows, E.T[rows, parts] + starts[parts]] = 1.0
    part = np.repeat(np.arange(N), ks)
    return _EnsembleOneHot(B, obs.T.astype(np.float64), obs.sum(axis=1).astype(np.float64), part, starts)


def _candidate_codes(candidates: Any, n: int, name: str = "candidates") -> np.ndarray:
    P = integer_labels(check_array(candidates, name, ndim=2, min_samples=1, dtype=None), name)
    if P.shape[1] != n:
        raise ValueError(f"{name} has {P.shape[1]} columns but the partitions of ensemble label {n} objects")
    # Renumber every row 0..K-1 in label order: the rank of each label among the row's labels,
    # read from a (rows x label range) table when the range is small (a GA's population),
    # else one np.unique per row.
    P = P.astype(np.int64)
    P = P - P.min(axis=1, keepdims=True)
    span = int(P.max()) + 1
    rows = np.arange(P.shape[0])[:, None]
    if span <= 4 * n:
        present = np.zeros((P.shape[0], span), bool)
        present[rows, P] = True
        return (np.cumsum(present, axis=1) - 1)[rows, P]
    return np.stack([np.unique(row, return_inverse=True)[1].reshape(-1) for row in P])


def _acc_population(codes: np.ndarray, prep: _EnsembleOneHot, weighted: bool = True) -> np.ndarray:
    """ACC of every row of ``codes`` ((p, n), each row in 0..K-1) against a prepared ensemble."""
    p, n = codes.shape
    kc = int(codes.max()) + 1
    A = np.zeros((p, kc, n))
    A[np.arange(p)[:, None], codes, np.arange(n)[None, :]] = 1.0
    A = A.reshape(p * kc, n)
    T = (A @ prep.B).reshape(p, kc, -1)  # |C*_k ∩ C^l_m|, exact integers in float64
    if weighted:
        sizes = (A @ prep.observed).reshape(p, kc, -1)  # |C*_k| restricted to the objects of P^l
        T = T * (1.0 - sizes / prep.n_l)[:, :, prep.part]
    best = T.max(axis=1)  # (p, sum_l K_l)
    sims = np.add.reduceat(best, prep.starts, axis=1) / prep.n_l
    return sims.mean(axis=1)


def acc_population(candidates: Any, ensemble: Any, *, weighted: bool = True) -> np.ndarray:
    r"""Average cluster consistency (:func:`acc`) of many consensus partitions at once.

    Parameters
    ----------
    candidates : array_like of int, shape (p, n)
        ``p`` consensus partitions (any integer labels per row).
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        As in :func:`acc` (``-1`` marks an object missing from a partition).
    weighted : bool, default True
        As in :func:`acc`.

    Returns
    -------
    ndarray of float64, shape (p,)
        ``acc(candidates[r], ensemble, weighted=weighted)`` for every row ``r`` (equal up to
        the rounding of the sums).

    Notes
    -----
    The contingency tables of all candidates with all partitions come from one matrix
    product of one-hot encodings, :math:`T = A^\top B` with ``A`` of shape
    ``(n, p K^*)`` and ``B`` of shape ``(n, \sum_l K^l)``; the consensus cluster sizes
    restricted to the objects of each partition from a second one with the ``(n, N)``
    indicator of the labelled objects.  Memory is ``O(p K^* (n + \sum_l K^l))``.  Used to
    score a whole population of a genetic algorithm per generation (Duarte et al., 2010,
    ACCCS).

    References
    ----------
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009, eq. (3).
    F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
    validation", SSPR 2010, eq. (9).

    Examples
    --------
    >>> acc_population([[0, 0, 1, 1], [0, 0, 0, 0]], [[0, 1, 2, 3], [0, 0, 1, 1]]).tolist()
    [0.5, 0.0]
    """
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be a bool, got {type(weighted).__name__}")
    prep = _ensemble_one_hot(ensemble)
    codes = _candidate_codes(candidates, prep.B.shape[0])
    return _acc_population(codes, prep, bool(weighted))


class Diversity(NamedTuple):
    """The four diversity indices of a consensus partition and an ensemble (see :func:`diversity`).

    Attributes
    ----------
    div1 : float
        Mean disagreement :math:`\\frac1N \\sum_l (1 - R_l)`, in [0, 1].
    div2 : float
        Standard deviation of the disagreements (denominator :math:`N - 1`), in [0, 1].
    div3 : float
        :math:`(1 - Div_1 + Div_2) / 2`, in [0, 1].
    div4 : float
        Coefficient of variation :math:`Div_2 / Div_1`; 0 when :math:`Div_1 = 0`.
    """

    div1: float
    div2: float
    div3: float
    div4: float


def diversity(consensus_labels: Any, ensemble: Any) -> Diversity:
    """Diversity indices Div1..Div4 of an ensemble with respect to a consensus partition.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*`.
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^l`, :math:`N \\ge 2`; ``-1`` marks an object missing from a
        partition (see :func:`anmi`).

    Returns
    -------
    Diversity
        With :math:`R_l = \\max(0, ARI(P^l, P^*))` (:func:`ari` on the objects of
        :math:`P^l`) and :math:`d_l = 1 - R_l`:

        .. math::

            Div_1 = \\frac1N \\sum_l d_l, \\quad
            Div_2 = \\sqrt{\\frac1{N-1} \\sum_l (d_l - Div_1)^2}, \\quad
            Div_3 = \\frac12 (1 - Div_1 + Div_2), \\quad
            Div_4 = \\frac{Div_2}{Div_1}.

        When :math:`Div_1 = 0` (every partition equals the consensus on its objects) every
        :math:`d_l` is 0, so :math:`Div_2 = 0` and :math:`Div_4` is defined as 0.  A single
        partition is rejected (``ValueError``), so the :math:`N - 1` of :math:`Div_2` is
        never 0.

    Notes
    -----
    The papers write the Rand index "in [0, 1]" but use the adjusted Rand index, which can be
    negative; it is clipped at 0 so that every :math:`d_l` lies in [0, 1]
    (docs/deviations.md#diversity-ari-clip).

    References
    ----------
    S. T. Hadjitodorov, L. I. Kuncheva and L. P. Todorova, "Moderate diversity for better
    cluster ensembles", Information Fusion 7(3) (2006) 264-275.
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009.

    Examples
    --------
    >>> diversity([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 1, 1]])
    Diversity(div1=0.0, div2=0.0, div3=0.5, div4=0.0)
    """
    d = np.array([1.0 - max(0.0, _ari_of_cells(*cells))
                  for cells in _consensus_cells(consensus_labels, ensemble)])
    div1 = float(np.mean(d))
    div2 = float(np.sqrt(np.sum((d - div1) ** 2) / (d.shape[0] - 1)))
    div4 = div2 / div1 if div1 > 0.0 else 0.0
    return Diversity(div1, div2, 0.5 * (1.0 - div1 + div2), div4)


# ------------------------------------------- internal validity indices: data and similarity space

_SPACES = ("data", "similarity")
_TIE_RTOL = 1e-9  # within-cluster sums this close are tied (the DB_s centre)
_BLOCK = 1 << 21  # entries of an (rows x n) block of distances or similarities (16 MB)


def _row_blocks(n: int, width: int):
    """Slices of ``range(n)`` whose ``(rows, width)`` blocks hold about ``_BLOCK`` entries."""
    step = max(1, _BLOCK // max(1, width))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def _check_space(space: Any) -> str:
    if space not in _SPACES:
        raise ValueError(f"space must be one of {_SPACES}, got {space!r}")
    return space


def _cluster_codes(labels: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels of ``n`` objects as codes ``0..K-1`` and the cluster sizes."""
    c = check_labels(labels, "labels", n_samples=n)
    _, c = np.unique(c, return_inverse=True)
    c = c.reshape(-1)
    return c, np.bincount(c)


def _one_hot(c: np.ndarray, k: int):
    import scipy.sparse as sp

    n = c.shape[0]
    return sp.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, k))


def _check_points(X: Any, name: str = "X") -> np.ndarray:
    return check_array(X, name, ndim=2, dtype=None).astype(np.float64)


class _Similarity(NamedTuple):
    """A validated similarity: ``dense`` (n, n) or the upper-triangle pairs with ``s > 0``."""

    n: int
    dense: np.ndarray | None
    rows: np.ndarray | None
    cols: np.ndarray | None
    vals: np.ndarray | None
    n_partitions: int | None


def _check_similarity(S: Any, name: str = "S") -> _Similarity:
    """Validate a similarity matrix (dense, scipy.sparse or a CoAssociation); diagonal ignored."""
    import scipy.sparse as sp

    n_partitions = None
    if hasattr(S, "normalized") and hasattr(S, "n_partitions"):  # a CoAssociation (duck-typed:
        n_partitions = int(S.n_partitions)  # metrics does not import inference)
        S = S.normalized()
    tol = 1e-12
    if sp.issparse(S):
        if len(S.shape) != 2 or S.shape[0] != S.shape[1]:
            raise ValueError(f"{name} must be a square matrix, got shape {S.shape}")
        M = sp.coo_matrix(S).astype(np.float64)
        M.sum_duplicates()
        r, q, v = M.row.astype(np.int64), M.col.astype(np.int64), M.data
        if v.size and not np.all(np.isfinite(v)):
            raise ValueError(f"{name} contains NaN or infinite values")
        off = r != q
        r, q, v = r[off], q[off], v[off]
        if v.size and (v.min() < -tol or v.max() > 1 + tol):
            raise ValueError(f"{name} must hold similarities in [0, 1], got values in "
                             f"[{v.min()}, {v.max()}]")
        lower = r > q
        if lower.any():  # both triangles given: they must agree
            n = S.shape[0]
            U = sp.csr_matrix((v[~lower], (r[~lower], q[~lower])), shape=(n, n))
            L = sp.csr_matrix((v[lower], (q[lower], r[lower])), shape=(n, n))
            diff = abs(U - L)
            if diff.nnz and diff.max() > tol:
                raise ValueError(f"{name} must be symmetric or hold only its upper triangle")
            r, q, v = r[~lower], q[~lower], v[~lower]
        keep = v > 0
        n = int(S.shape[0])
        if n < 1:
            raise ValueError(f"{name} must describe at least one object")
        return _Similarity(n, None, r[keep], q[keep], np.clip(v[keep], 0.0, 1.0), n_partitions)
    A = check_array(S, name, ndim=2, dtype=None)
    if A.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be a real array, got dtype {A.dtype}")
    A = A.astype(np.float64, copy=False)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}")
    n = A.shape[0]
    for blk in _row_blocks(n, n):
        part = _dense_block(A, blk, 0.5)  # the diagonal is not checked
        lo, hi = float(part.min()), float(part.max())
        if lo < -tol or hi > 1 + tol:
            raise ValueError(f"{name} must hold similarities in [0, 1], got values in [{lo}, {hi}]")
        part -= A[:, blk].T
        part[np.arange(part.shape[0]), np.arange(blk.start, blk.stop)] = 0.0
        if np.max(np.abs(part), initial=0.0) > tol:
            raise ValueError(f"{name} must be symmetric")
    return _Similarity(n, A, None, None, None, n_partitions)


def _dense_block(A: np.ndarray, blk: slice, diag: float) -> np.ndarray:
    """Rows ``blk`` of ``A`` (a copy) with their diagonal entries set to ``diag``."""
    part = A[blk].copy()
    part[np.arange(part.shape[0]), np.arange(blk.start, blk.stop)] = diag
    return part


def _own_sums(sim: _Similarity, c: np.ndarray, k: int):
    """``own_i = sum_{j in C(i), j != i} s_ij`` and the per-object cross-cluster maximum
    ``b_i = max_{k != C(i)} (1/|C_k|) sum_{j in C_k} s_ij`` (0 when ``K = 1``)."""
    n = sim.n
    sizes = np.bincount(c, minlength=k).astype(np.float64)
    own = np.zeros(n)
    b = np.zeros(n)
    if sim.dense is not None:
        Z = _one_hot(c, k)
        for blk in _row_blocks(n, max(n, k)):
            part = _dense_block(sim.dense, blk, 0.0)
            sums = np.asarray(part @ Z)  # (rows, K)
            idx = np.arange(part.shape[0])
            own[blk] = sums[idx, c[blk]]
            if k > 1:
                mean = sums / sizes
                mean[idx, c[blk]] = -np.inf
                b[blk] = mean.max(axis=1)
        return own, b
    import scipy.sparse as sp

    r, q, v = sim.rows, sim.cols, sim.vals
    same = c[r] == c[q]
    own = np.bincount(r[same], v[same], n) + np.bincount(q[same], v[same], n)
    x = ~same
    if k > 1 and x.any():
        # per (object, other cluster) sums of the stored cross pairs; a missing one is 0,
        # the start of the maximum (similarities are >= 0)
        M = sp.csr_matrix((np.concatenate([v[x], v[x]]),
                           (np.concatenate([r[x], q[x]]), np.concatenate([c[q[x]], c[r[x]]]))),
                          shape=(n, k))
        M.sum_duplicates()
        vals = M.data / sizes[M.indices]
        filled = np.flatnonzero(np.diff(M.indptr))
        b[filled] = np.maximum.reduceat(vals, M.indptr[filled])
    return own, b


def _silhouette_values(a: np.ndarray, b: np.ndarray, single: np.ndarray) -> np.ndarray:
    """``(a - b) / max(a, b)``, 0 where both are 0 and for singletons."""
    den = np.maximum(a, b)
    s = np.divide(a - b, den, out=np.zeros_like(a), where=den > 0)
    s[single] = 0.0
    return s


def silhouette(X_or_S: Any, labels: Any, *, space: str = "data") -> float:
    """Silhouette of a partition, in data space (Euclidean) or in similarity space.

    Parameters
    ----------
    X_or_S : array_like, shape (n, d); or similarity, shape (n, n)
        ``space="data"``: the points ``X``.  ``space="similarity"``: a similarity ``S`` with
        values in [0, 1] -- a dense symmetric ndarray, a ``scipy.sparse`` matrix holding
        either only the upper triangle (``i < j``, as
        :meth:`~bayesclust.inference.consensus.coassociation.CoAssociation.normalized` returns it) or
        both triangles (then symmetric), or a
        :class:`~bayesclust.inference.consensus.coassociation.CoAssociation`.  A pair missing from a
        sparse matrix has similarity 0; the diagonal is ignored (:math:`s_{ii} = 1`)
        (docs/deviations.md#similarity-space-input).
    labels : array_like of int, shape (n,)
        The partition (any integer ids).
    space : {"data", "similarity"}, default "data"

    Returns
    -------
    float in [-1, 1] (maximise)
        :math:`S = \\frac1n \\sum_i s_i`.  Data space (Rousseeuw 1987): :math:`a_i` is the mean
        distance from :math:`x_i` to the other members of its cluster :math:`C_l`,
        :math:`b_i = \\min_{k \\ne l} \\frac1{|C_k|} \\sum_{j \\in C_k} \\lVert x_i - x_j
        \\rVert`, :math:`s_i = (b_i - a_i) / \\max(a_i, b_i)` -- equal to
        ``sklearn.metrics.silhouette_score``.  Similarity space (Lourenço & Fred 2010):

        .. math::

            a^s_i = \\frac1{|C_l| - 1} \\sum_{j \\in C_l, j \\ne i} s_{ij}, \\quad
            b^s_i = \\max_{k \\ne l} \\frac1{|C_k|} \\sum_{j \\in C_k} s_{ij}, \\quad
            s^s_i = \\frac{a^s_i - b^s_i}{\\max(a^s_i, b^s_i)}.

        :math:`s_i = 0` for a singleton and when both terms are 0; :math:`S = 0` for a
        one-cluster partition (docs/deviations.md#validity-degenerate-partitions).

    Notes
    -----
    Data space: distances by direct differences, in row blocks (memory :math:`O(n)` per
    block row, time :math:`O(n^2 d)`).  A sparse similarity is never densified: the
    per-cluster sums come from the stored pairs (cost :math:`O(\\mathrm{nnz} \\log
    \\mathrm{nnz})`); a dense one is processed in row blocks.

    References
    ----------
    P. J. Rousseeuw, "Silhouettes: a graphical aid to the interpretation and validation of
    cluster analysis", J. Comput. Appl. Math. 20 (1987) 53-65.
    A. Lourenço and A. Fred, consensus clustering validation, SIMBAD deliverable D2.3 (2010).

    Examples
    --------
    >>> round(silhouette([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1]), 6)
    0.899749
    >>> S = [[1, .8, 0, 0], [.8, 1, 0, 0], [0, 0, 1, .6], [0, 0, .6, 1]]
    >>> silhouette(S, [0, 0, 1, 1], space="similarity")
    1.0
    """
    space = _check_space(space)
    if space == "similarity":
        sim = _check_similarity(X_or_S, "S")
        c, sizes = _cluster_codes(labels, sim.n)
        k = sizes.shape[0]
        if k == 1:
            return 0.0
        own, b = _own_sums(sim, c, k)
        a = own / np.maximum(sizes[c] - 1, 1)
        return float(np.mean(_silhouette_values(a, b, sizes[c] == 1)))
    from scipy.spatial.distance import cdist

    X = _check_points(X_or_S)
    n = X.shape[0]
    c, sizes = _cluster_codes(labels, n)
    k = sizes.shape[0]
    if k == 1:
        return 0.0
    Z = _one_hot(c, k)
    a = np.empty(n)
    b = np.empty(n)
    for blk in _row_blocks(n, max(n, k)):
        sums = np.asarray(cdist(X[blk], X) @ Z)
        idx = np.arange(sums.shape[0])
        a[blk] = sums[idx, c[blk]] / np.maximum(sizes[c[blk]] - 1, 1)
        mean = sums / sizes
        mean[idx, c[blk]] = np.inf
        b[blk] = mean.min(axis=1)
    # (b - a) / max(a, b) is the similarity form with the roles of a and b exchanged
    return float(np.mean(_silhouette_values(b, a, sizes[c] == 1)))


def dunn(X_or_S: Any, labels: Any, *, space: str = "data") -> float:
    """Dunn's index of a partition, in data space (Euclidean) or in similarity space.

    Parameters
    ----------
    X_or_S, labels, space
        As in :func:`silhouette`.

    Returns
    -------
    float >= 0 (maximise)
        Data space (Dunn 1974), with the single-link distance between clusters and the
        largest within-cluster distance as diameter:

        .. math::

            D = \\frac{\\min_{q \\ne r} \\min_{i \\in C_q, j \\in C_r} \\lVert x_i - x_j \\rVert}
                      {\\max_p \\max_{i, j \\in C_p} \\lVert x_i - x_j \\rVert}.

        Similarity space (Lourenço & Fred 2010), with :math:`sim(C_q, C_r) = \\max_{i \\in
        C_q, j \\in C_r} s_{ij}` and :math:`diam_s(C_p) = \\min_{i \\ne j \\in C_p} s_{ij}`
        (1 for a singleton):

        .. math::

            D_s = \\frac{\\min_p diam_s(C_p)}{\\max_{q \\ne r} sim(C_q, C_r) + 1} \\in [0, 1].

        One cluster: :math:`D = D_s = 0`.  Data space, all singletons (no diameter): 0; a
        zero largest diameter with separated clusters (coincident points only) gives
        ``inf``, and 0/0 gives 0 (docs/deviations.md#validity-degenerate-partitions).

    Notes
    -----
    Data space: :math:`O(n^2 d)` time in row blocks.  Sparse similarity: a cluster whose
    pairs are not all stored has :math:`diam_s = 0` (a missing pair is 0), found by counting
    its stored pairs; nothing is densified.

    References
    ----------
    J. C. Dunn, "Well-separated clusters and optimal fuzzy partitions", J. Cybernetics 4(1)
    (1974) 95-104.
    A. Lourenço and A. Fred, consensus clustering validation, SIMBAD deliverable D2.3 (2010).

    Examples
    --------
    >>> dunn([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1])
    9.0
    >>> S = [[1, .8, .1, 0], [.8, 1, 0, 0], [.1, 0, 1, .6], [0, 0, .6, 1]]
    >>> round(dunn(S, [0, 0, 1, 1], space="similarity"), 6)  # 0.6 / 1.1
    0.545455
    """
    space = _check_space(space)
    if space == "similarity":
        sim = _check_similarity(X_or_S, "S")
        c, sizes = _cluster_codes(labels, sim.n)
        k = sizes.shape[0]
        if k == 1:
            return 0.0
        diam = np.full(k, np.inf)
        if sim.dense is not None:
            between = 0.0
            for blk in _row_blocks(sim.n, sim.n):
                part = _dense_block(sim.dense, blk, np.inf)
                same = c[blk][:, None] == c[None, :]
                np.minimum.at(diam, c[blk], np.where(same, part, np.inf).min(axis=1))
                part[np.arange(part.shape[0]), np.arange(blk.start, blk.stop)] = 0.0
                between = max(between, float(np.where(same, -np.inf, part).max()))
        else:
            r, q, v = sim.rows, sim.cols, sim.vals
            same = c[r] == c[q]
            between = float(v[~same].max()) if (~same).any() else 0.0
            stored = np.bincount(c[r[same]], minlength=k)
            np.minimum.at(diam, c[r[same]], v[same])
            pairs = sizes.astype(np.int64) * (sizes - 1) // 2
            diam[(sizes > 1) & (stored < pairs)] = 0.0  # a missing pair inside the cluster
        diam[sizes == 1] = 1.0
        return float(diam.min() / (between + 1.0))
    from scipy.spatial.distance import cdist

    X = _check_points(X_or_S)
    n = X.shape[0]
    c, sizes = _cluster_codes(labels, n)
    if sizes.shape[0] == 1 or np.all(sizes == 1):
        return 0.0
    largest, nearest = 0.0, np.inf
    for blk in _row_blocks(n, n):
        D = cdist(X[blk], X)
        same = c[blk][:, None] == c[None, :]
        largest = max(largest, float(np.where(same, D, 0.0).max()))
        nearest = min(nearest, float(np.where(same, np.inf, D).min()))
    if largest == 0.0:
        return np.inf if nearest > 0.0 else 0.0
    return nearest / largest


def _worst_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0/0 = 0 and x/0 = inf for x > 0."""
    out = np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)
    out[(den <= 0) & (num > 0)] = np.inf
    return out


def davies_bouldin(X_or_S: Any, labels: Any, *, space: str = "data") -> float:
    """Davies--Bouldin index of a partition, in data space (Euclidean) or similarity space.

    Parameters
    ----------
    X_or_S, labels, space
        As in :func:`silhouette`.

    Returns
    -------
    float >= 0 (minimise)
        Data space (Davies & Bouldin 1979), with centroids :math:`\\nu_k` and
        :math:`\\Delta_k` the mean distance of the members of :math:`C_k` to :math:`\\nu_k`:

        .. math::

            DB = \\frac1K \\sum_k \\max_{m \\ne k}
                 \\frac{\\Delta_k + \\Delta_m}{\\lVert \\nu_k - \\nu_m \\rVert},

        equal to ``sklearn.metrics.davies_bouldin_score``.  Similarity space (Lourenço &
        Fred 2010), with the centre :math:`\\nu_k = \\arg\\max_{i \\in C_k} \\sum_{j \\in
        C_k, j \\ne i} s_{ij}` (ties, equal up to a relative :math:`10^{-9}`: the
        smallest index) and :math:`\\Delta_s(C_k)` the mean similarity over the pairs :math:`i < j` of :math:`C_k` (1 for a singleton):

        .. math::

            DB_s = \\frac1K \\sum_k \\max_{m \\ne k}
                   \\frac{s(\\nu_k, \\nu_m)}{\\Delta_s(C_k) + \\Delta_s(C_m)}.

        One cluster: ``inf`` for both.  A ratio 0/0 counts 0 and x/0 (x > 0) counts ``inf``
        (two clusters with the same centroid; two clusters of zero internal similarity whose
        centres are similar).  All singletons: :math:`DB = 0` as in scikit-learn,
        :math:`DB_s = \\frac1n \\sum_i \\max_{j \\ne i} s_{ij} / 2`
        (docs/deviations.md#validity-degenerate-partitions,
        docs/deviations.md#db-similarity).

    Notes
    -----
    A sparse similarity is never densified: :math:`s(\\nu_k, \\nu_m)` is read from the stored
    pairs between centres (a missing one is 0) and the maxima taken per stored pair.

    References
    ----------
    D. L. Davies and D. W. Bouldin, "A cluster separation measure", IEEE TPAMI 1(2) (1979)
    224-227.
    A. Lourenço and A. Fred, consensus clustering validation, SIMBAD deliverable D2.3 (2010).

    Examples
    --------
    >>> davies_bouldin([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1])
    0.1
    >>> S = [[1, .8, .1, 0], [.8, 1, 0, 0], [.1, 0, 1, .6], [0, 0, .6, 1]]
    >>> round(davies_bouldin(S, [0, 0, 1, 1], space="similarity"), 6)  # 0.1 / 1.4
    0.071429
    """
    space = _check_space(space)
    if space == "similarity":
        sim = _check_similarity(X_or_S, "S")
        n = sim.n
        c, sizes = _cluster_codes(labels, n)
        k = sizes.shape[0]
        if k == 1:
            return np.inf
        own, _ = _own_sums(sim, c, k)
        # Centre: the largest within-cluster sum, ties (equal up to round-off, which differs
        # between the sparse and dense summation orders) to the smallest index.
        best = np.full(k, -np.inf)
        np.maximum.at(best, c, own)
        top = own >= best[c] - _TIE_RTOL * np.maximum(1.0, np.abs(best[c]))
        centres = np.full(k, n)
        np.minimum.at(centres, c[top], np.flatnonzero(top))
        pairs = sizes * (sizes - 1) / 2.0
        delta = np.divide(np.bincount(c, own, k) / 2.0, pairs, out=np.ones(k), where=pairs > 0)
        worst = np.zeros(k)
        if sim.dense is not None:
            for blk in _row_blocks(k, k):
                T = sim.dense[np.ix_(centres[blk], centres)]
                T[np.arange(T.shape[0]), np.arange(blk.start, blk.stop)] = 0.0
                worst[blk] = _worst_ratio(T, delta[blk, None] + delta[None, :]).max(axis=1)
        else:
            r, q, v = sim.rows, sim.cols, sim.vals
            is_centre = np.zeros(n, bool)
            is_centre[centres] = True
            sel = is_centre[r] & is_centre[q]
            kr, kq = c[r[sel]], c[q[sel]]
            ratio = _worst_ratio(v[sel], delta[kr] + delta[kq])
            np.maximum.at(worst, kr, ratio)
            np.maximum.at(worst, kq, ratio)
        return float(worst.mean())
    from scipy.spatial.distance import cdist

    X = _check_points(X_or_S)
    n = X.shape[0]
    c, sizes = _cluster_codes(labels, n)
    k = sizes.shape[0]
    if k == 1:
        return np.inf
    nu = np.stack([np.bincount(c, X[:, f], k) for f in range(X.shape[1])], axis=1) / sizes[:, None]
    delta = np.bincount(c, np.sqrt(np.sum((X - nu[c]) ** 2, axis=1)), k) / sizes
    if not np.any(delta > 0):
        return 0.0  # every cluster a point (or coincident points), as scikit-learn
    worst = np.zeros(k)
    for blk in _row_blocks(k, k):
        d = cdist(nu[blk], nu)
        num = delta[blk, None] + delta[None, :]
        num[np.arange(d.shape[0]), np.arange(blk.start, blk.stop)] = 0.0
        worst[blk] = _worst_ratio(num, d).max(axis=1)
    return float(worst.mean())


def calinski_harabasz(X: Any, labels: Any) -> float:
    r"""Calinski-Harabasz index (variance ratio criterion) of a partition of data.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        At least 2 and at most ``n - 1`` clusters.

    Returns
    -------
    float >= 0 (maximise)
        .. math::

            CH = \frac{\mathrm{tr}(B) / (K - 1)}{\mathrm{tr}(W) / (n - K)},\quad
            \mathrm{tr}(B) = \sum_k n_k \lVert \bar x_k - \bar x \rVert^2,\quad
            \mathrm{tr}(W) = \sum_i \lVert x_i - \bar x_{c_i} \rVert^2;

        ``inf`` when every cluster is a single point repeated (``tr(W) = 0 < tr(B)``), 1 when
        both traces are 0 (scikit-learn's convention).

    References
    ----------
    T. Caliński and J. Harabasz, "A dendrite method for cluster analysis", Communications in
    Statistics 3(1) (1974) 1-27.

    Examples
    --------
    >>> round(calinski_harabasz([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1]), 6)
    200.0
    """
    X = _check_points(X, "X")
    c = check_labels(labels, "labels", n_samples=X.shape[0])
    _, c = np.unique(c, return_inverse=True)
    c = c.reshape(-1)
    n, k = X.shape[0], int(c.max()) + 1
    if not 2 <= k <= n - 1:
        raise ValueError(f"labels must have between 2 and n - 1 = {n - 1} clusters, got {k}")
    Xc = X - X.mean(axis=0)
    sizes = np.bincount(c, minlength=k).astype(np.float64)
    means = np.zeros((k, X.shape[1]))
    np.add.at(means, c, Xc)
    means /= sizes[:, None]
    between = float(np.sum(sizes * np.sum(means**2, axis=1)))
    within = float(np.sum((Xc - means[c]) ** 2))
    if within == 0.0:
        return 1.0 if between == 0.0 else float("inf")
    return between * (n - k) / (within * (k - 1))


def _nearest_by_similarity(sim: _Similarity, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` most similar objects ``j != i`` of every object (ties: smaller
    ``j`` first) and the similarity of the last of them."""
    n, K = sim.n, n_neighbors
    nbr = np.empty((n, K), np.int64)
    low = np.zeros(n)
    if sim.dense is not None:
        for blk in _row_blocks(n, n):
            part = _dense_block(sim.dense, blk, -np.inf)
            idx = np.argsort(-part, axis=1, kind="stable")[:, :K]
            nbr[blk] = idx
            low[blk] = part[np.arange(idx.shape[0]), idx[:, -1]]
        return nbr, low
    r, q, v = sim.rows, sim.cols, sim.vals
    src, dst, val = np.concatenate([r, q]), np.concatenate([q, r]), np.concatenate([v, v])
    order = np.lexsort((dst, -val, src))
    src, dst, val = src[order], dst[order], val[order]
    degree = np.bincount(src, minlength=n)
    start = np.concatenate([[0], np.cumsum(degree)[:-1]])
    rank = np.arange(src.shape[0]) - start[src]
    keep = rank < K
    nbr[src[keep], rank[keep]] = dst[keep]
    full = degree >= K
    low[full] = val[start[full] + K - 1]
    # Objects with fewer than K stored pairs: the rest of their neighbours have similarity
    # 0, taken by index from the objects not stored with them.
    for i in np.flatnonzero(~full):
        d = int(degree[i])
        taken = np.append(dst[start[i] : start[i] + d], i)
        cand = np.arange(K + d + 1)
        nbr[i, d:] = cand[~np.isin(cand, taken)][: K - d]
    return nbr, low


def likelihood_index(
    labels: Any,
    *,
    S: Any = None,
    X: Any = None,
    n_neighbors: int | None = None,
    eps: float | None = None,
) -> float:
    """Log of the k-nearest-neighbour likelihood of a partition (Lourenço & Fred 2010).

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The partition :math:`\\{C_k\\}`.
    S : similarity, shape (n, n), optional
        As in :func:`silhouette` (dense, ``scipy.sparse`` upper triangle or symmetric, or a
        ``CoAssociation``); chooses the neighbours when given.
    X : array_like, shape (n, d), optional
        The points; with ``S`` the diameters are Euclidean (:math:`L_o`); alone, the
        neighbours are the Euclidean nearest too.  At least one of ``S`` and ``X``.
    n_neighbors : int, optional
        :math:`K_N`, in ``[1, n)``; default :math:`\\lceil \\sqrt n \\rceil` (capped at
        ``n - 1``).
    eps : float, optional
        Replaces a zero diameter.  Default :math:`1/(2N)` when ``S`` is a ``CoAssociation``
        of :math:`N` partitions, else ``1e-3``.

    Returns
    -------
    float <= 0 (maximise)
        :math:`\\log L` with

        .. math::

            L = \\prod_i \\frac1{V_i} \\sum_k \\frac{|C_k \\cap KNN(i)|}{|C_k|}, \\qquad
            V_i = \\alpha\\, diam_i, \\qquad
            \\alpha = \\sum_i \\frac1{diam_i} \\sum_k \\frac{|C_k \\cap KNN(i)|}{|C_k|},

        so the densities :math:`p_i` sum to 1.  :math:`KNN(i)` are the :math:`K_N` objects
        :math:`j \\ne i` of largest :math:`s_{ij}` (ties: smaller :math:`j` first; a pair
        missing from a sparse ``S`` is 0), or of smallest distance when only ``X`` is given.
        :math:`diam_i = 2(1 - \\min_{j \\in KNN(i)} s_{ij})` (:math:`L_s`, ``S`` only) or
        :math:`2 \\max_{j \\in KNN(i)} \\lVert x_i - x_j \\rVert` (:math:`L_o`, ``X`` given);
        a zero diameter is replaced by ``eps``.  Computed in log space (log-sum-exp for
        :math:`\\alpha`): always finite.

    Notes
    -----
    Conventions (ties, ``eps``, :math:`K_N`, neighbours from ``X`` alone):
    docs/deviations.md#likelihood-index-conventions.  A sparse ``S`` is never densified:
    the neighbours come from sorting the stored pairs by object and similarity.

    References
    ----------
    A. Lourenço and A. Fred, consensus clustering validation, SIMBAD deliverable D2.3 (2010).

    Examples
    --------
    >>> S = [[1, .9, 0, 0], [.9, 1, 0, 0], [0, 0, 1, .9], [0, 0, .9, 1]]
    >>> round(likelihood_index([0, 0, 1, 1], S=S, n_neighbors=1), 6)  # 4 equal p_i: 4 log(1/4)
    -5.545177
    """
    from scipy.special import logsumexp

    if S is None and X is None:
        raise ValueError("likelihood_index needs S or X (got neither)")
    sim = _check_similarity(S, "S") if S is not None else None
    pts = _check_points(X) if X is not None else None
    n = sim.n if sim is not None else pts.shape[0]
    if pts is not None and pts.shape[0] != n:
        raise ValueError(f"X has {pts.shape[0]} rows but S describes {n} objects")
    c, sizes = _cluster_codes(labels, n)
    if n < 2:
        raise ValueError(f"likelihood_index needs at least 2 objects, got {n}")
    if n_neighbors is None:
        n_neighbors = min(int(np.ceil(np.sqrt(n))), n - 1)
    n_neighbors = check_int(n_neighbors, "n_neighbors", minimum=1)
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors must be < n = {n}, got {n_neighbors}")
    if eps is None:
        eps = 1.0 / (2 * sim.n_partitions) if sim is not None and sim.n_partitions else 1e-3
    eps = check_positive(eps, "eps")
    if sim is not None:
        nbr, low = _nearest_by_similarity(sim, n_neighbors)
        diam = 2.0 * (1.0 - low)
    else:
        from scipy.spatial.distance import cdist

        nbr = np.empty((n, n_neighbors), np.int64)
        diam = np.empty(n)
        for blk in _row_blocks(n, n):
            D = cdist(pts[blk], pts)
            D[np.arange(D.shape[0]), np.arange(blk.start, blk.stop)] = np.inf
            nbr[blk] = np.argsort(D, axis=1, kind="stable")[:, :n_neighbors]
    if pts is not None:
        for blk in _row_blocks(n, n_neighbors * pts.shape[1]):
            gap = pts[nbr[blk]] - pts[blk, None, :]
            diam[blk] = 2.0 * np.sqrt(np.max(np.sum(gap**2, axis=2), axis=1))
    diam = np.where(diam > 0, diam, eps)
    # sum_k |C_k & KNN(i)| / |C_k| = sum_{j in KNN(i)} 1 / |C(j)|  (> 0)
    mass = np.sum(1.0 / sizes[c[nbr]], axis=1)
    log_w = np.log(mass) - np.log(diam)
    return float(np.sum(log_w) - n * logsumexp(log_w))


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
    draws = _check_label_draws(label_draws)
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


def explained_variance(X: Any, labels: Any) -> np.ndarray:
    r"""Share of each feature's variance explained by a partition (between / total).

    .. math::

        R^2_f = \frac{\sum_j N_j (\bar x_{jf} - \bar x_f)^2}{\sum_i (x_{if} - \bar x_f)^2}

    (the correlation ratio :math:`\eta^2` of feature ``f`` on the cluster labels).
    Used to read Kaski et al. (2005) Fig. 1: discriminative cells explain the
    class-changing direction only.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)

    Returns
    -------
    ndarray of float64, shape (d,)
        In [0, 1]; a constant feature gets 0.

    Examples
    --------
    >>> explained_variance([[0., 5.], [0., 7.], [2., 5.], [2., 7.]], [0, 0, 1, 1]).tolist()
    [1.0, 0.0]
    """
    X = check_array(X, "X", ndim=2, dtype=None).astype(np.float64)
    z = check_labels(labels, "labels", n_samples=X.shape[0])
    _, z = np.unique(z, return_inverse=True)
    counts = np.bincount(z).astype(np.float64)
    means = np.stack([np.bincount(z, X[:, f]) for f in range(X.shape[1])], axis=1) / counts[:, None]
    centred = means - X.mean(0)
    between = (counts[:, None] * centred**2).sum(0)
    total = ((X - X.mean(0)) ** 2).sum(0)
    return np.divide(between, total, out=np.zeros_like(total), where=total > 0)


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
    Eq. (2) of Kulis & Jordan; the weighted form is ours (docs/deviations.md#dpmeans-weighted-rule).  With weights, a
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


def _stacked_group_labels(labels: Any, name: str, order: np.ndarray) -> np.ndarray:
    """Per-group label arrays (or one flat vector in input row order) in stacked order."""
    if isinstance(labels, (list, tuple)) and labels and all(np.ndim(lab) == 1 for lab in labels):
        parts = [check_labels(lab, f"{name}[{j}]") for j, lab in enumerate(labels)]
        flat = np.concatenate(parts) if parts else np.empty(0, np.int64)
    else:
        flat = check_labels(labels, name)
    if flat.shape[0] != order.shape[0]:
        raise ValueError(
            f"{name} has {flat.shape[0]} labels in total but the data sets have "
            f"{order.shape[0]} points"
        )
    return flat[order]


def dc_log_posterior(
    labels: Any,
    classes: Any,
    *,
    n_clusters: int | None = None,
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    include_norm: bool = False,
) -> float:
    r"""Discriminative-clustering log posterior of a partition given class labels.

    .. math::

        \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - \sum_j \log\Gamma(N^0 + N_j)

    with :math:`n_{ji}` the number of class-``i`` points in cluster ``j`` (Kaski,
    Sinkkonen & Klami 2005, eq. 9; the paper's test-set cost is its negative, with
    hard Voronoi clusters of the held-out points).  Higher is better.  Computed by
    :func:`bayesclust.kernels.polya_log_evidence` (the same log-gamma count term the
    model and its optimisers use; this is the one metric that imports ``kernels``).

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        Cluster of every point, ``0..n_clusters-1``.
    classes : array_like of int, shape (n,)
        Auxiliary class of every point, ``0..n_classes-1``.
    n_clusters, n_classes : int, optional
        Default ``max + 1``; empty clusters contribute ``log Gamma(N^0)`` terms that
        cancel only with ``include_norm``.
    n0 : float
        Dirichlet prior count per class (> 0).
    lam_eq : float
        Equal-size regulariser :math:`\lambda_{EQ}` (eq. 12); 0 for the plain score.
    include_norm : bool
        Add :math:`K(\log\Gamma(N^0) - \sum_i \log\Gamma(n^0_i))`, the exact Polya log
        marginal (comparable across ``K``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(dc_log_posterior([0, 0, 1, 1], [0, 0, 1, 1]), 4)  # pure clusters
    -2.1972
    >>> round(dc_log_posterior([0, 0, 1, 1], [0, 1, 0, 1]), 4)  # uninformative clusters
    -3.5835
    """
    from .kernels import polya_log_evidence

    labels = check_labels(labels, "labels")
    classes = check_labels(classes, "classes")
    check_same_length(labels, classes, "labels", "classes")
    n0 = check_positive(n0, "n0")
    K = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
    C = int(classes.max()) + 1 if n_classes is None else int(n_classes)
    if labels.min() < 0 or labels.max() >= K:
        raise ValueError(f"labels must lie in [0, {K}), got values in [{labels.min()}, {labels.max()}]")
    if classes.min() < 0 or classes.max() >= C:
        raise ValueError(f"classes must lie in [0, {C}), got values in [{classes.min()}, {classes.max()}]")
    table = np.zeros((K, C))
    np.add.at(table, (labels, classes), 1.0)
    return float(polya_log_evidence(table, n0, lam_eq, include_norm))


def hard_hdp_objective(
    groups: Any,
    labels: Any,
    lam_local: float,
    lam_global: float,
    *,
    local_labels: Any = None,
    group_ids: Any = None,
) -> float:
    """Hard Gaussian HDP objective (Kulis & Jordan eq. 5) of a grouped labelling.

    Parameters
    ----------
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets (with ``group_ids``: one array ``X`` and the data set of each row).
    labels : list of array_like of int, or array_like of int, shape (n,)
        Global cluster of every point: one array per data set (as
        ``HardHDPResult.labels``), or one vector aligned with the rows of ``X`` (or of
        the concatenated data sets).  Any integer values.
    lam_local, lam_global : float
        Penalties per local and per global cluster (squared distances, >= 0).
    local_labels : same form as ``labels``, optional
        Local cluster of every point (numbered within each data set).  Every local
        cluster must lie in one global cluster.  Default: one local cluster per
        (data set, global cluster) pair, the fewest the global labelling allows.
    group_ids : array_like of int, shape (n,), optional
        Data set of every row of ``X = groups``.

    Returns
    -------
    float
        :math:`\\sum_p \\sum_{x \\in \\ell_p} \\lVert x - \\mu_p \\rVert^2 + \\lambda_\\ell k +
        \\lambda_g g`, with :math:`\\mu_p` the mean of global cluster :math:`p` over all data
        sets, :math:`k` the total number of local clusters, :math:`g` the number of
        global clusters; float64, direct differences.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012, eq. (5).

    Examples
    --------
    >>> X0, X1 = [[0.0], [2.0]], [[0.0], [10.0]]
    >>> round(hard_hdp_objective([X0, X1], [[0, 0], [0, 1]], 1.0, 5.0), 4)  # 24/9 + 3 + 10
    15.6667
    """
    X, gid, order, _ = check_groups(groups, group_ids)
    X = X.astype(np.float64)
    lam_local = check_nonnegative(lam_local, "lam_local")
    lam_global = check_nonnegative(lam_global, "lam_global")
    z = _stacked_group_labels(labels, "labels", order)
    _, g_idx = np.unique(z, return_inverse=True)
    g_idx = g_idx.reshape(-1)
    g = int(g_idx.max()) + 1
    if local_labels is None:
        k = np.unique(np.stack([gid, g_idx]), axis=1).shape[1]
    else:
        loc = _stacked_group_labels(local_labels, "local_labels", order)
        pairs = np.unique(np.stack([gid, loc]), axis=1).shape[1]
        if np.unique(np.stack([gid, loc, g_idx]), axis=1).shape[1] != pairs:
            raise ValueError("local_labels: a local cluster spans several global clusters")
        k = pairs
    counts = np.bincount(g_idx, minlength=g)
    sums = np.zeros((g, X.shape[1]))
    np.add.at(sums, g_idx, X)
    means = sums / counts[:, None]
    return float(np.sum((X - means[g_idx]) ** 2)) + lam_local * k + lam_global * g


# =========================================================================================
# Partition losses and their posterior expectations
# =========================================================================================


def _xlogx(x: np.ndarray) -> np.ndarray:
    """Elementwise ``x log x`` with ``0 log 0 = 0`` (float64)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log(x[pos])
    return out


def _pairs(n: int) -> float:
    return n * (n - 1) / 2.0


def _check_label_draws(label_draws: Any, name: str = "label_draws") -> np.ndarray:
    """Validate an (S, n) integer array of labellings; returns int64."""
    draws = check_array(label_draws, name, ndim=2, min_samples=1, dtype=None)
    if draws.dtype.kind == "f":
        if not np.all(draws == np.round(draws)):
            raise ValueError(f"{name} must contain integer labels, got non-integer values")
    elif draws.dtype.kind not in "iub":
        raise TypeError(f"{name} must contain integer labels, got dtype {draws.dtype}")
    return draws.astype(np.int64)


def _check_psm(psm: Any, n: int, name: str = "psm") -> np.ndarray:
    """Validate a posterior similarity matrix: (n, n), finite, in [0, 1], symmetric."""
    P = check_array(psm, name, ndim=2, dtype=None)
    if P.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be a real array, got dtype {P.dtype}")
    P = P.astype(np.float64)
    if P.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}) to match the labels, got {P.shape}")
    tol = 1e-9
    if P.min() < -tol or P.max() > 1 + tol:
        raise ValueError(
            f"{name} must hold probabilities in [0, 1], got values in [{P.min()}, {P.max()}]"
        )
    if not np.allclose(P, P.T, rtol=0.0, atol=tol):
        raise ValueError(f"{name} must be symmetric")
    return np.clip(P, 0.0, 1.0)


def _canonical_rows(D: np.ndarray) -> np.ndarray:
    """Relabel every row of an (m, n) int array to 0..k-1 in order of first appearance."""
    m, n = D.shape
    _, codes = np.unique(D, return_inverse=True)
    codes = codes.reshape(m, n).astype(np.int64)
    V = int(codes.max()) + 1
    keys = codes + V * np.arange(m, dtype=np.int64)[:, None]
    uniq, first, inv = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    row = uniq // V  # uniq is sorted by row already
    order = np.lexsort((first, row))  # by row, then by position of first occurrence
    row_sorted = row[order]
    starts = np.searchsorted(row_sorted, row_sorted, side="left")
    rank = np.empty(uniq.shape[0], dtype=np.int64)
    rank[order] = np.arange(uniq.shape[0]) - starts
    return rank[inv.reshape(-1)].reshape(m, n)


def set_partitions(n: int):
    """Generate every partition of ``range(n)`` as a label vector.

    Parameters
    ----------
    n : int
        Number of points (>= 0).

    Yields
    ------
    ndarray of int64, shape (n,)
        The partitions as *restricted growth strings*: ``a[0] = 0`` and
        ``a[i] <= 1 + max(a[:i])``, so each partition appears exactly once with its clusters
        numbered ``0..k-1`` in order of first appearance.  They come in lexicographic order,
        starting with the one-cluster partition and ending with all singletons.  For
        ``n = 0`` the single empty partition is yielded.

    Notes
    -----
    The number of partitions is the Bell number :math:`B_n` (1, 1, 2, 5, 15, 52, 203, 877,
    4140, ... for n = 0, 1, 2, ...), so enumeration is only practical for n of about 12 or
    less; it is used for brute-force checks of partition point estimates and samplers.

    References
    ----------
    D. E. Knuth, *The Art of Computer Programming*, vol. 4A, §7.2.1.5 (Algorithm H,
    restricted growth strings), Addison-Wesley, 2011.

    Examples
    --------
    >>> [p.tolist() for p in set_partitions(3)]
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]]
    """
    n = check_int(n, "n", minimum=0)
    if n == 0:
        yield np.zeros(0, dtype=np.int64)
        return
    a = [0] * n
    prefix_max = [0] * n  # prefix_max[i] = max(a[:i]) for i >= 1
    while True:
        yield np.array(a, dtype=np.int64)
        i = n - 1
        while i >= 1 and a[i] == prefix_max[i] + 1:
            i -= 1
        if i == 0:
            return
        a[i] += 1
        for j in range(i + 1, n):
            a[j] = 0
            prefix_max[j] = max(prefix_max[j - 1], a[j - 1])


def binder_loss(labels_a: Any, labels_b: Any) -> float:
    """Binder's loss (equal costs) between two partitions, as a fraction of all pairs.

    Parameters
    ----------
    labels_a, labels_b : array_like of int, shape (n,)
        Any integer values; only the partitions matter.

    Returns
    -------
    float in [0, 1]
        The number of pairs :math:`i < j` on which the partitions disagree (together in
        one, apart in the other), divided by the number of pairs :math:`n(n-1)/2`:

        .. math::

            B(a, b) = \\binom{n}{2}^{-1} \\sum_{i<j}
                \\bigl|\\,[a_i = a_j] - [b_i = b_j]\\,\\bigr|
            = \\binom{n}{2}^{-1} \\Bigl[\\sum_r \\binom{n_{r\\cdot}}{2}
              + \\sum_c \\binom{n_{\\cdot c}}{2} - 2 \\sum_{rc} \\binom{n_{rc}}{2}\\Bigr],

        with :math:`n_{rc}` the contingency table.  0 for ``n = 1`` (no pairs).

    Notes
    -----
    Binder's (1978) loss with unit costs for both kinds of error; the normalisation by the
    number of pairs (ours; Binder and Dahl use the raw count) makes it equal to
    ``1 - rand_score``.  Cost :math:`O(n \\log n + K_a K_b)` from the contingency table.

    References
    ----------
    D. A. Binder, "Bayesian cluster analysis", Biometrika 65(1) (1978) 31-38.
    W. M. Rand, "Objective criteria for the evaluation of clustering methods", JASA 66
    (1971) 846-850.

    Examples
    --------
    >>> binder_loss([0, 0, 1, 1], [0, 0, 0, 1])  # 3 of the 6 pairs disagree
    0.5
    """
    a, b = _check_pair(labels_a, labels_b, ("labels_a", "labels_b"))
    n = a.shape[0]
    if n < 2:
        return 0.0
    table = _contingency(a, b)

    def pairs(x):
        x = x.astype(np.int64)
        return int(np.sum(x * (x - 1) // 2))

    disagree = pairs(table.sum(axis=1)) + pairs(table.sum(axis=0)) - 2 * pairs(table)
    return disagree / _pairs(n)


def variation_of_information(labels_a: Any, labels_b: Any) -> float:
    """Variation of information between two partitions (nats).

    Parameters
    ----------
    labels_a, labels_b : array_like of int, shape (n,)

    Returns
    -------
    float
        :math:`VI(a, b) = H(a) + H(b) - 2 I(a; b)`, computed from the contingency table
        :math:`n_{rc}` with margins :math:`a_r, b_c` as

        .. math::

            VI = \\frac1n \\Bigl[\\sum_r a_r \\log a_r + \\sum_c b_c \\log b_c
                 - 2 \\sum_{rc} n_{rc} \\log n_{rc}\\Bigr].

        It is a metric on partitions, 0 exactly when they coincide (returned as exactly
        0.0 then) and at most :math:`\\log n`.

    References
    ----------
    M. Meila, "Comparing clusterings -- an information based distance", Journal of
    Multivariate Analysis 98(5) (2007) 873-895.

    Examples
    --------
    >>> round(variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]), 6)  # log 2
    0.693147
    """
    a, b = _check_pair(labels_a, labels_b, ("labels_a", "labels_b"))
    table = _contingency(a, b)
    nnz = int(np.count_nonzero(table))
    if nnz == table.shape[0] == table.shape[1]:
        return 0.0  # same partition: each row and column has exactly one non-zero cell
    n = a.shape[0]
    vi = (
        _xlogx(table.sum(axis=1)).sum()
        + _xlogx(table.sum(axis=0)).sum()
        - 2.0 * _xlogx(table[table > 0]).sum()
    ) / n
    return float(max(vi, 0.0))


def expected_binder_loss(labels: Any, psm: Any) -> float:
    """Posterior expected Binder loss of a partition, from the posterior similarity matrix.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    psm : array_like, shape (n, n)
        Posterior similarity (co-clustering) matrix :math:`p_{ij} = P(c_i = c_j \\mid X)`,
        e.g. from :func:`co_clustering_matrix`; symmetric with entries in [0, 1].

    Returns
    -------
    float in [0, 1]
        .. math::

            \\mathbb E[B(\\hat c, c) \\mid X] = \\binom{n}{2}^{-1} \\sum_{i<j}
              \\bigl|\\,[\\hat c_i = \\hat c_j] - p_{ij}\\bigr|,

        which equals the mean of :func:`binder_loss` over the draws when ``psm`` is their
        co-clustering matrix (Binder's loss is linear in the pair indicators).  Same
        normalisation as :func:`binder_loss`; 0 for ``n = 1``.

    References
    ----------
    D. A. Binder, "Bayesian cluster analysis", Biometrika 65(1) (1978) 31-38.
    D. B. Dahl, "Model-based clustering for expression data via a Dirichlet process mixture
    model", in *Bayesian Inference for Gene Expression and Proteomics*, CUP (2006).

    Examples
    --------
    >>> psm = co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    >>> expected_binder_loss([0, 0, 1], psm)  # (0.5 + 0 + 0.5) / 3
    0.3333333333333333
    """
    c = check_labels(labels, "labels")
    n = c.shape[0]
    P = _check_psm(psm, n)
    if n < 2:
        return 0.0
    same = c[:, None] == c[None, :]
    iu = np.triu_indices(n, k=1)
    return float(np.sum(np.abs(same[iu] - P[iu])) / _pairs(n))


class _DrawColumns:
    """Label draws encoded for fast expected-VI computations.

    Each (draw, cluster) pair gets its own column ``t`` in ``[0, T)``; ``cols[s, i]`` is the
    column of point ``i`` in draw ``s`` and ``b_term`` is :math:`\\frac1S\\sum_s\\sum_j
    f(b_{sj})` with :math:`f(x) = x \\log x`.
    """

    def __init__(self, draws: np.ndarray):
        S, n = draws.shape
        canon = _canonical_rows(draws)
        sizes = canon.max(axis=1) + 1
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.cols = canon + offsets[:, None]
        self.T = int(sizes.sum())
        self.S, self.n = S, n
        self.fx = _xlogx(np.arange(n + 2))  # table of f(x) = x log x for integer counts
        counts = np.bincount(self.cols.ravel(), minlength=self.T)
        self.b_term = float(self.fx[counts].sum()) / S

    def expected_vi(self, c: np.ndarray) -> float:
        """Exact mean VI between compacted labels ``c`` (0..k-1) and the draws."""
        k = int(c.max()) + 1
        a_term = float(self.fx[np.bincount(c, minlength=k)].sum())
        joint = np.bincount((c[None, :] * self.T + self.cols).ravel(), minlength=k * self.T)
        vi = (a_term + self.b_term - 2.0 * float(self.fx[joint].sum()) / self.S) / self.n
        return max(vi, 0.0)


def expected_vi_loss(labels: Any, label_draws: Any) -> float:
    """Posterior expected variation of information of a partition, estimated by the draws.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    label_draws : array_like of int, shape (S, n)
        Posterior draws :math:`c^{(1)}, \\dots, c^{(S)}` of the partition (any integer ids).

    Returns
    -------
    float
        :math:`\\frac1S \\sum_s VI(\\hat c, c^{(s)})` in nats -- the Monte-Carlo estimate of
        :math:`\\mathbb E[VI(\\hat c, c) \\mid X]` (exact for the empirical distribution of the
        draws).

    Notes
    -----
    All draws are processed at once: every (draw, cluster) pair gets a column and the
    joint counts with :math:`\\hat c` come from one ``bincount``, :math:`O(nS + kT)` with
    :math:`T` the total number of clusters over the draws.

    References
    ----------
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626.

    Examples
    --------
    >>> round(expected_vi_loss([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]]), 6)  # log(2)/2
    0.346574
    """
    c = check_labels(labels, "labels")
    draws = _check_label_draws(label_draws)
    if draws.shape[1] != c.shape[0]:
        raise ValueError(
            f"label_draws must have one column per point of labels ({c.shape[0]}), "
            f"got shape {draws.shape}"
        )
    return _DrawColumns(draws).expected_vi(_canonical_rows(c[None, :])[0])


def _vi_lower_bounds(C: np.ndarray, P: np.ndarray) -> np.ndarray:
    """VI lower bound for each row of the compacted candidates C (m, n) given psm P."""
    m, n = C.shape
    log_row = np.log(P.sum(axis=1))  # sum_j p_ij >= p_ii = 1 > 0
    out = np.empty(m)
    batch = max(1, 4096 // max(1, int(C.max()) + 1))
    for start in range(0, m, batch):
        block = C[start : start + batch]
        k = int(block.max()) + 1
        cols = block + k * np.arange(block.shape[0])[:, None]
        Z = np.zeros((n, block.shape[0] * k))
        Z[np.tile(np.arange(n), block.shape[0]), cols.ravel()] = 1.0
        PZ = P @ Z  # PZ[i, col] = sum_{j in cluster col} p_ij
        size = Z.sum(axis=0)
        own = cols  # (b, n) column of each point's own cluster
        s_own = PZ[np.arange(n)[None, :], own]  # includes p_ii = 1 > 0
        terms = np.log(size[own]) + log_row[None, :] - 2.0 * np.log(s_own)
        out[start : start + block.shape[0]] = terms.mean(axis=1)
    return out


def vi_lower_bound(labels: Any, psm: Any) -> float:
    """Wade & Ghahramani's psm-based surrogate ("lower bound") of the posterior expected VI.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    psm : array_like, shape (n, n)
        Posterior similarity matrix :math:`p_{ij} = P(c_i = c_j \\mid X)`.

    Returns
    -------
    float
        .. math::

            \\mathrm{VI}_{lb}(\\hat c) = \\frac1n \\sum_{i=1}^n \\Bigl[
              \\log \\sum_j [\\hat c_j = \\hat c_i]
              + \\log \\sum_j p_{ij}
              - 2 \\log \\sum_j [\\hat c_j = \\hat c_i]\\, p_{ij}\\Bigr]

        in nats (the paper uses base 2), exactly the function of Wade & Ghahramani (2018,
        Section 3.2; ``VI.lb`` of their R package ``mcclust.ext``).  It needs only the psm,
        so it is cheap; :func:`bayesclust.inference.mixtures.point_estimates.partition_point_estimate` uses it to rank candidates.

    Notes
    -----
    Write :math:`VI(\\hat c, c) = \\frac1n \\sum_i [\\log|\\hat c(i)| + \\log|c(i)| - 2
    \\log|\\hat c(i) \\cap c(i)|]`, with :math:`c(i)` the cluster holding point :math:`i`.
    Jensen's inequality :math:`\\mathbb E \\log|\\hat c(i) \\cap c(i)| \\le \\log
    \\sum_j [\\hat c_j = \\hat c_i] p_{ij}` bounds the only :math:`\\hat c`-dependent
    expectation, so

    .. math::

        \\mathbb E[VI(\\hat c, c) \\mid X] \\ge \\mathrm{VI}_{lb}(\\hat c) - \\Delta,
        \\qquad \\Delta = \\frac1n \\sum_i \\bigl[\\log \\mathbb E|c(i)|
        - \\mathbb E \\log |c(i)|\\bigr] \\ge 0 .

    The term :math:`\\Delta` does not depend on :math:`\\hat c`, so minimising
    :math:`\\mathrm{VI}_{lb}` minimises a lower bound of the expected VI; but
    :math:`\\mathrm{VI}_{lb}` itself is *not* a lower bound in general (the paper's formula
    replaces :math:`\\mathbb E \\log|c(i)|` by the larger :math:`\\log \\sum_j p_{ij}`).

    References
    ----------
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626, Section 3.2.

    Examples
    --------
    >>> round(vi_lower_bound([0, 1], [[1.0, 0.0], [0.0, 1.0]]), 6)
    0.0
    """
    c = check_labels(labels, "labels")
    P = _check_psm(psm, c.shape[0])
    return float(_vi_lower_bounds(_canonical_rows(c[None, :]), P)[0])


# --- data complexity and agreement among consensus extractors -------------------------------


def n1_complexity(X: Any, labels: Any) -> float:
    r"""Data-complexity measure N1: the fraction of points on a class boundary of the MST.

    The Euclidean minimum spanning tree of the points is built ignoring the classes; N1 is
    the fraction of points incident to at least one tree edge that joins two different
    classes (Ho & Basu 2002).  High N1 means interleaved classes.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        The classes.

    Returns
    -------
    float in [0, 1]
        :math:`N_1 = \frac1n \lvert\{i : \exists (i, j) \in \mathrm{MST},\ y_i \ne y_j\}\rvert`.

    Notes
    -----
    The tree is :func:`scipy.sparse.csgraph.minimum_spanning_tree` of the dense distance
    matrix; a zero distance (duplicate points) is replaced by the smallest positive double so
    that it stays an edge.  With ties the tree is not unique and neither is N1.

    References
    ----------
    T. K. Ho and M. Basu, "Complexity measures of supervised classification problems",
    IEEE TPAMI 24(3) (2002) 289-300.
    A. Lourenço, A. Fred et al., "Dimensionality reduction on the co-association matrix",
    SIMBAD deliverable D2.3 (2010), §4, Table 3.

    Examples
    --------
    >>> n1_complexity([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    0.5
    """
    from scipy.sparse.csgraph import minimum_spanning_tree
    from scipy.spatial.distance import pdist, squareform

    X = check_array(X, "X", dtype=None).astype(np.float64)
    y = check_labels(labels, "labels", n_samples=X.shape[0])
    n = X.shape[0]
    if n < 2:
        return 0.0
    D = squareform(pdist(X))
    D[D == 0] = np.finfo(np.float64).tiny
    np.fill_diagonal(D, 0.0)
    tree = minimum_spanning_tree(D).tocoo()
    cross = y[tree.row] != y[tree.col]
    boundary = np.zeros(n, bool)
    boundary[tree.row[cross]] = True
    boundary[tree.col[cross]] = True
    return float(boundary.mean())


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


# --------------------------------------------------------------------------- goodness of fit


def cramer_von_mises(x: Any, cdf: Any) -> float:
    r"""Cramér-von Mises statistic of a sample against a distribution function.

    .. math::

        T = n\,\omega^2 = \frac{1}{12 n}
            + \sum_{i=1}^{n} \Big[\frac{2i - 1}{2n} - F\big(x_{(i)}\big)\Big]^2,

    :math:`x_{(1)} \le \dots \le x_{(n)}` the ordered sample (Aidos & Fred 2012, §4,
    eq. 12).  Smaller is a better fit; under the hypothesis that ``x`` is an i.i.d. sample of
    ``F`` its mean is 1/6 whatever ``F`` and ``n`` (Anderson & Darling 1952), and it grows
    like ``n`` otherwise.  Equal to ``scipy.stats.cramervonmises(x, cdf).statistic``.

    Parameters
    ----------
    x : array_like, shape (n,)
        A sample (``n >= 1``), finite.
    cdf : callable
        ``cdf(values)`` returns :math:`F` at an array of shape (n,) (the sorted sample), as
        anything NumPy converts (a JAX array too); values must lie in [0, 1].

    Returns
    -------
    float
        :math:`T`.

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D or not finite (naming ``x``), or ``cdf`` returns the wrong
        shape or values outside [0, 1] (naming ``cdf``).
    TypeError
        If ``cdf`` is not callable.

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for d-dimensional
    data: application in partitional clustering", Pattern Recognition 45 (2012), §4, eq. (12).
    T. W. Anderson and D. A. Darling, Ann. Math. Statist. 23 (1952) 193-212.

    Examples
    --------
    >>> round(cramer_von_mises([0.1, 0.5, 0.9], lambda t: t), 6)  # uniform on [0, 1]
    0.036667
    """
    xs = np.sort(check_array(x, "x", ndim=1, min_samples=1, dtype=None).astype(np.float64))
    if not callable(cdf):
        raise TypeError(f"cdf must be a callable returning F at an array, got {type(cdf).__name__}")
    F = np.asarray(cdf(xs), dtype=np.float64)
    if F.shape != xs.shape:
        raise ValueError(f"cdf must return one value per sample point: shape {xs.shape}, "
                         f"got {F.shape}")
    if not np.all((F >= 0) & (F <= 1)):  # NaN fails both
        raise ValueError("cdf must return values in [0, 1], got "
                         f"{F[~((F >= 0) & (F <= 1))][0]!r}")
    n = xs.shape[0]
    i = np.arange(1, n + 1)
    return float(1.0 / (12 * n) + np.sum(((2 * i - 1) / (2.0 * n) - F) ** 2))


def _check_distribution(p: Any, name: str) -> np.ndarray:
    arr = check_array(p, name, ndim=1, min_samples=1, dtype=None).astype(np.float64)
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative probabilities, got {arr[arr < 0][0]!r}")
    total = arr.sum()
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got all zeros")
    if not np.isfinite(total):
        raise ValueError(f"{name} sums to infinity: rescale it")
    return arr / total


def jensen_shannon(p: Any, q: Any) -> float:
    r"""Jensen-Shannon divergence of two discrete distributions (nats).

    .. math::

        JSD(P \| Q) = \tfrac12 KL(P \| M) + \tfrac12 KL(Q \| M),\qquad M = \tfrac12 (P + Q),

    :math:`KL(P \| M) = \sum_i p_i \log(p_i / m_i)`, natural logarithm, :math:`0 \log 0 = 0`
    (Aidos & Fred 2012, §4, eq. 13).  Symmetric, in :math:`[0, \log 2]`, zero iff
    :math:`P = Q`.  Equal to ``scipy.spatial.distance.jensenshannon(p, q) ** 2``.

    Parameters
    ----------
    p, q : array_like, shape (k,)
        Non-negative weights of the same ``k`` cells (a histogram, or a distribution's mass on
        the cells of a grid); each is normalised to sum 1, zero entries are allowed.

    Returns
    -------
    float in [0, log 2]

    Raises
    ------
    ValueError
        Naming ``p`` or ``q``: not 1-D, empty, not finite, a negative entry, all zeros; or
        ``p`` and ``q`` of different lengths.

    References
    ----------
    A. Aidos and A. Fred, Pattern Recognition 45 (2012), §4, eq. (13).
    J. Lin, "Divergence measures based on the Shannon entropy", IEEE Trans. Inf. Theory 37
    (1991) 145-151.

    Examples
    --------
    >>> round(jensen_shannon([1, 0], [0, 1]), 6)  # log 2: disjoint supports
    0.693147
    >>> jensen_shannon([2, 2], [0.5, 0.5])
    0.0
    """
    P = _check_distribution(p, "p")
    Q = _check_distribution(q, "q")
    if P.shape != Q.shape:
        raise ValueError(f"p and q must have the same length, got {P.shape[0]} and {Q.shape[0]}")
    M = 0.5 * (P + Q)

    def kl(a: np.ndarray) -> float:
        on = a > 0  # there m >= a / 2 > 0
        return float(np.sum(a[on] * np.log(a[on] / M[on])))

    return max(0.5 * kl(P) + 0.5 * kl(Q), 0.0)
