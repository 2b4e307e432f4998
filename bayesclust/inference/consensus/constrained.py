r"""Constrained evidence accumulation (CEAC): constrained linkage on a co-association.

The co-association :math:`C` of an ensemble (:mod:`~bayesclust.inference.consensus.coassociation`)
is read as the distance :math:`D = 1 - C`, and the consensus is extracted by a
hierarchical algorithm that honours pairwise constraints: must-link pairs
:math:`\mathcal C_=` (same cluster) and cannot-link pairs :math:`\mathcal C_{\ne}`
(different clusters).  Two extractors (Duarte, Lourenço, Fred et al., CEAC, Section 3):

* **CSL** (constrained single link): the clusters start as the connected components of
  the must-link graph; the closest pair of clusters (single-link distance on ``D``) with no
  cannot-link pair between them is merged, until ``n_clusters`` remain.
* **CCL** (constrained complete link, Klein, Kamvar & Manning 2002): must-linked
  distances are set to 0, ``D`` is replaced by its shortest-path closure, cannot-linked
  distances are set to ``max(D) + 1``, and complete link is cut at ``n_clusters``.

Pipeline::

    ens = kmeans_ensemble(0, X, 50, n_clusters_range=(10, 30))
    C = coassociation(ens)
    ml, cl = random_constraints(1, y, 200)
    res = constrained_linkage_consensus(C, ml, cl, n_clusters=3, method="single")
    constraint_satisfaction(res.labels, ml, cl)

References
----------
S. Duarte, A. Lourenço, A. Fred et al., "Constrained evidence accumulation clustering"
(CEAC) and the ACCCS paper on constrained consensus clustering, Sections 3-4.
D. Klein, S. D. Kamvar and C. D. Manning, "From instance-level constraints to
space-level constraints: making the most of prior knowledge in data clustering",
ICML 2002.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from .._union_find import UnionFind
from ._common import _check_pairs
from .coassociation import CoAssociation
from .linkage import cut_tree_at

__all__ = [
    "ConstrainedLinkageResult",
    "constraint_satisfaction",
    "random_constraints",
    "constrained_linkage_consensus",
    "constrained_shortest_paths",
    "CONSTRAINED_METHODS",
]

#: The extractors :func:`constrained_linkage_consensus` accepts.
CONSTRAINED_METHODS = ("single", "complete")


class ConstrainedLinkageResult(NamedTuple):
    """Result of :func:`constrained_linkage_consensus`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Consensus partition, clusters numbered by first appearance.
    n_clusters : int
        Its number of clusters (more than requested when CSL runs out of allowed merges).
    method : str
        ``"single"`` (CSL) or ``"complete"`` (CCL).
    satisfaction : float
        :func:`constraint_satisfaction` of ``labels`` (NaN without constraints).
    """

    labels: np.ndarray
    n_clusters: int
    method: str
    satisfaction: float


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _check_constraints(must_link: Any, cannot_link: Any, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated constraints and the must-link component of every object.

    Raises ValueError on a pair both must- and cannot-linked and on an infeasible set
    (a cannot-link pair inside one must-link component).
    """
    from scipy.sparse.csgraph import connected_components

    ml = _check_pairs(must_link, "must_link", n)
    cl = _check_pairs(cannot_link, "cannot_link", n)
    if ml.shape[0] and cl.shape[0]:
        key_ml = set(map(tuple, np.sort(ml, axis=1).tolist()))
        for p in np.sort(cl, axis=1).tolist():
            if tuple(p) in key_ml:
                raise ValueError(f"the pair {tuple(p)} is both in must_link and in cannot_link")
    if ml.shape[0]:
        G = sp.coo_matrix((np.ones(ml.shape[0]), (ml[:, 0], ml[:, 1])), shape=(n, n))
        _, comp = connected_components(G, directed=False)
    else:
        comp = np.arange(n)
    if cl.shape[0]:
        inside = comp[cl[:, 0]] == comp[cl[:, 1]]
        if np.any(inside):
            p = tuple(cl[inside][0].tolist())
            raise ValueError(
                f"infeasible constraints: cannot_link pair {p} lies in one must-link component "
                "(the must-link pairs connect its two objects)"
            )
    return ml, cl, comp.astype(np.int64)


