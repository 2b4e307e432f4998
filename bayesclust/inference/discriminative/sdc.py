r"""sDC: the stochastic on-line algorithm of discriminative clustering, with explicit
class distributions.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §2.1 (eqs. 5-6), §7.2.1.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import voronoi_memberships
from ._common import STEPS_PER_CLUSTER, DCResult, blocks, check_init, check_problem, finish, work_dtype

__all__ = ["sdc"]

def _sdc_objective(m, gamma, X, classes, smooth_std):
    """Smoothed conditional log-likelihood ``sum_x sum_j y_j(x) log psi_{j, c(x)}``."""
    Y, _ = voronoi_memberships(X, m, smooth_std)
    log_psi = jax.nn.log_softmax(gamma, axis=1)
    return jnp.sum(Y * log_psi[:, classes].T)


def _sdc_draws(key, b, block: int, n: int, dtype):
    """Random numbers of sDC block ``b``: sample index (i.i.d. with replacement) and
    two uniforms per step (inverse-CDF draws of ``j`` and ``l``)."""
    k_idx, k_u = jax.random.split(jax.random.fold_in(key, b))
    return (jax.random.randint(k_idx, (block,), 0, n),
            jax.random.uniform(k_u, (block, 2), dtype))


@functools.partial(jax.jit, static_argnames=("n_classes", "block", "n_blocks"))
def _sdc_run(key, X, classes, m0, smooth_std, rate, n_steps, *, n_classes, block, n_blocks):
    n, d = X.shape
    K, C = m0.shape[0], n_classes
    fdt = X.dtype
    inv_two_s2 = 1.0 / (2.0 * smooth_std * smooth_std)
    eye = jnp.eye(C, dtype=fdt)

    def step(t, carry, idx, u):
        m, gamma = carry
        alpha = jnp.where(t < n_steps, rate * (1.0 - t.astype(fdt) / n_steps.astype(fdt)), 0.0)
        x, i = X[idx], classes[idx]
        y = jax.nn.softmax(-jnp.sum((x - m) ** 2, axis=1) * inv_two_s2)  # eq. 4, (K,)
        cdf = jnp.cumsum(y)
        j = jnp.minimum(jnp.sum(cdf < u[0] * cdf[-1]), K - 1)  # j, l ~ y independently
        l = jnp.minimum(jnp.sum(cdf < u[1] * cdf[-1]), K - 1)
        log_psi = jax.nn.log_softmax(gamma, axis=1)
        psi = jnp.exp(log_psi)
        ratio = log_psi[l, i] - log_psi[j, i]  # log(psi_li / psi_ji)
        # eq. 5 for j, then with j and l swapped; both from the pre-step parameters.
        dm_j = -alpha * (x - m[j]) * ratio
        dm_l = alpha * (x - m[l]) * ratio  # -alpha (x - m_l) log(psi_ji / psi_li)
        # eq. 6 with the doubled coefficient of §7.2.1; j = l gets both updates.
        dg_j = -2.0 * alpha * (psi[j] - eye[i])
        dg_l = -2.0 * alpha * (psi[l] - eye[i])
        m = m.at[j].add(dm_j).at[l].add(dm_l)
        gamma = gamma.at[j].add(dg_j).at[l].add(dg_l)
        return m, gamma

    def block_body(carry, b):
        idx, u = _sdc_draws(key, b, block, n, fdt)

        def body(s, carry):
            return step(b * block + s, carry, idx[s], u[s])

        carry = lax.fori_loop(0, block, body, carry)
        return carry, _sdc_objective(carry[0], carry[1], X, classes, smooth_std)

    gamma0 = jnp.zeros((K, C), fdt)
    start = _sdc_objective(m0, gamma0, X, classes, smooth_std)
    (m, gamma), trace = lax.scan(block_body, (m0, gamma0), jnp.arange(n_blocks))
    return m, gamma, jnp.concatenate([start[None], trace])


def sdc(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    n_iter: int | None = None,
    rate: float = 0.05,
    init: Any = "random",
    n_classes: int | None = None,
    n0: float = 1.0,
    trace_points: int = 100,
) -> DCResult:
    r"""Discriminative clustering by the stochastic on-line algorithm ("sDC").

    The earlier algorithm (Kaski et al. 2005, §2.1, eqs. 4-6) maximises the
    smoothed conditional log-likelihood
    :math:`\sum_x \sum_j y_j(x) \log \psi_{j, c(x)}` with explicit class
    distributions :math:`\log\psi_{ji} = \gamma_{ji} - \log\sum_m e^{\gamma_{jm}}`.
    Step ``t``: draw a training pair :math:`(x, c(x) = i)` uniformly with
    replacement; draw two prototypes :math:`j, l \sim y(x)` independently
    (eq. 4); then, from the pre-step parameters,

    .. math::

        m_j \mathrel{-}= \alpha_t (x - m_j) \log\frac{\psi_{li}}{\psi_{ji}}, \qquad
        \gamma_{j\cdot} \mathrel{-}= 2\alpha_t (\psi_{j\cdot} - e_i),

    and the same with ``j`` and ``l`` swapped (eqs. 5-6; the coefficient of (6)
    doubled as in §7.2.1).  :math:`\alpha_t = \text{rate}\,(1 - t / S)`
    decreases linearly from 0.05 to 0 over ``S = 100,000 K`` steps.  If
    ``j = l`` the prototypes do not move and :math:`\gamma_j` receives both
    updates.  :math:`\gamma` starts at 0 (uniform :math:`\psi`; ours).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    n_clusters : int
    smooth_std : float
        :math:`\sigma` of the memberships (> 0).
    n_iter : int, optional
        The number of steps ``S``; default ``100_000 * n_clusters`` (the paper), as
        :func:`~bayesclust.inference.discriminative.dc_anneal.dc_anneal`'s ``n_iter``.
    rate : float, default 0.05
        :math:`\alpha_0` (> 0).
    init : {"random", "kmeans"} or array_like (K, d), default "random"
    n_classes : int, optional
    n0 : float, default 1
        Used only for the reported ``log_posterior`` (eq. 9); sDC has no prior.
    trace_points : int, default 100
        The objective on the training data is recorded after every block of
        ``ceil(S / trace_points)`` steps (each record costs :math:`O(nKd)`).

    Returns
    -------
    DCResult
        ``method="sdc"``; ``info["psi"]`` holds the final class distributions
        (which the paper discards: only the partition is evaluated).

    Raises
    ------
    ValueError, TypeError
        As :func:`~bayesclust.inference.discriminative.dc_map.dc_map`; ``rate <= 0``.

    Notes
    -----
    Our resolutions of the paper's silences (docs/deviations.md#sdc-schedule): a single linear ramp (the paper's
    "piecewise-linearly" gives no breakpoints), sampling with replacement, both
    adaptations from the pre-step parameters.  One jitted
    :func:`jax.lax.scan` over blocks of a :func:`jax.lax.fori_loop`; the random
    numbers of a block are drawn in bulk, and ``j, l`` by inverse-CDF lookup.
    Computed in float32, or float64 for float64 input with ``jax_enable_x64`` on.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 200)
    >>> res = sdc(0, X, c, 3, 0.3, n_iter=2000)
    >>> res.method, res.info["psi"].shape
    ('sdc', (3, 2))
    """
    problem = check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    rate = V.check_positive(rate, "rate")
    n0 = V.check_positive(n0, "n0")
    K, C = problem.n_clusters, problem.n_classes
    n_steps = STEPS_PER_CLUSTER * K if n_iter is None else V.check_int(n_iter, "n_iter", minimum=1)
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    key = V.as_rng_key(rng_key)
    k_init, k_run = jax.random.split(key)
    m0 = check_init(k_init, problem.X, K, init)
    block, n_blocks = blocks(n_steps, trace_points)
    dt = work_dtype(problem.X)
    m, gamma, trace = _sdc_run(
        k_run, jnp.asarray(problem.X, dt), jnp.asarray(problem.classes), jnp.asarray(m0, dt),
        dt.type(smooth_std), dt.type(rate), jnp.int32(n_steps), n_classes=C, block=block,
        n_blocks=n_blocks,
    )
    m = np.asarray(m)
    psi = np.asarray(jax.nn.softmax(gamma, axis=1), np.float64)
    trace = np.asarray(trace, np.float64)
    return finish(
        problem, m, n0,
        objective=float(trace[-1]),
        objective_trace=trace,
        n_iter=n_steps,
        converged=True,
        smooth_std=smooth_std,
        method="sdc",
        info={"init_prototypes": m0, "psi": psi, "rate": rate},
    )
