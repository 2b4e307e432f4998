r"""Soft memberships behind a co-association matrix (the PPC model) as a NumPyro program.

Rota Bulò, Lourenço, Fred & Pelillo (2010, §3) give every object :math:`i` a soft
assignment :math:`\mathbf y_i \in \Delta_K`; two objects share a cluster with probability
:math:`q_{ij} = \mathbf y_i^\top \mathbf y_j`, and in each of the :math:`N_{ij}` partitions
that contain both they co-occur independently, so the count :math:`n_{ij}` is binomial and the
co-association :math:`c_{ij} = n_{ij}/N_{ij}` its ML estimate:

.. math::

    \mathbf y_i \sim \mathrm{Dir}(\alpha \mathbf 1_K), \qquad
    n_{ij} \sim \mathrm{Binomial}(N_{ij}, \mathbf y_i^\top \mathbf y_j)
    \quad (i < j) \qquad \text{(``likelihood="binomial"``)}.

The paper fits :math:`Y` by the least squares :math:`\|C - Y^\top Y\|_F^2` (eq. 1), the MAP of
the Gaussian likelihood

.. math::

    c_{ij} \sim \mathcal N(\mathbf y_i^\top \mathbf y_j, \sigma^2) \quad (i < j)
    \qquad \text{(``likelihood="gaussian"``)}

with :math:`\alpha = 1`.  Both likelihoods run over **all** pairs ``i < j`` (an unstored pair
of the sparse co-association has :math:`c_{ij} = n_{ij} = 0`, which is evidence too) but never
form the dense ``n x n`` matrix where they need not: see :func:`pair_log_likelihood`.  The
priors and the Gaussian reading are ours (docs/deviations.md#ppc-bayesian-model).

This module holds the NumPyro program only (no inference code).

References
----------
S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering using
evidence accumulation", S+SSPR 2010, LNCS 6218, pp. 395-404, §3.
"""

from __future__ import annotations

import math
import numbers

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax import lax
from jax.scipy.special import gammaln

from .. import _validation as V

__all__ = ["LIKELIHOODS", "pair_log_likelihood", "pairwise_memberships"]

#: The likelihoods of :func:`pairwise_memberships`.
LIKELIHOODS = ("gaussian", "binomial")

#: Entries of one row block ``b x n`` of the binomial likelihood's all-pairs sum.
_BLOCK_ENTRIES = 1 << 22


