"""The annealed small-variance path: does the sampled posterior collapse onto DP-means?

Prints JSON lines, one ``small_variance_path`` row per data set (three Gaussians, Iris and
Wine, loaded as ``bayesclust compare`` loads them, ``lam`` by farthest-first at k = 3) over
10 seeds of :func:`bayesclust.small_variance_path` with its defaults (16 chains, the grid
from the data down to the collapse or the floor ``1e-9 lam``):

* how each path ended: on DP-means' partition (``hard``), on a partition with a lower
  DP-means objective than DP-means' own (``lower_objective``: DP-means stopped in a local
  optimum, a finding), or at the floor;
* ``max_drop``: the largest fall of NMI(point, DP-means) along a path, over all seeds, and
  ``max_drop_dp_means`` over the paths that end on DP-means' partition;
* the final NMI to DP-means and P(k = k_DP-means) (means over seeds), the levels run and
  the smallest ``sigma2 / lam`` reached;
* wall seconds per path (compilation included; first seed excluded from nothing).

Usage: python benchmarks/small_variance_path.py [--quick]

``--quick``: 2 seeds.
"""

from __future__ import annotations

import warnings

import _common as bench
import numpy as np

from bayesclust import farthest_first_lambda, small_variance_path
from bayesclust.jobs._common import load_data

DATA = ("three-gaussians", "iris", "wine")
NOTE = ("16 chains annealed from the top level (max(lam, largest principal variance)) down by "
        "sqrt(10) per level, resampled between levels, one chain restarted from one cluster per "
        "level; lam by farthest-first at k = 3; data as `bayesclust compare` loads it (Wine raw). "
        "A path ends on DP-means' partition (NMI 1, P(k = k_DP-means) >= 0.95) or, where DP-means "
        "stopped in a local optimum, on a partition with a lower DP-means objective "
        "(`ends_lower_objective`, a finding reported by the path): max_drop counts those paths' "
        "fall from DP-means' partition to the better one, max_drop_dp_means only the paths that "
        "end on DP-means. Seconds per path include compilation; the machine was shared.")


def main():
    args = bench.parser(__doc__, "2 seeds").parse_args()
    seeds = range(2 if args.quick else 10)
    bench.emit(bench.environment("small_variance_path.py", ("jax", "numpy")))
    bench.emit({"benchmark": "small_variance_path", "note": NOTE})
    for data in DATA:
        stops, drops, drops_dp, nmi, p_k, levels, ends, secs = ([] for _ in range(8))
        for seed in seeds:
            X, _ = load_data(data, seed)
            lam = farthest_first_lambda(X, 3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                path, s = bench.timed(lambda: small_variance_path(seed, X, lam))  # noqa: B023
            drop = float(np.max(np.maximum.accumulate(path.nmi_point) - path.nmi_point))
            stops.append(path.stop)
            drops.append(drop)
            if path.stop == "hard":
                drops_dp.append(drop)
            nmi.append(float(path.nmi_point[-1]))
            p_k.append(float(path.p_k_hard[-1]))
            levels.append(len(path.temperature))
            ends.append(float(path.relative_temperature[-1]))
            secs.append(s)
        bench.emit({
            "benchmark": "small_variance_path", "data": data, "seeds": len(seeds),
            "ends_on_dp_means": stops.count("hard"),
            "ends_lower_objective": stops.count("lower_objective"),
            "ends_at_floor": stops.count("floor"),
            "max_drop": max(drops),
            "max_drop_dp_means": max(drops_dp) if drops_dp else float("nan"),
            "final_nmi_mean": float(np.mean(nmi)), "final_p_k_mean": float(np.mean(p_k)),
            "levels_mean": float(np.mean(levels)), "smallest_sigma2_over_lam": min(ends),
            "seconds_mean": float(np.mean(secs)),
        })


if __name__ == "__main__":
    main()
