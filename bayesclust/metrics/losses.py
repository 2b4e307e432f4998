"""Co-clustering (posterior similarity) matrices, partition losses and their posterior expectations: Binder and variation of information,
their expectations under draws or a similarity matrix, the VI lower bound, all set partitions.

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import (
    check_array,
    check_int,
    check_labels,
)
from .agreement import check_pair, contingency

__all__ = [
    "co_clustering_matrix",
    "set_partitions",
    "binder_loss",
    "variation_of_information",
    "expected_binder_loss",
    "expected_vi_loss",
    "vi_lower_bound",
]

def co_clustering_matrix(label_draws: Any, batch_size: int = 64) -> np.ndarray:
    """Posterior similarity (co-clustering, co-association) matrix of a set of labellings.

    Parameters
    ----------
    label_draws : array_like of int, shape (S, n)
        ``S`` labellings of the same ``n`` points (posterior draws, or an ensemble).  Labels
        are compared within a draw only; each draw may use any integer values.
    batch_size : int, default 64
        Number of draws stacked into one matrix product (memory/speed trade-off only).

    Returns
    -------
    ndarray of float64, shape (n, n)
        :math:`P_{ij} = \\frac1S \\sum_s [z^{(s)}_i = z^{(s)}_j]`; symmetric, unit diagonal.

    Notes
    -----
    Each batch of draws is one-hot encoded into a single ``(n, total clusters)`` matrix
    ``Z`` (one column per cluster of each draw) and accumulated as ``Z @ Z.T``; the counts are
    exact integers in float64.

    References
    ----------
    A. Fred and A. K. Jain, "Combining multiple clusterings using evidence accumulation",
    IEEE TPAMI 27(6) (2005) 835-850 (co-association matrix).

    Examples
    --------
    >>> co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    draws = check_label_draws(label_draws)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    S, n = draws.shape
    # Each (draw, label) pair of a batch gets its own column; the labels are shifted to
    # 0..span-1 batch by batch (no copy of all the draws, which may be many).
    low = int(draws.min())
    span = int(draws.max()) - low + 1
    counts = np.zeros((n, n), dtype=np.float64)
    rows = np.arange(n)
    for start in range(0, S, batch_size):
        block = draws[start : start + batch_size].astype(np.int64) - low
        offsets = np.arange(block.shape[0])[:, None] * span
        _, cols = np.unique(block + offsets, return_inverse=True)
        Z = np.zeros((n, int(cols.max()) + 1), dtype=np.float64)
        Z[np.tile(rows, block.shape[0]), cols.ravel()] = 1.0
        counts += Z @ Z.T
    return counts / S



# =========================================================================================
# Partition losses and their posterior expectations
# =========================================================================================


