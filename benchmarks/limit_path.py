"""Every family's limit path: does the annealed posterior collapse onto its hard limit, and how fast?

For each shipped family of :func:`bayesclust.limit_path` (``model`` in ``"dp"``, ``"hdp"``,
``"dc"``, ``"aspect"``), on three data sets and 10 seeds, with the engine's defaults (16
chains, the family's top temperature down by sqrt(10) per level to the collapse or the floor
``1e-9 lam``), prints one ``limit_path_collapse`` row per (family, data set):

* how the paths ended (``stop``): on the hard limit's partition (``hard``), on a partition of
  lower hard objective (``lower_objective``: the hard algorithm, a local search, stopped
  above it), at the floor or at the end of the grid; target: ``hard`` + ``lower_objective``
  >= 8 of 10 on every data set;
* ``max_rise``: the largest rise of ``objective_point`` (the hard objective ``J`` of the
  level's posterior point partition) above its lowest value at the levels before, relative
  to ``|J|`` of the hard partition, over all seeds, and the number of paths whose rise
  exceeds the level's noise (target: none).  The noise of a level is twice the Monte Carlo
  standard error of the level's mean ``J`` over its chains (the standard deviation of the
  chains' mean ``J`` over the draws, divided by sqrt(number of chains)), added over the two
  levels compared;
* the levels run (mean, max) and the smallest ``temperature / lam`` reached; seconds per path
  (in this process, so compiled by the first seed of the family).

Then one ``limit_path_time`` row per family at n = 500: the wall seconds of one
``limit_path`` call in a fresh Python process with JAX's persistent compilation cache off
(``BAYESCLUST_CACHE=0``: every compilation counted, as a user waits for a first call; import
and data outside the timing, the process's whole wall time beside it) and of the same call
again in that process (warm); target < 30 s on 2 cores for both.

The data (chosen before any run and not tuned; the issue asks us to say which):

* ``dp``: ``datasets.three_gaussians(seed)`` (a new draw per seed), Iris, Wine standardised
  (columns to zero mean and unit variance); ``lam`` by farthest-first at the number of classes;
* ``hdp``: draws of ``datasets.hdp_groups(seed, ...)`` (Kulis & Jordan's §6.3 design scaled
  down, the designs of ``benchmarks/hdp_path.py``): ``kj-20x25``, ``5x100``,
  ``10x30-tight``; penalties by ``hard_hdp_penalties`` at the design's numbers of local and
  global clusters;
* ``dc``: Iris, Wine standardised and WDBC (``breast-cancer``) standardised with their classes
  as ``y``; ``xi = 1``; ``lam`` by farthest-first at the number of classes;
* ``aspect``: the default k-means ensemble (150 partitions, ``random_state=0``) of Iris, Wine
  standardised and ``biopsy`` features; ``lam`` by ``kl_means_lambda`` at the number of classes.

n = 500 timing data: ``three_gaussians(0, n_per_cluster=167)`` (first 500 rows) for ``dp`` and
``aspect``, ``dc_toy(0, 500)`` with ``lam`` by farthest-first at k = 5 for ``dc`` (as
``benchmarks/hard_dc.py``), ``hdp_groups`` ``5x100`` for ``hdp``.

Usage: python benchmarks/limit_path.py [--quick] [--models dp hdp ...] [--data NAME ...] [--seeds N]
[--no-time] [--no-collapse]

``--quick``: 3 seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import _common as bench
import numpy as np

MODELS = ("dp", "hdp", "dc", "aspect")
TARGET_SECONDS = 30.0
TARGET_COLLAPSED = 8  # of 10 seeds

#: hdp_groups designs: name -> (arguments, n_local, n_global) (benchmarks/hdp_path.py's).
HDP_DESIGNS = {
    "kj-20x25": (dict(n_groups=20, n_components=15, components_per_group=5, n_per_component=5), 5, 15),
    "5x100": (dict(n_groups=5, n_components=8, components_per_group=4, n_per_component=25), 4, 8),
    "10x30-tight": (dict(n_groups=10, n_components=6, components_per_group=3, n_per_component=10,
                         std=0.05), 3, 6),
}

DATA = {
    "dp": ("three-gaussians", "iris", "wine-std"),
    "hdp": tuple(HDP_DESIGNS),
    "dc": ("iris", "wine-std", "breast-cancer-std"),
    "aspect": ("iris", "wine-std", "biopsy"),
}

NOTE = ("limit_path with its defaults (16 chains, 30 + 20 sweeps per level, the family's top "
        "temperature down by sqrt(10) per level, resampling between levels, one chain restarted "
        "per level at the hard algorithm's start). collapsed = stop in {hard, lower_objective} "
        "(target >= 8 of 10 seeds per data set). max_rise = largest rise of objective_point above "
        "its lowest value at earlier levels, relative to the hard partition's |J|; "
        "rises_over_noise = paths whose rise exceeds the noise (2 Monte Carlo standard errors of "
        "the chains' mean J at each of the two levels compared; target 0). Data (chosen, not "
        "tuned): dp three_gaussians(seed) / iris / wine standardised (lam farthest-first at the "
        "classes' k); hdp hdp_groups designs of hdp_path.py; dc iris / wine / WDBC standardised, "
        "classes as y, xi = 1; aspect the default 150-partition k-means ensemble of iris / wine "
        "standardised / biopsy (kl_means_lambda at the classes' k). Seconds per path in one "
        "process (the family's first seed compiles). The machine was shared with other sessions.")

NOTE_TIME = ("One limit_path call at n = 500 in a fresh process with the persistent compilation "
             "cache off (cold: every compilation counted; import and data outside), the same call "
             "again in that process (warm), and the process's whole wall time; *_cpu_s: CPU "
             "seconds of all threads of the call (less inflated by the shared machine's queue; on "
             "2 free cores the wall time would lie between cpu_s / 2 and cpu_s); target < 30 s on "
             "2 cores. Data: dp and aspect three_gaussians(0, 167 per cluster)[:500] at k = 3, dc "
             "dc_toy(0, 500) at k = 5, xi = 1, hdp hdp_groups 5x100. The machine was shared with "
             "other sessions (load_avg: the 1-minute load average at the start).")


def _standardise(X):
    return (X - X.mean(0)) / X.std(0)


def _load(name, seed):
    """``(X, y)`` of a named data set (``-std``: standardised columns)."""
    from bayesclust import datasets

    base = name.removesuffix("-std")
    X, y = datasets.three_gaussians(seed) if base == "three-gaussians" else datasets.load(base)
    return (_standardise(X) if name.endswith("-std") else X), y


def problem(model, name, seed):
    """The keyword arguments of ``limit_path`` for one family, data set and seed."""
    from bayesclust import farthest_first_lambda, hard_hdp_penalties

    if model == "hdp":
        from bayesclust.datasets import hdp_groups

        kwargs, n_local, n_global = HDP_DESIGNS[name]
        groups, _, _ = hdp_groups(seed, **kwargs)
        X = np.concatenate(groups)
        gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        return dict(X=X, group_ids=gid, lam=hard_hdp_penalties(X, n_local, n_global, group_ids=gid))
    X, y = _load(name, seed)
    k = len(np.unique(y))
    if model == "dp":
        return dict(X=X, lam=farthest_first_lambda(X, k))
    if model == "dc":
        return dict(X=X, y=y, lam=farthest_first_lambda(X, k), xi=1.0)
    return dict(X=X, n_clusters=k)  # aspect: the default ensemble, kl_means_lambda at k


def _recording(family):
    """``family`` wrapped so that every level's draws are kept (for the noise of ``J``)."""
    from bayesclust.comparison.path import LimitFamily

    class Recording(LimitFamily):
        name, hard_name = family.name, family.hard_name
        temperature_name = family.temperature_name
        n_samples, scale = family.n_samples, family.scale

        def __init__(self):
            self.levels = []

        def hard(self):
            return family.hard()

        def objective(self, labels):
            return family.objective(labels)

        def temperature_max(self):
            return family.temperature_max()

        def log_target(self, states, temperature):
            return family.log_target(states, temperature)

        def initial_states(self, num_chains):
            return family.initial_states(num_chains)

        def restart(self, states, chain):
            return family.restart(states, chain)

        def take(self, states, index):
            return family.take(states, index)

        def sample(self, rng_key, temperature, states, *, num_warmup, num_samples):
            states, draws = family.sample(rng_key, temperature, states, num_warmup=num_warmup,
                                          num_samples=num_samples)
            self.levels.append(np.asarray(draws))
            return states, draws

    return Recording()


