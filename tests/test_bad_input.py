"""Bad input at every public entry point: a ValueError / TypeError naming the argument.

A hypothesis-driven sweep feeds broken data (NaN or infinity somewhere, the wrong number of
dimensions, no rows, words, ``None``) to every public function and estimator that takes a data
matrix; then the cases that once slipped through, one by one.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesclust as bc
from bayesclust import datasets
from bayesclust.inference.discriminative.dc_map import dc_map

X3, Y3 = datasets.three_gaussians(rng_key=0)
SMALL = X3[::10]  # 30 x 2


def _gram(X):
    return X @ X.T


# name -> (call taking the data matrix, the argument name its errors must mention)
ENTRY_POINTS = {
    "dp_means": (lambda X: bc.dp_means(X, 1.0), "X"),
    "farthest_first_lambda": (lambda X: bc.farthest_first_lambda(X, 2), "X"),
    "kmeans": (lambda X: bc.kmeans(0, X, 2), "X"),
    "hard_hdp": (lambda X: bc.hard_hdp(X, 1.0, 2.0, group_ids=np.zeros(len(X), int)), "groups"),
    "kernel_dp_means": (lambda X: bc.kernel_dp_means(X, 1.0), "K"),
    "spectral_dp_means": (lambda X: bc.spectral_dp_means(X, 1.0), "K"),
    "penalized_ncut": (lambda X: bc.penalized_ncut(X, -0.5), "A"),
    "kmeans_ensemble": (lambda X: bc.kmeans_ensemble(0, X, 4), "X"),
    "clustering_ensemble": (lambda X: bc.clustering_ensemble(0, X, "kmeans", 2, 2), "X"),
    "spectral_grid_ensemble": (lambda X: bc.spectral_grid_ensemble(0, X, [2], [1.0]), "X"),
    "temporal_states": (lambda X: bc.temporal_states(0, X, window=3, n_clusters=[2], sigmas=[1.0]),
                        "X_time_ordered"),
    "denoise_sequence": (lambda X: bc.denoise_sequence(0, X, window=3, population=2, generations=0,
                                                       n_clusters=[2], sigmas=[1.0]), "X_time_ordered"),
    "smic": (lambda X: bc.smic(X, 3, 2), "X"),
    "cecib": (lambda X: bc.cecib(0, X, 2, n_init=1), "X"),
    "gmd": (lambda X: bc.gmd(0, X, 1, 3), "X"),
    "cecib_cost": (lambda X: bc.cecib_cost(X, np.zeros(len(X), int)), "X"),
    "dc_map": (lambda X: dc_map(0, X, np.arange(len(X)) % 2, 2, 1.0), "X"),
    "gibbs_dp_gmm": (lambda X: bc.gibbs_dp_gmm(0, X, num_warmup=1, num_samples=1,
                                               progress_bar=False), "X"),
    "gibbs_dp_gaussian": (lambda X: bc.gibbs_dp_gaussian(0, X, num_warmup=1, num_samples=1,
                                                         num_chains=1, progress_bar=False), "X"),
    "gaussian_predictive_logpdf": (lambda X: bc.gaussian_predictive_logpdf(
        np.zeros((1, np.shape(SMALL)[1])), X, np.zeros(np.shape(SMALL)[0], int)), "X"),
    "gibbs_hdp_gmm": (lambda X: bc.gibbs_hdp_gmm(0, X, group_ids=np.zeros(len(X), int),
                                                 num_warmup=1, num_samples=1,
                                                 progress_bar=False), "groups"),
    "DPCollapsedGibbs": (lambda X: bc.DPCollapsedGibbs(X), "X"),
    "DPCollapsedGibbs_full": (lambda X: bc.DPCollapsedGibbs(X, covariance_type="full"), "X"),
    "HDPGibbs": (lambda X: bc.HDPGibbs(X, group_ids=np.zeros(len(X), int)), "groups"),
    "DPMeans": (lambda X: bc.DPMeans(n_clusters=2).fit(X), "X"),
    "DPGaussianMixture": (lambda X: bc.DPGaussianMixture(num_warmup=1, num_samples=1).fit(X), "X"),
    "HardHDP": (lambda X: bc.HardHDP().fit(X), "X"),
    "SpectralDPMeans": (lambda X: bc.SpectralDPMeans(1.0).fit(X), "X"),
    "PenalizedNormalizedCut": (lambda X: bc.PenalizedNormalizedCut().fit(X), "X"),
    "EvidenceAccumulation": (lambda X: bc.EvidenceAccumulation(n_partitions=4).fit(X), "X"),
    "ConstrainedEAC": (lambda X: bc.ConstrainedEAC(n_partitions=4).fit(X, must_link=[[0, 1]]), "X"),
    "AspectConsensus": (lambda X: bc.AspectConsensus(n_partitions=4).fit(X), "X"),
    "EmbeddedConsensus": (lambda X: bc.EmbeddedConsensus(2, n_partitions=4).fit(X), "X"),
    "PairwiseConsensus": (lambda X: bc.PairwiseConsensus(2, n_partitions=4, n_init=1,
                                                         max_iter=20).fit(X), "X"),
    "ACCCS": (lambda X: bc.ACCCS(2, n_partitions=4, generations=2).fit(X), "X"),
    "HypergraphConsensus": (lambda X: bc.HypergraphConsensus(2, n_partitions=4).fit(X), "X"),
    "KLMeansConsensus": (lambda X: bc.KLMeansConsensus(2, n_partitions=4).fit(X), "X"),
    "kl_means": (lambda X: bc.kl_means(X, 1.0), "counts"),
    "kl_means_lambda": (lambda X: bc.kl_means_lambda(X, 2), "counts"),
    "gibbs_dp_multinomial": (lambda X: bc.gibbs_dp_multinomial(0, X, lam=1.0, tau=1.0, num_warmup=1,
                                                               num_samples=1, num_chains=1), "counts"),
    "HypergraphConsensus_mcla": (lambda X: bc.HypergraphConsensus(2, method="mcla", n_partitions=4).fit(X), "X"),
    "SMIC": (lambda X: bc.SMIC(n_clusters=2, t=3).fit(X), "X"),
    "CECIB": (lambda X: bc.CECIB(n_clusters=2, n_init=1).fit(X), "X"),
    "increments": (lambda X: bc.increments(X), "X"),
    "sl_did": (lambda X: bc.sl_did(X), "X"),
    "sl_aglo": (lambda X: bc.sl_aglo(X, 3.0), "X"),
    "gdid_index": (lambda X: bc.gdid_index(X, np.arange(len(X)) % 2), "X"),
    "SLDID": (lambda X: bc.SLDID().fit(X), "X"),
    "SLAGLO": (lambda X: bc.SLAGLO(taus=[2.0, 5.0]).fit(X), "X"),
    "gmdid": (lambda X: bc.gmdid(X, np.arange(len(X)) % 2), "X"),
    "GMDID": (lambda X: bc.GMDID(k_max=3, random_state=0).fit(X), "X"),
    "MAPDIDClassifier": (lambda X: bc.MAPDIDClassifier(k_max=1).fit(X, np.arange(len(X)) % 2), "X"),
    "MKLClassifier": (lambda X: bc.MKLClassifier(kernels=["linear", "rbf"], n_epochs=1, n_components=10)
                      .fit(X, np.arange(len(X)) % 2), "X"),
    "spom": (lambda X: bc.spom(0, [X], np.arange(len(X)) % 2, 0.1, n_epochs=1), "feature_blocks"),
    "DiscriminativeClustering": (
        lambda X: bc.DiscriminativeClustering(n_clusters=2).fit(X, np.arange(len(X)) % 2), "X"),
    "HardDC": (lambda X: bc.HardDC(lam=1.0).fit(X, np.arange(len(X)) % 2), "X"),
    "hard_dc": (lambda X: bc.hard_dc(X, np.arange(len(X)) % 2, 1.0, 1.0), "X"),
    "gibbs_dp_mda2": (lambda X: bc.gibbs_dp_mda2(0, X, np.arange(len(X)) % 2, lam=1.0, xi=1.0,
                                                 sigma2=0.1, num_warmup=1, num_samples=2,
                                                 num_chains=1, progress_bar=False), "X"),
}
SQUARE = {"kernel_dp_means", "spectral_dp_means", "penalized_ncut", "kl_means", "kl_means_lambda",
          "gibbs_dp_multinomial"}


@st.composite
def broken_matrices(draw, square: bool):
    """A data matrix with one thing wrong, and a word for what is wrong."""
    n = draw(st.integers(6, 12))
    d = n if square else draw(st.integers(1, 3))
    X = draw(st.integers(0, 2**31 - 1).map(lambda s: np.random.default_rng(s).normal(size=(n, d))))
    if square:
        X = _gram(X) + n * np.eye(n)
        X = np.abs(X)  # a valid non-negative affinity before it is broken
    kind = draw(st.sampled_from(["nan", "inf", "1-D", "3-D", "empty", "words", "none"]))
    if kind in ("nan", "inf"):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))
        X[i, j] = np.nan if kind == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        if square:
            X[j, i] = X[i, j]
    elif kind == "1-D":
        X = X[:, 0]
    elif kind == "3-D":
        X = X[None]
    elif kind == "empty":
        X = X[:0]
    elif kind == "words":
        X = np.full(X.shape, "a", dtype=object)
    else:
        X = None
    return kind, X


# Entry points whose call on good data compiles for seconds: that check (the call itself is
# right, only the data will be broken) runs under `long`, in
# test_entry_point_calls_run_on_good_data; the broken data fail in validation, before any
# compilation.
SLOW_ON_GOOD_DATA = {
    "ACCCS", "AspectConsensus", "CECIB", "DPGaussianMixture", "DPMeans", "GMDID", "HardHDP",
    "MAPDIDClassifier", "MKLClassifier", "PairwiseConsensus", "denoise_sequence", "dp_means",
    "gibbs_dp_gaussian", "gibbs_hdp_gmm", "spectral_grid_ensemble", "KLMeansConsensus",
    "gibbs_dp_multinomial",
}


def _call_on_good_data(name):
    call, _ = ENTRY_POINTS[name]
    good = np.abs(_gram(SMALL)) + 30 * np.eye(30) if name in SQUARE else SMALL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(good)


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(SLOW_ON_GOOD_DATA))
def test_entry_point_calls_run_on_good_data(name):
    _call_on_good_data(name)


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_broken_data_is_a_clear_error_naming_the_argument(name):
    call, arg = ENTRY_POINTS[name]
    if name not in SLOW_ON_GOOD_DATA:
        _call_on_good_data(name)  # the call itself is right: only the data will be broken

    @settings(max_examples=14, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(broken_matrices(name in SQUARE))
    def check(case):
        kind, X = case
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, TypeError)) as info:
                call(X)
        message = str(info.value)
        # scikit-learn names the data "X" or "Input"; ours name the argument
        assert arg in message or "Input" in message or "array" in message.lower(), (kind, message)
        assert "nan" not in message.lower() or kind == "nan" or "infinity" in message.lower() \
            or kind == "inf", (kind, message)

    check()


# --------------------------------------------------------------------------- one by one


def test_compare_needs_a_posterior_and_a_hard_result():
    hard = bc.dp_means(X3, 4.0)
    post = bc.gibbs_dp_gmm(0, X3, num_warmup=2, num_samples=4, progress_bar=False)
    with pytest.raises(TypeError, match="sampled must be a Posterior or a fitted sampled estimator"):
        bc.compare(None, hard)
    with pytest.raises(TypeError, match="hard must be a hard result"):
        bc.compare(post, np.asarray(hard.labels))
    with pytest.raises(ValueError, match="X has 299 rows but sampled and hard label 300"):
        bc.compare(post, hard, X=X3[:-1])
    with pytest.raises(ValueError, match="ensemble is not data of the 'dp' family"):
        bc.compare(post, hard, X=X3, ensemble=[np.zeros(300, int)])


def test_class_and_category_ids_near_1e12_are_relabelled_not_allocated():
    X, y = X3[:60], Y3[:60]
    big = y.astype(np.int64) * 10**12 + 7  # same partition of the rows, huge ids
    a = dc_map(0, X, y, 3, 1.0)
    b = dc_map(0, X, big, 3, 1.0)
    np.testing.assert_allclose(np.asarray(a.prototypes), np.asarray(b.prototypes))
    yp = np.where(np.arange(60) % 3 == 0, y, -1)
    bigp = np.where(yp >= 0, yp * 10**12, -1)
    ra, rb = bc.cecib(0, X, 3, yp, n_init=2), bc.cecib(0, X, 3, bigp, n_init=2)
    np.testing.assert_array_equal(ra.labels, rb.labels)
    assert bc.cecib_cost(X, ra.labels, bigp) == pytest.approx(bc.cecib_cost(X, ra.labels, yp))


def test_dc_map_and_the_estimator_agree_on_classes_with_gaps():
    X, y = X3[:60], Y3[:60]
    gapped = np.array([0, 5, 9])[y]  # classes 0, 5, 9: three classes, not ten
    est = bc.DiscriminativeClustering(n_clusters=3, smooth_std=1.0, random_state=0).fit(X, gapped)
    fn = dc_map(0, X, gapped, 3, 1.0)
    assert est.classes_.tolist() == [0, 5, 9]
    np.testing.assert_allclose(np.asarray(dc_map(0, X, y, 3, 1.0).prototypes), fn.prototypes)


def test_samplers_name_x_when_its_squares_overflow_float32():
    for scale in (1e18, 1e30):
        with pytest.raises(ValueError, match="X is too large for float32"):
            bc.gibbs_dp_gmm(0, X3 * scale, num_warmup=1, num_samples=1, progress_bar=False)
        with pytest.raises(ValueError, match="too large for float32"):
            bc.gibbs_hdp_gmm(0, X3 * scale, group_ids=np.zeros(300, int), num_warmup=1,
                             num_samples=1, progress_bar=False)


def test_states_refuse_ids_past_their_tables():
    """Ids that index a table (classes, data sets, objects) were clipped or dropped silently
    by the JAX states; each is now a named error, raised before anything compiles."""
    from bayesclust.inference.consensus.ppc import init_ppc_state
    from bayesclust.inference.discriminative.dc_baselines import init_mda2_em_state
    from bayesclust.inference.hard.hard_dc import init_hard_dc_state
    from bayesclust.inference.hard.hard_hdp import init_hard_hdp_state

    X = SMALL[:6]
    with pytest.raises(ValueError, match=r"^classes must hold ids in 0..1 \(-1 for a padding"):
        init_hard_dc_state(X, np.array([0, 1, 2, 0, 1, 0]), 1.0, 1.0, n_classes=2)
    with pytest.raises(ValueError, match="^group_ids must hold ids in 0..1"):
        init_hard_hdp_state(X, np.array([0, 0, 1, 1, 2, 2]), 1.0, 2.0, n_groups=2)
    with pytest.raises(ValueError, match="^classes holds the label 1000000000000000"):
        init_mda2_em_state(X, np.array([0, 1] * 3) * 10**15, X[:2], 1.0)
    with pytest.raises(ValueError, match="^cols must hold ids in 0..5"):
        init_ppc_state(np.array([0, 1]), np.array([1, 6]), np.ones(2), np.ones(6),
                       np.full((6, 2), 0.5))
    with pytest.raises(ValueError, match="^classes and X must have the same length"):
        init_hard_dc_state(X, np.zeros(5, int), 1.0, 1.0, n_classes=1)


def test_steps_check_their_arguments_against_the_state():
    """kmeans_step, dp_means_step, gmd_step and kl_means_step took any array and scalar (data
    of another length or width, a negative or NaN penalty or tolerance, data whose squared
    distances overflow the state's float32); each is now a named error before anything runs."""
    from bayesclust.inference.hard.dp_means import dp_means_step, init_dp_means_state
    from bayesclust.inference.hard.kl_means import init_kl_means_state, kl_means_step
    from bayesclust.inference.hard.kmeans import init_kmeans_state, kmeans_step
    from bayesclust.inference.increments.gmd import gmd_step, init_gmd_state

    ks, ds, gs = init_kmeans_state(XS, CENTERS), init_dp_means_state(XS, 1.0), init_gmd_state(XS, CENTERS)
    ls = init_kl_means_state(ROWS.get(), 1.0)
    big = XS * 1e19  # squared distances past float32
    cases = [
        (lambda: kmeans_step(ks, XS[:5]), "^X has 5 rows but the state"),
        (lambda: kmeans_step(ks, XS[:, :1]), "^X has 1 columns but the state's centres 2"),
        (lambda: kmeans_step(ks, big), "^X has values up to .* overflow float32"),
        (lambda: kmeans_step(ks, XS, tol=-1.0), "^tol must be a finite number >= 0"),
        (lambda: kmeans_step(ks, XS, sample_weight=-np.ones(N)), "^sample_weight must be non-neg"),
        (lambda: kmeans_step(ks, XS, sample_weight=np.ones(N - 1)), "^sample_weight has length"),
        (lambda: dp_means_step(ds, XS[:5], 1.0), "^X has 5 rows but the state"),
        (lambda: dp_means_step(ds, big, 1.0), "^X has values up to .* overflow float32"),
        (lambda: dp_means_step(ds, XS, -1.0), "^lam must be a finite number >= 0"),
        (lambda: dp_means_step(ds, XS, np.nan), "^lam must be a number, got NaN"),
        (lambda: dp_means_step(ds, XS, 1.0, max_clusters=2.5), "^max_clusters must be an integer"),
        (lambda: gmd_step(gs, XS[:5], k_min=1), "^X has 5 rows but the state"),
        (lambda: gmd_step(gs, big, k_min=1), "^X has values up to .* overflow float32"),
        (lambda: gmd_step(gs, XS, k_min=0), "^k_min must be >= 1"),
        (lambda: gmd_step(gs, XS, k_min=1, tol=np.inf), "^tol must be a finite number >= 0"),
        (lambda: kl_means_step(ls, COUNTS, 1.0), "^rows must be the CountRows of kl_means_rows"),
        (lambda: kl_means_step(ls, _f("kl_means_rows")(np.tile(COUNTS, (3, 1))), 1.0),
         "^rows has .* rows but the state"),
        (lambda: kl_means_step(ls, ROWS.get(), -1.0), "^lam must be a finite number >= 0"),
        (lambda: kl_means_step(ls, ROWS.get(), 1.0, collapsed="yes"), "^collapsed must be a bool"),
    ]
    for call, match in cases:
        with pytest.raises((ValueError, TypeError), match=match):
            call()


def test_distance_kernels_name_points_whose_squared_distances_leave_float32():
    """The public distance kernels returned NaN (X x 1e30), zeros and every point in cluster 0
    (X x 1e-30), or a wrong nearest centre (float32 X x 1e19) without a word; a non-positive
    width gave NaN, a negative smooth_std the memberships of its absolute value."""
    from bayesclust import kernels

    X, C = SMALL[:6], SMALL[:2]
    for s, dtype, word in ((1e30, np.float64, "overflow"), (1e-30, np.float64, "underflow"),
                           (1e19, np.float32, "overflow")):
        Xs, Cs = (X * s).astype(dtype), (C * s).astype(dtype)
        for kernel, extra in ((kernels.squared_distances, ()), (kernels.nearest_center, ()),
                              (kernels.assigned_squared_distances, (np.zeros(6, int),)),
                              (kernels.isotropic_gaussian_logpdf, (s * s,)),
                              (kernels.voronoi_memberships, (s,))):
            with pytest.raises(ValueError, match=f"^X has values .* squared distances {word}"):
                kernel(Xs, Cs, *extra)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="^sigma2 must be a positive finite number"):
            kernels.isotropic_gaussian_logpdf(X, C, bad)
        with pytest.raises(ValueError, match="^smooth_std must be a positive finite number"):
            kernels.voronoi_memberships(X, C, bad)


