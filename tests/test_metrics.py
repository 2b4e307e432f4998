"""Tests of bayesclust.metrics.

References: scikit-learn / scipy for the scores, brute-force enumeration for the Hungarian
matching, plain Python loops for the vectorised co-clustering matrix and objectives.
"""

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.metrics.cluster import contingency_matrix as sk_contingency

from bayesclust.metrics import (
    accuracy,
    ari,
    co_clustering_matrix,
    consistency_index,
    contingency_matrix,
    dp_means_objective,
    entropy,
    match_labels,
    mutual_info,
    n_clusters,
    nmi,
    sse,
)

METHODS = ("arithmetic", "geometric", "min", "max")
ATOL = 1e-12  # float64 round-off on sums of at most a few hundred terms


# --------------------------------------------------------------------------- helpers


def random_pair(rng):
    """Two labellings with random sizes, numbers of clusters and (non-contiguous) values."""
    n = int(rng.integers(1, 80))
    k_true, k_pred = int(rng.integers(1, 8)), int(rng.integers(1, 12))
    a = rng.integers(0, k_true, n)
    b = rng.integers(0, k_pred, n)
    if rng.random() < 0.3:  # correlated pair
        b = np.where(rng.random(n) < 0.7, a, b)
    # map to arbitrary integer values, possibly negative and far apart
    a = rng.choice(np.arange(-50, 50), size=k_true, replace=False)[a]
    b = (rng.choice(np.arange(-1000, 1000), size=max(k_true, k_pred), replace=False) * 7)[b]
    return a, b


def edge_pairs():
    n = 12
    ar = np.arange(n)
    return {
        "both-constant": (np.zeros(n, int), np.full(n, 3)),
        "true-constant": (np.zeros(n, int), ar % 3),
        "pred-constant": (ar % 3, np.full(n, -4)),
        "both-singletons": (ar, ar[::-1] - 100),
        "constant-vs-singletons": (np.zeros(n, int), ar),
        "singletons-vs-constant": (ar, np.zeros(n, int)),
        "identical": (ar % 4, (ar % 4) * 10 - 7),
        "n=1": (np.array([5]), np.array([-2])),
        "n=2-split": (np.array([0, 0]), np.array([0, 1])),
        "independent": (np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])),
        "more-classes": (ar % 6, ar % 2),
        "more-clusters": (ar % 2, ar % 6),
    }


def brute_force_accuracy(a, b):
    table = sk_contingency(a, b)
    k = max(table.shape)
    square = np.zeros((k, k), dtype=int)
    square[: table.shape[0], : table.shape[1]] = table
    best = max(square[np.arange(k), list(p)].sum() for p in itertools.permutations(range(k)))
    return best / len(a)


def sk_entropy(labels):
    return scipy.stats.entropy(np.unique(labels, return_counts=True)[1])


def check_all_vs_sklearn(a, b):
    np.testing.assert_array_equal(contingency_matrix(a, b), sk_contingency(a, b))
    assert mutual_info(a, b) == pytest.approx(skm.mutual_info_score(a, b), abs=ATOL)
    assert entropy(a) == pytest.approx(sk_entropy(a), abs=ATOL)
    for m in METHODS:
        ref = skm.normalized_mutual_info_score(a, b, average_method=m)
        assert nmi(a, b, m) == pytest.approx(ref, abs=1e-10), m
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=ATOL)


# --------------------------------------------------------------------------- vs scikit-learn


def test_random_pairs_match_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(300):
        check_all_vs_sklearn(*random_pair(rng))


@pytest.mark.parametrize("case", list(edge_pairs()))
def test_edge_cases_match_sklearn(case):
    check_all_vs_sklearn(*edge_pairs()[case])


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(-3, 3), min_size=n, max_size=n),
            st.lists(st.integers(-1000, 1000), min_size=n, max_size=n),
        )
    )
)
def test_hypothesis_pairs_match_sklearn(pair):
    a, b = (np.array(x) for x in pair)
    check_all_vs_sklearn(a, b)


