"""The DP Gaussian mixture beside DP-means: its :class:`~bayesclust.comparison.path.LimitFamily`.

Kulis & Jordan (2012, §3.1): with :math:`\\alpha = (1 + \\rho^2/\\sigma^2)^{d/2}
\\exp(-\\lambda / (2\\sigma^2))` the Gibbs moves of the DP mixture (their Algorithm 2,
explicit means) become DP-means' moves as :math:`\\sigma^2 \\to 0`, and the posterior of a
partition goes as :math:`\\exp(-J(z) / (2\\sigma^2))` with :math:`J` the DP-means objective.
:func:`small_variance_path` is :func:`~bayesclust.comparison.path.limit_path` of this family
under the DP mixture's own names.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from .. import _validation as V
from .. import metrics
from ..inference.hard.dp_means import dp_means, farthest_first_lambda
from ..inference.mixtures.gibbs import gibbs_dp_gmm
from ..models.dp_gmm import log_alpha_from_lam
from .path import LimitFamily, LimitPath, limit_path

__all__ = ["DPLimit", "small_variance_path", "default_sigma2_max", "dp_log_joint"]


def dp_log_joint(Xc, labels, sigma2, rho2, log_alpha) -> float:
    r"""``log p(z, X | sigma2, rho2, alpha)`` of the DP mixture, means integrated out, up to
    terms that do not depend on ``z``:

    .. math::

        k \log\alpha + \sum_c \Big[\log\Gamma(n_c) - \tfrac d2 \log(1 + n_c\rho^2/\sigma^2)
        + \frac{|S_c|^2}{2\sigma^2 (n_c + \sigma^2/\rho^2)}\Big] - \frac{\sum_i |x_i|^2}{2\sigma^2}

    (the CRP's ``log Gamma(alpha) - log Gamma(alpha + n)`` and ``-(n d / 2) log(2 pi sigma2)``
    are the same for every partition).  ``Xc`` (n, d) is the centred data (the sampler's
    frame, where the prior mean is 0); ``labels`` (n,) any integer ids.
    """
    d = Xc.shape[1]
    _, inv = np.unique(labels, return_inverse=True)
    n_c = np.bincount(inv).astype(float)
    S = np.zeros((len(n_c), d))
    np.add.at(S, inv, Xc)
    return (len(n_c) * log_alpha + gammaln(n_c).sum()
            - 0.5 * d * np.log1p(n_c * rho2 / sigma2).sum()
            + np.sum(np.sum(S * S, axis=1) / (n_c + sigma2 / rho2)) / (2.0 * sigma2)
            - np.sum(Xc * Xc) / (2.0 * sigma2))


def default_sigma2_max(X, lam) -> float:
    """The top of the path: ``max(lam, largest principal variance of X)``.

    There one isotropic component is as wide as the data along its widest direction and
    opening a cluster costs at most ``e^{-1/2}`` in ``alpha``: the sampler sees one or a
    few diffuse clusters, so the path starts before the collapse.
    """
    X = np.asarray(X, float)
    top = float(np.linalg.eigvalsh(np.cov(X, rowvar=False).reshape(X.shape[1], X.shape[1]))[-1])
    return max(float(lam), top)


class DPLimit(LimitFamily):
    """The DP Gaussian mixture (Gibbs) and DP-means, tempered by ``sigma2``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    lam : float, optional
        DP-means penalty (a squared distance); default :func:`farthest_first_lambda` for
        ``n_clusters``.
    n_clusters : int, optional
        The desired number of clusters that chooses ``lam`` when it is None.
    rho2 : float
        Prior variance of the means.
    collapsed : bool
        Integrate the means out in the sampler (Neal's Algorithm 3).  Its limit is not
        DP-means' nearest-centre rule but single-point moves that never raise the objective
        (Hartigan's); the default, Algorithm 2, is the sampler of Kulis & Jordan's theorem.
    """

    name = "dp"
    hard_name = "DP-means"
    temperature_name = "sigma2"

    def __init__(self, X, *, lam=None, n_clusters=None, rho2: float = 100.0,
                 collapsed: bool = False):
        self.X = V.check_array(X, "X")
        if lam is None:
            if n_clusters is None:
                raise ValueError("give lam or n_clusters (which chooses lam by farthest-first)")
            lam = farthest_first_lambda(self.X, V.check_int(n_clusters, "n_clusters", minimum=1))
        self.lam = V.check_positive(lam, "lam")
        self.rho2 = V.check_positive(rho2, "rho2")
        self.collapsed = bool(collapsed)
        self.n_samples, self.d = self.X.shape
        self.scale = self.lam
        X64 = np.asarray(self.X, float)
        self._Xc = X64 - X64.mean(0)

    def hard(self):
        return dp_means(self.X, self.lam)

    def objective(self, labels) -> float:
        return metrics.dp_means_objective(self.X, labels, self.lam)

    def temperature_max(self) -> float:
        return default_sigma2_max(self.X, self.lam)

    def log_target(self, states, temperature) -> np.ndarray:
        log_alpha = float(log_alpha_from_lam(self.lam, temperature, self.rho2, self.d))
        return np.array([dp_log_joint(self._Xc, z, temperature, self.rho2, log_alpha)
                         for z in np.asarray(states)])

    def sample(self, rng_key, temperature, states, *, num_warmup, num_samples):
        log_alpha = float(log_alpha_from_lam(self.lam, temperature, self.rho2, self.d))
        post = gibbs_dp_gmm(
            rng_key, self.X, log_alpha=log_alpha, sigma2=temperature, rho2=self.rho2,
            collapsed=self.collapsed, num_warmup=num_warmup, num_samples=num_samples,
            num_chains=len(states), thin=1, init_labels=np.asarray(states),
            progress_bar=False)
        chains = np.asarray(post.labels)
        return chains[:, -1].astype(np.int64), chains


def small_variance_path(
    rng_key,
    X,
    lam,
    sigma2_grid=None,
    *,
    rho2: float = 100.0,
    num_warmup: int = 30,
    num_samples: int = 20,
    num_chains: int = 16,
    collapsed: bool = False,
    sigma2_max: float | None = None,
    sigma2_min: float | None = None,
    step: float = 10 ** 0.5,
    p_collapse: float = 0.95,
    extend: bool = True,
    progress_bar: bool = False,
) -> LimitPath:
    r"""Anneal the DP mixture's Gibbs sampler as ``sigma2 -> 0`` with ``alpha = alpha_from_lam``.

    :func:`~bayesclust.comparison.path.limit_path` with ``model="dp"`` under the DP
    mixture's names: ``sigma2_grid``, ``sigma2_max``, ``sigma2_min`` are its
    ``temperatures``, ``temperature_max``, ``temperature_min``.  Kulis & Jordan (2012,
    §3.1): the posterior of a partition goes as :math:`\exp(-J(z) / (2\sigma^2))` with
    :math:`J` the DP-means objective, so the path collapses onto DP-means' partition
    (``stop == "hard"``) or onto one of lower objective (``"lower_objective"``: DP-means
    stopped in a local optimum).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    lam : float
        DP-means penalty (a squared distance).
    sigma2_grid : array_like, shape (m,), optional
        Levels to run, decreasing.  Default: from ``sigma2_max`` down by ``step``.
    rho2 : float
        Prior variance of the means.
    num_warmup, num_samples, num_chains, step, p_collapse, extend, progress_bar
        As in :func:`~bayesclust.comparison.path.limit_path`.
    collapsed : bool
        See :class:`DPLimit`.
    sigma2_max : float, optional
        Top level; default :func:`default_sigma2_max`.
    sigma2_min : float, optional
        Floor of the extension; default ``1e-9 lam``.

    Returns
    -------
    LimitPath

    Examples
    --------
    >>> from bayesclust import datasets, farthest_first_lambda
    >>> X, _ = datasets.three_gaussians(0, n_per_cluster=30)
    >>> lam = farthest_first_lambda(X, 3)
    >>> path = small_variance_path(0, X, lam)
    >>> path.stop in ("hard", "lower_objective")  # collapsed before the floor
    True
    >>> bool(path.objective_point[-1] <= path.hard_objective)  # never worse than DP-means
    True
    """
    family = DPLimit(X, lam=lam, rho2=rho2, collapsed=collapsed)
    # The checks of limit_path, under this function's names.
    if sigma2_grid is not None:
        if sigma2_max is not None:
            raise ValueError("give sigma2_grid or sigma2_max, not both")
        sigma2_grid = V.check_array(sigma2_grid, "sigma2_grid", ndim=1, dtype=None).astype(float)
        if np.any(sigma2_grid <= 0):
            raise ValueError("sigma2_grid must contain positive variances")
        if np.any(np.diff(sigma2_grid) >= 0):
            raise ValueError("sigma2_grid must be strictly decreasing (the path anneals)")
    if sigma2_max is not None:
        sigma2_max = V.check_positive(sigma2_max, "sigma2_max")
    if sigma2_min is not None:
        sigma2_min = V.check_positive(sigma2_min, "sigma2_min")
    return limit_path(rng_key, model=family, temperatures=sigma2_grid,
                      temperature_max=sigma2_max, temperature_min=sigma2_min, step=step,
                      num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                      p_collapse=p_collapse, extend=extend, progress_bar=progress_bar)
