"""GMD: Figueiredo & Jain (2002)'s unsupervised learning of Gaussian mixtures (CEM^2 + MML).

References: the message length written out with scipy's multivariate normal; a literal loop
of the paper's algorithm in NumPy (float64, below); scikit-learn's ``GaussianMixture`` started
from the same parameters; hand values.  Invariances: scale, padding, weights = repeated rows,
the trace's pieces; jit and eager agree.  The Iris number of the DID paper (Aidos & Fred 2012,
Table 3) is a strict xfail with the measured numbers.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

import bayesclust
from bayesclust import _validation as V
from bayesclust import datasets
from bayesclust.inference.increments import gmd as G
from bayesclust.inference.increments.gmd import GMDResult, gmd, gmd_step, init_gmd_state, message_length
from bayesclust.metrics import consistency_index


def _blobs(seed, n_per=100, std=0.5):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 4.0]])
    X = np.concatenate([rng.normal(c, std, (n_per, 2)) for c in centres])
    return X, np.repeat(np.arange(3), n_per)


#: The component buffer (k_max, a shape) of the tests whose statement holds at any k_max:
#: with the three-blob data (300 rows) or Iris, each dtype, they share one compiled run.
K_MAX = 20


def _loglik(X, weights, means, covs):
    comps = [np.log(a) + multivariate_normal(m, c).logpdf(X) for a, m, c in zip(weights, means, covs)]
    return float(logsumexp(np.stack(comps, axis=1), axis=1).sum())


def _L_ref(X, weights, means, covs):
    """Figueiredo & Jain's message length, written from the paper (nats)."""
    n, d = X.shape
    N = d + d * (d + 1) / 2
    k = len(weights)
    return (N / 2 * np.sum(np.log(n * np.asarray(weights) / 12)) + k / 2 * np.log(n / 12)
            + k * (N + 1) / 2 - _loglik(X, weights, means, covs))


def slow_gmd(X, means, k_min, tol=1e-5, reg_covar=1e-6):
    """The algorithm of Figueiredo & Jain (2002, §4), one component at a time, in float64.

    Returns (trace of L, trace of k, best (L, weights, means, covariances), converged state's k).
    """
    n, d = X.shape
    N = d + d * (d + 1) / 2
    v = float(np.mean(np.var(X, axis=0)))
    ridge = reg_covar * v
    K = len(means)
    mu = [np.array(m, float) for m in means]
    cov = [(0.1 * v + ridge) * np.eye(d) for _ in range(K)]
    alpha = np.full(K, 1.0 / K)
    alive = np.ones(K, bool)
    logu = np.stack([multivariate_normal(mu[m], cov[m]).logpdf(X) for m in range(K)], axis=1)

    def message():
        la = np.where(alive, np.log(np.where(alive, alpha, 1.0)), -np.inf)
        ll = logsumexp(logu + la, axis=1).sum()
        k = alive.sum()
        return (N / 2 * np.sum(np.log(n * alpha[alive] / 12)) + k / 2 * np.log(n / 12)
                + k * (N + 1) / 2 - ll)

    L = message()
    trace, ks = [L], [K]
    best = (np.inf, None)
    while True:
        for m in range(K):
            if not alive[m]:
                continue
            la = np.where(alive, np.log(np.where(alive, alpha, 1.0)), -np.inf)
            lw = logu + la
            W = np.exp(lw - logsumexp(lw, axis=1, keepdims=True))  # (n, K)
            totals = W.sum(axis=0)
            r = W[:, m]
            mm = r @ X / totals[m]
            D = X - mm
            C = (r[:, None] * D).T @ D / totals[m] + ridge * np.eye(d)
            support = np.where(alive, np.maximum(totals - N / 2, 0.0), 0.0)
            alpha[m] = support[m] / support.sum()
            alpha /= alpha.sum()
            if alpha[m] == 0:
                alive[m] = False
            else:
                mu[m], cov[m] = mm, C
                logu[:, m] = multivariate_normal(mm, C).logpdf(X)
        new = message()
        trace.append(new)
        ks.append(alive.sum())
        stop = abs(L - new) < tol * abs(L)
        L = new
        if not stop:
            continue
        if L <= best[0]:
            best = (L, alpha[alive].copy(), np.array(mu)[alive], np.array(cov)[alive])
        if alive.sum() <= k_min:
            return np.array(trace), np.array(ks), best
        smallest = np.argmin(np.where(alive, alpha, np.inf))
        alive[smallest] = False
        alpha[smallest] = 0.0
        alpha /= alpha.sum()
        L = message()
        trace.append(L)
        ks.append(alive.sum())


