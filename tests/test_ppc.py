"""PPC: pairwise probabilistic clustering by the Baum-Eagon growth transform.

References are a literal dense NumPy loop of eq. (5) and a dense objective written here
(Rota Bulò, Lourenço, Fred & Pelillo 2010), scikit-learn's ARI, never the code under test.
"""

import warnings

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

import bayesclust as bc
from bayesclust import datasets, metrics
from bayesclust.inference.consensus import ppc as ppc_module
from bayesclust.inference.consensus.coassociation import coassociation
from bayesclust.inference.consensus.ensembles import kmeans_ensemble
from bayesclust.inference.consensus.ppc import PPCInfo, PPCState, init_ppc_state, ppc, ppc_step

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
    # ... so the driver jitters such a start, says so, and then moves away from it.
    with pytest.warns(UserWarning, match="init_memberships is uniform.*jittered"):
        res = ppc(0, iris_c50, K, init_memberships=U, max_iter=200)
    assert res.n_iter > 10 and res.objective < res.objective_trace[0] - 100
    assert res.entropy.mean() < 0.95  # no longer uniform (1.0); 0.88 measured
    assert metrics.consistency_index(Y_IRIS, res.labels) > 0.8
    # the jittered start is near the barycentre, not at it
    obj_u = _dense_objective(U, C)
    assert 0 < abs(res.objective_trace[0] - obj_u) < 1e-2 * obj_u
    # K = 1 has only the uniform start: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ppc(0, iris_c50, 1, init_memberships=np.ones((n, 1))).labels.max() == 0
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


def _upper_pairs(C):
    """The stored pairs i < j of a dense co-association, sorted by row (scipy's CSR order)."""
    U = sp.triu(sp.csr_matrix(C), 1).tocoo()
    return U.row.astype(np.int32), U.col.astype(np.int32), U.data.astype(np.float64), C.diagonal().copy()


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("tol", [1e-300, 5e-4])  # runs to max_iter; converges after ~200
def test_init_and_step_by_hand_reproduce_ppc(x64, iris_c50, mask, tol):
    """ppc is ppc_step looped from init_ppc_state: labels, memberships, trace and n_iter bit for bit,
    over more iterations than one piece of the driver's trace buffer (128)."""
    C = iris_c50.toarray()
    rows, cols, vals, diag = _upper_pairs(C)
    assert np.unique(np.r_[rows, cols]).size == C.shape[0]  # no isolated object: the driver fits all
    Y0 = np.random.default_rng(5).dirichlet(np.ones(3), size=C.shape[0])
    max_iter = 300
    res = ppc(0, iris_c50, 3, init_memberships=Y0, max_iter=max_iter, tol=tol, mask_diagonal=mask)
    # ppc renormalises init_memberships (documented: rows summing to 1 up to rounding)
    state = init_ppc_state(rows, cols, vals, diag, Y0 / Y0.sum(axis=1, keepdims=True), mask_diagonal=mask,
                           max_iter=max_iter)
    step = jax.jit(ppc_step)
    changes = 0
    while int(state.n_iter) < max_iter and not bool(state.converged):
        before = np.asarray(state.labels)
        state, info = step(state, rows, cols, vals, diag, tol=tol, mask_diagonal=mask)
        assert float(info.objective) == float(state.objective)
        assert bool(info.changed) == (not np.array_equal(before, state.labels))
        changes += bool(info.changed)
    it = int(state.n_iter)
    assert changes > 0 and it > 128
    assert (res.n_iter, res.converged) == (it, bool(state.converged))
    assert res.converged == (tol > 1e-300)
    np.testing.assert_array_equal(res.objective_trace, np.asarray(state.objective_trace)[: it + 1])
    np.testing.assert_array_equal(res.memberships, np.asarray(state.memberships))
    np.testing.assert_array_equal(res.labels, np.asarray(state.labels))
    assert res.objective == float(state.objective)


