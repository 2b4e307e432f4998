"""ACCCS: population ACC, constraint satisfaction, the GA operators, the driver, the paper's Iris row."""

import numpy as np
import pytest

from bayesclust import metrics
from bayesclust.inference.consensus import acccs as A
from bayesclust.inference.consensus.ensembles import kmeans_ensemble


def _random_ensemble(rng, N=25, n=80, kmax=7, missing=0.0):
    E = rng.integers(0, kmax, (N, n))
    if missing:
        E[rng.random(E.shape) < missing] = -1
        E[:, 0] = 0  # every partition labels an object
    return E


@pytest.mark.parametrize("missing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [True, False])
def test_acc_population_equals_loop_of_acc(missing, weighted):
    rng = np.random.default_rng(1)
    E = _random_ensemble(rng, missing=missing)
    P = rng.integers(-2, 5, (12, 80))
    P[3] = 7  # a one-cluster consensus
    P[4] = np.arange(80)  # all singletons
    got = metrics.acc_population(P, E, weighted=weighted)
    want = np.array([metrics.acc(p, E, weighted=weighted) for p in P])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


def test_acc_population_hand_case():
    # Nested in 150/150/200 clusters: ACC = 1 - sum (n_k / n)^2 = 0.66 (ACC paper's "partition a").
    truth = np.repeat([0, 1, 2], [150, 150, 200])
    fine = np.repeat(np.arange(10), 50)
    assert metrics.acc_population(truth[None], [fine, fine])[0] == pytest.approx(0.66, abs=1e-12)


def test_acc_population_bad_input():
    with pytest.raises(ValueError, match="candidates"):
        metrics.acc_population([[0, 1, 0]], [[0, 1, 0, 1], [0, 0, 1, 1]])
    with pytest.raises(TypeError, match="weighted"):
        metrics.acc_population([[0, 1]], [[0, 1], [0, 0]], weighted=1)
    with pytest.raises(TypeError, match="candidates"):
        metrics.acc_population([["a", "b"]], [[0, 1], [0, 0]])


def test_constraint_satisfaction_batch_against_loop():
    rng = np.random.default_rng(2)
    L = rng.integers(0, 3, (6, 40))
    ml = rng.choice(40, (9, 2), replace=False)
    cl = rng.choice(40, (5, 2), replace=False)
    got = A._constraint_satisfaction_batch(L, ml, cl)
    for r, labels in enumerate(L):
        ok = sum(labels[i] == labels[j] for i, j in ml) + sum(labels[i] != labels[j] for i, j in cl)
        assert got[r] == pytest.approx(ok / 14)
    assert np.all(A._constraint_satisfaction_batch(L, ml[:0], cl[:0]) == 1.0)


def test_align_recovers_a_permutation():
    rng = np.random.default_rng(3)
    p1 = rng.integers(0, 4, 60)
    perm = np.array([2, 0, 3, 1])
    np.testing.assert_array_equal(A._align(p1, perm[p1], 4), p1)


def test_crossover_children_mix_the_aligned_parents():
    rng = np.random.default_rng(4)
    p1 = rng.integers(0, 3, 50)
    p2 = np.array([1, 2, 0])[p1]
    p2[rng.random(50) < 0.3] = rng.integers(0, 3)  # a noisy relabelled copy
    q = A._align(p1, p2, 3)
    c1, c2 = A._crossover(np.random.default_rng(5), p1, p2, 3)
    for cut in range(1, 50):
        if np.array_equal(c1, np.r_[p1[:cut], q[cut:]]):
            break
    else:
        pytest.fail("c1 is not p1[:cut] + aligned p2[cut:] for any cut")
    np.testing.assert_array_equal(c2, np.r_[q[:cut], p1[cut:]])
    # Aligned, the clean relabelled copy would give back p1 exactly: children are p1 up to the noise.
    assert np.mean(c1 == p1) > 0.6


def test_mutation_rate_and_other_label():
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 5, 200_000)
    out = A._mutate(rng, labels, 5, 0.03)
    changed = out != labels
    assert changed.mean() == pytest.approx(0.03, abs=0.002)  # binomial sd 0.0004
    assert np.all((out >= 0) & (out < 5))
    # The new label is uniform over the four others.
    shift = (out[changed] - labels[changed]) % 5
    np.testing.assert_allclose(np.bincount(shift, minlength=5)[1:] / changed.sum(), 0.25, atol=0.02)
    np.testing.assert_array_equal(A._mutate(rng, labels, 5, 0.0), labels)


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 2)) * 0.4 + np.array([[0, 0], [4, 0], [0, 4]])[y]
    ens = kmeans_ensemble(0, X, 20, n_clusters_range=(4, 8))
    return X, y, ens


