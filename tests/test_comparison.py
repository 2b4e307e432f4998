"""The sampled-vs-hard comparison: ``compare`` and ``small_variance_path``.

A reference check of the comparison table against scikit-learn and plain NumPy, and
invariances: the table does not depend on the order of the rows, on the ids of the
hard partition, of the true classes or of the clusters in each posterior draw (label
switching); the small-variance path is reproducible from its key, blind to the ids of
the DP-means partition and exactly equivariant under rescaling the data by 2 (with
``lam``, ``sigma2`` and ``rho2`` scaled by 4, every floating-point operation of the
sampler and of DP-means scales exactly, so the same key must give the same chain).
"""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from bayesclust import (
    Posterior,
    compare,
    comparison,
    datasets,
    dp_means,
    farthest_first_lambda,
    gibbs_dp_gmm,
    small_variance_path,
)

from ._reference import canonical

FLOAT_COLUMNS = ("nmi_truth", "ari_truth", "nmi_other", "ari_other", "dp_means_objective", "p_k_hard")


@pytest.fixture(scope="module")
def fitted():
    """Three Gaussians (n = 60), DP-means at farthest-first lambda, a short Gibbs run."""
    X, y = datasets.three_gaussians(1, n_per_cluster=20)
    lam = farthest_first_lambda(X, 3)
    hard = dp_means(X, lam)
    post = gibbs_dp_gmm(0, X, alpha=1.0, sigma2=0.65**2, rho2=100.0, collapsed=True,
                        num_warmup=60, num_samples=60, num_chains=2, progress_bar=False)
    return X, y, hard, post


def _posterior_from(labels, like):
    """A Posterior holding only label draws (and the timing) of ``like``."""
    return Posterior(labels, sampler=like.sampler, model=like.model, seconds=like.seconds)


def _assert_same_table(a, b, rtol=1e-12):
    assert [r["method"] for r in a.rows] == [r["method"] for r in b.rows]
    for ra, rb in zip(a.rows, b.rows):
        assert ra["k"] == rb["k"], (ra["method"], ra["k"], rb["k"])
        for col in FLOAT_COLUMNS:
            if ra[col] is None or rb[col] is None:
                assert ra[col] is rb[col] is None, (ra["method"], col)
            else:
                assert ra[col] == pytest.approx(rb[col], rel=rtol, abs=1e-12), (ra["method"], col)


def test_compare_against_independent_computation(fitted):
    X, y, hard, post = fitted
    table = compare(post, hard, y, X=X)
    point_row, draws_row, hard_row = table.rows
    point = post.point_estimate("vi")
    draws = post.labels.reshape(-1, len(X))
    k_draws = np.array([len(np.unique(d)) for d in draws])

    assert point_row["k"] == len(np.unique(point))
    assert hard_row["k"] == len(np.unique(hard.labels)) == hard.n_clusters
    assert draws_row["k"] == pytest.approx(k_draws.mean())
    assert point_row["p_k_hard"] == pytest.approx(np.mean(k_draws == hard.n_clusters))
    for row, labels in ((point_row, point), (hard_row, hard.labels)):
        assert row["nmi_truth"] == pytest.approx(normalized_mutual_info_score(y, labels), abs=1e-12)
        assert row["ari_truth"] == pytest.approx(adjusted_rand_score(y, labels), abs=1e-12)
    # "other" is the other method's partition; NMI and ARI are symmetric.
    assert point_row["nmi_other"] == pytest.approx(normalized_mutual_info_score(hard.labels, point), abs=1e-12)
    assert hard_row["nmi_other"] == pytest.approx(point_row["nmi_other"], abs=1e-12)
    assert hard_row["ari_other"] == pytest.approx(adjusted_rand_score(point, hard.labels), abs=1e-12)
    assert draws_row["nmi_truth"] == pytest.approx(
        np.mean([normalized_mutual_info_score(y, d) for d in draws]), abs=1e-12)
    assert draws_row["ari_other"] == pytest.approx(
        np.mean([adjusted_rand_score(hard.labels, d) for d in draws]), abs=1e-12)

    # DP-means objective, eq. (2) of Kulis & Jordan: SSE to the cluster means + lam * k.
    def objective(labels):
        return sum(np.sum((X[labels == c] - X[labels == c].mean(0)) ** 2)
                   for c in np.unique(labels)) + hard.lam * len(np.unique(labels))

    assert hard_row["dp_means_objective"] == pytest.approx(objective(np.asarray(hard.labels)), rel=1e-9)
    assert point_row["dp_means_objective"] == pytest.approx(objective(point), rel=1e-9)
    # Without X and labels_true the table has no objective and no truth columns.
    bare = compare(post, hard)
    assert all(r["nmi_truth"] is None and r["dp_means_objective"] is None for r in bare.rows)


