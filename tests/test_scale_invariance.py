"""Scale invariance of the hard limits, and data at the edges of the float32 range.

Every algorithm here is scale-equivariant in exact arithmetic: scaling the data by
``s`` and every squared-distance penalty by ``s**2`` (a kernel and its eigenvalue
threshold by ``s**2``, a graph's weights by ``s``) leaves the partition and the
number of iterations unchanged.  The reference is the unscaled run (a metamorphic
test) and, for k-means, scikit-learn.  The stopping rules are relative (no absolute
floor), and DP-means, the hard HDP, k-means and farthest-first work in a unit frame
(centred, scaled by a power of two), so float32 data of any magnitude work and a
penalty outside the float32 range raises a ``ValueError`` naming it.
"""

import jax
import numpy as np
import pytest
from sklearn.cluster import KMeans

from bayesclust import (
    datasets,
    dp_means,
    farthest_first_lambda,
    hard_hdp,
    kernel_dp_means,
    penalized_ncut,
    spectral_dp_means,
)
from bayesclust.estimators.dp import DPMeans
from bayesclust.graphs import knn_gaussian_affinity
from bayesclust.inference.hard.kmeans import kmeans

SCALES64 = [1e-8, 1e-6, 1e-4, 1e-2, 3.7, 1e4, 1e8]
SCALES32 = [1e-4, 1e-2, 3.7, 1e2, 1e4]


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


def _data():
    X, _ = datasets.three_gaussians(rng_key=0, n_per_cluster=60)
    return X


def _groups(X):
    return [X[:60], X[60:120], X[120:]]


def _lam(X):
    return farthest_first_lambda(X, 3)


def _cases(dtype):
    """``(name, run(s) -> (labels, n_iter))`` for every algorithm, data in ``dtype``."""
    X = _data().astype(dtype)
    lam = _lam(_data())
    K = X.astype(np.float64) @ X.astype(np.float64).T
    C0 = X[[0, 1, 2, 3]]
    A = knn_gaussian_affinity(_data(), 8)

    def sc(a, s):
        return (a * s).astype(a.dtype)

    def dpm(s):
        r = dp_means(sc(X, s), lam * s * s)
        return r.labels, r.n_iter

    def hdp(s):
        r = hard_hdp(_groups(sc(X, s)), 0.25 * lam * s * s, 0.5 * lam * s * s)
        return r.flat_labels, r.n_iter

    def kdpm(s):
        r = kernel_dp_means(K * (s * s), lam * s * s)
        return r.labels, r.n_iter

    def sdpm(s):
        # The kernel's eigenvalues scale like the kernel: s**2 for a linear kernel.
        r = spectral_dp_means(K * (s * s), 0.02 * np.trace(K) * s * s)
        return r.labels, r.n_clusters

    def ncut(s):
        r = penalized_ncut(A * s, -0.6)
        return r.labels, r.n_iter

    def km(s):
        r = kmeans(0, sc(X, s), 4, init=sc(C0, s))
        return r.labels, r.n_iter

    return [("dp_means", dpm), ("hard_hdp", hdp), ("kernel_dp_means", kdpm),
            ("spectral_dp_means", sdpm), ("penalized_ncut", ncut), ("kmeans", km)]


def _check(dtype, scales):
    for name, run in _cases(dtype):
        labels0, it0 = run(1.0)
        assert len(np.unique(labels0)) > 1, name  # a test that can fail
        for s in scales:
            labels, it = run(s)
            np.testing.assert_array_equal(labels, labels0, err_msg=f"{name} at s={s:g}")
            assert it == it0, f"{name} at s={s:g}: {it} iterations, unscaled {it0}"


def test_scale_invariance_float64(x64):
    _check(np.float64, SCALES64)


def test_scale_invariance_float32():
    _check(np.float32, SCALES32)


def test_kmeans_matches_sklearn(x64):
    X = _data()
    C0 = X[[0, 1, 2, 3]]
    ref = KMeans(4, init=C0, n_init=1, algorithm="lloyd", tol=0.0).fit(X)
    for s in (1e-8, 1.0, 1e8):
        ours = kmeans(0, X * s, 4, init=C0 * s, tol=0.0)
        np.testing.assert_array_equal(ours.labels, ref.labels_)