def test_spom_and_matrices_refuse_what_gave_nan_or_broke_their_docs():
    """SPOM's penalty is in fixed units: features near 1e30 overflowed its weights to NaN
    (predictions all class 0); constrained_shortest_paths and kernel SPOM took matrices their
    docs forbid, and Gram matrices past float32 (NaN weights); cecib_cost's -inf of a singular
    cluster came without a word."""
    from bayesclust.inference.consensus.constrained import constrained_shortest_paths
    from bayesclust.inference.information.cecib import cecib_cost
    from bayesclust.structured.kernel_spom import spom_kernel
    from bayesclust.structured.spom import spom

    X, y = XS, LAB
    with pytest.raises(ValueError, match="^feature_blocks are too large for SPOM in float32"):
        spom(0, [X * 1e30], y, 0.1, n_epochs=1)
    G = X @ X.T
    with pytest.raises(ValueError, match="^grams has values up to .* beyond the float32 range"):
        spom_kernel(0, [G * 1e60], y, 0.1, n_epochs=1)  # was inf in float32, then NaN weights
    asym = DIST.copy()
    asym[0, 1] += 1.0
    with pytest.raises(ValueError, match="^D must be symmetric"):
        constrained_shortest_paths(asym, [[0, 2]])
    with pytest.raises(ValueError, match="^D must be non-negative"):
        constrained_shortest_paths(-DIST, [[0, 2]])
    with pytest.raises(ValueError, match=r"^grams\[0\] must be symmetric"):
        spom_kernel(0, [G + np.triu(np.ones_like(G))], y, 0.1, n_epochs=1)
    with pytest.raises(ValueError, match=r"^grams\[0\] is not a kernel matrix"):
        spom_kernel(0, [-G], y, 0.1, n_epochs=1)
    with pytest.warns(RuntimeWarning, match="^labels: cluster 0 .* singular covariance"):
        assert cecib_cost(np.zeros((6, 2)), np.arange(6) % 2) == -np.inf


