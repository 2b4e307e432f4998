"""DP-means iteration cost vs scikit-learn's Lloyd k-means at the same k, in one run.

Prints one JSON line per shape, after an environment line.  For each (n, d, k)
of the grid (100k | 1M points) x (2 | 16 | 128 dimensions): data from a
k-component Gaussian mixture (float32), lambda by farthest-first at k, a full
DP-means run (time per iteration including the first, cluster-opening passes;
compile time separate), then the steady-state cost of one DP-means iteration
(assignment pass + mean update + objective) next to one scikit-learn Lloyd
iteration at the k DP-means found.

Both sides are measured the same way, as the *marginal* cost of an iteration
inside a running fit: DP-means as (8 iterations - 2 iterations) / 6 in one
compiled loop (as inside ``dp_means``, whose buffers are allocated once per
run), scikit-learn as (13 iterations - 3) / 10.  The cost of one isolated jitted
iteration, which also pays for allocating and first touching its temporaries,
is reported beside it.  Rounds are interleaved and the least-disturbed kept
(fewer rounds and repeats at the largest shapes, to bound the run time).

Two further references:

* The plain NumPy per-point loop (Kulis & Jordan 2012, Algorithm 1, as a user
  would write it: for each point in order, its squared distances to the current
  centres as one NumPy vector operation, a new cluster at the point if the
  least exceeds lambda, else the nearest; then the mean update).  One full pass
  plus mean update is timed once, from the converged centres of the DP-means
  run (so, at convergence, no cluster opens and k is the same), for
  n <= ``--numpy-loop-max-n``; ``speedup_vs_numpy_loop`` = its time / the
  DP-means steady time per iteration.
* Achieved GFLOP/s: the distance product, 2 n k d flops per iteration (k = the
  clusters DP-means found), is the dominant flop count of an iteration on both
  sides, so ``*_gflops = 2 n k d / seconds per iteration / 1e9`` (useful work:
  padded buffer slots are not counted).  It is given as a fraction of the
  machine's float32 matmul rate, measured once per run (best of several square
  float32 products, with XLA's ``jnp.matmul`` and NumPy's ``np.matmul``; the
  larger is ``machine_matmul_gflops`` in the environment line).  At d = 2 the
  product is a small part of the work, so the fraction is tiny there.

A second table (``dp_means_many_clusters_opening``): uniform
data in the unit cube, with lambda by farthest-first at k = 1,000-2,000, so the
first pass (from the one cluster at the global mean) opens about that many
clusters from about a million candidates.  It reports that first pass warm
(``dp_means(max_iter=1)``: every buffer doubling's failed attempt included,
compiles excluded) against a steady iteration at the final k and against one
scikit-learn Lloyd iteration at that k, and the compile time of the whole run.

A third table (``dp_means_restarts_vs_pdc``): the DP-means objective reached at the
same lambda (farthest-first at the number of centres) on make_blobs 100k x 2 (10
centres) and 100k x 16 (50 centres), by Algorithm 1 in the given order, by the best
of 10 random pass orders (``n_init=10, init="mean"``), by one and by ten k-means++
starts (``init="k-means++"``; ten is ``DPMeans``' default), and by the peer
``pdc-dp-means`` (``pdc_dp_means.DPMeans(delta=lam)``: k-means++ with ``n_clusters``
initial centres, Lloyd iterations that add the farthest point while it is farther
than ``delta``, best of ``n_init=10``; its default ``n_clusters=8`` and ``n_clusters=1``,
the better kept).  Every objective is ``bayesclust.metrics.dp_means_objective`` on the
labels (float64).  The peer pins scikit-learn 1.2, so it runs in its own interpreter
(``--pdc-python``, default ``$PDC_DP_MEANS_PYTHON``) as a subprocess in the same run;
without one, the row says so and the best of 10 orders stands in.  Seconds are warm
(compiles excluded) on both sides.

Usage: python benchmarks/dp_means.py [--quick] [--numpy-loop-max-n N] [--matmul-size M]
    [--skip-grid] [--skip-many-clusters] [--skip-restarts] [--pdc-python PATH]
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time

import _common as bench
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from bayesclust import dp_means, farthest_first_lambda
from bayesclust.inference.hard.dp_means import dp_means_iteration

SHAPES = [
    (100_000, 2, 16), (100_000, 16, 64), (100_000, 128, 100),
    (1_000_000, 2, 16), (1_000_000, 16, 64), (1_000_000, 128, 100),
]
QUICK = [(20_000, 2, 16), (20_000, 16, 32)]
#: (n, d, k) of the cluster-opening benchmark: uniform data, so nothing stops
#: the first pass from opening about k clusters.
MANY_CLUSTERS = [(1_000_000, 2, 1000), (200_000, 16, 2000)]
MANY_CLUSTERS_QUICK = [(50_000, 2, 300)]
#: Above this n * d * k, fewer repeats per round ...
_LARGE = 2e8
#: ... and above this one, fewer rounds too (1M x 128 x 100: ~0.25 s per Lloyd iteration).
_HUGE = 5e9


def mixture(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=3.0, size=(k, d))
    X = means[rng.integers(k, size=n)] + rng.normal(size=(n, d))
    return X.astype(np.float32)


def sklearn_lloyd_seconds_per_iter(X, k, seed=0, repeats=3):
    """Marginal cost of one Lloyd iteration: (fit with 13 iterations - fit with 3) / 10.

    Started from k random points (from converged centres Lloyd would stop at once).
    Each fit is the least of ``repeats``.
    """
    def fit(max_iter):
        km = bench.peer("kmeans", k, seed, init="random", n_init=1, max_iter=max_iter, tol=0.0,
                        algorithm="lloyd")
        return bench.seconds(lambda: km.fit(X)), km.n_iter_

    fit(2)  # warm-up (thread pools, page faults)
    (t1, i1), (t2, i2) = (min(fit(m) for _ in range(repeats)) for m in (3, 13))
    if i2 <= i1:
        return float("nan")
    return (t2 - t1) / (i2 - i1)


def numpy_loop_pass(X, centers, lam):
    """One DP-means iteration as a plain NumPy per-point loop (Kulis & Jordan 2012, Algorithm 1).

    A straightforward reference such as a user would write: the points in
    order, each one's squared distances to the current centres as one vector
    operation, a new cluster at the point when the least exceeds ``lam``;
    then every cluster's mean (an empty cluster keeps its centre).
    Returns ``(labels, new centres)``.
    """
    C = np.array(centers, dtype=X.dtype)
    labels = np.empty(len(X), dtype=np.int64)
    for i, x in enumerate(X):
        d2 = ((C - x) ** 2).sum(axis=1)
        j = int(d2.argmin())
        if d2[j] > lam:
            C = np.vstack([C, x])
            j = len(C) - 1
        labels[i] = j
    k = len(C)
    sums = np.zeros_like(C)
    np.add.at(sums, labels, X)
    counts = np.bincount(labels, minlength=k)
    nonempty = counts > 0
    C[nonempty] = sums[nonempty] / counts[nonempty, None]
    return labels, C


def numpy_loop_seconds(X, res, lam):
    """Time one pass + mean update of :func:`numpy_loop_pass` from DP-means' converged centres."""
    (labels, C), seconds = bench.timed(lambda: numpy_loop_pass(X, res.centers, lam))
    return seconds, {
        "numpy_loop_new_clusters": int(len(C) - res.n_clusters),
        "numpy_loop_label_agreement": float(np.mean(labels == np.asarray(res.labels))),
    }


