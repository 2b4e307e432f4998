r"""sDC: the stochastic on-line algorithm of discriminative clustering, with explicit
class distributions.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §2.1 (eqs. 5-6), §7.2.1.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import voronoi_memberships
from ._common import (
    STEPS_PER_CLUSTER,
    DCResult,
    blocks,
    check_init,
    check_problem,
    finish,
    unit_frame,
    work_dtype,
)

__all__ = ["sdc", "SDCState", "SDCInfo", "init_sdc_state", "sdc_step"]


class SDCState(NamedTuple):
    """State of an sDC run (:func:`sdc`) between two steps.

    Made by :func:`init_sdc_state`, advanced by :func:`sdc_step` (a block of on-line
    updates); :func:`sdc` loops over the step.

    Attributes
    ----------
    prototypes : array, shape (K, d)
        The prototypes :math:`m_j`.
    gamma : array, shape (K, C)
        The class distributions' parameters,
        :math:`\\log\\psi_{ji} = \\gamma_{ji} - \\log\\sum_m e^{\\gamma_{jm}}`.
    labels : int32 array, shape (n,)
        The hard Voronoi cell of every point by the distances of the objective's
        memberships (GEMM form, first index on ties).
    objective : scalar, dtype of ``X``
        The maximised smoothed conditional log-likelihood
        :math:`\\sum_x \\sum_j y_j(x) \\log \\psi_{j, c(x)}` of this state.
    objective_trace : array, shape (T,), dtype of ``X``
        ``objective`` after initialisation and after steps ``1..``, NaN after them.
    n_iter : int32 scalar
        On-line steps run.
    converged : bool scalar
        The schedule's ``n_iter`` steps have all been run (sDC runs a fixed schedule
        and has no convergence test).
    """

    prototypes: jax.Array
    gamma: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class SDCInfo(NamedTuple):
    """Diagnostics of one :func:`sdc_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        The step changed the partition (``labels``).
    """

    objective: jax.Array
    changed: jax.Array


def _sdc_objective(m, gamma, X, classes, smooth_std):
    """Smoothed conditional log-likelihood ``sum_x sum_j y_j(x) log psi_{j, c(x)}`` and
    the hard cells of its distances."""
    Y, sq = voronoi_memberships(X, m, smooth_std)
    log_psi = jax.nn.log_softmax(gamma, axis=1)
    return jnp.sum(Y * log_psi[:, classes].T), jnp.argmin(sq, axis=1).astype(jnp.int32)


def _sdc_draws(key, block: int, n: int, dtype):
    """Random numbers of one sDC step of ``block`` updates: sample index (i.i.d. with
    replacement) and two uniforms per update (inverse-CDF draws of ``j`` and ``l``)."""
    k_idx, k_u = jax.random.split(key)
    return (jax.random.randint(k_idx, (block,), 0, n),
            jax.random.uniform(k_u, (block, 2), dtype))


@functools.partial(jax.jit, static_argnames=("n_classes", "trace_len"))
def _sdc_init(X, classes, m0, smooth_std, *, n_classes, trace_len):
    gamma0 = jnp.zeros((m0.shape[0], n_classes), X.dtype)
    obj, labels = _sdc_objective(m0, gamma0, X, classes, smooth_std)
    trace = jnp.full(trace_len, jnp.nan, X.dtype).at[0].set(obj)
    return SDCState(m0, gamma0, labels, obj, trace, jnp.int32(0), jnp.asarray(False))


def _sdc_step(key, st0, X, classes, smooth_std, rate, n_steps, *, block):
    n = X.shape[0]
    K, C = st0.gamma.shape
    fdt = X.dtype
    inv_two_s2 = 1.0 / (2.0 * smooth_std * smooth_std)
    eye = jnp.eye(C, dtype=fdt)
    idx, u = _sdc_draws(key, block, n, fdt)

    def step(s, carry):
        m, gamma = carry
        t = st0.n_iter + s
        alpha = jnp.where(t < n_steps, rate * (1.0 - t.astype(fdt) / n_steps.astype(fdt)), 0.0)
        x, i = X[idx[s]], classes[idx[s]]
        y = jax.nn.softmax(-jnp.sum((x - m) ** 2, axis=1) * inv_two_s2)  # eq. 4, (K,)
        cdf = jnp.cumsum(y)
        j = jnp.minimum(jnp.sum(cdf < u[s, 0] * cdf[-1]), K - 1)  # j, l ~ y independently
        l = jnp.minimum(jnp.sum(cdf < u[s, 1] * cdf[-1]), K - 1)
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

    m, gamma = lax.fori_loop(0, block, step, (st0.prototypes, st0.gamma))
    obj, labels = _sdc_objective(m, gamma, X, classes, smooth_std)
    done = jnp.minimum(st0.n_iter + block, n_steps).astype(jnp.int32)
    b = -(-st0.n_iter // block) + 1  # the steps done, this one included
    st = SDCState(m, gamma, labels, obj, st0.objective_trace.at[b].set(obj), done, done >= n_steps)
    return st, SDCInfo(obj, jnp.any(labels != st0.labels))


_sdc_step_jit = jax.jit(_sdc_step, static_argnames=("block",))


@functools.partial(jax.jit, static_argnames=("block",))
def _sdc_run(key, state, X, classes, smooth_std, rate, n_steps, *, block):
    """The driver's loop: step ``b`` (from 0) uses ``fold_in(key, b)``."""
    def body(st):
        k = jax.random.fold_in(key, st.n_iter // block)
        return _sdc_step(k, st, X, classes, smooth_std, rate, n_steps, block=block)[0]

    return lax.while_loop(lambda st: ~st.converged, body, state)


def init_sdc_state(X, classes, prototypes, smooth_std, *, n_classes: int | None = None,
                   trace_points: int = 100) -> SDCState:
    """The state sDC starts from: the given prototypes, uniform class distributions.

    Parameters
    ----------
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    prototypes : array_like, shape (K, d)
        The initial prototypes (:func:`sdc` draws them from its key's first half, as
        ``info["init_prototypes"]``).
    smooth_std : float
        :math:`\\sigma` of the memberships (> 0).
    n_classes : int, optional
    trace_points : int, default 100
        Steps the ``objective_trace`` buffer has room for (its length is
        ``trace_points + 1``).

    Returns
    -------
    SDCState
    """
    prototypes = V.check_array(prototypes, "prototypes")
    problem = check_problem(X, classes, prototypes.shape[0], n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    m0 = check_init(None, problem.X, problem.n_clusters, prototypes, "prototypes")
    dt = work_dtype(problem.X)
    # The state lives in the data's frame (stepping by hand reproduces the driver on the
    # data it works on): its squared distances must fit the working dtype.
    V.check_point_range(problem.X, "X", dt)
    V.check_point_range(m0, "prototypes", dt)
    return _sdc_init(jnp.asarray(problem.X, dt), jnp.asarray(problem.classes), jnp.asarray(m0, dt),
                     dt.type(smooth_std), n_classes=problem.n_classes, trace_len=trace_points + 1)


def sdc_step(rng_key, state: SDCState, X, classes, smooth_std, *, n_iter: int, rate: float = 0.05,
             block: int = 1) -> tuple[SDCState, SDCInfo]:
    r"""One step of sDC: ``block`` on-line updates of the schedule of ``n_iter`` (eqs. 4-6).

    Update ``t`` (counted over the whole schedule, from ``state.n_iter``) has rate
    :math:`lpha_t = 	ext{rate}\,(1 - t / S)`; updates past the schedule's end are not
    run.  The random numbers of the step are drawn in bulk from ``rng_key``.
    :func:`sdc` is this step in a ``lax.while_loop`` from :func:`init_sdc_state`, step
    ``b`` (from 0) with key ``fold_in(k_run, b)`` (``k_run`` the second half of
    ``split(rng_key)``), until ``converged``; stepping by hand reproduces it exactly.

    Parameters
    ----------
    rng_key : jax key or int
    state : SDCState
    X : array_like, shape (n, d)
        The data the state was made from.
    classes : array_like of int, shape (n,)
    smooth_std : float
    n_iter : int
        The schedule's length ``S`` (on-line steps).
    rate : float, default 0.05
        :math:`lpha_0`.
    block : int, default 1
        Updates per step (:func:`sdc`: ``ceil(S / trace_points)``).

    Returns
    -------
    state : SDCState
    info : SDCInfo

    Examples
    --------
    >>> import jax
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 100)
    >>> state = init_sdc_state(X, c, X[:3], 0.3, trace_points=4)
    >>> for b in range(4):
    ...     state, info = sdc_step(jax.random.fold_in(jax.random.key(0), b), state, X, c, 0.3,
    ...                            n_iter=40, block=10)
    >>> int(state.n_iter), bool(state.converged), len(state.objective_trace)
    (40, True, 5)
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    V.check_rows_match(X, "X", state.labels)
    V.check_kernel_ids(classes, "classes", state.gamma.shape[1])
    block = V.check_int(block, "block", minimum=1)
    n_iter = V.check_int(n_iter, "n_iter", minimum=1)
    dt = state.prototypes.dtype
    V.check_point_range(X, "X", dt)
    return _sdc_step_jit(V.as_rng_key(rng_key), state, jnp.asarray(X, dt),
                         jnp.asarray(classes, jnp.int32), dt.type(smooth_std), dt.type(rate),
                         jnp.int32(n_iter), block=block)


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
        (which the paper discards: only the partition is evaluated); ``n_iter`` the
        steps run (``S``) and ``converged`` True once the schedule is complete (sDC has
        no convergence test).

    Raises
    ------
    ValueError, TypeError
        As :func:`~bayesclust.inference.discriminative.dc_map.dc_map`; ``rate <= 0``.

    Notes
    -----
    Our resolutions of the paper's silences (docs/deviations.md#sdc-schedule): a single linear ramp (the paper's
    "piecewise-linearly" gives no breakpoints), sampling with replacement, both
    adaptations from the pre-step parameters.  One jitted
    :func:`jax.lax.while_loop` over :func:`sdc_step` from :func:`init_sdc_state`, a step
    being a :func:`jax.lax.fori_loop` over a block of updates whose random numbers are
    drawn in bulk (``j, l`` by inverse-CDF lookup).
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
    # Scale-free: the unit frame, smooth_std with it (the objective is unchanged).
    unit, frame = unit_frame(problem, centred=False)
    std_u = frame.width(smooth_std, "smooth_std")
    dt = work_dtype(unit.X)
    Xj, cj = jnp.asarray(unit.X, dt), jnp.asarray(problem.classes)
    state = _sdc_init(Xj, cj, jnp.asarray(frame.to_unit(m0), dt), dt.type(std_u), n_classes=C,
                      trace_len=n_blocks + 1)
    state = _sdc_run(k_run, state, Xj, cj, dt.type(std_u), dt.type(rate), jnp.int32(n_steps),
                     block=block)
    m = np.asarray(state.prototypes)
    psi = np.asarray(jax.nn.softmax(state.gamma, axis=1), np.float64)
    trace = np.asarray(state.objective_trace, np.float64)
    return finish(
        unit, m, n0, frame,
        objective=float(trace[-1]),
        objective_trace=trace,
        n_iter=int(state.n_iter),
        converged=bool(state.converged),
        smooth_std=smooth_std,
        method="sdc",
        info={"init_prototypes": m0, "psi": psi, "rate": rate},
    )
