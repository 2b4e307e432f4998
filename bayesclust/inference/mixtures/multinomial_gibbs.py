r"""Gibbs sampling of the tempered DP mixture of multinomials (our extension), many chains at once.

The model of :mod:`bayesclust.models.dp_multinomial`: count rows :math:`r_i`, a CRP(alpha)
partition, :math:`\psi_j \sim \mathrm{Dir}(\beta)` and the multinomial likelihood raised to
:math:`1/\tau`, :math:`\alpha = e^{-\lambda/\tau}`.  A tempered multinomial is a multinomial
kernel in the counts :math:`r_i/\tau`, so the conjugate updates hold with the counts
divided by :math:`\tau`.

* ``collapsed=False`` (default) -- Neal's (2000) Algorithm 2 as Kulis & Jordan (2012, §3.1)
  write it for the Gaussian.  A sweep first draws every :math:`\psi_j \sim
  \mathrm{Dir}(\beta + n_j/\tau)` (pooled counts :math:`n_j`), then moves the rows: a row
  joins an existing cluster with weight :math:`n_{-i,j} \exp(-\tau^{-1} n_i
  \mathrm{KL}(\hat p_i \| \psi_j))` (the KL cost of :mod:`bayesclust.kernels.multinomial`;
  the row's entropy term is common to every choice) or opens one with weight
  :math:`\alpha\, e^{-\tau^{-1} n_i H(\hat p_i)} B(\beta + r_i/\tau)/B(\beta)` and draws
  its :math:`\psi \sim \mathrm{Dir}(\beta + r_i/\tau)`.
  Every Dirichlet of a sweep is drawn as normalised log-gammas in one draw (one rejection
  loop in the compiled program).  As :math:`\tau \to 0` the draws of :math:`\psi` tend to
  the pooled maximum-likelihood distributions and the moves to KL-means'
  (:func:`bayesclust.inference.hard.kl_means.kl_means`).
* ``collapsed=True`` -- :math:`\psi` integrated out (Neal's Algorithm 3): a row joins
  cluster ``b`` with weight :math:`n_{-i,b}` times the Polya score
  (:func:`bayesclust.kernels.multinomial.polya_move_score` of :math:`r_i/\tau` into the
  pooled counts :math:`n_b/\tau`).  Its lgamma differences lose precision in float32 at
  small :math:`\tau`: run it under ``jax_enable_x64`` there.

The sweep has the package's sampler shape: :class:`MultinomialGibbsState`,
:func:`init_multinomial_state`, :func:`multinomial_sweep` ``(key, rows, state, ...) ->
(state, info)`` for one chain, :func:`multinomial_sweep_chains` for a batch (``vmap``);
:func:`gibbs_dp_multinomial` runs many chains in segments, growing the cluster buffer when
a chain needs more slots (the segment redone with the same keys).

References
----------
R. M. Neal (2000), JCGS 9(2), 249-265, Algorithms 2 and 3.  B. Kulis and M. I. Jordan
(2012), §3.1.  K. Jiang, B. Kulis and M. I. Jordan (2012), NIPS, §3.  T. Hofmann and
J. Puzicha (1998), MIT AI Memo 1625, §2.2.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from scipy.special import gammaln as np_gammaln

from ... import _validation as V
from ...kernels.multinomial import (
    CountRows,
    kl_costs_row,
    log_distributions,
    polya_move_score,
    pooled_counts,
)
from .._counts import check_counts, device_rows, working_dtype
from .._driver import pow2_at_least
from ._common import _draw_slot_or_new, start_labels
from .convergence import warn_if_not_converged
from .gibbs import GibbsInfo, run_in_segments

__all__ = [
    "gibbs_dp_multinomial",
    "MultinomialGibbsState",
    "init_multinomial_state",
    "multinomial_sweep",
    "multinomial_sweep_chains",
    "new_cluster_log_weights",
]


class MultinomialGibbsState(NamedTuple):
    """State of one chain (:func:`multinomial_sweep_chains`: a leading chain axis on every field).

    Attributes
    ----------
    labels : int32 (n,)
        Slot of each row's cluster.
    sizes : float (K,)
        Rows per slot (0: inactive).
    counts : float (K, m)
        Pooled counts :math:`n_j` of each slot.
    totals : float (K,)
        :math:`N_j`, the pooled totals.
    log_psi : float (K, m)
        :math:`\\log \\psi_j` (explicit sampler; ``-inf`` where :math:`\\psi_j` is 0 and in
        inactive slots; unused when collapsed).
    overflow : bool
        A new cluster was needed but every slot was taken (the sweep is invalid).
    """

    labels: jax.Array
    sizes: jax.Array
    counts: jax.Array
    totals: jax.Array
    log_psi: jax.Array
    overflow: jax.Array


def init_multinomial_state(rows: CountRows, labels, capacity: int) -> MultinomialGibbsState:
    """A chain state from a labelling (slots ``0..k-1``), :math:`\\psi_j` at the pooled distributions."""
    capacity = V.check_int(capacity, "capacity", minimum=1)
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i")
    V.check_kernel_ids(labels, "labels", capacity)
    V.check_same_length(labels, rows.totals, "labels", "rows")
    labels = jnp.asarray(labels, jnp.int32)
    counts, totals = pooled_counts(rows, labels, capacity)
    sizes = jax.ops.segment_sum(jnp.ones_like(rows.totals), labels, capacity)
    log_psi = jnp.where((sizes > 0)[:, None], log_distributions(counts, totals), -jnp.inf)
    return MultinomialGibbsState(labels, sizes, counts, totals, log_psi, jnp.asarray(False))


def new_cluster_log_weights(rows, tau, beta: float, *, entropy: bool = True) -> np.ndarray:
    r"""Per row, :math:`\log [B(\beta + r_i/\tau) / B(\beta)] - \tau^{-1} \sum_y r_{iy} \log \hat p_{iy}`, host float64.

    The new-cluster marginal of the tempered row less the entropy term common to every
    choice of the explicit sampler: :math:`O(\log(1/\tau))`, computed in float64 so that
    neither term's size (:math:`O(1/\tau)`) costs precision.  ``entropy=False``: the
    marginal alone (the collapsed sampler's new-cluster score).

    Parameters
    ----------
    rows : HostCounts or scipy.sparse csr (n, m)
    tau : float
    beta : float

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    csr = getattr(rows, "csr", rows)
    n, m = csr.shape
    totals = np.asarray(csr.sum(axis=1)).ravel()
    lengths = np.diff(csr.indptr)
    which = np.repeat(np.arange(n), lengths)
    v = csr.data / tau
    per = np.bincount(which, np_gammaln(beta + v) - np_gammaln(beta), minlength=n)
    marginal = per - (np_gammaln(m * beta + totals / tau) - np_gammaln(m * beta))
    safe = np.where(totals > 0, totals, 1.0)
    negent = np.bincount(which, csr.data * np.log(csr.data / safe[which]), minlength=n)
    return marginal - negent / tau if entropy else marginal


def _log_gammas(key, conc):
    """``log Gamma(conc)`` draws, ``-inf`` where ``conc`` is 0 (a padding column: no category)."""
    return jnp.where(conc > 0, jax.random.loggamma(key, jnp.where(conc > 0, conc, 1.0)), -jnp.inf)


def multinomial_sweep(key, rows: CountRows, state: MultinomialGibbsState, *, log_alpha, tau, beta,
                      new_weights, n_columns, collapsed: bool,
                      log_gamma_table=None) -> tuple[MultinomialGibbsState, GibbsInfo]:
    """One Gibbs sweep of one chain: the psi draws (explicit), then every row (remove, draw, add back).

    Parameters
    ----------
    key : PRNG key
    rows : CountRows
        The rows (unpadded: every row is an object of the model).
    state : MultinomialGibbsState
    log_alpha : scalar
        :math:`-\\lambda/\\tau`.
    tau : scalar
    beta : scalar
        Symmetric Dirichlet parameter.
    new_weights : array, shape (n,)
        Explicit sampler: :func:`new_cluster_log_weights`; collapsed: the new-cluster
        marginal :math:`\\log B(\beta + r_i/\tau) - \\log B(\beta)` itself
        (:func:`new_cluster_log_weights` with ``entropy=False``).
    n_columns : int scalar
        The categories ``m`` of the Dirichlet: columns at and after it are padding.
    collapsed : bool (static)
    log_gamma_table : array, optional
        Collapsed sampler on integer counts: :math:`\\log\\Gamma(\beta + j/\tau)`,
        ``j = 0..T-1`` (see :func:`~bayesclust.kernels.multinomial.polya_move_score`).

    Returns
    -------
    state : MultinomialGibbsState
    info : GibbsInfo
        ``n_clusters``, ``changed``; no split-merge moves (0, 0).
    """
    n = rows.totals.shape[0]
    K, m = state.counts.shape
    dtype = rows.vals.dtype
    k_u, k_gamma = jax.random.split(key)
    u = 1.0 - jax.random.uniform(k_u, (n,), dtype)
    # Padding columns (count 0 in every row) are no category of the Dirichlet: beta 0 there.
    beta_vec = jnp.where(jnp.arange(m) < n_columns, jnp.asarray(beta, dtype), 0.0).astype(dtype)
    beta_sum = beta * n_columns
    slots = jnp.arange(K)
    active0 = state.sizes > 0
    if not collapsed:
        # Every log-gamma of the sweep in one draw (one rejection loop in the program): the
        # sweep draws psi_j ~ Dir(beta + n_j / tau) of the current clusters first, then moves
        # the rows.  A new cluster's psi ~ Dir(beta + r_i / tau) is drawn as normalised gammas:
        # on the row's own columns from Gamma(beta + r_iy / tau), for every row in one batch;
        # elsewhere from Gamma(beta), the same law for every row, taken from a pool of 2K
        # independent vectors, one per cluster opened in the sweep (more openings than the
        # pool holds set ``overflow``: the segment is redone in a larger buffer).
        # The rows' entries are drawn packed, one lane per nonzero count (sparse rows: as many
        # lanes as their segment form, not n x L), and read back at the (row, pair) places.
        cols_all, vals_all = rows.cols, rows.vals
        mask = (vals_all > 0).ravel()
        lanes = rows.seg_vals.shape[0] if rows.seg_vals is not None else mask.shape[0]
        at = jnp.where(mask, jnp.cumsum(mask) - 1, lanes)  # the entry's lane; lanes: none
        packed = jnp.zeros(lanes, dtype).at[at].set((beta_vec[cols_all] + vals_all / tau).ravel(),
                                                     mode="drop")
        conc = jnp.concatenate([(beta_vec + state.counts / tau).ravel(), packed,
                                jnp.broadcast_to(beta_vec, (2 * K, m)).ravel()])
        g = _log_gammas(k_gamma, conc)
        g_psi = g[:K * m].reshape(K, m)
        log_psi0 = jnp.where(active0[:, None],
                             g_psi - jax.scipy.special.logsumexp(g_psi, axis=-1, keepdims=True),
                             -jnp.inf)
        on_support = jnp.where(mask, g[K * m + jnp.minimum(at, lanes - 1)], -jnp.inf)
        on_support = on_support.reshape(vals_all.shape)
        pool = g[K * m + lanes:].reshape(2 * K, m)
    else:
        log_psi0 = state.log_psi
        on_support = jnp.zeros((n, 1), dtype)
        pool = jnp.zeros((1, 1), dtype)

    def new_log_psi(i, opened):
        cols, vals = rows.cols[i], rows.vals[i]
        g = pool[jnp.minimum(opened, pool.shape[0] - 1)]
        g = g.at[jnp.where(vals > 0, cols, m)].set(on_support[i], mode="drop")
        return g - jax.scipy.special.logsumexp(g)

    def step(carry, inp):
        labels, sizes, counts, totals, log_psi, overflow, opened = carry
        i, u_i = inp
        cols, vals, tot = rows.cols[i], rows.vals[i], rows.totals[i]
        old = labels[i]
        at_old = slots == old
        sizes = sizes - at_old
        counts = counts.at[old, cols].add(-vals)
        totals = totals - jnp.where(at_old, tot, 0.0)
        active = sizes > 0
        if collapsed:
            score = polya_move_score(cols, vals, tot, counts, totals, beta_vec, beta_sum,
                                     tau=tau, log_gamma_table=log_gamma_table)
            new_score = log_alpha + new_weights[i]
        else:
            score = -kl_costs_row(cols, vals, rows.negentropy[i], log_psi) / tau
            new_score = log_alpha + new_weights[i]
        log_w = jnp.where(active, jnp.log(jnp.where(active, sizes, 1.0)) + score, -jnp.inf)
        choice = _draw_slot_or_new(log_w[:, None], new_score[None], u_i[None])[0]
        is_new = choice == K
        free = jnp.argmin(active).astype(jnp.int32)
        overflow = overflow | (is_new & jnp.all(active))
        slot = jnp.where(is_new, free, choice).astype(jnp.int32)
        at_new = slots == slot
        sizes = sizes + at_new
        counts = counts.at[slot, cols].add(vals)
        totals = totals + jnp.where(at_new, tot, 0.0)
        if not collapsed:
            overflow = overflow | (is_new & (opened >= pool.shape[0]))
            log_psi = jnp.where(at_new[:, None] & is_new, new_log_psi(i, opened)[None, :], log_psi)
            opened = opened + is_new.astype(jnp.int32)
        return (labels.at[i].set(slot), sizes, counts, totals, log_psi, overflow, opened), None

    carry = (state.labels, state.sizes, state.counts, state.totals, log_psi0, state.overflow,
             jnp.int32(0))
    (labels, sizes, counts, totals, log_psi, overflow, _), _ = lax.scan(
        step, carry, (jnp.arange(n), u))
    # Exact statistics of the new labels (the running sums drift in float32).
    counts, totals = pooled_counts(rows, labels, K)
    active = sizes > 0
    if collapsed:
        log_psi = jnp.where(active[:, None], log_distributions(counts, totals), -jnp.inf)
    else:
        # psi of the sweep's start, the clusters opened in it from their draws; none in empty slots.
        log_psi = jnp.where(active[:, None], log_psi, -jnp.inf)
    new = MultinomialGibbsState(labels, sizes, counts, totals, log_psi, overflow)
    info = GibbsInfo(jnp.sum(active, dtype=jnp.int32), jnp.any(labels != state.labels),
                     jnp.int32(0), jnp.int32(0))
    return new, info


def multinomial_sweep_chains(keys, rows: CountRows, state: MultinomialGibbsState, *, log_alpha, tau,
                             beta, new_weights, n_columns, collapsed: bool, log_gamma_table=None):
    """:func:`multinomial_sweep` of a batch of chains (``keys`` (C,), a leading chain axis on ``state``)."""
    return jax.vmap(lambda k, s: multinomial_sweep(
        k, rows, s, log_alpha=log_alpha, tau=tau, beta=beta, new_weights=new_weights,
        n_columns=n_columns, collapsed=collapsed, log_gamma_table=log_gamma_table))(keys, state)


def _log_likelihood(rows: CountRows, state: MultinomialGibbsState):
    """:math:`\\sum_i \\sum_y r_{iy} \\log \\psi_{z_i y}` (the untempered fit, row constants dropped)."""
    finite = jnp.where(jnp.isneginf(state.log_psi), 0.0, state.log_psi)
    return jnp.sum(jnp.where(state.counts > 0, state.counts * finite, 0.0))


@functools.partial(jax.jit, static_argnames=("num", "collapsed"))
def _run_segment(keys, rows, state, log_alpha, tau, beta, new_weights, n_columns, log_gamma_table,
                 *, num, collapsed):
    def draw(s, k):
        s, info = multinomial_sweep_chains(k, rows, s, log_alpha=log_alpha, tau=tau, beta=beta,
                                           new_weights=new_weights, n_columns=n_columns,
                                           collapsed=collapsed, log_gamma_table=log_gamma_table)
        record = dict(labels=s.labels, n_clusters=info.n_clusters,
                      log_likelihood=jax.vmap(lambda s1: _log_likelihood(rows, s1))(s))
        return s, record

    draw_keys = jax.vmap(lambda k: jax.random.split(k, num))(keys)
    state, records = lax.scan(draw, state, jnp.swapaxes(draw_keys, 0, 1))
    return state, jax.tree.map(lambda r: jnp.swapaxes(r, 0, 1), records)


def _grow(state: MultinomialGibbsState, capacity: int) -> MultinomialGibbsState:
    pad = capacity - state.sizes.shape[-1]
    return state._replace(
        sizes=jnp.pad(state.sizes, [(0, 0), (0, pad)]),
        counts=jnp.pad(state.counts, [(0, 0), (0, pad), (0, 0)]),
        totals=jnp.pad(state.totals, [(0, 0), (0, pad)]),
        log_psi=jnp.pad(state.log_psi, [(0, 0), (0, pad), (0, 0)], constant_values=-jnp.inf),
        overflow=jnp.zeros_like(state.overflow),
    )


def _sampler_rows(host, dtype) -> CountRows:
    """The rows without row or column padding (every row is an object of the model).

    Without padding columns, no draw of the explicit sampler is spent on them: a cluster's
    :math:`\\psi` has exactly ``m`` categories (its log-gammas are most of a sweep's work).
    """
    n, m = host.shape
    # Always the (column, count) pairs of the nonzero entries: the moves read one row at a time.
    r = device_rows(host, dtype, dense=False)
    cut = dict(cols=r.cols[:n], vals=r.vals[:n], totals=r.totals[:n], negentropy=r.negentropy[:n],
               columns=r.columns[:m])
    if r.dense is not None:
        cut["dense"] = r.dense[:n]
    return r._replace(**cut)


def gibbs_dp_multinomial(
    rng_key,
    counts: Any,
    *,
    lam: float,
    tau: float,
    beta: float = 1.0,
    collapsed: bool = False,
    num_warmup: int = 100,
    num_samples: int = 100,
    num_chains: int = 4,
    init_labels=None,
    progress_bar: bool = False,
):
    r"""Gibbs sampling of the tempered DP mixture of multinomials; returns a :class:`Posterior`.

    Model (:mod:`bayesclust.models.dp_multinomial`, our extension): :math:`z \sim
    \mathrm{CRP}(\alpha)`, :math:`\psi_j \sim \mathrm{Dir}(\beta)`, :math:`p(r_i \mid z,
    \psi) \propto \mathrm{Mult}(r_i \mid \psi_{z_i})^{1/\tau}`, :math:`\alpha =
    e^{-\lambda/\tau}`.  As :math:`\tau \to 0` the explicit sampler's moves become
    KL-means' (:func:`bayesclust.inference.hard.kl_means.kl_means`) and the posterior
    collapses onto low-``J`` partitions.

    Parameters
    ----------
    rng_key : jax key or int
    counts : array_like (n, m), scipy.sparse matrix or CoAssociation
        As :func:`~bayesclust.inference.hard.kl_means.kl_means` reads them.
    lam : float
        KL-means' penalty (> 0).
    tau : float
        Temperature (> 0).
    beta : float, default 1
        Symmetric Dirichlet parameter (> 0).
    collapsed : bool, default False
        Integrate :math:`\psi` out (Polya scores) instead of drawing it.
    num_warmup, num_samples, num_chains : int
        Sweeps discarded, draws kept per chain (one sweep each), chains (moved together).
    init_labels : array_like of int, shape (n,) or (num_chains, n), optional
        Initial partition(s); default one cluster.
    progress_bar : bool

    Returns
    -------
    Posterior
        Label draws ``(num_chains, num_samples, n)``, ``log_likelihood`` (the untempered
        :math:`\sum_i r_i \cdot \log \psi_{z_i}` at the draw's :math:`\psi`, the pooled
        maximum-likelihood one when collapsed), sample stat ``n_clusters``.

    References
    ----------
    R. M. Neal (2000), Algorithms 2 and 3.  K. Jiang, B. Kulis and M. I. Jordan (2012), §3.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[9.0, 1, 0, 0], [8, 2, 0, 0], [0, 0, 5, 5], [0, 0, 4, 6]])
    >>> post = gibbs_dp_multinomial(0, R, lam=2.0, tau=0.05, num_warmup=20, num_samples=40)
    >>> int(np.bincount(post.n_clusters.ravel()).argmax())
    2
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    host = check_counts(counts, "counts")
    lam = V.check_positive(lam, "lam")
    tau = V.check_positive(tau, "tau")
    beta = V.check_positive(beta, "beta")
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    n = host.shape[0]
    labels0, per_chain = start_labels(init_labels, n, num_chains)
    if not per_chain:
        labels0 = np.broadcast_to(labels0, (num_chains, n)).copy()
    dtype = working_dtype(host)
    rows = _sampler_rows(host, dtype)
    k0 = int(labels0.max()) + 1
    capacity = max(8, pow2_at_least(2 * k0))
    state = jax.vmap(lambda lab: init_multinomial_state(rows, lab, capacity))(jnp.asarray(labels0))
    log_alpha = jnp.asarray(-lam / tau, dtype)
    new_weights = jnp.asarray(new_cluster_log_weights(host, tau, beta, entropy=not collapsed), dtype)
    table = None
    data = host.csr.data
    if collapsed and np.all(data == np.round(data)):
        # Integer counts: every per-entry lgamma of the Polya score is read from a table of
        # log Gamma(beta + j / tau) up to the largest column sum (a pooled count never exceeds it).
        top = int(np.asarray(host.csr.sum(axis=0)).max()) + 1
        table = jnp.asarray(np_gammaln(beta + np.arange(top) / tau), dtype)
    tau_j, beta_j = jnp.asarray(tau, dtype), jnp.asarray(beta, dtype)

    def grow(s):
        nonlocal capacity
        if capacity >= n:
            raise RuntimeError(f"the Gibbs sampler needed more than n={n} clusters")
        capacity = min(2 * capacity, n)
        return _grow(s, capacity)

    records, seconds = run_in_segments(
        key, lambda keys, s, num: _run_segment(keys, rows, s, log_alpha, tau_j, beta_j, new_weights,
                                               np.int32(host.shape[1]), table, num=num, collapsed=bool(collapsed)),
        state, num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, thin=1,
        grow=grow, progress_bar=progress_bar, desc="gibbs (multinomial)")
    post = Posterior(
        records["labels"], log_likelihood=records["log_likelihood"],
        sample_stats={"n_clusters": records["n_clusters"]},
        sampler="gibbs-multinomial-" + ("collapsed" if collapsed else "explicit"),
        model="dp_multinomial", kernels="xla", seconds=seconds, copy=False)
    warn_if_not_converged(post)
    return post
