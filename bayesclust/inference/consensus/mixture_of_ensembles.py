r"""MM: Topchy, Jain & Punch's mixture model of a clustering ensemble, fitted by EM.

Object ``i`` is described by its label vector across the N partitions of an
ensemble, modelled as a mixture of products of multinomials; the consensus is
the most probable component.  It is the competitor PEnCA is compared with
(Lourenco, Fred & Figueiredo 2011, Table 1).

References
----------
A. Topchy, A. K. Jain and W. Punch, "A mixture model for clustering ensembles",
SIAM SDM 2004.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from .._driver import best_of_restarts

__all__ = [
    "MixtureEnsembleResult",
    "MixtureOfEnsemblesInfo",
    "MixtureOfEnsemblesState",
    "init_mixture_of_ensembles_state",
    "mixture_of_ensembles",
    "mixture_of_ensembles_step",
]


class MixtureEnsembleResult(NamedTuple):
    r"""Result of :func:`mixture_of_ensembles`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        :math:`\arg\max_m E[z_{im}]` (the first on ties).
    responsibilities : ndarray, shape (n, L)
    weights : ndarray, shape (L,)
        :math:`\alpha`.
    objective : float
        The objective EM maximises at the returned parameters: the log-likelihood
        :math:`\sum_i \log \sum_m \alpha_m \prod_j \nu_{jm}(y_{ij})` (soft) or the
        classification log-likelihood :math:`\sum_i \max_m \log \alpha_m \prod_j
        \nu_{jm}(y_{ij})` (hard), plus the pseudo-count log-prior
        :math:`\epsilon \sum \log \nu`.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        The objective at the start and after every iteration of the selected start
        (non-decreasing).
    n_iter : int
        Iterations run by the selected start.
    converged : bool
        Whether the selected start met its stopping test before ``max_iter``.
    restart_objectives : ndarray, shape (n_init,)
        Final maximised objective of every start; the best is returned.
    """

    labels: np.ndarray
    responsibilities: np.ndarray
    weights: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray


class _MMProblem(NamedTuple):
    """What every iteration reads: the ensemble's one-hot matrix and the settings."""

    Z: Any  # (n, T) sparse one-hot matrix of all partitions, T = sum_j K_j
    O: np.ndarray  # (n, N) 1 where object i has a label in partition j
    part: np.ndarray  # (T,) partition of every column of Z
    K: np.ndarray  # (N,) labels of every partition
    n_clusters: int
    eps: float
    hard: bool

    def m_step(self, R):
        alpha = R.mean(axis=0)
        num = self.Z.T @ R  # (T, L)
        den = (self.O.T @ R)[self.part]  # (T, L)
        nu = (num + self.eps) / (den + self.K[self.part][:, None] * self.eps)
        return alpha, np.log(nu)

    def e_step(self, alpha, log_nu):
        """Responsibilities and the objective at (alpha, nu)."""
        n = self.Z.shape[0]
        with np.errstate(divide="ignore"):
            A = np.log(alpha)[None, :] + self.Z @ log_nu  # (n, L)
        if self.hard:
            best = A.max(axis=1)
            R = np.zeros_like(A)
            R[np.arange(n), A.argmax(axis=1)] = 1.0
            ll = float(best.sum())
        else:
            lse = _logsumexp_rows(A)
            R, ll = np.exp(A - lse[:, None]), float(lse.sum())
        return R, ll + self.eps * log_nu.sum()


class MixtureOfEnsemblesState(NamedTuple):
    r"""State of MM's EM (or CEM) after ``n_iter`` iterations.

    Attributes
    ----------
    responsibilities : ndarray of float64, shape (n, L)
        :math:`E[z_{im}]` at (``weights``, ``log_nu``) (hard: one-hot).
    weights : ndarray of float64, shape (L,)
        :math:`\alpha`.
    log_nu : ndarray of float64, shape (T, L)
        :math:`\log \nu_{jm}(k)`, one row per label ``k`` of every partition ``j`` (the
        partitions' labels one after the other, ``T`` their total).
    labels : ndarray of int64, shape (n,)
        :math:`\arg\max_m E[z_{im}]` (the first on ties).
    objective : float
        The maximised objective at (``weights``, ``log_nu``): the log-likelihood (soft) or
        the classification log-likelihood (hard) plus :math:`\epsilon \sum \log \nu`.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        ``objective`` at the start and after every iteration.
    n_iter : int
        Iterations done.
    converged : bool
        The last iteration met the stopping test: a relative increase of the objective of at
        most ``tol`` (soft); unchanged responsibilities or no increase (hard).
    problem : object
        The prepared problem (private, constant during the run): the ensemble's one-hot
        matrix, ``hard`` and the pseudo-count.
    """

    responsibilities: np.ndarray
    weights: np.ndarray
    log_nu: np.ndarray
    labels: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    problem: object


