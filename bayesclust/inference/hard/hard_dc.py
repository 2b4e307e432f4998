r"""HardDC: the small-variance limit of discriminative clustering's joint mixture (ours).

Our extension (docs/deviations.md#hard-dc-model), not an algorithm of either paper: Kulis &
Jordan's (2012, §3) small-variance asymptotics applied to a Dirichlet-process form of the
joint mixture behind Kaski, Sinkkonen & Klami's (2005, §4, "MDA2") discriminative clustering.
A component ``j`` emits :math:`x \sim N(\mu_j, \sigma^2 I)` and the auxiliary class
:math:`c \sim \mathrm{Cat}(\psi_j)`, :math:`\psi_j \sim \mathrm{Dir}(n^0)` integrated out,
with the class (Polya) factor tempered by :math:`\xi / (2\sigma^2)` so that it survives the
limit (:mod:`bayesclust.models.dp_mda2`).  As :math:`\sigma^2 \to 0` with
:math:`\alpha = (1 + \rho^2/\sigma^2)^{d/2} e^{-\lambda/(2\sigma^2)}` the Gibbs sampler
(:func:`bayesclust.inference.mixtures.dp_mda2_gibbs.gibbs_dp_mda2`, explicit means) becomes
the pass of :func:`hard_dc`, which minimises

.. math::

    J(z) = \sum_i \|x_i - \mu_{z_i}\|^2 + \lambda k - \xi \log \mathrm{Polya}(c \mid z).
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
    assigned_squared_distances,
    compact_labels,
    nearest_center,
    padded_rows,
    polya_log_evidence,
    polya_log_predictive,
    segment_stats,
    sum_rows,
    weighted_means,
)
from .._driver import TRACE_PIECE, pow2_at_least, run_in_pieces
from ._common import _from_unit
from .dp_means import farthest_first_lambda

__all__ = [
    "hard_dc",
    "HardDCResult",
    "HardDCState",
    "HardDCInfo",
    "init_hard_dc_state",
    "hard_dc_step",
    "hard_dc_predict",
]

#: Relative tolerance of the objective-based stopping rule (as DP-means').
OBJECTIVE_TOL = 1e-12


class HardDCResult(NamedTuple):
    """Result of :func:`hard_dc`.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    centers : ndarray, shape (n_clusters, d)
        Cluster means.
    n_clusters : int
    objective : float
        :math:`J = \\sum_i |x_i - \\mu_{z_i}|^2 + \\lambda k - \\xi \\log \\mathrm{Polya}(c \\mid z)`
        of the returned state (minimised; :func:`bayesclust.metrics.hard_dc_objective`).
    objective_trace : ndarray, shape (n_iter + 1,)
        The objective after initialisation and after every iteration; never increases.
    n_iter : int
        Iterations run (one pass over the points and the mean update each).
    converged : bool
        The labels stopped changing or the objective stopped decreasing before ``max_iter``.
    lam : float
        The penalty per cluster used (a squared distance).
    xi : float
        The weight of the class term (a squared distance per nat).
    n0 : float
        The Dirichlet prior count per class.
    class_counts : ndarray of int, shape (n_clusters, n_classes)
        Points of each class (the codes ``0..C-1`` of the sorted distinct classes) per cluster.
    """

    labels: np.ndarray
    centers: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    lam: float
    xi: float
    n0: float
    class_counts: np.ndarray


class HardDCState(NamedTuple):
    """State of a HardDC run between two iterations.

    Made by :func:`init_hard_dc_state`, advanced by :func:`hard_dc_step`; :func:`hard_dc`
    loops over the step.  Clusters live in a fixed-capacity buffer: slots
    ``0..n_clusters-1`` of ``centers`` are active.  Rows whose class is ``-1`` are padding:
    never moved, counted in no statistic.

    Attributes
    ----------
    centers : array, shape (capacity, d)
        Cluster means in slots ``0..n_clusters-1``; the other slots are scratch space.
    n_clusters : int32 scalar
        Active clusters.
    labels : int32 array, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation (0 for padding).
    objective : scalar, dtype of ``X``
        :math:`J` of this state.
    objective_trace : array, shape (T,), dtype of ``X``
        The objective after initialisation and after iterations ``1..n_iter`` in entries
        ``0..n_iter``, NaN after them; ``T`` is the smallest power of two
        ``>= max_iter + 1`` (``max_iter`` given to the init).
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration left the labels unchanged or did not lower the objective
        (relative tolerance ``OBJECTIVE_TOL``).
    overflow : bool scalar
        The last step needed more than ``capacity`` slots and was discarded: every other
        field is that of the step's input state (``need`` apart).
    need : int32 scalar
        Slots the last pass asked for (an upper bound after an overflow; the initial
        state: its clusters).  Redo an overflowed step with at least ``need`` slots.
    """

    centers: jax.Array
    n_clusters: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    overflow: jax.Array
    need: jax.Array


class HardDCInfo(NamedTuple):
    """Diagnostics of one :func:`hard_dc_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        The step changed the labels (False when it was discarded).
    n_clusters : int32 scalar
        Clusters of the returned state.
    """

    objective: jax.Array
    changed: jax.Array
    n_clusters: jax.Array


# --------------------------------------------------------------------------- #
# One pass and the mean update
# --------------------------------------------------------------------------- #


def _new_cluster_log_predictive(n_classes: int, n0, dtype):
    """``log(n0_c / N0)`` of every class: the predictive of an empty (new) cluster."""
    empty = jnp.zeros((1, n_classes), dtype)
    return jax.vmap(lambda c: polya_log_predictive(empty, c, n0)[0])(jnp.arange(n_classes))


def _pass(X, classes, centers, k, labels, lam, xi, n0, n_classes: int):
    """One HardDC pass over the points in row order, means frozen (a ``lax.scan``).

    Point ``i`` (class ``c``) leaves its cluster (the class counts lose it: the "-i"
    predictives), then goes to the slot of least cost
    :math:`|x_i - \\mu_j|^2 - \\xi \\log \\mathrm{pred}_j(c)` among the slots ``< k_total``
    (lowest index on ties), unless opening a cluster at :math:`x_i` costs strictly less,
    :math:`\\lambda - \\xi \\log(n^0_c / N^0)`.  As in DP-means' pass
    (docs/deviations.md#dpmeans-own-cluster) every slot of the pass stays available until the
    end-of-pass deletion, the point's own singleton and clusters emptied earlier included.

    Returns ``(labels, centers, k_total, overflow, need)``; labels are uncompacted.
    """
    K, d = centers.shape
    dtype = X.dtype
    slots = jnp.arange(K, dtype=jnp.int32)
    classes_ = jnp.arange(n_classes, dtype=jnp.int32)
    real = classes >= 0
    c_safe = jnp.where(real, classes, 0)
    table = jax.ops.segment_sum(
        ((classes_[None, :] == c_safe[:, None]) & real[:, None]).astype(dtype), labels, K)
    new_cost = lam - xi * _new_cluster_log_predictive(n_classes, n0, dtype)  # (C,)

    def step(carry, inp):
        centers, k_total, table, overflow, extra = carry
        x, c, a, is_real = inp
        at_c = (classes_ == c).astype(dtype)
        table = table - jnp.where(is_real & (slots == a), 1.0, 0.0)[:, None] * at_c[None, :]
        dist = jnp.sum((centers - x[None, :]) ** 2, axis=1)
        cost = jnp.where(slots < k_total, dist - xi * polya_log_predictive(table, c, n0), jnp.inf)
        best = jnp.argmin(cost).astype(jnp.int32)
        open_ = is_real & (new_cost[c] < cost[best])
        full = k_total >= K
        slot = jnp.where(open_ & ~full, k_total, best)
        centers = jnp.where(((slots == k_total) & open_ & ~full)[:, None], x[None, :], centers)
        overflow = overflow | (open_ & full)
        extra = extra + (open_ & full).astype(jnp.int32)
        k_total = k_total + (open_ & ~full).astype(jnp.int32)
        slot = jnp.where(is_real, slot, a)
        table = table + jnp.where(is_real & (slots == slot), 1.0, 0.0)[:, None] * at_c[None, :]
        return (centers, k_total, table, overflow, extra), slot

    init = (centers, jnp.asarray(k, jnp.int32), table, jnp.asarray(False), jnp.int32(0))
    (centers, k_total, _, overflow, extra), new_labels = lax.scan(
        step, init, (X, c_safe, labels, real))
    return new_labels, centers, k_total, overflow, k_total + extra


def _objective(X, classes, centers, labels, k, lam, xi, n0, n_classes: int):
    """:math:`J` of a compacted state: direct squared distances, Polya evidence with its
    normaliser (``include_norm``: an empty slot adds exactly 0)."""
    dtype = X.dtype
    real = classes >= 0
    w = real.astype(dtype)
    sse = sum_rows(w * assigned_squared_distances(X, centers, labels))
    onehot = ((jnp.arange(n_classes)[None, :] == classes[:, None]) & real[:, None]).astype(dtype)
    table = jax.ops.segment_sum(onehot, labels, centers.shape[0])
    return sse + lam * k.astype(dtype) - xi * polya_log_evidence(table, n0, include_norm=True)


def _step(s: HardDCState, X, classes, lam, xi, n0, n_classes: int):
    """:func:`hard_dc_step` on prepared arguments."""
    K = s.centers.shape[0]
    dtype = X.dtype
    real = classes >= 0
    labels, assigned, k_total, overflow, need = _pass(
        X, classes, s.centers, s.n_clusters, s.labels, lam, xi, n0, n_classes)
    stats = segment_stats(X, labels, K, real.astype(dtype))
    nonempty = stats.weight > 0
    means = weighted_means(stats)
    labels, new_index, k = compact_labels(labels, nonempty)
    labels = jnp.where(real, labels, 0)
    centers = jnp.zeros_like(assigned).at[new_index].set(means, mode="drop")
    obj = _objective(X, classes, centers, labels, k, lam, xi, n0, n_classes)
    unchanged = jnp.all((labels == s.labels) | ~real)
    # Relative, with no absolute floor: the same test at every scale of the data.
    stalled = obj >= s.objective - OBJECTIVE_TOL * jnp.abs(s.objective)
    it = s.n_iter + 1
    new = HardDCState(centers, k, labels, obj, s.objective_trace.at[it].set(obj), it,
                      unchanged | stalled, jnp.asarray(False), k_total)
    out = lax.cond(overflow, lambda: s._replace(overflow=jnp.asarray(True), need=need),
                   lambda: new)
    return out, HardDCInfo(out.objective, ~(unchanged | out.overflow), out.n_clusters)


def hard_dc_step(state: HardDCState, X, classes, lam, xi, *, n0=1.0,
                 n_classes: int) -> tuple[HardDCState, HardDCInfo]:
    """One HardDC iteration: a pass over the points, the mean update, the stopping test.

    The pass (means frozen; a cluster opened in the pass sits at its seed point) moves
    every point in row order to the cluster of least
    :math:`|x_i - \\mu_j|^2 - \\xi \\log \\mathrm{pred}_j(c_i)` (its own class count
    removed) or opens one at :math:`x_i` when :math:`\\lambda - \\xi \\log(n^0_{c_i}/N^0)`
    is strictly less; then empty clusters are deleted, the survivors renumbered in order and
    the means recomputed.  The pass and the mean step each lower :math:`J` or leave it
    unchanged (every move takes its point's least cost; a cluster re-entered after it
    emptied in the same pass was paid for when it emptied).  :func:`hard_dc` is this step in a ``lax.while_loop`` from
    :func:`init_hard_dc_state`; stepping by hand on the data :func:`hard_dc` works on (the
    unit frame: centred, scaled by ``2**-e``, ``lam`` and ``xi`` by ``4**-e``) reproduces it
    (labels, iterations and float32 objectives bit for bit; float64 objectives to a relative
    1e-13, as XLA rounds the float64 log-gamma of the class term differently inside the
    loop's fusion).  Works eagerly and under
    ``jax.jit`` (``n_classes`` static); concrete arguments are checked (ranks, lengths,
    ``classes`` in ``-1..n_classes-1``), traced ones are not.

    Parameters
    ----------
    state : HardDCState
    X : array, shape (n, d)
    classes : int array, shape (n,)
        Class ``0..n_classes-1`` of every row, ``-1`` for a padding row.
    lam : float scalar
        Penalty per cluster (a squared distance, > 0).
    xi : float scalar
        Weight of the class term (>= 0; 0 is DP-means' pass).
    n0 : float scalar
        Dirichlet prior count per class (> 0).
    n_classes : int (static)

    Returns
    -------
    state : HardDCState
        The next state; after an overflow the input state with ``overflow`` set and
        ``need`` the slots to redo it with (pad ``centers`` with zero rows, reset
        ``overflow``).
    info : HardDCInfo

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3]])
    >>> c = np.array([0, 0, 1, 1])
    >>> state = init_hard_dc_state(X, c, 1.0, 5.0, n_classes=2)
    >>> while not state.converged:
    ...     state, info = hard_dc_step(state, X, c, 1.0, 5.0, n_classes=2)
    >>> state.labels.tolist()  # the class term splits what DP-means keeps together
    [1, 1, 0, 0]
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    V.check_rows_match(X, "X", state.labels)
    V.check_kernel_ids(classes, "classes", n_classes, padding=True)
    X = jnp.asarray(X)
    return _step(state, X, jnp.asarray(classes, jnp.int32), jnp.asarray(lam, X.dtype),
                 jnp.asarray(xi, X.dtype), jnp.asarray(n0, X.dtype), n_classes)


def _loop(X, classes, lam, xi, n0, max_iter, state: HardDCState, *, n_classes: int):
    def cond(s):
        return (s.n_iter < max_iter) & ~s.converged & ~s.overflow

    def body(s):
        return _step(s, X, classes, lam, xi, n0, n_classes)[0]

    return lax.while_loop(cond, body, state)


_run = jax.jit(_loop, static_argnames=("n_classes",))


def _initial_state(X, classes, labels, lam, xi, n0, capacity: int, trace_len: int,
                   n_classes: int):
    dtype = X.dtype
    real = classes >= 0
    stats = segment_stats(X, labels, capacity, real.astype(dtype))
    centers = weighted_means(stats)
    k = jnp.sum(stats.weight > 0, dtype=jnp.int32)
    obj = _objective(X, classes, centers, labels, k, lam, xi, n0, n_classes)
    trace = jnp.full(trace_len, jnp.nan, dtype).at[0].set(obj)
    return HardDCState(centers, k, labels, obj, trace, jnp.int32(0), jnp.asarray(False),
                       jnp.asarray(False), k)


_initial = jax.jit(_initial_state, static_argnames=("capacity", "trace_len", "n_classes"))


def init_hard_dc_state(X, classes, lam, xi, *, n0=1.0, n_classes: int, labels=None,
                       capacity=None, max_iter=100) -> HardDCState:
    """The state HardDC starts from: one cluster at the global mean (as DP-means, Kulis &
    Jordan's Algorithm 1), or the clusters of ``labels`` at their means.

    Parameters
    ----------
    X : array, shape (n, d)
    classes : int array, shape (n,)
        Class of every row, ``-1`` for padding.
    lam, xi, n0 : float scalars
        As :func:`hard_dc_step` (they enter the initial objective).
    n_classes : int
    labels : int array, shape (n,), optional
        A start partition, clusters numbered ``0..k-1`` (all non-empty); default one cluster.
    capacity : int, optional
        Slots of the centre buffer (default ``max(32, 2 k)``, at most ``2 n``).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    HardDCState
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    n_classes = V.check_int(n_classes, "n_classes", minimum=1)
    V.check_kernel_ids(classes, "classes", n_classes, padding=True)
    X = jnp.asarray(X)
    n = X.shape[0]
    classes = jnp.asarray(classes, jnp.int32)
    labels = jnp.zeros(n, jnp.int32) if labels is None else jnp.asarray(labels, jnp.int32)
    k0 = int(jnp.max(labels)) + 1
    if capacity is None:
        capacity = max(k0, min(32, pow2_at_least(2 * n)), pow2_at_least(2 * k0))
    capacity = V.check_int(capacity, "capacity", minimum=k0)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    dtype = X.dtype
    return _initial(X, classes, labels, jnp.asarray(lam, dtype), jnp.asarray(xi, dtype),
                    jnp.asarray(n0, dtype), capacity=capacity, trace_len=trace_len,
                    n_classes=n_classes)


def _grow(state: HardDCState, capacity: int) -> HardDCState:
    pad = capacity - state.centers.shape[0]
    return state._replace(centers=jnp.pad(state.centers, ((0, pad), (0, 0))),
                          overflow=jnp.asarray(False))


def check_classes(classes, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nominal auxiliary classes of ``n`` rows: ``(codes 0..C-1, the sorted distinct values)``.

    A ``ValueError`` names ``classes`` when they are not ``n`` integer labels (NaN, a
    wrong length, non-integral values).
    """
    values = V.check_labels(classes, "classes", n_samples=n)
    uniq, codes = np.unique(values, return_inverse=True)
    return codes.reshape(n).astype(np.int32), uniq


def hard_dc(X, classes, lam=None, xi: float = 1.0, *, n_clusters: int | None = None,
            n0: float = 1.0, max_iter: int = 100) -> HardDCResult:
    r"""HardDC: DP-means with a class term, the small-variance limit of a tempered DP-MDA2 (ours).

    Minimises

    .. math::

        J(z) = \sum_i \|x_i - \mu_{z_i}\|^2 + \lambda k - \xi \log \mathrm{Polya}(c \mid z),
        \qquad \log \mathrm{Polya}(c \mid z) = \sum_j \Big[\sum_c \log
        \frac{\Gamma(n_{jc} + n^0)}{\Gamma(n^0)} - \log \frac{\Gamma(N_j + C n^0)}{\Gamma(C n^0)}\Big]

    by the local search of DP-means (Kulis & Jordan 2012, Algorithm 1) with each point's
    cost of a cluster raised by :math:`-\xi \log \mathrm{pred}_j(c_i)`, its class's Polya
    predictive in that cluster without the point (:func:`hard_dc_step`).  Start: one
    cluster at the global mean.  ``xi = 0`` is DP-means exactly; :math:`\xi \to \infty`
    splits the data by class.  At a fixed ``k`` and :math:`\xi = 1 / \lambda_{VQ}`,
    :math:`-J / \xi` is Kaski et al.'s (2005, eq. 15) DC-VQ objective with the exact Polya
    evidence (eq. 9 with its normaliser), except that the training points' clusters are free
    rather than the prototypes' Voronoi cells; new points are clustered by the Voronoi cells
    of the centres (:func:`hard_dc_predict`), DC's "from the primary data alone".

    Our extension: the model, its sampler and this limit are derived here, not taken from a
    paper (docs/deviations.md#hard-dc-model).  It is the limit of
    :func:`bayesclust.inference.mixtures.dp_mda2_gibbs.gibbs_dp_mda2` (explicit means) as
    ``sigma2 -> 0``, one sweep of which is one pass here whenever no cluster empties during
    the pass (docs/deviations.md#dpmeans-own-cluster).

    Parameters
    ----------
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
        Auxiliary class of every point; nominal (any integers, relabelled ``0..C-1`` in
        increasing order).
    lam : float, optional
        Penalty per cluster, a squared distance (> 0).  None: the farthest-first value for
        ``n_clusters`` (:func:`bayesclust.farthest_first_lambda`, Kulis & Jordan §6.1).
    xi : float, default 1.0
        Weight of the class term, a squared distance per nat (>= 0).  It scales like
        ``lam``: ``X * s`` with ``lam * s**2`` and ``xi * s**2`` gives the same partition.
    n_clusters : int, optional
        Desired number of clusters, used only to choose ``lam`` when it is None.
    n0 : float, default 1.0
        Dirichlet prior count per class (> 0; Kaski et al. use 1).
    max_iter : int, default 100

    Returns
    -------
    HardDCResult

    Notes
    -----
    The data are centred and scaled by a power of two into DP-means' unit frame (exact);
    ``lam`` and ``xi`` are scaled by its square.  Ties go to the lowest cluster index and
    the new-cluster test is strict.  The run stops when the labels repeat, when :math:`J`
    did not decrease by more than ``1e-12 |J|``, or at ``max_iter``.  A pass is a
    sequential scan over the points (the class counts change with every move), ``O(n k (d
    + C))``.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012, §3.  S. Kaski, J. Sinkkonen and A. Klami, "Discriminative
    clustering", Neurocomputing 69 (2005), eqs. 9 and 15.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1]])
    >>> c = np.array([0, 0, 1, 1, 0, 0])
    >>> hard_dc(X, c, lam=1.0, xi=0.0).labels.tolist()  # DP-means
    [0, 0, 0, 0, 1, 1]
    >>> hard_dc(X, c, lam=1.0, xi=2.0).labels.tolist()  # the classes split the first group
    [0, 0, 1, 1, 2, 2]
    """
    X = V.check_array(X, "X")
    n, _ = X.shape
    codes, _ = check_classes(classes, n)
    n_classes = int(codes.max()) + 1
    xi = V.check_nonnegative(xi, "xi")
    n0 = V.check_positive(n0, "n0")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    if lam is None:
        if n_clusters is None:
            raise ValueError("give lam or n_clusters (farthest-first chooses lam for it)")
        k = V.check_int(n_clusters, "n_clusters", minimum=1)
        lam = farthest_first_lambda(X, min(k, n))
        if not lam > 0:
            raise ValueError(f"X has fewer than n_clusters={k} distinct rows: give lam")
    lam = V.check_positive(lam, "lam")
    mean = V.centre(X)
    Xs, e = V.to_unit_frame(X, mean, "X")
    nonconstant = bool(np.any(Xs))
    lam_s = V.check_unit_penalty(lam, "lam", e, Xs.dtype, n_terms=n, nonconstant=nonconstant)
    # The class term is at most n log(N0 / n0_c)-ish per point: bounded like lam's n terms.
    xi_s = V.check_unit_penalty(xi, "xi", e, Xs.dtype, n_terms=4 * n * max(1, n_classes),
                                nonconstant=False) if xi > 0 else 0.0
    # Rows padded to a shape bucket (class -1: never moved, in no statistic).
    n_pad = padded_rows(n)
    Xj = jnp.asarray(np.concatenate([Xs, np.zeros((n_pad - n, Xs.shape[1]), Xs.dtype)]))
    cj = jnp.asarray(np.concatenate([codes, np.full(n_pad - n, -1, np.int32)]))
    dtype = Xj.dtype
    lam_j, xi_j, n0_j = (np.asarray(v, dtype) for v in (lam_s, xi_s, n0))
    K_bound = pow2_at_least(2 * n)
    capacity = min(K_bound, 32)
    state = _initial(Xj, cj, jnp.zeros(n_pad, jnp.int32), lam_j, xi_j, n0_j,
                     capacity=capacity, trace_len=TRACE_PIECE, n_classes=n_classes)

    def grow(new):
        nonlocal capacity
        if not bool(new.overflow):
            return None
        capacity = min(max(2 * capacity, pow2_at_least(int(new.need))), K_bound)
        return _grow(new, capacity)

    state, traces, done = run_in_pieces(
        state, lambda todo, s: _run(Xj, cj, lam_j, xi_j, n0_j, todo, s, n_classes=n_classes),
        max_iter, grow=grow)
    k = int(state.n_clusters)
    labels = np.asarray(state.labels)[:n]
    table = np.zeros((k, n_classes), np.int64)
    np.add.at(table, (labels, codes), 1)
    return HardDCResult(
        labels=labels,
        centers=(np.ldexp(np.asarray(state.centers)[:k], e) + mean).astype(Xs.dtype),
        n_clusters=k,
        objective=math.ldexp(float(state.objective), 2 * e),
        objective_trace=_from_unit(traces["objective_trace"], e),
        n_iter=done,
        converged=bool(state.converged),
        lam=lam,
        xi=xi,
        n0=n0,
        class_counts=table,
    )


def hard_dc_predict(centers, X) -> np.ndarray:
    """Voronoi cell (nearest centre, lowest index on ties) of every row of ``X``.

    How HardDC clusters new points: from the primary data alone, as discriminative
    clustering does (Kaski et al. 2005, §2), the class term having shaped the centres.

    Parameters
    ----------
    centers : array_like, shape (k, d)
        :attr:`HardDCResult.centers`.
    X : array_like, shape (m, d)

    Returns
    -------
    ndarray of int, shape (m,)

    Examples
    --------
    >>> hard_dc_predict([[0.0], [5.0]], [[1.0], [4.0]]).tolist()
    [0, 1]
    """
    X = V.check_array(X, "X")
    C = V.check_array(centers, "centers").astype(X.dtype)
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but centers has {C.shape[1]}")
    # In the centres' unit frame: the squared distances neither overflow nor cancel.
    mean = V.centre(C)
    Cs, e = V.to_unit_frame(C, mean, "centers")
    Xs = np.ldexp(X - mean, -e).astype(Cs.dtype)
    return np.asarray(_nearest(jnp.asarray(Xs), jnp.asarray(Cs))).astype(np.intp)


@jax.jit
def _nearest(X, C):
    return nearest_center(X, C).index

