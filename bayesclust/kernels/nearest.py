"""The nearest-centre core: squared distances, the nearest centre (blocked rows,
native on CPU), segment statistics, the padded-rows grid, label compaction.

Written once, used everywhere: the squared distances of the DP mixture's
likelihood are the distances of DP-means' assignment step; the sufficient
statistics of the Gibbs sampler's mean update are the M-step of DP-means.
Matrix products take an explicit ``precision`` so that GPUs never silently use
TF32 for distance products. The nearest-centre step dispatches to the package's
native XLA:CPU kernels (``bayesclust._native``) when they are built.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _native

__all__ = [
    "PRECISION",
    "NEVER",
    "squared_norms",
    "squared_distances",
    "nearest_center",
    "nearest_center_stats",
    "NearestCenter",
    "assigned_squared_distances",
    "segment_stats",
    "SegmentStats",
    "weighted_means",
    "compact_labels",
    "assignment_block_size",
    "padded_rows",
    "sum_rows",
    "map_row_blocks",
]

#: Precision of every distance product.  HIGHEST keeps full float32 on GPUs
#: (no TF32); on CPUs it costs nothing.
PRECISION = lax.Precision.HIGHEST

#: "Birth" index of a slot that is never visible (an inactive buffer slot).
NEVER = jnp.iinfo(jnp.int32).max

from .._validation import check_kernel_array, check_kernel_ids, check_kernel_points, check_same_length


def squared_norms(X: jax.Array) -> jax.Array:
    """Row-wise squared Euclidean norms ``|x_i|^2``.

    Parameters
    ----------
    X : array, shape (n, d)

    Returns
    -------
    array, shape (n,)

    Notes
    -----
    An elementwise product and a sum, not a dot: it fuses with its producer
    (no ``(n, d)`` temporary) and never runs on reduced-precision matrix units.
    """
    X = check_kernel_array(X, "X", ndim=2)
    check_kernel_points(X=X)
    return jnp.sum(X * X, axis=-1)


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
    X = check_kernel_array(X, "X", ndim=2)
    C = check_kernel_array(C, "C", ndim=2)
    check_kernel_points(X=X, C=C)
    if x_sq is not None:
        x_sq = check_kernel_array(x_sq, "x_sq", ndim=1)
    if c_sq is not None:
        c_sq = check_kernel_array(c_sq, "c_sq", ndim=1)
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


#: Up to this many centres the running argmin is unrolled (a compare/select chain is
#: faster than ``jnp.argmin`` on XLA:CPU: BENCHMARKS.md).
_UNROLL_MAX_CENTERS = 128
#: Up to this many features the scores are exact differences, not a GEMM.
_DIRECT_MAX_FEATURES = 4
#: Centres per unrolled chunk on the exact-difference path (k * d ops are
#: unrolled there, and XLA's compile time grows quickly with them).
_DIRECT_CHUNK = 32
#: Fewer rows than this use one broadcast (rows, k, d) product: XLA:CPU's
#: compile of the unrolled chain explodes in memory for a handful of rows.
_FEW_ROWS = 12
#: Above this many ``n x k`` entries the rows are processed in blocks.
_MAX_TILE_ENTRIES = 1 << 27


#: Fewest rows :func:`padded_rows` pads to.
_MIN_PADDED_ROWS = 32


def padded_rows(n: int) -> int:
    """The row count a jitted fit pads ``n`` rows to (a static, shape-only choice).

    The smallest number ``>= n`` of the form ``m * 2**e`` with ``m`` in
    ``{4, 5, 6, 7}`` (at least 32): steps of at most 25%.  A program compiled
    for one padded size serves every ``n`` that pads to it, so adding a few
    rows, a cross-validation fold or a bootstrap sample reuses the compiled
    executable; the extra rows get weight 0 (they change no statistic).

    Examples
    --------
    >>> [padded_rows(n) for n in (1, 32, 33, 150, 157, 1000, 100_000)]
    [32, 32, 40, 160, 160, 1024, 114688]
    """
    n = int(n)
    if n <= _MIN_PADDED_ROWS:
        return _MIN_PADDED_ROWS
    e = max(0, (n - 1).bit_length() - 3)  # 4 * 2**e < n <= 8 * 2**e
    return -(-n // (1 << e)) * (1 << e) if -(-n // (1 << e)) < 8 else 8 << e


#: Rows per chunk of :func:`sum_rows`.
_SUM_CHUNK = 128


def sum_rows(a: jax.Array) -> jax.Array:
    """``a.sum(axis=0)`` in an order that trailing zero rows cannot change.

    A plain reduction's association depends on the length: the sum of ``n``
    rows and of the same rows followed by zeros (the padding of
    :func:`padded_rows`) differ in the last bits.  Here the rows are summed in
    chunks of 128 consecutive rows, then the chunk sums in chunks of 128, and
    so on: every partial sum covers a fixed range of row indices, so padding
    adds exact zeros to the same partial sums.

    Parameters
    ----------
    a : array, shape (n, ...)

    Returns
    -------
    array, shape a.shape[1:]
    """
    a = check_kernel_array(a, "a", ndim=(1, 2, 3, 4), finite=False)
    if a.shape[0] == 0:
        return jnp.zeros(a.shape[1:], a.dtype)
    while a.shape[0] > 1:
        pad = -a.shape[0] % _SUM_CHUNK
        a = jnp.pad(a, ((0, pad),) + ((0, 0),) * (a.ndim - 1))
        a = a.reshape((-1, _SUM_CHUNK) + a.shape[1:]).sum(axis=1)
    return a[0]


def assignment_block_size(n: int, k: int) -> int:
    """Rows per block of the assignment step (a static, shape-only choice).

    Measured on a 2-core CPU: row blocking with ``lax.map`` never beat one
    block (its per-step overhead outweighs the smaller temporaries), so blocks
    are used only to bound memory, when ``n * k`` exceeds ``2**27`` entries
    (512 MiB of float32 scores).
    """
    if n * k <= _MAX_TILE_ENTRIES:
        return n
    return max(1024, _MAX_TILE_ENTRIES // k)


def map_row_blocks(fn, block_size: int, *row_arrays):
    """``fn(*row_arrays)`` computed block by block over the rows (``lax.map``).

    ``fn`` must be row-wise (row ``i`` of every output depends only on row
    ``i`` of the inputs).  The rows are split into ``ceil(n / block_size)``
    equal blocks of at most ``block_size`` rows; when they do not tile ``n``
    exactly the last block overlaps the one before it by fewer rows than there
    are blocks (it starts at ``n - size``) instead of being a separate, smaller
    call, so ``fn`` is compiled once, not twice (a shorter compile: BENCHMARKS.md).
    Used to bound the ``(rows, k)``
    temporaries of the assignment steps.

    Parameters
    ----------
    fn : callable
        Takes arrays of shape ``(block_size, ...)``, returns a pytree of
        arrays of shape ``(block_size, ...)``.
    block_size : int
        Static rows per block; ``>= n`` means one call on all rows.
    *row_arrays : arrays, shape (n, ...)

    Returns
    -------
    The pytree ``fn`` returns, with ``n`` rows.
    """
    if (isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer))
            or block_size < 1):
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    n = row_arrays[0].shape[0]
    if any(a.shape[0] != n for a in row_arrays):
        shapes = [a.shape for a in row_arrays]
        raise ValueError(f"row_arrays must share their first dimension, got shapes {shapes}")
    bs = min(int(block_size), n)
    if bs == n:
        return fn(*row_arrays)
    n_blocks = -(-n // bs)
    bs = -(-n // n_blocks)  # equal blocks: the last one overlaps by < n_blocks rows
    starts = jnp.minimum(jnp.arange(n_blocks, dtype=jnp.int32) * bs, n - bs)
    out = lax.map(
        lambda start: fn(*(lax.dynamic_slice_in_dim(a, start, bs) for a in row_arrays)), starts
    )
    new_in_last = n - (n_blocks - 1) * bs

    def assemble(o):
        head = o[:-1].reshape((n_blocks - 1) * bs, *o.shape[2:])
        return jnp.concatenate([head, o[-1, bs - new_in_last:]])

    return jax.tree.map(assemble, out)


def _running_argmin(column, visible, k: int) -> tuple[jax.Array, jax.Array]:
    """Minimum and its first index over ``k`` score columns (statically unrolled).

    ``column(j)`` and ``visible(j)`` return (b,) arrays; invisible entries
    never win and strict ``<`` keeps the lowest index on ties.
    """
    best = jnp.where(visible(0), column(0), jnp.inf)
    index = jnp.zeros(best.shape, jnp.int32)
    for j in range(1, k):
        s = jnp.where(visible(j), column(j), jnp.inf)
        better = s < best
        best = jnp.where(better, s, best)
        index = jnp.where(better, jnp.int32(j), index)
    return best, index


def _chain_over_centers(Xb, rows, C, c_sq, valid, birth, direct):
    """Running (min score, argmin) over the centres of one chunk (<= 128)."""
    k, d = C.shape
    if birth is None:
        visible = lambda j: valid[j]  # noqa: E731 - one flag per centre
    else:
        visible = lambda j: valid[j] & (birth[j] <= rows)  # noqa: E731
    if direct:
        # Exact differences feature by feature: no (b, k) or (b, d) temporaries.
        features = [Xb[:, t] for t in range(d)]
        return _running_argmin(
            lambda j: sum((features[t] - C[j, t]) ** 2 for t in range(d)), visible, k
        )
    # |x|^2 is constant per row and cannot change the argmin.  The affine
    # part is applied centre by centre inside the chain so that XLA fuses it
    # there instead of writing a second score matrix.  The product is laid out
    # (k, b): each centre's scores are contiguous over the rows, so the chain
    # vectorises across rows (with (b, k) it read one row's k scores at a
    # time; faster with many clusters, measured in BENCHMARKS.md).
    cross = lax.dot_general(C, Xb, (((1,), (1,)), ((), ())), precision=PRECISION)
    return _running_argmin(lambda j: c_sq[j] - 2.0 * cross[j], visible, k)


def _nearest_few_rows(Xb, rows, C, valid, birth):
    """Exact distances by broadcasting: cheap to compile, for a handful of rows."""
    vis = valid[None, :] if birth is None else valid[None, :] & (birth[None, :] <= rows[:, None])
    d2 = jnp.sum((Xb[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    d2 = jnp.where(vis, d2, jnp.inf)
    index = jnp.argmin(d2, axis=1).astype(jnp.int32)
    return jnp.take_along_axis(d2, index[:, None], axis=1)[:, 0], index


def _nearest_in_block(Xb, rows, C, c_sq, valid, birth):
    k, d = C.shape
    if Xb.shape[0] < _FEW_ROWS:
        return _nearest_few_rows(Xb, rows, C, valid, birth)
    direct = d <= _DIRECT_MAX_FEATURES
    chunk = min(_UNROLL_MAX_CENTERS, _DIRECT_CHUNK) if direct else _UNROLL_MAX_CENTERS
    if k <= chunk:
        best, index = _chain_over_centers(Xb, rows, C, c_sq, valid, birth, direct)
    else:
        # Many centres: a loop over chunks of 128, each an unrolled chain, so
        # compile time stays bounded and jnp.argmin's slow CPU path is avoided.
        n_chunks = -(-k // chunk)
        pad = n_chunks * chunk - k
        Cp = jnp.pad(C, ((0, pad), (0, 0)))
        c_sq_p = jnp.pad(c_sq, (0, pad))
        valid_p = jnp.pad(valid, (0, pad))
        birth_p = None if birth is None else jnp.pad(birth, (0, pad), constant_values=NEVER)

        def body(c, carry):
            best, index = carry
            sl = lambda a: lax.dynamic_slice_in_dim(a, c * chunk, chunk)  # noqa: E731
            b, i = _chain_over_centers(
                Xb, rows, sl(Cp), sl(c_sq_p), sl(valid_p),
                None if birth_p is None else sl(birth_p), direct,
            )
            better = b < best
            return jnp.where(better, b, best), jnp.where(better, i + c * chunk, index)

        init = (jnp.full(Xb.shape[0], jnp.inf, Xb.dtype), jnp.zeros(Xb.shape[0], jnp.int32))
        best, index = lax.fori_loop(0, n_chunks, body, init)
    if direct:
        return best, index  # already exact (inf when nothing is visible)
    exact = assigned_squared_distances(Xb, C, index)
    # Whether any centre is visible is decided from the masks, not from
    # ``best``: reading ``best`` here makes XLA evaluate the chain twice.
    if birth is None:
        seen = jnp.any(valid)
    else:
        seen = rows >= jnp.min(jnp.where(valid, birth, NEVER))
    return jnp.where(seen, exact, jnp.inf), index


def nearest_center(
    X: jax.Array,
    C: jax.Array,
    valid: jax.Array | None = None,
    *,
    birth: jax.Array | None = None,
    row_offset: int | jax.Array = 0,
    block_size: int | None = None,
) -> NearestCenter:
    """Nearest valid (and visible) centre of every row.

    Parameters
    ----------
    X : array, shape (n, d)
    C : array, shape (k, d)
    valid : bool array, shape (k,), optional
        Active slots of a fixed-capacity centre buffer (default: all).
    birth : int array, shape (k,), optional
        Row-dependent visibility: centre ``c`` is visible to row ``i`` iff
        ``birth[c] <= row_offset + i``.  DP-means uses the seed's row index of
        a centre opened during a pass (Algorithm 1: point ``i`` sees the new
        centres opened at or before ``i``).
    row_offset : int
        Global index of row 0 of ``X`` (with ``birth``).
    block_size : int, optional
        Rows per block; default :func:`assignment_block_size`.

    Returns
    -------
    NearestCenter
        ``sq_dist`` (exact, direct differences; ``inf`` if no centre is
        visible) and ``index`` of the winner (lowest index on ties).

    Notes
    -----
    On a CPU with the native kernels built (``bayesclust._native``; default
    ``block_size`` only) the step is one fused XLA FFI call: GEMM scores,
    argmin and the winner's exact distance tile by tile in registers, with
    the same semantics as the XLA path described next.
    For ``d > 4`` the argmin uses the GEMM scores ``|c|^2 - 2 x.c`` with an
    explicit matmul precision; for ``d <= 4`` it uses exact differences.  The
    argmin is an unrolled compare/select chain over chunks of 128 centres
    (faster than ``jnp.argmin`` on XLA:CPU: BENCHMARKS.md).  The winner's distance is
    always recomputed as ``|x - c|^2``, so GEMM cancellation can only matter
    for near-ties.  Rows are blocked only when ``n * k`` is large (to bound
    memory; blocking was slower on CPU).
    """
    X = check_kernel_array(X, "X", ndim=2)
    C = check_kernel_array(C, "C", ndim=2)
    check_kernel_points(X=X, C=C)
    k = C.shape[0]
    if valid is None:
        valid = jnp.ones(k, bool)
    if block_size is None and _native_ok(X, C):
        birth_or_zero = jnp.zeros(k, jnp.int32) if birth is None else birth

        def native(X, C, valid, birth_or_zero, offset):
            return NearestCenter(*_native.nearest_center_ffi(X, C, valid, birth_or_zero, offset))

        def xla(X, C, valid, birth_or_zero, offset):
            # Without ``birth`` the XLA path skips the visibility masks.
            return _nearest_center_xla(X, C, valid, None if birth is None else birth_or_zero, offset)

        return _native.platform_dependent(
            X, C, valid, birth_or_zero, jnp.asarray(row_offset, jnp.int32), cpu=native, default=xla
        )
    return _nearest_center_xla(X, C, valid, birth, row_offset, block_size)


def _native_ok(X, C) -> bool:
    """The native kernel applies: float32/float64 data and the kernels are :func:`_native.enabled`."""
    return (
        X.ndim == 2 and C.ndim == 2 and X.dtype == C.dtype
        and X.dtype in (jnp.float32, jnp.float64) and _native.enabled()
    )


def _nearest_center_xla(X, C, valid, birth, row_offset, block_size=None) -> NearestCenter:
    """The pure-XLA nearest-centre step (every platform; the native kernel's reference)."""
    n, _ = X.shape
    k = C.shape[0]
    c_sq = squared_norms(C)
    rows = jnp.arange(n, dtype=jnp.int32) + jnp.asarray(row_offset, jnp.int32)
    block = functools.partial(_nearest_in_block, C=C, c_sq=c_sq, valid=valid, birth=birth)
    if block_size is None:
        block_size = assignment_block_size(n, k)
    return NearestCenter(*map_row_blocks(block, block_size, X, rows))


def assigned_squared_distances(X: jax.Array, C: jax.Array, labels: jax.Array) -> jax.Array:
    """``|x_i - C[labels_i]|^2`` by direct differences, shape (n,).

    Exact (no GEMM cancellation) and ``O(n d)``: the sum-of-squares term of
    the DP-means objective and of the Gaussian likelihood.  The gather, the
    difference and the sum fuse into one pass (no ``(n, d)`` temporary).
    """
    X = check_kernel_array(X, "X", ndim=2, min_rows=1)
    C = check_kernel_array(C, "C", ndim=2)
    check_kernel_points(X=X, C=C)
    labels = check_kernel_array(labels, "labels", ndim=1, kind="i")
    check_kernel_ids(labels, "labels", C.shape[0])
    check_same_length(labels, X, "labels", "X")
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"C has {C.shape[1]} columns, X has {X.shape[1]}")
    return squared_norms(X - C[labels])


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
    *,
    weighted_X: jax.Array | None = None,
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
    weighted_X : array, shape (n, d), optional
        ``sample_weight[:, None] * X`` computed once by a caller that needs the
        statistics of the same data many times (an iterative fit): saves an
        ``O(n d)`` pass and temporary per call.

    Returns
    -------
    SegmentStats
    """
    X = check_kernel_array(X, "X", ndim=2, min_rows=1)
    labels = check_kernel_array(labels, "labels", ndim=1, kind="i")
    if sample_weight is not None:
        sample_weight = check_kernel_array(sample_weight, "sample_weight", ndim=1)
    if sample_weight is None:
        weight = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments)
        total = jax.ops.segment_sum(X, labels, num_segments)
    else:
        weight = jax.ops.segment_sum(sample_weight, labels, num_segments)
        if weighted_X is None:
            weighted_X = X * sample_weight[:, None]
        total = jax.ops.segment_sum(weighted_X, labels, num_segments)
    return SegmentStats(weight, total)


def nearest_center_stats(
    X: jax.Array,
    C: jax.Array,
    valid: jax.Array | None = None,
    sample_weight: jax.Array | None = None,
    *,
    weighted_X: jax.Array | None = None,
) -> tuple[NearestCenter, SegmentStats]:
    """Nearest valid centre of every row and the statistics of that assignment.

    Equals ``nc = nearest_center(X, C, valid)`` followed by
    ``segment_stats(X, nc.index, k, sample_weight)``; on a CPU with the
    native kernels it is one pass over ``X`` (the Lloyd / DP-means iteration
    reads the data once, as scikit-learn's chunked Lloyd does), and the
    per-cluster sums are accumulated in parts of the rows summed in a fixed
    order (the same bits for any number of threads).

    Parameters
    ----------
    X : array, shape (n, d)
    C : array, shape (k, d)
    valid : bool array, shape (k,), optional
        Active slots (default: all); at least one must be valid.
    sample_weight : array, shape (n,), optional
    weighted_X : array, shape (n, d), optional
        ``sample_weight[:, None] * X``, used by the XLA path (see
        :func:`segment_stats`).

    Returns
    -------
    (NearestCenter, SegmentStats)
    """
    X = check_kernel_array(X, "X", ndim=2)
    C = check_kernel_array(C, "C", ndim=2)
    check_kernel_points(X=X, C=C)
    if sample_weight is not None:
        sample_weight = check_kernel_array(sample_weight, "sample_weight", ndim=1)
    k = C.shape[0]
    if valid is None:
        valid = jnp.ones(k, bool)
    w = jnp.ones(X.shape[0], X.dtype) if sample_weight is None else sample_weight

    def xla(X, C, valid, w):
        nc = _nearest_center_xla(X, C, valid, None, 0)
        return nc, segment_stats(X, nc.index, k, w, weighted_X=weighted_X)

    if not _native_ok(X, C):
        return xla(X, C, valid, w)

    def native(X, C, valid, w):
        dist, index, weight, total = _native.nearest_center_stats_ffi(X, C, valid, w)
        return NearestCenter(dist, index), SegmentStats(weight, total)

    return _native.platform_dependent(X, C, valid, w.astype(X.dtype), cpu=native, default=xla)


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
    labels = check_kernel_array(labels, "labels", ndim=1, kind="i")
    keep = check_kernel_array(keep, "keep", ndim=1)
    check_kernel_ids(labels, "labels", keep.shape[0])
    K = keep.shape[0]
    rank = jnp.cumsum(keep.astype(jnp.int32)) - 1
    new_index = jnp.where(keep, rank, K).astype(jnp.int32)
    return new_index[labels], new_index, jnp.sum(keep, dtype=jnp.int32)
