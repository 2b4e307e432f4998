r"""Evidence accumulation clustering (EAC): ensembles, a sparse co-association
matrix and linkage consensus with the lifetime criterion.

Any source of labelings feeds the same machinery: an ensemble of k-means runs
(:func:`kmeans_ensemble`, with K drawn by the papers' split-and-merge rules and
optional sub-sampling), user partitions of possibly different K, or the label
draws of a :class:`~bayesclust.inference.posterior.Posterior` (a co-association
matrix over an ensemble *is* a posterior co-clustering matrix over MCMC draws).

Pipeline::

    ens = kmeans_ensemble(0, X)                 # (N, n) labels, K ~ U{K_min..K_max}
    C = coassociation(ens)                      # sparse upper triangle of counts
    res = linkage_consensus(C, "average", n_clusters=3)   # or the lifetime criterion

The co-association is kept **sparse** (``scipy.sparse``, pairs ``i < j`` only):
with the split-and-merge rule ``K_min = n / A`` its number of stored pairs grows
linearly in ``n`` (about ``2 A n`` pairs, Lourenco, Fred & Jain 2010).

References
----------
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence
accumulation", IEEE TPAMI 27(6) (2005) 835-850.
A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
clustering", ICPR 2010 (SIMBAD D2.3, seed 003, L2209-L2376).
A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for
evidence accumulation clustering", SIMBAD 2011 (seed 003, L751-L1042).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax import lax

from . import _validation as V
from ._validation import check_labelings
from .kernels import nearest_center, nearest_center_stats, weighted_means

__all__ = [
    "k_bounds",
    "Ensemble",
    "kmeans_ensemble",
    "check_labelings",
    "CoAssociation",
    "coassociation",
    "coassociation_dense",
    "LinkageResult",
    "linkage_consensus",
    "cut_tree_at",
    "lifetimes",
]


# ---------------------------------------------------------------------------
# K rules
# ---------------------------------------------------------------------------


def _round(x: float, rounding: str) -> int:
    if rounding == "ceil":
        return int(math.ceil(x - 1e-12))
    if rounding == "round_half_up":
        return int(math.floor(x + 0.5))  # errata 6: never Python's round (half to even)
    raise ValueError(f"rounding must be 'ceil' or 'round_half_up', got {rounding!r}")


def k_bounds(n: int, rule: str = "penca", *, rounding: str = "ceil", A: float = 50, B: float = 20) -> tuple[int, int]:
    r"""Range ``[K_min, K_max]`` of the number of clusters of an ensemble's partitions.

    Parameters
    ----------
    n : int
        Number of objects.
    rule : {"penca", "sqrt", "linear"}
        * ``"penca"`` (PEnCA / DR-EAC, seed L964):
          :math:`K_{min}=\max(\lceil\sqrt n/2\rceil,\lceil n/50\rceil)`, :math:`K_{max}=K_{min}+20`;
        * ``"sqrt"`` (scalability rule A): :math:`\{\lceil\sqrt n/2\rceil,\lceil\sqrt n\rceil\}`;
        * ``"linear"`` (scalability rule B): :math:`\{\lceil n/A\rceil,\lceil n/B\rceil\}`, ``A > B``;
          it makes the co-association's size linear in ``n`` (about ``2 A n`` stored pairs).
    rounding : {"ceil", "round_half_up"}
        ``"ceil"`` is the printed formula; ``"round_half_up"`` (``floor(x + 0.5)``) reproduces
        Table I of the scalability paper (all cells but three, errata 6).
    A, B : float
        The linear rule's divisors (paper: 50 and 20).

    Returns
    -------
    (int, int)
        ``K_min <= K_max``, both at least 1 and at most ``n``.

    Examples
    --------
    >>> k_bounds(150)
    (7, 27)
    >>> k_bounds(450, "linear", rounding="round_half_up")
    (9, 23)
    """
    n = V.check_int(n, "n", minimum=1)
    A = V.check_positive(A, "A")
    B = V.check_positive(B, "B")
    if rule == "penca":
        kmin = max(_round(math.sqrt(n) / 2, rounding), _round(n / 50, rounding))
        kmax = kmin + 20
    elif rule == "sqrt":
        kmin, kmax = _round(math.sqrt(n) / 2, rounding), _round(math.sqrt(n), rounding)
    elif rule == "linear":
        if not A > B:
            raise ValueError(f"the linear rule needs A > B, got A={A}, B={B}")
        kmin, kmax = _round(n / A, rounding), _round(n / B, rounding)
    else:
        raise ValueError(f"rule must be 'penca', 'sqrt' or 'linear', got {rule!r}")
    kmin = min(max(kmin, 1), n)
    kmax = min(max(kmax, kmin), n)
    return kmin, kmax


# ---------------------------------------------------------------------------
# Ensembles
# ---------------------------------------------------------------------------


class Ensemble(NamedTuple):
    """A clustering ensemble (result of :func:`kmeans_ensemble`).

    Attributes
    ----------
    labels : ndarray of int32, shape (N, n)
        Partition ``l`` of object ``i``; ``-1`` marks an object left out of partition
        ``l``'s sub-sample.
    n_clusters : ndarray of int, shape (N,)
        The K drawn for every partition (a k-means cluster may end empty, so a partition
        can have fewer distinct labels).
    k_min, k_max : int
        The range K was drawn from.
    """

    labels: np.ndarray
    n_clusters: np.ndarray
    k_min: int
    k_max: int


class _LloydState(NamedTuple):
    centers: jax.Array
    labels: jax.Array
    it: jax.Array
    done: jax.Array


@functools.partial(jax.jit, static_argnames=("capacity",))
def _masked_kmeans(key, X, k, capacity, max_iter):
    """Lloyd's k-means with ``k <= capacity`` active centres in a fixed buffer.

    One compilation serves every K of an ensemble (the unused slots are masked out of
    the assignment).  Random initialisation: ``k`` distinct data points.  Empty clusters
    keep their centre (as :func:`bayesclust.inference.kmeans.kmeans`).
    """
    n = X.shape[0]
    idx = jax.random.permutation(key, n)[:capacity]
    centers = X[idx]
    valid = jnp.arange(capacity) < k

    def cond(s):
        return (s.it < max_iter) & ~s.done

    def body(s):
        assigned, stats = nearest_center_stats(X, s.centers, valid)
        labels = assigned.index
        new = jnp.where(stats.weight[:, None] > 0, weighted_means(stats), s.centers)
        return _LloydState(new, labels, s.it + 1, jnp.all(labels == s.labels))

    init = _LloydState(centers, jnp.full(n, -1, jnp.int32), jnp.asarray(0, jnp.int32), jnp.asarray(False))
    s = lax.while_loop(cond, body, init)
    return nearest_center(X, s.centers, valid).index


def _numpy_rng(key) -> np.random.Generator:
    """A NumPy generator seeded by a JAX key's raw bits (no compilation)."""
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.random.default_rng(np.asarray(key).astype(np.uint64).ravel().tolist())