@functools.partial(jax.jit, static_argnames="m")
def iterate(X, w, centers, k, lam, m):
    """``m`` DP-means iterations in one compiled loop, as inside ``dp_means``."""
    Xw = X * w[:, None]  # loop-invariant, as in dp_means

    def body(_, carry):
        centers, k = carry
        out = dp_means_iteration(X, w, centers, k, lam, Xw)
        return out[0], out[2]

    return lax.fori_loop(0, m, body, (centers, k))


def steady_args(X, res, lam):
    """``iterate`` arguments from a converged run: centred data, its centres in a buffer
    of the size ``dp_means`` grows to (a power of two, at least 32)."""
    n, d = X.shape
    K_cap = max(1 << max(0, res.n_clusters - 1).bit_length(), 32)
    mean = X.mean(0)
    centers = jnp.zeros((K_cap, d), jnp.float32).at[: res.n_clusters].set(
        jnp.asarray(res.centers - mean)
    )
    return (jnp.asarray(X - mean), jnp.ones(n, jnp.float32), centers,
            jnp.int32(res.n_clusters), jnp.float32(lam))


def gflops(n, k, d, seconds):
    """Rate of the distance product (2 n k d flops) done in ``seconds``."""
    return 2.0 * n * k * d / seconds / 1e9


