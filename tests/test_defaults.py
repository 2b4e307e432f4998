"""The estimators' defaults: what a user gets without setting anything.

The data here are small synthetic sets drawn in the tests (never the real data sets of
``benchmarks/defaults.py``, on which the defaults were chosen and are reported).
"""

import inspect
import re
import warnings

import numpy as np
import pytest
from scipy.stats import chi2
from sklearn.base import ClassifierMixin

import bayesclust
import bayesclust.estimators as E
from bayesclust import DPGaussianMixture, DPMeans, HDPGaussianMixture, SingleClusterWarning
from bayesclust.metrics import nmi


def _blobs(seed, k=4, d=3, n_per=30, sep=10.0):
    """``k`` unit-variance Gaussian blobs in ``d`` dimensions, centres ``sep`` apart or more."""
    rng = np.random.default_rng(seed)
    centres = sep * np.eye(max(k, d))[:k, :d] if k <= d else rng.normal(0, sep, (k, d))
    y = np.repeat(np.arange(k), n_per)
    return centres[y] + rng.standard_normal((k * n_per, d)), y


def _two_blobs():
    """Two tight blobs of 15 points in 2-D, 5 apart, and their labels."""
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 0.3, (15, 2)), rng.normal(5, 0.3, (15, 2))])
    return X, np.repeat([0, 1], 15)


