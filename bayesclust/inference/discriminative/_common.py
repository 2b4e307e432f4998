"""The discriminative-clustering optimisers' shared room: the problem's checks and
initialisation, the hard Voronoi cells, the unrolled row reductions, the result.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §3.1, eq. 9.
Private to :mod:`bayesclust.inference.discriminative`; :class:`DCResult` and
:func:`dc_voronoi_labels` are public through
:mod:`bayesclust.inference.discriminative.discriminative`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validation as V
from ...kernels import nearest_center
from ...metrics import dc_log_posterior

#: Stochastic iterations per prototype of SA and sDC in the paper (§7.2.1).
STEPS_PER_CLUSTER = 100_000
#: Up to this many prototypes the per-point loops over prototypes are unrolled chains
#: (elementwise along n); beyond, axis reductions (slower on CPU, but compile time stays flat).
UNROLL_MAX_CLUSTERS = 32


class DCResult(NamedTuple):
    """Result of :func:`~bayesclust.inference.discriminative.dc_map.dc_map`,
    :func:`~bayesclust.inference.discriminative.dc_anneal.dc_anneal` and
    :func:`~bayesclust.inference.discriminative.sdc.sdc`.

    Attributes
    ----------
    prototypes : ndarray, shape (K, d)
        The Voronoi prototypes :math:`m_j`: discriminative clustering's cluster
        centres (Kaski et al.'s term; elsewhere bayesclust calls them ``centers``).
    labels : ndarray of int64, shape (n,)
        Hard Voronoi cell of every training point (nearest prototype, lowest
        index on ties).
    log_posterior : float
        Exact eq. 9 of ``labels`` on the training data with the given ``n0`` and
        no regularisers (the paper's evaluation score; higher is better).
    objective : float
        Final value of the maximised objective: the smoothed, regularised eq. 10
        (+ 12/14/15) for CG; the exact regularised objective for SA; the smoothed
        conditional log-likelihood :math:`\\sum_x \\sum_j y_j(x) \\log \\psi_{j, c(x)}`
        for sDC.
    objective_trace : ndarray of float64
        The maximised objective at the start and after every CG iteration; for SA
        and sDC at the start and after every block of ``ceil(n_iter / trace_points)``
        iterations.
    n_iter : int
        CG iterations, SA proposals or sDC steps run.
    converged : bool
        CG: scipy's gradient test passed (``max |dF/dm| <= tol * n``) before
        ``max_iter``.  SA and sDC run a fixed schedule: True when it was completed.
    smooth_std : float or None
        Smoothing width used for optimisation (None for SA, which is unsmoothed).
    method : str
        ``"cg"``, ``"sa"`` or ``"sdc"``.
    info : dict
        Method-specific diagnostics: ``"init_prototypes"`` (all methods); CG:
        ``"n_evals"``, ``"status"``, ``"message"``, ``"grad_max"``; SA:
        ``"accept_rate"``, ``"best_objective"``, ``"final_objective"``,
        ``"final_counts"`` (the incrementally maintained contingency table of the
        final state), ``"returned"`` (``"final"`` or ``"best"``); sDC: ``"psi"``
        (the class distributions, shape (K, C)).
    """

    prototypes: np.ndarray
    labels: np.ndarray
    log_posterior: float
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    smooth_std: float | None
    method: str
    info: dict


class Problem(NamedTuple):
    X: np.ndarray  # (n, d) float32 / float64
    classes: np.ndarray  # (n,) int32, 0..C-1, every class non-empty
    n_clusters: int
    n_classes: int


def check_problem(X, classes, n_clusters, n_classes) -> Problem:
    X = V.check_array(X, "X")
    n = X.shape[0]
    classes = V.check_labels(classes, "classes")
    if classes.shape[0] != n:
        raise ValueError(
            f"classes has length {classes.shape[0]} but X has {n} samples (one class per row)"
        )
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    if K > n:
        raise ValueError(f"n_clusters={K} exceeds the number of samples n={n}")
    if classes.min() < 0:
        raise ValueError(f"classes must be non-negative integers, got min {classes.min()}")
    if n_classes is None:
        # Classes are nominal: number those present 0..C-1 in increasing order (as
        # DiscriminativeClustering does), so ids with gaps or near 1e12 are fine.
        classes = np.unique(classes, return_inverse=True)[1].reshape(-1)
        C = int(classes.max()) + 1
    else:
        C = V.check_int(n_classes, "n_classes", minimum=1)
        if classes.max() >= C:
            raise ValueError(
                f"classes must lie in [0, n_classes={C}), got max {classes.max()}"
            )
    empty = np.flatnonzero(np.bincount(classes, minlength=C) == 0)
    if empty.size:
        raise ValueError(
            f"classes {empty.tolist()} of 0..{C - 1} have no samples; relabel the classes "
            "0..C-1 (e.g. np.unique(classes, return_inverse=True)[1])"
        )
    return Problem(X, classes.astype(np.int32), K, C)


def check_init(rng_key, X: np.ndarray, K: int, init, name: str = "init") -> np.ndarray:
    """Initial prototypes (K, d) in X's dtype: k-means centres, random data points, or given
    (errors name the argument ``name``)."""
    n, d = X.shape
    if isinstance(init, str):
        if init == "kmeans":
            from ..hard.kmeans import kmeans  # lazy: a sibling module, and a heavier import

            return np.asarray(kmeans(rng_key, X, K).centers, X.dtype)
        if init == "random":  # K distinct data points: the K smallest of n uniform keys
            u = np.asarray(jax.random.uniform(rng_key, (n,)))
            return X[np.sort(np.argpartition(u, K - 1)[:K])].copy()
        raise ValueError(
            f"init must be 'kmeans', 'random' or an array of shape ({K}, {d}), got {init!r}"
        )
    m = V.check_array(init, name)
    if m.shape != (K, d):
        raise ValueError(f"{name} must have shape (n_clusters, d) = ({K}, {d}), got {m.shape}")
    return m.astype(X.dtype)


def hyper(n0, lam_eq, lam_mog, lam_vq) -> tuple[float, float, float, float]:
    return (
        V.check_positive(n0, "n0"),
        V.check_nonnegative(lam_eq, "lam_eq"),
        V.check_nonnegative(lam_mog, "lam_mog"),
        V.check_nonnegative(lam_vq, "lam_vq"),
    )


def dc_voronoi_labels(X, prototypes) -> np.ndarray:
    """Hard Voronoi cell of every row of ``X`` (nearest prototype; lowest index on ties).

    The clusters of held-out data are computed from ``X`` alone (Kaski et al. 2005,
    §7.2.1), by :func:`bayesclust.kernels.nearest_center` (exact differences for
    ``d <= 4``, GEMM scores otherwise).

    Parameters
    ----------
    X : array_like, shape (n, d)
    prototypes : array_like, shape (K, d)

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> dc_voronoi_labels([[0.0], [0.9], [3.0]], [[0.0], [2.0]]).tolist()
    [0, 0, 1]
    """
    X = V.check_array(X, "X")
    m = V.check_array(prototypes, "prototypes")
    if m.shape[1] != X.shape[1]:
        raise ValueError(
            f"prototypes have dimension {m.shape[1]} but X has {X.shape[1]} columns"
        )
    return voronoi_labels(X, m)


def work_dtype(X: np.ndarray) -> np.dtype:
    """float64 for float64 input when ``jax_enable_x64`` is on, else float32 (the convention)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(X.dtype))


@jax.jit
def nearest_index(X, m):
    return nearest_center(X, m).index


def voronoi_labels(X: np.ndarray, m: np.ndarray) -> np.ndarray:
    dt = work_dtype(X)
    return np.asarray(nearest_index(jnp.asarray(X, dt), jnp.asarray(m, dt))).astype(np.int64)


def unit_frame(problem: Problem, *, centred: bool = True) -> tuple[Problem, V.UnitFrame]:
    """The problem with ``X`` in the unit frame, and the frame.

    ``centred=False`` only scales by the power of two, which is exact: a run there
    is the data-frame run scaled (the stochastic optimisers stay reproducible by
    stepping their states by hand on the data).

    Discriminative clustering is invariant to translating the data and to scaling
    the data, the widths by ``s`` and the squared-distance weights by ``s**-2``
    (Kaski et al. 2005, eqs. 4, 14, 15), so every optimiser runs on centred data
    scaled by a power of two (exact), where squared distances lie in ``[0, 4 d]``
    whatever the scale of ``X``.
    """
    Xu, frame = V.unit_frame(problem.X, centred=centred)
    return problem._replace(X=Xu), frame


def finish(problem: Problem, m: np.ndarray, n0: float, frame: V.UnitFrame | None = None,
           **fields) -> DCResult:
    """Hard cells of the training points and their exact eq. 9, then the result.

    With ``frame``, ``problem`` and ``m`` are in that unit frame and the returned
    prototypes in the data frame.
    """
    labels = voronoi_labels(problem.X, m)
    lp = dc_log_posterior(labels, problem.classes, n_clusters=problem.n_clusters,
                          n_classes=problem.n_classes, n0=n0)
    m = np.asarray(m) if frame is None else frame.from_unit(m)
    return DCResult(prototypes=m, labels=labels, log_posterior=lp, **fields)


# --------------------------------------------------------------------------- #
# CG MAP: nonlinear conjugate gradients on the smoothed objective (Kaski et al. 2005 §3.1)
# --------------------------------------------------------------------------- #


def running_argmin_rows(rows, K: int):
    """(min, first argmin) over ``K`` rows given by ``rows(j) -> (n,)``, unrolled."""
    best = rows(0)
    index = jnp.zeros(best.shape, jnp.int32)
    for j in range(1, K):
        v = rows(j)
        better = v < best
        best = jnp.where(better, v, best)
        index = jnp.where(better, jnp.int32(j), index)
    return best, index


def rows_min_argmin(D):
    """(min, first argmin) over the rows of ``D`` (K, n), elementwise along ``n``."""
    K = D.shape[0]
    if K <= UNROLL_MAX_CLUSTERS:
        return running_argmin_rows(lambda j: D[j], K)
    return jnp.min(D, axis=0), jnp.argmin(D, axis=0).astype(jnp.int32)


def rows_sum(D):
    """Sum over the rows of ``D`` (K, n) as an unrolled elementwise chain.

    XLA:CPU reduces over the major axis of a small (K, n) array several times
    slower than this chain (measured); many rows fall back to ``jnp.sum``.
    """
    if D.shape[0] > UNROLL_MAX_CLUSTERS:
        return jnp.sum(D, axis=0)
    total = D[0]
    for j in range(1, D.shape[0]):
        total = total + D[j]
    return total


def blocks(n_iter: int, trace_points: int) -> tuple[int, int]:
    """(block length, number of blocks) covering ``n_iter`` steps with ``<= trace_points`` blocks."""
    n_blocks = max(1, min(trace_points, n_iter))
    length = -(-n_iter // n_blocks)
    return length, -(-n_iter // length)
