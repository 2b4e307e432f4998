"""Old spellings of renamed arguments, attributes and priors (docs/architecture.md, "Names").

Every old spelling still works for one release: it issues a ``FutureWarning`` that names the
new spelling and gives the same result as the new spelling.  Each test calls both and compares.
"""

from __future__ import annotations

import numpy as np
import numpyro.distributions as dist
import pytest

from bayesclust import _validation as V


def _warns(new):
    """``pytest.warns`` for a deprecated spelling whose message names ``new``."""
    return pytest.warns(FutureWarning, match=rf"deprecated.*use {new}")


def _same(a, b):
    """Two results (NamedTuples, arrays, scalars, dicts) are equal field by field."""
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        assert a._fields == b._fields
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif hasattr(a, "toarray"):
        np.testing.assert_array_equal(a.toarray(), b.toarray())
    elif a is None or isinstance(a, str):
        assert a == b
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


PARTS = [[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], [1, 1, 1, 0, 0, 2]]


def _blocks():
    blocks = np.repeat([0, 1, 2], 4)
    C = 5.0 * (blocks[:, None] == blocks[None, :])
    np.fill_diagonal(C, 0)
    return C


def _blobs(seed=0, n_per=20, d=2):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])[:, :d]
    return np.repeat(centers, n_per, axis=0) + rng.normal(scale=0.4, size=(3 * n_per, d))


# --------------------------------------------------------------------------- the mechanism


def test_renamed_kwargs_warns_maps_and_refuses_both():
    @V.renamed_kwargs(old="new")
    def f(new=0):
        return new

    with _warns("new=..."):
        assert f(old=3) == 3
    with pytest.raises(TypeError, match="both 'new' and its deprecated spelling 'old'"):
        f(new=1, old=2)


def test_check_labelings_is_check_ensemble():
    with _warns("check_ensemble"):
        old = V.check_labelings(PARTS)
    np.testing.assert_array_equal(old, V.check_ensemble(PARTS))


# --------------------------------------------------------------------------- restarts: n_init


def test_aspect_em_and_select_n_aspects_n_restarts():
    from bayesclust.inference.consensus.aspect_em import aspect_em, select_n_aspects

    C = _blocks()
    with _warns("n_init=..."):
        old = aspect_em(0, C, 3, n_restarts=3)
    _same(old, aspect_em(0, C, 3, n_init=3))
    with _warns("restart_objectives"):
        _same(old.restart_log_likelihoods, old.restart_objectives)
    with _warns("n_init=..."):
        old = select_n_aspects(0, C, [2, 3], n_restarts=2)
    _same(old, select_n_aspects(0, C, [2, 3], n_init=2))


def test_mixture_of_ensembles_n_restarts_and_labelings():
    from bayesclust.inference.consensus.mixture_of_ensembles import mixture_of_ensembles

    new = mixture_of_ensembles(0, ensemble=PARTS, n_clusters=2, n_init=3)
    with _warns("n_init=..."), _warns("ensemble=..."):
        old = mixture_of_ensembles(0, labelings=PARTS, n_clusters=2, n_restarts=3)
    _same(old, new)
    with _warns("restart_objectives"):
        _same(new.restart_log_likelihoods, new.restart_objectives)


def test_run_svi_num_restarts():
    from bayesclust.inference.mixtures.mcmc import run_svi
    from bayesclust.models.dp_gmm import dp_gmm

    X = _blobs(n_per=5)
    kw = dict(guide="delta", num_steps=20, num_samples=5, progress_bar=False, truncation=10,
              alpha=0.3, sigma2=0.2)
    with _warns("n_init=..."):
        old = run_svi(0, dp_gmm, X, num_restarts=2, **kw)
    new = run_svi(0, dp_gmm, X, n_init=2, **kw)
    np.testing.assert_array_equal(old.labels, new.labels)
    np.testing.assert_array_equal(old.params["means"], new.params["means"])


def test_fig1_prototypes_n_starts():
    from bayesclust.jobs.dc import fig1_prototypes

    with _warns("n_init=..."):
        old = fig1_prototypes(0, 200, (0.0,), n_starts=2)
    new = fig1_prototypes(0, 200, (0.0,), n_init=2)
    _same(old["fits"], new["fits"])


