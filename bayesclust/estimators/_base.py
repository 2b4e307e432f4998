"""What the estimators share: a JAX key from a scikit-learn ``random_state``, the
nearest-centre ``predict`` of the hard limits, the parameter constraints, point
partition and posterior-predictive ``predict`` of the sampled mixtures, and the warnings
of a fit that ends with one cluster, with spherical pieces of elongated clusters, or whose
number of clusters comes from a default rather than the data.
"""

from __future__ import annotations

import math
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    check_is_fitted,
    validate_data,
)

from .. import _validation as V
from ..inference.hard.dp_means import farthest_first_lambda
from ..kernels import nearest_center, padded_rows


class SingleClusterWarning(UserWarning):
    """A clustering estimator put all of its (10 or more) points in one cluster.

    Issued at the end of ``fit``; the message names the parameter that controls the number
    of clusters.  One cluster is a legitimate answer (data without structure), but a default
    that gives it on data with classes is a setting to change, not a finding.  Silence it
    with ``warnings.filterwarnings("ignore", category=bayesclust.SingleClusterWarning)``.
    """


#: Fewer points than this may well form one cluster: no warning.
SINGLE_CLUSTER_MIN_SAMPLES = 10


def _warn_if_one_cluster(estimator, change: str) -> None:
    """Issue :class:`SingleClusterWarning` when ``estimator.labels_`` holds one cluster.

    ``change`` says which parameter to change and how (e.g. ``"lower lam"``).  Labels
    ``-1`` (unassigned) do not count as a cluster.
    """
    labels = np.asarray(estimator.labels_)
    if labels.shape[0] < SINGLE_CLUSTER_MIN_SAMPLES:
        return
    if np.unique(labels[labels >= 0]).size == 1:
        warnings.warn(
            f"{type(estimator).__name__} put all {labels.shape[0]} points in one cluster; "
            f"to find more, {change}.", SingleClusterWarning, stacklevel=3)


#: ``n_clusters`` of the estimators that take the number of clusters as given (a fixed-K
#: consensus function, SMIC) when none is: 2, and ``fit`` warns that it is not an estimate.
DEFAULT_N_CLUSTERS = 2


def _warn_default_not_estimate(estimator, default: str, change: str, follows: str = "that default",
                               stacklevel: int = 3) -> None:
    """Warn that ``estimator``'s number of clusters comes from a default, not from the data.

    The message reads "<Name>'s <default>, so its number of clusters follows <follows>,
    not the data: <change>"; ``change`` names the argument to set.
    """
    warnings.warn(f"{type(estimator).__name__}'s {default}, so its number of clusters follows "
                  f"{follows}, not the data: {change}", UserWarning, stacklevel=stacklevel)


def _n_clusters_or_default(estimator) -> int:
    """``estimator.n_clusters``, or :data:`DEFAULT_N_CLUSTERS` with a warning when it is None."""
    if estimator.n_clusters is not None:
        return int(estimator.n_clusters)
    _warn_default_not_estimate(
        estimator, f"n_clusters is the default {DEFAULT_N_CLUSTERS}, a fixed number (this method "
        "does not choose it)", "give n_clusters", stacklevel=4)
    return DEFAULT_N_CLUSTERS


def _warn_if_spherical_fragments(estimator, X, concentration: float, change: str) -> None:
    """Warn when the full-covariance model merges ``estimator.labels_`` into half as many
    clusters or fewer (:func:`_full_covariance_merges`).

    Fragments, not a disagreement over a pair: on average two or more spherical clusters
    per full-covariance cluster.  The full model merges two round clusters a few standard
    deviations apart too (model-based clustering puts iris's versicolor and virginica in
    one; Fraley & Raftery 2002, §8), which says nothing against the spherical model.
    ``concentration`` is the CRP's of the partition's prior, ``change`` says what to try
    instead.
    """
    k = int(estimator.n_clusters_)
    if k < 2 or X.shape[0] <= X.shape[1] + 1:
        return
    k_full, gain = _full_covariance_merges(np.asarray(X, np.float64), np.asarray(estimator.labels_),
                                           float(concentration))
    if 2 * k_full <= k:
        warnings.warn(
            f"the spherical model's {k} clusters merge into {k_full} under a full-covariance "
            f"model (its log p(X, z) {gain:+.1f} nats): they may be pieces of elongated "
            f"clusters; {change}", UserWarning, stacklevel=3)


