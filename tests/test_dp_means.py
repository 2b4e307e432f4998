"""DP-means (Kulis & Jordan Algorithm 1): toy cases, slow-loop reference, invariances, jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesclust import dp_means, farthest_first_lambda
from bayesclust.inference.hard.dp_means import (
    DPMeansInfo,
    DPMeansState,
    dp_means_pass,
    dp_means_step,
    init_dp_means_state,
)

from ._reference import (
    documented_attributes,
    dp_means_loop,
    dp_means_pass_loop,
    farthest_first_loop,
)


def _clustered(rng, n, d, n_true, spread):
    """Random Gaussian blobs (so that passes open and reject several clusters)."""
    means = rng.normal(scale=3.0, size=(n_true, d))
    return means[rng.integers(n_true, size=n)] + rng.normal(scale=spread, size=(n, d))


# --------------------------------------------------------------------------- #
# 1. toy cases by hand
# --------------------------------------------------------------------------- #


def test_toy_four_points_by_hand():
    # Mean (2.55, 2.5): |x - mean|^2 = 12.7525 (pts 0,2) / 12.2525 (pts 1,3) -> SSE 50.01.
    # Pass 1 with lam = 1: point 0 opens cluster 1 (12.75 > 1), point 1 joins it
    # (0.01 <= 1), point 2 is 50 from it and 12.75 from the mean, so it opens
    # cluster 2; point 3 joins cluster 2. Cluster 0 (the mean) is empty: deleted.
    X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    res = dp_means(X, lam=1.0)
    assert res.labels.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(res.centers, [[0.05, 0.0], [5.05, 5.0]], atol=1e-6)
    # SSE = 4 * 0.05^2 = 0.01; J = 0.01 + 2 * 1.
    assert res.objective == pytest.approx(2.01, rel=1e-6)
    np.testing.assert_allclose(res.objective_trace, [51.01, 2.01, 2.01], rtol=1e-6)
    assert res.n_clusters == 2 and res.n_iter == 2 and res.converged


def test_tie_goes_to_existing_cluster():
    # Symmetric data, mean exactly 0.  Point 0 at squared distance 4 = lam from
    # the mean: the strict test keeps it in the existing cluster.
    X = np.array([[2.0], [-2.0], [0.0], [0.0]])
    res = dp_means(X, lam=4.0)
    assert res.n_clusters == 1
    # Just above the distance: points 0 and 1 open their own clusters.
    res = dp_means(X, lam=3.999)
    assert res.n_clusters == 3
    assert res.labels.tolist() == [1, 2, 0, 0]


def test_huge_lambda_gives_one_cluster():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    lam = 1.01 * np.max(np.sum((X - X.mean(0)) ** 2, axis=1))
    res = dp_means(X, lam)
    assert res.n_clusters == 1 and res.n_iter == 1 and res.converged
    assert (res.labels == 0).all()
    assert res.objective == pytest.approx(np.sum((X - X.mean(0)) ** 2) + lam, rel=1e-5)


def test_tiny_lambda_gives_one_cluster_per_distinct_point(x64):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(35, 2))
    X = np.concatenate([X, X[:5]])  # duplicates share a cluster (distance 0 is not > lam)
    res = dp_means(X, 1e-9)
    assert res.n_clusters == 35
    assert np.array_equal(res.labels[35:], res.labels[:5])
    assert res.objective == pytest.approx(35 * 1e-9, abs=1e-12)


# --------------------------------------------------------------------------- #
# 2. reference: the slow per-point Algorithm 1 (float64)
# --------------------------------------------------------------------------- #

# The float64 tests below whose statement holds at any size use these shapes too (40 x 2,
# 57 x 3: rows pad to the shape buckets 40 and 64 of kernels.padded_rows), so a module
# compiles one program per shape.
SHAPES = [(23, 1), (40, 2), (57, 3)]


def _matches_slow_loop(n, d, n_cases):
    rng = np.random.default_rng(100 + n)
    done = 0
    for case in range(n_cases):
        X = _clustered(rng, n, d, n_true=rng.integers(1, 7), spread=rng.uniform(0.2, 2.0))
        total = np.sum((X - X.mean(0)) ** 2, axis=1).max()
        lam = total * rng.uniform(0.01, 1.2)
        z_ref, mu_ref, trace_ref, it_ref, conv_ref = dp_means_loop(X, lam)
        res = dp_means(X, lam)
        assert np.array_equal(res.labels, z_ref), f"case {case}"
        np.testing.assert_allclose(res.centers, mu_ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(res.objective_trace, trace_ref, rtol=1e-9)
        assert res.n_iter == it_ref and res.converged == conv_ref
        assert res.n_clusters == len(mu_ref)
        done += 1
    assert done == n_cases


@pytest.mark.parametrize("n,d", SHAPES)
def test_matches_slow_loop_on_random_inputs(x64, n, d):
    _matches_slow_loop(n, d, 25)


@pytest.mark.long
@pytest.mark.parametrize("n,d", SHAPES)
def test_matches_slow_loop_on_many_random_inputs(x64, n, d):
    _matches_slow_loop(n, d, 80)


@pytest.mark.parametrize("n,d", SHAPES[:2])
def test_weighted_matches_slow_loop(x64, n, d):
    rng = np.random.default_rng(7 + n)
    for case in range(30):
        X = _clustered(rng, n, d, n_true=rng.integers(1, 6), spread=rng.uniform(0.3, 1.5))
        w = rng.uniform(0.1, 3.0, size=n)
        lam = np.sum((X - X.mean(0)) ** 2, axis=1).max() * rng.uniform(0.02, 1.0)
        z_ref, mu_ref, trace_ref, it_ref, _ = dp_means_loop(X, lam, sample_weight=w)
        res = dp_means(X, lam, sample_weight=w)
        assert np.array_equal(res.labels, z_ref), f"case {case}"
        np.testing.assert_allclose(res.objective_trace, trace_ref, rtol=1e-9)
        assert res.n_iter == it_ref


def test_single_pass_matches_loop_from_random_states(x64):
    """The bulk pass equals the per-point pass from arbitrary centres."""
    rng = np.random.default_rng(3)
    n, d, K_cap = 60, 2, 64
    one_pass = jax.jit(dp_means_pass)
    for case in range(50):
        X = _clustered(rng, n, d, n_true=5, spread=rng.uniform(0.1, 1.0))
        k = int(rng.integers(1, 6))
        C = rng.normal(scale=3.0, size=(k, d))
        w = rng.uniform(0.2, 2.0, size=n) if case % 2 else np.ones(n)
        lam = float(rng.uniform(0.05, 4.0))
        z_ref, centers_ref = dp_means_pass_loop(X, w, C, lam)
        buf = jnp.zeros((K_cap, d)).at[:k].set(C)
        labels, _, centers, k_total, overflow = one_pass(
            jnp.asarray(X), jnp.asarray(w), buf, k, lam
        )
        assert not bool(overflow)
        assert int(k_total) == len(centers_ref)
        assert np.array_equal(np.asarray(labels), z_ref), f"case {case}"
        np.testing.assert_allclose(np.asarray(centers[: int(k_total)]), np.array(centers_ref))


def test_super_blocks_of_candidates_match_loop(x64, monkeypatch):
    """Blocks of 8 and super-blocks of 24 candidates: covered candidates are dropped per
    super-block, the rest validated in blocks, and the pass still equals the per-point loop."""
    import importlib

    dpm = importlib.import_module("bayesclust.inference.hard.dp_means")
    monkeypatch.setattr(dpm, "_CANDIDATE_BLOCK", 8)
    monkeypatch.setattr(dpm, "_SUPER_BLOCKS", 3)
    one_pass = jax.jit(lambda *a: dpm.dp_means_pass(*a))  # traced with the small blocks
    rng = np.random.default_rng(13)
    n, d, K_cap = 200, 2, 128
    opened = []
    for case in range(30):
        X = _clustered(rng, n, d, n_true=int(rng.integers(2, 12)), spread=rng.uniform(0.1, 1.0))
        w = rng.uniform(0.2, 2.0, size=n) if case % 2 else np.ones(n)
        lam = float(rng.uniform(0.05, 2.0))
        C = X.mean(0, keepdims=True)
        z_ref, centers_ref = dp_means_pass_loop(X, w, C, lam)
        buf = jnp.zeros((K_cap, d)).at[0].set(C[0])
        labels, _, centers, k_total, overflow = one_pass(
            jnp.asarray(X), jnp.asarray(w), buf, 1, lam
        )
        assert not bool(overflow)
        assert int(k_total) == len(centers_ref), f"case {case}"
        assert np.array_equal(np.asarray(labels), z_ref), f"case {case}"
        opened.append(len(centers_ref) - 1)
    assert max(opened) > 24  # seeds opened in more than one super-block


def test_overflowing_pass_is_flagged_and_stops_early(x64):
    """A pass needing more slots than the buffer has reports overflow (and is redone)."""
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(2000, 2))
    lam = 1e-3  # hundreds of clusters; the buffer has 16 slots
    z_ref, centers_ref = dp_means_pass_loop(X, np.ones(len(X)), X.mean(0, keepdims=True), lam)
    assert len(centers_ref) > 300
    buf = jnp.zeros((16, 2)).at[0].set(X.mean(0))
    _, _, _, k_total, overflow = jax.jit(dp_means_pass)(
        jnp.asarray(X), jnp.ones(len(X)), buf, 1, lam
    )
    assert bool(overflow)
    # The candidate scan stopped at the first block past the buffer (blocks of
    # 256 candidates), not after visiting all of them.
    assert 16 < int(k_total) <= 1 + 16 + 256 < len(centers_ref)


def test_buffers_grow_without_dropping_clusters(x64):
    """More clusters than the initial buffer of 32 centres (many candidate blocks)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(700, 2))
    lam = 1e-3
    z_ref, mu_ref, trace_ref, it_ref, _ = dp_means_loop(X, lam, max_iter=3)
    res = dp_means(X, lam, max_iter=3)
    assert res.n_clusters == len(mu_ref) > 256
    assert np.array_equal(res.labels, z_ref)
    np.testing.assert_allclose(res.objective_trace, trace_ref, rtol=1e-9)


