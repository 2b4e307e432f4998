"""Dirichlet-process Gaussian mixture (truncated stick-breaking) as a NumPyro program.

The model of Kulis & Jordan (2012), §2.2 and §3.1: a DP mixture of isotropic
Gaussians with a fixed (or inverse-gamma distributed) variance ``sigma2`` and a
zero-mean Gaussian base measure of variance ``rho2``,

.. math::

    G \\sim \\mathrm{DP}(\\alpha, G_0), \\quad G_0 = N(0, \\rho I), \\qquad
    \\phi_i \\sim G, \\qquad x_i \\sim N(\\phi_i, \\sigma I),

written with a truncated stick-breaking prior so that NUTS and SVI can fit it
(:mod:`bayesclust.inference.mixtures.mcmc`).  Beside it, :func:`alpha_from_lam` is the
map under which the small-variance limit of the DP mixture's Gibbs sampler is
DP-means (:func:`bayesclust.dp_means`).

This module holds NumPyro programs only (no inference code) and imports only
jax, numpyro, :mod:`bayesclust.kernels` and :mod:`bayesclust._validation`.

References
----------
.. [KJ] B. Kulis and M. I. Jordan, "Revisiting k-means: New Algorithms via
   Bayesian Nonparametrics", ICML 2012.
.. [IJ] H. Ishwaran and L. F. James, "Gibbs sampling methods for
   stick-breaking priors", JASA 96 (2001) 161-173.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from .. import _validation as V
from ..kernels import stick_breaking
from .mixture import sample_points

__all__ = [
    "DEFAULT_TRUNCATION",
    "TruncationWarning",
    "alpha_from_lam",
    "log_alpha_from_lam",
    "dp_gmm",
    "check_truncation",
    "truncation_mass",
    "data_scaled_variances",
]

#: Fraction of the data's per-feature variance the ``"auto"`` component variance takes.
WITHIN_FRACTION = 0.25

#: Default number of stick-breaking components ``T`` (ours; docs/deviations.md#dp-truncation
#: used 50).  The mass left after ``T - 1`` breaks, ``prod_{j<T} (1 - v_j)``
#: with ``v_j ~ Beta(1, alpha)``, has prior mean ``(alpha / (1 + alpha))**(T-1)``:
#: 1.9e-6 for ``alpha = 1``, 1.2e-3 for ``alpha = 2`` and 3.1e-2 for
#: ``alpha = 5`` at ``T = 20``.  Ishwaran & James's bound on the total-variation
#: error of the truncated marginal of ``n`` points is ``~4 n exp(-(T-1)/alpha)``.
#: 20 keeps NUTS cheap (the cost is linear in ``T``) and suffices for the
#: ``alpha <~ 2`` and ``k <~ 10`` regime of the paper's experiments; the
#: posterior check :func:`check_truncation` warns when it does not.
DEFAULT_TRUNCATION = 20


class TruncationWarning(UserWarning):
    """The last stick-breaking component carries non-negligible posterior mass."""


# --------------------------------------------------------------------------- #
# Validation helpers (concrete values are checked, tracers pass through)
# --------------------------------------------------------------------------- #


def _is_tracer(value) -> bool:
    return isinstance(value, jax.core.Tracer)


def _positive(value, name: str, *, allow_zero: bool = False):
    """``value`` as a float after a finite-and-positive check; tracers pass through."""
    if _is_tracer(value):
        return value
    if isinstance(value, jax.Array):
        value = jax.device_get(value)
    if allow_zero:
        return V.check_nonnegative(value, name)
    return V.check_positive(value, name)


def _check_prior(prior, name: str):
    """A scalar numpyro distribution supported on the positive reals (or ``None``)."""
    if prior is None:
        return None
    if not isinstance(prior, dist.Distribution):
        raise TypeError(
            f"{name} must be a numpyro distribution (e.g. dist.Gamma(1.0, 1.0)) or None, "
            f"got {type(prior).__name__}"
        )
    if prior.batch_shape != () or prior.event_shape != ():
        raise ValueError(
            f"{name} must be a scalar distribution, got batch_shape {prior.batch_shape} "
            f"and event_shape {prior.event_shape}"
        )
    lower = getattr(prior.support, "lower_bound", None)
    if _is_tracer(lower):  # a prior rebuilt inside a compiled caller (checked before it)
        return prior
    if lower is None or not float(jax.device_get(lower)) >= 0.0:
        raise ValueError(
            f"{name} must be supported on the positive reals (a variance or a "
            f"concentration), got support {prior.support}"
        )
    return prior


def _check_data(X, n, d):
    """Validate ``X`` (finite, 2-D) or the ``(n, d)`` of generative mode."""
    if X is None:
        if n is None or d is None:
            raise ValueError("n and d must be given when X is None (generative mode)")
        return None, V.check_int(n, "n", minimum=1), V.check_int(d, "d", minimum=1)
    if _is_tracer(X):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    else:
        X = V.check_array(X, "X")
        V.check_squares_representable(X, "X")  # the likelihood's squared distances
    n_x, d_x = X.shape
    if n is not None and V.check_int(n, "n", minimum=1) != n_x:
        raise ValueError(f"n={n} does not match X, which has {n_x} rows")
    if d is not None and V.check_int(d, "d", minimum=1) != d_x:
        raise ValueError(f"d={d} does not match X, which has {d_x} columns")
    return jnp.asarray(X), n_x, d_x


def data_scaled_variances(X, sigma2="auto", rho2="auto") -> tuple[float, float]:
    r"""The isotropic model's ``(sigma2, rho2)``, ``"auto"`` entries scaled to the data.

    With :math:`s^2 = \operatorname{tr}(\hat\Sigma) / d` the data's mean per-feature
    variance, ``"auto"`` gives

    .. math::

        \sigma^2 = s^2 / 4, \qquad \rho^2 = 3 s^2 / 4,

    so that the prior predictive variance of one coordinate, :math:`\sigma^2 + \rho^2`,
    is the data's, a quarter of it within clusters.  Both scale with the data: the
    posterior over partitions does not depend on the data's units.  Data without spread
    (one row, or identical rows: one cluster whatever the scale) take :math:`s^2 = 1`.
    A number is returned as given (validated).  See
    ``docs/deviations.md#dp-gmm-data-scaled-prior``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    sigma2, rho2 : float or "auto"

    Returns
    -------
    (sigma2, rho2) : tuple of float

    Raises
    ------
    ValueError
        On a value that is neither ``"auto"`` nor a positive finite number, or when an
        ``"auto"`` value is asked of data with infinite variance.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> data_scaled_variances(X)
    (0.25, 0.75)
    >>> data_scaled_variances(10 * X, rho2=100.0)
    (25.0, 100.0)
    """
    if X is not None and np.ndim(X) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {np.shape(X)}")
    X = V.check_array(X, "X")
    for name, value in (("sigma2", sigma2), ("rho2", rho2)):
        if isinstance(value, str) and value != "auto":
            raise ValueError(f"{name} must be a positive number or 'auto', got {value!r}")
    s2 = None
    if isinstance(sigma2, str) or isinstance(rho2, str):
        with np.errstate(over="ignore", invalid="ignore"):
            s2 = float(np.mean(np.var(np.asarray(X, np.float64), axis=0)))
        if not np.isfinite(s2):
            auto = "sigma2" if isinstance(sigma2, str) else "rho2"
            raise ValueError(f"{auto}='auto' needs X's variance, which overflows float64 (X has "
                             f"values up to {float(np.max(np.abs(X))):.3g}); rescale X or pass "
                             f"{auto} explicitly")

    def resolve(value, name, fraction):
        if isinstance(value, str):
            return fraction * (s2 if s2 > 0 else 1.0)
        return float(_positive(value, name))

    return (resolve(sigma2, "sigma2", WITHIN_FRACTION),
            resolve(rho2, "rho2", 1.0 - WITHIN_FRACTION))


# --------------------------------------------------------------------------- #
# The alpha(lambda) map of the small-variance asymptotics
# --------------------------------------------------------------------------- #


def _any_traced(*values) -> bool:
    return any(_is_tracer(v) for v in values)


def log_alpha_from_lam(lam, sigma2, rho2, d):
    """``log alpha`` of the DP concentration that turns the Gibbs sampler into DP-means.

    .. math::

        \\log\\alpha = \\tfrac{d}{2}\\,\\mathrm{log1p}(\\rho / \\sigma)
                       - \\frac{\\lambda}{2\\sigma}

    Parameters
    ----------
    lam : float
        DP-means penalty (a **squared** distance), ``>= 0``.
    sigma2 : float
        Component **variance** ``sigma`` of KJ, ``> 0``.
    rho2 : float
        **Variance** ``rho`` of the Gaussian prior on the means, ``> 0``.
    d : int
        Dimension of the data, ``>= 1``.

    Returns
    -------
    float or jax.Array
        A Python float (exact float64 arithmetic) for concrete scalar inputs;
        a JAX scalar when an input is traced (inside ``jit``/``vmap``/``grad``,
        e.g. with a sampled ``sigma2``; traced values are not validated).
        Stays finite where :func:`alpha_from_lam` over/underflows (e.g.
        ``sigma2 = 1e-6``).

    Raises
    ------
    ValueError, TypeError
        On a negative or non-finite ``lam``, a non-positive ``sigma2`` or
        ``rho2``, or a non-integer ``d``.

    See Also
    --------
    alpha_from_lam

    Examples
    --------
    >>> round(log_alpha_from_lam(1.0, 0.5, 100.0, 2), 6)
    4.303305
    """
    lam = _positive(lam, "lam", allow_zero=True)
    sigma2 = _positive(sigma2, "sigma2")
    rho2 = _positive(rho2, "rho2")
    d = V.check_int(d, "d", minimum=1)
    if _any_traced(lam, sigma2, rho2):
        return 0.5 * d * jnp.log1p(rho2 / sigma2) - lam / (2.0 * sigma2)
    return 0.5 * d * math.log1p(rho2 / sigma2) - lam / (2.0 * sigma2)


def alpha_from_lam(lam, sigma2, rho2, d):
    """DP concentration whose small-variance Gibbs limit is DP-means with penalty ``lam``.

    .. math::

        \\alpha = (1 + \\rho/\\sigma)^{d/2} \\exp\\left(-\\frac{\\lambda}{2\\sigma}\\right)

    With this ``alpha`` the new-cluster weight of the DP mixture's Gibbs
    sampler, ``alpha (2 pi (rho + sigma))^{-d/2} exp(-|x|^2 / (2 (rho + sigma)))``,
    shares the factor ``(2 pi sigma)^{-d/2}`` of the existing-cluster weights,
    because ``(1 + rho/sigma)^{d/2} (2 pi (rho + sigma))^{-d/2} = (2 pi sigma)^{-d/2}``;
    the Gibbs probabilities become ``exp(-[lam + sigma/(rho + sigma) |x|^2] / (2 sigma))``
    against ``n_{-i,c} exp(-|x - mu_c|^2 / (2 sigma))``, and as ``sigma -> 0``
    the point joins the nearest mean unless its squared distance exceeds ``lam``
    (KJ §3.1, Algorithm 1).

    Parameters
    ----------
    lam : float
        DP-means penalty (a **squared** distance), ``>= 0``.
    sigma2 : float
        Component **variance**, ``> 0``.
    rho2 : float
        Prior **variance** of the means, ``> 0`` (KJ use 100).
    d : int
        Dimension, ``>= 1``.

    Returns
    -------
    float or jax.Array
        ``exp(log_alpha_from_lam(...))``; computed in log space, so the result
        is exact whenever it is representable, and ``0.0`` / ``inf`` when it
        under/overflows (use :func:`log_alpha_from_lam` then).

    References
    ----------
    Kulis & Jordan (2012), §3.1.

    Examples
    --------
    >>> round(alpha_from_lam(1.0, 0.5, 100.0, 2), 4)
    73.9438
    """
    return _exp(log_alpha_from_lam(lam, sigma2, rho2, d))


def _exp(log_value):
    """``exp`` of a float (``inf`` on overflow) or of a JAX scalar."""
    if isinstance(log_value, float):
        try:
            return math.exp(log_value)
        except OverflowError:
            return math.inf
    return jnp.exp(log_value)


_stick_breaking = jax.jit(stick_breaking)


# --------------------------------------------------------------------------- #
# The model
# --------------------------------------------------------------------------- #


def dp_gmm(
    X=None,
    *,
    n=None,
    d=None,
    truncation=DEFAULT_TRUNCATION,
    alpha=1.0,
    sigma2=1.0,
    rho2=100.0,
    alpha_prior=None,
    sigma2_prior=None,
):
    """DP mixture of isotropic Gaussians, truncated stick-breaking, assignments marginalised.

    .. math::

        v_k &\\sim \\mathrm{Beta}(1, \\alpha), \\quad k = 1..T-1, \\qquad
        w = \\mathrm{stick\\_breaking}(v) \\in \\Delta^{T-1} \\\\
        \\mu_k &\\sim N(0, \\rho I), \\quad k = 1..T \\\\
        p(x_i \\mid w, \\mu, \\sigma) &= \\sum_{k=1}^{T} w_k N(x_i \\mid \\mu_k, \\sigma I)

    with ``w_k = v_k prod_{j<k}(1 - v_j)`` and ``w_T = prod_{j<T}(1 - v_j)``
    (:func:`bayesclust.kernels.stick_breaking`), ``sigma = sigma2`` and
    ``rho = rho2`` both **variances** (KJ §2.2, §3.1, §6.1).  The assignments
    ``z_i`` are summed out so that NUTS sees a smooth density; their exact
    conditional ``p(z_i = k | x_i, w, mu, sigma) ∝ w_k N(x_i | mu_k, sigma I)``
    is sampled after the fact by :mod:`bayesclust.inference.mixtures.mcmc`.

    Parameters
    ----------
    X : array, shape (n, d), optional
        Observed data (finite).  Centre it first: the prior on the means is
        centred at 0.  ``None`` runs the model generatively (prior/posterior
        predictive): ``z`` is sampled explicitly and ``x`` is drawn.
    n, d : int, optional
        Number of points and dimension in generative mode (``X=None``); when
        ``X`` is given they are optional and must match it.
    truncation : int, default :data:`DEFAULT_TRUNCATION`
        Number of components ``T >= 2`` (``T - 1`` sticks).
    alpha : float, default 1.0
        DP concentration (> 0); ignored when ``alpha_prior`` is given.  Use
        :func:`alpha_from_lam` for the DP-means correspondence.
    sigma2 : float, default 1.0
        Component **variance** (> 0); ignored when ``sigma2_prior`` is given.
    rho2 : float, default 100.0
        **Variance** of the zero-mean Gaussian prior on the means (> 0;
        KJ use 100 throughout).
    alpha_prior : numpyro Distribution, optional
        Scalar prior on ``alpha``, e.g. ``dist.Gamma(1.0, 1.0)`` (shape, rate;
        "as is standard for DP mixtures", KJ §6.1).
    sigma2_prior : numpyro Distribution, optional
        Scalar prior on ``sigma2``, e.g. ``dist.InverseGamma(1.0, 1.0)`` (KJ §6.1).

    Raises
    ------
    ValueError, TypeError
        When ``truncation < 2``, ``alpha``, ``sigma2`` or ``rho2`` are not
        positive and finite, ``X`` is not a finite 2-D array, or a prior is
        not a scalar positive distribution (all naming the argument).

    Returns
    -------
    array, shape (n, d)
        ``X``, or the generated points in generative mode.

    Notes
    -----
    Sites: ``alpha`` (sample with a prior, else a deterministic constant, so
    that every draw records it), ``sigma2`` (likewise), ``v`` (sample, plate
    ``"sticks"``, shape (T-1,)), ``weights`` (deterministic, (T,)), ``means``
    (sample, plate ``"components"``, (T, d)), ``log_likelihood``
    (deterministic: ``sum_i log p(x_i | w, mu, sigma)``), ``x`` (plate
    ``"data"``: observed under :class:`IsotropicGaussianMixture`, or drawn in
    generative mode) and ``z`` (generative mode only).

    Default truncation: see :data:`DEFAULT_TRUNCATION`; check it after
    sampling with :func:`check_truncation`.  Sticks have no ordering
    constraint, so label switching is expected; it does not affect the label
    draws' co-clustering, ``n_clusters`` or NMI.  KJ's Gibbs sampler (Neal's
    Algorithm 2) is the non-truncated counterpart; its small-variance limit
    with ``alpha = alpha_from_lam(lam, sigma2, rho2, d)`` is DP-means.

    References
    ----------
    Kulis & Jordan (2012), §2.2, §3.1, §6.1;
    Ishwaran & James (2001) for truncated stick-breaking.

    Examples
    --------
    >>> import jax
    >>> from numpyro.infer import Predictive
    >>> prior = Predictive(dp_gmm, num_samples=3, parallel=True)(jax.random.PRNGKey(0), n=5, d=2, truncation=4)
    >>> prior["x"].shape, prior["z"].shape, prior["weights"].shape
    ((3, 5, 2), (3, 5), (3, 4))
    """
    X, n, d = _check_data(X, n, d)
    T = V.check_int(truncation, "truncation", minimum=2)
    rho2 = _positive(rho2, "rho2")
    alpha_prior = _check_prior(alpha_prior, "alpha_prior")
    sigma2_prior = _check_prior(sigma2_prior, "sigma2_prior")

    if alpha_prior is None:
        alpha = numpyro.deterministic("alpha", jnp.asarray(_positive(alpha, "alpha")))
    else:
        alpha = numpyro.sample("alpha", alpha_prior)
    if sigma2_prior is None:
        sigma2 = numpyro.deterministic("sigma2", jnp.asarray(_positive(sigma2, "sigma2")))
    else:
        sigma2 = numpyro.sample("sigma2", sigma2_prior)

    with numpyro.plate("sticks", T - 1):
        v = numpyro.sample("v", dist.Beta(1.0, alpha))
    weights = numpyro.deterministic("weights", _stick_breaking(v))

    with numpyro.plate("components", T):
        means = numpyro.sample(
            "means", dist.Normal(0.0, jnp.sqrt(rho2)).expand([d]).to_event(1)
        )

    return sample_points(weights, means, sigma2, X, n)


# --------------------------------------------------------------------------- #
# Truncation diagnostic
# --------------------------------------------------------------------------- #


def truncation_mass(weights) -> float:
    """Posterior mean of the last component's weight ``w_T = prod_{j<T}(1 - v_j)``.

    Parameters
    ----------
    weights : array, shape (..., T)
        Weight draws (any leading draw/chain axes).

    Returns
    -------
    float
    """
    weights = V.check_kernel_array(weights, "weights", ndim=None)
    weights = jnp.asarray(weights)
    if weights.ndim < 1 or weights.shape[-1] < 2:
        raise ValueError(f"weights must have shape (..., T) with T >= 2, got {weights.shape}")
    return float(jnp.mean(weights[..., -1]))


def check_truncation(weights, tol: float = 0.01, *, stacklevel: int = 2) -> float:
    """Warn when the truncation of the stick-breaking prior may be too small.

    In the infinite model the remainder ``w_T = prod_{j<T}(1 - v_j)`` would be
    spread over components ``T, T+1, ...``; the truncated model puts it on one
    atom.  When its posterior mean exceeds ``tol`` the truncation can matter
    and a :class:`TruncationWarning` is issued.

    Parameters
    ----------
    weights : array, shape (..., T)
        Posterior (or prior) draws of the weights, e.g. the ``"weights"``
        site of :func:`dp_gmm`.
    tol : float, default 0.01
        Threshold in (0, 1).
    stacklevel : int, default 2
        Passed to :func:`warnings.warn`.

    Returns
    -------
    float
        The posterior mean mass of the last component.

    Notes
    -----
    Sticks are not ordered, so a chain can also park an occupied cluster in
    the last slot (label switching); the warning then says that the last
    component is in use, which a larger ``truncation`` also removes.
    """
    weights = V.check_kernel_array(weights, "weights", ndim=None)
    tol = V.check_positive(tol, "tol")
    if tol >= 1:
        raise ValueError(f"tol must be in (0, 1), got {tol}")
    mass = truncation_mass(weights)
    if not math.isfinite(mass):
        raise ValueError("weights contain NaN or infinite values")
    if mass > tol:
        T = jnp.shape(weights)[-1]
        warnings.warn(
            TruncationWarning(
                f"the last of {T} stick-breaking components holds {mass:.3g} of the mass on "
                f"average (> tol={tol:g}); increase `truncation` (or lower alpha)"
            ),
            stacklevel=stacklevel,
        )
    return mass