def _full_covariance_merges(X, labels, alpha: float) -> tuple[int, float]:
    r"""``(k, gain)``: the clusters left when the spherical point partition ``labels`` is
    merged greedily while the full-covariance model's :math:`\log p(X, z)` rises, and that
    rise (nats).

    :math:`\log p(X, z) = \log p(X \mid z) + \log p(z)`: the Normal-inverse-Wishart
    marginal likelihood under :func:`bayesclust.default_gaussian_prior` (Murphy 2007, §9)
    and the CRP(``alpha``) prior of the partition, whose change on merging clusters of
    sizes ``a`` and ``b`` is :math:`\log\Gamma(a+b) - \log\Gamma(a) - \log\Gamma(b)
    - \log\alpha`.  Greedy best-pair merges (the agglomeration of Heller & Ghahramani
    2005 without its tree prior), so ``k`` bounds from above what the full model would
    merge; a full-covariance *fit* is what answers the question.
    """
    from scipy.special import gammaln

    from ..inference.mixtures.gibbs_gaussian import default_gaussian_prior, gaussian_log_marginal

    prior = default_gaussian_prior(X, "full")
    members = [np.flatnonzero(labels == c) for c in np.unique(labels)]

    def logml(idx):
        return gaussian_log_marginal(X[idx], np.zeros(idx.size, np.intp), prior=prior)

    own = [logml(m) for m in members]
    pair: dict = {}
    gain = 0.0
    while len(members) > 1:
        best, best_delta = None, 0.0
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                key = (members[a][0], members[b][0], members[a].size, members[b].size)
                if key not in pair:
                    pair[key] = logml(np.concatenate([members[a], members[b]]))
                na, nb = members[a].size, members[b].size
                delta = (pair[key] - own[a] - own[b] + gammaln(na + nb) - gammaln(na)
                         - gammaln(nb) - np.log(alpha))
                if delta > best_delta:
                    best, best_delta = (a, b), delta
        if best is None:
            break
        a, b = best
        merged = np.concatenate([members[a], members[b]])
        own_merged = pair[(members[a][0], members[b][0], members[a].size, members[b].size)]
        members = [m for i, m in enumerate(members) if i not in best] + [merged]
        own = [o for i, o in enumerate(own) if i not in best] + [own_merged]
        gain += best_delta
    return len(members), float(gain)


def _key_from_random_state(random_state) -> jax.Array:
    """Turn a scikit-learn ``random_state`` into a JAX PRNG key."""
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return jax.random.PRNGKey(seed)


def _lam_from_n_clusters(X, n_clusters: int) -> float:
    """DP-means penalty by farthest-first for ``n_clusters`` clusters (capped at n)."""
    lam = farthest_first_lambda(X, min(n_clusters, X.shape[0]))
    if lam > 0:
        return lam
    # Fewer distinct points than the hint: a tiny penalty separates every distinct point.
    # "Tiny" relative to the data's spread S (the largest squared distance to the mean):
    # the smallest penalty the working dtype still holds in the data's unit frame, so that
    # it neither flushes to zero nor depends on the data's units (a factor 2**10 above the
    # normal minimum covers a unit frame centred on a weighted mean).
    spread = farthest_first_lambda(X, 1)
    fi = np.finfo(V.working_dtype(np.asarray(X).dtype))
    if spread == 0:
        return float(np.finfo(np.float32).tiny)
    return 1024.0 * spread * float(fi.tiny)


def _default_lam(X) -> float:
    r"""The penalty of ``DPMeans()`` without ``lam`` or ``n_clusters``:
    :math:`\lambda = s^2\, \chi^2_{d}(1 - 1/n)`.

    :math:`s^2 = \operatorname{tr}(\hat\Sigma)/d` is the data's mean per-feature variance
    and :math:`\chi^2_d(q)` the chi-squared quantile with ``d`` degrees of freedom: the
    squared distance from the mean beyond which ``n`` draws of one spherical Gaussian with
    the data's spread put fewer than one point in expectation.  DP-means opens a cluster
    for a point farther than ``lam`` from every centre, so a cluster opens only where one
    Gaussian of the data's own spread would not reach.  It scales with the data (no
    unit dependence) and with the dimension as the chi-squared tail does, which the total
    variance alone does not (``lam = tr(Sigma)`` gave 45 clusters on standardised wine).
    """
    from scipy.stats import chi2

    X = np.asarray(X, np.float64)
    n, d = X.shape
    s2 = float(np.mean((X - X.mean(0)) ** 2))
    if not s2 > 0:
        return _lam_from_n_clusters(X, 1)  # identical rows: one cluster at any penalty
    return s2 * float(chi2.ppf(1.0 - 1.0 / max(n, 2), d))


def _nearest_labels(estimator, X) -> np.ndarray:
    """Index of the nearest fitted centre (``cluster_centers_``) of every row of ``X``: the
    ``predict`` of the hard limits and of discriminative clustering."""
    check_is_fitted(estimator)
    X = validate_data(estimator, X, dtype=[np.float64, np.float32], reset=False)
    X = X.astype(jax.dtypes.canonicalize_dtype(X.dtype), copy=False)
    centers = np.asarray(estimator.cluster_centers_, X.dtype)
    # Scaled by a power of two (exact: the same cells) so that the largest value lies
    # in [0.5, 1): squared distances of float32 data near 1e19 or 1e-19 would over- or
    # underflow and every point would go to one centre.
    big = max(float(np.max(np.abs(X), initial=0.0)), float(np.max(np.abs(centers), initial=0.0)))
    if 0.0 < big < np.inf:
        e = math.frexp(big)[1]
        X, centers = np.ldexp(X, -e).astype(X.dtype), np.ldexp(centers, -e).astype(X.dtype)
    # Padded (rows to a shape bucket, centres to a power of two, masked): one
    # compiled program serves many sizes.
    n, k = X.shape[0], centers.shape[0]
    Xp = np.zeros((padded_rows(n), X.shape[1]), X.dtype)
    Xp[:n] = X
    Cp = np.zeros((max(8, 1 << (k - 1).bit_length()), X.shape[1]), X.dtype)
    Cp[:k] = centers
    return np.asarray(_nearest_index(Xp, Cp, np.int32(k)))[:n].astype(np.intp)


