"""The scikit-learn facade: the estimator contract and agreement with the functional core."""

import functools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    _get_check_estimator_ids,
    estimator_checks_generator,
    parametrize_with_checks,
)

from bayesclust import (
    ACCCS,
    DPGaussianMixture,
    DPMeans,
    HDPGaussianMixture,
    HypergraphConsensus,
    KLMeansConsensus,
    PairwiseConsensus,
    dp_means,
    farthest_first_lambda,
)

WEIGHT_EQUIVALENCE = (
    "sample_weight is not equivalent to repeating samples: a point of weight w opens a "
    "cluster when w * d > lam, repeated rows when d > lam (as for KMeans)."
)


N_CLUSTERS_UNUSED = (
    "check_clustering takes n_clusters as a bound on the clusters found; with lam given, "
    "DPMeans ignores n_clusters (it only chooses lam by farthest-first) and DP-means finds "
    "more clusters in the check's noisy blobs"
)


def _expected_failed_checks(estimator):
    failed = {
        "check_sample_weight_equivalence_on_dense_data": WEIGHT_EQUIVALENCE,
        "check_sample_weight_equivalence_on_sparse_data": WEIGHT_EQUIVALENCE,
    }
    if estimator.lam is not None:
        failed["check_clustering"] = N_CLUSTERS_UNUSED
    return failed


def _check_name(check) -> str:
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


# --------------------------------------------------------------------------- #
# scikit-learn's check suite: once in full per estimator class, a short list per variant
# --------------------------------------------------------------------------- #
# Every estimator class runs scikit-learn's whole suite once, on its family's default (or
# cheapest sensible) settings.  A *variant* -- the same class with another constructor
# option -- runs VARIANT_CHECKS only, plus check_clustering where the option changes the
# clustering algorithm itself.  What the variants no longer run, and why that is enough:
#
# * input validation (NaN/inf, object, complex, sparse and empty data, 1-d X,
#   check_fit2d_1sample/1feature; bad parameters are the *bad_parameters tests' here and
#   tests/test_bad_input.py's: scikit-learn's check_param_validation is not in the suite
#   it runs on other libraries' estimators), n_features_in_ (check_n_features_in*), tags, fit's signature (check_fit_score_takes_y),
#   check_dont_overwrite_parameters / check_estimators_overwrite_params /
#   check_dict_unchanged, sample-weight checks, pipeline and array-API checks: every fit
#   runs `_validate_params` and `validate_data` before it branches on the option, and the
#   attributes are set by code shared with the family's default, so the family's full
#   run exercises the same lines;
# * predict's subset/order invariance and readonly memmaps: predict does not depend on
#   the options below (the nearest centre, or the point-partition predictive).
#
# Variant                      what the option changes       checks it still runs
# DPMeans(lam=2.0)             lam given, no default lam     VARIANT_CHECKS (its
#                                                            check_clustering is an xfail)
# DPMeans(shuffle=True)        the order points are visited  VARIANT_CHECKS + clustering
# DPGaussianMixture diag/full  another sampler                VARIANT_CHECKS + clustering
#                              (gibbs_dp_gaussian)
# HypergraphConsensus(mcla)    the consensus function        VARIANT_CHECKS + clustering
# HardHDP(lam_local, lam_glob) lams given, no farthest-first VARIANT_CHECKS + clustering
# HardDC(n_clusters=3)         lam from farthest-first       VARIANT_CHECKS (clustering
#                                                            needs y: an xfail)
#
# One class runs its whole suite under `long` only (`make test-all`):
# HDPGaussianMixture, whose sampler compiles afresh for every number of rows; `make
# test` runs HDP_CHECKS on it (see there).
#
# Each check in VARIANT_CHECKS fits data of one shape (rows x features x dtype), and
# every new shape compiles the variant's programs afresh: the list is the few checks
# that cover the variant's own fit -> attributes -> predict path.

