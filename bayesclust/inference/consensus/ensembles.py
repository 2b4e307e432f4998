r"""Clustering ensembles for evidence accumulation: the split-and-merge k-means ensemble,
the rules for its number of clusters, and grid ensembles of several base clusterers.

:func:`kmeans_ensemble` draws K at random for every k-means run (Fred & Jain 2005;
Lourenco, Fred & Jain 2010); :func:`clustering_ensemble` runs every base clusterer
(k-means, single / average / complete / Ward linkage, NJW spectral clustering or a
callable) a fixed number of times for every K of a grid, optionally on random
sub-samples (Rota Bulò, Lourenço, Fred & Pelillo 2010; Medina & Fred).

An ensemble is an ``(N, n)`` array of labelings (``-1`` marks an object left out of a
partition's sub-sample); everything downstream (:mod:`~bayesclust.inference.consensus.coassociation`,
:mod:`~bayesclust.inference.consensus.linkage`, :mod:`~bayesclust.inference.consensus.aspect_em`) accepts any
such array, a list of label vectors, or a :class:`~bayesclust.inference.mixtures.posterior.Posterior`'s
label draws.

References
----------
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
IEEE TPAMI 27(6) (2005) 835-850.
A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
clustering", ICPR 2010.
S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering
using evidence accumulation", SSPR 2010.
A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering: analysis and an
algorithm", NIPS 2001.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from .._driver import permutation
from .._sharding import check_divides, check_mesh, replicate, shard_leading, to_host
from ..hard.kmeans import lloyd_host, masked_lloyd
from ._common import _default_sigmas

__all__ = ["k_bounds", "Ensemble", "kmeans_ensemble", "clustering_ensemble", "spectral_grid_ensemble",
           "BASE_CLUSTERERS", "SPECTRAL_METHODS"]


# ---------------------------------------------------------------------------
# K rules
# ---------------------------------------------------------------------------


def _round(x: float, rounding: str) -> int:
    if rounding == "ceil":
        return int(math.ceil(x - 1e-12))
    if rounding == "round_half_up":
        return int(math.floor(x + 0.5))  # never Python's round (half to even: 12.5 -> 12, Table I has 13)
    raise ValueError(f"rounding must be 'ceil' or 'round_half_up', got {rounding!r}")


def k_bounds(n: int, k_rule: str = "penca", *, rounding: str = "ceil", A: float = 50, B: float = 20) -> tuple[int, int]:
    r"""Range ``[K_min, K_max]`` of the number of clusters of an ensemble's partitions.

    Parameters
    ----------
    n : int
        Number of objects.
    k_rule : {"penca", "sqrt", "linear"}
        The rule:

        * ``"penca"`` (PEnCA / DR-EAC; Lourenco, Fred & Figueiredo 2011, §5):
          :math:`K_{min}=\max(\lceil\sqrt n/2\rceil,\lceil n/50\rceil)`, :math:`K_{max}=K_{min}+20`;
        * ``"sqrt"`` (scalability rule A): :math:`\{\lceil\sqrt n/2\rceil,\lceil\sqrt n\rceil\}`;
        * ``"linear"`` (scalability rule B): :math:`\{\lceil n/A\rceil,\lceil n/B\rceil\}`, ``A > B``;
          it makes the co-association's size linear in ``n`` (about ``2 A n`` stored pairs).
    rounding : {"ceil", "round_half_up"}
        ``"ceil"`` is the printed formula; ``"round_half_up"`` (``floor(x + 0.5)``) reproduces
        Table I of the scalability paper (all cells but three: docs/deviations.md#k-rule-rounding).
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
    rule = k_rule
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
        raise ValueError(f"k_rule must be 'penca', 'sqrt' or 'linear', got {rule!r}")
    kmin = min(max(kmin, 1), n)
    kmax = min(max(kmax, kmin), n)
    return kmin, kmax


# ---------------------------------------------------------------------------
# Ensembles
# ---------------------------------------------------------------------------


class Ensemble(NamedTuple):
    """A clustering ensemble (result of :func:`kmeans_ensemble` or :func:`clustering_ensemble`).

    Attributes
    ----------
    labels : ndarray of int32, shape (N, n)
        Partition ``l`` of object ``i``; ``-1`` marks an object left out of partition
        ``l``'s sub-sample.
    n_clusters : ndarray of int, shape (N,)
        The K of every partition (drawn, or from the grid).  A k-means partition of the
        default backend has K clusters (an emptied cluster is moved onto the farthest
        row: docs/deviations.md#ensemble-empty-clusters) unless the data have fewer
        distinct rows; other base clusterers and ``backend="jax"`` may end with fewer.
    k_min, k_max : int
        The range K was drawn from (the smallest and largest K of a grid).
    base : tuple of str of length N, or None
        The base clusterer of every partition (:func:`clustering_ensemble`); ``None``
        for :func:`kmeans_ensemble`.
    """

    labels: np.ndarray
    n_clusters: np.ndarray
    k_min: int
    k_max: int
    base: tuple | None = None


@functools.partial(jax.jit, static_argnames=("capacity",))
def _masked_kmeans(key, X, k, capacity, max_iter):
    """One jitted partition: Lloyd's k-means with ``k <= capacity`` active centres.

    Random initialisation from ``k`` distinct data points, then
    :func:`~bayesclust.inference.hard.kmeans.masked_lloyd` in a buffer of ``capacity``
    slots (one compilation serves every K of an ensemble), until the assignment
    repeats or ``max_iter``.
    """
    n = X.shape[0]
    idx = jax.random.permutation(key, n)[:capacity]
    valid = jnp.arange(capacity) < k
    _, final, _, _ = masked_lloyd(X, None, X[idx], valid, max_iter, 0.0)
    return final.index


def _kmeans_numpy(rng: np.random.Generator, X: np.ndarray, k: int, max_iter: int) -> np.ndarray:
    """One host partition: Lloyd's k-means from ``k`` distinct random data points.

    :func:`~bayesclust.inference.hard.kmeans.lloyd_host` with a KD-tree assignment (no
    compilation; the ensemble's default backend, see :func:`kmeans_ensemble`); an
    emptied cluster moves onto the farthest row (scikit-learn's rule), so the
    partition keeps its K clusters (docs/deviations.md#ensemble-empty-clusters).
    """
    n = X.shape[0]
    return lloyd_host(X, X[rng.choice(n, size=k, replace=False)], max_iter, assignment="kdtree",
                      empty="relocate")


def _subsample_size(subsample: float | None, n: int) -> int:
    """Objects clustered by each partition: ``round(subsample * n)`` (half up, at least 1), or ``n``."""
    if subsample is None:
        return n
    rate = V.check_positive(subsample, "subsample")
    if rate > 1:
        raise ValueError(f"subsample must be in (0, 1], got {subsample!r}")
    return max(1, int(math.floor(rate * n + 0.5)))


def kmeans_ensemble(
    rng_key: Any,
    X: Any,
    n_partitions: int = 150,
    *,
    n_clusters_range: tuple[int, int] | None = None,
    k_rule: str = "penca",
    rounding: str = "ceil",
    subsample: float | None = None,
    max_iter: int = 100,
    backend: str = "numpy",
    mesh: Any = None,
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
        ``(K_min, K_max)``; default :func:`k_bounds` ``(n, k_rule, rounding=rounding)``.
        ``K_max`` is capped at the number of objects of a partition.
    k_rule, rounding : str
        See :func:`k_bounds`.
    subsample : float in (0, 1], optional
        Fraction of objects clustered by each partition (e.g. 0.9 in the PPC paper).
    max_iter : int, default 100
        Lloyd iterations per partition (stops earlier when the assignment repeats).
    backend : {"numpy", "jax"}, default "numpy"
        ``"numpy"``: :func:`~bayesclust.inference.hard.kmeans.lloyd_host` with a KD-tree
        nearest-centre search (no compilation, ``O(n log K)`` assignments in low
        dimension).  ``"jax"``: :func:`~bayesclust.inference.hard.kmeans.masked_lloyd`, the
        jit-compiled loop of :func:`~bayesclust.inference.hard.kmeans.kmeans`, with ``K`` active
        slots in a buffer of capacity ``K_max`` (one compilation for every K).  The numpy
        loop is the default because it compiles nothing and was faster where measured
        (BENCHMARKS.md); the jax loop runs on any JAX device.  Both are
        Lloyd from random distinct data points, so they differ only by the random
        streams and tie-breaking.  At scale in low dimension the KD-tree wins by
        arithmetic: one Lloyd iteration costs ``O(n log K)`` queries against the
        ``n K d`` of a dense assignment (measured against the jax loop and scikit-learn's
        ``KMeans`` in BENCHMARKS.md).
    mesh : jax.sharding.Mesh, optional
        Generate the partitions on the devices of this one-axis mesh (``backend="jax"``;
        ``n_partitions`` a multiple of its number of devices): each device runs its own
        block of partitions (the jax loop's program) on its copy of the data.  Every
        partition's key, K and sub-sample are drawn before sharding, so the ensemble is
        the one of ``backend="jax"`` without ``mesh``, on any number of devices or
        processes (``jax.distributed``).  Its co-association can be summed on the same
        mesh: :func:`~bayesclust.inference.consensus.coassociation.coassociation`
        (``mesh=``).

    Returns
    -------
    Ensemble

    Notes
    -----
    All partitions share one compiled program: the centres live in a buffer of capacity
    ``K_max`` and the unused slots are masked (``backend="jax"``).
    A single random initialisation per run (``init="random"``, ``n_init=1``) is used on
    purpose: diversity is the point of the ensemble (docs/deviations.md#penca-ensemble).

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
    m = _subsample_size(subsample, n)
    if n_clusters_range is None:
        kmin, kmax = k_bounds(n, k_rule, rounding=rounding)
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
    if mesh is not None:
        axis = check_mesh(mesh)
        if backend != "jax":
            raise ValueError("mesh needs backend='jax' (the numpy loop runs on the host)")
        check_divides(mesh, N, "n_partitions")
    key = V.as_rng_key(rng_key)
    master = V.as_numpy_rng(key)
    ks = master.integers(kmin, kmax + 1, size=N)
    labels = np.full((N, n), -1, np.int32)
    # k-means is invariant to translating and scaling the data: it runs in the unit
    # frame, whose squared distances neither overflow nor underflow at any scale.
    if backend == "numpy":
        seeds = master.integers(0, np.iinfo(np.int64).max, size=N)
        X64, _ = V.unit_frame(X.astype(np.float64), dtype=np.float64)
        for l in range(N):
            rng = np.random.default_rng(int(seeds[l]))
            idx = np.sort(rng.choice(n, size=m, replace=False)) if m < n else slice(None)
            labels[l, idx] = _kmeans_numpy(rng, X64[idx], int(ks[l]), max_iter)
        return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))
    s_key, run_key = jax.random.split(key)
    if mesh is not None:
        labels = _sharded_partitions(mesh, axis, s_key, run_key, V.unit_frame(X)[0], ks, m, kmax,
                                     max_iter)
        return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))
    Xu = V.unit_frame(X)[0]
    Xj = jnp.asarray(Xu)
    for l in range(N):
        kl = jax.random.fold_in(run_key, l)
        if m < n:
            # jax.random.permutation's integers, compiled once per shape bucket; rows cut on the host
            idx = np.sort(permutation(jax.random.fold_in(s_key, l), n)[:m])
            Xl = jnp.asarray(Xu[idx])
        else:
            idx, Xl = slice(None), Xj
        lab = _masked_kmeans(kl, Xl, jnp.int32(ks[l]), kmax, jnp.int32(max_iter))
        labels[l, idx] = np.asarray(lab)
    return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))


