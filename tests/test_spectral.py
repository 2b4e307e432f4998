"""Kernel DP-means, spectral DP-means and the penalised normalised cut.

References used here never come from the code under test: bayesclust.dp_means
(an independent implementation of Algorithm 1), slow per-point loops written
from the pseudo-code (docs/deviations.md#kernel-dpmeans-semantics), explicit dense kernels, brute-force enumeration of
partitions, NumPy eigenvalues and scikit-learn.

Note on "jit vs eager": the functions tested here are host NumPy / SciPy code
(sparse products, LAPACK / ARPACK); no JAX program of theirs is jitted, so
there is no jit/eager pair to compare.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from bayesclust import (
    PenalizedNormalizedCut,
    SpectralDPMeans,
    dp_means,
    farthest_first_lambda,
    kernel_dp_means,
    penalized_ncut,
    spectral_dp_means,
)
from bayesclust.graphs import knn_gaussian_affinity
from bayesclust.inference.hard.kernel_dp_means import (
    KernelDPMeansInfo,
    KernelDPMeansState,
    init_kernel_dp_means_state,
    kernel_dp_means_objective,
    kernel_dp_means_step,
)
from bayesclust.inference.hard.penalized_ncut import (
    PenalizedNCutInfo,
    PenalizedNCutState,
    init_penalized_ncut_state,
    ncut_sigma_psd,
    normalized_cut,
    penalized_ncut_step,
)
from bayesclust.inference.hard.spectral_dp_means import thresholded_eigenvectors
from bayesclust.metrics import nmi, set_partitions

from ._reference import documented_attributes

# --------------------------------------------------------------------------- #
# References (slow loops, straight from the definitions)
# --------------------------------------------------------------------------- #


def slow_cut(A, labels):
    """sum_c links(V_c, V \\ V_c) / deg(V_c), by loops over nodes."""
    n = len(labels)
    total = 0.0
    for c in np.unique(labels):
        links_out = sum(A[i, j] for i in range(n) for j in range(n) if labels[i] == c and labels[j] != c)
        deg = sum(A[i, j] for i in range(n) for j in range(n) if labels[i] == c)
        total += links_out / deg
    return total


def slow_weighted_kernel_kmeans(K, w, labels):
    """J(K, W) = sum_c sum_{i in c} w_i dist(i, c), dist from its definition."""
    J = 0.0
    for c in np.unique(labels):
        members = np.flatnonzero(labels == c)
        s = w[members].sum()
        for i in members:
            d = K[i, i]
            d -= 2.0 * sum(w[j] * K[i, j] for j in members) / s
            d += sum(w[j] * w[l] * K[j, l] for j in members for l in members) / s**2
            J += w[i] * d
    return J


def ncut_kernel(A, sigma):
    deg = A.sum(1)
    Dinv = np.diag(1.0 / deg)
    return sigma * Dinv + Dinv @ A @ Dinv, deg


def slow_kernel_dp_means(K, lam, w, init=None, max_iter=100):
    """Weighted kernel DP-means as a per-point loop (frozen reference memberships: docs/deviations.md#kernel-dpmeans-semantics)."""
    n = K.shape[0]
    z = np.zeros(n, int) if init is None else np.unique(init, return_inverse=True)[1]

    def objective(z):
        return slow_weighted_kernel_kmeans(K, w, z) + lam * len(np.unique(z))

    trace = [objective(z)]
    for _ in range(max_iter):
        ref = [np.flatnonzero(z == c) for c in range(z.max() + 1)]
        seeds = []  # new clusters: index of the seed point
        new_z = z.copy()
        for i in range(n):
            dists = []
            for R in ref:
                s = w[R].sum()
                d = K[i, i] - 2 * (w[R] @ K[i, R]) / s + (w[R] @ K[np.ix_(R, R)] @ w[R]) / s**2
                dists.append(d)
            for sd in seeds:
                dists.append(K[i, i] - 2 * K[i, sd] + K[sd, sd])
            c = int(np.argmin(dists))
            if w[i] * dists[c] > lam:
                seeds.append(i)
                new_z[i] = len(ref) + len(seeds) - 1
            else:
                new_z[i] = c
        new_z = np.unique(new_z, return_inverse=True)[1]
        J = objective(new_z)
        unchanged = np.array_equal(new_z, z)
        stalled = J >= trace[-1] - 1e-12 * max(1.0, abs(trace[-1]))
        z = new_z
        trace.append(J)
        if unchanged or stalled:
            break
    return z, np.array(trace)


def rbf(X, gamma):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def sbm(rng, sizes, p_in, p_out):
    z = np.repeat(np.arange(len(sizes)), sizes)
    P = np.where(z[:, None] == z[None, :], p_in, p_out)
    U = np.triu(rng.random(P.shape) < P, 1)
    return (U | U.T).astype(float), z


def random_graph(rng, n, p=0.5, self_loops=False):
    A = np.triu(rng.random((n, n)) * (rng.random((n, n)) < p), 1)
    A = A + A.T
    A[np.arange(n - 1), np.arange(1, n)] += 0.1  # a path keeps every degree > 0
    A[np.arange(1, n), np.arange(n - 1)] += 0.1
    if self_loops:
        A[np.diag_indices(n)] = rng.random(n)
    return A


# --------------------------------------------------------------------------- #
# 1. Toy cases computed by hand
# --------------------------------------------------------------------------- #


def test_kernel_dp_means_toy_by_hand():
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    K = X @ X.T
    res = kernel_dp_means(K, lam=4.0)
    # pass 1: mean 5.5; squared distances 30.25, 20.25 > 4 -> point 0 opens, point 1
    # is 1 from it; points 2, 3 are 20.25 / 30.25 from the old mean, 100 / 121 from
    # x_0 -> point 2 opens, point 3 joins it.  J = 0.5 + 0.5 + 2 * 4 = 9.
    assert res.labels.tolist() == [0, 0, 1, 1]
    assert res.objective == pytest.approx(9.0)
    assert res.objective_trace[0] == pytest.approx(101.0 + 4.0)  # sum (x - 5.5)^2 + lam
    assert kernel_dp_means(K, lam=1e6).n_clusters == 1
    assert kernel_dp_means(K, lam=1e-3).n_clusters == 4


def test_penalized_ncut_toy_by_hand():
    B = np.ones((4, 4)) - np.eye(4)
    A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    A[3, 4] = A[4, 3] = 1.0
    # each side: degree 4 * 3 + 1 = 13, one edge leaves: Cut = 2 / 13
    assert normalized_cut(A, [0, 0, 0, 0, 1, 1, 1, 1]) == pytest.approx(2 / 13)
    res = penalized_ncut(A, lam_prime=-0.5)
    assert res.labels.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert res.objective == pytest.approx(2 / 13 - 1.0)
    # lam' >= 0: the single cluster is optimal (docs/deviations.md#penalised-ncut-lambda-range)
    with pytest.warns(UserWarning, match="outside \\(-1, 0\\): the single cluster"):
        assert penalized_ncut(A, lam_prime=0.1).n_clusters == 1
    # Algorithm 1's one-cluster start is a fixed point for lam' > -1 (docs/deviations.md#penalised-ncut-start)
    assert penalized_ncut(A, lam_prime=-0.5, init="single", merge=False).n_clusters == 1


def test_spectral_dp_means_toy():
    K = np.kron(np.eye(3), np.ones((4, 4)))  # eigenvalues 4, 4, 4, 0 x 9
    res = spectral_dp_means(K, eigenvalue_threshold=2.0)
    assert res.n_clusters == 3
    assert nmi(np.repeat(np.arange(3), 4), res.labels) == pytest.approx(1.0)
    assert res.relaxed_value == pytest.approx(3 * (4 - 2.0))
    assert spectral_dp_means(K, eigenvalue_threshold=4.0).n_clusters == 1  # strict ">": no eigenvalue above 4


# --------------------------------------------------------------------------- #
# 2. References
# --------------------------------------------------------------------------- #


def _linear_kernel_equals_dp_means(seeds):
    """K = X X^T, unit weights: the same partitions, iterations and objectives as dp_means."""
    n_cases = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        d = int(rng.integers(1, 4))
        X = rng.normal(size=(40, d)) * rng.uniform(0.5, 3.0) + 5.0 * rng.normal(size=d)
        for k in (1, 3, 6):
            lam = farthest_first_lambda(X, k) * rng.uniform(0.6, 1.4)
            a = dp_means(X, lam)
            b = kernel_dp_means(X @ X.T, lam)
            assert np.array_equal(a.labels, b.labels), (seed, k)
            assert a.n_iter == b.n_iter
            np.testing.assert_allclose(b.objective_trace, a.objective_trace, rtol=1e-9)
            n_cases += 1
    assert n_cases == 3 * len(seeds)


def test_linear_kernel_equals_dp_means(x64):
    _linear_kernel_equals_dp_means([0, 1, 11])  # d = 3, 2, 1


@pytest.mark.long
def test_linear_kernel_equals_dp_means_seeds_0_to_11(x64):
    _linear_kernel_equals_dp_means(range(12))


def test_kernel_dp_means_matches_slow_loop(x64):
    """RBF kernel, random positive weights, random starts: the per-point loop (frozen memberships)."""
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(18, 2)) + np.repeat(rng.normal(size=(3, 2)) * 3, 6, axis=0)
        K = rbf(X, 0.5)
        w = rng.uniform(0.5, 2.0, size=18)
        lam = rng.uniform(0.3, 1.5)
        init = rng.integers(0, 4, size=18) if seed % 2 else None
        z_ref, trace_ref = slow_kernel_dp_means(K, lam, w, init)
        res = kernel_dp_means(K, lam, sample_weight=w, init=init)
        assert np.array_equal(res.labels, z_ref)
        np.testing.assert_allclose(res.objective_trace, trace_ref, rtol=1e-10, atol=1e-10)
        assert res.objective == pytest.approx(kernel_dp_means_objective(K, z_ref, lam, w), rel=1e-10)


