"""SL-DID, SL-AGLO and the G-DID index (Aidos & Fred 2011; Fred & Leitão 2003)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist
from sklearn.metrics import adjusted_rand_score as adjusted_rand_index

import bayesclust
from bayesclust import _native
from bayesclust.graphs import gaps, increments
from bayesclust.inference.increments.did_hierarchy import gdid_cut, gdid_index, sl_aglo, sl_did
from bayesclust.kernels import DID2_FISHER, description_length, did_cdf, did_logpdf
from bayesclust.metrics import consistency_index, purity

BETA = 2.0 - np.sqrt(2.0)


# --- the literal algorithms, written out with the public building blocks -----------------


def _floor(X):
    w = increments(X)
    return float(w[w > 0].min())


def _cluster_distances(D, labels, ids):
    order = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[order], ids)
    R = np.minimum.reduceat(D[order][:, order], starts, axis=0)
    return np.minimum.reduceat(R, starts, axis=1)


def slow_agglomeration(X, decide):
    """Closest untested, unfrozen pair by single link, recomputed from scratch each step.

    Clusters are named by their smallest point index; among pairs at the smallest distance the
    first cluster is the one of smallest name, its partner the cluster of the smallest point
    index at that distance.  ``decide(labels, a, b)`` returns "merge", "apart", ("freeze", name).
    """
    n = len(X)
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    labels = np.arange(n)
    tested, frozen = set(), set()
    while True:
        ids = np.unique(labels)
        R = _cluster_distances(D, labels, ids)
        members = {c: frozenset(np.flatnonzero(labels == c)) for c in ids}
        for i, a in enumerate(ids):
            for j, b in enumerate(ids):
                if (i == j or members[a] in frozen or members[b] in frozen
                        or frozenset([members[a], members[b]]) in tested):
                    R[i, j] = np.inf
        if not np.isfinite(R).any():
            return labels
        i = int(np.flatnonzero(R.min(axis=1) == R.min())[0])
        a = ids[i]
        eligible = np.isin(labels, ids[np.isfinite(R[i])])
        to_points = np.where(eligible, D[labels == a].min(axis=0), np.inf)
        b = labels[int(np.flatnonzero(to_points == R.min())[0])]
        outcome = decide(labels, a, b)
        if outcome == "merge":
            labels = np.where(labels == b, a, labels)
        elif outcome == "apart":
            tested.add(frozenset([members[a], members[b]]))
        else:
            frozen.add(members[outcome[1]])


def slow_sl_did(X, tail_factor=7.0, tail_prob=None, min_size=6):
    floor = _floor(X)

    def in_tail(x, lam):
        if tail_prob is None:
            return x > tail_factor * lam
        return 1.0 - did_cdf(np.float64(x), np.float64(lam)) < tail_prob

    def stats(rows):
        w = increments(X[rows])
        lam = max(w.mean(), floor)
        return w, lam, description_length(w, lam=lam)

    def decide(labels, a, b):
        ra, rb = np.flatnonzero(labels == a), np.flatnonzero(labels == b)
        if ra.size < min_size and rb.size < min_size:
            return "merge"
        union = np.sort(np.concatenate([ra, rb]))
        if ra.size < min_size or rb.size < min_size:
            big, small = (rb, ra) if ra.size < min_size else (ra, rb)
            if small.size >= 3:
                w_small = increments(X[small])
            else:
                w_small = increments(X[union])[np.isin(union, small)]
            return "apart" if in_tail(w_small.mean(), stats(big)[1]) else "merge"
        gap_a, gap_b = gaps(X, labels, a, b)
        _, lam_a, dl_a = stats(ra)
        _, lam_b, dl_b = stats(rb)
        if in_tail(gap_a, lam_a):
            return ("freeze", a)
        if in_tail(gap_b, lam_b):
            return ("freeze", b)
        w_u = increments(X[union])
        dl_u = description_length(w_u, lam=max(w_u.mean(), floor))
        return "merge" if dl_u <= dl_a + dl_b else "apart"

    return slow_agglomeration(X, decide)


def slow_sl_aglo(X, tau, min_size=6):
    floor = _floor(X)

    def gap(rows, other):
        C = cdist(X[rows], X[other])
        i = np.unravel_index(np.argmin(C), C.shape)[0]
        own = cdist(X[rows[i]][None], X[rows])[0]
        own[i] = np.inf
        return abs(C.min() - own.min())

    def decide(labels, a, b):
        ra, rb = np.flatnonzero(labels == a), np.flatnonzero(labels == b)
        if ra.size < min_size and rb.size < min_size:
            return "merge"
        for rows, other, name in ((ra, rb, a), (rb, ra, b)):
            if rows.size >= min_size and gap(rows, other) >= tau * max(increments(X[rows]).mean(), floor):
                return ("freeze", name)
        return "merge"

    return slow_agglomeration(X, decide)


def blobs(seed, n=(40, 30, 25), scales=(1.0, 0.4, 2.0), d=2):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-12, 12, size=(len(n), d))
    X = np.concatenate([c + s * rng.normal(size=(k, d)) for c, s, k in zip(centres, scales, n)])
    return X, np.repeat(np.arange(len(n)), n)


def same_partition(a, b):
    return adjusted_rand_index(a, b) == 1.0 and len(np.unique(a)) == len(np.unique(b))


# --- description length and the Fisher constant -------------------------------------------


def test_fisher_constant_by_quadrature(x64):
    """c = lam^2 E[(d/dlam log p)^2] of the 2-DID, by quadrature of a central difference."""
    lam, h = 1.0, 1e-5

    def score(w):
        return (float(did_logpdf(np.float64(w), lam + h)) - float(did_logpdf(np.float64(w), lam - h))) / (2 * h)

    c, _ = integrate.quad(lambda w: score(w) ** 2 * np.exp(float(did_logpdf(np.float64(w), lam))),
                          0, 40, limit=200)
    assert c == pytest.approx(DID2_FISHER, rel=1e-5)


def test_description_length_formula():
    w = np.random.default_rng(0).gamma(2.0, 0.5, size=40)
    lam = w.mean()
    want = (0.5 * (1 - np.log(12)) + np.log(lam) + 0.5 * np.log(40 * DID2_FISHER / lam**2)
            - np.sum(did_logpdf(w, lam)))
    assert description_length(w) == pytest.approx(want, rel=1e-12)
    assert description_length(w, lam=2.0) != pytest.approx(want)
    assert description_length(np.empty(0)) == 0.0
    # a cluster of duplicates: lam = 0 is floored, the length stays finite
    assert np.isfinite(description_length(np.zeros(6), lam_floor=1e-3))
    with pytest.raises(ValueError, match="lam"):
        description_length(np.zeros(6))


def test_host_and_jax_2did_agree(x64):
    import jax.numpy as jnp

    w = np.linspace(0, 80, 401)
    np.testing.assert_allclose(did_logpdf(w, 1.7), np.asarray(did_logpdf(jnp.asarray(w), 1.7)),
                               rtol=1e-13)
    np.testing.assert_allclose(did_cdf(w, 1.7), np.asarray(did_cdf(jnp.asarray(w), 1.7)),
                               rtol=1e-13, atol=1e-16)
    assert isinstance(did_logpdf(w, 1.7), np.ndarray)
    assert did_logpdf(np.array([-1.0]), 1.0)[0] == -np.inf
    assert did_cdf(np.array([-1.0]), 1.0)[0] == 0.0


# --- gaps ---------------------------------------------------------------------------------


def test_gaps_against_a_loop():
    X, y = blobs(1)
    ga, gb = gaps(X, y, 0, 2)
    A, B = X[y == 0], X[y == 2]
    C = cdist(A, B)
    i, j = np.unravel_index(np.argmin(C), C.shape)
    own_a = np.delete(cdist(A[i:i + 1], A)[0], i).min()
    own_b = np.delete(cdist(B[j:j + 1], B)[0], j).min()
    assert ga == pytest.approx(abs(C[i, j] - own_a), rel=1e-12)
    assert gb == pytest.approx(abs(C[i, j] - own_b), rel=1e-12)
    with pytest.raises(ValueError, match="different"):
        gaps(X, y, 1, 1)
    with pytest.raises(ValueError, match="at least 2"):
        gaps(X, np.r_[y[:-1], 7], 7, 0)


# --- SL-DID and SL-AGLO against the literal loops ----------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kwargs", [{}, {"tail_factor": 3.0}, {"tail_prob": 0.01}, {"min_size": 4}])
def test_sl_did_matches_the_literal_algorithm(seed, kwargs):
    X, _ = blobs(seed)
    got = sl_did(X, **kwargs)
    assert same_partition(got.labels, slow_sl_did(X, **kwargs))
    assert got.n_clusters == len(np.unique(got.labels))
    assert got.merges.shape == (X.shape[0] - got.n_clusters, 3)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("tau", [2.0, 4.0, 8.0])
def test_sl_aglo_matches_the_literal_algorithm(seed, tau):
    X, _ = blobs(seed, d=3)
    assert same_partition(sl_aglo(X, tau).labels, slow_sl_aglo(X, tau))


def test_sl_did_matches_the_literal_algorithm_on_data_with_duplicates():
    X = bayesclust.datasets.load_iris()[0]
    assert same_partition(sl_did(X).labels, slow_sl_did(X))


NATIVE_CASES = {
    "sl_did-iris-min4": (lambda: bayesclust.datasets.load_iris()[0], sl_did, {"min_size": 4}),
    "sl_did-large-unions": (lambda: blobs(4, n=(70, 60, 50))[0], sl_did, {}),
    "sl_did-tail-prob": (lambda: blobs(1)[0], sl_did, {"tail_prob": 0.01}),
    "sl_aglo-3d": (lambda: blobs(3, d=3)[0], sl_aglo, {"tau": 4.0}),
}


@pytest.mark.skipif(not _native.available(), reason="native kernels off or not built")
@pytest.mark.parametrize("case", list(NATIVE_CASES))
def test_native_agglomeration_takes_the_numpy_drivers_steps(monkeypatch, case):
    """``_native/did.cc`` runs the NumPy driver's algorithm: the same merges in the same order
    at the same distances, the same isolations and the same number of tests (unions over 48
    points take the incremental 2-NN update, duplicates the tie rules)."""
    make, fn, kwargs = NATIVE_CASES[case]
    X = make()
    native = fn(X, **kwargs)
    monkeypatch.setattr(_native, "enabled", lambda: False)
    ref = fn(X, **kwargs)
    np.testing.assert_array_equal(native.labels, ref.labels)
    np.testing.assert_array_equal(native.isolated, ref.isolated)
    np.testing.assert_array_equal(native.merges, ref.merges)
    assert (native.n_clusters, native.n_tests, native.lam_floor) == (ref.n_clusters, ref.n_tests,
                                                                     ref.lam_floor)


def test_sl_did_never_merges_separated_clusters_and_is_scale_and_order_free():
    X, y = blobs(5, n=(60, 50, 40), scales=(1.0, 0.5, 1.5))
    res = sl_did(X)
    # every cluster found lies inside one class (an 8-point satellite of the tight class is
    # isolated by the tail test: SL-DID may split a class, as the paper's Fig. 5 shows)
    assert purity(y, res.labels) == 1.0 and res.n_clusters <= 4
    assert same_partition(sl_did(X * 1e-3 + 5).labels, res.labels)
    perm = np.random.default_rng(0).permutation(len(X))
    assert same_partition(sl_did(X[perm]).labels, res.labels[perm])


@pytest.mark.parametrize("seed", range(6))
def test_single_link_at_the_right_k_fails_where_sl_did_does_not(seed):
    """Two tight clusters and a sparse one (the paper's Fig. 2 kind): single link cut at 3
    splits sparse outliers off and joins the tight pair; SL-DID separates all three."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(size=(80, 2)) * 0.3, rng.normal(size=(80, 2)) * 0.3 + [3, 0],
                        rng.normal(size=(60, 2)) * 2.0 + [1.5, 14]])
    y = np.repeat([0, 1, 2], [80, 80, 60])
    single = fcluster(linkage(X, "single"), 3, criterion="maxclust")
    assert consistency_index(y, single) < 0.65
    assert consistency_index(y, sl_did(X).labels) > 0.85