def _sharded_partitions(mesh, axis, s_key, run_key, X, ks, m, kmax, max_iter):
    """The partitions of :func:`kmeans_ensemble`'s jax loop, generated over ``mesh``.

    Partition ``l`` has the key, K and sub-sample of the loop (``fold_in(run_key, l)``,
    ``ks[l]``, ``fold_in(s_key, l)``), drawn here for all ``l`` and split over ``axis``;
    each device runs :func:`_masked_kmeans` on its own partitions, one after another.  Returns the
    ``(N, n)`` labels (``-1`` outside a sub-sample) on the host of every process.
    """
    N, n = ks.shape[0], X.shape[0]
    ids = jnp.arange(N)
    keys = jax.vmap(lambda l: jax.random.fold_in(run_key, l))(ids)
    if m < n:
        idx = jax.vmap(lambda l: jnp.sort(jax.random.permutation(jax.random.fold_in(s_key, l), n)[:m]))(ids)
    else:
        idx = jnp.broadcast_to(jnp.arange(n), (N, n))
    args = shard_leading(mesh, axis, (keys, idx.astype(jnp.int32), ks.astype(np.int32)))
    Xr, it = replicate(mesh, (X, np.int32(max_iter)))
    labels = _partitions_program(mesh, axis, int(kmax), n)(Xr, it, *args)
    return to_host(labels).astype(np.int32)


