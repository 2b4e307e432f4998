"""Bayes point estimates of a partition from posterior draws.

The posterior of a mixture is a distribution over partitions; its summary is the
partition that minimises the posterior expected loss (Binder's or the variation
of information), searched over the draws, the cuts of the average-linkage tree of
the posterior similarity matrix, and a greedy local search (Dahl 2006; Fritsch &
Ickstadt 2009; Wade & Ghahramani 2018).  The losses themselves, and their
expectations under a set of draws, are evaluation code in :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_int
from ...metrics.losses import (
    DrawColumns,
    canonical_rows,
    check_label_draws,
    check_psm,
    co_clustering_matrix,
    vi_lower_bounds,
    xlogx,
)
from ._common import _evenly

__all__ = ["partition_point_estimate", "draws_point_estimate", "GREEDY_MAX_N", "GREEDY_MAX_DRAWS"]

_POINT_ESTIMATE_LOSSES = ("binder", "vi")
_MAX_HCLUST_CUTS = 30

#: Largest number of points at which :meth:`bayesclust.Posterior.point_estimate` (and so
#: the estimators' ``labels_``) searches with the ``n x n`` co-clustering matrix by default
#: (:func:`partition_point_estimate`: 32 MB and about a second at this size); above it the
#: default is :func:`draws_point_estimate`, linear in ``n``.
GREEDY_MAX_N = 2000

#: Largest number of draws :meth:`bayesclust.Posterior.point_estimate` hands to
#: :func:`partition_point_estimate` (whose local search costs ``O(n S k)`` per sweep);
#: more are thinned evenly.
GREEDY_MAX_DRAWS = 1000

#: Elements of the label arrays a chunk of :func:`draws_point_estimate` touches at once.
_CHUNK = 1 << 22


def _binder_same_sums(C: np.ndarray, W: np.ndarray) -> np.ndarray:
    """For each compacted row c of C: sum over pairs i<j with c_i = c_j of W_ij (W zero diag)."""
    m, n = C.shape
    out = np.zeros(m)
    batch = max(1, 4096 // max(1, int(C.max()) + 1))
    for start in range(0, m, batch):
        block = C[start : start + batch]
        k = int(block.max()) + 1
        cols = (block + k * np.arange(block.shape[0])[:, None]).ravel()
        Z = np.zeros((n, block.shape[0] * k))
        Z[np.tile(np.arange(n), block.shape[0]), cols] = 1.0
        quad = np.sum(Z * (W @ Z), axis=0) / 2.0  # per (candidate, cluster)
        out[start : start + block.shape[0]] = quad.reshape(block.shape[0], k).sum(axis=1)
    return out


def _hclust_cuts(P: np.ndarray, max_k: int) -> np.ndarray:
    """Cuts of the average-linkage tree of the distance 1 - P into 1..max_k clusters."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    n = P.shape[0]
    if n < 2:
        return np.zeros((1, n), dtype=np.int64)
    D = 1.0 - (P + P.T) / 2.0
    np.fill_diagonal(D, 0.0)
    Z = linkage(squareform(np.clip(D, 0.0, None), checks=False), method="average")
    return np.stack(
        [fcluster(Z, t=k, criterion="maxclust") for k in range(1, max_k + 1)]
    ).astype(np.int64)


class _LocalSearch:
    """Greedy local search over partitions (Dahl 2006; Wade & Ghahramani 2018, §3.2):
    sweeps of single-point moves (to another cluster or, out of a cluster of two or
    more, to a new one), each sweep followed by merges of pairs of clusters, until a
    sweep and its merges change nothing or ``max_sweeps``.

    The labels ``c`` and the cluster ``sizes`` are kept here, with at least one empty
    slot (the new cluster); a loss supplies the best move of a point (:meth:`move`) and
    the best merge (:meth:`merge`), keeping its own statistics per slot, and grows them
    with :meth:`_grow` when the empty slot is used up.
    """

    def __init__(self, c: np.ndarray, tol: float):
        self.c = c.copy()
        self.sizes = np.bincount(self.c, minlength=int(self.c.max()) + 2)
        self.tol = tol

    def run(self, max_sweeps: int) -> np.ndarray:
        for _ in range(max_sweeps):
            changed = False
            for i in range(self.c.shape[0]):
                changed |= self.move(i)
            while self.merge():
                changed = True
            if not changed:
                break
        return self.c

    def _moved(self, i: int, a: int, k: int) -> None:
        """Point ``i`` went from cluster ``a`` to ``k``: labels, sizes, an empty slot."""
        self.sizes[a] -= 1
        self.sizes[k] += 1
        self.c[i] = k
        if not np.any(self.sizes == 0):
            self._grow()
            self.sizes = np.append(self.sizes, 0)

    def _merged(self, a: int, b: int) -> None:
        """Cluster ``b`` joined cluster ``a``: labels and sizes."""
        self.sizes[a] += self.sizes[b]
        self.sizes[b] = 0
        self.c[self.c == b] = a

    def move(self, i: int) -> bool:
        raise NotImplementedError

    def merge(self) -> bool:
        raise NotImplementedError

    def _grow(self) -> None:
        raise NotImplementedError


