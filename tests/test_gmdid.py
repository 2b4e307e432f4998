"""GMDID / KMDID: merging an initial partition by dissimilarity increments (Aidos & Fred 2012)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist
from sklearn.metrics import adjusted_rand_score

from bayesclust.graphs import increments
from bayesclust.inference.increments.gmdid import cluster_mahalanobis, gmdid, kmdid
from bayesclust.kernels import did_logpdf


def tree_loglik(A, floor):
    """Triplet increments plus the bridge increments of the minimum spanning tree, written out."""
    w = increments(A)
    lam = max(w.mean(), floor)
    D = cdist(A, A)
    np.fill_diagonal(D, np.inf)
    nn = D.argmin(axis=1)
    T = minimum_spanning_tree(np.where(np.isfinite(D), np.maximum(D, 1e-300), 0)).tocoo()
    extra = []
    for u, v in zip(T.row, T.col):
        if nn[u] != v and nn[v] != u:
            extra += [abs(D[u, v] - D[u, nn[u]]), abs(D[u, v] - D[v, nn[v]])]
    w = np.concatenate([w, extra])
    return float(np.sum(did_logpdf(w, lam))), w.size


def slow_gmdid(X, labels, criterion="mdl", alpha=0.05, lrt_rule="paper", n_clusters_min=1):
    """The algorithm as written: recompute everything, scan pairs by Mahalanobis distance."""
    w = increments(X)
    floor = w[w > 0].min()
    clusters = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    assert all(len(c) >= 3 for c in clusters)

    def gaussian(A):
        S = np.cov(A, rowvar=False, bias=True).reshape(A.shape[1], A.shape[1])
        return A.mean(0), S + 1e-6 * np.trace(S) / A.shape[1] * np.eye(A.shape[1])

    while len(clusters) > max(1, n_clusters_min):
        order = np.argsort([c.min() for c in clusters])  # the ids of the implementation
        g = [gaussian(X[c]) for c in clusters]
        pairs = []
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                diff = g[i][0] - g[j][0]
                pairs.append((diff @ np.linalg.solve((g[i][1] + g[j][1]) / 2, diff), i, j))
        merged = False
        for _, i, j in sorted(pairs, key=lambda p: p[0]):
            la, ma = tree_loglik(X[clusters[i]], floor)
            lb, mb = tree_loglik(X[clusters[j]], floor)
            lu, mu = tree_loglik(X[np.concatenate([clusters[i], clusters[j]])], floor)
            if criterion == "mdl":
                ok = -lu + 0.5 * np.log(mu) < -(la + lb) + np.log(ma + mb)
            else:
                cdf = stats.chi2.cdf(max(0.0, 2 * (la + lb - lu)), 1)
                ok = (1 - cdf >= alpha) if lrt_rule == "paper" else (cdf < alpha)
            if ok:
                clusters = [c for k, c in enumerate(clusters) if k not in (i, j)] + [
                    np.sort(np.concatenate([clusters[i], clusters[j]]))]
                merged = True
                break
        if not merged:
            break
        del order
    out = np.empty(len(X), int)
    for k, c in enumerate(clusters):
        out[c] = k
    return out


def split_blobs(seed, pieces=4):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(80, 2)), rng.normal(size=(80, 2)) * 0.6 + [7, 1],
                        rng.normal(size=(60, 2)) * 1.2 + [2, 9]])
    y = np.repeat([0, 1, 2], [80, 80, 60])
    # cut each blob along x into `pieces` parts, like a mixture with many components
    start = np.empty(len(y), int)
    for c in range(3):
        rows = np.flatnonzero(y == c)
        ranks = np.argsort(np.argsort(X[rows, 0]))
        start[rows] = c * pieces + ranks * pieces // rows.size
    return X, y, start


def test_cluster_mahalanobis_against_a_loop():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=(4, 3))
    cov = np.array([np.cov(rng.normal(size=(20, 3)), rowvar=False) for _ in range(4)])
    D = cluster_mahalanobis(mu, cov)
    for i in range(4):
        for j in range(4):
            diff = mu[i] - mu[j]
            assert D[i, j] == pytest.approx(diff @ np.linalg.inv((cov[i] + cov[j]) / 2) @ diff,
                                            rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_gmdid_merges_the_pieces_back_into_the_blobs(seed):
    X, y, start = split_blobs(seed)
    res = gmdid(X, start)
    assert res.n_clusters == 3 and adjusted_rand_score(y, res.labels) == 1.0
    assert res.n_merges == 9
    np.testing.assert_array_equal(res.initial_labels, start)


@pytest.mark.parametrize("criterion,lrt_rule,alpha", [
    ("mdl", "paper", 0.05), ("lrt", "paper", 0.05), ("lrt", "paper", 0.5),
    ("lrt", "paper_literal", 0.05)])
def test_gmdid_matches_the_algorithm_as_written(criterion, lrt_rule, alpha):
    X, y, start = split_blobs(2, pieces=3)
    got = gmdid(X, start, criterion=criterion, lrt_rule=lrt_rule, alpha=alpha)
    want = slow_gmdid(X, start, criterion, alpha, lrt_rule)
    assert adjusted_rand_score(got.labels, want) == 1.0
    assert got.n_clusters == len(np.unique(want))


def test_cached_and_literal_variants_agree():
    X, y, start = split_blobs(3, pieces=5)
    fast, slow = gmdid(X, start), gmdid(X, start, cache=False)
    np.testing.assert_array_equal(fast.labels, slow.labels)
    assert fast.n_tests < slow.n_tests


def test_lower_bound_on_the_number_of_clusters_and_small_clusters():
    X, y, start = split_blobs(0)
    assert gmdid(X, start, n_clusters_min=6).n_clusters == 6
    # two singleton "clusters": merged into their nearest cluster before any test
    start = start.copy()
    start[[0, 100]] = [50, 51]
    res = gmdid(X, start)
    assert res.n_clusters == 3 and adjusted_rand_score(y, res.labels) == 1.0


def test_kmdid_picks_a_start_by_gdid_and_merges_it():
    X, y, _ = split_blobs(1)
    res = kmdid(0, X, range(3, 10))
    assert res.n_clusters == 3 and adjusted_rand_score(y, res.labels) == 1.0


def test_bad_input():
    X, y, start = split_blobs(0)
    for kwargs, name in [({"criterion": "bic"}, "criterion"), ({"lrt_rule": "x"}, "lrt_rule"),
                         ({"alpha": 0.0}, "alpha"), ({"alpha": 1.0}, "alpha"),
                         ({"n_clusters_min": 0}, "n_clusters_min")]:
        with pytest.raises(ValueError, match=name):
            gmdid(X, start, **kwargs)
    with pytest.raises(ValueError, match="init_labels"):
        gmdid(X, start[:-1])
    with pytest.raises(ValueError, match="n_clusters_range"):
        kmdid(0, X, [0])
    # a singular cluster (all points equal in one coordinate) gives no NaN
    Xs = X.copy()
    Xs[start == 0, 1] = 0.0
    assert np.isfinite(gmdid(Xs, start).labels).all()


@pytest.mark.parametrize("criterion", ["mdl", "lrt"])
def test_pair_statistics_are_the_papers_formulas(criterion):
    from bayesclust.inference.increments.did_hierarchy import _lam_floor
    from bayesclust.inference.increments.gmdid import _Merger

    X, y, start = split_blobs(4, pieces=3)
    floor = _lam_floor(X)
    m = _Merger(X, start, floor, criterion, 0.05, "paper", True)
    for a, b in [(0, 1), (0, 2), (1, 2), (2, 3), (0, 5), (4, 8)]:
        la, ma = tree_loglik(X[start == a], floor)
        lb, mb = tree_loglik(X[start == b], floor)
        lu, mu = tree_loglik(X[(start == a) | (start == b)], floor)
        first, second = m.statistic(a, b)
        if criterion == "mdl":  # eqs. 15-16: DL^1 and DL^2
            assert first == pytest.approx(-lu + 0.5 * np.log(mu), rel=1e-10)
            assert second == pytest.approx(-(la + lb) + 2 / 2 * np.log(ma + mb), rel=1e-10)
        else:  # eq. 14, the statistic of the nested fit, clipped at 0
            lam_stat = max(0.0, 2 * (la + lb - lu))
            assert first == pytest.approx(lam_stat, rel=1e-10, abs=1e-12)
            assert second == pytest.approx(stats.chi2.cdf(lam_stat, 1), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("rule", ["paper", "paper_literal"])
def test_lrt_decision_rules_at_their_threshold(rule):
    """"paper": merge iff the p-value 1 - F(Lambda) >= alpha; "paper_literal": iff F(Lambda) < alpha."""
    from bayesclust.inference.increments.did_hierarchy import _lam_floor
    from bayesclust.inference.increments.gmdid import _Merger

    X, y, start = split_blobs(4, pieces=3)
    floor = _lam_floor(X)
    probe = _Merger(X, start, floor, "lrt", 0.5, rule, True)
    checked = 0
    for a, b in [(0, 1), (0, 2), (1, 2), (3, 4), (6, 7)]:
        cdf = probe.statistic(a, b)[1]
        if not 1e-6 < cdf < 1 - 1e-6:
            continue
        threshold = 1 - cdf if rule == "paper" else cdf
        for alpha, want in [(threshold * 0.999, rule == "paper"), (threshold * 1.001, rule != "paper")]:
            m = _Merger(X, start, floor, "lrt", alpha, rule, True)
            assert m.should_merge(a, b) is want, (a, b, alpha)
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name", ["wine-norm", "biopsy", "crabs"])
def test_the_compare_jobs_partitions_have_the_classes_number_of_clusters(name):
    """What ``bayesclust.jobs.did.run_compare_did`` finds before it samples (notebook 07, section 6,
    whose shortest run compares Iris only): GMD from seed 0 (``k_max = 30``, the true K as lower
    bound) merged by GMDID ends at the true K on Breast Cancer and Crabs and at one cluster on Wine,
    where GMD keeps a single component (Aidos & Fred 2012, Table 3); k-means (best of 10) and
    single and average link cut at K have K clusters."""
    import jax
    from scipy.cluster.hierarchy import fcluster, linkage

    from bayesclust import metrics
    from bayesclust.inference.hard.kmeans import kmeans
    from bayesclust.inference.increments.gmd import gmd
    from bayesclust.jobs.did import DID_DATA

    X, y = DID_DATA[name]()
    X = np.asarray(X, np.float64)
    K = metrics.n_clusters(y)
    mix = gmd(0, X, K, min(30, len(X) - 1))
    assert gmdid(X, mix.labels, n_clusters_min=K).n_clusters == (1 if name == "wine-norm" else K)
    fits = [kmeans(k, X, K) for k in jax.random.split(jax.random.PRNGKey(0), 10)]
    assert metrics.n_clusters(min(fits, key=lambda r: float(r.objective)).labels) == K
    for method in ("single", "average"):
        assert metrics.n_clusters(fcluster(linkage(X, method), K, criterion="maxclust")) == K