def test_max_clusters_limit_warns_and_keeps_last_complete_state():
    X = np.random.default_rng(2).uniform(size=(100, 2))
    with pytest.warns(RuntimeWarning, match="max_clusters=5"):
        res = dp_means(X, 1e-4, max_clusters=5)
    assert not res.converged
    assert res.n_clusters <= 5


# --------------------------------------------------------------------------- #
# 3. invariances and monotonicity
# --------------------------------------------------------------------------- #


def _objective_trace_never_increases(n_cases):
    rng = np.random.default_rng(11)
    for case in range(n_cases):
        X = _clustered(rng, 500, 5, n_true=8, spread=1.0).astype(np.float32)
        lam = float(rng.uniform(1.0, 60.0))
        res = dp_means(X, lam)
        diffs = np.diff(res.objective_trace)
        assert np.all(diffs <= 1e-5 * np.abs(res.objective_trace[:-1])), f"case {case}"
        # The reported objective is the objective of the returned partition.
        from bayesclust.metrics import dp_means_objective

        assert res.objective == pytest.approx(dp_means_objective(X, res.labels, lam), rel=1e-4)


def test_objective_trace_never_increases_float32():
    # Each new centre-buffer size is a compilation (about 2.5 s): the first two cases share one.
    _objective_trace_never_increases(2)


