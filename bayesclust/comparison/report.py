"""Sampled against hard: :func:`compare` sets a posterior beside its model's hard limit.

One report for every family (:class:`ComparisonReport`): k, NMI/ARI against the truth and
against each other, the hard objective of both partitions (the family's
:meth:`~bayesclust.comparison.path.LimitFamily.objective`, the quantity the hard limit
minimises), time; and what the figure needs (both partitions, the posterior, the hard result,
optionally the family's :class:`~bayesclust.comparison.path.LimitPath`), drawn by
:func:`bayesclust.plotting.plot_comparison`.  The ``bayesclust compare`` jobs built on it live
in :mod:`bayesclust.jobs`.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import numpy as np

from .. import _validation as V
from .. import metrics
from ..inference.mixtures.posterior import Posterior
from .path import FAMILIES, OBJECTIVE_RTOL, LimitFamily, LimitPath

__all__ = ["compare", "ComparisonReport", "score", "hard_family", "hard_partition",
           "objective_order"]


def score(labels_true, labels_pred) -> dict:
    """NMI (arithmetic and geometric), ARI and Hungarian accuracy of a partition."""
    return {
        "nmi": metrics.nmi(labels_true, labels_pred),
        "nmi_geometric": metrics.nmi(labels_true, labels_pred, average_method="geometric"),
        "ari": metrics.ari(labels_true, labels_pred),
        "accuracy": metrics.accuracy(labels_true, labels_pred),
        "n_clusters": metrics.n_clusters(labels_pred),
    }


def objective_order(a: float | None, b: float | None, rtol: float = OBJECTIVE_RTOL) -> str | None:
    """How two hard objectives (minimised) compare, rounding aside.

    Parameters
    ----------
    a, b : float or None
    rtol : float
        Relative tolerance: ``|a - b| <= rtol * max(|a|, |b|)`` is a tie
        (:data:`bayesclust.comparison.path.OBJECTIVE_RTOL`, 1e-4: below what a float32
        sampler resolves).

    Returns
    -------
    {"lower", "equal", "higher"} or None
        ``a`` against ``b``; None when either is missing.
    """
    if a is None or b is None:
        return None
    if abs(a - b) <= rtol * max(abs(a), abs(b)):
        return "equal"
    return "lower" if a < b else "higher"


#: The columns of a report's rows, in the printed order.
COLUMNS = ("method", "k", "nmi_truth", "ari_truth", "nmi_other", "ari_other", "objective",
           "p_k_hard", "seconds")


class ComparisonReport(NamedTuple):
    """A posterior beside its hard limit: the rows of :func:`compare` and what the figure needs.

    Printed, it is the table of its ``rows``; :func:`bayesclust.plotting.plot_comparison`
    draws it.

    Attributes
    ----------
    model : str
        The family's name (``"dp"``, ``"hdp"``, ``"dc"``, ``"aspect"`` or a researcher's own).
    hard_name : str
        The hard limit's name ("DP-means").
    rows : list of dict
        One row per method, keys :data:`COLUMNS`: the posterior point partition, the mean
        over the draws, the hard partition.  ``k`` (for the draws: the mean number of
        clusters), ``nmi_truth`` / ``ari_truth`` against ``labels_true`` (None without it),
        ``nmi_other`` / ``ari_other`` against the other side, ``objective`` the family's hard
        objective (minimised; None without the data), ``p_k_hard`` the posterior probability
        of the hard partition's number of clusters, ``seconds`` the time recorded by each side.
    point : ndarray of int, shape (n,)
        The posterior point partition (minimising the expected ``loss``).
    hard_labels : ndarray of int, shape (n,)
        The hard partition.
    posterior : Posterior
        The draws: ``posterior.co_clustering()`` (n, n), ``posterior.n_clusters``
        (num_chains, num_samples).
    hard : object
        The hard result or fitted hard estimator, as given.
    labels_true : ndarray of int, shape (n,) or None
    X : ndarray, shape (n, d) or None
        The data, when given (the figure colours it by each partition).
    loss : str
        The point estimate's loss (``"vi"`` or ``"binder"``).
    path : LimitPath or None
        The family's limit path, when given.
    """

    model: str
    hard_name: str
    rows: list
    point: np.ndarray
    hard_labels: np.ndarray
    posterior: Posterior
    hard: object
    labels_true: np.ndarray | None
    X: np.ndarray | None
    loss: str
    path: LimitPath | None

    @property
    def objective_order(self) -> str | None:
        """The posterior point's hard objective against the hard partition's: ``"lower"``,
        ``"equal"`` (within the relative tolerance of :func:`objective_order`, 1e-4) or
        ``"higher"``; None without the data."""
        return objective_order(self.rows[0]["objective"], self.rows[-1]["objective"])

    def to_dict(self) -> dict:
        """The report as JSON-ready values: the model, the rows, the loss, the objectives'
        order (:attr:`objective_order`, with its tolerance) -- no arrays."""
        return {"model": self.model, "hard_name": self.hard_name, "loss": self.loss,
                "rows": [dict(r) for r in self.rows], "objective_order": self.objective_order,
                "objective_rtol": OBJECTIVE_RTOL}

    def __str__(self) -> str:
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                return f"{v:.4g}"
            return str(v)

        table = [COLUMNS] + [tuple(fmt(r.get(c)) for c in COLUMNS) for r in self.rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def _posterior_of(sampled) -> Posterior:
    if isinstance(sampled, Posterior):
        return sampled
    post = getattr(sampled, "posterior_", None)
    if isinstance(post, Posterior):
        return post
    raise TypeError("sampled must be a Posterior or a fitted sampled estimator (with a "
                    f"posterior_, e.g. DPGaussianMixture), got {type(sampled).__name__}")


def _label_draws(posterior: Posterior) -> np.ndarray | None:
    """The label draws of ``posterior``, or None when it keeps none (``keep_draws="summary"``)."""
    try:
        return posterior.labels
    except ValueError:
        return None


def hard_partition(hard) -> np.ndarray:
    """The partition of a fitted hard estimator (``labels_``) or a hard result (``labels``, or
    ``flat_labels`` for a grouped one whose ``labels`` are per data set), shape (n,).

    Raises
    ------
    TypeError
        Naming ``hard`` when it holds no single integer label per point.
    """
    if hasattr(hard, "labels_"):
        labels = hard.labels_
    elif hasattr(hard, "flat_labels"):  # a grouped result: its labels are a list per data set
        labels = hard.flat_labels
    elif hasattr(hard, "labels"):
        labels = hard.labels
    else:
        raise TypeError(f"hard must be a hard result (with labels) or a fitted hard estimator "
                        f"(with labels_), got {type(hard).__name__}")
    try:
        labels = np.asarray(labels)
    except ValueError:
        labels = np.asarray(labels, dtype=object)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"hard must hold one integer label per point, got labels of shape "
                        f"{labels.shape} and dtype {labels.dtype} ({type(hard).__name__})")
    return labels


def hard_family(hard):
    """The shipped :class:`LimitFamily` subclass whose ``hard_types`` name ``type(hard)``.

    Imports the family modules of :data:`~bayesclust.comparison.path.FAMILIES` on first use.

    Raises
    ------
    TypeError
        If no shipped family accepts ``hard`` (naming the accepted types).
    """
    name = type(hard).__name__
    accepted = []
    for module, cls_name in FAMILIES.values():
        cls = getattr(importlib.import_module(module), cls_name)
        if name in cls.hard_types:
            return cls
        accepted.extend(cls.hard_types)
    raise TypeError(f"hard must be a hard result or fitted hard estimator of a shipped family "
                    f"({', '.join(accepted)}), or pass family=, got {name}")


def _family(hard, family, X, data):
    """The family class and, when the data are there, its instance holding the hard penalty."""
    given = {k: v for k, v in data.items() if v is not None}
    if isinstance(family, LimitFamily):
        if given:
            raise ValueError(f"family is a LimitFamily, which holds its data: do not pass "
                             f"{', '.join(sorted(given))}")
        return type(family), family
    if family is None:
        cls = hard_family(hard)
    elif isinstance(family, type) and issubclass(family, LimitFamily):
        cls = family
    else:
        raise TypeError(f"family must be a LimitFamily (instance or subclass), got "
                        f"{type(family).__name__}")
    for k in given:
        if k not in cls.data_arguments:
            raise ValueError(f"{k} is not data of the {cls.name!r} family ({cls.hard_name}), "
                             f"whose hard result hard is a {type(hard).__name__}")
    if X is None and not given:
        return cls, None
    return cls, cls.from_hard(hard, X, **given)


def compare(sampled, hard, labels_true=None, *, X=None, y=None, group_ids=None, ensemble=None,
            family=None, loss="vi", path=None) -> ComparisonReport:
    """Compare a sampled posterior with its model's hard limit on the same data.

    Works for every family that :func:`~bayesclust.comparison.path.limit_path` anneals
    (``docs/protocol.md``): the family is found from the hard result's type (its
    ``hard_types``), or given as ``family``; its ``from_hard(hard, X, ...)`` holds the hard
    result's penalty, and both partitions are scored by its hard objective.

    Parameters
    ----------
    sampled : Posterior or fitted sampled estimator
        A :class:`~bayesclust.inference.mixtures.posterior.Posterior` (from
        :func:`bayesclust.gibbs_dp_gmm`, :func:`bayesclust.gibbs_hdp_gmm`, ...) or an
        estimator with ``posterior_`` (``DPGaussianMixture``, ``HDPGaussianMixture``, ...).
        One kept as ``keep_draws="summary"`` (no label draws) gives the point row and the
        draws' mean ``k``; the draws' mean NMI / ARI are then None, and ``loss`` must be the
        one whose point estimate it kept.
    hard : hard result or fitted hard estimator
        ``DPMeansResult`` / ``DPMeans``, ``HardHDPResult`` / ``HardHDP``, or a result of
        another shipped family (see each family's ``hard_types``); a researcher's own with
        ``family``.  Its partition is ``labels_`` (estimator) or ``labels`` (result).
    labels_true : array_like of int, shape (n,), optional
    X : array_like, shape (n, d), optional
        The data: needed for the hard objective (``None`` without it) and drawn by the
        figure.
    y, group_ids, ensemble : array_like, optional
        The family's other data (discriminative clustering's classes ``y``, the HDP's data
        set of every row ``group_ids``, the aspect model's ``ensemble`` (m, n)); only the
        ones the family reads (its ``data_arguments``).
    family : LimitFamily instance or subclass, optional
        A researcher's own family (``docs/protocol.md``): an instance holds its data and
        penalty (then pass no ``y`` / ``group_ids`` / ``ensemble``); a subclass is built by
        its ``from_hard``.  Default: the shipped family of ``type(hard)``.
    loss : {"vi", "binder"}
        Loss of the posterior point estimate (VI by default: Binder's loss tends
        to split off singletons; Wade & Ghahramani 2018).
    path : LimitPath, optional
        The family's limit path (:func:`~bayesclust.comparison.path.limit_path`), carried
        into the report for the figure.

    Returns
    -------
    ComparisonReport
        Rows "posterior point", "posterior draws (mean)" and "hard limit (<hard_name>)".

    Raises
    ------
    TypeError
        ``sampled`` without a posterior, ``hard`` of no known family, ``family`` not a
        LimitFamily.
    ValueError
        Mismatched lengths (naming the argument), data the family does not read, a ``path``
        of another model, a ``sampled`` kept as ``keep_draws="summary"`` without the point
        estimate of ``loss``.

    Examples
    --------
    >>> from bayesclust import DPMeans, DPGaussianMixture, compare, datasets
    >>> X, y = datasets.three_gaussians(0, n_per_cluster=30)
    >>> hard = DPMeans(n_clusters=3).fit(X)
    >>> est = DPGaussianMixture(sigma2=0.4, num_warmup=50, num_samples=50, num_chains=2,
    ...                         random_state=0)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # so short a run warns (ConvergenceWarning)
    ...     report = compare(est.fit(X), hard, y, X=X)
    >>> [r["method"] for r in report.rows][2]
    'hard limit (DP-means)'
    """
    posterior = _posterior_of(sampled)
    hard_labels = hard_partition(hard)
    n = len(hard_labels)
    if loss not in ("vi", "binder"):
        raise ValueError(f"loss must be 'vi' or 'binder', got {loss!r}")
    draws = _label_draws(posterior)
    try:
        point = np.asarray(posterior.point_estimate(loss))
    except ValueError:
        if draws is not None:
            raise
        raise ValueError(
            f"sampled keeps no label draws (keep_draws='summary') and not the point estimate of "
            f"loss={loss!r}: compare with the loss it was fitted with, or fit it with "
            "keep_draws='all' or an int") from None
    if len(point) != n:
        raise ValueError(f"sampled labels {len(point)} points but hard labels {n}")
    if X is not None:
        X = V.check_array(X, "X")
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows but sampled and hard label {n} points")
    data = {"y": y, "group_ids": group_ids, "ensemble": ensemble}
    for k in ("y", "group_ids"):
        if data[k] is not None and len(data[k]) != n:
            raise ValueError(f"{k} has {len(data[k])} entries but sampled and hard label {n} points")
    cls, fam = _family(hard, family, X, data)
    if fam is not None and int(fam.n_samples) != n:
        raise ValueError(f"family holds {fam.n_samples} points but sampled and hard label {n}")
    truth = None if labels_true is None else V.check_labels(labels_true, "labels_true", n_samples=n)
    if path is not None:
        if not isinstance(path, LimitPath):
            raise TypeError(f"path must be a LimitPath (from limit_path), got {type(path).__name__}")
        if path.model != cls.name or len(path.point) != n:
            raise ValueError(f"path is a limit path of model {path.model!r} on {len(path.point)} "
                             f"points, not of {cls.name!r} on {n}")
    if draws is not None:
        draws = np.asarray(draws).reshape(-1, n)
    k_hard = metrics.n_clusters(hard_labels)

    def objective(labels):
        return None if fam is None else float(fam.objective(labels))

    def vs_truth(labels, fn):
        return None if truth is None else fn(truth, labels)

    def mean_over_draws(reference, fn):
        if reference is None or draws is None:
            return None
        return float(np.mean([fn(reference, d) for d in draws]))

    k_draws = np.asarray(posterior.n_clusters).reshape(-1)
    rows = [
        {
            "method": f"posterior point ({loss}, {posterior.sampler})",
            "k": metrics.n_clusters(point),
            "nmi_truth": vs_truth(point, metrics.nmi),
            "ari_truth": vs_truth(point, metrics.ari),
            "nmi_other": metrics.nmi(hard_labels, point),
            "ari_other": metrics.ari(hard_labels, point),
            "objective": objective(point),
            "p_k_hard": float(np.mean(k_draws == k_hard)),
            "seconds": posterior.seconds,
        },
        {
            "method": "posterior draws (mean)",
            "k": float(np.mean(k_draws)),
            "nmi_truth": mean_over_draws(truth, metrics.nmi),
            "ari_truth": mean_over_draws(truth, metrics.ari),
            "nmi_other": mean_over_draws(hard_labels, metrics.nmi),
            "ari_other": mean_over_draws(hard_labels, metrics.ari),
            "objective": None,
            "p_k_hard": None,
            "seconds": None,
        },
        {
            "method": f"hard limit ({cls.hard_name})",
            "k": k_hard,
            "nmi_truth": vs_truth(hard_labels, metrics.nmi),
            "ari_truth": vs_truth(hard_labels, metrics.ari),
            "nmi_other": metrics.nmi(point, hard_labels),
            "ari_other": metrics.ari(point, hard_labels),
            "objective": objective(hard_labels),
            "p_k_hard": None,
            "seconds": getattr(hard, "seconds", None),
        },
    ]
    return ComparisonReport(cls.name, cls.hard_name, rows, point, hard_labels, posterior, hard,
                            truth, X, loss, path)
