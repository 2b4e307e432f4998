"""The one mixture distribution the Gaussian-mixture programs share, and their data plate.

:class:`IsotropicGaussianMixture` is the marginal (assignment-free) likelihood of
the DP mixture (one weight vector for every point) and of the HDP mixture (one
weight vector per point, ``w_i = pi_j`` for a point of data set ``j``): the
weights' leading dimensions are the batch.  :func:`sample_points` is the last
block of both programs: the points, observed or drawn.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints

from .. import _validation as V
from ..kernels import isotropic_gaussian_logpdf

__all__ = ["IsotropicGaussianMixture", "log_weights", "sample_points"]


def log_weights(weights):
    """``log w`` with a floor at the dtype's ``tiny``.

    Stick-breaking weights of late sticks can underflow to 0 in float32; the
    floor keeps ``log`` finite and its gradient 0 instead of ``0 * inf = NaN``
    (a weight below ``tiny`` contributes ``exp(-87)`` relative mass at most).
    """
    return _log_weights(_check_weights(weights))


@jax.jit
def _log_weights(weights):
    return jnp.log(jnp.maximum(weights, jnp.finfo(weights.dtype).tiny))


def _check_weights(weights, name="weights"):
    """Mixture weights, shape (T,) or (n, T): finite and >= 0 (checked when concrete)."""
    weights = V.check_kernel_array(weights, name, ndim=(1, 2), min_rows=1)
    if not V.traced(weights) and bool(np.any(np.asarray(weights) < 0)):
        raise ValueError(f"{name} must be non-negative")
    return weights


class IsotropicGaussianMixture(dist.Distribution):
    """Mixture of isotropic Gaussians with the component marginalised out.

    .. math::

        \\log p(x_i \\mid w_i, \\mu, \\sigma) = \\log\\sum_k w_{ik}\\,
            N(x_i \\mid \\mu_k, \\sigma I)

    computed with :func:`bayesclust.kernels.isotropic_gaussian_logpdf` and a
    log-sum-exp, i.e. with the same numbers as the samplers' responsibilities
    (:func:`bayesclust.kernels.log_responsibilities`).

    Parameters
    ----------
    weights : array, shape (..., T)
        Mixture weights, a simplex per batch element.  Shape ``(T,)``: one
        mixture for every point (batch shape ``()``; inside ``plate("data", n)``
        it scores ``n`` points).  Shape ``(n, T)``: one weight vector per point
        (batch shape ``(n,)``).
    means : array, shape (T, d)
        Component means (shared by the batch).
    sigma2 : float or scalar array
        Component **variance** (not a standard deviation).

    Notes
    -----
    Event shape ``(d,)``.  ``sample`` draws the component of every batch
    element and then the point.
    """

    arg_constraints = {
        "weights": constraints.simplex,
        "means": constraints.real_matrix,
        "sigma2": constraints.positive,
    }
    support = constraints.real_vector

    def __init__(self, weights, means, sigma2, *, validate_args=None):
        weights = _check_weights(weights)
        means = V.check_kernel_array(means, "means", ndim=2, min_rows=1)
        self.weights = weights
        self.means = means
        self.sigma2 = sigma2
        super().__init__(
            batch_shape=jnp.shape(weights)[:-1],
            event_shape=(jnp.shape(means)[-1],),
            validate_args=validate_args,
        )

    def sample(self, key, sample_shape=()):
        shape = tuple(sample_shape) + self.batch_shape
        key_z, key_x = jax.random.split(key)
        z = jax.random.categorical(key_z, log_weights(self.weights), shape=shape)
        eps = jax.random.normal(key_x, shape + self.event_shape, self.means.dtype)
        return self.means[z] + jnp.sqrt(self.sigma2) * eps

    def component_log_prob(self, value):
        """``log w_ik + log N(x_i | mu_k, sigma2 I)``, shape ``value.shape[:-1] + (T,)``."""
        return _component_log_prob(self.weights, self.means, self.sigma2, value)

    def log_prob(self, value):
        return _mixture_log_prob(self.weights, self.means, self.sigma2, value)


# Jitted so that eager runs of a model (NumPyro's initialisation traces it op by
# op) compile one program instead of one per primitive.
@jax.jit
def _component_log_prob(weights, means, sigma2, value):
    T, d = means.shape
    flat = jnp.reshape(value, (-1, d))
    log_lik = jnp.reshape(isotropic_gaussian_logpdf(flat, means, sigma2), value.shape[:-1] + (T,))
    return log_lik + log_weights(weights)


@jax.jit
def _mixture_log_prob(weights, means, sigma2, value):
    return jax.scipy.special.logsumexp(_component_log_prob(weights, means, sigma2, value), axis=-1)


def sample_points(weights, means, sigma2, X, n):
    """The data plate of the DP and HDP mixture programs.

    With data, the ``n`` rows of ``X`` are observed under the marginal mixture
    (site ``x``, components summed out); without, every point's component ``z``
    and the point ``x`` are drawn (prior / predictive simulation).  Either way the
    deterministic site ``log_likelihood`` holds the marginal log likelihood of the
    points.

    Parameters
    ----------
    weights : array, shape (T,) or (n, T)
        Mixture weights (see :class:`IsotropicGaussianMixture`).
    means : array, shape (T, d)
    sigma2 : float or scalar array
        Component **variance**.
    X : array, shape (n, d), or None
    n : int
        Number of points.

    Returns
    -------
    array, shape (n, d)
        ``X``, or the drawn points.
    """
    if X is not None:
        X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    mixture = IsotropicGaussianMixture(weights, means, sigma2)
    if X is None:
        with numpyro.plate("data", n):
            z = numpyro.sample("z", dist.Categorical(logits=log_weights(weights)))
            x = numpyro.sample("x", dist.Normal(means[z], jnp.sqrt(sigma2)).to_event(1))
        numpyro.deterministic("log_likelihood", jnp.sum(mixture.log_prob(x)))
        return x
    numpyro.deterministic("log_likelihood", jnp.sum(mixture.log_prob(X)))
    with numpyro.plate("data", n):
        numpyro.sample("x", mixture, obs=X)
    return X
