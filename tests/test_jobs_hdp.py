"""The HDP comparison helpers: peers on grouped data and the per-data-set score."""

import numpy as np
import pytest

from bayesclust import dp_means, farthest_first_lambda
from bayesclust.jobs.hdp import grouped_peers
from bayesclust.metrics import mean_group_nmi, nmi


def test_grouped_peers_are_the_plain_methods_on_pooled_and_per_group_data():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    # 3 x 10 rows: the pooled data (30 rows) and each data set fall in one shape bucket (32 rows),
    # so the pooled and per-data-set DP-means share one compiled program.
    groups = [rng.normal(size=(10, 2)) + rng.integers(0, 3, (10, 1)) * 3 for _ in range(3)]
    peers = grouped_peers(groups, 2, 3, seed=4)
    X = np.concatenate(groups)
    pooled = np.concatenate(peers["DP-means pooled"]["labels"])
    np.testing.assert_array_equal(pooled, dp_means(X, farthest_first_lambda(X, 3)).labels)
    for g, lab in zip(groups, peers["DP-means per data set"]["labels"]):
        np.testing.assert_array_equal(lab, dp_means(g, farthest_first_lambda(g, 2)).labels)
    km = KMeans(3, n_init=10, random_state=4).fit(X).labels_
    np.testing.assert_array_equal(np.concatenate(peers["kmeans pooled"]["labels"]), km)
    assert [len(lab) for lab in peers["kmeans per data set"]["labels"]] == [10, 10, 10]
    assert all(len(np.unique(lab)) == 2 for lab in peers["kmeans per data set"]["labels"])


def test_mean_group_nmi_is_the_mean_of_per_group_nmi():
    rng = np.random.default_rng(1)
    truth = [rng.integers(0, 3, 10) for _ in range(4)]
    pred = [rng.integers(0, 4, 10) for _ in range(4)]
    assert mean_group_nmi(truth, pred) == pytest.approx(np.mean([nmi(a, b) for a, b in zip(truth, pred)]))
    with pytest.raises(ValueError, match="data sets"):
        mean_group_nmi(truth, pred[:3])
    with pytest.raises(ValueError, match="list"):
        mean_group_nmi(np.array([0, 1]), np.array([0, 1]))


def test_plot_n_clusters_trace_draws_the_chains_median_band_and_the_reference():
    pytest.importorskip("matplotlib")
    from bayesclust.plotting import _pyplot, plot_n_clusters_trace

    ks = np.array([[3, 4, 4, 5], [2, 3, 3, 3], [3, 3, 6, 4]])
    ax = plot_n_clusters_trace(ks, reference=4, reference_label="hard", ylabel="global clusters")
    lines = ax.get_lines()
    # The median over the chains at every draw (3 chains: the middle value).
    assert list(lines[0].get_ydata()) == [3, 3, 4, 4]
    assert list(lines[1].get_ydata()) == [4, 4] and lines[1].get_linestyle() == "--"
    # The band runs from the 10 % to the 90 % quantile over the chains (linear interpolation).
    (band,) = ax.collections
    low, high = np.quantile(ks, 0.1, axis=0), np.quantile(ks, 0.9, axis=0)
    vertices = band.get_paths()[0].vertices
    for x, lo, hi in zip(range(4), low, high):
        ys = vertices[np.isclose(vertices[:, 0], x), 1]
        assert ys.min() == pytest.approx(lo) and ys.max() == pytest.approx(hi)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "median over 3 chains", "10-90 % of chains", "hard"]
    assert ax.get_ylabel() == "global clusters" and ax.get_title() == "k trace"
    one = plot_n_clusters_trace(ks[0])  # one chain: its trace, no band, no reference
    assert len(one.get_lines()) == 1 and not one.collections
    assert list(one.get_lines()[0].get_ydata()) == ks[0].tolist()
    _pyplot().close("all")
