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

__all__ = ["MixtureEnsembleResult", "mixture_of_ensembles"]


class MixtureEnsembleResult(NamedTuple):
    """Result of :func:`mixture_of_ensembles`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        :math:`\\arg\\max_m E[z_{im}]`.
    responsibilities : ndarray, shape (n, L)
    weights : ndarray, shape (L,)
        :math:`\\alpha`.
    log_likelihood : float
        :math:`\\sum_i \\log \\sum_m \\alpha_m \\prod_j \\nu_{jm}(y_{ij})` (soft) or the
        classification log-likelihood (hard), of the returned parameters.
    objective_trace : ndarray, shape (n_iter + 1,)
        The objective EM maximises (log-likelihood + pseudo-count log-prior) after every
        iteration of the selected start, non-decreasing.
    n_iter : int
    converged : bool
    restart_objectives : ndarray, shape (n_init,)
        Final maximised objective of every start; the best is returned.
    """

    labels: np.ndarray
    responsibilities: np.ndarray
    weights: np.ndarray
    log_likelihood: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray


def _logsumexp_rows(A: np.ndarray) -> np.ndarray:
    m = A.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(A - m).sum(axis=1, keepdims=True)))[:, 0]


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

    Notes
    -----
    The E-step is one sparse product ``Z @ log(nu)`` with ``Z`` the ``n x sum_j K_j``
    one-hot matrix of all partitions, so an iteration is ``O(nNL)``.  The trace is the
    objective maximised by this EM: log-likelihood + :math:`\epsilon\sum\log\nu` (the
    pseudo-count is a Dirichlet(1 + epsilon) prior), non-decreasing.

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
    codes = V.check_ensemble(ensemble, allow_missing=allow_missing)
    L = V.check_int(n_clusters, "n_clusters", minimum=1)
    N, n = codes.shape
    if L > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {L}")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    tol = V.check_nonnegative(tol, "tol")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    eps = V.check_positive(pseudo_count, "pseudo_count")
    K = codes.max(axis=1) + 1  # (N,)
    offsets = np.concatenate([[0], np.cumsum(K)])
    obs = codes >= 0
    r, c = np.nonzero(obs.T)  # object, partition
    Z = sp.csr_matrix((np.ones(r.size), (r, codes.T[r, c] + offsets[c])), shape=(n, int(offsets[-1])))
    part = np.repeat(np.arange(N), K)  # partition of every column
    O = obs.T.astype(np.float64)  # (n, N)
    rng = V.as_numpy_rng(rng_key)

    def m_step(R):
        alpha = R.mean(axis=0)
        num = Z.T @ R  # (T, L)
        den = (O.T @ R)[part]  # (T, L)
        nu = (num + eps) / (den + K[part][:, None] * eps)
        return alpha, np.log(nu)

    def e_step(alpha, log_nu):
        with np.errstate(divide="ignore"):
            A = np.log(alpha)[None, :] + Z @ log_nu  # (n, L)
        if hard:
            best = A.max(axis=1)
            R = np.zeros_like(A)
            R[np.arange(n), A.argmax(axis=1)] = 1.0
            return R, float(best.sum())
        lse = _logsumexp_rows(A)
        return np.exp(A - lse[:, None]), float(lse.sum())

    def restart():
        R = rng.dirichlet(np.ones(L), size=n)
        alpha, log_nu = m_step(R)
        R, ll = e_step(alpha, log_nu)
        obj = ll + eps * log_nu.sum()
        trace = [obj]
        converged = False
        it = 0
        while it < max_iter:
            alpha, log_nu = m_step(R)
            R_new, ll_new = e_step(alpha, log_nu)
            obj_new = ll_new + eps * log_nu.sum()
            it += 1
            trace.append(obj_new)
            same = hard and np.array_equal(R_new, R)
            R, ll, delta = R_new, ll_new, obj_new - obj
            obj = obj_new
            if same or (not hard and delta <= tol * abs(obj)) or (hard and delta <= 0):
                converged = True
                break
        return obj, (R, alpha, ll, np.asarray(trace), it, converged)

    _, (R, alpha, ll, trace, it, converged), finals = best_of_restarts(n_init, restart)
    return MixtureEnsembleResult(
        labels=np.argmax(R, axis=1).astype(np.int64),
        responsibilities=R,
        weights=alpha,
        log_likelihood=ll,
        objective_trace=trace,
        n_iter=it,
        converged=converged,
        restart_objectives=finals,
    )
