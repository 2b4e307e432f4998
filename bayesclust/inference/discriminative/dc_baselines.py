"""Reference mixture models of the discriminative-clustering experiments (Kaski et al. 2005, §6.5, §7.2.1).

Kaski, Sinkkonen & Klami (2005) compare discriminative clustering with two
mixture models fitted by EM (and with plain k-means,
:func:`bayesclust.inference.hard.kmeans.kmeans`):

* **MoG** (:func:`mog_em`): a mixture of isotropic Gaussians for ``p(x)`` with one
  shared, fixed standard deviation ``std``; the means and the mixing weights are learned.
* **MDA2** (:func:`mda2_em`; Hastie & Tibshirani 1996, Miller & Uyar 1997): each
  component emits both the features and the class,
  ``p(c, x) = sum_j pi_j N(x | m_j, s^2 I) psi_{j, c}``.

Both run a fixed number of EM iterations (the paper: 100), stopping earlier only at an
exact fixed point of EM (which every later iteration would repeat), with log-domain
responsibilities
(:func:`~bayesclust.kernels.isotropic_gaussian_logpdf`,
:func:`~bayesclust.kernels.log_responsibilities`).  The learned centres define
the Voronoi cells by which the experiments cluster held-out points (docs/deviations.md#dc-heldout-cost).

Each has the package's step shape (docs/architecture.md, "One shape for iterative
algorithms"): :class:`MoGState`, :func:`init_mog_em_state`, :func:`mog_em_step` and
:class:`MDA2State`, :func:`init_mda2_em_state`, :func:`mda2_em_step`; the drivers loop over
the step in a jitted ``lax.while_loop`` and record the trace in pieces
(:func:`bayesclust.inference._driver.run_in_pieces`), so a new ``max_iter`` compiles nothing.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import logsumexp

from ... import _validation as V
from ...kernels import (
    PRECISION,
    SegmentStats,
    class_counts,
    isotropic_gaussian_logpdf,
    log_responsibilities,
    weighted_means,
)
from .._driver import TRACE_PIECE, pow2_at_least, run_in_pieces
from ..hard.kmeans import kmeans_init

__all__ = [
    "mog_em", "MoGResult", "MoGState", "MoGInfo", "init_mog_em_state", "mog_em_step",
    "mda2_em", "MDA2Result", "MDA2State", "MDA2Info", "init_mda2_em_state", "mda2_em_step",
]


class MoGResult(NamedTuple):
    """Result of :func:`mog_em`.

    Attributes
    ----------
    centers : ndarray, shape (n_clusters, d)
        Component means.
    weights : ndarray, shape (n_clusters,)
        Mixing weights (sum to one).
    std : float
        The fixed component standard deviation.
    objective : float
        The maximised objective, the log-likelihood ``sum_i log p(x_i)``, at the
        returned parameters.
    objective_trace : ndarray, shape (n_iter + 1,)
        ``objective`` at the initial parameters and after every EM iteration; never
        decreases (up to rounding).
    n_iter : int
        EM iterations run: ``max_iter``, or fewer when EM reached an exact fixed point.
    converged : bool
        The last iteration left the parameters unchanged (bit for bit): a fixed point
        of EM, which every later iteration would repeat.  EM runs ``max_iter``
        iterations otherwise (the paper: 100) and has no tolerance test.
    """

    centers: np.ndarray
    weights: np.ndarray
    std: float
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool


class MDA2Result(NamedTuple):
    """Result of :func:`mda2_em`.

    Attributes
    ----------
    centers : ndarray, shape (n_clusters, d)
    weights : ndarray, shape (n_clusters,)
        Mixing weights ``pi_j``.
    psi : ndarray, shape (n_clusters, n_classes)
        Class distribution of every component (rows sum to one).
    std : float
    objective : float
        The maximised objective, the log-likelihood ``sum_i log p(c_i, x_i)``, at the
        returned parameters.
    objective_trace : ndarray, shape (n_iter + 1,)
        ``objective`` at the initial parameters and after every EM iteration; never
        decreases (up to rounding).
    n_iter : int
        EM iterations run: ``max_iter``, or fewer when EM reached an exact fixed point.
    converged : bool
        The last iteration left the parameters unchanged (see :class:`MoGResult`).
    """

    centers: np.ndarray
    weights: np.ndarray
    psi: np.ndarray
    std: float
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool


class MoGState(NamedTuple):
    """State of a :func:`mog_em` run between two EM iterations.

    Made by :func:`init_mog_em_state`, advanced by :func:`mog_em_step`; :func:`mog_em`
    loops over the step.

    Attributes
    ----------
    centers : array, shape (K, d)
        Component means :math:`m_j`.
    log_weights : array, shape (K,)
        Log mixing weights :math:`\\log \\pi_j` (``-inf`` for a component that lost all
        its mass).
    responsibilities : array, shape (n, K)
        The E-step at these parameters, :math:`r_{ij} = p(j \\mid x_i)`.
    objective : scalar, dtype of ``X``
        The log-likelihood :math:`\\sum_i \\log p(x_i)` at these parameters (maximised).
    objective_trace : array, shape (T,), dtype of ``X``
        The objective after initialisation and after iterations ``1..n_iter`` in
        entries ``0..n_iter``, NaN after them (later iterations are not recorded).
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration left the means and weights unchanged (bit for bit).
    """

    centers: jax.Array
    log_weights: jax.Array
    responsibilities: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class MoGInfo(NamedTuple):
    """Diagnostics of one :func:`mog_em_step`.

    Attributes
    ----------
    objective : scalar
        Log-likelihood of the returned state.
    changed : bool scalar
        The step changed the means or the weights (EM has no partition: the parameters).
    """

    objective: jax.Array
    changed: jax.Array


class MDA2State(NamedTuple):
    """State of an :func:`mda2_em` run between two EM iterations.

    Made by :func:`init_mda2_em_state`, advanced by :func:`mda2_em_step`;
    :func:`mda2_em` loops over the step.

    Attributes
    ----------
    centers : array, shape (K, d)
        Component means :math:`m_j`.
    log_weights : array, shape (K,)
        Log mixing weights :math:`\\log \\pi_j`.
    log_psi : array, shape (K, C)
        Log class distributions :math:`\\log \\psi_{jc}` (``-inf`` for a class a
        component never explains).
    responsibilities : array, shape (n, K)
        The E-step at these parameters, :math:`r_{ij} = p(j \\mid c_i, x_i)`.
    objective : scalar, dtype of ``X``
        The log-likelihood :math:`\\sum_i \\log p(c_i, x_i)` at these parameters (maximised).
    objective_trace : array, shape (T,), dtype of ``X``
        As in :class:`MoGState`.
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration left the means, weights and class distributions unchanged.
    """

    centers: jax.Array
    log_weights: jax.Array
    log_psi: jax.Array
    responsibilities: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class MDA2Info(NamedTuple):
    """Diagnostics of one :func:`mda2_em_step`.

    Attributes
    ----------
    objective : scalar
        Log-likelihood of the returned state.
    changed : bool scalar
        The step changed the means, the weights or the class distributions.
    """

    objective: jax.Array
    changed: jax.Array


def _m_step_means(X, R, previous):
    """Responsibility-weighted means; a component with no mass keeps its mean."""
    stats = SegmentStats(jnp.sum(R, axis=0), jnp.matmul(R.T, X, precision=PRECISION))
    means = jnp.where(stats.weight[:, None] > 0, weighted_means(stats), previous)
    return means, stats.weight


def _log_weights(mass):
    # Components that lost all mass get weight 0 (log -inf); they stay empty.
    return jnp.log(mass / jnp.sum(mass))


def _e_step(L, log_w):
    """Responsibilities and the log-likelihood from the component terms ``L`` (n, K)."""
    ll = jnp.sum(logsumexp(L + log_w[None, :], axis=1))
    return jnp.exp(log_responsibilities(log_w, L)), ll


def _mda2_terms(X, classes, means, log_psi, sigma2):
    # log N(x_i | m_j, s^2 I) + log psi_{j, c_i}, shape (n, K)
    return isotropic_gaussian_logpdf(X, means, sigma2) + log_psi[:, classes].T


def _check_centers(centers, X):
    """Initial means (K >= 1, the columns of ``X``), and ``X``'s squared distances in range:
    the states live in the data's frame, where EM's squared distances must fit the working
    dtype (the drivers move to the unit frame first)."""
    centers = V.check_kernel_array(centers, "centers", ndim=2, min_rows=1)
    if np.shape(centers)[1] != np.shape(X)[1]:
        raise ValueError(f"centers must have the {np.shape(X)[1]} columns of X, got shape "
                         f"{tuple(np.shape(centers))}")
    wd = V.working_dtype(np.asarray(X).dtype) if not V.traced(X) else None
    V.check_point_range(X, "X", wd)
    V.check_point_range(centers, "centers", wd)
    return centers


def _trace_len(max_iter) -> int:
    return pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)


def _start_trace(objective, trace_len):
    return jnp.full(trace_len, jnp.nan, objective.dtype).at[0].set(objective)


def _sigma2(std, dtype):
    return jnp.square(jnp.asarray(std, dtype))


def _mog_init(X, centers, sigma2, trace_len):
    K = centers.shape[0]
    log_w = jnp.full(K, -jnp.log(K), X.dtype)
    R, ll = _e_step(isotropic_gaussian_logpdf(X, centers, sigma2), log_w)
    return MoGState(centers, log_w, R, ll, _start_trace(ll, trace_len), jnp.int32(0),
                    jnp.asarray(False))


def _mog_step(s: MoGState, X, sigma2):
    means, mass = _m_step_means(X, s.responsibilities, s.centers)
    log_w = _log_weights(mass)
    R, ll = _e_step(isotropic_gaussian_logpdf(X, means, sigma2), log_w)
    same = jnp.all(means == s.centers) & jnp.all(log_w == s.log_weights)
    it = s.n_iter + 1
    new = MoGState(means, log_w, R, ll, s.objective_trace.at[it].set(ll), it, same)
    return new, MoGInfo(ll, ~same)


# Compiled, as the drivers run it: stepping by hand from it reproduces them bit for bit.
_mog_start = jax.jit(_mog_init, static_argnums=(3,))


def init_mog_em_state(X, centers, std, *, max_iter: int = 100) -> MoGState:
    """The state :func:`mog_em` starts from: the given means, equal weights, their E-step.

    Parameters
    ----------
    X : array, shape (n, d)
        Data.  :func:`mog_em` works in the unit frame of
        ``bayesclust._validation.to_unit_frame``: the data centred and scaled by a
        power of two ``2**-e`` (largest value in [0.5, 1)), the initial means and
        ``std`` alike; stepping on those reproduces it (its objectives exceed the
        data's log-likelihood by ``n d e log 2``).
    centers : array, shape (K, d)
        Initial means.
    std : float scalar
        Component standard deviation :math:`s`.
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for (its length: the
        smallest power of two ``>= max_iter + 1``).

    Returns
    -------
    MoGState
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    centers = _check_centers(centers, X)
    X = jnp.asarray(X)
    C = jnp.asarray(centers, X.dtype)
    return _mog_start(X, C, _sigma2(std, X.dtype), _trace_len(max_iter))


def mog_em_step(state: MoGState, X, std) -> tuple[MoGState, MoGInfo]:
    r"""One EM iteration of :func:`mog_em` on a state: the M-step, the E-step, the stopping test.

    M-step from the state's responsibilities (:math:`m_j = \sum_i r_{ij} x_i / \sum_i
    r_{ij}`, :math:`\pi_j = \sum_i r_{ij} / n`), then the E-step at the new parameters,
    which gives the next responsibilities and the log-likelihood.  :func:`mog_em` is this
    step in a ``lax.while_loop`` from :func:`init_mog_em_state`, stopped by ``converged``
    or ``max_iter``; stepping by hand on the same (centred) data reproduces it exactly.
    Works eagerly and under ``jax.jit``; concrete arguments are checked, traced ones are not.

    Parameters
    ----------
    state : MoGState
    X : array, shape (n, d)
        The data the state was made from.
    std : float scalar
        Component standard deviation :math:`s`.

    Returns
    -------
    state : MoGState
    info : MoGInfo

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-2.6, -2.5], [-2.4, -2.5], [2.4, 2.5], [2.6, 2.5]])
    >>> state = init_mog_em_state(X, X[[0, 2]], 0.5)
    >>> while not state.converged:
    ...     state, info = mog_em_step(state, X, 0.5)
    >>> np.asarray(state.centers).round(2).tolist(), bool(info.changed)
    ([[-2.5, -2.5], [2.5, 2.5]], False)
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    V.check_same_length(X, state.responsibilities, "X", "the state's responsibilities")
    X = jnp.asarray(X)
    return _mog_step(state, X, _sigma2(std, X.dtype))


def _mda2_init(X, classes, centers, sigma2, n_classes, trace_len):
    K = centers.shape[0]
    log_w = jnp.full(K, -jnp.log(K), X.dtype)
    log_psi = jnp.full((K, n_classes), -jnp.log(n_classes), X.dtype)
    R, ll = _e_step(_mda2_terms(X, classes, centers, log_psi, sigma2), log_w)
    return MDA2State(centers, log_w, log_psi, R, ll, _start_trace(ll, trace_len), jnp.int32(0),
                     jnp.asarray(False))


def _mda2_step(s: MDA2State, X, classes, sigma2):
    means, mass = _m_step_means(X, s.responsibilities, s.centers)
    counts = class_counts(s.responsibilities, classes, s.log_psi.shape[1])  # (K, C) soft counts
    safe = jnp.where(mass > 0, mass, 1.0)[:, None]
    log_psi = jnp.where(mass[:, None] > 0, jnp.log(counts / safe), s.log_psi)
    log_w = _log_weights(mass)
    R, ll = _e_step(_mda2_terms(X, classes, means, log_psi, sigma2), log_w)
    same = (jnp.all(means == s.centers) & jnp.all(log_w == s.log_weights)
            & jnp.all(log_psi == s.log_psi))
    it = s.n_iter + 1
    new = MDA2State(means, log_w, log_psi, R, ll, s.objective_trace.at[it].set(ll), it, same)
    return new, MDA2Info(ll, ~same)


_mda2_start = jax.jit(_mda2_init, static_argnums=(4, 5))


def init_mda2_em_state(X, classes, centers, std, *, n_classes: int | None = None,
                       max_iter: int = 100) -> MDA2State:
    """The state :func:`mda2_em` starts from: the given means, equal weights, uniform
    class distributions, their E-step.

    Parameters
    ----------
    X : array, shape (n, d)
        Data (see :func:`init_mog_em_state` for the centring :func:`mda2_em` applies).
    classes : int array, shape (n,)
        Class ``0..n_classes-1`` of every point.
    centers : array, shape (K, d)
        Initial means.
    std : float scalar
        Component standard deviation :math:`s`.
    n_classes : int, optional
        Default ``classes.max() + 1``.
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    MDA2State
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    centers = _check_centers(centers, X)
    if V.traced(classes):
        C = V.check_int(n_classes, "n_classes", minimum=1)
    else:  # the classes index the (K, C) table of class distributions
        C = V.check_class_ids(np.asarray(classes), "classes", n_classes, what="MDA2's classes")
    X = jnp.asarray(X)
    classes = jnp.asarray(classes, jnp.int32)
    return _mda2_start(X, classes, jnp.asarray(centers, X.dtype), _sigma2(std, X.dtype), C,
                      _trace_len(max_iter))


def mda2_em_step(state: MDA2State, X, classes, std) -> tuple[MDA2State, MDA2Info]:
    r"""One EM iteration of :func:`mda2_em` on a state: the M-step, the E-step, the stopping test.

    M-step from the state's responsibilities (weighted means, :math:`\psi_{jc} \propto
    \sum_{i: c_i = c} r_{ij}`, :math:`\pi_j = \frac1n \sum_i r_{ij}`), then the E-step at
    the new parameters.  :func:`mda2_em` is this step in a ``lax.while_loop`` from
    :func:`init_mda2_em_state`; stepping by hand on the same (centred) data reproduces it
    exactly.  Works eagerly and under ``jax.jit``; concrete arguments are checked (``classes``
    in ``0..C-1`` of the state's class distributions), traced ones are not.

    Parameters
    ----------
    state : MDA2State
    X : array, shape (n, d)
    classes : int array, shape (n,)
    std : float scalar

    Returns
    -------
    state : MDA2State
    info : MDA2Info

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-0.15], [-0.05], [0.05], [0.15]])
    >>> state = init_mda2_em_state(X, [0, 0, 1, 1], X[[0, 3]], 1.0)
    >>> state, info = mda2_em_step(state, X, [0, 0, 1, 1], 1.0)
    >>> int(state.n_iter), bool(info.changed)
    (1, True)
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    V.check_same_length(X, state.responsibilities, "X", "the state's responsibilities")
    V.check_kernel_ids(classes, "classes", state.log_psi.shape[1])
    X = jnp.asarray(X)
    return _mda2_step(state, X, jnp.asarray(classes, jnp.int32), _sigma2(std, X.dtype))


@jax.jit
def _mog_run(todo, state, X, sigma2):
    def cond(s):
        return (s.n_iter < todo) & ~s.converged

    return lax.while_loop(cond, lambda s: _mog_step(s, X, sigma2)[0], state)


@jax.jit
def _mda2_run(todo, state, X, classes, sigma2):
    def cond(s):
        return (s.n_iter < todo) & ~s.converged

    return lax.while_loop(cond, lambda s: _mda2_step(s, X, classes, sigma2)[0], state)




def _prepare(rng_key, X, n_clusters, std, max_iter, init):
    X = V.check_array(X, "X")
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    std = V.check_positive(std, "std")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    mean = V.centre(X)
    # The unit frame (centred, times 2**-e, exact): the GEMM distances and the
    # Gaussian exponents neither overflow nor underflow whatever the scale of X.
    Xu, e = V.to_unit_frame(X, mean)
    if not isinstance(init, str):  # validated, then moved to the unit frame
        init = np.ldexp(kmeans_init(None, X, n_clusters, init=init).astype(np.float64)
                        - mean.astype(np.float64), -e).astype(Xu.dtype)
    centers0 = kmeans_init(rng_key, Xu, n_clusters, init=init)
    std_u = math.ldexp(std, -e)
    fi = np.finfo(Xu.dtype)
    if not float(fi.tiny) ** 0.5 <= std_u <= float(fi.max) ** 0.5:
        raise ValueError(
            f"std={std:g} is outside the range usable with data of spread about "
            f"{math.ldexp(1.0, e):.3g} in {fi.dtype.name}: std / spread = {std_u:.3g} (its "
            "square would over- or underflow); give std on the scale of the data"
        )
    Xj = jnp.asarray(Xu)
    frame = _Frame(mean, e, X.shape[0] * X.shape[1] * e * math.log(2.0))
    return X, Xj, frame, centers0.astype(Xj.dtype), _sigma2(std_u, Xj.dtype), std, max_iter


class _Frame(NamedTuple):
    mean: np.ndarray
    e: int
    # log-likelihood of the data = that of the unit frame - n d e log 2 (the Jacobian)
    log_jacobian: float

    def centers(self, c, dtype):
        return (np.ldexp(np.asarray(c, np.float64), self.e)
                + self.mean.astype(np.float64)).astype(dtype)

    def loglik(self, v):
        v = np.asarray(v)
        return (v.astype(np.float64) - self.log_jacobian).astype(v.dtype) if self.e else v


def mog_em(rng_key, X, n_clusters: int, std, *, max_iter: int = 100, init="random") -> MoGResult:
    r"""Mixture of isotropic Gaussians with a shared fixed standard deviation, fitted by EM.

    Maximises :math:`\sum_i \log \sum_j \pi_j N(x_i \mid m_j, s^2 I)` over the
    means :math:`m_j` and weights :math:`\pi_j`; the standard deviation :math:`s` (``std``) is fixed.

    Parameters
    ----------
    rng_key : jax.random key or int
        Key for the initial centres.
    X : array_like, shape (n, d)
    n_clusters : int
    std : float
        Component **standard deviation** :math:`s` (> 0), shared and fixed.
    max_iter : int, default 100
        EM iterations (the paper uses 100); all are run unless EM reaches an exact fixed
        point first.
    init : {"random", "k-means++"} or array_like of shape (n_clusters, d)
        ``"random"``: distinct random data points (the paper); equal initial weights.

    Returns
    -------
    MoGResult
        ``centers, weights, std, objective, objective_trace, n_iter, converged``;
        ``objective`` is the log-likelihood (maximised).

    Notes
    -----
    E-step :math:`r_{ij} \propto \pi_j N(x_i \mid m_j, s^2 I)` in the log domain;
    M-step :math:`m_j = \sum_i r_{ij} x_i / \sum_i r_{ij}`,
    :math:`\pi_j = \sum_i r_{ij} / n`.  A component whose responsibilities
    underflow to zero keeps its mean and gets weight 0 (it stays empty; ours).
    Keeping the standard deviation fixed is our reading (docs/deviations.md#dc-baselines) of "one shared
    spread, validated" in Kaski et al. (2005, §7.2.1).

    References
    ----------
    S. Kaski, J. Sinkkonen, A. Klami, "Discriminative clustering",
    Neurocomputing 69 (2005) 18-41, §7.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    >>> res = mog_em(0, X, 2, std=0.5, init=X[[0, 2]])
    >>> res.centers.round(2).tolist(), res.weights.round(2).tolist()
    ([[0.1, 0.0], [5.1, 5.0]], [0.5, 0.5])
    """
    X, Xj, frame, C0, sigma2, std, max_iter = _prepare(rng_key, X, n_clusters, std, max_iter, init)
    state = _mog_start(Xj, C0, sigma2, TRACE_PIECE)
    state, traces, done = run_in_pieces(
        state, lambda todo, s: _mog_run(todo, s, Xj, sigma2), max_iter)
    return MoGResult(
        centers=frame.centers(state.centers, X.dtype),
        weights=np.exp(np.asarray(state.log_weights)),
        std=std,
        objective=float(frame.loglik(state.objective)),
        objective_trace=frame.loglik(traces["objective_trace"]),
        n_iter=done,
        converged=bool(state.converged),
    )


def mda2_em(
    rng_key,
    X,
    classes,
    n_clusters: int,
    std,
    *,
    n_classes: int | None = None,
    max_iter: int = 100,
    init="random",
) -> MDA2Result:
    r"""MDA2: a joint mixture of features and classes, fitted by EM.

    .. math::

        p(c, x) = \sum_j \pi_j \, N(x \mid m_j, s^2 I) \, \psi_{j, c}

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
        Class ``0..n_classes-1`` of every point.
    n_clusters : int
    std : float
        Component **standard deviation** :math:`s` (> 0), shared and fixed.
    n_classes : int, optional
        Default ``classes.max() + 1``.
    max_iter : int, default 100
        EM iterations, as in :func:`mog_em`.
    init : {"random", "k-means++"} or array_like of shape (n_clusters, d)
        Initial means (default: distinct random data points); the weights and
        the class distributions start uniform (ours).

    Returns
    -------
    MDA2Result
        ``centers, weights, psi, std, objective, objective_trace, n_iter, converged``;
        ``objective`` is the log-likelihood (maximised).

    Notes
    -----
    E-step :math:`r_{ij} \propto \pi_j N(x_i \mid m_j, s^2 I) \psi_{j, c_i}`;
    M-step: weighted means, :math:`\psi_{jc} \propto \sum_{i: c_i = c} r_{ij}`,
    :math:`\pi_j = \frac1n \sum_i r_{ij}`.  Maximum likelihood: a
    class a component never explains gets :math:`\psi_{jc} = 0`.  A component
    with no mass keeps its mean and class distribution and gets weight 0.
    Held-out points are clustered from ``x`` alone (Kaski et al. 2005, §7.2.1), e.g. by the
    Voronoi cells of ``centers``.

    References
    ----------
    T. Hastie, R. Tibshirani, "Discriminant analysis by Gaussian mixtures",
    JRSS B 58 (1996); D. J. Miller, H. S. Uyar, "A mixture of experts classifier
    with learning based on both labelled and unlabelled data", NIPS 9 (1997);
    Kaski et al. (2005), §6.5 and §7.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3]])
    >>> res = mda2_em(0, X, [0, 0, 1, 1], 2, std=1.0, init=[[0.0], [0.3]])
    >>> bool(res.psi[0, 0] > 0.5 and res.psi[1, 1] > 0.5)
    True
    """
    X, Xj, frame, C0, sigma2, std, max_iter = _prepare(rng_key, X, n_clusters, std, max_iter, init)
    classes = V.check_labels(classes, "classes", n_samples=X.shape[0])
    n_classes = V.check_class_ids(classes, "classes", n_classes, what="MDA2's classes")
    classes_j = jnp.asarray(classes, jnp.int32)
    state = _mda2_start(Xj, classes_j, C0, sigma2, n_classes, TRACE_PIECE)
    state, traces, done = run_in_pieces(
        state, lambda todo, s: _mda2_run(todo, s, Xj, classes_j, sigma2), max_iter)
    return MDA2Result(
        centers=frame.centers(state.centers, X.dtype),
        weights=np.exp(np.asarray(state.log_weights)),
        psi=np.exp(np.asarray(state.log_psi)),
        std=std,
        objective=float(frame.loglik(state.objective)),
        objective_trace=frame.loglik(traces["objective_trace"]),
        n_iter=done,
        converged=bool(state.converged),
    )