@jax.jit
def _nearest_index(X, C, k):
    return nearest_center(X, C, jnp.arange(C.shape[0]) < k).index


#: Draws per chain a fitted sampled mixture keeps by default (``keep_draws``).
KEEP_DRAWS = 100


class _PointPartitionPredictive:
    r"""``labels_``, ``cluster_centers_``, ``predict_proba`` and ``predict`` of a sampled
    estimator, from its posterior point partition (shared by the DP and HDP mixtures).

    For new points: the posterior predictive probability of joining each cluster of
    the point partition (no new-cluster column), :math:`p(c | x) \propto n_c N(x | m_c,
    (\sigma^2 + s_c^2) I)` with :math:`m_c, s_c^2` the posterior mean and variance of
    :math:`\mu_c` given its members and the posterior mean of :math:`\sigma^2`.
    """

    #: Constraints of the parameters every sampled mixture has.
    _sampler_constraints: dict = {
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "sigma2": [Interval(numbers.Real, 0, None, closed="neither")],
        "rho2": [Interval(numbers.Real, 0, None, closed="neither")],
        "alpha_prior": [dist.Gamma, None],
        "sigma2_prior": [dist.InverseGamma, None],
        "num_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "num_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "thin": [Interval(numbers.Integral, 1, None, closed="left")],
        "num_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "loss": [StrOptions({"binder", "vi"})],
        "progress_bar": ["boolean"],
        "random_state": ["random_state"],
        "keep_draws": [Interval(numbers.Integral, 1, None, closed="left"),
                       StrOptions({"all", "summary"})],
    }

    def _set_posterior(self, X, post, rho2=None):
        """Store ``post`` compacted by ``keep_draws`` and its point partition (``loss``) with
        the predictive's statistics, both of every draw.

        ``rho2``: the prior variance of the means the sampler used (default ``self.rho2``).
        """
        point = np.asarray(post.point_estimate(self.loss))
        labels = np.unique(point, return_inverse=True)[1].reshape(-1)
        self.labels_ = labels.astype(np.intp)
        self.n_clusters_ = int(labels.max()) + 1
        # after the point estimate of every draw, which compact("summary") then keeps
        self.posterior_ = post.compact(self.keep_draws, loss=self.loss)
        self._offset = X.mean(0)
        self._counts = np.bincount(labels, minlength=self.n_clusters_).astype(float)
        if getattr(self, "covariance_type", "spherical") != "spherical":
            # Per-cluster covariances: the predictive needs the members themselves.
            from ..inference.mixtures.gibbs_gaussian import cluster_posterior

            self._X_fit = np.asarray(X, np.float64)
            # The posterior mean m_n of each cluster, as the predictive computes it.
            self.cluster_centers_ = np.stack(
                [mn for _, _, _, mn, _ in cluster_posterior(self._X_fit, self.labels_, self.prior_)])
            return
        sums = np.zeros((self.n_clusters_, X.shape[1]))
        np.add.at(sums, labels, X - self._offset)
        self._sigma2_mean = float(np.mean(post.params["sigma2"]))
        rho2 = self.rho2 if rho2 is None else rho2
        self._mean_var = 1.0 / (1.0 / rho2 + self._counts / self._sigma2_mean)
        self._mean_centred = self._mean_var[:, None] * sums / self._sigma2_mean
        self.cluster_centers_ = self._mean_centred + self._offset

    def predict_proba(self, X):
        """Posterior predictive probability of each point-partition cluster, shape (n, n_clusters_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        from scipy.special import logsumexp

        if getattr(self, "covariance_type", "spherical") != "spherical":
            from ..inference.mixtures.gibbs_gaussian import gaussian_predictive_logpdf

            logp = np.log(self._counts)[None] + gaussian_predictive_logpdf(
                X, self._X_fit, self.labels_, covariance_type=self.covariance_type,
                prior=self.prior_)
            return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        var = self._sigma2_mean + self._mean_var
        d = X.shape[1]
        sq = ((X - self._offset)[:, None, :] - self._mean_centred[None]) ** 2
        logp = np.log(self._counts)[None] - 0.5 * d * np.log(2 * np.pi * var)[None] - sq.sum(-1) / (2 * var)[None]
        return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))

    def predict(self, X):
        """Most probable point-partition cluster of each row of ``X``."""
        return np.argmax(self.predict_proba(X), axis=1).astype(np.intp)