def _kmeans_numpy(rng: np.random.Generator, X: np.ndarray, k: int, max_iter: int) -> np.ndarray:
    """Lloyd's k-means with a KD-tree assignment step (exact nearest centre).

    Random initialisation from ``k`` distinct data points; an empty cluster keeps its
    centre (as :func:`bayesclust.inference.kmeans.kmeans`).  No compilation, and
    ``O(n log k)`` per assignment in low dimension: the fast path for ensembles of many
    small runs with changing K.
    """
    from scipy.spatial import cKDTree

    n, d = X.shape
    centers = X[rng.choice(n, size=k, replace=False)].astype(np.float64)
    labels = np.full(n, -1, np.int64)
    for _ in range(max_iter):
        new = cKDTree(centers).query(X, k=1)[1].astype(np.int64)
        if np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(d)], axis=1)
        nz = counts > 0
        centers[nz] = sums[nz] / counts[nz, None]
    return cKDTree(centers).query(X, k=1)[1].astype(np.int64)


def kmeans_ensemble(
    rng_key: Any,
    X: Any,
    n_partitions: int = 150,
    *,
    n_clusters_range: tuple[int, int] | None = None,
    rule: str = "penca",
    rounding: str = "ceil",
    subsample: float | None = None,
    max_iter: int = 100,
    backend: str = "numpy",
) -> Ensemble:
    r"""Split-and-merge clustering ensemble: ``N`` k-means runs with random K and init.

    Partition ``l`` runs Lloyd's k-means from ``K_l`` distinct random data points, with
    :math:`K_l \sim U\{K_{min},\dots,K_{max}\}` (inclusive), on all objects or on a random
    sub-sample of ``round(subsample * n)`` objects (the others get label ``-1``).

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    n_partitions : int, default 150
        ``N`` (PEnCA does not state it; 150 as in the scalability paper).
    n_clusters_range : (int, int), optional
        ``(K_min, K_max)``; default :func:`k_bounds` ``(n, rule, rounding=rounding)``.
        ``K_max`` is capped at the number of objects of a partition.
    rule, rounding : str
        See :func:`k_bounds`.
    subsample : float in (0, 1], optional
        Fraction of objects clustered by each partition (e.g. 0.9 in the PPC paper).
    max_iter : int, default 100
        Lloyd iterations per partition (stops earlier when the assignment repeats).
    backend : {"numpy", "jax"}, default "numpy"
        ``"numpy"``: Lloyd with a KD-tree nearest-centre search (no compilation,
        ``O(n log K)`` assignments in low dimension).  ``"jax"``: one jit-compiled masked
        Lloyd loop on :func:`bayesclust.kernels.nearest_center` for every K (a buffer of
        capacity ``K_max``).  Measured on iris (N = 150, K in [7, 27], shared 2-core
        machine): numpy 0.3 s; jax 1.1 s plus a 5 s compilation per data shape.  Both
        are Lloyd from random distinct data points, so they differ only by the random
        streams and tie-breaking.

    Returns
    -------
    Ensemble

    Notes
    -----
    All partitions share one compiled program: the centres live in a buffer of capacity
    ``K_max`` and the unused slots are masked (:func:`bayesclust.kernels.nearest_center`).
    A single random initialisation per run (``init="random"``, ``n_init=1``) is used on
    purpose: diversity is the point of the ensemble (spec §2.2).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + np.arange(10)[:, None] * 1e-3
    >>> ens = kmeans_ensemble(0, X, 4, n_clusters_range=(2, 3))
    >>> ens.labels.shape, bool(np.all((ens.n_clusters >= 2) & (ens.n_clusters <= 3)))
    ((4, 10), True)
    """
    X = V.check_array(X, "X")
    n = X.shape[0]
    N = V.check_int(n_partitions, "n_partitions", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    m = n
    if subsample is not None:
        rate = V.check_positive(subsample, "subsample")
        if rate > 1:
            raise ValueError(f"subsample must be in (0, 1], got {subsample!r}")
        m = max(1, int(math.floor(rate * n + 0.5)))
    if n_clusters_range is None:
        kmin, kmax = k_bounds(n, rule, rounding=rounding)
    else:
        if len(n_clusters_range) != 2:
            raise ValueError(f"n_clusters_range must be a pair (K_min, K_max), got {n_clusters_range!r}")
        kmin = V.check_int(n_clusters_range[0], "n_clusters_range[0]", minimum=1)
        kmax = V.check_int(n_clusters_range[1], "n_clusters_range[1]", minimum=1)
        if kmax < kmin:
            raise ValueError(f"n_clusters_range must have K_min <= K_max, got {n_clusters_range!r}")
    n_distinct = np.unique(X, axis=0).shape[0]
    cap = min(m, n_distinct)
    kmin, kmax = min(kmin, cap), min(kmax, cap)
    if backend not in ("numpy", "jax"):
        raise ValueError(f"backend must be 'numpy' or 'jax', got {backend!r}")
    key = V.as_rng_key(rng_key)
    master = _numpy_rng(key)
    ks = master.integers(kmin, kmax + 1, size=N)
    labels = np.full((N, n), -1, np.int32)
    if backend == "numpy":
        seeds = master.integers(0, np.iinfo(np.int64).max, size=N)
        X64 = X.astype(np.float64)
        for l in range(N):
            rng = np.random.default_rng(int(seeds[l]))
            idx = np.sort(rng.choice(n, size=m, replace=False)) if m < n else slice(None)
            labels[l, idx] = _kmeans_numpy(rng, X64[idx], int(ks[l]), max_iter)
        return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))
    s_key, run_key = jax.random.split(key)
    Xj = jnp.asarray(X)
    for l in range(N):
        kl = jax.random.fold_in(run_key, l)
        if m < n:
            idx = np.sort(np.asarray(jax.random.permutation(jax.random.fold_in(s_key, l), n)[:m]))
            Xl = Xj[idx]
        else:
            idx, Xl = slice(None), Xj
        lab = _masked_kmeans(kl, Xl, jnp.int32(ks[l]), kmax, jnp.int32(max_iter))
        labels[l, idx] = np.asarray(lab)
    return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))