#: The checks a variant runs (see the table above).
VARIANT_CHECKS = frozenset({
    # clone and get_params: the constructor stores the option (no fit).
    "check_estimator_cloneable", "check_get_params_invariance",
    # fit then fit_predict agree with labels_ (20 x 2).
    "check_clusterer_compute_labels_predict",
    # float32 / float64 / integer input through the variant's fit and predict (20 x 5).
    "check_estimators_dtypes",
    # random_state reproduces the fit and predict's results (80 x 2).
    "check_fit_idempotent",
    # the fitted attributes pickle and predict the same afterwards (30 x 2).
    "check_estimators_pickle",
})


def variant_checks(estimators, expected_failed_checks=None, only=VARIANT_CHECKS, rest=None):
    """``parametrize_with_checks`` restricted to the checks named in ``only``.

    ``rest=pytest.mark.long`` keeps the other checks of the suite too, under that mark
    (``make test-all`` runs the whole suite, ``make test`` the checks in ``only``).
    """
    params = []
    for est in estimators:
        failed = expected_failed_checks(est) if expected_failed_checks else None
        items = list(estimator_checks_generator(est, legacy=True, mark="xfail",
                                                expected_failed_checks=failed))
        names = {_check_name((item.values if hasattr(item, "values") else item)[1])
                 for item in items}
        # A misspelt or retired check name would drop that check silently.
        assert only <= names, f"not in scikit-learn's suite for {est!r}: {sorted(only - names)}"
        for item in items:
            values = item.values if hasattr(item, "values") else item
            marks = list(getattr(item, "marks", ()))
            if _check_name(values[1]) not in only:
                if rest is None:
                    continue
                marks.append(rest)
            params.append(pytest.param(*values, marks=marks))
    assert params, "no check selected"
    return pytest.mark.parametrize("estimator, check", params, ids=_get_check_estimator_ids)


#: VARIANT_CHECKS and check_clustering: for variants that change the clustering itself.
VARIANT_CLUSTERING_CHECKS = VARIANT_CHECKS | {"check_clustering"}


@parametrize_with_checks([DPMeans()], expected_failed_checks=_expected_failed_checks)
def test_sklearn_contract(estimator, check):
    check(estimator)


@variant_checks([DPMeans(lam=2.0)], expected_failed_checks=_expected_failed_checks)
def test_sklearn_contract_variants(estimator, check):
    check(estimator)


@variant_checks([DPMeans(shuffle=True, random_state=0)],
                expected_failed_checks=_expected_failed_checks, only=VARIANT_CLUSTERING_CHECKS)
def test_sklearn_contract_shuffle_variant(estimator, check):
    check(estimator)


# The sampled estimators' check suites, with the shortest single chains that still pass
# check_clustering (every new data shape compiles the sampler afresh: gibbs_dp_gmm,
# gibbs_dp_gaussian and gibbs_hdp_gmm do not pad rows; longer runs also grow the cluster
# buffers, each growth another compile).  sigma2 is the checks' own data scale:
# check_clustering fits standardised blobs whose clusters have variance ~0.1 per feature
# (the DP mixture's "auto" default is tested in test_dp_data_scaled.py).  One chain: the
# checks test the estimator, not the chains' batching, which the samplers' own tests run
# with several chains (tests/test_gibbs.py, tests/test_gibbs_gaussian.py) and
# test_hdp_gaussian_mixture_matches_functional_core_and_splits_groups below.
@parametrize_with_checks(
    [DPGaussianMixture(sigma2=0.1, num_warmup=5, num_samples=5, num_chains=1, random_state=0)],
)
def test_sklearn_contract_sampled(estimator, check):
    check(estimator)


# HDPGaussianMixture sees one data set (the checks cannot pass `groups`).  Its whole
# suite runs under `long` (`make test-all`): gibbs_hdp_gmm compiles afresh for every
# number of rows (5-9 CPU-s a shape, ~90 CPU-s for the suite's ~20 shapes).  `make test`
# runs what reaches its own code: its sampler (check_clustering, check_fit_idempotent,
# pickling) and its parameters (clone, get_params; their validation is in
# test_hdp_gaussian_mixture_bad_parameters); its input validation, tags and
# point-partition predictive are DPGaussianMixture's, its grouping HardHDP's, whose whole
# suites run here.
HDP_CHECKS = frozenset({
    "check_estimator_cloneable", "check_get_params_invariance",
    "check_clustering", "check_fit_idempotent", "check_estimators_pickle",
})


