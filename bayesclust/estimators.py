"""scikit-learn estimators wrapping the functional core.

This is the only module of bayesclust that imports scikit-learn.  Each
estimator follows the scikit-learn contract (``fit`` / ``predict`` /
``fit_predict``, parameters stored verbatim in ``__init__``, learned attributes
with a trailing underscore, ``validate_data``) and delegates the numerics to a
function of the functional core, e.g. :func:`bayesclust.dp_means`.
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .inference.dp_means import dp_means, farthest_first_lambda
from .kernels import nearest_center

__all__ = ["DPMeans", "DPGaussianMixture", "HardHDP", "HDPGaussianMixture", "DiscriminativeClustering",
           "SpectralDPMeans", "PenalizedNormalizedCut"]  # issue 8


def _key_from_random_state(random_state) -> jax.Array:
    """Turn a scikit-learn ``random_state`` into a JAX PRNG key."""
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return jax.random.PRNGKey(seed)


def _lam_from_hint(X, n_clusters_hint: int) -> float:
    """DP-means penalty by farthest-first for ``n_clusters_hint`` clusters (capped at n)."""
    lam = farthest_first_lambda(X, min(n_clusters_hint, X.shape[0]))
    # Fewer distinct points than the hint: a tiny penalty separates every distinct point.
    return lam if lam > 0 else float(np.finfo(np.float32).tiny)


def _nearest_labels(X, centers) -> np.ndarray:
    """Index of the nearest centre of every row (the hard limits' ``predict``)."""
    return np.asarray(nearest_center(jnp.asarray(X), jnp.asarray(centers)).index).astype(np.intp)


class DPMeans(ClusterMixin, BaseEstimator):
    r"""DP-means clustering: k-means with a penalty per cluster instead of a fixed k.

    The small-variance limit of the Dirichlet-process Gaussian mixture's Gibbs
    sampler (Kulis & Jordan 2012).  Minimises
    :math:`\sum_i w_i \|x_i - \mu_{z_i}\|^2 + \lambda k` over partitions and
    the number of clusters :math:`k`.  See :func:`bayesclust.dp_means`.

    Parameters
    ----------
    lam : float or None, default None
        Penalty per cluster (a squared distance, > 0).  ``None`` chooses it by
        the farthest-first heuristic (Kulis & Jordan §6.1) for
        ``n_clusters_hint`` clusters.
    n_clusters_hint : int, default 8
        Desired number of clusters when ``lam`` is None (capped at the number
        of samples).  The fitted number of clusters ``n_clusters_`` may differ.
    max_iter : int, default 100
        Maximum number of iterations.
    max_clusters : int or None, default None
        Upper bound on the number of clusters (see :func:`bayesclust.dp_means`).
    shuffle : bool, default False
        Process the points in a random order (drawn from ``random_state``)
        instead of the given order.  DP-means depends on the order.
    random_state : int, RandomState instance or None, default None
        Seeds the order when ``shuffle=True``.
    mesh : jax.sharding.Mesh or None, default None
        Fit sharded over the devices of this one-axis mesh (the rows are split
        over its data axis); the result equals the single-device fit.  See
        :func:`bayesclust.dp_means`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    n_clusters_ : int
    lam_ : float
        The penalty used (given or from farthest-first).
    objective_ : float
        Final value of the DP-means objective.
    objective_trace_ : ndarray of shape (n_iter_ + 1,)
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    Notes
    -----
    ``sample_weight`` is not equivalent to repeating samples: a point of weight
    ``w`` opens a cluster when ``w * d > lam`` (which keeps the weighted
    objective monotone), and repeated rows open one when ``d > lam``.  The
    corresponding scikit-learn checks are expected to fail, as for ``KMeans``.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import DPMeans
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.2], [5.0, 5.0], [5.1, 5.0]])
    >>> DPMeans(lam=1.0).fit(X).labels_.tolist()
    [0, 0, 0, 1, 1]
    >>> DPMeans(n_clusters_hint=2).fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "lam": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_clusters_hint": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(
        self,
        lam=None,
        *,
        n_clusters_hint=8,
        max_iter=100,
        max_clusters=None,
        shuffle=False,
        random_state=None,
        mesh=None,
    ):
        self.lam = lam
        self.n_clusters_hint = n_clusters_hint
        self.max_iter = max_iter
        self.max_clusters = max_clusters
        self.shuffle = shuffle
        self.random_state = random_state
        self.mesh = mesh

    def fit(self, X, y=None, sample_weight=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights.

        Returns
        -------
        self
        """
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        sample_weight = _check_sample_weight(sample_weight, X, dtype=X.dtype, ensure_non_negative=True)
        if self.lam is None:
            lam = _lam_from_hint(X, self.n_clusters_hint)
        else:
            lam = float(self.lam)
        order = None
        if self.shuffle:
            order = np.asarray(jax.random.permutation(_key_from_random_state(self.random_state), X.shape[0]))
        res = dp_means(
            X, lam, sample_weight=sample_weight, max_iter=self.max_iter,
            max_clusters=self.max_clusters, order=order, mesh=self.mesh,
        )
        self.labels_ = res.labels.astype(np.intp)
        self.cluster_centers_ = res.centers
        self.n_clusters_ = res.n_clusters
        self.lam_ = lam
        self.objective_ = res.objective
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        return self

    def predict(self, X):
        """Index of the nearest learned centre of every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return _nearest_labels(X, self.cluster_centers_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class _PointPartitionPredictive:
    r"""``labels_``, ``cluster_centers_``, ``predict_proba`` and ``predict`` of a sampled
    estimator, from its posterior point partition (shared by the DP and HDP mixtures).

    For new points: the posterior predictive probability of joining each cluster of
    the point partition (no new-cluster column), :math:`p(c | x) \propto n_c N(x | m_c,
    (\sigma^2 + s_c^2) I)` with :math:`m_c, s_c^2` the posterior mean and variance of
    :math:`\mu_c` given its members and the posterior mean of :math:`\sigma^2`.
    """

    def _set_point_partition(self, X, labels, post):
        labels = np.unique(np.asarray(labels), return_inverse=True)[1].reshape(-1)
        self.labels_ = labels.astype(np.intp)
        self.n_clusters_ = int(labels.max()) + 1
        self._offset = X.mean(0)
        self._counts = np.bincount(labels, minlength=self.n_clusters_).astype(float)
        sums = np.zeros((self.n_clusters_, X.shape[1]))
        np.add.at(sums, labels, X - self._offset)
        self._sigma2_mean = float(np.mean(post.params["sigma2"]))
        self._mean_var = 1.0 / (1.0 / self.rho2 + self._counts / self._sigma2_mean)
        self._mean_centred = self._mean_var[:, None] * sums / self._sigma2_mean
        self.cluster_centers_ = self._mean_centred + self._offset

    def predict_proba(self, X):
        """Posterior predictive probability of each point-partition cluster, shape (n, n_clusters_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        from scipy.special import logsumexp

        var = self._sigma2_mean + self._mean_var
        d = X.shape[1]
        sq = ((X - self._offset)[:, None, :] - self._mean_centred[None]) ** 2
        logp = np.log(self._counts)[None] - 0.5 * d * np.log(2 * np.pi * var)[None] - sq.sum(-1) / (2 * var)[None]
        return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))

    def predict(self, X):
        """Most probable point-partition cluster of each row of ``X``."""
        return np.argmax(self.predict_proba(X), axis=1).astype(np.intp)


