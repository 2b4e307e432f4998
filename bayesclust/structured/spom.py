r"""SPOM: online proximal multiple-kernel learning for structured prediction
(Martins, Smith, Xing, Aguiar & Figueiredo, 2011, AISTATS, §3, Algorithm 3).

The primal form with explicit feature blocks: the joint feature map is
:math:`\phi(x,y)=(\phi_1(x,y),\dots,\phi_M(x,y))`, one block per kernel, and the score
:math:`f_\theta(x,y)=\sum_m\langle\theta_m,\phi_m(x,y)\rangle`. SPOM minimises

.. math:: \frac\lambda2\Big(\sum_m\|\theta_m\|\Big)^2+\frac1N\sum_i\max_{y'}\big(f_\theta(x_i,y')-f_\theta(x_i,y_i)+c(y',y_i)\big)

(sparse MKL with the structured hinge loss, §2, eqs. 4 and 9) by Algorithm 1 with one
regulariser: per round, loss-augmented decoding, the subgradient step
:math:`\tilde\theta_m=\theta_m-\eta_t(\phi_m(x_t,\hat y)-\phi_m(x_t,y_t))`, the prox of
:math:`\eta_t\lambda\cdot\frac12\|\cdot\|_{2,1}^2` on the block norms (Algorithm 2 through
Prop. 1) and the projection onto the ball of radius :math:`\gamma=\sqrt{2\Lambda/\lambda}`
(Prop. 9; :math:`\Lambda` the average largest cost). The kernel weights are
:math:`\beta_m\propto\|\theta_m\|` (on the simplex).

Two output structures:

* ``"multiclass"``: :math:`\phi_m(x,y)=e_y\otimes\psi_m(x)`, so :math:`\theta_m` is
  ``(K, D_m)``; argmax decoding, 0/1 cost.
* ``"sequence"``: a chain; :math:`\phi_m(x,y)=\sum_te_{y_t}\otimes\psi_m(x_t)` for every
  emission block plus a last block of transition counts
  :math:`\sum_{t\ge1}e_{y_{t-1}}\otimes e_{y_t}` (``(K, K)``); Viterbi decoding, Hamming cost.
  The transition block takes part in the sparse-MKL penalty like any kernel's block.

The explicit blocks replace the paper's kernel expansion (its α recursion); see
docs/deviations.md#spom-explicit-feature-blocks.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validation as V
from .decoding import _multiclass_decode, _viterbi
from .online import OnlineProximalState, init_online_proximal_state, online_proximal_step
from .proximal import block_norms

__all__ = ["SPOMResult", "SPOMState", "SPOMInfo", "init_spom_state", "spom_step", "spom",
           "spom_decision", "spom_predict", "kernel_weights"]

STRUCTURES = ("multiclass", "sequence")


class SPOMResult(NamedTuple):
    """What :func:`spom` returns.

    Attributes
    ----------
    theta : list of M (+1) arrays
        The averaged model (Martins et al., 2011, Prop. 4), one block per kernel, shapes
        ``(K, D_m)``; for ``"sequence"`` a last ``(K, K)`` transition block.
    theta_last : list of arrays
        The last iterate.
    beta : ndarray of shape (M,) (+1 for the transitions)
        Kernel weights :math:`\\beta_m=\\|\\theta_m\\|/\\sum_r\\|\\theta_r\\|` (0 where every block vanished).
    objective : float
        The sparse-MKL objective (minimised) at ``theta`` after the last epoch.
    objective_trace : ndarray of shape (n_epochs + 1,)
        That objective at the zero model and after every epoch.
    n_iter : int
        Rounds run (``n_epochs * N``).
    converged : bool
        True: the ``n_epochs`` epochs were run (SPOM runs a fixed schedule and has no
        convergence test).
    n_classes : int
    structure : str
    """

    theta: list
    theta_last: list
    beta: np.ndarray
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    n_classes: int
    structure: str


class SPOMState(NamedTuple):
    """State of SPOM (:func:`spom`) between two epochs.

    Made by :func:`init_spom_state`, advanced by :func:`spom_step` (one epoch of
    Algorithm 3); :func:`spom` loops over the step.  A host step: it never modifies its
    input state.

    Attributes
    ----------
    theta : list of M (+1) arrays
        The averaged model so far (the zero model before the first round), shapes
        ``(K, D_m)`` and for ``"sequence"`` a last ``(K, K)`` transition block.
    theta_last : list of arrays
        The last iterate, shaped as ``theta``.
    objective : float
        The sparse-MKL objective (minimised) at ``theta``.
    objective_trace : ndarray of float64, shape (epochs + 1,)
        ``objective`` at the zero model and after every epoch run.
    n_iter : int
        Rounds run (``N`` per epoch).
    converged : bool
        The schedule's ``n_epochs`` epochs have been run (no convergence test).
    problem : object
        The prepared problem (private, constant during the run): Algorithm 1's state
        fields that are not above (its loss, data, regulariser, steps, radius),
        ``n_classes`` and ``structure``.
    """

    theta: list
    theta_last: list
    objective: float
    objective_trace: np.ndarray
    n_iter: int
    converged: bool
    problem: Any


class SPOMInfo(NamedTuple):
    """Diagnostics of one :func:`spom_step`.

    Attributes
    ----------
    objective : float
        Objective of the returned state.
    changed : bool
        The epoch changed the averaged model.
    mean_loss : float
        The mean structured hinge loss of the epoch's rounds, each at the iterate before
        its update.
    """

    objective: float
    changed: bool
    mean_loss: float


# --- the structured hinge loss and its subgradient, one example ------------------------------


def _multiclass_hinge(theta, example):
    psi, y = example  # psi: tuple of (D_m,), y: int
    scores = sum(t @ p for t, p in zip(theta, psi))
    yhat, best = _multiclass_decode(scores, y, True)
    loss = best - scores[y]
    d = jax.nn.one_hot(yhat, scores.shape[0], dtype=scores.dtype) - jax.nn.one_hot(
        y, scores.shape[0], dtype=scores.dtype)
    return loss, [jnp.outer(d, p) for p in psi]


def _sequence_scores(theta, psi):
    emission, trans = theta[:-1], theta[-1]
    unary = sum(p @ t.T for t, p in zip(emission, psi))  # (T, K)
    return unary, trans


def _path_score(unary, trans, yy):
    k = unary.shape[1]
    oh = jax.nn.one_hot(yy, k, dtype=unary.dtype)  # -1 (padding) -> zero rows
    return jnp.sum(oh * unary) + jnp.sum((oh[:-1].T @ oh[1:]) * trans), oh


def _sequence_hinge(theta, example):
    psi, y, mask = example  # psi: tuple of (T, D_m); y: (T,) with -1 past the end
    unary, trans = _sequence_scores(theta, psi)
    yhat, best = _viterbi(unary, trans, y, mask, True)
    true, oh_y = _path_score(unary, trans, y)
    oh_h = jax.nn.one_hot(yhat, unary.shape[1], dtype=unary.dtype)
    d = oh_h - oh_y
    grads = [d.T @ p for p in psi]
    grads.append(oh_h[:-1].T @ oh_h[1:] - oh_y[:-1].T @ oh_y[1:])
    return best - true, grads


_LOSS_GRAD = {"multiclass": _multiclass_hinge, "sequence": _sequence_hinge}


# --- input checks ----------------------------------------------------------------------------


def _check_blocks(feature_blocks: Any, structure: str) -> list[np.ndarray]:
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")
    if isinstance(feature_blocks, (str, bytes)) or not isinstance(feature_blocks, (list, tuple)) \
            or len(feature_blocks) == 0:
        raise ValueError("feature_blocks must be a non-empty list of arrays, one per kernel")
    ndim = 2 if structure == "multiclass" else 3
    blocks = [V.check_array(b, f"feature_blocks[{m}]", ndim=ndim) for m, b in enumerate(feature_blocks)]
    lead = blocks[0].shape[: ndim - 1]
    for m, b in enumerate(blocks):
        if b.shape[: ndim - 1] != lead:
            what = "rows" if ndim == 2 else "(sequences, positions)"
            raise ValueError(f"feature_blocks have mismatched sizes: block 0 has {lead} {what}, "
                             f"block {m} has {b.shape[: ndim - 1]}")
    dtype = np.result_type(*blocks)
    return [b.astype(dtype, copy=False) for b in blocks]


def _check_lengths(lengths: Any, n: int, t_max: int) -> np.ndarray:
    if lengths is None:
        return np.full(n, t_max, np.int64)
    ln = V.check_labels(lengths, "lengths", n_samples=n)
    if np.any(ln < 1):
        raise ValueError("lengths must be >= 1: cannot decode an empty sequence")
    if np.any(ln > t_max):
        raise ValueError(f"lengths must be <= the padded length {t_max}")
    return ln


def _check_y(y: Any, structure: str, blocks, lengths, n_classes) -> tuple[np.ndarray, int]:
    if structure == "multiclass":
        yv = V.check_labels(y, "y", n_samples=blocks[0].shape[0])
        valid = yv
    else:
        yv = V.check_array(y, "y", ndim=2, dtype=None)
        yv = V.integer_labels(yv, "y")
        if yv.shape != blocks[0].shape[:2]:
            raise ValueError(f"y must have shape {blocks[0].shape[:2]} (sequences, positions), "
                             f"got {yv.shape}")
        valid = yv[np.arange(yv.shape[1])[None, :] < lengths[:, None]]
    k = V.check_class_ids(valid, "y", n_classes, what="SPOM's classes", minimum=2)
    if len(np.unique(valid)) < 2:
        raise ValueError("y has one class: SPOM needs at least 2 classes")
    return yv, k


def _data(blocks, yv, lengths, structure):
    if structure == "multiclass":
        return (tuple(jnp.asarray(b) for b in blocks), jnp.asarray(yv, jnp.int32))
    mask = np.arange(blocks[0].shape[1])[None, :] < lengths[:, None]
    y = np.where(mask, yv, -1)
    return (tuple(jnp.asarray(b) for b in blocks), jnp.asarray(y, jnp.int32), jnp.asarray(mask))


def kernel_weights(theta: list) -> np.ndarray:
    r"""Kernel weights :math:`\beta_m=\|\theta_m\|/\sum_r\|\theta_r\|` (Martins et al., 2011, §2).

    Examples
    --------
    >>> import numpy as np
    >>> kernel_weights([np.array([3.0, 4.0]), np.zeros(2), np.array([5.0])]).tolist()
    [0.5, 0.0, 0.5]
    """
    theta = V.check_blocks(theta, "theta")
    norms = np.asarray(block_norms([jnp.asarray(t) for t in theta]), np.float64)
    total = norms.sum()
    return norms / total if total > 0 else np.zeros_like(norms)


def init_spom_state(feature_blocks: list, y: Any, lam: float, *, structure: str = "multiclass",
                    lengths: Any = None, n_classes: int | None = None, n_epochs: int = 20,
                    eta0: float = 1.0, radius: float | str = "auto") -> SPOMState:
    """The state SPOM starts from: the zero model, its objective, no round run.

    Parameters are those of :func:`spom` (``n_epochs`` the schedule the state's
    ``converged`` counts).

    Returns
    -------
    SPOMState
    """
    lam = V.check_positive(lam, "lam")
    eta0 = V.check_positive(eta0, "eta0")
    n_epochs = V.check_int(n_epochs, "n_epochs", minimum=1)
    blocks = _check_blocks(feature_blocks, structure)
    n = blocks[0].shape[0]
    lengths_v = _check_lengths(lengths, n, blocks[0].shape[1]) if structure == "sequence" else None
    yv, k = _check_y(y, structure, blocks, lengths_v, n_classes)
    if isinstance(radius, str):
        if radius != "auto":
            raise ValueError(f"radius must be a positive number, inf or 'auto', got {radius!r}")
        big_lambda = 1.0 if structure == "multiclass" else float(lengths_v.mean())
        radius = float(np.sqrt(2.0 * big_lambda / lam))
    else:
        radius = V.check_positive(radius, "radius", allow_inf=True)
    dtype = V.working_dtype(blocks[0].dtype)
    theta0 = [jnp.zeros((k, b.shape[-1]), dtype) for b in blocks]
    if structure == "sequence":
        theta0.append(jnp.zeros((k, k), dtype))
    inner = init_online_proximal_state(
        _LOSS_GRAD[structure], theta0, _data(blocks, yv, lengths_v, structure),
        regularisers=[("l1_squared", lam)], eta0=eta0, n_epochs=n_epochs, radius=radius)
    return _outer(inner, (k, structure))


def _outer(inner: OnlineProximalState, extra) -> SPOMState:
    return SPOMState(inner.theta_avg, inner.theta, inner.objective, inner.objective_trace,
                     inner.n_iter, inner.converged, (inner.problem, *extra))


def spom_step(rng_key: Any, state: SPOMState) -> tuple[SPOMState, SPOMInfo]:
    r"""One epoch of SPOM (Algorithm 3 of Martins et al., 2011, §3): every example once.

    Each round: loss-augmented decoding, the subgradient step, the prox of the sparse-MKL
    penalty and the projection (Algorithm 1, :func:`bayesclust.online_proximal_step`, in
    an order drawn from ``rng_key``).  :func:`spom` is this step from
    :func:`init_spom_state`, epoch ``e`` with the second half of the ``e``-th split of its
    key (``key, sub = split(key)``); stepping by hand reproduces it exactly.

    Parameters
    ----------
    rng_key : JAX key or int
        Orders the epoch's examples.
    state : SPOMState

    Returns
    -------
    state : SPOMState
    info : SPOMInfo

    Examples
    --------
    >>> import numpy as np, jax
    >>> y = np.repeat([0, 1], 10)
    >>> state = init_spom_state([np.eye(2)[y]], y, lam=0.05, n_epochs=2)
    >>> state, info = spom_step(jax.random.key(0), state)
    >>> state.n_iter, len(state.objective_trace), bool(info.objective < state.objective_trace[0])
    (20, 2, True)
    """
    problem, *extra = state.problem
    inner = OnlineProximalState(state.theta_last, state.theta, state.objective,
                                state.objective_trace, state.n_iter, state.converged, problem)
    inner, info = online_proximal_step(rng_key, inner)
    return _outer(inner, extra), SPOMInfo(info.objective, info.changed, info.mean_loss)


def spom(rng_key: Any, feature_blocks: list, y: Any, lam: float, *,
         structure: str = "multiclass", lengths: Any = None, n_classes: int | None = None,
         n_epochs: int = 20, eta0: float = 1.0, radius: float | str = "auto") -> SPOMResult:
    r"""SPOM, Algorithm 3 of Martins et al. (2011, §3): sparse MKL for structured prediction.

    See the module docstring for the objective and the two structures. Steps
    :math:`\eta_t=\eta_0/\sqrt t` (Prop. 3's rate; the paper picks :math:`\eta_0` on a grid,
    docs/deviations.md#spom-step-size).  The loop over :func:`spom_step` (one epoch) from
    :func:`init_spom_state`.

    Parameters
    ----------
    rng_key : JAX key or int
        Orders the examples of every epoch.
    feature_blocks : list of M arrays
        ``"multiclass"``: ``(N, D_m)`` each; ``"sequence"``: ``(N, T, D_m)`` each (sequences
        padded to a common length ``T``). One block per kernel, all with the same leading sizes.
    y : array_like
        ``(N,)`` class ids ``0..K-1``; ``(N, T)`` for sequences (entries past ``lengths`` ignored).
    lam : float > 0
        :math:`\lambda` (the paper's :math:`C=1/(\lambda N)`).
    structure : {"multiclass", "sequence"}
    lengths : array_like of shape (N,), optional
        Sequence lengths (>= 1); default: all ``T``.
    n_classes : int, optional
        ``K``; default ``max(y) + 1``.
    n_epochs : int >= 1
    eta0 : float > 0
    radius : float > 0, inf or "auto"
        :math:`\gamma`; ``"auto"``: :math:`\sqrt{2\Lambda/\lambda}`, :math:`\Lambda` the average
        largest cost (1 for multiclass, the mean length for sequences; Prop. 9).

    Returns
    -------
    SPOMResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> good = np.eye(2)[y] + 0.1 * rng.normal(size=(60, 2)); noise = rng.normal(size=(60, 2))
    >>> res = spom(0, [good, noise], y, lam=0.05, n_epochs=10)
    >>> bool(res.beta[0] > 0.9)
    True
    """
    state = init_spom_state(feature_blocks, y, lam, structure=structure, lengths=lengths,
                            n_classes=n_classes, n_epochs=n_epochs, eta0=eta0, radius=radius)
    key = V.as_rng_key(rng_key)
    while not state.converged:
        key, sub = jax.random.split(key)
        state, _ = spom_step(sub, state)
    k, structure = state.problem[1:]
    V.check_run_finite((state.theta, state.objective), "feature_blocks", "SPOM",
                       np.asarray(state.theta[0]).dtype)
    return SPOMResult(state.theta, state.theta_last, kernel_weights(state.theta), state.objective,
                      state.objective_trace, state.n_iter, state.converged, k, structure)


@jax.jit
def _multiclass_scores(theta, blocks):
    return sum(b @ t.T for t, b in zip(theta, blocks))


@jax.jit
def _decode_sequences(theta, blocks, mask):
    def one(psi, m):
        unary, trans = _sequence_scores(theta, psi)
        return _viterbi(unary, trans, jnp.zeros(m.shape[0], jnp.int32), m, False)[0]
    return jax.vmap(one)(blocks, mask)


def _check_theta(theta, blocks, structure):
    theta = V.check_blocks(theta, "theta")
    n_extra = 1 if structure == "sequence" else 0
    if len(theta) != len(blocks) + n_extra:
        raise ValueError(f"theta has {len(theta)} blocks but feature_blocks {len(blocks)}"
                         + (" (+1 transition block)" if n_extra else ""))
    for m, b in enumerate(blocks):
        if np.shape(theta[m])[-1] != b.shape[-1]:
            raise ValueError(f"feature_blocks[{m}] has {b.shape[-1]} features, theta[{m}] "
                             f"{np.shape(theta[m])[-1]}")


def spom_decision(theta: list, feature_blocks: list) -> jax.Array:
    r"""Multiclass scores :math:`f_\theta(x,k)=\sum_m\langle\theta_m[k],\psi_m(x)\rangle`, shape (N, K).

    Examples
    --------
    >>> import numpy as np
    >>> np.asarray(spom_decision([np.eye(2)], [np.array([[1.0, 0.0]])])).tolist()
    [[1.0, 0.0]]
    """
    blocks = _check_blocks(feature_blocks, "multiclass")
    _check_theta(theta, blocks, "multiclass")
    return _multiclass_scores([jnp.asarray(t) for t in theta], [jnp.asarray(b) for b in blocks])


def spom_predict(theta: list, feature_blocks: list, *, structure: str = "multiclass",
                 lengths: Any = None) -> np.ndarray:
    """Decode with a SPOM model: argmax per row, or Viterbi per sequence (``-1`` past ``lengths``).

    Parameters
    ----------
    theta : list of arrays (``SPOMResult.theta``)
    feature_blocks : list of arrays, shaped as for :func:`spom`
    structure : {"multiclass", "sequence"}
    lengths : array_like of shape (N,), optional (sequences)

    Returns
    -------
    ndarray of shape (N,) or (N, T), int

    Examples
    --------
    >>> import numpy as np
    >>> spom_predict([np.eye(2)], [np.array([[0.0, 1.0]])]).tolist()
    [1]
    """
    blocks = _check_blocks(feature_blocks, structure)
    _check_theta(theta, blocks, structure)
    th = [jnp.asarray(t) for t in theta]
    if structure == "multiclass":
        return np.asarray(jnp.argmax(_multiclass_scores(th, [jnp.asarray(b) for b in blocks]), axis=1))
    ln = _check_lengths(lengths, blocks[0].shape[0], blocks[0].shape[1])
    mask = np.arange(blocks[0].shape[1])[None, :] < ln[:, None]
    return np.asarray(_decode_sequences(th, tuple(jnp.asarray(b) for b in blocks), jnp.asarray(mask)))
