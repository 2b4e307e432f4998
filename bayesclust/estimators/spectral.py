"""Estimators on graphs and kernels: spectral DP-means and the penalised normalised cut
(Kulis & Jordan 2012, §5).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    validate_data,
)

from .. import _validation as V
from ..graphs import knn_gaussian_affinity
from ..inference.hard.penalized_ncut import penalized_ncut
from ..inference.hard.spectral_dp_means import spectral_dp_means
from ._base import _warn_default_not_estimate, _warn_if_one_cluster

__all__ = ["SpectralDPMeans", "PenalizedNormalizedCut"]


def _affinity_matrix(est, X, affinity):
    """Validate ``X`` and build the affinity / kernel matrix of ``est``."""
    if affinity == "precomputed":
        A = validate_data(est, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64)
        if A.shape[0] != A.shape[1]:
            raise ValueError(
                f"X must be a square (n, n) affinity matrix with affinity='precomputed', got shape {A.shape}"
            )
        return A
    X = validate_data(est, X, dtype=[np.float64, np.float32])
    if affinity == "nearest_neighbors":
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]} is too few for a nearest-neighbour graph")
        return knn_gaussian_affinity(X, min(est.n_neighbors, X.shape[0] - 1), gamma=est.gamma)
    from sklearn.metrics.pairwise import rbf_kernel

    if affinity == "rbf":
        # exp(-gamma |x_i - x_j|^2) in the unit frame (X scaled by a power of two, exact, and
        # gamma by its inverse square): the same kernel at any scale of X
        Xu, frame = V.unit_frame(X, centred=False, dtype=X.dtype)
        gamma = _median_gamma(Xu) if est.gamma is None else frame.weight(est.gamma, "gamma", 1)
        return rbf_kernel(Xu, gamma=gamma)
    Xd = V.check_point_range(np.asarray(X, np.float64), "X")  # linear: X X^T in X's units
    return Xd @ Xd.T


def _median_gamma(X) -> float:
    """``1 / median |x_i - x_j|^2`` over the pairs (i < j): the median heuristic for an RBF
    kernel's bandwidth (Schölkopf & Smola 2002, §7.8; Gretton et al. 2012, §8), unit-free."""
    from sklearn.metrics.pairwise import euclidean_distances

    X = np.asarray(X, np.float64)
    if X.shape[0] < 2:
        return 1.0
    D2 = euclidean_distances(X, squared=True)[np.triu_indices(X.shape[0], 1)]
    med = float(np.median(D2))
    return 1.0 / med if med > 0 else 1.0


def _auto_threshold(K) -> float:
    """``tr(K) / sqrt(n)`` (see :class:`SpectralDPMeans`); 1.0 when ``K`` has no positive trace."""
    trace = float(K.diagonal().sum())
    return trace / np.sqrt(K.shape[0]) if trace > 0 else 1.0


