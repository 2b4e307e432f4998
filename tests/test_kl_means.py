"""KL-means, the hard limit of the tempered DP mixture of multinomials, and its Gibbs sampler.

References: SciPy's ``rel_entr`` and ``gammaln`` (the KL costs and the Polya score), exact
enumeration of every partition of n <= 5 rows (the samplers' tempered posterior), a slow
row-by-row loop of Algorithm 1's moves (the hard pass).
"""

import warnings

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, rel_entr

from bayesclust import (
    coassociation,
    gibbs_dp_multinomial,
    init_kl_means_state,
    kl_means,
    kl_means_lambda,
    kl_means_rows,
    kl_means_step,
)
from bayesclust.inference.mixtures.convergence import ConvergenceWarning
from bayesclust.kernels import (
    kl_costs,
    kl_costs_row,
    kl_costs_segments,
    merge_costs,
    polya_move_score,
    row_negentropy,
)
from bayesclust.metrics import kl_means_objective
from bayesclust.metrics.losses import set_partitions


def _blocks(seed, n_per=6, groups=3, width=4, total=20):
    """Count rows from ``groups`` distributions on disjoint blocks of columns (every cell >= 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        p = rng.dirichlet(np.ones(width))
        for _ in range(n_per):
            r = np.zeros(groups * width)
            r[g * width:(g + 1) * width] = rng.multinomial(total, p) + 1
            rows.append(r)
    return np.array(rows)[rng.permutation(groups * n_per)]


def _canonical(labels):
    """Labels renumbered in order of first appearance."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inv.reshape(-1)]


def _reference_costs(R, psi):
    n_i = R.sum(1)
    P = R / n_i[:, None]
    return np.array([[n_i[i] * np.sum(rel_entr(P[i], psi[j])) for j in range(len(psi))]
                     for i in range(len(R))])


# --------------------------------------------------------------------------- #
# Kernels against SciPy
# --------------------------------------------------------------------------- #


