r"""Kernel DP-means, spectral DP-means and the penalised normalised cut.

Kulis & Jordan (2012), §5: the DP-means objective in a feature space,

.. math::

    J(K, W) + \lambda k = \sum_c \sum_{i \in c} w_i \|\psi(x_i) - \mu_c\|^2 + \lambda k,
    \qquad \mu_c = \frac{\sum_{i\in c} w_i \psi(x_i)}{\sum_{i \in c} w_i},

needs only the kernel matrix :math:`K_{ij} = \psi(x_i)^\top\psi(x_j)`.  Three
algorithms live here:

* :func:`kernel_dp_means` -- weighted kernel DP-means, "a straightforward
  extension of Algorithm 1" (KJ §5.2), with exactly the semantics of
  :func:`bayesclust.dp_means` (with :math:`K = XX^\top` both give the same
  partitions);
* :func:`spectral_dp_means` -- the spectral relaxation (KJ §5.1, Thm 5.2):
  all eigenvectors of :math:`K` with eigenvalue :math:`> \lambda`, rows then
  clustered by k-means;
* :func:`penalized_ncut` -- the penalised normalised cut
  :math:`\mathrm{Cut}(A) + \lambda' k` of a (sparse) graph through
  :math:`K = \sigma D^{-1} + D^{-1} A D^{-1}`, :math:`W = D`,
  :math:`\lambda = \lambda' + \sigma + 1` (KJ Thm 5.3), in
  :math:`O(|E| + nk)` per iteration without forming :math:`K`.

The computations are host NumPy / SciPy (sparse products and LAPACK / ARPACK
eigensolvers); no JAX code runs here.
"""

from __future__ import annotations

import functools
import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .. import _validation as V
from .kmeans import lloyd_host

__all__ = [
    "KernelDPMeansResult",
    "kernel_dp_means",
    "KernelDPMeansState",
    "KernelDPMeansInfo",
    "init_kernel_dp_means_state",
    "kernel_dp_means_step",
    "kernel_dp_means_objective",
    "SpectralDPMeansResult",
    "spectral_dp_means",
    "thresholded_eigenvectors",
    "PenalizedNCutResult",
    "penalized_ncut",
    "PenalizedNCutState",
    "PenalizedNCutInfo",
    "init_penalized_ncut_state",
    "penalized_ncut_step",
    "normalized_cut",
    "ncut_sigma_psd",
]

#: Relative tolerance of the objective-based stopping rule (as dp_means: docs/deviations.md#dpmeans-pass-semantics).
OBJECTIVE_TOL = 1e-12
#: A pass whose objective rises by more than this (relative) is rejected
#: (possible only for a kernel that is not positive semi-definite).
_INCREASE_TOL = 1e-9
#: Largest n for which dense eigensolvers are used on sparse input by default.
_DENSE_EIG_MAX_N = 500


# --------------------------------------------------------------------------- #
# The weighted kernel DP-means engine (docs/deviations.md#kernel-dpmeans-semantics), shared by the dense kernel
# and the sparse graph (penalised NCut) back ends.
# --------------------------------------------------------------------------- #


class _DenseKernel:
    """Back end on an explicit ``(n, n)`` kernel matrix.

    The kernel is centred in feature space (``K <- K - 1 m^T - m 1^T + c`` at
    the weighted global mean) once: distances are unchanged, cancellation in
    ``K_ii - 2 M_ic / s_c + Q_c / s_c^2`` is reduced (as dp_means centres X).
    """

    def __init__(self, K, w, lam=None):
        self.lam = lam  # the penalty of the run
        W = w.sum()
        m = K @ w / W
        c = w @ m / W
        self.K = K - m[:, None] - m[None, :] + c
        self.w = w
        self.kd = np.diag(self.K).copy()

    def mq(self, labels, k):
        n = self.K.shape[0]
        Zw = np.zeros((n, k))
        Zw[np.arange(n), labels] = self.w
        M = self.K @ Zw  # M_ic = sum_{j in c} w_j K_ij
        s = Zw.sum(0)
        Q = np.einsum("ic,ic->c", Zw, M)  # Q_c = sum_{j,l in c} w_j w_l K_jl
        return M, Q, s

    def objective(self, labels, k, lam):
        _, Q, s = self.mq(labels, k)
        return float(self.w @ self.kd - np.sum(Q / s) + lam * k)

    def run_objective(self, labels, k):
        """The traced objective, ``J(K, W) + lam k``."""
        return self.objective(labels, k, self.lam)

    def accept(self, cand, lam):
        """Serial new-cluster decisions among the candidates, in order.

        Candidate ``j`` opens a cluster iff ``w_j dist(j, s) > lam`` for every
        earlier accepted seed ``s`` (only candidates can open clusters).
        """
        seeds = []
        for j in cand:
            if seeds:
                cols = np.asarray(seeds)
                dist = self.kd[j] + self.kd[cols] - 2.0 * self.K[j, cols]
                if not np.all(self.w[j] * dist > lam):
                    continue
            seeds.append(j)
        return np.asarray(seeds, np.int64)

    def best_new(self, seeds):
        """Per point: min over seeds born strictly before it of ``K_ss - 2 K_is``."""
        n = self.K.shape[0]
        vals = self.kd[seeds][None, :] - 2.0 * self.K[:, seeds]
        visible = seeds[None, :] < np.arange(n)[:, None]
        vals = np.where(visible, vals, np.inf)
        idx = np.argmin(vals, axis=1)  # lowest index on ties
        return vals[np.arange(n), idx], idx


