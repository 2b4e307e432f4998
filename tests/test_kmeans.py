"""k-means as a state, a step and a driver: stepping by hand reproduces ``kmeans`` bit for bit.

References: the objective trace against a NumPy sum of squares of the step's labels and
centres (float64), monotone trace; restarts against the single starts they are made of;
jit and eager steps agree.  (Lloyd against scikit-learn: tests/test_dc_baselines.py.)
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesclust import _validation as V
from bayesclust.inference.hard.kmeans import (
    KMeansInfo,
    KMeansState,
    init_kmeans_state,
    kmeans,
    kmeans_init,
    kmeans_step,
)
from bayesclust.kernels import nearest_center


def _blobs(seed, n=400, d=3, k=5, scale=2.5, dtype=np.float64):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=scale, size=(k, d))
    return (means[rng.integers(k, size=n)] + rng.normal(size=(n, d))).astype(dtype)


def _by_hand(key, X, K, *, w=None, max_iter=100, init="random"):
    """``kmeans(key, X, K, tol=0)`` from kmeans_init, init_kmeans_state and kmeans_step."""
    wv = V.check_sample_weight(w, len(X), dtype=X.dtype)
    mean = V.centre(X, wv).astype(X.dtype)
    Xc, e = V.to_unit_frame(X, mean, "X")
    C0 = kmeans_init(key, Xc, K, init=init, sample_weight=wv)
    state = init_kmeans_state(Xc, C0, sample_weight=wv, max_iter=max_iter)
    step = jax.jit(kmeans_step)
    while int(state.n_iter) < max_iter and not bool(state.converged):
        before = np.asarray(state.labels)
        state, info = step(state, Xc, sample_weight=wv, tol=0.0)
        assert isinstance(info, KMeansInfo)
        assert float(info.objective) == float(state.objective)
        assert bool(info.changed) == (not np.array_equal(before, state.labels))
        # The step's objective: its labels at its means, a float64 NumPy sum of squares.
        Xc64, C64 = np.asarray(Xc, np.float64), np.asarray(state.centers, np.float64)
        sse = float(np.sum(wv * np.sum((Xc64 - C64[np.asarray(state.labels)]) ** 2, axis=1)))
        assert float(state.objective) == pytest.approx(sse, rel=1e-4 if X.dtype == np.float32 else 1e-9)
    it = int(state.n_iter)
    final = nearest_center(jnp.asarray(Xc), state.centers)
    return dict(
        centers=(np.ldexp(np.asarray(state.centers), e) + mean).astype(X.dtype),
        labels=np.asarray(final.index),
        objective_trace=np.ldexp(np.asarray(state.objective_trace)[: it + 1], 2 * e),
        n_iter=it,
        converged=bool(state.converged),
    ), state, Xc


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["plain", "weighted", "max_iter", "k-means++"])
def test_step_by_hand_reproduces_kmeans(dtype, case):
    with jax.enable_x64(dtype == np.float64):
        X = _blobs(3, dtype=dtype) * 7.0 + 3.0  # not in the unit frame already
        w = np.random.default_rng(1).uniform(0.5, 2.0, len(X)) if case == "weighted" else None
        max_iter = 2 if case == "max_iter" else 100
        init = "k-means++" if case == "k-means++" else "random"
        res = kmeans(4, X, 6, init=init, max_iter=max_iter, tol=0.0, sample_weight=w)
        got, state, Xc = _by_hand(4, X, 6, w=w, max_iter=max_iter, init=init)
    assert res.converged == (case != "max_iter") and res.n_iter >= 2
    for name, value in got.items():
        np.testing.assert_array_equal(getattr(res, name), value, err_msg=name)
    # The trace: the sum of squares at the initial centres, then the step's labels at its
    # means (float64 NumPy from the state's own labels and centres), never increasing.
    Xc64, C64 = np.asarray(Xc, np.float64), np.asarray(state.centers, np.float64)
    wv = np.ones(len(X)) if w is None else w
    sse = float(np.sum(wv * np.sum((Xc64 - C64[np.asarray(state.labels)]) ** 2, axis=1)))
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    assert float(state.objective) == pytest.approx(sse, rel=rtol)
    trace = res.objective_trace
    assert len(trace) == res.n_iter + 1
    assert np.all(np.diff(trace) <= rtol * trace[0])
    # The result's objective is that of its own labels and centres (final assignment).
    direct = float(np.sum(wv * np.sum((X.astype(np.float64) - res.centers[res.labels]) ** 2, axis=1)))
    assert res.objective == pytest.approx(direct, rel=rtol)
    assert res.objective <= trace[-1] * (1 + rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_restarts_are_the_best_of_the_single_starts(dtype):
    with jax.enable_x64(dtype == np.float64):
        X = _blobs(7, n=300, k=6, scale=1.5, dtype=dtype)
        key = jax.random.PRNGKey(11)
        best = kmeans(key, X, 6, n_init=4, tol=0.0)
        singles = [kmeans(jax.random.fold_in(key, i), X, 6, tol=0.0) for i in range(4)]
        # Start 2 by hand: the restarts' driver is the same loop over the step.
        by_hand = _by_hand(jax.random.fold_in(key, 2), X, 6)[0]
    finals = np.array([r.objective for r in singles])
    np.testing.assert_array_equal(best.restart_objectives, finals)
    assert len(set(finals.tolist())) > 1  # the starts differ, so the choice is tested
    first_best = singles[int(np.argmin(finals))]
    for name in ("centers", "labels", "objective_trace"):
        np.testing.assert_array_equal(getattr(best, name), getattr(first_best, name), err_msg=name)
    for name, value in by_hand.items():
        np.testing.assert_array_equal(getattr(singles[2], name), value, err_msg=name)


def test_step_jit_and_eager_agree():
    X = jnp.asarray(_blobs(5, n=120, dtype=np.float32))
    w = jnp.asarray(np.random.default_rng(0).uniform(0.5, 2.0, 120), jnp.float32)
    state = init_kmeans_state(X, X[:4], sample_weight=w, max_iter=10)
    assert isinstance(state, KMeansState) and state.objective_trace.shape == (16,)
    step = jax.jit(kmeans_step)
    for _ in range(3):
        jitted, info_j = step(state, X, sample_weight=w)
        with jax.disable_jit():
            eager, info_e = kmeans_step(state, X, sample_weight=w)
        for name in ("labels", "n_iter", "converged"):
            np.testing.assert_array_equal(getattr(jitted, name), getattr(eager, name), err_msg=name)
        for name in ("centers", "objective", "objective_trace"):
            np.testing.assert_allclose(getattr(jitted, name), getattr(eager, name), rtol=1e-5)
        assert bool(info_j.changed) == bool(info_e.changed)
        state = jitted
    assert int(state.n_iter) == 3


def test_trace_in_pieces_equals_one_piece(monkeypatch):
    """A run longer than a trace piece records its trace in pieces: the same run."""
    import bayesclust.inference.hard.kmeans as km

    X = _blobs(2, n=300, k=8, scale=1.0)
    whole = kmeans(0, X, 8, tol=0.0)
    assert whole.n_iter > 6
    monkeypatch.setattr(km, "_TRACE_LEN", 4)  # pieces of 3 iterations
    pieces = kmeans(0, X, 8, tol=0.0)
    for name in ("centers", "labels", "objective", "objective_trace", "n_iter", "converged"):
        np.testing.assert_array_equal(getattr(pieces, name), getattr(whole, name), err_msg=name)


def test_n_init_with_array_init_raises():
    X = _blobs(0, n=30)
    with pytest.raises(ValueError, match="n_init"):
        kmeans(0, X, 2, init=X[:2], n_init=2)
    with pytest.raises(ValueError, match="n_init"):
        kmeans(0, X, 2, n_init=0)
