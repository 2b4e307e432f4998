"""The DP Gaussian mixture program (Kulis & Jordan §2.2, §3.1) and the alpha(lambda) map.

Tolerances are next to each assertion: 1e-12 relative for float64 closed forms,
1e-10 absolute for float64 log densities against SciPy, 1e-5 for float32 sums.
"""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from numpyro import handlers
from numpyro.infer import Predictive
from numpyro.infer.util import log_density, log_likelihood
from scipy import stats
from scipy.special import logsumexp

from bayesclust.models.dp_gmm import (
    DEFAULT_TRUNCATION,
    TruncationWarning,
    alpha_from_lam,
    check_truncation,
    dp_gmm,
    log_alpha_from_lam,
    truncation_mass,
)
from bayesclust.models.mixture import IsotropicGaussianMixture

# --------------------------------------------------------------------------- #
# alpha(lambda)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "lam, sigma2, rho2, d",
    [(1.0, 0.5, 100.0, 2), (4.0, 1.0, 100.0, 1), (0.3, 2.0, 10.0, 5), (10.0, 3.0, 100.0, 13), (0.0, 1.0, 1.0, 3)],
)
def test_alpha_from_lam_equals_formula(lam, sigma2, rho2, d):
    expected = (1.0 + rho2 / sigma2) ** (d / 2) * math.exp(-lam / (2.0 * sigma2))
    assert alpha_from_lam(lam, sigma2, rho2, d) == pytest.approx(expected, rel=1e-12)
    assert log_alpha_from_lam(lam, sigma2, rho2, d) == pytest.approx(math.log(expected), rel=1e-12, abs=1e-12)


def test_log_alpha_stable_for_tiny_sigma2():
    # alpha = 1e8 * exp(-5e5) underflows; its log is exact in float64.
    log_alpha = log_alpha_from_lam(1.0, 1e-6, 100.0, 2)
    assert math.isfinite(log_alpha)
    assert log_alpha == pytest.approx(math.log1p(1e8) - 0.5e6, rel=1e-14)
    assert alpha_from_lam(1.0, 1e-6, 100.0, 2) == 0.0
    # And the other direction (lam = 0, sigma2 -> 0, large d): overflow is inf, the log finite.
    assert alpha_from_lam(0.0, 1e-300, 100.0, 8) == math.inf
    assert math.isfinite(log_alpha_from_lam(0.0, 1e-300, 100.0, 8))


@pytest.mark.parametrize("sigma2, rho2, d", [(1e-6, 100.0, 2), (0.25, 100.0, 3), (2.0, 0.5, 7), (1e-3, 1e3, 1)])
def test_alpha_from_lam_identity_for_the_new_cluster_weight(sigma2, rho2, d):
    # (1 + rho/sigma)^{d/2} (2 pi (rho + sigma))^{-d/2} = (2 pi sigma)^{-d/2}, in log space.
    lhs = log_alpha_from_lam(0.0, sigma2, rho2, d) - 0.5 * d * math.log(2 * math.pi * (rho2 + sigma2))
    rhs = -0.5 * d * math.log(2 * math.pi * sigma2)
    assert lhs == pytest.approx(rhs, rel=1e-12, abs=1e-12)
    if d <= 3 and sigma2 >= 1e-3:  # and directly where nothing overflows
        direct = (1 + rho2 / sigma2) ** (d / 2) * (2 * math.pi * (rho2 + sigma2)) ** (-d / 2)
        assert direct == pytest.approx((2 * math.pi * sigma2) ** (-d / 2), rel=1e-12)


def test_new_cluster_weight_is_kj_numerator():
    # KJ §3.1: alpha * N(x | 0, (rho + sigma) I) = (2 pi sigma)^{-d/2} exp(-[lam + sigma/(rho+sigma)|x|^2]/(2 sigma)).
    lam, sigma2, rho2 = 2.0, 0.3, 100.0
    x = np.array([0.4, -1.2, 0.7])
    d = x.size
    lhs = log_alpha_from_lam(lam, sigma2, rho2, d) + stats.multivariate_normal(
        np.zeros(d), (rho2 + sigma2) * np.eye(d)
    ).logpdf(x)
    rhs = -0.5 * d * math.log(2 * math.pi * sigma2) - (lam + sigma2 / (rho2 + sigma2) * x @ x) / (2 * sigma2)
    assert lhs == pytest.approx(rhs, rel=1e-12)


def test_alpha_from_lam_is_traceable(x64):
    f = jax.jit(lambda s2: alpha_from_lam(1.0, s2, 100.0, 2))
    got = f(jnp.asarray(0.5))
    assert float(got) == pytest.approx(alpha_from_lam(1.0, 0.5, 100.0, 2), rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(lam=-1.0), "lam"),
        (dict(sigma2=0.0), "sigma2"),
        (dict(sigma2=-1.0), "sigma2"),
        (dict(rho2=0.0), "rho2"),
        (dict(sigma2=float("nan")), "sigma2"),
        (dict(d=0), "d"),
    ],
)
def test_alpha_from_lam_bad_input(kwargs, name):
    args = dict(lam=1.0, sigma2=1.0, rho2=100.0, d=2) | kwargs
    with pytest.raises(ValueError, match=name):
        alpha_from_lam(**args)
    with pytest.raises(ValueError, match=name):
        log_alpha_from_lam(**args)


