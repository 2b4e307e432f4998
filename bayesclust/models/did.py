"""The dissimilarity increments distribution (DID) as a NumPyro distribution.

:class:`DID` is the law of the increment :math:`|d(x_i,x_j) - d(x_j,x_k)|` of a
nearest-neighbour triplet in a Gaussian cluster, parameterised by its mean
:math:`\\lambda` (Aidos & Fred 2012).  Its density and distribution function are
:func:`bayesclust.kernels.did_logpdf` and :func:`bayesclust.kernels.did_cdf`; the
exponential model of Fred & Leitao (2003) is numpyro's ``Exponential(1 / lam)``.
:func:`did_clusters` is the program of a partition's increments: one 2-DID (or d-DID) per
cluster with the scale-invariant prior ``p(lam) = 1/lam``, whose evidence the MDL description
length of the clustering algorithms approximates
(:func:`bayesclust.kernels.description_length`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln
from numpyro.distributions import constraints
from numpyro.distributions.util import promote_shapes

from .. import _validation as V
from ..kernels.did import check_did_args, did_cdf, did_chi_mean_abs_difference, did_logpdf

__all__ = ["DID", "did_clusters", "map_did", "class_mixture"]


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
        self.d = check_did_args(lam, d)
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


def did_clusters(w, labels, n_clusters: int, *, d: int = 2, lam_prior=None):
    r"""Increments of a partition: one DID per cluster, with a scale-invariant prior on its mean.

    .. math::

        p(\lambda_k) \propto 1/\lambda_k, \qquad
        w_i \mid \lambda \sim \mathrm{DID}(\lambda_{c_i}, d)

    (Aidos & Fred 2011, eq. 7: the prior of the SL-DID description length).  The improper
    prior is a flat prior on :math:`\log\lambda_k` (site ``log_lam``); ``lam`` is recorded as
    a deterministic site.  With :math:`\hat\lambda` the maximum-likelihood mean and
    :math:`m` increments, :func:`bayesclust.kernels.description_length` at
    :math:`\hat\lambda` equals :math:`-\log\int p(W\mid\lambda)\,\lambda^{-1}d\lambda`
    plus the constant :math:`\tfrac12(1 + \log(\pi/6))` (Wallace & Freeman's quantisation
    against Laplace's :math:`\sqrt{2\pi}`) up to :math:`O(1/m)`.

    Parameters
    ----------
    w : array_like, shape (m,)
        Increments (observed).
    labels : array_like of int, shape (m,)
        The cluster ``0..n_clusters-1`` of every increment.
    n_clusters : int
        Static.
    d : int, default 2
        The DID's dimension (static).
    lam_prior : numpyro Distribution, optional
        A proper prior on each ``lam`` instead of ``1/lam`` (batch shape ``()``).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import Predictive
    >>> w = np.array([0.5, 1.0, 1.5, 4.0, 5.0, 6.0])
    >>> draws = Predictive(did_clusters, {"log_lam": np.log([[1.0, 5.0]])})(
    ...     jax.random.PRNGKey(0), w=None, labels=np.repeat([0, 1], 3), n_clusters=2)
    >>> draws["w"].shape
    (1, 6)
    """
    # The plate size must be a positive Python int (numpyro asserts it, unhelpfully).
    n_clusters = V.check_int(n_clusters, "n_clusters", minimum=1)
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i", min_rows=1)
    V.check_kernel_ids(labels, "labels", n_clusters)
    labels = jnp.asarray(labels)
    if w is not None:
        w = V.check_kernel_array(w, "w", ndim=1)
        if w.shape[0] != labels.shape[0]:
            raise ValueError(f"w has length {w.shape[0]} but labels has {labels.shape[0]}")
    with numpyro.plate("clusters", n_clusters):
        if lam_prior is None:
            log_lam = numpyro.sample("log_lam", dist.ImproperUniform(constraints.real, (), ()))
            lam = numpyro.deterministic("lam", jnp.exp(log_lam))
        else:
            lam = numpyro.sample("lam", lam_prior)
    with numpyro.plate("increments", labels.shape[0]):
        numpyro.sample("w", DID(lam[labels], d), obs=w)


def map_did(X, y, w, n_classes: int, n_components: int):
    r"""MAP-DID's joint model: a Gaussian mixture per class and one DID per class on the increments.

    .. math::

        y_i \sim \mathrm{Cat}(\pi), \quad
        x_i \mid y_i = c \sim \sum_g \pi_{cg}\,\mathcal N(\mu_{cg}, \Sigma_{cg}), \quad
        w_i \mid y_i = c \sim \mathrm{DID}(\lambda_c, 2)

    with :math:`w_i` the increment of :math:`x_i` inside its class: the components of a class
    may differ in mean and covariance, the increments "harmonise" them into one structure
    (Aidos & Fred, MAP-DID).  Flat priors on the weights (on the simplex), the means and the
    Cholesky factors, and :math:`p(\lambda_c) \propto 1/\lambda_c` (flat in ``log_lam``).
    Unused components carry weight 0.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of int, shape (n,)
        Classes ``0..n_classes-1`` (observed).
    w : array_like, shape (n,)
        Each point's increment inside its class (:func:`bayesclust.graphs.increments` per
        class, or :func:`bayesclust.graphs.increments_to` for new points).
    n_classes, n_components : int
        Static; ``n_components`` is the largest number of components of a class.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro.infer.util import log_density
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0], [6.0, 5.0]])
    >>> params = {"class_weights": np.array([0.5, 0.5]),
    ...           "component_weights": np.ones((2, 1)),
    ...           "means": np.array([[[0.5, 0.0]], [[5.5, 5.0]]]),
    ...           "scale_tril": np.tile(np.eye(2), (2, 1, 1, 1)),
    ...           "log_lam": np.zeros(2)}
    >>> lp, _ = log_density(map_did, (X, np.array([0, 0, 1, 1]), np.ones(4), 2, 1), {}, params)
    >>> bool(np.isfinite(lp))
    True
    """
    n_classes = V.check_int(n_classes, "n_classes", minimum=1)
    n_components = V.check_int(n_components, "n_components", minimum=1)
    X = jnp.asarray(V.check_kernel_array(X, "X", ndim=2, min_rows=1))
    n, d = X.shape
    y = V.check_kernel_array(y, "y", ndim=1, kind="i")
    V.check_kernel_ids(y, "y", n_classes)
    w = V.check_kernel_array(w, "w", ndim=1)
    if y.shape[0] != n or w.shape[0] != n:
        raise ValueError(f"y and w must have X's {n} rows, got {y.shape[0]} and {w.shape[0]}")
    y = jnp.asarray(y)
    simplex = constraints.simplex
    class_weights = numpyro.sample("class_weights", dist.ImproperUniform(simplex, (), (n_classes,)))
    component_weights = numpyro.sample(
        "component_weights", dist.ImproperUniform(simplex, (n_classes,), (n_components,)))
    means = numpyro.sample(
        "means", dist.ImproperUniform(constraints.real_vector, (n_classes, n_components), (d,)))
    scale_tril = numpyro.sample(
        "scale_tril", dist.ImproperUniform(constraints.lower_cholesky, (n_classes, n_components), (d, d)))
    with numpyro.plate("classes", n_classes):
        log_lam = numpyro.sample("log_lam", dist.ImproperUniform(constraints.real, (), ()))
    lam = numpyro.deterministic("lam", jnp.exp(log_lam))
    with numpyro.plate("data", n):
        numpyro.sample("y", dist.Categorical(probs=class_weights), obs=y)
        numpyro.sample("x", class_mixture(component_weights[y], means[y], scale_tril[y]), obs=X)
        numpyro.sample("w", DID(lam[y], 2), obs=w)


def class_mixture(weights, means, scale_tril):
    """The Gaussian mixture of a class: ``MixtureSameFamily`` over full-covariance normals.

    Parameters
    ----------
    weights : array, shape (..., g)
        Mixing weights (zeros allowed: unused components).
    means : array, shape (..., g, d)
    scale_tril : array, shape (..., g, d, d)
        Cholesky factors of the covariances.
    """
    return dist.MixtureSameFamily(dist.Categorical(probs=weights),
                                  dist.MultivariateNormal(means, scale_tril=scale_tril))
