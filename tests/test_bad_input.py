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
