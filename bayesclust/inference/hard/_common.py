"""Helpers shared by the hard limits of this family (DP-means and the hard HDP): rows
gathered across a mesh, and objective traces taken back from the unit frame (the sharding
layer itself is ``inference/_sharding.py``).

Private to ``inference/hard/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

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


def _from_unit(trace, e):
    """An objective trace of the unit frame in the data's frame (float64 if the dtype would overflow)."""
    trace = np.asarray(trace)
    with np.errstate(over="ignore"):
        out = np.ldexp(trace, 2 * e)
    return out if np.all(np.isfinite(out)) else np.ldexp(trace.astype(np.float64), 2 * e)

