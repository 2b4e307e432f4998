"""Consensus-clustering estimators: evidence accumulation (linkage on the
co-association), PEnCA (the dyadic aspect model), PPC (pairwise probabilistic clustering)
DR-EAC (embeddings of the co-association) and Strehl & Ghosh's CSPA / MCLA (graph partitions of
the ensemble's hypergraph), fed by data, partitions or a posterior.
"""

from __future__ import annotations

import numbers
import warnings

import jax
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    validate_data,
)

from .._validation import check_ensemble
from ..inference.consensus.acccs import acccs
from ..inference.consensus.aspect_em import aspect_em, select_n_aspects
from ..inference.consensus.coassociation import coassociation
from ..inference.consensus.consensus_bayes import aspect_posterior
from ..inference.consensus.consensus_selection import (
    CONSENSUS_FUNCTIONS,
    CRITERIA,
    consensus_candidates,
    select_consensus,
)
from ..inference.consensus.constrained import CONSTRAINED_METHODS, constrained_linkage_consensus
from ..inference.consensus.embedding import (
    EMBEDDING_METHODS,
    EXTRACTORS,
    embed_coassociation,
    embedded_consensus,
)
from ..inference.consensus.ensembles import kmeans_ensemble
from ..inference.consensus.hypergraph import HYPERGRAPH_METHODS, cspa, mcla
from ..inference.consensus.linkage import LINKAGE_METHODS, check_dense_linkage, linkage_consensus
from ..inference.consensus.ppc import ppc
from ..inference.hard.kl_means import kl_means, kl_means_lambda
from ._base import (
    KEEP_DRAWS,
    _key_from_random_state,
    _n_clusters_or_default,
    _warn_default_not_estimate,
    _warn_if_one_cluster,
)

__all__ = ["EvidenceAccumulation", "ConstrainedEAC", "AspectConsensus", "EmbeddedConsensus", "PairwiseConsensus",
           "HypergraphConsensus", "ACCCS", "KLMeansConsensus"]


class _ConsensusBase(ClusterMixin, BaseEstimator):
    """Shared ensemble handling: ``fit(X)`` builds a k-means ensemble, ``fit(ensemble=...)``
    takes partitions (an (N, n) array, a list of label vectors or a Posterior)."""

    _ensemble_constraints: dict = {
        "n_partitions": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_clusters_range": [tuple, list, None],
        "k_rule": [StrOptions({"penca", "sqrt", "linear"})],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "random_state": ["random_state"],
    }

    def _ensemble(self, X, ensemble, key):
        if ensemble is None:
            if X is None:
                raise ValueError("fit needs X (to build a k-means ensemble) or ensemble=...")
            X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
            # Only EvidenceAccumulation has a mesh (the ensemble and its counts sharded).
            mesh = getattr(self, "mesh", None)
            ens = kmeans_ensemble(
                key, X, self.n_partitions, n_clusters_range=self.n_clusters_range,
                k_rule=self.k_rule, subsample=self.subsample,
                **({} if mesh is None else {"backend": "jax", "mesh": mesh}),
            )
            codes = check_ensemble(ens)
            C = coassociation(ens, mesh=mesh)
        else:
            if X is not None:
                X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2)
            codes = check_ensemble(ensemble, allow_missing=getattr(self, "allow_missing", None))
            if X is not None and X.shape[0] != codes.shape[1]:
                raise ValueError(
                    f"X has {X.shape[0]} samples but the ensemble labels {codes.shape[1]} objects"
                )
            C = coassociation(codes, allow_missing=bool((codes < 0).any()),
                              mesh=getattr(self, "mesh", None))
        self.ensemble_ = codes
        self.coassociation_ = C
        return codes, C

    def fit_predict(self, X=None, y=None, ensemble=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, ensemble=ensemble).labels_