def test_theorem_5_3_identity():
    """J(K, W) = sigma n + tr(D^-1/2 A D^-1/2) - (sigma + 1) k + Cut(A) on random graphs."""
    rng = np.random.default_rng(1)
    for trial in range(12):
        n = int(rng.integers(5, 10))
        A = random_graph(rng, n, self_loops=trial % 2 == 1)
        sigma = float(rng.uniform(0.0, 2.0))
        labels = rng.integers(0, int(rng.integers(1, 5)), size=n)
        labels = np.unique(labels, return_inverse=True)[1]
        k = labels.max() + 1
        K, deg = ncut_kernel(A, sigma)
        J = slow_weighted_kernel_kmeans(K, deg, labels)
        cut = slow_cut(A, labels)
        rhs = sigma * n + np.trace(A / np.sqrt(np.outer(deg, deg))) - (sigma + 1) * k + cut
        assert J == pytest.approx(rhs, rel=1e-12, abs=1e-12)
        assert normalized_cut(A, labels) == pytest.approx(cut, rel=1e-12, abs=1e-14)
        assert normalized_cut(sp.csr_matrix(A), labels) == pytest.approx(cut, rel=1e-12, abs=1e-14)
        assert kernel_dp_means_objective(K, labels, 0.0, deg) == pytest.approx(J, rel=1e-10)