def test_compare_invariant_to_permuting_the_rows(fitted):
    X, y, hard, post = fitted
    perm = np.random.default_rng(0).permutation(len(X))
    before = compare(post, hard, y, X=X)
    permuted_post = _posterior_from(post.labels[..., perm], post)
    after = compare(permuted_post, hard._replace(labels=np.asarray(hard.labels)[perm]), y[perm], X=X[perm])
    _assert_same_table(before, after, rtol=1e-9)  # the objective's sums change order
    # The point partition itself is the same partition, permuted.
    assert canonical(post.point_estimate("vi")[perm]) == canonical(permuted_post.point_estimate("vi"))


def test_compare_invariant_to_relabelling(fitted):
    """New ids for the hard clusters, the true classes and the clusters of every draw."""
    X, y, hard, post = fitted
    rng = np.random.default_rng(1)
    before = compare(post, hard, y, X=X)

    k = hard.n_clusters
    ids = rng.permutation(k) + 10  # cluster c of DP-means is now called ids[c]
    centers = np.empty_like(np.asarray(hard.centers))
    centers[ids - 10] = np.asarray(hard.centers)
    relabelled_hard = hard._replace(labels=ids[np.asarray(hard.labels)], centers=centers)
    relabelled_y = np.array([7, 3, 5])[y]

    draws = post.labels.copy()  # (chains, draws, n)
    n_ids = int(post.labels.max()) + 1
    for c in range(draws.shape[0]):
        for s in range(draws.shape[1]):
            sigma = rng.permutation(n_ids) * 3  # new, non-contiguous ids in every draw
            draws[c, s] = sigma[post.labels[c, s]]
    switched = _posterior_from(draws, post)
    assert not np.array_equal(switched.labels, post.labels)
    np.testing.assert_array_equal(switched.n_clusters, post.n_clusters)

    after = compare(switched, relabelled_hard, relabelled_y, X=X)
    _assert_same_table(before, after)
    # Binder's point estimate is label-invariant too.
    _assert_same_table(compare(post, hard, y, X=X, loss="binder"),
                       compare(switched, relabelled_hard, relabelled_y, X=X, loss="binder"))


def _path(X, lam, grid, rho2, key=0):
    return small_variance_path(key, X, lam, grid, rho2=rho2, num_warmup=20, num_samples=20,
                               extend=False)


