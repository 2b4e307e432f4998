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

import warnings

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


# --------------------------------------------------------------------------- #
# Every other algorithm that takes X: ensembles, temporal states, SMIC, the
# increments hierarchies, MAP-DID, SPOM.  Each is invariant to scaling X by s when
# its lengths scale by s (sigmas) and its inverse squared lengths by s**-2
# (spectral_gamma); the reference is the unscaled run (a metamorphic test).
# --------------------------------------------------------------------------- #

MORE_SCALES64 = [1e-8, 3.7, 1e8]
MORE_SCALES32 = [1e-4, 1e4]


def _small():
    X, y = datasets.three_gaussians(rng_key=0, n_per_cluster=20)
    return np.asarray(X, np.float64), np.asarray(y)


def _blobs():
    # two blobs 12 apart: the increments hierarchies split them (three_gaussians' 60
    # points are one cluster for SL-DID)
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 12])


def _more_cases(dtype):
    """``(name, X, run(X, s) -> labels)``: ``run`` gets ``X`` already scaled by ``s``.

    In float32 only the algorithms computing in JAX: the host ones (NumPy / SciPy)
    compute in float64 whatever the dtype of ``X``.
    """
    from bayesclust import (
        clustering_ensemble,
        kmeans_ensemble,
        map_did_fit,
        map_did_predict,
        sl_aglo,
        sl_did,
        spectral_grid_ensemble,
        temporal_states,
    )
    from bayesclust.inference.information.smic import smic
    from bayesclust.structured.spom import spom, spom_predict

    _, y = _small()

    def spom_labels(X, s):
        # the linear scores w.x are unchanged when w scales by 1/s: lam by s**2, steps by s**-2
        blocks = [X[:, :1], X[:, 1:]]
        res = spom(0, blocks, y, 0.1 * s * s, n_epochs=3, eta0=1.0 / (s * s))
        return spom_predict(res.theta, blocks)

    X, B = _small()[0], _blobs()
    jax_only = ("kmeans_ensemble_jax", "spectral_grid_ensemble", "temporal_states", "spom")
    cases = [
        ("kmeans_ensemble", X, lambda X, s: kmeans_ensemble(0, X, 6).labels),
        ("kmeans_ensemble_jax", X, lambda X, s: kmeans_ensemble(0, X, 6, backend="jax").labels),
        ("clustering_ensemble", X, lambda X, s: clustering_ensemble(
            0, X, ("kmeans", "spectral", "average"), [2, 3], 2, spectral_gamma=0.5 / (s * s)).labels),
        ("spectral_grid_ensemble", X,
         lambda X, s: spectral_grid_ensemble(0, X, [2, 3], [0.5 * s, 1.5 * s]).labels),
        ("temporal_states", X, lambda X, s: temporal_states(
            0, X, window=2, n_clusters=[2, 3], sigmas=[0.5 * s, 1.5 * s]).labels),
        ("smic", X, lambda X, s: smic(X, 5, 3).labels),
        ("sl_did", B, lambda X, s: sl_did(X).labels),
        ("sl_aglo", B, lambda X, s: sl_aglo(X, 8.0).labels),
        ("map_did", X, lambda X, s: map_did_predict(map_did_fit(0, X, y, k_max=3), X)),
        ("spom", X, spom_labels),
    ]
    return [c for c in cases if dtype == np.float64 or c[0] in jax_only]


@pytest.mark.parametrize("dtype,scales", [(np.float64, MORE_SCALES64), (np.float32, MORE_SCALES32)])
def test_more_algorithms_same_partition_at_any_scale(dtype, scales):
    with jax.enable_x64(dtype == np.float64):
        for name, X, run in _more_cases(dtype):
            ref = np.asarray(run(X.astype(dtype), 1.0))
            assert len(np.unique(ref)) > 1, name  # a test that can fail
            for s in scales:
                got = np.asarray(run((X * s).astype(dtype), s))
                np.testing.assert_array_equal(got, ref, err_msg=f"{name} at s={s:g}")


