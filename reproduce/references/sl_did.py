r"""SL-DID, SL-AGLO and the G-DID cut, written from the papers (a second, independent derivation).

Aidos & Fred (2011), "Hierarchical clustering with high order dissimilarities", MLDM 2011, LNCS
6871 (appended to the SIMBAD deliverable D2.3), as a plain and slow NumPy loop:

* §2, eq. (1): the dissimilarity increment of a triplet of nearest neighbours,
  :math:`d_{inc}(x_i,x_j,x_k)=|d(x_i,x_j)-d(x_j,x_k)|`, :math:`x_j` the nearest neighbour of
  :math:`x_i`, :math:`x_k` the nearest neighbour of :math:`x_j` other than :math:`x_i`; the
  increments of a cluster use neighbours inside the cluster, one triplet per point
  (``increments``).  The *gap* of :math:`C_i` with respect to :math:`C_j`: the same equation on
  the triplet made of the closest cross pair :math:`x_i\in C_i`, :math:`x_j\in C_j` and
  :math:`x_k`, the nearest neighbour of :math:`x_i` in :math:`C_i`; read as
  :math:`|d(x_i,x_j)-d(x_i,x_k)|`, the cluster's own step against the step across (``gap``;
  Fred & Leitão 2003 define it so).
* §2.1, eq. (6): the 2-DID, the law of increments of a cluster with mean increment
  :math:`\lambda` (``did_logpdf``, evaluated with the scaled complementary error function so
  that far tails do not underflow).
* §3.1, Table 1: SL-DID (``sl_did``).  Single-link order over pairs not yet tested; both
  clusters under 6 points: merge; one under 6: merge iff its mean increment is below 7 times the
  other's; both of 6 or more: freeze a cluster whose gap lies in the tail of its DID, else merge
  iff :math:`DL(C_i\cup C_j)\le DL(C_i)+DL(C_j)`; stop when every pair has been tested.
* §3.2, eq. (7): the description length
  :math:`DL(C)=\tfrac12(1-\log 12)+\log\lambda+\tfrac12\log I(\lambda)-\log p(W|\lambda)` with the
  expected Fisher information of the 2-DID, :math:`I(\lambda)=m\,c/\lambda^2` for :math:`m`
  increments (``fisher_constant`` computes :math:`c` by quadrature).
* §4.2, eq. (9): the G-DID index :math:`-\log\hat f(P)+\tfrac{k_P}2\log n` with :math:`n` the
  number of increments (``gdid``), used to cut single and average link and to choose SL-AGLO's
  isolation parameter.  The probabilistic attributed graph of Fred & Jain (2008) is not in the
  papers; :math:`\hat f(P)` here is the product, over clusters, of each cluster's DID likelihood
  of its increments.
* §4.3: SL-AGLO (Fred & Leitão 2003) as the paper describes it: single-link order, each cluster's
  increments modelled by an exponential of mean :math:`\mu`, a cluster is isolated (frozen) when
  its gap exceeds the isolation threshold :math:`\tau\mu`, :math:`\tau` from 1 to 10 chosen by
  G-DID (``sl_aglo``).

Not in the papers, chosen here and varied by ``--variants``: how ties in distance are ordered
(``ties="ids"``: the pair of smallest cluster ids first, clusters numbered in creation order;
``"points"``: by the clusters' smallest points), what "the tail" of the gap test is (``tail=7``:
gap above 7 mean increments, as the small-cluster rule), what the increments of a cluster under
3 points are (``small_inc="none"``: it has none, so nothing is in the tail; ``"gap"``: its gap;
``"union"``: its points' increments inside the union), whether a mean increment is floored at
the data's smallest positive increment (``floor``), and how repeated points (distance 0) are
treated.  Both gaps of a pair are taken on one closest cross pair (smallest points on ties).  A cluster made only of repeated points has :math:`\lambda=0`, where the
DID is degenerate.  The papers define increments on a *set* of patterns, which has no repeated
elements: ``duplicates="set"`` clusters the distinct rows and gives every copy its row's label;
``duplicates="keep"`` clusters the rows as given.

``python -m reproduce.references.sl_did`` prints the report's SL-DID, G-DID and SL-AGLO numbers on
iris and MASS biopsy (raw features, as the report's rows), and over random row orders, the spread
that the ties leave.
"""

from __future__ import annotations

import argparse
import heapq

import numpy as np
from scipy import integrate, special
from scipy.cluster.hierarchy import linkage
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