def test_run_compare_consensus_n_restarts(tmp_path):
    from bayesclust.jobs.consensus import run_compare_consensus

    kw = dict(seed=1, n_partitions=6, plot=False, progress_bar=False)
    with _warns("n_init=..."):
        old = run_compare_consensus("stars", tmp_path / "old", n_restarts=2, **kw)
    new = run_compare_consensus("stars", tmp_path / "new", n_init=2, **kw)
    for a, b in zip(old["rows"], new["rows"]):
        assert (a["method"], a["k"], a["ci"], a["nmi"]) == (b["method"], b["k"], b["ci"], b["nmi"])
    _same(old["penca"]["restart_objectives"], new["penca"]["restart_objectives"])


def test_aspect_consensus_n_restarts_and_fit_labelings():
    from bayesclust import AspectConsensus, EvidenceAccumulation

    new = AspectConsensus(n_clusters=2, n_init=3, random_state=0).fit(ensemble=PARTS)
    with _warns("n_init=..."):
        old = AspectConsensus(n_clusters=2, n_restarts=3, random_state=0).fit(ensemble=PARTS)
    _same(old.probabilities_, new.probabilities_)
    with _warns(r"fit\(ensemble=...\)"):
        old = AspectConsensus(n_clusters=2, n_init=3, random_state=0).fit(labelings=PARTS)
    _same(old.probabilities_, new.probabilities_)
    with _warns(r"fit\(ensemble=...\)"):
        labels = AspectConsensus(n_clusters=2, n_init=3, random_state=0).fit_predict(labelings=PARTS)
    _same(labels, new.labels_)
    ea = EvidenceAccumulation(n_clusters=2).fit(ensemble=PARTS)
    with _warns(r"fit\(ensemble=...\)"):
        _same(EvidenceAccumulation(n_clusters=2).fit(labelings=PARTS).labels_, ea.labels_)
    with _warns(r"fit\(ensemble=...\)"):
        _same(EvidenceAccumulation(n_clusters=2).fit_predict(labelings=PARTS), ea.labels_)
    with pytest.raises(TypeError, match="both"):
        EvidenceAccumulation(n_clusters=2).fit(ensemble=PARTS, labelings=PARTS)


# --------------------------------------------------------------------------- ensembles


def test_coassociation_labelings():
    from bayesclust.inference.consensus.coassociation import coassociation, coassociation_dense

    with _warns("ensemble=..."):
        old = coassociation(labelings=PARTS)
    _same(old, coassociation(ensemble=PARTS))
    with _warns("ensemble=..."):
        old = coassociation_dense(labelings=PARTS)
    _same(old, coassociation_dense(ensemble=PARTS))


def test_kmeans_ensemble_and_k_bounds_rule():
    from bayesclust.inference.consensus.ensembles import k_bounds, kmeans_ensemble

    with _warns("k_rule=..."):
        assert k_bounds(450, rule="linear") == k_bounds(450, k_rule="linear")
    X = _blobs()
    with _warns("k_rule=..."):
        old = kmeans_ensemble(0, X, 4, rule="sqrt")
    _same(old, kmeans_ensemble(0, X, 4, k_rule="sqrt"))


# --------------------------------------------------------------------------- objective traces


def test_cecib_result_and_estimator_old_fields():
    from bayesclust import CECIB, cecib

    X = _blobs(n_per=30)
    res = cecib(0, X, 4, n_init=2)
    for old, new in (("means", "centers"), ("cost", "objective"), ("cost_trace", "objective_trace"),
                     ("restart_costs", "restart_objectives")):
        with _warns(new):
            _same(getattr(res, old), getattr(res, new))
    est = CECIB(n_clusters=4, n_init=2, random_state=0).fit(X)
    for old, new in (("means_", "cluster_centers_"), ("cost_", "objective_"),
                     ("cost_trace_", "objective_trace_")):
        with _warns(new):
            _same(getattr(est, old), getattr(est, new))


def test_mog_and_mda2_log_likelihood_trace():
    from bayesclust.inference.discriminative.dc_baselines import mda2_em, mog_em

    X = _blobs()
    c = np.repeat([0, 1, 1], 20)
    for res in (mog_em(0, X, 3, 0.5, max_iter=5), mda2_em(0, X, c, 3, 0.5, max_iter=5)):
        with _warns("objective_trace"):
            _same(res.log_likelihood_trace, res.objective_trace)