def _elongated(seed, k=4, d=5, n_per=100):
    """``k`` Gaussians elongated along random directions (sd 4 along one, 0.3 across)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(k):
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        sd = np.r_[4.0, np.full(d - 1, 0.3)]
        X.append((rng.standard_normal((n_per, d)) * sd) @ Q.T + rng.normal(0, 6.0, d))
        y += [c] * n_per
    return np.concatenate(X), np.array(y)


# --------------------------------------------------------------------------- DPMeans


def test_dpmeans_n_clusters_is_found_on_well_separated_data():
    # 4 blobs in 3-D, every seed its own data and starts: the hint is what comes out.
    found = [DPMeans(n_clusters=4, random_state=s).fit(_blobs(s)[0]).n_clusters_
             for s in range(20)]
    assert sum(k == 4 for k in found) >= 19, found


def test_dpmeans_n_clusters_lam_reproduces_the_fit():
    X, y = _blobs(3, k=3, d=2, sep=8.0)
    est = DPMeans(n_clusters=3, random_state=0).fit(X)
    assert est.n_clusters_ == 3 and nmi(y, est.labels_) == 1.0
    again = DPMeans(lam=est.lam_, random_state=0).fit(X)
    np.testing.assert_array_equal(again.labels_, est.labels_)


def test_dpmeans_default_lam_is_the_chi_squared_tail_and_unit_free():
    X, _ = _blobs(5, k=3, d=4)
    n, d = X.shape
    est = DPMeans(random_state=0).fit(X)
    s2 = np.mean((X - X.mean(0)) ** 2)
    assert est.lam_ == pytest.approx(s2 * chi2.ppf(1 - 1 / n, d), rel=1e-12)
    scaled = DPMeans(random_state=0).fit(1000.0 * X)
    assert scaled.lam_ == pytest.approx(1e6 * est.lam_, rel=1e-12)
    np.testing.assert_array_equal(scaled.labels_, est.labels_)


def test_dpmeans_default_is_not_a_hint_of_eight():
    assert DPMeans().get_params()["n_clusters"] is None
    X, y = _blobs(7, k=3, d=2, sep=12.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ks = [DPMeans(random_state=s).fit(X).n_clusters_ for s in range(5)]
    assert max(ks) <= 5, ks  # a hint of 8 opened 8 or more on such data


def test_dpmeans_default_penalty_warns_that_k_follows_it():
    X, _ = _blobs(7, k=3, d=2, sep=12.0)  # the shape of the test above: no new compile
    with pytest.warns(UserWarning, match="follows one Gaussian's reach, not the data: give n_clusters, or lam"):
        DPMeans(random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        DPMeans(n_clusters=3, random_state=0).fit(X)
        DPMeans(lam=50.0, random_state=0).fit(X)


def test_hard_hdp_default_hint_warns_that_k_follows_it():
    from bayesclust import HardHDP

    X, _ = _blobs(7, k=3, d=2, sep=12.0)
    with pytest.warns(UserWarning, match="follows the hint, not the data: give n_global"):
        HardHDP().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = HardHDP(n_global=3).fit(X)  # one data set: n_local plays no part
        HardHDP(lam_local=1.0, lam_global=1.0).fit(X)
    assert est.n_clusters_ == 3
    with pytest.raises(ValueError, match="give both n_local and n_global"):
        HardHDP(n_local=2).fit(X, group_ids=np.arange(len(X)) % 2)


# --------------------------------------------------------------------------- HDP mixture


def test_hdp_gaussian_mixture_variances_are_data_scaled():
    X, y = _two_blobs()
    fast = dict(_FAST["HDPGaussianMixture"], random_state=0)  # the walk's program: one compile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesclust.ConvergenceWarning)
        est = HDPGaussianMixture(**fast).fit(X)
        big = HDPGaussianMixture(**fast).fit(1000.0 * X)
    s2 = X.var(0).mean()
    assert est.sigma2_ == pytest.approx(s2 / 4) and est.rho2_ == pytest.approx(3 * s2 / 4)
    assert big.sigma2_ == pytest.approx(1e6 * est.sigma2_)
    np.testing.assert_array_equal(big.labels_, est.labels_)
    assert est.n_clusters_ == 2 and nmi(y, est.labels_) == 1.0


def _long_pair():
    """Two long thin parallel clusters of 15 points (30 x 2, the walk's shape below)."""
    rng = np.random.default_rng(0)
    return np.concatenate([np.c_[rng.normal(0, 4, 15), rng.normal(0, 0.2, 15)],
                           np.c_[rng.normal(0, 4, 15), rng.normal(3, 0.2, 15)]])


def test_hdp_gaussian_mixture_fragments_of_elongated_data_warn_naming_sigma2():
    fast = dict(_FAST["HDPGaussianMixture"], random_state=0)  # the walk's program: one compile
    for X, small_sigma2, fragments in ((_long_pair(), 0.5, True), (_two_blobs()[0], "auto", False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = HDPGaussianMixture(sigma2=small_sigma2, **fast).fit(X)
        msgs = [str(w.message) for w in caught if "full-covariance" in str(w.message)]
        if not fragments:
            assert msgs == [] and est.n_clusters_ == 2, (est.n_clusters_, msgs)
            continue
        assert est.n_clusters_ > 3 and len(msgs) == 1, (est.n_clusters_, msgs)
        assert "raise sigma2" in msgs[0] and "covariance_type='full'" in msgs[0]
        assert int(re.search(r"merge into (\d+)", msgs[0]).group(1)) <= est.n_clusters_ // 2


# --------------------------------------------------------------------------- DP mixture


def _spherical_warnings(X, **params):
    """Fit the spherical DPGaussianMixture; the covariance_type warnings it gave.

    The tests calling it fit 120 points: one compiled sampler per dimension."""
    assert len(X) == 120
    fast = dict(num_warmup=60, num_samples=60, num_chains=2, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = DPGaussianMixture(**fast, **params).fit(X)
    return est, [str(w.message) for w in caught if "covariance_type" in str(w.message)]


def test_full_model_merges_the_pieces_of_elongated_clusters():
    from bayesclust.estimators._base import _full_covariance_merges

    X, y = _elongated(1)
    # Cut every cluster into three pieces along its long axis: the spherical model's
    # fragments.  The full model's log p(X, z) rises by merging them back, and only them.
    pieces = np.empty_like(y)
    for c in range(4):
        idx = np.flatnonzero(y == c)
        Z = X[idx] - X[idx].mean(0)
        axis = np.linalg.svd(Z, full_matrices=False)[2][0]
        pieces[idx] = 3 * c + np.digitize(Z @ axis, np.quantile(Z @ axis, [1 / 3, 2 / 3]))
    k, gain = _full_covariance_merges(X, pieces, alpha=1.0)
    assert k == 4 and gain > 0
    assert _full_covariance_merges(X, y, alpha=1.0) == (4, 0.0)
    Xs, ys = _blobs(4, k=3, d=3, n_per=40)
    assert _full_covariance_merges(Xs, ys, alpha=1.0) == (3, 0.0)


def test_spherical_fragments_of_elongated_data_warn_naming_covariance_type():
    rng = np.random.default_rng(0)
    # Two long thin clusters; a small sigma2 makes the spherical model cut them up.
    X = np.concatenate([np.c_[rng.normal(0, 4, 60), rng.normal(0, 0.2, 60)],
                        np.c_[rng.normal(0, 4, 60), rng.normal(3, 0.2, 60)]])
    est, msgs = _spherical_warnings(X, sigma2=0.5)
    assert est.n_clusters_ > 3
    assert len(msgs) == 1 and "covariance_type='full'" in msgs[0], (est.n_clusters_, msgs)
    k_full = int(re.search(r"merge into (\d+)", msgs[0]).group(1))
    assert k_full <= 3, msgs  # greedy merges of the fragments: 2 or 3 long clusters


def test_one_merge_of_round_clusters_is_not_fragmentation():
    from bayesclust.estimators._base import _full_covariance_merges

    rng = np.random.default_rng(0)
    # Three round clusters, two of them 3 sd apart: the full model merges that pair, as
    # model-based clustering merges iris's versicolor and virginica.  Not fragments.
    X = np.concatenate([rng.normal(0, 1, (40, 2)), rng.normal(0, 1, (40, 2)) + [3.0, 0.0],
                        rng.normal(0, 1, (40, 2)) + [0.0, 12.0]])
    y = np.repeat([0, 1, 2], 40)
    assert _full_covariance_merges(X, y, alpha=1.0)[0] == 2  # the old check warned here
    est, msgs = _spherical_warnings(X, sigma2=1.0)
    assert est.n_clusters_ == 3 and msgs == [], (est.n_clusters_, msgs)


def test_spherical_clusters_of_spherical_data_do_not_warn():
    X, _ = _blobs(4, k=3, d=3, n_per=40)
    est, msgs = _spherical_warnings(X)
    assert est.n_clusters_ == 3 and msgs == []


# --------------------------------------------------------------------------- spectral DP-means


def test_spectral_dp_means_default_finds_the_blobs_whatever_the_units():
    from sklearn.metrics.pairwise import euclidean_distances

    from bayesclust import SpectralDPMeans

    X, y = _blobs(2, k=4, d=4, n_per=40, sep=8.0)
    est = SpectralDPMeans().fit(X)
    assert est.n_clusters_ == 4 and nmi(y, est.labels_) == 1.0
    # The cut is tr(K) / sqrt(n) = sqrt(n) for an RBF kernel; gamma the median heuristic.
    assert est.eigenvalue_threshold_ == pytest.approx(np.sqrt(len(X)), rel=1e-12)
    D2 = euclidean_distances(X, squared=True)[np.triu_indices(len(X), 1)]
    manual = SpectralDPMeans(np.sqrt(len(X)), gamma=1 / np.median(D2)).fit(X)
    np.testing.assert_array_equal(manual.labels_, est.labels_)
    big = SpectralDPMeans().fit(1000.0 * X)
    np.testing.assert_array_equal(big.labels_, est.labels_)  # gamma = 1 put each point alone


def test_spectral_dp_means_auto_cut_caps_the_clusters_at_sqrt_n():
    from bayesclust import SpectralDPMeans

    # Far-apart single points: K = I, every eigenvalue 1.  A cut of 1 - 1e-9 keeps all n.
    X = 100.0 * np.eye(25)
    with pytest.warns(SingleClusterWarning):  # no eigenvalue above sqrt(25) = 5
        assert SpectralDPMeans(gamma=1.0).fit(X).n_clusters_ == 1
    assert SpectralDPMeans(1 - 1e-9, gamma=1.0).fit(X).n_clusters_ == 25


# --------------------------------------------------------------------------- one cluster


def test_one_cluster_warns_naming_the_parameter():
    X = np.random.default_rng(0).standard_normal((20, 2))
    with pytest.warns(SingleClusterWarning, match="lam"):
        DPMeans(lam=1e6).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleClusterWarning)
        DPMeans(lam=1e6).fit(X[:9])  # fewer than 10 points: one cluster is no surprise
        DPMeans(n_clusters=2, random_state=0).fit(X)


#: Small, fast settings per estimator (the defaults' sizes are for real data); None: the
#: estimator is not a clustering estimator.
_FAST = {
    "DPMeans": {}, "HardHDP": {},
    "DPGaussianMixture": dict(num_warmup=20, num_samples=20, num_chains=2),
    "HDPGaussianMixture": dict(num_warmup=10, num_samples=10, thin=1, num_chains=2),
    "DiscriminativeClustering": dict(n_clusters=3),
    "CECIB": dict(n_clusters=3, n_init=2),
    "SpectralDPMeans": {}, "PenalizedNormalizedCut": {}, "SMIC": dict(candidates=[3]),
    "EvidenceAccumulation": dict(n_partitions=10),
    "ACCCS": dict(n_partitions=5, generations=3, population=4),
    "ConstrainedEAC": dict(n_partitions=10),
    "AspectConsensus": dict(n_partitions=10, n_init=2),
    "EmbeddedConsensus": dict(n_clusters=2, n_partitions=10),
    "HypergraphConsensus": dict(n_partitions=10, n_init=2),
    "PairwiseConsensus": dict(n_partitions=10, n_init=1, max_iter=50),
    "SLDID": {}, "SLAGLO": {}, "GMDID": dict(k_max=5),
    "HardDC": dict(n_clusters=2), "KLMeansConsensus": dict(n_clusters=2, n_partitions=10),
    "MAPDIDClassifier": None,
}


def test_every_estimator_is_listed():
    assert set(_FAST) == set(E.__all__)


@pytest.mark.parametrize("name", sorted(n for n, p in _FAST.items() if p is not None))
def test_every_clustering_estimator_sets_labels_and_n_clusters_and_warns_on_one(name):
    cls = getattr(E, name)
    params = dict(_FAST[name])
    if "random_state" in inspect.signature(cls).parameters:
        params["random_state"] = 0
    two = _two_blobs()[0]
    one = np.random.default_rng(2).standard_normal((30, 2))
    for X in (two, one):
        y = (X[:, 0] > 2.5).astype(int) if name in ("DiscriminativeClustering", "HardDC") else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = cls(**params).fit(X, y) if y is not None else cls(**params).fit(X)
        assert isinstance(est.n_clusters_, int) and est.n_clusters_ >= 1
        labels = np.asarray(est.labels_)
        assert labels.shape == (30,) and labels.dtype.kind == "i"
        assert labels.max() < est.n_clusters_ and labels.min() >= 0
        single = np.unique(labels).size == 1
        warned = [w for w in caught if issubclass(w.category, SingleClusterWarning)]
        assert bool(warned) == single, (name, est.n_clusters_, [str(w.message) for w in caught])
        if warned:
            assert name in str(warned[0].message) and "to find more" in str(warned[0].message)


def test_gmdid_one_cluster_warning_says_why_and_names_n_clusters_min():
    from bayesclust import GMDID

    one = np.random.default_rng(2).standard_normal((30, 2))  # the shape of the test above
    with pytest.warns(SingleClusterWarning) as caught:
        est = GMDID(k_max=5, random_state=0).fit(one)
    message = str(caught[0].message)
    assert f"the mixture had {est.n_components_} components" in message
    assert "raise n_clusters_min" in message and "number of classes" in message


def test_gmdid_warns_when_its_merges_override_most_of_the_mixture(monkeypatch):
    from types import SimpleNamespace

    import bayesclust.inference.increments.gmd as gmd_module
    from bayesclust import GMDID

    # A mixture of twelve components, each of four round blobs cut in three (the merges
    # put them back together): a merge of most of the mixture's components warns, unless
    # the number of classes is given.
    X, y = _blobs(0, k=4, d=3)
    pieces = np.arange(len(X)) // 10
    monkeypatch.setattr(gmd_module, "gmd", lambda *a, **k: SimpleNamespace(labels=pieces, n_components=12))
    with pytest.warns(UserWarning, match="merged the mixture's 12 components into 4 clusters"):
        est = GMDID(random_state=0).fit(X)
    assert nmi(y, est.labels_) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        GMDID(n_clusters_min=4, random_state=0).fit(X)


def test_discriminative_clustering_default_is_one_prototype_per_class():
    X, y = _two_blobs()  # 30 x 2 with K = 3: the program of the estimator walk above
    classes = np.where(y == 0, "a", np.where(X[:, 0] > 5.0, "c", "b"))
    est = E.DiscriminativeClustering(random_state=0).fit(X, classes)
    assert est.n_clusters_ == 3 and est.cluster_centers_.shape == (3, 2)
    given = E.DiscriminativeClustering(n_clusters=3, random_state=0).fit(X, classes)
    np.testing.assert_array_equal(est.labels_, given.labels_)


def test_cecib_unlabelled_fit_from_the_default_start_warns(monkeypatch):
    from types import SimpleNamespace

    import bayesclust.estimators.cecib as cecib_module

    X = np.random.default_rng(2).standard_normal((30, 2))
    labels = np.arange(30) % 6  # what the optimiser returns: 6 clusters kept
    fake = SimpleNamespace(labels=labels, n_clusters=6, centers=np.zeros((6, 2)),
                           covariances=np.tile(np.eye(2), (6, 1, 1)), weights=np.full(6, 1 / 6),
                           label_counts=np.zeros((6, 0)), objective=0.0, objective_trace=np.zeros(1),
                           n_iter=1, converged=True)
    monkeypatch.setattr(cecib_module, "cecib", lambda *a, **k: fake)
    with pytest.warns(UserWarning, match="default 10 starting clusters it kept 6.*give partial labels y"):
        E.CECIB(random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        E.CECIB(n_clusters=6, random_state=0).fit(X)  # a start the user chose
        E.CECIB(random_state=0).fit(X, np.where(np.arange(30) < 3, 0, -1))  # some labels


def test_single_link_fragments_warn_naming_min_size():
    from bayesclust import SLAGLO

    # Two blobs of 60 and, far from both, four tight groups of 7: SL-AGLO isolates the
    # groups as clusters of fewer than 2 * min_size points, most of its clusters.
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12,
                        *[rng.normal(0, 0.05, (7, 2)) + c for c in ([30, 0], [0, 30], [30, 30], [-30, 0])]])
    with pytest.warns(UserWarning, match="of its .* clusters hold fewer than 2 \\* min_size = 12 points"):
        est = SLAGLO(tau=6.0).fit(X)
    assert est.n_clusters_ >= 6
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        SLAGLO(tau=6.0).fit(X[:120])  # the two blobs alone (the docstring's example)


def test_map_did_classifier_is_the_one_non_clustering_estimator():
    assert [n for n in E.__all__ if issubclass(getattr(E, n), ClassifierMixin)] == ["MAPDIDClassifier"]


# --------------------------------------------------------------------------- aspect consensus


def test_aspect_consensus_warns_when_mdl_stops_at_max_clusters():
    from bayesclust import AspectConsensus

    rng = np.random.default_rng(0)
    # Clean blocks: every partition is the 3 blocks, MDL stops at 3 below max_clusters.
    blocks = np.repeat([0, 1, 2], 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = AspectConsensus(max_clusters=6, n_init=3, random_state=0).fit(
            ensemble=np.tile(blocks, (20, 1)))
    assert est.n_clusters_ == 3
    # k-means partitions (the default ensemble) of one round Gaussian: no clusters, yet
    # MDL's choice sits at the top of 1..max_clusters and fit says it is not an estimate.
    X = rng.standard_normal((60, 2))
    with pytest.warns(UserWarning, match="max_clusters=4"):
        est = AspectConsensus(max_clusters=4, n_partitions=20, n_init=3, random_state=0).fit(X)
    assert est.n_clusters_ == 4


def test_eac_default_takes_every_block_the_ensemble_never_joins():
    from bayesclust import EvidenceAccumulation

    # Four blocks of 10 objects; every partition cuts each block in two at random and never
    # joins two blocks: the silhouette on the co-association is 1 at 2, 3 and 4 clusters.
    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(4), 10)
    parts = [2 * block + (rng.random(40) < 0.5) for _ in range(20)]
    est = EvidenceAccumulation(k_range=[2, 3, 4, 5, 6]).fit(ensemble=parts)
    assert list(est.selection_scores_[:3]) == [1.0, 1.0, 1.0] and est.selection_scores_[3] < 1.0
    assert est.n_clusters_ == 4 and nmi(block, est.labels_) == 1.0


# --------------------------------------------------------------------------- EAC linkage memory


@pytest.mark.parametrize("name", ["ConstrainedEAC", "ACCCS", "HypergraphConsensus", "PairwiseConsensus"])
def test_fixed_k_consensus_default_warns_that_two_is_not_an_estimate(name):
    cls = getattr(E, name)
    X = _two_blobs()[0]
    options = dict(_FAST[name], random_state=0)  # the walk's call: its compiled programs
    with pytest.warns(UserWarning, match=f"{name}'s n_clusters is the default 2.*give n_clusters"):
        est = cls(**options).fit(X)
    assert est.get_params()["n_clusters"] is None and est.n_clusters_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        given = cls(2, **options).fit(X)
    np.testing.assert_array_equal(given.labels_, est.labels_)


def test_smic_default_warns_that_two_is_not_an_estimate():
    X = _two_blobs()[0]
    with pytest.warns(UserWarning, match="SMIC's n_clusters is the default 2.*give n_clusters"):
        est = E.SMIC(candidates=[3], random_state=0).fit(X)  # the walk's call
    assert est.n_clusters_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        E.SMIC(2, candidates=[3], random_state=0).fit(X)


def test_penalized_ncut_default_penalty_warns_that_k_follows_it():
    X = _two_blobs()[0]  # the walk's call
    with pytest.warns(UserWarning, match="lam_prime is the default -0.01.*give lam_prime"):
        est = E.PenalizedNormalizedCut().fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        given = E.PenalizedNormalizedCut(-0.01).fit(X)
    np.testing.assert_array_equal(given.labels_, est.labels_)


def test_eac_selection_at_the_edge_of_k_range_warns():
    from bayesclust import EvidenceAccumulation

    # Two blocks the partitions never join, each cut at random: the silhouette picks 2, the
    # fewest it considers, and says so; 4 blocks in 2..6 (the test above) do not warn.
    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(2), 10)
    parts = [2 * block + (rng.random(20) < 0.5) for _ in range(20)]
    with pytest.warns(UserWarning, match="silhouette chose 2 clusters, the fewest of k_range \\(2..4\\)"):
        est = EvidenceAccumulation(k_range=[2, 3, 4]).fit(ensemble=parts)
    assert est.n_clusters_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        EvidenceAccumulation(n_clusters=2).fit(ensemble=parts)


def test_single_link_on_one_dominant_feature_warns_to_standardise():
    from bayesclust import SLDID

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])  # the doctest's
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SLDID().fit(X).n_clusters_ == 2
    with pytest.warns(UserWarning, match="feature 1 of X holds 9[0-9.]+% of its variance.*standardise X"):
        SLDID().fit(X * [1.0, 10.0])


