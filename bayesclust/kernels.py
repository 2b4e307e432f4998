"""Shared JAX numerics used by every model and every hard limit.

Written once, used everywhere: the squared distances of the DP mixture's
likelihood are the distances of DP-means' assignment step; the sufficient
statistics of the Gibbs sampler's mean update are the M-step of DP-means.

All functions are pure, jit-compatible and shape-polymorphic in the usual JAX
sense (static shapes, dynamic values).  Matrix products take an explicit
``precision`` so that GPUs never silently use TF32 for distance products.

This module imports only jax and numpy.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

__all__ = [
    "PRECISION",
    "NEVER",
    "squared_norms",
    "squared_distances",
    "nearest_center",
    "NearestCenter",
    "assigned_squared_distances",
    "segment_stats",
    "SegmentStats",
    "weighted_means",
    "compact_labels",
    "assignment_block_size",
]

#: Precision of every distance product.  HIGHEST keeps full float32 on GPUs
#: (no TF32); on CPUs it costs nothing.
PRECISION = lax.Precision.HIGHEST

#: "Birth" index of a slot that is never visible (an inactive buffer slot).
NEVER = jnp.iinfo(jnp.int32).max


def squared_norms(X: jax.Array) -> jax.Array:
    """Row-wise squared Euclidean norms ``|x_i|^2``.

    Parameters
    ----------
    X : array, shape (n, d)

    Returns
    -------
    array, shape (n,)
    """
    return jnp.einsum("nd,nd->n", X, X, precision=PRECISION)


def squared_distances(
    X: jax.Array,
    C: jax.Array,
    x_sq: jax.Array | None = None,
    c_sq: jax.Array | None = None,
) -> jax.Array:
    """All squared distances in the GEMM form ``|x|^2 - 2 x.c + |c|^2``.

    Parameters
    ----------
    X : array, shape (n, d)
    C : array, shape (k, d)
    x_sq, c_sq : array, shape (n,) and (k,), optional
        Precomputed squared norms.

    Returns
    -------
    array, shape (n, k)
        Clipped at 0 (rounding can make the GEMM form slightly negative).

    Notes
    -----
    The GEMM form loses relative accuracy when ``|x|`` is large compared with
    ``|x - c|``; centre the data first (DP-means does) and recompute winning
    distances with :func:`assigned_squared_distances` where exactness matters.
    """
    if x_sq is None:
        x_sq = squared_norms(X)
    if c_sq is None:
        c_sq = squared_norms(C)
    cross = jnp.matmul(X, C.T, precision=PRECISION)
    return jnp.maximum(x_sq[:, None] - 2.0 * cross + c_sq[None, :], 0.0)


class NearestCenter(NamedTuple):
    """Result of :func:`nearest_center`.

    Attributes
    ----------
    sq_dist : array, shape (n,)
        Squared distance to the winning centre, recomputed by direct
        differences (``inf`` when no centre is visible to the point).
    index : array of int32, shape (n,)
        Index of the winning centre; ties go to the lowest index.
    """

    sq_dist: jax.Array
    index: jax.Array


def assignment_block_size(n: int, k: int) -> int:
    """Rows per block of the assignment step (a static, shape-only choice).

    Blocks keep the ``block x k`` distance tile in cache-sized memory; small
    problems are done in one block because ``lax.map`` has per-step overhead.
    """
    target = 4096 if k <= 128 else max(256, (4096 * 128) // k)
    return n if n <= 2 * target else target


def _nearest_in_block(Xb, xb_sq, rows, C, c_sq, birth):
    scores = c_sq[None, :] - 2.0 * jnp.matmul(Xb, C.T, precision=PRECISION)
    visible = birth[None, :] <= rows[:, None]
    scores = jnp.where(visible, scores, jnp.inf)
    index = jnp.argmin(scores, axis=1).astype(jnp.int32)
    any_visible = jnp.any(visible, axis=1)
    diff = Xb - C[index]
    exact = jnp.einsum("bd,bd->b", diff, diff, precision=PRECISION)
    return jnp.where(any_visible, exact, jnp.inf), index


def nearest_center(
    X: jax.Array,
    C: jax.Array,
    birth: jax.Array,
    *,
    row_offset: int | jax.Array = 0,
    block_size: int | None = None,
) -> NearestCenter:
    """Nearest visible centre of every row, blocked over rows.

    Centre ``c`` is visible to row ``i`` iff ``birth[c] <= row_offset + i``.
    Use ``birth = -1`` for centres visible to every row, :data:`NEVER` for
    inactive buffer slots, and the seed's row index for a centre created during
    a DP-means pass (Algorithm 1: point ``i`` sees new centres created at or
    before ``i``).

    Parameters
    ----------
    X : array, shape (n, d)
    C : array, shape (k, d)
    birth : int array, shape (k,)
    row_offset : int
        Global index of row 0 of ``X``.
    block_size : int, optional
        Rows per block; default :func:`assignment_block_size`.

    Returns
    -------
    NearestCenter
        ``sq_dist`` (exact, direct differences) and ``index`` of the winner.

    Notes
    -----
    The argmin uses ``|c|^2 - 2 x.c`` (``|x|^2`` is constant per row and cannot
    change it); the winner's distance is then recomputed as ``|x - c|^2``, so
    cancellation in the GEMM form can only matter for near-ties.  Rows are
    processed in blocks so the ``n x k`` matrix is never materialised for large
    ``n``.
    """
    n, _ = X.shape
    k = C.shape[0]
    c_sq = squared_norms(C)
    rows = jnp.arange(n, dtype=jnp.int32) + jnp.asarray(row_offset, jnp.int32)
    if block_size is None:
        block_size = assignment_block_size(n, k)
    n_full = (n // block_size) * block_size
    if n_full == n and n_full == block_size:
        d2, idx = _nearest_in_block(X, None, rows, C, c_sq, birth)
        return NearestCenter(d2, idx)
    parts_d, parts_i = [], []
    if n_full:
        nb = n_full // block_size
        Xb = X[:n_full].reshape(nb, block_size, -1)
        rb = rows[:n_full].reshape(nb, block_size)
        d2, idx = lax.map(lambda a: _nearest_in_block(a[0], None, a[1], C, c_sq, birth), (Xb, rb))
        parts_d.append(d2.reshape(-1))
        parts_i.append(idx.reshape(-1))
    if n_full < n:
        d2, idx = _nearest_in_block(X[n_full:], None, rows[n_full:], C, c_sq, birth)
        parts_d.append(d2)
        parts_i.append(idx)
    return NearestCenter(jnp.concatenate(parts_d), jnp.concatenate(parts_i))


def assigned_squared_distances(X: jax.Array, C: jax.Array, labels: jax.Array) -> jax.Array:
    """``|x_i - C[labels_i]|^2`` by direct differences, shape (n,).

    Exact (no GEMM cancellation) and ``O(n d)``: the sum-of-squares term of
    the DP-means objective and of the Gaussian likelihood.
    """
    diff = X - C[labels]
    return jnp.einsum("nd,nd->n", diff, diff, precision=PRECISION)


class SegmentStats(NamedTuple):
    """Per-cluster sufficient statistics of an isotropic Gaussian mixture.

    Attributes
    ----------
    weight : array, shape (k,)
        ``s_c = sum_{i: z_i = c} w_i`` (counts when unweighted).
    sum : array, shape (k, d)
        ``sum_{i: z_i = c} w_i x_i``.
    """

    weight: jax.Array
    sum: jax.Array


def segment_stats(
    X: jax.Array,
    labels: jax.Array,
    num_segments: int,
    sample_weight: jax.Array | None = None,
) -> SegmentStats:
    """Weighted counts and sums per cluster by ``segment_sum`` (one pass over X).

    Parameters
    ----------
    X : array, shape (n, d)
    labels : int array, shape (n,)
        Values in ``[0, num_segments)``; others are dropped.
    num_segments : int
        Static number of clusters (buffer capacity).
    sample_weight : array, shape (n,), optional

    Returns
    -------
    SegmentStats
    """
    if sample_weight is None:
        weight = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments)
        total = jax.ops.segment_sum(X, labels, num_segments)
    else:
        weight = jax.ops.segment_sum(sample_weight, labels, num_segments)
        total = jax.ops.segment_sum(X * sample_weight[:, None], labels, num_segments)
    return SegmentStats(weight, total)


def weighted_means(stats: SegmentStats) -> jax.Array:
    """Cluster means ``sum / weight``; rows with zero weight are 0 (never NaN)."""
    safe = jnp.where(stats.weight > 0, stats.weight, 1.0)
    return jnp.where(stats.weight[:, None] > 0, stats.sum / safe[:, None], 0.0)


def compact_labels(labels: jax.Array, keep: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Relabel so kept clusters are ``0..k'-1`` in their original order.

    Parameters
    ----------
    labels : int array, shape (n,)
        Every label must refer to a kept cluster.
    keep : bool array, shape (K,)
        Which cluster slots survive (e.g. non-empty ones).

    Returns
    -------
    new_labels : int array, shape (n,)
    new_index : int array, shape (K,)
        New position of each slot; ``K`` (out of range) for dropped slots, so
        ``x.at[new_index].set(v, mode="drop")`` compacts a per-cluster array.
    n_kept : int scalar
    """
    K = keep.shape[0]
    rank = jnp.cumsum(keep.astype(jnp.int32)) - 1
    new_index = jnp.where(keep, rank, K).astype(jnp.int32)
    return new_index[labels], new_index, jnp.sum(keep, dtype=jnp.int32)