# --------------------------------------------------------------------------- numbers of clusters


def test_farthest_first_lambda_k():
    from bayesclust import farthest_first_lambda

    X = _blobs()
    with _warns("n_clusters=..."):
        assert farthest_first_lambda(X, k=3) == farthest_first_lambda(X, n_clusters=3)


def test_dp_means_estimator_n_clusters_hint():
    from bayesclust import DPMeans

    X = _blobs()
    new = DPMeans(n_clusters=3, random_state=0).fit(X)
    with _warns("n_clusters=..."):
        old = DPMeans(n_clusters_hint=3, random_state=0).fit(X)
    assert old.lam_ == new.lam_
    _same(old.labels_, new.labels_)
    assert DPMeans(n_clusters_hint=3).get_params()["n_clusters_hint"] == 3


def test_jobs_k(tmp_path, monkeypatch):
    """``run_compare(k=)`` hands its job the same call as ``n_clusters=``; the jobs' own
    ``k=`` reaches the same validation."""
    import bayesclust.jobs.dc as dc_job
    from bayesclust.jobs import run_compare
    from bayesclust.jobs.dc import run_compare_dc
    from bayesclust.jobs.dp import run_compare_dp

    calls = []
    monkeypatch.setattr(dc_job, "run_compare_dc", lambda *a, **kw: calls.append((a, kw)) or {})
    run_compare(out_dir=tmp_path, model="dc", n_clusters=4)
    with _warns("n_clusters=..."):
        run_compare(out_dir=tmp_path, model="dc", k=4)
    assert calls[0] == calls[1] and calls[0][1]["n_clusters"] == 4
    monkeypatch.undo()
    for job, data in ((run_compare_dp, "iris"), (run_compare_dc, "iris")):
        with pytest.raises(ValueError, match="n_clusters must be >= 1") as new:
            job(data, tmp_path, n_clusters=0)
        with _warns("n_clusters=..."), pytest.raises(ValueError, match="n_clusters must be") as old:
            job(data, tmp_path, k=0)
        assert str(old.value) == str(new.value)


# --------------------------------------------------------------------------- grouped data


def _grouped():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.3, (10, 2)) for c in (0.0, 4.0, 0.0, 4.0)])
    return X, np.repeat([5, 5, 9, 9], 10)


def test_hard_hdp_estimator_groups_and_hints():
    from bayesclust import HardHDP

    X, ids = _grouped()
    new = HardHDP(n_local=2, n_global=2).fit(X, group_ids=ids)
    with _warns(r"fit\(group_ids=...\)"):
        old = HardHDP(n_local=2, n_global=2).fit(X, groups=ids)
    _same(old.labels_, new.labels_)
    with _warns("n_local=..."), _warns("n_global=..."):
        old = HardHDP(n_local_hint=2, n_global_hint=2).fit(X, group_ids=ids)
    assert (old.lam_local_, old.lam_global_) == (new.lam_local_, new.lam_global_)
    _same(old.labels_, new.labels_)
    with _warns(r"fit\(group_ids=...\)"):
        _same(HardHDP(n_local=2, n_global=2).fit_predict(X, groups=ids), new.labels_)
    with _warns("group_order_"):
        _same(new.group_ids_, new.group_order_)
    np.testing.assert_array_equal(new.group_order_, [5, 9])


def test_hdp_gaussian_mixture_groups():
    from bayesclust import HDPGaussianMixture

    X, ids = _grouped()
    kw = dict(sigma2=0.1, num_warmup=10, num_samples=10, random_state=0)
    new = HDPGaussianMixture(**kw).fit(X, group_ids=ids)
    with _warns(r"fit\(group_ids=...\)"):
        old = HDPGaussianMixture(**kw).fit(X, groups=ids)
    np.testing.assert_array_equal(old.posterior_.labels, new.posterior_.labels)
    with _warns("group_order_"):
        _same(new.group_ids_, new.group_order_)


# --------------------------------------------------------------------------- priors


