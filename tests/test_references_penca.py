"""The second derivation of PEnCA (``reproduce/references/penca.py``, written from Lourenço, Fred &
Figueiredo 2011 alone) against the package's ``aspect_em`` on a tiny ensemble: same counts, same
EM iterates from a shared start, same consistency index and average-link start."""

import numpy as np

from bayesclust import aspect_em, coassociation, kmeans_ensemble, linkage_consensus, metrics
from reproduce.references import penca as ref


def _tiny():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(30, 2)) + 2.5 * np.array([[0, 0], [1, 0], [0, 1]])[truth]
    ens = kmeans_ensemble(0, X, 12, n_clusters_range=(2, 6))
    return truth, ens


def test_reference_and_package_penca_agree_on_a_tiny_ensemble():
    truth, ens = _tiny()
    C = ref.coassociation_counts(np.asarray(ens.labels))  # eq. (4)
    ours_C = coassociation(ens)
    np.testing.assert_array_equal(ours_C.symmetric_counts().toarray(), C)
    assert C.sum() == len(ref.pair_multiset(np.asarray(ens.labels)))  # |S|, eq. (3)

    p0, B0 = ref.random_start(np.random.default_rng(1), 30, 3)
    # the count form is the paper's pair-by-pair EM
    p1, B1 = ref.m_step(ref.e_step(C, p0, B0), C.sum())
    q1, D1 = ref.em_step_on_pairs(ref.pair_multiset(np.asarray(ens.labels)), 30, p0, B0)
    np.testing.assert_allclose(B1, D1, rtol=1e-12)
    np.testing.assert_allclose(p1, q1, rtol=1e-12)

    mine = ref.em(C, p0, B0, tol=0.0, max_iter=25)
    ours = aspect_em(0, ours_C, 3, n_init=1, init=(p0, B0), tol=0.0, max_iter=25)
    assert ours.n_iter == mine["n_iter"]
    np.testing.assert_allclose(ours.objective_trace, mine["trace"], rtol=1e-11)
    np.testing.assert_allclose(ours.B, mine["B"], rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(ours.weights, mine["p"], rtol=1e-9)
    labels = ref.consensus_labels(mine["p"], mine["B"])
    np.testing.assert_array_equal(ours.labels, labels)
    np.testing.assert_allclose(ours.memberships, ref.posterior(mine["p"], mine["B"]), rtol=1e-9, atol=1e-12)
    assert ref.consistency_index(truth, labels) == metrics.consistency_index(truth, labels)

    al = ref.average_link_partition(C, 12, 3)
    assert ref.consistency_index(linkage_consensus(ours_C, "average", 3).labels, al) == 1.0

    # the matching is the best one-to-one, not the greedy one: table [[5, 4], [4, 0]]
    truth, labels = np.repeat([0, 0, 1], [5, 4, 4]), np.repeat([0, 1, 0], [5, 4, 4])
    assert ref.consistency_index(truth, labels) == metrics.consistency_index(truth, labels) == 8 / 13
    assert ref.consistency_index_greedy(truth, labels) == 5 / 13
