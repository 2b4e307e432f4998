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

__all__ = ["OnlineProximalResult", "OnlineProximalState", "OnlineProximalInfo",
           "init_online_proximal_state", "online_proximal_step", "online_proximal",
           "proximal_update", "regulariser_value", "REGULARISERS"]

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
    theta = V.check_blocks(theta, "theta")
    grad = V.check_blocks(grad, "grad")
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
    return _reg_value([jnp.asarray(t) for t in V.check_blocks(theta, "theta")], names, lams, qs)


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
    objective_trace : ndarray of shape (n_epochs + 1,)
        That objective at ``theta0`` and after every epoch.
    n_iter : int
        Rounds run (``n_epochs * N``).
    converged : bool
        True: the ``n_epochs`` epochs were run (Algorithm 1 runs a fixed schedule and
        has no convergence test).
    """

    theta: list
    theta_avg: list
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool


class _Problem(NamedTuple):
    """What an online-proximal run keeps constant: the loss, the data, the regularisers."""

    loss_grad: Callable
    data: Any
    names: tuple
    lams: jax.Array
    qs: jax.Array
    eta0: jax.Array
    radius: jax.Array
    n: int
    n_epochs: int


class OnlineProximalState(NamedTuple):
    """State of Algorithm 1 (:func:`online_proximal`) between two epochs.

    Made by :func:`init_online_proximal_state`, advanced by :func:`online_proximal_step`
    (one epoch); :func:`online_proximal` loops over the step.  A host step: it never
    modifies its input state.

    Attributes
    ----------
    theta : list of M arrays, shapes of ``theta0``
        The last iterate.
    theta_avg : list of M arrays, shapes of ``theta0``
        The average of the iterates so far (``theta0`` before the first round).
    objective : float
        The regularised objective (minimised) at ``theta_avg``.
    objective_trace : ndarray of float64, shape (epochs + 1,)
        ``objective`` at ``theta0`` and after every epoch run.
    n_iter : int
        Rounds run (``N`` per epoch); round ``t = n_iter + 1`` has step
        :math:`\\eta_0/\\sqrt t`.
    converged : bool
        The schedule's ``n_epochs`` epochs have been run (no convergence test).
    problem : object
        The prepared problem (private, constant during the run): the loss, the data,
        the regularisers, ``eta0``, the radius, ``N`` and ``n_epochs``.
    """

    theta: list
    theta_avg: list
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    problem: Any


class OnlineProximalInfo(NamedTuple):
    """Diagnostics of one :func:`online_proximal_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The epoch changed the averaged model (Algorithm 1 has no partition).
    mean_loss : float
        The mean loss of the epoch's rounds, each at the iterate before its update.
    """

    objective: float
    changed: bool
    mean_loss: float


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


def init_online_proximal_state(loss_grad: Callable, theta0: Sequence[Any], data: Any, *,
                               regularisers: Sequence[tuple], eta0: float = 1.0,
                               n_epochs: int = 10, radius: float = np.inf) -> OnlineProximalState:
    """The state Algorithm 1 starts from: ``theta0``, its objective, no round run.

    Parameters are those of :func:`online_proximal` (``n_epochs`` the schedule the
    state's ``converged`` counts).

    Returns
    -------
    OnlineProximalState
    """
    names, lams, qs = _check_regularisers(regularisers)
    eta0 = V.check_positive(eta0, "eta0")
    n_epochs = V.check_int(n_epochs, "n_epochs", minimum=1)
    radius = V.check_positive(radius, "radius", allow_inf=True)
    leaves = jax.tree_util.tree_leaves(data)
    if not leaves:
        raise ValueError("data must hold at least one array")
    for leaf in leaves:
        V.check_kernel_array(leaf, "data")  # real numbers, no NaN or infinity
    n = int(np.shape(leaves[0])[0])
    if n == 0 or any(np.shape(a)[0] != n for a in leaves):
        raise ValueError("data's arrays must share a non-zero leading axis (one example per row)")
    theta = [jnp.asarray(t) for t in V.check_blocks(theta0, "theta0")]
    dtype = theta[0].dtype
    problem = _Problem(loss_grad, data, names, jnp.asarray(lams, dtype), jnp.asarray(qs, dtype),
                       jnp.asarray(eta0, dtype), jnp.asarray(radius, dtype), n, n_epochs)
    obj = float(_objective(theta, data, problem.lams, problem.qs, loss_grad=loss_grad, names=names))
    return OnlineProximalState(theta, list(theta), obj, np.array([obj]), 0, False, problem)


def online_proximal_step(rng_key: Any, state: OnlineProximalState
                         ) -> tuple[OnlineProximalState, OnlineProximalInfo]:
    r"""One epoch of Algorithm 1 (Martins et al., 2011, §3): every example once, in an order
    drawn from ``rng_key``.

    Round :math:`t` (counted over all epochs, from ``state.n_iter + 1``) takes the step
    :math:`\eta_t=\eta_0/\sqrt t` and :func:`proximal_update`; the average of the
    iterates is updated after every round.  :func:`online_proximal` is this step from
    :func:`init_online_proximal_state`, epoch ``e`` with the second half of the ``e``-th
    split of its key (``key, sub = split(key)``); stepping by hand reproduces it exactly.

    Parameters
    ----------
    rng_key : JAX key or int
        Orders the epoch's examples (``jax.random.permutation``).
    state : OnlineProximalState

    Returns
    -------
    state : OnlineProximalState
    info : OnlineProximalInfo

    Examples
    --------
    >>> import numpy as np, jax, jax.numpy as jnp
    >>> def lg(theta, ex):
    ...     x, y = ex
    ...     r = jnp.dot(theta[0], x) - y
    ...     return 0.5 * r ** 2, [r * x]
    >>> X = np.random.default_rng(0).normal(size=(50, 3)); y = X @ np.array([1.0, -2.0, 0.0])
    >>> state = init_online_proximal_state(lg, [np.zeros(3)], (X, y), regularisers=[("l2", 1e-3)],
    ...                                    eta0=0.5, n_epochs=2)
    >>> state, info = online_proximal_step(jax.random.key(0), state)
    >>> state.n_iter, len(state.objective_trace), bool(info.objective < state.objective_trace[0])
    (50, 2, True)
    """
    p = state.problem
    order = jax.random.permutation(V.as_rng_key(rng_key), p.n)
    t = jnp.asarray(state.n_iter + 1, p.eta0.dtype)
    theta, avg, _, losses = _epoch(state.theta, state.theta_avg, t, p.data, order, p.eta0, p.lams,
                                   p.qs, p.radius, loss_grad=p.loss_grad, names=p.names)
    obj = float(_objective(avg, p.data, p.lams, p.qs, loss_grad=p.loss_grad, names=p.names))
    changed = any(not np.array_equal(a, b) for a, b in zip(avg, state.theta_avg))
    n_iter = state.n_iter + p.n
    new = OnlineProximalState(list(theta), list(avg), obj, np.append(state.objective_trace, obj),
                              n_iter, n_iter >= p.n_epochs * p.n, p)
    return new, OnlineProximalInfo(obj, changed, float(jnp.mean(losses)))


def online_proximal(rng_key: Any, loss_grad: Callable, theta0: Sequence[Any], data: Any, *,
                    regularisers: Sequence[tuple], eta0: float = 1.0, n_epochs: int = 10,
                    radius: float = np.inf) -> OnlineProximalResult:
    r"""Online proximal gradient, Algorithm 1 of Martins et al. (2011, §3).

    Each epoch visits the examples in a random order; round :math:`t` (counted over all
    epochs, from 1) uses :math:`\eta_t=\eta_0/\sqrt t` (the rate of Prop. 3) and
    :func:`proximal_update`.  The loop over :func:`online_proximal_step` from
    :func:`init_online_proximal_state`.

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
    state = init_online_proximal_state(loss_grad, theta0, data, regularisers=regularisers,
                                       eta0=eta0, n_epochs=n_epochs, radius=radius)
    key = V.as_rng_key(rng_key)
    while not state.converged:
        key, sub = jax.random.split(key)
        state, _ = online_proximal_step(sub, state)
    return OnlineProximalResult(state.theta, state.theta_avg, state.objective, state.objective_trace,
                                state.n_iter, state.converged)
