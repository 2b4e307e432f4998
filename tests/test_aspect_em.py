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
    np.testing.assert_allclose(res.objective, ll, rtol=1e-12)
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
    assert res.objective == pytest.approx(tr[-1])
    assert res.objective == max(res.restart_objectives)
    if not hard:  # the reported value is the likelihood of the returned parameters (not one iteration stale)
        np.testing.assert_allclose(ae.aspect_log_likelihood(C, res.weights, res.B), res.objective, rtol=1e-10)
    np.testing.assert_allclose(res.memberships.sum(1), 1.0)


def test_hard_limit_objective_is_classification_likelihood():
    rng = np.random.default_rng(1)
    _, C = _random_counts(rng, 20)
    res = ae.aspect_em(3, C, 3, hard=True, n_init=3)
    rows, cols, counts, _ = coassoc.coassociation_pairs(C)
    joint = res.weights[:, None] * res.B[:, rows] * res.B[:, cols]
    ref = 2 * np.sum(counts * np.log(joint.max(0)))  # slow reference: max over aspects per pair
    np.testing.assert_allclose(res.objective, ref, rtol=1e-10)
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
    objective = ll + eps * sum(np.log(t).sum() for t in nu)  # the pseudo-count's Dirichlet log-prior
    return np.exp(logp) / np.exp(logp).sum(1, keepdims=True), objective


def test_mm_matches_slow_loop_and_is_monotone():
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, 3, 15) for _ in range(5)])
    codes[1, [2, 7]] = -1
    res = moe.mixture_of_ensembles(0, codes, 2, n_init=1, max_iter=1, allow_missing=True)
    # Rebuild the same random start: the first Dirichlet draw of the restart's generator.
    R0 = as_numpy_rng(jax.random.PRNGKey(0)).dirichlet(np.ones(2), size=15)
    R1, obj1 = _mm_slow_step(codes, R0, 1e-6)
    R2, obj2 = _mm_slow_step(codes, R1, 1e-6)
    np.testing.assert_allclose(res.responsibilities, R2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.objective_trace, [obj1, obj2], rtol=1e-10)
    assert res.objective == res.objective_trace[-1]
    for hard in (False, True):
        full = moe.mixture_of_ensembles(1, codes, 3, n_init=3, hard=hard, allow_missing=True)
        assert np.all(np.diff(full.objective_trace) >= -1e-9 * np.abs(full.objective_trace[1:]))
        assert full.objective <= 0


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


# --- the step shape: State / init / step, the driver a loop over the step ----------------


@pytest.mark.parametrize("hard,alpha,tol", [(False, 1.0, 0.0), (True, 1.0, 0.0), (False, 1.5, 1e-10)])
def test_init_and_step_by_hand_reproduce_aspect_em(x64, hard, alpha, tol):
    """aspect_em (one start) is aspect_em_step looped from init_aspect_em_state, bit for bit,
    across the pieces of the driver's trace buffer (128 entries)."""
    rng = np.random.default_rng(7)
    _, C = _random_counts(rng, 30, N=8)
    rows, cols, counts, n = coassoc.coassociation_pairs(C)
    L = 4 if alpha == 1.0 else 3  # the driver pads ML fits to 4 aspects: none to pad here
    p0, B0 = np.full(L, 1 / L), rng.dirichlet(np.ones(n), size=L)
    kw = dict(hard=hard, alpha_p=alpha, alpha_B=alpha)
    max_iter = 300
    res = ae.aspect_em(0, C, L, init=(p0, B0), n_init=1, tol=tol, max_iter=max_iter, **kw)
    rows, cols, counts = ae._padded_pairs(rows, cols, counts)  # the driver's pairs (count-0 padding)
    state = ae.init_aspect_em_state(rows, cols, counts, p0, B0, max_iter=max_iter, **kw)
    step = jax.jit(ae.aspect_em_step, static_argnames="hard")
    # the driver's scalar types (a Python float is a weakly typed input: another program)
    tol, kw["alpha_p"], kw["alpha_B"] = np.float64(tol), np.float64(alpha), np.float64(alpha)
    changes = 0
    while int(state.n_iter) < max_iter and not bool(state.converged):
        before = np.asarray(state.labels)
        state, info = step(state, rows, cols, counts, tol=tol, **kw)
        assert float(info.objective) == float(state.objective)
        assert bool(info.changed) == (not np.array_equal(before, state.labels))
        changes += bool(info.changed)
    it = int(state.n_iter)
    assert changes > 0 and (it > 128 or hard)
    assert (res.n_iter, res.converged) == (it, bool(state.converged))
    np.testing.assert_array_equal(res.objective_trace, np.asarray(state.objective_trace)[: it + 1])
    np.testing.assert_array_equal(res.labels, np.asarray(state.labels))
    np.testing.assert_array_equal(res.B, np.asarray(state.B))
    assert res.objective == float(state.objective)
    np.testing.assert_array_equal(res.labels, np.argmax(res.memberships, axis=1))


