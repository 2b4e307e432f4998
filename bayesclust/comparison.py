"""Sampled against hard: compare a posterior with its model's small-variance limit.

* :func:`compare` -- a table comparing a :class:`~bayesclust.inference.posterior.Posterior`
  with a hard-limit result (k, NMI/ARI against the truth and against each other, the
  DP-means objective of both partitions, time).
* :func:`small_variance_path` -- the Gibbs sampler run at decreasing ``sigma2`` with
  ``alpha = alpha_from_lam(lam, sigma2, rho2, d)``: how the posterior collapses onto
  the DP-means partition (Kulis & Jordan 2012, §3.1).

The ``bayesclust compare`` jobs (reports and figures) built on these live in
:mod:`bayesclust.jobs`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from . import _validation as V
from . import metrics
from .inference.dp_means import dp_means
from .inference.gibbs import gibbs_dp_gmm
from .inference.posterior import Posterior
from .models.dp_gmm import log_alpha_from_lam

__all__ = ["compare", "ComparisonTable", "small_variance_path", "SmallVariancePath", "score"]


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
    if not isinstance(posterior, Posterior):
        raise TypeError("posterior must be a Posterior (e.g. from gibbs_dp_gmm), got "
                        f"{type(posterior).__name__}")
    if not all(hasattr(hard_result, f) for f in ("labels", "n_clusters", "lam")):
        raise TypeError("hard_result must be a DPMeansResult (from dp_means), got "
                        f"{type(hard_result).__name__}")
    point = posterior.point_estimate(loss)
    hard = np.asarray(hard_result.labels)
    V.check_same_length(point, hard, "posterior labels", "hard_result.labels")
    if X is not None:
        X = V.check_array(X, "X")
        if X.shape[0] != len(hard):
            raise ValueError(f"X has {X.shape[0]} rows but posterior and hard_result label "
                             f"{len(hard)} points")
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