@pytest.mark.filterwarnings("ignore:lam_prime=.*outside:UserWarning")  # below -1 on purpose
def test_sparse_ncut_pass_equals_dense_weighted_kernel_dp_means():
    """The O(|E|) graph distances give the passes of kernel DP-means on the explicit K, W = D."""
    rng = np.random.default_rng(5)
    n_new_clusters = 0
    for trial in range(8):
        n = 30
        A = random_graph(rng, n, p=0.2, self_loops=trial % 3 == 0)
        init = rng.integers(0, 6, size=n)
        lam_prime = float(rng.uniform(-0.98, -0.6))
        if trial % 2:  # below -1: many candidates, some blocked by earlier seeds
            lam_prime = -1.0 - float(rng.uniform(0.3, 0.9)) * ncut_sigma_psd(A)
        init = np.zeros(n, int) if trial == 7 else init
        graph = penalized_ncut(sp.csr_matrix(A), lam_prime, init=init, merge=False)
        K, deg = ncut_kernel(A, graph.sigma)
        dense = kernel_dp_means(K, lam_prime + graph.sigma + 1.0, sample_weight=deg, init=init)
        assert np.array_equal(graph.labels, dense.labels)
        C = graph.sigma * n + np.sum(np.diag(A) / deg)  # sigma n + tr(D^-1/2 A D^-1/2)
        np.testing.assert_allclose(dense.objective_trace - C, graph.objective_trace, atol=1e-9)
        n_new_clusters += graph.n_clusters > len(np.unique(init))
    assert n_new_clusters >= 4  # the new-cluster path was exercised


