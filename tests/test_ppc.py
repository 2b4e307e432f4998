"""PPC: pairwise probabilistic clustering by the Baum-Eagon growth transform.

References are a literal dense NumPy loop of eq. (5) and a dense objective written here
(Rota Bulò, Lourenço, Fred & Pelillo 2010), scikit-learn's ARI, never the code under test.
"""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import bayesclust as bc
from bayesclust import datasets, metrics
from bayesclust.inference.coassociation import coassociation
from bayesclust.inference.ensembles import kmeans_ensemble
from bayesclust.inference.ppc import ppc

X_IRIS, Y_IRIS = datasets.load_iris()


@pytest.fixture(scope="module")
def iris_c50():
    return coassociation(kmeans_ensemble(0, X_IRIS, 50))


def _dense_update(Y, C, mask=False):
    """One literal step of eq. (5) on a dense C, Y of shape (K, n)."""
    n = C.shape[0]
    R = C - Y.T @ Y
    if mask:
        np.fill_diagonal(R, 0.0)
    G = Y @ R
    num = Y * (n + G)
    return num / num.sum(axis=0, keepdims=True)


def _dense_objective(Y, C, mask=False):
    R = C - Y.T @ Y
    if mask:
        np.fill_diagonal(R, 0.0)
    return float(np.sum(R * R))


def test_uniform_memberships_are_a_fixed_point(iris_c50):
    C = iris_c50.toarray()
    K, n = 3, C.shape[0]
    U = np.full((K, n), 1.0 / K)
    np.testing.assert_allclose(_dense_update(U, C), U, rtol=0, atol=1e-15)
    # ... and the driver started there never moves (hence the random starts).
    res = ppc(0, iris_c50, K, init_memberships=U)
    np.testing.assert_allclose(res.memberships, 1.0 / K, rtol=0, atol=1e-14)
    assert res.n_iter == 1 and res.converged
    np.testing.assert_allclose(res.entropy, 1.0, atol=1e-12)
    # A random start does move.
    Y = np.random.default_rng(0).dirichlet(np.ones(K), size=n).T
    assert np.abs(_dense_update(Y, C) - Y).max() > 1e-3


def test_objective_trace_is_non_increasing(iris_c50):
    res = ppc(1, iris_c50, 3, max_iter=300)
    tr = res.objective_trace
    assert tr.shape == (res.n_iter + 1,) and np.all(np.isfinite(tr))
    assert np.all(np.diff(tr) <= 1e-12 * tr[:-1]), np.diff(tr).max()
    assert tr[-1] < tr[0] - 100  # it moved a lot from the random start
    # The reported objective is ||C - Y^T Y||_F^2 of the returned memberships.
    Y = res.memberships.T
    assert res.objective == pytest.approx(_dense_objective(Y, iris_c50.toarray()), rel=1e-12)
    assert res.objective == tr[-1] == res.restart_objectives.min()
    assert res.restart_objectives.shape == (5,)
    np.testing.assert_allclose(res.memberships.sum(axis=1), 1.0, atol=1e-12)
    assert res.memberships.min() >= 0
    np.testing.assert_array_equal(res.labels, np.argmax(res.memberships, axis=1))
    assert res.labels.dtype == np.int64
    h = -np.sum(np.where(res.memberships > 0, res.memberships * np.log(res.memberships), 0), axis=1)
    np.testing.assert_allclose(res.entropy, h / np.log(3), atol=1e-12)


@pytest.mark.parametrize("mask", [False, True])
def test_sparse_path_equals_dense_reference_loop(iris_c50, mask):
    C = iris_c50.toarray()
    K, n = 4, C.shape[0]
    Y0 = np.random.default_rng(3).dirichlet(np.ones(K), size=n).T  # (K, n)
    Y, objs = Y0.copy(), [_dense_objective(Y0, C, mask)]
    for _ in range(20):
        Y = _dense_update(Y, C, mask)
        objs.append(_dense_objective(Y, C, mask))
    res = ppc(0, iris_c50, K, init_memberships=Y0, max_iter=20, tol=1e-300, mask_diagonal=mask)
    assert res.n_iter == 20 and not res.converged
    np.testing.assert_allclose(res.memberships, Y.T, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.objective_trace, objs, rtol=1e-10)
    # (n, K) starts, the dense matrix and the ensemble itself give the same fit.
    res_t = ppc(0, C, K, init_memberships=Y0.T, max_iter=20, tol=1e-300, mask_diagonal=mask)
    np.testing.assert_allclose(res_t.memberships, res.memberships, rtol=0, atol=1e-12)


def test_ensemble_and_coassociation_inputs_agree():
    ens = kmeans_ensemble(2, X_IRIS[::3], 10)
    a = ppc(7, ens, 3, n_init=2, max_iter=50)
    b = ppc(7, coassociation(ens), 3, n_init=2, max_iter=50)
    np.testing.assert_array_equal(a.memberships, b.memberships)
    np.testing.assert_array_equal(a.restart_objectives, b.restart_objectives)
    assert bc.ppc is ppc and "PPCResult" in bc.__all__ and "ppc" in bc.__all__


def test_block_diagonal_recovered():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], [20, 5, 40])
    n = truth.size
    C = np.where(truth[:, None] == truth[None, :], 0.9, 0.1)
    noise = rng.uniform(-0.08, 0.08, (n, n))
    C = np.clip(C + (noise + noise.T) / 2, 0, 1)
    np.fill_diagonal(C, 1.0)
    res = ppc(0, C, 3)
    assert adjusted_rand_score(truth, res.labels) == 1.0
    # the small block is as sure as the others: memberships are nearly hard everywhere
    assert res.entropy.max() < 0.5


@pytest.mark.paper
def test_iris_consistency_index_kmeans_ensemble():
    C = coassociation(kmeans_ensemble(0, X_IRIS, 150))
    res = ppc(0, C, 3)
    ci = metrics.consistency_index(Y_IRIS, res.labels)
    assert ci >= 0.85, ci


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 7}, "n_clusters"),
        ({"n_init": 0}, "n_init"),
        ({"tol": 0.0}, "tol"),
        ({"tol": -1e-9}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"max_iter": 10_001}, "max_iter"),
        ({"init_memberships": np.ones((6, 3))}, "init_memberships"),
        ({"init_memberships": np.full((6, 2), 0.3)}, "init_memberships"),
        ({"init_memberships": np.tile([1.5, -0.5], (6, 1))}, "init_memberships"),
    ],
)
def test_bad_arguments(kwargs, match):
    C = np.eye(6)
    C[0, 1] = C[1, 0] = 0.5
    args = {"n_clusters": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        ppc(0, C, args.pop("n_clusters"), **args)


@pytest.mark.parametrize(
    "C",
    [
        np.array([[1.0, 0.5, 0.0], [0.4, 1.0, 0.0], [0.0, 0.0, 1.0]]),  # asymmetric
        np.array([[1.0, 1.5, 0.0], [1.5, 1.0, 0.0], [0.0, 0.0, 1.0]]),  # above 1
        np.array([[1.0, -0.1, 0.0], [-0.1, 1.0, 0.0], [0.0, 0.0, 1.0]]),  # negative
        np.array([[1.0, np.nan, 0.0], [np.nan, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    ],
)
def test_bad_coassociation(C):
    with pytest.raises(ValueError, match="coassoc"):
        ppc(0, C, 2)