# ---------------------------------------------------------------------------
# Labelings
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Co-association
# ---------------------------------------------------------------------------


class CoAssociation(NamedTuple):
    r"""Sparse co-association of an ensemble (result of :func:`coassociation`).

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of int32, shape (n, n)
        Strict upper triangle (``i < j``): :math:`n_{ij}` = number of partitions in which
        objects ``i`` and ``j`` share a cluster.  Pairs never co-clustered are not stored.
    n_partitions : int
        ``N``.
    pair_trials : scipy.sparse.csr_matrix or None
        With missing objects (sub-sampled partitions): :math:`N_{ij}` = number of partitions
        containing both objects, at the stored pairs only (same pattern as ``counts``);
        ``None`` when every partition labels every object (then :math:`N_{ij} = N`).
    sampled : ndarray of int, shape (n,)
        Number of partitions containing each object.
    """

    counts: sp.csr_matrix
    n_partitions: int
    pair_trials: sp.csr_matrix | None
    sampled: np.ndarray

    @property
    def n_samples(self) -> int:
        """Number of objects ``n``."""
        return int(self.counts.shape[0])

    @property
    def nnz(self) -> int:
        """Stored pairs (upper triangle)."""
        return int(self.counts.nnz)

    @property
    def nbytes(self) -> int:
        """Memory of the stored matrices (data + indices + indptr), in bytes."""
        mats = [self.counts] + ([self.pair_trials] if self.pair_trials is not None else [])
        return int(sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in mats))

    def normalized(self) -> sp.csr_matrix:
        r"""Upper triangle of :math:`C_{ij} = n_{ij} / N_{ij}` (float64 csr, ``i < j``)."""
        C = self.counts.astype(np.float64)
        if self.pair_trials is None:
            C.data /= self.n_partitions
        else:
            C.data /= self.pair_trials.data
        return C

    def symmetric_counts(self) -> sp.csr_matrix:
        r"""The PEnCA count matrix: full symmetric :math:`n_{ij}`, zero diagonal (float64).

        Both orders ``(y, z)`` and ``(z, y)`` of every co-occurring pair are in the
        multiset :math:`\mathcal S` (errata 2), so ``sum()`` equals :math:`|\mathcal S|`.
        """
        U = self.counts.astype(np.float64)
        return (U + U.T).tocsr()

    def toarray(self) -> np.ndarray:
        """Dense normalised co-association, unit diagonal for sampled objects, shape (n, n)."""
        U = self.normalized().toarray()
        D = U + U.T
        D[np.diag_indices_from(D)] = (self.sampled > 0).astype(np.float64)
        return D


