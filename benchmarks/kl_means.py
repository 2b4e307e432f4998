"""KL-means consensus beside EAC, PEnCA and PPC on the same ensemble, and its limit path.

KL-means (our extension: the small-variance limit of the DP mixture of multinomials on the
co-association rows, docs/deviations.md#kl-means).  For iris, standardised wine and MASS
biopsy, one k-means ensemble of 150 partitions per seed (PEnCA's K rule), at the true K:

* ``KLMeansConsensus(n_clusters=K)`` (collapsed moves; ``lam`` searched from the
  farthest-first ``lam`` for K clusters), and KL-means' Algorithm 1 moves at the same
  ``lam`` (``kl_means(collapsed=False)``);
* EAC (average link), PEnCA (``aspect_em``, 10 starts) and PPC (``ppc``, 5 starts) on the
  same co-association;

NMI and ARI to the truth for each (target: KL-means within .02 of the best of EAC, PEnCA
and PPC), and the time of KL-means' search and of PEnCA's EM (least of 2 calls, compilation
excluded; target: KL-means faster).  A last row times ``limit_path(model="aspect")`` at
n = 500 (three Gaussian blobs, 150 partitions, ``n_clusters=3``) in a fresh process,
imports and compilation included (target < 30 s).

Usage: python benchmarks/kl_means.py [--quick]

``--quick``: 1 seed (full: 5).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import _common as bench
import numpy as np

DATA = (("iris", 3, False), ("wine", 3, True), ("biopsy", 2, False))
NOTE = ("NMI / ARI to the classes at the true K on one k-means ensemble of 150 partitions per "
        "seed (PEnCA's K rule), every consensus on the same co-association; seconds: least of 2 "
        "calls, compilation excluded; the machine was shared by other sessions.")

PATH_SCRIPT = """
import time
t0 = time.time()
import warnings
import numpy as np
from bayesclust import limit_path
rng = np.random.default_rng(0)
X = np.concatenate([rng.normal(c, 0.6, (n_, 2)) for n_, c in zip((167, 167, 166),
                    [(-2, 0), (2, 0), (0, 3)])])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    path = limit_path(0, X, model="aspect", n_clusters=3)
print(path.stop, len(path.temperature), float(path.relative_temperature[-1]), time.time() - t0)
"""


def _load(name, standardise):
    from bayesclust import datasets

    X, y = datasets.load(name)
    if standardise:
        X = (X - X.mean(0)) / X.std(0)
    return X, y


def run_consensus(name: str, k: int, standardise: bool, seed: int) -> dict:
    import jax

    from bayesclust import KLMeansConsensus, aspect_em, coassociation, kl_means, kmeans_ensemble, ppc
    from bayesclust.inference.consensus.linkage import linkage_consensus
    from bayesclust.metrics import ari, nmi

    X, y = _load(name, standardise)
    ens = kmeans_ensemble(seed, X, 150)
    C = coassociation(ens)
    row = {"benchmark": "kl_means_consensus", "data": name + ("-norm" if standardise else ""),
           "n": int(X.shape[0]), "K": k, "seed": seed}

    def klm():
        return KLMeansConsensus(n_clusters=k).fit(ensemble=ens.labels)

    est = klm()
    row["seconds_kl_means"] = bench.least_seconds(klm, 2)
    row["kl_means_k"] = est.n_clusters_
    row["kl_means_lam"] = est.lam_
    explicit = kl_means(C, est.lam_)
    labels = {
        "kl_means": est.labels_,
        "kl_means_explicit": explicit.labels,
        "eac": linkage_consensus(C, "average", k).labels,
        "ppc": ppc(jax.random.PRNGKey(seed), C, k, n_init=5).labels,
    }
    row["kl_means_explicit_k"] = explicit.n_clusters

    def em():
        return aspect_em(jax.random.PRNGKey(seed), C, k)

    labels["penca"] = em().labels
    row["seconds_penca_em"] = bench.least_seconds(em, 2)
    for method, lab in labels.items():
        row[f"nmi_{method}"] = float(nmi(y, lab))
        row[f"ari_{method}"] = float(ari(y, lab))
    for score in ("nmi", "ari"):
        best = max(row[f"{score}_{m}"] for m in ("eac", "penca", "ppc"))
        row[f"{score}_kl_means_minus_best_peer"] = row[f"{score}_kl_means"] - best
    row["time_ratio_kl_means_over_penca"] = row["seconds_kl_means"] / row["seconds_penca_em"]
    return row


def run_path() -> dict:
    out = subprocess.run([sys.executable, "-c", PATH_SCRIPT], check=True, capture_output=True,
                         text=True).stdout.split()
    return {"benchmark": "kl_means_limit_path", "n": 500, "stop": out[0], "levels": int(out[1]),
            "smallest_tau_over_lam": float(out[2]), "seconds_fresh_process": float(out[3])}


def main():
    args = bench.parser(__doc__, "1 seed").parse_args()
    seeds = range(1 if args.quick else 5)
    bench.emit(bench.environment("kl_means.py", ("jax", "numpy")))
    bench.emit({"benchmark": "kl_means_consensus", "note": NOTE})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, k, standardise in DATA:
            rows = [run_consensus(name, k, standardise, s) for s in seeds]
            for r in rows:
                bench.emit(r)
            keys = [key for key in rows[0] if key.startswith(("nmi_", "ari_", "seconds_", "time_"))]
            bench.emit({"benchmark": "kl_means_consensus_mean", "data": rows[0]["data"],
                        "seeds": len(rows), **{key: float(np.mean([r[key] for r in rows]))
                                               for key in keys}})
    bench.emit(run_path())


if __name__ == "__main__":
    main()
