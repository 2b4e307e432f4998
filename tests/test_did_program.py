"""The increments program: a DID per cluster with the prior 1/lam, and the MDL description
length as its evidence (Aidos & Fred 2011, eq. 7; Wallace & Freeman 1987)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from numpyro.infer import MCMC, NUTS
from numpyro.infer.util import log_density
from scipy import integrate, optimize

import bayesclust
from bayesclust.kernels import DID2_FISHER, description_length, did_logpdf
from bayesclust.models.did import DID, did_clusters

#: Wallace-Freeman's 1/2 (1 - log 12) against Laplace's -1/2 log(2 pi)
KAPPA = 0.5 * (1.0 + np.log(np.pi / 6.0))


def evidence_by_quadrature(w):
    """-log int p(W | lam) lam^-1 dlam (integrated over t = log lam), the ML lam and log-lik,
    and the observed information in t."""

    def loglik(lam):
        return float(np.sum(did_logpdf(w, lam)))

    t_ml = optimize.minimize_scalar(lambda t: -loglik(np.exp(t)), bounds=(-5, 5), method="bounded",
                                    options={"xatol": 1e-12}).x
    top = loglik(np.exp(t_ml))
    half = 20.0 / np.sqrt(w.size) + 1.0
    mass, _ = integrate.quad(lambda t: np.exp(loglik(np.exp(t)) - top), t_ml - half, t_ml + half,
                             points=[t_ml], epsabs=0, epsrel=1e-12, limit=200)
    h = 1e-4
    info = -(loglik(np.exp(t_ml + h)) - 2 * top + loglik(np.exp(t_ml - h))) / h**2
    return -(top + np.log(mass)), np.exp(t_ml), top, info


@pytest.mark.parametrize("m", [100, 400, 1600])
def test_description_length_approximates_the_evidence(x64, m):
    """DL(lam_ML) = -log evidence + KAPPA + O(1/m); with the observed information in place of
    m c the remainder times m stays below 0.2 (it is 0.155 on these draws)."""
    gaps = []
    for seed in range(3):
        w = np.asarray(DID(1.0).sample(jax.random.PRNGKey(seed), (m,)))
        neg_log_ev, lam_ml, top, info = evidence_by_quadrature(w)
        dl = description_length(w, lam=lam_ml)
        assert abs(dl - neg_log_ev - KAPPA) < 1.0 / np.sqrt(m)
        dl_observed = 0.5 * (1 - np.log(12)) + 0.5 * np.log(info) - top
        gaps.append(m * abs(dl_observed - neg_log_ev - KAPPA))
        # the observed information is the expected one, m c, to O(sqrt m)
        assert info / (m * DID2_FISHER) == pytest.approx(1.0, abs=4 / np.sqrt(m))
    assert max(gaps) < 0.2


def test_program_density_is_the_did_likelihood_with_the_1_over_lam_prior(x64):
    w = np.array([0.3, 1.2, 0.7, 2.0, 5.5, 3.1])
    labels = np.array([0, 0, 0, 1, 1, 1])
    log_lam = np.log(np.array([0.8, 3.5]))
    got, _ = log_density(did_clusters, (w, labels, 2), {}, {"log_lam": log_lam})
    want = np.sum(did_logpdf(w, np.exp(log_lam)[labels]))  # flat in log lam == 1/lam in lam
    assert float(got) == pytest.approx(float(want), rel=1e-12)


def test_nuts_posterior_of_lam_matches_quadrature(x64):
    rng = jax.random.PRNGKey(3)
    w = np.concatenate([np.asarray(DID(1.0).sample(rng, (60,))),
                        np.asarray(DID(4.0).sample(jax.random.fold_in(rng, 1), (40,)))])
    labels = np.repeat([0, 1], [60, 40])
    mcmc = MCMC(NUTS(did_clusters), num_warmup=400, num_samples=1500, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), w, labels, 2)
    lam = np.asarray(mcmc.get_samples()["lam"])
    for k in range(2):
        wk = w[labels == k]

        base = float(np.sum(did_logpdf(wk, wk.mean())))

        def post(lam_, wk=wk, base=base):
            return np.exp(float(np.sum(did_logpdf(wk, lam_))) - base) / lam_
        z, _ = integrate.quad(post, 1e-3, 50 * wk.mean(), limit=200)
        mean, _ = integrate.quad(lambda x, post=post: x * post(x), 1e-3, 50 * wk.mean(), limit=200)
        sd = np.sqrt(integrate.quad(lambda x, post=post: x * x * post(x), 1e-3, 50 * wk.mean(),
                                    limit=200)[0] / z - (mean / z) ** 2)
        assert lam[:, k].mean() == pytest.approx(mean / z, abs=4 * sd / np.sqrt(300))


def test_program_is_exported_and_takes_a_proper_prior():
    import numpyro.distributions as dist
    from numpyro.infer import Predictive

    assert bayesclust.did_clusters is did_clusters
    draws = Predictive(did_clusters, num_samples=3)(
        jax.random.PRNGKey(0), w=None, labels=np.zeros(5, int), n_clusters=1,
        lam_prior=dist.Gamma(2.0, 1.0))
    assert draws["lam"].shape == (3, 1) and draws["w"].shape == (3, 5)
    assert np.all(np.asarray(draws["w"]) >= 0)
