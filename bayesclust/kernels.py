"""Shared JAX numerics used by every model and every hard limit.

Written once, used everywhere: the squared distances of the DP mixture's
likelihood are the distances of DP-means' assignment step; the sufficient
statistics of the Gibbs sampler's mean update are the M-step of DP-means.

All functions are pure, jit-compatible and shape-polymorphic in the usual JAX
sense (static shapes, dynamic values).  Matrix products take an explicit
``precision`` so that GPUs never silently use TF32 for distance products.

This module imports only jax, numpy (and scipy for host-side float64 evaluation),
and the package's native XLA:CPU kernels (``bayesclust._native``), which
replace the nearest-centre step on CPUs when they are built.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln

from . import _native

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
    "isotropic_gaussian_logpdf",
    "gaussian_logpdf_full",
    "cholesky_rank_one",
    "log_responsibilities",
    "categorical_inverse_cdf",
    "complete_data_log_likelihood",
    "stick_breaking",
    "crp_log_prior",
    "voronoi_memberships",
    "class_counts",
    "polya_log_evidence",
    "did_logpdf",
    "did_cdf",
    "did_chi_mean_abs_difference",
    "DID2_FISHER",
    "description_length",
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

    Notes
    -----
    An elementwise product and a sum, not a dot: it fuses with its producer
    (no ``(n, d)`` temporary) and never runs on reduced-precision matrix units.
    """
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

        return _platform_dependent(
            X, C, valid, birth_or_zero, jnp.asarray(row_offset, jnp.int32), cpu=native, default=xla
        )
    return _nearest_center_xla(X, C, valid, birth, row_offset, block_size)


def _platform_dependent(*args, cpu, default):
    """``lax.platform_dependent(*args, cpu=cpu, default=default)``, traced lazily.

    ``lax.platform_dependent`` traces every branch, and the XLA path of the
    nearest-centre step (its unrolled compare/select chains) was about half
    of the tracing time of a DP-means loop, for a branch that XLA discards
    when it lowers for the CPU.  When JAX's default backend is the CPU (no
    accelerator, or ``JAX_PLATFORMS=cpu``), only the CPU branch is traced;
    otherwise both, and the platform chooses.
    """
    if jax.default_backend() == "cpu":
        return cpu(*args)
    return lax.platform_dependent(*args, cpu=cpu, default=default)


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

    return _platform_dependent(X, C, valid, w.astype(X.dtype), cpu=native, default=xla)


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


# --------------------------------------------------------------------------- #
# Mixture-model terms shared by the NumPyro programs and the samplers
# --------------------------------------------------------------------------- #


def isotropic_gaussian_logpdf(X: jax.Array, means: jax.Array, sigma2) -> jax.Array:
    """``log N(x_i | mu_k, sigma2 I)`` for every point and component.

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (k, d)
    sigma2 : float or array broadcastable to (n, k)
        Component **variance**.

    Returns
    -------
    array, shape (n, k)
        ``-d/2 log(2 pi sigma2) - |x - mu|^2 / (2 sigma2)``, with the squared
        distances of :func:`squared_distances` (the same numbers DP-means uses).
    """
    d = X.shape[-1]
    return -0.5 * d * jnp.log(2.0 * jnp.pi * sigma2) - squared_distances(X, means) / (2.0 * sigma2)


def gaussian_logpdf_full(X: jax.Array, means: jax.Array, chols: jax.Array) -> jax.Array:
    r"""``log N(x_i | mu_k, Sigma_k)`` for every point and full-covariance component.

    .. math::

        \log N(x \mid \mu, \Sigma) = -\tfrac{d}{2} \log(2\pi) - \sum_j \log L_{jj}
            - \tfrac12 \| L^{-1} (x - \mu) \|^2, \qquad \Sigma = L L^\top

    The differences ``x - mu`` are formed first and then whitened by ``L^{-1}``
    (never ``|x|^2 - 2 x.mu + |mu|^2``), so a tight component far from the
    origin loses no digits.  ``L^{-1}`` comes from a ``d x d`` triangular solve
    and is applied as one matrix product: on XLA:CPU a triangular solve against
    the ``n`` differences is many times slower (BENCHMARKS.md).

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (k, d)
    chols : array, shape (k, d, d)
        Lower-triangular Cholesky factors ``L_k`` of the covariances (positive
        diagonal; the upper triangle is ignored).

    Returns
    -------
    array, shape (n, k)

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import numpy as np
    >>> X = jnp.array([[0.0, 0.0], [1.0, 2.0]])
    >>> L = jnp.array([[[2.0, 0.0], [0.0, 1.0]]])  # Sigma = diag(4, 1)
    >>> np.asarray(gaussian_logpdf_full(X, jnp.zeros((1, 2)), L), float).round(3).tolist()
    [[-2.531], [-4.656]]
    """
    d = X.shape[-1]

    eye = jnp.eye(d, dtype=X.dtype)

    def one(mean, chol):
        inv = jax.scipy.linalg.solve_triangular(jnp.tril(chol), eye, lower=True)
        z = jnp.matmul(X - mean, inv.T, precision=PRECISION)  # (n, d)
        half_logdet = jnp.sum(jnp.log(jnp.diagonal(chol)))
        return -0.5 * (d * jnp.log(2.0 * jnp.pi) + jnp.sum(z * z, axis=1)) - half_logdet

    return jax.vmap(one, out_axes=1)(means, chols)


