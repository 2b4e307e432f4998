r"""Decoding for the structured hinge loss: argmax over classes and Viterbi over a chain,
both optionally loss-augmented with the Hamming cost.

Loss-augmented decoding :math:`\hat y=\arg\max_{y'}f_\theta(x,y')+c(y',y)` is the
subgradient oracle of the structured hinge loss :math:`L=\max_{y'}f(x,y')-f(x,y)+c(y',y)`
(Martins, Smith, Xing, Aguiar & Figueiredo, 2011, AISTATS, §2, eq. 4, and Algorithm 3).
With the Hamming cost :math:`c(y',y)=\sum_t[y'_t\ne y_t]` the augmentation adds 1 to every
wrong label's unary score, so the chain's decoding stays a Viterbi pass.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V

__all__ = ["multiclass_decode", "viterbi"]


def _multiclass_decode(scores, y, augment):
    """argmax of ``scores`` (+ the 0/1 cost against ``y`` when ``augment``): (label, value)."""
    k = scores.shape[-1]
    aug = scores + jnp.where(augment, (jnp.arange(k) != y).astype(scores.dtype), 0.0)
    label = jnp.argmax(aug)
    return label, aug[label]


def multiclass_decode(scores: Any, y: Any = None) -> tuple[jax.Array, jax.Array]:
    r"""Argmax decoding of one example, loss-augmented with the 0/1 cost when ``y`` is given.

    .. math:: \hat y=\arg\max_{k}\, s_k + [k\ne y]

    (Martins et al., 2011, Algorithm 3, the multiclass case of its decoding step.)

    Parameters
    ----------
    scores : array_like of shape (K,)
        :math:`f_\theta(x,k)` for every class.
    y : int or None
        The true class (``None``: plain decoding).

    Returns
    -------
    label : jax.Array, int scalar
    value : jax.Array, the maximised (augmented) score

    Examples
    --------
    >>> import numpy as np
    >>> int(multiclass_decode(np.array([2.0, 1.5, 0.0]))[0])
    0
    >>> int(multiclass_decode(np.array([2.0, 1.5, 0.0]), y=0)[0])
    1
    """
    s = V.check_array(scores, "scores", ndim=1, min_samples=1)
    if y is None:
        return _multiclass_decode(jnp.asarray(s), 0, False)
    yv = V.check_int(y, "y", minimum=0)
    if yv >= s.shape[0]:
        raise ValueError(f"y must be < the number of classes {s.shape[0]}, got {yv}")
    return _multiclass_decode(jnp.asarray(s), yv, True)


def _viterbi(unary, transition, y, mask, augment):
    """Max-sum over a chain; positions with ``mask`` False (a padded suffix) are skipped.

    Returns the path (``-1`` at padded positions) and its (augmented) score.
    """
    n_len, k = unary.shape
    cost = jnp.where(augment & mask[:, None],
                     (jnp.arange(k)[None, :] != y[:, None]).astype(unary.dtype), 0.0)
    u = unary + cost
    ident = jnp.arange(k)

    def forward(delta, inputs):
        u_t, m_t = inputs
        cand = delta[:, None] + transition  # (from, to)
        bp = jnp.argmax(cand, axis=0)
        new = jnp.max(cand, axis=0) + u_t
        return jnp.where(m_t, new, delta), jnp.where(m_t, bp, ident)

    delta0 = u[0]
    delta, bps = jax.lax.scan(forward, delta0, (u[1:], mask[1:]))
    last = jnp.argmax(delta)

    def backward(state, bp):
        prev = bp[state]
        return prev, state

    first, path_tail = jax.lax.scan(backward, last, bps, reverse=True)
    path = jnp.concatenate([first[None], path_tail])
    return jnp.where(mask, path, -1), delta[last]


def viterbi(unary: Any, transition: Any, y: Any = None) -> tuple[jax.Array, jax.Array]:
    r"""Viterbi decoding of a chain, loss-augmented with the Hamming cost when ``y`` is given.

    .. math:: \hat y=\arg\max_{y'}\sum_t u_t(y'_t)+\sum_{t\ge1}A_{y'_{t-1}y'_t}+\sum_t[y'_t\ne y_t]

    (Martins et al., 2011, §2 and Algorithm 3: decoding of sequence labelling, the structured
    output of their handwriting experiment, §4.1.)

    Parameters
    ----------
    unary : array_like of shape (T, K)
        Score of label ``k`` at position ``t``; ``T >= 1``.
    transition : array_like of shape (K, K)
        Score of label ``j`` following label ``i`` at ``[i, j]``.
    y : array_like of shape (T,) or None
        The true labels (``None``: plain decoding).

    Returns
    -------
    path : jax.Array of shape (T,), int
    value : jax.Array, the path's (augmented) score

    Examples
    --------
    >>> import numpy as np
    >>> u = np.array([[1.0, 0.0], [0.0, 0.2], [1.0, 0.0]])
    >>> A = np.array([[0.5, -1.0], [-1.0, 0.5]])
    >>> np.asarray(viterbi(u, A)[0]).tolist()
    [0, 0, 0]
    """
    u = V.check_array(unary, "unary", ndim=2, min_samples=0)
    if u.shape[0] == 0:
        raise ValueError("unary must have at least one position: cannot decode an empty sequence")
    a = V.check_array(transition, "transition", ndim=2)
    k = u.shape[1]
    if a.shape != (k, k):
        raise ValueError(f"transition must have shape ({k}, {k}) to match unary, got {a.shape}")
    mask = jnp.ones(u.shape[0], bool)
    if y is None:
        yy = jnp.zeros(u.shape[0], jnp.int32)
        augment = False
    else:
        yv = V.check_labels(y, "y", n_samples=u.shape[0])
        if np.any(yv < 0) or np.any(yv >= k):
            raise ValueError(f"y must hold labels in 0..{k - 1}")
        yy, augment = jnp.asarray(yv, jnp.int32), True
    dtype = V.working_dtype(np.result_type(u.dtype, a.dtype))
    # A path's score sums T unary scores, T - 1 transitions and up to T Hamming costs.
    limit = float(np.finfo(dtype).max)
    T = u.shape[0]
    for name, arr, terms in (("unary", u, T), ("transition", a, max(T - 1, 1))):
        big = float(np.max(np.abs(arr))) if arr.size else 0.0
        if not big * terms + T < limit:
            raise ValueError(f"{name} has values up to {big:.3g}: a path's score over {T} positions "
                             f"overflows {np.dtype(dtype).name} (largest {limit:.3g}); rescale {name}")
    return _viterbi_jit(jnp.asarray(u, dtype), jnp.asarray(a, dtype), yy, mask, augment)


_viterbi_jit = jax.jit(_viterbi, static_argnames=("augment",))
