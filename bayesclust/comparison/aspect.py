r"""The DP mixture of multinomials on co-association rows beside KL-means: its :class:`~bayesclust.comparison.path.LimitFamily`.

Our extension (docs/deviations.md#kl-means): the rows :math:`r_i = C(i, \cdot)` of an
ensemble's co-association counts (with the diagonal) are multinomial draws from their
cluster's :math:`\psi_j \sim \mathrm{Dir}(\beta)`, the likelihood tempered by :math:`1/\tau`
and :math:`\alpha = e^{-\lambda/\tau}` (:mod:`bayesclust.models.dp_multinomial`).  The
tempered posterior of a partition, :math:`\psi` integrated out, is

.. math::

    \log p_\tau(z \mid r) = -\frac{\lambda k}{\tau} + \sum_j \Big[\log\Gamma(n_j)
    + \log \frac{B(\beta + S_j/\tau)}{B(\beta)}\Big] + \mathrm{const}(\tau),

(:math:`S_j` the pooled counts of cluster ``j``, :math:`n_j` its rows), which by Stirling
goes as :math:`\exp(-J(z)/\tau)` with :math:`J` KL-means' objective: the path collapses onto
KL-means' partition or onto one of lower ``J``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from .. import _validation as V
from .. import metrics
from ..inference.consensus.coassociation import coassociation
from ..inference.consensus.ensembles import kmeans_ensemble
from ..inference.hard.kl_means import kl_means, kl_means_lambda
from ..inference.mixtures.multinomial_gibbs import gibbs_dp_multinomial
from .path import LimitFamily

__all__ = ["AspectLimit", "aspect_log_joint"]


def aspect_log_joint(csr, labels, tau: float, lam: float, beta: float) -> float:
    r"""The tempered log joint of a partition, :math:`\psi` integrated out (module docstring), host float64.

    Parameters
    ----------
    csr : scipy.sparse matrix, shape (n, m)
        The count rows.
    labels : array_like of int, shape (n,)
    tau, lam, beta : float

    Returns
    -------
    float
        Up to terms common to every partition at this ``tau`` (the CRP's
        :math:`\log\Gamma(\alpha) - \log\Gamma(\alpha + n)` and the rows' multinomial
        coefficients).
    """
    _, inv = np.unique(np.asarray(labels), return_inverse=True)
    inv = inv.reshape(-1)
    k = int(inv.max()) + 1
    m = csr.shape[1]
    coo = csr.tocoo()
    pooled = sp.csr_matrix((coo.data, (inv[coo.row], coo.col)), shape=(k, m))
    pooled.sum_duplicates()
    sizes = np.bincount(inv, minlength=k).astype(float)
    totals = np.asarray(pooled.sum(axis=1)).ravel()
    S = pooled.data / tau
    polya = (np.sum(gammaln(beta + S) - gammaln(beta))
             - np.sum(gammaln(m * beta + totals / tau) - gammaln(m * beta)))
    return float(-k * lam / tau + np.sum(gammaln(sizes)) + polya)


class AspectLimit(LimitFamily):
    """The tempered DP mixture of multinomials (Gibbs) and KL-means, tempered by ``tau``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features: the default k-means ensemble is built on them (as
        :class:`bayesclust.EvidenceAccumulation` does) unless ``ensemble`` is given.
    lam : float, optional
        KL-means' penalty; default :func:`~bayesclust.inference.hard.kl_means.kl_means_lambda`
        for ``n_clusters``.
    ensemble : array_like (N, n), list of label vectors or Posterior, optional
        The partitions whose co-association rows are clustered.
    n_clusters : int, optional
        The desired number of clusters that chooses ``lam`` when it is None.
    beta : float, default 1
        Symmetric Dirichlet parameter.
    collapsed : bool, default True
        The collapsed (Polya) sampler, whose limit is KL-means' collapsed (Hartigan) moves;
        ``False``: the explicit one (Neal's Algorithm 2), whose limit is KL-means'
        Algorithm 1 moves (the hard side follows: ``kl_means(collapsed=...)``).  The
        explicit sweep draws a log-gamma per category of every cluster and per entry of
        every row (a new cluster's Dirichlet), which make it far slower than the
        collapsed sweep on co-association rows.
    n_partitions : int, default 150
        Partitions of the default ensemble.
    random_state : int, default 0
        Seed of the default ensemble.
    """

    name = "aspect"
    hard_name = "KL-means"
    temperature_name = "tau"
    data_arguments = ("ensemble",)
    hard_types = ("KLMeansResult", "KLMeansConsensus")

    @classmethod
    def from_hard(cls, hard, X, *, ensemble=None, **data):
        """The family at the penalty of a ``KLMeansResult`` (``lam``) or a fitted
        ``KLMeansConsensus`` (``lam_``, and its ``ensemble_`` when ``ensemble`` is None), on
        the co-association rows of ``ensemble`` (m, n); ``X`` (n, d) only gives ``n``."""
        if data:
            raise ValueError(f"the aspect model reads X and ensemble, not {', '.join(sorted(data))}")
        if X is None:
            raise ValueError("X is required by model='aspect' (the rows whose ensemble is clustered)")
        fitted = hasattr(hard, "labels_")
        lam = getattr(hard, "lam_" if fitted else "lam", None)
        if lam is None:
            raise TypeError(f"hard must be a KLMeansResult or a fitted KLMeansConsensus, got "
                            f"{type(hard).__name__} without {'lam_' if fitted else 'lam'}")
        if ensemble is None:
            ensemble = getattr(hard, "ensemble_", None)
            if ensemble is None:
                raise ValueError("ensemble is required with a KLMeansResult: the partitions whose "
                                 "co-association rows it clustered")
        return cls(X, lam=lam, ensemble=ensemble, collapsed=getattr(hard, "collapsed", True))

    def __init__(self, X, *, lam=None, ensemble=None, n_clusters=None, beta: float = 1.0,
                 collapsed: bool = True, n_partitions: int = 150, random_state: int = 0):
        X = V.check_array(X, "X")
        if ensemble is None:
            ensemble = kmeans_ensemble(random_state, X, V.check_int(n_partitions, "n_partitions",
                                                                    minimum=2))
        codes = V.check_ensemble(ensemble)
        if codes.shape[1] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but the ensemble labels "
                             f"{codes.shape[1]} objects")
        self.coassociation = coassociation(codes, allow_missing=bool((codes < 0).any()))
        self._csr = V.check_counts(self.coassociation, "ensemble").csr
        if lam is None:
            if n_clusters is None:
                raise ValueError("give lam or n_clusters (which chooses lam by farthest-first)")
            lam = kl_means_lambda(self.coassociation, V.check_int(n_clusters, "n_clusters",
                                                                  minimum=1))
        self.lam = V.check_positive(lam, "lam")
        self.beta = V.check_positive(beta, "beta")
        self.collapsed = bool(collapsed)
        self.n_samples = X.shape[0]
        self.scale = self.lam
        self._hard = None

    def hard(self):
        if self._hard is None:
            self._hard = kl_means(self.coassociation, self.lam, collapsed=self.collapsed)
        return self._hard

    def objective(self, labels) -> float:
        return metrics.kl_means_objective(self._csr, labels, self.lam)

    def temperature_max(self) -> float:
        """Ten times the largest ``tau`` at which a row of the one-cluster start would open a cluster.

        Walking down from ``lam`` by half decades (to ``1e-12 lam``), the first ``tau`` at
        which some row's collapsed Gibbs odds of opening a cluster against staying in the
        one cluster of all the others exceed 1 (:func:`bayesclust.kernels.polya_move_score`:
        a new cluster pays the Dirichlet's normalisation, so at larger ``tau`` the chains
        started from one cluster stay there whatever the posterior odds of a partition);
        the path starts a decade above it.  ``lam`` when no row would open one.
        """
        csr = self._csr
        n, m = csr.shape
        beta = self.beta
        coo = csr.tocoo()
        pooled = np.asarray(csr.sum(axis=0)).ravel()
        totals = np.asarray(csr.sum(axis=1)).ravel()
        N = float(pooled.sum())
        for t in self.lam * 10.0 ** -np.arange(0.0, 12.01, 0.5):
            v, rest = coo.data / t, (pooled[coo.col] - coo.data) / t
            join = np.bincount(coo.row, gammaln(beta + rest + v) - gammaln(beta + rest), minlength=n)
            join -= gammaln(m * beta + N / t) - gammaln(m * beta + (N - totals) / t)
            new = np.bincount(coo.row, gammaln(beta + v) - gammaln(beta), minlength=n)
            new -= gammaln(m * beta + totals / t) - gammaln(m * beta)
            if np.max(-self.lam / t + new - np.log(max(n - 1, 1)) - join) > 0:
                return float(min(self.lam, 10.0 * t))
        return float(self.lam)

    def log_target(self, states, temperature) -> np.ndarray:
        return np.array([aspect_log_joint(self._csr, z, temperature, self.lam, self.beta)
                         for z in np.asarray(states)])

    def sample(self, rng_key, temperature, states, *, num_warmup, num_samples):
        post = gibbs_dp_multinomial(
            rng_key, self._csr, lam=self.lam, tau=temperature, beta=self.beta,
            collapsed=self.collapsed, num_warmup=num_warmup, num_samples=num_samples,
            num_chains=len(states), init_labels=np.asarray(states), progress_bar=False)
        chains = np.asarray(post.labels)
        return chains[:, -1].astype(np.int64), chains
