"""PEnCA EM on the sparse co-association, its hard limit, MM, model selection."""

import itertools

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesclust import metrics
from bayesclust._validation import as_numpy_rng
from bayesclust.inference.consensus import aspect_em as ae
from bayesclust.inference.consensus import coassociation as coassoc
from bayesclust.inference.consensus import mixture_of_ensembles as moe


def _dense_penca(C, p, B, n_iter):
    """Matrix-form EM (PEnCA paper, eqs. 17, 19, 23, 24) on the dense full count matrix: the reference."""
    S = C.sum()
    lls = []
    for _ in range(n_iter):
        P = np.einsum("r,ry,rz->yz", p, B, B)
        W = np.where(C > 0, C / np.where(C > 0, P, 1), 0.0)
        G = W @ B.T  # (n, L)
        rows = p[:, None] * B * G.T
        p = rows.sum(1) / S
        B = rows / rows.sum(1, keepdims=True)
        P = np.einsum("r,ry,rz->yz", p, B, B)
        lls.append(np.sum(np.where(C > 0, C * np.log(np.where(C > 0, P, 1)), 0.0)))
    return p, B, np.asarray(lls)


def _random_counts(rng, n, N=6, kmax=4):
    L = np.stack([rng.integers(0, kmax, n) for _ in range(N)])
    return L, coassoc.coassociation(L)


def test_one_aspect_closed_form():
    # L = 1: B_y = sum_z C_yz / |S| after one M-step, from any start.
    C = np.array([[0, 3, 1, 0], [3, 0, 2, 0], [1, 2, 0, 4], [0, 0, 4, 0]], float)
    B0 = np.array([[0.1, 0.2, 0.3, 0.4]])
    res = ae.aspect_em(0, C, 1, init=(np.ones(1), B0), n_init=1, max_iter=3)
    B = C.sum(1) / C.sum()
    np.testing.assert_allclose(res.B[0], B, rtol=1e-12)
    ll = np.sum(np.where(C > 0, C * np.log(np.outer(B, B) + (C == 0)), 0))
    np.testing.assert_allclose(res.log_likelihood, ll, rtol=1e-12)
    np.testing.assert_allclose(ae.aspect_log_likelihood(C, [1.0], B[None]), ll, rtol=1e-12)
    assert res.memberships.shape == (4, 1) and np.all(res.labels == 0)


