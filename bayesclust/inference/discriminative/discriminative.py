r"""Fitting discriminative clustering: smoothed-MAP conjugate gradients, annealing, sDC, NUTS.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §2.1, §3.1, §5, §7.
The model (:mod:`bayesclust.models.discriminative`) partitions the primary data
``X`` into the Voronoi regions of prototypes :math:`m_1..m_K` (its cluster centres,
Kaski et al.'s term) and scores a
partition by how well it predicts the auxiliary classes, with the regions' class
distributions integrated out (eq. 9, the log posterior of the prototypes under a
flat prior):

.. math::

    \log p(m \mid D) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - \sum_j \log\Gamma(N^0 + N_j)
    + \text{const}.

The exact objective is piecewise constant in the prototypes, so it is optimised

* by conjugate gradients on the smoothed objective (eq. 10, normalised-Gaussian
  memberships of width ``smooth_std``) -- :func:`~bayesclust.inference.discriminative.dc_map.dc_map` ("CG MAP", Kaski et al. 2005 §3.1);
* by simulated annealing on the exact objective -- :func:`~bayesclust.inference.discriminative.dc_anneal.dc_anneal` ("SA MAP", §3.1);
* by the older stochastic on-line algorithm with explicit class distributions
  -- :func:`~bayesclust.inference.discriminative.sdc.sdc` ("sDC", §2.1, eqs. 5-6);
* or sampled: NUTS on the smoothed collapsed program -- :func:`~bayesclust.inference.discriminative.dc_nuts.dc_nuts`.

One module per optimiser (``dc_map``, ``dc_anneal``, ``sdc``, ``dc_nuts``); this module holds
what they share publicly (the result, the hard cells) and the hold-out width selection.

Every fit returns a :class:`DCResult` whose ``log_posterior`` is the exact eq. 9 of
the hard Voronoi cells of the training points (the paper evaluates without
smoothing), computed by :func:`bayesclust.metrics.dc_log_posterior`.

References
----------
S. Kaski, J. Sinkkonen and A. Klami, "Discriminative clustering", Neurocomputing 69
(2005) 18-41, §2.1, §3.1, §7.2.1.
"""

from __future__ import annotations

import jax
import numpy as np

from ... import _validation as V
from ...metrics import dc_log_posterior
from ._common import DCResult, check_problem, dc_voronoi_labels

__all__ = [
    "DCResult", "dc_voronoi_labels", "width_grid", "stratified_split", "heldout_cost", "select_width",
]



# --------------------------------------------------------------------------- #
# Hyper-parameter selection on held-out data (Kaski et al. 2005, §7.2.1, §7.3.1)
# --------------------------------------------------------------------------- #


def width_grid(X, n_values: int = 8) -> np.ndarray:
    r"""Candidate smoothing / spread / jump widths :math:`s_0 \cdot` ``geomspace(1e-2, 10, n)``.

    :math:`s_0` is the RMS per-feature standard deviation of ``X``.  Kaski et al.
    (2005, §7.2.1) try 30 log-spaced values of every width in preliminary runs
    without stating the range; the range is ours (docs/deviations.md#dc-width-grid).

    Parameters
    ----------
    X : array_like, shape (n, d)
    n_values : int, default 8

    Returns
    -------
    ndarray of float64, shape (n_values,)

    Examples
    --------
    >>> width_grid([[0.0, 0.0], [2.0, 2.0]], 4).round(3).tolist()
    [0.01, 0.1, 1.0, 10.0]
    """
    X = V.check_array(X, "X")
    n_values = V.check_int(n_values, "n_values", minimum=1)
    s0 = float(np.sqrt(np.mean(np.var(np.asarray(X, np.float64), axis=0))))
    if s0 <= 0:
        raise ValueError("X has zero variance in every feature: no width scale")
    return s0 * np.geomspace(1e-2, 10.0, n_values)


