"""Estimators of the HDP Gaussian mixture on grouped data: by its hard limit
(:class:`HardHDP`) and by sampling (:class:`HDPGaussianMixture`).
"""

from __future__ import annotations

import numbers

import jax
import numpy as np
import numpyro.distributions as dist
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    validate_data,
)

from .. import _validation as V
from ..inference.hard.hard_hdp import hard_hdp, hard_hdp_penalties
from ..inference.mixtures.convergence import HDP_SAMPLER_DEFAULTS as _DEFAULTS
from ..inference.mixtures.gibbs import prior_distribution
from ..inference.mixtures.hdp_gibbs import gibbs_hdp_gmm
from ..inference.mixtures.posterior import Posterior
from ..models.dp_gmm import data_scaled_variances
from ._base import (
    KEEP_DRAWS,
    _key_from_random_state,
    _lam_from_n_clusters,
    _nearest_labels,
    _PointPartitionPredictive,
    _warn_default_not_estimate,
    _warn_if_one_cluster,
    _warn_if_spherical_fragments,
)

__all__ = ["HardHDP", "HDPGaussianMixture"]

#: ``HardHDP``'s hint when none is given (its fit then warns): scikit-learn's ``KMeans``
#: default of 8 clusters, 3 local clusters per data set.
DEFAULT_N_GLOBAL, DEFAULT_N_LOCAL = 8, 3


class _Grouped:
    """``fit(X, group_ids=...)`` of the HDP estimators: the data set of every row, one by default."""

    @staticmethod
    def _group_ids(X, group_ids) -> np.ndarray:
        return np.zeros(X.shape[0], np.int64) if group_ids is None else np.asarray(group_ids)

    def fit_predict(self, X, y=None, group_ids=None):
        """Fit and return ``labels_`` (the global cluster of every row)."""
        return self.fit(X, group_ids=group_ids).labels_