@functools.lru_cache(maxsize=16)
def _partitions_program(mesh, axis, kmax: int, n: int):
    """Jitted ``shard_map`` of :func:`_masked_kmeans` over the partitions of each device."""
    from jax.sharding import PartitionSpec as P

    def local(X, max_iter, keys, idx, ks):
        def one(key, rows, k):
            lab = _masked_kmeans(key, X[rows], k, kmax, max_iter)
            return jnp.full((n,), -1, jnp.int32).at[rows].set(lab.astype(jnp.int32))

        # One partition after another (lax.map, not vmap): each Lloyd loop stops at its own
        # convergence, as in the host loop, instead of every lane running to the slowest.
        return lax.map(lambda a: one(*a), (keys, idx, ks))

    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P(), P(), P(axis), P(axis), P(axis)),
                                 out_specs=P(axis), check_vma=False))


# ---------------------------------------------------------------------------
# Grid ensembles of several base clusterers
# ---------------------------------------------------------------------------

#: The base clusterers :func:`clustering_ensemble` knows by name.
BASE_CLUSTERERS = ("kmeans", "single", "average", "complete", "ward", "spectral", "shi_malik")


def _linkage_partition(X: np.ndarray, k: int, method: str) -> np.ndarray:
    """Agglomerative partition of the rows of ``X`` (Euclidean) cut to exactly ``k`` clusters."""
    from scipy.cluster.hierarchy import linkage

    from .linkage import cut_tree_at

    if X.shape[0] == 1:
        return np.zeros(1, np.int64)
    return cut_tree_at(linkage(X, method=method, metric="euclidean"), k)


def _kmeanspp_rows(rng: np.random.Generator, Y: np.ndarray, k: int) -> np.ndarray:
    """``k`` distinct row indices of ``Y`` by k-means++ (D^2) sampling."""
    m = Y.shape[0]
    chosen = [int(rng.integers(m))]
    d = np.sum((Y - Y[chosen[0]]) ** 2, axis=1)
    for _ in range(1, k):
        d[chosen] = 0.0
        total = d.sum()
        if total > 0:
            j = int(rng.choice(m, p=d / total))
        else:  # every remaining row coincides with a chosen one
            j = int(rng.choice(np.setdiff1d(np.arange(m), chosen)))
        chosen.append(j)
        d = np.minimum(d, np.sum((Y - Y[j]) ** 2, axis=1))
    return np.asarray(chosen)


