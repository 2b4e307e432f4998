"""PEnCA Table 1 (Lourenco, Fred & Figueiredo 2011, §5) on the data sets
available offline, side by side with MM (Topchy et al.) on the same ensembles.

Protocol (docs/deviations.md#penca-table1): k-means ensembles of N = 150 partitions with the PEnCA K
rule; L = true K; PEnCA keeps the best-likelihood of 10 random restarts, MM of 10 restarts;
several ensembles, assertions on the mean with modest tolerances.
"""

import numpy as np
import pytest

from bayesclust import datasets, metrics
from bayesclust.inference.consensus import aspect_em as ae
from bayesclust.inference.consensus import coassociation as coassoc
from bayesclust.inference.consensus import ensembles
from bayesclust.inference.consensus import linkage as linkages
from bayesclust.inference.consensus import mixture_of_ensembles as moe


def _runs(X, y, seeds, *, restarts=10, eac_init=False):
    K = len(np.unique(y))
    out = {"PEnCA": [], "MM": [], "PEnCA-eac": []}
    for seed in seeds:
        ens = ensembles.kmeans_ensemble(seed, X, 150)
        C = coassoc.coassociation(ens)
        out["PEnCA"].append(metrics.consistency_index(y, ae.aspect_em(seed, C, K, n_init=restarts).labels))
        out["MM"].append(metrics.consistency_index(y, moe.mixture_of_ensembles(seed, ens, K, n_init=restarts).labels))
        if eac_init:
            al = linkages.linkage_consensus(C, "average", K).labels
            out["PEnCA-eac"].append(metrics.consistency_index(y, ae.aspect_em(seed, C, K, init=al, n_init=1).labels))
    return {k: np.asarray(v) for k, v in out.items()}


@pytest.mark.paper
def test_table1_iris():
    X, y = datasets.load_iris()
    r = _runs(X, y, range(3))
    # Paper: PEnCA 0.920, MM 0.693.  Measured here: PEnCA 0.900 on every ensemble.
    assert r["PEnCA"].mean() >= 0.920 - 0.05
    assert r["PEnCA"].mean() > r["MM"].mean()


@pytest.mark.paper
def test_table1_wine_normalized():
    X, y = datasets.load_wine()
    X = X / X.std(axis=0)  # "normalized to unit variance"
    r = _runs(X, y, range(3))
    # Paper: PEnCA 0.949, MM 0.590.
    assert abs(r["PEnCA"].mean() - 0.949) <= 0.03
    assert r["PEnCA"].mean() > r["MM"].mean()


@pytest.fixture(scope="module")
def biopsy_runs():
    X, y = datasets.load_biopsy()  # MASS::biopsy without missing rows: 683 x 9
    assert X.shape == (683, 9)
    return _runs(X, y, range(2), restarts=5, eac_init=True)


@pytest.mark.paper
def test_table1_breast_cancer_eac_initialised(biopsy_runs):
    # Paper: PEnCA 0.947, MM 0.764.  With the EAC average-link start (init = that partition).
    r = biopsy_runs
    assert r["PEnCA-eac"].mean() >= 0.947 - 0.03
    assert r["PEnCA-eac"].mean() > r["MM"].mean()


@pytest.mark.paper
@pytest.mark.xfail(strict=True, reason=(
    "not reproduced: with random starts the likelihood prefers splitting the dense benign "
    "block (683 objects, many duplicates), CI about 0.62-0.71; the EAC start reaches 0.97 "
    "but has a lower likelihood"))
def test_table1_breast_cancer_random_restarts(biopsy_runs):
    assert biopsy_runs["PEnCA"].mean() >= 0.947 - 0.05