def test_spectral_relaxation_bounds_every_partition():
    """max over normalised indicators of tr(Y^T (K - lam I) Y) <= sum (e - lam)_+ (enumeration, n = 7)."""
    rng = np.random.default_rng(2)
    for trial in range(3):
        X = rng.normal(size=(7, 3))
        K = rbf(X, 0.7) if trial else X @ X.T
        lam = float(rng.uniform(0.2, 1.0))
        e = np.linalg.eigvalsh(K)
        bound = np.sum(np.maximum(e - lam, 0.0))
        res = spectral_dp_means(K, lam)
        assert res.relaxed_value == pytest.approx(bound, rel=1e-10)
        best = -np.inf
        for z in set_partitions(7):
            Z = np.eye(z.max() + 1)[z]
            Y = Z / np.sqrt(Z.sum(0))
            value = np.trace(Y.T @ (K - lam * np.eye(7)) @ Y)
            assert value <= bound + 1e-10
            # Lemma 5.1: J_DP = tr K - value
            assert kernel_dp_means_objective(K, z, lam) == pytest.approx(np.trace(K) - value, abs=1e-9)
            best = max(best, value)
        assert best <= bound + 1e-10
        assert res.lower_bound == pytest.approx(np.trace(K) - bound)


def test_thresholded_eigenvectors_arpack_equals_dense():
    rng = np.random.default_rng(3)
    A, _ = sbm(rng, [40, 40, 40], 0.3, 0.02)
    deg = A.sum(1)
    N = sp.csr_matrix(A / np.sqrt(np.outer(deg, deg)))
    ref = np.sort(np.linalg.eigvalsh(N.toarray()))[::-1]
    ref = ref[ref > 0.6]
    v_dense, U_dense = thresholded_eigenvectors(N, 0.6, eigen_solver="dense")
    v_arp, U_arp = thresholded_eigenvectors(N, 0.6, eigen_solver="arpack")
    np.testing.assert_allclose(v_dense, ref, atol=1e-10)
    np.testing.assert_allclose(v_arp, ref, atol=1e-8)
    # same subspace
    np.testing.assert_allclose(U_dense @ U_dense.T, U_arp @ U_arp.T, atol=1e-6)


def test_knn_gaussian_affinity_matches_sklearn():
    from sklearn.neighbors import kneighbors_graph

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    G = kneighbors_graph(X, 5, mode="distance").tocsr()
    G = G.maximum(G.T)
    A = knn_gaussian_affinity(X, 5, gamma=0.3)
    assert (A != A.T).nnz == 0
    np.testing.assert_array_equal(A.toarray() > 0, G.toarray() > 0)
    np.testing.assert_allclose(A.toarray(), np.where(G.toarray() > 0, np.exp(-0.3 * G.toarray() ** 2), 0))


