r"""ACCCS: a consensus partition that balances average cluster consistency with soft
pairwise constraints, searched by a genetic algorithm.

The objective of a candidate consensus partition :math:`P^*` with ``K*`` clusters is

.. math::

    J(P^*) = (1 - \beta)\, ACC(P^*, \mathbb P) + \beta\, CS(P^*, \mathcal C_=, \mathcal C_{\ne}),

where :math:`ACC` is the average cluster consistency with the ensemble
(:func:`bayesclust.metrics.acc`) and :math:`CS` the fraction of must-link pairs put together
and cannot-link pairs kept apart (the constraints are soft).

References
----------
F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency for
cluster ensemble selection", IC3K / KDIR 2009 (ACC).
J. M. M. Duarte, A. L. N. Fred and F. J. F. Duarte, "Combining data clusterings with instance
level constraints", PRIS 2009, eqs. (5)-(7) (CEAC and ACCCS).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from .. import _validation as V
from ..metrics import _acc_population, _ensemble_one_hot
from .constrained import _check_pairs, satisfied_fraction

__all__ = ["ACCCSResult", "acccs"]


class ACCCSResult(NamedTuple):
    r"""Result of :func:`acccs`.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        The best consensus partition found (labels in ``0..n_clusters-1``; a cluster may be empty).
    objective : float
        Its :math:`J = (1 - \beta) ACC + \beta CS` (maximised).
    objective_trace : ndarray of float64, shape (generations + 1,)
        The best :math:`J` of the population: entry 0 for the initial population, entry ``g``
        after generation ``g``.  Non-decreasing (the survival step is elitist).
    acc : float
        :math:`ACC` of ``labels`` with the ensemble.
    constraint_satisfaction : float
        :math:`CS` of ``labels`` (1 when there are no constraints).
    """

    labels: np.ndarray
    objective: float
    objective_trace: np.ndarray
    acc: float
    constraint_satisfaction: float


def _constraint_satisfaction_batch(labels: np.ndarray, must_link: np.ndarray, cannot_link: np.ndarray) -> np.ndarray:
    r"""CS of every row of ``labels`` (p, n), shape (p,)
    (:func:`~bayesclust.inference.constrained.satisfied_fraction`), 1 without constraints."""
    cs = satisfied_fraction(labels, must_link, cannot_link)
    return np.where(np.isnan(cs), 1.0, cs)


def _align(p1: np.ndarray, p2: np.ndarray, k: int) -> np.ndarray:
    """``p2`` relabelled so that its clusters match those of ``p1`` (Hungarian method on the
    contingency table, maximal total overlap)."""
    table = np.bincount(p2 * k + p1, minlength=k * k).reshape(k, k)
    rows, cols = linear_sum_assignment(table, maximize=True)
    perm = np.empty(k, np.int64)
    perm[rows] = cols
    return perm[p2]


def _crossover(rng: np.random.Generator, p1: np.ndarray, p2: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One-point crossover of ``p1`` with ``p2`` aligned to it; the cut is uniform in 1..n-1."""
    q = _align(p1, p2, k)
    n = p1.shape[0]
    cut = int(rng.integers(1, n)) if n > 1 else 0
    return np.concatenate([p1[:cut], q[cut:]]), np.concatenate([q[:cut], p1[cut:]])


def _mutate(rng: np.random.Generator, labels: np.ndarray, k: int, p_mutation: float) -> np.ndarray:
    """Each label replaced, with probability ``p_mutation``, by a uniform draw among the other ``k - 1``."""
    if k < 2 or p_mutation == 0.0:
        return labels
    hit = rng.random(labels.shape) < p_mutation
    shift = rng.integers(1, k, size=labels.shape)
    return np.where(hit, (labels + shift) % k, labels)


