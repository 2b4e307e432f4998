r"""The HDP Gaussian mixture beside the hard Gaussian HDP: its :class:`~bayesclust.comparison.path.LimitFamily`.

Kulis & Jordan (2012, §4): with the concentrations tied to the penalties
(:func:`~bayesclust.models.hdp_gmm.hdp_log_concentrations_from_lam`),
:math:`\log\alpha = -\lambda_\ell / (2\sigma^2)` and :math:`\log\gamma = \frac d2
\log(1 + \rho^2/\sigma^2) - \lambda_g / (2\sigma^2)`, the moves of the Chinese restaurant
franchise's Gibbs sampler (Teh et al. 2006, §5.1) become those of the hard Gaussian HDP
(their Algorithm 2) as :math:`\sigma^2 \to 0`.  The CRF state -- the tables of every data set
and the dish of every table -- has the log joint :func:`hdp_log_joint`; as :math:`\sigma^2 \to
0` it goes as :math:`-J / (2\sigma^2)`, with :math:`J` the hard HDP objective of the global
partition with the tables as its local clusters (the :math:`\log(\rho^2/\sigma^2)` of every
dish's marginal cancels against the one in :math:`\log\gamma`).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import gammaln

from .. import _validation as V
from .. import metrics
from ..inference.hard.hard_hdp import hard_hdp, hard_hdp_penalties
from ..inference.mixtures.convergence import ConvergenceWarning
from ..inference.mixtures.hdp_gibbs import gibbs_hdp_gmm
from ..models.hdp_gmm import hdp_log_concentrations_from_lam
from .path import LimitFamily

__all__ = ["HDPLimit", "hdp_log_joint"]


def _log_rising(log_c, m):
    """``log(c (c + 1) ... (c + m - 1)) = log Gamma(c + m) - log Gamma(c)`` from ``log c``.

    Stable for any ``log c`` (``c`` under- or overflows in the small-variance regime).
    """
    if m <= 0:
        return 0.0
    return float(log_c + np.sum(np.logaddexp(log_c, np.log(np.arange(1, m)))))


def hdp_log_joint(Xc, gid, tables, dishes, sigma2, rho2, log_alpha, log_gamma) -> float:
    r"""``log p(tables, dishes, X)`` of the HDP mixture's CRF state, dish means integrated out,
    up to terms that depend on no state.

    Every data set ``j`` seats its ``n_j`` points at tables by CRP(:math:`\alpha`), all
    ``m`` tables take dishes by CRP(:math:`\gamma`) (Teh et al. 2006, §5.1), and the points
    of dish ``p`` (``n_p`` of them, sum :math:`S_p`) share a mean :math:`\mu_p \sim N(0,
    \rho^2 I)`:

    .. math::

        m \log\alpha + \sum_{j,t} \log\Gamma(n_{jt})
        + g \log\gamma - \log\frac{\Gamma(\gamma + m)}{\Gamma(\gamma)}
        + \sum_p \log\Gamma(m_p)
        + \sum_p \Big[-\tfrac d2 \log(1 + n_p\rho^2/\sigma^2)
        + \frac{|S_p|^2}{2\sigma^2 (n_p + \sigma^2/\rho^2)}\Big]
        - \frac{\sum_i |x_i|^2}{2\sigma^2}

    with :math:`n_{jt}` the points at table ``t`` of data set ``j``, :math:`m_p` the tables
    serving dish ``p``, ``g`` the dishes served.  Dropped: each data set's
    :math:`\log\Gamma(\alpha) - \log\Gamma(\alpha + n_j)` and :math:`-\frac{nd}{2}\log(2\pi
    \sigma^2)`, the same for every state; :math:`\Gamma(\gamma + m)/\Gamma(\gamma)` is
    kept, ``m`` being the state's.

    Parameters
    ----------
    Xc : ndarray, shape (n, d)
        The data, centred (the sampler's frame, where the prior mean is 0).
    gid : ndarray of int, shape (n,)
        Data set of every point.
    tables : ndarray of int, shape (n,)
        Table of every point inside its data set (any ids; the same id in two data sets is
        two tables).
    dishes : ndarray of int, shape (n,)
        Global cluster of every point (any ids); every table must lie in one.
    sigma2, rho2 : float
        Within-cluster and prior variances of the means.
    log_alpha, log_gamma : float
        The concentrations, on the log scale.

    Returns
    -------
    float

    Examples
    --------
    Two data sets, one pair of points each, far apart: two dishes beat one.

    >>> import numpy as np
    >>> Xc, gid = np.array([[-1.0], [-1.1], [1.0], [1.1]]), np.array([0, 0, 1, 1])
    >>> one = hdp_log_joint(Xc, gid, [0, 0, 0, 0], [0, 0, 0, 0], 0.01, 1.0, -5.0, -5.0)
    >>> two = hdp_log_joint(Xc, gid, [0, 0, 0, 0], [0, 0, 1, 1], 0.01, 1.0, -5.0, -5.0)
    >>> bool(two > one)
    True
    """
    Xc = np.asarray(Xc, float)
    n, d = Xc.shape
    _, table_size = np.unique(np.stack([gid, tables]), axis=1, return_counts=True)
    served = np.unique(np.stack([gid, tables, dishes]), axis=1)
    if served.shape[1] != len(table_size):
        raise ValueError("tables: a table serves points of several global clusters (dishes)")
    m = len(table_size)
    _, m_p = np.unique(served[2], return_counts=True)
    g = len(m_p)
    _, inv = np.unique(dishes, return_inverse=True)
    n_p = np.bincount(inv.reshape(n)).astype(float)
    S = np.zeros((g, d))
    np.add.at(S, inv.reshape(n), Xc)
    return float(m * log_alpha + gammaln(table_size).sum()
                 + g * log_gamma - _log_rising(log_gamma, m) + gammaln(m_p).sum()
                 - 0.5 * d * np.log1p(n_p * rho2 / sigma2).sum()
                 + np.sum(np.sum(S * S, axis=1) / (n_p + sigma2 / rho2)) / (2.0 * sigma2)
                 - np.sum(Xc * Xc) / (2.0 * sigma2))


def _check_lam_pair(lam):
    """``lam`` as ``(lam_local, lam_global)``, two positive finite numbers."""
    try:
        pair = [V._check_real_scalar(v, "lam") for v in lam]
    except (TypeError, ValueError):
        pair = None
    if pair is None or len(pair) != 2 or not all(np.isfinite(v) and v > 0 for v in pair):
        raise ValueError(f"lam must be a pair (lam_local, lam_global) of positive finite numbers, "
                         f"got {lam!r}")
    return float(pair[0]), float(pair[1])


class HDPLimit(LimitFamily):
    r"""The HDP Gaussian mixture (CRF Gibbs) and the hard Gaussian HDP, tempered by ``sigma2``.

    The chain state is the CRF's seating: ``{"tables": (num_chains, n), "dishes":
    (num_chains, n)}``, every point's table inside its data set and its global cluster,
    in the rows' order; a level continues every chain from it
    (:func:`~bayesclust.inference.mixtures.hdp_gibbs.gibbs_hdp_gmm`'s ``init_tables`` /
    ``init_labels``), the dish means restarting at their points' mean.  The first state
    and the restarted chain's are Algorithm 2's start: one table per data set, all at one
    dish.

    The hard objective of a *global* partition ``z`` (:meth:`objective`) is the hard HDP's
    :math:`J` (Kulis & Jordan 2012, eq. 5) with one local cluster per (data set, global
    cluster) pair present: the least :math:`J` over the local clusterings that ``z``
    allows (the squared distances depend on ``z`` only, and fewer local clusters cost
    less).  It is the objective hard HDP reaches at its fixed points, where step 4 has
    gathered the points of a data set at one global cluster into one local cluster; and it
    is the objective whose :math:`\exp(-J / (2\sigma^2))` the marginal posterior of ``z``
    follows as :math:`\sigma^2 \to 0` (the seating with the fewest tables dominates).

    Parameters
    ----------
    X : array_like, shape (n, d)
    lam : pair of float, optional
        ``(lam_local, lam_global)``, the penalties per local and per global cluster
        (squared distances); default :func:`~bayesclust.hard_hdp_penalties` for
        ``n_local`` and ``n_global``, as :class:`~bayesclust.HardHDP` chooses them.
    group_ids : array_like of int, shape (n,)
        Data set of every row (required).
    n_local, n_global : int, optional
        The desired numbers of local clusters per data set and of global clusters that
        choose ``lam`` when it is None.
    rho2 : float
        Prior variance of the dish means.

    Attributes
    ----------
    scale : float
        ``lam_local``: the path's scale-free axis is ``sigma2 / lam_local``.
    """

    name = "hdp"
    hard_name = "hard HDP"
    temperature_name = "sigma2"
    data_arguments = ("group_ids",)
    hard_types = ("HardHDPResult", "HardHDP")

    def __init__(self, X, *, lam=None, group_ids=None, n_local=None, n_global=None,
                 rho2: float = 100.0):
        if group_ids is None:
            raise ValueError("group_ids is required by model='hdp': the data set of every row of X")
        self.X = V.check_array(X, "X")
        Xs, gid, order, group_order = V.check_groups(self.X, group_ids, name="X")
        V.check_squares_representable(self.X, "X")
        self.group_ids = np.asarray(group_ids)
        self.gid = np.empty_like(gid)
        self.gid[order] = gid  # data set index 0..D-1 of every row, in the rows' order
        self.group_order = group_order
        if lam is None:
            if n_local is None or n_global is None:
                raise ValueError("give lam = (lam_local, lam_global), or n_local and n_global "
                                 "(which choose it by hard_hdp_penalties)")
            lam = hard_hdp_penalties(self.X, n_local, n_global, group_ids=self.group_ids)
        elif n_local is not None or n_global is not None:
            raise ValueError("give lam or n_local / n_global (which choose lam), not both")
        self.lam_local, self.lam_global = _check_lam_pair(lam)
        self.rho2 = V.check_positive(rho2, "rho2")
        self.n_samples, self.d = self.X.shape
        self.scale = self.lam_local
        X64 = np.asarray(self.X, float)
        self._Xc = X64 - X64.mean(0)  # gibbs_hdp_gmm's frame (center=True)

    @classmethod
    def from_hard(cls, hard, X, *, group_ids=None, **data):
        """The family at the penalties of a ``HardHDPResult`` (``lam_local``, ``lam_global``)
        or a fitted ``HardHDP`` (``lam_local_``, ``lam_global_``), on ``X`` (n, d) grouped by
        ``group_ids`` (n,) -- required unless the fit had one data set."""
        if data:
            raise ValueError(f"the HDP mixture reads X and group_ids, not {', '.join(sorted(data))}")
        if X is None:
            raise ValueError("X is required to score partitions by the hard HDP objective")
        fitted = hasattr(hard, "labels_")
        suffix = "_" if fitted else ""
        lam = (getattr(hard, "lam_local" + suffix, None), getattr(hard, "lam_global" + suffix, None))
        centers = getattr(hard, "cluster_centers_" if fitted else "centers", None)
        group_order = getattr(hard, "group_order" + suffix, None)
        if None in lam or centers is None or group_order is None:
            raise TypeError(f"hard must be a HardHDPResult or a fitted HardHDP, got "
                            f"{type(hard).__name__} without lam_local{suffix} / lam_global{suffix}")
        if group_ids is None:
            if len(group_order) != 1:
                raise ValueError(f"group_ids is required: hard was fitted on {len(group_order)} "
                                 "data sets")
            group_ids = np.zeros(len(X), np.int64)
        family = cls(X, lam=lam, group_ids=group_ids)
        d = np.shape(centers)[-1]
        if d != family.d:
            raise ValueError(f"X has {family.d} features but hard's centres have {d}: a hard "
                             "result of other data")
        if len(family.group_order) != len(group_order):
            raise ValueError(f"group_ids names {len(family.group_order)} data sets but hard was "
                             f"fitted on {len(group_order)}")
        if not fitted:
            sizes = np.bincount(family.gid, minlength=len(group_order))
            if not np.array_equal(sizes, [len(z) for z in hard.labels]):
                raise ValueError("group_ids gives data sets of other sizes than hard's")
        return family

    def hard(self):
        return hard_hdp(self.X, self.lam_local, self.lam_global, group_ids=self.group_ids)

    def objective(self, labels) -> float:
        return metrics.hard_hdp_objective(self.X, labels, self.lam_local, self.lam_global,
                                          group_ids=self.group_ids)

    def temperature_max(self) -> float:
        """``max(lam_local + lam_global, largest principal variance of X)``.

        There opening a table with a new dish (cost ``lam_local + lam_global``) is at most
        ``e^{-1/2}`` less likely than with none of the penalty, and one isotropic cluster is
        as wide as the pooled data: the sampler sees a few diffuse clusters.
        """
        X = np.asarray(self.X, float)
        cov = np.cov(X, rowvar=False).reshape(self.d, self.d)
        return max(self.lam_local + self.lam_global, float(np.linalg.eigvalsh(cov)[-1]))

    def _concentrations(self, temperature):
        return hdp_log_concentrations_from_lam(self.lam_local, self.lam_global, temperature,
                                               self.rho2, self.d)

    def initial_states(self, num_chains: int):
        """One table per data set, all at one dish (Algorithm 2's start), for every chain."""
        zeros = np.zeros((num_chains, self.n_samples), np.int64)
        return {"tables": zeros, "dishes": zeros.copy()}

    def restart(self, states, chain: int):
        states = {k: np.array(v, copy=True) for k, v in states.items()}
        states["tables"][chain] = 0
        states["dishes"][chain] = 0
        return states

    def log_target(self, states, temperature) -> np.ndarray:
        log_alpha, log_gamma = self._concentrations(temperature)
        return np.array([
            hdp_log_joint(self._Xc, self.gid, t, z, temperature, self.rho2, log_alpha, log_gamma)
            for t, z in zip(np.asarray(states["tables"]), np.asarray(states["dishes"]))])

    def sample(self, rng_key, temperature, states, *, num_warmup, num_samples):
        log_alpha, log_gamma = self._concentrations(temperature)
        tables, dishes = np.asarray(states["tables"]), np.asarray(states["dishes"])
        with warnings.catch_warnings():
            # One level is short by design: the population, resampled between levels, is
            # what converges.
            warnings.simplefilter("ignore", ConvergenceWarning)
            post = gibbs_hdp_gmm(
                rng_key, self.X, group_ids=self.group_ids, log_alpha=log_alpha,
                log_gamma=log_gamma, sigma2=temperature, rho2=self.rho2, num_warmup=num_warmup,
                num_samples=num_samples, num_chains=len(dishes), thin=1, init_labels=dishes,
                init_tables=tables, progress_bar=False)
        chains = np.asarray(post.labels)
        last = {"tables": np.asarray(post.params["local_labels"])[:, -1].astype(np.int64),
                "dishes": chains[:, -1].astype(np.int64)}
        return last, chains
