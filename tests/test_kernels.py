"""Tests of bayesclust.kernels.

References: scipy's ``cdist(..., "sqeuclidean")``, NumPy float64 loops written straight from
the docstrings, and toy values computed by hand.  Shapes are few and reused (JIT compile time
dominates); seeds are looped inside tests.

Note: the shapes avoid ``d == 4`` with ~128 centres and a block of 2-8 rows, for which XLA:CPU
compilation of the unrolled direct-difference chain exhausts memory (see the report).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.distance import cdist

from bayesclust import kernels as K
from bayesclust.kernels import (
    NEVER,
    assigned_squared_distances,
    assignment_block_size,
    compact_labels,
    nearest_center,
    segment_stats,
    squared_distances,
    squared_norms,
    weighted_means,
)

# One jitted entry point, so that identical shapes/options share a compiled executable.
_nearest = jax.jit(nearest_center, static_argnames=("block_size",))

# Shapes that reach every internal code path of ``_nearest_in_block``.
_D_DIRECT = K._DIRECT_MAX_FEATURES  # largest d that uses exact differences
_D_GEMM = K._DIRECT_MAX_FEATURES + 1  # smallest d that uses the GEMM scores
_K_CHAIN = 24  # unrolled compare/select chain (<= _UNROLL_MAX_CENTERS)
_K_ARGMIN = K._UNROLL_MAX_CENTERS + 1  # smallest k that uses jnp.argmin
PATHS = {
    "direct-chain": (_D_DIRECT, _K_CHAIN),
    "gemm-chain": (_D_GEMM, _K_CHAIN),
    "gemm-argmin": (_D_GEMM, _K_ARGMIN),
    "small-d-argmin": (2, _K_ARGMIN),
}
N = 45  # not a multiple of BLOCK: lax.map over 6 blocks plus a tail of 3 rows
BLOCK = 7


def _nearest_loop(X, C, valid=None, birth=None, row_offset=0):
    """Brute force in float64: first index of the minimum over visible centres."""
    X = np.asarray(X, np.float64)
    C = np.asarray(C, np.float64)
    n, k = len(X), len(C)
    valid = np.ones(k, bool) if valid is None else np.asarray(valid)
    sq = np.full(n, np.inf)
    idx = np.full(n, -1)
    for i in range(n):
        for c in range(k):
            if not valid[c] or (birth is not None and birth[c] > row_offset + i):
                continue
            dist = float(np.sum((X[i] - C[c]) ** 2))
            if dist < sq[i]:  # strict: lowest index wins ties
                sq[i], idx[i] = dist, c
    return sq, idx


def _random_case(rng, d, k, n=N):
    """Random points, centres, a validity mask and row-dependent births."""
    X = rng.normal(size=(n, d))
    C = rng.normal(size=(k, d))
    valid = rng.random(k) < 0.7
    valid[rng.integers(k)] = True
    row_offset = int(rng.integers(3, 50))
    # Nothing is visible to the first 3 rows; some slots are never visible.
    birth = rng.integers(row_offset + 3, row_offset + n + 5, size=k)
    birth[rng.random(k) < 0.1] = NEVER
    return X, C, valid, birth, row_offset


# --------------------------------------------------------------------------- #
# 1. toy cases by hand (run through every code path by padding with zeros and far centres)
# --------------------------------------------------------------------------- #


def _embed(X, C, d, k, far=100.0):
    """Pad toy 2-D data to d features (zeros) and k centres (far away, appended last)."""
    X = np.asarray(X, np.float32)
    C = np.asarray(C, np.float32)
    Xp = np.zeros((len(X), d), np.float32)
    Xp[:, : X.shape[1]] = X
    Cp = np.zeros((k, d), np.float32)
    Cp[: len(C), : C.shape[1]] = C
    Cp[len(C) :, 0] = far * (1 + np.arange(k - len(C)))
    return Xp, Cp


def _pad_mask(mask, k, fill):
    out = np.full(k, fill, dtype=np.asarray(mask).dtype)
    out[: len(mask)] = mask
    return out


@pytest.mark.parametrize("path", list(PATHS))
def test_nearest_center_toy_by_hand(path):
    """3 points, 2 centres: argmin and distances computed by hand."""
    d, k = PATHS[path]
    # x0 -> c0 at 1; x1 -> c1 at 4; x2 = (3, 0): 9 from c0, 4 + 9 = 13 from c1.
    X, C = _embed([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]], [[0.0, 0.0], [0.0, 4.0]], d, k)
    res = _nearest(X, C)
    assert res.index.dtype == jnp.int32
    assert res.index.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(res.sq_dist, [1.0, 4.0, 9.0])


@pytest.mark.parametrize("path", list(PATHS))
def test_nearest_center_ties_and_invalid_by_hand(path):
    """Ties go to the lowest index; an invalid slot never wins even at distance 0."""
    d, k = PATHS[path]
    # The origin is at distance 1 from the three first centres (a 3-way tie);
    # (2, 0) coincides with centre 3.
    X, C = _embed(
        [[0.0, 0.0], [2.0, 0.0]], [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [2.0, 0.0]], d, k
    )
    res = _nearest(X, C)
    assert res.index.tolist() == [0, 3]
    np.testing.assert_array_equal(res.sq_dist, [1.0, 0.0])

    # Centres 0 and 3 invalid.  Row 0: tie between 1 and 2 -> 1.  Row 1: centre 3
    # (distance 0) and centre 0 (distance 1) are invalid; centre 1 is at 4 + 1 = 5,
    # centre 2 at 9, the padding centres at >= 98^2.
    for fill in (True, False):
        valid = _pad_mask([False, True, True, False], k, fill)
        res = _nearest(X, C, jnp.asarray(valid))
        assert res.index.tolist() == [1, 1]
        np.testing.assert_array_equal(res.sq_dist, [1.0, 5.0])


@pytest.mark.parametrize("path", list(PATHS))
def test_nearest_center_birth_and_no_visible_centre_by_hand(path):
    """birth[c] <= row_offset + i decides visibility; nothing visible gives inf."""
    d, k = PATHS[path]
    X, C = _embed([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 2.0]], d, k)
    # With row_offset 10: row 0 (global 10) sees nothing, row 1 (11) sees centre 1
    # only, row 2 (12) sees both.
    birth = jnp.asarray(_pad_mask(np.array([12, 11]), k, NEVER), jnp.int32)
    res = _nearest(X, C, birth=birth, row_offset=10)
    assert res.sq_dist[0] == np.inf
    assert res.index.tolist()[1:] == [1, 0]
    np.testing.assert_array_equal(res.sq_dist[1:], [4.0, 1.0])
    # No valid slot at all: every row gets inf.
    res = _nearest(X, C, jnp.zeros(k, bool))
    assert np.all(np.asarray(res.sq_dist) == np.inf)


def test_squared_distances_and_norms_by_hand():
    """|(3, 4)|^2 = 25; distances of a 2x2 toy computed by hand."""
    X = jnp.array([[3.0, 4.0], [0.0, 0.0]])
    C = jnp.array([[0.0, 0.0], [3.0, 0.0]])
    np.testing.assert_array_equal(squared_norms(X), [25.0, 0.0])
    np.testing.assert_array_equal(squared_distances(X, C), [[25.0, 16.0], [0.0, 9.0]])
    np.testing.assert_array_equal(
        assigned_squared_distances(X, C, jnp.array([1, 0])), [16.0, 0.0]
    )


def test_segment_stats_and_means_by_hand():
    """Counts, sums and means of a 3-point toy; the empty cluster's mean is 0."""
    X = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    labels = jnp.array([0, 2, 0])
    st = segment_stats(X, labels, 3)
    np.testing.assert_array_equal(st.weight, [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(st.sum, [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_array_equal(weighted_means(st), [[3.0, 4.0], [0.0, 0.0], [3.0, 4.0]])
    st = segment_stats(X, labels, 3, sample_weight=jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(st.weight, [4.0, 0.0, 2.0])
    np.testing.assert_array_equal(st.sum, [[16.0, 20.0], [0.0, 0.0], [6.0, 8.0]])
    np.testing.assert_allclose(weighted_means(st), [[4.0, 5.0], [0.0, 0.0], [3.0, 4.0]])


def test_compact_labels_by_hand():
    """Slots 1 and 4 are dropped: 0, 2, 3 become 0, 1, 2 and dropped slots map to K."""
    keep = jnp.array([True, False, True, True, False])
    new_labels, new_index, n_kept = compact_labels(jnp.array([3, 0, 2, 0]), keep)
    assert new_labels.tolist() == [2, 0, 1, 0]
    assert new_index.tolist() == [0, 5, 1, 2, 5]
    assert int(n_kept) == 3
    v = jnp.array([10.0, 20.0, 30.0, 40.0, 50.0])
    compacted = jnp.zeros(5).at[new_index].set(v, mode="drop")
    np.testing.assert_array_equal(compacted, [10.0, 30.0, 40.0, 0.0, 0.0])


def test_assignment_block_size_by_hand():
    """One block up to 2**27 entries, then 2**27 // k rows (at least 1024)."""
    assert assignment_block_size(1000, 100) == 1000
    assert assignment_block_size(2**20, 2**7) == 2**20  # exactly 2**27 entries
    assert assignment_block_size(2**20 + 1, 2**7) == 2**20
    assert assignment_block_size(3 * 10**6, 1000) == 2**27 // 1000
    assert assignment_block_size(10**7, 10**6) == 1024  # floor of 1024 rows
    bs = assignment_block_size(5 * 10**6, 300)
    assert isinstance(bs, int) and bs * 300 <= 2**27


# --------------------------------------------------------------------------- #
# 2. references (float64 brute force, scipy)
# --------------------------------------------------------------------------- #


def test_shapes_cover_every_code_path():
    """The chosen shapes really reach the direct chain, GEMM chain, argmin and lax.map."""

    def prims(d, k, **kw):
        X = jax.ShapeDtypeStruct((N, d), jnp.float32)
        C = jax.ShapeDtypeStruct((k, d), jnp.float32)
        return str(jax.make_jaxpr(lambda X, C: nearest_center(X, C, **kw))(X, C))

    direct = prims(*PATHS["direct-chain"])
    assert "dot_general" not in direct and "argmin" not in direct
    chain = prims(*PATHS["gemm-chain"])
    assert "dot_general" in chain and "argmin" not in chain
    for path in ("gemm-argmin", "small-d-argmin"):
        assert "argmin" in prims(*PATHS[path])
    assert "scan" in prims(*PATHS["gemm-chain"], block_size=BLOCK)
    assert "scan" not in chain


@pytest.mark.parametrize("path", list(PATHS))
def test_nearest_center_matches_brute_force(x64, path):
    """Random float64 inputs: plain, with valid, with birth + row_offset; blocked == unblocked."""
    d, k = PATHS[path]
    rng = np.random.default_rng(abs(hash(path)) % 2**32)
    n_inf = 0
    for _ in range(3):
        X, C, valid, birth, off = _random_case(rng, d, k)
        cases = [
            ({}, {}),
            ({"valid": valid}, {"valid": valid}),
            (
                {"valid": valid, "birth": birth, "row_offset": off},
                {"valid": jnp.asarray(valid), "birth": jnp.asarray(birth, jnp.int32),
                 "row_offset": jnp.int32(off)},
            ),
        ]
        for ref_kw, kw in cases:
            sq_ref, idx_ref = _nearest_loop(X, C, **ref_kw)
            valid_arg = kw.pop("valid", None)
            full = _nearest(X, C, valid_arg, **kw)
            blocked = _nearest(X, C, valid_arg, block_size=BLOCK, **kw)
            assert full.sq_dist.dtype == jnp.float64
            seen = np.isfinite(sq_ref)
            n_inf += int((~seen).sum())
            np.testing.assert_array_equal(np.asarray(full.sq_dist)[~seen], np.inf)
            np.testing.assert_array_equal(np.asarray(full.index)[seen], idx_ref[seen])
            np.testing.assert_allclose(np.asarray(full.sq_dist)[seen], sq_ref[seen], rtol=1e-12)
            # Row blocking (lax.map part + tail) must not change anything.
            np.testing.assert_array_equal(blocked.index, full.index)
            np.testing.assert_array_equal(blocked.sq_dist, full.sq_dist)
    assert n_inf > 0  # the birth case really produced rows that see no centre


def test_nearest_center_blocked_equals_unblocked_float32():
    """Row blocking is bit-for-bit neutral in float32 too, on every path."""
    rng = np.random.default_rng(7)
    for d, k in PATHS.values():
        X, C, valid, birth, off = _random_case(rng, d, k)
        X, C = X.astype(np.float32), C.astype(np.float32)
        kw = dict(birth=jnp.asarray(birth, jnp.int32), row_offset=off)
        full = _nearest(X, C, jnp.asarray(valid), **kw)
        blocked = _nearest(X, C, jnp.asarray(valid), block_size=BLOCK, **kw)
        np.testing.assert_array_equal(blocked.index, full.index)
        np.testing.assert_array_equal(blocked.sq_dist, full.sq_dist)


def test_nearest_center_block_sizes_edge_cases(x64):
    """block_size 1, a divisor of n, and >= n all agree with the brute force."""
    rng = np.random.default_rng(3)
    d, k = PATHS["gemm-chain"]
    X, C, valid, birth, off = _random_case(rng, d, k, n=12)
    sq_ref, idx_ref = _nearest_loop(X, C, valid, birth, off)
    seen = np.isfinite(sq_ref)
    for bs in (1, 4, 5, 12, 100):
        res = _nearest(X, C, jnp.asarray(valid), birth=jnp.asarray(birth, jnp.int32),
                       row_offset=off, block_size=bs)
        np.testing.assert_array_equal(np.asarray(res.index)[seen], idx_ref[seen])
        np.testing.assert_allclose(np.asarray(res.sq_dist)[seen], sq_ref[seen], rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(res.sq_dist)[~seen], np.inf)


def test_squared_distances_matches_cdist(x64):
    """GEMM form equals scipy's sqeuclidean in float64; precomputed norms give the same."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6))
    C = rng.normal(size=(11, 6))
    ref = cdist(X, C, "sqeuclidean")
    got = squared_distances(X, C)
    assert got.shape == (30, 11)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(squared_norms(X), np.einsum("ij,ij->i", X, X), rtol=1e-14)
    pre = squared_distances(X, C, x_sq=squared_norms(X), c_sq=squared_norms(C))
    np.testing.assert_array_equal(pre, got)


def test_assigned_squared_distances_matches_loop(x64):
    """|x_i - C[z_i]|^2 against a per-row loop."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 6))
    C = rng.normal(size=(11, 6))
    z = rng.integers(11, size=30)
    ref = np.array([np.sum((X[i] - C[z[i]]) ** 2) for i in range(30)])
    np.testing.assert_allclose(assigned_squared_distances(X, C, z), ref, rtol=1e-13)


def test_squared_distances_nonnegative_float32():
    """Coincident points far from the origin: the GEMM form cancels but is clipped at 0."""
    rng = np.random.default_rng(2)
    C = (1e3 + rng.normal(size=(8, 6))).astype(np.float32)
    X = np.concatenate([C, C + np.float32(1e-3)]).astype(np.float32)
    D = np.asarray(squared_distances(X, C))
    assert D.dtype == np.float32
    assert np.all(D >= 0)
    assert np.all(np.isfinite(D))


@pytest.mark.parametrize("path", ["direct-chain", "gemm-chain", "gemm-argmin"])
def test_nearest_center_far_from_origin_float32(path):
    """Winner distance is recomputed exactly: relative 1e-4 where the GEMM form cancels."""
    d, k = PATHS[path]
    rng = np.random.default_rng(11)
    offset = 1e3
    centres = rng.normal(scale=20.0, size=(k, d))  # well separated: argmin is unambiguous
    C = (offset + centres).astype(np.float32)
    X = (offset + centres[rng.integers(k, size=N)] + rng.normal(scale=0.5, size=(N, d)))
    X = X.astype(np.float32)
    X64, C64 = X.astype(np.float64), C.astype(np.float64)
    D64 = cdist(X64, C64, "sqeuclidean")
    idx_ref = D64.argmin(1)
    ref = D64.min(1)
    # The data are hard: the float32 GEMM form (computed here in NumPy) is far off.
    x_sq = np.einsum("ij,ij->i", X, X)
    c_sq = np.einsum("ij,ij->i", C, C)
    gemm = (x_sq[:, None] - np.float32(2) * (X @ C.T) + c_sq[None, :])[np.arange(N), idx_ref]
    assert np.max(np.abs(gemm - ref) / ref) > 1e-3
    res = _nearest(X, C)
    np.testing.assert_array_equal(res.index, idx_ref)
    np.testing.assert_allclose(res.sq_dist, ref, rtol=1e-4)
    np.testing.assert_allclose(assigned_squared_distances(X, C, res.index), ref, rtol=1e-4)


def test_segment_stats_matches_loop(x64):
    """Per-cluster loop with and without weights; labels outside [0, K) are dropped."""
    rng = np.random.default_rng(4)
    n, d, Kc = 40, 3, 6
    for _ in range(3):
        X = rng.normal(size=(n, d))
        labels = rng.integers(-2, Kc + 2, size=n)  # some negative and >= K: dropped
        w = rng.random(n) * 3.0
        for weights in (None, w):
            st = segment_stats(X, labels, Kc, sample_weight=weights)
            ww = np.ones(n) if weights is None else weights
            ref_w = np.array([ww[labels == c].sum() for c in range(Kc)])
            ref_s = np.array([(ww[labels == c, None] * X[labels == c]).sum(0) for c in range(Kc)])
            assert st.weight.shape == (Kc,) and st.sum.shape == (Kc, d)
            np.testing.assert_allclose(st.weight, ref_w, rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(st.sum, ref_s, rtol=1e-12, atol=1e-12)


def test_weighted_means_matches_loop_and_empty_is_zero(x64):
    """Means equal sum/weight per cluster; empty clusters give exactly 0, never NaN."""
    rng = np.random.default_rng(5)
    n, d, Kc = 25, 3, 8
    X = rng.normal(size=(n, d))
    labels = rng.integers(0, 5, size=n)  # clusters 5, 6, 7 are empty
    w = rng.random(n) + 0.1
    means = np.asarray(weighted_means(segment_stats(X, labels, Kc, sample_weight=w)))
    assert not np.any(np.isnan(means))
    for c in range(Kc):
        m = labels == c
        ref = (w[m, None] * X[m]).sum(0) / w[m].sum() if m.any() else np.zeros(d)
        np.testing.assert_allclose(means[c], ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(means[5:], 0.0)


def test_compact_labels_matches_loop():
    """Surviving slots keep their order; the .at[].set(mode='drop') idiom compacts."""
    rng = np.random.default_rng(6)
    Kc = 12
    for _ in range(5):
        keep = rng.random(Kc) < 0.5
        keep[rng.integers(Kc)] = True
        kept = np.flatnonzero(keep)
        labels = rng.choice(kept, size=30)
        new_labels, new_index, n_kept = compact_labels(jnp.asarray(labels), jnp.asarray(keep))
        ref_index = np.full(Kc, Kc)
        for r, c in enumerate(kept):
            ref_index[c] = r
        np.testing.assert_array_equal(new_index, ref_index)
        np.testing.assert_array_equal(new_labels, ref_index[labels])
        assert int(n_kept) == len(kept)
        v = rng.normal(size=Kc)
        compacted = np.asarray(jnp.full(Kc, np.nan).at[new_index].set(v, mode="drop"))
        np.testing.assert_allclose(compacted[: len(kept)], v[kept].astype(np.float32))
        assert np.all(np.isnan(compacted[len(kept):]))


# --------------------------------------------------------------------------- #
# 3. invariances
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("path", ["direct-chain", "gemm-chain", "gemm-argmin"])
def test_nearest_center_row_permutation_and_translation(x64, path):
    """Permuting rows permutes outputs; translating X and C together keeps the index."""
    d, k = PATHS[path]
    rng = np.random.default_rng(8)
    X, C, valid, _, _ = _random_case(rng, d, k)
    res = _nearest(X, C, valid)
    perm = rng.permutation(N)
    res_p = _nearest(X[perm], C, valid)
    np.testing.assert_array_equal(res_p.index, np.asarray(res.index)[perm])
    np.testing.assert_array_equal(res_p.sq_dist, np.asarray(res.sq_dist)[perm])
    shift = rng.normal(scale=10.0, size=d)
    res_t = _nearest(X + shift, C + shift, valid)
    np.testing.assert_array_equal(res_t.index, res.index)
    np.testing.assert_allclose(res_t.sq_dist, res.sq_dist, rtol=1e-9)


def test_segment_stats_label_permutation_and_repeated_rows(x64):
    """Relabelling permutes the stats; integer weights equal repeated rows."""
    rng = np.random.default_rng(9)
    n, d, Kc = 20, 3, 5
    X = rng.normal(size=(n, d))
    labels = rng.integers(Kc, size=n)
    perm = rng.permutation(Kc)  # old slot c becomes perm[c]
    st = segment_stats(X, labels, Kc)
    st_p = segment_stats(X, perm[labels], Kc)
    np.testing.assert_array_equal(np.asarray(st_p.weight)[perm], st.weight)
    np.testing.assert_allclose(np.asarray(st_p.sum)[perm], st.sum, rtol=1e-14)
    reps = rng.integers(1, 4, size=n)
    st_w = segment_stats(X, labels, Kc, sample_weight=reps.astype(float))
    st_r = segment_stats(np.repeat(X, reps, axis=0), np.repeat(labels, reps), Kc)
    np.testing.assert_allclose(st_w.weight, st_r.weight, rtol=1e-14)
    np.testing.assert_allclose(st_w.sum, st_r.sum, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- #
# 4. jit and eager agree
# --------------------------------------------------------------------------- #


def test_jit_and_eager_agree():
    """nearest_center (blocked, with birth) and the statistics kernels, jit vs disable_jit."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(10, 3)).astype(np.float32)
    C = rng.normal(size=(5, 3)).astype(np.float32)
    valid = jnp.array([True, True, False, True, True])
    birth = jnp.array([0, 12, 0, 14, 11], jnp.int32)
    jitted = jax.jit(nearest_center, static_argnames=("block_size",))
    jit_res = jitted(X, C, valid, birth=birth, row_offset=jnp.int32(10), block_size=3)
    with jax.disable_jit():
        eager = nearest_center(X, C, valid, birth=birth, row_offset=10, block_size=3)
    np.testing.assert_array_equal(jit_res.index, eager.index)
    np.testing.assert_allclose(jit_res.sq_dist, eager.sq_dist, rtol=1e-6)

    labels = jnp.asarray(rng.integers(0, 5, size=10))
    w = jnp.asarray(rng.random(10).astype(np.float32))

    def stats(X, labels, w):
        st = segment_stats(X, labels, 6, sample_weight=w)
        return st, weighted_means(st), compact_labels(labels, st.weight > 0)

    jit_out = jax.jit(stats)(X, labels, w)
    with jax.disable_jit():
        eager_out = stats(X, labels, w)
    for a, b in zip(jax.tree.leaves(jit_out), jax.tree.leaves(eager_out)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
