"""Discriminative clustering side by side: Fig. 1, hold-out selection helpers, the compare job.

References: the paper's Fig. 1 behaviour (Kaski et al. 2005, §7.1), eq. 9 computed here
with scipy's gammaln from a hand-built contingency table, scikit-learn's GridSearchCV
checked against a hand-written cross-validation loop.
"""

import json

import numpy as np
import pytest
from scipy.special import gammaln

from bayesclust.cli import main
from bayesclust.datasets import dc_toy
from bayesclust.inference.discriminative.dc_map import dc_map
from bayesclust.inference.discriminative.discriminative import (
    heldout_cost,
    select_width,
    stratified_split,
    width_grid,
)
from bayesclust.jobs.dc import fig1_prototypes
from bayesclust.metrics import explained_variance


def _eq9(labels, classes, K, C, n0=1.0):
    table = np.zeros((K, C))
    np.add.at(table, (labels, classes), 1.0)
    return gammaln(n0 + table).sum() - gammaln(C * n0 + table.sum(1)).sum()


@pytest.mark.slow
def test_fig1_column_then_compromise_then_isotropic():
    """Kaski et al. Fig. 1: plain DC's cells split only the class-changing (vertical)
    axis; lam_vq = 0.02 is a compromise; large lam_vq is k-means (isotropic)."""
    out = fig1_prototypes(0)
    assert out["X"].shape == (10_000, 2) and out["lam_vq"] == [0.0, 0.02, 1.0]
    r2 = np.array([explained_variance(out["X"], r.labels) for r in out["fits"]])  # (3, [x1, x2])
    assert r2[0, 0] < 0.2 and r2[0, 1] > 0.85  # measured .07 / .91: horizontal bands
    assert abs(r2[2, 0] - r2[2, 1]) < 0.05 and r2[2].min() > 0.6  # measured .74 / .75
    assert r2[0, 0] < r2[1, 0] < r2[2, 0]  # measured .07 < .64 < .74
    # The regulariser trades class prediction for distortion (eq. 15).
    lp = [r.log_posterior for r in out["fits"]]
    assert lp[0] > lp[1] > lp[2]


def test_explained_variance_equals_a_loop():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    X[:, 2] = 4.0  # constant feature
    z = rng.integers(0, 5, 60)
    ref = []
    for f in range(3):
        total = ((X[:, f] - X[:, f].mean()) ** 2).sum()
        between = sum((z == j).sum() * (X[z == j, f].mean() - X[:, f].mean()) ** 2 for j in np.unique(z))
        ref.append(between / total if total > 0 else 0.0)
    np.testing.assert_allclose(explained_variance(X, z), ref, rtol=1e-12, atol=1e-15)
    # Invariant to relabelling; singletons explain everything.
    np.testing.assert_allclose(explained_variance(X, (z + 3) % 7), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(explained_variance(X, np.arange(60)), [1.0, 1.0, 0.0])


def test_width_grid_is_s0_times_geomspace():
    X = np.random.default_rng(0).normal(size=(50, 3)) * [1.0, 2.0, 3.0]
    s0 = np.sqrt(np.mean(X.var(0)))
    np.testing.assert_allclose(width_grid(X, 5), s0 * np.geomspace(1e-2, 10, 5))
    with pytest.raises(ValueError, match="zero variance"):
        width_grid(np.ones((4, 2)))


def test_stratified_split_keeps_every_class_on_both_sides():
    classes = np.repeat([0, 1, 2, 3], [10, 3, 2, 1])
    train, test = stratified_split(7, classes, 0.3)
    assert np.intersect1d(train, test).size == 0
    np.testing.assert_array_equal(np.sort(np.r_[train, test]), np.arange(16))
    # round(0.3 m) clipped to [1, m - 1]; a one-row class stays in train.
    assert np.bincount(classes[test], minlength=4).tolist() == [3, 1, 1, 0]
    # Reproducible from the key; a different key moves rows.
    np.testing.assert_array_equal(stratified_split(7, classes, 0.3)[1], test)
    assert any(not np.array_equal(stratified_split(s, classes, 0.3)[1], test) for s in range(5))
    with pytest.raises(ValueError, match="test_fraction"):
        stratified_split(0, classes, 1.0)


def test_heldout_cost_is_minus_eq9_of_the_voronoi_table():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    c = rng.integers(0, 3, 40)
    m = rng.normal(size=(4, 2))
    cells = np.argmin(((X[:, None] - m[None]) ** 2).sum(-1), axis=1)
    assert heldout_cost(m, X, c, n_classes=3) == pytest.approx(-_eq9(cells, c, 4, 3), rel=1e-9)


def test_select_width_picks_the_lowest_held_out_cost():
    X, c = dc_toy(0, 600)

    # A fake fit whose quality depends on the width: at 1.0 the prototypes split the
    # classes' direction (vertical), at other widths they split the uninformative one.
    def fit(key, Xtr, ctr, width):
        axis = 1 if width == 1.0 else 0
        m = np.zeros((2, 2))
        m[0, axis], m[1, axis] = -1.0, 1.0
        return m

    best, costs = select_width(0, fit, X, c, [0.5, 1.0, 2.0])
    assert best == 1.0 and costs.shape == (3,)
    assert costs[1] < costs[0] and costs[0] == pytest.approx(costs[2])
    with pytest.raises(ValueError, match="grid"):
        select_width(0, fit, X, c, [0.5, -1.0])
    with pytest.raises(TypeError, match="fit must be callable"):
        select_width(0, None, X, c, [0.5])


def test_gridsearchcv_selects_smooth_std_like_a_hand_written_cv_loop():
    from sklearn.model_selection import GridSearchCV, KFold

    from bayesclust.estimators import DiscriminativeClustering

    X, c = dc_toy(2, 600)
    grid = [0.05, 0.3, 1.5]
    cv = KFold(3, shuffle=True, random_state=0)
    est = DiscriminativeClustering(n_clusters=4, random_state=0)
    search = GridSearchCV(est, {"smooth_std": grid}, cv=cv).fit(X, c)
    by_hand = []
    for s in grid:
        scores = []
        for tr, te in cv.split(X):
            fitted = DiscriminativeClustering(n_clusters=4, smooth_std=s, random_state=0).fit(X[tr], c[tr])
            # score = exact eq. 9 of the held-out Voronoi cells (higher is better)
            scores.append(_eq9(fitted.predict(X[te]), c[te], 4, 2))
        by_hand.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand, rtol=1e-9)
    assert search.best_params_["smooth_std"] == grid[int(np.argmax(by_hand))]