class _BinderSearch(_LocalSearch):
    """Local search on ``sum_{i<j, c_i=c_j} W_ij``; ``S[i, k] = sum_{j in cluster k} W_ij``."""

    def __init__(self, c: np.ndarray, W: np.ndarray, tol: float):
        super().__init__(c, tol)
        n = self.c.shape[0]
        Z = np.zeros((n, self.sizes.shape[0] - 1))
        Z[np.arange(n), self.c] = 1.0
        self.W = W
        self.S = np.concatenate([W @ Z, np.zeros((n, 1))], axis=1)

    def move(self, i: int) -> bool:
        S, sizes = self.S, self.sizes
        a = self.c[i]
        cand = S[i].copy()
        empty = np.flatnonzero(sizes == 0)
        cand[sizes == 0] = np.inf
        if empty.size and sizes[a] > 1:
            cand[empty[0]] = 0.0  # a new cluster: no pairs
        cand[a] = np.inf
        k = int(np.argmin(cand))
        if not cand[k] - S[i, a] < -self.tol:
            return False
        S[:, a] -= self.W[:, i]
        S[:, k] += self.W[:, i]
        self._moved(i, a, k)
        if self.sizes[a] == 0:
            self.S[:, a] = 0.0  # drop accumulated round-off
        return True

    def _grow(self) -> None:
        self.S = np.concatenate([self.S, np.zeros((self.S.shape[0], 1))], axis=1)

    def merge(self) -> bool:
        # M[a, b] = sum_{i in a, j in b} W_ij is the change of merging a and b
        S = self.S
        used = np.flatnonzero(self.sizes > 0)
        if used.size < 2:
            return False
        Zu = (self.c[:, None] == used[None, :]).astype(np.float64)
        M = Zu.T @ S[:, used]
        np.fill_diagonal(M, np.inf)
        a_idx, b_idx = np.unravel_index(int(np.argmin(M)), M.shape)
        if not M[a_idx, b_idx] < -self.tol:
            return False
        a, b = used[a_idx], used[b_idx]
        S[:, a] += S[:, b]
        S[:, b] = 0.0
        self._merged(a, b)
        return True


class _VISearch(_LocalSearch):
    """Local search on the exact draw-averaged VI; ``N[k, t]``: points of cluster ``k`` in
    the draw cluster ``t`` (a column of :class:`~bayesclust.metrics.losses.DrawColumns`)."""

    def __init__(self, c: np.ndarray, dc: DrawColumns, tol: float):
        super().__init__(c, tol)
        self.dc = dc
        self.N = np.zeros((self.sizes.shape[0], dc.T), dtype=np.int64)
        np.add.at(self.N, (np.repeat(self.c, dc.S), dc.cols.T.ravel()), 1)
        self.gplus = dc.fx[1:] - dc.fx[:-1]  # gplus[x] = f(x+1) - f(x)

    def move(self, i: int) -> bool:
        n, S = self.dc.n, self.dc.S
        gplus, sizes = self.gplus, self.sizes
        a = self.c[i]
        t = self.dc.cols[:, i]
        Nt = self.N[:, t]  # (K, S)
        # removing i from a:  f(x-1) - f(x) = -gplus[x-1]
        rem = -gplus[sizes[a] - 1] + 2.0 / S * np.sum(gplus[Nt[a] - 1])
        add = gplus[sizes] - 2.0 / S * np.sum(gplus[Nt], axis=1)
        delta = (add + rem) / n
        delta[a] = np.inf
        empty = sizes == 0
        if empty.any():
            first_empty = int(np.argmax(empty))
            delta[empty] = np.inf
            if sizes[a] > 1:
                delta[first_empty] = rem / n  # adding to an empty cluster costs 0
        kk = int(np.argmin(delta))
        if not delta[kk] < -self.tol:
            return False
        self.N[a, t] -= 1
        self.N[kk, t] += 1
        self._moved(i, a, kk)
        return True

    def _grow(self) -> None:
        self.N = np.vstack([self.N, np.zeros((1, self.dc.T), dtype=np.int64)])

    def merge(self) -> bool:
        n, S, fx = self.dc.n, self.dc.S, self.dc.fx
        N, sizes = self.N, self.sizes
        used = np.flatnonzero(sizes > 0)
        best, pair = np.inf, None
        for ai, a in enumerate(used[:-1]):
            nz = np.flatnonzero(N[a])
            others = used[ai + 1 :]
            Na = N[a, nz][None, :]
            Nb = N[np.ix_(others, nz)]
            joint = (fx[Na + Nb] - fx[Na] - fx[Nb]).sum(axis=1)
            da = fx[sizes[a] + sizes[others]] - fx[sizes[a]] - fx[sizes[others]]
            delta = (da - 2.0 / S * joint) / n
            j = int(np.argmin(delta))
            if delta[j] < best:
                best, pair = float(delta[j]), (a, others[j])
        if pair is None or not best < -self.tol:
            return False
        a, b = pair
        N[a] += N[b]
        N[b] = 0
        self._merged(a, b)
        return True


