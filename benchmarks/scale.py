"""DP-means at scale: peak memory and time of one large run, single-device and sharded.

Target: n = 1,000,000 points x 128 float32 features (a 100-component
Gaussian mixture, lambda by farthest-first at k = 100) must run without any
n x n or n x K_max float64 array.  Each run is a separate process, so that its
peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is its
own:

* ``single``: ``dp_means(X, lam)`` on the default (one) CPU device;
* ``sharded``: ``dp_means(X, lam, mesh=mesh)`` on 8 host devices forced with
  ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (on one machine the
  8 "devices" share its cores: this measures the memory and the overhead of the
  sharded program, not a speed-up).

Each process generates the data, reports the RSS after generating them, then
runs ``dp_means`` twice on the same data: the first run includes compilation,
the second reuses the compiled programs; time per iteration is the second run's
time divided by its iterations.  The parent checks that the two processes
returned the same labels.  For reference the report gives the bytes of the data
(``n d`` float32) and of the arrays that are *not* materialised: one ``n x
K_cap`` float64 score matrix at the final buffer size and one ``n x n`` float32
matrix.

Usage::

    python benchmarks/scale.py --quick      # n = 30,000 x 32, k = 32 (< 60 s)
    python benchmarks/scale.py              # n = 1,000,000 x 128, k = 100

Prints one JSON line per run and one summary line.  Numbers from a shared
machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import _common as bench

FULL = dict(n=1_000_000, d=128, k=100, max_iter=30)
QUICK = dict(n=30_000, d=32, k=32, max_iter=30)
N_DEVICES = 8


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def mixture(n, d, k, seed=0):
    """float32 data from a k-component isotropic Gaussian mixture, generated in chunks."""
    import numpy as np

    rng = np.random.default_rng(seed)
    means = (3.0 * rng.standard_normal((k, d))).astype(np.float32)
    X = np.empty((n, d), np.float32)
    for s in range(0, n, 100_000):
        e = min(n, s + 100_000)
        X[s:e] = means[rng.integers(k, size=e - s)]
        X[s:e] += rng.standard_normal((e - s, d), dtype=np.float32)
    return X


def child(mode: str, n: int, d: int, k: int, max_iter: int, lam: float | None, out: str):
    if mode == "sharded":
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={N_DEVICES}"
        ).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np
    from jax.sharding import Mesh

    from bayesclust import dp_means, farthest_first_lambda

    rss_start = peak_rss_mib()
    X = mixture(n, d, k)
    rss_data = peak_rss_mib()
    t_lam = None
    if lam is None:
        lam, t_lam = bench.timed(lambda: farthest_first_lambda(X, k))
    mesh = None
    if mode == "sharded":
        assert jax.device_count() == N_DEVICES, jax.devices()
        mesh = Mesh(np.array(jax.devices()), ("data",))

    times, results = [], []
    for _ in range(2):
        res, seconds = bench.timed(lambda: dp_means(X, lam, max_iter=max_iter, mesh=mesh))
        times.append(seconds)
        results.append(res)
    res = results[-1]
    assert np.array_equal(results[0].labels, res.labels)
    np.save(out, res.labels)
    k_cap = 1 << max(0, 2 * res.n_clusters - 1).bit_length()  # a buffer bound, for scale
    report = {
        "benchmark": "scale",
        "mode": mode,
        "devices": jax.device_count(),
        "n": n, "d": d, "k_target": k, "lam": lam,
        "n_clusters": res.n_clusters,
        "n_iter": res.n_iter,
        "converged": res.converged,
        "objective": res.objective,
        "lam_seconds": t_lam,
        "first_run_seconds": times[0],
        "second_run_seconds": times[1],
        "compile_seconds_est": times[0] - times[1],
        "seconds_per_iter": times[1] / max(res.n_iter, 1),
        "rss_start_mib": rss_start,
        "rss_after_data_mib": rss_data,
        "peak_rss_mib": peak_rss_mib(),
        "data_mib": n * d * 4 / 2**20,
        "n_by_kcap_float64_mib": n * k_cap * 8 / 2**20,
        "n_by_n_float32_mib": n * n * 4 / 2**20,
    }
    bench.emit(report)


def main():
    parser = bench.parser(__doc__, "n = 30,000 x 32 (< 60 s)")
    parser.add_argument("--n", type=int)
    parser.add_argument("--d", type=int)
    parser.add_argument("--k", type=int)
    parser.add_argument("--max-iter", type=int)
    parser.add_argument("--modes", default="single,sharded")
    parser.add_argument("--child", choices=["single", "sharded"], help=argparse.SUPPRESS)
    parser.add_argument("--lam", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    for key in ("n", "d", "k", "max_iter"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if args.child:
        child(args.child, cfg["n"], cfg["d"], cfg["k"], cfg["max_iter"], args.lam, args.out)
        return

    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    reports = {}
    lam = None
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            cmd = [sys.executable, __file__, "--child", mode, "--out", f"{tmp}/{mode}.npy"]
            cmd += [f"--{key.replace('_', '-')}={val}" for key, val in cfg.items()]
            if lam is not None:  # the same lambda for every run
                cmd.append(f"--lam={lam!r}")
            line = subprocess.run(cmd, env=env, check=True, capture_output=True,
                                  text=True).stdout.strip().splitlines()[-1]
            print(line, flush=True)
            reports[mode] = json.loads(line)
            lam = reports[mode]["lam"]
        if {"single", "sharded"} <= set(reports):
            import numpy as np

            a, b = (np.load(f"{tmp}/{m}.npy") for m in ("single", "sharded"))
            s, p = reports["single"], reports["sharded"]
            bench.emit({
                "benchmark": "scale-summary",
                "n": cfg["n"], "d": cfg["d"],
                "labels_equal": bool(np.array_equal(a, b)),
                "same_n_iter": s["n_iter"] == p["n_iter"],
                "objective_rel_diff": abs(s["objective"] - p["objective"]) / abs(s["objective"]),
                "peak_rss_ratio_sharded_to_single": p["peak_rss_mib"] / s["peak_rss_mib"],
                "time_per_iter_ratio_sharded_to_single": p["seconds_per_iter"] / s["seconds_per_iter"],
            })


if __name__ == "__main__":
    main()
