r"""Online proximal gradient with several regularisers and a projection
(Martins, Smith, Xing, Aguiar & Figueiredo, 2011, AISTATS, §3, Algorithm 1).

For :math:`\min_{\theta\in\Theta}\sum_j\lambda_j\Omega_j(\theta)+\frac1N\sum_iL(\theta;x_i,y_i)`,
round :math:`t` takes one example, a subgradient :math:`g\in\partial L(\theta_t)`, and does

.. math:: \tilde\theta=\theta_t-\eta_tg,\quad
   \tilde\theta\leftarrow\mathrm{prox}_{\eta_t\lambda_j\Omega_j}(\tilde\theta)\ (j=1..J),\quad
   \theta_{t+1}=\Pi_\Theta(\tilde\theta),

:math:`\Theta` the ball of radius :math:`\gamma`. The output is the average of the iterates
(the model the paper's Prop. 4 bounds). Its special cases are Zinkevich's projected
subgradient, PEGASOS, truncated gradient and FOBOS (:math:`J=1`).

Guarantees (Martins et al., 2011, Prop. 3 and 4; documented, not tested): with a fixed step
:math:`\eta`, :math:`\mathrm{Reg}_T\le\frac{\eta T}{2}G^2+\frac{\|\theta^*\|^2}{2\eta}`; with
:math:`\eta_t=\eta_0/\sqrt t` on a set of diameter :math:`F`,
:math:`\mathrm{Reg}_T\le(\frac{F^2}{2\eta_0}+G^2\eta_0)\sqrt T`; for a :math:`\sigma`-strongly
convex objective and :math:`\eta_t=1/(\sigma t)`, :math:`\mathrm{Reg}_T\le G^2(1+\log T)/(2\sigma)`.
The averaged model is :math:`\epsilon`-accurate with probability :math:`1-\delta` after
:math:`O((F^2G^2+\log(1/\delta))/\epsilon^2)` rounds. For the hinge and logistic losses
:math:`G=2\max_u\|\phi(u)\|`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V
from .proximal import _prox_block_norms, _soft_threshold, block_norms

__all__ = ["OnlineProximalResult", "online_proximal", "proximal_update", "regulariser_value",
           "REGULARISERS"]

#: The regularisers :math:`\Omega_j` Algorithm 1 may chain, by name (``lam`` the weight):
#: ``"l2"`` :math:`\frac\lambda2\|\theta\|^2`, ``"l1"`` :math:`\lambda\|\theta\|_1`,
#: ``"group_lasso"`` :math:`\lambda\sum_m\|\theta_m\|`, ``"l1_squared"`` (sparse MKL)
#: :math:`\frac\lambda2(\sum_m\|\theta_m\|)^2`, ``"lq_power"`` :math:`\lambda\sum_m\|\theta_m\|^q`.
REGULARISERS = ("l2", "l1", "group_lasso", "l1_squared", "lq_power")


def _check_regularisers(regularisers) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    if isinstance(regularisers, (str, bytes)) or not isinstance(regularisers, Sequence):
        raise ValueError("regularisers must be a sequence of (name, lam) or (name, lam, q) tuples")
    names, lams, qs = [], [], []
    for j, reg in enumerate(regularisers):
        if not isinstance(reg, Sequence) or len(reg) not in (2, 3) or reg[0] not in REGULARISERS:
            raise ValueError(f"regularisers[{j}] must be (name, lam[, q]) with name in "
                             f"{REGULARISERS}, got {reg!r}")
        names.append(reg[0])
        lams.append(V.check_positive(reg[1], f"regularisers[{j}] lam"))
        q = 2.0
        if reg[0] == "lq_power":
            if len(reg) != 3:
                raise ValueError(f"regularisers[{j}]: 'lq_power' needs q: ('lq_power', lam, q)")
            q = V.check_positive(reg[2], f"regularisers[{j}] q")
            if not 1.0 < q <= 2.0:
                raise ValueError(f"regularisers[{j}] q must be in (1, 2], got {reg[2]!r}")
        qs.append(q)
    return tuple(names), np.asarray(lams), np.asarray(qs)


def _apply_prox(theta, name, step, q):
    if name == "l2":
        return [t / (1.0 + step) for t in theta]
    if name == "l1":
        return [_soft_threshold(t, step) for t in theta]
    return _prox_block_norms(theta, step, name, q)


def _project(theta, radius):
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(t)) for t in theta))
    scale = jnp.minimum(1.0, radius / jnp.maximum(norm, jnp.finfo(norm.dtype).tiny))
    return [t * scale for t in theta]


def _update(theta, grad, eta, names, lams, qs, radius):
    theta = [t - eta * g for t, g in zip(theta, grad)]
    for j, name in enumerate(names):
        theta = _apply_prox(theta, name, eta * lams[j], qs[j])
    return _project(theta, radius)


def proximal_update(theta: Sequence[Any], grad: Sequence[Any], eta: Any,
                    regularisers: Sequence[tuple], radius: Any = np.inf) -> list[jax.Array]:
    r"""One round of Algorithm 1 (Martins et al., 2011, §3): gradient step, the proxes, projection.

    .. math:: \theta\leftarrow\Pi_{\|\theta\|\le\gamma}\big(\mathrm{prox}_{\eta\lambda_J\Omega_J}
       \circ\dots\circ\mathrm{prox}_{\eta\lambda_1\Omega_1}(\theta-\eta g)\big)

    Parameters
    ----------
    theta, grad : sequences of M arrays (the blocks :math:`\theta_m` and a subgradient)
    eta : float > 0, the step size
    regularisers : sequence of ``(name, lam)`` or ``("lq_power", lam, q)``, names in
        :data:`REGULARISERS`, applied in order
    radius : float > 0 or inf, :math:`\gamma`

    Returns
    -------
    list of M jax.Arrays

    Examples
    --------
    >>> import numpy as np
    >>> out = proximal_update([np.array([1.0, 0.0])], [np.array([-1.0, 0.0])], 1.0, [("l2", 1.0)])
    >>> np.asarray(out[0]).tolist()
    [1.0, 0.0]
    """
    names, lams, qs = _check_regularisers(regularisers)
    V.check_positive(eta, "eta")
    V.check_positive(radius, "radius", allow_inf=True)
    if len(theta) != len(grad):
        raise ValueError(f"theta and grad must have the same number of blocks, got {len(theta)} "
                         f"and {len(grad)}")
    theta = [jnp.asarray(t) for t in theta]
    grad = [jnp.asarray(g, dtype=t.dtype) for t, g in zip(theta, grad)]
    return _update(theta, grad, eta, names, jnp.asarray(lams), jnp.asarray(qs), radius)


def regulariser_value(theta: Sequence[Any], regularisers: Sequence[tuple]) -> jax.Array:
    r""":math:`\sum_j\lambda_j\Omega_j(\theta)` for the named regularisers (see :data:`REGULARISERS`).

    Examples
    --------
    >>> import numpy as np
    >>> float(regulariser_value([np.array([3.0, 4.0]), np.array([1.0])], [("l1_squared", 2.0)]))
    36.0
    """
    names, lams, qs = _check_regularisers(regularisers)
    return _reg_value([jnp.asarray(t) for t in theta], names, lams, qs)


def _reg_value(theta, names, lams, qs):
    total = 0.0
    norms = block_norms(theta)
    for j, name in enumerate(names):
        if name == "l2":
            v = 0.5 * jnp.sum(norms ** 2)
        elif name == "l1":
            v = sum(jnp.sum(jnp.abs(t)) for t in theta)
        elif name == "group_lasso":
            v = jnp.sum(norms)
        elif name == "l1_squared":
            v = 0.5 * jnp.sum(norms) ** 2
        else:
            v = jnp.sum(norms ** qs[j])
        total = total + lams[j] * v
    return total


class OnlineProximalResult(NamedTuple):
    """What :func:`online_proximal` returns.

    Attributes
    ----------
    theta : list of M arrays
        The last iterate :math:`\\theta_{T+1}`.
    theta_avg : list of M arrays
        The average of the iterates (the model to use; Martins et al., 2011, Prop. 4).
    objective : float
        The regularised objective (minimised) at ``theta_avg`` after the last epoch.
    objective_trace : ndarray of shape (n_epochs,)
        That objective after every epoch.
    n_iter : int
        Rounds run (``n_epochs * N``).
    """

    theta: list
    theta_avg: list
    objective: float
    objective_trace: np.ndarray
    n_iter: int


@partial(jax.jit, static_argnames=("loss_grad", "names"))
def _epoch(theta, avg, t0, data, order, eta0, lams, qs, radius, *, loss_grad, names):
    def body(carry, i):
        theta, avg, t = carry
        example = jax.tree_util.tree_map(lambda a: a[i], data)
        loss, g = loss_grad(theta, example)
        eta = eta0 / jnp.sqrt(t)
        theta = _update(theta, g, eta, names, lams, qs, radius)
        avg = [a + (b - a) / t for a, b in zip(avg, theta)]
        return (theta, avg, t + 1.0), loss

    (theta, avg, t), losses = jax.lax.scan(body, (theta, avg, t0), order)
    return theta, avg, t, losses


@partial(jax.jit, static_argnames=("loss_grad", "names"))
def _objective(theta, data, lams, qs, *, loss_grad, names):
    losses = jax.vmap(lambda ex: loss_grad(theta, ex)[0])(data)
    return jnp.mean(losses) + _reg_value(theta, names, lams, qs)


def online_proximal(rng_key: Any, loss_grad: Callable, theta0: Sequence[Any], data: Any, *,
                    regularisers: Sequence[tuple], eta0: float = 1.0, n_epochs: int = 10,
                    radius: float = np.inf) -> OnlineProximalResult:
    r"""Online proximal gradient, Algorithm 1 of Martins et al. (2011, §3).

    Each epoch visits the examples in a random order; round :math:`t` (counted over all
    epochs, from 1) uses :math:`\eta_t=\eta_0/\sqrt t` (the rate of Prop. 3) and
    :func:`proximal_update`.

    Parameters
    ----------
    rng_key : JAX key or int
        Shuffles the examples.
    loss_grad : callable ``(theta, example) -> (loss, grad)``
        A JAX-traceable loss of one example and a subgradient (blocks like ``theta``).
        A module-level function avoids recompiling the epoch on every call.
    theta0 : sequence of M arrays, the first iterate
    data : pytree of arrays with a common leading axis N (one example per row)
    regularisers : sequence of ``(name, lam[, q])``, see :data:`REGULARISERS`
    eta0 : float > 0
    n_epochs : int >= 1
    radius : float > 0 or inf, the radius :math:`\gamma` of :math:`\Theta`

    Returns
    -------
    OnlineProximalResult

    Examples
    --------
    Ridge regression in one block, by online proximal steps:

    >>> import numpy as np, jax.numpy as jnp
    >>> def lg(theta, ex):
    ...     x, y = ex
    ...     r = jnp.dot(theta[0], x) - y
    ...     return 0.5 * r ** 2, [r * x]
    >>> X = np.random.default_rng(0).normal(size=(50, 3)); y = X @ np.array([1.0, -2.0, 0.0])
    >>> res = online_proximal(0, lg, [np.zeros(3)], (X, y), regularisers=[("l2", 1e-3)],
    ...                       eta0=0.5, n_epochs=20)
    >>> bool(res.objective_trace[-1] < res.objective_trace[0])
    True
    """
    names, lams, qs = _check_regularisers(regularisers)
    eta0 = V.check_positive(eta0, "eta0")
    n_epochs = V.check_int(n_epochs, "n_epochs", minimum=1)
    radius = V.check_positive(radius, "radius", allow_inf=True)
    leaves = jax.tree_util.tree_leaves(data)
    if not leaves:
        raise ValueError("data must hold at least one array")
    n = int(np.shape(leaves[0])[0])
    if n == 0 or any(np.shape(a)[0] != n for a in leaves):
        raise ValueError("data's arrays must share a non-zero leading axis (one example per row)")
    key = V.as_rng_key(rng_key)
    theta = [jnp.asarray(t) for t in theta0]
    dtype = theta[0].dtype
    avg = [jnp.zeros_like(t) for t in theta]
    lams_j, qs_j = jnp.asarray(lams, dtype), jnp.asarray(qs, dtype)
    t = jnp.asarray(1.0, dtype)
    trace = []
    for _ in range(n_epochs):
        key, sub = jax.random.split(key)
        order = jax.random.permutation(sub, n)
        theta, avg, t, _ = _epoch(theta, avg, t, data, order, jnp.asarray(eta0, dtype), lams_j,
                                  qs_j, jnp.asarray(radius, dtype), loss_grad=loss_grad,
                                  names=names)
        trace.append(float(_objective(avg, data, lams_j, qs_j, loss_grad=loss_grad, names=names)))
    trace = np.asarray(trace)
    return OnlineProximalResult(list(theta), list(avg), float(trace[-1]), trace, n_epochs * n)
