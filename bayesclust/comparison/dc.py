"""The tempered DP-MDA2 beside HardDC: its :class:`~bayesclust.comparison.path.LimitFamily` (ours).

Our extension (docs/deviations.md#hard-dc-model): the DP mixture of (point, class) components
of :mod:`bayesclust.models.dp_mda2`, whose class (Polya) factor is tempered by
:math:`\\xi / (2\\sigma^2)`, with :math:`\\alpha = (1 + \\rho^2/\\sigma^2)^{d/2}
\\exp(-\\lambda / (2\\sigma^2))`.  The posterior of a partition goes as
:math:`\\exp(-J(z) / (2\\sigma^2))` with :math:`J` HardDC's objective, so the path collapses
onto HardDC's partition (or one of lower :math:`J`) as :math:`\\sigma^2 \\to 0`.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _validation as V
from .. import metrics
from ..inference.hard.dp_means import farthest_first_lambda
from ..inference.hard.hard_dc import check_classes, hard_dc
from ..inference.mixtures.convergence import ConvergenceWarning
from ..inference.mixtures.dp_mda2_gibbs import gibbs_dp_mda2
from ..models.dp_gmm import log_alpha_from_lam
from .dp import default_sigma2_max, dp_log_joint
from .path import LimitFamily

__all__ = ["DCLimit"]


class DCLimit(LimitFamily):
    """The tempered DP-MDA2 (Gibbs) and HardDC, tempered by ``sigma2`` (ours).

    Parameters
    ----------
    X : array_like, shape (n, d)
    lam : float, optional
        HardDC's penalty per cluster (a squared distance); default farthest-first for
        ``n_clusters``.
    y : array_like of int, shape (n,)
        The auxiliary classes (nominal).
    xi : float
        Weight of the class term (>= 0).
    n0 : float
        Dirichlet prior count per class.
    rho2 : float
        Prior variance of the means.
    collapsed : bool
        Integrate the means out in the sampler; the default, explicit means, is the sampler
        whose limit is HardDC's pass.
    n_clusters : int, optional
        The desired number of clusters that chooses ``lam`` when it is None.
    """

    name = "dc"
    hard_name = "HardDC"
    temperature_name = "sigma2"
    data_arguments = ("y",)
    hard_types = ("HardDCResult", "HardDC")

    @classmethod
    def from_hard(cls, hard, X, *, y=None, **data):
        """The family at the penalties of a ``HardDCResult`` (``lam``, ``xi``, ``n0``) or a
        fitted ``HardDC`` (``lam_``, ``xi``, ``n0``), on ``X`` (n, d) with the classes ``y``
        (n,) the hard result was fitted to."""
        if data:
            raise ValueError(f"discriminative clustering reads X and y, not {', '.join(sorted(data))}")
        if X is None:
            raise ValueError("X is required to score partitions by the HardDC objective")
        fitted = hasattr(hard, "labels_")
        lam = getattr(hard, "lam_" if fitted else "lam", None)
        xi, n0 = getattr(hard, "xi", None), getattr(hard, "n0", None)
        centers = getattr(hard, "cluster_centers_" if fitted else "centers", None)
        if lam is None or xi is None or n0 is None or centers is None:
            raise TypeError(f"hard must be a HardDCResult or a fitted HardDC, got "
                            f"{type(hard).__name__} without {'lam_' if fitted else 'lam'}, xi, n0")
        family = cls(X, lam=lam, y=y, xi=xi, n0=n0)
        d = np.shape(centers)[-1]
        if d != family.d:
            raise ValueError(f"X has {family.d} features but hard's centres have {d}: a hard "
                             "result of other data")
        return family

    def __init__(self, X, *, lam=None, y=None, xi: float = 1.0, n0: float = 1.0,
                 rho2: float = 100.0, collapsed: bool = False, n_clusters=None):
        self.X = V.check_array(X, "X")
        self.n_samples, self.d = self.X.shape
        if y is None:
            raise ValueError("y (the auxiliary classes) is required for model='dc'")
        self.codes, _ = check_classes(y, self.n_samples)
        if lam is None:
            if n_clusters is None:
                raise ValueError("give lam or n_clusters (which chooses lam by farthest-first)")
            lam = farthest_first_lambda(self.X, V.check_int(n_clusters, "n_clusters", minimum=1))
        self.lam = V.check_positive(lam, "lam")
        self.xi = V.check_nonnegative(xi, "xi")
        self.n0 = V.check_positive(n0, "n0")
        self.rho2 = V.check_positive(rho2, "rho2")
        self.collapsed = bool(collapsed)
        self.scale = self.lam
        X64 = np.asarray(self.X, float)
        self._Xc = X64 - X64.mean(0)

    def hard(self):
        return hard_dc(self.X, self.codes, self.lam, self.xi, n0=self.n0)

    def objective(self, labels) -> float:
        return metrics.hard_dc_objective(self.X, self.codes, labels, self.lam, self.xi, self.n0)

    def temperature_max(self) -> float:
        return default_sigma2_max(self.X, self.lam)

    def log_target(self, states, temperature) -> np.ndarray:
        """The DP mixture's collapsed log joint (:func:`~bayesclust.comparison.dp.dp_log_joint`)
        plus ``xi / (2 sigma2) log Polya(y | z)`` (with its normaliser), per chain."""
        log_alpha = float(log_alpha_from_lam(self.lam, temperature, self.rho2, self.d))
        temper = self.xi / (2.0 * temperature)
        return np.array([
            dp_log_joint(self._Xc, z, temperature, self.rho2, log_alpha)
            + temper * metrics.dc_log_posterior(z, self.codes, n0=self.n0, include_norm=True)
            for z in (np.unique(s, return_inverse=True)[1].reshape(-1)
                      for s in np.asarray(states))])

    def sample(self, rng_key, temperature, states, *, num_warmup, num_samples):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # one level is short by design
            post = gibbs_dp_mda2(
                rng_key, self.X, self.codes, lam=self.lam, xi=self.xi, sigma2=temperature,
                rho2=self.rho2, n0=self.n0, collapsed=self.collapsed, num_warmup=num_warmup,
                num_samples=num_samples, num_chains=len(states), init_labels=np.asarray(states),
                progress_bar=False)
        chains = np.asarray(post.labels)
        return chains[:, -1].astype(np.int64), chains