BETA = 2.0 - np.sqrt(2.0)
SMALL = 6  # §3.1: "the minimum number of points that allows us to compute a rough estimate of the DID"
TAIL = 7.0  # §3.1: "smaller than 7 times the mean of the increments"

# --------------------------------------------------------------------------- §2.1 the 2-DID


def did_logpdf(w, lam: float) -> np.ndarray:
    r"""Eq. (6), log of the 2-DID density at increments ``w`` (any shape) for mean ``lam > 0``.

    With :math:`a=\pi\beta^2/(4\lambda^2)`, :math:`\beta=2-\sqrt2`, the density is
    :math:`a w e^{-aw^2}+K(1/a-w^2)e^{-aw^2/2}\mathrm{erfc}(w\sqrt{a/2})`,
    :math:`K=\pi^2\beta^3/(8\sqrt2\lambda^3)`; :math:`e^{-aw^2/2}\mathrm{erfc}(u)=e^{-aw^2}\mathrm{erfcx}(u)`
    with :math:`u=w\sqrt{a/2}`, so :math:`\log p=-aw^2+\log(aw+K(1/a-w^2)\mathrm{erfcx}(u))`.
    """
    w = np.asarray(w, dtype=float)
    a = np.pi * BETA**2 / (4.0 * lam**2)
    K = np.pi**2 * BETA**3 / (8.0 * np.sqrt(2.0) * lam**3)
    u = w * np.sqrt(a / 2.0)
    bracket = a * w + K * (1.0 / a - w**2) * special.erfcx(u)
    return -a * w**2 + np.log(bracket)


def did_pdf_direct(w, lam: float) -> np.ndarray:
    """Eq. (6) term by term, as printed (underflows in the far tail; for checking ``did_logpdf``)."""
    w = np.asarray(w, dtype=float)
    a = np.pi * BETA**2 / (4.0 * lam**2)
    K = np.pi**2 * BETA**3 / (8.0 * np.sqrt(2.0) * lam**3)
    return a * w * np.exp(-a * w**2) + K * (4 * lam**2 / (np.pi * BETA**2) - w**2) * np.exp(
        -a * w**2 / 2) * special.erfc(np.sqrt(np.pi) * BETA / (2 * np.sqrt(2) * lam) * w)


def did_tail(x: float, lam: float) -> float:
    """P(w > x) under the 2-DID of mean ``lam`` (quadrature)."""
    return integrate.quad(lambda t: np.exp(did_logpdf(t, lam)), x, np.inf)[0]


def fisher_constant() -> float:
    r"""c in :math:`I(\lambda)=c/\lambda^2` per increment: :math:`E[(\partial_\lambda\log p)^2]` at λ = 1."""
    h = 1e-5

    def score(w):
        return (did_logpdf(w, 1.0 + h) - did_logpdf(w, 1.0 - h)) / (2 * h)

    return integrate.quad(lambda w: score(w) ** 2 * np.exp(did_logpdf(w, 1.0)), 0, 60, limit=200)[0]


C_FISHER = fisher_constant()

# --------------------------------------------------------------------------- §2 increments and gaps


def increments(D: np.ndarray) -> np.ndarray:
    """Eq. (1) for every point of a cluster, neighbours inside the cluster.

    ``D``: (m, m) distance matrix of the cluster's points.  Returns (m,) increments, one triplet per
    point (``x_i``, its nearest neighbour ``x_j``, the nearest neighbour ``x_k != x_i`` of ``x_j``);
    empty under 3 points.  Ties: the lowest index.
    """
    m = len(D)
    if m < 3:
        return np.zeros(0)
    out = np.empty(m)
    for i in range(m):
        row = D[i].copy()
        row[i] = np.inf
        j = int(np.argmin(row))
        row_j = D[j].copy()
        row_j[j] = np.inf
        row_j[i] = np.inf
        k = int(np.argmin(row_j))
        out[i] = abs(D[i, j] - D[j, k])
    return out


def closest_pair(D_all: np.ndarray, Ci: np.ndarray, Cj: np.ndarray) -> tuple[int, int]:
    """The closest cross pair ``(x_i in Ci, x_j in Cj)``; ties to the smallest ``x_i``, then ``x_j``
    (members are kept sorted)."""
    cross = D_all[np.ix_(Ci, Cj)]
    a, b = np.unravel_index(int(np.argmin(cross)), cross.shape)
    return int(Ci[a]), int(Cj[b])


