"""Fitting discriminative clustering: CG MAP, simulated annealing, sDC and NUTS (Kaski et al. 2005, §2.1, §3.1).

References are independent computations: autodiff of the model's objective and the
looped eq. 11 for the closed-form gradient; slow NumPy loops of the paper's annealing
and on-line updates fed the same random numbers; scikit-learn's k-means for the
k-means baseline; NumPy argmins for Voronoi cells.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import gammaln, logsumexp, softmax
from sklearn.cluster import KMeans

from bayesclust.datasets import dc_toy
from bayesclust.inference.discriminative import _common as dc_common
from bayesclust.inference.discriminative import dc_anneal as dc_anneal_mod
from bayesclust.inference.discriminative import dc_map as dc_map_mod
from bayesclust.inference.discriminative import sdc as sdc_mod
from bayesclust.inference.discriminative.dc_anneal import dc_anneal
from bayesclust.inference.discriminative.dc_map import dc_map
from bayesclust.inference.discriminative.dc_nuts import dc_nuts
from bayesclust.inference.discriminative.discriminative import DCResult, dc_voronoi_labels
from bayesclust.inference.discriminative.sdc import sdc
from bayesclust.metrics import dc_log_posterior
from bayesclust.models.discriminative import dc_objective

from ._reference import dc_gradient_closed_form


def _cells(X, m):
    return np.argmin(((X[:, None, :] - m[None]) ** 2).sum(-1), axis=1)


def _table(labels, classes, K, C):
    t = np.zeros((K, C), np.int64)
    np.add.at(t, (labels, classes), 1)
    return t


@pytest.fixture(scope="module")
def toy():
    """The DC toy of Kaski et al. §7.1 (n = 10,000; docs/deviations.md#dc-toy-design) and scikit-learn k-means centres on it."""
    X, c = dc_toy(0, 10_000)
    km = KMeans(6, n_init=1, random_state=0).fit(X)
    return X, c, km.cluster_centers_, km.labels_


# --------------------------------------------------------------------------- #
# The smoothed objective and its closed-form gradient
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("d", [2, 6])  # exact differences / GEMM distances
@pytest.mark.parametrize("lam_eq, lam_mog, lam_vq", [(0.0, 0.0, 0.0), (0.4, 0.7, 0.3)])
def test_value_and_grad_is_dc_objective_and_its_autodiff(x64, d, lam_eq, lam_mog, lam_vq):
    rng = np.random.default_rng(d)
    n, K, C, std = 60, 4, 3, 0.7
    X, m = rng.normal(size=(n, d)), rng.normal(size=(K, d))
    c = rng.integers(0, C, n)
    args = (jnp.asarray(X), jnp.asarray(c, jnp.int32), 0.7, 1.3, lam_eq, lam_mog, lam_vq)
    static = dict(n_classes=C, use_mog=lam_mog > 0, use_vq=lam_vq > 0)
    F, g = dc_map_mod._smoothed_value_and_grad(jnp.asarray(m), *args, **static)

    def obj(m):
        return dc_objective(m, jnp.asarray(X), jnp.asarray(c), C, std, n0=1.3, lam_eq=lam_eq,
                            lam_mog=lam_mog, lam_vq=lam_vq)

    F_ref, g_ref = jax.jit(jax.value_and_grad(obj))(jnp.asarray(m))
    assert float(F) == pytest.approx(float(F_ref), rel=1e-12)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-9, atol=1e-10)
    if lam_mog == lam_vq == 0.0:  # the paper's eq. 11, looped (tests/_reference.py)
        np.testing.assert_allclose(
            np.asarray(g), dc_gradient_closed_form(m, X, c, C, std, n0=1.3, lam_eq=lam_eq),
            rtol=1e-9, atol=1e-10)
    # Permuting the prototypes permutes the gradient and keeps the value.
    perm = np.array([2, 0, 3, 1])
    F_p, g_p = dc_map_mod._smoothed_value_and_grad(jnp.asarray(m[perm]), *args, **static)
    assert float(F_p) == pytest.approx(float(F), rel=1e-12)
    np.testing.assert_allclose(np.asarray(g_p), np.asarray(g)[perm], rtol=1e-9, atol=1e-10)
    if d == 2 and lam_mog > 0:  # jit and eager agree (eager is slow: one case)
        with jax.disable_jit():
            F_e, g_e = dc_map_mod._smoothed_value_and_grad(jnp.asarray(m), *args, **static)
        assert float(F_e) == pytest.approx(float(F), rel=1e-12)
        np.testing.assert_allclose(np.asarray(g_e), np.asarray(g), rtol=1e-9, atol=1e-10)


