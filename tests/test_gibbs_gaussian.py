"""Collapsed Gibbs sampler of the DP mixture with diagonal / full covariances.

References are the textbook formulas written out here (Murphy 2007, §8-9), SciPy's
Student-t densities, NumPy's Cholesky factorisation and exact enumeration of all
set partitions.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, multigammaln

from bayesclust.inference.mixtures.gibbs_gaussian import (
    GaussianClusterPrior,
    default_gaussian_prior,
    gaussian_log_marginal,
    gaussian_predictive_logpdf,
    gibbs_dp_gaussian,
)
from bayesclust.kernels import cholesky_rank_one
from bayesclust.metrics import ari as adjusted_rand_index


def _set_partitions(n):
    """All set partitions of ``range(n)`` as canonical label tuples (restricted growth)."""
    out = []

    def rec(prefix, k):
        if len(prefix) == n:
            out.append(tuple(prefix))
            return
        for c in range(k + 1):
            rec(prefix + [c], max(k, c + 1))

    rec([], 0)
    return out


def _canon(labels):
    seen = {}
    return tuple(seen.setdefault(int(v), len(seen)) for v in labels)


def _niw_log_marginal(Xc, m0, k0, nu0, S0):
    """Murphy (2007), eq. 266, written out."""
    n, d = Xc.shape
    kn, nn = k0 + n, nu0 + n
    xbar = Xc.mean(0)
    C = (Xc - xbar).T @ (Xc - xbar)
    Sn = S0 + C + k0 * n / kn * np.outer(xbar - m0, xbar - m0)
    return (-0.5 * n * d * np.log(np.pi) + multigammaln(nn / 2, d) - multigammaln(nu0 / 2, d)
            + nu0 / 2 * np.linalg.slogdet(S0)[1] - nn / 2 * np.linalg.slogdet(Sn)[1]
            + d / 2 * np.log(k0 / kn))


def _ng_log_marginal(Xc, m0, k0, nu0, s0):
    """Murphy (2007), eq. 95, per dimension (a0 = nu0/2, b0 = s0/2; nu0 the marginal dof)."""
    n = Xc.shape[0]
    kn = k0 + n
    xbar = Xc.mean(0)
    a0, an = nu0 / 2, nu0 / 2 + n / 2
    b0 = s0 / 2
    bn = b0 + 0.5 * ((Xc - xbar) ** 2).sum(0) + k0 * n * (xbar - m0) ** 2 / (2 * kn)
    return float(np.sum(gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn)
                        + 0.5 * np.log(k0 / kn) - n / 2 * np.log(2 * np.pi)))


def _exact_posterior(X, prior, alpha, cov):
    parts = _set_partitions(X.shape[0])
    logp = []
    for p in parts:
        lab = np.array(p)
        k = lab.max() + 1
        lp = k * np.log(alpha)
        for c in range(k):
            Xc = X[lab == c]
            lp += gammaln(len(Xc))
            if cov == "full":
                lp += _niw_log_marginal(Xc, prior.mean, prior.kappa, prior.dof, prior.scale)
            else:
                lp += _ng_log_marginal(Xc, prior.mean, prior.kappa, prior.dof - X.shape[1] + 1,
                                       np.diag(prior.scale))
        logp.append(lp)
    logp = np.array(logp)
    w = np.exp(logp - logp.max())
    return parts, w / w.sum()


CASES = {
    "full-d1": ("full", np.array([[0.0], [0.4], [1.5], [2.0], [-0.6]])),
    "diag-d1": ("diag", np.array([[0.0], [0.4], [1.5], [2.0], [-0.6]])),
    "full-d2": ("full", np.array([[0.0, 0.0], [0.5, 0.3], [1.6, 1.2], [2.0, 0.6]])),
    "diag-d2": ("diag", np.array([[0.0, 0.0], [0.5, 0.3], [1.6, 1.2], [2.0, 0.6]])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_partition_frequencies_match_exact_enumeration(case):
    cov, X = CASES[case]
    d = X.shape[1]
    S0 = np.eye(d) * 0.5 if d == 1 else np.array([[0.5, 0.1], [0.1, 0.3]])
    prior = GaussianClusterPrior(np.full(d, 0.8), 0.5, d + 1.0, S0)
    alpha = 1.3
    parts, exact = _exact_posterior(X, prior, alpha, cov)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = gibbs_dp_gaussian(1, X, covariance_type=cov, alpha=alpha, prior=prior,
                                 num_warmup=50, num_samples=4000, thin=1, num_chains=8,
                                 progress_bar=False)
    index = {p: i for i, p in enumerate(parts)}
    freq = np.zeros(len(parts))
    for lab in post.labels.reshape(-1, X.shape[0]):
        freq[index[_canon(lab)]] += 1
    freq /= freq.sum()
    tv = 0.5 * np.abs(freq - exact).sum()
    assert exact.max() < 0.5  # a spread posterior, so the comparison has teeth
    assert tv < 0.03, (tv, exact.round(3), freq.round(3))
    # The collapsed log-likelihood is log p(X | z) of the textbook formula.
    lab = post.labels[0, -1]
    ref = sum(_niw_log_marginal(X[lab == c], prior.mean, prior.kappa, prior.dof, prior.scale)
              if cov == "full" else
              _ng_log_marginal(X[lab == c], prior.mean, prior.kappa, prior.dof - d + 1, np.diag(prior.scale))
              for c in np.unique(lab))
    assert post.log_likelihood[0, -1] == pytest.approx(ref, rel=1e-4, abs=1e-3)
    assert gaussian_log_marginal(X, lab, covariance_type=cov, prior=prior) == pytest.approx(ref, rel=1e-10)


def _case_prior(X):
    d = X.shape[1]
    S0 = np.eye(d) * 0.5 if d == 1 else np.array([[0.5, 0.1], [0.1, 0.3]])
    return GaussianClusterPrior(np.full(d, 0.8), 0.5, d + 1.0, S0)


def _tv(parts, exact, labels):
    index = {p: i for i, p in enumerate(parts)}
    freq = np.zeros(len(parts))
    for lab in labels:
        freq[index[_canon(lab)]] += 1
    freq /= freq.sum()
    return 0.5 * np.abs(freq - exact).sum(), np.abs(freq - exact).max()


@pytest.mark.parametrize("case", list(CASES))
def test_split_merge_move_alone_matches_exact_enumeration(case):
    """Split-merge moves alone (no single-site moves: splits and merges reach every
    partition) leave the exact posterior over all partitions invariant: 4 chains x
    20,000 moves from one cluster (Dahl 2003; Jain & Neal 2004)."""
    import jax
    import jax.numpy as jnp

    from bayesclust.inference.mixtures.gibbs_gaussian import (
        check_gaussian_prior,
        split_merge_move,
        whitened_problem,
    )

    cov, X = CASES[case]
    n = X.shape[0]
    prior, alpha = _case_prior(X), 1.3
    parts, exact = _exact_posterior(X, prior, alpha, cov)
    Z, kappa0, nu0, _ = whitened_problem(X, check_gaussian_prior(prior, X.shape[1], cov), cov)
    Z = jnp.asarray(Z, jnp.float32)
    K = n + 1

    def chain(key):
        def move(carry, k):
            labels, counts, over = carry
            labels, counts, o, _ = split_merge_move(k, Z, labels, counts, jnp.log(alpha), kappa0,
                                                    nu0, full=cov == "full")
            return (labels, counts, over | o), (labels, counts)

        start = (jnp.zeros(n, jnp.int32), jnp.zeros(K).at[0].set(n), jnp.zeros((), bool))
        return jax.lax.scan(move, start, jax.random.split(key, 20_000))

    (_, _, over), (labels, counts) = jax.jit(jax.vmap(chain))(jax.random.split(jax.random.PRNGKey(0), 4))
    assert not bool(jnp.any(over))
    labels, counts = np.asarray(labels).reshape(-1, n), np.asarray(counts).reshape(-1, K)
    # The move keeps the slot sizes it returns consistent with its labels.
    np.testing.assert_array_equal(counts, [np.bincount(lab, minlength=K) for lab in labels])
    tv, worst = _tv(parts, exact, labels)
    assert exact.max() < 0.5
    # 80,000 correlated draws (the move is often rejected): Monte Carlo error ~0.005.
    assert tv < 0.03, (tv, exact.round(3))
    assert worst < 0.01, worst


@pytest.mark.parametrize("case", list(CASES))
def test_sampler_with_split_merge_matches_exact_enumeration(case):
    """One Gibbs sweep plus two split-merge moves per draw: the same exact posterior (run
    through the estimator, which hands its ``split_merge`` to the sampler)."""
    from bayesclust import DPGaussianMixture

    cov, X = CASES[case]
    prior, alpha = _case_prior(X), 1.3
    parts, exact = _exact_posterior(X, prior, alpha, cov)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = DPGaussianMixture(alpha, covariance_type=cov, prior=prior, num_warmup=50,
                                 num_samples=4000, thin=1, num_chains=8, split_merge=2,
                                 keep_draws="all", random_state=2).fit(X).posterior_
    assert post.sampler == f"gibbs-collapsed-{cov}+split-merge"
    rate = post.sample_stats["split_merge_acceptance"]
    assert rate.shape == (8, 4000) and 0.05 < rate.mean() < 0.95
    tv, worst = _tv(parts, exact, post.labels.reshape(-1, X.shape[0]))
    assert tv < 0.03, (tv, exact.round(3))
    assert worst < 0.015, worst


def test_marginal_is_the_product_of_sequential_predictives():
    # p(X_c) = prod_i p(x_i | x_<i), each a scipy multivariate_t (Murphy 2007, eq. 258).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    prior = GaussianClusterPrior(np.array([0.1, -0.2, 0.3]), 0.3, 4.5,
                                 np.array([[1.0, 0.2, 0.0], [0.2, 0.8, 0.1], [0.0, 0.1, 1.5]]))
    total = 0.0
    d = 3
    for i in range(6):
        prev = X[:i]
        n = i
        kn, nn = prior.kappa + n, prior.dof + n
        mn = (prior.kappa * prior.mean + prev.sum(0)) / kn
        xbar = prev.mean(0) if n else np.zeros(d)
        Sn = prior.scale + ((prev - xbar).T @ (prev - xbar) if n else 0) \
            + prior.kappa * n / kn * np.outer(xbar - prior.mean, xbar - prior.mean)
        v = nn - d + 1
        total += stats.multivariate_t(mn, Sn * (kn + 1) / (kn * v), df=v).logpdf(X[i])
    assert gaussian_log_marginal(X, np.zeros(6, int), prior=prior) == pytest.approx(total, rel=1e-10)
    assert _niw_log_marginal(X, prior.mean, prior.kappa, prior.dof, prior.scale) == pytest.approx(
        total, rel=1e-10)


def test_predictive_matches_scipy_student_t():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 1, (7, 2)), rng.normal(4, 0.5, (5, 2))])
    labels = np.array([0] * 7 + [1] * 5)
    X_new = rng.normal(2, 2, (4, 2))
    prior = default_gaussian_prior(X, "full")
    lp = gaussian_predictive_logpdf(X_new, X, labels, covariance_type="full", prior=prior)
    lpd = gaussian_predictive_logpdf(X_new, X, labels, covariance_type="diag", prior=prior)
    for c in range(2):
        Xc = X[labels == c]
        n, d = Xc.shape
        kn, nn = prior.kappa + n, prior.dof + n
        mn = (prior.kappa * prior.mean + Xc.sum(0)) / kn
        xbar = Xc.mean(0)
        Sn = prior.scale + (Xc - xbar).T @ (Xc - xbar) + prior.kappa * n / kn * np.outer(
            xbar - prior.mean, xbar - prior.mean)
        v = nn - d + 1
        ref = stats.multivariate_t(mn, Sn * (kn + 1) / (kn * v), df=v).logpdf(X_new)
        np.testing.assert_allclose(lp[:, c], ref, rtol=1e-10)
        nd = nn - d + 1  # the marginal dof of the NIW's diagonal
        s2 = np.diag(Sn) * (kn + 1) / (kn * nd)
        refd = stats.t(df=nd, loc=mn, scale=np.sqrt(s2)).logpdf(X_new).sum(1)
        np.testing.assert_allclose(lpd[:, c], refd, rtol=1e-10)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cholesky_rank_one_matches_numpy(sign):
    rng = np.random.default_rng(2)
    A = rng.normal(size=(5, 5))
    A = A @ A.T + 5 * np.eye(5)
    v = rng.normal(size=5) * (0.5 if sign < 0 else 1.0)
    L = cholesky_rank_one(np.linalg.cholesky(A).astype(np.float32), v.astype(np.float32), sign)
    np.testing.assert_allclose(np.asarray(L), np.linalg.cholesky(A + sign * np.outer(v, v)),
                               rtol=1e-4, atol=1e-5)


def test_bad_input_names_the_argument():
    X = np.random.default_rng(0).normal(size=(10, 2))
    kw = dict(num_warmup=1, num_samples=1, num_chains=1, progress_bar=False)
    with pytest.raises(ValueError, match="covariance_type"):
        gibbs_dp_gaussian(0, X, covariance_type="tied", **kw)
    good = default_gaussian_prior(X, "full")
    with pytest.raises(ValueError, match="prior.dof"):
        gibbs_dp_gaussian(0, X, prior=good._replace(dof=0.5), **kw)
    with pytest.raises(ValueError, match="prior.scale"):
        gibbs_dp_gaussian(0, X, prior=good._replace(scale=np.array([[1.0, 2.0], [2.0, 1.0]])), **kw)
    with pytest.raises(ValueError, match="prior.mean"):
        gibbs_dp_gaussian(0, X, prior=good._replace(mean=np.zeros(3)), **kw)
    with pytest.raises(ValueError, match="prior.kappa"):
        gibbs_dp_gaussian(0, X, prior=good._replace(kappa=-1.0), **kw)
    with pytest.raises(TypeError, match="prior"):
        gibbs_dp_gaussian(0, X, prior="vague", **kw)
    with pytest.raises(ValueError, match="alpha"):
        gibbs_dp_gaussian(0, X, alpha=0.0, **kw)
    with pytest.raises(ValueError, match="X"):
        gibbs_dp_gaussian(0, np.full((4, 2), np.nan), **kw)


def _anisotropic(seed=0, correlated=True):
    """Three well-separated elongated clusters (the third correlated unless not ``correlated``)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(0, [3.0, 0.3], (60, 2))
    B = rng.normal(0, [0.3, 3.0], (60, 2)) + [12.0, 0.0]
    R = np.array([[1.0, 0.9], [0.9, 1.0]])
    if correlated:
        C = rng.normal(0, 1, (60, 2)) @ np.linalg.cholesky(R).T * 1.5 + [0.0, 12.0]
    else:
        C = rng.normal(0, [2.0, 0.5], (60, 2)) + [0.0, 12.0]
    return np.concatenate([A, B, C]), np.repeat([0, 1, 2], 60)


