r"""Gibbs sampling of the tempered DP-MDA2, whose small-variance limit is HardDC (ours).

The model is :func:`bayesclust.models.dp_mda2.dp_mda2` (our extension,
docs/deviations.md#hard-dc-model): a DP mixture whose component emits the point,
:math:`N(\mu_j, \sigma^2 I)`, and the auxiliary class, :math:`\mathrm{Cat}(\psi_j)` with
:math:`\psi_j \sim \mathrm{Dir}(n^0)` integrated out, the class (Polya) factor tempered by
:math:`\xi / (2\sigma^2)`.  The Polya probability of a partition's classes is a product of
sequential predictives, so the single-site conditional of a label is the DP mixture's (Neal
2000, Algorithms 2 and 3, as :mod:`bayesclust.inference.mixtures.gibbs` samples it) times the
tempered predictive of the point's class in each cluster without the point:

.. math::

    p(z_i = j \mid \cdot) \propto n_{-i,j}\, N(x_i \mid \mu_j, \sigma^2 I)\,
    \mathrm{pred}_j(c_i)^{\xi/(2\sigma^2)}, \qquad
    p(z_i = \mathrm{new} \mid \cdot) \propto \alpha\, N(x_i \mid 0, (\rho^2 + \sigma^2) I)\,
    (n^0_{c_i} / N^0)^{\xi/(2\sigma^2)}

(:func:`bayesclust.kernels.polya_log_predictive`; collapsed: the Gaussian factor is the
posterior predictive of the cluster's other members).  With
:math:`\alpha = (1 + \rho^2/\sigma^2)^{d/2} e^{-\lambda/(2\sigma^2)}` and explicit means the
weights go as :math:`\exp(-[\|x_i - \mu_j\|^2 - \xi \log \mathrm{pred}_j(c_i)] / (2\sigma^2))`
against :math:`\exp(-[\lambda - \xi \log(n^0_{c_i}/N^0)] / (2\sigma^2))`, so as
:math:`\sigma^2 \to 0` a sweep is the pass of :func:`bayesclust.inference.hard.hard_dc.hard_dc`
(Kulis & Jordan 2012, §3.1's argument).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _validation as V
from ...kernels import polya_log_evidence, polya_log_predictive, segment_stats
from ...models.dp_gmm import log_alpha_from_lam
from .._driver import pow2_at_least
from ._common import _draw_means, _draw_slot_or_new, _log_normal_iso, _slot_terms, start_labels
from .convergence import DP_SAMPLER_DEFAULTS, warn_if_not_converged
from .gibbs import GibbsInfo, log_likelihood, run_in_segments

__all__ = [
    "gibbs_dp_mda2",
    "DPMDA2State",
    "init_dp_mda2_state",
    "dp_mda2_sweep",
    "dp_mda2_log_likelihood",
]


class DPMDA2State(NamedTuple):
    """State of one chain of :func:`gibbs_dp_mda2` (a leading chain axis on every field for
    a batch of chains).

    Attributes
    ----------
    labels : int32 (n,)
        Slot of each point's cluster.
    counts : float (K,)
        Cluster sizes (0 for free slots).
    sums : float (K, d)
        Per-cluster sums of the points.
    means : float (K, d)
        Cluster means (explicit-means sampler; drawn but unused when collapsed).
    class_counts : float (K, C)
        Points of each class per cluster.
    log_alpha : float scalar
        Log of the DP concentration.
    sigma2 : float scalar
    overflow : bool
        A new cluster was needed but every slot was taken (the sweep is invalid).
    """

    labels: jax.Array
    counts: jax.Array
    sums: jax.Array
    means: jax.Array
    class_counts: jax.Array
    log_alpha: jax.Array
    sigma2: jax.Array
    overflow: jax.Array


def _class_table(classes, labels, capacity: int, n_classes: int, dtype):
    onehot = (jnp.arange(n_classes)[None, :] == classes[:, None]).astype(dtype)
    return jax.ops.segment_sum(onehot, labels, capacity)


def init_dp_mda2_state(X, classes, labels, capacity: int, log_alpha, sigma2, *,
                       n_classes: int) -> DPMDA2State:
    """A chain state from a labelling (slots ``0..k-1``), means at the cluster means.

    Parameters
    ----------
    X : array, shape (n, d)
    classes : int array, shape (n,)
        Classes ``0..n_classes-1``.
    labels : int array, shape (n,)
    capacity : int
        Slots of the buffers (>= k).
    log_alpha, sigma2 : float
    n_classes : int

    Returns
    -------
    DPMDA2State
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    labels = V.check_kernel_array(labels, "labels", ndim=1, kind="i")
    V.check_same_length(classes, X, "classes", "X")
    V.check_same_length(labels, X, "labels", "X")
    # both index tables (class counts, cluster slots): an id past them would be dropped silently
    V.check_kernel_ids(classes, "classes", V.check_int(n_classes, "n_classes", minimum=1))
    V.check_kernel_ids(labels, "labels", V.check_int(capacity, "capacity", minimum=1))
    X = jnp.asarray(X)
    labels = jnp.asarray(labels, jnp.int32)
    stats = segment_stats(X, labels, capacity)
    means = jnp.where((stats.weight > 0)[:, None],
                      stats.sum / jnp.maximum(stats.weight, 1.0)[:, None], 0.0)
    dtype = X.dtype
    return DPMDA2State(
        labels, stats.weight, stats.sum, means,
        _class_table(jnp.asarray(classes, jnp.int32), labels, capacity, n_classes, dtype),
        jnp.asarray(log_alpha, dtype), jnp.asarray(sigma2, dtype), jnp.asarray(False))