class _Graph:
    """Back end of the penalised normalised cut: never forms ``K``.

    ``K_ij = sigma delta_ij / d_i + A_ij / (d_i d_j)``, ``w_i = d_i``, so with
    ``L_ic = links(i, c)``, ``d(c) = deg(c)``:
    ``M_ic = sigma [i in c] + L_ic / d_i`` and ``Q_c = sigma d(c) + links(c, c)``.
    """

    def __init__(self, A, deg, sigma, lam=None, lam_prime=None):
        self.lam = lam  # the kernel-space penalty lam' + sigma + 1 of the run
        self.lam_prime = lam_prime
        self.A = A  # CSR, symmetric, no explicit zeros
        coo = A.tocoo()
        self.row, self.col = coo.row.astype(np.int64), coo.col.astype(np.int64)
        self.data = coo.data
        self.deg = deg
        self.w = deg
        self.sigma = sigma
        self.diag = A.diagonal()
        self.kd = sigma / deg + self.diag / deg**2

    def _links(self, labels, k):
        n = self.A.shape[0]
        L = np.bincount(self.row * k + labels[self.col], weights=self.data, minlength=n * k)
        L = L.reshape(n, k)
        same = labels[self.row] == labels[self.col]
        Lcc = np.bincount(labels[self.row[same]], weights=self.data[same], minlength=k)
        degc = np.bincount(labels, weights=self.deg, minlength=k)
        return L, Lcc, degc

    def mq(self, labels, k):
        n = self.A.shape[0]
        L, Lcc, degc = self._links(labels, k)
        L /= self.deg[:, None]  # in place: M is the only (n, k) array of a pass
        L[np.arange(n), labels] += self.sigma
        return L, self.sigma * degc + Lcc, degc

    def objective(self, labels, k, lam_prime):
        """``Cut(A) + lam' k``, from ``links(c, c)`` and ``deg(c)`` in O(|E|)."""
        same = labels[self.row] == labels[self.col]
        Lcc = np.bincount(labels[self.row[same]], weights=self.data[same], minlength=k)
        degc = np.bincount(labels, weights=self.deg, minlength=k)
        return float(np.sum((degc - Lcc) / degc) + lam_prime * k)

    def run_objective(self, labels, k):
        """The traced objective, ``Cut(A) + lam' k``."""
        return self.objective(labels, k, self.lam_prime)

    def merge(self, labels, k, lam_prime):
        """Greedy merges of cluster pairs while one lowers ``Cut + lam' k`` (ours: docs/deviations.md#penalised-ncut-merges).

        With ``a_c = links(c, c) / deg(c)`` the objective is
        ``(1 + lam') k - sum_c a_c``; merging ``a`` and ``b`` changes it by
        ``-(1 + lam') - [(L_aa + L_bb + 2 L_ab) / (d_a + d_b) - a_a - a_b]``.
        The best pair is merged until no merge lowers the objective:
        ``O(|E| + k^2)`` per merge.
        """
        if k < 2:
            return labels, k
        L = sp.coo_matrix((self.data, (labels[self.row], labels[self.col])), shape=(k, k)).toarray()
        d = np.bincount(labels, weights=self.deg, minlength=k).astype(np.float64)
        target = np.arange(k)
        alive = np.ones(k, bool)
        while alive.sum() > 1:
            diag = np.diag(L)
            assoc = diag / d
            gain = (diag[:, None] + diag[None, :] + 2.0 * L) / (d[:, None] + d[None, :])
            delta = -(1.0 + lam_prime) - (gain - assoc[:, None] - assoc[None, :])
            ok = alive[:, None] & alive[None, :] & np.triu(np.ones((k, k), bool), 1)
            delta = np.where(ok, delta, np.inf)
            flat = int(np.argmin(delta))
            if not delta.flat[flat] < -1e-12 * max(1.0, float(k)):
                break
            a, b = divmod(flat, k)
            L[a, :] += L[b, :]
            L[:, a] += L[:, b]
            L[b, :] = 0.0
            L[:, b] = 0.0
            d[a] += d[b]
            d[b] = 1.0
            alive[b] = False
            target[target == b] = a
        if alive.all():
            return labels, k
        return _compact(target[labels])

    def accept(self, cand, lam):
        """As the dense back end, in O(sum of the candidates' degrees).

        ``j`` is blocked iff some accepted ``s`` has ``K_ss - 2 K_js <= t_j``
        with ``t_j = lam / d_j - K_jj``.  For a non-neighbour ``K_js = 0`` and
        for a neighbour ``K_js > 0``, so it suffices to compare ``t_j`` with the
        running minimum of ``K_ss`` and to check ``j``'s neighbouring seeds.
        """
        n = self.A.shape[0]
        is_seed = np.zeros(n, bool)
        min_kd = np.inf
        seeds = []
        indptr, indices, data = self.A.indptr, self.A.indices, self.A.data
        for j in cand:
            t = lam / self.w[j] - self.kd[j]
            if min_kd <= t:
                continue
            lo, hi = indptr[j], indptr[j + 1]
            nb = indices[lo:hi]
            m = is_seed[nb]
            if m.any():
                s_nb = nb[m]
                v = self.kd[s_nb] - 2.0 * data[lo:hi][m] / (self.deg[j] * self.deg[s_nb])
                if np.any(v <= t):
                    continue
            seeds.append(j)
            is_seed[j] = True
            min_kd = min(min_kd, self.kd[j])
        return np.asarray(seeds, np.int64)

    def best_new(self, seeds):
        """As the dense back end, in O(n + sum of the seeds' degrees).

        For a non-neighbour seed the value is ``K_ss``; for a neighbour it is
        ``K_ss - 2 K_is < K_ss``.  So the minimum over the visible seeds is
        ``min(prefix-min of K_ss, min over neighbour seeds)``, ties to the
        earlier seed.
        """
        n = self.A.shape[0]
        kd_s = self.kd[seeds]
        # running minimum of K_ss over seeds 0..m, earliest seed attaining it
        pm = np.minimum.accumulate(kd_s)
        record = np.flatnonzero(np.r_[True, pm[1:] < pm[:-1]])
        n_visible = np.searchsorted(seeds, np.arange(n), side="left")
        val = np.full(n, np.inf)
        idx = np.zeros(n, np.int64)
        has = n_visible > 0
        m = n_visible[has] - 1
        val[has] = pm[m]
        idx[has] = record[np.searchsorted(record, m, side="right") - 1]
        # neighbour seeds: rows of A at the seeds (A symmetric)
        sub = self.A[seeds].tocoo()
        s_idx, i = sub.row, sub.col
        keep = seeds[s_idx] < i
        s_idx, i, a = s_idx[keep], i[keep], sub.data[keep]
        if len(i):
            v = kd_s[s_idx] - 2.0 * a / (self.deg[i] * self.deg[seeds[s_idx]])
            o = np.lexsort((s_idx, v, i))  # by point, then value, then seed index
            i, v, s_idx = i[o], v[o], s_idx[o]
            first = np.r_[True, i[1:] != i[:-1]]
            i, v, s_idx = i[first], v[first], s_idx[first]
            better = (v < val[i]) | ((v == val[i]) & (s_idx < idx[i]))
            val[i[better]] = v[better]
            idx[i[better]] = s_idx[better]
        return val, idx


