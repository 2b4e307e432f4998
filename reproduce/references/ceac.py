r"""A second, independent derivation of evidence accumulation with single link (EAC-SL), written
from the paper.

Duarte, Fred & Duarte (2009), *Combining data clusterings with instance level constraints*
(appended to Fred, Figueiredo et al., SIMBAD deliverable D2.3), the unconstrained EAC-SL column
of its Table 1: a plain, slow NumPy loop of

- §5: a cluster ensemble of N = 50 K-means partitions, K drawn uniformly from {10, ..., 30} per
  partition "in order to create diversity"; K-means is Lloyd's algorithm from K distinct data
  points drawn at random (the paper does not say how K-means is started; Fred & Jain 2005 use
  random starts), an empty cluster is re-seeded with the point farthest from its centre;
- §2, eq. (1) and Algorithm 1: the normalised co-association
  :math:`co\_assoc_{ij} = \frac1N\sum_l vote^l_{ij}`, :math:`vote^l_{ij} = 1` iff
  :math:`x_i, x_j` share a cluster of :math:`P^l`;
- §2 / §5: single link on :math:`D = 1 - co\_assoc`, stopped at :math:`K^* = K^0` clusters (the
  true number of classes).  Single link is Kruskal's algorithm on Prim's minimum spanning tree:
  merge the n - K lightest tree edges (ties: the order in which Prim added them);
- §5, eq. (8): the consistency index
  :math:`Ci(P^*, P^0) = \frac1n\sum_{k=1}^{\min(K^*, K^0)} |C^*_k \cap C^0_k|` over "matching
  clusters"; the matching is the one-to-one assignment of largest total overlap (the paper does
  not say how it is found).

Table 1 reports the average (maximum) Ci in % over 20 ensembles.

Run ``python -m reproduce.references.ceac`` for the Ci (%) per ensemble on iris and biopsy
(seeds 0..19 of the reproduction report's ``ceac-t1-*-eac-sl`` rows; this module's own
ensembles, so the seeds name different partitions from the package's), their mean and spread.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import linear_sum_assignment

from bayesclust import datasets

#: Table 1's EAC-SL average (maximum) Ci, %.
TABLE1 = {"iris": (69.87, 74.67), "biopsy": (83.88, 95.17)}
N_PARTITIONS = 50
K_RANGE = (10, 30)
N_ENSEMBLES = 20


def lloyd_kmeans(X, K, rng, max_iter=300, empty="relocate", init="points"):
    """K-means (Lloyd) from K distinct data points drawn at random; labels, shape (n,).

    ``empty="keep"`` leaves an emptied cluster's centre where it was (the partition then has
    fewer than K clusters); ``init="box"`` draws the K centres uniformly in the data's bounding
    box (both only for the ``--study`` readings)."""
    X = np.asarray(X, dtype=float)
    distinct = np.unique(X, axis=0)
    K = min(K, len(distinct))
    if init == "box":
        centres = rng.uniform(X.min(0), X.max(0), size=(K, X.shape[1]))
    else:
        centres = distinct[rng.choice(len(distinct), size=K, replace=False)].copy()
    labels = None
    for _ in range(max_iter):
        d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
        new = d2.argmin(1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        for k in range(K):
            members = labels == k
            if members.any():
                centres[k] = X[members].mean(0)
            elif empty == "relocate":  # re-seed an empty cluster with the farthest point
                far = d2[np.arange(len(X)), labels].argmax()
                centres[k] = X[far]
                labels[far] = k
    return labels


def kmeans_ensemble(X, rng, n_partitions=N_PARTITIONS, k_range=K_RANGE, **kmeans):
    """N K-means partitions, K ~ U{k_range[0], ..., k_range[1]} each; labels, shape (N, n)."""
    return np.stack([lloyd_kmeans(X, int(rng.integers(k_range[0], k_range[1] + 1)), rng, **kmeans)
                     for _ in range(n_partitions)])


def coassociation(ensemble):
    """eq. (1): the fraction of partitions in which i and j share a cluster; shape (n, n)."""
    ensemble = np.asarray(ensemble)
    N, n = ensemble.shape
    C = np.zeros((n, n))
    for labels in ensemble:
        for k in np.unique(labels):
            idx = np.flatnonzero(labels == k)
            C[np.ix_(idx, idx)] += 1.0
    return C / N


def prim_mst(D):
    """Prim's minimum spanning tree of a dense dissimilarity; edges (i, j, w) in the order added."""
    n = len(D)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best = D[0].copy()
    parent = np.zeros(n, dtype=int)
    edges = []
    for _ in range(n - 1):
        cand = np.where(in_tree, np.inf, best)
        j = int(cand.argmin())
        edges.append((int(parent[j]), j, float(best[j])))
        in_tree[j] = True
        closer = D[j] < best
        best = np.where(closer, D[j], best)
        parent = np.where(closer, j, parent)
    return edges


