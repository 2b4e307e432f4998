r"""The tempered DP-MDA2: a DP mixture of joint (point, class) components (ours).

Our extension (docs/deviations.md#hard-dc-model): the joint density model behind discriminative
clustering (Kaski, Sinkkonen & Klami 2005, §4 and §6.5, "MDA2": a component emits both the
primary point and the auxiliary class) with a Dirichlet-process prior over its components, as
Kulis & Jordan (2012, §2-3) put one on the Gaussian mixture.  Component ``j`` emits
:math:`x \sim N(\mu_j, \sigma^2 I)` and :math:`c \sim \mathrm{Cat}(\psi_j)`,
:math:`\psi_j \sim \mathrm{Dir}(n^0)`, :math:`\mu_j \sim N(0, \rho^2 I)`.  With the
:math:`\psi_j` integrated out the classes of a partition have the Polya probability

.. math::

    \mathrm{Polya}(c \mid z) = \prod_j \frac{\Gamma(N^0)}{\Gamma(N_j + N^0)}
    \prod_c \frac{\Gamma(n_{jc} + n^0_c)}{\Gamma(n^0_c)},

and the model keeps them in the small-variance limit by *tempering* this factor with the
power :math:`\xi / (2\sigma^2)`:

.. math::

    p(x, c \mid z) \propto \prod_i N(x_i \mid \mu_{z_i}, \sigma^2 I) \;
    \mathrm{Polya}(c \mid z)^{\xi / (2\sigma^2)},
    \qquad \alpha = (1 + \rho^2/\sigma^2)^{d/2} e^{-\lambda / (2\sigma^2)}

(:func:`bayesclust.models.dp_gmm.log_alpha_from_lam`).  ``xi = 2 sigma2`` is the plain
(untempered) DP-MDA2; ``xi = 0`` drops the classes (the DP Gaussian mixture).  As
:math:`\sigma^2 \to 0` its Gibbs sampler (:mod:`bayesclust.inference.mixtures.dp_mda2_gibbs`)
becomes HardDC (:func:`bayesclust.inference.hard.hard_dc.hard_dc`).

This module holds the NumPyro program only.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from .. import _validation as V
from ..kernels import polya_log_evidence, stick_breaking
from .dp_gmm import DEFAULT_TRUNCATION

__all__ = ["dp_mda2"]


def dp_mda2(X=None, classes=None, *, n_classes: int, n=None, d=None,
            truncation: int = DEFAULT_TRUNCATION, alpha=1.0, sigma2=1.0, rho2=100.0, xi=0.0,
            n0=1.0):
    r"""NumPyro program of the tempered DP-MDA2 (truncated stick-breaking, labels explicit).

    .. math::

        v_t \sim \mathrm{Beta}(1, \alpha),\ w = \mathrm{stick\_breaking}(v), \quad
        \mu_t \sim N(0, \rho^2 I), \quad z_i \sim \mathrm{Cat}(w), \quad
        x_i \sim N(\mu_{z_i}, \sigma^2 I),

    plus ``factor("classes", xi / (2 sigma2) * log Polya(c | z))``: the class
    distributions :math:`\psi_t \sim \mathrm{Dir}(n^0)` integrated out and the Polya term
    tempered (module docstring).  The stick-breaking prior truncated at ``T`` components
    stands for the CRP of the Gibbs sampler (Ishwaran & James 2001); the labels ``z`` are
    sample sites (plate ``"data"``), because the Polya factor couples all of them and cannot
    be summed out point by point: condition on ``z`` (``numpyro.handlers.condition``) to
    evaluate the joint density of a partition, or run the program generatively (``X`` and
    ``classes`` None) for draws of ``(z, x)`` from the untempered part.  The partition
    posterior is sampled by
    :func:`bayesclust.inference.mixtures.dp_mda2_gibbs.gibbs_dp_mda2`, not by NUTS.

    Parameters
    ----------
    X : array, shape (n, d), optional
        Observed points (centred: the means' prior is centred at 0).
    classes : int array, shape (n,), optional
        Observed classes ``0..n_classes-1`` (with ``X``).
    n_classes : int
        ``C``.
    n, d : int, optional
        Sizes in generative mode.
    truncation : int
        Components ``T >= 2``.
    alpha, sigma2, rho2 : float
        Concentration, component **variance**, prior **variance** of the means (> 0).
    xi : float
        Temperature of the class term (>= 0), a squared distance per nat.
    n0 : float
        Dirichlet prior count per class (> 0).

    Returns
    -------
    array, shape (n,)
        The labels ``z``.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.handlers import condition, seed, trace
    >>> X, c = np.zeros((4, 2)), np.array([0, 0, 1, 1])
    >>> model = seed(condition(dp_mda2, {"z": np.array([0, 0, 1, 1])}), 0)
    >>> tr = trace(model).get_trace(X, c, n_classes=2, truncation=3, sigma2=0.5, xi=1.0)
    >>> round(float(tr["classes"]["fn"].log_prob(0.0)), 4)  # xi/(2 sigma2) = 1 times log(1/3 * 1/3)
    -2.1972
    """
    T = V.check_int(truncation, "truncation", minimum=2)
    C = V.check_int(n_classes, "n_classes", minimum=1)
    if X is not None:
        X = jnp.asarray(V.check_kernel_array(X, "X", ndim=2, min_rows=1))
        n, d = X.shape
    if classes is not None:
        classes = V.check_kernel_array(classes, "classes", ndim=1, kind="i")
        V.check_kernel_ids(classes, "classes", C)
        if X is not None and classes.shape[0] != X.shape[0]:
            raise ValueError(f"classes has length {classes.shape[0]} but X has {X.shape[0]} rows")
    if n is None or d is None:
        raise ValueError("give X (and classes), or n and d to run the model generatively")
    with numpyro.plate("sticks", T - 1):
        v = numpyro.sample("v", dist.Beta(1.0, alpha))
    weights = numpyro.deterministic("weights", stick_breaking(v))
    with numpyro.plate("components", T):
        means = numpyro.sample("means", dist.Normal(0.0, jnp.sqrt(rho2)).expand([d]).to_event(1))
    with numpyro.plate("data", n):
        z = numpyro.sample("z", dist.Categorical(probs=weights))
        numpyro.sample("x", dist.Normal(means[z], jnp.sqrt(sigma2)).to_event(1), obs=X)
    if classes is not None:
        c = jnp.asarray(classes, jnp.int32)
        table = jnp.zeros((T, C)).at[z, c].add(1.0)
        numpyro.factor("classes", xi / (2.0 * sigma2) * polya_log_evidence(table, n0,
                                                                           include_norm=True))
    return z
