"""DP-means iteration cost vs scikit-learn's Lloyd k-means at the same k, in one run.

Prints one JSON line per shape.  For each (n, d, k): data from a k-component
Gaussian mixture (float32), lambda by farthest-first at k, a full DP-means run
(time per iteration including the first, cluster-opening pass; compile time
separate), then the steady-state cost of one DP-means iteration (assignment
pass + mean update + objective, jitted, median of repeats) next to the cost of
one scikit-learn Lloyd iteration at the k DP-means found (difference of two
fits with different max_iter, divided by the difference in iterations).

Usage: python benchmarks/dp_means.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from bayesclust import dp_means, farthest_first_lambda
from bayesclust.inference.dp_means import dp_means_iteration

SHAPES = [(100_000, 2, 16), (100_000, 16, 64), (100_000, 128, 100), (1_000_000, 16, 64)]
QUICK = [(20_000, 2, 16), (20_000, 16, 32)]


def mixture(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=3.0, size=(k, d))
    X = means[rng.integers(k, size=n)] + rng.normal(size=(n, d))
    return X.astype(np.float32)


def median_seconds(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def sklearn_lloyd_seconds_per_iter(X, k, seed=0):
    from sklearn.cluster import KMeans

    def fit(max_iter):
        km = KMeans(k, init="random", n_init=1, max_iter=max_iter, tol=0.0,
                    algorithm="lloyd", random_state=seed)
        t0 = time.perf_counter()
        km.fit(X)
        return time.perf_counter() - t0, km.n_iter_

    fit(2)  # warm-up (thread pools, page faults)
    best = {}
    for max_iter in (3, 13):
        runs = [fit(max_iter) for _ in range(3)]
        best[max_iter] = min(runs)
    (t1, i1), (t2, i2) = best[3], best[13]
    if i2 <= i1:
        return float("nan"), i1, i2
    return (t2 - t1) / (i2 - i1), i1, i2


def bench_shape(n, d, k):
    X = mixture(n, d, k)
    lam = farthest_first_lambda(X, k)

    t0 = time.perf_counter()
    dp_means(X, lam, max_iter=100)
    first_call = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = dp_means(X, lam, max_iter=100)
    run_seconds = time.perf_counter() - t0

    # Steady state: one iteration from the converged state, buffer as in the run.
    K_cap = 1 << max(0, res.n_clusters - 1).bit_length()
    Xc = jnp.asarray(X - X.mean(0))
    centers = jnp.zeros((max(K_cap, 32), d), jnp.float32).at[: res.n_clusters].set(
        jnp.asarray(res.centers - X.mean(0))
    )
    w = jnp.ones(n, jnp.float32)
    step = jax.jit(dp_means_iteration)
    args = (Xc, w, centers, res.n_clusters, jnp.float32(lam))
    t0 = time.perf_counter()
    jax.block_until_ready(step(*args))
    step_compile = time.perf_counter() - t0
    reps = 20 if n * d * k <= 2e8 else 7
    iter_seconds = median_seconds(lambda: step(*args), reps)

    sk_iter, i1, i2 = sklearn_lloyd_seconds_per_iter(X, res.n_clusters)
    return {
        "benchmark": "dp_means_iteration_vs_sklearn_lloyd",
        "n": n, "d": d, "k_target": k, "k_dp_means": res.n_clusters,
        "lam": lam, "dp_means_n_iter": res.n_iter,
        "dp_means_ms_per_iter_steady": iter_seconds * 1e3,
        "dp_means_ms_per_iter_full_run": run_seconds / max(res.n_iter, 1) * 1e3,
        "dp_means_compile_s": max(first_call - run_seconds, 0.0),
        "dp_means_iteration_compile_s": step_compile,
        "sklearn_lloyd_ms_per_iter": sk_iter * 1e3,
        "sklearn_iters_timed": [int(i1), int(i2)],
        "ratio_steady": iter_seconds / sk_iter,
        "ratio_full_run": (run_seconds / max(res.n_iter, 1)) / sk_iter,
    }


def environment():
    info = {"benchmark": "environment", "jax": jax.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "cpu_count": __import__("os").cpu_count()}
    try:
        import sklearn
        from threadpoolctl import threadpool_info

        info["sklearn"] = sklearn.__version__
        info["threadpools"] = [
            {k: p.get(k) for k in ("internal_api", "num_threads", "architecture")}
            for p in threadpool_info()
        ]
    except ImportError:
        pass
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes (smoke test)")
    args = parser.parse_args()
    print(json.dumps(environment()), flush=True)
    for shape in QUICK if args.quick else SHAPES:
        print(json.dumps(bench_shape(*shape)), flush=True)


if __name__ == "__main__":
    main()