def dp_mda2_sweep(key, X, classes, state: DPMDA2State, *, xi, rho2, n0=1.0,
                  collapsed: bool = False) -> tuple[DPMDA2State, GibbsInfo]:
    """One Gibbs sweep of one chain: every point in row order, then the means.

    Point ``i`` is removed (its count, sum and class count), its cluster drawn from the
    conditional of the module docstring by inverse CDF (a new cluster takes the first free
    slot; explicit means: its mean drawn from the posterior given ``x_i``, Kulis & Jordan
    2012, §2.2), and added back.  After the points the counts are recomputed from the
    labels and the means drawn from their Gaussian posterior.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    classes : int array, shape (n,)
    state : DPMDA2State
        One chain (no chain axis; ``jax.vmap`` for many).
    xi : float
        Temperature of the class term (the factor's power is ``xi / (2 sigma2)``).
    rho2 : float
        Prior variance of the means.
    n0 : float
        Dirichlet prior count per class.
    collapsed : bool (static)
        Means integrated out (Neal's Algorithm 3) instead of Algorithm 2.

    Returns
    -------
    state : DPMDA2State
    info : GibbsInfo
        Clusters after the sweep and whether a point moved (no split-merge moves: 0, 0).
    """
    X = V.check_kernel_array(X, "X", ndim=2)
    classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
    V.check_rows_match(X, "X", state.labels)
    V.check_rows_match(classes, "classes", state.labels)
    V.check_kernel_ids(classes, "classes", state.class_counts.shape[1])
    n, d = X.shape
    K, C = state.class_counts.shape
    dtype = X.dtype
    sigma2 = state.sigma2
    rho2 = jnp.asarray(rho2, dtype)
    temper = jnp.asarray(xi, dtype) / (2.0 * sigma2)
    # All the sweep's randomness in one draw (uniforms in (-1, 1), normals by sqrt(2) erfinv
    # as jax.random.normal makes them): one random-bits program instead of three, which
    # under the chains' vmap is a large part of the sampler's compilation.
    n_z = 0 if collapsed else n * d
    v = jax.random.uniform(key, (n + n_z + K * d,), dtype, minval=np.nextafter(-1.0, 0.0,
                                                                              dtype=dtype),
                           maxval=1.0)
    u = 1.0 - 0.5 * (v[:n] + 1.0)  # in (0, 1]
    normals = jnp.sqrt(jnp.asarray(2.0, dtype)) * jax.scipy.special.erfinv(v[n:])
    slots = jnp.arange(K, dtype=jnp.int32)
    class_ids = jnp.arange(C, dtype=jnp.int32)
    empty = jnp.zeros((1, C), dtype)
    new_pred = jax.vmap(lambda c: polya_log_predictive(empty, c, n0)[0])(class_ids)
    log_new = state.log_alpha + _log_normal_iso(jnp.sum(X * X, axis=1), rho2 + sigma2, d)
    if collapsed:
        new_means = jnp.zeros_like(X)
    else:
        shrink = rho2 / (rho2 + sigma2)
        new_means = shrink * X + jnp.sqrt(sigma2 * shrink) * normals[:n_z].reshape(n, d)

    def step(carry, inp):
        counts, sums, means, table, overflow = carry
        x, c, old, u_i, ln_i, nm_i = inp
        at_old = slots == old
        at_c = (class_ids == c).astype(dtype)
        counts = counts - at_old
        sums = sums - jnp.where(at_old[:, None], x[None, :], 0.0)
        table = table - at_old[:, None] * at_c[None, :]
        a, b, m = _slot_terms(counts, sums, means, sigma2, rho2, collapsed, d)
        log_w = (a - b * jnp.sum((x[None, :] - m) ** 2, axis=1)
                 + temper * polya_log_predictive(table, c, n0))
        choice = _draw_slot_or_new(log_w[:, None], (ln_i + temper * new_pred[c])[None],
                                   u_i[None])[0]
        is_new = choice == K
        active = counts > 0
        free = jnp.argmin(active).astype(jnp.int32)
        overflow = overflow | (is_new & jnp.all(active))
        slot = jnp.where(is_new, free, choice)
        at_new = slots == slot
        counts = counts + at_new
        sums = sums + jnp.where(at_new[:, None], x[None, :], 0.0)
        table = table + at_new[:, None] * at_c[None, :]
        if not collapsed:
            means = jnp.where((at_new & is_new)[:, None], nm_i[None, :], means)
        return (counts, sums, means, table, overflow), slot

    carry = (state.counts, state.sums, state.means, state.class_counts, state.overflow)
    (_, _, means, _, overflow), labels = lax.scan(
        step, carry, (X, classes, state.labels, u, log_new, new_means))
    # Exact statistics of the new labels (running float sums drift).
    stats = segment_stats(X, labels, K)
    table = _class_table(classes, labels, K, C, dtype)
    means = _draw_means(None, stats.weight, stats.sum, sigma2, rho2,
                        noise=normals[n_z:].reshape(K, d))
    new = state._replace(labels=labels, counts=stats.weight, sums=stats.sum, means=means,
                         class_counts=table, overflow=overflow)
    zero = jnp.zeros((), jnp.int32)
    info = GibbsInfo(jnp.sum(stats.weight > 0, dtype=jnp.int32),
                     jnp.any(labels != state.labels), zero, zero)
    return new, info


