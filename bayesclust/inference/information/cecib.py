r"""CEC-IB: semi-supervised cross-entropy clustering with an information-bottleneck constraint.

Śmieja & Geiger's CEC-IB clusters ``X`` with Gaussian densities and, optionally,
partial labels (partition-level side information: ``y_partial[i] = -1`` for an
unlabelled point, a category ``0..m-1`` otherwise).  It minimises, over partitions
:math:`\mathcal Y = \{Y_1, \dots, Y_k\}` of ``X`` ([C] Def. 3.3, eq. 10),

.. math::

    E_\beta(\mathcal Y) = \sum_i p_i \Big(-\ln p_i + \tfrac N2 \ln(2\pi e)
        + \tfrac12 \ln\det\Sigma_{Y_i} + \beta\, H(\mathcal Z \mid Y_i \cap X_\ell)\Big),
    \qquad p_i = |Y_i| / |X|,

with :math:`\Sigma_{Y_i}` the maximum-likelihood covariance of cluster :math:`Y_i`
and :math:`H(\mathcal Z \mid Y_i\cap X_\ell)` the entropy (nats) of the label
histogram of the cluster's labelled members.  The first term (cluster-size
entropy) makes superfluous clusters shrink; clusters with fewer than
``max(ceil(eps n), N + 2)`` points are removed, so the number of clusters is
chosen automatically.  ``beta = 0`` (or no labels) is plain CEC (Tabor & Spurek).

The optimiser is Hartigan's: visit every point, move it to the cluster whose
change of cost is the largest decrease, and update the two clusters' means,
covariances, inverses and log-determinants by rank-one formulas (matrix
determinant lemma, Sherman--Morrison), so a visit costs :math:`O(kN^2)`.  It
stops when a full pass moves nothing.  float64 throughout.  With full
covariances the visits run in a compiled JAX loop (``jax.lax.while_loop`` under
``jax.enable_x64``): it evaluates the next few points' moves against the current
statistics together and commits the first point that moves, which is the point
the sequential loop would move next (every visit before it changes nothing), so
the visits, their order and their formulas are those of the NumPy loop; a cluster
that falls below the minimum size is deleted and its points reassigned inside the
loop too, and only an ill-conditioned downdate (checked against the member points)
returns to the host.  On a CPU with the native kernels
(:func:`bayesclust._native.enabled`) the same passes, the per-pass recompute
included, run in one native host call instead (``_native/cecib.cc``), which compiles
nothing per shape.  The diagonal and spherical families, and passes observed by
a callback, run the NumPy loop.  JAX programs (the scan, the random starts) are compiled
per padded row count (:func:`bayesclust.kernels.padded_rows`), dimension, number of
clusters and label categories rounded up to a power of two (at least 8).

References
----------
M. Śmieja and B. C. Geiger, "Semi-supervised cross-entropy clustering with
information bottleneck constraint", Information Sciences 421 (2017) 254--271.
J. Tabor and P. Spurek, "Cross-entropy clustering", Pattern Recognition 47 (2014).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ... import _validation as V
from ..hard.kmeans import kmeans_init
from ._cecib_scan import _CHUNK, _SUSPECT_TOL, _scan_fn

__all__ = [
    "CECIBResult",
    "cecib",
    "CECIBState",
    "CECIBInfo",
    "init_cecib_state",
    "cecib_step",
    "cecib_cost",
    "beta_0",
    "critical_beta",
    "cecib_log_density",
]

COVARIANCE_TYPES = ("full", "diagonal", "spherical")
_LN_2PIE = math.log(2.0 * math.pi * math.e)
_SINGULAR_TOL = 1e-10  # downdate factor 1 - v'S^-1 v/(n-1) at or below this counts as singular (round-off gives either sign)
_EIG_TOL = 1e-12  # a covariance with eigenvalues <= _EIG_TOL * largest counts as singular


def _logdet_pd(C: np.ndarray) -> float:
    """log det of a covariance, ``-inf`` when it is (numerically) singular.

    ``slogdet`` of an exactly singular matrix built from data (duplicate or
    collinear points) returns a finite, round-off-sized determinant; the relative
    eigenvalue floor catches those.
    """
    w = np.linalg.eigvalsh(C)
    if not w[-1] > 0 or w[0] <= _EIG_TOL * w[-1]:
        return -np.inf
    return float(np.sum(np.log(w)))


class CECIBResult(NamedTuple):
    """Result of :func:`cecib` (the lowest-cost restart).

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` (surviving slots in index order).
    centers : ndarray, shape (n_clusters, d)
        The cluster means.
    covariances : ndarray, shape (n_clusters, d, d)
        Maximum-likelihood covariances of the family (diagonal matrices for
        ``"diagonal"`` and ``"spherical"``).
    weights : ndarray, shape (n_clusters,)
        Cluster proportions ``|Y_i| / n``.
    n_clusters : int
        Surviving clusters (``<=`` the starting number).
    objective : float
        The minimised cost :math:`E_\\beta` of the returned partition (recomputed
        from scratch).
    objective_trace : ndarray, shape (n_iter + 1,)
        The minimised cost :math:`E_\\beta` after the initialisation and after every
        pass of the best start, non-increasing.
    n_iter : int
        Passes over the data of the best restart, the last (move-free) pass included.
    converged : bool
        True when the last pass moved no point (before ``max_iter``).
    label_counts : ndarray of int64, shape (n_clusters, n_categories)
        Labelled members of each cluster per category (``n_categories = 0`` without labels).
    restart_objectives : ndarray, shape (n_init,)
        Final (minimised) cost of every start.
    """

    labels: np.ndarray
    centers: np.ndarray
    covariances: np.ndarray
    weights: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    label_counts: np.ndarray
    restart_objectives: np.ndarray


# --------------------------------------------------------------------------- beta


def beta_0() -> float:
    r"""The robust default :math:`\beta_0 = 1 + \ln\sqrt{1 - 2/\pi} / \ln 2 \approx 0.2698`.

    [C] Example 4.1: one-dimensional Gaussian data split at its mean into two
    equally labelled halves; each half-normal has variance
    :math:`\sigma^2 (1 - 2/\pi)`, and :func:`critical_beta` of that split is
    :math:`\beta_0`.  Below it, CEC-IB prefers to keep the Gaussian whole even
    though the labels disagree, which makes it robust to random labels
    (CEC-IB\ :sub:`0` of [C]).

    Examples
    --------
    >>> round(beta_0(), 4)
    0.2698
    """
    return 1.0 + 0.5 * math.log(1.0 - 2.0 / math.pi) / math.log(2.0)


def critical_beta(weights: Any, covariances: Any, merged_covariance: Any) -> float:
    r"""[C] Theorem 4.2: the ``beta`` above which splitting a Gaussian cluster by its labels pays.

    .. math::

        \beta_0 = 1 + \frac{\sum_i \frac{p_i}{2q} \ln\frac{\det\Sigma_i}{\det\Sigma}}
                             {H(p_1/q, \dots, p_k/q)}, \qquad q = \sum_i p_i,

    for clusters of weights :math:`p_i` and covariances :math:`\Sigma_i` (a
    proportional coarsening of the labels) against their union with covariance
    :math:`\Sigma`.  (Main-text eq. 14 writes :math:`q_k` and :math:`q_{k'}`;
    both are ``q``, as in App. F eq. 20.)  Any log base gives the same value.

    Parameters
    ----------
    weights : array_like, shape (k,)
        Positive weights ``p_i`` (any scale; only ``p_i / q`` matters), ``k >= 2``.
    covariances : array_like, shape (k, d, d) or (k,) for d = 1
        Positive-definite covariances of the parts.
    merged_covariance : array_like, shape (d, d) or scalar for d = 1
        Covariance of the merged cluster.

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> round(critical_beta([0.5, 0.5], [1 - 2 / math.pi] * 2, 1.0), 4)
    0.2698
    """
    p = V.check_array(weights, "weights", ndim=1, dtype=None).astype(np.float64)
    if p.shape[0] < 2 or np.any(p <= 0):
        raise ValueError(f"weights must hold at least two positive values, got {p.tolist()}")
    S = np.asarray(V.check_array(covariances, "covariances", ndim=None, dtype=None), np.float64)
    if S.ndim == 1:
        S = S[:, None, None]
    M = np.asarray(V.check_array(merged_covariance, "merged_covariance", ndim=None, dtype=None), np.float64)
    M = M.reshape(1, 1) if M.ndim == 0 else M
    if S.ndim != 3 or S.shape[0] != p.shape[0] or S.shape[1:] != M.shape or M.shape[0] != M.shape[1]:
        raise ValueError(
            f"covariances must have shape (k, d, d) = ({p.shape[0]}, d, d) matching "
            f"merged_covariance (d, d); got {S.shape} and {M.shape}"
        )
    sign, ld = np.linalg.slogdet(S)
    sign_m, ld_m = np.linalg.slogdet(M)
    if np.any(sign <= 0) or sign_m <= 0:
        raise ValueError("covariances and merged_covariance must be positive definite")
    w = p / p.sum()
    H = -float(np.sum(w * np.log(w)))
    return 1.0 + float(np.sum(0.5 * w * (ld - ld_m))) / H


# --------------------------------------------------------------------------- validation


def _check_inputs(X, y_partial, beta, eps, covariance_type, n_categories):
    X = V.check_points(X, "X")  # covariances are squares: their range is that of distances
    n, d = X.shape
    beta = V.check_nonnegative(beta, "beta")
    eps = V.check_nonnegative(eps, "eps")
    if eps >= 1:
        raise ValueError(f"eps must be in [0, 1), got {eps}")
    if covariance_type not in COVARIANCE_TYPES:
        raise ValueError(f"covariance_type must be one of {COVARIANCE_TYPES}, got {covariance_type!r}")
    if y_partial is None:
        z = np.full(n, -1, np.int64)
    else:
        z = V.check_labels(y_partial, "y_partial", n_samples=n)
        if np.any(z < -1):
            raise ValueError(
                f"y_partial must hold -1 (unlabelled) or a category >= 0, got {int(z.min())}"
            )
    if n_categories is None:
        # Categories are nominal: number those present 0..m-1 in increasing order, so any
        # integer ids (1e12 included) cost O(n), as the estimator's class encoding does.
        present, codes = np.unique(z[z >= 0], return_inverse=True)
        z = z.copy()
        z[z >= 0] = codes
        m = present.size
    else:
        m = V.check_int(n_categories, "n_categories", minimum=0)
        if np.any(z >= m):
            bad = np.unique(z[z >= m]).tolist()
            raise ValueError(
                f"y_partial has categories {bad} outside the known categories 0..{m - 1} "
                f"(n_categories={m})"
            )
    return X, z, m, beta, eps


def _min_size_floor(d: int, covariance_type: str) -> int:
    """Fewest points of a cluster with a non-singular MLE covariance (plus one)."""
    return d + 2 if covariance_type == "full" else 3


def _min_cluster_size(n: int, d: int, eps: float, covariance_type: str) -> int:
    """``max(ceil(eps n), N + 2)`` (the ``N + 2`` floor is the authors' demo code's)."""
    return max(int(math.ceil(eps * n - 1e-12)), _min_size_floor(d, covariance_type))


# --------------------------------------------------------------------------- cost


def _xlogx(c):
    c = np.asarray(c, np.float64)
    return np.where(c > 0, c * np.log(np.where(c > 0, c, 1.0)), 0.0)


def _label_entropy(S, L):
    """H = ln L - S / L from S = sum c ln c and L = sum c (0 when L = 0)."""
    L = np.asarray(L, np.float64)
    safe = np.where(L > 0, L, 1.0)
    return np.where(L > 0, np.log(safe) - S / safe, 0.0)


def _cluster_logdet(Xc: np.ndarray, covariance_type: str) -> float:
    """log det of the MLE covariance of the family (``-inf`` when singular)."""
    d = Xc.shape[1]
    diff = Xc - Xc.mean(axis=0)
    if covariance_type == "full":
        return _logdet_pd(diff.T @ diff / Xc.shape[0])
    var = np.mean(diff * diff, axis=0)
    if covariance_type == "diagonal":
        return float(np.sum(np.log(var))) if np.all(var > 0) else -np.inf
    s2 = float(np.sum(var)) / d
    return d * math.log(s2) if s2 > 0 else -np.inf


def cecib_cost(
    X: Any,
    labels: Any,
    y_partial: Any = None,
    *,
    beta: float = 1.0,
    covariance_type: str = "full",
    n_categories: int | None = None,
) -> float:
    r"""CEC-IB cost :math:`E_\beta` of a partition ([C] eq. 10), from scratch, in nats.

    .. math::

        E_\beta = \sum_i \frac{|Y_i|}{n}\Big(-\ln\frac{|Y_i|}{n} + \frac N2\ln(2\pi e)
            + \frac12\ln\det\Sigma_{Y_i} + \beta H(\mathcal Z\mid Y_i\cap X_\ell)\Big)

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        The partition (any integer cluster ids).
    y_partial : array_like of int, shape (n,), optional
        Category of each labelled point, ``-1`` for unlabelled (default: none labelled).
    beta : float, default 1.0
        Weight of the label term, ``>= 0``.
    covariance_type : {"full", "diagonal", "spherical"}
        Gaussian family.  ``"diagonal"``: :math:`\ln\det = \sum_j \ln\sigma_j^2`;
        ``"spherical"``: :math:`\Sigma = (\operatorname{tr}\Sigma_{Y}/N) I`.
    n_categories : int, optional
        Number of known categories (labels must be below it).

    Returns
    -------
    float
        ``-inf`` if some cluster's covariance is singular (too few or collinear members):
        its differential entropy is ``-inf``, so the cost is unbounded below, and a
        ``RuntimeWarning`` names the cluster.  :func:`cecib` never produces such a cluster
        (its minimum cluster size keeps covariances regular); a partition given here is
        scored as it is.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0]])
    >>> round(cecib_cost(X, [0, 0]), 4)  # variance 1: the entropy of N(0, 1), 0.5 ln(2 pi e)
    1.4189
    """
    X, z, m, beta, _ = _check_inputs(X, y_partial, beta, 0.0, covariance_type, n_categories)
    lab = V.check_labels(labels, "labels", n_samples=X.shape[0])
    n, d = X.shape
    total = 0.0
    for c in np.unique(lab):
        idx = lab == c
        nc = int(idx.sum())
        p = nc / n
        ld = _cluster_logdet(X[idx], covariance_type)
        if ld == -math.inf:
            warnings.warn(f"labels: cluster {c} ({nc} points in {d} dimensions) has a singular "
                          "covariance, so its entropy and the cost are -inf", RuntimeWarning,
                          stacklevel=2)
        zc = z[idx]
        zc = zc[zc >= 0]
        H = 0.0
        if zc.size:
            q = np.bincount(zc) / zc.size
            q = q[q > 0]
            H = float(-np.sum(q * np.log(q)))
        total += p * (-math.log(p) + 0.5 * d * _LN_2PIE + 0.5 * ld + beta * H)
    return float(total)


# --------------------------------------------------------------------------- state


class _ClusterStats:
    """Sufficient statistics of the K cluster slots and the labels (host, float64).

    A mutable cache: the rank-one updates of a Hartigan pass write into its
    arrays in place (a move touches two slots' ``d x d`` blocks; rebuilding
    the ``K x d x d`` arrays per move would cost more than the move).  It also
    holds the run's constants (the data, the label categories, ``beta``, the
    family, the deletion threshold ``n_min``).
    """

    def __init__(self, X, z, m, labels, K, beta, covariance_type, n_min=None, native=False):
        self.native = native  # recompute full covariances in the native kernel (when it can)
        self.X = X
        self.z = z
        self.m = m
        self.K = K
        self.beta = beta
        self.cov_type = covariance_type
        self.n_min = n_min
        self.n_total = X.shape[0]
        self.d = X.shape[1]
        self.c0 = 0.5 * self.d * _LN_2PIE
        self.labels = labels.copy()
        self._deleted = np.zeros(K, bool)  # slots removed for good
        self.recompute()

    def copy(self) -> _ClusterStats:
        """A copy whose arrays (the data and categories apart) are its own."""
        new = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray) and name not in ("X", "z"):
                setattr(new, name, value.copy())
        return new

    # -- from scratch ------------------------------------------------------
    def recompute(self):
        if self.native and self._recompute_native():
            return
        X, K, d = self.X, self.K, self.d
        lab = self.labels
        on = lab >= 0
        self.n = np.bincount(lab[on], minlength=K).astype(np.float64)
        self.active = (self.n > 0) & ~self._deleted
        self.mu = np.zeros((K, d))
        self.logdet = np.full(K, np.nan)
        if self.cov_type == "full":
            self.cov = np.zeros((K, d, d))
            self.inv = np.zeros((K, d, d))
        elif self.cov_type == "diagonal":
            self.var = np.zeros((K, d))
        else:
            self.s2 = np.zeros(K)
        for j in np.flatnonzero(self.active):
            Xj = X[lab == j]
            mu = Xj.mean(axis=0)
            diff = Xj - mu
            self.mu[j] = mu
            if self.cov_type == "full":
                C = diff.T @ diff / Xj.shape[0]
                self.cov[j] = C
                ld = _logdet_pd(C)
                self.logdet[j] = ld
                if np.isfinite(ld):
                    self.inv[j] = np.linalg.inv(C)
            elif self.cov_type == "diagonal":
                var = np.mean(diff * diff, axis=0)
                self.var[j] = var
                self.logdet[j] = float(np.sum(np.log(var))) if np.all(var > 0) else -np.inf
            else:
                s2 = float(np.sum(diff * diff)) / (Xj.shape[0] * d)
                self.s2[j] = s2
                self.logdet[j] = d * math.log(s2) if s2 > 0 else -np.inf
        self.counts = np.zeros((K, max(self.m, 1)))
        lz = on & (self.z >= 0)
        if self.m:
            np.add.at(self.counts, (lab[lz], self.z[lz]), 1.0)
        self.L = self.counts.sum(axis=1)
        self.S = _xlogx(self.counts).sum(axis=1)
        self.H = _label_entropy(self.S, self.L)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.E = np.where(self.active, self._cost(self.n, self.logdet, self.H), 0.0)
        self._refresh()

    def _recompute_native(self) -> bool:
        """:meth:`recompute` (full covariances) in the native kernel; False when it could not.

        The kernel declines a covariance that may be singular (the NumPy recompute then
        decides, by its eigenvalue rule).
        """
        from ... import _native

        if (self.cov_type != "full" or self.labels.dtype != np.int64 or not _native.enabled()
                or np.any(self.labels < 0)):
            return False
        K, d = self.K, self.d
        self.n = np.zeros(K)
        self.active = np.zeros(K, bool)
        self.mu = np.zeros((K, d))
        self.cov = np.zeros((K, d, d))
        self.inv = np.zeros((K, d, d))
        self.logdet = np.full(K, np.nan)
        self.counts = np.zeros((K, max(self.m, 1)))
        self.L, self.S, self.H, self.E = (np.zeros(K) for _ in range(4))
        stats = [getattr(self, f) for f in _STAT_FIELDS]
        status = _native.cecib_passes(
            np.ascontiguousarray(self.X, np.float64), np.ascontiguousarray(self.z, np.int64),
            self.labels, self.active, self._deleted, stats, n_min=float(self.n_min or 0),
            tol=0.0, beta=float(self.beta), c0=float(self.c0), pos=0, moved=False, max_passes=0)[0]
        if status != 0:
            return False
        self._refresh()
        return True

    def _cost(self, n, logdet, H):
        """Per-cluster cost, eq. 11 (vectorised; ``n = 0`` gives 0)."""
        p = n / self.n_total
        # Empty slots give NaN here (callers silence the warnings and mask inactive slots).
        return p * (self.c0 + 0.5 * logdet + self.beta * H - np.log(p))

    def _cost1(self, n: float, logdet: float, H: float) -> float:
        """Scalar :meth:`_cost` for one cluster with ``n >= 1`` points."""
        p = n / self.n_total
        return p * (self.c0 + 0.5 * logdet + self.beta * H - math.log(p))

    def total(self) -> float:
        return float(np.sum(self.E[self.active]))

    # -- candidates for one point (vectorised over clusters) ---------------
    def _refresh(self):
        """Per-slot constants of :meth:`add_candidates` (after any change of n, logdet, H)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            n1 = self.n + 1.0
            self._inv_n1 = 1.0 / n1
            self._ratio = self.n / n1
            self._ldr = self.logdet + self.d * np.log(self._ratio)
            p1 = n1 / self.n_total
            self._half_p1 = 0.5 * p1
            self._p1 = p1
            self._base1 = p1 * (self.c0 - np.log(p1))  # p (c0 - ln p), without the label term
            self._base1_h = self._base1 + p1 * self.beta * self.H

    def add_candidates(self, x, zi):
        """Costs of every slot with x added, and the pieces to commit: (E+, logdet+, H+, S+, aux).

        Empty slots give NaN or garbage; callers mask them with ``active``.
        """
        v = x - self.mu
        if self.cov_type == "full":
            w = np.matmul(self.inv, v[:, :, None])[:, :, 0]
            q = (v * w).sum(axis=1)
            ld = self._ldr + np.log1p(q * self._inv_n1)
            aux = (v, w, q)
        elif self.cov_type == "diagonal":
            var = self._ratio[:, None] * (self.var + v * v * self._inv_n1[:, None])
            ld = np.log(var).sum(axis=1)
            aux = var
        else:
            s2 = self._ratio * (self.s2 + (v * v).sum(axis=1) * self._inv_n1 / self.d)
            ld = self.d * np.log(s2)
            aux = s2
        if zi >= 0:
            c = self.counts[:, zi]
            S = self.S - _xlogx(c) + _xlogx(c + 1.0)
            H = _label_entropy(S, self.L + 1.0)
            E = self._base1 + self._p1 * self.beta * H + self._half_p1 * ld
        else:
            S, H = self.S, self.H
            E = self._base1_h + self._half_p1 * ld
        return E, ld, H, S, aux

    def remove_candidate(self, a, x, zi, i=None):
        """Cost of slot ``a`` without x (``+inf`` when that makes its covariance singular).

        ``i`` (the index of x) lets a suspiciously small determinant-lemma factor be
        checked against the covariance of the remaining member points.
        """
        n = self.n[a]
        v = x - self.mu[a]
        r = n / (n - 1.0)
        singular = False
        if self.cov_type == "full":
            w = self.inv[a] @ v
            q = float(v @ w)
            f = 1.0 - q / (n - 1.0)
            if f <= _SUSPECT_TOL and i is not None:
                rest = self.X[(self.labels == a) & (np.arange(self.n_total) != i)]
                diff = rest - rest.mean(axis=0)
                ld = _logdet_pd(diff.T @ diff / rest.shape[0])
                singular = not np.isfinite(ld)
                aux = (v, w, q, True)  # exact: the commit recomputes the slot
            else:
                singular = f <= _SINGULAR_TOL
                ld = self.logdet[a] + self.d * math.log(r) + (math.log(f) if not singular else -np.inf)
                aux = (v, w, q, False)
        elif self.cov_type == "diagonal":
            var = r * (self.var[a] - v * v / (n - 1.0))
            singular = bool(np.any(var <= _SINGULAR_TOL * r * self.var[a]))
            ld = float(np.sum(np.log(np.maximum(var, 1e-300))))
            aux = var
        else:
            s2 = r * (self.s2[a] - float(v @ v) / (self.d * (n - 1.0)))
            singular = s2 <= _SINGULAR_TOL * r * self.s2[a]
            ld = self.d * math.log(max(s2, 1e-300))
            aux = s2
        if zi >= 0:
            c = float(self.counts[a, zi])
            S = float(self.S[a]) - c * math.log(c) + ((c - 1.0) * math.log(c - 1.0) if c > 1 else 0.0)
            L = float(self.L[a]) - 1.0
            H = math.log(L) - S / L if L > 0 else 0.0
        else:
            S, H = self.S[a], self.H[a]
        E = np.inf if singular else self._cost1(n - 1.0, ld, H)
        return E, ld, H, S, aux

    # -- commits (rank-one) -------------------------------------------------
    def commit_add(self, j, x, zi, E, ld, H, S, aux):
        n = self.n[j]
        r = n / (n + 1.0)
        v = x - self.mu[j]
        self.mu[j] += v / (n + 1.0)
        if self.cov_type == "full":
            _, w, q = aux
            self.cov[j] = r * (self.cov[j] + np.outer(v, v) / (n + 1.0))
            # (S + u u^T)^-1 = S^-1 - (S^-1 u)(S^-1 u)^T / (1 + u^T S^-1 u), u = v / sqrt(n + 1)
            self.inv[j] = (self.inv[j] - np.outer(w, w) / (n + 1.0 + q)) / r
        elif self.cov_type == "diagonal":
            self.var[j] = aux
        else:
            self.s2[j] = aux
        self.logdet[j] = ld
        self.n[j] = n + 1.0
        if zi >= 0:
            self.counts[j, zi] += 1.0
            self.L[j] += 1.0
        self.S[j] = S
        self.H[j] = H
        self.E[j] = E
        self._refresh()

    def commit_remove(self, a, x, zi, E, ld, H, S, aux):
        n = self.n[a]
        r = n / (n - 1.0)
        v = x - self.mu[a]
        self.mu[a] -= v / (n - 1.0)
        if self.cov_type == "full":
            _, w, q, _exact = aux
            self.cov[a] = r * (self.cov[a] - np.outer(v, v) / (n - 1.0))
            # (S - u u^T)^-1 = S^-1 + (S^-1 u)(S^-1 u)^T / (1 - u^T S^-1 u), u = v / sqrt(n - 1)
            self.inv[a] = (self.inv[a] + np.outer(w, w) / (n - 1.0 - q)) / r
        elif self.cov_type == "diagonal":
            self.var[a] = aux
        else:
            self.s2[a] = aux
        self.logdet[a] = ld
        self.n[a] = n - 1.0
        if zi >= 0:
            self.counts[a, zi] -= 1.0
            self.L[a] -= 1.0
        self.S[a] = S
        self.H[a] = H
        self.E[a] = E
        self._refresh()

    def recompute_slot(self, a):
        """Statistics of slot ``a`` from its member points (after an ill-conditioned downdate)."""
        Xa = self.X[self.labels == a]
        self.mu[a] = Xa.mean(axis=0)
        diff = Xa - self.mu[a]
        C = diff.T @ diff / Xa.shape[0]
        self.cov[a] = C
        self.inv[a] = np.linalg.inv(C)
        self.logdet[a] = _logdet_pd(C)
        self.E[a] = self._cost1(self.n[a], self.logdet[a], self.H[a])
        self._refresh()

    def delete(self, a):
        """Remove slot ``a`` for good (its points must be reassigned by the caller)."""
        self._deleted[a] = True
        self.active[a] = False
        self.E[a] = 0.0
        self.n[a] = 0.0
        self._refresh()

    def assign_greedy(self, i):
        """Put unassigned point i into the active cluster of smallest cost increase."""
        x, zi = self.X[i], int(self.z[i])
        E, ld, H, S, aux = self.add_candidates(x, zi)
        inc = np.where(self.active, E - self.E, np.inf)
        inc[np.isnan(inc)] = np.inf
        j = int(np.argmin(inc))
        if not np.isfinite(inc[j]):
            raise ValueError("X is degenerate: no cluster with a non-singular covariance can take a point")
        self.commit_add(j, x, zi, E[j], ld[j], H[j], S[j], _pick(aux, j))
        self.labels[i] = j