# --------------------------------------------------------------------------- #
# 3. Invariances and monotonicity
# --------------------------------------------------------------------------- #


def test_kernel_dp_means_trace_monotone_and_invariances(x64):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(50, 2)) + np.repeat(rng.normal(size=(5, 2)) * 4, 10, axis=0)
    K = rbf(X, 0.3)
    w = rng.uniform(0.2, 3.0, size=50)
    res = kernel_dp_means(K, 0.8, sample_weight=w)
    assert np.all(np.diff(res.objective_trace) <= 1e-12)
    assert res.n_rejected == 0 and res.converged
    # scaling K and lam together; translating the features of a linear kernel
    same = kernel_dp_means(3.0 * K, 2.4, sample_weight=w)
    assert np.array_equal(same.labels, res.labels)
    lin = kernel_dp_means(X @ X.T, 4.0)
    Xs = X + np.array([100.0, -50.0])
    assert np.array_equal(kernel_dp_means(Xs @ Xs.T, 4.0).labels, lin.labels)


def test_penalized_ncut_monotone_node_permutation_invariant():
    rng = np.random.default_rng(8)
    A, z = sbm(rng, [30, 30, 30], 0.35, 0.03)
    perm = rng.permutation(90)
    for sigma in ("psd", 0.0):
        res = penalized_ncut(A, -0.8, sigma=sigma)
        assert np.all(np.diff(res.objective_trace) <= 1e-12)
        assert res.objective == pytest.approx(normalized_cut(A, res.labels) - 0.8 * res.n_clusters)
        res_p = penalized_ncut(A[np.ix_(perm, perm)], -0.8, sigma=sigma)
        assert nmi(res.labels[perm], res_p.labels) == pytest.approx(1.0)
    # the PSD shift never needs a rejection, and it is the smallest PSD shift
    res = penalized_ncut(A, -0.8, init=rng.integers(0, 12, size=90), merge=False)
    assert res.n_rejected == 0
    K, _ = ncut_kernel(A, res.sigma)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    K, _ = ncut_kernel(A, 0.95 * ncut_sigma_psd(A))
    assert np.linalg.eigvalsh(K).min() < 0


# --------------------------------------------------------------------------- #
# State / init / step
# --------------------------------------------------------------------------- #


def _step_by_hand(state, step, max_iter=100, **kw):
    infos = []
    while state.n_iter < max_iter and not state.converged:
        before = state.labels
        state, info = step(state, **kw)
        assert info.objective == state.objective
        assert info.changed == (not np.array_equal(before, state.labels))
        infos.append(info)
    return state, infos


@pytest.mark.parametrize("case", ["rbf", "weighted", "indefinite", "max_iter"])
def test_init_and_step_by_hand_reproduce_kernel_dp_means(case):
    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 2)) + np.repeat(rng.normal(size=(4, 2)) * 3, 15, axis=0)
    K = rbf(X, 0.5) - (0.4 * np.eye(60) if case == "indefinite" else 0.0)
    w = rng.uniform(0.5, 2.0, 60) if case == "weighted" else None
    init = np.arange(60) % 20 if case == "indefinite" else None
    max_iter = 1 if case == "max_iter" else 100
    res = kernel_dp_means(K, 0.6, sample_weight=w, init=init, max_iter=max_iter)
    state = init_kernel_dp_means_state(K, 0.6, sample_weight=w, init=init)
    state, infos = _step_by_hand(state, kernel_dp_means_step, max_iter)
    assert (res.n_rejected > 0) == (case == "indefinite") == any(i.rejected for i in infos)
    assert res.converged == (case != "max_iter")
    for name in ("labels", "n_clusters", "objective", "objective_trace", "n_iter", "converged",
                 "n_rejected"):
        np.testing.assert_array_equal(getattr(state, name), getattr(res, name), err_msg=name)


