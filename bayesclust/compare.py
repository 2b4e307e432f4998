"""The main job: one model fitted several ways on the same data, scored by one set of metrics.

``bayesclust compare`` (and :func:`run_compare`) fits the hard limit of the DP
Gaussian mixture (DP-means) next to the k-means peer (scikit-learn's Lloyd
k-means at the same ``k``) and writes a JSON summary and a figure.  The
sampled DP mixture joins here when its sampler lands, scored by the same
:mod:`bayesclust.metrics` functions.

Like ``cli`` and ``plotting``, this module sits at the top of the import graph
and may import anything; scikit-learn is used only as the external peer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from . import datasets, metrics
from .inference.dp_means import dp_means, farthest_first_lambda

__all__ = ["run_compare", "score"]


def score(labels_true, labels_pred) -> dict:
    """NMI (arithmetic and geometric), ARI and Hungarian accuracy of a partition."""
    return {
        "nmi": metrics.nmi(labels_true, labels_pred),
        "nmi_geometric": metrics.nmi(labels_true, labels_pred, average_method="geometric"),
        "ari": metrics.ari(labels_true, labels_pred),
        "accuracy": metrics.accuracy(labels_true, labels_pred),
        "n_clusters": metrics.n_clusters(labels_pred),
    }


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