#: The run of the two tests on 180 anisotropic points (the estimator's thin and moves are
#: gibbs_dp_gaussian's defaults): one compiled sampler per covariance type.
_RUN180 = dict(num_warmup=100, num_samples=100, num_chains=4)


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_estimator_recovers_anisotropic_clusters(cov):
    from bayesclust import DPGaussianMixture

    X, y = _anisotropic(correlated=cov == "full")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPGaussianMixture(covariance_type=cov, random_state=0, **_RUN180).fit(X)
    assert est.n_clusters_ == 3
    assert est.posterior_.sampler == f"gibbs-collapsed-{cov}"  # split_merge=None: none
    assert adjusted_rand_index(y, est.labels_) > 0.97
    proba = est.predict_proba(X)
    assert proba.shape == (180, 3)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert np.mean(est.predict(X) == est.labels_) > 0.97
    # The centres are the posterior means of the clusters' means.
    for c in range(3):
        Xc = X[est.labels_ == c]
        ref = (est.prior_.kappa * est.prior_.mean + Xc.sum(0)) / (est.prior_.kappa + len(Xc))
        np.testing.assert_allclose(est.cluster_centers_[c], ref, rtol=1e-8)


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_default_prior_is_unit_free(cov):
    X, _ = _anisotropic(1)
    kw = dict(covariance_type=cov, progress_bar=False, **_RUN180)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gibbs_dp_gaussian(3, X, **kw)
        # A power-of-two scale and a shift: the whitened data, hence the draws, are the same.
        b = gibbs_dp_gaussian(3, X * 1024.0 + 7.0, **kw)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(b.log_likelihood, a.log_likelihood - X.size * np.log(1024.0), rtol=1e-5)


