"""The limit path: a model's posterior annealed down its temperature onto its hard limit.

Every family that bayesclust fits both ways -- by sampling a posterior and by the posterior's
small-variance (hard) limit -- has a temperature ``t`` (a within-cluster variance, or the
inverse of a likelihood's power) and a penalty ``lam`` such that the tempered posterior of a
partition ``z`` behaves as ``exp(-J(z) / (c t))`` as ``t -> 0``, with ``J`` the hard
objective (Kulis & Jordan 2012, §3.1; Jiang, Kulis & Jordan 2012).  :func:`limit_path`
follows that collapse: a population of chains of the family's sampler anneals from a diffuse
posterior down to a temperature where it has settled on the hard algorithm's partition, or on
a partition of lower hard objective (the hard algorithm is a local search).

A family is a :class:`LimitFamily`: the shipped ones are ``"dp"`` (DP mixture, DP-means),
``"hdp"`` (HDP mixture, hard HDP), ``"dc"`` (the DP mixture of discriminative clustering,
HardDC) and ``"aspect"`` (the DP mixture of multinomials on an ensemble's co-association
rows, KL-means); a researcher's own model subclasses it (``docs/protocol.md``).
"""

from __future__ import annotations

import importlib
import warnings
from typing import NamedTuple

import jax
import numpy as np

from .. import _validation as V
from .. import metrics
from ..inference.mixtures.convergence import ConvergenceWarning
from ..inference.mixtures.posterior import Posterior

__all__ = ["LimitFamily", "LimitPath", "limit_path", "FAMILIES", "family_class", "same_partition"]

# The shipped families, imported on first use: model name -> (module, class).
FAMILIES = {
    "dp": ("bayesclust.comparison.dp", "DPLimit"),
    "hdp": ("bayesclust.comparison.hdp", "HDPLimit"),
    "dc": ("bayesclust.comparison.dc", "DCLimit"),
    "aspect": ("bayesclust.comparison.aspect", "AspectLimit"),
}

#: Hard objectives closer than this (relative) are ties, not findings.  The samplers weigh
#: partitions by log-probabilities accumulated in float32 over n points (relative error up to
#: about n * 2**-24, 6e-5 at n = 1000), so a partition whose objective is lower by less than
#: 1e-4 is below what the sampler resolves: 35.334 against 35.335 is a tie.
OBJECTIVE_RTOL = 1e-4


class LimitFamily:
    """A model fitted two ways: a sampler at temperature ``t`` and its ``t -> 0`` limit.

    Subclass it to put a model of your own beside its hard limit (``docs/protocol.md``):
    set the class attributes, store the data and the penalty in ``__init__`` (and the
    attributes ``n_samples`` and ``scale``), and implement :meth:`hard`,
    :meth:`objective`, :meth:`temperature_max`, :meth:`log_target` and :meth:`sample`.
    The defaults of :meth:`initial_states`, :meth:`restart` and :meth:`take` suit a
    family whose chain state is its partition, ``labels`` of shape ``(num_chains, n)``.

    Attributes
    ----------
    name : str
        The family's key (``limit_path(model=name)``).
    hard_name : str
        The hard limit's name in reports ("DP-means").
    temperature_name : str
        The temperature's name ("sigma2", "tau").
    data_arguments : tuple of str
        The data arguments of :func:`limit_path` besides ``X`` that the family reads
        (``("y",)`` for discriminative clustering).
    hard_types : tuple of str
        Class names of the hard results and fitted hard estimators of this family that
        :func:`~bayesclust.comparison.report.compare` accepts (``("DPMeansResult",
        "DPMeans")``); see :meth:`from_hard`.
    n_samples : int
        Number of points ``n`` of the partitions.
    scale : float
        The penalty ``lam``: the path's floor is ``1e-9 * scale`` and its scale-free axis
        ``temperature / scale``.
    """

    name = "model"
    hard_name = "hard limit"
    temperature_name = "temperature"
    data_arguments: tuple = ()
    hard_types: tuple = ()
    n_samples: int
    scale: float

    @classmethod
    def from_hard(cls, hard, X, **data):
        """The family whose penalty is the hard result's (or fitted hard estimator's), on ``X``.

        ``data`` are the family's :attr:`data_arguments` (``y``, ``group_ids``,
        ``ensemble``) as given to :func:`~bayesclust.comparison.report.compare`, which
        scores both partitions with the returned family's :meth:`objective`.
        """
        raise NotImplementedError(f"{cls.__name__}.from_hard is not implemented: pass compare() "
                                  f"an instance, family={cls.__name__}(X, lam=...)")

    def hard(self):
        """Fit the hard limit once; a result with ``labels`` (n,) and ``n_clusters``.

        A result of grouped data whose ``labels`` is a list per data set (the hard HDP's)
        holds the partition of the rows, shape (n,), as ``flat_labels``, which is read
        instead.
        """
        raise NotImplementedError

    def objective(self, labels) -> float:
        """The hard objective ``J`` (minimised) of one partition, shape (n,) -> float."""
        raise NotImplementedError

    def temperature_max(self) -> float:
        """The top of the path, where the tempered posterior is still diffuse."""
        raise NotImplementedError

    def log_target(self, states, temperature) -> np.ndarray:
        """Log tempered posterior of every chain's state, shape (num_chains,).

        Up to a constant common to all states (cluster parameters integrated out): the
        path resamples its chains by ``log_target(states, t_new) - log_target(states, t_old)``.
        """
        raise NotImplementedError

    def sample(self, rng_key, temperature, states, *, num_warmup: int, num_samples: int):
        """Run the sampler at ``temperature`` from ``states``.

        Returns
        -------
        states
            The final state of every chain.
        draws : ndarray of int, shape (num_chains, num_samples, n)
            The partitions drawn after ``num_warmup`` sweeps.
        """
        raise NotImplementedError

    def initial_states(self, num_chains: int):
        """Every chain's first state: one cluster, ``labels`` of zeros (num_chains, n)."""
        return np.zeros((num_chains, self.n_samples), np.int64)

    def restart(self, states, chain: int):
        """``states`` with chain ``chain`` back at the hard algorithm's start (one cluster)."""
        states = np.array(states, copy=True)
        states[chain] = 0
        return states

    def take(self, states, index):
        """The chains ``index`` (int array) of ``states``."""
        return jax.tree.map(lambda a: np.asarray(a)[index], states)


