"""Posteriors of the soft consensus models: the memberships program, PEnCA's and PPC's MAPs.

References: scipy.stats log-densities summed over every pair in a literal loop, the EM /
PPC fits (whose optimality is the claim under test: their log-posterior, evaluated by
NumPyro's ``log_density`` on the program, is compared with an independent SVI optimum).
"""

import numpy as np
import pytest
import scipy.stats as st
from numpyro.infer.util import log_density

from bayesclust import datasets
from bayesclust.inference.consensus.aspect_em import aspect_em
from bayesclust.inference.consensus.coassociation import coassociation, coassociation_pairs
from bayesclust.inference.consensus.consensus_bayes import aspect_posterior, memberships_posterior
from bayesclust.inference.consensus.ensembles import kmeans_ensemble
from bayesclust.inference.consensus.ppc import ppc
from bayesclust.models import pairwise_memberships as pm
from bayesclust.models.dyadic_aspect import dyadic_aspect

X_IRIS, _ = datasets.load_iris()
MAP_RTOL = 1e-4


@pytest.fixture(scope="module")
def iris_c50():
    return coassociation(kmeans_ensemble(0, X_IRIS, 50))


def _interior(M):
    """Exact zeros of a simplex point moved to 1e-300 (NumPyro's Dirichlet log-density is
    0 * log 0 = NaN there; the change of the log-posterior is far below any tolerance here)."""
    M = np.maximum(np.asarray(M, np.float64), 1e-300)
    return M / M.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------------------- the program


def _dense_log_posterior(Y, counts, N, alpha, likelihood, sigma):
    """Dirichlet prior + every pair i < j in a literal loop (scipy.stats)."""
    n, K = Y.shape
    lp = sum(st.dirichlet.logpdf(y, alpha * np.ones(K)) for y in Y)
    for i in range(n):
        for j in range(i + 1, n):
            q = float(Y[i] @ Y[j])
            if likelihood == "gaussian":
                lp += st.norm.logpdf(counts[i, j] / N, q, sigma)
            else:
                lp += st.binom.logpmf(counts[i, j], N, q)
    return lp


@pytest.mark.parametrize("likelihood", ["gaussian", "binomial"])
@pytest.mark.parametrize("block_rows", [None, 2])
def test_program_log_density_equals_dense_loop(x64, monkeypatch, likelihood, block_rows):
    rng = np.random.default_rng(1)
    n, K, N = 9, 3, 7
    Y = rng.dirichlet(np.ones(K), size=n)
    counts = np.triu(rng.integers(1, N + 1, (n, n)) * (rng.random((n, n)) < 0.5), 1)
    counts[0, 1] = N  # a pair that always co-occurs: its log(1 - q) has weight 0
    r, c = np.nonzero(counts)
    vals = counts[r, c].astype(float)
    if block_rows is not None:  # several row blocks, the last one padded
        monkeypatch.setattr(pm, "_BLOCK_ENTRIES", block_rows * n)
    if likelihood == "gaussian":
        args, kw = (r, c, vals / N, n, K), dict(sigma=0.3)
    else:
        args, kw = (r, c, vals, n, K), dict(n_trials=N)
    lp, _ = log_density(pm.pairwise_memberships, args, dict(likelihood=likelihood, alpha=1.7, **kw),
                        {"memberships": Y})
    ref = _dense_log_posterior(Y, counts, N, 1.7, likelihood, 0.3)
    np.testing.assert_allclose(float(lp), ref, rtol=1e-12)


def test_binomial_certain_pair_at_a_vertex_is_finite(x64):
    """n_ij = N_ij with y_i = y_j a vertex: q = 1, its log(1 - q) has weight 0."""
    Y = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    ll = pm.pair_log_likelihood(Y, np.array([0]), np.array([1]), np.array([4.0]), likelihood="binomial",
                                n_trials=4)
    assert float(ll) == 0.0  # Bin(4 | 4, 1) and Bin(0 | 4, 0) twice
    import jax

    grad = jax.grad(lambda Y: pm.pair_log_likelihood(Y, np.array([0]), np.array([1]), np.array([4.0]),
                                                     likelihood="binomial", n_trials=4))(Y)
    assert np.all(np.isfinite(np.asarray(grad)))  # no 0 * inf in the gradient either


# --------------------------------------------------------------------------- MAPs


@pytest.fixture(scope="module")
def iris_em_and_maps(iris_c50):
    em = aspect_em(0, iris_c50, 3)
    kw = dict(reference=em, num_steps=2000, learning_rate=0.05)  # one compiled SVI loop for both
    from_em = aspect_posterior(0, iris_c50, 3, **kw)
    from_random = aspect_posterior(0, iris_c50, 3, init="random", **kw)
    return em, from_em, from_random


def _aspect_log_post(C, p, B):
    import jax

    rows, cols, counts, n = coassociation_pairs(C)
    with jax.enable_x64(True):
        lp, _ = log_density(dyadic_aspect, (rows, cols, counts, n, B.shape[0]), {},
                            {"p": _interior(p), "B": _interior(B)})
    return float(lp)