def _greedy_binder(c: np.ndarray, W: np.ndarray, max_sweeps: int, tol: float) -> np.ndarray:
    """Local search on sum_{i<j, c_i=c_j} W_ij until no move decreases it by more than ``tol``."""
    return _BinderSearch(c, W, tol).run(max_sweeps)


def _greedy_vi(c: np.ndarray, dc: DrawColumns, max_sweeps: int, tol: float) -> np.ndarray:
    """Local search on the exact draw-averaged VI until no move decreases it by more than ``tol``."""
    return _VISearch(c, dc, tol).run(max_sweeps)


def partition_point_estimate(
    label_draws: Any,
    loss: str = "binder",
    psm: Any = None,
    candidates: Any = None,
    greedy: bool = True,
    *,
    max_iter: int = 100,
    max_vi_candidates: int = 256,
) -> np.ndarray:
    """Bayes point estimate of a partition: minimise the posterior expected loss.

    Parameters
    ----------
    label_draws : array_like of int, shape (S, n)
        Posterior draws of the partition (any integer ids per draw; label switching is
        irrelevant).
    loss : {"binder", "vi"}, default "binder"
        ``"binder"``: expected Binder loss (equal costs), :func:`expected_binder_loss`,
        computed from ``psm``.  ``"vi"``: expected variation of information,
        :func:`expected_vi_loss`, computed exactly on the draws.
    psm : array_like, shape (n, n), optional
        Posterior similarity matrix; computed from the draws when omitted.  With
        ``loss="binder"`` it defines the loss; with ``loss="vi"`` it is only used for the
        hierarchical-clustering candidates and to rank candidates.
    candidates : array_like of int, shape (m, n), optional
        Extra candidate partitions, considered in addition to the default ones.
    greedy : bool, default True
        Refine the best candidate by local search.
    max_iter : int, default 100
        Cap on the number of local-search sweeps (each accepted move strictly decreases the
        loss, so the search stops by itself long before in practice).
    max_vi_candidates : int, default 256
        With ``loss="vi"``, when there are more distinct candidates than this, only the
        ``max_vi_candidates`` with the smallest :func:`vi_lower_bound` are evaluated
        exactly (ours: exact evaluation costs :math:`O(nS)` per candidate).

    Returns
    -------
    ndarray of int64, shape (n,)
        The estimate :math:`\\hat c = \\arg\\min_{\\hat c} \\mathbb E[L(\\hat c, c) \\mid X]`
        over the searched set, labelled ``0..k-1`` in order of first appearance.

    Notes
    -----
    Candidates: the distinct draws (Dahl's 2006 "best draw" method), the cuts into
    :math:`k = 1, \\dots, \\min(n, 30)` clusters of the average-linkage tree of the
    distance :math:`1 - p_{ij}` (Fritsch & Ickstadt 2009; Wade & Ghahramani 2018 -- used for
    both losses, ours for VI), and ``candidates``.  The best one (ties: the first, draws in
    order before cuts) starts a greedy local search in the spirit of Wade & Ghahramani's
    greedy algorithm: sweeps over the points move each point to the cluster (or a new
    cluster) that decreases the loss most, alternating with merges of two clusters, until
    nothing improves.

    * Binder: :math:`\\mathbb E[L] \\propto \\sum_{i<j} p_{ij} + \\sum_{i<j,\\,\\hat c_i =
      \\hat c_j} (1 - 2 p_{ij})`; the sums :math:`\\sum_{j \\in k} (1 - 2p_{ij})` are kept
      for every point and cluster, so a sweep costs :math:`O(n^2)`.
    * VI: the joint counts of :math:`\\hat c` with every draw are kept, so a sweep costs
      :math:`O(n S k)`; moves are evaluated on the exact draw average, not the bound.

    The search is a local one: for larger n the result is a local optimum that is never
    worse than the best candidate.  The result is invariant to relabelling the draws.

    References
    ----------
    D. B. Dahl, "Model-based clustering for expression data via a Dirichlet process mixture
    model", in *Bayesian Inference for Gene Expression and Proteomics*, CUP (2006).
    A. Fritsch and K. Ickstadt, "Improved criteria for clustering based on the posterior
    similarity matrix", Bayesian Analysis 4(2) (2009) 367-391.
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 2]]
    >>> partition_point_estimate(draws)
    array([0, 0, 1, 1])
    """
    draws = check_label_draws(label_draws)
    if loss not in _POINT_ESTIMATE_LOSSES:
        raise ValueError(f"loss must be one of {_POINT_ESTIMATE_LOSSES}, got {loss!r}")
    if not isinstance(greedy, (bool, np.bool_)):
        raise TypeError(f"greedy must be a bool, got {greedy!r}")
    max_sweeps = check_int(max_iter, "max_iter", minimum=0)
    max_vi_candidates = check_int(max_vi_candidates, "max_vi_candidates", minimum=1)
    S, n = draws.shape
    P = co_clustering_matrix(draws) if psm is None else check_psm(psm, n)

    pool = [draws, _hclust_cuts(P, min(n, _MAX_HCLUST_CUTS))]
    if candidates is not None:
        extra = check_label_draws(candidates, "candidates")
        if extra.shape[1] != n:
            raise ValueError(
                f"candidates must have {n} columns (one per point), got shape {extra.shape}"
            )
        pool.append(extra)
    C = canonical_rows(np.concatenate(pool, axis=0))
    _, first = np.unique(C, axis=0, return_index=True)
    C = C[np.sort(first)]  # distinct candidates, in order of first appearance

    W = 1.0 - 2.0 * P
    np.fill_diagonal(W, 0.0)
    if loss == "binder":
        best = C[int(np.argmin(_binder_same_sums(C, W)))]
        if greedy:
            best = _greedy_binder(best, W, max_sweeps, tol=1e-9)
    else:
        if C.shape[0] > max_vi_candidates:
            order = np.argsort(vi_lower_bounds(C, P), kind="stable")
            C = C[np.sort(order[:max_vi_candidates])]
        dc = DrawColumns(draws)
        best = C[int(np.argmin([dc.expected_vi(row) for row in C]))]
        if greedy:
            best = _greedy_vi(best, dc, max_sweeps, tol=1e-12)
    return canonical_rows(best[None, :])[0]


