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
    unit_frame,
    work_dtype,
)

__all__ = ["dc_anneal", "DCAnnealState", "DCAnnealInfo", "init_dc_anneal_state", "dc_anneal_step"]


class DCAnnealState(NamedTuple):
    """State of an SA MAP run (:func:`dc_anneal`) between two steps.

    Made by :func:`init_dc_anneal_state`, advanced by :func:`dc_anneal_step` (a block of
    proposals); :func:`dc_anneal` loops over the step.  Made and stepped with
    ``jax_enable_x64`` on (the public functions turn it on): the energy is float64, the
    distances in the data's working dtype.

    Attributes
    ----------
    prototypes : array, shape (K, d)
        The current prototypes :math:`m_j`.
    distances : array, shape (K, n)
        ``move="one"``: the cached squared distances of every point to every prototype
        (one row is recomputed per proposal); ``move="all"``: a (1, 1) placeholder.
    labels : int32 array, shape (n,)
        Hard Voronoi cell of every point (nearest prototype, lowest index on ties).
    counts : int32 array, shape (K, C)
        The contingency table :math:`n_{ji}` of ``labels`` and the classes.
    objective : float64 scalar
        The annealed energy :math:`E` of the prototypes (maximised; eq. 9 with the eq. 12
        and 15 regularisers).
    best_prototypes : array, shape (K, d)
        The prototypes of the highest energy visited.
    best_objective : float64 scalar
        That energy.
    n_accepted : int32 scalar
        Proposals accepted so far.
    objective_trace : float64 array, shape (T,)
        ``objective`` after initialisation and after steps ``1..``, NaN after them.
    n_iter : int32 scalar
        Proposals run.
    converged : bool scalar
        The schedule's ``n_iter`` proposals have all been run (annealing has no
        convergence test: it runs a fixed schedule).
    log_gamma_class : float64 array, shape (n + 1,)
        :math:`\\log\\Gamma(n^0 + m)`, ``m = 0..n``: the exact count terms as a table.
    log_gamma_total : float64 array, shape (n + 1,)
        :math:`(1 + \\lambda_{EQ}) \\log\\Gamma(C n^0 + m)`, ``m = 0..n``.
    lam_vq : float64 scalar
        :math:`\\lambda_{VQ}` (eq. 15).
    """

    prototypes: jax.Array
    distances: jax.Array
    labels: jax.Array
    counts: jax.Array
    objective: jax.Array
    best_prototypes: jax.Array
    best_objective: jax.Array
    n_accepted: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    log_gamma_class: jax.Array
    log_gamma_total: jax.Array
    lam_vq: jax.Array


class DCAnnealInfo(NamedTuple):
    """Diagnostics of one :func:`dc_anneal_step`.

    Attributes
    ----------
    objective : float64 scalar
        Energy of the returned state.
    changed : bool scalar
        The step changed the partition (``labels``).
    n_accepted : int32 scalar
        Proposals the step accepted.
    """

    objective: jax.Array
    changed: jax.Array
    n_accepted: jax.Array


def _anneal_draws(key, block: int, K: int, d: int, move: str, dtype):
    """Random numbers of one SA step of ``block`` proposals: displacements (standard
    normal), moved prototype (``"one"``), log-uniforms of the acceptance test (float64)."""
    k_eps, k_which, k_u = jax.random.split(key, 3)
    eps = jax.random.normal(k_eps, (block, K, d) if move == "all" else (block, d), dtype)
    which = jax.random.randint(k_which, (block,), 0, K)
    log_u = jnp.log(jax.random.uniform(k_u, (block,), jnp.float64, minval=1e-300))
    return eps, which, log_u


def _column(X, mk):  # |x - m_k|^2 for every point, exact differences, (n,)
    Xt = X.T  # (d, n): one feature per contiguous row
    return sum((Xt[t] - mk[t]) ** 2 for t in range(X.shape[1]))


def _counts_of(labels, classes, K, C):
    n = labels.shape[0]
    return jax.ops.segment_sum(jnp.ones(n, jnp.int32), labels * C + classes, K * C).reshape(K, C)


def _energy_of(st, counts, min_sq, use_vq):
    e = jnp.sum(st.log_gamma_class[counts]) - jnp.sum(st.log_gamma_total[counts.sum(1)])
    if use_vq:
        e = e - st.lam_vq * jnp.sum(min_sq.astype(jnp.float64))
    return e


