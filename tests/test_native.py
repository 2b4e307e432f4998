"""The native XLA:CPU nearest-centre kernel (bayesclust/_native/nearest.cc).

References: a float64 brute-force loop (first index of the minimum over the
visible centres) and the pure-XLA path of ``kernels.nearest_center`` /
``kernels.segment_stats``.  The shapes reach every code path of the kernel:
exact differences (d <= 4) and GEMM scores, rows on the vector lanes
(d <= 32) and packed centre panels (d > 32), one and several panels,
partial row tiles, several work blocks and statistic parts, birth masks.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bayesclust import _native
from bayesclust import kernels as K
from bayesclust.inference.hard.dp_means import dp_means
from bayesclust.inference.hard.kmeans import kmeans
from bayesclust.kernels import nearest as K_nearest

from .test_kernels import _nearest_loop, _random_case

# (d, k): direct rows-on-lanes, GEMM rows-on-lanes (1 and several centres),
# GEMM centre panels: one half panel only (<= 8 valid centres), one full panel,
# full panels then a half one, full panels then a partial full one.
SHAPES = [(2, 7), (4, 40), (5, 2), (16, 33), (32, 12), (64, 3), (33, 16), (48, 24), (128, 41)]
ROWS = [45, 1001]  # a partial tile only; several 384-row blocks + partial tiles

# Tests of the native kernel itself skip when it is off (the CI's BAYESCLUST_NATIVE=0 run):
# there nearest_center is the XLA path, which test_kernels.py tests against the same loops.
needs_native = pytest.mark.skipif(
    not _native.available(), reason="native kernels off (BAYESCLUST_NATIVE=0) or not built")


@needs_native
def test_native_kernels_are_built_and_used():
    """On this CPU the kernels build and nearest_center lowers to the custom call."""
    assert _native.available()
    X = jax.ShapeDtypeStruct((100, 8), jnp.float32)
    C = jax.ShapeDtypeStruct((5, 8), jnp.float32)
    hlo = jax.jit(lambda X, C: K.nearest_center(X, C)).lower(X, C).as_text()
    assert "bayesclust_nearest_center_f32" in hlo
    hlo = jax.jit(lambda X, C: K.nearest_center_stats(X, C)).lower(X, C).as_text()
    assert "bayesclust_nearest_center_stats_f32" in hlo


@needs_native
@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("d,k", SHAPES)
def test_native_matches_brute_force_float64(x64, d, k, n):
    """Indices equal the loop's (exact ties included), distances to 1e-12, births honoured."""
    rng = np.random.default_rng([d, k, n])
    X, C, valid, birth, off = _random_case(rng, d, k, n=n)
    if (d, k) == (48, 24):  # 16 + 1 valid centres: a full panel, then a half one
        valid[:] = False
        valid[[0, k - 1]] = True
        valid[rng.choice(np.arange(1, k - 1), 15, replace=False)] = True
    for ref_kw, kw in [
        ({}, {}),
        ({"birth": birth, "row_offset": off},
         {"birth": jnp.asarray(birth, jnp.int32), "row_offset": jnp.int32(off)}),
    ]:
        sq_ref, idx_ref = _nearest_loop(X, C, valid, **ref_kw)
        res = jax.jit(lambda X, C, v, **kw: K.nearest_center(X, C, v, **kw))(
            jnp.asarray(X), jnp.asarray(C), jnp.asarray(valid), **kw
        )
        assert res.sq_dist.dtype == jnp.float64 and res.index.dtype == jnp.int32
        seen = np.isfinite(sq_ref)
        np.testing.assert_array_equal(np.asarray(res.sq_dist)[~seen], np.inf)
        np.testing.assert_array_equal(np.asarray(res.index)[~seen], 0)
        np.testing.assert_array_equal(np.asarray(res.index)[seen], idx_ref[seen])
        np.testing.assert_allclose(np.asarray(res.sq_dist)[seen], sq_ref[seen], rtol=1e-12)
        if kw:
            assert (~seen).any()  # some rows really see no centre


