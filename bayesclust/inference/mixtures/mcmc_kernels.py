r"""The collapsed Gibbs samplers as NumPyro ``MCMCKernel`` s, for ``numpyro.infer.MCMC``.

:class:`DPCollapsedGibbs` (the DP mixture: spherical, diagonal or full covariances) and
:class:`HDPGibbs` (the HDP mixture, Chinese restaurant franchise) wrap the sweeps of
:mod:`.gibbs`, :mod:`.gibbs_gaussian` and :mod:`.hdp_gibbs` -- the same Markov chains as
:func:`bayesclust.gibbs_dp_gmm`, :func:`bayesclust.gibbs_dp_gaussian` and
:func:`bayesclust.gibbs_hdp_gmm`, one :meth:`~numpyro.infer.mcmc.MCMCKernel.sample` per
sweep -- so that NumPyro drives them::

    mcmc = MCMC(DPCollapsedGibbs(X, sigma2=0.1), num_warmup=500, num_samples=1000,
                num_chains=4, chain_method="vectorized")
    mcmc.run(jax.random.PRNGKey(0))
    mcmc.print_summary()                                   # n_clusters, log_likelihood, ...
    mcmc.get_samples(group_by_chain=True)["labels"]        # (4, 1000, n)
    arviz.from_numpyro(mcmc)                               # posterior group
    posterior_from_mcmc(mcmc)                              # bayesclust's Posterior

The package's own drivers stay the fast path (a growing buffer, whole segments of
sweeps in one native call, many chains per SIMD register); these kernels give the same
stationary distribution (``tests/test_mcmc_kernels.py`` checks both against exact
enumeration of the partitions).

**Sites.** ``get_samples()`` holds ``labels`` (n,) (clusters numbered ``0..k-1`` in
buffer order), ``n_clusters``, ``log_likelihood`` and every hyper-parameter that has a
prior (``alpha``, ``sigma2``, ``gamma``); :class:`HDPGibbs` adds ``local_labels`` and
``n_local``, :class:`DPCollapsedGibbs` with split-merge moves ``split_merge_accepted``
(the moves of the sweep accepted, from the sweep's ``GibbsInfo``; the Posterior's sample
stat ``split_merge_acceptance`` is it over ``split_merge``).  The kernel state's ``z`` keeps the partition as buffer slots (``slots``)
and :meth:`postprocess_fn` turns them into ``labels``, so NumPyro's ``print_summary``
(whose default ``exclude_deterministic=True`` shows only the sites of ``state.z``)
summarises the scalars and not one row per point.

**Chain methods.** ``"vectorized"``: one sweep moves all chains (the spherical model's
native CPU kernel takes them on its SIMD lanes); ``"sequential"`` (and ``"parallel"``,
which NumPyro turns into it on one device); ``"parallel"`` over several devices
(``numpyro.set_host_device_count``) and a callable such as ``jax.vmap`` (the native
kernel is then called once per chain: its FFI call is batched sequentially).  Every
method gives chain ``c`` the same draws from the same key.

**Fixed capacity.** NumPyro's loop gives the kernel no chance to grow a buffer between
sweeps, so the capacity is chosen at construction: by default the largest a partition
can need (``n`` clusters; ``HDPGibbs``: as many tables in a data set as it has points,
and ``n`` dishes), which makes an overflow impossible.  A smaller ``capacity`` makes
each sweep cheaper (its cost is linear in the capacity, and a sweep at ``n`` slots costs
several of the package's driver, whose buffer grows from 8); a chain that needs more
slots is never merged silently: from that sweep on its draws are marked (``n_clusters``
-1, ``log_likelihood`` NaN, ``labels`` all -1), NumPyro's one-chain progress bar and
:func:`posterior_from_mcmc` raise a ``RuntimeError`` naming the capacity, and
``print_summary`` shows the NaN.

References
----------
R. M. Neal (2000), Markov chain sampling methods for Dirichlet process mixture models,
JCGS 9(2), 249-265, Algorithm 3.  B. Kulis and M. I. Jordan (2012), Revisiting k-means:
new algorithms via Bayesian nonparametrics, ICML, §2-4.  Y. W. Teh, M. I. Jordan, M. J. Beal
and D. M. Blei (2006), Hierarchical Dirichlet processes, JASA 101, 1566-1581, §5.1.
D. B. Dahl (2003), An improved merge-split sampler for conjugate Dirichlet process mixture
models, Tech. Rep. 1086, Univ. of Wisconsin.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer.mcmc import MCMCKernel
from numpyro.util import is_prng_key

from ... import _native
from ... import _validation as V
from ...kernels import compact_labels
from ._common import prior_distribution
from .convergence import DP_SAMPLER_DEFAULTS, warn_if_not_converged
from .gibbs import init_state, log_likelihood, sweep_chains
from .gibbs_gaussian import (
    COVARIANCE_TYPES,
    check_gaussian_prior,
    default_gaussian_prior,
    init_gaussian_state,
    log_marginal_whitened,
    sweep_gaussian_chains,
    whitened_problem,
)
from .hdp_gibbs import hdp_log_likelihood, hdp_sweep, init_hdp_state

__all__ = ["GibbsKernelState", "DPCollapsedGibbs", "HDPGibbs", "posterior_from_mcmc"]


class GibbsKernelState(NamedTuple):
    """State of a Gibbs ``MCMCKernel``: one chain, or a batch under ``chain_method="vectorized"``.

    Attributes
    ----------
    z : dict of str -> array
        This draw's sites before :meth:`~numpyro.infer.mcmc.MCMCKernel.postprocess_fn`:
        ``slots`` (n,) (buffer slot of each point's cluster; :class:`HDPGibbs` also
        ``tables`` (n,)), ``n_clusters`` (int32 scalar), ``log_likelihood`` (float scalar)
        and the hyper-parameters that have priors.  A leading chain axis when batched.
    chain : GibbsState, GaussianGibbsState or HDPState
        The sampler's own state (the sweep's input and output).
    rng_key : PRNG key
        Split once per sweep.
    """

    z: dict
    chain: Any
    rng_key: jax.Array


def _prior_arrays(prior, name, family, dtype):
    """``(a, b)`` of a conjugate prior as arrays of ``dtype``, or None."""
    prior = prior_distribution(prior, name, family)
    if prior is None:
        return None
    return (jnp.asarray(float(np.asarray(prior.concentration)), dtype),
            jnp.asarray(float(np.asarray(prior.rate)), dtype))


def _relabel(slots, capacity):
    """Slot ids ``(n,)`` -> clusters ``0..k-1`` in slot order (:func:`compact_labels`)."""
    keep = jnp.zeros((capacity,), bool).at[slots].set(True)
    return compact_labels(slots, keep)[0]


class _GibbsKernel(MCMCKernel):
    """What the Gibbs kernels share: NumPyro's interface around a batched sweep."""

    sample_field = "z"
    #: ArviZ's ``from_numpyro`` reads ``mcmc.sampler.model``: there is no NumPyro program.
    model = None

    # -- per model ------------------------------------------------------------------
    def _init_chain(self, labels):  # pragma: no cover - abstract
        raise NotImplementedError

    def _sweep_chains(self, keys, chains):  # pragma: no cover - abstract
        """One sweep of every chain: ``(chains, info)``, the sweep's info per chain."""
        raise NotImplementedError

    def _info_sites(self, info) -> dict:
        """Sites recorded from a sweep's info (``info`` None: the initial state's values)."""
        return {}

    def _sites(self, chain) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _postprocess(self, z) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    _overflow_message = ""
    _check_overflow = False

    def _marked_sites(self, chain) -> dict:
        """:meth:`_sites`, with a draw after an overflow marked: ``n_clusters`` -1 and a
        NaN ``log_likelihood`` (the postprocessed ``labels`` all -1).

        The chain's ``overflow`` flag is sticky, so every later draw is marked too.  (A host
        callback raising inside the sweep was tried: it made JAX recompile every run and
        cost ~3 ms per sweep.)
        """
        z = self._sites(chain)
        if self._check_overflow:
            bad = chain.overflow
            z["n_clusters"] = jnp.where(bad, -1, z["n_clusters"]).astype(jnp.int32)
            z["log_likelihood"] = jnp.where(bad, jnp.nan, z["log_likelihood"])
        return z

    def _check_draws(self, n_clusters):
        """Raise the overflow error when a draw is marked (host)."""
        if np.any(np.asarray(n_clusters) < 0):
            raise RuntimeError(self._overflow_message)

    # -- NumPyro's interface --------------------------------------------------------
    def _no_model_args(self, model_args, model_kwargs):
        if (model_args and tuple(model_args) != ()) or model_kwargs:
            raise ValueError(f"{type(self).__name__} takes its data at construction: call "
                             "MCMC.run(rng_key) without model arguments")

    def _initial_labels(self, init_params, batch):
        """Initial slot labels, (n,) or (batch, n), from ``init_params`` or one cluster."""
        n = self._n
        if init_params is None:
            lab = jnp.zeros((n,), jnp.int32)
            return lab if batch is None else jnp.broadcast_to(lab, (batch, n))
        if isinstance(init_params, jax.core.Tracer):  # under a callable chain_method
            return init_params.astype(jnp.int32)
        rows = np.asarray(init_params)
        shape = (n,) if batch is None else (batch, n)
        if rows.shape != shape:
            raise ValueError(f"init_params (initial labels) must have shape {shape}, got "
                             f"{rows.shape}")
        rows = rows.reshape(-1, n)
        out = []
        for c, r in enumerate(rows):
            lab = V.check_labels(r, "init_params", n_samples=n)
            lab = np.unique(lab, return_inverse=True)[1].astype(np.int32).reshape(n)
            if lab.max() + 1 > self._capacity_clusters:
                raise ValueError(f"init_params[{c}] has {lab.max() + 1} clusters, more than "
                                 f"capacity={self._capacity_clusters}")
            out.append(lab)
        out = jnp.asarray(np.stack(out))
        return out[0] if batch is None else out

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        self._no_model_args(model_args, model_kwargs)
        batch = None if is_prng_key(rng_key) else rng_key.shape[0]
        labels = self._initial_labels(init_params, batch)
        if batch is None:
            chain = self._init_chain(labels)
            z = self._marked_sites(chain)
        else:
            chain = jax.vmap(self._init_chain)(labels)
            z = jax.vmap(self._marked_sites)(chain)
        extra = self._info_sites(None)
        if batch is not None:
            extra = {k: jnp.broadcast_to(v, (batch,) + v.shape) for k, v in extra.items()}
        return GibbsKernelState({**z, **extra}, chain, rng_key)

    def sample(self, state, model_args, model_kwargs):
        chain = state.chain
        batched = jax.tree.leaves(state.z["slots"])[0].ndim == 2
        if batched:
            keys = jax.vmap(jax.random.split)(state.rng_key)
            rng_key, sweep_keys = keys[:, 0], keys[:, 1]
            chain, info = self._sweep_chains(sweep_keys, chain)
            z = jax.vmap(self._marked_sites)(chain)
        else:
            rng_key, sweep_key = jax.random.split(state.rng_key)
            one = jax.tree.map(lambda a: jnp.asarray(a)[None], chain)
            chain, info = jax.tree.map(lambda a: a[0], self._sweep_chains(sweep_key[None], one))
            z = self._marked_sites(chain)
        return GibbsKernelState({**z, **self._info_sites(info)}, chain, rng_key)

    def postprocess_fn(self, model_args, model_kwargs):
        return self._postprocess

    def get_diagnostics_str(self, state):
        # Called on the host after every sweep when NumPyro shows one chain's progress bar.
        self._check_draws(state.z["n_clusters"])
        return f"{int(state.z['n_clusters'])} clusters"

    # -- bayesclust's Posterior -----------------------------------------------------
    def _posterior(self, samples):  # pragma: no cover - abstract
        raise NotImplementedError


