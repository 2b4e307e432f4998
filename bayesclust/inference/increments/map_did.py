"""MAP-DID: a classifier from class-conditional Gaussian mixtures and the classes' increments.

Each class is a Gaussian mixture learnt by :func:`~bayesclust.gmd` (its components may differ
in mean and covariance) plus one 2-DID on the class's dissimilarity increments, which ties the
components into one structure; a point goes to the class of largest joint density
(Aidos & Fred, MAP-DID; the program is :func:`bayesclust.models.did.map_did`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validation as V
from ...graphs import increments, increments_to
from ...kernels import did_logpdf
from ...models.did import class_mixture
from .._driver import pow2_at_least
from ._common import _lam_floor

__all__ = ["MAPDIDModel", "map_did_fit", "map_did_log_scores", "map_did_predict"]


class MAPDIDModel(NamedTuple):
    """The fitted parameters of :func:`map_did_fit` (the sites of :func:`~bayesclust.models.did.map_did`).

    Attributes
    ----------
    classes : ndarray, shape (c,)
        The class labels, in the order of the rows below.
    class_weights : ndarray, shape (c,)
        Class frequencies.
    component_weights : ndarray, shape (c, g)
        Mixing weights per class, zero for the unused components.
    means : ndarray, shape (c, g, d)
    covariances : ndarray, shape (c, g, d, d)
        (Unused components: the identity.)
    scale_tril : ndarray, shape (c, g, d, d)
        Their Cholesky factors.
    lam : ndarray, shape (c,)
        Each class's mean increment (floored at the smallest positive increment of the data).
    n_components : ndarray of int, shape (c,)
    references : tuple of ndarray
        The training points of every class (the increments of a new point are measured there).
    """

    classes: np.ndarray
    class_weights: np.ndarray
    component_weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    scale_tril: np.ndarray
    lam: np.ndarray
    n_components: np.ndarray
    references: tuple


class _OneGaussian(NamedTuple):
    weights: np.ndarray
    centers: np.ndarray
    covariances: np.ndarray
    n_components: int


def map_did_fit(rng_key, X, y, *, k_max: int = 10, init: str = "random") -> MAPDIDModel:
    r"""Fit MAP-DID: per class a Gaussian mixture by :func:`~bayesclust.gmd` and a 2-DID mean.

    For every class :math:`c`: :math:`\pi_c` its frequency; its mixture learnt by Figueiredo &
    Jain's algorithm from ``min(k_max, n_c - 1)`` components down to one, the message length
    choosing the number (a class with too few points for that -- at most half a component's
    parameters -- gets one Gaussian, its covariance regularised as in
    :func:`~bayesclust.gmdid`); :math:`\lambda_c` the mean of its increments
    (:func:`bayesclust.graphs.increments`), the papers' estimate.

    Parameters
    ----------
    rng_key : jax.random key or int
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
        At least two classes, each of at least 3 points.
    k_max : int, default 10
        Starting number of components per class.
    init : {"random", "kmeans"}, default "random"
        :func:`~bayesclust.gmd`'s initialisation.

    Returns
    -------
    MAPDIDModel

    References
    ----------
    A. Aidos and A. Fred, MAP-DID (the DID deliverable, §2.2); M. Figueiredo and A. K. Jain,
    "Unsupervised learning of finite mixture models", IEEE TPAMI 24 (2002).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 4])
    >>> y = np.repeat([0, 1], 40)
    >>> model = map_did_fit(0, X, y, k_max=3)
    >>> float((map_did_predict(model, X) == y).mean()) > 0.95
    True
    """
    from ._common import _gaussian, _n_params
    from .gmd import gmd

    X = np.asarray(V.check_array(X, "X", min_samples=3), np.float64)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape {y.shape}")
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"y must hold at least two classes, got {classes.size}")
    if counts.min() < 3:
        raise ValueError(f"every class of y needs at least 3 points (increments), got "
                         f"{counts.min()} in class {classes[np.argmin(counts)]!r}")
    k_max = V.check_int(k_max, "k_max", minimum=1)
    key = V.as_rng_key(rng_key)
    floor = _lam_floor(X)
    d = X.shape[1]
    fits, lams, refs = [], [], []
    for c in range(classes.size):
        Xc = X[codes == c]
        if Xc.shape[0] <= _n_params(d) / 2:  # too few points for the message length: one Gaussian
            mu, cov = _gaussian(Xc)
            fits.append(_OneGaussian(np.ones(1), mu[None], cov[None], 1))
        else:
            k = min(k_max, Xc.shape[0] - 1)
            # A class's rows padded to a power of two (a coarser bucket than gmd's own): rows
            # added to the data move one class's size by a larger fraction than n, and a refit
            # on a few more rows then reuses the compiled EM (the fit is gmd's default up to
            # the rounding of its sums).
            fits.append(gmd(jax.random.fold_in(key, c), Xc, 1, k, init=init,
                            pad_rows=max(32, pow2_at_least(Xc.shape[0]))))
        lams.append(max(float(increments(Xc).mean()), floor))
        refs.append(Xc)
    g = max(f.n_components for f in fits)
    weights = np.zeros((classes.size, g))
    means = np.zeros((classes.size, g, d))
    covs = np.tile(np.eye(d), (classes.size, g, 1, 1))
    for c, f in enumerate(fits):
        weights[c, :f.n_components] = f.weights
        means[c, :f.n_components] = f.centers
        covs[c, :f.n_components] = f.covariances
    return MAPDIDModel(classes, counts / counts.sum(), weights, means, covs, np.linalg.cholesky(covs),
                       np.array(lams), np.array([f.n_components for f in fits]), tuple(refs))


def map_did_log_scores(model: MAPDIDModel, X, *, increments_of=None) -> np.ndarray:
    r"""Joint log densities :math:`\log\pi_c + \log p(x \mid c) + \log p_{DID}(w_c(x); \lambda_c)`.

    Parameters
    ----------
    model : MAPDIDModel
    X : array_like, shape (p, d)
    increments_of : array_like, shape (p, c), optional
        Each point's increment in each class; default
        :func:`bayesclust.graphs.increments_to` of the class's training points.

    Returns
    -------
    ndarray of float64, shape (p, c)
    """
    # The increments are distances to the training points, in the model's units.
    X = V.check_points(X, "X")
    if X.shape[1] != model.means.shape[-1]:
        raise ValueError(f"X has {X.shape[1]} features, the model {model.means.shape[-1]}")
    if increments_of is None:
        increments_of = np.stack([increments_to(ref, X) for ref in model.references], axis=1)
    mix = class_mixture(jnp.asarray(model.component_weights), jnp.asarray(model.means),
                        jnp.asarray(model.scale_tril))
    log_px = np.asarray(mix.log_prob(jnp.asarray(X)[:, None, :]), np.float64)  # (p, c)
    log_pw = did_logpdf(np.asarray(increments_of, np.float64), model.lam[None, :])
    return np.log(model.class_weights)[None, :] + log_px + log_pw


def map_did_predict(model: MAPDIDModel, X) -> np.ndarray:
    """The class of largest :func:`map_did_log_scores` for every row of ``X`` (shape (p,))."""
    return model.classes[np.argmax(map_did_log_scores(model, X), axis=1)]