def categorical_inverse_cdf(log_w: jax.Array, u: jax.Array) -> jax.Array:
    """Indices drawn with probabilities ``softmax(log_w)`` along the last axis.

    Parameters
    ----------
    log_w : array, shape (..., T)
        Unnormalised log-probabilities (``-inf``: never drawn).
    u : array, shape (...)
        Uniforms on ``(0, 1]``, one per draw.

    Returns
    -------
    array of int32, shape (...)
        The smallest ``k`` with ``cdf_k >= u cdf_T``.

    Notes
    -----
    Inverse-CDF sampling needs one uniform per draw (Gumbel-max needs one per
    category, and on a CPU the random bits cost more than the rest), and
    ``u > 0`` means a zero-probability entry is never chosen.  For a batch of
    rows the cumulative sums are one product with a triangular matrix of ones
    (XLA:CPU's cumsum is a reduce-window, several times slower at that shape);
    the result is clamped to ``T - 1`` against the rounding of that product.
    """
    T = log_w.shape[-1]
    p = jnp.exp(log_w - jnp.max(log_w, axis=-1, keepdims=True))
    if log_w.ndim == 1:
        cdf = jnp.cumsum(p)
    else:
        tri = (jnp.arange(T)[:, None] <= jnp.arange(T)[None, :]).astype(p.dtype)
        cdf = jnp.matmul(p, tri, precision=PRECISION)
    below = jnp.sum(cdf < jnp.asarray(u)[..., None] * cdf[..., -1:], axis=-1)
    return jnp.minimum(below, T - 1).astype(jnp.int32)


def log_responsibilities(log_weights: jax.Array, log_lik: jax.Array) -> jax.Array:
    """Normalised ``log p(z_i = k | x_i)`` from mixture log-weights and log-likelihoods.

    Parameters
    ----------
    log_weights : array, shape (k,)
    log_lik : array, shape (n, k)

    Returns
    -------
    array, shape (n, k)
        ``log w_k + log p(x_i | k) - logsumexp_k(...)`` (rows sum to one in
        probability; ``-inf`` weights stay ``-inf``).
    """
    joint = log_lik + log_weights[None, :]
    return joint - jax.scipy.special.logsumexp(joint, axis=1, keepdims=True)


def complete_data_log_likelihood(
    X: jax.Array, means: jax.Array, labels: jax.Array, sigma2
) -> jax.Array:
    """Log-likelihood of the data given the assignments and the means, a scalar.

    .. math::

        \\log p(X \\mid z, \\mu, \\sigma^2) = \\sum_i \\log N(x_i \\mid \\mu_{z_i}, \\sigma^2 I)
            = -\\tfrac{n d}{2} \\log(2 \\pi \\sigma^2)
              - \\frac{1}{2 \\sigma^2} \\sum_i |x_i - \\mu_{z_i}|^2

    The quantity is defined for any sampler that yields labels and component means
    (the Gibbs samplers' ``means`` draws, or NUTS draws of a stick-breaking program with
    labels drawn from their conditional), so it compares samplers on the same footing;
    the squared distances are :func:`assigned_squared_distances` (exact, ``O(n d)``).

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (K, d)
        Component means, indexed by ``labels``.
    labels : int array, shape (n,)
        Values in ``[0, K)``.
    sigma2 : float or scalar array
        Component **variance**.

    Returns
    -------
    scalar array

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> X = jnp.array([[0.0], [2.0]])
    >>> ll = complete_data_log_likelihood(X, jnp.array([[0.0], [1.0]]), jnp.array([0, 1]), 1.0)
    >>> round(float(ll), 4)  # -log(2 pi) - 1/2
    -2.3379
    """
    n, d = X.shape
    sq = jnp.sum(assigned_squared_distances(X, means, labels))
    return -0.5 * n * d * jnp.log(2.0 * jnp.pi * sigma2) - sq / (2.0 * sigma2)