def _as_similarity(coassoc: Any, name: str = "coassoc") -> np.ndarray:
    """Dense symmetric co-association in [0, 1], shape (n, n), unit diagonal."""
    if isinstance(coassoc, CoAssociation):
        C = coassoc.toarray()  # symmetric, in [0, 1]
        np.fill_diagonal(C, 1.0)
        return C
    if sp.issparse(coassoc):
        M = sp.csr_matrix(coassoc).astype(np.float64)
        if M.shape[0] != M.shape[1]:
            raise ValueError(f"{name} must be square, got shape {M.shape}")
        if not np.all(np.isfinite(M.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
        C = M.toarray()
        if np.allclose(np.tril(C, -1), 0.0):  # upper triangle of a symmetric matrix
            C = np.triu(C, 1) + np.triu(C, 1).T
    else:
        C = V.check_array(coassoc, name, ndim=2, dtype=None)  # raises on NaN / inf
        if C.shape[0] != C.shape[1]:
            raise ValueError(f"{name} must be square, got shape {C.shape}")
        C = np.array(C, dtype=np.float64)
    if C.shape[0] < 2:
        raise ValueError(f"{name} must describe at least 2 objects, got {C.shape[0]}")
    np.fill_diagonal(C, 1.0)  # C is a fresh copy on every path
    if C.min() < 0 or C.max() > 1:
        raise ValueError(f"{name} must be a normalised co-association with values in [0, 1]")
    if not _is_symmetric(C, 1e-12):
        raise ValueError(f"{name} must be symmetric")
    return C


def _is_symmetric(C: np.ndarray, atol: float, block: int = 64) -> bool:
    """``max |C - C^T| <= atol``, one row block of the upper triangle against its mirror
    at a time (a whole ``C.T`` walks memory column-wise: slower, BENCHMARKS.md)."""
    n = C.shape[0]
    for i in range(0, n, block):
        upper, lower = C[i : i + block, i:], C[i:, i : i + block].T
        if not np.array_equal(upper, lower) and np.abs(upper - lower).max() > atol:
            return False
    return True


# ---------------------------------------------------------------------------
# constraints
# ---------------------------------------------------------------------------


def constraint_satisfaction(labels: Any, must_link: Any, cannot_link: Any) -> float:
    r"""Fraction of satisfied constraints (CEAC paper, eq. 5).

    .. math::
        CS = \frac{\sum_{(i,j)\in\mathcal C_=}[c_i=c_j]+\sum_{(i,j)\in\mathcal C_{\ne}}[c_i\ne c_j]}
                  {|\mathcal C_=|+|\mathcal C_{\ne}|}

    Parameters
    ----------
    labels : array_like of int, shape (n,)
    must_link, cannot_link : array_like of int, shape (m, 2), or None
        Index pairs; either may be empty.

    Returns
    -------
    float
        In [0, 1]; NaN when there are no constraints.

    Examples
    --------
    >>> constraint_satisfaction([0, 0, 1, 1], [[0, 1], [1, 2]], [[0, 3]])
    0.6666666666666666
    """
    lab = V.check_labels(labels, "labels")
    n = lab.shape[0]
    ml = _check_pairs(must_link, "must_link", n)
    cl = _check_pairs(cannot_link, "cannot_link", n)
    return float(satisfied_fraction(lab[None], ml, cl)[0])


def satisfied_fraction(labels: np.ndarray, must_link: np.ndarray, cannot_link: np.ndarray) -> np.ndarray:
    """Eq. 5 for every row of ``labels`` (p, n) at once, shape (p,); NaN without constraints.

    No validation: ``must_link`` / ``cannot_link`` are checked (m, 2) int64 arrays.
    """
    m = must_link.shape[0] + cannot_link.shape[0]
    if m == 0:
        return np.full(labels.shape[0], np.nan)
    ok = np.sum(labels[:, must_link[:, 0]] == labels[:, must_link[:, 1]], axis=1)
    ok = ok + np.sum(labels[:, cannot_link[:, 0]] != labels[:, cannot_link[:, 1]], axis=1)
    return ok / m


def random_constraints(rng_key: Any, y: Any, n_constraints: int) -> tuple[np.ndarray, np.ndarray]:
    """Random pairwise constraints from ground-truth labels (CEAC paper, Section 5).

    Draws ``n_constraints`` pairs ``(i, j)``, ``i != j`` uniformly (with replacement
    across draws); a pair of one class becomes a must-link, else a cannot-link.

    Parameters
    ----------
    rng_key : jax.random key or int
    y : array_like of int, shape (n,)
        Ground-truth classes, ``n >= 2``.
    n_constraints : int
        ``>= 0``.

    Returns
    -------
    must_link, cannot_link : ndarray of int64, shape (m_=, 2) and (m_!=, 2)
        ``m_= + m_!= = n_constraints``.

    Examples
    --------
    >>> ml, cl = random_constraints(0, [0, 0, 1, 1], 5)
    >>> len(ml) + len(cl)
    5
    """
    y = V.check_labels(y, "y")
    n = y.shape[0]
    if n < 2:
        raise ValueError(f"y must label at least 2 objects, got {n}")
    m = V.check_int(n_constraints, "n_constraints", minimum=0)
    rng = V.as_numpy_rng(rng_key)
    i = rng.integers(0, n, size=m)
    j = (i + rng.integers(1, n, size=m)) % n  # uniform over j != i
    pairs = np.stack([i, j], axis=1).astype(np.int64)
    same = y[i] == y[j]
    return pairs[same], pairs[~same]


# ---------------------------------------------------------------------------
# CSL
# ---------------------------------------------------------------------------


def _csl_must_link_only(D: np.ndarray, ml: np.ndarray, comp: np.ndarray, K: int) -> np.ndarray:
    r"""CSL without cannot-links: single link cut at ``K``, ties in (distance, i, j) order.

    Without cannot-links no merge is ever refused, so CSL is Kruskal's algorithm and its
    ``K`` clusters are the components of the pairs closer than the cut level :math:`h^*`
    (the :math:`(n-K)`-th merge height of single link, whatever order ties merge in) and
    the must-link pairs, joined by the pairs *at* :math:`h^*` in (i, j) order until ``K``
    remain.  SciPy's single link (an MST in C) gives :math:`h^*` and the components below it.
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    n = D.shape[0]
    if ml.shape[0]:
        D[ml[:, 0], ml[:, 1]] = 0.0  # D is the caller's private copy
        D[ml[:, 1], ml[:, 0]] = 0.0
    d = squareform(D, checks=False)
    Z = linkage(d, "single")  # an MST: O(n^2) time, no n x n work array
    h = Z[n - K - 1, 2]
    below = fcluster(Z, np.nextafter(h, -np.inf), "distance") - 1 if h > 0 else np.arange(n)
    # the components below h* and the must-link pairs, as a union-find forest
    _, first = np.unique(below, return_index=True)
    uf = UnionFind(parent=first[below])  # every object points at its component's first member
    k = first.size

    def union(i: int, j: int) -> None:
        nonlocal k
        a, b = uf.find(i), uf.find(j)
        if a != b:
            uf.link(max(a, b), min(a, b))
            k -= 1

    for i, j in ml.tolist():
        union(i, j)
    idx = np.flatnonzero(d == h)  # the pairs at h*; condensed order is (i, j) order
    starts = np.arange(n, dtype=np.int64)
    starts = starts * n - starts * (starts + 1) // 2  # condensed index of the pair (i, i + 1)
    ei = np.searchsorted(starts, idx, side="right") - 1
    ej = idx - starts[ei] + ei + 1
    cross = below[ei] != below[ej]  # pairs inside a component below h* never merge anything
    for i, j in zip(ei[cross].tolist(), ej[cross].tolist()):
        if k <= K:
            break
        union(i, j)
    return uf.roots()


def _csl(D: np.ndarray, comp: np.ndarray, cl: np.ndarray, K: int) -> np.ndarray:
    r"""Constrained single link: Kruskal over the pairs in (distance, i, j) order.

    The closest allowed pair of clusters is the first pair (i, j) in distance order whose
    clusters differ and are not cannot-linked: clusters only grow, so a pair skipped once
    (same cluster, or a cannot-link between its clusters) stays skipped.  Pairs come in
    batches of the smallest remaining distances (``argpartition`` on the condensed
    distances), so only the pairs up to the last merge are sorted.
    """
    from scipy.spatial.distance import squareform

    n = D.shape[0]
    _, cid0 = np.unique(comp, return_inverse=True)  # cluster id of every object, 0..k-1
    cid0 = cid0.reshape(-1).astype(np.int64)
    k = int(cid0.max()) + 1
    if k <= K:
        return cid0
    has_cl = cl.shape[0] > 0
    if has_cl:
        forbid = np.zeros((k, k), bool)
        forbid[cid0[cl[:, 0]], cid0[cl[:, 1]]] = True
        forbid[cid0[cl[:, 1]], cid0[cl[:, 0]]] = True
    cid = cid0.tolist()
    members: list[list[int]] = [[] for _ in range(k)]
    for i, c in enumerate(cid):
        members[c].append(i)
    d = squareform(D, checks=False)  # condensed, a copy: processed pairs are set to inf
    starts = np.arange(n, dtype=np.int64)
    starts = starts * n - starts * (starts + 1) // 2  # condensed index of the pair (i, i + 1)
    batch = max(4 * n, 1024)
    done = 0
    while k > K and done < d.size:
        if d.size - done > batch:
            t = np.partition(d, batch - 1)[batch - 1]
            idx = np.flatnonzero(d <= t)
        else:
            idx = np.flatnonzero(np.isfinite(d))
        idx = idx[np.lexsort((idx, d[idx]))]  # condensed order is (i, j) order
        done += idx.size
        bi = np.searchsorted(starts, idx, side="right") - 1
        bj = idx - starts[bi] + bi + 1
        d[idx] = np.inf
        for i, j in zip(bi.tolist(), bj.tolist()):
            a, b = cid[i], cid[j]
            if a == b or (has_cl and forbid[a, b]):
                continue
            if len(members[a]) < len(members[b]):
                a, b = b, a
            mb = members[b]
            for m in mb:
                cid[m] = a
            members[a].extend(mb)
            members[b] = []
            if has_cl:
                forbid[a] |= forbid[b]
                forbid[:, a] |= forbid[:, b]
            k -= 1
            if k <= K:
                break
        batch *= 2
    return np.asarray(cid, np.int64)


# ---------------------------------------------------------------------------
# CCL
# ---------------------------------------------------------------------------


def constrained_shortest_paths(D: Any, must_link: Any, *, method: str = "endpoints") -> np.ndarray:
    r"""All-pairs shortest paths of ``D`` with the must-linked distances set to 0.

    Step (1)-(2) of constrained complete link (Klein, Kamvar & Manning 2002, Section 4).

    Parameters
    ----------
    D : array_like, shape (n, n)
        Symmetric non-negative distances, zero diagonal.
    must_link : array_like of int, shape (m, 2)
    method : {"endpoints", "FW"}, default "endpoints"
        ``"FW"``: Floyd-Warshall on the whole graph (:math:`O(n^3)`).  ``"endpoints"``: a
        path that gets shorter uses zero must-link edges, so it runs from ``i`` to a must-link
        component ``p`` (whose members are 0 apart), hops between components, and leaves a
        component ``q`` for ``j``; with :math:`E_p(i) = \min_{u \in p} D_{ui}` and
        :math:`M^*` the shortest paths between the components (Dijkstra on the small graph
        :math:`M_{pq} = \min_{u\in p, v\in q} D_{uv}`),

        .. math:: D'_{ij} = \min\bigl(D_{ij},\ \min_{p,q} E_p(i) + M^*_{pq} + E_q(j)\bigr),

        :math:`O(r n^2)` for ``r`` must-link components.  Exact when ``D`` satisfies the
        triangle inequality, as :math:`1 - C` of a co-association of complete partitions does
        (the fraction of partitions separating two objects): then a direct hop is never longer
        than a detour through objects outside the components.  Otherwise only ``"FW"`` is
        exact (docs/deviations.md#ceac-ccl-shortest-paths).

    Returns
    -------
    ndarray, shape (n, n)

    Examples
    --------
    >>> D = [[0, .9, .9], [.9, 0, .5], [.9, .5, 0]]
    >>> constrained_shortest_paths(D, [[0, 1]]).tolist()
    [[0.0, 0.0, 0.5], [0.0, 0.0, 0.5], [0.5, 0.5, 0.0]]
    """
    from scipy.sparse.csgraph import connected_components, csgraph_from_dense, dijkstra, shortest_path

    D = V.check_square_matrix(D, "D", nonnegative=True, symmetric=True)
    n = D.shape[0]
    ml = _check_pairs(must_link, "must_link", n)
    if method not in ("endpoints", "FW"):
        raise ValueError(f"method must be 'endpoints' or 'FW', got {method!r}")
    D = D.copy()
    if ml.shape[0] == 0:
        return D if method == "endpoints" else shortest_path(D, method="FW", directed=False)
    D[ml[:, 0], ml[:, 1]] = 0.0
    D[ml[:, 1], ml[:, 0]] = 0.0
    # zero distances are edges too: only the (absent) infinite entries are non-edges
    G = csgraph_from_dense(D, null_value=np.inf)
    if method == "FW":
        return shortest_path(G, method="FW", directed=False)
    Gm = sp.coo_matrix((np.ones(ml.shape[0]), (ml[:, 0], ml[:, 1])), shape=(n, n))
    _, comp = connected_components(Gm, directed=False)
    roots = np.unique(comp[ml[:, 0]])  # the must-link components with two or more members
    # E[p, i]: distance from component p (its members are 0 apart) to object i
    E = np.stack([D[comp == r].min(axis=0) for r in roots])
    # shortest paths between the components, hopping by direct distances (Dijkstra, r x r)
    M = np.stack([E[:, comp == r].min(axis=1) for r in roots], axis=1)
    M = np.minimum(M, M.T)
    np.fill_diagonal(M, 0.0)
    Mstar = dijkstra(csgraph_from_dense(M, null_value=np.inf), directed=False)
    # SP[p, i] = min_q M*[p, q] + E[q, i]: shortest path from component p to i
    out = D
    for p in range(len(roots)):
        SPp = np.min(Mstar[p][:, None] + E, axis=0)
        np.minimum(out, E[p][:, None] + SPp[None, :], out=out)
    np.fill_diagonal(out, 0.0)
    return out


def _ccl(D: np.ndarray, ml: np.ndarray, cl: np.ndarray, K: int) -> np.ndarray:
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    Dp = constrained_shortest_paths(D, ml) if ml.shape[0] else D.copy()
    if cl.shape[0]:
        big = Dp.max() + 1.0
        Dp[cl[:, 0], cl[:, 1]] = big
        Dp[cl[:, 1], cl[:, 0]] = big
    np.fill_diagonal(Dp, 0.0)
    Z = linkage(squareform(Dp, checks=False), method="complete")
    return cut_tree_at(Z, K)


# ---------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------


def constrained_linkage_consensus(
    coassoc: Any,
    must_link: Any = None,
    cannot_link: Any = None,
    n_clusters: int = 2,
    method: str = "single",
) -> ConstrainedLinkageResult:
    r"""Consensus partition by constrained linkage on :math:`D = 1 - C` (CEAC).

    Parameters
    ----------
    coassoc : CoAssociation, scipy.sparse matrix or array_like, shape (n, n)
        A :class:`~bayesclust.inference.consensus.coassociation.CoAssociation`, or a normalised
        co-association with values in [0, 1] (dense symmetric, or sparse symmetric or upper
        triangular; the diagonal is ignored).
    must_link, cannot_link : array_like of int, shape (m, 2), or None
        Index pairs; either may be empty.
    n_clusters : int, default 2
        :math:`K^*`, ``1 <= K* <= n``.
    method : {"single", "complete"}, default "single"
        ``"single"`` — **CSL** (CEAC paper, Section 3): clusters start as the connected
        components of the must-link graph and the closest pair (single-link distance on
        ``D``) with no cannot-link pair between them merges, until ``n_clusters`` remain.
        If no allowed pair is left earlier, more clusters are returned with a
        ``UserWarning`` (docs/deviations.md#ceac-csl-stall).  Ties follow (distance, i, j) order.
        ``"complete"`` — **CCL** (Klein, Kamvar & Manning 2002): :math:`D_{ij}=0` on
        must-links, shortest-path closure (:func:`constrained_shortest_paths`), :math:`D_{ij}
        = \max D + 1` on cannot-links, complete link cut by merge order at ``n_clusters``
        (:func:`~bayesclust.inference.consensus.linkage.cut_tree_at`,
        docs/deviations.md#ceac-ccl-shortest-paths).  A forced cut can still separate
        must-linked or join cannot-linked objects when ``n_clusters`` is small; see
        ``satisfaction``.

    Returns
    -------
    ConstrainedLinkageResult

    Raises
    ------
    ValueError
        Indices outside ``[0, n)``, self-pairs, a pair both must- and cannot-linked, or an
        infeasible set (a cannot-link pair inside a must-link component).

    References
    ----------
    Duarte, Lourenço, Fred et al., CEAC, Section 3; Klein, Kamvar & Manning, ICML 2002.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[1, .9, .1, .1], [.9, 1, .1, .1], [.1, .1, 1, .8], [.1, .1, .8, 1]])
    >>> constrained_linkage_consensus(C, n_clusters=2).labels.tolist()
    [0, 0, 1, 1]
    >>> constrained_linkage_consensus(C, [[1, 2]], [[0, 1]], n_clusters=2).labels.tolist()
    [0, 1, 1, 1]
    """
    C = _as_similarity(coassoc)
    n = C.shape[0]
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    if method not in CONSTRAINED_METHODS:
        raise ValueError(f"method must be one of {CONSTRAINED_METHODS}, got {method!r}")
    ml, cl, comp = _check_constraints(must_link, cannot_link, n)
    D = np.subtract(1.0, C, out=C)  # C is a private copy; the diagonal becomes 0
    if method == "single":
        if cl.shape[0] == 0 and int(comp.max()) + 1 > K:
            cid = _csl_must_link_only(D, ml, comp, K)
        else:
            cid = _csl(D, comp, cl, K)
        _, first, inv = np.unique(cid, return_index=True, return_inverse=True)
        labels = np.argsort(np.argsort(first))[inv.reshape(-1)].astype(np.int64)
        k = int(labels.max()) + 1
        if k > K:
            warnings.warn(
                f"constrained single link stopped at {k} clusters: no pair of clusters without a "
                f"cannot-link between them is left to reach n_clusters={K}",
                UserWarning, stacklevel=2,
            )
    else:
        labels = _ccl(D, ml, cl, K)
        k = int(labels.max()) + 1
    return ConstrainedLinkageResult(labels, k, method, constraint_satisfaction(labels, ml, cl))