def _pick(aux, j):
    if isinstance(aux, tuple):
        return tuple(a[j] if np.ndim(a) else a for a in aux)
    return aux[j]


# --------------------------------------------------------------------------- Hartigan


def _drop_small(state: _ClusterStats, n_min: int) -> bool:
    """Remove slots below ``n_min`` points or with a singular covariance; reassign their points.

    Returns True when a slot was removed (the statistics then need a recompute)."""
    bad = state.active & ((state.n < n_min) | ~np.isfinite(state.logdet))
    if not bad.any():
        return False
    if not (state.active & ~bad).any():
        # Keep the largest non-singular slot, or fail when none is usable.
        ok = state.active & np.isfinite(state.logdet)
        if not ok.any():
            raise ValueError(
                "X is degenerate: every starting cluster has a singular covariance "
                "(duplicate or collinear points); reduce the dimension (e.g. PCA)"
            )
        keep = int(np.argmax(np.where(ok, state.n, -1)))
        bad[keep] = False
    moved = np.flatnonzero(np.isin(state.labels, np.flatnonzero(bad)))
    for a in np.flatnonzero(bad):
        state.delete(a)
    state.labels[moved] = -1
    for i in moved:
        state.assign_greedy(i)
    return True


class CECIBState(NamedTuple):
    """State of one CEC-IB run (one start) between two Hartigan passes.

    Made by :func:`init_cecib_state`, advanced by :func:`cecib_step`;
    :func:`cecib` loops over the step from every start.  Host NumPy, float64 (a full-covariance
    pass runs its visits in a compiled JAX loop and returns host arrays).

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster slot of every point, ``0..n_clusters-1`` of the start; slots of
        deleted clusters are never used again.
    active : ndarray of bool, shape (K,)
        Live cluster slots.
    objective : float
        :math:`E_\\beta` of this state (nats), summed from the per-slot costs.
    objective_trace : ndarray, shape (n_iter + 1,)
        The objective after the initialisation and after every pass.
    n_iter : int
        Passes done.
    converged : bool
        The last pass moved no point.
    stats : object
        The cluster statistics (counts, means, covariances with their
        inverses and log-determinants, label histograms) and the run's
        constants (data, categories, ``beta``, family, deletion threshold);
        private, read-only for callers.  A pass updates statistics by rank-one
        formulas in place, which is what keeps a move at :math:`O(kN^2)`, so
        :func:`cecib_step` works on a copy (one per pass, ``O(K N^2 + n)``) and
        never changes its input state.
    """

    labels: np.ndarray
    active: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    stats: Any


