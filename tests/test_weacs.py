"""Weighted co-association and WEACS (SWEACS / JWEACS)."""

import numpy as np
import pytest
from sklearn.metrics import calinski_harabasz_score, davies_bouldin_score, silhouette_score

from bayesclust import metrics
from bayesclust.inference.consensus.coassociation import coassociation, coassociation_dense
from bayesclust.inference.consensus.weacs import validity_weights, weacs


def _ensemble(rng, N=12, n=40, missing=0.0):
    E = rng.integers(0, 5, (N, n))
    if missing:
        E[rng.random(E.shape) < missing] = -1
    return E


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_unit_weights_equal_the_unweighted_coassociation(missing):
    E = _ensemble(np.random.default_rng(0), missing=missing)
    a = coassociation(E, allow_missing=True)
    b = coassociation(E, allow_missing=True, weights=np.ones(E.shape[0]))
    assert a.counts.dtype == np.int32 and b.counts.dtype == np.float64
    np.testing.assert_array_equal(a.counts.toarray(), b.counts.toarray())
    np.testing.assert_array_equal(a.normalized().toarray(), b.normalized().toarray())
    np.testing.assert_array_equal(a.toarray(), b.toarray())


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_weighted_coassociation_against_a_loop(missing):
    rng = np.random.default_rng(1)
    E = _ensemble(rng, missing=missing)
    w = rng.random(E.shape[0])
    w[2] = 0.0
    N, n = E.shape
    num = np.zeros((n, n))
    den = np.zeros((n, n))
    for l in range(N):
        for i in range(n):
            for j in range(n):
                if E[l, i] >= 0 and E[l, j] >= 0:
                    den[i, j] += 1
                    num[i, j] += w[l] * (E[l, i] == E[l, j])
    want = np.where(den > 0, num / np.maximum(den, 1), 0.0)
    C = coassociation(E, allow_missing=True, weights=w)
    got = C.toarray()
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_allclose(got[off], want[off], rtol=1e-12, atol=1e-15)


def test_weighted_coassociation_small_batches_agree():
    rng = np.random.default_rng(2)
    E = _ensemble(rng)
    w = rng.random(E.shape[0])
    a = coassociation(E, weights=w).counts.toarray()
    b = coassociation(E, weights=w, max_pairs_per_batch=1).counts.toarray()
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_weights_bad_input():
    E = [[0, 0, 1], [0, 1, 1]]
    with pytest.raises(ValueError, match="weights"):
        coassociation(E, weights=[1.0, -0.5])
    with pytest.raises(ValueError, match="weights"):
        coassociation(E, weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        coassociation(E, weights=[1.0, np.nan])


def test_calinski_harabasz_matches_sklearn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    labels = rng.integers(0, 4, 60)
    assert metrics.calinski_harabasz(X, labels) == pytest.approx(calinski_harabasz_score(X, labels), rel=1e-12)
    with pytest.raises(ValueError, match="labels"):
        metrics.calinski_harabasz(X, np.zeros(60, int))


def test_validity_weights_min_max_against_sklearn():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2)) + np.repeat([[0, 0], [5, 5]], 25, axis=0)
    E = rng.integers(0, 3, (6, 50))
    E[0] = np.repeat([0, 1], 25)
    E[3, rng.random(50) < 0.2] = -1
    names = ("silhouette", "davies_bouldin", "calinski_harabasz")
    w, values = validity_weights(X, E, names)
    refs = {"silhouette": (silhouette_score, True), "davies_bouldin": (davies_bouldin_score, False),
            "calinski_harabasz": (calinski_harabasz_score, True)}
    zs = []
    for name, (fn, up) in refs.items():
        v = np.array([fn(X[r >= 0], r[r >= 0]) for r in E])
        np.testing.assert_allclose(values[name], v, rtol=1e-10)
        z = (v - v.min()) / (v.max() - v.min())
        zs.append(z if up else 1 - z)
    np.testing.assert_allclose(w, np.mean(zs, axis=0), rtol=1e-10, atol=1e-12)
    assert w[0] == pytest.approx(1.0)  # the true split is the best partition for all three
    sw, _ = validity_weights(X, E, "silhouette")
    np.testing.assert_allclose(sw, zs[0], atol=1e-12)


def test_weacs_recovers_separated_blobs_and_bad_input():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 2)) * 0.3 + np.array([[0, 0], [4, 0], [0, 4]])[y]
    for indices in ("silhouette", ("silhouette", "davies_bouldin", "calinski_harabasz")):
        res = weacs(0, X, 3, indices=indices, n_partitions=20, n_clusters_range=(4, 8))
        assert metrics.ari(y, res.labels) == 1.0
        assert np.all((res.ensemble.labels == -1).mean(axis=1) == pytest.approx(0.2, abs=0.02))
        assert np.all((res.weights >= 0) & (res.weights <= 1))
        assert res.weights.max() == 1.0 or not isinstance(indices, str)  # SWEACS: min-max reaches 1
    with pytest.raises(ValueError, match="indices"):
        weacs(0, X, 3, indices="dunn")
    with pytest.raises(ValueError, match="indices"):
        weacs(0, X, 3, indices=())
    with pytest.raises(ValueError, match="subsample"):
        weacs(0, X, 3, subsample=1.5)


def test_dense_reference_is_the_unweighted_case():
    E = _ensemble(np.random.default_rng(6), missing=0.2)
    np.testing.assert_allclose(coassociation(E, allow_missing=True, weights=np.ones(12)).toarray(),
                               coassociation_dense(E, allow_missing=True), rtol=1e-15)