def test_sklearn_edge_conventions_explicitly():
    e = edge_pairs()
    assert nmi(*e["both-constant"]) == 1.0
    for m in METHODS:
        assert nmi(*e["true-constant"], average_method=m) == 0.0
        assert nmi(*e["pred-constant"], average_method=m) == 0.0
        assert nmi(*e["both-singletons"], average_method=m) == pytest.approx(1.0)
    assert nmi(*e["n=1"]) == 1.0
    assert ari(*e["both-constant"]) == 1.0
    assert ari(*e["both-singletons"]) == 1.0
    assert ari(*e["constant-vs-singletons"]) == 0.0
    assert ari(*e["n=1"]) == 1.0
    assert mutual_info(*e["independent"]) == 0.0
    assert nmi(*e["independent"]) == 0.0


def test_hand_values():
    assert entropy([0, 0, 1, 1]) == pytest.approx(np.log(2))
    assert entropy([7, 7, 7]) == 0.0
    assert mutual_info([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(np.log(2))
    np.testing.assert_array_equal(contingency_matrix([0, 0, 1, 1], [5, -1, -1, -1]), [[1, 1], [2, 0]])
    # ARI of [0,0,1,1] vs [0,0,0,1]: tp=2, fp=4, fn=2, tn=4 (ordered pairs) -> 0
    assert ari([0, 0, 1, 1], [0, 0, 0, 1]) == pytest.approx(0.0)


def test_nmi_rejects_unknown_average_method():
    with pytest.raises(ValueError, match="average_method"):
        nmi([0, 1], [0, 1], average_method="harmonic")


# --------------------------------------------------------------------------- accuracy / CI


def test_accuracy_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(1, 40))
        a = rng.integers(0, int(rng.integers(1, 6)), n) * 3 - 5
        b = rng.integers(0, int(rng.integers(1, 6)), n) - 2
        assert accuracy(a, b) == pytest.approx(brute_force_accuracy(a, b), abs=ATOL)
        assert consistency_index(a, b) == accuracy(a, b)


def test_accuracy_hand_values():
    assert accuracy([0, 0, 1, 1, 1], [2, 2, 0, 0, 1]) == pytest.approx(0.8)
    assert accuracy([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
    assert accuracy([0, 0, 0, 0], [0, 1, 2, 3]) == 0.25  # extra clusters count as errors
    assert accuracy([0, 1, 2, 3], [0, 0, 0, 0]) == 0.25
    assert consistency_index([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]) == pytest.approx(5 / 6)


def test_match_labels():
    out = match_labels([0, 0, 1, 1, 1], [5, 5, 3, 3, 9])
    np.testing.assert_array_equal(out, [0, 0, 1, 1, 2])
    assert out.dtype == np.int64
    # non-contiguous reference ids, two unmatched clusters -> fresh ids after max(ref) = 10
    ref = np.array([10, 10, -3, -3, -3, 10])
    lab = np.array([4, 4, 1, 1, 7, 9])
    np.testing.assert_array_equal(match_labels(ref, lab), [10, 10, -3, -3, 11, 12])


def test_match_labels_random_properties():
    rng = np.random.default_rng(2)
    for _ in range(100):
        ref, lab = random_pair(rng)
        out = match_labels(ref, lab)
        # same partition, accuracy achieved on the diagonal
        assert skm.adjusted_rand_score(lab, out) == pytest.approx(1.0)
        assert len(np.unique(out)) == len(np.unique(lab))
        assert np.mean(out == ref) == pytest.approx(accuracy(ref, lab))
        extra = np.setdiff1d(out, ref)
        assert np.all(extra > ref.max())
        assert len(extra) == max(0, len(np.unique(lab)) - len(np.unique(ref)))


# --------------------------------------------------------------------------- invariances


def test_label_permutation_invariance_and_symmetry():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a, b = random_pair(rng)
        vals = np.unique(b)
        perm = dict(zip(vals, rng.permutation(vals) + 17))
        b2 = np.array([perm[v] for v in b])
        for f in (mutual_info, nmi, ari, accuracy):
            assert f(a, b2) == pytest.approx(f(a, b), abs=ATOL)
            assert f(b, a) == pytest.approx(f(a, b), abs=ATOL)
        assert entropy(b2) == pytest.approx(entropy(b), abs=ATOL)


def test_labels_accept_integral_floats_bools_and_lists():
    assert nmi([0.0, 0.0, 1.0, 1.0], [1, 1, 0, 0]) == 1.0
    assert ari(np.array([True, True, False]), [2, 2, 3]) == 1.0
    assert n_clusters([3, 3, -1, 7]) == 3


# --------------------------------------------------------------------------- co-clustering


def double_loop_psm(draws):
    draws = np.asarray(draws)
    S, n = draws.shape
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = np.mean(draws[:, i] == draws[:, j])
    return out


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_co_clustering_matches_double_loop(batch_size):
    rng = np.random.default_rng(4)
    for S, n, k in [(1, 1, 1), (5, 7, 3), (17, 30, 6), (40, 25, 25)]:
        draws = rng.integers(-k, k, size=(S, n)) * 5
        M = co_clustering_matrix(draws, batch_size=batch_size)
        np.testing.assert_allclose(M, double_loop_psm(draws), rtol=0, atol=1e-15)
        assert M.dtype == np.float64
        np.testing.assert_array_equal(M, M.T)
        np.testing.assert_array_equal(np.diag(M), 1.0)


def test_co_clustering_hand_example_and_label_independence_across_draws():
    M = co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    np.testing.assert_allclose(M, [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]])
    # relabelling one draw (only within it) does not change the matrix
    np.testing.assert_array_equal(co_clustering_matrix([[0, 0, 1], [9, -2, -2]]), M)
    np.testing.assert_array_equal(co_clustering_matrix(np.array([[0.0, 0.0, 1.0], [0, 1, 1]])), M)


# --------------------------------------------------------------------------- objectives


def test_sse_matches_loop():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    C = rng.normal(size=(5, 3))
    z = rng.integers(0, 5, 40)
    ref = sum(sum((X[i, d] - C[z[i], d]) ** 2 for d in range(3)) for i in range(40))
    assert sse(X, z, C) == pytest.approx(ref, rel=1e-13)
    assert sse([[0.0, 0.0], [2.0, 0.0]], [0, 0], [[1.0, 0.0]]) == 2.0


def loop_dp_means_objective(X, z, lam, w):
    total, k = 0.0, 0
    for c in set(z.tolist()):
        members = [i for i in range(len(z)) if z[i] == c]
        mass = sum(w[i] for i in members)
        if mass == 0:
            continue
        k += 1
        mu = sum(w[i] * X[i] for i in members) / mass
        total += sum(w[i] * float(np.dot(X[i] - mu, X[i] - mu)) for i in members)
    return total + lam * k


def test_dp_means_objective_matches_loop():
    rng = np.random.default_rng(6)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        X = rng.normal(size=(n, 2)) * 3
        z = rng.integers(-3, 4, n) * 11
        w = rng.uniform(0, 2, n)
        lam = float(rng.uniform(0, 5))
        assert dp_means_objective(X, z, lam) == pytest.approx(
            loop_dp_means_objective(X, z, lam, np.ones(n)), rel=1e-12, abs=1e-12
        )
        assert dp_means_objective(X, z, lam, sample_weight=w) == pytest.approx(
            loop_dp_means_objective(X, z, lam, w), rel=1e-12, abs=1e-12
        )


def test_dp_means_objective_toy_and_limits():
    X = np.array([[0.0], [2.0], [10.0]])
    assert dp_means_objective(X, [0, 0, 1], lam=1.0) == 4.0  # 1 + 1 + 0 + 2 * 1
    assert dp_means_objective(X, [0, 1, 2], lam=0.5) == 1.5  # singletons: lam * n
    # one cluster: SSE about the overall mean + lam
    assert dp_means_objective(X, [4, 4, 4], lam=2.0) == pytest.approx(np.sum((X - X.mean()) ** 2) + 2.0)
    # equals sse with the implied means
    rng = np.random.default_rng(7)
    Y = rng.normal(size=(20, 2))
    z = rng.integers(0, 3, 20)
    means = np.array([Y[z == c].mean(0) for c in range(3)])
    assert dp_means_objective(Y, z, 0.0) == pytest.approx(sse(Y, z, means), rel=1e-13)


def test_dp_means_objective_weights_equal_repeated_rows():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(15, 2))
    z = rng.integers(0, 4, 15)
    reps = rng.integers(0, 4, 15)
    reps[0] = 1  # at least one point kept
    lhs = dp_means_objective(X, z, 0.7, sample_weight=reps.astype(float))
    rhs = dp_means_objective(np.repeat(X, reps, axis=0), np.repeat(z, reps), 0.7)
    assert lhs == pytest.approx(rhs, rel=1e-12)


# --------------------------------------------------------------------------- bad input

PAIR_FUNCS = [contingency_matrix, mutual_info, nmi, ari, accuracy, consistency_index]


@pytest.mark.parametrize("f", PAIR_FUNCS)
def test_pair_functions_reject_bad_input(f):
    with pytest.raises(ValueError, match="labels_true and labels_pred"):
        f([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="labels_true must be a 1-D"):
        f([[0, 1], [1, 0]], [0, 1])
    with pytest.raises(ValueError, match="labels_pred must be a 1-D"):
        f([0, 1], [[0, 1]])
    with pytest.raises(ValueError, match="labels_pred must contain integer labels"):
        f([0, 1], [0.5, 1.0])
    with pytest.raises(ValueError, match="labels_true must have at least 1"):
        f([], [])
    with pytest.raises(TypeError, match="labels_true"):
        f(["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="labels_pred contains NaN"):
        f([0, 1], [0, np.nan])
    with pytest.raises(TypeError, match="labels_true"):
        f(None, [0, 1])


def test_single_label_functions_reject_bad_input():
    for f in (entropy, n_clusters):
        with pytest.raises(ValueError, match="labels must have at least 1"):
            f([])
        with pytest.raises(ValueError, match="labels must be a 1-D"):
            f([[0]])
        with pytest.raises(ValueError, match="labels must contain integer"):
            f([0.3])
    with pytest.raises(ValueError, match="labels_ref and labels"):
        match_labels([0, 1], [0])
    with pytest.raises(ValueError, match="labels_ref must contain integer"):
        match_labels([0.2, 1], [0, 1])


def test_co_clustering_rejects_bad_input():
    with pytest.raises(ValueError, match="label_draws must be a 2-D"):
        co_clustering_matrix([0, 1, 1])
    with pytest.raises(ValueError, match="label_draws must contain integer"):
        co_clustering_matrix([[0, 1.5]])
    with pytest.raises(TypeError, match="label_draws must be a real"):
        co_clustering_matrix(np.array([[1 + 0j, 0]]))
    with pytest.raises(ValueError, match="label_draws must have at least 1"):
        co_clustering_matrix(np.zeros((0, 3), dtype=int))
    with pytest.raises(ValueError, match="batch_size"):
        co_clustering_matrix([[0, 1]], batch_size=0)


def test_objectives_reject_bad_input():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="labels has length 2, expected 3"):
        sse(X, [0, 0], np.zeros((1, 2)))
    with pytest.raises(ValueError, match="centers has 3 features"):
        sse(X, [0, 0, 0], np.zeros((1, 3)))
    with pytest.raises(ValueError, match="labels must index rows of centers"):
        sse(X, [0, 1, 2], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="labels must index rows of centers"):
        sse(X, [0, -1, 0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="X must be a 2-D"):
        sse(np.zeros(3), [0, 0, 0], np.zeros((1, 1)))
    with pytest.raises(ValueError, match="X contains NaN"):
        dp_means_objective([[np.nan], [0.0]], [0, 0], 1.0)
    with pytest.raises(ValueError, match="lam must be a non-negative"):
        dp_means_objective(X, [0, 0, 0], -1.0)
    with pytest.raises(TypeError, match="lam must be a real"):
        dp_means_objective(X, [0, 0, 0], "1")
    with pytest.raises(ValueError, match="sample_weight has length 2"):
        dp_means_objective(X, [0, 0, 0], 1.0, sample_weight=[1.0, 1.0])
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        dp_means_objective(X, [0, 0, 0], 1.0, sample_weight=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="labels must contain integer"):
        dp_means_objective(X, [0, 0.5, 0], 1.0)


def test_membership_entropy_against_scipy():
    from scipy.stats import entropy as scipy_entropy

    from bayesclust.metrics import membership_entropy

    rng = np.random.default_rng(0)
    Y = rng.dirichlet(np.ones(4), size=50)
    Y[0] = [1.0, 0.0, 0.0, 0.0]  # 0 log 0 = 0
    np.testing.assert_allclose(membership_entropy(Y), scipy_entropy(Y, axis=1) / np.log(4), atol=1e-14)
    assert membership_entropy(Y)[0] == 0.0
    np.testing.assert_array_equal(membership_entropy(np.ones((3, 1))), np.zeros(3))
    with pytest.raises(ValueError, match="memberships"):
        membership_entropy(np.ones(3))