def test_state_fields_are_the_documented_ones(x64):
    from ._reference import documented_attributes

    assert list(PPCState._fields) == documented_attributes(PPCState)
    assert list(PPCInfo._fields) == documented_attributes(PPCInfo)
    C = np.array([[1.0, 0.8, 0.0], [0.8, 1.0, 0.1], [0.0, 0.1, 1.0]])
    state = init_ppc_state(*_upper_pairs(C), np.full((3, 2), 0.5) + [[0.1, -0.1]] * 3, max_iter=10)
    assert state.memberships.shape == state.YC.shape == (3, 2) and state.objective_trace.shape == (16,)
    assert state.labels.dtype == jax.numpy.int32 and state.n_iter.dtype == jax.numpy.int32
    Y = np.asarray(state.memberships)
    np.testing.assert_allclose(np.asarray(state.YC), C @ Y, rtol=1e-12)
    assert float(state.objective) == pytest.approx(np.sum((C - Y @ Y.T) ** 2), rel=1e-12)


def test_longer_max_iter_only_extends_the_run(iris_c50):
    """No cap on max_iter, no compile for a new one, and a longer run starts as the shorter one."""
    short = ppc(0, iris_c50, 3, n_init=1, max_iter=150, tol=1e-300)
    compiled = ppc_module._run._cache_size()
    long = ppc(0, iris_c50, 3, n_init=1, max_iter=10_050, tol=1e-300)
    assert ppc_module._run._cache_size() == compiled
    assert short.n_iter == 150 and long.n_iter > 10_000
    np.testing.assert_array_equal(long.objective_trace[:151], short.objective_trace)


def test_ensemble_and_coassociation_inputs_agree():
    ens = kmeans_ensemble(2, X_IRIS[::3], 10)
    a = ppc(7, ens, 3, n_init=2, max_iter=50)
    b = ppc(7, coassociation(ens), 3, n_init=2, max_iter=50)
    np.testing.assert_array_equal(a.memberships, b.memberships)
    np.testing.assert_array_equal(a.restart_objectives, b.restart_objectives)
    assert bc.ppc is ppc and "PPCResult" in bc.__all__ and "ppc" in bc.__all__
    for name in ("PPCState", "PPCInfo", "init_ppc_state", "ppc_step"):
        assert name in bc.__all__ and getattr(bc, name) is getattr(ppc_module, name)


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
        np.array([[np.nan, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]]),  # NaN on the diagonal
        np.array([[1.0, 0.5], [0.5, np.inf]]),
    ],
)
def test_bad_coassociation(C):
    with pytest.raises(ValueError, match="coassoc"):
        ppc(0, C, 2)
    with pytest.raises(ValueError, match="coassoc"):  # sparse input too
        ppc(0, sp.csr_matrix(C), 2)


