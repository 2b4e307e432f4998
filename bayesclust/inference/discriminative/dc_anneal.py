r"""SA MAP: discriminative clustering by simulated annealing on the exact posterior.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §3.1, §7.2.1: the
prototypes move by Gaussian jumps, accepted by the Metropolis rule on eq. 9 of the hard
Voronoi cells.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from scipy.special import gammaln as _host_gammaln

from ... import _validation as V
from ...kernels import nearest_center
from ._common import (
    STEPS_PER_CLUSTER,
    UNROLL_MAX_CLUSTERS,
    DCResult,
    blocks,
    check_init,
    check_problem,
    finish,
    hyper,
    running_argmin_rows,
    work_dtype,
)

__all__ = ["dc_anneal"]

class _SAState(NamedTuple):
    m: jax.Array  # (K, d) prototypes
    Dt: jax.Array  # (K, n) cached squared distances ("one" move; (1, 1) dummy for "all")
    labels: jax.Array  # (n,) int32 cells
    counts: jax.Array  # (K, C) int32 contingency table
    energy: jax.Array  # float64 exact (regularised) objective of the state
    best_m: jax.Array
    best_energy: jax.Array
    n_accepted: jax.Array  # int32


def _anneal_draws(key, b, block: int, K: int, d: int, move: str, dtype):
    """Random numbers of SA block ``b``: displacements (standard normal), moved
    prototype (``"one"``), log-uniforms of the acceptance test (float64)."""
    k_eps, k_which, k_u = jax.random.split(jax.random.fold_in(key, b), 3)
    eps = jax.random.normal(k_eps, (block, K, d) if move == "all" else (block, d), dtype)
    which = jax.random.randint(k_which, (block,), 0, K)
    log_u = jnp.log(jax.random.uniform(k_u, (block,), jnp.float64, minval=1e-300))
    return eps, which, log_u


@functools.partial(
    jax.jit, static_argnames=("n_classes", "move", "block", "n_blocks", "use_vq")
)
def _anneal_run(key, X, classes, m0, jump_std, n_iter, t_cls, t_tot, lam_vq, *,
                n_classes, move, block, n_blocks, use_vq):
    """Metropolis annealing on the exact objective; returns the final state and the trace."""
    n, d = X.shape
    K, C = m0.shape[0], n_classes
    fdt = X.dtype
    Xt = X.T  # (d, n): one feature per contiguous row

    def column(mk):  # |x - m_k|^2 for every point, exact differences, (n,)
        return sum((Xt[t] - mk[t]) ** 2 for t in range(d))

    def counts_of(labels):
        return jax.ops.segment_sum(jnp.ones(n, jnp.int32), labels * C + classes,
                                   K * C).reshape(K, C)

    def energy_of(counts, min_sq):
        e = jnp.sum(t_cls[counts]) - jnp.sum(t_tot[counts.sum(1)])
        if use_vq:
            e = e - lam_vq * jnp.sum(min_sq.astype(jnp.float64))
        return e

    if move == "one":
        Dt = jax.vmap(column)(m0)
        min_sq, labels = running_argmin_rows(lambda j: Dt[j], K)
    else:
        Dt = jnp.zeros((1, 1), fdt)
        nc = nearest_center(X, m0)
        min_sq, labels = nc.sq_dist, nc.index
    counts = counts_of(labels)
    e0 = energy_of(counts, min_sq)
    state = _SAState(m0, Dt, labels, counts, e0, m0, e0, jnp.int32(0))
    denom = jnp.maximum(n_iter - 1, 1).astype(jnp.float64)

    def propose_all(st, s, eps, scale):
        m_new = st.m + scale * eps  # eps (K, d)
        nc = nearest_center(X, m_new)
        counts = counts_of(nc.index)
        e_new = energy_of(counts, nc.sq_dist)

        def accept(st):
            return st._replace(m=m_new, labels=nc.index, counts=counts, energy=e_new)

        return e_new, m_new, accept

    def propose_one(st, k, eps, scale):
        mk = st.m[k] + scale * eps  # eps (d,)
        col = column(mk)
        if K <= UNROLL_MAX_CLUSTERS:
            min_sq, labels = running_argmin_rows(
                lambda j: jnp.where(k == j, col, st.Dt[j]), K)
        else:
            D = jnp.where((jnp.arange(K) == k)[:, None], col[None, :], st.Dt)
            labels = jnp.argmin(D, axis=0).astype(jnp.int32)
            min_sq = jnp.min(D, axis=0)
        counts = counts_of(labels)
        e_new = energy_of(counts, min_sq)
        m_new = st.m.at[k].set(mk)

        def accept(st):
            return st._replace(m=m_new, Dt=lax.dynamic_update_index_in_dim(st.Dt, col, k, 0),
                               labels=labels, counts=counts, energy=e_new)

        return e_new, m_new, accept

    def block_body(st, b):
        eps, which, log_u = _anneal_draws(key, b, block, K, d, move, fdt)

        def step(i, st):
            s = b * block + i
            active = s < n_iter
            T = 1.0 - 0.9 * s.astype(jnp.float64) / denom  # linear 1 -> 0.1 (§3.1)
            scale = (T ** 0.25).astype(fdt) * jump_std  # covariance sqrt(T) jump_std^2 I
            if move == "all":
                e_new, m_new, accept = propose_all(st, s, eps[i], scale)
            else:
                e_new, m_new, accept = propose_one(st, which[i], eps[i], scale)
            delta = e_new - st.energy
            ok = active & ((delta >= 0) | (log_u[i] < delta / T))
            st = lax.cond(ok, accept, lambda st: st, st)
            better = ok & (e_new > st.best_energy)
            return st._replace(
                best_m=jnp.where(better, m_new, st.best_m),
                best_energy=jnp.where(better, e_new, st.best_energy),
                n_accepted=st.n_accepted + ok.astype(jnp.int32),
            )

        st = lax.fori_loop(0, block, step, st)
        return st, st.energy

    state, trace = lax.scan(block_body, state, jnp.arange(n_blocks))
    return state, jnp.concatenate([e0[None], trace])


def dc_anneal(
    rng_key,
    X,
    classes,
    n_clusters: int,
    jump_std: float,
    *,
    n_iter: int | None = None,
    init: Any = "random",
    move: str = "all",
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_vq: float = 0.0,
    return_best: bool = False,
    trace_points: int = 1000,
) -> DCResult:
    r"""MAP discriminative clustering by simulated annealing on the exact objective ("SA MAP").

    Metropolis annealing of the unsmoothed log posterior (Kaski et al. 2005,
    eq. 9, with the optional eq. 12 and 15 regularisers)

    .. math::

        E(m) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j
               \log\Gamma(N^0 + N_j) - \lambda_{VQ} \sum_x \min_j \|x - m_j\|^2

    with hard Voronoi counts :math:`n_{ji}`.  Iteration ``s = 0..S-1`` has
    temperature :math:`T_s = 1 - 0.9\, s / (S - 1)` (linear from 1 to 0.1), proposes
    :math:`m' = m + \varepsilon`, :math:`\varepsilon \sim N(0, \sqrt{T_s}\,
    \sigma_{SA}^2 I)` -- a per-coordinate standard deviation of
    :math:`T_s^{1/4} \sigma_{SA}` -- and accepts with probability
    :math:`\min(1, \exp((E' - E) / T_s))` (§3.1, §7.2.1).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    n_clusters : int
    jump_std : float
        :math:`\sigma_{SA}`, the jump width (> 0; the paper validates it over 30
        log-spaced values).
    n_iter : int, optional
        Proposals ``S``; default ``100_000 * n_clusters`` (the paper).
    init : {"random", "kmeans"} or array_like (K, d), default "random"
        As in :func:`~bayesclust.inference.discriminative.dc_map.dc_map` (the paper starts from random data points).
    move : {"all", "one"}, default "all"
        ``"all"``: every prototype is displaced at every proposal (the paper's
        wording, "small random displacements to the prototype vectors";
        docs/deviations.md#dc-anneal-moves), :math:`O(nKd)` per proposal.  ``"one"`` (ours): one
        uniformly chosen prototype per proposal, with the ``(K, n)`` distance
        matrix cached and one column recomputed: :math:`O(n(d + K))` per
        proposal.  With ``"one"`` each prototype receives ``S / K`` proposals.
    n_classes : int, optional
    n0 : float, default 1
    lam_eq, lam_vq : float, default 0
        Regularisers of the annealed objective (eqs. 12, 15).
    return_best : bool, default False
        Return the best state visited instead of the final one (an option; the paper does not say).
    trace_points : int, default 1000
        The objective is recorded after every block of ``ceil(S / trace_points)``
        proposals.

    Returns
    -------
    DCResult
        ``method="sa"``, ``smooth_std=None``; ``objective`` is :math:`E` of the
        returned state.

    Raises
    ------
    ValueError, TypeError
        As :func:`~bayesclust.inference.discriminative.dc_map.dc_map`; ``jump_std <= 0``; an unknown ``move``.

    Notes
    -----
    One jitted :func:`jax.lax.scan` over blocks, each a :func:`jax.lax.fori_loop`
    over proposals; the random numbers of a block are drawn in bulk.  The
    contingency table is recounted per proposal (one ``segment_sum`` over the
    ``n`` points, integer and exact) and :math:`E` is read from precomputed
    float64 tables of :math:`\log\Gamma(n^0 + m)` and :math:`\log\Gamma(N^0 + m)`,
    ``m = 0..n``, so the bookkeeping never drifts; the run is under
    :func:`jax.enable_x64` for that float64 energy, while the distances use the
    usual precision (float32, or float64 for float64 input with
    ``jax_enable_x64`` on).  Its proposal rate is in BENCHMARKS.md.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 200)
    >>> res = dc_anneal(0, X, c, 3, 0.3, n_iter=2000, move="one")
    >>> res.method, res.n_iter, res.labels.shape
    ('sa', 2000, (200,))
    """
    problem = check_problem(X, classes, n_clusters, n_classes)
    jump_std = V.check_positive(jump_std, "jump_std")
    n0, lam_eq, _, lam_vq = hyper(n0, lam_eq, 0.0, lam_vq)
    K, C = problem.n_clusters, problem.n_classes
    n = problem.X.shape[0]
    n_iter = STEPS_PER_CLUSTER * K if n_iter is None else V.check_int(n_iter, "n_iter", minimum=1)
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    if move not in ("all", "one"):
        raise ValueError(f"move must be 'all' or 'one', got {move!r}")
    key = V.as_rng_key(rng_key)
    k_init, k_run = jax.random.split(key)
    m0 = check_init(k_init, problem.X, K, init)

    # Exact count terms as lookup tables (host float64): lgamma(n0 + m), (1+lam) lgamma(N0 + m).
    counts_range = np.arange(n + 1, dtype=np.float64)
    t_cls = _host_gammaln(n0 + counts_range)
    t_tot = (1.0 + lam_eq) * _host_gammaln(C * n0 + counts_range)
    block, n_blocks = blocks(n_iter, trace_points)
    dt = work_dtype(problem.X)  # distances: the usual precision; the energy: float64
    with jax.enable_x64(True):
        Xj = jnp.asarray(problem.X, dt)
        state, trace = _anneal_run(
            k_run, Xj, jnp.asarray(problem.classes), jnp.asarray(m0, dt), dt.type(jump_std),
            jnp.int64(n_iter), jnp.asarray(t_cls), jnp.asarray(t_tot), jnp.float64(lam_vq),
            n_classes=C, move=move, block=block, n_blocks=n_blocks, use_vq=lam_vq > 0,
        )
        state = jax.device_get(state)
        trace = np.asarray(trace, np.float64)
    final_e, best_e = float(state.energy), float(state.best_energy)
    m = np.asarray(state.best_m if return_best else state.m)
    return finish(
        problem, m, n0,
        objective=best_e if return_best else final_e,
        objective_trace=trace,
        n_iter=n_iter,
        converged=True,
        smooth_std=None,
        method="sa",
        info={"init_prototypes": m0, "accept_rate": int(state.n_accepted) / n_iter,
              "best_objective": best_e, "final_objective": final_e,
              "final_counts": np.asarray(state.counts, np.int64),
              "final_prototypes": np.asarray(state.m),
              "returned": "best" if return_best else "final", "move": move,
              "jump_std": jump_std},
    )
