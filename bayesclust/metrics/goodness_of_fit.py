"""Goodness of fit: the Cramer-von Mises statistic of a sample against a distribution
function, the Jensen-Shannon divergence of two discrete distributions.

Host-side NumPy/SciPy in float64, like every module of :mod:`bayesclust.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import (
    check_array,
)

__all__ = [
    "cramer_von_mises",
    "jensen_shannon",
]

# --------------------------------------------------------------------------- goodness of fit


def cramer_von_mises(x: Any, cdf: Any) -> float:
    r"""Cramér-von Mises statistic of a sample against a distribution function.

    .. math::

        T = n\,\omega^2 = \frac{1}{12 n}
            + \sum_{i=1}^{n} \Big[\frac{2i - 1}{2n} - F\big(x_{(i)}\big)\Big]^2,

    :math:`x_{(1)} \le \dots \le x_{(n)}` the ordered sample (Aidos & Fred 2012, §4,
    eq. 12).  Smaller is a better fit; under the hypothesis that ``x`` is an i.i.d. sample of
    ``F`` its mean is 1/6 whatever ``F`` and ``n`` (Anderson & Darling 1952), and it grows
    like ``n`` otherwise.  Equal to ``scipy.stats.cramervonmises(x, cdf).statistic``.

    Parameters
    ----------
    x : array_like, shape (n,)
        A sample (``n >= 1``), finite.
    cdf : callable
        ``cdf(values)`` returns :math:`F` at an array of shape (n,) (the sorted sample), as
        anything NumPy converts (a JAX array too); values must lie in [0, 1].

    Returns
    -------
    float
        :math:`T`.

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D or not finite (naming ``x``), or ``cdf`` returns the wrong
        shape or values outside [0, 1] (naming ``cdf``).
    TypeError
        If ``cdf`` is not callable.

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for d-dimensional
    data: application in partitional clustering", Pattern Recognition 45 (2012), §4, eq. (12).
    T. W. Anderson and D. A. Darling, Ann. Math. Statist. 23 (1952) 193-212.

    Examples
    --------
    >>> round(cramer_von_mises([0.1, 0.5, 0.9], lambda t: t), 6)  # uniform on [0, 1]
    0.036667
    """
    xs = np.sort(check_array(x, "x", ndim=1, min_samples=1, dtype=None).astype(np.float64))
    if not callable(cdf):
        raise TypeError(f"cdf must be a callable returning F at an array, got {type(cdf).__name__}")
    F = np.asarray(cdf(xs), dtype=np.float64)
    if F.shape != xs.shape:
        raise ValueError(f"cdf must return one value per sample point: shape {xs.shape}, "
                         f"got {F.shape}")
    if not np.all((F >= 0) & (F <= 1)):  # NaN fails both
        raise ValueError("cdf must return values in [0, 1], got "
                         f"{F[~((F >= 0) & (F <= 1))][0]!r}")
    n = xs.shape[0]
    i = np.arange(1, n + 1)
    return float(1.0 / (12 * n) + np.sum(((2 * i - 1) / (2.0 * n) - F) ** 2))


def _check_distribution(p: Any, name: str) -> np.ndarray:
    arr = check_array(p, name, ndim=1, min_samples=1, dtype=None).astype(np.float64)
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative probabilities, got {arr[arr < 0][0]!r}")
    total = arr.sum()
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got all zeros")
    if not np.isfinite(total):
        raise ValueError(f"{name} sums to infinity: rescale it")
    return arr / total


def jensen_shannon(p: Any, q: Any) -> float:
    r"""Jensen-Shannon divergence of two discrete distributions (nats).

    .. math::

        JSD(P \| Q) = \tfrac12 KL(P \| M) + \tfrac12 KL(Q \| M),\qquad M = \tfrac12 (P + Q),

    :math:`KL(P \| M) = \sum_i p_i \log(p_i / m_i)`, natural logarithm, :math:`0 \log 0 = 0`
    (Aidos & Fred 2012, §4, eq. 13).  Symmetric, in :math:`[0, \log 2]`, zero iff
    :math:`P = Q`.  Equal to ``scipy.spatial.distance.jensenshannon(p, q) ** 2``.

    Parameters
    ----------
    p, q : array_like, shape (k,)
        Non-negative weights of the same ``k`` cells (a histogram, or a distribution's mass on
        the cells of a grid); each is normalised to sum 1, zero entries are allowed.

    Returns
    -------
    float in [0, log 2]

    Raises
    ------
    ValueError
        Naming ``p`` or ``q``: not 1-D, empty, not finite, a negative entry, all zeros; or
        ``p`` and ``q`` of different lengths.

    References
    ----------
    A. Aidos and A. Fred, Pattern Recognition 45 (2012), §4, eq. (13).
    J. Lin, "Divergence measures based on the Shannon entropy", IEEE Trans. Inf. Theory 37
    (1991) 145-151.

    Examples
    --------
    >>> round(jensen_shannon([1, 0], [0, 1]), 6)  # log 2: disjoint supports
    0.693147
    >>> jensen_shannon([2, 2], [0.5, 0.5])
    0.0
    """
    P = _check_distribution(p, "p")
    Q = _check_distribution(q, "q")
    if P.shape != Q.shape:
        raise ValueError(f"p and q must have the same length, got {P.shape[0]} and {Q.shape[0]}")
    M = 0.5 * (P + Q)

    def kl(a: np.ndarray) -> float:
        on = a > 0  # there m >= a / 2 > 0
        return float(np.sum(a[on] * np.log(a[on] / M[on])))

    return max(0.5 * kl(P) + 0.5 * kl(Q), 0.0)
