"""DP-means restarts (``n_init``) and the k-means++ start: toy by hand, slow-loop reference,
invariances, jit/eager, compile counts, bad input."""

import jax
import numpy as np
import pytest

import bayesclust
from bayesclust import DPMeans, dp_means
from bayesclust import _validation as V
from bayesclust.inference.hard import dp_means as dpm
from bayesclust.metrics import dp_means_objective

from ._reference import dp_means_loop, dp_means_pass_loop

#: Rows of the tests whose statement holds at any size: 70-80 rows pad to one shape bucket
#: (80, kernels.padded_rows), so in two dimensions they share their compiled programs.
_N = 75


def _clustered(rng, n, d, n_true, spread):
    means = rng.normal(scale=3.0, size=(n_true, d))
    return means[rng.integers(n_true, size=n)] + rng.normal(scale=spread, size=(n, d))


def _loop_from(X, lam, seeds, max_iter=100):
    """Algorithm 1's iterations from given centres, point by point (no point assigned yet).

    The start's objective is that of every point at its nearest seed; the first
    iteration always counts as a change.
    """
    n = len(X)
    w = np.ones(n)
    d2 = np.min(((X[:, None, :] - seeds[None]) ** 2).sum(-1), axis=1)
    J = float(d2.sum() + lam * len(seeds))
    centers, labels = list(seeds), np.full(n, -1)
    for _ in range(max_iter):
        z, cand = dp_means_pass_loop(X, w, centers, lam)
        used = [c for c in range(len(cand)) if np.any(z == c)]
        z = np.array([used.index(c) for c in z])
        centers = [X[z == r].mean(0) for r in range(len(used))]
        Jn = float(sum(np.sum((X[i] - centers[z[i]]) ** 2) for i in range(n)) + lam * len(used))
        done = np.array_equal(z, labels) or Jn >= J - 1e-12 * abs(J)
        labels, J = z, Jn
        if done:
            break
    return labels, np.array(centers), J


# --------------------------------------------------------------------------- #
# 1. toy by hand
# --------------------------------------------------------------------------- #


def test_toy_two_clumps_kmeanspp_by_hand(x64):
    # Two clumps 10 apart, lam = 1: the second D^2 seed lands in the other clump
    # (probability ~ 1 - 5e-5; fixed by the key), after which every point is within
    # 0.1 of a seed, so seeding stops with 2 seeds.  J = 4 * 0.05^2 + 2 * 1 = 2.01.
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    for s in range(5):
        res = dp_means(X, 1.0, init="k-means++", rng_key=s)
        assert res.n_clusters == 2
        assert res.labels[0] == res.labels[1] != res.labels[2] == res.labels[3]
        assert res.objective == pytest.approx(2.01, rel=1e-12)
        assert res.restart_objectives.tolist() == [res.objective]


def test_toy_restarts_keep_the_lowest_objective_by_hand(x64):
    # 1-D points 0, 4, 8 with lam = 10 from the global mean (4): 0 and 8 are 16 > 10
    # away and open clusters in any order: J = 3 * 10 = 30.  k-means++ can do no
    # better here (every pair is >= 16 apart, so every point becomes a seed): 30.
    X = np.array([[0.0], [4.0], [8.0]])
    res = dp_means(X, 10.0, n_init=4, rng_key=0)
    assert res.restart_objectives.tolist() == [30.0] * 4
    res = dp_means(X, 10.0, n_init=3, init="k-means++", rng_key=1)
    assert res.restart_objectives.tolist() == [30.0] * 3
    # Two clusters would cost 28 ({0, 4}: SSE 8, + 2 lam); one 42 (SSE 32 + lam).
    assert dp_means_objective(X, [0, 0, 1], 10.0) == 28.0


# --------------------------------------------------------------------------- #
# 2. reference slow loops
# --------------------------------------------------------------------------- #


def test_order_restarts_match_slow_loop(x64):
    rng = np.random.default_rng(5)
    X = _clustered(rng, 70, 2, n_true=5, spread=0.9)
    lam = 4.0
    res = dp_means(X, lam, n_init=4, rng_key=11)
    key = V.as_rng_key(11)
    refs = []
    for i in range(4):
        perm = V.as_numpy_rng(jax.random.fold_in(key, i)).permutation(len(X))
        z, _, trace, _, _ = dp_means_loop(X[perm], lam)
        refs.append((trace[-1], perm, z))
    np.testing.assert_allclose(res.restart_objectives, [r[0] for r in refs], rtol=1e-10)
    best = int(np.argmin(res.restart_objectives))
    assert best == int(np.argmin([r[0] for r in refs]))
    _, perm, z = refs[best]
    labels = np.empty(len(X), int)
    labels[perm] = z
    assert np.array_equal(res.labels, labels)
    assert res.objective == min(res.restart_objectives)