def bench_shape(n, d, k, peak_gflops=float("nan"), numpy_loop_max_n=100_000, rounds=None):
    size = n * d * k
    if rounds is None:
        rounds = 2 if size > _HUGE else 5
    reps = 5 if size <= _LARGE else 3 if size <= _HUGE else 2
    sk_repeats = 5 if size <= _HUGE else 2
    X = mixture(n, d, k)
    lam = farthest_first_lambda(X, k)

    first_call = bench.seconds(lambda: dp_means(X, lam, max_iter=100))
    res, run_seconds = bench.timed(lambda: dp_means(X, lam, max_iter=100))

    args = steady_args(X, res, lam)
    step = jax.jit(dp_means_iteration)
    step_compile = bench.seconds(lambda: step(*args))
    for m in (2, 8):
        jax.block_until_ready(iterate(*args, m=m))
    in_loop, single, lloyd = [], [], []
    # Interleaved rounds, the least-disturbed of each kept: the machine may be shared.
    for _ in range(rounds):
        time.sleep(0.5)  # let scikit-learn's OpenMP threads stop spinning (see below)
        t2 = bench.least_seconds(lambda: iterate(*args, m=2), reps)
        t8 = bench.least_seconds(lambda: iterate(*args, m=8), reps)
        in_loop.append((t8 - t2) / 6)
        single.append(bench.least_seconds(lambda: step(*args), reps))
        # XLA's worker threads spin for a while after a computation; let them park
        # before scikit-learn's OpenMP/BLAS threads start (they share the 2 cores).
        time.sleep(0.5)
        lloyd.append(sklearn_lloyd_seconds_per_iter(X, res.n_clusters, repeats=sk_repeats))
    iter_seconds, single_seconds, sk_iter = min(in_loop), min(single), float(np.nanmin(lloyd))
    kf = res.n_clusters
    row = {
        "benchmark": "dp_means_iteration_vs_sklearn_lloyd",
        "n": n, "d": d, "k_target": k, "k_dp_means": kf,
        "lam": lam, "dp_means_n_iter": res.n_iter, "dp_means_converged": bool(res.converged),
        "rounds": rounds, "reps": reps,
        "dp_means_ms_per_iter_steady": iter_seconds * 1e3,
        "dp_means_ms_single_call": single_seconds * 1e3,
        "dp_means_ms_per_iter_full_run": run_seconds / max(res.n_iter, 1) * 1e3,
        "dp_means_compile_s": max(first_call - run_seconds, 0.0),
        "dp_means_iteration_compile_s": step_compile,
        "sklearn_lloyd_ms_per_iter": sk_iter * 1e3,
        "ratio_steady": iter_seconds / sk_iter,
        "ratio_single_call": single_seconds / sk_iter,
        "ratio_full_run": (run_seconds / max(res.n_iter, 1)) / sk_iter,
        "dp_means_gflops": gflops(n, kf, d, iter_seconds),
        "sklearn_gflops": gflops(n, kf, d, sk_iter),
    }
    row["dp_means_fraction_of_peak"] = row["dp_means_gflops"] / peak_gflops
    row["sklearn_fraction_of_peak"] = row["sklearn_gflops"] / peak_gflops
    if n <= numpy_loop_max_n:
        loop_seconds, extra = numpy_loop_seconds(X, res, lam)
        row["numpy_loop_ms_per_iter"] = loop_seconds * 1e3
        row["speedup_vs_numpy_loop"] = loop_seconds / iter_seconds
        row.update(extra)
    return row


