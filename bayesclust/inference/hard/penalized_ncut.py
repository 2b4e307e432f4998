r"""The penalised normalised cut: kernel DP-means on a graph.

Kulis & Jordan (2012), Thm 5.3: the penalised normalised cut
:math:`\mathrm{Cut}(A) + \lambda' k` of a (sparse) graph is weighted kernel DP-means
(:mod:`~bayesclust.inference.hard.kernel_dp_means`) with
:math:`K = \sigma D^{-1} + D^{-1} A D^{-1}`, :math:`W = D`,
:math:`\lambda = \lambda' + \sigma + 1`, run in :math:`O(|E| + nk)` per iteration without
forming :math:`K` (:func:`penalized_ncut`); it starts from spectral DP-means' eigenvectors.

The computations are host NumPy / SciPy (sparse products, ARPACK); no JAX code runs here.
"""

from __future__ import annotations

import functools
import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ... import _validation as V
from ._kernel_passes import (
    _DENSE_EIG_MAX_N,
    KernelDPMeansState,
    _check_init_labels,
    _check_matrix_any,
    _check_square,
    _compact,
    _drive,
    _farthest_first_kmeans,
    _Graph,
    _initial_state,
    _pass_step,
)
from .spectral_dp_means import thresholded_eigenvectors

__all__ = [
    "PenalizedNCutResult",
    "penalized_ncut",
    "PenalizedNCutState",
    "PenalizedNCutInfo",
    "init_penalized_ncut_state",
    "penalized_ncut_step",
    "normalized_cut",
    "ncut_sigma_psd",
]


def _check_adjacency(A, name="A"):
    """Validate a graph: square, symmetric, finite, non-negative, no isolated node."""
    if not sp.issparse(A):
        A = V.check_array(A, name, dtype=None)
        _check_square(A, name)
        A = sp.csr_matrix(A.astype(np.float64))
    A = _check_matrix_any(A, name)
    if A.nnz and A.data.min() < 0:
        raise ValueError(f"{name} must have non-negative weights, got min {A.data.min():.3g}")
    deg = np.asarray(A.sum(axis=1)).ravel()
    isolated = np.flatnonzero(deg <= 0)
    if isolated.size:
        raise ValueError(
            f"{name} has {isolated.size} isolated node(s) (zero degree), e.g. node "
            f"{int(isolated[0])}: the normalised cut is undefined for them; remove them "
            f"(each is its own cluster) or give them a self-loop"
        )
    return A, deg


def normalized_cut(A, labels) -> float:
    r"""The k-way normalised cut :math:`\sum_c \mathrm{links}(V_c, V\setminus V_c)/\mathrm{deg}(V_c)`.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric non-negative adjacency, every degree > 0.
    labels : array_like of int, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], float)
    >>> normalized_cut(A, [0, 0, 1, 1])   # cut 1 edge; both sides have degree 3
    0.6666666666666666
    """
    A, deg = _check_adjacency(A)
    labels, k = _compact(_check_init_labels(labels, A.shape[0], "labels"))
    return _Graph(A, deg, 0.0).objective(labels, k, 0.0)


def ncut_sigma_psd(A) -> float:
    r"""Smallest shift making :math:`K = \sigma D^{-1} + D^{-1} A D^{-1}` PSD.

    :math:`\sigma_{min} = \max(0, -\lambda_{min}(D^{-1/2} A D^{-1/2}))`, always
    :math:`\le 1`.  Dense eigenvalues for ``n <= 500``; ARPACK otherwise, with
    a margin of 1e-3 for its tolerance (falls back to the always valid 1.0
    if ARPACK does not converge).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.0, 1.0], [1.0, 0.0]])   # spectrum of D^-1/2 A D^-1/2: -1, 1
    >>> round(ncut_sigma_psd(A), 6)
    1.0
    """
    A, deg = _check_adjacency(A)
    return _sigma_psd(A, deg)


def _normalized_adjacency(A, deg):
    s = 1.0 / np.sqrt(deg)
    return sp.diags(s) @ A @ sp.diags(s)


