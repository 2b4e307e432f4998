"""The annealed limit path of the HDP mixture: does the CRF sampler collapse onto the hard HDP?

Prints JSON lines:

* ``limit_path_hdp_fresh_process``: wall seconds of ``limit_path(model="hdp")`` at n = 500
  (5 data sets x 100 points) in a fresh Python process with JAX's persistent compilation
  cache off (``BAYESCLUST_CACHE=0``), so every compilation is counted; the import and the
  data are outside the timing.
* ``limit_path_hdp``: one row per data set over 10 seeds of :func:`bayesclust.limit_path`
  with its defaults (16 chains, the grid from the family's top down to the collapse or the
  floor ``1e-9 lam_local``): how each path ended -- on the hard HDP's partition (``hard``), on
  a partition of lower hard HDP objective (``lower_objective``: Algorithm 2 stopped in a local
  optimum), or at the floor -- the final NMI to the hard HDP, the levels run, the smallest
  ``sigma2 / lam_local`` reached and the seconds per path (in this process: compiled once).

The data sets are draws of :func:`bayesclust.datasets.hdp_groups` (Kulis & Jordan's §6.3
design, scaled down): ``kj-20x25`` (20 data sets of 5 of 15 Gaussians x 5 points),
``5x100`` (5 data sets of 4 of 8 Gaussians x 25 points) and ``10x30-tight`` (10 data sets of
3 of 6 Gaussians x 10 points, sd 0.05); penalties by :func:`bayesclust.hard_hdp_penalties`
for the design's numbers of local and global clusters.

Usage: python benchmarks/hdp_path.py [--quick]

``--quick``: 2 seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import _common as bench
import numpy as np

from bayesclust import hard_hdp_penalties, limit_path
from bayesclust.datasets import hdp_groups

#: name -> (hdp_groups arguments, n_local, n_global)
DATA = {
    "kj-20x25": (dict(n_groups=20, n_components=15, components_per_group=5, n_per_component=5), 5, 15),
    "5x100": (dict(n_groups=5, n_components=8, components_per_group=4, n_per_component=25), 4, 8),
    "10x30-tight": (dict(n_groups=10, n_components=6, components_per_group=3, n_per_component=10,
                         std=0.05), 3, 6),
}

NOTE = ("16 chains of the CRF Gibbs sampler (gibbs_hdp_gmm) annealed in sigma2 from "
        "max(lam_local + lam_global, largest principal variance) down by sqrt(10) per level, "
        "concentrations from the penalties (hdp_log_concentrations_from_lam), resampled between "
        "levels by the CRF state's log joint, one chain restarted per level at one table per data "
        "set and one dish; 30 + 20 sweeps per level. A path ends on the hard HDP's partition "
        "(`ends_on_hard_hdp`) or on a partition of lower hard HDP objective "
        "(`ends_lower_objective`): both count as collapsed. Seconds per path: in one process, "
        "compiled by the first seed; the fresh-process row counts every compilation. The "
        "machine was shared.")

_FRESH = """
import json, sys, time, warnings
import numpy as np
from bayesclust import hard_hdp_penalties, limit_path
from bayesclust.datasets import hdp_groups
groups, _, _ = hdp_groups(0, n_groups=5, n_components=8, components_per_group=4, n_per_component=25)
X = np.concatenate(groups)
gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
lam = hard_hdp_penalties(X, 4, 8, group_ids=gid)
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    path = limit_path(0, X, model="hdp", group_ids=gid, lam=lam)
print(json.dumps({"seconds": time.perf_counter() - t0, "n": len(X), "levels": len(path.temperature),
                  "stop": path.stop}))
"""


def data(name, seed):
    kwargs, n_local, n_global = DATA[name]
    groups, _, _ = hdp_groups(seed, **kwargs)
    X = np.concatenate(groups)
    gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    return X, gid, hard_hdp_penalties(X, n_local, n_global, group_ids=gid)


def main():
    args = bench.parser(__doc__, "2 seeds").parse_args()
    seeds = range(2 if args.quick else 10)
    bench.emit(bench.environment("hdp_path.py", ("jax", "numpy")))
    bench.emit({"benchmark": "limit_path_hdp", "note": NOTE})
    env = dict(os.environ, BAYESCLUST_CACHE="0")
    out = subprocess.run([sys.executable, "-c", _FRESH], env=env, check=True,
                         capture_output=True, text=True).stdout
    fresh = json.loads(out.strip().splitlines()[-1])
    bench.emit({"benchmark": "limit_path_hdp_fresh_process", "data": "5x100", **fresh,
                "target_seconds": 30})
    for name in DATA:
        stops, nmi, levels, ends, secs, n = ([] for _ in range(6))
        for seed in seeds:
            X, gid, lam = data(name, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                path, s = bench.timed(
                    lambda: limit_path(seed, X, model="hdp", group_ids=gid, lam=lam))  # noqa: B023
            stops.append(path.stop)
            nmi.append(float(path.nmi_point[-1]))
            levels.append(len(path.temperature))
            ends.append(float(path.relative_temperature[-1]))
            secs.append(s)
            n.append(len(X))
        bench.emit({
            "benchmark": "limit_path_hdp", "data": name, "n": n[0], "seeds": len(seeds),
            "ends_on_hard_hdp": stops.count("hard"),
            "ends_lower_objective": stops.count("lower_objective"),
            "ends_at_floor": stops.count("floor"),
            "collapse_rate": (stops.count("hard") + stops.count("lower_objective")) / len(stops),
            "final_nmi_mean": float(np.mean(nmi)), "levels_mean": float(np.mean(levels)),
            "smallest_sigma2_over_lam_local": min(ends),
            "seconds_mean": float(np.mean(secs)), "seconds_max": float(np.max(secs)),
        })


if __name__ == "__main__":
    main()