class EvidenceAccumulation(_ConsensusBase):
    r"""Evidence accumulation clustering (EAC): linkage consensus of a clustering ensemble.

    Builds an ensemble (k-means with K drawn from the split-and-merge rule, or any
    partitions — including a :class:`~bayesclust.inference.mixtures.posterior.Posterior`'s label
    draws), accumulates the sparse co-association :math:`C_{ij} = n_{ij}/N`, and cuts a
    linkage dendrogram of :math:`1 - C` at ``n_clusters`` or at the largest lifetime (Fred &
    Jain 2005).  With ``select``, a validity index chooses the consensus among the linkages
    ``method`` cut at every number of clusters of ``k_range`` (Duarte et al. 2010); the
    candidates may also come from other consensus functions of the same ensemble (CSPA,
    MCLA, PEnCA, PPC: :data:`~bayesclust.inference.consensus.consensus_selection.CONSENSUS_FUNCTIONS`).

    Parameters
    ----------
    n_clusters : int or None, default None
        Fixed K (merge-order cut, robust to ties); ``None``: ``select`` chooses among the
        cuts at every K of ``k_range`` (by default the one of largest silhouette on the
        co-association), or with ``select=None`` the lifetime criterion (Fred & Jain 2005).
    method : str or list of str, default "average"
        A linkage of :func:`~bayesclust.inference.consensus.linkage.linkage_consensus`: "average",
        "single", "complete", "weighted", "ward", "centroid" or "median"; with ``select``,
        also a list of linkages to choose among.  Ward, centroid and median read
        :math:`1 - C` as if it were Euclidean; centroid and median trees can be non-monotone
        (their negative lifetimes count as 0); every method but single and average link
        forms the dense :math:`1 - C` (``n (n - 1) / 2`` doubles, and scipy's copy of it)
        and is refused with a ValueError above 2 GiB of it (``n > 23,170``,
        :data:`~bayesclust.inference.consensus.linkage.DENSE_MAX_BYTES`).  With ``select``,
        the list may also name ``"cspa"``, ``"mcla"`` (Strehl & Ghosh 2002), ``"penca"`` and
        ``"ppc"``
        (:func:`~bayesclust.inference.consensus.consensus_selection.consensus_candidates`).
    select : str or None, default "silhouette"
        A criterion of :func:`~bayesclust.inference.consensus.consensus_selection.select_consensus`:
        ``"acc"``, ``"anmi"``, ``"div1"``, ``"div3"`` (against the ensemble),
        ``"silhouette"``, ``"dunn"``, ``"davies_bouldin"``, ``"likelihood"`` (on the
        co-association or, with ``select_space="data"``, on ``X``); ``None``: no selection
        (the lifetime criterion when ``n_clusters`` is None).  With ``n_clusters`` set and
        one linkage in ``method`` there is one candidate and nothing to select: the
        fixed-K cut.  The default is the silhouette (Rousseeuw 1987) of the consensus on
        :math:`1 - C` because the lifetime of an average-link dendrogram of a k-means
        ensemble with many small clusters favours many clusters (see Notes).
    select_space : {"similarity", "data"}, default "similarity"
    k_range : sequence of int or None
        The numbers of clusters ``select`` chooses among (ignored when ``n_clusters`` is
        set); default :math:`2, \dots, \lceil\sqrt n\,\rceil`.
    n_partitions : int, default 150
        Ensemble size when ``fit`` builds the ensemble.
    n_clusters_range : (int, int) or None
        ``(K_min, K_max)`` of the ensemble; default from ``k_rule``.
    k_rule : {"penca", "sqrt", "linear"}, default "penca"
        See :func:`bayesclust.inference.consensus.ensembles.k_bounds`.
    subsample : float in (0, 1] or None
        Fraction of objects per partition.
    allow_k1 : bool, default False
        Let the lifetime criterion choose a single cluster.
    random_state : int, RandomState instance or None
    mesh : jax.sharding.Mesh or None, default None
        Generate the k-means ensemble on the devices of this one-axis mesh and sum the
        co-association across them (``n_partitions`` a multiple of its number of devices;
        the co-association is stored dense, ``n x n``, on every device): the same
        ensemble and co-association on any number of devices.  The ensemble is the
        jax loop's (``backend="jax"`` of
        :func:`~bayesclust.inference.consensus.ensembles.kmeans_ensemble`), not the
        default host loop's, so it differs from the fit without ``mesh``.  A given
        ``ensemble`` is counted on the mesh too.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    ensemble_ : ndarray of shape (N, n_samples)
        The partitions (renumbered; -1 = not sampled).
    coassociation_ : bayesclust.inference.consensus.coassociation.CoAssociation
    linkage_ : ndarray of shape (n_samples - 1, 4) or None
        The dendrogram of the chosen linkage (None when ``select`` chose another consensus
        function).
    lifetimes_ : ndarray of shape (n_samples + 1,) or None
    method_ : str
        The consensus function of ``labels_`` (the chosen one with ``select``).
    candidates_ : ConsensusCandidates
        With ``select``: every candidate partition.
    selection_scores_ : ndarray of shape (n_candidates,)
        With ``select``: the index of every candidate.
    selection_standard_errors_ : ndarray of shape (n_candidates,) or None
        With ``select="acc"`` or ``"anmi"``: the standard error of the chosen candidate's lead
        over each candidate, paired by partition
        (:attr:`~bayesclust.inference.consensus.consensus_selection.ConsensusSelection.standard_errors`);
        None for the other criteria.

    Notes
    -----
    The default number of clusters (``select="silhouette"``, ``n_clusters=None``) was
    chosen on iris, wine and MASS biopsy (two seeds each): it gave 2, 2 and 2 clusters
    (3, 3 and 2 classes; NMI .73, .45, .81), where the average-link lifetime gave 7,
    8-15 and 17-18 (NMI .68, .33, .36).  Two on iris and wine is one below the classes:
    versicolor and virginica, and two of the wine cultivars, overlap in the ensemble's
    co-association, and the silhouette prefers the coarser, better separated split.  At
    scale: five round blobs at n = 20,000 (radius-10 circle of centres, unit variance) gave 2
    clusters (NMI .47) while the silhouette tied at 1 for 2 to 5 clusters, every block being
    disconnected in the co-association; ties now go to the most clusters (5 clusters, NMI
    1.0, on the same blobs at n = 2,000 and at n = 20,000; BENCHMARKS.md).  Four of
    scikit-learn's ``make_blobs(centers=5, random_state=0)`` blobs overlap: there 2 clusters
    (NMI .47, n = 2,000 and 20,000) is what the silhouette on the data says too (0.66 at 2,
    0.56 at 5 for k-means).

    When ``select`` chooses the fewest clusters of ``k_range`` (2 by default), ``fit``
    warns, naming ``n_clusters``: an index at the edge of its range tells which split is
    best separated, not how many groups the data hold.  On MASS crabs (four species-sex
    groups) and the first 10 principal components of digits (10 digits) the default gave 2
    (BENCHMARKS.md, "defaults on real data"); so it does on iris and wine, one below
    their classes, and on MASS biopsy, whose two classes it finds.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust import EvidenceAccumulation
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> EvidenceAccumulation(n_clusters=2).fit(ensemble=parts).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> ea = EvidenceAccumulation(method=["single", "average"], select="anmi", k_range=[2, 3])
    >>> ea.fit(ensemble=parts).n_clusters_
    2
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "method": [StrOptions(set(CONSENSUS_FUNCTIONS)), list, tuple],
        "select": [StrOptions(set(CRITERIA)), None],
        "select_space": [StrOptions({"similarity", "data"})],
        "k_range": [list, tuple, range, None],
        "allow_k1": ["boolean"],
        **_ConsensusBase._ensemble_constraints,
        "mesh": [jax.sharding.Mesh, None],
    }

    def __init__(self, n_clusters=None, *, method="average", select="silhouette",
                 select_space="similarity",
                 k_range=None, n_partitions=150, n_clusters_range=None, k_rule="penca", subsample=None,
                 allow_k1=False, random_state=None, mesh=None):
        self.n_clusters = n_clusters
        self.method = method
        self.select = select
        self.select_space = select_space
        self.k_range = k_range
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.allow_k1 = allow_k1
        self.random_state = random_state
        self.mesh = mesh

    def fit(self, X=None, y=None, ensemble=None):
        """Consensus partition of an ensemble built on ``X`` or of the given ``ensemble``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
            The partitions.

        Returns
        -------
        self
        """
        self._validate_params()
        if self.select is None and not (isinstance(self.method, str) and self.method in LINKAGE_METHODS):
            raise ValueError(f"method must be one linkage of {LINKAGE_METHODS} unless select chooses among "
                             f"several consensus functions, got {self.method!r}")
        if self.select is not None and self.select_space == "data" and X is None \
                and self.select in ("silhouette", "dunn", "davies_bouldin", "likelihood"):
            raise ValueError(f"select={self.select!r} with select_space='data' needs X")
        if ensemble is None and X is not None and np.ndim(X) == 2:
            # Refused before the ensemble is built, which takes minutes at such sizes.
            for m in [self.method] if isinstance(self.method, str) else self.method:
                if m in LINKAGE_METHODS:
                    check_dense_linkage(m, np.shape(X)[0])
        key = _key_from_random_state(self.random_state)
        codes, C = self._ensemble(X, ensemble, key)
        one_candidate = self.n_clusters is not None and isinstance(self.method, str) \
            and self.method in LINKAGE_METHODS
        if self.select is None or one_candidate:
            res = linkage_consensus(C, self.method, self.n_clusters, allow_k1=self.allow_k1)
            self.method_ = self.method
        else:
            ks = [self.n_clusters] if self.n_clusters is not None else self.k_range
            cands = consensus_candidates(C, self.method, ks, ensemble=codes,
                                         rng_key=jax.random.fold_in(key, 1))
            Xd = None if X is None else validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
            sel = select_consensus(cands, codes, self.select, space=self.select_space, X=Xd)
            self.candidates_ = cands
            self.selection_scores_ = sel.scores
            self.selection_standard_errors_ = sel.standard_errors
            self.method_ = sel.method
            ks = np.asarray(cands.n_clusters)
            if self.n_clusters is None and sel.n_clusters == ks.min() < ks.max():
                _warn_default_not_estimate(
                    self, f"{self.select} chose {sel.n_clusters} clusters, the fewest of k_range "
                    f"({ks.min()}..{ks.max()}): an index at the edge of its range says that the "
                    "coarsest split is the best separated, not that no finer groups exist (groups "
                    "that overlap in the co-association stay merged)", "give n_clusters (or a "
                    "k_range)", follows="the edge of k_range")
            if sel.method not in LINKAGE_METHODS:
                self.labels_ = np.asarray(sel.labels, np.intp)
                self.n_clusters_ = int(np.unique(sel.labels).shape[0])
                self.linkage_ = None
                self.lifetimes_ = None
                _warn_if_one_cluster(self, "give n_clusters")
                return self
            res = linkage_consensus(C, sel.method, sel.n_clusters, allow_k1=self.allow_k1)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.linkage_ = res.linkage
        self.lifetimes_ = res.lifetimes
        _warn_if_one_cluster(self, "give n_clusters")
        return self


class ConstrainedEAC(_ConsensusBase):
    r"""Constrained evidence accumulation (CEAC): constrained linkage of a co-association.

    Builds an ensemble (``n_partitions`` k-means runs with K uniform in ``n_clusters_range``,
    or any given partitions), accumulates the co-association :math:`C`, and extracts
    ``n_clusters`` clusters from :math:`D = 1 - C` with constrained single link (CSL) or
    constrained complete link (CCL, Klein, Kamvar & Manning 2002) honouring must-link and
    cannot-link pairs (Duarte, Lourenço, Fred et al., CEAC, Section 3).  The constraints
    are pairs of sample indices and are passed to :meth:`fit`, like sample-level data.

    Parameters
    ----------
    n_clusters : int or None, default None
        The number of clusters, :math:`K^*`; None: 2, and ``fit`` warns that the number
        is not an estimate (this method takes it as given; see
        :class:`EvidenceAccumulation` for one chosen from the ensemble).
    method : {"single", "complete"}, default "single"
        CSL or CCL (:func:`~bayesclust.inference.consensus.constrained.constrained_linkage_consensus`).
    n_partitions : int, default 50
        Ensemble size when ``fit`` builds the ensemble (50 in the CEAC experiments).
    n_clusters_range : (int, int) or None, default (10, 30)
        ``(K_min, K_max)`` of the k-means ensemble (the CEAC experiments' range); ``None``:
        from ``k_rule``.
    k_rule : {"penca", "sqrt", "linear"}, default "penca"
        Used only when ``n_clusters_range`` is None.
    subsample : float in (0, 1] or None
        Fraction of objects per partition.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        More than ``n_clusters`` when CSL runs out of allowed merges (with a UserWarning).
    constraint_satisfaction_ : float
        Fraction of the constraints ``labels_`` satisfies (CEAC paper, eq. 5); NaN without
        constraints.
    ensemble_ : ndarray of shape (N, n_samples)
    coassociation_ : bayesclust.inference.consensus.coassociation.CoAssociation

    Examples
    --------
    >>> from bayesclust import ConstrainedEAC
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> ConstrainedEAC(n_clusters=2).fit(ensemble=parts).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> ConstrainedEAC(n_clusters=2).fit(ensemble=parts, must_link=[[2, 3]], cannot_link=[[0, 5]]).labels_.tolist()
    [0, 0, 0, 0, 0, 1]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "method": [StrOptions(set(CONSTRAINED_METHODS))],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, method="single", n_partitions=50, n_clusters_range=(10, 30),
                 k_rule="penca", subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.method = method
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None, *, must_link=None, cannot_link=None):
        """Constrained consensus of an ensemble built on ``X`` or of the given ``ensemble``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
        must_link, cannot_link : array-like of int, shape (m, 2), optional
            Pairs of sample indices to keep together / apart.

        Returns
        -------
        self
        """
        self._validate_params()
        n_clusters = _n_clusters_or_default(self)
        _, C = self._ensemble(X, ensemble, _key_from_random_state(self.random_state))
        res = constrained_linkage_consensus(C, must_link, cannot_link, n_clusters, self.method)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = res.n_clusters
        self.constraint_satisfaction_ = res.satisfaction
        _warn_if_one_cluster(self, "raise n_clusters")
        return self

    def fit_predict(self, X=None, y=None, ensemble=None, *, must_link=None, cannot_link=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, ensemble=ensemble, must_link=must_link, cannot_link=cannot_link).labels_


