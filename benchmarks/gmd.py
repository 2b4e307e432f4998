"""GMD (Figueiredo & Jain 2002) vs scikit-learn GaussianMixture at the same k, from the same start.

Prints JSON lines:

* ``gmd_vs_sklearn``: one row per data set and start.  Both fits start from the same
  weights ``1 / k``, means (``k`` distinct random data points) and covariances
  (``0.1 trace(cov(X)) / d`` times the identity, GMD's own start) with the same relative ridge
  (``reg_covar = 1e-6`` of the mean variance); GMD runs at ``k_min = k_max = k`` (its MML
  weight update may still annihilate a component: ``gmd_k`` says how many it kept),
  scikit-learn's ``GaussianMixture(covariance_type="full")`` with its defaults otherwise
  (``tol = 1e-3`` on the mean log-likelihood, ``max_iter = 100``).  Log-likelihoods are
  computed from each fit's parameters with scipy (float64); ``loglik_rel_diff`` =
  (GMD - scikit-learn) / |scikit-learn| (the target: >= -0.001).  Times are warm (least of
  ``reps`` calls after a first, compiling call; ``gmd_compile_s`` = first call - warm);
  ``time_ratio`` = GMD / scikit-learn (lower is better).  GMD runs in float32 (JAX's
  default), scikit-learn in float64.
* ``gmd_vs_sklearn_summary``: medians over the starts of each data set.
* ``gmd_full_run``: the whole algorithm (``k_max`` components down to ``k_min``), warm, with
  the number of components it chose, for context.

Data: Iris (150 x 4, k = 3) and a synthetic 10,000 x 5 set (5 Gaussians of 2,000 points,
centres ``N(0, 3^2 I)``, random full covariances; k = 5).

Usage: python benchmarks/gmd.py [--quick] [--starts S] [--reps R]

``--quick``: 2 starts, 2 repetitions (< 60 s).
"""

from __future__ import annotations

import time
import warnings

import _common as bench
import numpy as np

from bayesclust import datasets
from bayesclust.inference.increments.gmd import gmd

#: BLAS / OpenMP threads of the scikit-learn fits: on a shared 2-core machine its default
#: threads made single fits of Iris take 2-450 ms from one repetition to the next.
SKLEARN_THREADS = 1


def synthetic(seed=0, n_per=2000, d=5, k=5):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, (k, d))
    parts = []
    for c in centres:
        A = rng.normal(size=(d, d)) / np.sqrt(d)
        parts.append(rng.multivariate_normal(c, A @ A.T + 0.2 * np.eye(d), n_per))
    return np.concatenate(parts)


def loglik(X, weights, means, covs):
    from scipy.special import logsumexp
    from scipy.stats import multivariate_normal

    comps = [np.log(a) + multivariate_normal(m, c).logpdf(X) for a, m, c in zip(weights, means, covs)]
    return float(logsumexp(np.stack(comps, axis=1), axis=1).sum())


def same_start(name, X, k, start, reps):
    n, d = X.shape
    M = X[np.random.default_rng(start).choice(n, k, replace=False)]
    v = float(np.mean(np.var(X, axis=0)))

    def sk_fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's ConvergenceWarning at max_iter
            return bench.peer("gmm", k, start, covariance_type="full", weights_init=np.full(k, 1.0 / k),
                              means_init=M, precisions_init=np.stack([np.eye(d) / (0.1 * v)] * k),
                              reg_covar=1e-6 * v).fit(X)

    def gmd_fit():
        return gmd(start, X, k, k, init=M)

    first = bench.seconds(gmd_fit)
    t_gmd = bench.least_seconds(gmd_fit, reps)
    time.sleep(0.5)  # XLA's worker threads spin for a while after a computation: let them park
    from threadpoolctl import threadpool_limits

    with threadpool_limits(SKLEARN_THREADS):
        t_sk = bench.least_seconds(sk_fit, reps)
    time.sleep(0.5)  # and scikit-learn's OpenMP / BLAS threads
    res, sk = gmd_fit(), sk_fit()
    ll_gmd = loglik(X, res.weights, res.means.astype(np.float64), res.covariances.astype(np.float64))
    ll_sk = loglik(X, sk.weights_, sk.means_, sk.covariances_)
    return {"benchmark": "gmd_vs_sklearn", "dataset": name, "n": n, "d": d, "k": k, "start": start,
            "gmd_k": res.n_components, "loglik_gmd": ll_gmd, "loglik_sklearn": ll_sk,
            "loglik_rel_diff": (ll_gmd - ll_sk) / abs(ll_sk), "gmd_ms": 1e3 * t_gmd,
            "sklearn_ms": 1e3 * t_sk, "time_ratio": t_gmd / t_sk, "gmd_steps": res.n_iter,
            "sklearn_iter": int(sk.n_iter_), "sklearn_threads": SKLEARN_THREADS,
            "gmd_compile_s": max(0.0, first - t_gmd)}


