"""The second derivation of CEC-IB (``reproduce/references/cecib.py``, written from Śmieja & Geiger
2017 alone, every cluster cost recomputed from its members) against the package's ``cecib`` on a
tiny partially labelled set: from the same random partition both end at the same partition, with
the same number of clusters (after deletions) and the same cost."""

import numpy as np

from bayesclust import cecib, cecib_cost
from reproduce.references import cecib as ref


def _same_partition(a, b) -> bool:
    """The two labelings induce one partition (a bijection between their cluster ids)."""
    pairs = set(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_reference_and_package_cecib_end_alike_from_the_same_start():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 2)) + 4.0 * np.array([[0, 0], [1, 0], [0, 1]])[truth]
    z = ref.partial_labels(truth, 0.3, 0)
    deleted = 0
    for seed in range(3):
        start = ref.random_partition(np.random.default_rng(seed), 60, 5, "uniform")
        mine = ref.hartigan(X, z, start, beta=1.0, eps=0.05)
        ours = cecib(0, X, 5, z, beta=1.0, eps=0.05, init=start)
        assert ours.n_clusters == mine["n_clusters"]
        assert _same_partition(ours.labels, mine["assignment"])
        np.testing.assert_allclose(ours.objective, mine["cost"], rtol=1e-12)
        np.testing.assert_allclose(cecib_cost(X, ours.labels, z), ref.total_cost(X, z, ours.labels, 1.0), rtol=1e-12)
        deleted += 5 - mine["n_clusters"]
    assert deleted > 0  # the deletion and reassignment of line 20 was compared too