def single_link(D, K):
    """Single link on D stopped at K clusters: union the n - K lightest MST edges; labels (n,)."""
    n = len(D)
    edges = prim_mst(D)
    order = sorted(range(len(edges)), key=lambda e: edges[e][2])  # stable: ties in Prim's order
    return union_edges(n, [edges[e] for e in order[: n - K]])


def union_edges(n, edges):
    """Connected components of n objects joined by ``edges`` (i, j, w) (union-find); labels (n,)."""
    root = list(range(n))

    def find(a):
        while root[a] != a:
            root[a] = root[root[a]]
            a = root[a]
        return a

    for i, j, _ in edges:
        root[find(i)] = find(j)
    return np.unique([find(i) for i in range(n)], return_inverse=True)[1]


def consistency_index(labels, truth):
    """eq. (8): overlap of one-to-one matched clusters / n (largest-total-overlap matching)."""
    _, a = np.unique(labels, return_inverse=True)
    _, b = np.unique(truth, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1.0)
    r, c = linear_sum_assignment(-table)
    return table[r, c].sum() / len(a)


def eac_sl_ci(X, y, ensemble):
    """Ci (%) of single link on 1 - co-association, cut at the true number of classes."""
    K = len(np.unique(y))
    return 100.0 * consistency_index(single_link(1.0 - coassociation(ensemble), K), y)


def run_dataset(name, seeds=range(N_ENSEMBLES), rows=None):
    """Ci (%) per ensemble (own K-means ensembles, ``np.random.default_rng(seed)``); ``rows``:
    the objects kept (default all)."""
    X, y = datasets.load(name)
    if rows is not None:
        X, y = X[rows], y[rows]
    return [eac_sl_ci(X, y, kmeans_ensemble(X, np.random.default_rng(s))) for s in seeds]


# --- phase 2 readings of the paper's silences (``--study``) ---------------------------------

def sklearn_ensemble(X, rng, init="k-means++", n_init=1, n_partitions=N_PARTITIONS, k_range=K_RANGE):
    """The ensemble with scikit-learn's ``KMeans`` (another reading of "K-means")."""
    from sklearn.cluster import KMeans
    out = []
    for _ in range(n_partitions):
        K = int(rng.integers(k_range[0], k_range[1] + 1))
        km = KMeans(K, init=init, n_init=n_init, random_state=int(rng.integers(2**31)))
        out.append(km.fit_predict(X))
    return np.stack(out)


def threshold_single_link(D, K):
    """Single link cut by a threshold: drop every MST edge as heavy as the (n-K+1)-th lightest.

    With tied merge heights this leaves K or more clusters (a dendrogram cut at a level rather
    than after n - K merges)."""
    n = len(D)
    edges = prim_mst(D)
    w = np.sort([e[2] for e in edges])
    return union_edges(n, [e for e in edges if e[2] < w[n - K]])


def greedy_consistency_index(labels, truth):
    """eq. (8) with a greedy matching: repeatedly pair the two clusters of largest overlap."""
    _, a = np.unique(labels, return_inverse=True)
    _, b = np.unique(truth, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1.0)
    total = 0.0
    for _ in range(min(table.shape)):
        i, j = np.unravel_index(table.argmax(), table.shape)
        total += table[i, j]
        table[i, :] = -1
        table[:, j] = -1
    return total / len(a)