class DPCollapsedGibbs(_GibbsKernel):
    r"""Collapsed Gibbs sampler of the DP Gaussian mixture as a NumPyro ``MCMCKernel``.

    The model: :math:`z \sim \mathrm{CRP}(\alpha)` and, per cluster, either Kulis &
    Jordan's (2012, §2.2) spherical components :math:`x_i \sim N(\mu_{z_i}, \sigma^2 I)`,
    :math:`\mu_c \sim N(0, \rho^2 I)` (``covariance_type="spherical"``), or
    per-cluster diagonal (Normal-Gamma) or full (Normal-inverse-Wishart) covariances
    (``"diag"`` / ``"full"``, the model of :func:`bayesclust.gibbs_dp_gaussian`).  The
    cluster parameters are integrated out (Neal 2000, Algorithm 3): in one sweep every
    point leaves its cluster and joins cluster ``c`` with probability

    .. math::

        p(z_i = c \mid z_{-i}, X) \propto n_{c,-i}\, p(x_i \mid X_{c,-i}), \qquad
        p(z_i = \text{new} \mid z_{-i}, X) \propto \alpha\, p(x_i),

    the posterior predictive :math:`N(x \mid m_c, (\sigma^2 + s_c^2) I)` (spherical) or a
    Student-t (Murphy 2007, §8-9); then (spherical) ``split_merge`` moves of Dahl (2003),
    and the hyper-parameters that have priors (Escobar & West's update of ``alpha``, the
    conjugate update of ``sigma2``).  One :meth:`sample` is one sweep of
    :func:`bayesclust.inference.mixtures.gibbs.sweep_chains` (spherical) or
    :func:`bayesclust.inference.mixtures.gibbs_gaussian.sweep_gaussian_chains`.

    Parameters
    ----------
    X : array_like, shape (n, d)
    covariance_type : {"spherical", "diag", "full"}
    alpha : float
        DP concentration (> 0); the initial value when ``alpha_prior`` is given.
    alpha_prior : numpyro.distributions.Gamma, optional
        Prior on ``alpha`` (shape, rate); ``alpha`` is then a sample site.
    sigma2, rho2 : float, optional
        ``"spherical"`` only: the within-cluster and the cluster means' prior
        **variances** (defaults 1 and 100, as :func:`bayesclust.gibbs_dp_gmm`).
    sigma2_prior : numpyro.distributions.InverseGamma, optional
        ``"spherical"`` only: prior on ``sigma2`` (shape, scale); a sample site then.
    prior : GaussianClusterPrior, optional
        ``"diag"`` / ``"full"`` only: the cluster prior (default
        :func:`bayesclust.default_gaussian_prior` of ``X``).
    split_merge : int, optional
        ``"spherical"`` only: split-merge moves per sweep (default
        ``DP_SAMPLER_DEFAULTS.split_merge``, 2).
    center : bool, optional
        ``"spherical"`` only: centre the data first (the means' prior is centred at 0;
        default True).
    capacity : int, optional
        Cluster slots per chain (default ``n``, which no partition can overflow).  A
        smaller buffer makes a sweep cheaper; the draws of a chain that needed more
        slots are marked (module docstring) and :func:`posterior_from_mcmc` raises a
        ``RuntimeError`` on them.

    Notes
    -----
    ``MCMC.run(rng_key, init_params=labels)`` starts from ``labels`` ((n,) for one chain,
    (num_chains, n) for several); default all points in one cluster (Kulis & Jordan
    2012, §6.2).  The sample sites are listed in the module docstring.

    References
    ----------
    R. M. Neal (2000), Algorithm 3.  B. Kulis and M. I. Jordan (2012), §2.2, §3.1.
    K. P. Murphy (2007), Conjugate Bayesian analysis of the Gaussian distribution, §8-9.
    D. B. Dahl (2003).  M. D. Escobar and M. West (1995), JASA 90, 577-588.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import MCMC
    >>> X = np.concatenate([np.random.default_rng(0).normal(c, 0.3, (10, 2)) for c in (-2, 2)])
    >>> mcmc = MCMC(DPCollapsedGibbs(X, sigma2=0.09), num_warmup=20, num_samples=50,
    ...             num_chains=2, chain_method="vectorized", progress_bar=False)
    >>> mcmc.run(jax.random.PRNGKey(0))
    >>> samples = mcmc.get_samples(group_by_chain=True)
    >>> samples["labels"].shape
    (2, 50, 20)
    >>> int(np.bincount(np.asarray(samples["n_clusters"]).ravel()).argmax())
    2
    """

    def __init__(self, X, *, covariance_type: str = "spherical", alpha: float = 1.0,
                 alpha_prior=None, sigma2: float | None = None, rho2: float | None = None,
                 sigma2_prior=None, prior=None, split_merge: int | None = None,
                 center: bool | None = None, capacity: int | None = None):
        types = ("spherical",) + COVARIANCE_TYPES
        if not isinstance(covariance_type, str) or covariance_type not in types:
            raise ValueError(f"covariance_type must be one of {types}, got {covariance_type!r}")
        spherical = covariance_type == "spherical"
        given = {"sigma2": sigma2, "rho2": rho2, "sigma2_prior": sigma2_prior,
                 "split_merge": split_merge, "center": center}
        for name, value in (given.items() if not spherical else ()):
            if value is not None:
                raise ValueError(f"{name} is an argument of covariance_type='spherical'")
        if spherical and prior is not None:
            raise ValueError("prior is an argument of covariance_type='diag' or 'full'")
        X = V.check_array(X, "X")
        n, d = X.shape
        self.covariance_type = covariance_type
        self._n = n
        log_alpha = float(np.log(V.check_positive(alpha, "alpha")))
        self._capacity_clusters = n if capacity is None else min(
            V.check_int(capacity, "capacity", minimum=1), n)
        K = self._capacity_clusters
        self._check_overflow = K < n
        self._overflow_message = (
            f"DPCollapsedGibbs: a chain needed more than capacity={K} clusters; pass a "
            f"larger capacity (at most n = {n}, which cannot overflow)")
        if spherical:
            V.check_squares_representable(X, "X")
            sigma2 = V.check_positive(1.0 if sigma2 is None else sigma2, "sigma2")
            rho2 = V.check_positive(100.0 if rho2 is None else rho2, "rho2")
            split_merge = V.check_int(DP_SAMPLER_DEFAULTS.split_merge if split_merge is None
                                      else split_merge, "split_merge", minimum=0)
            center = True if center is None else center
            if not isinstance(center, (bool, np.bool_)):
                raise TypeError(f"center must be a bool, got {type(center).__name__}")
            self._offset = X.mean(0) if center else np.zeros(d, X.dtype)
            self._X = jnp.asarray(X - self._offset)
            dtype = self._X.dtype
            self._rho2 = jnp.asarray(rho2, dtype)
            self._sigma2, self._split_merge = sigma2, split_merge
            self._sigma2_prior = _prior_arrays(sigma2_prior, "sigma2_prior", "inverse_gamma", dtype)
        else:
            full = covariance_type == "full"
            prior = check_gaussian_prior(
                default_gaussian_prior(X, covariance_type) if prior is None else prior,
                d, covariance_type)
            Z, kappa0, nu0, self._logdet0 = whitened_problem(X, prior, covariance_type)
            V.check_squares_representable(Z, "X (whitened by the prior)",
                                          dtype=V.working_dtype(X.dtype))
            self._X = jnp.asarray(Z, V.working_dtype(X.dtype))
            dtype = self._X.dtype
            self._kappa0, self._nu0 = jnp.asarray(kappa0, dtype), jnp.asarray(nu0, dtype)
            self._full = full
            self.prior = prior
        self._log_alpha = log_alpha
        self._alpha_prior = _prior_arrays(alpha_prior, "alpha_prior", "gamma", dtype)

    # -- the model's pieces ---------------------------------------------------------
    @property
    def _spherical(self):
        return self.covariance_type == "spherical"

    def _init_chain(self, labels):
        K = self._capacity_clusters
        if self._spherical:
            return init_state(self._X, labels, K, self._log_alpha, self._sigma2)
        return init_gaussian_state(self._X, labels, K, self._log_alpha, self._kappa0,
                                   full=self._full)

    def _sweep_chains(self, keys, chains):
        if self._spherical:
            return sweep_chains(keys, self._X, chains, rho2=self._rho2, collapsed=True,
                                alpha_prior=self._alpha_prior, sigma2_prior=self._sigma2_prior,
                                split_merge=self._split_merge)
        return sweep_gaussian_chains(keys, self._X, chains, self._kappa0, self._nu0,
                                     self._alpha_prior, full=self._full)

    def _moves(self) -> int:
        """Split-merge moves per sweep (0 when the sweep has none)."""
        return self._split_merge if self._spherical and self._n >= 2 else 0

    def _info_sites(self, info):
        if not self._moves():
            return {}
        accepted = jnp.zeros((), jnp.int32) if info is None else info.split_merge_accepted
        return {"split_merge_accepted": accepted}

    def _sites(self, chain):
        z = {"slots": chain.labels, "n_clusters": jnp.sum(chain.counts > 0, dtype=jnp.int32)}
        if self._spherical:
            z["log_likelihood"] = log_likelihood(self._X, chain, self._rho2, True)
            if self._sigma2_prior is not None:
                z["sigma2"] = chain.sigma2
        else:
            d = self._X.shape[1]
            stat = chain.logdet if self._full else chain.factor
            # The whitened density times the Jacobian |S0|^(-1/2) per point: log p(X | z).
            z["log_likelihood"] = (log_marginal_whitened(chain.counts, stat, self._kappa0,
                                                         self._nu0, d, self._full)
                                   - 0.5 * self._n * self._logdet0)
        if self._alpha_prior is not None:
            z["alpha"] = jnp.exp(chain.log_alpha)
        return z

    def _postprocess(self, z):
        out = {k: v for k, v in z.items() if k != "slots"}
        out["labels"] = jnp.where(z["n_clusters"] < 0, -1,
                                  _relabel(z["slots"], self._capacity_clusters))
        return out

    def _kernels(self) -> str:
        if not self._spherical:
            return "xla"
        platforms = {dev.platform for dev in self._X.devices()}
        return ("native" if self._X.dtype in (jnp.float32, jnp.float64) and len(platforms) == 1
                and _native.used_on(platforms.pop()) else "xla")

    def _posterior(self, samples):
        from .posterior import Posterior

        labels = np.asarray(samples["labels"], np.int32)
        shape = labels.shape[:2]
        alpha = samples.get("alpha", np.full(shape, np.exp(self._log_alpha)))
        params = {"alpha": np.asarray(alpha)}
        if self._spherical:
            params["sigma2"] = np.asarray(samples.get("sigma2", np.full(shape, self._sigma2)))
            sampler = "gibbs-collapsed" + ("+split-merge" if self._split_merge else "")
            model = "dp_gmm"
        else:
            sampler = f"gibbs-collapsed-{self.covariance_type}"
            model = f"dp_gaussian_{self.covariance_type}"
        sample_stats = {"n_clusters": np.asarray(samples["n_clusters"])}
        if self._moves():
            # The fraction of each sweep's split-merge moves accepted (its mean over a
            # chain's draws: the chain's acceptance rate).
            sample_stats["split_merge_acceptance"] = (
                np.asarray(samples["split_merge_accepted"]) / self._moves())
        return Posterior(labels, log_likelihood=np.asarray(samples["log_likelihood"]),
                         params=params, sample_stats=sample_stats,
                         sampler=sampler, model=model, kernels=self._kernels())


