r"""DP mixture of Gaussians with per-cluster diagonal or full covariances (NumPyro program).

The generative model whose partition posterior the collapsed Gibbs sampler
:func:`bayesclust.gibbs_dp_gaussian` targets, written with a truncated
stick-breaking prior (Ishwaran & James 2001) so that NumPyro can run it:

.. math::

    v_k \sim \mathrm{Beta}(1, \alpha),\ w = \mathrm{stick\_breaking}(v), \qquad
    z_i \sim \mathrm{Cat}(w), \qquad x_i \mid z_i = k \sim N(\mu_k, \Sigma_k),

with, per component, ``covariance_type="full"``: :math:`\Sigma_k \sim \mathrm{IW}(\nu_0,
S_0)`, :math:`\mu_k \mid \Sigma_k \sim N(m_0, \Sigma_k / \kappa_0)` (the
Normal-inverse-Wishart; Murphy 2007, §9; Gelman et al. 2013, §3.6), and
``covariance_type="diag"``: per dimension a precision :math:`\lambda_{kj} \sim
\mathrm{Gamma}((\nu_0 - d + 1)/2, S_{0,jj}/2)` and :math:`\mu_{kj} \mid \lambda_{kj} \sim N(m_{0j},
1/(\kappa_0 \lambda_{kj}))` (Murphy 2007, §8).  As the truncation ``T`` grows its
partition law tends to the CRP form the Gibbs sampler uses.

The inverse-Wishart draw is written through its Bartlett decomposition: the
precision :math:`\Sigma^{-1} \sim \mathrm{Wishart}(\nu_0, S_0^{-1})` is :math:`A A^\top`
with :math:`A = L_W B`, :math:`L_W` the Cholesky factor of :math:`S_0^{-1}`, ``B`` lower
triangular with :math:`B_{jj}^2 \sim \chi^2_{\nu_0 - j + 1}` (``j = 1..d``) and
standard-normal entries below the diagonal (Bartlett 1933).

This module holds NumPyro programs only.

References
----------
K. P. Murphy (2007), Conjugate Bayesian analysis of the Gaussian distribution, §8-9.
H. Ishwaran and L. F. James (2001), JASA 96, 161-173.  M. S. Bartlett (1933), Proc. Roy.
Soc. Edinburgh 53, 260-283.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from .. import _validation as V
from ..kernels import stick_breaking

__all__ = ["dp_gaussian_mixture"]


def dp_gaussian_mixture(X=None, *, covariance_type="full", prior=None, alpha=1.0, truncation=20,
                        n=None):
    r"""Truncated stick-breaking DP mixture with NIW (``"full"``) or Normal-Gamma (``"diag"``) components.

    Parameters
    ----------
    X : array, shape (n, d), optional
        Observed data; ``None`` runs the model generatively (then ``n`` is needed).
    covariance_type : {"full", "diag"}
    prior : GaussianClusterPrior
        ``(mean (d,), kappa, dof, scale (d, d) or (d,))``, as
        :class:`bayesclust.GaussianClusterPrior` (required: it fixes ``d``).
    alpha : float
        DP concentration.
    truncation : int
        Number of components ``T`` (``T - 1`` sticks).
    n : int, optional
        Number of points in generative mode.

    Sample sites
    ------------
    ``v`` (T-1,), ``precision_chol`` (T, d, d) or ``precision`` (T, d), ``means`` (T, d),
    ``z`` (n,), ``x`` (n, d).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import Predictive
    >>> from bayesclust.inference.mixtures.gibbs_gaussian import GaussianClusterPrior
    >>> p = GaussianClusterPrior(np.zeros(2), 0.5, 4.0, np.eye(2))
    >>> draws = Predictive(dp_gaussian_mixture, num_samples=3)(jax.random.PRNGKey(0), prior=p, n=5)
    >>> draws["x"].shape, draws["means"].shape
    ((3, 5, 2), (3, 20, 2))
    """
    if covariance_type not in ("full", "diag"):
        raise ValueError(f"covariance_type must be 'full' or 'diag', got {covariance_type!r}")
    if prior is None:
        raise ValueError("prior must be given (a GaussianClusterPrior)")
    m0 = jnp.asarray(prior.mean)
    d = m0.shape[0]
    kappa0, nu0 = prior.kappa, prior.dof
    S0 = jnp.asarray(prior.scale)
    if S0.ndim == 1:
        S0 = jnp.diag(S0)
    if X is not None:
        X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
        n = X.shape[0]
    elif n is None:
        raise ValueError("X is None: pass n (the number of points) to run the program generatively")
    T = truncation
    v = numpyro.sample("v", dist.Beta(jnp.ones(T - 1), alpha * jnp.ones(T - 1)))
    w = stick_breaking(v)
    with numpyro.plate("components", T):
        if covariance_type == "full":
            LW = jnp.linalg.cholesky(jnp.linalg.inv(S0))
            chi2 = numpyro.sample("bartlett_chi2", dist.Chi2(nu0 - jnp.arange(d)).to_event(1))
            off = numpyro.sample("bartlett_normal", dist.Normal(jnp.zeros((d, d)), 1.0).to_event(2))
            B = jnp.tril(off, -1) + jnp.eye(d) * jnp.sqrt(chi2)[..., None, :]
            A = numpyro.deterministic("precision_chol", LW @ B)  # precision = A A^T
            # mu | Sigma ~ N(m0, Sigma / kappa0): precision kappa0 A A^T.
            means = numpyro.sample("means", dist.MultivariateNormal(
                m0, precision_matrix=kappa0 * A @ jnp.swapaxes(A, -1, -2)))
        else:
            lam = numpyro.sample("precision", dist.Gamma(0.5 * (nu0 - d + 1), 0.5 * jnp.diag(S0))
                                  .to_event(1))
            means = numpyro.sample("means", dist.Normal(m0, 1.0 / jnp.sqrt(kappa0 * lam)).to_event(1))
    with numpyro.plate("data", n):
        z = numpyro.sample("z", dist.Categorical(w))
        if covariance_type == "full":
            x_dist = dist.MultivariateNormal(means[z], precision_matrix=(A @ jnp.swapaxes(A, -1, -2))[z])
        else:
            x_dist = dist.Normal(means[z], 1.0 / jnp.sqrt(lam[z])).to_event(1)
        numpyro.sample("x", x_dist, obs=X)
