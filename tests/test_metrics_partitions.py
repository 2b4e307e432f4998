"""Tests of the partition losses and point estimates in bayesclust.metrics.

References: double loops over pairs / points written here from the definitions, brute-force
enumeration of partitions (an independent n**n product enumeration for the Bell-number check,
then all set partitions for n <= 6 to find the exact minimiser of the expected loss),
scikit-learn's rand_score / mutual_info_score and scipy's entropy.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from sklearn import metrics as skm

from bayesclust.inference.mixtures.point_estimates import partition_point_estimate
from bayesclust.metrics import (
    binder_loss,
    co_clustering_matrix,
    expected_binder_loss,
    expected_vi_loss,
    set_partitions,
    variation_of_information,
    vi_lower_bound,
)

ATOL = 1e-12  # float64 round-off on sums of at most a few thousand terms
BELL = [1, 1, 2, 5, 15, 52, 203, 877]


# --------------------------------------------------------------------------- references


def blocks(labels):
    """The partition as a frozenset of frozensets of point indices."""
    out = {}
    for i, v in enumerate(labels):
        out.setdefault(int(v), set()).add(i)
    return frozenset(frozenset(b) for b in out.values())


def binder_loop(a, b):
    n = len(a)
    if n < 2:
        return 0.0
    bad = sum(
        (a[i] == a[j]) != (b[i] == b[j]) for i in range(n) for j in range(i + 1, n)
    )
    return bad / (n * (n - 1) / 2)


def vi_loop(a, b):
    """(1/n) sum_i [log|a(i)| + log|b(i)| - 2 log|a(i) & b(i)|], point by point."""
    n = len(a)
    total = 0.0
    for i in range(n):
        A = {j for j in range(n) if a[j] == a[i]}
        B = {j for j in range(n) if b[j] == b[i]}
        total += math.log(len(A)) + math.log(len(B)) - 2 * math.log(len(A & B))
    return total / n


def vi_sklearn(a, b):
    ha = scipy.stats.entropy(np.unique(a, return_counts=True)[1])
    hb = scipy.stats.entropy(np.unique(b, return_counts=True)[1])
    return ha + hb - 2 * skm.mutual_info_score(a, b)


def expected_binder_loop(c, draws):
    return float(np.mean([binder_loop(c, d) for d in draws]))


def expected_vi_loop(c, draws):
    return float(np.mean([vi_loop(c, d) for d in draws]))


def vi_lb_loop(c, P):
    n = len(c)
    total = 0.0
    for i in range(n):
        same = [j for j in range(n) if c[j] == c[i]]
        total += (
            math.log(len(same))
            + math.log(sum(P[i, j] for j in range(n)))
            - 2 * math.log(sum(P[i, j] for j in same))
        )
    return total / n


def random_labels(rng, n, k_max=6):
    """Random labelling with arbitrary, possibly negative and non-contiguous ids."""
    k = int(rng.integers(1, k_max + 1))
    ids = rng.choice(np.arange(-40, 40), size=k, replace=False) * 3
    return ids[rng.integers(0, k, n)]


def random_draws(rng, n, S):
    """Posterior-like draws: noisy copies of a base partition, or independent labellings."""
    if rng.random() < 0.5:
        return rng.integers(0, int(rng.integers(1, n + 1)), size=(S, n))
    base = rng.integers(0, 3, n)
    return np.where(rng.random((S, n)) < 0.3, rng.integers(0, 4, (S, n)), base)


def relabel_each_draw(rng, draws):
    """Apply an independent injective relabelling (to arbitrary ids) to every draw."""
    out = np.empty_like(draws)
    for s, d in enumerate(draws):
        vals = np.unique(d)
        new = rng.choice(np.arange(-500, 500), size=vals.size, replace=False)
        out[s] = new[np.searchsorted(vals, d)]
    return out


ALL_PARTITIONS = {n: np.array(list(set_partitions(n))) for n in range(1, 7)}


# --------------------------------------------------------------------------- set_partitions


@pytest.mark.parametrize("n", range(8))
def test_set_partitions_bell_numbers(n):
    parts = list(set_partitions(n))
    assert len(parts) == BELL[n]
    assert len({tuple(p) for p in parts}) == BELL[n]


@pytest.mark.parametrize("n", range(1, 7))
def test_set_partitions_are_all_distinct_partitions(n):
    # independent enumeration: all n**n label assignments, reduced to set partitions
    brute = {blocks(lab) for lab in itertools.product(range(n), repeat=n)}
    parts = list(set_partitions(n))
    assert {blocks(p) for p in parts} == brute
    for p in parts:  # restricted growth strings, int64
        assert p.dtype == np.int64 and p.shape == (n,)
        assert p[0] == 0
        assert all(p[i] <= p[:i].max() + 1 for i in range(1, n))


def test_set_partitions_order_and_bad_input():
    assert [p.tolist() for p in set_partitions(3)] == [
        [0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 1, 2]
    ]
    assert list(set_partitions(0))[0].shape == (0,)
    with pytest.raises(ValueError, match="n"):
        next(set_partitions(-1))
    with pytest.raises(TypeError, match="n"):
        next(set_partitions(2.5))


# --------------------------------------------------------------------------- binder_loss


def test_binder_loss_matches_double_loop_and_rand_score():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(1, 40))
        a, b = random_labels(rng, n), random_labels(rng, n)
        if rng.random() < 0.3:
            b = np.where(rng.random(n) < 0.7, a, b)
        got = binder_loss(a, b)
        assert got == pytest.approx(binder_loop(a, b), abs=ATOL)
        if n >= 2:
            assert got == pytest.approx(1 - skm.rand_score(a, b), abs=ATOL)
        assert binder_loss(b, a) == pytest.approx(got, abs=ATOL)


def test_binder_loss_toy_cases():
    assert binder_loss([0, 0, 1, 1], [0, 0, 0, 1]) == 0.5  # 3 of 6 pairs
    assert binder_loss([0, 0, 0], [0, 1, 2]) == 1.0  # every pair disagrees
    assert binder_loss([3, 3, 9], [-1, -1, 0]) == 0.0  # same partition, other ids
    assert binder_loss([5], [7]) == 0.0  # no pairs


def test_binder_loss_bad_input():
    with pytest.raises(ValueError, match="labels_a and labels_b"):
        binder_loss([0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="labels_a"):
        binder_loss([0.5, 1], [0, 1])
    with pytest.raises(ValueError, match="labels_b"):
        binder_loss([0, 1], [[0, 1]])
    with pytest.raises(TypeError, match="labels_a"):
        binder_loss(["a", "b"], [0, 1])


# --------------------------------------------------------------------------- VI


def test_vi_matches_brute_force_and_entropies():
    rng = np.random.default_rng(1)
    for _ in range(60):
        n = int(rng.integers(1, 30))
        a, b = random_labels(rng, n), random_labels(rng, n)
        got = variation_of_information(a, b)
        assert got == pytest.approx(vi_loop(a, b), abs=1e-12)
        assert got == pytest.approx(max(vi_sklearn(a, b), 0.0), abs=1e-12)
        assert variation_of_information(b, a) == pytest.approx(got, abs=1e-12)
        assert 0.0 <= got <= math.log(n) + 1e-12


def test_vi_is_zero_exactly_iff_same_partition():
    parts = ALL_PARTITIONS[4]
    for p, q in itertools.product(parts, parts):
        vi = variation_of_information(p, q * 7 - 3)
        if np.array_equal(p, q):
            assert vi == 0.0
        else:
            assert vi > 0.1  # smallest non-zero VI on 4 points is far from round-off


def test_vi_triangle_inequality():
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(2, 25))
        a, b, c = (random_labels(rng, n, k_max=5) for _ in range(3))
        ab = variation_of_information(a, b)
        bc = variation_of_information(b, c)
        ac = variation_of_information(a, c)
        assert ac <= ab + bc + 1e-12


def test_vi_known_values():
    n = 8
    assert variation_of_information(np.zeros(n, int), np.arange(n)) == pytest.approx(math.log(n))
    assert variation_of_information([0, 0, 1, 1], [0, 0, 0, 0]) == pytest.approx(math.log(2))


# --------------------------------------------------------------------------- expected losses


def test_expected_binder_loss_is_the_draw_average():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, S = int(rng.integers(1, 12)), int(rng.integers(1, 15))
        draws = random_draws(rng, n, S)
        psm = co_clustering_matrix(draws)
        c = random_labels(rng, n)
        assert expected_binder_loss(c, psm) == pytest.approx(
            expected_binder_loop(c, draws), abs=ATOL
        )


def test_expected_binder_loss_hand_value():
    psm = co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    # pairs (0,1): |1 - .5|, (0,2): |0 - 0|, (1,2): |0 - .5|
    assert expected_binder_loss([0, 0, 1], psm) == pytest.approx(1.0 / 3.0)


def test_expected_vi_loss_is_the_draw_average():
    rng = np.random.default_rng(4)
    for _ in range(30):
        n, S = int(rng.integers(1, 12)), int(rng.integers(1, 15))
        draws = random_draws(rng, n, S)
        c = random_labels(rng, n)
        got = expected_vi_loss(c, draws)
        assert got == pytest.approx(expected_vi_loop(c, draws), abs=1e-12)
        assert expected_vi_loss(c * 5 + 1, relabel_each_draw(rng, draws)) == pytest.approx(
            got, abs=1e-12
        )


def test_vi_lower_bound_formula_and_bound():
    rng = np.random.default_rng(5)
    for _ in range(15):
        n, S = int(rng.integers(2, 6)), int(rng.integers(1, 10))
        draws = random_draws(rng, n, S)
        P = co_clustering_matrix(draws)
        # Delta = (1/n) sum_i [log E|c(i)| - E log|c(i)|] >= 0, from the draws
        sizes = np.array([[np.sum(d == d[i]) for i in range(n)] for d in draws])
        delta = np.mean(np.log(sizes.mean(axis=0)) - np.log(sizes).mean(axis=0))
        for c in ALL_PARTITIONS[n]:
            lb = vi_lower_bound(c, P)
            assert lb == pytest.approx(vi_lb_loop(c, P), abs=1e-12)
            assert lb - delta <= expected_vi_loop(c, draws) + 1e-12


def test_expected_loss_bad_input():
    psm = co_clustering_matrix([[0, 0, 1], [0, 1, 1]])
    with pytest.raises(ValueError, match="psm"):
        expected_binder_loss([0, 0, 1, 1], psm)
    bad = psm.copy()
    bad[0, 1] = 0.9
    with pytest.raises(ValueError, match="psm must be symmetric"):
        expected_binder_loss([0, 0, 1], bad)
    with pytest.raises(ValueError, match="psm"):
        expected_binder_loss([0, 0, 1], psm * 2)
    bad = psm.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="psm contains NaN"):
        expected_binder_loss([0, 0, 1], bad)
    with pytest.raises(ValueError, match="psm"):
        vi_lower_bound([0, 0], psm)
    with pytest.raises(ValueError, match="label_draws"):
        expected_vi_loss([0, 0, 1], [[0, 1]])
    with pytest.raises(ValueError, match="label_draws"):
        expected_vi_loss([0, 0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="labels"):
        expected_vi_loss([0, 0.5, 1], [[0, 1, 1]])


# --------------------------------------------------------------------------- point estimates


def _check_compact(est, n):
    assert est.dtype == np.int64 and est.shape == (n,)
    firsts = [int(np.flatnonzero(est == k)[0]) for k in range(int(est.max()) + 1)]
    assert firsts == sorted(firsts) and set(est.tolist()) == set(range(len(firsts)))


#: loss -> (slow expected loss, first seed, bound on the number of draws, tolerance).
_EXACT_MINIMISER_CASES = {"binder": (expected_binder_loop, 100, 12, ATOL),
                          "vi": (expected_vi_loop, 200, 10, 1e-12)}


# Fixed seeds: the local search is not guaranteed to find the global optimum in general
# (see the docstring); on these draw sets it must.
@pytest.mark.parametrize("loss, seed", [("binder", s) for s in range(40)] + [("vi", s) for s in range(20)])
def test_estimate_is_the_exact_minimiser_for_tiny_n(loss, seed):
    expected_loop, first_seed, max_draws, tol = _EXACT_MINIMISER_CASES[loss]
    rng = np.random.default_rng(first_seed + seed)
    n, S = int(rng.integers(2, 7)), int(rng.integers(1, max_draws))
    draws = random_draws(rng, n, S)
    losses = np.array([expected_loop(p, draws) for p in ALL_PARTITIONS[n]])
    est = partition_point_estimate(draws, loss=loss)
    _check_compact(est, n)
    assert expected_loop(est, draws) <= losses.min() + tol


@pytest.mark.parametrize("loss", ["binder", "vi"])
def test_estimate_is_invariant_to_relabelling_the_draws(loss):
    rng = np.random.default_rng(6)
    for _ in range(10):
        n, S = int(rng.integers(2, 20)), int(rng.integers(1, 30))
        draws = random_draws(rng, n, S)
        est = partition_point_estimate(draws, loss=loss)
        again = partition_point_estimate(relabel_each_draw(rng, draws), loss=loss)
        np.testing.assert_array_equal(est, again)


def scipy_average_linkage_cuts(draws, max_k=30):
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    P = co_clustering_matrix(draws)
    n = P.shape[0]
    Z = linkage(squareform(1.0 - P, checks=False), method="average")
    return [fcluster(Z, t=k, criterion="maxclust") for k in range(1, min(n, max_k) + 1)]


def test_without_greedy_the_best_candidate_is_returned():
    """Candidates: the draws and the average-linkage cuts of 1 - psm (scipy, here)."""
    rng = np.random.default_rng(7)
    cut_wins = 0
    for _ in range(12):
        n, S = int(rng.integers(3, 15)), int(rng.integers(2, 20))
        draws = random_draws(rng, n, S)
        cuts = scipy_average_linkage_cuts(draws)
        for loss, ref in (("binder", expected_binder_loop), ("vi", expected_vi_loop)):
            best_draw = min(ref(d, draws) for d in draws)
            best_cut = min(ref(c, draws) for c in cuts)
            est = partition_point_estimate(draws, loss=loss, greedy=False)
            assert ref(est, draws) == pytest.approx(min(best_draw, best_cut), abs=1e-12)
            cut_wins += best_cut < best_draw - 1e-9
    assert cut_wins >= 3


def _single_moves(c):
    k = int(c.max()) + 1
    for i in range(len(c)):
        for target in range(k + 1):
            if target != c[i]:
                m = c.copy()
                m[i] = target
                yield m


def _is_local_optimum(c, draws, ref):
    """No single-point move (incl. to a new cluster) or merge of two clusters improves c."""
    best = ref(c, draws)
    if any(ref(m, draws) < best - 1e-12 for m in _single_moves(c)):
        return False
    k = int(c.max()) + 1
    return all(
        ref(np.where(c == b, a, c), draws) >= best - 1e-12
        for a, b in itertools.combinations(range(k), 2)
    )


@pytest.mark.parametrize("loss", ["binder", "vi"])
def test_greedy_result_is_a_local_optimum(loss):
    # Diffuse posteriors (independent random labellings): the best draw / cut is usually not
    # a local optimum, so the local search has to do the work.
    ref = expected_binder_loop if loss == "binder" else expected_vi_loop
    S, k = {"binder": (3, 3), "vi": (6, 4)}[loss]
    improved = 0
    for seed in range(6):
        rng = np.random.default_rng(300 + seed)
        draws = rng.integers(0, k, size=(S, 11))
        plain = partition_point_estimate(draws, loss=loss, greedy=False)
        est = partition_point_estimate(draws, loss=loss)
        assert _is_local_optimum(est, draws, ref)
        assert ref(est, draws) <= ref(plain, draws) + 1e-12
        improved += ref(est, draws) < ref(plain, draws) - 1e-9
    assert improved >= 3


@pytest.mark.parametrize("loss", ["binder", "vi"])
def test_estimate_recovers_the_truth_from_noisy_copies(loss):
    rng = np.random.default_rng(9)
    n, S = 60, 200
    truth = np.repeat([0, 1, 2, 3], 15)
    rng.shuffle(truth)
    noisy = np.where(rng.random((S, n)) < 0.08, rng.integers(0, 6, (S, n)), truth)
    draws = relabel_each_draw(rng, noisy)
    # no draw equals the truth, so the truth has to be found by the search
    assert not any(binder_loop(d, truth) == 0 for d in draws[:20])
    est = partition_point_estimate(draws, loss=loss)
    first_seen = {}
    expected = np.array([first_seen.setdefault(v, len(first_seen)) for v in truth.tolist()])
    np.testing.assert_array_equal(est, expected)


def test_psm_and_candidates_arguments():
    rng = np.random.default_rng(10)
    n, S = 7, 12
    draws = random_draws(rng, n, S)
    psm = co_clustering_matrix(draws)
    np.testing.assert_array_equal(
        partition_point_estimate(draws, psm=psm), partition_point_estimate(draws)
    )
    # a user psm defines the Binder loss: psm of the all-singletons partition -> singletons
    np.testing.assert_array_equal(partition_point_estimate(draws, psm=np.eye(n)), np.arange(n))


def test_candidates_and_greedy_beat_the_draws_and_cuts():
    # Seed found by search: here neither a draw nor a hierarchical cut is optimal.
    rng = np.random.default_rng(158)
    n, S = int(rng.integers(4, 8)), int(rng.integers(2, 10))
    draws = rng.integers(0, int(rng.integers(2, n + 1)), size=(S, n))
    losses = np.array([expected_binder_loop(p, draws) for p in ALL_PARTITIONS[n]])
    opt = ALL_PARTITIONS[n][int(np.argmin(losses))]
    plain = partition_point_estimate(draws, greedy=False)
    assert expected_binder_loop(plain, draws) > losses.min() + 1e-6
    with_opt = partition_point_estimate(draws, candidates=[opt * 2 + 5], greedy=False)
    assert expected_binder_loop(with_opt, draws) == pytest.approx(losses.min(), abs=ATOL)
    searched = partition_point_estimate(draws)
    assert expected_binder_loop(searched, draws) == pytest.approx(losses.min(), abs=ATOL)


def test_screened_vi_candidates_and_single_point():
    rng = np.random.default_rng(11)
    draws = random_draws(rng, 12, 40)
    est = partition_point_estimate(draws, loss="vi", max_vi_candidates=2)
    _check_compact(est, 12)
    full = partition_point_estimate(draws, loss="vi")
    assert expected_vi_loop(full, draws) <= expected_vi_loop(est, draws) + 1e-12
    np.testing.assert_array_equal(partition_point_estimate([[4], [7]]), [0])
    np.testing.assert_array_equal(partition_point_estimate([[4], [7]], loss="vi"), [0])


def test_point_estimate_bad_input():
    draws = [[0, 0, 1], [0, 1, 1]]
    with pytest.raises(ValueError, match="loss"):
        partition_point_estimate(draws, loss="l2")
    with pytest.raises(ValueError, match="label_draws"):
        partition_point_estimate([0, 0, 1])
    with pytest.raises(ValueError, match="label_draws"):
        partition_point_estimate([[0, 0.5, 1]])
    with pytest.raises(TypeError, match="label_draws"):
        partition_point_estimate([["a", "b"]])
    with pytest.raises(ValueError, match="psm"):
        partition_point_estimate(draws, psm=np.eye(4))
    with pytest.raises(ValueError, match="candidates"):
        partition_point_estimate(draws, candidates=[[0, 1]])
    with pytest.raises(TypeError, match="greedy"):
        partition_point_estimate(draws, greedy="yes")
    with pytest.raises(ValueError, match="max_vi_candidates"):
        partition_point_estimate(draws, max_vi_candidates=0)
