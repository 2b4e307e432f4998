"""Evidence accumulation: K rules, ensembles, sparse co-association, linkage consensus."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from bayesclust import metrics
from bayesclust.inference.consensus import coassociation as coassoc
from bayesclust.inference.consensus import ensembles
from bayesclust.inference.consensus import linkage as linkages
from bayesclust.inference.mixtures.posterior import Posterior

# Scalability paper Table I (Lourenco, Fred & Jain 2010): (name, n, (A) kmin, kmax, (B) kmin, kmax).
TABLE_I = [
    ("iris", 150, 6, 12, 3, 8),
    ("wine-norm", 178, 7, 13, 4, 9),
    ("spiral", 200, 7, 14, 4, 10),
    ("house.votes", 232, 8, 15, 5, 12),
    ("cigar", 250, 8, 16, 5, 13),
    ("ionosphere", 351, 9, 19, 7, 18),
    ("std-yeast", 384, 10, 20, 8, 19),
    ("rings", 450, 11, 21, 9, 23),
    ("chart", 600, 13, 21, 12, 30),
    ("breast-cancer", 683, 13, 26, 14, 34),
    ("pima-norm", 768, 14, 28, 15, 38),
    ("optdigits", 1000, 16, 32, 20, 50),
    ("mfeat-fou", 2000, 23, 45, 40, 100),
    ("textures", 4000, 32, 63, 80, 200),
    ("isolet", 7797, 44, 88, 156, 390),
]
# Three cells in two rows do not follow round-half-up (docs/deviations.md#k-rule-rounding).
EXCEPTIONS = {("chart", "A", 0), ("chart", "A", 1), ("mfeat-fou", "A", 0)}


def test_k_rules_reproduce_table_I():
    mismatches = set()
    for name, n, a0, a1, b0, b1 in TABLE_I:
        got_a = ensembles.k_bounds(n, "sqrt", rounding="round_half_up")
        got_b = ensembles.k_bounds(n, "linear", rounding="round_half_up", A=50, B=20)
        for j, (g, t) in enumerate(zip(got_a, (a0, a1))):
            if g != t:
                mismatches.add((name, "A", j))
        for j, (g, t) in enumerate(zip(got_b, (b0, b1))):
            if g != t:
                mismatches.add((name, "B", j))
    assert mismatches == EXCEPTIONS
    # Half-to-even rounding would give cigar (B) 12 and rings (B) 22.
    assert ensembles.k_bounds(250, "linear", rounding="round_half_up")[1] == 13
    # PEnCA rule on iris (K in [7, 27]); ceil of the linear rule.
    assert ensembles.k_bounds(150) == (7, 27)
    assert ensembles.k_bounds(683) == (14, 34)
    assert ensembles.k_bounds(1001, "linear") == (21, 51)


def _random_ensemble(rng, N, n, kmax=5):
    return np.stack([rng.integers(0, rng.integers(1, kmax + 1), n) for _ in range(N)])


def test_sparse_coassociation_equals_dense_count():
    rng = np.random.default_rng(0)
    for N, n in [(2, 7), (9, 40), (30, 25)]:
        L = _random_ensemble(rng, N, n)
        C = coassoc.coassociation(L, max_pairs_per_batch=50)  # several batches
        ref = metrics.co_clustering_matrix(L) * N  # independent one-hot product
        U = C.counts.toarray()
        np.testing.assert_array_equal(U, np.triu(np.rint(ref), 1))
        assert np.all(np.tril(U) == 0)
        np.testing.assert_allclose(C.toarray(), metrics.co_clustering_matrix(L), atol=1e-15)
        np.testing.assert_allclose(coassoc.coassociation_dense(L), metrics.co_clustering_matrix(L), atol=1e-15)
        # |S| = sum_l sum_k |C_k|(|C_k| - 1) (ordered pairs, PEnCA paper eq. 3).
        S = sum(int(np.sum(np.bincount(r) * (np.bincount(r) - 1))) for r in L)
        assert C.symmetric_counts().sum() == S
        assert C.pair_trials is None


def test_subsampled_coassociation_matches_slow_loop():
    rng = np.random.default_rng(1)
    N, n = 13, 20
    L = _random_ensemble(rng, N, n, 4)
    L[rng.random((N, n)) < 0.3] = -1
    L[0] = np.arange(n) % 3  # every object sampled at least once
    C = coassoc.coassociation(L, allow_missing=True)
    counts = np.zeros((n, n))
    trials = np.zeros((n, n))
    for l, i, j in itertools.product(range(N), range(n), range(n)):
        if L[l, i] >= 0 and L[l, j] >= 0:
            trials[i, j] += 1
            counts[i, j] += L[l, i] == L[l, j]
    np.testing.assert_array_equal(C.counts.toarray(), np.triu(counts, 1))
    coo = C.pair_trials.tocoo()
    np.testing.assert_array_equal(coo.data, trials[coo.row, coo.col])
    dense = np.where(trials > 0, counts / np.where(trials > 0, trials, 1), 0)
    np.testing.assert_allclose(C.toarray(), dense)
    np.testing.assert_allclose(coassoc.coassociation_dense(L, allow_missing=True), dense)
    assert C.normalized().max() <= 1.0


def test_coassociation_invariances():
    rng = np.random.default_rng(2)
    L = _random_ensemble(rng, 8, 30)
    base = coassoc.coassociation(L).counts.toarray()
    relabelled = np.stack([rng.permutation(7)[r] * 3 + 11 for r in L])  # any integers per partition
    np.testing.assert_array_equal(coassoc.coassociation(relabelled).counts.toarray(), base)
    np.testing.assert_array_equal(coassoc.coassociation(L[::-1]).counts.toarray(), base)
    # A list of vectors, an (N, n) array and a Posterior's draws are the same input.
    np.testing.assert_array_equal(coassoc.coassociation(list(L)).counts.toarray(), base)
    np.testing.assert_array_equal(coassoc.coassociation(Posterior(L)).counts.toarray(), base)


def test_cut_by_merge_order_survives_ties():
    # Two blocks of two, all merges at height 1 except none: fcluster(maxclust) can
    # return fewer clusters than asked; the merge-order cut cannot (docs/deviations.md#eac-fixed-k-cut).
    Z = np.array([[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 1.0, 4]])
    assert np.unique(fcluster(Z, 3, "maxclust")).size != 3
    for K in range(1, 5):
        assert np.unique(linkages.cut_tree_at(Z, K)).size == K
    assert linkages.cut_tree_at(Z, 3).tolist() == [0, 0, 1, 2]


def test_cut_equals_fcluster_without_ties():
    rng = np.random.default_rng(3)
    D = rng.random((25, 25))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    Z = linkage(squareform(D), "average")
    for K in (2, 3, 5, 9):
        t = (Z[-K, 2] + Z[-K + 1, 2]) / 2
        ref = fcluster(Z, t, "distance")
        assert metrics.ari(ref, linkages.cut_tree_at(Z, K)) == 1.0


def test_lifetimes_hand_made():
    # n = 5, heights 0.1 0.15 0.2 0.8: the 2-cluster partition lives 0.6.
    life = linkages.lifetimes([0.1, 0.15, 0.2, 0.8])
    np.testing.assert_allclose(life, [0, 0, 0.6, 0.05, 0.05, 0.1])
    np.testing.assert_allclose(linkages.lifetimes([0.1, 0.15, 0.2, 0.3], allow_k1=True)[1], 0.7)
    np.testing.assert_allclose(linkages.lifetimes([0.3, 0.2])[2:], [0.0, 0.3])  # inversion clipped
    with pytest.raises(ValueError, match="heights contains NaN"):
        linkages.lifetimes([0.1, np.nan, 0.8])
    with pytest.raises(ValueError, match="heights must be a 1-D array"):
        linkages.lifetimes([[0.1, 0.2]])


def test_single_link_is_scipy_single_link():
    rng = np.random.default_rng(4)
    truth = np.repeat(np.arange(3), 12)
    L = np.stack([np.where(rng.random(36) < 0.2, rng.integers(0, 6, 36), truth * 2 + rng.integers(0, 2, 36))
                  for _ in range(20)])
    C = coassoc.coassociation(L)
    res = linkages.linkage_consensus(C, "single", 3)
    D = 1 - metrics.co_clustering_matrix(L)
    np.fill_diagonal(D, 0)
    Zs = linkage(squareform(D, checks=False), "single")
    np.testing.assert_allclose(np.sort(res.linkage[:, 2]), np.sort(Zs[:, 2]), atol=1e-12)
    # Wherever the k-th and (k+1)-th highest merges are separated, the partitions agree.
    h = np.sort(Zs[:, 2])
    for K in range(2, 8):
        if h[-K] < h[-K + 1]:
            t = (h[-K] + h[-K + 1]) / 2
            ref = fcluster(Zs, t, "distance")
            assert metrics.ari(ref, linkages.linkage_consensus(C, "single", K).labels) == 1.0


def test_sparse_average_link_equals_scipy():
    rng = np.random.default_rng(5)
    n = 50
    A = rng.random((n, n))
    A = (A + A.T) / 2
    A[A < 0.55] = 0  # missing pairs are at distance exactly 1
    np.fill_diagonal(A, 0)
    Z = linkages._average_linkage_sparse(sp.triu(sp.csr_matrix(A), 1).tocsr())
    D = 1 - A
    np.fill_diagonal(D, 0)
    ref = linkage(squareform(D), "average")
    np.testing.assert_allclose(Z[:, 2], ref[:, 2], atol=1e-12)
    np.testing.assert_array_equal(Z[:, [0, 1, 3]], ref[:, [0, 1, 3]])


def test_linkage_consensus_recovers_blocks_by_lifetime():
    rng = np.random.default_rng(6)
    truth = np.repeat(np.arange(4), [10, 15, 5, 20])
    # Each partition splits every block in two at random: blocks always co-clustered halves.
    L = np.stack([truth * 2 + rng.integers(0, 2, truth.size) for _ in range(30)])
    for method, dense in [("single", None), ("average", True), ("average", False)]:
        res = linkages.linkage_consensus(L, method, dense=dense)
        assert res.n_clusters == 4
        assert metrics.ari(truth, res.labels) == 1.0
    # Everything always together: one cluster, found only with allow_k1.
    one = np.zeros((5, 12), int)
    assert linkages.linkage_consensus(one, "average", allow_k1=True).n_clusters == 1
    assert linkages.linkage_consensus(one, "average").n_clusters == 2


def test_kmeans_ensemble_k_rule_and_subsample():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 2))
    ens = ensembles.kmeans_ensemble(0, X, 12)
    assert ens.labels.shape == (12, 120)
    assert (ens.k_min, ens.k_max) == ensembles.k_bounds(120)
    assert np.all((ens.n_clusters >= ens.k_min) & (ens.n_clusters <= ens.k_max))
    for l in range(12):  # an empty k-means cluster is possible, never more clusters than K
        assert np.unique(ens.labels[l]).size <= ens.n_clusters[l]
    sub = ensembles.kmeans_ensemble(1, X, 6, subsample=0.75, n_clusters_range=(3, 5))
    assert np.all((sub.labels < 0).sum(1) == 30)
    C = coassoc.coassociation(sub)
    assert C.pair_trials is not None and np.all(C.pair_trials.data >= C.counts.data)
    again = ensembles.kmeans_ensemble(0, X, 12)
    np.testing.assert_array_equal(again.labels, ens.labels)  # explicit randomness


def test_ensemble_kmeans_runs_equal_reference_lloyd():
    import jax

    from bayesclust.inference.hard.kmeans import kmeans

    rng = np.random.default_rng(8)
    X = np.repeat([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]], 10, axis=0) + rng.normal(size=(30, 2))
    # numpy backend: same initial points -> the same Lloyd fixed point as inference.hard.kmeans.
    lab = ensembles._kmeans_numpy(np.random.default_rng(3), X, 4, 100)
    init = X[np.random.default_rng(3).choice(30, size=4, replace=False)]
    ref = kmeans(0, X, 4, init=init, tol=0.0).labels
    np.testing.assert_array_equal(lab, ref)
    # jax backend (masked buffer of capacity 6 with K = 4 active) equals the jitted
    # reference k-means from the same initial points.  (An eager run takes ~10 s on
    # this machine: not repeated here.)
    key = jax.random.PRNGKey(5)
    idx = np.asarray(jax.random.permutation(key, 30)[:6])
    with jax.enable_x64(True):
        ref = kmeans(0, X, 4, init=X[idx[:4]], tol=0.0).labels
        lab_jit = np.asarray(ensembles._masked_kmeans(key, X, 4, 6, 100))
    np.testing.assert_array_equal(lab_jit, ref)
    ens = ensembles.kmeans_ensemble(0, X, 3, n_clusters_range=(2, 4), backend="jax")
    assert ens.labels.shape == (3, 30) and ens.labels.min() >= 0


def test_bad_ensemble():
    with pytest.raises(ValueError, match="same length"):
        coassoc.coassociation([[0, 1, 1], [0, 1]])
    with pytest.raises(ValueError, match="single labeling"):
        coassoc.coassociation([0, 1, 1, 0])
    with pytest.raises(ValueError, match="at least two partitions"):
        coassoc.coassociation([[0, 1, 1, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        coassoc.coassociation([[0, 1, -2, 0], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match="non-negative"):
        coassoc.coassociation([[0, 1, -1, 0], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match="every partition"):
        coassoc.coassociation([[0, 1, -1, 0], [0, 0, -1, 1]], allow_missing=True)
    with pytest.raises(ValueError, match="integer"):
        coassoc.coassociation([[0, 1.5], [0, 1]])
    with pytest.raises(ValueError, match="n_clusters"):
        linkages.linkage_consensus([[0, 1], [0, 0]], "average", 3)
    with pytest.raises(ValueError, match="method"):
        linkages.linkage_consensus([[0, 1], [0, 0]], "ward2")
    # a dense or sparse co-association is not an ensemble: the error says what to pass
    C = coassoc.coassociation([[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1]]).toarray()
    for wrong in (C, sp.csr_matrix(C)):
        with pytest.raises(ValueError, match="coassoc looks like a co-association.*CoAssociation"):
            linkages.linkage_consensus(wrong, "average", 2)
    with pytest.raises(ValueError, match="k_rule"):
        ensembles.k_bounds(10, "cube")
    with pytest.raises(ValueError, match="subsample"):
        ensembles.kmeans_ensemble(0, np.zeros((5, 2)) + np.arange(5)[:, None], 2, subsample=1.5)


# --- estimators ---------------------------------------------------------------------------


def _blobs(seed=0, n_per=15):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.repeat(centers, n_per, axis=0) + rng.normal(scale=0.7, size=(3 * n_per, 2))
    return X, np.repeat(np.arange(3), n_per)


def test_estimators_fit_X_and_ensemble_and_posterior():
    from sklearn.base import clone

    from bayesclust import AspectConsensus, EvidenceAccumulation

    X, y = _blobs()
    ea = EvidenceAccumulation(n_clusters=3, n_partitions=30, random_state=0).fit(X)
    assert metrics.ari(y, ea.labels_) == 1.0
    assert ea.ensemble_.shape == (30, 45) and ea.linkage_.shape == (44, 4)
    ea_life = EvidenceAccumulation(n_partitions=30, n_clusters_range=(2, 6), select=None,
                                   random_state=0).fit(X)
    assert ea_life.n_clusters_ == 3  # lifetime criterion with a coarse ensemble
    ac = AspectConsensus(n_clusters=3, n_partitions=30, n_init=5, random_state=0).fit(X)
    assert metrics.ari(y, ac.labels_) == 1.0
    np.testing.assert_allclose(ac.probabilities_.sum(1), 1.0)
    assert ac.probabilities_.shape == (45, 3)
    assert np.all(ac.labels_ == ac.probabilities_.argmax(1))
    # The same ensemble as an array, as a list, and as a Posterior's label draws.
    parts = ea.ensemble_
    post = Posterior(parts.reshape(2, 15, 45))  # 2 chains x 15 draws
    for source in (parts, list(parts), post):
        a = EvidenceAccumulation(n_clusters=3).fit(ensemble=source)
        np.testing.assert_array_equal(a.labels_, ea.labels_)
        b = AspectConsensus(n_clusters=3, n_init=5, random_state=0).fit(ensemble=source)
        assert metrics.ari(y, b.labels_) == 1.0
    hard = AspectConsensus(n_clusters=3, hard=True, random_state=0).fit(ensemble=post)
    assert metrics.ari(y, hard.labels_) == 1.0
    eac_init = AspectConsensus(n_clusters=3, init="eac", n_init=1).fit(ensemble=parts)
    assert metrics.ari(y, eac_init.labels_) == 1.0
    sel = AspectConsensus(max_clusters=5, n_init=3, random_state=0).fit(ensemble=parts)
    assert sel.n_clusters_ in range(1, 6) and sel.model_selection_.scores.shape == (5,)
    assert clone(ac).get_params() == ac.get_params()


def test_estimator_bad_input():
    from bayesclust import AspectConsensus, EvidenceAccumulation

    with pytest.raises(ValueError, match="ensemble"):
        EvidenceAccumulation().fit()
    with pytest.raises(ValueError, match="same length"):
        EvidenceAccumulation().fit(ensemble=[[0, 1, 1], [0, 1]])
    with pytest.raises(ValueError, match="single labeling"):
        AspectConsensus(n_clusters=2).fit(ensemble=[0, 1, 1, 0])
    with pytest.raises(ValueError, match="non-negative"):
        AspectConsensus(n_clusters=2).fit(ensemble=[[0, 1, -1, 0], [1, 1, 0, 0]])
    with pytest.raises(ValueError, match="n_clusters"):
        AspectConsensus(n_clusters=0).fit(ensemble=[[0, 1, 1, 0], [1, 1, 0, 0]])
    with pytest.raises(ValueError, match="samples"):
        EvidenceAccumulation().fit(np.zeros((3, 2)), ensemble=[[0, 1, 1, 0], [1, 1, 0, 0]])


def test_run_compare_consensus_writes_report(tmp_path):
    import json

    from bayesclust import datasets
    from bayesclust.jobs.consensus import run_compare_consensus

    s = run_compare_consensus("stars", tmp_path, seed=1, n_partitions=12, n_init=2, plot=False,
                              progress_bar=False)
    saved = json.loads((tmp_path / "compare_consensus.json").read_text())
    methods = [r["method"] for r in saved["rows"]]
    assert "PEnCA (EM)" in methods and "MM (EM)" in methods and "EAC average link, K" in methods
    assert all(0 < r["ci"] <= 1 for r in saved["rows"]) and "PEnCA (EM)" in s["report"]
    # The EAC row is the same computation done here independently from the same seed.
    X, y = datasets.make_stars(1)
    ref = linkages.linkage_consensus(coassoc.coassociation(ensembles.kmeans_ensemble(1, X, 12)), "average", 2).labels
    row = saved["rows"][methods.index("EAC average link, K")]
    assert row["ci"] == pytest.approx(metrics.consistency_index(y, ref))
    # so are CSPA and MCLA (Strehl & Ghosh 2002) on the same ensemble
    from bayesclust.inference.consensus.hypergraph import cspa, mcla

    ens = ensembles.kmeans_ensemble(1, X, 12)
    for name, lab in (("CSPA (Strehl-Ghosh)", cspa(1, coassoc.coassociation(ens), 2).labels),
                      ("MCLA (Strehl-Ghosh)", mcla(1, ens, 2).labels)):
        assert saved["rows"][methods.index(name)]["ci"] == pytest.approx(metrics.consistency_index(y, lab))
    assert saved["paper"]["look_alike"] is True
    with pytest.raises(ValueError, match="unknown data set"):
        run_compare_consensus("nope", tmp_path)


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from bayesclust import AspectConsensus, EvidenceAccumulation  # noqa: E402


@parametrize_with_checks([EvidenceAccumulation(n_clusters=3, n_partitions=10, random_state=0)])
def test_evidence_accumulation_sklearn_checks(estimator, check):
    check(estimator)


@pytest.mark.slow  # ~30 s: every check's data shape compiles PEnCA's EM afresh
@parametrize_with_checks([AspectConsensus(n_clusters=2, n_partitions=10, n_init=2, random_state=0)])
def test_aspect_consensus_sklearn_checks(estimator, check):
    check(estimator)


def test_consistency_index_is_the_optimal_one_to_one_matching():
    """metrics.consistency_index (reused, unchanged) = max over one-to-one cluster matchings."""
    # Contingency [[5, 4], [4, 0]]: greedy matching gives 5, optimal 8 (of 13).
    truth = np.repeat([0, 0, 1, 1], [5, 4, 4, 0])
    pred = np.repeat([0, 1, 0, 1], [5, 4, 4, 0])
    assert metrics.consistency_index(truth, pred) == pytest.approx(8 / 13)
    rng = np.random.default_rng(9)
    for _ in range(20):
        a, b = rng.integers(0, 3, 12), rng.integers(0, rng.integers(1, 5), 12)
        ka, kb = np.unique(a), np.unique(b)
        best = 0
        small, large = (ka, kb) if ka.size <= kb.size else (kb, ka)
        for perm in itertools.permutations(large, small.size):  # brute-force injective matchings
            pairs = zip(small, perm) if ka.size <= kb.size else zip(perm, small)
            best = max(best, sum(int(np.sum((a == i) & (b == j))) for i, j in pairs))
        assert metrics.consistency_index(a, b) == pytest.approx(best / 12)