@pytest.mark.parametrize("dtype,s", [(np.float64, 1e300), (np.float64, 1e-300),
                                     (np.float32, 1e19), (np.float32, 1e-19)])
def test_ensembles_smic_sl_did_at_the_edges_of_the_range(dtype, s):
    # At x1e300 the k-means ensembles and SMIC raised IndexError (squared distances
    # overflowed to inf in the nearest-centre and k-NN searches), SL-DID a SciPy
    # overflow error, and float32 data at 1e19 gave other spectral / jax k-means
    # partitions: every one now works in the unit frame.
    from bayesclust import clustering_ensemble, kmeans_ensemble, sl_did, spectral_grid_ensemble
    from bayesclust.inference.information.smic import smic

    X, _ = _small()
    cases = [
        ("kmeans_ensemble", lambda X, s: kmeans_ensemble(0, X, 4).labels),
        ("kmeans_ensemble_jax", lambda X, s: kmeans_ensemble(0, X, 4, backend="jax").labels),
        ("clustering_ensemble", lambda X, s: clustering_ensemble(0, X, ("kmeans", "single"), [3], 2).labels),
        ("spectral_grid_ensemble",
         lambda X, s: spectral_grid_ensemble(0, X, [3], [0.5 * s, 1.5 * s], ("njw",)).labels),
        ("smic", lambda X, s: smic(X, 5, 3).labels),
        ("sl_did", lambda X, s: sl_did(X).labels),
    ]
    with jax.enable_x64(dtype == np.float64):
        for name, run in cases:
            X = _blobs() if name == "sl_did" else _small()[0]
            ref = np.asarray(run(X.astype(dtype), 1.0))
            assert len(np.unique(ref)) > 1, name
            got = np.asarray(run((X * s).astype(dtype), s))
            np.testing.assert_array_equal(got, ref, err_msg=f"{name} at s={s:g}")


def test_smic_predict_and_sl_did_distances_in_the_data_frame(x64):
    # The unit frame is internal: local scales, merge distances and predictions are
    # those of X (references: the unscaled run, scaled).
    from bayesclust import sl_did
    from bayesclust.inference.information.smic import smic, smic_predict

    X, B = _small()[0], _blobs()
    s = 1e300
    ref, res = smic(X, 5, 3), smic(X * s, 5, 3)
    np.testing.assert_allclose(res.sigma, ref.sigma * s, rtol=1e-12)
    X_new = X[:7] + 0.05
    np.testing.assert_array_equal(smic_predict(res, X * s, X_new * s), smic_predict(ref, X, X_new))
    a, b = sl_did(B), sl_did(B * s)
    np.testing.assert_allclose(b.merges[:, 2], a.merges[:, 2] * s, rtol=1e-12)
    assert b.lam_floor == pytest.approx(a.lam_floor * s, rel=1e-12)


@pytest.mark.xfail(strict=True, reason=(
    "G-DID (Fred & Jain 2008) is a log-likelihood of the increments: scaling X by s adds "
    "m log s with m the number of increments modelled, which differs between cuts (clusters "
    "of fewer than 3 points model none), so the chosen number of clusters depends on the "
    "units of X (docs/deviations.md#gdid-index)"))
def test_gdid_cut_same_number_of_clusters_at_any_scale(x64):
    from scipy.cluster.hierarchy import linkage

    from bayesclust import gdid_cut

    X, _ = _small()
    Z = linkage(X, "single")
    ref = gdid_cut(X, Z, (2, 5))
    for s in (1e-8, 1e8):
        Zs = Z.copy()
        Zs[:, 2] *= s
        assert gdid_cut(X * s, Zs, (2, 5)).n_clusters == ref.n_clusters, f"s={s:g}"


# --------------------------------------------------------------------------- #
# The samplers: with the variances (sigma2, rho2, xi, lam) scaled by s**2 the draws
# of a key are the same partitions at any scale (the sampled model is the same); the
# estimators' defaults (data-scaled variances and priors) scale by themselves.
# --------------------------------------------------------------------------- #

