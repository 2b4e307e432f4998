r"""Posteriors of the soft consensus models of a co-association: PEnCA and PPC's memberships.

Two NumPyro programs describe a co-association matrix by soft memberships:

* the dyadic aspect model of PEnCA (Lourenco, Fred & Figueiredo 2011),
  :func:`bayesclust.models.dyadic_aspect.dyadic_aspect`, whose maximum-likelihood (MAP with
  flat priors) fit is :func:`~bayesclust.inference.consensus.aspect_em.aspect_em`;
* the memberships model of PPC (Rota Bulò, Lourenço, Fred & Pelillo 2010),
  :func:`bayesclust.models.pairwise_memberships.pairwise_memberships`, whose Gaussian MAP
  with a flat prior is :func:`~bayesclust.inference.consensus.ppc.ppc` with ``mask_diagonal=True``.

:func:`aspect_posterior` and :func:`memberships_posterior` fit them by SVI (``AutoDelta``:
the MAP; ``AutoNormal``: a mean-field Gaussian on the unconstrained (stick-breaking) simplex
coordinates) or by NUTS, starting from the point fit (or a random point), and return a
:class:`~bayesclust.inference.mixtures.posterior.Posterior` whose clusters are aligned to the point
fit's by the Hungarian matching of every draw's parameters, so that the component-indexed
draws (weights, memberships) are comparable across draws.

NUTS is practical only for small ``n``: the aspect model has ``L (n - 1) + L - 1`` free
parameters, the memberships model ``n (K - 1)``, and their posteriors concentrate as the
ensemble grows.  All numerics run in float64 (under :func:`jax.enable_x64`).

References
----------
A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for evidence
accumulation clustering", SIMBAD 2011.
S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering using
evidence accumulation", S+SSPR 2010.
D. P. Kingma and J. Ba, "Adam: a method for stochastic optimization", ICLR 2015.
M. D. Hoffman and A. Gelman, "The No-U-Turn sampler", JMLR 15 (2014).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from scipy.optimize import linear_sum_assignment

from ... import _validation as V
from ...models.dyadic_aspect import dyadic_aspect
from ...models.dyadic_aspect import pair_log_likelihood as _aspect_ll
from ...models.pairwise_memberships import LIKELIHOODS, pairwise_memberships
from ...models.pairwise_memberships import pair_log_likelihood as _memberships_ll
from .aspect_em import aspect_em
from .coassociation import CoAssociation, coassociation, coassociation_pairs

__all__ = ["INFERENCE", "GUIDES", "aspect_posterior", "memberships_posterior"]

#: The inference methods of :func:`aspect_posterior` and :func:`memberships_posterior`.
INFERENCE = ("svi", "nuts")
#: The SVI guides: ``AutoDelta`` (MAP) and ``AutoNormal`` (mean-field Gaussian).
GUIDES = ("delta", "normal")

_MODELS = {"dyadic_aspect": dyadic_aspect, "pairwise_memberships": pairwise_memberships}
_INIT_SCALE = 0.01  # AutoNormal's initial scale in the unconstrained space
_FINAL_LR_FACTOR = 0.01  # Adam's step decays geometrically to this fraction of learning_rate


# --------------------------------------------------------------------------- checks


def _check_common(inference, guide, init, inits, num_steps, num_samples, num_warmup, num_chains, learning_rate):
    if inference not in INFERENCE:
        raise ValueError(f"inference must be one of {INFERENCE}, got {inference!r}")
    if guide not in GUIDES:
        raise ValueError(f"guide must be one of {GUIDES}, got {guide!r}")
    if not isinstance(init, str) or init not in inits:
        raise ValueError(f"init must be one of {inits}, got {init!r}")
    return (V.check_int(num_steps, "num_steps", minimum=1), V.check_int(num_samples, "num_samples", minimum=1),
            V.check_int(num_warmup, "num_warmup", minimum=0), V.check_int(num_chains, "num_chains", minimum=1),
            V.check_positive(learning_rate, "learning_rate"))


def _pad_pairs(rows, cols, values, extra=()):
    """Pad the stored pairs to a size bucket (pairs (0, 0) of value 0 add nothing) so that
    co-associations of one data set share a compilation (as :func:`aspect_em`)."""
    nnz = rows.shape[0]
    step = 1 << max(10, int(math.log2(max(nnz, 1))) - 1)
    pad = -nnz % step
    out = [np.r_[rows, np.zeros(pad, np.int32)], np.r_[cols, np.zeros(pad, np.int32)], np.r_[values, np.zeros(pad)]]
    return out + [np.r_[e, np.full(pad, fill)] for e, fill in extra]


# --------------------------------------------------------------------------- SVI


@functools.partial(jax.jit, static_argnames=("model_name", "guide", "num_steps", "learning_rate", "n", "K",
                                             "static_kw", "num_samples"))
def _svi_fit_jit(key, init_params, arrays, traced, *, model_name, guide, num_steps, learning_rate, n, K, static_kw,
                 num_samples):
    """SVI from ``init_params``, jitted whole: NumPyro's guide set-up, ``num_steps`` Adam steps
    in one ``lax.scan`` and the draws.  The guide is built inside the trace (run eagerly, its
    set-up compiled some 200 small programs, most of a fit's time)."""
    from numpyro import optim
    from numpyro.infer import SVI, Trace_ELBO, init_to_uniform
    from numpyro.infer.autoguide import AutoDelta, AutoNormal

    base = _MODELS[model_name]

    def model(*arrs, **kw):
        return base(*arrs, n, K, **dict(static_kw), **kw)

    if guide == "delta":
        g = AutoDelta(model, init_loc_fn=init_to_uniform)
    else:
        g = AutoNormal(model, init_loc_fn=init_to_uniform, init_scale=_INIT_SCALE)

    def schedule(i):
        return learning_rate * _FINAL_LR_FACTOR ** (i / num_steps)

    svi = SVI(model, g, optim.Adam(schedule), Trace_ELBO())
    k_init, k_draw = jax.random.split(key)
    state = svi.init(k_init, *arrays, init_params=init_params, **traced)
    state, losses = lax.scan(lambda s, _: svi.stable_update(s, *arrays, **traced), state, None, length=num_steps)
    params = svi.get_params(state)
    names = [k[: -len("_auto_loc")] for k in init_params if k.endswith("_auto_loc")]
    if guide == "delta":
        draws = {name: params[f"{name}_auto_loc"][None, None] for name in names}
    else:
        s = g.sample_posterior(k_draw, params, sample_shape=(num_samples,))
        draws = {name: s[name][None] for name in names}
    return draws, losses


def _init_params(values: dict, guide: str) -> dict:
    """The guide's ``*_auto_loc`` (and AutoNormal's scale) params at constrained ``values``."""
    import numpyro.distributions as dist
    from numpyro.distributions import biject_to

    out = {}
    for name, v in values.items():
        v = jnp.asarray(v)
        if guide == "delta":
            out[f"{name}_auto_loc"] = v
        else:
            u = biject_to(dist.constraints.simplex).inv(v)
            out[f"{name}_auto_loc"] = u
            out[f"{name}_auto_scale"] = jnp.full(u.shape, _INIT_SCALE)
    return out


def _random_values(rng, shapes: dict) -> dict:
    """NumPyro's ``init_to_uniform`` on the simplex sites: ``u ~ U(-2, 2)`` unconstrained."""
    import numpyro.distributions as dist
    from numpyro.distributions import biject_to

    t = biject_to(dist.constraints.simplex)
    with jax.enable_x64(True):
        return {name: np.asarray(t(jnp.asarray(rng.uniform(-2.0, 2.0, shape[:-1] + (shape[-1] - 1,)))),
                                 np.float64) for name, shape in shapes.items()}


def _fit_svi(key, model_name, arrays, traced, static_kw, n, K, init_values, guide, num_steps, learning_rate,
             num_samples):
    """Run SVI; return draws ``{site: (1, S, ...)}`` (S = 1 for AutoDelta) and the losses."""
    draws, losses = _svi_fit_jit(key, _init_params(init_values, guide), arrays, traced, model_name=model_name,
                                 guide=guide, num_steps=num_steps, learning_rate=float(learning_rate), n=n, K=K,
                                 static_kw=static_kw, num_samples=num_samples if guide == "normal" else 1)
    return draws, np.asarray(losses)


def _fit_nuts(key, model_name, arrays, traced, static_kw, n, K, init_values, num_warmup, num_samples,
              num_chains):
    """NUTS through :func:`~bayesclust.inference.mixtures.mcmc.run_nuts`; draws ``(C, S, ...)`` and stats."""
    from numpyro.infer import init_to_value

    from ..mixtures.mcmc import run_nuts

    base = _MODELS[model_name]

    def model(*arrs, **kw):
        return base(*arrs, n, K, **dict(static_kw), **kw)

    model.__name__ = model_name

    def no_labels(rng_key, samples, model_args, model_kwargs):  # aligned below
        return jnp.zeros((next(iter(samples.values())).shape[0], n), jnp.int32)

    post = run_nuts(key, model, *arrays, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                    progress_bar=False, label_sampler=no_labels,
                    nuts_kwargs={"init_strategy": init_to_value(values={k: jnp.asarray(v)
                                                                        for k, v in init_values.items()})},
                    **traced)
    draws = {name: jnp.asarray(post.params[name]) for name in init_values}
    return draws, dict(post.sample_stats)


# --------------------------------------------------------------------------- alignment


def _hungarian_perms(cost: np.ndarray) -> np.ndarray:
    """Per draw, the row ``perm[t, s]`` of the draw matched to reference column ``s``."""
    perm = np.empty(cost.shape[:2], np.int64)
    for t in range(cost.shape[0]):
        r, c = linear_sum_assignment(cost[t])
        perm[t, c] = r
    return perm


def _blocks(T: int, per: int):
    step = max(1, (1 << 24) // max(per, 1))
    return [slice(s, min(T, s + step)) for s in range(0, T, step)]


# --------------------------------------------------------------------------- PEnCA


def aspect_posterior(
    rng_key: Any,
    coassoc: Any,
    n_aspects: int,
    *,
    inference: str = "svi",
    guide: str = "delta",
    alpha_p: float = 1.0,
    alpha_B: float = 1.0,
    init: str = "em",
    num_steps: int = 2000,
    learning_rate: float = 0.01,
    num_samples: int = 500,
    num_warmup: int = 500,
    num_chains: int = 2,
    em_kwargs: dict | None = None,
    reference: Any = None,
):
    r"""Posterior of the dyadic aspect model (PEnCA) of a co-association, by SVI or NUTS.

    The program :func:`bayesclust.models.dyadic_aspect.dyadic_aspect`,

    .. math::

        p \sim \mathrm{Dir}(\alpha_p\mathbf 1_L),\quad B_r \sim \mathrm{Dir}(\alpha_B\mathbf 1_n),\quad
        \log p(C \mid p, B) = \sum_{y \ne z} C_{yz}\log\sum_r p_rB_{r,y}B_{r,z}

    (Lourenco, Fred & Figueiredo 2011, eqs. 10, 25; the priors are ours,
    docs/deviations.md#penca-dirichlet-priors), is fitted by SVI or NUTS.  Its MAP is
    :func:`~bayesclust.inference.consensus.aspect_em.aspect_em`'s (MAP-)EM fit with the same ``alpha_p``,
    ``alpha_B``: the EM fit is computed first, is the default start and is the reference every
    draw's aspects are aligned to.

    Parameters
    ----------
    rng_key : jax.random key or int
    coassoc : CoAssociation, scipy.sparse matrix or array_like (n, n)
        Co-occurrence **counts** (see :func:`~bayesclust.inference.consensus.coassociation.coassociation_pairs`).
    n_aspects : int
        ``L``, with ``1 <= L <= n``.
    inference : {"svi", "nuts"}, default "svi"
        SVI: Adam on the negative ELBO, ``num_steps`` steps with the step size decaying
        geometrically from ``learning_rate`` to ``learning_rate / 100`` (ours: on iris a constant
        step ended 3e-8 to 5e-7 (relative) below EM's log-posterior, the decaying one 2e-9
        above it).  NUTS: ``num_chains``
        chains of ``num_warmup + num_samples`` iterations; practical for ``n`` up to a few
        dozen (``L (n - 1)`` free parameters).
    guide : {"delta", "normal"}, default "delta"
        SVI's guide: ``AutoDelta`` (the MAP; the posterior then holds one draw) or
        ``AutoNormal`` (mean-field Gaussian on the stick-breaking coordinates of ``p`` and
        every ``B_r``; ``num_samples`` draws).
    alpha_p, alpha_B : float, default 1
        Dirichlet concentrations (> 0); 1 gives flat priors (the MAP is the paper's EM).
    init : {"em", "random"}, default "em"
        Start at the EM fit (entries clipped at ``1e-12`` and renormalised), or at NumPyro's
        ``init_to_uniform`` point (uniform in ``(-2, 2)`` on the unconstrained coordinates).
    num_steps : int, default 2000
    learning_rate : float, default 0.01
        Adam's initial step size.  ``num_steps`` and ``learning_rate`` are compiled into the
        SVI loop (one compilation per shape and schedule).
    num_samples : int, default 500
        Draws from the AutoNormal guide or kept NUTS iterations per chain.
    num_warmup, num_chains : int, default 500, 2
        NUTS only (chains run sequentially; they all start at ``init``).
    em_kwargs : dict, optional
        Passed to :func:`~bayesclust.inference.consensus.aspect_em.aspect_em` (``n_init``, ``tol``,
        ``max_iter``, ``init``).
    reference : AspectEMResult, optional
        An :func:`~bayesclust.inference.consensus.aspect_em.aspect_em` fit of the same ``coassoc`` and
        ``n_aspects`` to start from and align to, instead of computing one (``em_kwargs`` is
        then ignored).

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n): :math:`\arg\max_r V_{y,r}` of every draw after
        alignment (:math:`V_{y,r} \propto p_rB_{r,y}`, eq. 25; uniform for an object without
        any co-occurring pair); ``log_likelihood`` (chains, draws): :math:`\ell(p, B)`;
        ``params``: ``"weights"`` :math:`p` (chains, draws, L), ``"B"`` (chains, draws, L, n)
        and ``"memberships"`` :math:`V` (chains, draws, n, L), aligned; NUTS's
        ``sample_stats``; ``sampler`` ``"SVI(AutoDelta)"``, ``"SVI(AutoNormal)"`` or
        ``"NUTS"``; ``model`` ``"dyadic_aspect"``; ``seconds``: wall time (EM, compilation and
        fit).

    Raises
    ------
    ValueError
        Unknown ``inference``, ``guide`` or ``init``; ``n_aspects`` outside ``[1, n]``;
        ``alpha_p`` or ``alpha_B`` not positive; bad counts of the sampler.

    Notes
    -----
    Alignment: the aspects of every draw are matched one-to-one to the EM fit's by the
    Hungarian algorithm (:func:`scipy.optimize.linear_sum_assignment`) on the total variation
    :math:`\frac12\sum_y|B_{r,y} - B^{\mathrm{EM}}_{s,y}|` between the rows of ``B``
    (docs/deviations.md#consensus-posterior-alignment).  Label switching is a symmetry of the
    model (all ``L!`` relabellings have the same density), so this only names the aspects.

    References
    ----------
    A. Lourenco, A. Fred and M. Figueiredo, "A generative dyadic aspect model for evidence
    accumulation clustering", SIMBAD 2011.

    Examples
    --------
    >>> import numpy as np
    >>> blocks = np.repeat([0, 1], 4)
    >>> C = 5.0 * (blocks[:, None] == blocks[None, :])
    >>> np.fill_diagonal(C, 0)
    >>> post = aspect_posterior(0, C, 2, num_steps=200)
    >>> post.labels.shape, post.params["memberships"].shape
    ((1, 1, 8), (1, 1, 8, 2))
    >>> bool(post.point_estimate().tolist() in ([0] * 4 + [1] * 4, [1] * 4 + [0] * 4))
    True
    """
    num_steps, num_samples, num_warmup, num_chains, learning_rate = _check_common(
        inference, guide, init, ("em", "random"), num_steps, num_samples, num_warmup, num_chains, learning_rate)
    rows, cols, counts, n = coassociation_pairs(coassoc)
    L = V.check_int(n_aspects, "n_aspects", minimum=1)
    if L > n:
        raise ValueError(f"n_aspects must be at most the number of objects {n}, got {L}")
    alpha_p = V.check_positive(alpha_p, "alpha_p")
    alpha_B = V.check_positive(alpha_B, "alpha_B")
    if em_kwargs is not None and not isinstance(em_kwargs, dict):
        raise TypeError(f"em_kwargs must be a dict or None, got {type(em_kwargs).__name__}")
    key = V.as_rng_key(rng_key)
    k_em, k_fit, k_init = jax.random.split(key, 3)
    t0 = time.perf_counter()
    if reference is None:
        em = aspect_em(k_em, coassoc, L, alpha_p=alpha_p, alpha_B=alpha_B, **(em_kwargs or {}))
    else:
        em = reference
        if not (hasattr(em, "B") and hasattr(em, "weights") and np.shape(em.B) == (L, n)):
            raise ValueError(f"reference must be an aspect_em result with B of shape ({L}, {n})")
    if init == "em":
        p0 = np.maximum(em.weights, 1e-12)
        B0 = np.maximum(em.B, 1e-12)
        values = {"p": p0 / p0.sum(), "B": B0 / B0.sum(axis=1, keepdims=True)}
    else:
        values = _random_values(V.as_numpy_rng(k_init), {"p": (L,), "B": (L, n)})
    with jax.enable_x64(True):
        if inference == "nuts":
            arrays = (jnp.asarray(rows), jnp.asarray(cols), jnp.asarray(counts))
        else:
            arrays = tuple(jnp.asarray(a) for a in _pad_pairs(rows, cols, counts))
        traced = {"alpha_p": jnp.float64(alpha_p), "alpha_B": jnp.float64(alpha_B)}
        stats = None
        if inference == "svi":
            draws, _ = _fit_svi(k_fit, "dyadic_aspect", arrays, traced, (), n, L, values, guide, num_steps,
                                learning_rate, num_samples)
            sampler = f"SVI({'AutoDelta' if guide == 'delta' else 'AutoNormal'})"
        else:
            draws, stats = _fit_nuts(k_fit, "dyadic_aspect", arrays, traced, (), n, L, values, num_warmup,
                                     num_samples, num_chains)
            sampler = "NUTS"
        p = np.asarray(draws["p"], np.float64)  # (C, S, L)
        B = np.asarray(draws["B"], np.float64)  # (C, S, L, n)
        C_, S_ = p.shape[:2]
        T = C_ * S_
        pf, Bf = p.reshape(T, L), B.reshape(T, L, n)
        perm = np.empty((T, L), np.int64)
        for sl in _blocks(T, L * L * n):
            cost = 0.5 * np.abs(Bf[sl, :, None, :] - em.B[None, None, :, :]).sum(axis=3)
            perm[sl] = _hungarian_perms(cost)
        pf = np.take_along_axis(pf, perm, axis=1)
        Bf = np.take_along_axis(Bf, perm[:, :, None], axis=1)
        ll = np.asarray(jax.vmap(lambda a, b: _aspect_ll(a, b, arrays[0], arrays[1], arrays[2]))(
            jnp.asarray(pf), jnp.asarray(Bf)))
    Vm = np.transpose(Bf * pf[:, :, None], (0, 2, 1))  # (T, n, L)
    tot = Vm.sum(axis=2, keepdims=True)
    Vm = np.where(tot > 0, Vm / np.where(tot > 0, tot, 1.0), 1.0 / L)
    Vm[:, em.isolated] = 1.0 / L
    labels = np.argmax(Vm, axis=2).reshape(C_, S_, n)
    from ..mixtures.posterior import Posterior

    return Posterior(
        labels,
        log_likelihood=ll.reshape(C_, S_),
        params={"weights": pf.reshape(C_, S_, L), "B": Bf.reshape(C_, S_, L, n),
                "memberships": Vm.reshape(C_, S_, n, L)},
        sample_stats=stats,
        sampler=sampler,
        model="dyadic_aspect",
        seconds=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------- PPC memberships


def _memberships_data(coassoc: Any, likelihood: str):
    """(rows, cols, values, n, n_trials, pair_trials) of the memberships program."""
    if likelihood == "binomial":
        if not isinstance(coassoc, CoAssociation):
            if isinstance(coassoc, np.ndarray) and coassoc.ndim == 2 and coassoc.shape[0] == coassoc.shape[1]:
                raise ValueError("coassoc must be a CoAssociation or an ensemble for likelihood='binomial' "
                                 "(the counts and the number of partitions)")
            coassoc = coassociation(coassoc)
        if coassoc.pair_trials is not None:
            raise ValueError("likelihood='binomial' needs every partition to label every object: with "
                             "sub-sampled partitions the trials N_ij of the unstored pairs are not stored")
        rows, cols, counts, n = coassociation_pairs(coassoc)
        N = int(coassoc.n_partitions)
        return rows, cols, counts, n, N
    from ._common import _as_pairs

    rows, cols, vals, diag = _as_pairs(coassoc)
    return rows, cols, vals, diag.shape[0], None


def memberships_posterior(
    rng_key: Any,
    coassoc: Any,
    n_clusters: int,
    *,
    likelihood: str = "gaussian",
    inference: str = "svi",
    guide: str = "delta",
    alpha: float = 1.0,
    sigma: float = 0.1,
    init: str = "ppc",
    num_steps: int = 2000,
    learning_rate: float = 0.01,
    num_samples: int = 500,
    num_warmup: int = 500,
    num_chains: int = 2,
    ppc_kwargs: dict | None = None,
    reference: Any = None,
):
    r"""Posterior of PPC's soft memberships of a co-association, by SVI or NUTS.

    The program :func:`bayesclust.models.pairwise_memberships.pairwise_memberships`,
    :math:`\mathbf y_i \sim \mathrm{Dir}(\alpha\mathbf 1_K)` and, over all pairs ``i < j``,
    :math:`c_{ij} \sim \mathcal N(\mathbf y_i^\top\mathbf y_j, \sigma^2)` or
    :math:`n_{ij} \sim \mathrm{Bin}(N, \mathbf y_i^\top\mathbf y_j)` (Rota Bulò et al. 2010,
    §3), fitted by SVI or NUTS.  With ``alpha = 1`` the Gaussian MAP is
    :func:`~bayesclust.inference.consensus.ppc.ppc` with ``mask_diagonal=True``, which is computed first
    as the default start and as the reference the draws' clusters are aligned to.

    Parameters
    ----------
    rng_key : jax.random key or int
    coassoc : CoAssociation, ensemble, or ndarray / sparse matrix (n, n)
        As :func:`~bayesclust.inference.consensus.ppc.ppc` for ``"gaussian"`` (normalised
        :math:`c_{ij}`); ``"binomial"`` needs the counts and ``N``: a CoAssociation of an
        ensemble whose partitions label every object, or the ensemble.
    n_clusters : int
        ``K``, with ``1 <= K <= n``.
    likelihood : {"gaussian", "binomial"}, default "gaussian"
        The binomial costs ``O(K n^2)`` per gradient (row blocks; see
        :func:`bayesclust.models.pairwise_memberships.pair_log_likelihood`).
    inference, guide, num_steps, learning_rate, num_samples, num_warmup, num_chains
        As in :func:`aspect_posterior`.
    alpha : float, default 1
        Dirichlet concentration (> 0).
    sigma : float, default 0.1
        Standard deviation of the Gaussian likelihood (> 0).
    init : {"ppc", "random"}, default "ppc"
        Start at PPC's fit (``mask_diagonal=True``; entries clipped at ``1e-12`` and
        renormalised) or at NumPyro's ``init_to_uniform`` point.
    ppc_kwargs : dict, optional
        Passed to :func:`~bayesclust.inference.consensus.ppc.ppc` (``n_init``, ``max_iter``, ``tol``).
    reference : PPCResult, optional
        A :func:`~bayesclust.inference.consensus.ppc.ppc` fit (memberships of shape (n, K)) to start from
        and align to, instead of computing one (``ppc_kwargs`` is then ignored).

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n): :math:`\arg\max_k y_{ik}` of every aligned draw;
        ``log_likelihood`` (chains, draws); ``params["memberships"]`` (chains, draws, n, K),
        aligned: every draw's clusters matched to PPC's by the Hungarian algorithm on
        :math:`\sum_i|y_{ik} - y^{\mathrm{PPC}}_{il}|`; ``model`` ``"pairwise_memberships"``.

    Raises
    ------
    ValueError
        Unknown ``likelihood``, ``inference``, ``guide`` or ``init``; ``n_clusters`` outside
        ``[1, n]``; ``alpha`` or ``sigma`` not positive; a binomial likelihood without counts.

    References
    ----------
    S. Rota Bulò, A. Lourenço, A. Fred and M. Pelillo, "Pairwise probabilistic clustering
    using evidence accumulation", S+SSPR 2010, §3.

    Examples
    --------
    >>> import numpy as np
    >>> blocks = np.repeat([0, 1], 4)
    >>> C = (blocks[:, None] == blocks[None, :]).astype(float)
    >>> post = memberships_posterior(0, C, 2, num_steps=200)
    >>> post.params["memberships"].shape
    (1, 1, 8, 2)
    """
    from .ppc import ppc

    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")
    num_steps, num_samples, num_warmup, num_chains, learning_rate = _check_common(
        inference, guide, init, ("ppc", "random"), num_steps, num_samples, num_warmup, num_chains, learning_rate)
    alpha = V.check_positive(alpha, "alpha")
    sigma = V.check_positive(sigma, "sigma")
    K = V.check_int(n_clusters, "n_clusters", minimum=1)
    rows, cols, vals, n, N = _memberships_data(coassoc, likelihood)
    if K > n:
        raise ValueError(f"n_clusters must be at most the number of objects {n}, got {K}")
    if ppc_kwargs is not None and not isinstance(ppc_kwargs, dict):
        raise TypeError(f"ppc_kwargs must be a dict or None, got {type(ppc_kwargs).__name__}")
    key = V.as_rng_key(rng_key)
    k_ref, k_fit, k_init = jax.random.split(key, 3)
    t0 = time.perf_counter()
    if likelihood == "gaussian":
        ref_input = coassoc
    elif reference is None:
        import scipy.sparse as sp

        U = _sp_upper(rows, cols, vals / N, n)
        ref_input = (U + U.T + sp.eye(n)).tocsr()  # every object is in all N partitions
    if reference is None:
        ref = ppc(k_ref, ref_input, K, **{"mask_diagonal": True, **(ppc_kwargs or {})}).memberships
    else:
        ref = np.asarray(getattr(reference, "memberships", None), np.float64)
        if ref.shape != (n, K):
            raise ValueError(f"reference must be a ppc result with memberships of shape ({n}, {K})")
    if init == "ppc":
        Y0 = np.maximum(ref, 1e-12)
        values = {"memberships": Y0 / Y0.sum(axis=1, keepdims=True)}
    else:
        values = _random_values(V.as_numpy_rng(k_init), {"memberships": (n, K)})
    static_kw = (("likelihood", likelihood),)
    with jax.enable_x64(True):
        if likelihood == "binomial":
            r_, c_, v_, t_ = _pad_pairs(rows, cols, vals, extra=((np.full(rows.shape[0], float(N)), float(N)),))
            traced = {"alpha": jnp.float64(alpha), "n_trials": jnp.float64(N), "pair_trials": jnp.asarray(t_)}
        else:
            r_, c_, v_ = _pad_pairs(rows, cols, vals)
            traced = {"alpha": jnp.float64(alpha), "sigma": jnp.float64(sigma)}
        if inference == "nuts":
            r_, c_, v_ = rows, cols, vals
            if likelihood == "binomial":
                traced["pair_trials"] = jnp.full(rows.shape[0], float(N))
        arrays = (jnp.asarray(r_), jnp.asarray(c_), jnp.asarray(v_))
        stats = None
        if inference == "svi":
            draws, _ = _fit_svi(k_fit, "pairwise_memberships", arrays, traced, static_kw, n, K, values, guide,
                                num_steps, learning_rate, num_samples)
            sampler = f"SVI({'AutoDelta' if guide == 'delta' else 'AutoNormal'})"
        else:
            draws, stats = _fit_nuts(k_fit, "pairwise_memberships", arrays, traced, static_kw, n, K, values,
                                     num_warmup, num_samples, num_chains)
            sampler = "NUTS"
        Y = np.asarray(draws["memberships"], np.float64)  # (C, S, n, K)
        C_, S_ = Y.shape[:2]
        T = C_ * S_
        Yf = Y.reshape(T, n, K)
        perm = np.empty((T, K), np.int64)
        for sl in _blocks(T, K * K * n):
            cost = np.abs(Yf[sl, :, :, None] - ref[None, :, None, :]).sum(axis=1)  # (t, K draw, K ref)
            perm[sl] = _hungarian_perms(cost)
        Yf = np.take_along_axis(Yf, perm[:, None, :], axis=2)
        kw = {k: v for k, v in traced.items() if k != "alpha"}
        ll = np.asarray(jax.vmap(lambda y: _memberships_ll(y, *arrays, likelihood=likelihood, **kw))(jnp.asarray(Yf)))
    from ..mixtures.posterior import Posterior

    return Posterior(
        np.argmax(Yf, axis=2).reshape(C_, S_, n),
        log_likelihood=ll.reshape(C_, S_),
        params={"memberships": Yf.reshape(C_, S_, n, K)},
        sample_stats=stats,
        sampler=sampler,
        model="pairwise_memberships",
        seconds=time.perf_counter() - t0,
    )


def _sp_upper(rows, cols, vals, n):
    """The strict upper triangle as a csr matrix."""
    import scipy.sparse as sp

    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