class LimitPath(NamedTuple):
    """Result of :func:`limit_path`, one entry per temperature (decreasing).

    Attributes
    ----------
    model : str
        The family's name.
    temperature_name : str
    temperature : ndarray, shape (m,)
        The levels run, highest first.
    scale : float
        The family's penalty ``lam``: ``temperature / scale`` is the scale-free axis.
    nmi_point : ndarray, shape (m,)
        NMI between the level's posterior point partition (VI loss) and the hard one.
    nmi_draws : ndarray, shape (m,)
        Mean NMI between the draws and the hard partition.
    p_k_hard : ndarray, shape (m,)
        Posterior probability of the hard partition's number of clusters.
    k_mean, k_median, k_low, k_high : ndarray, shape (m,)
        Mean, median, 10% and 90% quantiles of the draws' numbers of clusters.
    objective_point : ndarray, shape (m,)
        Hard objective (minimised) of the level's point partition.
    objective_best : ndarray, shape (m,)
        The lowest hard objective among the level's draws.
    hard_objective : float
        The hard algorithm's own objective.
    hard : object
        The hard result.
    point : ndarray of int, shape (n,)
        The last level's point partition.
    best_labels : ndarray of int, shape (n,)
        The draw of lowest hard objective along the whole path.
    stop : str
        ``"hard"`` (``P(k = k_hard) >= p_collapse`` and the point partition is the hard
        one), ``"lower_objective"`` (the annealed chains' draws equal, with probability
        ``>= p_collapse``, a partition of lower hard objective than the hard algorithm's),
        ``"floor"`` (neither before the floor) or ``"grid"`` (the given temperatures ended
        and ``extend=False``).
    hard_name : str
        The hard limit's name ("DP-means"), for reports and figures.
    """

    model: str
    temperature_name: str
    temperature: np.ndarray
    scale: float
    nmi_point: np.ndarray
    nmi_draws: np.ndarray
    p_k_hard: np.ndarray
    k_mean: np.ndarray
    k_median: np.ndarray
    k_low: np.ndarray
    k_high: np.ndarray
    objective_point: np.ndarray
    objective_best: np.ndarray
    hard_objective: float
    hard: object
    point: np.ndarray
    best_labels: np.ndarray
    stop: str
    hard_name: str

    @property
    def relative_temperature(self) -> np.ndarray:
        """``temperature / scale``, shape (m,): the path's scale-free axis."""
        return self.temperature / self.scale

    @property
    def lower_objective(self) -> bool:
        """Whether some draw has a lower hard objective than the hard algorithm's partition.

        A finding, not a failure: the hard algorithms are local searches, and the
        posterior's limit is the partition of lowest objective.
        """
        best = float(np.min(self.objective_best))
        return best < self.hard_objective - OBJECTIVE_RTOL * abs(self.hard_objective)