def test_aspect_em_is_the_map_of_the_program(iris_c50, iris_em_and_maps):
    em, from_em, from_random = iris_em_and_maps
    lp_em = _aspect_log_post(iris_c50, em.weights, em.B)
    lp_svi = _aspect_log_post(iris_c50, from_em.params["weights"][0, 0], from_em.params["B"][0, 0])
    lp_rand = _aspect_log_post(iris_c50, from_random.params["weights"][0, 0], from_random.params["B"][0, 0])
    assert np.isfinite(lp_em)
    assert abs(lp_svi - lp_em) <= MAP_RTOL * abs(lp_em)
    # No start of SVI finds a better optimum than EM's (random starts may end lower).
    assert lp_rand - lp_em <= MAP_RTOL * abs(lp_em)
    # The prior is flat: the log-posterior is EM's log-likelihood plus the Dirichlet constants.
    n = iris_c50.n_samples
    from scipy.special import gammaln

    np.testing.assert_allclose(lp_em, em.objective + gammaln(3) + 3 * gammaln(n), rtol=1e-9)
    assert from_em.sampler == "SVI(AutoDelta)" and from_em.labels.shape == (1, 1, n)


def test_aligned_map_labels_equal_em_labels(iris_em_and_maps):
    em, from_em, _ = iris_em_and_maps
    np.testing.assert_array_equal(from_em.labels[0, 0], em.labels)
    np.testing.assert_allclose(from_em.params["weights"][0, 0], em.weights, atol=1e-3)
    np.testing.assert_allclose(from_em.params["memberships"][0, 0].sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(from_em.log_likelihood[0, 0], em.objective, rtol=1e-6)
    # A random start ends elsewhere; aligned to EM's aspects it still agrees on most objects
    # (0.88 measured; unaligned aspect ids would agree on about a third).
    _, _, from_random = iris_em_and_maps
    assert np.mean(from_random.labels[0, 0] == em.labels) > 0.8


def test_ppc_with_masked_diagonal_is_the_gaussian_map(x64, iris_c50):
    import jax.numpy as jnp

    ref = ppc(0, iris_c50, 3, mask_diagonal=True, max_iter=5000)
    from bayesclust.inference.consensus.ppc import _as_pairs

    rows, cols, vals, _ = _as_pairs(iris_c50)
    n = iris_c50.n_samples

    def lp(Y):
        return float(log_density(pm.pairwise_memberships, (rows, cols, vals, n, 3), {},
                                 {"memberships": jnp.asarray(_interior(Y))})[0])

    def masked_objective(Y):  # ||C - Y Y^T||_F^2 off the diagonal, dense
        R = iris_c50.toarray() - Y @ Y.T
        np.fill_diagonal(R, 0.0)
        return float(np.sum(R * R))

    lp_ref = lp(ref.memberships)
    np.testing.assert_allclose(masked_objective(ref.memberships), ref.objective, rtol=1e-9)
    for init in ("ppc", "random"):
        post = memberships_posterior(0, iris_c50, 3, reference=ref, init=init, num_steps=2000, learning_rate=0.05)
        Y = post.params["memberships"][0, 0]
        assert lp(Y) - lp_ref <= MAP_RTOL * abs(lp_ref)
        if init == "ppc":
            assert abs(lp(Y) - lp_ref) <= MAP_RTOL * abs(lp_ref)
            np.testing.assert_array_equal(post.labels[0, 0], ref.labels)
            assert masked_objective(Y) <= ref.objective * (1 + 1e-6)


# --------------------------------------------------------------------------- NUTS


# A NUTS compile of its own (~40 s): `make test-all`.  NUTS through run_nuts stays in
# `make test` with the paper's model (test_binomial_memberships_posterior_from_an_ensemble).
@pytest.mark.long
def test_nuts_recovers_two_blocks_and_mixes():
    from numpyro.diagnostics import split_gelman_rubin

    blocks = np.repeat([0, 1], 6)
    C = np.where(blocks[:, None] == blocks[None, :], 8.0, 1.0)
    np.fill_diagonal(C, 0)
    post = aspect_posterior(0, C, 2, inference="nuts", num_warmup=200, num_samples=200, num_chains=2)
    assert post.sampler == "NUTS" and post.labels.shape == (2, 200, 12)
    assert post.sample_stats["diverging"].sum() == 0
    pe = post.point_estimate()
    assert len({(a, b) for a, b in zip(pe, blocks)}) == 2  # the blocks, up to naming
    assert split_gelman_rubin(post.log_likelihood) < 1.05
    assert np.max(split_gelman_rubin(post.params["weights"])) < 1.05
    # the posterior is not a point: the weights vary around 1/2
    w = post.params["weights"][..., 0].ravel()
    assert 0.01 < w.std() < 0.2 and abs(w.mean() - 0.5) < 0.1


def test_autonormal_draws_vary_and_stay_on_the_simplex():
    blocks = np.repeat([0, 1], 6)
    C = np.where(blocks[:, None] == blocks[None, :], 8.0, 1.0)
    np.fill_diagonal(C, 0)
    post = aspect_posterior(0, C, 2, guide="normal", num_steps=200, num_samples=20)
    B = post.params["B"]
    assert B.shape == (1, 20, 2, 12) and post.sampler == "SVI(AutoNormal)"
    np.testing.assert_allclose(B.sum(axis=3), 1.0, rtol=1e-10)
    assert B.std(axis=1).max() > 1e-4


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(inference="gibbs"), "inference"),
        (dict(guide="flow"), "guide"),
        (dict(init="eac"), "init"),
        (dict(alpha_p=0.0), "alpha_p"),
        (dict(alpha_B=-1.0), "alpha_B"),
        (dict(num_steps=0), "num_steps"),
    ],
)
def test_aspect_posterior_bad_input(kwargs, name):
    C = np.ones((4, 4)) - np.eye(4)
    with pytest.raises(ValueError, match=name):
        aspect_posterior(0, C, 2, **kwargs)


