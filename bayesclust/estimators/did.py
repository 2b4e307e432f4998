"""Estimators of the dissimilarity-increments family: SL-DID and SL-AGLO (the number of
clusters is found, not given).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ..inference.did_hierarchy import gdid_index, sl_aglo, sl_did

__all__ = ["SLDID", "SLAGLO"]


class SLDID(ClusterMixin, BaseEstimator):
    r"""SL-DID: single link that stops where the 2-DID of the increments says a cluster ends.

    Agglomerates in single link's order; small clusters merge, a cluster whose gap lies in
    the tail of its dissimilarity-increments law is isolated, and two clusters merge when the
    union's increments have the shorter MDL description length (Aidos & Fred 2011).  See
    :func:`bayesclust.inference.did_hierarchy.sl_did`.

    Parameters
    ----------
    tail_factor : float, default 7.0
        A value is in a cluster's tail when it exceeds ``tail_factor`` times its mean increment.
    tail_prob : float in (0, 1) or None, default None
        If given, "in the tail" means a 2-DID tail probability below ``tail_prob`` instead.
    min_size : int, default 6
        Clusters of fewer points merge by single link.

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
        return self


class SLAGLO(ClusterMixin, BaseEstimator):
    r"""SL-AGLO: single link with Fred & Leitão's cluster isolation criterion.

    A cluster is isolated when its gap reaches ``tau`` times its mean increment (the
    exponential model of the increments).  With ``tau="auto"`` every value of ``taus`` is run
    and the partition of smallest G-DID is kept, as Aidos & Fred (2011) choose it.  See
    :func:`bayesclust.inference.did_hierarchy.sl_aglo`.

    Parameters
    ----------
    tau : float or "auto", default "auto"
    taus : array-like of float, default ``1, 2, ..., 10``
        The values tried by ``tau="auto"`` (the paper sweeps from the mean increment to ten
        times it).
    min_size : int, default 6
        Clusters of fewer points merge by single link and are never isolated.

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
            self.gdid_scores_ = np.array([gdid_index(X, r.labels) for r in runs])
            best = int(np.argmin(self.gdid_scores_))
            res, self.tau_ = runs[best], float(taus[best])
        self.labels_ = res.labels
        self.n_clusters_ = res.n_clusters
        self.isolated_ = res.isolated
        return self