# --------------------------------------------------------------------------- #
# CG MAP on the toy (paper Fig. 1)
# --------------------------------------------------------------------------- #


def test_cg_map_improves_the_smoothed_objective_and_beats_kmeans(toy):
    X, c, centers, km_labels = toy
    res = dc_map(0, X, c, 6, 0.3, init=centers)
    assert isinstance(res, DCResult) and res.method == "cg"
    assert res.prototypes.shape == (6, 2) and res.labels.shape == (10_000,)
    assert 1 <= res.n_iter <= 29 and len(res.objective_trace) == res.n_iter + 1
    trace = res.objective_trace
    # The strong-Wolfe line search only accepts increases of F (tolerance: float64 rounding).
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace).max())
    assert trace[-1] - trace[0] > 100.0  # far above the k-means start (about +260 nats here)
    assert res.objective == pytest.approx(trace[-1])
    # The smoothed objective at the result is dc_objective's (an independent evaluation).
    with jax.enable_x64(True):
        F = float(dc_objective(jnp.asarray(res.prototypes, jnp.float64), jnp.asarray(X),
                               jnp.asarray(c), 2, 0.3))
    assert F == pytest.approx(res.objective, rel=1e-10)
    # Labels are the Voronoi cells, log_posterior is their exact eq. 9.
    np.testing.assert_array_equal(res.labels, _cells(X, res.prototypes))
    assert res.log_posterior == pytest.approx(
        dc_log_posterior(res.labels, c, n_clusters=6, n_classes=2), rel=1e-12)
    # Discriminative cells predict the classes far better than k-means' (eq. 9, exact).
    km_lp = dc_log_posterior(km_labels, c, n_clusters=6, n_classes=2)
    assert res.log_posterior > km_lp + 200.0  # about -5128 vs -5550


def test_cg_map_fig1_vertical_column_vs_isotropic_vq(toy):
    """Paper Fig. 1: plain DC puts the prototypes along the class-changing (vertical)
    axis only; heavy VQ regularisation turns it into k-means (isotropic layout)."""
    X, c, centers, _ = toy
    plain = dc_map(0, X, c, 6, 0.3, init=centers)
    spread = plain.prototypes.std(axis=0)
    assert spread[1] > 5 * spread[0]  # measured: 1.24 vs 0.04
    vq = dc_map(0, X, c, 6, 0.3, init=centers, lam_vq=1.0)
    spread_vq = vq.prototypes.std(axis=0)
    assert 0.5 < spread_vq[1] / spread_vq[0] < 2.0  # measured: 0.92 vs 0.91
    assert vq.converged  # the VQ term makes the problem well conditioned
    # The trade-off of eq. 15: VQ gains distortion, loses class prediction.
    evq = lambda r: np.sum((X - r.prototypes[r.labels]) ** 2)  # noqa: E731
    assert evq(vq) < 0.6 * evq(plain)
    assert vq.log_posterior < plain.log_posterior


def test_cg_map_random_init_and_max_iter_zero():
    # 600 points and 4 prototypes: test_cg_map_kmeans_init's shapes, one compiled CG run.
    X, c = dc_toy(3, 600)
    res = dc_map(5, X, c, 4, 0.4, init="random")
    start = res.info["init_prototypes"]
    # "random": K distinct data points.
    rows = [np.flatnonzero((X == p).all(1)) for p in start]
    assert all(len(r) == 1 for r in rows) and len({int(r[0]) for r in rows}) == 4
    assert res.log_posterior > dc_log_posterior(_cells(X, start), c, n_clusters=4)
    # max_iter=0 returns the start, with its smoothed objective.
    zero = dc_map(5, X, c, 4, 0.4, init=start, max_iter=0)
    np.testing.assert_allclose(zero.prototypes, start)
    assert zero.n_iter == 0 and not zero.converged
    assert zero.objective == pytest.approx(res.objective_trace[0], rel=1e-12)


