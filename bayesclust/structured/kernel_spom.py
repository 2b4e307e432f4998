r"""SPOM in kernel form, multiclass (Martins, Smith, Xing, Aguiar & Figueiredo, 2011, AISTATS,
§3, Algorithm 3 with the kernel expansion of the blocks).

Each block is kept as an expansion over the training examples,
:math:`\theta_m=\sum_s\psi_m(x_s)\otimes a_{m,s}` with coefficients :math:`A_m` of shape
``(N, K)``, so :math:`f_m(x,k)=\sum_sK_m(x_s,x)A_m[s,k]`. A round on example :math:`t` with
loss-augmented prediction :math:`\hat y` subtracts :math:`\eta_t(e_{\hat y}-e_{y_t})` from row
:math:`t` of every :math:`A_m`; the prox and the projection multiply whole blocks by scalars
(the multiplicative recursion of the coefficients). The block norms follow without touching
the kernel matrices:

.. math:: \|\tilde\theta_m\|^2=\|\theta_m\|^2-2\eta_t\langle\theta_m,\phi_m(x_t,\hat y)-\phi_m(x_t,y_t)\rangle
   +\eta_t^2\|\phi_m(x_t,\hat y)-\phi_m(x_t,y_t)\|^2,

the middle term :math:`f_m(x_t,\hat y)-f_m(x_t,y_t)` and the last :math:`2K_m(x_t,x_t)` when
:math:`\hat y\ne y_t`. They are recomputed exactly (:math:`\mathrm{tr}A_m^\top K_mA_m`) after every
epoch, so rounding does not accumulate. With the linear kernels of explicit blocks it gives
the primal :func:`bayesclust.spom` exactly (same order of the examples).
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V
from .proximal import _prox_l1_squared

__all__ = ["KernelSPOMResult", "spom_kernel", "spom_kernel_decision"]


class KernelSPOMResult(NamedTuple):
    """What :func:`spom_kernel` returns.

    Attributes
    ----------
    coef : ndarray of shape (M, N, K)
        The averaged model's coefficients :math:`A_m` (Martins et al., 2011, Prop. 4).
    coef_last : ndarray of shape (M, N, K), the last iterate's.
    beta : ndarray of shape (M,), kernel weights :math:`\\beta_m\\propto\\|\\theta_m\\|`.
    objective : float, the sparse-MKL objective (minimised) of the averaged model.
    objective_trace : ndarray of shape (n_epochs + 1,), that objective at the zero model and
        after every epoch (as :func:`bayesclust.spom`'s).
    n_iter : int, rounds run.
    converged : bool, True: the ``n_epochs`` epochs were run (a fixed schedule).
    """

    coef: np.ndarray
    coef_last: np.ndarray
    beta: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool


def _sq_norms(G, A):
    return jnp.maximum(jnp.einsum("mnk,mnj,mjk->m", A, G, A), 0.0)


@partial(jax.jit, static_argnames=("k",))
def _epoch(A, avg, n2, t0, G, y, order, eta0, lam, radius, *, k):
    def body(carry, i):
        A, avg, n2, t = carry
        s_m = jnp.einsum("mn,mnk->mk", G[:, i, :], A)
        s = jnp.sum(s_m, axis=0)
        aug = s + (jnp.arange(k) != y[i]).astype(s.dtype)
        yhat = jnp.argmax(aug)
        d = jax.nn.one_hot(yhat, k, dtype=s.dtype) - jax.nn.one_hot(y[i], k, dtype=s.dtype)
        eta = eta0 / jnp.sqrt(t)
        A = A.at[:, i, :].add(-eta * d)
        n2 = jnp.maximum(n2 - 2.0 * eta * (s_m @ d) + eta ** 2 * jnp.sum(d * d) * G[:, i, i], 0.0)
        b_t = jnp.sqrt(n2)
        b = _prox_l1_squared(b_t, eta * lam)
        r = jnp.where(b_t > 0, b / jnp.where(b_t > 0, b_t, 1.0), 0.0)
        A = A * r[:, None, None]
        n2 = n2 * r ** 2
        total = jnp.sqrt(jnp.sum(n2))
        scale = jnp.minimum(1.0, radius / jnp.maximum(total, jnp.finfo(total.dtype).tiny))
        A, n2 = A * scale, n2 * scale ** 2
        avg = avg + (A - avg) / t
        return (A, avg, n2, t + 1.0), None

    (A, avg, n2, t), _ = jax.lax.scan(body, (A, avg, n2, t0), order)
    return A, avg, _sq_norms(G, A), t


@partial(jax.jit, static_argnames=("k",))
def _objective(G, A, y, lam, *, k):
    S = jnp.einsum("mnj,mjk->nk", G, A)
    aug = S + (jnp.arange(k)[None, :] != y[:, None]).astype(S.dtype)
    hinge = jnp.max(aug, axis=1) - jnp.take_along_axis(S, y[:, None], axis=1)[:, 0]
    norms = jnp.sqrt(_sq_norms(G, A))
    return jnp.mean(hinge) + 0.5 * lam * jnp.sum(norms) ** 2, norms


def _check_grams(grams: Any, name: str, n_cols: int | None = None) -> np.ndarray:
    if isinstance(grams, (str, bytes)) or not isinstance(grams, (list, tuple)) or len(grams) == 0:
        raise ValueError(f"{name} must be a non-empty list of kernel matrices, one per kernel")
    mats = [V.check_array(g, f"{name}[{m}]") for m, g in enumerate(grams)]
    shape = mats[0].shape
    for m, g in enumerate(mats):
        if g.shape != shape:
            raise ValueError(f"{name} have mismatched sizes: {name}[0] is {shape}, {name}[{m}] {g.shape}")
    if n_cols is None and shape[0] != shape[1]:
        raise ValueError(f"{name} must be square (N, N) kernel matrices, got {shape}")
    if n_cols is None:  # Gram matrices: symmetric, with non-negative squared norms on the diagonal
        for m, g in enumerate(mats):
            V.check_square_matrix(g, f"{name}[{m}]", symmetric=True)
            if float(np.min(np.diagonal(g))) < 0:
                raise ValueError(f"{name}[{m}] is not a kernel matrix: its diagonal (squared "
                                 f"norms) has a negative entry, {float(np.min(np.diagonal(g))):g}")
    if n_cols is not None and shape[1] != n_cols:
        raise ValueError(f"{name} must have {n_cols} columns (the training examples), got {shape}")
    return np.stack(mats).astype(np.result_type(*mats))


def spom_kernel(rng_key: Any, grams: list, y: Any, lam: float, *, n_classes: int | None = None,
                n_epochs: int = 20, eta0: float = 1.0, radius: float | str = "auto") -> KernelSPOMResult:
    r"""Multiclass SPOM on kernel matrices (Martins et al., 2011, Algorithm 3, kernel form).

    The same objective, steps, prox, projection and averaging as :func:`bayesclust.spom`
    (module docstring for the coefficient recursion).

    Parameters
    ----------
    rng_key : JAX key or int
    grams : list of M arrays of shape (N, N)
        Kernel matrices on the training examples (normalise them to unit diagonal as the
        paper does).
    y : array_like of shape (N,), class ids ``0..K-1``
    lam : float > 0
    n_classes : int, optional
    n_epochs : int >= 1
    eta0 : float > 0
    radius : float > 0, inf or "auto" (:math:`\sqrt{2/\lambda}`)

    Returns
    -------
    KernelSPOMResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> F = np.eye(2)[y] + 0.1 * rng.normal(size=(40, 2)); N = rng.normal(size=(40, 3))
    >>> res = spom_kernel(0, [F @ F.T, N @ N.T], y, lam=0.05, n_epochs=5)
    >>> bool(res.beta[0] > res.beta[1])
    True
    """
    lam = V.check_positive(lam, "lam")
    eta0 = V.check_positive(eta0, "eta0")
    n_epochs = V.check_int(n_epochs, "n_epochs", minimum=1)
    G = _check_grams(grams, "grams")
    n = G.shape[1]
    yv = V.check_labels(y, "y", n_samples=n)
    k = V.check_class_ids(yv, "y", n_classes, what="SPOM's classes", minimum=2)
    if len(np.unique(yv)) < 2:
        raise ValueError("y has one class: SPOM needs at least 2 classes")
    if isinstance(radius, str):
        if radius != "auto":
            raise ValueError(f"radius must be a positive number, inf or 'auto', got {radius!r}")
        radius = float(np.sqrt(2.0 / lam))
    else:
        radius = V.check_positive(radius, "radius", allow_inf=True)
    dtype = V.working_dtype(G.dtype)
    V.check_working_range(G, "grams", dtype)
    Gj = jnp.asarray(G, dtype)
    yj = jnp.asarray(yv, jnp.int32)
    A = jnp.zeros((G.shape[0], n, k), dtype)
    avg = jnp.zeros_like(A)
    n2 = jnp.zeros(G.shape[0], dtype)
    t = jnp.asarray(1.0, dtype)
    key = V.as_rng_key(rng_key)
    args = (jnp.asarray(eta0, dtype), jnp.asarray(lam, dtype), jnp.asarray(radius, dtype))
    trace = [float(_objective(Gj, avg, yj, args[1], k=k)[0])]  # the zero model
    for _ in range(n_epochs):
        key, sub = jax.random.split(key)
        order = jax.random.permutation(sub, n)
        A, avg, n2, t = _epoch(A, avg, n2, t, Gj, yj, order, *args, k=k)
        obj, norms = _objective(Gj, avg, yj, args[1], k=k)
        trace.append(float(obj))
    V.check_run_finite((avg, A, trace[-1]), "grams", "kernel SPOM", dtype)
    norms = np.asarray(norms, np.float64)
    beta = norms / norms.sum() if norms.sum() > 0 else np.zeros_like(norms)
    return KernelSPOMResult(np.asarray(avg), np.asarray(A), beta, trace[-1], np.asarray(trace),
                            n_epochs * n, True)


def spom_kernel_decision(coef: Any, grams_test: list) -> np.ndarray:
    r"""Scores :math:`f(x,k)=\sum_m\sum_sK_m(x,x_s)A_m[s,k]`, shape (n_test, K).

    Parameters
    ----------
    coef : array of shape (M, N, K) (``KernelSPOMResult.coef``)
    grams_test : list of M arrays of shape (n_test, N), kernels between new and training examples

    Examples
    --------
    >>> import numpy as np
    >>> spom_kernel_decision(np.ones((1, 2, 3)), [np.array([[1.0, 0.0]])]).tolist()
    [[1.0, 1.0, 1.0]]
    """
    A = V.check_array(coef, "coef", ndim=3)
    G = _check_grams(grams_test, "grams_test", n_cols=A.shape[1])
    if G.shape[0] != A.shape[0]:
        raise ValueError(f"grams_test has {G.shape[0]} kernels, coef {A.shape[0]}")
    return np.einsum("mnj,mjk->nk", G, A)
