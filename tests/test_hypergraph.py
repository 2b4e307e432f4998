"""CSPA and MCLA (Strehl & Ghosh 2002): toy cases by hand, slow literal loops of the
algorithms, invariances, determinism, selection among consensus functions, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import bayesclust as bc
from bayesclust import _validation as V
from bayesclust.inference.consensus.coassociation import coassociation
from bayesclust.inference.consensus.consensus_selection import (
    CONSENSUS_FUNCTIONS,
    consensus_candidates,
    select_consensus,
)
from bayesclust.inference.consensus.ensembles import kmeans_ensemble, njw_partition
from bayesclust.inference.consensus.hypergraph import cspa, hyperedges, hypergraph_consensus, mcla


def _same_partition(a, b) -> bool:
    return adjusted_rand_score(a, b) == 1.0


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.4, size=(30, 2)) for c in ((0, 0), (6, 0), (0, 6))])
    y = np.repeat(np.arange(3), 30)
    return X, y, kmeans_ensemble(0, X, 30)


# --------------------------------------------------------------------------- 1. by hand


def test_hyperedges_by_hand():
    H = hyperedges([[5, 5, 7, 7], [2, 2, 1, 0]]).toarray()  # clusters numbered by first appearance
    # partition 1: {0,1}, {2,3}; partition 2: {0,1}, {2}, {3}
    np.testing.assert_array_equal(H, [[1, 0, 1, 0, 0], [1, 0, 1, 0, 0], [0, 1, 0, 1, 0], [0, 1, 0, 0, 1]])
    # a missing object (-1) is in no hyperedge of that partition
    Hm = hyperedges(np.array([[0, 0, 1, -1], [0, 0, 0, 0]]), allow_missing=True).toarray()
    np.testing.assert_array_equal(Hm, [[1, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]])


def test_mcla_by_hand():
    # hyperedges {0,1} x3 (Jaccard 1 among them); {2,3} x2, {2}, {3} (Jaccard 1 and 1/2 to {2,3})
    ens = [[0, 0, 1, 1], [0, 0, 1, 2], [1, 1, 0, 0]]
    res = mcla(0, ens, 2)
    assert res.labels.tolist() == [0, 0, 1, 1]
    a = res.meta_labels[0]
    assert res.meta_labels.tolist().count(a) == 3  # the three copies of {0,1}
    # association: object 0 = mean of three 1s; object 2 = (1 + 1 + 1 + 0) / 4 of the other meta-cluster
    A = res.association if a == 0 else res.association[:, ::-1]
    np.testing.assert_allclose(A, [[1, 0], [1, 0], [0, 0.75], [0, 0.75]])


def test_mcla_ties_at_random():
    # hyperedges {0,1}, {2} | {0}, {1,2}: the meta-graph is the path {0}-{0,1}-{1,2}-{2} with weights
    # 1/2, 1/3, 1/2; its cut is the 1/3 edge, and object 1 is half in each meta-cluster: a tie
    ens = [[0, 0, 1], [0, 1, 1]]
    got = set()
    for seed in range(20):
        res = mcla(seed, ens, 2)
        assert res.labels[0] != res.labels[2]
        np.testing.assert_allclose(np.sort(res.association[1]), [0.5, 0.5])
        # object 0 wins the meta-cluster of hyperedge 0; a fixed rule (first maximum) would send
        # object 1 to meta-cluster 0 every time
        joins_0 = res.labels[1] == res.labels[0]
        got.add(bool(joins_0) == bool(res.meta_labels[0] == 0))
    assert got == {True, False}


def test_cspa_separates_disconnected_blocks():
    ens = [[0, 0, 0, 1, 1, 1, 2, 2], [1, 1, 1, 0, 0, 0, 2, 2], [0, 0, 0, 2, 2, 2, 1, 1]]
    res = cspa(0, ens, 3)
    assert res.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2]
    assert res.n_clusters == 3 and res.meta_labels is None and res.method == "cspa"


def test_k_equal_one_and_n():
    ens = [[0, 0, 1, 1], [0, 1, 1, 1]]
    assert cspa(0, ens, 1).labels.tolist() == [0, 0, 0, 0]
    assert cspa(0, ens, 4).labels.tolist() == [0, 1, 2, 3]
    assert mcla(0, ens, 1).labels.tolist() == [0, 0, 0, 0]


# --------------------------------------------------------------------------- 2. references


def _coassoc_loop(ens):
    ens = np.asarray(ens)
    N, n = ens.shape
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                S[i, j] = sum(ens[l, i] == ens[l, j] for l in range(N)) / N
    return S


def _edges(ens):
    # hyperedges partition by partition, clusters in order of first appearance
    return [set(np.flatnonzero(p == c)) for p in np.asarray(ens) for c in dict.fromkeys(p.tolist())]


def _jaccard_loop(ens):
    """The meta-graph's Jaccard weights from sets (the paper's step 2)."""
    edges = _edges(ens)
    m = len(edges)
    W = np.zeros((m, m))
    for a in range(m):
        for b in range(m):
            if a != b:
                W[a, b] = len(edges[a] & edges[b]) / len(edges[a] | edges[b])
    return W


def _association_loop(ens, meta, k):
    """Association vectors of the meta-clusters from sets (the paper's step 4)."""
    edges = _edges(ens)
    n = np.asarray(ens).shape[1]
    A = np.zeros((n, k))
    for c in range(k):
        members = [e for e, g in zip(edges, meta) if g == c]
        for i in range(n):
            A[i, c] = sum(i in e for e in members) / max(len(members), 1)
    return A



def _random_ensemble(seed, N=6, n=24):
    """Partitions without structure: any change of the graph's weights changes its partition."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, rng.integers(2, 5), size=n) for _ in range(N)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cspa_matches_literal_loop(seed):
    ens = _random_ensemble(seed)
    S = _coassoc_loop(ens)
    ref = njw_partition(V.as_numpy_rng(3), S, 3, 300, 10)
    assert _same_partition(cspa(3, ens, 3).labels, ref)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcla_matches_literal_loop(seed):
    ens = _random_ensemble(seed)
    res = mcla(5, ens, 3)
    # the meta partition is the spectral partition of the loop's Jaccard graph, same generator
    meta = njw_partition(V.as_numpy_rng(5), _jaccard_loop(ens), 3, 300, 10)
    np.testing.assert_array_equal(res.meta_labels, meta)
    A = _association_loop(ens, meta, 3)
    np.testing.assert_allclose(res.association, A, atol=1e-12)
    best = A.max(axis=1, keepdims=True)
    unique = (A == best).sum(axis=1) == 1
    assert _same_partition(res.labels[unique], np.argmax(A, axis=1)[unique])
    assert np.all(A[np.arange(len(A)), _relabel_to(res.labels, np.argmax(A, axis=1), unique)] == best[:, 0])


def test_njw_partition_above_the_dense_limit_takes_arpack_on_dense_graphs(monkeypatch, blobs):
    """Above ``_NJW_DENSE_MAX_N`` vertices a dense affinity (MCLA's meta-graph) is partitioned
    from ARPACK's leading eigenvectors, component by component: the same partition as the
    dense ``eigh`` (the limits lowered so that a small graph crosses them: the co-association
    of three separated blobs, whose three components give the eigenvalue 1 three times, which
    one Lanczos run over the whole graph misses; the same graph with its blocks joined)."""
    from bayesclust.inference.consensus import ensembles

    _, _, ens = blobs
    S = coassociation(ens).toarray()
    graphs = [S, S + 0.01 * (1.0 - np.eye(len(S)))]
    dense = [njw_partition(V.as_numpy_rng(3), A, 3, 300, 10) for A in graphs]
    monkeypatch.setattr(ensembles, "_NJW_DENSE_MAX_N", 10)
    monkeypatch.setattr(ensembles, "_NJW_COMPONENT_DENSE_MAX", 10)
    for A, ref in zip(graphs, dense):
        np.testing.assert_array_equal(njw_partition(V.as_numpy_rng(3), A, 3, 300, 10), ref)


def _relabel_to(labels, target, mask):
    """Map ``labels`` onto ``target``'s ids through the objects of ``mask``."""
    table = {int(a): int(b) for a, b in zip(labels[mask], target[mask])}
    return np.array([table[int(a)] for a in labels])


def test_cspa_agrees_with_sklearn_spectral_clustering(blobs):
    from sklearn.cluster import SpectralClustering

    _, y, ens = blobs
    S = coassociation(ens).toarray()
    ref = SpectralClustering(3, affinity="precomputed", random_state=0).fit_predict(S)
    assert adjusted_rand_score(cspa(0, ens, 3).labels, ref) == 1.0
    assert adjusted_rand_score(y, ref) == 1.0


# --------------------------------------------------------------------------- 3. invariances


def test_label_permutation_of_the_partitions(blobs):
    _, _, ens = blobs
    L = np.asarray(ens.labels)
    rng = np.random.default_rng(1)
    P = np.stack([rng.permutation(int(p.max()) + 1)[p] + 7 for p in L])  # new, shifted names
    for method in ("cspa", "mcla"):
        a = hypergraph_consensus(2, L, 3, method)
        b = hypergraph_consensus(2, P, 3, method)
        np.testing.assert_array_equal(a.labels, b.labels)


def test_object_permutation(blobs):
    _, y, ens = blobs
    L = np.asarray(ens.labels)
    perm = np.random.default_rng(2).permutation(L.shape[1])
    for method in ("cspa", "mcla"):
        a = hypergraph_consensus(0, L, 3, method).labels
        b = hypergraph_consensus(0, L[:, perm], 3, method).labels
        assert _same_partition(a[perm], b)
        assert _same_partition(a, y)


def test_duplicated_partitions_leave_cspa_unchanged(blobs):
    _, _, ens = blobs
    L = np.asarray(ens.labels)
    np.testing.assert_array_equal(cspa(4, L, 3).labels, cspa(4, np.concatenate([L, L]), 3).labels)


# --------------------------------------------------------------------------- 4. determinism


def test_determinism_from_a_seed(blobs):
    _, _, ens = blobs
    for method in ("cspa", "mcla"):
        a = hypergraph_consensus(11, ens, 4, method)
        b = hypergraph_consensus(11, ens, 4, method)
        np.testing.assert_array_equal(a.labels, b.labels)
    import jax

    key = jax.random.PRNGKey(11)
    np.testing.assert_array_equal(mcla(key, ens, 4).labels, mcla(11, ens, 4).labels)


def test_estimator_matches_functions_and_is_deterministic(blobs):
    import jax

    from bayesclust.estimators._base import _key_from_random_state

    X, y, ens = blobs
    for method, fn in (("cspa", cspa), ("mcla", mcla)):
        est = bc.HypergraphConsensus(3, method=method, random_state=0).fit(ensemble=ens.labels)
        _, k_fit = jax.random.split(_key_from_random_state(0))
        np.testing.assert_array_equal(est.labels_, fn(k_fit, np.asarray(ens.labels), 3).labels)
        a = bc.HypergraphConsensus(3, method=method, n_partitions=20, random_state=4).fit(X)
        b = bc.HypergraphConsensus(3, method=method, n_partitions=20, random_state=4).fit(X)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        assert adjusted_rand_score(a.labels_, y) == 1.0
        assert (a.meta_labels_ is None) == (method == "cspa")


def test_missing_objects(blobs):
    _, y, ens = blobs
    L = np.asarray(ens.labels).copy()
    rng = np.random.default_rng(3)
    L[rng.random(L.shape) < 0.1] = -1
    ensm = ens._replace(labels=L)  # an Ensemble: -1 marks a missing object
    for method in ("cspa", "mcla"):
        est = bc.HypergraphConsensus(3, method=method, random_state=0).fit(ensemble=ensm)
        assert adjusted_rand_score(est.labels_, y) == 1.0


# --------------------------------------------------------------------------- selection


def test_candidates_hold_every_consensus_function(blobs):
    _, y, ens = blobs
    C = coassociation(ens)
    methods = ("average", "cspa", "mcla", "penca", "ppc")
    cands = consensus_candidates(C, methods, [2, 3], ensemble=ens)
    assert cands.methods == tuple(m for m in methods for _ in (2, 3))
    np.testing.assert_array_equal(cands.labels[2], cspa(_seed(0, 1, 0, (5, 2)), C, 2).labels)
    for lab, k in zip(cands.labels, cands.n_clusters):
        assert len(np.unique(lab)) <= k
    sel = select_consensus(cands, ens, "anmi")
    assert sel.n_clusters == 3 and adjusted_rand_score(sel.labels, y) == 1.0
    # an ensemble as first argument also serves MCLA
    again = consensus_candidates(ens, ("mcla",), 3)
    assert again.labels.shape == (1, y.shape[0])


def _seed(rng_key, a, b, shape):
    """The seed consensus_candidates gives function ``a`` at number of clusters ``b``."""
    return int(V.as_numpy_rng(rng_key).integers(0, 2**31 - 1, size=shape)[a, b])


def test_evidence_accumulation_selects_among_consensus_functions(blobs):
    _, y, ens = blobs
    ea = bc.EvidenceAccumulation(3, method=["single", "cspa", "mcla"], select="anmi", random_state=0)
    ea.fit(ensemble=ens.labels)
    assert ea.method_ in ("single", "cspa", "mcla")
    assert adjusted_rand_score(ea.labels_, y) == 1.0
    assert ea.candidates_.methods == ("single", "cspa", "mcla")
    # a non-linkage choice has no dendrogram
    ea = bc.EvidenceAccumulation(3, method=["mcla"], select="anmi", random_state=0).fit(ensemble=ens.labels)
    assert ea.method_ == "mcla" and ea.linkage_ is None and ea.lifetimes_ is None


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", ["metis", "CSPA", 3, None])
def test_bad_method_names(bad):
    ens = [[0, 0, 1, 1], [0, 1, 1, 1]]
    with pytest.raises(ValueError, match="method"):
        hypergraph_consensus(0, ens, 2, bad)
    with pytest.raises(ValueError, match="methods"):
        consensus_candidates(ens, ("average", bad), 2)
    with pytest.raises(ValueError, match="method"):
        bc.EvidenceAccumulation(2, method=["average", bad], select="anmi").fit(ensemble=ens)
    with pytest.raises(ValueError, match="method"):
        bc.HypergraphConsensus(2, method=bad).fit(ensemble=ens)


def test_bad_arguments():
    ens = [[0, 0, 1, 1], [0, 1, 1, 1]]
    with pytest.raises(ValueError, match="n_clusters"):
        cspa(0, ens, 5)
    with pytest.raises(ValueError, match="n_clusters"):
        mcla(0, ens, 5)  # 4 hyperedges
    with pytest.raises(ValueError, match="n_clusters"):
        cspa(0, ens, 0)
    with pytest.raises(TypeError, match="ensemble"):
        mcla(0, coassociation(ens), 2)
    with pytest.raises(ValueError, match="ensemble"):
        consensus_candidates(coassociation(ens), "mcla", 2)
    with pytest.raises(ValueError, match="objects"):
        consensus_candidates(coassociation(ens), "mcla", 2, ensemble=[[0, 1, 1], [0, 0, 1]])
    with pytest.raises(ValueError, match="n_init"):
        cspa(0, ens, 2, n_init=0)
    with pytest.raises(TypeError, match="rng_key"):
        cspa("a", ens, 2)
    assert set(("cspa", "mcla", "penca", "ppc")) <= set(CONSENSUS_FUNCTIONS)


def test_all_ties_sanity():
    # every partition identical: every function returns it
    p = [0, 0, 1, 1, 2, 2]
    for m, k in itertools.product(("cspa", "mcla"), (3,)):
        assert hypergraph_consensus(0, [p, p, p], k, m).labels.tolist() == p
