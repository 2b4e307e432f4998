"""Internal validity indices: silhouette, Dunn and Davies-Bouldin in data space or in the space of
a (possibly sparse) co-association similarity, Calinski-Harabasz, the k-NN likelihood index;
the N1 data-complexity measure (Ho & Basu 2002).

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._validation import (
    check_array,
    check_int,
    check_labels,
    check_points,
    check_positive,
)

__all__ = [
    "silhouette",
    "dunn",
    "davies_bouldin",
    "calinski_harabasz",
    "likelihood_index",
    "n1_complexity",
]

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
    return check_points(X, name)


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

    X = check_points(X, "X")
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