def _trivial_partition(m: int, k: int) -> np.ndarray | None:
    """One cluster for ``k == 1``, singletons for ``k >= m``, else None (a real partition is needed)."""
    if k == 1:
        return np.zeros(m, np.int64)
    if k >= m:
        return np.arange(m, dtype=np.int64)
    return None


def _rbf_affinity(X: np.ndarray, gamma: float) -> np.ndarray:
    """Dense Gaussian affinity :math:`A_{ij} = \\exp(-\\gamma \\|x_i - x_j\\|^2)` with a zero diagonal, (m, m)."""
    from scipy.spatial.distance import pdist, squareform

    A = np.exp(-gamma * squareform(pdist(X, "sqeuclidean")))
    np.fill_diagonal(A, 0.0)
    return A


def _njw_spectral(rng: np.random.Generator, X: np.ndarray, k: int, gamma: float, max_iter: int) -> np.ndarray:
    r"""NJW spectral clustering (Ng, Jordan & Weiss 2001) of the rows of ``X`` into ``k`` clusters.

    :math:`A_{ij} = \exp(-\gamma \|x_i - x_j\|^2)`, :math:`A_{ii} = 0`, partitioned by
    :func:`njw_partition`.
    """
    trivial = _trivial_partition(X.shape[0], k)
    if trivial is not None:
        return trivial
    return njw_partition(rng, _rbf_affinity(X, gamma), k, max_iter)


#: Above this many vertices an affinity is partitioned with ARPACK (a dense one as a sparse
#: matrix of its non-zeros), not a dense ``eigh``: a full ``eigh`` is O(m^3) for k vectors.
_NJW_DENSE_MAX_N = 2000


#: Components of at most this many vertices are solved by a dense ``eigh``.
_NJW_COMPONENT_DENSE_MAX = 200


def _leading_eigenvectors_by_component(M, k: int) -> np.ndarray:
    """The ``k`` leading eigenvectors of the symmetric sparse ``M``, shape (m, k).

    ``M`` is block diagonal over the connected components of its graph and every component
    has the eigenvalue 1 of its degree vector: a single-vector Lanczos run (ARPACK) finds
    one vector of a repeated eigenvalue, so each component is solved on its own (dense
    ``eigh`` up to ``_NJW_COMPONENT_DENSE_MAX`` vertices, ARPACK above), and the ``k``
    largest eigenvalues over all components are kept.
    """
    import scipy.linalg
    import scipy.sparse.linalg as spla
    from scipy.sparse.csgraph import connected_components

    m = M.shape[0]
    n_comp, comp = connected_components(M, directed=False)
    parts = []  # (rows, eigenvalues ascending, eigenvectors) of every component
    for c in range(n_comp):
        rows = np.flatnonzero(comp == c)
        kc = min(k, rows.size)
        Mc = M[rows][:, rows]
        if rows.size <= max(_NJW_COMPONENT_DENSE_MAX, 2 * k):
            w, v = scipy.linalg.eigh(Mc.toarray(), subset_by_index=[rows.size - kc, rows.size - 1])
        else:
            w, v = spla.eigsh(Mc, k=kc, which="LA", v0=np.ones(rows.size) / np.sqrt(rows.size),
                              tol=1e-10)
        parts.append((rows, w, v))
    which = [(w[j], c, j) for c, (_, w, _) in enumerate(parts) for j in range(w.size)]
    which = sorted(which, key=lambda t: t[0])[-k:]
    vecs = np.zeros((m, k))
    for col, (_, c, j) in enumerate(which):
        vecs[parts[c][0], col] = parts[c][2][:, j]
    return vecs


def njw_partition(rng: np.random.Generator, A: Any, k: int, max_iter: int = 300, n_init: int = 1) -> np.ndarray:
    r"""Normalised-cut spectral partition of a graph (Ng, Jordan & Weiss 2001) into ``k`` parts.

    :math:`M = D^{-1/2} A D^{-1/2}` (:math:`D` the degrees; a vertex of degree 0 keeps a
    zero row); the ``k`` leading eigenvectors of ``M`` (a dense ``eigh`` up to 2,000 vertices;
    above, component by component of the graph, ARPACK's Lanczos on the non-zeros of a
    large one: the same subspace to its tolerance), rows scaled to unit length,
    clustered by Lloyd's k-means from k-means++ starts drawn from ``rng``; of ``n_init``
    starts the smallest within-cluster sum of squares is kept (``n_init = 1`` draws exactly
    what one start draws).  The graph partitioner of the data's spectral base clusterer
    and of CSPA / MCLA (:mod:`bayesclust.inference.consensus.hypergraph`).

    Parameters
    ----------
    rng : numpy.random.Generator
    A : ndarray or scipy.sparse matrix, shape (m, m)
        Symmetric, non-negative affinity with a zero diagonal (not checked here).
    k : int
        ``1 <= k <= m``.
    max_iter, n_init : int

    Returns
    -------
    ndarray of int64, shape (m,)
        Part ids in ``0..k-1`` (a part may be empty).
    """
    import scipy.linalg
    import scipy.sparse as sp

    m = A.shape[0]
    if k == 1:
        return np.zeros(m, np.int64)
    if k >= m:
        return np.arange(m, dtype=np.int64)
    deg = np.asarray(A.sum(axis=1)).ravel()
    s = 1.0 / np.sqrt(np.maximum(deg, np.finfo(np.float64).tiny))
    if m > _NJW_DENSE_MAX_N:
        M = sp.diags(s) @ sp.csr_matrix(A, dtype=np.float64) @ sp.diags(s)
        vecs = _leading_eigenvectors_by_component(M.tocsr(), k)
    else:
        Ad = A.toarray() if sp.issparse(A) else np.asarray(A, np.float64)
        M = Ad * s[:, None] * s[None, :]
        _, vecs = scipy.linalg.eigh(M, subset_by_index=[m - k, m - 1])
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    Y = vecs / np.where(norms > 0, norms, 1.0)
    best, best_sse = None, np.inf
    for _ in range(n_init):
        labels = lloyd_host(Y, Y[_kmeanspp_rows(rng, Y, k)], max_iter, assignment="dense")
        if n_init == 1:
            return labels
        centers = np.zeros((k, Y.shape[1]))
        np.add.at(centers, labels, Y)
        counts = np.bincount(labels, minlength=k)
        centers[counts > 0] /= counts[counts > 0, None]
        sse = float(((Y - centers[labels]) ** 2).sum())
        if sse < best_sse * (1 - 1e-12):
            best, best_sse = labels, sse
    return best


