"""CEC-IB's compiled Hartigan passes (full covariances) against the NumPy loop.

The NumPy loop (``_pass``: one :func:`_visit` per point, Śmieja & Geiger 2017, §3.4)
is the reference: the compiled passes -- the native kernel (``cecib.cc``) when the
native kernels are on, the JAX scan under ``BAYESCLUST_NATIVE=0`` (``make test-xla``) --
must make the same visits in the same order, so partitions, slots, pass counts and
objective traces are identical.  Costs are checked against eq. 10 computed from scratch
with SciPy's entropies (``ref_cost``).
"""

from __future__ import annotations

import logging

import jax
import numpy as np
import pytest

from bayesclust import _native
from bayesclust.inference.information import cecib as C

from .test_cecib import ref_cost

needs_native = pytest.mark.skipif(
    not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")


def _run(X, z, m, lab0, K, beta, eps, compiled, max_iter=100):
    n, d = X.shape
    n_min = C._min_cluster_size(n, d, eps, "full")
    return C._hartigan(X - X.mean(0), z, m, lab0, K, beta, n_min, "full", max_iter, 1e-10,
                       compiled=compiled)


def _data(seed, n=150, d=2, groups=3, labelled=0.3, m=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 4.0 * rng.integers(0, groups, (n, 1))
    z = np.where(rng.random(n) < labelled, rng.integers(0, m, n), -1)
    return rng, X, z


def _assert_same(a, b):
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.active, b.active)
    assert a.n_iter == b.n_iter and a.converged == b.converged
    np.testing.assert_allclose(a.objective_trace, b.objective_trace, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_scan_makes_the_numpy_loops_moves(seed):
    rng, X, z = _data(seed, d=2 + seed % 3, labelled=(0.0, 0.3, 1.0)[seed % 3])
    beta = float(rng.uniform(0, 2))
    K = 6
    lab0 = rng.integers(0, K, len(X))
    ref = _run(X, z, 3, lab0, K, beta, 0.05, compiled=False)
    got = _run(X, z, 3, lab0, K, beta, 0.05, compiled=True)
    _assert_same(got, ref)
    # the objective is eq. 10 of the returned partition, computed independently
    assert got.objective == pytest.approx(ref_cost(X, got.labels, z, beta), rel=1e-10)


def test_each_pass_lowers_the_cost_when_no_cluster_is_deleted():
    # two well separated blobs, two starting clusters, small eps: no deletion
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(0, 1, (80, 3)), rng.normal(6, 1, (80, 3))])
    z = np.where(rng.random(160) < 0.3, (np.arange(160) >= 80).astype(int), -1)
    state = C.init_cecib_state(X, rng.integers(0, 2, 160), z, beta=0.8, eps=0.01)
    costs = [state.objective]
    while not state.converged:
        state, info = C.cecib_step(state)
        assert int(state.active.sum()) == 2
        # the pass's objective is eq. 10 of its partition (from scratch, SciPy's entropies)
        assert info.objective == pytest.approx(ref_cost(X, state.labels, z, 0.8), rel=1e-10)
        costs.append(info.objective)
    assert len(costs) > 2
    assert np.all(np.diff(costs) <= 1e-12)
    np.testing.assert_array_equal(costs, state.objective_trace)


def test_cluster_removal_runs_inside_the_scan(monkeypatch):
    rng, X, z = _data(11, n=240, groups=2)
    K = 8
    lab0 = rng.integers(0, K, len(X))
    ref = _run(X, z, 3, lab0, K, 1.0, 0.1, compiled=False)
    host_visits = []
    visit = C._visit
    monkeypatch.setattr(C, "_visit", lambda st, i, tol, on_move=None: host_visits.append(i)
                        or visit(st, i, tol, on_move))
    got = _run(X, z, 3, lab0, K, 1.0, 0.1, compiled=True)
    _assert_same(got, ref)
    assert int(got.active.sum()) < K  # clusters were removed ...
    assert host_visits == []  # ... by the compiled scan, not by the host
    n_min = C._min_cluster_size(len(X), 2, 0.1, "full")
    sizes = np.bincount(got.labels, minlength=K)
    assert np.all(sizes[got.active] >= n_min) and np.all(sizes[~got.active] == 0)


def test_an_ill_conditioned_downdate_is_handed_to_the_host(monkeypatch):
    # cluster 0: 30 collinear points and one point off the line; removing that point
    # leaves a singular covariance, so the scan must stop there and the host decide
    t = np.linspace(-3, 3, 30)
    line = np.stack([t, 0.5 * t], axis=1)
    rng = np.random.default_rng(0)
    blob = rng.normal(size=(40, 2)) + [8.0, 0.0]
    X = np.concatenate([line, [[0.0, 1.0]], blob])
    z = np.full(len(X), -1)
    lab0 = np.r_[np.zeros(31, int), np.ones(40, int)]
    ref = _run(X, z, 0, lab0, 2, 1.0, 0.01, compiled=False)
    host_visits = []
    visit = C._visit
    monkeypatch.setattr(C, "_visit", lambda st, i, tol, on_move=None: host_visits.append(i)
                        or visit(st, i, tol, on_move))
    got = _run(X, z, 0, lab0, 2, 1.0, 0.01, compiled=True)
    _assert_same(got, ref)
    assert 30 in host_visits
    assert got.labels[30] == got.labels[0]  # the off-line point cannot leave its cluster


