"""Reference mixture models of the discriminative-clustering experiments (Kaski et al. 2005, §6.5, §7.2.1).

Kaski, Sinkkonen & Klami (2005) compare discriminative clustering with two
mixture models fitted by EM (and with plain k-means,
:func:`bayesclust.inference.hard.kmeans.kmeans`):

* **MoG** (:func:`mog_em`): a mixture of isotropic Gaussians for ``p(x)`` with one
  shared, fixed spread; the means and the mixing weights are learned.
* **MDA2** (:func:`mda2_em`; Hastie & Tibshirani 1996, Miller & Uyar 1997): each
  component emits both the features and the class,
  ``p(c, x) = sum_j pi_j N(x | m_j, s^2 I) psi_{j, c}``.

Both run a fixed number of EM iterations (the paper: 100) in one jit-compiled
``lax.scan`` with log-domain responsibilities
(:func:`~bayesclust.kernels.isotropic_gaussian_logpdf`,
:func:`~bayesclust.kernels.log_responsibilities`).  The learned centres define
the Voronoi cells by which the experiments cluster held-out points (docs/deviations.md#dc-heldout-cost).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import logsumexp

from ... import _validation as V
from ...kernels import (
    PRECISION,
    SegmentStats,
    class_counts,
    isotropic_gaussian_logpdf,
    log_responsibilities,
    weighted_means,
)
from ..hard.kmeans import kmeans_init

__all__ = ["mog_em", "MoGResult", "mda2_em", "MDA2Result"]


class MoGResult(NamedTuple):
    """Result of :func:`mog_em`.

    Attributes
    ----------
    centers : ndarray, shape (n_clusters, d)
        Component means.
    weights : ndarray, shape (n_clusters,)
        Mixing weights (sum to one).
    spread : float
        The fixed component standard deviation.
    log_likelihood : float
        ``sum_i log p(x_i)`` at the returned parameters.
    objective_trace : ndarray, shape (n_iter + 1,)
        The maximised objective, the log-likelihood ``sum_i log p(x_i)``, at the
        initial parameters and after every EM iteration; never decreases (up to
        rounding).
    n_iter : int
        EM iterations run (always ``max_iter``).
    """

    centers: np.ndarray
    weights: np.ndarray
    spread: float
    log_likelihood: float
    objective_trace: np.ndarray
    n_iter: int


class MDA2Result(NamedTuple):
    """Result of :func:`mda2_em`.

    Attributes
    ----------
    centers : ndarray, shape (n_clusters, d)
    weights : ndarray, shape (n_clusters,)
        Mixing weights ``pi_j``.
    psi : ndarray, shape (n_clusters, n_classes)
        Class distribution of every component (rows sum to one).
    spread : float
    log_likelihood : float
        ``sum_i log p(c_i, x_i)`` at the returned parameters.
    objective_trace : ndarray, shape (n_iter + 1,)
        The maximised objective, the log-likelihood ``sum_i log p(c_i, x_i)``, at
        the initial parameters and after every EM iteration; never decreases (up
        to rounding).
    n_iter : int
    """

    centers: np.ndarray
    weights: np.ndarray
    psi: np.ndarray
    spread: float
    log_likelihood: float
    objective_trace: np.ndarray
    n_iter: int


def _m_step_means(X, R, previous):
    """Responsibility-weighted means; a component with no mass keeps its mean."""
    stats = SegmentStats(jnp.sum(R, axis=0), jnp.matmul(R.T, X, precision=PRECISION))
    means = jnp.where(stats.weight[:, None] > 0, weighted_means(stats), previous)
    return means, stats.weight


def _log_weights(mass):
    # Components that lost all mass get weight 0 (log -inf); they stay empty.
    return jnp.log(mass / jnp.sum(mass))


@functools.partial(jax.jit, static_argnames=("max_iter",))
def _mog_run(X, means, sigma2, max_iter):
    K = means.shape[0]

    def step(carry, _):
        means, log_w = carry
        L = isotropic_gaussian_logpdf(X, means, sigma2)
        ll = jnp.sum(logsumexp(L + log_w[None, :], axis=1))
        R = jnp.exp(log_responsibilities(log_w, L))
        means, mass = _m_step_means(X, R, means)
        return (means, _log_weights(mass)), ll

    log_w0 = jnp.full(K, -jnp.log(K), X.dtype)
    (means, log_w), trace = lax.scan(step, (means, log_w0), None, length=max_iter)
    L = isotropic_gaussian_logpdf(X, means, sigma2)
    final = jnp.sum(logsumexp(L + log_w[None, :], axis=1))
    return means, jnp.exp(log_w), jnp.append(trace, final)


@functools.partial(jax.jit, static_argnames=("n_classes", "max_iter"))
def _mda2_run(X, classes, means, sigma2, n_classes, max_iter):
    K = means.shape[0]

    def log_lik(means, log_psi):
        # log N(x_i | m_j, s^2 I) + log psi_{j, c_i}, shape (n, K)
        return isotropic_gaussian_logpdf(X, means, sigma2) + log_psi[:, classes].T

    def step(carry, _):
        means, log_w, log_psi = carry
        L = log_lik(means, log_psi)
        ll = jnp.sum(logsumexp(L + log_w[None, :], axis=1))
        R = jnp.exp(log_responsibilities(log_w, L))
        new_means, mass = _m_step_means(X, R, means)
        counts = class_counts(R, classes, n_classes)  # (K, C) soft counts
        safe = jnp.where(mass > 0, mass, 1.0)[:, None]
        log_psi = jnp.where(mass[:, None] > 0, jnp.log(counts / safe), log_psi)
        return (new_means, _log_weights(mass), log_psi), ll

    log_w0 = jnp.full(K, -jnp.log(K), X.dtype)
    log_psi0 = jnp.full((K, n_classes), -jnp.log(n_classes), X.dtype)
    (means, log_w, log_psi), trace = lax.scan(step, (means, log_w0, log_psi0), None, length=max_iter)
    final = jnp.sum(logsumexp(log_lik(means, log_psi) + log_w[None, :], axis=1))
    return means, jnp.exp(log_w), jnp.exp(log_psi), jnp.append(trace, final)


def _prepare(rng_key, X, n_clusters, spread, max_iter, init):
    X = V.check_array(X, "X")
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    spread = V.check_positive(spread, "spread")
    max_iter = V.check_int(max_iter, "max_iter", minimum=1)
    mean = X.mean(0).astype(X.dtype)
    if not isinstance(init, str):
        init = kmeans_init(None, X, n_clusters, init=init) - mean  # validated, then centred
    centers0 = kmeans_init(rng_key, X - mean, n_clusters, init=init)
    Xj = jnp.asarray(X - mean)  # centred: protects the GEMM distances; float32 unless x64
    return X, Xj, mean, centers0.astype(Xj.dtype), jnp.asarray(spread**2, Xj.dtype), spread, max_iter


def mog_em(rng_key, X, n_clusters: int, spread, *, max_iter: int = 100, init="random") -> MoGResult:
    r"""Mixture of isotropic Gaussians with a shared fixed spread, fitted by EM.

    Maximises :math:`\sum_i \log \sum_j \pi_j N(x_i \mid m_j, s^2 I)` over the
    means :math:`m_j` and weights :math:`\pi_j`; the spread :math:`s` is fixed.

    Parameters
    ----------
    rng_key : jax.random key or int
        Key for the initial centres.
    X : array_like, shape (n, d)
    n_clusters : int
    spread : float
        Component **standard deviation** :math:`s` (> 0), shared and fixed.
    max_iter : int, default 100
        EM iterations (all are run; the paper uses 100).
    init : {"random", "k-means++"} or array_like of shape (n_clusters, d)
        ``"random"``: distinct random data points (the paper); equal initial weights.

    Returns
    -------
    MoGResult
        ``centers, weights, spread, log_likelihood, objective_trace, n_iter``.

    Notes
    -----
    E-step :math:`r_{ij} \propto \pi_j N(x_i \mid m_j, s^2 I)` in the log domain;
    M-step :math:`m_j = \sum_i r_{ij} x_i / \sum_i r_{ij}`,
    :math:`\pi_j = \sum_i r_{ij} / n`.  A component whose responsibilities
    underflow to zero keeps its mean and gets weight 0 (it stays empty; ours).
    Keeping the spread fixed is our reading (docs/deviations.md#dc-baselines) of "one shared
    spread, validated" in Kaski et al. (2005, §7.2.1).

    References
    ----------
    S. Kaski, J. Sinkkonen, A. Klami, "Discriminative clustering",
    Neurocomputing 69 (2005) 18-41, §7.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    >>> res = mog_em(0, X, 2, spread=0.5, init=X[[0, 2]])
    >>> res.centers.round(2).tolist(), res.weights.round(2).tolist()
    ([[0.1, 0.0], [5.1, 5.0]], [0.5, 0.5])
    """
    X, Xj, mean, C0, sigma2, spread, max_iter = _prepare(rng_key, X, n_clusters, spread, max_iter, init)
    means, weights, trace = _mog_run(Xj, C0, sigma2, max_iter)
    trace = np.asarray(trace)
    return MoGResult(
        centers=(np.asarray(means) + mean).astype(X.dtype),
        weights=np.asarray(weights),
        spread=spread,
        log_likelihood=float(trace[-1]),
        objective_trace=trace,
        n_iter=max_iter,
    )


def mda2_em(
    rng_key,
    X,
    classes,
    n_clusters: int,
    spread,
    *,
    n_classes: int | None = None,
    max_iter: int = 100,
    init="random",
) -> MDA2Result:
    r"""MDA2: a joint mixture of features and classes, fitted by EM.

    .. math::

        p(c, x) = \sum_j \pi_j \, N(x \mid m_j, s^2 I) \, \psi_{j, c}

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
        Class ``0..n_classes-1`` of every point.
    n_clusters : int
    spread : float
        Component **standard deviation** :math:`s` (> 0), shared and fixed.
    n_classes : int, optional
        Default ``classes.max() + 1``.
    max_iter : int, default 100
    init : {"random", "k-means++"} or array_like of shape (n_clusters, d)
        Initial means (default: distinct random data points); the weights and
        the class distributions start uniform (ours).

    Returns
    -------
    MDA2Result
        ``centers, weights, psi, spread, log_likelihood, objective_trace, n_iter``.

    Notes
    -----
    E-step :math:`r_{ij} \propto \pi_j N(x_i \mid m_j, s^2 I) \psi_{j, c_i}`;
    M-step: weighted means, :math:`\psi_{jc} \propto \sum_{i: c_i = c} r_{ij}`,
    :math:`\pi_j = \frac1n \sum_i r_{ij}`.  Maximum likelihood: a
    class a component never explains gets :math:`\psi_{jc} = 0`.  A component
    with no mass keeps its mean and class distribution and gets weight 0.
    Held-out points are clustered from ``x`` alone (Kaski et al. 2005, §7.2.1), e.g. by the
    Voronoi cells of ``centers``.

    References
    ----------
    T. Hastie, R. Tibshirani, "Discriminant analysis by Gaussian mixtures",
    JRSS B 58 (1996); D. J. Miller, H. S. Uyar, "A mixture of experts classifier
    with learning based on both labelled and unlabelled data", NIPS 9 (1997);
    Kaski et al. (2005), §6.5 and §7.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3]])
    >>> res = mda2_em(0, X, [0, 0, 1, 1], 2, spread=1.0, init=[[0.0], [0.3]])
    >>> bool(res.psi[0, 0] > 0.5 and res.psi[1, 1] > 0.5)
    True
    """
    X, Xj, mean, C0, sigma2, spread, max_iter = _prepare(rng_key, X, n_clusters, spread, max_iter, init)
    classes = V.check_labels(classes, "classes", n_samples=X.shape[0])
    if classes.min() < 0:
        raise ValueError(f"classes must be non-negative, got minimum {classes.min()}")
    if n_classes is None:
        n_classes = int(classes.max()) + 1
    n_classes = V.check_int(n_classes, "n_classes", minimum=1)
    if classes.max() >= n_classes:
        raise ValueError(f"classes must lie in [0, {n_classes}), got maximum {classes.max()}")
    means, weights, psi, trace = _mda2_run(
        Xj, jnp.asarray(classes, jnp.int32), C0, sigma2, n_classes, max_iter
    )
    trace = np.asarray(trace)
    return MDA2Result(
        centers=(np.asarray(means) + mean).astype(X.dtype),
        weights=np.asarray(weights),
        psi=np.asarray(psi),
        spread=spread,
        log_likelihood=float(trace[-1]),
        objective_trace=trace,
        n_iter=max_iter,
    )
