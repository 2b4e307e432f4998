"""Gibbs samplers in JAX for the Dirichlet-process Gaussian mixture.

Two samplers for the model of :mod:`bayesclust.models.dp_gmm` (isotropic
components ``N(mu_c, sigma2 I)``, means ``mu_c ~ N(0, rho2 I)``, a DP(alpha)
prior over partitions):

* ``collapsed=False`` -- Neal's Algorithm 2 exactly as Kulis & Jordan (2012,
  §2.2 and §3.1) write it: existing clusters use their current mean, a new
  cluster uses the closed-form prior predictive ``N(x | 0, (rho2 + sigma2) I)``
  and draws its mean from ``N(rho2/(rho2+sigma2) x, sigma2 rho2/(sigma2+rho2) I)``;
  the means are resampled from their Gaussian posterior after every sweep.
  Its small-variance limit (``sigma2 -> 0`` with ``alpha = alpha_from_lam``) is
  DP-means.
* ``collapsed=True`` -- means integrated out (Neal's Algorithm 3): a point
  joins cluster ``c`` with weight ``n_c N(x | m_c, (sigma2 + s2_c) I)`` where
  ``m_c, s2_c`` are the posterior mean/variance of ``mu_c`` given the other
  members.

Both keep clusters in a fixed-capacity buffer with an ``active`` mask (8 slots
to start: a step's cost is linear in the capacity); a sweep is one ``lax.scan``
over the points that moves all chains at once, with the chains on the
vectorised axis (:func:`sweep_chains`) -- on a CPU, one call of the native
kernel ``bayesclust/_native/gibbs.cc`` instead (8 chains per SIMD register, a
whole segment of draws per call; the same draws given the same random
numbers); long runs are split
into segments with a progress bar; a full buffer is grown (capacity doubled,
the segment redone from its start with the same keys), so no cluster is ever
dropped.  Optionally each sweep adds sequentially-allocated split-merge moves
(Dahl 2003; :func:`split_merge_move`), which change ``k`` by moving a whole
group of points at once (on a CPU inside the native kernel too, all lanes
walking the points together; there the members are allocated in index order,
not in Dahl's random order -- either keeps detailed balance).  The rows are padded to
a shape bucket (:func:`bayesclust.kernels.padded_rows`: zeros, label -1, never moved or
counted, the random streams indexed by the real rows), so a fit on a few more rows reuses
the compiled sweeps and makes the draws an unpadded run makes.

A third sampler, ``scheme="blocked"`` (:func:`blocked_sweep`), is Ishwaran &
James's (2001) blocked Gibbs sampler of the truncated stick-breaking model of
:func:`bayesclust.models.dp_gmm.dp_gmm` (the program NUTS fits): weights, means
and then all labels in parallel, one vectorised pass per sweep.

References
----------
R. M. Neal (2000), JCGS 9(2), 249-265.  B. Kulis and M. I. Jordan (2012), ICML.
D. B. Dahl (2003), Tech. Rep. 1086, Univ. of Wisconsin.  S. Jain and R. M. Neal
(2004), JCGS 13(1), 158-182.  H. Ishwaran and L. F. James (2001), JASA 96, 161-173.
"""

from __future__ import annotations

import functools
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln

from ... import _native
from ... import _validation as V
from ...kernels import (
    PRECISION,
    categorical_inverse_cdf,
    complete_data_log_likelihood,
    segment_stats,
    sum_rows,
    weighted_means,
)
from ...models.dp_gmm import DEFAULT_TRUNCATION, check_truncation
from .._sharding import check_divides, check_mesh, replicate, shard_chains, shard_leading, to_host
from ._common import (
    _accept_split_merge,
    _draw_means,
    _draw_sigma2,
    _draw_slot_or_new,
    _log_normal_iso,
    _prior_params,
    _propose_split_merge,
    _slot_terms,
    _update_log_alpha,
    chain_seeds,
    label_dtype,
    native_sweep_ok,
    pad_rows,
    prior_distribution,
    recorded_labels,
    run_rows,
    scan_rows,
    start_labels,
    sweep_kernels,
)
from .convergence import DP_SAMPLER_DEFAULTS, warn_if_not_converged

__all__ = [
    "gibbs_dp_gmm",
    "GibbsState",
    "GibbsInfo",
    "gibbs_sweep",
    "sweep_chains",
    "init_state",
    "BlockedState",
    "blocked_sweep",
    "init_blocked_state",
    "split_merge_move",
    "prior_distribution",
]


class GibbsState(NamedTuple):
    """State of one chain.

    Attributes
    ----------
    labels : int32 (n,)
        Slot of each point's cluster.
    counts : float (K,)
        Cluster sizes (0 for inactive slots).
    sums : float (K, d)
        Per-cluster sums of the points.
    means : float (K, d)
        Cluster means (Algorithm 2 form; unused when collapsed).
    log_alpha : float scalar
        Log of the DP concentration (kept in log space: in the small-variance
        regime ``alpha = alpha_from_lam(...)`` under- or overflows).
    sigma2 : float scalar
    overflow : bool
        A new cluster was needed but every slot was taken (the sweep is invalid).
    """

    labels: jax.Array
    counts: jax.Array
    sums: jax.Array
    means: jax.Array
    log_alpha: jax.Array
    sigma2: jax.Array
    overflow: jax.Array


class GibbsInfo(NamedTuple):
    """What one sweep reports (:func:`gibbs_sweep`, :func:`sweep_chains`, :func:`blocked_sweep`).

    A Markov chain optimises nothing, so a sweep's info has no ``objective``: its first
    field is the number of clusters, its second ``changed`` as in every step's info.
    :func:`sweep_chains` gives every field a leading chain axis ``(C,)``.

    Attributes
    ----------
    n_clusters : int32 scalar
        Occupied clusters after the sweep.
    changed : bool scalar
        The sweep moved at least one point to another cluster slot.
    split_merge_accepted : int32 scalar
        Split-merge moves (:func:`split_merge_move`) the sweep accepted and applied.
    split_merge_proposed : int32 scalar
        Split-merge moves it proposed (``split_merge`` for ``n >= 2``, else 0); their
        ratio over the draws is the move's acceptance rate.
    """

    n_clusters: jax.Array
    changed: jax.Array
    split_merge_accepted: jax.Array
    split_merge_proposed: jax.Array


