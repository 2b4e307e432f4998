"""The DP mixture of multinomials on an ensemble's co-association rows, by sampling and by its
hard limit (KL-means), side by side.

:func:`run_compare_aspect` is the job behind ``bayesclust compare --model aspect``.  Like every
job it sits at the top of the import graph.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from .. import _validation as V
from .. import metrics
from ..comparison import compare, limit_path
from ..estimators.consensus import AspectConsensus, KLMeansConsensus
from ..inference.consensus.ensembles import kmeans_ensemble
from ..inference.mixtures.multinomial_gibbs import gibbs_dp_multinomial
from ._common import (
    comparison_figure,
    convergence,
    load_data,
    path_report,
    path_settings,
    path_summary,
    timed,
    write_outputs,
)

__all__ = ["run_compare_aspect"]

#: The ensemble: k-means partitions of the data (PEnCA's K rule), as EvidenceAccumulation builds.
N_PARTITIONS = 150


def run_compare_aspect(
    data: str = "iris",
    out_dir: str | Path = "results",
    *,
    n_clusters: int | None = None,
    seed: int = 0,
    num_warmup: int = 100,
    num_samples: int = 100,
    num_chains: int = 4,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """The DP mixture of multinomials on co-association rows, sampled and in its hard limit.

    Builds a k-means ensemble of ``N_PARTITIONS`` partitions of the data (seeded by
    ``seed``), and clusters the rows of its co-association counts (with the diagonal) two
    ways (our extension, docs/deviations.md#kl-means): by **KL-means**
    (:class:`~bayesclust.estimators.consensus.KLMeansConsensus`, ``lam`` searched for
    ``n_clusters`` clusters) and by **Gibbs sampling** of the DP mixture of multinomials
    (:func:`~bayesclust.inference.mixtures.multinomial_gibbs.gibbs_dp_multinomial`, collapsed,
    at ``tau = 1``: the untempered model, with KL-means' ``lam`` in ``alpha = e^{-lam}``);
    then the limit path (:func:`~bayesclust.comparison.path.limit_path`, ``model="aspect"``)
    anneals the sampler down ``tau`` onto KL-means.  PEnCA (the dyadic aspect model by EM on
    the same ensemble, Fred & Jain's co-association; :class:`AspectConsensus`) is the peer.
    Writes ``compare_aspect.json`` and ``compare_aspect.png``.

    Parameters
    ----------
    data : str
        A built-in data set (default ``"iris"``) or a CSV/TSV/NPY file (then give
        ``n_clusters``).
    out_dir : path
    n_clusters : int, optional
        Clusters whose KL-means penalty is looked for, and PEnCA's aspects; default the
        number of true classes.
    seed : int
        Seeds the ensemble, the sampler and the path.
    num_warmup, num_samples, num_chains : int
        Gibbs sampler settings.
    plot, progress_bar : bool
    labels : str, optional
        The true labels of a data file: a file with one label per row or a column of
        ``data`` (its header name or 0-based index), removed from the features; NMI / ARI
        to them are reported.

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    X, y = load_data(data, seed, labels)
    n, d = X.shape
    if n_clusters is None:
        if y is None:
            raise ValueError("give --n-clusters for a data file without true labels")
        n_clusters = metrics.n_clusters(y)
    k = V.check_int(n_clusters, "--n-clusters", minimum=1)
    if k > n:
        raise ValueError(f"--n-clusters must be <= the number of samples ({n}), got {k}")
    ensemble, ens_s = timed(lambda: kmeans_ensemble(seed, X, N_PARTITIONS).labels)
    hard, hard_s = timed(lambda: KLMeansConsensus(k, random_state=seed).fit(ensemble=ensemble))
    tau = 1.0
    post = gibbs_dp_multinomial(seed, hard.coassociation_, lam=hard.lam_, tau=tau,
                                collapsed=True, num_warmup=num_warmup, num_samples=num_samples,
                                num_chains=num_chains, progress_bar=progress_bar)
    peer, peer_s = timed(lambda: AspectConsensus(k, random_state=seed).fit(ensemble=ensemble))
    with warnings.catch_warnings():
        # The floor is recorded in the JSON and the report instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        path = limit_path(seed, X, model="aspect", lam=hard.lam_, ensemble=ensemble,
                          **path_settings(num_warmup, num_samples, num_chains))
    report = compare(post, hard, y, X=X, ensemble=ensemble, path=path)
    conv = convergence(post)

    def vs_truth(labels):
        return {} if y is None else {"nmi": metrics.nmi(y, labels), "ari": metrics.ari(y, labels)}

    summary = {
        "data": str(data), "model": "aspect", "seed": seed, "n_samples": n, "n_features": d,
        "n_true_classes": None if y is None else metrics.n_clusters(y),
        "ensemble": {"base": "k-means (PEnCA's K rule)", "n_partitions": N_PARTITIONS,
                     "seconds": ens_s},
        "kl_means": {"lam": hard.lam_, "lam_rule": f"searched for k={k}",
                     "n_clusters": hard.n_clusters_, "objective": hard.objective_,
                     "n_iter": hard.n_iter_, "seconds": hard_s, **vs_truth(hard.labels_)},
        "gibbs": {"sampler": post.sampler, "tau": tau, "collapsed": True,
                  "num_chains": num_chains, "num_warmup": num_warmup,
                  "num_samples": num_samples,
                  "k_distribution": {str(kk): v for kk, v in post.k_distribution().items()},
                  "rhat_k": conv["rhat"], "ess_bulk_k": conv["ess_bulk"],
                  "seconds_including_compile": post.seconds,
                  **vs_truth(report.point)},
        "penca": {"peer": "AspectConsensus (PEnCA, EM)", "n_clusters": k, "seconds": peer_s,
                  **vs_truth(peer.labels_)},
        "comparison": report.to_dict(),
        "limit_path": path_summary(path),
    }
    figure = (lambda f: comparison_figure(report, f, title=str(data))) if plot else None
    wrote = write_outputs(summary, out_dir, "compare_aspect", figure)
    truth = "" if y is None else f", {metrics.n_clusters(y)} true classes"
    penca = "" if y is None else f"NMI {summary['penca']['nmi']:.3f}, "
    summary["report"] = "\n".join([
        f"{data}: {n} x {d}{truth}; rows of the co-association of {N_PARTITIONS} k-means "
        f"partitions (seed {seed}); sampler at tau = {tau:g}, KL-means lam {hard.lam_:.4g}",
        str(report),
        f"PEnCA peer (EM of the dyadic aspect model, k={k}): {penca}{peer_s:.2f} s",
        path_report(path),
        wrote,
    ])
    return summary