class MixtureOfEnsemblesInfo(NamedTuple):
    """Diagnostics of one :func:`mixture_of_ensembles_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        Whether the step changed ``labels``.
    """

    objective: float
    changed: bool


def _logsumexp_rows(A: np.ndarray) -> np.ndarray:
    m = A.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(A - m).sum(axis=1, keepdims=True)))[:, 0]


def _prepare(ensemble, n_clusters, hard, pseudo_count, allow_missing) -> _MMProblem:
    codes = V.check_ensemble(ensemble, allow_missing=allow_missing)
    L = V.check_int(n_clusters, "n_clusters", minimum=1)
    N, n = codes.shape
    if L > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {L}")
    eps = V.check_positive(pseudo_count, "pseudo_count")
    K = codes.max(axis=1) + 1  # (N,)
    offsets = np.concatenate([[0], np.cumsum(K)])
    obs = codes >= 0
    r, c = np.nonzero(obs.T)  # object, partition
    Z = sp.csr_matrix((np.ones(r.size), (r, codes.T[r, c] + offsets[c])), shape=(n, int(offsets[-1])))
    part = np.repeat(np.arange(N), K)  # partition of every column
    return _MMProblem(Z, obs.T.astype(np.float64), part, K, L, eps, bool(hard))


def _start(problem: _MMProblem, R0: np.ndarray) -> MixtureOfEnsemblesState:
    """The state of the parameters estimated from the responsibilities ``R0``."""
    alpha, log_nu = problem.m_step(R0)
    R, obj = problem.e_step(alpha, log_nu)
    return MixtureOfEnsemblesState(R, alpha, log_nu, np.argmax(R, axis=1).astype(np.int64), obj,
                                   np.array([obj]), 0, False, problem)


def init_mixture_of_ensembles_state(
    rng_key: Any,
    ensemble: Any,
    n_clusters: int,
    *,
    hard: bool = False,
    pseudo_count: float = 1e-6,
    allow_missing: bool | None = None,
) -> MixtureOfEnsemblesState:
    r"""The state MM's EM starts from (arguments as in :func:`mixture_of_ensembles`).

    Random responsibilities :math:`E[z_{i\cdot}] \sim \mathrm{Dir}(\mathbf 1_L)` (drawn from
    a NumPy generator seeded by ``rng_key``), the M-step from them, then the E-step: the
    start of :func:`mixture_of_ensembles` with ``n_init=1``.

    Examples
    --------
    >>> state = init_mixture_of_ensembles_state(0, [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]], 2)
    >>> state.responsibilities.shape, state.n_iter, len(state.objective_trace)
    ((4, 2), 0, 1)
    """
    problem = _prepare(ensemble, n_clusters, hard, pseudo_count, allow_missing)
    n = problem.Z.shape[0]
    return _start(problem, V.as_numpy_rng(rng_key).dirichlet(np.ones(problem.n_clusters), size=n))


def mixture_of_ensembles_step(state: MixtureOfEnsemblesState, *, tol: float = 1e-7
                              ) -> tuple[MixtureOfEnsemblesState, MixtureOfEnsemblesInfo]:
    r"""One EM (or CEM) iteration of MM: M-step, E-step, the objective and the stopping test.

    M-step :math:`\alpha_m=\frac1n\sum_iE[z_{im}]`,
    :math:`\nu_{jm}(k)=\frac{\sum_i[y_{ij}=k]E[z_{im}]+\epsilon}{\sum_i[y_{ij}\ne-1]E[z_{im}]+K^j\epsilon}`;
    E-step :math:`E[z_{im}]\propto\alpha_m\prod_j\nu_{jm}(y_{ij})` (hard: one-hot at the
    maximum).  ``converged`` is set when the objective rose by at most ``tol`` relative to
    its new value (soft), or when the hard responsibilities repeat or the objective did not
    rise (hard).  :func:`mixture_of_ensembles` loops over this step from
    :func:`init_mixture_of_ensembles_state`; stepping by hand reproduces it exactly.  The input
    state is not modified.

    Parameters
    ----------
    state : MixtureOfEnsemblesState
    tol : float, default 1e-7

    Returns
    -------
    (MixtureOfEnsemblesState, MixtureOfEnsemblesInfo)

    Examples
    --------
    >>> state = init_mixture_of_ensembles_state(0, [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]], 2)
    >>> while not state.converged:
    ...     state, info = mixture_of_ensembles_step(state)
    >>> bool(state.labels[0] == state.labels[1] != state.labels[2])
    True
    """
    pb = state.problem
    alpha, log_nu = pb.m_step(state.responsibilities)
    R, obj = pb.e_step(alpha, log_nu)
    delta = obj - state.objective
    if pb.hard:
        converged = bool(np.array_equal(R, state.responsibilities) or delta <= 0)
    else:
        converged = bool(delta <= tol * abs(obj))
    labels = np.argmax(R, axis=1).astype(np.int64)
    new = MixtureOfEnsemblesState(R, alpha, log_nu, labels, obj, np.append(state.objective_trace, obj),
                                  state.n_iter + 1, converged, pb)
    return new, MixtureOfEnsemblesInfo(obj, not np.array_equal(labels, state.labels))