@pytest.mark.parametrize("merge", [True, False])
def test_init_and_step_by_hand_reproduce_penalized_ncut(merge):
    rng = np.random.default_rng(4)
    A, _ = sbm(rng, [20, 25, 30], 0.35, 0.05)
    init = rng.integers(0, 10, 75)
    res = penalized_ncut(A, -0.6, sigma=0.0, init=init, merge=merge)
    state = init_penalized_ncut_state(A, -0.6, sigma=0.0, init=init)
    assert isinstance(state, PenalizedNCutState)
    np.testing.assert_array_equal(state.labels, res.init_labels)
    state, infos = _step_by_hand(state, penalized_ncut_step, merge=merge)
    assert any(i.merged for i in infos) == merge  # merges, and passes after them, are covered
    assert any(i.rejected for i in infos)
    for name in ("labels", "n_clusters", "objective", "objective_trace", "n_iter", "converged",
                 "n_rejected"):
        np.testing.assert_array_equal(getattr(state, name), getattr(res, name), err_msg=name)
    assert (state.kernel.sigma, state.kernel.lam) == (res.sigma, res.lam)


def test_steps_leave_their_input_state_unchanged():
    rng = np.random.default_rng(4)
    A, _ = sbm(rng, [20, 25, 30], 0.35, 0.05)
    state = init_penalized_ncut_state(A, -0.6, sigma=0.0, init=rng.integers(0, 10, 75))
    saved = state.labels.copy(), state.objective_trace.copy()
    new, info = penalized_ncut_step(state)
    assert info.changed and new.n_iter == 1 and state.n_iter == 0
    np.testing.assert_array_equal(state.labels, saved[0])
    np.testing.assert_array_equal(state.objective_trace, saved[1])
    np.testing.assert_array_equal(penalized_ncut_step(state)[0].labels, new.labels)
    K = rbf(rng.normal(size=(30, 2)), 0.5)
    state = init_kernel_dp_means_state(K, 0.3)
    saved = state.labels.copy()
    new, info = kernel_dp_means_step(state)
    assert info.changed
    np.testing.assert_array_equal(state.labels, saved)


def test_state_fields_are_the_documented_ones():
    assert list(KernelDPMeansState._fields) == documented_attributes(KernelDPMeansState)
    assert list(KernelDPMeansInfo._fields) == documented_attributes(KernelDPMeansInfo)
    assert list(PenalizedNCutInfo._fields) == documented_attributes(PenalizedNCutInfo)
    assert PenalizedNCutState._fields == KernelDPMeansState._fields
    X = np.random.default_rng(5).normal(size=(20, 2))
    state = init_kernel_dp_means_state(rbf(X, 0.5), 0.4, init=np.arange(20) % 3 * 7)
    assert state.labels.dtype == np.int64 and state.labels.tolist() == (np.arange(20) % 3).tolist()
    assert state.n_clusters == 3 and state.n_iter == 0 and state.n_rejected == 0
    assert not state.converged
    np.testing.assert_array_equal(state.objective_trace, [state.objective])
    assert state.objective == pytest.approx(
        kernel_dp_means_objective(rbf(X, 0.5), state.labels, 0.4), rel=1e-12)
    state, _ = kernel_dp_means_step(state)
    assert state.objective_trace.shape == (2,) and state.n_iter == 1
    assert state.objective == pytest.approx(
        kernel_dp_means_objective(rbf(X, 0.5), state.labels, 0.4), rel=1e-12)
    A = _two_cliques()
    ncut = init_penalized_ncut_state(A, -0.5, init="single")
    ncut, _ = penalized_ncut_step(ncut)
    assert type(ncut) is PenalizedNCutState
    assert ncut.objective == pytest.approx(normalized_cut(A, ncut.labels) - 0.5 * ncut.n_clusters)


# --------------------------------------------------------------------------- #
# 4. Planted communities, against scikit-learn's SpectralClustering given k
# --------------------------------------------------------------------------- #


