"""Count rows checked once and laid out for the multinomial kernels (KL-means and its sampler).

The DP mixture of multinomials and its small-variance limit, KL-means, read the same input:
a non-negative count matrix, dense ``(n, m)``, ``scipy.sparse``, or a co-association
(:class:`~bayesclust.inference.consensus.coassociation.CoAssociation`, whose rows are the
co-association counts with the diagonal: docs/deviations.md#kl-means-coassociation-rows).
:func:`bayesclust._validation.check_counts` validates it at the boundary (a ``ValueError`` naming the argument);
:func:`device_rows` pads it and builds the :class:`~bayesclust.kernels.multinomial.CountRows`
every kernel reads.

Private to :mod:`bayesclust.inference` (the underscore): the hard and the sampled sides
import it, users do not.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _validation as V
from .._validation import HostCounts, check_counts  # noqa: F401  (re-read by the drivers)
from ..kernels import padded_rows
from ..kernels.multinomial import CountRows, row_negentropy
from ._driver import pow2_at_least


def working_dtype(host: HostCounts):
    """float64 under ``jax_enable_x64`` for float64 input, else float32."""
    return V.working_dtype(np.float64 if host.float64 else np.float32)


def device_rows(host: HostCounts, dtype, *, dense: bool | None = None) -> CountRows:
    """The padded :class:`CountRows` of validated counts.

    Rows and columns are padded to :func:`~bayesclust.kernels.padded_rows` with zero counts
    (a row of total 0 has cost 0 to every cluster and adds nothing to a statistic); the
    (column, count) pairs of a row to a power of two; the entries of sparse rows to a power
    of two (zero counts).  ``dense`` chooses the kernels' form (default: dense input dense).

    Returns
    -------
    CountRows
    """
    csr = host.csr
    n, m = csr.shape
    n_pad, m_pad = padded_rows(n), padded_rows(m)
    if dense is None:
        dense = host.dense is not None
    lengths = np.diff(csr.indptr)
    L = m_pad if dense else max(1, pow2_at_least(int(lengths.max()) if n else 1))
    cols = np.zeros((n_pad, L), np.int32)
    vals = np.zeros((n_pad, L), np.float64)
    if dense:
        cols[:] = np.arange(L, dtype=np.int32)
        vals[:n, :m] = csr.toarray()
    else:
        pos = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], lengths)
        row = np.repeat(np.arange(n), lengths)
        cols[row, pos] = csr.indices
        vals[row, pos] = csr.data
    totals = np.zeros(n_pad, np.float64)
    totals[:n] = np.asarray(csr.sum(axis=1)).ravel()
    vals_j = jnp.asarray(vals, dtype)
    totals_j = jnp.asarray(totals, dtype)
    if dense:
        dense_j = vals_j
        seg = (None, None, None)
    else:
        dense_j = None
        nnz_pad = pow2_at_least(max(csr.nnz, 1))
        r = np.zeros(nnz_pad, np.int32)
        c = np.zeros(nnz_pad, np.int32)
        v = np.zeros(nnz_pad, np.float64)
        coo = csr.tocoo()
        r[: csr.nnz], c[: csr.nnz], v[: csr.nnz] = coo.row, coo.col, coo.data
        seg = (jnp.asarray(r), jnp.asarray(c), jnp.asarray(v, dtype))
    return CountRows(
        cols=jnp.asarray(cols), vals=vals_j, totals=totals_j,
        negentropy=row_negentropy(vals_j, totals_j), dense=dense_j,
        seg_rows=seg[0], seg_cols=seg[1], seg_vals=seg[2],
        columns=jnp.arange(m_pad, dtype=jnp.int32),
    )
