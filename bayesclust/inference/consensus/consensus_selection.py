r"""Choosing a consensus partition with validity indices.

Evidence accumulation yields many candidate consensus partitions -- one per linkage and
number of clusters; other consensus functions of the same ensemble join them: PEnCA
(:func:`~bayesclust.inference.consensus.aspect_em.aspect_em`), PPC (:func:`~bayesclust.inference.consensus.ppc.ppc`)
and Strehl & Ghosh's CSPA and MCLA (:mod:`~bayesclust.inference.consensus.hypergraph`).  Duarte, Fred, Lourenço & Duarte (2010) score every candidate with a
validity index and keep the best one:

* against the ensemble: the average cluster consistency ACC and the average normalised
  mutual information ANMI (keep the maximum), the diversities Div1 and Div3 of
  Hadjitodorov et al. (keep the candidate with the median value);
* on the co-association read as a similarity (``space="similarity"``) or on the data
  (``space="data"``): the silhouette S, Dunn's index D and the likelihood index L (keep the
  maximum) and the Davies-Bouldin index DB (keep the minimum).

Pipeline::

    ens = kmeans_ensemble(0, X)
    C = coassociation(ens)
    cands = consensus_candidates(C, ("single", "average", "ward"), range(2, 7))
    best = select_consensus(cands, ens, criterion="acc")   # best.labels, best.scores
    cands = consensus_candidates(C, ("average", "cspa", "mcla", "penca", "ppc"), 3, ensemble=ens)

Every index accepts a :class:`~bayesclust.inference.mixtures.posterior.Posterior` as the ensemble,
so a sampled solution is scored like any consensus.

References
----------
F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
validation", SSPR 2010 (the validity indices in similarity space, the likelihood index,
the selection experiments).
F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
for cluster ensemble selection", IC3K / KDIR 2009 (ACC; selection by max ACC / ANMI and by
median Div1 / Div3).
A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
multiple partitions", JMLR 3 (2002) (CSPA, MCLA; the consensus of highest ANMI among them).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ... import _validation as V
from ... import metrics
from .coassociation import CoAssociation, as_coassociation
from .hypergraph import cspa, mcla
from .linkage import LINKAGE_METHODS, cut_tree_at, linkage_consensus

__all__ = [
    "CONSENSUS_FUNCTIONS",
    "CRITERIA",
    "ConsensusCandidates",
    "ConsensusSelection",
    "consensus_candidates",
    "select_consensus",
    "validity_index",
]

#: The consensus functions :func:`consensus_candidates` knows: the linkages of
#: :func:`~bayesclust.inference.consensus.linkage.linkage_consensus`, then CSPA, MCLA, PEnCA and PPC.
CONSENSUS_FUNCTIONS = LINKAGE_METHODS + ("cspa", "mcla", "penca", "ppc")

#: criterion -> (rule, needs): how each index chooses ("max", "min", "median") and what it
#: reads ("ensemble", or "space": the co-association or the data, by ``space``).
CRITERIA: dict[str, tuple[str, str]] = {
    "acc": ("max", "ensemble"),
    "anmi": ("max", "ensemble"),
    "div1": ("median", "ensemble"),
    "div3": ("median", "ensemble"),
    "silhouette": ("max", "space"),
    "dunn": ("max", "space"),
    "davies_bouldin": ("min", "space"),
    "likelihood": ("max", "space"),
}


class ConsensusCandidates(NamedTuple):
    """Candidate consensus partitions (result of :func:`consensus_candidates`).

    Attributes
    ----------
    labels : ndarray of int64, shape (m, n)
        One partition per row, clusters numbered by first appearance.
    methods : tuple of str, length m
        The consensus function of each candidate (a linkage, ``"cspa"``, ``"mcla"``,
        ``"penca"`` or ``"ppc"``).
    n_clusters : ndarray of int64, shape (m,)
        Its number of clusters.
    coassociation : CoAssociation
        The co-association the candidates were cut from (the similarity of ``space="similarity"``).
    """

    labels: np.ndarray
    methods: tuple
    n_clusters: np.ndarray
    coassociation: CoAssociation


class ConsensusSelection(NamedTuple):
    r"""The consensus partition a validity index chooses (result of :func:`select_consensus`).

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        The chosen candidate.
    index : int
        Its row in the candidates.
    method : str
        Its consensus function (a linkage, ``"cspa"``, ``"mcla"``, ``"penca"`` or ``"ppc"``).
    n_clusters : int
        The number of clusters it was asked for (CSPA, MCLA, PEnCA and PPC can leave a
        cluster empty: ``labels`` then holds fewer).
    criterion : str
    space : str or None
        ``"similarity"`` or ``"data"`` for the indices that read one, else None.
    scores : ndarray of float64, shape (m,)
        The index of every candidate (finite for every candidate, degenerate ones included).
    standard_errors : ndarray of float64, shape (m,) or None
        For ``"acc"`` and ``"anmi"`` (means of one term per partition of the ensemble): the
        standard error of ``scores[index] - scores[j]`` paired by partition,
        :math:`\mathrm{sd}_l(t_{\ast l} - t_{jl}) / \sqrt N` with :math:`t_{jl}` candidate
        ``j``'s term for partition ``l`` (0 for the chosen candidate and its ties); None for
        the other criteria.  A candidate within about two standard errors of the chosen one
        is not told apart from it by the index on this ensemble: the choice between them is
        then as good as arbitrary (docs/deviations.md#consensus-selection-noise).
    """

    labels: np.ndarray
    index: int
    method: str
    n_clusters: int
    criterion: str
    space: str | None
    scores: np.ndarray
    standard_errors: np.ndarray | None = None


def default_k_range(n: int) -> range:
    r"""Numbers of clusters tried when none are given: :math:`2, \dots, \lceil\sqrt n\,\rceil` (at most ``n``)."""
    return range(2, max(2, min(n, math.ceil(math.sqrt(n)))) + 1)


def consensus_candidates(
    coassoc: Any,
    methods: Any = ("single", "average", "complete", "centroid", "ward"),
    k_range: Any = None,
    *,
    ensemble: Any = None,
    rng_key: Any = 0,
) -> ConsensusCandidates:
    r"""Candidate consensus partitions: every consensus function at every number of clusters.

    Parameters
    ----------
    coassoc : CoAssociation or ensemble
        A :class:`~bayesclust.inference.consensus.coassociation.CoAssociation` or anything
        :func:`~bayesclust.inference.consensus.coassociation.coassociation` accepts (then also the
        ensemble MCLA reads, unless ``ensemble`` is given).
    methods : str or sequence of str, default ("single", "average", "complete", "centroid", "ward")
        Consensus functions among :data:`CONSENSUS_FUNCTIONS`: linkages of
        :func:`~bayesclust.inference.consensus.linkage.linkage_consensus` (the five of the validation
        paper's experiments are the default; one dendrogram is built per linkage and cut
        exactly, by merge order), ``"cspa"`` and ``"mcla"``
        (:func:`~bayesclust.inference.consensus.hypergraph.cspa`, :func:`~bayesclust.inference.consensus.hypergraph.mcla`),
        ``"penca"`` (:func:`~bayesclust.inference.consensus.aspect_em.aspect_em`, ``n_aspects`` = K)
        and ``"ppc"`` (:func:`~bayesclust.inference.consensus.ppc.ppc`), each with its default settings.
    k_range : int, sequence of int or range, optional
        Numbers of clusters, each in ``1..n``; default :math:`2, \dots, \lceil\sqrt n\,\rceil`.
    ensemble : array_like (N, n), list, Ensemble or Posterior, optional
        The partitions, for ``"mcla"`` when ``coassoc`` is a :class:`CoAssociation`.
    rng_key : jax.random key or int, default 0
        Seeds CSPA, MCLA, PEnCA and PPC (one key per function and number of clusters).

    Returns
    -------
    ConsensusCandidates
        ``len(methods) * len(k_range)`` candidates, method-major.

    Examples
    --------
    >>> ens = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> cands = consensus_candidates(ens, ("single", "average"), [2, 3])
    >>> cands.labels.shape, cands.methods, cands.n_clusters.tolist()
    ((4, 6), ('single', 'single', 'average', 'average'), [2, 3, 2, 3])
    >>> consensus_candidates(ens, ("cspa", "mcla"), 2).labels.tolist()
    [[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]]
    """
    methods = _check_methods(methods)
    if ensemble is None and not isinstance(coassoc, CoAssociation):
        ensemble = coassoc
    if "mcla" in methods and ensemble is None:
        raise ValueError("methods 'mcla' needs the ensemble (ensemble=...): a CoAssociation does not hold the clusters")
    C = as_coassociation(coassoc)
    n = C.n_samples
    if ensemble is not None and "mcla" in methods:
        n_ens = V.check_ensemble(ensemble, allow_missing=_missing(C)).shape[1]
        if n_ens != n:
            raise ValueError(f"ensemble labels {n_ens} objects but coassoc describes {n}")
    ks = default_k_range(n) if k_range is None else k_range
    ks = [ks] if isinstance(ks, (int, np.integer)) else list(ks)
    if not ks:
        raise ValueError("k_range must hold at least one number of clusters")
    ks = [V.check_int(k, "k_range", minimum=1) for k in ks]
    if max(ks) > n:
        raise ValueError(f"k_range must hold numbers of clusters at most n = {n}, got {max(ks)}")
    seeds = V.as_numpy_rng(rng_key).integers(0, 2**31 - 1, size=(len(methods), len(ks)))
    labels, names, counts = [], [], []
    for a, m in enumerate(methods):
        Z = linkage_consensus(C, m).linkage if m in LINKAGE_METHODS else None
        for b, k in enumerate(ks):
            labels.append(_candidate(m, C, ensemble, k, Z, int(seeds[a, b])))
            names.append(m)
            counts.append(k)
    return ConsensusCandidates(np.stack(labels).astype(np.int64), tuple(names),
                               np.asarray(counts, np.int64), C)


def _missing(C: CoAssociation) -> bool:
    """Whether some partition of ``C``'s ensemble leaves an object out (``-1`` marks it)."""
    return bool(np.any(C.sampled < C.n_partitions))


def _candidate(method: str, C: CoAssociation, ensemble: Any, k: int, Z: Any, seed: int) -> np.ndarray:
    """One candidate: a linkage cut, or CSPA / MCLA / PEnCA / PPC with ``k`` clusters."""
    if Z is not None:
        return cut_tree_at(Z, k)
    if method == "cspa":
        return cspa(seed, C, k).labels
    if method == "mcla":
        return mcla(seed, ensemble, k, allow_missing=_missing(C)).labels
    if k == 1:
        return np.zeros(C.n_samples, np.int64)
    if method == "penca":
        from .aspect_em import aspect_em

        return np.asarray(aspect_em(seed, C, k).labels, np.int64)
    from .ppc import ppc

    return np.asarray(ppc(seed, C, k).labels, np.int64)


def _check_methods(methods: Any) -> tuple[str, ...]:
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    if not methods:
        raise ValueError("methods must name at least one consensus function")
    for m in methods:
        if not isinstance(m, str) or m not in CONSENSUS_FUNCTIONS:
            raise ValueError(f"methods must be consensus functions among {CONSENSUS_FUNCTIONS}, got {m!r}")
    return methods


def validity_index(
    labels: Any,
    criterion: str,
    ensemble: Any = None,
    *,
    coassoc: Any = None,
    X: Any = None,
    space: str = "similarity",
    n_neighbors: int | None = None,
) -> float:
    r"""One validity index of one partition, by its criterion name (see :data:`CRITERIA`).

    Parameters
    ----------
    labels : array_like of int, shape (n,)
    criterion : str
        A key of :data:`CRITERIA`.
    ensemble : ensemble or Posterior, optional
        For ``"acc"``, ``"anmi"``, ``"div1"``, ``"div3"``.
    coassoc : CoAssociation, ndarray or sparse matrix, optional
        The similarity of ``space="similarity"`` (and the neighbours of the likelihood index).
    X : array_like, shape (n, d), optional
        The data of ``space="data"``.
    space : {"similarity", "data"}

    Returns
    -------
    float
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
    labels = V.check_labels(labels, "labels")  # named here, not as the metric's argument
    if CRITERIA[criterion][1] == "ensemble":
        if ensemble is None:
            raise ValueError(f"criterion {criterion!r} needs the ensemble")
        if criterion == "acc":
            return float(metrics.acc(labels, ensemble))
        if criterion == "anmi":
            return float(metrics.anmi(labels, ensemble))
        return float(getattr(metrics.diversity(labels, ensemble), criterion))
    if space not in ("similarity", "data"):
        raise ValueError(f"space must be 'similarity' or 'data', got {space!r}")
    if space == "data" and X is None:
        raise ValueError(f"criterion {criterion!r} with space='data' needs X")
    if criterion == "likelihood":
        if coassoc is None:
            raise ValueError("criterion 'likelihood' needs coassoc (its neighbours come from the similarity)")
        return float(metrics.likelihood_index(labels, S=coassoc, X=X if space == "data" else None,
                                              n_neighbors=n_neighbors))
    index = getattr(metrics, criterion)
    if space == "data":
        return float(index(X, labels, space="data"))
    if coassoc is None:
        raise ValueError(f"criterion {criterion!r} with space='similarity' needs coassoc")
    return float(index(coassoc, labels, space="similarity"))


def select_consensus(
    candidates: Any,
    ensemble: Any = None,
    criterion: str = "acc",
    *,
    space: str = "similarity",
    X: Any = None,
    n_neighbors: int | None = None,
) -> ConsensusSelection:
    r"""The candidate consensus partition a validity index prefers.

    Parameters
    ----------
    candidates : ConsensusCandidates
        From :func:`consensus_candidates`.
    ensemble : array_like (N, n), list of label vectors, ``Ensemble`` or Posterior, optional
        The partitions the consensus summarises; needed by ``"acc"``, ``"anmi"``, ``"div1"``,
        ``"div3"``.
    criterion : {"acc", "anmi", "div1", "div3", "silhouette", "dunn", "davies_bouldin", "likelihood"}
        ``acc`` (:func:`bayesclust.metrics.acc`), ``anmi``, ``silhouette``, ``dunn`` and
        ``likelihood`` choose their maximum, ``davies_bouldin`` its minimum, and ``div1`` /
        ``div3`` (:func:`bayesclust.metrics.diversity`) the candidate with the median value
        (of an even number of candidates, the lower median).  Ties go to the first candidate,
        except the silhouette's in similarity space, which go to the candidate with the most
        clusters: it is 1 for every partition whose clusters share no co-association, so a
        coarser tied candidate merges blocks no partition of the ensemble ever joined (five
        separated blobs at n = 20,000 tied at 1 for 2, 3, 4 and 5 clusters).
    space : {"similarity", "data"}, default "similarity"
        Where ``silhouette``, ``dunn``, ``davies_bouldin`` and ``likelihood`` measure: on the
        co-association :math:`C` as a similarity (subscript s in the papers) or on ``X``
        with Euclidean distances (subscript o; the likelihood index then takes its cell
        volumes from ``X`` and its neighbours from :math:`C`).
    X : array_like, shape (n, d), optional
        The data, for ``space="data"``.
    n_neighbors : int, optional
        :math:`K_N` of the likelihood index (:func:`bayesclust.metrics.likelihood_index`).

    Returns
    -------
    ConsensusSelection
        With ``"acc"`` and ``"anmi"`` also the standard errors of the chosen candidate's lead
        over every other, paired by partition (``standard_errors``): the maximum is kept
        whatever its lead, as the papers do (Strehl & Ghosh's supra-consensus, §4), and the
        standard errors say whether the lead is more than noise.

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002), §4 (the consensus of highest ANMI).
    F. J. Duarte, A. Fred, A. Lourenço and J. M. M. Duarte, "On consensus clustering
    validation", SSPR 2010, §3-4.
    F. J. Duarte, J. M. M. Duarte, A. Fred and M. F. Rodrigues, "Average cluster consistency
    for cluster ensemble selection", IC3K / KDIR 2009, §4.

    Examples
    --------
    >>> ens = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> best = select_consensus(consensus_candidates(ens, "average", [2, 3]), ens, "anmi")
    >>> best.n_clusters, best.labels.tolist()
    (2, [0, 0, 0, 1, 1, 1])
    >>> best.standard_errors.shape
    (2,)
    """
    if not isinstance(candidates, ConsensusCandidates):
        raise TypeError("candidates must be the ConsensusCandidates of consensus_candidates(...)")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
    rule, needs = CRITERIA[criterion]
    n = candidates.labels.shape[1]
    if needs == "ensemble":
        if ensemble is None:
            raise ValueError(f"criterion {criterion!r} needs the ensemble")
        space = None
    else:
        if space not in ("similarity", "data"):
            raise ValueError(f"space must be 'similarity' or 'data', got {space!r}")
        if space == "data":
            if X is None:
                raise ValueError(f"criterion {criterion!r} with space='data' needs X")
            X = V.check_array(X, "X")
            V.check_point_range(X, "X")
            if X.shape[0] != n:
                raise ValueError(f"X has {X.shape[0]} rows but the candidates label {n} objects")
    terms = None
    if criterion in ("acc", "anmi"):
        index = metrics.acc if criterion == "acc" else metrics.anmi
        terms = np.stack([index(lab, ensemble, per_partition=True) for lab in candidates.labels])
        scores = terms.mean(axis=1)
    else:
        scores = np.array([validity_index(lab, criterion, ensemble, coassoc=candidates.coassociation, X=X,
                                          space=space or "similarity", n_neighbors=n_neighbors)
                           for lab in candidates.labels], np.float64)
    if rule == "max" and criterion == "silhouette" and space == "similarity":
        tied = np.flatnonzero(scores == scores.max())
        best = int(tied[np.argmax(candidates.n_clusters[tied])])
    elif rule == "max":
        best = int(np.argmax(scores))
    elif rule == "min":
        best = int(np.argmin(scores))
    else:
        median = np.sort(scores)[(len(scores) - 1) // 2]
        best = int(np.flatnonzero(scores == median)[0])
    se = None
    if terms is not None:
        diff = terms[best][None, :] - terms  # (m, N), paired by partition
        N = terms.shape[1]
        se = diff.std(axis=1, ddof=1) / np.sqrt(N) if N > 1 else np.zeros(len(scores))
    return ConsensusSelection(candidates.labels[best], best, candidates.methods[best],
                              int(candidates.n_clusters[best]), criterion, space, scores, se)