def acccs(
    rng_key: Any,
    ensemble: Any,
    must_link: Any,
    cannot_link: Any,
    n_clusters: int,
    X: Any = None,
    *,
    population: int = 20,
    generations: int = 100,
    p_crossover: float = 0.8,
    p_mutation: float = 0.01,
    beta: float = 0.5,
) -> ACCCSResult:
    r"""ACCCS consensus: a genetic algorithm maximising ACC plus constraint satisfaction.

    Maximises :math:`J(P^*) = (1 - \beta) ACC(P^*, \mathbb P) + \beta CS(P^*)` over partitions
    with ``n_clusters`` labels, where :math:`ACC` is :func:`bayesclust.metrics.acc` (weight
    inside the maximum) and

    .. math::

        CS = \frac{\sum_{(i,j) \in \mathcal C_=} [c_i = c_j] + \sum_{(i,j) \in \mathcal C_{\ne}}
        [c_i \ne c_j]}{|\mathcal C_=| + |\mathcal C_{\ne}|}.

    Each generation: roulette selection of ``population`` parents with probability
    proportional to :math:`J`; consecutive pairs cross over with probability ``p_crossover``
    (the second parent first relabelled to match the first by the Hungarian method on their
    contingency table, then a one-point crossover at a uniform cut); every label of every
    child is replaced by a uniform other label with probability ``p_mutation``; the next
    population is the best ``population`` of the current one and the children (elitist:
    docs/deviations.md#acccs-ga-operators).

    Parameters
    ----------
    rng_key : jax.random key or int
    ensemble : array_like of int, shape (N, n), list of label vectors, ``Ensemble`` or Posterior
        The partitions :math:`\mathbb P` (``-1`` marks an object missing from a partition).
    must_link, cannot_link : array_like of int, shape (c, 2), or None
        Pairs of object indices that should share / not share a cluster.
    n_clusters : int
        ``K*``, the number of labels of the consensus (a cluster may end up empty).
    X : array_like, shape (n, d), optional
        Data for the initial population: ``population`` k-means runs
        (:func:`bayesclust.inference.kmeans.kmeans`, random initialisation).  Without ``X``
        the initial partitions are uniform random labels.
    population : int, default 20
        At least 2.
    generations : int, default 100
    p_crossover, p_mutation : float in [0, 1], defaults 0.8 and 0.01
    beta : float in [0, 1], default 0.5
        Weight of the constraints.

    Returns
    -------
    ACCCSResult
        ``labels, objective, objective_trace, acc, constraint_satisfaction``; ``objective`` is
        maximised.

    Notes
    -----
    The population's ACC is scored in one matrix product per generation
    (:func:`bayesclust.metrics.acc_population`).  Host (NumPy) code; the k-means of the
    initial population run in JAX.

    References
    ----------
    J. M. M. Duarte, A. L. N. Fred and F. J. F. Duarte, "Combining data clusterings with
    instance level constraints", PRIS 2009, eqs. (5)-(7) and the experimental set-up
    (MaxGen 100, PopSize 20, crossover 0.8, mutation 0.01, beta 1/2).

    Examples
    --------
    >>> ens = [[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], [0, 1, 1, 2, 2, 2]]
    >>> res = acccs(0, ens, [[0, 1]], [[0, 5]], 2, generations=20)
    >>> res.constraint_satisfaction, len(res.objective_trace)
    (1.0, 21)
    """
    if X is not None:
        X = V.check_array(X, "X")  # first: broken data are named before a mismatch with the ensemble
    prep = _ensemble_one_hot(ensemble)
    n = prep.B.shape[0]
    ml = _check_pairs(must_link, "must_link", n)
    cl = _check_pairs(cannot_link, "cannot_link", n)
    k = V.check_int(n_clusters, "n_clusters", minimum=1)
    if k > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {k}")
    population = V.check_int(population, "population", minimum=2)
    generations = V.check_int(generations, "generations", minimum=0)
    p_crossover = V.check_probability(p_crossover, "p_crossover")
    p_mutation = V.check_probability(p_mutation, "p_mutation")
    beta = V.check_probability(beta, "beta")
    if X is not None:
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows but the partitions of ensemble label {n} objects")
    rng = V.as_numpy_rng(rng_key)

    if X is not None:
        import jax

        from .kmeans import kmeans

        keys = jax.random.split(V.as_rng_key(rng_key), population)
        B = np.stack([np.asarray(kmeans(keys[i], X, k, init="random").labels, np.int64) for i in range(population)])
    else:
        B = rng.integers(0, k, size=(population, n))

    def score(P):
        a = _acc_population(P, prep) if beta < 1.0 else np.zeros(P.shape[0])
        cs = _constraint_satisfaction_batch(P, ml, cl)
        return (1.0 - beta) * a + beta * cs

    f = score(B)
    trace = [float(f.max())]
    n_pairs = (population + 1) // 2
    for _ in range(generations):
        total = f.sum()
        prob = f / total if total > 0 else np.full(population, 1.0 / population)
        parents = B[rng.choice(population, size=2 * n_pairs, replace=True, p=prob)]
        children = np.empty_like(parents)
        for t in range(n_pairs):
            p1, p2 = parents[2 * t], parents[2 * t + 1]
            if rng.random() < p_crossover:
                c1, c2 = _crossover(rng, p1, p2, k)
            else:
                c1, c2 = p1, p2
            children[2 * t] = _mutate(rng, c1, k, p_mutation)
            children[2 * t + 1] = _mutate(rng, c2, k, p_mutation)
        pool = np.concatenate([B, children])
        fp = np.concatenate([f, score(children)])
        keep = np.argsort(-fp, kind="stable")[:population]  # ties keep the current population first
        B, f = pool[keep], fp[keep]
        trace.append(float(f[0]))

    top = int(np.argmax(f))  # the first of the best (the population is sorted after a generation)
    best = B[top]
    a = float(_acc_population(best[None], prep)[0])
    cs = float(_constraint_satisfaction_batch(best[None], ml, cl)[0])
    return ACCCSResult(best.copy(), float(f[top]), np.asarray(trace), a, cs)