def _compact(labels):
    """Relabel to 0..k-1 in order of the original (creation) index."""
    uniq, inv = np.unique(labels, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), len(uniq)


def _kernel_pass(be, labels, k, lam):
    """One pass of weighted kernel DP-means (docs/deviations.md#kernel-dpmeans-semantics), computed in bulk.

    Equivalent to the per-point loop with frozen reference memberships: point
    ``i`` (in row order) opens a cluster iff ``w_i * min_c dist(i, c) > lam``
    over the pass's old clusters and the clusters opened by earlier points
    (whose implicit mean is their seed); otherwise it joins the nearest
    (lowest index on ties, old clusters before new ones).
    """
    n = be.kd.shape[0]
    w = be.w
    M, Q, s = be.mq(labels, k)
    # dist(i, c) - K_ii = -2 M_ic / s_c + Q_c / s_c^2, in place (one (n, k) array)
    D = M
    D *= -2.0 / s
    D += Q / s**2
    old_idx = np.argmin(D, axis=1)
    old_d = be.kd + D[np.arange(n), old_idx]
    cand = np.flatnonzero(w * old_d > lam)
    if cand.size == 0:
        return old_idx, k
    seeds = be.accept(cand, lam)
    new_val, new_idx = be.best_new(seeds)
    new_d = be.kd + new_val
    use_new = new_d < old_d  # old clusters win ties
    labels = np.where(use_new, k + new_idx, old_idx)
    labels[seeds] = k + np.arange(len(seeds))
    return labels, k + len(seeds)


class KernelDPMeansState(NamedTuple):
    """State of a weighted kernel DP-means run between two passes.

    Made by :func:`init_kernel_dp_means_state`, advanced by
    :func:`kernel_dp_means_step`; :func:`kernel_dp_means` loops over the step.
    Host NumPy, float64.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    n_clusters : int
    objective : float
        The traced objective of this state: :math:`J(K, W) + \\lambda k`
        (for :func:`penalized_ncut`, :math:`\\mathrm{Cut}(A) + \\lambda' k`).
    objective_trace : ndarray, shape (n_accepted + 1,)
        The objective at the start and after every accepted pass (and merge).
    n_iter : int
        Passes run (a rejected pass counts).
    converged : bool
        The last pass left the labels unchanged, did not lower the objective
        (relative tolerance ``OBJECTIVE_TOL``) or was rejected.
    n_rejected : int
        Passes rejected because they raised the objective.
    kernel : object
        The prepared kernel and the penalty (private, constant during the
        run): the kernel centred at the weighted mean with the weights, or for
        a graph the adjacency, the degrees and ``sigma``.
    """

    labels: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_rejected: int
    kernel: object


class KernelDPMeansInfo(NamedTuple):
    """Diagnostics of one :func:`kernel_dp_means_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The step changed the labels.
    rejected : bool
        The pass raised the objective and was rejected (the state is kept).
    """

    objective: float
    changed: bool
    rejected: bool


def _initial_state(be, labels, state_type=KernelDPMeansState):
    labels, k = _compact(labels)
    J = be.run_objective(labels, k)
    return state_type(labels, k, J, np.asarray([J]), 0, False, 0, be)


def _pass_step(state):
    """One pass of kernel DP-means on a state: ``(state, changed, rejected)``."""
    be, labels, k, J = state.kernel, state.labels, state.n_clusters, state.objective
    new_labels, _ = _kernel_pass(be, labels, k, be.lam)
    new_labels, k_new = _compact(new_labels)
    J_new = be.run_objective(new_labels, k_new)
    it = state.n_iter + 1
    # Both tests relative, with no absolute floor: J scales with the kernel (and lam).
    if J_new > J + _INCREASE_TOL * abs(J):
        rejected = state._replace(n_iter=it, converged=True, n_rejected=state.n_rejected + 1)
        return rejected, False, True
    unchanged = k_new == k and np.array_equal(new_labels, labels)
    stalled = J_new >= J - OBJECTIVE_TOL * abs(J)
    state = state._replace(
        labels=new_labels, n_clusters=k_new, objective=J_new,
        objective_trace=np.append(state.objective_trace, J_new), n_iter=it,
        converged=unchanged or stalled,
    )
    return state, not unchanged, False


def kernel_dp_means_step(state: KernelDPMeansState) -> tuple[KernelDPMeansState, KernelDPMeansInfo]:
    """One pass of weighted kernel DP-means on a state, with its acceptance and stopping tests.

    The pass (means frozen but for the clusters it opens, computed in bulk)
    is followed by the deletion of empty clusters; a pass that raises the
    objective (possible only for a kernel that is not positive semi-definite)
    is rejected: the state is kept, with ``converged`` set and ``n_rejected``
    counted.  :func:`kernel_dp_means` runs this step from
    :func:`init_kernel_dp_means_state` until ``converged`` or ``max_iter``
    passes; stepping by hand reproduces it exactly.

    Parameters
    ----------
    state : KernelDPMeansState
        Not modified.

    Returns
    -------
    state : KernelDPMeansState
    info : KernelDPMeansInfo
        ``objective`` of the returned state, whether the labels ``changed``,
        whether the pass was ``rejected``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> state = init_kernel_dp_means_state(X @ X.T, lam=1.0)
    >>> while not state.converged:
    ...     state, info = kernel_dp_means_step(state)
    >>> state.n_clusters, state.labels.tolist(), state.n_iter
    (2, [0, 0, 1, 1], 2)
    """
    state, changed, rejected = _pass_step(state)
    return state, KernelDPMeansInfo(state.objective, changed, rejected)


def _drive(state, max_iter, step):
    """The drivers' loop: ``step`` until ``converged`` or ``max_iter`` passes."""
    while state.n_iter < max_iter and not state.converged:
        state, _ = step(state)
    return state


# --------------------------------------------------------------------------- #
# Kernel DP-means
# --------------------------------------------------------------------------- #


class KernelDPMeansResult(NamedTuple):
    """Result of :func:`kernel_dp_means`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Cluster of every point, ``0..n_clusters-1`` in order of creation.
    n_clusters : int
    objective : float
        :math:`J(K, W) + \\lambda k` of the returned partition.
    objective_trace : ndarray, shape (n_accepted + 1,)
        The minimised objective at the start and after every accepted iteration;
        never increases.
    n_iter : int
        Passes run (a rejected pass counts).
    converged : bool
    n_rejected : int
        Passes rejected because they raised the objective (0 for a PSD kernel).
    lam : float
    """

    labels: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_rejected: int
    lam: float