def _canonical_chunks(draws: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``canonical_rows(draws[rows])`` computed a few rows at a time (its temporaries are
    several times the size of its input), as int32."""
    n = draws.shape[1]
    step = max(1, _CHUNK // max(n, 1))
    out = np.empty((rows.shape[0], n), dtype=np.int32)
    for start in range(0, rows.shape[0], step):
        out[start : start + step] = canonical_rows(draws[rows[start : start + step]])
    return out


def _row_hashes(draws: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every draw's partition (label permutations hash alike)."""
    n = draws.shape[1]
    weights = np.random.default_rng(0).integers(1, np.iinfo(np.int64).max, n, dtype=np.int64)
    step = max(1, _CHUNK // max(n, 1))
    out = np.empty(draws.shape[0], dtype=np.int64)
    with np.errstate(over="ignore"):
        for start in range(0, draws.shape[0], step):
            block = canonical_rows(draws[start : start + step]) + 1
            out[start : start + step] = (block * weights).sum(axis=1)  # wraps modulo 2^64
    return out


def draws_point_estimate(
    label_draws: Any,
    loss: str = "binder",
    *,
    max_candidates: int = 50,
    max_draws: int = 500,
) -> np.ndarray:
    """Bayes point estimate of a partition among the draws, linear in ``n``.

    The draw with the smallest posterior expected loss (Dahl's 2006 "best draw"
    method), the expectation computed from the contingency tables of the candidate
    with the draws -- never from the ``n x n`` co-clustering matrix, so memory and time
    are linear in the number of points ``n``.

    Parameters
    ----------
    label_draws : array_like of int, shape (S, n)
        Posterior draws of the partition (any integer ids per draw).
    loss : {"binder", "vi"}, default "binder"
        Expected Binder loss (:func:`bayesclust.metrics.expected_binder_loss`) or
        expected variation of information (:func:`bayesclust.metrics.expected_vi_loss`).
    max_candidates : int, default 50
        The distinct draws among ``4 * max_candidates`` draws spread evenly over all of
        them are the candidates; when there are more, this many, spread evenly, are
        evaluated.
    max_draws : int, default 500
        The expectation is taken over this many draws spread evenly over all of them
        (all when there are fewer).

    Returns
    -------
    ndarray of int64, shape (n,)
        The candidate with the smallest expected loss (ties: the first), labelled
        ``0..k-1`` in order of first appearance.

    Notes
    -----
    With :math:`N_{kt}` the number of points in cluster :math:`k` of the candidate
    :math:`\\hat c` and cluster :math:`t` of a draw :math:`c`, :math:`a_k` and
    :math:`b_t` the cluster sizes, both losses are
    :math:`\\sum_k f(a_k) + \\sum_t f(b_t) - 2 \\sum_{k,t} f(N_{kt})`, up to a constant
    factor: :math:`f(x) = \\binom{x}{2}` for Binder's loss (the number of pairs on which
    the two partitions disagree) and :math:`f(x) = x \\log x` for VI (times
    :math:`1/n`).  One ``bincount`` over the draws gives every :math:`N_{kt}` of a
    candidate, :math:`O(n S)`; the whole search costs :math:`O(n S m)` for :math:`m`
    candidates and :math:`S` draws, with memory for a few draws at a time beside the
    candidates (the draws are read where they are, never copied whole).  Unlike
    :func:`partition_point_estimate` there is no local search: the result is the best
    draw, which for large ``n`` (where the posterior of a mixture is concentrated) is
    close to the optimum.

    References
    ----------
    D. B. Dahl (2006), in *Bayesian Inference for Gene Expression and Proteomics*, CUP.
    S. Wade and Z. Ghahramani (2018), Bayesian Analysis 13(2), 559-626, §2-3.

    Examples
    --------
    >>> draws_point_estimate([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 2]])
    array([0, 0, 1, 1])
    """
    draws = check_label_draws(label_draws)
    if loss not in _POINT_ESTIMATE_LOSSES:
        raise ValueError(f"loss must be one of {_POINT_ESTIMATE_LOSSES}, got {loss!r}")
    max_candidates = check_int(max_candidates, "max_candidates", minimum=1)
    max_draws = check_int(max_draws, "max_draws", minimum=1)
    S, n = draws.shape
    # Candidates: the distinct draws among 4 * max_candidates spread evenly over all of
    # them (canonicalising every one of S draws of n points would cost O(S n log n)).
    pool = _evenly(S, 4 * max_candidates)
    _, first = np.unique(_row_hashes(draws[pool]), return_index=True)
    distinct = pool[np.sort(first)]
    cand = _canonical_chunks(draws, distinct[_evenly(distinct.shape[0], max_candidates)])
    x = np.arange(n + 1, dtype=np.float64)
    f = x * (x - 1.0) / 2.0 if loss == "binder" else xlogx(x)
    evaluated = _evenly(S, max_draws)
    m = evaluated.shape[0]
    # sum over the evaluated draws of sum_t f(b_t), and per candidate of sum_{k,t} f(N_kt),
    # accumulated a few draws at a time (the draws' int64 columns would be m x n at once).
    b_sum, joint_sum = 0.0, np.zeros(cand.shape[0])
    step = max(1, _CHUNK // max(n, 1))
    for start in range(0, m, step):
        ev = _canonical_chunks(draws, evaluated[start : start + step]).astype(np.int64)
        sizes = ev.max(axis=1) + 1
        ev += np.concatenate([[0], np.cumsum(sizes)[:-1]])[:, None]  # a column per (draw, cluster)
        T = int(sizes.sum())
        b_sum += float(f[np.bincount(ev.ravel(), minlength=T)].sum())
        for j, c in enumerate(cand):
            k = int(c.max()) + 1
            joint = np.bincount((c.astype(np.int64)[None, :] * T + ev).ravel(), minlength=k * T)
            joint_sum[j] += float(f[joint].sum())
    b_term = b_sum / m
    best, best_loss = 0, np.inf
    for j, c in enumerate(cand):
        k = int(c.max()) + 1
        value = float(f[np.bincount(c, minlength=k)].sum()) + b_term - 2.0 * joint_sum[j] / m
        # Ties (to rounding) keep the first candidate; the first one is always taken.
        if j == 0 or value < best_loss - 1e-9 * max(1.0, abs(best_loss)):
            best, best_loss = j, value
    return cand[best].astype(np.int64)