def _shi_malik_spectral(rng: np.random.Generator, X: np.ndarray, k: int, gamma: float, max_iter: int) -> np.ndarray:
    r"""Shi-Malik normalised-cut spectral clustering of the rows of ``X`` into ``k`` clusters.

    The ``k`` leading generalised eigenvectors of :math:`A v = \mu D v` (those of the
    random-walk matrix :math:`D^{-1} A`, i.e. the smallest of :math:`(D - A) v = \lambda D v`),
    computed as :math:`v = D^{-1/2} u` from the leading eigenvectors ``u`` of
    :math:`D^{-1/2} A D^{-1/2}` (the matrix NJW uses), clustered by Lloyd's k-means from a
    k-means++ start; no row normalisation (Shi & Malik 2000, the k-way form of von Luxburg
    2007, §5).
    """
    import scipy.linalg

    m = X.shape[0]
    trivial = _trivial_partition(m, k)
    if trivial is not None:
        return trivial
    A = _rbf_affinity(X, gamma)
    s = 1.0 / np.sqrt(np.maximum(A.sum(axis=1), np.finfo(np.float64).tiny))
    M = A * s[:, None] * s[None, :]
    _, vecs = scipy.linalg.eigh(M, subset_by_index=[m - k, m - 1])
    Y = vecs * s[:, None]
    return lloyd_host(Y, Y[_kmeanspp_rows(rng, Y, k)], max_iter, assignment="dense")


def _as_k_grid(n_clusters: Any, n: int) -> list[int]:
    if n_clusters is None:
        kmin, kmax = k_bounds(n)
        return list(range(kmin, kmax + 1))
    if isinstance(n_clusters, (numbers.Integral, np.integer)) and not isinstance(n_clusters, bool):
        values = [n_clusters]
    elif isinstance(n_clusters, (range, list, tuple, np.ndarray)):
        values = list(np.asarray(n_clusters).reshape(-1).tolist()) if isinstance(
            n_clusters, np.ndarray) else list(n_clusters)
    else:
        raise ValueError(f"n_clusters must be an int, a sequence of ints or a range, got {n_clusters!r}")
    if not values:
        raise ValueError("n_clusters must hold at least one K")
    return [V.check_int(k, "n_clusters", minimum=1) for k in values]


def _as_bases(base: Any) -> list:
    items = [base] if isinstance(base, str) or callable(base) else base
    try:
        items = list(items)
    except TypeError:
        raise ValueError(f"base must be a name, a callable or a tuple of them, got {base!r}") from None
    if not items:
        raise ValueError("base must name at least one base clusterer")
    for b in items:
        if not (callable(b) or (isinstance(b, str) and b in BASE_CLUSTERERS)):
            raise ValueError(f"base must be among {BASE_CLUSTERERS} or a callable, got {b!r}")
    return items