def family_class(model: str):
    """The :class:`LimitFamily` subclass of a shipped model name."""
    if model not in FAMILIES:
        raise ValueError(f"model must be one of {sorted(FAMILIES)} or a LimitFamily, got {model!r}")
    module, name = FAMILIES[model]
    return getattr(importlib.import_module(module), name)


def _canonical(draws: np.ndarray) -> np.ndarray:
    """Every row relabelled ``0..k-1`` in order of first appearance, shape (S, n)."""
    out = np.empty_like(draws)
    for s, z in enumerate(draws):
        _, first, inv = np.unique(z, return_index=True, return_inverse=True)
        out[s] = np.argsort(np.argsort(first))[inv]
    return out


def _n_clusters(draws: np.ndarray) -> np.ndarray:
    """Number of distinct ids of every row, shape (S,)."""
    s = np.sort(draws, axis=1)
    return 1 + np.count_nonzero(np.diff(s, axis=1), axis=1)


def same_partition(a, b) -> bool:
    """Whether two labellings of the same points are the same partition (any ids)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = np.unique(np.stack([a, b]), axis=1)
    return pairs.shape[1] == len(np.unique(a)) == len(np.unique(b))


def _systematic_resample(rng, log_w, size):
    """Indices of ``size`` draws by systematic resampling with weights ``exp(log_w)``."""
    w = np.exp(log_w - np.max(log_w))
    cdf = np.cumsum(w / w.sum())
    return np.minimum(np.searchsorted(cdf, (rng.random() + np.arange(size)) / size), len(w) - 1)


def _check_path_settings(step, p_collapse, num_chains):
    num_chains = V.check_int(num_chains, "num_chains", minimum=2)
    step = V._check_real_scalar(step, "step")
    if not step > 1.0:
        raise ValueError(f"step must be > 1, got {step!r}")
    p_collapse = V._check_real_scalar(p_collapse, "p_collapse")
    if not 0.0 < p_collapse <= 1.0:
        raise ValueError(f"p_collapse must be in (0, 1], got {p_collapse!r}")
    return step, p_collapse, num_chains


def _temperature_grid(family, temperatures, temperature_max):
    if temperatures is None:
        top = family.temperature_max() if temperature_max is None else V.check_positive(
            temperature_max, "temperature_max")
        return [float(top)]
    if temperature_max is not None:
        raise ValueError("give temperatures or temperature_max, not both")
    grid = V.check_array(temperatures, "temperatures", ndim=1, dtype=None).astype(float)
    if np.any(grid <= 0):
        raise ValueError("temperatures must be positive")
    if np.any(np.diff(grid) >= 0):
        raise ValueError("temperatures must be strictly decreasing (the path anneals)")
    return [float(v) for v in grid]


def _build_family(X, model, lam, data, options):
    if isinstance(model, LimitFamily):
        given = [name for name, v in [("X", X), ("lam", lam), *data.items()] if v is not None]
        if given or options:
            raise ValueError(f"model is a LimitFamily, which holds its data and penalty: do not "
                             f"pass {', '.join(given + sorted(options))}")
        return model
    if not isinstance(model, str):
        raise TypeError(f"model must be a name or a LimitFamily, got {type(model).__name__}")
    cls = family_class(model)
    for name, v in data.items():
        if v is not None and name not in cls.data_arguments:
            raise ValueError(f"{name} is not read by model={model!r}")
    kwargs = {name: v for name, v in data.items() if v is not None}
    return cls(X, lam=lam, **kwargs, **options)


def limit_path(
    rng_key,
    X=None,
    *,
    model="dp",
    lam=None,
    y=None,
    group_ids=None,
    ensemble=None,
    temperatures=None,
    temperature_max: float | None = None,
    temperature_min: float | None = None,
    step: float = 10 ** 0.5,
    num_warmup: int = 30,
    num_samples: int = 20,
    num_chains: int = 16,
    p_collapse: float = 0.95,
    extend: bool = True,
    progress_bar: bool = False,
    **options,
) -> LimitPath:
    r"""Anneal a family's sampler down its temperature onto its hard limit.

    The path is a population annealing (Hukushima & Iba 2003; an SMC sampler, Del Moral
    et al. 2006): ``num_chains`` chains start from one cluster at the top temperature;
    each level starts from the previous level's final states, resampled by their weights
    ``p_new(z) / p_old(z)`` (cluster parameters integrated out), so that chains stuck in a
    partition the lower temperature disfavours are replaced by better ones instead of
    counting as posterior mass.  One chain per level restarts from the hard algorithm's
    start (one cluster): in the limit its moves are the hard algorithm's, so the population
    can end on a partition no worse than the hard one.  The levels fall by ``step`` from
    the top (or run through ``temperatures``) and continue down until the posterior has
    collapsed -- ``P(k = k_hard) >= p_collapse`` with the point partition equal to the
    hard one (``stop == "hard"``), or the annealed chains' draws equal, with probability
    ``>= p_collapse``, to a partition of lower hard objective (``"lower_objective"``) --
    or the floor ``temperature_min`` is passed (``"floor"``, with a warning).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
        The features (every shipped family); None when ``model`` is a
        :class:`LimitFamily` instance, which holds its data.
    model : {"dp", "hdp", "dc", "aspect"} or LimitFamily
        ``"dp"``: DP Gaussian mixture and DP-means (``temperature`` = ``sigma2``);
        ``"hdp"``: HDP mixture and hard HDP (``group_ids`` required; ``lam`` a pair
        ``(lam_local, lam_global)``); ``"dc"``: the DP mixture of discriminative
        clustering and HardDC (``y`` the classes); ``"aspect"``: the DP mixture of
        multinomials on the co-association rows of an ensemble and KL-means
        (``temperature`` = ``tau``; the default k-means ensemble of ``X`` unless
        ``ensemble`` is given).
    lam : float, optional
        The penalty of a new cluster (the family's default heuristic when None, most
        from a desired ``n_clusters`` passed in ``options``).
    y, group_ids, ensemble : array_like, optional
        The data the family reads besides ``X``.
    temperatures : array_like, shape (m,), optional
        Levels to run, decreasing; with ``extend`` the path continues below the last one
        by ``step`` until it collapses.  Default: from the family's top down by ``step``.
    temperature_max : float, optional
        Top level; default the family's ``temperature_max()``.
    temperature_min : float, optional
        Floor of the extension; default ``1e-9 * lam``.
    step : float
        Ratio between consecutive levels (> 1).
    num_warmup, num_samples : int
        Sweeps per level before the draws, and draws kept per chain and level.
    num_chains : int
        Chains of the population (>= 2; the last one restarts at every level).
    p_collapse : float
        Posterior probability at which the path counts as collapsed.
    extend : bool
        Continue below the last level until the collapse or the floor.
    progress_bar : bool
        One line per level on stderr.
    **options
        The family's own options (``rho2``, ``collapsed``, ``xi``, ``n_clusters``, ...).

    Returns
    -------
    LimitPath

    Warns
    -----
    RuntimeWarning
        When the floor is reached before the collapse.

    References
    ----------
    B. Kulis and M. I. Jordan (2012), Revisiting k-means, §3.1.  K. Jiang, B. Kulis and
    M. I. Jordan (2012), Small-variance asymptotics for exponential family Dirichlet process
    mixture models.  K. Hukushima and Y. Iba (2003), Population annealing and its
    application to a spin glass.

    Examples
    --------
    >>> from bayesclust import datasets, farthest_first_lambda, limit_path
    >>> X, _ = datasets.three_gaussians(0, n_per_cluster=30)
    >>> path = limit_path(0, X, model="dp", lam=farthest_first_lambda(X, 3))
    >>> path.stop in ("hard", "lower_objective")
    True
    """
    key = V.as_rng_key(rng_key)
    step, p_collapse, num_chains = _check_path_settings(step, p_collapse, num_chains)
    if X is None and not isinstance(model, LimitFamily):
        raise ValueError(f"X is required for model={model!r}")
    family = _build_family(X, model, lam, {"y": y, "group_ids": group_ids, "ensemble": ensemble},
                           options)
    scale = float(family.scale)
    floor = 1e-9 * scale if temperature_min is None else V.check_positive(
        temperature_min, "temperature_min")
    grid = _temperature_grid(family, temperatures, temperature_max)
    return _anneal(key, family, grid, floor, step=step, num_warmup=num_warmup,
                   num_samples=num_samples, num_chains=num_chains, p_collapse=p_collapse,
                   extend=extend, progress_bar=progress_bar)


def _anneal(key, family, grid, floor, *, step, num_warmup, num_samples, num_chains, p_collapse,
            extend, progress_bar):
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    hard = family.hard()
    # In order of first appearance, so that no statistic depends on the hard result's ids.
    hard_labels = _canonical(np.asarray(getattr(hard, "flat_labels", hard.labels))[None])[0]
    k_hard = int(metrics.n_clusters(hard_labels))
    hard_objective = float(family.objective(hard_labels))
    n = int(family.n_samples)
    rng = V.as_numpy_rng(key)
    states = family.initial_states(num_chains)
    out = {k: [] for k in ("temperature", "nmi_point", "nmi_draws", "p_k_hard", "k_mean",
                           "k_median", "k_low", "k_high", "objective_point", "objective_best")}
    best = (np.inf, None)
    previous = None  # the temperature the states come from
    stop, i = None, 0
    while stop is None:
        t = grid[i] if i < len(grid) else grid[-1] / step ** (i - len(grid) + 1)
        key, sub = jax.random.split(key)
        if previous is not None:
            log_w = np.asarray(family.log_target(states, t), float) - np.asarray(
                family.log_target(states, previous), float)
            states = family.take(states, _systematic_resample(rng, log_w, num_chains))
        states = family.restart(states, num_chains - 1)
        with warnings.catch_warnings():
            # One level is short by design: the population, resampled between levels, is
            # what converges, not each level's chains.
            warnings.simplefilter("ignore", ConvergenceWarning)
            states, chains = family.sample(sub, t, states, num_warmup=num_warmup,
                                           num_samples=num_samples)
        chains = np.asarray(chains)
        if chains.shape[0] != num_chains or chains.shape[-1] != n:
            raise ValueError(f"{type(family).__name__}.sample returned draws of shape "
                             f"{chains.shape}, expected ({num_chains}, num_samples, {n})")
        draws = _canonical(chains.reshape(-1, n))
        k_draws = _n_clusters(draws)
        point = Posterior(chains).point_estimate("vi")
        objectives, nmis = _per_draw(family, draws, hard_labels)
        j = int(np.argmin(objectives))
        if objectives[j] < best[0]:
            best = (float(objectives[j]), draws[j].copy())
        out["temperature"].append(t)
        out["nmi_point"].append(metrics.nmi(hard_labels, point))
        out["nmi_draws"].append(float(np.mean(nmis)))
        out["p_k_hard"].append(float(np.mean(k_draws == k_hard)))
        out["k_mean"].append(float(np.mean(k_draws)))
        lo, med, hi = np.quantile(k_draws, [0.1, 0.5, 0.9])
        out["k_median"].append(float(med))
        out["k_low"].append(float(lo))
        out["k_high"].append(float(hi))
        out["objective_point"].append(float(family.objective(point)))
        out["objective_best"].append(float(objectives[j]))
        previous = t
        i += 1
        # The restarted chain follows the hard algorithm, so it is left out of a collapse
        # elsewhere.
        others = draws.reshape(num_chains, -1, n)[:-1].reshape(-1, n)
        p_point = float(np.mean(np.all(others == _canonical(point[None])[0], axis=1)))
        same_as_hard = same_partition(point, hard_labels)
        if progress_bar:
            import sys
            print(f"limit_path[{family.name}] {family.temperature_name} = {t:.3g} "
                  f"({t / family.scale:.1e} lam): P(k = {k_hard}) = {out['p_k_hard'][-1]:.2f}, "
                  f"NMI(point, hard) = {out['nmi_point'][-1]:.3f}", file=sys.stderr)
        if out["p_k_hard"][-1] >= p_collapse and same_as_hard:
            stop = "hard"
        elif p_point >= p_collapse and out["objective_point"][-1] < hard_objective - (
                OBJECTIVE_RTOL * abs(hard_objective)):
            stop = "lower_objective"
        elif i >= len(grid) and not extend:
            stop = "grid"
        elif i >= len(grid) and grid[-1] / step ** (i - len(grid) + 1) < floor * (1 - 1e-12):
            stop = "floor"
            warnings.warn(
                f"the limit path of model {family.name!r} reached its floor "
                f"{family.temperature_name} = {t:.3g} ({t / family.scale:.1e} lam) before the "
                "posterior collapsed; lower temperature_min", RuntimeWarning, stacklevel=3)
    arrays = {k: np.array(v) for k, v in out.items()}
    return LimitPath(
        family.name, family.temperature_name, arrays["temperature"], float(family.scale),
        arrays["nmi_point"], arrays["nmi_draws"], arrays["p_k_hard"], arrays["k_mean"],
        arrays["k_median"], arrays["k_low"], arrays["k_high"], arrays["objective_point"],
        arrays["objective_best"], hard_objective, hard, point, best[1], stop, family.hard_name)


def _per_draw(family, draws, hard_labels):
    """Hard objective and NMI to the hard partition of every draw, shapes (S,) and (S,).

    Both are computed once per distinct partition: the draws are canonical, and a collapsed
    population repeats a few partitions many times.
    """
    uniq, inv = np.unique(draws, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    objectives = np.array([family.objective(z) for z in uniq], float)
    nmis = np.array([metrics.nmi(hard_labels, z) for z in uniq], float)
    return objectives[inv], nmis[inv]
