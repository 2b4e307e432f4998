"""GMDID and KMDID: merge the clusters of an initial partition whose increments say they belong
together (Aidos & Fred 2012, §3; Aidos & Fred 2011 IbPRIA).

Start from many small clusters -- the components of a Gaussian mixture (:func:`~bayesclust.gmd`,
GMDID) or of k-means (KMDID) -- and visit pairs in increasing pooled-covariance Mahalanobis
distance; merge the first pair for which the 2-DID of the increments of the union explains them
as well as two separate laws, by the MDL criterion (parameter-free) or a likelihood-ratio test,
and restart; stop when no pair merges.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

from ... import _validation as V
from ._common import _gaussian, _gdid, _lam_floor, tree_log_likelihood

__all__ = ["GMDIDResult", "gmdid", "kmdid", "cluster_mahalanobis"]

CRITERIA = ("mdl", "lrt")
LRT_RULES = ("paper", "paper_literal")


class GMDIDResult(NamedTuple):
    """Result of :func:`gmdid` / :func:`kmdid`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        ``0..n_clusters-1`` in order of first appearance.
    n_clusters : int
    n_merges : int
    n_tests : int
        Pair tests evaluated (the cached ones counted once).
    initial_labels : ndarray of int64, shape (n,)
        The partition the merges started from.
    """

    labels: np.ndarray
    n_clusters: int
    n_merges: int
    n_tests: int
    initial_labels: np.ndarray


def cluster_mahalanobis(means, covariances) -> np.ndarray:
    r"""Squared Mahalanobis distances between clusters with the pooled covariance.

    .. math:: D_{ij} = (\mu_i - \mu_j)^\top \Big(\frac{\Sigma_i + \Sigma_j}{2}\Big)^{-1} (\mu_i - \mu_j)

    (docs/deviations.md#gmdid-mahalanobis).

    Parameters
    ----------
    means : array_like, shape (k, d)
    covariances : array_like, shape (k, d, d)
        Positive definite (regularise singular ones first).

    Returns
    -------
    ndarray of float64, shape (k, k)
        Symmetric, zero diagonal.

    Examples
    --------
    >>> float(cluster_mahalanobis(np.array([[0.0], [2.0]]), np.array([[[1.0]], [[3.0]]]))[0, 1])
    2.0
    """
    means = V.check_kernel_array(means, "means", ndim=2, min_rows=1)
    covariances = V.check_kernel_array(covariances, "covariances", ndim=3)
    k, d = means.shape
    if tuple(covariances.shape) != (k, d, d):
        raise ValueError(f"covariances must have shape ({k}, {d}, {d}) to match means, got "
                         f"{tuple(covariances.shape)}")
    mu = np.asarray(means, np.float64)
    cov = np.asarray(covariances, np.float64)
    diff = mu[:, None, :] - mu[None, :, :]
    pooled = 0.5 * (cov[:, None] + cov[None, :])
    sol = np.linalg.solve(pooled, diff[..., None])[..., 0]
    D = np.einsum("ijd,ijd->ij", diff, sol)
    np.fill_diagonal(D, 0.0)
    return 0.5 * (D + D.T)


class _Merger:
    """Clusters, their Gaussians and increments; pair decisions cached while both are unchanged."""

    def __init__(self, X, labels, floor, criterion, alpha, lrt_rule, cache):
        self.X, self.floor = X, floor
        self.criterion, self.alpha, self.lrt_rule = criterion, alpha, lrt_rule
        self.cache = cache
        self.rows = {int(c): np.flatnonzero(labels == c) for c in np.unique(labels)}
        self.gauss = {c: _gaussian(X[r]) for c, r in self.rows.items()}
        self.incs = {c: self._fit(r) for c, r in self.rows.items() if r.size >= 3}
        self.decided: dict[tuple, bool] = {}
        self.next_id = max(self.rows) + 1
        self.n_tests = 0

    def _fit(self, rows):
        return tree_log_likelihood(self.X[rows], self.floor)

    def distances(self):
        ids = sorted(self.rows)
        mu = np.array([self.gauss[c][0] for c in ids])
        cov = np.array([self.gauss[c][1] for c in ids])
        return ids, cluster_mahalanobis(mu, cov)

    def merge(self, a, b):
        new = self.next_id
        self.next_id += 1
        rows = np.sort(np.concatenate([self.rows.pop(a), self.rows.pop(b)]))
        self.rows[new] = rows
        self.gauss[new] = _gaussian(self.X[rows])
        for c in (a, b):
            self.gauss.pop(c)
            self.incs.pop(c, None)
        self.incs[new] = self._fit(rows)
        if not self.cache:  # the literal reading: every cluster's increments afresh
            self.incs = {c: self._fit(r) for c, r in self.rows.items() if r.size >= 3}
            self.decided.clear()
        return new

    def statistic(self, a, b) -> tuple[float, float]:
        """``(DL^1, DL^2)`` for ``"mdl"``, ``(Lambda, chi2_1 cdf of Lambda)`` for ``"lrt"``."""
        (la, ma), (lb, mb) = self.incs[a], self.incs[b]
        lu, mu = self._fit(np.concatenate([self.rows[a], self.rows[b]]))
        if self.criterion == "mdl":
            # DL^k = -log-likelihood + k/2 log|M_k|
            return -lu + 0.5 * np.log(mu), -(la + lb) + np.log(ma + mb)
        stat = max(0.0, 2.0 * (la + lb - lu))
        return stat, float(stats.chi2.cdf(stat, 1))

    def should_merge(self, a, b) -> bool:
        key = (min(a, b), max(a, b))
        if key not in self.decided:
            self.n_tests += 1
            first, second = self.statistic(a, b)
            if self.criterion == "mdl":
                verdict = first < second
            elif self.lrt_rule == "paper":
                verdict = 1.0 - second >= self.alpha
            else:
                verdict = second < self.alpha
            self.decided[key] = bool(verdict)
        return self.decided[key]


def gmdid(X, init_labels, *, criterion: str = "mdl", alpha: float = 0.05,
          lrt_rule: str = "paper", n_clusters_min: int = 1,
          cache: bool = True) -> GMDIDResult:
    r"""Merge an initial partition's clusters by their dissimilarity increments (GMDID).

    Repeatedly: order the pairs of clusters by their pooled-covariance Mahalanobis distance
    (:func:`cluster_mahalanobis`) and merge the first pair that passes the test, then start
    again; stop when no pair passes or ``n_clusters_min`` clusters remain (Aidos & Fred 2012,
    Table 1).  With :math:`W_i, W_j` the increments of the two clusters and :math:`W_{ij}`
    those of their union (recomputed on the union's points), each modelled by a 2-DID with its
    mean (floored at the smallest positive increment of the data).  A cluster's increments are
    its nearest-neighbour triplets and the bridge increments of its minimum spanning tree
    (:func:`~bayesclust.gdid_index`): triplets alone never cross the gap between two groups,
    so a union would look like its parts (docs/deviations.md#gmdid-union-increments).

    * ``"mdl"`` (eqs. 15-16): :math:`DL^k = -\sum_j\sum_{w\in W^{(j)}}\log p(w;\lambda_j) +
      \frac k2\log|M_k|`, merge iff :math:`DL^1 < DL^2` (:math:`|M_2| = |W_i| + |W_j|`,
      :math:`|M_1| = |W_{ij}|`);
    * ``"lrt"`` (eq. 14): :math:`\Lambda = 2[\ell(W_i) + \ell(W_j) - \ell(W_{ij})]`, clipped
      at 0; ``lrt_rule="paper"`` merges iff the :math:`\chi^2_1` p-value is at least ``alpha``
      (the two laws are not distinguishable), ``"paper_literal"`` iff
      :math:`F_{\chi^2_1}(\Lambda) <` ``alpha`` (docs/deviations.md#gmdid-lrt-direction).

    Clusters of fewer than 3 points (no increments) are first merged into their
    Mahalanobis-nearest cluster.

    Parameters
    ----------
    X : array_like, shape (n, d)
    init_labels : array_like of int, shape (n,)
        The initial partition (e.g. ``gmd(...).labels``).
    criterion : {"mdl", "lrt"}, default "mdl"
    alpha : float in (0, 1), default 0.05
        Significance level of ``"lrt"``.
    lrt_rule : {"paper", "paper_literal"}, default "paper"
    n_clusters_min : int, default 1
        Never merge below this many clusters (a known number of classes as a lower bound).
    cache : bool, default True
        Keep every unchanged cluster's increments and every decided pair across merges (only
        pairs with the merged cluster are tested again); ``False`` recomputes all of them
        after each merge, as the algorithm is written (the same partition, slower).

    Returns
    -------
    GMDIDResult

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for d-dimensional
    data: application in partitional clustering", Pattern Recognition 45 (2012), §3, Table 1;
    A. Aidos and A. Fred, "Gaussian mixture-based clustering with dissimilarity increments",
    IbPRIA 2011.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 8])
    >>> start = np.repeat(np.arange(8), 25)  # each blob cut in four
    >>> gmdid(X, start).n_clusters
    2
    """
    X = np.asarray(V.check_array(X, "X", min_samples=3), np.float64)
    labels = V.check_labels(init_labels, "init_labels", n_samples=X.shape[0])
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if lrt_rule not in LRT_RULES:
        raise ValueError(f"lrt_rule must be one of {LRT_RULES}, got {lrt_rule!r}")
    alpha = V.check_probability(alpha, "alpha", open_interval=True)
    n_clusters_min = V.check_int(n_clusters_min, "n_clusters_min", minimum=1)
    labels = np.unique(labels, return_inverse=True)[1]
    floor = _lam_floor(X)
    m = _Merger(X, labels, floor, criterion, alpha, lrt_rule, bool(cache))
    n_merges = 0
    # clusters too small for increments join their nearest neighbour first
    while len(m.rows) > max(1, n_clusters_min):
        small = [c for c, r in m.rows.items() if r.size < 3]
        if not small:
            break
        ids, D = m.distances()
        i = ids.index(small[0])
        D[i, i] = np.inf
        m.merge(small[0], ids[int(np.argmin(D[i]))])
        n_merges += 1
    while len(m.rows) > n_clusters_min and len(m.rows) > 1:
        ids, D = m.distances()
        iu, ju = np.triu_indices(len(ids), 1)
        order = np.lexsort((ju, iu, D[iu, ju]))
        for p in order:
            a, b = ids[iu[p]], ids[ju[p]]
            if a in m.incs and b in m.incs and m.should_merge(a, b):
                m.merge(a, b)
                n_merges += 1
                break
        else:
            break
    final = np.empty(X.shape[0], dtype=np.int64)
    for c, rows in m.rows.items():
        final[rows] = c
    final = _first_appearance(final)
    return GMDIDResult(final, int(final.max()) + 1, n_merges, m.n_tests, labels)


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def kmdid(rng_key, X, n_clusters_range, *, criterion: str = "mdl", n_init: int = 10,
          **gmdid_kwargs) -> GMDIDResult:
    r"""KMDID: GMDID started from k-means, the start chosen by the G-DID index.

    For every ``k`` in ``n_clusters_range`` the best of ``n_init`` k-means runs
    (:func:`bayesclust.inference.hard.kmeans.kmeans`, least sum of squares) is a candidate start; the
    candidate of smallest G-DID (:func:`~bayesclust.gdid_index`) is merged by :func:`gmdid`
    (Aidos & Fred 2012, §5: "k-means for several k, the best chosen by G-DID").

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    n_clusters_range : iterable of int
    criterion : {"mdl", "lrt"}, default "mdl"
    n_init : int, default 10
    **gmdid_kwargs
        Passed to :func:`gmdid`.

    Returns
    -------
    GMDIDResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 8])
    >>> kmdid(0, X, range(2, 9)).n_clusters
    2
    """
    import jax

    from ..hard.kmeans import kmeans

    X = np.asarray(V.check_array(X, "X", min_samples=3), np.float64)
    ks = sorted({V.check_int(k, "n_clusters_range", minimum=1) for k in n_clusters_range})
    if not ks or ks[-1] > X.shape[0]:
        raise ValueError(f"n_clusters_range must hold numbers in 1..{X.shape[0]}, got {ks}")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    key = V.as_rng_key(rng_key)
    floor = _lam_floor(X)
    starts, scores = [], []
    for k in ks:
        runs = [kmeans(sub, X, k) for sub in jax.random.split(jax.random.fold_in(key, k), n_init)]
        best = min(runs, key=lambda r: float(r.objective))
        labels = np.asarray(best.labels)
        starts.append(labels)
        scores.append(_gdid(X, labels, floor))
    start = starts[int(np.argmin(scores))]
    return gmdid(X, start, criterion=criterion, **gmdid_kwargs)
