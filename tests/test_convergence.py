"""The samplers' shared defaults and their ConvergenceWarning."""

import inspect
import warnings

import numpy as np
import pytest

import bayesclust
from bayesclust import ConvergenceWarning, datasets, gibbs_dp_gmm
from bayesclust.inference.mixtures.convergence import (
    DP_SAMPLER_DEFAULTS,
    HDP_SAMPLER_DEFAULTS,
    convergence_problems,
)
from bayesclust.inference.mixtures.posterior import Posterior


def _k_draws(k: np.ndarray, n: int = 12) -> np.ndarray:
    """Label draws (chains, draws, n) whose numbers of clusters are ``k``."""
    return (np.arange(n)[None, None, :] % k[..., None]).astype(np.int32)


def test_short_run_warns_and_names_what_to_raise():
    X, _ = datasets.three_gaussians(rng_key=0)
    with pytest.warns(ConvergenceWarning) as record:
        gibbs_dp_gmm(0, X, sigma2=0.4, collapsed=False, num_warmup=100, num_samples=100,
                     num_chains=2, progress_bar=False)
    message = str(record[0].message)
    assert "R-hat of the number of clusters k" in message
    assert "bulk ESS" in message
    for knob in ("num_samples", "num_chains", "num_warmup"):
        assert knob in message


@pytest.mark.slow
def test_default_run_on_three_gaussians_converges():
    X, _ = datasets.three_gaussians(rng_key=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        post = gibbs_dp_gmm(0, X, sigma2=0.4, progress_bar=False)
    diag = post.diagnostics()["n_clusters"]
    assert diag["rhat"] <= 1.01
    assert diag["ess_bulk"] >= 400
    assert post.labels.shape == (DP_SAMPLER_DEFAULTS.num_chains, DP_SAMPLER_DEFAULTS.num_samples,
                                 X.shape[0])


def test_one_chain_uses_split_rhat_of_its_halves():
    az = pytest.importorskip("arviz")
    # One chain of 40 draws: k = 2 in the first half, 3 in the second -- ArviZ's R-hat of a
    # single chain is NaN, the split halves show the drift.
    k = np.repeat([2, 3], 20)[None, :]
    k[0, ::7] = 4  # not constant within the halves
    post = Posterior(_k_draws(k))
    assert np.isnan(post.diagnostics()["n_clusters"]["rhat"])
    problems = convergence_problems(post)
    halves = k.reshape(2, 20).astype(float)
    expected = float(az.rhat(halves, method="rank"))
    assert expected > 1.01
    assert any(f"split R-hat (one chain) of the number of clusters k is {expected:.3f}" in p
               for p in problems), problems


def test_well_mixed_and_constant_draws_pass():
    rng = np.random.default_rng(0)
    mixed = Posterior(_k_draws(rng.integers(2, 5, (4, 500))))
    assert convergence_problems(mixed) == []
    constant = Posterior(_k_draws(np.full((2, 20), 3)))  # too few draws, but k never moves
    assert convergence_problems(constant) == []


def test_too_few_effective_draws_is_a_problem():
    k = np.repeat([2, 3, 2, 3], 50)[None, :].repeat(2, axis=0)  # long excursions, two chains alike
    problems = convergence_problems(Posterior(_k_draws(k)))
    assert any(p.startswith("bulk ESS of the number of clusters k") for p in problems), problems


def test_log_likelihood_is_checked():
    rng = np.random.default_rng(1)
    k = np.full((2, 200), 3)
    ll = np.stack([np.linspace(0, 5, 200), np.linspace(5, 10, 200)]) + rng.normal(0, 0.1, (2, 200))
    problems = convergence_problems(Posterior(_k_draws(k), log_likelihood=ll))
    assert any("R-hat of the log-likelihood" in p for p in problems), problems


def test_defaults_are_shared_by_function_estimator_and_cli():
    from bayesclust.estimators import DPGaussianMixture, HDPGaussianMixture
    from bayesclust.jobs import DP_JOB_THIN, HDP_JOB_THIN
    from bayesclust.jobs.dp import run_compare_dp
    from bayesclust.jobs.hdp import run_compare_hdp

    names = ("num_warmup", "num_samples", "thin", "num_chains")
    for defaults, function, estimator, job, job_thin in (
        (DP_SAMPLER_DEFAULTS, bayesclust.gibbs_dp_gmm, DPGaussianMixture, run_compare_dp, DP_JOB_THIN),
        (HDP_SAMPLER_DEFAULTS, bayesclust.gibbs_hdp_gmm, HDPGaussianMixture, run_compare_hdp, HDP_JOB_THIN),
    ):
        fn = inspect.signature(function).parameters
        est = estimator().get_params()
        jb = inspect.signature(job).parameters
        for name in names:
            want = getattr(defaults, name)
            assert fn[name].default == want, (function.__name__, name)
            assert est[name] == want, (estimator.__name__, name)
            # The compare jobs thin more (bayesclust.jobs.DP_JOB_THIN: their default commands
            # converge on Iris and hdp-groups); the rest is the sampler's.
            assert jb[name].default == (job_thin if name == "thin" else want), (job.__name__, name)
    assert DPGaussianMixture().get_params()["sampler"] == "collapsed"
    assert DP_SAMPLER_DEFAULTS.collapsed and DP_SAMPLER_DEFAULTS.split_merge > 0


def test_default_sampler_is_collapsed_with_split_merge_and_blocked_keeps_working():
    X = np.concatenate([np.random.default_rng(0).normal(c, 0.3, (10, 2)) for c in (-2, 2)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        post = gibbs_dp_gmm(0, X, sigma2=0.09, num_warmup=4, num_samples=4, progress_bar=False)
        assert post.sampler == "gibbs-collapsed+split-merge"
        assert gibbs_dp_gmm(0, X, sigma2=0.09, collapsed=False, num_warmup=4, num_samples=4,
                            progress_bar=False).sampler == "gibbs-kj-alg2"
        blocked = gibbs_dp_gmm(0, X, sigma2=0.09, scheme="blocked", num_warmup=4,
                               num_samples=4, progress_bar=False)
    assert blocked.sampler == "gibbs-blocked"


def test_chains_stuck_at_different_values_fail_without_numpy_warnings():
    # Each chain constant, the chains at k = 2, 3, 3: no within-chain variance, so R-hat is
    # infinite (ArviZ divides by zero) -- the worst case, not one to pass silently.
    k = np.repeat(np.array([2, 3, 3])[:, None], 40, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from the diagnostics
        problems = convergence_problems(Posterior(_k_draws(k)))
    assert any("every chain is stuck" in p and "number of clusters" in p for p in problems), problems