def _check_square(A, name):
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix, got shape {A.shape}")


def _check_symmetric(max_asymmetry: float, max_abs: float, name: str) -> None:
    """Symmetric up to round-off: ``max |A - A.T| <= 1e-10 max(1, max |A|)``."""
    if max_asymmetry > 1e-10 * max(1.0, max_abs):
        raise ValueError(f"{name} must be symmetric (max |{name} - {name}.T| = {max_asymmetry:.3g})")


def _check_kernel(K, name="K"):
    K = V.check_array(K, name, dtype=None)
    _check_square(K, name)
    K = K.astype(np.float64)
    _check_symmetric(float(np.max(np.abs(K - K.T))), float(np.max(np.abs(K))), name)
    return 0.5 * (K + K.T)


def _check_init_labels(init, n, name="init"):
    labels = V.check_labels(init, name, n_samples=n)
    return labels


def kernel_dp_means(
    K,
    lam,
    *,
    sample_weight=None,
    init=None,
    max_iter: int = 100,
) -> KernelDPMeansResult:
    r"""Weighted kernel DP-means (Kulis & Jordan 2012, §5.2).

    Minimises :math:`J(K, W) + \lambda k` where
    :math:`J(K, W) = \sum_c \sum_{i\in c} w_i\, \mathrm{dist}(i, c)` and the
    squared feature-space distance to the implicit weighted mean of ``c`` is

    .. math::

        \mathrm{dist}(i, c) = K_{ii} - \frac{2 \sum_{j\in c} w_j K_{ij}}{s_c}
        + \frac{\sum_{j,l\in c} w_j w_l K_{jl}}{s_c^2}, \qquad s_c = \sum_{j \in c} w_j .

    Algorithm 1 of the paper in feature space: start from one cluster (or
    ``init``); in each pass visit the points in order, open a new cluster
    seeded by :math:`i` when :math:`w_i \min_c \mathrm{dist}(i, c) > \lambda`,
    else join the nearest cluster; delete empty clusters; the implicit means
    follow the new memberships.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric kernel (Gram) matrix, positive semi-definite for the
        monotonicity guarantee.  Computed in float64.
    lam : float
        Penalty per cluster (> 0), in units of :math:`K` (a squared
        feature-space distance).
    sample_weight : array_like, shape (n,), optional
        Positive point weights :math:`w_i` (default 1).
    init : array_like of int, shape (n,), optional
        Initial labels (any integers; relabelled in order of their values).
        Default: a single cluster, as Algorithm 1.
    max_iter : int, default 100

    Returns
    -------
    KernelDPMeansResult

    Notes
    -----
    **Semantics** (ours; Kulis & Jordan give none: docs/deviations.md#kernel-dpmeans-semantics): the memberships that
    define the implicit means are frozen during a pass, except that a cluster
    opened in the pass has its seed as mean, visible to the points after it.
    Ties go to the lowest cluster index, the new-cluster test is strict.
    With the linear kernel :math:`K = XX^\top` and unit weights this is
    exactly :func:`bayesclust.dp_means` (same partitions, same objective).
    Stopping: as :func:`bayesclust.dp_means` (labels unchanged, or the
    objective decreased by less than ``1e-12`` relative, or ``max_iter``).

    **Weighted rule** :math:`w_i \min_c \mathrm{dist} > \lambda` (ours, docs/deviations.md#dpmeans-weighted-rule, as in
    :func:`bayesclust.dp_means`): moving a cost :math:`w_i d` to
    :math:`\lambda` can only lower the objective, so for a PSD kernel the
    trace never increases.  For an indefinite kernel the mean step is not a
    minimiser; a pass that raises the objective is rejected (``n_rejected``)
    and the run stops at the previous partition.

    **Cost**: one :math:`O(n^2 k)` product ``K @ onehot`` per pass plus a
    serial scan over the few points farther than :math:`\lambda / w_i` from
    every cluster.

    References
    ----------
    B. Kulis and M. I. Jordan, "Revisiting k-means: new algorithms via
    Bayesian nonparametrics", ICML 2012, §5.2 and Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> res = kernel_dp_means(X @ X.T, lam=1.0)
    >>> res.n_clusters, res.labels.tolist()
    (2, [0, 0, 1, 1])
    """
    K = _check_kernel(K)
    lam = V.check_positive(lam, "lam")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    state = _kernel_state(K, lam, sample_weight, init)
    state = _drive(state, max_iter, kernel_dp_means_step)
    return KernelDPMeansResult(state.labels, state.n_clusters, state.objective,
                               state.objective_trace, state.n_iter, state.converged,
                               state.n_rejected, lam)


def _kernel_state(K, lam, sample_weight, init):
    """:func:`init_kernel_dp_means_state` after the checks of ``K`` and ``lam``."""
    n = K.shape[0]
    w = V.check_sample_weight(sample_weight, n, dtype=np.float64)
    if np.any(w <= 0):
        raise ValueError("sample_weight must be strictly positive for kernel_dp_means")
    labels = np.zeros(n, np.int64) if init is None else _check_init_labels(init, n)
    return _initial_state(_DenseKernel(K, w, lam), labels)


def init_kernel_dp_means_state(K, lam, *, sample_weight=None, init=None) -> KernelDPMeansState:
    """The state weighted kernel DP-means starts from (:func:`kernel_dp_means`).

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric kernel matrix (centred at the weighted mean in feature space
        once, here).
    lam : float
        Penalty per cluster (> 0).
    sample_weight : array_like, shape (n,), optional
        Positive point weights (default 1).
    init : array_like of int, shape (n,), optional
        Initial labels (relabelled in order of their values); default one cluster.

    Returns
    -------
    KernelDPMeansState
    """
    K = _check_kernel(K)
    lam = V.check_positive(lam, "lam")
    return _kernel_state(K, lam, sample_weight, init)


def kernel_dp_means_objective(K, labels, lam, sample_weight=None) -> float:
    r""":math:`J(K, W) + \lambda k` of a labelling (see :func:`kernel_dp_means`).

    Parameters
    ----------
    K : array_like, shape (n, n)
    labels : array_like of int, shape (n,)
    lam : float
        Penalty per cluster (>= 0; 0 gives the weighted kernel k-means
        objective :math:`J(K, W)`).
    sample_weight : array_like, shape (n,), optional

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0]])
    >>> kernel_dp_means_objective(X @ X.T, [0, 0, 1], lam=1.0)
    4.0
    """
    K = _check_kernel(K)
    lam = V.check_nonnegative(lam, "lam")
    n = K.shape[0]
    w = V.check_sample_weight(sample_weight, n, dtype=np.float64)
    labels, k = _compact(_check_init_labels(labels, n, "labels"))
    return _DenseKernel(K, w).objective(labels, k, lam)