def test_kl_cost_forms_match_scipy_rel_entr(x64):
    rng = np.random.default_rng(0)
    R = rng.poisson(1.0, (7, 5)).astype(float)
    R[0] = 0
    R[0, 1] = 3.0
    psi = rng.dirichlet(np.ones(5), 3)
    psi[1, 1] = 0.0  # row 0 has mass there: +inf, never NaN
    psi[1] /= psi[1].sum()
    ref = _reference_costs(R, psi)
    with np.errstate(divide="ignore"):
        log_psi = np.log(psi)
    negent = np.asarray(row_negentropy(R, R.sum(1)))
    dense = np.asarray(kl_costs(R, negent, log_psi))
    coo = sp.coo_matrix(R)
    seg = np.asarray(kl_costs_segments(coo.row, coo.col, coo.data, negent, log_psi))
    row = np.array([kl_costs_row(np.arange(5), R[i], negent[i], log_psi) for i in range(7)])
    assert np.isinf(ref[0, 1]) and np.isinf(dense[0, 1]) and not np.isnan(dense).any()
    for got in (dense, seg, row):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_polya_move_score_and_its_limit_match_scipy(x64):
    rng = np.random.default_rng(1)
    m = 6
    counts = rng.poisson(2.0, (3, m)).astype(float)
    counts[2] = 0.0  # an empty cluster: the new-cluster marginal
    beta = rng.uniform(0.5, 2.0, m)
    r = rng.poisson(1.5, m).astype(float)
    r[0] = 2.0
    cols = np.nonzero(r)[0]
    got = np.asarray(polya_move_score(cols, r[cols], r.sum(), counts, counts.sum(1), beta, beta.sum()))
    B = beta.sum()
    ref = [np.sum(gammaln(beta + c + r) - gammaln(beta + c)) - (gammaln(B + c.sum() + r.sum())
                                                                 - gammaln(B + c.sum()))
           for c in counts]
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    # -tau times the tempered score tends to the merge cost F(n + r) - F(n) (Stirling).
    tau = 1e-7
    limit = np.asarray(merge_costs(cols, r[cols], r.sum(), counts, counts.sum(1)))
    tempered = np.asarray(polya_move_score(cols, r[cols] / tau, r.sum() / tau, counts / tau,
                                           counts.sum(1) / tau, beta, B))
    np.testing.assert_allclose(-tau * tempered, limit, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------- #
# The hard limit
# --------------------------------------------------------------------------- #


def _slow_pass(R, psi, lam):
    """Algorithm 1's moves row by row (distributions frozen), then pooled distributions: labels."""
    centres = list(psi)
    labels = []
    for i in range(len(R)):
        c = _reference_costs(R[i:i + 1], np.array(centres))[0]
        if c.min() > lam:
            centres.append(R[i] / R[i].sum())
            labels.append(len(centres) - 1)
        else:
            labels.append(int(np.argmin(c)))
    return _canonical(np.array(labels))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_first_pass_matches_a_slow_loop(seed, x64):
    R = _blocks(seed)
    lam = 6.0
    res = kl_means(R, lam, max_iter=1)
    ref = _slow_pass(R, (R.sum(0) / R.sum())[None, :], lam)
    np.testing.assert_array_equal(_canonical(res.labels), ref)


@pytest.mark.parametrize("collapsed", [False, True])
def test_objective_never_rises_and_equals_the_metric(collapsed, x64):
    R = _blocks(3, n_per=8)
    for lam in (2.0, 8.0, 30.0):
        res = kl_means(R, lam, collapsed=collapsed)
        trace = res.objective_trace
        assert np.all(np.diff(trace) <= 1e-12 * np.abs(trace[:-1]))
        ref = kl_means_objective(R, res.labels, lam)
        assert res.objective == pytest.approx(ref, rel=1e-12)
        assert trace[-1] == res.objective


@pytest.mark.parametrize("collapsed", [False, True])
def test_stepping_by_hand_equals_the_driver(collapsed, x64):
    R = _blocks(4)
    lam = 5.0
    res = kl_means(R, lam, collapsed=collapsed)
    rows = kl_means_rows(R)
    state = init_kl_means_state(rows, lam)
    trace = [float(state.objective)]
    while not bool(state.converged):
        state, info = kl_means_step(state, rows, lam, collapsed=collapsed)
        assert not bool(state.overflow)
        trace.append(float(info.objective))
    np.testing.assert_array_equal(np.asarray(state.labels)[:len(R)], res.labels)
    np.testing.assert_array_equal(np.array(trace), res.objective_trace)
    assert int(state.n_iter) == res.n_iter


def test_buffer_growth_gives_the_same_fit(x64):
    # 40 distinct rows at a tiny lam need more than the initial 32 slots.
    R = np.random.default_rng(5).poisson(3.0, (40, 12)).astype(float) + np.eye(40, 12) * 50
    res = kl_means(R, 1e-6)
    rows = kl_means_rows(R)
    state = init_kl_means_state(rows, 1e-6, capacity=128)
    state, _ = kl_means_step(state, rows, 1e-6)
    np.testing.assert_array_equal(_canonical(np.asarray(state.labels)[:40]),
                                  _canonical(_slow_pass(R, (R.sum(0) / R.sum())[None], 1e-6)))
    assert res.n_clusters == len(np.unique(R / R.sum(1, keepdims=True), axis=0))


@pytest.mark.parametrize("collapsed", [False, True])
def test_sparse_equals_dense(collapsed, x64):
    R = _blocks(6, n_per=7)
    R[R < 3] = 0  # sparser rows
    dense = kl_means(R, 4.0, collapsed=collapsed)
    sparse = kl_means(sp.csr_matrix(R), 4.0, collapsed=collapsed)
    np.testing.assert_array_equal(dense.labels, sparse.labels)
    np.testing.assert_allclose(sparse.objective_trace, dense.objective_trace, rtol=1e-12)
    np.testing.assert_allclose(sparse.distributions, dense.distributions, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("collapsed", [False, True])
def test_lambda_extremes(collapsed, x64):
    R = _blocks(7)
    R[3] = R[5]  # a repeated row
    assert kl_means(R, 1e9, collapsed=collapsed).n_clusters == 1
    distinct = len(np.unique(R / R.sum(1, keepdims=True), axis=0))
    res = kl_means(R, 1e-9, collapsed=collapsed)
    assert res.n_clusters == distinct
    assert res.labels[3] == res.labels[5]


def test_coassociation_rows_and_lambda_hint(x64):
    parts = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]])
    C = coassociation(parts)
    dense = C.symmetric_counts().toarray() + np.diag(C.sampled)
    a = kl_means(C, 1.0, collapsed=True)
    b = kl_means(dense, 1.0, collapsed=True)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.objective == pytest.approx(b.objective, rel=1e-12)
    # Farthest-first on two distinct distributions: lam_1 = the farther row's cost to the pool.
    R = np.array([[4.0, 0], [4.0, 0], [0, 4.0]])
    assert kl_means_lambda(R, 1) == pytest.approx(4 * np.log(3), rel=1e-12)
    assert kl_means(R, kl_means_lambda(R, 1)).n_clusters == 1
    assert kl_means(R, kl_means_lambda(R, 2)).n_clusters == 2