class AspectConsensus(_ConsensusBase):
    r"""PEnCA: consensus by the dyadic aspect model of the co-association (soft memberships).

    The co-occurring pairs of an ensemble are modelled as
    :math:`P(y,z)=\sum_r p_rB_{r,y}B_{r,z}` and fitted by EM on the sparse count matrix
    (Lourenco, Fred & Figueiredo 2011); :math:`V_{y,r}\propto B_{r,y}p_r` are soft
    memberships.  ``hard=True`` fits the hard limit (classification EM).  See
    :func:`bayesclust.inference.consensus.aspect_em.aspect_em`.

    Parameters
    ----------
    n_clusters : int or None, default None
        Number of aspects L; ``None`` chooses it by MDL over ``1..max_clusters``
        (:func:`~bayesclust.inference.consensus.aspect_em.select_n_aspects`, experimental):
        its penalty treats the strongly dependent co-occurring pairs as independent, so it
        picks ``max_clusters`` on most data (iris, wine, MASS biopsy and crabs: 10 of
        1..10) and ``fit`` then warns (a ``UserWarning``) that the number is not an estimate.
    max_clusters : int, default 10
    hard : bool, default False
    n_init : int, default 10
        Random starts of EM; the best final objective is kept.
    init : {"random", "seeds", "eac"} or None, default None
        ``None``: random Dirichlet for EM, farthest-first seeds for the hard limit;
        ``"eac"``: start from the average-link EAC consensus with L clusters.
    max_iter : int, default 2000
    tol : float, default 1e-7
    n_partitions, n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.
    inference : {"em", "svi", "nuts"}, default "em"
        ``"em"``: the EM fit alone.  ``"svi"`` / ``"nuts"``: after EM, the posterior of the
        aspect model by :func:`~bayesclust.inference.consensus.consensus_bayes.aspect_posterior`
        (started at and aligned to the EM fit; SVI's default guide is ``AutoDelta``, the MAP);
        not with ``hard=True``.
    inference_kwargs : dict or None, default None
        Passed to :func:`~bayesclust.inference.consensus.consensus_bayes.aspect_posterior` (``guide``,
        ``num_steps``, ``learning_rate``, ``num_samples``, ``num_warmup``, ``num_chains``,
        ``alpha_p``, ``alpha_B``; the last two also reach EM).
    keep_draws : int, "all" or "summary", default 100
        What ``posterior_`` keeps of ``"svi"`` / ``"nuts"`` draws
        (:meth:`~bayesclust.inference.mixtures.posterior.Posterior.compact`): at most that
        many draws per chain spread evenly, every draw, or their summaries only (no label,
        membership or ``B`` draws).  The fitted attributes come from every draw; the
        default is that of :class:`DPGaussianMixture` (its memberships are n x L floats a
        draw, more than its labels).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        :math:`\arg\max_r` of ``probabilities_``: with ``inference="em"`` the EM fit's labels,
        otherwise each object's most probable aspect under the posterior mean of the aligned
        memberships (with SVI's ``AutoDelta`` guide, the MAP's labels).
    probabilities_ : ndarray of shape (n_samples, n_clusters_)
        Soft memberships :math:`V` (the posterior mean of the aligned draws with ``"svi"`` /
        ``"nuts"``).
    n_clusters_ : int
    weights_ : ndarray of shape (n_clusters_,)
    B_ : ndarray of shape (n_clusters_, n_samples)
        EM's, or the posterior means of the aligned draws.
    log_likelihood_ : float
        EM's objective (the log-likelihood; with ``hard=True`` the classification
        log-likelihood), or the posterior mean of the draws' log-likelihoods.
    posterior_ : Posterior
        With ``inference="svi"`` / ``"nuts"``: the aligned draws (labels, ``"weights"``,
        ``"B"``, ``"memberships"``).
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import AspectConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> est = AspectConsensus(n_clusters=2, random_state=0).fit(ensemble=parts)
    >>> est.probabilities_.shape
    (6, 2)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "hard": ["boolean"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "seeds", "eac"}), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "inference": [StrOptions({"em", "svi", "nuts"})],
        "inference_kwargs": [dict, None],
        "keep_draws": [Interval(numbers.Integral, 1, None, closed="left"),
                       StrOptions({"all", "summary"})],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, max_clusters=10, hard=False, n_init=10, init=None,
                 max_iter=2000, tol=1e-7, n_partitions=150, n_clusters_range=None, k_rule="penca",
                 subsample=None, random_state=None, inference="em",
                 inference_kwargs=None, keep_draws=KEEP_DRAWS):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.hard = hard
        self.n_init = n_init
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state
        self.inference = inference
        self.inference_kwargs = inference_kwargs
        self.keep_draws = keep_draws

    def fit(self, X=None, y=None, ensemble=None):
        """Fit the aspect model to an ensemble built on ``X`` or to the given ``ensemble``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
            The partitions.

        Returns
        -------
        self
        """
        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_em = jax.random.split(key)
        _, C = self._ensemble(X, ensemble, k_ens)
        kw = dict(hard=self.hard, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol)
        bayes_kw = dict(self.inference_kwargs or {})
        if self.inference != "em":
            if self.hard:
                raise ValueError(f"inference={self.inference!r} needs hard=False (the hard limit has no posterior)")
            kw.update({a: bayes_kw[a] for a in ("alpha_p", "alpha_B") if a in bayes_kw})
        if self.n_clusters is None:
            if self.init == "eac":
                raise ValueError("init='eac' needs n_clusters (model selection uses random starts)")
            cands = range(1, min(self.max_clusters, C.n_samples) + 1)
            sel = select_n_aspects(k_em, C, cands, init=self.init, **kw)
            res = sel.best
            self.model_selection_ = sel
            if len(cands) > 2 and res.weights.shape[0] == cands[-1]:
                # MDL's penalty counts the co-occurring pairs as independent draws; they
                # are not, so the likelihood gain of one more aspect outweighs it at every L.
                warnings.warn(
                    f"AspectConsensus: MDL chose the largest candidate, max_clusters={cands[-1]}; "
                    "its penalty treats the ensemble's co-occurring pairs as independent and "
                    "rarely stops below max_clusters, so this number of clusters is not an "
                    "estimate: give n_clusters (e.g. EvidenceAccumulation's)", UserWarning,
                    stacklevel=2)
        else:
            if self.n_clusters > C.n_samples:
                raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={C.n_samples}")
            init = self.init
            if init == "eac":
                init = linkage_consensus(C, "average", self.n_clusters).labels
            res = aspect_em(k_em, C, self.n_clusters, init=init, **kw)
        self.labels_ = res.labels.astype(np.intp)
        self.probabilities_ = res.memberships
        self.n_clusters_ = int(res.weights.shape[0])
        self.weights_ = res.weights
        self.B_ = res.B
        self.log_likelihood_ = float(res.objective)
        self.n_iter_ = int(res.n_iter)
        if self.inference != "em":
            post = aspect_posterior(jax.random.fold_in(k_em, 1), C, self.n_clusters_, inference=self.inference,
                                    reference=res, **bayes_kw)
            self.probabilities_ = post.params["memberships"].mean(axis=(0, 1))
            self.labels_ = np.argmax(self.probabilities_, axis=1).astype(np.intp)
            self.weights_ = post.params["weights"].mean(axis=(0, 1))
            self.B_ = post.params["B"].mean(axis=(0, 1))
            self.log_likelihood_ = float(post.log_likelihood.mean())
            self.posterior_ = post.compact(self.keep_draws)
        _warn_if_one_cluster(self, "give n_clusters or raise max_clusters")
        return self


class EmbeddedConsensus(_ConsensusBase):
    r"""DR-EAC: embed the co-association matrix, then cluster the embedding.

    Builds an ensemble (or takes partitions or a Posterior), accumulates the co-association
    :math:`C`, embeds it by classical MDS, Isomap or Laplacian eigenmaps
    (:func:`~bayesclust.inference.consensus.embedding.embed_coassociation`, reading :math:`C` as
    similarities or as features) and extracts ``n_clusters`` clusters by k-means or a linkage
    (:func:`~bayesclust.inference.consensus.embedding.embedded_consensus`) (Lourenço, Fred et al.
    2010, SIMBAD deliverable D2.3).

    Parameters
    ----------
    n_clusters : int
        K of the consensus partition.
    method : {"isomap", "laplacian", "mds"}, default "isomap"
    extractor : {"kmeans", "single", "complete", "average", "ward", "centroid", "median", "weighted"}, default "average"
    n_components : int or None
        Embedding dimension; ``None``: ``n_clusters - 1`` for Laplacian eigenmaps (the
        non-trivial eigenvectors spectral clustering keeps for K clusters; the largest
        eigengap of a Laplacian of C picks 6-8 on Iris, docs/deviations.md#dreac-dimension),
        the largest eigengap for MDS and Isomap.
    interpretation : {"similarity", "features"}, default "similarity"
    n_neighbors : int or None
        k-NN size (Isomap: ``None`` chooses it by residual variance).
    n_partitions : int, default 200
        Ensemble size when ``fit`` builds the ensemble (the paper's N).
    n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation` (``k_rule="penca"`` is the DR-EAC rule).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    embedding_ : ndarray of shape (n_samples, n_components_)
    n_components_ : int
    eigenvalues_ : ndarray
        The leading eigenvalues of the embedding.
    n_neighbors_ : int or None
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import EmbeddedConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> EmbeddedConsensus(2, method="mds").fit(ensemble=parts).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "method": [StrOptions(set(EMBEDDING_METHODS))],
        "extractor": [StrOptions(set(EXTRACTORS))],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "interpretation": [StrOptions({"similarity", "features"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters, *, method="isomap", extractor="average", n_components=None,
                 interpretation="similarity", n_neighbors=None, n_partitions=200, n_clusters_range=None,
                 k_rule="penca", subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.method = method
        self.extractor = extractor
        self.n_components = n_components
        self.interpretation = interpretation
        self.n_neighbors = n_neighbors
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None):
        """Embed the co-association of an ensemble built on ``X`` (or given) and cluster it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional

        Returns
        -------
        self
        """
        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_ext = jax.random.split(key)
        _, C = self._ensemble(X, ensemble, k_ens)
        n = C.n_samples
        if self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={n}")
        n_components = self.n_components
        if n_components is None and self.method == "laplacian":
            n_components = max(1, self.n_clusters - 1)
        if n_components is not None and n_components >= n:
            raise ValueError(f"n_components={n_components} must be < n_samples={n}")
        n_neighbors = self.n_neighbors
        if n_neighbors is not None and n_neighbors >= n:
            raise ValueError(f"n_neighbors={n_neighbors} must be < n_samples={n}")
        res = embed_coassociation(C, self.method, n_components, interpretation=self.interpretation,
                                  n_neighbors=n_neighbors)
        labels = embedded_consensus(res.embedding, self.n_clusters, self.extractor, k_ext)
        _, labels = np.unique(labels, return_inverse=True)
        self.labels_ = labels.astype(np.intp)
        self.n_clusters_ = int(labels.max()) + 1
        self.embedding_ = res.embedding
        self.n_components_ = res.n_components
        self.eigenvalues_ = res.eigenvalues
        self.n_neighbors_ = res.n_neighbors
        _warn_if_one_cluster(self, "raise n_clusters")
        return self


class PairwiseConsensus(_ConsensusBase):
    r"""PPC: soft consensus by pairwise probabilistic clustering of the co-association.

    Every object gets memberships :math:`\mathbf y_i` on the simplex, fitted so that
    :math:`\mathbf y_i^\top\mathbf y_j` approximates the co-association :math:`c_{ij}` in least
    squares, :math:`\min_Y \|C - Y^\top Y\|_F^2`, by the Baum-Eagon growth transform on the
    sparse pairs (Rota Bulò, Lourenço, Fred & Pelillo 2010).  See
    :func:`bayesclust.inference.consensus.ppc.ppc`.

    Parameters
    ----------
    n_clusters : int or None, default None
        Number of clusters K (at most the number of objects); None: 2, and ``fit`` warns that
        the number is not an estimate (this method takes it as given; see
        :class:`EvidenceAccumulation` for one chosen from the ensemble).
    n_init : int, default 5
        Random Dirichlet starts; the smallest final objective is kept.
    tol : float, default 1e-9
        Stop a start when the relative decrease of the objective in one iteration is at most
        ``tol``.
    max_iter : int, default 1000
        Iterations per start at most.
    n_partitions, n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        :math:`\arg\max_k y_{ki}`.
    memberships_ : ndarray of shape (n_samples, n_clusters)
        The memberships :math:`\mathbf y_i^\top` (rows sum to 1).
    probabilities_ : ndarray of shape (n_samples, n_clusters)
        The same array, under :class:`AspectConsensus`'s name.
    n_clusters_ : int
    entropy_ : ndarray of shape (n_samples,)
        Normalised entropy of every object's memberships, in [0, 1].
    isolated_ : ndarray of bool, shape (n_samples,)
        Objects never co-clustered with any other: uniform memberships.
    objective_ : float
        :math:`\|C - Y^\top Y\|_F^2` of the returned memberships.
    n_iter_ : int
    converged_ : bool
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import PairwiseConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> est = PairwiseConsensus(2, random_state=0).fit(ensemble=parts)
    >>> est.memberships_.shape, est.labels_[:3].tolist() != est.labels_[3:].tolist()
    ((6, 2), True)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, n_init=5, tol=1e-9, max_iter=1000, n_partitions=150,
                 n_clusters_range=None, k_rule="penca", subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.tol = tol
        self.max_iter = max_iter
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None):
        """Fit PPC to the co-association of an ensemble built on ``X`` or of ``ensemble``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
            The partitions.

        Returns
        -------
        self
        """
        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_ppc = jax.random.split(key)
        n_clusters = _n_clusters_or_default(self)
        _, C = self._ensemble(X, ensemble, k_ens)
        if n_clusters > C.n_samples:
            raise ValueError(f"n_clusters={n_clusters} must be <= n_samples={C.n_samples}")
        res = ppc(k_ppc, C, n_clusters, n_init=self.n_init, tol=self.tol, max_iter=self.max_iter)
        self.labels_ = res.labels.astype(np.intp)
        self.memberships_ = res.memberships
        self.probabilities_ = res.memberships
        self.n_clusters_ = int(n_clusters)
        self.entropy_ = res.entropy
        self.isolated_ = res.isolated
        self.objective_ = float(res.objective)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        _warn_if_one_cluster(self, "raise n_clusters")
        return self

    def fit_predict(self, X=None, y=None, ensemble=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, ensemble=ensemble).labels_


class HypergraphConsensus(_ConsensusBase):
    r"""CSPA or MCLA: Strehl & Ghosh's graph-partitioning consensus of a clustering ensemble.

    ``method="cspa"`` partitions the co-association graph (the fraction of partitions putting
    two objects together) into ``n_clusters`` parts; ``method="mcla"`` partitions the graph
    of the ensemble's clusters (hyperedges, Jaccard weights) into ``n_clusters``
    meta-clusters and gives every object to the meta-cluster it is most associated with
    (Strehl & Ghosh 2002, §3.2, §3.4).  Both use a normalised-cut spectral partition in place
    of the paper's METIS (docs/deviations.md#cspa-mcla-partitioner).  See
    :func:`bayesclust.inference.consensus.hypergraph.cspa` and :func:`~bayesclust.inference.consensus.hypergraph.mcla`.

    One estimator with ``method=``, like :class:`EmbeddedConsensus`: the two functions share
    the ensemble's hypergraph, the partitioner and their parameters, and differ in which
    graph is cut.

    Parameters
    ----------
    n_clusters : int or None, default None
        Number of parts ``K`` (at most the number of objects; for MCLA, of hyperedges);
        None: 2, and ``fit`` warns that the number is not an estimate (this method takes it
        as given; see :class:`EvidenceAccumulation` for one chosen from the ensemble).
    method : {"cspa", "mcla"}, default "cspa"
    n_init : int, default 10
        k-means starts on the spectral embedding of the graph (300 Lloyd iterations at most
        each).
    n_partitions, n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        Clusters in ``labels_`` (at most ``n_clusters``: a part can stay empty).
    meta_labels_ : ndarray of shape (n_hyperedges,) or None
        MCLA: the meta-cluster of every cluster of the ensemble.
    association_ : ndarray of shape (n_samples, n_clusters) or None
        MCLA: every object's association with every meta-cluster.
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import HypergraphConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> HypergraphConsensus(2, method="mcla", random_state=0).fit(ensemble=parts).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "method": [StrOptions(set(HYPERGRAPH_METHODS))],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, method="cspa", n_init=10, n_partitions=150,
                 n_clusters_range=None, k_rule="penca", subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.method = method
        self.n_init = n_init
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None):
        """CSPA / MCLA consensus of an ensemble built on ``X`` or of the given ``ensemble``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
            The partitions.

        Returns
        -------
        self
        """
        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_fit = jax.random.split(key)
        n_clusters = _n_clusters_or_default(self)
        codes, C = self._ensemble(X, ensemble, k_ens)
        if self.method == "cspa":
            res = cspa(k_fit, C, n_clusters, n_init=self.n_init)
        else:
            res = mcla(k_fit, codes, n_clusters, n_init=self.n_init, allow_missing=bool((codes < 0).any()))
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = int(res.n_clusters)
        self.meta_labels_ = res.meta_labels
        self.association_ = res.association
        _warn_if_one_cluster(self, "raise n_clusters")
        return self

    def fit_predict(self, X=None, y=None, ensemble=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, ensemble=ensemble).labels_


class ACCCS(_ConsensusBase):
    r"""ACCCS: consensus by a genetic algorithm balancing ACC and soft pairwise constraints.

    Maximises :math:`J = (1 - \beta) ACC + \beta CS` over partitions with ``n_clusters``
    labels, :math:`ACC` the average cluster consistency with the ensemble and :math:`CS` the
    fraction of satisfied must-link and cannot-link constraints (Duarte, Fred & Duarte 2009,
    eqs. 5-7).  See :func:`bayesclust.inference.consensus.acccs.acccs`.

    The constraints are given to :meth:`fit` (``must_link=``, ``cannot_link=``), as they
    belong to the data, like ``y``; the estimator's parameters are the algorithm's settings.

    Parameters
    ----------
    n_clusters : int or None, default None
        ``K*``; None: 2, and ``fit`` warns that the number is not an estimate (this method
        takes it as given; see :class:`EvidenceAccumulation` for one chosen from the
        ensemble).
    population : int, default 20
    generations : int, default 100
    p_crossover : float in [0, 1], default 0.8
    p_mutation : float in [0, 1], default 0.01
    beta : float in [0, 1], default 0.5
        The paper's settings (MaxGen 100, PopSize 20, 0.8, 0.01, 1/2).
    n_partitions : int, default 50
        The paper's ensembles hold 50 k-means partitions (with K uniform in 10..30:
        ``n_clusters_range=(10, 30)``).
    n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
        Number of non-empty clusters of ``labels_``.
    objective_ : float
        :math:`J` of ``labels_`` (maximised).
    objective_trace_ : ndarray of shape (generations + 1,)
        Best :math:`J` of the population per generation (non-decreasing).
    n_iter_ : int
        Generations run.
    acc_, constraint_satisfaction_ : float
        :math:`ACC` and :math:`CS` of ``labels_``.
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import ACCCS
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> est = ACCCS(2, generations=20, random_state=0).fit(ensemble=parts, must_link=[[0, 1]],
    ...                                                     cannot_link=[[0, 5]])
    >>> est.constraint_satisfaction_
    1.0
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "population": [Interval(numbers.Integral, 2, None, closed="left")],
        "generations": [Interval(numbers.Integral, 0, None, closed="left")],
        "p_crossover": [Interval(numbers.Real, 0, 1, closed="both")],
        "p_mutation": [Interval(numbers.Real, 0, 1, closed="both")],
        "beta": [Interval(numbers.Real, 0, 1, closed="both")],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, population=20, generations=100, p_crossover=0.8, p_mutation=0.01,
                 beta=0.5, n_partitions=50, n_clusters_range=None, k_rule="penca", subsample=None,
                 random_state=None):
        self.n_clusters = n_clusters
        self.population = population
        self.generations = generations
        self.p_crossover = p_crossover
        self.p_mutation = p_mutation
        self.beta = beta
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None, must_link=None, cannot_link=None):
        """Fit ACCCS to an ensemble built on ``X`` or to ``ensemble``, under the constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
            Builds the ensemble when ``ensemble`` is None, and seeds the initial population
            with k-means runs whenever given.
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional
        must_link, cannot_link : array-like of int, shape (c, 2), optional
            Pairs of sample indices that should / should not share a cluster.

        Returns
        -------
        self
        """
        self._validate_params()
        key = _key_from_random_state(self.random_state)
        k_ens, k_ga = jax.random.split(key)
        n_clusters = _n_clusters_or_default(self)
        codes, _ = self._ensemble(X, ensemble, k_ens)
        Xd = None if X is None else validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        res = acccs(k_ga, codes, must_link, cannot_link, n_clusters, Xd, population=self.population,
                    generations=self.generations, p_crossover=self.p_crossover, p_mutation=self.p_mutation,
                    beta=self.beta)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = int(np.unique(res.labels).shape[0])
        self.objective_ = float(res.objective)
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = int(res.n_iter)
        self.acc_ = float(res.acc)
        self.constraint_satisfaction_ = float(res.constraint_satisfaction)
        _warn_if_one_cluster(self, "raise n_clusters")
        return self

    def fit_predict(self, X=None, y=None, ensemble=None, must_link=None, cannot_link=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, ensemble=ensemble, must_link=must_link, cannot_link=cannot_link).labels_


#: Bisection steps (on log lam) of :meth:`KLMeansConsensus.fit` looking for ``n_clusters``.
_LAM_SEARCH_STEPS = 24


def _kl_means_for_k(C, n_clusters: int, max_iter: int, collapsed: bool):
    """KL-means at the ``lam`` that gives ``n_clusters`` clusters (or the nearest count found).

    Starts from the farthest-first ``lam`` (:func:`kl_means_lambda`), brackets the count by
    doubling / halving, then bisects ``log lam``; the fit whose count is nearest the target
    (then the lowest objective) is kept.
    """
    best = None

    def run(lam):
        nonlocal best
        res = kl_means(C, lam, max_iter=max_iter, collapsed=collapsed)
        key = (abs(res.n_clusters - n_clusters), res.objective)
        if best is None or key < best[0]:
            best = (key, res)
        return res.n_clusters

    lam = kl_means_lambda(C, n_clusters)
    if not (np.isfinite(lam) and lam > 0):
        lam = 1.0
    k = run(lam)
    lo = hi = None
    if k > n_clusters:
        lo = lam
        for _ in range(60):
            lam *= 2.0
            k = run(lam)
            if k <= n_clusters:
                hi = lam
                break
            lo = lam
    elif k < n_clusters:
        hi = lam
        for _ in range(60):
            lam /= 2.0
            k = run(lam)
            if k >= n_clusters:
                lo = lam
                break
            hi = lam
    if k != n_clusters and lo is not None and hi is not None:
        for _ in range(_LAM_SEARCH_STEPS):
            mid = float(np.sqrt(lo * hi))
            k = run(mid)
            if k == n_clusters:
                break
            if k > n_clusters:
                lo = mid
            else:
                hi = mid
    return best[1]


class KLMeansConsensus(_ConsensusBase):
    r"""KL-means consensus: the hard limit of the DP mixture of multinomials on co-association rows (ours).

    Builds an ensemble (or takes one), forms its co-association counts :math:`C(i, \cdot)`
    with the diagonal (the rows PEnCA's dyadic aspect model fits, as multinomial draws:
    docs/deviations.md#kl-means) and runs :func:`~bayesclust.inference.hard.kl_means.kl_means`,
    which minimises :math:`\sum_i n_i \mathrm{KL}(\hat p_i \| \psi_{z_i}) + \lambda k`.
    The number of consensus clusters is chosen by ``lam``; ``n_clusters`` only picks
    ``lam`` (the farthest-first ``lam``, then a search on ``lam`` for that many clusters).

    Parameters
    ----------
    n_clusters : int or None, default None
        Number of clusters whose ``lam`` is looked for (ignored when ``lam`` is given).
    lam : float or None, default None
        KL-means' penalty per cluster (counts x nats).  One of ``n_clusters`` and ``lam``
        is needed.
    max_iter : int, default 100
    collapsed : bool, default True
        The collapsed limit's moves (Hartigan's, the sequential information bottleneck with
        a DP penalty) rather than Algorithm 1's, which stall on clusters opened at one
        row's narrow distribution (``collapsed`` of
        :func:`~bayesclust.inference.hard.kl_means.kl_means`; BENCHMARKS.md).
    n_partitions, n_clusters_range, k_rule, subsample, random_state
        As in :class:`EvidenceAccumulation`.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    lam_ : float
        The penalty used.
    distributions_ : ndarray of shape (n_clusters_, n_samples)
        :math:`\psi_j`, each cluster's pooled co-association row.
    objective_ : float
    n_iter_ : int
    ensemble_, coassociation_
        As in :class:`EvidenceAccumulation`.

    Examples
    --------
    >>> from bayesclust import KLMeansConsensus
    >>> parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]
    >>> KLMeansConsensus(n_clusters=2).fit(ensemble=parts).labels_.tolist()
    [1, 1, 1, 0, 0, 0]
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "lam": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "collapsed": ["boolean"],
        **_ConsensusBase._ensemble_constraints,
    }

    def __init__(self, n_clusters=None, *, lam=None, max_iter=100, collapsed=True, n_partitions=150,
                 n_clusters_range=None, k_rule="penca", subsample=None, random_state=None):
        self.n_clusters = n_clusters
        self.lam = lam
        self.max_iter = max_iter
        self.collapsed = collapsed
        self.n_partitions = n_partitions
        self.n_clusters_range = n_clusters_range
        self.k_rule = k_rule
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X=None, y=None, ensemble=None):
        """Run KL-means on the co-association of an ensemble built on ``X`` or given.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), optional
        y : ignored
        ensemble : array-like (N, n_samples), list of label vectors or Posterior, optional

        Returns
        -------
        self
        """
        self._validate_params()
        if self.lam is None and self.n_clusters is None:
            raise ValueError("KLMeansConsensus needs n_clusters or lam")
        key = _key_from_random_state(self.random_state)
        _, C = self._ensemble(X, ensemble, key)
        if self.lam is not None:
            res = kl_means(C, self.lam, max_iter=self.max_iter, collapsed=self.collapsed)
        else:
            if self.n_clusters > C.n_samples:
                raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={C.n_samples}")
            res = _kl_means_for_k(C, self.n_clusters, self.max_iter, self.collapsed)
        self.labels_ = res.labels.astype(np.intp)
        self.n_clusters_ = int(res.n_clusters)
        self.lam_ = float(res.lam)
        self.distributions_ = res.distributions
        self.objective_ = float(res.objective)
        self.n_iter_ = int(res.n_iter)
        _warn_if_one_cluster(self, "lower lam (or give n_clusters)")
        return self
