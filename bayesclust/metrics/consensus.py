"""Validity of a consensus partition against an ensemble: ANMI, ACC (of one candidate or of a
whole population at once), diversity; ``-1`` marks an object missing from a partition.

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._validation import (
    check_array,
    check_ensemble,
    check_labels,
    integer_labels,
)
from .agreement import ari_of_cells, cells, nmi_of_cells

__all__ = [
    "anmi",
    "acc",
    "acc_population",
    "Diversity",
    "diversity",
]

# ------------------------------------------------------------------ consensus validity indices


def _consensus_cells(consensus_labels: Any, ensemble: Any) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per partition of ``ensemble``, the non-zero cells ``(i, j, n_ij)`` of its contingency
    table with the consensus restricted to the partition's objects (rows: consensus clusters)."""
    c = check_labels(consensus_labels, "consensus_labels")
    E = check_ensemble(ensemble, "ensemble", allow_missing=True)
    if c.shape[0] != E.shape[1]:
        raise ValueError(
            f"consensus_labels has length {c.shape[0]} but the partitions of ensemble label "
            f"{E.shape[1]} objects"
        )
    _, c = np.unique(c, return_inverse=True)
    c = c.reshape(-1)
    kc = int(c.max()) + 1
    out = []
    for l, row in enumerate(E):
        # check_ensemble numbered the clusters 0..K_l-1 and kept -1 for a missing object:
        # shifted by one, the missing objects fill column 0, dropped from the cells, so the
        # table of the objects present costs one bincount and no mask.
        i, j, nij = cells(c, row + 1, kc, int(row.max()) + 2)
        keep = j > 0
        if not keep.any():
            raise ValueError(f"ensemble[{l}] labels no object (every label is -1)")
        if not keep.all():
            i, j, nij = i[keep], j[keep], nij[keep]
        out.append((i, j - 1, nij))
    return out


def anmi(consensus_labels: Any, ensemble: Any, *, per_partition: bool = False) -> float | np.ndarray:
    """Average normalised mutual information between a consensus partition and an ensemble.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*` (any integer ids; ``-1`` is an ordinary id here).
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^1, \\dots, P^N` (:math:`N \\ge 2`), validated by
        :func:`bayesclust._validation.check_ensemble`; ``-1`` marks an object missing from a
        (sub-sampled) partition.  A :class:`~bayesclust.inference.mixtures.posterior.Posterior`
        contributes its pooled label draws.
    per_partition : bool, default False
        Return the ``N`` terms :math:`NMI(P^*_{|O_l}, P^l)` (ndarray of float64, shape
        ``(N,)``) instead of their mean: their spread gives the standard error of ANMI, or of
        the difference of two consensus partitions' ANMI paired by partition.

    Returns
    -------
    float in [0, 1]
        :math:`ANMI(P^*, \\mathbb P) = \\frac1N \\sum_{l=1}^N NMI(P^*_{|O_l}, P^l)`, with
        :math:`NMI = I / \\sqrt{H(P^*) H(P^l)}` (the geometric average, as
        :func:`nmi` with ``average_method="geometric"`` and
        ``sklearn.metrics.normalized_mutual_info_score(average_method="geometric")``),
        each term computed on the objects :math:`O_l` present in :math:`P^l`.  A term is 1
        when both partitions have one cluster on :math:`O_l` and 0 when exactly one has.

    Notes
    -----
    One contingency table (a single ``bincount``) per partition, linear in ``n``.

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002) 583-617, §2 (ANMI, eq. 3-4).

    Examples
    --------
    >>> anmi([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]])
    0.5
    >>> anmi([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 0, 0]], per_partition=True).tolist()
    [1.0, 0.0]
    """
    if not isinstance(per_partition, (bool, np.bool_)):
        raise TypeError(f"per_partition must be a bool, got {type(per_partition).__name__}")
    terms = np.array([nmi_of_cells(*cells, "geometric")
                      for cells in _consensus_cells(consensus_labels, ensemble)], np.float64)
    return terms if per_partition else float(np.mean(terms))


