"""Temporal state detection and GA denoising (Medina & Fred, SIMBAD deliverable D2.3, temporal study).

References come from scikit-learn (spectral clustering, the adjusted Rand index), SciPy (the
generalised eigenproblem of normalised cuts) or hand computations; the synthetic sequences
have known states.
"""


import numpy as np
import pytest
import scipy.linalg
from sklearn.cluster import SpectralClustering
from sklearn.metrics import adjusted_rand_score

import bayesclust as bc
from bayesclust import datasets
from bayesclust.inference.consensus import temporal as T
from bayesclust.inference.consensus.ensembles import _kmeanspp_rows, _shi_malik_spectral

SMALL_GRID = dict(n_clusters=[2, 3], sigmas=[0.5, 1.0])


def _blobs(seed=0, per=20):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    y = np.repeat(np.arange(3), per)
    return centres[y] + rng.normal(scale=0.4, size=(3 * per, 2)), y


# --------------------------------------------------------------------------- spectral grid


def test_spectral_grid_matches_scikit_learn_on_separated_blobs():
    X, y = _blobs()
    sigmas = [0.5, 1.0, 2.0]
    ens = bc.spectral_grid_ensemble(0, X, [3], sigmas)
    assert ens.labels.shape == (6, 60) and ens.base == ("njw",) * 3 + ("shi_malik",) * 3
    for s, lab in zip(sigmas * 2, ens.labels):
        ref = SpectralClustering(3, affinity="rbf", gamma=1 / (2 * s * s), random_state=0).fit_predict(X)
        assert adjusted_rand_score(ref, lab) == 1.0 and adjusted_rand_score(y, lab) == 1.0


def test_spectral_grid_padding_leaves_the_partitions():
    X, y = _blobs(1)
    a = bc.spectral_grid_ensemble(0, X, [2, 3], [1.0])
    b = bc.spectral_grid_ensemble(0, X, [2, 3], [1.0], pad_to=100)
    for la, lb in zip(a.labels, b.labels):
        assert adjusted_rand_score(la, lb) == 1.0
        assert (lb >= 0).all() and lb.max() < 3


def test_shi_malik_is_the_generalised_eigenproblem_of_normalised_cuts():
    X, y = _blobs(2)
    gamma = 0.5
    A = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(A, 0.0)
    D = np.diag(A.sum(1))
    _, V = scipy.linalg.eigh(A, D, subset_by_index=[57, 59])  # A v = mu D v, three largest mu
    rng = np.random.default_rng(0)
    ref = np.argmin(((V[:, None] - V[_kmeanspp_rows(rng, V, 3)][None]) ** 2).sum(-1), axis=1)
    got = _shi_malik_spectral(np.random.default_rng(0), X, 3, gamma, 100)
    assert adjusted_rand_score(ref, got) == 1.0 and adjusted_rand_score(y, got) == 1.0
    ens = bc.clustering_ensemble(0, X, "shi_malik", 3, 2)
    assert all(adjusted_rand_score(y, lab) == 1.0 for lab in ens.labels)


# --------------------------------------------------------------------------- Algorithm 1


def test_window_indicator_by_hand():
    M = bc.window_indicator([0, 0, 0, 1, 1, 2, 2, 2], 3)  # windows [0,0,0] [1,1,2,2,2]
    assert M.astype(int).tolist() == [[1, 0, 0], [0, 1, 1]]
    # no window straddles the gap between samples 3 and 10
    M = bc.window_indicator([0, 0, 0, 1, 1, 1], 3, time_index=[0, 1, 2, 10, 11, 12])
    assert M.astype(int).tolist() == [[1, 0], [0, 1]]
    M = bc.window_indicator([0, 0, 1, 1, 1, 1], 3, time_index=[0, 1, 10, 11, 12, 13])
    assert M.astype(int).tolist() == [[1, 0], [0, 1]]


def test_states_from_a_given_ensemble_by_hand():
    # 40 samples, 4 windows; the partitions say: states 0..19 and 20..39, the second made of
    # two clusters that alternate (a unique combination of clusters).
    first = np.zeros(20, int)
    second = 1 + np.arange(20) % 2
    ens = np.tile(np.r_[first, second], (6, 1))
    res = bc.temporal_states(0, np.zeros((40, 1)), window=10, ensemble=ens)
    assert res.unambiguous and res.n_states == 2 and res.majority == 5
    assert res.states == ((0, 20, 0), (20, 40, 1))
    assert res.labels.tolist() == [0] * 20 + [1] * 20
    # a state that comes back: ambiguous
    back = np.r_[np.zeros(10, int), np.ones(10, int), np.zeros(20, int)]
    res = bc.temporal_states(0, np.zeros((40, 1)), window=10, ensemble=np.tile(back, (3, 1)))
    assert not res.unambiguous and [s for _, _, s in res.states] == [0, 1, 0]