def test_kmeanspp_start_matches_slow_loop_from_the_seeds(x64, monkeypatch):
    monkeypatch.setattr(dpm, "_pad_to", lambda n: n)  # the seeds drawn on the rows as given
    rng = np.random.default_rng(6)
    X = _clustered(rng, 90, 3, n_true=6, spread=1.0)
    lam = 6.0
    key = V.as_rng_key(3)
    Xs, e = V.to_unit_frame(X, V.centre(X), "X")
    rows, count, _ = dpm._dp_seeds(key, Xs, np.ones(len(X)), np.ldexp(lam, -2 * e), np.int32(len(X)))
    seeds = X[np.asarray(rows)[: int(count)]]
    # Seeding stops only once no point could open a cluster; the seeds are distinct rows.
    assert np.max(np.min(((X[:, None] - seeds[None]) ** 2).sum(-1), axis=1)) <= lam
    assert len(np.unique(np.asarray(rows)[: int(count)])) == int(count) > 1
    z, C, J = _loop_from(X, lam, seeds)
    res = dp_means(X, lam, init="k-means++", rng_key=key)
    assert np.array_equal(res.labels, z)
    np.testing.assert_allclose(res.centers, C, rtol=1e-10, atol=1e-12)
    assert res.objective == pytest.approx(J, rel=1e-10)
    assert res.objective == pytest.approx(dp_means_objective(X, res.labels, lam), rel=1e-10)
    assert np.all(np.diff(res.objective_trace) <= 1e-9 * abs(res.objective_trace[0]))


def test_best_of_n_is_each_start_run_alone(x64):
    rng = np.random.default_rng(7)
    X = _clustered(rng, _N, 2, n_true=8, spread=0.6)
    res = dp_means(X, 2.0, n_init=5, init="k-means++", rng_key=2)
    key = V.as_rng_key(2)
    alone = [dp_means(X, 2.0, init="k-means++", rng_key=jax.random.fold_in(key, i))
             for i in range(5)]
    assert res.restart_objectives.tolist() == [r.objective for r in alone]
    first_best = alone[int(np.argmin([r.objective for r in alone]))]
    assert np.array_equal(res.labels, first_best.labels)


# --------------------------------------------------------------------------- #
# 3. invariances
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("init", ["mean", "k-means++"])
def test_power_of_two_scale_and_unit_weights_change_nothing(x64, init):
    rng = np.random.default_rng(8)
    X = _clustered(rng, _N, 2, n_true=5, spread=0.8)
    base = dp_means(X, 3.0, n_init=3, init=init, rng_key=4)
    scaled = dp_means(8.0 * X, 192.0, n_init=3, init=init, rng_key=4)
    weighted = dp_means(X, 3.0, n_init=3, init=init, rng_key=4, sample_weight=np.ones(_N))
    assert np.array_equal(base.labels, scaled.labels)
    np.testing.assert_array_equal(scaled.restart_objectives, 64 * base.restart_objectives)
    assert np.array_equal(base.labels, weighted.labels)
    np.testing.assert_array_equal(base.restart_objectives, weighted.restart_objectives)


def test_kmeanspp_zero_weight_rows_are_never_seeds(x64):
    rng = np.random.default_rng(9)
    X = _clustered(rng, 80, 2, n_true=4, spread=0.5)
    w = np.ones(80)
    w[::7] = 0.0
    a = dp_means(X, 2.0, n_init=2, init="k-means++", rng_key=5, sample_weight=w)
    b = dp_means(X[w > 0], 2.0, n_init=2, init="k-means++", rng_key=5)
    assert np.array_equal(a.labels[w > 0], b.labels)
    np.testing.assert_array_equal(a.restart_objectives, b.restart_objectives)


def test_n_init_one_mean_start_is_algorithm_1():
    rng = np.random.default_rng(10)
    X = _clustered(rng, _N, 2, n_true=5, spread=0.7).astype(np.float32)
    a = dp_means(X, 2.0)
    b = dp_means(X, 2.0, n_init=1, init="mean")
    assert np.array_equal(a.labels, b.labels) and a.objective == b.objective
    assert a.restart_objectives.tolist() == [a.objective]


# --------------------------------------------------------------------------- #
# 4. jit / eager, compiles
# --------------------------------------------------------------------------- #


def test_seeding_jit_and_eager_agree():
    rng = np.random.default_rng(11)
    X = _clustered(rng, 64, 2, n_true=4, spread=0.6).astype(np.float32)
    args = (jax.random.PRNGKey(0), X, np.ones(64, np.float32), np.float32(0.5), np.int32(64))
    jitted = dpm._dp_seeds(*args)
    with jax.disable_jit():
        eager = dpm._dp_seeds(*args)
    assert int(jitted[1]) == int(eager[1]) > 1
    np.testing.assert_array_equal(np.asarray(jitted[0])[: int(jitted[1])],
                                  np.asarray(eager[0])[: int(eager[1])])
    np.testing.assert_allclose(float(jitted[2]), float(eager[2]), rtol=1e-5)


