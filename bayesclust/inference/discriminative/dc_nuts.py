r"""NUTS on the smoothed collapsed program of discriminative clustering
(:func:`bayesclust.models.discriminative.dc_collapsed`), started at CG MAP.

Kaski, Sinkkonen & Klami (2005), "Discriminative clustering", §3.1 (eq. 10).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from ... import _validation as V
from ...kernels import nearest_center
from ...models.discriminative import dc_collapsed
from ._common import check_init, check_problem, hyper
from .dc_map import dc_map

__all__ = ["dc_nuts"]

def _voronoi_label_draws(rng_key, samples: dict, model_args: tuple, model_kwargs: dict):
    """Label sampler for :func:`~bayesclust.inference.mixtures.mcmc.run_nuts`: hard cells per draw.

    The class distributions are integrated out and the partition is a
    deterministic function of the prototypes, so each draw's labels are its
    Voronoi cells (no randomness; ``rng_key`` is unused).
    """
    del rng_key, model_kwargs
    X = jnp.asarray(model_args[0])
    protos = jnp.asarray(samples["prototypes"], X.dtype)
    return lax.map(lambda m: nearest_center(X, m).index, protos,
                   batch_size=max(1, min(protos.shape[0], (1 << 22) // max(1, X.shape[0]))))


def dc_nuts(
    rng_key,
    X,
    classes,
    n_clusters: int,
    smooth_std: float,
    *,
    num_warmup: int = 500,
    num_samples: int = 500,
    num_chains: int = 1,
    init: Any = "kmeans",
    map_init: bool = True,
    n_classes: int | None = None,
    n0: float = 1.0,
    lam_eq: float = 0.0,
    lam_mog: float = 0.0,
    lam_vq: float = 0.0,
    progress_bar: bool = False,
    **kwargs,
):
    r"""Sample the prototypes of smoothed discriminative clustering with NUTS.

    Runs :func:`bayesclust.inference.mixtures.mcmc.run_nuts` on
    :func:`~bayesclust.models.discriminative.dc_collapsed` with ``smooth_std``
    (the class distributions integrated out; the density is the smoothed
    objective :math:`\exp F(m)` of eq. 10 with the optional regularisers, under
    the paper's flat prior), starting every chain at the CG MAP
    (:func:`dc_map`) via ``init_to_value``.  Each draw's labels are the hard
    Voronoi cells of its prototypes.

    Parameters
    ----------
    rng_key : jax key or int
        Split into the initialisation key and the NUTS key.
    X, classes, n_clusters, smooth_std, n_classes, n0, lam_eq, lam_mog, lam_vq
        As in :func:`dc_map`.
    num_warmup, num_samples, num_chains : int, default 500, 500, 1
    init : {"kmeans", "random"} or array_like (K, d), default "kmeans"
        Start of the CG MAP (or, with ``map_init=False``, of the chains).
    map_init : bool, default True
        Start the chains at :func:`dc_map` run from ``init``.
    progress_bar : bool, default False
    **kwargs
        Passed to :func:`~bayesclust.inference.mixtures.mcmc.run_nuts` (``chain_method``,
        ``nuts_kwargs``; an ``init_strategy`` there overrides the MAP start).

    Returns
    -------
    Posterior
        ``labels`` (chains, draws, n): hard Voronoi cells of each draw;
        ``params["prototypes"]`` (chains, draws, K, d).

    Notes
    -----
    The flat prior on the prototypes is improper, and so is the smoothed
    posterior: a prototype far from the data has vanishing memberships and the
    density no longer depends on where it is; and moves that leave every
    membership unchanged are exactly flat (for ``K = 2``, sliding both
    prototypes along their bisector).  NUTS trajectories along flat directions
    never turn back, so trees hit ``max_tree_depth`` (cap it through
    ``nuts_kwargs={"max_tree_depth": ...}``).  Starting every chain at the MAP
    keeps them in the mode's basin for moderate runs; check the draws (an
    escaping prototype shows as an empty cell).  Prototype draws are not identified
    (label switching); use the label-invariant summaries of ``Posterior``
    (co-clustering, point estimate, number of non-empty cells).  NUTS runs in
    JAX's default precision (float32 unless ``jax_enable_x64``); the smoothed
    density is sharply peaked for large ``n`` or small ``smooth_std``, where
    NUTS needs small steps (long warm-up).

    Examples
    --------
    >>> from bayesclust.datasets import dc_toy
    >>> X, c = dc_toy(0, 40)
    >>> post = dc_nuts(0, X, c, 2, 0.5, num_warmup=50, num_samples=20,
    ...                init="random")  # doctest: +SKIP
    >>> post.labels.shape  # doctest: +SKIP
    (1, 20, 40)
    """
    from numpyro.infer import init_to_value

    from ..mixtures.mcmc import run_nuts

    problem = check_problem(X, classes, n_clusters, n_classes)
    smooth_std = V.check_positive(smooth_std, "smooth_std")
    n0, lam_eq, lam_mog, lam_vq = hyper(n0, lam_eq, lam_mog, lam_vq)
    key = V.as_rng_key(rng_key)
    k_init, k_nuts = jax.random.split(key)
    if map_init:
        m0 = dc_map(k_init, problem.X, problem.classes, problem.n_clusters, smooth_std, init=init,
                    n_classes=problem.n_classes, n0=n0, lam_eq=lam_eq, lam_mog=lam_mog,
                    lam_vq=lam_vq).prototypes
    else:
        m0 = check_init(k_init, problem.X, problem.n_clusters, init)
    nuts_kwargs = dict(kwargs.pop("nuts_kwargs", None) or {})
    X_run = jnp.asarray(problem.X)  # JAX's default precision
    nuts_kwargs.setdefault("init_strategy",
                           init_to_value(values={"prototypes": jnp.asarray(m0, X_run.dtype)}))
    return run_nuts(
        k_nuts, dc_collapsed, X_run, jnp.asarray(problem.classes), problem.n_clusters,
        problem.n_classes, smooth_std,
        num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
        progress_bar=progress_bar, label_sampler=_voronoi_label_draws, nuts_kwargs=nuts_kwargs,
        n0=n0, lam_eq=lam_eq, lam_mog=lam_mog, lam_vq=lam_vq, **kwargs,
    )
