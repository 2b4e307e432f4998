"""k-means (Lloyd's algorithm), the VQ baseline of the discriminative-clustering
experiments (Kulis & Jordan 2012, §6.2; Kaski et al. 2005, §7) and an initialiser for their optimisers.

The assignment and update steps are the shared kernels
(:func:`~bayesclust.kernels.nearest_center_stats`, :func:`~bayesclust.kernels.segment_stats`,
:func:`~bayesclust.kernels.weighted_means`): the same numbers as DP-means'
assignment and mean steps.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import (
    nearest_center,
    nearest_center_stats,
    padded_rows,
    squared_norms,
    sum_rows,
    weighted_means,
)
from .._driver import best_of_restarts, pow2_at_least, run_in_pieces
from ._common import _from_unit

__all__ = [
    "kmeans",
    "KMeansResult",
    "KMeansState",
    "KMeansInfo",
    "init_kmeans_state",
    "kmeans_step",
    "kmeans_init",
]

#: Entries of the driver's objective-trace buffer: a run of more iterations records
#: its trace in pieces (``inference._driver.run_in_pieces``), so that ``max_iter``
#: stays a traced scalar.
_TRACE_LEN = 128


class KMeansResult(NamedTuple):
    """Result of :func:`kmeans`.

    Attributes
    ----------
    centers : ndarray, shape (n_clusters, d)
        Final centres.
    labels : ndarray of int32, shape (n,)
        Nearest final centre of every point (lowest index on ties).
    objective : float
        The minimised sum of squares ``sum_i w_i |x_i - centers[labels_i]|^2`` of the
        returned centres and labels (a final assignment step, computed directly): at most
        ``objective_trace[-1]``, equal to it up to rounding when the assignment repeated.
    objective_trace : ndarray, shape (n_iter + 1,)
        The minimised sum of squares at the initial centres (every point at its nearest)
        and after every iteration (the iteration's labels at the updated means); never
        increases (up to rounding).  float64 when the data's dtype cannot hold it.
    n_iter : int
        Lloyd iterations run (one iteration = assignment + mean update).
    converged : bool
        True when the assignment stopped changing or the total squared centre
        shift fell to ``tol`` (relative) before ``max_iter``.
    restart_objectives : ndarray of float, shape (n_init,)
        The final ``objective`` of every start, in order (the returned run is the first
        start with the lowest).
    """

    centers: np.ndarray
    labels: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray


class KMeansState(NamedTuple):
    """State of a Lloyd run between two iterations.

    Made by :func:`init_kmeans_state`, advanced by :func:`kmeans_step`; :func:`kmeans`
    (and :func:`masked_lloyd`) loop over the step.

    Attributes
    ----------
    centers : array, shape (capacity, d)
        The centres (the means of ``labels`` after a step; an empty or inactive slot
        keeps its centre).
    labels : int32 array, shape (n,)
        The last step's assignment, to the centres it started from (lowest index on
        ties); ``-1`` in the initial state, so that the first step counts as a change.
    objective : scalar, dtype of ``X``
        ``sum_i w_i |x_i - centers[labels_i]|^2`` (minimised); in the initial state,
        every point at its nearest initial centre.
    objective_trace : array, shape (T,), dtype of ``X``
        The objective after initialisation and after iterations ``1..n_iter`` in
        entries ``0..n_iter``, NaN after them; ``T``, the smallest power of two
        ``>= max_iter + 1`` (``max_iter`` given to the init), bounds what is recorded.
    n_iter : int32 scalar
        Iterations done.
    converged : bool scalar
        The last step's assignment repeated the one before it, or its total squared
        centre shift was at most ``tol``.
    """

    centers: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array


class KMeansInfo(NamedTuple):
    """Diagnostics of one :func:`kmeans_step`.

    Attributes
    ----------
    objective : scalar
        Objective of the returned state.
    changed : bool scalar
        The step's assignment differs from the previous step's.
    shift : scalar
        Total squared centre shift of the mean update, ``sum_k |mu_k^new - mu_k|^2``.
    """

    objective: jax.Array
    changed: jax.Array
    shift: jax.Array


def _step(s: KMeansState, X, w, valid, tol, Xw, real=None):
    """One Lloyd iteration of ``s`` (``w`` None: unit weights; ``valid`` the active slots;
    ``real`` None, or the rows that are not padding: only their labels enter the stopping test)."""
    assigned, stats = nearest_center_stats(X, s.centers, valid, w, weighted_X=Xw)
    labels = assigned.index
    # An empty cluster keeps its previous centre.
    moved = stats.weight[:, None] > 0
    new = jnp.where(moved, weighted_means(stats), s.centers)
    delta = jnp.sum(jnp.square(new - s.centers), axis=1)
    shift = jnp.sum(delta)
    # The sum of squares at the new means from the pass's exact distances by the
    # parallel-axis identity, per cluster sum w |x - a|^2 = sum w |x - m|^2 + W |m - a|^2
    # (a the old centre, m the mean, W the cluster's weight): O(k d), no second pass.
    sse = sum_rows(assigned.sq_dist if w is None else w * assigned.sq_dist)
    obj = jnp.maximum(sse - jnp.sum(stats.weight * delta), 0.0).astype(s.objective.dtype)
    differs = labels != s.labels
    changed = jnp.any(differs if real is None else differs & real)
    it = s.n_iter + 1
    state = KMeansState(new, labels, obj, s.objective_trace.at[it].set(obj), it,
                        ~changed | (shift <= tol))
    return state, KMeansInfo(obj, changed, shift)


def kmeans_step(state: KMeansState, X, *, sample_weight=None, tol=0.0) -> tuple[KMeansState, KMeansInfo]:
    """One Lloyd iteration on a state: the assignment, the mean update, the stopping test.

    Every point goes to its nearest centre (lowest index on ties;
    :func:`~bayesclust.kernels.nearest_center_stats`), every non-empty cluster's centre
    to the (weighted) mean of its points; ``converged`` when the assignment repeats or
    the total squared centre shift is at most ``tol``.  :func:`kmeans` is this step in a
    ``lax.while_loop`` from :func:`init_kmeans_state`, stopped by ``converged`` or
    ``max_iter``; stepping by hand on the same data reproduces it exactly.  Works eagerly
    and under ``jax.jit``; concrete arguments are checked (traced ones are the compiled
    caller's to check).

    Parameters
    ----------
    state : KMeansState
    X : array, shape (n, d)
        The data the state was made from.  :func:`kmeans` works on
        ``(X - mean) * 2**-e`` (the weighted mean subtracted in the input dtype, ``e``
        putting the largest value in [0.5, 1)) with ``tol`` its relative tolerance times
        the mean per-feature variance of ``X`` times ``4**-e``.
    sample_weight : array, shape (n,), optional
        Non-negative weights (default 1).
    tol : float scalar, default 0
        Absolute tolerance on the total squared centre shift (0: stop at a fixed point).

    Returns
    -------
    state : KMeansState
    info : KMeansInfo
        ``objective`` of the returned state, whether the assignment ``changed``, and
        the centre ``shift``.

    Raises
    ------
    ValueError, TypeError
        Naming ``X`` (not finite, not one row per state label or not the centres'
        columns, squared distances beyond the state's dtype), ``sample_weight`` (not one
        finite non-negative weight per row) or ``tol`` (negative or not a number).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]], np.float32)
    >>> state = init_kmeans_state(X, X[[0, 2]])
    >>> while not state.converged:
    ...     state, info = kmeans_step(state, X)
    >>> state.labels.tolist(), int(state.n_iter), round(float(state.objective), 4)
    ([0, 0, 1, 1], 2, 0.04)
    """
    X = V.check_step_data(X, state.labels, state.centers, state.centers.dtype)
    sample_weight = V.check_step_weights(sample_weight, X)
    tol = V.check_step_scalar(tol, "tol")
    X = jnp.asarray(X)
    w = None if sample_weight is None else jnp.asarray(sample_weight, X.dtype)
    valid = jnp.ones(state.centers.shape[0], bool)
    return _step(state, X, w, valid, jnp.asarray(tol, X.dtype), None)


def _initial_state(X, w, centers, valid, trace_len):
    nearest = nearest_center(X, centers, valid)
    obj = sum_rows(nearest.sq_dist if w is None else w * nearest.sq_dist).astype(X.dtype)
    return KMeansState(
        centers.astype(X.dtype), jnp.full(X.shape[0], -1, jnp.int32), obj,
        jnp.full(trace_len, jnp.nan, X.dtype).at[0].set(obj), jnp.asarray(0, jnp.int32),
        jnp.asarray(False),
    )


def init_kmeans_state(X, centers, *, sample_weight=None, max_iter=100) -> KMeansState:
    """The state Lloyd's algorithm starts from: the given centres, no assignment yet.

    Parameters
    ----------
    X : array, shape (n, d)
        Data (see :func:`kmeans_step` for the frame :func:`kmeans` works in).
    centers : array, shape (n_clusters, d)
        Initial centres (e.g. :func:`kmeans_init`'s, in the same frame as ``X``).
    sample_weight : array, shape (n,), optional
        Non-negative weights (default 1).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    KMeansState
        ``labels`` all ``-1``, ``objective`` the sum of squares of every point at its
        nearest initial centre (one assignment pass).
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    centers = V.check_kernel_array(centers, "centers", ndim=2)
    X = jnp.asarray(X)
    C = jnp.asarray(centers, X.dtype)
    if C.ndim != 2 or C.shape[1] != X.shape[1] or C.shape[0] < 1:
        raise ValueError(f"centers must have shape (n_clusters, {X.shape[1]}), got {C.shape}")
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    w = None if sample_weight is None else jnp.asarray(sample_weight, X.dtype)
    return _initial_state(X, w, C, jnp.ones(C.shape[0], bool), trace_len)


def masked_lloyd(X, sample_weight, centers, valid, max_iter, tol, *, weighted_X=None):
    """Lloyd iterations on the active slots of a centre buffer (traceable, not jitted).

    The one Lloyd loop of the package (:func:`kmeans_step` in a ``lax.while_loop``):
    :func:`kmeans` runs it with every slot active, the ensembles' jitted runs
    (:func:`bayesclust.inference.consensus.ensembles.kmeans_ensemble`, ``backend="jax"``) with
    ``K <= capacity`` active slots, so that one compilation serves every K.  An
    iteration is the assignment to the nearest active centre and the mean update
    (:func:`~bayesclust.kernels.nearest_center_stats`,
    :func:`~bayesclust.kernels.weighted_means`); an empty or inactive slot keeps
    its centre.

    Parameters
    ----------
    X : array, shape (n, d)
    sample_weight : array, shape (n,), or None
        ``None``: unit weights.
    centers : array, shape (capacity, d)
        Initial centres; the inactive slots never win a point.
    valid : bool array, shape (capacity,)
        Active slots (at least one).
    max_iter : int or int array
    tol : float or array
        Stop when the total squared centre shift is at most ``tol`` (absolute).
        ``0`` stops only at a fixed point, where the shift is 0 or the assignment
        repeats.
    weighted_X : array, shape (n, d), optional
        ``sample_weight[:, None] * X``, computed once by the caller.

    Returns
    -------
    centers : array, shape (capacity, d)
    nearest : NearestCenter
        Assignment of every row to the returned centres (lowest index on ties).
    n_iter : int32 array
        Iterations run (assignment + mean update).
    converged : bool array
        The assignment repeated or the shift fell to ``tol`` before ``max_iter``.
    """
    # The callers want the partition: no initial objective (an assignment pass of its own)
    # and a one-entry trace (later entries are dropped by the scatter).
    nan = jnp.asarray(jnp.nan, X.dtype)
    init = KMeansState(centers.astype(X.dtype), jnp.full(X.shape[0], -1, jnp.int32), nan, nan[None],
                       jnp.asarray(0, jnp.int32), jnp.asarray(False))
    s = _loop(X, sample_weight, valid, tol, max_iter, init, weighted_X)
    return s.centers, nearest_center(X, s.centers, valid), s.n_iter, s.converged


def _loop(X, w, valid, tol, max_iter, state: KMeansState, Xw=None, real=None):
    def cond(s: KMeansState):
        return (s.n_iter < max_iter) & ~s.converged

    def body(s: KMeansState):
        return _step(s, X, w, valid, tol, Xw, real)[0]

    return lax.while_loop(cond, body, state)


@jax.jit
def _run(X, w, n, tol, todo, state):
    """At most ``todo`` more iterations from ``state`` (every centre active; the rows from
    ``n`` on are padding)."""
    real = jnp.arange(X.shape[0]) < n
    return _loop(X, w, jnp.ones(state.centers.shape[0], bool), tol, todo, state, X * w[:, None], real)


@functools.partial(jax.jit, static_argnums=(3,))
def _init_run(X, w, centers, trace_len):
    return _initial_state(X, w, centers, jnp.ones(centers.shape[0], bool), trace_len)


@jax.jit
def _final(X, w, centers):
    """The assignment to the final centres and its sum of squares."""
    final = nearest_center(X, centers)
    return final.index, sum_rows(w * final.sq_dist)


#: The row count the jitted runs pad ``n`` rows to (a module attribute, so that a test can
#: run them unpadded).
_pad_to = padded_rows

#: From this many rows the KD-tree assignment of :func:`lloyd_host` queries in tree order.
_KDTREE_ORDER_MIN_N = 4096
#: From this many rows it shares each query out to every core (scipy's ``workers=-1``).
_KDTREE_THREADS_MIN_N = 16384


def lloyd_host(X, centers, max_iter: int, *, assignment: str = "dense", empty: str = "keep") -> np.ndarray:
    """Lloyd's k-means on the host in float64, from given centres: the labels.

    The host twin of :func:`masked_lloyd`, for callers that run many small
    k-means whose shapes change from call to call, where the jitted loop would
    compile (seconds) more often than it runs: the ensembles' default backend
    (:func:`bayesclust.inference.consensus.ensembles.kmeans_ensemble`, ``backend="numpy"``,
    a new K for every partition) and the post-processing of spectral DP-means
    and of the penalised normalised cut's spectral start (an embedding whose
    width changes with every threshold).  It iterates until the assignment
    repeats or ``max_iter``; an empty cluster keeps its centre (as
    :func:`kmeans`).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    centers : ndarray, shape (k, d)
        Initial centres (copied).
    max_iter : int
    assignment : {"dense", "kdtree"}
        ``"dense"``: the GEMM scores ``|x|^2 - 2 x.c + |c|^2`` and their argmin
        (lowest index on ties).  ``"kdtree"``: the exact nearest centre by a
        :class:`scipy.spatial.cKDTree` query, ``O(n log k)`` per assignment in
        low dimension (ties as the tree finds them).  From 4,096 rows the rows
        are queried in the leaf order of a KD-tree built once on ``X`` (nearby
        rows one after the other walk the same branches of the centres' tree),
        from 16,384 rows on every core (``workers=-1``); neither changes any
        row's answer, so the labels are those of a plain query.
    empty : {"keep", "relocate"}
        A cluster left empty by an assignment: ``"keep"`` leaves its centre
        where it was (as :func:`kmeans`; the partition may end with fewer than
        ``k`` clusters); ``"relocate"`` moves it onto the row farthest from its
        own centre, scikit-learn's rule (``KMeans``), so that every one of the
        ``k`` clusters ends non-empty unless the data have fewer distinct rows.

    Returns
    -------
    ndarray of int64, shape (n,)
        The assignment to the final centres.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    >>> lloyd_host(X, X[[0, 1]], 100).tolist()
    [0, 0, 1, 1]
    >>> C = np.array([[0.1, 0.0], [5.0, 5.0], [9.0, 9.0]])  # the third centre wins no row
    >>> lloyd_host(X, C, 100).tolist(), lloyd_host(X, C, 100, empty="relocate").tolist()
    ([0, 0, 1, 1], [0, 0, 1, 2])
    """
    X = np.asarray(X, np.float64)
    C = np.array(centers, np.float64)
    n, d = X.shape
    k = C.shape[0]
    if assignment == "dense":
        x_sq = np.sum(X * X, axis=1)

        def assign(C):
            scores = x_sq[:, None] - 2.0 * X @ C.T + np.sum(C * C, axis=1)[None, :]
            return np.argmin(scores, axis=1).astype(np.int64)
    elif assignment == "kdtree":
        from scipy.spatial import cKDTree

        if n >= _KDTREE_ORDER_MIN_N:
            # Query the rows in the leaf order of a KD-tree on X: consecutive queries walk
            # the same branches of the centres' tree (cache-friendly, faster: BENCHMARKS.md).
            # Every row's answer is the same in any order.
            order = cKDTree(X).indices
            Xq = np.ascontiguousarray(X[order])
        else:
            order, Xq = None, X
        workers = -1 if n >= _KDTREE_THREADS_MIN_N else 1

        def assign(C):
            found = cKDTree(C).query(Xq, k=1, workers=workers)[1]
            if order is None:
                return found.astype(np.int64)
            out = np.empty(n, np.int64)
            out[order] = found
            return out
    else:
        raise ValueError(f"assignment must be 'dense' or 'kdtree', got {assignment!r}")
    if empty not in ("keep", "relocate"):
        raise ValueError(f"empty must be 'keep' or 'relocate', got {empty!r}")
    labels = np.full(n, -1, np.int64)
    for _ in range(max_iter):
        new = assign(C)
        if np.array_equal(new, labels):
            return labels
        labels = new
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k) for j in range(d)], axis=1)
        if empty == "relocate" and np.any(counts == 0):
            _relocate_empty(X, C, labels, counts, sums)
        filled = counts > 0
        C[filled] = sums[filled] / counts[filled, None]
    return assign(C)


