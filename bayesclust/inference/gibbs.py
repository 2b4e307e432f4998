"""Gibbs samplers in JAX for the Dirichlet-process Gaussian mixture.

Two samplers for the model of :mod:`bayesclust.models.dp_gmm` (isotropic
components ``N(mu_c, sigma2 I)``, means ``mu_c ~ N(0, rho2 I)``, a DP(alpha)
prior over partitions):

* ``collapsed=False`` -- Neal's Algorithm 2 exactly as Kulis & Jordan (2012,
  §2.2 and §3.1) write it: existing clusters use their current mean, a new
  cluster uses the closed-form prior predictive ``N(x | 0, (rho2 + sigma2) I)``
  and draws its mean from ``N(rho2/(rho2+sigma2) x, sigma2 rho2/(sigma2+rho2) I)``;
  the means are resampled from their Gaussian posterior after every sweep.
  Its small-variance limit (``sigma2 -> 0`` with ``alpha = alpha_from_lam``) is
  DP-means.
* ``collapsed=True`` -- means integrated out (Neal's Algorithm 3): a point
  joins cluster ``c`` with weight ``n_c N(x | m_c, (sigma2 + s2_c) I)`` where
  ``m_c, s2_c`` are the posterior mean/variance of ``mu_c`` given the other
  members.

Both keep clusters in a fixed-capacity buffer with an ``active`` mask; a sweep
is one ``lax.scan`` over the points; chains run in parallel with ``vmap``; long
runs are split into segments with a progress bar; a full buffer is grown
(capacity doubled, the segment redone from its start with the same keys), so
no cluster is ever dropped.
"""

from __future__ import annotations

import functools
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _validation as V
from ..kernels import segment_stats

__all__ = ["gibbs_dp_gmm", "GibbsState", "gibbs_sweep", "init_state"]


class GibbsState(NamedTuple):
    """State of one chain.

    Attributes
    ----------
    labels : int32 (n,)
        Slot of each point's cluster.
    counts : float (K,)
        Cluster sizes (0 for inactive slots).
    sums : float (K, d)
        Per-cluster sums of the points.
    means : float (K, d)
        Cluster means (Algorithm 2 form; unused when collapsed).
    log_alpha : float scalar
        Log of the DP concentration (kept in log space: in the small-variance
        regime ``alpha = alpha_from_lam(...)`` under- or overflows).
    sigma2 : float scalar
    overflow : bool
        A new cluster was needed but every slot was taken (the sweep is invalid).
    """

    labels: jax.Array
    counts: jax.Array
    sums: jax.Array
    means: jax.Array
    log_alpha: jax.Array
    sigma2: jax.Array
    overflow: jax.Array


def _log_normal_iso(sq_dist, var, d):
    return -0.5 * d * jnp.log(2.0 * jnp.pi * var) - sq_dist / (2.0 * var)


def _categorical_inverse_cdf(log_w, u):
    """Index drawn with probabilities ``softmax(log_w)`` from ``u ~ U(0, 1]``.

    Inverse-CDF sampling needs one uniform per draw (Gumbel-max needs one per
    category), and ``u > 0`` means a zero-probability entry is never chosen.
    """
    p = jnp.exp(log_w - jnp.max(log_w))
    cdf = jnp.cumsum(p)
    return jnp.sum(cdf < u * cdf[-1]).astype(jnp.int32)