def test_bad_n_aspects_and_likelihood():
    C = np.ones((4, 4)) - np.eye(4)
    with pytest.raises(ValueError, match="n_aspects"):
        aspect_posterior(0, C, 5)
    with pytest.raises(ValueError, match="likelihood"):
        memberships_posterior(0, C, 2, likelihood="poisson")
    with pytest.raises(ValueError, match="likelihood"):
        log_density(pm.pairwise_memberships, ([0], [1], [1.0], 3, 2), {"likelihood": "poisson"},
                    {"memberships": np.full((3, 2), 0.5)})
    with pytest.raises(ValueError, match="alpha"):
        memberships_posterior(0, C, 2, alpha=0.0)
    with pytest.raises(ValueError, match="n_clusters"):
        memberships_posterior(0, C, 5)
    with pytest.raises(ValueError, match="binomial"):  # a normalised matrix has no counts
        memberships_posterior(0, C, 2, likelihood="binomial")


# --------------------------------------------------------------------------- estimator


def test_aspect_consensus_svi_exposes_the_posterior():
    from bayesclust import AspectConsensus

    parts = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2], [0, 0, 0, 1, 1, 1]]
    em = AspectConsensus(n_clusters=2, n_init=3, random_state=0).fit(ensemble=parts)
    svi = AspectConsensus(n_clusters=2, n_init=3, random_state=0, inference="svi",
                          inference_kwargs={"num_steps": 300}).fit(ensemble=parts)
    assert not hasattr(em, "posterior_")
    assert svi.posterior_.labels.shape == (1, 1, 6)
    np.testing.assert_array_equal(svi.labels_, em.labels_)
    np.testing.assert_allclose(svi.probabilities_, svi.posterior_.params["memberships"][0, 0])
    # keep_draws="summary": the same fit, a posterior without per-point draws.
    from sklearn.base import clone

    small = clone(svi).set_params(keep_draws="summary").fit(ensemble=parts)
    np.testing.assert_array_equal(small.probabilities_, svi.probabilities_)
    assert small.posterior_.n_draws == 1 and "memberships" not in small.posterior_.params
    with pytest.raises(ValueError, match="keeps no label draws"):
        small.posterior_.relabel()
    with pytest.raises(ValueError, match="'keep_draws' parameter"):
        clone(svi).set_params(keep_draws=0).fit(ensemble=parts)
    with pytest.raises(ValueError, match="hard"):
        AspectConsensus(n_clusters=2, hard=True, inference="svi").fit(ensemble=parts)


@pytest.mark.slow
def test_binomial_memberships_posterior_from_an_ensemble():
    """The paper's model (binomial counts) by NUTS on a noisy two-block ensemble."""
    from numpyro.diagnostics import split_gelman_rubin

    rng = np.random.default_rng(0)
    blocks = np.repeat([0, 1], 6)
    parts = [np.where(rng.random(12) < 0.1, rng.integers(0, 3, 12), blocks) for _ in range(20)]
    post = memberships_posterior(0, parts, 2, likelihood="binomial", inference="nuts", num_warmup=60,
                                 num_samples=60)
    assert post.model == "pairwise_memberships" and post.labels.shape == (2, 60, 12)
    pe = post.point_estimate()
    assert len({(a, b) for a, b in zip(pe, blocks)}) == 2
    assert split_gelman_rubin(post.log_likelihood) < 1.1  # 60 draws per chain
    Y = post.params["memberships"]
    np.testing.assert_allclose(Y.sum(axis=3), 1.0, rtol=1e-10)
    assert Y.std(axis=(0, 1)).max() > 1e-3  # a posterior, not a point


def test_public_names():
    import bayesclust as bc

    assert bc.aspect_posterior is aspect_posterior and bc.memberships_posterior is memberships_posterior
    assert bc.pairwise_memberships is pm.pairwise_memberships
    assert {"aspect_posterior", "memberships_posterior", "pairwise_memberships"} <= set(bc.__all__)
