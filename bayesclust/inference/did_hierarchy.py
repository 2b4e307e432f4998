"""Hierarchical clustering with dissimilarity increments: SL-DID and SL-AGLO, and the G-DID index.

Both algorithms follow single link's agglomeration order (the closest pair of clusters not
yet tested and not isolated) and replace "merge always" by a test on the clusters'
dissimilarity increments (:func:`bayesclust.graphs.increments`):

* **SL-DID** (Aidos & Fred 2011) models a cluster's increments by the 2-DID
  (:func:`bayesclust.kernels.did_logpdf`), isolates a cluster whose gap lies in the tail of
  its law and merges two clusters when the merged one has the shorter description length
  (:func:`bayesclust.kernels.description_length`);
* **SL-AGLO** (Fred & Leitão 2003) models them by an exponential and isolates a cluster whose
  gap exceeds ``tau`` times its mean increment.

The number of clusters is found, not given.  :func:`gdid_index` scores any partition by the
description length of its within-cluster increments, to choose a parameter or a cut of any
hierarchy (:func:`gdid_cut`).

One shared driver runs both: an ``(n, n)`` single-link distance matrix between the current
clusters (Lance--Williams' minimum update), each cluster's nearest eligible partner, the pairs
already tested, and per point its two nearest neighbours inside its cluster, updated from the
cross distances at every merge (so a cluster's increments never need a new search).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform

from .. import _validation as V
from ..graphs import increments
from ..kernels import description_length, did_cdf

__all__ = [
    "DIDHierarchyResult",
    "sl_did",
    "sl_aglo",
    "gdid_index",
    "gdid_cut",
    "GDIDCut",
]

#: Cross-distance blocks hold at most this many entries (32 MiB of float64).
_BLOCK = 1 << 22


class DIDHierarchyResult(NamedTuple):
    """Result of :func:`sl_did` / :func:`sl_aglo`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Clusters numbered ``0..n_clusters-1`` by their first point.
    n_clusters : int
    isolated : ndarray of bool, shape (n_clusters,)
        Clusters frozen by the tail / isolation test (never merged again).
    merges : ndarray of float64, shape (n - n_clusters, 3)
        ``(point of the first cluster, point of the second, single-link distance)`` of every
        merge, in order (clusters named by their smallest point index).
    n_tests : int
        Pairs of clusters examined (merges, rejections and isolations).
    lam_floor : float
        The smallest mean increment a cluster may have (the smallest positive increment of
        the data; docs/deviations.md#did-zero-increments).
    """

    labels: np.ndarray
    n_clusters: int
    isolated: np.ndarray
    merges: np.ndarray
    n_tests: int
    lam_floor: float


# --------------------------------------------------------------------------- clusters' neighbours


class _Neighbours:
    """Per point: its two nearest neighbours inside its cluster (index, distance; -1 / inf if none)."""

    def __init__(self, n: int):
        self.idx = np.full((n, 2), -1, dtype=np.int64)
        self.dist = np.full((n, 2), np.inf)

    def merged(self, X, a: np.ndarray, b: np.ndarray):
        """Two nearest neighbours of the points of ``a`` and ``b`` inside their union.

        Returns ``(idx, dist, pair)``: arrays of shape ``(len(a) + len(b), 2)`` for the rows
        ``concatenate([a, b])``, and the closest cross pair ``(p in a, q in b, distance)``
        (ties to the first in row-major order of ``a`` by ``b``).
        """
        ca_idx, ca_dist = np.full((a.size, 2), -1, np.int64), np.full((a.size, 2), np.inf)
        cb_idx, cb_dist = np.full((b.size, 2), -1, np.int64), np.full((b.size, 2), np.inf)
        best = (np.inf, -1, -1)
        step = max(1, _BLOCK // max(b.size, 1))
        for lo in range(0, a.size, step):
            rows = a[lo:lo + step]
            C = cdist(X[rows], X[b])  # exact differences: duplicates are at distance 0
            flat = int(np.argmin(C))
            r, c = divmod(flat, b.size)
            if C[r, c] < best[0]:
                best = (C[r, c], rows[r], b[c])
            top_a = _two_smallest(C)
            ca_idx[lo:lo + step], ca_dist[lo:lo + step] = b[top_a], np.take_along_axis(C, top_a, 1)
            top_b = _two_smallest(C.T)
            cand_idx = np.concatenate([cb_idx, rows[top_b]], axis=1)
            cand_dist = np.concatenate([cb_dist, np.take_along_axis(C.T, top_b, 1)], axis=1)
            cb_idx, cb_dist = _first_two(cand_idx, cand_dist)
        rows = np.concatenate([a, b])
        cross_idx = np.concatenate([ca_idx, cb_idx])
        cross_dist = np.concatenate([ca_dist, cb_dist])
        idx, dist = _first_two(np.concatenate([self.idx[rows], cross_idx], axis=1),
                               np.concatenate([self.dist[rows], cross_dist], axis=1))
        return idx, dist, best

    def commit(self, rows: np.ndarray, idx: np.ndarray, dist: np.ndarray):
        self.idx[rows], self.dist[rows] = idx, dist


def _two_smallest(C: np.ndarray) -> np.ndarray:
    """Column indices of the (up to) two smallest entries of every row, shape (r, 2).

    With one column the index repeats; :func:`_first_two` drops the repeat.
    """
    if C.shape[1] == 1:
        return np.zeros((C.shape[0], 2), dtype=np.int64)
    return np.argpartition(C, 1, axis=1)[:, :2]


def _first_two(idx: np.ndarray, dist: np.ndarray):
    """Per row, the two candidates of smallest ``(distance, index)``; duplicates of an index dropped."""
    big = np.iinfo(np.int64).max
    key_idx = np.where(idx < 0, big, idx)
    order = np.lexsort((key_idx, dist), axis=1)
    idx = np.take_along_axis(idx, order, 1)
    dist = np.take_along_axis(dist, order, 1)
    # a padded repeat (one candidate column) appears twice in a row: keep the first copy only
    repeat = (idx[:, 1:] == idx[:, :-1]) & (idx[:, 1:] >= 0)
    if repeat.any():
        dist = dist.copy()
        idx = idx.copy()
        dist[:, 1:][repeat] = np.inf
        idx[:, 1:][repeat] = -1
        order = np.lexsort((np.where(idx < 0, big, idx), dist), axis=1)
        idx, dist = np.take_along_axis(idx, order, 1), np.take_along_axis(dist, order, 1)
    return idx[:, :2].copy(), dist[:, :2].copy()


def _triplet_increments(rows: np.ndarray, idx: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Increments of the points ``rows`` from their in-cluster 2-NN (``idx``, ``dist`` row-aligned).

    ``x_j`` is the nearest neighbour of ``x_i``; ``x_k`` the nearest neighbour of ``x_j`` other
    than ``x_i`` -- as :func:`bayesclust.graphs.increments`.
    """
    pos = np.empty(rows.max() + 1, dtype=np.int64)
    pos[rows] = np.arange(rows.size)
    j = pos[idx[:, 0]]
    use_second = idx[j, 0] == rows
    d_jk = np.where(use_second, dist[j, 1], dist[j, 0])
    return np.abs(dist[:, 0] - d_jk)


# --------------------------------------------------------------------------- the shared driver


class _Agglomeration:
    """Single link's order with tests: the state both SL-DID and SL-AGLO drive."""

    def __init__(self, X: np.ndarray):
        n = X.shape[0]
        self.X = X
        self.D = squareform(pdist(X))
        np.fill_diagonal(self.D, np.inf)
        self.members = {i: np.array([i]) for i in range(n)}
        self.nn = _Neighbours(n)
        self.tested: dict[int, set] = {i: set() for i in range(n)}
        self.frozen = np.zeros(n, dtype=bool)
        self.rowmin = self.D.min(axis=1)
        self.rowarg = self.D.argmin(axis=1)
        self.stats: dict[int, tuple] = {}
        self.merges: list[tuple] = []
        self.n_tests = 0

    # -- the candidate pair -------------------------------------------------------------
    def next_pair(self):
        s = int(np.argmin(self.rowmin))
        if not np.isfinite(self.rowmin[s]):
            return None
        return s, int(self.rowarg[s])

    def _refresh_row(self, r: int):
        row = self.D[r]
        if self.tested[r]:
            row = row.copy()
            row[list(self.tested[r])] = np.inf
        a = int(np.argmin(row))
        self.rowmin[r], self.rowarg[r] = row[a], a

    # -- outcomes -----------------------------------------------------------------------
    def reject(self, s: int, t: int):
        self.tested[s].add(t)
        self.tested[t].add(s)
        self._refresh_row(s)
        self._refresh_row(t)

    def freeze(self, f: int):
        self.frozen[f] = True
        self.D[f, :] = np.inf
        self.D[:, f] = np.inf
        self.rowmin[f] = np.inf
        for r in np.flatnonzero(self.rowarg == f):
            if np.isfinite(self.rowmin[r]):
                self._refresh_row(int(r))

    def merge(self, s: int, t: int, union):
        keep, gone = min(s, t), max(s, t)
        rows, idx, dist = union
        D = self.D
        self.merges.append((keep, gone, D[s, t]))
        np.minimum(D[keep], D[gone], out=D[keep])
        D[keep, keep] = np.inf
        D[:, keep] = D[keep]
        D[gone, :] = np.inf
        D[:, gone] = np.inf
        self.nn.commit(rows, idx, dist)
        self.members[keep] = rows
        del self.members[gone]
        for p in self.tested[keep] | self.tested[gone]:
            self.tested[p].discard(keep)
            self.tested[p].discard(gone)
        self.tested[keep] = set()
        del self.tested[gone]
        self.stats.pop(keep, None)
        self.stats.pop(gone, None)
        self.rowmin[gone] = np.inf
        col = D[:, keep]
        better = (col < self.rowmin) | ((col == self.rowmin) & (keep < self.rowarg))
        better[keep] = False
        self.rowmin[better] = col[better]
        self.rowarg[better] = keep
        self._refresh_row(keep)

    # -- what the tests read ------------------------------------------------------------
    def union(self, s: int, t: int):
        a, b = self.members[s], self.members[t]
        idx, dist, pair = self.nn.merged(self.X, a, b)
        return np.concatenate([a, b]), idx, dist, pair

    def cluster_increments(self, s: int) -> np.ndarray:
        rows = self.members[s]
        if rows.size < 3:
            return np.empty(0)
        return _triplet_increments(rows, self.nn.idx[rows], self.nn.dist[rows])

    def result(self, lam_floor: float) -> DIDHierarchyResult:
        n = self.X.shape[0]
        labels = np.empty(n, dtype=np.int64)
        slots = sorted(self.members)  # a cluster's slot is its smallest point index
        for c, s in enumerate(slots):
            labels[self.members[s]] = c
        merges = np.asarray(self.merges, dtype=np.float64).reshape(-1, 3)
        return DIDHierarchyResult(labels, len(slots), self.frozen[slots].copy(), merges,
                                  self.n_tests, lam_floor)


def _lam_floor(X: np.ndarray, D: np.ndarray) -> float:
    """The smallest positive increment of the data (else the smallest positive distance, else 1)."""
    w = increments(X) if X.shape[0] >= 3 else np.empty(0)
    for values in (w, D[np.isfinite(D)]):
        pos = values[values > 0]
        if pos.size:
            return float(pos.min())
    return 1.0


def _check_data(X) -> np.ndarray:
    X = np.asarray(V.check_array(X, "X", min_samples=2), np.float64)
    return X


# --------------------------------------------------------------------------- SL-DID


def sl_did(X, *, tail_factor: float = 7.0, tail_prob: float | None = None,
           min_size: int = 6) -> DIDHierarchyResult:
    r"""SL-DID: single-link agglomeration that stops where the 2-DID says a cluster ends.

    Starting from singletons, the closest pair :math:`(C_i, C_j)` (single-link distance) not
    yet tested and not isolated is examined (Aidos & Fred 2011, Table 1):

    1. both have fewer than ``min_size`` points: merge (single link);
    2. only :math:`C_j` is small: merge unless the mean increment of :math:`C_j` lies in the
       tail of :math:`C_i`'s 2-DID (:math:`\bar w_j > \text{tail\_factor}\;\lambda_i`);
       a :math:`C_j` of fewer than 3 points, which has no increments of its own, is judged by
       its points' increments inside :math:`C_i \cup C_j`;
    3. both are large: with the gap of :math:`C_i` towards :math:`C_j`,
       :math:`gap_i = |d(x_i, x_j) - d(x_i, x_k)|` (:math:`(x_i, x_j)` the closest pair
       across, :math:`x_k` the nearest neighbour of :math:`x_i` in :math:`C_i`): isolate
       :math:`C_i` if :math:`gap_i` lies in the tail of its 2-DID, else isolate :math:`C_j`
       if its gap does; otherwise merge iff
       :math:`DL(C_i\cup C_j) \le DL(C_i) + DL(C_j)` (:func:`~bayesclust.kernels.description_length`,
       the increments of the union recomputed on the union).

    Isolated clusters are never tested again; the run stops when no pair is left.
    "In the tail" is :math:`x > \text{tail\_factor}\,\lambda` (:math:`P = 1.2\times10^{-7}` at
    7), or with ``tail_prob`` :math:`P(W > x) <` ``tail_prob``
    (docs/deviations.md#sl-did-tail-rule).  :math:`\lambda` of a cluster is its mean
    increment, floored at the smallest positive increment of the data
    (docs/deviations.md#did-zero-increments).

    Parameters
    ----------
    X : array_like, shape (n, d)
    tail_factor : float, default 7.0
        ``> 0``.
    tail_prob : float in (0, 1), optional
        If given, replaces ``tail_factor`` by a tail probability of the 2-DID.
    min_size : int, default 6
        Clusters of fewer points are merged by single link (``>= 3``; the paper's 6 is the
        smallest size at which it estimates a DID).

    Returns
    -------
    DIDHierarchyResult

    Notes
    -----
    :math:`O(n^2)` time and one :math:`n\times n` float64 matrix (as SciPy's single linkage on
    condensed distances, which holds half of one); a merge costs the cross distances of the
    two clusters, a test the 2-DID log density of the union's increments.

    References
    ----------
    A. Aidos and A. Fred, "Hierarchical clustering with high order dissimilarities",
    MLDM 2011, §3 and Table 1.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> sl_did(X).n_clusters
    2
    """
    X = _check_data(X)
    tail_factor = V.check_positive(tail_factor, "tail_factor")
    if tail_prob is not None:
        tail_prob = V.check_positive(tail_prob, "tail_prob")
        if tail_prob >= 1:
            raise ValueError(f"tail_prob must be in (0, 1), got {tail_prob}")
    min_size = V.check_int(min_size, "min_size", minimum=3)

    agg = _Agglomeration(X)
    floor = _lam_floor(X, agg.D)

    def in_tail(x, lam):
        if tail_prob is None:
            return x > tail_factor * lam
        return 1.0 - float(did_cdf(np.float64(x), np.float64(lam))) < tail_prob

    def stats(s):
        if s not in agg.stats:
            w = agg.cluster_increments(s)
            lam = max(float(w.mean()), floor) if w.size else floor
            dl = description_length(w, lam=lam) if w.size else 0.0
            agg.stats[s] = (w, lam, dl)
        return agg.stats[s]

    while (pair := agg.next_pair()) is not None:
        s, t = pair
        agg.n_tests += 1
        ns, nt = agg.members[s].size, agg.members[t].size
        rows, idx, dist, cross = agg.union(s, t)
        union = (rows, idx, dist)
        if ns < min_size and nt < min_size:
            agg.merge(s, t, union)
            continue
        if ns < min_size or nt < min_size:
            big, small = (s, t) if nt < min_size else (t, s)
            w_small = agg.cluster_increments(small)
            if w_small.size == 0:  # judged by its points' increments inside the union
                w_union = _triplet_increments(rows, idx, dist)
                w_small = w_union[np.isin(rows, agg.members[small])]
            if in_tail(float(w_small.mean()), stats(big)[1]):
                agg.reject(s, t)
            else:
                agg.merge(s, t, union)
            continue
        _, p, q = cross  # p in s, q in t
        gap_s = abs(cross[0] - agg.nn.dist[p, 0])
        gap_t = abs(cross[0] - agg.nn.dist[q, 0])
        _, lam_s, dl_s = stats(s)
        _, lam_t, dl_t = stats(t)
        if in_tail(gap_s, lam_s):
            agg.freeze(s)
        elif in_tail(gap_t, lam_t):
            agg.freeze(t)
        else:
            w_union = _triplet_increments(rows, idx, dist)
            lam_u = max(float(w_union.mean()), floor)
            if description_length(w_union, lam=lam_u) <= dl_s + dl_t:
                agg.merge(s, t, union)
            else:
                agg.reject(s, t)
    return agg.result(floor)


# --------------------------------------------------------------------------- SL-AGLO


def sl_aglo(X, tau: float, *, min_size: int = 6) -> DIDHierarchyResult:
    r"""SL-AGLO: single link with Fred & Leitão's cluster isolation criterion.

    The same agglomeration order and gaps as :func:`sl_did`; a cluster's increments are
    modelled by an exponential of mean :math:`\mu_i` (their mean, floored as in
    :func:`sl_did`).  For the closest untested pair: two clusters of fewer than ``min_size``
    points merge by single link; otherwise a cluster of at least ``min_size`` points with
    :math:`gap_i \ge \tau\,\mu_i` is isolated (never merged again), and the pair merges when
    neither is (Fred & Leitão 2003, §3; small clusters as SL-DID's first rule:
    docs/deviations.md#sl-aglo-small-clusters).

    Parameters
    ----------
    X : array_like, shape (n, d)
    tau : float
        Isolation threshold in units of the mean increment, ``> 0`` (the paper sweeps 1..10
        and chooses by G-DID, as :class:`bayesclust.SLAGLO` with ``tau="auto"`` does).
    min_size : int, default 6
        ``>= 3``: a smaller cluster's mean increment is too noisy to isolate it.

    Returns
    -------
    DIDHierarchyResult

    References
    ----------
    A. Fred and J. Leitão, "A new cluster isolation criterion based on dissimilarity
    increments", IEEE TPAMI 25(8) (2003), §3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> sl_aglo(X, tau=8.0).n_clusters
    2
    """
    X = _check_data(X)
    tau = V.check_positive(tau, "tau")
    min_size = V.check_int(min_size, "min_size", minimum=3)
    agg = _Agglomeration(X)
    floor = _lam_floor(X, agg.D)

    def mean_increment(s):
        if agg.members[s].size < min_size:
            return None
        if s not in agg.stats:
            agg.stats[s] = max(float(agg.cluster_increments(s).mean()), floor)
        return agg.stats[s]

    while (pair := agg.next_pair()) is not None:
        s, t = pair
        agg.n_tests += 1
        rows, idx, dist, cross = agg.union(s, t)
        mu_s, mu_t = mean_increment(s), mean_increment(t)
        _, p, q = cross
        if mu_s is not None and abs(cross[0] - agg.nn.dist[p, 0]) >= tau * mu_s:
            agg.freeze(s)
        elif mu_t is not None and abs(cross[0] - agg.nn.dist[q, 0]) >= tau * mu_t:
            agg.freeze(t)
        else:
            agg.merge(s, t, (rows, idx, dist))
    return agg.result(floor)


# --------------------------------------------------------------------------- G-DID


def gdid_index(X, labels) -> float:
    r"""The G-DID validity index of a partition (smaller is better).

    .. math::

        \text{G-DID}(P) = -\sum_{k}\sum_{w\in W_k}\log p_{DID}(w;\hat\lambda_k)
            + \frac{k_P}{2}\log m

    :math:`k_P` the number of clusters, :math:`m` the number of increments, and
    :math:`W_k` the increments of cluster :math:`k` along its minimum spanning tree: the
    nearest-neighbour triplet increments (:func:`bayesclust.graphs.increments`) and, for every
    tree edge :math:`(u, v)` that is neither point's nearest-neighbour edge, the two bridge
    increments :math:`|d(u,v) - d(u, \mathrm{NN}(u))|` and :math:`|d(u,v) - d(v, \mathrm{NN}(v))|`
    (the gaps a bridge between two groups inside one cluster leaves).  :math:`\hat\lambda_k`
    is the mean of the triplet increments (floored at the smallest positive increment of the
    data); clusters of fewer than 3 points have no increments (Fred & Jain's G-DID on the
    2-DID, docs/deviations.md#gdid-index).

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)

    Returns
    -------
    float
        ``+inf`` if no cluster has 3 points.

    Notes
    -----
    A cluster's tree is built from its dense distances: :math:`O(n_k^2)` memory per cluster.

    References
    ----------
    A. Fred and A. K. Jain, "Cluster validation using a probabilistic attributed graph",
    ICPR 2008; A. Aidos and A. Fred, MLDM 2011, §4.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> y = np.repeat([0, 1], 60)
    >>> bool(gdid_index(X, y) < gdid_index(X, np.zeros(120, int)))
    True
    """
    X = np.asarray(V.check_array(X, "X", min_samples=3), np.float64)
    labels = V.check_labels(labels, "labels", n_samples=X.shape[0])
    return _gdid(X, labels, _lam_floor(X, np.empty(0)))


def _bridge_increments(A: np.ndarray) -> np.ndarray:
    """Bridge increments of the minimum spanning tree of ``A`` (see :func:`gdid_index`)."""
    from scipy.sparse.csgraph import minimum_spanning_tree

    D = squareform(pdist(A))
    np.fill_diagonal(D, np.inf)
    nn = D.argmin(axis=1)
    nn_dist = D[np.arange(len(A)), nn]
    np.fill_diagonal(D, 0.0)
    # csgraph reads 0 as "no edge": duplicates get the smallest positive weight instead
    tree = minimum_spanning_tree(np.where(D > 0, D, np.finfo(np.float64).tiny)).tocoo()
    u, v = tree.row, tree.col
    bridge = (nn[u] != v) & (nn[v] != u)
    w = D[u[bridge], v[bridge]]
    return np.abs(np.concatenate([w - nn_dist[u[bridge]], w - nn_dist[v[bridge]]]))


def _gdid(X: np.ndarray, labels: np.ndarray, floor: float) -> float:
    from ..kernels import did_logpdf

    loglik, m = 0.0, 0
    ids, counts = np.unique(labels, return_counts=True)
    for c in ids[counts >= 3]:
        A = X[labels == c]
        w = increments(A)
        lam = max(float(w.mean()), floor)
        w = np.concatenate([w, _bridge_increments(A)])
        loglik += float(np.sum(did_logpdf(w, lam)))
        m += w.size
    if m == 0:
        return float("inf")
    return -loglik + 0.5 * ids.size * np.log(m)


class GDIDCut(NamedTuple):
    """Result of :func:`gdid_cut`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        The cut of smallest G-DID.
    n_clusters : int
    n_clusters_range : ndarray of int64, shape (r,)
        The numbers of clusters tried.
    scores : ndarray of float64, shape (r,)
        Their G-DID (:func:`gdid_index`).
    """

    labels: np.ndarray
    n_clusters: int
    n_clusters_range: np.ndarray
    scores: np.ndarray


def gdid_cut(X, Z, n_clusters_range=None) -> GDIDCut:
    """Cut a hierarchy where the G-DID index is smallest.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data the hierarchy was built on (the increments are measured there).
    Z : array_like, shape (n - 1, 4)
        A SciPy linkage matrix (``scipy.cluster.hierarchy.linkage``, any method).
    n_clusters_range : iterable of int, optional
        Numbers of clusters to try; default ``1 .. ceil(sqrt(n))``.  Ties go to the fewer
        clusters.

    Returns
    -------
    GDIDCut

    References
    ----------
    A. Aidos and A. Fred, MLDM 2011, §4 (single and average link with the number of
    clusters chosen by G-DID).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.cluster.hierarchy import linkage
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> gdid_cut(X, linkage(X, "average")).n_clusters
    2
    """
    from scipy.cluster.hierarchy import cut_tree

    X = np.asarray(V.check_array(X, "X", min_samples=3), np.float64)
    n = X.shape[0]
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape != (n - 1, 4):
        raise ValueError(f"Z must be a linkage matrix of shape ({n - 1}, 4) for {n} rows of X, "
                         f"got shape {Z.shape}")
    if n_clusters_range is None:
        n_clusters_range = range(1, int(np.ceil(np.sqrt(n))) + 1)
    ks = np.asarray(sorted({V.check_int(k, "n_clusters_range", minimum=1)
                            for k in n_clusters_range}), dtype=np.int64)
    if ks.size == 0 or ks[-1] > n:
        raise ValueError(f"n_clusters_range must hold numbers in 1..{n}, got {ks.tolist()}")
    cuts = cut_tree(Z, n_clusters=ks)
    floor = _lam_floor(X, np.empty(0))
    scores = np.array([_gdid(X, cuts[:, i], floor) for i in range(ks.size)])
    best = int(np.argmin(scores))
    labels = np.unique(cuts[:, best], return_inverse=True)[1].astype(np.int64)
    return GDIDCut(labels, int(ks[best]), ks, scores)
