r"""Spectral DP-means: the spectral relaxation of kernel DP-means.

Kulis & Jordan (2012), §5.1, Thm 5.2: the relaxed kernel DP-means objective is maximised by
all eigenvectors of :math:`K` with eigenvalue :math:`> \lambda`; their rows are then
clustered by k-means (:func:`spectral_dp_means`).

The computations are host NumPy / SciPy (LAPACK / ARPACK eigensolvers); no JAX code runs here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ... import _validation as V
from ._kernel_passes import (
    _DENSE_EIG_MAX_N,
    _check_matrix_any,
    _compact,
    _farthest_first_kmeans,
)

__all__ = [
    "SpectralDPMeansResult",
    "spectral_dp_means",
    "thresholded_eigenvectors",
]


def thresholded_eigenvectors(K, threshold, *, max_vectors=None, eigen_solver="auto"):
    """All eigenpairs of a symmetric ``K`` with eigenvalue strictly above ``threshold``.

    Parameters
    ----------
    K : ndarray or scipy.sparse matrix, shape (n, n)
        Symmetric, finite.
    threshold : float
    max_vectors : int, optional
        Return at most this many (the largest).  Default ``n``.
    eigen_solver : {"auto", "dense", "arpack"}
        ``"dense"``: LAPACK ``eigh`` (``evr``) for the eigenvalues in
        ``(threshold, inf)``;
        ``"arpack"``: :func:`scipy.sparse.linalg.eigsh` for the largest
        eigenvalues, asking for twice as many until one at or below the
        threshold is found.  ``"auto"``: dense for dense input or
        ``n <= 500``, ARPACK otherwise.

    Returns
    -------
    values : ndarray, shape (m,)
        In decreasing order.
    vectors : ndarray, shape (n, m)
    """
    if sp.issparse(K):
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square matrix, got shape {K.shape}")
        if not np.all(np.isfinite(K.data)):
            raise ValueError("K contains NaN or infinite values")
    else:
        K = V.check_square_matrix(K, "K", symmetric=True)
    threshold = V.check_real(threshold, "threshold")
    n = K.shape[0]
    cap = n if max_vectors is None else min(int(max_vectors), n)
    solver = eigen_solver
    if solver == "auto":
        solver = "dense" if (not sp.issparse(K) or n <= _DENSE_EIG_MAX_N) else "arpack"
    if solver == "dense" or n <= 2:
        Kd = K.toarray() if sp.issparse(K) else np.asarray(K)
        # subset_by_value is the half-open interval (threshold, inf]: strict ">"
        vals, vecs = scipy.linalg.eigh(Kd, subset_by_value=(threshold, np.inf), driver="evr")
        keep = vals > threshold
        vals, vecs = vals[keep][::-1], vecs[:, keep][:, ::-1]
        return vals[:cap], vecs[:, :cap]
    if solver != "arpack":
        raise ValueError(f"eigen_solver must be 'auto', 'dense' or 'arpack', got {solver!r}")
    m = min(8, cap, n - 1)
    v0 = np.ones(n) / np.sqrt(n)  # deterministic start
    while True:
        vals, vecs = spla.eigsh(K, k=m, which="LA", v0=v0, tol=1e-10)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        if vals[-1] <= threshold or m >= min(cap, n - 1):
            keep = vals > threshold
            return vals[keep][:cap], vecs[:, keep][:, :cap]
        m = min(2 * m, cap, n - 1)


class SpectralDPMeansResult(NamedTuple):
    """Result of :func:`spectral_dp_means`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
    n_clusters : int
        Number of clusters found by k-means on the rows of ``embedding``
        (equal to ``len(eigenvalues)`` unless k-means left a cluster empty).
    eigenvalues : ndarray, shape (m,)
        The eigenvalues of ``K`` above ``eigenvalue_threshold``, decreasing.
    embedding : ndarray, shape (n, m)
        The relaxed indicator matrix :math:`Y` (orthonormal columns).
    relaxed_value : float
        :math:`\\max_{Y^\\top Y = I} \\mathrm{tr}(Y^\\top (K - \\lambda I) Y)
        = \\sum_i (e_i - \\lambda)_+`, an upper bound of the value of every
        clustering (Theorem 5.2).
    lower_bound : float
        :math:`\\mathrm{tr}(K) - \\text{relaxed\\_value}`, a lower bound of the
        kernel DP-means objective of every clustering.
    eigenvalue_threshold : float
        The eigenvalue cut :math:`\\lambda`.
    """

    labels: np.ndarray
    n_clusters: int
    eigenvalues: np.ndarray
    embedding: np.ndarray
    relaxed_value: float
    lower_bound: float
    eigenvalue_threshold: float


def spectral_dp_means(
    K,
    eigenvalue_threshold,
    *,
    normalize_rows: bool = False,
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> SpectralDPMeansResult:
    r"""Spectral DP-means: the thresholded-eigenvector relaxation (Kulis & Jordan 2012, §5.1).

    With :math:`Y = Z(Z^\top Z)^{-1/2}` the normalised indicator matrix of a
    clustering, :math:`J_{DP} = \mathrm{tr}(K) - \mathrm{tr}(Y^\top (K - \lambda I) Y)`
    (Lemma 5.1).  Relaxing :math:`Y` to all matrices with orthonormal columns,
    the maximum of :math:`\mathrm{tr}(Y^\top (K - \lambda I) Y)` stacks **all
    eigenvectors with eigenvalue > lambda** (``eigenvalue_threshold``, Theorem 5.2),
    so the threshold, not a given k, fixes the number of clusters.  The rows of :math:`Y` are then
    clustered by k-means with ``k = m`` (the number of such eigenvectors).

    Parameters
    ----------
    K : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric kernel / affinity matrix.
    eigenvalue_threshold : float
        The eigenvalue cut :math:`\lambda`: eigenvectors with eigenvalue strictly
        above it are kept.  It is the penalty of the kernel DP-means objective
        :math:`J_{DP}` above, a squared distance in the kernel's feature space, not
        DP-means' ``lam`` on the input space; any real value is accepted (e.g. for
        an indefinite affinity).
    normalize_rows : bool, default False
        Scale every row of :math:`Y` to unit length before k-means (the
        Ng-Jordan-Weiss step; zero rows are left as they are).
    max_clusters : int, optional
        Keep at most this many leading eigenvectors.
    eigen_solver : {"auto", "dense", "arpack"}
        See :func:`thresholded_eigenvectors`: dense ``eigh`` for small or
        dense input, ARPACK ``eigsh`` for large sparse ``K``.

    Returns
    -------
    SpectralDPMeansResult

    Notes
    -----
    Post-processing (ours; Kulis & Jordan say only "clusters the rows of Y": docs/deviations.md#spectral-dpmeans-rows):
    Lloyd's k-means from a deterministic farthest-first start, so the
    function is deterministic.  When no eigenvalue exceeds the threshold the
    result is one cluster.  For the linear kernel :math:`K = XX^\top` at most
    ``d`` eigenvalues can exceed it.

    References
    ----------
    B. Kulis and M. I. Jordan, ICML 2012, §5.1, Lemma 5.1, Theorem 5.2.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.kron(np.eye(2), np.ones((3, 3)))   # two blocks of 3 points
    >>> res = spectral_dp_means(K, eigenvalue_threshold=1.0)
    >>> res.n_clusters, res.labels.tolist(), res.eigenvalues.round(6).tolist()
    (2, [0, 0, 0, 1, 1, 1], [3.0, 3.0])
    """
    K = _check_matrix_any(K, "K")
    lam = V._check_real_scalar(eigenvalue_threshold, "eigenvalue_threshold")
    if np.isinf(lam):
        raise ValueError("eigenvalue_threshold must be finite")
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    n = K.shape[0]
    vals, Y = thresholded_eigenvectors(K, lam, max_vectors=max_clusters, eigen_solver=eigen_solver)
    trK = float(K.diagonal().sum())
    relaxed = float(np.sum(vals - lam))
    m = len(vals)
    if m == 0:
        labels = np.zeros(n, np.int64)
    else:
        E = Y
        if normalize_rows:
            norms = np.linalg.norm(E, axis=1, keepdims=True)
            E = E / np.where(norms > 0, norms, 1.0)
        labels = _farthest_first_kmeans(E, m)
    labels, k = _compact(labels)
    return SpectralDPMeansResult(labels, k, vals, Y, relaxed, trK - relaxed, lam)
