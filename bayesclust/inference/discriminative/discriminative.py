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
  memberships of width ``smooth_std``) -- :func:`dc_map` ("CG MAP", Kaski et al. 2005 §3.1);
* by simulated annealing on the exact objective -- :func:`dc_anneal` ("SA MAP", §3.1);
* by the older stochastic on-line algorithm with explicit class distributions
  -- :func:`sdc` ("sDC", §2.1, eqs. 5-6);
* or sampled: NUTS on the smoothed collapsed program -- :func:`dc_nuts`.

Every fit returns a :class:`DCResult` whose ``log_posterior`` is the exact eq. 9 of
the hard Voronoi cells of the training points (the paper evaluates without
smoothing), computed by :func:`bayesclust.metrics.dc_log_posterior`.

References
----------
S. Kaski, J. Sinkkonen and A. Klami, "Discriminative clustering", Neurocomputing 69
(2005) 18-41, §2.1, §3.1, §7.2.1.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import digamma, gammaln
from scipy.special import gammaln as _host_gammaln

from ... import _validation as V
from ...kernels import PRECISION, nearest_center, voronoi_memberships
from ...metrics import dc_log_posterior
from ...models.discriminative import dc_collapsed

__all__ = [
    "DCResult", "dc_map", "dc_anneal", "sdc", "dc_nuts", "dc_voronoi_labels", "width_grid",
    "stratified_split", "heldout_cost", "select_width",
]

#: Iterations of CG in the paper (§7.2.1: "the maximal number of iterations ... was set to 29").
CG_MAX_ITER = 29
#: Stochastic iterations per prototype of SA and sDC in the paper (§7.2.1).
STEPS_PER_CLUSTER = 100_000
#: Up to this many prototypes the per-point loops over prototypes are unrolled chains
#: (elementwise along n); beyond, axis reductions (slower on CPU, but compile time stays flat).
_UNROLL_MAX_CLUSTERS = 32


class DCResult(NamedTuple):
    """Result of :func:`dc_map`, :func:`dc_anneal` and :func:`sdc`.

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


# --------------------------------------------------------------------------- #
# Validation and initialisation shared by the entry points
# --------------------------------------------------------------------------- #


class _Problem(NamedTuple):
    X: np.ndarray  # (n, d) float32 / float64
    classes: np.ndarray  # (n,) int32, 0..C-1, every class non-empty
    n_clusters: int
    n_classes: int


def _check_problem(X, classes, n_clusters, n_classes) -> _Problem:
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
    return _Problem(X, classes.astype(np.int32), K, C)


def _check_init(rng_key, X: np.ndarray, K: int, init) -> np.ndarray:
    """Initial prototypes (K, d) in X's dtype: k-means centres, random data points, or given."""
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
    m = V.check_array(init, "init")
    if m.shape != (K, d):
        raise ValueError(f"init must have shape (n_clusters, d) = ({K}, {d}), got {m.shape}")
    return m.astype(X.dtype)


def _hyper(n0, lam_eq, lam_mog, lam_vq) -> tuple[float, float, float, float]:
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
    return _voronoi_labels(X, m)