def acc(consensus_labels: Any, ensemble: Any, *, weighted: bool = True,
        per_partition: bool = False) -> float | np.ndarray:
    """Average cluster consistency (ACC) of a consensus partition with an ensemble.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*` with clusters :math:`C^*_k`.
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^l` with clusters :math:`C^l_m`; ``-1`` marks an object
        missing from a partition (see :func:`anmi`).
    weighted : bool, default True
        Multiply each overlap by :math:`1 - |C^*_k| / n_l`; False drops the weight.
    per_partition : bool, default False
        Return the ``N`` terms :math:`sim(P^*, P^l)` (ndarray of float64, shape ``(N,)``)
        instead of their mean (as in :func:`anmi`).

    Returns
    -------
    float in [0, 1)
        :math:`ACC(P^*, \\mathbb P) = \\frac1N \\sum_l sim(P^*, P^l)` with

        .. math::

            sim(P^*, P^l) = \\frac1{n_l} \\sum_{m=1}^{K^l} \\max_{1 \\le k \\le K^*}
            \\Big[ |C^*_k \\cap C^l_m| \\Big(1 - \\frac{|C^*_k|}{n_l}\\Big) \\Big],

        where :math:`P^*` is restricted to the :math:`n_l` objects of :math:`P^l` (cluster
        sizes :math:`|C^*_k|` counted on them).  :math:`sim` is large when every cluster of
        :math:`P^l` lies inside one consensus cluster; the weight penalises consensus
        partitions with a giant cluster (for :math:`P^l` nested in :math:`P^*` it gives
        :math:`1 - \\sum_k (|C^*_k| / n_l)^2`).  Without the weight the range is (0, 1].

    Notes
    -----
    The papers state :math:`sim` for :math:`K^l \\ge K^*`.  A partition with fewer clusters
    is scored by the same formula, neither skipped nor warned about: its clusters cannot all
    lie inside consensus clusters, so it scores lower, and the value stays finite.  A
    one-cluster consensus scores 0 with the weight (every weight is 0) and 1 without; an
    all-singleton consensus scores :math:`K^l (1 - 1/n_l) / n_l` (weighted) or
    :math:`K^l / n_l` per partition.

    The weight sits inside the maximum, as in eq. (9) of Duarte et al. (2010); the ACC paper's
    eq. (3) prints it outside, with ``k`` unbound (docs/deviations.md#acc-weight).

    References
    ----------
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009, eq. (3).
    F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
    validation", SSPR 2010, eq. (9).

    Examples
    --------
    >>> acc([0, 0, 1, 1], [[0, 1, 2, 3], [0, 0, 1, 1]])
    0.5
    >>> acc([0, 0, 1, 1], [[0, 1, 2, 3], [0, 0, 1, 1]], weighted=False)
    1.0
    """
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be a bool, got {type(weighted).__name__}")
    if not isinstance(per_partition, (bool, np.bool_)):
        raise TypeError(f"per_partition must be a bool, got {type(per_partition).__name__}")
    sims = []
    for i, j, nij in _consensus_cells(consensus_labels, ensemble):
        n_l = nij.sum()
        value = nij.astype(np.float64)
        if weighted:
            value *= 1.0 - np.bincount(i, weights=nij)[i] / n_l
        # Every column of the table has a non-zero cell and the values are >= 0, so the
        # maximum over the cells present is the maximum over all consensus clusters.
        best = np.zeros(int(j.max()) + 1)
        np.maximum.at(best, j, value)
        sims.append(best.sum() / n_l)
    return np.asarray(sims, np.float64) if per_partition else float(np.mean(sims))


class EnsembleOneHot(NamedTuple):
    """An ensemble prepared for :func:`acc_population`: its one-hot matrix and bookkeeping."""

    B: np.ndarray  # (n, sum_l K_l) float64, column of cluster m of partition l
    observed: np.ndarray  # (n, N) float64, 1 where object i is labelled by partition l
    n_l: np.ndarray  # (N,) objects labelled by each partition
    part: np.ndarray  # (sum_l K_l,) the partition of each column
    starts: np.ndarray  # (N,) first column of each partition


