r"""Gibbs sampler in JAX for the HDP Gaussian mixture (Chinese restaurant franchise).

The model (Teh et al. 2006; Kulis & Jordan 2012, §4): data sets ("restaurants")
``j = 1..D`` share global clusters ("dishes") with means
:math:`\mu_p \sim N(0, \rho^2 I)`; each data set groups its points into local
clusters ("tables"), each serving one dish; :math:`x_{ij} \sim N(\mu_{v_j
z_{ij}}, \sigma^2 I)`.  Tables follow a CRP(:math:`\alpha`) in every data set and
dishes a CRP(:math:`\gamma`) over all tables.

The sampler is the CRF scheme with instantiated dish means -- Neal's Algorithm
2 applied at both levels, as Kulis & Jordan write the DP sampler -- so that the
local/global structure of the hard Gaussian HDP (:func:`bayesclust.hard_hdp`)
is explicit and its small-variance limit is visible:

* **points** (:func:`point_log_weights`): a point ``x`` of data set ``j``,
  removed from its table, sits at

  - an existing table ``t`` of ``j`` serving dish ``p``: :math:`\propto n_{jt}\,
    N(x \mid \mu_p, \sigma^2 I)`;
  - a new table serving existing dish ``p``: :math:`\propto \alpha\,
    \frac{m_p}{m + \gamma} N(x \mid \mu_p, \sigma^2 I)`;
  - a new table with a new dish: :math:`\propto \alpha \frac{\gamma}{m +
    \gamma} N(x \mid 0, (\rho^2 + \sigma^2) I)`, whose mean is drawn from its
    posterior given ``x``;

  (:math:`m_p` tables serve dish ``p``, :math:`m = \sum_p m_p`);
* **tables** (:func:`table_log_weights`): a table with points ``S`` (size
  :math:`n_S`, mean :math:`\bar x_S`, scatter :math:`SSE_S`), removed from its
  dish, serves existing dish ``p`` :math:`\propto m_p \prod_{x \in S} N(x \mid
  \mu_p, \sigma^2 I)` or a new dish :math:`\propto \gamma \int \prod_{x\in S}
  N(x \mid \mu, \sigma^2 I) \, N(\mu \mid 0, \rho^2 I) d\mu`, whose mean is
  drawn from its posterior given ``S``;
* **split-merge** (:func:`split_merge_move`, ``split_merge`` per sweep): two points
  of one data set; at one table, its points split by sequential allocation (Dahl
  2003) between that table and a new table on a new dish; else, when the second
  point's table is alone on its dish, the reverse merge; Metropolis-Hastings with
  the dish means integrated out (Jain & Neal 2004; Wang & Blei 2012).  Single-point
  moves split a cluster only through states of low probability (one point alone on a
  new dish first): on iris the move raises the bulk ESS of ``k`` about fourfold;
* **means**: every dish mean from its Gaussian posterior given all its points (after
  the split-merge moves, which leave them stale: the pair of steps keeps the joint
  posterior invariant).

With :math:`\alpha = e^{-\lambda_\ell / (2\sigma^2)}` and :math:`\gamma = (1 +
\rho^2/\sigma^2)^{d/2} e^{-\lambda_g/(2\sigma^2)}`
(:func:`bayesclust.models.hdp_gmm.hdp_log_concentrations_from_lam`) and
:math:`\sigma^2 \to 0`, the point weights become the costs :math:`\|x -
\mu_p\|^2`, :math:`\lambda_\ell + \|x - \mu_p\|^2` and :math:`\lambda_\ell +
\lambda_g` of step 4 of Kulis & Jordan's Algorithm 2, and the table weights
the costs :math:`\sum_{x \in S} \|x - \mu_p\|^2` and :math:`\lambda_g +
SSE_S` of its step 5 (our derivation: docs/deviations.md#hdp-concentration-map).

Tables and dishes live in fixed-capacity buffers with masks; chains run with ``vmap``;
buffers grow (the segment is redone) when full.  On a CPU the point, table and split-merge
moves of a sweep are one call of a native kernel (:func:`bayesclust._native.hdp_crf_moves_ffi`,
every chain at once, its numbers from a per-chain stream); elsewhere (or with
``BAYESCLUST_NATIVE=0``) a sweep is one ``lax.scan`` over the points and one over the table
slots, then the split-merge moves, jit-compiled.  The two paths make the same point and
table moves from the same numbers; the means and hyper-parameters are drawn in XLA on both.

References
----------
Y. W. Teh, M. I. Jordan, M. J. Beal and D. M. Blei (2006), Hierarchical
Dirichlet processes, JASA 101, 1566-1581, §5.1 and Appendix A.
B. Kulis and M. I. Jordan (2012), Revisiting k-means, ICML, §4.
R. M. Neal (2000), JCGS 9(2), 249-265, Algorithm 2.
D. B. Dahl (2003), An improved merge-split sampler for conjugate Dirichlet process
mixture models, Technical Report 1086, University of Wisconsin-Madison.
S. Jain and R. M. Neal (2004), A split-merge Markov chain Monte Carlo procedure for the
Dirichlet process mixture model, JCGS 13(1), 158-182, §3.
C. Wang and D. M. Blei (2012), A split-merge MCMC algorithm for the hierarchical
Dirichlet process, arXiv:1201.1657, §3.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _native
from ... import _validation as V
from ...kernels import (
    categorical_inverse_cdf,
    complete_data_log_likelihood,
    segment_stats,
    squared_norms,
)
from .._driver import pow2_at_least
from ._common import (
    _draw_means,
    _draw_sigma2,
    _log_normal_iso,
    _prior_params,
    _propose_split_merge,
    _update_log_alpha,
    native_sweep_ok,
    pad_rows,
    run_rows,
    scan_rows,
    sweep_kernels,
)
from .convergence import HDP_SAMPLER_DEFAULTS, warn_if_not_converged
from .gibbs import run_in_segments

__all__ = [
    "gibbs_hdp_gmm",
    "HDPState",
    "HDPInfo",
    "hdp_sweep",
    "init_hdp_state",
    "point_log_weights",
    "table_log_weights",
    "split_merge_move",
]


class HDPState(NamedTuple):
    """State of one chain of the CRF sampler.

    Attributes
    ----------
    tables : int32 (n,)
        Table slot of every point inside its data set (``0..L-1``).
    table_counts : float (D, L)
        Points at each table of each data set (0: free slot).
    table_dish : int32 (D, L)
        Dish (global cluster) slot served at each table.
    dish_tables : float (P,)
        :math:`m_p`, tables serving each dish (0: free slot).
    means : float (P, d)
        Dish means.
    log_alpha, log_gamma, sigma2 : float scalars
        Concentrations (log scale) and the component variance.
    overflow : bool
        A table or dish was needed but its buffer was full (the sweep is invalid).
    """

    tables: jax.Array
    table_counts: jax.Array
    table_dish: jax.Array
    dish_tables: jax.Array
    means: jax.Array
    log_alpha: jax.Array
    log_gamma: jax.Array
    sigma2: jax.Array
    overflow: jax.Array

    def dishes(self, gid) -> jax.Array:
        """Global cluster (dish slot) of every point, ``table_dish[gid, tables]`` (-1 for a
        row with table -1: a row padding the data to a shape bucket)."""
        return jnp.where(self.tables >= 0, self.table_dish[gid, self.tables], -1)


class HDPInfo(NamedTuple):
    """What one :func:`hdp_sweep` reports (the sweeps' shape of
    :class:`~bayesclust.inference.mixtures.gibbs.GibbsInfo`: no objective, a Markov chain
    optimises nothing).

    Attributes
    ----------
    n_clusters : int32 scalar
        Dishes (global clusters) served after the sweep.
    changed : bool scalar
        The sweep moved at least one point to another dish slot.
    n_local : int32 scalar
        Occupied tables (local clusters) of all data sets after the sweep.
    split_merge_accepted : int32 scalar
        Split-merge moves (:func:`split_merge_move`) accepted in the sweep.
    """

    n_clusters: jax.Array
    changed: jax.Array
    n_local: jax.Array
    split_merge_accepted: jax.Array


def point_log_weights(x, group, state: HDPState, log_new):
    r"""Unnormalised log probabilities of a point's seats, shape ``(L + P + 1,)``.

    The point must already be removed from its table.  Entries ``0..L-1``: the
    tables of its data set ``group`` (``-inf`` for free slots);
    ``L..L+P-1``: a new table serving dish ``p``; ``L+P``: a new table with a new
    dish.  ``log_new = log N(x | 0, (rho2 + sigma2) I)``.  See the module
    docstring for the three cases (Teh et al. 2006, eqs. 31-32).
    """
    d = x.shape[-1]
    sq = jnp.sum((x - state.means) ** 2, axis=1)
    log_f = jnp.where(state.dish_tables > 0, _log_normal_iso(sq, state.sigma2, d), -jnp.inf)
    counts = state.table_counts[group]
    log_tables = jnp.where(
        counts > 0, jnp.log(jnp.maximum(counts, 1.0)) + log_f[state.table_dish[group]], -jnp.inf)
    log_m_plus_gamma = jnp.logaddexp(jnp.log(jnp.sum(state.dish_tables)), state.log_gamma)
    log_old_dish = state.log_alpha + jnp.log(state.dish_tables) - log_m_plus_gamma + log_f
    log_new_dish = state.log_alpha + state.log_gamma - log_m_plus_gamma + log_new
    return jnp.concatenate([log_tables, log_old_dish, log_new_dish[None]])


def table_log_weights(count, total, scatter, state: HDPState, rho2):
    r"""Unnormalised log probabilities of a table's dish, shape ``(P + 1,)``.

    The table (``count`` points with sum ``total`` and scatter ``scatter =
    sum |x - xbar|^2``) must already be removed from its dish.  Entries ``0..P-1``:
    existing dish ``p``, :math:`\log m_p - \frac{1}{2\sigma^2}(SSE_S + n_S
    \|\bar x_S - \mu_p\|^2)`; entry ``P``: a new dish, :math:`\log\gamma +
    \frac d2 \log\frac{\sigma^2}{\sigma^2 + n_S\rho^2} - \frac{SSE_S}{2\sigma^2}
    - \frac{n_S \|\bar x_S\|^2}{2(\sigma^2 + n_S \rho^2)}` (the factor
    :math:`(2\pi\sigma^2)^{-n_S d/2}` common to all entries is dropped).
    """
    d = total.shape[-1]
    s2 = state.sigma2
    xbar = total / jnp.maximum(count, 1.0)
    sq = jnp.sum((xbar - state.means) ** 2, axis=1)
    log_old = jnp.where(state.dish_tables > 0,
                        jnp.log(state.dish_tables) - (scatter + count * sq) / (2.0 * s2), -jnp.inf)
    log_new = (state.log_gamma + 0.5 * d * jnp.log(s2 / (s2 + count * rho2))
               - scatter / (2.0 * s2) - count * jnp.sum(xbar * xbar) / (2.0 * (s2 + count * rho2)))
    return jnp.append(log_old, log_new)


def _first_free(occupied):
    return jnp.argmin(occupied > 0).astype(jnp.int32)


def _scan_points(X, gid, rho2, state: HDPState, u, z, n_valid=None):
    """Every point in order: leave its table, pick a seat (:func:`point_log_weights`).
    ``n_valid`` (traced, optional): the rows past it pad ``X`` (table -1) and are skipped."""
    d = X.shape[1]
    T, P = state.table_counts.shape[1], state.dish_tables.shape[0]
    s2 = state.sigma2
    log_new = _log_normal_iso(squared_norms(X), rho2 + s2, d)
    shrink = rho2 / (rho2 + s2)
    new_means = shrink * X + jnp.sqrt(s2 * shrink) * z

    def step(s: HDPState, inp):
        x, j, old, u_i, ln_i, nm_i = inp
        left = s.table_counts[j, old] - 1.0
        dish_tables = s.dish_tables.at[s.table_dish[j, old]].add(jnp.where(left == 0, -1.0, 0.0))
        s = s._replace(table_counts=s.table_counts.at[j, old].set(left), dish_tables=dish_tables)
        choice = categorical_inverse_cdf(point_log_weights(x, j, s, ln_i), u_i)
        new_table = choice >= T
        new_dish = choice == T + P
        free_t = _first_free(s.table_counts[j])
        free_p = _first_free(s.dish_tables)
        overflow = s.overflow | (new_table & (s.table_counts[j, free_t] > 0)) | (
            new_dish & (s.dish_tables[free_p] > 0))
        dish = jnp.where(new_dish, free_p, choice - T).astype(jnp.int32)
        table = jnp.where(new_table, free_t, choice).astype(jnp.int32)
        s = s._replace(
            table_counts=s.table_counts.at[j, table].add(1.0),
            table_dish=jnp.where(new_table, s.table_dish.at[j, table].set(dish), s.table_dish),
            dish_tables=jnp.where(new_table, s.dish_tables.at[dish].add(1.0), s.dish_tables),
            means=jnp.where(new_dish, s.means.at[dish].set(nm_i), s.means),
            overflow=overflow,
        )
        return s, table

    state, tables = scan_rows(step, state, (X, gid, state.tables, u, log_new, new_means), n_valid,
                              out=state.tables)
    return state._replace(tables=tables)


def _table_stats(X, flat_tables, T):
    """Count, sum and scatter ``sum |x - xbar|^2`` of every table slot (two passes, no cancellation)."""
    stats = segment_stats(X, flat_tables, T)
    xbar = stats.sum / jnp.maximum(stats.weight, 1.0)[:, None]
    scatter = jax.ops.segment_sum(jnp.sum((X - xbar[flat_tables]) ** 2, axis=1), flat_tables, T)
    return stats.weight, stats.sum, scatter


def _scan_tables(X, gid, rho2, state: HDPState, u, z):
    """Every table slot (data sets in order, slots in order): leave its dish, pick one
    (:func:`table_log_weights`); free slots are skipped."""
    D, L = state.table_counts.shape
    P = state.dish_tables.shape[0]
    s2 = state.sigma2
    count, total, scatter = _table_stats(X, gid * L + state.tables, D * L)
    flat_dish = state.table_dish.reshape(-1)

    def step(carry, inp):
        s, flat_dish = carry
        t, n_t, s_t, sse_t, u_t, z_t = inp
        occupied = n_t > 0
        old = flat_dish[t]
        s = s._replace(dish_tables=s.dish_tables.at[old].add(jnp.where(occupied, -1.0, 0.0)))
        choice = categorical_inverse_cdf(table_log_weights(n_t, s_t, sse_t, s, rho2), u_t)
        new_dish = choice == P
        free_p = _first_free(s.dish_tables)
        dish = jnp.where(new_dish, free_p, choice).astype(jnp.int32)
        post_var = s2 * rho2 / (s2 + n_t * rho2)
        mean = rho2 * s_t / (s2 + n_t * rho2) + jnp.sqrt(post_var) * z_t
        dish = jnp.where(occupied, dish, old)
        opened = occupied & new_dish
        flat_dish = flat_dish.at[t].set(dish)
        s = s._replace(
            dish_tables=s.dish_tables.at[dish].add(jnp.where(occupied, 1.0, 0.0)),
            means=jnp.where(opened, s.means.at[dish].set(mean), s.means),
            overflow=s.overflow | (opened & (s.dish_tables[free_p] > 0)),
        )
        return (s, flat_dish), None

    slots = jnp.arange(D * L, dtype=jnp.int32)
    (state, flat_dish), _ = lax.scan(step, (state, flat_dish), (slots, count, total, scatter, u, z))
    return state._replace(table_dish=flat_dish.reshape(D, L))


def _crf_moves(key, keys, X, gid, rho2, state: HDPState, *, split_merge, max_group_size,
               n_valid=None):
    """The point moves (:func:`_scan_points`), the table moves (:func:`_scan_tables`), then
    ``split_merge`` moves (:func:`split_merge_move`); returns the state and the moves accepted.
    ``n_valid`` (traced, optional): the rows past it pad ``X`` (group and table -1) and
    are skipped on both paths.

    On a CPU with the native kernels :func:`~bayesclust._native.enabled`, one call of
    :func:`bayesclust._native.hdp_crf_moves_ffi` (the same moves, in double precision;
    under ``vmap`` every chain in one call, shared out to XLA's threads), its numbers from
    a stream seeded by ``jax.random.bits(keys[0])``; elsewhere the two XLA scans on
    uniforms and normals drawn with ``jax.random`` from ``keys[0..3]`` and the XLA moves
    from ``fold_in(key, ...)``.  The two paths make the same point and table moves from
    the same numbers (tested), so a run is reproducible from its key on either, but their
    random streams differ.
    """
    n, d = X.shape
    T = state.table_counts.size
    dtype = X.dtype

    def xla(X, gid, rho2, state, key, keys):
        state = _scan_points(X, gid, rho2, state, 1.0 - jax.random.uniform(keys[0], (n,), dtype),
                             jax.random.normal(keys[1], (n, d), dtype), n_valid)
        # The point scan's running counts are exact small integers; the table step needs
        # per-table statistics, computed in bulk.
        state = _scan_tables(X, gid, rho2, state,
                             1.0 - jax.random.uniform(keys[2], (T,), dtype),
                             jax.random.normal(keys[3], (T, d), dtype))
        accepted = jnp.zeros((), jnp.int32)
        if split_merge:
            def move(t, carry):
                s, acc = carry
                s, ok = split_merge_move(jax.random.fold_in(key, 0x5EED + t), X, gid, s, rho2,
                                         max_group_size=max_group_size, n_valid=n_valid)
                return s, acc + ok.astype(jnp.int32)

            state, accepted = lax.fori_loop(0, split_merge, move, (state, accepted))
        return state, accepted

    if not native_sweep_ok(X):
        return xla(X, gid, rho2, state, key, keys)

    def cpu(X, gid, rho2, state, key, keys):
        tables, counts, table_dish, dish_tables, means, overflow, accepted = (
            _native.hdp_crf_moves_ffi(
                X, gid, rho2, state.tables, state.table_counts, state.table_dish,
                state.dish_tables, state.means, state.log_alpha, state.log_gamma, state.sigma2,
                jax.random.bits(keys[0], (2,), jnp.uint32), n if n_valid is None else n_valid,
                split_merge=split_merge))
        return state._replace(tables=tables, table_counts=counts, table_dish=table_dish,
                              dish_tables=dish_tables, means=means,
                              overflow=state.overflow | (overflow != 0)), accepted

    return _native.platform_dependent(X, gid, rho2, state, key, keys, cpu=cpu, default=xla)


def _log_marginal(count, total, sigma2, rho2, d):
    r"""``log int prod N(x | mu, sigma2 I) N(mu | 0, rho2 I) dmu`` of ``count`` points of sum
    ``total``, up to the terms that add over the points (equal for every partition of a
    set): :math:`\frac d2 \log\frac{\sigma^2}{\sigma^2 + n\rho^2} + \frac{\rho^2
    \|S\|^2}{2\sigma^2(\sigma^2 + n\rho^2)}` (0 for no points)."""
    v = sigma2 + count * rho2
    return 0.5 * d * jnp.log(sigma2 / v) + rho2 * jnp.sum(total * total, axis=-1) / (2.0 * sigma2 * v)


def _log_predictive(x, count, total, sigma2, rho2, d):
    """``log N(x | m, (sigma2 + s2) I)``: the posterior predictive of a dish mean given
    ``count`` points of sum ``total`` (``s2 = (1/rho2 + count/sigma2)^-1``, ``m = s2 total / sigma2``)."""
    s2 = 1.0 / (1.0 / rho2 + count / sigma2)
    return _log_normal_iso(jnp.sum((x - s2 * total / sigma2) ** 2, axis=-1), sigma2 + s2, d)


def split_merge_move(key, X, gid, state: HDPState, rho2, *, max_group_size, n_valid=None):
    r"""One split-merge move of a table and its dish (sequential allocation), means integrated out.

    A point ``i`` is drawn uniformly, and a point ``j`` uniformly among the other points
    of its data set (a proposal that does not depend on the state).  When both sit at
    one table ``T`` (serving dish ``p``), the move proposes to split ``T`` into ``A``
    (keeps ``i`` and dish ``p``) and a new table ``B`` (``j``) serving a **new** dish,
    allocating the other points of ``T`` one at a time in a random order by Dahl's
    (2003) sequential allocation, with weight :math:`|A|\, p(x \mid R \cup A)` and
    :math:`|B|\, p(x \mid B)` (:math:`R`: the other points of dish ``p``, at its other
    tables; :math:`p(\cdot \mid \cdot)` the posterior predictive of a dish mean).  When
    ``j``'s table is the only table of its dish and ``i``'s table serves another dish,
    it proposes the reverse merge; otherwise nothing.  Metropolis-Hastings accepts with
    the ratio of the collapsed posterior (Jain & Neal 2004, §3; the dish level of Wang &
    Blei 2012, §3, with one table moved): a split multiplies the CRF's prior by
    :math:`\alpha\, \Gamma(n_A)\Gamma(n_B) / \Gamma(n_A + n_B)` (tables of the data set)
    times :math:`\gamma / (\gamma + m)` (dishes of the :math:`m` other tables) and the
    likelihood by :math:`m(R \cup A)\, m(B) / m(R \cup A \cup B)` (means integrated out,
    :func:`_log_marginal`).

    The dish means are stale afterwards: the caller draws them from their posterior
    given the new seating (:func:`hdp_sweep` does), so that the pair of steps leaves the
    joint posterior invariant (the move targets the seating's marginal).  With a single
    data set each dish typically has one table: the move is then the DP mixture's
    split-merge of the clusters (Jain & Neal 2004), which single-point moves cross only
    through low-probability states.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    gid : int array, shape (n,)
    state : HDPState
    rho2 : float
    max_group_size : int (static)
        At least the largest data set's size (the allocation scans that many slots).
    n_valid : int or traced int scalar, optional
        The rows past it pad ``X`` to a shape bucket (group and table -1): ``i`` is drawn
        among the first ``n_valid``, and the move is an unpadded call's.

    Returns
    -------
    state : HDPState
        ``overflow`` set (nothing moved) when a split needed a table or dish slot and its
        buffer was full.
    accepted : bool scalar
    """
    n, d = X.shape
    D, L = state.table_counts.shape
    P = state.dish_tables.shape[0]
    dtype = X.dtype
    s2 = state.sigma2
    m_g = max_group_size
    # All the move's randomness in one draw of bits (one generator in the program, not
    # one per number: the move's compilation was most of the sampler's): the pair, the
    # acceptance, then the visiting order's and the allocation's number of every slot,
    # interleaved, so that a larger max_group_size draws the same numbers for the first
    # slots (JAX's partitionable bits: a longer draw extends a shorter one).
    bits = jax.random.bits(key, (3 + 2 * m_g,), jnp.uint32)
    unit = (bits >> 8).astype(dtype) * (1.0 / (1 << 24))  # on [0, 1), 24 bits
    n_pair = jnp.asarray(n if n_valid is None else n_valid, jnp.uint32)
    i = (bits[0] % n_pair).astype(jnp.int32)
    g = gid[i]
    in_g = gid == g
    n_g = jnp.sum(in_g)
    # j uniform among the other points of i's data set: its rank there, skipping i's.
    rank = jnp.cumsum(in_g) - 1
    r = (bits[1] % jnp.maximum(n_g - 1, 1).astype(jnp.uint32)).astype(rank.dtype)
    r = r + (r >= rank[i])
    j = jnp.argmax(in_g & (rank == r)).astype(i.dtype)
    # The data set's points, gathered into max_group_size slots (the rest: label -1).
    rows = jnp.zeros(m_g, jnp.int32).at[jnp.where(in_g, rank, m_g)].set(
        jnp.arange(n, dtype=jnp.int32), mode="drop")
    valid = jnp.arange(m_g) < n_g
    Xg = jnp.where(valid[:, None], X[rows], 0.0)
    labels = jnp.where(valid, state.tables[rows], -1)
    ti, tj = state.tables[i], state.tables[j]
    pi, pj = state.table_dish[g, ti], state.table_dish[g, tj]
    dishes = state.dishes(gid)
    dish_n = jax.ops.segment_sum(jnp.ones(n, dtype), dishes, P)
    dish_s = jax.ops.segment_sum(X, dishes, P)
    table_n = state.table_counts[g, ti]
    table_s = jnp.sum(jnp.where((in_g & (state.tables == ti))[:, None], X, 0.0), axis=0)
    # R: the points of i's dish at its other tables (they stay with side A).
    r_n, r_s = dish_n[pi] - table_n, dish_s[pi] - table_s

    def side(x):
        return jnp.ones((), dtype), x

    def log_weights(a, b, x):
        w_a = jnp.log(a[0]) + _log_predictive(x, r_n + a[0], r_s + a[1], s2, rho2, d)
        w_b = jnp.log(b[0]) + _log_predictive(x, b[0], b[1], s2, rho2, d)
        return w_b - w_a

    def add(a, b, x, to_a, to_b):
        return ((a[0] + to_a, a[1] + jnp.where(to_a, x, 0.0)),
                (b[0] + to_b, b[1] + jnp.where(to_b, x, 0.0)))

    li = jnp.argmax(rows == i)
    lj = jnp.argmax(rows == j)
    prop = _propose_split_merge(None, Xg, labels, side, log_weights, add, pair=(li, lj),
                                uniforms=(unit[3::2], 1.0 - unit[4::2]))
    (n_a, s_a), (n_b, s_b) = prop.a, prop.b
    m_merge = jnp.sum(state.dish_tables) - jnp.where(prop.split, 0.0, 1.0)
    log_ratio = (state.log_alpha + lax.lgamma(n_a) + lax.lgamma(n_b) - lax.lgamma(n_a + n_b)
                 + state.log_gamma - jnp.logaddexp(state.log_gamma, jnp.log(m_merge))
                 + _log_marginal(r_n + n_a, r_s + s_a, s2, rho2, d)
                 + _log_marginal(n_b, s_b, s2, rho2, d)
                 - _log_marginal(r_n + n_a + n_b, r_s + s_a + s_b, s2, rho2, d))
    possible = (n_g >= 2) & jnp.where(prop.split, True,
                                      (pi != pj) & (state.dish_tables[pj] == 1.0))
    log_acc = jnp.where(prop.split, log_ratio - prop.log_q, prop.log_q - log_ratio)
    accept = possible & (jnp.log(1.0 - unit[2]) < log_acc)
    free_t = _first_free(state.table_counts[g])
    free_p = _first_free(state.dish_tables)
    full = (state.table_counts[g, free_t] > 0) | (state.dish_tables[free_p] > 0)
    do_split = accept & prop.split & ~full
    do_merge = accept & ~prop.split
    # The slots past the data set's n_g points hold row 0 (the gather's filler): they
    # scatter nowhere, or they could overwrite row 0's own allocation.
    to_b = jnp.zeros(n, bool).at[jnp.where(valid, rows, n)].set(prop.to_b, mode="drop")
    tables = jnp.where(do_split & to_b, free_t, state.tables)
    tables = jnp.where(do_merge & in_g & (state.tables == tj), ti, tables)
    table_dish = jnp.where(do_split, state.table_dish.at[g, free_t].set(free_p), state.table_dish)
    dish_tables = state.dish_tables.at[free_p].add(jnp.where(do_split, 1.0, 0.0))
    dish_tables = dish_tables.at[pj].add(jnp.where(do_merge, -1.0, 0.0))
    counts = jax.ops.segment_sum(jnp.ones(n, dtype), gid * L + tables, D * L).reshape(D, L)
    state = state._replace(tables=tables, table_counts=counts, table_dish=table_dish,
                           dish_tables=dish_tables,
                           overflow=state.overflow | (accept & prop.split & full))
    return state, do_split | do_merge


def _update_log_alpha_hdp(key, log_alpha, tables_per_group, points_per_group, prior):
    """Teh et al. (2006, Appendix A) auxiliary-variable update of alpha ~ Gamma(a, b).

    ``w_j ~ Beta(alpha + 1, n_j)``, ``s_j ~ Bernoulli(n_j / (n_j + alpha))``, then
    ``alpha ~ Gamma(a + m - sum s_j, b - sum log w_j)`` (``m`` tables in all).
    """
    a, b = prior
    alpha = jnp.exp(log_alpha)
    k_w, k_s, k_g = jax.random.split(key, 3)
    w = jax.random.beta(k_w, alpha + 1.0, points_per_group)
    s = jax.random.uniform(k_s, points_per_group.shape) < points_per_group / (points_per_group + alpha)
    shape = a + jnp.sum(tables_per_group) - jnp.sum(s)
    rate = b - jnp.sum(jnp.log(w))
    return jnp.log(jax.random.gamma(k_g, shape)) - jnp.log(rate)


def hdp_sweep(key, X, gid, state: HDPState, *, rho2, n_groups, alpha_prior=None, gamma_prior=None,
              sigma2_prior=None, split_merge=0, max_group_size=None, n_valid=None):
    """One sweep: every point, every table, ``split_merge`` split-merge moves, the dish
    means, then the hyper-parameters.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
        Points, data set by data set (``gid`` non-decreasing is not required).
    gid : int array, shape (n,)
        Data set of every point, ``0..n_groups-1``.
    state : HDPState
    rho2 : float
        Prior variance of the dish means.
    n_groups : int (static)
    alpha_prior, gamma_prior, sigma2_prior : (a, b) arrays or None
        The parameters of the priors: Gamma(shape, rate) on ``alpha`` and
        ``gamma``, InverseGamma(shape, scale) on ``sigma2``, as
        :func:`gibbs_hdp_gmm` reads them from its NumPyro distributions.
    split_merge : int (static)
        :func:`split_merge_move` moves after the table moves (0: none).
    max_group_size : int (static), optional
        The largest data set's size (default ``n``), for :func:`split_merge_move`.
    n_valid : int or traced int scalar, optional
        Only the first ``n_valid`` rows are data (default all); the rest pad ``X`` to a
        shape bucket (zeros, group and table -1), never move and count nowhere, so that
        every ``n`` of a bucket runs one compiled program with an unpadded run's draws.

    Returns
    -------
    state : HDPState
    info : HDPInfo
        The dishes and tables in use after the sweep and whether a point changed dish.
    """
    n, d = X.shape
    before = state.dishes(gid)
    P = state.dish_tables.shape[0]
    keys = jax.random.split(key, 8)
    dtype = X.dtype
    state, accepted = _crf_moves(key, keys[:4], X, gid, rho2, state, split_merge=split_merge,
                                 max_group_size=max_group_size or n, n_valid=n_valid)
    dishes = state.dishes(gid)
    stats = segment_stats(X, dishes, P)
    means = _draw_means(keys[4], stats.weight, stats.sum, state.sigma2, rho2)
    state = state._replace(means=jnp.where((state.dish_tables > 0)[:, None], means, 0.0))
    if sigma2_prior is not None:
        state = state._replace(sigma2=_draw_sigma2(keys[5], X, state.means, dishes, sigma2_prior,
                                                   n_valid))
    if gamma_prior is not None:
        k = jnp.sum(state.dish_tables > 0)
        m = jnp.sum(state.dish_tables)
        state = state._replace(
            log_gamma=_update_log_alpha(keys[6], state.log_gamma, k, m, gamma_prior).astype(dtype))
    if alpha_prior is not None:
        m_j = jnp.sum(state.table_counts > 0, axis=1).astype(dtype)
        n_j = jax.ops.segment_sum(jnp.ones(n, dtype), gid, n_groups)
        state = state._replace(
            log_alpha=_update_log_alpha_hdp(keys[7], state.log_alpha, m_j, n_j, alpha_prior).astype(dtype))
    info = HDPInfo(jnp.sum(state.dish_tables > 0, dtype=jnp.int32),
                   jnp.any(state.dishes(gid) != before),
                   jnp.sum(state.table_counts > 0, dtype=jnp.int32), accepted)
    return state, info


def init_hdp_state(X, gid, tables, table_dish, L, P, *, log_alpha, log_gamma, sigma2) -> HDPState:
    """A chain state from initial tables and dishes; dish means start at their points' mean.

    Parameters
    ----------
    X : array, shape (n, d)
    gid : int array, shape (n,)
        Data set of every point, ``0..D-1``.
    tables : int array, shape (n,)
        Table slot of every point inside its data set, ``0..L-1``.
    table_dish : int array, shape (D, L)
        Dish slot (``0..P-1``) of every table slot (ignored for empty slots).
    L, P : int
        Table slots per data set and dish slots.
    """
    dtype = X.dtype
    gid = jnp.asarray(gid, jnp.int32)
    tables = jnp.asarray(tables, jnp.int32)
    table_dish = jnp.asarray(table_dish, jnp.int32)
    D = table_dish.shape[0]
    counts = segment_stats(X, gid * L + tables, D * L).weight.reshape(D, L)
    dish_tables = jax.ops.segment_sum((counts > 0).astype(dtype).reshape(-1), table_dish.reshape(-1), P)
    stats = segment_stats(X, jnp.where(tables >= 0, table_dish[gid, tables], -1), P)
    means = stats.sum / jnp.maximum(stats.weight, 1.0)[:, None]
    return HDPState(tables, counts, table_dish, dish_tables, means,
                    jnp.asarray(log_alpha, dtype), jnp.asarray(log_gamma, dtype),
                    jnp.asarray(sigma2, dtype), jnp.asarray(False))


@functools.partial(jax.jit, static_argnames=("L", "P"))
def _init_chains(X, gid, tables, table_dish, log_alpha, log_gamma, sigma2, *, L, P):
    """:func:`init_hdp_state` of every chain's seating, ``tables`` (C, n), ``table_dish``
    (C, D, L); compiled once per shape (the concentrations and the variance are traced)."""
    return jax.vmap(lambda t, v: init_hdp_state(X, gid, t, v, L, P, log_alpha=log_alpha,
                                                log_gamma=log_gamma, sigma2=sigma2))(
        tables, table_dish)


def _grow(state: HDPState, L: int, P: int) -> HDPState:
    def pad(a, size, axis):
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, size - a.shape[axis])
        return jnp.pad(a, widths)

    return state._replace(
        table_counts=pad(state.table_counts, L, -1),
        table_dish=pad(state.table_dish, L, -1),
        dish_tables=pad(state.dish_tables, P, -1),
        means=pad(state.means, P, -2),
        overflow=jnp.zeros_like(state.overflow),
    )


def hdp_log_likelihood(X, gid, state: HDPState, n_valid=None):
    """``log p(X | tables, dishes, mu, sigma2)`` (the shared complete-data kernel; the rows
    past ``n_valid`` pad ``X`` and are left out)."""
    return complete_data_log_likelihood(X, state.means, state.dishes(gid), state.sigma2,
                                        n_valid=n_valid)


@functools.partial(jax.jit, static_argnames=("num", "thin", "n_groups", "split_merge",
                                          "max_group_size"))
def _run_segment(keys, X, gid, state, rho2, alpha_prior, gamma_prior, sigma2_prior, n_valid=None, *,
                 num, thin, n_groups, split_merge, max_group_size):
    """``num`` recorded draws of ``thin`` sweeps each, for every chain (vmap); ``n_valid``
    (traced) as :func:`hdp_sweep`."""

    def one_chain(key, state):
        def draw(s, k):
            ks = jax.random.split(k, thin)

            def sweep(t, carry):
                s_, acc = carry
                s_, info = hdp_sweep(
                    ks[t], X, gid, s_, rho2=rho2, n_groups=n_groups, alpha_prior=alpha_prior,
                    gamma_prior=gamma_prior, sigma2_prior=sigma2_prior, split_merge=split_merge,
                    max_group_size=max_group_size, n_valid=n_valid)
                return s_, acc + info.split_merge_accepted

            s, accepted = lax.fori_loop(0, thin, sweep, (s, jnp.zeros((), jnp.int32)))
            record = dict(
                split_merge_accepted=accepted,
                labels=s.dishes(gid),
                local_labels=s.tables,
                log_likelihood=hdp_log_likelihood(X, gid, s, n_valid),
                log_alpha=s.log_alpha,
                log_gamma=s.log_gamma,
                sigma2=s.sigma2,
                means=s.means,
                n_clusters=jnp.sum(s.dish_tables > 0),
                n_local=jnp.sum(s.table_counts > 0),
            )
            return s, record

        return lax.scan(draw, state, jax.random.split(key, num))

    return jax.vmap(one_chain)(keys, state)


def _log_concentration(value, log_value, name):
    if log_value is None:
        return float(np.log(V.check_positive(value, name)))
    log_value = V._check_real_scalar(log_value, f"log_{name}")
    if not np.isfinite(log_value):
        raise ValueError(f"log_{name} must be finite, got {log_value!r}")
    return log_value


def _initial_seating(init_labels, init_tables, gid, order, D, num_chains):
    """Every chain's table slots (stacked rows) and dish slots of the tables, from labels.

    Returns ``tables`` int32 (C, n) (stacked order), ``table_dish`` int32 (C, D, L_need)
    and the table and dish slots needed, ``L_need``, ``P_need``; ``C`` is 1 when the
    initial state is shared by every chain.
    """
    n = len(gid)
    if init_labels is None:
        if init_tables is not None:
            raise ValueError("init_tables needs init_labels (the global cluster of every point)")
        # Kulis & Jordan's initialisation: one table per data set, all serving one dish.
        return np.zeros((1, n), np.int32), np.zeros((1, D, 1), np.int32), 1, 1

    def rows(value, name):
        arr = np.asarray(value)
        if arr.ndim == 2:
            if arr.shape[0] != num_chains:
                raise ValueError(f"{name} has {arr.shape[0]} rows, expected one per chain "
                                 f"(num_chains={num_chains})")
            return [V.check_labels(r, f"{name}[{c}]", n_samples=n) for c, r in enumerate(arr)]
        return [V.check_labels(value, name, n_samples=n)]

    dishes = rows(init_labels, "init_labels")
    tables = None if init_tables is None else rows(init_tables, "init_tables")
    if tables is not None and len(tables) != len(dishes):  # one is shared by every chain
        dishes, tables = dishes * (len(tables) // len(dishes)), tables * (len(dishes) // len(tables))
    out_tables, out_dish = [], []
    for c, z in enumerate(dishes):
        z = np.unique(z[order], return_inverse=True)[1].reshape(n)  # dish slots 0..g-1
        # Without tables: one per (data set, global cluster) pair, the fewest the global
        # partition allows (the hard HDP's fixed points have them).
        t = z if tables is None else tables[c][order]
        _, first, pair = np.unique(np.stack([gid, t]), axis=1, return_index=True,
                                   return_inverse=True)
        pair = pair.reshape(n)
        if np.unique(np.stack([pair, z]), axis=1).shape[1] != len(first):
            raise ValueError(f"init_tables{'' if len(dishes) == 1 else f'[{c}]'}: a table "
                             "serves points of several global clusters (init_labels)")
        # Table slots 0..L_j-1 inside each data set, in order of the (sorted) table ids.
        pair_gid = gid[first]
        slot_of_pair = np.arange(len(first)) - np.searchsorted(pair_gid, pair_gid)
        slots = slot_of_pair[pair]
        table_dish = np.zeros((D, slot_of_pair.max() + 1), np.int64)
        table_dish[pair_gid, slot_of_pair] = z[first]
        out_tables.append(slots)
        out_dish.append(table_dish)
    L = max(td.shape[1] for td in out_dish)
    P = max(int(td.max()) + 1 for td in out_dish)
    table_dish = np.stack([np.pad(td, ((0, 0), (0, L - td.shape[1]))) for td in out_dish])
    return np.stack(out_tables).astype(np.int32), table_dish.astype(np.int32), L, P


def gibbs_hdp_gmm(
    rng_key,
    groups,
    *,
    group_ids=None,
    alpha: float = 1.0,
    gamma: float = 1.0,
    log_alpha: float | None = None,
    log_gamma: float | None = None,
    sigma2: float = 1.0,
    rho2: float = 100.0,
    alpha_prior=None,
    gamma_prior=None,
    sigma2_prior=None,
    num_warmup: int = HDP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = HDP_SAMPLER_DEFAULTS.num_samples,
    thin: int = HDP_SAMPLER_DEFAULTS.thin,
    num_chains: int = HDP_SAMPLER_DEFAULTS.num_chains,
    split_merge: int = HDP_SAMPLER_DEFAULTS.split_merge,
    init_labels=None,
    init_tables=None,
    center: bool = True,
    progress_bar: bool = True,
):
    r"""Gibbs sampling of the HDP Gaussian mixture (CRF scheme); returns a :class:`Posterior`.

    Model: dishes :math:`\mu_p \sim N(0, \rho^2 I)`; tables of each data set by
    CRP(:math:`\alpha`), dishes of all tables by CRP(:math:`\gamma`);
    :math:`x_{ij} \sim N(\mu_{v_j z_{ij}}, \sigma^2 I)` (Teh et al. 2006; Kulis &
    Jordan 2012, §4).  See the module docstring for the moves and their
    small-variance limit, the hard Gaussian HDP.

    Parameters
    ----------
    rng_key : jax key or int
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets; with ``group_ids``, one array whose rows are split by it.
    group_ids : array_like of int, shape (n,), optional
        Data set of every row of ``groups`` (then a single array).
    alpha, gamma : float
        Local (per data set) and global concentrations (> 0); initial values
        when their priors are given.
    log_alpha, log_gamma : float, optional
        The concentrations on the log scale, overriding ``alpha`` / ``gamma``
        (for the small-variance regime, see
        :func:`bayesclust.models.hdp_gmm.hdp_log_concentrations_from_lam`).
    sigma2 : float
        Component **variance** (> 0).
    rho2 : float
        Prior **variance** of the dish means (> 0).
    alpha_prior, gamma_prior : numpyro.distributions.Gamma, optional
        Priors on alpha and gamma, e.g. ``dist.Gamma(1.0, 1.0)`` (shape, rate;
        Teh et al. 2006, Appendix A; Escobar & West 1995), as
        :func:`bayesclust.models.hdp_gmm.hdp_gmm` takes them; the sampler needs
        this conjugate family.
    sigma2_prior : numpyro.distributions.InverseGamma, optional
        Prior on sigma2, e.g. ``dist.InverseGamma(1.0, 1.0)`` (shape, scale; the
        conjugate family).
    num_warmup, num_samples, thin, num_chains : int
        Sweeps discarded, draws kept per chain, sweeps per kept draw, and chains
        (moved together, on the vectorised axis).  Defaults:
        :data:`bayesclust.inference.mixtures.convergence.HDP_SAMPLER_DEFAULTS`.  After
        sampling, a :class:`bayesclust.ConvergenceWarning` is issued when R-hat or
        bulk ESS of the number of global clusters or of the log-likelihood fails
        :func:`bayesclust.inference.mixtures.convergence.convergence_problems`.
    split_merge : int
        :func:`split_merge_move` moves per sweep, after the table moves (0: the CRF
        sweeps alone): a table split off onto a new dish, or a table alone on its dish
        merged into another table, by sequential allocation (Dahl 2003; Wang & Blei
        2012).  ``sample_stats["split_merge_acceptance"]``: the fraction of each
        draw's ``thin * split_merge`` moves accepted.
    init_labels : array_like of int, shape (n,) or (num_chains, n), optional
        The global cluster (dish) of every point at the start, shared by every chain or
        one row per chain, in the rows' order (of ``X`` with ``group_ids``, or of the
        concatenated data sets); any integer ids.  E.g. a previous run's last draw,
        ``post.labels[:, -1]``, to continue it (at another ``sigma2``: the annealed
        path of :func:`bayesclust.limit_path`).  Default: every point at one dish.
    init_tables : array_like of int, shape (n,) or (num_chains, n), optional
        The table (local cluster) of every point inside its data set, with
        ``init_labels``: a previous run's ``post.params["local_labels"][:, -1]``; any
        integer ids, the same id in two data sets being two tables.  Every table must
        lie in one global cluster.  Default: one table per (data set, global cluster)
        pair (Kulis & Jordan's start, one table per data set, without ``init_labels``).
        The dish means start at the mean of their points (as :func:`init_hdp_state`),
        and the first sweep's point moves read them; the state's concentrations and
        variance are this call's.
    center : bool
        Centre the pooled data first (the prior on the means is centred at 0).
    progress_bar : bool

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n): the global cluster (dish slot) of every
        point, in input row order; ``group_ids`` (n,): each point's data set
        (``0..D-1`` in ``group_order``); ``params``: ``local_labels`` (table
        slot of every point inside its data set), ``means`` (dish
        slots), ``alpha``, ``gamma``, ``sigma2``; ``sample_stats``:
        ``n_clusters`` (global), ``n_local`` (all data sets), with ``split_merge``
        ``split_merge_acceptance``.
        :meth:`Posterior.labels_by_group` splits the draws by data set.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = np.concatenate([rng.normal(-2, 0.2, (10, 2)), rng.normal(2, 0.2, (10, 2))])
    >>> b = rng.normal(2, 0.2, (10, 2))
    >>> post = gibbs_hdp_gmm(0, [a, b], sigma2=0.04, num_warmup=50, num_samples=50,
    ...                      num_chains=2, progress_bar=False)
    >>> int(np.bincount(post.n_clusters.ravel()).argmax())
    2
    >>> [lab.shape for lab in post.labels_by_group()]  # (chains, draws, points of the data set)
    [(2, 50, 20), (2, 50, 10)]
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    X, gid, order, group_order = V.check_groups(groups, group_ids)
    V.check_squares_representable(X, "groups")
    log_alpha = _log_concentration(alpha, log_alpha, "alpha")
    log_gamma = _log_concentration(gamma, log_gamma, "gamma")
    sigma2 = V.check_positive(sigma2, "sigma2")
    rho2 = V.check_positive(rho2, "rho2")
    priors = [
        _prior_params(alpha_prior, "alpha_prior", "gamma"),
        _prior_params(gamma_prior, "gamma_prior", "gamma"),
        _prior_params(sigma2_prior, "sigma2_prior", "inverse_gamma"),
    ]
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    thin = V.check_int(thin, "thin", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    split_merge = V.check_int(split_merge, "split_merge", minimum=0)
    n, d = X.shape
    D = len(group_order)
    offset = X.mean(0) if center else np.zeros(d, X.dtype)
    # Rows padded to a shape bucket (zeros, group and table -1): every n of a bucket runs
    # one compiled program, and the first n rows' draws are an unpadded run's.
    rows = run_rows(n)
    Xj = jnp.asarray(pad_rows(X - offset, rows))
    dtype = Xj.dtype
    gidj = jnp.asarray(pad_rows(gid, rows, value=-1), jnp.int32)
    priors = [None if p is None else tuple(jnp.asarray(v, dtype) for v in p) for p in priors]
    tables0, table_dish0, L_need, P_need = _initial_seating(init_labels, init_tables, gid, order,
                                                            D, num_chains)
    tables0 = pad_rows(tables0, rows, axis=-1, value=-1)
    sizes = np.bincount(gid, minlength=D)
    # Powers of two above what the start needs, so that runs continued from one another
    # (an annealed path) mostly share one buffer shape, hence one compilation.  From one
    # dish, the first sweeps open tens of dishes before they merge again (iris:
    # 40-60; hdp_groups more than 64): a buffer that must grow costs another compilation
    # of the sweeps (seconds), so the dishes' starts at 128; a larger one slows every sweep
    # (its distances).  The dishes are capped by the padded rows, not n, so that every n of
    # a row bucket starts with one buffer shape.
    capacity = {"L": max(min(8, int(sizes.max())), min(pow2_at_least(L_need), int(sizes.max()))),
                "P": max(min(128, rows), min(pow2_at_least(P_need), rows))}
    table_dish0 = np.pad(table_dish0, ((0, 0), (0, 0), (0, capacity["L"] - L_need)))
    state = _init_chains(Xj, gidj, jnp.asarray(tables0), jnp.asarray(table_dish0),
                         jnp.asarray(log_alpha, dtype), jnp.asarray(log_gamma, dtype),
                         jnp.asarray(sigma2, dtype), L=capacity["L"], P=capacity["P"])
    if tables0.shape[0] == 1:
        state = jax.tree.map(lambda a: jnp.broadcast_to(a[0], (num_chains,) + a.shape[1:]), state)

    def grow(s):
        # The overflow flag does not say which buffer filled up: double both (up to the
        # most either can need: the largest data set's size, and n, padded).
        capacity["L"] = max(capacity["L"], min(2 * capacity["L"], int(sizes.max())))
        capacity["P"] = max(capacity["P"], min(2 * capacity["P"], rows))
        return _grow(s, capacity["L"], capacity["P"])

    run = functools.partial(_run_segment, X=Xj, gid=gidj, rho2=jnp.asarray(rho2, dtype),
                            alpha_prior=priors[0], gamma_prior=priors[1], sigma2_prior=priors[2],
                            n_valid=jnp.asarray(n, jnp.int32), thin=thin, n_groups=D,
                            split_merge=split_merge, max_group_size=run_rows(int(sizes.max())))
    records, seconds = run_in_segments(
        key, lambda keys, s, num: run(keys, state=s, num=num), state,
        num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, thin=thin,
        grow=grow, progress_bar=progress_bar, desc="gibbs (HDP, CRF)",
        padded={"means": 2}, label_records=("labels", "local_labels"), rows=n)
    back = np.empty(n, np.int64)
    back[order] = np.arange(n)  # stacked row of every input row

    def labels_of(name):
        # Back to input row order draw by draw, in place: the label draws are the run's
        # largest arrays, and a fancy index of all of them would copy them.
        arr = records[name]
        if not np.array_equal(back, np.arange(n)):
            for row in arr.reshape(-1, n):
                row[:] = row[back]
        return arr

    labels = labels_of("labels")
    # Dish slots past the highest one any draw uses hold no mean (zeros): the buffer's
    # spare slots are not kept (they would be most of a fitted estimator's pickle).
    used = int(labels.max()) + 1 if labels.size else 0
    post = Posterior(
        labels,
        log_likelihood=records["log_likelihood"],
        params={"means": records["means"][:, :, :used] + offset,
                "local_labels": labels_of("local_labels"),
                "alpha": np.exp(records["log_alpha"]), "gamma": np.exp(records["log_gamma"]),
                "sigma2": records["sigma2"]},
        sample_stats={"n_clusters": records["n_clusters"], "n_local": records["n_local"],
                      **({"split_merge_acceptance": records["split_merge_accepted"]
                          / (thin * split_merge)} if split_merge else {})},
        sampler="gibbs-hdp-crf",
        model="hdp_gmm",
        kernels=sweep_kernels(Xj),
        seconds=seconds,
        group_ids=gid[back],
        group_order=group_order,
        copy=False,  # the records are this call's own arrays
    )
    warn_if_not_converged(post)
    return post