def stick_breaking(v: jax.Array) -> jax.Array:
    """Mixture weights from stick-breaking fractions (truncated: the last stick is the rest).

    ``w_k = v_k prod_{j<k} (1 - v_j)`` for ``k < T`` and ``w_T = prod_{j<T} (1 - v_j)``.

    Parameters
    ----------
    v : array, shape (..., T - 1)
        Fractions in (0, 1), e.g. ``Beta(1, alpha)`` draws.

    Returns
    -------
    array, shape (..., T)
        Non-negative weights summing to one.
    """
    log_rest = jnp.cumsum(jnp.log1p(-v), axis=-1)
    rest_before = jnp.exp(jnp.concatenate([jnp.zeros_like(v[..., :1]), log_rest], axis=-1))
    return rest_before * jnp.concatenate([v, jnp.ones_like(v[..., :1])], axis=-1)


def crp_log_prior(counts: jax.Array, alpha) -> jax.Array:
    """Log-probability of a partition under the Chinese restaurant process.

    ``log p = k log(alpha) + sum_c log Gamma(n_c) + log Gamma(alpha) - log Gamma(alpha + n)``
    over the non-empty clusters (``counts > 0``), the exchangeable partition
    probability function of the Dirichlet process.

    Parameters
    ----------
    counts : array, shape (K,)
        Cluster sizes (zeros are empty slots).
    alpha : float
        Concentration (> 0).
    """
    occupied = counts > 0
    n = jnp.sum(counts)
    return (
        jnp.sum(occupied) * jnp.log(alpha)
        + jnp.sum(jnp.where(occupied, gammaln(jnp.where(occupied, counts, 1.0)), 0.0))
        + gammaln(alpha)
        - gammaln(alpha + n)
    )


# --------------------------------------------------------------------------- #
# Discriminative clustering: Voronoi memberships and the Dirichlet-marginalised
# class term (Kaski, Sinkkonen & Klami 2005), shared by the model, its
# optimisers and the evaluation metric.
# --------------------------------------------------------------------------- #


def voronoi_memberships(X: jax.Array, prototypes: jax.Array, smooth_std=None):
    r"""Memberships of points in the Voronoi regions of the prototypes.

    Hard (``smooth_std=None``): the one-hot indicator of the nearest prototype
    (lowest index on ties), :math:`y_j(x) = [j = \arg\min_k \|x - m_k\|^2]`.
    Smoothed: the normalised Gaussian of Kaski et al. (2005, eq. 4),
    :math:`y_j(x) = \mathrm{softmax}_j(-\|x - m_j\|^2 / (2 \sigma^2))` with
    :math:`\sigma` = ``smooth_std`` (a standard deviation); it tends to the hard
    memberships as ``smooth_std -> 0`` (off the region boundaries).

    Parameters
    ----------
    X : array, shape (n, d)
    prototypes : array, shape (K, d)
    smooth_std : float or None

    Returns
    -------
    Y : array, shape (n, K)
        Rows sum to 1.
    sq_dist : array, shape (n, K)
        :func:`squared_distances` (GEMM form).
    """
    sq = squared_distances(X, prototypes)
    if smooth_std is None:
        return jax.nn.one_hot(jnp.argmin(sq, axis=1), prototypes.shape[0], dtype=X.dtype), sq
    return jax.nn.softmax(-sq / (2.0 * jnp.square(smooth_std)), axis=1), sq


def class_counts(memberships: jax.Array, classes: jax.Array, n_classes: int) -> jax.Array:
    """(Soft) contingency table ``n[j, i] = sum_{x: c(x) = i} y_j(x)``, shape (K, C).

    Parameters
    ----------
    memberships : array, shape (n, K)
        Rows of :func:`voronoi_memberships` (or any soft/hard assignment).
    classes : int array, shape (n,)
        Class ``0..n_classes-1`` of every point.
    n_classes : int
        Static number of classes ``C``.
    """
    return jax.ops.segment_sum(memberships, classes, n_classes).T


