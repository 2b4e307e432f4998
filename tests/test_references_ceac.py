"""The second derivation of EAC single link (``reproduce/references/ceac.py``, written from Duarte,
Fred & Duarte 2009 alone: its own co-association, single link by Kruskal on Prim's tree and
consistency index) against the package's ``coassociation`` / ``linkage_consensus`` /
``consistency_index`` on tiny ensembles with duplicated objects (co-association-1 ties): the
same co-association; at K = 2 and 3 the same partition and Ci when the (n-K)-th and
(n-K+1)-th single-link heights differ, and otherwise two single-link partitions that differ only
by the order of tied merges (neither paper fixes it)."""

import numpy as np

from bayesclust import coassociation, kmeans_ensemble, linkage_consensus, metrics
from reproduce.references import ceac as ref


def _same_partition(a, b) -> bool:
    pairs = set(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
    return len(pairs) == len(set(np.asarray(a).tolist())) == len(set(np.asarray(b).tolist()))


def _is_single_link_cut(D, labels) -> bool:
    """No two clusters closer than the heaviest minimum-spanning-tree edge inside a cluster."""
    inner = max((max((w for _, _, w in ref.prim_mst(D[np.ix_(m, m)])), default=0.0)
                 for m in (np.flatnonzero(labels == k) for k in np.unique(labels))), default=0.0)
    between = D[labels[:, None] != labels[None, :]].min()
    return between >= inner


def test_reference_and_package_eac_single_link_agree():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 12)
    X = rng.normal(size=(36, 2)) + 2.5 * np.array([[0, 0], [1, 0], [0, 1]])[truth]
    X[1::4] = X[0::4]  # duplicated rows: pairs with co-association exactly 1
    untied = 0
    for ensemble in (np.asarray(kmeans_ensemble(0, X, 12, n_clusters_range=(3, 8)).labels),
                     ref.kmeans_ensemble(X, np.random.default_rng(1), 12, (3, 8))):
        C = coassociation(ensemble)
        dense = C.toarray() if hasattr(C, "toarray") else np.asarray(C)
        mine = ref.coassociation(ensemble)
        np.testing.assert_allclose(dense[~np.eye(36, dtype=bool)], mine[~np.eye(36, dtype=bool)])
        for K in (2, 3):
            ours = linkage_consensus(C, "single", K).labels
            theirs = ref.single_link(1.0 - mine, K)
            assert len(set(theirs.tolist())) == K == len(set(np.asarray(ours).tolist()))
            heights = np.sort([w for _, _, w in ref.prim_mst(1.0 - mine)])
            if heights[36 - K] > heights[36 - K - 1]:
                untied += 1
                assert _same_partition(ours, theirs)
                assert metrics.consistency_index(truth, ours) == ref.consistency_index(theirs, truth)
            else:
                assert _is_single_link_cut(1.0 - mine, np.asarray(ours))
                assert _is_single_link_cut(1.0 - mine, theirs)
    assert untied >= 2