class HardHDP(_Grouped, ClusterMixin, BaseEstimator):
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
        Penalties (squared distances, > 0); a given value overrides its half of the
        default (see Notes).  With ``n_local`` / ``n_global`` given, the missing ones
        come from :func:`bayesclust.inference.hard.hard_hdp.hard_hdp_penalties` for
        ``n_local`` local clusters per data set and ``n_global`` global clusters; with
        a single data set each is then half the farthest-first DP-means penalty for
        ``n_global`` clusters.
    n_local : int or None, default None
        Desired number of local clusters per data set; used only to choose the
        penalties when ``lam_local`` or ``lam_global`` is None (the fitted
        ``n_local_`` may differ).  Several data sets need both ``n_local`` and
        ``n_global`` or neither (then 3, with a warning; see Notes).
    n_global : int or None, default None
        Desired number of global clusters; used only to choose the penalties,
        as ``n_local``; None: 8, with a warning (see Notes).  With one data set
        ``n_local`` plays no part.
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
    group_order_ : ndarray of shape (n_groups,)
        The data set identifiers, in the order of ``n_local_``.
    lam_local_, lam_global_ : float
    objective_ : float
    objective_trace_ : ndarray
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    Notes
    -----
    Without ``lam_local``, ``lam_global`` and ``n_global`` the penalties come from
    the hint ``n_global=8`` (``n_local=3``), scikit-learn's ``KMeans`` default, and
    the fit warns: its number of clusters then follows the hint (5 to 9 on the real
    data sets of BENCHMARKS.md, "defaults on real data", whether they hold 2 classes or
    10), not the data.  DP-means'
    data-scaled default (:class:`DPMeans`, :math:`\lambda = s^2\chi^2_d(1 - 1/n)`)
    does not carry over: Algorithm 2 starts from one cluster at the global mean, and
    separated blobs lie within that penalty of their mean (three blobs 12 standard
    deviations apart stay one cluster; so do iris and digits), while DPMeans'
    k-means++ restarts are what find them.

    ``fit(X, group_ids=g)`` takes the data set of every row as an integer vector
    ``g``; without ``group_ids`` all rows form one data set, and the model is
    DP-means with penalty ``lam_local + lam_global`` per cluster.  This is the
    form in which the scikit-learn estimator checks run (they cannot pass a
    grouping); grouped behaviour is tested against a per-point loop of
    Algorithm 2 in ``tests/test_hard_hdp.py``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import HardHDP
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [0.0, 0.1], [5.1, 5.0]])
    >>> HardHDP(lam_local=1.0, lam_global=1.0).fit(X, group_ids=[0, 0, 0, 1, 1]).labels_.tolist()
    [0, 0, 1, 0, 1]
    """

    _parameter_constraints: dict = {
        "lam_local": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lam_global": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_local": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_global": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(self, lam_local=None, lam_global=None, *, n_local=None, n_global=None,
                 max_iter=100, mesh=None):
        self.lam_local = lam_local
        self.lam_global = lam_global
        self.n_local = n_local
        self.n_global = n_global
        self.max_iter = max_iter
        self.mesh = mesh

    def fit(self, X, y=None, group_ids=None):
        """Cluster the rows of ``X``, grouped into data sets by ``group_ids``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        group_ids : array-like of int, shape (n_samples,), optional
            Data set of every row (any integer ids).  Default: one data set.

        Returns
        -------
        self
        """
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        group_ids = self._group_ids(X, group_ids)
        if self.lam_local is None or self.lam_global is None:
            lam_l, lam_g = self._penalties(X, group_ids, self.n_local, self.n_global)
        lam_l = lam_l if self.lam_local is None else float(self.lam_local)
        lam_g = lam_g if self.lam_global is None else float(self.lam_global)
        res = hard_hdp(X, lam_l, lam_g, group_ids=group_ids, max_iter=self.max_iter,
                       mesh=self.mesh)
        self.labels_ = np.asarray(res.flat_labels).astype(np.intp)
        # local labels back to input row order (res.local_labels follow group_order)
        local = np.empty(X.shape[0], np.intp)
        for j, gid in enumerate(res.group_order):
            local[group_ids == gid] = res.local_labels[j]
        self.local_labels_ = local
        self.cluster_centers_ = np.asarray(res.centers)
        self.n_clusters_ = int(res.n_global)
        self.n_local_ = np.asarray(res.n_local)
        self.group_order_ = np.asarray(res.group_order)
        self.lam_local_, self.lam_global_ = float(lam_l), float(lam_g)
        self.objective_ = float(res.objective)
        self.objective_trace_ = np.asarray(res.objective_trace)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        _warn_if_one_cluster(self, "lower lam_local and lam_global or give n_global")
        return self

    def _penalties(self, X, group_ids, n_local, n_global):
        one_set = len(np.unique(group_ids)) == 1
        if n_global is None and (n_local is None or one_set):
            _warn_default_not_estimate(
                self, f"penalties come from the default hint of {DEFAULT_N_GLOBAL} global clusters "
                "(farthest-first)", "give n_global, or lam_local and lam_global",
                follows="the hint", stacklevel=4)
            n_local, n_global = DEFAULT_N_LOCAL, DEFAULT_N_GLOBAL
        if not one_set and (n_local is None or n_global is None):
            raise ValueError(f"give both n_local and n_global (or neither, for the default hint) "
                             f"with several data sets; got n_local={n_local}, n_global={n_global}")
        if one_set:
            # One data set: DP-means with penalty lam_local + lam_global, split evenly.
            lam = _lam_from_n_clusters(X, n_global)
            return lam / 2, lam / 2
        try:
            return hard_hdp_penalties(X, n_local, n_global, group_ids=group_ids)
        except ValueError as err:
            raise ValueError(f"cannot choose penalties from n_local={n_local}, "
                             f"n_global={n_global}: {err}") from None

    def predict(self, X):
        """Nearest global mean of every row of ``X``."""
        return _nearest_labels(self, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class HDPGaussianMixture(_Grouped, _PointPartitionPredictive, ClusterMixin, BaseEstimator):
    r"""Hierarchical-DP Gaussian mixture of grouped data, fitted by sampling its posterior.

    Several data sets share global clusters (Teh et al. 2006; Kulis & Jordan
    2012, §4): global means :math:`\mu_p \sim N(0, \rho^2 I)`, local clusters
    of each data set by CRP(:math:`\alpha`), each mapped to a global cluster
    by CRP(:math:`\gamma`), :math:`x \sim N(\mu_p, \sigma^2 I)`.  ``fit``
    runs the Chinese-restaurant-franchise Gibbs sampler
    (:func:`bayesclust.inference.mixtures.hdp_gibbs.gibbs_hdp_gmm`); ``labels_`` is the
    posterior point partition of the global clusters (VI or Binder loss), free
    of label switching.  Its small-variance limit is :class:`HardHDP`.

    Parameters
    ----------
    alpha, gamma : float, default 1.0
        Local and global concentrations (initial values when their priors are given).
    sigma2 : float or "auto", default "auto"
        Component **variance** (initial value when ``sigma2_prior`` is given).
        ``"auto"``: a quarter of the data's mean per-feature variance, as in
        :class:`DPGaussianMixture` (see Notes).
    rho2 : float or "auto", default "auto"
        Prior **variance** of the global means.  ``"auto"``: three quarters of the
        data's mean per-feature variance.  Kulis & Jordan (2012, §4) use
        ``sigma2=1, rho2=100`` on their own data's scale.
    alpha_prior, gamma_prior : numpyro.distributions.Gamma or None
        Priors on the concentrations, e.g. ``dist.Gamma(1.0, 1.0)`` (shape, rate).
    sigma2_prior : numpyro.distributions.InverseGamma or None
        Prior on ``sigma2``, e.g. ``dist.InverseGamma(1.0, 1.0)`` (shape, scale).
        The sampler needs these conjugate families.
    num_warmup, num_samples, thin, num_chains : int, default 1000, 500, 8, 8
        Sweeps discarded, draws kept per chain, sweeps per kept draw, chains: the
        defaults of :func:`bayesclust.gibbs_hdp_gmm`
        (:data:`bayesclust.inference.mixtures.convergence.HDP_SAMPLER_DEFAULTS`, where
        their measured R-hat and cost are listed).  ``fit`` issues a
        :class:`bayesclust.ConvergenceWarning` when they are too few.
    split_merge : int, default 1
        Split-merge moves of a table and its dish per sweep
        (:func:`bayesclust.inference.mixtures.hdp_gibbs.split_merge_move`; 0: the CRF
        sweeps alone).  On iris (one data set) one move per sweep raises the bulk ESS
        of the number of clusters about fourfold.
    loss : {"vi", "binder"}, default "vi"
    progress_bar : bool, default False
    random_state : int, RandomState instance or None
    keep_draws : int, "all" or "summary", default 100
        What ``posterior_`` keeps of the run
        (:meth:`~bayesclust.inference.mixtures.posterior.Posterior.compact`): an int, at
        most that many draws per chain spread evenly over the chain (every per-draw array
        thinned alike); ``"all"``: every draw; ``"summary"``: no label draws, only the
        number of clusters, log-likelihood and scalar parameters of every draw, the point
        partition of ``loss`` and, up to 2,000 points, the co-clustering matrix.
        ``labels_``, ``local_labels_``, ``n_clusters_``, ``cluster_centers_``, ``predict`` and the
        :class:`bayesclust.ConvergenceWarning` (R-hat, ESS) come from every draw whatever
        is kept.  The label draws are chains x draws x points integers (8 x 500 x n with
        the defaults), the bulk of a fit's memory and pickle: 100 draws per chain keep a
        fit on iris (150 points) at 0.3-0.4 MB pickled instead of 9-13 MB, and leave
        ``posterior_`` draws for every documented summary (800 with 8 chains, about as
        many as its point estimates read: 500 above 2,000 points, 1,000 below).

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
    group_order_ : ndarray of shape (n_groups,)
        The data set identifiers, in the order of ``n_local_``.
    posterior_ : Posterior
        The draws ``keep_draws`` keeps (global labels; ``params["local_labels"]``;
        ``labels_by_group()``).
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        Posterior means of the global clusters' means.
    sigma2_, rho2_ : float
        The component variance (initial value under ``sigma2_prior``) and the prior
        variance of the global means the sampler used (``"auto"`` resolved).
    n_features_in_ : int

    Notes
    -----
    The ``"auto"`` variances are those of :class:`DPGaussianMixture`
    (:func:`bayesclust.models.dp_gmm.data_scaled_variances`): with :math:`s^2` the
    pooled data's mean per-feature variance, :math:`\sigma^2 = s^2 / 4` and
    :math:`\rho^2 = 3 s^2 / 4`, so that the prior predictive variance of a coordinate
    is the data's and the partition does not depend on the data's units (the fixed
    ``sigma2=1, rho2=100`` split raw wine, whose features range over four orders of
    magnitude, into dozens of clusters and put standardised wine in one; BENCHMARKS.md,
    "defaults on real data").

    The clusters are spherical with one variance :math:`\sigma^2` for all, so data whose
    groups are elongated or correlated come out in pieces: with the defaults on
    standardised wine, MASS biopsy and the first 10 principal components of digits (one
    data set each) the sampler found 22, 22 and 47 clusters (3, 2 and 10 classes), as
    :class:`DPGaussianMixture`'s spherical model does (26, 28 and 85).  ``fit`` runs
    :class:`DPGaussianMixture`'s check on the global point partition (clusters merged
    greedily while the full-covariance model's :math:`\log p(X, z)` rises, the partition's
    prior taken as CRP(``gamma``), the dishes' prior applied to points) and warns, naming
    ``sigma2``, when they merge into half as many clusters or fewer: on those three data
    sets, and on raw wine and MASS crabs (5 clusters each; 3 and 4 classes).

    ``fit(X, group_ids=g)`` takes the data set of every row as an integer vector;
    without ``group_ids`` all rows form one data set (an HDP with one data set is a
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
    >>> group_ids = np.repeat([0, 1], 20)
    >>> est = HDPGaussianMixture(sigma2=0.1, num_warmup=50, num_samples=50, num_chains=2,
    ...                          random_state=0)
    >>> est.fit(X, group_ids=group_ids).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        **_PointPartitionPredictive._sampler_constraints,
        "sigma2": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "rho2": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither")],
        "gamma_prior": [dist.Gamma, None],
        "split_merge": [Interval(numbers.Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        alpha=1.0,
        gamma=1.0,
        sigma2="auto",
        rho2="auto",
        *,
        alpha_prior=None,
        gamma_prior=None,
        sigma2_prior=None,
        num_warmup=_DEFAULTS.num_warmup,
        num_samples=_DEFAULTS.num_samples,
        thin=_DEFAULTS.thin,
        num_chains=_DEFAULTS.num_chains,
        split_merge=_DEFAULTS.split_merge,
        loss="vi",
        progress_bar=False,
        random_state=None,
        keep_draws=KEEP_DRAWS,
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
        self.thin = thin
        self.num_chains = num_chains
        self.split_merge = split_merge
        self.loss = loss
        self.progress_bar = progress_bar
        self.random_state = random_state
        self.keep_draws = keep_draws

    def fit(self, X, y=None, group_ids=None):
        """Sample the posterior of the HDP mixture given ``X`` grouped by ``group_ids``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        group_ids : array-like of int, shape (n_samples,), optional
            Data set of every row (any integer ids).  Default: one data set.

        Returns
        -------
        self
        """
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        # named here: the sampler would name its own argument, groups
        V.check_squares_representable(X, "X")
        group_ids = self._group_ids(X, group_ids)
        self.sigma2_, self.rho2_ = data_scaled_variances(X, self.sigma2, self.rho2)
        post = gibbs_hdp_gmm(
            _key_from_random_state(self.random_state), X, group_ids=group_ids,
            alpha=self.alpha, gamma=self.gamma, sigma2=self.sigma2_, rho2=self.rho2_,
            alpha_prior=prior_distribution(self.alpha_prior, "alpha_prior", "gamma"),
            gamma_prior=prior_distribution(self.gamma_prior, "gamma_prior", "gamma"),
            sigma2_prior=prior_distribution(self.sigma2_prior, "sigma2_prior", "inverse_gamma"),
            num_warmup=self.num_warmup,
            num_samples=self.num_samples, thin=self.thin, num_chains=self.num_chains,
            split_merge=self.split_merge, progress_bar=self.progress_bar,
        )
        self._set_posterior(X, post, rho2=self.rho2_)
        local = np.empty(X.shape[0], np.intp)
        n_local = []
        for j, draws in enumerate(post.labels_by_group(post.params["local_labels"])):
            # copy=False: the fancy index of labels_by_group made these draws for this call
            point = Posterior(draws, copy=False).point_estimate(self.loss)
            local[post.group_ids == j] = np.unique(point, return_inverse=True)[1].reshape(-1)
            n_local.append(int(point.max()) + 1 if point.size else 0)
        self.local_labels_ = local
        self.n_local_ = np.asarray(n_local)
        self.group_order_ = np.asarray(post.group_order)
        _warn_if_one_cluster(self, "lower sigma2 or raise alpha and gamma")
        _warn_if_spherical_fragments(
            self, X, self.gamma, "the HDP mixture's clusters are spherical: raise sigma2 (or, for "
            "one data set, try DPGaussianMixture(covariance_type='full'))")
        return self