def test_default_prior_values():
    X, _ = _anisotropic(2)
    p = default_gaussian_prior(X, "full", n_clusters=4)
    np.testing.assert_allclose(p.mean, X.mean(0))
    np.testing.assert_allclose(p.scale, np.cov(X, rowvar=False) / 4.0)
    assert p.dof == 4.0 and p.kappa == pytest.approx(0.25)
    pd = default_gaussian_prior(X, "diag", n_clusters=4)
    np.testing.assert_allclose(pd.scale, np.var(X, axis=0, ddof=1) / 4.0)


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_numpyro_program_runs_and_matches_the_prior(cov):
    import jax
    from numpyro.infer import Predictive

    from bayesclust.models.dp_gaussian import dp_gaussian_mixture

    S0 = np.array([[2.0, 0.5], [0.5, 1.0]])
    prior = GaussianClusterPrior(np.array([1.0, -1.0]), 0.5, 6.0, S0)
    draws = Predictive(dp_gaussian_mixture, num_samples=4000)(
        jax.random.PRNGKey(0), covariance_type=cov, prior=prior, n=3, truncation=3)
    assert draws["x"].shape == (4000, 3, 2)
    assert draws["z"].shape == (4000, 3)
    if cov == "full":
        A = np.asarray(draws["precision_chol"])  # (S, T, d, d)
        Sigma = np.linalg.inv(A @ np.swapaxes(A, -1, -2))
        # E[Sigma] = S0 / (nu0 - d - 1) under IW(nu0, S0).
        np.testing.assert_allclose(Sigma.mean((0, 1)), S0 / 3.0, rtol=0.1, atol=0.03)
    else:
        lam = np.asarray(draws["precision"])
        np.testing.assert_allclose(lam.mean((0, 1)), 5.0 / np.diag(S0), rtol=0.05)
    np.testing.assert_allclose(np.asarray(draws["means"]).mean((0, 1)), prior.mean, atol=0.1)
    # Conditioned on data it is a log density NUTS can use.
    from numpyro.infer.util import log_density

    X = np.random.default_rng(0).normal(size=(5, 2))
    params = {k: v[0] for k, v in draws.items() if k not in ("x", "z", "precision_chol")}
    params["z"] = np.zeros(5, int)
    lp, _ = log_density(dp_gaussian_mixture, (X,), dict(covariance_type=cov, prior=prior,
                                                      truncation=3), params)
    assert np.isfinite(float(lp))