def _popcount_pairs(bits: np.ndarray, rows: np.ndarray, cols: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """``sum_l s_{il} s_{jl}`` for each pair from packed sampling bitmasks (errata 8)."""
    out = np.empty(rows.shape[0], np.int32)
    for s in range(0, rows.shape[0], chunk):
        a = bits[rows[s : s + chunk]] & bits[cols[s : s + chunk]]
        out[s : s + chunk] = np.bitwise_count(a).sum(axis=1, dtype=np.int32)
    return out


def coassociation(labelings: Any, *, allow_missing: bool | None = None, max_pairs_per_batch: int = 20_000_000) -> CoAssociation:
    r"""Sparse co-association (evidence accumulation) of a set of partitions.

    :math:`n_{ij} = \sum_{l=1}^N [\ell^l_i = \ell^l_j \ne -1]` for ``i < j``, accumulated
    batch by batch as the upper triangle of :math:`Z Z^\top`, where ``Z`` (sparse,
    ``n x sum_l K_l``) one-hot encodes the batch's clusters.  Only co-clustered pairs are
    stored: with the split-and-merge rule ``K_min = n/A`` there are about
    :math:`2n^2/K_{min} = 2An` of them (errata 7: the upper-triangle count).

    Parameters
    ----------
    labelings : array_like (N, n), list, :class:`Ensemble` or Posterior
        See :func:`check_labelings`.
    allow_missing : bool, optional
        ``-1`` marks an object absent from a partition (default: True for an
        :class:`Ensemble` only).  Then :math:`N_{ij}` (partitions containing both objects)
        is computed at the stored pairs from packed sampling bitmasks, never as a dense
        matrix (errata 8).
    max_pairs_per_batch : int
        Bound on the co-clustered pairs (:math:`\sum_k n_k^2`) accumulated per batch of
        partitions (peak memory only).

    Returns
    -------
    CoAssociation

    References
    ----------
    A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
    clustering", ICPR 2010.

    Examples
    --------
    >>> C = coassociation([[0, 0, 1, 1], [0, 0, 0, 1], [1, 1, 0, 0]])
    >>> C.counts.toarray()
    array([[0, 3, 1, 0],
           [0, 0, 1, 0],
           [0, 0, 0, 2],
           [0, 0, 0, 0]], dtype=int32)
    >>> float(C.normalized()[2, 3])
    0.6666666666666666
    """
    codes = check_labelings(labelings, allow_missing=allow_missing)
    max_pairs_per_batch = V.check_int(max_pairs_per_batch, "max_pairs_per_batch", minimum=1)
    N, n = codes.shape
    observed = codes >= 0
    sizes = [np.bincount(codes[l, observed[l]]) for l in range(N)]
    pairs = np.array([int(np.sum(s.astype(np.int64) ** 2)) for s in sizes])
    acc = sp.csr_matrix((n, n), dtype=np.int32)
    start = 0
    while start < N:
        stop, total = start + 1, pairs[start]
        while stop < N and total + pairs[stop] <= max_pairs_per_batch:
            total += pairs[stop]
            stop += 1
        block = codes[start:stop]
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in sizes[start:stop]])])
        obs = block >= 0
        r = np.nonzero(obs.T)  # (object, partition) in row-major order of objects
        cols = block.T[r] + offsets[r[1]]
        Z = sp.csr_matrix(
            (np.ones(cols.shape[0], np.int32), (r[0], cols)), shape=(n, int(offsets[-1]))
        )
        acc = acc + sp.triu(Z @ Z.T, k=1, format="csr")
        start = stop
    acc = acc.astype(np.int32).tocsr()
    acc.sum_duplicates()
    acc.sort_indices()
    sampled = observed.sum(axis=0).astype(np.int64)
    trials = None
    if not np.all(observed):
        bits = np.packbits(observed.T, axis=1)  # (n, ceil(N/8))
        coo = acc.tocoo()
        t = _popcount_pairs(bits, coo.row, coo.col)
        trials = sp.csr_matrix((t, acc.indices.copy(), acc.indptr.copy()), shape=(n, n))
    return CoAssociation(acc, N, trials, sampled)