class DPGaussianMixture(_PointPartitionPredictive, ClusterMixin, BaseEstimator):
    r"""Dirichlet-process Gaussian mixture fitted by sampling its posterior.

    The model of Kulis & Jordan (2012, §2.2): a DP(alpha) prior over
    partitions, means :math:`\mu_c \sim N(0, \rho^2 I)` (data centred),
    isotropic components :math:`N(\mu_c, \sigma^2 I)`.  ``fit`` runs a Gibbs
    sampler (see :func:`bayesclust.gibbs_dp_gmm`); ``labels_`` is the posterior
    point partition minimising the posterior expected VI (or Binder) loss, so it is free
    of label switching.  Its small-variance limit is :class:`DPMeans`.

    Parameters
    ----------
    alpha : float, default 1.0
        DP concentration (initial value when ``alpha_prior`` is given).
    sigma2 : float, default 1.0
        Component **variance** (initial value when ``sigma2_prior`` is given).
    rho2 : float, default 100.0
        Prior **variance** of the means (Kulis & Jordan use 100).
    alpha_prior, sigma2_prior : (a, b) or None
        ``alpha ~ Gamma(a, b)`` and ``sigma2 ~ InvGamma(a, b)`` priors.
    sampler : {"collapsed", "kj"}, default "collapsed"
        Means integrated out (Neal's Algorithm 3), or Kulis & Jordan's
        Algorithm 2 (explicit means; its limit is DP-means).
    num_warmup, num_samples, num_chains : int
    loss : {"vi", "binder"}, default "vi"
        Loss of the point partition (Binder's loss tends to split off
        singletons; Wade & Ghahramani 2018).
    progress_bar : bool, default False
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Posterior point partition (clusters ``0..n_clusters_-1``).
    n_clusters_ : int
    posterior_ : Posterior
        All draws: label draws, k draws, co-clustering, diagnostics, ArviZ.
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        Posterior means of the point partition's cluster means.
    n_features_in_ : int

    Notes
    -----
    ``predict_proba`` gives, for new points, the posterior predictive
    probability of joining each cluster of the point partition (no new-cluster
    column): :math:`p(c | x) \propto n_c N(x | m_c, (\sigma^2 + s_c^2) I)` with
    :math:`m_c, s_c^2` the posterior mean and variance of :math:`\mu_c` given
    its members and the posterior mean of :math:`\sigma^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import DPGaussianMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    >>> DPGaussianMixture(sigma2=0.1, num_warmup=50, num_samples=50, random_state=0).fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma2": [Interval(numbers.Real, 0, None, closed="neither")],
        "rho2": [Interval(numbers.Real, 0, None, closed="neither")],
        "alpha_prior": [tuple, None],
        "sigma2_prior": [tuple, None],
        "sampler": [StrOptions({"collapsed", "kj"})],
        "num_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "num_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "num_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "loss": [StrOptions({"binder", "vi"})],
        "progress_bar": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        alpha=1.0,
        sigma2=1.0,
        rho2=100.0,
        *,
        alpha_prior=None,
        sigma2_prior=None,
        sampler="collapsed",
        num_warmup=200,
        num_samples=200,
        num_chains=1,
        loss="vi",
        progress_bar=False,
        random_state=None,
    ):
        self.alpha = alpha
        self.sigma2 = sigma2
        self.rho2 = rho2
        self.alpha_prior = alpha_prior
        self.sigma2_prior = sigma2_prior
        self.sampler = sampler
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.loss = loss
        self.progress_bar = progress_bar
        self.random_state = random_state

    def fit(self, X, y=None):
        """Sample the posterior of the DP mixture given ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        from .inference.gibbs import gibbs_dp_gmm

        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        post = gibbs_dp_gmm(
            _key_from_random_state(self.random_state), X,
            alpha=self.alpha, sigma2=self.sigma2, rho2=self.rho2,
            alpha_prior=self.alpha_prior, sigma2_prior=self.sigma2_prior,
            collapsed=self.sampler == "collapsed", num_warmup=self.num_warmup,
            num_samples=self.num_samples, num_chains=self.num_chains,
            progress_bar=self.progress_bar,
        )
        self.posterior_ = post
        self._set_point_partition(X, post.point_estimate(self.loss), post)
        return self