class HDPGibbs(_GibbsKernel):
    r"""Gibbs sampler of the HDP Gaussian mixture (Chinese restaurant franchise) as an ``MCMCKernel``.

    The model of :func:`bayesclust.gibbs_hdp_gmm` (Teh et al. 2006; Kulis & Jordan 2012,
    §4): dishes :math:`\mu_p \sim N(0, \rho^2 I)`, tables of each data set by
    CRP(:math:`\alpha`), dishes of all tables by CRP(:math:`\gamma`),
    :math:`x_{ji} \sim N(\mu_{v_{j t_{ji}}}, \sigma^2 I)`.  One :meth:`sample` is one
    :func:`bayesclust.inference.mixtures.hdp_gibbs.hdp_sweep`: every point chooses a table
    (Teh et al. 2006, eqs. 31-32),

    .. math::

        p(t_{ji} = t) \propto n_{jt}\, N(x_{ji} \mid \mu_{v_{jt}}, \sigma^2 I), \quad
        p(t_{ji} = \text{new}, v = p) \propto \alpha \tfrac{m_p}{m + \gamma} N(x_{ji} \mid
        \mu_p, \sigma^2 I), \quad
        p(\text{new}, \text{new}) \propto \alpha \tfrac{\gamma}{m + \gamma}
        N(x_{ji} \mid 0, (\rho^2 + \sigma^2) I),

    every table chooses a dish, the dish means are redrawn from their Gaussian
    posteriors, then the hyper-parameters that have priors.  Unlike
    :class:`DPCollapsedGibbs` the dish means are instantiated (Neal's Algorithm 2 at both
    levels, as Kulis & Jordan write it), hence the name without "collapsed".

    Parameters
    ----------
    groups : list of array_like, shape (n_j, d) each; or array_like, shape (n, d)
        The data sets; with ``group_ids``, one array whose rows are split by it.
    group_ids : array_like of int, shape (n,), optional
    alpha, gamma : float
        Local and global concentrations (> 0); initial values when their priors are given.
    sigma2, rho2 : float
        Component and dish-mean prior **variances** (> 0).
    alpha_prior, gamma_prior : numpyro.distributions.Gamma, optional
    sigma2_prior : numpyro.distributions.InverseGamma, optional
    center : bool
        Centre the pooled data first.
    capacity : (int, int), optional
        ``(tables per data set, dishes)``; default ``(max n_j, n)``, which no
        configuration can overflow.  Smaller buffers are cheaper; the draws of a chain
        that needed more are marked as :class:`DPCollapsedGibbs`'s.

    Notes
    -----
    Sites: ``labels`` (n,) (the global cluster of every point, in input row order,
    numbered ``0..k-1``), ``local_labels`` (n,) (table slot inside its data set),
    ``n_clusters``, ``n_local``, ``log_likelihood`` (``log p(X | tables, dishes, mu,
    sigma2)``) and the hyper-parameters that have priors.  Every chain starts as Kulis &
    Jordan do: one table per data set, all serving one dish (``init_params`` is not
    taken).

    References
    ----------
    Y. W. Teh, M. I. Jordan, M. J. Beal and D. M. Blei (2006), §5.1 and Appendix A.
    B. Kulis and M. I. Jordan (2012), §4.  R. M. Neal (2000), Algorithm 2.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import MCMC
    >>> rng = np.random.default_rng(0)
    >>> a = np.concatenate([rng.normal(-2, 0.2, (6, 2)), rng.normal(2, 0.2, (6, 2))])
    >>> b = rng.normal(2, 0.2, (6, 2))
    >>> mcmc = MCMC(HDPGibbs([a, b], sigma2=0.04), num_warmup=20, num_samples=30,
    ...             progress_bar=False)
    >>> mcmc.run(jax.random.PRNGKey(0))
    >>> mcmc.get_samples()["labels"].shape
    (30, 18)
    """

    def __init__(self, groups, *, group_ids=None, alpha: float = 1.0, gamma: float = 1.0,
                 sigma2: float = 1.0, rho2: float = 100.0, alpha_prior=None, gamma_prior=None,
                 sigma2_prior=None, center: bool = True, capacity=None):
        X, gid, order, group_order = V.check_groups(groups, group_ids)
        V.check_squares_representable(X, "groups")
        self._log_alpha = float(np.log(V.check_positive(alpha, "alpha")))
        self._log_gamma = float(np.log(V.check_positive(gamma, "gamma")))
        self._sigma2 = V.check_positive(sigma2, "sigma2")
        rho2 = V.check_positive(rho2, "rho2")
        if not isinstance(center, (bool, np.bool_)):
            raise TypeError(f"center must be a bool, got {type(center).__name__}")
        n, d = X.shape
        self._n = n
        self._D = len(group_order)
        sizes = np.bincount(gid, minlength=self._D)
        safe = (int(sizes.max()), n)
        if capacity is None:
            L, P = safe
        else:
            if not isinstance(capacity, (tuple, list)) or len(capacity) != 2:
                raise ValueError(f"capacity must be a pair (tables per data set, dishes), got "
                                 f"{capacity!r}")
            L = min(V.check_int(capacity[0], "capacity[0]", minimum=1), safe[0])
            P = min(V.check_int(capacity[1], "capacity[1]", minimum=1), safe[1])
        self._L, self._P = L, P
        self._capacity_clusters = P
        self._check_overflow = (L, P) != safe
        self._overflow_message = (
            f"HDPGibbs: a chain needed more than capacity=({L}, {P}) tables per data set / "
            f"dishes; pass a larger capacity (at most {safe}, which cannot overflow)")
        self._offset = X.mean(0) if center else np.zeros(d, X.dtype)
        self._X = jnp.asarray(X - self._offset)
        dtype = self._X.dtype
        self._gid = jnp.asarray(gid, jnp.int32)
        self._rho2 = jnp.asarray(rho2, dtype)
        self._priors = {
            "alpha": _prior_arrays(alpha_prior, "alpha_prior", "gamma", dtype),
            "gamma": _prior_arrays(gamma_prior, "gamma_prior", "gamma", dtype),
            "sigma2": _prior_arrays(sigma2_prior, "sigma2_prior", "inverse_gamma", dtype),
        }
        back = np.empty(n, np.int64)
        back[order] = np.arange(n)  # stacked row of every input row
        self._back = jnp.asarray(back, jnp.int32)
        self._group_ids = gid[back]
        self.group_order = group_order

    def _initial_labels(self, init_params, batch):
        if init_params is not None:
            raise ValueError("HDPGibbs starts every chain from one table per data set serving "
                             "one dish: init_params is not taken")
        return super()._initial_labels(None, batch)

    def _init_chain(self, labels):
        # labels (all zero): every point at table 0 of its data set, every table on dish 0.
        return init_hdp_state(self._X, self._gid, labels, jnp.zeros((self._D, self._L), jnp.int32),
                              self._L, self._P, log_alpha=self._log_alpha,
                              log_gamma=self._log_gamma, sigma2=self._sigma2)

    def _sweep_chains(self, keys, chains):
        def one(key, s):
            return hdp_sweep(key, self._X, self._gid, s, rho2=self._rho2, n_groups=self._D,
                             alpha_prior=self._priors["alpha"], gamma_prior=self._priors["gamma"],
                             sigma2_prior=self._priors["sigma2"])

        return jax.vmap(one)(keys, chains)

    def _sites(self, chain):
        z = {"slots": chain.dishes(self._gid), "tables": chain.tables,
             "n_clusters": jnp.sum(chain.dish_tables > 0, dtype=jnp.int32),
             "n_local": jnp.sum(chain.table_counts > 0, dtype=jnp.int32),
             "log_likelihood": hdp_log_likelihood(self._X, self._gid, chain)}
        if self._priors["alpha"] is not None:
            z["alpha"] = jnp.exp(chain.log_alpha)
        if self._priors["gamma"] is not None:
            z["gamma"] = jnp.exp(chain.log_gamma)
        if self._priors["sigma2"] is not None:
            z["sigma2"] = chain.sigma2
        return z

    def _postprocess(self, z):
        out = {k: v for k, v in z.items() if k not in ("slots", "tables")}
        bad = z["n_clusters"] < 0
        out["labels"] = jnp.where(bad, -1, _relabel(z["slots"], self._P)[self._back])
        out["local_labels"] = jnp.where(bad, -1, z["tables"][self._back])
        return out

    def _posterior(self, samples):
        from .posterior import Posterior

        labels = np.asarray(samples["labels"], np.int32)
        shape = labels.shape[:2]
        params = {"local_labels": np.asarray(samples["local_labels"])}
        for name, log_value in (("alpha", self._log_alpha), ("gamma", self._log_gamma),
                                ("sigma2", np.log(self._sigma2))):
            params[name] = np.asarray(samples.get(name, np.full(shape, np.exp(log_value))))
        return Posterior(labels, log_likelihood=np.asarray(samples["log_likelihood"]),
                         params=params,
                         sample_stats={"n_clusters": np.asarray(samples["n_clusters"]),
                                       "n_local": np.asarray(samples["n_local"])},
                         sampler="gibbs-hdp-crf", model="hdp_gmm", kernels="xla",
                         group_ids=self._group_ids, group_order=self.group_order)


