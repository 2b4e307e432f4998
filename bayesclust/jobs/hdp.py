"""The HDP mixture by sampling and by its hard limit, next to pooled and per-data-set peers.

* :func:`grouped_peers` -- the baselines of Kulis & Jordan's §6.3 on grouped data:
  k-means and DP-means on the pooled data, and on each data set separately.
* :func:`run_compare_hdp` -- the job behind ``bayesclust compare --model hdp``.

Like every job, this module sits at the top of the import graph; scikit-learn is
used only as the external k-means peer.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .. import _validation as V
from .. import datasets, metrics
from ..comparison import compare, limit_path
from ..inference.hard.dp_means import dp_means, farthest_first_lambda
from ..inference.hard.hard_hdp import hard_hdp, hard_hdp_penalties
from ..inference.mixtures.convergence import HDP_SAMPLER_DEFAULTS
from ..inference.mixtures.hdp_gibbs import gibbs_hdp_gmm
from . import HDP_JOB_THIN
from ._common import (
    convergence,
    path_report,
    path_settings,
    path_summary,
    save_figure,
    timed,
    write_outputs,
)

__all__ = ["grouped_peers", "run_compare_hdp"]


def grouped_peers(groups, n_local: int, n_global: int, *, seed: int = 0) -> dict:
    """Peers of the HDP on grouped data: one labelling per data set for each.

    Parameters
    ----------
    groups : list of ndarray, shape (n_j, d) each
    n_local : int
        Clusters per data set for the per-data-set peers (k-means ``k``; DP-means
        farthest-first ``k``, capped at ``n_j``).
    n_global : int
        Clusters of the pooled peers.
    seed : int
        k-means random state.

    Returns
    -------
    dict of str -> dict
        ``"kmeans pooled"``, ``"DP-means pooled"``, ``"kmeans per data set"``,
        ``"DP-means per data set"``; each ``{"labels": [per data set], "k": int or
        mean, "seconds": float}``.  k-means is scikit-learn's ``KMeans`` with
        ``n_init=10``; DP-means visits the points in the given order.
    """
    from sklearn.cluster import KMeans

    X = np.concatenate(groups)
    splits = np.cumsum([len(g) for g in groups])[:-1]
    out = {}
    km, t = timed(lambda: KMeans(n_global, n_init=10, random_state=seed).fit(X).labels_)
    out["kmeans pooled"] = {"labels": np.split(km, splits), "k": n_global, "seconds": t}
    dpm, t = timed(lambda: dp_means(X, farthest_first_lambda(X, n_global)))
    out["DP-means pooled"] = {"labels": np.split(np.asarray(dpm.labels), splits),
                              "k": dpm.n_clusters, "seconds": t}
    from threadpoolctl import threadpool_limits

    # Tens of tiny fits: OpenMP threads only add overhead (BENCHMARKS.md).
    with threadpool_limits(1):
        kms, t = timed(lambda: [KMeans(min(n_local, len(g)), n_init=10, random_state=seed)
                                 .fit(g).labels_ for g in groups])
    out["kmeans per data set"] = {"labels": kms, "k": float(n_local), "seconds": t}
    dps, t = timed(lambda: [dp_means(g, farthest_first_lambda(g, min(n_local, len(g))))
                             for g in groups])
    out["DP-means per data set"] = {"labels": [np.asarray(r.labels) for r in dps],
                                    "k": float(np.mean([r.n_clusters for r in dps])),
                                    "seconds": t}
    return out


def run_compare_hdp(
    data: str = "hdp-groups",
    out_dir: str | Path = "results",
    *,
    seed: int = 0,
    n_local: int | None = None,
    n_global: int | None = None,
    num_warmup: int = HDP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = HDP_SAMPLER_DEFAULTS.num_samples,
    num_chains: int = HDP_SAMPLER_DEFAULTS.num_chains,
    thin: int = HDP_JOB_THIN,
    plot: bool = True,
    progress_bar: bool = True,
) -> dict:
    """The HDP mixture by sampling and by its hard limit, on grouped data, side by side.

    Runs the hard Gaussian HDP (penalties from :func:`bayesclust.hard_hdp_penalties`
    for ``n_local`` local clusters per data set and ``n_global`` global clusters),
    the CRF Gibbs sampler of the HDP mixture (``sigma2`` = the hard HDP's pooled
    within-cluster variance per coordinate, ``rho2`` = the data's variance per
    coordinate, ``alpha = gamma = 1``), and the peers of :func:`grouped_peers`;
    scores every method by the per-data-set NMI averaged over the data sets
    (Kulis & Jordan 2012, §6.3); sets the sampled HDP beside the hard one in
    :func:`~bayesclust.comparison.report.compare`'s report (both scored by the hard HDP
    objective) with the limit path (:func:`~bayesclust.comparison.path.limit_path`,
    ``model="hdp"``) annealing the sampler onto the hard HDP; writes ``compare_hdp.json``
    and ``compare_hdp.png``.

    Parameters
    ----------
    data : {"hdp-groups"}
        Kulis & Jordan's grouped synthetic data (:func:`bayesclust.datasets.hdp_groups`,
        drawn with ``seed``).
    n_local, n_global : int, optional
        Default: the mean number of true classes per data set, and of true classes.
    seed : int
    num_warmup, num_samples, num_chains, thin : int
        Gibbs sampler settings (defaults: those of :func:`bayesclust.gibbs_hdp_gmm`, but
        ``thin`` :data:`bayesclust.jobs.HDP_JOB_THIN`).
    plot, progress_bar : bool

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    if data != "hdp-groups":
        raise ValueError(f"--model hdp needs grouped data: the built-in 'hdp-groups' (got {data!r})")
    groups, labels, _ = datasets.hdp_groups(seed)
    X = np.concatenate(groups)
    n, d = X.shape
    if n_global is None:
        n_global = metrics.n_clusters(np.concatenate(labels))
    if n_local is None:
        n_local = int(round(np.mean([metrics.n_clusters(y) for y in labels])))
    n_local = V.check_int(n_local, "n_local", minimum=1)
    n_global = V.check_int(n_global, "n_global", minimum=1)

    (lam_l, lam_g), pen_s = timed(lambda: hard_hdp_penalties(groups, n_local, n_global))
    hard_hdp(groups, lam_l, lam_g)  # compile once, so the timing below is the run alone
    hard, hard_s = timed(lambda: hard_hdp(groups, lam_l, lam_g))
    sse = metrics.sse(X, np.concatenate(hard.labels), hard.centers)
    sigma2 = max(sse / (n * d), 1e-8 * float(np.var(X)))
    rho2 = float(np.var(X, axis=0).mean())
    post = gibbs_hdp_gmm(seed, groups, sigma2=sigma2, rho2=rho2, num_warmup=num_warmup,
                         num_samples=num_samples, num_chains=num_chains, thin=thin,
                         progress_bar=progress_bar)
    point = post.point_estimate("vi")
    point_groups = post.labels_by_group(point)
    peers = grouped_peers(groups, n_local, n_global, seed=seed)
    conv = convergence(post)
    gid = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    with warnings.catch_warnings():
        # The floor is recorded in the JSON and the report instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        path = limit_path(seed, X, model="hdp", lam=(lam_l, lam_g), group_ids=gid,
                          **path_settings(num_warmup, num_samples, num_chains))
    report = compare(post, hard, np.concatenate(labels), X=X, group_ids=gid, path=path)

    rows = [
        {"method": "hard HDP", "k": int(hard.n_global), "local_k_mean": float(hard.n_local.mean()),
         "nmi": metrics.mean_group_nmi(labels, hard.labels), "seconds": hard_s},
        {"method": "sampled HDP (VI point)", "k": metrics.n_clusters(point),
         "local_k_mean": float(np.mean(post.sample_stats["n_local"]) / len(groups)),
         "nmi": metrics.mean_group_nmi(labels, point_groups), "seconds": post.seconds},
    ] + [
        {"method": name, "k": p["k"], "local_k_mean": None,
         "nmi": metrics.mean_group_nmi(labels, p["labels"]), "seconds": p["seconds"]}
        for name, p in peers.items()
    ]
    summary = {
        "data": data, "model": "hdp", "seed": seed, "n_samples": n, "n_features": d,
        "n_groups": len(groups), "n_true_classes": int(n_global),
        "score": "NMI per data set, averaged over data sets (Kulis & Jordan 2012, section 6.3)",
        "hard_hdp": {"lam_local": lam_l, "lam_global": lam_g,
                     "penalty_rule": f"hard_hdp_penalties(n_local={n_local}, n_global={n_global})",
                     "n_iter": hard.n_iter, "converged": hard.converged,
                     "objective_trace": [float(v) for v in hard.objective_trace],
                     "penalty_seconds": pen_s},
        "gibbs": {"sampler": post.sampler, "kernels": post.kernels, "sigma2": sigma2,
                  "rho2": rho2, "alpha": 1.0, "gamma": 1.0, "num_chains": num_chains,
                  "num_warmup": num_warmup,
                  "num_samples": num_samples, "thin": thin,
                  "k_distribution": {str(k): v for k, v in post.k_distribution().items()},
                  "rhat_k": conv["rhat"], "ess_bulk_k": conv["ess_bulk"],
                  "nmi_point_to_hard_hdp": metrics.nmi(np.concatenate(hard.labels), point),
                  "seconds_including_compile": post.seconds},
        "rows": rows,
        "comparison": report.to_dict(),
        "limit_path": path_summary(path),
        "paper": {"hard HDP": 0.81, "kmeans pooled": 0.77, "DP-means pooled": 0.73,
                  "per data set": 0.79, "hard HDP global clusters": 17, "local per data set": 4.4},
    }
    figure = (lambda f: _figure(report, rows, f)) if plot else None
    wrote = write_outputs(summary, out_dir, "compare_hdp", figure)
    head = f"{'method':<26}{'k':>7}{'local k':>9}{'NMI':>8}{'seconds':>10}"
    lines = [f"{data} (seed {seed}): {len(groups)} data sets, {n} x {d}, {n_global} true classes; "
             f"NMI per data set, averaged (KJ 2012 §6.3: hard HDP .81, pooled k-means .77, "
             f"pooled DP-means .73, per data set .79)", head]
    for r in rows:
        local = "" if r["local_k_mean"] is None else f"{r['local_k_mean']:.2f}"
        lines.append(f"{r['method']:<26}{r['k']:>7.4g}{local:>9}{r['nmi']:>8.3f}{r['seconds']:>10.3f}")
    lines += [
        f"hard HDP penalties: lam_local {lam_l:.4g}, lam_global {lam_g:.4g}; sampler sigma2 "
        f"{sigma2:.4g}, rho2 {rho2:.4g}; NMI(sampled point, hard HDP) "
        f"{summary['gibbs']['nmi_point_to_hard_hdp']:.3f} (sampler time includes compilation)",
        "the sampled HDP beside the hard HDP (NMI to the pooled true classes; objective: the hard "
        "HDP's):",
        str(report),
        path_report(path),
        wrote,
    ]
    summary["report"] = "\n".join(lines)
    return summary


def _figure(report, rows, filename):
    from ..plotting import _pyplot, plot_comparison, plot_method_scores

    plt = _pyplot()
    fig, axes = plt.subplots(2, 4, figsize=(17, 8))
    plot_comparison(report, axes=axes[:, :3], title="pooled data")
    plot_method_scores(rows, "nmi", ax=axes[0, 3], xlabel="NMI per data set, averaged", xlim=(0, 1))
    axes[1, 3].set_axis_off()
    save_figure(fig, filename)