@pytest.mark.slow
def test_small_variance_path_reproducible_relabelling_and_scale(x64, monkeypatch):
    X, _ = datasets.three_gaussians(2, n_per_cluster=20)
    lam = farthest_first_lambda(X, 3)
    # One moderate sigma2, where the posterior is still random (each run compiles the
    # sampler afresh, so the grid is kept to one value).
    grid = np.array([0.1 * lam])
    rho2 = 100.0
    base = _path(X, lam, grid, rho2)
    fields = ("temperature", "nmi_point", "nmi_draws", "p_k_hard", "k_mean",
              "objective_best")

    # Same key, same path (bit for bit).
    again = _path(X, lam, grid, rho2)
    for f in fields:
        np.testing.assert_array_equal(getattr(again, f), getattr(base, f), err_msg=f)
    assert 0.0 < base.nmi_draws[0] < 1.0  # a random posterior, not yet the hard limit

    # DP-means' clusters under other ids: NMI and P(k = k_hard) cannot change.
    real_dp_means = comparison.dp.dp_means

    def relabelled_dp_means(X_, lam_):
        res = real_dp_means(X_, lam_)
        ids = np.arange(res.n_clusters)[::-1] + 5
        centers = np.empty_like(np.asarray(res.centers))
        centers[ids - 5] = np.asarray(res.centers)
        return res._replace(labels=ids[np.asarray(res.labels)], centers=centers)

    monkeypatch.setattr(comparison.dp, "dp_means", relabelled_dp_means)
    renamed = _path(X, lam, grid, rho2)
    monkeypatch.undo()
    assert set(np.unique(renamed.hard.labels)) != set(np.unique(base.hard.labels))
    for f in fields:
        np.testing.assert_array_equal(getattr(renamed, f), getattr(base, f), err_msg=f)

    # X -> 2 X with lam, sigma2, rho2 -> 4x: the same chain, hence the same path.
    scaled = _path(2.0 * X, 4.0 * lam, 4.0 * grid, 4.0 * rho2)
    np.testing.assert_array_equal(scaled.temperature, 4.0 * base.temperature)
    for f in fields[1:-1]:
        np.testing.assert_array_equal(getattr(scaled, f), getattr(base, f), err_msg=f)
    np.testing.assert_allclose(scaled.objective_best, 4.0 * base.objective_best, rtol=1e-12)
    np.testing.assert_array_equal(scaled.hard.labels, base.hard.labels)
    np.testing.assert_allclose(scaled.hard.centers, 2.0 * np.asarray(base.hard.centers), rtol=1e-12)


def _objective(X, labels, lam):
    """DP-means objective by a plain loop over the clusters (the reference)."""
    total = 0.0
    for c in np.unique(labels):
        members = X[labels == c]
        total += float(np.sum((members - members.mean(0)) ** 2)) + lam
    return total


def _check_path(path, X, lam, tol=0.02):
    """What a collapsed path must show; returns its largest drop of NMI to DP-means.

    Either it ends on DP-means' partition (NMI 1, P(k = k_DP-means) >= 0.95) after an NMI that
    never falls by more than ``tol``, or -- a finding, not a failure -- it ends on a partition
    whose DP-means objective is lower than DP-means' own, and says so.
    """
    hard_obj = _objective(X, np.asarray(path.hard.labels), lam)
    assert path.hard_objective == pytest.approx(hard_obj, rel=1e-9)
    np.testing.assert_allclose(path.objective_point[-1], _objective(X, path.point, lam), rtol=1e-9)
    # The chain restarted like DP-means at every level: the path never ends worse than DP-means.
    assert path.objective_point[-1] <= hard_obj * (1 + 1e-9)
    assert np.all(np.diff(path.temperature) < 0)
    drop = float(np.max(np.maximum.accumulate(path.nmi_point) - path.nmi_point))
    if path.stop == "hard":
        assert path.nmi_point[-1] == 1.0
        assert path.p_k_hard[-1] >= 0.95
        assert drop <= tol, path.nmi_point
    else:
        assert path.stop == "lower_objective", path.stop
        assert path.lower_objective
        assert path.objective_point[-1] < hard_obj - 1e-6 * hard_obj
        assert _objective(X, path.best_labels, lam) <= path.objective_point[-1] * (1 + 1e-9)
    return drop


@pytest.mark.parametrize("seed", [0, 1])
def test_small_variance_path_collapses_monotonically(seed):
    X, _ = datasets.three_gaussians(seed)
    lam = farthest_first_lambda(X, 3)
    path = small_variance_path(seed, X, lam)
    _check_path(path, X, lam)
    # It starts where the sampler sees one diffuse cluster, not DP-means' partition.
    assert path.nmi_point[0] < 0.5
    assert path.stop == "hard"


def test_small_variance_path_reports_the_floor():
    X, _ = datasets.three_gaussians(0, n_per_cluster=20)
    lam = farthest_first_lambda(X, 3)
    with pytest.warns(RuntimeWarning, match="floor"):
        path = small_variance_path(0, X, lam, sigma2_min=0.5 * lam, num_warmup=5, num_samples=5)
    assert path.stop == "floor"
    assert path.temperature[-1] >= 0.5 * lam / 10 ** 0.5