def _relocate_empty(X, C, labels, counts, sums) -> None:
    """Move every empty cluster onto one of the rows farthest from their centres (in place).

    scikit-learn's rule (``KMeans``, Lloyd): the ``e`` empty clusters take the ``e`` rows
    with the largest squared distance to their assigned centre ``C[labels]``, farthest
    first to the lowest empty index; each such row leaves its cluster's sums and counts and
    becomes its new cluster's only member (its centre at the next mean update).
    """
    empties = np.flatnonzero(counts == 0)
    dist = np.sum((X - C[labels]) ** 2, axis=1)
    far = np.argsort(-dist, kind="stable")[: empties.size]
    for j, i in zip(empties, far):
        old = labels[i]
        sums[old] -= X[i]
        counts[old] -= 1.0
        sums[j] = X[i]
        counts[j] = 1.0


@functools.partial(jax.jit, static_argnames=("n_clusters", "method"))
def _init_centers(rng_key, X, w, n_clusters, method):
    n = X.shape[0]
    if method == "random":
        p = w / sum_rows(w)
        idx = jax.random.choice(rng_key, n, (n_clusters,), replace=False, p=p)
        return X[idx]
    # k-means++ (Arthur & Vassilvitskii 2007), one candidate per step.
    k0, rng_key = jax.random.split(rng_key)
    first = jax.random.choice(k0, n, p=w / sum_rows(w))
    centers = jnp.zeros((n_clusters, X.shape[1]), X.dtype).at[0].set(X[first])
    d2 = squared_norms(X - X[first])

    def step(j, carry):
        centers, d2 = carry
        p = w * d2
        total = sum_rows(p)
        # All remaining mass on chosen points (duplicates): fall back to uniform.
        p = jnp.where(total > 0, p / jnp.where(total > 0, total, 1.0), w / sum_rows(w))
        i = jax.random.choice(jax.random.fold_in(rng_key, j), n, p=p)
        centers = centers.at[j].set(X[i])
        return centers, jnp.minimum(d2, squared_norms(X - X[i]))

    centers, _ = lax.fori_loop(1, n_clusters, step, (centers, d2))
    return centers