def clustering_ensemble(
    rng_key: Any,
    X: Any,
    base: Any = ("kmeans",),
    n_clusters: Any = None,
    n_per_setting: int = 10,
    *,
    subsample: float | None = None,
    spectral_gamma: float | None = None,
    max_iter: int = 100,
) -> Ensemble:
    r"""Grid clustering ensemble: ``n_per_setting`` partitions per (base clusterer, K).

    For every base clusterer ``b`` in ``base`` and every ``K`` in ``n_clusters`` (in that
    order, the repeats innermost), ``n_per_setting`` partitions are built, each on all
    ``n`` objects or on a random sub-sample of ``round(subsample * n)`` objects drawn
    without replacement (the others get label ``-1``, as in :func:`kmeans_ensemble`).
    The ensemble has :math:`m = |\text{base}| \cdot |\text{n\_clusters}| \cdot
    \text{n\_per\_setting}` partitions; its co-association feeds evidence accumulation
    (Fred & Jain 2005).

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    base : str, callable or tuple of them, default ("kmeans",)
        The base clusterers:

        * ``"kmeans"``: one Lloyd run from K distinct random (sub-sampled) points, at most
          ``max_iter`` iterations (as every partition of :func:`kmeans_ensemble`);
        * ``"single"``, ``"average"``, ``"complete"``, ``"ward"``: scipy's agglomerative
          linkage of the Euclidean distances, cut into exactly K clusters by merge order
          (:func:`~bayesclust.inference.consensus.linkage.cut_tree_at`, robust to tied heights);
        * ``"spectral"``: NJW spectral clustering (Ng, Jordan & Weiss 2001) with the
          Gaussian affinity :math:`\exp(-\gamma\|x_i - x_j\|^2)`: the K leading
          eigenvectors of :math:`D^{-1/2} A D^{-1/2}`, rows scaled to unit length, then
          k-means from a random k-means++ start (docs/deviations.md#ensemble-spectral);
        * ``"shi_malik"``: Shi-Malik normalised cuts with the same affinity: the K
          leading eigenvectors of :math:`D^{-1} A` (no row normalisation), then k-means
          from a random k-means++ start (Shi & Malik 2000);
        * a callable ``f(X_sub, k, rng) -> labels`` (``rng`` a
          :class:`numpy.random.Generator`; labels non-negative integers of length
          ``X_sub.shape[0]``), recorded under its ``__name__``.
    n_clusters : int, sequence of int or range, optional
        The grid of K (each at least 1).  Default: every K of
        :func:`k_bounds` ``(n)`` (the PEnCA rule).  K is capped at the number of distinct
        (sub-sampled) points.
    n_per_setting : int, default 10
        Partitions per (base clusterer, K) (100 in Rota Bulò et al. 2010).
    subsample : float in (0, 1], optional
        Fraction of objects clustered by each partition (0.9 in Rota Bulò et al. 2010).
    spectral_gamma : float, optional
        :math:`\gamma` of the spectral base clusterer; default 1.0 (scikit-learn's
        ``SpectralClustering`` default).
    max_iter : int, default 100
        Lloyd iterations of k-means (also k-means in the spectral embedding).

    Returns
    -------
    Ensemble
        ``labels`` (m, n) int32 with ``-1`` for objects left out; ``n_clusters`` (m,) the
        (capped) K of every partition; ``k_min``/``k_max`` the smallest and largest of
        them; ``base`` the name of every partition's base clusterer.

    Notes
    -----
    Linkage algorithms are deterministic: without ``subsample`` the ``n_per_setting``
    repeats of a linkage setting are identical partitions (they weigh that setting
    ``n_per_setting`` times in the co-association); with ``subsample`` they differ
    (docs/deviations.md#ensemble-deterministic-repeats).  Grids of several algorithms and
    K with 90 % sub-samples are the ensembles of the pairwise probabilistic clustering
    experiments (Rota Bulò, Lourenço, Fred & Pelillo 2010); grids of spectral (NJW)
    partitions over K are used by Medina & Fred for evidence accumulation of temporal
    data.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850.
    S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering
    using evidence accumulation", SSPR 2010.
    Medina and A. Fred: evidence accumulation of temporal data over grids of NJW spectral
    partitions.
    A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering: analysis and an
    algorithm", NIPS 2001.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + np.arange(10)[:, None] * 1e-3
    >>> ens = clustering_ensemble(0, X, ("kmeans", "average"), [2, 3], 2, subsample=0.8)
    >>> ens.labels.shape, ens.n_clusters.tolist(), ens.base[:3]
    ((8, 10), [2, 2, 3, 3, 2, 2, 3, 3], ('kmeans', 'kmeans', 'kmeans'))
    >>> (ens.labels == -1).sum(axis=1).tolist()
    [2, 2, 2, 2, 2, 2, 2, 2]
    """
    X = V.check_array(X, "X")
    n = X.shape[0]
    bases = _as_bases(base)
    ks = _as_k_grid(n_clusters, n)
    reps = V.check_int(n_per_setting, "n_per_setting", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    gamma = 1.0 if spectral_gamma is None else V.check_positive(spectral_gamma, "spectral_gamma")
    m = _subsample_size(subsample, n)
    X64 = np.asarray(X, np.float64)
    all_distinct = np.unique(X64, axis=0).shape[0] == n
    # The named base clusterers are invariant to translating the data and scaling
    # them with 1 / sqrt(gamma): they run in the unit frame (no overflow at any scale);
    # a callable base gets the data as given.
    Xu, frame = V.unit_frame(X64, dtype=np.float64)
    spectral = any(isinstance(b, str) and b in ("spectral", "shi_malik") for b in bases)
    gamma_u = frame.weight(gamma, "spectral_gamma", 1) if spectral else gamma
    master = V.as_numpy_rng(V.as_rng_key(rng_key))
    total = len(bases) * len(ks) * reps
    seeds = master.integers(0, np.iinfo(np.int64).max, size=total)
    labels = np.full((total, n), -1, np.int32)
    n_eff = np.empty(total, np.int64)
    names: list[str] = []
    l = 0
    for b in bases:
        name = b if isinstance(b, str) else getattr(b, "__name__", type(b).__name__)
        for k in ks:
            for _ in range(reps):
                rng = np.random.default_rng(int(seeds[l]))
                idx = np.sort(rng.choice(n, size=m, replace=False)) if m < n else np.arange(n)
                Xs = X64[idx]
                cap = m if all_distinct else np.unique(Xs, axis=0).shape[0]
                kl = min(k, cap)
                if b == "kmeans":
                    lab = _kmeans_numpy(rng, Xu[idx], kl, max_iter)
                elif b == "spectral":
                    lab = _njw_spectral(rng, Xu[idx], kl, gamma_u, max_iter)
                elif b == "shi_malik":
                    lab = _shi_malik_spectral(rng, Xu[idx], kl, gamma_u, max_iter)
                elif isinstance(b, str):
                    lab = _linkage_partition(Xu[idx], kl, b)
                else:
                    lab = np.asarray(b(Xs, kl, rng))
                    if lab.shape != (m,) or not np.issubdtype(lab.dtype, np.integer) or (lab < 0).any():
                        raise ValueError(
                            f"base callable {name!r} must return {m} non-negative integer labels, "
                            f"got shape {lab.shape} and dtype {lab.dtype}"
                        )
                labels[l, idx] = lab
                n_eff[l] = kl
                names.append(name)
                l += 1
    return Ensemble(labels, n_eff, int(n_eff.min()), int(n_eff.max()), tuple(names))


# ---------------------------------------------------------------------------
# Batched spectral grid (NJW and Shi-Malik over (K, sigma))
# ---------------------------------------------------------------------------

#: The spectral algorithms of :func:`spectral_grid_ensemble`.
SPECTRAL_METHODS = ("njw", "shi_malik")


def _kmeanspp_masked(key, Y, valid_rows, capacity):
    """``capacity`` k-means++ (D^2) seeds among the valid rows of ``Y`` (traceable)."""
    keys = jax.random.split(key, capacity)
    w = valid_rows.astype(Y.dtype)
    first = jax.random.categorical(keys[0], jnp.where(valid_rows, 0.0, -jnp.inf))
    C = jnp.zeros((capacity, Y.shape[1]), Y.dtype).at[0].set(Y[first])
    dmin = jnp.sum(jnp.square(Y - Y[first]), axis=1) * w

    def body(j, carry):
        C, dmin = carry
        total = jnp.sum(dmin)
        logits = jnp.where(total > 0, jnp.where(dmin > 0, jnp.log(jnp.where(dmin > 0, dmin, 1.0)), -jnp.inf),
                           jnp.where(valid_rows, 0.0, -jnp.inf))
        idx = jax.random.categorical(keys[j], logits)
        C = C.at[j].set(Y[idx])
        return C, jnp.minimum(dmin, jnp.sum(jnp.square(Y - Y[idx]), axis=1) * w)

    C, _ = jax.lax.fori_loop(1, capacity, body, (C, dmin))
    return C


@functools.partial(jax.jit, static_argnames=("k_max", "max_iter"))
def _spectral_grid_jax(key, X, valid_rows, sigmas, ks, k_max, max_iter):
    """Labels (2, S, |ks|, n) of NJW (0) and Shi-Malik (1) for every sigma and K.

    One eigen-decomposition per sigma serves every K and both algorithms; the padded
    rows (``valid_rows`` False) have no affinity and a zero embedding, weigh nothing in
    k-means and are never seeds.
    """
    from ...kernels import PRECISION

    v = valid_rows.astype(X.dtype)
    sq = jnp.sum(X * X, axis=1)
    D2 = jnp.maximum(sq[:, None] + sq[None, :] - 2.0 * jnp.matmul(X, X.T, precision=PRECISION), 0.0)
    eye = jnp.eye(X.shape[0], dtype=X.dtype)
    tiny = jnp.finfo(X.dtype).tiny

    def embed(sigma):
        A = jnp.exp(-D2 / (2.0 * sigma * sigma)) * (1.0 - eye) * v[:, None] * v[None, :]
        deg = jnp.sum(A, axis=1)
        s = jnp.where(valid_rows, 1.0 / jnp.sqrt(jnp.maximum(deg, tiny)), 0.0)
        # + I on the valid block: its spectrum moves to [0, 2], above the padded rows' zeros.
        M = A * s[:, None] * s[None, :] + jnp.diag(v)
        _, U = jnp.linalg.eigh(M)
        return U[:, ::-1][:, :k_max], s

    U, s = jax.vmap(embed)(sigmas)  # (S, n, k_max), (S, n)
    cols = jnp.arange(k_max)

    def one(key, Ui, si, k, method):
        Y = Ui * (cols < k)
        norm = jnp.sqrt(jnp.sum(Y * Y, axis=1, keepdims=True))
        njw = Y / jnp.where(norm > 0, norm, 1.0)
        Y = jnp.where(method == 0, njw, Y * si[:, None])
        k1, _ = jax.random.split(key)
        centers = _kmeanspp_masked(k1, Y, valid_rows, k_max)
        _, final, _, _ = masked_lloyd(Y, v, centers, cols < k, max_iter, 0.0)
        return final.index

    S, nk = sigmas.shape[0], ks.shape[0]
    meth = jnp.repeat(jnp.arange(2), S * nk)
    sig = jnp.tile(jnp.repeat(jnp.arange(S), nk), 2)
    kk = jnp.tile(ks, 2 * S)
    keys = jax.random.split(key, 2 * S * nk)
    labels = jax.vmap(one)(keys, U[sig], s[sig], kk, meth)
    return labels.reshape(2, S, nk, -1)


def spectral_grid_ensemble(
    rng_key: Any,
    X: Any,
    n_clusters: Any = range(2, 7),
    sigmas: Any = None,
    methods: Any = SPECTRAL_METHODS,
    *,
    max_iter: int = 100,
    pad_to: int | None = None,
) -> Ensemble:
    r"""Spectral clustering ensemble over a (K, sigma) grid, batched in JAX.

    For every Gaussian scale :math:`\sigma` the affinity
    :math:`A_{ij} = \exp(-\|x_i - x_j\|^2 / 2\sigma^2)` (:math:`A_{ii} = 0`) and its
    normalisation :math:`M = D^{-1/2} A D^{-1/2}` are eigen-decomposed once; for every K
    the ``K`` leading eigenvectors ``U`` give

    * NJW (Ng, Jordan & Weiss 2001): the rows of ``U`` scaled to unit length;
    * Shi-Malik normalised cuts (Shi & Malik 2000): :math:`D^{-1/2} U`, the leading
      generalised eigenvectors of :math:`A v = \mu D v`;

    each clustered by Lloyd's k-means from a k-means++ start.  All
    :math:`|\text{methods}|\,|\text{n\_clusters}|\,|\text{sigmas}|` runs are one jitted,
    vmapped program.  The default grid is Medina & Fred's (SIMBAD deliverable D2.3,
    temporal study, Table 1): K in 2..6, :math:`\sigma` in 0.3, 0.4, ..., 3.0, 140
    partitions per algorithm.

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
        At least 2 rows.
    n_clusters : sequence of int, default range(2, 7)
        The K of the grid (each in ``2..n``).
    sigmas : sequence of float, optional
        Gaussian scales (positive); default 0.3, 0.4, ..., 3.0.
    methods : tuple of {"njw", "shi_malik"}, default both
    max_iter : int, default 100
        Lloyd iterations.
    pad_to : int, optional
        Rows to pad the program to (at least ``n``; default
        :func:`~bayesclust.kernels.padded_rows` ``(n)``): one compilation serves every
        ``n`` up to it.

    Returns
    -------
    Ensemble
        ``labels`` (m, n) int32 ordered method, sigma, K (K innermost), ``n_clusters``
        (m,), ``base`` the method of every partition.

    References
    ----------
    A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering: analysis and an
    algorithm", NIPS 2001.
    J. Shi and J. Malik, "Normalized cuts and image segmentation", IEEE TPAMI 22(8) (2000).
    Medina and A. Fred, SIMBAD deliverable D2.3, temporal study (ECG state detection).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((6, 2)), np.full((6, 2), 5.0)] + np.arange(12)[:, None] * 1e-2
    >>> ens = spectral_grid_ensemble(0, X, [2], [0.5, 1.0])
    >>> ens.labels.shape, ens.base
    ((4, 12), ('njw', 'njw', 'shi_malik', 'shi_malik'))
    >>> all(len(set(l[:6])) == 1 and l[0] != l[-1] for l in ens.labels.tolist())
    True
    """
    from ...kernels import padded_rows

    X = V.check_array(X, "X", min_samples=2)
    n = X.shape[0]
    if isinstance(n_clusters, (numbers.Integral, np.integer)):
        n_clusters = [n_clusters]
    ks = [V.check_int(k, "n_clusters", minimum=2) for k in list(n_clusters)]
    if not ks or max(ks) > n:
        raise ValueError(f"n_clusters must hold K in 2..{n} (the number of samples), got {list(n_clusters)!r}")
    sig = _default_sigmas() if sigmas is None else np.asarray(sigmas, np.float64).reshape(-1)
    if sig.size == 0 or not np.all(np.isfinite(sig)) or np.any(sig <= 0):
        raise ValueError(f"sigmas must be positive finite scales, got {sigmas!r}")
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(methods)
    if not methods or any(m not in SPECTRAL_METHODS for m in methods):
        raise ValueError(f"methods must be among {SPECTRAL_METHODS}, got {methods!r}")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    cap = padded_rows(n) if pad_to is None else V.check_int(pad_to, "pad_to", minimum=n)
    # The Gaussian affinity is invariant to translating the data and scaling them
    # with sigma: the unit frame keeps the squared distances in range at any scale.
    Xu, frame = V.unit_frame(X)
    dt = Xu.dtype
    sig_u = np.asarray([frame.width(float(v), "sigmas") for v in sig])
    Xp = np.zeros((cap, X.shape[1]), dt)
    Xp[:n] = Xu
    valid = np.arange(cap) < n
    lab = np.asarray(_spectral_grid_jax(V.as_rng_key(rng_key), jnp.asarray(Xp), jnp.asarray(valid),
                                        jnp.asarray(sig_u, dt), jnp.asarray(ks, jnp.int32),
                                        max(ks), max_iter))
    picked = [lab[SPECTRAL_METHODS.index(m)] for m in methods]  # each (S, nk, cap)
    labels = np.concatenate([p.reshape(-1, cap)[:, :n] for p in picked]).astype(np.int32)
    n_eff = np.tile(np.asarray(ks, np.int64), len(methods) * sig.size)
    names = tuple(m for m in methods for _ in range(sig.size * len(ks)))
    return Ensemble(labels, n_eff, int(min(ks)), int(max(ks)), names)
