r"""Weighted kernel DP-means.

Kulis & Jordan (2012), §5: the DP-means objective in a feature space,

.. math::

    J(K, W) + \lambda k = \sum_c \sum_{i \in c} w_i \|\psi(x_i) - \mu_c\|^2 + \lambda k,
    \qquad \mu_c = \frac{\sum_{i\in c} w_i \psi(x_i)}{\sum_{i \in c} w_i},

needs only the kernel matrix :math:`K_{ij} = \psi(x_i)^\top\psi(x_j)`.
:func:`kernel_dp_means` is weighted kernel DP-means, "a straightforward extension of
Algorithm 1" (KJ §5.2), with exactly the semantics of :func:`bayesclust.dp_means` (with
:math:`K = XX^\top` both give the same partitions).  Its spectral relaxation is
:mod:`~bayesclust.inference.hard.spectral_dp_means`, its graph form the penalised normalised
cut (:mod:`~bayesclust.inference.hard.penalized_ncut`); the three share one engine.

The computations are host NumPy / SciPy; no JAX code runs here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import _validation as V
from ._kernel_passes import (
    KernelDPMeansInfo,
    KernelDPMeansState,
    _check_init_labels,
    _check_kernel,
    _compact,
    _DenseKernel,
    _drive,
    _initial_state,
    kernel_dp_means_step,
)

__all__ = [
    "KernelDPMeansResult",
    "kernel_dp_means",
    "KernelDPMeansState",
    "KernelDPMeansInfo",
    "init_kernel_dp_means_state",
    "kernel_dp_means_step",
    "kernel_dp_means_objective",
]


class KernelDPMeansResult(NamedTuple):
    """Result of :func:`kernel_dp_means`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    n_clusters : int
    objective : float
        :math:`J(K, W) + \\lambda k` of the returned partition.
    objective_trace : ndarray, shape (n_accepted + 1,)
        The minimised objective at the start and after every accepted iteration;
        never increases.
    n_iter : int
        Passes run (a rejected pass counts).
    converged : bool
    n_rejected : int
        Passes rejected because they raised the objective (0 for a PSD kernel).
    lam : float
    """

    labels: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_rejected: int
    lam: float


def kernel_dp_means(
    K,
    lam,
    *,
    sample_weight=None,
    init=None,
    max_iter: int = 100,
) -> KernelDPMeansResult:
    r"""Weighted kernel DP-means (Kulis & Jordan 2012, §5.2).

    Minimises :math:`J(K, W) + \lambda k` where
    :math:`J(K, W) = \sum_c \sum_{i\in c} w_i\, \mathrm{dist}(i, c)` and the
    squared feature-space distance to the implicit weighted mean of ``c`` is

    .. math::

        \mathrm{dist}(i, c) = K_{ii} - \frac{2 \sum_{j\in c} w_j K_{ij}}{s_c}
        + \frac{\sum_{j,l\in c} w_j w_l K_{jl}}{s_c^2}, \qquad s_c = \sum_{j \in c} w_j .

    Algorithm 1 of the paper in feature space: start from one cluster (or
    ``init``); in each pass visit the points in order, open a new cluster
    seeded by :math:`i` when :math:`w_i \min_c \mathrm{dist}(i, c) > \lambda`,
    else join the nearest cluster; delete empty clusters; the implicit means
    follow the new memberships.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric kernel (Gram) matrix, positive semi-definite for the
        monotonicity guarantee.  Computed in float64.
    lam : float
        Penalty per cluster (> 0), in units of :math:`K` (a squared
        feature-space distance).
    sample_weight : array_like, shape (n,), optional
        Positive point weights :math:`w_i` (default 1).
    init : array_like of int, shape (n,), optional
        Initial labels (any integers; relabelled in order of their values).
        Default: a single cluster, as Algorithm 1.
    max_iter : int, default 100

    Returns
    -------
    KernelDPMeansResult

    Notes
    -----
    **Semantics** (ours; Kulis & Jordan give none: docs/deviations.md#kernel-dpmeans-semantics): the memberships that
    define the implicit means are frozen during a pass, except that a cluster
    opened in the pass has its seed as mean, visible to the points after it.
    Ties go to the lowest cluster index, the new-cluster test is strict.
    With the linear kernel :math:`K = XX^\top` and unit weights this is
    exactly :func:`bayesclust.dp_means` (same partitions, same objective).
    Stopping: as :func:`bayesclust.dp_means` (labels unchanged, or the
    objective decreased by less than ``1e-12`` relative, or ``max_iter``).

    **Weighted rule** :math:`w_i \min_c \mathrm{dist} > \lambda` (ours, docs/deviations.md#dpmeans-weighted-rule, as in
    :func:`bayesclust.dp_means`): moving a cost :math:`w_i d` to
    :math:`\lambda` can only lower the objective, so for a PSD kernel the
    trace never increases.  For an indefinite kernel the mean step is not a
    minimiser; a pass that raises the objective is rejected (``n_rejected``)
    and the run stops at the previous partition.

    **Cost**: one :math:`O(n^2 k)` product ``K @ onehot`` per pass plus a
    serial scan over the few points farther than :math:`\lambda / w_i` from
    every cluster.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via
    Bayesian nonparametrics", ICML 2012, §5.2 and Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> res = kernel_dp_means(X @ X.T, lam=1.0)
    >>> res.n_clusters, res.labels.tolist()
    (2, [0, 0, 1, 1])
    """
    K = _check_kernel(K)
    lam = V.check_positive(lam, "lam")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    state = _kernel_state(K, lam, sample_weight, init)
    state = _drive(state, max_iter, kernel_dp_means_step)
    return KernelDPMeansResult(state.labels, state.n_clusters, state.objective,
                               state.objective_trace, state.n_iter, state.converged,
                               state.n_rejected, lam)


def _kernel_state(K, lam, sample_weight, init):
    """:func:`init_kernel_dp_means_state` after the checks of ``K`` and ``lam``."""
    n = K.shape[0]
    w = V.check_sample_weight(sample_weight, n, dtype=np.float64)
    if np.any(w <= 0):
        raise ValueError("sample_weight must be strictly positive for kernel_dp_means")
    labels = np.zeros(n, np.int64) if init is None else _check_init_labels(init, n)
    return _initial_state(_DenseKernel(K, w, lam), labels)


def init_kernel_dp_means_state(K, lam, *, sample_weight=None, init=None) -> KernelDPMeansState:
    """The state weighted kernel DP-means starts from (:func:`kernel_dp_means`).

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric kernel matrix (centred at the weighted mean in feature space
        once, here).
    lam : float
        Penalty per cluster (> 0).
    sample_weight : array_like, shape (n,), optional
        Positive point weights (default 1).
    init : array_like of int, shape (n,), optional
        Initial labels (relabelled in order of their values); default one cluster.

    Returns
    -------
    KernelDPMeansState
    """
    K = _check_kernel(K)
    lam = V.check_positive(lam, "lam")
    return _kernel_state(K, lam, sample_weight, init)


def kernel_dp_means_objective(K, labels, lam, sample_weight=None) -> float:
    r""":math:`J(K, W) + \lambda k` of a labelling (see :func:`kernel_dp_means`).

    Parameters
    ----------
    K : array_like, shape (n, n)
    labels : array_like of int, shape (n,)
    lam : float
        Penalty per cluster (>= 0; 0 gives the weighted kernel k-means
        objective :math:`J(K, W)`).
    sample_weight : array_like, shape (n,), optional

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0]])
    >>> kernel_dp_means_objective(X @ X.T, [0, 0, 1], lam=1.0)
    4.0
    """
    K = _check_kernel(K)
    lam = V.check_nonnegative(lam, "lam")
    n = K.shape[0]
    w = V.check_sample_weight(sample_weight, n, dtype=np.float64)
    labels, k = _compact(_check_init_labels(labels, n, "labels"))
    return _DenseKernel(K, w).objective(labels, k, lam)
