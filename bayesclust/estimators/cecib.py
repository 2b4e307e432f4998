"""Estimator of semi-supervised cross-entropy clustering (CEC-IB; Śmieja & Geiger 2017).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    check_is_fitted,
    validate_data,
)

from .. import _validation as V
from ..inference.information.cecib import cecib, cecib_log_density
from ._base import (
    _key_from_random_state,
    _warn_if_one_cluster,
)

__all__ = ["CECIB"]

#: ``CECIB``'s starting number of clusters ([C]'s case studies); an unlabelled fit from it warns.
DEFAULT_N_CLUSTERS = 10


class CECIB(ClusterMixin, BaseEstimator):
    r"""Semi-supervised cross-entropy clustering with an information-bottleneck constraint.

    Śmieja & Geiger (2017): Gaussian clusters that trade off model accuracy
    (cross-entropy), model simplicity (the cluster-size entropy removes
    superfluous clusters, so ``n_clusters`` is only the starting number) and
    consistency with partial labels (``beta`` times each cluster's label
    entropy).  See :func:`bayesclust.inference.information.cecib.cecib` for the optimiser and
    :func:`bayesclust.inference.information.cecib.cecib_cost` for the cost.  ``beta = 0`` or no labels
    is plain CEC.

    Parameters
    ----------
    n_clusters : int, default 10
        Starting number of clusters ([C]: twice the number of classes; 10 in its
        case studies).  The fitted number ``n_clusters_`` is usually smaller.  A fit
        without labels from the default start warns: plain CEC's cost (Tabor & Spurek
        2014) charges a cluster the code length of its share, nothing for its Gaussian's
        parameters, and kept 6 clusters on iris and 5 on MASS biopsy (BENCHMARKS.md,
        "defaults on real data").
    beta : float, default 1.0
        Weight of the label term (>= 0): 1 for trusted labels,
        :func:`bayesclust.inference.information.cecib.beta_0` (~0.27) for possibly wrong labels.
    eps : float, default 0.05
        Clusters with fewer than ``max(ceil(eps n), n_features + 2)`` points are removed.
    covariance_type : {"full", "diagonal", "spherical"}, default "full"
    init : {"random", "k-means++"}, default "random"
        Starting partitions: a uniformly random partition ([C]) or the nearest
        k-means++ seed (authors' code; keeps superfluous clusters more often).
    n_init : int, default 10
        Restarts; the lowest cost wins.
    max_iter : int, default 100
        Cap on the passes of one restart.
    classes : array-like or None, default None
        The known label categories.  Labels of ``y`` outside them are an error.
        None: the categories are the distinct labels seen in ``fit``.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        Surviving clusters.
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        The cluster means.
    covariances_ : ndarray of shape (n_clusters_, n_features, n_features)
    weights_ : ndarray of shape (n_clusters_,)
    classes_ : ndarray of shape (n_classes,)
        The label categories.
    label_counts_ : ndarray of shape (n_clusters_, n_classes)
        Labelled members of each cluster per category.
    objective_ : float
        The minimised cost :math:`E_\beta` of the fitted partition (nats).
    objective_trace_ : ndarray
        :math:`E_\beta` after every pass of the best start, non-increasing.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    Notes
    -----
    ``fit(X, y)`` takes the partial labels in ``y``: ``-1`` marks an unlabelled
    point (scikit-learn's semi-supervised convention); labels are categories, not
    necessarily the classes, and may cover only some classes.  ``predict``
    assigns new points by the CEC rule :math:`\arg\max_j p_j \mathcal N(x \mid \mu_j, \Sigma_j)`
    ([C] eq. 1), which uses no labels.

    References
    ----------
    M. Śmieja and B. C. Geiger, "Semi-supervised cross-entropy clustering with
    information bottleneck constraint", Information Sciences 421 (2017) 254--271.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 1, (200, 2)), rng.normal(7, 1, (200, 2))])
    >>> y = np.full(400, -1); y[:10] = 0; y[-10:] = 1
    >>> est = CECIB(n_clusters=4, n_init=2, random_state=0).fit(X, y)
    >>> est.n_clusters_
    2
    >>> est.predict([[0.0, 0.0], [7.0, 7.0]]).tolist() == [est.labels_[0], est.labels_[-1]]
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "beta": [Interval(numbers.Real, 0, None, closed="left")],
        "eps": [Interval(numbers.Real, 0, 1, closed="left")],
        "covariance_type": [StrOptions({"full", "diagonal", "spherical"})],
        "init": [StrOptions({"k-means++", "random"})],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "classes": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=DEFAULT_N_CLUSTERS, *, beta=1.0, eps=0.05, covariance_type="full",
                 init="random", n_init=10, max_iter=100, classes=None, random_state=None):
        self.n_clusters = n_clusters
        self.beta = beta
        self.eps = eps
        self.covariance_type = covariance_type
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster ``X`` using the partial labels ``y`` (``-1`` = unlabelled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of int of shape (n_samples,), optional
            Partial labels; None means no labels (plain CEC).

        Returns
        -------
        self
        """
        if isinstance(self.beta, numbers.Real) and not isinstance(self.beta, bool) and self.beta < 0:
            raise ValueError(f"beta must be a non-negative finite number, got {self.beta!r}")
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n = X.shape[0]
        if y is None:
            y = np.full(n, -1, np.int64)
        elif np.asarray(y).dtype.kind in "OUSV":
            raise ValueError(
                f"Unknown label type: y must hold integer labels (-1 = unlabelled), got dtype {np.asarray(y).dtype}"
            )
        y = V.check_labels(y, "y", n_samples=n)
        labelled = y != -1
        if self.classes is None:
            classes = np.unique(y[labelled])
        else:
            classes = np.unique(V.check_labels(np.asarray(self.classes).ravel(), "classes"))
            unknown = np.setdiff1d(np.unique(y[labelled]), classes)
            if unknown.size:
                raise ValueError(
                    f"y has labels {unknown.tolist()} outside the known classes {classes.tolist()} "
                    "(-1 marks an unlabelled point)"
                )
        codes = np.full(n, -1, np.int64)
        codes[labelled] = np.searchsorted(classes, y[labelled])
        res = cecib(
            _key_from_random_state(self.random_state), X, self.n_clusters, codes,
            beta=self.beta, eps=self.eps, covariance_type=self.covariance_type, init=self.init,
            n_init=self.n_init, max_iter=self.max_iter, n_categories=len(classes),
        )
        self.result_ = res
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.cluster_centers_ = res.centers
        self.covariances_ = res.covariances
        self.weights_ = res.weights
        self.classes_ = classes
        self.label_counts_ = res.label_counts
        self.objective_ = res.objective
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        _warn_if_one_cluster(self, "raise n_clusters or lower eps")
        if not labelled.any() and self.n_clusters == DEFAULT_N_CLUSTERS and self.n_clusters_ > 1:
            warnings.warn(
                f"CECIB without labels is CEC, whose cost charges a cluster only the code length "
                f"of its share (no term for its parameters): from the default {DEFAULT_N_CLUSTERS} "
                f"starting clusters it kept {self.n_clusters_}, which can be more than the data's "
                "groups; give partial labels y, or the most clusters you want as n_clusters",
                UserWarning, stacklevel=2)
        return self

    def _log_density(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return cecib_log_density(X, self.result_)

    def predict(self, X):
        """Cluster of every row of ``X``: :math:`\\arg\\max_j p_j \\mathcal N(x | \\mu_j, \\Sigma_j)`."""
        return np.argmax(self._log_density(X), axis=1).astype(np.intp)

    def predict_proba(self, X):
        """Normalised :math:`p_j \\mathcal N(x | \\mu_j, \\Sigma_j)`, shape (n_samples, n_clusters_)."""
        from scipy.special import softmax

        return softmax(self._log_density(X), axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