def _reference_log_marginal(X, labels, prior, cov):
    d = X.shape[1]
    total = 0.0
    for c in np.unique(labels):
        Xc = X[labels == c]
        if cov == "full":
            total += _niw_log_marginal(Xc, prior.mean, prior.kappa, prior.dof, prior.scale)
        else:
            total += _ng_log_marginal(Xc, prior.mean, prior.kappa, prior.dof - d + 1,
                                      np.diag(prior.scale) if prior.scale.ndim == 2 else prior.scale)
    return total


@pytest.mark.parametrize("cov", ["full", "diag"])
def test_large_tight_cluster_far_from_the_prior_mean(cov):
    """20,000 points of variance 1e-3 at distance 10: the sampler's float32 statistics
    must not cancel (raw second moments gave a NaN factor / a log-likelihood thousands
    of nats off)."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 1, (20_000, 2)), 10 + rng.normal(0, 0.03, (20_000, 2))])
    truth = np.repeat([0, 1], 20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = gibbs_dp_gaussian(0, X, covariance_type=cov, num_warmup=1, num_samples=2,
                                 num_chains=1, init_labels=truth, progress_bar=False)
    labels = np.asarray(post.labels[0, -1])
    ref = _reference_log_marginal(X, labels, default_gaussian_prior(X, cov), cov)
    assert np.isfinite(post.log_likelihood).all()
    assert post.log_likelihood[0, -1] == pytest.approx(ref, abs=1e-5 * abs(ref) + 0.5)


def test_near_constant_feature_gets_a_finite_prior_and_predictive():
    """A column of 0.1s has round-off variance (~1e-34), not zero: it is treated as constant."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=50), np.full(50, 0.1)])
    prior = default_gaussian_prior(X, "diag")
    assert prior.scale[1] == pytest.approx(prior.scale[0])  # the other column's variance
    labels = np.repeat([0, 1], 25)
    assert np.isfinite(gaussian_log_marginal(X, labels, covariance_type="diag"))
    assert np.isfinite(gaussian_predictive_logpdf(X[:5], X, labels, covariance_type="diag")).all()


