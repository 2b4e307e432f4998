"""Sparse co-association vs n: memory and time are linear with the K_min rule.

Lourenco, Fred & Jain, "On the scalability of evidence accumulation clustering" (ICPR
2010, §IV).  Data: the paper's 10-Gaussian mixture
(``datasets.ten_gaussians``: unit Gaussians at (0, 12 i), n/10 points each).  For every n
and ensemble rule it prints one JSON line with

* the ensemble (k-means, ``kmeans_ensemble``; K ~ U{K_min..K_max}; linear rule
  {ceil(n/50), ceil(n/20)} and sqrt rule {ceil(sqrt(n)/2), ceil(sqrt(n))}) and its time;
* the sparse co-association (``coassociation``): stored upper-triangle pairs, bytes of the
  CSR arrays, peak traced allocation during accumulation (tracemalloc), time, and
  ``nnz / (2 n^2 / K_min)`` (the paper's estimate; it matches the upper-triangle count);
* the single-link consensus at K = 10 on the sparse matrix (MST) and its time and CI;
* the peer, side by side in the same run where it fits in memory (n <= --dense-max): the
  dense co-association (``metrics.co_clustering_matrix``, n x n float64), its bytes and
  time, and the ratios dense / sparse.

A final line fits log(nnz) and log(time) against log(n) per rule (slope 1 = linear).
Quick mode (< 60 s): n in {1000, 2000, 4000}, 20 partitions, 10 Lloyd iterations.  Full
mode: n from 1000 to 200,000 (the paper went to 50,000), N = 150 partitions; the k-means
ensemble dominates the time at large n (KD-tree Lloyd with up to 10,000 centres); expect
tens of minutes for the largest n.  Numbers on a shared machine are noisy.

Usage: python benchmarks/consensus.py [--quick] [--n 1000 5000 ...] [--n-partitions 150]
"""

from __future__ import annotations

import tracemalloc

import _common as bench
import numpy as np

from bayesclust import metrics
from bayesclust.datasets import ten_gaussians
from bayesclust.inference import coassociation as coassoc
from bayesclust.inference import ensembles
from bayesclust.inference import linkage as linkages

FULL_N = [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000]
QUICK_N = [1000, 2000, 4000]


def run_one(n: int, rule: str, n_partitions: int, max_iter: int, dense_max: int, seed: int = 0) -> dict:
    X, y = ten_gaussians(seed, n)
    ens, ens_s = bench.timed(lambda: ensembles.kmeans_ensemble(seed, X, n_partitions, k_rule=rule,
                                                               max_iter=max_iter))

    tracemalloc.start()
    C, co_s = bench.timed(lambda: coassoc.coassociation(ens))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    sl, sl_s = bench.timed(lambda: linkages.linkage_consensus(C, "single", 10))

    row = {"bench": "consensus", "kind": "point", "n": n, "rule": rule, "n_partitions": n_partitions,
           "k_min": ens.k_min, "k_max": ens.k_max, "ensemble_seconds": ens_s,
           "nnz_upper": C.nnz, "bytes": C.nbytes, "peak_bytes_accumulation": int(peak),
           "coassoc_seconds": co_s, "density": 2 * C.nnz / (n * n),
           "nnz_over_2n2_kmin": C.nnz / (2 * n * n / ens.k_min),
           "single_link_seconds": sl_s, "single_link_ci": metrics.consistency_index(y, sl.labels)}
    if n <= dense_max:
        D, dense_s = bench.timed(lambda: metrics.co_clustering_matrix(ens.labels))
        assert np.allclose(D[np.triu_indices(n, 1)], C.toarray()[np.triu_indices(n, 1)])
        row.update({"dense_bytes": int(D.nbytes), "dense_seconds": dense_s,
                    "dense_over_sparse_bytes": D.nbytes / C.nbytes,
                    "dense_over_sparse_seconds": dense_s / co_s})
        del D
    return row


def fit_slopes(rows: list[dict]) -> dict:
    out = {"bench": "consensus", "kind": "slopes"}
    for rule in sorted({r["rule"] for r in rows}):
        rr = [r for r in rows if r["rule"] == rule]
        if len(rr) < 2:
            continue
        ln = np.log([r["n"] for r in rr])
        for key in ("nnz_upper", "bytes", "coassoc_seconds", "ensemble_seconds"):
            out[f"{rule}_{key}_slope"] = float(np.polyfit(ln, np.log([max(r[key], 1e-9) for r in rr]), 1)[0])
    return out


def main():
    parser = bench.parser(__doc__, f"n in {QUICK_N}, 20 partitions (< 60 s)")
    parser.add_argument("--n", type=int, nargs="+", help=f"sizes (default {FULL_N})")
    parser.add_argument("--n-partitions", type=int, default=None, help="ensemble size (default 150; quick 20)")
    parser.add_argument("--max-iter", type=int, default=None, help="Lloyd iterations (default 20; quick 10)")
    parser.add_argument("--rules", nargs="+", default=["linear", "sqrt"], choices=["linear", "sqrt", "penca"])
    parser.add_argument("--dense-max", type=int, default=None,
                        help="largest n for the dense peer (default 10,000; quick 4000)")
    args = parser.parse_args()
    sizes = args.n or (QUICK_N if args.quick else FULL_N)
    N = args.n_partitions or (20 if args.quick else 150)
    it = args.max_iter or (10 if args.quick else 20)
    dense_max = args.dense_max if args.dense_max is not None else (4000 if args.quick else 10_000)
    bench.emit(bench.environment("consensus.py", ("numpy", "scipy", "jax")))
    rows = []
    for rule in args.rules:
        for n in sizes:
            rows.append(run_one(n, rule, N, it, dense_max))
            bench.emit(rows[-1])
    bench.emit(fit_slopes(rows))


if __name__ == "__main__":
    main()
