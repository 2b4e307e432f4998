"""The k-means ensemble's host Lloyd loop at scale: the KD-tree assignment queried in tree
order and shared out to threads gives the labels of a plain Lloyd loop and of scikit-learn."""

import numpy as np
import pytest

from bayesclust.inference.consensus import ensembles
from bayesclust.inference.hard import kmeans as km


def _reference_lloyd(X, C, max_iter):
    """Lloyd's algorithm (Lloyd 1982) written out: brute-force nearest centre, mean update,
    stop when the assignment repeats; an empty cluster keeps its centre."""
    C = C.copy()
    labels = np.full(X.shape[0], -1)
    for _ in range(max_iter):
        new = np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(-1), axis=1)
        if np.array_equal(new, labels):
            return labels
        labels = new
        for k in range(C.shape[0]):
            if np.any(labels == k):
                C[k] = X[labels == k].mean(0)
    return np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(-1), axis=1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 20_000  # above both thresholds: tree-ordered queries on all cores
    assert n >= km._KDTREE_ORDER_MIN_N and n >= km._KDTREE_THREADS_MIN_N
    X = rng.normal(size=(n, 2)) + 6.0 * rng.integers(0, 4, size=(n, 1))
    C0 = X[np.sort(rng.choice(n, size=40, replace=False))]
    return X, C0


def test_tree_ordered_kdtree_lloyd_equals_reference_loop(data):
    X, C0 = data
    lab = km.lloyd_host(X, C0, 8, assignment="kdtree")
    np.testing.assert_array_equal(lab, _reference_lloyd(X, C0, 8))
    assert lab.dtype == np.int64 and np.unique(lab).size == C0.shape[0]  # K exact, no empty cluster


def test_tree_ordered_kdtree_lloyd_equals_unordered_and_dense(data, monkeypatch):
    X, C0 = data
    fast = km.lloyd_host(X, C0, 15, assignment="kdtree")
    np.testing.assert_array_equal(fast, km.lloyd_host(X, C0, 15, assignment="dense"))
    monkeypatch.setattr(km, "_KDTREE_ORDER_MIN_N", 10**9)
    monkeypatch.setattr(km, "_KDTREE_THREADS_MIN_N", 10**9)
    np.testing.assert_array_equal(fast, km.lloyd_host(X, C0, 15, assignment="kdtree"))


def test_kdtree_lloyd_equals_sklearn_from_the_same_start(data):
    from sklearn.cluster import KMeans

    X, C0 = data
    lab = km.lloyd_host(X, C0, 20, assignment="kdtree")
    ref = KMeans(C0.shape[0], init=C0, n_init=1, max_iter=20, tol=0.0, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(lab, ref.labels_)


def test_kmeans_ensemble_partitions_are_lloyd_fixed_points_at_scale(data):
    X, _ = data
    ens = ensembles.kmeans_ensemble(3, X, 3, n_clusters_range=(30, 60), max_iter=300)
    for lab, k in zip(ens.labels, ens.n_clusters):
        assert np.unique(lab).size == k  # K exact: no empty cluster on these data
        C = np.stack([X[lab == j].mean(0) for j in range(k)])
        nearest = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
        np.testing.assert_array_equal(nearest, lab)  # converged: a Lloyd fixed point


def test_relocated_empty_cluster_equals_sklearn():
    from sklearn.cluster import KMeans

    from bayesclust.datasets import ten_gaussians

    # Ten unit Gaussians, K = 20 from these random points: a cluster empties on the way.
    X, _ = ten_gaussians(0, 1000)
    X = np.asarray(X, np.float64)
    found = False
    for seed in range(60):
        C0 = X[np.sort(np.random.default_rng(seed).choice(1000, size=20, replace=False))]
        if np.unique(km.lloyd_host(X, C0, 20, assignment="kdtree")).size < 20:
            found = True
            break
    assert found  # the kept empty centre leaves fewer than K clusters
    lab = km.lloyd_host(X, C0, 20, assignment="kdtree", empty="relocate")
    ref = KMeans(20, init=C0, n_init=1, max_iter=20, tol=0.0, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(lab, ref.labels_)
    assert np.unique(lab).size == 20
    np.testing.assert_array_equal(lab, km.lloyd_host(X, C0, 20, assignment="dense", empty="relocate"))
    with pytest.raises(ValueError, match="empty"):
        km.lloyd_host(X, C0, 20, empty="move")
