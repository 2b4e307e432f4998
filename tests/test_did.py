"""The dissimilarity increments: nearest-neighbour triplets and the DID laws (Aidos & Fred 2012)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

import bayesclust
from bayesclust.graphs import increments
from bayesclust.kernels import did_cdf, did_logpdf
from bayesclust.models.did import DID

BETA = 2.0 - np.sqrt(2.0)


# --- references written out here ------------------------------------------------------------


def naive_did2_pdf(w, lam):
    """The lambda-form 2-DID density exactly as printed (Aidos & Fred 2012, eq. 10)."""
    c1 = np.pi * BETA**2 / (4 * lam**2)
    c3 = np.pi**2 * BETA**3 / (8 * np.sqrt(2) * lam**3)
    return (c1 * w * np.exp(-c1 * w**2)
            + c3 * np.exp(-np.pi * BETA**2 * w**2 / (8 * lam**2))
            * (4 * lam**2 / (np.pi * BETA**2) - w**2)
            * special.erfc(np.sqrt(np.pi) * BETA * w / (2 * np.sqrt(2) * lam)))


def chi_scale(lam, d):
    """s with E|s chi_d - s chi_d'| = lam, by scipy quadrature of 2 int F (1 - F)."""
    law = stats.chi(d)
    m, _ = integrate.quad(lambda t: 2 * law.cdf(t) * law.sf(t), 0, np.sqrt(d) + 40, limit=200)
    return lam / m


def convolution_pdf(w, lam, d):
    """p(w) = f_d(w / s) / s, f_d(u) = 2 int_0^inf chi_d(t) chi_d(t + u) dt (scipy quad)."""
    s = chi_scale(lam, d)
    law = stats.chi(d)
    u = w / s
    f, _ = integrate.quad(lambda t: law.pdf(t) * law.pdf(t + u), 0, np.inf,
                          epsabs=0, epsrel=1e-12, limit=200)
    return 2 * f / s


def loop_increments(X):
    """O(n^2) literal loop: ties to the smallest index."""
    n = len(X)
    out = []
    for i in range(n):
        dist_i = [np.sqrt(np.sum((X[i] - X[j]) ** 2)) if j != i else np.inf for j in range(n)]
        j = int(np.argmin(dist_i))  # argmin returns the first (smallest index) minimum
        dist_j = [np.sqrt(np.sum((X[j] - X[k]) ** 2)) if k not in (i, j) else np.inf
                  for k in range(n)]
        k = int(np.argmin(dist_j))
        out.append(abs(dist_i[j] - dist_j[k]))
    return np.array(out)


# --- increments ---------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 5])
def test_increments_match_the_quadratic_loop(d):
    X = np.random.default_rng(d).normal(size=(120, d))
    np.testing.assert_allclose(increments(X), loop_increments(X), rtol=1e-12, atol=1e-14)


def test_increments_with_duplicates_and_ties_are_deterministic():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, size=(40, 2)).astype(float)  # a grid: many equal distances
    X = np.concatenate([base, base[:10], np.zeros((3, 2))])
    got = increments(X)
    np.testing.assert_array_equal(got, loop_increments(X))
    np.testing.assert_array_equal(got, increments(X.copy()))
    assert np.all(increments(np.ones((6, 3))) == 0)


def test_increments_break_ties_by_the_smallest_index():
    # 0 is equidistant from -1 and +1; the choice decides the increment (|1 - 0.5| vs |1 - 0.8|)
    star = np.array([0.0, -1.0, 1.0, -1.5, 1.8])
    X = star[:, None]
    assert increments(X)[0] == 0.5
    assert increments(X[[0, 2, 1, 4, 3]])[0] == pytest.approx(0.2)
    # many stars far apart, rows shuffled: ties must follow the row order, not the tree's
    rng = np.random.default_rng(5)
    X = (star[None, :] + 100.0 * np.arange(40)[:, None]).reshape(-1, 1)
    X = np.concatenate([X, X[:30]])[rng.permutation(230)]
    got = increments(X)
    np.testing.assert_array_equal(got, loop_increments(X))
    # groups of duplicates larger than the k-d tree's query
    Y = np.repeat(rng.normal(size=(6, 2)), [7, 1, 5, 2, 9, 3], axis=0)[rng.permutation(27)]
    np.testing.assert_array_equal(increments(Y), loop_increments(Y))


def test_increments_within_clusters_skip_small_clusters():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    labels = np.repeat([0, 1, 2, 3], [20, 2, 25, 3])
    got = increments(X, labels)
    want = np.empty(50)
    for c in (0, 1, 2, 3):
        rows = labels == c
        if rows.sum() >= 3:
            want[rows] = loop_increments(X[rows])
    keep = np.isin(labels, [0, 2, 3])
    assert got.shape == (48,)
    np.testing.assert_allclose(got, want[keep], rtol=1e-12, atol=1e-14)
    assert increments(X[:4], [0, 0, 1, 1]).shape == (0,)