def polya_log_evidence(counts: jax.Array, n0=1.0, lam_eq=0.0, include_norm: bool = False) -> jax.Array:
    r"""Dirichlet-marginalised (Polya) log evidence of a contingency table, a scalar.

    .. math::

        \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j \log\Gamma(N^0 + N_j)
        \;\bigl[+\, K(\log\Gamma(N^0) - \textstyle\sum_i \log\Gamma(n^0_i))\bigr]

    with :math:`N_j = \sum_i n_{ji}`, :math:`N^0 = \sum_i n^0_i`: the log posterior of
    the prototypes of discriminative clustering (Kaski et al. 2005, eq. 9; with soft
    counts eq. 10; with :math:`\lambda_{EQ} > 0` the equal-size variant, eq. 12).
    ``include_norm`` adds the per-cluster normaliser dropped by the paper, which
    makes values comparable across ``K`` (the exact Polya log marginal at
    :math:`\lambda_{EQ} = 0`).

    Parameters
    ----------
    counts : array, shape (K, C)
        Class counts per cluster (hard or soft, non-negative).
    n0 : float or array, shape (C,)
        Dirichlet prior counts :math:`n^0_i` (> 0).
    lam_eq : float
        :math:`\lambda_{EQ} \ge 0`.
    include_norm : bool

    Returns
    -------
    scalar array

    Examples
    --------
    >>> import numpy as np
    >>> # two class-0 points in one cluster, uniform prior over 2 classes: 1/2 * 2/3
    >>> round(float(polya_log_evidence(np.array([[2.0, 0.0]]), include_norm=True)), 5)
    -1.09861
    >>> round(float(np.log(1 / 3)), 5)
    -1.09861
    """
    if isinstance(counts, np.ndarray):  # evaluation on the host: float64 with scipy
        from scipy.special import gammaln as lgamma

        xp = np
    else:  # traced / differentiable
        xp, lgamma = jnp, gammaln
    counts = xp.asarray(counts)
    n0 = xp.broadcast_to(xp.asarray(n0, counts.dtype), counts.shape[-1:])
    N0 = xp.sum(n0)
    value = xp.sum(lgamma(n0 + counts)) - (1.0 + lam_eq) * xp.sum(lgamma(N0 + counts.sum(-1)))
    if include_norm:
        value = value + counts.shape[0] * (lgamma(N0) - xp.sum(lgamma(n0)))
    return value


# --------------------------------------------------------------------------- #
# Dissimilarity increments distribution (Aidos & Fred 2012)
# --------------------------------------------------------------------------- #

#: ``beta = 2 - sqrt(2)`` of the 2-DID (Aidos & Fred 2012, eq. 10).
_DID_BETA = 2.0 - np.sqrt(2.0)
#: Switch from ``erfcx`` to the asymptotic series of :func:`_did2_bracket` (u >= 10).
_DID_SERIES_FROM = 10.0
_DID_SERIES_TERMS = 14
#: Gauss--Legendre nodes of the d-DID quadrature and the log drop that bounds its interval.
_DID_NODES = 128
_DID_LOG_DROP = 60.0


def _check_did_args(lam, d) -> int:
    """Validate ``d`` (an int >= 1) and a concrete ``lam`` (> 0, finite); tracers pass."""
    d = int(_check_int_arg(d))
    if not isinstance(lam, jax.core.Tracer):
        arr = np.asarray(lam, dtype=np.float64)
        if arr.size and not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError(f"lam must be positive and finite, got {lam!r}")
    return d


def _check_int_arg(d):
    import numbers

    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)):
        raise TypeError(f"d must be an integer, got {d!r}")
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    return d


@functools.cache
def did_chi_mean_abs_difference(d: int) -> float:
    r"""``m_d = E|chi_d - chi_d'|`` for independent unit chi variables with ``d`` degrees of freedom.

    .. math:: m_d = 2 \int_0^\infty F_d(t)\,(1 - F_d(t))\,dt

    (host, float64, ``scipy.integrate.quad``); ``m_2 = sqrt(pi/2) (2 - sqrt 2)``.

    Parameters
    ----------
    d : int
        ``>= 1``.

    Returns
    -------
    float
    """
    from scipy import integrate, stats

    d = int(_check_int_arg(d))
    if d == 2:
        return float(np.sqrt(np.pi / 2.0) * _DID_BETA)
    law = stats.chi(d)
    hi = np.sqrt(d) + 40.0
    value, _ = integrate.quad(lambda t: law.cdf(t) * law.sf(t), 0.0, hi, limit=200,
                              epsabs=0.0, epsrel=1e-13)
    return 2.0 * value


def _asymptotic_sum(v, coeffs, xp=jnp):
    """``sum_m coeffs[m] v^(-2m)`` by Horner in ``1 / v^2``."""
    z = 1.0 / (v * v)
    acc = xp.zeros_like(v) + coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * z + c
    return acc


# sqrt(pi) erfcx(u) ~ sum_n c_n u^(-2n-1), c_n = (-1)^n (2n-1)!! / 2^n
_ERFCX_C = [1.0]
for _n in range(1, _DID_SERIES_TERMS + 2):
    _ERFCX_C.append(-_ERFCX_C[-1] * (2 * _n - 1) / 2.0)
# g(u) = u + sqrt(pi) erfcx(u) (1/2 - u^2) ~ sum_m e_m u^(-2m-1), e_m = c_m / 2 - c_(m+1)
_G_COEFFS = tuple(_ERFCX_C[m] / 2.0 - _ERFCX_C[m + 1] for m in range(_DID_SERIES_TERMS))
# h(v) = 1 - v sqrt(pi) erfcx(v) ~ -sum_(n>=1) c_n v^(-2n)  (written as a series in 1/v^2 from n=1)
_H_COEFFS = tuple(-_ERFCX_C[n + 1] for n in range(_DID_SERIES_TERMS))