def test_ds1_states_found_without_denoising_by_every_linkage():
    X, y = datasets.temporal_states(0, "DS1")
    res = bc.temporal_states(0, X)  # the real grid: 280 partitions
    assert res.unambiguous and res.majority == 5 and res.n_states == 2
    assert res.states == ((0, 150, 0), (150, 300, 1))
    for w in res.window_states:  # every linkage: 15 windows of one state, then 15 of the other
        assert w.tolist() == [0] * 15 + [1] * 15
    assert adjusted_rand_score(y, res.labels) == 1.0
    C = res.coassociation
    # blocks on the diagonal: samples of one state co-cluster far more than across states
    assert C.shape == (300, 300) and C[:150, :150].mean() > 10 * C[:150, 150:].mean()


# --------------------------------------------------------------------------- Algorithm 2: pieces


def test_fitness_terms_by_hand():
    # H = 3 partitions of 10 kept samples, A = the first 4.
    p1 = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    p2 = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])  # p1 relabelled
    p3 = np.array([0, 0, 1, 0, 1, 1, 1, 1, 2, 1])  # one outlier in A, one in B
    f1, f2 = T._fitness_terms(np.stack([p1, p2, p3]), 4, True)
    assert f1 == pytest.approx(1 / 3)  # only (p1, p2) equal
    assert f2 == pytest.approx((1 + 1 + 8 / 10) / 3)
    # one cluster everywhere: with distinct_dominant all of B are outliers
    one = np.zeros((2, 10), int)
    assert T._fitness_terms(one, 4, True) == pytest.approx((1.0, 4 / 10))
    assert T._fitness_terms(one, 4, False) == pytest.approx((1.0, 1.0))


def test_equal_partitions_is_ari_one():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = rng.integers(0, 3, 8)
        b = rng.permutation(3)[a] if rng.random() < 0.5 else rng.integers(0, 3, 8)
        assert T._equal_partitions(a, b) == (adjusted_rand_score(a, b) == 1.0)


def test_recombination_stays_between_the_parents():
    rng = np.random.default_rng(0)
    for _ in range(500):
        p1, p2 = np.sort(rng.integers(1, 301, 2)), np.sort(rng.integers(1, 301, 2))
        lo, hi = sorted((p1[0], p2[0])), sorted((p1[1], p2[1]))
        for c in T._recombine(rng, p1, p2):
            assert c[0] <= c[1]
            # one bound between the parents' l_min, the other between their l_max (when the
            # two draws cross, the child is their sorted pair)
            between = [(lo[0] <= a <= lo[1]) and (hi[0] <= b <= hi[1]) for a, b in (c, c[::-1])]
            assert any(between), (p1, p2, c)


def test_mutation_keeps_the_block_inside_the_sequence():
    rng = np.random.default_rng(1)
    n = 30
    moved = 0
    for _ in range(2000):
        ind = np.sort(rng.integers(1, n + 1, 2))
        c = T._mutate(rng, ind, n, 5)
        assert 1 <= c[0] <= c[1] <= n
        assert np.all(np.abs(c - ind) <= 5)
        moved += int(not np.array_equal(c, ind))
    assert moved > 1500
    # at the edges
    for ind in ([1, 1], [n, n], [1, n]):
        for _ in range(200):
            c = T._mutate(rng, np.array(ind), n, 5)
            assert 1 <= c[0] <= c[1] <= n


def test_tournament_picks_the_fitter_one():
    fit = np.array([0.1, 0.9, 0.5, 0.3])

    class Fixed:  # a generator that draws the given pair
        def __init__(self, pair):
            self.pair = np.array(pair)

        def integers(self, lo, hi, size):
            return self.pair

    for pair in ([0, 1], [2, 3], [3, 2], [1, 2], [0, 0]):
        assert T._tournament(Fixed(pair), fit) == pair[int(np.argmax(fit[pair]))]


def test_stepping_by_hand_reproduces_the_driver_and_the_cache_is_by_block(monkeypatch):
    X, _ = datasets.temporal_states(0, "DS2", 60)
    kw = dict(population=4, window=5, **SMALL_GRID)
    res = bc.denoise_sequence(0, X, generations=3, threshold=1.0, **kw)
    assert res.n_iter >= 1
    state = T.init_denoise_state(0, X, threshold=1.0, **kw)
    while not state.converged and state.n_iter < 3:
        before = state.population.copy()
        new, info = T.denoise_step(state, threshold=1.0)
        assert np.array_equal(state.population, before)  # the input state is left alone
        assert info.objective == new.objective
        state = new
    np.testing.assert_array_equal(state.objective_trace, res.objective_trace)
    top = state.population[int(np.argmax(state.fitness))]
    assert tuple(top) == res.block and state.n_evaluations == res.n_evaluations
    assert np.all(np.diff(res.objective_trace) >= 0)  # elitist
    # the cache: one consensus per distinct block
    calls = []
    real = T._consensus
    monkeypatch.setattr(T, "_consensus", lambda *a: calls.append(1) or real(*a))
    res2 = bc.denoise_sequence(0, X, generations=3, threshold=1.0, **kw)
    assert res2.block == res.block and len(calls) <= res2.n_evaluations <= 4 * (res2.n_iter + 1)