def mixture_of_ensembles(
    rng_key: Any,
    ensemble: Any,
    n_clusters: int,
    *,
    n_init: int = 10,
    hard: bool = False,
    tol: float = 1e-7,
    max_iter: int = 1000,
    pseudo_count: float = 1e-6,
    allow_missing: bool | None = None,
) -> MixtureEnsembleResult:
    r"""MM: EM for Topchy et al.'s mixture model of a clustering ensemble (docs/deviations.md#mm-topchy).

    .. math::

        P(\mathbf y_i\mid\Theta)=\sum_{m=1}^L\alpha_m\prod_{j=1}^N\nu_{jm}(y_{ij}),

    E-step :math:`E[z_{im}]\propto\alpha_m\prod_j\nu_{jm}(y_{ij})` (log space); M-step
    :math:`\alpha_m=\frac1n\sum_iE[z_{im}]`,
    :math:`\nu_{jm}(k)=\frac{\sum_i[y_{ij}=k]E[z_{im}]+\epsilon}{\sum_i[y_{ij}\ne-1]E[z_{im}]+K^j\epsilon}`.
    Missing labels (``-1``) are skipped in both steps (E-step product and M-step counts).

    Parameters
    ----------
    rng_key : jax.random key or int
    ensemble : array_like (N, n), list, Ensemble or Posterior
        The partitions (see :func:`bayesclust._validation.check_ensemble`).
    n_clusters : int
        ``L >= 1`` mixture components (consensus clusters).
    n_init : int, default 10
        Random starts (random Dirichlet responsibilities); the best final objective wins.
    hard : bool, default False
        Classification EM (hard responsibilities), the hard limit.
    tol : float, default 1e-7
        Relative change of the objective.
    max_iter : int, default 1000
    pseudo_count : float, default 1e-6
        :math:`\epsilon` (ours): avoids :math:`\log 0`, which would freeze components.
    allow_missing : bool, optional
        See :func:`~bayesclust._validation.check_ensemble`.

    Returns
    -------
    MixtureEnsembleResult
        ``objective`` is maximised.

    Notes
    -----
    The E-step is one sparse product ``Z @ log(nu)`` with ``Z`` the ``n x sum_j K_j``
    one-hot matrix of all partitions, so an iteration is ``O(nNL)``.  The objective is the
    one maximised by this EM: log-likelihood + :math:`\epsilon\sum\log\nu` (the
    pseudo-count is a Dirichlet(1 + epsilon) prior), non-decreasing.  Each start is
    :func:`mixture_of_ensembles_step` looped from the state
    :func:`init_mixture_of_ensembles_state` makes (host NumPy code).

    References
    ----------
    A. Topchy, A. K. Jain and W. Punch, "A mixture model for clustering ensembles",
    SIAM SDM 2004.

    Examples
    --------
    >>> res = mixture_of_ensembles(0, [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]], 2)
    >>> res.labels[0] == res.labels[1] != res.labels[2]
    np.True_
    """
    problem = _prepare(ensemble, n_clusters, hard, pseudo_count, allow_missing)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    tol = V.check_nonnegative(tol, "tol")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    rng = V.as_numpy_rng(rng_key)
    n = problem.Z.shape[0]

    def restart():
        state = _start(problem, rng.dirichlet(np.ones(problem.n_clusters), size=n))
        while state.n_iter < max_iter and not state.converged:
            state, _ = mixture_of_ensembles_step(state, tol=tol)
        return state.objective, state

    _, s, finals = best_of_restarts(n_init, restart)
    return MixtureEnsembleResult(
        labels=s.labels,
        responsibilities=s.responsibilities,
        weights=s.weights,
        objective=s.objective,
        objective_trace=s.objective_trace,
        n_iter=s.n_iter,
        converged=s.converged,
        restart_objectives=finals,
    )
