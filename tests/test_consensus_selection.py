"""Choosing a consensus with validity indices: consensus_candidates, select_consensus,
EvidenceAccumulation(select=...), and the papers' selection experiments.

References are computed here from the metrics themselves (independent of the selection
code) or from scipy's dendrograms; the paper tests reproduce Duarte et al. (2010), Table 1
(Iris) and Lourenço, Fred & Jain (2010), Table I (Iris, MASS biopsy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform
from sklearn.metrics import adjusted_rand_score

import bayesclust
from bayesclust import datasets, metrics
from bayesclust.estimators import EvidenceAccumulation
from bayesclust.inference.consensus.coassociation import coassociation
from bayesclust.inference.consensus.consensus_selection import (
    CRITERIA,
    ConsensusCandidates,
    consensus_candidates,
    select_consensus,
    validity_index,
)
from bayesclust.inference.consensus.ensembles import kmeans_ensemble
from bayesclust.inference.mixtures.posterior import Posterior


def _blobs(seed=0, n_per=20):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.concatenate([c + rng.normal(size=(n_per, 2)) for c in centres])
    y = np.repeat(np.arange(3), n_per)
    return X, y


@pytest.fixture(scope="module")
def blobs():
    X, y = _blobs()
    ens = kmeans_ensemble(0, X, 40, n_clusters_range=(3, 8))
    return X, y, ens, coassociation(ens)


def _first_merges(Z, n, k):
    """Slow reference cut: apply the first n - k merges of Z with a plain dict of members."""
    members = {i: {i} for i in range(n)}
    for t in range(n - k):
        a, b = int(Z[t, 0]), int(Z[t, 1])
        members[n + t] = members.pop(a) | members.pop(b)
    labels = np.empty(n, np.int64)
    for c, objs in enumerate(members.values()):
        labels[list(objs)] = c
    return labels


def test_candidates_are_the_cuts_of_each_linkage(blobs):
    X, y, ens, C = blobs
    methods = ("single", "average", "complete")
    cands = consensus_candidates(C, methods, range(2, 6))
    assert cands.labels.shape == (12, X.shape[0])
    assert cands.methods == tuple(m for m in methods for _ in range(4))
    assert cands.n_clusters.tolist() == [2, 3, 4, 5] * 3
    D = squareform(np.clip(1.0 - C.toarray(), 0, 1), checks=False)
    for lab, m, k in zip(cands.labels, cands.methods, cands.n_clusters):
        assert metrics.n_clusters(lab) == k
        if m != "single":  # single link runs on the sparse MST: same tree, other tie order
            ref = _first_merges(linkage(D, method=m), X.shape[0], k)
            assert adjusted_rand_score(ref, lab) == pytest.approx(1.0)


def test_default_k_range_is_two_to_root_n(blobs):
    X, y, ens, C = blobs
    cands = consensus_candidates(C, "average")
    assert cands.n_clusters.tolist() == list(range(2, int(np.ceil(np.sqrt(X.shape[0]))) + 1))


@pytest.mark.parametrize("criterion", sorted(CRITERIA))
@pytest.mark.parametrize("space", ["similarity", "data"])
def test_selection_follows_the_rule_of_each_criterion(blobs, criterion, space):
    X, y, ens, C = blobs
    cands = consensus_candidates(C, ("single", "average", "ward"), range(2, 7))
    sel = select_consensus(cands, ens, criterion, space=space, X=X)
    # the reference scores come straight from bayesclust.metrics
    ref = []
    for lab in cands.labels:
        if criterion == "acc":
            ref.append(metrics.acc(lab, ens))
        elif criterion == "anmi":
            ref.append(metrics.anmi(lab, ens))
        elif criterion in ("div1", "div3"):
            ref.append(getattr(metrics.diversity(lab, ens), criterion))
        elif criterion == "likelihood":
            ref.append(metrics.likelihood_index(lab, S=C, X=X if space == "data" else None))
        elif space == "data":
            ref.append(getattr(metrics, criterion)(X, lab, space="data"))
        else:
            ref.append(getattr(metrics, criterion)(C.toarray(), lab, space="similarity"))
    ref = np.asarray(ref)
    np.testing.assert_allclose(sel.scores, ref, rtol=1e-10, atol=1e-12)
    assert np.all(np.isfinite(sel.scores))
    rule = CRITERIA[criterion][0]
    if rule == "max":
        want = int(np.flatnonzero(ref == ref.max())[0])
    elif rule == "min":
        want = int(np.flatnonzero(ref == ref.min())[0])
    else:
        lower_median = sorted(ref)[(len(ref) - 1) // 2]
        want = int(np.flatnonzero(ref == lower_median)[0])
    assert sel.index == want
    np.testing.assert_array_equal(sel.labels, cands.labels[want])
    assert (sel.method, sel.n_clusters) == (cands.methods[want], int(cands.n_clusters[want]))


def _acc_term_loop(c, p):
    """sim(P*, P^l) of the ACC paper, eq. 3 with the weight inside the maximum, by loops."""
    n = len(c)
    best = 0.0
    for m in np.unique(p):
        in_m = p == m
        best += max(np.sum(in_m & (c == k)) * (1 - np.sum(c == k) / n) for k in np.unique(c))
    return best / n


@pytest.mark.parametrize("criterion", ["acc", "anmi"])
def test_standard_errors_are_paired_by_partition(blobs, criterion):
    """The standard error of the chosen candidate's lead over each other one, from per-partition
    terms computed here (scikit-learn's NMI; a loop over ACC's clusters), paired by partition."""
    from sklearn.metrics import normalized_mutual_info_score

    X, y, ens, C = blobs
    cands = consensus_candidates(C, ("single", "average", "ward"), range(2, 6))
    sel = select_consensus(cands, ens, criterion)
    E = np.asarray(ens.labels)
    if criterion == "anmi":
        T = np.array([[normalized_mutual_info_score(p, lab, average_method="geometric") for p in E]
                      for lab in cands.labels])
    else:
        T = np.array([[_acc_term_loop(lab, p) for p in E] for lab in cands.labels])
    np.testing.assert_allclose(sel.scores, T.mean(axis=1), rtol=1e-10, atol=1e-12)
    d = T[sel.index] - T
    se = np.sqrt(((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) / (E.shape[0] - 1) / E.shape[0])
    np.testing.assert_allclose(sel.standard_errors, se, rtol=1e-9, atol=1e-12)
    assert sel.standard_errors[sel.index] == 0.0
    assert np.all(sel.standard_errors[[j for j in range(len(se)) if sel.scores[j] < sel.scores[sel.index]]] > 0)


@pytest.mark.parametrize("criterion", ["div1", "silhouette"])
def test_no_standard_errors_for_other_criteria(blobs, criterion):
    X, y, ens, C = blobs
    assert select_consensus(consensus_candidates(C, "average", [2, 3]), ens, criterion).standard_errors is None


def test_per_partition_terms_average_to_the_index(blobs):
    X, y, ens, C = blobs
    lab = consensus_candidates(C, "average", [3]).labels[0]
    E = np.asarray(ens.labels)
    for fn in (metrics.anmi, metrics.acc):
        terms = fn(lab, ens, per_partition=True)
        assert terms.shape == (E.shape[0],)
        assert terms.mean() == pytest.approx(fn(lab, ens), abs=1e-12)
    np.testing.assert_allclose(metrics.acc(lab, ens, per_partition=True), [_acc_term_loop(lab, p) for p in E],
                               rtol=1e-12)
    with pytest.raises(TypeError, match="per_partition"):
        metrics.anmi(lab, ens, per_partition="yes")
    with pytest.raises(TypeError, match="per_partition"):
        metrics.acc(lab, ens, per_partition=1)


@pytest.mark.parametrize("criterion, space", [("acc", None), ("anmi", None), ("silhouette", "data"),
                                               ("davies_bouldin", "data"), ("dunn", "data")])
def test_indices_find_the_three_blobs(blobs, criterion, space):
    """On three separated blobs the indices against the ensemble and the data-space indices
    choose the three blobs.  (The similarity-space silhouette is 1 for any partition whose
    clusters never share a partition of the ensemble -- here two blobs merged -- so it is not
    asked to.)"""
    X, y, ens, C = blobs
    sel = select_consensus(consensus_candidates(C, ("average", "ward"), range(2, 7)), ens, criterion,
                           space=space or "similarity", X=X)
    assert sel.n_clusters == 3
    assert metrics.ari(y, sel.labels) == pytest.approx(1.0)


def test_a_posterior_is_scored_like_an_ensemble(blobs):
    """ANMI / ACC of the point estimate against the posterior draws equal the same indices
    against the draws as a plain ensemble."""
    X, y, ens, C = blobs
    rng = np.random.default_rng(1)
    draws = np.repeat(y[None], 40, axis=0)
    flip = rng.random(draws.shape) < 0.1
    draws[flip] = rng.integers(0, 4, flip.sum())
    post = Posterior(draws.reshape(2, 20, -1))
    point = post.point_estimate("vi")
    for crit in ("acc", "anmi", "div1"):
        assert validity_index(point, crit, post) == pytest.approx(validity_index(point, crit, draws), abs=1e-12)
    cands = consensus_candidates(coassociation(post), "average", range(2, 6))
    sel = select_consensus(cands, post, "anmi")
    assert sel.n_clusters == 3 and metrics.ari(y, sel.labels) > 0.9


def test_estimator_select_equals_select_consensus(blobs):
    X, y, ens, C = blobs
    est = EvidenceAccumulation(method=["single", "average", "ward"], select="acc", k_range=range(2, 7))
    est.fit(ensemble=ens.labels)
    sel = select_consensus(consensus_candidates(C, ("single", "average", "ward"), range(2, 7)), ens, "acc")
    np.testing.assert_array_equal(est.selection_scores_, sel.scores)
    np.testing.assert_array_equal(est.selection_standard_errors_, sel.standard_errors)
    assert est.method_ == sel.method and est.n_clusters_ == sel.n_clusters
    assert adjusted_rand_score(est.labels_, sel.labels) == pytest.approx(1.0)
    # data-space indices read X
    est = EvidenceAccumulation(method="average", select="davies_bouldin", select_space="data",
                               k_range=[2, 3, 4], random_state=0).fit(X)
    assert est.n_clusters_ == 3 and metrics.ari(y, est.labels_) == pytest.approx(1.0)
    assert est.selection_standard_errors_ is None
    # with n_clusters fixed, select chooses the linkage
    est = EvidenceAccumulation(3, method=["single", "ward"], select="anmi").fit(ensemble=ens.labels)
    assert est.n_clusters_ == 3 and est.candidates_.n_clusters.tolist() == [3, 3]


def test_exported():
    for name in ("consensus_candidates", "select_consensus", "validity_index"):
        assert name in bayesclust.__all__ and callable(getattr(bayesclust, name))


def test_bad_input(blobs):
    X, y, ens, C = blobs
    cands = consensus_candidates(C, "average", [2, 3])
    with pytest.raises(ValueError, match="criterion"):
        select_consensus(cands, ens, "purity")
    with pytest.raises(ValueError, match="methods"):
        consensus_candidates(C, ("average", "kmeans"))
    with pytest.raises(ValueError, match="k_range"):
        consensus_candidates(C, "average", [2, X.shape[0] + 1])
    with pytest.raises(ValueError, match="k_range"):
        consensus_candidates(C, "average", [0, 2])
    with pytest.raises(ValueError, match="k_range"):
        consensus_candidates(C, "average", [])
    with pytest.raises(ValueError, match="ensemble"):
        select_consensus(cands, None, "acc")
    with pytest.raises(ValueError, match="space"):
        select_consensus(cands, ens, "silhouette", space="features")
    with pytest.raises(ValueError, match="needs X"):
        select_consensus(cands, ens, "silhouette", space="data")
    with pytest.raises(ValueError, match="X has"):
        select_consensus(cands, ens, "silhouette", space="data", X=X[:-1])
    with pytest.raises(TypeError, match="candidates"):
        select_consensus(cands.labels, ens, "acc")
    with pytest.raises(ValueError, match="method"):
        EvidenceAccumulation(method=["single", "average"], select=None).fit(ensemble=ens.labels)
    with pytest.raises(ValueError, match="needs X"):
        EvidenceAccumulation(select="silhouette", select_space="data").fit(ensemble=ens.labels)
    assert isinstance(cands, ConsensusCandidates)


# --------------------------------------------------------------------------- the papers


#: Lourenço, Fred & Jain (2010), Table I: CI of EAC average link at the true K, per K range
#: (round-half-up ranges: Var, (A) sqrt rule, (B) linear rule).
SCALABILITY_TABLE_I = {
    "iris": (3, [((10, 20), 0.91), ((6, 12), 0.84), ((3, 8), 0.84)]),
    "biopsy": (2, [((10, 30), 0.97), ((13, 26), 0.97), ((14, 34), 0.97)]),
}


@pytest.mark.paper
@pytest.mark.parametrize("data", ["iris", pytest.param("biopsy", marks=pytest.mark.long)])
def test_scalability_table1(data):
    """Mean CI over 5 ensembles of 150 k-means partitions.  Biopsy matches all three columns
    within .02; on Iris the Var column matches and (A) / (B) come out higher than the paper's
    .84 (.88 and .90: one ensemble in five reaches .84), so those two are held to at least the
    paper's value minus .04 (docs/deviations.md#eac-scalability-iris)."""
    X, y = datasets.load_iris() if data == "iris" else datasets.load_biopsy()
    K, rows = SCALABILITY_TABLE_I[data]
    for col, (k_range, paper) in enumerate(rows):
        cis = [metrics.consistency_index(y, bayesclust.linkage_consensus(
            coassociation(kmeans_ensemble(s, X, 150, n_clusters_range=k_range)), "average", K).labels)
            for s in range(5)]
        mean = float(np.mean(cis))
        if data == "iris" and col > 0:
            assert paper - 0.04 <= mean <= paper + 0.07, (k_range, mean)
        else:
            assert abs(mean - paper) <= 0.04, (k_range, mean)