# --------------------------------------------------------------------------- #
# The sampler: its tiny-tau sweep is KL-means' pass; exact enumeration
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", [0, 1])
def test_explicit_sweep_at_tiny_tau_is_one_kl_means_pass(seed, x64):
    R = _blocks(seed)
    lam = 6.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_dp_multinomial(seed, R, lam=lam, tau=1e-30, num_warmup=0, num_samples=1,
                                    num_chains=2)
    hard = kl_means(R, lam, max_iter=1)
    for c in range(2):
        np.testing.assert_array_equal(_canonical(post.labels[c, 0]), _canonical(hard.labels))


def _tempered_posterior(R, lam, tau, beta):
    """Every partition's tempered posterior: CRP(alpha = e^{-lam/tau}) x prod_j Polya(n_j / tau)."""
    n, m = R.shape
    parts = list(set_partitions(n))
    logp = []
    for z in parts:
        k = z.max() + 1
        lp = -k * lam / tau
        for j in range(k):
            S = R[z == j].sum(0) / tau
            lp += gammaln((z == j).sum())
            lp += np.sum(gammaln(beta + S)) - m * gammaln(beta) - gammaln(m * beta + S.sum()) + gammaln(m * beta)
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return parts, p / p.sum()


@pytest.mark.parametrize("collapsed", [True, False])
def test_sampler_matches_exact_enumeration(collapsed, x64):
    R = np.array([[3.0, 1, 0], [2, 2, 0], [0, 1, 3], [1, 0, 2]])
    lam, tau, beta = 1.0, 2.0, 1.0
    parts, p = _tempered_posterior(R, lam, tau, beta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_dp_multinomial(0, R, lam=lam, tau=tau, beta=beta, collapsed=collapsed,
                                    num_warmup=50, num_samples=1500, num_chains=8)
    index = {tuple(_canonical(z)): a for a, z in enumerate(parts)}
    draws = post.labels.reshape(-1, R.shape[0])
    freq = np.bincount([index[tuple(_canonical(z))] for z in draws], minlength=len(parts))
    freq = freq / freq.sum()
    assert p.max() < 0.5 and np.sum(p > 0.02) >= 5  # a spread posterior, not a point
    assert 0.5 * np.abs(freq - p).sum() < 0.03


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan, np.inf])
def test_bad_lam_and_tau(lam):
    R = np.ones((3, 2))
    with pytest.raises(ValueError, match="lam"):
        kl_means(R, lam)
    with pytest.raises(ValueError, match="lam"):
        gibbs_dp_multinomial(0, R, lam=lam, tau=1.0)
    with pytest.raises(ValueError, match="tau"):
        gibbs_dp_multinomial(0, R, lam=1.0, tau=lam)


@pytest.mark.parametrize("bad", ["negative", "nan", "zero", "ensemble", "Ensemble"])
def test_bad_counts(bad):
    from bayesclust import kmeans_ensemble

    R = np.ones((4, 3))
    if bad == "negative":
        R[1, 1] = -1.0
    elif bad == "nan":
        R[2, 0] = np.nan
    elif bad == "zero":
        R[:] = 0.0
    elif bad == "ensemble":
        R = np.array([[0, 0, 1, 1, 2], [0, 1, 1, 0, 0]])
    else:
        R = kmeans_ensemble(0, np.arange(10.0)[:, None], 2)
    with pytest.raises(ValueError, match="counts"):
        kl_means(R, 1.0)
    with pytest.raises(ValueError, match="counts"):
        gibbs_dp_multinomial(0, R, lam=1.0, tau=1.0)
    with pytest.raises(ValueError, match="counts"):
        kl_means_objective(R, np.zeros(np.shape(getattr(R, "labels", R))[-1], int), 1.0)
    with pytest.raises(ValueError, match="counts"):
        kl_means_lambda(R, 1)


def test_jit_and_eager_steps_agree(x64):
    R = _blocks(8)
    rows = kl_means_rows(R)
    s0 = init_kl_means_state(rows, 5.0)
    eager, _ = kl_means_step(s0, rows, 5.0)
    jitted, _ = jax.jit(kl_means_step)(s0, rows, 5.0)
    np.testing.assert_array_equal(np.asarray(eager.labels), np.asarray(jitted.labels))
    assert float(eager.objective) == pytest.approx(float(jitted.objective), rel=1e-12)


def test_aspect_log_joint_differences_match_enumeration(x64):
    from bayesclust.comparison.aspect import aspect_log_joint

    R = np.array([[3.0, 1, 0], [2, 2, 0], [0, 1, 3], [1, 0, 2]])
    lam, tau, beta = 1.0, 0.7, 1.3
    parts, p = _tempered_posterior(R, lam, tau, beta)
    got = np.array([aspect_log_joint(sp.csr_matrix(R), z, tau, lam, beta) for z in parts])
    np.testing.assert_allclose(got - got[0], np.log(p) - np.log(p[0]), rtol=1e-10, atol=1e-10)
