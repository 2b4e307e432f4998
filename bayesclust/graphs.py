"""Host-side graphs and kernels on data (NumPy / SciPy, float64).

The spectral methods (spectral DP-means, the penalised normalised cut) and SMIC
read data through a sparse graph: a symmetric k-nearest-neighbour Gaussian
affinity, or the local-scaling k-NN kernel of Zelnik-Manor & Perona (2004) that
Sugiyama et al. (2014, eq. 7) use; the dissimilarity increments of Aidos & Fred
(2012) are read from nearest-neighbour triplets.  Unlike :mod:`bayesclust.kernels` nothing
here is traced by JAX: these are exact ``scipy.spatial.cKDTree`` searches
returning ``scipy.sparse`` matrices.

This module imports only numpy, scipy and :mod:`bayesclust._validation`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from . import _validation as V

__all__ = [
    "knn_gaussian_affinity",
    "knn_search",
    "LocalScalingKernel",
    "local_scaling_kernel",
    "local_scaling_kernels",
    "local_scaling_cross_kernel",
    "increments",
    "bridge_increments",
]

# --------------------------------------------------------------------------- #
# k-NN Gaussian affinity (spectral DP-means, the penalised normalised cut)
# --------------------------------------------------------------------------- #


def knn_gaussian_affinity(X, n_neighbors: int = 10, *, gamma=None, local_scale: int = 7):
    r"""Symmetric sparse k-nearest-neighbour Gaussian affinity matrix (host, SciPy).

    Every point is linked to its ``n_neighbors`` nearest other points with
    weight

    .. math::

        A_{ij} = \exp(-\gamma \|x_i - x_j\|^2) \quad\text{or, with}\ \gamma = \text{None},
        \quad A_{ij} = \exp\!\Big(-\frac{\|x_i - x_j\|^2}{s_i s_j}\Big),

    the local scaling of Zelnik-Manor & Perona (2004), :math:`s_i` the distance
    from :math:`x_i` to its ``local_scale``-th nearest neighbour.  The graph is
    symmetrised by the maximum (an edge exists if either end has the other
    among its neighbours); the diagonal is zero.

    Parameters
    ----------
    X : array_like, shape (n, d)
    n_neighbors : int, default 10
        ``1 <= n_neighbors < n``.
    gamma : float, optional
        Global inverse bandwidth (> 0); default local scaling.
    local_scale : int, default 7
        Neighbour rank used for :math:`s_i` (capped at ``n_neighbors``).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n)
        float64, symmetric, non-negative, every row with at least one entry
        (a zero scale ``s_i`` -- duplicated points -- is replaced by the
        smallest positive scale, or 1).

    References
    ----------
    L. Zelnik-Manor and P. Perona, "Self-tuning spectral clustering", NIPS 2004.

    Examples
    --------
    >>> import numpy as np
    >>> A = knn_gaussian_affinity(np.array([[0.0], [1.0], [3.0]]), n_neighbors=1, gamma=1.0)
    >>> np.round(A.toarray(), 4).tolist()
    [[0.0, 0.3679, 0.0], [0.3679, 0.0, 0.0183], [0.0, 0.0183, 0.0]]
    """


    X = V.check_points(X, "X")
    n = X.shape[0]
    n_neighbors = V.check_int(n_neighbors, "n_neighbors", minimum=1)
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors must be < the number of samples ({n}), got {n_neighbors}")
    if gamma is not None:
        gamma = V.check_positive(gamma, "gamma")
    local_scale = V.check_int(local_scale, "local_scale", minimum=1)
    dist, idx = cKDTree(X).query(X, k=n_neighbors + 1)
    # drop each point itself (it may not come first when points are duplicated)
    not_self = idx != np.arange(n)[:, None]
    keep = np.cumsum(not_self, axis=1) <= n_neighbors
    mask = not_self & keep
    rows = np.repeat(np.arange(n), mask.sum(1))
    cols = idx[mask]
    d2 = dist[mask] ** 2
    if gamma is None:
        r = min(local_scale, n_neighbors)
        s = np.sort(np.where(mask, dist, np.inf), axis=1)[:, r - 1]
        pos = s[s > 0]
        s = np.where(s > 0, s, pos.min() if pos.size else 1.0)
        vals = np.exp(-d2 / (s[rows] * s[cols]))
    else:
        vals = np.exp(-gamma * d2)
    # an underflowed weight would drop the edge: keep the graph's structure
    vals = np.maximum(vals, np.finfo(np.float64).tiny)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    return A.maximum(A.T).tocsr()



# --------------------------------------------------------------------------- #
# Sparse local-scaling k-NN kernel (SMIC; Sugiyama et al. 2014, eq. 7)
# --------------------------------------------------------------------------- #


def knn_search(X: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact Euclidean ``n_neighbors`` nearest *other* points of every row (float64).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    n_neighbors : int
        ``1 <= n_neighbors < n``.

    Returns
    -------
    dist : ndarray of float64, shape (n, n_neighbors)
        Distances, ascending along each row.
    index : ndarray of int64, shape (n, n_neighbors)
        Row indices of the neighbours; a point is never its own neighbour (when exact
        duplicates tie with it at distance 0, it is removed by index).

    Notes
    -----
    A ``scipy.spatial.cKDTree`` query for ``n_neighbors + 1`` points (exact, float64).
    """
    X = V.check_points(X, "X", min_samples=2)
    n = X.shape[0]
    V.check_int(n_neighbors, "n_neighbors", minimum=1)
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors={n_neighbors} must be < the number of rows of X ({n})")
    dist, index = cKDTree(X).query(X, k=n_neighbors + 1)
    dist = np.asarray(dist).reshape(n, n_neighbors + 1)
    index = np.asarray(index, dtype=np.int64).reshape(n, n_neighbors + 1)
    is_self = index == np.arange(n)[:, None]
    # Drop the point itself; if duplicates pushed it out of the list, drop the last entry.
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), n_neighbors)
    keep = np.ones_like(is_self)
    keep[np.arange(n), drop] = False
    return dist[keep].reshape(n, n_neighbors), index[keep].reshape(n, n_neighbors)


