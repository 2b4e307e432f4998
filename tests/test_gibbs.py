"""Gibbs samplers of the DP mixture: exact enumeration, the DP-means limit, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import logsumexp

from bayesclust.inference.gibbs import gibbs_dp_gmm
from bayesclust.kernels import crp_log_prior

from ._reference import all_partitions, canonical, dp_gmm_log_posterior


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_crp_prior_sums_to_one_over_all_partitions(n):
    for alpha in (0.3, 1.0, 4.0):
        logs = [float(crp_log_prior(jnp.bincount(jnp.asarray(p), length=n).astype(float), alpha))
                for p in all_partitions(n)]
        assert np.exp(logsumexp(logs)) == pytest.approx(1.0, abs=1e-5)


def test_partition_count_is_bell_number():
    assert [sum(1 for _ in all_partitions(n)) for n in range(1, 7)] == [1, 2, 5, 15, 52, 203]


@pytest.mark.slow
@pytest.mark.parametrize("collapsed", [True, False])
def test_stationary_distribution_matches_enumeration(x64, collapsed):
    """For n = 5 the sampled partition frequencies match the exact posterior."""
    X = np.array([[-1.2], [-0.9], [0.1], [1.0], [1.4]])
    alpha, sigma2, rho2 = 1.0, 0.3, 2.0
    parts = list(all_partitions(len(X)))
    logp = np.array([dp_gmm_log_posterior(X, p, alpha, sigma2, rho2) for p in parts])
    exact = dict(zip(parts, np.exp(logp - logsumexp(logp))))

    post = gibbs_dp_gmm(0, X, alpha=alpha, sigma2=sigma2, rho2=rho2, collapsed=collapsed,
                        num_warmup=200, num_samples=6000, num_chains=4, center=False,
                        progress_bar=False)
    draws = post.labels.reshape(-1, len(X))
    counts = {}
    for d in draws:
        key = canonical(d)
        counts[key] = counts.get(key, 0) + 1
    empirical = {p: counts.get(p, 0) / len(draws) for p in parts}
    tv = 0.5 * sum(abs(empirical[p] - exact[p]) for p in parts)
    worst = max(abs(empirical[p] - exact[p]) for p in parts)
    # 24,000 correlated draws: Monte Carlo error of a probability is below ~0.01.
    assert tv < 0.04, tv
    assert worst < 0.02, worst


@pytest.mark.paper
def test_three_gaussians_posterior_point_partition():
    """KJ §6.2 data: the posterior point partition (VI loss) has k = 3 and NMI
    >= 0.85 to the truth on average over data sets (DP-means: .89 in the paper)."""
    from bayesclust import datasets, metrics

    nmis = []
    for seed in range(3):
        X, y = datasets.three_gaussians(seed)
        post = gibbs_dp_gmm(seed, X, alpha=1.0, sigma2=0.65**2, rho2=100.0, collapsed=True,
                            num_warmup=200, num_samples=200, num_chains=2, progress_bar=False)
        point = post.point_estimate("vi")
        assert metrics.n_clusters(point) == 3
        nmis.append(metrics.nmi(y, point))
    assert np.mean(nmis) >= 0.85, nmis


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(sigma2=0.0), "sigma2 must be a positive"),
        (dict(rho2=-1.0), "rho2 must be a positive"),
        (dict(alpha=0.0), "alpha must be a positive"),
        (dict(alpha_prior=(1.0,)), "alpha_prior must be a pair"),
        (dict(sigma2_prior=(1.0, -1.0)), r"sigma2_prior\[1\] must be a positive"),
        (dict(num_samples=0), "num_samples must be >= 1"),
        (dict(init_labels=[0, 1]), "init_labels has length 2"),
    ],
)
def test_bad_input(kwargs, match):
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=match):
        gibbs_dp_gmm(0, X, progress_bar=False, **kwargs)


def test_nan_data_rejected():
    with pytest.raises(ValueError, match="X contains NaN"):
        gibbs_dp_gmm(0, np.array([[0.0, np.nan], [1.0, 2.0]]), progress_bar=False)
