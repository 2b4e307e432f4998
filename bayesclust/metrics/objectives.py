"""The objectives of the hard clusterings and discriminative
clustering (SSE, explained variance, DP-means and hard-HDP objectives, eq. 9 of Kaski et al.).

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import (
    check_array,
    check_groups,
    check_int,
    check_labels,
    check_nonnegative,
    check_points,
    check_positive,
    check_same_length,
    check_sample_weight,
)

__all__ = [
    "dc_log_posterior",
    "n_clusters",
    "sse",
    "explained_variance",
    "dp_means_objective",
    "kl_means_objective",
    "hard_hdp_objective",
    "hard_dc_objective",
]

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
    X = check_points(X, "X")
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
    X = check_points(X, "X")
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
    X = check_points(X, "X")
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
        Then ``labels`` / ``classes`` must lie in ``0..n-1``, and empty clusters
        contribute ``log Gamma(N^0)`` terms that cancel only with ``include_norm``.
        Default: the ids are nominal (any integers, relabelled ``0..k-1`` in
        increasing order) and only the clusters / classes present count.
    n0 : float
        Dirichlet prior count per class (> 0).
    lam_eq : float
        Equal-size regulariser :math:`\lambda_{EQ}` (eq. 12, >= 0); 0 for the plain score.
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
    from ..kernels import polya_log_evidence

    labels = check_labels(labels, "labels")
    classes = check_labels(classes, "classes")
    check_same_length(labels, classes, "labels", "classes")
    n0 = check_positive(n0, "n0")
    lam_eq = check_nonnegative(lam_eq, "lam_eq")
    # Without a given count the ids are nominal (relabelled 0..k-1 in increasing
    # order): ids near 1e16 must not size the table.
    if n_clusters is None:
        labels = np.unique(labels, return_inverse=True)[1].reshape(-1)
        K = int(labels.max()) + 1
    else:
        K = check_int(n_clusters, "n_clusters", minimum=1)
    if n_classes is None:
        classes = np.unique(classes, return_inverse=True)[1].reshape(-1)
        C = int(classes.max()) + 1
    else:
        C = check_int(n_classes, "n_classes", minimum=1)
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


def hard_dc_objective(X: Any, classes: Any, labels: Any, lam: float, xi: float,
                      n0: float = 1.0) -> float:
    r"""HardDC objective of a labelling (minimised), with the cluster means it implies.

    .. math::

        J = \sum_i \lVert x_i - \mu_{z_i} \rVert^2 + \lambda k
            - \xi \sum_j \Big[\sum_c \log\frac{\Gamma(n_{jc} + n^0)}{\Gamma(n^0)}
            - \log\frac{\Gamma(N_j + C n^0)}{\Gamma(C n^0)}\Big]

    the DP-means objective (Kulis & Jordan 2012, eq. 2) minus ``xi`` times the exact Polya
    log evidence of the classes given the partition (Kaski et al. 2005, eq. 9 with its
    normaliser), :math:`n_{jc}` the points of class ``c`` in cluster ``j``,
    :math:`N_j = \sum_c n_{jc}`, ``C`` the number of distinct classes.  Our extension
    (docs/deviations.md#hard-dc-model); :func:`bayesclust.inference.hard.hard_dc.hard_dc`
    minimises it.

    Parameters
    ----------
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
        Auxiliary classes (nominal: any integers).
    labels : array_like of int, shape (n,)
        Any integer values; each distinct value is a cluster.
    lam : float
        Penalty per cluster (a squared distance, >= 0).
    xi : float
        Weight of the class term (>= 0).
    n0 : float
        Dirichlet prior count per class (> 0).

    Returns
    -------
    float
        float64, direct differences, log-gamma by SciPy.

    Examples
    --------
    >>> # one cluster, two points of two classes: SSE 2, lam 1, Polya 1/2 * 1/3
    >>> round(hard_dc_objective([[0.], [2.]], [0, 1], [0, 0], lam=1.0, xi=1.0), 4)  # 3 + log 6
    4.7918
    """
    from scipy.special import gammaln

    X = check_points(X, "X")
    n = X.shape[0]
    c = check_labels(classes, "classes", n_samples=n)
    z = check_labels(labels, "labels", n_samples=n)
    lam = check_nonnegative(lam, "lam")
    xi = check_nonnegative(xi, "xi")
    n0 = check_positive(n0, "n0")
    _, c = np.unique(c, return_inverse=True)
    _, z = np.unique(z, return_inverse=True)
    c, z = c.reshape(n), z.reshape(n)
    k, C = int(z.max()) + 1, int(c.max()) + 1
    counts = np.bincount(z, minlength=k).astype(np.float64)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, z, X)
    cost = float(np.sum((X - (sums / counts[:, None])[z]) ** 2)) + lam * k
    table = np.zeros((k, C))
    np.add.at(table, (z, c), 1.0)
    log_polya = (np.sum(gammaln(table + n0) - gammaln(n0))
                 - np.sum(gammaln(table.sum(1) + C * n0) - gammaln(C * n0)))
    return cost - xi * float(log_polya)


def kl_means_objective(counts: Any, labels: Any, lam: float) -> float:
    r"""KL-means objective of a labelling, with the pooled distributions it implies (host float64).

    Parameters
    ----------
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
        Non-negative count rows (a co-association gives its rows with the diagonal, as
        :func:`bayesclust.inference.hard.kl_means.kl_means` reads it).
    labels : array_like of int, shape (n,)
        Any integer values; each distinct value is a cluster.
    lam : float
        Penalty per cluster (>= 0).

    Returns
    -------
    float
        :math:`J = \sum_i n_i \mathrm{KL}(\hat p_i \| \psi_{z_i}) + \lambda k`, with
        :math:`\psi_j` the pooled distribution of cluster ``j``'s rows and ``k`` the number
        of clusters of positive total, computed as
        :math:`\sum_j \sum_y n_{jy} \log(N_j / n_{jy}) - \sum_i \sum_y r_{iy} \log(n_i / r_{iy})
        + \lambda k` (never infinite: a cluster's pooled distribution covers its rows).

    References
    ----------
    Our extension (docs/deviations.md#kl-means); Jiang, Kulis & Jordan (2012), §3;
    Hofmann & Puzicha (1998), §2.2.

    Examples
    --------
    >>> import numpy as np
    >>> round(kl_means_objective(np.array([[2.0, 0], [0, 2.0]]), [0, 0], lam=1.0), 6)   # 4 log 2 + 1
    3.772589
    """
    from .._validation import check_counts

    host = check_counts(counts, "counts")
    csr = host.csr
    n = csr.shape[0]
    z = check_labels(labels, "labels", n_samples=n)
    lam = check_nonnegative(lam, "lam")
    _, idx = np.unique(z, return_inverse=True)
    idx = idx.reshape(n)
    k = int(idx.max()) + 1
    coo = csr.tocoo()
    totals = np.asarray(csr.sum(axis=1)).ravel()

    def xlogx(v):
        v = np.asarray(v, np.float64)
        out = np.zeros_like(v)
        pos = v > 0
        out[pos] = v[pos] * np.log(v[pos])
        return out

    import scipy.sparse as sp

    pooled = sp.csr_matrix((coo.data, (idx[coo.row], coo.col)), shape=(k, csr.shape[1]))
    pooled.sum_duplicates()
    cluster_totals = np.bincount(idx, totals, minlength=k)
    rows_term = float(np.sum(xlogx(coo.data)) - np.sum(xlogx(totals)))
    fit = float(np.sum(xlogx(cluster_totals)) - np.sum(xlogx(pooled.data)))
    return rows_term + fit + lam * int(np.sum(cluster_totals > 0))