def posterior_from_mcmc(mcmc):
    """bayesclust's :class:`~bayesclust.Posterior` of a ``numpyro.infer.MCMC`` run of a Gibbs kernel.

    Parameters
    ----------
    mcmc : numpyro.infer.MCMC
        Run (``mcmc.run``) with a :class:`DPCollapsedGibbs` or :class:`HDPGibbs` kernel
        and the kernel's own ``postprocess_fn`` (the default).

    Returns
    -------
    Posterior
        Label draws (chains, draws, n) and the sites as :func:`bayesclust.gibbs_dp_gmm`,
        :func:`bayesclust.gibbs_dp_gaussian` or :func:`bayesclust.gibbs_hdp_gmm` return them
        (a fixed ``alpha`` or ``sigma2`` repeated per draw; no ``means``: the kernels
        integrate them out or keep them in slots).  A
        :class:`bayesclust.ConvergenceWarning` is issued as by those drivers.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from numpyro.infer import MCMC
    >>> X = np.concatenate([np.random.default_rng(0).normal(c, 0.3, (10, 2)) for c in (-2, 2)])
    >>> mcmc = MCMC(DPCollapsedGibbs(X, sigma2=0.09), num_warmup=20, num_samples=50,
    ...             progress_bar=False)
    >>> mcmc.run(jax.random.PRNGKey(0))
    >>> post = posterior_from_mcmc(mcmc)
    >>> post.labels.shape
    (1, 50, 20)
    """
    kernel = getattr(mcmc, "sampler", None)
    if not isinstance(kernel, _GibbsKernel):
        raise TypeError("mcmc must be a numpyro.infer.MCMC run with DPCollapsedGibbs or "
                        f"HDPGibbs, got a sampler of type {type(kernel).__name__}")
    if getattr(mcmc, "_states", None) is None:
        raise ValueError("mcmc has no draws: call mcmc.run(rng_key) first")
    samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    if "labels" not in samples:
        raise ValueError("mcmc's samples have no 'labels': run it with the kernel's own "
                         "postprocess_fn and without excluding the site")
    kernel._check_draws(samples["n_clusters"])
    post = kernel._posterior(samples)
    warn_if_not_converged(post)
    return post
