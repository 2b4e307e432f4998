r"""Pairwise probabilistic clustering (PPC) of a co-association matrix.

Every object :math:`i` has a soft assignment :math:`\mathbf y_i` on the simplex
:math:`\Delta_K`; two objects are co-clustered with probability
:math:`\mathbf y_i^\top\mathbf y_j`, and the co-association :math:`c_{ij}` of an ensemble is
the estimate of that probability.  PPC fits the memberships :math:`Y = (\mathbf y_1, \dots,
\mathbf y_n)` (``K x n``) by least squares (eq. 1)

.. math::

    Y^* = \arg\min_{Y \in \Delta_K^n} \|C - Y^\top Y\|_F^2,

through the equivalent maximisation of a polynomial with non-negative coefficients (eq. 4,
Prop. 1), to which the Baum-Eagon growth transform applies (eq. 5):

.. math::

    y_{ki} \leftarrow y_{ki}\,\frac{n + G_{ki}}{\sum_{k'} y_{k'i}\,(n + G_{k'i})},
    \qquad G = Y(C - Y^\top Y).

Every iteration that moves decreases the objective.  Here it runs on the stored pairs of the
sparse co-association: :math:`YC` is a gather and a ``segment_sum`` over the stored pairs, and
:math:`YY^\top Y = (YY^\top)Y`, so one iteration costs ``O(K nnz + K^2 n)`` time and never
forms the dense ``n x n`` matrix.  All numerics run in float64 (under :func:`jax.enable_x64`).

References
----------
S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering using
evidence accumulation", S+SSPR 2010, LNCS 6218, pp. 395-404.
L. E. Baum and J. A. Eagon, "An inequality with applications to statistical estimation for
probabilistic functions of Markov processes and to a model for ecology", Bull. AMS 73 (1967).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import padded_rows, sum_rows
from ...metrics import membership_entropy
from .._driver import TRACE_PIECE, best_of_restarts, draws_extend, pow2_at_least, run_in_pieces
from ._common import _as_pairs

__all__ = ["PPCInfo", "PPCResult", "PPCState", "init_ppc_state", "ppc", "ppc_step"]
_JITTER = 1e-2  # weight of the Dirichlet perturbation of a uniform init_memberships
#: The object count the driver pads ``m`` objects to (a module attribute, so that a test can
#: run it unpadded), and its bucket of stored pairs.
_pad_to = padded_rows


def _pairs_to(nnz: int) -> int:
    """The stored pairs padded to a power of two (at least 1024): a refit on a few more
    objects, whose co-association has a few more pairs, mostly stays in the bucket."""
    return max(1024, pow2_at_least(nnz))


class PPCResult(NamedTuple):
    r"""Result of :func:`ppc`.

    Attributes
    ----------
    memberships : ndarray of float64, shape (n, K)
        :math:`\mathbf y_i^\top`, every row on the simplex.
    labels : ndarray of int64, shape (n,)
        Hard consensus :math:`\arg\max_k y_{ki}` (the first maximum on ties).
    entropy : ndarray of float64, shape (n,)
        Normalised entropy :math:`h_i = -\sum_k y_{ki}\log y_{ki} / \log K` in [0, 1]
        (0 for ``K = 1``): the uncertainty of each object's assignment.
    objective : float
        :math:`\|C - Y^\top Y\|_F^2` (minimised) of the returned memberships; the diagonal
        :math:`(c_{ii} - \|\mathbf y_i\|^2)^2` is included unless ``mask_diagonal=True``.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        The objective at the start and after every iteration of the selected start
        (non-increasing).
    n_iter : int
        Iterations run by the selected start.
    converged : bool
        Whether the selected start met the tolerance before ``max_iter``.
    restart_objectives : ndarray of float64, shape (n_init,)
        Final objective of every start (one entry with ``init_memberships``); the smallest is
        returned.
    isolated : ndarray of bool, shape (n,)
        Objects with no off-diagonal co-association (never co-clustered with any other, or
        never sampled): left out of the fit, with uniform memberships ``1/K`` and entropy 1
        (docs/deviations.md#ppc-isolated).
    """

    memberships: np.ndarray
    labels: np.ndarray
    entropy: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray
    isolated: np.ndarray


class PPCState(NamedTuple):
    r"""State of a PPC run (one start) between two iterations.

    Made by :func:`init_ppc_state`, advanced by :func:`ppc_step`; :func:`ppc` loops over the
    step on the objects linked to another (the isolated ones left out).

    Attributes
    ----------
    memberships : array, shape (n, K)
        :math:`Y^\top`: every row on the simplex.
    YC : array, shape (n, K)
        :math:`(YC)^\top` at ``memberships`` (kept for the next iteration and the objective).
    labels : int32 array, shape (n,)
        :math:`\arg\max_k y_{ki}` (the first maximum on ties).
    objective : scalar
        :math:`\|C - Y^\top Y\|_F^2` (minimised), the diagonal left out with ``mask_diagonal``.
    objective_trace : array, shape (T,)
        The objective at the start and after iterations ``1..n_iter`` in entries
        ``0..n_iter``, NaN after them; ``T``, the smallest power of two ``>= max_iter + 1``
        (``max_iter`` given to the init), bounds what is recorded (later iterations are not).
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration lowered the objective by at most ``tol`` relative to the previous
        value.
    """

    memberships: jax.Array
    YC: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class PPCInfo(NamedTuple):
    """Diagnostics of one :func:`ppc_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        Whether the step changed ``labels``.
    """

    objective: jax.Array
    changed: jax.Array


def _times_c(Yt, rows, cols, vals, diag):
    """``C_sym Y^T`` (n, K) from the upper-triangle pairs and the diagonal: ``(Y C)^T``."""
    n = Yt.shape[0]
    out = jax.ops.segment_sum(vals[:, None] * Yt[cols], rows, n, indices_are_sorted=True)
    out = out + jax.ops.segment_sum(vals[:, None] * Yt[rows], cols, n)
    return out + diag[:, None] * Yt


def _c_norm2(rows, vals, diag):
    r""":math:`\|C\|_F^2` (a constant of the fit: computed once per call of the driver's loop)."""
    # Summed per object first: the driver's value-0 padding pairs add exact zeros to the last
    # object's sum, so they cannot change the rounding (a sum over the pairs could).
    # The sums over objects are kernels.sum_rows: the driver's padding objects (zero rows of
    # Y^T, no pair, diagonal 0) add exact zeros to the same partial sums.
    per_object = jax.ops.segment_sum(vals * vals, rows, diag.shape[0], indices_are_sorted=True)
    return 2.0 * sum_rows(per_object) + sum_rows(diag * diag)


def _objective(Yt, YCt, c_norm2, off):
    r""":math:`\|C\|^2 - 2\,\mathrm{tr}(YCY^\top) + \|YY^\top\|^2` (minus the diagonal if ``off``)."""
    M = _gram(Yt)  # Y Y^T, (K, K)
    sq = jnp.sum(Yt * Yt, axis=1)  # ||y_i||^2 = [Y^T Y]_ii
    return c_norm2 - 2.0 * jnp.sum(sum_rows(YCt * Yt)) + jnp.sum(M * M) - off * sum_rows(sq * sq)


def _gram(Yt):
    """:math:`YY^\top` (K, K), summed over the objects by ``kernels.sum_rows``."""
    return sum_rows(Yt[:, :, None] * Yt[:, None, :])


def _prepared(Yt, rows, cols, vals, diag, mask_diagonal):
    """The arguments as arrays of the memberships' dtype; the diagonal is 0 when masked."""
    dtype = Yt.dtype
    off = jnp.asarray(mask_diagonal, dtype)
    diag = jnp.asarray(diag, dtype) * (1.0 - off)
    return (jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32), jnp.asarray(vals, dtype), diag, off)


def init_ppc_state(rows, cols, values, diag, memberships, *, mask_diagonal=False, max_iter=100) -> PPCState:
    r"""The state PPC starts from: the given memberships, scored.

    Parameters
    ----------
    rows, cols : int array, shape (nnz,)
        The stored off-diagonal pairs of the co-association, ``rows < cols``, sorted by
        ``rows`` (the order of ``scipy.sparse.triu(C, 1)`` in CSR or COO form).
    values : float array, shape (nnz,)
        :math:`c_{ij}` of every pair (pairs of value 0 are allowed: they change nothing).
    diag : float array, shape (n,)
        :math:`c_{ii}`.
    memberships : array, shape (n, K)
        The start :math:`Y^\top`, every row on the simplex; its dtype is the state's.
    mask_diagonal : bool, default False
        Leave the terms :math:`i = j` out (see :func:`ppc`).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    PPCState

    Examples
    --------
    >>> import numpy as np
    >>> rows, cols, values, diag = np.array([0, 2]), np.array([1, 3]), np.ones(2), np.ones(4)
    >>> Y0 = np.array([[0.6, 0.4], [0.5, 0.5], [0.3, 0.7], [0.45, 0.55]])
    >>> state = init_ppc_state(rows, cols, values, diag, Y0)
    >>> state.labels.tolist(), int(state.n_iter), state.objective_trace.shape
    ([0, 0, 1, 1], 0, (128,))
    """
    diag = V.check_kernel_array(diag, "diag", ndim=1, min_rows=1)
    memberships = V.check_kernel_array(memberships, "memberships", ndim=2, min_rows=1)
    V.check_same_length(memberships, diag, "memberships", "diag")
    if np.shape(memberships)[1] == 0:
        raise ValueError("memberships must have at least one column (cluster)")
    # the pairs index the objects: an id past them would be clipped silently
    rows, cols, values = V.check_pair_arrays(rows, cols, values, "values", n_objects=np.shape(diag)[0])
    Yt = jnp.asarray(memberships)
    dtype = Yt.dtype
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    return _initial(Yt, jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32), jnp.asarray(values, dtype),
                    jnp.asarray(diag, dtype), jnp.asarray(float(bool(mask_diagonal)), dtype), trace_len)


@functools.partial(jax.jit, static_argnames="trace_len")
def _initial(Yt, rows, cols, vals, diag, off, trace_len):
    # Compiled: op by op, every start of the driver would pay a dispatch per operation, and
    # every new number of objects a compile per operation.
    diag = diag * (1.0 - off)
    YC = _times_c(Yt, rows, cols, vals, diag)
    obj = _objective(Yt, YC, _c_norm2(rows, vals, diag), off)
    return PPCState(Yt, YC, jnp.argmax(Yt, axis=1).astype(jnp.int32), obj,
                    jnp.full(trace_len, jnp.nan, Yt.dtype).at[0].set(obj),
                    jnp.asarray(0, jnp.int32), jnp.asarray(False))


def ppc_step(state: PPCState, rows, cols, values, diag, *, tol=1e-9, mask_diagonal=False
             ) -> tuple[PPCState, PPCInfo]:
    r"""One Baum-Eagon iteration of PPC, its objective and the stopping test.

    .. math::

        y_{ki} \leftarrow y_{ki}\,\frac{n + G_{ki}}{\sum_{k'} y_{k'i}\,(n + G_{k'i})},
        \qquad G = Y(C - Y^\top Y)

    (Rota Bulò et al. 2010, eq. 5; with ``mask_diagonal`` the terms :math:`j = i` are left
    out of :math:`G`).  ``converged`` is set when the objective fell by at most ``tol``
    relative to its previous value.  :func:`ppc` runs this step in a ``lax.while_loop`` from
    :func:`init_ppc_state` (float64, ``jax.enable_x64``), stopped by ``converged`` or
    ``max_iter``; stepping by hand under ``jax.jit`` reproduces it bit for bit.  Eager or
    jitted; concrete arguments are checked (the pairs' ids within the objects), traced ones
    are not.

    Parameters
    ----------
    state : PPCState
    rows, cols, values, diag : arrays
        The co-association the state was made from (see :func:`init_ppc_state`).
    tol : float, default 1e-9
    mask_diagonal : bool, default False

    Returns
    -------
    state : PPCState
    info : PPCInfo

    Examples
    --------
    >>> import numpy as np
    >>> rows, cols, values, diag = np.array([0, 2]), np.array([1, 3]), np.ones(2), np.ones(4)
    >>> Y0 = np.array([[0.6, 0.4], [0.5, 0.5], [0.3, 0.7], [0.45, 0.55]])
    >>> state = init_ppc_state(rows, cols, values, diag, Y0)
    >>> for _ in range(50):
    ...     state, info = ppc_step(state, rows, cols, values, diag)
    >>> bool(state.objective < state.objective_trace[0]), state.labels.tolist()
    (True, [0, 0, 1, 1])
    """
    diag = V.check_kernel_array(diag, "diag", ndim=1, min_rows=1)
    V.check_same_length(diag, state.memberships, "diag", "state.memberships")
    rows, cols, values = V.check_pair_arrays(rows, cols, values, "values", n_objects=np.shape(diag)[0])
    Yt = state.memberships
    rows, cols, vals, diag, off = _prepared(Yt, rows, cols, values, diag, mask_diagonal)
    return _step(state, rows, cols, vals, diag, off, jnp.asarray(tol, Yt.dtype),
                 jnp.asarray(Yt.shape[0], Yt.dtype), _c_norm2(rows, vals, diag))


def _step(s: PPCState, rows, cols, vals, diag, off, tol, n, c_norm2):
    """:func:`ppc_step` on prepared arguments; ``n`` the number of objects (the driver's
    padding objects, zero rows of ``memberships``, stay zero and are not counted)."""
    Yt = s.memberships
    M = _gram(Yt)
    # [Y Y^T Y]^T = Y^T (Y Y^T), row by row; with the diagonal masked the j = i term is left out.
    YYYt = jnp.sum(Yt[:, :, None] * M[None], axis=1) - off * Yt * jnp.sum(Yt * Yt, axis=1, keepdims=True)
    num = Yt * (n + s.YC - YYYt)  # >= 0: [Y Y^T Y]_ki <= n
    total = jnp.sum(num, axis=1, keepdims=True)
    Yn = num / jnp.where(total > 0, total, 1.0)  # 0 / 1 on the padding rows
    YCn = _times_c(Yn, rows, cols, vals, diag)
    obj = _objective(Yn, YCn, c_norm2, off)
    it = s.n_iter + 1
    done = (s.objective - obj) <= tol * jnp.abs(s.objective)
    labels = jnp.argmax(Yn, axis=1).astype(jnp.int32)
    new = PPCState(Yn, YCn, labels, obj, s.objective_trace.at[it].set(obj), it, done)
    return new, PPCInfo(obj, jnp.any(labels != s.labels))


@jax.jit
def _run(todo, state, rows, cols, vals, diag, off, tol, n):
    """At most ``todo`` steps from ``state`` (one piece of :func:`~bayesclust.inference._driver.run_in_pieces`)."""

    def cond(s):
        return (s.n_iter < todo) & ~s.converged

    c_norm2 = _c_norm2(rows, vals, diag)

    def body(s):
        return _step(s, rows, cols, vals, diag, off, tol, n, c_norm2)[0]

    return lax.while_loop(cond, body, state)


def _check_init(init: Any, K: int, n: int) -> np.ndarray:
    """``init_memberships`` as a (n, K) float64 array with rows on the simplex."""
    Y = V.check_array(init, "init_memberships", ndim=2, dtype=None).astype(np.float64)
    if Y.shape == (K, n) and K != n:
        Y = Y.T
    if Y.shape != (n, K):
        raise ValueError(f"init_memberships must have shape ({n}, {K}) or ({K}, {n}), got {Y.shape}")
    if not np.all(np.isfinite(Y)) or Y.min() < 0 or not np.allclose(Y.sum(axis=1), 1.0, atol=1e-8):
        raise ValueError("init_memberships must hold probability vectors (non-negative, summing to 1)")
    return Y / Y.sum(axis=1, keepdims=True)


def ppc(
    rng_key: Any,
    coassoc: Any,
    n_clusters: int,
    *,
    n_init: int = 5,
    tol: float = 1e-9,
    max_iter: int = 1000,
    mask_diagonal: bool = False,
    init_memberships: Any = None,
) -> PPCResult:
    r"""Pairwise probabilistic clustering of a co-association by the Baum-Eagon transform.

    Minimises :math:`\|C - Y^\top Y\|_F^2` over :math:`Y \in \Delta_K^n` (eq. 1) with the
    growth transform (eq. 5)

    .. math::

        y_{ki} \leftarrow y_{ki}\,\frac{n + G_{ki}}{\sum_{k'} y_{k'i}\,(n + G_{k'i})},
        \qquad G = Y(C - Y^\top Y),

    which decreases the objective at every iteration that moves (Rota Bulò et al. 2010,
    §3, Prop. 1).  The barycentre :math:`y_{ki} = 1/K` is a fixed point, so every start is a
    random :math:`\mathbf y_i \sim \mathrm{Dir}(\mathbf 1_K)`, and a uniform
    ``init_memberships`` is jittered (with a warning).  Objects that no pair links to any other
    (an all-zero off-diagonal row of :math:`C`) are left out of the fit with
    :math:`\mathbf y_i = \mathbf 1_K / K` and flagged in ``isolated``.

    Parameters
    ----------
    rng_key : jax.random key or int
        Seeds the starts (one split per start).
    coassoc : CoAssociation, ensemble, scipy.sparse matrix or ndarray of float, shape (n, n)
        A :class:`~bayesclust.inference.consensus.coassociation.CoAssociation` (normalised
        :math:`c_{ij} = n_{ij}/N_{ij}` and :math:`c_{ii} = 1` for the objects sampled at least
        once); a symmetric floating-point matrix with entries in [0, 1] (dense or sparse; its
        diagonal is used as given); anything else is an ensemble of partitions and goes
        through :func:`~bayesclust.inference.consensus.coassociation.coassociation`.
    n_clusters : int
        ``K``, with ``1 <= K <= n``.
    n_init : int, default 5
        Random starts; the one with the smallest final objective is returned.
    tol : float, default 1e-9
        Stop when the relative decrease of the objective in one iteration is at most ``tol``
        (> 0).
    max_iter : int, default 1000
        Iterations per start at most.
    mask_diagonal : bool, default False
        Leave the terms :math:`i = j` out of the objective and of :math:`G` (the default
        keeps them, with the co-association's :math:`c_{ii}`).
    init_memberships : array_like, shape (n, K) or (K, n), optional
        One fixed start instead of the ``n_init`` random ones (then ``restart_objectives``
        has one entry); each object's memberships must sum to 1.  A square array is read as
        (n, K).  The uniform start :math:`y_{ki} = 1/K` (``K > 1``), a fixed point of (5), is
        replaced by :math:`0.99 / K + 0.01\,\mathbf d_i`,
        :math:`\mathbf d_i \sim \mathrm{Dir}(\mathbf 1_K)` drawn from ``rng_key``, with a
        ``UserWarning`` (docs/deviations.md#ppc-defaults).  The rows of isolated objects are
        ignored.

    Returns
    -------
    PPCResult
        ``isolated`` flags the objects left out of the fit; the objective and its trace are
        those of all ``n`` objects.

    Raises
    ------
    ValueError
        ``n_clusters`` outside ``[1, n]``, ``n_init < 1``, ``tol <= 0``, ``max_iter < 1``, a
        ``coassoc`` matrix that is not symmetric, has NaN or infinite entries or entries
        outside [0, 1], or bad ``init_memberships``.

    Warns
    -----
    UserWarning
        ``init_memberships`` is uniform and was jittered.

    Notes
    -----
    :math:`YC` is a gather and a ``segment_sum`` over the stored pairs of the sparse matrix
    and :math:`YY^\top Y` is formed as :math:`(YY^\top)Y`, so an iteration costs
    ``O(K nnz + K^2 n)``; the objective is
    :math:`\|C\|_F^2 - 2\,\mathrm{tr}(YCY^\top) + \|YY^\top\|_F^2`, never a dense matrix.
    Near hard memberships (a zero objective, as on block-diagonal ``C``) the decrease is
    sublinear: ``y_ki`` approaches 0 roughly like ``1/t``, and ``max_iter`` is often reached
    before ``tol``: on iris with ``K = 3`` the relative decrease per iteration is still about
    ``4e-7`` after 1000 iterations, and the CI of the labels was 0.59 / 0.91 / 0.97 after
    50 / 200 / 1000 iterations.  The step shrinks with ``n`` (the factor is
    :math:`(n + G_{ki}) / (n + \sum_{k'} y_{k'i}G_{k'i})` while a sparse :math:`C` keeps
    :math:`G` small): measured on ten Gaussians with ``n = 10 000`` (50 k-means partitions, linear
    K rule, ``K = 10``), one start reached CI 0.12 after 1000 iterations (0.20 after 5000; its
    time is in BENCHMARKS.md).
    Each start is :func:`ppc_step` looped from :func:`init_ppc_state` in a
    ``lax.while_loop`` whose trace buffer is recorded in pieces
    (``inference._driver.run_in_pieces``): no cap on ``max_iter``, and a new ``max_iter``
    compiles nothing.  The linked objects are padded to
    :func:`bayesclust.kernels.padded_rows` (zero rows of the memberships, which stay zero and
    are left out of every sum and of the transform's :math:`n`) and the stored pairs to a power
    of two (value-0 pairs), so a co-association of a few more objects reuses the compiled
    programs; the fit is the unpadded one, bit for bit.
    The iteration count, starts, tolerance and the diagonal are our choices
    (docs/deviations.md#ppc-defaults).  float64 throughout (``jax.enable_x64`` inside).

    An isolated object :math:`i` (:math:`c_{ij} = 0` for all :math:`j \ne i`) has no evidence
    for any cluster.  With :math:`\mathbf y_i = \mathbf 1_K/K`, :math:`\mathbf y_i^\top
    \mathbf y_j = 1/K` for every :math:`\mathbf y_j` on the simplex, so its terms of (1) are
    a constant and the other objects are fitted exactly as PPC of the co-association without
    it (the transform's :math:`n` is then the number of linked objects, and the tolerance is
    read on their part of the objective); left free, (5) would push it into the smallest
    clusters (docs/deviations.md#ppc-isolated).

    References
    ----------
    S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering
    using evidence accumulation", S+SSPR 2010, §3, eqs. (1), (4), (5).

    Examples
    --------
    >>> import numpy as np
    >>> blocks = np.repeat([0, 1], 4)
    >>> C = (blocks[:, None] == blocks[None, :]).astype(float)
    >>> res = ppc(0, C, 2)
    >>> res.labels.tolist() in ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0, 0])
    True
    >>> round(res.objective, 3)   # Y^T Y tends to C: the memberships become hard, slowly
    0.0
    """
    n_init = V.check_int(n_init, "n_init", minimum=1)
    tol = V.check_positive(tol, "tol")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    rows, cols, vals, diag = _as_pairs(coassoc)
    n = diag.shape[0]
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    Y_init = None if init_memberships is None else _check_init(init_memberships, K, n)
    key = V.as_rng_key(rng_key)
    off = 1.0 if mask_diagonal else 0.0
    if mask_diagonal:
        diag = np.zeros_like(diag)

    # Isolated objects (no stored off-diagonal pair) are left out of the fit with y_i = 1/K:
    # then y_i^T y_j = 1/K for every y_j on the simplex, so their terms of (1) are a constant.
    linked = np.zeros(n, bool)
    linked[rows] = True
    linked[cols] = True
    isolated = ~linked
    keep = np.flatnonzero(linked)
    m = keep.size
    iso_const = (n * (n - 1) - m * (m - 1)) / K**2
    if not mask_diagonal:
        iso_const += float(np.sum((diag[isolated] - 1.0 / K) ** 2))
    if m < n:
        index = np.full(n, -1, np.int32)
        index[keep] = np.arange(m, dtype=np.int32)
        rows, cols, diag = index[rows], index[cols], diag[keep]  # a monotone map: still sorted
    if Y_init is not None:
        Y_init = Y_init[keep]
        if K > 1 and m and np.abs(Y_init - 1.0 / K).max() <= 1e-12:
            key, k_jit = jax.random.split(key)
            noise = np.asarray(jax.random.dirichlet(k_jit, jnp.ones(K), shape=(m,)), np.float64)
            Y_init = (1.0 - _JITTER) * Y_init + _JITTER * noise / noise.sum(axis=1, keepdims=True)
            warnings.warn(
                "init_memberships is uniform (y_ki = 1/K), a fixed point of the growth transform "
                f"that never moves; it was jittered by a Dirichlet perturbation of weight {_JITTER} "
                "drawn from rng_key",
                UserWarning, stacklevel=2,
            )

    uniform = np.full((n, K), 1.0 / K)
    if m == 0:  # nothing links any two objects: every object is isolated
        n_starts = 1 if Y_init is not None else n_init
        return PPCResult(
            memberships=uniform, labels=np.zeros(n, np.int64),
            entropy=np.ones(n) if K > 1 else np.zeros(n), objective=iso_const,
            objective_trace=np.array([iso_const]), n_iter=0, converged=True,
            restart_objectives=np.full(n_starts, iso_const), isolated=isolated,
        )

    # Pad the pairs to a power-of-two bucket (value-0 pairs (m-1, m-1) add nothing and keep the
    # rows sorted) and the objects to kernels.padded_rows(m) (zero rows of Y^T, diagonal 0: they
    # stay zero and change no sum), so that co-associations of the same data, or of a few more
    # objects, share one compilation; the result is the unpadded one, bit for bit.
    nnz = rows.shape[0]
    pad = _pairs_to(nnz) - nnz
    m_pad = _pad_to(m)
    with jax.enable_x64(True):
        r_ = np.r_[rows, np.full(pad, m - 1, np.int32)]
        c_ = np.r_[cols, np.full(pad, m - 1, np.int32)]
        v_ = np.r_[vals, np.zeros(pad)]
        d_ = np.r_[diag, np.zeros(m_pad - m)]
        if Y_init is not None:
            starts = [Y_init]
        else:
            # drawn at the padded count and cut (the same draws; see _driver.draws_extend)
            size = m_pad if draws_extend() else m
            keys = jax.random.split(key, n_init)
            starts = [np.asarray(jax.random.dirichlet(k, jnp.ones(K, jnp.float64), shape=(size,)))[:m]
                      for k in keys]
        todo = iter(starts)
        off_, tol_, n_ = np.float64(off), np.float64(tol), np.float64(m)

        def start():
            Y0 = np.zeros((m_pad, K))
            Y0[:m] = next(todo)
            state = init_ppc_state(r_, c_, v_, d_, Y0, mask_diagonal=mask_diagonal,
                                   max_iter=TRACE_PIECE - 1)
            # max_iter never enters the compiled loop: the trace is recorded in pieces.
            out = run_in_pieces(state, lambda it, s: _run(it, s, r_, c_, v_, d_, off_, tol_, n_), max_iter)
            return float(out.state.objective), out

        obj, out, finals = best_of_restarts(len(starts), start, maximize=False)
    s = out.state
    Y = uniform
    Y[keep] = np.asarray(s.memberships)[:m]
    labels = np.zeros(n, np.int64)
    labels[keep] = np.asarray(s.labels)[:m]
    return PPCResult(
        memberships=Y,
        labels=labels,
        entropy=membership_entropy(Y),
        objective=obj + iso_const,
        objective_trace=out.traces["objective_trace"] + iso_const,
        n_iter=out.n_iter,
        converged=bool(s.converged),
        restart_objectives=np.asarray(finals) + iso_const,
        isolated=isolated,
    )