# --------------------------------------------------------------------------- #
# Log density against a hand-written SciPy computation
# --------------------------------------------------------------------------- #


def _params(rng, T, d):
    v = rng.uniform(0.05, 0.95, size=T - 1)
    means = rng.normal(scale=2.0, size=(T, d))
    return v, means


def _weights_np(v):
    rest = np.concatenate([[1.0], np.cumprod(1.0 - v)])
    return rest * np.concatenate([v, [1.0]])


def _scipy_log_lik(X, w, means, sigma2):
    comp = np.stack(
        [stats.multivariate_normal(m, sigma2 * np.eye(X.shape[1])).logpdf(X) for m in means], axis=1
    )
    return logsumexp(np.log(w) + comp, axis=1)


def test_log_density_matches_scipy(x64):
    rng = np.random.default_rng(0)
    T, d, n = 5, 3, 12
    X = rng.normal(size=(n, d))
    alpha, sigma2, rho2 = 0.7, 0.4, 100.0
    v, means = _params(rng, T, d)
    kw = dict(truncation=T, alpha=alpha, sigma2=sigma2, rho2=rho2)

    types = {}

    @jax.jit  # jit: one compile instead of one per primitive (tests stay fast)
    def run(v, means):
        lp, trace = log_density(dp_gmm, (X,), kw, {"v": v, "means": means})
        types.update({name: (site["type"], site.get("is_observed")) for name, site in trace.items()})
        # Pointwise likelihood through numpyro's own utility (site "x").
        ll = log_likelihood(dp_gmm, {"v": v[None], "means": means[None]}, X, **kw)["x"]
        return lp, trace["weights"]["value"], trace["log_likelihood"]["value"], ll

    lp, weights, total, ll = run(v, means)
    w = _weights_np(v)
    point = _scipy_log_lik(X, w, means, sigma2)
    expected = (
        stats.beta(1.0, alpha).logpdf(v).sum()
        + stats.norm(0.0, np.sqrt(rho2)).logpdf(means).sum()
        + point.sum()
    )
    assert float(lp) == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(weights, w, rtol=1e-13)
    assert float(total) == pytest.approx(point.sum(), abs=1e-10)
    np.testing.assert_allclose(np.asarray(ll)[0], point, atol=1e-10)
    assert types["v"] == ("sample", False) and types["means"] == ("sample", False)
    assert types["x"] == ("sample", True)
    assert types["alpha"][0] == types["sigma2"][0] == "deterministic"  # constants recorded


def test_log_density_with_priors_matches_scipy(x64):
    rng = np.random.default_rng(1)
    T, d, n = 5, 3, 12
    X = rng.normal(size=(n, d))
    v, means = _params(rng, T, d)
    alpha, sigma2 = 1.7, 0.8
    kw = dict(
        truncation=T, rho2=50.0,
        alpha_prior=dist.Gamma(2.0, 3.0), sigma2_prior=dist.InverseGamma(1.5, 0.5),
    )
    params = {"v": v, "means": means, "alpha": alpha, "sigma2": sigma2}
    lp = jax.jit(lambda p: log_density(dp_gmm, (X,), kw, p)[0])(params)
    expected = (
        stats.gamma(2.0, scale=1 / 3.0).logpdf(alpha)
        + stats.invgamma(1.5, scale=0.5).logpdf(sigma2)
        + stats.beta(1.0, alpha).logpdf(v).sum()
        + stats.norm(0.0, np.sqrt(50.0)).logpdf(means).sum()
        + _scipy_log_lik(X, _weights_np(v), means, sigma2).sum()
    )
    assert float(lp) == pytest.approx(expected, abs=1e-10)


def test_mixture_distribution_matches_numpyro_mixture(x64):
    rng = np.random.default_rng(3)
    T, d = 4, 3
    v, means = _params(rng, T, d)
    w = _weights_np(v)
    x = rng.normal(size=(2, 5, d))  # arbitrary batch of points

    @jax.jit
    def run(w, means, x):
        mix = IsotropicGaussianMixture(w, means, 0.7)
        ref = dist.MixtureSameFamily(
            dist.Categorical(probs=w), dist.Normal(means, np.sqrt(0.7)).to_event(1)
        )
        return mix.log_prob(x), ref.log_prob(x), mix.sample(jax.random.PRNGKey(0), (7,))

    got, ref, draws = run(w, means, x)
    np.testing.assert_allclose(got, ref, atol=1e-12)
    assert draws.shape == (7, d)


# --------------------------------------------------------------------------- #
# Generative use, weights, truncation
# --------------------------------------------------------------------------- #


