r"""The co-association matrix of an ensemble: how often two objects share a cluster.

Kept **sparse** (``scipy.sparse``, pairs ``i < j`` only): with the split-and-merge
rule ``K_min = n / A`` its number of stored pairs grows linearly in ``n`` (about
``2 A n`` pairs, Lourenco, Fred & Jain 2010).  Over the label draws of a posterior
the same matrix is the posterior co-clustering (similarity) matrix
(:func:`bayesclust.metrics.co_clustering_matrix`).

References
----------
A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
IEEE TPAMI 27(6) (2005) 835-850.
A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
clustering", ICPR 2010.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from ..._validation import check_ensemble
from .._sharding import check_divides, check_mesh, shard_leading, to_host

__all__ = ["CoAssociation", "coassociation", "coassociation_dense", "as_coassociation", "coassociation_pairs"]


class CoAssociation(NamedTuple):
    r"""Sparse co-association of an ensemble (result of :func:`coassociation`).

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of int32 (float64 when weighted), shape (n, n)
        Strict upper triangle (``i < j``): :math:`n_{ij}` = number of partitions in which
        objects ``i`` and ``j`` share a cluster.  Pairs never co-clustered are not stored.
    n_partitions : int
        ``N``.
    pair_trials : scipy.sparse.csr_matrix or None
        With missing objects (sub-sampled partitions): :math:`N_{ij}` = number of partitions
        containing both objects, at the stored pairs only (same pattern as ``counts``);
        ``None`` when every partition labels every object (then :math:`N_{ij} = N`).
    sampled : ndarray of int, shape (n,)
        Number of partitions containing each object.
    """

    counts: sp.csr_matrix
    n_partitions: int
    pair_trials: sp.csr_matrix | None
    sampled: np.ndarray

    @property
    def n_samples(self) -> int:
        """Number of objects ``n``."""
        return int(self.counts.shape[0])

    @property
    def nnz(self) -> int:
        """Stored pairs (upper triangle)."""
        return int(self.counts.nnz)

    @property
    def nbytes(self) -> int:
        """Memory of the stored matrices (data + indices + indptr), in bytes."""
        mats = [self.counts] + ([self.pair_trials] if self.pair_trials is not None else [])
        return int(sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in mats))

    def normalized(self) -> sp.csr_matrix:
        r"""Upper triangle of :math:`C_{ij} = n_{ij} / N_{ij}` (float64 csr, ``i < j``)."""
        C = self.counts.astype(np.float64)
        if self.pair_trials is None:
            C.data /= self.n_partitions
        else:
            C.data /= self.pair_trials.data
        return C

    def symmetric_counts(self) -> sp.csr_matrix:
        r"""The PEnCA count matrix: full symmetric :math:`n_{ij}`, zero diagonal (float64).

        Both orders ``(y, z)`` and ``(z, y)`` of every co-occurring pair are in the
        multiset :math:`\mathcal S` (PEnCA paper, eqs. 3-4), so ``sum()`` equals :math:`|\mathcal S|`.
        """
        U = self.counts.astype(np.float64)
        return (U + U.T).tocsr()

    def toarray(self) -> np.ndarray:
        """Dense normalised co-association, unit diagonal for sampled objects, shape (n, n)."""
        U = self.normalized().toarray()
        D = U + U.T
        D[np.diag_indices_from(D)] = (self.sampled > 0).astype(np.float64)
        return D


def _popcount_pairs(bits: np.ndarray, rows: np.ndarray, cols: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """``sum_l s_{il} s_{jl}`` for each pair from packed sampling bitmasks (never an n x n matrix)."""
    out = np.empty(rows.shape[0], np.int32)
    for s in range(0, rows.shape[0], chunk):
        a = bits[rows[s : s + chunk]] & bits[cols[s : s + chunk]]
        out[s : s + chunk] = np.bitwise_count(a).sum(axis=1, dtype=np.int32)
    return out


def coassociation(
    ensemble: Any,
    *,
    allow_missing: bool | None = None,
    max_pairs_per_batch: int = 20_000_000,
    weights: Any = None,
    mesh: Any = None,
) -> CoAssociation:
    r"""Sparse co-association (evidence accumulation) of a set of partitions.

    :math:`n_{ij} = \sum_{l=1}^N [\ell^l_i = \ell^l_j \ne -1]` for ``i < j``, accumulated
    batch by batch as the upper triangle of :math:`Z Z^\top`, where ``Z`` (sparse,
    ``n x sum_l K_l``) one-hot encodes the batch's clusters.  Only co-clustered pairs are
    stored: with the split-and-merge rule ``K_min = n/A`` there are about
    :math:`2n^2/K_{min} = 2An` of them (the paper's estimate counts the upper triangle: docs/deviations.md#coassociation-nnz).

    Parameters
    ----------
    ensemble : array_like (N, n), list, :class:`Ensemble` or Posterior
        The partitions (see :func:`~bayesclust._validation.check_ensemble`).
    allow_missing : bool, optional
        ``-1`` marks an object absent from a partition (default: True for an
        :class:`Ensemble` only).  Then :math:`N_{ij}` (partitions containing both objects)
        is computed at the stored pairs from packed sampling bitmasks, never as a dense
        matrix (it is nonzero for almost every pair: docs/deviations.md#subsampled-coassociation).
    max_pairs_per_batch : int
        Bound on the co-clustered pairs (:math:`\sum_k n_k^2`) accumulated per batch of
        partitions (peak memory only).
    weights : array_like of float, shape (N,), optional
        Non-negative vote of each partition (WEACS: its normalised internal validity).  Then
        ``counts`` holds :math:`\sum_l w_l [\ell^l_i = \ell^l_j \ne -1]` in float64 (pairs
        co-clustered only by partitions of weight 0 are not stored), still divided by the
        number of partitions :math:`N_{ij}` (or ``N``) in :meth:`CoAssociation.normalized`, as
        in Duarte et al. (2009), WEACS.  ``None`` (default): every vote counts 1, int32 counts.
    mesh : jax.sharding.Mesh, optional
        Count on the devices of this one-axis mesh: the partitions are split over its
        devices (``N`` a multiple of their number), each device counts :math:`n_{ij}`
        over its own partitions in a dense ``n x n`` int32 matrix (``n^2`` comparisons per
        partition), and the counts are summed across devices (``psum``; with missing
        objects :math:`N_{ij}` too).  The counts are integers, so the result equals the
        single-device one exactly, on any number of devices or processes
        (``jax.distributed``).  Memory ``O(n^2)`` per device; not with ``weights``.

    Returns
    -------
    CoAssociation

    References
    ----------
    A. Lourenco, A. Fred and A. K. Jain, "On the scalability of evidence accumulation
    clustering", ICPR 2010.
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009 (WEACS: weighted votes).

    Examples
    --------
    >>> C = coassociation([[0, 0, 1, 1], [0, 0, 0, 1], [1, 1, 0, 0]])
    >>> C.counts.toarray()
    array([[0, 3, 1, 0],
           [0, 0, 1, 0],
           [0, 0, 0, 2],
           [0, 0, 0, 0]], dtype=int32)
    >>> float(C.normalized()[2, 3])
    0.6666666666666666
    """
    codes = check_ensemble(ensemble, allow_missing=allow_missing)
    max_pairs_per_batch = V.check_int(max_pairs_per_batch, "max_pairs_per_batch", minimum=1)
    N, n = codes.shape
    if mesh is not None:
        if weights is not None:
            raise ValueError("weights cannot be combined with mesh (the sharded counts are "
                             "integers); give one of them")
        return _sharded_coassociation(codes, mesh)
    w = None
    if weights is not None:
        w = V.check_array(weights, "weights", ndim=1, min_samples=1).astype(np.float64)
        if w.shape[0] != N:
            raise ValueError(f"weights has length {w.shape[0]} but ensemble holds {N} partitions")
        if np.any(w < 0):
            raise ValueError("weights must be non-negative")
    observed = codes >= 0
    sizes = [np.bincount(codes[l, observed[l]]) for l in range(N)]
    pairs = np.array([int(np.sum(s.astype(np.int64) ** 2)) for s in sizes])
    acc = sp.csr_matrix((n, n), dtype=np.int32)
    start = 0
    while start < N:
        stop, total = start + 1, pairs[start]
        while stop < N and total + pairs[stop] <= max_pairs_per_batch:
            total += pairs[stop]
            stop += 1
        block = codes[start:stop]
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in sizes[start:stop]])])
        obs = block >= 0
        r = np.nonzero(obs.T)  # (object, partition) in row-major order of objects
        cols = block.T[r] + offsets[r[1]]
        Z = sp.csr_matrix(
            (np.ones(cols.shape[0], np.int32), (r[0], cols)), shape=(n, int(offsets[-1]))
        )
        if w is None:
            acc = acc + sp.triu(Z @ Z.T, k=1, format="csr")
        else:
            Zw = sp.csr_matrix((w[start + r[1]], (r[0], cols)), shape=Z.shape)
            acc = acc + sp.triu(Z @ Zw.T, k=1, format="csr")
        start = stop
    if w is None:
        acc = acc.astype(np.int32).tocsr()
    else:
        acc = acc.astype(np.float64).tocsr()
        acc.eliminate_zeros()
    acc.sum_duplicates()
    acc.sort_indices()
    sampled = observed.sum(axis=0).astype(np.int64)
    trials = None
    if not np.all(observed):
        bits = np.packbits(observed.T, axis=1)  # (n, ceil(N/8))
        coo = acc.tocoo()
        t = _popcount_pairs(bits, coo.row, coo.col)
        trials = sp.csr_matrix((t, acc.indices.copy(), acc.indptr.copy()), shape=(n, n))
    return CoAssociation(acc, N, trials, sampled)


def _sharded_coassociation(codes: np.ndarray, mesh) -> CoAssociation:
    """:func:`coassociation` of ``codes`` (checked) with the partitions split over ``mesh``."""
    axis = check_mesh(mesh)
    N, n = codes.shape
    check_divides(mesh, N, "n_partitions (the ensemble's partitions)")
    observed = codes >= 0
    missing = not np.all(observed)
    counts, trials = _device_counts(mesh, axis, missing)(
        shard_leading(mesh, axis, codes.astype(np.int32)))
    counts = sp.csr_matrix(np.triu(to_host(counts), k=1))
    counts.sort_indices()
    sampled = observed.sum(axis=0).astype(np.int64)
    pair_trials = None
    if missing:
        coo = counts.tocoo()
        t = to_host(trials)[coo.row, coo.col].astype(np.int32)
        pair_trials = sp.csr_matrix((t, counts.indices.copy(), counts.indptr.copy()), shape=(n, n))
    return CoAssociation(counts, N, pair_trials, sampled)


@functools.lru_cache(maxsize=16)
def _device_counts(mesh, axis, missing: bool):
    """Jitted ``shard_map``: partitions ``(N, n)`` split over ``axis`` -> the summed co-occurrence
    counts ``(n, n)`` (and the pair trials with ``missing``), int32, replicated."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import PartitionSpec as P

    def local(codes):  # this device's partitions (N_local, n)
        n = codes.shape[1]

        def add(carry, lab):  # one partition: n^2 comparisons (a one-hot product costs n^2 K)
            counts, trials = carry
            both = (lab >= 0)[:, None] & (lab >= 0)[None, :]
            counts = counts + ((lab[:, None] == lab[None, :]) & both).astype(jnp.int32)
            if missing:
                trials = trials + both.astype(jnp.int32)
            return (counts, trials), None

        init = (jnp.zeros((n, n), jnp.int32), jnp.zeros((n, n) if missing else (), jnp.int32))
        (counts, trials), _ = lax.scan(add, init, codes)
        return lax.psum(counts, axis), lax.psum(trials, axis)

    return jax.jit(jax.shard_map(local, mesh=mesh, in_specs=P(axis), out_specs=(P(), P()),
                                 check_vma=False))


def coassociation_dense(ensemble: Any, *, allow_missing: bool | None = None) -> np.ndarray:
    r"""Dense normalised co-association :math:`C_{ij} = n_{ij}/N_{ij}` (unit diagonal), shape (n, n).

    One product of the stacked one-hot encodings, :math:`\sum_l Z^l Z^{l\top} = Z Z^\top`
    with :math:`Z = [Z^1 \dots Z^N]` (``O(n^2)`` memory; for small ``n``).  With missing objects the divisor is
    :math:`N_{ij}=\sum_l[\ell^l_i\ne-1][\ell^l_j\ne-1]`, not ``N``; pairs never sampled
    together get 0.

    Examples
    --------
    >>> coassociation_dense([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    codes = check_ensemble(ensemble, allow_missing=allow_missing)
    N, n = codes.shape
    obs = codes >= 0
    width = int(codes.max()) + 1
    Z = np.zeros((n, N * width))  # partition l's clusters in columns l * width + label
    rows, parts = np.nonzero(obs.T)
    Z[rows, parts * width + codes[parts, rows]] = 1.0
    counts = Z @ Z.T  # integers, exact in float64
    trials = obs.T.astype(np.float64) @ obs.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.where(trials > 0, counts / np.where(trials > 0, trials, 1), 0.0)
    return C


def as_coassociation(coassoc: Any, name: str = "coassoc") -> CoAssociation:
    """A :class:`CoAssociation` as it is, anything else (an ensemble) through :func:`coassociation`.

    A square matrix of fractions (a dense or sparse normalised co-association) is not an
    ensemble: it raises a ``ValueError`` that says what to pass instead.
    """
    if isinstance(coassoc, CoAssociation):
        return coassoc
    shape = getattr(coassoc, "shape", None)
    if sp.issparse(coassoc) or (
        isinstance(coassoc, np.ndarray) and coassoc.ndim == 2 and shape[0] == shape[1]
        and coassoc.dtype.kind == "f" and np.any(coassoc != np.round(coassoc))
    ):
        raise ValueError(
            f"{name} looks like a co-association matrix (square, with fractions); pass the "
            "CoAssociation that coassociation(ensemble) returns, or the ensemble itself"
        )
    # np.ndim is not asked of other objects: an Ensemble or a Posterior is an ensemble
    if coassoc is None or isinstance(coassoc, (numbers.Number, str, bytes)) or (
            isinstance(coassoc, np.ndarray) and coassoc.ndim == 0):
        raise TypeError(f"{name} must be a CoAssociation or an ensemble of partitions, got "
                        f"{type(coassoc).__name__}")
    # checked under the caller's name, so that its errors do not speak of an "ensemble"
    check_ensemble(coassoc, name)
    return coassociation(coassoc)


def coassociation_pairs(coassoc: Any, name: str = "coassoc") -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    r"""Upper-triangle pairs ``(rows, cols, counts, n)`` of a co-association count matrix.

    Parameters
    ----------
    coassoc : CoAssociation, scipy.sparse matrix or array_like (n, n)
        A :class:`bayesclust.inference.consensus.coassociation.CoAssociation` (its integer counts), or a symmetric
        non-negative matrix of counts :math:`C_{yz}` (the diagonal is ignored).  A sparse
        matrix that is exactly upper-triangular is taken as the upper triangle of a
        symmetric matrix (both orders of every pair are in :math:`\mathcal S`: the full matrix is ``U + U.T``).

    Returns
    -------
    rows, cols : ndarray of int32, shape (nnz,)
        ``rows < cols``.
    counts : ndarray of float64, shape (nnz,)
        :math:`C_{yz} > 0`.
    n : int
    """
    if hasattr(coassoc, "counts") and hasattr(coassoc, "n_partitions"):
        U = sp.coo_matrix(coassoc.counts)
    else:
        if sp.issparse(coassoc):
            M = sp.csr_matrix(coassoc).astype(np.float64)
            if M.shape[0] != M.shape[1]:
                raise ValueError(f"{name} must be square, got shape {M.shape}")
            if M.nnz and not np.all(np.isfinite(M.data)):
                raise ValueError(f"{name} contains NaN or infinite values")
        else:
            A = V.check_array(coassoc, name, ndim=2, dtype=None).astype(np.float64)
            if A.shape[0] != A.shape[1]:
                raise ValueError(f"{name} must be square, got shape {A.shape}")
            M = sp.csr_matrix(A)
        if M.nnz and M.data.min() < 0:
            raise ValueError(f"{name} must contain non-negative counts")
        lower = sp.tril(M, -1)
        upper = sp.triu(M, 1)
        if lower.nnz and abs(lower.T - upper).max() > 1e-9 * max(1.0, abs(M).max()):
            raise ValueError(f"{name} must be symmetric (or upper-triangular)")
        U = sp.coo_matrix(upper)
        U.eliminate_zeros()
    n = int(U.shape[0])
    if n < 2:
        raise ValueError(f"{name} must describe at least 2 objects, got {n}")
    order = np.lexsort((U.col, U.row))
    rows, cols, counts = U.row[order], U.col[order], np.asarray(U.data[order], np.float64)
    keep = counts > 0
    if not np.any(keep):
        raise ValueError(f"{name} has no co-occurring pairs (all counts are 0)")
    return rows[keep].astype(np.int32), cols[keep].astype(np.int32), counts[keep], n