def test_increments_bad_input():
    with pytest.raises(ValueError, match="X"):
        increments(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="labels"):
        increments(np.zeros((5, 2)), [0, 1])
    with pytest.raises(ValueError, match="X"):
        increments(np.array([[0.0, np.nan], [1, 1], [2, 2]]))


# --- the 2-DID ----------------------------------------------------------------------------


def test_did2_logpdf_is_the_printed_closed_form(x64):
    for lam in (0.3, 1.0, 4.0):
        w = np.linspace(0.0, 20 * lam, 400)
        want = np.log(naive_did2_pdf(w, lam))
        np.testing.assert_allclose(np.asarray(did_logpdf(w, lam)), want, rtol=1e-11, atol=1e-12)


def test_did2_logpdf_is_finite_far_in_the_tail(x64):
    lam = 1.7
    w = np.array([30.0, 45.0, 60.0, 200.0]) * lam
    got = np.asarray(did_logpdf(w, lam))
    assert np.all(np.isfinite(got))
    assert np.all(np.diff(got) < 0)
    # log p = log 2 - u^2/2 + log int_0^inf t (t+u) e^{-t^2 - t u} dt - log s: two Rayleigh
    # distances of scale s = lam / (sqrt(pi/2) beta), u = w / s; a positive integrand (scipy quad)
    s = lam / (np.sqrt(np.pi / 2) * BETA)
    want = []
    for u in w / s:
        cut = 60.0 / (u + 1.0)
        f = lambda t, u=u: t * (t + u) * np.exp(-t * t - t * u)  # noqa: E731
        inner = integrate.quad(f, 0, cut, epsabs=0, epsrel=1e-13)[0]
        inner += integrate.quad(f, cut, np.inf, epsabs=0, epsrel=1e-13)[0]
        want.append(np.log(2.0) - u * u / 2 + np.log(inner) - np.log(s))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # float32: no NaN, no loss in the tail
    got32 = np.asarray(did_logpdf(jnp.asarray(w, jnp.float32), jnp.float32(lam)))
    np.testing.assert_allclose(got32, got, rtol=1e-5)


def test_did2_tail_probabilities(x64):
    lam = 2.5
    sf = 1.0 - np.asarray(did_cdf(np.array([2, 3, 4, 5, 7]) * lam, lam))
    np.testing.assert_allclose(sf, [0.113, 1.91e-2, 2.00e-3, 1.28e-4, 1.16e-7], rtol=6e-3)


def test_did2_quadrature_path_is_the_closed_form(x64):
    from bayesclust.kernels.did import _did_logpdf_impl

    w = np.linspace(0.0, 15.0, 200)
    closed = np.asarray(_did_logpdf_impl(w, 1.3, 2, closed_form=True))
    quad = np.asarray(_did_logpdf_impl(w, 1.3, 2, closed_form=False))
    np.testing.assert_allclose(quad, closed, rtol=0, atol=1e-8)


# --- the d-DID ----------------------------------------------------------------------------


@pytest.mark.parametrize("d", [3, 5])
def test_d_did_matches_the_convolution(x64, d):
    lam = 0.8
    w = np.array([0.0, 0.05, 0.4, 1.0, 2.5, 4.0])
    want = np.array([convolution_pdf(x, lam, d) for x in w])
    np.testing.assert_allclose(np.exp(np.asarray(did_logpdf(w, lam, d))), want, rtol=1e-9)


@pytest.mark.parametrize("d", [2, 3, 5, 10])
def test_did_integrates_to_one_with_mean_lam(x64, d):
    lam = 1.4

    def pdf(x):
        return float(np.exp(did_logpdf(x, lam, d)))

    mass, _ = integrate.quad(pdf, 0, 40 * lam, limit=200)
    mean, _ = integrate.quad(lambda x: x * pdf(x), 0, 40 * lam, limit=200)
    assert mass == pytest.approx(1.0, abs=1e-9)
    assert mean == pytest.approx(lam, rel=1e-9)
    for x in (0.3 * lam, lam, 3 * lam):
        cum, _ = integrate.quad(pdf, 0, x)
        assert float(did_cdf(x, lam, d)) == pytest.approx(cum, abs=1e-10)


def test_did_is_jittable_and_differentiable_in_lam(x64):
    w = jnp.linspace(0.0, 5.0, 7)
    f = jax.jit(lambda lam: did_logpdf(w, lam, 3).sum())
    g = jax.grad(lambda lam: did_logpdf(w, lam, 3).sum())(1.1)
    h = 1e-6
    assert float(g) == pytest.approx((float(f(1.1 + h)) - float(f(1.1 - h))) / (2 * h), rel=1e-6)


