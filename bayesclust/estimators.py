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
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .inference.dp_means import dp_means, farthest_first_lambda
from .kernels import nearest_center

__all__ = ["DPMeans"]


def _key_from_random_state(random_state) -> jax.Array:
    """Turn a scikit-learn ``random_state`` into a JAX PRNG key."""
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return jax.random.PRNGKey(seed)


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
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> DPMeans(lam=1.0).fit(X).labels_.tolist()
    [0, 0, 1, 1]
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
    ):
        self.lam = lam
        self.n_clusters_hint = n_clusters_hint
        self.max_iter = max_iter
        self.max_clusters = max_clusters
        self.shuffle = shuffle
        self.random_state = random_state

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
            k = min(self.n_clusters_hint, X.shape[0])
            lam = farthest_first_lambda(X, k)
            if lam <= 0:  # fewer distinct points than k: separate every distinct point
                lam = float(np.finfo(np.float32).tiny)
        else:
            lam = float(self.lam)
        order = None
        if self.shuffle:
            order = np.asarray(jax.random.permutation(_key_from_random_state(self.random_state), X.shape[0]))
        res = dp_means(
            X, lam, sample_weight=sample_weight, max_iter=self.max_iter,
            max_clusters=self.max_clusters, order=order,
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
        nearest = nearest_center(jnp.asarray(X), jnp.asarray(self.cluster_centers_))
        return np.asarray(nearest.index).astype(np.intp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