def _scan_points(X, rho2, collapsed, state: GibbsState, u, z, n_valid=None):
    """Neal's single-site moves for every point in order, in every chain: remove, draw, add back.

    ``state`` holds a batch of ``C`` chains (a leading chain axis on every field:
    labels ``(C, n)``, counts ``(C, K)``, sums and means ``(C, K, d)``); ``u ~ U(0, 1]``
    of shape ``(C, n)`` picks the cluster (inverse CDF); ``z ~ N(0, I_d)`` of shape
    ``(C, n, d)`` gives a new cluster's mean (Algorithm 2 only; ``None`` when collapsed).

    One ``lax.scan`` over the points moves all chains at once, with the chains
    on the minor (vectorised) axis of every carried array -- ``(K, C)`` and
    ``(d, K, C)`` -- and slots selected by one-hot masks, so each step is a
    handful of fused element-wise loops over ``K x C`` entries instead of a
    per-chain gather and scatter (what ``vmap`` of a one-chain scan compiles to);
    its cost per chain falls as chains are added until the arithmetic dominates.
    A step recomputes the terms of :func:`_slot_terms` for the whole buffer from
    the counts and sums: ``O(K d)`` work, ``3K + 1`` transcendentals and a
    cumulative sum per chain.  (Caching them and updating only the two slots a
    move touches took longer on XLA:CPU -- more, smaller operations: BENCHMARKS.md.)
    The new-cluster weight ``log alpha + log N(x | 0, (rho2 + sigma2) I)``
    and Algorithm 2's new-mean draws are computed for all points before the scan.
    ``n_valid`` (traced int, optional): only the first ``n_valid`` rows are stepped
    (:func:`scan_rows`, as the other samplers' point loops); the rest pad ``X`` to a shape
    bucket (label -1, never counted).
    """
    n, d = X.shape
    sigma2 = state.sigma2  # (C,)
    K = state.counts.shape[1]
    log_new = state.log_alpha[:, None] + _log_normal_iso(
        jnp.sum(X * X, axis=1)[None, :], (rho2 + sigma2)[:, None], d)  # (C, n)
    slots = jnp.arange(K, dtype=jnp.int32)[:, None]

    def step(carry, inp):
        counts, sums, means, overflow = carry  # (K, C), (d, K, C), (d, K, C), (C,)
        x, old, u_i, ln_i, nm_i = inp  # (d,), (C,), (C,), (C,), (d, C) or None
        x_col = x[:, None, None]
        at_old = slots == old
        counts = counts - at_old
        sums = sums - jnp.where(at_old, x_col, 0.0)
        a, b, m = _slot_terms(counts, sums, means, sigma2, rho2, collapsed, d,
                              features_first=True)
        log_w = a - b * jnp.sum((x_col - m) ** 2, axis=0)
        choice = _draw_slot_or_new(log_w, ln_i, u_i)
        is_new = choice == K
        active = counts > 0
        free = jnp.argmin(active, axis=0).astype(jnp.int32)  # first inactive slot
        overflow = overflow | (is_new & jnp.all(active, axis=0))
        slot = jnp.where(is_new, free, choice)
        at_new = slots == slot
        counts = counts + at_new
        sums = sums + jnp.where(at_new, x_col, 0.0)
        if not collapsed:
            means = jnp.where(at_new & is_new, nm_i[:, None, :], means)
        return (counts, sums, means, overflow), slot

    carry = (state.counts.T, state.sums.T, state.means.T, state.overflow)
    if collapsed:
        new_means = None
    else:
        shrink = rho2 / (rho2 + sigma2)
        new_means = (shrink[:, None, None] * X
                     + jnp.sqrt(sigma2 * shrink)[:, None, None] * z)  # (C, n, d)
        new_means = jnp.transpose(new_means, (1, 2, 0))
    (counts, sums, means, overflow), labels = scan_rows(
        step, carry, (X, state.labels.T, u.T, log_new.T, new_means), n_valid, out=state.labels.T)
    return state._replace(labels=labels.T, counts=counts.T, sums=sums.T, means=means.T,
                          overflow=overflow)


def _point_moves(keys_u, keys_z, X, rho2, collapsed, state: GibbsState, n_valid=None):
    """Neal's single-site moves of every point in every chain, then exact statistics.

    On a CPU with the native kernels built, one call of the native sweep
    (:func:`bayesclust._native.gibbs_sweep_ffi`: the same moves, 8 chains at a time
    in SIMD lanes, its uniforms and normals from per-chain streams seeded by
    ``jax.random.bits(keys_u)``); elsewhere :func:`_scan_points` on uniforms and normals drawn with ``jax.random`` from
    ``keys_u`` and ``keys_z``.  The two paths make the same draws from the same
    numbers (tested), so a run is reproducible from its key on either, but their
    random streams differ.  Both return counts and sums that match the new labels
    (the XLA path recomputes them: its float32 running sums drift; the native
    sweep keeps its sums in double).  ``n_valid``: as :func:`_scan_points` (the rows
    past it keep label -1 on both paths).
    """
    n, d = X.shape
    rho2 = jnp.asarray(rho2, X.dtype)

    def xla(X, rho2, state, keys_u, keys_z):
        # All the sweep's randomness in bulk draws: cheaper to run and to compile
        # than a key split and two draws inside every step.
        u = 1.0 - jax.vmap(lambda k: jax.random.uniform(k, (n,), X.dtype))(keys_u)
        z = None if collapsed else jax.vmap(lambda k: jax.random.normal(k, (n, d), X.dtype))(keys_z)
        state = _scan_points(X, rho2, collapsed, state, u, z, n_valid)
        stats = jax.vmap(lambda lab: segment_stats(X, lab, state.counts.shape[1]))(state.labels)
        return state._replace(counts=stats.weight, sums=stats.sum)

    if not native_sweep_ok(X):
        return xla(X, rho2, state, keys_u, keys_z)

    def cpu(X, rho2, state, keys_u, keys_z):
        labels, counts, sums, means, overflow = _native.gibbs_sweep_ffi(
            X, state.labels, state.counts, state.sums, state.means, state.log_alpha,
            state.sigma2, rho2, chain_seeds(keys_u), collapsed=collapsed, n_valid=n_valid)
        return state._replace(labels=labels, counts=counts, sums=sums, means=means,
                              overflow=state.overflow | (overflow != 0))

    return lax.platform_dependent(X, rho2, state, keys_u, keys_z, cpu=cpu, default=xla)


def _split_merge_score(count, total, sigma2, rho2, d):
    r"""The part of a cluster's log marginal likelihood that does not cancel in a
    split/merge ratio (means integrated out, per dimension a Gaussian
    :math:`N(x_c \mid 0, \sigma^2 I + \rho^2 11^T)`):

    .. math::

        -\tfrac d2 \log(1 + n \rho^2/\sigma^2) + \frac{|S|^2}{2 \sigma^2 (n + \sigma^2/\rho^2)}

    (the terms in :math:`n \log(2\pi\sigma^2)` and :math:`\sum_i |x_i|^2` are the
    same before and after the move).
    """
    return (-0.5 * d * jnp.log1p(count * rho2 / sigma2)
            + jnp.sum(total * total, axis=-1) / (2.0 * sigma2 * (count + sigma2 / rho2)))