def dp_mda2_log_likelihood(X, state: DPMDA2State, *, xi, rho2, n0=1.0, collapsed=False):
    """The tempered log likelihood of a chain's state, a scalar.

    ``log p(X | z, mu, sigma2)`` (collapsed: ``log p(X | z, sigma2)``, means integrated out,
    :func:`bayesclust.inference.mixtures.gibbs.log_likelihood`) plus
    ``xi / (2 sigma2) * log Polya(c | z)`` (with its normaliser).
    """
    X = V.check_kernel_array(X, "X", ndim=2, min_rows=1)
    gauss = log_likelihood(X, state, jnp.asarray(rho2, X.dtype), collapsed)
    return gauss + xi / (2.0 * state.sigma2) * polya_log_evidence(state.class_counts, n0,
                                                                  include_norm=True)


@functools.partial(jax.jit, static_argnames=("num", "collapsed"))
def _run_segment(keys, X, classes, state, xi, rho2, n0, *, num, collapsed):
    """``num`` recorded sweeps of every chain (``vmap`` over the chains)."""

    def one_chain(key, s):
        def draw(s, k):
            s, _ = dp_mda2_sweep(k, X, classes, s, xi=xi, rho2=rho2, n0=n0, collapsed=collapsed)
            record = dict(
                labels=s.labels,
                log_likelihood=dp_mda2_log_likelihood(X, s, xi=xi, rho2=rho2, n0=n0,
                                                      collapsed=collapsed),
                means=s.means,
                n_clusters=jnp.sum(s.counts > 0),
            )
            return s, record

        return lax.scan(draw, s, jax.random.split(key, num))

    return jax.vmap(one_chain)(keys, state)