def test_gibbs_dp_gmm_tuple_priors_give_the_same_draws():
    from bayesclust import gibbs_dp_gmm

    X = _blobs(n_per=8)
    for scheme in ("sequential", "blocked"):
        kw = dict(sigma2=0.2, scheme=scheme, num_warmup=5, num_samples=10, progress_bar=False)
        new = gibbs_dp_gmm(0, X, alpha_prior=dist.Gamma(2.0, 0.5),
                           sigma2_prior=dist.InverseGamma(3.0, 0.4), **kw)
        with _warns(r"alpha_prior=numpyro.distributions.Gamma\(a, b\)"), \
                _warns(r"sigma2_prior=numpyro.distributions.InverseGamma\(a, b\)"):
            old = gibbs_dp_gmm(0, X, alpha_prior=(2.0, 0.5), sigma2_prior=(3.0, 0.4), **kw)
        np.testing.assert_array_equal(old.labels, new.labels)
        for name in ("alpha", "sigma2", "means"):
            np.testing.assert_array_equal(old.params[name], new.params[name])
        # The priors were used: the hyper-parameters moved.
        assert np.ptp(new.params["alpha"]) > 0 and np.ptp(new.params["sigma2"]) > 0


def test_gibbs_hdp_gmm_tuple_priors_give_the_same_draws():
    from bayesclust import gibbs_hdp_gmm

    X, ids = _grouped()
    kw = dict(group_ids=ids, sigma2=0.1, num_warmup=5, num_samples=10, progress_bar=False)
    new = gibbs_hdp_gmm(0, X, alpha_prior=dist.Gamma(2.0, 1.0), gamma_prior=dist.Gamma(1.5, 2.0),
                        sigma2_prior=dist.InverseGamma(3.0, 0.3), **kw)
    with _warns("alpha_prior=numpyro"), _warns("gamma_prior=numpyro"), _warns("sigma2_prior=numpyro"):
        old = gibbs_hdp_gmm(0, X, alpha_prior=(2.0, 1.0), gamma_prior=(1.5, 2.0),
                            sigma2_prior=(3.0, 0.3), **kw)
    np.testing.assert_array_equal(old.labels, new.labels)
    for name in ("alpha", "gamma", "sigma2"):
        np.testing.assert_array_equal(old.params[name], new.params[name])
        assert np.ptp(new.params[name]) > 0


def test_estimators_tuple_priors_give_the_same_fit():
    from bayesclust import DPGaussianMixture, HDPGaussianMixture

    X, ids = _grouped()
    kw = dict(sigma2=0.1, num_warmup=5, num_samples=10, random_state=0)
    new = DPGaussianMixture(alpha_prior=dist.Gamma(2.0, 1.0),
                            sigma2_prior=dist.InverseGamma(3.0, 0.3), **kw).fit(X)
    with _warns("alpha_prior=numpyro"), _warns("sigma2_prior=numpyro"):
        old = DPGaussianMixture(alpha_prior=(2.0, 1.0), sigma2_prior=(3.0, 0.3), **kw).fit(X)
    np.testing.assert_array_equal(old.posterior_.labels, new.posterior_.labels)
    np.testing.assert_array_equal(old.posterior_.params["sigma2"], new.posterior_.params["sigma2"])
    new = HDPGaussianMixture(gamma_prior=dist.Gamma(1.5, 2.0), **kw).fit(X, group_ids=ids)
    with _warns("gamma_prior=numpyro"):
        old = HDPGaussianMixture(gamma_prior=(1.5, 2.0), **kw).fit(X, group_ids=ids)
    np.testing.assert_array_equal(old.posterior_.labels, new.posterior_.labels)
    np.testing.assert_array_equal(old.posterior_.params["gamma"], new.posterior_.params["gamma"])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(alpha_prior=dist.InverseGamma(1.0, 1.0)), ValueError, "alpha_prior must be a numpyro.distributions.Gamma"),
        (dict(sigma2_prior=dist.Gamma(1.0, 1.0)), ValueError, "sigma2_prior must be a numpyro.distributions.InverseGamma"),
        (dict(alpha_prior=dist.Gamma(np.ones(2), 1.0)), ValueError, "alpha_prior must be a scalar"),
        (dict(alpha_prior=dist.Gamma(-1.0, 1.0, validate_args=False)), ValueError, r"alpha_prior.concentration must be a positive"),
        (dict(sigma2_prior=1.0), TypeError, "sigma2_prior must be a numpyro.distributions.InverseGamma"),
        (dict(alpha_prior=(1.0,)), ValueError, "alpha_prior must be a numpyro.distributions.Gamma"),
    ],
)
def test_sampler_priors_must_be_the_conjugate_family(kwargs, exc, match):
    from bayesclust import gibbs_dp_gmm

    with pytest.raises(exc, match=match):
        gibbs_dp_gmm(0, np.arange(12.0).reshape(6, 2), progress_bar=False, **kwargs)