class LocalScalingKernel(NamedTuple):
    """Result of :func:`local_scaling_kernel`.

    Attributes
    ----------
    K : scipy.sparse.csr_matrix of float64, shape (n, n)
        The symmetric sparse kernel, ``K_ii = 1``.
    sigma : ndarray of float64, shape (n,)
        Local scales ``sigma_i`` (distance to the t-th nearest other point, floored, see Notes
        of :func:`local_scaling_kernel`).
    t : int
        The neighbourhood size ``t`` (Sugiyama et al. 2014, eq. 7).
    sigma_floor : float
        The floor applied to ``sigma`` (used again for out-of-sample points).
    """

    K: object
    sigma: np.ndarray
    t: int
    sigma_floor: float


def _sigma_floor(sigma: np.ndarray) -> float:
    positive = sigma[sigma > 0]
    return 1e-12 * float(np.median(positive)) if positive.size else 1e-12


def local_scaling_kernel(X: np.ndarray, t: int) -> LocalScalingKernel:
    r"""Sparse local-scaling kernel of Sugiyama et al. (2014), eq. (7).

    .. math::

        K_{ij} = \exp\!\Big(-\frac{\|x_i - x_j\|^2}{2\sigma_i\sigma_j}\Big)
        \quad\text{if } x_i \in \mathcal N_t(x_j) \text{ or } x_j \in \mathcal N_t(x_i),
        \qquad 0 \text{ otherwise},

    with :math:`\sigma_i = \|x_i - x_i^{(t)}\|` the distance to the t-th nearest other point.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    t : int
        The neighbourhood size, ``1 <= t < n``.

    Returns
    -------
    LocalScalingKernel
        ``K`` has at most ``n (2t + 1)`` non-zeros.

    Notes
    -----
    Resolutions of the paper's silences (ours, docs/deviations.md#smic-kernel-diagonal): a point is not its own
    neighbour, ``K_ii = 1``; the "or" rule makes ``K`` symmetric (``K = max(A, A^T) + I``
    for the directed kNN kernel ``A``).  A point with at least ``t`` exact duplicates has
    ``sigma_i = 0`` (0/0 in the exponent): every ``sigma`` is floored at ``1e-12`` times the
    median positive ``sigma`` (``1e-12`` if none is positive), so duplicates get kernel value
    1 with each other and (numerically) 0 with every other point -- they form their own tight
    group instead of producing NaN.

    References
    ----------
    M. Sugiyama, G. Niu, M. Yamada, M. Kimura and H. Hachiya, "Information-maximization
    clustering based on squared-loss mutual information", Neural Computation 26 (2014), eq. (7);
    L. Zelnik-Manor and P. Perona, "Self-tuning spectral clustering", NIPS 2004.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> res = local_scaling_kernel(X, 1)
    >>> res.sigma.tolist()
    [1.0, 1.0, 2.0]
    >>> np.round(res.K.toarray(), 4).tolist()  # 1-2: exp(-4 / (2 * 1 * 2))
    [[1.0, 0.6065, 0.0], [0.6065, 1.0, 0.3679], [0.0, 0.3679, 1.0]]
    """
    X = V.check_points(X, "X", min_samples=2)
    t = V.check_int(t, "t", minimum=1)
    if t >= X.shape[0]:
        raise ValueError(f"t={t} must be < the number of rows of X ({X.shape[0]})")
    return _kernel_from_neighbors(*knn_search(X, t))


