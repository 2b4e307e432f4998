"""Reproductions of Aidos & Fred (2012), "Statistical modeling of dissimilarity increments for
d-dimensional data: application in partitional clustering", Tables 3 and 4, on the offline rows
(Iris and MASS biopsy)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage

from bayesclust.datasets import load_biopsy, load_iris
from bayesclust.inference.hard.kmeans import kmeans
from bayesclust.metrics import consistency_index

pytestmark = pytest.mark.paper

#: Table 4: CI (%) of the baselines forced to the true number of classes.
TABLE4 = {
    "iris": {"kmeans": 89.33, "single": 68.00, "average": 90.67, "complete": 84.00, "ward": 89.33},
    "biopsy": {"kmeans": 96.05, "single": 65.15, "average": 94.29, "complete": 85.21, "ward": 96.63},
}
LOADERS = {"iris": load_iris, "biopsy": load_biopsy}


def ci_percent(y, labels):
    return round(100 * consistency_index(y, labels), 2)


@pytest.mark.parametrize("name", sorted(TABLE4))
@pytest.mark.parametrize("method", ["single", "average", "ward"])
def test_table4_linkages(name, method):
    X, y = LOADERS[name]()
    labels = fcluster(linkage(X, method), len(np.unique(y)), criterion="maxclust")
    assert ci_percent(y, labels) == TABLE4[name][method]


def test_table4_complete_link():
    """Iris exactly; on biopsy (234 repeated rows) complete link's merges tie, and the partition
    depends on the order of the rows: 81.11 in the stored order, 81.41 to 93.41 over 40 random
    orders -- the paper's 85.21 lies inside that spread."""
    X, y = load_iris()
    assert ci_percent(y, fcluster(linkage(X, "complete"), 3, criterion="maxclust")) == 84.00
    X, y = load_biopsy()
    spread = []
    for seed in range(40):
        p = np.random.default_rng(seed).permutation(len(y))
        spread.append(ci_percent(y[p], fcluster(linkage(X[p], "complete"), 2, criterion="maxclust")))
    assert min(spread) < TABLE4["biopsy"]["complete"] < max(spread)
    assert max(spread) - min(spread) > 5


# Iris is the quick row; breast cancer's (20 k-means runs at n = 683) is the report's row
# gmdid-t4-biopsy-kmeans and runs under `make test-all` (docs/testing.md).
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n == "biopsy" else n
                                  for n in sorted(TABLE4)])
def test_table4_kmeans(name):
    """The best of 20 k-means runs (least sum of squares) at the true K."""
    X, y = LOADERS[name]()
    K = len(np.unique(y))
    runs = [kmeans(k, X, K) for k in jax.random.split(jax.random.PRNGKey(0), 20)]
    best = min(runs, key=lambda r: float(r.objective))
    assert ci_percent(y, np.asarray(best.labels)) == TABLE4[name]["kmeans"]


# --- Table 3: GMDID with the MDL criterion, known K as a lower bound ---
# Quick rows: Iris on 3 seeds.  The report (make reproduce PAPER=simbad_did) takes the median of
# 10 seeds on Iris and MASS biopsy, both starts; biopsy's GMDID merges down to the two classes
# where the table keeps 3 clusters (docs/deviations.md#gmdid-biopsy).


@pytest.fixture(scope="module")
def table3():
    from reproduce.simbad_did import table3_runs

    return {init: table3_runs("iris", init, range(3)) for init in ("random", "kmeans")}


def test_gmdid_iris_random_start(table3):
    """Paper 98.00 with 3 clusters; ours 96.67 with 3."""
    r = table3["random"]
    assert np.median(r["gmdid_ci"]) == pytest.approx(98.00, abs=4) and abs(np.median(r["gmdid_k"]) - 3) <= 1


@pytest.mark.parametrize("init", ["random", "kmeans"])
def test_merging_never_hurts(table3, init):
    """The paper's claim GMDID_M >= GMD, on the median CI."""
    assert np.median(table3[init]["gmdid_ci"]) >= np.median(table3[init]["gmd_ci"])