def _sigma_psd(A, deg):
    N = _normalized_adjacency(A, deg)
    n = A.shape[0]
    if n <= _DENSE_EIG_MAX_N:
        mu_min = float(scipy.linalg.eigvalsh(N.toarray(), subset_by_index=(0, 0))[0])
    else:
        try:
            mu_min = float(spla.eigsh(N, k=1, which="SA", tol=1e-6,
                                      v0=np.ones(n) / np.sqrt(n))[0][0]) - 1e-3
        except spla.ArpackNoConvergence:
            return 1.0
    return min(1.0, max(0.0, -mu_min))


class PenalizedNCutResult(NamedTuple):
    """Result of :func:`penalized_ncut`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
    n_clusters : int
    objective : float
        :math:`\\mathrm{Cut}(A) + \\lambda' k` of the returned partition.
    objective_trace : ndarray
        The minimised objective at the initial partition and after every
        accepted iteration; never increases.
    cut : float
        :math:`\\mathrm{Cut}(A)` of the returned partition.
    n_iter : int
    converged : bool
    n_rejected : int
        Passes rejected because they raised the objective (0 when ``sigma``
        makes the kernel PSD).
    init_labels : ndarray of int64, shape (n,)
        The initial partition.
    sigma : float
        The diagonal shift used.
    lam : float
        The kernel-space penalty :math:`\\lambda = \\lambda' + \\sigma + 1`.
    lam_prime : float
    """

    labels: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    cut: float
    n_iter: int
    converged: bool
    n_rejected: int
    init_labels: np.ndarray
    sigma: float
    lam: float
    lam_prime: float


class PenalizedNCutState(KernelDPMeansState):
    """State of a penalised normalised cut run between two steps.

    Made by :func:`init_penalized_ncut_state`, advanced by
    :func:`penalized_ncut_step`; :func:`penalized_ncut` loops over the step.
    The fields of :class:`KernelDPMeansState` (the run is kernel DP-means on
    the graph's kernel): ``objective`` is :math:`\\mathrm{Cut}(A) + \\lambda' k`,
    ``objective_trace`` records it after every accepted pass and every
    merge, and ``converged`` means that the last pass converged and (with
    merges) no merge lowered the objective.
    """

    __slots__ = ()


class PenalizedNCutInfo(NamedTuple):
    """Diagnostics of one :func:`penalized_ncut_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The step changed the labels (by the pass or by merges).
    rejected : bool
        The pass raised the objective and was rejected.
    merged : bool
        Clusters were merged after the pass converged.
    """

    objective: float
    changed: bool
    rejected: bool
    merged: bool


def penalized_ncut_step(state: PenalizedNCutState, *, merge: bool = True
                        ) -> tuple[PenalizedNCutState, PenalizedNCutInfo]:
    """One step of the penalised normalised cut: a kernel DP-means pass, then merges.

    The pass is :func:`kernel_dp_means_step`'s on the graph's kernel.  When it
    has converged (unchanged labels, a stalled objective or a rejected pass)
    and ``merge`` is on, pairs of clusters are merged greedily while a merge
    lowers :math:`\\mathrm{Cut}(A) + \\lambda' k`; if any was merged, the merged
    partition's objective is traced and ``converged`` is reset, so the passes
    resume.  :func:`penalized_ncut` runs this step from
    :func:`init_penalized_ncut_state` until ``converged`` or ``max_iter``
    passes; stepping by hand reproduces it exactly.

    Parameters
    ----------
    state : PenalizedNCutState
        Not modified.
    merge : bool, default True
        As in :func:`penalized_ncut`.

    Returns
    -------
    state : PenalizedNCutState
    info : PenalizedNCutInfo

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)          # two 4-cliques joined by one edge
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> state = init_penalized_ncut_state(A, lam_prime=-0.5, init="single")
    >>> state, info = penalized_ncut_step(state)
    >>> state.n_clusters, state.converged, info.merged
    (1, True, False)
    """
    state, changed, rejected = _pass_step(state)
    merged = False
    if merge and state.converged:
        be = state.kernel
        labels, k = be.merge(state.labels, state.n_clusters, be.lam_prime)
        if k != state.n_clusters:
            J = be.run_objective(labels, k)
            state = state._replace(
                labels=labels, n_clusters=k, objective=J,
                objective_trace=np.append(state.objective_trace, J), converged=False,
            )
            changed = merged = True
    return state, PenalizedNCutInfo(state.objective, changed, rejected, merged)


