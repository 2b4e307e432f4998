r"""Consensus partitions by hierarchical clustering of a co-association matrix.

The co-association :math:`C_{ij}` (the fraction of partitions in which objects
``i`` and ``j`` share a cluster, :mod:`~bayesclust.inference.consensus.coassociation`) is
read as a similarity, ``1 - C`` as a distance; a linkage algorithm builds the
dendrogram and the consensus is its cut into a fixed number of clusters, or at
the largest lifetime (the widest range of heights over which a number of
clusters survives; Fred & Jain 2005).  Seven linkages are available: single,
average, complete, weighted (WPGMA), Ward, centroid and median.  Single and
average link also run on the sparse co-association without forming ``1 - C``
densely; the others run scipy on the dense condensed ``1 - C``.  Ward, centroid
and median link read ``1 - C`` as if it were a Euclidean distance (their
Lance-Williams updates assume one), as the evidence-accumulation papers do;
centroid and median trees can be non-monotone (a merge lower than the previous
one), so their lifetimes are clipped at 0.

Pipeline::

    ens = kmeans_ensemble(0, X)                 # (N, n) labels, K ~ U{K_min..K_max}
    # or a grid: clustering_ensemble(0, X, ("kmeans", "average"), range(2, 11), 10, subsample=0.9)
    C = coassociation(ens)                      # sparse upper triangle of counts
    res = linkage_consensus(C, "average", n_clusters=3)   # or the lifetime criterion

References
----------
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence
accumulation", IEEE TPAMI 27(6) (2005) 835-850.
A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
clustering", ICPR 2010.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from .._union_find import UnionFind
from .coassociation import as_coassociation

__all__ = ["LinkageResult", "linkage_consensus", "cut_tree_at", "lifetimes", "LINKAGE_METHODS",
           "DENSE_MAX_BYTES", "check_dense_linkage"]

#: The linkages :func:`linkage_consensus` accepts (scipy's names).
LINKAGE_METHODS = ("single", "average", "complete", "weighted", "ward", "centroid", "median")
_SPARSE_METHODS = ("single", "average")
_DENSE_MAX_N = 4000
#: The largest condensed ``1 - C`` (``n (n - 1) / 2`` doubles) a dense linkage may form: 2 GiB,
#: ``n <= 23,170``; scipy's linkage works on a copy of it, so the peak is about twice this.
#: Above it :func:`linkage_consensus` refuses the dense-only linkages instead of running the
#: machine out of memory; single and average link have a sparse path without the bound.
DENSE_MAX_BYTES = 2**31


def check_dense_linkage(method: str, n: int, dense: bool | None = None) -> None:
    """Raise a ValueError naming ``method`` and ``n`` if its linkage would form a dense ``1 - C``
    of more than :data:`DENSE_MAX_BYTES` bytes.

    Dense: complete, weighted, Ward, centroid and median link always; single and average
    link only with ``dense=True`` (and average link with ``dense=None`` at ``n <= 4000``,
    far below the bound).

    Examples
    --------
    >>> check_dense_linkage("ward", 20_000)
    >>> check_dense_linkage("average", 100_000)
    >>> check_dense_linkage("ward", 30_000)
    Traceback (most recent call last):
    ...
    ValueError: method='ward' forms the dense 1 - C of n = 30000 objects (3.35 GiB, scipy copies it too), above the 2 GiB bound of DENSE_MAX_BYTES: use method='average' or 'single' (sparse) or fewer objects
    """
    n = V.check_int(n, "n", minimum=0)
    if method in _SPARSE_METHODS and not dense:
        return
    nbytes = 8 * (n * (n - 1) // 2)
    if nbytes > DENSE_MAX_BYTES:
        raise ValueError(
            f"method={method!r} forms the dense 1 - C of n = {n} objects ({nbytes / 2**30:.2f} GiB, "
            f"scipy copies it too), above the {DENSE_MAX_BYTES / 2**30:g} GiB bound of DENSE_MAX_BYTES: "
            "use method='average' or 'single' (sparse) or fewer objects")


class LinkageResult(NamedTuple):
    """Result of :func:`linkage_consensus`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Consensus partition, clusters numbered by first appearance.
    n_clusters : int
        Its number of clusters.
    linkage : ndarray, shape (n - 1, 4)
        The dendrogram in scipy's format (``Z[t] = [a, b, height, size]``).
    lifetimes : ndarray, shape (n + 1,)
        ``lifetimes[k]`` = k-cluster lifetime (0 at indices 0 and, unless ``allow_k1``, 1).
    method : str
    """

    labels: np.ndarray
    n_clusters: int
    linkage: np.ndarray
    lifetimes: np.ndarray
    method: str


def cut_tree_at(Z: Any, n_clusters: int) -> np.ndarray:
    """Partition with exactly ``n_clusters`` clusters: apply the first ``n - K`` merges of ``Z``.

    Cutting by merge order never returns fewer than K clusters when the top merge heights
    tie, unlike ``fcluster(Z, K, "maxclust")`` (docs/deviations.md#eac-fixed-k-cut); for tied heights the result
    follows the dendrogram's merge order.

    Parameters
    ----------
    Z : array_like, shape (n - 1, 4)
        Linkage matrix in scipy's format.
    n_clusters : int
        ``1 <= K <= n``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Labels ``0..K-1`` numbered by first appearance.

    Examples
    --------
    >>> Z = [[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 1.0, 4]]   # all heights tie
    >>> cut_tree_at(Z, 2).tolist()
    [0, 0, 1, 1]
    """
    Z = V.check_linkage(Z, "Z")
    n = Z.shape[0] + 1
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    uf = UnionFind(2 * n - 1)
    for t in range(n - K):  # merge t makes node n + t the root of both sides
        uf.link(int(Z[t, 0]), n + t)
        uf.link(int(Z[t, 1]), n + t)
    roots = uf.roots()[:n]
    _, first, inv = np.unique(roots, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inv.reshape(-1)].astype(np.int64)


def lifetimes(heights: Any, *, allow_k1: bool = False) -> np.ndarray:
    r"""k-cluster lifetimes of a dendrogram: :math:`\ell_k = h_{n-k+1} - h_{n-k}`.

    Parameters
    ----------
    heights : array_like, shape (n - 1,)
        Merge heights in merge order (scipy ``Z[:, 2]``), 1-based :math:`h_1..h_{n-1}`.
    allow_k1 : bool, default False
        Also give the 1-cluster partition a lifetime :math:`\max(0, 1 - h_{n-1})`
        (distances ``1 - C`` are at most 1: docs/deviations.md#eac-lifetime).  By default ``k = 1`` is excluded.

    Returns
    -------
    ndarray, shape (n + 1,)
        ``out[k]`` for ``k = 0..n``; ``out[0] = 0``; ``out[n] = h_1``; negative values
        (a merge below the previous one: centroid and median link are non-monotone) are
        clipped to 0, so such a k never wins the lifetime criterion
        (docs/deviations.md#eac-lifetime-nonmonotone).

    Examples
    --------
    >>> lifetimes([0.1, 0.2, 0.9]).round(2).tolist()   # n = 4
    [0.0, 0.0, 0.7, 0.1, 0.1]
    """
    h = V.check_array(heights, "heights", ndim=1, min_samples=0, dtype=None).astype(np.float64)
    if h.ndim != 1:
        raise ValueError(f"heights must be 1-D (n - 1 merge heights), got shape {h.shape}")
    if not np.all(np.isfinite(h)):
        # NaN compared false everywhere and its lifetimes were clipped to 0 silently
        raise ValueError("heights must be finite (merge heights of a dendrogram), got "
                         f"{int(np.sum(~np.isfinite(h)))} NaN or infinite value(s)")
    n = h.shape[0] + 1
    out = np.zeros(n + 1)
    hh = np.concatenate([[0.0], h])  # hh[j] = h_j, hh[0] = 0
    for k in range(2, n + 1):
        out[k] = hh[n - k + 1] - hh[n - k]
    if allow_k1 and n >= 2:
        out[1] = max(0.0, 1.0 - hh[n - 1])
    return np.maximum(out, 0.0)


def _single_linkage_sparse(U: sp.csr_matrix) -> np.ndarray:
    """Single-link dendrogram of ``D = 1 - C`` from the MST of the stored pairs.

    Pairs not stored have distance exactly 1; they join the components of the stored graph
    at height 1.  ``1 - C + eps`` is used as the MST weight so that pairs with ``C = 1``
    (distance 0) are not dropped (SciPy's MST output cannot hold a zero weight); the heights are recomputed from ``C``.
    """
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

    n = U.shape[0]
    eps = 1e-9
    W = U.copy()
    W.data = (1.0 - W.data) + eps
    T = minimum_spanning_tree(W).tocoo()
    i = np.minimum(T.row, T.col)
    j = np.maximum(T.row, T.col)
    h = (1.0 - np.asarray(U[i, j]).reshape(-1)) if i.size else np.zeros(0)
    h = np.clip(h, 0.0, 1.0)
    # Connect the components at height 1.
    n_comp, comp = connected_components(W, directed=False)
    if n_comp > 1:
        _, reps = np.unique(comp, return_index=True)
        i = np.concatenate([i, np.full(n_comp - 1, reps[0])])
        j = np.concatenate([j, reps[1:]])
        h = np.concatenate([h, np.ones(n_comp - 1)])
    order = np.lexsort((j, i, h))
    return _linkage_from_edges(n, i[order], j[order], h[order])


def _linkage_from_edges(n: int, i: np.ndarray, j: np.ndarray, h: np.ndarray) -> np.ndarray:
    """scipy linkage matrix from MST edges sorted by height (Kruskal with union-find)."""
    uf = UnionFind(2 * n - 1)
    size = np.ones(2 * n - 1, np.int64)
    Z = np.empty((n - 1, 4))
    for t in range(n - 1):
        a, b = uf.find(int(i[t])), uf.find(int(j[t]))
        a, b = min(a, b), max(a, b)
        uf.link(a, n + t)
        uf.link(b, n + t)
        size[n + t] = size[a] + size[b]
        Z[t] = (a, b, h[t], size[n + t])
    return Z


def _average_linkage_sparse(U: sp.csr_matrix) -> np.ndarray:
    """Average-link dendrogram of ``D = 1 - C`` keeping only connected cluster pairs.

    Missing pairs have distance exactly 1, so the average-link distance of clusters A, B is
    :math:`1 - S_{AB}/(|A||B|)` with :math:`S_{AB}=\\sum_{i\\in A,j\\in B}C_{ij}` over stored
    pairs.  Cluster-pair sums are kept in per-cluster dicts (merged
    smaller-into-larger) and the closest pair comes from a heap with lazy deletion; the
    generic algorithm is exact because average linkage is reducible.
    """
    import heapq

    n = U.shape[0]
    S = (U + U.T).tocsr()
    nbr: list[dict] = [dict() for _ in range(2 * n - 1)]
    heap = []
    for a in range(n):
        row = slice(S.indptr[a], S.indptr[a + 1])
        nbr[a] = dict(zip(S.indices[row].tolist(), S.data[row].tolist()))
    coo = U.tocoo()
    for a, b, c in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        heap.append((1.0 - c, a, b))
    heapq.heapify(heap)
    size = np.ones(2 * n - 1, np.int64)
    alive = np.zeros(2 * n - 1, bool)
    alive[:n] = True
    Z = np.empty((n - 1, 4))
    t = 0
    while heap and t < n - 1:
        d, a, b = heapq.heappop(heap)
        if not (alive[a] and alive[b]):
            continue
        new = n + t
        Z[t] = (min(a, b), max(a, b), max(d, 0.0), size[a] + size[b])
        size[new] = size[a] + size[b]
        alive[a] = alive[b] = False
        alive[new] = True
        na, nb = nbr[a], nbr[b]
        if len(na) < len(nb):
            na, nb = nb, na
        na.pop(a, None), na.pop(b, None), nb.pop(a, None), nb.pop(b, None)
        for x, s in nb.items():
            na[x] = na.get(x, 0.0) + s
        nbr[new] = na
        nbr[a] = nbr[b] = None  # type: ignore[assignment]
        for x, s in na.items():
            nx = nbr[x]
            nx.pop(a, None), nx.pop(b, None)
            nx[new] = s
            heapq.heappush(heap, (1.0 - s / (size[new] * size[x]), x, new))
        t += 1
    if t < n - 1:  # the remaining clusters are pairwise at distance 1
        roots = sorted(np.nonzero(alive)[0].tolist())
        cur = roots[0]
        for r in roots[1:]:
            new = n + t
            size[new] = size[cur] + size[r]
            Z[t] = (min(cur, r), max(cur, r), 1.0, size[new])
            cur = new
            t += 1
    return Z


def _condensed_distance(C) -> np.ndarray:
    """The condensed ``1 - C`` (scipy's ``pdist`` order), written from the stored pairs.

    One array of ``n (n - 1) / 2`` doubles; building the dense ``C``, ``1 - C`` and its
    clip first held about 2.5 dense ``n x n`` arrays (8 GiB at ``n = 20000``).
    """
    n = C.n_samples
    y = np.ones(n * (n - 1) // 2)
    U = C.normalized().tocoo()
    i, j = U.row.astype(np.int64), U.col.astype(np.int64)  # i < j: the upper triangle
    y[n * i - i * (i + 1) // 2 + (j - i - 1)] = 1.0 - np.clip(U.data, 0.0, 1.0)
    return y


def linkage_consensus(
    coassoc: Any,
    method: str = "average",
    n_clusters: int | None = None,
    *,
    allow_k1: bool = False,
    dense: bool | None = None,
) -> LinkageResult:
    r"""Consensus partition by hierarchical linkage on :math:`D = 1 - C` (EAC).

    Parameters
    ----------
    coassoc : CoAssociation or labelings
        A :class:`CoAssociation`, or anything :func:`coassociation` accepts.
    method : {"average", "single", "complete", "weighted", "ward", "centroid", "median"}
        Single link (SL) uses the minimum spanning tree of the stored pairs (sparse,
        ``O(nnz log n)``) unless ``dense=True``; average link (AL) uses scipy on the
        dense condensed distance when ``dense`` (default for ``n <= 4000``) and
        otherwise an exact sparse algorithm over the connected cluster pairs only.
        The other five always run ``scipy.cluster.hierarchy.linkage`` on the dense
        condensed ``1 - C`` (``n (n - 1) / 2`` doubles, and as much again for scipy's working
        copy): above :data:`DENSE_MAX_BYTES` (2 GiB, ``n > 23,170``) they raise a ValueError
        naming ``method`` (:func:`check_dense_linkage`).  ``"ward"``, ``"centroid"`` and ``"median"`` treat ``1 - C`` as if it
        were Euclidean (Lance-Williams updates on a non-Euclidean dissimilarity,
        docs/deviations.md#eac-euclidean-linkages); centroid and median trees can be
        non-monotone.
    n_clusters : int, optional
        Fixed K: apply the first ``n - K`` merges (:func:`cut_tree_at`, robust to ties,
        docs/deviations.md#eac-fixed-k-cut).  Default: the **lifetime criterion**, the k with the largest lifetime
        :math:`h_{n-k+1}-h_{n-k}` (smallest k on ties; k = 1 only with ``allow_k1``).
    allow_k1 : bool, default False
        See :func:`lifetimes`.
    dense : bool, optional
        Force the dense (scipy) or the sparse path of single / average link.  The other
        linkages have only the dense path: ``dense=False`` with them is a ValueError.

    Returns
    -------
    LinkageResult

    Notes
    -----
    Co-associations take values in :math:`\{0, 1/N, \dots, 1\}`, so merge heights tie a
    lot; tied merges follow scipy's order (dense) or (height, i, j) order (sparse), and a
    fixed-K cut inside a block of ties depends on that order.  Complete link is the
    extreme case: any two clusters holding one pair never co-clustered are at distance
    exactly 1, so the top merges of a CL tree typically all tie at height 1 and a
    fixed-K CL cut depends on the tie order.  The cut is by merge order
    (:func:`cut_tree_at`), never by height, so it also holds for the non-monotone
    centroid and median trees.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850.

    Examples
    --------
    >>> labelings = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> linkage_consensus(labelings, "average", 2).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> linkage_consensus(labelings, "single").n_clusters
    2
    """
    from scipy.cluster.hierarchy import linkage

    C = as_coassociation(coassoc)
    n = C.n_samples
    if n < 2:
        raise ValueError(f"linkage_consensus needs at least 2 objects, got {n}")
    if method not in LINKAGE_METHODS:
        raise ValueError(f"method must be one of {LINKAGE_METHODS}, got {method!r}")
    if dense is False and method not in _SPARSE_METHODS:
        raise ValueError(
            f"dense=False (the sparse path) exists only for method 'single' or 'average', got {method!r}"
        )
    if n_clusters is not None:
        n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
        if n_clusters > n:
            raise ValueError(f"n_clusters must be at most the number of objects {n}, got {n_clusters}")
    check_dense_linkage(method, n, dense)
    if method == "single":
        use_dense = bool(dense)
    elif method == "average":
        use_dense = (n <= _DENSE_MAX_N) if dense is None else bool(dense)
    else:
        use_dense = True
    if use_dense:
        Z = linkage(_condensed_distance(C), method=method)
    elif method == "single":
        Z = _single_linkage_sparse(C.normalized())
    else:
        Z = _average_linkage_sparse(C.normalized())
    life = lifetimes(Z[:, 2], allow_k1=allow_k1)
    if n_clusters is None:
        first = 1 if allow_k1 else 2
        n_clusters = int(np.argmax(life[first:])) + first
    labels = cut_tree_at(Z, n_clusters)
    return LinkageResult(labels, int(n_clusters), Z, life, method)