def test_sbm_recovers_planted_k_over_a_range_of_lam_prime():
    from sklearn.cluster import SpectralClustering

    rng = np.random.default_rng(0)
    A, z = sbm(rng, [50, 50, 50, 50], 0.3, 0.02)
    ref = SpectralClustering(4, affinity="precomputed", random_state=0).fit(A)
    nmi_ref = nmi(z, ref.labels_)
    for lam_prime in (-0.3, -0.4, -0.5, -0.6, -0.7):
        res = penalized_ncut(sp.csr_matrix(A), lam_prime)
        assert res.n_clusters == 4, lam_prime
        assert nmi(z, res.labels) >= nmi_ref - 0.02
        assert nmi(z, res.labels) > 0.95
    # far outside the range the objective itself prefers another k
    assert penalized_ncut(A, -0.05).n_clusters == 1


@pytest.mark.parametrize("name", ["moons", "circles"])
def test_knn_graph_recovers_two_clusters(name):
    from sklearn.cluster import SpectralClustering
    from sklearn.datasets import make_circles, make_moons

    if name == "moons":
        X, y = make_moons(300, noise=0.06, random_state=0)
    else:
        X, y = make_circles(300, noise=0.04, factor=0.4, random_state=0)
    A = knn_gaussian_affinity(X, 10)
    ref = SpectralClustering(2, affinity="precomputed", random_state=0).fit(A)
    nmi_ref = nmi(y, ref.labels_)
    for lam_prime in (-0.002, -0.005, -0.01, -0.02):
        res = penalized_ncut(A, lam_prime)
        assert res.n_clusters == 2, lam_prime
        assert nmi(y, res.labels) >= nmi_ref - 0.02
    est = PenalizedNormalizedCut(lam_prime=-0.005, n_neighbors=10).fit(X)
    assert est.n_clusters_ == 2 and nmi(y, est.labels_) >= nmi_ref - 0.02


# --------------------------------------------------------------------------- #
# 5. Estimators
# --------------------------------------------------------------------------- #