def test_aspect_state_fields_are_the_documented_ones(x64):
    from ._reference import documented_attributes

    for cls in (ae.AspectEMState, ae.AspectEMInfo):
        assert list(cls._fields) == documented_attributes(cls)
    C = np.array([[0, 3, 1, 0], [3, 0, 2, 0], [1, 2, 0, 0], [0, 0, 0, 0]], float)  # object 3 isolated
    rows, cols, counts, n = coassoc.coassociation_pairs(C)
    B0 = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    state = ae.init_aspect_em_state(rows, cols, counts, [0.5, 0.5], B0, max_iter=10)
    assert state.weights.shape == (2,) and state.B.shape == (2, 4) and state.objective_trace.shape == (16,)
    assert state.labels.tolist() == [1, 1, 0, 0]  # argmax_r p_r B_ry, 0 for the isolated object
    assert float(state.objective) == pytest.approx(ae.aspect_log_likelihood(C, [0.5, 0.5], B0), rel=1e-12)
    new, info = ae.aspect_em_step(state, rows, cols, counts)
    np.testing.assert_array_equal(np.asarray(state.B), B0)  # the input state is left as it was
    assert int(new.n_iter) == 1 and float(info.objective) >= float(state.objective)


def test_aspect_longer_max_iter_only_extends_the_run():
    """No cap on max_iter, no compile for a new one, and a longer run starts as the shorter one."""
    rng = np.random.default_rng(8)
    _, C = _random_counts(rng, 40, N=10)
    short = ae.aspect_em(1, C, 3, n_init=1, tol=0.0, max_iter=150)
    compiled = ae._run._cache_size()
    long = ae.aspect_em(1, C, 3, n_init=1, tol=0.0, max_iter=10_050)
    assert ae._run._cache_size() == compiled
    assert short.n_iter == 150 and long.n_iter > 150
    np.testing.assert_array_equal(long.objective_trace[:151], short.objective_trace)


def test_mm_init_and_step_by_hand_reproduce_mixture_of_ensembles():
    codes = np.random.default_rng(9).integers(0, 4, (6, 40))
    stops = []
    for hard, tol in ((False, 1e-12), (True, 0.0), (False, 0.0)):
        max_iter = 60
        res = moe.mixture_of_ensembles(4, codes, 3, n_init=1, hard=hard, tol=tol, max_iter=max_iter)
        state = moe.init_mixture_of_ensembles_state(4, codes, 3, hard=hard)
        changes = 0
        while state.n_iter < max_iter and not state.converged:
            before = (state.responsibilities.copy(), state.objective_trace.copy())
            new, info = moe.mixture_of_ensembles_step(state, tol=tol)
            np.testing.assert_array_equal(state.responsibilities, before[0])  # input left as it was
            np.testing.assert_array_equal(state.objective_trace, before[1])
            assert info.objective == new.objective == new.objective_trace[-1]
            assert info.changed == (not np.array_equal(new.labels, state.labels))
            changes += info.changed
            state = new
        assert changes > 0
        assert (res.n_iter, res.converged) == (state.n_iter, state.converged)
        np.testing.assert_array_equal(res.objective_trace, state.objective_trace)
        np.testing.assert_array_equal(res.labels, state.labels)
        np.testing.assert_array_equal(res.responsibilities, state.responsibilities)
        assert res.objective == state.objective
        stops.append(res.converged)
    assert True in stops and False in stops  # both ends of the loop are covered


def test_mm_state_fields_and_longer_max_iter():
    from ._reference import documented_attributes

    for cls in (moe.MixtureOfEnsemblesState, moe.MixtureOfEnsemblesInfo):
        assert list(cls._fields) == documented_attributes(cls)
    rng = np.random.default_rng(10)
    codes = np.stack([rng.integers(0, 4, 25) for _ in range(5)])
    state = moe.init_mixture_of_ensembles_state(0, codes, 3)
    assert state.responsibilities.shape == (25, 3) and state.weights.shape == (3,)
    assert state.log_nu.shape == (int((codes.max(axis=1) + 1).sum()), 3)
    short = moe.mixture_of_ensembles(2, codes, 3, n_init=1, tol=0.0, max_iter=5)
    long = moe.mixture_of_ensembles(2, codes, 3, n_init=1, tol=0.0, max_iter=12_000)
    assert short.n_iter == 5 and long.n_iter > 5
    np.testing.assert_array_equal(long.objective_trace[:6], short.objective_trace)


def test_step_names_are_exported():
    import bayesclust as bc

    for module, names in ((ae, ("AspectEMState", "AspectEMInfo", "init_aspect_em_state", "aspect_em_step")),
                          (moe, ("MixtureOfEnsemblesState", "MixtureOfEnsemblesInfo",
                                 "init_mixture_of_ensembles_state", "mixture_of_ensembles_step"))):
        for name in names:
            assert name in bc.__all__ and name in module.__all__ and getattr(bc, name) is getattr(module, name)