class HardHDP(ClusterMixin, BaseEstimator):
    r"""Hard Gaussian HDP: DP-means for several data sets sharing clusters.

    The small-variance limit of the hierarchical-DP Gaussian mixture
    (Kulis & Jordan 2012, Algorithm 2).  Minimises
    :math:`\sum_j \sum_i \|x_{ij} - \mu_{z_{ij}}\|^2 + \lambda_\ell \cdot
    \#\text{local clusters} + \lambda_g \cdot \#\text{global clusters}`;
    every data set has its own local clusters, each mapped to one global
    cluster whose mean is shared by all data sets.  See
    :func:`bayesclust.hard_hdp`.

    Parameters
    ----------
    lam_local, lam_global : float or None, default None
        Penalties (squared distances, > 0).  When either is None both come from
        :func:`bayesclust.inference.hard_hdp.hard_hdp_penalties` for
        ``n_local_hint`` local clusters per data set and ``n_global_hint``
        global clusters; a given value overrides its half.  With a single data
        set each is half the farthest-first DP-means penalty for
        ``n_global_hint`` clusters.
    n_local_hint : int, default 3
    n_global_hint : int, default 8
    max_iter : int, default 100
    mesh : jax.sharding.Mesh or None, default None
        Fit sharded over the devices of this one-axis mesh (rows split over
        its data axis); the result equals the single-device fit.  See
        :func:`bayesclust.hard_hdp`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Global cluster of every row (input order).
    local_labels_ : ndarray of shape (n_samples,)
        Local cluster of every row, numbered within its data set.
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        Global means.
    n_clusters_ : int
        Number of global clusters.
    n_local_ : ndarray of shape (n_groups,)
        Number of local clusters of every data set.
    group_ids_ : ndarray of shape (n_groups,)
        The data set identifiers, in the order of ``n_local_``.
    lam_local_, lam_global_ : float
    objective_ : float
    objective_trace_ : ndarray
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    Notes
    -----
    ``fit(X, groups=g)`` takes the data set of every row as an integer vector
    ``g``; without ``groups`` all rows form one data set, and the model is
    DP-means with penalty ``lam_local + lam_global`` per cluster.  This is the
    form in which the scikit-learn estimator checks run (they cannot pass a
    grouping); grouped behaviour is tested against a per-point loop of
    Algorithm 2 in ``tests/test_hard_hdp.py``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import HardHDP
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [0.0, 0.1], [5.1, 5.0]])
    >>> HardHDP(lam_local=1.0, lam_global=1.0).fit(X, groups=[0, 0, 0, 1, 1]).labels_.tolist()
    [0, 0, 1, 0, 1]
    """

    _parameter_constraints: dict = {
        "lam_local": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lam_global": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_local_hint": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_global_hint": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(self, lam_local=None, lam_global=None, *, n_local_hint=3, n_global_hint=8,
                 max_iter=100, mesh=None):
        self.lam_local = lam_local
        self.lam_global = lam_global
        self.n_local_hint = n_local_hint
        self.n_global_hint = n_global_hint
        self.max_iter = max_iter
        self.mesh = mesh

    def fit(self, X, y=None, groups=None):
        """Cluster the rows of ``X``, grouped into data sets by ``groups``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        groups : array-like of int, shape (n_samples,), optional
            Data set of every row (any integer ids).  Default: one data set.

        Returns
        -------
        self
        """
        from .inference.hard_hdp import hard_hdp, hard_hdp_penalties

        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        if groups is None:
            groups = np.zeros(X.shape[0], np.int64)
        groups = np.asarray(groups)
        if self.lam_local is None or self.lam_global is None:
            lam_l, lam_g = self._penalties(X, groups, hard_hdp_penalties)
        lam_l = lam_l if self.lam_local is None else float(self.lam_local)
        lam_g = lam_g if self.lam_global is None else float(self.lam_global)
        res = hard_hdp(X, lam_l, lam_g, group_ids=groups, max_iter=self.max_iter,
                       mesh=self.mesh)
        self.labels_ = np.asarray(res.flat_labels).astype(np.intp)
        # local labels back to input row order (res.local_labels follow group_order)
        ids = np.asarray(groups)
        local = np.empty(X.shape[0], np.intp)
        for j, gid in enumerate(res.group_order):
            local[ids == gid] = res.local_labels[j]
        self.local_labels_ = local
        self.cluster_centers_ = np.asarray(res.centers)
        self.n_clusters_ = int(res.n_global)
        self.n_local_ = np.asarray(res.n_local)
        self.group_ids_ = np.asarray(res.group_order)
        self.lam_local_, self.lam_global_ = float(lam_l), float(lam_g)
        self.objective_ = float(res.objective)
        self.objective_trace_ = np.asarray(res.objective_trace)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        return self

    def _penalties(self, X, groups, hard_hdp_penalties):
        if len(np.unique(groups)) == 1:
            # One data set: DP-means with penalty lam_local + lam_global, split evenly.
            lam = _lam_from_hint(X, self.n_global_hint)
            return lam / 2, lam / 2
        try:
            return hard_hdp_penalties(X, self.n_local_hint, self.n_global_hint, group_ids=groups)
        except ValueError as err:
            raise ValueError(f"cannot choose penalties from n_local_hint={self.n_local_hint}, "
                             f"n_global_hint={self.n_global_hint}: {err}") from None

    def fit_predict(self, X, y=None, groups=None):
        """Fit and return ``labels_`` (the global cluster of every row)."""
        return self.fit(X, groups=groups).labels_

    def predict(self, X):
        """Nearest global mean of every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return _nearest_labels(X, self.cluster_centers_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class HDPGaussianMixture(_PointPartitionPredictive, ClusterMixin, BaseEstimator):
    r"""Hierarchical-DP Gaussian mixture of grouped data, fitted by sampling its posterior.

    Several data sets share global clusters (Teh et al. 2006; Kulis & Jordan
    2012, §4): global means :math:`\mu_p \sim N(0, \rho^2 I)`, local clusters
    of each data set by CRP(:math:`\alpha`), each mapped to a global cluster
    by CRP(:math:`\gamma`), :math:`x \sim N(\mu_p, \sigma^2 I)`.  ``fit``
    runs the Chinese-restaurant-franchise Gibbs sampler
    (:func:`bayesclust.inference.hdp_gibbs.gibbs_hdp_gmm`); ``labels_`` is the
    posterior point partition of the global clusters (VI or Binder loss), free
    of label switching.  Its small-variance limit is :class:`HardHDP`.

    Parameters
    ----------
    alpha, gamma : float, default 1.0
        Local and global concentrations (initial values when their priors are given).
    sigma2 : float, default 1.0
        Component **variance** (initial value when ``sigma2_prior`` is given).
    rho2 : float, default 100.0
        Prior **variance** of the global means.
    alpha_prior, gamma_prior, sigma2_prior : (a, b) or None
        Gamma(a, b) priors on the concentrations, InvGamma(a, b) on ``sigma2``.
    num_warmup, num_samples, num_chains : int
    loss : {"vi", "binder"}, default "vi"
    progress_bar : bool, default False
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Posterior point partition of the global clusters, every row in input order.
    local_labels_ : ndarray of shape (n_samples,)
        Posterior point partition of each data set's local clusters (numbered
        within the data set).
    n_clusters_ : int
        Global clusters of ``labels_``.
    n_local_ : ndarray of shape (n_groups,)
        Local clusters of ``local_labels_`` in every data set.
    group_ids_ : ndarray of shape (n_groups,)
        The data set identifiers, in the order of ``n_local_``.
    posterior_ : Posterior
        All draws (global labels; ``params["local_labels"]``; ``labels_by_group()``).
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        Posterior means of the global clusters' means.
    n_features_in_ : int

    Notes
    -----
    ``fit(X, groups=g)`` takes the data set of every row as an integer vector;
    without ``groups`` all rows form one data set (an HDP with one data set is a
    DP mixture whose clusters are groups of CRP tables).  That one-group form is
    the one the scikit-learn checks exercise (they cannot pass a grouping); the
    grouped sampler is tested against exact enumeration in
    ``tests/test_hdp_gibbs.py``.  ``predict`` ignores data sets: it uses the
    pooled cluster sizes (see ``predict_proba``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import HDPGaussianMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    >>> groups = np.repeat([0, 1], 20)
    >>> est = HDPGaussianMixture(sigma2=0.1, num_warmup=50, num_samples=50, random_state=0)
    >>> est.fit(X, groups=groups).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma2": [Interval(numbers.Real, 0, None, closed="neither")],
        "rho2": [Interval(numbers.Real, 0, None, closed="neither")],
        "alpha_prior": [tuple, None],
        "gamma_prior": [tuple, None],
        "sigma2_prior": [tuple, None],
        "num_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "num_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "num_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "loss": [StrOptions({"binder", "vi"})],
        "progress_bar": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        alpha=1.0,
        gamma=1.0,
        sigma2=1.0,
        rho2=100.0,
        *,
        alpha_prior=None,
        gamma_prior=None,
        sigma2_prior=None,
        num_warmup=200,
        num_samples=200,
        num_chains=1,
        loss="vi",
        progress_bar=False,
        random_state=None,
    ):
        self.alpha = alpha
        self.gamma = gamma
        self.sigma2 = sigma2
        self.rho2 = rho2
        self.alpha_prior = alpha_prior
        self.gamma_prior = gamma_prior
        self.sigma2_prior = sigma2_prior
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.loss = loss
        self.progress_bar = progress_bar
        self.random_state = random_state

    def fit(self, X, y=None, groups=None):
        """Sample the posterior of the HDP mixture given ``X`` grouped by ``groups``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        groups : array-like of int, shape (n_samples,), optional
            Data set of every row (any integer ids).  Default: one data set.

        Returns
        -------
        self
        """
        from .inference.hdp_gibbs import gibbs_hdp_gmm

        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        groups = np.zeros(X.shape[0], np.int64) if groups is None else groups
        post = gibbs_hdp_gmm(
            _key_from_random_state(self.random_state), X, group_ids=groups,
            alpha=self.alpha, gamma=self.gamma, sigma2=self.sigma2, rho2=self.rho2,
            alpha_prior=self.alpha_prior, gamma_prior=self.gamma_prior,
            sigma2_prior=self.sigma2_prior, num_warmup=self.num_warmup,
            num_samples=self.num_samples, num_chains=self.num_chains,
            progress_bar=self.progress_bar,
        )
        self.posterior_ = post
        self._set_point_partition(X, post.point_estimate(self.loss), post)
        from .inference.posterior import Posterior

        local = np.empty(X.shape[0], np.intp)
        n_local = []
        for j, draws in enumerate(post.labels_by_group(post.params["local_labels"])):
            point = Posterior(draws).point_estimate(self.loss)
            local[post.group_ids == j] = np.unique(point, return_inverse=True)[1].reshape(-1)
            n_local.append(int(point.max()) + 1 if point.size else 0)
        self.local_labels_ = local
        self.n_local_ = np.asarray(n_local)
        self.group_ids_ = np.asarray(post.group_order)
        return self

    def fit_predict(self, X, y=None, groups=None):
        """Fit and return ``labels_`` (the global cluster of every row)."""
        return self.fit(X, groups=groups).labels_


