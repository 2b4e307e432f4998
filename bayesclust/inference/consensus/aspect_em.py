r"""EM for the dyadic aspect model of a co-association matrix (PEnCA) and its hard
limit (classification EM).

**PEnCA** (Lourenco, Fred & Figueiredo 2011) models the multiset :math:`\mathcal S`
of ordered pairs of distinct objects that share a cluster in some partition of an
ensemble, summarised by the symmetric count matrix :math:`C` (zero diagonal):

.. math::

    P(y, z) = \sum_{r=1}^L p_r B_{r,y} B_{r,z}, \qquad
    \ell(p, B) = \sum_{y \ne z} C_{yz} \log \sum_r p_r B_{r,y} B_{r,z}.

EM (eqs. 17, 19, 23, 24): with :math:`\hat C^r_{yz} = C_{yz}\,p_rB_{r,y}B_{r,z}/P(y,z)`,
:math:`p_r \leftarrow \sum_{yz}\hat C^r_{yz}/|\mathcal S|` and
:math:`B_{r,y} \leftarrow \sum_z\hat C^r_{yz}/\sum_{t,z}\hat C^r_{tz}`.  It is run
directly on the stored pairs of the sparse matrix (upper triangle): one iteration is
``O(L nnz)`` (a gather and two ``segment_sum`` per aspect), never the list of pairs nor an
``L x n x n`` tensor.  The soft memberships are :math:`V_{y,r} \propto B_{r,y} p_r` (25).

The **hard limit** is classification EM (CEM): every stored pair is given to its most
probable aspect (hard responsibilities), then (p, B) are re-estimated from those counts;
it monotonically increases the classification log-likelihood
:math:`\sum_{y \ne z} C_{yz}\max_r\log(p_rB_{r,y}B_{r,z})`.

The paper's competitor, Topchy et al.'s mixture model of ensembles (MM), is in
:mod:`~bayesclust.inference.consensus.mixture_of_ensembles`.

All numerics run in float64 (under :func:`jax.enable_x64`): log-likelihood sums over
:math:`10^5`-:math:`10^7` pairs and MDL comparisons need it.

References
----------
A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for evidence
accumulation clustering", SIMBAD 2011.
G. Celeux and G. Govaert, "A classification EM algorithm for clustering and two
stochastic versions", CSDA 14 (1992) 315-332.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax import lax

from ... import _validation as V
from ...kernels import padded_rows, sum_rows
from .._driver import TRACE_PIECE, best_of_restarts, pow2_at_least, run_in_pieces
from .coassociation import coassociation_pairs

__all__ = [
    "AspectEMInfo",
    "AspectEMResult",
    "AspectEMState",
    "aspect_em",
    "aspect_em_step",
    "aspect_log_likelihood",
    "init_aspect_em_state",
    "ModelSelection",
    "select_n_aspects",
]


# ---------------------------------------------------------------------------
# PEnCA EM (soft and hard) on the stored pairs
# ---------------------------------------------------------------------------


class AspectEMResult(NamedTuple):
    """Result of :func:`aspect_em`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Hard consensus :math:`\\arg\\max_r V_{y,r}` (the first on ties; 0 for an ``isolated``
        object).
    memberships : ndarray, shape (n, L)
        Soft memberships :math:`V_{y,r} = B_{r,y}p_r / \\sum_s B_{s,y}p_s` (eq. 25);
        uniform for an object that never co-occurs with another (``isolated``).
    weights : ndarray, shape (L,)
        Aspect probabilities :math:`p`.
    B : ndarray, shape (L, n)
        Per-aspect object distributions (rows on the simplex).
    objective : float
        The maximised objective of the returned parameters: :math:`\\ell(p, B)` (soft); for
        ``hard=True`` the classification log-likelihood; for ``alpha_p, alpha_B != 1`` the MAP
        objective (that plus the Dirichlet log-prior kernels).
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        The objective at the start and after every iteration of the selected start
        (non-decreasing).
    n_iter : int
        Iterations run by the selected start.
    converged : bool
        Whether the selected start met its stopping test before ``max_iter``.
    restart_objectives : ndarray, shape (n_init,)
        Final maximised objective of every start; the best is returned.
    isolated : ndarray of bool, shape (n,)
        Objects without any co-occurring pair.
    n_pairs : float
        :math:`|\\mathcal S|`, the number of ordered co-occurring pairs.
    """

    labels: np.ndarray
    memberships: np.ndarray
    weights: np.ndarray
    B: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray
    isolated: np.ndarray
    n_pairs: float


class AspectEMState(NamedTuple):
    r"""State of a PEnCA EM (or CEM) run between two iterations.

    Made by :func:`init_aspect_em_state`, advanced by :func:`aspect_em_step`;
    :func:`aspect_em` loops over the step (one start at a time).

    Attributes
    ----------
    weights : array, shape (L,)
        Aspect probabilities :math:`p`.
    B : array, shape (L, n)
        Per-aspect object distributions (rows on the simplex).
    labels : int32 array, shape (n,)
        :math:`\arg\max_r p_r B_{r,y}` (the first on ties): the argmax of the memberships
        :math:`V_{y,r}` (eq. 25); 0 for an object without any co-occurring pair.
    objective : scalar
        The maximised objective at (``weights``, ``B``): :math:`\ell(p, B)` (soft), the
        classification log-likelihood (hard), plus the Dirichlet log-prior kernels for
        ``alpha_p, alpha_B != 1``.
    objective_trace : array, shape (T,)
        The objective at the start and after iterations ``1..n_iter`` in entries
        ``0..n_iter``, NaN after them; ``T``, the smallest power of two ``>= max_iter + 1``
        (``max_iter`` given to the init), bounds what is recorded (later iterations are not).
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration met the stopping test: a relative increase of the objective of at
        most ``tol`` (soft), no increase (hard).
    """

    weights: jax.Array
    B: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class AspectEMInfo(NamedTuple):
    """Diagnostics of one :func:`aspect_em_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        Whether the step changed ``labels``.
    """

    objective: jax.Array
    changed: jax.Array


def _pair_probs(p, B, rows, cols):
    """:math:`p_r B_{r,y} B_{r,z}` for every stored pair, shape (L, nnz)."""
    return p[:, None] * B[:, rows] * B[:, cols]


def _xlogy(x, y):
    return jnp.where(x > 0, x * jnp.log(jnp.where(x > 0, y, 1.0)), 0.0)


def _objective(p, B, rows, cols, counts, hard, alpha_p, alpha_B, n):
    joint = _pair_probs(p, B, rows, cols)
    P = jnp.max(joint, axis=0) if hard else jnp.sum(joint, axis=0)
    # Summed per object first: the driver's count-0 padding pairs add exact zeros to object
    # 0's sum, so they cannot change the rounding (a sum over the pairs could); then over the
    # objects by kernels.sum_rows, to which the driver's padding objects (columns of B from
    # n on) add exact zeros.
    val = 2.0 * sum_rows(jax.ops.segment_sum(_xlogy(counts, P), rows, B.shape[1]))
    # Dirichlet log-prior kernels (0 for the ML case alpha = 1), the padding objects left out.
    prior_B = jnp.where(_real(B, n)[None, :], _xlogy(alpha_B - 1.0, B), 0.0)
    val = val + jnp.sum(_xlogy(alpha_p - 1.0, p)) + jnp.sum(sum_rows(prior_B.T))
    return val


def _real(B, n):
    """The objects that are not the driver's padding: the first ``n`` columns of ``B``."""
    return jnp.arange(B.shape[1]) < n


def _labels(p, B, rows, cols, counts):
    """:math:`\\arg\\max_r p_r B_{r,y}`, 0 for the objects without a co-occurring pair."""
    n = B.shape[1]
    linked = (jax.ops.segment_sum(counts, rows, n) + jax.ops.segment_sum(counts, cols, n)) > 0
    return jnp.where(linked, jnp.argmax(p[:, None] * B, axis=0), 0).astype(jnp.int32)


def _em_update(p, B, rows, cols, counts, hard, alpha_p, alpha_B, n_real):
    """One EM (or CEM) step: E-step at (p, B), closed-form M-step (``n_real`` objects, the
    columns of ``B`` after them padding that stays 0)."""
    L, n = B.shape
    joint = _pair_probs(p, B, rows, cols)  # (L, nnz)
    if hard:
        resp = jax.nn.one_hot(jnp.argmax(joint, axis=0), L, dtype=joint.dtype).T
    else:
        tot = jnp.sum(joint, axis=0, keepdims=True)
        resp = joint / jnp.where(tot > 0, tot, 1.0)
    w = resp * counts[None, :]  # \hat C^r at the upper pairs
    seg = jax.vmap(lambda v, idx: jax.ops.segment_sum(v, idx, n), in_axes=(0, None))
    rows_r = seg(w, rows) + seg(w, cols)  # rows_r[r, y] = sum_z \hat C^r_{yz} (full matrix)
    tot = sum_rows(rows_r.T)  # = 2 sum_upper \hat C^r
    # MAP M-step (our Dirichlet priors, docs/deviations.md#penca-dirichlet-priors): p_r ∝ sum_yz Ĉ^r + a_p - 1; B_ry ∝ 2 sum_z Ĉ^r_yz + a_B - 1.
    p_num = jnp.maximum(tot + alpha_p - 1.0, 0.0)
    p_new = p_num / jnp.sum(p_num)
    B_num = jnp.where(_real(B, n_real)[None, :], jnp.maximum(2.0 * rows_r + alpha_B - 1.0, 0.0), 0.0)
    B_sum = sum_rows(B_num.T)[:, None]
    # An aspect that received no pair (hard limit) keeps its distribution; its p is 0.
    B_new = jnp.where(B_sum > 0, B_num / jnp.where(B_sum > 0, B_sum, 1.0), B)
    return p_new, B_new


def init_aspect_em_state(rows, cols, counts, weights, B, *, hard=False, alpha_p=1.0, alpha_B=1.0,
                         max_iter=100) -> AspectEMState:
    r"""The state PEnCA EM starts from: the given parameters, scored.

    Parameters
    ----------
    rows, cols : int array, shape (nnz,)
        The stored pairs ``rows < cols`` of the co-association counts
        (:func:`~bayesclust.inference.consensus.coassociation.coassociation_pairs`).
    counts : float array, shape (nnz,)
        :math:`C_{yz}` of every pair.  Pairs of count 0 are allowed and change no statistic
        (:func:`aspect_em` pads the pairs with them to a size bucket; the length of the arrays
        can change the last bits of the numerics).
    weights : array, shape (L,)
        Initial aspect probabilities :math:`p` (on the simplex).
    B : array, shape (L, n)
        Initial object distributions (rows on the simplex); its dtype is the state's.
    hard : bool, default False
        Score by the classification log-likelihood (the hard limit).
    alpha_p, alpha_B : float, default 1
        Dirichlet prior concentrations (see :func:`aspect_em`).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    AspectEMState

    Examples
    --------
    >>> import numpy as np
    >>> rows, cols, counts = np.array([0, 2]), np.array([1, 3]), np.array([4.0, 4.0])
    >>> state = init_aspect_em_state(rows, cols, counts, np.full(2, 0.5), [[0.4, 0.3, 0.2, 0.1],
    ...                                                                     [0.1, 0.2, 0.3, 0.4]])
    >>> state.labels.tolist(), int(state.n_iter), state.objective_trace.shape
    ([0, 0, 1, 1], 0, (128,))
    """
    weights = V.check_kernel_array(weights, "weights", ndim=1, min_rows=1)
    B = V.check_kernel_array(B, "B", ndim=2)
    if np.shape(B)[0] != np.shape(weights)[0]:
        raise ValueError(f"B must have one row per aspect of weights ({np.shape(weights)[0]}), "
                         f"got shape {tuple(np.shape(B))}")
    # the pairs index the columns of B: an id past them would be clipped silently
    rows, cols, counts = V.check_pair_arrays(rows, cols, counts, "counts", n_objects=np.shape(B)[1])
    B = jnp.asarray(B)
    p = jnp.asarray(weights, B.dtype)
    rows, cols = jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32)
    counts = jnp.asarray(counts, B.dtype)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    alpha_p, alpha_B = jnp.asarray(alpha_p, B.dtype), jnp.asarray(alpha_B, B.dtype)
    return _initial(p, B, rows, cols, counts, alpha_p, alpha_B, np.int32(B.shape[1]), bool(hard), trace_len)


@functools.partial(jax.jit, static_argnames=("hard", "trace_len"))
def _initial(p, B, rows, cols, counts, alpha_p, alpha_B, n, hard, trace_len):
    # Compiled: op by op, the restarts of the driver would pay a dispatch per operation.
    obj = _objective(p, B, rows, cols, counts, hard, alpha_p, alpha_B, n)
    return AspectEMState(
        p, B, _labels(p, B, rows, cols, counts), obj,
        jnp.full(trace_len, jnp.nan, B.dtype).at[0].set(obj),
        jnp.asarray(0, jnp.int32), jnp.asarray(False),
    )


def aspect_em_step(state: AspectEMState, rows, cols, counts, *, hard=False, tol=1e-7, alpha_p=1.0,
                   alpha_B=1.0) -> tuple[AspectEMState, AspectEMInfo]:
    r"""One PEnCA EM (or CEM) iteration: E-step, closed-form M-step, the objective, the stopping test.

    E-step :math:`\hat C^r_{yz} = C_{yz}\,p_rB_{r,y}B_{r,z}/P(y,z)` on the stored pairs (hard:
    every pair to its most probable aspect); M-step :math:`p_r \propto \sum_{yz}\hat C^r_{yz}`,
    :math:`B_{r,y} \propto \sum_z\hat C^r_{yz}` (Lourenco, Fred & Figueiredo 2011, eqs. 17,
    19, 23, 24; with ``alpha != 1`` the MAP update).  ``converged`` is set when the objective
    rose by at most ``tol`` relative to its new value (soft) or did not rise (hard).
    :func:`aspect_em` runs this step in a ``lax.while_loop`` from :func:`init_aspect_em_state`
    (float64, ``jax.enable_x64``), stopped by ``converged`` or ``max_iter``; stepping by hand
    on the same (padded) pairs reproduces it bit for bit, eagerly or under ``jax.jit``
    (``hard`` static) with the driver's argument types (the scalars as NumPy ``float64``: a weakly typed Python float is
    another compiled program, whose rounding may differ in the last bits).  No validation
    (:func:`aspect_em` validates).

    Parameters
    ----------
    state : AspectEMState
    rows, cols, counts : arrays, shape (nnz,)
        The pairs the state was made from (see :func:`init_aspect_em_state`).
    hard : bool, default False
        Classification EM (the hard limit).
    tol : float, default 1e-7
        Relative tolerance of the soft stopping test.
    alpha_p, alpha_B : float, default 1
        Dirichlet prior concentrations.

    Returns
    -------
    state : AspectEMState
    info : AspectEMInfo

    Examples
    --------
    >>> import numpy as np
    >>> rows, cols, counts = np.array([0, 2]), np.array([1, 3]), np.array([4.0, 4.0])
    >>> state = init_aspect_em_state(rows, cols, counts, np.full(2, 0.5), [[0.4, 0.3, 0.2, 0.1],
    ...                                                                     [0.1, 0.2, 0.3, 0.4]])
    >>> while not state.converged:
    ...     state, info = aspect_em_step(state, rows, cols, counts)
    >>> state.labels.tolist(), bool(state.objective >= state.objective_trace[0])
    ([0, 0, 1, 1], True)
    """
    rows, cols, counts = V.check_pair_arrays(rows, cols, counts, "counts",
                                             n_objects=state.B.shape[1])
    dtype = state.B.dtype
    rows, cols = jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32)
    counts = jnp.asarray(counts, dtype)
    tol, alpha_p, alpha_B = (jnp.asarray(x, dtype) for x in (tol, alpha_p, alpha_B))
    # The driver's loop run for one iteration: jitted, the step then compiles the very body
    # computation of the driver's loop, and XLA's fusion (hence the rounding) cannot differ.
    new = _loop(state.n_iter + 1, state, rows, cols, counts, tol, alpha_p, alpha_B, np.int32(state.B.shape[1]),
                bool(hard), False)
    return new, AspectEMInfo(new.objective, jnp.any(new.labels != state.labels))


def _step(s: AspectEMState, rows, cols, counts, hard, tol, alpha_p, alpha_B, n):
    """:func:`aspect_em_step` on prepared arguments (``n`` objects; more columns of ``B``:
    the driver's padding)."""
    p, B = _em_update(s.weights, s.B, rows, cols, counts, hard, alpha_p, alpha_B, n)
    obj = _objective(p, B, rows, cols, counts, hard, alpha_p, alpha_B, n)
    # Relative, with no absolute floor for the soft EM; the hard assignment stops when its
    # objective stops increasing.
    done = (obj - s.objective <= 0.0) if hard else (obj - s.objective) <= tol * jnp.abs(obj)
    labels = _labels(p, B, rows, cols, counts)
    it = s.n_iter + 1
    new = AspectEMState(p, B, labels, obj, s.objective_trace.at[it].set(obj), it, done)
    return new, AspectEMInfo(obj, jnp.any(labels != s.labels))


def _loop(todo, state, rows, cols, counts, tol, alpha_p, alpha_B, n, hard, until_converged=True):
    """Steps from ``state`` while ``n_iter < todo`` (and, ``until_converged``, not converged)."""

    def cond(s):
        go = s.n_iter < todo
        return go & ~s.converged if until_converged else go

    def body(s):
        return _step(s, rows, cols, counts, hard, tol, alpha_p, alpha_B, n)[0]

    return lax.while_loop(cond, body, state)


#: One piece of :func:`~bayesclust.inference._driver.run_in_pieces`: at most ``todo`` steps.
_run = jax.jit(_loop, static_argnames=("hard", "until_converged"))


#: The object count the driver pads ``n`` objects to (a module attribute, so that a test can
#: run it unpadded).
_pad_to = padded_rows


def _padded_pairs(rows, cols, counts):
    """The pairs padded to a power of two (at least 1024) with count-0 pairs (0, 0), which
    contribute nothing, so that ensembles of the same data, or of a few more objects (a few
    more pairs), share one compilation (the driver's pairs)."""
    nnz = rows.shape[0]
    pad = max(1024, pow2_at_least(nnz)) - nnz
    return np.r_[rows, np.zeros(pad, np.int32)], np.r_[cols, np.zeros(pad, np.int32)], np.r_[counts, np.zeros(pad)]


def aspect_log_likelihood(coassoc: Any, weights: Any, B: Any) -> float:
    r"""PEnCA log-likelihood :math:`\ell(p,B)=\sum_{y\ne z}C_{yz}\log\sum_rp_rB_{r,y}B_{r,z}` (eq. 10).

    Parameters
    ----------
    coassoc : CoAssociation, sparse or dense symmetric counts
    weights : array_like, shape (L,)
    B : array_like, shape (L, n)

    Returns
    -------
    float
        Computed in float64 over the stored pairs (both orders).

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0, 2, 0], [2, 0, 0], [0, 0, 0]])
    >>> round(aspect_log_likelihood(C, [1.0], [[0.5, 0.5, 0.0]]), 6)   # 4 log(1/4)
    -5.545177
    """
    rows, cols, counts, n = coassociation_pairs(coassoc)
    p = V.check_array(weights, "weights", ndim=1, dtype=None).astype(np.float64)
    Bm = V.check_array(B, "B", ndim=2, dtype=None).astype(np.float64)
    for name, a in (("weights", p), ("B", Bm)):
        if np.any(a < 0):
            raise ValueError(f"{name} must be non-negative (probabilities), got {a.min():.3g}")
    if Bm.shape != (p.shape[0], n):
        raise ValueError(f"B must have shape ({p.shape[0]}, {n}), got {Bm.shape}")
    P = np.einsum("r,rm,rm->m", p, Bm[:, rows], Bm[:, cols])
    with np.errstate(divide="ignore"):
        return float(2.0 * np.sum(counts * np.log(P)))


def _seed_init(rng, L, n, rows, cols, counts):
    """Farthest-first seeds on the co-association (ours): B_r ∝ C[seed_r] + seed + 1e-3.

    The first seed is uniform; each next seed is an object least co-associated with the
    seeds so far (random among ties), as farthest-first / k-means++ seeding.
    """
    S = sp.coo_matrix((np.r_[counts, counts], (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n)).tocsr()
    top = float(counts.max())
    seeds = [int(rng.integers(n))]
    closeness = S[seeds[0]].toarray().ravel()
    closeness[seeds[0]] = np.inf
    for _ in range(1, L):
        cand = np.flatnonzero(closeness == closeness.min())
        j = int(rng.choice(cand))
        seeds.append(j)
        closeness = np.maximum(closeness, S[j].toarray().ravel())
        closeness[j] = np.inf
    B = S[seeds].toarray() + 1e-3 * top
    B[np.arange(L), seeds] += top
    return np.full(L, 1.0 / L), B / B.sum(axis=1, keepdims=True)


def _init_params(rng, L, n, init, rows, cols, counts, hard=False):
    p = np.full(L, 1.0 / L)
    if init is None:
        init = "seeds" if hard else "random"
    if isinstance(init, str) and init == "seeds":
        return _seed_init(rng, L, n, rows, cols, counts)
    if isinstance(init, tuple):
        if len(init) != 2:
            raise ValueError("init as a tuple must be (weights, B)")
        p = V.check_array(init[0], "init weights", ndim=1, dtype=None).astype(np.float64)
        B = V.check_array(init[1], "init B", ndim=2, dtype=None).astype(np.float64)
        if p.shape != (L,) or B.shape != (L, n):
            raise ValueError(f"init (weights, B) must have shapes ({L},) and ({L}, {n}), got {p.shape} and {B.shape}")
        if p.min() < 0 or B.min() < 0 or not np.allclose(p.sum(), 1) or not np.allclose(B.sum(1), 1):
            raise ValueError("init (weights, B) must be probability vectors (B row-wise)")
        return p, B
    if init is None or (isinstance(init, str) and init == "random"):
        B = rng.dirichlet(np.ones(n), size=L)
    else:
        lab = V.check_labels(init, "init", n_samples=n)
        _, codes = np.unique(lab, return_inverse=True)
        codes = codes.reshape(-1)
        if codes.max() + 1 > L:
            raise ValueError(f"init has {codes.max() + 1} clusters but n_aspects={L}")
        B = np.full((L, n), 1e-3)
        B[codes, np.arange(n)] += 1.0
        B += 1e-3 * rng.random((L, n))  # break the symmetry of empty aspects
        B /= B.sum(axis=1, keepdims=True)
    return p, B


def aspect_em(
    rng_key: Any,
    coassoc: Any,
    n_aspects: int,
    *,
    n_init: int = 10,
    init: Any = None,
    hard: bool = False,
    tol: float = 1e-7,
    max_iter: int = 2000,
    alpha_p: float = 1.0,
    alpha_B: float = 1.0,
) -> AspectEMResult:
    r"""PEnCA: EM for the dyadic aspect model on a sparse co-association count matrix.

    Parameters
    ----------
    rng_key : jax.random key or int
        Seeds the random initialisations.
    coassoc : CoAssociation, scipy.sparse matrix or array_like (n, n)
        Co-occurrence counts (see :func:`~bayesclust.inference.consensus.coassociation.coassociation_pairs`).  EM is scale-invariant in
        ``C`` but :math:`\ell` is not: pass counts, not the normalised matrix.
    n_aspects : int
        ``L >= 1``, the number of consensus clusters.
    n_init : int, default 10
        Independent random starts; the one with the highest final objective is returned
        (several starts are essential: in a check on iris the CI of single random starts ranged
        0.51-0.97).
    init : None, "random", "seeds", array_like of int, shape (n,), or (weights, B)
        Default ``"random"`` for EM and ``"seeds"`` for the hard limit.
        ``"random"`` (ours): ``p`` uniform, :math:`B_r \sim \mathrm{Dir}(\mathbf 1_n)`.
        ``"seeds"`` (ours): farthest-first seed objects (each next seed least
        co-associated with the previous ones), :math:`B_r \propto C_{s_r,\cdot}` + the seed
        + a little smoothing; classification EM from random Dirichlet starts gets stuck
        (it failed on every block-diagonal count matrix we tried, e.g. blocks of 20, 5 and 40).  A
        partition (e.g. the EAC average-link consensus, ``AspectConsensus(init="eac")``):
        :math:`B_r \propto` indicator of cluster ``r`` + :math:`10^{-3}` (restarts then
        differ only by a tiny jitter).  A tuple ``(weights (L,), B (L, n))``: that exact
        starting point (every restart).
    hard : bool, default False
        Classification EM (the hard limit): hard aspect responsibilities per pair.
    tol : float, default 1e-7
        Stop when the objective's relative increase is at most ``tol`` (soft EM); the hard
        limit stops when its objective stops increasing.
    max_iter : int, default 2000
        Iterations per start at most.
    alpha_p, alpha_B : float, default 1
        Dirichlet prior concentrations of :mod:`bayesclust.models.dyadic_aspect`; with values
        other than 1 the M-step is the MAP update (docs/deviations.md#penca-dirichlet-priors; ``alpha < 1`` may set
        entries to 0).  1 gives maximum likelihood, the paper's EM.

    Returns
    -------
    AspectEMResult

    Notes
    -----
    Runs on the upper-triangle pairs ``y < z``: :math:`P(y,z)` is gathered per pair
    (``L x nnz``), and :math:`\sum_z \hat C^r_{yz}` is two ``segment_sum`` (one per
    endpoint), so one iteration costs ``O(L nnz)`` time and memory.  The objective is
    recomputed after the last update (not lagging one iteration), so restart selection compares the
    returned parameters.  float64 throughout (``jax.enable_x64`` inside).  Each start is
    :func:`aspect_em_step` looped from :func:`init_aspect_em_state` in a ``lax.while_loop``
    whose trace buffer is recorded in pieces (``inference._driver.run_in_pieces``): no cap
    on ``max_iter``, and a new ``max_iter`` compiles nothing.  The objects are padded to
    :func:`bayesclust.kernels.padded_rows` (zero columns of ``B``, left out of every sum and
    of the prior) and the stored pairs to a power of two (count-0 pairs), so a co-association
    of a few more objects reuses the compiled programs; the fit is the unpadded one, bit for
    bit.

    References
    ----------
    A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for evidence
    accumulation clustering", SIMBAD 2011.

    Examples
    --------
    >>> import numpy as np
    >>> blocks = np.repeat([0, 1], 4)
    >>> C = 5.0 * (blocks[:, None] == blocks[None, :])
    >>> np.fill_diagonal(C, 0)
    >>> res = aspect_em(0, C, 2, n_init=5)
    >>> res.labels.tolist() in ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0, 0])
    True
    >>> res.memberships.shape
    (8, 2)
    """
    rows, cols, counts, n = coassociation_pairs(coassoc)
    L = V.check_int(n_aspects, "n_aspects", minimum=1)
    if L > n:
        raise ValueError(f"n_aspects must be at most the number of objects {n}, got {L}")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    tol = V.check_nonnegative(tol, "tol")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    alpha_p = V.check_positive(alpha_p, "alpha_p")
    alpha_B = V.check_positive(alpha_B, "alpha_B")
    if isinstance(init, str) and init not in ("random", "seeds"):
        raise ValueError(f"init must be 'random', 'seeds', a partition (n,) or (weights, B), got {init!r}")
    rng = V.as_numpy_rng(rng_key)
    Lcap = max(4, 1 << (L - 1).bit_length()) if (alpha_p == 1.0 and alpha_B == 1.0) else L
    # The objects padded to kernels.padded_rows(n): columns of B that start and stay 0, left
    # out of every sum (kernels.sum_rows) and of the prior, so that a few more objects compile
    # nothing new and the result is the unpadded one, bit for bit.
    n_pad = _pad_to(n)
    with jax.enable_x64(True):
        r_, c_, w_ = (jnp.asarray(a) for a in _padded_pairs(rows, cols, counts))

        def restart():
            p0, B0 = _init_params(rng, L, n, init, rows, cols, counts, hard)
            if Lcap > L:  # dead aspects (p = 0) stay dead under ML EM: one compile for any L <= Lcap
                p0 = np.r_[p0, np.zeros(Lcap - L)]
                B0 = np.r_[B0, np.full((Lcap - L, n), 1.0 / n)]
            B0 = np.concatenate([B0, np.zeros((B0.shape[0], n_pad - n))], axis=1)
            state = _initial(jnp.asarray(p0, jnp.float64), jnp.asarray(B0, jnp.float64), r_, c_, w_, ap_, aB_, n_,
                             bool(hard), TRACE_PIECE)
            # max_iter never enters the compiled loop: the trace is recorded in pieces.
            out = run_in_pieces(state, lambda todo, s: _run(todo, s, r_, c_, w_, tol_, ap_, aB_, n_, hard=bool(hard)),
                                max_iter)
            return float(out.state.objective), out

        tol_, ap_, aB_, n_ = np.float64(tol), np.float64(alpha_p), np.float64(alpha_B), np.int32(n)
        obj, out, finals = best_of_restarts(n_init, restart)
    s = out.state
    p = np.asarray(s.weights)[:L]
    B = np.asarray(s.B)[:L, :n]
    isolated = np.bincount(np.r_[rows, cols], minlength=n) == 0
    Vm = (B * p[:, None]).T
    tot = Vm.sum(axis=1, keepdims=True)
    Vm = np.where(tot > 0, Vm / np.where(tot > 0, tot, 1.0), 1.0 / L)
    Vm[isolated] = 1.0 / L
    return AspectEMResult(
        labels=np.asarray(s.labels, np.int64)[:n],
        memberships=Vm,
        weights=p,
        B=B,
        objective=obj,
        objective_trace=out.traces["objective_trace"],
        n_iter=out.n_iter,
        converged=bool(s.converged),
        restart_objectives=finals,
        isolated=isolated,
        n_pairs=float(2.0 * counts.sum()),
    )


class ModelSelection(NamedTuple):
    """Result of :func:`select_n_aspects`.

    Attributes
    ----------
    n_aspects : int
        The L with the smallest criterion.
    candidates : ndarray of int
    scores : ndarray of float
        The criterion of every candidate (lower is better).
    log_likelihoods : ndarray of float
    best : AspectEMResult
        The fit at the selected L.
    criterion : str
    sample_size : float
    """

    n_aspects: int
    candidates: np.ndarray
    scores: np.ndarray
    log_likelihoods: np.ndarray
    best: AspectEMResult
    criterion: str
    sample_size: float


def select_n_aspects(
    rng_key: Any,
    coassoc: Any,
    candidates: Any = range(1, 11),
    *,
    criterion: str = "mdl",
    sample_size: str | float = "pairs",
    n_partitions: int | None = None,
    **em_kwargs: Any,
) -> ModelSelection:
    r"""Choose the number of aspects L by MDL / BIC (ours; not done in the paper: docs/deviations.md#penca-mdl).

    .. math::

        \mathrm{MDL}(L) = -\ell(\hat\theta_L) + \frac{\nu_L}{2}\log n_s, \qquad
        \mathrm{BIC}(L) = 2\,\mathrm{MDL}(L), \qquad \nu_L = (L-1) + L(n-1).

    Parameters
    ----------
    rng_key : jax.random key or int
    coassoc : CoAssociation, sparse or dense counts
    candidates : iterable of int, default 1..10
    criterion : {"mdl", "bic"}
        The same minimiser (BIC is twice MDL); both are offered for reporting.
    sample_size : {"pairs", "partitions"} or float
        :math:`n_s`: ``"pairs"`` = :math:`|\mathcal S|` (the paper's i.i.d. pairs; they are
        strongly dependent, so the penalty is mis-scaled — experimental); ``"partitions"`` =
        ``N * n`` (needs ``n_partitions`` unless ``coassoc`` is a CoAssociation); or a number.
    **em_kwargs
        Passed to :func:`aspect_em`.

    Returns
    -------
    ModelSelection

    Notes
    -----
    Experimental.  :math:`\ell` sums over :math:`|\mathcal S|` strongly dependent pairs
    (millions for an ensemble of 150 partitions), so the penalty is tiny in comparison:
    measured on iris (N = 150, PEnCA K rule) both ``sample_size`` choices pick the largest
    candidate (L = 8 of 1..8).  It recovers clean block structure (see the example).

    Examples
    --------
    >>> import numpy as np
    >>> blocks = np.repeat([0, 1, 2], 5)
    >>> C = 10.0 * (blocks[:, None] == blocks[None, :])
    >>> np.fill_diagonal(C, 0)
    >>> select_n_aspects(0, C, [1, 2, 3, 4], n_init=5).n_aspects
    3
    """
    if criterion not in ("mdl", "bic"):
        raise ValueError(f"criterion must be 'mdl' or 'bic', got {criterion!r}")
    cands = np.asarray([V.check_int(int(c) if isinstance(c, np.integer) else c, "candidates", minimum=1) for c in candidates])
    if cands.size == 0:
        raise ValueError("candidates must contain at least one number of aspects")
    rows, cols, counts, n = coassociation_pairs(coassoc)
    if isinstance(sample_size, str):
        if sample_size == "pairs":
            ns = float(2.0 * counts.sum())
        elif sample_size == "partitions":
            N = n_partitions if n_partitions is not None else getattr(coassoc, "n_partitions", None)
            if N is None:
                raise ValueError("sample_size='partitions' needs n_partitions (or a CoAssociation)")
            ns = float(V.check_int(N, "n_partitions", minimum=1) * n)
        else:
            raise ValueError(f"sample_size must be 'pairs', 'partitions' or a number, got {sample_size!r}")
    else:
        ns = V.check_positive(sample_size, "sample_size")
    key = V.as_rng_key(rng_key)
    scores, lls, fits = [], [], []
    for j, L in enumerate(cands):
        res = aspect_em(jax.random.fold_in(key, j), coassoc, int(L), **em_kwargs)
        nu = (L - 1) + L * (n - 1)
        mdl = -res.objective + 0.5 * nu * math.log(ns)
        scores.append(2 * mdl if criterion == "bic" else mdl)
        lls.append(res.objective)
        fits.append(res)
    i = int(np.argmin(scores))
    return ModelSelection(int(cands[i]), cands, np.asarray(scores), np.asarray(lls), fits[i], criterion, ns)
