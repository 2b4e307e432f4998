"""Constrained evidence accumulation (CEAC): CSL against SciPy single link, and CCL's shortest
paths from the must-link components against Floyd-Warshall.

Prints JSON lines:

* ``constrained_csl_vs_single``: constrained single link (CEAC, Section 3) with no constraints
  against SciPy's single link (``linkage(..., "single")`` + ``fcluster(..., "maxclust")``) on
  the same dense co-association of n = 2,000 objects (10 Gaussians, ``datasets.ten_gaussians``;
  50 k-means partitions, K ~ U{10..30}; cut at K = 10): times (least of ``reps`` calls; both
  sides start from the dense C, SciPy's includes forming the condensed 1 - C), their ratio
  (target <= 3x) and whether the partitions agree (adjusted Rand index; ties of the
  co-association can order equal merges differently).  A second row adds 200 random constraints.
* ``constrained_ccl_shortest_paths``: the shortest-path closure of constrained complete link
  (Klein, Kamvar & Manning 2002) with 200 random constraints at n = 2,310 (the size of Image
  Segmentation; 7 Gaussians of 330 points here): the paths through the must-link
  components (``constrained_shortest_paths``, O(r n^2) for r components) against SciPy's Floyd-Warshall
  (``shortest_path(method="FW")``) on the same graph: times, ratio (target >= 10x) and the
  largest absolute difference of the distances.

* ``constrained_acc_population``: ACC (Duarte et al. 2009) of a GA's population (20 candidate
  partitions, K* = 3) against an ensemble of 50 partitions (K ~ U{10..30}) of n = 1,000 objects:
  ``metrics.acc_population`` (one-hot contingencies, one matrix product) and the per-generation
  scoring inside ACCCS (the ensemble's one-hot encoding prepared once) against a loop of
  ``metrics.acc`` over the candidates (each a loop over the 50 partitions); target >= 10x; the
  largest difference of the values.
* ``constrained_weacs``: WEACS (weighted EAC over an 80 % sub-sampled k-means ensemble) against
  unweighted EAC on the same ensemble, average link at the true K, consistency index (mean of
  ``--seeds`` seeds) on Iris, Wine (standardised) and MASS biopsy; the weighted co-association's
  time next to the unweighted one.

Usage: python benchmarks/constrained.py [--quick] [--reps R] [--seeds S]

``--quick``: n = 1,000 and 1,155, 2 seeds (< 60 s).
"""

from __future__ import annotations

import _common as bench
import numpy as np


def coassociation_of(X, seed=0):
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble

    return coassociation(kmeans_ensemble(seed, X, 50, n_clusters_range=(10, 30))).toarray()


def gaussians(k, per, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), per)
    return rng.normal(size=(k * per, 2)) + 4.0 * np.stack([np.cos(y), np.sin(y)], 1) * np.arange(1, k + 1)[y, None] / 2, y


def csl_row(n, reps, n_constraints):
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform
    from sklearn.metrics import adjusted_rand_score

    from bayesclust import datasets
    from bayesclust.inference.consensus.constrained import constrained_linkage_consensus, random_constraints

    X, y = datasets.ten_gaussians(0, n)
    C = coassociation_of(X)
    ml, cl = random_constraints(1, y, n_constraints)

    def scipy_sl():
        D = 1.0 - C
        np.fill_diagonal(D, 0.0)
        return fcluster(linkage(squareform(D, checks=False), "single"), 10, "maxclust")

    def csl():
        return constrained_linkage_consensus(C, ml, cl, 10, "single").labels

    a, b = scipy_sl(), csl()
    t_sc = bench.least_seconds(scipy_sl, reps)
    t_csl = bench.least_seconds(csl, reps)
    return {"benchmark": "constrained_csl_vs_single", "n": n, "n_constraints": n_constraints,
            "csl_s": t_csl, "scipy_single_s": t_sc, "ratio": t_csl / t_sc,
            "ari_vs_scipy": float(adjusted_rand_score(a, b)), "scipy_clusters": int(len(np.unique(a)))}