def _assignment_step(X, rho2, collapsed, state: GibbsState, i, u, z):
    """Remove point i, draw its cluster (existing or new), add it back.

    ``u ~ U(0, 1]`` picks the cluster; ``z ~ N(0, I_d)`` gives the mean of a
    new cluster (Algorithm 2).  Both are drawn in bulk before the sweep.
    """
    x = X[i]
    d = X.shape[1]
    K = state.counts.shape[0]
    old = state.labels[i]
    counts = state.counts.at[old].add(-1.0)
    sums = state.sums.at[old].add(-x)
    active = counts > 0  # a cluster dies the moment it empties (Neal's Algorithm 2)
    sigma2 = state.sigma2
    if collapsed:
        post_var = 1.0 / (1.0 / rho2 + counts / sigma2)
        post_mean = post_var[:, None] * sums / sigma2
        sq = jnp.sum((x - post_mean) ** 2, axis=1)
        log_lik = _log_normal_iso(sq, sigma2 + post_var, d)
    else:
        sq = jnp.sum((x - state.means) ** 2, axis=1)
        log_lik = _log_normal_iso(sq, sigma2, d)
    log_w = jnp.where(active, jnp.log(jnp.where(active, counts, 1.0)) + log_lik, -jnp.inf)
    log_new = state.log_alpha + _log_normal_iso(jnp.sum(x * x), rho2 + sigma2, d)
    choice = _categorical_inverse_cdf(jnp.append(log_w, log_new), u)
    is_new = choice == K
    free = jnp.argmin(active)  # first inactive slot
    overflow = state.overflow | (is_new & active[free])
    slot = jnp.where(is_new, free, choice).astype(jnp.int32)
    shrink = rho2 / (rho2 + sigma2)
    new_mean = shrink * x + jnp.sqrt(sigma2 * shrink) * z
    means = jnp.where(is_new, state.means.at[slot].set(new_mean), state.means)
    return GibbsState(
        state.labels.at[i].set(slot),
        counts.at[slot].add(1.0),
        sums.at[slot].add(x),
        means,
        state.log_alpha,
        sigma2,
        overflow,
    )


def _resample_means(key, state: GibbsState, rho2):
    """``mu_c ~ N(xbar_c / (1 + sigma2/(rho2 n_c)), sigma2 rho2 / (sigma2 + rho2 n_c) I)``."""
    n_c = state.counts
    var = state.sigma2 * rho2 / (state.sigma2 + rho2 * n_c)
    mean = rho2 * state.sums / (state.sigma2 + rho2 * n_c)[:, None]
    draw = mean + jnp.sqrt(var)[:, None] * jax.random.normal(key, state.means.shape, state.means.dtype)
    return jnp.where((n_c > 0)[:, None], draw, 0.0)


def _update_log_alpha(key, log_alpha, k, n, prior):
    """Escobar & West (1995) auxiliary-variable update under ``alpha ~ Gamma(a, b)``."""
    a, b = prior
    alpha = jnp.exp(log_alpha)
    k_eta, k_mix, k_gamma = jax.random.split(key, 3)
    eta = jax.random.beta(k_eta, alpha + 1.0, n)
    rate = b - jnp.log(eta)
    odds = (a + k - 1.0) / (n * rate)
    shape = jnp.where(jax.random.uniform(k_mix) < odds / (1.0 + odds), a + k, a + k - 1.0)
    return jnp.log(jax.random.gamma(k_gamma, shape)) - jnp.log(rate)


def gibbs_sweep(key, X, state: GibbsState, *, rho2, collapsed, alpha_prior=None, sigma2_prior=None):
    """One Gibbs sweep: every point in order, then means and hyper-parameters.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    state : GibbsState
    rho2 : float
        Prior variance of the means.
    collapsed : bool (static)
        Means integrated out (Algorithm 3) instead of Kulis & Jordan's Algorithm 2.
    alpha_prior, sigma2_prior : (a, b) tuples or None (static structure)
        ``alpha ~ Gamma(a, b)`` (shape, rate) and ``sigma2 ~ InvGamma(a, b)``.

    Returns
    -------
    GibbsState
    """
    n, d = X.shape
    k_choice, k_new, k_means, k_sigma, k_alpha = jax.random.split(key, 5)
    # All the sweep's randomness in two bulk draws: cheaper to run and to
    # compile than a key split and two draws inside every step.
    u = 1.0 - jax.random.uniform(k_choice, (n,), X.dtype)
    z = jax.random.normal(k_new, (n, d), X.dtype)

    def body(s, inp):
        i, u_i, z_i = inp
        return _assignment_step(X, rho2, collapsed, s, i, u_i, z_i), None

    state, _ = lax.scan(body, state, (jnp.arange(n), u, z))
    # Recompute the statistics exactly (the scan's running sums drift in float32).
    stats = segment_stats(X, state.labels, state.counts.shape[0])
    state = state._replace(counts=stats.weight, sums=stats.sum)
    # Collapsed chains do not need the means, but drawing them from their
    # conditional costs O(k d) and gives mean draws for the Posterior.
    state = state._replace(means=_resample_means(k_means, state, rho2))
    if sigma2_prior is not None:
        a, b = sigma2_prior
        sse = jnp.sum((X - state.means[state.labels]) ** 2)
        sigma2 = (b + 0.5 * sse) / jax.random.gamma(k_sigma, a + 0.5 * n * d)
        state = state._replace(sigma2=sigma2.astype(X.dtype))
    if alpha_prior is not None:
        k = jnp.sum(state.counts > 0)
        log_alpha = _update_log_alpha(k_alpha, state.log_alpha, k, n, alpha_prior)
        state = state._replace(log_alpha=log_alpha.astype(X.dtype))
    return state


