"""Chains and ensembles across devices: the samplers' chains and the k-means ensemble with
its co-association, one device vs 8 forced host devices.

Each mode is a separate process (the number of host devices is fixed when JAX starts), as
in ``benchmarks/scale.py``:

* ``single``: no ``mesh`` (the default path, one CPU device);
* ``sharded``: ``mesh=`` a one-axis mesh of 8 host devices forced with
  ``XLA_FLAGS=--xla_force_host_platform_device_count=8``.  On one machine the 8 "devices"
  share its cores: this measures the overhead of the sharded programs, not a speed-up
  (the single-device sampler already spreads its 8 chains over the cores, 8 per AVX
  register in the native kernel).

Three workloads, each run twice on the same data (the first run includes compilation,
the second reuses the compiled programs):

* ``gibbs_dp_gmm``: the spherical collapsed sampler (native sweeps on a CPU), 8 chains;
* ``gibbs_dp_gaussian``: the full-covariance collapsed sampler, 8 chains;
* ``eac``: ``kmeans_ensemble(backend="jax")`` (N partitions) and its ``coassociation``.

The parent checks that both modes returned the same label draws, partitions and
co-association counts (the same seed gives the same result on 1 or 8 devices) and prints
the ratios sharded / single of the warm times.

Usage::

    python benchmarks/sharded_chains.py --quick   # n = 300 / 200, 40 partitions (~1-2 min)
    python benchmarks/sharded_chains.py           # n = 2,000 / 500, 160 partitions

Numbers from a shared machine are noisy.
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

FULL = dict(n_gmm=2000, n_full=500, d_full=5, n_eac=2000, partitions=160, warmup=100, samples=100)
QUICK = dict(n_gmm=300, n_full=200, d_full=5, n_eac=300, partitions=40, warmup=20, samples=20)
N_DEVICES = 8
WORKLOADS = ("gibbs_dp_gmm", "gibbs_dp_gaussian", "eac")


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def blobs(n, d, seed):
    """``n`` points around 4 anisotropic Gaussian centres in ``d`` dimensions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = 4.0 * rng.standard_normal((4, d))
    scales = rng.uniform(0.3, 1.2, (4, d))
    z = rng.integers(4, size=n)
    return centres[z] + scales[z] * rng.standard_normal((n, d))


def child(mode: str, cfg: dict, out: str):
    if mode == "sharded":
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={N_DEVICES}"
        ).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import warnings

    import jax
    import numpy as np
    from jax.sharding import Mesh

    import bayesclust
    from bayesclust import gibbs_dp_gaussian, gibbs_dp_gmm
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble

    warnings.simplefilter("ignore", bayesclust.ConvergenceWarning)
    mesh = None
    if mode == "sharded":
        assert jax.device_count() == N_DEVICES, jax.devices()
        mesh = Mesh(np.array(jax.devices()), ("chains",))
    draws = dict(num_warmup=cfg["warmup"], num_samples=cfg["samples"], num_chains=8,
                 progress_bar=False, mesh=mesh)
    X_gmm = blobs(cfg["n_gmm"], 2, 0)
    X_full = blobs(cfg["n_full"], cfg["d_full"], 1)
    X_eac = blobs(cfg["n_eac"], 2, 2)
    calls = {
        "gibbs_dp_gmm": lambda: gibbs_dp_gmm(0, X_gmm, sigma2=0.5, **draws),
        "gibbs_dp_gaussian": lambda: gibbs_dp_gaussian(0, X_full, covariance_type="full", **draws),
        "eac": lambda: coassociation(
            kmeans_ensemble(0, X_eac, cfg["partitions"], backend="jax", mesh=mesh), mesh=mesh),
    }
    saved = {}
    for name in WORKLOADS:
        times, res = [], None
        for _ in range(2):
            res, seconds = bench.timed(calls[name])
            times.append(seconds)
        if name == "eac":
            saved[name] = res.counts.toarray()
            kernels = "xla"
        else:
            saved[name] = np.asarray(res.labels)
            kernels = res.kernels
        bench.emit({
            "benchmark": "sharded_chains",
            "workload": name,
            "mode": mode,
            "devices": jax.device_count(),
            "n": {"gibbs_dp_gmm": cfg["n_gmm"], "gibbs_dp_gaussian": cfg["n_full"],
                  "eac": cfg["n_eac"]}[name],
            "chains_or_partitions": cfg["partitions"] if name == "eac" else 8,
            "num_warmup": None if name == "eac" else cfg["warmup"],
            "num_samples": None if name == "eac" else cfg["samples"],
            "kernels": kernels,
            "first_run_seconds": times[0],
            "second_run_seconds": times[1],
            "compile_seconds_est": times[0] - times[1],
            "peak_rss_mib": peak_rss_mib(),
        })
    np.savez(out, **saved)


def main():
    parser = bench.parser(__doc__, "n = 300 / 200, 40 partitions (~1-2 min)")
    parser.add_argument("--child", choices=["single", "sharded"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    if args.child:
        child(args.child, cfg, args.out)
        return

    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    bench.emit(bench.environment("sharded_chains.py", ("jax",)))
    reports = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("single", "sharded"):
            cmd = [sys.executable, __file__, "--child", mode, "--out", f"{tmp}/{mode}.npz"]
            cmd += ["--quick"] if args.quick else []
            lines = subprocess.run(cmd, env=env, check=True, capture_output=True,
                                   text=True).stdout.strip().splitlines()
            for line in lines:
                if line.startswith("{"):
                    print(line, flush=True)
                    row = json.loads(line)
                    reports[(mode, row["workload"])] = row
        import numpy as np

        a, b = (np.load(f"{tmp}/{m}.npz") for m in ("single", "sharded"))
        for name in WORKLOADS:
            s, p = reports[("single", name)], reports[("sharded", name)]
            bench.emit({
                "benchmark": "sharded_chains-summary",
                "workload": name,
                "n": s["n"],
                "same_result": bool(np.array_equal(a[name], b[name])),
                "warm_ratio_sharded_to_single": p["second_run_seconds"] / s["second_run_seconds"],
                "first_ratio_sharded_to_single": p["first_run_seconds"] / s["first_run_seconds"],
                "peak_rss_ratio_sharded_to_single": p["peak_rss_mib"] / s["peak_rss_mib"],
            })


if __name__ == "__main__":
    main()