def _block_rows(n: int) -> int:
    return max(1, min(n, _BLOCK_ENTRIES // max(n, 1)))


def _gaussian_ll(Y, rows, cols, values, sigma):
    r""":math:`\sum_{i<j} \log\mathcal N(c_{ij}\mid\mathbf y_i^\top\mathbf y_j, \sigma^2)` without densifying."""
    n = Y.shape[0]
    q = jnp.sum(Y[rows] * Y[cols], axis=1)  # stored pairs
    M = Y.T @ Y  # (K, K): ||Y Y^T||_F^2 = ||Y^T Y||_F^2 = ||M||_F^2
    sq = jnp.sum(Y * Y, axis=1)  # ||y_i||^2
    q2_all = 0.5 * (jnp.sum(M * M) - jnp.sum(sq * sq))  # sum_{i<j} (y_i . y_j)^2
    ss = jnp.sum(values * values) - 2.0 * jnp.sum(values * q) + q2_all
    n_pairs = 0.5 * n * (n - 1)
    return -0.5 * ss / sigma**2 - n_pairs * (jnp.log(sigma) + 0.5 * math.log(2.0 * math.pi))


def _binomial_ll(Y, rows, cols, values, pair_trials, n_trials):
    r""":math:`\sum_{i<j}\log\mathrm{Bin}(n_{ij}\mid N_{ij}, \mathbf y_i^\top\mathbf y_j)`, in row blocks."""
    n, K = Y.shape
    b = _block_rows(n)
    nb = -(-n // b)
    Yp = jnp.zeros((nb * b, K), Y.dtype).at[:n].set(Y)
    N = jnp.asarray(n_trials, Y.dtype)
    # Weight of log(1 - q_ij): N at an unstored pair, N_ij - n_ij at a stored one.
    fix = values + N - pair_trials  # subtracted from N at the stored pairs
    j = jnp.arange(n)

    def block(start):
        Yb = lax.dynamic_slice_in_dim(Yp, start, b)
        Q = Yb @ Y.T  # (b, n)
        i = start + jnp.arange(b)
        W = jnp.where(j[None, :] > i[:, None], N, 0.0)  # rows i >= n (padding) get no pair
        local = rows - start
        local = jnp.where((local >= 0) & (local < b), local, b)
        W = W.at[local, cols].add(-fix, mode="drop")
        safe = jnp.where(W > 0, Q, 0.0)  # log(1 - 1) only where its weight is 0
        return jnp.sum(jnp.where(W > 0, W * jnp.log1p(-safe), 0.0))

    total_fail = jnp.sum(lax.map(block, jnp.arange(nb) * b))
    q = jnp.sum(Y[rows] * Y[cols], axis=1)
    succ = jnp.sum(jnp.where(values > 0, values * jnp.log(jnp.where(values > 0, q, 1.0)), 0.0))
    log_binom = gammaln(pair_trials + 1.0) - gammaln(values + 1.0) - gammaln(pair_trials - values + 1.0)
    return succ + total_fail + jnp.sum(log_binom)


def pair_log_likelihood(Y, rows, cols, values, *, likelihood="gaussian", sigma=0.1, n_trials=None,
                        pair_trials=None):
    r"""Log-likelihood of the co-association over all pairs ``i < j`` given memberships (JAX).

    Parameters
    ----------
    Y : array, shape (n, K)
        Memberships :math:`\mathbf y_i^\top`, rows on the simplex.
    rows, cols : int arrays, shape (m,)
        The stored pairs ``i < j``; every other pair has :math:`c_{ij} = n_{ij} = 0`.
    values : array, shape (m,)
        ``"gaussian"``: :math:`c_{ij}` in [0, 1]; ``"binomial"``: the counts :math:`n_{ij}`.
    likelihood : {"gaussian", "binomial"}
    sigma : float
        Standard deviation of the Gaussian.
    n_trials : int
        Binomial: :math:`N`, the trials of every unstored pair (the ensemble size).
    pair_trials : array, shape (m,), optional
        Binomial: :math:`N_{ij}` at the stored pairs (default ``n_trials``).

    Returns
    -------
    scalar array

    Notes
    -----
    Gaussian, in ``O(K nnz + K^2 n)`` time and memory:

    .. math::

        \sum_{i<j}(c_{ij} - q_{ij})^2 = \sum_{\text{stored}} c_{ij}^2
        - 2\sum_{\text{stored}} c_{ij}q_{ij} + \tfrac12\big(\|YY^\top\|_F^2 - \textstyle\sum_i\|\mathbf y_i\|^4\big),

    with :math:`\|YY^\top\|_F = \|Y^\top Y\|_F` a ``K x K`` product; the log-density adds
    :math:`-\binom n2(\log\sigma + \frac12\log 2\pi)`.

    Binomial: :math:`\sum_{\text{stored}}[\log\binom{N_{ij}}{n_{ij}} + n_{ij}\log q_{ij}]
    + \sum_{i<j} W_{ij}\log(1 - q_{ij})` with :math:`W_{ij} = N_{ij} - n_{ij}` at a stored
    pair and :math:`N` elsewhere.  The second sum has no sparse form: it is computed in row
    blocks of about :math:`2^{22}` entries (``b = 2^22 // n`` rows of :math:`YY^\top` at a
    time), ``O(K n^2 + nnz n / b)`` time and ``O(2^22)`` memory per evaluation -- fine for
    ``n`` up to a few thousand, not for large ``n``.  A term :math:`W\log(1-q)` with
    :math:`W = 0` counts 0 (also at :math:`q = 1`).
    """
    Y = V.check_kernel_array(Y, "Y", ndim=2)
    rows, cols, values = V.check_pair_arrays(rows, cols, values, "values", n_objects=Y.shape[0])
    Y = jnp.asarray(Y)
    rows, cols = jnp.asarray(rows), jnp.asarray(cols)
    values = jnp.asarray(values, Y.dtype)
    if likelihood == "gaussian":
        return _gaussian_ll(Y, rows, cols, values, sigma)
    if likelihood == "binomial":
        if n_trials is None:
            raise ValueError("the binomial likelihood needs n_trials (the ensemble size N)")
        pt = jnp.full_like(values, n_trials) if pair_trials is None else jnp.asarray(pair_trials, Y.dtype)
        return _binomial_ll(Y, rows, cols, values, pt, n_trials)
    raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")


def pairwise_memberships(rows, cols, values, n_objects: int, n_clusters: int, *, likelihood: str = "gaussian",
                         alpha: float = 1.0, sigma: float = 0.1, n_trials: int | None = None, pair_trials=None):
    r"""NumPyro program of per-object memberships behind a co-association.

    .. math::

        \mathbf y_i \sim \mathrm{Dir}(\alpha\mathbf 1_K)\ (i = 1..n), \qquad
        c_{ij} \sim \mathcal N(\mathbf y_i^\top\mathbf y_j, \sigma^2)
        \ \text{or}\ n_{ij} \sim \mathrm{Bin}(N_{ij}, \mathbf y_i^\top\mathbf y_j),
        \quad i < j.

    With ``alpha = 1`` and the Gaussian likelihood the log-posterior is
    :math:`\text{const} - \frac{1}{4\sigma^2}\sum_{i \ne j}(c_{ij} - \mathbf y_i^\top\mathbf y_j)^2`,
    so its MAP (for any ``sigma``) is the minimiser of PPC's objective
    :math:`\|C - Y^\top Y\|_F^2` (Rota Bulò et al. 2010, eq. 1) *without its diagonal*:
    :func:`~bayesclust.inference.consensus.ppc.ppc` with ``mask_diagonal=True`` is the exact MAP.  PPC's
    default objective also has the terms :math:`(c_{ii} - \|\mathbf y_i\|^2)^2` with
    :math:`c_{ii} = 1`, which no model of pairs of distinct objects contains; they pull every
    :math:`\mathbf y_i` towards a vertex of the simplex, so the default PPC solution is harder
    than this MAP.

    Parameters
    ----------
    rows, cols : int arrays, shape (m,)
        Stored pairs ``i < j`` of the (sparse) co-association.
    values : array, shape (m,)
        ``"gaussian"``: the normalised co-association :math:`c_{ij} \in [0, 1]`;
        ``"binomial"``: the counts :math:`n_{ij}` (non-negative integers).
    n_objects : int
        ``n >= 2``.
    n_clusters : int
        ``K >= 1``.
    likelihood : {"gaussian", "binomial"}, default "gaussian"
        The binomial is the paper's model; its all-pairs term costs ``O(K n^2)`` per
        evaluation (see :func:`pair_log_likelihood`).
    alpha : float, default 1
        Dirichlet concentration of every :math:`\mathbf y_i` (> 0).
    sigma : float, default 0.1
        Standard deviation of the Gaussian (> 0); with ``alpha = 1`` it does not move the MAP.
    n_trials : int, optional
        Binomial (required): :math:`N`, the partitions containing an unstored pair (every
        pair, when every partition labels every object).
    pair_trials : array, shape (m,), optional
        Binomial: :math:`N_{ij}` at the stored pairs (default ``n_trials``).

    Sample sites
    ------------
    ``memberships`` (n, K) (plate ``"objects"``); factor ``"pairs"`` =
    :func:`pair_log_likelihood`.

    Examples
    --------
    >>> import numpy as np
    >>> from numpyro.infer.util import log_density
    >>> Y = np.array([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])   # every residual is 0.18
    >>> rows, cols, vals = np.array([0]), np.array([1]), np.array([1.0])
    >>> lp, _ = log_density(pairwise_memberships, (rows, cols, vals, 3, 2), {"sigma": 1.0},
    ...                     {"memberships": Y})
    >>> round(float(lp), 4)   # -3 (0.18^2 / 2 + log sqrt(2 pi)); the flat prior's density is 1
    -2.8054
    """
    rows, cols, values = V.check_pair_arrays(rows, cols, values, "values", n_objects=V.check_int(n_objects, "n_objects", minimum=1))
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    n = V.check_int(n_objects, "n_objects", minimum=2)
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")
    for name, value in (("alpha", alpha), ("sigma", sigma)):
        if isinstance(value, (numbers.Real, np.generic)):  # arrays and tracers pass unchecked
            V.check_positive(value, name)
    with numpyro.plate("objects", n):
        Y = numpyro.sample("memberships", dist.Dirichlet(alpha * jnp.ones(K)))
    numpyro.factor("pairs", pair_log_likelihood(Y, rows, cols, values, likelihood=likelihood, sigma=sigma,
                                                n_trials=n_trials, pair_trials=pair_trials))