@pytest.mark.long
def test_objective_trace_never_increases_float32_many_cases():
    _objective_trace_never_increases(20)


def test_translation_and_scale_invariance(x64):
    rng = np.random.default_rng(12)
    X = _clustered(rng, 57, 3, n_true=4, spread=0.7)
    base = dp_means(X, 5.0)
    shifted = dp_means(X + np.array([100.0, -50.0, 3.0]), 5.0)
    scaled = dp_means(3.0 * X, 45.0)
    assert np.array_equal(base.labels, shifted.labels)
    assert np.array_equal(base.labels, scaled.labels)
    assert scaled.objective == pytest.approx(9 * base.objective)


def test_order_argument_equals_permuting_rows(x64):
    rng = np.random.default_rng(13)
    X = _clustered(rng, 40, 2, n_true=5, spread=0.8)
    perm = rng.permutation(40)
    a = dp_means(X, 3.0, order=perm)
    b = dp_means(X[perm], 3.0)
    assert np.array_equal(a.labels[perm], b.labels)
    z_ref = dp_means_loop(X[perm], 3.0)[0]
    assert np.array_equal(b.labels, z_ref)


def test_zero_weight_equals_removal(x64):
    rng = np.random.default_rng(14)
    X = _clustered(rng, 40, 2, n_true=4, spread=0.8)
    w = rng.uniform(0.5, 2.0, size=40)
    w[[3, 17, 38]] = 0.0
    keep = w > 0
    a = dp_means(X, 2.0, sample_weight=w)
    b = dp_means(X[keep], 2.0, sample_weight=w[keep])
    assert np.array_equal(a.labels[keep], b.labels)
    np.testing.assert_allclose(a.centers, b.centers)
    # The removed points are assigned to their nearest final centre.
    d2 = ((X[~keep, None, :] - b.centers[None]) ** 2).sum(-1)
    assert np.array_equal(a.labels[~keep], d2.argmin(1))


