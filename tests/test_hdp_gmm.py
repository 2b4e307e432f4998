"""The HDP Gaussian mixture program (Kulis & Jordan §4, Teh et al. 2006) and the
(alpha, gamma)(lam_local, lam_global) map (docs/deviations.md#hdp-concentration-map).

Tolerances are next to each assertion: 1e-12 relative for float64 closed forms,
1e-10 absolute for float64 log densities against SciPy; distributional checks use
a seeded Kolmogorov-Smirnov test (p > 1e-3) or binomial standard errors.
NUTS runs once per module (compilation dominates its cost).
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
from numpyro.infer.util import log_density
from scipy import stats
from scipy.special import logsumexp, softmax

from bayesclust.inference.mixtures.mcmc import (
    LABEL_SAMPLERS,
    POSTERIOR_CHECKS,
    _resolve_label_sampler,
    run_nuts,
    sample_mixture_labels,
)
from bayesclust.inference.mixtures.posterior import Posterior
from bayesclust.metrics import nmi
from bayesclust.models.dp_gmm import TruncationWarning, dp_gmm, log_alpha_from_lam
from bayesclust.models.hdp_gmm import (
    BETA_FLOOR,
    GroupedData,
    hdp_concentrations_from_lam,
    hdp_gmm,
    hdp_log_concentrations_from_lam,
    prepare_groups,
)
from bayesclust.models.mixture import IsotropicGaussianMixture

# --------------------------------------------------------------------------- #
# NumPy / SciPy reference of the model's log density
# --------------------------------------------------------------------------- #


def _sticks_np(b):
    rest = np.concatenate([[1.0], np.cumprod(1.0 - b)])
    return rest * np.concatenate([b, [1.0]])


def _mixture_log_lik_np(X, gid, pi, means, sigma2, log_pi=None):
    """sum_i log sum_k pi[g_i, k] N(x_i | mu_k, sigma2 I), one point at a time."""
    if log_pi is None:
        with np.errstate(divide="ignore"):
            log_pi = np.log(pi)
    total = 0.0
    for x, g in zip(X, gid):
        comp = [
            log_pi[g, k] + stats.multivariate_normal(m, sigma2 * np.eye(X.shape[1])).logpdf(x)
            for k, m in enumerate(means)
        ]
        total += logsumexp(comp)
    return total


def _random_case(rng, n=13, d=2, D=3, L=5):
    X = rng.normal(scale=2.0, size=(n, d))
    gid = rng.permutation(np.arange(n) % D)  # unsorted, every data set used
    b = rng.uniform(0.05, 0.95, size=L - 1)
    means = rng.normal(scale=2.0, size=(L, d))
    return X, gid, b, means


@pytest.mark.parametrize("centered", [True, False])
def test_log_density_matches_scipy(x64, centered):
    rng = np.random.default_rng(0)
    X, gid, b, means = _random_case(rng)
    D, L = 3, 5
    alpha, gamma, sigma2, rho2 = 0.7, 1.8, 0.4, 50.0
    kw = dict(truncation=L, alpha=alpha, gamma=gamma, sigma2=sigma2, rho2=rho2, centered=centered)
    beta = _sticks_np(b)
    c = alpha * beta  # every beta_k > 1e-3 here: the floor is inactive
    if centered:
        pi = rng.dirichlet(np.ones(L), size=D)
        params = {"b": b, "means": means, "pi": pi}
        prior_pi = sum(stats.dirichlet(c).logpdf(p) for p in pi)
    else:
        g = rng.gamma(2.0, size=(D, L))
        e = rng.exponential(size=(D, L))
        params = {"b": b, "means": means, "pi_gamma": g, "pi_exponential": e}
        log_pi = np.log(g) - e / c
        log_pi -= logsumexp(log_pi, axis=1, keepdims=True)
        pi = np.exp(log_pi)
        prior_pi = stats.gamma(c + 1.0).logpdf(g).sum() + stats.expon().logpdf(e).sum()

    types = {}

    @jax.jit  # one compile instead of one per primitive
    def run(params):
        lp, trace = log_density(hdp_gmm, (X, gid, D), kw, params)
        types.update({k: (s["type"], s.get("is_observed")) for k, s in trace.items()})
        return lp, trace["beta"]["value"], trace["pi"]["value"], trace["log_likelihood"]["value"]

    lp, beta_got, pi_got, ll = run(params)
    lik = _mixture_log_lik_np(X, gid, pi, means, sigma2, None if centered else log_pi)
    expected = (
        stats.beta(1.0, gamma).logpdf(b).sum()
        + stats.norm(0.0, math.sqrt(rho2)).logpdf(means).sum()
        + prior_pi
        + lik
    )
    assert float(lp) == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(beta_got, beta, rtol=1e-13)
    np.testing.assert_allclose(pi_got, pi, rtol=1e-12, atol=1e-300)
    assert float(ll) == pytest.approx(lik, abs=1e-10)
    assert types["x"] == ("sample", True)
    assert types["beta"][0] == types["alpha"][0] == types["gamma"][0] == "deterministic"
    assert types["pi"][0] == ("sample" if centered else "deterministic")


def test_log_density_with_priors_matches_scipy(x64):
    rng = np.random.default_rng(1)
    X, gid, b, means = _random_case(rng)
    D, L = 3, 5
    pi = rng.dirichlet(np.ones(L), size=D)
    alpha, gamma, sigma2 = 1.3, 0.6, 0.8
    kw = dict(
        truncation=L, rho2=100.0, centered=True,
        alpha_prior=dist.Gamma(2.0, 3.0), gamma_prior=dist.Gamma(1.5, 1.0),
        sigma2_prior=dist.InverseGamma(1.5, 0.5),
    )
    params = {"b": b, "means": means, "pi": pi, "alpha": alpha, "gamma": gamma, "sigma2": sigma2}
    lp = jax.jit(lambda p: log_density(hdp_gmm, (X, gid, D), kw, p)[0])(params)
    expected = (
        stats.gamma(2.0, scale=1 / 3.0).logpdf(alpha)
        + stats.gamma(1.5).logpdf(gamma)
        + stats.invgamma(1.5, scale=0.5).logpdf(sigma2)
        + stats.beta(1.0, gamma).logpdf(b).sum()
        + stats.norm(0.0, 10.0).logpdf(means).sum()
        + sum(stats.dirichlet(alpha * _sticks_np(b)).logpdf(p) for p in pi)
        + _mixture_log_lik_np(X, gid, pi, means, sigma2)
    )
    assert float(lp) == pytest.approx(expected, abs=1e-10)


def test_beta_floor_in_the_dirichlet_concentration(x64):
    # b_1 ~ 1 leaves ~1e-7 for the rest: beta_3, beta_4 < BETA_FLOOR, and the density
    # uses alpha * max(beta, BETA_FLOOR) (documented), not alpha * beta.
    rng = np.random.default_rng(2)
    X, gid, _, means = _random_case(rng, L=4)
    b = np.array([1.0 - 1e-7, 0.5, 0.5])
    beta = _sticks_np(b)
    assert beta[2] < BETA_FLOOR and beta[3] < BETA_FLOOR
    pi = rng.dirichlet(np.ones(4), size=3)
    alpha = 2.0
    kw = dict(truncation=4, alpha=alpha, centered=True)
    lp = jax.jit(lambda p: log_density(hdp_gmm, (X, gid, 3), kw, p)[0])(
        {"b": b, "means": means, "pi": pi}
    )
    rest = (
        stats.beta(1.0, 1.0).logpdf(b).sum() + stats.norm(0.0, 10.0).logpdf(means).sum()
        + _mixture_log_lik_np(X, gid, pi, means, 1.0)
    )

    def dirichlet_term(conc):
        return sum(stats.dirichlet(conc).logpdf(p) for p in pi)

    floored = rest + dirichlet_term(alpha * np.maximum(beta, BETA_FLOOR))
    assert float(lp) == pytest.approx(floored, abs=1e-8)
    assert abs(floored - (rest + dirichlet_term(alpha * beta))) > 1.0  # the floor is active


@pytest.mark.parametrize("centered", [True, False])
def test_group_weights_are_dirichlet_alpha_beta(x64, centered):
    # With the sticks fixed, every pi_j ~ Dirichlet(alpha beta): its marginals are
    # Beta(alpha beta_k, alpha (1 - beta_k)).  Checks both parametrisations through the model.
    S, alpha = 4000, 1.5
    b = np.array([0.6, 0.3, 0.8])
    beta = _sticks_np(b)
    gid = np.array([0, 0, 1])
    pred = Predictive(hdp_gmm, posterior_samples={"b": np.tile(b, (S, 1))}, return_sites=["pi"])
    kw = dict(d=1, truncation=4, alpha=alpha, centered=centered)
    out = jax.jit(lambda key: pred(key, None, gid, **kw))(jax.random.PRNGKey(0))
    pi = np.asarray(out["pi"])
    assert pi.shape == (S, 2, 4)
    np.testing.assert_allclose(pi.sum(-1), 1.0, rtol=1e-12)
    for j in range(2):
        for k in range(4):
            marginal = stats.beta(alpha * beta[k], alpha * (1 - beta[k]))
            assert stats.kstest(pi[:, j, k], marginal.cdf).pvalue > 1e-3, (j, k)
    # The two data sets are independent given beta.
    assert abs(np.corrcoef(pi[:, 0, 0], pi[:, 1, 0])[0, 1]) < 4 / math.sqrt(S)


# --------------------------------------------------------------------------- #
# Generative use and the pointwise mixture
# --------------------------------------------------------------------------- #


def test_prior_predictive_shapes_and_hierarchy():
    # alpha huge: every pi_j is within a few 1/sqrt(alpha) of the global beta;
    # sigma2 tiny: every x is next to the mean of its component z.
    S, L, d = 5, 6, 3
    gid = np.array([0, 0, 1, 1, 1, 2, 2])
    n, D = gid.size, 3
    kw = dict(d=d, truncation=L, alpha=1e4, sigma2=1e-4)
    out = jax.jit(lambda key: Predictive(hdp_gmm, num_samples=S)(key, None, gid, **kw))(
        jax.random.PRNGKey(0)
    )
    shapes = {
        "x": (S, n, d), "z": (S, n), "b": (S, L - 1), "beta": (S, L), "means": (S, L, d),
        "pi": (S, D, L), "pi_gamma": (S, D, L), "pi_exponential": (S, D, L),
        "log_likelihood": (S,), "alpha": (S,), "gamma": (S,), "sigma2": (S,),
    }
    assert {k: tuple(out[k].shape) for k in shapes} == shapes
    pi, beta = np.asarray(out["pi"]), np.asarray(out["beta"])
    np.testing.assert_allclose(pi.sum(-1), 1.0, rtol=1e-5)  # float32
    np.testing.assert_allclose(beta.sum(-1), 1.0, rtol=1e-5)
    assert np.abs(pi - beta[:, None, :]).max() < 0.03  # sd <= 0.5 / sqrt(1e4) = 0.005
    z = np.asarray(out["z"])
    assert z.min() >= 0 and z.max() < L
    mu_z = np.take_along_axis(np.asarray(out["means"]), z[..., None], axis=1)
    assert np.abs(np.asarray(out["x"]) - mu_z).max() < 0.1  # ~ 7 sd of sqrt(1e-4)
    assert np.all(np.isfinite(np.asarray(out["log_likelihood"])))


def test_group_weights_drive_the_assignments():
    # z of a point of data set j is drawn from pi_j (not from beta or another data set's
    # weights): condition on pi (centred form) and count the assignments per data set.
    S = 2000
    pi = np.array([[0.9, 0.05, 0.05], [0.05, 0.05, 0.9]])
    gid = np.repeat([0, 1], 50)
    pred = Predictive(hdp_gmm, posterior_samples={"pi": np.tile(pi, (S, 1, 1))}, return_sites=["z"])
    z = np.asarray(jax.jit(lambda key: pred(key, None, gid, d=1, truncation=3, centered=True))(
        jax.random.PRNGKey(1)
    )["z"])
    for j in range(2):
        freq = np.bincount(z[:, gid == j].ravel(), minlength=3) / z[:, gid == j].size
        np.testing.assert_allclose(freq, pi[j], atol=0.005)  # binomial sd <= 0.0007


def test_pointwise_mixture_matches_per_point_mixtures(x64):
    rng = np.random.default_rng(3)
    T, d, n = 4, 2, 6
    w = rng.dirichlet(np.ones(T), size=n)
    means = rng.normal(size=(T, d))
    x = rng.normal(size=(3, n, d))  # a sample axis in front of the batch
    mix = IsotropicGaussianMixture(w, means, 0.7)
    assert mix.batch_shape == (n,) and mix.event_shape == (d,)

    @jax.jit
    def run(w, means, x):
        mix = IsotropicGaussianMixture(w, means, 0.7)
        ref = dist.MixtureSameFamily(  # numpyro's own mixture, one weight row per point
            dist.Categorical(probs=w),
            dist.Normal(jnp.broadcast_to(means, (n, T, d)), math.sqrt(0.7)).to_event(1),
        )
        return mix.log_prob(x), ref.log_prob(x), mix.sample(jax.random.PRNGKey(0), (7,))

    got, ref, draws = run(w, means, x)
    assert got.shape == (3, n)
    np.testing.assert_allclose(got, ref, atol=1e-12)
    assert draws.shape == (7, n, d)


# --------------------------------------------------------------------------- #
# Grouped data: list form and X + group_ids form
# --------------------------------------------------------------------------- #


def test_list_and_group_ids_forms_agree(x64):
    rng = np.random.default_rng(4)
    groups = [rng.normal(size=(nj, 2)) for nj in (3, 5, 2)]
    from_list = prepare_groups(groups)
    assert isinstance(from_list, GroupedData)
    # The same rows shuffled, with arbitrary identifiers (sorted: -4 < 7 < 10).
    ids_of = np.array([7, -4, 10])
    X_in = np.concatenate(groups)
    ids_in = np.repeat(ids_of, [3, 5, 2])
    perm = rng.permutation(len(X_in))
    from_ids = prepare_groups(X_in[perm], group_ids=ids_in[perm])
    np.testing.assert_array_equal(from_ids.group_order, [-4, 7, 10])
    assert from_list.n_groups == from_ids.n_groups == 3
    assert from_ids.group_ids.dtype == np.int32 and from_list.group_ids.dtype == np.int32
    # Same data sets (data set -4 is list entry 1, ...), each in its input order.
    for j, src in enumerate([1, 0, 2]):
        rows = from_ids.X[from_ids.group_ids == j]
        np.testing.assert_array_equal(rows, X_in[perm][ids_in[perm] == ids_of[src]])
        assert sorted(map(tuple, rows)) == sorted(map(tuple, groups[src]))
    # order / to_input_order round trip.
    np.testing.assert_array_equal(from_ids.X, X_in[perm][from_ids.order])
    np.testing.assert_array_equal(from_ids.to_input_order(from_ids.X.T), X_in[perm].T)
    # The model's density does not depend on the row order or the stacking: the list form
    # and the unsorted input form (ids mapped to 0..D-1, pi rows in group_order) agree.
    b, means = np.array([0.3, 0.5]), rng.normal(size=(3, 2))
    pi_list = rng.dirichlet(np.ones(3), size=3)
    pi_ids = pi_list[[1, 0, 2]]
    kw = dict(truncation=3, centered=True)
    f = jax.jit(
        lambda X, g, p: log_density(hdp_gmm, (X, g, 3), kw, {"b": b, "means": means, "pi": p})[0],
    )
    raw_index = np.searchsorted(from_ids.group_order, ids_in[perm])
    lp_list = f(*from_list.model_args[:2], pi_list)
    lp_ids = f(from_ids.X, from_ids.group_ids, pi_ids)
    lp_raw = f(X_in[perm], raw_index.astype(np.int32), pi_ids)
    assert float(lp_list) == pytest.approx(float(lp_ids), abs=1e-10)
    assert float(lp_raw) == pytest.approx(float(lp_ids), abs=1e-10)


def test_model_accepts_traced_data_and_group_ids():
    X = jnp.asarray(np.random.default_rng(5).normal(size=(6, 2)), jnp.float32)
    gid = jnp.asarray([0, 1, 0, 1, 1, 0], jnp.int32)
    params = {"b": jnp.full(2, 0.5), "means": jnp.zeros((3, 2)), "pi": jnp.full((2, 3), 1 / 3)}
    kw = dict(truncation=3, centered=True)
    f = jax.jit(lambda x, g: log_density(hdp_gmm, (x, g, 2), kw, params)[0])
    assert np.isfinite(float(f(X, gid)))
    with pytest.raises(ValueError, match="n_groups must be given"):
        jax.jit(lambda x, g: log_density(hdp_gmm, (x, g), kw, params)[0])(X, gid)


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #

_X = np.random.default_rng(0).normal(size=(6, 2))
_G = np.array([0, 0, 1, 1, 2, 2])


def _run(*args, **kwargs):
    return handlers.seed(hdp_gmm, 0)(*args, **kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(truncation=1), ValueError, "truncation"),
        (dict(truncation=2.5), TypeError, "truncation"),
        (dict(alpha=0.0), ValueError, "alpha"),
        (dict(alpha=-1.0), ValueError, "alpha"),
        (dict(alpha=float("nan")), ValueError, "alpha"),
        (dict(gamma=0.0), ValueError, "gamma"),
        (dict(gamma=-2.0), ValueError, "gamma"),
        (dict(sigma2=0.0), ValueError, "sigma2"),
        (dict(sigma2=float("inf")), ValueError, "sigma2"),
        (dict(rho2=0.0), ValueError, "rho2"),
        (dict(rho2=-1.0), ValueError, "rho2"),
        (dict(d=3), ValueError, "d=3"),
        (dict(centered="yes"), TypeError, "centered"),
        (dict(alpha_prior=1.0), TypeError, "alpha_prior"),
        (dict(gamma_prior=dist.Normal(0.0, 1.0)), ValueError, "gamma_prior"),
        (dict(sigma2_prior=dist.Gamma(jnp.ones(2), 1.0)), ValueError, "sigma2_prior"),
    ],
)
def test_bad_parameters_raise(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        _run(_X, _G, **kwargs)


@pytest.mark.parametrize(
    "group_ids, n_groups, exc, match",
    [
        (None, None, TypeError, "group_ids must be given"),
        (_G[:5], None, ValueError, "group_ids has length 5 but X has 6 rows"),
        (np.r_[_G, 0], None, ValueError, "group_ids has length 7"),
        (_G - 1, None, ValueError, "group_ids must be data set indices"),
        (_G + 0.5, None, ValueError, "group_ids must contain integer"),
        (_G, 2, ValueError, "group_ids must be < n_groups=2"),
        (_G, 4, ValueError, r"data set\(s\) \[3\]"),
        (_G * 2, None, ValueError, r"data set\(s\) \[1, 3\]"),  # ids 0, 2, 4: gaps
        (_G, 0, ValueError, "n_groups"),
        (_G, 2.0, TypeError, "n_groups"),
        (_G[:, None], None, ValueError, "group_ids must be a 1-D"),
    ],
)
def test_bad_group_ids_raise(group_ids, n_groups, exc, match):
    with pytest.raises(exc, match=match):
        _run(_X, group_ids, n_groups)


def test_bad_data_raises():
    bad = _X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        _run(bad, _G)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        _run(_X[:, 0], _G)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        _run(_X[None], _G)
    with pytest.raises(TypeError, match="X"):
        _run(np.array([["a", "b"]]), np.array([0]))
    with pytest.raises(ValueError, match="d must be given"):
        _run(None, _G)


def test_prepare_groups_bad_input():
    with pytest.raises(ValueError, match=r"groups\[1\] must have at least 1 sample"):
        prepare_groups([np.ones((2, 2)), np.ones((0, 2))])
    with pytest.raises(ValueError, match="same number of features"):
        prepare_groups([np.ones((2, 2)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="pass group_ids"):
        prepare_groups(np.ones((4, 2)))
    with pytest.raises(ValueError, match="group_ids has length 3"):
        prepare_groups(np.ones((4, 2)), group_ids=[0, 1, 1])
    with pytest.raises(ValueError, match="values must have 4 rows"):
        prepare_groups(np.ones((4, 2)), group_ids=[0, 1, 1, 0]).to_input_order(np.ones(3))


# --------------------------------------------------------------------------- #
# (alpha, gamma)(lam_local, lam_global)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "lam_local, lam_global, sigma2, rho2, d",
    [
        (1.0, 2.0, 0.5, 100.0, 2), (0.3, 4.0, 1.0, 100.0, 1),
        (2.0, 0.5, 2.0, 10.0, 5), (0.0, 0.0, 1.0, 1.0, 3),
    ],
)
def test_hdp_concentrations_equal_formula(lam_local, lam_global, sigma2, rho2, d):
    alpha = math.exp(-lam_local / (2 * sigma2))
    gamma = (1 + rho2 / sigma2) ** (d / 2) * math.exp(-lam_global / (2 * sigma2))
    got = hdp_concentrations_from_lam(lam_local, lam_global, sigma2, rho2, d)
    assert got == pytest.approx((alpha, gamma), rel=1e-12)
    log_alpha, log_gamma = hdp_log_concentrations_from_lam(lam_local, lam_global, sigma2, rho2, d)
    assert log_alpha == pytest.approx(math.log(alpha), rel=1e-12, abs=1e-12)
    assert log_gamma == pytest.approx(math.log(gamma), rel=1e-12, abs=1e-12)
    # gamma is the DP map at lam_global (the top level is a DP over new-table dishes).
    assert log_gamma == log_alpha_from_lam(lam_global, sigma2, rho2, d)


def test_hdp_log_concentrations_small_sigma2():
    # sigma2 = 1e-6: alpha = exp(-5e5) underflows, gamma's prefactor (1e8)^(d/2) is huge; the
    # logs are finite and exact in float64.
    log_alpha, log_gamma = hdp_log_concentrations_from_lam(1.0, 2.0, 1e-6, 100.0, 2)
    assert math.isfinite(log_alpha) and math.isfinite(log_gamma)
    assert log_alpha == pytest.approx(-0.5e6, rel=1e-14)
    assert log_gamma == pytest.approx(math.log1p(1e8) - 1e6, rel=1e-14)
    assert hdp_concentrations_from_lam(1.0, 2.0, 1e-6, 100.0, 2) == (0.0, 0.0)
    # lam = 0, sigma2 -> 0, large d: gamma overflows to inf, its log stays finite.
    alpha, gamma = hdp_concentrations_from_lam(0.0, 0.0, 1e-300, 100.0, 8)
    assert alpha == 1.0 and gamma == math.inf
    assert math.isfinite(hdp_log_concentrations_from_lam(0.0, 0.0, 1e-300, 100.0, 8)[1])


@pytest.mark.parametrize("sigma2, d", [(1e-6, 2), (0.25, 3), (2.0, 7)])
def test_crf_weights_reduce_to_hard_hdp_costs(sigma2, d):
    # With the map, the three CRF options share (2 pi sigma)^{-d/2}; their exponents
    # are -(cost)/(2 sigma) with costs |x-mu|^2 (existing table), lam_l + |x-mu|^2 (new table,
    # existing dish) and lam_l + lam_g + sigma/(rho+sigma)|x|^2 (new table, new dish).
    lam_l, lam_g, rho2 = 1.5, 4.0, 100.0
    rng = np.random.default_rng(6)
    x, mu = rng.normal(size=d), rng.normal(size=d)
    log_alpha, log_gamma = hdp_log_concentrations_from_lam(lam_l, lam_g, sigma2, rho2, d)
    common = -0.5 * d * math.log(2 * math.pi * sigma2)
    log_f = stats.multivariate_normal(mu, sigma2 * np.eye(d)).logpdf(x)
    log_f_new = stats.multivariate_normal(np.zeros(d), (rho2 + sigma2) * np.eye(d)).logpdf(x)
    sq, xx = float((x - mu) @ (x - mu)), float(x @ x)
    assert log_f == pytest.approx(common - sq / (2 * sigma2), rel=1e-12)
    assert log_alpha + log_f == pytest.approx(common - (lam_l + sq) / (2 * sigma2), rel=1e-12)
    new_dish = common - (lam_l + lam_g + sigma2 / (rho2 + sigma2) * xx) / (2 * sigma2)
    assert log_alpha + log_gamma + log_f_new == pytest.approx(new_dish, rel=1e-12)


def test_hdp_concentrations_are_traceable(x64):
    f = jax.jit(lambda s2: hdp_concentrations_from_lam(1.0, 2.0, s2, 100.0, 2))
    got = f(jnp.asarray(0.5))
    expected = hdp_concentrations_from_lam(1.0, 2.0, 0.5, 100.0, 2)
    assert [float(v) for v in got] == pytest.approx(expected, rel=1e-12)
    g = jax.jit(lambda lam: hdp_log_concentrations_from_lam(lam, 2.0, 0.5, 100.0, 2)[0])
    assert float(g(jnp.asarray(1.0))) == pytest.approx(-1.0, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        (dict(lam_local=-1.0), ValueError, "lam_local"),
        (dict(lam_local=float("inf")), ValueError, "lam_local"),
        (dict(lam_global=-0.1), ValueError, "lam_global"),
        (dict(lam_global=float("nan")), ValueError, "lam_global"),
        (dict(sigma2=0.0), ValueError, "sigma2"),
        (dict(sigma2=-1.0), ValueError, "sigma2"),
        (dict(rho2=0.0), ValueError, "rho2"),
        (dict(d=0), ValueError, "d"),
        (dict(d=2.0), TypeError, "d"),
        (dict(lam_local="1"), TypeError, "lam_local"),
    ],
)
def test_hdp_concentrations_bad_input(kwargs, exc, name):
    args = dict(lam_local=1.0, lam_global=2.0, sigma2=1.0, rho2=100.0, d=2) | kwargs
    with pytest.raises(exc, match=name):
        hdp_concentrations_from_lam(**args)
    with pytest.raises(exc, match=name):
        hdp_log_concentrations_from_lam(**args)


# --------------------------------------------------------------------------- #
# Label conditional with per-data-set weights
# --------------------------------------------------------------------------- #


def test_grouped_label_conditional_matches_exact():
    # Points of two data sets at the same places; each data set's weights differ, so
    # p(z_i = k) = pi[g_i, k] N(x_i | mu_k) / sum_l (...) differs between the data sets.
    X = np.array([[0.0, 0.0], [0.3, -0.2], [0.0, 0.0], [0.3, -0.2]], np.float32)
    gid = np.array([0, 0, 1, 1])
    pi = np.array([[0.7, 0.2, 0.1, 0.0], [0.1, 0.1, 0.3, 0.5]], np.float32)
    mu = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.5, -0.5]], np.float32)
    S = 10000
    labels = np.asarray(sample_mixture_labels(
        0, X, np.tile(pi, (S, 1, 1)), np.tile(mu, (S, 1, 1)), 0.8, group_ids=gid
    ))
    assert labels.shape == (S, 4) and labels.dtype == np.int32
    log_lik = np.stack([stats.multivariate_normal(m, 0.8 * np.eye(2)).logpdf(X) for m in mu], 1)
    with np.errstate(divide="ignore"):
        exact = softmax(np.log(pi[gid]) + log_lik, axis=1)
    freq = np.stack([(labels == k).mean(0) for k in range(4)], axis=1)
    np.testing.assert_allclose(freq, exact, atol=0.02)  # 4 binomial sd (<= 0.005) at S = 1e4
    assert freq[:2, 3].max() == 0.0  # zero weight in data set 0: never chosen there
    with pytest.raises(ValueError, match=r"weights must be \(S, D, T\)"):
        sample_mixture_labels(0, X, np.tile(pi[0], (3, 1)), np.tile(mu, (3, 1, 1)), 0.8,
                              group_ids=gid)
    with pytest.raises(ValueError, match="group_ids must lie in"):
        sample_mixture_labels(0, X, np.tile(pi, (3, 1, 1)), np.tile(mu, (3, 1, 1)), 0.8,
                              group_ids=gid + 1)
    with pytest.raises(ValueError, match="group_ids has length"):
        sample_mixture_labels(0, X, np.tile(pi, (3, 1, 1)), np.tile(mu, (3, 1, 1)), 0.8,
                              group_ids=gid[:3])


def test_registry_and_label_sampler_resolution():
    assert "hdp_gmm" in LABEL_SAMPLERS and "hdp_gmm" in POSTERIOR_CHECKS
    for model, name in ((hdp_gmm, "hdp_gmm"), (dp_gmm, "dp_gmm")):  # by the model's name
        assert _resolve_label_sampler(None, model) == (LABEL_SAMPLERS[name], POSTERIOR_CHECKS[name])

    def my_wrapper(*args, **kwargs):  # unregistered name: the DP mixture's, as before
        return dp_gmm(*args, **kwargs)

    assert _resolve_label_sampler(None, my_wrapper)[0] is LABEL_SAMPLERS["dp_gmm"]
    heavy = {"beta": np.tile([0.1, 0.1, 0.8], (1, 5, 1))}
    with pytest.warns(TruncationWarning):
        POSTERIOR_CHECKS["hdp_gmm"](heavy)
    # The label sampler finds group_ids positionally (X, group_ids, n_groups) or by keyword.
    X = np.array([[-3.0], [3.0], [-3.0], [3.0]], np.float32)
    gid = np.array([0, 0, 1, 1])
    samples = {
        "pi": np.full((2, 2, 2), 0.5, np.float32), "sigma2": np.full(2, 0.1, np.float32),
        "means": np.tile(np.array([[[3.0], [-3.0]]], np.float32), (2, 1, 1)),
    }
    labels_fn = LABEL_SAMPLERS["hdp_gmm"]
    by_position = labels_fn(jax.random.PRNGKey(0), samples, (X, gid, 2), {})
    by_keyword = labels_fn(jax.random.PRNGKey(0), samples, (X,), {"group_ids": gid})
    np.testing.assert_array_equal(by_position, [[1, 0, 1, 0]] * 2)
    np.testing.assert_array_equal(by_keyword, by_position)
    with pytest.raises(ValueError, match="group_ids must be given"):
        labels_fn(jax.random.PRNGKey(0), samples, (X,), {})


# --------------------------------------------------------------------------- #
# NUTS through run_nuts
# --------------------------------------------------------------------------- #

SIGMA2 = 0.25  # true within-cluster variance (std 0.5)


@pytest.fixture(scope="module")
def grouped_blobs():
    # Two global clusters 5 apart shared by two data sets with opposite proportions 16:4.
    rng = np.random.default_rng(0)
    A, B = np.array([-2.5, 0.0]), np.array([2.5, 0.0])
    y = [np.r_[np.zeros(16), np.ones(4)], np.r_[np.zeros(4), np.ones(16)]]
    noise = [math.sqrt(SIGMA2) * rng.normal(size=(20, 2)) for _ in y]
    groups = [np.where(yj[:, None] == 0, A, B) + e for yj, e in zip(y, noise)]
    data = prepare_groups([g.astype(np.float32) for g in groups])
    X = data.X - data.X.mean(0)
    return X, data, np.concatenate(y).astype(int)


@pytest.fixture(scope="module")
def hdp_posterior(grouped_blobs):
    X, data, _ = grouped_blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)  # L = 6 is small on purpose (speed)
        # Short and shallow (trees of <= 31 leapfrog steps) to keep the test fast; NumPyro's
        # eager initialisation (one XLA compile per primitive) costs ~14 s of it on 2 cores.
        return run_nuts(
            0, hdp_gmm, X, data.group_ids, data.n_groups, num_warmup=150, num_samples=100,
            progress_bar=False, nuts_kwargs=dict(max_tree_depth=5), truncation=6, sigma2=SIGMA2,
        )


def test_nuts_recovers_two_shared_clusters(hdp_posterior, grouped_blobs):
    _, data, y = grouped_blobs
    post = hdp_posterior
    assert isinstance(post, Posterior) and post.model == "hdp_gmm" and post.sampler == "NUTS"
    assert post.labels.shape == (1, 100, 40)
    assert post.labels.min() >= 0 and post.labels.max() < 6
    np.testing.assert_array_equal(post.group_ids, data.group_ids)
    assert [g.shape for g in post.labels_by_group()] == [
        (1, 100, int(np.sum(data.group_ids == j))) for j in range(data.n_groups)]
    k = post.n_clusters.ravel()
    assert np.bincount(k).argmax() == 2 and np.mean(k == 2) > 0.8
    assert nmi(y, post.point_estimate()) > 0.95
    # Non-centred weights: (almost) no divergent transitions (the centred form has ~25%).
    assert post.sample_stats["diverging"].mean() < 0.05
    # Group weights: data set 0 puts ~16/20 on cluster A's component, data set 1 ~4/20.
    p = post.params
    assert p["pi"].shape == (1, 100, 2, 6) and p["beta"].shape == (1, 100, 6)
    assert p["means"].shape == (1, 100, 6, 2)
    np.testing.assert_allclose(p["pi"].sum(-1), 1.0, rtol=1e-5)
    a_point = np.flatnonzero(y == 0)[0]  # a point of cluster A (data set 0)
    comp_a = post.labels[0, :, a_point]  # its component in every draw
    w_a = np.take_along_axis(p["pi"][0], comp_a[:, None, None], axis=2)[..., 0]  # (draws, D)
    assert 0.6 < w_a[:, 0].mean() < 0.95 and 0.05 < w_a[:, 1].mean() < 0.4


def test_nuts_labels_follow_group_weights_and_means(hdp_posterior, grouped_blobs):
    # Clusters 5 apart with std 0.5: nearly every label is the argmax of
    # log pi[g_i, k] + log N(x_i | mu_k); the weights are those of the point's data set.
    X, data, _ = grouped_blobs
    post = hdp_posterior
    mu, pi = post.params["means"][0], post.params["pi"][0]
    d2 = ((X[None, :, None, :] - mu[:, None, :, :]) ** 2).sum(-1)
    log_w = np.log(np.maximum(pi[:, data.group_ids, :], 1e-30))
    best = np.argmax(log_w - d2 / (2 * SIGMA2), axis=-1)
    assert np.mean(best == post.labels[0]) > 0.99
    # log_likelihood is the model's sum_i log sum_k pi[g_i, k] N(x_i | mu_k) (float32 tolerance).
    for s in (0, 99):
        expected = _mixture_log_lik_np(
            X.astype(float), data.group_ids, pi[s].astype(float), mu[s].astype(float), SIGMA2
        )
        assert post.log_likelihood[0, s] == pytest.approx(expected, rel=1e-4)
