"""Consensus validity indices of bayesclust.metrics: purity, ANMI, ACC, Div1..Div4.

References: scikit-learn's NMI and ARI, and slow literal Python loops of the papers' formulas
(Fred & Jain 2005; Strehl & Ghosh 2002; Duarte et al. 2009, 2010; Hadjitodorov, Kuncheva &
Todorova 2006), on random ensembles with objects left out of partitions (label -1).
"""

import math

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score as sk_ari
from sklearn.metrics import normalized_mutual_info_score as sk_nmi

from bayesclust import metrics
from bayesclust.metrics import Diversity, acc, anmi, consistency_index, diversity, purity

TOL = 1e-10  # float64 round-off: the loops and the vectorised code sum in different orders


# --------------------------------------------------------------------------- helpers


def random_ensemble(rng, n, n_partitions, missing=0.0):
    """Partitions with arbitrary integer ids, ``missing`` of the objects set to -1 in each."""
    E = []
    for _ in range(n_partitions):
        k = int(rng.integers(1, 9))
        row = rng.choice(rng.integers(0, 50, k), size=n)
        if missing:
            row = np.where(rng.random(n) < missing, -1, row)
            row[rng.integers(n)] = 7  # at least one object present
        E.append(row)
    E = np.array(E)
    gone = np.all(E < 0, axis=0)
    E[0, gone] = 3  # no object missing from every partition
    return E


def random_consensus(rng, n):
    return rng.choice([-4, 0, 2, 9, 11][: int(rng.integers(1, 6))], size=n)


def present(consensus, row):
    obs = row >= 0
    return np.asarray(consensus)[obs], row[obs]


def count(mask):
    return sum(1 for v in mask if v)


def purity_loop(truth, pred):
    n = len(truth)
    total = 0
    for m in set(pred.tolist()):
        total += max(count((truth == c) & (pred == m)) for c in set(truth.tolist()))
    return total / n


def acc_loop(consensus, E, weighted=True):
    sims = []
    for row in E:
        cons, part = present(consensus, row)
        n_l = len(part)
        s = 0.0
        for m in set(part.tolist()):
            best = 0.0
            for k in set(cons.tolist()):
                size_k = count(cons == k)
                w = (1.0 - size_k / n_l) if weighted else 1.0
                best = max(best, count((cons == k) & (part == m)) * w)
            s += best
        sims.append(s / n_l)
    return sum(sims) / len(sims)


def diversity_loop(consensus, E):
    d = []
    for row in E:
        cons, part = present(consensus, row)
        d.append(1.0 - max(0.0, sk_ari(part, cons)))
    N = len(d)
    div1 = sum(d) / N
    div2 = math.sqrt(sum((x - div1) ** 2 for x in d) / (N - 1))
    div3 = (1.0 - div1 + div2) / 2.0
    div4 = div2 / div1 if div1 > 0 else 0.0
    return div1, div2, div3, div4


def anmi_sklearn(consensus, E):
    return float(np.mean([sk_nmi(*present(consensus, row), average_method="geometric")
                          for row in E]))


class PosteriorLike:
    """The interface ``check_ensemble`` reads from a ``Posterior`` (its pooled label draws)."""

    def __init__(self, labels):
        self._labels = np.asarray(labels).reshape(2, -1, np.shape(labels)[-1])
        self.n_points = self._labels.shape[-1]

    @property
    def pooled_labels(self):
        return self._labels.reshape(-1, self.n_points)


CASES = [(seed, missing) for seed in range(12) for missing in (0.0, 0.3)]


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("seed", range(20))
def test_purity_matches_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    truth, pred = random_consensus(rng, n), random_ensemble(rng, n, 1)[0]
    assert purity(truth, pred) == pytest.approx(purity_loop(truth, pred), abs=TOL)
    # many-to-one is never below the one-to-one matching of CI
    assert purity(truth, pred) >= consistency_index(truth, pred) - TOL


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_anmi_matches_sklearn_geometric_nmi(seed, missing):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    E = random_ensemble(rng, n, int(rng.integers(2, 9)), missing)
    c = random_consensus(rng, n)
    assert anmi(c, E) == pytest.approx(anmi_sklearn(c, E), abs=TOL)
    assert anmi(c, list(E)) == anmi(c, E)