def local_scaling_kernels(X: np.ndarray, ts) -> list[LocalScalingKernel]:
    r"""The sparse local-scaling kernels (Sugiyama et al. 2014, eq. 7) of several ``t`` at once.

    The ``t`` nearest other points of a point are the first ``t`` of its ``max(ts)``
    nearest: one k-NN search at ``max(ts)`` serves every ``t``, and each kernel is built
    from the first ``t`` columns of its distances and indices exactly as
    :func:`local_scaling_kernel` builds it from its own search (the same arithmetic, so
    the same kernel; with exact distance ties at rank ``t`` either search may keep either
    tied point).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    ts : sequence of int
        Neighbourhood sizes, each ``1 <= t < n``.

    Returns
    -------
    list of LocalScalingKernel
        One per entry of ``ts``, in order.

    References
    ----------
    M. Sugiyama, G. Niu, M. Yamada, M. Kimura and H. Hachiya, "Information-maximization
    clustering based on squared-loss mutual information", Neural Computation 26 (2014), eq. (7),
    §4 (model selection over t).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0], [4.5]])
    >>> kerns = local_scaling_kernels(X, [1, 2])
    >>> [k.t for k in kerns]
    [1, 2]
    >>> bool((kerns[0].K != local_scaling_kernel(X, 1).K).nnz == 0)
    True
    """
    X = V.check_points(X, "X", min_samples=2)
    if isinstance(ts, (str, bytes)) or not hasattr(ts, "__iter__"):
        raise TypeError(f"ts must be a sequence of integers, got {type(ts).__name__}")
    ts = [V.check_int(t, "ts", minimum=1) for t in ts]
    if ts and max(ts) >= X.shape[0]:
        raise ValueError(f"ts must hold sizes 1 <= t < {X.shape[0]} (the rows of X), got {ts}")
    ts = [int(t) for t in ts]
    if not ts:
        return []
    dist, index = knn_search(X, max(ts))
    return [_kernel_from_neighbors(dist[:, :t], index[:, :t]) for t in ts]


def _kernel_from_neighbors(dist: np.ndarray, index: np.ndarray) -> LocalScalingKernel:
    """Eq. (7) from each row's ``t`` nearest other points (distances ascending), shape (n, t)."""
    n, t = dist.shape
    sigma = dist[:, -1].copy()
    floor = _sigma_floor(sigma)
    sigma = np.maximum(sigma, floor)
    rows = np.repeat(np.arange(n), t)
    cols = index.reshape(-1)
    vals = np.exp(-dist.reshape(-1) ** 2 / (2.0 * sigma[rows] * sigma[cols]))
    # Row i holds its t neighbours and itself (value 1): max(A + I, (A + I)^T) = max(A, A^T) + I
    # (A has no diagonal), built as CSR directly (rows are already grouped).
    data = np.concatenate([np.ones((n, 1)), vals.reshape(n, t)], axis=1).reshape(-1)
    indices = np.concatenate([np.arange(n)[:, None], index], axis=1).reshape(-1)
    A = sp.csr_matrix((data, indices, np.arange(0, n * (t + 1) + 1, t + 1)), shape=(n, n))
    At = A.T.tocsr()  # a counting-sort transpose: sorted indices
    K = At.T.tocsr().maximum(At).tocsr()
    K.sort_indices()
    return LocalScalingKernel(K, sigma, int(t), floor)


