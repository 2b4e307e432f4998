"""The bridge between a sampled model and its hard limit.

* :func:`compare` -- a table comparing a :class:`Posterior` with a hard-limit
  result (k, NMI/ARI against the truth and against each other, the DP-means
  objective of both partitions, time).
* :func:`small_variance_path` -- the Gibbs sampler run at decreasing ``sigma2``
  with ``alpha = alpha_from_lam(lam, sigma2, rho2, d)``: how the posterior
  collapses onto the DP-means partition (Kulis & Jordan 2012, §3.1).
* :func:`run_compare` -- the main job behind ``bayesclust compare``.

Like ``cli`` and ``plotting``, this module sits at the top of the import graph
and may import anything; scikit-learn is used only as the external k-means peer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import datasets, metrics
from .inference.dp_means import dp_means, farthest_first_lambda

__all__ = ["compare", "ComparisonTable", "small_variance_path", "SmallVariancePath", "run_compare", "score"]


def score(labels_true, labels_pred) -> dict:
    """NMI (arithmetic and geometric), ARI and Hungarian accuracy of a partition."""
    return {
        "nmi": metrics.nmi(labels_true, labels_pred),
        "nmi_geometric": metrics.nmi(labels_true, labels_pred, average_method="geometric"),
        "ari": metrics.ari(labels_true, labels_pred),
        "accuracy": metrics.accuracy(labels_true, labels_pred),
        "n_clusters": metrics.n_clusters(labels_pred),
    }


class ComparisonTable:
    """Rows of a comparison, printable as a table.

    Attributes
    ----------
    rows : list of dict
        One row per method: ``method, k, nmi_truth, ari_truth, nmi_other,
        ari_other, dp_means_objective, seconds`` (and ``p_k`` for a posterior:
        the posterior probability of the hard limit's k).
    """

    columns = ("method", "k", "nmi_truth", "ari_truth", "nmi_other", "ari_other",
               "dp_means_objective", "p_k_hard", "seconds")

    def __init__(self, rows):
        self.rows = rows

    def to_dict(self):
        return {"rows": self.rows}

    def __str__(self):
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                return f"{v:.4g}"
            return str(v)

        table = [self.columns] + [tuple(fmt(r.get(c)) for c in self.columns) for r in self.rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(self.columns))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__


def compare(posterior, hard_result, labels_true=None, *, X=None, loss="binder"):
    """Compare a sampled posterior with a hard-limit result on the same data.

    Parameters
    ----------
    posterior : Posterior
        From :func:`bayesclust.gibbs_dp_gmm` or the NUTS glue.
    hard_result : DPMeansResult
        From :func:`bayesclust.dp_means` (its ``lam`` scores both partitions).
    labels_true : array_like of int, shape (n,), optional
    X : array_like, shape (n, d), optional
        Needed for the DP-means objective of the posterior's point partition.
    loss : {"binder", "vi"}
        Loss of the posterior point estimate.

    Returns
    -------
    ComparisonTable
        Rows "posterior (point)", "posterior (draws, mean)" and "hard".
    """
    from . import _validation as V

    point = posterior.point_estimate(loss)
    hard = np.asarray(hard_result.labels)
    V.check_same_length(point, hard, "posterior labels", "hard_result.labels")
    truth = None if labels_true is None else V.check_labels(labels_true, "labels_true", n_samples=len(hard))
    draws = np.asarray(posterior.labels).reshape(-1, len(hard))
    lam = hard_result.lam

    def objective(labels):
        return None if X is None else metrics.dp_means_objective(X, labels, lam)

    def vs_truth(labels, fn):
        return None if truth is None else fn(truth, labels)

    k_draws = posterior.n_clusters.reshape(-1)
    rows = [
        {
            "method": f"posterior point ({loss}, {posterior.sampler})",
            "k": metrics.n_clusters(point),
            "nmi_truth": vs_truth(point, metrics.nmi),
            "ari_truth": vs_truth(point, metrics.ari),
            "nmi_other": metrics.nmi(hard, point),
            "ari_other": metrics.ari(hard, point),
            "dp_means_objective": objective(point),
            "p_k_hard": float(np.mean(k_draws == hard_result.n_clusters)),
            "seconds": posterior.seconds,
        },
        {
            "method": "posterior draws (mean)",
            "k": float(np.mean(k_draws)),
            "nmi_truth": None if truth is None else float(np.mean([metrics.nmi(truth, d) for d in draws])),
            "ari_truth": None if truth is None else float(np.mean([metrics.ari(truth, d) for d in draws])),
            "nmi_other": float(np.mean([metrics.nmi(hard, d) for d in draws])),
            "ari_other": float(np.mean([metrics.ari(hard, d) for d in draws])),
            "dp_means_objective": None,
            "p_k_hard": None,
            "seconds": None,
        },
        {
            "method": "hard limit (DP-means)",
            "k": hard_result.n_clusters,
            "nmi_truth": vs_truth(hard, metrics.nmi),
            "ari_truth": vs_truth(hard, metrics.ari),
            "nmi_other": metrics.nmi(point, hard),
            "ari_other": metrics.ari(point, hard),
            "dp_means_objective": objective(hard),
            "p_k_hard": None,
            "seconds": getattr(hard_result, "seconds", None),
        },
    ]
    return ComparisonTable(rows)


class SmallVariancePath(NamedTuple):
    """Result of :func:`small_variance_path` (one entry per ``sigma2``).

    Attributes
    ----------
    sigma2 : ndarray, shape (m,)
    log_alpha : ndarray, shape (m,)
        ``log alpha_from_lam(lam, sigma2, rho2, d)``.
    nmi_point : ndarray, shape (m,)
        NMI between the posterior point partition and the DP-means partition.
    nmi_draws : ndarray, shape (m,)
        Mean NMI between the draws and the DP-means partition.
    p_k_hard : ndarray, shape (m,)
        Posterior probability of DP-means' number of clusters.
    k_mean : ndarray, shape (m,)
    hard : DPMeansResult
    """

    sigma2: np.ndarray
    log_alpha: np.ndarray
    nmi_point: np.ndarray
    nmi_draws: np.ndarray
    p_k_hard: np.ndarray
    k_mean: np.ndarray
    hard: object


def small_variance_path(
    rng_key,
    X,
    lam,
    sigma2_grid,
    *,
    rho2: float = 100.0,
    num_warmup: int = 100,
    num_samples: int = 100,
    num_chains: int = 1,
    collapsed: bool = False,
    progress_bar: bool = False,
) -> SmallVariancePath:
    """Run the DP mixture's Gibbs sampler as ``sigma2 -> 0`` with ``alpha = alpha_from_lam``.

    Kulis & Jordan (2012, §3.1): with ``alpha = (1 + rho2/sigma2)^(d/2)
    exp(-lam / (2 sigma2))`` the Gibbs sampler of the DP mixture becomes
    DP-means as ``sigma2 -> 0``.  For each ``sigma2`` this runs the sampler
    (from one cluster, points in the given order, like DP-means) and reports
    how close its posterior is to the DP-means partition.

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    lam : float
        DP-means penalty (a squared distance).
    sigma2_grid : array_like, shape (m,)
        Component variances, typically decreasing (e.g. ``lam * geomspace(1, 1e-4, 6)``).
    rho2, num_warmup, num_samples, num_chains, collapsed, progress_bar
        Passed to :func:`bayesclust.gibbs_dp_gmm`.

    Returns
    -------
    SmallVariancePath
    """
    from . import _validation as V
    from .inference.gibbs import gibbs_dp_gmm
    from .models.dp_gmm import log_alpha_from_lam

    import jax

    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    lam = V.check_positive(lam, "lam")
    grid = V.check_array(sigma2_grid, "sigma2_grid", ndim=1, dtype=None).astype(float)
    if np.any(grid <= 0):
        raise ValueError("sigma2_grid must contain positive variances")
    hard = dp_means(X, lam)
    d = X.shape[1]
    out = {k: [] for k in ("log_alpha", "nmi_point", "nmi_draws", "p_k_hard", "k_mean")}
    for sub, s2 in zip(jax.random.split(key, len(grid)), grid):
        log_alpha = float(log_alpha_from_lam(lam, float(s2), rho2, d))
        post = gibbs_dp_gmm(
            sub, X, log_alpha=log_alpha, sigma2=float(s2), rho2=rho2, collapsed=collapsed,
            num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
            progress_bar=progress_bar,
        )
        draws = np.asarray(post.labels).reshape(-1, X.shape[0])
        k_draws = np.asarray(post.n_clusters).reshape(-1)
        out["log_alpha"].append(log_alpha)
        out["nmi_point"].append(metrics.nmi(hard.labels, post.point_estimate("binder")))
        out["nmi_draws"].append(float(np.mean([metrics.nmi(hard.labels, d_) for d_ in draws])))
        out["p_k_hard"].append(float(np.mean(k_draws == hard.n_clusters)))
        out["k_mean"].append(float(np.mean(k_draws)))
    return SmallVariancePath(grid, *(np.array(out[k]) for k in out), hard)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_compare(
    data: str = "three-gaussians",
    out_dir: str | Path = "results",
    *,
    k: int | None = None,
    seed: int = 0,
    plot: bool = True,
    n_lambdas: int = 20,
) -> dict:
    """Fit DP-means and k-means on a built-in data set and write the comparison.

    Parameters
    ----------
    data : str
        A name from :data:`bayesclust.datasets.DATASETS`.
    out_dir : path
        Folder for ``compare.json`` and ``compare.png`` (created if missing).
    k : int, optional
        Number of clusters for k-means and for the farthest-first lambda;
        default the number of true classes.
    seed : int
        Seeds the synthetic data and k-means' initialisation.
    plot : bool
        Write ``compare.png`` (needs matplotlib).
    n_lambdas : int
        Points on the lambda path (number of clusters vs lambda, KJ Fig. 2c).

    Returns
    -------
    dict
        The JSON summary, plus a human-readable ``report`` string.
    """
    from sklearn.cluster import KMeans

    name = data
    if name == "three-gaussians":
        X, y = datasets.three_gaussians(seed)
    else:
        X, y = datasets.load(name)
    n_true = metrics.n_clusters(y)
    k = n_true if k is None else int(k)
    if not 1 <= k <= len(X):
        raise ValueError(f"k must be between 1 and the number of samples ({len(X)}), got {k}")

    lam = farthest_first_lambda(X, k)
    dp_means(X, lam)  # compile once, so the timing below is the run alone
    dpm, dpm_seconds = _timed(lambda: dp_means(X, lam))
    km, km_seconds = _timed(
        lambda: KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X)
    )

    spread = float(np.max(np.sum((X - X.mean(0)) ** 2, axis=1)))
    lams = np.geomspace(spread * 1e-2, spread * 1.5, n_lambdas)
    path = [dp_means(X, float(lam_i)).n_clusters for lam_i in lams]

    summary = {
        "data": name,
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_true_classes": n_true,
        "k": k,
        "seed": seed,
        "dp_means": {
            "lam": lam,
            "lam_rule": f"farthest-first, k={k} (Kulis & Jordan 2012, section 6.1)",
            **score(y, dpm.labels),
            "objective": dpm.objective,
            "n_iter": dpm.n_iter,
            "converged": dpm.converged,
            "objective_trace": [float(v) for v in dpm.objective_trace],
            "seconds": dpm_seconds,
        },
        "kmeans": {
            "peer": "sklearn.cluster.KMeans(n_init=10), Lloyd",
            **score(y, km.labels_),
            "inertia": float(km.inertia_),
            "n_iter": int(km.n_iter_),
            "seconds": km_seconds,
        },
        "lambda_path": {"lam": [float(v) for v in lams], "n_clusters": [int(v) for v in path]},
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(summary, indent=2))
    if plot:
        _figure(X, y, dpm, km, lams, path, lam, out / "compare.png", name)
        summary["figure"] = str(out / "compare.png")
    d, m = summary["dp_means"], summary["kmeans"]
    summary["report"] = "\n".join(
        [
            f"{name}: {X.shape[0]} x {X.shape[1]}, {n_true} true classes",
            f"  DP-means  lam={lam:.4g}: {d['n_clusters']} clusters, NMI {d['nmi']:.3f}, "
            f"ARI {d['ari']:.3f}, {d['n_iter']} iterations, {dpm_seconds * 1e3:.1f} ms",
            f"  k-means   k={k}: NMI {m['nmi']:.3f}, ARI {m['ari']:.3f}, "
            f"{m['n_iter']} iterations, {km_seconds * 1e3:.1f} ms",
            f"  wrote {out / 'compare.json'}" + (f" and {out / 'compare.png'}" if plot else ""),
        ]
    )
    return summary


def _figure(X, y, dpm, km, lams, path, lam, filename, name):
    from .plotting import _pyplot, plot_lambda_path, plot_partition

    plt = _pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8))
    plot_partition(X, y, ax=axes[0], title=f"{name}: true classes")
    # Colours follow the true classes via the Hungarian matching of the metrics.
    dpm_labels = metrics.match_labels(y, dpm.labels)
    km_labels = metrics.match_labels(y, km.labels_)
    plot_partition(X, dpm_labels, dpm.centers, ax=axes[1],
                   title=f"DP-means: {dpm.n_clusters} clusters, NMI {metrics.nmi(y, dpm.labels):.2f}")
    plot_partition(X, km_labels, km.cluster_centers_, ax=axes[2],
                   title=f"k-means: NMI {metrics.nmi(y, km.labels_):.2f}")
    plot_lambda_path(lams, path, ax=axes[3], marker_lam=lam,
                     title="clusters vs lambda (dashed: farthest-first)")
    fig.tight_layout()
    fig.savefig(filename, dpi=110)
    plt.close(fig)
