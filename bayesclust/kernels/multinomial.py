r"""Multinomial count rows: KL costs to cluster distributions and the Polya (Dirichlet-multinomial) score.

The shared numerics of the DP mixture of multinomials (:mod:`bayesclust.models.dp_multinomial`),
its Gibbs sampler and its small-variance limit, KL-means
(:func:`bayesclust.inference.hard.kl_means.kl_means`).  A row :math:`r_i` of counts (total
:math:`n_i`, empirical distribution :math:`\hat p_i = r_i / n_i`) and a cluster distribution
:math:`\psi_j` give

.. math::

    -\log \mathrm{Mult}(r_i \mid \psi_j) = n_i\,\mathrm{KL}(\hat p_i \,\|\, \psi_j)
        + n_i H(\hat p_i) + \mathrm{const}(i),

so the KL cost :math:`n_i \mathrm{KL}(\hat p_i \| \psi_j) = \sum_y r_{iy} \log \hat p_{iy} -
\sum_y r_{iy} \log \psi_{jy}` is the multinomial likelihood up to a per-row constant
(Hofmann & Puzicha 1998, the asymmetric clustering model; Slonim & Weiss 2002, §2).  It is
:math:`+\infty` (never NaN) when :math:`\psi_j` is 0 where the row has mass.

Rows come in three forms, all with ``0 log 0 = 0``: dense ``(n, m)`` (:func:`kl_costs`,
a matrix product), the entries of a sparse matrix (:func:`kl_costs_segments`,
``O(nnz k)`` by ``segment_sum``), and one row as ``L`` (column, value) pairs
(:func:`kl_costs_row`, ``O(L k)``), which the sequential moves scan.  Cluster
distributions enter as ``log_psi`` (``-inf`` where :math:`\psi` is 0).

The collapsed form integrates :math:`\psi_b \sim \mathrm{Dir}(\beta)` out: moving a row
:math:`r` (total :math:`R`) into cluster :math:`b` (pooled counts :math:`n_b`, total
:math:`N_b`, :math:`B = \sum_y \beta_y`) changes the log evidence by

.. math::

    \sum_y \bigl[\log\Gamma(\beta_y + n_{by} + r_y) - \log\Gamma(\beta_y + n_{by})\bigr]
    - \bigl[\log\Gamma(B + N_b + R) - \log\Gamma(B + N_b)\bigr]

(:func:`polya_move_score`, ``O(nnz(r))`` per cluster), the Polya urn's predictive.

References
----------
T. Hofmann and J. Puzicha, "Statistical models for co-occurrence data", MIT AI Memo 1625
(1998), §2.2 (asymmetric clustering model).  N. Slonim and Y. Weiss, "Maximum likelihood
and the information bottleneck", NIPS 2002.  K. Jiang, B. Kulis and M. I. Jordan,
"Small-variance asymptotics for exponential family Dirichlet process mixture models",
NIPS 2012, §3.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from .nearest import PRECISION

__all__ = [
    "CountRows",
    "row_negentropy",
    "kl_costs",
    "kl_costs_segments",
    "kl_costs_row",
    "log_distributions",
    "pooled_counts",
    "polya_move_score",
    "merge_costs",
]

from .._validation import check_kernel_array, check_kernel_ids, check_same_length


class CountRows(NamedTuple):
    """Count rows in the forms the multinomial kernels read (a JAX pytree).

    Made on the host by the drivers (rows and columns padded with zero counts, which
    change no cost, statistic or objective).

    Attributes
    ----------
    cols, vals : int32 / float arrays, shape (n, L)
        Each row as ``L`` (column, count) pairs; unused pairs have count 0.
    totals : array, shape (n,)
        :math:`n_i`, the row sums.
    negentropy : array, shape (n,)
        :math:`\\sum_y r_{iy} \\log \\hat p_{iy} = -n_i H(\\hat p_i)` (:func:`row_negentropy`).
    dense : array, shape (n, m), or None
        The dense rows (the matrix-product form), or None for sparse rows.
    seg_rows, seg_cols, seg_vals : arrays, shape (nnz,), or None
        The entries of sparse rows (the segment form), or None for dense rows.
    columns : int32 array, shape (m,)
        ``0..m-1``: its length (static) is that of a cluster distribution.
    """

    cols: jax.Array
    vals: jax.Array
    totals: jax.Array
    negentropy: jax.Array
    dense: jax.Array | None
    seg_rows: jax.Array | None
    seg_cols: jax.Array | None
    seg_vals: jax.Array | None
    columns: jax.Array


def _xlogx(v):
    return jnp.where(v > 0, v * jnp.log(jnp.where(v > 0, v, 1.0)), 0.0)


def row_negentropy(vals, totals):
    r""":math:`\sum_y r_{y} \log(r_{y} / n)` of rows given by their values, shape (n,).

    Parameters
    ----------
    vals : array, shape (n, L)
        The rows' counts (any layout: dense rows or (column, count) pairs; zeros add 0).
    totals : array, shape (n,)

    Returns
    -------
    array, shape (n,)
        :math:`-n_i H(\hat p_i) \le 0`; 0 for a row of total 0.
    """
    vals = check_kernel_array(vals, "vals", ndim=2, min_rows=1)
    totals = check_kernel_array(totals, "totals", ndim=1)
    check_same_length(totals, vals, "totals", "vals")
    return jnp.sum(_xlogx(vals), axis=1) - _xlogx(totals)


def log_distributions(counts, totals):
    r""":math:`\log \psi_{jy} = \log(n_{jy} / N_j)`, ``-inf`` where :math:`n_{jy} = 0`, shape (K, m).

    The pooled maximum-likelihood distributions of clusters with counts ``counts`` (K, m)
    and totals ``totals`` (K,) (rows of an empty cluster are all ``-inf``).
    """
    counts = check_kernel_array(counts, "counts", ndim=2, min_rows=1)
    totals = check_kernel_array(totals, "totals", ndim=1)
    check_same_length(totals, counts, "totals", "counts")
    safe = jnp.where(counts > 0, counts, 1.0)
    tot = jnp.where(totals > 0, totals, 1.0)[:, None]
    return jnp.where(counts > 0, jnp.log(safe) - jnp.log(tot), -jnp.inf)


def _split_log_psi(log_psi):
    """(finite part with 0 where psi = 0, indicator of psi = 0)."""
    zero = jnp.isneginf(log_psi)
    return jnp.where(zero, 0.0, log_psi), zero


def _finish(negentropy, cross, violated):
    # A cost is >= 0 (Gibbs' inequality); rounding of the difference is clipped.
    return jnp.where(violated, jnp.inf, jnp.maximum(negentropy[:, None] - cross, 0.0))


def kl_costs(counts, negentropy, log_psi):
    r"""Dense form: :math:`C_{ij} = n_i \mathrm{KL}(\hat p_i \| \psi_j)` by matrix products, shape (n, K).

    Parameters
    ----------
    counts : array, shape (n, m)
        Non-negative rows.
    negentropy : array, shape (n,)
        :func:`row_negentropy` of the rows.
    log_psi : array, shape (K, m)
        Cluster log-distributions, ``-inf`` where :math:`\psi_{jy} = 0`.

    Returns
    -------
    array, shape (n, K)
        :math:`+\infty` where :math:`\psi_j` is 0 on a column where row ``i`` has mass;
        0 for rows of total 0.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[2.0, 2.0]]); psi = np.array([[np.log(0.5), np.log(0.5)], [0.0, -np.inf]])
    >>> kl_costs(r, row_negentropy(r, r.sum(1)), psi).tolist()
    [[0.0, inf]]
    """
    counts = check_kernel_array(counts, "counts", ndim=2, min_rows=1)
    negentropy = check_kernel_array(negentropy, "negentropy", ndim=1)
    log_psi = check_kernel_array(log_psi, "log_psi", ndim=2, finite=False)
    check_same_length(negentropy, counts, "negentropy", "counts")
    if log_psi.shape[1] != counts.shape[1]:
        raise ValueError(f"log_psi must have one column per column of counts ({counts.shape[1]}), "
                         f"got shape {tuple(log_psi.shape)}")
    finite, zero = _split_log_psi(log_psi)
    cross = jnp.matmul(counts, finite.T, precision=PRECISION)
    # cross's dtype, not counts': a float64 NumPy input is float32 in JAX without x64.
    violated = jnp.matmul((counts > 0).astype(cross.dtype), zero.T.astype(cross.dtype),
                          precision=PRECISION) > 0
    return _finish(negentropy, cross, violated)


def kl_costs_segments(rows, cols, vals, negentropy, log_psi):
    r"""Segment form of :func:`kl_costs`: the rows as the entries of a sparse matrix, ``O(nnz K)``.

    Parameters
    ----------
    rows, cols : int arrays, shape (nnz,)
        Row and column of every stored entry (any order; entries of count 0 add nothing).
    vals : array, shape (nnz,)
    negentropy : array, shape (n,)
        :func:`row_negentropy` of the rows (its length is ``n``).
    log_psi : array, shape (K, m)

    Returns
    -------
    array, shape (n, K)
    """
    n = negentropy.shape[0]
    finite, zero = _split_log_psi(log_psi)
    has = vals > 0
    cross = jax.ops.segment_sum(jnp.where(has[:, None], vals[:, None] * finite[:, cols].T, 0.0),
                                rows, n)
    violated = jax.ops.segment_max(has[:, None] & zero[:, cols].T, rows, n)
    return _finish(negentropy, cross, violated)


def kl_costs_row(cols, vals, negentropy, log_psi):
    r"""One row as ``L`` (column, count) pairs: its costs to every cluster, ``O(L K)``, shape (K,).

    Parameters
    ----------
    cols : int array, shape (L,)
    vals : array, shape (L,)
        Unused pairs have count 0.
    negentropy : scalar
        :func:`row_negentropy` of the row.
    log_psi : array, shape (K, m)
    """
    finite, zero = _split_log_psi(log_psi[:, cols])  # (K, L)
    has = vals > 0
    cross = jnp.sum(jnp.where(has[None, :], vals[None, :] * finite, 0.0), axis=1)
    violated = jnp.any(has[None, :] & zero, axis=1)
    return _finish(negentropy[None], cross[None, :], violated[None, :])[0]


def pooled_counts(rows: CountRows, labels, num_segments: int):
    """Per-cluster pooled counts :math:`n_{jy} = \\sum_{i: z_i = j} r_{iy}` and totals :math:`N_j`.

    Dense rows: one ``segment_sum`` of the rows; sparse rows: a ``segment_sum`` of the
    entries into ``num_segments * m`` cells, ``O(nnz)``.

    Returns
    -------
    counts : array, shape (num_segments, m)
    totals : array, shape (num_segments,)
    """
    labels = check_kernel_array(labels, "labels", ndim=1, kind="i")
    check_kernel_ids(labels, "labels", num_segments)
    totals = jax.ops.segment_sum(rows.totals, labels, num_segments)
    if rows.dense is not None:
        return jax.ops.segment_sum(rows.dense, labels, num_segments), totals
    m = rows.columns.shape[0]
    flat = jax.ops.segment_sum(rows.seg_vals, labels[rows.seg_rows] * m + rows.seg_cols,
                               num_segments * m)
    return flat.reshape(num_segments, m), totals


def polya_move_score(cols, vals, total, counts, totals, beta, beta_sum, *, tau=1.0, log_gamma_table=None):
    r"""Change of the Polya log evidence when a row joins each cluster, ``O(L K)``, shape (K,).

    .. math::

        \sum_y \bigl[\log\Gamma(\beta_y + n_{by} + r_y) - \log\Gamma(\beta_y + n_{by})\bigr]
        - \bigl[\log\Gamma(B + N_b + R) - \log\Gamma(B + N_b)\bigr]

    with every count divided by ``tau`` (a tempered multinomial is a multinomial kernel in
    the counts :math:`r/\tau`).

    Parameters
    ----------
    cols : int array, shape (L,)
    vals : array, shape (L,)
        The row :math:`r` as (column, count) pairs (unused pairs: count 0, adding 0).
    total : scalar
        :math:`R = \sum_y r_y`.
    counts : array, shape (K, m)
        Pooled counts :math:`n_b` of each cluster (an empty cluster: zeros).
    totals : array, shape (K,)
        :math:`N_b`.
    beta : array, shape (m,)
        Dirichlet parameters (> 0).
    beta_sum : scalar
        :math:`B = \sum_y \beta_y`.
    tau : scalar, default 1
        Temperature dividing every count.
    log_gamma_table : array, shape (T,), optional
        :math:`\log\Gamma(\beta + j / \tau)` for ``j = 0..T-1`` (a symmetric ``beta``):
        with integer counts (held as floats, below ``T``) the per-entry terms are read
        from it instead of computed, the same values.

    Returns
    -------
    array, shape (K,)
        For an empty cluster, :math:`\log B(\beta + r/\tau) - \log B(\beta)`, the
        new-cluster marginal.

    Examples
    --------
    >>> import numpy as np
    >>> s = polya_move_score(np.array([0]), np.array([1.0]), 1.0, np.zeros((1, 2)),
    ...                      np.zeros(1), np.ones(2), 2.0)
    >>> round(float(s[0]), 4)   # one draw from a uniform Dirichlet on 2 cells: log 1/2
    -0.6931
    """
    has = vals[None, :] > 0
    if log_gamma_table is None:
        a = beta[cols][None, :] + counts[:, cols] / tau  # (K, L)
        per = jnp.where(has, gammaln(a + vals[None, :] / tau) - gammaln(a), 0.0)
    else:
        at = counts[:, cols].astype(jnp.int32)
        per = jnp.where(has, log_gamma_table[at + vals.astype(jnp.int32)[None, :]]
                        - log_gamma_table[at], 0.0)
    b = beta_sum + totals / tau
    return jnp.sum(per, axis=1) - (gammaln(b + total / tau) - gammaln(b))


def merge_costs(cols, vals, total, counts, totals):
    r"""Rise of the pooled multinomial cost when a row joins each cluster, ``O(L K)``, shape (K,).

    With :math:`F(S) = N \log N - \sum_y S_y \log S_y` (:math:`N = \sum_y S_y`), the
    cost :math:`\sum_j F(n_j)` of the clusters' pooled counts rises by
    :math:`F(n_b + r) - F(n_b)` when the row :math:`r` joins cluster ``b`` -- the limit
    :math:`\tau \to 0` of :math:`-\tau` times :func:`polya_move_score` of
    :math:`r/\tau` into :math:`n_b/\tau` (Stirling), the information-bottleneck merge cost
    (Slonim, Friedman & Tishby 2002).  Always finite; for an empty cluster it is
    :math:`F(r) = n H(\hat p)`.

    Parameters
    ----------
    cols, vals : arrays, shape (L,)
    total : scalar
    counts : array, shape (K, m)
    totals : array, shape (K,)

    Returns
    -------
    array, shape (K,)
    """
    a = counts[:, cols]
    per = jnp.where(vals[None, :] > 0, _xlogx(a + vals[None, :]) - _xlogx(a), 0.0)
    return _xlogx(totals + total) - _xlogx(totals) - jnp.sum(per, axis=1)

