r"""Strehl & Ghosh's graph consensus functions: CSPA and MCLA.

Both read an ensemble of ``N`` partitions as a **hypergraph**: one hyperedge per cluster of
every partition, the binary indicator matrix :math:`H` (``n x sum_l K_l``) of Strehl &
Ghosh (2002), §3.

* **CSPA** (cluster-based similarity partitioning) partitions the similarity graph
  :math:`S = \frac1N H H^\top` -- the co-association, the fraction of partitions putting
  two objects together -- into ``K`` parts (§3.2).
* **MCLA** (meta-clustering) weighs every pair of hyperedges by their Jaccard similarity,
  partitions this meta-graph into ``K`` meta-clusters, collapses each meta-cluster's
  hyperedges into an association vector (the mean of their indicators), and gives every
  object to the meta-cluster it is most associated with, ties at random (§3.4).

The paper partitions both graphs with METIS (balanced, minimum edge cut); bayesclust has no
METIS and uses the normalised-cut spectral partition of Ng, Jordan & Weiss (2001)
(:func:`~bayesclust.inference.consensus.ensembles.njw_partition`, the partitioner of the spectral base
clusterer), which does not force balanced parts (docs/deviations.md#cspa-mcla-partitioner).

Pipeline::

    ens = kmeans_ensemble(0, X)
    cspa = hypergraph_consensus(0, ens, 3, "cspa")    # or coassociation(ens) for CSPA
    mcla = hypergraph_consensus(0, ens, 3, "mcla")

References
----------
A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
multiple partitions", JMLR 3 (2002) 583-617.
A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering: analysis and an algorithm",
NIPS 2001.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from .coassociation import CoAssociation, as_coassociation
from .ensembles import njw_partition

__all__ = ["HYPERGRAPH_METHODS", "HypergraphResult", "hypergraph_consensus", "cspa", "mcla",
           "hyperedges"]

#: The consensus functions :func:`hypergraph_consensus` knows.
HYPERGRAPH_METHODS = ("cspa", "mcla")


class HypergraphResult(NamedTuple):
    """Result of :func:`cspa`, :func:`mcla` and :func:`hypergraph_consensus`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        The consensus, clusters numbered ``0..n_clusters-1`` by first appearance.
    n_clusters : int
        Its number of clusters (at most the ``K`` asked for: a part, or a meta-cluster no
        object is most associated with, stays empty).
    method : str
        ``"cspa"`` or ``"mcla"``.
    meta_labels : ndarray of int64, shape (n_hyperedges,) or None
        MCLA: the meta-cluster of every hyperedge (columns of :func:`hyperedges`).
    association : ndarray of float64, shape (n, K) or None
        MCLA: the association of every object with every meta-cluster (mean of the
        meta-cluster's hyperedge indicators).
    """

    labels: np.ndarray
    n_clusters: int
    method: str
    meta_labels: np.ndarray | None = None
    association: np.ndarray | None = None


def _first_appearance(labels: np.ndarray) -> tuple[np.ndarray, int]:
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inv.ravel()], int(first.shape[0])


def hyperedges(ensemble: Any, *, allow_missing: bool | None = None) -> sp.csc_matrix:
    r"""The hypergraph of an ensemble: one binary column per cluster of every partition.

    :math:`H = [H^{(1)} \dots H^{(N)}]`, :math:`h^{(l)}_{ik} = [\ell^l_i = k]` (Strehl &
    Ghosh 2002, §3, Table 2); an object missing from a partition (``-1``) is in none of its
    hyperedges.

    Parameters
    ----------
    ensemble : array_like (N, n), list, Ensemble or Posterior
        See :func:`~bayesclust._validation.check_ensemble`.
    allow_missing : bool, optional

    Returns
    -------
    scipy.sparse.csc_matrix of float64, shape (n, sum_l K_l)
        Partition-major columns, each partition's clusters in order of first appearance
        (so renaming a partition's clusters changes nothing downstream).

    Examples
    --------
    >>> hyperedges([[0, 0, 1], [1, 0, 0]]).toarray()  # partition 2's cluster "1" comes first
    array([[1., 0., 1., 0.],
           [1., 0., 0., 1.],
           [0., 1., 0., 1.]])
    """
    codes = V.check_ensemble(ensemble, allow_missing=allow_missing).copy()
    N, n = codes.shape
    for l in range(N):
        seen = codes[l] >= 0
        if np.any(seen):
            codes[l, seen] = _first_appearance(codes[l, seen])[0]
    sizes = np.array([int(codes[l].max()) + 1 if np.any(codes[l] >= 0) else 0 for l in range(N)])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    obs = codes >= 0
    part, obj = np.nonzero(obs)
    cols = codes[part, obj] + offsets[part]
    H = sp.csc_matrix((np.ones(obj.shape[0]), (obj, cols)), shape=(n, int(offsets[-1])))
    # check_ensemble numbers every partition's clusters 0..K_l-1, so no column is empty
    return H


def _check_k(n_clusters: Any, upper: int, what: str) -> int:
    k = V.check_int(n_clusters, "n_clusters", minimum=1)
    if k > upper:
        raise ValueError(f"n_clusters must be at most the number of {what} {upper}, got {k}")
    return k


def cspa(rng_key: Any, coassoc: Any, n_clusters: int, *, n_init: int = 10, max_iter: int = 300
         ) -> HypergraphResult:
    r"""CSPA: partition the co-association graph into ``n_clusters`` parts (Strehl & Ghosh 2002, §3.2).

    The similarity :math:`S = \frac1N H H^\top`, :math:`S_{ij}` the fraction of partitions
    putting ``i`` and ``j`` in one cluster (with missing objects, of the partitions holding
    both: :meth:`CoAssociation.normalized`), is the weighted adjacency of a graph on the
    objects (self-loops dropped); its normalised-cut spectral partition
    (:func:`~bayesclust.inference.consensus.ensembles.njw_partition`, in place of the paper's METIS:
    docs/deviations.md#cspa-mcla-partitioner) is the consensus.  The sparse co-association is
    kept sparse above 2,000 objects (ARPACK).

    Parameters
    ----------
    rng_key : jax.random key or int
        Seeds the k-means starts on the eigenvectors.
    coassoc : CoAssociation or ensemble
        A :class:`~bayesclust.inference.consensus.coassociation.CoAssociation` or anything
        :func:`~bayesclust.inference.consensus.coassociation.coassociation` accepts.
    n_clusters : int
        ``K``, at most ``n``.
    n_init : int, default 10
        k-means starts on the spectral embedding (the smallest sum of squares is kept).
    max_iter : int, default 300
        Lloyd iterations per start.

    Returns
    -------
    HypergraphResult

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002), §3.2.

    Examples
    --------
    >>> ens = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> cspa(0, ens, 2).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    C = as_coassociation(coassoc)
    n = C.n_samples
    k = _check_k(n_clusters, n, "objects")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    rng = V.as_numpy_rng(rng_key)
    U = C.normalized()
    S = (U + U.T).tocsr()
    labels, kk = _first_appearance(njw_partition(rng, S, k, max_iter, n_init))
    return HypergraphResult(labels, kk, "cspa")


def mcla(rng_key: Any, ensemble: Any, n_clusters: int, *, n_init: int = 10, max_iter: int = 300,
         allow_missing: bool | None = None) -> HypergraphResult:
    r"""MCLA: meta-cluster the hyperedges, then let objects join their strongest meta-cluster.

    Strehl & Ghosh (2002), §3.4:

    1. the hyperedges :math:`h_a` (:func:`hyperedges`), one per cluster of every partition;
    2. the meta-graph on the hyperedges with the Jaccard weights
       :math:`w_{ab} = |h_a \cap h_b| / |h_a \cup h_b|` (zero within a partition, whose
       clusters are disjoint);
    3. the meta-graph partitioned into ``K`` meta-clusters (normalised-cut spectral
       partition, :func:`~bayesclust.inference.consensus.ensembles.njw_partition`, in place of the
       paper's METIS: docs/deviations.md#cspa-mcla-partitioner);
    4. each meta-cluster :math:`M` collapsed into its association vector
       :math:`a_{iM} = \frac1{|M|}\sum_{h_a \in M} h_{ia}`;
    5. object ``i`` goes to :math:`\arg\max_M a_{iM}`, ties broken at random (an object in no
       hyperedge ties everywhere).  A meta-cluster that wins no object leaves the consensus
       with fewer than ``K`` clusters, as in the paper.

    Parameters
    ----------
    rng_key : jax.random key or int
        Seeds the k-means starts of the meta-graph partition and the ties.
    ensemble : array_like (N, n), list, Ensemble or Posterior
        The partitions (a :class:`CoAssociation` is not enough: MCLA reads the clusters).
    n_clusters : int
        ``K``, at most the number of hyperedges.
    n_init, max_iter : int
        As in :func:`cspa`.
    allow_missing : bool, optional
        ``-1`` marks an object absent from a partition (default: True for an ``Ensemble``).

    Returns
    -------
    HypergraphResult
        With ``meta_labels`` and ``association``.

    References
    ----------
    A. Strehl and J. Ghosh, "Cluster ensembles -- a knowledge reuse framework for combining
    multiple partitions", JMLR 3 (2002), §3.4.

    Examples
    --------
    >>> ens = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> mcla(0, ens, 2).labels.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    if isinstance(ensemble, CoAssociation):
        raise TypeError("ensemble must be the partitions (MCLA reads their clusters), not a CoAssociation")
    H = hyperedges(ensemble, allow_missing=allow_missing)
    n, m = H.shape
    k = _check_k(n_clusters, m, "hyperedges")
    n_init = V.check_int(n_init, "n_init", minimum=1)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    rng = V.as_numpy_rng(rng_key)
    inter = (H.T @ H).toarray()  # |h_a & h_b|, diagonal = |h_a|
    size = np.diag(inter).copy()
    union = size[:, None] + size[None, :] - inter
    W = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    np.fill_diagonal(W, 0.0)
    meta = njw_partition(rng, W, k, max_iter, n_init)
    member = sp.csr_matrix((np.ones(m), (np.arange(m), meta)), shape=(m, k))
    count = np.asarray(member.sum(axis=0)).ravel()
    assoc = np.asarray((H @ member).todense()) / np.maximum(count, 1)[None, :]
    assoc[:, count == 0] = -np.inf  # an empty meta-cluster can win no object
    best = assoc.max(axis=1, keepdims=True)
    tied = assoc == best
    # a uniform draw among each object's tied maxima (Strehl & Ghosh: ties at random)
    score = np.where(tied, rng.random(assoc.shape), -1.0)
    winners = np.argmax(score, axis=1)
    assoc[:, count == 0] = 0.0
    labels, kk = _first_appearance(winners)
    return HypergraphResult(labels, kk, "mcla", meta.astype(np.int64), assoc)


def hypergraph_consensus(rng_key: Any, ensemble: Any, n_clusters: int, method: str = "cspa", *,
                         n_init: int = 10, max_iter: int = 300) -> HypergraphResult:
    r"""CSPA or MCLA of an ensemble by name (Strehl & Ghosh 2002, §3.2 and §3.4).

    Parameters
    ----------
    rng_key : jax.random key or int
    ensemble : array_like (N, n), list, Ensemble or Posterior
        The partitions (``"cspa"`` also takes a :class:`CoAssociation`).
    n_clusters : int
    method : {"cspa", "mcla"}
    n_init, max_iter : int
        See :func:`cspa`.

    Returns
    -------
    HypergraphResult

    Examples
    --------
    >>> ens = [[0, 0, 1, 1], [0, 0, 1, 2], [1, 1, 0, 0]]
    >>> hypergraph_consensus(0, ens, 2, "mcla").labels.tolist()
    [0, 0, 1, 1]
    """
    if not isinstance(method, str) or method not in HYPERGRAPH_METHODS:
        raise ValueError(f"method must be one of {HYPERGRAPH_METHODS}, got {method!r}")
    if method == "cspa":
        C = as_coassociation(ensemble, "ensemble")  # errors name the argument given here
        return cspa(rng_key, C, n_clusters, n_init=n_init, max_iter=max_iter)
    return mcla(rng_key, ensemble, n_clusters, n_init=n_init, max_iter=max_iter)