def ccl_row(per, n_constraints):
    from scipy.sparse.csgraph import csgraph_from_dense, shortest_path

    from bayesclust.inference.consensus.constrained import constrained_shortest_paths, random_constraints

    X, y = gaussians(7, per)
    n = X.shape[0]
    D = 1.0 - coassociation_of(X)
    np.fill_diagonal(D, 0.0)
    ml, cl = random_constraints(2, y, n_constraints)

    def fw():
        Dz = D.copy()
        Dz[ml[:, 0], ml[:, 1]] = Dz[ml[:, 1], ml[:, 0]] = 0.0
        return shortest_path(csgraph_from_dense(Dz, null_value=np.inf), method="FW", directed=False)

    ref, t_fw = bench.timed(fw)
    got, t_dj = bench.timed(lambda: constrained_shortest_paths(D, ml))
    return {"benchmark": "constrained_ccl_shortest_paths", "n": n, "n_constraints": n_constraints,
            "must_links": int(len(ml)), "components_s": t_dj, "floyd_warshall_s": t_fw,
            "speedup": t_fw / t_dj, "max_abs_diff": float(np.max(np.abs(got - ref)))}


def acc_row(reps):
    from bayesclust import metrics

    rng = np.random.default_rng(0)
    n, N, p = 1000, 50, 20
    ens = np.stack([rng.integers(0, rng.integers(10, 31), n) for _ in range(N)])
    P = rng.integers(0, 3, (p, n))
    prep = metrics.consensus.ensemble_one_hot(ens)  # what ACCCS prepares once per run
    codes = metrics.consensus.candidate_codes(P, n)
    loop = np.array([metrics.acc(c, ens) for c in P])
    vec = metrics.acc_population(P, ens)
    t_loop = bench.least_seconds(lambda: [metrics.acc(c, ens) for c in P], reps)
    t_vec = bench.least_seconds(lambda: metrics.acc_population(P, ens), reps)
    t_ga = bench.least_seconds(lambda: metrics.consensus.acc_of_codes(codes, prep), reps)
    return {"benchmark": "constrained_acc_population", "n": n, "partitions": N, "population": p,
            "loop_s": t_loop, "acc_population_s": t_vec, "per_generation_s": t_ga,
            "speedup": t_loop / t_vec, "speedup_per_generation": t_loop / t_ga,
            "max_abs_diff": float(np.max(np.abs(loop - vec)))}


def _weacs_data(name):
    from bayesclust.jobs.consensus import CONSENSUS_DATA

    return CONSENSUS_DATA[name]()


def weacs_rows(seeds):
    from bayesclust import metrics
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble
    from bayesclust.inference.consensus.linkage import linkage_consensus
    from bayesclust.inference.consensus.weacs import validity_weights

    rows = []
    for name in ("iris", "wine-norm", "biopsy"):
        X, y = _weacs_data(name)
        K = len(np.unique(y))
        ci = {"eac": [], "sweacs": [], "jweacs": []}
        t_w = t_u = 0.0
        for seed in range(seeds):
            ens = kmeans_ensemble(seed, X, 150, subsample=0.8)
            C, t = bench.timed(lambda: coassociation(ens))
            t_u += t
            ci["eac"].append(metrics.consistency_index(y, linkage_consensus(C, "average", K).labels))
            for key, idx in (("sweacs", ("silhouette",)),
                             ("jweacs", ("silhouette", "davies_bouldin", "calinski_harabasz"))):
                w, _ = validity_weights(X, ens, idx)
                Cw, t = bench.timed(lambda: coassociation(ens, weights=w))
                t_w += t if key == "sweacs" else 0.0
                ci[key].append(metrics.consistency_index(y, linkage_consensus(Cw, "average", K).labels))
        rows.append({"benchmark": "constrained_weacs", "data": name, "n": int(X.shape[0]), "K": K,
                     "seeds": seeds, "eac_ci": float(np.mean(ci["eac"])),
                     "sweacs_ci": float(np.mean(ci["sweacs"])), "jweacs_ci": float(np.mean(ci["jweacs"])),
                     "weighted_coassoc_s": t_w / seeds, "unweighted_coassoc_s": t_u / seeds})
    return rows


def main():
    p = bench.parser(__doc__, "n = 1,000 and 1,155, 2 seeds (< 60 s)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=None)
    args = p.parse_args()
    bench.emit(bench.environment("constrained.py", ("scipy", "sklearn")))
    n = 1000 if args.quick else 2000
    bench.emit(csl_row(n, args.reps, 0))
    bench.emit(csl_row(n, args.reps, 200))
    bench.emit(ccl_row(165 if args.quick else 330, 200))
    bench.emit(acc_row(args.reps))
    for row in weacs_rows(args.seeds or (2 if args.quick else 10)):
        bench.emit(row)


if __name__ == "__main__":
    main()