# --------------------------------------------------------------------------- SMIC: t


def test_smic_n_neighbors():
    from bayesclust import SMIC
    from bayesclust.graphs import local_scaling_cross_kernel, local_scaling_kernel
    from bayesclust.inference.information.smic import smic, smic_select

    X = _blobs(n_per=10)
    with _warns("t=..."):
        old = smic(X, n_neighbors=4, n_clusters=3)
    new = smic(X, t=4, n_clusters=3)
    _same(old, new)
    with _warns("t"):
        assert new.n_neighbors == new.t == 4
    sel = smic_select(0, X, 3, candidates=[3, 4])
    with _warns("t"):
        assert sel.n_neighbors == sel.t
    with _warns("t=..."):
        kern = local_scaling_kernel(X, n_neighbors=3)
    _same(kern, local_scaling_kernel(X, t=3))
    with _warns("t"):
        assert kern.n_neighbors == 3
    with _warns("t=..."):
        old = local_scaling_cross_kernel(X[:4] + 0.1, X, kern.sigma, n_neighbors=3,
                                         sigma_floor=kern.sigma_floor)
    _same(old, local_scaling_cross_kernel(X[:4] + 0.1, X, kern.sigma, t=3, sigma_floor=kern.sigma_floor))
    new = SMIC(3, t=4, random_state=0).fit(X)
    with _warns("t=..."):
        old = SMIC(3, n_neighbors=4, random_state=0).fit(X)
    _same(old.labels_, new.labels_)
    with _warns("t_"):
        assert old.n_neighbors_ == new.t_ == 4


# --------------------------------------------------------------------------- spectral


def test_spectral_dp_means_lam_and_solver():
    from bayesclust import SpectralDPMeans, penalized_ncut, spectral_dp_means
    from bayesclust.inference.hard.spectral_dp_means import thresholded_eigenvectors

    K = np.kron(np.eye(3), np.ones((4, 4)))
    new = spectral_dp_means(K, eigenvalue_threshold=2.0, eigen_solver="dense")
    with _warns("eigenvalue_threshold=..."), _warns("eigen_solver=..."):
        old = spectral_dp_means(K, lam=2.0, solver="dense")
    _same(old, new)
    with _warns("eigenvalue_threshold"):
        assert new.lam == new.eigenvalue_threshold == 2.0
    with _warns("eigen_solver=..."):
        old = thresholded_eigenvectors(K, 2.0, solver="dense")
    _same(old, thresholded_eigenvectors(K, 2.0, eigen_solver="dense"))
    A = K - np.eye(12)
    A[3, 4] = A[4, 3] = 1.0
    with _warns("eigen_solver=..."):
        old = penalized_ncut(A, -0.5, solver="dense")
    _same(old, penalized_ncut(A, -0.5, eigen_solver="dense"))
    new = SpectralDPMeans(eigenvalue_threshold=2.0, affinity="precomputed").fit(K)
    with _warns("eigenvalue_threshold=..."):
        old = SpectralDPMeans(lam=2.0, affinity="precomputed").fit(K)
    assert old.n_clusters_ == new.n_clusters_ == 3
    _same(old.labels_, new.labels_)


# --------------------------------------------------------------------------- iteration caps


def test_sdc_n_steps_and_point_estimate_max_sweeps():
    from bayesclust.datasets import dc_toy
    from bayesclust.inference.discriminative.sdc import sdc
    from bayesclust.inference.mixtures.point_estimates import partition_point_estimate

    X, c = dc_toy(0, 200)
    with _warns("n_iter=..."):
        old = sdc(0, X, c, 3, 0.3, n_steps=500)
    new = sdc(0, X, c, 3, 0.3, n_iter=500)
    _same(old.prototypes, new.prototypes)
    assert old.n_iter == new.n_iter == 500
    draws = np.array([[0, 0, 1, 1, 2], [0, 0, 1, 2, 2], [0, 1, 1, 2, 2]])
    with _warns("max_iter=..."):
        old = partition_point_estimate(draws, "vi", max_sweeps=3)
    _same(old, partition_point_estimate(draws, "vi", max_iter=3))