MANY_NOTE = (
    "Uniform data in the unit cube (no cluster structure), lambda by farthest-first at "
    "k_target; the first pass starts from the single cluster at the global mean, so almost "
    "every point is a candidate and about k clusters open in it. `first_pass_s` = warm "
    "`dp_means(max_iter=1)`: the failed attempts of every buffer growth (each stops at the "
    "first candidate block that overfills its buffer) and the pass itself, compiles "
    "excluded; `steady_iteration_s` = one iteration at the final k (compiled loop, as in "
    "the grid above); `sklearn_lloyd_iteration_s` = one scikit-learn Lloyd iteration at "
    "that k; `run_s` = warm `dp_means(max_iter=8)`; `compile_s` = both runs' first-call "
    "excess (one compile per buffer size: 32, then the size the failed pass is known to "
    "need, then doubling). Before this benchmark existed (same machine, same data) a failed "
    "attempt scanned all candidates and the buffer only doubled: warm run 4.7 s / 5.0 s "
    "and first call 24 s / 46 s for these two shapes (5 iterations), against 1.7 s / 3.1 s "
    "and 13 s / 33 s after. Then the native nearest-centre kernel and the super-block "
    "candidate scan (candidates already covered by a seed dropped 4,096 at a time): first "
    "pass 1.11 -> 0.34 s and 1.09 -> 0.28 s, steady iteration / scikit-learn 0.41 -> 0.17 "
    "and 1.21 -> 0.53, warm 8-iteration run 1.96 -> 0.73 s and 3.06 -> 1.02 s."
)


def bench_many_clusters(n, d, k, seed=0):
    """The first pass opening ~k clusters among ~n candidates vs a steady iteration."""
    X = np.random.default_rng(seed).uniform(size=(n, d)).astype(np.float32)
    lam = farthest_first_lambda(X, k)
    one, first_pass_cold = bench.timed(lambda: dp_means(X, lam, max_iter=1))
    first_pass = bench.least_seconds(lambda: dp_means(X, lam, max_iter=1).labels, 2)
    res, run_cold = bench.timed(lambda: dp_means(X, lam, max_iter=8))
    run = bench.least_seconds(lambda: dp_means(X, lam, max_iter=8).labels, 2)

    args = steady_args(X, res, lam)
    for m in (1, 3):
        jax.block_until_ready(iterate(*args, m=m))
    steady = (bench.least_seconds(lambda: iterate(*args, m=3), 2)
              - bench.least_seconds(lambda: iterate(*args, m=1), 2)) / 2
    time.sleep(0.5)
    sk_iter = sklearn_lloyd_seconds_per_iter(X, res.n_clusters, repeats=1)
    return {
        "benchmark": "dp_means_many_clusters_opening",
        "n": n, "d": d, "k_target": k,
        "clusters_after_first_pass": one.n_clusters,
        "clusters_final": res.n_clusters, "iterations": res.n_iter,
        "first_pass_s": first_pass,
        "steady_iteration_s": steady,
        "first_pass_over_steady_iteration": first_pass / steady,
        "sklearn_lloyd_iteration_s": sk_iter,
        "first_pass_over_sklearn_iteration": first_pass / sk_iter,
        "steady_over_sklearn_iteration": steady / sk_iter,
        "run_s": run,
        "compile_s": max(first_pass_cold - first_pass, 0.0) + max(run_cold - run, 0.0),
    }


#: (n, d, centres) of the restarts benchmark (make_blobs, random_state=0).
RESTARTS = [(100_000, 2, 10), (100_000, 16, 50)]
RESTARTS_QUICK = [(20_000, 2, 10), (20_000, 16, 50)]