def gaps(D_all: np.ndarray, Ci: np.ndarray, Cj: np.ndarray, literal: bool = False) -> tuple[float, float]:
    """The gaps of ``Ci`` w.r.t. ``Cj`` and of ``Cj`` w.r.t. ``Ci`` (§2), on one closest pair.

    ``gap_i = |d(x_i, x_j) - d(x_i, x_k)|``, ``x_k`` the nearest neighbour of ``x_i`` in ``Ci``
    (``literal=True``: ``|d(x_i, x_j) - d(x_j, x_k)|``); ``gap_j`` likewise from ``x_j``.
    """
    xi, xj = closest_pair(D_all, Ci, Cj)
    out = []
    for p, q, C in ((xi, xj, Ci), (xj, xi, Cj)):
        within = D_all[p, C].copy()
        within[C == p] = np.inf
        xk = C[int(np.argmin(within))]
        out.append(abs(D_all[p, q] - (D_all[q, xk] if literal else D_all[p, xk])))
    return out[0], out[1]


def gap(D_all: np.ndarray, Ci: np.ndarray, Cj: np.ndarray, literal: bool = False) -> float:
    """The gap of ``Ci`` with respect to ``Cj`` (:func:`gaps`)."""
    return gaps(D_all, Ci, Cj, literal)[0]


# --------------------------------------------------------------------------- §3.2 MDL


def description_length(W: np.ndarray, floor: float = 0.0) -> float:
    r"""Eq. (7) with :math:`\hat\lambda` = the mean increment and :math:`I(\lambda)=mc/\lambda^2`.

    :math:`\log\lambda+\tfrac12\log(mc/\lambda^2)=\tfrac12\log(mc)`.  Written out term by term.
    """
    m = len(W)
    lam = max(float(np.mean(W)), floor)
    if lam <= 0.0:
        return np.nan  # the DID is degenerate (a cluster of repeated points); handled by the caller
    fisher = m * C_FISHER / lam**2
    return 0.5 * (1.0 - np.log(12.0)) + np.log(lam) + 0.5 * np.log(fisher) - float(np.sum(did_logpdf(W, lam)))


# --------------------------------------------------------------------------- §3.1 SL-DID (and §4.3 SL-AGLO)


class _Clusters:
    """Clusters as point-index arrays with cached increments; ids in creation order."""

    def __init__(self, D: np.ndarray):
        self.D = D
        self.members = {i: np.array([i]) for i in range(len(D))}
        self._inc: dict[int, np.ndarray] = {}
        self.next_id = len(D)

    def inc(self, c: int) -> np.ndarray:
        if c not in self._inc:
            idx = self.members[c]
            self._inc[c] = increments(self.D[np.ix_(idx, idx)])
        return self._inc[c]

    def merge(self, a: int, b: int) -> int:
        new = self.next_id
        self.next_id += 1
        self.members[new] = np.sort(np.concatenate([self.members.pop(a), self.members.pop(b)]))
        self._inc.pop(a, None)
        self._inc.pop(b, None)
        return new


def _single_link_loop(D: np.ndarray, decide, ties: str = "ids", trace: list | None = None) -> np.ndarray:
    """Single-link order over pairs of live, unfrozen clusters not yet tested (Table 1).

    ``decide(clusters, a, b) -> ("merge" | "keep" | "freeze", frozen_id)``.  Pairs are popped from
    a heap by (single-link distance, smaller id, larger id); a merge makes a new id whose
    distances to the live clusters are the minima of its parts', so every pair is tested once.
    ``ties="points"``: equal distances ordered by (the smaller of the two clusters' smallest
    points, the smallest point of the other cluster at that distance) instead, and the pair
    handed to ``decide`` as (cluster of the smaller point, other); else (older, newer).
    Returns the labels 0..K-1 (in order of each cluster's smallest point index).
    """
    n = len(D)
    cl = _Clusters(D)
    frozen: set[int] = set()
    dist = {i: D[i].copy() for i in range(n)}  # single-link distance rows, indexed by point for live ids
    live_dist: dict[int, dict[int, float]] = {i: {} for i in range(n)}
    heap = []
    for i in range(n):
        for j in range(i + 1, n):
            heap.append((D[i, j], i, j, i, j) if ties == "points" else (D[i, j], i, j))
            live_dist[i][j] = live_dist.setdefault(j, {})[i] = D[i, j]
    heapq.heapify(heap)
    del dist
    while heap:
        d, *_, a, b = heapq.heappop(heap)
        if a not in cl.members or b not in cl.members or a in frozen or b in frozen:
            continue
        if ties == "points" and cl.members[b].min() < cl.members[a].min():
            a, b = b, a  # C_i of Table 1 is the cluster of the smaller point
        action, who = decide(cl, a, b)
        if trace is not None:
            trace.append((action, min(cl.members[a].min(), cl.members[b].min()),
                          max(cl.members[a].min(), cl.members[b].min()), d))
        if action == "freeze":
            frozen.add(who)
        elif action == "merge":
            row_a, row_b = live_dist.pop(a), live_dist.pop(b)
            new = cl.merge(a, b)
            live_dist[new] = {}
            for c in list(row_a):
                if c == b or c not in cl.members:
                    continue
                dc = min(row_a[c], row_b[c])
                live_dist[new][c] = dc
                live_dist[c][new] = dc
                live_dist[c].pop(a, None)
                live_dist[c].pop(b, None)
                if c not in frozen:
                    if ties == "points":
                        mn, mc = cl.members[new], cl.members[c]
                        lo, other = (mn, mc) if mn.min() < mc.min() else (mc, mn)
                        q = int(other[D[np.ix_(lo, other)].min(axis=0) == dc].min())
                        heapq.heappush(heap, (dc, int(lo.min()), q, c, new))
                    else:
                        heapq.heappush(heap, (dc, c, new))
    labels = np.empty(n, dtype=int)
    for k, idx in enumerate(sorted(cl.members.values(), key=lambda m: m.min())):
        labels[idx] = k
    return labels


