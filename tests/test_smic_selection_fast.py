"""The shared pieces of fast SMIC model selection (Sugiyama et al. 2014, Fig. 1, §4).

One k-NN search for every candidate ``t`` (the neighbour lists are nested), ARPACK at a
chosen accuracy, and LSMI scoring of several labellings at once.  References: an eq. (7)
kernel written as a dense loop here, NumPy's dense ``eigh``, and scoring one labelling alone.
"""

import jax
import numpy as np
import pytest

from bayesclust.graphs import local_scaling_kernel, local_scaling_kernels
from bayesclust.inference.information.smic import (
    LSMI_DELTAS,
    LSMI_GAMMAS,
    _lsmi_cv_many,
    _lsmi_design,
    smic,
    smic_select,
)


def _kernel_loop(X, t):
    """Eq. (7): t nearest other points by a full sort of each row, K_ii = 1, 'or' rule."""
    n = X.shape[0]
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    nbrs = np.argsort(D, axis=1, kind="stable")[:, :t]
    sigma = D[np.arange(n), nbrs[:, -1]]
    K = np.eye(n)
    for i in range(n):
        for j in nbrs[i]:
            K[i, j] = K[j, i] = np.exp(-D[i, j] ** 2 / (2.0 * sigma[i] * sigma[j]))
    return K, sigma


def test_nested_kernels_equal_separate_searches_and_the_formula():
    X = np.random.default_rng(0).normal(size=(60, 2))
    ts = [7, 1, 3, 12]
    kerns = local_scaling_kernels(X, ts)
    assert [k.t for k in kerns] == ts
    for t, k in zip(ts, kerns):
        sep = local_scaling_kernel(X, t)
        assert (k.K != sep.K).nnz == 0
        np.testing.assert_array_equal(k.sigma, sep.sigma)
        K_ref, sigma_ref = _kernel_loop(X, t)
        np.testing.assert_allclose(k.K.toarray(), K_ref, rtol=1e-12, atol=0)
        np.testing.assert_allclose(k.sigma, sigma_ref, rtol=1e-12)
    assert local_scaling_kernels(X, []) == []


def test_selection_labels_equal_separate_fits():
    """smic_select's candidates (one shared search) give smic's labels at each t."""
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(size=(150, 2)) * 0.3, rng.normal(size=(150, 2)) * 0.3 + [3.0, 0.0],
              rng.normal(size=(150, 2)) * 0.3 + [0.0, 3.0]]
    sel = smic_select(0, X, 3, candidates=[4, 9, 2])
    for t, labels in zip([4, 9, 2], sel.labels):
        np.testing.assert_array_equal(labels, smic(X, t, 3).labels)


@pytest.mark.parametrize("eigen_tol, atol", [(0.0, 1e-9), (1e-6, 1e-4)])
def test_arpack_eigen_tol_subspace_matches_dense_eigh(eigen_tol, atol):
    """ARPACK's top-c eigenpairs at the given accuracy against NumPy's dense eigh."""
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(size=(300, 2)), rng.normal(size=(200, 2)) + 5.0, rng.normal(size=(250, 2)) - 5.0]
    res = smic(X, 10, 3, eigen_solver="arpack", eigen_tol=eigen_tol)
    w, V = np.linalg.eigh(local_scaling_kernel(X, 10).K.toarray())
    w, V = w[::-1][:3], V[:, ::-1][:, :3]
    np.testing.assert_allclose(np.sort(res.eigenvalues)[::-1], w, rtol=atol)
    # principal angles: the cosines (singular values of V^T phi) are 1 for the same subspace
    cos = np.linalg.svd(V.T @ res.eigenvectors, compute_uv=False)
    np.testing.assert_allclose(cos, 1.0, atol=atol)


@pytest.mark.parametrize("bad, err", [(-1e-3, ValueError), (1.0, ValueError), ("0", TypeError), (True, TypeError)])
def test_eigen_tol_is_validated(bad, err):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(err, match="eigen_tol"):
        smic(X, 3, 2, eigen_tol=bad)
    with pytest.raises(err, match="eigen_tol"):
        smic_select(0, X, 2, candidates=[3], eigen_tol=bad)


def test_lsmi_of_repeated_labellings_equals_scoring_each_alone():
    rng = np.random.default_rng(4)
    n = 80
    X = rng.normal(size=(n, 2))
    a, b = (X[:, 0] > 0).astype(int), rng.integers(0, 3, n)
    centers, folds = _lsmi_design(jax.random.PRNGKey(1), n, 30, 5)
    gammas, deltas = np.array(LSMI_GAMMAS[3:6]), np.array(LSMI_DELTAS[:4])
    fits = _lsmi_cv_many(X, np.stack([a, b, a]), centers, folds, gammas, deltas)
    for y, fit in zip([a, b, a], fits):
        alone = _lsmi_cv_many(X, y[None], centers, folds, gammas, deltas)[0]
        np.testing.assert_allclose(fit.cv_scores, alone.cv_scores, rtol=1e-12, atol=1e-14)
        assert fit.value == pytest.approx(alone.value, rel=1e-12)
        assert (fit.gamma, fit.delta) == (alone.gamma, alone.delta)
    assert fits[0].value != pytest.approx(fits[1].value, rel=1e-3)