_SAMPLE = dict(num_warmup=3, num_samples=3, num_chains=2, progress_bar=False)


def _sampler_cases(dtype):
    """Every sampler in float64; in float32 the samplers of the Gaussian mixtures and their
    estimators (the estimators with their defaults, whose variances and priors scale with X)."""
    from bayesclust import (
        DPGaussianMixture,
        HDPGaussianMixture,
        gibbs_dp_gaussian,
        gibbs_dp_gmm,
        gibbs_dp_mda2,
        gibbs_hdp_gmm,
    )

    _, y = _small()
    groups = np.arange(len(y)) // 20

    def v(s):
        return dict(sigma2=0.5 * s * s, rho2=100.0 * s * s)

    def est(cls, **kw):
        return lambda X, s: cls(random_state=0, **kw, **_SAMPLE).fit(X, **(
            {"group_ids": groups} if cls is HDPGaussianMixture else {})).posterior_.labels

    cases = [
        ("gibbs_dp_gmm", lambda X, s: gibbs_dp_gmm(0, X, **v(s), **_SAMPLE).labels),
        # default_gaussian_prior is data-scaled (its scale matrix from X's covariance)
        ("gibbs_dp_gaussian", lambda X, s: gibbs_dp_gaussian(0, X, **_SAMPLE).labels),
        ("DPGaussianMixture", est(DPGaussianMixture)),
        ("DPGaussianMixture_full", est(DPGaussianMixture, covariance_type="full")),
        ("HDPGaussianMixture", est(HDPGaussianMixture)),
        ("gibbs_dp_gmm_uncollapsed",
         lambda X, s: gibbs_dp_gmm(0, X, collapsed=False, **v(s), **_SAMPLE).labels),
        ("gibbs_hdp_gmm",
         lambda X, s: gibbs_hdp_gmm(0, [X[:20], X[20:40], X[40:]], **v(s), **_SAMPLE).labels),
        ("gibbs_dp_mda2", lambda X, s: gibbs_dp_mda2(
            0, X, y, lam=4.0 * s * s, xi=1.0 * s * s, **v(s), **_SAMPLE).labels),
    ]
    return cases if dtype == np.float64 else cases[:5]


@pytest.mark.parametrize("dtype,scales", [(np.float64, [1e-8, 1e8]), (np.float32, [1e-4, 1e4])])
def test_samplers_same_draws_at_any_scale(dtype, scales):
    X, _ = _small()
    with jax.enable_x64(dtype == np.float64):
        for name, run in _sampler_cases(dtype):
            ref = np.asarray(run(X.astype(dtype), 1.0))
            assert len(np.unique(ref)) > 1, name
            for s in scales:
                got = np.asarray(run((X * s).astype(dtype), s))
                np.testing.assert_array_equal(got, ref, err_msg=f"{name} at s={s:g}")


def test_samplers_name_x_beyond_the_float32_range():
    # float64 data are sampled in float32 unless jax_enable_x64 is on: past the range of
    # float32's squares the estimators refuse X by name (the sampler names its own argument)
    from bayesclust import DPGaussianMixture, HDPGaussianMixture

    X = _small()[0] * 1e30
    one = dict(num_warmup=1, num_samples=1, num_chains=1)
    for est in (DPGaussianMixture(**one), HDPGaussianMixture(**one)):
        with pytest.raises(ValueError, match="^X is too large for float32"):
            est.fit(X)