def _unit(X):
    """The driver's frame: centred, scaled by a power of two (``V.to_unit_frame``)."""
    Xs, _ = V.to_unit_frame(X, V.centre(X))
    return Xs


@pytest.fixture
def unpadded(monkeypatch):
    monkeypatch.setattr(G, "_pad_to", lambda n: n)


# --------------------------------------------------------------------------- by hand


def test_message_length_by_hand():
    # one component on (0, 1, 2): N = 2, alpha = 1, mean 1, variance 2/3
    X = np.array([[0.0], [1.0], [2.0]])
    logp = 3 * -0.5 * math.log(2 * math.pi * 2 / 3) - (1 + 0 + 1) / (2 * 2 / 3)
    by_hand = math.log(3 / 12) + 0.5 * math.log(3 / 12) + 1.5 - logp
    got = message_length(X, np.array([1.0]), np.array([[1.0]]), np.array([[[2 / 3]]]))
    assert float(got) == pytest.approx(by_hand, rel=1e-6)


def test_message_length_matches_the_formula_and_skips_empty_components(x64):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    means = rng.normal(size=(3, 3))
    A = rng.normal(size=(3, 3, 3))
    covs = A @ A.transpose(0, 2, 1) + np.eye(3)
    w = np.array([0.5, 0.3, 0.2])
    assert float(message_length(X, w, means, covs)) == pytest.approx(_L_ref(X, w, means, covs), rel=1e-12)
    # a component of weight 0 is not in the message (its covariance may be anything)
    w0 = np.array([0.6, 0.4, 0.0])
    covs0 = covs.copy()
    covs0[2] = 0.0
    ref = _L_ref(X, w0[:2], means[:2], covs[:2])
    assert float(message_length(X, w0, means, covs0)) == pytest.approx(ref, rel=1e-12)