def full_run(name, X, k_min, k_max, reps):
    def fit():
        return gmd(0, X, k_min, k_max)

    bench.seconds(fit)
    t = bench.least_seconds(fit, reps)
    res = fit()
    return {"benchmark": "gmd_full_run", "dataset": name, "n": X.shape[0], "d": X.shape[1],
            "k_min": k_min, "k_max": k_max, "k_found": res.n_components, "steps": res.n_iter,
            "ms": 1e3 * t, "ms_per_step": 1e3 * t / res.n_iter}


def main():
    parser = bench.parser(__doc__, "2 starts, 2 repetitions (< 60 s)")
    parser.add_argument("--starts", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    args = parser.parse_args()
    starts = args.starts or (2 if args.quick else 10)
    reps = args.reps or (2 if args.quick else 5)
    bench.emit(bench.environment("gmd.py", ("numpy", "scipy", "sklearn", "jax")))
    data = {"iris": (datasets.load_iris()[0].astype(np.float64), 3), "synthetic-10k-x5": (synthetic(), 5)}
    bench.emit({"benchmark": "gmd_vs_sklearn", "note": (
        "Same start for both (weights 1/k, k random data points as means, 0.1 trace(cov(X))/d "
        "times I, the same relative ridge 1e-6); scikit-learn's other defaults (tol 1e-3, "
        "max_iter 100). GMD's MML weight update may annihilate a component even at "
        "k_min = k_max = k: where `gmd_k` < k its log-likelihood is that of fewer components "
        "(Iris: a component with at most N/2 = 7 points' support dies). GMD is not maximum "
        "likelihood at a fixed k: the MML update shrinks each weight by N/2 points' worth, so "
        "on Iris (N = 14, components of ~15 points) its log-likelihood is ~2% below "
        "scikit-learn's in the same basin (scikit-learn started from GMD's end point gains "
        "4-6 nats, 2-3%, and stays in that basin); on 10,000 x 5 (N = 20, 2,000 points each) the two agree to "
        "0.1% wherever they end in the same basin. `loglik_rel_diff` = "
        "(GMD - scikit-learn) / |scikit-learn|; `time_ratio` = GMD / scikit-learn, warm (least "
        "of the repetitions; GMD float32 under JAX, scikit-learn float64 with one BLAS thread: "
        "its default threads made single Iris fits take 2-450 ms on this shared machine).")})
    for name, (X, k) in data.items():
        rows = [same_start(name, X, k, s, reps) for s in range(starts)]
        for row in rows:
            bench.emit(row)
        med = {key: float(np.median([r[key] for r in rows]))
               for key in ("loglik_rel_diff", "time_ratio", "gmd_ms", "sklearn_ms", "gmd_steps", "sklearn_iter")}
        kept = [r for r in rows if r["gmd_k"] == k]
        bench.emit({"benchmark": "gmd_vs_sklearn_summary", "dataset": name, "n": X.shape[0], "d": X.shape[1],
                    "k": k, "starts": starts, "starts_gmd_kept_k": len(kept),
                    "median_loglik_rel_diff": med["loglik_rel_diff"],
                    "median_loglik_rel_diff_kept_k": float(np.median([r["loglik_rel_diff"] for r in kept]))
                    if kept else float("nan"),
                    "starts_within_0.1pct": sum(r["loglik_rel_diff"] >= -1e-3 for r in rows),
                    "median_time_ratio": med["time_ratio"], "median_gmd_ms": med["gmd_ms"],
                    "median_sklearn_ms": med["sklearn_ms"], "median_gmd_steps": med["gmd_steps"],
                    "median_sklearn_iter": med["sklearn_iter"]})
    bench.emit(full_run("iris", data["iris"][0], 3, 20, reps))
    bench.emit(full_run("iris", data["iris"][0], 3, 50, reps))
    if not args.quick:
        bench.emit(full_run("synthetic-10k-x5", data["synthetic-10k-x5"][0], 1, 20, min(reps, 2)))


if __name__ == "__main__":
    main()
