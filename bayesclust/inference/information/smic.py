r"""SMIC: information-maximisation clustering with squared-loss mutual information, and LSMI.

Sugiyama, Niu, Yamada, Kimura & Hachiya (2014) cluster by learning a kernel class-posterior
model :math:`p(y|x;\alpha) = \sum_i \alpha_{y,i} K(x, x_i)` that maximises the squared-loss
mutual information (SMI) between ``x`` and the cluster ``y``.  The empirical SMI (eq. 8)

.. math::

    \widehat{\mathrm{SMI}} = \frac{1}{2n}\sum_{y=1}^c \frac{1}{\pi_y}\alpha_y^\top K^2\alpha_y
    - \frac12

is maximised under orthonormality by the top-c eigenvectors of ``K`` -- an analytic
solution, no restarts, no local optima (:func:`smic`).  The kernel parameter ``t`` (the
neighbourhood size of the sparse local-scaling kernel, eq. 7,
:func:`bayesclust.graphs.local_scaling_kernel`)
is chosen by maximising LSMI, a supervised SMI estimator of the labelled sample
:math:`\{(x_i, y_i)\}` (:func:`lsmi`, :func:`smic_select`).

Everything here runs on the host in float64 (NumPy/SciPy): the LSMI solves with
``delta = 1e-3`` and the eigenvectors need it, and the kernel is sparse
(``scipy.sparse.linalg.eigsh`` for large ``n``).

References
----------
M. Sugiyama, G. Niu, M. Yamada, M. Kimura and H. Hachiya, "Information-maximization
clustering based on squared-loss mutual information", Neural Computation 26(1), 84-131, 2014
(arXiv:1112.0611).
T. Suzuki, M. Sugiyama, T. Kanamori and J. Sese, "Mutual information estimation reveals global
associations between stimuli and biological processes", BMC Bioinformatics 10(S1), 2009 (LSMI).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..._validation import (
    as_rng_key,
    check_array,
    check_int,
    check_labels,
    check_points,
    check_positive,
    unit_frame,
)
from ...graphs import local_scaling_cross_kernel, local_scaling_kernel, local_scaling_kernels

__all__ = [
    "SMICResult",
    "smic",
    "smic_predict",
    "smic_predict_proba",
    "LSMIFit",
    "LSMIResult",
    "lsmi_fit",
    "lsmi",
    "SMICSelection",
    "smic_select",
    "LSMI_GAMMAS",
    "LSMI_DELTAS",
    "DEFAULT_CANDIDATES",
]

#: Gaussian widths of the LSMI cross-validation grid ([S] §4.3.1): 10^-2, 10^-1.5, ..., 10^2.
LSMI_GAMMAS = tuple(float(v) for v in 10.0 ** np.arange(-2.0, 2.01, 0.5))
#: Regularisers of the LSMI grid ([S] §4.3.1): 10^-3, 10^-2.5, ..., 10^1.
LSMI_DELTAS = tuple(float(v) for v in 10.0 ** np.arange(-3.0, 1.01, 0.5))
#: Candidate numbers of neighbours ``t`` ([S] §4: T = {1, ..., 10}).
DEFAULT_CANDIDATES = tuple(range(1, 11))

#: ``eigen_solver="auto"`` uses dense ``eigh`` up to this many samples, ARPACK above.
DENSE_MAX = 1000


def _one_blas_thread():
    """Run the many small LAPACK calls of LSMI on one BLAS thread.

    OpenBLAS's threading makes a 50 x 50 ``eigh`` far slower on a loaded machine (BENCHMARKS.md);
    the work here is a few thousand tiny matrices.  ``threadpoolctl`` ships with
    scikit-learn; without it this is a no-op.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


# --------------------------------------------------------------------------- validation


def _check_n_clusters(n_clusters: Any, n: int) -> int:
    c = check_int(n_clusters, "n_clusters")
    if c < 2:
        raise ValueError(f"n_clusters must be >= 2 (SMIC with one cluster is trivial), got {c}")
    if c >= n:
        raise ValueError(f"n_clusters={c} must be < n_samples={n}")
    return c


def _check_t(t: Any, n: int, name: str = "t") -> int:
    t = check_int(t, name, minimum=1)
    if t >= n:
        raise ValueError(f"{name}={t} must be < n_samples={n} (t nearest *other* points)")
    return t


def _check_eigen_tol(eigen_tol: Any) -> float:
    if isinstance(eigen_tol, bool) or not isinstance(eigen_tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"eigen_tol must be a real number, got {type(eigen_tol).__name__}")
    eigen_tol = float(eigen_tol)
    if not (0.0 <= eigen_tol < 1.0):
        raise ValueError(f"eigen_tol must be in [0, 1), got {eigen_tol!r}")
    return eigen_tol