def sl_did_decision(cl: _Clusters, a: int, b: int, *, tail: float = TAIL, small: int = SMALL,
                    small_inc: str = "none", gap_literal: bool = False, floor: float = 0.0):
    """One test of Table 1 for the pair ``(a, b)``.

    ``small_inc``: the increments of a cluster under 3 points -- ``"none"`` (nothing in the
    tail: merge), ``"gap"`` (its gap towards the other) or ``"union"`` (its points' increments
    inside the union).  ``floor``: a lower bound on every mean increment (0: none; a cluster of
    repeated points then has lambda = 0, so anything beyond distance 0 is in its tail).
    """
    ma, mb = cl.members[a], cl.members[b]
    if len(ma) < small and len(mb) < small:
        return "merge", None
    if len(ma) < small or len(mb) < small:
        big, sm = (a, b) if len(ma) >= small else (b, a)
        lam_big = max(float(np.mean(cl.inc(big))), floor)
        W_sm = cl.inc(sm)
        if len(W_sm) == 0:
            if small_inc == "none":  # no increments: nothing lies in the tail
                return "merge", None
            if small_inc == "union":
                union = np.sort(np.concatenate([cl.members[big], cl.members[sm]]))
                W_sm = increments(cl.D[np.ix_(union, union)])[np.isin(union, cl.members[sm])]
            else:
                W_sm = np.array([gap(cl.D, cl.members[sm], cl.members[big], gap_literal)])
        return ("keep", None) if np.mean(W_sm) > tail * lam_big else ("merge", None)
    Wa, Wb = cl.inc(a), cl.inc(b)
    la, lb = max(float(np.mean(Wa)), floor), max(float(np.mean(Wb)), floor)
    ga, gb = gaps(cl.D, ma, mb, gap_literal)
    if ga > tail * la:
        return "freeze", a
    if gb > tail * lb:
        return "freeze", b
    union = np.sort(np.concatenate([ma, mb]))
    Wu = increments(cl.D[np.ix_(union, union)])
    dl_u, dl_a, dl_b = (description_length(Wu, floor), description_length(Wa, floor),
                        description_length(Wb, floor))
    if np.isnan(dl_u) or np.isnan(dl_a) or np.isnan(dl_b):
        return ("merge", None) if np.mean(Wu) == 0.0 else ("keep", None)
    return ("merge", None) if dl_u <= dl_a + dl_b else ("keep", None)


def smallest_positive_increment(D: np.ndarray) -> float:
    """The smallest positive increment of all the points (the ``floor`` option)."""
    w = increments(D)
    return float(w[w > 0].min())


def sl_did(X: np.ndarray, *, duplicates: str = "keep", ties: str = "ids", floor: bool = False,
           **kw) -> np.ndarray:
    """SL-DID (Aidos & Fred 2011, §3.1, Table 1) on the rows of ``X`` (n, d); returns (n,) labels.

    ``floor=True``: every mean increment at least the smallest positive increment of the data.
    """
    def run(D):
        f = smallest_positive_increment(D) if floor else 0.0
        return _single_link_loop(D, lambda cl, a, b: sl_did_decision(cl, a, b, floor=f, **kw), ties)

    return _on_rows(X, duplicates, run)