def init_penalized_ncut_state(
    A,
    lam_prime,
    *,
    sigma="psd",
    init="spectral",
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> PenalizedNCutState:
    """The state the penalised normalised cut starts from (:func:`penalized_ncut`).

    Checks the graph, picks the diagonal shift ``sigma`` and the initial
    partition exactly as :func:`penalized_ncut` (whose parameters these are),
    and prepares the graph's implicit kernel.  The shift and the kernel-space
    penalty are ``state.kernel.sigma`` and ``state.kernel.lam``.

    Returns
    -------
    PenalizedNCutState
    """
    A, deg = _check_adjacency(A)
    lam_prime = _check_lam_prime(lam_prime)
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    return _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver)


def _check_lam_prime(lam_prime):
    lam_prime = V._check_real_scalar(lam_prime, "lam_prime")
    if np.isinf(lam_prime):
        raise ValueError("lam_prime must be finite")
    if not -1.0 < lam_prime < 0.0:
        # Well defined, but the optimum is known without a search (the Cut of k clusters
        # lies in [0, k]): say so rather than return a trivial partition silently.
        trivial = "the single cluster" if lam_prime >= 0 else "all singletons"
        warnings.warn(f"lam_prime={lam_prime} is outside (-1, 0): {trivial} is the global "
                      "optimum; more negative values in (-1, 0) give more clusters",
                      UserWarning, stacklevel=3)
    return lam_prime


def penalized_ncut(
    A,
    lam_prime,
    *,
    sigma="psd",
    init="spectral",
    max_iter: int = 100,
    merge: bool = True,
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> PenalizedNCutResult:
    r"""Penalised normalised cut: graph clustering without a fixed k (Kulis & Jordan 2012, §5.2).

    Minimises :math:`\mathrm{Cut}(A) + \lambda' k` with
    :math:`\mathrm{Cut}(A) = \sum_c \mathrm{links}(V_c, V\setminus V_c)/\mathrm{deg}(V_c)`
    by weighted kernel DP-means (:func:`kernel_dp_means`) on

    .. math::

        K = \sigma D^{-1} + D^{-1} A D^{-1}, \quad W = D, \quad
        \lambda = \lambda' + \sigma + 1,

    for which :math:`J(K, W) = \sigma n + \mathrm{tr}(D^{-1/2} A D^{-1/2}) -
    (\sigma + 1) k + \mathrm{Cut}(A)` (Theorem 5.3, Dhillon, Guan & Kulis), so
    :math:`J(K, W) + \lambda k = C + \mathrm{Cut}(A) + \lambda' k`.  :math:`K` is
    never formed: a pass needs ``links(i, c)`` (one scatter over the edges),
    ``deg(c)`` and ``links(c, c)``, i.e. :math:`O(|E| + nk)`.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric adjacency with non-negative weights; self-loops allowed;
        every node needs a positive degree (isolated nodes raise a
        ``ValueError``: remove them -- each is then its own cluster -- or give
        them a self-loop).
    lam_prime : float
        Penalty per cluster on the Cut scale.  Useful values lie in
        ``(-1, 0)`` (docs/deviations.md#penalised-ncut-lambda-range): for ``lam_prime >= 0`` the single cluster is
        the global optimum, for ``lam_prime <= -1`` all singletons are.  More
        negative values give more clusters.
    sigma : float or "psd", default "psd"
        Diagonal shift (>= 0).  ``"psd"``: the smallest shift that makes ``K``
        PSD (:func:`ncut_sigma_psd`), which guarantees that no pass is rejected.
        Smaller shifts let the local search move more nodes (docs/deviations.md#penalised-ncut-sigma); a pass
        that raises the objective is then rejected and the run stops.
    init : {"spectral", "single"} or array_like of int, default "spectral"
        Initial partition.  ``"spectral"`` (ours, docs/deviations.md#penalised-ncut-start): the relaxation of
        this same objective -- the eigenvectors of :math:`D^{-1/2} A D^{-1/2}`
        with eigenvalue :math:`> 1 + \lambda'` (Theorem 5.2 applied to
        :math:`W^{1/2} K W^{1/2} = \sigma I + D^{-1/2} A D^{-1/2}` at threshold
        :math:`\lambda`), rows normalised to unit length, k-means with k their
        number.  ``"single"``: one cluster, as Algorithm 1 -- which is a fixed
        point for every ``lam_prime > -1`` (docs/deviations.md#penalised-ncut-start), so it returns k = 1.
    max_iter : int, default 100
        Maximum number of kernel DP-means passes.
    merge : bool, default True
        When the passes have converged, merge pairs of clusters greedily
        while a merge lowers :math:`\mathrm{Cut}(A) + \lambda' k`, then resume
        the passes (ours; kernel DP-means alone can only delete a cluster by
        emptying it, which the diagonal shift makes rare: docs/deviations.md#penalised-ncut-merges).
    max_clusters : int, optional
        Cap on the number of eigenvectors of the spectral start.
    eigen_solver : {"auto", "dense", "arpack"}
        Eigensolver of the spectral start (:func:`thresholded_eigenvectors`).

    Returns
    -------
    PenalizedNCutResult

    Notes
    -----
    Kulis & Jordan give no initialisation and no experiment for this
    algorithm.  The spectral start fixes the number of clusters by the same
    threshold rule as spectral DP-means; the kernel DP-means passes then
    refine it monotonically (they may open clusters for badly placed nodes
    and delete emptied ones).  The objective trace is
    :math:`\mathrm{Cut}(A) + \lambda' k`, computed from ``links(c, c)`` and
    ``deg(c)`` directly (it equals :math:`J + \lambda k - C`).

    References
    ----------
    B. Kulis and M. I. Jordan, ICML 2012, §5.2.  I. S. Dhillon, Y. Guan and
    B. Kulis, "Weighted graph cuts without eigenvectors: a multilevel
    approach", IEEE TPAMI 29(11), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)          # two 4-cliques joined by one edge
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> res = penalized_ncut(A, lam_prime=-0.5)
    >>> res.n_clusters, res.labels.tolist(), round(res.cut, 4)
    (2, [0, 0, 0, 0, 1, 1, 1, 1], 0.1538)
    """
    A, deg = _check_adjacency(A)
    lam_prime = _check_lam_prime(lam_prime)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    state = _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver)
    init_labels = state.labels
    state = _drive(state, max_iter, functools.partial(penalized_ncut_step, merge=merge))
    be = state.kernel
    cut = state.objective - lam_prime * state.n_clusters
    return PenalizedNCutResult(state.labels, state.n_clusters, state.objective,
                               state.objective_trace, cut, state.n_iter, state.converged,
                               state.n_rejected, init_labels, be.sigma, be.lam, lam_prime)


