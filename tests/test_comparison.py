"""The sampled-vs-hard comparison: ``compare``, its report and figure, and ``small_variance_path``.

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

FLOAT_COLUMNS = ("nmi_truth", "ari_truth", "nmi_other", "ari_other", "objective", "p_k_hard")


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

    assert hard_row["objective"] == pytest.approx(objective(np.asarray(hard.labels)), rel=1e-9)
    assert point_row["objective"] == pytest.approx(objective(point), rel=1e-9)
    assert hard_row["method"] == "hard limit (DP-means)"
    # Without X and labels_true the table has no objective and no truth columns.
    bare = compare(post, hard)
    assert all(r["nmi_truth"] is None and r["objective"] is None for r in bare.rows)


def test_compare_from_a_summary_posterior_gives_what_the_summary_holds(fitted):
    X, y, hard, post = fitted
    full = compare(post, hard, y, X=X)
    summary = post.compact("summary", loss="vi")  # what keep_draws="summary" stores
    table = compare(summary, hard, y, X=X)
    point_row, draws_row, hard_row = table.rows
    # The point row and the hard row are the full posterior's; the draws' mean k too (every
    # draw's k is kept), their mean NMI / ARI are not (no label draws).
    for a, b in ((point_row, full.rows[0]), (hard_row, full.rows[2])):
        assert a == b
    assert draws_row["k"] == full.rows[1]["k"]
    assert all(draws_row[c] is None for c in ("nmi_truth", "ari_truth", "nmi_other", "ari_other"))
    with pytest.raises(ValueError, match="keep_draws='summary'.*loss='binder'"):
        compare(summary, hard, y, X=X, loss="binder")


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


def test_compare_takes_fitted_estimators_as_it_takes_their_results(fitted):
    """The README's estimator lines: compare(DPGaussianMixture, DPMeans) is compare of their
    Posterior and DPMeansResult."""
    import warnings

    from bayesclust import ConvergenceWarning, DPGaussianMixture, DPMeans

    X, y, hard, post = fitted
    est_hard = DPMeans(lam=hard.lam, init="mean", n_init=1).fit(X)  # Algorithm 1, as dp_means
    np.testing.assert_array_equal(est_hard.labels_, hard.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a short run
        # The fixture's run sizes: the same compiled sampler.
        est = DPGaussianMixture(sigma2=0.65**2, num_warmup=60, num_samples=60, num_chains=2,
                                random_state=0).fit(X)
    by_estimators = compare(est, est_hard, y, X=X)
    by_results = compare(est.posterior_, hard, y, X=X)
    _assert_same_table(by_estimators, by_results)
    assert by_estimators.model == by_results.model == "dp"
    assert by_estimators.hard is est_hard and by_results.hard is hard
    np.testing.assert_array_equal(by_estimators.point, est.posterior_.point_estimate("vi"))


def test_compare_report_carries_what_the_figure_needs(fitted):
    import json

    X, y, hard, post = fitted
    report = compare(post, hard, y, X=X)
    assert (report.model, report.hard_name, report.loss, report.path) == ("dp", "DP-means", "vi", None)
    np.testing.assert_array_equal(report.point, post.point_estimate("vi"))
    np.testing.assert_array_equal(report.hard_labels, hard.labels)
    np.testing.assert_array_equal(report.labels_true, y)
    assert report.posterior is post and report.X.shape == X.shape
    d = json.loads(json.dumps(report.to_dict()))
    assert d["model"] == "dp" and [r["method"] for r in d["rows"]] == [r["method"] for r in report.rows]
    lines = str(report).splitlines()
    assert lines[0].split() == list(comparison.report.COLUMNS) and len(lines) == 2 + 3
    assert repr(report) == str(report)


@pytest.mark.parametrize("change, error, match", [
    (lambda X, y, h, p: dict(X=X[:-1]), ValueError, "X has 59 rows"),
    (lambda X, y, h, p: dict(X=X[:, :1]), ValueError, "features"),
    (lambda X, y, h, p: dict(labels_true=y[:-1]), ValueError, "labels_true"),
    (lambda X, y, h, p: dict(group_ids=np.zeros(60, int)), ValueError, "group_ids is not data"),
    (lambda X, y, h, p: dict(y=y), ValueError, "y is not data"),
    (lambda X, y, h, p: dict(group_ids=np.zeros(59, int)), ValueError, "group_ids has 59"),
    (lambda X, y, h, p: dict(hard=h._replace(labels=np.asarray(h.labels)[:-1])), ValueError,
     "sampled labels 60 points but hard labels 59"),
    (lambda X, y, h, p: dict(hard=X), TypeError, "hard must be a hard result"),
    (lambda X, y, h, p: dict(sampled=h), TypeError, "sampled must be a Posterior"),
    (lambda X, y, h, p: dict(family="dp"), TypeError, "family must be a LimitFamily"),
    (lambda X, y, h, p: dict(path=h), TypeError, "path must be a LimitPath"),
])
def test_compare_bad_input_names_the_argument(fitted, change, error, match):
    X, y, hard, post = fitted
    kwargs = dict(sampled=post, hard=hard, labels_true=y, X=X) | change(X, y, hard, post)
    with pytest.raises(error, match=match):
        compare(kwargs.pop("sampled"), kwargs.pop("hard"), **kwargs)


def test_compare_refuses_a_hard_result_of_no_family(fitted):
    from bayesclust import kmeans

    X, y, _, post = fitted
    with pytest.raises(TypeError, match=r"hard must be .*DPMeansResult, DPMeans.*got KMeansResult"):
        compare(post, kmeans(0, X, 3), y, X=X)


class _PenalisedKMeans(comparison.LimitFamily):
    """A researcher's own family: k-means' SSE plus ``lam`` per cluster (only what compare reads)."""

    name = "penalised-kmeans"
    hard_name = "penalised k-means"
    hard_types = ("KMeansResult",)

    def __init__(self, X, *, lam):
        self.X, self.lam = np.asarray(X, float), float(lam)
        self.n_samples, self.scale = len(self.X), self.lam

    @classmethod
    def from_hard(cls, hard, X, **data):
        return cls(X, lam=2.0)

    def objective(self, labels):
        return _objective(self.X, np.asarray(labels), self.lam)


def test_compare_with_a_researchers_own_family(fitted):
    from bayesclust import kmeans

    X, y, _, post = fitted
    km = kmeans(0, X, 3)
    for family in (_PenalisedKMeans(X, lam=2.0), _PenalisedKMeans):
        report = compare(post, km, y, X=X, family=family)
        point_row, _, hard_row = report.rows
        assert report.model == "penalised-kmeans"
        assert hard_row["method"] == "hard limit (penalised k-means)"
        assert hard_row["objective"] == pytest.approx(_objective(X, np.asarray(km.labels), 2.0), rel=1e-12)
        assert point_row["objective"] == pytest.approx(_objective(X, report.point, 2.0), rel=1e-12)
    with pytest.raises(ValueError, match="holds its data"):
        compare(post, km, y, group_ids=np.zeros(len(X), int), family=_PenalisedKMeans(X, lam=2.0))
    with pytest.raises(ValueError, match="family holds 59 points"):
        compare(post, km, y, family=_PenalisedKMeans(X[:-1], lam=2.0))


@pytest.fixture(scope="module")
def short_path(fitted):
    """A two-level limit path of the fitted data (not collapsed: stop 'grid')."""
    X, _, hard, _ = fitted
    return small_variance_path(0, X, hard.lam, [hard.lam, 1e-2 * hard.lam], num_warmup=5,
                               num_samples=5, extend=False)


def test_compare_carries_the_path_of_its_model_only(fitted, short_path):
    X, y, hard, post = fitted
    assert compare(post, hard, y, X=X, path=short_path).path is short_path
    other = short_path._replace(model="hdp")
    with pytest.raises(ValueError, match="path is a limit path of model 'hdp'"):
        compare(post, hard, y, X=X, path=other)


def test_plot_comparison_draws_both_sides_the_band_and_the_path(fitted, short_path):
    pytest.importorskip("matplotlib")
    from bayesclust.plotting import _pyplot, embed_similarity, plot_comparison

    plt = _pyplot()
    import matplotlib

    assert matplotlib.get_backend().lower() == "agg"  # headless
    X, y, hard, post = fitted
    report = compare(post, hard, y, X=X, path=short_path)
    fig = plot_comparison(report)
    data, hard_ax, point_ax, cc, trace, path_ax = fig.axes[:6]
    assert data.get_title() == "data: true classes"
    assert hard_ax.get_title() == f"hard limit: DP-means, k={hard.n_clusters}"
    assert point_ax.get_title().startswith("sampled: posterior point (VI loss)")
    np.testing.assert_allclose(data.collections[0].get_offsets(), X)  # 2-D data drawn as is
    np.testing.assert_allclose(hard_ax.collections[1].get_offsets(), hard.centers)  # the centres
    order = np.argsort(report.point, kind="stable")
    psm = post.co_clustering()
    np.testing.assert_array_equal(cc.images[0].get_array(), psm[np.ix_(order, order)])
    # The k trace: the median over the chains, and the 10-90 % band (NumPy's quantiles).
    np.testing.assert_array_equal(trace.get_lines()[0].get_ydata(), np.median(post.n_clusters, axis=0))
    low, high = np.quantile(post.n_clusters, [0.1, 0.9], axis=0)
    vertices = trace.collections[0].get_paths()[0].vertices
    for x in (0, 17, post.n_clusters.shape[1] - 1):
        ys = vertices[np.isclose(vertices[:, 0], x), 1]
        assert (ys.min(), ys.max()) == pytest.approx((low[x], high[x]))
    # The path panel: the path's own arrays, names and stop.
    np.testing.assert_array_equal(path_ax.get_lines()[0].get_ydata(), short_path.nmi_point)
    np.testing.assert_array_equal(path_ax.get_lines()[1].get_ydata(), short_path.p_k_hard)
    np.testing.assert_array_equal(path_ax.right_ax.get_lines()[0].get_ydata(), short_path.k_median)
    assert path_ax.get_xlabel() == "sigma2 / lam (log scale)"
    assert "grid ended" in path_ax.get_title() and "DP-means" in path_ax.get_title()
    plt.close(fig)
    # Without data: an embedding of the co-clustering; without a path: no path panel.
    fig = plot_comparison(report._replace(X=None, path=None, labels_true=None))
    assert fig.axes[0].get_title() == "embedding of the co-clustering"
    np.testing.assert_allclose(fig.axes[0].collections[0].get_offsets(), embed_similarity(psm))
    assert not fig.axes[5].axison
    plt.close(fig)
    with pytest.raises(ValueError, match="X has 59 rows"):
        plot_comparison(report, X=X[:-1])


def test_embed_similarity_is_exact_for_euclidean_dissimilarities():
    """Classical MDS recovers points from their distances (Torgerson 1952): with
    ``1 - S`` the distances of 2-D points, the embedding has the same distances."""
    from scipy.spatial.distance import pdist

    from bayesclust.plotting import embed_similarity

    P = np.random.default_rng(0).uniform(size=(12, 2))
    D = pdist(P)
    S = 1.0 - np.zeros((12, 12))
    iu = np.triu_indices(12, 1)
    S[iu] = 1.0 - D
    S.T[iu] = 1.0 - D
    np.testing.assert_allclose(pdist(embed_similarity(S)), D, atol=1e-10)


@pytest.mark.parametrize("stop, words", [
    ("hard", "collapses\nonto the DP-means partition"),
    ("lower_objective", "lower objective than the DP-means partition"),
    ("floor", "had not collapsed"),
    ("grid", "grid ended"),
])
def test_plot_limit_path_caption_says_what_converged(short_path, stop, words):
    pytest.importorskip("matplotlib")
    from bayesclust.plotting import _pyplot, plot_limit_path

    ax = plot_limit_path(short_path._replace(stop=stop))
    assert words in ax.get_title() and ax.get_title().startswith("limit path (dp)")
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == [
        "NMI(point, DP-means)", "P(k = k_DP-means)"]
    _pyplot().close("all")


def _hard_hdp_objective(X, group_ids, labels, lam_local, lam_global):
    """The hard HDP objective of a global partition by a loop: squared distances to the
    global means, lam_local per (data set, global cluster) pair present (the fewest local
    clusters the partition allows) and lam_global per global cluster (Kulis & Jordan, eq. 5)."""
    total = 0.0
    for c in np.unique(labels):
        members = labels == c
        total += float(np.sum((X[members] - X[members].mean(0)) ** 2)) + lam_global
        total += lam_local * len(np.unique(group_ids[members]))
    return total


def test_compare_report_of_the_hdp_mixture():
    """The hdp family: the hard HDP (estimator or result) beside the CRF sampler's posterior,
    both scored by the hard HDP objective; group_ids are data of this family only."""
    import warnings

    from bayesclust import ConvergenceWarning, HardHDP, gibbs_hdp_gmm, hard_hdp

    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    group_ids = np.repeat(np.arange(4), 15)
    y = rng.integers(0, 3, 60)
    X = centres[y] + rng.normal(0, 0.3, (60, 2))
    est = HardHDP(lam_local=1.0, lam_global=2.0).fit(X, group_ids=group_ids)
    res = hard_hdp(X, 1.0, 2.0, group_ids=group_ids)
    np.testing.assert_array_equal(est.labels_, res.flat_labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_hdp_gmm(0, X, group_ids=group_ids, sigma2=0.1, rho2=5.0, num_warmup=20,
                             num_samples=20, thin=1, num_chains=2, progress_bar=False)
    by_estimator = compare(post, est, y, X=X, group_ids=group_ids)
    by_result = compare(post, res, y, X=X, group_ids=group_ids)
    _assert_same_table(by_estimator, by_result)
    point_row, _, hard_row = by_result.rows
    assert by_result.model == "hdp" and hard_row["method"] == "hard limit (hard HDP)"
    np.testing.assert_array_equal(by_result.hard_labels, res.flat_labels)
    assert hard_row["objective"] == pytest.approx(
        _hard_hdp_objective(X, group_ids, np.asarray(res.flat_labels), 1.0, 2.0), rel=1e-9)
    assert point_row["objective"] == pytest.approx(
        _hard_hdp_objective(X, group_ids, by_result.point, 1.0, 2.0), rel=1e-9)
    with pytest.raises(ValueError, match="group_ids is required"):
        compare(post, res, X=X)
    with pytest.raises(ValueError, match="y is not data of the 'hdp' family"):
        compare(post, res, X=X, group_ids=group_ids, y=y)


def _hard_dc_objective(X, classes, labels, lam, xi, n0=1.0):
    """HardDC's J by a loop over the clusters: SSE + lam k - xi log Polya(classes | labels)
    (the Dirichlet-multinomial evidence of each cluster's class counts, prior n0 per class)."""
    from scipy.special import gammaln

    C = len(np.unique(classes))
    total = 0.0
    for c in np.unique(labels):
        members = labels == c
        total += float(np.sum((X[members] - X[members].mean(0)) ** 2)) + lam
        counts = np.array([np.sum(classes[members] == k) for k in np.unique(classes)], float)
        log_polya = (np.sum(gammaln(counts + n0) - gammaln(n0))
                     - (gammaln(counts.sum() + C * n0) - gammaln(C * n0)))
        total -= xi * log_polya
    return total


def _kl_means_objective(R, labels, lam):
    """KL-means' J by a loop over the rows: sum_i n_i KL(p_i || psi_z_i) + lam k, with psi a
    cluster's pooled row (R dense counts, shape (n, m))."""
    total = 0.0
    for c in np.unique(labels):
        rows = R[labels == c]
        psi = rows.sum(0) / rows.sum()
        for r in rows:
            p = r / r.sum()
            on = p > 0
            total += r.sum() * float(np.sum(p[on] * np.log(p[on] / psi[on])))
        total += lam
    return total


def test_compare_report_of_discriminative_clustering():
    """The dc family: HardDC (estimator or result) beside the tempered DP-MDA2's posterior,
    both partitions scored by HardDC's objective J."""
    import warnings

    from bayesclust import ConvergenceWarning, HardDC
    from bayesclust.inference.hard.hard_dc import hard_dc
    from bayesclust.inference.mixtures.dp_mda2_gibbs import gibbs_dp_mda2

    X, y = datasets.three_gaussians(3, n_per_cluster=15)
    classes = (X[:, 1] > np.median(X[:, 1])).astype(int)  # auxiliary data: up or down
    est = HardDC(n_clusters=3).fit(X, classes)
    res = hard_dc(X, classes, est.lam_, 1.0)
    np.testing.assert_array_equal(est.labels_, res.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_dp_mda2(0, X, classes, lam=res.lam, xi=1.0, sigma2=0.4, num_warmup=20,
                             num_samples=20, num_chains=2, progress_bar=False)
    by_estimator = compare(post, est, y, X=X, y=classes)
    by_result = compare(post, res, y, X=X, y=classes)
    _assert_same_table(by_estimator, by_result)
    point_row, _, hard_row = by_result.rows
    assert by_result.model == "dc" and hard_row["method"] == "hard limit (HardDC)"
    assert hard_row["objective"] == pytest.approx(
        _hard_dc_objective(X, classes, np.asarray(res.labels), res.lam, 1.0), rel=1e-9)
    assert point_row["objective"] == pytest.approx(
        _hard_dc_objective(X, classes, by_result.point, res.lam, 1.0), rel=1e-9)
    with pytest.raises(ValueError, match="y has 44 entries"):
        compare(post, res, X=X, y=classes[:-1])
    with pytest.raises(ValueError, match="group_ids is not data of the 'dc' family"):
        compare(post, res, X=X, y=classes, group_ids=np.zeros(len(X), int))


def test_compare_report_of_the_aspect_model():
    """The aspect family: KL-means (estimator or result) beside the DP mixture of multinomials
    on the same co-association rows, both scored by KL-means' objective."""
    import warnings

    from bayesclust import ConvergenceWarning, KLMeansConsensus, kmeans_ensemble
    from bayesclust.inference.hard.kl_means import kl_means
    from bayesclust.inference.mixtures.multinomial_gibbs import gibbs_dp_multinomial

    X, y = datasets.three_gaussians(4, n_per_cluster=12)
    ensemble = kmeans_ensemble(0, X, 20).labels  # (20, n)
    est = KLMeansConsensus(3).fit(ensemble=ensemble)
    res = kl_means(est.coassociation_, est.lam_, collapsed=True)
    np.testing.assert_array_equal(est.labels_, res.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_dp_multinomial(0, est.coassociation_, lam=est.lam_, tau=0.5 * est.lam_,
                                    collapsed=True, num_warmup=10, num_samples=10, num_chains=2)
    by_estimator = compare(post, est, y, X=X, ensemble=ensemble)
    by_result = compare(post, res, y, X=X, ensemble=ensemble)
    _assert_same_table(by_estimator, by_result)
    # The co-association counts with the diagonal: pairs in one cluster, summed over partitions.
    R = sum((p[:, None] == p[None, :]).astype(float) for p in np.asarray(ensemble))
    point_row, _, hard_row = by_result.rows
    assert by_result.model == "aspect" and hard_row["method"] == "hard limit (KL-means)"
    assert hard_row["objective"] == pytest.approx(
        _kl_means_objective(R, np.asarray(res.labels), est.lam_), rel=1e-9)
    assert point_row["objective"] == pytest.approx(
        _kl_means_objective(R, by_result.point, est.lam_), rel=1e-9)
    with pytest.raises(ValueError, match="y is not data of the 'aspect' family"):
        compare(post, res, X=X, ensemble=ensemble, y=y)


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