def split_merge_move(key, X, state: GibbsState, rho2) -> tuple[GibbsState, jax.Array]:
    r"""One sequentially-allocated split-merge move (Dahl 2003), means integrated out.

    Two distinct points ``i, j`` are drawn uniformly.  Let ``S`` be the other
    members of their clusters, visited in a uniformly random order.

    * ``z_i = z_j`` -- propose a split: clusters ``A = {i}``, ``B = {j}`` grow by
      allocating each ``k`` in ``S`` in turn with probability
      :math:`\propto |A| \, p(x_k \mid A)` or :math:`|B| \, p(x_k \mid B)` (the
      collapsed predictive of the points allocated so far); ``q`` is the product
      of the chosen probabilities.
    * ``z_i != z_j`` -- propose the merge; ``q`` is the probability that the same
      sequential allocation, in the same order, reproduces the current split.

    The split is accepted with probability
    :math:`\min\{1, \frac{p(z^{split} \mid X)}{p(z^{merge} \mid X)} / q\}` and the
    merge with :math:`\min\{1, q \, \frac{p(z^{merge} \mid X)}{p(z^{split} \mid X)}\}`,
    where under the CRP prior and the conjugate marginal likelihood

    .. math::

        \log \frac{p(z^{split} \mid X)}{p(z^{merge} \mid X)} = \log\alpha
        + \log\frac{\Gamma(n_A)\Gamma(n_B)}{\Gamma(n_A + n_B)}
        + g(n_A, S_A) + g(n_B, S_B) - g(n_A + n_B, S_A + S_B)

    with ``g`` of :func:`_split_merge_score`.  The permutation of ``S`` is an
    auxiliary variable shared by the move and its reverse, and the pair is
    chosen symmetrically, so the move satisfies detailed balance with respect
    to ``p(z | X)`` (Dahl 2003; Jain & Neal 2004, §3, for the general scheme).
    For Kulis & Jordan's Algorithm 2 (means in the state) it is a move on the
    marginal of ``z``; :func:`gibbs_sweep` redraws the means from ``p(mu | z)``
    right after it, which makes the pair a valid move on ``(z, mu)``.

    A split that needs a slot when the buffer is full sets ``overflow`` (the
    caller grows the buffer and redoes the segment).

    Returns
    -------
    state : GibbsState
    accepted : bool scalar
        The move was accepted and applied (an accepted split with no free slot is not
        applied: it sets ``overflow``).

    References
    ----------
    D. B. Dahl (2003), An improved merge-split sampler for conjugate Dirichlet
    process mixture models, Technical Report 1086, Dept. of Statistics,
    University of Wisconsin.  S. Jain and R. M. Neal (2004), A split-merge
    Markov chain Monte Carlo procedure for the Dirichlet process mixture
    model, JCGS 13(1), 158-182.
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    V.check_rows_match(X, "X", state.labels)
    return _split_merge_move(key, X, state, rho2)


def _split_merge_move(key, X, state: GibbsState, rho2, n_valid=None):
    """:func:`split_merge_move` on rows padded past ``n_valid`` (label -1; None: no padding)."""
    n, d = X.shape
    sigma2 = state.sigma2
    terms = functools.partial(_slot_terms, mean=None, sigma2=sigma2, rho2=rho2, collapsed=True, d=d)

    def log_weight(side, x):
        a, b, mean = terms(*side)
        return a - b * jnp.sum((x - mean) ** 2)

    def add(a, b, x, to_a, to_b):
        return ((a[0] + to_a, a[1] + jnp.where(to_a, x, 0.0)),
                (b[0] + to_b, b[1] + jnp.where(to_b, x, 0.0)))

    one = jnp.ones((), X.dtype)
    prop = _propose_split_merge(key, X, state.labels, lambda x: (one, x),
                                lambda a, b, x: log_weight(b, x) - log_weight(a, x), add,
                                n_valid=n_valid)
    (n_a, s_a), (n_b, s_b) = prop.a, prop.b
    log_ratio = (state.log_alpha + gammaln(n_a) + gammaln(n_b) - gammaln(n_a + n_b)
                 + _split_merge_score(n_a, s_a, sigma2, rho2, d)
                 + _split_merge_score(n_b, s_b, sigma2, rho2, d)
                 - _split_merge_score(n_a + n_b, s_a + s_b, sigma2, rho2, d))
    new_labels, free, do_split, do_merge, overflow = _accept_split_merge(
        prop, log_ratio, state.labels, state.counts)
    ci, cj = prop.ci, prop.cj
    counts, sums = state.counts, state.sums
    counts = jnp.where(do_split, counts.at[ci].set(n_a).at[free].set(n_b), counts)
    sums = jnp.where(do_split, sums.at[ci].set(s_a).at[free].set(s_b), sums)
    counts = jnp.where(do_merge, counts.at[ci].set(n_a + n_b).at[cj].set(0.0), counts)
    sums = jnp.where(do_merge, sums.at[ci].set(s_a + s_b).at[cj].set(0.0), sums)
    return state._replace(labels=new_labels, counts=counts, sums=sums,
                          overflow=state.overflow | overflow), do_split | do_merge


def _resample_means(key, state: GibbsState, rho2):
    return _draw_means(key, state.counts, state.sums, state.sigma2, rho2)


def gibbs_sweep(key, X, state: GibbsState, *, rho2, collapsed, alpha_prior=None, sigma2_prior=None,
                split_merge=0):
    """One Gibbs sweep of one chain: the points in order, split-merge moves, means, hyper-parameters.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    state : GibbsState
        One chain (no chain axis).
    rho2 : float
        Prior variance of the means.
    collapsed : bool (static)
        Means integrated out (Algorithm 3) instead of Kulis & Jordan's Algorithm 2.
    alpha_prior, sigma2_prior : (a, b) arrays or None (static structure)
        The parameters of the priors ``alpha ~ Gamma(a, b)`` (shape, rate) and
        ``sigma2 ~ InverseGamma(a, b)`` (shape, scale), as :func:`gibbs_dp_gmm`
        reads them from its NumPyro distributions (this step works on traced
        parameters).
    split_merge : int (static)
        Number of :func:`split_merge_move` moves after the point moves (0: none;
        the random stream of the rest of the sweep does not depend on it).

    Returns
    -------
    state : GibbsState
    info : GibbsInfo
        The clusters after the sweep, whether a point moved, and the split-merge moves
        accepted and proposed.

    Notes
    -----
    The same sweep as chain ``c`` of :func:`sweep_chains` given ``keys[c] = key``.
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    V.check_rows_match(X, "X", state.labels)
    one = jax.tree.map(lambda a: jnp.asarray(a)[None], state)
    out = sweep_chains(jnp.asarray(key)[None], X, one, rho2=rho2, collapsed=collapsed,
                       alpha_prior=alpha_prior, sigma2_prior=sigma2_prior, split_merge=split_merge)
    return jax.tree.map(lambda a: a[0], out)