# --------------------------------------------------------------------------- #
# Spectral relaxation
# --------------------------------------------------------------------------- #


def thresholded_eigenvectors(K, threshold, *, max_vectors=None, eigen_solver="auto"):
    """All eigenpairs of a symmetric ``K`` with eigenvalue strictly above ``threshold``.

    Parameters
    ----------
    K : ndarray or scipy.sparse matrix, shape (n, n)
        Symmetric (not checked here).
    threshold : float
    max_vectors : int, optional
        Return at most this many (the largest).  Default ``n``.
    eigen_solver : {"auto", "dense", "arpack"}
        ``"dense"``: LAPACK ``eigh`` (``evr``) for the eigenvalues in
        ``(threshold, inf)``;
        ``"arpack"``: :func:`scipy.sparse.linalg.eigsh` for the largest
        eigenvalues, asking for twice as many until one at or below the
        threshold is found.  ``"auto"``: dense for dense input or
        ``n <= 500``, ARPACK otherwise.

    Returns
    -------
    values : ndarray, shape (m,)
        In decreasing order.
    vectors : ndarray, shape (n, m)
    """
    n = K.shape[0]
    cap = n if max_vectors is None else min(int(max_vectors), n)
    solver = eigen_solver
    if solver == "auto":
        solver = "dense" if (not sp.issparse(K) or n <= _DENSE_EIG_MAX_N) else "arpack"
    if solver == "dense" or n <= 2:
        Kd = K.toarray() if sp.issparse(K) else np.asarray(K)
        # subset_by_value is the half-open interval (threshold, inf]: strict ">"
        vals, vecs = scipy.linalg.eigh(Kd, subset_by_value=(threshold, np.inf), driver="evr")
        keep = vals > threshold
        vals, vecs = vals[keep][::-1], vecs[:, keep][:, ::-1]
        return vals[:cap], vecs[:, :cap]
    if solver != "arpack":
        raise ValueError(f"eigen_solver must be 'auto', 'dense' or 'arpack', got {solver!r}")
    m = min(8, cap, n - 1)
    v0 = np.ones(n) / np.sqrt(n)  # deterministic start
    while True:
        vals, vecs = spla.eigsh(K, k=m, which="LA", v0=v0, tol=1e-10)
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        if vals[-1] <= threshold or m >= min(cap, n - 1):
            keep = vals > threshold
            return vals[keep][:cap], vecs[:, keep][:, :cap]
        m = min(2 * m, cap, n - 1)


def _farthest_first_kmeans(Y, k, max_iter=300):
    """k-means on the rows of ``Y`` from a deterministic farthest-first start.

    :func:`~bayesclust.inference.kmeans.lloyd_host` (host, float64): the
    embedding is small ``(n, k)`` and changes shape with every threshold, so the
    jitted :func:`bayesclust.inference.kmeans.kmeans` would recompile (seconds)
    for each call.  Ties go to the lowest centre; an emptied centre keeps its place.
    """
    n = Y.shape[0]
    if k >= n:
        return np.arange(n, dtype=np.int64)
    if k == 1:
        return np.zeros(n, np.int64)
    d = np.sum((Y - Y.mean(0)) ** 2, axis=1)
    chosen = [int(np.argmax(d))]
    d = np.sum((Y - Y[chosen[0]]) ** 2, axis=1)
    for _ in range(1, k):
        j = int(np.argmax(d))
        chosen.append(j)
        d = np.minimum(d, np.sum((Y - Y[j]) ** 2, axis=1))
    return _compact(lloyd_host(Y, Y[chosen], max_iter, assignment="dense"))[0]


class SpectralDPMeansResult(NamedTuple):
    """Result of :func:`spectral_dp_means`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
    n_clusters : int
        Number of clusters found by k-means on the rows of ``embedding``
        (equal to ``len(eigenvalues)`` unless k-means left a cluster empty).
    eigenvalues : ndarray, shape (m,)
        The eigenvalues of ``K`` above ``eigenvalue_threshold``, decreasing.
    embedding : ndarray, shape (n, m)
        The relaxed indicator matrix :math:`Y` (orthonormal columns).
    relaxed_value : float
        :math:`\\max_{Y^\\top Y = I} \\mathrm{tr}(Y^\\top (K - \\lambda I) Y)
        = \\sum_i (e_i - \\lambda)_+`, an upper bound of the value of every
        clustering (Theorem 5.2).
    lower_bound : float
        :math:`\\mathrm{tr}(K) - \\text{relaxed\\_value}`, a lower bound of the
        kernel DP-means objective of every clustering.
    eigenvalue_threshold : float
        The eigenvalue cut :math:`\\lambda`.
    """

    labels: np.ndarray
    n_clusters: int
    eigenvalues: np.ndarray
    embedding: np.ndarray
    relaxed_value: float
    lower_bound: float
    eigenvalue_threshold: float


