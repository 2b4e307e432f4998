"""Reproductions of Aidos & Fred (2011), "Hierarchical clustering with high order
dissimilarities" (MLDM), Tables 2 and 3: SL-DID, and single / average link with the number of
clusters chosen by G-DID, on Iris and MASS biopsy (the offline rows)."""

from __future__ import annotations

import pytest
from scipy.cluster.hierarchy import linkage

from bayesclust.datasets import load_biopsy, load_iris
from bayesclust.inference.increments.did_hierarchy import gdid_cut, sl_did
from bayesclust.metrics import consistency_index, purity

pytestmark = pytest.mark.paper

# (CI, number of clusters, CI*) of SL-DID in Tables 2 / 3
SL_DID = {"iris": (0.6667, 2, 0.6667), "biopsy": (0.3748, 12, 0.6691)}
LOADERS = {"iris": load_iris, "biopsy": load_biopsy}


@pytest.fixture(scope="module")
def sl_did_runs():
    return {name: (LOADERS[name]()[1], sl_did(LOADERS[name]()[0])) for name in SL_DID}


@pytest.mark.parametrize("name", sorted(SL_DID))
def test_sl_did_consistency(sl_did_runs, name):
    """Iris: CI .6600 with 3 clusters (a single point stays apart), CI* .6667; biopsy: CI .3704,
    CI* .6691 -- both within .02 of the tables."""
    ci, _, ci_star = SL_DID[name]
    y, res = sl_did_runs[name]
    assert consistency_index(y, res.labels) == pytest.approx(ci, abs=0.02)
    assert purity(y, res.labels) == pytest.approx(ci_star, abs=0.02)


def test_sl_did_number_of_clusters_on_iris(sl_did_runs):
    y, res = sl_did_runs["iris"]
    assert abs(res.n_clusters - SL_DID["iris"][1]) <= 1


@pytest.mark.xfail(strict=True, reason=(
    "MASS biopsy: SL-DID finds 18 clusters (the table: 12) with the same CI (.3704 vs .3748) and "
    "CI* (.6691): 14 of them are groups of 7-27 repeated benign rows (one distinct point), whose "
    "mean increment 0 is floored at the data's smallest positive increment, so their gap is in "
    "the tail as soon as they reach 6 points (docs/deviations.md#did-zero-increments)"))
def test_sl_did_number_of_clusters_on_biopsy(sl_did_runs):
    y, res = sl_did_runs["biopsy"]
    assert abs(res.n_clusters - SL_DID["biopsy"][1]) <= 1


@pytest.mark.xfail(strict=True, reason=(
    "the paper's G-DID is built on a probabilistic attributed graph it does not describe; ours "
    "(docs/deviations.md#gdid-index) cuts Iris' single link at 8 clusters (CI .6533) and "
    "average link at 6 (CI .7933), the tables at 2 (CI .6667)"))
@pytest.mark.parametrize("method", ["single", "average"])
def test_linkage_with_gdid_on_iris(method):
    X, y = load_iris()
    cut = gdid_cut(X, linkage(X, method))
    assert abs(cut.n_clusters - 2) <= 1
    assert consistency_index(y, cut.labels) == pytest.approx(0.6667, abs=0.02)
