"""The dissimilarity increments distribution (DID) as a NumPyro distribution.

:class:`DID` is the law of the increment :math:`|d(x_i,x_j) - d(x_j,x_k)|` of a
nearest-neighbour triplet in a Gaussian cluster, parameterised by its mean
:math:`\\lambda` (Aidos & Fred 2012).  Its density and distribution function are
:func:`bayesclust.kernels.did_logpdf` and :func:`bayesclust.kernels.did_cdf`; the
exponential model of Fred & Leitao (2003) is numpyro's ``Exponential(1 / lam)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro.distributions as dist
from jax.scipy.special import gammaln
from numpyro.distributions import constraints
from numpyro.distributions.util import promote_shapes

from ..kernels import _check_did_args, did_cdf, did_chi_mean_abs_difference, did_logpdf

__all__ = ["DID"]


class DID(dist.Distribution):
    r"""Dissimilarity increments distribution with mean ``lam`` in dimension ``d``.

    :math:`W = |D_1 - D_2|` with :math:`D_1, D_2` independent :math:`s\,\chi_d`,
    :math:`s = \lambda / E|\chi_d - \chi_d'|`, so that :math:`E[W] = \lambda`: for ``d = 2``
    the 2-DID (two Rayleigh distances), for ``d > 2`` the d-DID of Aidos & Fred (2012,
    eqs. 7-10).  ``log_prob`` is :func:`bayesclust.kernels.did_logpdf`.

    Parameters
    ----------
    lam : array_like
        Mean increment :math:`\lambda > 0`; its shape is the batch shape.
    d : int, default 2
        Dimension of the data (static), ``>= 1``.
    validate_args : bool, optional

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for
    d-dimensional data: application in partitional clustering", Pattern Recognition 45
    (2012), §2.

    Examples
    --------
    >>> import jax
    >>> w = DID(1.5, d=3).sample(jax.random.PRNGKey(0), (4,))
    >>> w.shape, bool((w >= 0).all())
    ((4,), True)
    """

    arg_constraints = {"lam": constraints.positive}
    support = constraints.nonnegative
    reparametrized_params = ["lam"]
    pytree_data_fields = ("lam",)
    pytree_aux_fields = ("d",)

    def __init__(self, lam, d: int = 2, *, validate_args=None):
        self.d = _check_did_args(lam, d)
        (self.lam,) = promote_shapes(lam)
        super().__init__(batch_shape=jnp.shape(self.lam), validate_args=validate_args)

    @property
    def _scale(self):
        return self.lam / did_chi_mean_abs_difference(self.d)

    def sample(self, key, sample_shape=()):
        """``|s chi_d - s chi_d'|`` with ``chi_d = sqrt(2 Gamma(d/2, 1))``, shape ``sample_shape + batch_shape``."""
        shape = (2,) + tuple(sample_shape) + self.batch_shape
        dtype = jnp.result_type(self.lam, float)
        chi = jnp.sqrt(2.0 * jax.random.gamma(key, self.d / 2.0, shape, dtype=dtype))
        return self._scale * jnp.abs(chi[0] - chi[1])

    def log_prob(self, value):
        return did_logpdf(value, self.lam, self.d)

    def cdf(self, value):
        return did_cdf(value, self.lam, self.d)

    @property
    def mean(self):
        return jnp.broadcast_to(self.lam, self.batch_shape)

    @property
    def variance(self):
        """``E[W^2] - lam^2 = 2 s^2 Var(chi_d) - lam^2``, ``Var(chi_d) = d - 2 (Gamma((d+1)/2) / Gamma(d/2))^2``."""
        d = self.d
        mu = jnp.sqrt(2.0) * jnp.exp(gammaln((d + 1) / 2.0) - gammaln(d / 2.0))
        return jnp.broadcast_to(2.0 * self._scale**2 * (d - mu**2) - self.lam**2,
                                self.batch_shape)