def test_smic_predict_needs_the_training_data():
    res = bc.smic(SMALL, 3, 3)
    with pytest.raises(ValueError, match="X_train has 29 rows but result was fitted on 30"):
        bc.smic_predict(res, SMALL[:-1], SMALL[:5])


def test_numbers_held_as_strings_are_read_as_numbers_everywhere():
    """One behaviour, scikit-learn's: its estimators convert numeric strings; so do we."""
    as_text = SMALL.astype(str)
    a, b = bc.dp_means(SMALL, 4.0), bc.dp_means(as_text, 4.0)
    np.testing.assert_array_equal(np.asarray(a.labels), np.asarray(b.labels))
    est = bc.DPMeans(lam=4.0, n_init=1, init="mean").fit(as_text)
    np.testing.assert_array_equal(est.labels_, np.asarray(a.labels))
    with pytest.raises(TypeError, match="X must be a real numeric array"):
        bc.dp_means(np.array([["1", "x"]] * 3), 4.0)


def test_penalised_cut_outside_its_useful_range_warns():
    A = np.abs(_gram(SMALL)) + np.eye(30)
    with pytest.warns(UserWarning, match=r"outside \(-1, 0\): the single cluster"):
        bc.PenalizedNormalizedCut(lam_prime=0.5, affinity="precomputed").fit(A)
    with pytest.warns(UserWarning, match="all singletons"):
        bc.penalized_ncut(A, -1.5, sigma=1.0)


def test_discriminative_clustering_refuses_continuous_y():
    with pytest.raises(ValueError, match="y must hold discrete auxiliary classes.*0.5"):
        bc.DiscriminativeClustering(n_clusters=2).fit(SMALL, np.r_[0.5, np.arange(29.0)])


def test_goodness_of_fit_statistics_name_their_arguments():
    from bayesclust.metrics import cramer_von_mises, jensen_shannon

    for bad in ([], [[0.1, 0.2]], [0.1, np.nan], [-np.inf, 0.1], None, ["a", "b"]):
        with pytest.raises((ValueError, TypeError), match="^x "):
            cramer_von_mises(bad, lambda t: t)
    with pytest.raises(TypeError, match="^cdf "):
        cramer_von_mises([0.1], None)
    for bad in ([], [[0.5, 0.5]], [0.5, np.nan], [0.5, -0.2], [0, 0]):
        with pytest.raises(ValueError, match="^p "):
            jensen_shannon(bad, [0.5, 0.5])
        with pytest.raises(ValueError, match="^q "):
            jensen_shannon([0.5, 0.5], bad)
    with pytest.raises(ValueError, match="^p and q must have the same length"):
        jensen_shannon([1.0], [0.5, 0.5])


def test_silent_wrong_answers_at_boundaries_are_named_errors():
    # 35 clusters of 30 rows gave 29 clusters without a word (farthest_first_lambda refuses)
    with pytest.raises(ValueError, match="n_clusters=35"):
        bc.DPMeans(n_clusters=35).fit(X3[:30])
    assert bc.DPMeans(n_clusters=3, random_state=0).fit(X3[:30]).n_clusters_ >= 1
    # a fractional plate size reached numpyro's assertion
    from numpyro.handlers import seed, trace

    from bayesclust.models.did import did_clusters

    with pytest.raises(TypeError, match="n_clusters"):
        trace(seed(did_clusters, 0)).get_trace(None, np.repeat([0, 1], 3), 2.5)
    with pytest.raises(ValueError, match="n_clusters"):
        trace(seed(did_clusters, 0)).get_trace(None, np.repeat([0, 1], 3), 0)
    # 3-D X was averaged over the wrong axes
    from bayesclust.models.dp_gmm import data_scaled_variances

    with pytest.raises(ValueError, match="X must be 2-D"):
        data_scaled_variances(np.ones((4, 2, 2)))