def log_likelihood(X, state: GibbsState, rho2, collapsed):
    """``log p(X | z, mu, sigma2)`` (Algorithm 2) or ``log p(X | z, sigma2)`` (collapsed).

    The collapsed value integrates the means out cluster by cluster:
    ``sum_c [ -n_c d/2 log(2 pi sigma2) - (SS_c - |S_c|^2 / (n_c + sigma2/rho2)) / (2 sigma2)
    - d/2 log(1 + n_c rho2/sigma2) ]``.
    """
    n, d = X.shape
    s2 = state.sigma2
    if not collapsed:
        sq = jnp.sum((X - state.means[state.labels]) ** 2)
        return -0.5 * n * d * jnp.log(2 * jnp.pi * s2) - sq / (2 * s2)
    n_c = state.counts
    ss = jax.ops.segment_sum(jnp.sum(X * X, axis=1), state.labels, n_c.shape[0])
    quad = ss - jnp.sum(state.sums**2, axis=1) / (n_c + s2 / rho2)
    per = jnp.where(n_c > 0, -0.5 * d * jnp.log1p(n_c * rho2 / s2) - quad / (2 * s2), 0.0)
    return -0.5 * n * d * jnp.log(2 * jnp.pi * s2) + jnp.sum(per)


def init_state(X, labels, capacity, log_alpha, sigma2) -> GibbsState:
    """A chain state from an initial labelling (slots ``0..k-1``), means at the cluster means."""
    stats = segment_stats(X, labels, capacity)
    means = jnp.where((stats.weight > 0)[:, None], stats.sum / jnp.maximum(stats.weight, 1.0)[:, None], 0.0)
    dtype = X.dtype
    return GibbsState(
        labels.astype(jnp.int32), stats.weight, stats.sum, means,
        jnp.asarray(log_alpha, dtype), jnp.asarray(sigma2, dtype), jnp.asarray(False),
    )


def _grow(state: GibbsState, capacity: int) -> GibbsState:
    pad = capacity - state.counts.shape[-1]
    return state._replace(
        counts=jnp.pad(state.counts, [(0, 0)] * (state.counts.ndim - 1) + [(0, pad)]),
        sums=jnp.pad(state.sums, [(0, 0)] * (state.sums.ndim - 2) + [(0, pad), (0, 0)]),
        means=jnp.pad(state.means, [(0, 0)] * (state.means.ndim - 2) + [(0, pad), (0, 0)]),
        overflow=jnp.zeros_like(state.overflow),
    )


@functools.partial(jax.jit, static_argnames=("num", "thin", "collapsed"))
def _run_segment(keys, X, state, rho2, alpha_prior, sigma2_prior, *, num, thin, collapsed):
    """``num`` recorded draws of ``thin`` sweeps each, for every chain (vmap).

    Module-level and keyed only on shapes and the static flags, so repeated
    fits (estimator checks, small-variance paths, notebooks) reuse one
    compilation; ``rho2`` and the prior parameters are traced values.
    """

    def one_chain(key, state):
        def draw(s, k):
            keys = jax.random.split(k, thin)
            s = lax.fori_loop(
                0, thin,
                lambda t, s_: gibbs_sweep(keys[t], X, s_, rho2=rho2, collapsed=collapsed,
                                          alpha_prior=alpha_prior, sigma2_prior=sigma2_prior),
                s,
            )
            record = dict(
                labels=s.labels,
                log_likelihood=log_likelihood(X, s, rho2, collapsed),
                log_alpha=s.log_alpha,
                sigma2=s.sigma2,
                means=s.means,
                n_clusters=jnp.sum(s.counts > 0),
            )
            return s, record

        return lax.scan(draw, state, jax.random.split(key, num))

    return jax.vmap(one_chain)(keys, state)