class DiscriminativeClustering(ClusterMixin, BaseEstimator):
    r"""Discriminative clustering: Voronoi regions of ``X`` informative of auxiliary classes ``y``.

    Kaski, Sinkkonen & Klami (2005): prototypes :math:`m_1..m_K` maximise the
    Dirichlet-marginalised log posterior :math:`\sum_{ij} \log\Gamma(n^0_i + n_{ji}) -
    (1 + \lambda_{EQ}) \sum_j \log\Gamma(N^0 + N_j)` of the Voronoi contingency table
    (optionally regularised towards a mixture of Gaussians or k-means), found by
    conjugate gradients on the objective smoothed with width ``smooth_std``
    (:func:`bayesclust.inference.discriminative.dc_map`).  New points are
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
        The prototypes.
    labels_ : ndarray of shape (n_samples,)
        Voronoi cell of every training point.
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
        from .inference.discriminative import dc_map

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.n_clusters > X.shape[0]:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={X.shape[0]}")
        res = dc_map(_key_from_random_state(self.random_state), X, codes, self.n_clusters,
                     self.smooth_std, init=self.init, n_classes=len(self.classes_), n0=self.n0,
                     lam_eq=self.lam_eq, lam_mog=self.lam_mog, lam_vq=self.lam_vq,
                     max_iter=self.max_iter)
        self.cluster_centers_ = np.asarray(res.prototypes)
        self.labels_ = np.asarray(res.labels).astype(np.intp)
        self.log_posterior_ = float(res.log_posterior)
        self.n_iter_ = int(res.n_iter)
        return self

    def predict(self, X):
        """Voronoi cell (nearest prototype) of every row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return _nearest_labels(X, self.cluster_centers_)

    def score(self, X, y):
        """Exact DC log posterior of the Voronoi cells of ``X`` given classes ``y`` (higher is better)."""
        from .metrics import dc_log_posterior

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