@pytest.mark.parametrize(("seed", "missing"), CASES)
@pytest.mark.parametrize("weighted", [True, False])
def test_acc_matches_loop(seed, missing, weighted):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 120))
    E = random_ensemble(rng, n, int(rng.integers(2, 9)), missing)
    c = random_consensus(rng, n)
    assert acc(c, E, weighted=weighted) == pytest.approx(acc_loop(c, E, weighted), abs=TOL)


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_diversity_matches_loop(seed, missing):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 120))
    E = random_ensemble(rng, n, int(rng.integers(2, 9)), missing)
    c = random_consensus(rng, n)
    got = diversity(c, E)
    assert isinstance(got, Diversity)
    np.testing.assert_allclose(tuple(got), diversity_loop(c, E), rtol=0, atol=TOL)


def test_partitions_with_fewer_clusters_than_the_consensus_are_scored_by_the_formula():
    rng = np.random.default_rng(5)
    c = rng.integers(0, 6, 60)
    E = rng.integers(0, 2, (4, 60))  # K^l = 2 < K* = 6
    E[1, :10] = -1
    value = acc(c, E)
    assert np.isfinite(value) and value == pytest.approx(acc_loop(c, E), abs=TOL)


def test_a_posterior_counts_as_its_pooled_draws():
    rng = np.random.default_rng(3)
    draws = rng.integers(0, 4, (6, 40))
    c = rng.integers(0, 3, 40)
    post = PosteriorLike(draws)
    assert anmi(c, post) == anmi(c, draws)
    assert acc(c, post) == acc(c, draws)
    assert diversity(c, post) == diversity(c, draws)


def test_exported():
    for name in ("purity", "anmi", "acc", "diversity", "Diversity"):
        assert name in metrics.__all__


# --------------------------------------------------------------------------- paper


@pytest.mark.paper
@pytest.mark.parametrize("seed", range(3))
def test_acc_weighting_of_nested_partitions(seed):
    """Every cluster of every partition lies inside one of the three half-ring clusters
    (150/150/200): ACC = 1 - sum_k (n_k / n)^2 = 0.66 with the weight (the ACC paper reports
    0.6595 for such a partition, Duarte et al. 2009, half-rings table) and 1 without."""
    rng = np.random.default_rng(seed)
    c = np.repeat([0, 1, 2], [150, 150, 200])
    E = []
    for _ in range(20):
        sub = rng.integers(0, int(rng.integers(1, 8)), c.shape[0])
        E.append(c * 10 + sub)  # each consensus cluster split into random sub-clusters
    E = np.array(E)
    assert acc(c, E) == pytest.approx(1 - (0.3**2 + 0.3**2 + 0.4**2), abs=1e-12)
    assert acc(c, E) == pytest.approx(0.66, abs=1e-12)
    assert acc(c, E, weighted=False) == 1.0
    # on sub-samples the sizes are those of the objects present
    for row in E:
        row[rng.permutation(500)[:100]] = -1
    expected = np.mean([1 - np.sum((np.bincount(c[r >= 0]) / np.sum(r >= 0)) ** 2) for r in E])
    assert acc(c, E) == pytest.approx(expected, abs=1e-12)
    assert acc(c, E, weighted=False) == 1.0


# --------------------------------------------------------------------------- degenerate cases


def test_one_cluster_consensus():
    rng = np.random.default_rng(0)
    E = rng.integers(0, 4, (5, 30))
    E[2] = 0  # a constant partition too
    E[3, :5] = -1
    c = np.full(30, 7)
    assert acc(c, E) == 0.0  # every weight 1 - n_l / n_l is 0
    assert acc(c, E, weighted=False) == 1.0
    assert anmi(c, E) == pytest.approx(1 / 5)  # NMI 1 with the constant partition, 0 otherwise
    got = diversity(c, E)
    assert all(np.isfinite(got))
    np.testing.assert_allclose(tuple(got), diversity_loop(c, E), atol=TOL)


