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
from ..inference.hard.hard_dc import hard_dc
from ..metrics import dc_log_posterior
from ._base import (
    _key_from_random_state,
    _lam_from_n_clusters,
    _nearest_labels,
    _warn_if_one_cluster,
)

__all__ = ["DiscriminativeClustering", "HardDC"]


def _class_codes(y):
    """Sorted distinct classes and the codes of ``y`` (discrete values only)."""
    if type_of_target(y) in ("continuous", "continuous-multioutput"):
        bad = next(v for v in np.ravel(y) if float(v) != int(v))
        raise ValueError("y must hold discrete auxiliary classes (integers or strings), got "
                         f"non-integer values such as {bad}")
    return np.unique(y, return_inverse=True)


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
    n_clusters : int or None, default None
        The number of prototypes; None: the number of auxiliary classes, one Voronoi region
        per class at least (the number ``bayesclust compare --model dc`` uses on labelled
        data).  The former default of 5 was a number of clusters no data set chose: 5 on
        3-class wine, 5 on 2-class MASS biopsy (BENCHMARKS.md, "defaults on real data").
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
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "smooth_std": [Interval(numbers.Real, 0, None, closed="neither")],
        "n0": [Interval(numbers.Real, 0, None, closed="neither")],
        "lam_eq": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_mog": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_vq": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [StrOptions({"kmeans", "random"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=None, smooth_std=0.5, *, n0=1.0, lam_eq=0.0, lam_mog=0.0,
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
        self.classes_, codes = _class_codes(y)
        k = len(self.classes_) if self.n_clusters is None else self.n_clusters
        if k > X.shape[0]:
            raise ValueError(f"n_clusters={k} must be <= n_samples={X.shape[0]}")
        res = dc_map(_key_from_random_state(self.random_state), X, codes, k,
                     self.smooth_std, init=self.init, n_classes=len(self.classes_), n0=self.n0,
                     lam_eq=self.lam_eq, lam_mog=self.lam_mog, lam_vq=self.lam_vq,
                     max_iter=self.max_iter)
        self.cluster_centers_ = np.asarray(res.prototypes)
        self.labels_ = np.asarray(res.labels).astype(np.intp)
        self.n_clusters_ = int(k)
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
                                n_clusters=self.n_clusters_, n_classes=len(self.classes_), n0=self.n0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class HardDC(ClusterMixin, BaseEstimator):
    r"""HardDC: DP-means with a class term (experimental, our extension).

    The small-variance limit of a tempered DP mixture of (point, class) components
    (docs/deviations.md#hard-dc-model; :func:`bayesclust.inference.hard.hard_dc.hard_dc`):
    minimises :math:`\sum_i \|x_i - \mu_{z_i}\|^2 + \lambda k - \xi \log
    \mathrm{Polya}(y \mid z)` over partitions of the training data and their number of
    clusters, so that clusters are compact in ``X`` *and* informative of the auxiliary
    classes ``y``, as in discriminative clustering (Kaski et al. 2005).  ``predict`` clusters
    new points by ``X`` alone (the Voronoi cells of the centres).

    Parameters
    ----------
    lam : float or None, default None
        Penalty per cluster (a squared distance, > 0).  None: farthest-first for
        ``n_clusters`` (as :class:`bayesclust.DPMeans`).
    n_clusters : int, default 8
        Desired number of clusters, used only to choose ``lam`` when it is None.
    xi : float, default 1.0
        Weight of the class term (a squared distance per nat, >= 0; 0 is DP-means).
    n0 : float, default 1.0
        Dirichlet prior count per class.
    max_iter : int, default 100
    random_state : int, RandomState instance or None
        Unused (the algorithm is deterministic); kept for the scikit-learn contract.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    n_clusters_ : int
    classes_ : ndarray of shape (n_classes,)
    lam_ : float
    objective_ : float
        Final value of :math:`J` (:func:`bayesclust.metrics.hard_dc_objective`).
    objective_trace_ : ndarray of shape (n_iter_ + 1,)
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    Notes
    -----
    Experimental, our extension: neither paper has this model.  ``fit`` needs ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1]])
    >>> y = np.array(["a", "a", "b", "b", "a", "a"])
    >>> HardDC(lam=1.0, xi=0.0).fit(X, y).n_clusters_  # DP-means
    2
    >>> HardDC(lam=1.0, xi=2.0).fit(X, y).labels_.tolist()
    [0, 0, 1, 1, 2, 2]
    """

    _parameter_constraints: dict = {
        "lam": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "xi": [Interval(numbers.Real, 0, None, closed="left")],
        "n0": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, lam=None, *, n_clusters=8, xi=1.0, n0=1.0, max_iter=100,
                 random_state=None):
        self.lam = lam
        self.n_clusters = n_clusters
        self.xi = xi
        self.n0 = n0
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        """Cluster ``X`` with the auxiliary classes ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Auxiliary classes (any discrete values).

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        self.classes_, codes = _class_codes(y)
        lam = _lam_from_n_clusters(X, self.n_clusters) if self.lam is None else float(self.lam)
        res = hard_dc(X, codes, lam, float(self.xi), n0=float(self.n0), max_iter=self.max_iter)
        self.labels_ = res.labels.astype(np.intp)
        self.cluster_centers_ = res.centers
        self.n_clusters_ = int(res.n_clusters)
        self.lam_ = lam
        self.objective_ = res.objective
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        _warn_if_one_cluster(self, "lower lam (or give n_clusters) or raise xi")
        return self

    def fit_predict(self, X, y):
        """``fit(X, y).labels_``: the training points' clusters (not their Voronoi cells)."""
        return self.fit(X, y).labels_

    def predict(self, X):
        """Voronoi cell (nearest centre) of every row of ``X``."""
        return _nearest_labels(self, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags
