r"""Clustering ensembles for evidence accumulation: the split-and-merge k-means ensemble
and the rules for its number of clusters.

An ensemble is an ``(N, n)`` array of labelings (``-1`` marks an object left out of a
partition's sub-sample); everything downstream (:mod:`~bayesclust.inference.coassociation`,
:mod:`~bayesclust.inference.linkage`, :mod:`~bayesclust.inference.aspect_em`) accepts any
such array, a list of label vectors, or a :class:`~bayesclust.inference.posterior.Posterior`'s
label draws.

References
----------
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
IEEE TPAMI 27(6) (2005) 835-850.
A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
clustering", ICPR 2010.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V
from .kmeans import lloyd_host, masked_lloyd

__all__ = ["k_bounds", "Ensemble", "kmeans_ensemble"]


# ---------------------------------------------------------------------------
# K rules
# ---------------------------------------------------------------------------


def _round(x: float, rounding: str) -> int:
    if rounding == "ceil":
        return int(math.ceil(x - 1e-12))
    if rounding == "round_half_up":
        return int(math.floor(x + 0.5))  # never Python's round (half to even: 12.5 -> 12, Table I has 13)
    raise ValueError(f"rounding must be 'ceil' or 'round_half_up', got {rounding!r}")


@V.renamed_kwargs(rule="k_rule")
def k_bounds(n: int, k_rule: str = "penca", *, rounding: str = "ceil", A: float = 50, B: float = 20) -> tuple[int, int]:
    r"""Range ``[K_min, K_max]`` of the number of clusters of an ensemble's partitions.

    Parameters
    ----------
    n : int
        Number of objects.
    k_rule : {"penca", "sqrt", "linear"}
        The rule (``rule=`` is a deprecated spelling):

        * ``"penca"`` (PEnCA / DR-EAC; Lourenco, Fred & Figueiredo 2011, §5):
          :math:`K_{min}=\max(\lceil\sqrt n/2\rceil,\lceil n/50\rceil)`, :math:`K_{max}=K_{min}+20`;
        * ``"sqrt"`` (scalability rule A): :math:`\{\lceil\sqrt n/2\rceil,\lceil\sqrt n\rceil\}`;
        * ``"linear"`` (scalability rule B): :math:`\{\lceil n/A\rceil,\lceil n/B\rceil\}`, ``A > B``;
          it makes the co-association's size linear in ``n`` (about ``2 A n`` stored pairs).
    rounding : {"ceil", "round_half_up"}
        ``"ceil"`` is the printed formula; ``"round_half_up"`` (``floor(x + 0.5)``) reproduces
        Table I of the scalability paper (all cells but three: docs/deviations.md#k-rule-rounding).
    A, B : float
        The linear rule's divisors (paper: 50 and 20).

    Returns
    -------
    (int, int)
        ``K_min <= K_max``, both at least 1 and at most ``n``.

    Examples
    --------
    >>> k_bounds(150)
    (7, 27)
    >>> k_bounds(450, "linear", rounding="round_half_up")
    (9, 23)
    """
    n = V.check_int(n, "n", minimum=1)
    A = V.check_positive(A, "A")
    B = V.check_positive(B, "B")
    rule = k_rule
    if rule == "penca":
        kmin = max(_round(math.sqrt(n) / 2, rounding), _round(n / 50, rounding))
        kmax = kmin + 20
    elif rule == "sqrt":
        kmin, kmax = _round(math.sqrt(n) / 2, rounding), _round(math.sqrt(n), rounding)
    elif rule == "linear":
        if not A > B:
            raise ValueError(f"the linear rule needs A > B, got A={A}, B={B}")
        kmin, kmax = _round(n / A, rounding), _round(n / B, rounding)
    else:
        raise ValueError(f"k_rule must be 'penca', 'sqrt' or 'linear', got {rule!r}")
    kmin = min(max(kmin, 1), n)
    kmax = min(max(kmax, kmin), n)
    return kmin, kmax


# ---------------------------------------------------------------------------
# Ensembles
# ---------------------------------------------------------------------------


class Ensemble(NamedTuple):
    """A clustering ensemble (result of :func:`kmeans_ensemble`).

    Attributes
    ----------
    labels : ndarray of int32, shape (N, n)
        Partition ``l`` of object ``i``; ``-1`` marks an object left out of partition
        ``l``'s sub-sample.
    n_clusters : ndarray of int, shape (N,)
        The K drawn for every partition (a k-means cluster may end empty, so a partition
        can have fewer distinct labels).
    k_min, k_max : int
        The range K was drawn from.
    """

    labels: np.ndarray
    n_clusters: np.ndarray
    k_min: int
    k_max: int


@functools.partial(jax.jit, static_argnames=("capacity",))
def _masked_kmeans(key, X, k, capacity, max_iter):
    """One jitted partition: Lloyd's k-means with ``k <= capacity`` active centres.

    Random initialisation from ``k`` distinct data points, then
    :func:`~bayesclust.inference.kmeans.masked_lloyd` in a buffer of ``capacity``
    slots (one compilation serves every K of an ensemble), until the assignment
    repeats or ``max_iter``.
    """
    n = X.shape[0]
    idx = jax.random.permutation(key, n)[:capacity]
    valid = jnp.arange(capacity) < k
    _, final, _, _ = masked_lloyd(X, None, X[idx], valid, max_iter, 0.0)
    return final.index


def _kmeans_numpy(rng: np.random.Generator, X: np.ndarray, k: int, max_iter: int) -> np.ndarray:
    """One host partition: Lloyd's k-means from ``k`` distinct random data points.

    :func:`~bayesclust.inference.kmeans.lloyd_host` with a KD-tree assignment (no
    compilation; the ensemble's default backend, see :func:`kmeans_ensemble`).
    """
    n = X.shape[0]
    return lloyd_host(X, X[rng.choice(n, size=k, replace=False)], max_iter, assignment="kdtree")


@V.renamed_kwargs(rule="k_rule")
def kmeans_ensemble(
    rng_key: Any,
    X: Any,
    n_partitions: int = 150,
    *,
    n_clusters_range: tuple[int, int] | None = None,
    k_rule: str = "penca",
    rounding: str = "ceil",
    subsample: float | None = None,
    max_iter: int = 100,
    backend: str = "numpy",
) -> Ensemble:
    r"""Split-and-merge clustering ensemble: ``N`` k-means runs with random K and init.

    Partition ``l`` runs Lloyd's k-means from ``K_l`` distinct random data points, with
    :math:`K_l \sim U\{K_{min},\dots,K_{max}\}` (inclusive), on all objects or on a random
    sub-sample of ``round(subsample * n)`` objects (the others get label ``-1``).

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    n_partitions : int, default 150
        ``N`` (PEnCA does not state it; 150 as in the scalability paper).
    n_clusters_range : (int, int), optional
        ``(K_min, K_max)``; default :func:`k_bounds` ``(n, k_rule, rounding=rounding)``.
        ``K_max`` is capped at the number of objects of a partition.
    k_rule, rounding : str
        See :func:`k_bounds` (``rule=`` is a deprecated spelling of ``k_rule``).
    subsample : float in (0, 1], optional
        Fraction of objects clustered by each partition (e.g. 0.9 in the PPC paper).
    max_iter : int, default 100
        Lloyd iterations per partition (stops earlier when the assignment repeats).
    backend : {"numpy", "jax"}, default "numpy"
        ``"numpy"``: :func:`~bayesclust.inference.kmeans.lloyd_host` with a KD-tree
        nearest-centre search (no compilation, ``O(n log K)`` assignments in low
        dimension).  ``"jax"``: :func:`~bayesclust.inference.kmeans.masked_lloyd`, the
        jit-compiled loop of :func:`~bayesclust.inference.kmeans.kmeans`, with ``K`` active
        slots in a buffer of capacity ``K_max`` (one compilation for every K).  The numpy
        loop is the default because it compiles nothing and was faster where measured
        (iris, N = 150, K in [7, 27], shared 2-core machine: numpy 0.3 s; jax 1.1 s plus
        a 5 s compilation per data shape); the jax loop runs on any JAX device.  Both are
        Lloyd from random distinct data points, so they differ only by the random
        streams and tie-breaking.

    Returns
    -------
    Ensemble

    Notes
    -----
    All partitions share one compiled program: the centres live in a buffer of capacity
    ``K_max`` and the unused slots are masked (``backend="jax"``).
    A single random initialisation per run (``init="random"``, ``n_init=1``) is used on
    purpose: diversity is the point of the ensemble (docs/deviations.md#penca-ensemble).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + np.arange(10)[:, None] * 1e-3
    >>> ens = kmeans_ensemble(0, X, 4, n_clusters_range=(2, 3))
    >>> ens.labels.shape, bool(np.all((ens.n_clusters >= 2) & (ens.n_clusters <= 3)))
    ((4, 10), True)
    """
    X = V.check_array(X, "X")
    n = X.shape[0]
    N = V.check_int(n_partitions, "n_partitions", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    m = n
    if subsample is not None:
        rate = V.check_positive(subsample, "subsample")
        if rate > 1:
            raise ValueError(f"subsample must be in (0, 1], got {subsample!r}")
        m = max(1, int(math.floor(rate * n + 0.5)))
    if n_clusters_range is None:
        kmin, kmax = k_bounds(n, k_rule, rounding=rounding)
    else:
        if len(n_clusters_range) != 2:
            raise ValueError(f"n_clusters_range must be a pair (K_min, K_max), got {n_clusters_range!r}")
        kmin = V.check_int(n_clusters_range[0], "n_clusters_range[0]", minimum=1)
        kmax = V.check_int(n_clusters_range[1], "n_clusters_range[1]", minimum=1)
        if kmax < kmin:
            raise ValueError(f"n_clusters_range must have K_min <= K_max, got {n_clusters_range!r}")
    n_distinct = np.unique(X, axis=0).shape[0]
    cap = min(m, n_distinct)
    kmin, kmax = min(kmin, cap), min(kmax, cap)
    if backend not in ("numpy", "jax"):
        raise ValueError(f"backend must be 'numpy' or 'jax', got {backend!r}")
    key = V.as_rng_key(rng_key)
    master = V.as_numpy_rng(key)
    ks = master.integers(kmin, kmax + 1, size=N)
    labels = np.full((N, n), -1, np.int32)
    if backend == "numpy":
        seeds = master.integers(0, np.iinfo(np.int64).max, size=N)
        X64 = X.astype(np.float64)
        for l in range(N):
            rng = np.random.default_rng(int(seeds[l]))
            idx = np.sort(rng.choice(n, size=m, replace=False)) if m < n else slice(None)
            labels[l, idx] = _kmeans_numpy(rng, X64[idx], int(ks[l]), max_iter)
        return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))
    s_key, run_key = jax.random.split(key)
    Xj = jnp.asarray(X)
    for l in range(N):
        kl = jax.random.fold_in(run_key, l)
        if m < n:
            idx = np.sort(np.asarray(jax.random.permutation(jax.random.fold_in(s_key, l), n)[:m]))
            Xl = Xj[idx]
        else:
            idx, Xl = slice(None), Xj
        lab = _masked_kmeans(kl, Xl, jnp.int32(ks[l]), kmax, jnp.int32(max_iter))
        labels[l, idx] = np.asarray(lab)
    return Ensemble(labels, ks.astype(np.int64), int(kmin), int(kmax))