RESTARTS_NOTE = (
    "The DP-means objective (`metrics.dp_means_objective` on the labels, float64) at the same "
    "lambda (farthest-first at the number of centres) on make_blobs (random_state=0, float32): "
    "`given_order` = Algorithm 1 (Kulis & Jordan 2012) in the rows' order; `orders_10` = best "
    "of 10 random pass orders (`n_init=10, init=\"mean\"`); `kmeanspp_1` / `kmeanspp_10` = "
    "one / ten k-means++ starts (`init=\"k-means++\"`, rng_key=0; ten = `DPMeans`' default); "
    "`pdc` = pdc-dp-means 0.0.8 (`DPMeans(delta=lam, random_state=0)`, its n_init=10; the "
    "better of n_clusters=8 (its default) and 1, `pdc_config`), run in its own interpreter in "
    "the same run. `*_k` = clusters; `*_s` = warm seconds. `default_over_pdc` = kmeanspp_10 / "
    "pdc objective (target <= 1); `time_ratio` = kmeanspp_10 / pdc seconds."
)

_PDC_SCRIPT = r"""
import json, sys, time
import numpy as np
from pdc_dp_means import DPMeans
X = np.load(sys.argv[1]); lam = float(sys.argv[2]); out = {}
for k0 in (8, 1):
    DPMeans(n_clusters=k0, delta=lam, random_state=0).fit(X[:2000])  # warm-up
    t = time.perf_counter()
    m = DPMeans(n_clusters=k0, delta=lam, random_state=0).fit(X)
    out[k0] = time.perf_counter() - t
    np.save(sys.argv[3] + f"_{k0}.npy", m.labels_)
import pdc_dp_means, sklearn
print(json.dumps({"seconds": out, "sklearn": sklearn.__version__}))
"""


def pdc_dp_means(X, lam, python):
    """Labels and warm seconds of pdc-dp-means at ``delta=lam`` (n_clusters 8 and 1), or None."""
    if not python:
        try:
            import pdc_dp_means  # noqa: F401
        except ImportError:
            return None
        python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "X.npy"), X)
        out = subprocess.run([python, "-c", _PDC_SCRIPT, os.path.join(tmp, "X.npy"), repr(lam),
                              os.path.join(tmp, "labels")], capture_output=True, text=True)
        if out.returncode != 0:
            return None
        info = json.loads(out.stdout.strip().splitlines()[-1])
        return {int(k0): (np.load(os.path.join(tmp, f"labels_{k0}.npy")), s)
                for k0, s in info["seconds"].items()}


def bench_restarts(n, d, centres, pdc_python=None):
    """Objectives at the same lambda: given order, 10 orders, k-means++ x1 / x10, pdc-dp-means."""
    from sklearn.datasets import make_blobs

    from bayesclust.metrics import dp_means_objective

    X = make_blobs(n_samples=n, n_features=d, centers=centres, random_state=0)[0]
    X = X.astype(np.float32)
    lam = farthest_first_lambda(X, centres)
    runs = {
        "given_order": dict(),
        "orders_10": dict(n_init=10, init="mean", rng_key=0),
        "kmeanspp_1": dict(init="k-means++", rng_key=0),
        "kmeanspp_10": dict(n_init=10, init="k-means++", rng_key=0),
    }
    row = {"benchmark": "dp_means_restarts_vs_pdc", "n": n, "d": d, "centres": centres,
           "lam": lam}
    for name, kw in runs.items():
        dp_means(X, lam, **kw)  # compile
        res, seconds = bench.timed(lambda kw=kw: dp_means(X, lam, **kw))
        row[name] = dp_means_objective(X, res.labels, lam)
        row[name + "_k"] = res.n_clusters
        row[name + "_s"] = seconds
    peer = pdc_dp_means(X, lam, pdc_python)
    if peer is None:
        row["pdc"] = "not run (no interpreter with pdc-dp-means): compare orders_10"
        return row
    scored = {k0: (dp_means_objective(X, z, lam), len(np.unique(z)), s)
              for k0, (z, s) in peer.items()}
    k0 = min(scored, key=lambda c: scored[c][0])
    row["pdc"], row["pdc_k"], row["pdc_s"] = scored[k0]
    row["pdc_config"] = f"n_clusters={k0}"
    row["pdc_default_config"] = scored[8][0]
    row["default_over_pdc"] = row["kmeanspp_10"] / row["pdc"]
    row["time_ratio"] = row["kmeanspp_10_s"] / row["pdc_s"]
    return row


