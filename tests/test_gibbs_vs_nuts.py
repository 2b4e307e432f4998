"""The collapsed Gibbs sampler against NUTS on the stick-breaking program, and jit vs eager.

Both samplers target the posterior over partitions of the same DP Gaussian mixture
(Kulis & Jordan 2012, §2.2): ``z ~ CRP(alpha)``, ``mu_c ~ N(0, rho2 I)``,
``x_i ~ N(mu_{z_i}, sigma2 I)``, with ``alpha``, ``sigma2`` and ``rho2`` fixed.  The
Gibbs sampler integrates the means out (Neal's Algorithm 3); NUTS samples the weights
and means of a truncated stick-breaking representation and draws the labels from their
conditional afterwards, so its ``k`` is the number of occupied components of those labels.

Choice of data (ours): eight 2-D points, so that the exact posterior of ``k`` is
available by enumerating all 4,140 partitions (a third, independent witness), with
``k`` genuinely uncertain (P(k = 2..5) all > 4%).  On larger data (n = 30-36 was tried)
NUTS on the stick-breaking program with the default ``target_accept_prob = 0.8``
under-visits configurations with small extra clusters: its E[k] came out 0.07-0.12
(2-4 MCSE) below both this Gibbs sampler and an independent pure-NumPy collapsed Gibbs
sampler, and agreed only with ``target_accept_prob = 0.95`` and long chains (too slow
for a test).  Here NUTS uses ``target_accept_prob = 0.9``.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.diagnostics import effective_sample_size
from scipy.special import gammaln, logsumexp

from bayesclust.inference.mixtures.gibbs import gibbs_dp_gmm, gibbs_sweep, init_state
from bayesclust.inference.mixtures.mcmc import run_nuts
from bayesclust.models.dp_gmm import TruncationWarning, check_truncation, dp_gmm

from ._reference import all_partitions, dp_gmm_log_posterior

ALPHA, SIGMA2, RHO2 = 1.0, 0.3, 4.0
TRUNCATION = 12
#: Tolerance in Monte Carlo standard errors (two-sided; a false alarm is ~1e-4 per check).
Z = 4.0


def _data():
    X = np.array(
        [[-2.1, 0.3], [-1.7, -0.2], [-2.4, -0.5], [-0.3, 0.4],
         [0.5, -0.1], [1.9, 0.2], [2.3, -0.4], [1.6, 0.6]]
    )
    return X - X.mean(0)  # both samplers use a prior on the means centred at 0


def _exact_k_distribution(X):
    """P(k | X) by enumerating every partition (CRP prior times the Gaussian marginal of
    each cluster, the literal formula of ``_reference.dp_gmm_log_posterior``, with each
    cluster's term computed once per subset)."""
    n = len(X)
    cluster_term = {}

    def term(members):
        if members not in cluster_term:
            idx = list(members)
            # a one-cluster partition of the members: log alpha + log Gamma(m) + marginal,
            # minus the CRP normaliser of m points (added back for n below)
            m = len(idx)
            cluster_term[members] = (
                dp_gmm_log_posterior(X[idx], np.zeros(m, int), ALPHA, SIGMA2, RHO2)
                - gammaln(ALPHA) + gammaln(ALPHA + m)
            )
        return cluster_term[members]

    logp, ks = [], []
    for part in all_partitions(n):
        part = np.asarray(part)
        clusters = [tuple(np.flatnonzero(part == c)) for c in np.unique(part)]
        logp.append(sum(term(c) for c in clusters) + gammaln(ALPHA) - gammaln(ALPHA + n))
        ks.append(len(clusters))
    logp, ks = np.array(logp), np.array(ks)
    prob = np.exp(logp - logsumexp(logp))
    return {k: float(prob[ks == k].sum()) for k in range(1, n + 1)}


def _mean_and_mcse(values):
    """Mean of a (chains, draws) array and its Monte Carlo standard error via the ESS."""
    values = np.asarray(values, dtype=np.float64)
    if np.ptp(values) == 0:
        return float(values.mean()), 0.0
    ess = float(effective_sample_size(values))
    return float(values.mean()), float(values.std() / np.sqrt(ess))


@pytest.mark.slow
def test_gibbs_and_nuts_agree_on_the_posterior_of_k():
    X = _data()
    exact = _exact_k_distribution(X)
    exact_mean = sum(k * p for k, p in exact.items())
    assert all(exact[j] > 0.04 for j in (2, 3, 4, 5)), exact  # k is genuinely uncertain

    gibbs = gibbs_dp_gmm(
        0, X, alpha=ALPHA, sigma2=SIGMA2, rho2=RHO2, collapsed=True, center=False,
        num_warmup=100, num_samples=2500, num_chains=2, progress_bar=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)  # the truncation must not matter
        nuts = run_nuts(
            1, dp_gmm, X, truncation=TRUNCATION, alpha=ALPHA, sigma2=SIGMA2, rho2=RHO2,
            num_warmup=200, num_samples=700, num_chains=2, progress_bar=False,
            nuts_kwargs=dict(target_accept_prob=0.9),
        )
    # Same model on both sides: the constants recorded by NUTS are the Gibbs ones.
    np.testing.assert_allclose(nuts.params["alpha"], ALPHA)
    np.testing.assert_allclose(nuts.params["sigma2"], SIGMA2)
    assert check_truncation(nuts.params["weights"], tol=1e-3) < 1e-3
    assert np.mean(nuts.sample_stats["diverging"]) < 0.01

    # NUTS' k: occupied components of its label draws (counted here, not by the package).
    k_nuts = np.array([[len(np.unique(z)) for z in chain] for chain in nuts.labels])
    k_gibbs = np.array([[len(np.unique(z)) for z in chain] for chain in gibbs.labels])

    checks = {"E[k]": (k_gibbs, k_nuts, exact_mean)}
    for j in (2, 3, 4):
        checks[f"P(k={j})"] = ((k_gibbs == j).astype(float), (k_nuts == j).astype(float), exact[j])
    for name, (g, n_, truth) in checks.items():
        mg, sg = _mean_and_mcse(g)
        mn, sn = _mean_and_mcse(n_)
        assert abs(mg - mn) <= Z * np.hypot(sg, sn), (name, mg, sg, mn, sn)
        assert abs(mg - truth) <= Z * sg, (name, "gibbs", mg, sg, truth)
        assert abs(mn - truth) <= Z * sn, (name, "nuts", mn, sn, truth)


def test_gibbs_sweep_jit_and_eager_agree(x64):
    """One sweep (point moves, new clusters, mean draws, alpha / sigma2 updates) gives the
    same state compiled and op by op, from the same key: both samplers, with and without
    the hyper-parameter updates (one test, so that the op-by-op compilations are shared)."""
    rng = np.random.default_rng(3)
    X = jnp.asarray(np.concatenate([rng.normal(c, 0.5, size=(3, 2)) for c in (-2.0, 0.0, 2.0)]))
    labels = jnp.asarray(rng.integers(0, 3, size=len(X)))
    state = init_state(X, labels, 16, np.log(1.5), 0.4)
    key = jax.random.PRNGKey(7)
    jitted = jax.jit(gibbs_sweep, static_argnames=("collapsed", "alpha_prior", "sigma2_prior"))
    assert X.dtype == jnp.float64

    for collapsed, priors in ((True, False), (False, True)):
        case = f"collapsed={collapsed}, priors={priors}"
        kwargs = dict(rho2=9.0, collapsed=collapsed)
        if priors:
            kwargs.update(alpha_prior=(2.0, 1.0), sigma2_prior=(3.0, 1.0))
        out_jit, info_jit = jitted(key, X, state, **kwargs)
        with jax.disable_jit():
            out_eager, info_eager = gibbs_sweep(key, X, state, **kwargs)
        for name in info_jit._fields:
            assert int(getattr(info_jit, name)) == int(getattr(info_eager, name)), f"{case}: {name}"

        assert out_jit.labels.dtype == out_eager.labels.dtype == jnp.int32, case
        assert out_eager.means.dtype == jnp.float64, case
        np.testing.assert_array_equal(np.asarray(out_jit.labels), np.asarray(out_eager.labels), err_msg=case)
        # The sweep did something: the state moved away from the random start.
        assert not np.array_equal(np.asarray(out_eager.labels), np.asarray(labels)), case
        assert not bool(out_jit.overflow) and not bool(out_eager.overflow), case
        for name in ("counts", "sums", "means", "log_alpha", "sigma2"):
            np.testing.assert_allclose(
                np.asarray(getattr(out_jit, name)), np.asarray(getattr(out_eager, name)),
                rtol=1e-10, atol=1e-12, err_msg=f"{case}: {name}",
            )
        if priors:  # the hyper-parameters were actually resampled
            assert float(out_eager.sigma2) != 0.4, case
            assert float(out_eager.log_alpha) != pytest.approx(np.log(1.5)), case