def test_two_tight_clusters_by_hand():
    """Two far groups of 20 points: GMD from 4 components keeps 2, the groups' own means and
    covariances (the ML estimates plus the ridge), weights (20 - N/2) / (40 - N) = 1/2."""
    rng = np.random.default_rng(0)
    A = rng.normal(0.0, 0.1, (20, 2))
    B = rng.normal(5.0, 0.1, (20, 2))
    X = np.concatenate([A, B])
    res = gmd(0, X, 1, 4, init=np.array([A[0], A[1], B[0], B[1]]), reg_covar=1e-2)
    assert res.n_components == 2
    np.testing.assert_array_equal(res.labels, np.repeat([0, 1], 20))
    # the renormalisation after each component reaches the fixed point only as L converges
    np.testing.assert_allclose(res.weights, [0.5, 0.5], atol=2e-3)
    ridge = 1e-2 * np.mean(np.var(X, axis=0))
    for j, group in enumerate((A, B)):
        np.testing.assert_allclose(res.centers[j], group.mean(0), atol=1e-5)
        np.testing.assert_allclose(res.covariances[j], np.cov(group.T, bias=True) + ridge * np.eye(2),
                                   rtol=1e-3)


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_literal_algorithm(x64, unpadded, seed):
    """The jitted driver against the literal loop: every entry of the trace, the components
    alive after every step, the returned mixture."""
    X, _ = _blobs(seed, n_per=30)
    Xs = _unit(X)
    M = Xs[np.random.default_rng(seed).choice(len(Xs), 8, replace=False)]
    trace, ks, (L, w, mu, cov) = slow_gmd(Xs, M, k_min=1)
    res = gmd(0, Xs, 1, 8, init=M)
    assert res.converged
    np.testing.assert_array_equal(res.n_components_trace, ks)
    np.testing.assert_allclose(res.objective_trace, trace, rtol=1e-9)
    assert res.objective == pytest.approx(L, rel=1e-9)
    assert res.n_components == len(w)
    np.testing.assert_allclose(res.weights, w, rtol=1e-7)
    np.testing.assert_allclose(res.centers, mu, atol=1e-8)
    np.testing.assert_allclose(res.covariances, cov, atol=1e-8)
    assert res.objective == pytest.approx(_L_ref(Xs, w, mu, cov), rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_log_likelihood_against_scikit_learn_from_the_same_start(seed):
    """At a fixed k (k_min = k_max = 3) and from the same weights, means and covariances,
    GMD's log-likelihood is at least scikit-learn's minus 0.1%."""
    X, _ = datasets.three_gaussians(rng_key=0)
    k = 3
    M = X[np.random.default_rng(seed).choice(len(X), k, replace=False)]
    v = np.mean(np.var(X, axis=0))
    sk = GaussianMixture(k, covariance_type="full", weights_init=np.full(k, 1 / k), means_init=M,
                         precisions_init=np.stack([np.eye(2) / (0.1 * v)] * k), reg_covar=1e-6 * v,
                         tol=1e-6, max_iter=1000).fit(X)
    res = gmd(0, X, k, k, init=M)
    assert res.n_components == k
    ours = _loglik(X, res.weights, res.centers, res.covariances)
    theirs = sk.score(X) * len(X)
    assert ours >= theirs - 1e-3 * abs(theirs)


def test_finds_three_blobs():
    """Three well-separated 2-D Gaussians, from 20 components: with ``reg_covar = 1e-2`` GMD
    ends with 3 components, the blobs; with the default ridge it may keep small tight clumps,
    but only with a message length below the best 3-component fit's (the criterion prefers
    them: the search is not at fault)."""
    for seed in range(3):
        X, y = _blobs(seed)
        res = gmd(seed, X, 1, K_MAX, reg_covar=1e-2)
        assert res.n_components == 3
        assert adjusted_rand_score(y, res.labels) == 1.0
        default = gmd(seed, X, 1, K_MAX)
        ml3 = GaussianMixture(3, covariance_type="full", n_init=3, random_state=0).fit(X)
        ridge = 1e-6 * np.mean(np.var(X, axis=0))
        L3 = _L_ref(X, ml3.weights_, ml3.means_, ml3.covariances_ + ridge * np.eye(2))
        assert default.objective <= L3 + 1e-6 * abs(L3)
        assert default.objective == pytest.approx(
            _L_ref(X, default.weights, default.centers, default.covariances), rel=1e-5)


# --------------------------------------------------------------------------- invariances


def _never_increases_between_annihilations(seeds):
    """Within a run of sweeps at a fixed number of components L does not increase (float64:
    not at all; float32: up to 1e-5 relative); the forced annihilations raise it."""
    for seed in seeds:
        X, _ = _blobs(seed)
        for data in (X, datasets.load_iris()[0]):
            # 15, not K_MAX: with 20 components a run has fewer fixed-k sweeps than the 20 needed
            res = gmd(seed, data, 1, 15)
            tr, ks = res.objective_trace, res.n_components_trace
            same = ks[1:] == ks[:-1]
            assert same.sum() > 20
            assert np.all(np.diff(tr)[same] <= 0)
            with jax.enable_x64(False):
                r32 = gmd(seed, data, 1, 15)
            tr32, ks32 = r32.objective_trace, r32.n_components_trace
            same32 = ks32[1:] == ks32[:-1]
            assert np.all(np.diff(tr32)[same32] <= 1e-5 * np.abs(tr32[:-1][same32]))


def test_message_length_never_increases_between_annihilations(x64):
    _never_increases_between_annihilations([0])


@pytest.mark.long
def test_message_length_never_increases_between_annihilations_seeds_1_2(x64):
    _never_increases_between_annihilations([1, 2])


@pytest.mark.parametrize("scale", [2.0**-10, 2.0**7])
def test_power_of_two_scale_is_exact(scale):
    X, _ = _blobs(0)
    a = gmd(0, X, 1, K_MAX)
    b = gmd(0, X * scale, 1, K_MAX)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.n_iter == b.n_iter
    np.testing.assert_array_equal(a.n_components_trace, b.n_components_trace)
    np.testing.assert_array_equal(a.centers * scale, b.centers)
    np.testing.assert_array_equal(a.covariances * scale**2, b.covariances)
    shift = len(X) * 2 * math.log(scale)  # log p(sX) = log p(X) - n d log s
    np.testing.assert_allclose(b.objective_trace, a.objective_trace + shift, rtol=1e-12,
                               atol=1e-9)


@pytest.mark.parametrize("scale", [1e-3, 3.7, 1e4])
def test_any_scale_gives_the_same_partition(scale):
    X, _ = _blobs(1)
    a = gmd(0, X, 1, K_MAX, reg_covar=1e-2)
    b = gmd(0, X * scale, 1, K_MAX, reg_covar=1e-2)
    assert a.n_components == b.n_components
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(b.centers, a.centers * scale, rtol=1e-4, atol=1e-5 * scale)


def test_padding_rows_change_nothing(monkeypatch):
    X, _ = _blobs(2, n_per=40)
    padded = gmd(0, X, 1, 8)
    monkeypatch.setattr(G, "_pad_to", lambda n: n)
    plain = gmd(0, X, 1, 8)
    np.testing.assert_array_equal(padded.labels, plain.labels)
    np.testing.assert_array_equal(padded.n_components_trace, plain.n_components_trace)
    np.testing.assert_allclose(padded.objective_trace, plain.objective_trace, rtol=1e-6)


def test_trace_pieces_join_seamlessly(monkeypatch):
    """The driver records the trace in pieces of a fixed buffer: 4-entry pieces give the run
    of the default buffer; ``max_iter`` stops mid-run with ``converged`` False."""
    X, _ = datasets.load_iris()
    whole = gmd(3, X, 1, K_MAX)
    assert whole.converged and len(whole.objective_trace) == whole.n_iter + 1 > 20
    monkeypatch.setattr(G, "_TRACE_LEN", 4)
    pieces = gmd(3, X, 1, K_MAX)
    np.testing.assert_array_equal(pieces.objective_trace, whole.objective_trace)
    np.testing.assert_array_equal(pieces.labels, whole.labels)
    cut = gmd(3, X, 1, K_MAX, max_iter=20)
    assert not cut.converged and cut.n_iter == 20 and len(cut.objective_trace) == 21
    np.testing.assert_array_equal(cut.objective_trace, whole.objective_trace[:21])
    assert np.all(np.isfinite(cut.centers)) and cut.weights.sum() == pytest.approx(1.0, rel=1e-5)


def test_sample_weights_are_repeated_rows(x64):
    X, _ = _blobs(0, n_per=15)
    M = X[[0, 15, 30, 31]]
    w = np.ones(len(X))
    w[:7] = 3.0
    Xr = np.concatenate([X, X[:7], X[:7]])
    a = init_gmd_state(X, M, sample_weight=w)
    b = init_gmd_state(Xr, M)
    step = jax.jit(gmd_step)
    for _ in range(12):
        a, _ = step(a, X, k_min=1, sample_weight=w)
        b, _ = step(b, Xr, k_min=1)
    np.testing.assert_allclose(a.objective_trace[:13], b.objective_trace[:13], rtol=1e-10)
    np.testing.assert_allclose(a.means, b.means, atol=1e-10)


def test_label_order_of_the_initial_means(x64, unpadded):
    """Permuting the initial means changes the order in which CEM^2 visits the components
    (the updates are sequential), not the mixture it converges to (up to the tolerance)."""
    X, _ = _blobs(0, n_per=30)
    M = X[[0, 40, 70, 5]]
    a = gmd(0, X, 2, 4, init=M)
    b = gmd(0, X, 2, 4, init=M[[3, 2, 1, 0]])
    assert a.n_components == b.n_components
    assert adjusted_rand_score(a.labels, b.labels) == 1.0
    assert a.objective == pytest.approx(b.objective, rel=1e-6)


# --------------------------------------------------------------------------- state / step / driver


def test_stepping_by_hand_reproduces_the_driver(x64, unpadded):
    """The jitted step in a Python loop against the driver's while_loop (compiled apart, so
    float64 and a tolerance: float32 runs differ by an ulp here and there)."""
    X, _ = _blobs(1, n_per=40)
    Xs = _unit(X)
    M = Xs[np.random.default_rng(1).choice(len(Xs), 10, replace=False)]
    res = gmd(0, Xs, 2, 10, init=M)
    state = init_gmd_state(Xs, M, max_iter=500)
    step = jax.jit(gmd_step)
    infos = []
    while not state.converged:
        state, info = step(state, Xs, k_min=2)
        infos.append(info)
    assert int(state.n_iter) == res.n_iter
    np.testing.assert_allclose(np.asarray(state.objective_trace)[: res.n_iter + 1],
                               res.objective_trace, rtol=1e-10)
    np.testing.assert_array_equal(np.asarray(state.n_components_trace)[: res.n_iter + 1],
                                  res.n_components_trace)
    assert int(infos[-1].n_components) == int(state.n_components)
    assert sum(int(i.annihilated) for i in infos) == 10 - int(state.n_components)
    # a step on a finished state changes nothing
    again, info = step(state, Xs, k_min=2)
    assert not bool(info.changed) and int(again.n_iter) == int(state.n_iter)


def test_jit_and_eager_agree(x64):
    X, _ = _blobs(0, n_per=20)
    M = X[[0, 1, 20, 40]]
    a = b = init_gmd_state(X, M)
    step = jax.jit(gmd_step)
    for _ in range(3):
        a, ia = gmd_step(a, X, k_min=1)
        b, ib = step(b, X, k_min=1)
        assert bool(ia.changed) == bool(ib.changed)
    np.testing.assert_array_equal(np.asarray(a.active), np.asarray(b.active))
    np.testing.assert_array_equal(np.asarray(a.labels), np.asarray(b.labels))
    np.testing.assert_allclose(np.asarray(a.objective_trace)[:4], np.asarray(b.objective_trace)[:4],
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(a.covariances), np.asarray(b.covariances), atol=1e-12)


def test_initialisations():
    X, _ = datasets.load_iris()
    key = jax.random.PRNGKey(4)
    M = G._initial_means(key, X.astype(np.float32), 20, "random", None)
    assert M.shape == (20, 4) and len(np.unique(M, axis=0)) >= 19  # Iris repeats a few rows
    assert all((X.astype(np.float32) == m).all(1).any() for m in M)
    K = G._initial_means(key, X.astype(np.float32), 20, "kmeans", 3)
    from bayesclust.inference.hard.kmeans import kmeans

    centres = kmeans(jax.random.split(key)[1], X.astype(np.float32), 3).centers
    np.testing.assert_array_equal(K[:3], centres)
    assert all((X.astype(np.float32) == m).all(1).any() for m in K[3:])
    res = gmd(4, X, 3, K_MAX, init="kmeans")
    assert isinstance(res, GMDResult) and res.n_components >= 2


def test_singular_covariances_give_no_nan():
    """Repeated rows and a constant column: covariances are singular without the ridge."""
    rng = np.random.default_rng(0)
    X = np.concatenate([np.repeat(rng.normal(size=(5, 3)), 12, axis=0), rng.normal(size=(30, 3))])
    X[:, 2] = 1.5
    res = gmd(0, X, 1, 15)
    assert np.all(np.isfinite(res.objective_trace))
    assert np.all(np.isfinite(res.covariances)) and np.all(np.isfinite(res.centers))
    assert np.all(np.linalg.eigvalsh(res.covariances.astype(np.float64)) > 0)


def test_exported():
    assert bayesclust.gmd is gmd and bayesclust.GMDResult is GMDResult


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, name", [
    ({"k_min": 1, "k_max": 200}, "k_max"),
    ({"k_min": 0, "k_max": 5}, "k_min"),
    ({"k_min": 6, "k_max": 5}, "k_min"),
    ({"k_min": 1.5, "k_max": 5}, "k_min"),
    ({"k_min": 1, "k_max": 5, "init": "kmeans++"}, "init"),
    ({"k_min": 1, "k_max": 5, "init": np.zeros((4, 2))}, "init"),
    ({"k_min": 1, "k_max": 5, "init": "random", "n_kmeans": 2}, "n_kmeans"),
    ({"k_min": 1, "k_max": 5, "init": "kmeans", "n_kmeans": 6}, "n_kmeans"),
    ({"k_min": 1, "k_max": 5, "tol": 0.0}, "tol"),
    ({"k_min": 1, "k_max": 5, "reg_covar": -1.0}, "reg_covar"),
    ({"k_min": 1, "k_max": 5, "max_iter": 0}, "max_iter"),
])
def test_bad_arguments_name_themselves(kwargs, name):
    X, _ = _blobs(0, n_per=20)
    kwargs = dict(kwargs)
    with pytest.raises((ValueError, TypeError), match=name):
        gmd(0, X, kwargs.pop("k_min"), kwargs.pop("k_max"), **kwargs)


