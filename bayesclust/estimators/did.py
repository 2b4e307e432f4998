"""Estimators of the dissimilarity-increments family: SL-DID and SL-AGLO (the number of
clusters is found, not given).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ..inference.increments.did_hierarchy import count_tested_sides, gdid_index, sl_aglo, sl_did
from ._base import _key_from_random_state, _warn_if_one_cluster

__all__ = ["SLDID", "SLAGLO", "GMDID", "MAPDIDClassifier"]

#: The significance levels ``GMDID(criterion="lrt", alpha="auto")`` chooses among by G-DID
#: (Aidos & Fred 2011 IbPRIA).
LRT_ALPHAS = (0.01, 0.05, 0.10, 0.15)


def _warn_if_fragments(estimator, change: str) -> None:
    """Warn when half or more of the clusters hold fewer than ``2 * min_size`` points.

    Single link merges groups below ``min_size``; clusters just above it are pieces an
    isolation test cut from the tails and sparse regions (wine: 24 of SL-AGLO's 25
    clusters hold 6-11 points), not groups of the data.
    """
    sizes = np.bincount(np.asarray(estimator.labels_))
    small = int(np.sum(sizes < 2 * estimator.min_size))
    if sizes.size > 2 and 2 * small >= sizes.size:
        warnings.warn(
            f"{type(estimator).__name__}: {small} of its {sizes.size} clusters hold fewer than "
            f"2 * min_size = {2 * estimator.min_size} points: fragments the isolation test cut "
            f"from sparse regions rather than groups of the data; to find fewer, {change}",
            UserWarning, stacklevel=3)


#: A cluster holding more than this share of the points, beside two or more others, is
#: read as single link's chaining.
CHAINED_SHARE = 0.5


def _warn_if_chained(estimator) -> None:
    """Warn when one of three or more clusters holds more than half of the points.

    Single link joins two groups as soon as a chain of close points links them, so on
    groups that touch it returns one large cluster and small ones cut from its edges
    (iris: setosa, and versicolor with virginica in one cluster of 100; digits' first 10
    principal components: 1,183 of 1,797 points in one cluster holding seven digits).  Two
    clusters of unequal sizes are left alone: they are as often two unequal groups.
    """
    sizes = np.bincount(np.asarray(estimator.labels_))
    n, big = int(sizes.sum()), int(sizes.max())
    if sizes.size >= 3 and big > CHAINED_SHARE * n:
        warnings.warn(
            f"{type(estimator).__name__}: one cluster holds {big} of the {n} points "
            f"({100 * big / n:.0f}%) beside {sizes.size - 1} smaller ones: single link joins "
            "groups that a chain of close points links, so that cluster may hold several; "
            "compare with a method that does not chain (e.g. EvidenceAccumulation or GMDID)",
            UserWarning, stacklevel=3)


def _warn_if_chance_isolations(estimator, n: int, result) -> None:
    r"""Warn when one or more of SL-AGLO's isolations is expected by chance.

    Under the exponential law of a cluster's increments (Fred & Leitão 2003, §3) a gap
    reaches :math:`\tau` mean increments with probability :math:`e^{-\tau}`; over the
    tests of clusters of at least ``min_size`` points (those merged, plus those isolated)
    :math:`e^{-\tau}` times their number isolate by chance.  At :math:`\tau = 3` on
    standardised wine that is 3.8 of the 6 isolations: some clusters are pieces of one group.
    """
    isolated = int(np.sum(result.isolated))
    tests = count_tested_sides(n, result.merges, estimator.min_size) + isolated
    expected = tests * float(np.exp(-estimator.tau_))
    if isolated and expected >= 1.0:
        warnings.warn(
            f"{type(estimator).__name__}: at tau_ = {estimator.tau_:g} a cluster is isolated when "
            f"its gap reaches {estimator.tau_:g} mean increments, which an exponential law of "
            f"increments does by chance with probability {np.exp(-estimator.tau_):.1%}: over its "
            f"{tests} tests about {expected:.1f} of its {isolated} isolations are expected by "
            f"chance, so its {estimator.n_clusters_} clusters may be pieces of fewer groups; "
            "to find fewer, raise tau", UserWarning, stacklevel=3)


#: A feature holding at least this fraction of the summed per-feature variances makes the
#: Euclidean distances (in expectation, squared) nearly its alone.
DOMINANT_FEATURE_SHARE = 0.9


def _warn_if_one_feature_dominates(estimator, X) -> None:
    """Warn when one feature of ``X`` holds :data:`DOMINANT_FEATURE_SHARE` of its variance.

    Single link reads Euclidean distances, so such data are clustered on that feature
    alone (raw wine: proline, measured in the hundreds, holds 99.8 % of the variance; the
    defaults found 8 clusters there, 3 classes): a scale of units, not of the groups,
    unless the features share one unit.
    """
    var = np.var(np.asarray(X, np.float64), axis=0)
    total = float(var.sum())
    if var.size < 2 or total == 0.0:
        return
    j = int(np.argmax(var))
    share = float(var[j]) / total
    if share >= DOMINANT_FEATURE_SHARE:
        warnings.warn(
            f"{type(estimator).__name__}: feature {j} of X holds {100 * share:.1f}% of its "
            "variance, so the single-link distances are nearly those of that feature alone; "
            "standardise X (e.g. sklearn.preprocessing.StandardScaler) unless its features "
            "share one unit", UserWarning, stacklevel=3)


def _least_gdid(X, runs):
    """Index of the run whose partition has the smallest G-DID, and every run's G-DID."""
    scores = np.array([gdid_index(X, r.labels) for r in runs])
    return int(np.argmin(scores)), scores