# --------------------------------------------------------------------------- #
# 4. jit and eager agree
# --------------------------------------------------------------------------- #


def _small_data():
    """40 points in 2-D (float64) and weights: the jit / eager and State tests run the pass
    and the step at the same shapes, dtype and buffer size (16 centres), so the op-by-op
    programs of one eager run serve the others."""
    rng = np.random.default_rng(22)
    X = jnp.asarray(_clustered(rng, 40, 2, n_true=4, spread=0.6), jnp.float64)
    return X, jnp.asarray(rng.uniform(0.5, 2.0, 40), jnp.float64)


def test_pass_jit_and_eager_agree(x64):
    X, w = _small_data()
    C = jnp.zeros((16, 2), X.dtype).at[0].set(X.mean(0))
    args = (X, w, C, 1, 0.8)
    jitted = jax.jit(dp_means_pass)(*args)
    with jax.disable_jit():
        eager = dp_means_pass(*args)
    for a, b in zip(jitted, eager):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_step_jit_and_eager_agree(x64):
    X, w = _small_data()
    state = init_dp_means_state(X, 0.8, sample_weight=w, capacity=16)
    step = jax.jit(dp_means_step)
    for _ in range(2):  # the first step opens clusters, the second moves points
        jitted, info_j = step(state, X, 0.8, sample_weight=w)
        with jax.disable_jit():
            eager, info_e = dp_means_step(state, X, 0.8, sample_weight=w)
        for name in ("labels", "n_clusters", "n_iter", "converged", "overflow", "need"):
            np.testing.assert_array_equal(getattr(jitted, name), getattr(eager, name), err_msg=name)
        for name in ("centers", "objective", "objective_trace"):
            np.testing.assert_allclose(getattr(jitted, name), getattr(eager, name), rtol=1e-6)
        assert bool(info_j.changed) == bool(info_e.changed)
        state = jitted
    assert int(state.n_clusters) > 1 and int(state.n_iter) == 2


# --------------------------------------------------------------------------- #
# State / init / step
# --------------------------------------------------------------------------- #


def _by_hand(X, lam, sample_weight=None, max_iter=100, max_clusters=None):
    """dp_means from init_dp_means_state and dp_means_step, following its documented protocol.

    Returns the fields of a DPMeansResult and the number of buffer growths.
    """
    n = len(X)
    w = np.ones(n, X.dtype) if sample_weight is None else sample_weight.astype(X.dtype)
    mean = (w[:, None] * X).sum(0) / w.sum()
    Xc = jnp.asarray(X - mean.astype(X.dtype))
    limit = n if max_clusters is None else min(max_clusters, n)
    bound = 1 << (limit + n - 1).bit_length()
    capacity = min(bound, 32)
    state = init_dp_means_state(Xc, lam, sample_weight=w, capacity=capacity, max_iter=max_iter)
    step = jax.jit(dp_means_step)
    lam = jnp.asarray(lam, X.dtype)  # dp_means's scalar dtype
    grown = 0
    while int(state.n_iter) < max_iter and not bool(state.converged):
        before = np.asarray(state.labels)
        state, info = step(state, Xc, lam, sample_weight=w, max_clusters=limit)
        assert float(info.objective) == float(state.objective)
        assert bool(info.changed) == (not np.array_equal(before, state.labels))
        if bool(state.limit_hit):
            break
        if bool(state.overflow):
            capacity = min(max(2 * capacity, 1 << (int(state.need) - 1).bit_length()), bound)
            pad = capacity - state.centers.shape[0]
            state = state._replace(centers=jnp.pad(state.centers, ((0, pad), (0, 0))),
                                   overflow=jnp.asarray(False))
            grown += 1
    k, it = int(state.n_clusters), int(state.n_iter)
    return dict(
        labels=np.asarray(state.labels), n_clusters=k, n_iter=it, converged=bool(state.converged),
        centers=(np.asarray(state.centers[:k]) + mean).astype(X.dtype),
        objective=float(state.objective),
        objective_trace=np.asarray(state.objective_trace[: it + 1]),
    ), grown


