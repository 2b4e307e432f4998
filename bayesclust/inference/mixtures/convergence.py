"""The samplers' default run lengths, and the warning when a run has not converged.

The Gibbs samplers of the DP and HDP mixtures, their scikit-learn estimators and the
``bayesclust compare`` jobs all read their defaults from :data:`DP_SAMPLER_DEFAULTS` and
:data:`HDP_SAMPLER_DEFAULTS`, so that the function, the estimator and the command line
draw the same posterior.  After sampling, :func:`warn_if_not_converged` checks the
rank-normalised R-hat and bulk effective sample size (Vehtari et al. 2021) of the number
of clusters and of the log-likelihood and issues a :class:`ConvergenceWarning` that names
the values and what to raise.

References
----------
A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and P.-C. Buerkner (2021),
Rank-normalization, folding, and localization: an improved R-hat for assessing
convergence of MCMC, Bayesian Analysis 16(2), 667-718, §4 (the thresholds).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

__all__ = [
    "ConvergenceWarning",
    "SamplerDefaults",
    "DP_SAMPLER_DEFAULTS",
    "HDP_SAMPLER_DEFAULTS",
    "RHAT_MAX",
    "ESS_BULK_MIN",
    "convergence_problems",
    "warn_if_not_converged",
]


class ConvergenceWarning(UserWarning):
    """A sampler's draws fail the R-hat / effective-sample-size check.

    Issued after sampling when the rank-normalised R-hat of the number of clusters or
    of the log-likelihood exceeds :data:`RHAT_MAX` or its bulk ESS is below
    :data:`ESS_BULK_MIN`.  Silence it with ``warnings.filterwarnings("ignore",
    category=bayesclust.ConvergenceWarning)``.
    """


class SamplerDefaults(NamedTuple):
    """Default settings of a Gibbs sampler.

    Attributes
    ----------
    num_warmup : int
        Sweeps discarded.
    num_samples : int
        Draws kept per chain.
    thin : int
        Sweeps per kept draw.
    num_chains : int
        Independent chains.
    collapsed : bool
        Means integrated out (DP sampler only; the HDP sampler's are instantiated).
    split_merge : int
        Split-merge moves per sweep.
    """

    num_warmup: int
    num_samples: int
    thin: int
    num_chains: int
    collapsed: bool
    split_merge: int


#: Defaults of :func:`bayesclust.gibbs_dp_gmm`, :class:`bayesclust.DPGaussianMixture` and
#: ``bayesclust compare --model dp``.  The collapsed sampler with two split-merge moves per
#: sweep mixes ``k`` far better than single-site moves alone (on the 300 points of
#: ``datasets.three_gaussians`` at ``sigma2 = 0.4`` the bulk ESS of ``k`` per 1000 sweeps of
#: 8 chains is ~360 with two moves, ~250 with one, ~190 with none); 8 chains fill one AVX
#: register of the native kernel, so they cost about as much as one; 4500 sweeps per
#: chain, every 4th kept, give R-hat of ``k`` <= 1.005 and bulk ESS ~1600 there
#: (its time: BENCHMARKS.md), while keeping 8000 label draws.
DP_SAMPLER_DEFAULTS = SamplerDefaults(
    num_warmup=500, num_samples=1000, thin=4, num_chains=8, collapsed=True, split_merge=2
)

#: Defaults of :func:`bayesclust.gibbs_hdp_gmm`, :class:`bayesclust.HDPGaussianMixture` and
#: ``bayesclust compare --model hdp`` (the CRF sampler instantiates the dish means:
#: ``collapsed`` is False).  One split-merge move of a table and its dish per sweep
#: (:func:`~bayesclust.inference.mixtures.hdp_gibbs.split_merge_move`): on iris (one data
#: set, the data-scaled prior of :class:`~bayesclust.HDPGaussianMixture`), 8 chains x 1000
#: draws after 500 warm-up sweeps have bulk ESS of ``k`` 198 and R-hat 1.026 with it, 47
#: and 1.081 without.  On a CPU a sweep's point, table and split-merge moves run in the
#: native kernel (``_native/hdp.cc``, the chains shared out to XLA's threads), elsewhere in
#: XLA scans, several times slower (BENCHMARKS.md, the CRF sampler's first fit).  1000
#: sweeps per chain were not enough: on ``datasets.hdp_groups`` R-hat of ``k`` 1.010 (a
#: warning), on standardised wine in 3 data sets (21 clusters) 1.23 and 1.49 for the
#: log-likelihood; 5000 sweeps (1000 warm-up, 500 draws at thin 8) leave 1.005 on
#: ``hdp_groups`` (``compare --model hdp``) and 1.03 / 1.04 on wine, where the
#: :class:`ConvergenceWarning` may still say that more are needed.
HDP_SAMPLER_DEFAULTS = SamplerDefaults(
    num_warmup=1000, num_samples=500, thin=8, num_chains=8, collapsed=False, split_merge=1
)

#: R-hat above this fails the check (Vehtari et al. 2021, §4).
RHAT_MAX = 1.01
#: Bulk ESS below this fails the check (Vehtari et al. 2021 ask for 100 per quantity).
ESS_BULK_MIN = 100.0

_NAMES = {"n_clusters": "the number of clusters k", "log_likelihood": "the log-likelihood"}


def _one_chain_split_rhat(x: np.ndarray) -> float:
    """Rank-normalised R-hat of one chain: its halves are compared as two chains (each
    split again, as ArviZ splits every chain), since ArviZ's R-hat of a single chain is
    NaN."""
    from .posterior import rank_diagnostics

    half = x.shape[1] // 2
    return rank_diagnostics(np.stack([x[0, :half], x[0, half : 2 * half]]))[0]["rhat"]


def convergence_problems(post) -> list[str]:
    """The failed checks of a posterior's draws, one sentence each (empty: none failed).

    Parameters
    ----------
    post : Posterior

    Returns
    -------
    list of str
        For the number of clusters and the log-likelihood (when the posterior has one):
        ``R-hat > RHAT_MAX`` and ``bulk ESS < ESS_BULK_MIN``.  A quantity constant over
        all draws (e.g. every draw has the same ``k``) is not checked, and neither is any
        statistic that is undefined (fewer than 4 draws per chain); chains that are each
        constant at different values (R-hat infinite) fail.
    """
    diag = post.diagnostics()
    problems = []
    for name in ("n_clusters", "log_likelihood"):
        if name not in diag:
            continue
        x = np.asarray(post.n_clusters if name == "n_clusters" else post.log_likelihood,
                       dtype=np.float64)
        if np.ptp(x) < np.finfo(float).resolution:
            continue
        rhat, ess = diag[name]["rhat"], diag[name]["ess_bulk"]
        one_chain = x.shape[0] == 1
        if one_chain and x.shape[1] >= 8:
            rhat = _one_chain_split_rhat(x)
        label = "split R-hat (one chain)" if one_chain else "R-hat"
        stuck = not one_chain and np.all(np.ptp(x, axis=1) < np.finfo(float).resolution)
        if stuck:  # every chain constant, not all at one value: R-hat is infinite
            problems.append(f"every chain is stuck at one value of {_NAMES[name]}, "
                            "and the chains disagree")
        elif np.isfinite(rhat) and rhat > RHAT_MAX:
            problems.append(f"{label} of {_NAMES[name]} is {rhat:.3f} > {RHAT_MAX}")
        if np.isfinite(ess) and ess < ESS_BULK_MIN:
            problems.append(f"bulk ESS of {_NAMES[name]} is {ess:.0f} < {ESS_BULK_MIN:.0f}")
    return problems


def warn_if_not_converged(post, stacklevel: int = 3) -> bool:
    """Issue a :class:`ConvergenceWarning` when ``post`` fails :func:`convergence_problems`.

    Parameters
    ----------
    post : Posterior
    stacklevel : int
        Passed to :func:`warnings.warn` (3: the caller of the sampler that calls this).

    Returns
    -------
    bool
        Whether a warning was issued.
    """
    problems = convergence_problems(post)
    if not problems:
        return False
    warnings.warn(
        f"the sampler may not have converged ({post.n_chains} chain(s) x {post.n_draws} "
        f"draws): {'; '.join(problems)}. Raise num_samples (or thin) for more effective "
        f"draws, num_chains (8 chains cost about as much as one on a CPU) for a sharper "
        f"R-hat, num_warmup if the chains start far from the posterior"
        + ("" if "split-merge" in post.sampler or post.model != "dp_gmm"
           else ", or use collapsed=True, split_merge=2")
        + ".",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )
    return True
