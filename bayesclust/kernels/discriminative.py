"""Discriminative clustering's terms: Voronoi memberships (hard or smoothed) and the
Dirichlet-marginalised class term (Kaski, Sinkkonen & Klami 2005, eqs. 9-10), shared
by the model, its optimisers and the evaluation metric.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln

from .nearest import squared_distances

__all__ = [
    "voronoi_memberships",
    "class_counts",
    "polya_log_evidence",
    "polya_log_predictive",
]

def voronoi_memberships(X: jax.Array, prototypes: jax.Array, smooth_std=None):
    r"""Memberships of points in the Voronoi regions of the prototypes.

    Hard (``smooth_std=None``): the one-hot indicator of the nearest prototype
    (lowest index on ties), :math:`y_j(x) = [j = \arg\min_k \|x - m_k\|^2]`.
    Smoothed: the normalised Gaussian of Kaski et al. (2005, eq. 4),
    :math:`y_j(x) = \mathrm{softmax}_j(-\|x - m_j\|^2 / (2 \sigma^2))` with
    :math:`\sigma` = ``smooth_std`` (a standard deviation); it tends to the hard
    memberships as ``smooth_std -> 0`` (off the region boundaries).

    Parameters
    ----------
    X : array, shape (n, d)
    prototypes : array, shape (K, d)
    smooth_std : float or None

    Returns
    -------
    Y : array, shape (n, K)
        Rows sum to 1.
    sq_dist : array, shape (n, K)
        :func:`squared_distances` (GEMM form).
    """
    X = check_kernel_array(X, "X", ndim=2)
    prototypes = check_kernel_array(prototypes, "prototypes", ndim=2, min_rows=1)
    check_kernel_points(X=X, prototypes=prototypes)
    if smooth_std is not None:
        smooth_std = check_kernel_positive(smooth_std, "smooth_std")
    sq = squared_distances(X, prototypes)
    if smooth_std is None:
        return jax.nn.one_hot(jnp.argmin(sq, axis=1), prototypes.shape[0], dtype=X.dtype), sq
    return jax.nn.softmax(-sq / (2.0 * jnp.square(smooth_std)), axis=1), sq

from .._validation import check_kernel_array, check_kernel_ids, check_kernel_points, check_kernel_positive


def class_counts(memberships: jax.Array, classes: jax.Array, n_classes: int) -> jax.Array:
    """(Soft) contingency table ``n[j, i] = sum_{x: c(x) = i} y_j(x)``, shape (K, C).

    Parameters
    ----------
    memberships : array, shape (n, K)
        Rows of :func:`voronoi_memberships` (or any soft/hard assignment).
    classes : int array, shape (n,)
        Class ``0..n_classes-1`` of every point.
    n_classes : int
        Static number of classes ``C``.
    """
    memberships = check_kernel_array(memberships, "memberships", ndim=2, min_rows=1)
    classes = check_kernel_array(classes, "classes", ndim=1, kind="i")
    check_kernel_ids(classes, "classes", n_classes)
    return jax.ops.segment_sum(memberships, classes, n_classes).T


def polya_log_evidence(counts: jax.Array, n0=1.0, lam_eq=0.0, include_norm: bool = False) -> jax.Array:
    r"""Dirichlet-marginalised (Polya) log evidence of a contingency table, a scalar.

    .. math::

        \sum_{j,i} \log\Gamma(n^0_i + n_{ji}) - (1 + \lambda_{EQ}) \sum_j \log\Gamma(N^0 + N_j)
        \;\bigl[+\, K(\log\Gamma(N^0) - \textstyle\sum_i \log\Gamma(n^0_i))\bigr]

    with :math:`N_j = \sum_i n_{ji}`, :math:`N^0 = \sum_i n^0_i`: the log posterior of
    the prototypes of discriminative clustering (Kaski et al. 2005, eq. 9; with soft
    counts eq. 10; with :math:`\lambda_{EQ} > 0` the equal-size variant, eq. 12).
    ``include_norm`` adds the per-cluster normaliser dropped by the paper, which
    makes values comparable across ``K`` (the exact Polya log marginal at
    :math:`\lambda_{EQ} = 0`).

    Parameters
    ----------
    counts : array, shape (K, C)
        Class counts per cluster (hard or soft, non-negative).
    n0 : float or array, shape (C,)
        Dirichlet prior counts :math:`n^0_i` (> 0).
    lam_eq : float
        :math:`\lambda_{EQ} \ge 0`.
    include_norm : bool

    Returns
    -------
    scalar array

    Examples
    --------
    >>> import numpy as np
    >>> # two class-0 points in one cluster, uniform prior over 2 classes: 1/2 * 2/3
    >>> round(float(polya_log_evidence(np.array([[2.0, 0.0]]), include_norm=True)), 5)
    -1.09861
    >>> round(float(np.log(1 / 3)), 5)
    -1.09861
    """
    counts = check_kernel_array(counts, "counts", ndim=(2, 3))
    if isinstance(counts, np.ndarray):  # evaluation on the host: float64 with scipy
        from scipy.special import gammaln as lgamma

        xp = np
    else:  # traced / differentiable
        xp, lgamma = jnp, gammaln
    counts = xp.asarray(counts)
    n0 = xp.broadcast_to(xp.asarray(n0, counts.dtype), counts.shape[-1:])
    N0 = xp.sum(n0)
    if include_norm:
        # Each cluster's normaliser subtracted entry by entry: an empty cluster (a free slot
        # of a fixed-capacity buffer) then adds exactly 0, whatever the buffer's size.
        return (xp.sum(lgamma(n0 + counts) - lgamma(n0))
                - (1.0 + lam_eq) * xp.sum(lgamma(N0 + counts.sum(-1)) - lgamma(N0))
                - lam_eq * counts.shape[0] * lgamma(N0))
    return xp.sum(lgamma(n0 + counts)) - (1.0 + lam_eq) * xp.sum(lgamma(N0 + counts.sum(-1)))


def polya_log_predictive(counts: jax.Array, c, n0=1.0) -> jax.Array:
    r"""Log Polya predictive of class ``c`` in every cluster, shape ``counts.shape[:-1]``.

    .. math::

        \log \mathrm{pred}_j(c) = \log \frac{n_{jc} + n^0_c}{N_j + N^0}

    the probability that a new point of cluster ``j`` has class ``c`` once the class
    distribution :math:`\psi_j \sim \mathrm{Dir}(n^0)` is integrated out, given the
    cluster's class counts :math:`n_{j\cdot}` (:math:`N_j = \sum_c n_{jc}`,
    :math:`N^0 = \sum_c n^0_c`).  An empty cluster (a new one) gives
    :math:`\log(n^0_c / N^0)`.  The Polya evidence of :func:`polya_log_evidence`
    (``include_norm=True``) is the product of these predictives over the points of each
    cluster taken in any order (Kaski et al. 2005, eq. 9 with its normaliser), so the
    change of that evidence when one point leaves or joins a cluster is this term with
    the point's own count removed: what the DP-MDA2 Gibbs sampler and the HardDC pass
    weigh clusters by (docs/deviations.md#hard-dc-model).

    Parameters
    ----------
    counts : array, shape (..., K, C)
        Class counts per cluster (hard counts, non-negative).
    c : int scalar array
        The class ``0..C-1``.
    n0 : float or array, shape (C,)
        Dirichlet prior counts (> 0).

    Returns
    -------
    array, shape (..., K)

    Examples
    --------
    >>> import numpy as np
    >>> counts = np.array([[2.0, 0.0], [0.0, 0.0]])  # two class-0 points; an empty cluster
    >>> np.round(np.exp(np.asarray(polya_log_predictive(counts, 0))), 4).tolist()  # 3/4, 1/2
    [0.75, 0.5]
    """
    counts = check_kernel_array(counts, "counts", ndim=(2, 3))
    counts = jnp.asarray(counts)
    n0 = jnp.broadcast_to(jnp.asarray(n0, counts.dtype), counts.shape[-1:])
    n_c = jnp.take(counts, c, axis=-1)
    return jnp.log(n_c + n0[c]) - jnp.log(jnp.sum(counts, axis=-1) + jnp.sum(n0))