def _check_prior(class_prior: Any, c: int) -> np.ndarray:
    if class_prior is None:
        return np.full(c, 1.0 / c)
    pi = check_array(class_prior, "class_prior", ndim=1, dtype=None).astype(np.float64)
    if pi.shape[0] != c:
        raise ValueError(f"class_prior has {pi.shape[0]} entries, expected n_clusters={c}")
    if np.any(pi <= 0):
        raise ValueError("class_prior must be positive")
    if not np.isclose(pi.sum(), 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"class_prior must sum to 1, got {pi.sum()!r}")
    return pi / pi.sum()


# --------------------------------------------------------------------------- SMIC


class SMICResult(NamedTuple):
    r"""Result of :func:`smic`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster ``y_i = argmax_y pi_y [max(0, phi~_y)]_i / s_y``, in ``0..c-1`` (the class
        order of ``class_prior``).
    scores : ndarray of float64, shape (n, c)
        ``pi_y [max(0, phi~_y)]_i / s_y``; ``n * scores`` estimates ``p(y | x_i)`` (column
        means ``pi_y``).
    unassigned : ndarray of bool, shape (n,)
        Points whose clipped scores are all 0; their label is the argmax of the unclipped
        score ``pi_y phi~_{y,i} / s_y`` (the paper is silent: docs/deviations.md#smic-unassigned).
    eigenvectors : ndarray of float64, shape (n, c)
        Sign-fixed eigenvectors :math:`\tilde\phi_y`, column ``y`` belonging to cluster ``y``.
    eigenvalues : ndarray of float64, shape (c,)
        :math:`\lambda_y` of column ``y``.
    positive_sums : ndarray of float64, shape (c,)
        :math:`s_y = \max(0, \tilde\phi_y)^\top 1_n`.
    class_prior : ndarray of float64, shape (c,)
    t : int
        The neighbourhood size of the local-scaling kernel (eq. 7).
    sigma : ndarray of float64, shape (n,)
        Local scales of the kernel (for out-of-sample prediction).
    sigma_floor : float
    degrees : ndarray of float64, shape (n,) or None
        Row sums of ``K`` when the degree-normalised variant was used (``normalize=True``),
        else None.
    """

    labels: np.ndarray
    scores: np.ndarray
    unassigned: np.ndarray
    eigenvectors: np.ndarray
    eigenvalues: np.ndarray
    positive_sums: np.ndarray
    class_prior: np.ndarray
    t: int
    sigma: np.ndarray
    sigma_floor: float
    degrees: np.ndarray | None = None