def test_all_singleton_consensus():
    rng = np.random.default_rng(1)
    E = rng.integers(0, 4, (5, 30))
    E[1, :6] = -1
    c = np.arange(30)
    n_l = (E >= 0).sum(axis=1)
    k_l = np.array([len(set(r[r >= 0].tolist())) for r in E])
    assert acc(c, E) == pytest.approx(np.mean(k_l * (1 - 1 / n_l) / n_l), abs=TOL)
    assert acc(c, E, weighted=False) == pytest.approx(np.mean(k_l / n_l), abs=TOL)
    assert anmi(c, E) == pytest.approx(anmi_sklearn(c, E), abs=TOL)
    assert all(np.isfinite(diversity(c, E)))
    assert purity(np.zeros(30, int), c) == 1.0


def test_diversity_when_every_partition_is_the_consensus():
    c = np.array([0, 0, 1, 1, 2, 2])
    E = np.array([[5, 5, 3, 3, 1, 1], [0, 0, 1, 1, -1, 2]])
    assert diversity(c, E) == Diversity(0.0, 0.0, 0.5, 0.0)  # Div4 := 0 at Div1 = 0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("fn", [anmi, acc, diversity])
def test_bad_input_names_the_argument(fn):
    E = np.array([[0, 1, 1], [1, 1, 0]])
    with pytest.raises(ValueError, match="consensus_labels"):
        fn([0, 1], E)  # different lengths
    with pytest.raises(ValueError, match="ensemble"):
        fn([0, 1, 1], [])
    with pytest.raises(ValueError, match="ensemble"):
        fn([0, 1, 1], np.empty((0, 3), int))
    with pytest.raises(ValueError, match="ensemble"):
        fn([0, 1, 1], [[0, 1, 1]])  # a single partition
    with pytest.raises(ValueError, match="consensus_labels"):
        fn([0, 0.5, 1], E)
    with pytest.raises(ValueError, match="ensemble"):
        fn([0, 1, 1], [[0, 1.5, 1], [1, 1, 0]])
    with pytest.raises(TypeError, match="consensus_labels"):
        fn(["a", "b", "c"], E)
    with pytest.raises(ValueError, match=r"ensemble\[1\]"):
        fn([0, 1, 1], [[0, 1, 1], [-1, -1, -1]])
    with pytest.raises(ValueError, match="ensemble"):
        fn([0, 1, 1], [[0, 1, 1], [0, 1, -2]])


def test_bad_input_purity_and_weighted():
    with pytest.raises(ValueError, match="labels_true"):
        purity([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="labels_pred"):
        purity([0, 1, 1], [0, 0.5, 1])
    with pytest.raises(TypeError, match="weighted"):
        acc([0, 1, 1], [[0, 1, 1], [1, 1, 0]], weighted="yes")


@pytest.mark.parametrize("seed", range(10))
def test_check_ensemble_numbers_clusters_in_order_of_sorted_label(seed):
    """The counting renumbering of check_ensemble equals np.unique's, -1 kept for missing."""
    from bayesclust._validation import check_ensemble

    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 50))
    scale = [1, 3, 10**9][seed % 3]  # the last: labels too spread to count, sorted instead
    E = rng.integers(0, int(rng.integers(1, 9)), (4, n)) * scale + int(rng.integers(0, 5))
    E[rng.random((4, n)) < 0.3] = -1
    E[0, np.all(E < 0, axis=0)] = 2
    expected = np.full(E.shape, -1)
    for l, row in enumerate(E):
        obs = row >= 0
        expected[l, obs] = np.unique(row[obs], return_inverse=True)[1]
    np.testing.assert_array_equal(check_ensemble(E, allow_missing=True), expected)
