r"""CG MAP: discriminative clustering by nonlinear conjugate gradients on the smoothed
posterior.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §3.1 (eqs. 10-11), §7.2.1:
the normalised-Gaussian memberships of width ``smooth_std`` make eq. 9 differentiable.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import digamma, gammaln

from ... import _validation as V
from ...kernels import PRECISION
from ._common import (
    DCResult,
    check_init,
    check_problem,
    finish,
    hyper,
    rows_min_argmin,
    rows_sum,
    unit_frame,
)

__all__ = ["dc_map", "CG_MAX_ITER"]

#: Iterations of CG in the paper (§7.2.1: "the maximal number of iterations ... was set to 29").
CG_MAX_ITER = 29


@functools.partial(jax.jit, static_argnames=("n_classes", "use_mog", "use_vq"))
def _smoothed_value_and_grad(m, X, classes, smooth_std, n0, lam_eq, lam_mog, lam_vq, *,
                             n_classes, use_mog, use_vq):
    r"""Smoothed DC objective ``F`` (eq. 10 + 12/14/15) and its closed-form gradient (eq. 11).

    Equals :func:`~bayesclust.models.discriminative.dc_objective` with
    ``smooth_std`` and its :func:`jax.grad` (tested), written in a prototype-major
    ``(K, n)`` layout with every per-point quantity computed once:

    .. math::

        \frac{\partial F}{\partial m_j} = \sum_x a_j(x) (x - m_j), \quad
        a_j = \frac{y_j (L_{j,c} - \sum_l y_l L_{l,c})}{\sigma^2}
              + 2\lambda_{MoG} r_j + 2\lambda_{VQ} [x \in V_j],

    :math:`L_{ji} = \Psi(n^0 + n_{ji}) - (1 + \lambda_{EQ}) \Psi(N^0 + N_j)`
    (Appendix B; the regulariser terms are added to dF/dm_j, not to its sigma^2-scaled form).  It is
    several times faster than ``jax.value_and_grad(dc_objective)`` (BENCHMARKS.md), whose
    ``segment_sum`` counts transpose to a gather that XLA fuses with the digamma,
    evaluating it ``n K`` times.  The optimisation barriers stop XLA:CPU from
    recomputing the distances and exponentials inside every consumer's fusion
    (measured: BENCHMARKS.md).
    """
    barrier = lax.optimization_barrier
    K, d = m.shape
    dt = X.dtype
    Xt = X.T
    if d <= 4:  # exact differences
        D = jnp.stack([sum((Xt[t] - m[j, t]) ** 2 for t in range(d)) for j in range(K)])
    else:
        cross = jnp.matmul(m, Xt, precision=PRECISION)
        D = jnp.maximum(jnp.sum(X * X, axis=1)[None, :] - 2.0 * cross
                        + jnp.sum(m * m, axis=1)[:, None], 0.0)
    D = barrier(D)  # (K, n) squared distances
    dmin, cell = barrier(rows_min_argmin(D))
    inv = 1.0 / (2.0 * smooth_std * smooth_std)
    E = barrier(jnp.exp((dmin[None, :] - D) * inv))
    Y = barrier(E * (1.0 / rows_sum(E))[None, :])  # memberships y_j(x), eq. 4
    onehot = jax.nn.one_hot(classes, n_classes, dtype=dt)  # (n, C)
    counts = jnp.matmul(Y, onehot, precision=PRECISION)  # soft n_ji, (K, C)
    N = jnp.sum(counts, axis=1)
    N0 = n_classes * n0
    F = jnp.sum(gammaln(n0 + counts)) - (1.0 + lam_eq) * jnp.sum(gammaln(N0 + N))
    L = digamma(n0 + counts) - (1.0 + lam_eq) * digamma(N0 + N)[:, None]
    # L_{j, c(x)}, (K, n): a matmul, because XLA fuses the digamma into a gather
    Lx = jnp.matmul(L, onehot.T, precision=PRECISION)
    YL = barrier(Y * Lx)
    coef = (YL - Y * rows_sum(YL)[None, :]) * (2.0 * inv)
    if use_vq:
        F = F - lam_vq * jnp.sum(dmin)
        coef = coef + (2.0 * lam_vq) * (cell[None, :] == jnp.arange(K)[:, None]).astype(dt)
    if use_mog:
        A = -jnp.log(jnp.asarray(K, dt)) - lam_mog * D  # log rho_j - lam ||x - m_j||^2
        amax = -rows_min_argmin(-A)[0]  # row max
        R = barrier(jnp.exp(A - amax[None, :]))
        S = rows_sum(R)
        F = F + jnp.sum(amax + jnp.log(S))
        coef = coef + (2.0 * lam_mog) * R * (1.0 / S)[None, :]
    grad = jnp.matmul(coef, X, precision=PRECISION) - jnp.sum(coef, axis=1)[:, None] * m
    return F, grad


def dc_map(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    init: Any = "kmeans",
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_mog: float = 0.0,
    lam_vq: float = 0.0,
    max_iter: int = CG_MAX_ITER,
    tol: float = 1e-5,
) -> DCResult:
    r"""MAP discriminative clustering by conjugate gradients on the smoothed objective ("CG MAP").

    Maximises the smoothed log posterior (Kaski et al. 2005, eq. 10, with the
    optional regularisers of eqs. 12, 14, 15)

    .. math::

        F(m) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j
               \log\Gamma(N^0 + N_j) \;[- E_{MoG} - \lambda_{VQ} E_{VQ}],
        \qquad n_{ji} = \sum_{x: c(x) = i} y_j(x),

    with normalised-Gaussian memberships
    :math:`y_j(x) \propto \exp(-\|x - m_j\|^2 / (2\sigma^2))` (eq. 4), whose
    gradient is eq. 11, by nonlinear conjugate gradients (Polak-Ribiere+, strong
    Wolfe line search) for at most ``max_iter`` = 29 iterations (§7.2.1).  The
    result is evaluated without smoothing (``log_posterior``, eq. 9).

    Parameters
    ----------
    rng_key : jax key or int
        Used by ``init="kmeans"`` / ``"random"`` only.
    X : array_like, shape (n, d)
        Primary data.
    classes : array_like of int, shape (n,)
        Auxiliary class ``0..C-1`` of every row.
    n_clusters : int
        Number of prototypes ``K`` (``<= n``).
    smooth_std : float
        Smoothing width :math:`\sigma` (a standard deviation, > 0), chosen by
        validation in the paper.
    init : {"kmeans", "random"} or array_like of shape (K, d), default "kmeans"
        ``"kmeans"``: the centres of :func:`bayesclust.inference.hard.kmeans.kmeans`
        (the paper's recommended start, §7.3); ``"random"``: ``K`` distinct random
        data points (the paper's Table 1 protocol); or the prototypes themselves.
    n_classes : int, optional
        ``C``; then ``classes`` must lie in ``0..C-1`` and every class must have samples.
        Default: the distinct values of ``classes``, numbered in increasing order (any
        integer ids).
    n0 : float, default 1
        Dirichlet prior count per class (the paper: 1).
    lam_eq, lam_mog, lam_vq : float, default 0
        Regularisers (>= 0): equal cluster sizes (eq. 12), mixture of Gaussians
        with :math:`\lambda_{MoG} = 1 / (2\sigma_{MoG}^2)` and uniform weights
        (eq. 14), K-means distortion with hard cells (eq. 15).
    max_iter : int, default 29
        CG iterations.
    tol : float, default 1e-5
        Converged when :math:`\max |\partial F / \partial m| \le` ``tol * n``
        (scipy's ``gtol``; the gradient is a sum over the ``n`` points), the
        gradient taken in the unit frame (see Notes), so the test does not depend
        on the scale of ``X``.

    Returns
    -------
    DCResult
        ``method="cg"``; ``objective_trace`` holds :math:`F` (smoothed,
        regularised) at the start and after every iteration; it never decreases
        (the line search enforces sufficient increase).

    Raises
    ------
    ValueError, TypeError
        Bad ``X``/``classes`` (wrong length, non-integer, an empty class),
        ``n_clusters > n``, ``smooth_std <= 0``, negative regularisers, an
        unknown ``init``.

    Notes
    -----
    The optimiser is :func:`scipy.optimize.minimize` (``method="CG"``: the
    Polak-Ribiere+ variant with scipy's strong-Wolfe line search: the paper names
    no variant) on :math:`-F`, with :math:`F` and its closed-form gradient
    (eq. 11, plus the regulariser terms) from one jitted JAX function; it equals
    :func:`~bayesclust.models.discriminative.dc_objective` and its autodiff
    gradient (tested) and is several times faster than autodiff of it.  Why scipy
    rather than a JAX CG loop: the 29-iteration cap means some 60 evaluations of
    :math:`O(nKd)` each, so the host round trip per evaluation is small beside
    one (BENCHMARKS.md), while a jitted line search would
    add compile time to every new problem size.  The evaluation runs in
    **float64** (under :func:`jax.enable_x64`) whatever the input dtype: the
    objective is a difference of log-gamma terms of size :math:`O(n \log n)`,
    and a float32 line search on it stalls once steps change :math:`F` by less
    than its ulp.  The smoothed objective is non-concave: the result is a local
    maximum near the start (hence the k-means start; or keep the best of
    several).  The optimisation runs in a unit frame: ``X`` centred and scaled by a
    power of two ``2**-e`` so that its largest centred value lies in [0.5, 1),
    ``smooth_std`` by ``2**-e`` and ``lam_mog``, ``lam_vq`` by ``4**e`` (the
    objective is unchanged), so data of any magnitude give the same partition.

    References
    ----------
    Kaski, Sinkkonen & Klami (2005), §3.1 (eqs. 10-11), §5, §7.2.1.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 400)
    >>> res = dc_map(0, X, c, 3, 0.3, init="random")
    >>> res.prototypes.shape, res.labels.shape, res.method
    ((3, 2), (400,), 'cg')
    >>> bool(res.objective_trace[-1] >= res.objective_trace[0])
    True
    """
    from scipy.optimize import minimize

    problem = check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    n0, lam_eq, lam_mog, lam_vq = hyper(n0, lam_eq, lam_mog, lam_vq)
    max_iter = V.check_int(max_iter, "max_iter", minimum=0)
    tol = V.check_positive(tol, "tol")
    key = V.as_rng_key(rng_key)
    m0 = check_init(key, problem.X, problem.n_clusters, init)
    n, d = problem.X.shape
    K = problem.n_clusters

    with jax.enable_x64(True):
        unit, frame = unit_frame(problem)  # float64 data stay float64 (see Notes)
        std_u = frame.width(smooth_std, "smooth_std")
        mog_u = frame.weight(lam_mog, "lam_mog", n * K)
        vq_u = frame.weight(lam_vq, "lam_vq", n)
        Xj = jnp.asarray(unit.X, jnp.float64)
        cj = jnp.asarray(problem.classes)
        args = tuple(jnp.float64(v) for v in (std_u, n0, lam_eq, mog_u, vq_u))
        static = dict(n_classes=problem.n_classes, use_mog=lam_mog > 0, use_vq=lam_vq > 0)
        n_evals = [0]

        def fun(x):  # -F and -dF/dm for scipy's minimiser
            n_evals[0] += 1
            v, g = _smoothed_value_and_grad(jnp.asarray(x.reshape(K, d)), Xj, cj, *args, **static)
            return -float(v), -np.asarray(g, np.float64).ravel()

        x0 = frame.to_unit(m0).ravel()
        f0, g0 = fun(x0)
        trace = [-f0]

        def callback(intermediate_result):  # after every completed iteration
            trace.append(-float(intermediate_result.fun))

        if max_iter == 0:
            res_x, status, message, nit, fval = x0, 1, "max_iter=0: no iterations", 0, f0
            grad_max = float(np.max(np.abs(g0)))
        else:
            res = minimize(fun, x0, jac=True, method="CG", callback=callback,
                           options={"maxiter": max_iter, "gtol": tol * n})
            res_x, status, message, nit, fval = res.x, int(res.status), str(res.message), \
                int(res.nit), float(res.fun)
            grad_max = float(np.max(np.abs(res.jac)))

    m = res_x.reshape(K, d).astype(unit.X.dtype)
    return finish(
        unit, m, n0, frame,
        objective=-fval,
        objective_trace=np.asarray(trace, np.float64),
        n_iter=nit,
        converged=status == 0,
        smooth_std=smooth_std,
        method="cg",
        info={"init_prototypes": m0, "n_evals": n_evals[0], "status": status,
              "message": message, "grad_max": grad_max},
    )