def stratified_split(rng_key, classes, test_fraction: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Random split of the rows keeping every class on both sides (when it has two or more rows).

    Parameters
    ----------
    rng_key : jax key or int
    classes : array_like of int, shape (n,)
    test_fraction : float in (0, 1)

    Returns
    -------
    train, test : ndarray of int64
        Sorted row indices; each class of ``m >= 2`` rows puts
        ``clip(round(test_fraction * m), 1, m - 1)`` of them in ``test``.

    Examples
    --------
    >>> train, test = stratified_split(0, [0, 0, 0, 1, 1, 1], 0.34)
    >>> len(train), len(test)
    (4, 2)
    """
    classes = V.check_labels(classes, "classes")
    test_fraction = V.check_positive(test_fraction, "test_fraction")
    if test_fraction >= 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    u = np.asarray(jax.random.uniform(V.as_rng_key(rng_key), (classes.shape[0],)))
    test = []
    for value in np.unique(classes):
        rows = np.flatnonzero(classes == value)
        if rows.size < 2:
            continue
        take = int(np.clip(round(test_fraction * rows.size), 1, rows.size - 1))
        test.append(rows[np.argsort(u[rows], kind="stable")[:take]])
    test = np.sort(np.concatenate(test)) if test else np.zeros(0, np.int64)
    train = np.setdiff1d(np.arange(classes.shape[0]), test)
    return train.astype(np.int64), test.astype(np.int64)


def heldout_cost(prototypes, X, classes, *, n_classes: int | None = None, n0: float = 1.0) -> float:
    """Test cost of Kaski et al. (2005, §7.2.1): minus eq. 9 of the held-out Voronoi table.

    The held-out points are clustered from ``X`` alone (nearest prototype), never
    from their classes; lower is better.

    Parameters
    ----------
    prototypes : array_like, shape (K, d)
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    n_classes : int, optional
    n0 : float, default 1.0

    Returns
    -------
    float

    Examples
    --------
    >>> round(heldout_cost([[0.0], [1.0]], [[0.0], [1.0]], [0, 1]), 4)  # 2 log Gamma(N0 + 1), N0 = 2
    1.3863
    """
    labels = dc_voronoi_labels(X, prototypes)  # validates X and prototypes
    return -dc_log_posterior(labels, classes, n_clusters=np.shape(prototypes)[0], n_classes=n_classes,
                             n0=n0)


def select_width(rng_key, fit, X, classes, grid, *, test_fraction: float = 0.3,
                 n_classes: int | None = None) -> tuple[float, np.ndarray]:
    """Pick a width by the held-out DC cost of one stratified split (docs/deviations.md#dc-width-grid).

    Every ``width`` in ``grid`` is fitted on the training part by
    ``fit(key, X_train, classes_train, width) -> prototypes`` and scored by
    :func:`heldout_cost` on the rest; the lowest cost wins (ties: the smaller
    width).  Works for any method that returns prototypes / centres: the DC
    smoothing of :func:`~bayesclust.inference.discriminative.dc_map.dc_map` and
    :func:`~bayesclust.inference.discriminative.sdc.sdc`, the jump width of
    :func:`~bayesclust.inference.discriminative.dc_anneal.dc_anneal`, or the spread of the mixture baselines.

    Parameters
    ----------
    rng_key : jax key or int
        Splits the data and seeds each fit (``fold_in(key, g)`` for grid value ``g``).
    fit : callable
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    grid : array_like of float, shape (m,)
    test_fraction : float, default 0.3
    n_classes : int, optional

    Returns
    -------
    best : float
    costs : ndarray, shape (m,)
        Held-out cost of every grid value.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> from bayesclust.inference.discriminative.dc_map import dc_map
    >>> X, c = dc_toy(0, 400)
    >>> fit = lambda key, X, c, s: dc_map(key, X, c, 2, s, init="random").prototypes
    >>> best, costs = select_width(0, fit, X, c, [0.1, 1.0])
    >>> costs.shape
    (2,)
    """
    problem = check_problem(X, classes, 1, n_classes)
    grid = np.asarray(grid, np.float64).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"grid must hold positive finite widths, got {grid.tolist()}")
    if not callable(fit):
        raise TypeError(f"fit must be callable, got {type(fit).__name__}")
    key = V.as_rng_key(rng_key)
    split_key, fit_key = jax.random.split(key)
    train, test = stratified_split(split_key, problem.classes, test_fraction)
    Xtr, ctr = problem.X[train], problem.classes[train]
    costs = np.array([
        heldout_cost(fit(jax.random.fold_in(fit_key, g), Xtr, ctr, float(w)), problem.X[test],
                     problem.classes[test], n_classes=problem.n_classes)
        for g, w in enumerate(grid)
    ])
    return float(grid[int(np.argmin(costs))]), costs
