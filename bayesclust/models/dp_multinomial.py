r"""The DP mixture of multinomials on count rows, likelihood tempered by 1/tau (our extension).

Every object ``i`` has a row of counts :math:`r_i` (total :math:`n_i`) -- by default its
row of an ensemble's co-association -- and a cluster whose distribution :math:`\psi_j` the
row is drawn from (Hofmann & Puzicha 1998, §2.2, the asymmetric clustering model, the hard
one-sided version of the dyadic aspect model :mod:`bayesclust.models.dyadic_aspect`):

.. math::

    G \sim \mathrm{DP}(\alpha, \mathrm{Dir}(\beta)), \qquad \psi_{z_i} \sim G, \qquad
    p(r_i \mid \psi_{z_i}) \propto \mathrm{Mult}(r_i \mid n_i, \psi_{z_i})^{1/\tau},
    \qquad \alpha = e^{-\lambda / \tau}.

Its small-variance limit :math:`\tau \to 0` (Jiang, Kulis & Jordan 2012, §3) is KL-means
(:func:`bayesclust.inference.hard.kl_means.kl_means`); its Gibbs sampler is
:func:`bayesclust.inference.mixtures.multinomial_gibbs.gibbs_dp_multinomial`.  The program
below is the truncated stick-breaking form with the labels summed out (a
``numpyro.factor`` per row, in a plate), so that NUTS and SVI can fit it; the tempered
likelihood drops the multinomial coefficient, a constant of each row.

This module holds the NumPyro program only (no inference code).

References
----------
T. Hofmann and J. Puzicha, "Statistical models for co-occurrence data", MIT AI Memo 1625
(1998).  K. Jiang, B. Kulis and M. I. Jordan, "Small-variance asymptotics for exponential
family Dirichlet process mixture models", NIPS 2012.  H. Ishwaran and L. F. James (2001),
JASA 96, 161-173 (stick breaking).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import logsumexp

from .. import _validation as V
from ..kernels import stick_breaking

__all__ = ["dp_multinomial", "log_alpha_from_lam_tau"]


def log_alpha_from_lam_tau(lam: float, tau: float) -> float:
    r""":math:`\log \alpha = -\lambda / \tau`, the concentration under which the limit is KL-means.

    Examples
    --------
    >>> log_alpha_from_lam_tau(2.0, 0.5)
    -4.0
    """
    return -V.check_positive(lam, "lam") / V.check_positive(tau, "tau")


def dp_multinomial(counts, *, lam: float, tau: float, beta: float = 1.0, truncation: int = 20):
    r"""NumPyro program of the tempered DP mixture of multinomials (truncated stick breaking).

    Parameters
    ----------
    counts : array, shape (n, m)
        Non-negative count rows.
    lam : float
        Penalty of KL-means: :math:`\alpha = e^{-\lambda/\tau}`.
    tau : float
        Temperature (> 0); the likelihood is raised to :math:`1/\tau`.
    beta : float, default 1
        Symmetric Dirichlet parameter of the base measure.
    truncation : int, default 20
        Stick-breaking components ``T``.

    Sample sites
    ------------
    ``v`` (T - 1,) ``Beta(1, alpha)`` (plate ``"sticks"``); ``psi`` (T, m) ``Dir(beta)``
    (plate ``"clusters"``); factor ``"row_likelihood"`` (plate ``"rows"``, n): per row
    :math:`\log \sum_j w_j \exp(\tau^{-1} \sum_y r_{iy} \log \psi_{jy})`.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro.infer.util import log_density
    >>> R = np.array([[3.0, 1.0], [0.0, 2.0]])
    >>> params = {"v": np.array([0.5]), "psi": np.array([[0.75, 0.25], [0.5, 0.5]])}
    >>> lp, _ = log_density(dp_multinomial, (R,), dict(lam=1.0, tau=1.0, truncation=2), params)
    >>> bool(np.isfinite(lp))
    True
    """
    counts = jnp.asarray(V.check_kernel_array(counts, "counts", ndim=2, min_rows=1))
    if not V.traced(counts) and bool((counts < 0).any()):
        raise ValueError("counts must be non-negative")
    n, m = counts.shape
    T = V.check_int(truncation, "truncation", minimum=2)
    alpha = jnp.exp(log_alpha_from_lam_tau(lam, tau))
    with numpyro.plate("sticks", T - 1):
        v = numpyro.sample("v", dist.Beta(1.0, alpha))
    weights = stick_breaking(v)
    with numpyro.plate("clusters", T):
        psi = numpyro.sample("psi", dist.Dirichlet(beta * jnp.ones(m)))
    log_psi = jnp.log(jnp.clip(psi, jnp.finfo(psi.dtype).tiny))
    per_cluster = jnp.where(counts[:, None, :] > 0, counts[:, None, :] * log_psi[None], 0.0).sum(-1)
    with numpyro.plate("rows", n):
        numpyro.factor("row_likelihood", logsumexp(jnp.log(weights)[None, :] + per_cluster / tau, axis=1))