def test_prior_predictive_shapes_and_weights():
    # One jitted Predictive (compiling the Beta sampler dominates the cost); the
    # hyper-prior sites are checked by test_log_density_with_priors_matches_scipy.
    T, n, d, S = DEFAULT_TRUNCATION, 11, 3, 6
    kw = dict(n=n, d=d, truncation=T, sigma2=1e-4)
    out = jax.jit(lambda key: Predictive(dp_gmm, num_samples=S)(key, **kw))(jax.random.PRNGKey(0))
    assert out["x"].shape == (S, n, d)
    assert out["z"].shape == (S, n)
    assert out["means"].shape == (S, T, d)
    assert out["v"].shape == (S, T - 1)
    assert out["weights"].shape == (S, T)
    assert out["log_likelihood"].shape == (S,)
    assert out["alpha"].shape == (S,) and out["sigma2"].shape == (S,)  # constants, per draw
    np.testing.assert_allclose(out["sigma2"], 1e-4, rtol=1e-6)
    w = np.asarray(out["weights"])
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)  # float32
    z = np.asarray(out["z"])
    assert z.min() >= 0 and z.max() < T
    # z is the explicit component of x: |x - means[z]| is a few sqrt(sigma2) = 0.01.
    mu_z = np.take_along_axis(np.asarray(out["means"]), z[..., None], axis=1)
    assert np.abs(np.asarray(out["x"]) - mu_z).max() < 0.1
    assert np.all(np.isfinite(np.asarray(out["log_likelihood"])))


def _prior_weights(alpha, T, S=200, seed=0):
    """Weights of ``S`` prior draws: ``v ~ Beta(1, alpha)`` then stick-breaking (NumPy)."""
    v = np.random.default_rng(seed).beta(1.0, alpha, size=(S, T - 1))
    return np.stack([_weights_np(row) for row in v])


def test_truncation_warning_fires_when_last_stick_has_mass():
    # alpha huge, T = 2: v ~ Beta(1, 1e4) ~ 0, so the last component holds almost everything.
    with pytest.warns(TruncationWarning, match="increase `truncation`"):
        mass = check_truncation(_prior_weights(1e4, 2))
    assert mass > 0.99
    with pytest.warns(TruncationWarning):  # alpha = 5, T = 5: (5/6)^4 = 0.48 left on average
        check_truncation(_prior_weights(5.0, 5))


def test_truncation_warning_silent_when_truncation_suffices():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mass = check_truncation(_prior_weights(0.5, 20))
        check_truncation(jnp.asarray(_prior_weights(1.0, 20)))  # JAX arrays too
    # Prior mean of the rest after 19 breaks: (alpha / (1 + alpha))^19 = 3^-19.
    assert mass < 1e-3
    assert truncation_mass(np.array([[0.5, 0.5], [1.0, 0.0]])) == pytest.approx(0.25)


def test_check_truncation_bad_input():
    with pytest.raises(ValueError, match="tol"):
        check_truncation(np.ones((2, 3)) / 3, tol=0.0)
    with pytest.raises(ValueError, match="tol"):
        check_truncation(np.ones((2, 3)) / 3, tol=1.5)
    with pytest.raises(ValueError, match="weights"):
        check_truncation(np.ones(1))


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #

_X = np.random.default_rng(0).normal(size=(6, 2))


def _run(*args, **kwargs):
    return handlers.seed(dp_gmm, 0)(*args, **kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(truncation=1), "truncation"),
        (dict(truncation=0), "truncation"),
        (dict(sigma2=0.0), "sigma2"),
        (dict(sigma2=-1.0), "sigma2"),
        (dict(sigma2=float("inf")), "sigma2"),
        (dict(rho2=0.0), "rho2"),
        (dict(rho2=-3.0), "rho2"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=-1.0), "alpha"),
        (dict(alpha=float("nan")), "alpha"),
        (dict(n=5), "n"),
        (dict(d=3), "d"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs, name):
    with pytest.raises(ValueError, match=name):
        _run(_X, **kwargs)


def test_bad_data_raises():
    bad = _X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        _run(bad)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        _run(_X[:, 0])
    with pytest.raises(TypeError, match="X"):
        _run(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="n and d"):
        _run(None, n=3)
    with pytest.raises(TypeError, match="truncation"):
        _run(_X, truncation=2.5)


def test_bad_priors_raise():
    with pytest.raises(TypeError, match="alpha_prior"):
        _run(_X, alpha_prior=1.0)
    with pytest.raises(ValueError, match="sigma2_prior"):
        _run(_X, sigma2_prior=dist.Normal(0.0, 1.0))
    with pytest.raises(ValueError, match="alpha_prior"):
        _run(_X, alpha_prior=dist.Gamma(jnp.ones(2), 1.0))


def test_model_accepts_traced_data():
    # X passed as a traced argument: validation of values is skipped, shapes still checked.
    X = jnp.asarray(_X, jnp.float32)
    params = {"v": jnp.full(3, 0.5), "means": jnp.zeros((4, 2))}
    f = jax.jit(lambda x: log_density(dp_gmm, (x,), dict(truncation=4), params)[0])
    assert np.isfinite(float(f(X)))