def package_ensemble(X, seed):
    """The package's public ensemble generator as the reproduction report calls it."""
    from bayesclust import kmeans_ensemble as ke
    return np.asarray(ke(seed, X, N_PARTITIONS, n_clusters_range=K_RANGE).labels)


def study(name, seeds=range(N_ENSEMBLES)):
    """Mean Ci (%) under each reading; one dict of name -> list of per-ensemble values."""
    X, y = datasets.load(name)
    K = len(np.unique(y))
    res = {}

    def add(key, v):
        res.setdefault(key, []).append(100.0 * v)

    for s in seeds:
        for ens_name, ens in (("own", kmeans_ensemble(X, np.random.default_rng(s))),
                              ("package", package_ensemble(X, s)),
                              ("sklearn-k-means++", sklearn_ensemble(X, np.random.default_rng(s))),
                              ("own, empty clusters kept",
                               kmeans_ensemble(X, np.random.default_rng(s), empty="keep")),
                              ("own, box init, empty clusters kept",
                               kmeans_ensemble(X, np.random.default_rng(s), empty="keep", init="box")),
                              ("own on standardised features",
                               kmeans_ensemble((X - X.mean(0)) / X.std(0), np.random.default_rng(s))),
                              ("sklearn-random-n_init10",
                               sklearn_ensemble(X, np.random.default_rng(s), "random", 10))):
            D = 1.0 - coassociation(ens)
            lab = single_link(D, K)
            add(f"{ens_name}: SL, n-K merges, optimal Ci", consistency_index(lab, y))
            if ens_name in ("own", "package"):
                add(f"{ens_name}: SL, n-K merges, greedy Ci", greedy_consistency_index(lab, y))
                tl = threshold_single_link(D, K)
                add(f"{ens_name}: SL threshold cut (>=K clusters), optimal Ci", consistency_index(tl, y))
                res.setdefault(f"{ens_name}: clusters left by the threshold cut", []).append(
                    float(tl.max() + 1))
                perm = np.random.default_rng(1000 + s).permutation(len(y))
                lp = single_link(D[np.ix_(perm, perm)], K)
                add(f"{ens_name}: SL, objects in a random order (other tie-breaking)",
                    consistency_index(lp, y[perm]))
                sizes = np.sort(np.bincount(lab))
                res.setdefault(f"{ens_name}: size of the smaller SL cluster(s)", []).append(
                    float(sizes[:-1].sum()))
    # Duplicated objects removed (the first of each set of identical rows kept).
    keep = np.sort(np.unique(X, axis=0, return_index=True)[1])
    if len(keep) < len(X):
        res["own, distinct rows only: SL, n-K merges, optimal Ci"] = run_dataset(
            name, seeds, rows=keep)
    return res


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ensembles", type=int, default=N_ENSEMBLES)
    p.add_argument("--study", action="store_true", help="the readings of the paper's silences")
    args = p.parse_args(argv)
    if args.study:
        for name in TABLE1:
            for key, v in study(name, range(args.ensembles)).items():
                print(f"{name}: {key}: mean {np.mean(v):.2f} median {np.median(v):.2f} "
                      f"min {np.min(v):.2f} max {np.max(v):.2f}")
        return
    for name, (avg, mx) in TABLE1.items():
        v = np.array(run_dataset(name, range(args.ensembles)))
        print(f"{name}: EAC-SL Ci % mean {v.mean():.2f} median {np.median(v):.2f} "
              f"[q25 {np.percentile(v, 25):.2f}, q75 {np.percentile(v, 75):.2f}] "
              f"min {v.min():.2f} max {v.max():.2f} (paper {avg} ({mx}))")
        print("  per ensemble:", " ".join(f"{x:.2f}" for x in v))


if __name__ == "__main__":
    main()