#: Duarte et al. (2010), Table 1, Iris, ensemble method A: NMI of the partition each index
#: selects (the best available: .81).
VALIDATION_TABLE1_IRIS_A = {
    "L_o": ("likelihood", "data", 0.81), "S_o": ("silhouette", "data", 0.81),
    "D_o": ("dunn", "data", 0.71), "DB_o": ("davies_bouldin", "data", 0.71),
    "L_s": ("likelihood", "similarity", 0.81), "S_s": ("silhouette", "similarity", 0.81),
    "D_s": ("dunn", "similarity", 0.71), "DB_s": ("davies_bouldin", "similarity", 0.81),
    "ANMI": ("anmi", "similarity", 0.81), "ACC": ("acc", "similarity", 0.81),
}


@pytest.mark.paper
def test_validation_table1_iris_method_a():
    """Duarte et al. (2010), Table 1, Iris, ensemble method A (150 k-means partitions at K =
    20), candidates SL, AL, CL, centroid and Ward link at the true K = 3
    (docs/deviations.md#consensus-validation-candidates): L_o, S_o, L_s, S_s, ANMI and ACC
    select a partition of NMI .81 (the best available, .81), D_o and D_s one of .71; mean
    over 5 ensembles, within .03.  DB_s (paper .81) is held to the interval between the two
    values it can select (.71 single link / .81 average link): it picks each in some ensembles."""
    X, y = datasets.load_iris()
    chosen = {key: [] for key in VALIDATION_TABLE1_IRIS_A}
    best = []
    for s in range(5):
        ens = kmeans_ensemble(s, X, 150, n_clusters_range=(20, 20))
        cands = consensus_candidates(coassociation(ens), ("single", "average", "complete", "centroid", "ward"), [3])
        for key, (crit, space, _) in VALIDATION_TABLE1_IRIS_A.items():
            sel = select_consensus(cands, ens, crit, space=space, X=X)
            chosen[key].append(metrics.nmi(y, sel.labels, average_method="geometric"))
        best.append(max(metrics.nmi(y, lab, average_method="geometric") for lab in cands.labels))
    assert abs(np.mean(best) - 0.81) <= 0.03
    for key, (_, _, paper) in VALIDATION_TABLE1_IRIS_A.items():
        mean = float(np.mean(chosen[key]))
        if key == "DB_s":
            assert 0.71 - 0.03 <= mean <= 0.81 + 0.03, (key, chosen[key])
        else:
            assert abs(mean - paper) <= 0.03, (key, chosen[key])
