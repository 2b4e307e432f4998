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


def compare(posterior, hard_result, labels_true=None, *, X=None, loss="vi"):
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
    loss : {"vi", "binder"}
        Loss of the posterior point estimate (VI by default: Binder's loss tends
        to split off singletons; Wade & Ghahramani 2018).

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
        out["nmi_point"].append(metrics.nmi(hard.labels, post.point_estimate("vi")))
        out["nmi_draws"].append(float(np.mean([metrics.nmi(hard.labels, d_) for d_ in draws])))
        out["p_k_hard"].append(float(np.mean(k_draws == hard.n_clusters)))
        out["k_mean"].append(float(np.mean(k_draws)))
    return SmallVariancePath(grid, *(np.array(out[k]) for k in out), hard)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _load_data(data: str, seed: int):
    """A built-in data set by name, or a CSV/TSV/NPY file (no true labels)."""
    if data in datasets.DATASETS:
        if data == "three-gaussians":
            return datasets.three_gaussians(seed)
        return datasets.load(data)
    from . import _validation as V

    return V.check_array(datasets.read_matrix(data), f"data in {data}"), None


def run_compare(
    data: str | None = None,
    out_dir: str | Path = "results",
    *,
    model: str = "dp",
    k: int | None = None,
    lam: float | None = None,
    seed: int = 0,
    num_warmup: int = 200,
    num_samples: int = 200,
    num_chains: int = 2,
    plot: bool = True,
    progress_bar: bool = True,
) -> dict:
    """The main job: the DP mixture by sampling and by its hard limit, side by side.

    Runs DP-means (lambda by farthest-first at ``k``, or ``lam``), the collapsed
    Gibbs sampler of the DP Gaussian mixture (``sigma2`` set to the pooled
    within-cluster variance of the DP-means partition, ``rho2 = 100``,
    ``alpha = 1``, data centred), the k-means peer (scikit-learn, same ``k``),
    and the small-variance path; writes ``compare.json`` and ``compare.png``.

    Parameters
    ----------
    data : str, optional
        A name from :data:`bayesclust.datasets.DATASETS` or a CSV/TSV/NPY file
        (default ``"three-gaussians"``, ``"hdp-groups"`` for ``model="hdp"``).
    out_dir : path
        Output folder (created if missing).
    model : {"dp", "hdp", "dc", "consensus"}
        The model.  ``"hdp"`` runs
        :func:`bayesclust.bridge_hdp.run_compare_hdp` on grouped data (default
        data ``hdp-groups``); ``"dc"`` runs
        :func:`bayesclust.bridge_dc.run_compare_dc` (default data ``dc-toy``);
        ``"consensus"`` runs :func:`bayesclust.bridge_consensus.run_compare_consensus`
        (default data ``iris``).
    k : int, optional
        Clusters for farthest-first lambda and k-means; default the number of
        true classes (required for a file unless ``lam`` is given).
    lam : float, optional
        DP-means penalty (overrides ``k`` for DP-means).
    seed : int
        Seeds the synthetic data, the sampler and k-means.
    num_warmup, num_samples, num_chains : int
        Gibbs sampler settings.
    plot, progress_bar : bool

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    from sklearn.cluster import KMeans

    from . import _validation as V
    from .inference.gibbs import gibbs_dp_gmm

    if model == "hdp":
        from .bridge_hdp import run_compare_hdp

        if lam is not None or k is not None:
            raise ValueError("--k and --lam are options of --model dp (the HDP job picks its "
                             "penalties from the true class counts)")
        return run_compare_hdp("hdp-groups" if data is None else data, out_dir,
                               seed=seed, num_warmup=num_warmup, num_samples=num_samples,
                               num_chains=num_chains, plot=plot, progress_bar=progress_bar)
    if model == "dc":
        from .bridge_dc import run_compare_dc

        if lam is not None:
            raise ValueError("--lam is an option of --model dp (discriminative clustering has no "
                             "cluster penalty; give the number of prototypes with --k)")
        return run_compare_dc("dc-toy" if data is None else data, out_dir, k=k, seed=seed,
                              num_warmup=num_warmup, num_samples=num_samples,
                              num_chains=num_chains, plot=plot, progress_bar=progress_bar)
    if model == "consensus":
        from .bridge_consensus import run_compare_consensus

        if lam is not None or k is not None:
            raise ValueError("--k and --lam are options of --model dp (the consensus job extracts "
                             "as many clusters as the data set has classes)")
        return run_compare_consensus("iris" if data is None else data, out_dir, seed=seed,
                                     plot=plot, progress_bar=progress_bar)
    if model != "dp":
        raise ValueError(f"model must be 'dp', 'hdp', 'dc' or 'consensus', got {model!r}")
    data = "three-gaussians" if data is None else data
    X, y = _load_data(data, seed)
    n, d = X.shape
    if k is None and lam is None:
        if y is None:
            raise ValueError("give --k or --lam for a data file without true labels")
        k = metrics.n_clusters(y)
    if k is not None:
        k = V.check_int(k, "k", minimum=1)
        if k > n:
            raise ValueError(f"k must be <= the number of samples ({n}), got {k}")
    lam = farthest_first_lambda(X, k) if lam is None else V.check_positive(lam, "lam")

    dp_means(X, lam)  # compile once, so the timing below is the run alone
    dpm, dpm_seconds = _timed(lambda: dp_means(X, lam))
    k_peer = k if k is not None else dpm.n_clusters
    km, km_seconds = _timed(lambda: KMeans(n_clusters=k_peer, n_init=10, random_state=seed).fit(X))
    sigma2 = max(metrics.sse(X, dpm.labels, dpm.centers) / (n * d), 1e-8 * float(np.var(X)))
    post = gibbs_dp_gmm(seed, X, alpha=1.0, sigma2=sigma2, rho2=100.0, collapsed=True,
                        num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                        progress_bar=progress_bar)
    table = compare(post, dpm, y, X=X)
    grid = lam * np.array([1.0, 0.3, 0.1, 3e-2, 1e-2, 1e-3, 1e-4])
    path = small_variance_path(seed, X, lam, grid, num_warmup=30, num_samples=20)
    diag = post.diagnostics()

    def truth_scores(labels):
        return {} if y is None else score(y, labels)

    summary = {
        "data": str(data),
        "model": model,
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
            "sampler": post.sampler, "sigma2": sigma2, "alpha": 1.0, "rho2": 100.0,
            "num_chains": num_chains, "num_warmup": num_warmup, "num_samples": num_samples,
            "k_distribution": {str(kk): v for kk, v in post.k_distribution().items()},
            "point_estimate_loss": "vi",
            "point_estimate": truth_scores(post.point_estimate("vi")),
            "k_point": metrics.n_clusters(post.point_estimate("vi")),
            "rhat_k": _finite(diag.get("n_clusters", {}).get("rhat")),
            "ess_bulk_k": _finite(diag.get("n_clusters", {}).get("ess_bulk")),
            "seconds_including_compile": post.seconds,
        },
        "kmeans": {"peer": "sklearn.cluster.KMeans(n_init=10), Lloyd", "k": k_peer,
                   **truth_scores(km.labels_), "seconds": km_seconds},
        "comparison": table.rows,
        "small_variance_path": {
            "sigma2": path.sigma2.tolist(), "nmi_point_to_dp_means": path.nmi_point.tolist(),
            "p_k_dp_means": path.p_k_hard.tolist(), "k_mean": path.k_mean.tolist(),
        },
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(summary, indent=2, default=_json_default))
    if plot:
        _figure(X, y, dpm, post, path, out / "compare.png", str(data))
        summary["figure"] = str(out / "compare.png")
    summary["report"] = "\n".join(
        [
            f"{data}: {n} x {d}" + ("" if y is None else f", {metrics.n_clusters(y)} true classes"),
            str(table),
            f"k-means peer (k={k_peer}): " + ("" if y is None else f"NMI {summary['kmeans']['nmi']:.3f}, ")
            + f"{km_seconds * 1e3:.1f} ms",
            "small-variance path (sigma2 / lam -> NMI of posterior point to DP-means): "
            + ", ".join(f"{s_ / lam:.0e}: {v:.2f}" for s_, v in zip(path.sigma2, path.nmi_point)),
            f"wrote {out / 'compare.json'}" + (f" and {out / 'compare.png'}" if plot else ""),
        ]
    )
    return summary


def _finite(v):
    return None if v is None or not np.isfinite(v) else float(v)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _figure(X, y, dpm, post, path, filename, name):
    from .plotting import _pyplot, plot_co_clustering, plot_partition

    plt = _pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 8))
    ax = axes.ravel()
    ref = y if y is not None else dpm.labels
    point = post.point_estimate("vi")
    if y is not None:
        plot_partition(X, y, ax=ax[0], title=f"{name}: true classes")
    else:
        plot_partition(X, np.zeros(len(X), int), ax=ax[0], title=f"{name}: data")
    plot_partition(X, metrics.match_labels(ref, dpm.labels), dpm.centers, ax=ax[1],
                   title=f"hard limit: DP-means, k={dpm.n_clusters}")
    plot_partition(X, metrics.match_labels(ref, point), ax=ax[2],
                   title=f"sampled: posterior point (VI loss), k={metrics.n_clusters(point)}")
    plot_co_clustering(post.co_clustering(), np.argsort(point, kind="stable"), ax=ax[3])
    for c, ks in enumerate(post.n_clusters):
        ax[4].plot(ks, lw=0.8, label=f"chain {c}")
    ax[4].axhline(dpm.n_clusters, color="k", ls="--", lw=1, label="DP-means k")
    ax[4].set_xlabel("draw")
    ax[4].set_ylabel("number of clusters")
    ax[4].set_title("k trace", fontsize=10)
    ax[4].legend(fontsize=8)
    ax[5].semilogx(path.sigma2, path.nmi_point, "o-", label="NMI(point, DP-means)")
    ax[5].semilogx(path.sigma2, path.p_k_hard, "s--", label="P(k = k_DP-means)")
    ax[5].invert_xaxis()
    ax[5].set_ylim(-0.05, 1.05)
    ax[5].set_xlabel("sigma2 (decreasing ->), alpha = alpha_from_lam")
    ax[5].set_title("small-variance path", fontsize=10)
    ax[5].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(filename, dpi=100)
    plt.close(fig)