def test_bad_data_names_x():
    with pytest.raises(ValueError, match="X"):
        gmd(0, np.ones((30, 2)), 1, 3)  # no spread
    with pytest.raises(ValueError, match="X"):
        gmd(0, np.random.default_rng(0).normal(size=(7, 4)), 1, 2)  # 7 rows <= N/2 = 7
    with pytest.raises(ValueError, match="X"):
        gmd(0, np.array([[0.0, np.nan], [1.0, 2.0]] * 5), 1, 2)


# --------------------------------------------------------------------------- the DID paper

#: Aidos & Fred (2012), Table 3: Iris, GMD with random initial means.
IRIS_GMD_RAND = (71.33, 5)


def _iris_runs(k_max):
    X, y = datasets.load_iris()
    runs = [gmd(seed, X, 3, k_max) for seed in range(10)]
    ci = np.median([100 * consistency_index(y, r.labels) for r in runs])
    k = np.median([r.n_components for r in runs])
    return ci, k


@pytest.mark.paper
@pytest.mark.xfail(strict=True, reason=(
    "Iris, GMD^rand, k_min = 3, median of seeds 0-9: k_max = 20 -> 4 components, CI 89.7; "
    "30 -> 3.5, CI 93.0; 50 -> 3, CI 95.3; the table: 5 components, CI 71.33 (our 5-component "
    "runs have CI 71.3-83.3). The paper gives neither k_max nor the ridge nor the runs behind "
    "its number (docs/deviations.md#gmd-iris)"))
@pytest.mark.parametrize("k_max", [20, pytest.param(30, marks=pytest.mark.long),
                                   pytest.param(50, marks=pytest.mark.long)])
def test_paper_table_3_iris_gmd_rand(k_max):
    ci, k = _iris_runs(k_max)
    assert abs(ci - IRIS_GMD_RAND[0]) <= 4 and abs(k - IRIS_GMD_RAND[1]) <= 1
