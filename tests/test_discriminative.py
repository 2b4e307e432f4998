"""Discriminative clustering: the shared count kernel, the objective, its gradient and limits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer.util import log_density
from scipy.special import gammaln
from scipy.stats import dirichlet

from bayesclust.datasets import dc_toy
from bayesclust.kernels import class_counts, polya_log_evidence, voronoi_memberships
from bayesclust.metrics import dc_log_posterior
from bayesclust.models.discriminative import dc_collapsed, dc_explicit, dc_objective

from ._reference import dc_gradient_closed_form


def _polya_loop(table, n0):
    """Sequential Polya predictive: each point's class given the earlier ones of its cluster."""
    total = 0.0
    C = table.shape[1]
    for row in table.astype(int):
        seen = np.zeros(C)
        for i in np.repeat(np.arange(C), row):
            total += np.log((seen[i] + n0) / (seen.sum() + C * n0))
            seen[i] += 1
    return total


@pytest.mark.parametrize("n0", [0.5, 1.0, 3.0])
def test_polya_evidence_with_norm_is_the_sequential_predictive_product(n0):
    rng = np.random.default_rng(0)
    table = rng.integers(0, 6, (4, 3)).astype(float)
    exact = _polya_loop(table, n0)
    assert polya_log_evidence(table, n0, include_norm=True) == pytest.approx(exact, rel=1e-12)
    # The paper's (9) drops K [log Gamma(N0) - sum_i log Gamma(n0_i)].
    norm = 4 * (gammaln(3 * n0) - 3 * gammaln(n0))
    assert polya_log_evidence(table, n0) == pytest.approx(exact - norm, rel=1e-12)
    # The JAX path (differentiable) agrees with the host path.
    with jax.enable_x64(True):
        assert float(polya_log_evidence(jnp.asarray(table), n0)) == pytest.approx(exact - norm)


def test_dc_log_posterior_counts_the_contingency_table():
    rng = np.random.default_rng(1)
    labels, classes = rng.integers(0, 4, 50), rng.integers(0, 3, 50)
    table = np.zeros((4, 3))
    for j, i in zip(labels, classes):
        table[j, i] += 1
    expected = np.sum(gammaln(1 + table)) - np.sum(gammaln(3 + table.sum(1)))
    assert dc_log_posterior(labels, classes) == pytest.approx(expected)
    # Equal-size regulariser (eq. 12) and the exact Polya version.
    assert dc_log_posterior(labels, classes, lam_eq=0.5) == pytest.approx(
        np.sum(gammaln(1 + table)) - 1.5 * np.sum(gammaln(3 + table.sum(1))))
    assert dc_log_posterior(labels, classes, include_norm=True) == pytest.approx(
        _polya_loop(table, 1.0))