def _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver):
    """:func:`init_penalized_ncut_state` after checking ``A``, ``lam_prime``, ``max_clusters``."""
    n = A.shape[0]
    if isinstance(sigma, str):
        if sigma != "psd":
            raise ValueError(f"sigma must be a non-negative number or 'psd', got {sigma!r}")
        sigma = _sigma_psd(A, deg)
    else:
        sigma = V.check_nonnegative(sigma, "sigma")
    lam = lam_prime + sigma + 1.0
    if lam <= 0:
        raise ValueError(
            f"lam_prime + sigma + 1 must be > 0 (got lam_prime={lam_prime}, sigma={sigma}); "
            f"lam_prime <= -1 - sigma makes every node its own cluster"
        )
    if isinstance(init, str):
        if init == "single":
            labels = np.zeros(n, np.int64)
        elif init == "spectral":
            N = _normalized_adjacency(A, deg)
            vals, U = thresholded_eigenvectors(N, 1.0 + lam_prime, max_vectors=max_clusters,
                                               eigen_solver=eigen_solver)
            if len(vals) == 0:
                labels = np.zeros(n, np.int64)
            else:
                norms = np.linalg.norm(U, axis=1, keepdims=True)
                labels = _farthest_first_kmeans(U / np.where(norms > 0, norms, 1.0), len(vals))
        else:
            raise ValueError(f"init must be 'spectral', 'single' or a label array, got {init!r}")
    else:
        labels = _check_init_labels(init, n)
    labels, _ = _compact(labels)
    return _initial_state(_Graph(A, deg, sigma, lam, lam_prime), labels, PenalizedNCutState)