@needs_native
@pytest.mark.parametrize("d,k", SHAPES)
def test_native_matches_xla_path_float32(d, k):
    """float32: the same winners as the XLA path away from near-ties; distances to 1e-5."""
    rng = np.random.default_rng([7, d, k])
    X = jnp.asarray(rng.normal(size=(1001, d)), jnp.float32)
    C = jnp.asarray(rng.normal(size=(k, d)), jnp.float32)
    valid = jnp.asarray(np.r_[True, rng.random(k - 1) < 0.8])
    native = jax.jit(K.nearest_center)(X, C, valid)
    xla = K_nearest._nearest_center_xla(X, C, valid, None, 0)
    # Margin between the best and second-best float64 distance: only clear winners compared.
    d2 = np.sum((np.asarray(X, np.float64)[:, None] - np.asarray(C, np.float64)[None]) ** 2, -1)
    d2[:, ~np.asarray(valid)] = np.inf
    part = np.sort(d2, axis=1)
    clear = (part[:, 1] - part[:, 0] > 1e-3) if d2.shape[1] > 1 else np.ones(len(d2), bool)
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(np.asarray(native.index)[clear], np.asarray(xla.index)[clear])
    np.testing.assert_allclose(native.sq_dist, xla.sq_dist, rtol=1e-5, atol=1e-5)


@needs_native
@pytest.mark.parametrize("n", [45, 20_000])  # one part; 16 parts of the rows
@pytest.mark.parametrize("d,k", [(2, 7), (16, 33), (128, 41)])
def test_native_stats_match_segment_stats(x64, d, k, n):
    """Fused statistics equal segment_stats of the same labels (weighted); bits repeat."""
    rng = np.random.default_rng([3, d, k, n])
    X = jnp.asarray(rng.normal(size=(n, d)))
    C = jnp.asarray(rng.normal(size=(k, d)))
    valid = jnp.asarray(np.r_[True, rng.random(k - 1) < 0.7])
    w = jnp.asarray(rng.random(n) + 0.5)
    fused = jax.jit(K.nearest_center_stats)
    nc, st = fused(X, C, valid, w)
    ref = K.segment_stats(X, nc.index, k, w)
    np.testing.assert_array_equal(nc.index, K.nearest_center(X, C, valid).index)
    np.testing.assert_allclose(st.weight, ref.weight, rtol=1e-12)
    np.testing.assert_allclose(st.sum, ref.sum, rtol=1e-10, atol=1e-10)
    assert np.all(np.asarray(st.weight)[~np.asarray(valid)] == 0)
    again = fused(X, C, valid, w)
    for a, b in zip(jax.tree.leaves((nc, st)), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)


@needs_native
def test_native_under_vmap_and_empty_buffer():
    """vmap runs the kernel per batch member; no valid centre gives (inf, 0) everywhere."""
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(3, 50, 6)), jnp.float32)
    C = jnp.asarray(rng.normal(size=(9, 6)), jnp.float32)
    batched = jax.vmap(lambda x: K.nearest_center(x, C).index)(X)
    for b in range(3):
        np.testing.assert_array_equal(batched[b], K_nearest._nearest_center_xla(X[b], C, jnp.ones(9, bool), None, 0).index)
    res = K.nearest_center(X[0], C, jnp.zeros(9, bool))
    assert np.all(np.isinf(np.asarray(res.sq_dist))) and np.all(np.asarray(res.index) == 0)


