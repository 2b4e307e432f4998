"""NUTS / SVI glue (bayesclust.inference.mixtures.mcmc) on the DP Gaussian mixture program.

The statistical tests use three well-separated 2-D blobs (n = 90, std 0.5) and the
model with sigma2 fixed at the true variance, rho2 = 100 (Kulis & Jordan §6.1).
NUTS runs once per module (compilation dominates the cost).
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp, softmax

from bayesclust.inference.mixtures.mcmc import (
    LABEL_SAMPLERS,
    POSTERIOR_CHECKS,
    register_model,
    run_nuts,
    run_svi,
    sample_mixture_labels,
)
from bayesclust.inference.mixtures.posterior import Posterior
from bayesclust.metrics import nmi
from bayesclust.models.dp_gmm import TruncationWarning, alpha_from_lam, dp_gmm

SIGMA2 = 0.25  # true within-blob variance (std 0.5)


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.5]])
    y = np.repeat(np.arange(3), 30)
    X = centers[y] + np.sqrt(SIGMA2) * rng.normal(size=(90, 2))
    return (X - X.mean(0)).astype(np.float32), y


@pytest.fixture(scope="module")
def nuts_posterior(blobs):
    X, _ = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)  # checked separately below
        return run_nuts(
            0, dp_gmm, X, num_warmup=300, num_samples=300, progress_bar=False,
            truncation=8, alpha=1.0, sigma2=SIGMA2, rho2=100.0,
        )


# --------------------------------------------------------------------------- #
# NUTS
# --------------------------------------------------------------------------- #


def test_nuts_recovers_three_clusters(nuts_posterior, blobs):
    _, y = blobs
    post = nuts_posterior
    k = post.n_clusters.ravel()
    assert np.bincount(k).argmax() == 3  # posterior mode of the number of clusters
    assert np.mean(k == 3) > 0.8
    scores = [nmi(y, labels) for labels in post.labels.reshape(-1, y.size)]
    assert np.mean(scores) > 0.9  # KJ report .89 for DP-means on their 3-Gaussian set


def test_nuts_posterior_contents(nuts_posterior, blobs):
    X, _ = blobs
    post = nuts_posterior
    assert isinstance(post, Posterior)
    assert post.sampler == "NUTS" and post.model == "dp_gmm"
    assert post.labels.shape == (1, 300, 90)
    assert post.labels.min() >= 0 and post.labels.max() < 8
    assert post.log_likelihood.shape == (1, 300)
    p = post.params
    assert p["means"].shape == (1, 300, 8, 2)
    assert p["weights"].shape == (1, 300, 8)
    assert p["v"].shape == (1, 300, 7)
    np.testing.assert_allclose(p["alpha"], 1.0)  # constants broadcast per draw
    np.testing.assert_allclose(p["sigma2"], SIGMA2)
    np.testing.assert_allclose(p["weights"].sum(-1), 1.0, rtol=1e-5)
    assert {"diverging", "accept_prob"} <= set(post.sample_stats)
    assert post.sample_stats["diverging"].shape == (1, 300)
    assert np.mean(post.sample_stats["accept_prob"]) > 0.5
    assert post.seconds is not None and post.seconds > 0
    # log_likelihood is log p(X | w, mu, sigma2), as SciPy computes it (float32 tolerance).
    for s in (0, 150, 299):
        w, mu = p["weights"][0, s].astype(float), p["means"][0, s].astype(float)
        comp = np.stack(
            [stats.multivariate_normal(m, SIGMA2 * np.eye(2)).logpdf(X) for m in mu], axis=1
        )
        expected = logsumexp(np.log(np.maximum(w, 1e-300)) + comp, axis=1).sum()
        assert post.log_likelihood[0, s] == pytest.approx(expected, rel=1e-4)
    # The truncation is ample here: the last of 8 components is (nearly) unused.
    assert p["weights"][..., -1].mean() < 0.05


def test_nuts_labels_follow_the_means(nuts_posterior, blobs):
    # Blobs are 4 apart with std 0.5: every label draw assigns a point to its nearest mean
    # except with probability ~exp(-8); so nearly all labels are the argmax responsibility.
    X, _ = blobs
    post = nuts_posterior
    mu = post.params["means"][0]
    d2 = ((X[None, :, None, :] - mu[:, None, :, :]) ** 2).sum(-1)
    logw = np.log(np.maximum(post.params["weights"][0], 1e-30))
    best = np.argmax(logw[:, None, :] - d2 / (2 * SIGMA2), axis=-1)
    assert np.mean(best == post.labels[0]) > 0.99


# --------------------------------------------------------------------------- #
# Label conditional
# --------------------------------------------------------------------------- #


def test_sample_mixture_labels_matches_exact_conditional():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4, 2)).astype(np.float32)
    w = np.array([0.5, 0.3, 0.2, 0.0], np.float32)  # an empty slot is never chosen
    mu = np.array([[0.0, 0.0], [1.0, 0.5], [-0.5, 1.0], [0.0, 0.0]], np.float32)
    S = 10000
    labels = np.asarray(
        sample_mixture_labels(0, X, np.tile(w, (S, 1)), np.tile(mu, (S, 1, 1)), 0.8)
    )
    assert labels.shape == (S, 4) and labels.dtype == np.int32
    log_lik = np.stack([stats.multivariate_normal(m, 0.8 * np.eye(2)).logpdf(X) for m in mu[:3]], 1)
    exact = softmax(np.log(w[:3]) + log_lik, axis=1)
    freq = np.stack([(labels == k).mean(0) for k in range(4)], axis=1)
    np.testing.assert_allclose(freq[:, :3], exact, atol=0.02)  # 4 binomial std (<= 0.005) at S = 1e4
    assert freq[:, 3].max() == 0.0


def test_sample_mixture_labels_per_draw_parameters():
    # Two draws with swapped means: labels swap too (the conditional is per draw).
    X = np.array([[-5.0, 0.0], [5.0, 0.0]], np.float32)
    mu = np.array([[[-5.0, 0.0], [5.0, 0.0]], [[5.0, 0.0], [-5.0, 0.0]]], np.float32)
    w = np.full((2, 2), 0.5, np.float32)
    labels = np.asarray(sample_mixture_labels(jax.random.PRNGKey(3), X, w, mu, np.array([0.1, 0.1])))
    np.testing.assert_array_equal(labels, [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="weights must be"):
        sample_mixture_labels(0, X, w[0], mu, 0.1)
    with pytest.raises(ValueError, match="X contains NaN"):
        sample_mixture_labels(0, np.full((2, 2), np.nan), w, mu, 0.1)


# --------------------------------------------------------------------------- #
# SVI
# --------------------------------------------------------------------------- #


def test_svi_delta_finds_three_clusters(blobs):
    X, y = blobs
    # MAP needs a sparsity-inducing Beta(1, alpha < 1) on the sticks (for alpha = 1 the
    # prior is flat and coincident duplicate components score the same as one); use
    # KJ's small-variance map with a DP-means penalty lam = 4 (alpha ~ 0.13).
    alpha = alpha_from_lam(4.0, SIGMA2, 100.0, 2)
    post = run_svi(
        1, dp_gmm, X, guide="delta", num_steps=1000, num_samples=300, learning_rate=0.05,
        n_init=5, progress_bar=False, truncation=8, alpha=alpha, sigma2=SIGMA2,
    )
    assert post.sampler == "SVI(AutoDelta)" and post.model == "dp_gmm"
    assert post.labels.shape == (1, 300, 90)
    assert np.bincount(post.n_clusters.ravel()).argmax() == 3
    assert np.mean([nmi(y, labels) for labels in post.labels[0]]) > 0.9
    # A delta guide: every draw has the same parameters.
    means = post.params["means"][0]
    np.testing.assert_array_equal(means, np.broadcast_to(means[0], means.shape))
    assert post.sample_stats == {}


# --------------------------------------------------------------------------- #
# Registry, checks and bad input (cheap: everything raises before compiling)
# --------------------------------------------------------------------------- #


def test_registry_and_truncation_check():
    assert "dp_gmm" in LABEL_SAMPLERS and "dp_gmm" in POSTERIOR_CHECKS
    heavy = {"weights": np.tile([0.1, 0.1, 0.8], (1, 5, 1))}
    with pytest.warns(TruncationWarning):
        POSTERIOR_CHECKS["dp_gmm"](heavy)

    def labels_fn(key, samples, model_args, model_kwargs):
        return jnp.zeros((samples["weights"].shape[0], 3), jnp.int32)

    register_model("_test_model", labels_fn)
    try:
        assert LABEL_SAMPLERS["_test_model"] is labels_fn
        assert "_test_model" not in POSTERIOR_CHECKS
    finally:
        LABEL_SAMPLERS.pop("_test_model")
    with pytest.raises(TypeError, match="label_sampler"):
        register_model("x", 3)


_X = np.random.default_rng(0).normal(size=(10, 2))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(chain_method="threads"), ValueError, "chain_method"),
        (dict(num_samples=0), ValueError, "num_samples"),
        (dict(num_warmup=-1), ValueError, "num_warmup"),
        (dict(num_chains=1.5), TypeError, "num_chains"),
        (dict(label_sampler="nope"), ValueError, "label_sampler"),
        (dict(label_sampler=3), TypeError, "label_sampler"),
        (dict(nuts_kwargs=[1]), TypeError, "nuts_kwargs"),
    ],
)
def test_run_nuts_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        run_nuts(0, dp_gmm, _X, progress_bar=False, **kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(guide="laplace"), ValueError, "guide"),
        (dict(guide=object()), TypeError, "guide"),
        (dict(num_steps=0), ValueError, "num_steps"),
        (dict(n_init=0), ValueError, "n_init"),
        (dict(learning_rate=-0.1), ValueError, "learning_rate"),
    ],
)
def test_run_svi_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        run_svi(0, dp_gmm, _X, progress_bar=False, **kwargs)


def test_bad_keys_models_and_model_arguments():
    with pytest.raises(TypeError, match="rng_key"):
        run_nuts("seed", dp_gmm, _X, progress_bar=False)
    with pytest.raises(TypeError, match="model"):
        run_svi(0, "dp_gmm", _X, progress_bar=False)
    # The model validates its own arguments on its first (eager) call.
    bad = _X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        run_nuts(0, dp_gmm, bad, progress_bar=False)
    with pytest.raises(ValueError, match="sigma2"):
        run_nuts(0, dp_gmm, _X, progress_bar=False, sigma2=-1.0)
    with pytest.raises(ValueError, match="truncation"):
        run_svi(0, dp_gmm, _X, progress_bar=False, truncation=1)