@pytest.mark.slow
def test_compare_dc_cli_writes_json(tmp_path, capsys):
    args = ["compare", "--model", "dc", "--data", "iris", "--out", str(tmp_path), "--num-warmup",
            "30", "--num-samples", "20", "--num-chains", "1", "--no-plot", "--no-progress"]
    assert main(args) == 0
    report = capsys.readouterr().out
    summary = json.loads((tmp_path / "compare_dc.json").read_text())
    assert summary["n_train"] == 105 and summary["n_test"] == 45  # round(0.3 * 50) per class
    names = [r["method"] for r in summary["rows"]]
    assert names == ["CG MAP", "SA MAP (exact, hard)", "sDC", "NUTS (smoothed posterior)",
                     "k-means (VQ)", "MoG", "MDA2", "HardDC (hard limit)"]
    for r in summary["rows"]:
        assert np.isfinite(r["test_cost"]) and r["test_cost"] > 0 and r["method"] in report
        assert 1 <= r["cells_used"] <= (3 if r["method"] != "HardDC (hard limit)" else 8)
    # HardDC beside its sampler: compare's report and the limit path, on the training part.
    hard = summary["hard_dc"]
    both = {r["method"]: r for r in summary["comparison"]["rows"]}
    assert summary["comparison"]["model"] == "dc"
    assert both["hard limit (HardDC)"]["k"] == hard["n_clusters"]
    assert both["hard limit (HardDC)"]["objective"] == pytest.approx(hard["objective"], rel=1e-5)
    path = summary["limit_path"]
    assert path["model"] == "dc" and path["hard_objective"] == pytest.approx(hard["objective"], rel=1e-5)
    assert path["stop"] in ("hard", "lower_objective")
    assert "hard limit (HardDC)" in report and "limit path (dc" in report
    assert sum(summary["nuts"]["cells_distribution"].values()) == pytest.approx(1.0)
    # The discriminative MAP fits predict the training classes better than k-means' cells
    # (they optimise eq. 9; k-means ignores the classes).
    rows = {r["method"]: r for r in summary["rows"]}
    assert rows["SA MAP (exact, hard)"]["train_log_posterior"] > rows["k-means (VQ)"]["train_log_posterior"]


def test_plot_dc_prototypes_draws_and_checks_its_input():
    pytest.importorskip("matplotlib")
    from bayesclust.plotting import _pyplot, plot_dc_prototypes

    X, c = dc_toy(0, 200)
    m = dc_map(0, X, c, 3, 0.3, init="random").prototypes
    ax = plot_dc_prototypes(X, c, m, title="t")
    assert ax.get_title() == "t"
    assert len(ax.collections) >= 2  # density, boundaries and prototype circles
    _pyplot().close("all")
    with pytest.raises(ValueError, match="2-D"):
        plot_dc_prototypes(np.zeros((5, 3)), np.zeros(5, int), np.zeros((2, 3)))


def test_plot_method_scores_draws_one_bar_per_row_and_checks_its_input():
    pytest.importorskip("matplotlib")
    from bayesclust.plotting import _pyplot, plot_method_scores

    rows = [{"method": "a", "nmi": 0.9}, {"method": "b", "nmi": 0.25}, {"method": "c", "nmi": 0.5}]
    ax = plot_method_scores(rows, "nmi", xlabel="NMI", xlim=(0, 1))
    # first row on top: bars are drawn bottom-up in reversed order
    assert [p.get_width() for p in ax.patches] == [0.5, 0.25, 0.9]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c", "b", "a"]
    assert ax.get_xlabel() == "NMI" and ax.get_xlim() == (0, 1)
    assert plot_method_scores(rows[:1], "nmi").get_xlabel() == "nmi"  # default label: the key
    _pyplot().close("all")
    with pytest.raises(ValueError, match="at least one"):
        plot_method_scores([], "nmi")
    with pytest.raises(ValueError, match=r"rows\[1\] lacks \['nmi'\]"):
        plot_method_scores([{"method": "a", "nmi": 1.0}, {"method": "b"}], "nmi")
