"""DP-means iteration cost vs scikit-learn's Lloyd k-means at the same k, in one run.

Prints one JSON line per shape.  For each (n, d, k): data from a k-component
Gaussian mixture (float32), lambda by farthest-first at k, a full DP-means run
(time per iteration including the first, cluster-opening passes; compile time
separate), then the steady-state cost of one DP-means iteration (assignment
pass + mean update + objective) next to one scikit-learn Lloyd iteration at the
k DP-means found.

Both sides are measured the same way, as the *marginal* cost of an iteration
inside a running fit: DP-means as (8 iterations - 2 iterations) / 6 in one
compiled loop (as inside ``dp_means``, whose buffers are allocated once per
run), scikit-learn as (13 iterations - 3) / 10.  The cost of one isolated jitted
iteration, which also pays for allocating and first touching its temporaries,
is reported beside it.  Rounds are interleaved and the least-disturbed kept.

Usage: python benchmarks/dp_means.py [--quick]
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from bayesclust import dp_means, farthest_first_lambda
from bayesclust.inference.dp_means import dp_means_iteration

SHAPES = [(100_000, 2, 16), (100_000, 16, 64), (100_000, 128, 100), (1_000_000, 16, 64)]
QUICK = [(20_000, 2, 16), (20_000, 16, 32)]


def mixture(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=3.0, size=(k, d))
    X = means[rng.integers(k, size=n)] + rng.normal(size=(n, d))
    return X.astype(np.float32)


def best_seconds(fn, reps):
    """Least wall time of ``reps`` calls (the least-disturbed run)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def sklearn_lloyd_seconds_per_iter(X, k, seed=0):
    """Marginal cost of one Lloyd iteration: (fit with 13 iterations - fit with 3) / 10.

    Started from k random points (from converged centres Lloyd would stop at once).
    """
    from sklearn.cluster import KMeans

    def fit(max_iter):
        km = KMeans(k, init="random", n_init=1, max_iter=max_iter, tol=0.0,
                    algorithm="lloyd", random_state=seed)
        t0 = time.perf_counter()
        km.fit(X)
        return time.perf_counter() - t0, km.n_iter_

    fit(2)  # warm-up (thread pools, page faults)
    (t1, i1), (t2, i2) = (min(fit(m) for _ in range(3)) for m in (3, 13))
    if i2 <= i1:
        return float("nan")
    return (t2 - t1) / (i2 - i1)


@functools.partial(jax.jit, static_argnames="m")
def iterate(X, w, centers, k, lam, m):
    """``m`` DP-means iterations in one compiled loop, as inside ``dp_means``."""
    Xw = X * w[:, None]  # loop-invariant, as in dp_means

    def body(_, carry):
        centers, k = carry
        out = dp_means_iteration(X, w, centers, k, lam, Xw)
        return out[0], out[2]

    return lax.fori_loop(0, m, body, (centers, k))


def bench_shape(n, d, k, rounds=3):
    X = mixture(n, d, k)
    lam = farthest_first_lambda(X, k)

    t0 = time.perf_counter()
    dp_means(X, lam, max_iter=100)
    first_call = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = dp_means(X, lam, max_iter=100)
    run_seconds = time.perf_counter() - t0

    # Steady state: iterations from the converged state, buffer as in the run.
    K_cap = 1 << max(0, res.n_clusters - 1).bit_length()
    Xc = jnp.asarray(X - X.mean(0))
    centers = jnp.zeros((max(K_cap, 32), d), jnp.float32).at[: res.n_clusters].set(
        jnp.asarray(res.centers - X.mean(0))
    )
    w = jnp.ones(n, jnp.float32)
    args = (Xc, w, centers, jnp.int32(res.n_clusters), jnp.float32(lam))
    step = jax.jit(dp_means_iteration)
    t0 = time.perf_counter()
    jax.block_until_ready(step(*args))
    step_compile = time.perf_counter() - t0
    for m in (2, 8):
        jax.block_until_ready(iterate(*args, m=m))
    reps = 5 if n * d * k <= 2e8 else 3
    in_loop, single, lloyd = [], [], []
    # Interleaved rounds, the least-disturbed of each kept: the machine may be shared.
    for _ in range(rounds):
        t2 = best_seconds(lambda: iterate(*args, m=2), reps)
        t8 = best_seconds(lambda: iterate(*args, m=8), reps)
        in_loop.append((t8 - t2) / 6)
        single.append(best_seconds(lambda: step(*args), reps))
        lloyd.append(sklearn_lloyd_seconds_per_iter(X, res.n_clusters))
    iter_seconds, single_seconds, sk_iter = min(in_loop), min(single), float(np.nanmin(lloyd))
    return {
        "benchmark": "dp_means_iteration_vs_sklearn_lloyd",
        "n": n, "d": d, "k_target": k, "k_dp_means": res.n_clusters,
        "lam": lam, "dp_means_n_iter": res.n_iter,
        "dp_means_ms_per_iter_steady": iter_seconds * 1e3,
        "dp_means_ms_single_call": single_seconds * 1e3,
        "dp_means_ms_per_iter_full_run": run_seconds / max(res.n_iter, 1) * 1e3,
        "dp_means_compile_s": max(first_call - run_seconds, 0.0),
        "dp_means_iteration_compile_s": step_compile,
        "sklearn_lloyd_ms_per_iter": sk_iter * 1e3,
        "ratio_steady": iter_seconds / sk_iter,
        "ratio_single_call": single_seconds / sk_iter,
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