def kmeans_init(rng_key, X, n_clusters: int, *, init="random", sample_weight=None) -> np.ndarray:
    """Initial centres of :func:`kmeans` (validated), shape (n_clusters, d).

    ``"random"``: ``n_clusters`` distinct data points drawn uniformly (with
    ``sample_weight``: proportionally to the weights, without replacement);
    ``"k-means++"``: D^2 seeding.
    """
    X = V.check_array(X, "X")
    n = X.shape[0]
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    w = V.check_sample_weight(sample_weight, n, dtype=X.dtype)
    return np.asarray(_initial(rng_key, X, w, n_clusters, init))


def _initial(rng_key, X, w, n_clusters, init):
    n, d = X.shape
    if isinstance(init, str):
        if init not in ("random", "k-means++"):
            raise ValueError(f"init must be 'random', 'k-means++' or an array of centres, got {init!r}")
        n_pos = int(np.count_nonzero(w > 0))
        if n_clusters > n_pos:
            raise ValueError(
                f"n_clusters={n_clusters} exceeds the number of samples with positive weight ({n_pos})"
            )
        key = V.as_rng_key(rng_key)
        # Drawn from the rows padded to a shape bucket with weight 0 (never drawn): a new n
        # compiles no new program, and the draws are those of the unpadded rows.
        n_pad = _pad_to(n)
        Xj = jnp.asarray(np.concatenate([X, np.zeros((n_pad - n, d), X.dtype)]))
        wj = jnp.asarray(np.concatenate([w, np.zeros(n_pad - n, w.dtype)]), Xj.dtype)
        return _init_centers(key, Xj, wj, n_clusters, init)
    C = V.check_array(init, "init")
    if C.shape != (n_clusters, d):
        raise ValueError(f"init must have shape ({n_clusters}, {d}), got {C.shape}")
    return jnp.asarray(C)