def test_sparse_em_equals_dense_reference(x64):
    rng = np.random.default_rng(0)
    for n, L in [(12, 2), (25, 3)]:
        labels, C = _random_counts(rng, n)
        dense = C.symmetric_counts().toarray()
        p0 = np.full(L, 1 / L)
        B0 = rng.dirichlet(np.ones(n), size=L)
        res = ae.aspect_em(0, C, L, init=(p0, B0), n_init=1, max_iter=15, tol=0.0)
        p, B, lls = _dense_penca(dense, p0, B0, res.n_iter)
        np.testing.assert_allclose(res.weights, p, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(res.B, B, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(res.objective_trace[1:], lls, rtol=1e-10)
        # The same fit from every input form (upper triangle U stands for U + U.T).
        for form in (dense, sp.csr_matrix(dense), sp.triu(sp.csr_matrix(dense), 1), 3.0 * dense):
            other = ae.aspect_em(0, form, L, init=(p0, B0), n_init=1, max_iter=15, tol=0.0)
            np.testing.assert_allclose(other.B, res.B, rtol=1e-9, atol=1e-13)  # scale-invariant


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.sampled_from([10, 24]), L=st.integers(1, 4), hard=st.booleans())
def test_em_never_decreases_objective(seed, n, L, hard):
    rng = np.random.default_rng(seed)
    _, C = _random_counts(rng, n, N=int(rng.integers(2, 8)))
    if C.nnz == 0:
        return
    res = ae.aspect_em(seed, C, min(L, n), n_init=2, hard=hard, max_iter=200)
    tr = res.objective_trace
    assert np.all(np.isfinite(tr))
    assert np.all(np.diff(tr) >= -1e-9 * np.abs(tr[1:])), np.diff(tr).min()
    assert res.log_likelihood == pytest.approx(tr[-1])
    assert res.log_likelihood == max(res.restart_objectives)
    if not hard:  # the reported value is the likelihood of the returned parameters (not one iteration stale)
        np.testing.assert_allclose(ae.aspect_log_likelihood(C, res.weights, res.B), res.log_likelihood, rtol=1e-10)
    np.testing.assert_allclose(res.memberships.sum(1), 1.0)


def test_hard_limit_objective_is_classification_likelihood():
    rng = np.random.default_rng(1)
    _, C = _random_counts(rng, 20)
    res = ae.aspect_em(3, C, 3, hard=True, n_init=3)
    rows, cols, counts, _ = coassoc.coassociation_pairs(C)
    joint = res.weights[:, None] * res.B[:, rows] * res.B[:, cols]
    ref = 2 * np.sum(counts * np.log(joint.max(0)))  # slow reference: max over aspects per pair
    np.testing.assert_allclose(res.log_likelihood, ref, rtol=1e-10)
    assert np.all(np.diff(res.objective_trace) >= 0)
    assert res.converged


@pytest.mark.parametrize("sizes", [(20, 20, 20), (15, 5, 40), (30, 30)])  # block shapes, n = 60; single random starts fail on some
def test_block_diagonal_recovered_with_restarts(sizes):
    truth = np.repeat(np.arange(len(sizes)), sizes)
    C = 5.0 * (truth[:, None] == truth[None, :])
    np.fill_diagonal(C, 0)
    for hard in (False, True):
        res = ae.aspect_em(0, C, len(sizes), n_init=10, hard=hard)  # one random start often fails: restarts
        assert metrics.ari(truth, res.labels) == 1.0
    # Label permutation of the objects permutes the memberships.
    perm = np.random.default_rng(0).permutation(truth.size)
    res_p = ae.aspect_em(0, C[np.ix_(perm, perm)], len(sizes), n_init=10)
    assert metrics.ari(truth[perm], res_p.labels) == 1.0


def test_isolated_object_gets_uniform_membership():
    C = np.array([[0, 2, 0], [2, 0, 0], [0, 0, 0]], float)
    res = ae.aspect_em(0, C, 2, n_init=2)
    assert res.isolated.tolist() == [False, False, True]
    np.testing.assert_allclose(res.memberships[2], [0.5, 0.5])


def test_jit_and_eager_agree(x64):
    rng = np.random.default_rng(2)
    _, C = _random_counts(rng, 8, N=3)
    rows, cols, counts, n = coassoc.coassociation_pairs(C)
    p0, B0 = np.full(2, 0.5), rng.dirichlet(np.ones(n), size=2)
    for hard in (False, True):
        args = (p0, B0, rows, cols, counts, n, hard, 1.0, 1.0)
        jitted = jax.jit(ae._em_update, static_argnums=(5, 6))(*args)
        eager = ae._em_update(*args)
        for a, b in zip(jitted, eager):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_select_n_aspects_finds_blocks():
    truth = np.repeat(np.arange(3), [8, 6, 10])
    C = 10.0 * (truth[:, None] == truth[None, :])
    np.fill_diagonal(C, 0)
    sel = ae.select_n_aspects(0, C, [1, 2, 3, 4, 5], n_init=5)
    assert sel.n_aspects == 3
    assert metrics.ari(truth, sel.best.labels) == 1.0
    bic = ae.select_n_aspects(0, C, [2, 3, 4], criterion="bic", sample_size=100.0, n_init=5)
    assert bic.n_aspects == 3
    # MDL by hand for the selected fit: -l + nu/2 log |S|.
    nu = 2 + 3 * 23
    np.testing.assert_allclose(sel.scores[2], -sel.log_likelihoods[2] + nu / 2 * np.log(C.sum()))


def _mm_slow_step(codes, R, eps):
    """One M-step + E-step of MM by loops over objects, partitions and labels."""
    N, n = codes.shape
    L = R.shape[1]
    alpha = R.sum(0) / n
    nu = []
    for j in range(N):
        K = codes[j].max() + 1
        tab = np.zeros((K, L))
        for i, m in itertools.product(range(n), range(L)):
            if codes[j, i] >= 0:
                tab[codes[j, i], m] += R[i, m]
        den = sum(R[i] for i in range(n) if codes[j, i] >= 0)
        nu.append((tab + eps) / (den + K * eps))
    logp = np.zeros((n, L))
    for i, m in itertools.product(range(n), range(L)):
        logp[i, m] = np.log(alpha[m]) + sum(np.log(nu[j][codes[j, i], m]) for j in range(N) if codes[j, i] >= 0)
    ll = np.sum(np.log(np.exp(logp).sum(1)))
    return np.exp(logp) / np.exp(logp).sum(1, keepdims=True), ll


def test_mm_matches_slow_loop_and_is_monotone():
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, 3, 15) for _ in range(5)])
    codes[1, [2, 7]] = -1
    res = moe.mixture_of_ensembles(0, codes, 2, n_init=1, max_iter=1, allow_missing=True)
    # Rebuild the same random start: the first Dirichlet draw of the restart's generator.
    R0 = as_numpy_rng(jax.random.PRNGKey(0)).dirichlet(np.ones(2), size=15)
    R1, ll1 = _mm_slow_step(codes, R0, 1e-6)
    R2, ll2 = _mm_slow_step(codes, R1, 1e-6)
    np.testing.assert_allclose(res.responsibilities, R2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.log_likelihood, ll2, rtol=1e-10)
    for hard in (False, True):
        full = moe.mixture_of_ensembles(1, codes, 3, n_init=3, hard=hard, allow_missing=True)
        assert np.all(np.diff(full.objective_trace) >= -1e-9 * np.abs(full.objective_trace[1:]))
        assert full.log_likelihood <= 0