def test_cg_map_kmeans_init():
    pytest.importorskip("bayesclust.inference.hard.kmeans")
    X, c = dc_toy(1, 600)
    res = dc_map(0, X, c, 4, 0.3)  # default init="kmeans"
    assert res.prototypes.shape == (4, 2)
    assert res.objective_trace[-1] >= res.objective_trace[0]


# --------------------------------------------------------------------------- #
# SA MAP
# --------------------------------------------------------------------------- #


def _exact_objective(X, c, m, C, n0, lam_eq, lam_vq):
    """Eq. 9 (+ 12, 15) of the Voronoi cells of m, from scratch with scipy's gammaln."""
    K = m.shape[0]
    sq = ((X[:, None, :] - m[None]) ** 2).sum(-1)
    t = _table(sq.argmin(1), c, K, C)
    return (gammaln(n0 + t).sum() - (1 + lam_eq) * gammaln(C * n0 + t.sum(1)).sum()
            - lam_vq * sq.min(1).sum())


def _sa_reference(key, X, c, m0, jump_std, n_iter, move, block, n_blocks, C, n0, lam_eq, lam_vq):
    """The paper's annealing (Kaski et al. 2005 §3.1) as a slow loop, fed the same random numbers."""
    K, d = m0.shape
    m, E = m0.copy(), _exact_objective(X, c, m0, C, n0, lam_eq, lam_vq)
    best = E
    for b in range(n_blocks):
        eps, which, log_u = (np.asarray(a) for a in
                             dc_anneal_mod._anneal_draws(jax.random.fold_in(key, b), block, K, d,
                                                         move, jnp.float64))
        for i in range(block):
            s = b * block + i
            if s >= n_iter:
                break
            T = 1.0 - 0.9 * s / max(n_iter - 1, 1)
            new = m.copy()
            if move == "all":
                new += T ** 0.25 * jump_std * eps[i]  # covariance sqrt(T) jump_std^2 I
            else:
                new[which[i]] += T ** 0.25 * jump_std * eps[i]
            E_new = _exact_objective(X, c, new, C, n0, lam_eq, lam_vq)
            if E_new >= E or log_u[i] < (E_new - E) / T:  # Metropolis, exp(-dE / T)
                m, E = new, E_new
                best = max(best, E)
    return m, E, best


