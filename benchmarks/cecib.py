"""CEC-IB (Śmieja & Geiger 2017) vs scikit-learn GaussianMixture and KMeans, in one run.

Prints JSON lines:

* ``cecib_nmi``: NMI to the true classes as the labelled fraction grows (0/5/10/20/30 %
  of the points, labelled with their true class; mean over label draws) on Iris, Wine and
  Digits, for CEC-IB with beta = 1 and beta = beta_0 (started with 2 x #classes clusters,
  random-partition starts, 10 restarts, eps = 0.05 -- 0.025 on Digits, where 20 clusters of
  5 % would not fit) next to scikit-learn's GaussianMixture (full covariances) and KMeans at
  the true number of classes (both unsupervised: they cannot use the labels).  Wall times
  of every method in the same run (CEC-IB: all its restarts; GaussianMixture: one
  k-means-initialised fit; KMeans: n_init=10), and their ratio to GaussianMixture; the
  first call of each data set (CEC-IB with beta = 1 and 10 % labelled, compilation
  included, vs GaussianMixture's first fit) in the ``first_call_*`` columns.
* ``cecib_speed``: warm wall time of CEC-IB (10 % labelled, beta = 1, full covariances) next
  to GaussianMixture(k) in the same run, interleaved, median over repetitions: CEC-IB at the
  same k with one start (as GaussianMixture's one fit), and with the protocol above
  (2 x k starting clusters, ``n_init`` restarts); the native kernel (``cecib.cc``) and, in
  the ``xla`` rows, the compiled JAX scan (``BAYESCLUST_NATIVE=0`` path).  Also the CPU
  seconds of the process during each call (``time.process_time``; run with
  ``OMP_NUM_THREADS=1`` they are what a loaded machine cannot inflate).
* ``cecib_noisy``: 30 % labelled, 0/10/30/50 % of those labels wrong ([C] §5.4).
* ``cecib_few_classes``: labels drawn only from two classes ([C] §5.3).
* ``cecib_iterations``: [C] Table 3 -- mean passes to converge over 10 runs without labels
  (Hartigan CEC at k = #classes) vs EM (GaussianMixture.n_iter_) and Lloyd
  (KMeans(algorithm="lloyd").n_iter_), with the paper's numbers beside them.

Digits (64 pixels, several constant) are reduced by PCA to 10 dimensions for every method
([C] reduces high-dimensional data by PCA to avoid singular covariances).  CEC-IB's cost is
affine invariant, the peers run on the same features.  Times are wall-clock on whatever
machine runs this: compare the ratios, not the absolute numbers.

Usage: python benchmarks/cecib.py [--quick] [--datasets iris wine digits] [--draws N]

``--quick``: Iris only, fractions 0/10/30 %, 2 draws, 3 restarts (< 60 s).
"""

from __future__ import annotations

import time
import warnings

import _common as bench
import numpy as np

from bayesclust import datasets, metrics
from bayesclust.inference.information.cecib import beta_0, cecib

FRACTIONS = (0.0, 0.05, 0.1, 0.2, 0.3)
NOISE = (0.0, 0.1, 0.3, 0.5)
PAPER_TABLE3 = {"iris": (5.1, 19.1, 7.0), "wine": (7.6, 13.6, 8.6)}  # CEC, EM, Lloyd


def load(name):
    X, y = getattr(datasets, f"load_{name}")()
    if name == "digits":
        from sklearn.decomposition import PCA

        X = PCA(10, random_state=0).fit_transform(X)
    return np.asarray(X, np.float64), np.asarray(y)


def partial_labels(y, frac, rng, noise=0.0, classes=None):
    """Label a fraction of the points (from ``classes`` only, if given); a share ``noise`` wrong."""
    n = len(y)
    k = int(y.max()) + 1
    pool = np.arange(n) if classes is None else np.flatnonzero(np.isin(y, classes))
    out = np.full(n, -1)
    idx = rng.choice(pool, min(len(pool), int(round(frac * n))), replace=False)
    out[idx] = y[idx]
    for i in rng.choice(idx, int(round(noise * len(idx))), replace=False) if len(idx) else []:
        out[i] = rng.choice([c for c in range(k) if c != y[i]])
    return out


def run_cecib(X, y_partial, k_init, beta, eps, n_init, seed):
    return bench.timed(lambda: cecib(seed, X, k_init, y_partial, beta=beta, eps=eps, n_init=n_init))