def sweep_chains(keys, X, state: GibbsState, *, rho2, collapsed, alpha_prior=None,
                 sigma2_prior=None, split_merge=0):
    """One Gibbs sweep of each of ``C`` chains (:func:`gibbs_sweep` for a batch).

    Parameters
    ----------
    keys : PRNG keys, shape (C,)
        One key per chain.
    X : array, shape (n, d)
    state : GibbsState
        A leading chain axis on every field (labels ``(C, n)``, counts ``(C, K)``, ...).
    rho2, collapsed, alpha_prior, sigma2_prior, split_merge
        As :func:`gibbs_sweep`.

    Returns
    -------
    state : GibbsState
        The chains after the sweep.
    info : GibbsInfo
        Every field with a leading chain axis ``(C,)``.

    Notes
    -----
    The point moves of all chains run in one scan (:func:`_scan_points`, chains
    on the vectorised axis); the rest of the sweep is per chain under ``vmap``.
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    V.check_rows_match(X, "X", state.labels)
    n, d = X.shape
    if state.labels.ndim != 2 or state.labels.shape[1] != n:
        raise ValueError(f"state.labels must have shape (chains, n) = (C, {n}), got "
                         f"{state.labels.shape}")
    if keys.shape[0] != state.labels.shape[0]:
        raise ValueError(f"keys must hold one key per chain ({state.labels.shape[0]}), got "
                         f"{keys.shape[0]}")
    return _sweep_chains(keys, X, state, rho2=rho2, collapsed=collapsed, alpha_prior=alpha_prior,
                         sigma2_prior=sigma2_prior, split_merge=split_merge)


def _sweep_chains(keys, X, state: GibbsState, *, rho2, collapsed, alpha_prior, sigma2_prior,
                  split_merge, n_valid=None):
    """:func:`sweep_chains` on rows padded to a shape bucket: only the first ``n_valid``
    (traced int; None: every row) move and count, the rest keep label -1.  Padded only
    when at least two rows are real (the split-merge moves' count is read from ``X``)."""
    n, d = X.shape
    n_real = n if n_valid is None else n_valid
    sub = jax.vmap(lambda k: jax.random.split(k, 5))(keys)
    before = state.labels
    state = _point_moves(sub[:, 0], sub[:, 1], X, rho2, collapsed, state, n_valid)
    moves = split_merge if n >= 2 else 0

    def finish(key, sub_keys, state):
        _, _, k_means, k_sigma, k_alpha = sub_keys
        accepted = jnp.zeros((), jnp.int32)
        if moves:
            k_sm = jax.random.split(jax.random.fold_in(key, 0x5EED), moves)

            def move(t, carry):
                s_, acc = carry
                s_, ok = _split_merge_move(k_sm[t], X, s_, rho2, n_valid)
                return s_, acc + ok.astype(jnp.int32)

            state, accepted = lax.fori_loop(0, moves, move, (state, accepted))
        # Collapsed chains do not need the means, but drawing them from their
        # conditional costs O(k d) and gives mean draws for the Posterior.
        state = state._replace(means=_resample_means(k_means, state, rho2))
        if sigma2_prior is not None:
            sigma2 = _draw_sigma2(k_sigma, X, state.means, state.labels, sigma2_prior, n_valid)
            state = state._replace(sigma2=sigma2)
        if alpha_prior is not None:
            k = jnp.sum(state.counts > 0)
            log_alpha = _update_log_alpha(k_alpha, state.log_alpha, k, n_real, alpha_prior)
            state = state._replace(log_alpha=log_alpha.astype(X.dtype))
        return state, accepted

    state, accepted = jax.vmap(finish)(keys, sub, state)
    info = GibbsInfo(jnp.sum(state.counts > 0, axis=1, dtype=jnp.int32),
                     jnp.any(state.labels != before, axis=1), accepted,
                     jnp.full(accepted.shape, moves, jnp.int32))
    return state, info


def log_likelihood(X, state: GibbsState, rho2, collapsed, n_valid=None):
    """``log p(X | z, mu, sigma2)`` (Algorithm 2) or ``log p(X | z, sigma2)`` (collapsed).

    The collapsed value integrates the means out cluster by cluster:
    ``sum_c [ -n_c d/2 log(2 pi sigma2) - (SS_c - |S_c|^2 / (n_c + sigma2/rho2)) / (2 sigma2)
    - d/2 log(1 + n_c rho2/sigma2) ]``, where the within-cluster sums of squares
    ``SS_c`` add up to ``sum_i |x_i|^2`` whatever the partition, so only the
    counts and sums of the state are needed (``O(K d)`` per chain, no pass over X).
    ``n_valid`` (traced int, optional): the rows past it pad ``X`` with zeros (label -1)
    and are left out; the sums run over row chunks that the padding cannot reorder
    (:func:`~bayesclust.kernels.sum_rows`).
    """
    n, d = X.shape
    s2 = state.sigma2
    if not collapsed:
        return complete_data_log_likelihood(X, state.means, state.labels, s2, n_valid=n_valid)
    n_c = state.counts
    fit = jnp.sum(state.sums**2, axis=1) / (n_c + s2 / rho2)
    per = jnp.where(n_c > 0, -0.5 * d * jnp.log1p(n_c * rho2 / s2) + fit / (2 * s2), 0.0)
    if n_valid is None:
        total_ss = jnp.sum(X * X)
    else:
        n, total_ss = n_valid, jnp.sum(sum_rows(X * X))
    return (-0.5 * n * d * jnp.log(2 * jnp.pi * s2) - total_ss / (2 * s2) + jnp.sum(per))


class BlockedState(NamedTuple):
    """State of one chain of the blocked (truncated stick-breaking) Gibbs sampler.

    Attributes
    ----------
    labels : int32 (n,)
        Component of each point, in ``[0, T)``.
    log_weights : float (T,)
        Log mixture weights ``log w_j`` (stick-breaking, summing to one).
    means : float (T, d)
        Component means (every component, occupied or not).
    log_alpha : float scalar
    sigma2 : float scalar
    """

    labels: jax.Array
    log_weights: jax.Array
    means: jax.Array
    log_alpha: jax.Array
    sigma2: jax.Array


def blocked_sweep(key, X, state: BlockedState, *, rho2, alpha_prior=None, sigma2_prior=None):
    r"""One sweep of Ishwaran & James's (2001) blocked Gibbs sampler.

    The truncated stick-breaking model of :func:`bayesclust.models.dp_gmm.dp_gmm`
    (``T`` components, :math:`v_T = 1`), with every block drawn from its exact
    conditional, in this order:

    1. sticks, :math:`v_j \mid z \sim \mathrm{Beta}(1 + n_j, \alpha + \sum_{l > j} n_l)`,
       :math:`j < T`, and :math:`w_j = v_j \prod_{l<j} (1 - v_l)` (computed in log space
       from two log-gamma draws, so a stick close to 0 or 1 never under/overflows);
    2. means, :math:`\mu_j \mid z, X \sim N\big(\tfrac{S_j/\sigma^2}{1/\rho^2 + n_j/\sigma^2},
       (1/\rho^2 + n_j/\sigma^2)^{-1} I\big)` (the prior for empty components);
    3. labels, all points in parallel:
       :math:`p(z_i = j \mid w, \mu) \propto w_j N(x_i \mid \mu_j, \sigma^2 I)`,
       one ``O(n T d)`` vectorised pass and one uniform per point (inverse CDF);
    4. optionally :math:`\sigma^2 \mid z, \mu, X \sim \mathrm{InvGamma}(a + nd/2, b + SSE/2)`
       and :math:`\alpha \mid v \sim \mathrm{Gamma}(a + T - 1, b - \sum_{j<T} \log(1 - v_j))`
       (Ishwaran & James 2001, §5.2).

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    state : BlockedState
    rho2 : float
        Prior variance of the means.
    alpha_prior, sigma2_prior : (a, b) arrays or None (static structure)
        Prior parameters, as in :func:`gibbs_sweep`.

    Returns
    -------
    state : BlockedState
    info : GibbsInfo
        The occupied components after the sweep and whether a label changed (no
        split-merge moves: those fields are 0).
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    V.check_rows_match(X, "X", state.labels)
    n, d = X.shape
    T = state.means.shape[0]
    k_a, k_b, k_mu, k_z, k_sigma, k_alpha = jax.random.split(key, 6)
    dtype = X.dtype
    stats = segment_stats(X, state.labels, T)
    counts = stats.weight
    after = jnp.sum(counts) - jnp.cumsum(counts)  # points in components > j
    alpha = jnp.exp(state.log_alpha)
    # v = G1 / (G1 + G2), G1 ~ Gamma(1 + n_j), G2 ~ Gamma(alpha + after_j).
    lg1 = jax.random.loggamma(k_a, 1.0 + counts[:-1], dtype=dtype)
    lg2 = jax.random.loggamma(k_b, alpha + after[:-1], dtype=dtype)
    lse = jnp.logaddexp(lg1, lg2)
    log_v, log_1mv = lg1 - lse, lg2 - lse
    rest = jnp.concatenate([jnp.zeros((1,), dtype), jnp.cumsum(log_1mv)])
    log_w = rest + jnp.concatenate([log_v, jnp.zeros((1,), dtype)])

    sigma2 = state.sigma2
    prec = 1.0 / rho2 + counts / sigma2
    post_mean = stats.sum / (sigma2 * prec)[:, None]
    means = post_mean + jax.random.normal(k_mu, (T, d), dtype) / jnp.sqrt(prec)[:, None]

    # p(z_i = j) ∝ w_j exp(-|x_i - mu_j|^2 / (2 sigma2)) (the common normaliser dropped).
    # |x_i - mu_j|^2 = |x_i|^2 - 2 x_i.mu_j + |mu_j|^2; the first term is constant in j.
    cross = jnp.matmul(X, means.T, precision=PRECISION)
    logits = log_w[None, :] + (cross - 0.5 * jnp.sum(means * means, axis=1)) / sigma2
    u = 1.0 - jax.random.uniform(k_z, (n,), dtype)
    labels = categorical_inverse_cdf(logits, u)

    if sigma2_prior is not None:
        sigma2 = _draw_sigma2(k_sigma, X, means, labels, sigma2_prior)
    log_alpha = state.log_alpha
    if alpha_prior is not None:
        a, b = alpha_prior
        rate = b - jnp.sum(log_1mv)
        log_alpha = (jnp.log(jax.random.gamma(k_alpha, a + T - 1.0)) - jnp.log(rate)).astype(dtype)
    zero = jnp.zeros((), jnp.int32)
    info = GibbsInfo(jnp.sum(segment_stats(X, labels, T).weight > 0, dtype=jnp.int32),
                     jnp.any(labels != state.labels), zero, zero)
    return BlockedState(labels, log_w, means, log_alpha, sigma2), info


def _blocked_log_likelihood(X, state: BlockedState):
    return complete_data_log_likelihood(X, state.means, state.labels, state.sigma2)


@functools.partial(jax.jit, static_argnames=("num", "thin"))
def _run_blocked_segment(keys, X, state, rho2, alpha_prior, sigma2_prior, *, num, thin):
    """``num`` recorded draws of ``thin`` blocked sweeps each, for every chain (vmap)."""

    def one_chain(key, state):
        def draw(s, k):
            keys = jax.random.split(k, thin)
            s = lax.fori_loop(
                0, thin,
                lambda t, s_: blocked_sweep(keys[t], X, s_, rho2=rho2, alpha_prior=alpha_prior,
                                            sigma2_prior=sigma2_prior)[0],
                s,
            )
            record = dict(
                labels=recorded_labels(s.labels, s.means.shape[0]),
                log_likelihood=_blocked_log_likelihood(X, s),
                log_alpha=s.log_alpha,
                sigma2=s.sigma2,
                means=s.means,
                weights=jnp.exp(s.log_weights),
                n_clusters=jnp.sum(jnp.bincount(s.labels, length=s.means.shape[0]) > 0),
            )
            return s, record

        return lax.scan(draw, state, jax.random.split(key, num))

    return jax.vmap(one_chain)(keys, state)


def init_blocked_state(X, labels, truncation, log_alpha, sigma2) -> BlockedState:
    """A blocked-sampler state from an initial labelling (components ``0..k-1``): means at
    the cluster means (0 for empty components), weights uniform (both are redrawn before
    the labels in the first sweep, so only ``labels`` matters)."""
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i")
    stats = segment_stats(X, labels, truncation)
    dtype = X.dtype
    return BlockedState(
        labels.astype(jnp.int32),
        jnp.full((truncation,), -jnp.log(truncation), dtype),
        weighted_means(stats),
        jnp.asarray(log_alpha, dtype),
        jnp.asarray(sigma2, dtype),
    )


def init_state(X, labels, capacity, log_alpha, sigma2) -> GibbsState:
    """A chain state from an initial labelling (slots ``0..k-1``), means at the cluster means."""
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i")
    stats = segment_stats(X, labels, capacity)
    means = jnp.where((stats.weight > 0)[:, None], stats.sum / jnp.maximum(stats.weight, 1.0)[:, None], 0.0)
    dtype = X.dtype
    return GibbsState(
        labels.astype(jnp.int32), stats.weight, stats.sum, means,
        jnp.asarray(log_alpha, dtype), jnp.asarray(sigma2, dtype), jnp.asarray(False),
    )


def _init_chains(init, X, labels0, size, log_alpha, sigma2):
    """``init(X, labels, size, log_alpha, sigma2)`` of one labelling ``(n,)``, or of one per
    chain ``(C, n)`` (then every field has a leading chain axis)."""
    labels0 = jnp.asarray(labels0)
    if labels0.ndim == 1:
        return init(X, labels0, size, log_alpha, sigma2)
    return jax.vmap(lambda lab: init(X, lab, size, log_alpha, sigma2))(labels0)


def _grow(state: GibbsState, capacity: int) -> GibbsState:
    pad = capacity - state.counts.shape[-1]
    return state._replace(
        counts=jnp.pad(state.counts, [(0, 0)] * (state.counts.ndim - 1) + [(0, pad)]),
        sums=jnp.pad(state.sums, [(0, 0)] * (state.sums.ndim - 2) + [(0, pad), (0, 0)]),
        means=jnp.pad(state.means, [(0, 0)] * (state.means.ndim - 2) + [(0, pad), (0, 0)]),
        overflow=jnp.zeros_like(state.overflow),
    )


@functools.partial(jax.jit, static_argnames=("num", "thin", "collapsed", "split_merge"))
def _run_segment(keys, X, state, rho2, alpha_prior, sigma2_prior, n_valid=None, *, num, thin,
                 collapsed, split_merge=0):
    """``num`` recorded draws of ``thin`` sweeps each, for every chain (:func:`sweep_chains`).

    Module-level and keyed only on shapes and the static flags, so repeated
    fits (estimator checks, small-variance paths, notebooks) reuse one
    compilation; ``rho2``, the prior parameters and ``n_valid`` are traced values.
    ``n_valid``: the rows of ``X`` that are data, the rest pad it to a shape bucket
    (:func:`~bayesclust.kernels.padded_rows`; label -1, recorded as -1), so that
    every ``n`` of a bucket runs one compiled program.
    """

    def draw(s, k):  # k: (C,) keys, one per chain
        sweep_keys = jax.vmap(lambda k_: jax.random.split(k_, thin))(k)

        def sweep(t, carry):
            s_, acc = carry
            s_, info = _sweep_chains(sweep_keys[:, t], X, s_, rho2=rho2, collapsed=collapsed,
                                     alpha_prior=alpha_prior, sigma2_prior=sigma2_prior,
                                     split_merge=split_merge, n_valid=n_valid)
            return s_, acc + info.split_merge_accepted

        s, accepted = lax.fori_loop(0, thin, sweep, (s, jnp.zeros(s.labels.shape[0], jnp.int32)))
        record = dict(
            split_merge_accepted=accepted,
            labels=recorded_labels(s.labels, s.counts.shape[-1]),
            log_likelihood=jax.vmap(lambda s1: log_likelihood(X, s1, rho2, collapsed, n_valid))(s),
            log_alpha=s.log_alpha,
            sigma2=s.sigma2,
            means=s.means,
            n_clusters=jnp.sum(s.counts > 0, axis=1),
        )
        return s, record

    def xla(keys, X, state, rho2, n_valid):
        # Per chain the same key stream as a one-chain run: num draw keys, each split into thin.
        draw_keys = jax.vmap(lambda k: jax.random.split(k, num))(keys)
        state, records = lax.scan(draw, state, jnp.swapaxes(draw_keys, 0, 1))
        return state, jax.tree.map(lambda r: jnp.swapaxes(r, 0, 1), records)

    if alpha_prior is not None or sigma2_prior is not None or not native_sweep_ok(X):
        return xla(keys, X, state, rho2, n_valid)

    def cpu(keys, X, state, rho2, n_valid):
        # The whole segment in one native call (no per-sweep XLA operations): the
        # same sweeps and mean draws as sweep_chains, the chains' streams seeded
        # once per segment from their keys.
        labels, counts, sums, means, overflow, accepted = _native.gibbs_run_ffi(
            X, state.labels, state.counts, state.sums, state.means, state.log_alpha,
            state.sigma2, rho2, chain_seeds(keys), collapsed=collapsed, num_draws=num,
            thin=thin, split_merge=split_merge, n_valid=n_valid)
        per_draw = lambda v: jnp.broadcast_to(v[:, None], (v.shape[0], num))  # noqa: E731
        draws = GibbsState(labels, counts, sums, means, per_draw(state.log_alpha),
                           per_draw(state.sigma2), jnp.zeros(labels.shape[:2], bool))
        loglik = jax.vmap(jax.vmap(lambda s1: log_likelihood(X, s1, rho2, collapsed, n_valid)))(draws)
        records = dict(split_merge_accepted=accepted,
                       labels=recorded_labels(labels, state.counts.shape[-1]), log_likelihood=loglik,
                       log_alpha=draws.log_alpha, sigma2=draws.sigma2, means=means,
                       n_clusters=jnp.sum(counts > 0, axis=2))
        last = GibbsState(labels[:, -1], counts[:, -1], sums[:, -1], means[:, -1],
                          state.log_alpha, state.sigma2, state.overflow | (overflow != 0))
        return last, records

    return lax.platform_dependent(keys, X, state, rho2, n_valid, cpu=cpu, default=xla)


def gibbs_dp_gmm(
    rng_key,
    X,
    *,
    alpha: float = 1.0,
    log_alpha: float | None = None,
    sigma2: float = 1.0,
    rho2: float = 100.0,
    alpha_prior=None,
    sigma2_prior=None,
    collapsed: bool | None = None,
    num_warmup: int = DP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = DP_SAMPLER_DEFAULTS.num_samples,
    thin: int = DP_SAMPLER_DEFAULTS.thin,
    num_chains: int = DP_SAMPLER_DEFAULTS.num_chains,
    init_labels=None,
    center: bool = True,
    max_clusters: int | None = None,
    scheme: str = "sequential",
    truncation: int | None = None,
    split_merge: int | None = None,
    progress_bar: bool = True,
    mesh=None,
):
    r"""Gibbs sampling of the DP Gaussian mixture; returns a :class:`Posterior`.

    Model (Kulis & Jordan 2012, §2.2): :math:`z \sim \mathrm{CRP}(\alpha)`,
    :math:`\mu_c \sim N(0, \rho^2 I)`, :math:`x_i \sim N(\mu_{z_i}, \sigma^2 I)`,
    optionally :math:`\alpha \sim \mathrm{Gamma}(a, b)` (Escobar & West update)
    and :math:`\sigma^2 \sim \mathrm{InvGamma}(a, b)` (conjugate update).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    alpha : float
        DP concentration (> 0); the initial value when ``alpha_prior`` is given.
    log_alpha : float, optional
        The concentration on the log scale, overriding ``alpha`` (for the
        small-variance regime, where ``alpha_from_lam`` under/overflows; see
        :func:`bayesclust.models.dp_gmm.log_alpha_from_lam`).
    sigma2 : float
        Component **variance** (> 0); the initial value when ``sigma2_prior`` is given.
    rho2 : float
        Prior **variance** of the means (> 0); Kulis & Jordan use 100.
    alpha_prior : numpyro.distributions.Gamma, optional
        Prior on alpha, e.g. ``dist.Gamma(1.0, 1.0)`` (shape, rate), as
        :func:`bayesclust.models.dp_gmm.dp_gmm` takes it; the sampler needs this
        conjugate family (Escobar & West's update).
    sigma2_prior : numpyro.distributions.InverseGamma, optional
        Prior on sigma2, e.g. ``dist.InverseGamma(1.0, 1.0)`` (shape, scale; the
        conjugate family).
    collapsed : bool, optional
        Integrate the means out (Neal's Algorithm 3) instead of Kulis & Jordan's
        Algorithm 2 (whose small-variance limit is DP-means).  Default: True for the
        sequential scheme, False for the blocked one.
    num_warmup, num_samples, thin : int
        Sweeps discarded, draws kept per chain, and sweeps per kept draw.  The defaults
        of this and of ``num_chains``, ``collapsed`` and ``split_merge`` are
        :data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`, shared with
        :class:`bayesclust.DPGaussianMixture` and ``bayesclust compare``.  After
        sampling, a :class:`bayesclust.ConvergenceWarning` is issued when R-hat or bulk
        ESS of ``k`` or of the log-likelihood fails
        :func:`bayesclust.inference.mixtures.convergence.convergence_problems`.
    num_chains : int
        Independent chains, moved together.  The sequential scheme on a CPU: the
        native kernel puts 8 chains (float32; 4 float64) on the lanes of an AVX
        register and the registers on the cores, so up to 8 x cores chains cost about
        as much as one (elsewhere: one ``lax.scan`` with the chains on the vectorised
        axis); the blocked scheme: ``vmap``.
    init_labels : array_like of int, shape (n,) or (num_chains, n), optional
        Initial partition, shared by every chain or one row per chain (e.g. the
        final states of another run, to continue or anneal them); default all
        points in one cluster (Kulis & Jordan §6.2).
    center : bool
        Centre the data first (the prior on the means is centred at 0); the
        returned means are in the original frame.
    max_clusters : int, optional
        Largest buffer the sampler may grow to (default ``n``; sequential scheme).
    scheme : {"sequential", "blocked"}
        ``"sequential"`` (default): Neal's single-site moves over the CRP form
        (Algorithm 2, or 3 when ``collapsed``).  ``"blocked"``: Ishwaran &
        James's (2001) blocked Gibbs sampler of the truncated stick-breaking
        model -- the same program NUTS fits (:func:`bayesclust.models.dp_gmm.dp_gmm`)
        -- which draws the weights, then the means, then all labels in parallel
        (:func:`blocked_sweep`): one vectorised ``O(n T d)`` pass per sweep
        instead of ``n`` sequential steps, so far cheaper per sweep on large
        ``n``.  Its target is the truncated model, whose partition posterior
        differs from the CRP one by the truncation error (Ishwaran & James's
        bound ``~4 n exp(-(T - 1)/alpha)``); a :class:`TruncationWarning` is
        issued when the last component keeps posterior mass
        (:func:`bayesclust.models.dp_gmm.check_truncation`).
    truncation : int, optional
        Number of stick-breaking components ``T`` of the blocked scheme
        (default :data:`bayesclust.models.dp_gmm.DEFAULT_TRUNCATION`).
    split_merge : int, optional
        Sequentially-allocated split-merge moves (Dahl 2003; :func:`split_merge_move`)
        per sweep of the sequential scheme, 0 for none (default: 2 with the collapsed
        sampler, else 0).  Single-site moves open and
        dissolve a cluster one point at a time; a split-merge move does it in one
        step, which is what mixes the number of clusters ``k``.  On a CPU a move
        costs about half a sweep (native kernel) and, at n = 300, one move per
        sweep raises the effective draws of ``k`` per sweep ~1.5x, two ~2.2x.
    progress_bar : bool
    mesh : jax.sharding.Mesh, optional
        Run the chains sharded over the devices of this one-axis mesh, e.g.
        ``Mesh(np.array(jax.devices()), ("chains",))``: each device runs
        ``num_chains / devices`` chains (a whole number, else a ValueError) on its own
        copy of ``X``.  The chains' keys are split before sharding, so the draws are
        the same as without ``mesh`` (the same seed gives the same draws on 1 or 8
        devices).  A multi-process mesh (``jax.distributed``) works as in
        :func:`bayesclust.dp_means`: every process calls with the same arguments and
        receives every chain.

    Returns
    -------
    Posterior
        Label draws (chains, draws, n), ``log_likelihood`` (``log p(X | z, mu,
        sigma2)``, or ``log p(X | z, sigma2)`` when collapsed), params
        ``means`` (slots indexed by the labels), ``alpha``, ``sigma2``; sample stats
        ``n_clusters`` and, with split-merge moves, ``split_merge_acceptance`` (the
        fraction of each draw's ``thin * split_merge`` moves accepted; its mean over a
        chain's draws is the chain's acceptance rate);
        ``kernels`` says whether the sweeps ran in the native kernel
        (``"native"``) or in XLA (``"xla"``; the blocked scheme always).

    References
    ----------
    R. M. Neal (2000), Markov chain sampling methods for Dirichlet process
    mixture models, Algorithms 2 and 3.  B. Kulis and M. I. Jordan (2012), §2.2,
    §3.1.  M. D. Escobar and M. West (1995).  D. B. Dahl (2003), An improved
    merge-split sampler for conjugate Dirichlet process mixture models.
    H. Ishwaran and L. F. James (2001), Gibbs sampling methods for
    stick-breaking priors, JASA 96, 161-173.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.concatenate([np.random.default_rng(0).normal(c, 0.3, (20, 2)) for c in (-2, 2)])
    >>> post = gibbs_dp_gmm(0, X, sigma2=0.09, collapsed=True, split_merge=1,
    ...                     num_warmup=50, num_samples=50, progress_bar=False)
    >>> int(np.bincount(post.n_clusters.ravel()).argmax())
    2
    >>> blocked = gibbs_dp_gmm(0, X, sigma2=0.09, scheme="blocked", num_warmup=50,
    ...                        num_samples=50, progress_bar=False)
    >>> blocked.params["weights"].shape  # (chains, draws, truncation)
    (8, 50, 20)
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    V.check_squares_representable(X, "X")
    if log_alpha is None:
        log_alpha = float(np.log(V.check_positive(alpha, "alpha")))
    else:
        log_alpha = V._check_real_scalar(log_alpha, "log_alpha")
        if not np.isfinite(log_alpha):
            raise ValueError(f"log_alpha must be finite, got {log_alpha!r}")
    sigma2 = V.check_positive(sigma2, "sigma2")
    rho2 = V.check_positive(rho2, "rho2")
    alpha_prior = _prior_params(alpha_prior, "alpha_prior", "gamma")
    sigma2_prior = _prior_params(sigma2_prior, "sigma2_prior", "inverse_gamma")
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    thin = V.check_int(thin, "thin", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    if mesh is not None:
        check_mesh(mesh)
        check_divides(mesh, num_chains, "num_chains")
    if scheme not in ("sequential", "blocked"):
        raise ValueError(f"scheme must be 'sequential' or 'blocked', got {scheme!r}")
    blocked = scheme == "blocked"
    if collapsed is None:  # the default is for the sequential scheme only
        collapsed = False if blocked else DP_SAMPLER_DEFAULTS.collapsed
    if blocked and collapsed:
        raise ValueError("collapsed=True needs scheme='sequential' (the blocked sampler "
                         "draws the means)")
    if split_merge is None:
        # Only with the collapsed sampler: Algorithm 2's single-site moves are the ones
        # whose small-variance limit is DP-means (small_variance_path relies on that).
        split_merge = DP_SAMPLER_DEFAULTS.split_merge if collapsed else 0
    split_merge = V.check_int(split_merge, "split_merge", minimum=0)
    if split_merge and blocked:
        raise ValueError("split_merge is an option of scheme='sequential'")
    if truncation is not None and not blocked:
        raise ValueError("truncation is an argument of scheme='blocked'")
    if blocked:
        truncation = V.check_int(DEFAULT_TRUNCATION if truncation is None else truncation,
                                 "truncation", minimum=2)
    n, d = X.shape
    limit = n if max_clusters is None else min(V.check_int(max_clusters, "max_clusters", minimum=1), n)
    labels0, per_chain = start_labels(init_labels, n, num_chains)
    offset = X.mean(0) if center else np.zeros(d, X.dtype)
    k0 = int(labels0.max()) + 1
    # The sequential scheme pads the rows to a shape bucket (zeros, label -1), so that
    # every n of a bucket runs one compiled program; the first n rows' draws are those
    # of an unpadded run (the padded rows never move, count or draw).
    rows = n if blocked else run_rows(n)
    Xj = jnp.asarray(pad_rows(X - offset, rows))
    labels0 = pad_rows(labels0, rows, axis=-1, value=-1)
    dtype = Xj.dtype
    priors = [None if p is None else tuple(jnp.asarray(v, dtype) for v in p)
              for p in (alpha_prior, sigma2_prior)]
    if not blocked:
        priors.append(jnp.asarray(n, jnp.int32))  # n_valid
    if blocked:
        if k0 > truncation:
            raise ValueError(f"init_labels has {k0} clusters, more than truncation={truncation}")
        state = _init_chains(init_blocked_state, Xj, labels0, truncation, log_alpha, sigma2)
        segment, static = _run_blocked_segment, dict(thin=thin)
        desc = "gibbs (blocked)"
    else:
        # A small buffer keeps every step cheap (its cost is linear in the capacity);
        # it doubles whenever a sweep needs more clusters.
        capacity = max(k0, min(max(8, 2 * k0), limit))
        state = _init_chains(init_state, Xj, labels0, capacity, log_alpha, sigma2)
        segment = _run_segment
        static = dict(thin=thin, collapsed=bool(collapsed), split_merge=split_merge)
        desc = f"gibbs ({'collapsed' if collapsed else 'KJ Alg. 2'})"
    if not per_chain:
        state = jax.tree.map(lambda a: jnp.broadcast_to(a, (num_chains,) + a.shape), state)

    def grow(s):
        nonlocal capacity
        if blocked or capacity >= limit:
            raise RuntimeError(f"the Gibbs sampler needed more than max_clusters={limit} clusters")
        capacity = min(2 * capacity, limit)
        return _grow(s, capacity)

    records, seconds = run_in_segments(
        key, segment_runner(segment, Xj, (jnp.asarray(rho2, dtype), *priors), static, mesh),
        state, num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, thin=thin,
        grow=grow, progress_bar=progress_bar, desc=desc, padded={"means": 2}, mesh=mesh,
        rows=n)

    def cat(name):
        return records[name]

    means = cat("means") + offset
    params = {"means": means, "alpha": np.exp(cat("log_alpha")), "sigma2": cat("sigma2")}
    if blocked:
        params["weights"] = cat("weights")
        check_truncation(params["weights"], stacklevel=2)
        sampler = "gibbs-blocked"
    else:
        sampler = "gibbs-collapsed" if collapsed else "gibbs-kj-alg2"
        sampler += "+split-merge" if split_merge else ""
    sample_stats = {"n_clusters": cat("n_clusters")}
    moves = thin * split_merge if n >= 2 else 0
    if moves:
        # The fraction of the draw's thin * split_merge proposals accepted (its mean over a
        # chain's draws: the chain's acceptance rate).
        sample_stats["split_merge_acceptance"] = cat("split_merge_accepted") / moves
    post = Posterior(
        cat("labels"),
        log_likelihood=cat("log_likelihood"),
        params=params,
        sample_stats=sample_stats,
        sampler=sampler,
        model="dp_gmm",
        kernels="xla" if blocked else sweep_kernels(Xj),
        seconds=seconds,
        copy=False,  # the records are this call's own arrays
    )
    warn_if_not_converged(post)
    return post


def segment_runner(segment, X, params, static, mesh):
    """``run(keys, state, num)`` for :func:`run_in_segments`: the jitted ``segment(keys, X,
    state, *params, num=num, **static)`` of a sampler, or its chains split over ``mesh``
    (:func:`bayesclust.inference._sharding.shard_chains`; ``X`` and ``params`` replicated)."""
    if mesh is None:
        return lambda keys, s, num: segment(keys, X, s, *params, num=num, **static)
    X, params = replicate(mesh, (X, params))
    return lambda keys, s, num: shard_chains(segment, mesh, num=num, **static)(keys, X, s, params)


def run_in_segments(key, run, state, *, num_chains, num_warmup, num_samples, thin, grow,
                    progress_bar, desc, padded=None, label_records=("labels",), mesh=None,
                    rows=None):
    """Drive a jitted ``run(chain_keys, state, num) -> (state, records)`` over a whole run.

    The run is split into segments of equal static length (one compilation)
    for the progress bar; warm-up is rounded up to whole draws of ``thin``
    sweeps.  When a segment ends with ``state.overflow`` set in any chain, the
    state is grown by ``grow(state)`` (which raises when it cannot) and the
    segment is redone from its start with the same keys, so no cluster is
    dropped and the result does not depend on the initial capacity.

    Parameters
    ----------
    padded : dict of str -> int, optional
        Records whose axis (after chains, draws) grows with the buffer; they are
        zero-padded to the final width.
    label_records : tuple of str, default ("labels",)
        Records of integer labels, shape (chains, draws, n): each is written once, segment
        by segment, into one host array of the narrowest integer type that holds its
        values (int8 up to 127 clusters), widened (one copy) only if a later segment needs
        a wider type.  They are the largest arrays of a run (chains x draws x points), so
        no other copy of them is made.
    mesh : jax.sharding.Mesh, optional
        The chains are split over this one-axis mesh: ``state`` and every segment's chain
        keys are sharded (:func:`~bayesclust.inference._sharding.shard_leading`) after the
        keys are split, so that ``run`` (from :func:`segment_runner`) sees the keys of a
        single-device run; the records are gathered on every process.
    rows : int, optional
        The label records keep their first ``rows`` points (default all): the run's
        data were padded to a shape bucket past them.

    Returns
    -------
    records : dict of str -> ndarray, shape (chains, num_samples, ...)
        The kept draws.
    seconds : float
        Wall-clock time of the run (compilation included).
    """
    n_warm_draws = -(-num_warmup // thin)
    total_draws = n_warm_draws + num_samples
    seg_len = -(-total_draws // max(1, min(20, total_draws // 10)))
    n_segments = -(-total_draws // seg_len)
    progress = _Progress(total_draws * thin, progress_bar, desc)
    parts = []  # the kept draws of each segment, but the labels
    labels = {}  # name -> (host array (chains, num_samples, ...), its lowest and highest label)
    filled = 0
    seg_keys = jax.random.split(key, n_segments)
    if mesh is not None:
        axis = check_mesh(mesh)
        state = shard_leading(mesh, axis, state)

    def launch(j, state):
        chain_keys = jax.random.split(seg_keys[j], num_chains)
        if mesh is not None:
            chain_keys = shard_leading(mesh, axis, chain_keys)
        return chain_keys, state, run(chain_keys, state, seg_len)

    t0 = time.perf_counter()
    try:
        j, current = 0, launch(0, state)
        while j < n_segments:
            chain_keys, state, (new_state, rec) = current
            # Segment j + 1 is dispatched before segment j is checked, so that the
            # host's copying of j's records overlaps j + 1's sweeps (JAX runs them
            # asynchronously); it is dropped if j overflowed.
            ahead = launch(j + 1, new_state) if j + 1 < n_segments else None
            if bool(to_host(jnp.any(getattr(new_state, "overflow", False)))):
                state = grow(state)
                current = (chain_keys, state, run(chain_keys, state, seg_len))
                continue
            lo = max(n_warm_draws - j * seg_len, 0)
            hi = min(n_warm_draws + num_samples - j * seg_len, seg_len)
            if lo < hi:  # warm-up segments' records are never copied out
                parts.append({name: to_host(v[:, lo:hi]) for name, v in rec.items()
                              if name not in label_records})
                for name in label_records:
                    labels[name] = _write_labels(labels.get(name), rec[name][:, lo:hi],
                                                 filled, num_samples, rows)
                filled += hi - lo
            progress.update(seg_len * thin)
            j, current = j + 1, ahead
    finally:
        progress.close()
    seconds = time.perf_counter() - t0
    for name, axis in (padded or {}).items():
        width = max(r[name].shape[axis] for r in parts)
        for r in parts:
            pad = [(0, 0)] * r[name].ndim
            pad[axis] = (0, width - r[name].shape[axis])
            r[name] = np.pad(r[name], pad)
    records = {name: np.concatenate([p[name] for p in parts], axis=1) for name in parts[0]}
    records.update({name: buf for name, (buf, _, _) in labels.items()})
    return records, seconds


def _write_labels(held, block, start: int, num_samples: int, rows: int | None = None):
    """Write a segment's label draws ``block`` (device array, (chains, m, ...)) at draw
    ``start`` of the host array of ``held = (array, low, high)`` (None: make it); returns
    the new ``held``.  The array has the narrowest integer type holding every label so
    far (:func:`~bayesclust.inference.mixtures._common.label_dtype`) and is widened when
    a label outgrows it.  ``rows``: only the first ``rows`` points are kept (the
    rest pad the run's data, label -1)."""
    low, high = int(to_host(jnp.min(block))), int(to_host(jnp.max(block)))
    if held is not None:
        low, high = min(low, held[1]), max(high, held[2])
    dtype = np.dtype(label_dtype(low, high))
    width = block.shape[2:] if rows is None else (rows,) + block.shape[3:]
    if held is None:
        buf = np.empty(block.shape[:1] + (num_samples,) + width, dtype)
    else:
        buf = held[0]
        if dtype.itemsize > buf.dtype.itemsize:
            buf = buf.astype(dtype)
    # Narrowed on the device, so that the host receives the stored width only.
    buf[:, start:start + block.shape[1]] = to_host(block.astype(buf.dtype))[:, :, :rows]
    return buf, low, high


class _Progress:
    """tqdm progress bar when available and wanted, else silent."""

    def __init__(self, total, enabled, desc):
        self.bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="sweep", leave=False)
            except ImportError:  # pragma: no cover
                self.bar = None

    def update(self, k):
        if self.bar is not None:
            self.bar.update(k)

    def close(self):
        if self.bar is not None:
            self.bar.close()

