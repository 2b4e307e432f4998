r"""DR-EAC: low-dimensional embeddings of the co-association matrix, then any extractor.

The co-association :math:`C_{ij} = n_{ij}/N` of a clustering ensemble is read either as
**similarities** (the dissimilarity :math:`1 - C_{ij}` is given to a method that takes a
distance matrix; the affinity of Laplacian eigenmaps is :math:`C` itself) or as
**features** (row :math:`i` of :math:`C` describes object :math:`i`; distances are the
Euclidean distances between rows).  The embedding (classical MDS, Isomap or Laplacian
eigenmaps, all written with SciPy) is then clustered by k-means or by one of seven
linkages (:func:`embedded_consensus`).

References
----------
A. Lourenço, A. Fred et al., "Dimensionality reduction on the co-association matrix"
(DR-EAC), SIMBAD deliverable D2.3 (2010), §§2-4.
J. B. Tenenbaum, V. de Silva and J. C. Langford, "A global geometric framework for
nonlinear dimensionality reduction", Science 290 (2000) 2319-2323.
M. Belkin and P. Niyogi, "Laplacian eigenmaps for dimensionality reduction and data
representation", Neural Computation 15 (2003) 1373-1396.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import (
    connected_components,
    csgraph_from_dense,
    minimum_spanning_tree,
    shortest_path,
)
from scipy.spatial.distance import pdist, squareform

from ... import _validation as V
from .coassociation import CoAssociation, coassociation

__all__ = [
    "EmbeddingResult",
    "EMBEDDING_METHODS",
    "EXTRACTORS",
    "embed_coassociation",
    "embedded_consensus",
    "classical_mds",
    "residual_variance",
]

#: The embeddings :func:`embed_coassociation` knows.
EMBEDDING_METHODS = ("isomap", "laplacian", "mds")
#: The consensus extractors of :func:`embedded_consensus` (the DR-EAC paper's eight algorithms).
EXTRACTORS = ("kmeans", "single", "complete", "average", "ward", "centroid", "median", "weighted")
_INTERPRETATIONS = ("similarity", "features")
#: The neighbourhood sizes Isomap's residual variance chooses among (those below n).
ISOMAP_K_GRID = (5, 10, 15, 20, 30)
#: The largest dimension the eigengap rule may choose.
MAX_AUTO_COMPONENTS = 20
#: The k-NN size of Laplacian eigenmaps in the features interpretation when none is given.
LAPLACIAN_DEFAULT_NEIGHBORS = 10


class EmbeddingResult(NamedTuple):
    r"""An embedding of a co-association matrix (result of :func:`embed_coassociation`).

    Attributes
    ----------
    embedding : ndarray of float64, shape (n, n_components)
        Row ``i`` is object ``i``.
    n_components : int
        ``m``, given or chosen by the largest eigengap.
    eigenvalues : ndarray of float64, shape (q,)
        The leading eigenvalues computed (``q >= n_components``): the largest of the doubly
        centred Gram matrix for MDS / Isomap (decreasing), the smallest non-trivial ones of
        the normalised Laplacian for Laplacian eigenmaps (increasing).
    method : str
    interpretation : str
    n_neighbors : int or None
        The k-NN size used (Isomap; Laplacian eigenmaps on a k-NN graph); ``None`` otherwise.
    residual_variance : float or None
        Isomap: :math:`1 - R^2` between the geodesic and the embedded distances at
        ``n_neighbors``; ``None`` for the other methods.
    """

    embedding: np.ndarray
    n_components: int
    eigenvalues: np.ndarray
    method: str
    interpretation: str
    n_neighbors: int | None
    residual_variance: float | None


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------


def _dense_coassociation(coassoc: Any, name: str = "coassoc") -> np.ndarray:
    """The dense co-association (n, n) in float64 with a unit diagonal.

    A :class:`CoAssociation` is densified; a square floating-point array (or a sparse
    matrix) is taken as the matrix :math:`C` itself and must be symmetric with entries in
    [0, 1]; anything else (an (N, n) integer array of partitions, a list of label
    vectors, an :class:`Ensemble`, a Posterior) goes through :func:`coassociation`.
    """
    if isinstance(coassoc, CoAssociation):
        C = coassoc.toarray()
    elif sp.issparse(coassoc):
        C = _check_matrix(np.asarray(coassoc.toarray()), name)
    else:
        arr = None
        if not hasattr(coassoc, "labels") and not hasattr(coassoc, "params"):
            try:
                arr = np.asarray(coassoc)
            except Exception:  # ragged lists of partitions
                arr = None
        if arr is not None and arr.dtype.kind == "f" and arr.ndim == 2 and arr.shape[0] == arr.shape[1]:
            C = _check_matrix(arr, name)
        elif arr is not None and arr.dtype.kind == "f" and arr.ndim == 2:
            raise ValueError(f"{name} must be a square co-association matrix, got shape {arr.shape}")
        else:
            C = coassociation(coassoc).toarray()
    C = np.array(C, dtype=np.float64)
    np.fill_diagonal(C, 1.0)
    if C.shape[0] < 2:
        raise ValueError(f"{name} must describe at least 2 objects, got {C.shape[0]}")
    return C


def _check_matrix(A: np.ndarray, name: str) -> np.ndarray:
    A = V.check_array(A, name, dtype=None).astype(np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {A.shape}")
    if A.min() < 0 or A.max() > 1:
        raise ValueError(f"{name} must have entries in [0, 1], got range [{A.min():.3g}, {A.max():.3g}]")
    if not np.allclose(A, A.T, atol=1e-9, rtol=0):
        raise ValueError(f"{name} must be symmetric")
    return A


def _check_choice(value: Any, options: tuple, name: str) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


# ---------------------------------------------------------------------------
# spectral building blocks
# ---------------------------------------------------------------------------


def _eigengap_dimension(values: np.ndarray, increasing: bool) -> int:
    """Number of eigenvalues before the largest gap of the sequence ``values``.

    ``values`` are the leading eigenvalues (decreasing for a Gram matrix, increasing for a
    Laplacian); the dimension is ``argmax_i |values[i + 1] - values[i]| + 1``, the first
    on ties, and 1 when fewer than two values are given.
    """
    if values.shape[0] < 2:
        return 1
    gaps = np.diff(values) if increasing else -np.diff(values)
    return int(np.argmax(gaps)) + 1


def classical_mds(D: Any, n_components: int | None = None, *, max_components: int = MAX_AUTO_COMPONENTS
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Classical (Torgerson) MDS of a distance matrix.

    :math:`B = -\tfrac12 J D^{(2)} J` with :math:`J = I - \tfrac1n \mathbf 1\mathbf 1^\top`
    and :math:`D^{(2)}` the squared distances; the embedding is
    :math:`Y = V_m \Lambda_m^{1/2}` from the ``m`` largest eigenpairs of ``B`` (negative
    eigenvalues give zero columns).  When ``D`` is Euclidean, ``Y`` reproduces it exactly.

    Parameters
    ----------
    D : array_like, shape (n, n)
        Symmetric distances.
    n_components : int or None
        ``m``; ``None``: the number of eigenvalues (clipped at 0) above the largest gap
        among the ``min(max_components, n - 1) + 1`` largest.
    max_components : int
        Cap of the automatic dimension.

    Returns
    -------
    Y : ndarray, shape (n, m)
    eigenvalues : ndarray, shape (q,)
        The ``q`` largest eigenvalues of ``B``, decreasing.
    m : int

    References
    ----------
    W. S. Torgerson, "Multidimensional scaling: I. Theory and method", Psychometrika 17 (1952).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    >>> D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    >>> Y, lam, m = classical_mds(D, 2)
    >>> bool(np.allclose(np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1)), D))
    True
    """
    D = V.check_square_matrix(D, "D", nonnegative=True, symmetric=True)
    n = D.shape[0]
    if n_components is not None:
        n_components = V.check_int(n_components, "n_components", minimum=1)
    max_components = V.check_int(max_components, "max_components", minimum=1)
    D2 = D * D
    B = D2 - D2.mean(axis=0)[None, :] - D2.mean(axis=1)[:, None] + D2.mean()
    B *= -0.5
    q = min(n, max(max_components, n_components or 0) + 1)
    lam, vec = scipy.linalg.eigh(B, subset_by_index=[n - q, n - 1])
    lam, vec = lam[::-1], vec[:, ::-1]
    if n_components is None:
        m = _eigengap_dimension(np.maximum(lam[: min(q, max_components + 1)], 0.0), increasing=False)
    else:
        m = int(n_components)
    Y = vec[:, :m] * np.sqrt(np.maximum(lam[:m], 0.0))[None, :]
    return Y, lam, m


