"""Unsupervised learning of finite Gaussian mixtures (Figueiredo & Jain 2002): CEM^2 with the MML criterion.

Gaussian mixture decomposition (GMD) starts with many full-covariance components and lets the
minimum message length (MML) criterion remove the ones the data do not pay for: a
component-wise EM whose mixing-weight update annihilates every component supported by at most
half a component's number of parameters in points, then forced annihilations of the
smallest component down to ``k_min``; the configuration of smallest message length wins.
It is the initialisation step of the GMDID clustering method (Aidos & Fred 2012, §3: "GMD^rand"
starts from random data points, "GMD^init" from k-means centroids and random data points).

The Gaussian log-densities are :func:`bayesclust.kernels.gaussian_logpdf_full`, the
responsibilities :func:`bayesclust.kernels.log_responsibilities`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import (
    PRECISION,
    compact_labels,
    gaussian_logpdf_full,
    log_responsibilities,
    padded_rows,
    sum_rows,
)
from .._driver import pow2_at_least, run_in_pieces
from ._common import _n_params

__all__ = [
    "gmd",
    "GMDResult",
    "GMDState",
    "GMDInfo",
    "init_gmd_state",
    "gmd_step",
    "message_length",
    "INIT_VARIANCE_FRACTION",
    "REG_COVAR",
]

#: Initial covariances ``sigma2 I``: ``sigma2`` is this fraction of the mean per-feature
#: variance of the data, ``trace(cov(X)) / d`` (Figueiredo & Jain 2002, §5;
#: docs/deviations.md#gmd-initial-covariance).
INIT_VARIANCE_FRACTION = 0.1
#: Default ``reg_covar``: every covariance estimate gets ``reg_covar * trace(cov(X)) / d`` added
#: to its diagonal, so a component on a flat or repeated set of points stays positive definite
#: (docs/deviations.md#gmd-regularisation).
REG_COVAR = 1e-6
#: Entries of the driver's trace buffer: a longer run records its trace in pieces of
#: ``_TRACE_LEN - 1`` steps (a ``max_iter``-sized buffer would compile once per ``max_iter``).
_TRACE_LEN = 256
#: Rows per partial sum of the covariance scatter (as :func:`bayesclust.kernels.sum_rows`).
_CHUNK = 128
#: Jitter, relative to the mean variance of a component, of the fallback Cholesky factor.
_FALLBACK_JITTER = 1e-4


class GMDResult(NamedTuple):
    """Result of :func:`gmd`.

    Attributes
    ----------
    labels : ndarray of int32, shape (n,)
        MAP component of every point under the returned mixture,
        ``argmax_m alpha_m N(x_i | mu_m, Sigma_m)``, numbered ``0..n_components-1`` as the
        components below (a component may win no point).
    weights : ndarray, shape (n_components,)
        Mixing probabilities ``alpha_m`` (positive, summing to one).
    centers : ndarray, shape (n_components, d)
        The components' means ``mu_m``.
    covariances : ndarray, shape (n_components, d, d)
        Full covariances, regularisation included (what the likelihood used).
    n_components : int
    objective : float
        The minimised message length ``L(theta, X)`` of the returned mixture (nats; see
        :func:`gmd` and :func:`message_length`), in the data's units.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        ``L`` of the initial mixture and after every step (a CEM^2 sweep or a forced
        annihilation).  Within a run of sweeps at a fixed number of components it does not
        increase (up to float rounding); it jumps up at a forced annihilation.
    n_iter : int
        Steps run: CEM^2 sweeps and forced annihilations.
    converged : bool
        The run ended as the algorithm does (the last sweep met the stopping test with at
        most ``k_min`` components left), not at ``max_iter``.
    n_components_trace : ndarray of int32, shape (n_iter + 1,)
        Components alive after each entry of ``objective_trace``.
    """

    labels: np.ndarray
    weights: np.ndarray
    centers: np.ndarray
    covariances: np.ndarray
    n_components: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_components_trace: np.ndarray


class GMDState(NamedTuple):
    """State of a GMD run between two steps.

    Made by :func:`init_gmd_state`, advanced by :func:`gmd_step`; :func:`gmd` loops over
    the step.  Components live in a buffer of ``K = k_max`` slots with an ``active`` mask.

    Attributes
    ----------
    means : array, shape (K, d)
    covariances : array, shape (K, d, d)
        Regularised covariance estimates (inactive slots: their last value).
    chols : array, shape (K, d, d)
        Lower Cholesky factors of ``covariances``.
    weights : array, shape (K,)
        Mixing probabilities; 0 exactly on inactive slots.
    active : bool array, shape (K,)
    log_dens : array, shape (n, K)
        ``log N(x_i | mu_m, Sigma_m)`` of every point and slot (the paper's ``u_m^(i)``, in
        logs), kept up to date component by component.
    labels : int32 array, shape (n,)
        MAP slot of every point under the state's mixture.
    n_components : int32 scalar
        Active slots (the paper's ``k_nz``).
    objective : scalar
        Message length ``L`` of this state (minimised; :func:`message_length`).
    objective_trace : array, shape (T,)
        ``L`` after initialisation and after steps ``1..n_iter`` in entries ``0..n_iter``,
        NaN after them; ``T``, the smallest power of two ``>= max_iter + 1``
        (``max_iter`` given to the init), bounds what is recorded.
    n_components_trace : int32 array, shape (T,)
        ``n_components`` after the same steps (0 after them).
    n_iter : int32 scalar
        Steps done.
    phase_converged : bool scalar
        The last sweep met the stopping test with more than ``k_min`` components: the next
        step annihilates the smallest one.
    converged : bool scalar
        The run is over: the last sweep met the stopping test with at most ``k_min``
        components.  A step on a converged state returns it unchanged.
    best_means, best_covariances, best_chols, best_weights, best_active :
        The mixture of smallest ``L`` among the states at which a sweep met the stopping
        test (shapes as above).
    best_objective : scalar
        Its ``L`` (``+inf`` before the first such state).
    ridge : scalar
        Added to the diagonal of every covariance estimate: ``reg_covar`` times the mean
        per-feature variance of the data.
    """

    means: jax.Array
    covariances: jax.Array
    chols: jax.Array
    weights: jax.Array
    active: jax.Array
    log_dens: jax.Array
    labels: jax.Array
    n_components: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_components_trace: jax.Array
    n_iter: jax.Array
    phase_converged: jax.Array
    converged: jax.Array
    best_means: jax.Array
    best_covariances: jax.Array
    best_chols: jax.Array
    best_weights: jax.Array
    best_active: jax.Array
    best_objective: jax.Array
    ridge: jax.Array


class GMDInfo(NamedTuple):
    """Diagnostics of one :func:`gmd_step`.

    Attributes
    ----------
    objective : scalar
        Message length of the returned state.
    changed : bool scalar
        The step changed the MAP partition or the number of components (False on a
        converged state).
    n_components : int32 scalar
        Components alive after the step.
    annihilated : int32 scalar
        Components the step removed (by the MML weight update or by force).
    """

    objective: jax.Array
    changed: jax.Array
    n_components: jax.Array
    annihilated: jax.Array


# --------------------------------------------------------------------------- numerics


def _weighted_scatter(r, D):
    """``sum_i r_i D_i D_i^T``, shape (d, d), in an order trailing zero rows cannot change.

    Partial sums over fixed blocks of 128 consecutive rows (one small matrix product each),
    then :func:`bayesclust.kernels.sum_rows` over the blocks: ``O(n d)`` memory, never an
    ``(n, d, d)`` array.
    """
    n, d = D.shape
    pad = -n % _CHUNK
    rD = jnp.pad(r[:, None] * D, ((0, pad), (0, 0))).reshape(-1, _CHUNK, d)
    Dp = jnp.pad(D, ((0, pad), (0, 0))).reshape(-1, _CHUNK, d)
    return sum_rows(jnp.einsum("cid,cie->cde", rD, Dp, precision=PRECISION))


def _factor(cov, d):
    """``(cov, chol)``: the Cholesky factor, or, where rounding made ``cov`` indefinite,
    the factor of ``cov`` plus ``_FALLBACK_JITTER`` times its mean variance (and that matrix)."""
    chol = jnp.linalg.cholesky(cov)
    ok = jnp.all(jnp.isfinite(chol))
    bumped = cov + (_FALLBACK_JITTER * jnp.trace(cov) / d) * jnp.eye(d, dtype=cov.dtype)
    chol2 = jnp.linalg.cholesky(bumped)
    return jnp.where(ok, cov, bumped), jnp.where(ok, chol, chol2)


def _log_weights(weights, active):
    return jnp.where(active, jnp.log(jnp.where(active, weights, 1.0)), -jnp.inf)


def _evaluate(weights, active, log_dens, w, n, n_par):
    """Message length (Figueiredo & Jain 2002, §3) and MAP slots of a mixture."""
    joint = log_dens + _log_weights(weights, active)[None, :]
    ll_i = jax.scipy.special.logsumexp(joint, axis=1)
    ll = sum_rows(jnp.where(w > 0, w * ll_i, 0.0))
    k = jnp.sum(active).astype(ll.dtype)
    code = jnp.sum(jnp.where(active, jnp.log(n * jnp.where(active, weights, 1.0) / 12.0), 0.0))
    L = 0.5 * n_par * code + 0.5 * k * jnp.log(n / 12.0) + 0.5 * k * (n_par + 1.0) - ll
    return L, jnp.argmax(joint, axis=1).astype(jnp.int32)


def message_length(X, weights, means, covariances):
    r"""The MML message length of a Gaussian mixture (Figueiredo & Jain 2002, §3), a scalar.

    .. math::

        L(\theta, X) = \frac{N}{2} \sum_{m: \alpha_m > 0} \log\frac{n \alpha_m}{12}
            + \frac{k_{nz}}{2} \log\frac{n}{12} + \frac{k_{nz} (N + 1)}{2}
            - \log p(X \mid \theta),

    ``N = d + d (d + 1) / 2`` parameters per component, ``k_nz`` components of positive
    weight.  Natural logarithms (nats).

    Parameters
    ----------
    X : array, shape (n, d)
    weights : array, shape (k,)
        Mixing probabilities; components of weight 0 are left out.
    means : array, shape (k, d)
    covariances : array, shape (k, d, d)
        Positive definite on the components of positive weight.

    Returns
    -------
    scalar array

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> L = message_length(X, np.array([1.0]), np.array([[1.0]]), np.array([[[2 / 3]]]))
    >>> round(float(L), 3)  # log(3/12) + log(3/12) / 2 + 3/2 - log p, log p = -3.649
    3.069
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    weights = V.check_kernel_array(weights, "weights", ndim=1, min_rows=1)
    means = V.check_kernel_array(means, "means", ndim=2)
    covariances = V.check_kernel_array(covariances, "covariances", ndim=3)
    K, d = np.shape(weights)[0], np.shape(X)[1]
    if tuple(np.shape(means)) != (K, d):
        raise ValueError(f"means must have shape (k, d) = ({K}, {d}) (one row per weight, the "
                         f"columns of X), got {tuple(np.shape(means))}")
    if tuple(np.shape(covariances)) != (K, d, d):
        raise ValueError(f"covariances must have shape (k, d, d) = ({K}, {d}, {d}), got "
                         f"{tuple(np.shape(covariances))}")
    X = jnp.asarray(X)
    weights = jnp.asarray(weights, X.dtype)
    active = weights > 0
    d = X.shape[1]
    eye = jnp.eye(d, dtype=X.dtype)
    chols = jnp.linalg.cholesky(jnp.where(active[:, None, None], jnp.asarray(covariances, X.dtype), eye))
    log_dens = gaussian_logpdf_full(X, jnp.asarray(means, X.dtype), chols)
    w = jnp.ones(X.shape[0], X.dtype)
    return _evaluate(weights, active, log_dens, w, sum_rows(w), _n_params(d))[0]


# --------------------------------------------------------------------------- the step


def _sweep(s: GMDState, X, w, n, n_par):
    """One CEM^2 sweep: every active component in slot order, the MML weight update."""
    K, d = s.means.shape
    eye = jnp.eye(d, dtype=X.dtype)

    def update(m, c):
        means, covs, chols, weights, active, log_dens = c

        def visit():
            # E-step with the current parameters of every component.
            resp = jnp.exp(log_responsibilities(_log_weights(weights, active), log_dens))
            totals = sum_rows(w[:, None] * resp)
            r = w * resp[:, m]
            total = totals[m]
            # The MML M-step of the weight (annihilates a component with total <= N/2),
            # then the renormalisation (docs/deviations.md#gmd-weight-update).
            support = jnp.where(active, jnp.maximum(totals - 0.5 * n_par, 0.0), 0.0)
            norm = jnp.sum(support)
            a = jnp.where(norm > 0, support[m] / jnp.where(norm > 0, norm, 1.0), 0.0)
            new_w = weights.at[m].set(a)
            new_w = new_w / jnp.sum(new_w)
            alive = a > 0
            safe = jnp.where(total > 0, total, 1.0)
            mu = sum_rows(r[:, None] * X) / safe
            S = _weighted_scatter(r, X - mu) / safe
            cov, chol = _factor(0.5 * (S + S.T) + s.ridge * eye, d)
            col = gaussian_logpdf_full(X, mu[None], chol[None])[:, 0]
            return (
                jnp.where(alive, means.at[m].set(mu), means),
                jnp.where(alive, covs.at[m].set(cov), covs),
                jnp.where(alive, chols.at[m].set(chol), chols),
                new_w,
                active.at[m].set(alive),
                jnp.where(alive, log_dens.at[:, m].set(col), log_dens),
            )

        return lax.cond(c[4][m], visit, lambda: c)

    return lax.fori_loop(0, K, update, (s.means, s.covariances, s.chols, s.weights, s.active, s.log_dens))


def _step(s: GMDState, X, w, k_min, tol):
    """:func:`gmd_step` on prepared arguments."""
    d = X.shape[1]
    n = sum_rows(w)
    n_par = _n_params(d)
    it = s.n_iter + 1

    def advanced(means, covs, chols, weights, active, log_dens, phase_done, L, labels):
        k = jnp.sum(active, dtype=jnp.int32)
        finished = phase_done & (k <= k_min)
        better = phase_done & (L <= s.best_objective)

        def pick(new, old):
            return jnp.where(better, new, old)

        return s._replace(
            means=means, covariances=covs, chols=chols, weights=weights, active=active,
            log_dens=log_dens, labels=labels, n_components=k, objective=L,
            objective_trace=s.objective_trace.at[it].set(L),
            n_components_trace=s.n_components_trace.at[it].set(k), n_iter=it,
            phase_converged=phase_done & ~finished, converged=finished,
            best_means=pick(means, s.best_means), best_covariances=pick(covs, s.best_covariances),
            best_chols=pick(chols, s.best_chols), best_weights=pick(weights, s.best_weights),
            best_active=pick(active, s.best_active), best_objective=pick(L, s.best_objective),
        )

    def sweep():
        means, covs, chols, weights, active, log_dens = _sweep(s, X, w, n, n_par)
        L, labels = _evaluate(weights, active, log_dens, w, n, n_par)
        # The relative change of L, in absolute value (docs/deviations.md#gmd-stopping-test);
        # relative to |L| with no absolute floor.
        done = jnp.abs(s.objective - L) < tol * jnp.abs(s.objective)
        return advanced(means, covs, chols, weights, active, log_dens, done, L, labels)

    def annihilate():
        m = jnp.argmin(jnp.where(s.active, s.weights, jnp.inf))
        active = s.active.at[m].set(False)
        weights = jnp.where(active, s.weights, 0.0)
        weights = weights / jnp.sum(weights)
        L, labels = _evaluate(weights, active, s.log_dens, w, n, n_par)
        return advanced(s.means, s.covariances, s.chols, weights, active, s.log_dens,
                        jnp.asarray(False), L, labels)

    branch = jnp.where(s.converged, 0, jnp.where(s.phase_converged, 1, 2))
    out = lax.switch(branch, [lambda: s, annihilate, sweep])
    moved = jnp.any((out.labels != s.labels) & (w > 0))
    changed = ~s.converged & (moved | (out.n_components != s.n_components))
    return out, GMDInfo(out.objective, changed, out.n_components, s.n_components - out.n_components)


def gmd_step(state: GMDState, X, *, k_min, tol=1e-5, sample_weight=None) -> tuple[GMDState, GMDInfo]:
    r"""One step of GMD: a CEM^2 sweep with its stopping test, or a forced annihilation.

    A **sweep** visits the active components in slot order (Figueiredo & Jain 2002, §4, the
    component-wise EM "CEM^2").  For component ``m``: the responsibilities
    ``w_im = alpha_m u_im / sum_j alpha_j u_ij`` of every component from the current
    parameters (log-sum-exp); the mean and covariance of ``m`` from ``w_im`` (the covariance
    plus ``ridge I``); its weight, then all weights renormalised,

    .. math::

        \alpha_m \leftarrow \frac{\max\{0, \sum_i w_{im} - N/2\}}
            {\sum_j \max\{0, \sum_i w_{ij} - N/2\}}, \qquad
        \alpha \leftarrow \alpha / \textstyle\sum_j \alpha_j
        \qquad (N = d + d (d + 1) / 2);

    if ``alpha_m = 0`` the component is annihilated, else its column ``u_m`` is recomputed
    before the next component is visited.  Then the message length ``L``
    (:func:`message_length`) is evaluated and the phase stops when
    ``|L_old - L| < tol |L_old|``.  When the phase stops, the state is kept as the best if
    its ``L`` is the smallest so far; with more than ``k_min`` components left the **next**
    step annihilates the component of smallest weight (and records the ``L`` of what
    remains, which the next sweep's test compares against); with at most ``k_min`` the run
    is over (``converged``).

    A sweep that annihilates nothing never increases ``L`` (up to rounding and the
    ``ridge``, which the M-step of the covariance adds): each component's update is a
    generalised EM step for ``-L`` at a fixed number of components.

    The forced annihilation is a step of its own so that every step records exactly one
    entry of the trace.  :func:`gmd` is this step in a ``lax.while_loop`` from
    :func:`init_gmd_state`; stepping by hand on the same data reproduces it.  Works eagerly
    and under ``jax.jit``; concrete arguments are checked (traced ones are the compiled
    caller's to check).

    Parameters
    ----------
    state : GMDState
    X : array, shape (n, d)
        The data the state was made from.  :func:`gmd` works on ``(X - mean) * 2**-e``
        (``e`` puts the largest centred value in [0.5, 1)) with rows padded by zero-weight
        rows; stepping on that array reproduces it.
    k_min : int scalar
        Fewest components the forced annihilations go down to.
    tol : float scalar, default 1e-5
        Relative tolerance of the stopping test.
    sample_weight : array, shape (n,), optional
        Non-negative row weights (default 1): ``n = sum_i w_i`` and every sum over rows is
        weighted, so integer weights act as repeated rows; rows of weight 0 are padding.

    Returns
    -------
    state : GMDState
    info : GMDInfo

    Raises
    ------
    ValueError, TypeError
        Naming ``X`` (not finite, not one row per state label or not the means' columns,
        squared distances beyond the state's dtype), ``k_min`` (not a positive integer),
        ``tol`` (negative or not a number) or ``sample_weight`` (not one finite
        non-negative weight per row).

    Examples
    --------
    >>> import jax
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.3, (40, 2)), rng.normal(4, 0.3, (40, 2))])
    >>> state = init_gmd_state(X, X[[0, 1, 40, 41]])
    >>> step = jax.jit(gmd_step)  # one compile; stepping eagerly gives the same states
    >>> while not state.converged:
    ...     state, info = step(state, X, k_min=1)
    >>> int(state.n_components), int(state.best_active.sum())
    (1, 2)
    """
    X = V.check_step_data(X, state.labels, state.means, state.means.dtype)
    sample_weight = V.check_step_weights(sample_weight, X)
    k_min = V.check_step_scalar(k_min, "k_min", minimum=1, integer=True)
    tol = V.check_step_scalar(tol, "tol")
    X = jnp.asarray(X)
    w = _row_weights(sample_weight, X)
    return _step(state, X, w, jnp.asarray(k_min, jnp.int32), jnp.asarray(tol, X.dtype))


def _row_weights(sample_weight, X):
    if sample_weight is None:
        return jnp.ones(X.shape[0], X.dtype)
    return jnp.asarray(sample_weight, X.dtype)


def _initial_state(X, w, means, reg_covar, trace_len):
    K, d = means.shape
    n = sum_rows(w)
    mean = sum_rows(w[:, None] * X) / n
    var = jnp.sum(sum_rows(w[:, None] * jnp.square(X - mean))) / (n * d)
    reg = reg_covar * var
    eye = jnp.eye(d, dtype=X.dtype)
    covs = jnp.broadcast_to((INIT_VARIANCE_FRACTION * var + reg) * eye, (K, d, d))
    chols = jnp.broadcast_to(jnp.sqrt(INIT_VARIANCE_FRACTION * var + reg) * eye, (K, d, d))
    weights = jnp.full(K, 1.0 / K, X.dtype)
    active = jnp.ones(K, bool)
    log_dens = gaussian_logpdf_full(X, means, chols)
    L, labels = _evaluate(weights, active, log_dens, w, n, _n_params(d))
    return GMDState(
        means=means, covariances=covs, chols=chols, weights=weights, active=active,
        log_dens=log_dens, labels=labels, n_components=jnp.asarray(K, jnp.int32), objective=L,
        objective_trace=jnp.full(trace_len, jnp.nan, X.dtype).at[0].set(L),
        n_components_trace=jnp.zeros(trace_len, jnp.int32).at[0].set(K),
        n_iter=jnp.asarray(0, jnp.int32), phase_converged=jnp.asarray(False),
        converged=jnp.asarray(False), best_means=means, best_covariances=covs, best_chols=chols,
        best_weights=weights, best_active=active, best_objective=jnp.asarray(jnp.inf, X.dtype),
        ridge=reg,
    )


_initial = jax.jit(_initial_state, static_argnums=(4,))


def init_gmd_state(X, means, *, reg_covar=REG_COVAR, sample_weight=None,
                   max_iter: int = 100) -> GMDState:
    """The state GMD starts from: ``k_max`` components at ``means`` (Figueiredo & Jain 2002, §5).

    Every component gets weight ``1 / k_max`` and covariance ``(sigma2 + ridge) I`` with
    ``sigma2 = INIT_VARIANCE_FRACTION * v`` (docs/deviations.md#gmd-initial-covariance) and
    ``ridge = reg_covar * v``, ``v = trace(cov(X)) / d`` the mean per-feature variance of the
    data (divisor ``n``; weighted with ``sample_weight``).

    Parameters
    ----------
    X : array, shape (n, d)
        Data (see :func:`gmd_step` for the frame :func:`gmd` uses).
    means : array, shape (k_max, d)
        Initial means; ``k_max`` is the size of the component buffer (a shape).
    reg_covar : float, default REG_COVAR (1e-6)
        The ridge relative to ``v``.
    sample_weight : array, shape (n,), optional
        Non-negative row weights (default 1).
    max_iter : int, default 100
        Steps the trace buffers have room for.

    Returns
    -------
    GMDState
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    means = V.check_kernel_array(means, "means", ndim=2, min_rows=1)
    if np.shape(means)[1] != np.shape(X)[1]:
        raise ValueError(f"means must have the {np.shape(X)[1]} columns of X, got shape "
                         f"{tuple(np.shape(means))}")
    X = jnp.asarray(X)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    w = _row_weights(sample_weight, X)
    return _initial(X, w, jnp.asarray(means, X.dtype), jnp.asarray(reg_covar, X.dtype), trace_len)


def _loop(X, w, k_min, tol, max_steps, state: GMDState):
    def cond(s: GMDState):
        return (s.n_iter < max_steps) & ~s.converged

    def body(s: GMDState):
        return _step(s, X, w, k_min, tol)[0]

    return lax.while_loop(cond, body, state)


_run = jax.jit(_loop)


@jax.jit
def _final(X, w, s: GMDState):
    """The returned mixture (the best one; the current one too when the run was cut short)
    and its MAP slots."""
    use_current = ~s.converged & (s.objective <= s.best_objective)

    def pick(cur, best):
        return jnp.where(use_current, cur, best)

    weights, active = pick(s.weights, s.best_weights), pick(s.active, s.best_active)
    means, covs, chols = pick(s.means, s.best_means), pick(s.covariances, s.best_covariances), pick(
        s.chols, s.best_chols)
    L = pick(s.objective, s.best_objective)
    log_dens = gaussian_logpdf_full(X, means, chols)
    joint = log_dens + _log_weights(weights, active)[None, :]
    labels, _, k = compact_labels(jnp.argmax(joint, axis=1), active)
    return labels, weights, means, covs, active, k, L


#: The driver's row padding (a name of its own: the tests switch it off).
_pad_to = padded_rows


# --------------------------------------------------------------------------- the driver


def _initial_means(rng_key, X, k_max, init, n_kmeans):
    """Initial means in the data's frame, shape (k_max, d)."""
    n, d = X.shape
    if isinstance(init, str):
        if init not in ("random", "kmeans"):
            raise ValueError(f"init must be 'random', 'kmeans' or an array of means, got {init!r}")
        n_km = 0
        if init == "kmeans":
            n_km = V.check_int(n_kmeans, "n_kmeans", minimum=1)
            if n_km > k_max:
                raise ValueError(f"n_kmeans={n_km} must be <= k_max={k_max}")
        elif n_kmeans is not None:
            raise ValueError(f"n_kmeans is used only with init='kmeans', got init={init!r}")
        k_rows, k_km = jax.random.split(V.as_rng_key(rng_key))
        rows = V.as_numpy_rng(k_rows).choice(n, k_max - n_km, replace=False)
        parts = [X[np.sort(rows)]]
        if n_km:
            from ..hard.kmeans import kmeans

            parts.insert(0, np.asarray(kmeans(k_km, X, n_km).centers, X.dtype))
        return np.concatenate(parts)
    if n_kmeans is not None:
        raise ValueError("n_kmeans is used only with init='kmeans', got an array of means")
    M = V.check_array(init, "init")
    if M.shape != (k_max, d):
        raise ValueError(f"init must have shape (k_max, d) = ({k_max}, {d}), got {M.shape}")
    return M.astype(X.dtype)


def gmd(
    rng_key,
    X,
    k_min: int,
    k_max: int,
    *,
    init="random",
    n_kmeans: int | None = None,
    reg_covar: float = REG_COVAR,
    tol: float = 1e-5,
    max_iter: int = 10_000,
    pad_rows: int | None = None,
) -> GMDResult:
    r"""Unsupervised learning of a full-covariance Gaussian mixture (Figueiredo & Jain 2002).

    Minimises the minimum message length (MML) criterion (Figueiredo & Jain 2002, §3)

    .. math::

        L(\theta, X) = \frac{N}{2} \sum_{m: \alpha_m > 0} \log\frac{n \alpha_m}{12}
            + \frac{k_{nz}}{2} \log\frac{n}{12} + \frac{k_{nz} (N + 1)}{2}
            - \log p(X \mid \theta),

    ``N = d + d (d + 1) / 2`` parameters per component and ``k_nz`` components alive, by
    their algorithm (§4): start with ``k_max`` components; run the component-wise EM
    "CEM^2" (:func:`gmd_step`), whose weight update annihilates every component supported
    by at most ``N / 2`` points' worth of responsibility, until the relative change of
    ``L`` falls below ``tol``; record ``L``; while more than ``k_min`` components are left,
    annihilate the one of smallest weight and run CEM^2 again.  The mixture of smallest
    recorded ``L`` is returned.

    Parameters
    ----------
    rng_key : jax.random key or int
        Key of the initialisation (unused when ``init`` is an array).
    X : array_like, shape (n, d)
        float64 input is computed in float64 when ``jax_enable_x64`` is on, else float32.
        More than ``N / 2`` rows, not all equal.
    k_min : int
        ``>= 1``: fewest components the forced annihilations go down to (the MML weight
        update may still end below it, as in the paper).
    k_max : int
        ``k_min <= k_max <= n``: initial components (the buffer's size, a shape: each
        ``k_max`` compiles once).
    init : {"random", "kmeans"} or array_like of shape (k_max, d), default "random"
        ``"random"``: the means at ``k_max`` distinct data points drawn uniformly (Aidos &
        Fred's "GMD^rand"); ``"kmeans"``: ``n_kmeans`` k-means centroids
        (:func:`bayesclust.inference.hard.kmeans.kmeans`, one random start) and ``k_max -
        n_kmeans`` distinct random data points ("GMD^init";
        docs/deviations.md#gmd-kmeans-init); or the initial means.
    n_kmeans : int, optional
        With ``init="kmeans"`` only: the number of k-means centroids, ``1..k_max``
        (default ``k_min``).
    reg_covar : float, default 1e-6
        Added to the diagonal of every covariance estimate, **relative** to the mean
        per-feature variance of ``X`` (docs/deviations.md#gmd-regularisation).  Larger
        values make small, tight components dearer (see Notes).
    tol : float, default 1e-5
        ``> 0``: relative tolerance of the stopping test ``|L_old - L| < tol |L_old|``
        (docs/deviations.md#gmd-stopping-test), evaluated in the unit frame (Notes).
    max_iter : int, default 10000
        Most steps (sweeps and forced annihilations) in total.
    pad_rows : int, optional
        ``>= n``: the row count the compiled EM runs on, ``X`` followed by zero-weight rows
        that change no statistic (default :func:`bayesclust.kernels.padded_rows` ``(n)``).
        A caller that fits many subsets whose sizes move together (MAP-DID's classes) can
        pass a coarser bucket so that they share one compiled program; the fit is the
        default's up to the rounding of its sums (the same as a rule).

    Returns
    -------
    GMDResult
        ``labels, weights, centers, covariances, n_components, objective,
        objective_trace, n_iter, converged, n_components_trace``; ``objective`` and its
        trace are the minimised message length.

    Notes
    -----
    **Initial covariances** ``sigma2 I`` with ``sigma2`` a tenth of the mean per-feature
    variance (docs/deviations.md#gmd-initial-covariance), weights ``1 / k_max``.  **The
    weight update** is Figueiredo & Jain's MML M-step for one component followed by the
    renormalisation of all weights (docs/deviations.md#gmd-weight-update); a sweep that
    annihilates nothing never increases ``L``.  **After a forced annihilation** the next
    sweep's stopping test compares against the ``L`` of the mixture that remains.

    **Small components are cheap.**  The criterion's first term is negative for a
    component with ``n alpha_m < 12``, so a tight clump of a few points (random clumps of
    Gaussian samples, points on a line, repeated values) can pay for its own component:
    on three 2-D Gaussian blobs of 100 points each, GMD ends with 3 to 7 components, each
    time with a smaller ``L`` than the best 3-component fit, and on Iris with 3 to 7
    (docs/deviations.md#gmd-iris).  ``reg_covar = 1e-2`` gives 3 on such blobs.

    **Not maximum likelihood at a fixed k.**  The MML weight update shrinks every weight by
    ``N / 2`` points' worth of support, which moves the fit away from the likelihood's
    maximum where ``N`` is not small against a component's points: on Iris at
    ``k_min = k_max = 3`` a component of about 15 points gets weight .02-.04 where maximum
    likelihood gives .07-.11, and the log-likelihood is about 2% below scikit-learn's from the
    same start (a component of at most 7 points' support dies); on 10,000 x 5 data at
    ``k = 5`` it is within 0.1% whenever both end in the same basin (BENCHMARKS.md).

    **Scale.**  The data are centred and multiplied by a power of two ``2**-e`` (exact) so
    that the largest centred value lies in [0.5, 1); the stopping test runs on ``L`` of
    that frame, so ``X * 2**j`` gives the same run bit for bit and any ``X * s`` the same
    run up to the rounding of the test (docs/deviations.md#gmd-scale-free-test).  Means,
    covariances and message lengths are reported in the data's frame
    (``L_X = L_unit + n d e log 2``).

    **Cost.**  A sweep visits up to ``k_max`` components, each with an E-step over all
    ``k_max`` slots: ``O(n k_max (k_max + d^2))`` per sweep, ``O(n (k_max + d))`` memory.
    One jit-compiled ``lax.while_loop``; compiles per shape (rows padded to
    :func:`bayesclust.kernels.padded_rows` with zero-weight rows, ``k_max``, ``d``), never
    per value of ``k_min``, ``reg_covar``, ``tol`` or ``max_iter``.

    References
    ----------
    M. A. T. Figueiredo and A. K. Jain, "Unsupervised learning of finite mixture models",
    IEEE TPAMI 24(3) (2002) 381-396, §3-5.
    H. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for
    d-dimensional data: application in partitional clustering", Pattern Recognition 45
    (2012), §3.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import gmd
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(c, 0.3, (60, 2)) for c in (0.0, 3.0, 6.0)])
    >>> res = gmd(0, X, 1, 10, reg_covar=1e-2)
    >>> res.n_components, np.bincount(res.labels).tolist()
    (3, [60, 60, 60])
    """
    X = V.check_array(X, "X")
    n, d = X.shape
    k_min = V.check_int(k_min, "k_min", minimum=1)
    k_max = V.check_int(k_max, "k_max", minimum=1)
    if k_min > k_max:
        raise ValueError(f"k_min={k_min} must be <= k_max={k_max}")
    if k_max > n:
        raise ValueError(f"k_max={k_max} must be <= the number of rows of X ({n})")
    if n <= _n_params(d) / 2:
        raise ValueError(
            f"X has {n} rows; a full-covariance component in {d} dimensions needs more than "
            f"N/2 = {_n_params(d) / 2:g} rows' support"
        )
    reg_covar = V.check_positive(reg_covar, "reg_covar")
    tol = V.check_positive(tol, "tol")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    n_pad = _pad_to(n) if pad_rows is None else V.check_int(pad_rows, "pad_rows", minimum=n)
    if isinstance(init, str) and init == "kmeans" and n_kmeans is None:
        n_kmeans = k_min
    means0 = _initial_means(rng_key, X, k_max, init, n_kmeans)

    mean = V.centre(X)
    Xs, e = V.to_unit_frame(X, mean, "X")
    if not np.any(Xs != Xs[:1]):
        raise ValueError("X has no spread (all rows are equal): a Gaussian mixture needs a positive variance")
    with np.errstate(over="ignore"):
        M = np.ldexp(means0 - mean.astype(means0.dtype), -e).astype(Xs.dtype)
    if not np.all(np.isfinite(M)):
        raise ValueError("init - mean of X overflows; rescale init and X")
    Xj = jnp.asarray(np.concatenate([Xs, np.zeros((n_pad - n, d), Xs.dtype)]))
    wj = jnp.asarray(np.concatenate([np.ones(n, Xs.dtype), np.zeros(n_pad - n, Xs.dtype)]))
    # host scalars: traced, never a new compile
    k_min_j, tol_j = np.int32(k_min), np.asarray(tol, Xj.dtype)
    state = _initial(Xj, wj, jnp.asarray(M), np.asarray(reg_covar, Xj.dtype), _TRACE_LEN)

    state, traces, done = run_in_pieces(
        state, lambda todo, s: _run(Xj, wj, k_min_j, tol_j, todo, s), max_iter,
        piece=_TRACE_LEN, traces=("objective_trace", "n_components_trace"))
    trace = [traces["objective_trace"].astype(np.float64)]
    ks = [traces["n_components_trace"]]

    labels, weights, means, covs, active, k, L = _final(Xj, wj, state)
    active = np.asarray(active)
    shift = n * d * e * math.log(2.0)  # L of X = L of the unit frame + n d e log 2
    return GMDResult(
        labels=np.asarray(labels)[:n],
        weights=np.asarray(weights)[active],
        centers=(np.ldexp(np.asarray(means, np.float64)[active], e) + mean).astype(Xs.dtype),
        covariances=np.ldexp(np.asarray(covs)[active], 2 * e).astype(Xs.dtype),
        n_components=int(k),
        objective=float(L) + shift,
        objective_trace=np.concatenate(trace) + shift,
        n_iter=done,
        converged=bool(state.converged),
        n_components_trace=np.concatenate(ks).astype(np.int32),
    )