def _work_dtype(X: np.ndarray) -> np.dtype:
    """float64 for float64 input when ``jax_enable_x64`` is on, else float32 (the convention)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(X.dtype))


@jax.jit
def _nearest_index(X, m):
    return nearest_center(X, m).index


def _voronoi_labels(X: np.ndarray, m: np.ndarray) -> np.ndarray:
    dt = _work_dtype(X)
    return np.asarray(_nearest_index(jnp.asarray(X, dt), jnp.asarray(m, dt))).astype(np.int64)


def _finish(problem: _Problem, m: np.ndarray, n0: float, **fields) -> DCResult:
    """Hard cells of the training points and their exact eq. 9, then the result."""
    labels = _voronoi_labels(problem.X, m)
    lp = dc_log_posterior(labels, problem.classes, n_clusters=problem.n_clusters,
                          n_classes=problem.n_classes, n0=n0)
    return DCResult(prototypes=np.asarray(m), labels=labels, log_posterior=lp, **fields)


# --------------------------------------------------------------------------- #
# CG MAP: nonlinear conjugate gradients on the smoothed objective (Kaski et al. 2005 §3.1)
# --------------------------------------------------------------------------- #


def _running_argmin_rows(rows, K: int):
    """(min, first argmin) over ``K`` rows given by ``rows(j) -> (n,)``, unrolled."""
    best = rows(0)
    index = jnp.zeros(best.shape, jnp.int32)
    for j in range(1, K):
        v = rows(j)
        better = v < best
        best = jnp.where(better, v, best)
        index = jnp.where(better, jnp.int32(j), index)
    return best, index


def _rows_min_argmin(D):
    """(min, first argmin) over the rows of ``D`` (K, n), elementwise along ``n``."""
    K = D.shape[0]
    if K <= _UNROLL_MAX_CLUSTERS:
        return _running_argmin_rows(lambda j: D[j], K)
    return jnp.min(D, axis=0), jnp.argmin(D, axis=0).astype(jnp.int32)


def _rows_sum(D):
    """Sum over the rows of ``D`` (K, n) as an unrolled elementwise chain.

    XLA:CPU reduces over the major axis of a small (K, n) array several times
    slower than this chain (measured); many rows fall back to ``jnp.sum``.
    """
    if D.shape[0] > _UNROLL_MAX_CLUSTERS:
        return jnp.sum(D, axis=0)
    total = D[0]
    for j in range(1, D.shape[0]):
        total = total + D[j]
    return total


@functools.partial(jax.jit, static_argnames=("n_classes", "use_mog", "use_vq"))
def _smoothed_value_and_grad(m, X, classes, smooth_std, n0, lam_eq, lam_mog, lam_vq, *,
                             n_classes, use_mog, use_vq):
    r"""Smoothed DC objective ``F`` (eq. 10 + 12/14/15) and its closed-form gradient (eq. 11).

    Equals :func:`~bayesclust.models.discriminative.dc_objective` with
    ``smooth_std`` and its :func:`jax.grad` (tested), written in a prototype-major
    ``(K, n)`` layout with every per-point quantity computed once:

    .. math::

        \frac{\partial F}{\partial m_j} = \sum_x a_j(x) (x - m_j), \quad
        a_j = \frac{y_j (L_{j,c} - \sum_l y_l L_{l,c})}{\sigma^2}
              + 2\lambda_{MoG} r_j + 2\lambda_{VQ} [x \in V_j],

    :math:`L_{ji} = \Psi(n^0 + n_{ji}) - (1 + \lambda_{EQ}) \Psi(N^0 + N_j)`
    (Appendix B; the regulariser terms are added to dF/dm_j, not to its sigma^2-scaled form).  It is
    several times faster than ``jax.value_and_grad(dc_objective)`` (BENCHMARKS.md), whose
    ``segment_sum`` counts transpose to a gather that XLA fuses with the digamma,
    evaluating it ``n K`` times.  The optimisation barriers stop XLA:CPU from
    recomputing the distances and exponentials inside every consumer's fusion
    (measured: BENCHMARKS.md).
    """
    barrier = lax.optimization_barrier
    K, d = m.shape
    dt = X.dtype
    Xt = X.T
    if d <= 4:  # exact differences
        D = jnp.stack([sum((Xt[t] - m[j, t]) ** 2 for t in range(d)) for j in range(K)])
    else:
        cross = jnp.matmul(m, Xt, precision=PRECISION)
        D = jnp.maximum(jnp.sum(X * X, axis=1)[None, :] - 2.0 * cross
                        + jnp.sum(m * m, axis=1)[:, None], 0.0)
    D = barrier(D)  # (K, n) squared distances
    dmin, cell = barrier(_rows_min_argmin(D))
    inv = 1.0 / (2.0 * smooth_std * smooth_std)
    E = barrier(jnp.exp((dmin[None, :] - D) * inv))
    Y = barrier(E * (1.0 / _rows_sum(E))[None, :])  # memberships y_j(x), eq. 4
    onehot = jax.nn.one_hot(classes, n_classes, dtype=dt)  # (n, C)
    counts = jnp.matmul(Y, onehot, precision=PRECISION)  # soft n_ji, (K, C)
    N = jnp.sum(counts, axis=1)
    N0 = n_classes * n0
    F = jnp.sum(gammaln(n0 + counts)) - (1.0 + lam_eq) * jnp.sum(gammaln(N0 + N))
    L = digamma(n0 + counts) - (1.0 + lam_eq) * digamma(N0 + N)[:, None]
    # L_{j, c(x)}, (K, n): a matmul, because XLA fuses the digamma into a gather
    Lx = jnp.matmul(L, onehot.T, precision=PRECISION)
    YL = barrier(Y * Lx)
    coef = (YL - Y * _rows_sum(YL)[None, :]) * (2.0 * inv)
    if use_vq:
        F = F - lam_vq * jnp.sum(dmin)
        coef = coef + (2.0 * lam_vq) * (cell[None, :] == jnp.arange(K)[:, None]).astype(dt)
    if use_mog:
        A = -jnp.log(jnp.asarray(K, dt)) - lam_mog * D  # log rho_j - lam ||x - m_j||^2
        amax = -_rows_min_argmin(-A)[0]  # row max
        R = barrier(jnp.exp(A - amax[None, :]))
        S = _rows_sum(R)
        F = F + jnp.sum(amax + jnp.log(S))
        coef = coef + (2.0 * lam_mog) * R * (1.0 / S)[None, :]
    grad = jnp.matmul(coef, X, precision=PRECISION) - jnp.sum(coef, axis=1)[:, None] * m
    return F, grad


def dc_map(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    init: Any = "kmeans",
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_mog: float = 0.0,
    lam_vq: float = 0.0,
    max_iter: int = CG_MAX_ITER,
    tol: float = 1e-5,
) -> DCResult:
    r"""MAP discriminative clustering by conjugate gradients on the smoothed objective ("CG MAP").

    Maximises the smoothed log posterior (Kaski et al. 2005, eq. 10, with the
    optional regularisers of eqs. 12, 14, 15)

    .. math::

        F(m) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j
               \log\Gamma(N^0 + N_j) \;[- E_{MoG} - \lambda_{VQ} E_{VQ}],
        \qquad n_{ji} = \sum_{x: c(x) = i} y_j(x),

    with normalised-Gaussian memberships
    :math:`y_j(x) \propto \exp(-\|x - m_j\|^2 / (2\sigma^2))` (eq. 4), whose
    gradient is eq. 11, by nonlinear conjugate gradients (Polak-Ribiere+, strong
    Wolfe line search) for at most ``max_iter`` = 29 iterations (§7.2.1).  The
    result is evaluated without smoothing (``log_posterior``, eq. 9).

    Parameters
    ----------
    rng_key : jax key or int
        Used by ``init="kmeans"`` / ``"random"`` only.
    X : array_like, shape (n, d)
        Primary data.
    classes : array_like of int, shape (n,)
        Auxiliary class ``0..C-1`` of every row.
    n_clusters : int
        Number of prototypes ``K`` (``<= n``).
    smooth_std : float
        Smoothing width :math:`\sigma` (a standard deviation, > 0), chosen by
        validation in the paper.
    init : {"kmeans", "random"} or array_like of shape (K, d), default "kmeans"
        ``"kmeans"``: the centres of :func:`bayesclust.inference.hard.kmeans.kmeans`
        (the paper's recommended start, §7.3); ``"random"``: ``K`` distinct random
        data points (the paper's Table 1 protocol); or the prototypes themselves.
    n_classes : int, optional
        ``C``; then ``classes`` must lie in ``0..C-1`` and every class must have samples.
        Default: the distinct values of ``classes``, numbered in increasing order (any
        integer ids).
    n0 : float, default 1
        Dirichlet prior count per class (the paper: 1).
    lam_eq, lam_mog, lam_vq : float, default 0
        Regularisers (>= 0): equal cluster sizes (eq. 12), mixture of Gaussians
        with :math:`\lambda_{MoG} = 1 / (2\sigma_{MoG}^2)` and uniform weights
        (eq. 14), K-means distortion with hard cells (eq. 15).
    max_iter : int, default 29
        CG iterations.
    tol : float, default 1e-5
        Converged when :math:`\max |\partial F / \partial m| \le` ``tol * n``
        (scipy's ``gtol``; the gradient is a sum over the ``n`` points).

    Returns
    -------
    DCResult
        ``method="cg"``; ``objective_trace`` holds :math:`F` (smoothed,
        regularised) at the start and after every iteration; it never decreases
        (the line search enforces sufficient increase).

    Raises
    ------
    ValueError, TypeError
        Bad ``X``/``classes`` (wrong length, non-integer, an empty class),
        ``n_clusters > n``, ``smooth_std <= 0``, negative regularisers, an
        unknown ``init``.

    Notes
    -----
    The optimiser is :func:`scipy.optimize.minimize` (``method="CG"``: the
    Polak-Ribiere+ variant with scipy's strong-Wolfe line search: the paper names
    no variant) on :math:`-F`, with :math:`F` and its closed-form gradient
    (eq. 11, plus the regulariser terms) from one jitted JAX function; it equals
    :func:`~bayesclust.models.discriminative.dc_objective` and its autodiff
    gradient (tested) and is several times faster than autodiff of it.  Why scipy
    rather than a JAX CG loop: the 29-iteration cap means some 60 evaluations of
    :math:`O(nKd)` each, so the host round trip per evaluation is small beside
    one (BENCHMARKS.md), while a jitted line search would
    add compile time to every new problem size.  The evaluation runs in
    **float64** (under :func:`jax.enable_x64`) whatever the input dtype: the
    objective is a difference of log-gamma terms of size :math:`O(n \log n)`,
    and a float32 line search on it stalls once steps change :math:`F` by less
    than its ulp.  The smoothed objective is non-concave: the result is a local
    maximum near the start (hence the k-means start; or keep the best of
    several).

    References
    ----------
    Kaski, Sinkkonen & Klami (2005), §3.1 (eqs. 10-11), §5, §7.2.1.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 400)
    >>> res = dc_map(0, X, c, 3, 0.3, init="random")
    >>> res.prototypes.shape, res.labels.shape, res.method
    ((3, 2), (400,), 'cg')
    >>> bool(res.objective_trace[-1] >= res.objective_trace[0])
    True
    """
    from scipy.optimize import minimize

    problem = _check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    n0, lam_eq, lam_mog, lam_vq = _hyper(n0, lam_eq, lam_mog, lam_vq)
    max_iter = V.check_int(max_iter, "max_iter", minimum=0)
    tol = V.check_positive(tol, "tol")
    key = V.as_rng_key(rng_key)
    m0 = _check_init(key, problem.X, problem.n_clusters, init)
    n, d = problem.X.shape
    K = problem.n_clusters

    with jax.enable_x64(True):
        Xj = jnp.asarray(problem.X, jnp.float64)
        cj = jnp.asarray(problem.classes)
        args = tuple(jnp.float64(v) for v in (smooth_std, n0, lam_eq, lam_mog, lam_vq))
        static = dict(n_classes=problem.n_classes, use_mog=lam_mog > 0, use_vq=lam_vq > 0)
        n_evals = [0]

        def fun(x):  # -F and -dF/dm for scipy's minimiser
            n_evals[0] += 1
            v, g = _smoothed_value_and_grad(jnp.asarray(x.reshape(K, d)), Xj, cj, *args, **static)
            return -float(v), -np.asarray(g, np.float64).ravel()

        x0 = m0.astype(np.float64).ravel()
        f0, g0 = fun(x0)
        trace = [-f0]

        def callback(intermediate_result):  # after every completed iteration
            trace.append(-float(intermediate_result.fun))

        if max_iter == 0:
            res_x, status, message, nit, fval = x0, 1, "max_iter=0: no iterations", 0, f0
            grad_max = float(np.max(np.abs(g0)))
        else:
            res = minimize(fun, x0, jac=True, method="CG", callback=callback,
                           options={"maxiter": max_iter, "gtol": tol * n})
            res_x, status, message, nit, fval = res.x, int(res.status), str(res.message), \
                int(res.nit), float(res.fun)
            grad_max = float(np.max(np.abs(res.jac)))

    m = res_x.reshape(K, d).astype(problem.X.dtype)
    return _finish(
        problem, m, n0,
        objective=-fval,
        objective_trace=np.asarray(trace, np.float64),
        n_iter=nit,
        converged=status == 0,
        smooth_std=smooth_std,
        method="cg",
        info={"init_prototypes": m0, "n_evals": n_evals[0], "status": status,
              "message": message, "grad_max": grad_max},
    )


# --------------------------------------------------------------------------- #
# SA MAP: simulated annealing on the exact objective (Kaski et al. 2005 §3.1)
# --------------------------------------------------------------------------- #


def _blocks(n_iter: int, trace_points: int) -> tuple[int, int]:
    """(block length, number of blocks) covering ``n_iter`` steps with ``<= trace_points`` blocks."""
    n_blocks = max(1, min(trace_points, n_iter))
    length = -(-n_iter // n_blocks)
    return length, -(-n_iter // length)


class _SAState(NamedTuple):
    m: jax.Array  # (K, d) prototypes
    Dt: jax.Array  # (K, n) cached squared distances ("one" move; (1, 1) dummy for "all")
    labels: jax.Array  # (n,) int32 cells
    counts: jax.Array  # (K, C) int32 contingency table
    energy: jax.Array  # float64 exact (regularised) objective of the state
    best_m: jax.Array
    best_energy: jax.Array
    n_accepted: jax.Array  # int32


def _anneal_draws(key, b, block: int, K: int, d: int, move: str, dtype):
    """Random numbers of SA block ``b``: displacements (standard normal), moved
    prototype (``"one"``), log-uniforms of the acceptance test (float64)."""
    k_eps, k_which, k_u = jax.random.split(jax.random.fold_in(key, b), 3)
    eps = jax.random.normal(k_eps, (block, K, d) if move == "all" else (block, d), dtype)
    which = jax.random.randint(k_which, (block,), 0, K)
    log_u = jnp.log(jax.random.uniform(k_u, (block,), jnp.float64, minval=1e-300))
    return eps, which, log_u


@functools.partial(
    jax.jit, static_argnames=("n_classes", "move", "block", "n_blocks", "use_vq")
)
def _anneal_run(key, X, classes, m0, jump_std, n_iter, t_cls, t_tot, lam_vq, *,
                n_classes, move, block, n_blocks, use_vq):
    """Metropolis annealing on the exact objective; returns the final state and the trace."""
    n, d = X.shape
    K, C = m0.shape[0], n_classes
    fdt = X.dtype
    Xt = X.T  # (d, n): one feature per contiguous row

    def column(mk):  # |x - m_k|^2 for every point, exact differences, (n,)
        return sum((Xt[t] - mk[t]) ** 2 for t in range(d))

    def counts_of(labels):
        return jax.ops.segment_sum(jnp.ones(n, jnp.int32), labels * C + classes,
                                   K * C).reshape(K, C)

    def energy_of(counts, min_sq):
        e = jnp.sum(t_cls[counts]) - jnp.sum(t_tot[counts.sum(1)])
        if use_vq:
            e = e - lam_vq * jnp.sum(min_sq.astype(jnp.float64))
        return e

    if move == "one":
        Dt = jax.vmap(column)(m0)
        min_sq, labels = _running_argmin_rows(lambda j: Dt[j], K)
    else:
        Dt = jnp.zeros((1, 1), fdt)
        nc = nearest_center(X, m0)
        min_sq, labels = nc.sq_dist, nc.index
    counts = counts_of(labels)
    e0 = energy_of(counts, min_sq)
    state = _SAState(m0, Dt, labels, counts, e0, m0, e0, jnp.int32(0))
    denom = jnp.maximum(n_iter - 1, 1).astype(jnp.float64)

    def propose_all(st, s, eps, scale):
        m_new = st.m + scale * eps  # eps (K, d)
        nc = nearest_center(X, m_new)
        counts = counts_of(nc.index)
        e_new = energy_of(counts, nc.sq_dist)

        def accept(st):
            return st._replace(m=m_new, labels=nc.index, counts=counts, energy=e_new)

        return e_new, m_new, accept

    def propose_one(st, k, eps, scale):
        mk = st.m[k] + scale * eps  # eps (d,)
        col = column(mk)
        if K <= _UNROLL_MAX_CLUSTERS:
            min_sq, labels = _running_argmin_rows(
                lambda j: jnp.where(k == j, col, st.Dt[j]), K)
        else:
            D = jnp.where((jnp.arange(K) == k)[:, None], col[None, :], st.Dt)
            labels = jnp.argmin(D, axis=0).astype(jnp.int32)
            min_sq = jnp.min(D, axis=0)
        counts = counts_of(labels)
        e_new = energy_of(counts, min_sq)
        m_new = st.m.at[k].set(mk)

        def accept(st):
            return st._replace(m=m_new, Dt=lax.dynamic_update_index_in_dim(st.Dt, col, k, 0),
                               labels=labels, counts=counts, energy=e_new)

        return e_new, m_new, accept

    def block_body(st, b):
        eps, which, log_u = _anneal_draws(key, b, block, K, d, move, fdt)

        def step(i, st):
            s = b * block + i
            active = s < n_iter
            T = 1.0 - 0.9 * s.astype(jnp.float64) / denom  # linear 1 -> 0.1 (§3.1)
            scale = (T ** 0.25).astype(fdt) * jump_std  # covariance sqrt(T) jump_std^2 I
            if move == "all":
                e_new, m_new, accept = propose_all(st, s, eps[i], scale)
            else:
                e_new, m_new, accept = propose_one(st, which[i], eps[i], scale)
            delta = e_new - st.energy
            ok = active & ((delta >= 0) | (log_u[i] < delta / T))
            st = lax.cond(ok, accept, lambda st: st, st)
            better = ok & (e_new > st.best_energy)
            return st._replace(
                best_m=jnp.where(better, m_new, st.best_m),
                best_energy=jnp.where(better, e_new, st.best_energy),
                n_accepted=st.n_accepted + ok.astype(jnp.int32),
            )

        st = lax.fori_loop(0, block, step, st)
        return st, st.energy

    state, trace = lax.scan(block_body, state, jnp.arange(n_blocks))
    return state, jnp.concatenate([e0[None], trace])


def dc_anneal(
    rng_key,
    X,
    classes,
    n_clusters: int,
    jump_std: float,
    *,
    n_iter: int | None = None,
    init: Any = "random",
    move: str = "all",
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_vq: float = 0.0,
    return_best: bool = False,
    trace_points: int = 1000,
) -> DCResult:
    r"""MAP discriminative clustering by simulated annealing on the exact objective ("SA MAP").

    Metropolis annealing of the unsmoothed log posterior (Kaski et al. 2005,
    eq. 9, with the optional eq. 12 and 15 regularisers)

    .. math::

        E(m) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j
               \log\Gamma(N^0 + N_j) - \lambda_{VQ} \sum_x \min_j \|x - m_j\|^2

    with hard Voronoi counts :math:`n_{ji}`.  Iteration ``s = 0..S-1`` has
    temperature :math:`T_s = 1 - 0.9\, s / (S - 1)` (linear from 1 to 0.1), proposes
    :math:`m' = m + \varepsilon`, :math:`\varepsilon \sim N(0, \sqrt{T_s}\,
    \sigma_{SA}^2 I)` -- a per-coordinate standard deviation of
    :math:`T_s^{1/4} \sigma_{SA}` -- and accepts with probability
    :math:`\min(1, \exp((E' - E) / T_s))` (§3.1, §7.2.1).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    n_clusters : int
    jump_std : float
        :math:`\sigma_{SA}`, the jump width (> 0; the paper validates it over 30
        log-spaced values).
    n_iter : int, optional
        Proposals ``S``; default ``100_000 * n_clusters`` (the paper).
    init : {"random", "kmeans"} or array_like (K, d), default "random"
        As in :func:`dc_map` (the paper starts from random data points).
    move : {"all", "one"}, default "all"
        ``"all"``: every prototype is displaced at every proposal (the paper's
        wording, "small random displacements to the prototype vectors";
        docs/deviations.md#dc-anneal-moves), :math:`O(nKd)` per proposal.  ``"one"`` (ours): one
        uniformly chosen prototype per proposal, with the ``(K, n)`` distance
        matrix cached and one column recomputed: :math:`O(n(d + K))` per
        proposal.  With ``"one"`` each prototype receives ``S / K`` proposals.
    n_classes : int, optional
    n0 : float, default 1
    lam_eq, lam_vq : float, default 0
        Regularisers of the annealed objective (eqs. 12, 15).
    return_best : bool, default False
        Return the best state visited instead of the final one (an option; the paper does not say).
    trace_points : int, default 1000
        The objective is recorded after every block of ``ceil(S / trace_points)``
        proposals.

    Returns
    -------
    DCResult
        ``method="sa"``, ``smooth_std=None``; ``objective`` is :math:`E` of the
        returned state.

    Raises
    ------
    ValueError, TypeError
        As :func:`dc_map`; ``jump_std <= 0``; an unknown ``move``.

    Notes
    -----
    One jitted :func:`jax.lax.scan` over blocks, each a :func:`jax.lax.fori_loop`
    over proposals; the random numbers of a block are drawn in bulk.  The
    contingency table is recounted per proposal (one ``segment_sum`` over the
    ``n`` points, integer and exact) and :math:`E` is read from precomputed
    float64 tables of :math:`\log\Gamma(n^0 + m)` and :math:`\log\Gamma(N^0 + m)`,
    ``m = 0..n``, so the bookkeeping never drifts; the run is under
    :func:`jax.enable_x64` for that float64 energy, while the distances use the
    usual precision (float32, or float64 for float64 input with
    ``jax_enable_x64`` on).  Its proposal rate is in BENCHMARKS.md.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 200)
    >>> res = dc_anneal(0, X, c, 3, 0.3, n_iter=2000, move="one")
    >>> res.method, res.n_iter, res.labels.shape
    ('sa', 2000, (200,))
    """
    problem = _check_problem(X, classes, n_clusters, n_classes)
    jump_std = V.check_positive(jump_std, "jump_std")
    n0, lam_eq, _, lam_vq = _hyper(n0, lam_eq, 0.0, lam_vq)
    K, C = problem.n_clusters, problem.n_classes
    n = problem.X.shape[0]
    n_iter = STEPS_PER_CLUSTER * K if n_iter is None else V.check_int(n_iter, "n_iter", minimum=1)
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    if move not in ("all", "one"):
        raise ValueError(f"move must be 'all' or 'one', got {move!r}")
    key = V.as_rng_key(rng_key)
    k_init, k_run = jax.random.split(key)
    m0 = _check_init(k_init, problem.X, K, init)

    # Exact count terms as lookup tables (host float64): lgamma(n0 + m), (1+lam) lgamma(N0 + m).
    counts_range = np.arange(n + 1, dtype=np.float64)
    t_cls = _host_gammaln(n0 + counts_range)
    t_tot = (1.0 + lam_eq) * _host_gammaln(C * n0 + counts_range)
    block, n_blocks = _blocks(n_iter, trace_points)
    dt = _work_dtype(problem.X)  # distances: the usual precision; the energy: float64
    with jax.enable_x64(True):
        Xj = jnp.asarray(problem.X, dt)
        state, trace = _anneal_run(
            k_run, Xj, jnp.asarray(problem.classes), jnp.asarray(m0, dt), dt.type(jump_std),
            jnp.int64(n_iter), jnp.asarray(t_cls), jnp.asarray(t_tot), jnp.float64(lam_vq),
            n_classes=C, move=move, block=block, n_blocks=n_blocks, use_vq=lam_vq > 0,
        )
        state = jax.device_get(state)
        trace = np.asarray(trace, np.float64)
    final_e, best_e = float(state.energy), float(state.best_energy)
    m = np.asarray(state.best_m if return_best else state.m)
    return _finish(
        problem, m, n0,
        objective=best_e if return_best else final_e,
        objective_trace=trace,
        n_iter=n_iter,
        converged=True,
        smooth_std=None,
        method="sa",
        info={"init_prototypes": m0, "accept_rate": int(state.n_accepted) / n_iter,
              "best_objective": best_e, "final_objective": final_e,
              "final_counts": np.asarray(state.counts, np.int64),
              "final_prototypes": np.asarray(state.m),
              "returned": "best" if return_best else "final", "move": move,
              "jump_std": jump_std},
    )


# --------------------------------------------------------------------------- #
# sDC: the stochastic on-line algorithm (Kaski et al. 2005 §2.1)
# --------------------------------------------------------------------------- #


def _sdc_objective(m, gamma, X, classes, smooth_std):
    """Smoothed conditional log-likelihood ``sum_x sum_j y_j(x) log psi_{j, c(x)}``."""
    Y, _ = voronoi_memberships(X, m, smooth_std)
    log_psi = jax.nn.log_softmax(gamma, axis=1)
    return jnp.sum(Y * log_psi[:, classes].T)


def _sdc_draws(key, b, block: int, n: int, dtype):
    """Random numbers of sDC block ``b``: sample index (i.i.d. with replacement) and
    two uniforms per step (inverse-CDF draws of ``j`` and ``l``)."""
    k_idx, k_u = jax.random.split(jax.random.fold_in(key, b))
    return (jax.random.randint(k_idx, (block,), 0, n),
            jax.random.uniform(k_u, (block, 2), dtype))


@functools.partial(jax.jit, static_argnames=("n_classes", "block", "n_blocks"))
def _sdc_run(key, X, classes, m0, smooth_std, rate, n_steps, *, n_classes, block, n_blocks):
    n, d = X.shape
    K, C = m0.shape[0], n_classes
    fdt = X.dtype
    inv_two_s2 = 1.0 / (2.0 * smooth_std * smooth_std)
    eye = jnp.eye(C, dtype=fdt)

    def step(t, carry, idx, u):
        m, gamma = carry
        alpha = jnp.where(t < n_steps, rate * (1.0 - t.astype(fdt) / n_steps.astype(fdt)), 0.0)
        x, i = X[idx], classes[idx]
        y = jax.nn.softmax(-jnp.sum((x - m) ** 2, axis=1) * inv_two_s2)  # eq. 4, (K,)
        cdf = jnp.cumsum(y)
        j = jnp.minimum(jnp.sum(cdf < u[0] * cdf[-1]), K - 1)  # j, l ~ y independently
        l = jnp.minimum(jnp.sum(cdf < u[1] * cdf[-1]), K - 1)
        log_psi = jax.nn.log_softmax(gamma, axis=1)
        psi = jnp.exp(log_psi)
        ratio = log_psi[l, i] - log_psi[j, i]  # log(psi_li / psi_ji)
        # eq. 5 for j, then with j and l swapped; both from the pre-step parameters.
        dm_j = -alpha * (x - m[j]) * ratio
        dm_l = alpha * (x - m[l]) * ratio  # -alpha (x - m_l) log(psi_ji / psi_li)
        # eq. 6 with the doubled coefficient of §7.2.1; j = l gets both updates.
        dg_j = -2.0 * alpha * (psi[j] - eye[i])
        dg_l = -2.0 * alpha * (psi[l] - eye[i])
        m = m.at[j].add(dm_j).at[l].add(dm_l)
        gamma = gamma.at[j].add(dg_j).at[l].add(dg_l)
        return m, gamma

    def block_body(carry, b):
        idx, u = _sdc_draws(key, b, block, n, fdt)

        def body(s, carry):
            return step(b * block + s, carry, idx[s], u[s])

        carry = lax.fori_loop(0, block, body, carry)
        return carry, _sdc_objective(carry[0], carry[1], X, classes, smooth_std)

    gamma0 = jnp.zeros((K, C), fdt)
    start = _sdc_objective(m0, gamma0, X, classes, smooth_std)
    (m, gamma), trace = lax.scan(block_body, (m0, gamma0), jnp.arange(n_blocks))
    return m, gamma, jnp.concatenate([start[None], trace])


def sdc(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    n_iter: int | None = None,
    rate: float = 0.05,
    init: Any = "random",
    n_classes: int | None = None,
    n0: float = 1.0,
    trace_points: int = 100,
) -> DCResult:
    r"""Discriminative clustering by the stochastic on-line algorithm ("sDC").

    The earlier algorithm (Kaski et al. 2005, §2.1, eqs. 4-6) maximises the
    smoothed conditional log-likelihood
    :math:`\sum_x \sum_j y_j(x) \log \psi_{j, c(x)}` with explicit class
    distributions :math:`\log\psi_{ji} = \gamma_{ji} - \log\sum_m e^{\gamma_{jm}}`.
    Step ``t``: draw a training pair :math:`(x, c(x) = i)` uniformly with
    replacement; draw two prototypes :math:`j, l \sim y(x)` independently
    (eq. 4); then, from the pre-step parameters,

    .. math::

        m_j \mathrel{-}= \alpha_t (x - m_j) \log\frac{\psi_{li}}{\psi_{ji}}, \qquad
        \gamma_{j\cdot} \mathrel{-}= 2\alpha_t (\psi_{j\cdot} - e_i),

    and the same with ``j`` and ``l`` swapped (eqs. 5-6; the coefficient of (6)
    doubled as in §7.2.1).  :math:`\alpha_t = \text{rate}\,(1 - t / S)`
    decreases linearly from 0.05 to 0 over ``S = 100,000 K`` steps.  If
    ``j = l`` the prototypes do not move and :math:`\gamma_j` receives both
    updates.  :math:`\gamma` starts at 0 (uniform :math:`\psi`; ours).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
    n_clusters : int
    smooth_std : float
        :math:`\sigma` of the memberships (> 0).
    n_iter : int, optional
        The number of steps ``S``; default ``100_000 * n_clusters`` (the paper), as
        :func:`dc_anneal`'s ``n_iter``.
    rate : float, default 0.05
        :math:`\alpha_0` (> 0).
    init : {"random", "kmeans"} or array_like (K, d), default "random"
    n_classes : int, optional
    n0 : float, default 1
        Used only for the reported ``log_posterior`` (eq. 9); sDC has no prior.
    trace_points : int, default 100
        The objective on the training data is recorded after every block of
        ``ceil(S / trace_points)`` steps (each record costs :math:`O(nKd)`).

    Returns
    -------
    DCResult
        ``method="sdc"``; ``info["psi"]`` holds the final class distributions
        (which the paper discards: only the partition is evaluated).

    Raises
    ------
    ValueError, TypeError
        As :func:`dc_map`; ``rate <= 0``.

    Notes
    -----
    Our resolutions of the paper's silences (docs/deviations.md#sdc-schedule): a single linear ramp (the paper's
    "piecewise-linearly" gives no breakpoints), sampling with replacement, both
    adaptations from the pre-step parameters.  One jitted
    :func:`jax.lax.scan` over blocks of a :func:`jax.lax.fori_loop`; the random
    numbers of a block are drawn in bulk, and ``j, l`` by inverse-CDF lookup.
    Computed in float32, or float64 for float64 input with ``jax_enable_x64`` on.

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 200)
    >>> res = sdc(0, X, c, 3, 0.3, n_iter=2000)
    >>> res.method, res.info["psi"].shape
    ('sdc', (3, 2))
    """
    problem = _check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    rate = V.check_positive(rate, "rate")
    n0 = V.check_positive(n0, "n0")
    K, C = problem.n_clusters, problem.n_classes
    n_steps = STEPS_PER_CLUSTER * K if n_iter is None else V.check_int(n_iter, "n_iter", minimum=1)
    trace_points = V.check_int(trace_points, "trace_points", minimum=1)
    key = V.as_rng_key(rng_key)
    k_init, k_run = jax.random.split(key)
    m0 = _check_init(k_init, problem.X, K, init)
    block, n_blocks = _blocks(n_steps, trace_points)
    dt = _work_dtype(problem.X)
    m, gamma, trace = _sdc_run(
        k_run, jnp.asarray(problem.X, dt), jnp.asarray(problem.classes), jnp.asarray(m0, dt),
        dt.type(smooth_std), dt.type(rate), jnp.int32(n_steps), n_classes=C, block=block,
        n_blocks=n_blocks,
    )
    m = np.asarray(m)
    psi = np.asarray(jax.nn.softmax(gamma, axis=1), np.float64)
    trace = np.asarray(trace, np.float64)
    return _finish(
        problem, m, n0,
        objective=float(trace[-1]),
        objective_trace=trace,
        n_iter=n_steps,
        converged=True,
        smooth_std=smooth_std,
        method="sdc",
        info={"init_prototypes": m0, "psi": psi, "rate": rate},
    )


# --------------------------------------------------------------------------- #
# NUTS on the smoothed collapsed program
# --------------------------------------------------------------------------- #


def _voronoi_label_draws(rng_key, samples: dict, model_args: tuple, model_kwargs: dict):
    """Label sampler for :func:`~bayesclust.inference.mixtures.mcmc.run_nuts`: hard cells per draw.

    The class distributions are integrated out and the partition is a
    deterministic function of the prototypes, so each draw's labels are its
    Voronoi cells (no randomness; ``rng_key`` is unused).
    """
    del rng_key, model_kwargs
    X = jnp.asarray(model_args[0])
    protos = jnp.asarray(samples["prototypes"], X.dtype)
    return lax.map(lambda m: nearest_center(X, m).index, protos,
                   batch_size=max(1, min(protos.shape[0], (1 << 22) // max(1, X.shape[0]))))


def dc_nuts(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    num_warmup: int = 500,
    num_samples: int = 500,
    num_chains: int = 1,
    init: Any = "kmeans",
    map_init: bool = True,
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_mog: float = 0.0,
    lam_vq: float = 0.0,
    progress_bar: bool = False,
    **kwargs,
):
    r"""Sample the prototypes of smoothed discriminative clustering with NUTS.

    Runs :func:`bayesclust.inference.mixtures.mcmc.run_nuts` on
    :func:`~bayesclust.models.discriminative.dc_collapsed` with ``smooth_std``
    (the class distributions integrated out; the density is the smoothed
    objective :math:`\exp F(m)` of eq. 10 with the optional regularisers, under
    the paper's flat prior), starting every chain at the CG MAP
    (:func:`dc_map`) via ``init_to_value``.  Each draw's labels are the hard
    Voronoi cells of its prototypes.

    Parameters
    ----------
    rng_key : jax key or int
        Split into the initialisation key and the NUTS key.
    X, classes, n_clusters, smooth_std, n_classes, n0, lam_eq, lam_mog, lam_vq
        As in :func:`dc_map`.
    num_warmup, num_samples, num_chains : int, default 500, 500, 1
    init : {"kmeans", "random"} or array_like (K, d), default "kmeans"
        Start of the CG MAP (or, with ``map_init=False``, of the chains).
    map_init : bool, default True
        Start the chains at :func:`dc_map` run from ``init``.
    progress_bar : bool, default False
    **kwargs
        Passed to :func:`~bayesclust.inference.mixtures.mcmc.run_nuts` (``chain_method``,
        ``nuts_kwargs``; an ``init_strategy`` there overrides the MAP start).

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n): hard Voronoi cells of each draw;
        ``params["prototypes"]`` (chains, draws, K, d).

    Notes
    -----
    The flat prior on the prototypes is improper, and so is the smoothed
    posterior: a prototype far from the data has vanishing memberships and the
    density no longer depends on where it is; and moves that leave every
    membership unchanged are exactly flat (for ``K = 2``, sliding both
    prototypes along their bisector).  NUTS trajectories along flat directions
    never turn back, so trees hit ``max_tree_depth`` (cap it through
    ``nuts_kwargs={"max_tree_depth": ...}``).  Starting every chain at the MAP
    keeps them in the mode's basin for moderate runs; check the draws (an
    escaping prototype shows as an empty cell).  Prototype draws are not identified
    (label switching); use the label-invariant summaries of ``Posterior``
    (co-clustering, point estimate, number of non-empty cells).  NUTS runs in
    JAX's default precision (float32 unless ``jax_enable_x64``); the smoothed
    density is sharply peaked for large ``n`` or small ``smooth_std``, where
    NUTS needs small steps (long warm-up).

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 40)
    >>> post = dc_nuts(0, X, c, 2, 0.5, num_warmup=50, num_samples=20,
    ...                init="random")  # doctest: +SKIP
    >>> post.labels.shape  # doctest: +SKIP
    (1, 20, 40)
    """
    from numpyro.infer import init_to_value

    from ..mixtures.mcmc import run_nuts

    problem = _check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    n0, lam_eq, lam_mog, lam_vq = _hyper(n0, lam_eq, lam_mog, lam_vq)
    key = V.as_rng_key(rng_key)
    k_init, k_nuts = jax.random.split(key)
    if map_init:
        m0 = dc_map(k_init, problem.X, problem.classes, problem.n_clusters, smooth_std, init=init,
                    n_classes=problem.n_classes, n0=n0, lam_eq=lam_eq, lam_mog=lam_mog,
                    lam_vq=lam_vq).prototypes
    else:
        m0 = _check_init(k_init, problem.X, problem.n_clusters, init)
    nuts_kwargs = dict(kwargs.pop("nuts_kwargs", None) or {})
    X_run = jnp.asarray(problem.X)  # JAX's default precision
    nuts_kwargs.setdefault("init_strategy",
                           init_to_value(values={"prototypes": jnp.asarray(m0, X_run.dtype)}))
    return run_nuts(
        k_nuts, dc_collapsed, X_run, jnp.asarray(problem.classes), problem.n_clusters,
        problem.n_classes, smooth_std,
        num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
        progress_bar=progress_bar, label_sampler=_voronoi_label_draws, nuts_kwargs=nuts_kwargs,
        n0=n0, lam_eq=lam_eq, lam_mog=lam_mog, lam_vq=lam_vq, **kwargs,
    )


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
    smoothing of :func:`dc_map` and :func:`sdc`, the jump width of
    :func:`dc_anneal`, or the spread of the mixture baselines.

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
    >>> X, c = dc_toy(0, 400)
    >>> fit = lambda key, X, c, s: dc_map(key, X, c, 2, s, init="random").prototypes
    >>> best, costs = select_width(0, fit, X, c, [0.1, 1.0])
    >>> costs.shape
    (2,)
    """
    problem = _check_problem(X, classes, 1, n_classes)
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
