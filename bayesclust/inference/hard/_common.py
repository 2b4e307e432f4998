"""Helpers shared by the hard limits of this family (DP-means and the hard HDP): the rows of
a data set sharded over a one-axis mesh, and objective traces taken back from the unit frame.

Private to ``inference/hard/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

#: Candidates validated together in one block of the serial new-cluster scan.
_CANDIDATE_BLOCK = 256


def _take_rows(rows, axis_name, *arrays):
    """``tuple(a[rows] for a in arrays)`` for global row indices ``rows``.

    On one device a gather.  Inside ``shard_map`` (rows sharded over
    ``axis_name``, device ``p`` holding rows ``p*m .. p*m+m-1``) every device
    contributes the rows it owns and zeros for the others, and a ``psum``
    assembles them: each entry has exactly one nonzero term, so the result is
    bit-identical to the gather, and replicated.
    """
    if axis_name is None:
        return tuple(a[rows] for a in arrays)
    m = arrays[0].shape[0]
    local = rows - lax.axis_index(axis_name) * m
    own = (local >= 0) & (local < m)
    local = jnp.where(own, local, 0)
    parts = tuple(
        jnp.where(own.reshape(own.shape + (1,) * (a.ndim - 1)), a[local], jnp.zeros((), a.dtype))
        for a in arrays
    )
    return lax.psum(parts, axis_name)


def _check_mesh(mesh):
    """The name of the single axis of ``mesh`` (a ``jax.sharding.Mesh``)."""
    if not isinstance(mesh, jax.sharding.Mesh):
        raise TypeError(f"mesh must be a jax.sharding.Mesh or None, got {type(mesh).__name__}")
    if len(mesh.axis_names) != 1:
        raise ValueError(
            f"mesh must have exactly one (data) axis, got axes {tuple(mesh.axis_names)}"
        )
    return mesh.axis_names[0]


def _shard_rows(mesh, axis, *arrays):
    """Pad host arrays with zero rows to a multiple of the mesh size and shard their rows.

    Returns the device arrays (rows over ``axis``) and the padded length.
    """
    from jax.sharding import NamedSharding, PartitionSpec

    n = arrays[0].shape[0]
    size = mesh.devices.size
    n_pad = -(-n // size) * size
    sharding = NamedSharding(mesh, PartitionSpec(axis))
    out = []
    for a in arrays:
        a = np.asarray(a)
        a = a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False)
        if n_pad > n:
            a = np.concatenate([a, np.zeros((n_pad - n, *a.shape[1:]), a.dtype)])
        # Each process uploads only the rows of its own devices (multi-host safe).
        out.append(jax.make_array_from_callback(a.shape, sharding, lambda index, a=a: a[index]))
    return out, n_pad


def _to_host(a):
    """A (possibly multi-process, row-sharded) array as one NumPy array on every process."""
    if isinstance(a, jax.Array) and not a.is_fully_addressable:  # pragma: no cover - multi-host
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(a, tiled=True))
    return np.asarray(a)


def _from_unit(trace, e):
    """An objective trace of the unit frame in the data's frame (float64 if the dtype would overflow)."""
    trace = np.asarray(trace)
    with np.errstate(over="ignore"):
        out = np.ldexp(trace, 2 * e)
    return out if np.all(np.isfinite(out)) else np.ldexp(trace.astype(np.float64), 2 * e)