def kmeans(
    rng_key,
    X,
    n_clusters: int,
    *,
    init="random",
    n_init: int = 1,
    max_iter: int = 100,
    tol: float = 1e-4,
    sample_weight=None,
) -> KMeansResult:
    r"""k-means by Lloyd's algorithm, the best of ``n_init`` starts.

    Minimises :math:`\sum_i w_i \|x_i - \mu_{z_i}\|^2` over ``n_clusters``
    centres by alternating the nearest-centre assignment and the mean update
    (:func:`kmeans_step` from :func:`init_kmeans_state`).

    Parameters
    ----------
    rng_key : jax.random key or int
        Key for the initialisation (unused when ``init`` is an array); with
        ``n_init > 1``, start ``i`` uses ``fold_in(rng_key, i)``.
    X : array_like, shape (n, d)
    n_clusters : int
        ``K >= 1`` (at most the number of points for the data-point inits).
    init : {"random", "k-means++"} or array_like of shape (n_clusters, d)
        ``"random"`` (default; the papers do not say: docs/deviations.md#kj-table1-protocol): ``K`` distinct data points drawn
        uniformly; ``"k-means++"``: D^2 seeding; or the initial centres.
    n_init : int, default 1
        Starts; the run with the lowest final ``objective`` is returned (the first on
        ties) and every start's is in ``restart_objectives``.  Must be 1 when ``init``
        is an array (every start would be the same).
    max_iter : int, default 100
    tol : float, default 1e-4
        Relative tolerance: stop when the total squared centre shift
        :math:`\sum_k \|\mu_k^{new} - \mu_k\|^2` is at most ``tol`` times the
        mean per-feature variance of ``X`` (scikit-learn's rule).  The run
        also stops when the assignment does not change (exact convergence).
    sample_weight : array_like, shape (n,), optional

    Returns
    -------
    KMeansResult
        ``centers, labels, objective, objective_trace, n_iter, converged,
        restart_objectives``.  ``labels`` and ``objective`` (the minimised sum of
        squares) refer to the returned centres (a final assignment step).

    Notes
    -----
    **Empty clusters keep their previous centre** (ours).  scikit-learn instead
    relocates an empty cluster to a far point, so the two differ only when a
    cluster empties.  The data are centred internally (the algorithm is
    translation invariant; it protects the GEMM distances against
    cancellation) and scaled by a power of two (exact) so that the largest
    centred value lies in [0.5, 1): float32 squared distances neither
    overflow nor flush to zero at any scale of ``X``, and scaling ``X`` by a
    power of two changes nothing but the scale of the outputs.  Ties go to the lowest centre index.  One jit-compiled
    ``lax.while_loop`` per piece of 127 iterations (the trace is recorded in pieces of a
    fixed buffer); recompiles only per shape, never per ``max_iter`` or ``n_init``: the rows
    are padded to :func:`bayesclust.kernels.padded_rows` with zero-weight rows (left out of
    every sum and of the stopping test; the starts drawn from the padded rows), so ``n + 7``
    rows reuse the programs of ``n`` and the result is the unpadded one.

    References
    ----------
    S. P. Lloyd, "Least squares quantization in PCM", IEEE Trans. Inf. Theory 28 (1982).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    >>> res = kmeans(0, X, 2, init=X[[0, 2]])
    >>> res.labels.tolist(), res.centers.round(2).tolist()
    ([0, 0, 1, 1], [[0.1, 0.0], [5.1, 5.0]])
    >>> [round(float(v), 3) for v in res.objective_trace]  # at the initial centres, then per iteration
    [0.08, 0.04, 0.04]

    Five k-means++ starts, the lowest sum of squares kept:

    >>> best = kmeans(0, X, 2, init="k-means++", n_init=5)
    >>> best.restart_objectives.shape, bool(best.objective == best.restart_objectives.min())
    ((5,), True)
    """
    X = V.check_array(X, "X")
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    tol = V.check_nonnegative(tol, "tol")
    n = X.shape[0]
    w = V.check_sample_weight(sample_weight, n, dtype=X.dtype)
    if n_init > 1:
        if not isinstance(init, str):
            raise ValueError(f"n_init must be 1 when init is an array of centres, got {n_init}")
        key = V.as_rng_key(rng_key)
        starts = iter(range(n_init))

        def start():
            r = kmeans(jax.random.fold_in(key, next(starts)), X, n_clusters, init=init,
                       max_iter=max_iter, tol=tol, sample_weight=w)
            return r.objective, r

        _, best, finals = best_of_restarts(n_init, start, maximize=False)
        return best._replace(restart_objectives=finals)
    mean = V.centre(X, w).astype(X.dtype)
    # The unit frame: centred and scaled by a power of two (exact), so that the squared
    # distances neither overflow nor flush to zero at any scale of X.
    Xc, e = V.to_unit_frame(X, mean, "X")
    if not isinstance(init, str):
        C0 = np.asarray(_initial(None, X, w, n_clusters, init))  # validated
        with np.errstate(over="ignore"):
            init = np.ldexp(C0 - mean, -e).astype(Xc.dtype)
        if not np.all(np.isfinite(init)):
            raise ValueError("init - mean of X overflows; rescale init and X")
    centers0 = _initial(rng_key, Xc, w, n_clusters, init)
    # scikit-learn's relative rule in the unit frame: the same number, scaled by 4**-e
    # (exact); from the unit frame itself when X's own variance over- or underflows.
    with np.errstate(over="ignore", under="ignore"):
        var = float(np.mean(np.var(X, axis=0)))
    if np.isfinite(var) and var >= float(np.finfo(X.dtype).tiny / np.finfo(X.dtype).eps):
        tol_abs = math.ldexp(tol * var, -2 * e)
    else:
        tol_abs = tol * float(np.mean(np.var(Xc.astype(np.float64), axis=0)))
    # Rows padded to a shape bucket with weight 0 (nothing in any statistic, and their labels
    # left out of the stopping test): n and n + 7 rows run the same compiled programs, with
    # the unpadded result (the sums over rows are kernels.sum_rows).
    n_pad = _pad_to(n)
    Xj = jnp.asarray(np.concatenate([Xc, np.zeros((n_pad - n, Xc.shape[1]), Xc.dtype)]))
    wj = jnp.asarray(np.concatenate([w, np.zeros(n_pad - n, w.dtype)]), Xj.dtype)
    tol_j = np.asarray(tol_abs, Xj.dtype)  # host scalars: traced, never a new compile
    n_j = np.int32(n)
    state = _init_run(Xj, wj, centers0.astype(Xj.dtype), _TRACE_LEN)
    state, traces, done = run_in_pieces(state, lambda todo, s: _run(Xj, wj, n_j, tol_j, todo, s), max_iter,
                                        piece=_TRACE_LEN)
    labels, objective = _final(Xj, wj, state.centers)
    labels = np.asarray(labels)[:n]
    objective = math.ldexp(float(objective), 2 * e)
    return KMeansResult(
        centers=(np.ldexp(np.asarray(state.centers), e) + mean).astype(X.dtype),
        labels=np.asarray(labels),
        objective=objective,
        objective_trace=_from_unit(traces["objective_trace"], e),
        n_iter=done,
        converged=bool(state.converged),
        restart_objectives=np.array([objective]),
    )