@variant_checks(
    [HDPGaussianMixture(sigma2=0.1, num_warmup=5, num_samples=5, thin=1, num_chains=1,
                        random_state=0)],
    only=HDP_CHECKS, rest=pytest.mark.long,
)
def test_sklearn_contract_hdp_gaussian_mixture(estimator, check):
    check(estimator)


@variant_checks(
    [DPGaussianMixture(covariance_type="diag", num_warmup=5, num_samples=5, num_chains=1,
                       random_state=0),
     DPGaussianMixture(covariance_type="full", num_warmup=5, num_samples=5, num_chains=1,
                       random_state=0)],
    only=VARIANT_CLUSTERING_CHECKS,
)
def test_sklearn_contract_sampled_variants(estimator, check):
    check(estimator)


# PPC's consensus estimator, as AspectConsensus's in tests/test_consensus.py: a small ensemble
# and few iterations (every check's data shape compiles the growth-transform loop afresh).
@pytest.mark.slow  # ~45 CPU-s
@parametrize_with_checks(
    [PairwiseConsensus(n_clusters=2, n_partitions=10, n_init=1, max_iter=100, random_state=0)],
)
def test_sklearn_contract_pairwise_consensus(estimator, check):
    check(estimator)


@parametrize_with_checks([HypergraphConsensus(2, n_partitions=10, random_state=0)])
def test_sklearn_contract_hypergraph_consensus(estimator, check):
    check(estimator)


@variant_checks([HypergraphConsensus(2, method="mcla", n_partitions=10, random_state=0)],
                only=VARIANT_CLUSTERING_CHECKS)
def test_sklearn_contract_hypergraph_consensus_mcla(estimator, check):
    check(estimator)


@parametrize_with_checks([KLMeansConsensus(2, n_partitions=10, random_state=0)])
def test_sklearn_contract_kl_means_consensus(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([ACCCS(n_clusters=2, n_partitions=10, generations=3, population=4,
                                random_state=0)])
def test_sklearn_contract_acccs(estimator, check):
    check(estimator)


def test_acccs_estimator_matches_functional_core():
    import jax

    from bayesclust import acccs

    parts = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]])
    est = ACCCS(2, generations=10, random_state=3).fit(ensemble=parts, must_link=[[0, 1]], cannot_link=[[0, 5]])
    from bayesclust.estimators._base import _key_from_random_state

    _, k_ga = jax.random.split(_key_from_random_state(3))
    res = acccs(k_ga, parts, [[0, 1]], [[0, 5]], 2, generations=10)
    np.testing.assert_array_equal(est.labels_, res.labels)
    assert est.objective_ == res.objective and est.acc_ == res.acc
    assert est.n_iter_ == res.n_iter == 10
    with pytest.raises(ValueError, match="beta"):
        ACCCS(beta=2.0).fit(ensemble=parts)
    with pytest.raises(ValueError, match="must_link"):
        ACCCS().fit(ensemble=parts, must_link=[[0, 9]])


def test_estimator_matches_functional_core():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3)) + rng.integers(0, 4, size=(120, 1)) * 4.0
    est = DPMeans(lam=6.0, n_init=1, init="mean").fit(X)  # Algorithm 1 exactly
    res = dp_means(X, 6.0)
    assert np.array_equal(est.labels_, res.labels)
    np.testing.assert_allclose(est.cluster_centers_, res.centers)
    assert est.n_clusters_ == res.n_clusters
    assert est.objective_ == res.objective
    assert est.n_iter_ == res.n_iter