def local_scaling_cross_kernel(
    X_new: np.ndarray, X: np.ndarray, sigma: np.ndarray, t: int, sigma_floor: float
):
    r"""Out-of-sample rows ``K(x', x_i)`` of the sparse local-scaling kernel, shape (m, n).

    ``x'`` and ``x_i`` are linked if ``x_i`` is among the ``t`` nearest training points of
    ``x'`` or ``|x' - x_i| <= sigma_i (1 + 1e-10)`` (``x'`` would be among the t nearest of
    ``x_i``; the slack absorbs rounding at the boundary);
    the value is :math:`\exp(-|x'-x_i|^2 / (2\sigma'\sigma_i))` with :math:`\sigma'` the
    distance to the t-th nearest training point.  Training points *coinciding* with ``x'``
    (distance 0) are excluded from its neighbour list and from :math:`\sigma'` and get
    ``K = 1`` (the diagonal of ``K``), so a training point reproduces its own row of the
    training kernel (docs/deviations.md#smic-out-of-sample).

    Parameters
    ----------
    X_new : ndarray, shape (m, d)
    X : ndarray, shape (n, d)
        The training points.
    sigma : ndarray, shape (n,)
        Their (floored) local scales.
    t : int
        The neighbourhood size of the training kernel.
    sigma_floor : float

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (m, n)
    """

    X_new = V.check_points(X_new, "X_new")
    X = V.check_points(X, "X")
    m, n = X_new.shape[0], X.shape[0]
    if X_new.shape[1] != X.shape[1]:
        raise ValueError(f"X_new has {X_new.shape[1]} features but X has {X.shape[1]}")
    sigma = V.check_array(sigma, "sigma", ndim=1, dtype=None).astype(np.float64)
    if sigma.shape[0] != n or np.any(sigma < 0):
        raise ValueError(f"sigma must hold {n} non-negative scales (one per row of X), "
                         f"got shape {sigma.shape}")
    t = V.check_int(t, "t", minimum=1)
    tree = cKDTree(X)
    # Coincident training points (distance exactly 0).
    zero_lists = tree.query_ball_point(X_new, r=0.0)
    n_zero = np.array([len(z) for z in zero_lists], dtype=np.int64)
    k = int(min(n, t + n_zero.max(initial=0)))
    dist, index = tree.query(X_new, k=k)
    dist = np.asarray(dist).reshape(m, k)
    index = np.asarray(index, dtype=np.int64).reshape(m, k)
    rows, cols = [], []
    sig_new = np.empty(m)
    for r in range(m):  # skip the coincident points, keep the next t
        pos = np.flatnonzero(dist[r] > 0)[:t]
        if pos.size == 0:  # every training point coincides with x'
            sig_new[r] = sigma_floor
            continue
        sig_new[r] = dist[r, pos[-1]]
        rows.append(np.full(pos.size, r))
        cols.append(index[r, pos])
    sig_new = np.maximum(sig_new, sigma_floor)
    # Reverse neighbours: new points within sigma_i of training point i (a relative 1e-10
    # slack: the t-th neighbour of x_i lies exactly at sigma_i up to rounding).
    rev = cKDTree(X_new).query_ball_point(X, r=sigma * (1.0 + 1e-10))
    for i, lst in enumerate(rev):
        if lst:
            rows.append(np.asarray(lst, dtype=np.int64))
            cols.append(np.full(len(lst), i))
    rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    link = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, n))
    link.data[:] = 1.0  # duplicates (both rules) summed: reset to an indicator
    coo = link.tocoo()
    d2 = np.sum((X_new[coo.row] - X[coo.col]) ** 2, axis=1)
    vals = np.exp(-d2 / (2.0 * sig_new[coo.row] * sigma[coo.col]))
    coincident = d2 == 0
    vals[coincident] = 1.0
    out = sp.csr_matrix((vals, (coo.row, coo.col)), shape=(m, n))
    # Coincident points that neither rule linked (e.g. more duplicates than t).
    zr = np.repeat(np.arange(m), n_zero)
    if zr.size:
        zc = np.concatenate([np.asarray(z, dtype=np.int64) for z in zero_lists if z])
        extra = sp.csr_matrix((np.ones(zr.size), (zr, zc)), shape=(m, n))
        out = out.maximum(extra)
    out = out.tocsr()
    out.sort_indices()
    return out


# --------------------------------------------------------------------------- #
# Dissimilarity increments (Aidos & Fred 2012)
# --------------------------------------------------------------------------- #

_TIE_RTOL = 1e-9