@parametrize_with_checks([SpectralDPMeans(), PenalizedNormalizedCut()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_estimators_precomputed_and_features():
    rng = np.random.default_rng(9)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.repeat(centers, 20, axis=0) + 0.4 * rng.normal(size=(60, 2))
    y = np.repeat(np.arange(3), 20)
    est = SpectralDPMeans(eigenvalue_threshold=6.0, affinity="rbf", gamma=0.5).fit(X)  # eigenvalues 16.6, 15.3, 14.9, 3.4, ...
    assert est.n_clusters_ == 3 and nmi(y, est.labels_) == pytest.approx(1.0)
    assert np.all(est.eigenvalues_ > 6.0)
    K = rbf(X, 0.5)
    pre = SpectralDPMeans(eigenvalue_threshold=6.0, affinity="precomputed").fit(sp.csr_matrix(K))
    assert nmi(est.labels_, pre.labels_) == pytest.approx(1.0)
    A = knn_gaussian_affinity(X, 8)
    a = PenalizedNormalizedCut(lam_prime=-0.05, affinity="precomputed").fit(A)
    b = PenalizedNormalizedCut(lam_prime=-0.05, n_neighbors=8).fit(X)
    assert a.n_clusters_ == 3 and np.array_equal(a.labels_, b.labels_)
    assert np.array_equal(b.fit_predict(X), b.labels_)


# --------------------------------------------------------------------------- #
# 6. Bad input
# --------------------------------------------------------------------------- #


def _two_cliques():
    B = np.ones((3, 3)) - np.eye(3)
    A = np.block([[B, np.zeros((3, 3))], [np.zeros((3, 3)), B]])
    A[2, 3] = A[3, 2] = 1.0
    return A


def test_bad_graph_non_square():
    with pytest.raises(ValueError, match="A must be a square"):
        penalized_ncut(np.ones((3, 4)), -0.5)
    with pytest.raises(ValueError, match="A must be a square"):
        penalized_ncut(sp.csr_matrix(np.ones((3, 4))), -0.5)
    with pytest.raises(ValueError, match="K must be a square"):
        kernel_dp_means(np.ones((3, 4)), 1.0)
    with pytest.raises(ValueError, match="square"):
        PenalizedNormalizedCut(affinity="precomputed").fit(np.ones((3, 4)))


def test_bad_graph_non_symmetric():
    A = _two_cliques()
    A[0, 1] = 2.0
    with pytest.raises(ValueError, match="A must be symmetric"):
        penalized_ncut(A, -0.5)
    with pytest.raises(ValueError, match="A must be symmetric"):
        penalized_ncut(sp.csr_matrix(A), -0.5)
    with pytest.raises(ValueError, match="K must be symmetric"):
        kernel_dp_means(A, 1.0)
    with pytest.raises(ValueError, match="K must be symmetric"):
        spectral_dp_means(A, 1.0)


def test_bad_graph_negative_weights():
    A = _two_cliques()
    A[0, 5] = A[5, 0] = -0.5
    with pytest.raises(ValueError, match="A must have non-negative weights"):
        penalized_ncut(A, -0.5)
    with pytest.raises(ValueError, match="A must have non-negative weights"):
        normalized_cut(sp.csr_matrix(A), [0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        kernel_dp_means(np.eye(3), 1.0, sample_weight=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="sample_weight must be strictly positive"):
        kernel_dp_means(np.eye(3), 1.0, sample_weight=[1.0, 0.0, 1.0])


def test_bad_graph_isolated_nodes():
    A = np.zeros((7, 7))
    A[:6, :6] = _two_cliques()
    with pytest.raises(ValueError, match="A has 1 isolated node.*node 6"):
        penalized_ncut(A, -0.5)
    # the documented handling: a self-loop gives the node a degree, and it is its own cluster
    A[6, 6] = 1.0
    res = penalized_ncut(A, -0.5)
    assert res.labels[6] not in res.labels[:6]
    assert res.n_clusters == 3


def test_bad_scalars():
    A = _two_cliques()
    with pytest.raises(ValueError, match="lam_prime"):
        penalized_ncut(A, np.inf)
    with pytest.raises(TypeError, match="lam_prime"):
        penalized_ncut(A, "a lot")
    with pytest.raises(ValueError, match="sigma"):
        penalized_ncut(A, -0.5, sigma=-1.0)
    with pytest.raises(ValueError, match="lam_prime \\+ sigma \\+ 1 must be > 0"):
        penalized_ncut(A, -2.5, sigma=1.0)
    with pytest.raises(ValueError, match="init"):
        penalized_ncut(A, -0.5, init="kmeans")
    with pytest.raises(ValueError, match="lam"):
        kernel_dp_means(np.eye(3), 0.0)
    with pytest.raises(ValueError, match="A contains NaN"):
        penalized_ncut(sp.csr_matrix(np.where(A > 0, np.nan, 0.0)), -0.5)


def test_large_sparse_graph_uses_iterative_solvers():
    """n > 500: ARPACK for the spectral start and for the PSD shift; same answers as dense."""
    rng = np.random.default_rng(11)
    A, z = sbm(rng, [150] * 4, 0.08, 0.005)
    A = sp.csr_matrix(A)
    assert A.shape[0] > 500
    deg = np.asarray(A.sum(1)).ravel()
    N = (A / np.sqrt(np.outer(deg, deg))).toarray()
    sigma_exact = max(0.0, -np.linalg.eigvalsh(N).min())
    sigma = ncut_sigma_psd(A)
    assert sigma_exact <= sigma <= sigma_exact + 2e-3
    res = penalized_ncut(A, -0.4)
    dense = penalized_ncut(A, -0.4, eigen_solver="dense", sigma=sigma)
    assert res.n_clusters == 4 and nmi(z, res.labels) > 0.95
    assert nmi(res.labels, dense.labels) == pytest.approx(1.0)
