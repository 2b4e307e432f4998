"""The Gibbs samplers as NumPyro MCMCKernels: exact enumeration, NumPyro's and ArviZ's API, bad input."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from numpyro.infer import MCMC

from bayesclust import _native
from bayesclust.inference.mixtures.convergence import DP_SAMPLER_DEFAULTS
from bayesclust.inference.mixtures.gibbs_gaussian import GaussianClusterPrior, gaussian_log_marginal
from bayesclust.inference.mixtures.mcmc_kernels import DPCollapsedGibbs, HDPGibbs, posterior_from_mcmc
from bayesclust.inference.mixtures.posterior import Posterior

from ._reference import canonical, hdp_crf_exact
from .test_gibbs import _HYPER5, _X5, _crp_exact, _tv_to
from .test_gibbs_gaussian import CASES, _exact_posterior
from .test_hdp_gibbs import _GROUPS5
from .test_hdp_gibbs import _HYPER5 as _HDP_HYPER5


def _run(kernel, num_warmup=20, num_samples=50, num_chains=2, chain_method="vectorized",
         seed=0, **kwargs):
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                chain_method=chain_method, progress_bar=kwargs.pop("progress_bar", False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "parallel" falling back to "sequential"
        mcmc.run(jax.random.PRNGKey(seed), **kwargs)
    return mcmc


_TWO = np.concatenate([np.random.default_rng(0).normal(c, 0.3, (10, 2)) for c in (-2, 2)])


# --- the same stationary distribution as the package's drivers: exact enumeration ----------


def test_spherical_kernel_matches_enumeration(x64):
    """n = 5, 52 partitions: MCMC(DPCollapsedGibbs) draws match the exact CRP posterior
    (the reference of test_gibbs.py), single-site moves plus two split-merge moves."""
    exact = _crp_exact(_X5, **_HYPER5)
    mcmc = _run(DPCollapsedGibbs(_X5, center=False, **_HYPER5), num_warmup=100,
                num_samples=5000, num_chains=4)
    tv, worst = _tv_to(exact, np.asarray(mcmc.get_samples()["labels"]))
    # 20,000 correlated draws: the Monte Carlo error of a probability is below ~0.01.
    assert tv < 0.04, tv
    assert worst < 0.02, worst


@pytest.mark.parametrize("case", ["full-d2", "diag-d2",
                                  pytest.param("full-d1", marks=pytest.mark.long)])
def test_gaussian_kernel_matches_enumeration(case):
    """diag / full covariances: the partition frequencies match the exact posterior of
    test_gibbs_gaussian.py, and the log_likelihood site is log p(X | z) of the textbook
    formula (gaussian_log_marginal)."""
    cov, X = CASES[case]
    d = X.shape[1]
    S0 = np.eye(d) * 0.5 if d == 1 else np.array([[0.5, 0.1], [0.1, 0.3]])
    prior = GaussianClusterPrior(np.full(d, 0.8), 0.5, d + 1.0, S0)
    parts, exact = _exact_posterior(X, prior, 1.3, cov)
    mcmc = _run(DPCollapsedGibbs(X, covariance_type=cov, alpha=1.3, prior=prior),
                num_warmup=50, num_samples=5000, num_chains=4, seed=1)
    samples = mcmc.get_samples()
    tv, worst = _tv_to(dict(zip(parts, exact)), np.asarray(samples["labels"]))
    assert exact.max() < 0.5  # a spread posterior, so the comparison has teeth
    assert tv < 0.04, tv
    assert worst < 0.02, worst
    for i in (0, -1):
        lab = np.asarray(samples["labels"][i])
        ref = gaussian_log_marginal(X, lab, covariance_type=cov, prior=prior)
        assert float(samples["log_likelihood"][i]) == pytest.approx(ref, rel=1e-4, abs=1e-3)


def test_hdp_kernel_matches_enumeration(x64):
    """Two data sets of 3 + 2 points: global (52) and local (10) partitions match the exact
    CRF posterior of _reference.hdp_crf_exact."""
    exact_global, exact_local = hdp_crf_exact(_GROUPS5, **_HDP_HYPER5)
    mcmc = _run(HDPGibbs(_GROUPS5, center=False, **_HDP_HYPER5), num_warmup=100,
                num_samples=5000, num_chains=4, seed=1)
    samples = mcmc.get_samples()
    emp = {"global": np.asarray(samples["labels"]), "local": np.asarray(samples["local_labels"])}
    for exact, keys in ((exact_global, [canonical(r) for r in emp["global"]]),
                        (exact_local, [(canonical(r[:3]), canonical(r[3:])) for r in emp["local"]])):
        counts = {}
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
        assert set(counts) <= set(exact)
        gaps = [abs(counts.get(k, 0) / len(keys) - p) for k, p in exact.items()]
        assert 0.5 * sum(gaps) < 0.04, 0.5 * sum(gaps)
        assert max(gaps) < 0.02, max(gaps)


# --- NumPyro's and ArviZ's API -------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # a chain with constant k
# "full": the same sites and summary from the full-covariance kernel, whose draws the
# enumeration test above already checks (a compile of its own: `make test-all`).
@pytest.mark.parametrize("cov", ["spherical", pytest.param("full", marks=pytest.mark.long)])
def test_shapes_summary_and_arviz(cov, capsys):
    kw = {"sigma2": 0.09} if cov == "spherical" else {}
    mcmc = _run(DPCollapsedGibbs(_TWO, covariance_type=cov, alpha_prior=dist.Gamma(1.0, 1.0), **kw),
                num_samples=40, num_chains=3)
    s = mcmc.get_samples(group_by_chain=True)
    # The spherical sweep's split-merge moves (the default's) report their acceptance.
    extra = {"split_merge_accepted"} if cov == "spherical" else set()
    assert set(s) == {"labels", "n_clusters", "log_likelihood", "alpha"} | extra
    assert s["labels"].shape == (3, 40, 20) and s["labels"].dtype == jnp.int32
    assert s["n_clusters"].shape == s["log_likelihood"].shape == s["alpha"].shape == (3, 40)
    # labels are 0..k-1 with k the n_clusters site
    lab = np.asarray(s["labels"])
    assert np.array_equal(lab.max(axis=2) + 1, np.asarray(s["n_clusters"]))
    assert np.all(np.asarray(s["alpha"]) > 0) and np.ptp(np.asarray(s["alpha"])) > 0
    assert mcmc.get_samples()["labels"].shape == (120, 20)
    mcmc.print_summary()
    out = capsys.readouterr().out
    assert "n_clusters" in out and "log_likelihood" in out and "alpha" in out
    assert "labels" not in out  # one row per point would drown the scalars
    az = pytest.importorskip("arviz")
    idata = az.from_numpyro(mcmc)
    assert "posterior" in idata.groups()
    assert idata.posterior["labels"].shape == (3, 40, 20)
    assert idata.posterior["n_clusters"].shape == (3, 40)


def _hdp_groups():
    a = np.concatenate([np.random.default_rng(1).normal(-2, 0.2, (6, 2)),
                        np.random.default_rng(2).normal(2, 0.2, (6, 2))])
    b = np.random.default_rng(3).normal(2, 0.2, (5, 2))
    return a, b


@pytest.fixture(scope="module")
def hdp_run():
    """One HDPGibbs run on two data sets (the list form), shared by the next two tests."""
    return _run(HDPGibbs(list(_hdp_groups()), sigma2=0.04, gamma_prior=dist.Gamma(1.0, 1.0)),
                num_samples=30)


def test_hdp_sites_shapes_and_posterior(hdp_run):
    mcmc = hdp_run
    s = mcmc.get_samples(group_by_chain=True)
    assert set(s) == {"labels", "local_labels", "n_clusters", "n_local", "log_likelihood", "gamma"}
    assert s["labels"].shape == s["local_labels"].shape == (2, 30, 17)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = posterior_from_mcmc(mcmc)
    assert post.model == "hdp_gmm" and post.group_ids.tolist() == [0] * 12 + [1] * 5
    assert [g.shape for g in post.labels_by_group()] == [(2, 30, 12), (2, 30, 5)]


def test_hdp_labels_come_back_in_input_row_order(hdp_run):
    a, b = _hdp_groups()
    s = hdp_run.get_samples(group_by_chain=True)
    X = np.concatenate([b, a])
    ids = np.array([1] * 5 + [0] * 12)
    mcmc2 = _run(HDPGibbs(X, group_ids=ids, sigma2=0.04, gamma_prior=dist.Gamma(1.0, 1.0)),
                 num_samples=30)
    lab1 = np.asarray(s["labels"])
    lab2 = np.asarray(mcmc2.get_samples(group_by_chain=True)["labels"])
    assert np.array_equal(lab2, np.concatenate([lab1[..., 12:], lab1[..., :12]], axis=-1))


def test_posterior_from_mcmc_matches_the_samples(reference):
    mcmc, _ = reference
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = posterior_from_mcmc(mcmc)
    s = mcmc.get_samples(group_by_chain=True)
    assert isinstance(post, Posterior)
    assert np.array_equal(post.labels, np.asarray(s["labels"]))
    np.testing.assert_allclose(post.log_likelihood, np.asarray(s["log_likelihood"]), rtol=1e-6)
    np.testing.assert_allclose(post.params["sigma2"], np.asarray(s["sigma2"]), rtol=1e-6)
    assert np.ptp(post.params["sigma2"]) > 0  # sigma2 is sampled
    assert np.all(post.params["alpha"] == 1.0)  # fixed: repeated per draw, as the driver does
    assert post.sampler == "gibbs-collapsed+split-merge" and post.model == "dp_gmm"
    # The sweeps' split-merge acceptance: the moves accepted per sweep over those proposed.
    accepted = np.asarray(s["split_merge_accepted"])
    moves = DP_SAMPLER_DEFAULTS.split_merge
    assert accepted.shape == (2, 30) and np.all((accepted >= 0) & (accepted <= moves))
    np.testing.assert_array_equal(post.sample_stats["split_merge_acceptance"], accepted / moves)
    assert post.kernels == ("native" if _native.used_on() else "xla")
    assert post.point_estimate().shape == (20,)
    with pytest.raises(TypeError, match="DPCollapsedGibbs"):
        posterior_from_mcmc(object())


# --- chain methods, reproducibility, the native kernel, capacity ------------------------------


#: The kernel of the shared reference run: sigma2 sampled from its conjugate prior.
_REF = dict(sigma2=0.09, sigma2_prior=dist.InverseGamma(2.0, 0.1))


@pytest.fixture(scope="module")
def reference():
    """One "vectorized" run (2 chains, 30 draws) that the tests of this section and
    test_posterior_from_mcmc_matches_the_samples read."""
    mcmc = _run(DPCollapsedGibbs(_TWO, **_REF), num_samples=30)
    return mcmc, np.asarray(mcmc.get_samples(group_by_chain=True)["labels"])


def test_sequential_chains_get_the_vectorized_draws(reference):
    """"vectorized" (one batched sweep: the native kernel's SIMD lanes) and "sequential"
    (NumPyro's fallback for "parallel" on one device) give chain c the same draws."""
    _, labels = reference
    seq = _run(DPCollapsedGibbs(_TWO, **_REF), num_samples=30, chain_method="sequential")
    assert np.array_equal(np.asarray(seq.get_samples(group_by_chain=True)["labels"]), labels)
    assert len({tuple(r) for r in labels.reshape(-1, 20)}) > 1  # the chains move


def test_native_sweep_runs_under_vmap(reference):
    """A callable chain_method (jax.vmap): the native FFI sweep batched by vmap
    (sequentially) gives the same draws."""
    _, labels = reference
    vm = _run(DPCollapsedGibbs(_TWO, **_REF), num_samples=30, chain_method=jax.vmap)
    assert np.array_equal(np.asarray(vm.get_samples(group_by_chain=True)["labels"]), labels)


def test_reproducible_from_a_seed(reference):
    mcmc, labels = reference
    mcmc.run(jax.random.PRNGKey(0))  # the same MCMC again: no new compilation
    assert np.array_equal(np.asarray(mcmc.get_samples(group_by_chain=True)["labels"]), labels)
    mcmc.run(jax.random.PRNGKey(4))
    assert not np.array_equal(np.asarray(mcmc.get_samples(group_by_chain=True)["labels"]), labels)


def test_xla_path():
    with _native.disabled():  # the pure-XLA sweep: its own random stream, same target
        mcmc = _run(DPCollapsedGibbs(_TWO, sigma2=0.09, split_merge=1), seed=3)
        x = mcmc.get_samples()
        assert x["labels"].shape == (100, 20)
        assert int(np.bincount(np.asarray(x["n_clusters"])).argmax()) == 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert posterior_from_mcmc(mcmc).kernels == "xla"


def test_progress_bar_and_init_params(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    init = np.tile(np.r_[np.zeros(10, int), np.full(10, 7)], (2, 1))  # any ids: relabelled
    mcmc = _run(DPCollapsedGibbs(_TWO, sigma2=0.09, split_merge=0), num_warmup=0,
                num_samples=3, progress_bar=True, init_params=init)
    assert mcmc.progress_bar
    # from the right partition the chains stay near it
    assert np.all(np.asarray(mcmc.get_samples()["n_clusters"]) >= 2)
    one = _run(DPCollapsedGibbs(_TWO, sigma2=0.09), num_chains=1, num_samples=3, progress_bar=True)
    assert one.get_samples(group_by_chain=True)["labels"].shape == (1, 3, 20)


def test_smaller_capacity_gives_the_same_draws(reference):
    _, labels = reference
    small = _run(DPCollapsedGibbs(_TWO, capacity=6, **_REF), num_samples=30)
    assert np.array_equal(np.asarray(small.get_samples(group_by_chain=True)["labels"]), labels)


def test_capacity_overflow_is_marked_and_an_error_not_a_merge(monkeypatch):
    """capacity=1 for two well-separated clusters: the draws after the overflow are marked
    (n_clusters -1, NaN log_likelihood, labels -1), posterior_from_mcmc and the one-chain
    progress bar raise naming the capacity."""
    mcmc = _run(DPCollapsedGibbs(_TWO, sigma2=0.09, capacity=1), num_warmup=5, num_samples=5)
    s = mcmc.get_samples()
    assert np.all(np.asarray(s["n_clusters"]) == -1) and np.all(np.asarray(s["labels"]) == -1)
    assert np.all(np.isnan(np.asarray(s["log_likelihood"])))
    with pytest.raises(RuntimeError, match="capacity=1"):
        posterior_from_mcmc(mcmc)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    with pytest.raises(RuntimeError, match="capacity=1"):
        _run(DPCollapsedGibbs(_TWO, sigma2=0.09, capacity=1), num_chains=1, num_warmup=5,
             num_samples=5, progress_bar=True)


def test_hdp_capacity_overflow_is_an_error():
    mcmc = _run(HDPGibbs([_TWO[:10], _TWO[10:]], sigma2=0.09, capacity=(1, 1)), num_warmup=5,
                num_samples=5)
    assert np.all(np.asarray(mcmc.get_samples()["labels"]) == -1)
    with pytest.raises(RuntimeError, match=r"capacity=\(1, 1\)"):
        posterior_from_mcmc(mcmc)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, match", [
    (dict(covariance_type="tied"), "covariance_type"),
    (dict(sigma2=0.0), "sigma2"),
    (dict(sigma2=-1.0), "sigma2"),
    (dict(rho2=0.0), "rho2"),
    (dict(alpha=0.0), "alpha"),
    (dict(covariance_type="full", sigma2=1.0), "sigma2"),
    (dict(covariance_type="diag", split_merge=1), "split_merge"),
    (dict(prior=GaussianClusterPrior(np.zeros(2), 1.0, 3.0, np.eye(2))), "prior"),
    (dict(covariance_type="full", prior=GaussianClusterPrior(np.zeros(2), -1.0, 3.0, np.eye(2))),
     "prior.kappa"),
    (dict(alpha_prior=dist.Normal(0.0, 1.0)), "alpha_prior"),
    (dict(capacity=0), "capacity"),
])
def test_bad_arguments_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPCollapsedGibbs(_TWO, **kwargs)


def test_bad_data_and_run_arguments():
    bad = _TWO.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        DPCollapsedGibbs(bad)
    with pytest.raises(ValueError, match=r"groups\[1\] contains NaN"):
        HDPGibbs([_TWO, bad])
    with pytest.raises(ValueError, match="sigma2"):
        HDPGibbs([_TWO], sigma2=0.0)
    with pytest.raises(ValueError, match="capacity"):
        HDPGibbs([_TWO], capacity=5)
    kernel = DPCollapsedGibbs(_TWO, sigma2=0.09)
    with pytest.raises(ValueError, match="model arguments"):
        _run(kernel, num_chains=1, num_samples=2, X=_TWO)
    with pytest.raises(ValueError, match="init_params"):
        _run(kernel, num_samples=2, init_params=np.zeros((2, 19), int))
    with pytest.raises(ValueError, match="init_params"):
        _run(HDPGibbs([_TWO]), num_samples=2, init_params=np.zeros((2, 20), int))
