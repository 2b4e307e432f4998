r"""Proximity operators of sparsity-inducing norms and of functions of block norms.

Small, pure-JAX operators (jit- and vmap-able) for online proximal methods
(Martins, Smith, Xing, Aguiar & Figueiredo, 2011, "Online learning of structured
predictors with multiple kernels", AISTATS, §3): the soft threshold (prox of the
:math:`\ell_1` norm), Algorithm 2 (prox of :math:`\frac\lambda2\|x\|_1^2`, the sparse
multiple-kernel regulariser), Algorithm 4 (its weighted form), the prox of a function of
block norms (Prop. 1) and the prox of :math:`\lambda\sum_m\|\theta_m\|^q` by Newton's
method per block (the separable form of the non-sparse MKL regulariser).

For a proper convex :math:`\Omega`, :math:`\mathrm{prox}_\Omega(x)=\arg\min_u\frac12\|u-x\|^2+\Omega(u)`.
Blocks are given as a sequence (a pytree) of arrays of any shapes; a block's norm is the
Euclidean (Frobenius) norm of all its entries.

The public functions check concrete inputs (a ``ValueError`` naming the argument) and skip the
checks under ``jax.jit`` / ``jax.vmap``, where the inputs are traced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V

__all__ = [
    "soft_threshold",
    "prox_l1_squared",
    "prox_l1_squared_weighted",
    "prox_lq_power",
    "prox_block_norms",
    "block_norms",
]

#: Newton iterations of :func:`prox_lq_power` (each halves the bracket at worst, so 60
#: reach float64's resolution even when every Newton step were rejected).
_NEWTON_ITERS = 60


def _traced(*values) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(values))


def _check_scalar(value: Any, name: str, *, positive: bool = True) -> None:
    if _traced(value):
        return
    if positive:
        V.check_positive(value, name)
    else:
        V.check_nonnegative(value, name)


def _check_vector(x: Any, name: str) -> jax.Array:
    if _traced(x):
        return x
    # the working dtype must hold x (float64 values past float32's range would become inf)
    return jnp.asarray(V.check_kernel_array(x, name, ndim=1))


# --- the l1 norm --------------------------------------------------------------------------


@jax.jit
def _soft_threshold(x, tau):
    return jnp.sign(x) * jnp.maximum(jnp.abs(x) - tau, 0.0)


def soft_threshold(x: Any, tau: Any) -> jax.Array:
    r"""Soft threshold: the proximity operator of :math:`\tau\|x\|_1`.

    .. math:: [\mathrm{soft}(x,\tau)]_i = \mathrm{sgn}(x_i)\max(0, |x_i|-\tau)

    (Martins et al., 2011, §3, the prox of the :math:`\ell_1` norm used by Prop. 1.)

    Parameters
    ----------
    x : array_like of any shape
    tau : float >= 0 (or an array broadcasting against ``x``)

    Returns
    -------
    jax.Array, the shape of ``x``

    Examples
    --------
    >>> import numpy as np
    >>> np.asarray(soft_threshold(np.array([3.0, -0.5, -2.0]), 1.0)).tolist()
    [2.0, -0.0, -1.0]
    """
    if not _traced(x, tau):
        x = jnp.asarray(V.check_array(x, "x", ndim=None))
        t = V.check_array(tau, "tau", ndim=None)
        if np.any(t < 0):
            raise ValueError(f"tau must be non-negative, got {tau!r}")
    return _soft_threshold(x, tau)


# --- Algorithm 2: the prox of (lam/2) ||x||_1^2 -------------------------------------------------


def _l1_squared_tau(y_sorted, lam):
    """tau of Algorithm 2 from |x| sorted in decreasing order."""
    j = jnp.arange(1, y_sorted.shape[0] + 1, dtype=y_sorted.dtype)
    csum = jnp.cumsum(y_sorted)
    active = y_sorted - lam / (1.0 + j * lam) * csum > 0
    rho = jnp.max(jnp.where(active, j, 0.0))  # 0 when x = 0
    s_rho = jnp.where(rho > 0, csum[jnp.maximum(rho.astype(jnp.int32) - 1, 0)], 0.0)
    return lam * s_rho / (1.0 + rho * lam)


def _l1_squared_tau_pivot(a, lam):
    """tau of Algorithm 2 without sorting: tau <- lam s_A / (1 + lam |A|), A = {|x| > tau}.

    From tau = 0 the iterates increase to the root of tau = lam sum (|x| - tau)_+ (each is a
    convex combination of the root and values below it), the set A shrinks at every step
    that moves, so the loop ends after at most M steps (a handful in practice); each step is
    one pass over x.
    """
    def step(tau):
        on = a > tau
        return lam * jnp.sum(jnp.where(on, a, 0.0)) / (1.0 + lam * jnp.sum(on.astype(a.dtype)))

    def cond(carry):
        tau, prev, i = carry
        return (tau > prev) & (i < a.shape[0] + 1)

    def body(carry):
        tau, _, i = carry
        return step(tau), tau, i + 1

    zero = jnp.zeros((), a.dtype)
    tau, _, _ = jax.lax.while_loop(cond, body, (step(zero), zero, 1))
    return tau


@jax.jit
def _prox_l1_squared(x, lam):
    y = -jnp.sort(-jnp.abs(x))
    return _soft_threshold(x, _l1_squared_tau(y, lam))


@jax.jit
def _prox_l1_squared_pivot(x, lam):
    return _soft_threshold(x, _l1_squared_tau_pivot(jnp.abs(x), lam))


def prox_l1_squared(x: Any, lam: Any, method: str = "sort") -> jax.Array:
    r"""Prox of :math:`\frac\lambda2\|x\|_1^2` in :math:`O(M\log M)` (Martins et al., 2011, Alg. 2).

    Sort :math:`|x|` in decreasing order into :math:`y`; with
    :math:`\rho=\max\{j: y_j-\frac{\lambda}{1+j\lambda}\sum_{r\le j}y_r>0\}` and
    :math:`\tau=\frac{\lambda}{1+\rho\lambda}\sum_{r\le\rho}y_r`, the prox is
    :math:`\mathrm{soft}(x,\tau)`. It is the sparse-MKL step of SPOM (Alg. 3) applied to the
    vector of block norms: :math:`\frac12(\sum_m\|\theta_m\|)^2` corresponds to the kernel
    :math:`\sum_m\beta_mK_m` with :math:`\beta` on the simplex (§2).

    Parameters
    ----------
    x : array_like of shape (M,)
    lam : float > 0
    method : {"sort", "pivot"}, default "sort"
        ``"sort"``: Algorithm 2 as printed. ``"pivot"``: the same :math:`\tau` found without
        sorting, by the fixed-point iteration :math:`\tau\leftarrow\lambda\sum_{|x_i|>\tau}|x_i|
        /(1+\lambda\,\#\{|x_i|>\tau\})` from 0 (a few passes over ``x``; faster on CPUs, whose
        XLA sort is slow; docs/deviations.md#prox-l1-squared-pivot).

    Returns
    -------
    jax.Array of shape (M,)

    Examples
    --------
    >>> import numpy as np
    >>> np.asarray(prox_l1_squared(np.array([3.0, 1.0, -0.2]), 0.5)).tolist()
    [2.0, 0.0, -0.0]
    >>> np.asarray(prox_l1_squared(np.array([3.0, 1.0, -0.2]), 0.5, method="pivot")).tolist()
    [2.0, 0.0, -0.0]
    """
    x = _check_vector(x, "x")
    _check_scalar(lam, "lam")
    if method not in ("sort", "pivot"):
        raise ValueError(f"method must be 'sort' or 'pivot', got {method!r}")
    if x.shape[0] == 0:  # the prox of the empty vector's norm: the empty vector
        return x
    run = _prox_l1_squared if method == "sort" else _prox_l1_squared_pivot
    if _traced(x):
        return run(x, lam)
    return _homogeneous(run, x, lam)


def _homogeneous(run, x, *args):
    """``run(x, *args)`` of a prox positively homogeneous in ``x`` (``prox(s x) = s prox(x)``,
    ``s > 0``, the other arguments unchanged), computed on ``x`` times the power of two that
    puts ``max|x|`` in [0.5, 1) and scaled back, both exact: the sums of ``|x|`` that make
    its threshold cannot overflow at any scale of ``x``."""
    ex = math.frexp(float(jnp.max(jnp.abs(x))))[1]
    out = run(jnp.asarray(np.ldexp(np.asarray(x), -ex).astype(x.dtype)), *args)
    return jnp.asarray(np.ldexp(np.asarray(out), ex).astype(x.dtype))


@jax.jit
def _prox_l1_squared_weighted(x, lam, d):
    u0 = jnp.abs(x) / d
    a = d * d
    order = jnp.argsort(-u0)
    us, as_ = u0[order], a[order]
    ca = jnp.cumsum(as_)
    cau = jnp.cumsum(as_ * us)
    # lam / (1 + lam ca) as 1 / (1 / lam + ca): lam = inf (the penalty alone) stays finite
    inv_lam = 1.0 / lam
    active = us - cau / (inv_lam + ca) > 0
    idx = jnp.arange(x.shape[0])
    rho = jnp.max(jnp.where(active, idx + 1, 0))
    # rho = 0 only when x = 0 (then tau = 0) or lam = inf, whose limit is the first term's
    k = jnp.maximum(rho - 1, 0)
    tau = cau[k] / (inv_lam + ca[k])
    return jnp.sign(x) * d * jnp.maximum(u0 - tau, 0.0)


def prox_l1_squared_weighted(x: Any, lam: Any, d: Any) -> jax.Array:
    r"""Prox of :math:`\frac\lambda2\|d\odot x\|_1^2`, weights :math:`d>0` (Martins et al., 2011, Alg. 4).

    With :math:`u_0=|x|/d` and :math:`a=d^2`, sort :math:`u_0` decreasingly;
    :math:`\rho=\max\{j: u_{0(j)}-\frac{\lambda}{1+\lambda\sum_{r\le j}a_{(r)}}\sum_{r\le j}a_{(r)}u_{0(r)}>0\}`,
    :math:`\tau=\frac{\lambda\sum_{r\le\rho}a_{(r)}u_{0(r)}}{1+\lambda\sum_{r\le\rho}a_{(r)}}`, and
    the prox is :math:`\mathrm{sgn}(x)\,d\,\max(0,u_0-\tau)`. With :math:`d=1` it is Algorithm 2.

    Parameters
    ----------
    x : array_like of shape (M,)
    lam : float > 0
    d : array_like of shape (M,), entries > 0

    Returns
    -------
    jax.Array of shape (M,)

    Examples
    --------
    >>> import numpy as np
    >>> a = prox_l1_squared_weighted(np.array([3.0, 1.0]), 0.5, np.ones(2))
    >>> b = prox_l1_squared(np.array([3.0, 1.0]), 0.5)
    >>> bool(np.allclose(a, b))
    True
    """
    x = _check_vector(x, "x")
    _check_scalar(lam, "lam")
    if not _traced(d):
        d = V.check_array(d, "d", ndim=1, min_samples=0)
        if d.shape != tuple(x.shape):
            raise ValueError(f"d must have the shape of x {tuple(x.shape)}, got {d.shape}")
        if np.any(d <= 0):
            raise ValueError("d must contain positive weights")
        if d.size and not _traced(lam):
            # prox(x; lam, d) = prox(x; lam s^2, d / s) (u0 scales by s, tau by s): with s the
            # power of two at max(d), d^2 can neither overflow nor underflow at any scale of d
            # (lam s^2 may reach inf: the penalty alone, whose prox is 0).
            e = math.frexp(float(d.max()))[1]
            with np.errstate(over="ignore", under="ignore"):
                d, lam = np.ldexp(d, -e), float(np.ldexp(np.float64(lam), 2 * e))
        d = jnp.asarray(d, dtype=x.dtype)
    if _traced(x) or x.size == 0:
        return _prox_l1_squared_weighted(x, lam, d)
    return _homogeneous(_prox_l1_squared_weighted, x, lam, d)


# --- lam * sum |b|^q, Newton per coordinate -------------------------------------------------


@jax.jit
def _prox_lq_power(b0, lam, q):
    a = jnp.abs(b0)
    tiny = jnp.finfo(a.dtype).tiny

    def g(b):  # increasing on (0, a]; the prox is its root
        return b - a + lam * q * jnp.maximum(b, tiny) ** (q - 1.0)

    def body(_, carry):
        b, lo, hi = carry
        gb = g(b)
        lo = jnp.where(gb < 0, b, lo)
        hi = jnp.where(gb >= 0, b, hi)
        slope = 1.0 + lam * q * (q - 1.0) * jnp.maximum(b, tiny) ** (q - 2.0)
        newton = b - gb / slope
        # a Newton step outside the bracket is replaced by bisection
        inside = (newton > lo) & (newton < hi)
        return jnp.where(inside, newton, 0.5 * (lo + hi)), lo, hi

    b, _, _ = jax.lax.fori_loop(0, _NEWTON_ITERS, body, (a, jnp.zeros_like(a), a))
    return jnp.sign(b0) * jnp.where(a > 0, b, 0.0)


def prox_lq_power(b: Any, lam: Any, q: Any) -> jax.Array:
    r"""Prox of :math:`\lambda\sum_i|b_i|^q`, :math:`1<q\le2`, by safeguarded Newton per coordinate.

    Each coordinate solves :math:`b-b_0+\lambda q\,b^{q-1}=0` on :math:`[0,|b_0|]` (the
    stationarity condition of :math:`\frac12(b-b_0)^2+\lambda b^q`), Newton's method with a
    bisection fallback that keeps a bracket of the root. Applied to block norms through
    :func:`prox_block_norms` it is the prox of :math:`\lambda\|\theta\|_{2,q}^q`, the
    separable form of the non-sparse MKL regulariser :math:`\frac12\|\theta\|_{2,q}^2`,
    :math:`q=2p/(p+1)` (Martins et al., 2011, §2 and Prop. 1).

    Parameters
    ----------
    b : array_like of shape (M,)
    lam : float > 0
    q : float in (1, 2]

    Returns
    -------
    jax.Array of shape (M,)

    Examples
    --------
    >>> import numpy as np
    >>> np.round(np.asarray(prox_lq_power(np.array([3.0, -1.0]), 0.5, 2.0)), 6).tolist()
    [1.5, -0.5]
    """
    b = _check_vector(b, "b")
    _check_scalar(lam, "lam")
    if not _traced(q):
        qv = V.check_positive(q, "q")
        if not 1.0 < qv <= 2.0:
            raise ValueError(f"q must be in (1, 2], got {q!r}")
    return _prox_lq_power(b, lam, q)


# --- functions of block norms (Prop. 1) -------------------------------------------------------


def block_norms(blocks: Sequence[Any]) -> jax.Array:
    """The Euclidean norm of every block, shape ``(M,)``.

    Examples
    --------
    >>> import numpy as np
    >>> np.asarray(block_norms([np.array([3.0, 4.0]), np.zeros((2, 2))])).tolist()
    [5.0, 0.0]
    """
    blocks = V.check_blocks(blocks, "blocks")
    return jnp.stack([jnp.sqrt(jnp.sum(jnp.square(jnp.asarray(t)))) for t in blocks])


_PENALTIES = ("group_lasso", "l1_squared", "lq_power")


def _prox_of_norms(norms, lam, penalty, q):
    if penalty == "group_lasso":
        return _soft_threshold(norms, lam)
    if penalty == "l1_squared":
        return _prox_l1_squared(norms, lam)
    return _prox_lq_power(norms, lam, q)


def _scale_blocks(blocks, norms, new_norms):
    ratio = jnp.where(norms > 0, new_norms / jnp.where(norms > 0, norms, 1.0), 0.0)
    return [ratio[m].astype(jnp.asarray(t).dtype) * t for m, t in enumerate(blocks)]


def prox_block_norms(blocks: Sequence[Any], lam: Any, penalty: str = "l1_squared",
                     q: Any = None) -> list[jax.Array]:
    r"""Prox of a function of the block norms (Martins et al., 2011, Prop. 1).

    For :math:`\Phi(\theta)=\varphi(\|\theta_1\|,\dots,\|\theta_M\|)` with :math:`\varphi`
    absolutely symmetric, :math:`[\mathrm{prox}_\Phi(\theta)]_m=[\mathrm{prox}_\varphi(b)]_m\,
    \theta_m/\|\theta_m\|`, :math:`b_m=\|\theta_m\|`. ``penalty`` chooses :math:`\varphi`:

    * ``"group_lasso"``: :math:`\lambda\sum_m b_m` (soft threshold of the norms);
    * ``"l1_squared"``: :math:`\frac\lambda2(\sum_m b_m)^2`, sparse MKL (Algorithm 2);
    * ``"lq_power"``: :math:`\lambda\sum_m b_m^q`, the separable non-sparse MKL form
      (:func:`prox_lq_power`).

    Parameters
    ----------
    blocks : sequence of M arrays (any shapes)
    lam : float > 0
    penalty : {"group_lasso", "l1_squared", "lq_power"}
    q : float in (1, 2], only for ``"lq_power"``

    Returns
    -------
    list of M jax.Arrays, the shapes of ``blocks``

    Examples
    --------
    >>> import numpy as np
    >>> out = prox_block_norms([np.array([3.0, 4.0]), np.array([0.3, 0.4])], 1.0, "group_lasso")
    >>> [[round(float(v), 4) for v in t] for t in out]
    [[2.4, 3.2], [0.0, 0.0]]
    """
    if penalty not in _PENALTIES:
        raise ValueError(f"penalty must be one of {_PENALTIES}, got {penalty!r}")
    if not _traced(blocks):
        if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence) or len(blocks) == 0:
            raise ValueError("blocks must be a non-empty sequence of arrays")
        blocks = [jnp.asarray(V.check_array(t, f"blocks[{m}]", ndim=None)) for m, t in enumerate(blocks)]
    _check_scalar(lam, "lam")
    if penalty == "lq_power":
        if q is None:
            raise ValueError("q is required for penalty='lq_power'")
        if not _traced(q):
            qv = V.check_positive(q, "q")
            if not 1.0 < qv <= 2.0:
                raise ValueError(f"q must be in (1, 2], got {q!r}")
    return _prox_block_norms(list(blocks), lam, penalty, q)


def _prox_block_norms(blocks, lam, penalty, q):
    norms = block_norms(blocks)
    return _scale_blocks(blocks, norms, _prox_of_norms(norms, lam, penalty, q))
