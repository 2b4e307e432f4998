"""The HDP mixture's CRF sampler: a whole first fit with its defaults, native kernel vs XLA path.

One ``crf_sampler_first_fit`` row per (case, path): the wall and CPU seconds of a first fit in a fresh
Python process with JAX's persistent compilation cache off (``BAYESCLUST_CACHE=0``: every
compilation counted, as a user waits for a first fit; import and data outside the timing),
the seconds JAX reports compiling (``backend_compile``), the R-hat and bulk ESS of the number
of global clusters and of the log-likelihood, and whether a ``ConvergenceWarning`` was issued.
The path is the native CRF kernel (``hdp.cc``: point, table and split-merge moves) or the XLA
scans (``BAYESCLUST_NATIVE=0``), both in the same run; their random streams differ.

Cases (targets: <= 20 s wall on 2 cores, R-hat <= 1.05, compile included):

* ``groups``: ``HDPGaussianMixture(random_state=0)`` on ``datasets.hdp_groups(0)`` (50 data
  sets of 25 2-D points);
* ``wine-3``: ``HDPGaussianMixture(random_state=0)`` on wine standardised, rows split into 3
  data sets by ``row % 3``;
* ``compare``: ``bayesclust compare --model hdp --no-plot`` (its defaults: the sampler at
  thin 8, the peers, the limit path), the whole command's wall and CPU time.

Usage: python benchmarks/hdp_sampler.py [--quick] [--cases groups wine-3 compare] [--paths native xla]
[--settings JSON]

``--settings``: keyword arguments of ``HDPGaussianMixture`` instead of its defaults (recorded
in the row), e.g. the former defaults (1000 sweeps) for both paths side by side.

``--quick``: the ``groups`` and ``wine-3`` cases only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import _common as bench

NOTE = ("A first fit in a fresh process, persistent compilation cache off (every compilation "
        "counted; import and data outside, but compare: the whole command). cpu_s: CPU seconds "
        "of all threads (less inflated by the shared machine's queue; on 2 free cores the wall "
        "time lies between cpu_s / 2 and cpu_s). compile_s: JAX's backend_compile seconds "
        "(wall). rhat / ess: of the draws the estimator keeps (keep_draws=100 per chain, spread "
        "over the chain); warned: the fit's own check on every draw (compare: the job's JSON, "
        "every draw). native = the CRF kernel hdp.cc, xla = BAYESCLUST_NATIVE=0; their random "
        "streams differ. Targets: <= 20 s wall on 2 cores, R-hat <= 1.05. The machine was "
        "shared with other sessions (load_avg: the 1-minute load average at the start).")

_CHILD = r"""
import json, os, sys, time, warnings
import numpy as np
from jax import monitoring
compile_s = [0.0]
def listen(event, duration, **kw):
    if event.endswith("backend_compile_duration"):
        compile_s[0] += duration
monitoring.register_event_duration_secs_listener(listen)
from bayesclust import HDPGaussianMixture, ConvergenceWarning, datasets
case = sys.argv[1]
if case == "groups":
    groups, _, _ = datasets.hdp_groups(0)
    X = np.concatenate(groups)
    g = np.repeat(np.arange(len(groups)), [len(a) for a in groups])
else:
    X, _ = datasets.load("wine")
    X = (X - X.mean(0)) / X.std(0)
    g = np.arange(len(X)) % 3
est = HDPGaussianMixture(random_state=0, **json.loads(sys.argv[2]))
c0, t0 = sum(os.times()[:2]), time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    est.fit(X, group_ids=g)
wall, cpu = time.perf_counter() - t0, sum(os.times()[:2]) - c0
diag = est.posterior_.diagnostics()
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "compile_s": compile_s[0],
                  "kernels": est.posterior_.kernels,
                  "rhat_k": diag["n_clusters"]["rhat"], "ess_k": diag["n_clusters"]["ess_bulk"],
                  "rhat_loglik": diag["log_likelihood"]["rhat"],
                  "ess_loglik": diag["log_likelihood"]["ess_bulk"],
                  "mean_k": float(np.mean(est.posterior_.n_clusters)),
                  "warned": any(issubclass(w.category, ConvergenceWarning) for w in caught)}))
"""


def _env(path):
    env = dict(os.environ, BAYESCLUST_CACHE="0")
    if path == "xla":
        env["BAYESCLUST_NATIVE"] = "0"
    return env


def run_case(case, path, settings):
    load = os.getloadavg()[0]
    if case == "compare":
        with tempfile.TemporaryDirectory() as out:
            cli = os.path.join(os.path.dirname(sys.executable), "bayesclust")
            cmd = [cli, "compare", "--model", "hdp", "--out", out, "--no-plot", "--no-progress"]
            before = os.times()
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, env=_env(path), capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = os.times()
            if proc.returncode != 0:
                raise RuntimeError(f"compare --model hdp failed:\n{proc.stderr[-2000:]}")
            summary = json.load(open(os.path.join(out, "compare_hdp.json")))
        gibbs = summary["gibbs"]
        return {"wall_s": wall, "cpu_s": (after[2] - before[2]) + (after[3] - before[3]),
                "kernels": gibbs["kernels"], "rhat_k": gibbs["rhat_k"], "ess_k": gibbs["ess_bulk_k"],
                "sampler_s": gibbs["seconds_including_compile"],
                "warned": "ConvergenceWarning" in proc.stderr, "load_avg": load}
    proc = subprocess.run([sys.executable, "-c", _CHILD, case, json.dumps(settings)],
                          env=_env(path), capture_output=True, text=True, check=True)
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["load_avg"] = load
    row["sweeps"] = settings.get("num_warmup", "default")
    return row


def main():
    p = bench.parser(__doc__, "the groups and wine-3 cases only")
    p.add_argument("--cases", nargs="+", default=["groups", "wine-3", "compare"])
    p.add_argument("--paths", nargs="+", default=["native", "xla"])
    p.add_argument("--settings", default="{}",
                   help="JSON keyword arguments of HDPGaussianMixture (e.g. the former defaults "
                        '\'{"num_warmup": 500, "num_samples": 500, "thin": 1}\', for the XLA path '
                        "in a time the machine allows)")
    args = p.parse_args()
    settings = json.loads(args.settings)
    cases = ["groups", "wine-3"] if args.quick else args.cases
    bench.emit(bench.environment("hdp_sampler.py", ("jax",)))
    bench.emit({"benchmark": "crf_sampler_first_fit", "note": NOTE})
    for case in cases:
        for path in args.paths:
            row = run_case(case, path, settings)
            if settings:
                row["settings"] = ", ".join(f"{k}={v}" for k, v in settings.items())
            row.pop("sweeps", None)
            bench.emit({"benchmark": "crf_sampler_first_fit", "case": case, "path": path, **row})


if __name__ == "__main__":
    main()