@pytest.mark.parametrize("move, lam_eq, lam_vq", [("one", 0.5, 0.1), ("all", 0.0, 0.0)])
def test_anneal_matches_a_slow_loop_with_the_same_draws(x64, move, lam_eq, lam_vq):
    rng = np.random.default_rng(7)
    n, K, C, n_iter = 30, 3, 2, 400
    X = rng.normal(size=(n, 2))
    c = (X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    m0 = X[:K].copy()
    res = dc_anneal(11, X, c, K, 0.3, n_iter=n_iter, init=m0, move=move, n0=1.5,
                    lam_eq=lam_eq, lam_vq=lam_vq, trace_points=7)  # 7 blocks of 58: 6 masked
    block, n_blocks = dc_common.blocks(n_iter, 7)
    assert (block, n_blocks) == (58, 7)
    key = jax.random.split(jax.random.PRNGKey(11))[1]
    m_ref, E_ref, best_ref = _sa_reference(key, X, c, m0, 0.3, n_iter, move, block, n_blocks,
                                           C, 1.5, lam_eq, lam_vq)
    np.testing.assert_allclose(res.prototypes, m_ref, rtol=1e-10, atol=1e-12)
    assert res.objective == pytest.approx(E_ref, rel=1e-10)
    assert res.info["best_objective"] == pytest.approx(best_ref, rel=1e-10)
    assert 0.05 < res.info["accept_rate"] < 0.95
    assert res.n_iter == n_iter and res.smooth_std is None and res.method == "sa"
    assert len(res.objective_trace) == n_blocks + 1 and res.objective_trace[-1] == res.objective


# Each move once in make test, both dtypes among them; the other two pairs (the same
# compiled paths in the other dtype, a driver and a step compile each) run under `long`.
@pytest.mark.parametrize("move, lam_vq, dtype", [
    ("one", 0.1, np.float32), ("all", 0.0, np.float64),
    pytest.param("one", 0.1, np.float64, marks=pytest.mark.long),
    pytest.param("all", 0.0, np.float32, marks=pytest.mark.long),
])
def test_anneal_steps_by_hand_reproduce_dc_anneal(dtype, move, lam_vq):
    """init + dc_anneal_step, step b keyed fold_in(k_run, b), give dc_anneal bit for bit."""
    X, c = dc_toy(5, 120)
    X = X.astype(dtype)
    K, n_iter, points = 3, 500, 6  # 6 steps of 84: the last one partial
    with jax.enable_x64(dtype == np.float64):
        res = dc_anneal(2, X, c, K, 0.3, n_iter=n_iter, move=move, lam_eq=0.2, lam_vq=lam_vq,
                        trace_points=points)
        m0 = res.info["init_prototypes"]
        state = dc_anneal_mod.init_dc_anneal_state(X, c, m0, lam_eq=0.2, lam_vq=lam_vq, move=move,
                                                   trace_points=points)
        block, n_blocks = dc_common.blocks(n_iter, points)
        k_run = jax.random.split(jax.random.PRNGKey(2))[1]
        accepted = 0
        for b in range(n_blocks):
            assert not bool(state.converged)
            before = np.asarray(state.labels)
            state, info = dc_anneal_mod.dc_anneal_step(jax.random.fold_in(k_run, b), state, X, c,
                                                       0.3, n_iter=n_iter, block=block, move=move)
            assert float(info.objective) == float(state.objective)
            assert bool(info.changed) == (not np.array_equal(before, np.asarray(state.labels)))
            accepted += int(info.n_accepted)
    assert bool(state.converged) and int(state.n_iter) == res.n_iter == n_iter and res.converged
    np.testing.assert_array_equal(res.info["final_prototypes"], np.asarray(state.prototypes))
    np.testing.assert_array_equal(res.objective_trace, np.asarray(state.objective_trace))
    assert res.objective == float(state.objective) and accepted == int(state.n_accepted)
    assert res.info["accept_rate"] == accepted / n_iter


def test_anneal_improves_and_its_incremental_bookkeeping_is_exact():
    """The single-prototype move updates a cached distance matrix and recounts the table
    per proposal; after 20,000 proposals (float32 distances) both equal a recount."""
    X, c = dc_toy(2, 600)
    K, move = 4, "one"
    res = dc_anneal(3, X, c, K, 0.2, n_iter=20_000, move=move, lam_eq=0.3, lam_vq=0.05)
    start = res.info["init_prototypes"]
    lp0 = dc_log_posterior(_cells(X, start), c, n_clusters=K)
    assert res.log_posterior > lp0 + 10.0  # measured: +30 to +40 nats
    # The incrementally maintained table and energy equal a from-scratch recount.
    m = res.info["final_prototypes"]
    labels = dc_voronoi_labels(X, m)
    np.testing.assert_array_equal(res.info["final_counts"], _table(labels, c, K, 2))
    sq = ((X - m[labels]) ** 2).sum()
    scratch = dc_log_posterior(labels, c, n_clusters=K, lam_eq=0.3) - 0.05 * sq
    assert res.info["final_objective"] == pytest.approx(scratch, rel=1e-5)
    assert res.objective_trace[0] == pytest.approx(
        dc_log_posterior(_cells(X, start), c, n_clusters=K, lam_eq=0.3)
        - 0.05 * (((X - start[_cells(X, start)]) ** 2).sum()), rel=1e-5)
    # Best-so-far is never below the start nor the final state.
    assert res.info["best_objective"] >= max(res.objective_trace[0], res.objective) - 1e-9
    best = dc_anneal(3, X, c, K, 0.2, n_iter=20_000, move=move, lam_eq=0.3, lam_vq=0.05,
                     return_best=True)
    assert best.objective == res.info["best_objective"] and best.info["returned"] == "best"


# --------------------------------------------------------------------------- #
# sDC
# --------------------------------------------------------------------------- #


def _sdc_reference(key, X, c, m0, smooth_std, rate, n_steps, block, n_blocks, C):
    """Eqs. 4-6 (§2.1) with the §7.2.1 schedule, as a slow loop fed the same draws."""
    n = X.shape[0]
    K = m0.shape[0]
    m, g = m0.copy(), np.zeros((K, C))
    for b in range(n_blocks):
        idx, u = (np.asarray(a) for a in sdc_mod._sdc_draws(jax.random.fold_in(key, b), block, n,
                                                                 jnp.float64))
        for s in range(block):
            t = b * block + s
            if t >= n_steps:
                break
            alpha = rate * (1.0 - t / n_steps)
            x, i = X[idx[s]], c[idx[s]]
            y = softmax(-((x - m) ** 2).sum(1) / (2 * smooth_std**2))
            cdf = np.cumsum(y)
            j = min(int(np.searchsorted(cdf, u[s, 0] * cdf[-1])), K - 1)
            l = min(int(np.searchsorted(cdf, u[s, 1] * cdf[-1])), K - 1)  # noqa: E741
            log_psi = g - logsumexp(g, axis=1, keepdims=True)
            psi = np.exp(log_psi)
            e_i = np.eye(C)[i]
            new_m, new_g = m.copy(), g.copy()
            new_m[j] -= alpha * (x - m[j]) * (log_psi[l, i] - log_psi[j, i])  # eq. 5
            new_g[j] -= 2 * alpha * (psi[j] - e_i)  # eq. 6, doubled coefficient
            new_m[l] -= alpha * (x - m[l]) * (log_psi[j, i] - log_psi[l, i])  # j and l swapped
            new_g[l] -= 2 * alpha * (psi[l] - e_i)
            m, g = new_m, new_g
    return m, np.exp(g - logsumexp(g, axis=1, keepdims=True))


def test_sdc_matches_a_slow_loop_with_the_same_draws(x64):
    rng = np.random.default_rng(2)
    n, K, C, n_steps = 40, 3, 3, 300
    X = rng.normal(size=(n, 2))
    c = rng.integers(0, C, n)
    m0 = X[5:5 + K].copy()
    res = sdc(4, X, c, K, 0.8, n_iter=n_steps, rate=0.05, init=m0, trace_points=4)
    block, n_blocks = dc_common.blocks(n_steps, 4)
    key = jax.random.split(jax.random.PRNGKey(4))[1]
    m_ref, psi_ref = _sdc_reference(key, X, c, m0, 0.8, 0.05, n_steps, block, n_blocks, C)
    np.testing.assert_allclose(res.prototypes, m_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.info["psi"], psi_ref, rtol=1e-10, atol=1e-12)
    # The recorded objective is the smoothed conditional log-likelihood of the final state.
    Y = softmax(-((X[:, None] - m_ref[None]) ** 2).sum(-1) / (2 * 0.8**2), axis=1)
    assert res.objective == pytest.approx(np.sum(Y * np.log(psi_ref[:, c]).T), rel=1e-10)
    assert res.objective_trace[0] == pytest.approx(n * np.log(1 / C), rel=1e-12)  # psi uniform


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sdc_steps_by_hand_reproduce_sdc(dtype):
    """init + sdc_step, step b keyed fold_in(k_run, b), give sdc bit for bit."""
    X, c = dc_toy(6, 150)
    X = X.astype(dtype)
    K, n_iter, points = 3, 700, 4  # 4 steps of 175
    with jax.enable_x64(dtype == np.float64):
        res = sdc(5, X, c, K, 0.4, n_iter=n_iter, rate=0.05, trace_points=points)
        state = sdc_mod.init_sdc_state(X, c, res.info["init_prototypes"], 0.4, trace_points=points)
        block, n_blocks = dc_common.blocks(n_iter, points)
        k_run = jax.random.split(jax.random.PRNGKey(5))[1]
        for b in range(n_blocks):
            assert not bool(state.converged)
            before = np.asarray(state.labels)
            state, info = sdc_mod.sdc_step(jax.random.fold_in(k_run, b), state, X, c, 0.4,
                                           n_iter=n_iter, rate=0.05, block=block)
            assert float(info.objective) == float(state.objective)
            assert bool(info.changed) == (not np.array_equal(before, np.asarray(state.labels)))
        psi = np.asarray(jax.nn.softmax(state.gamma, axis=1), np.float64)
    assert bool(state.converged) and int(state.n_iter) == res.n_iter == n_iter and res.converged
    np.testing.assert_array_equal(res.prototypes, np.asarray(state.prototypes))
    np.testing.assert_array_equal(res.info["psi"], psi)
    np.testing.assert_array_equal(res.objective_trace, np.asarray(state.objective_trace, np.float64))


def test_sdc_improves_the_exact_posterior_over_its_random_start():
    X, c = dc_toy(4, 1000)
    res = sdc(0, X, c, 4, 0.3, n_iter=50_000)
    start = res.info["init_prototypes"]
    lp0 = dc_log_posterior(_cells(X, start), c, n_clusters=4)
    assert res.log_posterior > lp0 + 20.0
    assert res.objective > res.objective_trace[0]
    # The class distributions learned are those of the cells (the top cell is mostly class 1).
    top = np.argmax(res.prototypes[:, 1])
    assert res.info["psi"][top, 1] > 0.7


# --------------------------------------------------------------------------- #
# NUTS
# --------------------------------------------------------------------------- #


def test_dc_nuts_posterior_of_voronoi_labels():
    X, c = dc_toy(5, 40)
    # K = 2: the density is flat along the prototypes' bisector, so cap the trees.
    post = dc_nuts(0, X, c, 2, 0.5, num_warmup=10, num_samples=5, num_chains=2,
                   init="random", nuts_kwargs={"max_tree_depth": 5})
    assert post.labels.shape == (2, 5, 40)
    protos = post.params["prototypes"]
    assert protos.shape == (2, 5, 2, 2) and np.all(np.isfinite(protos))
    assert post.sample_stats["num_steps"].max() <= 2**5
    for ch in range(2):
        for s in range(5):
            np.testing.assert_array_equal(post.labels[ch, s],
                                          _cells(np.float32(X), protos[ch, s]))
    assert post.model == "dc_collapsed" and post.sampler == "NUTS"


# --------------------------------------------------------------------------- #
# Bad input
# --------------------------------------------------------------------------- #


_X = np.random.default_rng(0).normal(size=(10, 2))
_c = np.array([0, 1] * 5)


@pytest.mark.parametrize("fit, width", [(dc_map, "smooth_std"), (dc_anneal, "jump_std"),
                                        (sdc, "smooth_std"), (dc_nuts, "smooth_std")])
@pytest.mark.parametrize("change, error, match", [
    (dict(classes=_c[:9]), ValueError, "classes has length 9"),
    (dict(classes=_c + 0.5), ValueError, "classes must contain integer"),
    (dict(classes=np.array(["a", "b"] * 5)), TypeError, "classes"),
    (dict(classes=_c * 2, n_classes=3), ValueError, r"classes \[1\] .* no samples"),
    (dict(classes=_c, n_classes=3), ValueError, r"classes \[2\] .* no samples"),
    (dict(classes=_c, n_classes=1), ValueError, "n_classes=1"),
    (dict(classes=_c - 1), ValueError, "non-negative"),
    (dict(n_clusters=11), ValueError, "n_clusters=11 exceeds"),
    (dict(n_clusters=0), ValueError, "n_clusters"),
    (dict(width=0.0), ValueError, "WIDTH"),
    (dict(width=-1.0), ValueError, "WIDTH"),
    (dict(init="kmeans++"), ValueError, "init must be"),
    (dict(init=np.zeros((3, 3))), ValueError, r"init must have shape"),
    (dict(X=np.r_[_X[:9], [[np.nan, 0.0]]]), ValueError, "X contains NaN"),
])
def test_bad_input(fit, width, change, error, match):
    kw = dict(X=_X, classes=_c, n_clusters=2, width=0.5)
    kw.update(change)
    args = (0, kw.pop("X"), kw.pop("classes"), kw.pop("n_clusters"), kw.pop("width"))
    with pytest.raises(error, match=match.replace("WIDTH", width)):
        fit(*args, **kw)


def test_bad_options():
    with pytest.raises(ValueError, match="move must be"):
        dc_anneal(0, _X, _c, 2, 0.5, move="two")
    with pytest.raises(ValueError, match="lam_vq"):
        dc_map(0, _X, _c, 2, 0.5, lam_vq=-1.0, init="random")
    with pytest.raises(ValueError, match="rate"):
        sdc(0, _X, _c, 2, 0.5, rate=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        dc_anneal(0, _X, _c, 2, 0.5, n_iter=0)
    with pytest.raises(ValueError, match="prototypes have dimension"):
        dc_voronoi_labels(_X, np.zeros((2, 3)))
