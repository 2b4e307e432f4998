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

from ... import _validation as V
from ...metrics.consensus import acc_of_codes, ensemble_one_hot
from ._common import _check_pairs
from .constrained import satisfied_fraction

__all__ = ["ACCCSInfo", "ACCCSResult", "ACCCSState", "acccs", "acccs_step", "init_acccs_state"]


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
    n_iter : int
        Generations run (``generations``).
    converged : bool
        Always False: the search runs a fixed number of generations and has no convergence
        test (Duarte, Fred & Duarte 2009), so it never stops on one.
    acc : float
        :math:`ACC` of ``labels`` with the ensemble.
    constraint_satisfaction : float
        :math:`CS` of ``labels`` (1 when there are no constraints).
    """

    labels: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    acc: float
    constraint_satisfaction: float


def _constraint_satisfaction_batch(labels: np.ndarray, must_link: np.ndarray, cannot_link: np.ndarray) -> np.ndarray:
    r"""CS of every row of ``labels`` (p, n), shape (p,)
    (:func:`~bayesclust.inference.consensus.constrained.satisfied_fraction`), 1 without constraints."""
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


class _ACCCSProblem(NamedTuple):
    """What every generation reads: the ensemble's one-hot encoding and the settings."""

    prep: Any  # metrics.consensus.EnsembleOneHot
    must_link: np.ndarray
    cannot_link: np.ndarray
    n_clusters: int
    p_crossover: float
    p_mutation: float
    beta: float

    def score(self, P: np.ndarray) -> np.ndarray:
        """:math:`J` of every row of ``P`` (p, n), shape (p,)."""
        a = acc_of_codes(P, self.prep) if self.beta < 1.0 else np.zeros(P.shape[0])
        cs = _constraint_satisfaction_batch(P, self.must_link, self.cannot_link)
        return (1.0 - self.beta) * a + self.beta * cs


class ACCCSState(NamedTuple):
    r"""State of the ACCCS genetic search after ``n_iter`` generations.

    Attributes
    ----------
    population : ndarray of int64, shape (population, n)
        Candidate consensus partitions (labels in ``0..n_clusters-1``), best first after a
        generation (sorted by ``fitness``, ties in their previous order).
    fitness : ndarray of float64, shape (population,)
        :math:`J = (1 - \beta) ACC + \beta CS` of every candidate (maximised).
    objective : float
        The best :math:`J` of the population.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        ``objective`` after each generation, entry 0 for the initial population.
    n_iter : int
        Generations run.
    converged : bool
        Always False: the search runs a fixed number of generations and has no convergence
        test (Duarte, Fred & Duarte 2009).
    problem : object
        The prepared problem (private, constant during the run): the ensemble's one-hot
        encoding, the constraints, ``n_clusters`` and the rates.
    """

    population: np.ndarray
    fitness: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    problem: object


class ACCCSInfo(NamedTuple):
    """Diagnostics of one :func:`acccs_step`.

    Attributes
    ----------
    objective : float
        The best :math:`J` of the returned population.
    changed : bool
        Whether the best partition changed.
    n_crossovers : int
        Pairs of parents that crossed over.
    """

    objective: float
    changed: bool
    n_crossovers: int


def init_acccs_state(
    rng_key: Any,
    ensemble: Any,
    must_link: Any,
    cannot_link: Any,
    n_clusters: int,
    X: Any = None,
    *,
    population: int = 20,
    p_crossover: float = 0.8,
    p_mutation: float = 0.01,
    beta: float = 0.5,
) -> ACCCSState:
    """The initial population of :func:`acccs`, scored (arguments as there).

    ``population`` k-means runs on ``X`` (random initialisation) when ``X`` is given, else
    uniform random labels; the ensemble's one-hot encoding is prepared once here.

    Examples
    --------
    >>> ens = [[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], [0, 1, 1, 2, 2, 2]]
    >>> state = init_acccs_state(0, ens, [[0, 1]], [[0, 5]], 2)
    >>> state.population.shape, state.n_iter
    ((20, 6), 0)
    """
    if X is not None:
        X = V.check_array(X, "X")  # first: broken data are named before a mismatch with the ensemble
        V.check_point_range(X, "X")
    prep = ensemble_one_hot(ensemble)
    n = prep.B.shape[0]
    ml = _check_pairs(must_link, "must_link", n)
    cl = _check_pairs(cannot_link, "cannot_link", n)
    k = V.check_int(n_clusters, "n_clusters", minimum=1)
    if k > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {k}")
    population = V.check_int(population, "population", minimum=2)
    problem = _ACCCSProblem(prep, ml, cl, k, V.check_probability(p_crossover, "p_crossover"),
                            V.check_probability(p_mutation, "p_mutation"), V.check_probability(beta, "beta"))
    if X is not None and X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but the partitions of ensemble label {n} objects")
    if X is not None:
        import jax

        from ..hard.kmeans import kmeans

        keys = jax.random.split(V.as_rng_key(rng_key), population)
        P = np.stack([np.asarray(kmeans(keys[i], X, k, init="random").labels, np.int64) for i in range(population)])
    else:
        P = V.as_numpy_rng(rng_key).integers(0, k, size=(population, n))
    f = problem.score(P)
    best = float(f.max())
    return ACCCSState(P, f, best, np.array([best]), 0, False, problem)