def test_small_variance_path_bad_input():
    X, _ = datasets.three_gaussians(0, n_per_cluster=5)
    with pytest.raises(ValueError, match="num_chains"):
        small_variance_path(0, X, 1.0, num_chains=1)
    with pytest.raises(ValueError, match="decreasing"):
        small_variance_path(0, X, 1.0, [0.1, 1.0])
    with pytest.raises(ValueError, match="step"):
        small_variance_path(0, X, 1.0, step=1.0)


#: Each data set as the compare job loads it, with the NMI wobble allowed before the collapse.
PATH_DATA = [
    ("three-gaussians", 0.02),
    ("iris", 0.02),
    # Raw Wine (proline in the thousands) against rho2 = 100: from 1e-3 to 1e-5 lam the posterior
    # sits on two-cluster partitions (P(k = 3) = 0) that differ by a few points, NMI 0.50-0.55,
    # before it collapses; their wobble reaches 0.023.
    ("wine", 0.03),
]


@pytest.mark.parametrize("data, tol", PATH_DATA[1:])
def test_small_variance_path_collapses_on_iris_and_wine(data, tol):
    """The short form of the ten-seed test below: one seed per data set (three Gaussians'
    seeds 0 and 1 are test_small_variance_path_collapses_monotonically's)."""
    from bayesclust.jobs._common import load_data

    X, _ = load_data(data, 0)
    lam = farthest_first_lambda(X, 3)
    _check_path(small_variance_path(0, X, lam), X, lam, tol=tol)


@pytest.mark.long  # ~60 s: `make test-all`
@pytest.mark.parametrize("data, tol", PATH_DATA)
def test_small_variance_path_collapses_over_ten_seeds(data, tol):
    """On each data set (as the compare job loads it) and 10 seeds the annealed path collapses."""
    from bayesclust.jobs._common import load_data

    stops = []
    for seed in range(10):
        X, _ = load_data(data, seed)
        lam = farthest_first_lambda(X, 3)
        path = small_variance_path(seed, X, lam)
        _check_path(path, X, lam, tol=tol)
        stops.append(path.stop)
    # DP-means' partition is the limit on most seeds; a lower objective is the exception.
    assert stops.count("hard") >= 3, stops


def test_gibbs_takes_one_initial_partition_per_chain():
    """The annealed path's building block: chain c starts from init_labels[c]."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-5, 0.1, (10, 2)), rng.normal(5, 0.1, (10, 2))])
    blobs = np.repeat([0, 1], 10)
    # Single-site moves only (no split-merge, which would move whole blobs): no cluster can
    # open (log alpha = -1e4 against about -2,500 for the farthest point in one cluster) and
    # sigma2 is small, so every chain keeps its partition.
    post = gibbs_dp_gmm(0, X, log_alpha=-1e4, split_merge=0, sigma2=1e-2, num_warmup=0, num_samples=2,
                        num_chains=3, init_labels=np.stack([blobs, np.zeros(20, int), 7 * blobs]),
                        progress_bar=False)
    np.testing.assert_array_equal(post.n_clusters, [[2, 2], [1, 1], [2, 2]])
    for draw in (post.labels[0, 0], post.labels[2, 1]):
        assert normalized_mutual_info_score(blobs, draw) == 1.0
    with pytest.raises(ValueError, match="one per chain"):
        gibbs_dp_gmm(0, X, num_chains=2, init_labels=np.zeros((3, 20), int), progress_bar=False)


def test_limit_path_of_the_aspect_family_collapses():
    # Three blobs, the co-association of the default k-means ensemble: the tempered DP mixture
    # of multinomials collapses onto KL-means' partition (or one of lower J) before the floor.
    from bayesclust import limit_path, metrics

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.5, (20, 2)) for c in [(-2, 0), (2, 0), (0, 3)]])
    path = limit_path(0, X, model="aspect", n_clusters=3, n_partitions=40)
    assert path.model == "aspect" and path.temperature_name == "tau"
    assert path.stop in ("hard", "lower_objective")
    assert path.objective_point[-1] <= path.hard_objective * (1 + 1e-9)
    if path.stop == "hard":
        assert metrics.nmi(path.point, path.hard.labels) == pytest.approx(1.0)
