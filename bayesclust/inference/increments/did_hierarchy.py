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
On a CPU with the native kernels (:func:`bayesclust._native.enabled`) the same driver runs in
one native call (``bayesclust/_native/did.cc``), taking the same decisions step for step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.spatial.distance import cdist

from ... import _native
from ... import _validation as V
from ...kernels import description_length, did_cdf
from .._union_find import UnionFind
from ._common import _BLOCK, _gdid, _lam_floor

__all__ = [
    "DIDHierarchyResult",
    "sl_did",
    "sl_aglo",
    "gdid_index",
    "gdid_cut",
    "GDIDCut",
]

#: Unions up to this size get their neighbours from all their pairs directly.
_SMALL_UNION = 48


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


# --------------------------------------------------------------------------- two nearest neighbours

_NO_INDEX = np.iinfo(np.int64).max


def _before(d1, i1, d2, i2):
    """``(d1, i1) < (d2, i2)`` lexicographically (index -1 = none, ordered last)."""
    i1 = np.where(i1 < 0, _NO_INDEX, i1)
    i2 = np.where(i2 < 0, _NO_INDEX, i2)
    return (d1 < d2) | ((d1 == d2) & (i1 < i2))


def _merge_two(ia, da, ib, db):
    """The two smallest ``(distance, index)`` of two row-wise sorted pairs, shape (r, 2) each."""
    a_first = _before(da[:, 0], ia[:, 0], db[:, 0], ib[:, 0])
    first_i = np.where(a_first, ia[:, 0], ib[:, 0])
    first_d = np.where(a_first, da[:, 0], db[:, 0])
    # the runner-up is the loser of the first comparison or the winner's successor
    ci = np.where(a_first, ia[:, 1], ib[:, 1])
    cd = np.where(a_first, da[:, 1], db[:, 1])
    oi = np.where(a_first, ib[:, 0], ia[:, 0])
    od = np.where(a_first, db[:, 0], da[:, 0])
    c_first = _before(cd, ci, od, oi)
    second_i = np.where(c_first, ci, oi)
    second_d = np.where(c_first, cd, od)
    return np.stack([first_i, second_i], 1), np.stack([first_d, second_d], 1)


def _two_nearest(C: np.ndarray, cols: np.ndarray):
    """Per row of ``C``, its two smallest entries (ties to the first column), as indices
    ``cols[...]`` and distances; -1 / inf where ``C`` has one column."""
    r = np.arange(C.shape[0])
    j1 = C.argmin(axis=1)
    d1 = C[r, j1]
    if C.shape[1] == 1:
        return (np.stack([cols[j1], np.full(r.size, -1)], 1),
                np.stack([d1, np.full(r.size, np.inf)], 1))
    saved = C[r, j1].copy()
    C[r, j1] = np.inf
    j2 = C.argmin(axis=1)
    d2 = C[r, j2]
    C[r, j1] = saved
    return np.stack([cols[j1], cols[j2]], 1), np.stack([d1, d2], 1)


