r"""The weighted kernel DP-means engine (docs/deviations.md#kernel-dpmeans-semantics) that
kernel DP-means, spectral DP-means and the penalised normalised cut share.

Kulis & Jordan (2012), §5: the dense-kernel and the sparse-graph (penalised NCut) back ends,
one pass of the algorithm, its state, step and driver, and the checks of a kernel, a graph
and initial labels.  ``KernelDPMeansState``, ``KernelDPMeansInfo`` and
``kernel_dp_means_step`` are public through :mod:`bayesclust.inference.hard.kernel_dp_means`
(and ``thresholded_eigenvectors``' size cut ``_DENSE_EIG_MAX_N`` is shared with the
penalised cut).

Private to ``inference/hard/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ... import _validation as V
from .kmeans import lloyd_host

#: Relative tolerance of the objective-based stopping rule (as dp_means: docs/deviations.md#dpmeans-pass-semantics).
OBJECTIVE_TOL = 1e-12


#: A pass whose objective rises by more than this (relative) is rejected
#: (possible only for a kernel that is not positive semi-definite).
_INCREASE_TOL = 1e-9


#: Largest n for which dense eigensolvers are used on sparse input by default.
_DENSE_EIG_MAX_N = 500


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
    >>> from bayesclust.inference.hard.kernel_dp_means import init_kernel_dp_means_state
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


def _farthest_first_kmeans(Y, k, max_iter=300):
    """k-means on the rows of ``Y`` from a deterministic farthest-first start.

    :func:`~bayesclust.inference.hard.kmeans.lloyd_host` (host, float64): the
    embedding is small ``(n, k)`` and changes shape with every threshold, so the
    jitted :func:`bayesclust.inference.hard.kmeans.kmeans` would recompile (seconds)
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