def sl_aglo_decision(cl: _Clusters, a: int, b: int, *, tau: float, small: int = 3, gap_literal: bool = False,
                     floor: float = 0.0):
    """SL-AGLO's test (Fred & Leitão 2003 as summarised in Aidos & Fred 2011, §4.3).

    A cluster of at least ``small`` points is isolated (frozen) when its gap exceeds ``tau`` times
    its mean increment (the exponential's mean); clusters with too few points to have increments
    cannot be isolated; merge when neither is.
    """
    g2 = gaps(cl.D, cl.members[a], cl.members[b], gap_literal)
    for c, g in ((a, g2[0]), (b, g2[1])):
        if len(cl.members[c]) >= small:
            mu = max(float(np.mean(cl.inc(c))), floor)
            if g >= tau * mu and not (mu == 0.0 and g == 0.0):
                return "freeze", c
    return "merge", None


def sl_aglo(X: np.ndarray, tau: float, *, duplicates: str = "keep", ties: str = "ids", floor: bool = False,
            **kw) -> np.ndarray:
    """SL-AGLO with isolation parameter ``tau`` (multiples of a cluster's mean increment)."""
    def run(D):
        f = smallest_positive_increment(D) if floor else 0.0
        return _single_link_loop(D, lambda cl, a, b: sl_aglo_decision(cl, a, b, tau=tau, floor=f, **kw), ties)

    return _on_rows(X, duplicates, run)


def _on_rows(X: np.ndarray, duplicates: str, cluster) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if duplicates == "set":
        U, inverse = np.unique(X, axis=0, return_inverse=True)
        return cluster(cdist(U, U))[inverse.ravel()]
    if duplicates != "keep":
        raise ValueError(f"duplicates must be 'keep' or 'set', got {duplicates!r}")
    return cluster(cdist(X, X))


# --------------------------------------------------------------------------- §4.2 G-DID


def gdid(X: np.ndarray, labels: np.ndarray, model: str = "did") -> float:
    r"""Eq. (9): :math:`-\log\hat f(P)+\tfrac{k_P}2\log n`, :math:`n` = the number of increments.

    :math:`-\log\hat f(P)=-\sum_k\sum_{w\in W_k}\log p(w;\hat\lambda_k)`, ``model`` the 2-DID
    (``"did"``) or the exponential (``"exp"``, Fred & Jain 2008); clusters under 3 points have no
    increments, a cluster of repeated points (:math:`\hat\lambda=0`) contributes 0.
    """
    D = cdist(X, X)
    nll, n_inc = 0.0, 0
    ks = np.unique(labels)
    for k in ks:
        idx = np.flatnonzero(labels == k)
        W = increments(D[np.ix_(idx, idx)])
        n_inc += len(W)
        if len(W) == 0 or np.mean(W) == 0.0:
            continue
        lam = float(np.mean(W))
        nll -= float(np.sum(did_logpdf(W, lam) if model == "did" else -np.log(lam) - W / lam))
    return nll + 0.5 * len(ks) * np.log(max(n_inc, 1))


