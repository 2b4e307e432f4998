r"""Clustering data with temporal evolution: state detection by evidence accumulation, and
genetic-algorithm denoising of the transition between states.

Medina & Fred's temporal study (SIMBAD deliverable D2.3, ECG under stress) clusters
time-ordered feature vectors with an ensemble of spectral clusterings (NJW and Shi-Malik
over a grid of K and Gaussian scales), accumulates the evidence (EAC), extracts one
consensus partition per linkage (single, complete, average, Ward, centroid; lifetime
criterion) and reads the *states* the subject passes through off the time-ordered labels
(Algorithm 1); a genetic algorithm removes the noisy stretch between states
(Algorithm 2).

Pipeline::

    res = temporal_states(0, X)            # states without denoising
    den = denoise_sequence(0, X)           # remove one contiguous block
    temporal_states(0, X[den.kept], time_index=den.kept)   # states of the denoised sequence

References
----------
Medina and A. Fred, SIMBAD deliverable D2.3, temporal study (ECG state detection with
evidence accumulation and genetic-algorithm denoising), Algorithms 1-2 and Table 1.
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
IEEE TPAMI 27(6) (2005) 835-850.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from ._common import _default_sigmas
from .coassociation import CoAssociation, coassociation_dense
from .ensembles import SPECTRAL_METHODS, spectral_grid_ensemble
from .linkage import LINKAGE_METHODS, linkage_consensus

__all__ = [
    "TemporalStatesResult",
    "DenoiseResult",
    "DenoiseState",
    "DenoiseInfo",
    "temporal_states",
    "denoise_sequence",
    "init_denoise_state",
    "denoise_step",
    "window_indicator",
    "DEFAULT_LINKAGES",
]

#: The five linkages of the temporal study.
DEFAULT_LINKAGES = ("single", "complete", "average", "ward", "centroid")


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _check_sequence(X: Any, window: Any) -> tuple[np.ndarray, int]:
    X = V.check_array(X, "X_time_ordered")
    # the ensembles run in X's unit frame, in the working dtype: X must fit it
    V.check_working_range(X, "X_time_ordered")
    window = V.check_int(window, "window", minimum=1)
    n = X.shape[0]
    if window > n:
        raise ValueError(f"window ({window}) is larger than the sequence ({n} samples)")
    if n < 2 * window:
        raise ValueError(f"X_time_ordered needs at least two windows ({2 * window} samples), got {n}")
    return X, window


def _check_grid(n_clusters: Any, sigmas: Any, methods: Any) -> tuple[list[int], np.ndarray, tuple]:
    ks = [V.check_int(k, "n_clusters", minimum=2) for k in (list(n_clusters) if not np.isscalar(n_clusters)
                                                            else [n_clusters])]
    if not ks:
        raise ValueError("n_clusters must hold at least one K")
    sig = _default_sigmas() if sigmas is None else np.asarray(sigmas, np.float64).reshape(-1)
    if sig.size == 0 or not np.all(np.isfinite(sig)) or np.any(sig <= 0):
        raise ValueError(f"sigmas must be positive finite scales, got {sigmas!r}")
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    if not methods or any(m not in SPECTRAL_METHODS for m in methods):
        raise ValueError(f"methods must be among {SPECTRAL_METHODS}, got {methods!r}")
    return ks, sig, methods


def _check_linkages(linkages: Any) -> tuple[str, ...]:
    linkages = (linkages,) if isinstance(linkages, str) else tuple(linkages)
    if not linkages or any(m not in LINKAGE_METHODS for m in linkages):
        raise ValueError(f"linkages must be among {LINKAGE_METHODS}, got {linkages!r}")
    return linkages


# ---------------------------------------------------------------------------
# EAC of the spectral ensemble
# ---------------------------------------------------------------------------


def _linkage_parts(labels: np.ndarray, linkages: tuple) -> tuple[np.ndarray, np.ndarray]:
    """One lifetime partition per linkage of the co-association of ``labels`` (N, n), and that
    co-association, dense (n, n).  The dense matrix (one product, :func:`coassociation_dense`)
    also gives the sparse :class:`CoAssociation` the linkages read, without a second pass."""
    N, n = labels.shape
    dense = coassociation_dense(labels)
    counts = np.rint(dense * N).astype(np.int32)
    C = CoAssociation(sp.triu(sp.csr_matrix(counts), 1).tocsr(), N, None, np.full(n, N, np.int64))
    return np.stack([linkage_consensus(C, m).labels for m in linkages]), dense


def _consensus(rng_key, X, ks, sigmas, methods, linkages, pad_to):
    """The spectral ensemble of ``X``, its co-association and one lifetime partition per linkage."""
    ens = spectral_grid_ensemble(rng_key, X, ks, sigmas, methods, pad_to=pad_to)
    return _linkage_parts(ens.labels, linkages)


# ---------------------------------------------------------------------------
# State detection (Algorithm 1)
# ---------------------------------------------------------------------------


def _window_of(n: int, window: int, time_index: np.ndarray | None = None) -> np.ndarray:
    """The window of every sample: ``i // window`` within every contiguous stretch of time
    (all of the sequence without ``time_index``), a trailing partial window joined to the
    stretch's last full window (a stretch shorter than ``window`` is one window)."""
    if time_index is None:
        cuts = np.array([0, n])
    else:
        cuts = np.r_[0, np.flatnonzero(np.diff(time_index) != 1) + 1, n]
    out = np.empty(n, np.int64)
    base = 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        w = max((b - a) // window, 1)
        out[a:b] = base + np.minimum(np.arange(b - a) // window, w - 1)
        base += w
    return out


def _check_time_index(time_index: Any, n: int) -> np.ndarray | None:
    if time_index is None:
        return None
    t = V.check_labels(time_index, "time_index", n_samples=n)
    if np.any(np.diff(t) <= 0):
        raise ValueError("time_index must be strictly increasing (the samples' positions in time)")
    return t


def window_indicator(labels: Any, window: int = 10, time_index: Any = None) -> np.ndarray:
    r"""Window-by-cluster indicator :math:`M_b(s, i) = 1` iff label ``i`` occurs in window ``s``.

    The time-ordered labels are cut into ``w = n // window`` adjacent windows of
    ``window`` samples (the ``n % window`` trailing samples join the last window)
    (Medina & Fred, SIMBAD deliverable D2.3, temporal study, Algorithm 1).  With
    ``time_index`` (the samples' positions in the original sequence, e.g. after a block
    was removed) no window straddles a gap: every contiguous stretch is cut on its own.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        Time-ordered labels.
    window : int, default 10
    time_index : array_like of int, shape (n,), optional
        Strictly increasing positions in time.

    Returns
    -------
    ndarray of bool, shape (w, k)
        ``k`` the number of distinct labels (relabelled ``0..k-1`` in increasing order).

    Examples
    --------
    >>> window_indicator([0, 0, 1, 1, 1, 2], 2).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    >>> window_indicator([0, 0, 1, 1, 1, 2], 2, time_index=[0, 1, 2, 7, 8, 9]).astype(int).tolist()
    [[1, 1, 0], [0, 1, 1]]
    """
    lab = V.check_labels(labels, "labels")
    window = V.check_int(window, "window", minimum=1)
    n = lab.shape[0]
    if window > n:
        raise ValueError(f"window ({window}) is larger than the sequence ({n} samples)")
    win = _window_of(n, window, _check_time_index(time_index, n))
    _, codes = np.unique(lab, return_inverse=True)
    k = int(codes.max()) + 1
    M = np.zeros((int(win.max()) + 1, k), bool)
    M[win, codes.reshape(-1)] = True
    return M


def _first_appearance(a: np.ndarray) -> np.ndarray:
    _, first, inv = np.unique(a, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inv.reshape(-1)]


def _meta_states(M: np.ndarray) -> np.ndarray:
    """Meta-cluster the rows of ``M`` (w, k): EAC of the k column indicators (co-association
    ``1 - Hamming / k``), average link with the lifetime criterion (k = 1 allowed); the
    states are numbered by first appearance."""
    if np.all(M == M[0]):
        return np.zeros(M.shape[0], np.int64)
    meta = linkage_consensus(M.T.astype(np.int64), "average", allow_k1=True).labels
    return _first_appearance(meta)


def _runs(states: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal runs ``(start, stop, state)`` (half-open) of equal consecutive values."""
    cut = np.flatnonzero(np.diff(states)) + 1
    starts = np.r_[0, cut]
    stops = np.r_[cut, states.shape[0]]
    return [(int(a), int(b), int(states[a])) for a, b in zip(starts, stops)]


def _is_unambiguous(states: np.ndarray) -> bool:
    runs = _runs(states)
    n_states = len({r[2] for r in runs})
    return n_states >= 2 and len(runs) == n_states


class TemporalStatesResult(NamedTuple):
    r"""Result of :func:`temporal_states`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        The majority state of every sample over the linkages (its window's meta-cluster,
        states numbered by first appearance; ties to the smallest).
    linkage_labels : ndarray of int64, shape (H, n)
        The consensus partition (lifetime criterion) of every linkage.
    indicators : tuple of H ndarrays of bool, shapes (w, k_h)
        The window-by-cluster indicator :math:`M_b` of every linkage (:func:`window_indicator`).
    window_states : ndarray of int64, shape (H, w)
        The meta-cluster (state) of every window under every linkage.
    states : tuple of (start, stop, state)
        The majority structure as contiguous runs of samples (half-open ``[start, stop)``).
    n_states : int
        Distinct states of the majority structure.
    unambiguous : bool
        More than half of the linkages give the same structure, it has at least two
        states, and every state occupies one contiguous run.
    majority : int
        How many linkages give the majority structure.
    linkages : tuple of str
    coassociation : ndarray of float64, shape (n, n)
        The time-ordered co-association of the ensemble (blocks = states).
    """

    labels: np.ndarray
    linkage_labels: np.ndarray
    indicators: tuple
    window_states: np.ndarray
    states: tuple
    n_states: int
    unambiguous: bool
    majority: int
    linkages: tuple
    coassociation: np.ndarray


def _structure(parts: np.ndarray, window: int, linkages: tuple, dense: np.ndarray,
               time_index: np.ndarray | None = None) -> TemporalStatesResult:
    n = parts.shape[1]
    ind = tuple(window_indicator(p, window, time_index) for p in parts)
    ws = np.stack([_meta_states(M) for M in ind])
    keys = [tuple(r.tolist()) for r in ws]
    best, count = Counter(keys).most_common(1)[0]
    best = np.asarray(best, np.int64)
    win = _window_of(n, window, time_index)
    per_sample = ws[:, win]  # (H, n)
    k = int(per_sample.max()) + 1
    votes = np.stack([(per_sample == s).sum(axis=0) for s in range(k)])
    labels = np.argmax(votes, axis=0).astype(np.int64)
    runs = tuple((int(np.flatnonzero(win == a)[0]), int(np.flatnonzero(win == b - 1)[-1]) + 1, s)
                 for a, b, s in _runs(best))
    unamb = bool(2 * count > len(linkages) and _is_unambiguous(best))
    return TemporalStatesResult(labels, parts.astype(np.int64), ind, ws, runs, len({r[2] for r in runs}),
                                unamb, int(count), linkages, dense)


def temporal_states(
    rng_key: Any,
    X_time_ordered: Any,
    *,
    window: int = 10,
    ensemble: Any = None,
    linkages: Any = DEFAULT_LINKAGES,
    n_clusters: Any = range(2, 7),
    sigmas: Any = None,
    methods: Any = SPECTRAL_METHODS,
    time_index: Any = None,
) -> TemporalStatesResult:
    r"""States of a time-ordered sequence by evidence accumulation (Medina & Fred, Algorithm 1).

    1. A spectral ensemble of the samples: NJW and Shi-Malik spectral clustering for every
       K in ``n_clusters`` and Gaussian scale :math:`\sigma` in ``sigmas``
       (:func:`~bayesclust.inference.consensus.ensembles.spectral_grid_ensemble`; default 2 x 5 x 28
       = 280 partitions), or the given ``ensemble``.
    2. EAC: the co-association :math:`C_{ij}` and, for every linkage, the consensus
       partition at the largest lifetime
       (:func:`~bayesclust.inference.consensus.linkage.linkage_consensus`): H partitions.
    3. For every partition, the window-by-cluster indicator :math:`M_b \in \{0,1\}^{w\times k}`
       of ``w = n // window`` adjacent windows (:func:`window_indicator`); its rows are
       meta-clustered by EAC (the k columns are binary partitions of the windows, so the
       co-association of two windows is :math:`1 - \text{Hamming}/k`; average link,
       lifetime criterion with one meta-cluster allowed), and a state is a maximal run of
       consecutive windows in one meta-cluster.  States made of one cluster and states made
       of a unique combination of clusters are both found this way.
    4. The structure is the one found by the majority of the linkages; it is unambiguous
       when a strict majority agree, it has at least two states, and every state occupies
       one contiguous run.

    The paper identifies the meta-clusters by looking at a picture of :math:`M_b`; steps 3-4
    automate that visual step (docs/deviations.md#temporal-automated-states).

    Parameters
    ----------
    rng_key : jax.random key or int
    X_time_ordered : array_like, shape (n, d)
        Samples in time order; at least two windows (``n >= 2 * window``), finite.
    window : int, default 10
        Samples per window (Table 1).
    ensemble : array_like of int, shape (m, n), optional
        Partitions to accumulate instead of the spectral ensemble.
    linkages : tuple of str, default ("single", "complete", "average", "ward", "centroid")
    n_clusters, sigmas, methods
        The spectral grid (defaults: K in 2..6, :math:`\sigma` in 0.3..3.0 by 0.1, both
        algorithms: Table 1).
    time_index : array_like of int, shape (n,), optional
        The samples' positions in time when some were removed (``DenoiseResult.kept``):
        no window straddles a gap (:func:`window_indicator`).

    Returns
    -------
    TemporalStatesResult

    References
    ----------
    Medina and A. Fred, SIMBAD deliverable D2.3, temporal study, Algorithm 1 and Table 1.

    Examples
    --------
    >>> from bayesclust.datasets import temporal_states as make
    >>> X, y = make(0, "DS1", 60)
    >>> res = temporal_states(0, X, n_clusters=[2, 3], sigmas=[0.5, 1.0])
    >>> res.unambiguous, res.states
    (True, ((0, 30, 0), (30, 60, 1)))
    """
    X, window = _check_sequence(X_time_ordered, window)
    linkages = _check_linkages(linkages)
    n = X.shape[0]
    time_index = _check_time_index(time_index, n)
    if ensemble is None:
        ks, sig, methods = _check_grid(n_clusters, sigmas, methods)
        if max(ks) > n:
            raise ValueError(f"n_clusters must be at most the number of samples {n}, got {max(ks)}")
        parts, dense = _consensus(rng_key, X, ks, sig, methods, linkages, None)
    else:
        labels = V.check_ensemble(ensemble, "ensemble")
        if labels.shape[1] != n:
            raise ValueError(f"ensemble labels {labels.shape[1]} objects but X_time_ordered has {n} samples")
        parts, dense = _linkage_parts(labels, linkages)
    return _structure(parts, window, linkages, dense, time_index)


# ---------------------------------------------------------------------------
# GA denoising (Algorithm 2)
# ---------------------------------------------------------------------------


def _equal_partitions(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to a permutation of the labels (ARI = 1)."""
    pairs = np.unique(np.c_[a, b], axis=0).shape[0]
    return pairs == np.unique(a).shape[0] == np.unique(b).shape[0]


def _fitness_terms(parts: np.ndarray, n_before: int, distinct_dominant: bool) -> tuple[float, float]:
    r""":math:`F_1` and :math:`F_2` of the H partitions (H, m) of the kept samples, the first
    ``n_before`` of which are segment A (before the block), the rest segment B."""
    H, m = parts.shape
    pairs = [(i, j) for i in range(H) for j in range(i + 1, H)]
    f1 = float(np.mean([_equal_partitions(parts[i], parts[j]) for i, j in pairs])) if pairs else 1.0
    f2 = 0.0
    for p in parts:
        A, B = p[:n_before], p[n_before:]
        ca, cb = np.bincount(A), np.bincount(B)
        da, db = int(np.argmax(ca)), int(np.argmax(cb))
        out = (A.size - ca[da]) + (B.size if (distinct_dominant and da == db) else B.size - cb[db])
        f2 += (m - out) / m
    return f1, f2 / H


class DenoiseState(NamedTuple):
    r"""State of :func:`denoise_sequence` (host code).

    Attributes
    ----------
    population : ndarray of int64, shape (M, 2)
        The individuals: removed blocks ``(l_min, l_max)``, 1-based and inclusive,
        :math:`1 \le l_{min} \le l_{max} \le n`.
    fitness : ndarray of float64, shape (M,)
    objective : float
        The best fitness of the population (maximised).
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        The best fitness after every generation (entry 0: the initial population).
    n_iter : int
        Generations run.
    converged : bool
        An individual reached the fitness threshold.
    n_evaluations : int
        Distinct blocks evaluated so far (the cache's size).
    rng : numpy.random.Generator
        The search's generator (a step works on a copy).
    problem : object
        The prepared problem (data, parameters, the fitness cache by block), shared by
        the states of one search.
    """

    population: np.ndarray
    fitness: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_evaluations: int
    rng: Any = None
    problem: Any = None


class DenoiseInfo(NamedTuple):
    """What one :func:`denoise_step` did: ``objective`` (best fitness after it), ``changed``
    (whether the population changed) and the new distinct evaluations."""

    objective: float
    changed: bool
    new_evaluations: int


class DenoiseResult(NamedTuple):
    r"""Result of :func:`denoise_sequence`.

    Attributes
    ----------
    kept : ndarray of int64, shape (n_kept,)
        Indices of the samples kept (time order).
    block : tuple of int
        The removed block ``(l_min, l_max)``, 1-based and inclusive (samples
        ``l_min - 1 .. l_max - 1`` in 0-based indexing).
    removed : ndarray of bool, shape (n,)
    objective : float
        Fitness :math:`F = \alpha F_1 + (1 - \alpha) F_2` of the block (maximised).
    f1, f2 : float
        Its two terms.
    objective_trace : ndarray of float64, shape (n_iter + 1,)
        The best fitness of the population, entry 0 for the initial population; the
        fitness trace of the search.
    n_iter : int
        Generations run.
    converged : bool
        The fitness reached ``threshold`` (the search stopped early).
    n_evaluations : int
        Distinct blocks evaluated (fitness evaluations, each cached by block).
    """

    kept: np.ndarray
    block: tuple
    removed: np.ndarray
    objective: float
    f1: float
    f2: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_evaluations: int


class _Problem:
    """The prepared problem of the GA: data, parameters and the fitness cache (by block)."""

    def __init__(self, key, X, window, alpha, linkages, ks, sigmas, methods, distinct_dominant):
        self.key, self.X, self.window, self.alpha = key, X, window, alpha
        self.linkages, self.ks, self.sigmas, self.methods = linkages, ks, sigmas, methods
        self.distinct_dominant = distinct_dominant
        self.cache: dict[tuple[int, int], tuple[float, float, float]] = {}

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def terms(self, lo: int, hi: int) -> tuple[float, float, float]:
        """``(F, F1, F2)`` of removing samples ``lo..hi`` (1-based, inclusive), cached."""
        key = (int(lo), int(hi))
        if key not in self.cache:
            n_a, n_b = lo - 1, self.n - hi
            if n_a < self.window or n_b < self.window:
                # Segments A and B need one window each to define two states.
                self.cache[key] = (0.0, 0.0, 0.0)
            else:
                keep = np.r_[0:lo - 1, hi:self.n]
                parts, _ = _consensus(self.key, self.X[keep], self.ks, self.sigmas, self.methods,
                                      self.linkages, self.n)
                f1, f2 = _fitness_terms(parts, n_a, self.distinct_dominant)
                self.cache[key] = (self.alpha * f1 + (1 - self.alpha) * f2, f1, f2)
        return self.cache[key]

    def fitness(self, pop: np.ndarray) -> np.ndarray:
        return np.array([self.terms(lo, hi)[0] for lo, hi in pop])


def _random_blocks(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """``size`` uniform random blocks: two uniform points of ``1..n``, sorted."""
    return np.sort(rng.integers(1, n + 1, size=(size, 2)), axis=1)


def _tournament(rng: np.random.Generator, fitness: np.ndarray, size: int = 2) -> int:
    """Deterministic tournament: the fittest of ``size`` individuals drawn uniformly (first on ties)."""
    idx = rng.integers(0, fitness.shape[0], size=size)
    return int(idx[np.argmax(fitness[idx])])


def _recombine(rng: np.random.Generator, p1: np.ndarray, p2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two children; each ``l_min`` uniform between the parents' ``l_min`` (inclusive), each
    ``l_max`` between their ``l_max``, then sorted so that ``l_min <= l_max``."""
    lo = sorted((int(p1[0]), int(p2[0])))
    hi = sorted((int(p1[1]), int(p2[1])))
    kids = []
    for _ in range(2):
        a, b = int(rng.integers(lo[0], lo[1] + 1)), int(rng.integers(hi[0], hi[1] + 1))
        kids.append(np.array(sorted((a, b)), np.int64))
    return kids[0], kids[1]


def _mutate(rng: np.random.Generator, ind: np.ndarray, n: int, max_mutation: int) -> np.ndarray:
    r"""Add or subtract (equiprobably, each bound on its own) :math:`n_{mut} \sim U\{0..max\}` to
    ``l_min`` and ``l_max``, clipped and sorted so that :math:`1 \le l_{min} \le l_{max} \le n`."""
    step = rng.integers(0, max_mutation + 1, size=2) * np.where(rng.random(2) < 0.5, -1, 1)
    return np.sort(np.clip(ind + step, 1, n)).astype(np.int64)


def init_denoise_state(
    rng_key: Any,
    X_time_ordered: Any,
    *,
    population: int = 20,
    window: int = 10,
    alpha: float = 0.1,
    linkages: Any = DEFAULT_LINKAGES,
    n_clusters: Any = range(2, 7),
    sigmas: Any = None,
    methods: Any = SPECTRAL_METHODS,
    distinct_dominant: bool = True,
    threshold: float = 0.95,
) -> DenoiseState:
    """The random initial population of :func:`denoise_sequence`, evaluated (see there)."""
    X, window = _check_sequence(X_time_ordered, window)
    population = V.check_int(population, "population", minimum=2)
    alpha = V.check_probability(alpha, "alpha")
    threshold = V.check_probability(threshold, "threshold")
    linkages = _check_linkages(linkages)
    ks, sig, methods = _check_grid(n_clusters, sigmas, methods)
    n = X.shape[0]
    if max(ks) > n - 2 * window:
        raise ValueError(f"n_clusters must be at most {n - 2 * window} (the fewest samples an individual keeps), "
                         f"got {max(ks)}")
    key = V.as_rng_key(rng_key)
    rng = V.as_numpy_rng(key)
    prob = _Problem(key, X, window, alpha, linkages, ks, sig, methods, bool(distinct_dominant))
    pop = _random_blocks(rng, population, n)
    f = prob.fitness(pop)
    return DenoiseState(pop, f, float(f.max()), np.asarray([f.max()]), 0, bool(f.max() >= threshold),
                       len(prob.cache), rng, prob)


def denoise_step(
    state: DenoiseState,
    *,
    threshold: float = 0.95,
    p_recombination: float = 0.9,
    p_mutation: float = 0.1,
    max_mutation: int = 5,
) -> tuple[DenoiseState, DenoiseInfo]:
    """One generation of :func:`denoise_sequence` (see there); the input state is not modified."""
    prob = state.problem
    rng = copy.deepcopy(state.rng)  # the input state keeps its generator
    before = len(prob.cache)
    pop, f = state.population, state.fitness
    M = pop.shape[0]
    children = []
    while len(children) < M:
        p1, p2 = pop[_tournament(rng, f)], pop[_tournament(rng, f)]
        c1, c2 = _recombine(rng, p1, p2) if rng.random() < p_recombination else (p1.copy(), p2.copy())
        for c in (c1, c2):
            if rng.random() < p_mutation:
                c = _mutate(rng, c, prob.n, max_mutation)
            children.append(c)
    children = np.stack(children[:M])
    fc = prob.fitness(children)
    # Elitist replacement: the best of the parents survives if no child beats it.
    best = int(np.argmax(f))
    if fc.max() < f[best]:
        worst = int(np.argmin(fc))
        children[worst], fc[worst] = pop[best], f[best]
    obj = float(fc.max())
    new = DenoiseState(children, fc, obj, np.r_[state.objective_trace, obj], state.n_iter + 1,
                       bool(obj >= threshold), len(prob.cache), rng, prob)
    return new, DenoiseInfo(obj, not np.array_equal(children, pop), len(prob.cache) - before)


def denoise_sequence(
    rng_key: Any,
    X_time_ordered: Any,
    *,
    population: int = 20,
    generations: int = 20,
    threshold: float = 0.95,
    alpha: float = 0.1,
    p_recombination: float = 0.9,
    p_mutation: float = 0.1,
    max_mutation: int = 5,
    window: int = 10,
    linkages: Any = DEFAULT_LINKAGES,
    n_clusters: Any = range(2, 7),
    sigmas: Any = None,
    methods: Any = SPECTRAL_METHODS,
    distinct_dominant: bool = True,
) -> DenoiseResult:
    r"""Remove the noisy stretch between states: a genetic search for one contiguous block.

    Medina & Fred's Algorithm 2 (SIMBAD deliverable D2.3, temporal study; Table 1's
    parameters are the defaults).  An individual removes the block
    :math:`[l_{min}, l_{max}]` (1-based, inclusive) from the sequence.  Its fitness: the
    spectral ensemble of the kept samples (as :func:`temporal_states`), EAC, the H
    lifetime partitions of the linkages, and

    .. math::

        F_1 = \binom H2^{-1} \sum_{i<j} I(P_i, P_j), \qquad
        F_2 = \frac1H \sum_h \frac{n_{samples} - n_{outliers,h}}{n_{samples}}, \qquad
        F = \alpha F_1 + (1 - \alpha) F_2,

    :math:`I = 1` iff two partitions are equal up to relabelling (ARI = 1); the kept
    samples before the block are segment A, those after it segment B, and the outliers of
    a segment are its samples outside its dominant label.  With ``distinct_dominant`` all
    of B counts as outliers when A and B have the same dominant label (else one cluster
    over everything scores :math:`F_2 = 1`).  An individual whose A or B holds fewer than
    ``window`` samples has fitness 0.  Fitness evaluations are cached by block.

    Each generation: pairs of parents by deterministic tournaments of two; with
    probability ``p_recombination`` each child's :math:`l_{min}` is uniform between the
    parents' :math:`l_{min}` and its :math:`l_{max}` between theirs; with probability
    ``p_mutation`` a child's bounds each move by :math:`\pm n_{mut}`,
    :math:`n_{mut} \sim U\{0..\text{max\_mutation}\}`, kept in
    :math:`1 \le l_{min} \le l_{max} \le n`; the children replace the population, the
    best parent surviving in place of the worst child if no child beats it.  The search
    stops as soon as an individual reaches ``threshold``, else after ``generations``.
    Our resolutions of what the paper leaves open (one block, tournaments of two,
    equality as ARI = 1, ``distinct_dominant``, elitism, the minimal segments):
    docs/deviations.md#temporal-ga.

    Parameters
    ----------
    rng_key : jax.random key or int
    X_time_ordered : array_like, shape (n, d)
        Samples in time order, finite, ``n >= 2 * window``.
    population : int, default 20
        M, at least 2.
    generations : int, default 20
        G, at least 0.
    threshold : float in [0, 1], default 0.95
    alpha : float in [0, 1], default 0.1
    p_recombination, p_mutation : float in [0, 1], defaults 0.9 and 0.1
    max_mutation : int, default 5
        At least 0.
    window : int, default 10
        The minimal segments A and B (and :func:`temporal_states`' window).
    linkages, n_clusters, sigmas, methods
        As :func:`temporal_states`.
    distinct_dominant : bool, default True

    Returns
    -------
    DenoiseResult
        ``kept, block, removed, objective, f1, f2, objective_trace, n_iter, converged,
        n_evaluations``; ``objective`` is maximised.

    References
    ----------
    Medina and A. Fred, SIMBAD deliverable D2.3, temporal study, Algorithm 2 and Table 1.

    Examples
    --------
    >>> from bayesclust.datasets import temporal_states as make
    >>> X, y = make(0, "DS1", 60)
    >>> res = denoise_sequence(0, X, population=4, generations=2, n_clusters=[2], sigmas=[1.0])
    >>> res.kept.size + int(res.removed.sum()) == 60, len(res.objective_trace) == res.n_iter + 1
    (True, True)
    """
    generations = V.check_int(generations, "generations", minimum=0)
    threshold = V.check_probability(threshold, "threshold")
    p_recombination = V.check_probability(p_recombination, "p_recombination")
    p_mutation = V.check_probability(p_mutation, "p_mutation")
    max_mutation = V.check_int(max_mutation, "max_mutation", minimum=0)
    state = init_denoise_state(rng_key, X_time_ordered, population=population, window=window, alpha=alpha,
                               linkages=linkages, n_clusters=n_clusters, sigmas=sigmas, methods=methods,
                               distinct_dominant=distinct_dominant, threshold=threshold)
    while not state.converged and state.n_iter < generations:
        state, _ = denoise_step(state, threshold=threshold, p_recombination=p_recombination,
                                p_mutation=p_mutation, max_mutation=max_mutation)
    prob = state.problem
    top = int(np.argmax(state.fitness))
    lo, hi = (int(v) for v in state.population[top])
    F, f1, f2 = prob.terms(lo, hi)
    removed = np.zeros(prob.n, bool)
    removed[lo - 1:hi] = True
    return DenoiseResult(np.flatnonzero(~removed), (lo, hi), removed, F, f1, f2, state.objective_trace,
                         state.n_iter, state.converged, state.n_evaluations)
