"""Time to first result: import, first fit (compilation cache cold and warm), refits, warm fit.

Every measurement of a "first" runs in a fresh Python process (a subprocess of this
script), with bayesclust's persistent compilation cache pointed at a new temporary
directory (cold), then a second process on the same directory (warm).  Per method and
size, one JSON line:

* ``import_s``: ``import bayesclust``; ``access_s``: then the estimator class (this
  imports JAX, and scikit-learn for the estimators);
* ``first_fit_s`` (cache cold) and ``first_fit_warm_cache_s`` (second process);
* ``plus7_fit_s``: a fit on the data with 7 more rows, right after the first fit, and
  ``plus7_compiles``: the XLA compilations it ran (``jax.monitoring``'s backend-compile
  events, eager operations included; 0 when every program is reused -- a count the load
  of the machine cannot change, unlike the seconds);
* ``max_iter_fit_s``: a fit with another ``max_iter`` (methods that have one);
* ``warm_fit_s``: the least of two more fits of the first data (everything compiled);
* ``peer_fit_s`` / ``peer_warm_fit_s``: the scikit-learn peer (``KMeans``, k-means++;
  ``BayesianGaussianMixture`` for the DP and HDP Gaussian mixtures) in the same process, its
  first and its least-of-two fit; ratios ``first / peer`` next to them.

Every estimator of ``bayesclust.estimators`` has a row (``METHODS``), with the
options of ``OPTIONS`` (small ensembles and chains: first-call costs, not accuracy).

The CLI row times ``bayesclust fit FILE.csv --n-clusters 3`` as a whole command (wall
seconds, process start to exit), cache cold and warm.

Usage: python benchmarks/first_call.py [--quick] [--methods DPMeans SMIC ...]

``--quick``: every method at iris size, DPMeans also at 10k x 16, the CLI on 300 x 2.
The full run adds 10k x 16 and 100k x 16 for the methods of ``LARGE`` whose cost is not
quadratic in n there (the rows of the skipped ones say why).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as bench

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: The estimator options: a first fit's cost at iris size, small ensembles and chains.
OPTIONS = {
    "DPMeans": dict(n_clusters=3),
    "DPGaussianMixture": dict(num_warmup=20, num_samples=20, random_state=0),
    "HardHDP": dict(n_local=3, n_global=3),
    "HDPGaussianMixture": dict(num_warmup=20, num_samples=20, random_state=0),
    "DiscriminativeClustering": dict(n_clusters=3, random_state=0),
    "HardDC": dict(n_clusters=3, random_state=0),
    "CECIB": dict(n_clusters=3, n_init=1, random_state=0),
    "SpectralDPMeans": dict(),
    "PenalizedNormalizedCut": dict(),
    "SMIC": dict(n_clusters=3, t=7, random_state=0),
    "EvidenceAccumulation": dict(n_clusters=3, n_partitions=30, random_state=0),
    "ACCCS": dict(n_clusters=3, n_partitions=30, generations=20, random_state=0),
    "ConstrainedEAC": dict(n_clusters=3, n_partitions=30, random_state=0),
    "AspectConsensus": dict(n_clusters=3, n_partitions=30, random_state=0),
    "EmbeddedConsensus": dict(n_clusters=3, n_partitions=30, random_state=0),
    "HypergraphConsensus": dict(n_clusters=3, n_partitions=30, random_state=0),
    "PairwiseConsensus": dict(n_clusters=3, n_partitions=30, random_state=0),
    "KLMeansConsensus": dict(n_clusters=3, n_partitions=30, random_state=0),
    "SLDID": dict(),
    "SLAGLO": dict(),
    "GMDID": dict(random_state=0),
    "MAPDIDClassifier": dict(random_state=0),
}
METHODS = list(OPTIONS)
#: The methods the full run also measures at 10k x 16 and 100k x 16.
LARGE = ["DPMeans", "DPGaussianMixture", "HardHDP", "EvidenceAccumulation", "SMIC", "CECIB"]
SIZES = {"iris": (150, 4), "10k": (10_000, 16), "100k": (100_000, 16)}
#: Sizes a method is not run at, and why.
SKIP = {
    ("EvidenceAccumulation", "100k"): "co-association of 100k points x 30 partitions: minutes",
    ("SMIC", "100k"): "kernel eigenproblem at 100k: minutes",
    ("DPGaussianMixture", "100k"): "collapsed Gibbs, 40 sweeps at 100k: minutes",
}
#: A refit with another max_iter: the constructor argument, or None (no such argument).
MAX_ITER = {"DPMeans": "max_iter", "HardHDP": "max_iter", "CECIB": "max_iter",
            "HardDC": "max_iter", "KLMeansConsensus": "max_iter"}
#: Fitted with the classes as ``y`` (supervised or semi-supervised methods).
WITH_Y = {"DiscriminativeClustering", "HardDC", "MAPDIDClassifier"}
#: Fitted with group ids (one data set per id).
WITH_GROUPS = {"HardHDP", "HDPGaussianMixture"}
#: Fitted with one must-link and one cannot-link pair.
WITH_CONSTRAINTS = {"ACCCS", "ConstrainedEAC"}


def _data(size: str):
    """``(X, y)``: iris and its classes, or 8 Gaussian blobs and their ids."""
    import numpy as np

    if size == "iris":
        from sklearn.datasets import load_iris

        X, y = load_iris(return_X_y=True)
    else:
        n, d = SIZES[size]
        rng = np.random.default_rng(0)
        centres = rng.normal(scale=6.0, size=(8, d))
        y = rng.integers(8, size=n)
        X = centres[y] + rng.normal(size=(n, d))
    return X.astype(np.float32), y


def _estimator(bc, method: str, **extra):
    return getattr(bc, method)(**OPTIONS[method], **extra)


def _fit(est, method: str, X, y):
    import numpy as np

    if method in WITH_GROUPS:
        return est.fit(X, group_ids=np.arange(X.shape[0]) % 4)
    if method in WITH_Y:
        return est.fit(X, y)
    if method == "CECIB":
        y = np.full(X.shape[0], -1)
        y[::10] = (X[::10, 0] > np.median(X[:, 0])).astype(int)
        return est.fit(X, y)
    if method in WITH_CONSTRAINTS:
        return est.fit(X, must_link=[(0, 1)], cannot_link=[(0, X.shape[0] - 1)])
    return est.fit(X)


def _peer(method: str, X):
    if method in ("DPGaussianMixture", "HDPGaussianMixture"):
        from sklearn.mixture import BayesianGaussianMixture

        return BayesianGaussianMixture(n_components=3, random_state=0).fit(X)
    from sklearn.cluster import KMeans

    return KMeans(3, init="k-means++", n_init=1, random_state=0).fit(X)


def child(method: str, size: str, first_only: bool) -> dict:
    """One fresh process: everything measured after its own start."""
    t0 = time.perf_counter()
    import bayesclust as bc

    out = {"import_s": time.perf_counter() - t0}
    cls_t0 = time.perf_counter()
    getattr(bc, method)
    out["access_s"] = time.perf_counter() - cls_t0
    X, y = _data(size)
    out["first_fit_s"] = bench.seconds(lambda: _fit(_estimator(bc, method), method, X, y))
    if first_only:
        return out
    import numpy as np

    X7, y7 = np.vstack([X, X[:7] + 0.01]), np.concatenate([y, y[:7]])
    from jax import monitoring

    compiles = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(duration)

    monitoring.register_event_duration_secs_listener(listener)
    out["plus7_fit_s"] = bench.seconds(lambda: _fit(_estimator(bc, method), method, X7, y7))
    monitoring.unregister_event_duration_listener(listener)
    out["plus7_compiles"] = len(compiles)
    if method in MAX_ITER:
        est = _estimator(bc, method, **{MAX_ITER[method]: 37})
        out["max_iter_fit_s"] = bench.seconds(lambda: _fit(est, method, X, y))
    out["warm_fit_s"] = bench.least_seconds(lambda: _fit(_estimator(bc, method), method, X, y), 2)
    out["peer_fit_s"] = bench.seconds(lambda: _peer(method, X))
    out["peer_warm_fit_s"] = bench.least_seconds(lambda: _peer(method, X), 2)
    return out


def _run_child(args: list[str], cache: str, timeout: float) -> dict:
    env = dict(os.environ, BAYESCLUST_CACHE="1", BAYESCLUST_CACHE_DIR=cache)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                              text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(lines[-1])


def measure(method: str, size: str, timeout: float) -> dict:
    n, d = SIZES[size]
    row = {"benchmark": "first_call", "method": method, "n": n, "d": d}
    if (method, size) in SKIP:
        return {**row, "skipped": SKIP[(method, size)]}
    with tempfile.TemporaryDirectory() as cache:
        cold = _run_child([method, size], cache, timeout)
        warm = _run_child([method, size, "--first-only"], cache, timeout)
    if "error" in cold or "error" in warm:
        return {**row, "error": cold.get("error") or warm.get("error")}
    row.update({k: round(v, 3) for k, v in cold.items()})
    row["plus7_compiles"] = cold["plus7_compiles"]
    row["first_fit_warm_cache_s"] = round(warm["first_fit_s"], 3)
    peer, peer_warm = cold["peer_fit_s"], cold["peer_warm_fit_s"]
    row["first_cold / peer"] = round(cold["first_fit_s"] / peer, 1)
    row["first_warm_cache / peer"] = round(warm["first_fit_s"] / peer, 1)
    row["warm / peer_warm"] = round(cold["warm_fit_s"] / peer_warm, 2)
    row["plus7 / warm"] = round(cold["plus7_fit_s"] / cold["warm_fit_s"], 2)
    if "max_iter_fit_s" in cold:
        row["max_iter / warm"] = round(cold["max_iter_fit_s"] / cold["warm_fit_s"], 2)
    return row


def measure_cli(n: int, d: int, timeout: float) -> dict:
    import numpy as np

    row = {"benchmark": "first_call", "method": "CLI `bayesclust fit`", "n": n, "d": d}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 5.0 * rng.integers(3, size=(n, 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.csv"
        np.savetxt(path, X, delimiter=",")
        env = dict(os.environ, BAYESCLUST_CACHE="1", BAYESCLUST_CACHE_DIR=str(Path(tmp) / "jax"))
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        walls = []
        for _ in range(2):  # cold, then warm cache
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "bayesclust.cli", "fit", str(path),
                            "--n-clusters", "3", "--out", str(Path(tmp) / "labels.csv")],
                           check=True, capture_output=True, env=env, timeout=timeout)
            walls.append(time.perf_counter() - t0)
    row.update({"first_fit_s": round(walls[0], 3), "first_fit_warm_cache_s": round(walls[1], 3)})
    return row


def main():
    if sys.argv[1:2] == ["--child"]:
        args = sys.argv[2:]
        print(json.dumps(child(args[0], args[1], "--first-only" in args)), flush=True)
        return
    p = bench.parser(__doc__, "iris size for every method, DPMeans also at 10k x 16, the CLI")
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    p.add_argument("--sizes", nargs="+", default=None, choices=list(SIZES))
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    args = p.parse_args()
    bench.emit(bench.environment("first_call.py", ("jax", "sklearn")))
    bench.emit({"benchmark": "first_call", "note": (
        "Seconds; every *first* in a fresh process, the persistent compilation cache in a new "
        "directory (cold) and then reused by a second process (warm cache). plus7 = fit on 7 "
        "more rows, max_iter = fit with max_iter=37, both right after the first fit; warm = "
        "least of two more fits; plus7_compiles = XLA compilations during the plus7 fit. "
        "peer = scikit-learn KMeans (k-means++, n_init=1; "
        "BayesianGaussianMixture for the DP and HDP Gaussian mixtures) in the same process. "
        "Targets: plus7 "
        "and max_iter <= 1.5x warm; first DP-means fit at 100k x 16 with the cache warm <= 2x "
        "the peer's fit; the CLI on 300 x 2 <= 3 s.")})
    for method in args.methods:
        sizes = args.sizes or (["iris", "10k"] if method == "DPMeans" else ["iris"]) if args.quick \
            else (args.sizes or (list(SIZES) if method in LARGE else ["iris"]))
        for size in sizes:
            bench.emit(measure(method, size, args.timeout))
    bench.emit(measure_cli(300, 2, args.timeout))
    if not args.quick:
        bench.emit(measure_cli(10_000, 16, args.timeout))


if __name__ == "__main__":
    main()
