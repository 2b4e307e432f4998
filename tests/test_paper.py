"""Reproductions of Kulis & Jordan (2012) numbers on data available offline.

Protocol (docs/deviations.md#kj-table1-protocol): each run takes a fresh random
70% clustering split of the data in random order (the 30% validation part is
used by the paper only for the Gibbs sampler), k = the number of classes,
DP-means' lambda by farthest-first at that k, raw features, arithmetic NMI,
averaged over the runs.
"""

import numpy as np
import pytest

from bayesclust import datasets, dp_means, farthest_first_lambda, metrics

pytestmark = pytest.mark.paper

N_RUNS = 20


def _table1_row(X, y, seed=0):
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(seed)
    k = metrics.n_clusters(y)
    dpm, km, ks = [], [], []
    for run in range(N_RUNS):
        idx = rng.permutation(len(X))[: int(round(0.7 * len(X)))]
        Xs, ys = X[idx], y[idx]
        res = dp_means(Xs, farthest_first_lambda(Xs, k))
        dpm.append(metrics.nmi(ys, res.labels))
        ks.append(res.n_clusters)
        kmeans = KMeans(k, init="random", n_init=1, random_state=run).fit(Xs)
        km.append(metrics.nmi(ys, kmeans.labels_))
    return np.mean(dpm), np.mean(km), np.mean(ks)


@pytest.mark.parametrize(
    "name,dp_paper,km_paper",
    [("iris", 0.75, 0.76), ("wine", 0.41, 0.43)],
)
def test_table1_uci_rows(name, dp_paper, km_paper):
    """KJ Table 1: DP-means NMI Iris .75, Wine .41 (k-means .76, .43), within 0.03."""
    X, y = datasets.load(name)
    dp_nmi, km_nmi, mean_k = _table1_row(X, y)
    assert dp_nmi == pytest.approx(dp_paper, abs=0.03), (dp_nmi, mean_k)
    assert km_nmi == pytest.approx(km_paper, abs=0.03), km_nmi


def test_three_gaussians_nmi_and_iterations():
    """KJ §6.2 / Fig. 2: over 100 runs DP-means returns 3 clusters, NMI .89 on average.

    The data set is our calibrated stand-in (the paper gives only a
    picture); KJ also report convergence within 8 iterations, which the
    stand-in meets in most but not all runs (docs/deviations.md#three-gaussians-stand-in).
    """
    nmis, ks, iters = [], [], []
    for seed in range(100):
        X, y = datasets.three_gaussians(seed)
        res = dp_means(X, farthest_first_lambda(X, 3))
        nmis.append(metrics.nmi(y, res.labels))
        ks.append(res.n_clusters)
        iters.append(res.n_iter)
    assert np.mean(nmis) == pytest.approx(0.89, abs=0.03)
    assert np.mean(np.array(ks) == 3) >= 0.95
    assert np.mean(np.array(iters) <= 9) >= 0.9


def test_hdp_synthetic_hard_hdp_beats_pooled_baselines():
    """KJ §6.3: on the grouped synthetic data hard HDP (NMI .81) beats k-means (.77) and
    DP-means (.73) on the pooled data, with about 17 global and 4.4 local clusters.

    The baselines are run here on the same draws (not taken from the paper): k-means with
    one random start (averaged over random states) and with scikit-learn's default
    (k-means++), DP-means with farthest-first lambda at k = 15; NMI per data set, averaged.
    ``benchmarks/hdp.py`` runs the full comparison (also the per-data-set baselines, which
    hard HDP does not beat on our draws).
    """
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    from bayesclust import hard_hdp, hard_hdp_penalties

    per_group = metrics.mean_group_nmi
    hdp, km, kmpp, dpm, n_global, n_local = [], [], [], [], [], []
    for seed in range(3):
        groups, labels, _ = datasets.hdp_groups(seed)
        X = np.vstack(groups)
        splits = np.cumsum([len(g) for g in groups])[:-1]
        res = hard_hdp(groups, *hard_hdp_penalties(groups, 5, 15))
        assert res.converged
        hdp.append(per_group(labels, res.labels))
        n_global.append(res.n_global)
        n_local.append(res.n_local.mean())
        with threadpool_limits(1):  # tiny fits: OpenMP threads only add overhead
            km.append(np.mean([
                per_group(labels, np.split(
                    KMeans(15, init="random", n_init=1, random_state=s).fit(X).labels_, splits))
                for s in range(10)
            ]))
            kmpp.append(np.mean([
                per_group(labels, np.split(KMeans(15, random_state=s).fit(X).labels_, splits))
                for s in range(10)
            ]))
        dpm.append(per_group(labels, np.split(
            dp_means(X, farthest_first_lambda(X, 15)).labels, splits)))
    print(f"hdp_groups(0..2) NMI: hard HDP {np.round(hdp, 3).tolist()}, pooled k-means "
          f"{np.round(km, 3).tolist()} (k-means++ {np.round(kmpp, 3).tolist()}), pooled "
          f"DP-means {np.round(dpm, 3).tolist()}; global {n_global}, local "
          f"{np.round(n_local, 2).tolist()}")
    assert np.mean(hdp) > np.mean(km)
    assert np.mean(hdp) > np.mean(kmpp)
    assert np.mean(hdp) > np.mean(dpm)
    assert all(12 <= g <= 26 for g in n_global)  # KJ: 17 (k = 15 true components)
    assert all(3.5 <= k <= 5.5 for k in n_local)  # KJ: 4.4 (5 components per data set)