def residual_variance(D_true: Any, Y: Any) -> float:
    r"""Residual variance :math:`1 - R^2(D_{true}, D_Y)` of an embedding (Tenenbaum et al. 2000).

    ``R`` is the linear correlation over the pairs ``i < j`` between the given distances and
    the Euclidean distances of the rows of ``Y``; 0 when either is constant and both agree
    exactly, 1 when only one is constant.

    Parameters
    ----------
    D_true : array_like, shape (n, n)
    Y : array_like, shape (n, m)

    Returns
    -------
    float in [0, 1]
    """
    D_true = V.check_square_matrix(D_true, "D_true", nonnegative=True)
    Y = V.check_points(Y, "Y")
    V.check_same_length(D_true, Y, "D_true", "Y")
    iu = np.triu_indices(D_true.shape[0], 1)
    a = D_true[iu]
    b = pdist(Y)
    sa, sb = a.std(), b.std()
    if sa == 0 or sb == 0:
        return 0.0 if np.allclose(a, b) else 1.0
    r = np.corrcoef(a, b)[0, 1]
    return float(max(0.0, 1.0 - r * r))


def _knn_graph(D: np.ndarray, k: int) -> np.ndarray:
    """Dense symmetric k-NN graph of a distance matrix: ``inf`` off the graph, the distance on it.

    ``j`` is joined to ``i`` when ``j`` is among the ``k`` nearest other objects of ``i``
    or ``i`` among those of ``j`` (ties broken by index, a stable sort).  Weights may be 0
    (identical rows of ``C``): the graph keeps them as edges (``csgraph_from_dense`` with
    ``null_value=inf``).
    """
    n = D.shape[0]
    Dm = D.copy()
    np.fill_diagonal(Dm, np.inf)
    nbrs = np.argsort(Dm, axis=1, kind="stable")[:, :k]
    G = np.full((n, n), np.inf)
    rows = np.repeat(np.arange(n), k)
    cols = nbrs.ravel()
    G[rows, cols] = D[rows, cols]
    G[cols, rows] = D[rows, cols]
    return G


