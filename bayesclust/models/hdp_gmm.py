"""Hierarchical DP Gaussian mixture for grouped data as a NumPyro program.

The model of Kulis & Jordan (2012), §4, after Teh et al. (2006): ``D`` data
sets share one set of global components (means ``mu_k``); every data set
``j`` mixes them with its own weights ``pi_j``, drawn around the global
weights ``beta``,

.. math::

    G_0 \\sim \\mathrm{DP}(\\gamma, H), \\quad H = N(0, \\rho I), \\qquad
    G_j \\sim \\mathrm{DP}(\\alpha, G_0), \\qquad
    \\phi_{ij} \\sim G_j, \\qquad x_{ij} \\sim N(\\phi_{ij}, \\sigma I),

written with a truncated stick-breaking ``G_0`` (``L`` atoms) so that NUTS and
SVI can fit it (:mod:`bayesclust.inference.mixtures.mcmc`): given the ``L`` atoms of
``G_0``, ``DP(alpha, G_0)`` puts ``Dirichlet(alpha beta)`` weights on them
(the defining property of the DP; Teh et al. 2006, §4), and the point
assignments are summed out.  Beside it,
:func:`hdp_log_concentrations_from_lam` is the map under which the
small-variance limit of the HDP's Chinese-restaurant-franchise Gibbs sampler
(:func:`bayesclust.inference.mixtures.hdp_gibbs.gibbs_hdp_gmm`) is the hard Gaussian
HDP (:func:`bayesclust.hard_hdp`).

This module holds NumPyro programs only (no inference code) and imports only
numpy, jax, numpyro, :mod:`bayesclust.kernels`, :mod:`bayesclust._validation`
and the shared pieces of :mod:`bayesclust.models.dp_gmm`.

References
----------
.. [Teh] Y. W. Teh, M. I. Jordan, M. J. Beal and D. M. Blei, "Hierarchical
   Dirichlet processes", JASA 101 (2006) 1566-1581.
.. [KJ] B. Kulis and M. I. Jordan, "Revisiting k-means: New Algorithms via
   Bayesian Nonparametrics", ICML 2012, §4.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from .. import _validation as V
from .dp_gmm import (
    DEFAULT_TRUNCATION,
    _any_traced,
    _check_data,
    _check_prior,
    _exp,
    _is_tracer,
    _positive,
    _stick_breaking,
    log_alpha_from_lam,
)
from .mixture import sample_points

__all__ = [
    "BETA_FLOOR",
    "DEFAULT_TRUNCATION",
    "GroupedData",
    "hdp_gmm",
    "hdp_concentrations_from_lam",
    "hdp_log_concentrations_from_lam",
    "prepare_groups",
]

#: Floor on the global weights inside the Dirichlet concentration,
#: ``pi_j ~ Dirichlet(alpha * max(beta, BETA_FLOOR))`` (ours).  The late
#: stick-breaking weights ``beta_k = b_k prod_{l<k}(1 - b_l)`` underflow to 0 in
#: float32 (and NUTS visits such states), and a zero concentration makes the
#: Dirichlet invalid (``log Gamma(0) = inf``); near zero, the terms
#: ``log Gamma(alpha beta_k)`` and their gradients ``~ 1 / (alpha beta_k)``
#: overflow.  The floor is relative to ``alpha`` so that it changes the model
#: only for components whose global weight is below ``1e-6``: their prior
#: expected weight in any data set, ``E[pi_jk] = beta_k``, rises to at most
#: ``1e-6`` (``L * 1e-6`` in total), which no data set of realistic size can
#: detect.  The recorded ``"beta"`` site is the unfloored weight.  (The
#: concentration itself still underflows if ``alpha < ~1e-32`` in float32;
#: that regime -- e.g. :func:`hdp_concentrations_from_lam` at small
#: ``sigma2`` -- is the Gibbs sampler's, not NUTS's.)
BETA_FLOOR = 1e-6


# --------------------------------------------------------------------------- #
# Grouped data
# --------------------------------------------------------------------------- #


class GroupedData(NamedTuple):
    """Grouped data stacked for :func:`hdp_gmm` (the result of :func:`prepare_groups`).

    Attributes
    ----------
    X : ndarray, shape (n, d)
        All rows, data set 0 first; within a data set rows keep their input
        order.  float64 if any input is float64, float32 otherwise.
    group_ids : ndarray of int32, shape (n,)
        Data set index ``0..n_groups-1`` of every stacked row (non-decreasing).
    n_groups : int
        Number of data sets ``D``.
    order : ndarray of int64, shape (n,)
        ``order[r]``: the input row (of ``X``, or of the concatenated list) of
        stacked row ``r``.
    group_order : ndarray, shape (D,)
        The identifier of every data set: ``0..D-1`` for a list, the sorted
        unique ``group_ids`` given otherwise.
    """

    X: np.ndarray
    group_ids: np.ndarray
    n_groups: int
    order: np.ndarray
    group_order: np.ndarray

    @property
    def model_args(self) -> tuple:
        """``(X, group_ids, n_groups)``, the positional arguments of :func:`hdp_gmm`."""
        return self.X, self.group_ids, self.n_groups

    def to_input_order(self, values) -> np.ndarray:
        """Reorder per-row values (last axis, stacked order) back to the input rows.

        Parameters
        ----------
        values : array_like, shape (..., n)
            E.g. the label draws ``(chains, draws, n)`` of a posterior fitted
            on :attr:`model_args`.

        Returns
        -------
        ndarray, shape (..., n)
            ``out[..., order[r]] = values[..., r]``.
        """
        values = np.asarray(values)
        n = self.order.shape[0]
        if values.ndim < 1 or values.shape[-1] != n:
            raise ValueError(
                f"values must have {n} rows on the last axis, got shape {values.shape}"
            )
        back = np.empty(n, np.int64)
        back[self.order] = np.arange(n)
        return values[..., back]


def prepare_groups(groups, group_ids=None) -> GroupedData:
    """Validate grouped data and stack it into the arguments of :func:`hdp_gmm`.

    Parameters
    ----------
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets (a list, or a 3-D array with one data set per leading
        index).  With ``group_ids``, a single array ``X`` whose rows are split
        into data sets by ``group_ids``.
    group_ids : array_like of int, shape (n,), optional
        The data set of every row of ``groups`` (any integer identifiers;
        data sets are ordered by sorted identifier).

    Returns
    -------
    GroupedData
        ``X`` stacked group-major, ``group_ids`` ``0..D-1``, ``n_groups``,
        ``order`` (input row of every stacked row) and ``group_order``; pass
        ``*data.model_args`` to :func:`hdp_gmm` (or to
        :func:`bayesclust.inference.mixtures.mcmc.run_nuts`), and map per-row results
        back with :meth:`GroupedData.to_input_order`.

    Raises
    ------
    TypeError, ValueError
        No data set, an empty data set, NaN/inf, wrong rank, data sets with
        different numbers of features, ``group_ids`` of the wrong length or not
        integer (:func:`bayesclust._validation.check_groups`).

    Notes
    -----
    The prior on the means is centred at 0: centre ``X`` (pooled over data
    sets) before fitting.

    Examples
    --------
    >>> import numpy as np
    >>> data = prepare_groups([np.zeros((2, 1)), np.ones((3, 1))])
    >>> data.group_ids, data.n_groups
    (array([0, 0, 1, 1, 1], dtype=int32), 2)
    >>> data = prepare_groups(np.arange(4.0)[:, None], group_ids=[7, 3, 7, 3])
    >>> data.X.ravel(), data.group_ids, data.group_order
    (array([1., 3., 0., 2.]), array([0, 0, 1, 1], dtype=int32), array([3, 7]))
    >>> data.to_input_order(data.X.ravel())
    array([0., 1., 2., 3.])
    """
    X, gid, order, group_order = V.check_groups(groups, group_ids)
    return GroupedData(X, gid.astype(np.int32), int(len(group_order)), order, group_order)


def _check_group_ids(group_ids, n, n_groups):
    """Validate the model's ``group_ids`` (values ``0..n_groups-1``, every data set used).

    Returns ``(group_ids as int32, n, n_groups)``; traced ids are shape-checked
    only and then need ``n_groups``.
    """
    if group_ids is None:
        raise TypeError(
            "group_ids must be given: the data set index (0..n_groups-1) of every row of X; "
            "build X, group_ids and n_groups from a list of data sets with prepare_groups(...)"
        )
    if n_groups is not None:
        n_groups = V.check_int(n_groups, "n_groups", minimum=1)
    if _is_tracer(group_ids):
        if group_ids.ndim != 1 or (n is not None and group_ids.shape[0] != n):
            raise ValueError(
                f"group_ids must be a 1-D array of length {n}, got shape {group_ids.shape}"
            )
        if not jnp.issubdtype(group_ids.dtype, jnp.integer):
            raise TypeError(f"group_ids must be an integer array, got dtype {group_ids.dtype}")
        if n_groups is None:
            raise ValueError("n_groups must be given when group_ids is traced (inside jit/vmap)")
        return group_ids.astype(jnp.int32), group_ids.shape[0], n_groups
    ids = V.check_labels(group_ids, "group_ids")
    if n is not None and ids.shape[0] != n:
        raise ValueError(f"group_ids has length {ids.shape[0]} but X has {n} rows")
    if ids.min() < 0:
        raise ValueError(
            f"group_ids must be data set indices 0..n_groups-1, got {ids.min()}; "
            "map arbitrary identifiers with prepare_groups(X, group_ids)"
        )
    D = int(ids.max()) + 1
    if n_groups is None:
        n_groups = D
    elif D > n_groups:
        raise ValueError(f"group_ids must be < n_groups={n_groups}, got {D - 1}")
    empty = np.flatnonzero(np.bincount(ids, minlength=n_groups) == 0)
    if empty.size:
        raise ValueError(
            f"data set(s) {empty[:5].tolist()} of n_groups={n_groups} have no rows in "
            "group_ids: every data set needs at least one point (prepare_groups maps "
            "arbitrary identifiers to 0..D-1)"
        )
    return jnp.asarray(ids, jnp.int32), ids.shape[0], n_groups


# --------------------------------------------------------------------------- #
# The (alpha, gamma)(lam_local, lam_global) map of the small-variance asymptotics
# --------------------------------------------------------------------------- #


def hdp_log_concentrations_from_lam(lam_local, lam_global, sigma2, rho2, d):
    """``(log alpha, log gamma)`` whose small-variance CRF limit is the hard Gaussian HDP.

    .. math::

        \\log\\alpha = -\\frac{\\lambda_\\ell}{2\\sigma}, \\qquad
        \\log\\gamma = \\tfrac{d}{2}\\,\\mathrm{log1p}(\\rho/\\sigma)
                       - \\frac{\\lambda_g}{2\\sigma}

    (our derivation, docs/deviations.md#hdp-concentration-map; Kulis & Jordan only say the scalings are "analogous"
    to the DP case).  In the Chinese restaurant franchise (Teh et al. 2006,
    §5.1), a point ``x`` of data set ``j`` joins

    * an existing table serving dish ``p``: ``∝ n_jt N(x | mu_p, sigma I)``;
    * a new table serving existing dish ``p``:
      ``∝ alpha m_p / (m + gamma) N(x | mu_p, sigma I)``;
    * a new table with a new dish:
      ``∝ alpha gamma / (m + gamma) N(x | 0, (rho + sigma) I)``.

    With these ``alpha`` and ``gamma`` every option carries the factor
    ``(2 pi sigma)^{-d/2}`` (because ``(1 + rho/sigma)^{d/2} (2 pi (rho +
    sigma))^{-d/2} = (2 pi sigma)^{-d/2}``), the counts and ``1 / (m + gamma)``
    are sub-exponential, and the exponents are ``-cost / (2 sigma)`` with costs
    ``|x - mu_p|^2``, ``lam_local + |x - mu_p|^2`` and ``lam_local +
    lam_global`` (up to ``sigma/(rho + sigma) |x|^2 -> 0``): as ``sigma -> 0``
    the most probable option wins, which is step 4 of KJ's Algorithm 2 (the
    table-to-dish step gives its step 5 the same way).

    Parameters
    ----------
    lam_local : float
        :math:`\\lambda_\\ell`, the penalty per local cluster (a **squared**
        distance), ``>= 0``.
    lam_global : float
        :math:`\\lambda_g`, the penalty per global cluster (a **squared**
        distance), ``>= 0``.
    sigma2 : float
        Component **variance** ``sigma`` of KJ, ``> 0``.
    rho2 : float
        **Variance** ``rho`` of the Gaussian prior on the means, ``> 0``.
    d : int
        Dimension of the data, ``>= 1``.

    Returns
    -------
    (log_alpha, log_gamma) : tuple of float or jax.Array
        Python floats (float64 arithmetic) for concrete inputs; JAX scalars
        when an input is traced (not validated then).  Finite where
        :func:`hdp_concentrations_from_lam` under/overflows (small ``sigma2``).

    Raises
    ------
    ValueError, TypeError
        On a negative or non-finite ``lam_local`` / ``lam_global``, a
        non-positive ``sigma2`` or ``rho2``, or a non-integer ``d`` (naming the
        argument).

    See Also
    --------
    hdp_concentrations_from_lam
    bayesclust.models.dp_gmm.log_alpha_from_lam : the DP case; ``log gamma``
        here is that map at ``lam_global``.

    References
    ----------
    Kulis & Jordan (2012), §4.1; Teh et al. (2006), §5.1.

    Examples
    --------
    >>> log_alpha, log_gamma = hdp_log_concentrations_from_lam(1.0, 2.0, 0.5, 100.0, 2)
    >>> round(log_alpha, 6), round(log_gamma, 6)
    (-1.0, 3.303305)
    """
    lam_local = _positive(lam_local, "lam_local", allow_zero=True)
    lam_global = _positive(lam_global, "lam_global", allow_zero=True)
    sigma2 = _positive(sigma2, "sigma2")
    rho2 = _positive(rho2, "rho2")
    d = V.check_int(d, "d", minimum=1)
    log_gamma = log_alpha_from_lam(lam_global, sigma2, rho2, d)
    log_alpha = -lam_local / (2.0 * sigma2)
    if _any_traced(lam_local, sigma2):
        log_alpha = jnp.asarray(log_alpha)
    return log_alpha, log_gamma


def hdp_concentrations_from_lam(lam_local, lam_global, sigma2, rho2, d):
    """``(alpha, gamma)`` whose small-variance CRF limit is the hard Gaussian HDP.

    .. math::

        \\alpha = \\exp\\left(-\\frac{\\lambda_\\ell}{2\\sigma}\\right), \\qquad
        \\gamma = (1 + \\rho/\\sigma)^{d/2}
                  \\exp\\left(-\\frac{\\lambda_g}{2\\sigma}\\right)

    See :func:`hdp_log_concentrations_from_lam` for the derivation and the
    parameters.

    Returns
    -------
    (alpha, gamma) : tuple of float or jax.Array
        ``exp`` of :func:`hdp_log_concentrations_from_lam`, computed in log
        space: exact whenever representable, ``0.0`` / ``inf`` when it under/
        overflows (pass the logs then, e.g. ``gibbs_hdp_gmm(log_alpha=...,
        log_gamma=...)``).

    Examples
    --------
    >>> alpha, gamma = hdp_concentrations_from_lam(1.0, 2.0, 0.5, 100.0, 2)
    >>> round(alpha, 6), round(gamma, 4)
    (0.367879, 27.2024)
    """
    log_alpha, log_gamma = hdp_log_concentrations_from_lam(lam_local, lam_global, sigma2, rho2, d)
    return _exp(log_alpha), _exp(log_gamma)


@jax.jit
def _group_concentration(alpha, beta):
    """``alpha * max(beta, BETA_FLOOR)``, the Dirichlet concentration of every ``pi_j``."""
    return alpha * jnp.maximum(beta, BETA_FLOOR)


@jax.jit
def _boosted_dirichlet(gamma_draws, exponential_draws, concentration):
    """``softmax(log g - e / c)``: Dirichlet(c) weights from Gamma(c + 1) and Exp(1) variables.

    ``G ~ Gamma(c + 1)`` and ``U = exp(-E) ~ Uniform(0, 1)`` give ``G U^{1/c} ~
    Gamma(c)`` (Marsaglia & Tsang 2000), and normalised independent
    ``Gamma(c_k)`` variables are ``Dirichlet(c)``.
    """
    return jax.nn.softmax(jnp.log(gamma_draws) - exponential_draws / concentration, axis=-1)


# --------------------------------------------------------------------------- #
# The model
# --------------------------------------------------------------------------- #


def hdp_gmm(
    X=None,
    group_ids=None,
    n_groups=None,
    *,
    d=None,
    truncation=DEFAULT_TRUNCATION,
    alpha=1.0,
    gamma=1.0,
    sigma2=1.0,
    rho2=100.0,
    alpha_prior=None,
    gamma_prior=None,
    sigma2_prior=None,
    centered=False,
):
    """HDP mixture of isotropic Gaussians for grouped data, truncated, assignments marginalised.

    .. math::

        b_k &\\sim \\mathrm{Beta}(1, \\gamma), \\quad k = 1..L-1, \\qquad
        \\beta = \\mathrm{stick\\_breaking}(b) \\in \\Delta^{L-1} \\\\
        \\mu_k &\\sim N(0, \\rho I), \\quad k = 1..L \\\\
        \\pi_j &\\sim \\mathrm{Dirichlet}(\\alpha\\beta), \\quad j = 1..D \\\\
        p(x_i \\mid \\pi, \\mu, \\sigma) &= \\sum_{k=1}^{L} \\pi_{g_i k}\\,
            N(x_i \\mid \\mu_k, \\sigma I)

    with ``g_i = group_ids[i]`` the data set of point ``i``,
    ``beta_k = b_k prod_{l<k}(1 - b_l)`` and ``beta_L = prod_{l<L}(1 - b_l)``
    (:func:`bayesclust.kernels.stick_breaking`), ``sigma = sigma2`` and
    ``rho = rho2`` both **variances** (Kulis & Jordan 2012, §4; Teh et al.
    2006).  ``G_0 = sum_k beta_k delta_{mu_k}`` is the top-level DP truncated
    at ``L`` atoms; given it, ``G_j ~ DP(alpha, G_0)`` has exactly the weights
    ``pi_j ~ Dirichlet(alpha beta)`` on those atoms (the defining property of
    the DP; Teh et al. §4), so the truncation is the only approximation of the
    HDP (apart from the floor below).  The global component ``z_i`` of every
    point is summed out so that NUTS sees a smooth density; its exact conditional
    ``p(z_i = k | x_i, pi, mu, sigma) ∝ pi_{g_i k} N(x_i | mu_k, sigma I)``
    is sampled after the fact by :mod:`bayesclust.inference.mixtures.mcmc`.

    Parameters
    ----------
    X : array, shape (n, d), optional
        Observed data (finite), all data sets stacked (any row order).  Centre
        it first: the prior on the means is centred at 0.  ``None`` runs the
        model generatively (prior/posterior predictive): ``z`` is sampled
        explicitly and ``x`` is drawn.
    group_ids : array of int, shape (n,)
        Data set index ``0..n_groups-1`` of every row; every data set needs at
        least one row.  Build ``X``, ``group_ids`` and ``n_groups`` from a list
        of data sets (or from arbitrary identifiers) with
        :func:`prepare_groups`.  Required, also in generative mode (where it
        sets ``n``).
    n_groups : int, optional
        Number of data sets ``D``; default ``max(group_ids) + 1`` (required
        when ``group_ids`` is traced).
    d : int, optional
        Dimension in generative mode (``X=None``); when ``X`` is given it is
        optional and must match it.
    truncation : int, default :data:`DEFAULT_TRUNCATION`
        Number of global components ``L >= 2`` (``L - 1`` global sticks).
    alpha : float, default 1.0
        Local concentration (> 0) of every ``G_j ~ DP(alpha, G_0)``; ignored
        when ``alpha_prior`` is given.
    gamma : float, default 1.0
        Global concentration (> 0) of ``G_0 ~ DP(gamma, H)``; ignored when
        ``gamma_prior`` is given.  :func:`hdp_concentrations_from_lam` gives
        the pair for the hard-HDP correspondence.
    sigma2 : float, default 1.0
        Component **variance** (> 0); ignored when ``sigma2_prior`` is given.
    rho2 : float, default 100.0
        **Variance** of the zero-mean Gaussian prior on the means (> 0; KJ use
        100).
    alpha_prior, gamma_prior : numpyro Distribution, optional
        Scalar priors on ``alpha`` / ``gamma``, e.g. ``dist.Gamma(1.0, 1.0)``
        (shape, rate; Teh et al. 2006 use gamma priors on both).
    sigma2_prior : numpyro Distribution, optional
        Scalar prior on ``sigma2``, e.g. ``dist.InverseGamma(1.0, 1.0)``.
    centered : bool, default False
        ``True``: sample ``pi_j ~ Dirichlet(alpha beta)`` directly.  ``False``
        (ours): the same distribution written non-centred (see Notes), which
        NUTS samples without the divergences of the centred form.

    Returns
    -------
    array, shape (n, d)
        ``X``, or the generated points in generative mode.

    Raises
    ------
    ValueError, TypeError
        When ``truncation < 2``; ``alpha``, ``gamma``, ``sigma2`` or ``rho2``
        are not positive and finite; ``X`` is not a finite 2-D array;
        ``group_ids`` is missing, not integer, of the wrong length, negative,
        ``>= n_groups`` or leaves a data set empty; ``d`` does not match ``X``;
        a prior is not a scalar positive distribution; ``centered`` is not a
        bool (all naming the argument).

    Notes
    -----
    Sites: ``alpha``, ``gamma``, ``sigma2`` (samples with a prior, else
    deterministic constants, so that every draw records them); ``b`` (sample,
    plate ``"global_sticks"``, shape (L-1,)); ``beta`` (deterministic global
    weights, (L,)); ``means`` (sample, plate ``"components"``, (L, d)); ``pi``
    ((D, L), the weights of every data set: a sample in plate ``"groups"``
    when ``centered``, else deterministic, computed from the samples
    ``pi_gamma`` and ``pi_exponential`` ((D, L), plates ``"groups"`` x
    ``"components"``)); ``log_likelihood`` (deterministic, ``sum_i log p(x_i | pi, mu, sigma)``);
    ``x`` (plate ``"data"``, observed under
    :class:`IsotropicGaussianMixture`, or drawn in generative mode)
    and ``z`` (generative mode only).

    The Dirichlet concentration is ``c = alpha * max(beta, BETA_FLOOR)``: late
    stick-breaking weights underflow, and a zero concentration is not a
    Dirichlet (see :data:`BETA_FLOOR`, ours).

    Non-centred weights (ours, the default): concentrations ``c_k < 1`` make
    the density of ``pi_jk`` spike at 0, and the spread of ``log pi_jk``
    (about ``1 / c_k``) depends on the global sticks -- a funnel, on which
    NUTS diverges (about a quarter of the transitions on two-cluster toy data
    with ``alpha = gamma = 1``, ``L = 6``).  Writing ``Gamma(c) = G U^{1/c}``
    with ``G ~ Gamma(c + 1)`` and ``U ~ Uniform(0, 1)`` (Marsaglia & Tsang
    2000), ``E = -log U ~ Exp(1)``,

    .. math::

        g_{jk} \\sim \\mathrm{Gamma}(c_k + 1, 1), \\quad
        e_{jk} \\sim \\mathrm{Exp}(1), \\qquad
        \\pi_j = \\mathrm{softmax}_k\\left(\\log g_{jk} - e_{jk} / c_k\\right)
        \\sim \\mathrm{Dirichlet}(c),

    so ``e`` no longer depends on the sticks and the shapes ``c_k + 1 >= 1``
    of ``g`` are benign; the same toy run has no divergences.  The price is
    ``2 D L`` latent variables instead of ``D (L - 1)`` (the total of the
    Gamma variables is a nuisance direction).

    Only the global components are represented: the local clusters of the
    hard HDP (CRF tables) correspond to the distinct (data set, global
    component) pairs of a label draw.  Sticks have no ordering constraint, so
    label switching is expected; it does not affect co-clustering,
    ``n_clusters`` or NMI.  Check the truncation with
    :func:`bayesclust.models.dp_gmm.check_truncation` on the ``"beta"`` draws
    (``run_nuts`` does).

    References
    ----------
    Teh, Jordan, Beal & Blei (2006), §4-5; Kulis & Jordan (2012), §4;
    G. Marsaglia and W. W. Tsang, "A simple
    method for generating gamma variables", ACM TOMS 26 (2000) 363-372.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import Predictive
    >>> gid = np.array([0, 0, 0, 1, 1])
    >>> prior = Predictive(hdp_gmm, num_samples=3, parallel=True)(jax.random.PRNGKey(0), None, gid, d=2,
    ...                                            truncation=4)
    >>> prior["x"].shape, prior["z"].shape, prior["pi"].shape, prior["beta"].shape
    ((3, 5, 2), (3, 5), (3, 2, 4), (3, 4))
    """
    if X is None:
        if d is None:
            raise ValueError("d must be given when X is None (generative mode)")
        gid, n, D = _check_group_ids(group_ids, None, n_groups)
        _, n, d = _check_data(None, n, d)
    else:
        X, n, d = _check_data(X, None, d)
        gid, n, D = _check_group_ids(group_ids, n, n_groups)
    L = V.check_int(truncation, "truncation", minimum=2)
    rho2 = _positive(rho2, "rho2")
    if not isinstance(centered, (bool, np.bool_)):
        raise TypeError(f"centered must be a bool, got {centered!r}")
    priors = {
        "alpha": _check_prior(alpha_prior, "alpha_prior"),
        "gamma": _check_prior(gamma_prior, "gamma_prior"),
        "sigma2": _check_prior(sigma2_prior, "sigma2_prior"),
    }
    values = {}
    for name, value in (("alpha", alpha), ("gamma", gamma), ("sigma2", sigma2)):
        if priors[name] is None:
            values[name] = numpyro.deterministic(name, jnp.asarray(_positive(value, name)))
        else:
            values[name] = numpyro.sample(name, priors[name])
    alpha, gamma, sigma2 = values["alpha"], values["gamma"], values["sigma2"]

    with numpyro.plate("global_sticks", L - 1):
        b = numpyro.sample("b", dist.Beta(1.0, gamma))
    beta = numpyro.deterministic("beta", _stick_breaking(b))

    with numpyro.plate("components", L):
        means = numpyro.sample(
            "means", dist.Normal(0.0, jnp.sqrt(rho2)).expand([d]).to_event(1)
        )

    concentration = _group_concentration(alpha, beta)
    if centered:
        with numpyro.plate("groups", D):
            pi = numpyro.sample("pi", dist.Dirichlet(concentration))
    else:
        with numpyro.plate("groups", D, dim=-2), numpyro.plate("components", L, dim=-1):
            g = numpyro.sample("pi_gamma", dist.Gamma(concentration + 1.0, 1.0))
            e = numpyro.sample("pi_exponential", dist.Exponential(1.0))
        pi = numpyro.deterministic("pi", _boosted_dirichlet(g, e, concentration))

    weights = pi[gid]  # (n, L): the weights of every point's data set
    return sample_points(weights, means, sigma2, X, n)
