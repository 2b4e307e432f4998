"""Temporal state detection (Medina & Fred, SIMBAD deliverable D2.3): one GA fitness
evaluation against a loop of scikit-learn's SpectralClustering over the same grid, one whole
denoising run, and the DS1 / DS2 checks over seeds.

Prints JSON lines:

* ``temporal_fitness_vs_sklearn``: one fitness evaluation of ``denoise_sequence`` (the
  280-partition spectral ensemble of the kept samples, NJW and Shi-Malik over K in 2..6 and
  sigma in 0.3..3.0, batched and jitted; the co-association; five lifetime linkages; F1, F2)
  on the 200 samples DS2 keeps after removing its transition, against 280 fits of
  scikit-learn's ``SpectralClustering(affinity="rbf", gamma=1 / (2 sigma^2))`` over the same
  (K, sigma) grid (the grid twice: scikit-learn has one normalised algorithm), same process,
  warm (least of ``reps``).
* ``temporal_denoise_run``: one whole ``denoise_sequence`` run at n = 300 (DS2, seed 0,
  Table 1's parameters), warm: seconds, generations, distinct evaluations.
* ``temporal_ds2_seeds``: over ``--seeds`` seeds: DS1 found without denoising by every
  linkage; DS2's two states not found without denoising (and how often the structure is
  ambiguous); after denoising the two states found and the removed block covering at least
  80 % of the transition; the coverage and Jaccard overlap of block and transition.

Usage: python benchmarks/temporal.py [--quick] [--reps R] [--seeds S]

``--quick``: 3 seeds, one repetition.
"""

from __future__ import annotations

import _common as bench
import numpy as np


def fitness_row(reps):
    from bayesclust import _validation as V
    from bayesclust.datasets import temporal_states as make
    from bayesclust.inference.consensus.ensembles import _default_sigmas
    from bayesclust.inference.consensus.temporal import DEFAULT_LINKAGES, SPECTRAL_METHODS, _Problem

    X, y = make(0, "DS2")
    sig = _default_sigmas()
    ks = list(range(2, 7))
    blocks = iter([(101 + i, 200) for i in range(100)])  # distinct blocks: the cache never answers

    prob = _Problem(V.as_rng_key(0), X, 10, 0.1, DEFAULT_LINKAGES, ks, sig, SPECTRAL_METHODS, True)
    prob.terms(*next(blocks))  # compile
    t_ours = bench.least_seconds(lambda: prob.terms(*next(blocks)), reps)
    Xk = X[y != -1]

    def sk_loop():
        out = []
        for _ in range(2):
            for s in sig:
                for k in ks:
                    out.append(bench.peer("spectral", k, 0, affinity="rbf", gamma=1.0 / (2 * s * s)).fit_predict(Xk))
        return out

    t_sk = bench.least_seconds(sk_loop, reps)
    return {"benchmark": "temporal_fitness_vs_sklearn", "n_kept": int(Xk.shape[0]), "partitions": 280,
            "ours_s": t_ours, "sklearn_loop_s": t_sk, "speedup": t_sk / t_ours}


def denoise_row():
    from bayesclust.datasets import temporal_states as make
    from bayesclust.inference.consensus.temporal import denoise_sequence

    X, _ = make(0, "DS2")
    res, t = bench.timed(lambda: denoise_sequence(0, X))
    return {"benchmark": "temporal_denoise_run", "n": int(X.shape[0]), "seconds": t,
            "generations": int(res.n_iter), "evaluations": int(res.n_evaluations),
            "s_per_evaluation": t / max(res.n_evaluations, 1), "converged": bool(res.converged),
            "block": list(res.block)}


def seeds_row(n_seeds):
    from bayesclust.datasets import temporal_states as make
    from bayesclust.inference.consensus.temporal import denoise_sequence, temporal_states

    ds1 = ds2_before_found = ds2_ambiguous = found = covered = success = 0
    cov, jac, removed = [], [], []
    for seed in range(n_seeds):
        X1, y1 = make(seed, "DS1")
        r1 = temporal_states(seed, X1)
        ds1 += int(r1.unambiguous and r1.majority == len(r1.linkages) and r1.n_states == 2
                   and all(len(s) == 2 for s in [set(w.tolist()) for w in r1.window_states]))
        X, y = make(seed, "DS2")
        r0 = temporal_states(seed, X)
        ds2_ambiguous += int(not r0.unambiguous)
        ds2_before_found += int(r0.unambiguous and r0.n_states == 2)
        d = denoise_sequence(seed, X)
        r = temporal_states(seed, X[d.kept], time_index=d.kept)
        tr, rm = np.flatnonzero(y == -1), np.flatnonzero(d.removed)
        c = np.intersect1d(tr, rm).size / tr.size
        cov.append(c)
        jac.append(np.intersect1d(tr, rm).size / np.union1d(tr, rm).size)
        removed.append(rm.size / y.size)
        ok = r.unambiguous and r.n_states == 2
        found += int(ok)
        covered += int(c >= 0.8)
        success += int(ok and c >= 0.8)
    return {"benchmark": "temporal_ds2_seeds", "seeds": n_seeds, "ds1_found_every_linkage": ds1,
            "ds2_found_before": ds2_before_found, "ds2_ambiguous_before": ds2_ambiguous,
            "ds2_found_after": found, "ds2_covered_80": covered, "ds2_success": success,
            "coverage_median": float(np.median(cov)), "coverage_min": float(np.min(cov)),
            "jaccard_median": float(np.median(jac)), "removed_fraction_median": float(np.median(removed))}


def main():
    p = bench.parser(__doc__, "3 seeds, one repetition")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seeds", type=int, default=10)
    args = p.parse_args()
    bench.emit(bench.environment("temporal.py", ("jax", "sklearn", "scipy")))
    reps = 1 if args.quick else args.reps
    bench.emit(fitness_row(reps))
    bench.emit(denoise_row())
    bench.emit(seeds_row(3 if args.quick else args.seeds))


if __name__ == "__main__":
    main()