def test_n_clusters_starts_at_farthest_first():
    from bayesclust.datasets import three_gaussians

    X, _ = three_gaussians(0)
    est = DPMeans(n_clusters=3, n_init=1, init="mean").fit(X)  # Kulis & Jordan's protocol
    assert est.lam_ == pytest.approx(farthest_first_lambda(X, 3))
    assert est.n_clusters_ == 3
    # The default k-means++ starts may open another number at that lam: the hint then
    # searches lam for them (tests/test_defaults.py); the fit at the found lam is an
    # ordinary fit.
    best = DPMeans(n_clusters=3, random_state=0).fit(X)
    assert best.n_clusters_ == 3
    at_farthest_first = DPMeans(lam=est.lam_, random_state=0).fit(X).n_clusters_
    assert (best.lam_ == est.lam_) == (at_farthest_first == 3)
    again = DPMeans(lam=best.lam_, random_state=0).fit(X)
    assert np.array_equal(again.labels_, best.labels_)


def test_predict_on_training_data_equals_labels_at_convergence():
    from bayesclust.datasets import three_gaussians

    X, _ = three_gaussians(1)
    est = DPMeans(n_clusters=3).fit(X)
    assert est.converged_
    assert np.array_equal(est.predict(X), est.labels_)


def test_shuffle_is_reproducible_from_random_state():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    a = DPMeans(lam=0.5, shuffle=True, random_state=7).fit(X).labels_
    b = DPMeans(lam=0.5, shuffle=True, random_state=7).fit(X).labels_
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(lam=0.0), "lam"),
        (dict(lam=-2.0), "lam"),
        (dict(n_clusters=0), "n_clusters"),
        (dict(max_iter=0), "max_iter"),
        (dict(n_init=0), "n_init"),
        (dict(init="random"), "init"),
    ],
)
def test_bad_parameters(params, match):
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match=match):
        DPMeans(**params).fit(X)


def test_bad_sample_weight():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="[Nn]egative"):
        DPMeans(lam=1.0).fit(X, sample_weight=[1, 1, -1, 1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        DPMeans(lam=1.0).fit(X, sample_weight=[1, 1])


# --------------------------------------------------------------------------- #
# DPGaussianMixture (sampled)
# --------------------------------------------------------------------------- #



def test_dp_gaussian_mixture_fits_and_predicts():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 0.3, (25, 2)), rng.normal(4, 0.3, (25, 2))])
    est = DPGaussianMixture(sigma2=0.1, num_warmup=60, num_samples=60, random_state=0).fit(X)
    assert est.n_clusters_ == 2
    assert len(set(est.labels_[:25])) == 1 and est.labels_[0] != est.labels_[-1]
    proba = est.predict_proba(np.array([[0.0, 0.0], [4.0, 4.0]]))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert np.array_equal(est.predict(X), est.labels_)
    np.testing.assert_allclose(est.cluster_centers_[est.labels_[0]], X[:25].mean(0), atol=0.05)
    assert est.posterior_.n_draws == 60


def test_dp_gaussian_mixture_bad_parameters():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="sigma2"):
        DPGaussianMixture(sigma2=0.0).fit(X)
    with pytest.raises(ValueError, match="sampler"):
        DPGaussianMixture(sampler="nuts").fit(X)
    # A prior is a NumPyro distribution, never a pair of its parameters.
    with pytest.raises(TypeError, match="'alpha_prior' parameter .* must be an instance of"):
        DPGaussianMixture(alpha_prior=(2.0, 1.0)).fit(X)