def gibbs_dp_gmm(
    rng_key,
    X,
    *,
    alpha: float = 1.0,
    log_alpha: float | None = None,
    sigma2: float = 1.0,
    rho2: float = 100.0,
    alpha_prior: tuple[float, float] | None = None,
    sigma2_prior: tuple[float, float] | None = None,
    collapsed: bool = False,
    num_warmup: int = 500,
    num_samples: int = 500,
    thin: int = 1,
    num_chains: int = 1,
    init_labels=None,
    center: bool = True,
    max_clusters: int | None = None,
    progress_bar: bool = True,
):
    r"""Gibbs sampling of the DP Gaussian mixture; returns a :class:`Posterior`.

    Model (Kulis & Jordan 2012, §2.2): :math:`z \sim \mathrm{CRP}(\alpha)`,
    :math:`\mu_c \sim N(0, \rho^2 I)`, :math:`x_i \sim N(\mu_{z_i}, \sigma^2 I)`,
    optionally :math:`\alpha \sim \mathrm{Gamma}(a, b)` (Escobar & West update)
    and :math:`\sigma^2 \sim \mathrm{InvGamma}(a, b)` (conjugate update).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    alpha : float
        DP concentration (> 0); the initial value when ``alpha_prior`` is given.
    log_alpha : float, optional
        The concentration on the log scale, overriding ``alpha`` (for the
        small-variance regime, where ``alpha_from_lam`` under/overflows; see
        :func:`bayesclust.models.dp_gmm.log_alpha_from_lam`).
    sigma2 : float
        Component **variance** (> 0); the initial value when ``sigma2_prior`` is given.
    rho2 : float
        Prior **variance** of the means (> 0); Kulis & Jordan use 100.
    alpha_prior, sigma2_prior : (a, b), optional
        Gamma(shape a, rate b) prior on alpha; InvGamma(a, b) prior on sigma2.
    collapsed : bool
        Integrate the means out (Neal's Algorithm 3) instead of Kulis & Jordan's
        Algorithm 2 (whose small-variance limit is DP-means).
    num_warmup, num_samples, thin : int
        Sweeps discarded, draws kept, and sweeps per kept draw.
    num_chains : int
        Independent chains, run in parallel with ``vmap``.
    init_labels : array_like of int, shape (n,), optional
        Initial partition; default all points in one cluster (Kulis & Jordan §6.2).
    center : bool
        Centre the data first (the prior on the means is centred at 0); the
        returned means are in the original frame.
    max_clusters : int, optional
        Largest buffer the sampler may grow to (default ``n``).
    progress_bar : bool

    Returns
    -------
    Posterior
        Label draws (chains, draws, n), ``log_likelihood`` (``log p(X | z, mu,
        sigma2)``, or ``log p(X | z, sigma2)`` when collapsed), params
        ``means`` (slots indexed by the labels), ``alpha``, ``sigma2``.

    References
    ----------
    R. M. Neal (2000), Markov chain sampling methods for Dirichlet process
    mixture models, Algorithms 2 and 3.  B. Kulis and M. I. Jordan (2012), §2.2,
    §3.1.  M. D. Escobar and M. West (1995).
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    if log_alpha is None:
        log_alpha = float(np.log(V.check_positive(alpha, "alpha")))
    else:
        log_alpha = V._check_real_scalar(log_alpha, "log_alpha")
        if not np.isfinite(log_alpha):
            raise ValueError(f"log_alpha must be finite, got {log_alpha!r}")
    sigma2 = V.check_positive(sigma2, "sigma2")
    rho2 = V.check_positive(rho2, "rho2")
    for name, prior in (("alpha_prior", alpha_prior), ("sigma2_prior", sigma2_prior)):
        if prior is not None:
            if len(prior) != 2:
                raise ValueError(f"{name} must be a pair (a, b), got {prior!r}")
            V.check_positive(prior[0], f"{name}[0]")
            V.check_positive(prior[1], f"{name}[1]")
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    thin = V.check_int(thin, "thin", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    n, d = X.shape
    limit = n if max_clusters is None else min(V.check_int(max_clusters, "max_clusters", minimum=1), n)
    if init_labels is None:
        labels0 = np.zeros(n, np.int32)
    else:
        labels0 = V.check_labels(init_labels, "init_labels", n_samples=n)
        labels0 = np.unique(labels0, return_inverse=True)[1].astype(np.int32)
    offset = X.mean(0) if center else np.zeros(d, X.dtype)
    Xj = jnp.asarray(X - offset)
    k0 = int(labels0.max()) + 1
    capacity = max(k0, min(max(32, 2 * k0), limit))
    state = init_state(Xj, jnp.asarray(labels0), capacity, log_alpha, sigma2)
    state = jax.tree.map(lambda a: jnp.broadcast_to(a, (num_chains,) + a.shape), state)
    dtype = Xj.dtype
    priors = [None if p is None else tuple(jnp.asarray(v, dtype) for v in p)
              for p in (alpha_prior, sigma2_prior)]
    run = functools.partial(_run_segment, rho2=jnp.asarray(rho2, dtype), alpha_prior=priors[0],
                            sigma2_prior=priors[1], thin=thin, collapsed=bool(collapsed))
    # Warm-up is rounded up to whole draws of `thin` sweeps, and every segment
    # has the same static length, so one compilation serves the whole run.
    n_warm_draws = -(-num_warmup // thin)
    total_draws = n_warm_draws + num_samples
    seg_len = -(-total_draws // max(1, min(20, total_draws // 10)))
    n_segments = -(-total_draws // seg_len)
    progress = _Progress(total_draws * thin, progress_bar,
                         f"gibbs ({'collapsed' if collapsed else 'KJ Alg. 2'})")
    records = []
    t0 = time.perf_counter()
    for seg_key in jax.random.split(key, n_segments):
        chain_keys = jax.random.split(seg_key, num_chains)
        while True:
            new_state, rec = run(chain_keys, Xj, state, num=seg_len)
            if not bool(jnp.any(new_state.overflow)):
                break
            if capacity >= limit:
                raise RuntimeError(f"the Gibbs sampler needed more than max_clusters={limit} clusters")
            # Redo the segment from its start, with the same keys, in a bigger buffer.
            capacity = min(2 * capacity, limit)
            state = _grow(state, capacity)
        state = new_state
        records.append(jax.tree.map(np.asarray, rec))
        progress.update(seg_len * thin)
    progress.close()
    seconds = time.perf_counter() - t0
    width = max(r["means"].shape[2] for r in records)
    for r in records:
        r["means"] = np.pad(r["means"], ((0, 0), (0, 0), (0, width - r["means"].shape[2]), (0, 0)))
    kept = slice(n_warm_draws, n_warm_draws + num_samples)

    def cat(name):
        return np.concatenate([r[name] for r in records], axis=1)[:, kept]

    means = cat("means") + offset
    return Posterior(
        cat("labels"),
        log_likelihood=cat("log_likelihood"),
        params={"means": means, "alpha": np.exp(cat("log_alpha")), "sigma2": cat("sigma2")},
        sample_stats={"n_clusters": cat("n_clusters")},
        sampler="gibbs-collapsed" if collapsed else "gibbs-kj-alg2",
        model="dp_gmm",
        seconds=seconds,
    )


class _Progress:
    """tqdm progress bar when available and wanted, else silent."""

    def __init__(self, total, enabled, desc):
        self.bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="sweep", leave=False)
            except ImportError:  # pragma: no cover
                self.bar = None

    def update(self, k):
        if self.bar is not None:
            self.bar.update(k)

    def close(self):
        if self.bar is not None:
            self.bar.close()