# --- issue 10: CEC-IB (semi-supervised cross-entropy clustering) -------------------------------


class CECIB(ClusterMixin, BaseEstimator):
    r"""Semi-supervised cross-entropy clustering with an information-bottleneck constraint.

    Śmieja & Geiger (2017): Gaussian clusters that trade off model accuracy
    (cross-entropy), model simplicity (the cluster-size entropy removes
    superfluous clusters, so ``n_clusters`` is only the starting number) and
    consistency with partial labels (``beta`` times each cluster's label
    entropy).  See :func:`bayesclust.cecib.cecib` for the optimiser and
    :func:`bayesclust.cecib.cecib_cost` for the cost.  ``beta = 0`` or no labels
    is plain CEC.

    Parameters
    ----------
    n_clusters : int, default 10
        Starting number of clusters ([C]: twice the number of classes; 10 in its
        case studies).  The fitted number ``n_clusters_`` is usually smaller.
    beta : float, default 1.0
        Weight of the label term (>= 0): 1 for trusted labels,
        :func:`bayesclust.cecib.beta_0` (~0.27) for possibly wrong labels.
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
    means_ : ndarray of shape (n_clusters_, n_features)
    covariances_ : ndarray of shape (n_clusters_, n_features, n_features)
    weights_ : ndarray of shape (n_clusters_,)
    classes_ : ndarray of shape (n_classes,)
        The label categories.
    label_counts_ : ndarray of shape (n_clusters_, n_classes)
        Labelled members of each cluster per category.
    cost_ : float
        :math:`E_\beta` of the fitted partition (nats).
    cost_trace_ : ndarray
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

    def __init__(self, n_clusters=10, *, beta=1.0, eps=0.05, covariance_type="full",
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
        from . import _validation as V
        from .cecib import cecib

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
        self.means_ = res.means
        self.covariances_ = res.covariances
        self.weights_ = res.weights
        self.classes_ = classes
        self.label_counts_ = res.label_counts
        self.cost_ = res.cost
        self.cost_trace_ = res.cost_trace
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        return self

    def _log_density(self, X):
        from .cecib import cecib_log_density

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


__all__ += ["CECIB"]  # issue 10


# --------------------------------------------------------------------------- #
# Issue 8: spectral DP-means and the penalised normalised cut
# --------------------------------------------------------------------------- #

from .inference.spectral import penalized_ncut, spectral_dp_means  # noqa: E402
from .kernels import knn_gaussian_affinity  # noqa: E402


def _affinity_matrix(est, X, affinity):
    """Validate ``X`` and build the affinity / kernel matrix of ``est``."""
    if affinity == "precomputed":
        A = validate_data(est, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64)
        if A.shape[0] != A.shape[1]:
            raise ValueError(
                f"X must be a square (n, n) affinity matrix with affinity='precomputed', got shape {A.shape}"
            )
        return A
    X = validate_data(est, X, dtype=[np.float64, np.float32])
    if affinity == "nearest_neighbors":
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]} is too few for a nearest-neighbour graph")
        return knn_gaussian_affinity(X, min(est.n_neighbors, X.shape[0] - 1), gamma=est.gamma)
    from sklearn.metrics.pairwise import rbf_kernel

    if affinity == "rbf":
        return rbf_kernel(X, gamma=1.0 if est.gamma is None else est.gamma)
    Xd = np.asarray(X, np.float64)
    return Xd @ Xd.T  # linear


class SpectralDPMeans(ClusterMixin, BaseEstimator):
    r"""Spectral DP-means: cluster with all kernel eigenvectors whose eigenvalue exceeds ``lam``.

    The spectral relaxation of the kernel DP-means objective
    :math:`\mathrm{tr}(K) - \mathrm{tr}(Y^\top (K - \lambda I) Y)` (Kulis &
    Jordan 2012, §5.1): the relaxed indicator matrix stacks the eigenvectors
    of :math:`K` with eigenvalue :math:`> \lambda`, so the threshold chooses
    the number of clusters; their rows are clustered by k-means.  See
    :func:`bayesclust.inference.spectral.spectral_dp_means`.

    Parameters
    ----------
    lam : float, default 1.0
        Eigenvalue threshold (the DP-means penalty in kernel units).
    affinity : {"rbf", "nearest_neighbors", "linear", "precomputed"}, default "rbf"
        The kernel: ``exp(-gamma |x - y|^2)``; a sparse k-NN Gaussian graph
        (:func:`bayesclust.kernels.knn_gaussian_affinity`); ``X X^T``; or ``X``
        itself is the (n, n) kernel / affinity matrix (dense or sparse).
    gamma : float or None, default None
        RBF inverse bandwidth (None: 1.0); for the k-NN graph None means local scaling.
    n_neighbors : int, default 10
    normalize_rows : bool, default False
        Unit-normalise the embedding rows before k-means.
    max_clusters : int or None, default None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    eigenvalues_ : ndarray
        Eigenvalues above ``lam``, decreasing.
    embedding_ : ndarray of shape (n_samples, n_eigenvalues)
    relaxed_value_ : float
        :math:`\sum_i (e_i - \lambda)_+`.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> K = np.kron(np.eye(3), np.ones((4, 4)))
    >>> SpectralDPMeans(lam=2.0, affinity="precomputed").fit(K).n_clusters_
    3
    """

    _parameter_constraints: dict = {
        "lam": [Interval(numbers.Real, None, None, closed="neither")],
        "affinity": [StrOptions({"rbf", "nearest_neighbors", "linear", "precomputed"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "normalize_rows": ["boolean"],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, lam=1.0, *, affinity="rbf", gamma=None, n_neighbors=10,
                 normalize_rows=False, max_clusters=None):
        self.lam = lam
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.normalize_rows = normalize_rows
        self.max_clusters = max_clusters

    def fit(self, X, y=None):
        """Cluster the rows of ``X`` (or the nodes of the affinity ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            with ``affinity="precomputed"``.
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        K = _affinity_matrix(self, X, self.affinity)
        res = spectral_dp_means(K, float(self.lam), normalize_rows=self.normalize_rows,
                                max_clusters=self.max_clusters)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.eigenvalues_ = res.eigenvalues
        self.embedding_ = res.embedding
        self.relaxed_value_ = res.relaxed_value
        return self


class PenalizedNormalizedCut(ClusterMixin, BaseEstimator):
    r"""Penalised normalised cut: graph clustering that chooses the number of clusters.

    Minimises :math:`\mathrm{Cut}(A) + \lambda' k` by weighted kernel DP-means
    on :math:`K = \sigma D^{-1} + D^{-1} A D^{-1}`, :math:`W = D` (Kulis &
    Jordan 2012, §5.2, Thm 5.3), from the spectral start of the same
    objective, with greedy cluster merges.  See
    :func:`bayesclust.inference.spectral.penalized_ncut`.

    Parameters
    ----------
    lam_prime : float, default -0.01
        Penalty per cluster on the Cut scale; useful values lie in ``(-1, 0)``
        (more negative: more clusters).  On k-NN graphs of a few hundred
        points cuts are small, so values near -0.01 are typical; on dense
        community graphs (stochastic block models) values near -0.5.
    affinity : {"nearest_neighbors", "rbf", "precomputed"}, default "nearest_neighbors"
        A sparse k-NN Gaussian graph of ``X``
        (:func:`bayesclust.kernels.knn_gaussian_affinity`), a dense RBF
        graph, or ``X`` is the (n, n) adjacency (dense or sparse).
    n_neighbors : int, default 10
    gamma : float or None, default None
        Gaussian inverse bandwidth (k-NN: None = local scaling; RBF: None = 1.0).
    sigma : float or "psd", default "psd"
        Diagonal shift of the kernel (see ``penalized_ncut``).
    merge : bool, default True
    max_iter : int, default 100
    max_clusters : int or None, default None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    cut_ : float
    objective_ : float
        :math:`\mathrm{Cut}(A) + \lambda' k`.
    objective_trace_ : ndarray
    n_iter_ : int
    affinity_matrix_ : scipy.sparse matrix or ndarray, shape (n_samples, n_samples)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> PenalizedNormalizedCut(lam_prime=-0.5, affinity="precomputed").fit(A).labels_.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """

    _parameter_constraints: dict = {
        "lam_prime": [Interval(numbers.Real, None, None, closed="neither")],
        "affinity": [StrOptions({"nearest_neighbors", "rbf", "precomputed"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "sigma": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"psd"})],
        "merge": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
    }

    def __init__(self, lam_prime=-0.01, *, affinity="nearest_neighbors", n_neighbors=10,
                 gamma=None, sigma="psd", merge=True, max_iter=100, max_clusters=None):
        self.lam_prime = lam_prime
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.sigma = sigma
        self.merge = merge
        self.max_iter = max_iter
        self.max_clusters = max_clusters

    def fit(self, X, y=None):
        """Cluster the rows of ``X`` (or the nodes of the adjacency ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            with ``affinity="precomputed"``.
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        A = _affinity_matrix(self, X, self.affinity)
        if self.affinity == "rbf":
            A = A - np.diag(np.diag(A))
        res = penalized_ncut(A, float(self.lam_prime), sigma=self.sigma, merge=self.merge,
                             max_iter=self.max_iter, max_clusters=self.max_clusters)
        self.affinity_matrix_ = A
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.cut_ = res.cut
        self.objective_ = res.objective
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        return self



# --------------------------------------------------------------------------- issue 9: SMIC

__all__ += ["SMIC"]


class SMIC(ClusterMixin, BaseEstimator):
    r"""SMI-based clustering (Sugiyama et al. 2014), with LSMI model selection of ``t``.

    Learns the kernel class-posterior :math:`p(y|x) = \sum_i \alpha_{y,i} K(x, x_i)` that
    maximises the squared-loss mutual information; the solution is analytic (the top-c
    eigenvectors of the sparse local-scaling kernel ``K``, no restarts).  The number of
    neighbours ``t`` of ``K`` is chosen by maximising LSMI over ``candidates``
    (:func:`bayesclust.information.smic_select`) or fixed.

    Parameters
    ----------
    n_clusters : int, default 2
        ``c >= 2`` (given, as in the paper).
    n_neighbors : int or "auto", default "auto"
        ``t`` of the kernel, or ``"auto"``: maximise LSMI over ``candidates``.
    class_prior : array-like of shape (n_clusters,) or None
        Positive class prior summing to 1 (uniform by default, as [S] recommends).
    candidates : sequence of int or None
        Candidate ``t`` for ``"auto"``; default ``1..10`` ([S]) restricted to ``t < n``.
    standardize : bool, default True
        Centre and scale every feature to unit variance first (all experiments of [S]; the
        LSMI width grid is absolute).  Constant features are only centred.
    eigen_solver : {"auto", "dense", "arpack"}, default "auto"
    normalize : bool, default False
        **[EXT], not in the paper**: degree-normalised kernel :math:`D^{-1/2} K D^{-1/2}`
        (see :func:`bayesclust.information.smic`); solves the circle & Gaussian toy that the
        paper's unnormalised kernel does not.
    n_basis : int, default 200
        LSMI basis functions.
    n_folds : int, default 5
        LSMI cross-validation folds.
    random_state : int, RandomState instance or None
        Draws LSMI's basis centres and folds (shared by all candidates).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_neighbors_ : int
        The ``t`` used.
    candidates_ : ndarray of shape (n_candidates,)
    lsmi_ : ndarray of shape (n_candidates,)
        LSMI of the SMIC labelling of every candidate (one entry when ``t`` is fixed).
    eigenvalues_ : ndarray of shape (n_clusters,)
    eigenvectors_ : ndarray of shape (n_samples, n_clusters)
        Sign-fixed eigenvectors, column ``y`` for cluster ``y``.
    unassigned_ : ndarray of bool, shape (n_samples,)
        Training points whose clipped scores were all 0 (labelled by the unclipped score).
    fit_seconds_, model_selection_seconds_ : float
        Wall time of the SMIC fits and of the LSMI scoring (all candidates).
    n_features_in_ : int

    Notes
    -----
    ``predict`` uses the out-of-sample rule of [S] §2.3 (see
    :func:`bayesclust.information.smic_predict`).  On the paper's four toy problems our
    implementation reproduces ARI 1 on (a) and (c); on (b) circle & Gaussian it does not (the
    unnormalised kernel's top eigenvectors sit in the blob; project errata 1) and on (d) the
    paper's 0.773 is one draw (our median over seeds is lower, errata 2).

    References
    ----------
    M. Sugiyama, G. Niu, M. Yamada, M. Kimura and H. Hachiya, "Information-maximization
    clustering based on squared-loss mutual information", Neural Computation 26 (2014).

    Examples
    --------
    >>> from bayesclust.datasets import four_gaussian_blobs
    >>> from bayesclust.metrics import ari
    >>> X, y = four_gaussian_blobs(0)
    >>> est = SMIC(n_clusters=4, candidates=[5, 7], random_state=0).fit(X)
    >>> ari(y, est.labels_), est.lsmi_.shape
    (1.0, (2,))
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "class_prior": ["array-like", None],
        "candidates": ["array-like", None],
        "standardize": ["boolean"],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "normalize": ["boolean"],
        "n_basis": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_folds": [Interval(numbers.Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, n_neighbors="auto", class_prior=None, candidates=None,
                 standardize=True, eigen_solver="auto", normalize=False, n_basis=200,
                 n_folds=5, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.class_prior = class_prior
        self.candidates = candidates
        self.standardize = standardize
        self.eigen_solver = eigen_solver
        self.normalize = normalize
        self.n_basis = n_basis
        self.n_folds = n_folds
        self.random_state = random_state

    def _transform(self, X):
        return (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_

    def fit(self, X, y=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        from .information import DEFAULT_CANDIDATES, smic_select

        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
        n = X.shape[0]
        if self.n_clusters >= n:
            raise ValueError(f"n_clusters={self.n_clusters} must be < n_samples={n}")
        X = X.astype(np.float64)
        if self.standardize:
            self.mean_ = X.mean(axis=0)
            scale = X.std(axis=0)
            self.scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.mean_ = np.zeros(X.shape[1])
            self.scale_ = np.ones(X.shape[1])
        Z = self._transform(X)
        if self.n_neighbors == "auto":
            if self.candidates is None:
                cands = [t for t in DEFAULT_CANDIDATES if t < n]
            else:
                cands = [int(t) for t in np.asarray(self.candidates).reshape(-1)]
        else:
            if self.n_neighbors >= n:
                raise ValueError(f"n_neighbors={self.n_neighbors} must be < n_samples={n}")
            cands = [int(self.n_neighbors)]
        sel = smic_select(
            _key_from_random_state(self.random_state), Z, self.n_clusters, cands,
            self.class_prior, eigen_solver=self.eigen_solver, n_folds=min(self.n_folds, n),
            n_basis=self.n_basis, normalize=self.normalize,
        )
        self._result = sel.result
        self._X_fit = Z
        self.labels_ = sel.result.labels.astype(np.intp)
        self.n_neighbors_ = int(sel.n_neighbors)
        self.candidates_ = sel.candidates
        self.lsmi_ = sel.lsmi
        self.eigenvalues_ = sel.result.eigenvalues
        self.eigenvectors_ = sel.result.eigenvectors
        self.unassigned_ = sel.result.unassigned
        self.fit_seconds_ = sel.smic_seconds
        self.model_selection_seconds_ = sel.lsmi_seconds
        return self

    def predict(self, X):
        """Out-of-sample cluster of every row of ``X`` ([S] §2.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        from .information import smic_predict

        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return smic_predict(self._result, self._X_fit, self._transform(X)).astype(np.intp)

    def predict_proba(self, X):
        """Normalised out-of-sample scores (rows sum to 1; all-zero rows give the prior)."""
        from .information import smic_predict_proba

        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return smic_predict_proba(self._result, self._X_fit, self._transform(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags



# --- issue 6: consensus clustering (evidence accumulation, PEnCA) ---------------------------

__all__ += ["EvidenceAccumulation", "AspectConsensus"]


class _ConsensusBase(ClusterMixin, BaseEstimator):
    """Shared ensemble handling: ``fit(X)`` builds a k-means ensemble, ``fit(labelings=...)``
    takes partitions (an (N, n) array, a list of label vectors or a Posterior)."""

    _ensemble_constraints: dict = {
        "n_partitions": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_clusters_range": [tuple, list, None],
        "k_rule": [StrOptions({"penca", "sqrt", "linear"})],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "random_state": ["random_state"],
    }

    def _labelings(self, X, labelings, key):
        from .consensus import coassociation, kmeans_ensemble
        from ._validation import check_labelings

        if labelings is None:
            if X is None:
                raise ValueError("fit needs X (to build a k-means ensemble) or labelings=...")
            X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
            ens = kmeans_ensemble(
                key, X, self.n_partitions, n_clusters_range=self.n_clusters_range,
                rule=self.k_rule, subsample=self.subsample,
            )
            codes = check_labelings(ens)
            C = coassociation(ens)
        else:
            if X is not None:
                X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
            codes = check_labelings(labelings, allow_missing=getattr(self, "allow_missing", None))
            if X is not None and X.shape[0] != codes.shape[1]:
                raise ValueError(
                    f"X has {X.shape[0]} samples but labelings label {codes.shape[1]} objects"
                )
            C = coassociation(codes, allow_missing=bool((codes < 0).any()))
        self.ensemble_ = codes
        self.coassociation_ = C
        return codes, C


class EvidenceAccumulation(_ConsensusBase):
    r"""Evidence accumulation clustering (EAC): linkage consensus of a clustering ensemble.

    Builds an ensemble (k-means with K drawn from the split-and-merge rule, or any
    partitions — including a :class:`~bayesclust.inference.posterior.Posterior`'s label
    draws), accumulates the sparse co-association :math:`C_{ij} = n_{ij}/N`, and cuts a
    single- or average-link dendrogram of :math:`1 - C` at ``n_clusters`` or at the largest
    lifetime (Fred & Jain 2005).  See :mod:`bayesclust.consensus`.

    Parameters
    ----------
    n_clusters : int or None, default None
        Fixed K (merge-order cut, robust to ties); ``None``: the lifetime criterion.
    method : {"average", "single"}, default "average"
    n_partitions : int, default 150
        Ensemble size when ``fit`` builds the ensemble.
    n_clusters_range : (int, int) or None
        ``(K_min, K_max)`` of the ensemble; default from ``k_rule``.
    k_rule : {"penca", "sqrt", "linear"}, default "penca"
        See :func:`bayesclust.consensus.k_bounds`.
    subsample : float in (0, 1] or None
        Fraction of objects per partition.
    allow_k1 : bool, default False
        Let the lifetime criterion choose a single cluster.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    ensemble_ : ndarray of shape (N, n_samples)
        The partitions (renumbered; -1 = not sampled).
    coassociation_ : bayesclust.consensus.CoAssociation
    linkage_ : ndarray of shape (n_samples - 1, 4)
    lifetimes_ : ndarray of shape (n_samples + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import EvidenceAccumulation
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> EvidenceAccumulation(n_clusters=2).fit(labelings=parts).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "method": [StrOptions({"average", "single"})],
        "allow_k1": ["boolean"],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, method="average", n_partitions=150, n_clusters_range=None,
                 k_rule="penca", subsample=None, allow_k1=False, random_state=None):
        self.n_clusters = n_clusters
        self.method = method
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.allow_k1 = allow_k1
        self.random_state = random_state

    def fit(self, X=None, y=None, labelings=None):
        """Consensus partition of an ensemble built on ``X`` or of the given ``labelings``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        labelings : array-like (N, n_samples), list of label vectors or Posterior, optional

        Returns
        -------
        self
        """
        from .consensus import linkage_consensus

        self._validate_params()
        _, C = self._labelings(X, labelings, _key_from_random_state(self.random_state))
        res = linkage_consensus(C, self.method, self.n_clusters, allow_k1=self.allow_k1)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.linkage_ = res.linkage
        self.lifetimes_ = res.lifetimes
        return self

    def fit_predict(self, X=None, y=None, labelings=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, labelings=labelings).labels_


class AspectConsensus(_ConsensusBase):
    r"""PEnCA: consensus by the dyadic aspect model of the co-association (soft memberships).

    The co-occurring pairs of an ensemble are modelled as
    :math:`P(y,z)=\sum_r p_rB_{r,y}B_{r,z}` and fitted by EM on the sparse count matrix
    (Lourenco, Fred & Figueiredo 2011); :math:`V_{y,r}\propto B_{r,y}p_r` are soft
    memberships.  ``hard=True`` fits the hard limit (classification EM).  See
    :func:`bayesclust.inference.aspect_em.aspect_em`.

    Parameters
    ----------
    n_clusters : int or None, default None
        Number of aspects L; ``None`` chooses it by MDL over ``1..max_clusters``
        (:func:`~bayesclust.inference.aspect_em.select_n_aspects`, experimental).
    max_clusters : int, default 10
    hard : bool, default False
    n_restarts : int, default 10
    init : {"random", "seeds", "eac"} or None, default None
        ``None``: random Dirichlet for EM, farthest-first seeds for the hard limit;
        ``"eac"``: start from the average-link EAC consensus with L clusters.
    max_iter : int, default 2000
    tol : float, default 1e-7
    n_partitions, n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    probabilities_ : ndarray of shape (n_samples, n_clusters_)
        Soft memberships :math:`V`.
    n_clusters_ : int
    weights_ : ndarray of shape (n_clusters_,)
    B_ : ndarray of shape (n_clusters_, n_samples)
    log_likelihood_ : float
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import AspectConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> est = AspectConsensus(n_clusters=2, random_state=0).fit(labelings=parts)
    >>> est.probabilities_.shape
    (6, 2)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "hard": ["boolean"],
        "n_restarts": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "seeds", "eac"}), None],
        "max_iter": [Interval(numbers.Integral, 1, 10_000, closed="both")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, max_clusters=10, hard=False, n_restarts=10, init=None,
                 max_iter=2000, tol=1e-7, n_partitions=150, n_clusters_range=None, k_rule="penca",
                 subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.hard = hard
        self.n_restarts = n_restarts
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, labelings=None):
        """Fit the aspect model to an ensemble built on ``X`` or to the given ``labelings``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        labelings : array-like (N, n_samples), list of label vectors or Posterior, optional

        Returns
        -------
        self
        """
        from .consensus import linkage_consensus
        from .inference.aspect_em import aspect_em, select_n_aspects

        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_em = jax.random.split(key)
        _, C = self._labelings(X, labelings, k_ens)
        kw = dict(hard=self.hard, n_restarts=self.n_restarts, max_iter=self.max_iter, tol=self.tol)
        if self.n_clusters is None:
            if self.init == "eac":
                raise ValueError("init='eac' needs n_clusters (model selection uses random starts)")
            cands = range(1, min(self.max_clusters, C.n_samples) + 1)
            sel = select_n_aspects(k_em, C, cands, init=self.init, **kw)
            res = sel.best
            self.model_selection_ = sel
        else:
            if self.n_clusters > C.n_samples:
                raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={C.n_samples}")
            init = self.init
            if init == "eac":
                init = linkage_consensus(C, "average", self.n_clusters).labels
            res = aspect_em(k_em, C, self.n_clusters, init=init, **kw)
        self.labels_ = res.labels.astype(np.intp)
        self.probabilities_ = res.memberships
        self.n_clusters_ = int(res.weights.shape[0])
        self.weights_ = res.weights
        self.B_ = res.B
        self.log_likelihood_ = float(res.log_likelihood)
        self.n_iter_ = int(res.n_iter)
        return self

    def fit_predict(self, X=None, y=None, labelings=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, labelings=labelings).labels_