def test_objective_trace_non_decreasing_and_consistent(blobs):
    X, y, ens = blobs
    rng = np.random.default_rng(8)
    pairs = rng.choice(90, (30, 2), replace=False)
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    res = A.acccs(0, ens, pairs[same], pairs[~same], 3, generations=40)  # random initial partitions
    assert res.objective_trace.shape == (41,)
    assert np.all(np.diff(res.objective_trace) >= 0)
    assert res.objective == res.objective_trace[-1]
    assert res.acc == pytest.approx(metrics.acc(res.labels, ens.labels), abs=1e-12)
    assert res.objective == pytest.approx(0.5 * res.acc + 0.5 * res.constraint_satisfaction)
    assert res.objective_trace[-1] > res.objective_trace[0]  # the search improves random starts


def test_elitist_survival_never_loses_the_best(blobs, monkeypatch):
    # With mutation certain to wreck every child, the best of the start must survive.
    X, y, ens = blobs
    start = A.acccs(1, ens, None, None, 3, X, generations=0)
    res = A.acccs(1, ens, None, None, 3, X, generations=5, p_mutation=1.0)
    np.testing.assert_allclose(res.objective_trace, start.objective)
    np.testing.assert_array_equal(res.labels, start.labels)


def test_beta_one_is_constraints_only_and_kmeans_start(blobs):
    X, y, ens = blobs
    ml = np.array([[0, 1], [30, 31]])
    cl = np.array([[0, 30], [30, 60]])
    res = A.acccs(2, ens, ml, cl, 3, X, beta=1.0, generations=10)
    assert res.objective == res.constraint_satisfaction == 1.0
    res = A.acccs(2, ens, ml, cl, 3, X, generations=10)
    assert metrics.consistency_index(y, res.labels) == 1.0


def test_same_key_same_result(blobs):
    X, y, ens = blobs
    a = A.acccs(3, ens, [[0, 1]], [[0, 40]], 3, generations=15)
    b = A.acccs(3, ens, [[0, 1]], [[0, 40]], 3, generations=15)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.objective_trace, b.objective_trace)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"beta": 1.5}, "beta"),
        ({"beta": -0.1}, "beta"),
        ({"p_crossover": 2.0}, "p_crossover"),
        ({"p_mutation": -0.5}, "p_mutation"),
        ({"population": 1}, "population"),
        ({"n_clusters": 0}, "n_clusters"),
        ({"must_link": [[0, 0]]}, "must_link"),
        ({"cannot_link": [[0, 99]]}, "cannot_link"),
        ({"cannot_link": [0, 1, 2]}, "cannot_link"),
        ({"X": np.zeros((3, 2))}, "X"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"ensemble": [[0, 0, 1, 1], [0, 1, 1, 1]], "must_link": [[0, 1]], "cannot_link": [[1, 2]],
            "n_clusters": 2}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        A.acccs(0, **args)


@pytest.mark.paper
def test_iris_200_constraints_table1():
    # Duarte, Fred & Duarte (2009), Table 1, Iris, 200 constraints: ACCCS CI 95.87 (max 99.33),
    # over 20 ensembles of 50 k-means partitions with K uniform in 10..30 -- the report's row
    # (make reproduce PAPER=simbad_eac; MASS biopsy's row is there too).  Quick row: 3 ensembles.
    from reproduce.simbad_eac import acccs_cis

    cis = acccs_cis("iris", range(3), fixed_pairs=True)
    assert np.mean(cis) == pytest.approx(95.87, abs=4), cis
    assert np.max(cis) <= 100.0


def test_stepping_by_hand_reproduces_the_driver(blobs):
    import jax

    X, y, ens = blobs
    # random initial partitions: every generation improves on them, so every key matters
    res = A.acccs(5, ens, [[0, 1]], [[0, 40]], 3, generations=6)
    keys = jax.random.split(jax.random.PRNGKey(5), 7)
    state = A.init_acccs_state(keys[0], ens, [[0, 1]], [[0, 40]], 3)
    for g in range(6):
        before = (state.population.copy(), state.fitness.copy(), state.objective_trace.copy())
        new, info = A.acccs_step(keys[g + 1], state)
        # the input state is left as it was
        np.testing.assert_array_equal(state.population, before[0])
        np.testing.assert_array_equal(state.fitness, before[1])
        np.testing.assert_array_equal(state.objective_trace, before[2])
        assert info.objective == new.objective == new.fitness[0] == new.objective_trace[-1]
        assert info.changed == (not np.array_equal(new.population[0], state.population[np.argmax(state.fitness)]))
        state = new
    assert state.n_iter == 6 and not state.converged
    assert len(np.unique(state.objective_trace)) > 3
    np.testing.assert_array_equal(state.objective_trace, res.objective_trace)
    np.testing.assert_array_equal(state.population[0], res.labels)
    assert (res.n_iter, res.converged) == (6, False)  # generations run; no convergence test
    # more generations extend the same search: the generation keys are a prefix-stable split
    longer = A.acccs(5, ens, [[0, 1]], [[0, 40]], 3, generations=9)
    assert longer.n_iter == 9 and not longer.converged
    np.testing.assert_array_equal(longer.objective_trace[:7], res.objective_trace)