def test_a_nearly_singular_cluster_is_recomputed_by_the_host(monkeypatch):
    # a thin cluster (eigenvalue ratio ~1e-11: regular by the NumPy rule, whose floor is
    # 1e-12) that the native recompute cannot certify (tr C tr C^-1 >= 1e10): the end of
    # every pass goes to the host, and the run is still the NumPy loop's
    rng = np.random.default_rng(1)
    t = rng.normal(size=40)
    thin = np.stack([t, 0.5 * t + 3e-6 * rng.normal(size=40)], axis=1)
    blob = rng.normal(size=(40, 2)) + [8.0, 0.0]
    X = np.concatenate([thin, blob])
    z = np.full(80, -1)
    lab0 = np.r_[np.zeros(40, int), np.ones(40, int)]
    lab0[[0, 41]] = lab0[[41, 0]]  # one point of each on the wrong side: the first pass moves
    ref = _run(X, z, 0, lab0, 2, 1.0, 0.01, compiled=False)
    ends = []
    end = C._end_pass
    monkeypatch.setattr(C, "_end_pass", lambda st: ends.append(1) or end(st))
    got = _run(X, z, 0, lab0, 2, 1.0, 0.01, compiled=True)
    _assert_same(got, ref)
    assert int(got.active.sum()) == 2 and got.n_iter >= 2
    assert len(ends) == got.n_iter  # every pass ended on the host


def test_cecib_results_equal_the_numpy_loop(monkeypatch):
    rng, X, z = _data(5, n=120, d=3)
    got = C.cecib(7, X, 5, z, beta=0.6, n_init=3)
    monkeypatch.setattr(C, "_native_pass_ok", lambda st, on_move, compiled: False)
    monkeypatch.setattr(C, "_pass_compiled", lambda st, tol: C._pass(st, tol))
    ref = C.cecib(7, X, 5, z, beta=0.6, n_init=3)
    np.testing.assert_array_equal(got.labels, ref.labels)
    np.testing.assert_allclose(got.restart_objectives, ref.restart_objectives, rtol=1e-12)
    np.testing.assert_allclose(got.covariances, ref.covariances, rtol=1e-10, atol=1e-12)
    assert got.n_iter == ref.n_iter and got.n_clusters == ref.n_clusters


def test_one_program_serves_nearby_sizes_and_label_counts(monkeypatch):
    monkeypatch.setattr(C, "_native_pass_ok", lambda st, on_move, compiled: False)  # the JAX scan
    before = C._scan_fn()._cache_size()  # no other test here compiles d = 2, K = 3
    rng = np.random.default_rng(2)
    for n, m in ((150, 2), (157, 5), (160, 8)):  # rows pad to 160 + chunk, labels to 8 columns
        X = rng.normal(size=(n, 2)) + 5.0 * rng.integers(0, 2, (n, 1))
        z = np.where(rng.random(n) < 0.5, np.arange(n) % m, -1)
        C.cecib(0, X, 3, z, n_init=1)
    assert C._scan_fn()._cache_size() == before + 1


@needs_native
@pytest.mark.parametrize("seed", range(3))
def test_native_passes_make_the_jax_scans_moves(seed, monkeypatch):
    # the shapes of the test above (d = 2, K = 3, rows padded to 160): one scan program
    rng = np.random.default_rng(20 + seed)
    n = (150, 157, 160)[seed]
    X = rng.normal(size=(n, 2)) + 4.0 * rng.integers(0, 3, (n, 1))
    z = np.where(rng.random(n) < 0.4, rng.integers(0, 3, n), -1)
    lab0 = rng.integers(0, 3, n)
    native = _run(X, z, 3, lab0, 3, 0.7, 0.05, compiled=True)
    monkeypatch.setattr(C, "_native_pass_ok", lambda st, on_move, compiled: False)
    scan = _run(X, z, 3, lab0, 3, 0.7, 0.05, compiled=True)
    _assert_same(native, scan)
    assert native.n_iter > 1


def test_seven_more_rows_compile_nothing(caplog):
    # random starts are drawn at the padded row count and the passes pad rows too
    # (the native passes compile nothing at all)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 2)) + 5.0 * rng.integers(0, 2, (150, 1))
    C.cecib(0, X, 3, n_init=1)
    X7 = np.vstack([X, X[:7] + 0.01])
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        res = C.cecib(0, X7, 3, n_init=1)
    assert res.labels.shape == (157,)
    assert not [r for r in caplog.records if "Compiling" in r.getMessage()]


@pytest.mark.parametrize("kwargs, match", [
    ({"beta": -1.0}, "beta"),
    ({"y_partial": np.zeros(5, int)}, "y_partial"),
    ({"n_clusters": 40}, "n_clusters"),
    ({"eps": 1.5}, "eps"),
])
def test_bad_input_still_raises_before_any_compiled_work(kwargs, match):
    X = np.random.default_rng(0).normal(size=(100, 2))
    args = {"n_clusters": 3, **kwargs}
    k = args.pop("n_clusters")
    with pytest.raises(ValueError, match=match):
        C.cecib(0, X, k, **args)


def test_degenerate_data_raise_instead_of_nan():
    X = np.repeat(np.random.default_rng(0).normal(size=(1, 2)), 60, axis=0)
    with pytest.raises(ValueError, match="degenerate"):
        C.cecib(0, X, 2, n_init=1)
