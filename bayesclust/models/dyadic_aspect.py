r"""The dyadic aspect model of a co-association matrix (PEnCA) as a NumPyro program.

Lourenco, Fred & Figueiredo (2011) model the multiset of ordered pairs of distinct
objects that share a cluster in some partition of an ensemble:

.. math::

    p \sim \mathrm{Dir}(\alpha_p \mathbf 1_L), \qquad
    B_r \sim \mathrm{Dir}(\alpha_B \mathbf 1_n), \qquad
    P(y, z) = \sum_{r=1}^L p_r B_{r,y} B_{r,z},

and every ordered co-occurring pair ``(y, z)`` is an i.i.d. draw from :math:`P`.  The pairs
enter through their counts :math:`C_{yz}`: the likelihood is the weighted log-likelihood
:math:`\sum_{y \ne z} C_{yz} \log P(y,z)`, added with ``numpyro.factor`` over the stored
upper-triangle pairs (twice, for both orders), never as a list of pairs.

The Dirichlet priors are ours (not in the paper: docs/deviations.md#penca-dirichlet-priors); with ``alpha_p = alpha_B = 1``
the MAP is the paper's maximum-likelihood EM (:func:`bayesclust.inference.consensus.aspect_em.aspect_em`),
and other values give its MAP-EM.  NUTS is practical only for small ``n`` (B has
``L (n - 1)`` free parameters); use SVI otherwise.

This module holds the NumPyro program only (no inference code).

References
----------
A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for evidence
accumulation clustering", SIMBAD 2011.
T. Hofmann and J. Puzicha, "Statistical models for co-occurrence data", MIT AI Memo 1625
(1998).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from .. import _validation as V

__all__ = ["dyadic_aspect", "pair_log_likelihood"]


def pair_log_likelihood(p, B, rows, cols, counts):
    r"""Weighted log-likelihood :math:`2\sum_{y<z} C_{yz}\log\sum_r p_rB_{r,y}B_{r,z}` (JAX).

    Parameters
    ----------
    p : array, shape (L,)
    B : array, shape (L, n)
    rows, cols : int arrays, shape (m,)
        Upper-triangle pairs ``y < z`` with a positive count.
    counts : array, shape (m,)

    Returns
    -------
    scalar array
        Both orders of every pair (the multiset :math:`\mathcal S` holds ``(y, z)`` and
        ``(z, y)``); pairs with count 0 contribute 0.
    """
    p = V.check_kernel_array(p, "p", ndim=1, min_rows=1)
    B = V.check_kernel_array(B, "B", ndim=2)
    if B.shape[0] != p.shape[0]:
        raise ValueError(f"B must have one row per aspect of p ({p.shape[0]}), got shape "
                         f"{tuple(B.shape)}")
    rows, cols, counts = V.check_pair_arrays(rows, cols, counts, "counts", n_objects=B.shape[1])
    P = jnp.einsum("r,rm,rm->m", p, B[:, rows], B[:, cols])
    return 2.0 * jnp.sum(jnp.where(counts > 0, counts * jnp.log(jnp.where(counts > 0, P, 1.0)), 0.0))


def dyadic_aspect(rows, cols, counts, n_objects: int, n_aspects: int, *, alpha_p: float = 1.0, alpha_B: float = 1.0):
    r"""NumPyro program of the dyadic aspect model with Dirichlet priors.

    Parameters
    ----------
    rows, cols : int arrays, shape (m,)
        Stored pairs ``y < z`` of the co-association count matrix (e.g. from
        :func:`bayesclust.inference.consensus.aspect_em.coassociation_pairs`).
    counts : array, shape (m,)
        :math:`C_{yz}`, the number of partitions in which ``y`` and ``z`` share a cluster.
    n_objects : int
        ``n``.
    n_aspects : int
        ``L >= 1``.
    alpha_p, alpha_B : float, default 1
        Dirichlet concentrations of ``p`` and of every row of ``B``.

    Sample sites
    ------------
    ``p`` (L,), ``B`` (L, n) (plate ``"aspects"``); factor ``"pairs"`` =
    :func:`pair_log_likelihood`.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer.util import log_density
    >>> rows, cols, counts = np.array([0, 2]), np.array([1, 3]), np.array([2.0, 1.0])
    >>> p, B = np.array([0.5, 0.5]), np.array([[0.4, 0.4, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4]])
    >>> lp, _ = log_density(dyadic_aspect, (rows, cols, counts, 4, 2), {}, {"p": p, "B": B})
    >>> round(float(lp), 4)   # 2 (2 + 1) log(0.5 * 0.16 + 0.5 * 0.01) + log Gamma(2) + 2 log Gamma(4)
    -11.2071
    """
    rows, cols, counts = V.check_pair_arrays(rows, cols, counts, "counts", n_objects=V.check_int(n_objects, "n_objects", minimum=1))
    L = V.check_int(n_aspects, "n_aspects", minimum=1)
    n = V.check_int(n_objects, "n_objects", minimum=2)
    p = numpyro.sample("p", dist.Dirichlet(alpha_p * jnp.ones(L)))
    with numpyro.plate("aspects", L):
        B = numpyro.sample("B", dist.Dirichlet(alpha_B * jnp.ones(n)))
    numpyro.factor("pairs", pair_log_likelihood(p, B, jnp.asarray(rows), jnp.asarray(cols), jnp.asarray(counts)))
