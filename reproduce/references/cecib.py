r"""CEC-IB, cross-entropy clustering with an information-bottleneck constraint, from the paper.

Śmieja & Geiger (2017), "Semi-supervised cross-entropy clustering with information bottleneck
constraint", Information Sciences: a second, independent derivation of the package's CEC-IB, as
a plain and slow NumPy loop that recomputes every cluster's cost from its members (no rank-one
updates).

* §3.1, eq. (2): the Gaussian differential entropy of a cluster,
  :math:`H(\mathcal N(\mu_Y,\Sigma_Y))=\frac N2\ln(2\pi e)+\frac12\ln\det\Sigma_Y`, with the
  maximum-likelihood covariance (divide by :math:`|Y|`).
* §3.3, Def. 3.3, eqs. (5)-(10): partial labels enter only through
  :math:`H(\mathcal Z|Y\cap X_\ell)`, the entropy of the label histogram of the cluster's labelled
  members (0 when it has none), weighted by the cluster's whole mass :math:`|Y|/|X|`.
* §3.4, eq. (11): the cost of one cluster,
  :math:`E_\beta(Y)=\frac{|Y|}{|X|}\big(-\ln\frac{|Y|}{|X|}+H(\mathcal N(\mu_Y,\Sigma_Y))
  +\beta H(\mathcal Z|Y\cap X_\ell)\big)`, and the total :math:`E_\beta(\mathcal Y)=\sum_iE_\beta(Y_i)`.
* §3.4, the Hartigan algorithm (lines 1-24): a random partition into :math:`k` groups; passes
  over all points, each moved to the cluster of the largest cost decrease
  :math:`E(Y_x)+E(Y)-E(Y_x\setminus\{x\})-E(Y\cup\{x\})` (staying: a decrease of 0; a move only
  on a strictly positive decrease); after a move, a source cluster with
  :math:`|Y_x|<\varepsilon|X|` is deleted and its points are assigned, one by one, to the
  clusters whose cost they raise least; stop after a pass without a switch.  "The algorithm can
  be restarted multiple times": of several random partitions the lowest-cost end is kept.
* §5.2 and Table 2: :math:`k=2\times` the number of classes, labelled fractions 0/10/20/30 %,
  labels drawn at random with the true class; Table 2 gives the number of clusters left.

What the paper leaves open, and the choices made here (each an option, so that
``--variants`` can test whether it explains the Wine count):

* A cluster of :math:`|Y|\le N` points has a singular covariance and cost :math:`-\infty`, so
  :math:`\varepsilon|X|` alone cannot keep the algorithm defined when :math:`\varepsilon|X|\le N`
  (Wine: :math:`0.05\cdot178=8.9<13`).  Default: a cluster is deleted below
  :math:`n_{min}=\max(\lceil\varepsilon|X|\rceil,N+2)` points (``floor="N+2"``); ``"N+1"``
  deletes it only once its covariance would be singular; ``"none"`` keeps the paper's
  :math:`\varepsilon|X|` and forbids any move that would leave a singular cluster.
* The random partition: each point in a uniformly drawn group (``init="uniform"``), or a random
  split into groups of equal size (``"balanced"``).
* The order of the points in a pass: by index (``order="fixed"``) or a fresh random
  permutation per pass (``"shuffle"``).
* The restart kept: the lowest final cost (``select="cost"``).

``python -m reproduce.references.cecib`` prints the number of clusters left on Wine and Iris
(the report's ``cecib-t2-*`` rows: the same data and label draws), median and spread;
``--variants`` prints the Wine count under the other readings.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

LOG_2PI_E = math.log(2.0 * math.pi * math.e)


# --------------------------------------------------------------------------- §3.1-3.4 the cost


def gaussian_entropy(points: np.ndarray) -> float:
    """Eq. (2): :math:`\\frac N2\\ln(2\\pi e)+\\frac12\\ln\\det\\Sigma` of the points' ML Gaussian.

    ``points``: (n, N).  Returns ``-inf`` when the ML covariance is singular (``n <= N`` or
    degenerate points).
    """
    n, N = points.shape
    if n <= N:
        return -math.inf
    centred = points - points.mean(axis=0)
    cov = centred.T @ centred / n
    sign, logdet = np.linalg.slogdet(cov)
    if sign <= 0 or not np.isfinite(logdet):
        return -math.inf
    return 0.5 * N * LOG_2PI_E + 0.5 * logdet


def label_entropy(labels: np.ndarray) -> float:
    """:math:`H(\\mathcal Z|Y\\cap X_\\ell)`: the entropy (nats) of the labels ``>= 0`` among
    ``labels`` (``-1`` = unlabelled); 0 when none is labelled (eqs. 5-9)."""
    lab = labels[labels >= 0]
    if lab.size == 0:
        return 0.0
    _, counts = np.unique(lab, return_counts=True)
    q = counts / lab.size
    return float(-(q * np.log(q)).sum())


def cluster_cost(X: np.ndarray, z: np.ndarray, members: np.ndarray, beta: float) -> float:
    """Eq. (11): :math:`E_\\beta(Y)` of the cluster ``Y = X[members]`` (``z``: the side
    information of all points, ``-1`` = unlabelled).  An empty cluster costs 0."""
    members = np.asarray(members, dtype=int)
    if members.size == 0:
        return 0.0
    p = members.size / X.shape[0]
    return p * (-math.log(p) + gaussian_entropy(X[members]) + beta * label_entropy(z[members]))


def total_cost(X: np.ndarray, z: np.ndarray, assignment: np.ndarray, beta: float) -> float:
    """Eq. (10) = the sum of eq. (11) over the clusters of ``assignment`` (one label per point)."""
    return float(sum(cluster_cost(X, z, np.flatnonzero(assignment == c), beta) for c in np.unique(assignment)))


# --------------------------------------------------------------------------- §3.4 the algorithm


def min_cluster_size(n: int, N: int, eps: float, floor: str) -> int:
    """The smallest cluster kept: ``|Y| >= eps |X|`` (line 19), with the floor that keeps the
    covariance invertible (see the module's notes)."""
    base = math.ceil(eps * n - 1e-12)
    return {"N+2": max(base, N + 2), "N+1": max(base, N + 1), "none": base}[floor]


def random_partition(rng: np.random.Generator, n: int, k: int, init: str) -> np.ndarray:
    """Line 10: a random partition of the n points into k groups."""
    if init == "uniform":
        return rng.integers(0, k, size=n)
    if init == "balanced":
        return rng.permutation(np.arange(n) % k)
    raise ValueError(f"init must be 'uniform' or 'balanced', got {init!r}")


def best_move(X, z, assignment, i, beta, costs) -> tuple[int, float]:
    """Line 15: the cluster whose choice lowers the total cost most when point ``i`` goes there,
    and that decrease (0 for staying).  ``costs``: the current cost of each cluster."""
    a = assignment[i]
    src = np.flatnonzero(assignment == a)
    e_src_without = cluster_cost(X, z, src[src != i], beta)
    best, gain = a, 0.0
    for c in sorted(costs):
        if c == a:
            continue
        dst = np.flatnonzero(assignment == c)
        e_dst_with = cluster_cost(X, z, np.append(dst, i), beta)
        with np.errstate(invalid="ignore"):  # inf - inf: a singular cluster on both sides
            g = costs[a] + costs[c] - e_src_without - e_dst_with
        if np.isfinite(g) and g > gain + 1e-12:
            best, gain = c, g
    return best, gain


def reassign_deleted(X, z, assignment, members, beta, costs) -> None:
    """Line 20: the points of a deleted cluster, one by one (by index), each to the cluster
    whose cost it raises least; updates ``assignment`` and ``costs`` in place."""
    for i in members:
        incr = {}
        for c in sorted(costs):
            dst = np.flatnonzero(assignment == c)
            incr[c] = cluster_cost(X, z, np.append(dst, i), beta) - costs[c]
        c = min(incr, key=lambda c: (incr[c], c))
        assignment[i] = c
        costs[c] = cluster_cost(X, z, np.flatnonzero(assignment == c), beta)


def delete_small(X, z, assignment, costs, n_min, beta) -> None:
    """Clusters below ``n_min`` at the start (smallest first): deleted and reassigned."""
    while True:
        small = [c for c in sorted(costs) if (assignment == c).sum() < n_min]
        if not small or len(costs) == 1:
            return
        c = min(small, key=lambda c: ((assignment == c).sum(), c))
        members = np.flatnonzero(assignment == c)
        del costs[c]
        assignment[members] = -1
        reassign_deleted(X, z, assignment, members, beta, costs)


def hartigan(X: np.ndarray, z: np.ndarray, assignment: np.ndarray, *, beta: float = 1.0,
             eps: float = 0.05, floor: str = "N+2", order: str = "fixed",
             rng: np.random.Generator | None = None, max_passes: int = 200) -> dict:
    """Lines 11-24 from the partition ``assignment`` (n,): passes until none switches a point.

    Returns ``{"assignment", "n_clusters", "cost", "passes", "moves"}``.
    """
    n, N = X.shape
    assignment = np.asarray(assignment, dtype=int).copy()
    n_min = min_cluster_size(n, N, eps, floor)
    costs = {int(c): cluster_cost(X, z, np.flatnonzero(assignment == c), beta) for c in np.unique(assignment)}
    delete_small(X, z, assignment, costs, n_min, beta)
    passes = moves = 0
    switched = True
    while switched and passes < max_passes:
        passes += 1
        switched = False
        idx = rng.permutation(n) if order == "shuffle" else np.arange(n)
        for i in idx:
            a = int(assignment[i])
            c, gain = best_move(X, z, assignment, i, beta, costs)
            if c == a:
                continue
            assignment[i] = c
            costs[a] = cluster_cost(X, z, np.flatnonzero(assignment == a), beta)
            costs[c] = cluster_cost(X, z, np.flatnonzero(assignment == c), beta)
            switched, moves = True, moves + 1
            src = np.flatnonzero(assignment == a)
            if src.size < n_min and len(costs) > 1:
                del costs[a]
                assignment[src] = -1
                reassign_deleted(X, z, assignment, src, beta, costs)
    return {"assignment": assignment, "n_clusters": len(costs), "cost": total_cost(X, z, assignment, beta),
            "passes": passes, "moves": moves}


def cecib(X: np.ndarray, z: np.ndarray, k: int, rng: np.random.Generator, *, n_init: int = 10,
          init: str = "uniform", select: str = "cost", **kw) -> dict:
    """CEC-IB with ``n_init`` random-partition restarts; the lowest-cost end is kept.

    Returns the kept run (as :func:`hartigan`) with ``"runs"``: every restart's end.
    """
    runs = []
    for _ in range(n_init):
        start = random_partition(rng, X.shape[0], k, init)
        runs.append(hartigan(X, z, start, rng=rng, **kw))
    if select != "cost":
        raise ValueError(f"select must be 'cost', got {select!r}")
    best = min(runs, key=lambda r: r["cost"])
    return {**best, "runs": runs}


# --------------------------------------------------------------------------- §5.2 the protocol


def partial_labels(y: np.ndarray, frac: float, seed: int) -> np.ndarray:
    """§5.2: a random share ``frac`` of the points keep their class, the others get -1 (the same
    draws as the report's rows: ``numpy.random.default_rng(seed)``, ``choice`` without
    replacement of ``round(frac n)`` points)."""
    rng = np.random.default_rng(seed)
    out = np.full(len(y), -1)
    idx = rng.choice(len(y), int(round(frac * len(y))), replace=False)
    out[idx] = y[idx]
    return out


def table2(X, y, draws, *, k: int = 6, start_seed: int = 7000, **kw) -> list[dict]:
    """Clusters left at labelled fractions 0/10/20/30 % for each label draw (the row's order:
    fraction-major)."""
    out = []
    for frac in (0.0, 0.1, 0.2, 0.3):
        for d in draws:
            z = partial_labels(y, frac, d)
            r = cecib(X, z, k, np.random.default_rng(start_seed + 100 * d + int(round(100 * frac))), **kw)
            out.append({"frac": frac, "draw": d, "n_clusters": r["n_clusters"], "cost": r["cost"],
                        "restart_counts": [q["n_clusters"] for q in r["runs"]],
                        "restart_costs": [q["cost"] for q in r["runs"]]})
    return out


def _spread(v) -> str:
    v = np.asarray(v, dtype=float)
    return (f"median {np.median(v):g} (IQR {np.percentile(v, 25):g}-{np.percentile(v, 75):g}, "
            f"min-max {v.min():g}-{v.max():g}, n = {v.size})")


def main(argv=None) -> None:
    from bayesclust import datasets

    ap = argparse.ArgumentParser(prog="python -m reproduce.references.cecib", description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["wine", "iris"])
    ap.add_argument("--draws", type=int, default=2, help="label draws per fraction (the report's: 2)")
    ap.add_argument("--variants", action="store_true", help="Wine under the other readings of the protocol")
    a = ap.parse_args(argv)
    paper = {"wine": 3, "iris": 5}
    if a.variants:
        X, y = datasets.load("wine")
        Xs = (X - X.mean(axis=0)) / X.std(axis=0)
        for key, data, kw in (
            ("default (raw features)", X, {}),
            ("standardised features", Xs, {}),
            ("balanced random partition", X, {"init": "balanced"}),
            ("points shuffled each pass", X, {"order": "shuffle"}),
            ("floor N+1 (delete once singular)", X, {"floor": "N+1"}),
            ("no floor (eps |X| only; singular moves forbidden)", X, {"floor": "none"}),
            ("eps = 0.1", X, {"eps": 0.1}),
            ("k = 3 start", X, {"k": 3}),
        ):
            recs = table2(data, y, range(a.draws), **kw)
            every = [c for r in recs for c in r["restart_counts"]]
            print(f"wine, {key}: best-cost restart {_spread([r['n_clusters'] for r in recs])}; "
                  f"share of 3 {np.mean([r['n_clusters'] == 3 for r in recs]):.2f}; "
                  f"all restarts {_spread(every)}, share of 3 {np.mean(np.asarray(every) == 3):.2f}", flush=True)
        return
    for name in a.datasets:
        X, y = datasets.load(name)
        recs = table2(X, y, range(a.draws))
        ks = [r["n_clusters"] for r in recs]
        every = [c for r in recs for c in r["restart_counts"]]
        print(f"{name}: paper {paper[name]}; reference {_spread(ks)}; counts {ks}; "
              f"every restart's count {_spread(every)}", flush=True)
        for r in recs:
            print(f"    frac {r['frac']:.1f} draw {r['draw']}: K {r['n_clusters']} cost {r['cost']:.4f}; "
                  f"restarts K {r['restart_counts']} cost {[round(c, 3) for c in r['restart_costs']]}", flush=True)


if __name__ == "__main__":
    main()