def test_keep_draws_thins_or_summarises_the_posterior_not_the_fit():
    """labels_, centres and predictions come from every draw whatever keep_draws keeps;
    posterior_ holds the draws kept (the same run's, thinned evenly) or their summaries."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 0.3, (25, 2)), rng.normal(4, 0.3, (25, 2))])
    base = DPGaussianMixture(sigma2=0.1, num_warmup=60, num_samples=60, random_state=0,
                             keep_draws="all").fit(X)
    full = base.posterior_
    assert full.n_draws == 60 and full.labels.dtype == np.int8
    for keep in (7, "summary"):
        est = clone(base).set_params(keep_draws=keep).fit(X)
        np.testing.assert_array_equal(est.labels_, base.labels_)
        np.testing.assert_array_equal(est.cluster_centers_, base.cluster_centers_)
        np.testing.assert_array_equal(est.predict_proba(X), base.predict_proba(X))
        post = est.posterior_
        if keep == 7:
            idx = np.round(np.linspace(0, 59, 7)).astype(int)
            np.testing.assert_array_equal(post.labels, full.labels[:, idx])
            np.testing.assert_array_equal(post.params["sigma2"], full.params["sigma2"][:, idx])
            assert post.n_draws == 7 and post.co_clustering().shape == (50, 50)
        else:
            assert post.n_draws == 60 and post.k_distribution() == full.k_distribution()
            assert post.diagnostics() == full.diagnostics()
            np.testing.assert_array_equal(post.co_clustering(), full.co_clustering())
            np.testing.assert_array_equal(post.point_estimate("vi"), full.point_estimate("vi"))
            with pytest.raises(ValueError, match="keeps no label draws"):
                post.relabel()


@pytest.mark.parametrize("bad", [0, -1, 2.5, "some", None])
def test_keep_draws_bad_values_name_it(bad):
    X = np.arange(10.0).reshape(5, 2)
    for est in (DPGaussianMixture(keep_draws=bad), HDPGaussianMixture(keep_draws=bad)):
        with pytest.raises(ValueError, match="'keep_draws' parameter"):
            est.fit(X)


# Iris (150 x 4) with the default keep_draws: 100 draws per chain of 8 chains are kept
# (the storage of a default fit, whose 1,000 draws per chain pickled to 9-13 MB); 200
# draws of one sweep each keep the run short.  HDPGaussianMixture compiles its sampler
# afresh for the shape (~6 CPU-s): `long`.
@pytest.mark.parametrize("cls", [
    DPGaussianMixture, pytest.param(HDPGaussianMixture, marks=pytest.mark.long)])
def test_a_default_fit_on_iris_pickles_under_a_megabyte(cls):
    import pickle
    import warnings

    from sklearn.datasets import load_iris

    X = load_iris().data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short run may warn about convergence
        est = cls(num_warmup=50, num_samples=200, thin=1, random_state=0).fit(X)
    assert est.posterior_.n_draws == 100 and est.posterior_.n_chains == 8
    blob = pickle.dumps(est)
    assert len(blob) < 2**20, len(blob)
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.posterior_.diagnostics()["n_clusters"] == est.posterior_.diagnostics()["n_clusters"]
    np.testing.assert_array_equal(back.posterior_.co_clustering(), est.posterior_.co_clustering())


# --------------------------------------------------------------------------- #
# HardHDP
# --------------------------------------------------------------------------- #
from bayesclust import HardHDP, hard_hdp  # noqa: E402
from bayesclust.datasets import hdp_groups  # noqa: E402


# Without `groups` (the checks cannot pass one) all rows form one data set.
@parametrize_with_checks([HardHDP()])
def test_sklearn_contract_hard_hdp(estimator, check):
    check(estimator)


@variant_checks([HardHDP(lam_local=1.0, lam_global=1.0)], only=VARIANT_CLUSTERING_CHECKS)
def test_sklearn_contract_hard_hdp_variant(estimator, check):
    check(estimator)


def test_hard_hdp_estimator_matches_functional_core():
    groups, _, _ = hdp_groups(0)
    X = np.concatenate(groups)
    ids = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    # Rows of the data sets interleaved round-robin: each data set keeps its own
    # order (Algorithm 2 depends on it), the estimator must regroup them.
    pos = np.concatenate([np.arange(len(g)) for g in groups])
    perm = np.lexsort((ids, pos))
    est = HardHDP(lam_local=0.1, lam_global=0.2).fit(X[perm], group_ids=ids[perm])
    res = hard_hdp(groups, 0.1, 0.2)
    back = np.empty_like(est.labels_)
    back[perm] = est.labels_
    assert np.array_equal(back, np.concatenate(res.labels))
    assert np.array_equal(est.n_local_, res.n_local)
    assert est.n_clusters_ == res.n_global
    assert np.isclose(est.objective_, res.objective)
    assert np.array_equal(est.predict(est.cluster_centers_), np.arange(est.n_clusters_))


def test_hard_hdp_estimator_bad_groups():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="group_ids"):
        HardHDP(lam_local=1.0, lam_global=1.0).fit(X, group_ids=np.zeros(9, int))


# --------------------------------------------------------------------------- #
# HDPGaussianMixture
# --------------------------------------------------------------------------- #
from bayesclust import gibbs_hdp_gmm  # noqa: E402


def test_hdp_gaussian_mixture_matches_functional_core_and_splits_groups():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    groups = [np.concatenate([centres[c] + 0.3 * rng.standard_normal((8, 2)) for c in use])
              for use in ([0, 1], [1, 2], [0, 2])]
    X = np.concatenate(groups)
    ids = np.repeat([7, 3, 5], 16)  # data sets processed in sorted id order: 3, 5, 7
    est = HDPGaussianMixture(sigma2=0.09, num_warmup=40, num_samples=40, thin=1, num_chains=2,
                             random_state=1)
    est.fit(X, group_ids=ids)
    assert est.n_clusters_ == 3
    truth = np.concatenate([np.repeat(use, 8) for use in ([0, 1], [1, 2], [0, 2])])
    from bayesclust.metrics import nmi

    assert nmi(truth, est.labels_) == 1.0
    np.testing.assert_array_equal(est.group_order_, [3, 5, 7])
    np.testing.assert_array_equal(est.n_local_, [2, 2, 2])
    for g in (3, 5, 7):  # two local clusters per data set, each inside one global cluster
        loc, glob = est.local_labels_[ids == g], est.labels_[ids == g]
        assert nmi(loc, glob) == 1.0
    assert np.array_equal(est.predict(X), est.labels_)
    np.testing.assert_allclose(est.predict_proba(X).sum(1), 1.0)
    # The posterior is the functional core's with the same key and grouping.
    from bayesclust.estimators._base import _key_from_random_state

    assert est.sigma2_ == 0.09 and est.rho2_ == pytest.approx(0.75 * X.var(0).mean())
    post = gibbs_hdp_gmm(_key_from_random_state(1), X, group_ids=ids, sigma2=0.09,
                         rho2=est.rho2_, num_warmup=40, num_samples=40, thin=1, num_chains=2,
                         progress_bar=False)
    np.testing.assert_array_equal(post.labels, est.posterior_.labels)
    # Fewer draws kept: the same fit (local partitions too), the draws of the same run.
    few = clone(est).set_params(keep_draws=5).fit(X, group_ids=ids)
    np.testing.assert_array_equal(few.labels_, est.labels_)
    np.testing.assert_array_equal(few.local_labels_, est.local_labels_)
    idx = np.round(np.linspace(0, 39, 5)).astype(int)
    np.testing.assert_array_equal(few.posterior_.params["local_labels"],
                                  post.params["local_labels"][:, idx])
    assert few.posterior_.labels_by_group()[0].shape == (2, 5, 16)


def test_hdp_gaussian_mixture_bad_parameters():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="gamma"):
        HDPGaussianMixture(gamma=0.0).fit(X)
    with pytest.raises(ValueError, match="group_ids"):
        HDPGaussianMixture().fit(X, group_ids=[0, 1])
    with pytest.raises(TypeError, match="'gamma_prior' parameter .* must be an instance of"):
        HDPGaussianMixture(gamma_prior=(1.5, 2.0)).fit(X)
    with pytest.raises(TypeError, match="unexpected keyword argument 'groups'"):
        HDPGaussianMixture().fit(X, groups=[0, 0, 0, 1, 1])


# --------------------------------------------------------------------------- #
# DiscriminativeClustering
# --------------------------------------------------------------------------- #
from bayesclust.estimators import DiscriminativeClustering  # noqa: E402


def test_discriminative_clustering_matches_functional_core_and_scores():
    from bayesclust.datasets import dc_toy
    from bayesclust.estimators._base import _key_from_random_state
    from bayesclust.inference.discriminative.dc_map import dc_map
    from bayesclust.metrics import dc_log_posterior

    X, c = dc_toy(0, 2000)
    y = np.array(["low", "high"])[c]  # any class values
    est = DiscriminativeClustering(n_clusters=4, smooth_std=0.3, random_state=0).fit(X, y)
    codes = np.searchsorted(est.classes_, y)
    res = dc_map(_key_from_random_state(0), X, codes, 4, 0.3, init="kmeans")
    np.testing.assert_allclose(est.cluster_centers_, res.prototypes)
    assert np.array_equal(est.predict(X), est.labels_)
    assert est.score(X, y) == pytest.approx(dc_log_posterior(est.labels_, codes, n_clusters=4))
    assert est.score(X, y) == pytest.approx(est.log_posterior_)
    with pytest.raises(ValueError, match="not seen"):
        est.score(X[:3], ["low", "high", "middle"])


def test_discriminative_clustering_bad_input():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="smooth_std"):
        DiscriminativeClustering(smooth_std=0.0).fit(X, np.arange(10) % 2)
    with pytest.raises(ValueError, match="n_clusters"):
        DiscriminativeClustering(n_clusters=11).fit(X, np.arange(10) % 2)
    with pytest.raises(ValueError):
        DiscriminativeClustering().fit(X, np.arange(9) % 2)


@parametrize_with_checks([__import__("bayesclust").EmbeddedConsensus(3, n_partitions=10, random_state=0)])
def test_embedded_consensus_sklearn_contract(estimator, check):
    check(estimator)


# The dissimilarity-increments estimators find the number of clusters themselves.
@parametrize_with_checks([__import__("bayesclust").SLDID(),
                          __import__("bayesclust").SLAGLO(taus=[2.0, 6.0])])
def test_sklearn_contract_did(estimator, check):
    check(estimator)


@parametrize_with_checks([__import__("bayesclust").GMDID(k_max=2, random_state=0),
                          __import__("bayesclust").MAPDIDClassifier(k_max=2, random_state=0)])
def test_sklearn_contract_gmdid_map_did(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- #
# HardDC (ours: docs/deviations.md#hard-dc-model)
# --------------------------------------------------------------------------- #
from bayesclust.estimators import HardDC  # noqa: E402

#: scikit-learn's clustering check fits without y; HardDC needs the auxiliary classes
#: (its tags say so: target_tags.required).
_HARD_DC_NEEDS_Y = {
    "check_clustering": "check_clustering fits without y; HardDC needs the auxiliary classes"}


@parametrize_with_checks([HardDC(lam=2.0, xi=0.5)],
                         expected_failed_checks=lambda est: _HARD_DC_NEEDS_Y)
def test_sklearn_contract_hard_dc(estimator, check):
    check(estimator)


@variant_checks([HardDC(n_clusters=3)], expected_failed_checks=lambda est: _HARD_DC_NEEDS_Y)
def test_sklearn_contract_hard_dc_farthest_first(estimator, check):
    check(estimator)


def test_hard_dc_matches_functional_core():
    from bayesclust.datasets import dc_toy
    from bayesclust.inference.hard.hard_dc import hard_dc

    X, c = dc_toy(0, 300)
    y = np.array(["low", "high"])[c]
    est = HardDC(lam=2.0, xi=0.7).fit(X, y)
    res = hard_dc(X, np.searchsorted(est.classes_, y), 2.0, 0.7)
    assert np.array_equal(est.labels_, res.labels)
    np.testing.assert_array_equal(est.cluster_centers_, res.centers)
    assert est.objective_ == res.objective and est.n_clusters_ == res.n_clusters
    new = X[:50] + 0.01
    d2 = ((new[:, None, :] - est.cluster_centers_[None]) ** 2).sum(-1)
    assert np.array_equal(est.predict(new), d2.argmin(1))
    with pytest.raises(ValueError, match="xi"):
        HardDC(xi=-1.0).fit(X, y)
    with pytest.raises(ValueError):
        HardDC().fit(X, y[:-1])