def _namespace(*arrays):
    """``(xp, erfcx)``: NumPy and SciPy (host, float64) for NumPy inputs, else JAX."""
    if all(isinstance(a, (np.ndarray, np.generic, float, int)) for a in arrays):
        from scipy.special import erfcx

        return np, erfcx
    from jax.scipy.special import erfcx

    return jnp, erfcx


def _did2_bracket(u, xp=jnp, erfcx=None):
    """``g(u) = u + sqrt(pi) erfcx(u) (1/2 - u^2)`` for ``u >= 0``, without cancellation."""
    if erfcx is None:
        from jax.scipy.special import erfcx
    big = u >= _DID_SERIES_FROM
    u_small = xp.where(big, 0.0, u)
    u_big = xp.where(big, u, _DID_SERIES_FROM)
    direct = u_small + np.sqrt(np.pi) * erfcx(u_small) * (0.5 - u_small * u_small)
    series = _asymptotic_sum(u_big, _G_COEFFS, xp) / u_big
    return xp.where(big, series, direct)


def _did2_logpdf(w, lam, xp=jnp, erfcx=None):
    """2-DID log density for ``w >= 0`` in the array namespace ``xp`` (no argument checks)."""
    a = np.pi * _DID_BETA**2 / (4.0 * lam * lam)
    u = w * xp.sqrt(a / 2.0)
    return -a * w * w + 0.5 * xp.log(2.0 * a) + xp.log(_did2_bracket(u, xp, erfcx))


def _did2_logsf(w, lam, xp=jnp, erfcx=None):
    """``log P(W > w)`` of the 2-DID: ``-u^2/2 + log(1 - (u sqrt(pi)/2) erfcx(u/2))``, ``u = w/s``."""
    if erfcx is None:
        from jax.scipy.special import erfcx
    u = w * did_chi_mean_abs_difference(2) / lam
    v = 0.5 * u
    big = v >= _DID_SERIES_FROM
    v_small = xp.where(big, 0.0, v)
    v_big = xp.where(big, v, _DID_SERIES_FROM)
    direct = 1.0 - v_small * np.sqrt(np.pi) * erfcx(v_small)
    series = _asymptotic_sum(v_big, _H_COEFFS, xp) / (v_big * v_big)
    return -0.5 * u * u + xp.log(xp.where(big, series, direct))


@functools.cache
def _legendre(n: int):
    x, wt = np.polynomial.legendre.leggauss(n)
    return x, np.log(wt)


def _chi_log_norm(d: int) -> float:
    from scipy.special import gammaln as lgamma

    return float(-(d / 2.0 - 1.0) * np.log(2.0) - lgamma(d / 2.0))


def _conv_log_integrand(t, u, d: int):
    """``(d-1) log(t (t+u)) - t^2 - t u``: ``log chi_d(t) chi_d(t+u)`` up to ``2 log c_d - u^2/2``."""
    quad = -t * t - t * u
    if d == 1:
        return quad
    return (d - 1) * jnp.log(t * (t + u)) + quad


def _quad_interval(u, d: int):
    """``[lo, hi]`` holding the mass of the (log-concave) convolution integrand at ``u``.

    Centred at its mode ``t* = (sqrt(u^2 + 4(d-1)) - u) / 2``; each end is the first of
    ``t* -+ 2^j base`` (``j = 0..24``) where the log integrand has dropped by 60.
    """
    t_star = 0.5 * (jnp.sqrt(u * u + 4.0 * (d - 1)) - u)
    base = 1.0 / (2.0 * t_star + u + 1.0)
    peak = _conv_log_integrand(jnp.maximum(t_star, 1e-300), u, d) if d > 1 else -t_star * 0.0
    steps = 2.0 ** jnp.arange(25.0, dtype=u.dtype)
    right = t_star[..., None] + base[..., None] * steps
    ok_r = _conv_log_integrand(right, u[..., None], d) < peak[..., None] - _DID_LOG_DROP
    hi = jnp.take_along_axis(right, jnp.argmax(ok_r, axis=-1)[..., None], axis=-1)[..., 0]
    hi = jnp.where(ok_r.any(axis=-1), hi, right[..., -1])
    left = t_star[..., None] - base[..., None] * steps
    ok_l = (left <= 0) | (
        _conv_log_integrand(jnp.maximum(left, 1e-300), u[..., None], d)
        < peak[..., None] - _DID_LOG_DROP)
    lo = jnp.take_along_axis(left, jnp.argmax(ok_l, axis=-1)[..., None], axis=-1)[..., 0]
    return jnp.maximum(lo, 0.0), hi