def _level_noise(family, draws):
    """Twice the Monte Carlo standard error of the level's mean ``J``: chains' means, (C, S, n)."""
    C, S, n = draws.shape
    flat = draws.reshape(-1, n)
    uniq, inv = np.unique(flat, axis=0, return_inverse=True)
    J = np.array([family.objective(z) for z in uniq])[np.asarray(inv).reshape(-1)].reshape(C, S)
    return 2.0 * float(np.std(J.mean(axis=1), ddof=1) / np.sqrt(C))


def rise(path, noise):
    """``(largest rise of objective_point above its running minimum, relative to |J_hard|,
    whether some rise exceeds the noise of the two levels)``."""
    J = np.asarray(path.objective_point, float)
    scale = abs(path.hard_objective) or 1.0
    worst, over = 0.0, False
    for i in range(1, len(J)):
        j = int(np.argmin(J[:i]))
        r = J[i] - J[j]
        worst = max(worst, r / scale)
        over |= bool(r > noise[i] + noise[j])
    return worst, over


def collapse_row(model, name, seeds):
    from bayesclust import limit_path
    from bayesclust.comparison.path import family_class

    stops, rises, over, levels, ends, secs, nmi, n = ([] for _ in range(8))
    for seed in seeds:
        kw = problem(model, name, seed)
        X = kw.pop("X")
        fam = _recording(family_class(model)(X, **kw))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the floor is counted, not warned
            path, s = bench.timed(lambda: limit_path(seed, model=fam))  # noqa: B023
        noise = [_level_noise(fam, d) for d in fam.levels]
        r, o = rise(path, noise)
        stops.append(path.stop)
        rises.append(r)
        over.append(o)
        levels.append(len(path.temperature))
        ends.append(float(path.relative_temperature[-1]))
        secs.append(s)
        nmi.append(float(path.nmi_point[-1]))
        n.append(int(fam.n_samples))
        print(json.dumps({"model": model, "data": name, "seed": seed, "stop": path.stop,
                          "rise": r, "over_noise": o, "levels": len(path.temperature),
                          "seconds": s}), file=sys.stderr, flush=True)  # progress
    collapsed = stops.count("hard") + stops.count("lower_objective")
    return {
        "benchmark": "limit_path_collapse", "model": model, "data": name, "n": n[0],
        "seeds": len(seeds), "hard": stops.count("hard"),
        "lower_objective": stops.count("lower_objective"), "floor": stops.count("floor"),
        "grid": stops.count("grid"), "collapsed": collapsed,
        "target_met": collapsed >= TARGET_COLLAPSED * len(seeds) / 10 and not any(over),
        "max_rise": max(rises), "rises_over_noise": int(sum(over)),
        "final_nmi_mean": float(np.mean(nmi)), "levels_mean": float(np.mean(levels)),
        "levels_max": max(levels), "smallest_t_over_lam": min(ends),
        "seconds_mean": float(np.mean(secs)), "seconds_max": float(np.max(secs)),
        "stops": stops,
    }


