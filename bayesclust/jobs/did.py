"""Clustering with dissimilarity increments side by side, and the DP mixture's posterior of k.

* :func:`run_compare_did` -- the job behind ``bayesclust compare --model did``: on one labelled
  data set, Figueiredo & Jain's mixture (GMD, the number of components chosen by its message
  length), GMDID (its components merged by the increments' MDL), SL-DID, and k-means, single and
  average link at the true number of classes, scored by the consistency index and NMI; beside
  them the posterior of the number of clusters of the DP Gaussian mixture (collapsed Gibbs, a
  learnt variance) on the same standardised data: how many clusters each answer finds.

Like every job, this module sits at the top of the import graph.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import _validation as V
from .. import datasets, metrics
from ..inference.hard.kmeans import kmeans
from ..inference.increments.did_hierarchy import sl_did
from ..inference.increments.gmd import gmd
from ..inference.increments.gmdid import gmdid
from ..inference.mixtures.convergence import DP_SAMPLER_DEFAULTS
from ..inference.mixtures.gibbs import gibbs_dp_gmm
from ..plotting import project_2d
from ._common import load_labelled, save_figure, timed, write_outputs

__all__ = ["run_compare_did", "DID_DATA", "TABLE3"]


def _standardised(X: np.ndarray) -> np.ndarray:
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


#: The data sets of the DID papers available offline: name -> (X, y).  Wine and crabs are
#: normalised to unit variance, as Aidos & Fred (2012) do; crabs' classes are the sexes.
DID_DATA = {
    "iris": datasets.load_iris,
    "wine-norm": lambda: (lambda X, y: (_standardised(X), y))(*datasets.load_wine()),
    "biopsy": datasets.load_biopsy,
    "crabs": lambda: (lambda X, y: (_standardised(X), y))(*datasets.load_crabs()),
}

#: Aidos & Fred (2012), Table 3 (known K, random start): (GMD CI %, clusters, GMDID-MDL CI %,
#: clusters).
TABLE3 = {
    "iris": (71.33, 5, 98.00, 3),
    "wine-norm": (39.89, 1, 39.89, 1),
    "biopsy": (45.10, 5, 75.11, 3),
    "crabs": (68.50, 3, 74.50, 2),
}


def run_compare_did(
    data: str = "iris",
    out_dir: str | Path = "results",
    *,
    seed: int = 0,
    k_max: int = 30,
    num_warmup: int | None = None,
    num_samples: int | None = None,
    num_chains: int | None = None,
    thin: int | None = None,
    plot: bool = True,
    progress_bar: bool = True,
    labels: str | None = None,
) -> dict:
    """GMD, GMDID, SL-DID, k-means and single / average link, and the DP mixture's posterior of k.

    GMD starts from ``k_max`` random data points with the true number of classes ``K`` as its
    lower bound (:func:`bayesclust.gmd`, Aidos & Fred 2012's "GMD^rand" with known K); GMDID
    merges its components by the MDL criterion down to at most ``K``
    (:func:`bayesclust.gmdid`); SL-DID finds its number of clusters alone
    (:func:`bayesclust.sl_did`); k-means (best of 10 runs), single and average link are cut at
    ``K``.  The DP mixture (:func:`bayesclust.gibbs_dp_gmm`: collapsed Gibbs, ``alpha ~
    Gamma(1, 1)``, ``sigma2 ~ InvGamma(2, 0.5)``) runs on the standardised data.  Writes
    ``compare_did.json`` (and ``compare_did.png``).

    Parameters
    ----------
    data : str
        One of :data:`DID_DATA`: ``"iris"``, ``"wine-norm"``, ``"biopsy"`` (MASS, 683 x 9),
        ``"crabs"`` (MASS, sexes, unit variance); or a CSV / TSV / NPY file with ``labels``
        (used as it is: standardise it first if its columns have different units).
    out_dir : str or Path
    seed : int
    k_max : int, default 30
        GMD's initial number of components.
    num_warmup, num_samples, num_chains, thin : int, optional
        The Gibbs sampler's settings (default:
        :data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`, with split-merge moves).
    plot, progress_bar : bool
    labels : str, optional
        The true classes of a data file (``--labels``: a column or a file of one label per
        row, :func:`bayesclust.jobs._common.load_data`); ``K`` is their number.

    Returns
    -------
    dict
        The JSON summary plus a human-readable ``report``.
    """
    seed = V.check_int(seed, "seed", minimum=0)
    k_max = V.check_int(k_max, "k_max", minimum=2)
    sampler = {**DP_SAMPLER_DEFAULTS._asdict(), **{
        name: V.check_int(value, name, minimum=1) for name, value in
        (("num_warmup", num_warmup), ("num_samples", num_samples), ("num_chains", num_chains),
         ("thin", thin)) if value is not None}}
    X, y = load_labelled(data, DID_DATA, lambda name: DID_DATA[name](), labels, "did")
    X = np.asarray(X, np.float64)
    n, d = X.shape
    K = metrics.n_clusters(y)

    def say(msg):
        if progress_bar:
            print(msg, flush=True)

    import jax
    import numpyro.distributions as dist
    from scipy.cluster.hierarchy import fcluster, linkage

    runs = {}
    mix, s = timed(lambda: gmd(seed, X, K, min(k_max, n - 1)))
    runs["GMD (Figueiredo & Jain)"] = (np.asarray(mix.labels), s)
    res, s = timed(lambda: gmdid(X, mix.labels, n_clusters_min=K))
    runs["GMDID (MDL)"] = (res.labels, s)
    res, s = timed(lambda: sl_did(X))
    runs["SL-DID"] = (res.labels, s)

    def best_kmeans():
        fits = [kmeans(k, X, K) for k in jax.random.split(jax.random.PRNGKey(seed), 10)]
        return np.asarray(min(fits, key=lambda r: float(r.objective)).labels)

    runs["k-means, K"] = timed(best_kmeans)
    for method in ("single", "average"):
        runs[f"{method} link, K"] = timed(lambda m=method: fcluster(linkage(X, m), K, criterion="maxclust"))
    rows = []
    for name, (labels, secs) in runs.items():
        rows.append({"method": name, "k": metrics.n_clusters(labels),
                     "ci": metrics.consistency_index(y, labels), "nmi": metrics.nmi(y, labels),
                     "seconds": secs})
        say(f"  {name}: {rows[-1]['k']} clusters, CI {rows[-1]['ci']:.3f} ({secs:.2f} s)")
    Z = _standardised(X)
    post, post_s = timed(lambda: gibbs_dp_gmm(
        seed, Z, alpha_prior=dist.Gamma(1.0, 1.0), sigma2_prior=dist.InverseGamma(2.0, 0.5),
        sigma2=0.25, rho2=4.0, progress_bar=progress_bar, **sampler))
    k_dist = post.k_distribution()
    point = post.point_estimate("vi")
    rows.append({"method": "DP mixture (Gibbs), VI point estimate", "k": metrics.n_clusters(point),
                 "ci": metrics.consistency_index(y, point), "nmi": metrics.nmi(y, point),
                 "seconds": post_s})
    ks = np.array(sorted(k_dist))
    probs = np.array([k_dist[k] for k in ks])
    cdf = np.cumsum(probs)
    k_mode = int(ks[np.argmax(probs)])
    k_lo, k_hi = int(ks[np.searchsorted(cdf, 0.05)]), int(ks[min(np.searchsorted(cdf, 0.95), ks.size - 1)])
    diag = post.diagnostics().get("n_clusters", {})
    paper = TABLE3.get(data)
    summary = {
        "data": data, "model": "did", "seed": seed, "n_samples": n, "n_features": d,
        "n_true_classes": K, "k_max": k_max,
        "score": "consistency index CI (Hungarian matching) and NMI against the true classes",
        "rows": rows,
        "gmd": {"n_components": int(mix.n_components), "message_length": float(mix.objective)},
        "dp_posterior_k": {"distribution": {str(k): float(p) for k, p in k_dist.items()},
                           "mode": k_mode, "interval_90": [k_lo, k_hi],
                           "rhat": diag.get("rhat"), "ess_bulk": diag.get("ess_bulk"),
                           **{k: sampler[k] for k in ("num_warmup", "num_samples",
                                                      "num_chains", "thin")}},
        "paper_table3": None if paper is None else {
            "gmd_ci": paper[0], "gmd_k": paper[1], "gmdid_mdl_ci": paper[2], "gmdid_mdl_k": paper[3]},
    }
    figure = (lambda f: _figure(X, y, runs, rows, ks, probs, K, f)) if plot else None
    wrote = write_outputs(summary, out_dir, "compare_did", figure)
    ref = "" if paper is None else (
        f"; Aidos & Fred (2012) Table 3 (known K, random start): GMD {paper[0]:.2f} % ({paper[1]}), "
        f"GMDID-MDL {paper[2]:.2f} % ({paper[3]})")
    lines = [f"{data} (seed {seed}): {n} x {d}, {K} classes{ref}",
             f"{'method':<40}{'k':>4}{'CI':>8}{'NMI':>8}{'seconds':>10}"]
    for r in rows:
        lines.append(f"{r['method']:<40}{r['k']:>4}{r['ci']:>8.3f}{r['nmi']:>8.3f}{r['seconds']:>10.3f}")
    lines.append(f"DP mixture posterior of k: mode {k_mode}, 90 % interval [{k_lo}, {k_hi}]; "
                 + ", ".join(f"P(k={k}) {p:.2f}" for k, p in zip(ks, probs) if p >= 0.01))
    lines.append(wrote)
    summary["report"] = "\n".join(lines)
    return summary


def _figure(X, y, runs, rows, ks, probs, K, filename):
    from ..plotting import _pyplot, plot_method_scores, plot_partition

    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    ax = axes.ravel()
    X2 = project_2d(X)
    suffix = " (first 2 PCs)" if X.shape[1] > 2 else ""
    plot_partition(X2, metrics.match_labels(y, runs["GMDID (MDL)"][0]), ax=ax[0], title="GMDID" + suffix)
    plot_partition(X2, metrics.match_labels(y, runs["SL-DID"][0]), ax=ax[1], title="SL-DID" + suffix)
    plot_method_scores(rows, "ci", ax=ax[2], xlabel="consistency index CI", xlim=(0, 1))
    ax[3].bar(ks, probs, color="0.6", label="DP mixture: posterior of k")
    marks = {"true K": (K, "k"), "GMD": (None, "tab:blue"), "GMDID (MDL)": (None, "tab:orange"),
             "SL-DID": (None, "tab:green")}
    found = {r["method"]: r["k"] for r in rows}
    for label, (k, color) in marks.items():
        k = k if k is not None else found["GMD (Figueiredo & Jain)" if label == "GMD" else label]
        ax[3].axvline(k, color=color, linestyle="--", label=f"{label}: {k}")
    ax[3].set_xlabel("number of clusters k")
    ax[3].set_ylabel("posterior probability")
    ax[3].legend(fontsize=8)
    ax[3].set_title("how many clusters?", fontsize=10)
    save_figure(fig, filename)
