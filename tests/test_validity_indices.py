"""Internal validity indices of bayesclust.metrics: silhouette, Dunn, Davies-Bouldin (data and
similarity space) and the k-nearest-neighbour likelihood index.

References: scikit-learn's silhouette_score and davies_bouldin_score, and slow literal Python
double loops of the formulas (Rousseeuw 1987; Dunn 1974; Davies & Bouldin 1979; Lourenço &
Fred 2010, consensus clustering validation), written here and never calling the code under
test.  The similarity indices are checked on dense matrices and on sparse ones (upper
triangle, both triangles, a CoAssociation), which must agree.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import davies_bouldin_score, silhouette_score

from bayesclust.inference.consensus.coassociation import coassociation
from bayesclust.metrics import davies_bouldin, dunn, likelihood_index, silhouette

TOL = 1e-10


# --------------------------------------------------------------------------- helpers


def random_similarity(rng, n, density=0.5):
    """Symmetric similarity in [0, 1] with a share of exact zeros and repeated levels."""
    S = np.round(rng.random((n, n)), 1)  # ties between levels
    S[rng.random((n, n)) > density] = 0.0
    S = np.triu(S, 1)
    S = S + S.T
    np.fill_diagonal(S, 1.0)
    return S


def random_labels(rng, n, k):
    lab = rng.integers(0, k, n) * 7 - 3  # arbitrary ids
    lab[0] = lab[1] = 11  # a cluster of two at least
    lab[2] = 99  # a singleton (ids 99 appear once)
    return lab


def clusters_of(labels):
    out = {}
    for i, l in enumerate(labels):
        out.setdefault(int(l), []).append(i)
    return list(out.values())


def dist(x, y):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(x, y)))


def sparse_forms(S):
    """The upper triangle (csr), both triangles (coo) and the diagonal kept (csc)."""
    return [sp.csr_matrix(np.triu(S, 1)), sp.coo_matrix(S - np.diag(np.diag(S))), sp.csc_matrix(S)]


# --------------------------------------------------------------------------- literal loops


def loop_silhouette_sim(S, labels):
    C = clusters_of(labels)
    if len(C) == 1:
        return 0.0
    where = {i: ci for ci, members in enumerate(C) for i in members}
    total = 0.0
    for i in range(len(labels)):
        own = C[where[i]]
        if len(own) == 1:
            continue
        a = sum(S[i][j] for j in own if j != i) / (len(own) - 1)
        b = max(sum(S[i][j] for j in Ck) / len(Ck) for ck, Ck in enumerate(C) if ck != where[i])
        if max(a, b) > 0:
            total += (a - b) / max(a, b)
    return total / len(labels)


def loop_dunn_sim(S, labels):
    C = clusters_of(labels)
    if len(C) == 1:
        return 0.0
    diam = []
    for Cp in C:
        if len(Cp) == 1:
            diam.append(1.0)
        else:
            diam.append(min(S[i][j] for i in Cp for j in Cp if i != j))
    sim = max(S[i][j] for q, Cq in enumerate(C) for r, Cr in enumerate(C) if q != r
              for i in Cq for j in Cr)
    return min(diam) / (sim + 1.0)


def loop_db_sim(S, labels):
    C = clusters_of(labels)
    if len(C) == 1:
        return math.inf
    centre, delta = [], []
    for Ck in C:
        tot = {i: sum(S[i][j] for j in Ck if j != i) for i in Ck}
        best = max(tot.values())
        # ties up to round-off (1e-9 relative): the smallest index
        centre.append(min(i for i in Ck if tot[i] >= best - 1e-9 * max(1.0, abs(best))))
        pairs = [S[i][j] for i in Ck for j in Ck if i < j]
        delta.append(sum(pairs) / len(pairs) if pairs else 1.0)
    total = 0.0
    for k in range(len(C)):
        worst = 0.0
        for m in range(len(C)):
            if m != k:
                num, den = S[centre[k]][centre[m]], delta[k] + delta[m]
                worst = max(worst, num / den if den > 0 else (math.inf if num > 0 else 0.0))
        total += worst
    return total / len(C)


def loop_dunn_data(X, labels):
    n = len(labels)
    nearest = min(dist(X[i], X[j]) for i in range(n) for j in range(n) if labels[i] != labels[j])
    largest = max(dist(X[i], X[j]) for i in range(n) for j in range(n) if labels[i] == labels[j])
    return nearest / largest


def loop_likelihood(labels, S=None, X=None, K=None, eps=1e-3):
    n = len(labels)
    C = clusters_of(labels)
    size = {i: len(Ck) for Ck in C for i in Ck}
    where = {i: ci for ci, Ck in enumerate(C) for i in Ck}
    w = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        if S is not None:
            knn = sorted(others, key=lambda j: (-S[i][j], j))[:K]
        else:
            knn = sorted(others, key=lambda j: (dist(X[i], X[j]), j))[:K]
        mass = sum(sum(1 for j in knn if where[j] == ck) / len(Ck) for ck, Ck in enumerate(C))
        assert abs(mass - sum(1.0 / size[j] for j in knn)) < 1e-12
        if X is not None:
            diam = 2 * max(dist(X[i], X[j]) for j in knn)
        else:
            diam = 2 * (1 - min(S[i][j] for j in knn))
        w.append(mass / (diam if diam > 0 else eps))
    alpha = sum(w)
    return sum(math.log(wi / alpha) for wi in w)


# --------------------------------------------------------------------------- similarity space


@pytest.mark.parametrize("seed", range(4))
def test_similarity_indices_match_loops_dense_and_sparse(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 25))
    S = random_similarity(rng, n, density=[0.3, 0.6, 0.9, 1.0][seed])
    labels = random_labels(rng, n, int(rng.integers(2, 5)))
    Sl = S.tolist()
    want = {silhouette: loop_silhouette_sim(Sl, labels), dunn: loop_dunn_sim(Sl, labels),
            davies_bouldin: loop_db_sim(Sl, labels)}
    for index, ref in want.items():
        for form in [S] + sparse_forms(S):
            got = index(form, labels, space="similarity")
            assert got == pytest.approx(ref, abs=TOL), (index.__name__, type(form))


def test_similarity_indices_of_a_coassociation_equal_its_dense_matrix():
    rng = np.random.default_rng(5)
    n = 30
    E = rng.integers(0, 4, (12, n))
    E[:, :10] = 0  # a block co-clustered in every partition
    C = coassociation(E)
    D = C.toarray()
    labels = np.where(np.arange(n) < 10, 0, rng.integers(1, 4, n))
    for index in (silhouette, dunn, davies_bouldin):
        ref = {silhouette: loop_silhouette_sim, dunn: loop_dunn_sim,
               davies_bouldin: loop_db_sim}[index](D.tolist(), labels)
        assert index(C, labels, space="similarity") == pytest.approx(ref, abs=TOL)
        assert index(C.normalized(), labels, space="similarity") == pytest.approx(ref, abs=TOL)
    ref = loop_likelihood(labels, S=D.tolist(), K=6, eps=1 / 24)
    assert likelihood_index(labels, S=C, n_neighbors=6) == pytest.approx(ref, abs=TOL)  # eps 1/(2N)


def test_dunn_similarity_cluster_with_a_missing_pair_has_zero_diameter():
    S = np.array([[1, .9, 0, .1], [.9, 1, .8, 0], [0, .8, 1, 0], [.1, 0, 0, 1.]])
    labels = [0, 0, 0, 1]  # pair (0, 2) missing inside cluster 0
    assert dunn(sp.csr_matrix(np.triu(S, 1)), labels, space="similarity") == 0.0
    assert dunn(S, labels, space="similarity") == 0.0
    assert dunn(S, [0, 0, 1, 1], space="similarity") == pytest.approx(0.0 / 1.8)
    assert dunn(S, [0, 0, 1, 2], space="similarity") == pytest.approx(0.9 / 1.8)  # min(0.9, 1, 1) / (0.8 + 1)


def test_db_similarity_centre_ties_take_the_smallest_index():
    # cluster {0, 1, 2}: every member has the same within-cluster sum; centre 0 is the
    # one close to cluster {3}
    S = np.eye(4)
    S[0, 1] = S[1, 0] = S[0, 2] = S[2, 0] = S[1, 2] = S[2, 1] = 0.5
    S[0, 3] = S[3, 0] = 0.6
    S[1, 3] = S[3, 1] = 0.1
    ref = (0.6 / 1.5 + 0.6 / 1.5) / 2
    assert davies_bouldin(S, [0, 0, 0, 1], space="similarity") == pytest.approx(ref, abs=TOL)
    assert loop_db_sim(S.tolist(), [0, 0, 0, 1]) == pytest.approx(ref, abs=TOL)


# --------------------------------------------------------------------------- data space


@pytest.mark.parametrize("seed", range(3))
def test_data_space_indices_equal_scikit_learn_and_loops(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 60)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, d)) + rng.integers(0, 3, (n, 1)) * 3
    labels = random_labels(rng, n, 3)
    assert silhouette(X, labels) == pytest.approx(silhouette_score(X, labels), abs=TOL)
    assert davies_bouldin(X, labels) == pytest.approx(davies_bouldin_score(X, labels), abs=TOL)
    assert dunn(X, labels) == pytest.approx(loop_dunn_data(X.tolist(), labels), abs=TOL)


def test_data_space_in_several_row_blocks(monkeypatch):
    import bayesclust.metrics.validity as m

    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 2))
    labels = rng.integers(0, 4, 50)
    S = random_similarity(rng, 50)
    want = [silhouette(X, labels), dunn(X, labels), davies_bouldin(X, labels),
            silhouette(S, labels, space="similarity"), dunn(S, labels, space="similarity"),
            davies_bouldin(S, labels, space="similarity"), likelihood_index(labels, S=S)]
    monkeypatch.setattr(m, "_BLOCK", 7)  # blocks of a few rows
    got = [silhouette(X, labels), dunn(X, labels), davies_bouldin(X, labels),
           silhouette(S, labels, space="similarity"), dunn(S, labels, space="similarity"),
           davies_bouldin(S, labels, space="similarity"), likelihood_index(labels, S=S)]
    assert got == pytest.approx(want, abs=TOL)


# --------------------------------------------------------------------------- likelihood index


@pytest.mark.parametrize("seed", range(3))
def test_likelihood_index_matches_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 30))
    S = random_similarity(rng, n, density=[0.2, 0.5, 1.0][seed])
    X = rng.normal(size=(n, 2))
    labels = random_labels(rng, n, 3)
    Sl, Xl = S.tolist(), X.tolist()
    for K in (1, 3, n - 1):
        ls = loop_likelihood(labels, S=Sl, K=K)
        for form in [S] + sparse_forms(S):
            assert likelihood_index(labels, S=form, n_neighbors=K) == pytest.approx(ls, abs=TOL)
        lo = loop_likelihood(labels, S=Sl, X=Xl, K=K)
        assert likelihood_index(labels, S=sp.csr_matrix(np.triu(S, 1)), X=X,
                                n_neighbors=K) == pytest.approx(lo, abs=TOL)
        assert likelihood_index(labels, S=S, X=X, n_neighbors=K) == pytest.approx(lo, abs=TOL)
        lx = loop_likelihood(labels, X=Xl, K=K)
        assert likelihood_index(labels, X=X, n_neighbors=K) == pytest.approx(lx, abs=TOL)
    default = math.ceil(math.sqrt(n))
    assert likelihood_index(labels, S=S) == pytest.approx(
        loop_likelihood(labels, S=Sl, K=default), abs=TOL)


def test_likelihood_index_eps_and_finite_at_zero_diameters():
    S = np.ones((6, 6))  # every diameter 0
    labels = [0, 0, 0, 1, 1, 1]
    for eps in (1e-3, 0.25):
        got = likelihood_index(labels, S=S, n_neighbors=2, eps=eps)
        assert got == pytest.approx(loop_likelihood(labels, S=S.tolist(), K=2, eps=eps), abs=TOL)
        assert math.isfinite(got)
    # equal diameters everywhere: the p_i are the normalised masses, eps cancels
    assert likelihood_index(labels, S=S, n_neighbors=2, eps=1e-3) == pytest.approx(6 * math.log(1 / 6))


# --------------------------------------------------------------------------- degenerate partitions


def test_degenerate_partitions_give_documented_values():
    rng = np.random.default_rng(3)
    n = 12
    X = rng.normal(size=(n, 2))
    S = random_similarity(rng, n)
    one, single = np.zeros(n, int), np.arange(n)
    for space, data in (("data", X), ("similarity", S), ("similarity", sp.csr_matrix(np.triu(S, 1)))):
        assert silhouette(data, one, space=space) == 0.0
        assert dunn(data, one, space=space) == 0.0
        assert davies_bouldin(data, one, space=space) == math.inf
        assert silhouette(data, single, space=space) == 0.0
    assert dunn(X, single) == 0.0
    assert davies_bouldin(X, single) == 0.0  # scikit-learn: 0 when every spread is 0
    off = S - np.eye(n)
    assert dunn(S, single, space="similarity") == pytest.approx(1.0 / (off.max() + 1.0), abs=TOL)
    assert davies_bouldin(S, single, space="similarity") == pytest.approx(
        np.mean(off.max(axis=1) / 2), abs=TOL)
    for lab in (one, single):
        value = likelihood_index(lab, S=S)
        assert math.isfinite(value)
        assert value == pytest.approx(loop_likelihood(lab, S=S.tolist(), K=4), abs=TOL)


def test_no_nan_on_zero_similarity_and_coincident_points():
    S = np.eye(5)  # no similarity at all
    labels = [0, 0, 1, 1, 2]
    vals = [silhouette(S, labels, space="similarity"), dunn(S, labels, space="similarity"),
            davies_bouldin(S, labels, space="similarity"), likelihood_index(labels, S=S)]
    assert not any(math.isnan(v) for v in vals)
    assert vals[:3] == [0.0, 0.0, 0.0]
    X = np.array([[0.0], [0.0], [5.0], [5.0]])
    assert dunn(X, [0, 0, 1, 1]) == math.inf  # compact and separated
    assert dunn(X, [0, 1, 0, 1]) == 0.0  # 0 / 5 ... the nearest pair coincides
    assert davies_bouldin(X, [0, 0, 1, 1]) == 0.0
    # two clusters with the same centroid: x / 0 counts inf
    assert davies_bouldin(np.array([[-1.0], [1.0], [-2.0], [2.0]]), [0, 0, 1, 1]) == math.inf


# --------------------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    S = np.eye(4)
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="labels"):
        silhouette(X, [0, 1, 0])
    with pytest.raises(ValueError, match="labels"):
        dunn(S, [0, 1, 0], space="similarity")
    with pytest.raises(ValueError, match="labels"):
        likelihood_index([0, 1, 0], S=S)
    with pytest.raises(ValueError, match="space"):
        davies_bouldin(X, [0, 0, 1, 1], space="distance")
    with pytest.raises(ValueError, match="S must be a square"):
        silhouette(np.zeros((4, 3)), [0, 0, 1, 1], space="similarity")
    with pytest.raises(ValueError, match="S must be a square"):
        silhouette(sp.csr_matrix((4, 3)), [0, 0, 1, 1], space="similarity")
    A = np.eye(4)
    A[0, 1] = 0.5
    with pytest.raises(ValueError, match="S must be symmetric"):
        dunn(A, [0, 0, 1, 1], space="similarity")
    B = sp.csr_matrix(A + 0.25 * np.eye(4)[::-1])  # both triangles, disagreeing at (0, 1)
    with pytest.raises(ValueError, match="S must be symmetric"):
        dunn(B, [0, 0, 1, 1], space="similarity")
    for bad in (1.5, -0.1):
        M = np.eye(4)
        M[1, 2] = M[2, 1] = bad
        with pytest.raises(ValueError, match=r"S must hold similarities in \[0, 1\]"):
            davies_bouldin(M, [0, 0, 1, 1], space="similarity")
        with pytest.raises(ValueError, match=r"S must hold similarities in \[0, 1\]"):
            likelihood_index([0, 0, 1, 1], S=sp.csr_matrix(np.triu(M, 1)))
    for k in (4, 5, 0):
        with pytest.raises(ValueError, match="n_neighbors"):
            likelihood_index([0, 0, 1, 1], S=S, n_neighbors=k)
    with pytest.raises(ValueError, match="S or X"):
        likelihood_index([0, 0, 1, 1])
    with pytest.raises(ValueError, match="X has 3 rows"):
        likelihood_index([0, 0, 1, 1], S=S, X=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="eps"):
        likelihood_index([0, 0, 1, 1], S=S, eps=0.0)


def test_the_diagonal_of_the_similarity_is_ignored():
    rng = np.random.default_rng(11)
    S = np.maximum(random_similarity(rng, 15, density=1.0), 0.1)  # no zero pair: Dunn > 0
    Z = S.copy()
    np.fill_diagonal(Z, 0.0)
    labels = random_labels(rng, 15, 3)
    for form in (Z, sp.csr_matrix(Z)):
        for index in (silhouette, dunn, davies_bouldin):
            assert index(form, labels, space="similarity") == pytest.approx(
                index(S, labels, space="similarity"), abs=TOL)
        assert likelihood_index(labels, S=form) == pytest.approx(likelihood_index(labels, S=S), abs=TOL)


def test_exported():
    from bayesclust import metrics

    for name in ("silhouette", "dunn", "davies_bouldin", "likelihood_index"):
        assert name in metrics.__all__