class SpectralDPMeans(ClusterMixin, BaseEstimator):
    r"""Spectral DP-means: cluster with the kernel eigenvectors above ``eigenvalue_threshold``.

    The spectral relaxation of the kernel DP-means objective
    :math:`\mathrm{tr}(K) - \mathrm{tr}(Y^\top (K - \lambda I) Y)` (Kulis &
    Jordan 2012, §5.1): the relaxed indicator matrix stacks the eigenvectors
    of :math:`K` with eigenvalue :math:`> \lambda`, so the threshold chooses
    the number of clusters; their rows are clustered by k-means.  See
    :func:`bayesclust.inference.hard.spectral_dp_means.spectral_dp_means`.

    Parameters
    ----------
    eigenvalue_threshold : float or "auto", default "auto"
        The eigenvalue cut :math:`\lambda`: the eigenvectors of ``K`` with eigenvalue
        above it are kept (the kernel DP-means penalty, a squared distance in the
        kernel's feature space, not :class:`DPMeans`' ``lam`` on the input space).
        ``"auto"``: :math:`\lambda = \mathrm{tr}(K) / \sqrt n` (see Notes); 1.0 for
        a graph without self-affinities (zero trace, e.g. ``"nearest_neighbors"``).
    affinity : {"rbf", "nearest_neighbors", "linear", "precomputed"}, default "rbf"
        The kernel: ``exp(-gamma |x - y|^2)``; a sparse k-NN Gaussian graph
        (:func:`bayesclust.graphs.knn_gaussian_affinity`); ``X X^T``; or ``X``
        itself is the (n, n) kernel / affinity matrix (dense or sparse).
    gamma : float or None, default None
        RBF inverse bandwidth; None: the median heuristic, one over the median squared
        distance between two rows of ``X`` (Gretton et al. 2012, §8), so the fit does not
        depend on the units of ``X``.  For the k-NN graph None means local scaling.
    n_neighbors : int, default 10
    normalize_rows : bool, default False
        Unit-normalise the embedding rows before k-means.
    max_clusters : int or None, default None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    eigenvalues_ : ndarray
        Eigenvalues above ``eigenvalue_threshold``, decreasing.
    embedding_ : ndarray of shape (n_samples, n_eigenvalues)
    relaxed_value_ : float
        :math:`\sum_i (e_i - \lambda)_+`.
    eigenvalue_threshold_ : float
        The cut used (``"auto"`` resolved).
    n_features_in_ : int

    Notes
    -----
    An eigenvalue of a kernel with :math:`k(x, x) = 1` is about the number of points of
    a tight cluster (a block of ``m`` points with kernel values near 1 has eigenvalue
    ``m``), so :math:`\lambda` is the smallest cluster worth an eigenvector.  The former
    defaults, :math:`\lambda = 1` and ``gamma = 1``, gave every point its own
    eigenvector on data with large distances (19 to 222 clusters on the real data of
    BENCHMARKS.md, "Defaults on real data").  Since :math:`\sum_i e_i = \mathrm{tr}(K)`,
    at most :math:`\mathrm{tr}(K) / \lambda` eigenvalues exceed :math:`\lambda`; the
    ``"auto"`` cut :math:`\mathrm{tr}(K) / \sqrt n` caps the clusters at
    :math:`\sqrt n`, the rule of thumb :math:`k \le \sqrt n` (Mardia, Kent & Bibby
    1979, §13.1), and keeps clusters of about :math:`\sqrt n` points or more.  With the
    median-heuristic ``gamma`` it gave 3 clusters on iris, raw and standardised wine
    (3 classes), 2 on MASS biopsy (2), 3 on MASS crabs (4 groups) and 9 on digits'
    first 10 principal components (10); the cut was chosen on these data.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.kron(np.eye(3), np.ones((4, 4)))
    >>> SpectralDPMeans(eigenvalue_threshold=2.0, affinity="precomputed").fit(K).n_clusters_
    3
    """

    _parameter_constraints: dict = {
        "eigenvalue_threshold": [Interval(numbers.Real, None, None, closed="neither"),
                                 StrOptions({"auto"})],
        "affinity": [StrOptions({"rbf", "nearest_neighbors", "linear", "precomputed"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "normalize_rows": ["boolean"],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, eigenvalue_threshold="auto", *, affinity="rbf", gamma=None, n_neighbors=10,
                 normalize_rows=False, max_clusters=None):
        self.eigenvalue_threshold = eigenvalue_threshold
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.normalize_rows = normalize_rows
        self.max_clusters = max_clusters

    def fit(self, X, y=None):
        """Cluster the rows of ``X`` (or the nodes of the affinity ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            with ``affinity="precomputed"``.
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        K = _affinity_matrix(self, X, self.affinity)
        self.eigenvalue_threshold_ = (_auto_threshold(K) if self.eigenvalue_threshold == "auto"
                                      else float(self.eigenvalue_threshold))
        res = spectral_dp_means(K, self.eigenvalue_threshold_, normalize_rows=self.normalize_rows,
                                max_clusters=self.max_clusters)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.eigenvalues_ = res.eigenvalues
        self.embedding_ = res.embedding
        self.relaxed_value_ = res.relaxed_value
        _warn_if_one_cluster(self, "lower eigenvalue_threshold")
        return self


#: ``PenalizedNormalizedCut``'s penalty when none is given (its fit then warns): typical of
#: k-NN graphs of a few hundred points.
DEFAULT_LAM_PRIME = -0.01


class PenalizedNormalizedCut(ClusterMixin, BaseEstimator):
    r"""Penalised normalised cut: graph clustering that chooses the number of clusters.

    Minimises :math:`\mathrm{Cut}(A) + \lambda' k` by weighted kernel DP-means
    on :math:`K = \sigma D^{-1} + D^{-1} A D^{-1}`, :math:`W = D` (Kulis &
    Jordan 2012, §5.2, Thm 5.3), from the spectral start of the same
    objective, with greedy cluster merges.  See
    :func:`bayesclust.inference.hard.penalized_ncut.penalized_ncut`.

    Parameters
    ----------
    lam_prime : float or None, default None
        Penalty per cluster on the Cut scale; useful values lie in ``(-1, 0)``
        (more negative: more clusters).  On k-NN graphs of a few hundred
        points cuts are small, so values near -0.01 are typical; on dense
        community graphs (stochastic block models) values near -0.5.  None:
        -0.01, and ``fit`` warns that the number of clusters follows this fixed
        penalty: the cut between two groups grows with their overlap, so
        overlapping groups merge (the first 10 principal components of digits: 2
        clusters for 10 digits; BENCHMARKS.md, "defaults on real data").
    affinity : {"nearest_neighbors", "rbf", "precomputed"}, default "nearest_neighbors"
        A sparse k-NN Gaussian graph of ``X``
        (:func:`bayesclust.graphs.knn_gaussian_affinity`), a dense RBF
        graph, or ``X`` is the (n, n) adjacency (dense or sparse).
    n_neighbors : int, default 10
    gamma : float or None, default None
        Gaussian inverse bandwidth (k-NN: None = local scaling; RBF: None = the median
        heuristic of :class:`SpectralDPMeans`).
    sigma : float or "psd", default "psd"
        Diagonal shift of the kernel (see ``penalized_ncut``).
    merge : bool, default True
    max_iter : int, default 100
    max_clusters : int or None, default None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    cut_ : float
    objective_ : float
        :math:`\mathrm{Cut}(A) + \lambda' k`.
    objective_trace_ : ndarray
    n_iter_ : int
    affinity_matrix_ : scipy.sparse matrix or ndarray, shape (n_samples, n_samples)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> PenalizedNormalizedCut(lam_prime=-0.5, affinity="precomputed").fit(A).labels_.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """

    _parameter_constraints: dict = {
        "lam_prime": [Interval(numbers.Real, None, None, closed="neither"), None],
        "affinity": [StrOptions({"nearest_neighbors", "rbf", "precomputed"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "sigma": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"psd"})],
        "merge": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, lam_prime=None, *, affinity="nearest_neighbors", n_neighbors=10,
                 gamma=None, sigma="psd", merge=True, max_iter=100, max_clusters=None):
        self.lam_prime = lam_prime
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.sigma = sigma
        self.merge = merge
        self.max_iter = max_iter
        self.max_clusters = max_clusters

    def fit(self, X, y=None):
        """Cluster the rows of ``X`` (or the nodes of the adjacency ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            with ``affinity="precomputed"``.
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        A = _affinity_matrix(self, X, self.affinity)
        if self.affinity == "rbf":
            A = A - np.diag(np.diag(A))
        lam_prime = DEFAULT_LAM_PRIME if self.lam_prime is None else float(self.lam_prime)
        res = penalized_ncut(A, lam_prime, sigma=self.sigma, merge=self.merge,
                             max_iter=self.max_iter, max_clusters=self.max_clusters)
        self.affinity_matrix_ = A
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.cut_ = res.cut
        self.objective_ = res.objective
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        _warn_if_one_cluster(self, "lower lam_prime (more negative)")
        if self.lam_prime is None and self.n_clusters_ > 1:
            _warn_default_not_estimate(
                self, f"lam_prime is the default {DEFAULT_LAM_PRIME}, a fixed penalty on the Cut "
                "scale (not chosen from this graph)", "give lam_prime (more negative: more "
                "clusters)")
        return self