@functools.partial(jax.jit, static_argnames=("n_classes", "move", "use_vq", "trace_len"))
def _anneal_init(X, classes, m0, t_cls, t_tot, lam_vq, *, n_classes, move, use_vq, trace_len):
    K = m0.shape[0]
    if move == "one":
        Dt = jax.vmap(lambda mk: _column(X, mk))(m0)
        min_sq, labels = running_argmin_rows(lambda j: Dt[j], K)
    else:
        Dt = jnp.zeros((1, 1), X.dtype)
        nc = nearest_center(X, m0)
        min_sq, labels = nc.sq_dist, nc.index
    counts = _counts_of(labels, classes, K, n_classes)
    st = DCAnnealState(m0, Dt, labels, counts, jnp.float64(0), m0, jnp.float64(0), jnp.int32(0),
                       jnp.full(trace_len, jnp.nan, jnp.float64), jnp.int32(0), jnp.asarray(False),
                       t_cls, t_tot, lam_vq)
    e0 = _energy_of(st, counts, min_sq, use_vq)
    return st._replace(objective=e0, best_objective=e0, objective_trace=st.objective_trace.at[0].set(e0))


def _anneal_step(key, st0, X, classes, jump_std, n_iter, *, move, block, use_vq):
    """``block`` proposals of Metropolis annealing (fewer at the schedule's end)."""
    K, d = st0.prototypes.shape
    C = st0.counts.shape[1]
    fdt = X.dtype
    denom = jnp.maximum(n_iter - 1, 1).astype(jnp.float64)
    eps, which, log_u = _anneal_draws(key, block, K, d, move, fdt)

    def propose_all(st, eps, scale):
        m_new = st.prototypes + scale * eps  # eps (K, d)
        nc = nearest_center(X, m_new)
        counts = _counts_of(nc.index, classes, K, C)
        e_new = _energy_of(st, counts, nc.sq_dist, use_vq)

        def accept(st):
            return st._replace(prototypes=m_new, labels=nc.index, counts=counts, objective=e_new)

        return e_new, m_new, accept

    def propose_one(st, k, eps, scale):
        mk = st.prototypes[k] + scale * eps  # eps (d,)
        col = _column(X, mk)
        if K <= UNROLL_MAX_CLUSTERS:
            min_sq, labels = running_argmin_rows(
                lambda j: jnp.where(k == j, col, st.distances[j]), K)
        else:
            D = jnp.where((jnp.arange(K) == k)[:, None], col[None, :], st.distances)
            labels = jnp.argmin(D, axis=0).astype(jnp.int32)
            min_sq = jnp.min(D, axis=0)
        counts = _counts_of(labels, classes, K, C)
        e_new = _energy_of(st, counts, min_sq, use_vq)
        m_new = st.prototypes.at[k].set(mk)

        def accept(st):
            return st._replace(prototypes=m_new,
                               distances=lax.dynamic_update_index_in_dim(st.distances, col, k, 0),
                               labels=labels, counts=counts, objective=e_new)

        return e_new, m_new, accept

    def one(i, st):
        s = st0.n_iter + i
        active = s < n_iter
        T = 1.0 - 0.9 * s.astype(jnp.float64) / denom  # linear 1 -> 0.1 (§3.1)
        scale = (T ** 0.25).astype(fdt) * jump_std  # covariance sqrt(T) jump_std^2 I
        if move == "all":
            e_new, m_new, accept = propose_all(st, eps[i], scale)
        else:
            e_new, m_new, accept = propose_one(st, which[i], eps[i], scale)
        delta = e_new - st.objective
        ok = active & ((delta >= 0) | (log_u[i] < delta / T))
        st = lax.cond(ok, accept, lambda st: st, st)
        better = ok & (e_new > st.best_objective)
        return st._replace(
            best_prototypes=jnp.where(better, m_new, st.best_prototypes),
            best_objective=jnp.where(better, e_new, st.best_objective),
            n_accepted=st.n_accepted + ok.astype(jnp.int32),
        )

    st = lax.fori_loop(0, block, one, st0)
    done = jnp.minimum(st0.n_iter + block, n_iter).astype(jnp.int32)
    b = -(-st0.n_iter // block) + 1  # the steps done, this one included
    st = st._replace(objective_trace=st.objective_trace.at[b].set(st.objective), n_iter=done,
                     converged=done >= n_iter)
    return st, DCAnnealInfo(st.objective, jnp.any(st.labels != st0.labels),
                            st.n_accepted - st0.n_accepted)


_anneal_step_jit = jax.jit(_anneal_step, static_argnames=("move", "block", "use_vq"))


@functools.partial(jax.jit, static_argnames=("move", "block", "use_vq"))
def _anneal_run(key, state, X, classes, jump_std, n_iter, *, move, block, use_vq):
    """The driver's loop: step ``b`` (from 0) uses ``fold_in(key, b)``."""
    def body(st):
        k = jax.random.fold_in(key, st.n_iter // block)
        return _anneal_step(k, st, X, classes, jump_std, n_iter, move=move, block=block,
                            use_vq=use_vq)[0]

    return lax.while_loop(lambda st: ~st.converged, body, state)


def _tables(n, C, n0, lam_eq):
    # Exact count terms as lookup tables (host float64): lgamma(n0 + m), (1+lam) lgamma(N0 + m).
    counts_range = np.arange(n + 1, dtype=np.float64)
    return _host_gammaln(n0 + counts_range), (1.0 + lam_eq) * _host_gammaln(C * n0 + counts_range)


def _check_move(move):
    if move not in ("all", "one"):
        raise ValueError(f"move must be 'all' or 'one', got {move!r}")


def init_dc_anneal_state(X, classes, prototypes, *, n_classes: int | None = None, n0: float = 1.0,
                         lam_eq: float = 0.0, lam_vq: float = 0.0, move: str = "all",
                         trace_points: int = 1000) -> DCAnnealState:
    """The state SA MAP starts from: the given prototypes, their cells and energy.

    Parameters
    ----------
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    prototypes : array_like, shape (K, d)
        The initial prototypes (:func:`dc_anneal` draws them from its key's first half,
        as ``info["init_prototypes"]``).
    n_classes : int, optional
    n0 : float, default 1
    lam_eq, lam_vq : float, default 0
        Regularisers of the annealed objective (Kaski et al. 2005, eqs. 12, 15).
    move : {"all", "one"}, default "all"
        As in :func:`dc_anneal` (``"one"`` caches the distances).
    trace_points : int, default 1000
        Steps the ``objective_trace`` buffer has room for (its length is
        ``trace_points + 1``).

    Returns
    -------
    DCAnnealState
    """
    prototypes = V.check_array(prototypes, "prototypes")
    problem = check_problem(X, classes, prototypes.shape[0], n_classes)
    n0, lam_eq, _, lam_vq = hyper(n0, lam_eq, 0.0, lam_vq)
    _check_move(move)
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    m0 = check_init(None, problem.X, problem.n_clusters, prototypes, "prototypes")
    t_cls, t_tot = _tables(problem.X.shape[0], problem.n_classes, n0, lam_eq)
    dt = work_dtype(problem.X)
    # The state lives in the data's frame (stepping by hand reproduces the driver on the
    # data it works on): its squared distances must fit the working dtype.
    V.check_point_range(problem.X, "X", dt)
    V.check_point_range(m0, "prototypes", dt)
    with jax.enable_x64(True):
        return _anneal_init(
            jnp.asarray(problem.X, dt), jnp.asarray(problem.classes), jnp.asarray(m0, dt),
            jnp.asarray(t_cls), jnp.asarray(t_tot), jnp.float64(lam_vq), n_classes=problem.n_classes,
            move=move, use_vq=lam_vq > 0, trace_len=trace_points + 1)


def dc_anneal_step(rng_key, state: DCAnnealState, X, classes, jump_std, *, n_iter: int,
                   block: int = 1, move: str = "all") -> tuple[DCAnnealState, DCAnnealInfo]:
    r"""One step of SA MAP: ``block`` Metropolis proposals of the schedule of ``n_iter``.

    Proposal ``s`` (counted over the whole schedule, from ``state.n_iter``) has
    temperature :math:`T_s = 1 - 0.9\, s / (S - 1)` and jump
    :math:`arepsilon \sim N(0, \sqrt{T_s}\, \sigma_{SA}^2 I)` (Kaski et al. 2005, §3.1);
    proposals past the schedule's end are not run.  The random numbers of the step are
    drawn in bulk from ``rng_key``.  :func:`dc_anneal` is this step in a
    ``lax.while_loop`` from :func:`init_dc_anneal_state`, step ``b`` (from 0) with key
    ``fold_in(k_run, b)`` (``k_run`` the second half of ``split(rng_key)``), until
    ``converged``; stepping by hand reproduces it exactly.

    Parameters
    ----------
    rng_key : jax key or int
    state : DCAnnealState
    X : array_like, shape (n, d)
        The data the state was made from.
    classes : array_like of int, shape (n,)
    jump_std : float
        :math:`\sigma_{SA}`.
    n_iter : int
        The schedule's length ``S`` (proposals).
    block : int, default 1
        Proposals per step (:func:`dc_anneal`: ``ceil(S / trace_points)``).
    move : {"all", "one"}, default "all"
        As the state was made.

    Returns
    -------
    state : DCAnnealState
    info : DCAnnealInfo

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 100)
    >>> import jax
    >>> state = init_dc_anneal_state(X, c, X[:3], move="one", trace_points=5)
    >>> for b in range(5):
    ...     state, info = dc_anneal_step(jax.random.fold_in(jax.random.key(0), b), state, X, c,
    ...                                  0.3, n_iter=50, block=10, move="one")
    >>> int(state.n_iter), bool(state.converged), len(state.objective_trace)
    (50, True, 6)
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    V.check_rows_match(X, "X", state.labels)
    V.check_kernel_ids(classes, "classes", state.counts.shape[1])
    _check_move(move)
    block = V.check_int(block, "block", minimum=1)
    n_iter = V.check_int(n_iter, "n_iter", minimum=1)
    V.check_point_range(X, "X", state.prototypes.dtype)
    with jax.enable_x64(True):
        key = V.as_rng_key(rng_key)
        dt = state.prototypes.dtype
        return _anneal_step_jit(key, state, jnp.asarray(X, dt), jnp.asarray(classes, jnp.int32),
                                jnp.asarray(jump_std, dt), jnp.asarray(n_iter, jnp.int32), move=move,
                                block=block, use_vq=bool(state.lam_vq > 0))


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
        returned state; ``n_iter`` the proposals run (``S``) and ``converged`` True
        once the schedule is complete (annealing has no convergence test).

    Raises
    ------
    ValueError, TypeError
        As :func:`~bayesclust.inference.discriminative.dc_map.dc_map`; ``jump_std <= 0``; an unknown ``move``.

    Notes
    -----
    One jitted :func:`jax.lax.while_loop` over :func:`dc_anneal_step` from
    :func:`init_dc_anneal_state`, a step being a :func:`jax.lax.fori_loop` over a block
    of proposals whose random numbers are drawn in bulk.  The
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
    _check_move(move)
    key = V.as_rng_key(rng_key)
    k_init, k_run = jax.random.split(key)
    m0 = check_init(k_init, problem.X, K, init)

    t_cls, t_tot = _tables(n, C, n0, lam_eq)
    block, n_blocks = blocks(n_iter, trace_points)
    # Scale-free: the unit frame, jump_std and lam_vq with it (the energy is unchanged).
    unit, frame = unit_frame(problem, centred=False)
    jump_u = frame.width(jump_std, "jump_std")
    vq_u = frame.weight(lam_vq, "lam_vq", n)
    dt = work_dtype(unit.X)  # distances: the usual precision; the energy: float64
    with jax.enable_x64(True):
        Xj, cj = jnp.asarray(unit.X, dt), jnp.asarray(problem.classes)
        state = _anneal_init(Xj, cj, jnp.asarray(frame.to_unit(m0), dt), jnp.asarray(t_cls),
                             jnp.asarray(t_tot), jnp.float64(vq_u), n_classes=C, move=move,
                             use_vq=lam_vq > 0, trace_len=n_blocks + 1)
        state = _anneal_run(k_run, state, Xj, cj, dt.type(jump_u), jnp.int32(n_iter), move=move,
                            block=block, use_vq=lam_vq > 0)
        state = jax.device_get(state)
        trace = np.asarray(state.objective_trace, np.float64)
    final_e, best_e = float(state.objective), float(state.best_objective)
    m = np.asarray(state.best_prototypes if return_best else state.prototypes)
    return finish(
        unit, m, n0, frame,
        objective=best_e if return_best else final_e,
        objective_trace=trace,
        n_iter=int(state.n_iter),
        converged=bool(state.converged),
        smooth_std=None,
        method="sa",
        info={"init_prototypes": m0, "accept_rate": int(state.n_accepted) / n_iter,
              "best_objective": best_e, "final_objective": final_e,
              "final_counts": np.asarray(state.counts, np.int64),
              "final_prototypes": frame.from_unit(state.prototypes),
              "returned": "best" if return_best else "final", "move": move,
              "jump_std": jump_std},
    )