@functools.partial(jax.jit, static_argnames=("capacity", "n_classes"))
def _init_chains(X, classes, labels, log_alpha, sigma2, *, capacity, n_classes):
    """Every chain's state from its labels ``(C, n)`` (compiled: one program per capacity)."""
    return jax.vmap(lambda lab: init_dp_mda2_state(X, classes, lab, capacity, log_alpha, sigma2,
                                                   n_classes=n_classes))(labels)


def _grow(state: DPMDA2State, capacity: int) -> DPMDA2State:
    pad = capacity - state.counts.shape[-1]

    def slots_axis(a, axis):
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, pad)
        return jnp.pad(a, widths)

    return state._replace(counts=slots_axis(state.counts, -1), sums=slots_axis(state.sums, -2),
                          means=slots_axis(state.means, -2),
                          class_counts=slots_axis(state.class_counts, -2),
                          overflow=jnp.zeros_like(state.overflow))


def gibbs_dp_mda2(
    rng_key,
    X,
    classes,
    *,
    lam: float,
    xi: float,
    sigma2: float,
    rho2: float = 100.0,
    n0: float = 1.0,
    collapsed: bool = False,
    num_warmup: int = DP_SAMPLER_DEFAULTS.num_warmup,
    num_samples: int = DP_SAMPLER_DEFAULTS.num_samples,
    num_chains: int = DP_SAMPLER_DEFAULTS.num_chains,
    init_labels=None,
    center: bool = True,
    progress_bar: bool = True,
):
    r"""Gibbs sampling of the tempered DP-MDA2 (ours); returns a :class:`Posterior`.

    The model of :func:`bayesclust.models.dp_mda2.dp_mda2` with the CRP prior,
    :math:`\alpha = (1 + \rho^2/\sigma^2)^{d/2} e^{-\lambda/(2\sigma^2)}`
    (:func:`bayesclust.models.dp_gmm.log_alpha_from_lam`) and the class factor
    :math:`\mathrm{Polya}(c \mid z)^{\xi/(2\sigma^2)}`; single-site moves as in the module
    docstring (:func:`dp_mda2_sweep`), all chains at once (``vmap``, one compiled segment).
    With explicit means (the default, Kulis & Jordan's Algorithm 2 form) its small-variance
    limit is :func:`bayesclust.inference.hard.hard_dc.hard_dc`; ``xi = 0`` is
    :func:`bayesclust.gibbs_dp_gmm`'s model without split-merge moves.  Our extension
    (docs/deviations.md#hard-dc-model).

    Parameters
    ----------
    rng_key : jax key or int
    X : array_like, shape (n, d)
    classes : array_like of int, shape (n,)
        Auxiliary classes (nominal: relabelled ``0..C-1`` in increasing order).
    lam : float
        HardDC / DP-means penalty (a squared distance, > 0), through ``alpha``.
    xi : float
        Temperature of the class term (>= 0).
    sigma2 : float
        Component **variance** (> 0).
    rho2 : float
        Prior **variance** of the means (> 0).
    n0 : float
        Dirichlet prior count per class (> 0).
    collapsed : bool
        Integrate the means out (Neal's Algorithm 3).
    num_warmup, num_samples, num_chains : int
        Sweeps discarded, draws kept per chain (one sweep each), chains.
    init_labels : array_like of int, shape (n,) or (num_chains, n), optional
        Start partition, shared or one per chain; default one cluster.
    center : bool
        Centre the data first (the means' prior is centred at 0).
    progress_bar : bool

    Returns
    -------
    Posterior
        Label draws ``(chains, draws, n)``, ``log_likelihood`` the tempered log likelihood
        (:func:`dp_mda2_log_likelihood`), params ``means`` (data frame), sample stat
        ``n_clusters``; ``model="dp_mda2"``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(m, 0.3, (15, 1)) for m in (-2, 2)])
    >>> c = np.repeat([0, 1], 15)
    >>> post = gibbs_dp_mda2(0, X, c, lam=4.0, xi=1.0, sigma2=0.09, num_warmup=20,
    ...                      num_samples=100, num_chains=4, progress_bar=False)
    >>> int(np.bincount(post.n_clusters.ravel()).argmax())
    2
    """
    from .posterior import Posterior

    key = V.as_rng_key(rng_key)
    X = V.check_array(X, "X")
    V.check_squares_representable(X, "X")
    n, d = X.shape
    values = V.check_labels(classes, "classes", n_samples=n)
    codes = np.unique(values, return_inverse=True)[1].reshape(n).astype(np.int32)
    n_classes = int(codes.max()) + 1
    lam = V.check_positive(lam, "lam")
    xi = V.check_nonnegative(xi, "xi")
    sigma2 = V.check_positive(sigma2, "sigma2")
    rho2 = V.check_positive(rho2, "rho2")
    n0 = V.check_positive(n0, "n0")
    num_warmup = V.check_int(num_warmup, "num_warmup", minimum=0)
    num_samples = V.check_int(num_samples, "num_samples", minimum=1)
    num_chains = V.check_int(num_chains, "num_chains", minimum=1)
    log_alpha = float(log_alpha_from_lam(lam, sigma2, rho2, d))
    labels0, per_chain = start_labels(init_labels, n, num_chains)
    offset = X.mean(0) if center else np.zeros(d, X.dtype)
    Xj = jnp.asarray(X - offset)
    cj = jnp.asarray(codes)
    dtype = Xj.dtype
    k0 = int(labels0.max()) + 1
    # Powers of two (one compiled segment per size), at least twice the start's clusters.
    cap_max = pow2_at_least(n)
    capacity = min(max(16, pow2_at_least(2 * k0)), cap_max)

    labels0 = np.broadcast_to(labels0, (num_chains, n))
    state = _init_chains(Xj, cj, jnp.asarray(labels0), np.asarray(log_alpha, dtype),
                         np.asarray(sigma2, dtype), capacity=capacity, n_classes=n_classes)
    params = tuple(np.asarray(v, dtype) for v in (xi, rho2, n0))

    def grow(s):
        nonlocal capacity
        if capacity >= cap_max:
            raise RuntimeError(f"the DP-MDA2 sampler needed more than n={n} clusters")
        capacity = min(2 * capacity, cap_max)
        return _grow(s, capacity)

    records, seconds = run_in_segments(
        key, lambda keys, s, num: _run_segment(keys, Xj, cj, s, *params, num=num,
                                               collapsed=bool(collapsed)),
        state, num_chains=num_chains, num_warmup=num_warmup, num_samples=num_samples, thin=1,
        grow=grow, progress_bar=progress_bar,
        desc=f"gibbs DP-MDA2 ({'collapsed' if collapsed else 'KJ Alg. 2'})", padded={"means": 2})
    post = Posterior(
        records["labels"],
        log_likelihood=records["log_likelihood"],
        params={"means": records["means"] + offset},
        sample_stats={"n_clusters": records["n_clusters"]},
        sampler="gibbs-dp-mda2-" + ("collapsed" if collapsed else "kj-alg2"),
        model="dp_mda2",
        kernels="xla",
        seconds=seconds,
        copy=False,
    )
    warn_if_not_converged(post)
    return post