def test_dp_means_small_scale_float32_same_partition():
    # With an absolute floor in the stopping rule (1e-12 * max(1, |J|)) the run at
    # 1e-8 stopped after one iteration with a different partition.
    X = _data().astype(np.float32)
    lam = _lam(_data())
    ref = dp_means(X, lam)
    for s in (1e-8, 1e-7):
        res = dp_means((X * s).astype(np.float32), lam * s * s)
        np.testing.assert_array_equal(res.labels, ref.labels)
        assert res.n_iter == ref.n_iter and res.converged


@pytest.mark.parametrize("s", [1e-20, 1e19])
def test_dp_means_float32_extremes(s):
    X = _data().astype(np.float32)
    lam = _lam(_data())
    ref = dp_means(X, lam)
    res = dp_means((X * s).astype(np.float32), lam * s * s)
    np.testing.assert_array_equal(res.labels, ref.labels)
    assert res.n_iter == ref.n_iter
    assert np.all(np.isfinite(res.centers)) and np.isfinite(res.objective)
    np.testing.assert_allclose(res.centers / s, ref.centers, rtol=1e-5, atol=1e-5)
    assert res.objective == pytest.approx(ref.objective * s * s, rel=1e-5)


@pytest.mark.parametrize("s", [1e-20, 1e19])
def test_hard_hdp_float32_extremes(s):
    X = _data().astype(np.float32)
    lam = _lam(_data())
    ref = hard_hdp(_groups(X), 0.25 * lam, 0.5 * lam)
    res = hard_hdp(_groups((X * s).astype(np.float32)), 0.25 * lam * s * s, 0.5 * lam * s * s)
    np.testing.assert_array_equal(res.flat_labels, ref.flat_labels)
    assert np.isfinite(res.objective)


@pytest.mark.parametrize("s", [1e-20, 1e19])
def test_kmeans_float32_extremes(s):
    X = _data().astype(np.float32)
    C0 = X[[0, 1, 2, 3]]
    ref = kmeans(0, X, 4, init=C0)
    res = kmeans(0, (X * s).astype(np.float32), 4, init=(C0 * s).astype(np.float32))
    np.testing.assert_array_equal(res.labels, ref.labels)
    assert np.isfinite(res.objective) and np.all(np.isfinite(res.centers))


def test_penalty_outside_float32_range_raises():
    X = _data().astype(np.float32)
    with pytest.raises(ValueError, match="lam="):
        dp_means(X, 1e39)
    with pytest.raises(ValueError, match="lam="):
        dp_means(X * np.float32(1e-15), 1e-30 * 1e-30 * 1e-40)
    with pytest.raises(ValueError, match="lam_global="):
        hard_hdp(_groups(X), 1.0, 1e39)
    with pytest.raises(ValueError, match="lam_local="):
        hard_hdp(_groups(X), 1e-60, 1.0)