def test_condensed_distance_is_one_minus_the_dense_coassociation():
    from scipy.spatial.distance import squareform

    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.linkage import _condensed_distance

    rng = np.random.default_rng(0)
    parts = [rng.integers(0, k, 40) for k in (2, 3, 5, 8)]
    parts.append(np.where(rng.random(40) < 0.2, -1, parts[0]))  # missing objects
    C = coassociation(parts, allow_missing=True)
    D = 1.0 - C.toarray()  # the dense route it replaces (2.5 dense n x n arrays)
    np.fill_diagonal(D, 0.0)
    np.testing.assert_array_equal(_condensed_distance(C), squareform(np.clip(D, 0, 1), checks=False))


def test_dense_linkages_are_refused_above_the_memory_bound(monkeypatch):
    import bayesclust.estimators.consensus as consensus_module
    from bayesclust import EvidenceAccumulation
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.linkage import (
        DENSE_MAX_BYTES,
        check_dense_linkage,
        linkage_consensus,
    )

    # n (n - 1) / 2 doubles: 23,170 objects fit in 2 GiB, 23,171 do not (exact arithmetic).
    assert 8 * (23_170 * 23_169 // 2) <= DENSE_MAX_BYTES < 8 * (23_171 * 23_170 // 2)
    check_dense_linkage("ward", 23_170)
    check_dense_linkage("average", 10**6)  # the sparse paths have no bound
    with pytest.raises(ValueError, match="method='average'"):
        check_dense_linkage("average", 23_171, dense=True)
    # Partitions into singletons: a co-association of 23,171 objects without a stored pair.
    C = coassociation([np.arange(23_171)] * 2)
    for method in ("ward", "complete", "weighted", "centroid", "median"):
        with pytest.raises(ValueError, match=f"method='{method}'.*n = 23171"):
            linkage_consensus(C, method, 2)
    # The estimator refuses before it builds the ensemble (minutes at this size).
    monkeypatch.setattr(consensus_module, "kmeans_ensemble",
                        lambda *a, **k: pytest.fail("the ensemble was built"))
    with pytest.raises(ValueError, match="method='ward'.*n = 23171"):
        EvidenceAccumulation(n_clusters=5, method="ward").fit(np.zeros((23_171, 1)))
    with pytest.raises(ValueError, match="method='complete'"):
        EvidenceAccumulation(method=["average", "complete"]).fit(np.zeros((23_171, 1)))


def test_single_link_chaining_warns_only_when_one_of_three_clusters_holds_most_points():
    from sklearn.datasets import load_iris

    from bayesclust import SLDID

    # Iris: single link joins versicolor and virginica (their convex hulls touch), so SL-DID
    # returns one cluster of 100 points beside setosa and a point cut from an edge.
    X = load_iris().data
    with pytest.warns(UserWarning, match="one cluster holds 100 of the 150 points .67%. beside 2"):
        est = SLDID().fit(X)
    assert np.bincount(est.labels_).max() == 100
    # Three separated groups of 40: no cluster holds most points, so no chaining warning.
    rng = np.random.default_rng(0)
    X3 = np.concatenate([rng.normal(size=(40, 2)) + c for c in ([0, 0], [15, 0], [0, 15])])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SLDID().fit(X3).n_clusters_ == 3


def test_slaglo_warns_when_isolations_are_expected_by_chance():
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from bayesclust import SLAGLO

    # Standardised wine: G-DID picks tau = 3, where e^-3 = 5 % of the isolation tests of
    # clusters of >= min_size points pass by chance under the exponential law of increments.
    X = StandardScaler().fit_transform(load_wine().data)
    with pytest.warns(UserWarning, match=r"tau_ = 3 .* probability 5\.0%: over its \d+ tests about "
                                         r"[\d.]+ of its 6 isolations are expected by chance"):
        est = SLAGLO().fit(X)
    assert (est.tau_, est.n_clusters_) == (3.0, 7)
    # Two blobs far apart at tau = 6: e^-6 times about 40 tests is under one chance isolation.
    rng = np.random.default_rng(0)
    X2 = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 12])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert SLAGLO(tau=6.0).fit(X2).n_clusters_ == 2