def xlogx(x: np.ndarray) -> np.ndarray:
    """Elementwise ``x log x`` with ``0 log 0 = 0`` (float64)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log(x[pos])
    return out


def _pairs(n: int) -> float:
    return n * (n - 1) / 2.0


def check_label_draws(label_draws: Any, name: str = "label_draws") -> np.ndarray:
    """Validate an (S, n) integer array of labellings; returns it as it is when it has an
    integer dtype (label draws are large: no copy), else as int64."""
    draws = check_array(label_draws, name, ndim=2, min_samples=1, dtype=None)
    if draws.dtype.kind == "f":
        if not np.all(draws == np.round(draws)):
            raise ValueError(f"{name} must contain integer labels, got non-integer values")
    elif draws.dtype.kind not in "iub":
        raise TypeError(f"{name} must contain integer labels, got dtype {draws.dtype}")
    return draws if draws.dtype.kind == "i" else draws.astype(np.int64)


def check_psm(psm: Any, n: int, name: str = "psm") -> np.ndarray:
    """Validate a posterior similarity matrix: (n, n), finite, in [0, 1], symmetric."""
    P = check_array(psm, name, ndim=2, dtype=None)
    if P.dtype.kind not in "iubf":
        raise TypeError(f"{name} must be a real array, got dtype {P.dtype}")
    P = P.astype(np.float64)
    if P.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}) to match the labels, got {P.shape}")
    tol = 1e-9
    if P.min() < -tol or P.max() > 1 + tol:
        raise ValueError(
            f"{name} must hold probabilities in [0, 1], got values in [{P.min()}, {P.max()}]"
        )
    if not np.allclose(P, P.T, rtol=0.0, atol=tol):
        raise ValueError(f"{name} must be symmetric")
    return np.clip(P, 0.0, 1.0)


def canonical_rows(D: np.ndarray) -> np.ndarray:
    """Relabel every row of an (m, n) int array to 0..k-1 in order of first appearance."""
    m, n = D.shape
    _, codes = np.unique(D, return_inverse=True)
    codes = codes.reshape(m, n).astype(np.int64)
    V = int(codes.max()) + 1
    keys = codes + V * np.arange(m, dtype=np.int64)[:, None]
    uniq, first, inv = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    row = uniq // V  # uniq is sorted by row already
    order = np.lexsort((first, row))  # by row, then by position of first occurrence
    row_sorted = row[order]
    starts = np.searchsorted(row_sorted, row_sorted, side="left")
    rank = np.empty(uniq.shape[0], dtype=np.int64)
    rank[order] = np.arange(uniq.shape[0]) - starts
    return rank[inv.reshape(-1)].reshape(m, n)


def set_partitions(n: int):
    """Generate every partition of ``range(n)`` as a label vector.

    Parameters
    ----------
    n : int
        Number of points (>= 0).

    Yields
    ------
    ndarray of int64, shape (n,)
        The partitions as *restricted growth strings*: ``a[0] = 0`` and
        ``a[i] <= 1 + max(a[:i])``, so each partition appears exactly once with its clusters
        numbered ``0..k-1`` in order of first appearance.  They come in lexicographic order,
        starting with the one-cluster partition and ending with all singletons.  For
        ``n = 0`` the single empty partition is yielded.

    Notes
    -----
    The number of partitions is the Bell number :math:`B_n` (1, 1, 2, 5, 15, 52, 203, 877,
    4140, ... for n = 0, 1, 2, ...), so enumeration is only practical for n of about 12 or
    less; it is used for brute-force checks of partition point estimates and samplers.

    References
    ----------
    D. E. Knuth, *The Art of Computer Programming*, vol. 4A, §7.2.1.5 (Algorithm H,
    restricted growth strings), Addison-Wesley, 2011.

    Examples
    --------
    >>> [p.tolist() for p in set_partitions(3)]
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]]
    """
    n = check_int(n, "n", minimum=0)
    if n == 0:
        yield np.zeros(0, dtype=np.int64)
        return
    a = [0] * n
    prefix_max = [0] * n  # prefix_max[i] = max(a[:i]) for i >= 1
    while True:
        yield np.array(a, dtype=np.int64)
        i = n - 1
        while i >= 1 and a[i] == prefix_max[i] + 1:
            i -= 1
        if i == 0:
            return
        a[i] += 1
        for j in range(i + 1, n):
            a[j] = 0
            prefix_max[j] = max(prefix_max[j - 1], a[j - 1])


def binder_loss(labels_a: Any, labels_b: Any) -> float:
    """Binder's loss (equal costs) between two partitions, as a fraction of all pairs.

    Parameters
    ----------
    labels_a, labels_b : array_like of int, shape (n,)
        Any integer values; only the partitions matter.

    Returns
    -------
    float in [0, 1]
        The number of pairs :math:`i < j` on which the partitions disagree (together in
        one, apart in the other), divided by the number of pairs :math:`n(n-1)/2`:

        .. math::

            B(a, b) = \\binom{n}{2}^{-1} \\sum_{i<j}
                \\bigl|\\,[a_i = a_j] - [b_i = b_j]\\,\\bigr|
            = \\binom{n}{2}^{-1} \\Bigl[\\sum_r \\binom{n_{r\\cdot}}{2}
              + \\sum_c \\binom{n_{\\cdot c}}{2} - 2 \\sum_{rc} \\binom{n_{rc}}{2}\\Bigr],

        with :math:`n_{rc}` the contingency table.  0 for ``n = 1`` (no pairs).

    Notes
    -----
    Binder's (1978) loss with unit costs for both kinds of error; the normalisation by the
    number of pairs (ours; Binder and Dahl use the raw count) makes it equal to
    ``1 - rand_score``.  Cost :math:`O(n \\log n + K_a K_b)` from the contingency table.

    References
    ----------
    D. A. Binder, "Bayesian cluster analysis", Biometrika 65(1) (1978) 31-38.
    W. M. Rand, "Objective criteria for the evaluation of clustering methods", JASA 66
    (1971) 846-850.

    Examples
    --------
    >>> binder_loss([0, 0, 1, 1], [0, 0, 0, 1])  # 3 of the 6 pairs disagree
    0.5
    """
    a, b = check_pair(labels_a, labels_b, ("labels_a", "labels_b"))
    n = a.shape[0]
    if n < 2:
        return 0.0
    table = contingency(a, b)

    def pairs(x):
        x = x.astype(np.int64)
        return int(np.sum(x * (x - 1) // 2))

    disagree = pairs(table.sum(axis=1)) + pairs(table.sum(axis=0)) - 2 * pairs(table)
    return disagree / _pairs(n)


def variation_of_information(labels_a: Any, labels_b: Any) -> float:
    """Variation of information between two partitions (nats).

    Parameters
    ----------
    labels_a, labels_b : array_like of int, shape (n,)

    Returns
    -------
    float
        :math:`VI(a, b) = H(a) + H(b) - 2 I(a; b)`, computed from the contingency table
        :math:`n_{rc}` with margins :math:`a_r, b_c` as

        .. math::

            VI = \\frac1n \\Bigl[\\sum_r a_r \\log a_r + \\sum_c b_c \\log b_c
                 - 2 \\sum_{rc} n_{rc} \\log n_{rc}\\Bigr].

        It is a metric on partitions, 0 exactly when they coincide (returned as exactly
        0.0 then) and at most :math:`\\log n`.

    References
    ----------
    M. Meila, "Comparing clusterings -- an information based distance", Journal of
    Multivariate Analysis 98(5) (2007) 873-895.

    Examples
    --------
    >>> round(variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]), 6)  # log 2
    0.693147
    """
    a, b = check_pair(labels_a, labels_b, ("labels_a", "labels_b"))
    table = contingency(a, b)
    nnz = int(np.count_nonzero(table))
    if nnz == table.shape[0] == table.shape[1]:
        return 0.0  # same partition: each row and column has exactly one non-zero cell
    n = a.shape[0]
    vi = (
        xlogx(table.sum(axis=1)).sum()
        + xlogx(table.sum(axis=0)).sum()
        - 2.0 * xlogx(table[table > 0]).sum()
    ) / n
    return float(max(vi, 0.0))


def expected_binder_loss(labels: Any, psm: Any) -> float:
    """Posterior expected Binder loss of a partition, from the posterior similarity matrix.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    psm : array_like, shape (n, n)
        Posterior similarity (co-clustering) matrix :math:`p_{ij} = P(c_i = c_j \\mid X)`,
        e.g. from :func:`co_clustering_matrix`; symmetric with entries in [0, 1].

    Returns
    -------
    float in [0, 1]
        .. math::

            \\mathbb E[B(\\hat c, c) \\mid X] = \\binom{n}{2}^{-1} \\sum_{i<j}
              \\bigl|\\,[\\hat c_i = \\hat c_j] - p_{ij}\\bigr|,

        which equals the mean of :func:`binder_loss` over the draws when ``psm`` is their
        co-clustering matrix (Binder's loss is linear in the pair indicators).  Same
        normalisation as :func:`binder_loss`; 0 for ``n = 1``.

    References
    ----------
    D. A. Binder, "Bayesian cluster analysis", Biometrika 65(1) (1978) 31-38.
    D. B. Dahl, "Model-based clustering for expression data via a Dirichlet process mixture
    model", in *Bayesian Inference for Gene Expression and Proteomics*, CUP (2006).

    Examples
    --------
    >>> psm = co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    >>> expected_binder_loss([0, 0, 1], psm)  # (0.5 + 0 + 0.5) / 3
    0.3333333333333333
    """
    c = check_labels(labels, "labels")
    n = c.shape[0]
    P = check_psm(psm, n)
    if n < 2:
        return 0.0
    same = c[:, None] == c[None, :]
    iu = np.triu_indices(n, k=1)
    return float(np.sum(np.abs(same[iu] - P[iu])) / _pairs(n))


class DrawColumns:
    """Label draws encoded for fast expected-VI computations.

    Each (draw, cluster) pair gets its own column ``t`` in ``[0, T)``; ``cols[s, i]`` is the
    column of point ``i`` in draw ``s`` and ``b_term`` is :math:`\\frac1S\\sum_s\\sum_j
    f(b_{sj})` with :math:`f(x) = x \\log x`.
    """

    def __init__(self, draws: np.ndarray):
        S, n = draws.shape
        canon = canonical_rows(draws)
        sizes = canon.max(axis=1) + 1
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.cols = canon + offsets[:, None]
        self.T = int(sizes.sum())
        self.S, self.n = S, n
        self.fx = xlogx(np.arange(n + 2))  # table of f(x) = x log x for integer counts
        counts = np.bincount(self.cols.ravel(), minlength=self.T)
        self.b_term = float(self.fx[counts].sum()) / S

    def expected_vi(self, c: np.ndarray) -> float:
        """Exact mean VI between compacted labels ``c`` (0..k-1) and the draws."""
        k = int(c.max()) + 1
        a_term = float(self.fx[np.bincount(c, minlength=k)].sum())
        joint = np.bincount((c[None, :] * self.T + self.cols).ravel(), minlength=k * self.T)
        vi = (a_term + self.b_term - 2.0 * float(self.fx[joint].sum()) / self.S) / self.n
        return max(vi, 0.0)


def expected_vi_loss(labels: Any, label_draws: Any) -> float:
    """Posterior expected variation of information of a partition, estimated by the draws.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    label_draws : array_like of int, shape (S, n)
        Posterior draws :math:`c^{(1)}, \\dots, c^{(S)}` of the partition (any integer ids).

    Returns
    -------
    float
        :math:`\\frac1S \\sum_s VI(\\hat c, c^{(s)})` in nats -- the Monte-Carlo estimate of
        :math:`\\mathbb E[VI(\\hat c, c) \\mid X]` (exact for the empirical distribution of the
        draws).

    Notes
    -----
    All draws are processed at once: every (draw, cluster) pair gets a column and the
    joint counts with :math:`\\hat c` come from one ``bincount``, :math:`O(nS + kT)` with
    :math:`T` the total number of clusters over the draws.

    References
    ----------
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626.

    Examples
    --------
    >>> round(expected_vi_loss([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]]), 6)  # log(2)/2
    0.346574
    """
    c = check_labels(labels, "labels")
    draws = check_label_draws(label_draws)
    if draws.shape[1] != c.shape[0]:
        raise ValueError(
            f"label_draws must have one column per point of labels ({c.shape[0]}), "
            f"got shape {draws.shape}"
        )
    return DrawColumns(draws).expected_vi(canonical_rows(c[None, :])[0])


def vi_lower_bounds(C: np.ndarray, P: np.ndarray) -> np.ndarray:
    """VI lower bound for each row of the compacted candidates C (m, n) given psm P."""
    m, n = C.shape
    log_row = np.log(P.sum(axis=1))  # sum_j p_ij >= p_ii = 1 > 0
    out = np.empty(m)
    batch = max(1, 4096 // max(1, int(C.max()) + 1))
    for start in range(0, m, batch):
        block = C[start : start + batch]
        k = int(block.max()) + 1
        cols = block + k * np.arange(block.shape[0])[:, None]
        Z = np.zeros((n, block.shape[0] * k))
        Z[np.tile(np.arange(n), block.shape[0]), cols.ravel()] = 1.0
        PZ = P @ Z  # PZ[i, col] = sum_{j in cluster col} p_ij
        size = Z.sum(axis=0)
        own = cols  # (b, n) column of each point's own cluster
        s_own = PZ[np.arange(n)[None, :], own]  # includes p_ii = 1 > 0
        terms = np.log(size[own]) + log_row[None, :] - 2.0 * np.log(s_own)
        out[start : start + block.shape[0]] = terms.mean(axis=1)
    return out


def vi_lower_bound(labels: Any, psm: Any) -> float:
    """Wade & Ghahramani's psm-based surrogate ("lower bound") of the posterior expected VI.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
        The candidate partition :math:`\\hat c`.
    psm : array_like, shape (n, n)
        Posterior similarity matrix :math:`p_{ij} = P(c_i = c_j \\mid X)`.

    Returns
    -------
    float
        .. math::

            \\mathrm{VI}_{lb}(\\hat c) = \\frac1n \\sum_{i=1}^n \\Bigl[
              \\log \\sum_j [\\hat c_j = \\hat c_i]
              + \\log \\sum_j p_{ij}
              - 2 \\log \\sum_j [\\hat c_j = \\hat c_i]\\, p_{ij}\\Bigr]

        in nats (the paper uses base 2), exactly the function of Wade & Ghahramani (2018,
        Section 3.2; ``VI.lb`` of their R package ``mcclust.ext``).  It needs only the psm,
        so it is cheap; :func:`bayesclust.inference.mixtures.point_estimates.partition_point_estimate` uses it to rank candidates.

    Notes
    -----
    Write :math:`VI(\\hat c, c) = \\frac1n \\sum_i [\\log|\\hat c(i)| + \\log|c(i)| - 2
    \\log|\\hat c(i) \\cap c(i)|]`, with :math:`c(i)` the cluster holding point :math:`i`.
    Jensen's inequality :math:`\\mathbb E \\log|\\hat c(i) \\cap c(i)| \\le \\log
    \\sum_j [\\hat c_j = \\hat c_i] p_{ij}` bounds the only :math:`\\hat c`-dependent
    expectation, so

    .. math::

        \\mathbb E[VI(\\hat c, c) \\mid X] \\ge \\mathrm{VI}_{lb}(\\hat c) - \\Delta,
        \\qquad \\Delta = \\frac1n \\sum_i \\bigl[\\log \\mathbb E|c(i)|
        - \\mathbb E \\log |c(i)|\\bigr] \\ge 0 .

    The term :math:`\\Delta` does not depend on :math:`\\hat c`, so minimising
    :math:`\\mathrm{VI}_{lb}` minimises a lower bound of the expected VI; but
    :math:`\\mathrm{VI}_{lb}` itself is *not* a lower bound in general (the paper's formula
    replaces :math:`\\mathbb E \\log|c(i)|` by the larger :math:`\\log \\sum_j p_{ij}`).

    References
    ----------
    S. Wade and Z. Ghahramani, "Bayesian cluster analysis: point estimation and credible
    balls", Bayesian Analysis 13(2) (2018) 559-626, Section 3.2.

    Examples
    --------
    >>> round(vi_lower_bound([0, 1], [[1.0, 0.0], [0.0, 1.0]]), 6)
    0.0
    """
    c = check_labels(labels, "labels")
    P = check_psm(psm, c.shape[0])
    return float(vi_lower_bounds(canonical_rows(c[None, :]), P)[0])