def test_restarts_compile_nothing_per_n_init():
    rng = np.random.default_rng(12)
    X = _clustered(rng, _N, 2, n_true=4, spread=0.3).astype(np.float32)
    lam = 30.0  # a few clusters: every start fits the first centre buffer
    dp_means(X, lam, n_init=2, init="k-means++", rng_key=0)
    dp_means(X, lam, n_init=2, rng_key=0)
    sizes = dpm._run._cache_size(), dpm._dp_seeds._cache_size(), dpm._initial._cache_size()
    for n_init in (1, 3, 7):
        dp_means(X, lam, n_init=n_init, init="k-means++", rng_key=n_init)
        dp_means(X, lam, n_init=n_init + 1, rng_key=n_init)
    dp_means(X[:-5], lam, n_init=4, init="k-means++", rng_key=1)  # same row bucket
    assert (dpm._run._cache_size(), dpm._dp_seeds._cache_size(),
            dpm._initial._cache_size()) == sizes


# --------------------------------------------------------------------------- #
# the public names, the estimator, bad input
# --------------------------------------------------------------------------- #


def test_estimator_default_is_best_of_ten_kmeanspp_starts():
    from bayesclust.estimators._base import _key_from_random_state

    rng = np.random.default_rng(13)
    X = _clustered(rng, _N, 2, n_true=6, spread=0.7)
    est = DPMeans(lam=2.0, random_state=0).fit(X)
    res = bayesclust.dp_means(X, 2.0, n_init=10, init="k-means++",
                              rng_key=_key_from_random_state(0))
    assert np.array_equal(est.labels_, res.labels)
    assert est.objective_ == res.objective
    np.testing.assert_array_equal(est.restart_objectives_, res.restart_objectives)
    assert est.restart_objectives_.shape == (10,)
    one = DPMeans(lam=2.0, n_init=1, init="mean").fit(X)
    assert np.array_equal(one.labels_, dp_means(X, 2.0).labels)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(n_init=0, rng_key=0), ValueError, "n_init"),
        (dict(n_init=-2, rng_key=0), ValueError, "n_init"),
        (dict(n_init=2.5, rng_key=0), (TypeError, ValueError), "n_init"),
        (dict(init="farthest", rng_key=0), ValueError, "init"),
        (dict(n_init=3), ValueError, "rng_key"),
        (dict(init="k-means++"), ValueError, "rng_key"),
        (dict(n_init=2, rng_key=0, order=np.arange(5)), ValueError, "order"),
        (dict(n_init=2, rng_key="a"), TypeError, "rng_key"),
    ],
)
def test_bad_restart_arguments(kwargs, exc, match):
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(exc, match=match):
        dp_means(X, 1.0, **kwargs)


@pytest.mark.parametrize("params", [dict(n_init=0), dict(n_init=1.5), dict(init="farthest")])
def test_estimator_bad_restart_parameters(params):
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match=next(iter(params))):
        DPMeans(lam=1.0, **params).fit(X)


# float32 (the same compiled path as float64 at another dtype) under `long`
@pytest.mark.parametrize("dtype", [pytest.param(np.float32, marks=pytest.mark.long), np.float64])
def test_init_from_seeds_and_step_by_hand_reproduce_dp_means(dtype, monkeypatch):
    monkeypatch.setattr(dpm, "_pad_to", lambda n: n)
    rng = np.random.default_rng(14)
    with jax.enable_x64(dtype == np.float64):
        X = _clustered(rng, 200, 3, n_true=6, spread=0.7).astype(dtype)
        lam = 3.0
        key = V.as_rng_key(9)
        res = dp_means(X, lam, init="k-means++", rng_key=key)
        Xs, e = V.to_unit_frame(X, V.centre(X), "X")
        rows, count, _ = dpm._dp_seeds(key, Xs, np.ones(200, dtype), np.asarray(
            np.ldexp(lam, -2 * e), dtype), np.int32(200))
        mean = V.centre(X).astype(dtype)
        Xc = jax.numpy.asarray(X - mean)
        state = dpm.init_dp_means_state(Xc, lam, centers=Xc[np.asarray(rows)[: int(count)]])
        assert int(state.n_clusters) == int(count) and np.all(np.asarray(state.labels) == -1)
        step = jax.jit(dpm.dp_means_step)
        while not bool(state.converged):
            state, info = step(state, Xc, jax.numpy.asarray(lam, dtype))
            assert not bool(state.overflow)
    k, it = int(state.n_clusters), int(state.n_iter)
    assert (k, it) == (res.n_clusters, res.n_iter)
    np.testing.assert_array_equal(np.asarray(state.labels), res.labels)
    np.testing.assert_allclose(np.asarray(state.centers[:k]) + mean, res.centers,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(state.objective_trace[: it + 1]), res.objective_trace,
                               rtol=1e-6)


def test_init_with_bad_centers():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="centers"):
        dpm.init_dp_means_state(X, 1.0, centers=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="centers"):
        dpm.init_dp_means_state(X, 1.0, centers=np.zeros((40, 2)), capacity=32)
