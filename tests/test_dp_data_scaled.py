"""The DP Gaussian mixture's data-scaled default hyper-parameters (``sigma2`` / ``rho2`` "auto")."""

import numpy as np
import pytest

from bayesclust import DPGaussianMixture
from bayesclust.models.dp_gmm import data_scaled_variances

_FAST = dict(num_warmup=60, num_samples=60, num_chains=2)


def _blobs(scale):
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.concatenate([c + rng.normal(0, 0.5, (30, 2)) for c in centres])
    return scale * X, np.repeat(np.arange(3), 30)


def test_auto_is_a_share_of_the_mean_feature_variance():
    X = np.random.default_rng(0).normal(size=(50, 3)) * [1.0, 4.0, 0.1]
    s2 = np.trace(np.cov(X.T, bias=True)) / 3  # the reference: the biased covariance's trace
    sigma2, rho2 = data_scaled_variances(X)
    assert sigma2 == pytest.approx(s2 / 4)
    assert rho2 == pytest.approx(3 * s2 / 4)
    assert sigma2 + rho2 == pytest.approx(s2)  # prior predictive variance = the data's
    assert data_scaled_variances(X, sigma2=2.0, rho2="auto") == (2.0, pytest.approx(3 * s2 / 4))


@pytest.mark.parametrize("kwargs, match", [
    (dict(sigma2="automatic"), "sigma2"), (dict(rho2=-1.0), "rho2"), (dict(sigma2=np.nan), "sigma2")])
def test_bad_values_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        data_scaled_variances(np.eye(3), **kwargs)


def test_data_without_spread_take_the_unit_scale():
    assert data_scaled_variances(np.ones((5, 2))) == (0.25, 0.75)
    est = DPGaussianMixture(random_state=0, **_FAST).fit(np.ones((5, 2)))
    assert est.n_clusters_ == 1


def test_auto_on_infinite_data_is_a_clear_error():
    X = np.array([[0.0, 1e308], [0.0, -1e308], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"sigma2=.auto. needs X.s variance, which overflows float64"):
        data_scaled_variances(X)


def test_estimator_rejects_other_strings():
    with pytest.raises(ValueError, match="rho2"):
        DPGaussianMixture(rho2="data", **_FAST).fit(np.eye(4))


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_default_finds_the_clusters_in_any_unit(scale):
    """Three separated blobs in metres, millimetres or kilometres: three clusters each time
    (a fixed ``sigma2=1`` puts the 1e-3 version in one cluster)."""
    X, y = _blobs(scale)
    est = DPGaussianMixture(random_state=0, **_FAST).fit(X)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, est.labels_) == pytest.approx(1.0)
    assert est.sigma2_ == pytest.approx(data_scaled_variances(X)[0])


def test_partition_does_not_depend_on_units():
    X, _ = _blobs(1.0)
    X = X + np.random.default_rng(1).normal(0, 1.5, X.shape)  # overlapping: a real posterior
    a = DPGaussianMixture(random_state=0, **_FAST).fit(X)
    b = DPGaussianMixture(random_state=0, **_FAST).fit(250.0 * X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(b.cluster_centers_, 250.0 * a.cluster_centers_, rtol=1e-4)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(250.0 * X), atol=1e-5)