# In make test: the weighted run, the buffer growth and the max_iter stop (those two
# unweighted, as "blobs" is), both dtypes among them; the other five pairs (the same
# compiled paths, about 5 s of compilation each) run under `long`.
_LONG = pytest.mark.long
_BY_HAND_CASES = [
    ("weighted", np.float32), ("grows", np.float64), ("max_iter", np.float32),
    pytest.param("blobs", np.float32, marks=_LONG), pytest.param("blobs", np.float64, marks=_LONG),
    pytest.param("weighted", np.float64, marks=_LONG), pytest.param("grows", np.float32, marks=_LONG),
    pytest.param("max_iter", np.float64, marks=_LONG),
]


@pytest.mark.parametrize("case,dtype", _BY_HAND_CASES)
def test_init_and_step_by_hand_reproduce_dp_means(case, dtype):
    rng = np.random.default_rng(41)
    with jax.enable_x64(dtype == np.float64):
        X = _clustered(rng, 300, 3, n_true=6, spread=0.7).astype(dtype)
        w = rng.uniform(0.5, 2.0, 300) if case == "weighted" else None
        lam = {"grows": 0.8, "max_iter": 0.8}.get(case, 6.0)
        max_iter = 2 if case == "max_iter" else 100
        res = dp_means(X, lam, sample_weight=w, max_iter=max_iter)
        got, grown = _by_hand(X, lam, w, max_iter=max_iter)
    assert grown > 0 or case in ("blobs", "weighted")  # the buffer doubling is covered
    assert res.converged == (case != "max_iter")
    for name, value in got.items():
        np.testing.assert_array_equal(value, getattr(res, name), err_msg=name)


def test_init_and_step_by_hand_stop_at_max_clusters():
    X = np.random.default_rng(2).uniform(size=(100, 2)).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="max_clusters=5"):
        res = dp_means(X, 1e-4, max_clusters=5)
    got, _ = _by_hand(X, 1e-4, max_clusters=5)
    for name, value in got.items():
        np.testing.assert_array_equal(value, getattr(res, name), err_msg=name)


def test_state_fields_are_the_documented_ones(x64):
    assert list(DPMeansState._fields) == documented_attributes(DPMeansState)
    assert list(DPMeansInfo._fields) == documented_attributes(DPMeansInfo)
    X = _small_data()[0]
    state = init_dp_means_state(X, 2.0, capacity=16, max_iter=10)
    state, info = dp_means_step(state, X, 2.0)
    k = int(state.n_clusters)
    assert not bool(state.overflow) and k > 1
    assert state.centers.shape == (16, 2) and state.centers.dtype == X.dtype
    assert state.labels.shape == (40,) and state.labels.dtype == jnp.int32
    assert set(np.asarray(state.labels).tolist()) == set(range(k))  # 0..n_clusters-1
    for name in ("n_clusters", "n_iter", "need"):
        assert getattr(state, name).shape == () and getattr(state, name).dtype == jnp.int32
    for name in ("converged", "overflow", "limit_hit"):
        assert getattr(state, name).shape == () and getattr(state, name).dtype == jnp.bool_
    assert state.objective.shape == () and state.objective.dtype == X.dtype
    # T: the smallest power of two >= max_iter + 1; NaN past iteration n_iter.
    trace = np.asarray(state.objective_trace)
    assert trace.shape == (16,) and int(state.n_iter) == 1
    assert np.isfinite(trace[:2]).all() and np.isnan(trace[2:]).all()
    assert trace[1] == float(state.objective) == float(info.objective)
    # The objective is the documented one.
    C = np.asarray(state.centers[:k])
    sse = np.sum((np.asarray(X) - C[np.asarray(state.labels)]) ** 2)
    assert float(state.objective) == pytest.approx(sse + 2.0 * k, rel=1e-12)
    np.testing.assert_allclose(C, [np.asarray(X)[np.asarray(state.labels) == c].mean(0)
                                   for c in range(k)], rtol=1e-12)