def _connect_components(G: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, int]:
    """Join the components of the graph ``G`` by the shortest inter-component edges of ``D``.

    The components are linked by a minimum spanning tree of the component graph whose
    edge between two components is the shortest distance between their members (as
    single linkage would join them); those edges are added to ``G``.  Returns the graph and
    the number of components before the repair (docs/deviations.md#dreac-disconnected-graph).
    """
    graph = csgraph_from_dense(G, null_value=np.inf)
    n_comp, comp = connected_components(graph, directed=False)
    if n_comp == 1:
        return G, 1
    members = [np.flatnonzero(comp == c) for c in range(n_comp)]
    between = np.full((n_comp, n_comp), np.inf)
    pair = {}
    for a in range(n_comp):
        for b in range(a + 1, n_comp):
            block = D[np.ix_(members[a], members[b])]
            i, j = np.unravel_index(np.argmin(block), block.shape)
            between[a, b] = between[b, a] = block[i, j]
            pair[a, b] = (members[a][i], members[b][j])
    # minimum_spanning_tree reads zeros as missing edges: shift every weight by one.
    tree = minimum_spanning_tree(csgraph_from_dense(between + 1.0, null_value=np.inf)).tocoo()
    G = G.copy()
    for a, b in zip(tree.row, tree.col):
        i, j = pair[min(a, b), max(a, b)]
        G[i, j] = G[j, i] = D[i, j]
    return G, n_comp