def _nodes(lo, hi):
    x, log_wt = _legendre(_DID_NODES)
    half = 0.5 * (hi - lo)
    t = lo[..., None] + half[..., None] * (jnp.asarray(x, lo.dtype) + 1.0)
    return t, jnp.asarray(log_wt, lo.dtype) + jnp.log(half)[..., None]


def _did_quad_logpdf_unit(u, d: int):
    """``log f_d(u)``, ``f_d(u) = 2 int_0^inf chi_d(t) chi_d(t+u) dt`` (unit scale, ``u >= 0``)."""
    lo, hi = lax.stop_gradient(_quad_interval(lax.stop_gradient(u), d))
    t, log_wt = _nodes(lo, hi)
    terms = log_wt + _conv_log_integrand(t, u[..., None], d)
    return (np.log(2.0) + 2.0 * _chi_log_norm(d) - 0.5 * u * u
            + jax.nn.logsumexp(terms, axis=-1))


def _did_quad_sf_unit(u, d: int):
    """``P(|D1 - D2| > u) = 2 int_0^inf chi_d(t) Q(d/2, (t+u)^2/2) dt`` (unit scale)."""
    from jax.scipy.special import gammaincc

    lo, hi = _quad_interval(u, d)
    t, log_wt = _nodes(jnp.zeros_like(lo), 1.5 * hi)
    log_chi = _chi_log_norm(d) - 0.5 * t * t
    if d > 1:
        log_chi = log_chi + (d - 1) * jnp.log(t)
    q = gammaincc(d / 2.0, 0.5 * (t + u[..., None]) ** 2)
    return 2.0 * jnp.sum(jnp.exp(log_wt + log_chi) * q, axis=-1)


def _float_result_type(*arrays):
    """The arrays' promoted dtype if floating, else JAX's default float (float64 under x64)."""
    dtype = jnp.result_type(*arrays)
    return dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.zeros(()).dtype


def _did_scale(lam, d: int):
    return lam / did_chi_mean_abs_difference(d)


@functools.partial(jax.jit, static_argnums=(2, 3))
def _did_logpdf_impl(w, lam, d: int, closed_form: bool):
    w, lam = jnp.broadcast_arrays(jnp.asarray(w), jnp.asarray(lam))
    dtype = _float_result_type(w, lam)
    w, lam = w.astype(dtype), lam.astype(dtype)
    neg = w < 0
    w_safe = jnp.where(neg, 0.0, w)
    if d == 2 and closed_form:
        value = _did2_logpdf(w_safe, lam)
    else:
        s = _did_scale(lam, d)
        value = _did_quad_logpdf_unit(w_safe / s, d) - jnp.log(s)
    return jnp.where(neg, -jnp.inf, value)


def did_logpdf(w, lam, d: int = 2):
    r"""Log density of the dissimilarity increments distribution (DID), mean ``lam``.

    For ``d = 2`` the closed form of Aidos & Fred (2012, eq. 10), with
    :math:`\beta = 2 - \sqrt 2`, :math:`a = \pi\beta^2 / (4\lambda^2)`:

    .. math::

        p(w;\lambda) = a w\,e^{-a w^2} + K_3\,e^{-a w^2/2}\Big(\frac1a - w^2\Big)
            \mathrm{erfc}\Big(w\sqrt{a/2}\Big),\quad
        K_3 = \frac{\pi^2\beta^3}{8\sqrt2\,\lambda^3},

    evaluated as :math:`\log p = -a w^2 + \tfrac12\log(2a) + \log g(u)`,
    :math:`u = w\sqrt{a/2}`, :math:`g(u) = u + \sqrt\pi\,\mathrm{erfcx}(u)(\tfrac12 - u^2)`
    (``erfcx`` the scaled complementary error function; for ``u >= 10`` the asymptotic
    series :math:`g(u) = \sum_m (-1)^m (2m-1)!!\,(m+1)\,2^{-m} u^{-2m-1}`, which avoids the
    cancellation of the two leading terms; docs/deviations.md#did2-stable-evaluation).
    Finite out to any ``w`` representable.

    For any ``d``, the law of :math:`|D_1 - D_2|` for independent :math:`D_i = s\chi_d`,
    :math:`s = \lambda / m_d`, :math:`m_d = E|\chi_d - \chi_d'|`: the d-DID of Aidos & Fred
    (2012, eq. 7-8) (same shape, mean :math:`\lambda`), evaluated as
    :math:`p(w) = f_d(w/s)/s`, :math:`f_d(u) = 2\int_0^\infty \chi_d(t)\chi_d(t+u)\,dt` by
    128-node Gauss--Legendre quadrature in log space over an interval bracketing the mass
    of the (log-concave) integrand -- not the alternating double sum of eq. (7), which
    cancels catastrophically for ``d >= 6`` (docs/deviations.md#did-d-quadrature).

    Parameters
    ----------
    w : array_like, shape (...)
        Increments; ``w < 0`` gives ``-inf``.
    lam : array_like, broadcastable with ``w``
        Mean increment :math:`\lambda > 0`.
    d : int, default 2
        Dimension (static), ``>= 1``.

    Returns
    -------
    jax.Array, the broadcast shape of ``w`` and ``lam``
        A NumPy float64 array when ``d = 2`` and ``w`` and ``lam`` are NumPy arrays or
        Python numbers: the same formula evaluated on the host with SciPy's ``erfcx``, the
        form the clustering algorithms call once per test.

    Raises
    ------
    ValueError
        If ``d < 1`` or a concrete ``lam`` is not positive and finite.

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for
    d-dimensional data: application in partitional clustering", Pattern Recognition 45
    (2012), §2, eqs. (7)-(10).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(np.exp(did_logpdf(0.0, 1.0))), 6)  # sqrt(pi a / 2), a = pi beta^2 / 4
    0.650645
    """
    d = _check_did_args(lam, d)
    if d == 2 and _namespace(w, lam)[0] is np:
        return _did2_host(w, lam, _did2_logpdf, -np.inf)
    return _did_logpdf_impl(w, lam, d, closed_form=True)