def _triplet_increments(rows: np.ndarray, idx: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Increments of the points ``rows`` from their in-cluster 2-NN (``idx``, ``dist`` row-aligned).

    ``x_j`` is the nearest neighbour of ``x_i``; ``x_k`` the nearest neighbour of ``x_j`` other
    than ``x_i`` -- as :func:`bayesclust.graphs.increments`.
    """
    j = np.searchsorted(rows, idx[:, 0])  # rows are sorted
    use_second = idx[j, 0] == rows
    d_jk = np.where(use_second, dist[j, 1], dist[j, 0])
    return np.abs(dist[:, 0] - d_jk)


def _distance_matrix(X: np.ndarray) -> np.ndarray:
    """Euclidean distances, ``inf`` on the diagonal, filled by row blocks (one n x n buffer)."""
    n = X.shape[0]
    D = np.empty((n, n))
    step = max(1, min(_BLOCK, n * n // 8) // n)  # a block's temporary is at most D / 8
    for lo in range(0, n, step):
        D[lo:lo + step] = cdist(X[lo:lo + step], X)
    np.fill_diagonal(D, np.inf)
    return D


# --------------------------------------------------------------------------- the shared driver


class _Agglomeration:
    """Single link's order with tests: the state both SL-DID and SL-AGLO drive.

    ``D[c, p]`` is the distance from cluster ``c`` (rows of live clusters; a cluster keeps the
    row of its smallest point) to point ``p``: merging two clusters takes the minimum of their
    rows, columns never change.  Every live cluster keeps its nearest eligible point
    (``rowmin``, ``rowarg``): not its own, not in an isolated cluster, not in a cluster it was
    tested against.  Candidate pairs are taken in the order (distance, cluster name, point
    index), a cluster named by its smallest point.
    """

    def __init__(self, X: np.ndarray):
        n = X.shape[0]
        self.X = X
        self.D = _distance_matrix(X)
        self.owner = np.arange(n)
        self.dead = np.zeros(n, dtype=bool)  # points of isolated clusters
        self.members = {i: np.array([i]) for i in range(n)}
        self.nn_idx = np.full((n, 2), -1, dtype=np.int64)
        self.nn_dist = np.full((n, 2), np.inf)
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
        return s, int(self.owner[self.rowarg[s]])

    def _refresh_row(self, r: int):
        excluded = self.dead | (self.owner == r)
        if self.tested[r]:
            tested = np.zeros(self.owner.size, dtype=bool)
            tested[list(self.tested[r])] = True
            excluded |= tested[self.owner]
        row = np.where(excluded, np.inf, self.D[r])
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
        self.dead[self.members[f]] = True
        self.rowmin[f] = np.inf
        for r in np.flatnonzero(self.dead[self.rowarg] & np.isfinite(self.rowmin)):
            self._refresh_row(int(r))

    def merge(self, s: int, t: int, union):
        keep, gone = min(s, t), max(s, t)
        rows, idx, dist = union
        self.merges.append((keep, gone, self.rowmin[s]))
        np.minimum(self.D[keep], self.D[gone], out=self.D[keep])
        self.owner[self.members[gone]] = keep
        self.nn_idx[rows], self.nn_dist[rows] = idx, dist
        self.members[keep] = rows
        del self.members[gone]
        stale = self.tested[keep] | self.tested[gone]
        for p in stale:
            self.tested[p].discard(keep)
            self.tested[p].discard(gone)
        self.tested[keep] = set()
        del self.tested[gone]
        self.stats.pop(keep, None)
        self.stats.pop(gone, None)
        self.rowmin[gone] = np.inf
        self._refresh_row(keep)
        # rows that had tested either part may now reach the merged cluster
        for p in stale:
            if not self.frozen[p]:
                self._refresh_row(p)

    # -- what the tests read ------------------------------------------------------------
    def closest_pair(self, s: int, t: int):
        """``(distance, p in s, q in t)``, ties to the smallest ``p``, then ``q``."""
        a, b = self.members[s], self.members[t]
        d = self.rowmin[s]
        qs = b[self.D[s, b] == d]
        C = cdist(self.X[qs], self.X[a])
        q_pos, p_pos = np.nonzero(C == d)
        p = a[p_pos].min()
        q = qs[q_pos[a[p_pos] == p]].min()
        return d, int(p), int(q)

    def union(self, s: int, t: int):
        """Sorted points of the union and their two nearest neighbours inside it."""
        a, b = self.members[s], self.members[t]
        X = self.X
        if a.size + b.size <= _SMALL_UNION:  # all pairs at once: a few calls instead of ~20
            pts = np.sort(np.concatenate([a, b]))
            C = cdist(X[pts], X[pts])
            np.fill_diagonal(C, np.inf)
            order = np.argsort(C, axis=1, kind="stable")[:, :2]  # ties to the smallest point
            dist = np.take_along_axis(C, order, 1)
            idx = np.where(np.isfinite(dist), pts[order], -1)
            return pts, idx, dist
        pts = np.concatenate([a, b])
        idx, dist = self.nn_idx[pts], self.nn_dist[pts]
        # a point's two neighbours change only if the other cluster comes within its second
        # neighbour's distance, which the other cluster's row of D tells without a search
        reach = np.concatenate([self.D[t, a], self.D[s, b]])
        moved = np.flatnonzero(reach <= dist[:, 1])
        if moved.size:
            cross_idx = np.empty((moved.size, 2), np.int64)
            cross_dist = np.empty((moved.size, 2))
            in_a = moved < a.size
            for sel, other in ((in_a, b), (~in_a, a)):
                rows = pts[moved[sel]]
                if rows.size:
                    parts = [_two_nearest(cdist(X[rows[lo:lo + step]], X[other]), other)
                             for step in [max(1, _BLOCK // other.size)]
                             for lo in range(0, rows.size, step)]
                    cross_idx[sel] = np.concatenate([p[0] for p in parts])
                    cross_dist[sel] = np.concatenate([p[1] for p in parts])
            idx, dist = idx.copy(), dist.copy()
            idx[moved], dist[moved] = _merge_two(idx[moved], dist[moved], cross_idx, cross_dist)
        order = np.argsort(pts)
        return pts[order], idx[order], dist[order]

    def cluster_increments(self, s: int) -> np.ndarray:
        rows = self.members[s]
        if rows.size < 3:
            return np.empty(0)
        return _triplet_increments(rows, self.nn_idx[rows], self.nn_dist[rows])

    def result(self, lam_floor: float) -> DIDHierarchyResult:
        n = self.X.shape[0]
        labels = np.empty(n, dtype=np.int64)
        slots = sorted(self.members)  # a cluster's slot is its smallest point index
        for c, s in enumerate(slots):
            labels[self.members[s]] = c
        merges = np.asarray(self.merges, dtype=np.float64).reshape(-1, 3)
        return DIDHierarchyResult(labels, len(slots), self.frozen[slots].copy(), merges,
                                  self.n_tests, lam_floor)


def _native_run(X: np.ndarray, floor: float, **kw) -> DIDHierarchyResult:
    """The agglomeration in one native call (``_native/did.cc``): the NumPy driver's decisions."""
    owner, frozen, merges, n_tests = _native.did_agglomerate(X, floor=floor, **kw)
    slots, labels = np.unique(owner, return_inverse=True)
    return DIDHierarchyResult(labels.astype(np.int64), int(slots.size), frozen[slots], merges,
                              n_tests, floor)


def _check_data(X) -> np.ndarray:
    X = np.asarray(V.check_array(X, "X", min_samples=2), np.float64)
    return X


def _in_data_frame(res: DIDHierarchyResult, frame: V.UnitFrame) -> DIDHierarchyResult:
    """A hierarchy found in the unit frame with its distances in the data frame.

    The increments' tests compare ratios of distances (the 2-DID's mean scales with the
    data, Fred & Leitão 2003), so SL-DID and SL-AGLO are invariant to translating and
    scaling the data; they run scaled by a power of two (the unit frame's scale, not
    centred: exact, so distances that tie in the data -- integer scores such as MASS
    biopsy's -- still tie, and the order of tied pairs is the data's, not rounding's),
    and hand back the merge distances and the floor of ``X``.
    """
    merges = res.merges.copy()
    merges[:, 2] = np.ldexp(merges[:, 2], frame.e)
    return res._replace(merges=merges, lam_floor=float(np.ldexp(res.lam_floor, frame.e)))


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
    X, frame = V.unit_frame(_check_data(X), centred=False, dtype=np.float64)
    tail_factor = V.check_positive(tail_factor, "tail_factor")
    if tail_prob is not None:
        tail_prob = V.check_probability(tail_prob, "tail_prob", open_interval=True)
    min_size = V.check_int(min_size, "min_size", minimum=3)
    floor = _lam_floor(X)
    if _native.enabled():
        return _in_data_frame(_native_run(X, floor, method="sl_did", param=tail_factor,
                                          param2=tail_prob, min_size=min_size), frame)
    agg = _Agglomeration(X)

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
        if ns < min_size and nt < min_size:
            agg.merge(s, t, agg.union(s, t))
            continue
        if ns < min_size or nt < min_size:
            big, small = (s, t) if nt < min_size else (t, s)
            w_small = agg.cluster_increments(small)
            union = None
            if w_small.size == 0:  # judged by its points' increments inside the union
                union = agg.union(s, t)
                w_union = _triplet_increments(*union)
                w_small = w_union[np.isin(union[0], agg.members[small])]
            if in_tail(float(w_small.mean()), stats(big)[1]):
                agg.reject(s, t)
            else:
                agg.merge(s, t, union or agg.union(s, t))
            continue
        d, p, q = agg.closest_pair(s, t)
        _, lam_s, dl_s = stats(s)
        _, lam_t, dl_t = stats(t)
        if in_tail(abs(d - agg.nn_dist[p, 0]), lam_s):
            agg.freeze(s)
        elif in_tail(abs(d - agg.nn_dist[q, 0]), lam_t):
            agg.freeze(t)
        else:
            union = agg.union(s, t)
            rows, idx, dist = union
            w_union = _triplet_increments(rows, idx, dist)
            lam_u = max(float(w_union.mean()), floor)
            if description_length(w_union, lam=lam_u) <= dl_s + dl_t:
                agg.merge(s, t, union)
            else:
                agg.reject(s, t)
    return _in_data_frame(agg.result(floor), frame)


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
    X, frame = V.unit_frame(_check_data(X), centred=False, dtype=np.float64)
    tau = V.check_positive(tau, "tau")
    min_size = V.check_int(min_size, "min_size", minimum=3)
    floor = _lam_floor(X)
    if _native.enabled():
        return _in_data_frame(_native_run(X, floor, method="sl_aglo", param=tau, param2=None,
                                          min_size=min_size), frame)
    agg = _Agglomeration(X)

    def mean_increment(s):
        if agg.members[s].size < min_size:
            return None
        if s not in agg.stats:
            agg.stats[s] = max(float(agg.cluster_increments(s).mean()), floor)
        return agg.stats[s]

    while (pair := agg.next_pair()) is not None:
        s, t = pair
        agg.n_tests += 1
        mu_s, mu_t = mean_increment(s), mean_increment(t)
        if mu_s is None and mu_t is None:
            agg.merge(s, t, agg.union(s, t))
            continue
        d, p, q = agg.closest_pair(s, t)
        if mu_s is not None and abs(d - agg.nn_dist[p, 0]) >= tau * mu_s:
            agg.freeze(s)
        elif mu_t is not None and abs(d - agg.nn_dist[q, 0]) >= tau * mu_t:
            agg.freeze(t)
        else:
            agg.merge(s, t, agg.union(s, t))
    return _in_data_frame(agg.result(floor), frame)


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
    return _gdid(X, labels, _lam_floor(X))


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

    X = V.check_points(X, "X", min_samples=3)
    n = X.shape[0]
    Z = V.check_linkage(Z, "Z")
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
    floor = _lam_floor(X)
    cache: dict = {}  # consecutive cuts share all clusters but one
    scores = np.array([_gdid(X, cuts[:, i], floor, cache) for i in range(ks.size)])
    best = int(np.argmin(scores))
    labels = np.unique(cuts[:, best], return_inverse=True)[1].astype(np.int64)
    return GDIDCut(labels, int(ks[best]), ks, scores)


def count_tested_sides(n: int, merges, min_size: int) -> int:
    """Sides of ``min_size`` points or more over the merges: the isolation tests passed.

    Replays the merges of an agglomeration (:class:`DIDHierarchyResult`'s ``merges``, rows
    ``(a, b, gap)`` of points naming their clusters, the first side kept as the root) with a
    union-find of the points, counting every side of at least ``min_size`` points (SL-AGLO's
    isolation test runs on those; Fred & Leitão 2003, §3).

    Parameters
    ----------
    n : int
        Points.
    merges : array, shape (n_merges, 3)
    min_size : int

    Returns
    -------
    int
    """
    uf, size = UnionFind(n), np.ones(n, np.int64)
    sides = 0
    for a, b, _ in np.asarray(merges):
        ra, rb = uf.find(int(a)), uf.find(int(b))
        sides += int(size[ra] >= min_size) + int(size[rb] >= min_size)
        uf.link(rb, ra)
        size[ra] += size[rb]
    return sides
