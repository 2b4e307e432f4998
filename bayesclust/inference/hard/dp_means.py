"""DP-means: the small-variance limit of the DP Gaussian mixture's Gibbs sampler.

Kulis & Jordan (2012), Algorithm 1, with exactly its semantics, computed in bulk
rather than by a scalar loop over points (see :func:`dp_means`).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import (
    NearestCenter,
    assigned_squared_distances,
    compact_labels,
    nearest_center,
    nearest_center_stats,
    padded_rows,
    segment_stats,
    squared_distances,
    squared_norms,
    sum_rows,
    weighted_means,
)
from .._driver import best_of_restarts, pow2_at_least, run_in_pieces
from .._sharding import check_mesh, shard_rows, to_host
from ._common import _CANDIDATE_BLOCK, _from_unit, _take_rows

__all__ = [
    "dp_means",
    "DPMeansResult",
    "DPMeansState",
    "DPMeansInfo",
    "init_dp_means_state",
    "dp_means_step",
    "farthest_first_lambda",
    "dp_means_pass",
    "dp_means_iteration",
]

#: Relative tolerance of the objective-based stopping rule (docs/deviations.md#dpmeans-pass-semantics).
OBJECTIVE_TOL = 1e-12
#: Candidate blocks per super-block of the new-cluster scan: one nearest-seed
#: step drops the super-block's candidates already covered by a seed.
_SUPER_BLOCKS = 16
#: Slot counts tried for the product against a pass's new centres (most
#: passes open few clusters; the product costs n x slots).
_NEW_TIERS = (32, 256)
#: Relative inflation (in units of the dtype's eps) of farthest-first lambda.
_TIE_ULPS = 16
#: Entries of the driver's objective-trace buffer: a run of more iterations
#: records its trace in pieces of ``_TRACE_LEN - 1`` (the buffer's length is a
#: shape, so a ``max_iter``-sized buffer would compile once per ``max_iter``).
_TRACE_LEN = 128
#: The starts of :func:`dp_means` (``init``).
_INITS = ("mean", "k-means++")
#: Rows of the host-side sample :func:`_initial_capacity` scans.
_CAPACITY_SAMPLE = 1024


class DPMeansResult(NamedTuple):
    """Result of :func:`dp_means`.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    centers : ndarray, shape (n_clusters, d)
        Cluster means (weighted means when ``sample_weight`` is given).
    n_clusters : int
    objective : float
        ``sum_i w_i |x_i - mu_{z_i}|^2 + lam * n_clusters`` of the returned state.
    objective_trace : ndarray, shape (n_iter + 1,)
        The minimised objective after initialisation and after every iteration;
        never increases.
    n_iter : int
        Iterations run (one iteration = one pass over the points + mean update).
    converged : bool
        True when the assignment stopped changing or the objective stopped
        decreasing before ``max_iter``.
    lam : float
        The penalty used.
    restart_objectives : ndarray of float, shape (n_init,)
        The final objective of every start, in order (the returned run is the
        first start with the lowest).
    """

    labels: np.ndarray
    centers: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    lam: float
    restart_objectives: np.ndarray | None = None


class DPMeansState(NamedTuple):
    """State of a DP-means run between two iterations.

    Made by :func:`init_dp_means_state`, advanced by :func:`dp_means_step`;
    :func:`dp_means` loops over the step.  Clusters live in a fixed-capacity
    buffer: slots ``0..n_clusters-1`` of ``centers`` are active.  Sharded
    (``axis_name``), ``labels`` holds the device's rows and every other field
    is replicated.

    Attributes
    ----------
    centers : array, shape (capacity, d)
        Cluster means in slots ``0..n_clusters-1`` (weighted means with
        weights); the other slots are scratch space.
    n_clusters : int32 scalar
        Active clusters.
    labels : int32 array, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    objective : scalar, dtype of ``X``
        ``sum_i w_i |x_i - mu_{z_i}|^2 + lam * n_clusters`` of this state.
    objective_trace : array, shape (T,), dtype of ``X``
        The objective after initialisation and after iterations ``1..n_iter``
        in entries ``0..n_iter``, NaN after them; ``T``, the smallest power of
        two ``>= max_iter + 1`` (``max_iter`` given to the init), bounds what is
        recorded (later iterations are not).
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration left the labels unchanged or did not lower the
        objective (relative tolerance ``OBJECTIVE_TOL``).
    overflow : bool scalar
        The last step needed more than ``capacity`` slots and was discarded:
        every other field is that of the step's input state (``need`` apart).
    limit_hit : bool scalar
        The last step gave more than ``max_clusters`` clusters and was
        discarded (every other field is that of the step's input state).
    need : int32 scalar
        Clusters the last pass held before empty ones were deleted (the
        initial state: 1).  After an overflow, a buffer of at least ``need``
        slots is needed to redo the step.
    """

    centers: jax.Array
    n_clusters: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    overflow: jax.Array
    limit_hit: jax.Array
    need: jax.Array


class DPMeansInfo(NamedTuple):
    """Diagnostics of one :func:`dp_means_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        The step changed the labels (False when it was discarded).
    """

    objective: jax.Array
    changed: jax.Array


# --------------------------------------------------------------------------- #
# One pass of Algorithm 1, in bulk
# --------------------------------------------------------------------------- #


def _greedy_in_order(close, eligible):
    """Sequential greedy acceptance, decided in parallel rounds.

    Candidate ``j`` is accepted iff it is eligible and no *accepted* earlier
    candidate ``l < j`` has ``close[j, l]``: exactly the serial scan in data
    order.  Each round decides every undecided candidate whose earlier close
    neighbours are all decided (at least the first undecided one), so the
    number of rounds is the longest chain of dependencies, not ``B``.

    Parameters
    ----------
    close : bool array, shape (B, B)
    eligible : bool array, shape (B,)

    Returns
    -------
    bool array, shape (B,)
    """
    B = close.shape[0]
    earlier = jnp.arange(B)[None, :] < jnp.arange(B)[:, None]
    depends = close & earlier & eligible[None, :]

    def undecided_left(carry):
        return ~jnp.all(carry[1])

    def round_(carry):
        accepted, decided = carry
        waiting = jnp.any(depends & ~decided[None, :], axis=1)
        ready = ~decided & ~waiting
        blocked = jnp.any(depends & accepted[None, :], axis=1)
        return accepted | (ready & ~blocked), decided | ready

    init = (jnp.zeros(B, bool), ~eligible)
    return lax.while_loop(undecided_left, round_, init)[0]


def _open_clusters(X, w, is_candidate, lam, capacity, room, axis_name=None, n_rows=None):
    """Serial new-cluster decisions among the candidates, in data order.

    Candidate ``j`` (already farther than ``lam / w_j`` from every old centre)
    opens a cluster iff ``w_j |x_j - x_l|^2 > lam`` for every earlier accepted
    candidate ``l``.  The candidates are visited in super-blocks of
    ``_SUPER_BLOCKS * B``: one nearest-seed step drops those already within
    ``lam`` of a seed accepted before the super-block (they can never open a
    cluster: seeds only accumulate), and the rest are taken in blocks of
    ``B`` -- a product against the seeds accepted so far, then the serial
    decisions within the block from a ``B x B`` "too close" table
    (:func:`_greedy_in_order`).  When a first pass on many points opens
    clusters, almost every candidate after the first super-blocks is covered,
    so the serial blocks visit only the few that are not (a much faster
    first pass from the global mean: BENCHMARKS.md).

    ``room`` (int scalar): free slots of the caller's
    centre buffer.  The scan stops at the first block after which more than
    ``room`` seeds were accepted: the pass has overflowed and will be redone
    with a bigger buffer, so the remaining candidates need not be visited (an
    early pass on 1M points can otherwise spend a full candidate scan per
    buffer doubling).

    With ``axis_name`` (inside ``shard_map``) ``X`` and ``w`` are this
    device's rows, ``is_candidate`` is the *global* mask (all rows, in order)
    and ``n_rows`` the number of real rows; the candidates' coordinates are
    assembled super-block by super-block (:func:`_take_rows`) and the
    decisions are replicated: every device computes the same seeds.

    Returns
    -------
    seeds : array, shape (capacity, d)
        The accepted seed points in order (first ``n_new`` rows valid).
    seed_rows : int32 array, shape (capacity,)
        Their row indices.
    n_new : int scalar
        Number of accepted seeds; if it exceeds ``room`` (overflow) it counts
        only the candidates visited before the scan stopped.
    """
    n = is_candidate.shape[0]
    d = X.shape[1]
    if n_rows is None:
        # Sizes from the shape bucket of n, not n: a padded run and the unpadded
        # one use the same blocks, hence the same rounding in their products.
        n_bucket = padded_rows(n)
        B = min(_CANDIDATE_BLOCK, n_bucket)
        S = min(B * _SUPER_BLOCKS, -(-n_bucket // B) * B)
    else:
        B = min(_CANDIDATE_BLOCK, n_rows)
        S = min(B * _SUPER_BLOCKS, n_rows)
        S = -(-S // B) * B  # whole blocks
    n_cand = jnp.sum(is_candidate, dtype=jnp.int32)
    # Padding by one super-block lets every slice stay in bounds.
    cand_rows = jnp.nonzero(is_candidate, size=n + S, fill_value=0)[0].astype(jnp.int32)
    slot = jnp.arange(capacity)

    def more_super_blocks(carry):
        sb, _, _, n_new = carry
        return (sb * S < n_cand) & (n_new <= room)

    def super_block(carry):
        sb, seeds, seed_rows, n_new = carry
        start = sb * S
        rows_s = lax.dynamic_slice_in_dim(cand_rows, start, S)
        Xs, ws = _take_rows(rows_s, axis_name, X, w)
        nearest = nearest_center(Xs, seeds, slot < n_new)
        open_ = (start + jnp.arange(S) < n_cand) & (ws * nearest.sq_dist > lam)
        n_open = jnp.sum(open_, dtype=jnp.int32)
        order = jnp.nonzero(open_, size=S + B, fill_value=0)[0].astype(jnp.int32)

        def more_blocks(carry):
            b, _, _, n_new = carry
            return (b * B < n_open) & (n_new <= room)

        def block(carry):
            b, seeds, seed_rows, n_new = carry
            idx = lax.dynamic_slice_in_dim(order, b * B, B)
            Xb, wb, rows = Xs[idx], ws[idx], rows_s[idx]
            xb_sq = squared_norms(Xb)
            near_seed = wb[:, None] * squared_distances(Xb, seeds, xb_sq) <= lam
            covered = jnp.any(near_seed & (slot < n_new)[None, :], axis=1)
            close = wb[:, None] * squared_distances(Xb, Xb, xb_sq, xb_sq) <= lam
            in_range = b * B + jnp.arange(B) < n_open
            acc = _greedy_in_order(close, in_range & ~covered)
            pos = jnp.where(acc, n_new + jnp.cumsum(acc) - 1, capacity)
            seeds = seeds.at[pos].set(Xb, mode="drop")
            seed_rows = seed_rows.at[pos].set(rows, mode="drop")
            return b + 1, seeds, seed_rows, n_new + jnp.sum(acc, dtype=jnp.int32)

        inner = (jnp.int32(0), seeds, seed_rows, n_new)
        return (sb + 1, *lax.while_loop(more_blocks, block, inner)[1:])

    init = (
        jnp.int32(0), jnp.zeros((capacity, d), X.dtype), jnp.zeros(capacity, jnp.int32),
        jnp.int32(0),
    )
    return lax.while_loop(more_super_blocks, super_block, init)[1:]


def dp_means_pass(X, w, centers, k, lam, *, axis_name=None, n_rows=None):
    """One assignment pass of DP-means Algorithm 1 (means frozen), computed in bulk.

    Equivalent to the per-point loop: point ``i`` (in row order) opens a new
    cluster at ``x_i`` iff ``w_i * min_c |x_i - mu_c|^2 > lam`` over the old
    centres and the centres opened by earlier points in this pass; otherwise it
    joins the nearest of those (lowest index on ties).

    Bulk form: (1) distances to the pass's starting centres; (2) a serial scan
    over the few *candidates* farther than ``lam`` from all of them (only
    these can open clusters); (3) an argmin in which point ``i`` sees only new
    centres opened at or before ``i``.

    Parameters
    ----------
    X : array, shape (n, d)
    w : array, shape (n,)
        Positive sample weights.
    centers : array, shape (K_cap, d)
        Centre buffer; slots ``0..k-1`` are active.
    k : int scalar
    lam : float scalar
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows sharded over this mesh axis:
        ``X`` and ``w`` are the device's block of rows (block ``p`` holds
        global rows ``p*m .. p*m+m-1``), ``centers`` and ``k`` are replicated.
        The candidate mask is all-gathered and the new clusters are validated
        identically on every device in global row order.
    n_rows : int, optional
        With ``axis_name``: the number of real (unpadded) rows in total.

    Returns
    -------
    labels : int32 array, shape (n,)
        Uncompacted: old clusters keep their index, new ones are ``k, k+1, ...``.
    sq_dist : array, shape (n,)
        Exact squared distance of every point to the centre it was assigned to.
    centers : array, shape (K_cap, d)
        Buffer with the new centres (seed points) appended.
    k_total : int scalar
        ``k`` plus the number of new clusters.
    overflow : bool scalar
        More than ``K_cap`` clusters (before empty ones are deleted) were
        needed; the outputs are then invalid.
    """
    X, w, centers = _check_pass_arrays(X, w, centers, k, lam)
    return _pass(X, w, centers, k, lam, None, axis_name, n_rows, with_stats=False)[:5]


def _check_pass_arrays(X, w, centers, k, lam):
    """The public pass's arrays checked (shapes and dtypes only when traced)."""
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    w = V.check_kernel_array(w, "w", ndim=1)
    centers = V.check_kernel_array(centers, "centers", ndim=2, min_rows=1)
    V.check_same_length(w, X, "w", "X")
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers has {centers.shape[1]} columns, X has {X.shape[1]}")
    if not V.traced(w) and bool(np.any(np.asarray(w) < 0)):
        raise ValueError("w must be non-negative (sample weights)")
    if not V.traced(k):
        k_host = np.asarray(k)
        if k_host.ndim != 0 or k_host.dtype.kind not in "iu" or int(k_host) < 0:
            raise TypeError(f"k must be a non-negative integer scalar, got {k!r}")
        if int(k) > centers.shape[0]:
            raise ValueError(f"k={int(k)} exceeds the centre buffer's {centers.shape[0]} slots")
    if not V.traced(lam):
        lam_host = np.asarray(lam)
        if lam_host.dtype.kind not in "iuf" or np.any(np.isnan(lam_host)) or np.any(lam_host < 0):
            raise ValueError(f"lam must be a non-negative penalty, got {lam!r}")
    return X, w, centers


def _pass(X, w, centers, k, lam, Xw, axis_name, n_rows, with_stats=True):
    """:func:`dp_means_pass` plus the pass's per-device ``SegmentStats``.

    The distances to the pass's starting centres come with the statistics of
    that assignment (one pass over ``X``, :func:`nearest_center_stats`); when
    no point is a candidate -- every pass once the clusters have stopped
    opening -- they are the pass's statistics, and the mean step does not
    read ``X`` again.  ``with_stats=False`` (static): the statistics are
    ``None`` and never computed.
    """
    K_cap = centers.shape[0]
    k = jnp.asarray(k, jnp.int32)
    valid = jnp.arange(K_cap) < k
    if with_stats:
        old, old_stats = nearest_center_stats(X, centers, valid, w, weighted_X=Xw)
    else:
        old, old_stats = nearest_center(X, centers, valid), None
    is_candidate = w * old.sq_dist > lam
    if axis_name is None:
        offset, all_candidates = 0, is_candidate
    else:
        offset = lax.axis_index(axis_name) * X.shape[0]
        all_candidates = lax.all_gather(is_candidate, axis_name, tiled=True)

    def open_new_clusters(_):
        seeds, seed_rows, n_new = _open_clusters(
            X, w, all_candidates, lam, K_cap, K_cap - k, axis_name, n_rows
        )

        def nearest_new(m):
            # Only the first m slots can hold new centres (m static): most
            # passes open few clusters, so try a small product first.
            return lambda _: nearest_center(
                X, seeds[:m], jnp.arange(m) < n_new, birth=seed_rows[:m], row_offset=offset
            )

        def overflowed(_):
            # The pass is discarded and redone with a bigger buffer: skip the product.
            return NearestCenter(jnp.full_like(old.sq_dist, jnp.inf), old.index)

        overflow = k + n_new > K_cap
        tiers = sorted({min(K_cap, t) for t in _NEW_TIERS} | {K_cap})
        tier = jnp.searchsorted(jnp.asarray(tiers), n_new)  # smallest tier holding n_new
        branch = jnp.where(overflow, len(tiers), jnp.minimum(tier, len(tiers) - 1))
        new = lax.switch(branch, [nearest_new(t) for t in tiers] + [overflowed], None)
        # Old centres have lower indices, so they win ties.
        use_new = new.sq_dist < old.sq_dist
        labels = jnp.where(use_new, k + new.index, old.index).astype(jnp.int32)
        sq_dist = jnp.where(use_new, new.sq_dist, old.sq_dist)
        buffer_rows = jnp.where(jnp.arange(K_cap) < n_new, k + jnp.arange(K_cap), K_cap)
        grown = centers.at[buffer_rows].set(seeds, mode="drop")
        # An overflowed pass is discarded: skip its statistics (an O(n d) pass).
        stats = None if not with_stats else lax.cond(
            overflow,
            lambda: old_stats,
            lambda: segment_stats(X, labels, K_cap, w, weighted_X=Xw),
        )
        return labels, sq_dist, grown, k + n_new, overflow, stats

    def keep_old(_):
        return old.index, old.sq_dist, centers, k, jnp.asarray(False), old_stats

    return lax.cond(jnp.any(all_candidates), open_new_clusters, keep_old, None)


def _mean_step(w, labels, sq_dist, assigned_centers, k_total, lam, stats, axis_name=None):
    """Delete empty clusters, recompute means, and evaluate the objective.

    The sum of squares at the new means comes from the pass's exact distances
    by the parallel-axis identity, per cluster
    ``sum w |x - a|^2 = sum w |x - m|^2 + W |m - a|^2`` (``a`` the centre used in
    the pass, ``m`` the new mean, ``W`` the cluster's weight): ``O(k d)``
    instead of another ``O(n d)`` pass over the data.  ``stats`` are the
    pass's ``SegmentStats`` of ``labels``; with ``axis_name`` the per-device
    statistics and sums are combined by ``psum``.
    """
    K_cap = assigned_centers.shape[0]
    if axis_name is not None:
        stats = lax.psum(stats, axis_name)
    nonempty = (stats.weight > 0) & (jnp.arange(K_cap) < k_total)
    means = weighted_means(stats)
    shift = jnp.sum(stats.weight * jnp.sum((means - assigned_centers) ** 2, axis=1))
    total = sum_rows(w * sq_dist)
    if axis_name is not None:
        total = lax.psum(total, axis_name)
    sse = jnp.maximum(total - shift, 0.0)
    labels, new_index, k = compact_labels(labels, nonempty)
    centers = jnp.zeros_like(stats.sum).at[new_index].set(means, mode="drop")
    return centers, labels, k, sse + lam * k


# --------------------------------------------------------------------------- #
# The iteration
# --------------------------------------------------------------------------- #


def dp_means_iteration(X, w, centers, k, lam, Xw=None, *, axis_name=None, n_rows=None):
    """One DP-means iteration: an assignment pass and the mean update.

    ``Xw = w[:, None] * X`` may be passed precomputed (it is loop-invariant).
    Returns ``(centers, labels, k, objective, k_total, overflow)`` with the
    clusters compacted to ``0..k-1``; ``k_total`` is the number of clusters
    before empty ones were deleted (see :func:`dp_means_pass`).  ``axis_name``
    and ``n_rows``: the sharded form, see :func:`dp_means_pass`.
    """
    X, w, centers = _check_pass_arrays(X, w, centers, k, lam)
    labels, sq_dist, assigned, k_total, overflow, stats = _pass(
        X, w, centers, k, lam, Xw, axis_name, n_rows
    )
    return (
        *_mean_step(w, labels, sq_dist, assigned, k_total, lam, stats, axis_name),
        k_total,
        overflow,
    )


def _step(s: DPMeansState, X, w, lam, max_k, axis_name=None, n_rows=None):
    """:func:`dp_means_step` on prepared arguments (``max_k`` None: no limit)."""
    centers, labels, k, obj, k_total, overflow = dp_means_iteration(
        X, w, s.centers, s.n_clusters, lam, axis_name=axis_name, n_rows=n_rows
    )
    if axis_name is None:
        unchanged = jnp.all((labels == s.labels) | (w <= 0))  # weight 0: padding rows
    else:
        changed = jnp.sum((labels != s.labels) & (w > 0), dtype=jnp.int32)
        unchanged = lax.psum(changed, axis_name) == 0
    # Relative, with no absolute floor: the test is the same at every scale of the data.
    stalled = obj >= s.objective - OBJECTIVE_TOL * jnp.abs(s.objective)
    it = s.n_iter + 1
    new = DPMeansState(
        centers, k, labels, obj, s.objective_trace.at[it].set(obj), it, unchanged | stalled,
        jnp.asarray(False), jnp.asarray(False), k_total,
    )
    def applied():
        if max_k is None:
            return new
        return lax.cond(k > max_k, lambda: s._replace(limit_hit=jnp.asarray(True)), lambda: new)

    out = lax.cond(overflow, lambda: s._replace(overflow=jnp.asarray(True), need=k_total), applied)
    return out, DPMeansInfo(out.objective, ~(unchanged | out.overflow | out.limit_hit))


def dp_means_step(state: DPMeansState, X, lam, *, sample_weight=None, max_clusters=None,
                  axis_name=None, n_rows=None) -> tuple[DPMeansState, DPMeansInfo]:
    """One DP-means iteration on a state: an assignment pass, the mean update, the stopping test.

    The pass is :func:`dp_means_pass` (Algorithm 1's loop over the points,
    means frozen, computed in bulk); then empty clusters are deleted, the
    survivors relabelled in order and the means recomputed
    (:func:`dp_means_iteration`).  :func:`dp_means` is this step in a
    ``lax.while_loop`` from :func:`init_dp_means_state`, stopped by
    ``converged``, ``overflow``, ``limit_hit`` or ``max_iter``; stepping by hand
    on the same (centred) data reproduces it exactly.  Works eagerly and under
    ``jax.jit``; concrete arguments are checked (traced ones are the compiled caller's to
    check).

    Parameters
    ----------
    state : DPMeansState
    X : array, shape (n, d)
        The data the state was made from.  :func:`dp_means` works on
        ``(X - mean) * 2**-e`` (the weighted mean, subtracted in the input
        dtype; ``e`` puts the largest value in [0.5, 1)) with ``lam * 4**-e``;
        the power of two is exact, so stepping on ``X - mean`` with ``lam``
        gives the same labels and iteration count.
    lam : float scalar
        Penalty per cluster (a squared distance), ``>= 0``.
    sample_weight : array, shape (n,), optional
        Non-negative weights (default 1; weight 0 marks a padding row).
    max_clusters : int scalar, optional
        A step that gives more clusters is discarded and sets ``limit_hit``.
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows sharded over this mesh axis
        (see :func:`dp_means_pass`); rows of weight 0 are padding.
    n_rows : int, optional
        With ``axis_name``: the number of real rows in total.

    Returns
    -------
    state : DPMeansState
        The next state.  When the pass needed more than ``capacity`` slots, the
        input state with ``overflow`` set and ``need`` the slots the pass asked
        for: redo the step on the state with ``centers`` padded by zero rows to
        at least ``need`` slots and ``overflow`` reset (what :func:`dp_means`
        does, doubling at least; a new capacity is a new compilation).
    info : DPMeansInfo
        ``objective`` of the returned state and whether the labels ``changed``.

    Raises
    ------
    ValueError, TypeError
        Naming ``X`` (not finite, not one row per state label or not the centres'
        columns, squared distances beyond the state's dtype), ``lam`` (negative or not a
        number), ``sample_weight`` (not one finite non-negative weight per row),
        ``max_clusters`` or ``n_rows`` (not a positive integer).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]], np.float32)
    >>> state = init_dp_means_state(X, 1.0)
    >>> while not state.converged:
    ...     state, info = dp_means_step(state, X, 1.0)
    >>> int(state.n_clusters), state.labels.tolist(), int(state.n_iter)
    (2, [0, 0, 1, 1], 2)
    """
    X = V.check_step_data(X, state.labels, state.centers, state.centers.dtype)
    sample_weight = V.check_step_weights(sample_weight, X)
    lam = V.check_step_scalar(lam, "lam")
    max_clusters = V.check_step_scalar(max_clusters, "max_clusters", minimum=1, integer=True,
                                       optional=True)
    n_rows = V.check_step_scalar(n_rows, "n_rows", minimum=1, integer=True, optional=True)
    X = jnp.asarray(X)
    w = _weights(sample_weight, X)
    lam = jnp.asarray(lam, X.dtype)
    return _step(state, X, w, lam, max_clusters, axis_name, n_rows)


def _weights(sample_weight, X):
    if sample_weight is None:
        return jnp.ones(X.shape[0], X.dtype)
    return jnp.asarray(sample_weight, X.dtype)


def _loop(X, w, lam, max_k, max_iter, state: DPMeansState, axis_name=None, n_rows=None):
    """The iteration loop; with ``axis_name``, the per-device body of the sharded run.

    Sharded, rows of weight 0 are padding: they never open a cluster, add
    nothing to the statistics and are ignored by the convergence test.
    """
    # No precomputed w * X: the native kernel weights the rows as it sums them,
    # and an (n, d) copy of X costs memory and time (BENCHMARKS.md).

    def cond(s: DPMeansState):
        return (s.n_iter < max_iter) & ~s.converged & ~s.overflow & ~s.limit_hit

    def body(s: DPMeansState):
        return _step(s, X, w, lam, max_k, axis_name, n_rows)[0]

    return lax.while_loop(cond, body, state)


_run = jax.jit(_loop)


def _initial_state(X, w, lam, K_cap, trace_len, axis_name=None):
    n, d = X.shape
    if axis_name is None:
        mean = sum_rows(w[:, None] * X) / sum_rows(w)
    else:
        wx, ws = lax.psum((jnp.sum(w[:, None] * X, axis=0), jnp.sum(w)), axis_name)
        mean = wx / ws
    centers = jnp.zeros((K_cap, d), X.dtype).at[0].set(mean)
    labels = jnp.zeros(n, jnp.int32)
    objective = sum_rows(w * assigned_squared_distances(X, centers, labels))
    if axis_name is not None:
        objective = lax.psum(objective, axis_name)
    objective = objective + lam
    trace = jnp.full(trace_len, jnp.nan, X.dtype).at[0].set(objective)
    return DPMeansState(
        centers, jnp.asarray(1, jnp.int32), labels, objective, trace,
        jnp.asarray(0, jnp.int32), jnp.asarray(False), jnp.asarray(False), jnp.asarray(False),
        jnp.asarray(1, jnp.int32),
    )


# Compiled: run op by op, its (n, d) temporaries cost time at scale (BENCHMARKS.md).
_initial = jax.jit(_initial_state, static_argnums=(3, 4))


def init_dp_means_state(X, lam, *, sample_weight=None, capacity=None, max_iter=100,
                        axis_name=None, centers=None) -> DPMeansState:
    """The state DP-means starts from (Algorithm 1): one cluster at the weighted global mean.

    With ``centers``, the state a k-means++ start begins from
    (docs/deviations.md#dpmeans-restarts): those centres, no point assigned
    yet (``labels`` -1, so the first step counts as a change) and the
    objective of every point at its nearest centre plus ``lam`` per centre.

    Parameters
    ----------
    X : array, shape (n, d)
        Data (see :func:`dp_means_step` for the centring :func:`dp_means` applies).
    lam : float scalar
        Penalty per cluster (it enters the initial objective).
    sample_weight : array, shape (n,), optional
        Positive weights (default 1).
    capacity : int, optional
        Slots of the centre buffer; default ``min(32, 2 ** ceil(log2(2 n)))``,
        where :func:`dp_means` starts (sharded, ``n`` would be the device's
        rows: pass it).  A pass may need up to twice the number of clusters
        before empty ones are deleted.
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows of ``X`` and ``sample_weight``
        sharded over this mesh axis (not with ``centers``).
    centers : array, shape (m, d), optional
        Start from these centres (``capacity`` at least ``m``; default
        ``max(32, 2 ** ceil(log2(2 m)))``).

    Returns
    -------
    DPMeansState
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    X = jnp.asarray(X)
    if capacity is None:
        m = 1 if centers is None else len(centers)
        capacity = min(32, pow2_at_least(2 * X.shape[0])) if centers is None else max(
            32, pow2_at_least(2 * m))
    else:
        capacity = V.check_int(capacity, "capacity", minimum=1)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    w = _weights(sample_weight, X)
    lam = jnp.asarray(lam, X.dtype)
    if axis_name is not None:
        if centers is not None:
            raise ValueError("centers cannot be given with axis_name")
        return _initial_state(X, w, lam, capacity, trace_len, axis_name=axis_name)
    state = _initial(X, w, lam, capacity, trace_len)
    if centers is None:
        return state
    C = jnp.asarray(centers, X.dtype)
    if C.ndim != 2 or C.shape[1] != X.shape[1] or not 1 <= C.shape[0] <= capacity:
        raise ValueError(f"centers must have shape (m, {X.shape[1]}) with 1 <= m <= capacity "
                         f"({capacity}), got {C.shape}")
    sse = sum_rows(w * nearest_center(X, C).sq_dist)
    return _start_from(state, C, sse + lam * C.shape[0])


def _start_from(state: DPMeansState, seeds, objective) -> DPMeansState:
    """``state`` (an init's) moved to start from the centres ``seeds`` with that ``objective``.

    No point is assigned yet (labels -1): the first step always counts as a change.
    """
    objective = jnp.asarray(objective, state.objective.dtype)
    return state._replace(
        centers=state.centers.at[: seeds.shape[0]].set(seeds),
        n_clusters=jnp.int32(seeds.shape[0]), labels=state.labels * 0 - 1,
        objective=objective, objective_trace=state.objective_trace.at[0].set(objective),
    )


# --------------------------------------------------------------------------- #
# Sharded execution
# --------------------------------------------------------------------------- #


def _state_specs(axis):
    from jax.sharding import PartitionSpec as P

    return DPMeansState(P(), P(), P(axis), P(), P(), P(), P(), P(), P(), P())


@functools.cache
def _sharded_fns(mesh, axis, n_rows, K_cap, trace_len):
    """Jitted ``shard_map`` forms of :func:`_initial_state` and :func:`_loop` on ``mesh``."""
    from jax.sharding import PartitionSpec as P

    specs = _state_specs(axis)
    init = jax.jit(
        jax.shard_map(
            lambda X, w, lam: _initial_state(X, w, lam, K_cap, trace_len, axis_name=axis),
            mesh=mesh, in_specs=(P(axis), P(axis), P()), out_specs=specs, check_vma=False,
        )
    )
    run = jax.jit(
        jax.shard_map(
            functools.partial(_loop, axis_name=axis, n_rows=n_rows),
            mesh=mesh, in_specs=(P(axis), P(axis), P(), P(), P(), specs), out_specs=specs,
            check_vma=False,
        )
    )
    return init, run


def _grow(state: DPMeansState, K_cap: int) -> DPMeansState:
    pad = K_cap - state.centers.shape[0]
    return state._replace(
        centers=jnp.pad(state.centers, ((0, pad), (0, 0))), overflow=jnp.asarray(False)
    )




def dp_means(
    X,
    lam,
    *,
    sample_weight=None,
    max_iter: int = 100,
    max_clusters: int | None = None,
    order=None,
    mesh=None,
    n_init: int = 1,
    init: str = "mean",
    rng_key=None,
) -> DPMeansResult:
    r"""DP-means clustering (Kulis & Jordan 2012, Algorithm 1).

    Minimises :math:`J = \sum_i w_i \|x_i - \mu_{z_i}\|^2 + \lambda k` by local
    search: start with one cluster at the (weighted) global mean; in each
    iteration visit the points in order, open a new cluster at :math:`x_i` when
    :math:`w_i \min_c \|x_i - \mu_c\|^2 > \lambda`, else assign :math:`x_i` to
    its nearest centre; then delete empty clusters and recompute the means.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data.  float64 input is computed in float64 when ``jax_enable_x64``
        is on, otherwise in float32.
    lam : float
        Penalty per cluster, a **squared** distance (> 0).  Larger values give
        fewer clusters; ``lam >= max_i w_i |x_i - mean|^2`` gives one cluster.
        See :func:`farthest_first_lambda` to pick it from a desired ``k``.
    sample_weight : array_like, shape (n,), optional
        Non-negative weights :math:`w_i`.  A point of weight 0 has no
        influence (it is assigned to its nearest final centre afterwards).
    max_iter : int, default 100
        Maximum number of iterations (passes + mean updates).
    max_clusters : int, optional
        Upper bound on the number of clusters.  Buffers grow by doubling up to
        it (default: ``n``); if a pass needs more, the run stops at the last
        complete iteration with ``converged=False`` and a warning.
    order : array_like of int, shape (n,), optional
        Processing order (a permutation of ``range(n)``).  DP-means depends on
        the order; the default is the given row order.  For a random order use
        ``order=jax.random.permutation(rng_key, n)``.
    mesh : jax.sharding.Mesh, optional
        Run sharded: the rows are split over the devices of this mesh, which
        must have exactly one (data) axis, e.g.
        ``Mesh(np.array(jax.devices()), ("data",))``.  The result is the
        single-device result (see Notes).  ``X`` may be a NumPy array or an
        already sharded ``jax.Array``; it is (re)sharded here, padded with
        zero-weight rows to a multiple of the number of devices.
    n_init : int, default 1
        Starts; the run with the lowest final objective is returned (the
        first on ties) and every start's final objective is in
        ``restart_objectives``.  With ``init="mean"`` the starts differ by
        their pass orders (random permutations drawn from ``rng_key``;
        ``order`` must then be None), with ``init="k-means++"`` by their
        seeds.  Restarts compile nothing per ``n_init``: every start runs the
        same compiled programs.
    init : {"mean", "k-means++"}, default "mean"
        ``"mean"``: Algorithm 1's start, one cluster at the weighted global
        mean.  ``"k-means++"``: start from centres drawn by D^2 seeding
        (Arthur & Vassilvitskii 2007; the first with probability
        :math:`\propto w_i`, the next :math:`\propto w_i D_i^2`) until every
        point has :math:`w_i D_i^2 \le \lambda` to its nearest seed, then
        Algorithm 1's iterations (docs/deviations.md#dpmeans-restarts).
    rng_key : jax.random key or int, optional
        Randomness of the starts; required when ``n_init > 1`` or
        ``init="k-means++"`` (start ``i`` uses ``fold_in(rng_key, i)``).

    Returns
    -------
    DPMeansResult
        ``labels, centers, n_clusters, objective, objective_trace, n_iter,
        converged, lam, restart_objectives``.

    Notes
    -----
    **Exact Algorithm 1 semantics.**  Means are frozen during a pass, except
    that a cluster opened in the pass sits at its seed point, visible to the
    points after it.  Ties go to the lowest cluster index (older clusters) and
    the new-cluster test is strict, so a tie keeps the point in an existing
    cluster.  Empty clusters are deleted after each pass and the survivors
    relabelled in order.  The run stops when the (relabelled) assignment is
    unchanged, when :math:`J` did not decrease by more than ``1e-12 |J|``
    (relative, no absolute floor), or at ``max_iter``.

    **Bulk computation.**  A pass is not a scalar loop over points: the
    distances to the pass's starting centres are one blocked product; only the
    candidates farther than :math:`\lambda` from all of them can open
    clusters, and they are validated by a short serial scan; a final argmin in
    which point :math:`i` sees only the new centres opened at or before
    :math:`i` reproduces the per-point loop exactly (see ``dp_means_pass``).

    **Restarts** (ours: docs/deviations.md#dpmeans-restarts).  Algorithm 1 is
    a local search; ``n_init`` starts keep the lowest final objective.  With
    farthest-first ``lam`` on make_blobs 100k x 2 (10 centres) the given
    order reaches 315,809, the best of 10 random orders 255,932, ten
    k-means++ starts 168,532 (pdc-dp-means: 223,919); on 100k x 16 (50
    centres) 1,618,478, 1,618,478 and 1,586,860 (pdc-dp-means: 10,686,503).
    The k-means++ starts cost more iterations (BENCHMARKS.md, "DP-means
    restarts").  The seeds are drawn on one device, also for a sharded run.

    **Weights** (ours; Kulis & Jordan do not spell out the rule): the
    threshold :math:`w_i d > \lambda` makes every move lower the weighted
    objective (moving the point's cost :math:`w_i d` to :math:`\lambda`), so
    the trace stays monotone for any positive weights.  Integer weights are
    therefore *not* the same as repeated rows, which open clusters at
    :math:`d > \lambda`.

    **Scale.**  The data are centred internally (the algorithm is translation
    invariant; this protects the GEMM form of the distances against
    cancellation) and multiplied by a power of two ``2**-e`` so that the
    largest centred value lies in [0.5, 1), ``lam`` by ``4**-e``: exact, so
    the results are those of the centred data bit for bit, and float32 data
    of any magnitude neither overflow nor flush to zero.  The stopping test is
    relative with no absolute floor: ``X * s`` with ``lam * s**2`` gives the
    same partition in the same number of iterations.  Centres, objective and
    trace are reported in the data's frame (the trace in float64 if the
    data's dtype cannot hold it).  A ``ValueError`` names ``lam`` when
    ``lam * 4**-e`` is above ``finfo.max / n`` or, for non-constant data,
    below ``finfo.tiny`` of the working dtype, and ``X`` when it holds values
    beyond that dtype's range (float64 data with ``jax_enable_x64`` off).

    **Memory.**  ``O(n d)`` for the data, ``O(n)`` per-point vectors, the
    ``K_cap x d`` centre buffer and, on the native CPU kernel, at most 20
    partial ``K_cap x d`` sums (on the XLA path: row blocks of at most
    ``2**27`` point-centre scores): no ``n x n`` or ``n x K_cap`` array.

    **Sharded execution** (``mesh``).  Every device holds a
    contiguous block of rows and runs the same loop inside ``jax.shard_map``:
    distances to the pass's starting centres on its own rows; the candidate
    mask all-gathered, and the candidates' coordinates assembled super-block
    by super-block, so that the serial new-cluster validation runs *identically on
    every device* in global row order; the birth-masked argmin on its own rows
    (global row indices); per-cluster weights and sums, the objective and the
    convergence test combined with ``psum``.  Padding rows have weight 0: they
    never open a cluster and add nothing to the statistics.  Labels, cluster
    counts and iteration counts equal the single-device run's; centres and
    objective equal them up to the order of floating-point summation (the
    per-device partial sums are added in a different order; observed
    differences are a few ulps).  Communication per iteration: one
    all-gather of ``n`` booleans, one ``psum`` of ``K_cap (d + 1)`` numbers,
    and, in passes that open clusters, one ``psum`` of ``4096 d`` numbers per
    super-block of 4,096 candidates.

    **Multi-host.**  The same call runs across machines: start every process
    with ``jax.distributed.initialize(coordinator_address, num_processes,
    process_id)`` (automatic on Cloud TPU and SLURM), build the mesh over
    all devices, ``mesh = Mesh(np.array(jax.devices()), ("data",))``, and
    call ``dp_means(X, lam, mesh=mesh)`` in every process with the same
    ``X`` (a host array; each process uploads only its own devices' rows).
    Every process receives the full result.  CPU-only clusters need
    ``jax.config.update("jax_cpu_collectives_implementation", "gloo")``
    before ``initialize``.  (Tested with two processes of four host devices
    on one machine.)  Each process must hold all of ``X`` in host memory; an
    input whose rows exist only on their own hosts is not supported yet.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012, Algorithm 1 and Theorem 3.1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import dp_means
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> res = dp_means(X, lam=1.0)
    >>> res.n_clusters, res.labels.tolist()
    (2, [0, 0, 1, 1])

    Ten k-means++ starts, the lowest objective kept:

    >>> best = dp_means(X, lam=1.0, n_init=10, init="k-means++", rng_key=0)
    >>> best.restart_objectives.shape, bool(best.objective == best.restart_objectives.min())
    ((10,), True)

    The same run with the rows sharded over all local devices:

    >>> import jax
    >>> from jax.sharding import Mesh
    >>> mesh = Mesh(np.array(jax.devices()), ("data",))
    >>> dp_means(X, lam=1.0, mesh=mesh).labels.tolist()
    [0, 0, 1, 1]

    On several hosts (not run here), in every process::

        jax.distributed.initialize()  # or (coordinator_address, num_processes, process_id)
        mesh = Mesh(np.array(jax.devices()), ("data",))  # all devices of all hosts
        res = dp_means(X, lam, mesh=mesh)  # same X in every process
    """
    X = V.check_array(X, "X")
    lam = V.check_positive(lam, "lam")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    n, _ = X.shape
    w = V.check_sample_weight(sample_weight, n, dtype=X.dtype)
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    if mesh is not None:
        check_mesh(mesh)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    if not isinstance(init, str) or init not in _INITS:
        raise ValueError(f"init must be one of {_INITS}, got {init!r}")
    if rng_key is None:
        if n_init > 1 or init != "mean":
            raise ValueError(f"rng_key is required with n_init={n_init} and init={init!r}")
        key = None
    else:
        key = V.as_rng_key(rng_key)
    if order is not None:
        order = np.asarray(order)
        if order.shape != (n,) or order.dtype.kind not in "iu" or not np.array_equal(
            np.sort(order), np.arange(n)
        ):
            raise ValueError(f"order must be a permutation of range({n})")
        if n_init > 1 and init == "mean":
            raise ValueError("order must be None when n_init > 1 and init='mean' "
                             "(the starts differ by their random pass orders)")
    if n_init > 1:
        starts = iter(range(n_init))

        def start():
            k = jax.random.fold_in(key, next(starts))
            o = V.as_numpy_rng(k).permutation(n) if init == "mean" else order
            r = dp_means(X, lam, sample_weight=w, max_iter=max_iter, max_clusters=max_clusters,
                         order=o, mesh=mesh, init=init, rng_key=k)
            return r.objective, r

        _, best, finals = best_of_restarts(n_init, start, maximize=False)
        return best._replace(restart_objectives=finals)
    kw = dict(max_iter=max_iter, max_clusters=max_clusters, mesh=mesh, init=init, rng_key=key)
    if order is not None:
        inverse = np.argsort(order)
        res = dp_means(X[order], lam, sample_weight=w[order], **kw)
        return res._replace(labels=res.labels[inverse])

    positive = w > 0
    if not positive.all():
        res = dp_means(X[positive], lam, sample_weight=w[positive], **kw)
        labels = np.empty(n, np.int32)
        labels[positive] = res.labels
        zero = ~positive
        # In the unit frame of the centres: the squared distances cannot overflow.
        c_mean = V.centre(res.centers)
        C, e = V.to_unit_frame(res.centers, c_mean, "X")
        Xz = np.ldexp(X[zero] - c_mean, -e).astype(C.dtype)
        labels[zero] = np.asarray(nearest_center(jnp.asarray(Xz), jnp.asarray(C)).index)
        return res._replace(labels=labels)

    limit = n if max_clusters is None else min(max_clusters, n)
    # The unit frame: centred and scaled by a power of two (exact), lam by its square.
    mean = V.centre(X, w)
    Xs, e = V.to_unit_frame(X, mean, "X")
    lam_s = V.check_unit_penalty(lam, "lam", e, Xs.dtype, n_terms=n, nonconstant=bool(np.any(Xs)))
    # Before empty clusters are deleted a pass may hold k_old + n_new <= 2n clusters.
    K_bound = max(32, pow2_at_least(limit + n))
    K_cap = min(K_bound, _initial_capacity(Xs, w, lam_s))
    seeds = None
    if init == "k-means++":
        # Drawn on one device from the padded unit-frame data (weight-0 rows never drawn).
        n_pad = _pad_to(n)
        Xp = jnp.asarray(np.concatenate([Xs, np.zeros((n_pad - n, Xs.shape[1]), Xs.dtype)]))
        wp = jnp.asarray(np.concatenate([w, np.zeros(n_pad - n, w.dtype)]), Xp.dtype)
        rows, count, _ = _dp_seeds(key, Xp, wp, np.asarray(lam_s, Xp.dtype), np.int32(limit))
        count = int(count)
        seeds = Xs[np.asarray(rows)[:count]]  # on the host: no shape depends on the count
        K_cap = min(K_bound, max(K_cap, pow2_at_least(2 * count)))
        # The start's objective as init_dp_means_state(centers=seeds) computes it, with the
        # seeds in the centre buffer (its shape, not the count's: no compile per count).
        buffer = np.zeros((K_cap, Xs.shape[1]), Xs.dtype)
        buffer[:count] = seeds
        nearest = nearest_center(Xp, jnp.asarray(buffer), jnp.asarray(np.arange(K_cap) < count))
        seed_objective = np.asarray(sum_rows(wp * nearest.sq_dist) + jnp.asarray(
            lam_s, Xp.dtype) * count)
        del Xp, wp
    if mesh is None:
        # Rows padded to a shape bucket with weight 0 (never a candidate, nothing
        # in any statistic or in the stopping test): n rows and n + 7 rows run
        # the same compiled program, with the same result as unpadded.
        n_pad = _pad_to(n)
        Xj = jnp.asarray(np.concatenate([Xs, np.zeros((n_pad - n, Xs.shape[1]), Xs.dtype)]))
        wj = jnp.asarray(np.concatenate([w, np.zeros(n_pad - n, w.dtype)]))
        lam_j = np.asarray(lam_s, Xj.dtype)  # host scalars: traced, never a new compile
        state = _initial(Xj, wj, lam_j, K_cap, _TRACE_LEN)
        run = _run
    else:
        axis = check_mesh(mesh)
        (Xj, wj), _ = shard_rows(mesh, axis, Xs, w)
        del X, Xs  # the host copies are not needed any more (1M x 128 runs)
        lam_j = np.asarray(lam_s, Xj.dtype)  # host scalars: valid inputs on any mesh
        init_fn, run = _sharded_fns(mesh, axis, n, K_cap, _TRACE_LEN)
        state = init_fn(Xj, wj, lam_j)
    if seeds is not None:
        # Start from the seeds: no point assigned yet (-1), so the first step counts as a change.
        # Host arrays of fixed shapes: valid inputs on any mesh, and no compile per count.
        centers = np.zeros((K_cap, seeds.shape[1]), seeds.dtype)
        centers[: len(seeds)] = seeds
        buf = np.full(_TRACE_LEN, np.nan, seed_objective.dtype)
        buf[0] = seed_objective
        state = state._replace(
            centers=centers, n_clusters=np.int32(len(seeds)), labels=state.labels * 0 - 1,
            objective=seed_objective, objective_trace=buf,
        )
    def grow(new):
        # The failed pass stopped at the first candidate block that overfilled the buffer;
        # every seed accepted up to there is genuine, so it needs at least ``need`` slots.
        # Double at least (each new size is a compile).
        nonlocal K_cap, run
        if not bool(new.overflow) or bool(new.limit_hit):
            return None
        K_cap = min(max(2 * K_cap, pow2_at_least(int(new.need))), K_bound)
        if mesh is not None:
            run = _sharded_fns(mesh, axis, n, K_cap, _TRACE_LEN)[1]
        return _grow(new, K_cap)

    state, traces, done = run_in_pieces(
        state, lambda todo, s: run(Xj, wj, lam_j, np.int32(limit), todo, s), max_iter,
        piece=_TRACE_LEN, grow=grow, stop=lambda s: bool(s.limit_hit))
    trace = [traces["objective_trace"]]
    if bool(state.limit_hit):
        warnings.warn(
            f"dp_means needed more than max_clusters={limit} clusters at lam={lam:g}; "
            f"stopped after {done} iteration(s). Increase lam or max_clusters.",
            RuntimeWarning,
            stacklevel=2,
        )

    k = int(state.n_clusters)
    labels = to_host(state.labels)[:n]
    if seeds is not None and done == 0:
        # The first step from the seeds was discarded (max_clusters): the nearest seed.
        labels = np.asarray(nearest_center(jnp.asarray(Xs), jnp.asarray(seeds)).index)
    return DPMeansResult(
        labels=labels,
        centers=(np.ldexp(np.asarray(state.centers)[:k], e) + mean).astype(Xj.dtype),
        n_clusters=k,
        objective=math.ldexp(float(state.objective), 2 * e),
        objective_trace=_from_unit(np.concatenate(trace), e),
        n_iter=done,
        converged=bool(state.converged),
        lam=lam,
        restart_objectives=np.array([math.ldexp(float(state.objective), 2 * e)]),
    )


#: The driver's row padding (a name of its own: the tests switch it off).
_pad_to = padded_rows


def _initial_capacity(X, w, lam) -> int:
    """A starting size of the centre buffer, from a cheap host-side scan (a power of two >= 32).

    Algorithm 1's first pass, means frozen at the global mean, on an evenly
    spaced sample of at most ``_CAPACITY_SAMPLE`` rows: the clusters it opens
    estimate those the fit will hold.  A pass can hold up to twice its final
    clusters before empty ones are deleted, and the sample sees fewer of them
    than the data, so the buffer starts at four times the estimate.  Too small
    costs a compile of a doubled buffer; too large, a wider product per pass;
    the result does not depend on it.
    """
    n = X.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(n, _CAPACITY_SAMPLE)).astype(np.int64))
    Xs = np.asarray(X[rows], np.float64)
    ws = np.asarray(w[rows], np.float64)
    seeds = np.zeros((min(len(rows), 256) + 1, X.shape[1]))  # the global mean (0) first
    k = 1
    for x, wi in zip(Xs, ws):
        if wi * np.min(np.sum((seeds[:k] - x) ** 2, axis=1)) > lam:
            seeds[k] = x
            k += 1
            if k == len(seeds):
                break
    return max(32, pow2_at_least(4 * k))


@jax.jit
def _dp_seeds(rng_key, X, w, lam, limit):
    r"""k-means++ (D^2) seeding run until no point could open a cluster: the seeds' rows.

    The first seed is drawn with probability :math:`\propto w_i`, every next one
    with probability :math:`\propto w_i D_i^2` (:math:`D_i` the distance of
    :math:`x_i` to its nearest seed so far), until :math:`\max_i w_i D_i^2 \le
    \lambda` (Algorithm 1's first pass from these seeds opens no cluster) or
    ``limit`` seeds.  Rows of weight 0 (padding) are never drawn.  One
    compiled program per padded shape (``lam`` and ``limit`` are traced).

    Returns
    -------
    rows : int32 array, shape (n,)
        The seeds' rows in the order drawn (entries ``0..count-1``).
    count : int32 scalar
    sse : scalar
        :math:`\sum_i w_i D_i^2` to the seeds.
    """
    n = X.shape[0]
    first = jax.random.choice(jax.random.fold_in(rng_key, 0), n, p=w / sum_rows(w)).astype(jnp.int32)
    d2 = squared_norms(X - X[first])
    rows = jnp.zeros(n, jnp.int32).at[0].set(first)

    def more(carry):
        _, count, d2 = carry
        return (jnp.max(w * d2) > lam) & (count < limit)

    def draw(carry):
        rows, count, d2 = carry
        p = w * d2
        i = jax.random.choice(jax.random.fold_in(rng_key, count), n, p=p / sum_rows(p)).astype(jnp.int32)
        return rows.at[count].set(i), count + 1, jnp.minimum(d2, squared_norms(X - X[i]))

    rows, count, d2 = lax.while_loop(more, draw, (rows, jnp.int32(1), d2))
    return rows, count, sum_rows(w * d2)


@jax.jit
def _farthest_first(X, n, k):
    """Farthest-first's ``lam_k`` on the first ``n`` rows of ``X`` (the others: padding).

    ``n`` and ``k`` are traced: one compiled program per padded shape.
    """
    real = jnp.arange(X.shape[0]) < n
    nf = n.astype(X.dtype)
    Xc = jnp.where(real[:, None], X - sum_rows(X) / nf, 0)
    mean = sum_rows(Xc) / nf
    dmin = assigned_squared_distances(Xc, mean[None, :], jnp.zeros(X.shape[0], jnp.int32))
    dmin = jnp.where(real, dmin, -jnp.inf)

    def step(_, carry):
        dmin, _ = carry
        far = jnp.argmax(dmin)
        lam = dmin[far]
        diff = Xc - Xc[far]
        return jnp.minimum(dmin, jnp.sum(diff * diff, axis=1)), lam

    return lax.fori_loop(0, k, step, (dmin, jnp.asarray(0.0, X.dtype)))[1]


def farthest_first_lambda(X, n_clusters: int) -> float:
    """The farthest-first heuristic for DP-means' ``lam`` given a desired number of clusters.

    With ``k = n_clusters``: ``T = {global mean}``; ``k`` times: take the point
    farthest from ``T`` (lowest index on ties), record its squared distance
    ``lam_r`` and add it to ``T``.  Returns ``lam_k``, the squared distance
    measured when ``|T| = k``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    n_clusters : int
        Desired number of clusters ``k``, ``1 <= k <= n``.

    Returns
    -------
    float
        A squared distance, positive and finite for any finite ``X`` with at
        least ``k`` distinct rows (it is computed in the unit frame of ``X``,
        centred and scaled by a power of two, and scaled back in float64, so
        it may lie outside the float32 range); 0.0 when ``X`` has fewer than
        ``k`` distinct rows.

    Notes
    -----
    By construction the ``k``-th farthest point lies *exactly* at ``lam_k``
    from ``T``, a tie that Algorithm 1's strict test ``d > lam`` resolves in
    favour of the existing cluster.  Computed distances carry rounding error,
    so the value is returned inflated by a few units in the last place
    (relative ``16 eps`` of the working dtype) so that the tie resolves as in
    exact arithmetic: without it, float32 runs on the three-Gaussian data
    open a spurious fourth cluster in about one run in four.

    References
    ----------
    Kulis & Jordan (2012), §6.1 ("we utilize this approach in all experiments").

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import farthest_first_lambda
    >>> round(farthest_first_lambda(np.array([[0.0], [2.0], [4.0]]), 1), 4)
    4.0
    """
    X = V.check_array(X, "X")
    k = V.check_int(n_clusters, "n_clusters", minimum=1)
    if k > X.shape[0]:
        raise ValueError(f"n_clusters must be <= the number of samples ({X.shape[0]}), got {k}")
    # In the unit frame (centred, scaled by a power of two): the squared distances
    # neither overflow nor flush to zero at any scale of X; scaled back in float64.
    # Rows padded to a shape bucket (the sums are padding-invariant): no compile per n.
    Xs, e = V.to_unit_frame(X, V.centre(X), "X")
    n = Xs.shape[0]
    Xj = jnp.asarray(np.concatenate([Xs, np.zeros((_pad_to(n) - n, Xs.shape[1]), Xs.dtype)]))
    lam = math.ldexp(float(_farthest_first(Xj, np.int32(n), np.int32(k))), 2 * e)
    return lam * (1.0 + _TIE_ULPS * float(np.finfo(Xs.dtype).eps))
