"""Sampled against hard: :func:`compare` sets a posterior beside its model's hard limit.

A table comparing a :class:`~bayesclust.inference.mixtures.posterior.Posterior` with a
hard-limit result (k, NMI/ARI against the truth and against each other, the hard objective of
both partitions, time).  The ``bayesclust compare`` jobs (reports and figures) built on it
live in :mod:`bayesclust.jobs`.
"""

from __future__ import annotations

import numpy as np

from .. import _validation as V
from .. import metrics
from ..inference.mixtures.posterior import Posterior

__all__ = ["compare", "ComparisonTable", "score"]


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
