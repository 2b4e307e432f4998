"""The second derivation of DR-EAC's Isomap column (``reproduce/references/dreac.py``, written from
Aidos & Fred 2011 alone) against the package on a tiny ensemble: same co-association, same Isomap
embedding (up to rotation: the same pairwise distances), same extractor partitions and CI."""

import numpy as np
from scipy.spatial.distance import pdist

from bayesclust import coassociation, embed_coassociation, embedded_consensus, kmeans_ensemble, metrics
from reproduce.references import dreac as ref


def test_reference_and_package_dreac_isomap_agree_on_a_tiny_ensemble():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(30, 2)) + 2.5 * np.array([[0, 0], [1, 0], [0, 1]])[truth]
    labels = np.asarray(kmeans_ensemble(0, X, 12, n_clusters_range=(2, 6)).labels)
    C = ref.coassociation(labels)  # eq. (2)
    np.testing.assert_allclose(coassociation(labels).toarray(), C, atol=1e-12)
    # a continuous similarity (no ties in the k-NN graph) so both Isomaps see the same graph
    dist = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    S = 1.0 - dist / dist.max()
    Y, k, d, _ = ref.isomap(1.0 - S, neighbours=(8,), max_dim=2, rv_tol=0.0)
    ours = embed_coassociation(S, "isomap", 2, n_neighbors=8).embedding
    assert (k, d) == (8, 2)
    np.testing.assert_allclose(pdist(ours), pdist(Y), rtol=1e-6, atol=1e-9)
    for m in ("single", "complete", "average", "ward", "centroid", "median", "weighted"):
        mine = ref.extract(Y, 3, m, 0)
        theirs = embedded_consensus(ours, 3, m, 0)
        assert ref.consistency_index(mine, theirs) == 1.0, m
        np.testing.assert_allclose(ref.consistency_index(truth, mine), metrics.consistency_index(truth, theirs))
