r"""Discriminative clustering (DC) with Dirichlet-marginalised class distributions.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", Neurocomputing 69,
18-41, §3 and §5.  Primary data ``X`` are partitioned into the Voronoi
regions of prototypes :math:`m_1..m_K` (the cluster centres; "prototypes" is
Kaski et al.'s term); each region ``j`` has a class
distribution :math:`\psi_j \sim \mathrm{Dir}(n^0)` and the auxiliary class of
a point is :math:`c \sim \mathrm{Cat}(\psi_{j(x)})`.  Integrating the
:math:`\psi_j` out leaves the log posterior of the prototypes (flat prior)

.. math::

    \log p(m \mid D) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji})
                       - (1 + \lambda_{EQ}) \sum_j \log\Gamma(N^0 + N_j)
                       - E_{MoG} - \lambda_{VQ} E_{VQ} + \text{const}

(eqs. 9, 12, 14, 15): :math:`n_{ji}` counts class-``i`` points in region ``j``
-- hard counts for the exact model, soft counts under normalised-Gaussian
memberships of width ``smooth_std`` for the smoothed objective (eq. 10) that
gradient methods optimise.  As ``smooth_std -> 0`` the smoothed objective is the
exact one (off region boundaries): the hard model is its own limit.

* :func:`dc_objective` -- the objective as a plain JAX function (the optimisers
  and the NumPyro programs share it).
* :func:`dc_collapsed` -- NumPyro program with :math:`\psi` integrated out.
* :func:`dc_explicit` -- NumPyro program with :math:`\psi` explicit (a
  cross-check: marginalising it gives :func:`dc_collapsed` up to a constant).

The prototypes' prior is improper and flat (the paper's choice), so the programs
are for MAP / NUTS on the smoothed objective, not for prior predictive draws.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import logsumexp
from numpyro.distributions import constraints

from .. import _validation as V
from ..kernels import class_counts, polya_log_evidence, voronoi_memberships

__all__ = ["dc_objective", "dc_collapsed", "dc_explicit"]


def dc_objective(
    prototypes,
    X,
    classes,
    n_classes: int,
    smooth_std=None,
    *,
    n0=1.0,
    lam_eq=0.0,
    lam_mog=0.0,
    log_rho=None,
    lam_vq=0.0,
):
    r"""The (regularised) DC log posterior of the prototypes, a scalar (higher is better).

    .. math::

        F(m) = \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j
               \log\Gamma(N^0 + N_j)
               + \sum_x \log \sum_j \rho_j e^{-\lambda_{MoG} \|x - m_j\|^2}
               - \lambda_{VQ} \sum_j \sum_{x \in V_j} \|x - m_j\|^2

    (Kaski et al. 2005, eqs. 9/10, 12, 14, 15; the MoG term only when
    ``lam_mog > 0``, the VQ term always with hard Voronoi cells).

    Parameters
    ----------
    prototypes : array, shape (K, d)
    X : array, shape (n, d)
    classes : int array, shape (n,)
        Auxiliary class ``0..n_classes-1`` of every point.
    n_classes : int
        Static ``C``.
    smooth_std : float or None
        ``None``: exact (hard Voronoi) counts, eq. 9; else the smoothing width
        :math:`\sigma` of eq. 10 (a standard deviation, > 0).
    n0 : float or array, shape (C,)
        Dirichlet prior counts (the paper: 1).
    lam_eq, lam_mog, lam_vq : float
        Regularisers (>= 0).  ``lam_mog`` is :math:`1 / (2 \sigma_{MoG}^2)`.
    log_rho : array, shape (K,), optional
        Log mixture weights of the MoG term (default uniform).

    Returns
    -------
    scalar array
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    prototypes = V.check_kernel_array(prototypes, "prototypes", ndim=2, min_rows=1)
    if prototypes.shape[1] != X.shape[1]:
        raise ValueError(f"prototypes must have the {X.shape[1]} columns of X, got shape "
                         f"{tuple(prototypes.shape)}")
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_kernel_ids(classes, "classes", n_classes)
    V.check_rows_match(X, "X", classes, "classes")
    Y, sq = voronoi_memberships(X, prototypes, smooth_std)
    value = polya_log_evidence(class_counts(Y, classes, n_classes), n0, lam_eq)
    K = prototypes.shape[0]
    if lam_mog:
        lr = jnp.full(K, -jnp.log(K), X.dtype) if log_rho is None else log_rho
        value = value + jnp.sum(logsumexp(lr - lam_mog * sq, axis=1))
    if lam_vq:
        value = value - lam_vq * jnp.sum(jnp.min(sq, axis=1))
    return value


def _flat_prototypes(K: int, d: int):
    return numpyro.sample(
        "prototypes", dist.ImproperUniform(constraints.real_vector, (K,), (d,)))


def dc_collapsed(X, classes, n_clusters: int, n_classes: int, smooth_std=None, *, n0=1.0,
                 lam_eq=0.0, lam_mog=0.0, log_rho=None, lam_vq=0.0):
    r"""NumPyro program of DC with the class distributions integrated out (eqs. 8-15).

    ``prototypes ~ flat``; ``factor("dc", dc_objective(...))``.  With
    ``smooth_std=None`` the factor is piecewise constant in the prototypes
    (exact model, eq. 9: use simulated annealing); with ``smooth_std > 0`` it is
    the smoothed objective (eq. 10), differentiable, for MAP or NUTS.  The
    smoothed version is the paper's smoothing device, not a generative model.

    Parameters
    ----------
    X : array, shape (n, d)
    classes : int array, shape (n,)
    n_clusters, n_classes : int
        ``K`` and ``C`` (static).
    smooth_std, n0, lam_eq, lam_mog, log_rho, lam_vq
        As in :func:`dc_objective`.
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_kernel_ids(classes, "classes", n_classes)
    V.check_rows_match(X, "X", classes, "classes")
    m = _flat_prototypes(n_clusters, X.shape[1])
    numpyro.factor("dc", dc_objective(m, X, classes, n_classes, smooth_std, n0=n0, lam_eq=lam_eq,
                                      lam_mog=lam_mog, log_rho=log_rho, lam_vq=lam_vq))


def dc_explicit(X, classes, n_clusters: int, n_classes: int, smooth_std=None, *, n0=1.0):
    r"""NumPyro program of DC with explicit class distributions (eq. 1 with Dirichlet priors).

    ``prototypes ~ flat``, :math:`\psi_j \sim \mathrm{Dir}(n^0)`, and the (soft-)count
    likelihood :math:`\prod_x \prod_j \psi_{j, c(x)}^{y_j(x)}` -- with hard memberships
    exactly :math:`c \sim \mathrm{Cat}(\psi_{j(x)})`.  Integrating :math:`\psi` out
    (Dirichlet-multinomial conjugacy, valid for soft counts too) gives
    :func:`dc_collapsed` up to a constant.
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_kernel_ids(classes, "classes", n_classes)
    V.check_rows_match(X, "X", classes, "classes")
    m = _flat_prototypes(n_clusters, X.shape[1])
    with numpyro.plate("clusters", n_clusters):
        psi = numpyro.sample("psi", dist.Dirichlet(jnp.broadcast_to(jnp.asarray(n0, X.dtype),
                                                                    (n_classes,))))
    Y, _ = voronoi_memberships(X, m, smooth_std)
    numpyro.factor("classes", jnp.sum(class_counts(Y, classes, n_classes) * jnp.log(psi)))