def _isomap(D: np.ndarray, k: int, n_components: int | None) -> tuple[np.ndarray, np.ndarray, int, float]:
    G, _ = _connect_components(_knn_graph(D, k), D)
    geo = shortest_path(csgraph_from_dense(G, null_value=np.inf), method="D", directed=False)
    Y, lam, m = classical_mds(geo, n_components)
    return Y, lam, m, residual_variance(geo, Y)


def _laplacian_eigenmaps(W: np.ndarray, n_components: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Laplacian eigenmaps of the affinity ``W`` (symmetric, non-negative, zero diagonal).

    Solves :math:`L\mathbf y = \lambda D\mathbf y`, :math:`L = D - W`, through the
    normalised Laplacian :math:`L_{sym} = I - D^{-1/2}WD^{-1/2}` (same eigenvalues,
    :math:`\mathbf y = D^{-1/2}\mathbf u`).  The trivial eigenvector
    :math:`\mathbf u_0 \propto D^{1/2}\mathbf 1` is deflated exactly (its eigenvalue moved
    from 0 to 3, above the spectrum of :math:`L_{sym}` in [0, 2]), so it is dropped even
    when the graph is disconnected and 0 is a repeated eigenvalue.
    """
    n = W.shape[0]
    d = W.sum(axis=1)
    s = 1.0 / np.sqrt(d)
    Lsym = np.eye(n) - s[:, None] * W * s[None, :]
    t = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    M = Lsym + 3.0 * np.outer(t, t)
    M = 0.5 * (M + M.T)
    q = min(n - 1, max(MAX_AUTO_COMPONENTS, n_components or 0) + 1)
    lam, U = scipy.linalg.eigh(M, subset_by_index=[0, q - 1])
    if n_components is None:
        m = _eigengap_dimension(lam[: min(q, MAX_AUTO_COMPONENTS + 1)], increasing=True)
    else:
        m = int(n_components)
    Y = U[:, :m] * s[:, None]
    return Y, lam, m


def _repair_isolated(W: np.ndarray) -> np.ndarray:
    """Give isolated objects (zero degree) a tiny uniform affinity to every other object.

    An object never co-clustered with another (a zero row of ``C`` off the diagonal) has
    degree 0 and breaks :math:`D^{-1/2}`; adding ``1e-9`` times the largest affinity to all
    off-diagonal pairs keeps the graph's structure and makes every degree positive
    (docs/deviations.md#dreac-degenerate-input).
    """
    d = W.sum(axis=1)
    if np.all(d > 0):
        return W
    eps = 1e-9 * (W.max() if W.max() > 0 else 1.0)
    W = W + eps
    np.fill_diagonal(W, 0.0)
    return W


# ---------------------------------------------------------------------------
# the embedding
# ---------------------------------------------------------------------------


def embed_coassociation(
    coassoc: Any,
    method: str = "isomap",
    n_components: int | None = None,
    *,
    interpretation: str = "similarity",
    n_neighbors: int | None = None,
) -> EmbeddingResult:
    r"""Embed a co-association matrix in a few dimensions (DR-EAC).

    With ``interpretation="similarity"`` the distances are :math:`D = 1 - C`; with
    ``"features"`` they are the Euclidean distances between the rows of :math:`C`,
    :math:`D_{ij} = \lVert C_{i\cdot} - C_{j\cdot}\rVert` (Lourenço, Fred et al. 2010, §2).

    * ``"mds"``: classical MDS of ``D`` (:func:`classical_mds`).
    * ``"isomap"``: the symmetric k-NN graph of ``D`` weighted by ``D``, its shortest paths
      (Dijkstra) :math:`D_G`, and classical MDS of :math:`D_G` (Tenenbaum et al. 2000).
      With ``n_neighbors=None``, k minimises the residual variance
      :math:`1 - R^2(D_G, D_Y)` over k in {5, 10, 15, 20, 30} (those below ``n``; ties to the
      smaller k), each k with its own eigengap dimension
      (docs/deviations.md#dreac-isomap-k).  A disconnected graph is joined by the shortest
      inter-component edges (docs/deviations.md#dreac-disconnected-graph).
    * ``"laplacian"``: Laplacian eigenmaps (Belkin & Niyogi 2003),
      :math:`L\mathbf y = \lambda D\mathbf y` with the trivial eigenvector dropped.  The
      affinity is :math:`W = C` with a zero diagonal (similarity; restricted to the
      symmetric k-NN pairs of :math:`1 - C` when ``n_neighbors`` is given), or the 0/1
      symmetric k-NN graph of the row distances (features; k = ``n_neighbors``, default 10)
      (docs/deviations.md#dreac-laplacian-affinity).

    Parameters
    ----------
    coassoc : CoAssociation, array_like (n, n) or an ensemble
        A :class:`~bayesclust.inference.consensus.coassociation.CoAssociation`; a square floating-point
        matrix :math:`C` (symmetric, entries in [0, 1]; its diagonal is read as 1); or
        anything :func:`~bayesclust.inference.consensus.coassociation.coassociation` accepts (an
        integer (N, n) array of partitions, a list of label vectors, an Ensemble, a
        Posterior).
    method : {"isomap", "laplacian", "mds"}, default "isomap"
    n_components : int or None
        ``1 <= m < n``; ``None``: the number of eigenvalues before the largest gap among
        the leading ones, at most 20 (docs/deviations.md#dreac-dimension).
    interpretation : {"similarity", "features"}, default "similarity"
    n_neighbors : int or None
        ``1 <= k < n``: the k-NN size of Isomap and of Laplacian eigenmaps (see above).

    Returns
    -------
    EmbeddingResult

    References
    ----------
    A. Lourenço, A. Fred et al., "Dimensionality reduction on the co-association matrix",
    SIMBAD deliverable D2.3 (2010), §§2-3.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.kron(np.eye(3), np.ones((4, 4)))          # three clean blocks
    >>> res = embed_coassociation(C, "mds")
    >>> res.n_components, res.embedding.shape
    (2, (12, 2))
    """
    method = _check_choice(method, EMBEDDING_METHODS, "method")
    interpretation = _check_choice(interpretation, _INTERPRETATIONS, "interpretation")
    C = _dense_coassociation(coassoc)
    n = C.shape[0]
    if n_components is not None:
        n_components = V.check_int(n_components, "n_components", minimum=1)
        if n_components >= n:
            raise ValueError(f"n_components must be below the number of objects {n}, got {n_components}")
    if n_neighbors is not None:
        n_neighbors = V.check_int(n_neighbors, "n_neighbors", minimum=1)
        if n_neighbors >= n:
            raise ValueError(f"n_neighbors must be below the number of objects {n}, got {n_neighbors}")
    if interpretation == "similarity":
        D = 1.0 - C
    else:
        D = squareform(pdist(C))
    np.fill_diagonal(D, 0.0)

    if method == "mds":
        Y, lam, m = classical_mds(D, n_components)
        return EmbeddingResult(Y, m, lam, method, interpretation, None, None)
    if method == "isomap":
        grid = [n_neighbors] if n_neighbors is not None else [k for k in ISOMAP_K_GRID if k < n] or [n - 1]
        best = None
        for k in grid:
            Y, lam, m, rv = _isomap(D, k, n_components)
            if best is None or rv < best[4] - 1e-12:
                best = (Y, lam, m, k, rv)
        Y, lam, m, k, rv = best
        return EmbeddingResult(Y, m, lam, method, interpretation, k, rv)
    # Laplacian eigenmaps
    if interpretation == "similarity":
        W = C.copy()
        k = n_neighbors
        if k is not None:
            W = np.where(np.isfinite(_knn_graph(D, k)), W, 0.0)
    else:
        k = n_neighbors if n_neighbors is not None else min(LAPLACIAN_DEFAULT_NEIGHBORS, n - 1)
        G, _ = _connect_components(_knn_graph(D, k), D)
        W = np.isfinite(G).astype(np.float64)
    np.fill_diagonal(W, 0.0)
    W = _repair_isolated(W)
    Y, lam, m = _laplacian_eigenmaps(W, n_components)
    return EmbeddingResult(Y, m, lam, method, interpretation, k, None)


# ---------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------


def _kmeans_restarts(rng: np.random.Generator, Y: np.ndarray, k: int, n_init: int, max_iter: int) -> np.ndarray:
    from ..hard.kmeans import lloyd_host

    best, best_sse = None, math.inf
    n = Y.shape[0]
    for _ in range(n_init):
        labels = lloyd_host(Y, Y[rng.choice(n, size=k, replace=False)], max_iter)
        centers = np.zeros((k, Y.shape[1]))
        np.add.at(centers, labels, Y)
        counts = np.bincount(labels, minlength=k)
        centers[counts > 0] /= counts[counts > 0, None]
        sse = float(((Y - centers[labels]) ** 2).sum())
        if sse < best_sse - 1e-12 * max(1.0, abs(best_sse) if math.isfinite(best_sse) else 1.0):
            best, best_sse = labels, sse
    return best


def embedded_consensus(
    embedding: Any,
    n_clusters: int,
    extractor: str = "average",
    rng_key: Any = 0,
    *,
    n_init: int = 10,
    max_iter: int = 300,
) -> np.ndarray:
    r"""Consensus partition of an embedding by k-means or a linkage (DR-EAC, step 4).

    Parameters
    ----------
    embedding : array_like, shape (n, m)
        Points (an :attr:`EmbeddingResult.embedding`, or the rows of :math:`C` for the
        features-space EAC baseline).
    n_clusters : int
        ``1 <= K <= n``.
    extractor : {"kmeans", "single", "complete", "average", "ward", "centroid", "median", "weighted"}
        ``"kmeans"``: Lloyd's algorithm from ``K`` distinct random points, ``n_init``
        starts, the smallest within-cluster sum of squares kept; otherwise
        ``scipy.cluster.hierarchy.linkage`` with the Euclidean metric, cut after
        ``n - K`` merges (:func:`~bayesclust.inference.consensus.linkage.cut_tree_at`).
    rng_key : jax.random key or int, default 0
        Seeds the k-means starts.
    n_init, max_iter : int
        k-means starts and iterations per start.

    Returns
    -------
    ndarray of int64, shape (n,)

    References
    ----------
    A. Lourenço, A. Fred et al., "Dimensionality reduction on the co-association matrix",
    SIMBAD deliverable D2.3 (2010), §3 (the eight clustering algorithms).

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> embedded_consensus(Y, 2, "single").tolist()
    [0, 0, 1, 1]
    """
    from scipy.cluster.hierarchy import linkage

    from .linkage import cut_tree_at

    extractor = _check_choice(extractor, EXTRACTORS, "extractor")
    Y = V.check_array(embedding, "embedding", dtype=None).astype(np.float64)
    # Linkages and k-means are scale-equivariant: scaled by a power of two (exact), an
    # embedding of any magnitude gives the partition it has at unit scale.
    Y = V.unit_frame(Y, centred=False, name="embedding", dtype=np.float64)[0]
    n = Y.shape[0]
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    if extractor == "kmeans":
        rng = V.as_numpy_rng(rng_key)
        return _kmeans_restarts(rng, Y, K, n_init, max_iter)
    if n == 1:
        return np.zeros(1, np.int64)
    Z = linkage(Y, method=extractor, metric="euclidean")
    return cut_tree_at(Z, K)
