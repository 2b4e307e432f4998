"""NUTS / SVI glue: fit a program of :mod:`bayesclust.models` and return a ``Posterior``.

The NumPyro programs marginalise the cluster assignments (NUTS needs a smooth
density), so after sampling the parameters every draw gets a draw of the
labels from their exact conditional.  For a mixture of isotropic Gaussians
(:func:`bayesclust.models.dp_gmm.dp_gmm`) that conditional factorises over
points,

.. math::

    p(z_i = k \\mid x_i, w, \\mu, \\sigma) =
    \\frac{w_k N(x_i \\mid \\mu_k, \\sigma I)}{\\sum_j w_j N(x_i \\mid \\mu_j, \\sigma I)},

so the labels are a single vectorised categorical draw per posterior draw
(:func:`sample_mixture_labels`).  For the HDP mixture of grouped data
(:func:`bayesclust.models.hdp_gmm.hdp_gmm`) the weights are those of the
point's data set, ``w = pi_{g_i}``, and the labels are global components.
The label step is looked up per model name in :data:`LABEL_SAMPLERS` (and a
post-sampling check in :data:`POSTERIOR_CHECKS`), so that other models
register their own with :func:`register_model`.

References
----------
Kulis & Jordan (2012), "Revisiting k-means: New Algorithms via Bayesian
Nonparametrics", §2.2, §3.1, §6.1;
Hoffman & Gelman (2014) for NUTS; Kucukelbir et al. (2017) for ADVI (AutoNormal).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import categorical_inverse_cdf, isotropic_gaussian_logpdf
from ...models import dp_gmm as _dp_gmm

__all__ = [
    "run_nuts",
    "run_svi",
    "sample_mixture_labels",
    "register_model",
    "LABEL_SAMPLERS",
    "POSTERIOR_CHECKS",
]

#: Signature of a label sampler: ``fn(rng_key, samples, model_args, model_kwargs)``
#: with ``samples`` a dict of flat draws ``(num_draws, ...)``; returns int labels
#: of shape ``(num_draws, n)``.
LabelSampler = Callable[[jax.Array, dict, tuple, dict], jax.Array]

#: Entries of the label-draw working set ``draws x n x T`` per batch (bounds memory).
_LABEL_BATCH_ENTRIES = 1 << 24

_CHAIN_METHODS = ("sequential", "vectorized", "parallel")


# --------------------------------------------------------------------------- #
# Label draws from the exact conditional
# --------------------------------------------------------------------------- #


def _mixture_labels_one(key, X, weights, means, sigma2, group_ids):
    log_lik = isotropic_gaussian_logpdf(X, means, sigma2)
    # weights (T,), or (D, T) with one row per data set: each point takes its row.
    log_w = jnp.log(weights) if group_ids is None else jnp.log(weights)[group_ids]
    u = 1.0 - jax.random.uniform(key, X.shape[:1], log_lik.dtype)  # (0, 1]
    return categorical_inverse_cdf(log_lik + log_w, u)


@functools.partial(jax.jit, static_argnames="batch")
def _mixture_labels(keys, X, weights, means, sigma2, group_ids, batch):
    return lax.map(
        lambda a: _mixture_labels_one(a[0], X, a[1], a[2], a[3], group_ids),
        (keys, weights, means, sigma2),
        batch_size=batch,
    )


def sample_mixture_labels(rng_key, X, weights, means, sigma2, group_ids=None) -> jax.Array:
    """Draw ``z_i ~ p(z_i | x_i, w, mu, sigma2)`` for every draw of an isotropic mixture.

    .. math::

        \\log p(z_i = k \\mid \\cdot) = \\log w_{g_i k} + \\log N(x_i \\mid \\mu_k, \\sigma I)
            - \\operatorname{logsumexp}_j(\\ldots)

    computed with :func:`bayesclust.kernels.isotropic_gaussian_logpdf`, then one
    inverse-CDF draw per point (:func:`bayesclust.kernels.categorical_inverse_cdf`:
    one uniform per point, where Gumbel-max needs one per point and component,
    which made the random bits most of the cost).  Without ``group_ids`` all
    points share one weight vector (``w_{g_i k} = w_k``, e.g.
    :func:`~bayesclust.models.dp_gmm.dp_gmm`); with them point ``i`` uses the
    weights of its data set ``g_i`` (e.g. ``pi`` of
    :func:`~bayesclust.models.hdp_gmm.hdp_gmm`).

    Parameters
    ----------
    rng_key : jax key or int
    X : array, shape (n, d)
    weights : array, shape (S, T), or (S, D, T) with ``group_ids``
        Mixture weights of ``S`` draws (zeros allowed: never chosen); with
        ``group_ids``, one weight vector per data set.
    means : array, shape (S, T, d)
    sigma2 : array, shape (S,) or float
        Component **variance** of every draw.
    group_ids : array of int, shape (n,), optional
        Data set ``0..D-1`` of every point.

    Returns
    -------
    jax.Array of int32, shape (S, n)

    Notes
    -----
    Draws are processed in batches of at most ``2**24 / (n T)`` (a vmap
    inside :func:`jax.lax.map`), so memory stays bounded for long chains.
    """
    key = V.as_rng_key(rng_key)
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    weights = V.check_kernel_array(weights, "weights", ndim=(2, 3), min_rows=1)
    if not V.traced(weights) and bool(np.any(np.asarray(weights) < 0)):
        raise ValueError("weights must be non-negative")
    means = V.check_kernel_array(means, "means", ndim=3, min_rows=1)
    X = jnp.asarray(V.check_array(X, "X"))
    weights = jnp.asarray(weights, X.dtype)
    means = jnp.asarray(means, X.dtype)
    grouped = group_ids is not None
    w_shape = "(S, D, T)" if grouped else "(S, T)"
    if (
        weights.ndim != 2 + grouped
        or means.ndim != 3
        or means.shape[:2] != (weights.shape[0], weights.shape[-1])
    ):
        raise ValueError(
            f"weights must be {w_shape} and means (S, T, d); "
            f"got {weights.shape} and {means.shape}"
        )
    if means.shape[2] != X.shape[1]:
        raise ValueError(f"means have dimension {means.shape[2]} but X has {X.shape[1]} columns")
    if grouped:
        group_ids = V.check_labels(group_ids, "group_ids", n_samples=X.shape[0])
        if group_ids.min() < 0 or group_ids.max() >= weights.shape[1]:
            raise ValueError(
                f"group_ids must lie in [0, {weights.shape[1]}) (axis 1 of weights), got values "
                f"in [{group_ids.min()}, {group_ids.max()}]"
            )
        group_ids = jnp.asarray(group_ids, jnp.int32)
    S, T = weights.shape[0], weights.shape[-1]
    sigma2 = jnp.broadcast_to(jnp.asarray(sigma2, X.dtype), (S,))
    keys = jax.random.split(key, S)
    batch = int(max(1, min(S, _LABEL_BATCH_ENTRIES // max(1, X.shape[0] * T))))
    return _mixture_labels(keys, X, weights, means, sigma2, group_ids, batch)


def _data_argument(model_args: tuple, model_kwargs: dict):
    X = model_args[0] if model_args else model_kwargs.get("X")
    if X is None:
        raise ValueError("X must be given (observed data) to fit the model")
    return X


def _dp_gmm_labels(rng_key, samples: dict, model_args: tuple, model_kwargs: dict):
    """Label sampler of :func:`bayesclust.models.dp_gmm.dp_gmm`."""
    X = _data_argument(model_args, model_kwargs)
    return sample_mixture_labels(
        rng_key, X, samples["weights"], samples["means"], samples["sigma2"]
    )


def _dp_gmm_check(samples: dict) -> None:
    """Truncation check of :func:`bayesclust.models.dp_gmm.dp_gmm` (warns)."""
    # stacklevel: check_truncation -> _dp_gmm_check -> _to_posterior -> run_* -> caller
    _dp_gmm.check_truncation(samples["weights"], stacklevel=5)


def _hdp_gmm_labels(rng_key, samples: dict, model_args: tuple, model_kwargs: dict):
    """Label sampler of :func:`bayesclust.models.hdp_gmm.hdp_gmm`: global components."""
    X = _data_argument(model_args, model_kwargs)
    group_ids = _group_ids_argument("hdp_gmm", model_args, model_kwargs)
    if group_ids is None:
        raise ValueError("group_ids must be given (the data set of every row) to fit hdp_gmm")
    return sample_mixture_labels(
        rng_key, X, samples["pi"], samples["means"], samples["sigma2"], group_ids=group_ids
    )


def _hdp_gmm_check(samples: dict) -> None:
    """Truncation check of :func:`bayesclust.models.hdp_gmm.hdp_gmm` (global weights; warns)."""
    _dp_gmm.check_truncation(samples["beta"], stacklevel=5)


#: Label samplers per model name (see :data:`LabelSampler` for the signature).
LABEL_SAMPLERS: dict[str, LabelSampler] = {"dp_gmm": _dp_gmm_labels, "hdp_gmm": _hdp_gmm_labels}

#: Post-sampling checks per model name: ``fn(samples)`` with draws grouped by
#: chain ``(chains, draws, ...)``; may warn, never modifies the samples.
POSTERIOR_CHECKS: dict[str, Callable[[dict], None]] = {
    "dp_gmm": _dp_gmm_check,
    "hdp_gmm": _hdp_gmm_check,
}


class _Frame(NamedTuple):
    """A registered program's arguments on ``X * 2**-e`` and the way back to ``X``'s units."""

    model_args: tuple
    model_kwargs: dict
    e: int  # the power of two; 0 leaves every site as drawn
    n_values: int  # the entries of X, for the log-likelihood's Jacobian


def _scaled_prior(prior, factor: float):
    """A scalar prior on a variance moved into the unit frame: the law of ``factor * sigma2``.

    The scale families NumPyro parametrises by a rate or a scale are rebuilt with the
    parameter moved (``factor`` is a power of two: exact), so the unit-frame prior is the
    one a user would write for data of unit magnitude, with the same numbers; any other
    prior is wrapped in an affine transform (the same law; its density is evaluated at
    ``sigma2 / factor``, so its float range is that of the data frame).
    """
    import numpyro.distributions as dist
    from numpyro.distributions.transforms import AffineTransform

    if factor == 1.0:
        return prior
    kind = type(prior)
    if kind is dist.InverseGamma:
        return dist.InverseGamma(prior.concentration, prior.rate * factor)
    if kind is dist.Gamma:
        return dist.Gamma(prior.concentration, prior.rate / factor)
    if kind is dist.Exponential:
        return dist.Exponential(prior.rate / factor)
    if kind in (dist.HalfNormal, dist.HalfCauchy):
        return kind(prior.scale * factor)
    if kind is dist.LogNormal:
        return dist.LogNormal(prior.loc + math.log(factor), prior.scale)
    return dist.TransformedDistribution(prior, AffineTransform(0.0, factor, domain=prior.support))


def _mixture_frame(model_args: tuple, model_kwargs: dict) -> _Frame:
    """The isotropic mixture programs (``dp_gmm``, ``hdp_gmm``) in the unit frame of ``X``.

    ``X`` is multiplied by ``2**-e`` with its largest ``|x|`` in ``[0.5, 1)``
    (:func:`bayesclust._validation.unit_frame`, not centred: the prior on the means
    is centred at 0), the variances ``sigma2`` and ``rho2`` by ``4**-e`` and a prior
    on ``sigma2`` by the same factor.  The posterior of the means is then the data
    frame's divided by ``2**e`` and every other site's is unchanged, so the label
    draws are the same partitions; NumPyro's start (uniform in ``(-2, 2)`` in the
    unconstrained space) and its step-size search (from 1) see data of the same
    magnitude at any scale of ``X``.  Generative mode (no ``X``) keeps ``e = 0``.
    """
    X = model_args[0] if model_args else model_kwargs.get("X")
    if X is None:
        return _Frame(model_args, model_kwargs, 0, 0)
    X = V.check_array(X, "X")
    Xu, frame = V.unit_frame(X, centred=False)
    kwargs = dict(model_kwargs)
    for name, default in (("sigma2", 1.0), ("rho2", 100.0)):
        value = kwargs.get(name, default)
        if not V.traced(value):
            kwargs[name] = frame.squared(V.check_positive(value, name), name)
    if kwargs.get("sigma2_prior") is not None:
        prior = _dp_gmm._check_prior(kwargs["sigma2_prior"], "sigma2_prior")
        kwargs["sigma2_prior"] = _scaled_prior(prior, math.ldexp(1.0, -2 * frame.e))
    if model_args:
        return _Frame((Xu,) + tuple(model_args[1:]), kwargs, frame.e, Xu.size)
    kwargs["X"] = Xu
    return _Frame(model_args, kwargs, frame.e, Xu.size)


def _from_unit_frame(samples: dict, frame: _Frame) -> dict:
    """Draws of a program run in the unit frame, in the units of ``X``.

    The means times ``2**e``, ``sigma2`` times ``4**e`` (powers of two: exact) and the
    log likelihood of the points minus ``n d e log 2`` (the density of ``X``, not of
    ``X * 2**-e``); the weights, sticks and concentrations are unit-free.
    """
    if frame.e == 0:
        return samples
    out = dict(samples)
    for name, power in (("means", 1), ("sigma2", 2)):
        if name in out:
            v = out[name]
            back = np.ldexp(v, power * frame.e)
            out[name] = back if np.all(np.isfinite(back)) else np.ldexp(v.astype(np.float64),
                                                                         power * frame.e)
    if "log_likelihood" in out:
        v = out["log_likelihood"]
        out["log_likelihood"] = (v.astype(np.float64) - frame.n_values * frame.e * math.log(2.0)
                                 ).astype(v.dtype)
    return out


#: Programs run in the unit frame of ``X`` (:func:`_mixture_frame`), by model name.
_UNIT_FRAMES: dict[str, Callable[[tuple, dict], _Frame]] = {
    "dp_gmm": _mixture_frame,
    "hdp_gmm": _mixture_frame,
}


def _unit_frame(model, model_args: tuple, model_kwargs: dict) -> _Frame:
    """The frame a program runs in: the unit frame of ``X`` for the registered mixtures."""
    make = _UNIT_FRAMES.get(_model_name(model))
    return _Frame(model_args, model_kwargs, 0, 0) if make is None else make(model_args,
                                                                             model_kwargs)


def register_model(name: str, label_sampler: LabelSampler, check=None) -> None:
    """Register the label conditional (and optional posterior check) of a model.

    Parameters
    ----------
    name : str
        The name passed as ``label_sampler=`` to :func:`run_nuts` / :func:`run_svi`
        (by convention the model function's name).
    label_sampler : callable
        ``fn(rng_key, samples, model_args, model_kwargs) -> (num_draws, n)`` int
        labels, ``samples`` holding flat draws ``(num_draws, ...)`` of every
        latent and deterministic site.
    check : callable, optional
        ``fn(samples)`` on chain-grouped draws, called after sampling.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if not callable(label_sampler):
        raise TypeError("label_sampler must be callable")
    if check is not None and not callable(check):
        raise TypeError("check must be callable or None")
    LABEL_SAMPLERS[name] = label_sampler
    if check is None:
        POSTERIOR_CHECKS.pop(name, None)
    else:
        POSTERIOR_CHECKS[name] = check


def _resolve_label_sampler(label_sampler, model) -> tuple[LabelSampler, Callable | None]:
    """The label sampler and the posterior check (looked up by the model's name)."""
    check = POSTERIOR_CHECKS.get(_model_name(model))
    if label_sampler is None:  # the model's own, else the DP mixture's (the historical default)
        label_sampler = _model_name(model) if _model_name(model) in LABEL_SAMPLERS else "dp_gmm"
    if isinstance(label_sampler, str):
        if label_sampler not in LABEL_SAMPLERS:
            raise ValueError(
                f"label_sampler={label_sampler!r} is not registered; known: "
                f"{sorted(LABEL_SAMPLERS)} (or pass a callable, see register_model)"
            )
        return LABEL_SAMPLERS[label_sampler], POSTERIOR_CHECKS.get(label_sampler, check)
    if callable(label_sampler):
        return label_sampler, check
    raise TypeError(
        "label_sampler must be a registered model name or a callable, "
        f"got {type(label_sampler).__name__}"
    )


# --------------------------------------------------------------------------- #
# Shared post-processing
# --------------------------------------------------------------------------- #


def _model_name(model) -> str:
    return getattr(model, "__name__", None) or type(model).__name__


def _check_model(model) -> None:
    if not callable(model):
        raise TypeError(f"model must be a NumPyro program (a callable), got {type(model).__name__}")


def _to_posterior(
    key, samples: dict, label_fn, check, frame: _Frame, *,
    sample_stats, sampler: str, model_name: str, t0: float,
):
    """Chain-grouped draws ``(C, S, ...)`` of the program run in ``frame`` -> labels (drawn
    in that frame), checks, the draws in the units of ``X`` -> ``Posterior``."""
    model_args, model_kwargs = frame.model_args, frame.model_kwargs
    from .posterior import Posterior  # lazy: written alongside this module

    samples = {k: np.asarray(v) for k, v in samples.items()}
    for name, value in samples.items():
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise FloatingPointError(
                f"the draws of site {name!r} contain NaN or infinite values; "
                "check the data scale (centre X) and the priors"
            )
    C, S = next(iter(samples.values())).shape[:2]
    flat = {k: v.reshape((C * S,) + v.shape[2:]) for k, v in samples.items()}
    labels = np.asarray(label_fn(key, flat, model_args, model_kwargs))
    labels = labels.reshape(C, S, -1)
    if check is not None:
        check(samples)
    samples = _from_unit_frame(samples, frame)
    log_likelihood = samples.get("log_likelihood")
    params = {k: v for k, v in samples.items() if k != "log_likelihood"}
    return Posterior(
        labels,
        log_likelihood=log_likelihood,
        params=params,
        sample_stats=sample_stats,
        sampler=sampler,
        model=model_name,
        seconds=time.perf_counter() - t0,
        group_ids=_group_ids_argument(model_name, model_args, model_kwargs),
    )


def _group_ids_argument(model_name: str, model_args: tuple, model_kwargs: dict):
    """The data set of every point for a grouped-data model (``hdp_gmm``), else None."""
    if model_name != "hdp_gmm":
        return None
    ids = model_args[1] if len(model_args) > 1 else model_kwargs.get("group_ids")
    return None if ids is None else np.asarray(ids)


# --------------------------------------------------------------------------- #
# NUTS
# --------------------------------------------------------------------------- #


def run_nuts(
    rng_key,
    model,
    *model_args,
    num_warmup: int = 500,
    num_samples: int = 500,
    num_chains: int = 1,
    chain_method: str = "sequential",
    progress_bar: bool = True,
    label_sampler=None,
    nuts_kwargs: dict | None = None,
    **model_kwargs,
):
    """Fit a model with NumPyro's NUTS and return a ``Posterior`` with label draws.

    Parameters
    ----------
    rng_key : jax key or int
        Split into the MCMC key and the label-draw key.
    model : callable
        A NumPyro program of :mod:`bayesclust.models` (assignments
        marginalised), e.g. :func:`bayesclust.models.dp_gmm.dp_gmm`.
    *model_args
        Positional arguments of the model (``X`` first).
    num_warmup, num_samples, num_chains : int, default 500, 500, 1
        As in :class:`numpyro.infer.MCMC`.
    chain_method : {"sequential", "vectorized", "parallel"}, default "sequential"
        How chains run (``"parallel"`` needs one device per chain).
    progress_bar : bool, default True
    label_sampler : str, callable or None, default None
        Name of a registered label conditional (:data:`LABEL_SAMPLERS`) or a
        callable with that signature.  ``None``: the one registered under the
        model's name (``"dp_gmm"``, ``"hdp_gmm"``), else ``"dp_gmm"``'s.  A
        registered name also runs the model's posterior check
        (:data:`POSTERIOR_CHECKS`; for ``dp_gmm`` and ``hdp_gmm`` the
        truncation check, which may issue a
        :class:`~bayesclust.models.dp_gmm.TruncationWarning`).
    nuts_kwargs : dict, optional
        Extra arguments of :class:`numpyro.infer.NUTS` (``target_accept_prob``,
        ``max_tree_depth``, ``init_strategy``, ...).
    **model_kwargs
        Keyword arguments of the model (``truncation``, ``sigma2``, ...).

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n) drawn from ``p(z | x, params)`` per
        draw; ``log_likelihood`` (chains, draws) from the model's
        ``"log_likelihood"`` site; ``params`` every latent and deterministic
        site, e.g. for ``dp_gmm``: ``"means"`` (chains, draws, T, d),
        ``"weights"`` (chains, draws, T), ``"v"``, ``"alpha"`` and ``"sigma2"``
        (chains, draws; constants are recorded per draw); ``sample_stats``
        ``"diverging"``, ``"accept_prob"``, ``"num_steps"`` (chains, draws);
        ``seconds``: total wall time, **including** JIT compilation and the
        label draws (NumPyro compiles inside ``run``, so the two are not
        separated; benchmarks time a second run for steady state).

    Raises
    ------
    ValueError, TypeError
        On bad arguments (the model validates its own).
    FloatingPointError
        If any draw is NaN/inf.

    Notes
    -----
    Stick-breaking mixtures are multimodal (label switching, and merged or
    split clusters); NUTS explores one mode per chain, so run several chains
    and compare.  The label draws make the posterior over partitions
    available (co-clustering, ``n_clusters`` draws), which is invariant to
    label switching.

    Scale-free: the isotropic mixtures (``dp_gmm``, ``hdp_gmm``) run on
    ``X * 2**-e``, ``e`` putting the largest ``|x|`` in ``[0.5, 1)``, with
    ``sigma2`` and ``rho2`` times ``4**-e`` and a ``sigma2_prior`` moved
    likewise; the label draws are made there and the means (``* 2**e``),
    ``sigma2`` (``* 4**e``) and log likelihood (``- n d e log 2``) are reported
    in the units of ``X``.  NumPyro starts every latent uniformly in ``(-2, 2)``
    in its unconstrained space and searches the step size from 1, so without
    the frame a run on ``X`` in other units followed other trajectories; now
    ``X`` times a power of two (the variances times its square) gives the same
    label draws, and ``X`` of any float magnitude (float32 data near ``1e30``,
    whose squares overflow) can be fitted.  A callable ``label_sampler`` and an
    ``init_strategy`` with values see that frame.  Other programs run as given.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesclust.models.dp_gmm import dp_gmm
    >>> X = np.r_[np.random.default_rng(0).normal(-3, .5, (20, 2)),
    ...           np.random.default_rng(1).normal(3, .5, (20, 2))]
    >>> post = run_nuts(0, dp_gmm, X, num_warmup=100, num_samples=50, progress_bar=False,
    ...                 truncation=5, sigma2=0.25)  # doctest: +SKIP
    """
    from numpyro.infer import MCMC, NUTS

    _check_model(model)
    key = V.as_rng_key(rng_key)
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    if chain_method not in _CHAIN_METHODS:
        raise ValueError(f"chain_method must be one of {_CHAIN_METHODS}, got {chain_method!r}")
    if nuts_kwargs is not None and not isinstance(nuts_kwargs, dict):
        raise TypeError(f"nuts_kwargs must be a dict or None, got {type(nuts_kwargs).__name__}")
    label_fn, check = _resolve_label_sampler(label_sampler, model)
    frame = _unit_frame(model, model_args, model_kwargs)

    t0 = time.perf_counter()
    key_mcmc, key_labels = jax.random.split(key)
    mcmc = MCMC(
        NUTS(model, **(nuts_kwargs or {})),
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=bool(progress_bar),
    )
    mcmc.run(
        key_mcmc, *frame.model_args, extra_fields=("diverging", "accept_prob", "num_steps"),
        **frame.model_kwargs,
    )
    samples = mcmc.get_samples(group_by_chain=True)
    extra = mcmc.get_extra_fields(group_by_chain=True)
    sample_stats = {k: np.asarray(v) for k, v in extra.items() if np.ndim(v) == 2}
    return _to_posterior(
        key_labels, samples, label_fn, check, frame,
        sample_stats=sample_stats, sampler="NUTS", model_name=_model_name(model), t0=t0,
    )


# --------------------------------------------------------------------------- #
# SVI
# --------------------------------------------------------------------------- #


def _latent_and_deterministic_sites(trace) -> list[str]:
    """Names of the unobserved sample sites and deterministic sites of a model trace."""
    return [
        name for name, site in trace.items()
        if (site["type"] == "sample" and not site["is_observed"]) or site["type"] == "deterministic"
    ]


def _restart_init_params(key, guide, params: dict, delta: bool) -> dict:
    """New initial ``*_loc`` params of an AutoNormal/AutoDelta guide: ``init_to_uniform``.

    Every latent site gets ``u ~ Uniform(-2, 2)`` in its unconstrained space
    (NumPyro's ``init_to_uniform``); AutoNormal stores ``u`` itself, AutoDelta
    the constrained value.  Building a fresh guide instead would re-run
    NumPyro's initialisation (and its compilation) for every restart.
    """
    from numpyro.distributions import biject_to

    out = {}
    sites = [
        (name, site) for name, site in guide.prototype_trace.items()
        if site["type"] == "sample" and not site["is_observed"]
    ]
    for k, (name, site) in zip(jax.random.split(key, max(1, len(sites))), sites):
        loc = f"{name}_{guide.prefix}_loc"
        if loc not in params:
            continue
        transform = biject_to(site["fn"].support)
        shape = transform.inverse_shape(jnp.shape(site["value"]))
        u = jax.random.uniform(k, shape, jnp.result_type(float), minval=-2.0, maxval=2.0)
        out[loc] = transform(u) if delta else u
    return out


def _svi_chunk_runner(svi, model_args, model_kwargs, length: int, num_steps: int):
    """A jitted ``(state, start) -> (state, losses)`` running ``length`` steps from ``start``.

    Steps ``>= num_steps`` are skipped (loss NaN), so one compiled chunk serves
    every chunk and every restart.  ``stable_update`` keeps the previous state
    when a step's loss or gradient is not finite.
    """

    def step(state, i):
        return lax.cond(
            i < num_steps,
            lambda s: svi.stable_update(s, *model_args, **model_kwargs),
            lambda s: (s, jnp.asarray(jnp.nan, jnp.result_type(float))),
            state,
        )

    @jax.jit
    def run_chunk(state, start):
        return lax.scan(step, state, start + jnp.arange(length))

    return run_chunk


def run_svi(
    rng_key,
    model,
    *model_args,
    guide="normal",
    num_steps: int = 2000,
    num_samples: int = 500,
    learning_rate: float = 0.01,
    n_init: int = 1,
    progress_bar: bool = True,
    label_sampler=None,
    **model_kwargs,
):
    """Fit a model by stochastic variational inference and return a ``Posterior``.

    Minimises the negative ELBO ``-E_q[log p(X, theta) - log q(theta)]`` with
    Adam over an automatic guide (from ``n_init`` random initialisations,
    keeping the lowest final loss), then draws ``num_samples`` parameter sets
    from the guide (:class:`numpyro.infer.Predictive`) and labels from their
    exact conditional (as :func:`run_nuts`).

    Parameters
    ----------
    rng_key : jax key or int
    model : callable
        A NumPyro program of :mod:`bayesclust.models`.
    *model_args
        Positional model arguments (``X`` first).
    guide : {"normal", "delta"} or AutoGuide, default "normal"
        ``"normal"``: :class:`numpyro.infer.autoguide.AutoNormal` (mean-field
        Gaussian in the unconstrained space, ADVI); ``"delta"``:
        :class:`~numpyro.infer.autoguide.AutoDelta` (MAP in the constrained
        space: every draw has the same parameters, the labels still vary); or
        an AutoGuide instance built on ``model`` (then ``n_init`` must be 1).
        Both string guides start from ``init_to_uniform`` (uniform in
        ``(-2, 2)`` in the unconstrained space; ours: NumPyro's AutoDelta
        default, the prior median, starts every component mean at the same
        point, a saddle of the mixture likelihood).
    num_steps : int, default 2000
        Adam steps per initialisation.
    num_samples : int, default 500
        Draws from the fitted guide.
    learning_rate : float, default 0.01
        Adam step size.
    n_init : int, default 1
        Independent random initialisations (restarts: bayesclust's setting, not
        NumPyro's); the one with the lowest mean loss over its last 10% of steps is
        kept.  Mixture objectives are multimodal (a cluster split over two
        components, two clusters on one), so MAP in particular benefits from
        several.  One compiled update loop serves every initialisation.
    progress_bar : bool, default True
        A tqdm bar over initialisations x steps (updated in chunks).
    label_sampler : str, callable or None, default None
        As in :func:`run_nuts`.
    **model_kwargs
        Keyword arguments of the model.

    Returns
    -------
    Posterior
        With one "chain": ``labels`` (1, num_samples, n), ``log_likelihood``
        and ``params`` as in :func:`run_nuts` (the isotropic mixtures fitted in
        the unit frame of ``X``, as there), ``sample_stats`` none,
        ``sampler`` ``"SVI(AutoNormal)"`` / ``"SVI(AutoDelta)"`` and
        ``seconds`` the total wall time (compilation included).

    Raises
    ------
    ValueError, TypeError
        On bad arguments.
    FloatingPointError
        If no restart ends with a finite loss (lower ``learning_rate``).

    Notes
    -----
    The MAP of a truncated stick-breaking mixture prunes components only when
    the ``Beta(1, alpha)`` prior on the sticks is sparsity-inducing
    (``alpha < 1``): for ``alpha = 1`` the prior is flat, so a cluster shared
    by two coincident components scores the same as one, and the label draws
    then split it.  Small ``alpha`` is what the small-variance map gives
    (:func:`bayesclust.models.dp_gmm.alpha_from_lam`).
    """
    from numpyro import optim
    from numpyro.infer import SVI, Predictive, Trace_ELBO, init_to_uniform
    from numpyro.infer.autoguide import AutoDelta, AutoGuide, AutoNormal

    _check_model(model)
    key = V.as_rng_key(rng_key)
    num_steps = V.check_int(num_steps, "num_steps", minimum=1)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    n_init = V.check_int(n_init, "n_init", minimum=1)
    learning_rate = V.check_positive(learning_rate, "learning_rate")
    label_fn, check = _resolve_label_sampler(label_sampler, model)
    builders = {"normal": AutoNormal, "delta": AutoDelta}
    if isinstance(guide, str):
        if guide not in builders:
            raise ValueError(f"guide must be 'normal', 'delta' or an AutoGuide, got {guide!r}")
        guide_obj = builders[guide](model, init_loc_fn=init_to_uniform)
    elif isinstance(guide, AutoGuide):
        if n_init != 1:
            raise ValueError("n_init must be 1 when guide is an AutoGuide instance")
        guide_obj = guide
    else:
        raise TypeError(
            f"guide must be 'normal', 'delta' or an AutoGuide, got {type(guide).__name__}"
        )

    frame = _unit_frame(model, model_args, model_kwargs)
    model_args, model_kwargs = frame.model_args, frame.model_kwargs

    t0 = time.perf_counter()
    key_svi, key_pred, key_labels = jax.random.split(key, 3)
    optimizer = optim.Adam(learning_rate)
    svi = SVI(model, guide_obj, optimizer, Trace_ELBO())
    length = -(-num_steps // 50) if progress_bar else num_steps  # steps per compiled chunk
    n_chunks = -(-num_steps // length)
    run_chunk = _svi_chunk_runner(svi, model_args, model_kwargs, length, num_steps)
    tail = max(1, num_steps // 10)

    bar = None
    if progress_bar:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_steps * n_init, desc="SVI", leave=True)
    best_state, best_loss = None, np.inf
    try:
        for r, k in enumerate(jax.random.split(key_svi, n_init)):
            if r == 0:
                state = svi.init(k, *model_args, **model_kwargs)
                first_params = svi.get_params(state)
            else:
                init = _restart_init_params(k, guide_obj, first_params, guide == "delta")
                state = svi.init(k, *model_args, init_params=init, **model_kwargs)
            losses = []
            for c in range(n_chunks):
                state, chunk_losses = run_chunk(state, c * length)
                losses.append(np.asarray(chunk_losses))
                if bar is not None:
                    bar.update(min(length, num_steps - c * length))
            losses = np.concatenate(losses)[:num_steps][-tail:]
            # stable_update keeps the state on a non-finite step; judge by the finite losses.
            final = float(np.mean(losses[np.isfinite(losses)])) if np.isfinite(losses).any() else np.nan
            if bar is not None:
                bar.set_postfix(restart=r, loss=f"{final:.4g}")
            if np.isfinite(final) and final < best_loss:
                best_state, best_loss = state, final
    finally:
        if bar is not None:
            bar.close()
    if best_state is None:
        raise FloatingPointError(
            "SVI's loss is not finite in any restart; lower learning_rate or centre/scale X"
        )

    sites = _latent_and_deterministic_sites(guide_obj.prototype_trace)
    draws = Predictive(
        model, guide=guide_obj, params=svi.get_params(best_state), num_samples=num_samples,
        return_sites=sites,
    )(key_pred, *model_args, **model_kwargs)
    samples = {k: jnp.asarray(v)[None] for k, v in draws.items()}
    return _to_posterior(
        key_labels, samples, label_fn, check, frame,
        sample_stats=None, sampler=f"SVI({type(guide_obj).__name__})",
        model_name=_model_name(model), t0=t0,
    )
