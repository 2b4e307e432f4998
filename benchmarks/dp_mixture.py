"""The DP Gaussian mixture on real data: bayesclust's samplers vs scikit-learn's variational DP mixture.

Prints JSON lines:

* ``dp_mixture_real``: one row per data set and seed.  NMI (and ARI) to the classes of the
  posterior point partition of :class:`bayesclust.DPGaussianMixture` for each
  ``covariance_type`` it offers, with its defaults (data-scaled priors, the package's
  sampler defaults: :data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`), next to
  scikit-learn's ``BayesianGaussianMixture(weight_concentration_prior_type=
  "dirichlet_process", n_components=20, max_iter=1000)`` (its other defaults: full
  covariances, k-means start) with the same seed.  For every sampler: the number of
  clusters of the point partition, wall seconds (a first fit in the process, so the compile
  is included: what a user waits for), the worst R-hat and least bulk ESS of the two
  label-invariant scalars (number of clusters, log-likelihood; ``Posterior.diagnostics``)
  and that ESS per second.
* ``dp_mixture_real_summary``: per data set, the mean NMI over the seeds of each method and
  whether the best of bayesclust's mixtures reaches scikit-learn's (the target: on at least 4
  of the 5 data sets).

* ``dp_mixture_memory`` (``--memory``): what a default fit costs in memory.  Peak resident
  memory (``VmHWM``) of a fresh process that fits ``DPGaussianMixture(random_state=0)``
  (sampler defaults: 8 chains x 1,000 kept draws) to ``n`` x 2 points of three Gaussians
  (scikit-learn's ``make_blobs(n, 2, centers=3, cluster_std=0.5, random_state=0)``; ``n =
  150``: iris), with ``keep_draws`` at its default or ``"summary"``; the bytes of one copy
  of the run's label draws as int32 (what every copy cost when they were stored so), of
  the label draws ``posterior_`` keeps, and of the fitted estimator pickled.
  ``--baseline-python PY`` adds the default fit with another checkout's interpreter (e.g.
  the main branch's ``.venv/bin/python``) up to ``--baseline-max-n``: the before / after.

* ``dp_mixture_sweep`` (``--sweeps``): the cost of the diag / full sampler itself.
  :func:`bayesclust.gibbs_dp_gaussian` (8 chains from one cluster, 10 warm-up sweeps, 10
  kept, seed 0), one fresh process per data set with JAX's persistent cache off:
  ``first_seconds`` (compiles included, one per cluster buffer the run grows to), then
  ``ms_per_sweep`` of the same calls repeated (interleaved, the faster of two; all 8
  chains); with ``split_merge`` 0 and 2 moves per sweep and the accepted fraction of the
  kept draws' moves.  ``--baseline-source FILE`` loads another checkout's
  ``gibbs_gaussian.py`` beside this one (``code`` 'main', the same process, so the ratio is
  not the load's), ``same_draws``: its label draws equal this code's.

Data (the classes are never seen by the fits): iris (raw), wine (standardised), MASS crabs
(standardised, the 4 species x sex groups), MASS biopsy (the 9 raw cytology scores, 683
complete cases, benign / malignant), digits reduced to 10 principal components.

Usage: python benchmarks/dp_mixture.py [--quick] [--seeds S] [--datasets a,b]
       python benchmarks/dp_mixture.py --memory [--sizes 20000,100000] [--baseline-python PY]
       python benchmarks/dp_mixture.py --sweeps [--datasets a,b] [--baseline-source FILE]

``--quick``: one seed, iris and wine only, the spherical model and scikit-learn (< 2 min).
"""

from __future__ import annotations

import time
import warnings

import _common as bench
import numpy as np

from bayesclust import DPGaussianMixture, datasets

#: Truncation of scikit-learn's variational DP mixture (its number of components).
PEER_COMPONENTS = 20
#: The covariance types of ``DPGaussianMixture``.
COVARIANCE_TYPES = ("spherical", "diag", "full")


def _standardised(X):
    return (X - X.mean(0)) / X.std(0)


