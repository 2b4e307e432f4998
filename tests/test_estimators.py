"""The scikit-learn facade: the estimator contract and agreement with the functional core."""

import functools

import numpy as np
import pytest
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


#: The checks a variant of an estimator family runs: those that reach the variant's own
#: code -- its fit (data shapes, dtypes, one sample, one feature, reproducibility, the
#: attributes it sets) and its predict (row subsets and order, pickling).  The family's
#: first estimator runs scikit-learn's whole suite; the checks left out here (parameter
#: validation, input validation -- NaN, object dtype, sparse, complex, empty data --,
#: n_features_in_, tags, fit's signature, get/set_params) exercise code the variants share
#: with it, before or after the variant's branch.
VARIANT_CHECKS = frozenset({
    "check_estimator_cloneable", "check_clustering", "check_clusterer_compute_labels_predict",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_estimators_dtypes",
    "check_fit_idempotent", "check_dont_overwrite_parameters", "check_dict_unchanged",
    "check_methods_subset_invariance", "check_methods_sample_order_invariance",
    "check_estimators_pickle", "check_readonly_memmap_input", "check_estimators_fit_returns_self",
    "check_sample_weights_list", "check_sample_weights_not_an_array", "check_sample_weights_shape",
    "check_sample_weights_not_overwritten",
})


def variant_checks(estimators, expected_failed_checks=None, only=VARIANT_CHECKS, rest=None):
    """``parametrize_with_checks`` restricted to the checks named in ``only``.

    ``rest=pytest.mark.long`` keeps the other checks of the suite too, under that mark
    (``make test-all`` runs the whole suite, ``make test`` the checks in ``only``).
    """
    params = []
    for est in estimators:
        failed = expected_failed_checks(est) if expected_failed_checks else None
        for item in estimator_checks_generator(est, legacy=True, mark="xfail",
                                               expected_failed_checks=failed):
            values = item.values if hasattr(item, "values") else item
            marks = list(getattr(item, "marks", ()))
            if _check_name(values[1]) not in only:
                if rest is None:
                    continue
                marks.append(rest)
            params.append(pytest.param(*values, marks=marks))
    assert params, "no check selected"
    return pytest.mark.parametrize("estimator, check", params, ids=_get_check_estimator_ids)


# The family's full suite on the default estimator; its variants (a fixed lam, shuffled
# order) run the checks that reach their own code (VARIANT_CHECKS).
@parametrize_with_checks([DPMeans()], expected_failed_checks=_expected_failed_checks)
def test_sklearn_contract(estimator, check):
    check(estimator)


@variant_checks([DPMeans(lam=2.0), DPMeans(shuffle=True, random_state=0)],
                expected_failed_checks=_expected_failed_checks)
def test_sklearn_contract_variants(estimator, check):
    check(estimator)


# The sampled estimators' check suites, with the shortest chains that still pass
# check_clustering (every new data shape compiles the sampler afresh; longer runs also
# grow the cluster buffers, each growth another compile).  sigma2 is the checks' own
# data scale: check_clustering fits standardised blobs whose clusters have variance ~0.1
# per feature (the DP mixture's "auto" default is tested in test_dp_data_scaled.py).
#
# The whole suite runs once per family: on DPGaussianMixture's spherical default.  Its
# variants run the checks that reach their own code (VARIANT_CHECKS) -- the diag / full
# covariances their own fit (gibbs_dp_gaussian) and predictive; HDPGaussianMixture its
# sampler (gibbs_hdp_gmm, two chains: the multi-chain path) and its parameters (its
# input validation, tags and point-partition predictive are DPGaussianMixture's, its
# grouping HardHDP's, whose whole suite runs below).  The rest of HDPGaussianMixture's
# suite runs under `long`.  It sees one data set (the checks cannot pass `groups`).
@parametrize_with_checks(
    [DPGaussianMixture(sigma2=0.1, num_warmup=20, num_samples=20, random_state=0)],
)
def test_sklearn_contract_sampled(estimator, check):
    check(estimator)


@variant_checks(
    [HDPGaussianMixture(sigma2=0.1, num_warmup=5, num_samples=5, num_chains=2, random_state=0)],
    only=VARIANT_CHECKS | {"check_param_validation"}, rest=pytest.mark.long,
)
def test_sklearn_contract_hdp_gaussian_mixture(estimator, check):
    check(estimator)


@variant_checks(
    [DPGaussianMixture(covariance_type="diag", num_warmup=5, num_samples=5, num_chains=1,
                       random_state=0),
     DPGaussianMixture(covariance_type="full", num_warmup=5, num_samples=5, num_chains=1,
                       random_state=0)],
)
def test_sklearn_contract_sampled_variants(estimator, check):
    check(estimator)


# PPC's consensus estimator, as AspectConsensus's in tests/test_consensus.py: a small ensemble
# and few iterations (every check's data shape compiles the growth-transform loop afresh).
@pytest.mark.slow  # ~25 s
@parametrize_with_checks(
    [PairwiseConsensus(n_clusters=2, n_partitions=10, n_init=2, max_iter=100, random_state=0)],
)
def test_sklearn_contract_pairwise_consensus(estimator, check):
    check(estimator)


@parametrize_with_checks([__import__("bayesclust").HypergraphConsensus(2, n_partitions=10, random_state=0),
                          __import__("bayesclust").HypergraphConsensus(2, method="mcla", n_partitions=10,
                                                                       random_state=0)])
def test_sklearn_contract_hypergraph_consensus(estimator, check):
    check(estimator)


@parametrize_with_checks([__import__("bayesclust").KLMeansConsensus(2, n_partitions=10, random_state=0)])
def test_sklearn_contract_kl_means_consensus(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([ACCCS(n_clusters=2, n_partitions=5, generations=3, population=4, random_state=0)])
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


# --------------------------------------------------------------------------- #
# HardHDP
# --------------------------------------------------------------------------- #
from bayesclust import HardHDP, hard_hdp  # noqa: E402
from bayesclust.datasets import hdp_groups  # noqa: E402


# Without `groups` (the checks cannot pass one) all rows form one data set.
@parametrize_with_checks([HardHDP()])
def test_sklearn_contract_hard_hdp(estimator, check):
    check(estimator)


@variant_checks([HardHDP(lam_local=1.0, lam_global=1.0)])
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
    est = HDPGaussianMixture(sigma2=0.09, num_warmup=40, num_samples=40, num_chains=2,
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
                         rho2=est.rho2_, num_warmup=40, num_samples=40, num_chains=2,
                         progress_bar=False)
    np.testing.assert_array_equal(post.labels, est.posterior_.labels)


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


@parametrize_with_checks([__import__("bayesclust").GMDID(k_max=4, random_state=0),
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
