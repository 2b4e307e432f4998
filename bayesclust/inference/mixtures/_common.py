"""Helpers shared by the samplers of this family: the isotropic Gaussian log-density, the
per-slot terms of a point's log weight (Neal's Algorithms 2 and 3), a draw among a chain's
slots or a new cluster, the conjugate updates of the means, of a concentration (Escobar &
West 1995) and of ``sigma2``, the sequentially-allocated split-merge proposal and its
acceptance (Dahl 2003) for any conjugate cluster model, the priors as the samplers take
them, evenly spread draws, the narrowest integer type of label draws, and the rows a run
pads its data to (shape buckets: every ``n`` of a bucket runs one compiled program).

Private to ``inference/mixtures/``; its names are imported by the family's modules only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import _native
from ... import _validation as V
from ...kernels import assigned_squared_distances, padded_rows, sum_rows


def _log_normal_iso(sq_dist, var, d):
    return -0.5 * d * jnp.log(2.0 * jnp.pi * var) - sq_dist / (2.0 * var)


def _slot_terms(count, total, mean, sigma2, rho2, collapsed, d, features_first=False):
    r"""Per-slot terms ``(a_c, b_c, m_c)`` of a point's log weight ``a_c - b_c |x - m_c|^2``.

    Works on one slot (scalars) or on the whole buffer (vectors); ``total`` (and
    ``mean``) carry the features on the last axis, or on the first with
    ``features_first`` (then ``m_c`` does too).  Algorithm 2:
    :math:`a_c = \log n_c - \tfrac d2 \log(2\pi\sigma^2)`, :math:`b_c = 1/(2\sigma^2)`,
    :math:`m_c = \mu_c`.  Collapsed (Algorithm 3): the posterior predictive
    :math:`N(x \mid m_c, (\sigma^2 + s_c^2) I)` with :math:`s_c^2 = (1/\rho^2 + n_c/\sigma^2)^{-1}`,
    :math:`m_c = s_c^2 S_c / \sigma^2`, so :math:`a_c = \log n_c - \tfrac d2
    \log(2\pi(\sigma^2 + s_c^2))`, :math:`b_c = 1/(2(\sigma^2 + s_c^2))`.
    Empty slots get :math:`a_c = -\infty`.
    """
    if collapsed:
        post_var = 1.0 / (1.0 / rho2 + count / sigma2)
        shrink = post_var / sigma2
        m = shrink * total if features_first else shrink[..., None] * total
        var = sigma2 + post_var
    else:
        m = mean
        var = sigma2 + jnp.zeros_like(count)
    a = jnp.where(count > 0, jnp.log(jnp.maximum(count, 1.0)) - 0.5 * d * jnp.log(2.0 * jnp.pi * var),
                  -jnp.inf)
    return a, 0.5 / var, m


def _draw_slot_or_new(log_w, log_new, u):
    """Per chain, a slot ``0..K-1`` or ``K`` (a new cluster) drawn by inverse CDF.

    ``log_w`` (K, C) are the slots' log weights, ``log_new`` (C,) the new cluster's and
    ``u ~ U(0, 1]`` (C,).  Per chain the same draw as
    :func:`~bayesclust.kernels.categorical_inverse_cdf` of the K + 1 weights (slots,
    then new), but without concatenating the new cluster's
    weight to the slots' (with the ``(K + 1, C)`` array XLA:CPU did not vectorise the
    exponentials: a slower step, BENCHMARKS.md).
    """
    top = jnp.maximum(jnp.max(log_w, axis=0), log_new)
    cdf = jnp.cumsum(jnp.exp(log_w - top), axis=0)
    total = cdf[-1] + jnp.exp(log_new - top)
    return jnp.sum(cdf < u * total, axis=0).astype(jnp.int32)


class _SplitMergeProposal(NamedTuple):
    """A sequentially-allocated split or merge proposal of one chain (:func:`_propose_split_merge`)."""

    key: jax.Array  # the key of the acceptance draw
    split: jax.Array  # z_i = z_j: a split is proposed (else a merge)
    ci: jax.Array  # slot of point i (keeps side A)
    cj: jax.Array  # slot of point j
    to_b: jax.Array  # (n,) bool: the point is on side B (j and the members allocated to it)
    a: Any  # side A's statistics after the allocation (the model's own pytree)
    b: Any  # side B's
    log_q: jax.Array  # log probability of the allocation (of the split, or of the current split)


def _propose_split_merge(key, X, labels, side, log_weights, add, pair=None,
                         n_valid=None, uniforms=None) -> _SplitMergeProposal:
    r"""Dahl's (2003) sequential allocation of one chain, for any conjugate cluster model.

    Two distinct points ``i, j`` are drawn uniformly; ``S`` are the other members of
    their clusters, visited in a uniformly random order.  Sides ``A = {i}`` and
    ``B = {j}`` grow by allocating each ``k`` in ``S`` in turn: with ``z_i = z_j`` (a
    split) to B with probability :math:`\sigma(w_B - w_A)`, where
    :math:`w = \log |A| + \log p(x_k \mid A)` (the collapsed predictive of the points
    allocated so far); with ``z_i != z_j`` (a merge) each ``k`` follows its current
    cluster and ``log_q`` is the probability that the split allocation would have
    reproduced the current split.

    Parameters
    ----------
    key : PRNG key
    X : array, shape (n, d)
    labels : int array, shape (n,)
    side : callable ``x -> stats``
        A side holding the one point ``x`` (any pytree of arrays).
    log_weights : callable ``(a, b, x) -> w_B - w_A``
    add : callable ``(a, b, x, to_a, to_b) -> (a, b)``
        ``x`` added to side A where ``to_a`` and to side B where ``to_b`` (at most one).
    pair : (int, int) arrays, optional
        The two distinct points ``i, j``, drawn by the caller from a distribution that
        does not depend on the partition (the move then stays reversible); default:
        uniform as above.  Rows with a negative label are never members.
    n_valid : int or traced int scalar, optional
        The pair is drawn among the first ``n_valid`` rows (default all): the rows past
        it pad ``X`` to a shape bucket and have label -1.  The proposal of the first
        ``n_valid`` rows is then the one an unpadded call makes with the same key (the
        uniforms of a longer draw agree on their first rows).
    uniforms : (array, array), shapes (n,) each, optional
        The uniforms of the visiting order (on [0, 1)) and of the allocations (on
        (0, 1]), drawn by the caller (with ``pair``): then ``key`` is not used, and is
        returned as the proposal's acceptance key.

    Returns
    -------
    _SplitMergeProposal
    """
    n = X.shape[0]
    dtype = X.dtype
    if uniforms is None:
        k_i, k_j, k_perm, k_alloc, k_acc = jax.random.split(key, 5)
        u_perm = jax.random.uniform(k_perm, (n,), dtype)
        u = 1.0 - jax.random.uniform(k_alloc, (n,), dtype)  # in (0, 1]
    else:
        if pair is None:
            raise ValueError("uniforms need the pair")
        u_perm, u = uniforms
        k_acc = key
    if pair is None:
        n_pair = n if n_valid is None else n_valid
        i = jax.random.randint(k_i, (), 0, n_pair)
        j = jax.random.randint(k_j, (), 0, n_pair - 1)
        j = j + (j >= i)
    else:
        i, j = pair
    ci, cj = labels[i], labels[j]
    split = ci == cj
    idx = jnp.arange(n)
    in_s = ((labels == ci) | (labels == cj)) & (idx != i) & (idx != j)
    m = jnp.sum(in_s)
    order = jnp.argsort(jnp.where(in_s, u_perm, 2.0))
    # Members in visiting order, gathered once: the loop then indexes by its own
    # counter (the same for every chain under vmap), never by a per-chain point
    # index (which vmap would turn into gathers/scatters in every step).
    x_ord = X[order]
    to_cj = labels[order] == cj

    def body(carry, inp):
        a, b, log_q = carry
        x, cj_k, u_k, valid = inp
        diff = log_weights(a, b, x)  # log P(B) - log P(A)
        # The less likely side is taken when u < its probability, u in (0, 1]: a
        # side whose probability is below the uniforms' resolution is never
        # taken (with u in [0, 1), u = 0 would take it, and a split whose q
        # claims e^-|diff| would be proposed far more often than that).
        less = u_k < jax.nn.sigmoid(-jnp.abs(diff))
        go_b = jnp.where(split, (diff >= 0) != less, cj_k)
        to_a, to_b = valid & ~go_b, valid & go_b
        log_q = log_q + jnp.where(valid, jnp.where(go_b, jax.nn.log_sigmoid(diff),
                                                   jax.nn.log_sigmoid(-diff)), 0.0)
        a, b = add(a, b, x, to_a, to_b)
        return (a, b, log_q), to_b

    # A fixed-length scan (steps past the m members are masked): under vmap a
    # loop bounded by a per-chain m would select every carry in every step.
    carry = (side(X[i]), side(X[j]), jnp.zeros((), dtype))
    (a, b, log_q), go = lax.scan(body, carry, (x_ord, to_cj, u, idx < m))
    to_b = jnp.zeros(n, bool).at[order].set(go).at[j].set(True)
    return _SplitMergeProposal(k_acc, split, ci, cj, to_b, a, b, log_q)


def _accept_split_merge(prop: _SplitMergeProposal, log_ratio, labels, counts):
    r"""Metropolis-Hastings acceptance of a :func:`_propose_split_merge` proposal.

    ``log_ratio`` is :math:`\log p(z^{split} \mid X) - \log p(z^{merge} \mid X)`; the
    split is accepted with probability :math:`\min\{1, e^{\text{log\_ratio}} / q\}`, the
    merge with :math:`\min\{1, q\, e^{-\text{log\_ratio}}\}` (Dahl 2003; Jain & Neal
    2004, §3).  A split moves side B to the first free slot; with none free it is not
    applied and ``overflow`` is set (the caller grows the buffer and redoes the segment).

    Returns
    -------
    labels : (n,) the partition after the move
    free : the slot side B moved to (meaningful when ``do_split``)
    do_split, do_merge, overflow : bool scalars
    """
    log_acc = jnp.where(prop.split, log_ratio - prop.log_q, prop.log_q - log_ratio)
    accept = jnp.log(jax.random.uniform(prop.key, (), prop.log_q.dtype)) < log_acc
    active = counts > 0
    free = jnp.argmin(active).astype(labels.dtype)
    full = jnp.all(active)
    do_split = accept & prop.split & ~full
    do_merge = accept & ~prop.split
    new_labels = jnp.where(do_split & prop.to_b, free, labels)
    new_labels = jnp.where(do_merge & (labels == prop.cj), prop.ci, new_labels)
    return new_labels, free, do_split, do_merge, accept & prop.split & full


def _draw_means(key, counts, sums, sigma2, rho2, noise=None):
    """``mu_c ~ N(S_c rho2 / (sigma2 + rho2 n_c), sigma2 rho2 / (sigma2 + rho2 n_c) I)``, 0 for empty slots.

    The Gaussian posterior of a mean with prior ``N(0, rho2 I)`` given ``n_c``
    points of sum ``S_c`` (shared by the DP, HDP and DP-MDA2 samplers).  ``noise``: the
    standard normals to use, shape of ``sums`` (then ``key`` is not read).
    """
    var = sigma2 * rho2 / (sigma2 + rho2 * counts)
    mean = rho2 * sums / (sigma2 + rho2 * counts)[:, None]
    if noise is None:
        noise = jax.random.normal(key, sums.shape, sums.dtype)
    draw = mean + jnp.sqrt(var)[:, None] * noise
    return jnp.where((counts > 0)[:, None], draw, 0.0)


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


def _draw_sigma2(key, X, means, labels, prior, n_valid=None):
    """Conjugate ``sigma2 | z, mu, X ~ InvGamma(a + n d / 2, b + SSE / 2)`` under ``InvGamma(a, b)``.

    ``n_valid`` (optional): the rows past it pad ``X`` (labels ignored); the SSE is then
    summed by :func:`~bayesclust.kernels.sum_rows`, which the padding cannot reorder."""
    a, b = prior
    n, d = X.shape
    if n_valid is None:
        sse = jnp.sum(assigned_squared_distances(X, means, labels))
    else:
        valid = jnp.arange(n) < n_valid
        n = n_valid
        sse = sum_rows(jnp.where(valid, assigned_squared_distances(
            X, means, jnp.where(valid, labels, 0)), 0.0))
    return ((b + 0.5 * sse) / jax.random.gamma(key, a + 0.5 * n * d)).astype(X.dtype)


_PRIOR_FAMILIES = {"gamma": "Gamma", "inverse_gamma": "InverseGamma"}


def prior_distribution(prior, name: str, family: str):
    """A sampler's prior as a NumPyro distribution of its conjugate ``family``, or None.

    Parameters
    ----------
    prior : numpyro.distributions.Gamma / InverseGamma or None
        The prior as every bayesclust entry point takes it: ``Gamma(a, b)`` (shape,
        rate) or ``InverseGamma(a, b)`` (shape, scale).
    name : str
        Argument name for the messages.
    family : {"gamma", "inverse_gamma"}
        The conjugate family the sampler's update needs: ``Gamma`` for a
        concentration (Escobar & West's update), ``InverseGamma`` for ``sigma2``.

    Returns
    -------
    numpyro.distributions.Distribution or None

    Raises
    ------
    ValueError
        A distribution of another family, non-scalar or non-positive parameters.
    TypeError
        Not a NumPyro distribution (a pair ``(a, b)`` included).
    """
    import numpyro.distributions as dist

    cls = getattr(dist, _PRIOR_FAMILIES[family])
    if prior is None:
        return None
    if not isinstance(prior, dist.Distribution):
        params = "shape, rate" if family == "gamma" else "shape, scale"
        raise TypeError(f"{name} must be a NumPyro distribution, numpyro.distributions."
                        f"{cls.__name__}({params}), got {type(prior).__name__} {prior!r}")
    if not isinstance(prior, cls):  # a prior of another family: a bad value, not a bad type
        raise ValueError(  # noqa: TRY004
            f"{name} must be a numpyro.distributions.{cls.__name__} (the conjugate prior "
            f"the Gibbs sampler updates in closed form), got {type(prior).__name__}"
        )
    for part in ("concentration", "rate"):
        value = np.asarray(getattr(prior, part))
        if value.shape != ():
            raise ValueError(f"{name} must be a scalar distribution, got {part} of shape "
                             f"{value.shape}")
        V.check_positive(value[()], f"{name}.{part}")
    return prior


def _prior_params(prior, name: str, family: str):
    """``(a, b)`` of a sampler's prior (see :func:`prior_distribution`), or None."""
    prior = prior_distribution(prior, name, family)
    if prior is None:
        return None
    return (float(np.asarray(prior.concentration)), float(np.asarray(prior.rate)))



def start_labels(init_labels, n: int, num_chains: int):
    """The samplers' starting partitions, each relabelled ``0..k-1`` in increasing id order.

    Parameters
    ----------
    init_labels : array_like of int, shape (n,) or (num_chains, n), or None
        One partition for every chain, one per chain, or None (one cluster).
    n, num_chains : int

    Returns
    -------
    labels : ndarray of int32, shape (n,) or (num_chains, n)
        ``(n,)`` unless ``init_labels`` gave one partition per chain.
    per_chain : bool
        Whether ``labels`` holds one partition per chain.
    """
    if init_labels is None:
        return np.zeros(n, np.int32), False
    if np.ndim(init_labels) == 2:
        rows = np.asarray(init_labels)
        if rows.shape[0] != num_chains:
            raise ValueError(f"init_labels has {rows.shape[0]} rows, expected one per chain "
                             f"(num_chains={num_chains})")
        return np.stack([
            np.unique(V.check_labels(r, f"init_labels[{c}]", n_samples=n),
                      return_inverse=True)[1].astype(np.int32).reshape(n)
            for c, r in enumerate(rows)]), True
    labels = V.check_labels(init_labels, "init_labels", n_samples=n)
    return np.unique(labels, return_inverse=True)[1].astype(np.int32).reshape(n), False


def run_rows(n: int) -> int:
    """The rows a sampler's run pads ``n`` data rows to: :func:`~bayesclust.kernels.padded_rows`
    (a shape bucket, so that every ``n`` of the bucket runs one compiled program), or ``n``
    below two rows (a split-merge move needs two).  The padded rows are zeros with label
    -1: they never move, count or draw, so the first ``n`` rows' draws are an unpadded
    run's."""
    return n if n < 2 else padded_rows(n)


def scan_rows(step, carry, inputs, n_valid=None, out=None):
    """``lax.scan(step, carry, inputs)`` over the rows, or with ``n_valid`` (a traced int)
    over the first ``n_valid`` rows only: a loop of traced length, whose outputs are
    written row by row into ``out`` (what the padded rows keep), so that the rows padding
    the data to a shape bucket are never stepped (a masked or conditional step of every
    row copies the whole carry per row).  The real rows' steps are the scan's."""
    if n_valid is None:
        return lax.scan(step, carry, inputs)

    def row(i, c):
        carry, out = c
        carry, y = step(carry, jax.tree.map(lambda a: a[i], inputs))
        return carry, out.at[i].set(y)

    return lax.fori_loop(0, n_valid, row, (carry, out))


def pad_rows(a, rows: int, axis: int = 0, value=0) -> np.ndarray:
    """Host array ``a`` extended along ``axis`` to ``rows`` entries of ``value``."""
    a = np.asarray(a)
    if rows <= a.shape[axis]:
        return a
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, rows - a.shape[axis])
    return np.pad(a, pad, constant_values=value)