def acccs_step(rng_key: Any, state: ACCCSState) -> tuple[ACCCSState, ACCCSInfo]:
    """One generation of ACCCS: selection, crossover, mutation, elitist survival.

    Roulette selection of ``population`` parents with probability proportional to
    :math:`J`; consecutive pairs cross over with probability ``p_crossover`` (the second
    parent relabelled to match the first by the Hungarian method, then a one-point
    crossover); every label of every child moves to a uniform other label with probability
    ``p_mutation``; the best ``population`` of parents' generation and children survive.
    The input state is not modified.

    Parameters
    ----------
    rng_key : jax.random key or int
        This generation's randomness (a NumPy generator seeded by it).
    state : ACCCSState

    Returns
    -------
    (ACCCSState, ACCCSInfo)

    Examples
    --------
    >>> ens = [[0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], [0, 1, 1, 2, 2, 2]]
    >>> state = init_acccs_state(0, ens, [[0, 1]], [[0, 5]], 2)
    >>> state, info = acccs_step(1, state)
    >>> state.n_iter, len(state.objective_trace), bool(info.objective >= state.objective_trace[0])
    (1, 2, True)
    """
    rng = V.as_numpy_rng(rng_key)
    pb = state.problem
    B, f, k = state.population, state.fitness, pb.n_clusters
    size = B.shape[0]
    total = f.sum()
    prob = f / total if total > 0 else np.full(size, 1.0 / size)
    n_pairs = (size + 1) // 2
    parents = B[rng.choice(size, size=2 * n_pairs, replace=True, p=prob)]
    children = np.empty_like(parents)
    crossed = 0
    for t in range(n_pairs):
        p1, p2 = parents[2 * t], parents[2 * t + 1]
        if rng.random() < pb.p_crossover:
            c1, c2 = _crossover(rng, p1, p2, k)
            crossed += 1
        else:
            c1, c2 = p1, p2
        children[2 * t] = _mutate(rng, c1, k, pb.p_mutation)
        children[2 * t + 1] = _mutate(rng, c2, k, pb.p_mutation)
    pool = np.concatenate([B, children])
    fp = np.concatenate([f, pb.score(children)])
    keep = np.argsort(-fp, kind="stable")[:size]  # ties keep the current population first
    best = float(fp[keep[0]])
    changed = not np.array_equal(pool[keep[0]], B[int(np.argmax(f))])
    new = ACCCSState(pool[keep], fp[keep], best, np.append(state.objective_trace, best), state.n_iter + 1,
                     False, pb)
    return new, ACCCSInfo(best, changed, crossed)


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
        (:func:`bayesclust.inference.hard.kmeans.kmeans`, random initialisation).  Without ``X``
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
        ``labels, objective, objective_trace, n_iter, converged, acc,
        constraint_satisfaction``; ``objective`` is maximised.

    Notes
    -----
    The driver splits ``rng_key`` into ``generations + 1`` keys, builds the population with
    the first (:func:`init_acccs_state`) and runs :func:`acccs_step` with each of the others.
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
    import jax

    generations = V.check_int(generations, "generations", minimum=0)
    keys = jax.random.split(V.as_rng_key(rng_key), generations + 1)
    state = init_acccs_state(keys[0], ensemble, must_link, cannot_link, n_clusters, X, population=population,
                             p_crossover=p_crossover, p_mutation=p_mutation, beta=beta)
    for g in range(generations):
        state, _ = acccs_step(keys[g + 1], state)
    pb = state.problem
    top = int(np.argmax(state.fitness))  # the first of the best
    best = state.population[top]
    a = float(acc_of_codes(best[None], pb.prep)[0])
    cs = float(_constraint_satisfaction_batch(best[None], pb.must_link, pb.cannot_link)[0])
    return ACCCSResult(best.copy(), float(state.fitness[top]), state.objective_trace, state.n_iter,
                       state.converged, a, cs)