def test_isolated_objects_get_uniform_memberships_and_are_left_out():
    """Objects never co-clustered with another get y_i = 1/K, are flagged, and the others are
    fitted exactly as if they were absent; the objective is still ||C - Y^T Y||^2 of all n."""
    truth = np.repeat([0, 1], [6, 5])
    C_in = np.where(truth[:, None] == truth[None, :], 0.8, 0.1)
    np.fill_diagonal(C_in, 1.0)
    n_in, iso = C_in.shape[0], [2, 7, 13]  # positions of three isolated objects in the full C
    n = n_in + len(iso)
    where = np.setdiff1d(np.arange(n), iso)
    C = np.zeros((n, n))
    C[np.ix_(where, where)] = C_in
    C[iso, iso] = [1.0, 0.0, 1.0]  # one never sampled (c_ii = 0)
    K = 2
    Y0_in = np.random.default_rng(5).dirichlet(np.ones(K), size=n_in)
    Y0 = np.full((n, K), 0.3)
    Y0[:, 1] = 0.7
    Y0[where] = Y0_in
    for mask in (False, True):
        ref = ppc(0, C_in, K, init_memberships=Y0_in, max_iter=30, tol=1e-300, mask_diagonal=mask)
        res = ppc(0, C, K, init_memberships=Y0, max_iter=30, tol=1e-300, mask_diagonal=mask)
        np.testing.assert_array_equal(res.isolated, np.isin(np.arange(n), iso))
        assert not ref.isolated.any()
        np.testing.assert_allclose(res.memberships[where], ref.memberships, rtol=0, atol=1e-13)
        np.testing.assert_array_equal(res.memberships[iso], 0.5)
        np.testing.assert_allclose(res.entropy[iso], 1.0)
        assert res.n_iter == ref.n_iter == 30
        dense = _dense_objective(res.memberships.T, C, mask)
        assert res.objective == pytest.approx(dense, rel=1e-12)
        assert res.objective_trace[0] == pytest.approx(_dense_objective(
            np.where(res.isolated[:, None], 0.5, Y0).T, C, mask), rel=1e-12)
        assert np.all(np.diff(res.objective_trace) <= 1e-12 * res.objective_trace[:-1])
    # random starts: the isolated rows stay uniform, the rest split into the two blocks
    res = ppc(1, C, K)
    np.testing.assert_array_equal(res.memberships[iso], 0.5)
    assert adjusted_rand_score(truth, res.labels[where]) == 1.0
    # nothing linked at all: every object isolated
    res = ppc(0, np.eye(4), 3)
    assert res.isolated.all() and res.n_iter == 0 and res.converged
    np.testing.assert_allclose(res.memberships, 1 / 3)
    assert res.objective == pytest.approx(_dense_objective(np.full((3, 4), 1 / 3), np.eye(4)))
    # a CoAssociation of an ensemble in which an object is always alone
    parts = [[0, 0, 1, 1, 2], [1, 1, 0, 0, 2], [0, 0, 0, 1, 3]]
    res = ppc(0, coassociation(parts), 2, max_iter=50)
    np.testing.assert_array_equal(res.isolated, [False, False, False, False, True])


def test_pairwise_consensus_estimator_matches_ppc_and_takes_every_source():
    import jax

    from bayesclust import PairwiseConsensus, Posterior
    from bayesclust.estimators._base import _key_from_random_state

    Xs, ys = X_IRIS[::3], Y_IRIS[::3]  # 50 x 4
    est = PairwiseConsensus(3, n_partitions=20, max_iter=200, random_state=0).fit(Xs)
    assert est.ensemble_.shape == (20, 50) and est.coassociation_.n_samples == 50
    # the functional core on the estimator's own ensemble, with the key the estimator uses
    _, k_ppc = jax.random.split(_key_from_random_state(0))
    ref = ppc(k_ppc, coassociation(est.ensemble_), 3, max_iter=200)
    np.testing.assert_array_equal(est.memberships_, ref.memberships)
    np.testing.assert_array_equal(est.labels_, ref.labels)
    assert est.probabilities_ is est.memberships_ and est.memberships_.shape == (50, 3)
    np.testing.assert_array_equal(est.entropy_, ref.entropy)
    assert est.objective_ == ref.objective and est.n_iter_ == ref.n_iter
    assert est.converged_ == ref.converged and est.n_clusters_ == 3 and not est.isolated_.any()
    # setosa is one cluster of its own (CI .74 measured: 200 iterations on a fine ensemble)
    assert np.unique(est.labels_[ys == 0]).size == 1
    assert est.labels_[ys == 0][0] not in est.labels_[ys != 0]
    # the same partitions as an array, a list and a Posterior's draws give the same fit
    parts = est.ensemble_
    fits = [PairwiseConsensus(3, max_iter=200, random_state=1).fit(ensemble=src)
            for src in (parts, list(parts), Posterior(parts.reshape(2, 10, 50)))]
    for f in fits[1:]:
        np.testing.assert_array_equal(f.memberships_, fits[0].memberships_)
    assert np.array_equal(fits[0].fit_predict(ensemble=parts), fits[0].labels_)
    with pytest.raises(ValueError, match="n_clusters"):
        PairwiseConsensus(7).fit(ensemble=[[0, 1, 1, 0], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match="fit needs X"):
        PairwiseConsensus(2).fit()
    with pytest.raises(ValueError, match="tol"):
        PairwiseConsensus(2, tol=0.0).fit(ensemble=parts)
    assert "PairwiseConsensus" in bc.__all__ and bc.PairwiseConsensus is PairwiseConsensus
