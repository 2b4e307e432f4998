"""Hard Gaussian HDP: the small-variance limit of the HDP mixture's CRF Gibbs sampler.

Kulis & Jordan (2012), Algorithm 2, with exactly its semantics, computed in bulk
wherever the algorithm allows it (see :func:`hard_hdp`).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import (
    NEVER,
    assigned_squared_distances,
    assignment_block_size,
    compact_labels,
    map_row_blocks,
    padded_rows,
    segment_stats,
    squared_distances,
    squared_norms,
    sum_rows,
    weighted_means,
)
from .._driver import TRACE_PIECE, pow2_at_least, run_in_pieces
from .._sharding import check_mesh, shard_rows, to_host
from ._common import _CANDIDATE_BLOCK, _from_unit, _take_rows
from .dp_means import dp_means_pass, farthest_first_lambda

__all__ = [
    "hard_hdp",
    "HardHDPResult",
    "HardHDPState",
    "HardHDPInfo",
    "init_hard_hdp_state",
    "hard_hdp_step",
    "hard_hdp_penalties",
]

#: Relative tolerance of the objective-based stopping rule (as DP-means: docs/deviations.md#hard-hdp-resolutions).
OBJECTIVE_TOL = 1e-12
#: Slack (in units of the dtype's eps times the squared scale of the data) by which
#: the serial set of a pass is enlarged, so that rounding in the GEMM-form
#: distances can never hide a point that changes the state.
_SLACK_ULPS = 64


class HardHDPResult(NamedTuple):
    """Result of :func:`hard_hdp`.

    The per-group lists follow ``group_order`` (the list order for a list input, the
    sorted unique values of ``group_ids`` otherwise); inside a group, points keep
    their input order.

    Attributes
    ----------
    labels : list of ndarray of int, shape (n_j,)
        Global cluster of every point of data set ``j`` (``0..n_global-1``).
    local_labels : list of ndarray of int, shape (n_j,)
        Local cluster of every point of data set ``j`` (``0..n_local[j]-1``, in
        order of creation).
    local_to_global : list of ndarray of int, shape (n_local[j],)
        ``v_jc``: the global cluster of each local cluster of data set ``j``.
        ``labels[j] == local_to_global[j][local_labels[j]]``.
    centers : ndarray, shape (n_global, d)
        Global means (each the mean of all points, over all data sets, assigned to
        the global cluster).
    objective : float
        ``sum |x_ij - mu_{v_j z_ij}|^2 + lam_local * n_local.sum() + lam_global * n_global``
        of the returned state (Kulis & Jordan, eq. 5).
    objective_trace : ndarray, shape (n_iter + 1,)
        The minimised objective after initialisation and after every iteration;
        never increases.
    n_local : ndarray of int, shape (D,)
        Number of local clusters ``k_j`` of every data set (total ``n_local.sum()``).
    n_global : int
        Number of global clusters ``g``.
    n_iter : int
        Iterations run (steps 4-6 of Algorithm 2 once = one iteration).
    converged : bool
        True when ``(z, v)`` stopped changing or the objective stopped decreasing
        before ``max_iter``.
    lam_local, lam_global : float
        The penalties used.
    flat_labels : ndarray of int, shape (n,)
        The global labels aligned with the input rows: with ``X`` and ``group_ids``,
        ``flat_labels[i]`` is the cluster of ``X[i]``; with a list, the labels of the
        concatenated data sets.
    group_order : ndarray, shape (D,)
        Identifier of the data set at each position of the per-group lists.
    """

    labels: list
    local_labels: list
    local_to_global: list
    centers: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_local: np.ndarray
    n_global: int
    n_iter: int
    converged: bool
    lam_local: float
    lam_global: float
    flat_labels: np.ndarray
    group_order: np.ndarray


class HardHDPState(NamedTuple):
    """State of a hard HDP run between two iterations.

    Made by :func:`init_hard_hdp_state`, advanced by :func:`hard_hdp_step`;
    :func:`hard_hdp` loops over the step.  Points are stored group-major (data
    set 0 first).  Global clusters live in slots ``0..n_global-1`` of
    ``centers``; local clusters in slots ``0..n_local-1`` of one flat buffer
    ordered by (data set, order of creation), so slot order is Algorithm 2's
    processing order of step 5.  Sharded (``axis_name``), ``local_labels``
    holds the device's rows and every other field is replicated.

    Attributes
    ----------
    centers : array, shape (global_capacity, d)
        Global means in slots ``0..n_global-1``; the other slots are scratch
        space.
    n_global : int32 scalar
        Active global clusters ``g``.
    local_group : int32 array, shape (local_capacity,)
        Data set of every local slot (``n_groups`` for inactive slots).
    local_to_global : int32 array, shape (local_capacity,)
        ``v``: the global cluster of every local slot (-1 for inactive slots).
    n_local : int32 scalar
        Active local slots: the number of local clusters of all data sets
        together (``HardHDPResult.n_local`` counts them per data set).
    local_labels : int32 array, shape (n,)
        Local slot of every point (an index into ``local_group`` and
        ``local_to_global``, not the per-data-set numbering of
        ``HardHDPResult.local_labels``).
    objective : scalar, dtype of ``X``
        ``sum |x - mu|^2 + lam_local * n_local + lam_global * n_global`` of this state.
    objective_trace : array, shape (T,), dtype of ``X``
        The objective after initialisation and after iterations ``1..n_iter``
        in entries ``0..n_iter``, NaN after them; ``T``, the smallest power of
        two ``>= max_iter + 1`` (``max_iter`` given to the init), bounds what is
        recorded.
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last iteration left ``(local_labels, local_to_global)`` unchanged
        or did not lower the objective (relative tolerance ``OBJECTIVE_TOL``).
    overflow : bool scalar
        The last step needed bigger buffers and was discarded: every other
        field is that of the step's input state (``need`` apart).
    need : int32 array, shape (2,)
        Global and local slots the last iteration asked for (after an
        overflow an overestimate: clusters that did not fit could not attract
        later points); zeros in the initial state.
    """

    centers: jax.Array
    n_global: jax.Array
    local_group: jax.Array
    local_to_global: jax.Array
    n_local: jax.Array
    local_labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    overflow: jax.Array
    need: jax.Array


class HardHDPInfo(NamedTuple):
    """Diagnostics of one :func:`hard_hdp_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        The step changed ``(local_labels, local_to_global)`` (False when it
        was discarded).
    """

    objective: jax.Array
    changed: jax.Array


# --------------------------------------------------------------------------- #
# Helpers
# --------------------------------------------------------------------------- #


def _by_row_blocks(fn, n_cols, *row_arrays):
    """Apply ``fn`` to row blocks (bounded ``rows x n_cols`` temporaries) and concatenate."""
    n = row_arrays[0].shape[0]
    return map_row_blocks(fn, assignment_block_size(n, n_cols), *row_arrays)


def _masked_nearest(Xb, C, allowed):
    """Nearest allowed centre per row: (exact squared distance or inf, index).

    The argmin uses the GEMM distances; the winner's distance is recomputed by
    direct differences (as in :func:`bayesclust.kernels.nearest_center`).
    """
    d2 = squared_distances(Xb, C)
    index = jnp.argmin(jnp.where(allowed, d2, jnp.inf), axis=1).astype(jnp.int32)
    exact = assigned_squared_distances(Xb, C, index)
    return jnp.where(jnp.any(allowed, axis=1), exact, jnp.inf), index


def _local_tables(loc_group, loc_global, k, n_groups, G_cap):
    """``first_local[j, p]``: lowest local slot of data set j mapped to global p (-1 if none)."""
    L_cap = loc_group.shape[0]
    slot = jnp.arange(L_cap, dtype=jnp.int32)
    active = slot < k
    rows = jnp.where(active, loc_group, n_groups)
    cols = jnp.where(active, loc_global, G_cap)
    table = jnp.full((n_groups, G_cap), L_cap, jnp.int32).at[rows, cols].min(slot, mode="drop")
    return jnp.where(table == L_cap, -1, table)


def _row_total(v, valid=None, axis_name=None):
    """Sum over the (valid) rows of ``v``, over all devices with ``axis_name``.

    :func:`~bayesclust.kernels.sum_rows` order: padding rows (masked to zero)
    cannot change the result, so a run on rows padded to a shape bucket equals
    the unpadded run bit for bit.
    """
    if valid is not None:
        v = jnp.where(valid.reshape(valid.shape + (1,) * (v.ndim - 1)), v, 0)
    total = sum_rows(v)
    return total if axis_name is None else lax.psum(total, axis_name)


def _masked_ids(ids, valid, fill):
    """``ids`` with the padding rows sent to ``fill`` (out of range: dropped by a segment sum)."""
    return ids if valid is None else jnp.where(valid, ids, fill)


# --------------------------------------------------------------------------- #
# Step 4: the point pass, in bulk
# --------------------------------------------------------------------------- #


def _serial_set(X, gid, centers, g, first_local, lam_l, lam_g, axis_name=None, valid=None):
    """Points whose decision in the pass may change the state (a superset).

    With the state at the start of the pass, ``a_i`` is the distance to the
    nearest global associated with the point's data set and ``u_i`` to the
    nearest other one.  A point can open a local cluster only if
    ``u_i + lam_l <= a_i`` or it can open a global (``min(a_i, u_i + lam_l) >
    lam_l + lam_g``), or if a global opened earlier in the pass lies closer
    than ``a_i - lam_l`` (possible only when ``a_i >= lam_l`` and some earlier
    point may open a global).  Every test is relaxed by a few ulps of the
    data's squared scale, so rounding in the GEMM distances cannot drop a point.

    Sharded (``axis_name``): ``X`` and ``gid`` are this device's rows, ``valid``
    marks the real (unpadded) ones, and the first possible global seed is
    found over all devices (``pmin`` of global row indices).
    """
    G_cap = centers.shape[0]
    active_g = jnp.arange(G_cap) < g
    c_sq_max = jnp.max(jnp.where(active_g, squared_norms(centers), 0.0))
    eps = jnp.finfo(X.dtype).eps
    has_local = first_local >= 0

    def block(Xb, gb):
        assoc = has_local[gb] & active_g[None, :]
        a, _ = _masked_nearest(Xb, centers, assoc)
        u, _ = _masked_nearest(Xb, centers, ~assoc & active_g[None, :])
        slack = _SLACK_ULPS * eps * (squared_norms(Xb) + c_sq_max + lam_l + lam_g)
        return a, u, slack

    a, u, slack = _by_row_blocks(block, G_cap, X, gid)
    may_open_global = jnp.minimum(a, u + lam_l) > lam_l + lam_g - slack
    may_open_local = u + lam_l <= a + slack
    if valid is not None:
        may_open_global = may_open_global & valid
    # (an index test, not a cumsum: cumulative sums are slow to compile on XLA:CPU)
    if axis_name is None:
        first_seed = jnp.where(jnp.any(may_open_global), jnp.argmax(may_open_global), X.shape[0])
        seeds_before = jnp.arange(X.shape[0]) > first_seed
    else:
        m = X.shape[0]
        rows = lax.axis_index(axis_name) * m + jnp.arange(m)
        first_here = jnp.where(jnp.any(may_open_global), rows[jnp.argmax(may_open_global)], NEVER)
        seeds_before = rows > lax.pmin(first_here, axis_name)
    may_join_new = (a >= lam_l - slack) & seeds_before
    S = may_open_global | may_open_local | may_join_new
    return S if valid is None else S & valid


def _point_pass(X, gid, centers, g, loc_group, loc_global, k, z, lam_l, lam_g, n_groups,
                axis_name=None, valid=None):
    """Step 4 of Algorithm 2 (means frozen), exactly, computed in bulk.

    (1) The superset ``S`` of points that may change the state (open a local
    or a global cluster) comes from one bulk distance computation
    (:func:`_serial_set`).  (2) ``S`` is scanned serially in data order with
    the literal rule.  (3) Every other point joins the nearest global that is
    associated with its data set at its turn (associations created by earlier
    points included) -- one bulk masked argmin -- and the lowest-index local
    cluster mapped to it.

    Sharded (``axis_name``, inside ``shard_map``): ``X``, ``gid``, ``z`` and
    ``valid`` are this device's rows.  ``S`` is all-gathered; its rows'
    coordinates are assembled in blocks of 256 (:func:`~bayesclust.inference.hard.
    _common._take_rows`) and the serial scan runs identically on every device
    in global row order (``z`` of the serial points kept in a replicated
    length-``n`` integer vector); the bulk argmin runs on each device's rows.

    Returns ``(centers, g, loc_group, loc_global, k, z, overflow)`` with local
    slots uncompacted (new ones appended in order of creation).
    """
    n = X.shape[0]
    G_cap = centers.shape[0]
    L_cap = loc_group.shape[0]
    slots_g = jnp.arange(G_cap, dtype=jnp.int32)
    first_local = _local_tables(loc_group, loc_global, k, n_groups, G_cap)
    # assoc_time[j, p]: -1 if associated at the start, else the row that creates it.
    assoc_time = jnp.where(first_local >= 0, -1, NEVER).astype(jnp.int32)
    S = _serial_set(X, gid, centers, g, first_local, lam_l, lam_g, axis_name, valid)
    S_all = S if axis_name is None else lax.all_gather(S, axis_name, tiled=True)
    # The rows of S in order (a stable sort compiles much faster than jnp.nonzero on CPU).
    rows_S = jnp.argsort(~S_all, stable=True).astype(jnp.int32)
    threshold = lam_l + lam_g

    def step(i, x, j, carry):
        centers, g, first_local, assoc_time, loc_group, loc_global, k, z, overflow = carry
        dist = assigned_squared_distances(jnp.broadcast_to(x, centers.shape), centers, slots_g)
        assoc = assoc_time[j] != NEVER
        cost = jnp.where(slots_g < g, dist + jnp.where(assoc, 0.0, lam_l), jnp.inf)
        best = jnp.argmin(cost).astype(jnp.int32)
        new_global = cost[best] > threshold
        p = jnp.where(new_global, g, best)
        new_local = new_global | ~assoc[best]
        overflow = overflow | (new_global & (g >= G_cap)) | (new_local & (k >= L_cap))
        slot = jnp.where(new_local, k, first_local[j, best])
        centers = centers.at[jnp.where(new_global, g, G_cap)].set(x, mode="drop")
        at_l = jnp.where(new_local, k, L_cap)
        loc_group = loc_group.at[at_l].set(j, mode="drop")
        loc_global = loc_global.at[at_l].set(p, mode="drop")
        at_p = jnp.where(new_local, p, G_cap)
        first_local = first_local.at[j, at_p].set(k, mode="drop")
        assoc_time = assoc_time.at[j, at_p].set(i, mode="drop")
        z = z.at[i].set(slot)
        return (centers, g + new_global, first_local, assoc_time, loc_group, loc_global,
                k + new_local, z, overflow)

    n_S = jnp.sum(S_all, dtype=jnp.int32)
    if axis_name is None:

        def visit(t, carry):
            i = rows_S[t]
            return step(i, X[i], gid[i], carry)

        init = (centers, g, first_local, assoc_time, loc_group, loc_global, k, z,
                jnp.asarray(False))
        (centers, g, first_local, assoc_time, loc_group, loc_global, k, z_serial,
         overflow) = lax.fori_loop(0, n_S, visit, init)
        rows = jnp.arange(n, dtype=jnp.int32)
    else:
        offset = lax.axis_index(axis_name) * n
        rows = offset + jnp.arange(n, dtype=jnp.int32)
        B = _CANDIDATE_BLOCK
        rows_S = jnp.pad(rows_S, (0, B))

        def visit_block(b, carry):
            block_rows = lax.dynamic_slice_in_dim(rows_S, b * B, B)
            Xb, gb = _take_rows(block_rows, axis_name, X, gid)
            return lax.fori_loop(
                0, jnp.minimum(B, n_S - b * B),
                lambda t, c: step(block_rows[t], Xb[t], gb[t], c), carry,
            )

        z_all = jnp.zeros(S_all.shape[0], jnp.int32)  # serial points' slots, replicated
        init = (centers, g, first_local, assoc_time, loc_group, loc_global, k, z_all,
                jnp.asarray(False))
        (centers, g, first_local, assoc_time, loc_group, loc_global, k, z_all,
         overflow) = lax.fori_loop(0, (n_S + B - 1) // B, visit_block, init)
        z_serial = lax.dynamic_slice_in_dim(z_all, offset, n)

    # Everyone else: nearest global associated with the data set before the point's turn.
    active_g = slots_g < g

    def nearest_associated(Xb, gb, rb):
        visible = (assoc_time[gb] < rb[:, None]) & active_g[None, :]
        return _masked_nearest(Xb, centers, visible)[1]

    p_bulk = _by_row_blocks(nearest_associated, G_cap, X, gid, rows)
    z = jnp.where(S, z_serial, first_local[gid, p_bulk])
    if valid is not None:
        z = jnp.where(valid, z, 0)
    return centers, g, loc_group, loc_global, k, z, overflow


# --------------------------------------------------------------------------- #
# Steps 5-6 and the iteration
# --------------------------------------------------------------------------- #


def _iteration(X, gid, centers, g, loc_group, loc_global, k, z, lam_l, lam_g, n_groups,
               *, axis_name=None, valid=None):
    """One iteration of Algorithm 2 (steps 4, 5, 6) on group-major data.

    Parameters
    ----------
    X : array, shape (n, d)
        Points, data set 0 first (``gid`` non-decreasing).
    gid : int array, shape (n,)
    centers : array, shape (G_cap, d)
        Global means in slots ``0..g-1``.
    loc_group, loc_global : int arrays, shape (L_cap,)
        Data set and global cluster of the local clusters in slots ``0..k-1``,
        ordered by (data set, local index).
    z : int array, shape (n,)
        Local slot of every point.
    lam_l, lam_g : scalars
    n_groups : int (static)
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows sharded over this mesh axis:
        ``X``, ``gid`` and ``z`` are the device's block of rows, everything
        else is replicated; per-cluster statistics and the objective are
        combined with ``psum``.
    valid : bool array, shape (n,), optional
        Real rows (False for padding, which is ignored throughout).

    Returns
    -------
    tuple
        ``(centers, g, loc_group, loc_global, k, z, objective, overflow, need)``,
        compacted; when ``overflow`` is set the buffers were too small and the
        outputs are invalid, and ``need`` holds the numbers of global and local
        slots that were asked for (an overestimate: clusters that did not fit
        could not attract later points).
    """
    L_cap = loc_group.shape[0]
    G_cap = centers.shape[0]
    slot = jnp.arange(L_cap, dtype=jnp.int32)
    # Step 4.
    centers, g, loc_group, loc_global, k, z, overflow4 = _point_pass(
        X, gid, centers, g, loc_group, loc_global, k, z, lam_l, lam_g, n_groups,
        axis_name, valid,
    )
    k_pass = k
    # Delete empty local clusters; order slots by (data set, slot): within a data set
    # the old clusters come first, then the new ones in order of creation.
    stats = segment_stats(X, _masked_ids(z, valid, L_cap), L_cap)
    if axis_name is not None:
        stats = lax.psum(stats, axis_name)
    keep = (stats.weight > 0) & (slot < k)
    perm = jnp.argsort(jnp.where(keep, loc_group, n_groups), stable=True)
    k = jnp.sum(keep, dtype=jnp.int32)
    live = slot < k
    z = jnp.zeros(L_cap, jnp.int32).at[perm].set(slot)[z]
    loc_group = jnp.where(live, loc_group[perm], n_groups)
    stats = type(stats)(stats.weight[perm], stats.sum[perm])
    # Step 5 is a weighted DP-means pass over the local means: with S a local
    # cluster of n_S points and mean m_S, sum_{x in S} |x - mu|^2 = SSE_S + n_S |m_S - mu|^2,
    # so "min_p dbar_p > lam_g + SSE_S" is "n_S min_p |m_S - mu_p|^2 > lam_g" and the
    # argmins agree; a new global sits at m_S, visible to the later local clusters.
    v, _, centers, g, overflow5 = dp_means_pass(
        weighted_means(stats), stats.weight, centers, g, lam_g
    )
    g_pass = g
    v = jnp.where(live, v, 0)
    has_local = jnp.zeros(G_cap, bool).at[jnp.where(live, v, G_cap)].set(True, mode="drop")
    v, _, g = compact_labels(v, has_local)  # delete globals without local clusters
    loc_global = jnp.where(live, v, -1)
    # Step 6.
    labels = loc_global[z]
    stats = segment_stats(X, _masked_ids(labels, valid, G_cap), G_cap)
    centers = weighted_means(stats if axis_name is None else lax.psum(stats, axis_name))
    d2 = assigned_squared_distances(X, centers, _masked_ids(labels, valid, 0))
    sse = _row_total(d2, valid, axis_name)
    objective = sse + lam_l * k + lam_g * g
    need = jnp.stack([g_pass, k_pass]).astype(jnp.int32)
    return centers, g, loc_group, loc_global, k, z, objective, overflow4 | overflow5, need


def _step(s: HardHDPState, X, gid, lam_l, lam_g, n_groups, axis_name=None, valid=None):
    """:func:`hard_hdp_step` on prepared arguments."""
    centers, g, loc_group, loc_global, k, z, obj, overflow, need = _iteration(
        X, gid, s.centers, s.n_global, s.local_group, s.local_to_global, s.n_local,
        s.local_labels, lam_l, lam_g, n_groups, axis_name=axis_name, valid=valid,
    )
    if valid is None:
        z_unchanged = jnp.all(z == s.local_labels)
    else:
        changed = jnp.sum((z != s.local_labels) & valid, dtype=jnp.int32)
        z_unchanged = (changed if axis_name is None else lax.psum(changed, axis_name)) == 0
    unchanged = z_unchanged & jnp.all(loc_global == s.local_to_global)
    # Relative, with no absolute floor: the test is the same at every scale of the data.
    stalled = obj >= s.objective - OBJECTIVE_TOL * jnp.abs(s.objective)
    it = s.n_iter + 1
    new = HardHDPState(centers, g, loc_group, loc_global, k, z, obj,
                       s.objective_trace.at[it].set(obj), it, unchanged | stalled,
                       jnp.asarray(False), need)
    out = lax.cond(
        overflow, lambda: s._replace(overflow=jnp.asarray(True), need=need), lambda: new
    )
    return out, HardHDPInfo(out.objective, ~(unchanged | out.overflow))


def hard_hdp_step(state: HardHDPState, X, group_ids, lam_local, lam_global, *, n_groups: int,
                  axis_name=None, valid=None) -> tuple[HardHDPState, HardHDPInfo]:
    """One iteration of Algorithm 2 on a state: steps 4, 5 and 6, and the stopping test.

    Step 4 visits the points (:func:`hard_hdp` says how, in bulk), step 5 the
    local clusters (a weighted DP-means pass over their means,
    :func:`~bayesclust.inference.hard.dp_means.dp_means_pass`), step 6 recomputes
    the global means; empty local and global clusters are deleted and the
    survivors renumbered in order.  :func:`hard_hdp` is this step in a
    ``lax.while_loop`` from :func:`init_hard_hdp_state`, stopped by
    ``converged``, ``overflow`` or ``max_iter``; stepping by hand on the same
    (centred, group-major) data reproduces it exactly.  Works eagerly and under
    ``jax.jit`` (``n_groups`` static); concrete arguments are checked (ranks, lengths,
    ``group_ids`` in ``0..n_groups-1``), traced ones are not.

    Parameters
    ----------
    state : HardHDPState
    X : array, shape (n, d)
        The data the state was made from, data set 0 first.  :func:`hard_hdp`
        works on ``(X - X.mean(0)) * 2**-e`` (subtracted in the input dtype;
        ``e`` puts the largest value in [0.5, 1)) with both penalties times
        ``4**-e``; the power of two is exact, so stepping on ``X - X.mean(0)``
        gives the same labels and iteration count.
    group_ids : int array, shape (n,)
        Data set of every row, ``0..n_groups-1``, non-decreasing.
    lam_local, lam_global : float scalars
        Penalties per local and per global cluster (squared distances).
    n_groups : int (static)
        Number of data sets ``D``.
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows sharded over this mesh axis:
        ``X``, ``group_ids``, ``valid`` and ``state.local_labels`` are the
        device's rows; per-cluster statistics and the objective are combined
        with ``psum``.
    valid : bool array, shape (n,), optional
        The real rows (False for padding rows, which are zero and ignored:
        :func:`hard_hdp` pads the rows to :func:`~bayesclust.kernels.padded_rows`
        so that one compilation serves every ``n`` of a shape bucket).

    Returns
    -------
    state : HardHDPState
        The next state.  When a buffer was too small, the input state with
        ``overflow`` set and ``need`` the global and local slots asked for:
        redo the step on the state with ``centers`` padded by zero rows,
        ``local_group`` by ``n_groups`` and ``local_to_global`` by -1 to at
        least ``need`` slots, and ``overflow`` reset (what :func:`hard_hdp`
        does, doubling at least; new capacities are a new compilation).
    info : HardHDPInfo
        ``objective`` of the returned state and whether the partition ``changed``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0], [0.0, 0.1], [5.0, 5.1]],
    ...              np.float32)
    >>> gid = np.array([0, 0, 0, 0, 1, 1], np.int32)
    >>> state = init_hard_hdp_state(X, gid, 1.0, 2.0, n_groups=2)
    >>> while not state.converged:
    ...     state, info = hard_hdp_step(state, X, gid, 1.0, 2.0, n_groups=2)
    >>> int(state.n_global), int(state.n_local)
    (2, 4)
    >>> state.local_to_global[state.local_labels].tolist()
    [0, 0, 1, 1, 0, 1]
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    group_ids = V.check_kernel_array(group_ids, "group_ids", ndim=1, kind="i")
    V.check_same_length(group_ids, X, "group_ids", "X")
    V.check_rows_match(X, "X", state.local_labels)
    V.check_kernel_ids(group_ids, "group_ids", V.check_int(n_groups, "n_groups", minimum=1))
    X = jnp.asarray(X)
    gid = jnp.asarray(group_ids, jnp.int32)
    lam_l = jnp.asarray(lam_local, X.dtype)
    lam_g = jnp.asarray(lam_global, X.dtype)
    return _step(state, X, gid, lam_l, lam_g, n_groups, axis_name, valid)


def _loop(X, gid, lam_l, lam_g, max_iter, state: HardHDPState, n_groups: int, axis_name=None,
          valid=None):
    def cond(s: HardHDPState):
        return (s.n_iter < max_iter) & ~s.converged & ~s.overflow

    def body(s: HardHDPState):
        return _step(s, X, gid, lam_l, lam_g, n_groups, axis_name, valid)[0]

    return lax.while_loop(cond, body, state)


_run = jax.jit(_loop, static_argnames=("n_groups",))


def _initial_state_impl(X, gid, n_groups, G_cap, L_cap, lam_l, lam_g, trace_len, axis_name=None,
                        valid=None):
    """Algorithm 2 steps 1-2: one global at the mean, one local cluster per data set."""
    n, d = X.shape
    count = n if valid is None else _row_total(valid.astype(X.dtype), None, axis_name)
    mean = _row_total(X, valid, axis_name) / count
    centers = jnp.zeros((G_cap, d), X.dtype).at[0].set(mean)
    slot = jnp.arange(L_cap, dtype=jnp.int32)
    loc_group = jnp.where(slot < n_groups, slot, n_groups)
    loc_global = jnp.where(slot < n_groups, 0, -1).astype(jnp.int32)
    d2 = assigned_squared_distances(X, centers, jnp.zeros(n, jnp.int32))
    sse = _row_total(d2, valid, axis_name)
    objective = sse + lam_l * n_groups + lam_g
    trace = jnp.full(trace_len, jnp.nan, X.dtype).at[0].set(objective)
    return HardHDPState(
        centers, jnp.asarray(1, jnp.int32), loc_group, loc_global,
        jnp.asarray(n_groups, jnp.int32), jnp.asarray(gid, jnp.int32), objective, trace,
        jnp.asarray(0, jnp.int32), jnp.asarray(False), jnp.asarray(False),
        jnp.zeros(2, jnp.int32),
    )


_initial_state = jax.jit(
    _initial_state_impl, static_argnames=("n_groups", "G_cap", "L_cap", "trace_len")
)


def _start_capacities(n: int, n_groups: int) -> tuple[int, int, int, int]:
    """``(G_cap, L_cap, G_bound, L_bound)``: the starting buffer sizes and their upper bounds."""
    # During a pass: locals <= n (start) + n (opened); globals <= n + n (step 4) + n (step 5).
    L_bound = pow2_at_least(2 * n + n_groups)
    G_bound = pow2_at_least(3 * n + 1)
    L_cap = min(pow2_at_least(max(8 * n_groups, 32)), L_bound)
    G_cap = min(32, G_bound)
    return G_cap, L_cap, G_bound, L_bound


def init_hard_hdp_state(X, group_ids, lam_local, lam_global, *, n_groups: int,
                        global_capacity=None, local_capacity=None, max_iter=100, axis_name=None,
                        valid=None) -> HardHDPState:
    """The state hard HDP starts from (Algorithm 2, steps 1-2).

    One global cluster at the mean of all points and one local cluster per
    data set, mapped to it; every point in its data set's local cluster.

    Parameters
    ----------
    X : array, shape (n, d)
        Data, data set 0 first (see :func:`hard_hdp_step` for the centring
        :func:`hard_hdp` applies).
    group_ids : int array, shape (n,)
        Data set of every row, ``0..n_groups-1``, non-decreasing.
    lam_local, lam_global : float scalars
        Penalties (they enter the initial objective).
    n_groups : int
        Number of data sets ``D`` (every one holds at least one row).
    global_capacity, local_capacity : int, optional
        Slots of the global and local cluster buffers; by default where
        :func:`hard_hdp` starts (32 global slots, ``max(8 D, 32)`` local ones
        rounded up to a power of two, each capped by its upper bound; sharded,
        the bounds would come from the device's rows: pass both).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.
    axis_name : str, optional
        Inside ``jax.shard_map`` with the rows of ``X``, ``group_ids`` and
        ``valid`` sharded over this mesh axis.
    valid : bool array, shape (n,), optional
        The real rows (padding rows must be zero, and belong to the last data set).

    Returns
    -------
    HardHDPState
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    group_ids = V.check_kernel_array(group_ids, "group_ids", ndim=1, kind="i")
    V.check_same_length(group_ids, X, "group_ids", "X")
    X = jnp.asarray(X)
    n_groups = V.check_int(n_groups, "n_groups", minimum=1)
    V.check_kernel_ids(group_ids, "group_ids", n_groups)
    G_cap, L_cap, _, _ = _start_capacities(X.shape[0], n_groups)
    if global_capacity is not None:
        G_cap = V.check_int(global_capacity, "global_capacity", minimum=1)
    if local_capacity is not None:
        L_cap = V.check_int(local_capacity, "local_capacity", minimum=n_groups)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    lam_l = jnp.asarray(lam_local, X.dtype)
    lam_g = jnp.asarray(lam_global, X.dtype)
    if axis_name is not None:
        return _initial_state_impl(X, group_ids, n_groups, G_cap, L_cap, lam_l, lam_g, trace_len,
                                   axis_name=axis_name, valid=valid)
    return _initial_state(X, jnp.asarray(group_ids, jnp.int32), n_groups=n_groups, G_cap=G_cap,
                          L_cap=L_cap, lam_l=lam_l, lam_g=lam_g, trace_len=trace_len,
                          valid=None if valid is None else jnp.asarray(valid, bool))


def _state_specs(axis):
    from jax.sharding import PartitionSpec as P

    return HardHDPState(P(), P(), P(), P(), P(), P(axis), P(), P(), P(), P(), P(), P())


@functools.cache
def _sharded_init(mesh, axis, n_groups, G_cap, L_cap, trace_len):
    from jax.sharding import PartitionSpec as P

    return jax.jit(jax.shard_map(
        lambda X, gid, valid, lam_l, lam_g: _initial_state_impl(
            X, gid, n_groups, G_cap, L_cap, lam_l, lam_g, trace_len, axis_name=axis, valid=valid
        ),
        mesh=mesh, in_specs=(P(axis), P(axis), P(axis), P(), P()), out_specs=_state_specs(axis),
        check_vma=False,
    ))


@functools.cache
def _sharded_run(mesh, axis, n_groups):
    from jax.sharding import PartitionSpec as P

    specs = _state_specs(axis)
    return jax.jit(jax.shard_map(
        lambda X, gid, valid, lam_l, lam_g, max_iter, state: _loop(
            X, gid, lam_l, lam_g, max_iter, state, n_groups, axis_name=axis, valid=valid
        ),
        mesh=mesh, in_specs=(P(axis), P(axis), P(axis), P(), P(), P(), specs), out_specs=specs,
        check_vma=False,
    ))


def _grow(state: HardHDPState, G_cap: int, L_cap: int, n_groups: int) -> HardHDPState:
    dg = G_cap - state.centers.shape[0]
    dl = L_cap - state.local_group.shape[0]
    return state._replace(
        centers=jnp.pad(state.centers, ((0, dg), (0, 0))),
        local_group=jnp.pad(state.local_group, (0, dl), constant_values=n_groups),
        local_to_global=jnp.pad(state.local_to_global, (0, dl), constant_values=-1),
        overflow=jnp.asarray(False),
    )


# --------------------------------------------------------------------------- #
# Public API
# --------------------------------------------------------------------------- #


def hard_hdp(
    groups,
    lam_local,
    lam_global,
    *,
    group_ids=None,
    max_iter: int = 100,
    mesh=None,
) -> HardHDPResult:
    r"""Hard Gaussian HDP clustering of several data sets (Kulis & Jordan 2012, Algorithm 2).

    Clusters each data set into *local* clusters, each mapped to one of a set of
    *global* clusters shared by all data sets, by local search on

    .. math::

        J = \sum_{p=1}^{g} \sum_{x_{ij} \in \ell_p} \|x_{ij} - \mu_p\|^2
            + \lambda_\ell k + \lambda_g g ,

    where :math:`\ell_p` holds the points (of all data sets) whose local cluster
    maps to global cluster :math:`p`, :math:`\mu_p` is their mean, :math:`k =
    \sum_j k_j` the total number of local clusters and :math:`g` the number of
    global clusters.

    Parameters
    ----------
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets, in processing order.  With ``group_ids``, a single
        array ``X`` whose rows are split into data sets by ``group_ids``.
        float64 input is computed in float64 when ``jax_enable_x64`` is on.
    lam_local : float
        :math:`\lambda_\ell`, the penalty per local cluster, a **squared**
        distance (> 0).
    lam_global : float
        :math:`\lambda_g`, the penalty per global cluster, a **squared**
        distance (> 0).  See :func:`hard_hdp_penalties` for both.
    group_ids : array_like of int, shape (n,), optional
        Data set of every row of ``X = groups``.  Data sets are processed in
        sorted id order (``result.group_order``); rows keep their order inside
        a data set.
    max_iter : int, default 100
        Maximum number of iterations (steps 4-6 once each).
    mesh : jax.sharding.Mesh, optional
        Run sharded: the (group-major) rows are split over the devices of this
        mesh, which must have exactly one (data) axis, e.g.
        ``Mesh(np.array(jax.devices()), ("data",))``; padding rows are added
        to a multiple of the number of devices and ignored.  The result is the
        single-device result (see Notes).

    Returns
    -------
    HardHDPResult
        ``labels, local_labels, local_to_global`` (one array per data set),
        ``centers, objective, objective_trace, n_local, n_global, n_iter,
        converged, lam_local, lam_global, flat_labels, group_order``.

    Notes
    -----
    **Algorithm 2, exactly.**  Initialise one global cluster at the mean of all
    points and one local cluster per data set.  Iterate:

    4. For each data set ``j`` in order and each of its points ``x`` in order:
       :math:`d_p = \|x - \mu_p\|^2`, plus :math:`\lambda_\ell` for every ``p``
       to which no local cluster of ``j`` is mapped.  If :math:`\min_p d_p >
       \lambda_\ell + \lambda_g`, open a local cluster and a global cluster at
       ``x``; else with :math:`\hat p = \arg\min_p d_p`, join the
       lowest-index local cluster of ``j`` mapped to :math:`\hat p`, or open
       one mapped to it.  Then delete empty local clusters.
    5. For each local cluster ``S`` (data sets in order, local clusters in
       order), :math:`\bar d_p = \sum_{x \in S} \|x - \mu_p\|^2`; open a global
       cluster at the mean of ``S`` if :math:`\min_p \bar d_p > \lambda_g +
       \sum_{x\in S}\|x - \bar x_S\|^2`, else map ``S`` to :math:`\arg\min_p
       \bar d_p`.  Then delete global clusters with no local cluster.
    6. Recompute every :math:`\mu_p` as the mean of its points.

    Every step is non-increasing in :math:`J` (Theorem 4.1; the trace is
    returned).  Resolutions of the paper's silences (ours, docs/deviations.md#hard-hdp-resolutions):
    means are frozen during steps 4-5, except that a global opened in the step
    sits at its seed (the point in step 4, the local mean in step 5) and is
    visible to everything after it; the point's own current local cluster
    counts as an association; a local cluster opened in step 4 counts as an
    association for the later points of its data set; ties go to the lowest
    index and the new-cluster tests are strict; clusters are numbered in order
    of creation and renumbered in order after deletions.  The run stops when
    ``(z, v)`` is unchanged, when :math:`J` did not decrease by more than
    ``1e-12 |J|`` (relative, no absolute floor), or at ``max_iter``.

    **Bulk computation.**  Step 4 is not a scalar loop over all points.  One
    bulk distance computation finds the points that could change the state
    during the pass (open a local or a global cluster): those whose nearest
    unassociated global, plus :math:`\lambda_\ell`, is not farther than their
    nearest associated one; those that could open a global; and, when some
    point may open a global, those at least :math:`\lambda_\ell` from their
    nearest associated global.  Only these are visited serially, in order, with
    the literal rule; every other point joins, in one masked argmin, the
    nearest global associated with its data set at its turn.  Step 5 is a
    weighted DP-means pass over the local means (weights = sizes, penalty
    :math:`\lambda_g`), because :math:`\bar d_p = SSE_S + n_S\|\bar x_S -
    \mu_p\|^2`; it reuses :func:`bayesclust.inference.hard.dp_means.dp_means_pass`.
    Buffers of global and local clusters grow when full (the iteration is then
    re-run with at least twice the room, a recompile), so nothing is ever
    dropped.  Memory: the point-to-global distances (row-blocked when large)
    and two ``D x g`` integer tables (per data set and global cluster: the
    first local cluster mapped to it, and when that association was made).
    The first pass is mostly serial (from one global cluster at the mean,
    almost every point may open a cluster); later passes usually visit no
    point serially.

    **Scale.**  The data are centred internally (the algorithm is translation
    invariant) and multiplied by a power of two ``2**-e`` so that the largest
    centred value lies in [0.5, 1), both penalties by ``4**-e``: exact, so the
    results are those of the centred data bit for bit, float32 data of any
    magnitude neither overflow nor flush to zero, and ``groups * s`` with
    penalties times ``s**2`` gives the same partition in the same number of
    iterations (the stopping test is relative, with no absolute floor).  A
    ``ValueError`` names ``lam_local`` or ``lam_global`` when its scaled value
    is above ``finfo.max / (2 n)`` or, for non-constant data, below
    ``finfo.tiny`` of the working dtype.

    **Shape buckets.**  On one device the rows are padded with zero rows to
    :func:`~bayesclust.kernels.padded_rows` ``(n)`` and masked out of every
    statistic (the sums in a padding-invariant order): every ``n`` of a bucket
    (``n + 7`` rows, a cross-validation fold) runs the same compiled programs,
    with the unpadded result bit for bit.

    **Sharded execution** (``mesh``).  Each device holds a
    contiguous block of the group-major rows and runs the same loop inside
    ``jax.shard_map``.  Step 4: the serial-set test on its own rows (the first
    possible global seed found by a ``pmin`` over devices); the serial set
    all-gathered, its rows' coordinates assembled 256 at a time, and the
    serial visits run *identically on every device* in global row order; the
    bulk masked argmin on its own rows.  Steps 5-6: per-local-cluster and
    per-global-cluster counts and sums combined with ``psum``; step 5 (over
    the few local clusters) is replicated.  Labels, cluster counts and
    iterations equal the single-device run's; centres and objective equal
    them up to the order of floating-point summation.  Multi-host: call
    ``jax.distributed.initialize(...)`` in every process, build the mesh over
    ``jax.devices()`` and call ``hard_hdp(..., mesh=mesh)`` in every process
    with the same data; every process receives the full result.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012, §4.1, Algorithm 2 and Theorem 4.1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import hard_hdp
    >>> a = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> b = np.array([[0.0, 0.1], [5.0, 5.1]])
    >>> res = hard_hdp([a, b], lam_local=1.0, lam_global=2.0)
    >>> res.n_global, res.n_local.tolist()
    (2, [2, 2])
    >>> [lab.tolist() for lab in res.labels]
    [[0, 0, 1, 1], [0, 1]]

    Sharded over all local devices (on several hosts: ``jax.distributed.initialize()``
    first in every process, then the same call with the same data):

    >>> import jax
    >>> from jax.sharding import Mesh
    >>> mesh = Mesh(np.array(jax.devices()), ("data",))
    >>> [lab.tolist() for lab in hard_hdp([a, b], 1.0, 2.0, mesh=mesh).labels]
    [[0, 0, 1, 1], [0, 1]]
    """
    X, gid, order, group_order = V.check_groups(groups, group_ids)
    lam_local = V.check_positive(lam_local, "lam_local")
    lam_global = V.check_positive(lam_global, "lam_global")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    n, _ = X.shape
    D = len(group_order)

    if mesh is not None:
        axis = check_mesh(mesh)

    # The unit frame: centred and scaled by a power of two (exact), the penalties by its square.
    mean = V.centre(X)
    Xs, e = V.to_unit_frame(X, mean, "X")
    nonconstant = bool(np.any(Xs))
    lam_l_s = V.check_unit_penalty(lam_local, "lam_local", e, Xs.dtype, n_terms=2 * n,
                                   nonconstant=nonconstant)
    lam_g_s = V.check_unit_penalty(lam_global, "lam_global", e, Xs.dtype, n_terms=2 * n,
                                   nonconstant=nonconstant)
    if mesh is None:
        # Rows padded to a shape bucket (zero rows in the last data set, masked out of every
        # statistic, never visited): n rows and n + 7 rows run the same compiled programs,
        # with the unpadded result bit for bit (the sums are padding-invariant).
        n_pad = _pad_to(n)
        Xj = jnp.asarray(np.concatenate([Xs, np.zeros((n_pad - n, Xs.shape[1]), Xs.dtype)]))
        gj = jnp.asarray(np.concatenate([gid, np.full(n_pad - n, D - 1, gid.dtype)]), jnp.int32)
        valid = jnp.asarray(np.arange(n_pad) < n)
    else:
        (Xj, gj, valid), _ = shard_rows(mesh, axis, Xs, gid.astype(np.int32), np.ones(n, bool))
    if mesh is None:
        lam_l = jnp.asarray(lam_l_s, Xj.dtype)
        lam_g = jnp.asarray(lam_g_s, Xj.dtype)
    else:  # host scalars: valid inputs on any mesh
        lam_l = np.asarray(lam_l_s, Xj.dtype)
        lam_g = np.asarray(lam_g_s, Xj.dtype)
    G_cap, L_cap, G_bound, L_bound = _start_capacities(n, D)
    # The trace buffer has a fixed length (a longer run records it in pieces), so a new
    # max_iter never compiles a new program (max_iter itself is traced).
    trace_len = TRACE_PIECE
    if mesh is None:
        state = _initial_state(Xj, gj, n_groups=D, G_cap=G_cap, L_cap=L_cap, lam_l=lam_l,
                               lam_g=lam_g, trace_len=trace_len, valid=valid)
    else:
        state = _sharded_init(mesh, axis, D, G_cap, L_cap, trace_len)(Xj, gj, valid, lam_l, lam_g)

    def run(todo, s):
        if mesh is None:
            return _run(Xj, gj, lam_l, lam_g, todo, s, n_groups=D, valid=valid)
        return _sharded_run(mesh, axis, D)(Xj, gj, valid, lam_l, lam_g, todo, s)

    def grow(s):
        nonlocal G_cap, L_cap
        if not bool(s.overflow):
            return None
        if G_cap >= G_bound and L_cap >= L_bound:  # pragma: no cover - impossible by the bounds
            raise RuntimeError("hard_hdp: cluster buffers overflowed at their upper bound")
        # Grow at once to what the discarded iteration asked for (at least double).
        need_g, need_l = (int(v) for v in s.need)
        G_cap = min(max(2 * G_cap, pow2_at_least(need_g)), G_bound)
        L_cap = min(max(2 * L_cap, pow2_at_least(need_l)), L_bound)
        return _grow(s, G_cap, L_cap, D)

    state, traces, it = run_in_pieces(state, run, max_iter, piece=trace_len, grow=grow)

    state = state._replace(local_labels=to_host(state.local_labels)[:n])
    state = jax.device_get(state)  # one transfer, then host-side slicing
    g = int(state.n_global)
    k = int(state.n_local)
    z = np.asarray(state.local_labels).astype(np.int64)
    loc_group = np.asarray(state.local_group[:k]).astype(np.int64)
    loc_global = np.asarray(state.local_to_global[:k]).astype(np.int64)
    n_local = np.bincount(loc_group, minlength=D)
    first_slot = np.concatenate([[0], np.cumsum(n_local)[:-1]])
    global_sorted = loc_global[z]
    local_sorted = z - first_slot[gid]
    splits = np.cumsum(np.bincount(gid, minlength=D))[:-1]
    flat = np.empty(n, np.int64)
    flat[order] = global_sorted
    return HardHDPResult(
        labels=np.split(global_sorted, splits),
        local_labels=np.split(local_sorted, splits),
        local_to_global=np.split(loc_global, np.cumsum(n_local)[:-1]),
        centers=(np.ldexp(np.asarray(state.centers[:g]), e) + mean).astype(Xj.dtype),
        objective=math.ldexp(float(state.objective), 2 * e),
        objective_trace=_from_unit(traces["objective_trace"], e),
        n_local=n_local,
        n_global=g,
        n_iter=it,
        converged=bool(state.converged),
        lam_local=lam_local,
        lam_global=lam_global,
        flat_labels=flat,
        group_order=group_order,
    )


#: The driver's row padding (a name of its own: the tests switch it off).
_pad_to = padded_rows


_PENALTY_METHODS = ("local-clusters", "literal")
#: lam_global / lam_local of the helper run whose local clusters are the units of
#: the "local-clusters" heuristic (global clusters practically free).
_FREE_GLOBALS = 1e-9


def _farthest_first_units(M, W, rounds):
    """Farthest-first over weighted units: ``dist(u, T) = W_u min_t |M_u - t|^2``.

    ``T`` starts at the weighted mean; returns the distance of the farthest unit
    measured when ``|T| = rounds`` (the convention of ``farthest_first_lambda``).
    """
    mean = (W[:, None] * M).sum(0) / W.sum()
    dmin = W * np.sum((M - mean) ** 2, axis=1)
    lam = 0.0
    for _ in range(rounds):
        far = int(np.argmax(dmin))
        lam = float(dmin[far])
        dmin = np.minimum(dmin, W * np.sum((M - M[far]) ** 2, axis=1))
    return lam


def hard_hdp_penalties(
    groups, n_local: int, n_global: int, *, group_ids=None, method: str = "local-clusters"
) -> tuple[float, float]:
    r"""Penalties ``(lam_local, lam_global)`` of :func:`hard_hdp` for desired cluster counts.

    Parameters
    ----------
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets (with ``group_ids``, as in :func:`hard_hdp`).
    n_local : int
        Desired number of local clusters per data set (>= 1).
    n_global : int
        Desired number of global clusters (>= 1).
    group_ids : array_like of int, shape (n,), optional
    method : {"local-clusters", "literal"}, default "local-clusters"
        How ``lam_global`` is chosen (see Notes).

    Returns
    -------
    lam_local, lam_global : float
        Squared distances.

    Notes
    -----
    **lam_local** (Kulis & Jordan §6.1): the DP-means farthest-first value
    (:func:`~bayesclust.farthest_first_lambda`) of every data set with
    ``k = min(n_local, n_j)``, averaged over the data sets.

    **lam_global.**  KJ: "replace distances of points to elements of T with sums
    of distances of points in a data set to elements of T".

    * ``"literal"``: units are the data sets, ``dist(j, T) = min_t sum_i
      |x_ij - t|^2``, ``T`` starts at the global mean and grows by the farthest
      data set's mean; the value at round ``n_global`` (``n_global <= D``).  On
      the paper's synthetic data (:func:`bayesclust.datasets.hdp_groups`) this
      gives ``lam_global`` of 6-8 against ``lam_local`` of about 0.1, and the
      algorithm returns a single global cluster: the sentence cannot be what was
      run (docs/deviations.md#hard-hdp-lambda-global).
    * ``"local-clusters"`` (ours, default): units are local clusters, the
      objects that step 5 maps to global clusters.  Each data set is clustered
      at ``lam_local`` with global clusters practically free (:func:`hard_hdp`
      with ``lam_global = 1e-9 lam_local``, i.e. independent DP-means
      clusterings); a local cluster ``S`` is at ``dist(S, T) = min_t n_S
      |mean_S - t|^2`` -- the sum of squared distances of its points to ``t``
      minus its own scatter, exactly the step-5 cost -- and the weighted
      farthest-first value at round ``n_global`` is returned.  On
      ``hdp_groups`` draws 0-5 with ``n_local=5, n_global=15`` it gives
      ``lam_global`` of about 1.6-2.4 ``lam_local`` and 17-23 global clusters
      (KJ: 17).

    A simpler rule: ``lam_global = 2 lam_local`` gives
    14-20 global clusters on the same draws.

    Examples
    --------
    >>> from bayesclust.datasets import hdp_groups
    >>> groups, _, _ = hdp_groups(0)
    >>> lam_l, lam_g = hard_hdp_penalties(groups, 5, 15)
    >>> round(lam_l, 3), 1.0 < lam_g / lam_l < 3.0
    (0.101, True)
    """
    X, gid, _, group_order = V.check_groups(groups, group_ids)
    n_local = V.check_int(n_local, "n_local", minimum=1)
    n_global = V.check_int(n_global, "n_global", minimum=1)
    if method not in _PENALTY_METHODS:
        raise ValueError(f"method must be one of {_PENALTY_METHODS}, got {method!r}")
    D = len(group_order)
    starts = np.searchsorted(gid, np.arange(D + 1))
    parts = [X[starts[j]: starts[j + 1]] for j in range(D)]
    lam_local = float(np.mean([farthest_first_lambda(P, min(n_local, len(P))) for P in parts]))
    if not lam_local > 0:
        raise ValueError("every data set has fewer distinct points than needed: lam_local is 0")
    X64 = X.astype(np.float64)
    if method == "literal":
        if n_global > D:
            raise ValueError(f"n_global must be <= the number of data sets ({D}) for "
                             f"method='literal', got {n_global}")
        T = [X64.mean(0)]
        dmin = np.array([np.sum((X64[gid == j] - T[0]) ** 2) for j in range(D)])
        lam_global = 0.0
        for _ in range(n_global):
            far = int(np.argmax(dmin))
            lam_global = float(dmin[far])
            t = X64[gid == far].mean(0)
            dmin = np.minimum(dmin, [np.sum((X64[gid == j] - t) ** 2) for j in range(D)])
    else:
        free = hard_hdp(X, lam_local, _FREE_GLOBALS * lam_local, group_ids=gid)
        z = np.concatenate(free.local_labels) + np.repeat(
            np.concatenate([[0], np.cumsum(free.n_local)[:-1]]), np.bincount(gid, minlength=D)
        )
        W = np.bincount(z).astype(np.float64)
        M = np.zeros((W.shape[0], X.shape[1]))
        np.add.at(M, z, X64)
        M /= W[:, None]
        if n_global > W.shape[0]:
            raise ValueError(f"n_global must be <= the number of local clusters found at "
                             f"lam_local ({W.shape[0]}), got {n_global}")
        lam_global = _farthest_first_units(M, W, n_global)
    if not lam_global > 0:
        raise ValueError("the data have too few distinct units for n_global: lam_global is 0")
    return lam_local, lam_global