def test_mm_recovers_consistent_ensemble():
    truth = np.repeat(np.arange(3), 7)
    rng = np.random.default_rng(4)
    codes = np.stack([rng.permutation(3)[truth] for _ in range(6)])
    res = moe.mixture_of_ensembles(0, codes, 3)
    assert metrics.ari(truth, res.labels) == 1.0


def test_bad_input():
    C = np.array([[0, 1.0], [1.0, 0]])
    for bad in (0, -1):
        with pytest.raises(ValueError, match="n_aspects"):
            ae.aspect_em(0, C, bad)
        with pytest.raises(ValueError, match="n_clusters"):
            moe.mixture_of_ensembles(0, [[0, 1], [1, 1]], bad)
    with pytest.raises(ValueError, match="n_aspects"):
        ae.aspect_em(0, C, 3)
    with pytest.raises(ValueError, match="symmetric"):
        ae.aspect_em(0, np.array([[0, 1.0, 0], [2.0, 0, 1], [0, 3, 0]]), 1)
    with pytest.raises(ValueError, match="non-negative"):
        ae.aspect_em(0, -C, 1)
    with pytest.raises(ValueError, match="no co-occurring"):
        ae.aspect_em(0, np.zeros((3, 3)), 1)
    with pytest.raises(ValueError, match="single labeling"):
        moe.mixture_of_ensembles(0, [0, 1, 1], 2)
    with pytest.raises(ValueError, match="same length"):
        moe.mixture_of_ensembles(0, [[0, 1, 1], [0, 1]], 2)
    with pytest.raises(ValueError, match="non-negative"):
        moe.mixture_of_ensembles(0, [[0, 1, -3], [0, 1, 1]], 2)
    with pytest.raises(ValueError, match="criterion"):
        ae.select_n_aspects(0, C, [1], criterion="aic")


# --- the NumPyro program ---------------------------------------------------------------


def test_numpyro_program_log_density_matches_formula(x64):
    from numpyro.infer.util import log_density
    from scipy.stats import dirichlet

    from bayesclust.models.dyadic_aspect import dyadic_aspect

    rng = np.random.default_rng(5)
    _, C = _random_counts(rng, 9)
    rows, cols, counts, n = coassoc.coassociation_pairs(C)
    p, B = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(n), size=3)
    for a_p, a_B in [(1.0, 1.0), (2.0, 0.7)]:
        lp, _ = log_density(dyadic_aspect, (rows, cols, counts, n, 3), dict(alpha_p=a_p, alpha_B=a_B), {"p": p, "B": B})
        ref = (ae.aspect_log_likelihood(C, p, B) + dirichlet.logpdf(p, a_p * np.ones(3))
               + sum(dirichlet.logpdf(b, a_B * np.ones(n)) for b in B))
        np.testing.assert_allclose(float(lp), ref, rtol=1e-12)


@pytest.mark.parametrize("a_p,a_B", [(1.0, 1.0), (3.0, 1.5)])
def test_em_fixed_point_is_stationary_for_the_program(x64, a_p, a_B):
    """ML-EM (alpha = 1) and MAP-EM maximise the NumPyro log joint on the simplices:
    on the support, the gradient is constant along every row (Lagrange condition)."""
    from numpyro.infer.util import log_density

    from bayesclust.models.dyadic_aspect import dyadic_aspect

    rng = np.random.default_rng(6)
    _, C = _random_counts(rng, 10, N=8, kmax=3)
    rows, cols, counts, n = coassoc.coassociation_pairs(C)
    res = ae.aspect_em(0, C, 2, n_init=1, tol=0.0, max_iter=4000, alpha_p=a_p, alpha_B=a_B)

    def f(params):
        return log_density(dyadic_aspect, (rows, cols, counts, n, 2), dict(alpha_p=a_p, alpha_B=a_B), params)[0]

    g = jax.grad(f)({"p": jax.numpy.asarray(res.weights), "B": jax.numpy.asarray(res.B)})
    gp, gB = np.asarray(g["p"]), np.asarray(g["B"])
    np.testing.assert_allclose(gp, gp.mean(), rtol=1e-6)
    for r in range(2):
        on = res.B[r] > 1e-8
        np.testing.assert_allclose(gB[r, on], gB[r, on].mean(), rtol=1e-5)