def _top_eigenpairs(K, c: int, solver: str, tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The ``c`` largest *algebraic* eigenpairs of the symmetric sparse ``K``, descending."""
    n = K.shape[0]
    if solver == "auto":
        solver = "dense" if n <= DENSE_MAX else "arpack"
    if solver == "dense":
        w, V = np.linalg.eigh(K.toarray())
        lam_min = w[0]
        w, V = w[::-1][:c], V[:, ::-1][:, :c]
        if abs(lam_min) >= w[-1]:
            warnings.warn(
                f"|lambda_min| = {abs(lam_min):.3g} >= lambda_c = {w[-1]:.3g}: the kernel is far "
                "from positive semi-definite; the largest-algebraic and largest-magnitude "
                "eigenvectors differ (SMIC uses the former)", RuntimeWarning, stacklevel=3,
            )
    elif solver == "arpack":
        from scipy.sparse.linalg import eigsh

        w, V = eigsh(K, k=c, which="LA", v0=np.full(n, 1.0 / np.sqrt(n)), tol=tol)
        order = np.argsort(w)[::-1]
        w, V = w[order], V[:, order]
    else:
        raise ValueError(f"eigen_solver must be 'auto', 'dense' or 'arpack', got {solver!r}")
    if w[-1] <= 0:
        warnings.warn(f"lambda_c = {w[-1]:.3g} <= 0: SMIC's clipping identity needs lambda_y > 0",
                      RuntimeWarning, stacklevel=3)
    return w, V


def smic(
    X: Any,
    t: int,
    n_clusters: int,
    class_prior: Any = None,
    *,
    eigen_solver: str = "auto",
    normalize: bool = False,
    eigen_tol: float = 0.0,
) -> SMICResult:
    r"""SMI-based clustering for a fixed kernel parameter ``t`` ([S] §2.3, Fig. 2).

    With ``K`` the sparse local-scaling kernel (eq. 7) and :math:`\phi_1..\phi_c` its
    eigenvectors of the ``c`` largest (algebraic) eigenvalues
    :math:`\lambda_1 \ge \dots \ge \lambda_c`,

    .. math::

        \tilde\phi_y = \phi_y\,\mathrm{sign}(\phi_y^\top 1_n), \qquad
        y_i = \arg\max_y \frac{\pi_y [\max(0, \tilde\phi_y)]_i}{\max(0, \tilde\phi_y)^\top 1_n}.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data, standardised per dimension as in all of [S]'s experiments (the
        :class:`bayesclust.SMIC` estimator does it).
    t : int
        The neighbourhood size of the local-scaling kernel (eq. 7), ``1 <= t < n``.
    n_clusters : int
        ``c``, ``2 <= c < n``.
    class_prior : array_like, shape (c,), optional
        Positive, summing to 1; uniform by default.  The paper pairs :math:`\phi_1` (largest
        eigenvalue) with the *smallest* prior: the prior is sorted ascending internally and
        the results are returned in the given class order.
    eigen_solver : {"auto", "dense", "arpack"}
        ``"arpack"``: ``scipy.sparse.linalg.eigsh(K, k=c, which="LA", v0=1/sqrt(n))`` on the
        sparse kernel (what makes n = 50,000 feasible); ``"dense"``: ``numpy.linalg.eigh``;
        ``"auto"``: dense up to 1000 samples.
    normalize : bool, default False
        **Our extension, not in [S]** (docs/deviations.md#smic-normalized-kernel).  Use the degree-normalised kernel
        :math:`D^{-1/2} K D^{-1/2}` (``D`` the row sums of ``K``, as in normalised spectral
        clustering) in place of ``K``, everything else unchanged.  With the paper's
        unnormalised ``K`` (default) denser regions dominate the top eigenvectors, which is why
        the circle & Gaussian toy is not solved (docs/deviations.md#smic-toy-b); the normalised variant
        solves it.
    eigen_tol : float, default 0.0
        Relative accuracy of the ARPACK eigenpairs (``eigsh``'s ``tol``; 0 = machine
        precision, ignored by the dense solver).  The top eigenvalues of the sparse kernel lie
        close together (relative gaps ~1e-3 at n = 50,000), so ARPACK needs hundreds of
        matrix-vector products at 0; ``1e-6`` takes about half as many.  Near-degenerate
        eigenvalues make the individual eigenvectors -- and so the labels -- sensitive to it.

    Returns
    -------
    SMICResult

    Notes
    -----
    * ``'LA'`` (largest algebraic) together with ``K_ii = 1``: the sparse kernel need not be
      PSD, and the clipping identity :math:`\max(0, K\tilde\phi) = \lambda\max(0,\tilde\phi)`
      needs :math:`\lambda > 0` (warns otherwise, and when :math:`|\lambda_{min}| \ge
      \lambda_c` with the dense solver).
    * If the kNN graph has at least ``c`` connected components or degenerate top
      eigenvalues, any basis of the eigenspace is a solution: labels may then differ between
      solvers (dense ``eigh`` vs ARPACK ``eigsh``).
    * Sign: :math:`\mathrm{sign}(0) = +1`.
    * Points whose clipped scores are all 0 are labelled by the unclipped score and flagged
      in ``unassigned`` (docs/deviations.md#smic-unassigned).

    References
    ----------
    M. Sugiyama et al., Neural Computation 26 (2014), §2.3, Fig. 2.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.random.default_rng(0).normal(size=(20, 2)) * 0.1,
    ...           np.random.default_rng(1).normal(size=(20, 2)) * 0.1 + 3.0]
    >>> res = smic(X, 3, 2)
    >>> len(set(res.labels[:20].tolist())), len(set(res.labels[20:].tolist()))
    (1, 1)
    >>> bool(res.labels[0] != res.labels[20])
    True
    """
    X = check_points(X, "X", min_samples=2, scale_free=True)
    n = X.shape[0]
    c = _check_n_clusters(n_clusters, n)
    t = _check_t(t, n)
    pi = _check_prior(class_prior, c)
    eigen_tol = _check_eigen_tol(eigen_tol)
    Xu, frame = unit_frame(X, dtype=np.float64)
    kern = local_scaling_kernel(Xu, t)
    with _one_blas_thread():
        return _in_data_frame(_smic_from_kernel(kern, c, pi, eigen_solver, normalize, eigen_tol), frame)


def _in_data_frame(res: SMICResult, frame) -> SMICResult:
    """A result computed in the unit frame with its local scales in the data frame.

    The local-scaling kernel (eq. 7) is invariant to translating and scaling the data
    (``sigma_i`` scales with them): SMIC builds it in the unit frame, where the squared
    distances neither overflow nor underflow, and hands back the scales of ``X``.
    """
    return res._replace(sigma=np.ldexp(res.sigma, frame.e),
                        sigma_floor=float(np.ldexp(res.sigma_floor, frame.e)))


def _normalized(K, deg_rows, deg_cols):
    import scipy.sparse as sp

    return (sp.diags(1.0 / np.sqrt(deg_rows)) @ K @ sp.diags(1.0 / np.sqrt(deg_cols))).tocsr()


def _smic_from_kernel(kern, c: int, pi: np.ndarray, eigen_solver: str,
                      normalize: bool = False, eigen_tol: float = 0.0) -> SMICResult:
    K = kern.K
    deg = None
    if normalize:
        deg = np.asarray(K.sum(axis=1)).reshape(-1)  # >= 1 (K_ii = 1)
        K = _normalized(K, deg, deg)
    w, V = _top_eigenpairs(K, c, eigen_solver, eigen_tol)
    V = V * np.where(V.sum(axis=0) >= 0, 1.0, -1.0)
    # Pair eigenvector k (k-th largest lambda) with the k-th smallest prior.
    order = np.argsort(pi, kind="stable")
    phi = np.empty_like(V)
    lam = np.empty(c)
    phi[:, order] = V
    lam[order] = w
    P = np.maximum(phi, 0.0)
    s = P.sum(axis=0)
    s_safe = np.maximum(s, np.finfo(np.float64).tiny)
    scores = pi * P / s_safe
    labels, unassigned = _argmax_with_fallback(scores, pi * phi / s_safe)
    return SMICResult(labels, scores, unassigned, phi, lam, s, pi, kern.t, kern.sigma,
                      kern.sigma_floor, deg)


def _argmax_with_fallback(scores: np.ndarray, unclipped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unassigned = ~(scores > 0).any(axis=1)
    labels = np.argmax(scores, axis=1)
    if unassigned.any():
        labels[unassigned] = np.argmax(unclipped[unassigned], axis=1)
    return labels.astype(np.int64), unassigned


def _smic_new_scores(result: SMICResult, X_train: Any, X_new: Any) -> tuple[np.ndarray, np.ndarray]:
    X_train = check_points(X_train, "X_train", scale_free=True)
    n_fit = result.eigenvectors.shape[0]
    if X_train.shape[0] != n_fit:
        raise ValueError(f"X_train has {X_train.shape[0]} rows but result was fitted on {n_fit}: "
                         "pass the data smic was fitted on")
    X_new = check_points(X_new, "X_new", scale_free=True)
    if X_new.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_new has {X_new.shape[1]} features, expected {X_train.shape[1]}")
    # in the unit frame of the training data, as smic built the training kernel
    Xu, frame = unit_frame(X_train, dtype=np.float64)
    Kx = local_scaling_cross_kernel(frame.to_unit(X_new), Xu, np.ldexp(result.sigma, -frame.e),
                                    result.t, float(np.ldexp(result.sigma_floor, -frame.e)))
    if result.degrees is not None:
        deg_new = np.asarray(Kx.sum(axis=1)).reshape(-1)
        Kx = _normalized(Kx, np.maximum(deg_new, np.finfo(np.float64).tiny), result.degrees)
    proj = np.asarray(Kx @ result.eigenvectors)
    denom = result.eigenvalues * np.maximum(result.positive_sums, np.finfo(np.float64).tiny)
    return result.class_prior * np.maximum(proj, 0.0) / denom, result.class_prior * proj / denom


def smic_predict(result: SMICResult, X_train: Any, X_new: Any) -> np.ndarray:
    r"""Out-of-sample SMIC assignment ([S] §2.3).

    .. math::

        y' = \arg\max_y \frac{\pi_y \max(0, \sum_i K(x', x_i)[\tilde\phi_y]_i)}
        {\lambda_y \max(0, \tilde\phi_y)^\top 1_n}

    with the out-of-sample kernel :func:`bayesclust.graphs.local_scaling_cross_kernel`
    (training points coinciding with ``x'`` are excluded from its neighbour list, so
    ``smic_predict(res, X, X)`` reproduces ``res.labels`` up to rows whose scores are all 0
    or tied: docs/deviations.md#smic-out-of-sample).  All-zero rows fall back to the unclipped score, as in :func:`smic`.

    Parameters
    ----------
    result : SMICResult
    X_train : array_like, shape (n, d)
        The data ``result`` was fitted on.
    X_new : array_like, shape (m, d)

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    scores, unclipped = _smic_new_scores(result, X_train, X_new)
    return _argmax_with_fallback(scores, unclipped)[0]


def smic_predict_proba(result: SMICResult, X_train: Any, X_new: Any) -> np.ndarray:
    """Normalised out-of-sample scores, rows summing to 1 (rows of zeros fall back to pi).

    The paper plots "class-posterior probabilities" without defining their normalisation;
    this is our resolution (docs/deviations.md#smic-predict-proba).  Shape (m, c).
    """
    scores, _ = _smic_new_scores(result, X_train, X_new)
    tot = scores.sum(axis=1, keepdims=True)
    return np.where(tot > 0, scores / np.where(tot > 0, tot, 1.0), result.class_prior)


# --------------------------------------------------------------------------- LSMI


def _gauss(sq: np.ndarray, gamma: float) -> np.ndarray:
    return np.exp(-sq / (2.0 * gamma * gamma))


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Float64 squared distances on the host (scipy's cdist; the LSMI matrices are n x b)."""
    from scipy.spatial.distance import cdist

    return cdist(A, B, "sqeuclidean")


class LSMIFit(NamedTuple):
    r"""Result of :func:`lsmi_fit` (one ``(gamma, delta)``).

    Attributes
    ----------
    value : float
        LSMI of eq. (14), :math:`-\frac12\sum_y\theta_y^\top H_y\theta_y + \sum_y\theta_y^\top
        h_y - \frac12`.
    theta : ndarray of float64, shape (b,)
        Coefficients of the basis centres (centre ``l`` belongs to the class of its point).
    centers : ndarray of int64, shape (b,)
        Row indices of the basis centres.
    """

    value: float
    theta: np.ndarray
    centers: np.ndarray


def lsmi_fit(X: Any, labels: Any, gamma: float, delta: float, centers: Any = None) -> LSMIFit:
    r"""Class-wise LSMI at a fixed Gaussian width and regulariser ([S] §2.4, eqs. 10-14).

    For every class ``y`` with basis centres :math:`x^{(y)}_\ell` (the centres labelled ``y``):

    .. math::

        \hat H^{(y)}_{\ell\ell'} = \frac{n_y}{n^2}\sum_{i=1}^n L(x_i, x^{(y)}_\ell)
        L(x_i, x^{(y)}_{\ell'}),\quad
        \hat h^{(y)}_\ell = \frac1n\sum_{i: y_i = y} L(x_i, x^{(y)}_\ell),\quad
        \hat\theta^{(y)} = (\hat H^{(y)} + \delta I)^{-1}\hat h^{(y)},

    with :math:`L(x, x') = \exp(-|x - x'|^2 / (2\gamma^2))`, and
    :math:`\mathrm{LSMI} = -\frac{1}{2n^2}\sum_{i,j}\hat r(x_i, y_j)^2 + \frac1n\sum_i
    \hat r(x_i, y_i) - \frac12`.  By [S] footnote 4 this equals the all-class LSMI of Suzuki
    et al. (2009) with a Kronecker-delta label kernel (tested).

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
    gamma, delta : float
        Positive.
    centers : array_like of int, optional
        Row indices of the basis centres (default: all rows).

    Returns
    -------
    LSMIFit
    """
    X = check_points(X, "X", scale_free=True)
    labels = _codes(check_labels(labels, "labels", n_samples=X.shape[0]))
    gamma = check_positive(gamma, "gamma")
    delta = check_positive(delta, "delta")
    centers = _check_centers(centers, X.shape[0])
    Lc = _gauss(_sqdist(X, X[centers]), gamma)
    theta, value = _classwise(Lc, labels, labels[centers], np.array([delta]))
    return LSMIFit(float(value[0]), theta[:, 0], centers)


def _codes(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].reshape(-1)


def _check_centers(centers: Any, n: int) -> np.ndarray:
    if centers is None:
        return np.arange(n)
    centers = check_labels(centers, "centers")
    if centers.min() < 0 or centers.max() >= n:
        raise ValueError(f"centers must be row indices in [0, {n}), got range "
                         f"[{centers.min()}, {centers.max()}]")
    return centers.astype(np.int64)


def _classwise(L: np.ndarray, y: np.ndarray, yc: np.ndarray, deltas: np.ndarray):
    """Class-wise fits for all ``deltas`` at once.

    ``L`` (n, b): kernel of the rows to the centres (labels ``y``, centre labels ``yc``).
    Returns ``theta`` (b, n_delta) and the in-sample LSMI (n_delta,).
    """
    c = int(max(y.max(), yc.max())) + 1
    return _classwise_moments(L.T @ L, _class_sums(L, y, c), np.bincount(y, minlength=c), L.shape[0], yc,
                              deltas)


def _class_sums(L: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """Rows of ``L`` (n, b) summed per class of ``y`` (n,), shape (n_classes, b)."""
    onehot = np.zeros((L.shape[0], n_classes))
    onehot[np.arange(L.shape[0]), y] = 1.0
    return onehot.T @ L  # a matrix product rather than a scatter (np.add.at)


def _classwise_moments(G: np.ndarray, S: np.ndarray, counts: np.ndarray, n: int, yc: np.ndarray,
                       deltas: np.ndarray, G_eval: np.ndarray | None = None, S_eval: np.ndarray | None = None,
                       counts_eval: np.ndarray | None = None):
    """:func:`_classwise` from the moments of the training rows: their Gram matrix ``G`` (b, b),
    per-class row sums ``S`` (n_classes, b) and class counts, ``n`` rows.  The moments are
    what several labellings of the same rows share (:func:`_lsmi_cv_many`).

    With the same moments of the held-out rows (``G_eval``, ``S_eval``, ``counts_eval``)
    it returns the hold-out criterion CV_m (n_delta,) instead of the in-sample LSMI: with
    ``R = L_eval[:, cols] theta`` the fitted ratios of class ``cls`` at the held-out rows,
    ``sum_i R_i^2 = theta^T G_eval[cols, cols] theta`` and ``sum_{i: y_i = cls} R_i =
    S_eval[cls, cols] theta``, so the held-out kernel rows themselves are not needed.
    """
    nd = deltas.shape[0]
    theta = np.zeros((G.shape[0], nd))
    value = np.full(nd, -0.5)
    cv = np.zeros(nd)
    if G_eval is not None:
        n_m = int(counts_eval.sum())
    for cls in np.unique(yc):
        cols = np.flatnonzero(yc == cls)
        n_y = int(counts[cls]) if cls < counts.shape[0] else 0
        if n_y == 0:
            continue  # no training sample of this class: r(., y) = 0
        H = (n_y / n**2) * G[np.ix_(cols, cols)]
        h = S[cls, cols] / n
        ev, U = np.linalg.eigh(H)
        Uh = U.T @ h
        th = U @ (Uh[:, None] / (ev[:, None] + deltas[None, :]))  # (b_y, n_delta)
        theta[cols] = th
        if G_eval is None:
            Hth = H @ th
            value += -0.5 * np.sum(th * Hth, axis=0) + h @ th
        else:
            sum_r2 = np.sum(th * (G_eval[np.ix_(cols, cols)] @ th), axis=0)
            n_my = int(counts_eval[cls]) if cls < counts_eval.shape[0] else 0
            sum_r_own = S_eval[cls, cols] @ th if n_my else 0.0
            cv += n_my * sum_r2 / (2.0 * n_m**2) - sum_r_own / n_m
    return theta, (value if G_eval is None else cv)


class LSMIResult(NamedTuple):
    """Result of :func:`lsmi`.

    Attributes
    ----------
    value : float
        LSMI (eq. 14) refitted on all samples at the selected ``(gamma, delta)``.
    gamma, delta : float
        The cross-validated Gaussian width and regulariser.
    cv_scores : ndarray of float64, shape (n_gammas, n_deltas)
        Mean hold-out criterion ``CV(gamma, delta)`` (lower is better).
    theta : ndarray of float64, shape (b,)
    centers : ndarray of int64, shape (b,)
    """

    value: float
    gamma: float
    delta: float
    cv_scores: np.ndarray
    theta: np.ndarray
    centers: np.ndarray


def _lsmi_design(key, n: int, n_basis: int, n_folds: int) -> tuple[np.ndarray, np.ndarray]:
    """Random basis centres (min(n_basis, n), without replacement) and fold ids.

    The permutations are ``jax.random.permutation``'s, compiled once per shape bucket
    (:func:`bayesclust.inference._driver.permutation`): a new ``n`` compiles nothing.
    """
    import jax

    from .._driver import permutation

    k_c, k_f = jax.random.split(key)
    b = min(n_basis, n)
    centers = np.sort(permutation(k_c, n)[:b]).astype(np.int64)
    perm = permutation(k_f, n)
    folds = np.empty(n, np.int64)
    folds[perm] = np.arange(n) % n_folds
    return centers, folds


def _lsmi_cv(X: np.ndarray, y: np.ndarray, centers: np.ndarray, folds: np.ndarray,
             gammas: np.ndarray, deltas: np.ndarray, sq: np.ndarray | None = None) -> LSMIResult:
    return _lsmi_cv_many(X, y[None], centers, folds, gammas, deltas, sq)[0]


def _lsmi_cv_many(X: np.ndarray, Y: np.ndarray, centers: np.ndarray, folds: np.ndarray,
                  gammas: np.ndarray, deltas: np.ndarray, sq: np.ndarray | None = None) -> list[LSMIResult]:
    """Cross-validated LSMI of every labelling ``Y[r]`` (each coded 0..c_r-1) of the same rows.

    Everything the fits and the hold-out scores need is a moment of the kernel rows: per
    gamma and fold, the Gram matrix of the fold's rows and their per-class sums (one matrix
    product for every labelling's classes).  The training moments of fold ``m`` are the
    totals minus fold ``m``'s, the hold-out criterion uses fold ``m``'s own
    (:func:`_classwise_moments`), and the final refit at the selected ``(gamma, delta)`` the
    totals.  The rows are grouped by fold once, so every fold is a contiguous block;
    identical labellings are scored once.
    """
    if sq is None:
        sq = _sqdist(X, X[centers])
    n = X.shape[0]
    n_folds = int(folds.max()) + 1
    center_fold = folds[centers]
    Y = np.asarray(Y)
    uniq, back = [], []  # identical labellings (often, for neighbouring t) are scored once
    for y in Y:
        same = [u for u, z in enumerate(uniq) if np.array_equal(z, y)]
        back.append(same[0] if same else len(uniq))
        if not same:
            uniq.append(y)
    uniq = np.stack(uniq)
    n_classes = [int(y.max()) + 1 for y in uniq]
    offs = np.concatenate([[0], np.cumsum(n_classes)])
    order = np.argsort(folds, kind="stable")
    bounds = np.searchsorted(folds[order], np.arange(n_folds + 1))
    sq_f = sq[order]
    onehot = np.zeros((n, int(offs[-1])))  # (row, (labelling, class)) indicators, rows by fold
    for r, y in enumerate(uniq):
        onehot[np.arange(n), offs[r] + y[order]] = 1.0
    counts_f = np.stack([onehot[a:b].sum(axis=0) for a, b in zip(bounds[:-1], bounds[1:])])
    counts_all = counts_f.sum(axis=0)
    cv = np.zeros((uniq.shape[0], gammas.size, deltas.size))
    G_tot, S_tot = [], []
    L = np.empty_like(sq_f)
    for g, gamma in enumerate(gammas):
        np.multiply(sq_f, -1.0 / (2.0 * gamma * gamma), out=L)
        np.exp(L, out=L)
        blocks = [L[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        G_f = [blk.T @ blk for blk in blocks]
        S_f = [oh.T @ blk for oh, blk in zip((onehot[a:b] for a, b in zip(bounds[:-1], bounds[1:])), blocks)]
        G_all, S_all = sum(G_f), sum(S_f)
        G_tot.append(G_all)
        S_tot.append(S_all)
        for m in range(n_folds):
            keep = np.flatnonzero(center_fold != m)  # centres in the training part only
            kk = np.ix_(keep, keep)
            G_tr, G_te = (G_all - G_f[m])[kk], G_f[m][kk]
            n_tr = n - (bounds[m + 1] - bounds[m])
            for r, y in enumerate(uniq):
                sl = slice(offs[r], offs[r + 1])
                S_tr, S_te = (S_all[sl] - S_f[m][sl])[:, keep], S_f[m][sl][:, keep]
                c_te = counts_f[m, sl]
                _, cv_m = _classwise_moments(G_tr, S_tr, counts_all[sl] - c_te, n_tr, y[centers][keep],
                                             deltas, G_te, S_te, c_te)
                cv[r, g] += cv_m / n_folds
    fits = []
    for r, y in enumerate(uniq):
        g, d = np.unravel_index(np.argmin(cv[r]), cv[r].shape)
        sl = slice(offs[r], offs[r + 1])
        theta, value = _classwise_moments(G_tot[g], S_tot[g][sl], counts_all[sl], n, y[centers],
                                          deltas[d:d + 1])
        fits.append(LSMIResult(float(value[0]), float(gammas[g]), float(deltas[d]), cv[r], theta[:, 0], centers))
    return [fits[i] for i in back]


def lsmi(
    rng_key: Any,
    X: Any,
    labels: Any,
    *,
    gammas: Sequence[float] = LSMI_GAMMAS,
    deltas: Sequence[float] = LSMI_DELTAS,
    n_folds: int = 5,
    n_basis: int = 200,
) -> LSMIResult:
    r"""Least-squares mutual information of a labelled sample, with CV over (gamma, delta).

    [S] §2.4, Fig. 3: ``M = n_folds`` random folds; for every ``(gamma, delta)`` of the grid
    and fold ``m`` the class-wise density-ratio model :func:`lsmi_fit` is fitted on the other
    folds (using the basis centres lying there) and scored on fold ``m`` by

    .. math::

        \mathrm{CV}_m = \frac{1}{2 n_m^2}\sum_{i, j \in Z_m}\hat r_m(x_i, y_j)^2
        - \frac{1}{n_m}\sum_{i \in Z_m}\hat r_m(x_i, y_i);

    the minimiser of the fold mean is refitted on all data and eq. (14) returned.  At most
    ``n_basis`` centres (200 in [S]), drawn at random from all samples.

    Parameters
    ----------
    rng_key : jax.random key or int
        Draws the centres and the folds.
    X : array_like, shape (n, d)
        Standardised data (the gamma grid is absolute).
    labels : array_like of int, shape (n,)
    gammas, deltas : sequences of float
        The 9 x 9 grid of [S] by default.
    n_folds : int, default 5
    n_basis : int, default 200

    Returns
    -------
    LSMIResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.normal(size=(100, 2)) + 6.0 * y[:, None]
    >>> round(lsmi(0, X, y).value, 1)  # two separated equal classes: SMI = 1/2
    0.5
    >>> abs(lsmi(0, X, rng.permutation(y)).value) < 0.05  # independent labels: SMI = 0
    True
    """
    key = as_rng_key(rng_key)
    X = check_points(X, "X", min_samples=2, scale_free=True)
    y = _codes(check_labels(labels, "labels", n_samples=X.shape[0]))
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    if n_folds > X.shape[0]:
        raise ValueError(f"n_folds={n_folds} must be <= n_samples={X.shape[0]}")
    n_basis = check_int(n_basis, "n_basis", minimum=1)
    gammas = np.array([check_positive(g, "gammas") for g in gammas])
    deltas = np.array([check_positive(d, "deltas") for d in deltas])
    if gammas.size == 0 or deltas.size == 0:
        raise ValueError("gammas and deltas must be non-empty")
    centers, folds = _lsmi_design(key, X.shape[0], n_basis, n_folds)
    with _one_blas_thread():
        return _lsmi_cv(X, y, centers, folds, gammas, deltas)


# --------------------------------------------------------------------------- model selection


class SMICSelection(NamedTuple):
    """Result of :func:`smic_select`.

    Attributes
    ----------
    result : SMICResult
        The SMIC solution at the selected ``t``.
    t : int
        The selected ``t`` (largest LSMI; ties go to the smallest ``t``).
    candidates : ndarray of int64, shape (n_candidates,)
    lsmi : ndarray of float64, shape (n_candidates,)
        LSMI of the SMIC labelling of every candidate.
    lsmi_results : list of LSMIResult
    labels : ndarray of int64, shape (n_candidates, n)
        The SMIC labels of every candidate.
    smic_seconds : float
        Wall time of the SMIC fits (kernel + eigenvectors) of all candidates.
    lsmi_seconds : float
        Wall time of the LSMI model selection (all candidates).
    """

    result: SMICResult
    t: int
    candidates: np.ndarray
    lsmi: np.ndarray
    lsmi_results: list
    labels: np.ndarray
    smic_seconds: float
    lsmi_seconds: float


def smic_select(
    rng_key: Any,
    X: Any,
    n_clusters: int,
    candidates: Sequence[int] = DEFAULT_CANDIDATES,
    class_prior: Any = None,
    *,
    eigen_solver: str = "auto",
    gammas: Sequence[float] = LSMI_GAMMAS,
    deltas: Sequence[float] = LSMI_DELTAS,
    n_folds: int = 5,
    n_basis: int = 200,
    normalize: bool = False,
    eigen_tol: float = 0.0,
) -> SMICSelection:
    r"""SMIC with the kernel parameter ``t`` chosen by maximising LSMI ([S] Fig. 1).

    For every ``t`` in ``candidates``: ``Y(t) = smic(X, t, c)``, ``LSMI(t) = lsmi(X, Y(t))``;
    return the solution of :math:`\hat t = \arg\max_t \mathrm{LSMI}(t)`.  The basis centres
    and the folds are drawn once and shared by all candidates (common random numbers, so the
    LSMI values are comparable); the labels attached to the centres are each candidate's.

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
        Standardised data.
    n_clusters : int
        ``c >= 2``.
    candidates : sequence of int, default 1..10
        Each ``1 <= t < n``.
    class_prior, eigen_solver, normalize, eigen_tol
        As in :func:`smic` (``normalize=True`` is our degree-normalised extension, not in [S]).
        The kernels of all candidates come from one k-NN search at the largest ``t``
        (:func:`bayesclust.graphs.local_scaling_kernels`).
    gammas, deltas, n_folds, n_basis
        As in :func:`lsmi`.

    Returns
    -------
    SMICSelection

    Examples
    --------
    >>> from bayesclust.datasets import four_gaussian_blobs
    >>> X, y = four_gaussian_blobs(0)
    >>> sel = smic_select(0, (X - X.mean(0)) / X.std(0), 4, candidates=[3, 5, 7])
    >>> from bayesclust.metrics import ari
    >>> ari(y, sel.result.labels)
    1.0
    """
    key = as_rng_key(rng_key)
    X = check_points(X, "X", min_samples=2, scale_free=True)
    n = X.shape[0]
    c = _check_n_clusters(n_clusters, n)
    cands = [_check_t(t, n, "candidates") for t in candidates]
    if not cands:
        raise ValueError("candidates must contain at least one t")
    pi = _check_prior(class_prior, c)
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    if n_folds > n:
        raise ValueError(f"n_folds={n_folds} must be <= n_samples={n}")
    n_basis = check_int(n_basis, "n_basis", minimum=1)
    gammas = np.array([check_positive(g, "gammas") for g in gammas])
    deltas = np.array([check_positive(d, "deltas") for d in deltas])
    eigen_tol = _check_eigen_tol(eigen_tol)
    centers, folds = _lsmi_design(key, n, n_basis, n_folds)
    sq = _sqdist(X, X[centers])
    results = []
    t0 = time.perf_counter()
    # one k-NN search at the largest t serves every candidate (the neighbour lists are nested)
    Xu, frame = unit_frame(X, dtype=np.float64)
    for kern in local_scaling_kernels(Xu, cands):
        with _one_blas_thread():
            results.append(_in_data_frame(_smic_from_kernel(kern, c, pi, eigen_solver, normalize,
                                                            eigen_tol), frame))
    t1 = time.perf_counter()
    # one pass over the (gamma, fold) grid scores every candidate's labels
    with _one_blas_thread():
        fits = _lsmi_cv_many(X, np.stack([_codes(r.labels) for r in results]), centers, folds, gammas, deltas, sq)
    t_smic, t_lsmi = t1 - t0, time.perf_counter() - t1
    scores = np.asarray([f.value for f in fits])
    best = int(np.argmax(scores))  # first maximum; candidates in the given order
    tied = np.flatnonzero(scores == scores[best])
    best = int(tied[np.argmin(np.asarray(cands)[tied])])
    return SMICSelection(results[best], cands[best], np.asarray(cands, np.int64), scores, fits,
                         np.stack([r.labels for r in results]), t_smic, t_lsmi)