def _did2_host(w, lam, fn, at_negative):
    """Evaluate a 2-DID function on the host in float64 (NumPy / SciPy), ``w < 0`` mapped."""
    xp, erfcx = _namespace(w, lam)
    w, lam = np.broadcast_arrays(np.asarray(w, np.float64), np.asarray(lam, np.float64))
    neg = w < 0
    value = fn(np.where(neg, 0.0, w), lam, xp, erfcx)
    return np.where(neg, at_negative, value)


def did_cdf(w, lam, d: int = 2):
    r"""Distribution function :math:`P(W \le w)` of the DID with mean ``lam`` (see :func:`did_logpdf`).

    ``d = 2``: the closed form :math:`1 - e^{-u^2/2}\big(1 - \tfrac{\sqrt\pi}{2} u\,
    \mathrm{erfcx}(u/2)\big)`, :math:`u = w/s` (the survival function of the difference of two
    Rayleigh variables; series for ``u >= 20``).  Other ``d``:
    :math:`1 - 2\int_0^\infty \chi_d(t)\,Q(d/2, (t+u)^2/2)\,dt` by Gauss--Legendre quadrature
    (``Q`` the regularised upper incomplete gamma function).

    Parameters
    ----------
    w : array_like, shape (...)
        ``w < 0`` gives 0.
    lam : array_like, broadcastable with ``w``
        Mean increment, ``> 0``.
    d : int, default 2

    Returns
    -------
    jax.Array, the broadcast shape of ``w`` and ``lam``
        A NumPy float64 array for ``d = 2`` with NumPy inputs (as :func:`did_logpdf`).

    References
    ----------
    A. Aidos and A. Fred, Pattern Recognition 45 (2012), §2.
    """
    d = _check_did_args(lam, d)
    if d == 2 and _namespace(w, lam)[0] is np:
        return 0.0 - np.expm1(_did2_host(w, lam, _did2_logsf, 0.0))
    return _did_cdf_impl(w, lam, d)


@functools.partial(jax.jit, static_argnums=(2,))
def _did_cdf_impl(w, lam, d: int):
    w, lam = jnp.broadcast_arrays(jnp.asarray(w), jnp.asarray(lam))
    dtype = _float_result_type(w, lam)
    w, lam = w.astype(dtype), lam.astype(dtype)
    neg = w < 0
    w_safe = jnp.where(neg, 0.0, w)
    if d == 2:
        sf = jnp.exp(_did2_logsf(w_safe, lam))
    else:
        sf = _did_quad_sf_unit(w_safe / _did_scale(lam, d), d)
    return jnp.where(neg, 0.0, jnp.clip(1.0 - sf, 0.0, 1.0))


#: Fisher information of the 2-DID's mean per increment, times ``lam**2``:
#: :math:`c = \lambda^2\,E[(\partial_\lambda \log p(W;\lambda))^2]` (a scale family, so
#: ``c`` does not depend on ``lam``).
DID2_FISHER = 1.8869535


