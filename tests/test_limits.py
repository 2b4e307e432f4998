"""The sampled model and its hard limit: Kulis & Jordan's small-variance asymptotics.

As sigma2 -> 0 with alpha = alpha_from_lam(lam, sigma2, rho2, d), the Gibbs
sampler of the DP mixture becomes DP-means (Kulis & Jordan 2012, §3.1).
"""

import jax
import jax.numpy as jnp
import numpy as np

from bayesclust import datasets, farthest_first_lambda
from bayesclust.comparison import small_variance_path
from bayesclust.inference.hard.dp_means import dp_means_pass
from bayesclust.inference.mixtures.gibbs import gibbs_sweep, init_state
from bayesclust.models.dp_gmm import log_alpha_from_lam

from ._reference import canonical, dp_means_pass_live_counts


def _random_state(rng, n, d, k):
    X = rng.normal(scale=2.0, size=(n, d))
    labels = rng.integers(k, size=n)
    labels = np.unique(labels, return_inverse=True)[1]
    centers = np.array([X[labels == c].mean(0) for c in range(labels.max() + 1)])
    return X, labels, centers


def test_one_sweep_is_a_dp_means_pass_in_the_small_variance_limit(x64):
    """sigma2 -> 0 with alpha = alpha_from_lam(lam, ...): one sweep of Kulis &
    Jordan's Algorithm 2 (means frozen during the sweep) is the DP-means pass
    in which clusters die the moment they empty (docs/deviations.md#dpmeans-own-cluster)."""
    rng = np.random.default_rng(0)
    rho2 = 100.0
    sweep = jax.jit(gibbs_sweep, static_argnames=("collapsed",))
    matches = 0
    for case in range(60):
        n, d = 30, 2
        X, labels, centers = _random_state(rng, n, d, int(rng.integers(1, 6)))
        lam = float(rng.uniform(0.5, 8.0))
        # A new cluster's mean is drawn around its seed with sd ~ sqrt(sigma2),
        # so sigma2 must be small enough that no near-tie of the pass is decided
        # by that noise: 60 random cases hold margins of ~1e-4 (a distance vs
        # lambda, two centres), which at sigma2 = 1e-6 * lam some random streams
        # flip -- the XLA path with other keys as well as the native sweep.
        sigma2 = 1e-12 * lam
        log_alpha = log_alpha_from_lam(lam, sigma2, rho2, d)  # alpha itself underflows
        expected = dp_means_pass_live_counts(X, labels, centers, lam)
        state = init_state(jnp.asarray(X), jnp.asarray(labels), 64, log_alpha, sigma2)
        state = state._replace(means=jnp.zeros((64, d)).at[: len(centers)].set(centers))
        out, _ = sweep(jax.random.PRNGKey(case), jnp.asarray(X), state, rho2=rho2, collapsed=False)
        assert not bool(out.overflow)
        assert canonical(np.asarray(out.labels)) == canonical(expected), f"case {case}"
        matches += 1
    assert matches == 60


def test_limit_sweep_equals_package_pass_when_no_cluster_empties(x64):
    """Where no cluster empties during the pass, the live-count pass and
    the printed Algorithm 1 coincide: the sweep equals the package's bulk pass."""
    rng = np.random.default_rng(1)
    rho2, d = 100.0, 2
    sweep = jax.jit(gibbs_sweep, static_argnames=("collapsed",))
    checked = 0
    for case in range(40):
        X, labels, centers = _random_state(rng, 30, d, 3)
        if np.bincount(labels).min() < 4:
            continue  # keep clusters big enough that none empties in one pass
        lam = float(rng.uniform(2.0, 8.0))
        # A new cluster's mean is drawn around its seed with sd ~ sqrt(sigma2):
        # small enough here that near-ties between a seed and an old centre
        # (case 8 of this stream: a gap of ~1e-3) are decided as in the pass.
        sigma2 = 1e-10 * lam
        ref = dp_means_pass_live_counts(X, labels, centers, lam)
        if len(np.unique(ref)) < len(centers):
            continue
        buf = jnp.zeros((64, d)).at[: len(centers)].set(centers)
        bulk, *_ = jax.jit(dp_means_pass)(jnp.asarray(X), jnp.ones(30), buf, len(centers), lam)
        state = init_state(jnp.asarray(X), jnp.asarray(labels), 64, log_alpha_from_lam(lam, sigma2, rho2, d), sigma2)
        state = state._replace(means=buf)
        out, _ = sweep(jax.random.PRNGKey(case), jnp.asarray(X), state, rho2=rho2, collapsed=False)
        assert canonical(np.asarray(out.labels)) == canonical(np.asarray(bulk)) == canonical(ref)
        checked += 1
    assert checked >= 10


def test_small_variance_path_collapses_onto_dp_means():
    """Along decreasing sigma2 the posterior ends on the DP-means partition (NMI 1)."""
    X, _ = datasets.three_gaussians(0)
    lam = farthest_first_lambda(X, 3)
    path = small_variance_path(0, X, lam, lam * np.array([1.0, 1e-2, 1e-4]),
                               num_warmup=30, num_samples=20)
    assert path.hard.n_clusters == 3
    assert path.nmi_point[-1] == 1.0
    assert path.p_k_hard[-1] == 1.0
    assert path.nmi_point[-1] >= path.nmi_point[0]
    log_alpha = [log_alpha_from_lam(lam, s2, 100.0, X.shape[1]) for s2 in path.temperature]
    assert np.all(np.diff(log_alpha) < 0)