def test_data_beyond_float32_range_raises():
    # float64 data are computed in float32 unless jax_enable_x64 is on.
    X = _data() * 1e300
    with pytest.raises(ValueError, match="X has values"):
        dp_means(X, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s", [1e-20, 1e15])
def test_farthest_first_lambda_positive_finite(dtype, s, x64):
    X = _data()
    lam = farthest_first_lambda(X, 3)
    got = farthest_first_lambda((X * s).astype(dtype), 3)
    assert 0 < got < np.inf
    assert got == pytest.approx(lam * s * s, rel=1e-5)


def test_dpmeans_estimator_tiny_data_same_partition():
    X = _data().astype(np.float32)
    ref = DPMeans(n_clusters=3, random_state=0).fit(X)
    est = DPMeans(n_clusters=3, random_state=0).fit((X * 1e-20).astype(np.float32))
    np.testing.assert_array_equal(est.labels_, ref.labels_)
    assert 0 < est.lam_ < np.finfo(np.float32).tiny  # outside float32's normal range


# --------------------------------------------------------------------------- #
# Discriminative clustering (Kaski et al. 2005) and its EM baselines: invariant to
# scaling X and the widths by s (squared-distance weights by s**-2).
# --------------------------------------------------------------------------- #

DC_SCALES64 = [1e-30, 1e-8, 1e8, 1e30]
DC_SCALES32 = [1e-4, 1e4, 1e-19, 1e19]


def _dc_data(dtype):
    from bayesclust.datasets import dc_toy

    X, c = dc_toy(0, 120)
    return np.asarray(X, np.float64), np.asarray(c), dtype


@pytest.mark.parametrize("dtype,scales", [(np.float64, DC_SCALES64), (np.float32, DC_SCALES32)])
@pytest.mark.parametrize("method", ["sdc", "dc_anneal"])
def test_dc_stochastic_same_partition_at_any_scale(method, dtype, scales):
    from bayesclust.inference.discriminative.dc_anneal import dc_anneal
    from bayesclust.inference.discriminative.sdc import sdc

    f = {"sdc": sdc, "dc_anneal": dc_anneal}[method]
    X, c, dt = _dc_data(dtype)
    with jax.enable_x64(dtype == np.float64):
        ref = f(0, X.astype(dt), c, 3, 0.3, n_iter=600)
        assert len(np.unique(ref.labels)) > 1
        for s in scales:
            res = f(0, (X * s).astype(dt), c, 3, 0.3 * s, n_iter=600)
            np.testing.assert_array_equal(res.labels, ref.labels, err_msg=f"s={s:g}")
            assert np.isfinite(res.objective)
            assert res.objective == pytest.approx(ref.objective, rel=1e-4, abs=1e-3)
            np.testing.assert_allclose(res.prototypes / s, ref.prototypes, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("s", DC_SCALES64)
def test_dc_map_same_fit_at_any_scale(s, x64):
    # CG on a non-concave objective for a fixed 29 iterations amplifies rounding, so
    # the reference is the same number of iterations, the same (unsmoothed) eq. 9 to
    # within a few units of it, and nearly the same cells.  With an absolute
    # gradient test the run at 1e8 reported convergence after 0 iterations.
    from bayesclust.inference.discriminative.dc_map import dc_map

    X, c, _ = _dc_data(np.float64)
    ref = dc_map(0, X, c, 3, 0.3)
    res = dc_map(0, X * s, c, 3, 0.3 * s)
    assert ref.n_iter > 0 and res.n_iter == ref.n_iter
    assert np.isfinite(res.objective)
    assert res.objective == pytest.approx(ref.objective, abs=3.0)
    assert np.mean(res.labels == ref.labels) >= 0.9


@pytest.mark.parametrize("dtype,scales", [(np.float64, DC_SCALES64), (np.float32, DC_SCALES32)])
def test_em_baselines_same_fit_at_any_scale(dtype, scales):
    from bayesclust.inference.discriminative.dc_baselines import mda2_em, mog_em

    X, c, dt = _dc_data(dtype)
    tol = 1e-9 if dtype == np.float64 else 1e-4
    with jax.enable_x64(dtype == np.float64):
        for f, extra in ((mog_em, ()), (mda2_em, (c,))):
            ref = f(0, X.astype(dt), *extra, 3, 0.3)
            for s in scales:
                res = f(0, (X * s).astype(dt), *extra, 3, 0.3 * s)
                assert np.all(np.isfinite(res.weights)), f"{f.__name__} at s={s:g}"
                np.testing.assert_allclose(res.weights, ref.weights, atol=tol)
                np.testing.assert_allclose(res.centers / s, ref.centers, rtol=1e-3, atol=1e-3)
                # the log-likelihood of s X is that of X minus n d log s (the Jacobian)
                assert res.objective == pytest.approx(ref.objective - X.size * np.log(s),
                                                      rel=1e-5, abs=1e-2)


def test_dc_width_outside_float32_range_raises():
    from bayesclust.inference.discriminative.sdc import sdc

    X, c, _ = _dc_data(np.float32)
    with pytest.raises(ValueError, match="smooth_std="):
        sdc(0, X.astype(np.float32), c, 3, 1e-30, n_iter=10)


@pytest.mark.parametrize("s", [1e-19, 1e19])
def test_discriminative_clustering_estimator_float32_extremes(s):
    from bayesclust import DiscriminativeClustering

    X, c, _ = _dc_data(np.float32)
    X = X.astype(np.float32)
    ref = DiscriminativeClustering(3, 0.3, random_state=0).fit(X, c)
    Xs = (X * s).astype(np.float32)
    est = DiscriminativeClustering(3, 0.3 * s, random_state=0).fit(Xs, c)
    assert est.n_iter_ == ref.n_iter_ > 0
    assert np.mean(est.labels_ == ref.labels_) >= 0.9
    # predict's squared distances overflowed (1e19) or underflowed (1e-19) in float32
    np.testing.assert_array_equal(est.predict(Xs), est.labels_)
