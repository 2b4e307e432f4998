"""Mixture-model terms shared by the NumPyro programs and the samplers: Gaussian
log-densities (isotropic, full covariance), rank-one Cholesky updates,
responsibilities, inverse-cdf categorical draws, stick breaking, the CRP prior.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from .nearest import PRECISION, assigned_squared_distances, squared_distances, sum_rows

__all__ = [
    "isotropic_gaussian_logpdf",
    "gaussian_logpdf_full",
    "cholesky_rank_one",
    "log_responsibilities",
    "categorical_inverse_cdf",
    "complete_data_log_likelihood",
    "stick_breaking",
    "crp_log_prior",
]

def isotropic_gaussian_logpdf(X: jax.Array, means: jax.Array, sigma2) -> jax.Array:
    """``log N(x_i | mu_k, sigma2 I)`` for every point and component.

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (k, d)
    sigma2 : float or array broadcastable to (n, k)
        Component **variance**.

    Returns
    -------
    array, shape (n, k)
        ``-d/2 log(2 pi sigma2) - |x - mu|^2 / (2 sigma2)``, with the squared
        distances of :func:`squared_distances` (the same numbers DP-means uses).
    """
    X = check_kernel_array(X, "X", ndim=2)
    means = check_kernel_array(means, "means", ndim=2)
    check_kernel_points(X=X, means=means)
    sigma2 = check_kernel_positive(sigma2, "sigma2")
    d = X.shape[-1]
    return -0.5 * d * jnp.log(2.0 * jnp.pi * sigma2) - squared_distances(X, means) / (2.0 * sigma2)

from .._validation import (
    check_kernel_array,
    check_kernel_ids,
    check_kernel_points,
    check_kernel_positive,
)


def gaussian_logpdf_full(X: jax.Array, means: jax.Array, chols: jax.Array) -> jax.Array:
    r"""``log N(x_i | mu_k, Sigma_k)`` for every point and full-covariance component.

    .. math::

        \log N(x \mid \mu, \Sigma) = -\tfrac{d}{2} \log(2\pi) - \sum_j \log L_{jj}
            - \tfrac12 \| L^{-1} (x - \mu) \|^2, \qquad \Sigma = L L^\top

    The differences ``x - mu`` are formed first and then whitened by ``L^{-1}``
    (never ``|x|^2 - 2 x.mu + |mu|^2``), so a tight component far from the
    origin loses no digits.  ``L^{-1}`` comes from a ``d x d`` triangular solve
    and is applied as one matrix product: on XLA:CPU a triangular solve against
    the ``n`` differences is many times slower (BENCHMARKS.md).

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (k, d)
    chols : array, shape (k, d, d)
        Lower-triangular Cholesky factors ``L_k`` of the covariances (positive
        diagonal; the upper triangle is ignored).

    Returns
    -------
    array, shape (n, k)

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> import numpy as np
    >>> X = jnp.array([[0.0, 0.0], [1.0, 2.0]])
    >>> L = jnp.array([[[2.0, 0.0], [0.0, 1.0]]])  # Sigma = diag(4, 1)
    >>> np.asarray(gaussian_logpdf_full(X, jnp.zeros((1, 2)), L), float).round(3).tolist()
    [[-2.531], [-4.656]]
    """
    X = check_kernel_array(X, "X", ndim=2)
    means = check_kernel_array(means, "means", ndim=2, min_rows=1)
    chols = check_kernel_array(chols, "chols", ndim=3)
    d = X.shape[-1]
    if means.shape[1] != d:
        raise ValueError(f"means must have d = {d} columns (those of X), got shape {tuple(means.shape)}")
    if tuple(chols.shape) != (means.shape[0], d, d):
        raise ValueError(f"chols must have shape (k, d, d) = ({means.shape[0]}, {d}, {d}) (one factor "
                         f"per row of means), got {tuple(chols.shape)}")

    eye = jnp.eye(d, dtype=X.dtype)

    def one(mean, chol):
        inv = jax.scipy.linalg.solve_triangular(jnp.tril(chol), eye, lower=True)
        z = jnp.matmul(X - mean, inv.T, precision=PRECISION)  # (n, d)
        half_logdet = jnp.sum(jnp.log(jnp.diagonal(chol)))
        return -0.5 * (d * jnp.log(2.0 * jnp.pi) + jnp.sum(z * z, axis=1)) - half_logdet

    return jax.vmap(one, out_axes=1)(means, chols)


def categorical_inverse_cdf(log_w: jax.Array, u: jax.Array) -> jax.Array:
    """Indices drawn with probabilities ``softmax(log_w)`` along the last axis.

    Parameters
    ----------
    log_w : array, shape (..., T)
        Unnormalised log-probabilities (``-inf``: never drawn).
    u : array, shape (...)
        Uniforms on ``(0, 1]``, one per draw.

    Returns
    -------
    array of int32, shape (...)
        The smallest ``k`` with ``cdf_k >= u cdf_T``.

    Notes
    -----
    Inverse-CDF sampling needs one uniform per draw (Gumbel-max needs one per
    category, and on a CPU the random bits cost more than the rest), and
    ``u > 0`` means a zero-probability entry is never chosen.  For a batch of
    rows the cumulative sums are one product with a triangular matrix of ones
    (XLA:CPU's cumsum is a reduce-window, several times slower at that shape);
    the result is clamped to ``T - 1`` against the rounding of that product.
    """
    log_w = check_kernel_array(log_w, "log_w", ndim=(1, 2), finite=False, min_rows=1)
    u = check_kernel_array(u, "u", ndim=(0, 1))
    T = log_w.shape[-1]
    p = jnp.exp(log_w - jnp.max(log_w, axis=-1, keepdims=True))
    if log_w.ndim == 1:
        cdf = jnp.cumsum(p)
    else:
        tri = (jnp.arange(T)[:, None] <= jnp.arange(T)[None, :]).astype(p.dtype)
        cdf = jnp.matmul(p, tri, precision=PRECISION)
    below = jnp.sum(cdf < jnp.asarray(u)[..., None] * cdf[..., -1:], axis=-1)
    return jnp.minimum(below, T - 1).astype(jnp.int32)


def log_responsibilities(log_weights: jax.Array, log_lik: jax.Array) -> jax.Array:
    """Normalised ``log p(z_i = k | x_i)`` from mixture log-weights and log-likelihoods.

    Parameters
    ----------
    log_weights : array, shape (k,)
    log_lik : array, shape (n, k)

    Returns
    -------
    array, shape (n, k)
        ``log w_k + log p(x_i | k) - logsumexp_k(...)`` (rows sum to one in
        probability; ``-inf`` weights stay ``-inf``).
    """
    log_weights = check_kernel_array(log_weights, "log_weights", ndim=(1, 2), finite=False, min_rows=1)
    log_lik = check_kernel_array(log_lik, "log_lik", ndim=2, finite=False)
    joint = log_lik + log_weights[None, :]
    return joint - jax.scipy.special.logsumexp(joint, axis=1, keepdims=True)


def complete_data_log_likelihood(
    X: jax.Array, means: jax.Array, labels: jax.Array, sigma2, *, n_valid=None
) -> jax.Array:
    """Log-likelihood of the data given the assignments and the means, a scalar.

    .. math::

        \\log p(X \\mid z, \\mu, \\sigma^2) = \\sum_i \\log N(x_i \\mid \\mu_{z_i}, \\sigma^2 I)
            = -\\tfrac{n d}{2} \\log(2 \\pi \\sigma^2)
              - \\frac{1}{2 \\sigma^2} \\sum_i |x_i - \\mu_{z_i}|^2

    The quantity is defined for any sampler that yields labels and component means
    (the Gibbs samplers' ``means`` draws, or NUTS draws of a stick-breaking program with
    labels drawn from their conditional), so it compares samplers on the same footing;
    the squared distances are :func:`assigned_squared_distances` (exact, ``O(n d)``).

    Parameters
    ----------
    X : array, shape (n, d)
    means : array, shape (K, d)
        Component means, indexed by ``labels``.
    labels : int array, shape (n,)
        Values in ``[0, K)``.
    sigma2 : float or scalar array
        Component **variance**.
    n_valid : int or scalar int array, optional
        Only the first ``n_valid`` rows are data (``n`` in the formula); the rows past
        it pad ``X`` to a shape bucket (:func:`~bayesclust.kernels.padded_rows`), their
        labels are ignored.  The squared distances are then summed by
        :func:`~bayesclust.kernels.sum_rows`, so the value does not depend on the
        padding.

    Returns
    -------
    scalar array

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> X = jnp.array([[0.0], [2.0]])
    >>> ll = complete_data_log_likelihood(X, jnp.array([[0.0], [1.0]]), jnp.array([0, 1]), 1.0)
    >>> round(float(ll), 4)  # -log(2 pi) - 1/2
    -2.3379
    """
    X = check_kernel_array(X, "X", ndim=2, min_rows=1)
    means = check_kernel_array(means, "means", ndim=2)
    check_kernel_points(X=X, means=means)
    sigma2 = check_kernel_positive(sigma2, "sigma2")
    labels = check_kernel_array(labels, "labels", ndim=1, kind="i")
    n, d = X.shape
    if n_valid is not None:
        valid = jnp.arange(n) < n_valid
        labels = jnp.where(valid, labels, 0)
    check_kernel_ids(labels, "labels", means.shape[0])
    if n_valid is None:
        sq = jnp.sum(assigned_squared_distances(X, means, labels))
    else:
        n = n_valid
        sq = sum_rows(jnp.where(valid, assigned_squared_distances(X, means, labels), 0.0))
    return -0.5 * n * d * jnp.log(2.0 * jnp.pi * sigma2) - sq / (2.0 * sigma2)


def stick_breaking(v: jax.Array) -> jax.Array:
    """Mixture weights from stick-breaking fractions (truncated: the last stick is the rest).

    ``w_k = v_k prod_{j<k} (1 - v_j)`` for ``k < T`` and ``w_T = prod_{j<T} (1 - v_j)``.

    Parameters
    ----------
    v : array, shape (..., T - 1)
        Fractions in (0, 1), e.g. ``Beta(1, alpha)`` draws.

    Returns
    -------
    array, shape (..., T)
        Non-negative weights summing to one.
    """
    v = check_kernel_array(v, "v", ndim=(1, 2))
    log_rest = jnp.cumsum(jnp.log1p(-v), axis=-1)
    rest_before = jnp.exp(jnp.concatenate([jnp.zeros_like(v[..., :1]), log_rest], axis=-1))
    return rest_before * jnp.concatenate([v, jnp.ones_like(v[..., :1])], axis=-1)


def crp_log_prior(counts: jax.Array, alpha) -> jax.Array:
    """Log-probability of a partition under the Chinese restaurant process.

    ``log p = k log(alpha) + sum_c log Gamma(n_c) + log Gamma(alpha) - log Gamma(alpha + n)``
    over the non-empty clusters (``counts > 0``), the exchangeable partition
    probability function of the Dirichlet process.

    Parameters
    ----------
    counts : array, shape (K,)
        Cluster sizes (zeros are empty slots).
    alpha : float
        Concentration (> 0).
    """
    counts = check_kernel_array(counts, "counts", ndim=(1, 2))
    occupied = counts > 0
    n = jnp.sum(counts)
    return (
        jnp.sum(occupied) * jnp.log(alpha)
        + jnp.sum(jnp.where(occupied, gammaln(jnp.where(occupied, counts, 1.0)), 0.0))
        + gammaln(alpha)
        - gammaln(alpha + n)
    )


def cholesky_rank_one(L: jax.Array, v: jax.Array, sign: float = 1.0) -> jax.Array:
    r"""Rank-one update (``sign = +1``) or downdate (``-1``) of a Cholesky factor.

    Given lower-triangular ``L`` with :math:`A = L L^\top`, returns the lower-triangular
    factor of :math:`A + \mathrm{sign}\, v v^\top` in :math:`O(d^2)` operations, by the
    column sweep of Golub & Van Loan (2013, §6.5.4) (Givens rotations for an update,
    hyperbolic rotations for a downdate).  The loop over the ``d`` columns is unrolled
    (``d`` is static) and every column is a masked vector operation, so the function
    batches under ``vmap`` without gathers.  A downdate whose result is not positive
    definite gives NaN (the caller must know that it is).

    Parameters
    ----------
    L : array, shape (d, d)
        Lower-triangular with a positive diagonal.
    v : array, shape (d,)
    sign : float
        ``+1`` or ``-1`` (may be traced).

    Returns
    -------
    array, shape (d, d)

    References
    ----------
    G. H. Golub and C. F. Van Loan (2013), Matrix Computations, 4th ed., §6.5.4.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[4.0, 2.0], [2.0, 3.0]]); v = np.array([1.0, 0.5])
    >>> L1 = cholesky_rank_one(np.linalg.cholesky(A), v, 1.0)
    >>> bool(np.allclose(L1, np.linalg.cholesky(A + np.outer(v, v)), atol=1e-6))
    True
    """
    L = check_kernel_array(L, "L", ndim=2, min_rows=1)
    v = check_kernel_array(v, "v", ndim=1)
    if L.shape[0] != L.shape[1] or v.shape[0] != L.shape[0]:
        raise ValueError(f"L must be square (d, d) and v of length d, got shapes "
                         f"{tuple(L.shape)} and {tuple(v.shape)}")
    L = jnp.asarray(L)
    v = jnp.asarray(v, L.dtype)
    d = L.shape[-1]
    rows = jnp.arange(d)
    for k in range(d):
        lkk = L[k, k]
        vk = v[k]
        r = jnp.sqrt(lkk * lkk + sign * vk * vk)
        c = r / lkk
        s = vk / lkk
        below = rows > k
        col = jnp.where(below, (L[:, k] + sign * s * v) / c, L[:, k])
        col = jnp.where(rows == k, r, col)
        v = jnp.where(below, c * v - s * col, v)
        L = L.at[:, k].set(col)
    return L