def test_did_data_generators_name_their_arguments():
    with pytest.raises(ValueError, match="^n_samples "):
        datasets.did_gaussian(0, -3)
    with pytest.raises(TypeError, match="^n_features "):
        datasets.did_gaussian(0, 10, "2")
    with pytest.raises(ValueError, match="^target "):
        datasets.load_crabs(target="sp")


# --------------------------------------------------------------------------- the automatic sweep
#
# Every callable that `bayesclust.__all__` or a public module's `__all__` exposes (kernels,
# graphs, metrics, models, inference, structured) is called on a valid base call from the table
# below with one of its array arguments broken.  The answer must be a ValueError / TypeError
# whose message names that argument and whose innermost frame in the package is a validation
# function (a documented warning with a NaN-free answer also passes where the case may be
# valid).  A callable without a table entry fails, so a new function is swept the day it lands.

import importlib  # noqa: E402
import inspect  # noqa: E402
import pkgutil  # noqa: E402
import re  # noqa: E402
import traceback  # noqa: E402
from functools import cache  # noqa: E402
from pathlib import Path  # noqa: E402

PACKAGE_DIR = Path(bc.__file__).parent
SWEPT_PACKAGES = ("kernels", "graphs", "metrics", "models", "inference", "structured")


def _public_modules():
    names = ["bayesclust"]
    for pkg in SWEPT_PACKAGES:
        mod = importlib.import_module(f"bayesclust.{pkg}")
        names.append(mod.__name__)
        if hasattr(mod, "__path__"):
            names += [m.name for m in pkgutil.walk_packages(mod.__path__, mod.__name__ + ".")]
    return [n for n in names if not any(part.startswith("_") for part in n.split(".")[1:])]


def _is_swept(obj):
    """Functions and classes that take arguments; result tuples, warnings and constants are not."""
    if isinstance(obj, type):
        return not issubclass(obj, (tuple, BaseException))
    return callable(obj)


@cache
def public_callables():
    """name -> callable, over every public ``__all__``; a name two modules share is qualified."""
    found = {}
    for modname in _public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if _is_swept(obj):
                found.setdefault(id(obj), (name, obj))
    counts = {}
    for name, _ in found.values():
        counts[name] = counts.get(name, 0) + 1
    out = {}
    for name, obj in found.values():
        if counts[name] > 1:
            name = obj.__module__.removeprefix("bayesclust.") + "." + name
        out[name] = obj
    return out


class Lazy:
    """A base argument built on first use (a fit or a state), then reused."""

    def __init__(self, make):
        self.make = make

    @cache  # noqa: B019 - the few Lazy objects live as long as the module
    def get(self):
        return self.make()