def test_overflowing_step_returns_its_input_state(x64):
    X = _small_data()[0]  # lam 1e-3: every one of the 40 points opens a cluster
    state = init_dp_means_state(X, 1e-3, capacity=16)
    out, info = dp_means_step(state, X, 1e-3)
    assert bool(out.overflow) and int(out.need) > 16 and not bool(info.changed)
    for name in DPMeansState._fields:
        if name not in ("overflow", "need"):
            np.testing.assert_array_equal(getattr(out, name), getattr(state, name), err_msg=name)


# --------------------------------------------------------------------------- #
# farthest-first lambda
# --------------------------------------------------------------------------- #


def test_farthest_first_matches_loop(x64):
    rng = np.random.default_rng(31)
    for _ in range(20):
        X = rng.normal(size=(int(rng.integers(5, 40)), int(rng.integers(1, 4))))
        k = int(rng.integers(1, len(X) + 1))
        assert farthest_first_lambda(X, k) == pytest.approx(farthest_first_loop(X, k), rel=1e-12)


def test_farthest_first_k1_is_max_squared_distance_to_mean():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 3.0]])
    expected = np.max(np.sum((X - X.mean(0)) ** 2, axis=1))
    # Inflated by 16 float32 eps so the defining tie resolves as in exact arithmetic.
    assert farthest_first_lambda(X, 1) == pytest.approx(expected, rel=4e-6)
    assert farthest_first_lambda(X, 1) > expected


def test_farthest_first_gives_three_clusters_on_three_gaussians():
    from bayesclust.datasets import three_gaussians

    hits = 0
    for seed in range(40):
        X, _ = three_gaussians(seed)
        hits += dp_means(X, farthest_first_lambda(X, 3)).n_clusters == 3
    assert hits >= 38  # the stand-in gives 3 clusters in 98 of 100 runs (seeds 0-99)


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #

GOOD = np.arange(12.0).reshape(6, 2)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(X=np.array([[0.0, np.nan]] * 3)), ValueError, "X contains NaN"),
        (dict(X=np.array([[0.0, np.inf]] * 3)), ValueError, "X contains infinite"),
        (dict(X=np.arange(5.0)), ValueError, "X must be a 2-D array"),
        (dict(X=np.empty((0, 2))), ValueError, "X must have at least 1 sample"),
        (dict(X=np.empty((3, 0))), ValueError, "at least one feature"),
        (dict(X=[["a", "b"]]), TypeError, "X must be a real numeric array"),
        (dict(lam=0.0), ValueError, "lam must be a positive"),
        (dict(lam=-1.0), ValueError, "lam must be a positive"),
        (dict(lam=float("nan")), ValueError, "lam must be a number"),
        (dict(lam=float("inf")), ValueError, "lam must be a positive finite"),
        (dict(lam="1"), TypeError, "lam must be a real number"),
        (dict(sample_weight=-np.ones(6)), ValueError, "sample_weight must be non-negative"),
        (dict(sample_weight=np.ones(5)), ValueError, "sample_weight has length 5"),
        (dict(sample_weight=np.zeros(6)), ValueError, "at least one positive weight"),
        (dict(sample_weight=np.full(6, np.nan)), ValueError, "sample_weight contains NaN"),
        (dict(max_iter=0), ValueError, "max_iter must be >= 1"),
        (dict(max_iter=2.5), TypeError, "max_iter must be an integer"),
        (dict(order=[0, 1, 2]), ValueError, "order must be a permutation"),
        (dict(order=[0, 0, 1, 2, 3, 4]), ValueError, "order must be a permutation"),
    ],
)
def test_bad_input_gives_clear_error(kwargs, exc, match):
    args = dict(X=GOOD, lam=1.0)
    args.update(kwargs)
    X, lam = args.pop("X"), args.pop("lam")
    with pytest.raises(exc, match=match):
        dp_means(X, lam, **args)


def test_farthest_first_bad_n_clusters():
    with pytest.raises(ValueError, match="n_clusters must be <= the number of samples"):
        farthest_first_lambda(GOOD, 7)
    with pytest.raises(ValueError, match="n_clusters must be >= 1"):
        farthest_first_lambda(GOOD, 0)
