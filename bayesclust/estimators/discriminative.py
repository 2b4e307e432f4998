"""Estimator of discriminative clustering (Kaski, Sinkkonen & Klami 2005).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    check_is_fitted,
    validate_data,
)

from ..inference.discriminative.dc_map import dc_map
from ..metrics import dc_log_posterior
from ._base import (
    _key_from_random_state,
    _nearest_labels,
    _warn_if_one_cluster,
)

__all__ = ["DiscriminativeClustering"]


class DiscriminativeClustering(ClusterMixin, BaseEstimator):
    r"""Discriminative clustering: Voronoi regions of ``X`` informative of auxiliary classes ``y``.

    Kaski, Sinkkonen & Klami (2005): prototypes :math:`m_1..m_K` (the cluster centres,
    Kaski et al.'s term) maximise the
    Dirichlet-marginalised log posterior :math:`\sum_{ij} \log\Gamma(n^0_i + n_{ji}) -
    (1 + \lambda_{EQ}) \sum_j \log\Gamma(N^0 + N_j)` of the Voronoi contingency table
    (optionally regularised towards a mixture of Gaussians or k-means), found by
    conjugate gradients on the objective smoothed with width ``smooth_std``
    (:func:`bayesclust.inference.discriminative.dc_map.dc_map`).  New points are
    clustered from ``X`` alone (nearest prototype).

    Parameters
    ----------
    n_clusters : int, default 5
    smooth_std : float, default 0.5
        Smoothing width (a standard deviation of the data's units; > 0).
    n0 : float, default 1.0
        Dirichlet prior count per class.
    lam_eq, lam_mog, lam_vq : float, default 0.0
        Regularisers (eqs. 12, 14, 15).
    init : {"kmeans", "random"}, default "kmeans"
    max_iter : int, default 29
        Conjugate-gradient iterations (the paper's cap).
    random_state : int, RandomState instance or None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The prototypes (the cluster centres).
    labels_ : ndarray of shape (n_samples,)
        Voronoi cell of every training point.
    n_clusters_ : int
        ``n_clusters``: the prototypes (``labels_`` lie in ``0..n_clusters_-1``; a cell may
        hold no training point).
    classes_ : ndarray of shape (n_classes,)
        The auxiliary class labels seen in ``fit``.
    log_posterior_ : float
        Exact (unsmoothed) log posterior on the training data.
    n_iter_ : int
    n_features_in_ : int

    Notes
    -----
    ``score(X, y)`` is the exact log posterior of the Voronoi cells of ``X``
    given the classes ``y`` (higher is better; the paper's test cost is its
    negative).  ``fit`` needs ``y``: the scikit-learn checks for unsupervised
    clusterers do not apply as such (the estimator is tagged as needing ``y``).

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 2000)
    >>> est = DiscriminativeClustering(n_clusters=4, smooth_std=0.3, random_state=0).fit(X, c)
    >>> est.cluster_centers_.shape
    (4, 2)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "smooth_std": [Interval(numbers.Real, 0, None, closed="neither")],
        "n0": [Interval(numbers.Real, 0, None, closed="neither")],
        "lam_eq": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_mog": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_vq": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [StrOptions({"kmeans", "random"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=5, smooth_std=0.5, *, n0=1.0, lam_eq=0.0, lam_mog=0.0,
                 lam_vq=0.0, init="kmeans", max_iter=29, random_state=None):
        self.n_clusters = n_clusters
        self.smooth_std = smooth_std
        self.n0 = n0
        self.lam_eq = lam_eq
        self.lam_mog = lam_mog
        self.lam_vq = lam_vq
        self.init = init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        """Find the prototypes given primary data ``X`` and auxiliary classes ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Auxiliary class labels (any hashable values).

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        if type_of_target(y) in ("continuous", "continuous-multioutput"):
            bad = next(v for v in np.ravel(y) if float(v) != int(v))
            raise ValueError("y must hold discrete auxiliary classes (integers or strings), got "
                             f"non-integer values such as {bad}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.n_clusters > X.shape[0]:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={X.shape[0]}")
        res = dc_map(_key_from_random_state(self.random_state), X, codes, self.n_clusters,
                     self.smooth_std, init=self.init, n_classes=len(self.classes_), n0=self.n0,
                     lam_eq=self.lam_eq, lam_mog=self.lam_mog, lam_vq=self.lam_vq,
                     max_iter=self.max_iter)
        self.cluster_centers_ = np.asarray(res.prototypes)
        self.labels_ = np.asarray(res.labels).astype(np.intp)
        self.n_clusters_ = int(self.n_clusters)
        self.log_posterior_ = float(res.log_posterior)
        self.n_iter_ = int(res.n_iter)
        _warn_if_one_cluster(self, "raise n_clusters or lower smooth_std")
        return self

    def predict(self, X):
        """Voronoi cell (nearest prototype) of every row of ``X``."""
        return _nearest_labels(self, X)

    def score(self, X, y):
        """Exact DC log posterior of the Voronoi cells of ``X`` given classes ``y`` (higher is better)."""
        check_is_fitted(self)
        labels = self.predict(X)
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(f"y has classes not seen in fit: {np.unique(y[~known]).tolist()}")
        return dc_log_posterior(labels, np.searchsorted(self.classes_, y),
                                n_clusters=self.n_clusters, n_classes=len(self.classes_), n0=self.n0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
