"""The dissimilarity increments distribution (Aidos & Fred 2012): its density and
cdf (closed form for d = 2, quadrature of the chi convolution otherwise), the
minimum description length of a set of increments.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "did_logpdf",
    "did_cdf",
    "did_chi_mean_abs_difference",
    "DID2_FISHER",
    "description_length",
]

# --------------------------------------------------------------------------- #
# Dissimilarity increments distribution (Aidos & Fred 2012)
# --------------------------------------------------------------------------- #

#: ``beta = 2 - sqrt(2)`` of the 2-DID (Aidos & Fred 2012, eq. 10).
_DID_BETA = 2.0 - np.sqrt(2.0)
#: Switch from ``erfcx`` to the asymptotic series of :func:`_did2_bracket` (u >= 10).
_DID_SERIES_FROM = 10.0
_DID_SERIES_TERMS = 14
#: Gauss--Legendre nodes of the d-DID quadrature and the log drop that bounds its interval.
_DID_NODES = 128
_DID_LOG_DROP = 60.0

from .._validation import check_kernel_array


def check_did_args(lam, d) -> int:
    """Validate ``d`` (an int >= 1) and a concrete ``lam`` (> 0, finite); tracers pass."""
    d = int(_check_int_arg(d))
    if not isinstance(lam, jax.core.Tracer):
        arr = np.asarray(lam, dtype=np.float64)
        if arr.size and not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError(f"lam must be positive and finite, got {lam!r}")
    return d


def _check_int_arg(d):
    import numbers

    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)):
        raise TypeError(f"d must be an integer, got {d!r}")
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    return d


@functools.cache
def did_chi_mean_abs_difference(d: int) -> float:
    r"""``m_d = E|chi_d - chi_d'|`` for independent unit chi variables with ``d`` degrees of freedom.

    .. math:: m_d = 2 \int_0^\infty F_d(t)\,(1 - F_d(t))\,dt

    (host, float64, ``scipy.integrate.quad``); ``m_2 = sqrt(pi/2) (2 - sqrt 2)``.

    Parameters
    ----------
    d : int
        ``>= 1``.

    Returns
    -------
    float
    """
    from scipy import integrate, stats

    d = int(_check_int_arg(d))
    if d == 2:
        return float(np.sqrt(np.pi / 2.0) * _DID_BETA)
    law = stats.chi(d)
    hi = np.sqrt(d) + 40.0
    value, _ = integrate.quad(lambda t: law.cdf(t) * law.sf(t), 0.0, hi, limit=200,
                              epsabs=0.0, epsrel=1e-13)
    return 2.0 * value


def _asymptotic_sum(v, coeffs, xp=jnp):
    """``sum_m coeffs[m] v^(-2m)`` by Horner in ``1 / v^2``."""
    z = 1.0 / (v * v)
    acc = xp.zeros_like(v) + coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * z + c
    return acc


# sqrt(pi) erfcx(u) ~ sum_n c_n u^(-2n-1), c_n = (-1)^n (2n-1)!! / 2^n
_ERFCX_C = [1.0]
for _n in range(1, _DID_SERIES_TERMS + 2):
    _ERFCX_C.append(-_ERFCX_C[-1] * (2 * _n - 1) / 2.0)
# g(u) = u + sqrt(pi) erfcx(u) (1/2 - u^2) ~ sum_m e_m u^(-2m-1), e_m = c_m / 2 - c_(m+1)
_G_COEFFS = tuple(_ERFCX_C[m] / 2.0 - _ERFCX_C[m + 1] for m in range(_DID_SERIES_TERMS))
# h(v) = 1 - v sqrt(pi) erfcx(v) ~ -sum_(n>=1) c_n v^(-2n)  (written as a series in 1/v^2 from n=1)
_H_COEFFS = tuple(-_ERFCX_C[n + 1] for n in range(_DID_SERIES_TERMS))


def _namespace(*arrays):
    """``(xp, erfcx)``: NumPy and SciPy (host, float64) for NumPy inputs, else JAX."""
    if all(isinstance(a, (np.ndarray, np.generic, float, int)) for a in arrays):
        from scipy.special import erfcx

        return np, erfcx
    from jax.scipy.special import erfcx

    return jnp, erfcx


def _did2_bracket(u, xp=jnp, erfcx=None):
    """``g(u) = u + sqrt(pi) erfcx(u) (1/2 - u^2)`` for ``u >= 0``, without cancellation."""
    if erfcx is None:
        from jax.scipy.special import erfcx
    big = u >= _DID_SERIES_FROM
    u_small = xp.where(big, 0.0, u)
    u_big = xp.where(big, u, _DID_SERIES_FROM)
    direct = u_small + np.sqrt(np.pi) * erfcx(u_small) * (0.5 - u_small * u_small)
    series = _asymptotic_sum(u_big, _G_COEFFS, xp) / u_big
    return xp.where(big, series, direct)


def _did2_logpdf(w, lam, xp=jnp, erfcx=None):
    """2-DID log density for ``w >= 0`` in the array namespace ``xp`` (no argument checks)."""
    a = np.pi * _DID_BETA**2 / (4.0 * lam * lam)
    u = w * xp.sqrt(a / 2.0)
    return -a * w * w + 0.5 * xp.log(2.0 * a) + xp.log(_did2_bracket(u, xp, erfcx))


def _did2_logsf(w, lam, xp=jnp, erfcx=None):
    """``log P(W > w)`` of the 2-DID: ``-u^2/2 + log(1 - (u sqrt(pi)/2) erfcx(u/2))``, ``u = w/s``."""
    if erfcx is None:
        from jax.scipy.special import erfcx
    u = w * did_chi_mean_abs_difference(2) / lam
    v = 0.5 * u
    big = v >= _DID_SERIES_FROM
    v_small = xp.where(big, 0.0, v)
    v_big = xp.where(big, v, _DID_SERIES_FROM)
    direct = 1.0 - v_small * np.sqrt(np.pi) * erfcx(v_small)
    series = _asymptotic_sum(v_big, _H_COEFFS, xp) / (v_big * v_big)
    return -0.5 * u * u + xp.log(xp.where(big, series, direct))


@functools.cache
def _legendre(n: int):
    x, wt = np.polynomial.legendre.leggauss(n)
    return x, np.log(wt)


def _chi_log_norm(d: int) -> float:
    from scipy.special import gammaln as lgamma

    return float(-(d / 2.0 - 1.0) * np.log(2.0) - lgamma(d / 2.0))


def _conv_log_integrand(t, u, d: int):
    """``(d-1) log(t (t+u)) - t^2 - t u``: ``log chi_d(t) chi_d(t+u)`` up to ``2 log c_d - u^2/2``."""
    quad = -t * t - t * u
    if d == 1:
        return quad
    return (d - 1) * jnp.log(t * (t + u)) + quad


def _quad_interval(u, d: int):
    """``[lo, hi]`` holding the mass of the (log-concave) convolution integrand at ``u``.

    Centred at its mode ``t* = (sqrt(u^2 + 4(d-1)) - u) / 2``; each end is the first of
    ``t* -+ 2^j base`` (``j = 0..24``) where the log integrand has dropped by 60.
    """
    t_star = 0.5 * (jnp.sqrt(u * u + 4.0 * (d - 1)) - u)
    base = 1.0 / (2.0 * t_star + u + 1.0)
    peak = _conv_log_integrand(jnp.maximum(t_star, 1e-300), u, d) if d > 1 else -t_star * 0.0
    steps = 2.0 ** jnp.arange(25.0, dtype=u.dtype)
    right = t_star[..., None] + base[..., None] * steps
    ok_r = _conv_log_integrand(right, u[..., None], d) < peak[..., None] - _DID_LOG_DROP
    hi = jnp.take_along_axis(right, jnp.argmax(ok_r, axis=-1)[..., None], axis=-1)[..., 0]
    hi = jnp.where(ok_r.any(axis=-1), hi, right[..., -1])
    left = t_star[..., None] - base[..., None] * steps
    ok_l = (left <= 0) | (
        _conv_log_integrand(jnp.maximum(left, 1e-300), u[..., None], d)
        < peak[..., None] - _DID_LOG_DROP)
    lo = jnp.take_along_axis(left, jnp.argmax(ok_l, axis=-1)[..., None], axis=-1)[..., 0]
    return jnp.maximum(lo, 0.0), hi


def _nodes(lo, hi):
    x, log_wt = _legendre(_DID_NODES)
    half = 0.5 * (hi - lo)
    t = lo[..., None] + half[..., None] * (jnp.asarray(x, lo.dtype) + 1.0)
    return t, jnp.asarray(log_wt, lo.dtype) + jnp.log(half)[..., None]


def _did_quad_logpdf_unit(u, d: int):
    """``log f_d(u)``, ``f_d(u) = 2 int_0^inf chi_d(t) chi_d(t+u) dt`` (unit scale, ``u >= 0``)."""
    lo, hi = lax.stop_gradient(_quad_interval(lax.stop_gradient(u), d))
    t, log_wt = _nodes(lo, hi)
    terms = log_wt + _conv_log_integrand(t, u[..., None], d)
    return (np.log(2.0) + 2.0 * _chi_log_norm(d) - 0.5 * u * u
            + jax.nn.logsumexp(terms, axis=-1))


def _did_quad_sf_unit(u, d: int):
    """``P(|D1 - D2| > u) = 2 int_0^inf chi_d(t) Q(d/2, (t+u)^2/2) dt`` (unit scale)."""
    from jax.scipy.special import gammaincc

    lo, hi = _quad_interval(u, d)
    t, log_wt = _nodes(jnp.zeros_like(lo), 1.5 * hi)
    log_chi = _chi_log_norm(d) - 0.5 * t * t
    if d > 1:
        log_chi = log_chi + (d - 1) * jnp.log(t)
    q = gammaincc(d / 2.0, 0.5 * (t + u[..., None]) ** 2)
    return 2.0 * jnp.sum(jnp.exp(log_wt + log_chi) * q, axis=-1)


def _float_result_type(*arrays):
    """The arrays' promoted dtype if floating, else JAX's default float (float64 under x64)."""
    dtype = jnp.result_type(*arrays)
    return dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.zeros(()).dtype


def _did_scale(lam, d: int):
    return lam / did_chi_mean_abs_difference(d)


@functools.partial(jax.jit, static_argnums=(2, 3))
def _did_logpdf_impl(w, lam, d: int, closed_form: bool):
    w, lam = jnp.broadcast_arrays(jnp.asarray(w), jnp.asarray(lam))
    dtype = _float_result_type(w, lam)
    w, lam = w.astype(dtype), lam.astype(dtype)
    neg = w < 0
    w_safe = jnp.where(neg, 0.0, w)
    if d == 2 and closed_form:
        value = _did2_logpdf(w_safe, lam)
    else:
        s = _did_scale(lam, d)
        value = _did_quad_logpdf_unit(w_safe / s, d) - jnp.log(s)
    return jnp.where(neg, -jnp.inf, value)


def did_logpdf(w, lam, d: int = 2):
    r"""Log density of the dissimilarity increments distribution (DID), mean ``lam``.

    For ``d = 2`` the closed form of Aidos & Fred (2012, eq. 10), with
    :math:`\beta = 2 - \sqrt 2`, :math:`a = \pi\beta^2 / (4\lambda^2)`:

    .. math::

        p(w;\lambda) = a w\,e^{-a w^2} + K_3\,e^{-a w^2/2}\Big(\frac1a - w^2\Big)
            \mathrm{erfc}\Big(w\sqrt{a/2}\Big),\quad
        K_3 = \frac{\pi^2\beta^3}{8\sqrt2\,\lambda^3},

    evaluated as :math:`\log p = -a w^2 + \tfrac12\log(2a) + \log g(u)`,
    :math:`u = w\sqrt{a/2}`, :math:`g(u) = u + \sqrt\pi\,\mathrm{erfcx}(u)(\tfrac12 - u^2)`
    (``erfcx`` the scaled complementary error function; for ``u >= 10`` the asymptotic
    series :math:`g(u) = \sum_m (-1)^m (2m-1)!!\,(m+1)\,2^{-m} u^{-2m-1}`, which avoids the
    cancellation of the two leading terms; docs/deviations.md#did2-stable-evaluation).
    Finite out to any ``w`` representable.

    For any ``d``, the law of :math:`|D_1 - D_2|` for independent :math:`D_i = s\chi_d`,
    :math:`s = \lambda / m_d`, :math:`m_d = E|\chi_d - \chi_d'|`: the d-DID of Aidos & Fred
    (2012, eq. 7-8) (same shape, mean :math:`\lambda`), evaluated as
    :math:`p(w) = f_d(w/s)/s`, :math:`f_d(u) = 2\int_0^\infty \chi_d(t)\chi_d(t+u)\,dt` by
    128-node Gauss--Legendre quadrature in log space over an interval bracketing the mass
    of the (log-concave) integrand -- not the alternating double sum of eq. (7), which
    cancels catastrophically for ``d >= 6`` (docs/deviations.md#did-d-quadrature).

    Parameters
    ----------
    w : array_like, shape (...)
        Increments; ``w < 0`` gives ``-inf``.
    lam : array_like, broadcastable with ``w``
        Mean increment :math:`\lambda > 0`.
    d : int, default 2
        Dimension (static), ``>= 1``.

    Returns
    -------
    jax.Array, the broadcast shape of ``w`` and ``lam``
        A NumPy float64 array when ``d = 2`` and ``w`` and ``lam`` are NumPy arrays or
        Python numbers: the same formula evaluated on the host with SciPy's ``erfcx``, the
        form the clustering algorithms call once per test.

    Raises
    ------
    ValueError
        If ``d < 1`` or a concrete ``lam`` is not positive and finite.

    References
    ----------
    A. Aidos and A. Fred, "Statistical modeling of dissimilarity increments for
    d-dimensional data: application in partitional clustering", Pattern Recognition 45
    (2012), §2, eqs. (7)-(10).

    Examples
    --------
    >>> import numpy as np
    >>> round(float(np.exp(did_logpdf(0.0, 1.0))), 6)  # sqrt(pi a / 2), a = pi beta^2 / 4
    0.650645
    """
    w = check_kernel_array(w, "w", ndim=None)
    d = check_did_args(lam, d)
    if d == 2 and _namespace(w, lam)[0] is np:
        return _did2_host(w, lam, _did2_logpdf, -np.inf)
    return _did_logpdf_impl(w, lam, d, closed_form=True)


def _did2_host(w, lam, fn, at_negative):
    """Evaluate a 2-DID function on the host in float64 (NumPy / SciPy), ``w < 0`` mapped."""
    xp, erfcx = _namespace(w, lam)
    w, lam = np.broadcast_arrays(np.asarray(w, np.float64), np.asarray(lam, np.float64))
    neg = w < 0
    value = fn(np.where(neg, 0.0, w), lam, xp, erfcx)
    return np.where(neg, at_negative, value)


def did_cdf(w, lam, d: int = 2):
    r"""Distribution function :math:`P(W \le w)` of the DID with mean ``lam`` (see :func:`did_logpdf`).

    ``d = 2``: the closed form :math:`1 - e^{-u^2/2}\big(1 - \tfrac{\sqrt\pi}{2} u\,
    \mathrm{erfcx}(u/2)\big)`, :math:`u = w/s` (the survival function of the difference of two
    Rayleigh variables; series for ``u >= 20``).  Other ``d``:
    :math:`1 - 2\int_0^\infty \chi_d(t)\,Q(d/2, (t+u)^2/2)\,dt` by Gauss--Legendre quadrature
    (``Q`` the regularised upper incomplete gamma function).

    Parameters
    ----------
    w : array_like, shape (...)
        ``w < 0`` gives 0.
    lam : array_like, broadcastable with ``w``
        Mean increment, ``> 0``.
    d : int, default 2

    Returns
    -------
    jax.Array, the broadcast shape of ``w`` and ``lam``
        A NumPy float64 array for ``d = 2`` with NumPy inputs (as :func:`did_logpdf`).

    References
    ----------
    A. Aidos and A. Fred, Pattern Recognition 45 (2012), §2.
    """
    w = check_kernel_array(w, "w", ndim=None)
    d = check_did_args(lam, d)
    if d == 2 and _namespace(w, lam)[0] is np:
        return 0.0 - np.expm1(_did2_host(w, lam, _did2_logsf, 0.0))
    return _did_cdf_impl(w, lam, d)


@functools.partial(jax.jit, static_argnums=(2,))
def _did_cdf_impl(w, lam, d: int):
    w, lam = jnp.broadcast_arrays(jnp.asarray(w), jnp.asarray(lam))
    dtype = _float_result_type(w, lam)
    w, lam = w.astype(dtype), lam.astype(dtype)
    neg = w < 0
    w_safe = jnp.where(neg, 0.0, w)
    if d == 2:
        sf = jnp.exp(_did2_logsf(w_safe, lam))
    else:
        sf = _did_quad_sf_unit(w_safe / _did_scale(lam, d), d)
    return jnp.where(neg, 0.0, jnp.clip(1.0 - sf, 0.0, 1.0))


#: Fisher information of the 2-DID's mean per increment, times ``lam**2``:
#: :math:`c = \lambda^2\,E[(\partial_\lambda \log p(W;\lambda))^2]` (a scale family, so
#: ``c`` does not depend on ``lam``).
DID2_FISHER = 1.8869535


def description_length(w, lam=None, *, lam_floor=None):
    r"""MDL description length of increments under the 2-DID with a ``1/lam`` prior.

    Wallace & Freeman's (1987) two-part code with Grünwald's (2007) constant for one
    parameter, as Aidos & Fred use it to decide merges (SL-DID, eq. 7):

    .. math::

        DL(W) = \tfrac12(1 - \log 12) + \log\lambda + \tfrac12\log I(\lambda)
                - \sum_{w\in W}\log p(w;\lambda),\qquad I(\lambda) = \frac{m\,c}{\lambda^2},

    so that with the prior :math:`p(\lambda) = 1/\lambda` the :math:`\log\lambda` terms cancel,
    :math:`DL = \tfrac12(1 - \log 12) + \tfrac12\log(m c) - \sum\log p(w;\lambda)`,
    :math:`c =` :data:`DID2_FISHER` ``= 1.8869535``, ``m`` the number of increments.

    Parameters
    ----------
    w : array_like, shape (m,)
        Increments (``>= 0``).  NumPy input is evaluated on the host in float64.
    lam : float, optional
        The 2-DID's mean; default the sample mean of ``w`` (the papers' estimate, not the
        maximum-likelihood one).
    lam_floor : float, optional
        Lower bound applied to ``lam``: a cluster of duplicate points has increments (and a
        mean) of 0, where the density is degenerate; the clustering algorithms pass the
        smallest positive increment of the data (docs/deviations.md#did-zero-increments).

    Returns
    -------
    float or scalar jax.Array
        In nats; ``0.0`` for ``m = 0`` (nothing to encode).

    Raises
    ------
    ValueError
        If ``lam`` (after the floor) is not positive and finite.

    References
    ----------
    A. Aidos and A. Fred, "Hierarchical clustering with high order dissimilarities",
    MLDM 2011, eq. (7); C. S. Wallace and P. R. Freeman, "Estimation and inference by compact
    coding", J. R. Statist. Soc. B 49 (1987); P. Grünwald, The Minimum Description Length
    Principle (2007).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([0.5, 1.0, 1.5])
    >>> dl = description_length(w)
    >>> bool(np.isclose(dl, 0.5 * (1 - np.log(12)) + 0.5 * np.log(3 * DID2_FISHER)
    ...                 - did_logpdf(w, 1.0).sum()))
    True
    """
    w = check_kernel_array(w, "w", ndim=None)
    xp, erfcx = _namespace(w)
    w = xp.asarray(w, dtype=np.float64) if xp is np else jnp.asarray(w)
    m = w.shape[0] if w.ndim else 1
    if m == 0:
        return 0.0
    if lam is None:
        lam = xp.mean(w)
    if lam_floor is not None:
        lam = xp.maximum(lam, lam_floor)
    check_did_args(lam, 2)
    if xp is np:
        loglik = float(np.sum(_did2_logpdf(np.asarray(w, np.float64), float(lam), np, erfcx)))
    else:
        loglik = jnp.sum(did_logpdf(w, lam, 2))
    return 0.5 * (1.0 - np.log(12.0)) + 0.5 * np.log(m * DID2_FISHER) - loglik