@needs_native
def test_dp_means_and_kmeans_same_with_and_without_native():
    """Whole fits give the same partition on the native and the XLA path (blobs)."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=3000, centers=6, n_features=16, random_state=0)
    X = X.astype(np.float32)
    on = dp_means(X, 200.0)
    km_on = kmeans(jax.random.key(0), X, 6)
    with _native.disabled():  # clears the programs traced with the native kernel
        off = dp_means(X, 200.0)
        km_off = kmeans(jax.random.key(0), X, 6)
    assert on.n_clusters == off.n_clusters == 6
    np.testing.assert_array_equal(on.labels, off.labels)
    np.testing.assert_allclose(on.objective, off.objective, rtol=1e-5)
    np.testing.assert_array_equal(km_on.labels, km_off.labels)


@needs_native
def test_switch_retraces_jitted_functions_and_restores_the_setting(monkeypatch):
    """disabled() makes an already-traced jitted function lower to the XLA path (no custom
    call) and restores the native one on exit; use_native checks its argument."""
    X = jax.ShapeDtypeStruct((100, 8), jnp.float32)
    C = jax.ShapeDtypeStruct((5, 8), jnp.float32)
    f = jax.jit(lambda X, C: K.nearest_center_stats(X, C))
    assert "bayesclust_nearest_center_stats_f32" in f.lower(X, C).as_text()
    with _native.disabled():
        assert not _native.enabled()
        assert "bayesclust_" not in f.lower(X, C).as_text()
        with _native.use_native(True):
            assert "bayesclust_nearest_center_stats_f32" in f.lower(X, C).as_text()
        assert "bayesclust_" not in f.lower(X, C).as_text()
    assert _native.enabled()
    assert "bayesclust_nearest_center_stats_f32" in f.lower(X, C).as_text()
    with pytest.raises(TypeError, match="flag must be a bool"):
        with _native.use_native("no"):
            pass
    monkeypatch.setattr(_native, "available", lambda: False)
    with pytest.raises(RuntimeError, match="not available"):
        with _native.use_native(True):
            pass


@needs_native
def test_native_jit_and_eager_agree():
    """The same bits op by op (disable_jit) and compiled, with and without statistics."""
    rng = np.random.default_rng(2)
    X = jnp.asarray(rng.normal(size=(500, 40)), jnp.float32)
    C = jnp.asarray(rng.normal(size=(21, 40)), jnp.float32)
    valid = jnp.asarray(np.r_[True, rng.random(20) < 0.7])
    w = jnp.asarray(rng.random(500) + 0.5, jnp.float32)
    compiled = jax.jit(K.nearest_center_stats)(X, C, valid, w)
    with jax.disable_jit():
        eager = K.nearest_center_stats(X, C, valid, w)
    for a, b in zip(jax.tree.leaves(compiled), jax.tree.leaves(eager)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("native", [pytest.param(True, marks=needs_native), False])
def test_nearest_center_stats_toy_by_hand_and_row_order(native):
    """3 weighted points, 2 centres: labels, weights and sums by hand; row order is irrelevant.

    Both the native kernel and the XLA fallback (``native=False``).
    """
    with contextlib.nullcontext() if native else _native.disabled():
        _toy_by_hand_and_row_order()


def _toy_by_hand_and_row_order():
    # x0 = (1, 0) -> c0 (1 vs 17); x1 = (0, 3) -> c1 (9 vs 1); x2 = (3, 0) -> c0 (9 vs 25).
    X = jnp.asarray([[1.0, 0.0], [0.0, 3.0], [3.0, 0.0]], jnp.float32)
    C = jnp.asarray([[0.0, 0.0], [0.0, 4.0]], jnp.float32)
    w = jnp.asarray([2.0, 1.0, 0.5], jnp.float32)
    nc, st = jax.jit(K.nearest_center_stats)(X, C, None, w)
    assert nc.index.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(nc.sq_dist, [1.0, 1.0, 9.0])
    np.testing.assert_array_equal(st.weight, [2.5, 1.0])  # 2 + 0.5; 1
    np.testing.assert_array_equal(st.sum, [[3.5, 0.0], [0.0, 3.0]])  # 2 (1,0) + 0.5 (3,0)
    perm = jnp.asarray([2, 0, 1])
    nc_p, st_p = jax.jit(K.nearest_center_stats)(X[perm], C, None, w[perm])
    np.testing.assert_array_equal(nc_p.index, np.asarray(nc.index)[np.asarray(perm)])
    np.testing.assert_array_equal(st_p.weight, st.weight)
    np.testing.assert_array_equal(st_p.sum, st.sum)