class CECIBInfo(NamedTuple):
    """Diagnostics of one :func:`cecib_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The pass moved at least one point.
    """

    objective: float
    changed: bool


def _init_state(X, z, m, labels0, K, beta, n_min, covariance_type, native=False) -> CECIBState:
    """:func:`init_cecib_state` on validated arguments (``native``: recompute in the native kernel)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        st = _ClusterStats(X, z, m, labels0, K, beta, covariance_type, n_min, native)
        if _drop_small(st, n_min):
            st.recompute()
        total = st.total()
    return CECIBState(st.labels, st.active, total, np.asarray([total]), 0, False, st)


def _visit(st: _ClusterStats, i: int, tol, on_move=None) -> bool:
    """One Hartigan visit of point ``i``, in place; True when it moved."""
    a = int(st.labels[i])
    x, zi = st.X[i], int(st.z[i])
    Ea, ld_a, H_a, S_a, aux_a = st.remove_candidate(a, x, zi, i)
    if not np.isfinite(Ea):
        return False
    E, ld, H, S, aux = st.add_candidates(x, zi)
    gain = np.where(st.active, st.E + (st.E[a] - Ea) - E, -np.inf)
    gain[a] = 0.0
    j = int(gain.argmax())
    if gain[j] <= tol:
        return False
    st.commit_remove(a, x, zi, Ea, ld_a, H_a, S_a, aux_a)
    st.commit_add(j, x, zi, E[j], ld[j], H[j], S[j], _pick(aux, j))
    st.labels[i] = j
    if st.cov_type == "full" and aux_a[3]:
        st.recompute_slot(a)
    if on_move is not None:
        on_move("move", i, a, j, float(gain[j]), st)
    if st.n[a] < st.n_min:
        members = np.flatnonzero(st.labels == a)
        st.delete(a)
        st.labels[members] = -1
        for p in members:
            st.assign_greedy(p)
        if on_move is not None:
            on_move("delete", i, a, -1, 0.0, st)
    return True


def _end_pass(st: _ClusterStats) -> None:
    st.recompute()  # from scratch: no drift of the rank-one updates across passes
    if not np.all(np.isfinite(st.logdet[st.active])):
        # round-off let a cluster become singular (duplicate/collinear points): remove it
        _drop_small(st, st.n_min)
        st.recompute()


def _pass(st: _ClusterStats, tol, on_move=None) -> bool:
    """One Hartigan pass over the points, in place; True when a point moved (NumPy loop)."""
    switched = False
    for i in range(st.X.shape[0]):
        switched |= _visit(st, i, tol, on_move)
    _end_pass(st)
    return switched


_STAT_FIELDS = ("mu", "cov", "inv", "logdet", "n", "counts", "L", "S", "H", "E")


def _pass_compiled(st: _ClusterStats, tol) -> bool:
    """:func:`_pass` for full covariances with the visits in a compiled loop.

    The same visits in the same order with the same formulas (float64): the
    compiled scan (:func:`_scan_impl`) makes every visit except the rare ones that
    need the member points (an ill-conditioned downdate, a cluster deletion),
    which it hands back to the host's :func:`_visit`.
    """
    import jax
    import jax.numpy as jnp

    from ...kernels import padded_rows

    n = st.X.shape[0]
    scan = _scan_fn()
    switched = False
    with jax.enable_x64(True):
        rows = padded_rows(n) + _CHUNK  # a chunk read at the last point stays in the buffer
        if getattr(st, "_dev_rows", None) != rows:
            Xp = np.zeros((rows, st.d))
            Xp[:n] = st.X
            zp = np.full(rows, -1, np.int64)
            zp[:n] = st.z
            st._dev_rows = rows
            st._dev_data = (jnp.asarray(Xp), jnp.asarray(zp))
        Xp, zp = st._dev_data
        consts = (jnp.asarray(n, jnp.int32), jnp.asarray(float(st.n_min)), jnp.asarray(float(tol)),
                  jnp.asarray(float(st.beta)), jnp.asarray(float(st.c0)))
        # label columns padded to a power of two, at least 8: one program serves 0-8, 9-16, ...
        # categories (a draw of partial labels that misses a class compiles nothing new)
        m_cols = st.counts.shape[1]
        cols = max(8, 1 << (m_cols - 1).bit_length())
        pos = 0
        while pos < n:
            lab = np.zeros(rows, np.int64)
            lab[:n] = st.labels
            stats = [getattr(st, f) for f in _STAT_FIELDS]
            stats[5] = np.pad(stats[5], ((0, 0), (0, cols - stats[5].shape[1])))
            stats = [jnp.asarray(a) for a in stats]
            out = scan(Xp, zp, jnp.asarray(lab), *stats, jnp.asarray(st.active),
                       jnp.asarray(pos, jnp.int32), *consts)
            out = jax.device_get(out)
            st.labels[:] = out[0][:n]
            for f, value in zip(_STAT_FIELDS, out[1:11], strict=True):
                setattr(st, f, np.array(value))
            st.counts = st.counts[:, :m_cols]
            active = np.array(out[11])
            st._deleted |= st.active & ~active
            st.active = active
            with np.errstate(divide="ignore", invalid="ignore"):
                st._refresh()
            pos, host, moved, fail = int(out[12]), bool(out[13]), bool(out[14]), bool(out[15])
            if fail:
                raise ValueError("X is degenerate: no cluster with a non-singular covariance can take a point")
            switched |= moved
            if host:
                with np.errstate(divide="ignore", invalid="ignore"):
                    switched |= _visit(st, pos, tol)
                pos += 1
    _end_pass(st)
    return switched


def _passes_native(st: _ClusterStats, tol, max_passes: int) -> tuple[list, list]:
    """Up to ``max_passes`` passes of :func:`_pass` (full covariances) in the native kernel.

    The same visits in the same order with the same formulas (float64), the
    from-scratch recompute of every pass included
    (:func:`bayesclust._native.cecib_passes`); the rare visits that need the member
    points (an ill-conditioned downdate) and the end of a pass that may have left a
    singular covariance are made here by :func:`_visit` and :func:`_end_pass`.  Stops
    after the first pass that moves nothing.  Returns the objective after every pass
    and whether it moved a point.
    """
    from ... import _native

    X = np.ascontiguousarray(st.X, np.float64)
    z = np.ascontiguousarray(st.z, np.int64)
    totals: list = []
    moved_of: list = []
    pos, moved = 0, False
    while len(totals) < max_passes:
        stats = [getattr(st, f) for f in _STAT_FIELDS]
        status, pos, moved, trace, mv = _native.cecib_passes(
            X, z, st.labels, st.active, st._deleted, stats, n_min=float(st.n_min), tol=float(tol),
            beta=float(st.beta), c0=float(st.c0), pos=pos, moved=moved,
            max_passes=max_passes - len(totals))
        totals += trace.tolist()
        moved_of += mv.tolist()
        with np.errstate(divide="ignore", invalid="ignore"):
            st._refresh()
            if status == 0:
                break
            if status == 3:
                raise ValueError("X is degenerate: no cluster with a non-singular covariance can take a point")
            if status == 1:  # an ill-conditioned downdate: the visit needs the member points
                moved |= _visit(st, pos, tol)
                pos += 1
                continue
            _end_pass(st)  # status 2: a covariance may be singular
            totals.append(st.total())
            moved_of.append(moved)
        if not moved:
            break
        pos, moved = 0, False
    return totals, moved_of


def _native_pass_ok(covariance_type: str, on_move, compiled) -> bool:
    """Whether the passes run in the native kernel (full covariances, no callback, CPU kernels on)."""
    if compiled is False or on_move is not None or covariance_type != "full":
        return False
    from ... import _native

    return _native.enabled()


def _step(state: CECIBState, tol, on_move=None, compiled=None) -> tuple[CECIBState, CECIBInfo]:
    """One pass; ``compiled`` (default: full covariances without ``on_move``) picks the compiled
    pass: the native kernel when :func:`bayesclust._native.enabled`, else the JAX scan."""
    st = state.stats.copy()
    if compiled is None:
        compiled = on_move is None and st.cov_type == "full"
    with np.errstate(divide="ignore", invalid="ignore"):
        if compiled and _native_pass_ok(st.cov_type, on_move, compiled):
            totals, moved_of = _passes_native(st, tol, 1)
            switched, total = moved_of[0], totals[0]
        else:
            switched = _pass_compiled(st, tol) if compiled else _pass(st, tol, on_move)
            total = st.total()
    new = CECIBState(st.labels, st.active, total, np.append(state.objective_trace, total),
                     state.n_iter + 1, not switched, st)
    return new, CECIBInfo(total, switched)


def cecib_step(state: CECIBState, *, tol: float = 1e-10) -> tuple[CECIBState, CECIBInfo]:
    r"""One Hartigan pass of CEC-IB ([C] §3.4) on a state.

    Visits every point in order and moves it to the cluster whose cost change
    is the largest decrease (when that exceeds ``tol``), updating the two
    clusters by rank-one formulas; a cluster that falls below ``n_min`` points
    is deleted and its points reassigned one by one to the cluster of
    smallest cost increase.  After the pass every statistic is recomputed
    from scratch.  :func:`cecib` runs this step from
    :func:`init_cecib_state` until a pass moves nothing (``converged``) or
    ``max_iter`` passes; stepping by hand from the same start reproduces a
    restart of it exactly.

    Parameters
    ----------
    state : CECIBState
        Not modified (the pass works on a copy of its statistics).
    tol : float, default 1e-10
        A point moves only if the cost drops by more than ``tol``.

    Returns
    -------
    state : CECIBState
    info : CECIBInfo
        ``objective`` of the returned state and whether a point moved (``changed``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 1, (100, 2)), rng.normal(8, 1, (100, 2))])
    >>> state = init_cecib_state(X, rng.integers(0, 3, 200))
    >>> while not state.converged:
    ...     state, info = cecib_step(state)
    >>> int(state.active.sum()), state.n_iter
    (2, 3)
    """
    tol = V.check_nonnegative(tol, "tol")
    return _step(state, tol)


def init_cecib_state(
    X: Any,
    labels: Any,
    y_partial: Any = None,
    *,
    n_clusters: int | None = None,
    beta: float = 1.0,
    eps: float = 0.05,
    covariance_type: str = "full",
    n_categories: int | None = None,
) -> CECIBState:
    r"""The state of a CEC-IB run from a starting partition.

    Builds the statistics of the ``n_clusters`` slots, then deletes the
    slots below ``n_min = max(ceil(eps n), N + 2)`` points (or with a singular
    covariance) and reassigns their points one by one (as :func:`cecib` does
    before its first pass).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data (float64).  :func:`cecib` works on ``X - X.mean(0)`` (the cost
        is translation invariant; the centring only limits round-off).
    labels : array_like of int, shape (n,)
        Starting partition, ``0..n_clusters-1``.
    y_partial : array_like of int, shape (n,), optional
        Category of each labelled point, ``-1`` for unlabelled.
    n_clusters : int, optional
        Number of starting slots (default ``labels.max() + 1``).
    beta, eps, covariance_type, n_categories
        As in :func:`cecib`.

    Returns
    -------
    CECIBState
    """
    X, z, m, beta, eps = _check_inputs(X, y_partial, beta, eps, covariance_type, n_categories)
    n, d = X.shape
    lab0 = V.check_labels(labels, "labels", n_samples=n)
    K = V.check_class_ids(lab0, "labels", n_clusters, what="the starting clusters",
                          count_name="n_clusters")
    n_min = _check_sizes(n, d, K, eps, covariance_type)
    return _init_state(X, z, m, lab0, K, beta, n_min, covariance_type)


def _check_sizes(n, d, K, eps, covariance_type) -> int:
    """``n_min``, after checking that ``K`` clusters of that size fit in ``n`` points."""
    n_min = _min_cluster_size(n, d, eps, covariance_type)
    floor = _min_size_floor(d, covariance_type)
    if n < floor:
        raise ValueError(
            f"X has {n} samples in d={d} dimensions: a {covariance_type}-covariance cluster "
            f"needs at least {floor} points (d >= cluster size); reduce the dimension"
        )
    if K * n_min > n:
        raise ValueError(
            f"n_clusters={K} is too large for n={n}: every cluster needs at least "
            f"n_min = max(ceil(eps n), {floor}) = {n_min} points, so n_clusters <= {n // n_min}"
        )
    return n_min


def _hartigan(
    X, z, m, labels0, K, beta, n_min, covariance_type, max_iter, tol,
    on_move: Callable | None = None, compiled: bool | None = None,
) -> CECIBState:
    """One Hartigan run from ``labels0``: :func:`cecib_step` until converged or ``max_iter``.

    ``on_move(kind, i, a, j, gain, stats)`` (optional) is called after every
    move (``"move"``) and every deletion (``"delete"``).
    """
    native = _native_pass_ok(covariance_type, on_move, compiled)
    state = _init_state(X, z, m, labels0, K, beta, n_min, covariance_type, native)
    if not state.converged and state.n_iter < max_iter and native:
        # every pass in one native call: the passes of cecib_step, without a copy per pass
        st = state.stats.copy()
        totals, moved_of = _passes_native(st, tol, max_iter - state.n_iter)
        return CECIBState(st.labels, st.active, totals[-1], np.append(state.objective_trace, totals),
                          state.n_iter + len(totals), not moved_of[-1], st)
    while state.n_iter < max_iter and not state.converged:
        state, _ = _step(state, tol, on_move, compiled)
    return state


def _initial_labels(key, X, K, init):
    import jax

    from ...kernels import padded_rows

    n = X.shape[0]
    if init == "random":
        # drawn for the padded row count and cut to n, so that a new n compiles no new
        # program; with JAX's (default) partitionable threefry the first n draws are those of
        # randint(key, (n,), 0, K)
        draws = jax.random.randint(key, (padded_rows(n),), 0, K)
        return np.asarray(draws)[:n].astype(np.int64)

    C = np.asarray(kmeans_init(key, X, K, init="k-means++"), np.float64)
    d2 = np.sum(X * X, axis=1)[:, None] - 2.0 * X @ C.T + np.sum(C * C, axis=1)[None, :]
    return np.argmin(d2, axis=1).astype(np.int64)


def cecib(
    rng_key: Any,
    X: Any,
    n_clusters: int,
    y_partial: Any = None,
    *,
    beta: float = 1.0,
    eps: float = 0.05,
    covariance_type: str = "full",
    init: Any = "random",
    n_init: int = 10,
    max_iter: int = 100,
    tol: float = 1e-10,
    n_categories: int | None = None,
) -> CECIBResult:
    r"""Semi-supervised cross-entropy clustering with an information-bottleneck constraint.

    Minimises :math:`E_\beta` ([C] eq. 10, see :func:`cecib_cost`) by Hartigan
    moves ([C] §3.4) from ``n_init`` starting partitions and keeps the lowest
    cost.  Clusters that fall below ``n_min = max(ceil(eps n), N + 2)`` points
    (or get a singular covariance) are deleted and their points reassigned one
    by one to the cluster of smallest cost increase, so ``n_clusters`` is only
    the starting number.

    Parameters
    ----------
    rng_key : jax key or int
        Seeds the starting partitions.
    X : array_like, shape (n, d)
        Data (computed in float64).
    n_clusters : int
        Starting number of clusters ([C]: twice the number of classes).
    y_partial : array_like of int, shape (n,), optional
        Category ``0..m-1`` of each labelled point, ``-1`` for unlabelled.  None
        (or all ``-1``, or ``beta = 0``) is plain CEC.
    beta : float, default 1.0
        Weight of the label term (``>= 0``).  1 trusts the labels ("CEC-IB₁");
        :func:`beta_0` (~0.27) is robust to wrong labels ("CEC-IB₀").
    eps : float, default 0.05
        Deletion threshold as a fraction of n (the authors' demo code's value;
        [C] does not state it).
    covariance_type : {"full", "diagonal", "spherical"}, default "full"
        Gaussian family ([C] uses full; the others are CEC's families).
    init : {"random", "k-means++"} or array of int, default "random"
        ``"random"``: uniformly random partition ([C] §3.4); ``"k-means++"``:
        k-means++ seeds (:func:`bayesclust.inference.hard.kmeans.kmeans_init`), then
        each point to its nearest seed (the authors' demo code); an array: the
        starting labels of one run (``0..n_clusters-1``).  The random partition
        is the default because it removes superfluous clusters more reliably:
        k-means++ starts tend to split a Gaussian into parts that single-point
        moves cannot merge (on two 200-point blobs started with 4 clusters it
        ended with 3 clusters in 3 of 3 seeds, the random partition with 2 in 3
        of 3; on Iris started with 6, k-means++ kept all 6 in 3 of 5 seeds, random in 1).
    n_init : int, default 10
        Restarts (ignored for an array ``init``).
    max_iter : int, default 100
        Cap on the passes of one run.
    tol : float, default 1e-10
        A point moves only if the cost drops by more than ``tol``.
    n_categories : int, optional
        Number of known categories; labels ``>= n_categories`` are an error.  Default: the
        distinct labels present, numbered in increasing order (any integer ids; the columns
        of ``label_counts`` follow that order).

    Returns
    -------
    CECIBResult

    Raises
    ------
    ValueError
        ``y_partial`` of the wrong length or with values below -1 or outside
        ``n_categories``; ``beta < 0``; fewer than ``N + 2`` points per
        starting cluster (``n < n_clusters * n_min``), i.e. ``d`` too large for
        a non-singular full covariance; degenerate data.

    Notes
    -----
    Rank-one updates (``v = x - \mu``, ``n`` points before the change):
    adding ``x`` gives :math:`\Sigma' = \frac{n}{n+1}(\Sigma + \frac{vv^T}{n+1})`,
    :math:`\ln\det\Sigma' = N\ln\frac{n}{n+1} + \ln\det\Sigma + \ln(1 + \frac{v^T\Sigma^{-1}v}{n+1})`;
    removing it gives :math:`\Sigma' = \frac{n}{n-1}(\Sigma - \frac{vv^T}{n-1})` and
    :math:`\ln(1 - \frac{v^T\Sigma^{-1}v}{n-1})`.  A factor below 1e-6 is
    re-checked against the covariance of the remaining points, and a move that
    leaves a singular covariance (smallest eigenvalue <= 1e-12 x largest:
    duplicate or collinear points) is forbidden (docs/deviations.md#cecib-singular).  Inverses follow
    by Sherman--Morrison.  All
    statistics are recomputed from scratch after every pass.  ``n_iter``
    counts passes including the final move-free one (as scikit-learn's Lloyd
    counts its last, unchanged iteration).

    References
    ----------
    M. Śmieja and B. C. Geiger, Information Sciences 421 (2017), eqs. 10--11, §3.4.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 1, (200, 2)), rng.normal(8, 1, (200, 2))])
    >>> res = cecib(0, X, 4, n_init=2)
    >>> res.n_clusters, res.converged
    (2, True)
    """
    import jax

    X, z, m, beta, eps = _check_inputs(X, y_partial, beta, eps, covariance_type, n_categories)
    n, d = X.shape
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    tol = V.check_nonnegative(tol, "tol")
    n_min = _check_sizes(n, d, K, eps, covariance_type)
    if isinstance(init, str):
        if init not in ("random", "k-means++"):
            raise ValueError(f"init must be 'random', 'k-means++' or an array of labels, got {init!r}")
        keys = jax.random.split(V.as_rng_key(rng_key), n_init)
        starts = [_initial_labels(keys[r], X, K, init) for r in range(n_init)]
    else:
        lab0 = V.check_labels(init, "init", n_samples=n)
        if lab0.min() < 0 or lab0.max() >= K:
            raise ValueError(f"init labels must lie in 0..{K - 1}")
        starts = [lab0]
    Xc = X - X.mean(axis=0)  # harmless: Gaussian entropies, hence the cost, do not change under a shift of X
    best, costs = None, []
    for lab0 in starts:
        state = _hartigan(Xc, z, m, lab0, K, beta, n_min, covariance_type, max_iter, tol)
        costs.append(state.objective)
        if best is None or state.objective < best.objective:
            best = state
    return _result(best, X, np.asarray(costs))


def _result(state: CECIBState, X, costs):
    st = state.stats
    slots = np.flatnonzero(state.active)
    remap = np.full(st.K, -1, np.int64)
    remap[slots] = np.arange(slots.size)
    labels = remap[state.labels]
    k = slots.size
    mu = np.stack([X[labels == j].mean(axis=0) for j in range(k)])
    if st.cov_type == "full":
        cov = st.cov[slots].copy()
    elif st.cov_type == "diagonal":
        cov = np.stack([np.diag(v) for v in st.var[slots]])
    else:
        cov = np.stack([s * np.eye(st.d) for s in st.s2[slots]])
    counts = st.counts[slots, : st.m].astype(np.int64)
    return CECIBResult(
        labels=labels, centers=mu, covariances=cov, weights=st.n[slots] / st.n_total,
        n_clusters=int(k), objective=state.objective, objective_trace=state.objective_trace,
        n_iter=int(state.n_iter), converged=bool(state.converged), label_counts=counts,
        restart_objectives=costs,
    )


def cecib_log_density(X: Any, result: CECIBResult) -> np.ndarray:
    r"""Per-cluster log of :math:`p_j \mathcal N(x \mid \mu_j, \Sigma_j)`, shape (n, n_clusters).

    The CEC assignment rule ([C] eq. 1) for new points is the argmax over clusters.
    """
    X = V.check_array(X, "X").astype(np.float64)
    d = result.centers.shape[1]
    if X.shape[1] != d:
        raise ValueError(f"X has {X.shape[1]} features, the clustering has {d}")
    out = np.empty((X.shape[0], result.n_clusters))
    for j in range(result.n_clusters):
        C = result.covariances[j]
        chol = np.linalg.cholesky(C)
        diff = np.linalg.solve(chol, (X - result.centers[j]).T)
        maha = np.sum(diff * diff, axis=0)
        logdet = 2.0 * np.sum(np.log(np.diag(chol)))
        out[:, j] = math.log(result.weights[j]) - 0.5 * (d * math.log(2 * math.pi) + logdet + maha)
    return out