def test_denoise_result_fields():
    X, _ = datasets.temporal_states(1, "DS1", 60)
    res = bc.denoise_sequence(0, X, population=4, generations=2, window=5, **SMALL_GRID)
    lo, hi = res.block
    assert 1 <= lo <= hi <= 60
    assert res.removed.sum() == hi - lo + 1 and res.removed[lo - 1] and res.removed[hi - 1]
    np.testing.assert_array_equal(res.kept, np.flatnonzero(~res.removed))
    assert res.objective == pytest.approx(0.1 * res.f1 + 0.9 * res.f2) or res.objective == 0.0
    assert len(res.objective_trace) == res.n_iter + 1


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, match", [
    (lambda X: bc.temporal_states(0, X[:15]), "at least two windows"),
    (lambda X: bc.temporal_states(0, X[:8]), "window .10. is larger than the sequence"),
    (lambda X: bc.temporal_states(0, X, window=0), "window"),
    (lambda X: bc.temporal_states(0, X, linkages=("single", "kmeans")), "linkages"),
    (lambda X: bc.temporal_states(0, X, sigmas=[0.5, -1.0]), "sigmas"),
    (lambda X: bc.temporal_states(0, X, n_clusters=[1, 2]), "n_clusters"),
    (lambda X: bc.temporal_states(0, X, methods="kmeans"), "methods"),
    (lambda X: bc.temporal_states(0, X, time_index=np.arange(60)[::-1]), "time_index"),
    (lambda X: bc.temporal_states(0, np.where(np.arange(60)[:, None] == 7, np.nan, X)), "X_time_ordered"),
    (lambda X: bc.denoise_sequence(0, np.where(np.arange(60)[:, None] == 7, np.nan, X)), "X_time_ordered"),
    (lambda X: bc.denoise_sequence(0, X[:15]), "at least two windows"),
    (lambda X: bc.denoise_sequence(0, X, alpha=1.5), "alpha"),
    (lambda X: bc.denoise_sequence(0, X, threshold=-0.1), "threshold"),
    (lambda X: bc.denoise_sequence(0, X, p_recombination=2), "p_recombination"),
    (lambda X: bc.denoise_sequence(0, X, p_mutation=-1), "p_mutation"),
    (lambda X: bc.denoise_sequence(0, X, max_mutation=-1), "max_mutation"),
    (lambda X: bc.denoise_sequence(0, X, population=1), "population"),
    (lambda X: bc.denoise_sequence(0, X, generations=-1), "generations"),
    (lambda X: bc.denoise_sequence(0, X, n_clusters=[2, 50]), "n_clusters"),
    (lambda X: bc.window_indicator([0, 1], 3), "window"),
    (lambda X: bc.spectral_grid_ensemble(0, X, [2], [0.0]), "sigmas"),
])
def test_bad_input_is_a_clear_value_error(call, match):
    X, _ = datasets.temporal_states(0, "DS1", 60)
    with pytest.raises(ValueError, match=match):
        call(X)


def test_ds2_generator():
    X, y = datasets.temporal_states(3, "DS2")
    assert X.shape == (300, 2) and (y == -1).sum() == 100
    assert (y[:100] == 0).all() and (y[200:] == 1).all()
    with pytest.raises(ValueError, match="kind"):
        datasets.temporal_states(0, "DS3")
    with pytest.raises(ValueError, match="n_samples"):
        datasets.temporal_states(0, "DS1", 3)


# --------------------------------------------------------------------------- Algorithm 2: DS2


@pytest.mark.paper
def test_ds2_states_found_after_denoising_seed_0():
    """Quick row: on DS2 seed 0 the states are not found before denoising; Algorithm 2 (Table 1's
    parameters) removes a block covering >= 80 % of the transition, after which Algorithm 1 finds
    the two states.  The report (make reproduce PAPER=simbad_temporal) runs seeds 0-2
    (reproduce.simbad_temporal.DS2_SEEDS); a seeds 0-9 run found coverage >= 80 % in 8 of 10 and
    the states after denoising in 5 of 10, where the paper's words suggest all
    (docs/deviations.md#temporal-ds2-check).

    Its time is the genetic search's fitness evaluations, not compilation: 38 distinct blocks
    on this draw, 34 of them long enough to need a 280-partition spectral ensemble (one 300 x 300
    eigendecomposition per scale).  DS2 before denoising is checked here, on the same call."""
    from reproduce.simbad_temporal import ds2_outcome

    out = ds2_outcome(0)
    assert not out["unambiguous_before"] and not out["before"], out  # DS2's states are not found
    assert out["after"] and out["coverage"] >= 0.8, out