def time_problem(model):
    """The n = 500 problem of the timing row: ``limit_path`` keyword arguments."""
    from bayesclust import datasets, farthest_first_lambda

    if model == "hdp":
        return problem("hdp", "5x100", 0)
    if model == "dc":
        X, y = datasets.dc_toy(0, 500)
        return dict(X=X, y=y, lam=farthest_first_lambda(X, 5), xi=1.0)
    X = datasets.three_gaussians(0, n_per_cluster=167)[0][:500]
    return dict(X=X, lam=farthest_first_lambda(X, 3)) if model == "dp" else dict(X=X, n_clusters=3)


def _time_child(model):
    """In the fresh process: one cold and one warm call; prints one JSON line."""
    from bayesclust import limit_path

    kw = time_problem(model)
    X = kw.pop("X")
    out = {}
    for which in ("cold", "warm"):
        cpu = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            path, s = bench.timed(lambda: limit_path(0, X, model=model, **kw))  # noqa: B023
        out[f"{which}_s"] = s
        # CPU seconds of every thread: on a machine shared with other sessions the wall time
        # is inflated by the queue for the cores, the CPU time much less.
        out[f"{which}_cpu_s"] = time.process_time() - cpu
    out.update(n=len(X), stop=path.stop, levels=len(path.temperature))
    print(json.dumps(out), flush=True)


def time_row(model):
    env = dict(os.environ, BAYESCLUST_CACHE="0")
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--time-child", model], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        return {"benchmark": "limit_path_time", "model": model, "error": proc.stderr[-300:]}
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"benchmark": "limit_path_time", "model": model, "n": child["n"],
            "stop": child["stop"], "levels": child["levels"], "cold_s": child["cold_s"],
            "warm_s": child["warm_s"], "cold_cpu_s": child["cold_cpu_s"],
            "warm_cpu_s": child["warm_cpu_s"], "process_s": wall,
            "target_met": max(child["cold_s"], child["warm_s"]) < TARGET_SECONDS,
            "load_avg": load}


def main():
    if sys.argv[1:2] == ["--time-child"]:
        _time_child(sys.argv[2])
        return
    p = bench.parser(__doc__, "3 seeds")
    p.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    p.add_argument("--data", nargs="+", default=None, help="only these data sets (names in DATA)")
    p.add_argument("--seeds", type=int, default=None, help="number of seeds (default 10)")
    p.add_argument("--no-time", action="store_true", help="skip the n = 500 timing rows")
    p.add_argument("--no-collapse", action="store_true", help="only the n = 500 timing rows")
    args = p.parse_args()
    seeds = range(args.seeds or (3 if args.quick else 10))
    bench.emit(bench.environment("limit_path.py", ("jax", "numpy")))
    if not args.no_collapse:
        bench.emit({"benchmark": "limit_path_collapse", "note": NOTE})
        for model in args.models:
            for name in DATA[model]:
                if args.data and name not in args.data:
                    continue
                bench.emit(collapse_row(model, name, seeds))
    if not args.no_time:
        bench.emit({"benchmark": "limit_path_time", "note": NOTE_TIME})
        for model in args.models:
            bench.emit(time_row(model))


if __name__ == "__main__":
    main()