# --- boundaries ---------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 4])
def test_negative_increments_have_zero_density(d):
    got = np.asarray(did_logpdf(jnp.array([-1.0, -1e-9, 0.0]), 1.0, d))
    assert got[0] == -np.inf and got[1] == -np.inf and np.isfinite(got[2])
    assert np.asarray(did_cdf(jnp.array([-1.0]), 1.0, d))[0] == 0.0
    assert float(jax.grad(lambda x: did_logpdf(x, 1.0, d))(-1.0)) == 0.0


def test_bad_parameters_are_named():
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="lam"):
            did_logpdf(1.0, bad)
        with pytest.raises(ValueError, match="lam"):
            DID(bad)
    with pytest.raises(ValueError, match="lam"):
        did_cdf(1.0, np.array([1.0, 0.0]))
    for bad in (0, -2):
        with pytest.raises(ValueError, match="d"):
            did_logpdf(1.0, 1.0, bad)
    with pytest.raises(TypeError, match="d"):
        DID(1.0, d=2.5)


# --- the NumPyro distribution --------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 10])
def test_did_samples_follow_the_cdf(x64, d):
    lam = 0.7
    w = np.asarray(DID(lam, d=d).sample(jax.random.PRNGKey(3), (20000,)))
    p = stats.kstest(w, lambda x: np.asarray(did_cdf(x, lam, d))).pvalue
    assert p > 0.01
    assert w.mean() == pytest.approx(lam, rel=0.015)  # 3 standard errors


def test_did_distribution_api(x64):
    dd = DID(jnp.array([0.5, 2.0]), d=3)
    assert dd.batch_shape == (2,)
    np.testing.assert_array_equal(np.asarray(dd.mean), [0.5, 2.0])
    np.testing.assert_allclose(np.asarray(dd.log_prob(jnp.array([1.0, 1.0]))),
                               np.asarray(did_logpdf(jnp.array([1.0, 1.0]), dd.lam, 3)))
    var, _ = integrate.quad(lambda x: (x - 2.0) ** 2 * float(np.exp(did_logpdf(x, 2.0, 3))),
                            0, 80)
    assert float(dd.variance[1]) == pytest.approx(var, rel=1e-8)
    assert dd.sample(jax.random.PRNGKey(0), (5,)).shape == (5, 2)
    leaves, tree = jax.tree_util.tree_flatten(dd)
    assert jax.tree_util.tree_unflatten(tree, leaves).d == 3
    assert bayesclust.DID is DID and bayesclust.did_logpdf is did_logpdf
    assert bayesclust.increments is increments
    assert {"DID", "did_logpdf", "did_cdf", "increments"} <= set(bayesclust.__all__)


# --- the minimum spanning tree and increments of new points -----------------------------


@pytest.mark.parametrize("d", [1, 2, 6])
def test_minimum_spanning_tree_against_scipy(d):
    from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst
    from scipy.spatial.distance import cdist

    from bayesclust.graphs import minimum_spanning_tree

    X = np.random.default_rng(d).normal(size=(150, d))
    u, v, w = minimum_spanning_tree(X)
    ref = scipy_mst(cdist(X, X)).tocoo()
    # no ties in continuous data: the same edge set, the same weights
    assert sorted(map(tuple, np.sort(np.c_[u, v], 1))) == sorted(map(tuple, np.sort(np.c_[ref.row, ref.col], 1)))
    np.testing.assert_allclose(np.sort(w), np.sort(ref.data), rtol=1e-13)
    np.testing.assert_allclose(w, np.linalg.norm(X[u] - X[v], axis=1), rtol=1e-13)
    # duplicates: zero-length edges, a spanning tree of the right total length
    Xd = np.concatenate([X, X[:20]])
    assert minimum_spanning_tree(Xd)[2].sum() == pytest.approx(w.sum(), rel=1e-12)


def test_increments_to_against_a_loop():
    from bayesclust.graphs import increments_to

    rng = np.random.default_rng(7)
    R, Y = rng.normal(size=(60, 3)), rng.normal(size=(25, 3))
    want = []
    for y in Y:
        dy = np.linalg.norm(R - y, axis=1)
        j = int(np.argmin(dy))
        dj = np.linalg.norm(R - R[j], axis=1)
        dj[j] = np.inf
        want.append(abs(dy[j] - dj.min()))
    np.testing.assert_allclose(increments_to(R, Y), want, rtol=1e-12)
    with pytest.raises(ValueError, match="features"):
        increments_to(R, Y[:, :2])