def _evenly(m: int, size: int) -> np.ndarray:
    """``size`` (or all ``m``) indices spread evenly over ``0..m-1``."""
    if m <= size:
        return np.arange(m)
    return np.unique(np.linspace(0, m - 1, size).round().astype(np.int64))


def label_dtype(low: int, high: int) -> type:
    """The narrowest signed integer type holding every label in ``[low, high]``: int8 up to
    127, int16, int32, else int64.  Label draws are the largest arrays of a sampled fit
    (chains x draws x points), so their width sets its memory."""
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if low >= info.min and high <= info.max:
            return dtype
    return np.int64


def recorded_labels(labels, capacity: int):
    """A chain's labels (slots ``0..capacity-1``) as a segment records them: in the
    narrowest type of :func:`label_dtype` for the (static) capacity, so that the compiled
    segment hands the host int8 draws (a quarter of int32's bytes) up to 127 slots."""
    return labels.astype(label_dtype(0, capacity - 1))


# --- The native kernels: whether a sweep runs them, their chains' seeds ---


def native_sweep_ok(X) -> bool:
    """The native sweep applies: float32/float64 data and the kernels are :func:`_native.enabled`."""
    return X.dtype in (jnp.float32, jnp.float64) and _native.enabled()


def sweep_kernels(X) -> str:
    """``"native"`` when the sweeps of ``X`` run in the native kernel (CPU), else ``"xla"``.

    The choice the samplers' sweeps make when traced (``gibbs._point_moves`` and
    ``gibbs._run_segment``, ``gibbs_gaussian._moves``)
    (``lax.platform_dependent`` takes the native branch on the CPU only).
    """
    platforms = {dev.platform for dev in X.devices()}
    native = native_sweep_ok(X) and len(platforms) == 1 and _native.used_on(platforms.pop())
    return "native" if native else "xla"


def chain_seeds(keys):
    """The native kernel's per-chain seeds (two 32-bit words) from the chains' keys."""
    return jax.vmap(lambda k: jax.random.bits(k, (2,), jnp.uint32))(keys)
