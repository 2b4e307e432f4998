"""Estimators of the DP Gaussian mixture: by its hard limit (:class:`DPMeans`) and by
sampling its posterior (:class:`DPGaussianMixture`).
"""

from __future__ import annotations

import numbers

import jax
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

from .. import _validation as V
from ..inference.hard.dp_means import dp_means, farthest_first_lambda
from ..inference.mixtures.convergence import DP_SAMPLER_DEFAULTS as _DEFAULTS
from ..inference.mixtures.gibbs import gibbs_dp_gmm, prior_distribution
from ..inference.mixtures.gibbs_gaussian import GaussianClusterPrior
from ..models.dp_gmm import data_scaled_variances
from ._base import (
    KEEP_DRAWS,
    _default_lam,
    _key_from_random_state,
    _lam_from_n_clusters,
    _nearest_labels,
    _PointPartitionPredictive,
    _warn_default_not_estimate,
    _warn_if_one_cluster,
    _warn_if_spherical_fragments,
)

__all__ = ["DPMeans", "DPGaussianMixture"]


class DPMeans(ClusterMixin, BaseEstimator):
    r"""DP-means clustering: k-means with a penalty per cluster instead of a fixed k.

    The small-variance limit of the Dirichlet-process Gaussian mixture's Gibbs
    sampler (Kulis & Jordan 2012).  Minimises
    :math:`\sum_i w_i \|x_i - \mu_{z_i}\|^2 + \lambda k` over partitions and
    the number of clusters :math:`k`.  See :func:`bayesclust.dp_means`.

    Parameters
    ----------
    lam : float or None, default None
        Penalty per cluster (a squared distance, > 0).  ``None``: found for
        ``n_clusters`` when that is given, otherwise
        :math:`s^2 \chi^2_d(1 - 1/n)` (see Notes).
    n_clusters : int or None, default None
        Desired number of clusters, used only when ``lam`` is None: ``lam`` is
        then the penalty at which this estimator's own fit (its ``init``,
        ``n_init`` and ``random_state``) finds ``n_clusters`` clusters, by
        bisection on ``log lam`` from Kulis & Jordan's farthest-first value
        (§6.1; capped at the number of samples); when no penalty gives
        ``n_clusters`` from k-means++ starts (a local search's count need not
        fall strictly with ``lam``), from Algorithm 1's starts
        (``init="mean"``, the fitted ``lam_`` is then theirs).  The fit runs
        once per bisection step (typically 3-15 times); when neither search
        finds ``n_clusters``, the fit with the nearest count is kept.
    max_iter : int, default 100
        Maximum number of iterations.
    max_clusters : int or None, default None
        Upper bound on the number of clusters (see :func:`bayesclust.dp_means`).
    shuffle : bool, default False
        Process the points in a random order (drawn from ``random_state``)
        instead of the given order.  DP-means depends on the order.
    n_init : int, default 10
        Starts; the fit with the lowest objective is kept (see
        :func:`bayesclust.dp_means`).  Measured on make_blobs 100k x 2 (10
        centres) and 100k x 16 (50 centres) at the farthest-first ``lam``: the
        default reaches objectives 25 % and 85 % below pdc-dp-means' (BENCHMARKS.md).
    init : {"k-means++", "mean"}, default "k-means++"
        ``"k-means++"``: every start from D^2 seeds drawn until every point lies
        within ``lam`` of one (docs/deviations.md#dpmeans-restarts);
        ``"mean"``: Algorithm 1's start at the global mean, the starts differing
        by their random pass orders when ``n_init > 1``.  ``init="mean",
        n_init=1`` is Kulis & Jordan's Algorithm 1 exactly (deterministic
        unless ``shuffle``).
    random_state : int, RandomState instance or None, default None
        Seeds the starts and the order when ``shuffle=True``.
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
        The penalty used (given, found for ``n_clusters``, or the default).
    objective_ : float
        Final value of the DP-means objective.
    restart_objectives_ : ndarray of shape (n_init,)
        The final objective of every start.
    objective_trace_ : ndarray of shape (n_iter_ + 1,)
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    Notes
    -----
    The default penalty (neither ``lam`` nor ``n_clusters``) is
    :math:`\lambda = s^2 \chi^2_d(1 - 1/n)`, with :math:`s^2` the data's mean
    per-feature variance: the squared distance from the mean beyond which ``n``
    draws of one spherical Gaussian with the data's spread put fewer than one point
    in expectation.  A point opens a cluster only where such a Gaussian would not
    reach, so data that one Gaussian explains stay one cluster, and the penalty
    scales with the data (no unit dependence) and grows with ``d`` as the
    chi-squared tail does.  It is a choice for a first look, not a model
    selection, and a fit with it that finds more than one cluster warns (a
    ``UserWarning`` naming ``n_clusters`` and ``lam``): the count follows one
    Gaussian's reach, not the groups.  On the real data of BENCHMARKS.md
    ("defaults on real data") it gave 2, 5, 9, 13, 3 and 4 clusters on iris, raw
    and standardised wine, MASS biopsy, MASS crabs and digits' first 10 principal
    components (3, 3, 3, 2, 4 and 10 classes): data whose groups are elongated or
    of unequal spread (standardised wine, biopsy) open clusters in their tails, and
    overlapping groups (digits) lie within one Gaussian's reach.  No multiple of
    this penalty lands within one of the classes on all six (scanned from a quarter to
    four times it: digits needs about 0.7 times it, standardised wine and biopsy two
    to three times); ``n_clusters`` is what finds a given count.  A fit that ends
    with one cluster on 10 or more points issues a
    :class:`bayesclust.SingleClusterWarning` instead.

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
    >>> DPMeans(lam=1.0, random_state=0).fit(X).n_clusters_
    2
    >>> DPMeans(lam=1.0, init="mean", n_init=1).fit(X).labels_.tolist()  # Algorithm 1
    [0, 0, 0, 1, 1]
    >>> DPMeans(n_clusters=2, random_state=0).fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "lam": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "shuffle": ["boolean"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"k-means++", "mean"})],
        "random_state": ["random_state"],
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(
        self,
        lam=None,
        *,
        n_clusters=None,
        max_iter=100,
        max_clusters=None,
        shuffle=False,
        n_init=10,
        init="k-means++",
        random_state=None,
        mesh=None,
    ):
        self.lam = lam
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.max_clusters = max_clusters
        self.shuffle = shuffle
        self.n_init = n_init
        self.init = init
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
        if self.lam is None and self.n_clusters is not None and self.n_clusters > X.shape[0]:
            raise ValueError(  # scikit-learn's KMeans wording; farthest_first_lambda refuses it too
                f"n_samples={X.shape[0]} should be >= n_clusters={self.n_clusters}; "
                "pass a smaller n_clusters or lam"
            )
        key = _key_from_random_state(self.random_state)
        order = None
        if self.shuffle and (self.n_init == 1 or self.init != "mean"):
            order = np.asarray(jax.random.permutation(key, X.shape[0]))

        def fit_at(lam, init=self.init):
            random_starts = self.n_init > 1 or init != "mean"
            return dp_means(
                X, lam, sample_weight=sample_weight, max_iter=self.max_iter,
                max_clusters=self.max_clusters, order=order, mesh=self.mesh, n_init=self.n_init,
                init=init, rng_key=key if random_starts else None,
            )

        if self.lam is not None:
            lam = float(self.lam)
            res = fit_at(lam)
        elif self.n_clusters is not None:
            lam, res = _lam_for_n_clusters(fit_at, X, self.n_clusters, self.init)
        else:
            lam = _default_lam(X)
            res = fit_at(lam)
        self.labels_ = res.labels.astype(np.intp)
        self.cluster_centers_ = res.centers
        self.n_clusters_ = res.n_clusters
        self.lam_ = lam
        self.objective_ = res.objective
        self.restart_objectives_ = res.restart_objectives
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        _warn_if_one_cluster(self, "lower lam or give n_clusters")
        if self.lam is None and self.n_clusters is None and self.n_clusters_ > 1:
            _warn_default_not_estimate(
                self, f"default penalty lam = s^2 chi2_d(1 - 1/n) = {lam:.4g} is where one "
                "spherical Gaussian with the data's spread ends (a first look, not a model "
                "selection)", "give n_clusters, or lam", follows="one Gaussian's reach")
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
        return _nearest_labels(self, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def _lam_for_n_clusters(fit_at, X, n_clusters: int, init: str):
    """``(lam, result)``: the penalty at which the estimator's own fit ``fit_at(lam, init)``
    finds ``n_clusters`` clusters, by bisection on ``log lam``.

    Farthest-first (Kulis & Jordan 2012, §6.1) gives the penalty at which Algorithm 1 from
    the global mean opens ``n_clusters`` clusters; other starts open a different number at
    that penalty, so it is only the bracket's first point.  The number of clusters falls
    as ``lam`` grows, though not strictly for a local search: k-means++ seeds cover the
    data at distance ``lam``, and where one penalty gives a singleton beside the
    ``n_clusters`` groups and a slightly larger one lets a seed cover two groups, no
    penalty gives ``n_clusters`` from those starts.  Then Algorithm 1's starts (the global
    mean, random pass orders) are searched the same way; when neither finds
    ``n_clusters``, the fit with the nearest number (the fewer on a tie) is returned.
    """
    k = min(int(n_clusters), X.shape[0])
    lam0 = _lam_from_n_clusters(X, k)
    seen = []
    for start in dict.fromkeys((init, "mean")):
        lam, res = lam0, fit_at(lam0, start)
        seen.append((lam, res))
        if res.n_clusters == k or farthest_first_lambda(X, k) == 0:
            return lam, res  # found, or fewer distinct rows than k: every distinct row a cluster
        found = _bisect_lam(lambda v, s=start: fit_at(v, s), lam, res, k, seen)
        if found is not None:
            return found
    return min(seen, key=lambda t: (abs(t[1].n_clusters - k), t[1].n_clusters))


def _bisect_lam(fit, lam, res, k, seen):
    """Bracket and bisect ``log lam`` from ``(lam, res)`` for a fit with ``k`` clusters;
    ``None`` when the bracket closes (to 0.1 %) without one.  Every fit joins ``seen``."""
    # Bracket: ``lo`` opens more than k clusters, ``hi`` fewer.
    step = 2.0 if res.n_clusters > k else 0.5
    lam_next = lam
    for _ in range(60):
        try:
            lam_next = lam * step
            res_next = fit(lam_next)
        except ValueError:  # the penalty left the working dtype's range
            return None
        seen.append((lam_next, res_next))
        if res_next.n_clusters == k:
            return lam_next, res_next
        if (res_next.n_clusters > k) != (res.n_clusters > k):
            break
        lam, res = lam_next, res_next
    else:
        return None
    lo, hi = sorted((lam, lam_next))
    while hi > lo * 1.001:
        mid = float(np.sqrt(lo * hi))
        res_mid = fit(mid)
        seen.append((mid, res_mid))
        if res_mid.n_clusters == k:
            return mid, res_mid
        lo, hi = (mid, hi) if res_mid.n_clusters > k else (lo, mid)
    return None


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
    sigma2 : float or "auto", default "auto"
        Component **variance** (initial value when ``sigma2_prior`` is given).
        ``"auto"``: a quarter of the data's mean per-feature variance
        :math:`s^2 = \operatorname{tr}(\hat\Sigma) / d` (see Notes).
    rho2 : float or "auto", default "auto"
        Prior **variance** of the means.  ``"auto"``: :math:`3 s^2 / 4`.  Kulis &
        Jordan (2012, §4) use 100 with ``sigma2`` 1 on their own data's scale.
    alpha_prior : numpyro.distributions.Gamma or None
        Prior on ``alpha``, e.g. ``dist.Gamma(1.0, 1.0)`` (shape, rate).
    sigma2_prior : numpyro.distributions.InverseGamma or None
        Prior on ``sigma2``, e.g. ``dist.InverseGamma(1.0, 1.0)`` (shape, scale).
        The sampler needs these conjugate families.
    sampler : {"collapsed", "kj"}, default "collapsed"
        Means integrated out (Neal's Algorithm 3), or Kulis & Jordan's
        Algorithm 2 (explicit means; its limit is DP-means).
    num_warmup, num_samples, thin, num_chains : int, default 500, 1000, 4, 8
        Sweeps discarded, draws kept per chain, sweeps per kept draw, chains: the
        defaults of :func:`bayesclust.gibbs_dp_gmm`
        (:data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`).  ``fit``
        issues a :class:`bayesclust.ConvergenceWarning` when they are too few.
    split_merge : int or None, default None
        Split-merge moves per sweep; None: 2 with ``sampler="collapsed"``, 0 with
        ``"kj"``, 0 with ``covariance_type`` ``"diag"`` / ``"full"``: there the
        sequentially-allocated moves between random pairs of points are almost always
        rejected (0-4% of them in short runs on iris, standardised wine, crabs and
        digits), and on digits' first 10 principal components 20 of them per sweep did
        not bring the full-covariance chains' log-likelihoods together (BENCHMARKS.md).
    loss : {"vi", "binder"}, default "vi"
        Loss of the point partition (Binder's loss tends to split off
        singletons; Wade & Ghahramani 2018).
    progress_bar : bool, default False
    random_state : int, RandomState instance or None
    covariance_type : {"spherical", "diag", "full"}, default "spherical"
        ``"spherical"``: the model above (fixed ``sigma2 I``).  ``"diag"`` / ``"full"``:
        every cluster has its own diagonal / full covariance under a per-dimension
        Normal-Gamma / Normal-inverse-Wishart prior, means and covariances integrated
        out (:func:`bayesclust.gibbs_dp_gaussian`, single-site moves and ``split_merge``
        moves), every chain started from its own over-split k-means partition of about
        :math:`\sqrt n` clusters in the prior-whitened frame (at most 64; single-site
        moves merge small clusters far more easily than they grow new ones); ``sigma2``,
        ``rho2``, ``sigma2_prior`` and ``sampler`` are then unused.
        With ``"spherical"``, ``fit`` warns (a ``UserWarning`` naming
        ``covariance_type``) when the full-covariance model's :math:`\log p(X, z)` rises
        by merging the clusters of the point partition into half as many or fewer:
        isotropic components cut elongated clusters into pieces (see Notes).  Small-variance limits: ``"spherical"`` tends
        to :class:`DPMeans` (Kulis & Jordan 2012); ``"diag"``/``"full"`` tend to Bregman / Mahalanobis hard
        clustering (Jiang, Kulis & Jordan 2012), which bayesclust does not implement.
    prior : GaussianClusterPrior or None, default None
        Cluster prior of ``"diag"`` / ``"full"``; None: the data-scaled
        :func:`bayesclust.default_gaussian_prior` (docs/deviations.md#dp-gaussian-default-prior).
    keep_draws : int, "all" or "summary", default 100
        What ``posterior_`` keeps of the run
        (:meth:`~bayesclust.inference.mixtures.posterior.Posterior.compact`): an int, at
        most that many draws per chain spread evenly over the chain (every per-draw array
        thinned alike); ``"all"``: every draw; ``"summary"``: no label draws, only the
        number of clusters, log-likelihood and scalar parameters of every draw, the point
        partition of ``loss`` and, up to 2,000 points, the co-clustering matrix.
        ``labels_``, ``n_clusters_``, ``cluster_centers_``, ``predict`` and the
        :class:`bayesclust.ConvergenceWarning` (R-hat, ESS) come from every draw whatever
        is kept.  The label draws are chains x draws x points integers (8 x 1,000 x n with
        the defaults), the bulk of a fit's memory and pickle: 100 draws per chain keep a
        fit on iris (150 points) at 0.3-0.4 MB pickled instead of 9-13 MB, and leave
        ``posterior_`` draws for every documented summary (800 with 8 chains, about as
        many as its point estimates read: 500 above 2,000 points, 1,000 below).
    mesh : jax.sharding.Mesh or None, default None
        Run the chains sharded over the devices of this one-axis mesh (``num_chains``
        a multiple of its size); the draws equal the single-device fit's.  See
        :func:`bayesclust.gibbs_dp_gmm`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Posterior point partition (clusters ``0..n_clusters_-1``).
    n_clusters_ : int
    posterior_ : Posterior
        The draws ``keep_draws`` keeps: label draws, k draws, co-clustering,
        diagnostics, ArviZ.
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
        Posterior means of the point partition's cluster means.
    sigma2_, rho2_ : float
        The component variance (initial value under ``sigma2_prior``) and the prior
        variance of the means the sampler used (``"auto"`` resolved; ``"spherical"`` only).
    prior_ : GaussianClusterPrior
        The cluster prior used (``"diag"`` / ``"full"`` only).
    n_features_in_ : int

    Notes
    -----
    The ``"auto"`` hyper-parameters match the prior predictive variance of one
    coordinate, :math:`\sigma^2 + \rho^2`, to the data's mean per-feature variance
    :math:`s^2`, a quarter of it within clusters: :math:`\sigma^2 = s^2 / 4`,
    :math:`\rho^2 = 3 s^2 / 4`.  They scale with the data, so the partition does not
    depend on the data's units (a fixed ``sigma2=1`` puts data measured in metres in one
    cluster and the same data in millimetres in hundreds); see
    ``docs/deviations.md#dp-gmm-data-scaled-prior``.  The fitted values are
    ``sigma2_`` and ``rho2_``.

    The spherical model's check: clusters of the point partition are merged greedily
    (best pair first) while the Normal-inverse-Wishart marginal likelihood under
    :func:`bayesclust.default_gaussian_prior`, plus the CRP(``alpha``) prior of the
    partition, rises; when the merges leave half as many clusters or fewer (two or more
    spherical pieces per full-covariance cluster on average), ``fit`` warns and names
    ``covariance_type``.  One merge is not enough: the full model also merges two round
    clusters three standard deviations apart, and puts iris's versicolor and virginica
    in one cluster (as model-based clustering does; Fraley & Raftery 2002, §8).  It
    costs one marginal likelihood per pair of clusters, no sampling.  It says that the
    full model prefers these clusters merged, not how many clusters a full-covariance
    fit would find (it explores other partitions too).  On 500 points of 4 elongated
    Gaussians in 5-D the spherical model found 5 and 7 clusters (two data sets), the
    check merged both to 4.  With the defaults on the real data of BENCHMARKS.md
    ("Defaults on real data") the spherical model's clusters merge as follows: iris
    3 -> 2 (no warning), raw wine 5 -> 1, standardised wine 26 -> 10, crabs 5 -> 1,
    MASS biopsy 28 -> 3, digits' first 10 principal components 85 -> 26 (warnings:
    these data are correlated, not isotropic).

    ``predict_proba`` gives, for new points, the posterior predictive
    probability of joining each cluster of the point partition (no new-cluster
    column): :math:`p(c | x) \propto n_c N(x | m_c, (\sigma^2 + s_c^2) I)` with
    :math:`m_c, s_c^2` the posterior mean and variance of :math:`\mu_c` given
    its members and the posterior mean of :math:`\sigma^2`; for ``"diag"`` /
    ``"full"``, :math:`p(c | x) \propto n_c\, p(x \mid X_c)` with the Student-t
    predictive of :func:`bayesclust.gaussian_predictive_logpdf`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import DPGaussianMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    >>> DPGaussianMixture(num_warmup=50, num_samples=50, num_chains=2, random_state=0).fit(X).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        **_PointPartitionPredictive._sampler_constraints,
        "sigma2": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "rho2": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "sampler": [StrOptions({"collapsed", "kj"})],
        "split_merge": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "covariance_type": [StrOptions({"spherical", "diag", "full"})],
        "prior": [GaussianClusterPrior, None],
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(
        self,
        alpha=1.0,
        sigma2="auto",
        rho2="auto",
        *,
        alpha_prior=None,
        sigma2_prior=None,
        sampler="collapsed",
        num_warmup=_DEFAULTS.num_warmup,
        num_samples=_DEFAULTS.num_samples,
        thin=_DEFAULTS.thin,
        num_chains=_DEFAULTS.num_chains,
        split_merge=None,
        loss="vi",
        progress_bar=False,
        random_state=None,
        covariance_type="spherical",
        prior=None,
        keep_draws=KEEP_DRAWS,
        mesh=None,
    ):
        self.covariance_type = covariance_type
        self.prior = prior
        self.alpha = alpha
        self.sigma2 = sigma2
        self.rho2 = rho2
        self.alpha_prior = alpha_prior
        self.sigma2_prior = sigma2_prior
        self.sampler = sampler
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.thin = thin
        self.num_chains = num_chains
        self.split_merge = split_merge
        self.loss = loss
        self.progress_bar = progress_bar
        self.random_state = random_state
        self.keep_draws = keep_draws
        self.mesh = mesh

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
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        if self.covariance_type != "spherical":
            return _fit_gaussian(self, X)
        self.sigma2_, self.rho2_ = data_scaled_variances(X, self.sigma2, self.rho2)
        post = gibbs_dp_gmm(
            _key_from_random_state(self.random_state), X,
            alpha=self.alpha, sigma2=self.sigma2_, rho2=self.rho2_,
            alpha_prior=prior_distribution(self.alpha_prior, "alpha_prior", "gamma"),
            sigma2_prior=prior_distribution(self.sigma2_prior, "sigma2_prior", "inverse_gamma"),
            collapsed=self.sampler == "collapsed", num_warmup=self.num_warmup,
            num_samples=self.num_samples, thin=self.thin, num_chains=self.num_chains,
            split_merge=self.split_merge, progress_bar=self.progress_bar, mesh=self.mesh,
        )
        self._set_posterior(X, post, rho2=self.rho2_)
        _warn_if_one_cluster(self, "lower sigma2 or raise alpha")
        _warn_if_spherical_fragments(self, X, self.alpha,
                                     "try covariance_type='full' (or 'diag')")
        return self


#: The over-split start of the diag / full sampler: about sqrt(n) clusters, at most this many.
OVER_SPLIT_MAX = 64


def _over_split_start(X, prior, covariance_type, num_chains, key):
    r"""One over-split partition per chain: Lloyd's k-means in the prior-whitened frame.

    :math:`k_0 = \min(\lceil\sqrt n\rceil, 64)` clusters, every chain from its own
    :math:`k_0` distinct data points (10 Lloyd iterations, host, float64).  Single-site
    moves empty a small cluster one point at a time, but build a cluster out of one only
    through states where it is a singleton: from one cluster the full-covariance chains on
    digits (PCA-10) stay at a log-likelihood about 100 nats below the level these starts
    reach within their first draw (BENCHMARKS.md).  The whitened frame
    (:func:`~bayesclust.inference.mixtures.gibbs_gaussian.whitened_problem`) makes the
    start unit-free, as the sampler is.

    Returns
    -------
    ndarray of int, shape (num_chains, n)
    """
    from ..inference.hard.kmeans import lloyd_host
    from ..inference.mixtures.gibbs_gaussian import whitened_problem

    Z = whitened_problem(X, prior, covariance_type)[0]
    n = Z.shape[0]
    k0 = min(int(np.ceil(np.sqrt(n))), OVER_SPLIT_MAX, n)
    rng = V.as_numpy_rng(key)
    return np.stack([lloyd_host(Z, Z[rng.choice(n, k0, replace=False)], 10)
                     for _ in range(num_chains)])


def _fit_gaussian(est, X):
    """``fit`` of :class:`DPGaussianMixture` with ``covariance_type`` "diag" or "full"."""
    from ..inference.mixtures.gibbs_gaussian import (
        check_gaussian_prior,
        default_gaussian_prior,
        gibbs_dp_gaussian,
    )

    prior = est.prior
    if prior is None:
        prior = default_gaussian_prior(X, est.covariance_type)
    # Validated before sampling: the predictive's statistics use it after the run.
    prior = check_gaussian_prior(prior, X.shape[1], est.covariance_type)
    key = _key_from_random_state(est.random_state)
    post = gibbs_dp_gaussian(
        key, X, covariance_type=est.covariance_type,
        init_labels=_over_split_start(X, prior, est.covariance_type, est.num_chains,
                                      jax.random.fold_in(key, 1)),
        alpha=est.alpha, alpha_prior=prior_distribution(est.alpha_prior, "alpha_prior", "gamma"),
        prior=prior, num_warmup=est.num_warmup, num_samples=est.num_samples, thin=est.thin,
        num_chains=est.num_chains, split_merge=0 if est.split_merge is None else est.split_merge,
        progress_bar=est.progress_bar, mesh=est.mesh,
    )
    est.prior_ = prior
    est._set_posterior(X, post)
    _warn_if_one_cluster(est, "raise alpha or give a prior of smaller scale")
    return est