def _check_matrix_any(A, name):
    """Square, finite, symmetric ndarray or scipy.sparse matrix (float64)."""
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64)
        _check_square(A, name)
        if A.shape[0] < 1:
            raise ValueError(f"{name} must have at least one row, got shape {A.shape}")
        if not np.all(np.isfinite(A.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
        A.eliminate_zeros()
        diff = abs(A - A.T)
        _check_symmetric(float(diff.max()) if diff.nnz else 0.0,
                         float(abs(A).max()) if A.nnz else 0.0, name)
        A = ((A + A.T) * 0.5).tocsr()
        A.eliminate_zeros()
        A.sort_indices()
        return A
    return _check_kernel(A, name)


def spectral_dp_means(
    K,
    eigenvalue_threshold,
    *,
    normalize_rows: bool = False,
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> SpectralDPMeansResult:
    r"""Spectral DP-means: the thresholded-eigenvector relaxation (Kulis & Jordan 2012, §5.1).

    With :math:`Y = Z(Z^\top Z)^{-1/2}` the normalised indicator matrix of a
    clustering, :math:`J_{DP} = \mathrm{tr}(K) - \mathrm{tr}(Y^\top (K - \lambda I) Y)`
    (Lemma 5.1).  Relaxing :math:`Y` to all matrices with orthonormal columns,
    the maximum of :math:`\mathrm{tr}(Y^\top (K - \lambda I) Y)` stacks **all
    eigenvectors with eigenvalue > lambda** (``eigenvalue_threshold``, Theorem 5.2),
    so the threshold, not a given k, fixes the number of clusters.  The rows of :math:`Y` are then
    clustered by k-means with ``k = m`` (the number of such eigenvectors).

    Parameters
    ----------
    K : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric kernel / affinity matrix.
    eigenvalue_threshold : float
        The eigenvalue cut :math:`\lambda`: eigenvectors with eigenvalue strictly
        above it are kept.  It is the penalty of the kernel DP-means objective
        :math:`J_{DP}` above, a squared distance in the kernel's feature space, not
        DP-means' ``lam`` on the input space; any real value is accepted (e.g. for
        an indefinite affinity).
    normalize_rows : bool, default False
        Scale every row of :math:`Y` to unit length before k-means (the
        Ng-Jordan-Weiss step; zero rows are left as they are).
    max_clusters : int, optional
        Keep at most this many leading eigenvectors.
    eigen_solver : {"auto", "dense", "arpack"}
        See :func:`thresholded_eigenvectors`: dense ``eigh`` for small or
        dense input, ARPACK ``eigsh`` for large sparse ``K``.

    Returns
    -------
    SpectralDPMeansResult

    Notes
    -----
    Post-processing (ours; Kulis & Jordan say only "clusters the rows of Y": docs/deviations.md#spectral-dpmeans-rows):
    Lloyd's k-means from a deterministic farthest-first start, so the
    function is deterministic.  When no eigenvalue exceeds the threshold the
    result is one cluster.  For the linear kernel :math:`K = XX^\top` at most
    ``d`` eigenvalues can exceed it.

    References
    ----------
    B. Kulis and M. I. Jordan, ICML 2012, §5.1, Lemma 5.1, Theorem 5.2.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.kron(np.eye(2), np.ones((3, 3)))   # two blocks of 3 points
    >>> res = spectral_dp_means(K, eigenvalue_threshold=1.0)
    >>> res.n_clusters, res.labels.tolist(), res.eigenvalues.round(6).tolist()
    (2, [0, 0, 0, 1, 1, 1], [3.0, 3.0])
    """
    K = _check_matrix_any(K, "K")
    lam = V._check_real_scalar(eigenvalue_threshold, "eigenvalue_threshold")
    if np.isinf(lam):
        raise ValueError("eigenvalue_threshold must be finite")
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    n = K.shape[0]
    vals, Y = thresholded_eigenvectors(K, lam, max_vectors=max_clusters, eigen_solver=eigen_solver)
    trK = float(K.diagonal().sum())
    relaxed = float(np.sum(vals - lam))
    m = len(vals)
    if m == 0:
        labels = np.zeros(n, np.int64)
    else:
        E = Y
        if normalize_rows:
            norms = np.linalg.norm(E, axis=1, keepdims=True)
            E = E / np.where(norms > 0, norms, 1.0)
        labels = _farthest_first_kmeans(E, m)
    labels, k = _compact(labels)
    return SpectralDPMeansResult(labels, k, vals, Y, relaxed, trK - relaxed, lam)


# --------------------------------------------------------------------------- #
# Penalised normalised cut
# --------------------------------------------------------------------------- #


def _check_adjacency(A, name="A"):
    """Validate a graph: square, symmetric, finite, non-negative, no isolated node."""
    if not sp.issparse(A):
        A = V.check_array(A, name, dtype=None)
        _check_square(A, name)
        A = sp.csr_matrix(A.astype(np.float64))
    A = _check_matrix_any(A, name)
    if A.nnz and A.data.min() < 0:
        raise ValueError(f"{name} must have non-negative weights, got min {A.data.min():.3g}")
    deg = np.asarray(A.sum(axis=1)).ravel()
    isolated = np.flatnonzero(deg <= 0)
    if isolated.size:
        raise ValueError(
            f"{name} has {isolated.size} isolated node(s) (zero degree), e.g. node "
            f"{int(isolated[0])}: the normalised cut is undefined for them; remove them "
            f"(each is its own cluster) or give them a self-loop"
        )
    return A, deg


def normalized_cut(A, labels) -> float:
    r"""The k-way normalised cut :math:`\sum_c \mathrm{links}(V_c, V\setminus V_c)/\mathrm{deg}(V_c)`.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric non-negative adjacency, every degree > 0.
    labels : array_like of int, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], float)
    >>> normalized_cut(A, [0, 0, 1, 1])   # cut 1 edge; both sides have degree 3
    0.6666666666666666
    """
    A, deg = _check_adjacency(A)
    labels, k = _compact(_check_init_labels(labels, A.shape[0], "labels"))
    return _Graph(A, deg, 0.0).objective(labels, k, 0.0)


def ncut_sigma_psd(A) -> float:
    r"""Smallest shift making :math:`K = \sigma D^{-1} + D^{-1} A D^{-1}` PSD.

    :math:`\sigma_{min} = \max(0, -\lambda_{min}(D^{-1/2} A D^{-1/2}))`, always
    :math:`\le 1`.  Dense eigenvalues for ``n <= 500``; ARPACK otherwise, with
    a margin of 1e-3 for its tolerance (falls back to the always valid 1.0
    if ARPACK does not converge).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.0, 1.0], [1.0, 0.0]])   # spectrum of D^-1/2 A D^-1/2: -1, 1
    >>> round(ncut_sigma_psd(A), 6)
    1.0
    """
    A, deg = _check_adjacency(A)
    return _sigma_psd(A, deg)


def _normalized_adjacency(A, deg):
    s = 1.0 / np.sqrt(deg)
    return sp.diags(s) @ A @ sp.diags(s)


def _sigma_psd(A, deg):
    N = _normalized_adjacency(A, deg)
    n = A.shape[0]
    if n <= _DENSE_EIG_MAX_N:
        mu_min = float(scipy.linalg.eigvalsh(N.toarray(), subset_by_index=(0, 0))[0])
    else:
        try:
            mu_min = float(spla.eigsh(N, k=1, which="SA", tol=1e-6,
                                      v0=np.ones(n) / np.sqrt(n))[0][0]) - 1e-3
        except spla.ArpackNoConvergence:
            return 1.0
    return min(1.0, max(0.0, -mu_min))


class PenalizedNCutResult(NamedTuple):
    """Result of :func:`penalized_ncut`.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
    n_clusters : int
    objective : float
        :math:`\\mathrm{Cut}(A) + \\lambda' k` of the returned partition.
    objective_trace : ndarray
        The minimised objective at the initial partition and after every
        accepted iteration; never increases.
    cut : float
        :math:`\\mathrm{Cut}(A)` of the returned partition.
    n_iter : int
    converged : bool
    n_rejected : int
        Passes rejected because they raised the objective (0 when ``sigma``
        makes the kernel PSD).
    init_labels : ndarray of int64, shape (n,)
        The initial partition.
    sigma : float
        The diagonal shift used.
    lam : float
        The kernel-space penalty :math:`\\lambda = \\lambda' + \\sigma + 1`.
    lam_prime : float
    """

    labels: np.ndarray
    n_clusters: int
    objective: float
    objective_trace: np.ndarray
    cut: float
    n_iter: int
    converged: bool
    n_rejected: int
    init_labels: np.ndarray
    sigma: float
    lam: float
    lam_prime: float


class PenalizedNCutState(KernelDPMeansState):
    """State of a penalised normalised cut run between two steps.

    Made by :func:`init_penalized_ncut_state`, advanced by
    :func:`penalized_ncut_step`; :func:`penalized_ncut` loops over the step.
    The fields of :class:`KernelDPMeansState` (the run is kernel DP-means on
    the graph's kernel): ``objective`` is :math:`\\mathrm{Cut}(A) + \\lambda' k`,
    ``objective_trace`` records it after every accepted pass and every
    merge, and ``converged`` means that the last pass converged and (with
    merges) no merge lowered the objective.
    """

    __slots__ = ()


class PenalizedNCutInfo(NamedTuple):
    """Diagnostics of one :func:`penalized_ncut_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The step changed the labels (by the pass or by merges).
    rejected : bool
        The pass raised the objective and was rejected.
    merged : bool
        Clusters were merged after the pass converged.
    """

    objective: float
    changed: bool
    rejected: bool
    merged: bool


def penalized_ncut_step(state: PenalizedNCutState, *, merge: bool = True
                        ) -> tuple[PenalizedNCutState, PenalizedNCutInfo]:
    """One step of the penalised normalised cut: a kernel DP-means pass, then merges.

    The pass is :func:`kernel_dp_means_step`'s on the graph's kernel.  When it
    has converged (unchanged labels, a stalled objective or a rejected pass)
    and ``merge`` is on, pairs of clusters are merged greedily while a merge
    lowers :math:`\\mathrm{Cut}(A) + \\lambda' k`; if any was merged, the merged
    partition's objective is traced and ``converged`` is reset, so the passes
    resume.  :func:`penalized_ncut` runs this step from
    :func:`init_penalized_ncut_state` until ``converged`` or ``max_iter``
    passes; stepping by hand reproduces it exactly.

    Parameters
    ----------
    state : PenalizedNCutState
        Not modified.
    merge : bool, default True
        As in :func:`penalized_ncut`.

    Returns
    -------
    state : PenalizedNCutState
    info : PenalizedNCutInfo

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)          # two 4-cliques joined by one edge
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> state = init_penalized_ncut_state(A, lam_prime=-0.5, init="single")
    >>> state, info = penalized_ncut_step(state)
    >>> state.n_clusters, state.converged, info.merged
    (1, True, False)
    """
    state, changed, rejected = _pass_step(state)
    merged = False
    if merge and state.converged:
        be = state.kernel
        labels, k = be.merge(state.labels, state.n_clusters, be.lam_prime)
        if k != state.n_clusters:
            J = be.run_objective(labels, k)
            state = state._replace(
                labels=labels, n_clusters=k, objective=J,
                objective_trace=np.append(state.objective_trace, J), converged=False,
            )
            changed = merged = True
    return state, PenalizedNCutInfo(state.objective, changed, rejected, merged)


def init_penalized_ncut_state(
    A,
    lam_prime,
    *,
    sigma="psd",
    init="spectral",
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> PenalizedNCutState:
    """The state the penalised normalised cut starts from (:func:`penalized_ncut`).

    Checks the graph, picks the diagonal shift ``sigma`` and the initial
    partition exactly as :func:`penalized_ncut` (whose parameters these are),
    and prepares the graph's implicit kernel.  The shift and the kernel-space
    penalty are ``state.kernel.sigma`` and ``state.kernel.lam``.

    Returns
    -------
    PenalizedNCutState
    """
    A, deg = _check_adjacency(A)
    lam_prime = _check_lam_prime(lam_prime)
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    return _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver)


def _check_lam_prime(lam_prime):
    lam_prime = V._check_real_scalar(lam_prime, "lam_prime")
    if np.isinf(lam_prime):
        raise ValueError("lam_prime must be finite")
    if not -1.0 < lam_prime < 0.0:
        # Well defined, but the optimum is known without a search (the Cut of k clusters
        # lies in [0, k]): say so rather than return a trivial partition silently.
        trivial = "the single cluster" if lam_prime >= 0 else "all singletons"
        warnings.warn(f"lam_prime={lam_prime} is outside (-1, 0): {trivial} is the global "
                      "optimum; more negative values in (-1, 0) give more clusters",
                      UserWarning, stacklevel=3)
    return lam_prime



def penalized_ncut(
    A,
    lam_prime,
    *,
    sigma="psd",
    init="spectral",
    max_iter: int = 100,
    merge: bool = True,
    max_clusters: int | None = None,
    eigen_solver: str = "auto",
) -> PenalizedNCutResult:
    r"""Penalised normalised cut: graph clustering without a fixed k (Kulis & Jordan 2012, §5.2).

    Minimises :math:`\mathrm{Cut}(A) + \lambda' k` with
    :math:`\mathrm{Cut}(A) = \sum_c \mathrm{links}(V_c, V\setminus V_c)/\mathrm{deg}(V_c)`
    by weighted kernel DP-means (:func:`kernel_dp_means`) on

    .. math::

        K = \sigma D^{-1} + D^{-1} A D^{-1}, \quad W = D, \quad
        \lambda = \lambda' + \sigma + 1,

    for which :math:`J(K, W) = \sigma n + \mathrm{tr}(D^{-1/2} A D^{-1/2}) -
    (\sigma + 1) k + \mathrm{Cut}(A)` (Theorem 5.3, Dhillon, Guan & Kulis), so
    :math:`J(K, W) + \lambda k = C + \mathrm{Cut}(A) + \lambda' k`.  :math:`K` is
    never formed: a pass needs ``links(i, c)`` (one scatter over the edges),
    ``deg(c)`` and ``links(c, c)``, i.e. :math:`O(|E| + nk)`.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (n, n)
        Symmetric adjacency with non-negative weights; self-loops allowed;
        every node needs a positive degree (isolated nodes raise a
        ``ValueError``: remove them -- each is then its own cluster -- or give
        them a self-loop).
    lam_prime : float
        Penalty per cluster on the Cut scale.  Useful values lie in
        ``(-1, 0)`` (docs/deviations.md#penalised-ncut-lambda-range): for ``lam_prime >= 0`` the single cluster is
        the global optimum, for ``lam_prime <= -1`` all singletons are.  More
        negative values give more clusters.
    sigma : float or "psd", default "psd"
        Diagonal shift (>= 0).  ``"psd"``: the smallest shift that makes ``K``
        PSD (:func:`ncut_sigma_psd`), which guarantees that no pass is rejected.
        Smaller shifts let the local search move more nodes (docs/deviations.md#penalised-ncut-sigma); a pass
        that raises the objective is then rejected and the run stops.
    init : {"spectral", "single"} or array_like of int, default "spectral"
        Initial partition.  ``"spectral"`` (ours, docs/deviations.md#penalised-ncut-start): the relaxation of
        this same objective -- the eigenvectors of :math:`D^{-1/2} A D^{-1/2}`
        with eigenvalue :math:`> 1 + \lambda'` (Theorem 5.2 applied to
        :math:`W^{1/2} K W^{1/2} = \sigma I + D^{-1/2} A D^{-1/2}` at threshold
        :math:`\lambda`), rows normalised to unit length, k-means with k their
        number.  ``"single"``: one cluster, as Algorithm 1 -- which is a fixed
        point for every ``lam_prime > -1`` (docs/deviations.md#penalised-ncut-start), so it returns k = 1.
    max_iter : int, default 100
        Maximum number of kernel DP-means passes.
    merge : bool, default True
        When the passes have converged, merge pairs of clusters greedily
        while a merge lowers :math:`\mathrm{Cut}(A) + \lambda' k`, then resume
        the passes (ours; kernel DP-means alone can only delete a cluster by
        emptying it, which the diagonal shift makes rare: docs/deviations.md#penalised-ncut-merges).
    max_clusters : int, optional
        Cap on the number of eigenvectors of the spectral start.
    eigen_solver : {"auto", "dense", "arpack"}
        Eigensolver of the spectral start (:func:`thresholded_eigenvectors`).

    Returns
    -------
    PenalizedNCutResult

    Notes
    -----
    Kulis & Jordan give no initialisation and no experiment for this
    algorithm.  The spectral start fixes the number of clusters by the same
    threshold rule as spectral DP-means; the kernel DP-means passes then
    refine it monotonically (they may open clusters for badly placed nodes
    and delete emptied ones).  The objective trace is
    :math:`\mathrm{Cut}(A) + \lambda' k`, computed from ``links(c, c)`` and
    ``deg(c)`` directly (it equals :math:`J + \lambda k - C`).

    References
    ----------
    B. Kulis and M. I. Jordan, ICML 2012, §5.2.  I. S. Dhillon, Y. Guan and
    B. Kulis, "Weighted graph cuts without eigenvectors: a multilevel
    approach", IEEE TPAMI 29(11), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.ones((4, 4)) - np.eye(4)          # two 4-cliques joined by one edge
    >>> A = np.block([[B, np.zeros((4, 4))], [np.zeros((4, 4)), B]])
    >>> A[3, 4] = A[4, 3] = 1.0
    >>> res = penalized_ncut(A, lam_prime=-0.5)
    >>> res.n_clusters, res.labels.tolist(), round(res.cut, 4)
    (2, [0, 0, 0, 0, 1, 1, 1, 1], 0.1538)
    """
    A, deg = _check_adjacency(A)
    lam_prime = _check_lam_prime(lam_prime)
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    if max_clusters is not None:
        max_clusters = V.check_int(max_clusters, "max_clusters", minimum=1)
    state = _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver)
    init_labels = state.labels
    state = _drive(state, max_iter, functools.partial(penalized_ncut_step, merge=merge))
    be = state.kernel
    cut = state.objective - lam_prime * state.n_clusters
    return PenalizedNCutResult(state.labels, state.n_clusters, state.objective,
                               state.objective_trace, cut, state.n_iter, state.converged,
                               state.n_rejected, init_labels, be.sigma, be.lam, lam_prime)


def _ncut_state(A, deg, lam_prime, sigma, init, max_clusters, eigen_solver):
    """:func:`init_penalized_ncut_state` after checking ``A``, ``lam_prime``, ``max_clusters``."""
    n = A.shape[0]
    if isinstance(sigma, str):
        if sigma != "psd":
            raise ValueError(f"sigma must be a non-negative number or 'psd', got {sigma!r}")
        sigma = _sigma_psd(A, deg)
    else:
        sigma = V.check_nonnegative(sigma, "sigma")
    lam = lam_prime + sigma + 1.0
    if lam <= 0:
        raise ValueError(
            f"lam_prime + sigma + 1 must be > 0 (got lam_prime={lam_prime}, sigma={sigma}); "
            f"lam_prime <= -1 - sigma makes every node its own cluster"
        )
    if isinstance(init, str):
        if init == "single":
            labels = np.zeros(n, np.int64)
        elif init == "spectral":
            N = _normalized_adjacency(A, deg)
            vals, U = thresholded_eigenvectors(N, 1.0 + lam_prime, max_vectors=max_clusters,
                                               eigen_solver=eigen_solver)
            if len(vals) == 0:
                labels = np.zeros(n, np.int64)
            else:
                norms = np.linalg.norm(U, axis=1, keepdims=True)
                labels = _farthest_first_kmeans(U / np.where(norms > 0, norms, 1.0), len(vals))
        else:
            raise ValueError(f"init must be 'spectral', 'single' or a label array, got {init!r}")
    else:
        labels = _check_init_labels(init, n)
    labels, _ = _compact(labels)
    return _initial_state(_Graph(A, deg, sigma, lam, lam_prime), labels, PenalizedNCutState)