def coassociation_dense(labelings: Any, *, allow_missing: bool | None = None) -> np.ndarray:
    r"""Dense normalised co-association :math:`C_{ij} = n_{ij}/N_{ij}` (unit diagonal), shape (n, n).

    One-hot products :math:`A^l = Z^l Z^{l\top}` summed over partitions (``O(n^2)``
    memory; for small ``n``).  With missing objects the divisor is
    :math:`N_{ij}=\sum_l[\ell^l_i\ne-1][\ell^l_j\ne-1]` (errata 10); pairs never sampled
    together get 0.

    Examples
    --------
    >>> coassociation_dense([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    codes = check_labelings(labelings, allow_missing=allow_missing)
    N, n = codes.shape
    counts = np.zeros((n, n))
    trials = np.zeros((n, n))
    for l in range(N):
        obs = codes[l] >= 0
        Z = np.zeros((n, int(codes[l].max()) + 1))
        Z[np.nonzero(obs)[0], codes[l, obs]] = 1.0
        counts += Z @ Z.T
        trials += np.outer(obs, obs)
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.where(trials > 0, counts / np.where(trials > 0, trials, 1), 0.0)
    return C


def _as_coassociation(coassoc: Any) -> CoAssociation:
    if isinstance(coassoc, CoAssociation):
        return coassoc
    return coassociation(coassoc)


# ---------------------------------------------------------------------------
# Linkage consensus
# ---------------------------------------------------------------------------


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


class _UnionFind:
    def __init__(self, n: int):
        self.parent = np.arange(n)

    def find(self, a: int) -> int:
        p = self.parent
        root = a
        while p[root] != root:
            root = p[root]
        while p[a] != root:
            p[a], a = root, p[a]
        return root


def cut_tree_at(Z: Any, n_clusters: int) -> np.ndarray:
    """Partition with exactly ``n_clusters`` clusters: apply the first ``n - K`` merges of ``Z``.

    Cutting by merge order never returns fewer than K clusters when the top merge heights
    tie, unlike ``fcluster(Z, K, "maxclust")`` (errata 1); for tied heights the result
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
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[1] != 4:
        raise ValueError(f"Z must be a linkage matrix of shape (n - 1, 4), got {Z.shape}")
    n = Z.shape[0] + 1
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    uf = _UnionFind(2 * n - 1)
    for t in range(n - K):
        a, b = int(Z[t, 0]), int(Z[t, 1])
        uf.parent[uf.find(a)] = n + t
        uf.parent[uf.find(b)] = n + t
    roots = np.array([uf.find(i) for i in range(n)])
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
        (distances ``1 - C`` are at most 1; errata 12).  By default ``k = 1`` is excluded.

    Returns
    -------
    ndarray, shape (n + 1,)
        ``out[k]`` for ``k = 0..n``; ``out[0] = 0``; ``out[n] = h_1``; negative values
        (non-monotone linkages) are clipped to 0.

    Examples
    --------
    >>> lifetimes([0.1, 0.2, 0.9]).round(2).tolist()   # n = 4
    [0.0, 0.0, 0.7, 0.1, 0.1]
    """
    h = np.asarray(heights, dtype=np.float64).reshape(-1)
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
    (distance 0) are not dropped (errata 9); the heights are recomputed from ``C``.
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
    uf = _UnionFind(2 * n - 1)
    size = np.ones(2 * n - 1, np.int64)
    Z = np.empty((n - 1, 4))
    for t in range(n - 1):
        a, b = uf.find(int(i[t])), uf.find(int(j[t]))
        a, b = min(a, b), max(a, b)
        uf.parent[a] = uf.parent[b] = n + t
        size[n + t] = size[a] + size[b]
        Z[t] = (a, b, h[t], size[n + t])
    return Z


def _average_linkage_sparse(U: sp.csr_matrix) -> np.ndarray:
    """Average-link dendrogram of ``D = 1 - C`` keeping only connected cluster pairs.

    Missing pairs have distance exactly 1, so the average-link distance of clusters A, B is
    :math:`1 - S_{AB}/(|A||B|)` with :math:`S_{AB}=\\sum_{i\\in A,j\\in B}C_{ij}` over stored
    pairs (spec §6.2).  Cluster-pair sums are kept in per-cluster dicts (merged
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
    method : {"average", "single"}
        Single link (SL) uses the minimum spanning tree of the stored pairs (sparse,
        ``O(nnz log n)``); average link (AL) uses scipy on the dense condensed distance
        when ``dense`` (default for ``n <= 4000``) and otherwise an exact sparse
        algorithm over the connected cluster pairs only.
    n_clusters : int, optional
        Fixed K: apply the first ``n - K`` merges (:func:`cut_tree_at`, robust to ties,
        errata 1).  Default: the **lifetime criterion**, the k with the largest lifetime
        :math:`h_{n-k+1}-h_{n-k}` (smallest k on ties; k = 1 only with ``allow_k1``).
    allow_k1 : bool, default False
        See :func:`lifetimes`.
    dense : bool, optional
        Force the dense (scipy) or sparse average-link path.

    Returns
    -------
    LinkageResult

    Notes
    -----
    Co-associations take values in :math:`\{0, 1/N, \dots, 1\}`, so merge heights tie a
    lot; tied merges follow scipy's order (dense) or (height, i, j) order (sparse), and a
    fixed-K cut inside a block of ties depends on that order.

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
    from scipy.spatial.distance import squareform

    C = _as_coassociation(coassoc)
    n = C.n_samples
    if n < 2:
        raise ValueError(f"linkage_consensus needs at least 2 objects, got {n}")
    if method not in ("single", "average"):
        raise ValueError(f"method must be 'single' or 'average', got {method!r}")
    if n_clusters is not None:
        n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
        if n_clusters > n:
            raise ValueError(f"n_clusters must be at most the number of objects {n}, got {n_clusters}")
    U = C.normalized()
    if method == "single":
        Z = _single_linkage_sparse(U)
    else:
        use_dense = (n <= 4000) if dense is None else bool(dense)
        if use_dense:
            D = 1.0 - C.toarray()
            np.fill_diagonal(D, 0.0)
            Z = linkage(squareform(np.clip(D, 0.0, 1.0), checks=False), method="average")
        else:
            Z = _average_linkage_sparse(U)
    life = lifetimes(Z[:, 2], allow_k1=allow_k1)
    if n_clusters is None:
        first = 1 if allow_k1 else 2
        n_clusters = int(np.argmax(life[first:])) + first
    labels = cut_tree_at(Z, n_clusters)
    return LinkageResult(labels, int(n_clusters), Z, life, method)