def test_estimator_takes_a_prior_of_plain_lists():
    from bayesclust import DPGaussianMixture

    X = np.random.default_rng(2).normal(size=(20, 2))
    prior = GaussianClusterPrior([0.0, 0.0], 2, 4.0, [1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPGaussianMixture(covariance_type="full", prior=prior, num_warmup=5, num_samples=5,
                                num_chains=2, random_state=0).fit(X)
    assert est.prior_.kappa == 2.0 and est.prior_.mean.shape == (2,)
    np.testing.assert_allclose(est.cluster_centers_.shape, (est.n_clusters_, 2))


def test_large_units_and_round_off_asymmetric_scale_are_accepted():
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = gibbs_dp_gaussian(0, 1e18 * rng.normal(size=(60, 2)), covariance_type="diag",
                                 num_warmup=2, num_samples=2, num_chains=1, progress_bar=False)
        assert np.isfinite(post.log_likelihood).all()
        S = np.array([[1.0, 1e-17], [0.0, 1.0]])
        # test_estimator_takes_a_prior_of_plain_lists's shapes and run: one compile.
        post = gibbs_dp_gaussian(0, rng.normal(size=(20, 2)), prior=GaussianClusterPrior(np.zeros(2), 1.0, 4.0, S),
                                 num_warmup=5, num_samples=5, num_chains=2, progress_bar=False)
    assert post.n_draws == 5


def test_rows_padded_to_a_bucket_leave_every_draw_unchanged(monkeypatch):
    """29 rows run padded to 32 (zeros, label -1, skipped by the point moves and the
    split-merge moves' pair): every draw is the unpadded run's, bit for bit.  Full
    covariances: "diag" runs the same padded scan, moves and statistics (its own point
    step only), and its refit is counted in test_first_call.py."""
    covariance_type = "full"
    import numpyro.distributions as dist

    import bayesclust.inference.mixtures.gibbs_gaussian as GG

    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(0, [1.0, 0.2], (15, 2)), rng.normal(4, [0.2, 1.0], (14, 2))])
    kw = dict(covariance_type=covariance_type, alpha_prior=dist.Gamma(1.0, 1.0), num_warmup=2,
              num_samples=3, num_chains=2, split_merge=1, progress_bar=False)
    assert GG.run_rows(29) == 32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few draws: a ConvergenceWarning
        padded = gibbs_dp_gaussian(2, X, **kw)
        monkeypatch.setattr(GG, "run_rows", lambda n: n)
        plain = gibbs_dp_gaussian(2, X, **kw)
    assert padded.labels.shape == (2, 3, 29)
    np.testing.assert_array_equal(padded.labels, plain.labels)
    np.testing.assert_array_equal(padded.log_likelihood, plain.log_likelihood)
    np.testing.assert_array_equal(padded.params["alpha"], plain.params["alpha"])
