r"""KL-means: the small-variance limit of the DP mixture of multinomials (our extension).

Every object ``i`` has a row of counts :math:`r_i` (total :math:`n_i`, empirical
distribution :math:`\hat p_i = r_i / n_i`) -- by default a row of an ensemble's
co-association -- and one cluster :math:`z_i` whose distribution :math:`\psi_{z_i}` the
row is a multinomial draw from (Hofmann & Puzicha 1998, the asymmetric clustering model,
the hard one-sided version of Hofmann's 1999 aspect model that PEnCA fits).  With a DP
prior on ``z``, :math:`\psi_j \sim \mathrm{Dir}(\beta)`, the likelihood tempered by
:math:`1/\tau` and :math:`\alpha = e^{-\lambda/\tau}`, the exponential-family
small-variance limit :math:`\tau \to 0` (Jiang, Kulis & Jordan 2012, §3) minimises

.. math::

    J(z) = \sum_i n_i \,\mathrm{KL}(\hat p_i \,\|\, \psi_{z_i}) + \lambda k,
    \qquad \psi_j = \frac{\sum_{i: z_i = j} r_i}{\sum_{i: z_i = j} n_i},

since :math:`-\log \mathrm{Mult}(r_i \mid \psi) = n_i \mathrm{KL}(\hat p_i \| \psi) +
n_i H(\hat p_i) + \mathrm{const}(i)` and the new-cluster marginal tends to the
likelihood's maximum, at :math:`\psi = \hat p_i`.  Its moves are DP-means' (Kulis &
Jordan 2012, Algorithm 1) with the KL cost in place of the squared distance: each row
in order joins the cluster of lowest cost :math:`n_i \mathrm{KL}(\hat p_i \| \psi_j)`,
or opens one at :math:`\psi = \hat p_i` when every cost exceeds :math:`\lambda`; then
every :math:`\psi_j` becomes its rows' pooled distribution.  At the crisp limit this is
distributional clustering, the hard information bottleneck (Slonim & Weiss 2002) with a
DP penalty in place of a fixed ``k``.  See docs/deviations.md#kl-means.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import compact_labels, sum_rows
from ...kernels.multinomial import (
    CountRows,
    kl_costs,
    kl_costs_row,
    kl_costs_segments,
    log_distributions,
    merge_costs,
    pooled_counts,
)
from .._counts import check_counts, device_rows, working_dtype
from .._driver import pow2_at_least, run_in_pieces

__all__ = [
    "kl_means",
    "KLMeansResult",
    "KLMeansState",
    "KLMeansInfo",
    "init_kl_means_state",
    "kl_means_step",
    "kl_means_rows",
    "kl_means_lambda",
]

#: Relative tolerance of the objective-based stopping rule (as DP-means').
OBJECTIVE_TOL = 1e-12
#: Entries of the driver's objective-trace buffer (the trace is recorded in pieces).
_TRACE_LEN = 128
#: Relative inflation (in units of the dtype's eps) of :func:`kl_means_lambda`.
_TIE_ULPS = 16


class KLMeansResult(NamedTuple):
    """Result of :func:`kl_means`.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        Cluster of every row, ``0..n_clusters-1`` in order of creation (rows of total 0:
        cluster 0).
    distributions : ndarray of float, shape (n_clusters, m)
        :math:`\\psi_j`, each cluster's pooled distribution (rows sum to 1).
    n_clusters : int
    objective : float
        :math:`J = \\sum_i n_i \\mathrm{KL}(\\hat p_i \\| \\psi_{z_i}) + \\lambda k`.
    objective_trace : ndarray, shape (n_iter + 1,)
        ``J`` after initialisation and after every iteration; never increases.
    n_iter : int
    converged : bool
        The partition repeated or ``J`` stopped decreasing before ``max_iter``.
    lam : float
    """

    labels: np.ndarray
    distributions: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    lam: float


class KLMeansState(NamedTuple):
    """State of a KL-means run between two iterations.

    Made by :func:`init_kl_means_state`, advanced by :func:`kl_means_step`.  Clusters
    live in a fixed-capacity buffer: slots ``0..n_clusters-1`` are active.

    Attributes
    ----------
    log_psi : array, shape (capacity, m)
        :math:`\\log \\psi_j` of the active slots (``-inf`` where :math:`\\psi_j` is 0);
        the other slots are ``-inf``.
    n_clusters : int32 scalar
    labels : int32 array, shape (n,)
        Cluster of every row (padding rows of total 0: cluster 0).
    objective : scalar
        ``J`` of this state.
    objective_trace : array, shape (T,)
        ``J`` after initialisation and iterations ``1..n_iter`` (NaN after them).
    n_iter : int32 scalar
    converged : bool scalar
        The last iteration left the labels unchanged or did not lower ``J``
        (relative tolerance ``OBJECTIVE_TOL``).
    overflow : bool scalar
        The last step needed more than ``capacity`` slots and was discarded (every
        other field is that of its input state, ``need`` apart).
    need : int32 scalar
        Clusters the last pass held before empty ones were deleted.
    """

    log_psi: jax.Array
    n_clusters: jax.Array
    labels: jax.Array
    objective: jax.Array
    objective_trace: jax.Array
    n_iter: jax.Array
    converged: jax.Array
    overflow: jax.Array
    need: jax.Array


class KLMeansInfo(NamedTuple):
    """Diagnostics of one :func:`kl_means_step`.

    Attributes
    ----------
    objective : scalar
        ``J`` of the returned state.
    changed : bool scalar
        The step changed the labels (False when it was discarded).
    n_clusters : int32 scalar
        Clusters of the returned state.
    """

    objective: jax.Array
    changed: jax.Array
    n_clusters: jax.Array


def _bulk_costs(rows: CountRows, log_psi):
    if rows.dense is not None:
        return kl_costs(rows.dense, rows.negentropy, log_psi)
    return kl_costs_segments(rows.seg_rows, rows.seg_cols, rows.seg_vals, rows.negentropy, log_psi)


def _objective(rows: CountRows, counts, totals, k, lam):
    """``J`` from the pooled counts: ``sum_i negent_i + sum_j [N_j log N_j - sum_y S_jy log S_jy] + lam k``."""
    def xlogx(v):
        return jnp.where(v > 0, v * jnp.log(jnp.where(v > 0, v, 1.0)), 0.0)

    fit = jnp.sum(xlogx(totals)) - jnp.sum(xlogx(counts))
    return sum_rows(rows.negentropy) + fit + lam * k


def _row_log_distribution(rows: CountRows, i):
    """:math:`\\log \\hat p_i` as a dense (m,) vector (``-inf`` off the row's support)."""
    m = rows.columns.shape[0]
    cols, vals = rows.cols[i], rows.vals[i]
    total = jnp.where(rows.totals[i] > 0, rows.totals[i], 1.0)
    logp = jnp.log(jnp.where(vals > 0, vals, 1.0)) - jnp.log(total)
    return jnp.full(m, -jnp.inf, vals.dtype).at[jnp.where(vals > 0, cols, m)].set(logp, mode="drop")


def _pass(rows: CountRows, log_psi, k, lam):
    """One assignment pass of the KL-means moves (distributions frozen), in bulk.

    Equivalent to the loop over the rows in order: row ``i`` opens a cluster at
    :math:`\\hat p_i` iff its cost to every old cluster and to every cluster opened by an
    earlier row exceeds ``lam``, otherwise joins the cheapest (lowest index on ties, old
    clusters first).  Only *candidates* (cost above ``lam`` to every old cluster) can
    open one; they are scanned in order, then every row sees the new clusters opened at
    or before it.

    Returns
    -------
    labels : int32 (n,)
        Old clusters keep their slot, new ones are ``k, k + 1, ...``.
    k_total : int32 scalar
    overflow : bool scalar
    """
    K = log_psi.shape[0]
    n = rows.totals.shape[0]
    slot = jnp.arange(K)
    old = jnp.where((slot < k)[None, :], _bulk_costs(rows, log_psi), jnp.inf)
    old_index = jnp.argmin(old, axis=1).astype(jnp.int32)
    old_min = jnp.min(old, axis=1)
    is_candidate = old_min > lam
    room = K - k

    def open_new(_):
        n_cand = jnp.sum(is_candidate, dtype=jnp.int32)
        cand_rows = jnp.nonzero(is_candidate, size=n, fill_value=0)[0].astype(jnp.int32)

        def more(c):
            t, _, _, n_new = c
            return (t < n_cand) & (n_new <= room)

        def visit(c):
            t, new_lp, seed_rows, n_new = c
            i = cand_rows[t]
            cost = kl_costs_row(rows.cols[i], rows.vals[i], rows.negentropy[i], new_lp)
            opens = jnp.min(jnp.where(slot < n_new, cost, jnp.inf)) > lam
            at = jnp.where(opens, n_new, K)
            new_lp = new_lp.at[at].set(_row_log_distribution(rows, i), mode="drop")
            seed_rows = seed_rows.at[at].set(i, mode="drop")
            return t + 1, new_lp, seed_rows, n_new + opens.astype(jnp.int32)

        init = (jnp.int32(0), jnp.full_like(log_psi, -jnp.inf), jnp.full(K, n, jnp.int32),
                jnp.int32(0))
        _, new_lp, seed_rows, n_new = lax.while_loop(more, visit, init)
        overflow = n_new > room
        visible = (slot[None, :] < n_new) & (seed_rows[None, :] <= jnp.arange(n)[:, None])
        new = jnp.where(visible, _bulk_costs(rows, new_lp), jnp.inf)
        use_new = jnp.min(new, axis=1) < old_min
        labels = jnp.where(use_new, k + jnp.argmin(new, axis=1).astype(jnp.int32), old_index)
        return jnp.where(overflow, old_index, labels), k + n_new, overflow

    def keep_old(_):
        return old_index, jnp.asarray(k, jnp.int32), jnp.asarray(False)

    return lax.cond(jnp.any(is_candidate), open_new, keep_old, None)


def _pass_collapsed(rows: CountRows, labels, K, lam):
    r"""One pass of the collapsed limit's moves: each row in order to the cheapest exact change of ``J``.

    Row ``i`` leaves its cluster (the pooled counts updated), then joins the cluster ``b``
    of lowest :func:`~bayesclust.kernels.multinomial.merge_costs` :math:`F(n_b + r_i) -
    F(n_b)` or opens one for :math:`F(r_i) + \lambda`, whichever is lower (its own cluster
    on ties; then the lowest slot): Hartigan's single-row moves, the limit of the collapsed
    (Polya) sampler, the sequential information bottleneck (Slonim, Friedman & Tishby 2002)
    with a DP penalty.  Rows of total 0 stay where they are.

    Returns
    -------
    labels : int32 (n,)
        Slots (not compacted).
    need : int32 scalar
        Slots the pass used.
    overflow : bool scalar
        A row would have opened a cluster with every slot taken.
    """
    n = rows.totals.shape[0]
    counts, totals = pooled_counts(rows, labels, K)
    sizes = jax.ops.segment_sum(jnp.where(rows.totals > 0, 1, 0), labels, K)

    def visit(i, c):
        labels, counts, totals, sizes, overflow = c
        cols, vals, tot = rows.cols[i], rows.vals[i], rows.totals[i]
        real = tot > 0
        old = labels[i]
        counts = counts.at[old, cols].add(-vals)
        totals = totals.at[old].add(-tot)
        sizes = sizes.at[old].add(-real.astype(sizes.dtype))
        active = sizes > 0
        join = merge_costs(cols, vals, tot, counts, totals)
        join = jnp.where(active, join, jnp.inf)
        lowest = jnp.argmin(join)
        # The row's own cluster wins ties: a move must lower J.
        best = jnp.where(join[old] <= join[lowest], old, lowest)
        open_cost = -rows.negentropy[i] + lam
        opens = open_cost < join[best]
        free = jnp.argmin(active)
        full = jnp.all(active)
        overflow = overflow | (opens & full & real)
        target = jnp.where(real, jnp.where(opens, free, best), old).astype(jnp.int32)
        counts = counts.at[target, cols].add(vals)
        totals = totals.at[target].add(tot)
        sizes = sizes.at[target].add(real.astype(sizes.dtype))
        return labels.at[i].set(target), counts, totals, sizes, overflow

    labels, _, _, sizes, overflow = lax.fori_loop(
        0, n, visit, (labels, counts, totals, sizes, jnp.asarray(False)))
    need = jnp.sum(sizes > 0, dtype=jnp.int32) + overflow.astype(jnp.int32)
    return labels, need, overflow


def _update(rows: CountRows, labels, K, lam):
    """Pooled distributions, empty clusters deleted, ``J``: ``(log_psi, labels, k, J)``."""
    counts, totals = pooled_counts(rows, labels, K)
    keep = totals > 0
    labels, new_index, k = compact_labels(labels, keep)
    labels = jnp.where(rows.totals > 0, labels, 0).astype(jnp.int32)
    counts = jnp.zeros_like(counts).at[new_index].set(counts, mode="drop")
    totals = jnp.zeros_like(totals).at[new_index].set(totals, mode="drop")
    return log_distributions(counts, totals), labels, k, _objective(rows, counts, totals, k, lam)


def _step(s: KLMeansState, rows: CountRows, lam, collapsed=False):
    K = s.log_psi.shape[0]
    if collapsed:
        labels, k_total, overflow = _pass_collapsed(rows, s.labels, K, lam)
    else:
        labels, k_total, overflow = _pass(rows, s.log_psi, s.n_clusters, lam)
    log_psi, labels, k, obj = _update(rows, jnp.minimum(labels, K - 1), K, lam)
    unchanged = jnp.all((labels == s.labels) | (rows.totals <= 0))
    # Relative, with no absolute floor: the same test at every scale of the counts.
    stalled = obj >= s.objective - OBJECTIVE_TOL * jnp.abs(s.objective)
    it = s.n_iter + 1
    new = KLMeansState(log_psi, k, labels, obj, s.objective_trace.at[it].set(obj), it,
                       unchanged | stalled, jnp.asarray(False), k_total)
    out = lax.cond(overflow, lambda: s._replace(overflow=jnp.asarray(True), need=k_total),
                   lambda: new)
    return out, KLMeansInfo(out.objective, ~(unchanged | out.overflow), out.n_clusters)


def kl_means_step(state: KLMeansState, rows: CountRows, lam, *,
                  collapsed: bool = False) -> tuple[KLMeansState, KLMeansInfo]:
    """One KL-means iteration: an assignment pass, the pooled distributions, the stopping test.

    :func:`kl_means` is this step in a ``lax.while_loop`` from :func:`init_kl_means_state`,
    stopped by ``converged``, ``overflow`` or ``max_iter``; stepping by hand on the same
    rows reproduces it bit for bit.  Works eagerly and under ``jax.jit``; concrete arguments
    are checked (traced ones are the compiled caller's to check).

    Parameters
    ----------
    state : KLMeansState
    rows : CountRows
        From :func:`kl_means_rows`.
    lam : float scalar
        Penalty per cluster, ``>= 0``.
    collapsed : bool, default False
        The collapsed limit's moves (see :func:`kl_means`) instead of Algorithm 1's.

    Returns
    -------
    state : KLMeansState
        The next state; when the pass needed more than ``capacity`` slots, the input state
        with ``overflow`` set and ``need`` the slots asked for (redo the step with
        ``log_psi`` padded by ``-inf`` rows to at least ``need`` slots, as :func:`kl_means`
        does).
    info : KLMeansInfo

    Raises
    ------
    ValueError, TypeError
        Naming ``rows`` (not a ``CountRows``, or not one row per state label and the
        state's number of columns), ``lam`` (negative or not a number) or ``collapsed``
        (not a bool).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[5.0, 1, 0, 0], [4, 2, 0, 0], [0, 0, 3, 3], [0, 0, 2, 4]])
    >>> rows = kl_means_rows(R)
    >>> state = init_kl_means_state(rows, 2.0)
    >>> while not state.converged:
    ...     state, info = kl_means_step(state, rows, 2.0)
    >>> int(state.n_clusters), state.labels[:4].tolist()
    (2, [0, 0, 1, 1])
    """
    _check_rows(rows, state)
    lam = V.check_step_scalar(lam, "lam")
    if not isinstance(collapsed, (bool, np.bool_)):
        raise TypeError(f"collapsed must be a bool, got {collapsed!r}")
    lam = jnp.asarray(lam, rows.vals.dtype)
    return _step(state, rows, lam, bool(collapsed))


def _check_rows(rows, state: KLMeansState) -> None:
    """``rows`` a :class:`CountRows` (from :func:`kl_means_rows`) of the state's points and
    columns, or a ``TypeError`` / ``ValueError`` naming it."""
    if not isinstance(rows, CountRows):
        raise TypeError(f"rows must be the CountRows of kl_means_rows, got {type(rows).__name__}")
    V.check_rows_match(rows.totals, "rows", state.labels)
    m = np.shape(rows.columns)[0]
    if m != np.shape(state.log_psi)[1]:
        raise ValueError(f"rows have {m} columns but the state's distributions "
                         f"{np.shape(state.log_psi)[1]}")


def _initial_state(rows: CountRows, lam, capacity: int, trace_len: int) -> KLMeansState:
    n = rows.totals.shape[0]
    labels = jnp.zeros(n, jnp.int32)
    log_psi, labels, k, obj = _update(rows, labels, capacity, lam)
    return KLMeansState(
        log_psi, k, labels, obj, jnp.full(trace_len, jnp.nan, obj.dtype).at[0].set(obj),
        jnp.int32(0), jnp.asarray(False), jnp.asarray(False), jnp.int32(1))


_initial = jax.jit(_initial_state, static_argnums=(2, 3))


def init_kl_means_state(rows: CountRows, lam, *, capacity: int = 32, max_iter: int = 100) -> KLMeansState:
    """The state KL-means starts from: one cluster, the pooled distribution of all rows.

    Parameters
    ----------
    rows : CountRows
        From :func:`kl_means_rows`.
    lam : float scalar
    capacity : int, default 32
        Slots of the cluster buffer (a pass may hold up to twice its final clusters).
    max_iter : int, default 100
        Iterations the ``objective_trace`` buffer has room for.

    Returns
    -------
    KLMeansState
    """
    capacity = V.check_int(capacity, "capacity", minimum=1)
    trace_len = pow2_at_least(V.check_int(max_iter, "max_iter", minimum=1) + 1)
    return _initial(rows, jnp.asarray(lam, rows.vals.dtype), capacity, trace_len)


def kl_means_rows(counts: Any, *, dense: bool | None = None) -> CountRows:
    """Validated, padded count rows in the form :func:`kl_means_step` reads.

    Parameters
    ----------
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
        See :func:`kl_means`.
    dense : bool, optional
        Compute the costs by dense matrix products (default for dense input) or over the
        stored entries (default for sparse input and co-associations).

    Returns
    -------
    CountRows
    """
    host = check_counts(counts, "counts")
    return device_rows(host, working_dtype(host), dense=dense)


def _loop(rows, lam, max_iter, state: KLMeansState, collapsed=False):
    def cond(s):
        return (s.n_iter < max_iter) & ~s.converged & ~s.overflow

    return lax.while_loop(cond, lambda s: _step(s, rows, lam, collapsed)[0], state)


_run = jax.jit(_loop, static_argnames=("collapsed",))


def _grow(state: KLMeansState, capacity: int) -> KLMeansState:
    pad = capacity - state.log_psi.shape[0]
    return state._replace(
        log_psi=jnp.concatenate([state.log_psi, jnp.full((pad, state.log_psi.shape[1]), -jnp.inf,
                                                          state.log_psi.dtype)]),
        overflow=jnp.asarray(False))


def kl_means(counts: Any, lam: float, *, max_iter: int = 100, collapsed: bool = False,
             dense: bool | None = None) -> KLMeansResult:
    r"""KL-means: DP-means' moves on count rows with the KL cost (our extension).

    Minimises :math:`J = \sum_i n_i \mathrm{KL}(\hat p_i \| \psi_{z_i}) + \lambda k`
    (module docstring): from one cluster (the pooled distribution of all rows), each
    iteration visits the rows in order -- a row whose cost
    :math:`n_i \mathrm{KL}(\hat p_i \| \psi_j)` exceeds ``lam`` for every cluster opens
    one at :math:`\hat p_i`, otherwise it joins the cheapest (lowest index on ties) --
    then deletes empty clusters and sets every :math:`\psi_j` to its rows' pooled
    distribution.  ``J`` never increases; the run stops when the partition repeats or
    ``J`` stops decreasing (relative ``1e-12``).  A cost to a cluster whose
    :math:`\psi` is 0 where the row has mass is :math:`+\infty`.

    Parameters
    ----------
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
        Non-negative counts, one row per object.  A
        :class:`~bayesclust.inference.consensus.coassociation.CoAssociation` gives the rows
        :math:`C(i, \cdot)` of the ensemble's co-association counts with the diagonal
        :math:`n_{ii}` = partitions containing ``i``
        (docs/deviations.md#kl-means-coassociation-rows); sparse input costs ``O(nnz k)``
        per pass.
    lam : float
        Penalty per cluster (> 0), in units of counts x nats.
    max_iter : int, default 100
    collapsed : bool, default False
        The limit of the collapsed (Polya) sampler instead of the explicit one: each row
        in order leaves its cluster and joins the one whose pooled cost
        :math:`F(n_b) = N_b H(\psi_b)` rises least (:func:`~bayesclust.kernels.merge_costs`),
        or opens one for :math:`n_i H(\hat p_i) + \lambda`, the pooled distributions
        updated as it moves -- Hartigan's moves on ``J``, the sequential information
        bottleneck (Slonim, Friedman & Tishby 2002) with a DP penalty.  Every move lowers
        ``J`` exactly and no cost is infinite, so it does not stall on the explicit moves'
        narrow new clusters (a cluster opened at one row's :math:`\hat p_i` takes no row
        with mass off that row's support).
    dense : bool, optional
        See :func:`kl_means_rows`.

    Returns
    -------
    KLMeansResult

    References
    ----------
    B. Kulis and M. I. Jordan (2012), Revisiting k-means, Algorithm 1.  K. Jiang, B. Kulis
    and M. I. Jordan (2012), Small-variance asymptotics for exponential family Dirichlet
    process mixture models, §3.  T. Hofmann and J. Puzicha (1998), Statistical models for
    co-occurrence data, §2.2.  N. Slonim and Y. Weiss (2002), Maximum likelihood and the
    information bottleneck.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[5.0, 1, 0, 0], [4, 2, 0, 0], [0, 0, 3, 3], [0, 0, 2, 4]])
    >>> res = kl_means(R, lam=2.0)
    >>> res.n_clusters, res.labels.tolist()
    (2, [0, 0, 1, 1])
    >>> kl_means(R, lam=1e6).n_clusters
    1
    """
    host = check_counts(counts, "counts")
    lam = V.check_positive(lam, "lam")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    dtype = working_dtype(host)
    rows = device_rows(host, dtype, dense=dense)
    n, m = host.shape
    K_bound = max(32, pow2_at_least(2 * n))
    K_cap = min(32, K_bound)
    lam_j = np.asarray(lam, dtype)
    if not np.isfinite(lam_j):
        raise ValueError(f"lam must be representable in {np.dtype(dtype).name}, got {lam!r}")
    state = _initial(rows, lam_j, K_cap, _TRACE_LEN)

    def grow(new):
        nonlocal K_cap
        if not bool(new.overflow):
            return None
        K_cap = min(max(2 * K_cap, pow2_at_least(int(new.need))), K_bound)
        return _grow(new, K_cap)

    state, traces, done = run_in_pieces(
        state, lambda todo, s: _run(rows, lam_j, todo, s, collapsed=bool(collapsed)), max_iter,
        piece=_TRACE_LEN, grow=grow)
    k = int(state.n_clusters)
    psi = np.exp(np.asarray(state.log_psi, np.float64)[:k, :m])
    return KLMeansResult(
        labels=np.asarray(state.labels)[:n].astype(np.int64),
        distributions=psi / psi.sum(axis=1, keepdims=True),
        n_clusters=k,
        objective=float(state.objective),
        objective_trace=traces["objective_trace"],
        n_iter=done,
        converged=bool(state.converged),
        lam=lam,
    )


def kl_means_lambda(counts: Any, n_clusters: int) -> float:
    r"""Farthest-first ``lam`` for KL-means given a hint of the number of clusters.

    As :func:`~bayesclust.inference.hard.dp_means.farthest_first_lambda` for DP-means
    (Kulis & Jordan 2012, §6.1) with the KL cost in place of the squared distance:
    ``T = {pooled distribution of all rows}``; ``k`` times, take the row of largest cost
    :math:`\min_{t \in T} n_i \mathrm{KL}(\hat p_i \| t)` (lowest index on ties), record
    the cost ``lam_r`` and add :math:`\hat p_i` to ``T``.  Returns ``lam_k`` inflated by
    ``16 eps`` of the working dtype, so that the ``k``-th row's tie resolves in favour of
    an existing cluster.  Host NumPy in float64.

    Parameters
    ----------
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
    n_clusters : int
        ``1 <= k <= n``.

    Returns
    -------
    float
        0.0 when the rows hold fewer than ``k`` distinct distributions.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[4.0, 0], [4.0, 0], [0, 4.0]])
    >>> round(kl_means_lambda(R, 1), 3)   # 4 KL((0, 1) || (2/3, 1/3)) = 4 log 3, inflated by 16 eps
    4.394
    """
    host = check_counts(counts, "counts")
    k = V.check_int(n_clusters, "n_clusters", minimum=1)
    n = host.shape[0]
    if k > n:
        raise ValueError(f"n_clusters must be <= the number of rows ({n}), got {k}")
    csr = host.csr
    totals = np.asarray(csr.sum(axis=1)).ravel()
    safe = np.where(totals > 0, totals, 1.0)
    rowsum = np.repeat(np.arange(n), np.diff(csr.indptr))
    negent = np.bincount(rowsum, csr.data * np.log(csr.data / safe[rowsum]), minlength=n)

    def cost(psi):
        with np.errstate(divide="ignore"):
            logp = np.log(psi)
        zero = ~(psi > 0)
        bad = (csr.data > 0) & zero[csr.indices]
        cross = np.bincount(rowsum, csr.data * np.where(bad, 0.0, logp[csr.indices]), minlength=n)
        out = np.maximum(negent - cross, 0.0)
        out[np.bincount(rowsum, bad, minlength=n) > 0] = np.inf
        return out

    pooled = np.asarray(csr.sum(axis=0)).ravel()
    dmin = cost(pooled / pooled.sum())
    lam = 0.0
    for _ in range(k):
        far = int(np.argmax(dmin))
        lam = float(dmin[far])
        row = csr.getrow(far).toarray().ravel()
        if totals[far] > 0:
            dmin = np.minimum(dmin, cost(row / totals[far]))
    eps = float(np.finfo(working_dtype(host)).eps)
    return lam * (1.0 + _TIE_ULPS * eps) if math.isfinite(lam) else lam