def description_length(w, lam=None, *, lam_floor=None):
    r"""MDL description length of increments under the 2-DID with a ``1/lam`` prior.

    Wallace & Freeman's (1987) two-part code with Grünwald's (2007) constant for one
    parameter, as Aidos & Fred use it to decide merges (SL-DID, eq. 7):

    .. math::

        DL(W) = \tfrac12(1 - \log 12) + \log\lambda + \tfrac12\log I(\lambda)
                - \sum_{w\in W}\log p(w;\lambda),\qquad I(\lambda) = \frac{m\,c}{\lambda^2},

    so that with the prior :math:`p(\lambda) = 1/\lambda` the :math:`\log\lambda` terms cancel,
    :math:`DL = \tfrac12(1 - \log 12) + \tfrac12\log(m c) - \sum\log p(w;\lambda)`,
    :math:`c =` :data:`DID2_FISHER` ``= 1.8869535``, ``m`` the number of increments.

    Parameters
    ----------
    w : array_like, shape (m,)
        Increments (``>= 0``).  NumPy input is evaluated on the host in float64.
    lam : float, optional
        The 2-DID's mean; default the sample mean of ``w`` (the papers' estimate, not the
        maximum-likelihood one).
    lam_floor : float, optional
        Lower bound applied to ``lam``: a cluster of duplicate points has increments (and a
        mean) of 0, where the density is degenerate; the clustering algorithms pass the
        smallest positive increment of the data (docs/deviations.md#did-zero-increments).

    Returns
    -------
    float or scalar jax.Array
        In nats; ``0.0`` for ``m = 0`` (nothing to encode).

    Raises
    ------
    ValueError
        If ``lam`` (after the floor) is not positive and finite.

    References
    ----------
    A. Aidos and A. Fred, "Hierarchical clustering with high order dissimilarities",
    MLDM 2011, eq. (7); C. S. Wallace and P. R. Freeman, "Estimation and inference by compact
    coding", J. R. Statist. Soc. B 49 (1987); P. Grünwald, The Minimum Description Length
    Principle (2007).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([0.5, 1.0, 1.5])
    >>> dl = description_length(w)
    >>> bool(np.isclose(dl, 0.5 * (1 - np.log(12)) + 0.5 * np.log(3 * DID2_FISHER)
    ...                 - did_logpdf(w, 1.0).sum()))
    True
    """
    xp, erfcx = _namespace(w)
    w = xp.asarray(w, dtype=np.float64) if xp is np else jnp.asarray(w)
    m = w.shape[0] if w.ndim else 1
    if m == 0:
        return 0.0
    if lam is None:
        lam = xp.mean(w)
    if lam_floor is not None:
        lam = xp.maximum(lam, lam_floor)
    _check_did_args(lam, 2)
    if xp is np:
        loglik = float(np.sum(_did2_logpdf(np.asarray(w, np.float64), float(lam), np, erfcx)))
    else:
        loglik = jnp.sum(did_logpdf(w, lam, 2))
    return 0.5 * (1.0 - np.log(12.0)) + 0.5 * np.log(m * DID2_FISHER) - loglik


def cholesky_rank_one(L: jax.Array, v: jax.Array, sign: float = 1.0) -> jax.Array:
    r"""Rank-one update (``sign = +1``) or downdate (``-1``) of a Cholesky factor.

    Given lower-triangular ``L`` with :math:`A = L L^\top`, returns the lower-triangular
    factor of :math:`A + \mathrm{sign}\, v v^\top` in :math:`O(d^2)` operations, by the
    column sweep of Golub & Van Loan (2013, §6.5.4) (Givens rotations for an update,
    hyperbolic rotations for a downdate).  The loop over the ``d`` columns is unrolled
    (``d`` is static) and every column is a masked vector operation, so the function
    batches under ``vmap`` without gathers.  A downdate whose result is not positive
    definite gives NaN (the caller must know that it is).

    Parameters
    ----------
    L : array, shape (d, d)
        Lower-triangular with a positive diagonal.
    v : array, shape (d,)
    sign : float
        ``+1`` or ``-1`` (may be traced).

    Returns
    -------
    array, shape (d, d)

    References
    ----------
    G. H. Golub and C. F. Van Loan (2013), Matrix Computations, 4th ed., §6.5.4.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[4.0, 2.0], [2.0, 3.0]]); v = np.array([1.0, 0.5])
    >>> L1 = cholesky_rank_one(np.linalg.cholesky(A), v, 1.0)
    >>> bool(np.allclose(L1, np.linalg.cholesky(A + np.outer(v, v)), atol=1e-6))
    True
    """
    L = jnp.asarray(L)
    v = jnp.asarray(v, L.dtype)
    d = L.shape[-1]
    rows = jnp.arange(d)
    for k in range(d):
        lkk = L[k, k]
        vk = v[k]
        r = jnp.sqrt(lkk * lkk + sign * vk * vk)
        c = r / lkk
        s = vk / lkk
        below = rows > k
        col = jnp.where(below, (L[:, k] + sign * s * v) / c, L[:, k])
        col = jnp.where(rows == k, r, col)
        v = jnp.where(below, c * v - s * col, v)
        L = L.at[:, k].set(col)
    return L