def load(name: str):
    """``(X, y)`` of one of the benchmark's data sets, float64."""
    if name == "iris":
        X, y = datasets.load_iris()
    elif name == "wine-std":
        X, y = datasets.load_wine()
        X = _standardised(X)
    elif name == "crabs-std":
        X, y = datasets.load_crabs("group")
        X = _standardised(X)
    elif name == "biopsy":
        X, y = datasets.load_biopsy()
    elif name == "digits-pca10":
        from sklearn.decomposition import PCA

        X, y = datasets.load_digits()
        X = PCA(10, random_state=0).fit_transform(X)
    else:
        raise ValueError(f"unknown data set {name!r}")
    return np.asarray(X, np.float64), np.asarray(y)


DATASETS = ("iris", "wine-std", "crabs-std", "biopsy", "digits-pca10")


def _scores(y, labels) -> dict:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return {"nmi": float(normalized_mutual_info_score(y, labels)),
            "ari": float(adjusted_rand_score(y, labels))}


def fit_ours(X, y, covariance_type: str, seed: int) -> dict:
    """One default fit of ``DPGaussianMixture(covariance_type=...)``: scores, time, diagnostics."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        options = {} if covariance_type == "spherical" else {"covariance_type": covariance_type}
        model = DPGaussianMixture(random_state=seed, **options).fit(X)
    seconds = time.perf_counter() - t0
    diag = model.posterior_.diagnostics()
    scalars = [diag[q] for q in ("n_clusters", "log_likelihood") if q in diag]
    rhats = [float(q["rhat"]) for q in scalars if np.isfinite(q["rhat"])]  # NaN: k constant
    rhat = max(rhats) if rhats else float("nan")
    ess = min(float(q["ess_bulk"]) for q in scalars)
    return {**_scores(y, model.labels_), "k": int(model.n_clusters_), "seconds": seconds,
            "rhat": rhat, "ess_bulk": ess, "ess_per_s": ess / seconds,
            "converged_warning": any("converged" in str(w.message) for w in caught)}


def fit_peer(X, y, seed: int) -> dict:
    from sklearn.mixture import BayesianGaussianMixture

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of the variational fit: recorded below
        peer = BayesianGaussianMixture(
            n_components=PEER_COMPONENTS, weight_concentration_prior_type="dirichlet_process",
            max_iter=1000, random_state=seed).fit(X)
    labels = peer.predict(X)
    seconds = time.perf_counter() - t0
    return {**_scores(y, labels), "k": int(np.unique(labels).size), "seconds": seconds,
            "converged": bool(peer.converged_)}


def memory_child(n: int, keep_draws: str) -> dict:
    """Fit in this (fresh) process and measure; ``n = 0``: iris."""
    import pickle

    if n:
        from sklearn.datasets import make_blobs

        X, _ = make_blobs(n, n_features=2, centers=3, cluster_std=0.5, random_state=0)
    else:
        X, _ = datasets.load_iris()
    kw = {} if keep_draws == "default" else {"keep_draws": keep_draws}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est, seconds = bench.timed(lambda: DPGaussianMixture(random_state=0, **kw).fit(X))
    post = est.posterior_
    labels = getattr(post, "_labels", None)
    with open("/proc/self/status") as f:
        peak_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return {"n": int(X.shape[0]), "keep_draws": keep_draws, "peak_rss_mib": peak_kib / 1024.0,
            "seconds": seconds, "n_clusters": int(est.n_clusters_),
            "kept_draws": int(post.n_draws) if labels is not None else 0,
            "label_dtype": "-" if labels is None else str(labels.dtype),
            "kept_label_mib": 0.0 if labels is None else labels.nbytes / 2**20,
            "pickle_mib": len(pickle.dumps(est)) / 2**20}


def memory(sizes, baseline: str | None, baseline_max_n: int):
    """The ``dp_mixture_memory`` rows: every fit in a fresh process (its own peak)."""
    import json
    import subprocess
    import sys

    bench.emit(bench.environment("dp_mixture.py", ("numpy", "jax")))
    bench.emit({"benchmark": "dp_mixture_memory", "note": (
        "DPGaussianMixture(random_state=0) with the sampler defaults (8 chains x 1,000 draws), "
        "each fit in a fresh process: peak RSS (VmHWM), wall seconds of the fit (compile "
        "included), the label draws posterior_ keeps and the pickled estimator; "
        "int32_copy_mib: one copy of the run's label draws as int32. code 'main': the "
        "interpreter of --baseline-python.")})
    runs = [("this", sys.executable)] + ([("main", baseline)] if baseline else [])
    for n in [0, *sizes]:
        for code, python in runs:
            if code == "main" and n > baseline_max_n:
                continue
            for keep in ["default"] if code == "main" else ["default", "summary"]:
                out = subprocess.run([python, __file__, "--memory-child", str(n), keep],
                                     capture_output=True, text=True)
                row = {"benchmark": "dp_mixture_memory", "code": code}
                if out.returncode:
                    bench.emit({**row, "n": n or 150, "keep_draws": keep,
                                "error": out.stderr.strip().splitlines()[-1]})
                    continue
                row.update(json.loads(out.stdout.strip().splitlines()[-1]))
                row["int32_copy_mib"] = 8 * 1000 * row["n"] * 4 / 2**20
                bench.emit(row)


#: Warm-up sweeps and kept draws of the ``--sweeps`` runs.
SWEEP_RUN = (10, 10)
#: The ``--sweeps`` runs: (code, covariance_type, split_merge).
SWEEP_CONFIGS = (("this", "full", 0), ("main", "full", 0), ("this", "full", 2),
                 ("this", "diag", 0), ("main", "diag", 0))


def _baseline_sampler(path: str):
    """``gibbs_dp_gaussian`` of another checkout's ``gibbs_gaussian.py`` (its file), loaded
    inside this package so that it runs beside this code in the same process."""
    import importlib.util

    name = "bayesclust.inference.mixtures._gibbs_gaussian_baseline"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gibbs_dp_gaussian


def sweep_child(name: str, baseline: str | None) -> list:
    """Every ``SWEEP_CONFIGS`` run on one data set in this (fresh) process: first calls,
    then the warm calls interleaved (two rounds, the faster kept)."""
    import hashlib

    from bayesclust import gibbs_dp_gaussian

    X, _ = load(name)
    warm, kept = SWEEP_RUN
    samplers = {"this": gibbs_dp_gaussian}
    if baseline:
        samplers["main"] = _baseline_sampler(baseline)
    configs = [c for c in SWEEP_CONFIGS if c[0] in samplers]

    def call(code, kind, moves):
        kw = dict(covariance_type=kind, num_warmup=warm, num_samples=kept, thin=1,
                  num_chains=8, progress_bar=False)
        if moves:
            kw["split_merge"] = moves
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bench.timed(lambda: samplers[code](0, X, **kw))

    rows = {}
    for config in configs:
        post, first = call(*config)
        acc = post.sample_stats.get("split_merge_acceptance")
        rows[config] = {
            "dataset": name, "n": int(X.shape[0]), "d": int(X.shape[1]), "code": config[0],
            "covariance_type": config[1], "split_merge": config[2], "first_seconds": first,
            "warm_seconds": float("inf"), "k_mean": float(np.mean(post.n_clusters)),
            "split_merge_acceptance": float(np.mean(acc)) if acc is not None else 0.0,
            "labels_sha": hashlib.sha1(np.ascontiguousarray(post.labels, np.int64)).hexdigest()[:12]}
    for _ in range(2):
        for config in configs:
            rows[config]["warm_seconds"] = min(rows[config]["warm_seconds"], call(*config)[1])
    out = []
    for (code, kind, moves), row in rows.items():
        row["ms_per_sweep"] = 1e3 * row["warm_seconds"] / (warm + kept)
        ours = rows.get(("this", kind, moves), row)["labels_sha"]
        row["same_draws"] = "-" if code == "this" else ("yes" if row["labels_sha"] == ours else "no")
        out.append(row)
    for row in out:
        row.pop("labels_sha")
    return out


def sweeps(names, baseline: str | None):
    """The ``dp_mixture_sweep`` rows: one fresh process per data set, the cache off."""
    import json
    import os
    import subprocess
    import sys

    bench.emit(bench.environment("dp_mixture.py", ("numpy", "jax")))
    bench.emit({"benchmark": "dp_mixture_sweep", "note": (
        f"gibbs_dp_gaussian, 8 chains from one cluster, {SWEEP_RUN[0]} warm-up sweeps + "
        f"{SWEEP_RUN[1]} kept, seed 0; one fresh process per data set with JAX's persistent "
        "cache off (BAYESCLUST_CACHE=0): first_seconds is each sampler's first call (its "
        "compiles included), then every run is repeated twice, the runs interleaved, "
        "ms_per_sweep the faster (8 chains). code 'main': --baseline-source's "
        "gibbs_gaussian.py (another checkout's) loaded beside this one in the same process; same_draws: its label "
        "draws equal this code's. split_merge_acceptance: over the kept draws' moves. The "
        "diag sampler is the same code on both sides: its main / this ratio is the noise.")})
    env = {**os.environ, "BAYESCLUST_CACHE": "0"}
    for name in names:
        cmd = [sys.executable, __file__, "--sweep-child", name] + ([baseline] if baseline else [])
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if out.returncode:
            bench.emit({"benchmark": "dp_mixture_sweep", "dataset": name,
                        "error": out.stderr.strip().splitlines()[-1]})
            continue
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            bench.emit({"benchmark": "dp_mixture_sweep", **row})


def main():
    import sys

    if sys.argv[1:2] == ["--sweep-child"]:
        import json

        print(json.dumps(sweep_child(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)))
        return
    if sys.argv[1:2] == ["--memory-child"]:
        import json

        print(json.dumps(memory_child(int(sys.argv[2]), sys.argv[3])))
        return
    parser = bench.parser(__doc__, "one seed, iris and wine, spherical + scikit-learn (< 2 min)")
    parser.add_argument("--memory", action="store_true", help="only the dp_mixture_memory rows")
    parser.add_argument("--sizes", default="20000,100000", help="n of the --memory rows")
    parser.add_argument("--baseline-python", default=None,
                        help="--memory: also the default fit with this interpreter's bayesclust")
    parser.add_argument("--baseline-max-n", type=int, default=20000,
                        help="--memory: the largest n fitted with --baseline-python")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--datasets", default=None, help="comma-separated subset of " + ",".join(DATASETS))
    parser.add_argument("--types", default=None, help="comma-separated covariance types")
    parser.add_argument("--sweeps", action="store_true",
                        help="only the dp_mixture_sweep rows")
    parser.add_argument("--baseline-source", default=None,
                        help="--sweeps: another checkout's gibbs_gaussian.py, run beside this one")
    args = parser.parse_args()
    if args.sweeps:
        sweeps(args.datasets.split(",") if args.datasets else DATASETS, args.baseline_source)
        return
    if args.memory:
        memory([int(v) for v in args.sizes.split(",")], args.baseline_python, args.baseline_max_n)
        return
    seeds = args.seeds or (1 if args.quick else 3)
    names = args.datasets.split(",") if args.datasets else (DATASETS[:2] if args.quick else DATASETS)
    types = args.types.split(",") if args.types else (
        ["spherical"] if args.quick else list(COVARIANCE_TYPES))
    bench.emit(bench.environment("dp_mixture.py", ("numpy", "sklearn", "jax", "numpyro")))
    bench.emit({"benchmark": "dp_mixture_real", "note": (
        "Default fits, seconds of a first fit in the process (compile included). "
        f"Peer: BayesianGaussianMixture(n_components={PEER_COMPONENTS}, dirichlet_process, "
        "max_iter=1000), full covariances, k-means start. rhat / ess_bulk: the worse of the "
        "number of clusters and the log-likelihood over the chains.")})
    summary = {}
    for name in names:
        X, y = load(name)
        for seed in range(seeds):
            row = {"benchmark": "dp_mixture_real", "dataset": name, "n": X.shape[0], "d": X.shape[1],
                   "classes": int(np.unique(y).size), "seed": seed}
            for kind in types:
                row.update({f"{kind}_{k}": v for k, v in fit_ours(X, y, kind, seed).items()})
            row.update({f"peer_{k}": v for k, v in fit_peer(X, y, seed).items()})
            bench.emit(row)
            summary.setdefault(name, []).append(row)
    for name, rows in summary.items():
        means = {kind: float(np.mean([r[f"{kind}_nmi"] for r in rows])) for kind in types}
        peer_nmi = float(np.mean([r["peer_nmi"] for r in rows]))
        best = max(means, key=means.get)
        bench.emit({"benchmark": "dp_mixture_real_summary", "dataset": name, "seeds": len(rows),
                    **{f"{kind}_nmi_mean": v for kind, v in means.items()},
                    "peer_nmi_mean": peer_nmi, "best": best,
                    "best_reaches_peer": "yes" if means[best] >= peer_nmi else "no"})


if __name__ == "__main__":
    main()
