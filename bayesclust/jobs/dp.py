"""The DP Gaussian mixture by sampling and by its hard limit (DP-means), side by side.

:func:`run_compare_dp` is the job behind ``bayesclust compare`` (``--model dp``,
the default).  Like every job it sits at the top of the import graph;
scikit-learn is used only as the external k-means peer.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .. import _validation as V
from .. import metrics
from ..comparison import compare, score, small_variance_path
from ..inference.hard.dp_means import dp_means, farthest_first_lambda
from ..inference.mixtures.convergence import DP_SAMPLER_DEFAULTS
from ..inference.mixtures.gibbs import gibbs_dp_gmm
from . import DP_JOB_THIN
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

__all__ = ["run_compare_dp"]


def run_compare_dp(
    data: str | None = None,
    out_dir: str | Path = "results",
    *,
    n_clusters: int | None = None,
    lam: float | None = None,
    seed: int = 0,
    num_warmup: int = DP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = DP_SAMPLER_DEFAULTS.num_samples,
    num_chains: int = DP_SAMPLER_DEFAULTS.num_chains,
    thin: int = DP_JOB_THIN,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """The DP mixture by sampling and by its hard limit, side by side.

    Runs DP-means (lambda by farthest-first at ``n_clusters``, or ``lam``), the collapsed
    Gibbs sampler of the DP Gaussian mixture (``sigma2`` set to the pooled
    within-cluster variance of the DP-means partition, ``rho2 = 100``,
    ``alpha = 1``, data centred), the k-means peer (scikit-learn, same ``n_clusters``),
    and the small-variance path; writes ``compare.json`` and ``compare.png``.

    Parameters
    ----------
    data : str, optional
        A name from :data:`bayesclust.datasets.DATASETS` or a CSV/TSV/NPY file
        (default ``"three-gaussians"``).
    out_dir : path
        Output folder (created if missing).
    n_clusters : int, optional
        Clusters for farthest-first lambda and k-means; default the number of
        true classes (required for a file unless ``lam`` is given).
    lam : float, optional
        DP-means penalty (overrides ``n_clusters`` for DP-means).
    seed : int
        Seeds the synthetic data, the sampler and k-means.
    num_warmup, num_samples, num_chains, thin : int
        Gibbs sampler settings (defaults: those of :func:`bayesclust.gibbs_dp_gmm`, the
        collapsed sampler with its default split-merge moves, but ``thin`` :data:`bayesclust.jobs.DP_JOB_THIN`).
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
    from sklearn.cluster import KMeans

    data = "three-gaussians" if data is None else data
    X, y = load_data(data, seed, labels)
    n, d = X.shape
    k = n_clusters
    if k is None and lam is None:
        if y is None:
            raise ValueError("give --n-clusters or --lam for a data file without true labels")
        k = metrics.n_clusters(y)
    if k is not None:
        k = V.check_int(k, "--n-clusters", minimum=1)
        if k > n:
            raise ValueError(f"--n-clusters must be <= the number of samples ({n}), got {k}")
    lam = farthest_first_lambda(X, k) if lam is None else V.check_positive(lam, "--lam")
    if not lam > 0:  # farthest-first ran out of distinct rows
        raise ValueError(f"--n-clusters {k}: the data have too few distinct rows for farthest-first "
                         "to choose lambda; give --lam (a squared distance > 0)")

    dp_means(X, lam)  # compile once, so the timing below is the run alone
    dpm, dpm_seconds = timed(lambda: dp_means(X, lam))
    k_peer = k if k is not None else dpm.n_clusters
    km, km_seconds = timed(lambda: KMeans(n_clusters=k_peer, n_init=10, random_state=seed).fit(X))
    sigma2 = max(metrics.sse(X, dpm.labels, dpm.centers) / (n * d), 1e-8 * float(np.var(X)))
    post = gibbs_dp_gmm(seed, X, alpha=1.0, sigma2=sigma2, rho2=100.0, collapsed=True,
                        num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                        thin=thin, progress_bar=progress_bar)
    with warnings.catch_warnings():
        # The floor is recorded in the JSON and the report instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        path = small_variance_path(seed, X, lam, **path_settings(num_warmup, num_samples, num_chains))
    report = compare(post, dpm, y, X=X, path=path)
    conv = convergence(post)

    def truth_scores(labels):
        return {} if y is None else score(y, labels)

    summary = {
        "data": str(data),
        "model": "dp",
        "n_samples": n,
        "n_features": d,
        "n_true_classes": None if y is None else metrics.n_clusters(y),
        "seed": seed,
        "dp_means": {
            "lam": lam,
            "lam_rule": "given" if k is None else f"farthest-first, k={k} (Kulis & Jordan 2012, section 6.1)",
            "n_clusters": dpm.n_clusters, **truth_scores(dpm.labels),
            "objective": dpm.objective, "n_iter": dpm.n_iter, "converged": dpm.converged,
            "objective_trace": [float(v) for v in dpm.objective_trace], "seconds": dpm_seconds,
        },
        "gibbs": {
            "sampler": post.sampler, "kernels": post.kernels, "sigma2": sigma2, "alpha": 1.0,
            "rho2": 100.0,
            "num_chains": num_chains, "num_warmup": num_warmup, "num_samples": num_samples,
            "thin": thin, "k_distribution": {str(kk): v for kk, v in post.k_distribution().items()},
            "point_estimate_loss": "vi",
            "point_estimate": truth_scores(post.point_estimate("vi")),
            "k_point": metrics.n_clusters(post.point_estimate("vi")),
            "rhat_k": conv["rhat"],
            "ess_bulk_k": conv["ess_bulk"],
            "seconds_including_compile": post.seconds,
        },
        "kmeans": {"peer": "sklearn.cluster.KMeans(n_init=10), Lloyd", "k": k_peer,
                   **truth_scores(km.labels_), "seconds": km_seconds},
        "comparison": report.to_dict(),
        "limit_path": path_summary(path),
    }
    settings = {"command": "bayesclust compare", "model": "dp", "data": str(data), "seed": seed,
                "n_clusters": n_clusters, "lam": summary["dp_means"]["lam"] if k is None else None,
                "num_warmup": num_warmup, "num_samples": num_samples, "num_chains": num_chains,
                "thin": thin}
    figure = (lambda f: comparison_figure(report, f, title=str(data), settings=settings)) if plot else None
    wrote = write_outputs(summary, out_dir, "compare", figure)
    summary["report"] = "\n".join(
        [
            f"{data}: {n} x {d}" + ("" if y is None else f", {metrics.n_clusters(y)} true classes"),
            str(report),
            f"k-means peer (k={k_peer}): " + ("" if y is None else f"NMI {summary['kmeans']['nmi']:.3f}, ")
            + f"{km_seconds * 1e3:.1f} ms",
            path_report(path),
            wrote,
        ]
    )
    return summary