@pytest.mark.parametrize("program", [
    "dp_gmm",
    # the same frame (hdp_gmm's group ids follow X positionally); its own NUTS compiles
    pytest.param("hdp_gmm", marks=pytest.mark.long),
])
def test_nuts_programs_same_draws_at_any_power_of_two(program):
    # run_nuts runs the registered mixture programs on X * 2**-e (its largest |x| in
    # [0.5, 1)) with sigma2 and rho2 times 4**-e, and scales the drawn means back: X times a
    # power of two (the variances times its square) gives the same trajectories, so the same
    # label draws and the means, sigma2 and log likelihood moved exactly.  float32 data times
    # 2**60 have squares past the float32 range, which the programs refuse when called on
    # their own.  (At other scales the rounding of X differs, and NUTS' trajectories with it.)
    from bayesclust.inference.mixtures.mcmc import run_nuts
    from bayesclust.models.dp_gmm import TruncationWarning, dp_gmm
    from bayesclust.models.hdp_gmm import hdp_gmm

    X = _small()[0].astype(np.float32)
    X -= X.mean(0)  # the programs' prior on the means is centred at 0
    gid = np.arange(len(X)) // 20
    few = dict(num_warmup=4, num_samples=3, progress_bar=False, truncation=4,
               nuts_kwargs=dict(max_tree_depth=4))

    def dp(X, s):
        return run_nuts(0, dp_gmm, X, sigma2=0.5 * s * s, rho2=10.0 * s * s, **few)

    def hdp(X, s):
        return run_nuts(0, hdp_gmm, X, gid, 3, sigma2=0.5 * s * s, rho2=10.0 * s * s, **few)

    run = dp if program == "dp_gmm" else hdp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        ref = run(X, 1.0)
        assert len(np.unique(ref.labels)) > 1
        for s in (2.0**-60, 2.0**60):
            got = run(X * np.float32(s), s)
            msg = f"{program} at s=2**{int(np.log2(s))}"
            np.testing.assert_array_equal(got.labels, ref.labels, err_msg=msg)
            np.testing.assert_array_equal(got.params["means"], ref.params["means"] * s,
                                          err_msg=msg)
            np.testing.assert_array_equal(got.params["sigma2"], ref.params["sigma2"] * s * s,
                                          err_msg=msg)
            np.testing.assert_allclose(got.log_likelihood,
                                       ref.log_likelihood - X.size * np.log(s), rtol=1e-5,
                                       err_msg=msg)


def test_gibbs_dp_multinomial_same_draws_for_scaled_rows(x64):
    # Real-valued rows (a co-association) scaled by s with lam and tau by s: the
    # tempered likelihood r . log(psi) / tau and alpha = exp(-lam / tau) are unchanged.
    from bayesclust import gibbs_dp_multinomial, kmeans_ensemble
    from bayesclust.inference.consensus.coassociation import coassociation

    X, _ = _small()
    C = coassociation(kmeans_ensemble(0, X, 10).labels).toarray()

    def run(s):
        return gibbs_dp_multinomial(0, C * s, lam=0.5 * s, tau=0.2 * s, num_warmup=4,
                                    num_samples=4, num_chains=2).labels

    ref = np.asarray(run(1.0))
    assert len(np.unique(ref[:, -1])) > 1
    for s in (1e-8, 1e8):
        np.testing.assert_array_equal(np.asarray(run(s)), ref, err_msg=f"s={s:g}")


def test_limit_path_same_path_at_any_scale(x64):
    # rho2 (default 100, in the units of X squared) scales with the data too
    from bayesclust import limit_path

    X, _ = _small()
    lam = _lam(X)

    def run(s):
        r = limit_path(0, X * s, model="dp", lam=lam * s * s, rho2=100.0 * s * s,
                       num_warmup=3, num_samples=3,
                       num_chains=4, temperatures=[lam * s * s * t for t in (1.0, 0.1, 0.01)],
                       extend=False)
        return r.point, r.p_k_hard, r.nmi_point

    ref = run(1.0)
    for s in (1e-8, 1e8):
        got = run(s)
        np.testing.assert_array_equal(got[0], ref[0], err_msg=f"s={s:g}")
        np.testing.assert_allclose(got[1], ref[1], err_msg=f"s={s:g}")
        np.testing.assert_allclose(got[2], ref[2], err_msg=f"s={s:g}")