def ensemble_one_hot(ensemble: Any) -> EnsembleOneHot:
    E = check_ensemble(ensemble, "ensemble", allow_missing=True)
    N, n = E.shape
    ks = E.max(axis=1) + 1
    if np.any(ks <= 0):
        raise ValueError(f"ensemble[{int(np.argmax(ks <= 0))}] labels no object (every label is -1)")
    starts = np.concatenate([[0], np.cumsum(ks)[:-1]]).astype(np.int64)
    obs = E >= 0
    rows, parts = np.nonzero(obs.T)
    B = np.zeros((n, int(ks.sum())))
    B[rows, E.T[rows, parts] + starts[parts]] = 1.0
    part = np.repeat(np.arange(N), ks)
    return EnsembleOneHot(B, obs.T.astype(np.float64), obs.sum(axis=1).astype(np.float64), part, starts)


def candidate_codes(candidates: Any, n: int, name: str = "candidates") -> np.ndarray:
    P = integer_labels(check_array(candidates, name, ndim=2, min_samples=1, dtype=None), name)
    if P.shape[1] != n:
        raise ValueError(f"{name} has {P.shape[1]} columns but the partitions of ensemble label {n} objects")
    # Renumber every row 0..K-1 in label order: the rank of each label among the row's labels,
    # read from a (rows x label range) table when the range is small (a GA's population),
    # else one np.unique per row.
    P = P.astype(np.int64)
    P = P - P.min(axis=1, keepdims=True)
    span = int(P.max()) + 1
    rows = np.arange(P.shape[0])[:, None]
    if span <= 4 * n:
        present = np.zeros((P.shape[0], span), bool)
        present[rows, P] = True
        return (np.cumsum(present, axis=1) - 1)[rows, P]
    return np.stack([np.unique(row, return_inverse=True)[1].reshape(-1) for row in P])


def acc_of_codes(codes: np.ndarray, prep: EnsembleOneHot, weighted: bool = True) -> np.ndarray:
    """ACC of every row of ``codes`` ((p, n), each row in 0..K-1) against a prepared ensemble."""
    p, n = codes.shape
    kc = int(codes.max()) + 1
    A = np.zeros((p, kc, n))
    A[np.arange(p)[:, None], codes, np.arange(n)[None, :]] = 1.0
    A = A.reshape(p * kc, n)
    T = (A @ prep.B).reshape(p, kc, -1)  # |C*_k ∩ C^l_m|, exact integers in float64
    if weighted:
        sizes = (A @ prep.observed).reshape(p, kc, -1)  # |C*_k| restricted to the objects of P^l
        T = T * (1.0 - sizes / prep.n_l)[:, :, prep.part]
    best = T.max(axis=1)  # (p, sum_l K_l)
    sims = np.add.reduceat(best, prep.starts, axis=1) / prep.n_l
    return sims.mean(axis=1)


def acc_population(candidates: Any, ensemble: Any, *, weighted: bool = True) -> np.ndarray:
    r"""Average cluster consistency (:func:`acc`) of many consensus partitions at once.

    Parameters
    ----------
    candidates : array_like of int, shape (p, n)
        ``p`` consensus partitions (any integer labels per row).
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        As in :func:`acc` (``-1`` marks an object missing from a partition).
    weighted : bool, default True
        As in :func:`acc`.

    Returns
    -------
    ndarray of float64, shape (p,)
        ``acc(candidates[r], ensemble, weighted=weighted)`` for every row ``r`` (equal up to
        the rounding of the sums).

    Notes
    -----
    The contingency tables of all candidates with all partitions come from one matrix
    product of one-hot encodings, :math:`T = A^\top B` with ``A`` of shape
    ``(n, p K^*)`` and ``B`` of shape ``(n, \sum_l K^l)``; the consensus cluster sizes
    restricted to the objects of each partition from a second one with the ``(n, N)``
    indicator of the labelled objects.  Memory is ``O(p K^* (n + \sum_l K^l))``.  Used to
    score a whole population of a genetic algorithm per generation (Duarte et al., 2010,
    ACCCS).

    References
    ----------
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009, eq. (3).
    F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
    validation", SSPR 2010, eq. (9).

    Examples
    --------
    >>> acc_population([[0, 0, 1, 1], [0, 0, 0, 0]], [[0, 1, 2, 3], [0, 0, 1, 1]]).tolist()
    [0.5, 0.0]
    """
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be a bool, got {type(weighted).__name__}")
    prep = ensemble_one_hot(ensemble)
    codes = candidate_codes(candidates, prep.B.shape[0])
    return acc_of_codes(codes, prep, bool(weighted))