class SLDID(ClusterMixin, BaseEstimator):
    r"""SL-DID: single link that stops where the 2-DID of the increments says a cluster ends.

    Agglomerates in single link's order; small clusters merge, a cluster whose gap lies in
    the tail of its dissimilarity-increments law is isolated, and two clusters merge when the
    union's increments have the shorter MDL description length (Aidos & Fred 2011).  See
    :func:`bayesclust.inference.increments.did_hierarchy.sl_did`.

    Parameters
    ----------
    tail_factor : float, default 7.0
        A value is in a cluster's tail when it exceeds ``tail_factor`` times its mean increment.
    tail_prob : float in (0, 1) or None, default None
        If given, "in the tail" means a 2-DID tail probability below ``tail_prob`` instead.
    min_size : int, default 6
        Clusters of fewer points merge by single link.  A fit of which half the clusters
        or more hold fewer than ``2 * min_size`` points warns (fragments: 12 of the 19
        clusters on MASS biopsy at the defaults; BENCHMARKS.md, "defaults on real data").
        A fit on ``X`` one of whose features holds 90 % or more of the summed
        variances warns too: the distances are then that feature's (raw wine, where
        proline holds 99.8 %: 8 clusters for 3 classes), and so does a fit of three or
        more clusters one of which holds more than half of the points: single link's
        chaining (digits' first 10 principal components: 4 clusters for 10 classes, one
        of 1,183 of the 1,797 points).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    isolated_ : ndarray of bool, shape (n_clusters_,)
        Clusters isolated by the tail test.
    merges_ : ndarray of shape (n_merges, 3)
        ``(first point of one cluster, of the other, single-link distance)`` per merge.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> SLDID().fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "tail_factor": [Interval(numbers.Real, 0, None, closed="neither")],
        "tail_prob": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "min_size": [Interval(numbers.Integral, 3, None, closed="left")],
    }

    def __init__(self, tail_factor=7.0, tail_prob=None, min_size=6):
        self.tail_factor = tail_factor
        self.tail_prob = tail_prob
        self.min_size = min_size

    def fit(self, X, y=None):
        """Cluster ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None

        Returns
        -------
        self
        """
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
        res = sl_did(X, tail_factor=self.tail_factor, tail_prob=self.tail_prob,
                     min_size=self.min_size)
        self.labels_ = res.labels
        self.n_clusters_ = res.n_clusters
        self.isolated_ = res.isolated
        self.merges_ = res.merges
        _warn_if_one_cluster(self, "lower tail_factor (or tail_prob)")
        _warn_if_fragments(self, "raise min_size or tail_factor")
        _warn_if_chained(self)
        _warn_if_one_feature_dominates(self, X)
        return self


class SLAGLO(ClusterMixin, BaseEstimator):
    r"""SL-AGLO: single link with Fred & Leitão's cluster isolation criterion.

    A cluster is isolated when its gap reaches ``tau`` times its mean increment (the
    exponential model of the increments).  With ``tau="auto"`` every value of ``taus`` is run
    and the partition of smallest G-DID is kept, as Aidos & Fred (2011) choose it.  See
    :func:`bayesclust.inference.increments.did_hierarchy.sl_aglo`.

    Parameters
    ----------
    tau : float or "auto", default "auto"
    taus : array-like of float, default ``1, 2, ..., 10``
        The values tried by ``tau="auto"`` (the paper sweeps from the mean increment to ten
        times it).  G-DID prefers finer partitions than the classes on real data:
        standardised wine gets ``tau_`` = 3 and 7 clusters (3 classes; four of the 7 hold
        one class only, NMI .58 against HDBSCAN's .43), where ``tau`` = 4 gives 3; a fit
        warns when, at its ``tau_``, one or more isolations are expected by chance.
    min_size : int, default 6
        Clusters of fewer points merge by single link and are never isolated.  A fit of
        which half the clusters or more hold fewer than ``2 * min_size`` points warns
        (fragments: 8 to 32 clusters on iris, wine, MASS biopsy and crabs at the defaults,
        where G-DID picks ``tau`` = 1 or 3; BENCHMARKS.md, "defaults on real data").
        A fit on ``X`` one of whose features holds 90 % or more of the summed
        variances warns too: the distances are then that feature's (raw wine, where
        proline holds 99.8 %), and so does one of three or more clusters holding more
        than half of the points (single link's chaining, as :class:`SLDID` says).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    tau_ : float
        The threshold used.
    gdid_scores_ : ndarray of shape (len(taus),)
        G-DID of each tried partition (``tau="auto"`` only).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    >>> SLAGLO(tau=6.0).fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "tau": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "taus": ["array-like", None],
        "min_size": [Interval(numbers.Integral, 3, None, closed="left")],
    }

    def __init__(self, tau="auto", taus=None, min_size=6):
        self.tau = tau
        self.taus = taus
        self.min_size = min_size

    def fit(self, X, y=None):
        """Cluster ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None

        Returns
        -------
        self
        """
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=3)
        if self.tau != "auto":
            res = sl_aglo(X, self.tau, min_size=self.min_size)
            self.tau_ = float(self.tau)
        else:
            taus = np.arange(1.0, 11.0) if self.taus is None else np.asarray(self.taus, float)
            if taus.ndim != 1 or taus.size == 0 or not np.all(np.isfinite(taus) & (taus > 0)):
                raise ValueError(f"taus must be a non-empty 1-D array of positive numbers, got {self.taus!r}")
            runs = [sl_aglo(X, t, min_size=self.min_size) for t in taus]
            best, self.gdid_scores_ = _least_gdid(X, runs)
            res, self.tau_ = runs[best], float(taus[best])
        self.labels_ = res.labels
        self.n_clusters_ = res.n_clusters
        self.isolated_ = res.isolated
        _warn_if_one_cluster(self, "lower tau")
        _warn_if_fragments(self, "raise min_size or tau")
        _warn_if_chance_isolations(self, X.shape[0], res)
        _warn_if_chained(self)
        _warn_if_one_feature_dominates(self, X)
        return self