def peers(X, k, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gmm, t_gmm = bench.timed(lambda: bench.peer("gmm", k, seed, covariance_type="full").fit(X))
        km, t_km = bench.timed(lambda: bench.peer("kmeans", k, seed, n_init=10).fit(X))
    return gmm.predict(X), t_gmm, km.labels_, t_km


def bench_fractions(name, X, y, fractions, draws, n_init, seed):
    k = int(y.max()) + 1
    k_init = 2 * k
    eps = 0.05 if k_init * 0.05 < 1 else 0.5 / k_init
    # First calls (compilation included; the persistent compile cache is off for this
    # measurement only if BAYESCLUST_CACHE=0): CEC-IB with labels, then GaussianMixture.
    # Every later call is warm.
    yp0 = partial_labels(y, 0.1, np.random.default_rng(seed))
    _, first_cecib = run_cecib(X, yp0, k_init, 1.0, eps, n_init, seed)
    _, first_gmm, _, _ = peers(X, k, seed)
    run_cecib(X, None, k_init, 1.0, eps, 1, seed)
    for frac in fractions:
        acc = {m: [] for m in ("cecib_b1", "cecib_b0", "gmm", "kmeans")}
        t = {m: 0.0 for m in acc}
        ks = {"cecib_b1": [], "cecib_b0": []}
        for draw in range(draws):
            rng = np.random.default_rng(seed + 1000 * draw)
            yp = partial_labels(y, frac, rng)
            for m, beta in (("cecib_b1", 1.0), ("cecib_b0", beta_0())):
                res, sec = run_cecib(X, yp, k_init, beta, eps, n_init, seed + draw)
                acc[m].append(metrics.nmi(y, res.labels))
                ks[m].append(res.n_clusters)
                t[m] += sec
            g, tg, km, tk = peers(X, k, seed + draw)
            acc["gmm"].append(metrics.nmi(y, g))
            acc["kmeans"].append(metrics.nmi(y, km))
            t["gmm"] += tg
            t["kmeans"] += tk
        row = {"benchmark": "cecib_nmi", "dataset": name, "n": len(X), "d": X.shape[1], "classes": k,
               "k_init": k_init, "eps": eps, "n_init": n_init, "labelled_fraction": frac, "draws": draws}
        for m in acc:
            row[f"nmi_{m}"] = float(np.mean(acc[m]))
            row[f"nmi_{m}_std"] = float(np.std(acc[m]))
            row[f"seconds_{m}"] = t[m] / draws
            row[f"time_ratio_{m}_to_gmm"] = t[m] / t["gmm"] if t["gmm"] > 0 else None
        for m in ks:
            row[f"k_{m}"] = ks[m]
        row["first_call_seconds_cecib_b1"] = first_cecib
        row["first_call_seconds_gmm"] = first_gmm
        row["first_call_ratio_cecib_b1_to_gmm"] = first_cecib / first_gmm if first_gmm > 0 else None
        bench.emit(row)


def bench_speed(name, X, y, n_init, seed, reps=7):
    from bayesclust import _native

    k = int(y.max()) + 1
    yp = partial_labels(y, 0.1, np.random.default_rng(seed))
    paths = [("native", True), ("xla", False)] if _native.available() else [("xla", False)]
    for path, native in paths:
        with _native.use_native(native):
            for k_init, n_init_ in ((k, 1), (2 * k, n_init)):
                eps = 0.05 if k_init * 0.05 < 1 else 0.5 / k_init
                run_cecib(X, yp, k_init, 1.0, eps, n_init_, seed)  # compile (XLA) / warm up
                peers(X, k, seed)
                tc, tg, cc, cg = [], [], [], []
                for r in range(reps):
                    c0 = time.process_time()
                    tc.append(run_cecib(X, yp, k_init, 1.0, eps, n_init_, seed + r)[1])
                    c1 = time.process_time()
                    tg.append(bench.timed(lambda r=r: bench.peer("gmm", k, seed + r, covariance_type="full").fit(X))[1])
                    cc.append(c1 - c0)
                    cg.append(time.process_time() - c1)
                ratios = np.asarray(tc) / np.asarray(tg)
                cpu_ratios = np.asarray(cc) / np.asarray(cg)
                bench.emit({"benchmark": "cecib_speed", "dataset": name, "n": len(X), "d": X.shape[1],
                            "k": k, "path": path, "k_init": k_init, "n_init": n_init_, "reps": reps,
                            "seconds_cecib": float(np.median(tc)), "seconds_gmm": float(np.median(tg)),
                            "time_ratio_cecib_to_gmm": float(np.median(ratios)),
                            "cpu_seconds_cecib": float(np.median(cc)), "cpu_seconds_gmm": float(np.median(cg)),
                            "cpu_ratio_cecib_to_gmm": float(np.median(cpu_ratios)),
                            "target_ratio": 3.0})


def bench_noisy(name, X, y, noise_levels, draws, n_init, seed):
    k = int(y.max()) + 1
    eps = 0.05 if 2 * k * 0.05 < 1 else 0.5 / (2 * k)
    for noise in noise_levels:
        out = {"cecib_b1": [], "cecib_b0": [], "cec_unsupervised": []}
        for draw in range(draws):
            rng = np.random.default_rng(seed + 1000 * draw)
            yp = partial_labels(y, 0.3, rng, noise=noise)
            for m, beta in (("cecib_b1", 1.0), ("cecib_b0", beta_0()), ("cec_unsupervised", 0.0)):
                res, _ = run_cecib(X, yp, 2 * k, beta, eps, n_init, seed + draw)
                out[m].append(metrics.nmi(y, res.labels))
        row = {"benchmark": "cecib_noisy", "dataset": name, "labelled_fraction": 0.3,
               "wrong_fraction": noise, "draws": draws}
        row.update({f"nmi_{m}": float(np.mean(v)) for m, v in out.items()})
        bench.emit(row)


def bench_few_classes(name, X, y, fractions, draws, n_init, seed):
    k = int(y.max()) + 1
    eps = 0.05 if 2 * k * 0.05 < 1 else 0.5 / (2 * k)
    # One random pair of classes for every fraction and draw ([C] draws a pair per run and
    # keeps it across the fractions; each pair of Iris/Wine classes covers >= 30 % of the data).
    pair = np.sort(np.random.default_rng(seed).choice(k, 2, replace=False))
    for frac in fractions:
        out = {"cecib_b1": [], "cecib_b0": []}
        for draw in range(draws):
            rng = np.random.default_rng(seed + 1000 * draw)
            yp = partial_labels(y, frac, rng, classes=pair)
            for m, beta in (("cecib_b1", 1.0), ("cecib_b0", beta_0())):
                res, _ = run_cecib(X, yp, 2 * k, beta, eps, n_init, seed + draw)
                out[m].append(metrics.nmi(y, res.labels))
        row = {"benchmark": "cecib_few_classes", "dataset": name, "labelled_classes": pair.tolist(),
               "labelled_fraction": frac, "draws": draws}
        row.update({f"nmi_{m}": float(np.mean(v)) for m, v in out.items()})
        bench.emit(row)


def bench_iterations(name, X, y, runs=10):
    k = int(y.max()) + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cec_r = [cecib(s, X, k, beta=0.0, n_init=1, init="random").n_iter for s in range(runs)]
        cec_pp = [cecib(s, X, k, beta=0.0, n_init=1, init="k-means++").n_iter for s in range(runs)]
        em = [bench.peer("gmm", k, s).fit(X).n_iter_ for s in range(runs)]
        lloyd = [bench.peer("kmeans", k, s, n_init=1, algorithm="lloyd").fit(X).n_iter_ for s in range(runs)]
    paper = PAPER_TABLE3.get(name)
    bench.emit({
        "benchmark": "cecib_iterations", "dataset": name, "k": k, "runs": runs,
        "cec_random_start": float(np.mean(cec_r)), "cec_kmeanspp_start": float(np.mean(cec_pp)),
        "em_gmm": float(np.mean(em)), "lloyd": float(np.mean(lloyd)),
        "paper_cec": paper[0] if paper else None, "paper_em": paper[1] if paper else None,
        "paper_lloyd": paper[2] if paper else None,
    })


def main():
    parser = bench.parser(__doc__, "Iris, 3 fractions, 2 draws (< 60 s)")
    parser.add_argument("--datasets", nargs="+", choices=["iris", "wine", "digits"])
    parser.add_argument("--draws", type=int, help="label draws per fraction (default 10; digits 3)")
    parser.add_argument("--n-init", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speed-only", action="store_true",
                        help="only the cecib_speed rows (digits, or --datasets)")
    args = parser.parse_args()
    bench.emit(bench.environment("cecib.py", ("sklearn", "numpy")))
    t0 = time.perf_counter()
    if args.speed_only:
        for name in args.datasets or ["digits"]:
            X, y = load(name)
            bench_speed(name, X, y, min(args.n_init, 5), args.seed)
    elif args.quick:
        X, y = load("iris")
        bench_fractions("iris", X, y, (0.0, 0.1, 0.3), args.draws or 2, 3, args.seed)
        bench_noisy("iris", X, y, (0.0, 0.3), args.draws or 2, 3, args.seed)
        bench_iterations("iris", X, y, runs=5)
    else:
        for name in args.datasets or ["iris", "wine", "digits"]:
            X, y = load(name)
            draws = args.draws or (3 if name == "digits" else 10)
            n_init = args.n_init if name != "digits" else min(args.n_init, 5)
            bench_fractions(name, X, y, FRACTIONS, draws, n_init, args.seed)
            if name == "digits":
                bench_speed(name, X, y, n_init, args.seed)
            if name != "digits":
                bench_noisy(name, X, y, NOISE, draws, n_init, args.seed)
                bench_few_classes(name, X, y, (0.0, 0.1, 0.2, 0.3), draws, n_init, args.seed)
            bench_iterations(name, X, y)
    bench.emit({"benchmark": "cecib_wall", "seconds": time.perf_counter() - t0, "quick": bool(args.quick)})


if __name__ == "__main__":
    main()