class Diversity(NamedTuple):
    """The four diversity indices of a consensus partition and an ensemble (see :func:`diversity`).

    Attributes
    ----------
    div1 : float
        Mean disagreement :math:`\\frac1N \\sum_l (1 - R_l)`, in [0, 1].
    div2 : float
        Standard deviation of the disagreements (denominator :math:`N - 1`), in [0, 1].
    div3 : float
        :math:`(1 - Div_1 + Div_2) / 2`, in [0, 1].
    div4 : float
        Coefficient of variation :math:`Div_2 / Div_1`; 0 when :math:`Div_1 = 0`.
    """

    div1: float
    div2: float
    div3: float
    div4: float


def diversity(consensus_labels: Any, ensemble: Any) -> Diversity:
    """Diversity indices Div1..Div4 of an ensemble with respect to a consensus partition.

    Parameters
    ----------
    consensus_labels : array_like of int, shape (n,)
        The consensus partition :math:`P^*`.
    ensemble : array_like of int, shape (N, n), list of N label vectors, ``Ensemble`` or Posterior
        The partitions :math:`P^l`, :math:`N \\ge 2`; ``-1`` marks an object missing from a
        partition (see :func:`anmi`).

    Returns
    -------
    Diversity
        With :math:`R_l = \\max(0, ARI(P^l, P^*))` (:func:`ari` on the objects of
        :math:`P^l`) and :math:`d_l = 1 - R_l`:

        .. math::

            Div_1 = \\frac1N \\sum_l d_l, \\quad
            Div_2 = \\sqrt{\\frac1{N-1} \\sum_l (d_l - Div_1)^2}, \\quad
            Div_3 = \\frac12 (1 - Div_1 + Div_2), \\quad
            Div_4 = \\frac{Div_2}{Div_1}.

        When :math:`Div_1 = 0` (every partition equals the consensus on its objects) every
        :math:`d_l` is 0, so :math:`Div_2 = 0` and :math:`Div_4` is defined as 0.  A single
        partition is rejected (``ValueError``), so the :math:`N - 1` of :math:`Div_2` is
        never 0.

    Notes
    -----
    The papers write the Rand index "in [0, 1]" but use the adjusted Rand index, which can be
    negative; it is clipped at 0 so that every :math:`d_l` lies in [0, 1]
    (docs/deviations.md#diversity-ari-clip).

    References
    ----------
    S. T. Hadjitodorov, L. I. Kuncheva and L. P. Todorova, "Moderate diversity for better
    cluster ensembles", Information Fusion 7(3) (2006) 264-275.
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009.

    Examples
    --------
    >>> diversity([0, 0, 1, 1], [[0, 0, 1, 1], [0, 0, 1, 1]])
    Diversity(div1=0.0, div2=0.0, div3=0.5, div4=0.0)
    """
    d = np.array([1.0 - max(0.0, ari_of_cells(*cells))
                  for cells in _consensus_cells(consensus_labels, ensemble)])
    div1 = float(np.mean(d))
    div2 = float(np.sqrt(np.sum((d - div1) ** 2) / (d.shape[0] - 1)))
    div4 = div2 / div1 if div1 > 0.0 else 0.0
    return Diversity(div1, div2, 0.5 * (1.0 - div1 + div2), div4)
