"""Sampled against hard: compare a posterior with its model's small-variance limit.

* :func:`compare` -- a table comparing a :class:`~bayesclust.inference.mixtures.posterior.Posterior`
  with a hard-limit result (k, NMI/ARI against the truth and against each other, the
  DP-means objective of both partitions, time).
* :func:`small_variance_path` -- the Gibbs sampler annealed through decreasing ``sigma2``
  with ``alpha = alpha_from_lam(lam, sigma2, rho2, d)``: how the posterior collapses onto
  the DP-means partition (Kulis & Jordan 2012, §3.1), or onto a partition with a lower
  DP-means objective when DP-means stopped in a local optimum.

The ``bayesclust compare`` jobs (reports and figures) built on these live in
:mod:`bayesclust.jobs`.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import numpy as np
from scipy.special import gammaln

from . import _validation as V
from . import metrics
from .inference.hard.dp_means import dp_means
from .inference.mixtures.convergence import ConvergenceWarning
from .inference.mixtures.gibbs import gibbs_dp_gmm
from .inference.mixtures.posterior import Posterior
from .models.dp_gmm import log_alpha_from_lam

__all__ = ["compare", "ComparisonTable", "small_variance_path", "SmallVariancePath", "score"]


def score(labels_true, labels_pred) -> dict:
    """NMI (arithmetic and geometric), ARI and Hungarian accuracy of a partition."""
    return {
        "nmi": metrics.nmi(labels_true, labels_pred),
        "nmi_geometric": metrics.nmi(labels_true, labels_pred, average_method="geometric"),
        "ari": metrics.ari(labels_true, labels_pred),
        "accuracy": metrics.accuracy(labels_true, labels_pred),
        "n_clusters": metrics.n_clusters(labels_pred),
    }


class ComparisonTable:
    """Rows of a comparison, printable as a table.

    Attributes
    ----------
    rows : list of dict
        One row per method: ``method, k, nmi_truth, ari_truth, nmi_other,
        ari_other, dp_means_objective, seconds`` (and ``p_k`` for a posterior:
        the posterior probability of the hard limit's k).
    """

    columns = ("method", "k", "nmi_truth", "ari_truth", "nmi_other", "ari_other",
               "dp_means_objective", "p_k_hard", "seconds")

    def __init__(self, rows):
        self.rows = rows

    def to_dict(self):
        return {"rows": self.rows}

    def __str__(self):
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                return f"{v:.4g}"
            return str(v)

        table = [self.columns] + [tuple(fmt(r.get(c)) for c in self.columns) for r in self.rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(self.columns))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__


def compare(posterior, hard_result, labels_true=None, *, X=None, loss="vi"):
    """Compare a sampled posterior with a hard-limit result on the same data.

    Parameters
    ----------
    posterior : Posterior
        From :func:`bayesclust.gibbs_dp_gmm` or the NUTS glue.
    hard_result : DPMeansResult
        From :func:`bayesclust.dp_means` (its ``lam`` scores both partitions).
    labels_true : array_like of int, shape (n,), optional
    X : array_like, shape (n, d), optional
        Needed for the DP-means objective of the posterior's point partition.
    loss : {"vi", "binder"}
        Loss of the posterior point estimate (VI by default: Binder's loss tends
        to split off singletons; Wade & Ghahramani 2018).

    Returns
    -------
    ComparisonTable
        Rows "posterior (point)", "posterior (draws, mean)" and "hard".
    """
    if not isinstance(posterior, Posterior):
        raise TypeError("posterior must be a Posterior (e.g. from gibbs_dp_gmm), got "
                        f"{type(posterior).__name__}")
    if not all(hasattr(hard_result, f) for f in ("labels", "n_clusters", "lam")):
        raise TypeError("hard_result must be a DPMeansResult (from dp_means), got "
                        f"{type(hard_result).__name__}")
    point = posterior.point_estimate(loss)
    hard = np.asarray(hard_result.labels)
    V.check_same_length(point, hard, "posterior labels", "hard_result.labels")
    if X is not None:
        X = V.check_array(X, "X")
        if X.shape[0] != len(hard):
            raise ValueError(f"X has {X.shape[0]} rows but posterior and hard_result label "
                             f"{len(hard)} points")
    truth = None if labels_true is None else V.check_labels(labels_true, "labels_true", n_samples=len(hard))
    draws = np.asarray(posterior.labels).reshape(-1, len(hard))
    lam = hard_result.lam

    def objective(labels):
        return None if X is None else metrics.dp_means_objective(X, labels, lam)

    def vs_truth(labels, fn):
        return None if truth is None else fn(truth, labels)

    k_draws = posterior.n_clusters.reshape(-1)
    rows = [
        {
            "method": f"posterior point ({loss}, {posterior.sampler})",
            "k": metrics.n_clusters(point),
            "nmi_truth": vs_truth(point, metrics.nmi),
            "ari_truth": vs_truth(point, metrics.ari),
            "nmi_other": metrics.nmi(hard, point),
            "ari_other": metrics.ari(hard, point),
            "dp_means_objective": objective(point),
            "p_k_hard": float(np.mean(k_draws == hard_result.n_clusters)),
            "seconds": posterior.seconds,
        },
        {
            "method": "posterior draws (mean)",
            "k": float(np.mean(k_draws)),
            "nmi_truth": None if truth is None else float(np.mean([metrics.nmi(truth, d) for d in draws])),
            "ari_truth": None if truth is None else float(np.mean([metrics.ari(truth, d) for d in draws])),
            "nmi_other": float(np.mean([metrics.nmi(hard, d) for d in draws])),
            "ari_other": float(np.mean([metrics.ari(hard, d) for d in draws])),
            "dp_means_objective": None,
            "p_k_hard": None,
            "seconds": None,
        },
        {
            "method": "hard limit (DP-means)",
            "k": hard_result.n_clusters,
            "nmi_truth": vs_truth(hard, metrics.nmi),
            "ari_truth": vs_truth(hard, metrics.ari),
            "nmi_other": metrics.nmi(point, hard),
            "ari_other": metrics.ari(point, hard),
            "dp_means_objective": objective(hard),
            "p_k_hard": None,
            "seconds": getattr(hard_result, "seconds", None),
        },
    ]
    return ComparisonTable(rows)


class SmallVariancePath(NamedTuple):
    """Result of :func:`small_variance_path` (one entry per level ``sigma2``, decreasing).

    Attributes
    ----------
    sigma2 : ndarray, shape (m,)
        The levels run, largest first.
    log_alpha : ndarray, shape (m,)
        ``log alpha_from_lam(lam, sigma2, rho2, d)``.
    nmi_point : ndarray, shape (m,)
        NMI between the level's posterior point partition (VI loss) and the DP-means
        partition.
    nmi_draws : ndarray, shape (m,)
        Mean NMI between the draws and the DP-means partition.
    p_k_hard : ndarray, shape (m,)
        Posterior probability of DP-means' number of clusters.
    k_mean : ndarray, shape (m,)
    hard : DPMeansResult
    objective_point : ndarray, shape (m,)
        DP-means objective (minimised) of the level's point partition.
    objective_best : ndarray, shape (m,)
        The lowest DP-means objective among the level's draws.
    hard_objective : float
        DP-means' own objective, ``sum_i |x_i - mu_{z_i}|^2 + lam k``.
    point : ndarray of int, shape (n,)
        The last level's point partition.
    best_labels : ndarray of int, shape (n,)
        The draw with the lowest DP-means objective along the whole path.
    stop : str
        Why the path ended: ``"dp_means"`` (``P(k = k_DP-means) >= p_collapse`` and the
        point partition is DP-means'), ``"lower_objective"`` (the annealed chains' draws collapsed, with
        probability ``>= p_collapse``, onto a partition whose DP-means objective is lower
        than DP-means' own), ``"floor"`` (neither before ``sigma2_min``) or ``"grid"``
        (the given grid ended and ``extend=False``).
    """

    sigma2: np.ndarray
    log_alpha: np.ndarray
    nmi_point: np.ndarray
    nmi_draws: np.ndarray
    p_k_hard: np.ndarray
    k_mean: np.ndarray
    hard: object
    objective_point: np.ndarray = None
    objective_best: np.ndarray = None
    hard_objective: float = None
    point: np.ndarray = None
    best_labels: np.ndarray = None
    stop: str = None

    @property
    def sigma2_over_lam(self) -> np.ndarray:
        """``sigma2 / lam``, shape (m,): the path's scale-free axis."""
        return self.sigma2 / self.hard.lam

    @property
    def lower_objective(self) -> bool:
        """Whether some draw has a lower DP-means objective than DP-means' partition.

        A finding, not a failure: DP-means is a local search, and the posterior's
        limit is the partition of lowest objective (Kulis & Jordan 2012, §3.1).
        """
        best = float(np.min(self.objective_best))
        return best < self.hard_objective - _OBJECTIVE_RTOL * abs(self.hard_objective)


# Objectives closer than this (relative) are the same partition's, up to rounding.
_OBJECTIVE_RTOL = 1e-9


def _log_joint(Xc, labels, sigma2, rho2, log_alpha):
    r"""``log p(z, X | sigma2, rho2, alpha)`` of the DP mixture, means integrated out, up to
    terms that do not depend on ``z``:

    .. math::

        k \log\alpha + \sum_c \Big[\log\Gamma(n_c) - \tfrac d2 \log(1 + n_c\rho^2/\sigma^2)
        + \frac{|S_c|^2}{2\sigma^2 (n_c + \sigma^2/\rho^2)}\Big] - \frac{\sum_i |x_i|^2}{2\sigma^2}

    (the CRP's ``log Gamma(alpha) - log Gamma(alpha + n)`` and ``-(n d / 2) log(2 pi sigma2)``
    are the same for every partition and drop out of the annealing weights).  ``Xc`` is the
    centred data (the sampler's frame, where the prior mean is 0).
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


def _systematic_resample(rng, log_w, size):
    """Indices of ``size`` draws by systematic resampling with weights ``exp(log_w)``."""
    w = np.exp(log_w - np.max(log_w))
    cdf = np.cumsum(w / w.sum())
    return np.minimum(np.searchsorted(cdf, (rng.random() + np.arange(size)) / size), len(w) - 1)


def _same_partition(a, b) -> bool:
    """Whether two labellings are the same partition (any ids)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = np.unique(np.stack([a, b]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def default_sigma2_max(X, lam) -> float:
    """The top of the path: ``max(lam, largest principal variance of X)``.

    There one isotropic component is as wide as the data along its widest direction and
    opening a cluster costs at most ``e^{-1/2}`` in ``alpha``: the sampler sees one or a
    few diffuse clusters, so the path starts before the collapse.
    """
    X = np.asarray(X, float)
    top = float(np.linalg.eigvalsh(np.cov(X, rowvar=False).reshape(X.shape[1], X.shape[1]))[-1])
    return max(float(lam), top)


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
) -> SmallVariancePath:
    r"""Anneal the DP mixture's Gibbs sampler as ``sigma2 -> 0`` with ``alpha = alpha_from_lam``.

    Kulis & Jordan (2012, §3.1): with :math:`\alpha = (1 + \rho^2/\sigma^2)^{d/2}
    \exp(-\lambda / (2\sigma^2))` the Gibbs moves of the DP mixture (their Algorithm 2,
    explicit means) become DP-means' moves as :math:`\sigma^2 \to 0`, and the posterior
    of a partition goes as :math:`\exp(-J(z) / (2\sigma^2))` with :math:`J` the DP-means
    objective, so it collapses onto the partition of lowest objective.

    The path is a population annealing (Hukushima & Iba 2003; an SMC sampler, Del Moral
    et al. 2006): ``num_chains`` chains start from one cluster at ``sigma2_max``; each
    level ``sigma2`` starts from the previous level's final states, resampled by their
    weights ``p_new(z, X) / p_old(z, X)`` (means integrated out), so that chains stuck in
    a partition the smaller ``sigma2`` disfavours (two clusters merged into one, say) are
    replaced by better ones instead of counting as posterior mass.  One chain per level
    restarts from one cluster with the points in order, as DP-means does: in the limit
    its moves are DP-means', so it reaches DP-means' partition by itself, and the
    population can end on a partition no worse than DP-means'.  The levels fall by
    ``step`` from ``sigma2_max`` (or run through ``sigma2_grid``) and continue down until
    the posterior has collapsed -- ``P(k = k_DP-means) >= p_collapse`` with the point
    partition equal to DP-means', or the draws of the annealed chains equal, with
    probability ``>= p_collapse``, to a partition of lower objective than DP-means' (a local optimum of DP-means
    exposed, which :attr:`SmallVariancePath.lower_objective` reports) -- or
    ``sigma2_min`` is passed (``stop == "floor"``, with a warning).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    lam : float
        DP-means penalty (a squared distance).
    sigma2_grid : array_like, shape (m,), optional
        Levels to run, decreasing (e.g. ``lam * geomspace(1, 1e-4, 9)``); with ``extend``
        the path continues below the last one by ``step`` until it collapses.  Default:
        from ``sigma2_max`` down by ``step``.
    rho2 : float
        Prior variance of the means.
    num_warmup, num_samples : int
        Sweeps per level before the draws, and draws kept per chain and level.
    num_chains : int
        Chains of the population (>= 2; the last one restarts from one cluster at every
        level).  Up to 8 per core cost about as much as one on a CPU.
    collapsed : bool
        Integrate the means out (Neal's Algorithm 3).  Its limit is not DP-means'
        nearest-centre rule but single-point moves that never raise the objective
        (Hartigan's), which can leave DP-means' partition; the default, Algorithm 2,
        is the sampler of Kulis & Jordan's theorem.
    sigma2_max : float, optional
        Top level; default :func:`default_sigma2_max`.
    sigma2_min : float, optional
        Floor of the adaptive extension; default ``1e-9 lam``.
    step : float
        Ratio between consecutive levels (> 1).
    p_collapse : float
        Posterior probability at which the path counts as collapsed.
    extend : bool
        Continue below the last level until the collapse or the floor.
    progress_bar : bool

    Returns
    -------
    SmallVariancePath

    Warns
    -----
    RuntimeWarning
        When the floor is reached before the collapse.

    References
    ----------
    B. Kulis and M. I. Jordan (2012), Revisiting k-means, §3.1.  K. Hukushima and
    Y. Iba (2003), Population annealing and its application to a spin glass.
    P. Del Moral, A. Doucet and A. Jasra (2006), Sequential Monte Carlo samplers.

    Examples
    --------
    >>> from bayesclust import datasets, farthest_first_lambda
    >>> X, _ = datasets.three_gaussians(0, n_per_cluster=30)
    >>> lam = farthest_first_lambda(X, 3)
    >>> path = small_variance_path(0, X, lam)
    >>> path.stop in ("dp_means", "lower_objective")  # collapsed before the floor
    True
    >>> bool(path.objective_point[-1] <= path.hard_objective)  # never worse than DP-means
    True
    """
    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    lam = V.check_positive(lam, "lam")
    rho2 = V.check_positive(rho2, "rho2")
    num_chains = V.check_int(num_chains, "num_chains", minimum=2)
    step = V._check_real_scalar(step, "step")
    if not step > 1.0:
        raise ValueError(f"step must be > 1, got {step!r}")
    p_collapse = V._check_real_scalar(p_collapse, "p_collapse")
    if not 0.0 < p_collapse <= 1.0:
        raise ValueError(f"p_collapse must be in (0, 1], got {p_collapse!r}")
    floor = 1e-9 * lam if sigma2_min is None else V.check_positive(sigma2_min, "sigma2_min")
    if sigma2_grid is None:
        top = default_sigma2_max(X, lam) if sigma2_max is None else V.check_positive(
            sigma2_max, "sigma2_max")
        grid = [top]
    else:
        if sigma2_max is not None:
            raise ValueError("give sigma2_grid or sigma2_max, not both")
        grid = V.check_array(sigma2_grid, "sigma2_grid", ndim=1, dtype=None).astype(float)
        if np.any(grid <= 0):
            raise ValueError("sigma2_grid must contain positive variances")
        if np.any(np.diff(grid) >= 0):
            raise ValueError("sigma2_grid must be strictly decreasing (the path anneals)")
        grid = [float(v) for v in grid]
    hard = dp_means(X, lam)
    hard_labels = np.asarray(hard.labels)
    hard_objective = metrics.dp_means_objective(X, hard_labels, lam)
    n, d = X.shape
    Xc = np.asarray(X, float) - np.asarray(X, float).mean(0)
    rng = V.as_numpy_rng(key)
    labels = np.zeros((num_chains, n), np.int64)
    out = {k: [] for k in ("sigma2", "log_alpha", "nmi_point", "nmi_draws", "p_k_hard", "k_mean",
                           "objective_point", "objective_best")}
    best = (np.inf, None)
    previous = None  # (sigma2, log_alpha) of the level the states come from
    stop, i = None, 0
    while stop is None:
        s2 = grid[i] if i < len(grid) else grid[-1] / step ** (i - len(grid) + 1)
        key, sub = jax.random.split(key)
        log_alpha = float(log_alpha_from_lam(lam, s2, rho2, d))
        if previous is not None:
            s2_old, log_alpha_old = previous
            log_w = [_log_joint(Xc, z, s2, rho2, log_alpha) - _log_joint(Xc, z, s2_old, rho2,
                                                                         log_alpha_old)
                     for z in labels]
            labels = labels[_systematic_resample(rng, np.array(log_w), num_chains)]
        labels[-1] = 0  # the chain that starts like DP-means
        with warnings.catch_warnings():
            # One annealing level is short by design: the population, resampled between
            # levels, is what converges, not each level's chains.
            warnings.simplefilter("ignore", ConvergenceWarning)
            post = gibbs_dp_gmm(
                sub, X, log_alpha=log_alpha, sigma2=s2, rho2=rho2, collapsed=collapsed,
                num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                thin=1, init_labels=labels, progress_bar=progress_bar,
            )
        chains = np.asarray(post.labels)
        labels = chains[:, -1].astype(np.int64)
        draws = chains.reshape(-1, n)
        k_draws = np.asarray(post.n_clusters).reshape(-1)
        point = post.point_estimate("vi")
        objectives = _objectives(X, draws, lam)
        j = int(np.argmin(objectives))
        if objectives[j] < best[0]:
            best = (float(objectives[j]), draws[j].copy())
        out["sigma2"].append(s2)
        out["log_alpha"].append(log_alpha)
        out["nmi_point"].append(metrics.nmi(hard_labels, point))
        out["nmi_draws"].append(float(np.mean([metrics.nmi(hard_labels, d_) for d_ in draws])))
        out["p_k_hard"].append(float(np.mean(k_draws == hard.n_clusters)))
        out["k_mean"].append(float(np.mean(k_draws)))
        out["objective_point"].append(metrics.dp_means_objective(X, point, lam))
        out["objective_best"].append(float(objectives[j]))
        previous = (s2, log_alpha)
        i += 1
        # The restarted chain follows DP-means, so it is left out of a collapse elsewhere.
        p_point = float(np.mean([_same_partition(point, d_) for d_ in chains[:-1].reshape(-1, n)]))
        if out["p_k_hard"][-1] >= p_collapse and _same_partition(point, hard_labels):
            stop = "dp_means"
        elif p_point >= p_collapse and out["objective_point"][-1] < hard_objective - (
                _OBJECTIVE_RTOL * abs(hard_objective)):
            stop = "lower_objective"
        elif i >= len(grid) and not extend:
            stop = "grid"
        elif i >= len(grid) and grid[-1] / step ** (i - len(grid) + 1) < floor * (1 - 1e-12):
            stop = "floor"
            warnings.warn(
                f"the small-variance path reached its floor sigma2 = {s2:.3g} ({s2 / lam:.1e} lam) "
                "before the posterior collapsed; lower sigma2_min", RuntimeWarning, stacklevel=2)
    arrays = {k: np.array(v) for k, v in out.items()}
    return SmallVariancePath(
        arrays["sigma2"], arrays["log_alpha"], arrays["nmi_point"], arrays["nmi_draws"],
        arrays["p_k_hard"], arrays["k_mean"], hard, arrays["objective_point"],
        arrays["objective_best"], hard_objective, point, best[1], stop)


def _objectives(X, draws, lam):
    """DP-means objective of every draw, shape (m,) (distinct partitions computed once)."""
    uniq, inv = np.unique(draws, axis=0, return_inverse=True)
    vals = np.array([metrics.dp_means_objective(X, z, lam) for z in uniq])
    return vals[np.asarray(inv).reshape(-1)]