def cut_at(Z: np.ndarray, n: int, k: int) -> np.ndarray:
    """The partition with ``k`` clusters: the first ``n - k`` merges of the linkage ``Z``."""
    parent = list(range(2 * n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for t in range(n - k):
        a, b = int(Z[t, 0]), int(Z[t, 1])
        parent[find(a)] = n + t
        parent[find(b)] = n + t
    roots = [find(i) for i in range(n)]
    _, lab = np.unique(roots, return_inverse=True)
    return lab


def gdid_cut(X: np.ndarray, method: str, k_max: int = 20, model: str = "did") -> tuple[int, np.ndarray, list[float]]:
    """Cut the ``method`` linkage of ``X`` at the k in 1..k_max of least G-DID (§4.2)."""
    Z = linkage(X, method=method)
    n = len(X)
    scores, parts = [], []
    for k in range(1, k_max + 1):
        lab = cut_at(Z, n, k)
        parts.append(lab)
        scores.append(gdid(X, lab, model))
    best = int(np.argmin(scores))
    return best + 1, parts[best], scores


def sl_aglo_gdid(X: np.ndarray, taus=tuple(range(1, 11)), model: str = "did", **kw):
    """SL-AGLO for each ``tau``, the partition of least G-DID (§4.3); returns (tau, labels, scores)."""
    scores, parts = [], []
    for t in taus:
        lab = sl_aglo(X, t, **kw)
        parts.append(lab)
        scores.append(gdid(X, lab, model))
    best = int(np.argmin(scores))
    return taus[best], parts[best], scores


# --------------------------------------------------------------------------- §4.3 scores


def contingency(truth: np.ndarray, labels: np.ndarray) -> np.ndarray:
    _, t = np.unique(truth, return_inverse=True)
    _, c = np.unique(labels, return_inverse=True)
    M = np.zeros((c.max() + 1, t.max() + 1))
    np.add.at(M, (c.ravel(), t.ravel()), 1)
    return M


def consistency_index(truth, labels) -> float:
    """CI: the share of points in clusters matched one-to-one to classes (optimal matching)."""
    M = contingency(truth, labels)
    r, c = linear_sum_assignment(-M)
    return float(M[r, c].sum() / M.sum())


def ci_star(truth, labels) -> float:
    """CI*: classes as unions of clusters, each cluster used for one class (its majority class)."""
    M = contingency(truth, labels)
    return float(M.max(axis=1).sum() / M.sum())


# --------------------------------------------------------------------------- script


def _load(name):
    from bayesclust import datasets

    X, y = datasets.load(name)
    return np.asarray(X, float), np.asarray(y)


def _summary(v) -> str:
    v = np.asarray(v, float)
    return f"median {np.median(v):.4g} (min-max {v.min():.4g}-{v.max():.4g}; n = {len(v)})"


def variants(name: str) -> None:
    """What the papers leave open, each a number: SL-DID's choices, G-DID's range and model."""
    X, y = _load(name)

    def show(tag, lab):
        print(f"{name}: {tag}: K = {lab.max() + 1}, CI = {consistency_index(y, lab):.4f}, CI* = {ci_star(y, lab):.4f}")

    for dup in ("keep", "set"):
        for small_inc in ("none", "gap"):
            for tail in (7.0, 5.0, 3.0):
                for lit in (False, True):
                    show(f"SL-DID duplicates={dup} small_inc={small_inc} tail={tail} gap_literal={lit}",
                         sl_did(X, duplicates=dup, small_inc=small_inc, tail=tail, gap_literal=lit))
    for method in ("single", "average"):
        for model in ("did", "exp"):
            for k_max in (10, 20, 30):
                k, lab, _ = gdid_cut(X, method, k_max=k_max, model=model)
                show(f"{method} link by G-DID model={model} k_max={k_max}", lab)
    for model in ("did", "exp"):
        for dup in ("keep", "set"):
            tau, lab, _ = sl_aglo_gdid(X, taus=tuple(np.arange(1.0, 10.5, 0.5)), model=model, duplicates=dup)
            show(f"SL-AGLO tau in 1..10 step .5 by G-DID model={model} duplicates={dup}: tau = {tau}", lab)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=0, help="also run on this many random row orders")
    ap.add_argument("--variants", action="store_true", help="the protocol's unstated choices")
    args = ap.parse_args(argv)
    if args.variants:
        for name in ("iris", "biopsy"):
            variants(name)
        return
    print(f"Fisher constant c = {C_FISHER:.7f}")
    for name in ("biopsy", "iris"):
        X, y = _load(name)
        lab = sl_did(X)
        print(f"{name}: SL-DID K = {lab.max() + 1}, CI = {consistency_index(y, lab):.4f}, "
              f"CI* = {ci_star(y, lab):.4f}")
        for method in ("single", "average"):
            k, lab, _ = gdid_cut(X, method)
            print(f"{name}: {method} link cut by G-DID (k <= 20): K = {k}, CI = {consistency_index(y, lab):.4f}")
        tau, lab, _ = sl_aglo_gdid(X)
        print(f"{name}: SL-AGLO tau = {tau} by G-DID: K = {lab.max() + 1}, CI = {consistency_index(y, lab):.4f}, "
              f"CI* = {ci_star(y, lab):.4f}")
        if args.orders:
            ks, cis = [], []
            for s in range(args.orders):
                p = np.random.default_rng(s).permutation(len(X))
                lab = sl_did(X[p])
                ks.append(lab.max() + 1)
                cis.append(consistency_index(y[p], lab))
            print(f"{name}: SL-DID over {args.orders} row orders: K {_summary(ks)}; CI {_summary(cis)}")


if __name__ == "__main__":
    main()
