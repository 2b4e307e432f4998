"""The sharding layer: one-axis meshes, arrays split over them, results brought back.

Every sharded driver of :mod:`bayesclust.inference` goes through these helpers, once:

* :func:`check_mesh` -- a ``jax.sharding.Mesh`` with one axis (its name is returned);
* :func:`shard_rows` -- the rows of a data set, padded with zero rows to a multiple of the
  mesh size (DP-means, the hard HDP);
* :func:`shard_leading` / :func:`replicate` -- the leading axis of every leaf of a pytree
  split over the mesh (the chains of a sampler, the partitions of an ensemble), or every
  leaf copied to every device;
* :func:`shard_chains` -- a jitted segment of a sampler, ``fn(keys, data, state, *params)``,
  run by every device on its own chains (``shard_map`` over the chain axis);
* :func:`check_divides` -- a count (chains, partitions) that the mesh must divide;
* :func:`to_host` -- a (possibly multi-process) sharded array as one NumPy array on every
  process.

Every helper uploads from host values through ``jax.make_array_from_callback``, so each
process of a multi-process run (``jax.distributed``) uploads only its own devices' part.
Private to ``inference/`` (the underscore): the families import it, users do not.
"""

from __future__ import annotations

import functools

import jax
import numpy as np


def check_mesh(mesh):
    """The name of the single axis of ``mesh`` (a ``jax.sharding.Mesh``)."""
    if not isinstance(mesh, jax.sharding.Mesh):
        raise TypeError(f"mesh must be a jax.sharding.Mesh or None, got {type(mesh).__name__}")
    if len(mesh.axis_names) != 1:
        raise ValueError(
            f"mesh must have exactly one (data) axis, got axes {tuple(mesh.axis_names)}"
        )
    return mesh.axis_names[0]


def check_divides(mesh, count: int, name: str) -> int:
    """``count`` (the value of argument ``name``) split evenly over the devices of ``mesh``:
    the number per device, or a ValueError naming ``name``."""
    size = int(mesh.devices.size)
    if count % size:
        raise ValueError(
            f"{name}={count} must be a multiple of the mesh's {size} devices (each device runs "
            f"{name} / {size} of them)"
        )
    return count // size


def _upload(a, sharding):
    a = np.asarray(a)
    a = a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False)
    # Each process uploads only the part of its own devices (multi-host safe).
    return jax.make_array_from_callback(a.shape, sharding, lambda index, a=a: a[index])


def shard_rows(mesh, axis, *arrays):
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
        if n_pad > n:
            a = np.concatenate([a, np.zeros((n_pad - n, *a.shape[1:]), a.dtype)])
        out.append(_upload(a, sharding))
    return out, n_pad


def shard_leading(mesh, axis, tree):
    """Every leaf of ``tree`` (leading axis a multiple of the mesh size) split over ``axis``.

    Leaves may be host or device arrays, or typed PRNG keys; the values are taken to the
    host first and uploaded per device, so that the same call works on one process or
    on several.
    """
    from jax.sharding import NamedSharding, PartitionSpec

    sharding = NamedSharding(mesh, PartitionSpec(axis))
    return jax.tree.map(lambda a: _put(a, sharding), tree)


def replicate(mesh, tree):
    """Every leaf of ``tree`` copied to every device of ``mesh``."""
    from jax.sharding import NamedSharding, PartitionSpec

    sharding = NamedSharding(mesh, PartitionSpec())
    return jax.tree.map(lambda a: _put(a, sharding), tree)


def _put(a, sharding):
    if isinstance(a, jax.Array) and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
        impl = jax.random.key_impl(a)
        return jax.random.wrap_key_data(_upload(to_host(jax.random.key_data(a)), sharding),
                                        impl=impl)
    return _upload(to_host(a), sharding)


def to_host(a):
    """A (possibly multi-process, sharded) array as one NumPy array on every process."""
    if isinstance(a, jax.Array) and not a.is_fully_addressable:  # pragma: no cover - multi-host
        if a.is_fully_replicated:
            return np.asarray(a.addressable_data(0))
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(a, tiled=True))
    return np.asarray(a)


def shard_chains(fn, mesh, **static):
    """``fn(keys, data, state, *params, **static)`` with the chains split over ``mesh``.

    ``fn`` runs independent chains: ``keys`` (one PRNG key per chain), ``state`` and every
    output carry a leading chain axis, and no chain reads another.  The returned callable
    ``g(keys, data, state, params)`` (``params`` a tuple) runs ``fn`` inside ``shard_map``:
    each device runs its own block of chains on a replicated ``data`` and ``params``, so a
    chain's draws depend on its key only, not on the number of devices.  ``keys`` and
    ``state`` should be split over the mesh (:func:`shard_leading`), ``data`` and ``params``
    replicated (:func:`replicate`).  One program per ``(fn, mesh, static)``, cached.
    """
    return _chain_program(fn, mesh, tuple(sorted(static.items())))


@functools.lru_cache(maxsize=64)
def _chain_program(fn, mesh, static):
    from jax.sharding import PartitionSpec as P

    axis = check_mesh(mesh)
    kw = dict(static)

    def body(keys, data, state, params):
        return fn(keys, data, state, *params, **kw)

    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(axis), P(), P(axis), P()),
                                 out_specs=P(axis), check_vma=False))