class GMDID(ClusterMixin, BaseEstimator):
    r"""GMDID: a Gaussian mixture with many components, merged by their increments.

    Learns a full-covariance mixture by Figueiredo & Jain's algorithm (:func:`~bayesclust.gmd`,
    from ``k_max`` components down to ``n_clusters_min``), takes each component's points as a
    cluster and merges clusters whose increments are explained by one 2-DID
    (:func:`bayesclust.inference.increments.gmdid.gmdid`; Aidos & Fred 2012).

    Parameters
    ----------
    criterion : {"mdl", "lrt"}, default "mdl"
    alpha : float in (0, 1) or "auto", default "auto"
        Significance level of ``"lrt"``; ``"auto"`` tries 1, 5, 10 and 15 % and keeps the
        partition of smallest G-DID (:func:`~bayesclust.gdid_index`).
    lrt_rule : {"paper", "paper_literal"}, default "paper"
    k_max : int, default 30
        Components the mixture starts from (at most ``n_samples - 1``).
    n_clusters_min : int, default 1
        A lower bound on the number of clusters (a known number of classes).
    init : {"random", "kmeans"}, default "random"
        GMD's start: random data points, or k-means centres plus random points.
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    initial_labels_ : ndarray of shape (n_samples,)
        The mixture's partition (MAP component of each point).
    n_components_ : int
        Components of the learnt mixture.
    alpha_ : float or None
        The level used (``"lrt"`` only).

    Notes
    -----
    The default ``n_clusters_min=1`` leaves the number of clusters to the merges, which
    Aidos & Fred (2012, Table 3) never do: they give the known number of classes as
    the lower bound.  The test compares the increments of two clusters with those of
    their union, which differ only by the few increments bridging them, so components of
    overlapping classes merge; on wine, MASS biopsy and crabs (and standardised wine,
    where the mixture itself has one component) the default ends with one cluster and
    warns (:class:`bayesclust.SingleClusterWarning`, naming ``n_clusters_min``).  A fit
    that merges the mixture's components into half as many clusters or fewer (digits
    reduced to 10 principal components: 11 components, 3 clusters) warns too, as the
    merges then override the mixture's own choice of components.  There is no default
    in the paper to take instead, so none is made up here.

    Examples
    --------
    >>> from bayesclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> est = GMDID(k_max=20, n_clusters_min=3, random_state=0).fit(X)
    >>> est.n_components_ >= est.n_clusters_ >= 3  # merged down to the known number of classes
    True
    """

    _parameter_constraints: dict = {
        "criterion": [StrOptions({"mdl", "lrt"})],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "lrt_rule": [StrOptions({"paper", "paper_literal"})],
        "k_max": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_clusters_min": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "kmeans"})],
        "random_state": ["random_state"],
    }

    def __init__(self, criterion="mdl", alpha="auto", lrt_rule="paper", k_max=30, n_clusters_min=1,
                 init="random", random_state=None):
        self.criterion = criterion
        self.alpha = alpha
        self.lrt_rule = lrt_rule
        self.k_max = k_max
        self.n_clusters_min = n_clusters_min
        self.init = init
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None

        Returns
        -------
        self
        """
        from ..inference.increments.gmd import gmd
        from ..inference.increments.gmdid import gmdid

        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=3)
        n = X.shape[0]
        k_max = min(self.k_max, n - 1)
        k_min = min(self.n_clusters_min, k_max)
        mix = gmd(_key_from_random_state(self.random_state), X, k_min, k_max, init=self.init)
        start = np.asarray(mix.labels)
        if self.criterion == "mdl":
            res, self.alpha_ = gmdid(X, start, n_clusters_min=self.n_clusters_min), None
        elif self.alpha != "auto":
            res = gmdid(X, start, criterion="lrt", alpha=self.alpha, lrt_rule=self.lrt_rule,
                        n_clusters_min=self.n_clusters_min)
            self.alpha_ = float(self.alpha)
        else:
            runs = [gmdid(X, start, criterion="lrt", alpha=a, lrt_rule=self.lrt_rule,
                          n_clusters_min=self.n_clusters_min) for a in LRT_ALPHAS]
            best, _ = _least_gdid(X, runs)
            res, self.alpha_ = runs[best], LRT_ALPHAS[best]
        self.labels_ = res.labels
        self.n_clusters_ = res.n_clusters
        self.initial_labels_ = start
        self.n_components_ = int(mix.n_components)
        if self.n_clusters_min == 1 and 1 < self.n_clusters_ and 2 * self.n_clusters_ <= self.n_components_:
            warnings.warn(
                f"GMDID merged the mixture's {self.n_components_} components into "
                f"{self.n_clusters_} clusters: the increments' test merges components that no gap "
                "separates, overriding the mixture's own choice; Aidos & Fred (2012) give the "
                "number of classes as n_clusters_min, set it if you know it", UserWarning, stacklevel=2)
        _warn_if_one_cluster(
            self, f"raise n_clusters_min (the mixture had {self.n_components_} components; the "
            "increments' test merges components that no gap separates, and Aidos & Fred 2012 "
            "give the number of classes as this lower bound)")
        return self


class MAPDIDClassifier(ClassifierMixin, BaseEstimator):
    r"""MAP-DID: class-conditional Gaussian mixtures plus each class's increments law.

    A point goes to the class of largest :math:`\log\pi_c + \log p(x\mid c) +
    \log p_{DID}(w_c(x);\lambda_c)`, :math:`w_c(x)` its increment against the class's
    training points (:func:`bayesclust.inference.increments.map_did.map_did_fit`; the joint model is the
    NumPyro program :func:`bayesclust.models.did.map_did`).

    Parameters
    ----------
    k_max : int, default 10
        Components each class's mixture starts from.
    init : {"random", "kmeans"}, default "random"
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    model_ : MAPDIDModel
    n_components_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 4])
    >>> y = np.repeat([0, 1], 40)
    >>> MAPDIDClassifier(k_max=3, random_state=0).fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        "k_max": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "kmeans"})],
        "random_state": ["random_state"],
    }

    def __init__(self, k_max=10, init="random", random_state=None):
        self.k_max = k_max
        self.init = init
        self.random_state = random_state

    def fit(self, X, y):
        """Fit one mixture and one increments law per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        from sklearn.utils.multiclass import check_classification_targets

        from ..inference.increments.map_did import map_did_fit

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_min_samples=3)
        check_classification_targets(y)
        self.model_ = map_did_fit(_key_from_random_state(self.random_state), X, y,
                                  k_max=self.k_max, init=self.init)
        self.classes_ = self.model_.classes
        self.n_components_ = self.model_.n_components
        return self

    def predict_log_proba(self, X):
        """Log posterior class probabilities, shape (n_samples, n_classes)."""
        from scipy.special import logsumexp
        from sklearn.utils.validation import check_is_fitted

        from ..inference.increments.map_did import map_did_log_scores

        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        s = map_did_log_scores(self.model_, X)
        return s - logsumexp(s, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Posterior class probabilities, shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of largest posterior probability, shape (n_samples,)."""
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]
