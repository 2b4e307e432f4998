"""The drivers' shared machinery: trace pieces, grow-on-overflow, restarts, buffer sizes.

Every iterative algorithm of :mod:`bayesclust.inference` has a step and a driver that loops
over it (docs/architecture.md, "One shape for iterative algorithms"). The parts of a driver
that do not depend on the algorithm live here, once:

* :func:`run_in_pieces` -- the host loop around a jitted ``lax.while_loop`` that records the
  objective trace in *pieces* of a fixed-length buffer (``TRACE_PIECE``), so that ``max_iter``
  stays a traced scalar and a new ``max_iter`` never compiles a new program; a step that
  overfills a fixed-capacity cluster buffer is redone in a larger one (grow-on-overflow).
* :func:`best_of_restarts` -- ``n_init`` random starts, the best final objective kept.
* :func:`pow2_at_least` -- the power-of-two capacities of the buffers (one compile per size).
* :func:`permutation` -- ``jax.random.permutation``'s integers with one compile per shape
  bucket (:func:`~bayesclust.kernels.padded_rows`), not per ``n``; :func:`draws_extend` --
  whether any draw made at a padded row count and cut is the draw at ``n`` rows.

Private to the package (the underscore): algorithms import it, users do not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

#: Length of one piece of an objective-trace buffer: a driver runs at most
#: ``TRACE_PIECE - 1`` iterations per call of its jitted loop (slot 0 holds the objective
#: the piece starts from).
TRACE_PIECE = 128


def pow2_at_least(m: int) -> int:
    """The smallest power of two ``>= m`` (1 for ``m <= 1``): a buffer capacity.

    Capacities on a geometric grid keep the number of compiled programs logarithmic in the
    sizes a driver meets.

    Examples
    --------
    >>> [pow2_at_least(m) for m in (0, 1, 2, 3, 128, 129)]
    [1, 1, 2, 4, 128, 256]
    """
    return 1 << max(0, int(m) - 1).bit_length()


#: Rounds of random 32-bit sort keys ``jax.random.permutation`` uses (its ``_shuffle``):
#: ``ceil(3 log(n) / log(2**32 - 1))``.
_SHUFFLE_EXPONENT = 3


def _sort_bits(key, m: int):
    import jax
    import jax.numpy as jnp

    return jax.random.bits(key, (m,), jnp.uint32)


_sort_bits_jit = None


def draws_extend() -> bool:
    """Whether JAX's random draws of shape ``(m, ...)`` begin with those of ``(n, ...)``, ``m >= n``.

    True under the partitionable threefry generator (JAX's default): the bits of element
    ``i`` depend on ``i`` and the key only, so a draw made at a padded row count and cut to
    ``n`` rows is the draw at ``n`` rows, and a new ``n`` in the same shape bucket compiles
    nothing.  Another generator: False (draw at ``n``).
    """
    import jax

    return bool(jax.config.jax_threefry_partitionable
                and jax.config.jax_default_prng_impl == "threefry2x32")


def permutation(rng_key, n: int) -> np.ndarray:
    """``jax.random.permutation(rng_key, n)``, the same integers, compiled once per shape bucket.

    ``jax.random.permutation`` compiles a program for every ``n``.  It sorts
    ``arange(n)`` stably by random 32-bit keys ``jax.random.bits(subkey, (n,))``,
    in ``ceil(3 log n / log(2**32 - 1))`` rounds of ``key, subkey = split(key)``.
    Under the partitionable threefry generator (JAX's default) the bits of a
    shape ``(m,)`` begin with those of ``(n,)`` for ``m >= n``, so the keys are
    drawn at :func:`~bayesclust.kernels.padded_rows` ``(n)``, cut to ``n`` and
    sorted on the host (stably, as XLA's sort): the same permutation, and ``n + 7``
    rows (a refit, a fold) compile nothing new.  Another generator: the plain call.

    Parameters
    ----------
    rng_key : jax key
    n : int

    Returns
    -------
    ndarray of int, shape (n,)
    """
    global _sort_bits_jit
    import jax

    from ..kernels import padded_rows

    n = int(n)
    if not draws_extend():
        return np.asarray(jax.random.permutation(rng_key, n))
    if _sort_bits_jit is None:
        _sort_bits_jit = jax.jit(_sort_bits, static_argnums=1)
    rounds = int(np.ceil(_SHUFFLE_EXPONENT * np.log(max(1, n))
                         / np.log(np.iinfo(np.uint32).max)))
    out = np.arange(n)
    key = rng_key
    for _ in range(rounds):
        key, sub = jax.random.split(key)
        bits = np.asarray(_sort_bits_jit(sub, padded_rows(n)))[:n]
        out = out[np.argsort(bits, kind="stable")]
    return out


def best_of_restarts(n_init: int, run: Callable[[], tuple[float, Any]], *,
                     maximize: bool = True):
    """The best of ``n_init`` calls of ``run() -> (objective, result)``.

    Parameters
    ----------
    n_init : int
        Number of starts (``run`` draws its own randomness, e.g. from a split key).
    run : callable
        One start: returns its final objective and its result.
    maximize : bool, default True
        Whether the objective is maximised (a log-likelihood) or minimised (a cost).

    Returns
    -------
    objective : float
        The best objective (the first run that reached it on ties).
    result
        Its result.
    objectives : ndarray of float, shape (n_init,)
        Every run's objective, in order (a result's ``restart_objectives``).

    Examples
    --------
    >>> it = iter([(1.0, "a"), (3.0, "b"), (3.0, "c")])
    >>> best_of_restarts(3, lambda: next(it))[:2]
    (3.0, 'b')
    """
    best = None
    finals = []
    for _ in range(n_init):
        obj, out = run()
        finals.append(obj)
        if best is None or (obj > best[0] if maximize else obj < best[0]):
            best = (obj, out)
    return best[0], best[1], np.asarray(finals)


class PiecesOut(NamedTuple):
    """What :func:`run_in_pieces` returns.

    Attributes
    ----------
    state : NamedTuple
        The last state the jitted loop returned.
    traces : dict of str to ndarray, each of shape (n_iter + 1,)
        Each recorded trace, the start value first, the pieces concatenated.
    n_iter : int
        Iterations run in all the pieces.
    """

    state: Any
    traces: dict
    n_iter: int


def run_in_pieces(
    state,
    run: Callable[[np.int32, Any], Any],
    max_iter: int,
    *,
    piece: int = TRACE_PIECE,
    traces: Sequence[str] = ("objective_trace",),
    trace_dtype=None,
    grow: Callable[[Any], Any] | None = None,
    stop: Callable[[Any], bool] | None = None,
) -> PiecesOut:
    """Drive a jitted ``lax.while_loop`` in pieces of a fixed-length trace buffer.

    ``run(todo, state)`` runs at most ``todo`` more iterations from ``state`` (``todo`` a
    traced ``int32``, never a static argument) and returns the new state, whose
    ``n_iter`` counts the iterations of this call, whose ``converged`` is the stopping
    test, and whose traces (the fields named by ``traces``, each of length ``piece``)
    hold the start value in slot 0 and iteration ``t`` in slot ``t``. Between pieces the
    iteration counter restarts at 0 and every trace buffer starts from the last value.

    Parameters
    ----------
    state : NamedTuple
        The initial state (``n_iter == 0``), its trace buffers of length ``piece``.
    run : callable ``(todo, state) -> state``
        The jitted loop.
    max_iter : int
        Iterations in all.
    piece : int, default ``TRACE_PIECE``
        Length of the trace buffers.
    traces : sequence of str, default ``("objective_trace",)``
        The state's trace fields to record.
    trace_dtype : dtype, optional
        The host dtype the traces are read in (default: the buffer's own).
    grow : callable ``state -> state or None``, optional
        Grow-on-overflow: called on every state ``run`` returns; a state back means the
        call overfilled a buffer and is redone from that (padded) state, None accepts it.
    stop : callable ``state -> bool``, optional
        An extra stopping test (besides ``converged`` and ``max_iter``), checked after a
        piece is recorded, e.g. a cluster limit hit.

    Returns
    -------
    PiecesOut
        The last state, the concatenated traces (each of length ``n_iter + 1``) and
        ``n_iter``.
    """
    def read(s, name):
        return np.asarray(getattr(s, name), trace_dtype)

    parts = {name: [read(state, name)[:1]] for name in traces}
    done = 0
    while True:
        todo = min(max_iter - done, piece - 1)
        new = run(np.int32(todo), state)
        if grow is not None:
            grown = grow(new)
            if grown is not None:
                state = grown
                continue
        state = new
        it = int(state.n_iter)
        for name in traces:
            parts[name].append(read(state, name)[1: it + 1])
        done += it
        if (stop is not None and stop(state)) or bool(state.converged) or done >= max_iter:
            break
        # The next piece of each trace starts at the current value.
        fresh = {}
        for name in traces:
            buf = np.asarray(getattr(state, name))
            nxt = np.full(piece, np.nan if buf.dtype.kind == "f" else 0, buf.dtype)
            last = parts[name][-1] if parts[name][-1].size else parts[name][0]
            nxt[0] = last[-1]
            fresh[name] = nxt
        state = state._replace(n_iter=np.int32(0), **fresh)
    return PiecesOut(state, {name: np.concatenate(p) for name, p in parts.items()}, done)
