"""Penalised normalised cut: cost per iteration on sparse graphs, linear in |E|.

Prints JSON lines.

1. ``ncut_iteration``: for a planted-community sparse graph with ``n`` nodes and
   ``|E|`` undirected edges (several |E| at fixed n), the marginal cost of one
   penalised-NCut iteration (a weighted kernel DP-means pass on
   ``K = sigma D^-1 + D^-1 A D^-1`` computed from the edges, relabelling and
   the objective ``Cut + lam' k``) at ``k`` clusters, next to one SciPy sparse
   product ``A @ x`` (the unit of O(|E|) work) in the same run.  Two series:
   fixed n with growing |E| (``scaling_fixed_n``: a linear fit
   ``a + b |E|``, the intercept being the O(n k) part) and fixed average
   degree with growing n (``scaling_fixed_degree``: log-log slope, 1 = linear).
2. ``ncut_vs_sklearn``: an end-to-end fit (spectral start + passes + merges)
   without being told k against scikit-learn's ``SpectralClustering`` given the
   true k, on the same graph: times, their ratio, NMI of both, k found.

Timings are the least of a few repetitions; on a shared machine they are noisy,
the ratios less so.

Usage: python benchmarks/spectral.py [--quick]
   full: n = 100,000 nodes, |E| up to ~1M; quick (< 60 s): n = 10,000.
"""

from __future__ import annotations

import _common as bench
import numpy as np
import scipy.sparse as sp

from bayesclust.inference.hard._kernel_passes import _compact, _Graph, _kernel_pass
from bayesclust.inference.hard.penalized_ncut import penalized_ncut
from bayesclust.metrics import nmi

FULL = {"n": 100_000, "edges": [125_000, 250_000, 500_000, 1_000_000], "k": 50,
        "fixed_degree": [(25_000, 10), (50_000, 10), (100_000, 10), (200_000, 10)],
        # scikit-learn's default ARPACK shift-invert factorises the 20,000-node graph's Laplacian
        # (sparse LU with heavy fill-in) and did not finish in 10 minutes: the peer runs at 5,000.
        "e2e": [(5_000, 50_000, 10)]}
QUICK = {"n": 10_000, "edges": [25_000, 50_000, 100_000, 200_000], "k": 20,
         "fixed_degree": [(5_000, 10), (10_000, 10), (20_000, 10)],
         "e2e": [(2_000, 20_000, 8)]}


def planted_graph(n, n_edges, k, p_in=0.8, seed=0):
    """Sparse graph with k planted communities: each edge stays inside one with prob. p_in."""
    rng = np.random.default_rng(seed)
    z = rng.integers(k, size=n)
    members = [np.flatnonzero(z == c) for c in range(k)]
    m = max(int(n_edges * 1.02) - n, n)  # + a ring of n; duplicates and self-pairs removed
    i = rng.integers(n, size=m)
    inside = rng.random(m) < p_in
    j = rng.integers(n, size=m)
    for c in range(k):
        sel = np.flatnonzero(inside & (z[i] == c))
        j[sel] = members[c][rng.integers(len(members[c]), size=len(sel))]
    # a ring keeps every degree > 0
    i = np.r_[i, np.arange(n)]
    j = np.r_[j, (np.arange(n) + 1) % n]
    keep = i != j
    A = sp.coo_matrix((np.ones(keep.sum()), (i[keep], j[keep])), shape=(n, n)).tocsr()
    A = A.maximum(A.T).tocsr()
    A.data[:] = 1.0
    A.sort_indices()
    return A, z


def bench_iteration(n, n_edges, k, lam_prime=-0.5, reps=5):
    A, z = planted_graph(n, n_edges, k)
    deg = np.asarray(A.sum(1)).ravel()
    sigma = 1.0  # always PSD; the cost of a pass does not depend on sigma
    be = _Graph(A, deg, sigma)
    lam = lam_prime + sigma + 1.0
    rng = np.random.default_rng(1)
    labels = np.where(rng.random(n) < 0.9, z, rng.integers(k, size=n))  # a noisy planted start
    labels, kk = _compact(labels)

    def iteration():
        new, _ = _kernel_pass(be, labels, kk, lam)
        new, k_new = _compact(new)
        return be.objective(new, k_new, lam_prime)

    iteration()  # warm-up
    t_iter = bench.least_seconds(iteration, reps)
    x = np.ones(n)
    t_spmv = bench.least_seconds(lambda: A @ x, reps * 4)
    return {"benchmark": "ncut_iteration", "n": n, "edges": int(A.nnz // 2), "nnz": int(A.nnz),
            "k": kk, "seconds_per_iter": t_iter, "spmv_seconds": t_spmv,
            "iter_over_spmv": t_iter / t_spmv, "ns_per_nnz": 1e9 * t_iter / A.nnz}


def bench_vs_sklearn(n, n_edges, k, lam_prime=-0.5):
    A, z = planted_graph(n, n_edges, k, seed=2)
    res, t_ours = bench.timed(lambda: penalized_ncut(A, lam_prime))
    sc, t_sk = bench.timed(lambda: bench.peer("spectral", k, 0, affinity="precomputed").fit(A))
    return {"benchmark": "ncut_vs_sklearn", "n": n, "edges": int(A.nnz // 2), "true_k": k,
            "lam_prime": lam_prime, "k_found": res.n_clusters, "nmi": nmi(z, res.labels),
            "n_iter": res.n_iter, "seconds": t_ours, "sklearn_k": k,
            "sklearn_nmi": nmi(z, sc.labels_), "sklearn_seconds": t_sk,
            "time_ratio_to_sklearn": t_ours / t_sk}


def main():
    parser = bench.parser(__doc__, "small graphs (under 60 s)")
    args = parser.parse_args()
    cfg = QUICK if args.quick else FULL
    bench.emit(bench.environment("spectral.py", ("numpy", "scipy")))
    rows = []
    for e in cfg["edges"]:
        row = bench_iteration(cfg["n"], e, cfg["k"])
        rows.append(row)
        bench.emit(row)
    E = np.array([r["nnz"] for r in rows], float)
    T = np.array([r["seconds_per_iter"] for r in rows])
    b, a = np.polyfit(E, T, 1)
    r2 = 1.0 - np.sum((T - (a + b * E)) ** 2) / np.sum((T - T.mean()) ** 2)
    bench.emit({"benchmark": "scaling_fixed_n", "n": cfg["n"], "k": cfg["k"],
                "fit": "seconds = a + b * nnz (the O(n k) part is the intercept)",
                "a_seconds": float(a), "b_ns_per_nnz": float(1e9 * b), "r2": float(r2),
                "time_ratio_largest_smallest": float(T[-1] / T[0]),
                "nnz_ratio_largest_smallest": float(E[-1] / E[0])})
    rows = []
    for n, degree in cfg["fixed_degree"]:
        row = bench_iteration(n, n * degree // 2, cfg["k"])
        row["series"] = "fixed_degree"
        rows.append(row)
        bench.emit(row)
    E = np.array([r["nnz"] for r in rows], float)
    T = np.array([r["seconds_per_iter"] for r in rows])
    slope = float(np.polyfit(np.log(E), np.log(T), 1)[0])
    bench.emit({"benchmark": "scaling_fixed_degree", "k": cfg["k"],
                "loglog_slope_time_vs_nnz": slope,
                "time_ratio_largest_smallest": float(T[-1] / T[0]),
                "nnz_ratio_largest_smallest": float(E[-1] / E[0])})
    for n, e, k in cfg["e2e"]:
        bench.emit(bench_vs_sklearn(n, e, k))


if __name__ == "__main__":
    main()