def test_sl_did_inner_increments_are_the_clusters_increments():
    """The driver's per-point 2-NN bookkeeping gives graphs.increments of the final clusters."""
    from bayesclust.inference.increments.did_hierarchy import _Agglomeration

    X, y = blobs(2)
    agg = _Agglomeration(X)
    for a, b in [(0, 1), (0, 2), (0, 3), (4, 5), (4, 6), (0, 4)]:
        s, t = min(a, b), max(a, b)
        agg.merge(s, t, agg.union(s, t))
    np.testing.assert_allclose(np.sort(agg.cluster_increments(0)), np.sort(increments(X[[0, 1, 2, 3, 4, 5, 6]])),
                               rtol=1e-12)


def test_bad_input():
    X, _ = blobs(0)
    for kwargs, name in [({"tail_factor": 0}, "tail_factor"), ({"tail_prob": 1.0}, "tail_prob"),
                         ({"tail_prob": -0.1}, "tail_prob"), ({"min_size": 2}, "min_size")]:
        with pytest.raises(ValueError, match=name):
            sl_did(X, **kwargs)
    with pytest.raises(ValueError, match="tau"):
        sl_aglo(X, 0.0)
    with pytest.raises(ValueError, match="X"):
        sl_did(np.array([[np.nan, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="X"):
        sl_did(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="Z"):
        gdid_cut(X, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="n_clusters_range"):
        gdid_cut(X, linkage(X, "single"), [0, 2])


def test_duplicates_and_float32_are_handled():
    X, y = blobs(6)
    X = np.concatenate([X, X[:30], np.repeat(X[:1], 8, axis=0)])
    res = sl_did(X.astype(np.float32))
    assert res.lam_floor > 0 and np.isfinite(res.merges[:, 2]).all()
    assert same_partition(res.labels, sl_did(X.astype(np.float32).astype(np.float64)).labels)
    assert np.isfinite(gdid_index(X, np.r_[y, y[:30], np.zeros(8, int)]))
    # all points identical: one cluster, no NaN
    assert sl_did(np.ones((10, 2))).n_clusters == 1


# --- G-DID ---------------------------------------------------------------------------------


def slow_gdid(X, labels):
    floor = _floor(X)
    ll, m = 0.0, 0
    ids = np.unique(labels)
    for c in ids:
        A = X[labels == c]
        if len(A) < 3:
            continue
        w = increments(A)
        lam = max(w.mean(), floor)
        D = cdist(A, A)
        np.fill_diagonal(D, np.inf)
        T = minimum_spanning_tree(np.where(np.isfinite(D) & (D > 0), D, 0) + np.where(D == 0, 1e-300, 0)).tocoo()
        extra = []
        for u, v in zip(T.row, T.col):
            if D[u].argmin() != v and D[v].argmin() != u:
                extra += [abs(D[u, v] - D[u].min()), abs(D[u, v] - D[v].min())]
        w = np.concatenate([w, extra])
        ll += np.sum(did_logpdf(w, lam))
        m += w.size
    return -ll + 0.5 * ids.size * np.log(m)


def test_gdid_index_against_a_loop_and_its_choice():
    X, y = blobs(1)
    assert gdid_index(X, y) == pytest.approx(slow_gdid(X, y), rel=1e-10)
    one = np.zeros(len(y), int)
    assert gdid_index(X, one) == pytest.approx(slow_gdid(X, one), rel=1e-10)
    # merging across a gap costs (the bridge increments lie in the tail) ...
    assert gdid_index(X, y) < gdid_index(X, one)
    Z = linkage(X, "average")
    cut = gdid_cut(X, Z, range(1, 8))
    assert cut.scores.shape == (7,) and cut.scores[2] < cut.scores[:2].min()
    # ... but small splits inside a class are cheap: the index may prefer them
    assert same_partition(cut.labels, fcluster(Z, cut.n_clusters, criterion="maxclust"))
    assert cut.scores[cut.n_clusters - 1] == cut.scores.min()
    assert gdid_index(X, np.arange(len(y))) == np.inf


# --- estimators ------------------------------------------------------------------------------


def test_estimators():
    X, y = blobs(5, n=(60, 50, 40), scales=(1.0, 0.5, 1.5))
    est = bayesclust.SLDID().fit(X)
    assert same_partition(est.labels_, sl_did(X).labels) and est.n_clusters_ == sl_did(X).n_clusters
    np.testing.assert_array_equal(bayesclust.SLDID().fit_predict(X), est.labels_)
    ag = bayesclust.SLAGLO().fit(X)
    taus = np.arange(1.0, 11.0)
    scores = [gdid_index(X, sl_aglo(X, t).labels) for t in taus]
    assert ag.tau_ == taus[int(np.argmin(scores))]
    np.testing.assert_allclose(ag.gdid_scores_, scores)
    with pytest.raises(ValueError, match="tail_factor"):
        bayesclust.SLDID(tail_factor=-1).fit(X)
    with pytest.raises(ValueError, match="taus"):
        bayesclust.SLAGLO(taus=[1.0, -2.0]).fit(X)


def test_driver_keeps_each_clusters_nearest_eligible_partner():
    """After any sequence of merges, rejections and isolations, every active cluster's
    (rowmin, rowarg) is the brute-force nearest untested, unfrozen cluster (ties: smallest)."""
    from bayesclust.inference.increments.did_hierarchy import _Agglomeration

    X, _ = blobs(3)
    rng = np.random.default_rng(0)
    agg = _Agglomeration(X)
    point_D = cdist(X, X)
    for step in range(120):
        pair = agg.next_pair()
        if pair is None:
            break
        s, t = pair
        u = rng.uniform()
        if u < 0.6:
            agg.merge(s, t, agg.union(s, t))
        elif u < 0.9:
            agg.reject(s, t)
        else:
            agg.freeze(s)
        live = [c for c in agg.members if not agg.frozen[c]]
        for c in live:
            best = (np.inf, -1)
            for o in live:
                if o == c or o in agg.tested[c]:
                    continue
                to_o = point_D[agg.members[c]][:, agg.members[o]].min(axis=0)
                k = int(np.argmin(to_o))  # members are sorted: the smallest point index
                best = min(best, (to_o[k], int(agg.members[o][k])))
            assert agg.rowmin[c] == best[0], step
            if np.isfinite(best[0]):
                assert agg.rowarg[c] == best[1], step