def _distance(X: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances ``|X[a] - X[b]|`` row by row (one formula for every comparison)."""
    return np.sqrt(np.sum((X[a] - X[b]) ** 2, axis=-1))


def _nearest_excluding(X: np.ndarray, tree: cKDTree, query: np.ndarray,
                       exclude: np.ndarray, table=None) -> np.ndarray:
    """Nearest point of ``X`` to every ``X[query[m]]`` other than the indices ``exclude[m]``.

    Ties (equal distances) go to the smallest index.  ``exclude`` has shape (m, e), ``e <= 2``,
    and must contain ``query`` itself.  A k-d tree query for ``e + 2`` points (or the rows
    ``table = (dist, idx)`` of an earlier query of at least that many, one per query point)
    settles untied cases; a point whose best distance may be shared (up to a relative
    ``1e-9``, or the query ran out of columns) is settled among every point within that
    radius, by exact distances and then index.
    """
    n = X.shape[0]
    m, e = exclude.shape
    if table is None:
        k = min(n, e + 2)
        dist, idx = tree.query(X[query], k=k)
    else:
        dist, idx = table
        k = dist.shape[1]
    dist = np.asarray(dist).reshape(m, k)
    idx = np.asarray(idx, dtype=np.int64).reshape(m, k)
    valid = np.all(idx[:, :, None] != exclude[:, None, :], axis=2)
    first = valid.argmax(axis=1)
    best = idx[np.arange(m), first]
    radius = dist[np.arange(m), first] * (1.0 + _TIE_RTOL)
    later = valid & (np.arange(k)[None, :] > first[:, None])
    tied = np.any(later & (dist <= radius[:, None]), axis=1)
    if k < n:
        tied |= dist[:, -1] <= radius
    for r in np.flatnonzero(tied):
        cand = np.asarray(tree.query_ball_point(X[query[r]], r=radius[r]), dtype=np.int64)
        cand = np.setdiff1d(cand, exclude[r])  # sorted: ties resolve to the smallest index
        dc = _distance(X, np.full(cand.size, query[r]), cand)
        best[r] = cand[np.argmin(dc)]
    return best


def _cluster_increments(X: np.ndarray) -> np.ndarray:
    n = X.shape[0]
    # above a few dimensions larger unbalanced leaves answer nearest-neighbour queries faster
    tree = cKDTree(X) if X.shape[1] <= 4 else cKDTree(X, leafsize=64, balanced_tree=False)
    i = np.arange(n)
    # one query serves both steps: x_j's neighbours are rows of the same table
    dist, idx = tree.query(X, k=min(n, 4), workers=-1)
    dist, idx = dist.reshape(n, -1), np.asarray(idx, dtype=np.int64).reshape(n, -1)
    j = _nearest_excluding(X, tree, i, i[:, None], table=(dist, idx))
    k = _nearest_excluding(X, tree, j, np.stack([j, i], axis=1), table=(dist[j], idx[j]))
    return np.abs(_distance(X, i, j) - _distance(X, j, k))


def increments(X, labels=None) -> np.ndarray:
    r"""Dissimilarity increments of a data set or of every cluster, one per point (host, float64).

    For every point :math:`x_i`: :math:`x_j` is its nearest neighbour, :math:`x_k` the
    nearest neighbour of :math:`x_j` other than :math:`x_i`, and the increment is

    .. math:: d_{inc}(x_i, x_j, x_k) = \big|\,d(x_i, x_j) - d(x_j, x_k)\,\big|

    with Euclidean :math:`d` (Aidos & Fred 2012, §2).  With ``labels`` the neighbours are
    searched within each point's cluster.  Every point contributes its own triplet, also when
    two points share one (docs/deviations.md#did-increments-per-point).  Ties between
    equidistant neighbours -- exact duplicates give zero distances -- go to the smallest row
    index, so the result is deterministic.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,), optional
        Cluster labels.  Clusters of fewer than 3 points have no triplet and are skipped
        (docs/deviations.md#did-small-clusters).

    Returns
    -------
    ndarray of float64, shape (m,)
        The increments of the points kept (all ``n`` points without ``labels``; otherwise the
        points of clusters with at least 3 members), in the order of the rows of ``X``.
        Empty if no cluster has 3 points.

    Raises
    ------
    ValueError
        If ``X`` has fewer than 3 rows (without ``labels``), or ``labels`` does not have one
        entry per row.

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for d-dimensional
    data: application in partitional clustering", Pattern Recognition 45 (2012), §2;
    A. Fred and J. Leitão, "A new cluster isolation criterion based on dissimilarity
    increments", IEEE TPAMI 25 (2003).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0], [6.0]])
    >>> increments(X).tolist()  # (0->1->3), (1->0->3), (3->1->0), (6->3->1)
    [1.0, 2.0, 1.0, 1.0]
    """

    if labels is None:
        X = V.check_points(X, "X", min_samples=3)
        return _cluster_increments(X)
    X = V.check_points(X, "X")
    labels = V.check_labels(labels, "labels", n_samples=X.shape[0])
    out = np.full(X.shape[0], np.nan)
    keep = np.zeros(X.shape[0], dtype=bool)
    for c in np.unique(labels):
        rows = np.flatnonzero(labels == c)
        if rows.size >= 3:
            out[rows] = _cluster_increments(X[rows])
            keep[rows] = True
    return out[keep]


def gaps(X, labels, a, b) -> tuple[float, float]:
    r"""The gaps between two clusters, one seen from each side (Aidos & Fred 2011).

    With :math:`(x_i, x_j)` the closest pair across (:math:`x_i \in C_a`,
    :math:`x_j \in C_b`; ties to the smallest row indices) and :math:`x_k` the nearest
    neighbour of :math:`x_i` inside :math:`C_a`,

    .. math:: gap_a = \big|\,d(x_i, x_j) - d(x_i, x_k)\,\big|

    and symmetrically :math:`gap_b` with :math:`x_j` as the pivot: the increment a triplet
    would have if it stepped across (docs/deviations.md#did-gap-pivot).

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
    a, b : int
        Two distinct cluster ids, each of at least 2 points.

    Returns
    -------
    (float, float)
        ``(gap_a, gap_b)``.

    References
    ----------
    A. Aidos and A. Fred, "Hierarchical clustering with high order dissimilarities",
    MLDM 2011, §3; A. Fred and J. Leitão, IEEE TPAMI 25 (2003).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [5.0], [5.5]])
    >>> gaps(X, [0, 0, 1, 1], 0, 1)  # |4 - 1|, |4 - 0.5|
    (3.0, 3.5)
    """
    X = V.check_points(X, "X")
    labels = V.check_labels(labels, "labels", n_samples=X.shape[0])
    if a == b:
        raise ValueError(f"a and b must be two different clusters, got {a} twice")
    rows = []
    for name, c in (("a", a), ("b", b)):
        r = np.flatnonzero(labels == c)
        if r.size < 2:
            raise ValueError(f"cluster {name}={c} must have at least 2 points, got {r.size}")
        rows.append(r)
    ra, rb = rows
    from scipy.spatial.distance import cdist

    C = cdist(X[ra], X[rb])
    i, j = np.unravel_index(int(np.argmin(C)), C.shape)
    d_ij = C[i, j]
    out = []
    for r, p in ((ra, i), (rb, j)):
        own = cdist(X[r[p]][None], X[r])[0]
        own[p] = np.inf
        out.append(float(abs(d_ij - own.min())))
    return out[0], out[1]


def increments_to(X_ref, Y) -> np.ndarray:
    r"""Increments of new points against a reference set (host, float64).

    For every row :math:`y` of ``Y``: :math:`x_j` is its nearest neighbour in ``X_ref``,
    :math:`x_k` the nearest neighbour of :math:`x_j` in ``X_ref`` other than :math:`x_j`, and
    the increment is :math:`|d(y, x_j) - d(x_j, x_k)|` -- the increment :math:`y` would have
    as a member of the set (MAP-DID's class term; Aidos & Fred 2012, §2).  Ties go to the
    smallest row index, as in :func:`increments`.

    Parameters
    ----------
    X_ref : array_like, shape (m, d)
        At least 2 rows.
    Y : array_like, shape (p, d)

    Returns
    -------
    ndarray of float64, shape (p,)

    Examples
    --------
    >>> increments_to(np.array([[0.0], [1.0], [3.0]]), np.array([[-0.5], [5.0]])).tolist()
    [0.5, 0.0]
    """
    X_ref = V.check_points(X_ref, "X_ref", min_samples=2)
    Y = V.check_points(Y, "Y")
    if Y.shape[1] != X_ref.shape[1]:
        raise ValueError(f"Y has {Y.shape[1]} features but X_ref has {X_ref.shape[1]}")
    if Y.shape[1] != X_ref.shape[1]:
        raise ValueError(f"Y has {Y.shape[1]} features, X_ref {X_ref.shape[1]}")
    tree = cKDTree(X_ref)
    n = X_ref.shape[0]
    dist, idx = tree.query(Y, k=min(n, 2))
    dist, idx = dist.reshape(len(Y), -1), np.asarray(idx, np.int64).reshape(len(Y), -1)
    # nearest in X_ref: settle ties at the first distance by index
    first = idx[:, 0].copy()
    tied = dist[:, -1] <= dist[:, 0] * (1 + _TIE_RTOL) if idx.shape[1] > 1 else np.zeros(len(Y), bool)
    for r in np.flatnonzero(tied):
        cand = np.asarray(tree.query_ball_point(Y[r], r=dist[r, 0] * (1 + _TIE_RTOL)), np.int64)
        dc = np.sqrt(np.sum((X_ref[cand] - Y[r]) ** 2, axis=1))
        first[r] = np.sort(cand[dc == dc.min()])[0]
    k = _nearest_excluding(X_ref, tree, first, first[:, None])
    d_yj = np.sqrt(np.sum((Y - X_ref[first]) ** 2, axis=1))
    return np.abs(d_yj - _distance(X_ref, first, k))


def minimum_spanning_tree(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Euclidean minimum spanning tree by Prim's algorithm on the fly (host, float64).

    :math:`O(n^2 d)` time and :math:`O(n)` memory: each step computes one row of distances
    (no ``n x n`` matrix, no sort); ties go to the smallest index.

    Parameters
    ----------
    X : array_like, shape (n, d)

    Returns
    -------
    (u, v, weight) : ndarrays of shape (n - 1,)
        The tree's edges (``u`` already in the tree when ``v`` joined) and their lengths.

    Examples
    --------
    >>> u, v, w = minimum_spanning_tree(np.array([[0.0], [3.0], [1.0]]))
    >>> u.tolist(), v.tolist(), w.tolist()
    ([0, 2], [2, 1], [1.0, 2.0])
    """
    from scipy.spatial.distance import cdist

    X = V.check_points(X, "X")
    n = X.shape[0]
    best = cdist(X[:1], X)[0]
    parent = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    done[0] = True
    best[0] = np.inf
    u = np.empty(n - 1, dtype=np.int64)
    v = np.empty(n - 1, dtype=np.int64)
    w = np.empty(n - 1)
    for step in range(n - 1):
        j = int(np.argmin(best))
        u[step], v[step], w[step] = parent[j], j, best[j]
        done[j] = True
        best[j] = np.inf
        row = cdist(X[j:j + 1], X)[0]
        closer = (row < best) & ~done
        best[closer] = row[closer]
        parent[closer] = j
    return u, v, w


def bridge_increments(A) -> np.ndarray:
    r"""Bridge increments of the minimum spanning tree of ``A`` (host, float64).

    For every edge :math:`(u, v)` of the tree (:func:`minimum_spanning_tree`) that is neither
    point's nearest-neighbour edge, the two increments :math:`|d(u,v) - d(u, \mathrm{NN}(u))|`
    and :math:`|d(u,v) - d(v, \mathrm{NN}(v))|`: the gaps a bridge between two groups inside
    one cluster leaves (Fred & Jain 2008, the G-DID index; Aidos & Fred 2011, §4).

    Parameters
    ----------
    A : array_like, shape (m, d)
        The points of one cluster, ``m >= 2``.

    Returns
    -------
    ndarray, shape (2 b,)
        The ``u`` increments of the ``b`` bridge edges, then their ``v`` increments.

    Examples
    --------
    >>> bridge_increments(np.array([[0.0], [1.0], [5.0], [6.0]])).tolist()
    [3.0, 3.0]
    """
    A = V.check_points(A, "A")
    u, v, w = minimum_spanning_tree(A)
    i = np.arange(A.shape[0])
    nn = _nearest_excluding(A, cKDTree(A), i, i[:, None])
    nn_dist = _distance(A, i, nn)
    bridge = (nn[u] != v) & (nn[v] != u)
    u, v, w = u[bridge], v[bridge], w[bridge]
    return np.abs(np.concatenate([w - nn_dist[u], w - nn_dist[v]]))
