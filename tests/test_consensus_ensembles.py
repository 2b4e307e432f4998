"""Grid clustering ensembles (several base clusterers x K) and the seven consensus linkages.

References are scikit-learn / scipy and slow literal loops written here: scipy's linkage of
the literal dense ``1 - C`` followed by a union-find over its first ``n - K`` merges, and the
lifetimes computed from the merge heights by hand.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.metrics import adjusted_rand_score

from bayesclust import EvidenceAccumulation, clustering_ensemble
from bayesclust.inference.consensus.coassociation import CoAssociation
from bayesclust.inference.consensus.linkage import LINKAGE_METHODS, linkage_consensus

METHODS = ("single", "average", "complete", "weighted", "ward", "centroid", "median")
MONOTONE = ("single", "average", "complete", "weighted", "ward")
BASES = ("kmeans", "single", "average", "complete", "ward", "spectral")


def _blobs(seed=0, per=20):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), per)
    X = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])[y] + 0.5 * rng.normal(size=(3 * per, 2))
    return X, y


def _random_coassociation(n, seed, N=1_000_000):
    """A dense symmetric C in (0, 1) with unit diagonal and pairwise-distinct entries (no ties),
    and the same matrix as a CoAssociation (counts / N with N = 10^6)."""
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    counts = rng.choice(np.arange(1, N), size=iu[0].size, replace=False)
    U = sp.csr_matrix((counts.astype(np.int32), iu), shape=(n, n))
    dense = np.zeros((n, n))
    dense[iu] = counts / N
    dense = dense + dense.T
    np.fill_diagonal(dense, 1.0)
    return dense, CoAssociation(U, N, None, np.full(n, N))


def _slow_cut(Z, K):
    """Union-find over the first n - K merges of Z, written out."""
    n = Z.shape[0] + 1
    parent = list(range(2 * n - 1))

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for t in range(n - K):
        parent[find(int(Z[t, 0]))] = n + t
        parent[find(int(Z[t, 1]))] = n + t
    return np.array([find(i) for i in range(n)])


# ---------------------------------------------------------------------------
# clustering_ensemble
# ---------------------------------------------------------------------------


def test_grid_shapes_order_and_per_partition_k():
    X, _ = _blobs()
    ens = clustering_ensemble(0, X, ("kmeans", "ward"), range(2, 5), 3)
    assert ens.labels.shape == (18, 60) and ens.labels.dtype == np.int32
    assert ens.n_clusters.tolist() == [2, 2, 2, 3, 3, 3, 4, 4, 4] * 2
    assert ens.base == ("kmeans",) * 9 + ("ward",) * 9
    assert (ens.k_min, ens.k_max) == (2, 4)
    assert ens.labels.min() >= 0
    for lab, k, b in zip(ens.labels, ens.n_clusters, ens.base):
        n_found = np.unique(lab).size
        # linkage cuts have exactly K clusters; k-means at most K (a cluster may empty)
        assert n_found == k if b == "ward" else n_found <= k
    # an int K and a numpy array of K are grids too
    assert clustering_ensemble(0, X, "single", 3, 2).n_clusters.tolist() == [3, 3]
    assert clustering_ensemble(0, X, "single", np.array([2, 5]), 1).n_clusters.tolist() == [2, 5]


def test_subsample_marks_left_out_objects():
    X, _ = _blobs()
    ens = clustering_ensemble(1, X, BASES, [2, 3], 2, subsample=0.9)
    assert ens.labels.shape == (24, 60)
    assert np.all((ens.labels == -1).sum(axis=1) == 6)  # round(0.9 * 60) = 54 sampled
    # the labelled objects of a linkage partition form exactly K clusters
    for lab, k, b in zip(ens.labels, ens.n_clusters, ens.base):
        if b != "kmeans":
            assert np.unique(lab[lab >= 0]).size == k
    # the sub-samples differ, so deterministic linkages no longer repeat themselves
    ward = ens.labels[np.array(ens.base) == "ward"]
    assert not np.array_equal(ward[0] >= 0, ward[1] >= 0)


def test_deterministic_linkages_repeat_without_subsample():
    X, _ = _blobs()
    ens = clustering_ensemble(2, X, ("average", "kmeans"), [4], 3)
    np.testing.assert_array_equal(ens.labels[0], ens.labels[1])
    np.testing.assert_array_equal(ens.labels[0], ens.labels[2])


def test_k_capped_at_distinct_points():
    X = np.repeat([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], 4, axis=0)  # 3 distinct points
    ens = clustering_ensemble(0, X, ("kmeans", "complete", "spectral"), [2, 7], 1)
    assert ens.n_clusters.tolist() == [2, 3] * 3
    assert (ens.k_min, ens.k_max) == (2, 3)


def test_reproducible_from_a_seed():
    X, _ = _blobs()
    kw = dict(base=("kmeans", "spectral", "average"), n_clusters=[2, 3], n_per_setting=2,
              subsample=0.8)
    a = clustering_ensemble(5, X, **kw)
    b = clustering_ensemble(5, X, **kw)
    c = clustering_ensemble(6, X, **kw)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.labels, c.labels)


def test_callable_base():
    X, _ = _blobs()
    seen = []

    def by_first_coordinate(Xs, k, rng):
        assert isinstance(rng, np.random.Generator)
        seen.append((Xs.shape[0], k))
        return np.minimum((Xs[:, 0] > 3).astype(int) * (k - 1), k - 1)

    ens = clustering_ensemble(0, X, by_first_coordinate, [2], 2, subsample=0.5)
    assert seen == [(30, 2), (30, 2)]
    assert ens.base == ("by_first_coordinate",) * 2
    for lab in ens.labels:
        np.testing.assert_array_equal(lab[lab >= 0], (X[lab >= 0, 0] > 3).astype(int))

    with pytest.raises(ValueError, match="non-negative integer labels"):
        clustering_ensemble(0, X, lambda Xs, k, rng: np.zeros(3, int), [2], 1)


@pytest.mark.parametrize("base", BASES)
def test_each_base_recovers_separated_blobs(base):
    X, y = _blobs()
    ens = clustering_ensemble(3, X, base, 3, 4, spectral_gamma=0.5 if base == "spectral" else None)
    scores = [adjusted_rand_score(y, lab) for lab in ens.labels]
    if base == "kmeans":  # one random start per run may land in a local optimum
        assert max(scores) == 1.0
    else:
        assert scores == [1.0] * 4


def test_spectral_agrees_with_scikit_learn_on_rings():
    from sklearn.cluster import SpectralClustering
    from sklearn.datasets import make_circles

    X, y = make_circles(80, factor=0.3, noise=0.03, random_state=0)
    ref = SpectralClustering(n_clusters=2, gamma=10.0, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, ref) == 1.0
    ens = clustering_ensemble(0, X, ("spectral", "kmeans"), 2, 3, spectral_gamma=10.0)
    for lab, b in zip(ens.labels, ens.base):  # rings: spectral yes, k-means no
        assert (adjusted_rand_score(ref, lab) == 1.0) == (b == "spectral")


def test_spectral_partition_is_kmeans_of_the_literal_njw_embedding():
    from sklearn.cluster import KMeans

    from bayesclust.inference.consensus.ensembles import _kmeanspp_rows, _njw_spectral

    X = np.random.default_rng(9).uniform(size=(40, 2))
    gamma, k, n = 10.0, 8, 40
    A = np.zeros((n, n))
    for i in range(n):  # Ng, Jordan & Weiss 2001: A_ij = exp(-gamma |x_i - x_j|^2), A_ii = 0
        for j in range(n):
            if i != j:
                A[i, j] = np.exp(-gamma * np.sum((X[i] - X[j]) ** 2))
    d = A.sum(axis=1)
    L = A / np.sqrt(np.outer(d, d))
    w, vecs = np.linalg.eigh(L)
    Y = vecs[:, -k:]
    Y = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    # the same random k-means++ start (it depends on distances only, not on eigenvector signs)
    start = Y[_kmeanspp_rows(np.random.default_rng(1), Y, k)]
    ref = KMeans(k, init=start, n_init=1, algorithm="lloyd", tol=0.0).fit_predict(Y)
    ours = _njw_spectral(np.random.default_rng(1), X, k, gamma, 100)
    assert adjusted_rand_score(ref, ours) == 1.0


def test_spectral_default_gamma_is_one():
    X = np.random.default_rng(4).uniform(size=(40, 2))  # no structure: every gamma cuts differently
    default = clustering_ensemble(0, X, "spectral", 4, 2).labels
    np.testing.assert_array_equal(default, clustering_ensemble(0, X, "spectral", 4, 2, spectral_gamma=1.0).labels)
    assert not np.array_equal(default, clustering_ensemble(0, X, "spectral", 4, 2, spectral_gamma=30.0).labels)


def test_clustering_ensemble_bad_input():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="base"):
        clustering_ensemble(0, X, "kmedoids", 2)
    with pytest.raises(ValueError, match="base"):
        clustering_ensemble(0, X, (), 2)
    with pytest.raises(ValueError, match="n_clusters"):
        clustering_ensemble(0, X, "kmeans", [2, 0])
    with pytest.raises(ValueError, match="n_clusters"):
        clustering_ensemble(0, X, "kmeans", [])
    with pytest.raises(ValueError, match="n_per_setting"):
        clustering_ensemble(0, X, "kmeans", 2, 0)
    with pytest.raises(ValueError, match="subsample"):
        clustering_ensemble(0, X, "kmeans", 2, subsample=1.5)
    with pytest.raises(ValueError, match="subsample"):
        clustering_ensemble(0, X, "kmeans", 2, subsample=0.0)
    with pytest.raises(ValueError, match="spectral_gamma"):
        clustering_ensemble(0, X, "spectral", 2, spectral_gamma=-1.0)


# ---------------------------------------------------------------------------
# linkage_consensus: seven methods
# ---------------------------------------------------------------------------


def test_method_list():
    assert set(LINKAGE_METHODS) == set(METHODS)


@pytest.mark.parametrize("method", METHODS)
def test_linkage_cut_equals_scipy_and_literal_union_find(method):
    n = 20
    dense, C = _random_coassociation(n, seed=0)
    Z_ref = linkage(squareform(1.0 - dense, checks=False), method=method)
    assert np.unique(Z_ref[:, 2]).size == n - 1  # no tied heights
    for K in (1, 2, 3, 5, 9, n):
        res = linkage_consensus(C, method, K)
        assert res.n_clusters == K and np.unique(res.labels).size == K
        assert adjusted_rand_score(_slow_cut(Z_ref, K), res.labels) == 1.0
        if method in MONOTONE and 1 < K < n:  # an independent reference where heights allow one
            assert adjusted_rand_score(fcluster(Z_ref, K, "maxclust"), res.labels) == 1.0
    np.testing.assert_allclose(res.linkage, Z_ref)


@pytest.mark.parametrize("method", METHODS)
def test_lifetime_criterion_is_argmax_of_clipped_lifetimes(method):
    n = 20
    dense, C = _random_coassociation(n, seed=0)
    h = linkage(squareform(1.0 - dense, checks=False), method=method)[:, 2]
    life = np.zeros(n + 1)
    for k in range(2, n + 1):  # l_k = h_{n-k+1} - h_{n-k}, h_0 = 0, clipped at 0
        upper = h[n - k]
        lower = h[n - k - 1] if n - k - 1 >= 0 else 0.0
        life[k] = max(upper - lower, 0.0)
    res = linkage_consensus(C, method)
    np.testing.assert_allclose(res.lifetimes, life, atol=1e-12)
    assert res.n_clusters == int(np.argmax(life[2:])) + 2
    assert np.all(res.lifetimes >= 0)
    if method in ("centroid", "median"):
        assert np.any(np.diff(h) < 0)  # this tree is non-monotone: clipping is exercised


def test_single_link_dense_and_sparse_agree():
    dense, C = _random_coassociation(15, seed=1)
    for K in (2, 4, 7):
        a = linkage_consensus(C, "single", K, dense=True).labels
        b = linkage_consensus(C, "single", K, dense=False).labels
        assert adjusted_rand_score(a, b) == 1.0


@pytest.mark.parametrize("method", METHODS)
def test_evidence_accumulation_accepts_every_linkage(method):
    X, y = _blobs(per=10)
    ens = clustering_ensemble(0, X, ("kmeans", "average"), range(2, 6), 5, subsample=0.9)
    est = EvidenceAccumulation(n_clusters=3, method=method).fit(ensemble=ens)
    assert est.labels_.shape == (30,) and est.n_clusters_ == 3
    if method != "complete":  # complete link's top merges tie at height 1 (tie order decides)
        assert adjusted_rand_score(y, est.labels_) == 1.0


def test_linkage_bad_input():
    _, C = _random_coassociation(6, seed=2)
    with pytest.raises(ValueError, match="method"):
        linkage_consensus(C, "mcquitty")
    with pytest.raises(ValueError, match="dense"):
        linkage_consensus(C, "ward", dense=False)
    with pytest.raises(ValueError, match="dense"):
        linkage_consensus(C, "centroid", 2, dense=False)
    with pytest.raises(ValueError, match="method"):
        EvidenceAccumulation(method="mcquitty").fit(ensemble=[[0, 0, 1], [0, 1, 1]])
