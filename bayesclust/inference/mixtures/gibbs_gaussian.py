r"""Collapsed Gibbs sampler of the DP mixture of Gaussians with per-cluster covariances.

The model (the generative program is
:func:`bayesclust.models.dp_gaussian.dp_gaussian_mixture`):
:math:`z \sim \mathrm{CRP}(\alpha)` and, per cluster ``c``,

* ``covariance_type="full"`` -- :math:`(\mu_c, \Sigma_c) \sim \mathrm{NIW}(m_0, \kappa_0,
  \nu_0, S_0)`, i.e. :math:`\Sigma_c \sim \mathrm{IW}(\nu_0, S_0)`,
  :math:`\mu_c \mid \Sigma_c \sim N(m_0, \Sigma_c / \kappa_0)`;
* ``covariance_type="diag"`` -- per dimension ``j`` independently, precision
  :math:`\lambda_{cj} \sim \mathrm{Gamma}((\nu_0 - d + 1)/2, S_{0,jj}/2)` and
  :math:`\mu_{cj} \mid \lambda_{cj} \sim N(m_{0j}, 1/(\kappa_0 \lambda_{cj}))`
  (the NIW's marginal law of each diagonal entry, :math:`\Sigma_{jj} \sim
  \mathrm{InvGamma}((\nu_0 - d + 1)/2, S_{0,jj}/2)`, so the two types expect the
  same variances, and coincide when ``d = 1``);

and :math:`x_i \mid z_i = c \sim N(\mu_c, \Sigma_c)`.  Means and covariances are
integrated out (Neal 2000, Algorithm 3): a point joins cluster ``c`` with weight
:math:`n_c\, p(x \mid X_c)`, a new cluster with weight :math:`\alpha\, p(x)`, where
:math:`p(x \mid X_c)` is the posterior predictive, a multivariate Student-t (Murphy
2007, §9, eq. 258; Gelman et al. 2013, BDA3 §3.6), or a product of univariate
Student-t (Murphy 2007, §8.3, eq. 100) for ``"diag"``.

Each cluster keeps its count, its posterior mean :math:`m_n` and, for ``"full"``, the
inverse :math:`P_n = S_n^{-1}` of its posterior scale with :math:`\log\det S_n`.  A
point joining cluster ``c`` adds :math:`v v^\top`, :math:`v = \sqrt{\kappa_n/(\kappa_n+1)}
(x - m_n)`, to :math:`S_n`, so :math:`P_n` loses :math:`w w^\top / (1 + v^\top w)` with
:math:`w = P_n v` (Sherman-Morrison) and :math:`\log\det S_n` gains
:math:`\log(1 + v^\top w)` (the matrix determinant lemma); a point leaving is the same
with the signs turned, both :math:`O(d^2)` and a handful of vector operations (a rank-one
update of a Cholesky factor would be ``d`` sequential column steps, each its own small
operation in every point's step, which made the sweep slower).  The
predictive's quadratic form is :math:`(x - m_n)^\top P_n (x - m_n)` for all clusters at
once, with no triangular solve.  The inverses are recomputed from the labels after every
sweep, so float32 rounding never accumulates over more than one sweep.

The data are first whitened by the prior, :math:`Z = L_0^{-1}(X - m_0)` with
:math:`S_0 = L_0 L_0^\top` (``"diag"``: divided by :math:`\sqrt{S_{0,jj}}`): the NIW
family is closed under affine maps, so the partition posterior is unchanged and the
sampler works with :math:`m_0 = 0, S_0 = I`.  With the data-scaled default prior
(:func:`default_gaussian_prior`) the sampler is therefore unit-free.

A sweep is one ``lax.scan`` over the points with every chain moved in the same step
(``vmap`` over the chains inside the scan body), then optionally sequentially-allocated
split-merge moves (Dahl 2003; Jain & Neal 2004; :func:`split_merge_move`, the spherical
sampler's proposal with this model's predictive and marginal likelihood), which move a
whole group of points at once where single-site moves would have to pass through
low-probability states one point at a time, then the exact statistics, then optionally
Escobar & West's update of ``alpha`` (shared with :mod:`.gibbs`).  On a CPU the point
moves and the split-merge moves are one call of the native kernel
``bayesclust/_native/gibbs_gaussian.cc`` (8 float32 chains per SIMD register, the slot a
point leaves weighed with one member fewer in closed form, the same draws as the scan from
the same uniforms; the split-merge moves one chain at a time in double precision, the
members visited in index order).  Clusters live in a fixed-capacity buffer grown (and the
segment redone) when a chain needs more
(:func:`bayesclust.inference.mixtures.gibbs.run_in_segments`).

References
----------
R. M. Neal (2000), Markov chain sampling methods for Dirichlet process mixture models,
JCGS 9(2), 249-265, Algorithm 3.  K. P. Murphy (2007), Conjugate Bayesian analysis of
the Gaussian distribution, §8-9.  A. Gelman et al. (2013), Bayesian Data Analysis, 3rd
ed., §3.6.  C. Fraley and A. E. Raftery (2007), Bayesian regularization for normal
mixture estimation and model-based clustering, J. Classification 24, 155-181, §2-3.
M. D. Escobar and M. West (1995), JASA 90, 577-588.  D. B. Dahl (2003), An improved
merge-split sampler for conjugate Dirichlet process mixture models, Technical Report 1086,
Dept. of Statistics, University of Wisconsin.  S. Jain and R. M. Neal (2004), JCGS 13(1),
158-182.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import gammaln

from ... import _native
from ... import _validation as V
from .._driver import pow2_at_least
from .._sharding import check_divides, check_mesh
from ._common import (
    _accept_split_merge,
    _draw_slot_or_new,
    _prior_params,
    _propose_split_merge,
    _update_log_alpha,
    chain_seeds,
    native_sweep_ok,
    pad_rows,
    recorded_labels,
    run_rows,
    scan_rows,
    start_labels,
    sweep_kernels,
)
from .convergence import DP_SAMPLER_DEFAULTS, warn_if_not_converged
from .gibbs import GibbsInfo, run_in_segments, segment_runner

__all__ = [
    "COVARIANCE_TYPES",
    "GaussianClusterPrior",
    "GaussianGibbsState",
    "default_gaussian_prior",
    "gibbs_dp_gaussian",
    "gaussian_predictive_logpdf",
    "gaussian_log_marginal",
    "cluster_posterior",
]

#: The covariance types of the sampler.
COVARIANCE_TYPES = ("full", "diag")

#: Nominal number of clusters of the default prior's scale (Fraley & Raftery 2007, §3,
#: use the number of mixture components; a DP has none).
DEFAULT_PRIOR_CLUSTERS = 5


class GaussianClusterPrior(NamedTuple):
    """Conjugate prior of a cluster's mean and covariance.

    Attributes
    ----------
    mean : ndarray (d,)
        ``m0``, the prior mean of the cluster means.
    kappa : float
        ``kappa0`` (> 0): prior pseudo-count of the mean (its covariance is
        ``Sigma / kappa0``).
    dof : float
        ``nu0``: degrees of freedom of the inverse-Wishart (> d - 1; for ``"diag"`` each
        precision is ``Gamma((nu0 - d + 1) / 2, S0_jj / 2)``, the marginal of the NIW's
        diagonal).
    scale : ndarray (d, d) or (d,)
        ``S0``, the inverse-Wishart scale matrix (symmetric positive definite); a vector
        is a diagonal matrix (all ``"diag"`` reads).
    """

    mean: np.ndarray
    kappa: float
    dof: float
    scale: np.ndarray


def default_gaussian_prior(X, covariance_type: str = "full",
                           n_clusters: int = DEFAULT_PRIOR_CLUSTERS) -> GaussianClusterPrior:
    r"""The data-scaled conjugate prior of Fraley & Raftery (2007, §3), with a DP's kappa0.

    :math:`m_0 = \bar x`, :math:`\nu_0 = d + 2`,
    :math:`S_0 = \widehat{\mathrm{cov}}(X) / K^{2/d}` (``"diag"``: the diagonal of it),
    with ``K = n_clusters`` a nominal number of clusters: the prior expects each
    cluster's covariance to fill ``1/K`` of the data's volume; and
    :math:`\kappa_0 = K^{-2/d}`, so that the prior covariance of the cluster means,
    :math:`E[\Sigma]/\kappa_0 = S_0/\kappa_0`, is the data's covariance.  Fraley &
    Raftery take ``K`` the number of mixture components and :math:`\kappa_0 = 0.01`;
    in a DP mixture :math:`\kappa_0` also sets the weight of a new cluster, which
    0.01 shrinks by :math:`\sim 0.01^{d/2}` (on digits reduced to 10 dimensions the
    sampler then stays at one or two clusters), and there is no number of components,
    so ``K = 5`` (docs/deviations.md#dp-gaussian-default-prior).  Every term moves with
    the data under an affine map, so a fit with this prior does not depend on the
    units of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    covariance_type : {"full", "diag"}
    n_clusters : int
        Nominal number of clusters ``K``.

    Returns
    -------
    GaussianClusterPrior

    Examples
    --------
    >>> import numpy as np
    >>> p = default_gaussian_prior(np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 4.0]]), "diag", 4)
    >>> p.kappa, p.dof, np.round(p.scale, 6).tolist()
    (0.25, 4.0, [0.333333, 1.333333])
    """
    X = np.asarray(V.check_array(X, "X"), np.float64)
    _check_covariance_type(covariance_type)
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    n, d = X.shape
    cov = np.atleast_2d(np.cov(X, rowvar=False)) if n > 1 else np.zeros((d, d))
    # Constant features would make S0 singular: their variance is replaced by the
    # mean variance of the others, or 1 when all are constant.
    var = np.diag(cov).copy()
    # Round-off variance (1e-34 for a column of 0.1s) counts as constant.
    constant = var <= 1e-12 * max(float(var.max()), float(np.mean(X * X)), np.finfo(float).tiny)
    if np.any(constant):
        fill = var[~constant].mean() if np.any(~constant) else 1.0
        cov[constant, :] = 0.0
        cov[:, constant] = 0.0
        cov[np.diag_indices(d)] = np.where(constant, fill, var)
    scale = cov / n_clusters ** (2.0 / d)
    if covariance_type == "diag":
        scale = np.diag(scale).copy()
    else:
        # A (numerically) singular covariance, e.g. more features than points:
        # a ridge of 1e-6 of the mean variance keeps S0 positive definite.
        w = np.linalg.eigvalsh(scale)
        if w[0] <= 1e-6 * w.mean():
            scale = scale + 1e-6 * w.mean() * np.eye(d)
    return GaussianClusterPrior(X.mean(0), float(n_clusters ** (-2.0 / d)), float(d + 2), scale)


def _check_covariance_type(covariance_type):
    if not isinstance(covariance_type, str) or covariance_type not in COVARIANCE_TYPES:
        raise ValueError(f"covariance_type must be one of {COVARIANCE_TYPES}, got "
                         f"{covariance_type!r}")


def check_gaussian_prior(prior, d: int, covariance_type: str) -> GaussianClusterPrior:
    """``prior`` validated for ``d`` features (float64 arrays), a ValueError naming it else."""
    if not isinstance(prior, GaussianClusterPrior):
        if isinstance(prior, tuple) and len(prior) == 4:
            prior = GaussianClusterPrior(*prior)
        else:
            raise TypeError(f"prior must be a GaussianClusterPrior(mean, kappa, dof, scale), "
                            f"got {type(prior).__name__}")
    mean = np.asarray(prior.mean, np.float64)
    if mean.shape != (d,) or not np.all(np.isfinite(mean)):
        raise ValueError(f"prior.mean must be a finite vector of shape ({d},), got shape "
                         f"{mean.shape}")
    kappa = V.check_positive(prior.kappa, "prior.kappa")
    dof = V.check_positive(prior.dof, "prior.dof")
    if dof <= d - 1:
        raise ValueError(f"prior.dof must exceed d - 1 = {d - 1}, got {dof}")
    scale = np.asarray(prior.scale, np.float64)
    if scale.shape == (d,):
        scale = np.diag(scale)
    if scale.shape != (d, d) or not np.all(np.isfinite(scale)):
        raise ValueError(f"prior.scale must be a finite ({d}, {d}) matrix or ({d},) vector, got "
                         f"shape {scale.shape}")
    if covariance_type == "diag":
        if np.any(np.diag(scale) <= 0):
            raise ValueError("prior.scale must have a positive diagonal")
        scale = np.diag(np.diag(scale))
    else:
        if not np.allclose(scale, scale.T, rtol=1e-10, atol=1e-10 * np.abs(scale).max()):
            raise ValueError("prior.scale must be symmetric")
        scale = 0.5 * (scale + scale.T)
        try:
            np.linalg.cholesky(scale)
        except np.linalg.LinAlgError:
            raise ValueError("prior.scale must be positive definite") from None
    return GaussianClusterPrior(mean, kappa, dof, scale)


def _whiten(X, prior: GaussianClusterPrior):
    """``Z = L0^{-1} (X - m0)`` and ``log det S0`` (float64, host)."""
    L0 = np.linalg.cholesky(prior.scale)
    Z = np.linalg.solve(L0, (np.asarray(X, np.float64) - prior.mean).T).T
    return Z, 2.0 * float(np.sum(np.log(np.diag(L0))))


class GaussianGibbsState(NamedTuple):
    """State of one chain of :func:`gibbs_dp_gaussian` (in the prior-whitened frame).

    Attributes
    ----------
    labels : int32 (n,)
        Slot of each point's cluster.
    counts : float (K,)
        Cluster sizes (0 for free slots).
    means : float (K, d)
        Posterior means :math:`m_n = S / (\\kappa_0 + n)` (0 for free slots).
    factor : float (K, d, d) or (K, d)
        ``"full"``: the inverse :math:`S_n^{-1}` of the posterior scale (identity for
        free slots); ``"diag"``: the Gamma rates :math:`\\beta_n` (1/2 for free slots).
    logdet : float (K,)
        :math:`\\log\\det S_n` (``"full"``; zeros for ``"diag"``).
    log_alpha : float scalar
    overflow : bool
        A new cluster was needed but every slot was taken (the sweep is invalid).
    """

    labels: jax.Array
    counts: jax.Array
    means: jax.Array
    factor: jax.Array
    logdet: jax.Array
    log_alpha: jax.Array
    overflow: jax.Array


def _exact_stats(Z, labels, K, kappa0, full):
    """``(counts, means, factor, logdet)`` of one chain from its labels (exact)."""
    n, d = Z.shape
    seg = functools.partial(jax.ops.segment_sum, segment_ids=labels, num_segments=K)
    counts = seg(jnp.ones((n,), Z.dtype))
    kn = kappa0 + counts
    # Centred (two-pass) moments: raw moments cancel catastrophically in float32 for a
    # large tight cluster away from the prior mean.  S_n = I + C + (kappa0 n / kappa_n)
    # xbar xbar^T with C the scatter about the cluster mean xbar (prior mean 0 here).
    safe = jnp.maximum(counts, 1.0)[:, None]
    xbar = seg(Z) / safe
    Y = Z - xbar[labels]
    r = seg(Y)
    xbar = xbar + r / safe  # one correction step of the mean
    Y = Z - xbar[labels]
    shrink = kappa0 * counts / kn
    means = counts[:, None] * xbar / kn[:, None]
    if not full:
        scatter = seg(Y * Y)
        beta = 0.5 + 0.5 * (jnp.maximum(scatter, 0.0) + shrink[:, None] * xbar * xbar)
        return counts, means, beta, jnp.zeros_like(counts)
    scatter = seg((Y[:, :, None] * Y[:, None, :]).reshape(n, d * d)).reshape(K, d, d)
    S = (jnp.eye(d, dtype=Z.dtype) + scatter
         + shrink[:, None, None] * xbar[:, :, None] * xbar[:, None, :])
    S = 0.5 * (S + jnp.swapaxes(S, 1, 2))
    L = jnp.linalg.cholesky(S)
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=1, axis2=2)), axis=1)
    eye = jnp.broadcast_to(jnp.eye(d, dtype=Z.dtype), (K, d, d))
    Linv = jax.scipy.linalg.solve_triangular(L, eye, lower=True)
    return counts, means, jnp.swapaxes(Linv, 1, 2) @ Linv, logdet


def _slot_const(counts, factor, logdet, kappa0, nu0, d, full):
    """The part of a slot's log predictive that does not depend on ``x`` (any leading shape).

    Computed for the whole buffer once per sweep and then only for the two slots a move
    touches: the ``K`` log-gamma pairs per step would otherwise dominate its cost.
    """
    kn = kappa0 + counts
    if full:
        nn = nu0 + counts
        return (gammaln(0.5 * (nn + 1.0)) - gammaln(0.5 * (nn - d + 1.0))
                - 0.5 * d * jnp.log(jnp.pi) - 0.5 * d * jnp.log1p(1.0 / kn) - 0.5 * logdet)
    a = 0.5 * (nu0 + counts)
    return (d * (gammaln(a + 0.5) - gammaln(a)) - 0.5 * d * jnp.log(2.0 * jnp.pi * (1.0 + 1.0 / kn))
            - 0.5 * jnp.sum(jnp.log(factor), axis=-1))


def _log_kernel(x, counts, means, factor, kappa0, nu0, full):
    """The ``x``-dependent part of the log predictive under every slot, shape (K,)."""
    kn = kappa0 + counts
    y = x - means
    if full:
        # Rounding in the rank-one updates may leave a tiny negative form.
        q = jnp.maximum(jnp.einsum("kij,ki,kj->k", factor, y, y), 0.0)
        return -0.5 * (nu0 + counts + 1.0) * jnp.log1p(kn / (kn + 1.0) * q)
    r = (kn / (kn + 1.0))[:, None] * y * y / (2.0 * factor)
    return -(0.5 * (nu0 + counts) + 0.5) * jnp.sum(jnp.log1p(r), axis=-1)


def _log_predictive(x, counts, means, factor, logdet, kappa0, nu0, full):
    """Log posterior predictive of ``x`` (d,) under every slot (K,), whitened frame."""
    d = x.shape[-1]
    return (_slot_const(counts, factor, logdet, kappa0, nu0, d, full)
            + _log_kernel(x, counts, means, factor, kappa0, nu0, full))


def _weight_const(counts, factor, logdet, kappa0, nu0, d, full):
    """``log n_c`` plus :func:`_slot_const`; ``-inf`` for free slots."""
    c = _slot_const(counts, factor, logdet, kappa0, nu0, d, full)
    return jnp.where(counts > 0, jnp.log(jnp.maximum(counts, 1.0)) + c, -jnp.inf)


def _add_point(x, n, mean, factor, logdet, kappa0, full):
    r"""One cluster's ``(mean, factor, logdet)`` after ``x`` joins it (``n -> n + 1``).

    ``S_n`` gains :math:`\tfrac{\kappa_n}{\kappa_n + 1}(x - m_n)(x - m_n)^\top`: a rank-one
    downdate of its inverse (Sherman-Morrison; module docstring).
    """
    k = kappa0 + n
    if full:
        v = jnp.sqrt(k / (k + 1.0)) * (x - mean)
        w0 = factor @ v
        t = v @ w0
        f_new = factor - jnp.outer(w0, w0 / (1.0 + t))
        ld_new = logdet + jnp.log1p(t)
    else:
        f_new = factor + 0.5 * (k / (k + 1.0)) * (x - mean) ** 2
        ld_new = logdet
    return (k * mean + x) / (k + 1.0), f_new, ld_new


def _point_step(carry, x, old, u, log_new, *, kappa0, nu0, full):
    """One chain, one point: remove ``x`` from slot ``old``, draw its slot, add it back."""
    counts, means, factor, logdet, const, overflow = carry
    K, d = means.shape
    wconst = functools.partial(_weight_const, kappa0=kappa0, nu0=nu0, d=d, full=full)
    dtype = means.dtype
    eye = jnp.eye(d, dtype=dtype)
    # Remove x from its cluster (n -> n - 1).
    n1, m1, f1, ld1 = counts[old], means[old], factor[old], logdet[old]
    k1 = kappa0 + n1
    emptied = n1 <= 1.0
    k0 = jnp.maximum(k1 - 1.0, kappa0)
    m_new = (k1 * m1 - x) / k0
    if full:
        u_vec = jnp.sqrt(k1 / k0) * (x - m1)
        w0 = f1 @ u_vec
        g = jnp.maximum(1.0 - u_vec @ w0, jnp.finfo(dtype).tiny)
        f_new = f1 + jnp.outer(w0, w0 / g)
        f_new = jnp.where(emptied, eye, f_new)
        ld_new = jnp.where(emptied, 0.0, ld1 + jnp.log(g))
    else:
        f_new = jnp.maximum(f1 - 0.5 * (k1 / k0) * (x - m1) ** 2, 0.5)
        f_new = jnp.where(emptied, 0.5, f_new)
        ld_new = ld1
    counts = counts.at[old].add(-1.0)
    means = means.at[old].set(jnp.where(emptied, 0.0, m_new))
    factor = factor.at[old].set(f_new)
    logdet = logdet.at[old].set(ld_new)
    const = const.at[old].set(wconst(n1 - 1.0, f_new, ld_new))
    # Draw its cluster (a slot or a new one) by inverse CDF.
    log_w = const + _log_kernel(x, counts, means, factor, kappa0, nu0, full)
    choice = _draw_slot_or_new(log_w, log_new, u)
    is_new = choice == K
    active = counts > 0
    free = jnp.argmin(active).astype(jnp.int32)
    overflow = overflow | (is_new & jnp.all(active))
    slot = jnp.where(is_new, free, choice)
    # Add x to it (n -> n + 1); a free slot holds the prior's statistics.
    n2 = counts[slot]
    m_new, f_new, ld_new = _add_point(x, n2, means[slot], factor[slot], logdet[slot], kappa0, full)
    counts = counts.at[slot].add(1.0)
    means = means.at[slot].set(m_new)
    factor = factor.at[slot].set(f_new)
    logdet = logdet.at[slot].set(ld_new)
    const = const.at[slot].set(wconst(n2 + 1.0, f_new, ld_new))
    return (counts, means, factor, logdet, const, overflow), slot


def _scan_points(Z, state: GaussianGibbsState, u, log_new, kappa0, nu0, n_valid=None, *, full):
    """Every point's :func:`_point_step` in order, every chain: one ``lax.scan``
    (with ``n_valid``, over the first ``n_valid`` rows only: see :func:`_sweep`).

    Returns the labels (C, n) and the overflow flags (C,); the statistics the scan
    carries are dropped (the sweep recomputes them exactly from the labels).
    """
    d = Z.shape[1]
    step = jax.vmap(functools.partial(_point_step, kappa0=kappa0, nu0=nu0, full=full),
                    in_axes=(0, None, 0, 0, 0))

    def body(carry, inp):
        x, old, u_i, ln_i = inp
        return step(carry, x, old, u_i, ln_i)

    const = _weight_const(state.counts, state.factor, state.logdet, kappa0, nu0, d, full)
    carry = (state.counts, state.means, state.factor, state.logdet, const, state.overflow)
    # Padded rows (label -1) are never stepped (masked steps took twice the sweep's time
    # on full covariances).
    carry, labels = scan_rows(body, carry, (Z, state.labels.T, u.T, log_new.T), n_valid,
                              out=state.labels.T)
    return labels.T, carry[5]


def _moves(Z, state: GaussianGibbsState, u, log_new, keys_sm, kappa0, nu0, n_valid=None, *,
           full, split_merge=0):
    """Neal's single-site moves of every point in every chain, on the uniforms ``u`` (C, n),
    then ``split_merge`` :func:`split_merge_move` per chain (keys ``keys_sm``, (C,)).

    On a CPU with the native kernels built, one call of
    :func:`bayesclust._native.gibbs_gaussian_ffi` (8 float32 / 4 float64 chains on the
    lanes of a SIMD register, ``gibbs_gaussian.cc``); elsewhere :func:`_scan_points` and
    :func:`split_merge_move`.  The point moves make the same draws from the same
    uniforms on both paths, up to float rounding (tested); the split-merge moves draw
    from each path's own stream of the chain's key (the native moves visit the members
    in index order, the XLA moves in a random order).  Returns the labels (C, n), the
    overflow flags (C,) and the split-merge moves accepted (C,).
    """
    n = Z.shape[0]
    K = state.counts.shape[1]

    def xla(Z, state, u, log_new, keys_sm, kappa0, nu0):
        labels, overflow = _scan_points(Z, state, u, log_new, kappa0, nu0, n_valid, full=full)
        accepted = jnp.zeros(labels.shape[0], jnp.int32)
        if split_merge:
            k_sm = jax.vmap(lambda k: jax.random.split(k, split_merge))(keys_sm)
            counts = jax.vmap(lambda lab: jax.ops.segment_sum(
                jnp.ones((n,), Z.dtype), lab, num_segments=K))(labels)
            labels, _, over, accepted = jax.vmap(functools.partial(
                _split_merge_moves, moves=split_merge, full=full, kappa0=kappa0, nu0=nu0,
                n_valid=n_valid), in_axes=(0, None, 0, 0, 0))(k_sm, Z, labels, counts,
                                                             state.log_alpha)
            overflow = overflow | over
        return labels, overflow, accepted

    if not native_sweep_ok(Z):
        return xla(Z, state, u, log_new, keys_sm, kappa0, nu0)

    def cpu(Z, state, u, log_new, keys_sm, kappa0, nu0):
        labels, overflow, accepted = _native.gibbs_gaussian_ffi(
            Z, state.labels, state.counts, state.means, state.factor, state.logdet, u, log_new,
            kappa0, nu0, n if n_valid is None else n_valid, state.log_alpha, chain_seeds(keys_sm),
            full=full,
            split_merge=split_merge)
        return labels, state.overflow | (overflow != 0), accepted

    return lax.platform_dependent(Z, state, u, log_new, keys_sm, kappa0, nu0, cpu=cpu,
                                  default=xla)


def log_marginal_whitened(counts, logdet_or_beta, kappa0, nu0, d, full):
    """``log p(Z | z)`` of one chain from its exact statistics (whitened frame, m0 = 0, S0 = I)."""
    kn = kappa0 + counts
    on = counts > 0
    if full:
        nn = nu0 + counts
        j = jnp.arange(d, dtype=counts.dtype)
        lgd = lambda a: jnp.sum(gammaln(a[..., None] - 0.5 * j), axis=-1)  # noqa: E731
        per = (-0.5 * counts * d * jnp.log(jnp.pi) + lgd(0.5 * nn) - lgd(0.5 * nu0 + 0 * nn)
               - 0.5 * nn * logdet_or_beta + 0.5 * d * jnp.log(kappa0 / kn))
    else:
        a0 = 0.5 * nu0
        an = a0 + 0.5 * counts
        per = (d * (gammaln(an) - gammaln(a0)) + d * a0 * jnp.log(0.5)
               - an * jnp.sum(jnp.log(logdet_or_beta), axis=-1)
               + 0.5 * d * jnp.log(kappa0 / kn) - 0.5 * counts * d * jnp.log(2.0 * jnp.pi))
    return jnp.sum(jnp.where(on, per, 0.0))


def split_merge_move(key, Z, labels, counts, log_alpha, kappa0, nu0, *, full, n_valid=None):
    r"""One sequentially-allocated split-merge move of one chain (Dahl 2003), means and
    covariances integrated out.

    The proposal is the spherical sampler's
    (:func:`bayesclust.inference.mixtures.gibbs.split_merge_move`): two points ``i, j``,
    the other members of their clusters allocated in a random order to ``A = {i}`` or
    ``B = {j}`` with probability :math:`\propto |A|\, p(x \mid A)` (the Student-t
    predictive of :func:`_log_predictive`, its statistics grown by rank-one updates);
    a merge's ``q`` is the probability of reproducing the current split.  The split is
    accepted with probability :math:`\min\{1, \frac{p(z^{split} \mid X)}{p(z^{merge} \mid
    X)} / q\}`, the merge with the reciprocal, where under the CRP prior

    .. math::

        \log \frac{p(z^{split} \mid X)}{p(z^{merge} \mid X)} = \log\alpha
        + \log\frac{\Gamma(n_A)\Gamma(n_B)}{\Gamma(n_A + n_B)}
        + \log p(X_A) + \log p(X_B) - \log p(X_{A \cup B})

    with the conjugate marginal likelihoods of :func:`log_marginal_whitened` from exact
    statistics (Murphy 2007, §8.3 and §9).  The random order is an auxiliary variable
    shared by the move and its reverse, so the move leaves :math:`p(z \mid X)` invariant
    (Jain & Neal 2004, §3).

    Parameters
    ----------
    key : PRNG key
    Z : array, shape (n, d)
        The whitened data (:func:`whitened_problem`).
    labels : int32 (n,)
    counts : float (K,)
        The slots' sizes (only which are free matters, and they are updated).
    log_alpha : float scalar
    kappa0, nu0 : float
        As :func:`whitened_problem` returns them.
    full : bool (static)

    Returns
    -------
    labels : int32 (n,)
    counts : float (K,)
    overflow : bool scalar
        An accepted split found no free slot (not applied; the caller grows the buffer).
    accepted : bool scalar
        The move was accepted and applied.

    References
    ----------
    D. B. Dahl (2003), An improved merge-split sampler for conjugate Dirichlet process
    mixture models, Technical Report 1086, Dept. of Statistics, University of
    Wisconsin.  S. Jain and R. M. Neal (2004), A split-merge Markov chain Monte Carlo
    procedure for the Dirichlet process mixture model, JCGS 13(1), 158-182.
    """
    n, d = Z.shape
    dtype = Z.dtype
    zero = jnp.zeros((), dtype)
    empty = (jnp.eye(d, dtype=dtype) if full else jnp.full((d,), 0.5, dtype))

    def side(x):
        return (jnp.ones((), dtype),) + _add_point(x, zero, jnp.zeros((d,), dtype), empty, zero,
                                                   kappa0, full)

    def log_weights(a, b, x):
        c, m, f, ld = (jnp.stack(pair) for pair in zip(a, b))
        w = jnp.log(c) + _log_predictive(x, c, m, f, ld, kappa0, nu0, full)
        return w[1] - w[0]

    def add(a, b, x, to_a, to_b):
        # One rank-one update, of the side x joins (at most one; none past the members).
        n_s, m_s, f_s, ld_s = (jnp.where(to_b, sb, sa) for sa, sb in zip(a, b))
        grown = (n_s + 1.0,) + _add_point(x, n_s, m_s, f_s, ld_s, kappa0, full)
        a = tuple(jnp.where(to_a, g, v) for g, v in zip(grown, a))
        b = tuple(jnp.where(to_b, g, v) for g, v in zip(grown, b))
        return a, b

    prop = _propose_split_merge(key, Z, labels, side, log_weights, add, n_valid=n_valid)
    n_a, n_b = prop.a[0], prop.b[0]
    pair = (labels == prop.ci) | (labels == prop.cj)
    stat = 3 if full else 2  # log det S_n (full) or the Gamma rates (diag)
    split_stats = _exact_stats(Z, jnp.where(pair, prop.to_b.astype(jnp.int32), 2), 3, kappa0, full)
    merge_stats = _exact_stats(Z, jnp.where(pair, 0, 1), 2, kappa0, full)
    marginal = functools.partial(log_marginal_whitened, kappa0=kappa0, nu0=nu0, d=d, full=full)
    log_ratio = (log_alpha + gammaln(n_a) + gammaln(n_b) - gammaln(n_a + n_b)
                 + marginal(split_stats[0][:2], split_stats[stat][:2])
                 - marginal(merge_stats[0][:1], merge_stats[stat][:1]))
    new_labels, free, do_split, do_merge, overflow = _accept_split_merge(prop, log_ratio, labels,
                                                                         counts)
    counts = jnp.where(do_split, counts.at[prop.ci].set(n_a).at[free].set(n_b), counts)
    counts = jnp.where(do_merge, counts.at[prop.ci].set(n_a + n_b).at[prop.cj].set(0.0), counts)
    return new_labels, counts, overflow, do_split | do_merge


def _split_merge_moves(keys, Z, labels, counts, log_alpha, kappa0, nu0, *, moves, full,
                       n_valid=None):
    """``moves`` :func:`split_merge_move` of one chain in turn (one key each)."""

    def move(t, carry):
        lab, cnt, over, acc = carry
        lab, cnt, o, ok = split_merge_move(keys[t], Z, lab, cnt, log_alpha, kappa0, nu0, full=full,
                                           n_valid=n_valid)
        return lab, cnt, over | o, acc + ok.astype(jnp.int32)

    return lax.fori_loop(0, moves, move, (labels, counts, jnp.zeros((), bool),
                                          jnp.zeros((), jnp.int32)))


def _sweep(keys, Z, state: GaussianGibbsState, kappa0, nu0, alpha_prior, n_valid=None, *, full,
           split_merge=0):
    """One sweep of every chain (leading chain axis on the state, one key per chain).

    The point moves, then ``split_merge`` :func:`split_merge_move` per chain (their keys
    folded from the chain's, so the rest of the sweep's random stream does not depend on
    them), then ``alpha``.  Returns the state and the moves accepted per chain ``(C,)``.
    ``n_valid`` (traced int, optional): only the first ``n_valid`` rows are data; the
    rest pad ``Z`` to a shape bucket (label -1), are skipped by the point moves and
    counted nowhere, so the first rows' draws are an unpadded run's.
    """
    n, d = Z.shape
    n_real = n if n_valid is None else n_valid
    K = state.counts.shape[1]
    sub = jax.vmap(lambda k: jax.random.split(k, 2))(keys)
    u = 1.0 - jax.vmap(lambda k: jax.random.uniform(k, (n,), Z.dtype))(sub[:, 0])  # (C, n)
    logp0 = _log_predictive(Z, jnp.zeros((n,), Z.dtype), jnp.zeros_like(Z),
                            jnp.broadcast_to(jnp.eye(d, dtype=Z.dtype), (n, d, d)) if full
                            else jnp.full((n, d), 0.5, Z.dtype),
                            jnp.zeros((n,), Z.dtype), kappa0, nu0, full)  # (n,)
    log_new = state.log_alpha[:, None] + logp0[None, :]  # (C, n)
    moves = split_merge if n >= 2 else 0
    k_sm = jax.vmap(lambda k: jax.random.fold_in(k, 0x5EED))(keys)
    labels, overflow, accepted = _moves(Z, state, u, log_new, k_sm, kappa0, nu0, n_valid,
                                        full=full, split_merge=moves)
    counts, means, factor, logdet = jax.vmap(
        lambda lab: _exact_stats(Z, lab, K, kappa0, full))(labels)
    log_alpha = state.log_alpha
    if alpha_prior is not None:
        k = jnp.sum(counts > 0, axis=1)
        log_alpha = jax.vmap(lambda kk, la, kc: _update_log_alpha(kk, la, kc, n_real, alpha_prior))(
            sub[:, 1], log_alpha, k).astype(Z.dtype)
    return GaussianGibbsState(labels, counts, means, factor, logdet, log_alpha, overflow), accepted


@functools.partial(jax.jit, static_argnames=("num", "thin", "full", "split_merge"))
def _run_segment(keys, Z, state, kappa0, nu0, alpha_prior, n_valid=None, *, num, thin, full,
                 split_merge=0):
    """``num`` recorded draws of ``thin`` sweeps each, for every chain (``n_valid``: as
    :func:`_sweep`, traced, so every ``n`` of a row bucket runs one program)."""
    d = Z.shape[1]

    def draw(s, k):
        sweep_keys = jax.vmap(lambda k_: jax.random.split(k_, thin))(k)

        def sweep(t, carry):
            s_, acc = carry
            s_, ok = _sweep(sweep_keys[:, t], Z, s_, kappa0, nu0, alpha_prior, n_valid, full=full,
                            split_merge=split_merge)
            return s_, acc + ok

        s, accepted = lax.fori_loop(0, thin, sweep, (s, jnp.zeros(k.shape[0], jnp.int32)))
        stat = s.logdet if full else s.factor
        record = dict(
            split_merge_accepted=accepted,
            labels=recorded_labels(s.labels, s.counts.shape[-1]),
            log_likelihood=jax.vmap(
                lambda c, st: log_marginal_whitened(c, st, kappa0, nu0, d, full))(s.counts, stat),
            log_alpha=s.log_alpha,
            n_clusters=jnp.sum(s.counts > 0, axis=1),
        )
        return s, record

    draw_keys = jax.vmap(lambda k: jax.random.split(k, num))(keys)
    state, records = lax.scan(draw, state, jnp.swapaxes(draw_keys, 0, 1))
    return state, jax.tree.map(lambda r: jnp.swapaxes(r, 0, 1), records)


@functools.partial(jax.jit, static_argnames=("K", "full"))
def _init_chains(Z, labels, log_alpha, kappa0, *, K, full):
    counts, means, factor, logdet = jax.vmap(lambda lab: _exact_stats(Z, lab, K, kappa0, full))(labels)
    C = labels.shape[0]
    return GaussianGibbsState(labels, counts, means, factor, logdet,
                              jnp.full((C,), log_alpha, Z.dtype), jnp.zeros((C,), bool))


def _grow(state: GaussianGibbsState, capacity: int, full: bool) -> GaussianGibbsState:
    C, K = state.counts.shape
    d = state.means.shape[-1]
    pad = capacity - K
    dtype = state.means.dtype
    if full:
        extra = jnp.broadcast_to(jnp.eye(d, dtype=dtype), (C, pad, d, d))
    else:
        extra = jnp.full((C, pad, d), 0.5, dtype)
    return state._replace(
        counts=jnp.pad(state.counts, ((0, 0), (0, pad))),
        means=jnp.pad(state.means, ((0, 0), (0, pad), (0, 0))),
        factor=jnp.concatenate([state.factor, extra], axis=1),
        logdet=jnp.pad(state.logdet, ((0, 0), (0, pad))),
        overflow=jnp.zeros_like(state.overflow),
    )


def gibbs_dp_gaussian(
    rng_key,
    X,
    *,
    covariance_type: str = "full",
    alpha: float = 1.0,
    alpha_prior=None,
    prior: GaussianClusterPrior | None = None,
    num_warmup: int = DP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = DP_SAMPLER_DEFAULTS.num_samples,
    thin: int = DP_SAMPLER_DEFAULTS.thin,
    num_chains: int = DP_SAMPLER_DEFAULTS.num_chains,
    init_labels=None,
    max_clusters: int | None = None,
    split_merge: int = 0,
    progress_bar: bool = True,
    mesh=None,
):
    r"""Collapsed Gibbs sampling of the DP Gaussian mixture with per-cluster covariances.

    The model and the sampler are those of the module docstring: a CRP(alpha) prior
    on partitions, a Normal-inverse-Wishart (``"full"``) or per-dimension
    Normal-Gamma (``"diag"``) prior on each cluster's mean and covariance, both
    integrated out (Neal 2000, Algorithm 3).  A point joins cluster ``c`` with
    probability :math:`\propto n_{c}\, t_{\nu_n - d + 1}\big(x \mid m_n,
    \tfrac{\kappa_n + 1}{\kappa_n(\nu_n - d + 1)} S_n\big)` and a new cluster with
    probability :math:`\propto \alpha\, t_{\nu_0 - d + 1}(x \mid m_0, \tfrac{\kappa_0 +
    1}{\kappa_0(\nu_0 - d + 1)} S_0)` (Murphy 2007, §9, eq. 258), where
    :math:`\kappa_n = \kappa_0 + n`, :math:`\nu_n = \nu_0 + n`,
    :math:`m_n = (\kappa_0 m_0 + \sum x)/\kappa_n`,
    :math:`S_n = S_0 + \sum x x^\top + \kappa_0 m_0 m_0^\top - \kappa_n m_n m_n^\top`.

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    covariance_type : {"full", "diag"}
    alpha : float
        DP concentration (> 0); the initial value when ``alpha_prior`` is given.
    alpha_prior : numpyro.distributions.Gamma, optional
        Prior on alpha (Escobar & West's update, as :func:`bayesclust.gibbs_dp_gmm`).
    prior : GaussianClusterPrior, optional
        The cluster prior; default :func:`default_gaussian_prior` of ``X``.
    num_warmup, num_samples, thin, num_chains : int
        As :func:`bayesclust.gibbs_dp_gmm` (defaults
        :data:`bayesclust.inference.mixtures.convergence.DP_SAMPLER_DEFAULTS`).
    init_labels : array_like of int, shape (n,) or (num_chains, n), optional
        Initial partition(s); default all points in one cluster.
    max_clusters : int, optional
        Largest buffer the sampler may grow to (default ``n``).
    split_merge : int
        Sequentially-allocated split-merge moves per sweep (Dahl 2003;
        :func:`split_merge_move`), after the point moves (0: single-site moves only).
    progress_bar : bool
    mesh : jax.sharding.Mesh, optional
        Run the chains sharded over the devices of this one-axis mesh, as
        :func:`bayesclust.gibbs_dp_gmm` does (``num_chains`` a multiple of the number of
        devices; the same draws as without ``mesh``).

    Returns
    -------
    Posterior
        Label draws (chains, draws, n); ``log_likelihood`` is the collapsed
        :math:`\log p(X \mid z)` (means and covariances integrated out); params
        ``alpha``; ``sample_stats["n_clusters"]`` and, with split-merge moves,
        ``sample_stats["split_merge_acceptance"]`` (the fraction of each draw's
        ``thin * split_merge`` moves accepted).  A
        :class:`bayesclust.ConvergenceWarning` is issued as for
        :func:`bayesclust.gibbs_dp_gmm`.

    References
    ----------
    R. M. Neal (2000), Algorithm 3.  K. P. Murphy (2007), §8.3 and §9.  A. Gelman et
    al. (2013), BDA3 §3.6.  C. Fraley and A. E. Raftery (2007), §2-3.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, [1.0, 0.1], (30, 2)), rng.normal(5, [0.1, 1.0], (30, 2))])
    >>> post = gibbs_dp_gaussian(0, X, num_warmup=50, num_samples=50, num_chains=2,
    ...                          progress_bar=False)
    >>> int(np.bincount(post.n_clusters.ravel()).argmax())
    2
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    _check_covariance_type(covariance_type)
    full = covariance_type == "full"
    alpha = V.check_positive(alpha, "alpha")
    alpha_prior = _prior_params(alpha_prior, "alpha_prior", "gamma")
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    thin = V.check_int(thin, "thin", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    if mesh is not None:
        check_mesh(mesh)
        check_divides(mesh, num_chains, "num_chains")
    split_merge = V.check_int(split_merge, "split_merge", minimum=0)
    n, d = X.shape
    if prior is None:
        prior = default_gaussian_prior(X, covariance_type)
    prior = check_gaussian_prior(prior, d, covariance_type)
    limit = n if max_clusters is None else min(V.check_int(max_clusters, "max_clusters", minimum=1), n)
    labels0, per_chain = start_labels(init_labels, n, num_chains)
    if not per_chain:
        labels0 = np.broadcast_to(labels0, (num_chains, n)).copy()
    Z, kappa0, nu0, logdet0 = whitened_problem(X, prior, "full" if full else "diag")
    # The sampler works on the whitened data: their squares must fit the working dtype
    # (the data's own units do not matter).
    V.check_squares_representable(Z, "X (whitened by the prior)", dtype=V.working_dtype(X.dtype))
    # Rows padded to a shape bucket (zeros, label -1): every n of a bucket runs one
    # compiled program, and the first n rows' draws are an unpadded run's.
    rows = run_rows(n)
    Zj = jnp.asarray(pad_rows(Z, rows), V.working_dtype(X.dtype))
    dtype = Zj.dtype
    kappa0 = jnp.asarray(kappa0, dtype)
    nu0 = jnp.asarray(nu0, dtype)
    k0 = int(labels0.max()) + 1
    labels0 = pad_rows(labels0, rows, axis=-1, value=-1)
    # A power of two: starts of a few more clusters (the estimator's over-split start has
    # about sqrt(n)) share one buffer, so a refit on a few more rows compiles nothing.
    capacity = max(k0, min(pow2_at_least(max(8, 2 * k0)), limit))
    state = _init_chains(Zj, jnp.asarray(labels0), float(np.log(alpha)), kappa0, K=capacity,
                         full=full)
    ap = None if alpha_prior is None else tuple(jnp.asarray(v, dtype) for v in alpha_prior)

    def grow(s):
        nonlocal capacity
        if capacity >= limit:
            raise RuntimeError(f"the Gibbs sampler needed more than max_clusters={limit} clusters")
        capacity = min(2 * capacity, limit)
        return _grow(s, capacity, full)

    records, seconds = run_in_segments(
        key, segment_runner(_run_segment, Zj, (kappa0, nu0, ap, jnp.asarray(n, jnp.int32)),
                             dict(thin=thin, full=full, split_merge=split_merge), mesh),
        state, num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, thin=thin,
        grow=grow, progress_bar=progress_bar, desc=f"gibbs (collapsed, {covariance_type})",
        mesh=mesh, rows=n)
    # The whitened density times the Jacobian |S0|^(-1/2) per point: log p(X | z).
    loglik = records["log_likelihood"].astype(np.float64) - 0.5 * n * logdet0
    sample_stats = {"n_clusters": records["n_clusters"]}
    moves = thin * split_merge if n >= 2 else 0
    if moves:
        sample_stats["split_merge_acceptance"] = records["split_merge_accepted"] / moves
    post = Posterior(
        records["labels"],
        log_likelihood=loglik,
        params={"alpha": np.exp(records["log_alpha"])},
        sample_stats=sample_stats,
        sampler=f"gibbs-collapsed-{covariance_type}" + ("+split-merge" if moves else ""),
        model=f"dp_gaussian_{covariance_type}",
        kernels=sweep_kernels(Zj),
        seconds=seconds,
        copy=False,
    )
    warn_if_not_converged(post)
    return post


def cluster_posterior(X, labels, prior: GaussianClusterPrior, diag=False):
    """The conjugate posterior of every cluster's mean and covariance (host, float64).

    The Normal-inverse-Wishart update (Murphy 2007, §9): ``kappa_n = kappa + n``,
    ``nu_n = dof + n``, ``m_n = (kappa mean + sum x) / kappa_n`` and
    ``S_n = scale + sum (x - xbar)(x - xbar)^T + kappa n / kappa_n (xbar - mean)(xbar - mean)^T``.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    labels : ndarray of int, shape (n,)
        Clusters ``0..k-1``.
    prior : GaussianClusterPrior
    diag : bool, default False
        The per-dimension (Normal-Gamma) model: the one-dimensional formulas with the
        marginal degrees of freedom of the NIW's diagonal.

    Returns
    -------
    list of (n_c, kappa_n, nu_n, m_n, S_n), one per cluster ``0..k-1``
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i")
    V.check_same_length(labels, X, "labels", "X")
    labels = np.asarray(labels)
    k = V.check_class_ids(labels, "labels", None, what="the clusters")
    out = []
    if diag:  # the one-dimensional formulas with the marginal dof of the NIW's diagonal
        prior = prior._replace(dof=prior.dof - X.shape[1] + 1.0)
    for c in range(k):
        Xc = X[labels == c]
        n = Xc.shape[0]
        kn, nn = prior.kappa + n, prior.dof + n
        mn = (prior.kappa * prior.mean + Xc.sum(0)) / kn
        # Centred form (raw moments cancel for tight clusters far from the prior mean).
        xbar = Xc.mean(0) if n else prior.mean
        Yc = Xc - xbar
        Sn = (prior.scale + Yc.T @ Yc
              + (prior.kappa * n / kn) * np.outer(xbar - prior.mean, xbar - prior.mean))
        out.append((n, kn, nn, mn, 0.5 * (Sn + Sn.T)))
    return out


def gaussian_predictive_logpdf(X_new, X, labels, *, covariance_type: str = "full",
                               prior: GaussianClusterPrior | None = None) -> np.ndarray:
    r"""Log posterior predictive density of new rows under each cluster of a partition.

    For cluster ``c`` of ``labels`` (``n_c`` members of ``X``), the density of
    ``x`` given the members, means and covariances integrated out: the multivariate
    Student-t :math:`t_{\nu_n - d + 1}\big(x \mid m_n, \tfrac{\kappa_n + 1}{\kappa_n
    (\nu_n - d + 1)} S_n\big)` (Murphy 2007, §9, eq. 258) for ``"full"``, and for
    ``"diag"`` the product over dimensions of
    :math:`t_{\nu_n}\big(x_j \mid m_{nj}, \tfrac{\kappa_n + 1}{\kappa_n \nu_n} S_{n,jj}\big)`
    (Murphy 2007, §8.3, eq. 100, with :math:`a = \nu/2, b = S/2`), where for ``"diag"``
    :math:`\nu_n = \nu_0 - d + 1 + n`.

    Parameters
    ----------
    X_new : array_like, shape (m, d)
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
        A partition of ``X`` (nominal ids; clusters are numbered by sorted id).
    covariance_type : {"full", "diag"}
    prior : GaussianClusterPrior, optional
        Default :func:`default_gaussian_prior` of ``X``.

    Returns
    -------
    ndarray, shape (m, k)
        float64.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [5.0, 5.0], [5.2, 4.9]])
    >>> lp = gaussian_predictive_logpdf([[0.0, 0.1]], X, [0, 0, 1, 1])
    >>> lp.shape, bool(lp[0, 0] > lp[0, 1])
    ((1, 2), True)
    """
    from scipy.special import gammaln as lg

    _check_covariance_type(covariance_type)
    X = np.asarray(V.check_array(X, "X"), np.float64)
    n, d = X.shape
    X_new = np.asarray(V.check_array(X_new, "X_new"), np.float64)
    if X_new.shape[1] != d:
        raise ValueError(f"X_new has {X_new.shape[1]} features, X has {d}")
    labels = np.unique(V.check_labels(labels, "labels", n_samples=n), return_inverse=True)[1]
    if prior is None:
        prior = default_gaussian_prior(X, covariance_type)
    prior = check_gaussian_prior(prior, d, covariance_type)
    cols = []
    for _, kn, nn, mn, Sn in cluster_posterior(X, labels.reshape(-1), prior,
                                                 covariance_type == "diag"):
        y = X_new - mn
        if covariance_type == "full":
            v = nn - d + 1.0
            L = np.linalg.cholesky(Sn * (kn + 1.0) / (kn * v))
            r = np.linalg.solve(L, y.T)
            q = np.sum(r * r, axis=0)
            cols.append(lg(0.5 * (v + d)) - lg(0.5 * v) - 0.5 * d * np.log(v * np.pi)
                        - np.sum(np.log(np.diag(L))) - 0.5 * (v + d) * np.log1p(q / v))
        else:
            s2 = np.diag(Sn) * (kn + 1.0) / (kn * nn)
            cols.append(np.sum(lg(0.5 * (nn + 1.0)) - lg(0.5 * nn) - 0.5 * np.log(nn * np.pi * s2)
                               - 0.5 * (nn + 1.0) * np.log1p(y * y / (nn * s2)), axis=1))
    return np.stack(cols, axis=1)


def gaussian_log_marginal(X, labels, *, covariance_type: str = "full",
                          prior: GaussianClusterPrior | None = None) -> float:
    r"""Log marginal likelihood :math:`\log p(X \mid z)`, means and covariances integrated out.

    ``"full"`` (Murphy 2007, §9, eq. 266):
    :math:`\sum_c -\tfrac{n_c d}{2}\log\pi + \log\Gamma_d(\nu_n/2) - \log\Gamma_d(\nu_0/2)
    + \tfrac{\nu_0}{2}\log|S_0| - \tfrac{\nu_n}{2}\log|S_n| + \tfrac d2 \log(\kappa_0/\kappa_n)`;
    ``"diag"``: the one-dimensional formula per dimension.

    Parameters
    ----------
    X : array_like, shape (n, d)
    labels : array_like of int, shape (n,)
    covariance_type : {"full", "diag"}
    prior : GaussianClusterPrior, optional

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.2], [3.0]])
    >>> p = GaussianClusterPrior(np.zeros(1), 1.0, 3.0, np.eye(1))
    >>> a = gaussian_log_marginal(X, [0, 0, 1], prior=p, covariance_type="full")
    >>> b = gaussian_log_marginal(X, [0, 0, 1], prior=p, covariance_type="diag")
    >>> bool(np.isclose(a, b))
    True
    """
    from scipy.special import multigammaln

    _check_covariance_type(covariance_type)
    X = np.asarray(V.check_array(X, "X"), np.float64)
    V.check_squares_representable(X, "X", np.float64)  # the clusters' scatter matrices
    n, d = X.shape
    labels = np.unique(V.check_labels(labels, "labels", n_samples=n), return_inverse=True)[1]
    if prior is None:
        prior = default_gaussian_prior(X, covariance_type)
    prior = check_gaussian_prior(prior, d, covariance_type)
    total = 0.0
    diag = covariance_type == "diag"
    for m, kn, nn, _, Sn in cluster_posterior(X, labels.reshape(-1), prior, diag):
        if covariance_type == "full":
            total += (-0.5 * m * d * np.log(np.pi) + multigammaln(0.5 * nn, d)
                      - multigammaln(0.5 * prior.dof, d)
                      + 0.5 * prior.dof * np.linalg.slogdet(prior.scale)[1]
                      - 0.5 * nn * np.linalg.slogdet(Sn)[1] + 0.5 * d * np.log(prior.kappa / kn))
        else:
            from scipy.special import gammaln as lg

            a0, an = 0.5 * (prior.dof - d + 1.0), 0.5 * nn
            b0, bn = 0.5 * np.diag(prior.scale), 0.5 * np.diag(Sn)
            total += float(np.sum(lg(an) - lg(a0) + a0 * np.log(b0) - an * np.log(bn)
                                  + 0.5 * np.log(prior.kappa / kn) - 0.5 * m * np.log(2 * np.pi)))
    return float(total)


# --- One chain's pieces, public for the MCMCKernel of bayesclust.inference.mixtures.mcmc_kernels ---


def whitened_problem(X, prior: GaussianClusterPrior, covariance_type: str):
    r"""The sampler's frame: ``(Z, kappa0, nu0, logdet0)`` for data ``X`` under ``prior``.

    ``Z = L0^{-1} (X - m0)`` (float64, host) with :math:`S_0 = L_0 L_0^\top`,
    ``logdet0`` :math:`= \log\det S_0` (so :math:`\log p(X \mid z) = \log p(Z \mid z)
    - \tfrac n2 \log\det S_0`), ``kappa0`` the prior's and ``nu0`` its dof, for ``"diag"``
    the marginal dof ``nu0 - d + 1`` of one dimension (the one-dimensional formulas).
    ``prior`` must have passed :func:`check_gaussian_prior`.
    """
    _check_covariance_type(covariance_type)
    Z, logdet0 = _whiten(X, prior)
    d = Z.shape[1]
    nu0 = prior.dof if covariance_type == "full" else prior.dof - d + 1.0
    return Z, float(prior.kappa), float(nu0), logdet0


def init_gaussian_state(Z, labels, capacity: int, log_alpha, kappa0, *, full: bool) -> GaussianGibbsState:
    """One chain's :class:`GaussianGibbsState` (no chain axis) from slot labels ``0..capacity-1``.

    ``Z`` is the whitened data of :func:`whitened_problem`; the statistics are exact.
    """
    labels = jnp.asarray(labels, jnp.int32)
    counts, means, factor, logdet = _exact_stats(Z, labels, capacity, kappa0, full)
    return GaussianGibbsState(labels, counts, means, factor, logdet,
                              jnp.asarray(log_alpha, Z.dtype), jnp.asarray(False))


def sweep_gaussian_chains(keys, Z, state: GaussianGibbsState, kappa0, nu0, alpha_prior=None, *,
                          full: bool, split_merge: int = 0) -> tuple[GaussianGibbsState, GibbsInfo]:
    """One collapsed Gibbs sweep of each of ``C`` chains (a leading chain axis on ``state``).

    The sweep :func:`gibbs_dp_gaussian` runs (Neal 2000, Algorithm 3; module docstring):
    every point in order, the exact statistics, ``split_merge`` :func:`split_merge_move`
    per chain, then Escobar & West's update of ``alpha`` when ``alpha_prior = (a, b)``
    (Gamma shape, rate) is given.  ``keys`` has shape (C,).

    Returns
    -------
    state : GaussianGibbsState
    info : GibbsInfo
        Per chain ``(C,)``: the occupied clusters after the sweep, whether a point moved,
        and the split-merge moves accepted and proposed, as the spherical sampler's sweeps
        report.
    """
    out, accepted = _sweep(keys, Z, state, kappa0, nu0, alpha_prior, full=full,
                           split_merge=split_merge)
    C, n = out.labels.shape
    proposed = jnp.full(C, split_merge if n >= 2 else 0, jnp.int32)
    info = GibbsInfo(jnp.sum(out.counts > 0, axis=1, dtype=jnp.int32),
                     jnp.any(out.labels != state.labels, axis=1), accepted, proposed)
    return out, info
