"""Baselines of the discriminative-clustering experiments: k-means (Lloyd), MoG EM, MDA2 EM.

References: scikit-learn's Lloyd k-means from the same centres; hand-written NumPy
E/M steps; invariances (monotone EM log-likelihood, label permutation, weights =
repeated rows); jit and eager agree; bad input.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import logsumexp

from bayesclust.inference.discriminative.dc_baselines import (
    init_mda2_em_state,
    init_mog_em_state,
    mda2_em,
    mda2_em_step,
    mog_em,
    mog_em_step,
)
from bayesclust.inference.hard.kmeans import kmeans, kmeans_init


def _blobs(seed, n=300, d=4, k=4, scale=3.0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=scale, size=(k, d))
    z = rng.integers(k, size=n)
    return means[z] + rng.normal(size=(n, d)), z


# --------------------------------------------------------------------------- #
# k-means
# --------------------------------------------------------------------------- #


def test_kmeans_toy_by_hand():
    X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    res = kmeans(0, X, 2, init=X[[0, 1]])
    # Step 1: {0}, {1, 2, 3} -> centres (0, 0), (3.467, 3.333); step 2: {0, 1}, {2, 3}.
    assert res.labels.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(res.centers, [[0.1, 0.0], [5.1, 5.0]], atol=1e-6)
    assert res.objective == pytest.approx(0.04, rel=1e-4)  # 4 * 0.1^2
    assert res.converged and res.n_iter == 3  # the third iteration repeats the labels


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kmeans_equals_sklearn_lloyd(seed, x64):
    from sklearn.cluster import KMeans

    X, _ = _blobs(seed, n=400, d=5, k=5, scale=2.0)  # overlapping: several iterations
    C0 = kmeans_init(seed, X, 5)
    ours = kmeans(0, X, 5, init=C0, max_iter=300, tol=1e-4)
    ref = KMeans(5, init=C0, n_init=1, algorithm="lloyd", max_iter=300, tol=1e-4).fit(X)
    assert ours.centers.dtype == np.float64
    np.testing.assert_array_equal(ours.labels, ref.labels_)
    np.testing.assert_allclose(ours.centers, ref.cluster_centers_, rtol=0, atol=1e-10)
    assert ours.objective == pytest.approx(ref.inertia_, rel=1e-10)
    assert ours.n_iter == ref.n_iter_
    assert ours.converged


def test_kmeans_float32_matches_sklearn():
    from sklearn.cluster import KMeans

    X, _ = _blobs(7, n=500, d=8, k=6)
    X = X.astype(np.float32)
    C0 = X[:6].copy()
    ours = kmeans(0, X, 6, init=C0)
    ref = KMeans(6, init=C0, n_init=1, algorithm="lloyd").fit(X)
    assert (ours.labels == ref.labels_).mean() >= 0.99  # float32 near-ties
    np.testing.assert_allclose(ours.centers, ref.cluster_centers_, atol=1e-3)
    assert ours.objective == pytest.approx(ref.inertia_, rel=1e-4)


def test_kmeans_random_init_is_distinct_data_points():
    X, _ = _blobs(1, n=50, d=2)
    C = kmeans_init(3, X, 10)
    rows = {tuple(r) for r in X.astype(np.float32).tolist()}
    assert len({tuple(c) for c in C.tolist()}) == 10
    assert all(tuple(c) in rows for c in C.tolist())
    # all points as centres: every point its own cluster, zero sum of squares
    res = kmeans(0, X, 50)
    assert sorted(res.labels.tolist()) == list(range(50)) and res.objective == pytest.approx(0, abs=1e-4)


def test_kmeans_plusplus_and_determinism():
    X, _ = _blobs(2, n=200, d=3, k=4, scale=6.0)
    a = kmeans(5, X, 4, init="k-means++")
    b = kmeans(jax.random.PRNGKey(5), X, 4, init="k-means++")
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.converged and np.isfinite(a.objective)


def test_kmeans_empty_cluster_keeps_its_centre():
    X, _ = _blobs(3, n=100, d=2, k=2)
    C0 = np.array([X[0], X[1], [1e3, 1e3]])
    res = kmeans(0, X, 3, init=C0)
    np.testing.assert_allclose(res.centers[2], [1e3, 1e3], rtol=1e-6)  # centring round trip
    assert not np.any(res.labels == 2) and np.all(np.isfinite(res.centers))


def test_kmeans_label_permutation_and_repeated_rows(x64):
    X, _ = _blobs(4, n=120, d=3, k=3)
    C0 = X[[5, 50, 90]]
    base = kmeans(0, X, 3, init=C0)
    perm = [2, 0, 1]
    permuted = kmeans(0, X, 3, init=C0[perm])
    np.testing.assert_allclose(permuted.centers, base.centers[perm], atol=1e-12)
    np.testing.assert_array_equal(np.asarray(perm)[permuted.labels], base.labels)
    # integer weights = repeated rows
    w = np.random.default_rng(0).integers(1, 4, size=len(X))
    weighted = kmeans(0, X, 3, init=C0, sample_weight=w.astype(float))
    repeated = kmeans(0, np.repeat(X, w, axis=0), 3, init=C0)
    np.testing.assert_allclose(weighted.centers, repeated.centers, atol=1e-10)
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-10)


def test_kmeans_jit_and_eager_agree():
    X, _ = _blobs(5, n=40, d=2, k=3)
    C0 = X[:3]
    jitted = kmeans(0, X, 3, init=C0)
    with jax.disable_jit():
        eager = kmeans(0, X, 3, init=C0)
    np.testing.assert_array_equal(jitted.labels, eager.labels)
    np.testing.assert_allclose(jitted.centers, eager.centers, atol=1e-5)
    assert jitted.n_iter == eager.n_iter


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        (dict(n_clusters=11), ValueError, "n_clusters"),
        (dict(n_clusters=0), ValueError, "n_clusters"),
        (dict(n_clusters=2.5), TypeError, "n_clusters"),
        (dict(init="kmeans"), ValueError, "init"),
        (dict(init=np.zeros((3, 2))), ValueError, "init must have shape"),
        (dict(init=np.full((2, 3), np.nan)), ValueError, "init contains NaN"),
        (dict(tol=-1.0), ValueError, "tol"),
        (dict(max_iter=0), ValueError, "max_iter"),
    ],
)
def test_kmeans_bad_input(kwargs, err, match):
    X = np.random.default_rng(0).normal(size=(10, 3))
    kw = dict(n_clusters=2) | kwargs
    with pytest.raises(err, match=match):
        kmeans(0, X, kw.pop("n_clusters"), **kw)


def test_kmeans_bad_data():
    with pytest.raises(ValueError, match="X contains NaN"):
        kmeans(0, np.array([[0.0], [np.nan]]), 1)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        kmeans(0, np.zeros(5), 1)
    with pytest.raises(TypeError, match="rng_key"):
        kmeans("seed", np.zeros((5, 1)), 1)


# --------------------------------------------------------------------------- #
# NumPy references of one EM iteration
# --------------------------------------------------------------------------- #


def _np_log_gauss(X, M, s):
    d = X.shape[1]
    sq = ((X[:, None, :] - M[None]) ** 2).sum(-1)
    return -0.5 * d * np.log(2 * np.pi * s**2) - sq / (2 * s**2)


def _np_mog_step(X, M, w, s):
    J = _np_log_gauss(X, M, s) + np.log(w)
    ll = logsumexp(J, axis=1).sum()
    R = np.exp(J - logsumexp(J, axis=1, keepdims=True))
    Nk = R.sum(0)
    return R.T @ X / Nk[:, None], Nk / len(X), ll


def _np_mda2_step(X, c, M, w, psi, s):
    J = _np_log_gauss(X, M, s) + np.log(w) + np.log(psi[:, c].T)
    ll = logsumexp(J, axis=1).sum()
    R = np.exp(J - logsumexp(J, axis=1, keepdims=True))
    Nk = R.sum(0)
    onehot = np.eye(psi.shape[1])[c]
    return R, R.T @ X / Nk[:, None], Nk / len(X), (R.T @ onehot) / Nk[:, None], ll


def test_mog_one_and_three_steps_equal_numpy(x64):
    X, _ = _blobs(0, n=150, d=3, k=3, scale=1.5)
    C0 = X[[0, 10, 20]]
    s = 1.2
    M, w = C0, np.full(3, 1 / 3)
    lls = []
    for t in range(3):
        M, w, ll = _np_mog_step(X, M, w, s)
        lls.append(ll)
        res = mog_em(0, X, 3, s, max_iter=t + 1, init=C0)
        np.testing.assert_allclose(res.centers, M, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(res.weights, w, rtol=1e-10)
        np.testing.assert_allclose(res.objective_trace[:-1], lls, rtol=1e-12)
    final = logsumexp(_np_log_gauss(X, M, s) + np.log(w), axis=1).sum()
    assert res.objective == pytest.approx(final, rel=1e-12)
    assert res.n_iter == 3 and res.std == s and not res.converged


def test_mda2_responsibilities_equal_numpy(x64):
    X, z = _blobs(1, n=120, d=2, k=3, scale=1.0)
    rng = np.random.default_rng(1)
    c = np.where(rng.random(len(z)) < 0.8, z, rng.integers(3, size=len(z)))  # noisy classes
    C0 = X[[3, 30, 60, 90]]
    s = 0.8
    M, w, psi = C0, np.full(4, 0.25), np.full((4, 3), 1 / 3)
    lls = []
    for t in range(3):
        R, M, w, psi, ll = _np_mda2_step(X, c, M, w, psi, s)
        lls.append(ll)
        assert np.allclose(R.sum(1), 1.0)
        res = mda2_em(0, X, c, 4, s, max_iter=t + 1, init=C0)
        np.testing.assert_allclose(res.centers, M, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(res.weights, w, rtol=1e-10)
        np.testing.assert_allclose(res.psi, psi, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(res.objective_trace[:-1], lls, rtol=1e-12)
    np.testing.assert_allclose(res.psi.sum(1), 1.0)
    assert res.weights.sum() == pytest.approx(1.0)


def test_mda2_with_uninformative_classes_is_mog(x64):
    # one class: psi = 1, so MDA2's EM is exactly MoG's
    X, _ = _blobs(2, n=100, d=2)
    a = mog_em(0, X, 3, 1.0, max_iter=20)
    b = mda2_em(0, X, np.zeros(len(X), int), 3, 1.0, max_iter=20)
    np.testing.assert_allclose(a.centers, b.centers, atol=1e-12)
    # Each stops at its own exact fixed point, a rounding apart: the common prefix agrees.
    m = min(len(a.objective_trace), len(b.objective_trace))
    np.testing.assert_allclose(a.objective_trace[:m], b.objective_trace[:m], rtol=1e-12)
    assert a.converged and b.converged
    np.testing.assert_allclose(b.psi, 1.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("spread", [0.3, 1.0, 4.0])
def test_em_log_likelihood_never_decreases(seed, spread, x64):
    X, z = _blobs(seed, n=200, d=3, k=4, scale=2.0)
    c = (z + (np.random.default_rng(seed).random(len(z)) < 0.3)) % 4
    for res in (
        mog_em(seed, X, 5, spread, max_iter=60),
        mda2_em(seed, X, c, 5, spread, max_iter=60),
    ):
        trace = res.objective_trace
        assert trace.shape == (res.n_iter + 1,) and np.all(np.isfinite(trace))
        assert res.n_iter == 60 or res.converged
        scale = np.abs(trace).max()
        assert np.all(np.diff(trace) >= -1e-12 * scale), np.diff(trace).min()


def test_em_float32_trace_monotone_to_rounding_and_no_nan():
    X, z = _blobs(3, n=300, d=4, k=3)
    X = np.vstack([X, [[50.0, 50.0, 50.0, 50.0]]])  # a far outlier seeds a lonely component
    c = np.append(z, 0)
    C0 = np.vstack([X[:3], X[-1:]]).astype(np.float32)
    for res in (mog_em(0, X, 4, 0.5, init=C0), mda2_em(0, X, c, 4, 0.5, init=C0)):
        trace = res.objective_trace
        assert np.all(np.isfinite(trace)) and np.all(np.isfinite(res.centers))
        assert np.all(np.diff(trace) >= -1e-5 * np.abs(trace).max())
        assert res.weights[3] == pytest.approx(1 / len(X), rel=1e-3)  # the outlier's own


def test_em_far_component_gets_weight_zero_not_nan():
    X, z = _blobs(4, n=100, d=2, k=2)
    C0 = np.array([X[0], X[1], [1e4, 1e4]])
    for res in (mog_em(0, X, 3, 0.5, init=C0), mda2_em(0, X, z, 3, 0.5, init=C0)):
        assert res.weights[2] == 0.0
        np.testing.assert_allclose(res.centers[2], [1e4, 1e4], rtol=1e-6)
        assert np.all(np.isfinite(res.objective_trace))


def test_em_jit_and_eager_agree():
    X, z = _blobs(5, n=30, d=2, k=2)
    a = mda2_em(0, X, z, 3, 0.7, max_iter=2)
    with jax.disable_jit():
        b = mda2_em(0, X, z, 3, 0.7, max_iter=2)
    np.testing.assert_allclose(a.centers, b.centers, atol=1e-5)
    np.testing.assert_allclose(a.psi, b.psi, atol=1e-5)


def test_em_random_init_is_seeded():
    X, z = _blobs(6, n=100, d=2)
    a, b = mog_em(1, X, 3, 1.0, max_iter=1), mog_em(1, X, 3, 1.0, max_iter=1)
    np.testing.assert_array_equal(a.centers, b.centers)
    assert not np.allclose(a.centers, mog_em(2, X, 3, 1.0, max_iter=1).centers)


def _em_by_hand(X, init, step, max_iter, *args):
    """Step an EM state by hand: the trace, the iterations, every info checked against it."""
    state = init
    trace = [float(state.objective)]
    while int(state.n_iter) < max_iter and not bool(state.converged):
        before = jax.tree_util.tree_leaves(state[:-5])
        state, info = step(state, X, *args)
        after = jax.tree_util.tree_leaves(state[:-5])
        assert float(info.objective) == float(state.objective)
        assert bool(info.changed) == any(not np.array_equal(a, b) for a, b in zip(before, after))
        trace.append(float(state.objective))
    return state, np.asarray(trace)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_iter", [4, 200])
def test_em_steps_by_hand_reproduce_the_drivers(dtype, max_iter):
    """init + step (jitted) in the unit frame give the drivers' parameters, trace and n_iter.

    float64: the same bits.  float32: within a few units in the last place of the largest value -- the driver pads
    its rows to a shape bucket, and XLA's loop emitters (which ``make test`` compiles with)
    order the padded sums differently from the unpadded ones; ``make test-xla`` compiles with
    the default code generator, where they agree bit for bit there too.
    """
    rtol = 0.0 if dtype == np.float64 else 8 * np.finfo(np.float32).eps

    def same(actual, desired):  # a few ulps of the array's largest value
        scale = float(np.max(np.abs(desired)))
        np.testing.assert_allclose(actual, desired, rtol=rtol, atol=rtol * scale)

    with jax.enable_x64(dtype == np.float64):
        X, z = _blobs(8, n=90, d=2, k=3, scale=2.5)
        X = X.astype(dtype)
        c = z % 2
        C0 = X[[0, 30, 60, 89]]
        mean = X.mean(0).astype(dtype)
        # The unit frame: centred, times 2**-e with the largest |value| in [0.5, 1).
        e = math.frexp(float(np.max(np.abs(X - mean))))[1]
        Xc, Cc = np.ldexp(X - mean, -e), np.ldexp(C0 - mean, -e)
        std = math.ldexp(0.9, -e)
        jac = X.size * e * math.log(2.0)  # log-likelihood of X = that of Xc - n d e log 2

        def back(C):
            return (np.ldexp(np.asarray(C, np.float64), e) + mean.astype(np.float64)).astype(dtype)

        def loglik(trace):
            return (trace.astype(np.float64) - jac).astype(dtype)

        assert e != 0  # the frame is not the identity here
        res = mog_em(0, X, 4, 0.9, max_iter=max_iter, init=C0)
        state, trace = _em_by_hand(Xc, init_mog_em_state(Xc, Cc, std, max_iter=max_iter),
                                   jax.jit(mog_em_step), max_iter, std)
        same(res.centers, back(state.centers))
        same(res.weights, np.exp(np.asarray(state.log_weights)))
        same(res.objective_trace, loglik(trace.astype(dtype)))
        assert res.n_iter == int(state.n_iter) and res.converged == bool(state.converged)
        assert res.n_iter == max_iter  # 200: the trace crosses a piece of the driver's buffer
        res2 = mda2_em(0, X, c, 4, 0.9, max_iter=max_iter, init=C0)
        state2, trace2 = _em_by_hand(Xc, init_mda2_em_state(Xc, c, Cc, std, max_iter=max_iter),
                                     jax.jit(mda2_em_step), max_iter, jnp.asarray(c), std)
        same(res2.centers, back(state2.centers))
        same(res2.psi, np.exp(np.asarray(state2.log_psi)))
        same(res2.objective_trace, loglik(trace2.astype(dtype)))
        assert res2.n_iter == int(state2.n_iter) and res2.converged == bool(state2.converged)


def test_em_fixed_point_is_what_more_iterations_give(x64):
    """converged: the parameters repeat, so a longer run returns the same model."""
    X, _ = _blobs(9, n=60, d=2, k=2, scale=8.0)
    C0 = X[[0, 1]]
    res = mog_em(0, X, 2, 0.7, max_iter=500, init=C0)
    assert res.converged and res.n_iter < 500
    again = mog_em(0, X, 2, 0.7, max_iter=res.n_iter - 1, init=C0)
    assert not again.converged and again.n_iter == res.n_iter - 1
    np.testing.assert_array_equal(again.centers, res.centers)  # the last step changed nothing


@pytest.mark.parametrize(
    "call, err, match",
    [
        (lambda X, c: mog_em(0, X, 2, 0.0), ValueError, "std"),
        (lambda X, c: mog_em(0, X, 2, -1.0), ValueError, "std"),
        (lambda X, c: mog_em(0, X, 2, np.nan), ValueError, "std"),
        (lambda X, c: mog_em(0, X, 11, 1.0), ValueError, "n_clusters"),
        (lambda X, c: mog_em(0, X, 2, 1.0, max_iter=0), ValueError, "max_iter"),
        (lambda X, c: mog_em(0, X, 2, 1.0, init="nope"), ValueError, "init"),
        (lambda X, c: mog_em(0, X, 2, 1.0, init=np.zeros((2, 5))), ValueError, "init"),
        (lambda X, c: mog_em(0, X[:, 0], 2, 1.0), ValueError, "2-D"),
        (lambda X, c: mda2_em(0, X, c[:-1], 2, 1.0), ValueError, "classes has length"),
        (lambda X, c: mda2_em(0, X, c - 1, 2, 1.0), ValueError, "classes must hold labels 0..K-1"),
        (lambda X, c: mda2_em(0, X, c + 0.5, 2, 1.0), ValueError, "integer"),
        (lambda X, c: mda2_em(0, X, c, 2, 1.0, n_classes=1), ValueError, "classes holds the label 1, not in 0..0"),
        (lambda X, c: mda2_em(0, X, np.where(c == 0, "a", "b"), 2, 1.0), TypeError, "classes"),
    ],
)
def test_em_bad_input(call, err, match):
    X = np.random.default_rng(0).normal(size=(10, 3))
    c = np.array([0, 1] * 5)
    with pytest.raises(err, match=match):
        call(X, c)