@pytest.mark.parametrize("labels, classes, kwargs, match", [
    ([0, 1], [0], {}, "length"),
    ([0, 1.5], [0, 1], {}, "labels"),
    ([0, 1], [0, 1], {"n0": 0.0}, "n0"),
    ([0, 3], [0, 1], {"n_clusters": 2}, "labels must lie"),
    ([0, 1], [0, 2], {"n_classes": 2}, "classes must lie"),
    ([0, 1], [0, 1], {"lam_eq": -1.0}, "lam_eq"),
    ([0, 1], [0, 1], {"lam_eq": float("nan")}, "lam_eq"),
    ([0, 1], [0, 1], {"lam_eq": float("inf")}, "lam_eq"),
    ([0, 1], [0, 1], {"n_clusters": 2.5}, "n_clusters"),
])
def test_dc_log_posterior_bad_input(labels, classes, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        dc_log_posterior(labels, classes, **kwargs)


def test_dc_log_posterior_ids_are_nominal():
    # ids near 1e16 sized a (1e16, C) table; without counts only the ids present count
    labels, classes = [0, 0, 1, 1, 1], [0, 1, 1, 1, 0]
    ref = dc_log_posterior(labels, classes)
    big = np.array([10**16, 10**16, 10**16 + 7, 10**16 + 7, 10**16 + 7])
    assert dc_log_posterior(big, np.array(classes) * 10**15 + 3) == ref


def _problem(seed, n=40, d=2, K=3, C=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(K, d)), rng.normal(size=(n, d)), rng.integers(0, C, n), C


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam_eq", [0.0, 0.7])
def test_gradient_is_eq_11_and_finite_differences(x64, seed, lam_eq):
    m, X, c, C = _problem(seed)
    std = 0.8
    grad = np.asarray(jax.grad(dc_objective)(jnp.asarray(m), jnp.asarray(X), jnp.asarray(c), C,
                                             std, lam_eq=lam_eq))
    np.testing.assert_allclose(grad, dc_gradient_closed_form(m, X, c, C, std, lam_eq=lam_eq),
                               rtol=1e-8, atol=1e-10)
    h = 1e-6
    fd = np.zeros_like(m)
    for idx in np.ndindex(m.shape):
        e = np.zeros_like(m)
        e[idx] = h
        fd[idx] = (float(dc_objective(m + e, X, c, C, std, lam_eq=lam_eq))
                   - float(dc_objective(m - e, X, c, C, std, lam_eq=lam_eq))) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


def test_smoothed_objective_tends_to_the_exact_one(x64):
    m, X, c, C = _problem(5, n=200)
    exact = dc_log_posterior(np.argmin(((X[:, None] - m[None]) ** 2).sum(-1), 1), c,
                             n_clusters=3, n_classes=C)
    assert float(dc_objective(m, X, c, C, None)) == pytest.approx(exact)
    gaps = [abs(float(dc_objective(m, X, c, C, s)) - exact) for s in (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3)]
    assert all(b <= a + 1e-9 for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-6 < gaps[0]
    # Very wide smoothing: every cluster gets the same soft counts (objective constant in m).
    far = float(dc_objective(m, X, c, C, 1e4))
    assert far == pytest.approx(float(dc_objective(m + 1.0, X, c, C, 1e4)), abs=1e-6)


def test_regularisers(x64):
    m, X, c, C = _problem(2, n=60)
    sq = ((X[:, None] - m[None]) ** 2).sum(-1)
    base = float(dc_objective(m, X, c, C, 0.5))
    vq = float(dc_objective(m, X, c, C, 0.5, lam_vq=0.3))
    assert vq == pytest.approx(base - 0.3 * sq.min(1).sum())
    mog = float(dc_objective(m, X, c, C, 0.5, lam_mog=2.0))
    assert mog == pytest.approx(base + np.sum(np.log(np.mean(np.exp(-2.0 * sq), axis=1))))


def test_memberships_hard_and_soft():
    m, X, _, _ = _problem(3)
    Y, sq = voronoi_memberships(jnp.asarray(X), jnp.asarray(m))
    np.testing.assert_array_equal(np.asarray(Y).argmax(1), np.argmin(((X[:, None] - m[None]) ** 2).sum(-1), 1))
    Ys, _ = voronoi_memberships(jnp.asarray(X), jnp.asarray(m), 0.5)
    np.testing.assert_allclose(np.asarray(Ys).sum(1), 1.0, rtol=1e-6)
    counts = class_counts(Ys, jnp.asarray([0, 1] * 20), 2)
    assert counts.shape == (3, 2) and float(counts.sum()) == pytest.approx(40.0, rel=1e-5)


def test_explicit_program_marginalises_to_the_collapsed_one(x64):
    """log p(m, psi) of the explicit program = log p(m) of the collapsed one + the
    Dirichlet(n0 + n_j) posterior density of psi + the dropped normaliser (conjugacy)."""
    m, X, c, C = _problem(4, n=30)
    K = len(m)
    rng = np.random.default_rng(0)
    psi = rng.dirichlet(np.ones(C), K)
    for std in (None, 0.7):
        args = (jnp.asarray(X), jnp.asarray(c), K, C, std)
        lp_exp, _ = log_density(dc_explicit, args, {}, {"prototypes": m, "psi": psi})
        lp_col, _ = log_density(dc_collapsed, args, {}, {"prototypes": m})
        Y, _ = voronoi_memberships(jnp.asarray(X), jnp.asarray(m), std)
        n = np.asarray(class_counts(Y, jnp.asarray(c), C))
        post = sum(dirichlet.logpdf(psi[j], 1.0 + n[j]) for j in range(K))
        norm = K * (gammaln(C) - C * gammaln(1.0))
        assert float(lp_exp) == pytest.approx(float(lp_col) + post + norm, rel=1e-10)


def test_dc_toy_design():
    X, c = dc_toy(1, 4000)
    assert X.shape == (4000, 2) and np.bincount(c).tolist() == [2000, 2000]
    # The class depends on the vertical coordinate only.
    top = c[X[:, 1] > 1].mean()
    bottom = c[X[:, 1] < -1].mean()
    right, left = c[X[:, 0] > 1].mean(), c[X[:, 0] < -1].mean()
    assert top > 0.8 and bottom < 0.2 and abs(right - left) < 0.08
    with pytest.raises(ValueError, match="even"):
        dc_toy(0, 5)