def matmul_gflops(size=4096, reps=3):
    """Best float32 rate of a ``size`` x ``size`` product: XLA (``jnp.matmul``) and NumPy (BLAS)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    flops = 2.0 * size**3
    mm = jax.jit(jnp.matmul)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    jax.block_until_ready(mm(ja, jb))  # compile
    xla = flops / bench.least_seconds(lambda: mm(ja, jb), reps) / 1e9
    np.matmul(a, b)  # warm-up
    blas = flops / bench.least_seconds(lambda: np.matmul(a, b), reps) / 1e9
    return {"matmul_size": size, "xla_matmul_gflops": xla, "numpy_matmul_gflops": blas,
            "machine_matmul_gflops": max(xla, blas)}


def environment():
    extra = {}
    try:
        from threadpoolctl import threadpool_info

        extra["threadpools"] = [
            {k: p.get(k) for k in ("internal_api", "num_threads", "architecture")}
            for p in threadpool_info()
        ]
    except ImportError:
        pass
    try:
        extra["load_average"] = list(os.getloadavg())
    except OSError:
        pass
    return bench.environment("dp_means.py", ("jax", "numpy", "sklearn"), **extra)


def main():
    parser = bench.parser(__doc__, "small shapes (smoke test)")
    parser.add_argument("--numpy-loop-max-n", type=int, default=100_000,
                        help="time the per-point NumPy loop only up to this n (default 100000)")
    parser.add_argument("--matmul-size", type=int, default=None,
                        help="side of the square matmul measuring the machine's rate "
                             "(default 4096; 1024 with --quick)")
    parser.add_argument("--skip-grid", action="store_true",
                        help="skip the iteration grid against scikit-learn")
    parser.add_argument("--skip-many-clusters", action="store_true",
                        help="skip the cluster-opening benchmark")
    parser.add_argument("--skip-restarts", action="store_true",
                        help="skip the restarts benchmark against pdc-dp-means")
    parser.add_argument("--pdc-python", default=os.environ.get("PDC_DP_MEANS_PYTHON"),
                        help="a Python interpreter with pdc-dp-means installed "
                             "(default $PDC_DP_MEANS_PYTHON, else this one if it has it)")
    args = parser.parse_args()
    env = environment()
    env.update(matmul_gflops(args.matmul_size or (1024 if args.quick else 4096)))
    bench.emit(env)
    for shape in [] if args.skip_grid else QUICK if args.quick else SHAPES:
        row = bench_shape(*shape, peak_gflops=env["machine_matmul_gflops"],
                          numpy_loop_max_n=args.numpy_loop_max_n)
        bench.emit(row)
    many = [] if args.skip_many_clusters else MANY_CLUSTERS_QUICK if args.quick else MANY_CLUSTERS
    if many:
        bench.emit({"benchmark": "dp_means_many_clusters_opening", "note": MANY_NOTE})
    for shape in many:
        bench.emit(bench_many_clusters(*shape))
    restarts = [] if args.skip_restarts else RESTARTS_QUICK if args.quick else RESTARTS
    if restarts:
        bench.emit({"benchmark": "dp_means_restarts_vs_pdc", "note": RESTARTS_NOTE})
    for shape in restarts:
        bench.emit(bench_restarts(*shape, pdc_python=args.pdc_python))


if __name__ == "__main__":
    main()