_rng = np.random.default_rng(0)
N = 12
XS = np.concatenate([_rng.normal(c, 0.3, size=(4, 2)) for c in ((0, 0), (3, 0), (0, 3))])
LAB = np.repeat(np.arange(3), 4)
CLS = np.arange(N) % 2
ENS = np.stack([LAB, np.arange(N) % 3, np.arange(N) // 6, LAB[::-1]])
_D2 = ((XS[:, None] - XS[None]) ** 2).sum(-1)
AFF = np.exp(-_D2 / 2.0)
DIST = np.sqrt(_D2)
CENTERS = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
COUNTS = np.abs(_rng.normal(size=(N, 5))) + 0.1
MEMB = np.full((N, 3), 1 / 3)


def _f(name):
    return public_callables()[name]


def _coassoc():
    return _f("coassociation")(ENS)


COASSOC = Lazy(_coassoc)

# parameter name -> a valid value, shared by every callable of the "one name per idea" table
DEFAULTS = {
    "X": XS, "X_time_ordered": XS, "X_or_S": XS, "X_new": XS[:3], "X_train": XS, "X_ref": XS,
    "labels": LAB, "labels_true": LAB, "labels_pred": CLS, "labels_a": LAB, "labels_b": CLS,
    "labels_ref": LAB, "consensus_labels": LAB, "init_labels": LAB,
    "classes": CLS, "y": CLS,
    "ensemble": ENS, "label_draws": ENS, "partitions": ENS,
    "coassoc": COASSOC,
    "counts": COUNTS,
    "K": AFF, "A": AFF, "S": AFF, "D": DIST, "D_true": DIST,
    "centers": CENTERS, "means": CENTERS, "prototypes": CENTERS,
    "rng_key": 0, "key": Lazy(lambda: __import__("jax").random.PRNGKey(0)),
    "lam": 1.0, "lam_local": 1.0, "lam_global": 4.0, "sigma2": 1.0, "rho2": 10.0, "tau": 1.0,
    "xi": 1.0, "smooth_std": 1.0, "std": 1.0, "jump_std": 0.5, "beta": 1.0, "lam_prime": -0.5,
    "eigenvalue_threshold": 0.5, "threshold": 0.5, "sigma": 1.0, "sigma_floor": 1e-6,
    "n_clusters": 3, "n_classes": 2, "n_aspects": 2, "n_local": 2, "n_global": 3, "n": N, "d": 2,
    "k": 3, "t": 3, "n_neighbors": 3, "n_components": 2, "n_objects": N, "n_groups": 2,
    "num_segments": 3, "capacity": 8, "k_min": 1, "k_max": 3, "n_constraints": 4,
    "groups": [XS[:6], XS[6:]], "group_ids": CLS,
    "weights": np.full(3, 1 / 3), "w": DIST[0, 1:] + 0.1,
    "must_link": np.array([[0, 1]]), "cannot_link": np.array([[0, 11]]),
    "memberships": MEMB,
    "n_clusters_range": (2, 3),
}


class Entry:
    """A valid base call: keyword arguments over DEFAULTS, and how to call.

    ``call(obj, kwargs)`` makes the call (default ``obj(**kwargs)``); ``whole`` names the
    arguments left whole (opaque objects, callables).
    """

    def __init__(self, call=None, whole=(), signature=None, **kwargs):
        self.call, self.whole, self.signature, self.kwargs = call, set(whole), signature, kwargs

    def base(self, obj):
        target = getattr(obj, self.signature) if self.signature else obj
        params = inspect.signature(target).parameters
        kwargs = {}
        for name, p in params.items():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name == "self":
                continue
            if name in self.kwargs:
                kwargs[name] = self.kwargs[name]
            elif p.default is inspect.Parameter.empty:
                if name not in DEFAULTS:
                    raise KeyError(f"no base value for the required argument {name!r}")
                kwargs[name] = DEFAULTS[name]
        for name, value in self.kwargs.items():
            kwargs.setdefault(name, value)
        return {k: v.get() if isinstance(v, Lazy) else v for k, v in kwargs.items()}

    def __call__(self, obj, kwargs):
        return self.call(obj, kwargs) if self.call else obj(**kwargs)


A = Entry  # a row of the table: A() takes every required argument from DEFAULTS


def _fit(**init):
    """An estimator's entry: ``cls(**init).fit(**kwargs)``, base arguments from ``fit``'s."""
    return Entry(call=lambda cls, kw: cls(**init).fit(**kw), signature="fit")


def _program(**kwargs):
    """A NumPyro program's entry: one seeded trace of it."""
    def run(model, kw):
        import jax.numpy as jnp
        import numpyro.distributions as dist
        from numpyro.handlers import seed, substitute, trace

        def improper_at_zero(site):  # an improper prior cannot be sampled: its value is 0
            fn = site.get("fn")
            if site.get("type") != "sample" or fn is None or site.get("is_observed"):
                return None
            while hasattr(fn, "base_dist"):
                fn = fn.base_dist
            if isinstance(fn, dist.ImproperUniform):
                return jnp.zeros(site["fn"].shape())
            return None

        return trace(substitute(seed(model, 0), substitute_fn=improper_at_zero)).get_trace(**kw)
    return Entry(call=run, **kwargs)


class NotSwept(Entry):
    """An entry with no case: the callable takes no array of its own to break (sizes,
    settings, a distribution, or a state whose arrays its swept ``init_*`` checked), or
    arrays only in the padded internal forms its driver builds (``reason``)."""

    def __init__(self, reason):
        super().__init__()
        self.reason = reason


NO_ARRAYS = NotSwept("no array argument: sizes, settings, or a state made by a swept init")


def INTERNAL(what):
    return NotSwept(f"a building block of a driver: its arrays are {what}, made by the driver")


def _pairs():
    from bayesclust.inference.consensus.coassociation import coassociation_pairs

    return coassociation_pairs(COASSOC.get())


PAIRS = Lazy(_pairs)


def _gibbs():
    from bayesclust.inference.mixtures import gibbs

    return gibbs
ROWS = Lazy(lambda: _f("kl_means_rows")(COUNTS))
SMIC_FIT = Lazy(lambda: _f("smic")(XS, 3, 3))
CECIB_FIT = Lazy(lambda: _f("cecib")(0, XS, 3, n_init=1))
MAPDID = Lazy(lambda: _f("map_did_fit")(0, XS, CLS, k_max=1))
LINKAGE = Lazy(lambda: __import__("scipy.cluster.hierarchy", fromlist=["x"]).linkage(XS, "single"))
COV = np.stack([np.eye(2)] * 3)
GRAMS = [AFF, XS @ XS.T]
THETA = [np.zeros((2, 2)), np.zeros((2, 2))]


def _lin_grad(theta, example):
    """A valid ``loss_grad`` (traceable, ``(loss, gradients)``) for an example of any shape:
    ``||theta_0||**2 / 2 + sum(example)``."""
    import jax.numpy as jnp

    return 0.5 * jnp.sum(theta[0] ** 2) + jnp.sum(example), [theta[0], jnp.zeros_like(theta[1])]


TABLE = {
    # the comparison API and the estimators (bayesclust.__all__)
    "small_variance_path": A(lam=1.0, num_warmup=1, num_samples=1, num_chains=1),
    "LimitFamily": NO_ARRAYS,
    "limit_path": A(X=XS, lam=1.0),
    "compare": A(sampled=None, hard=None, whole=("sampled", "hard")),
    "CECIB": _fit(n_clusters=2, n_init=1), "ACCCS": _fit(n_partitions=4, generations=1),
    "AspectConsensus": _fit(n_partitions=4), "ConstrainedEAC": _fit(n_partitions=4),
    "EmbeddedConsensus": _fit(n_clusters=2, n_partitions=4),
    "EvidenceAccumulation": _fit(n_partitions=4),
    "HypergraphConsensus": _fit(n_partitions=4), "KLMeansConsensus": _fit(n_partitions=4),
    "PairwiseConsensus": _fit(n_partitions=4, n_init=1), "GMDID": _fit(k_max=3),
    "MAPDIDClassifier": _fit(k_max=1), "SLAGLO": _fit(), "SLDID": _fit(),
    "DiscriminativeClustering": _fit(n_clusters=2), "HardDC": _fit(lam=1.0),
    "DPGaussianMixture": _fit(num_warmup=1, num_samples=1, num_chains=1),
    "DPMeans": _fit(lam=1.0), "HDPGaussianMixture": _fit(num_warmup=1, num_samples=1, thin=1, num_chains=1),
    "HardHDP": _fit(), "SMIC": _fit(t=3), "PenalizedNormalizedCut": _fit(n_neighbors=3),
    "SpectralDPMeans": _fit(n_neighbors=3), "MKLClassifier": _fit(n_epochs=1, n_components=10),
    # graphs
    "bridge_increments": A(), "gaps": A(a=0, b=1), "increments": A(), "increments_to": A(Y=XS[:3]),
    "knn_gaussian_affinity": A(n_neighbors=3), "knn_search": A(n_neighbors=3),
    "local_scaling_cross_kernel": A(sigma=np.ones(N)), "local_scaling_kernel": A(),
    "local_scaling_kernels": A(ts=[2, 3]),
    # inference.consensus
    "acccs": A(), "acccs_step": NO_ARRAYS, "init_acccs_state": A(),
    "aspect_em": A(), "aspect_em_step": Entry(
        state=Lazy(lambda: _f("init_aspect_em_state")(PAIRS.get()[0], PAIRS.get()[1], PAIRS.get()[2],
                                                   np.full(2, 0.5), np.full((2, N), 1 / N))),
        rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
        counts=Lazy(lambda: PAIRS.get()[2])),
    "aspect_log_likelihood": A(weights=np.full(2, 0.5), B=np.full((2, N), 1 / N)),
    "init_aspect_em_state": A(rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
                              counts=Lazy(lambda: PAIRS.get()[2]), weights=np.full(2, 0.5),
                              B=np.full((2, N), 1 / N)),
    "select_n_aspects": A(candidates=[1, 2]),
    "as_coassociation": A(), "coassociation": A(), "coassociation_dense": A(),
    "coassociation_pairs": A(),
    "aspect_posterior": A(n_aspects=2, num_steps=1, num_samples=1),
    "memberships_posterior": A(num_steps=1, num_samples=1),
    "consensus_candidates": A(k_range=(2, 3)),
    "select_consensus": A(candidates=Lazy(lambda: _f("consensus_candidates")(COASSOC.get(), k_range=(2, 3)))),
    "validity_index": A(criterion="acc", ensemble=ENS),
    "constrained_linkage_consensus": A(), "constrained_shortest_paths": A(),
    "constraint_satisfaction": A(), "random_constraints": A(),
    "classical_mds": A(), "embed_coassociation": A(),
    "embedded_consensus": A(embedding=XS), "residual_variance": A(Y=XS),
    "clustering_ensemble": A(base=("kmeans",), n_clusters=2, n_per_setting=2), "k_bounds": NO_ARRAYS,
    "kmeans_ensemble": A(n_partitions=2), "spectral_grid_ensemble": A(n_clusters=[2], sigmas=[1.0]),
    "cspa": A(), "hyperedges": A(), "hypergraph_consensus": A(), "mcla": A(),
    "cut_tree_at": A(Z=LINKAGE), "lifetimes": A(heights=np.array([0.1, 0.5, 2.0])),
    "linkage_consensus": A(n_clusters=2), "check_dense_linkage": NO_ARRAYS,
    "init_mixture_of_ensembles_state": A(), "mixture_of_ensembles": A(n_init=1),
    "mixture_of_ensembles_step": NO_ARRAYS,
    "init_ppc_state": A(rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
                        values=Lazy(lambda: PAIRS.get()[2] / 4.0), diag=np.ones(N)),
    "ppc": A(n_init=1), "ppc_step": A(
        state=Lazy(lambda: _f("init_ppc_state")(PAIRS.get()[0], PAIRS.get()[1], PAIRS.get()[2] / 4.0,
                                             np.ones(N), MEMB)),
        rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
        values=Lazy(lambda: PAIRS.get()[2] / 4.0), diag=np.ones(N)),
    "denoise_sequence": A(window=3, population=2, generations=0, n_clusters=[2], sigmas=[1.0]),
    "denoise_step": NO_ARRAYS,
    "init_denoise_state": A(window=3, population=2, n_clusters=[2], sigmas=[1.0]),
    "temporal_states": A(window=3, n_clusters=[2], sigmas=[1.0]), "window_indicator": A(window=3),
    "validity_weights": A(), "weacs": A(n_partitions=2),
    # inference.discriminative
    "dc_voronoi_labels": A(), "dc_anneal": A(n_iter=2),
    "dc_anneal_step": A(state=Lazy(lambda: _f("init_dc_anneal_state")(XS, CLS, CENTERS)), n_iter=2),
    "init_dc_anneal_state": A(),
    "init_mda2_em_state": A(), "init_mog_em_state": A(), "mda2_em": A(), "mog_em": A(),
    "mda2_em_step": A(state=Lazy(lambda: _f("init_mda2_em_state")(XS, CLS, CENTERS, 1.0))),
    "mog_em_step": A(state=Lazy(lambda: _f("init_mog_em_state")(XS, CENTERS, 1.0))),
    "dc_map": A(), "dc_nuts": A(num_warmup=1, num_samples=1),
    "heldout_cost": A(), "select_width": A(fit=lambda *a, **k: CENTERS, grid=[0.5, 1.0]),
    "stratified_split": A(), "width_grid": A(),
    "init_sdc_state": A(), "sdc": A(n_iter=2),
    "sdc_step": A(state=Lazy(lambda: _f("init_sdc_state")(XS, CLS, CENTERS, 1.0)), n_iter=2),
    # inference.hard
    "kernel_dp_means_step": NO_ARRAYS,
    "dp_means": A(), "dp_means_iteration": A(w=np.ones(N), centers=np.zeros((4, 2)), k=1),
    "dp_means_pass": A(w=np.ones(N), centers=np.zeros((4, 2)), k=1),
    "dp_means_step": A(state=Lazy(lambda: _f("init_dp_means_state")(XS, 1.0))),
    "farthest_first_lambda": A(), "init_dp_means_state": A(),
    "hard_dc": A(lam=1.0), "hard_dc_predict": A(),
    "hard_dc_step": A(state=Lazy(lambda: _f("init_hard_dc_state")(XS, CLS, 1.0, 1.0, n_classes=2))),
    "init_hard_dc_state": A(),
    "hard_hdp": A(), "hard_hdp_penalties": A(),
    "hard_hdp_step": A(state=Lazy(lambda: _f("init_hard_hdp_state")(XS, CLS, 1.0, 4.0, n_groups=2)),
                       group_ids=CLS),
    "init_hard_hdp_state": A(group_ids=CLS),
    "init_kernel_dp_means_state": A(), "kernel_dp_means": A(), "kernel_dp_means_objective": A(),
    "init_kl_means_state": A(rows=ROWS), "kl_means": A(), "kl_means_lambda": A(), "kl_means_rows": A(),
    "kl_means_step": A(state=Lazy(lambda: _f("init_kl_means_state")(ROWS.get(), 1.0)), rows=ROWS),
    "init_kmeans_state": A(), "kmeans": A(), "kmeans_init": A(),
    "kmeans_step": A(state=Lazy(lambda: _f("init_kmeans_state")(XS, CENTERS))),
    "init_penalized_ncut_state": A(), "ncut_sigma_psd": A(), "normalized_cut": A(),
    "penalized_ncut": A(), "penalized_ncut_step": NO_ARRAYS,
    "spectral_dp_means": A(), "thresholded_eigenvectors": A(),
    # inference.increments
    "gdid_cut": A(Z=LINKAGE), "gdid_index": A(), "sl_aglo": A(tau=3.0), "sl_did": A(),
    "gmd": A(k_max=2), "gmd_step": A(state=Lazy(lambda: _f("init_gmd_state")(XS, CENTERS)), k_min=1),
    "init_gmd_state": A(), "message_length": A(covariances=COV),
    "cluster_mahalanobis": A(covariances=COV), "gmdid": A(), "kmdid": A(n_init=1),
    "map_did_fit": A(k_max=1), "map_did_log_scores": A(model=MAPDID), "map_did_predict": A(model=MAPDID),
    # inference.information
    "beta_0": NO_ARRAYS, "cecib": A(n_init=1), "cecib_cost": A(), "cecib_log_density": A(result=CECIB_FIT),
    "cecib_step": NO_ARRAYS, "critical_beta": A(weights=np.full(2, 0.5), covariances=COV[:2],
                                                merged_covariance=np.eye(2)),
    "init_cecib_state": A(),
    "lsmi": A(gammas=(1.0,), deltas=(1.0,), n_folds=2), "lsmi_fit": A(gamma=1.0, delta=1.0),
    "smic": A(), "smic_predict": A(result=SMIC_FIT), "smic_predict_proba": A(result=SMIC_FIT),
    "smic_select": A(candidates=(3,), gammas=(1.0,), deltas=(1.0,), n_folds=2),
    # inference.mixtures
    "prior_distribution": NO_ARRAYS, "convergence_problems": NO_ARRAYS, "warn_if_not_converged": NO_ARRAYS,
    "dp_mda2_log_likelihood": A(state=Lazy(lambda: _f("init_dp_mda2_state")(XS, CLS, LAB, 8, 0.0, 1.0,
                                                                         n_classes=2))),
    "dp_mda2_sweep": A(state=Lazy(lambda: _f("init_dp_mda2_state")(XS, CLS, LAB, 8, 0.0, 1.0, n_classes=2))),
    "gibbs_dp_mda2": A(num_warmup=1, num_samples=1, num_chains=1),
    "init_dp_mda2_state": A(log_alpha=0.0),
    "blocked_sweep": A(state=Lazy(lambda: _gibbs().init_blocked_state(XS, LAB, 8, 0.0, 1.0))),
    "gibbs_dp_gmm": A(num_warmup=1, num_samples=1, num_chains=1),
    "gibbs_sweep": A(state=Lazy(lambda: _gibbs().init_state(XS, LAB, 8, 0.0, 1.0)), collapsed=True),
    "init_blocked_state": A(truncation=8, log_alpha=0.0), "init_state": A(log_alpha=0.0),
    "inference.mixtures.gibbs.split_merge_move": A(
        state=Lazy(lambda: _gibbs().init_state(XS, LAB, 8, 0.0, 1.0))),
    "inference.mixtures.hdp_gibbs.split_merge_move": INTERNAL("a CRF state"),
    "sweep_chains": INTERNAL("batched chain states"),
    "cluster_posterior": A(prior=Lazy(lambda: _f("default_gaussian_prior")(XS))),
    "default_gaussian_prior": A(), "gaussian_log_marginal": A(), "gaussian_predictive_logpdf": A(),
    "gibbs_dp_gaussian": A(num_warmup=1, num_samples=1, num_chains=1),
    "gibbs_hdp_gmm": A(groups=XS, group_ids=CLS, num_warmup=1, num_samples=1, thin=1,
                       num_chains=1),
    "hdp_sweep": INTERNAL("a CRF state"), "init_hdp_state": INTERNAL("CRF tables"), "point_log_weights": INTERNAL("a CRF state"),
    "table_log_weights": INTERNAL("a CRF state"), "register_model": NO_ARRAYS, "run_nuts": INTERNAL("a NumPyro program's own arguments"),
    "run_svi": INTERNAL("a NumPyro program's own arguments"), "posterior_from_mcmc": INTERNAL("a run MCMC object"),
    "sample_mixture_labels": A(weights=np.full((1, 3), 1 / 3), means=CENTERS[None]),
    "DPCollapsedGibbs": A(), "HDPGibbs": A(groups=XS, group_ids=CLS),
    "gibbs_dp_multinomial": A(lam=1.0, tau=1.0, num_warmup=1, num_samples=1, num_chains=1),
    "init_multinomial_state": A(rows=ROWS), "multinomial_sweep": INTERNAL("padded CountRows"),
    "multinomial_sweep_chains": INTERNAL("padded CountRows"), "new_cluster_log_weights": A(rows=ROWS),
    "draws_point_estimate": A(), "partition_point_estimate": A(),
    "Posterior": A(labels=ENS[None]), "rank_diagnostics": A(x=_rng.normal(size=(2, 8))),
    # kernels
    "description_length": A(), "did_cdf": A(), "did_chi_mean_abs_difference": NO_ARRAYS, "did_logpdf": A(),
    "class_counts": A(), "polya_log_evidence": A(counts=np.ones((3, 2))),
    "polya_log_predictive": A(counts=np.ones((3, 2)), c=1),
    "voronoi_memberships": A(),
    "categorical_inverse_cdf": A(log_w=np.log(np.full(3, 1 / 3)), u=0.5),
    "cholesky_rank_one": A(L=np.eye(2), v=np.ones(2)),
    "complete_data_log_likelihood": A(), "crp_log_prior": A(counts=np.array([4.0, 4.0, 4.0]), alpha=1.0),
    "gaussian_logpdf_full": A(chols=COV), "isotropic_gaussian_logpdf": A(),
    "log_responsibilities": A(log_weights=np.log(np.full(3, 1 / 3)), log_lik=np.zeros((N, 3))),
    "stick_breaking": A(v=np.full(3, 0.5)),
    "kl_costs": A(counts=COUNTS, negentropy=np.zeros(N), log_psi=np.log(np.full((3, 5), 0.2))),
    "kl_costs_row": INTERNAL("padded (column, count) pairs"), "kl_costs_segments": INTERNAL("padded segment entries"),
    "log_distributions": A(counts=COUNTS[:3], totals=COUNTS[:3].sum(1)),
    "merge_costs": INTERNAL("padded (column, count) pairs"), "polya_move_score": INTERNAL("padded (column, count) pairs"),
    "pooled_counts": A(rows=ROWS, num_segments=3),
    "row_negentropy": A(vals=COUNTS, totals=COUNTS.sum(1)),
    "assigned_squared_distances": A(C=CENTERS), "assignment_block_size": NO_ARRAYS,
    "compact_labels": A(keep=np.array([True, True, True, False])), "map_row_blocks": INTERNAL("row blocks of any function"),
    "nearest_center": A(C=CENTERS), "nearest_center_stats": A(C=CENTERS), "padded_rows": NO_ARRAYS,
    "segment_stats": A(), "squared_distances": A(C=CENTERS), "squared_norms": A(),
    "sum_rows": A(a=XS), "weighted_means": INTERNAL("SegmentStats"),
    # metrics
    "accuracy": A(), "ari": A(), "coherence": A(), "consistency_index": A(), "contingency_matrix": A(),
    "entropy": A(), "match_labels": A(), "mean_group_nmi": A(labels_true=ENS, labels_pred=ENS[::-1]),
    "membership_entropy": A(), "mutual_info": A(), "nmi": A(), "purity": A(),
    "acc": A(), "acc_population": A(candidates=ENS[:2]), "anmi": A(), "diversity": A(),
    "cramer_von_mises": A(x=np.linspace(0.05, 0.95, 7), cdf=lambda t: t, whole=("cdf",)),
    "jensen_shannon": A(p=np.full(3, 1 / 3), q=np.array([0.5, 0.25, 0.25])),
    "binder_loss": A(), "co_clustering_matrix": A(), "expected_binder_loss": A(
        psm=Lazy(lambda: _f("co_clustering_matrix")(ENS))), "expected_vi_loss": A(),
    "set_partitions": NO_ARRAYS, "variation_of_information": A(),
    "vi_lower_bound": A(psm=Lazy(lambda: _f("co_clustering_matrix")(ENS))),
    "dc_log_posterior": A(), "dp_means_objective": A(), "explained_variance": A(),
    "hard_dc_objective": A(), "hard_hdp_objective": A(groups=XS, group_ids=CLS),
    "kl_means_objective": A(), "n_clusters": A(), "sse": A(),
    "calinski_harabasz": A(), "davies_bouldin": A(), "dunn": A(), "likelihood_index": A(X=XS),
    "n1_complexity": A(), "silhouette": A(),
    # models (NumPyro programs run under a seeded trace)
    "DID": NO_ARRAYS, "class_mixture": INTERNAL("distribution parameters of map_did"), "did_clusters": _program(labels=CLS, n_clusters=2),
    "map_did": _program(w=np.abs(XS[:, 0]) + 0.1, n_components=1),
    "dc_collapsed": _program(n_clusters=2), "dc_explicit": _program(n_clusters=2), "dc_objective": A(),
    "dp_gaussian_mixture": _program(X=XS, truncation=4, prior=Lazy(
        lambda: _f("default_gaussian_prior")(XS))), "alpha_from_lam": NO_ARRAYS,
    "check_truncation": A(weights=np.full(3, 1 / 3)), "data_scaled_variances": A(),
    "dp_gmm": _program(X=XS, truncation=4), "log_alpha_from_lam": NO_ARRAYS,
    "truncation_mass": A(weights=np.full(3, 1 / 3)),
    "dp_mda2": _program(X=XS, classes=CLS, n_classes=2, truncation=4),
    "dp_multinomial": _program(lam=1.0, tau=1.0, truncation=4), "log_alpha_from_lam_tau": NO_ARRAYS,
    "dyadic_aspect": _program(rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
                              counts=Lazy(lambda: PAIRS.get()[2])),
    "models.dyadic_aspect.pair_log_likelihood": A(
        p=np.full(2, 0.5), B=np.full((2, N), 1 / N), rows=Lazy(lambda: PAIRS.get()[0]),
        cols=Lazy(lambda: PAIRS.get()[1]), counts=Lazy(lambda: PAIRS.get()[2])),
    "hdp_concentrations_from_lam": NO_ARRAYS, "hdp_gmm": _program(X=XS, group_ids=CLS, n_groups=2,
                                                                  truncation=4),
    "hdp_log_concentrations_from_lam": NO_ARRAYS, "prepare_groups": A(),
    "IsotropicGaussianMixture": A(weights=np.full(3, 1 / 3)), "log_weights": A(weights=np.full(3, 1 / 3)),
    "sample_points": _program(weights=np.full(3, 1 / 3), n=N),
    "models.pairwise_memberships.pair_log_likelihood": A(
        Y=MEMB, rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
        values=Lazy(lambda: PAIRS.get()[2] / 4.0)),
    "pairwise_memberships": _program(rows=Lazy(lambda: PAIRS.get()[0]), cols=Lazy(lambda: PAIRS.get()[1]),
                                     values=Lazy(lambda: PAIRS.get()[2] / 4.0)),
    # structured
    "multiclass_decode": A(scores=_rng.normal(size=(N, 3))),
    "viterbi": A(unary=_rng.normal(size=(5, 3)), transition=_rng.normal(size=(3, 3))),
    "spom_kernel": A(grams=GRAMS, n_epochs=1), "spom_kernel_decision": INTERNAL("coefficients of a spom_kernel result"),
    "init_online_proximal_state": A(loss_grad=_lin_grad, theta0=THETA, data=XS,
                                    regularisers=[("l2", 0.1)], whole=("loss_grad",)),
    "online_proximal": A(loss_grad=_lin_grad, theta0=THETA, data=XS, regularisers=[("l2", 0.1)],
                         n_epochs=1, whole=("loss_grad",)),
    "online_proximal_step": NO_ARRAYS,
    "proximal_update": A(theta=THETA, grad=THETA, eta=0.1, regularisers=[("l2", 0.1)]),
    "regulariser_value": A(theta=THETA, regularisers=[("l2", 0.1)]),
    "block_norms": A(blocks=[np.ones(3), np.ones(2)]), "prox_block_norms": A(blocks=[np.ones(3), np.ones(2)]),
    "prox_l1_squared": A(x=np.array([1.0, -2.0, 0.5])),
    "prox_l1_squared_weighted": A(x=np.array([1.0, -2.0, 0.5]), d=np.ones(3)),
    "prox_lq_power": A(b=np.array([1.0, -2.0, 0.5]), q=1.5), "soft_threshold": A(x=np.array([1.0, -2.0]),
                                                                                tau=0.5),
    "init_spom_state": A(feature_blocks=[XS], y=LAB), "kernel_weights": A(theta=THETA),
    "spom": A(feature_blocks=[XS], y=LAB, n_epochs=1), "spom_decision": A(theta=THETA, feature_blocks=[XS]),
    "spom_predict": A(theta=THETA, feature_blocks=[XS]), "spom_step": NO_ARRAYS,
}


def _hostile(value):
    """(case, broken value, must_raise) for one array argument of a valid call.

    ``must_raise`` cases have no valid reading (NaN, infinity, words, None, fractional labels);
    the others (no rows, a dimension more or less, ids near 1e15, negative ids, values near
    1e300) may also be answered, NaN-free.
    """
    out = []
    a = value
    if a.dtype.kind == "f":
        nan = a.copy()
        nan.flat[a.size // 2] = np.nan
        inf = a.copy()
        inf.flat[0] = np.inf
        out += [("nan", nan, True), ("inf", inf, True), ("huge", a * 1e300 + 1e300, False)]
    elif a.dtype.kind in "iu":
        nan = a.astype(float)
        nan.flat[0] = np.nan
        frac = a.astype(float)
        frac.flat[0] += 0.5
        out += [("nan", nan, True), ("fraction", frac, True),
                ("huge_ids", a.astype(np.int64) + 10**15, False),
                ("negative_ids", -1 - a.astype(np.int64), False)]
    else:
        return out
    out += [("words", np.full(a.shape, "a", dtype=object), True), ("none", None, None),
            ("empty", a[:0], False), ("ndim+1", a[None], False)]
    if a.ndim >= 1:
        out.append(("ndim-1", a[..., 0] if a.ndim > 1 else a[0], False))
    return out


_CHECK_NAME = re.compile(r"^_?(check|validate|as_|require|ensure|coerce)\w*|.*(_checked|_validated|_codes)$")


def _raised_by_validation(exc, public_names):
    """Whether the innermost package frame of ``exc``'s traceback is a validation function.

    That is: the frame is in ``_validation.py``, or a function whose name says it checks
    (``check_*``, ``_check_*``, ``validate*``, ``as_*``...), or the public entry point itself
    (its argument checks at its top).
    """
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve().is_relative_to(PACKAGE_DIR.resolve())]
    if not frames:
        return False, "raised outside the package"
    inner = frames[-1]
    ok = (inner.filename.endswith("_validation.py") or bool(_CHECK_NAME.match(inner.name))
          or inner.name in public_names)
    return ok, f"{Path(inner.filename).name}:{inner.lineno} in {inner.name}"


def _raised_by_sklearn_validation(exc):
    """scikit-learn's ``check_array`` (an estimator's fit), innermost frame included."""
    frames = traceback.extract_tb(exc.__traceback__)
    return any(f.filename.endswith(("sklearn/utils/validation.py", "sklearn/base.py",
                                    "sklearn/utils/multiclass.py"))
               for f in frames[-3:])


def _has_nan(out, depth=0):
    if depth > 3 or out is None or isinstance(out, (str, bytes, type)) or callable(out):
        return False
    if hasattr(out, "objective_trace") and hasattr(out, "n_iter") and hasattr(out, "_replace"):
        # an iterative state's trace buffer holds NaN past its n_iter + 1 filled entries (its
        # documented "not run yet"); the entries run must be NaN-free like every other field
        filled = np.asarray(out.objective_trace)[: int(np.asarray(out.n_iter)) + 1]
        out = out._replace(objective_trace=filled)
    if isinstance(out, dict):
        return any(_has_nan(v, depth + 1) for v in out.values())
    if isinstance(out, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in out)
    try:
        arr = np.asarray(out)
    except Exception:
        return False
    return arr.dtype.kind in "fc" and bool(np.isnan(arr).any())


# arguments whose None is documented as "none given" (no constraints; a generative program's
# observations), by name or as "callable:argument"
NONE_MEANS_ABSENT = {"must_link", "cannot_link", "dp_mda2:classes", "did_clusters:w", "sample_points:X"}


def sweep_cases(name):
    """[(argument, case, broken kwargs, must_raise)] of one callable, the must-raise cases first."""
    entry = TABLE[name]
    if isinstance(entry, NotSwept):
        return []
    obj = public_callables()[name]
    base = entry.base(obj)
    cases = []
    for arg, value in base.items():
        if arg in entry.whole or not isinstance(value, np.ndarray):
            continue
        for case, bad, must in _hostile(value):
            if must is None:
                must = arg not in NONE_MEANS_ABSENT and f"{name}:{arg}" not in NONE_MEANS_ABSENT
            if case == "words" and arg == "y" and entry.signature == "fit":
                must = False  # a classifier's classes may be strings
            cases.append((arg, case, {**base, arg: bad}, must))
    return sorted(cases, key=lambda c: not c[3])


def _check_case(name, arg, case, kwargs, must_raise):
    """None if the callable answered the case as it should, else what went wrong."""
    obj = public_callables()[name]
    entry = TABLE[name]
    # the top of a public function (this one, or one it hands its arguments to) is a boundary
    own = {n.rsplit(".", 1)[-1] for n in public_callables()} | {"__init__", "fit", "__new__"}
    # the argument's names: "X_or_S" is named "X" or "S"; an estimator's fit, whose checks are
    # scikit-learn's (check_array), may say "Input" or "array"
    aliases = set(arg.split("_or_")) | {arg}
    estimator = isinstance(obj, type) and hasattr(obj, "fit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = entry(obj, kwargs)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            if estimator and _raised_by_sklearn_validation(exc):
                return None
            named = aliases if must_raise else aliases | set(kwargs)  # another argument may be
            if not any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(a)}(?![A-Za-z0-9_])", message)
                       for a in named):  # the one a legitimately relabelled call now breaks
                return f"{type(exc).__name__} does not name {arg!r}: {message[:160]}"
            ok, where = _raised_by_validation(exc, own)
            return None if ok else f"{type(exc).__name__} raised from {where}: {message[:120]}"
        except Exception as exc:  # noqa: BLE001 - any other error is the failure reported
            ok, where = _raised_by_validation(exc, own)
            return f"{type(exc).__name__} from {where}: {str(exc)[:160]}"
    if must_raise:
        return "no error"
    if _has_nan(out):
        return "NaN in the answer"
    return None


def _sweep(name, must_raise_only=False, first_only=False):
    failures = []
    for arg, case, kwargs, must in sweep_cases(name):
        if must_raise_only and not must:
            break  # the must-raise cases come first
        problem = _check_case(name, arg, case, kwargs, must)
        if problem:
            failures.append(f"{arg}/{case}: {problem}")
            if first_only:
                break
    return failures


def test_every_public_callable_has_a_sweep_entry():
    """A new public function or class fails here until it joins TABLE (never skipped)."""
    missing = sorted(set(public_callables()) - set(TABLE))
    stale = sorted(set(TABLE) - set(public_callables()))
    assert not missing, f"public callables without a row in TABLE: {missing}"
    assert not stale, f"rows of TABLE that are no longer public: {stale}"


# Callables the sweep still catches out, with the first case each fails: each is a strict
# xfail until its checks land at its boundary (then it passes and its row must go).  The
# quick sweep runs the cases with no valid reading (NaN, infinity, fractional ids, words, None),
# which fail in validation before anything compiles; the long sweep adds those a function may
# answer (no rows, a dimension more or less, ids near 1e15, negative ids, values near 1e300),
# whose answers compile.
KNOWN_HOLES: dict[str, str] = {}
KNOWN_SOFT_HOLES: dict[str, str] = {}  # pass the quick sweep, fail a case of the long one



def _sweep_params(holes):
    for name in sorted(TABLE):
        marks = ()
        if name in holes:
            marks = pytest.mark.xfail(strict=True, reason=holes[name])
        yield pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", list(_sweep_params(KNOWN_HOLES)))
def test_sweep_hostile_inputs(name):
    # a known hole stops at its first failure: its remaining cases may compile or allocate
    failures = _sweep(name, must_raise_only=True, first_only=name in KNOWN_HOLES)
    assert not failures, f"{name}:\n" + "\n".join(failures)


@pytest.mark.long
@pytest.mark.parametrize("name", list(_sweep_params({**KNOWN_SOFT_HOLES, **KNOWN_HOLES})))
def test_sweep_hostile_inputs_long(name):
    failures = _sweep(name, first_only=name in KNOWN_HOLES or name in KNOWN_SOFT_HOLES)
    assert not failures, f"{name}:\n" + "\n".join(failures)


def test_reported_holes_are_named_errors():
    """The unhelpful errors once raised from inside the package, each now a named one."""
    from bayesclust.graphs import knn_search
    from bayesclust.inference.consensus.embedding import classical_mds
    from bayesclust.metrics import dc_log_posterior
    from bayesclust.structured.online import proximal_update

    huge = SMALL * 1e300 + 1e300  # finite float64 whose squared distances overflow
    # k-means ensembles, evidence accumulation, SMIC and SL-DID once failed here too (an
    # IndexError from k-means, from graphs.py, cKDTree's "value of p too large"); they now
    # compute in the data's unit frame and give the unit-scale answer at any finite scale
    # (tests/test_scale_invariance.py).  These still need squared distances in X's units.
    for call in (lambda: bc.PenalizedNormalizedCut(n_neighbors=3).fit(huge),
                 lambda: bc.gdid_index(huge, np.arange(30) % 2),
                 lambda: bc.cecib_cost(huge, np.arange(30) % 2)):  # -inf without a word
        with pytest.raises(ValueError, match=r"^X has values up to .* overflow"):
            call()
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="^y holds the label 1000000000000001"):
        bc.spom(0, [SMALL], y + 10**15, 0.1, n_epochs=1)  # was JAX RESOURCE_EXHAUSTED
    with pytest.raises(ValueError, match="^y holds the label 1000000000000001"):
        bc.spom_kernel(0, [SMALL @ SMALL.T], y + 10**15, 0.1, n_epochs=1)
    # ids near 1e16 are names: the same value as 0..k-1 (was "Unable to allocate 7.1 PiB")
    assert dc_log_posterior(y * 10**16 + 3, y) == pytest.approx(dc_log_posterior(y, y))
    with pytest.raises(ValueError, match="^n_neighbors=30 must be < the number of rows of X"):
        knn_search(SMALL, 30)
    with pytest.raises(ValueError, match="^D must be a square matrix"):
        classical_mds(np.ones((3, 4)))
    with pytest.raises(TypeError, match="^theta must be a sequence"):  # "object of type 'int' has no len()"
        proximal_update(5, [np.zeros(2)], 0.1, [("l2", 0.1)])
    from numpyro.handlers import seed, trace

    from bayesclust.models.did import did_clusters

    with pytest.raises(ValueError, match="^labels must have at least 1 row"):  # numpyro's assertion
        trace(seed(did_clusters, 0)).get_trace(np.ones(0), np.zeros(0, int), 2)
    with pytest.raises(ValueError, match="^coassoc must contain at least two partitions"):
        bc.cspa(0, np.arange(5), 2)  # said "ensemble" of a co-association argument
    with pytest.raises(ValueError, match="^ensemble must contain at least two partitions"):
        bc.hypergraph_consensus(0, np.arange(5), 2)
