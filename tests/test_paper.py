"""Quick rows of the Kulis & Jordan (2012) reproductions (the full runs: ``make reproduce
PAPER=kulis_jordan_2012``, reported in REPRODUCTION.md).

Table 1's protocol (docs/deviations.md#kj-table1-protocol): each run takes a fresh random 70%
clustering split, k = the number of classes, DP-means' lambda by farthest-first at that k, raw
features, arithmetic NMI, averaged over the runs.  Here: Iris over the report's 20 runs (Wine is
in the report), the three-Gaussians data over 20 of the report's 100 draws.  §6.3's quick row (hard
HDP on the grouped synthetic data) is tests/test_hard_hdp.py's; its comparison with the pooled
baselines is the report's row ``kj-hdp-beats-pooled`` and runs under ``make test-all``
(docs/testing.md).
"""

import numpy as np
import pytest

from reproduce import kulis_jordan_2012 as kj

pytestmark = pytest.mark.paper


def test_table1_iris():
    """KJ Table 1: DP-means NMI Iris .75 (k-means .76), within 0.03."""
    dpm, km, ks = kj.table1_runs("iris", range(20))
    assert np.mean(dpm) == pytest.approx(0.75, abs=0.03), (np.mean(dpm), np.mean(ks))
    assert np.mean(km) == pytest.approx(0.76, abs=0.03), np.mean(km)


def test_three_gaussians_nmi_and_iterations():
    """KJ §6.2 / Fig. 2: DP-means returns 3 clusters, NMI .89 on average, within 8 iterations
    (the data set is our calibrated stand-in: docs/deviations.md#three-gaussians-stand-in)."""
    nmis, ks, iters = kj.three_gaussians_runs(range(20))
    assert np.mean(nmis) == pytest.approx(0.89, abs=0.04)
    assert np.mean(np.array(ks) == 3) >= 0.9
    assert np.mean(np.array(iters) <= 9) >= 0.85


# Three pooled baselines compiled at the 50 data sets' total size: the report's `kj-hdp-beats-pooled`
# row; `make test-all` (docs/testing.md).
@pytest.mark.long
def test_hdp_synthetic_hard_hdp_beats_pooled_baselines():
    """KJ §6.3: hard HDP beats pooled k-means and DP-means (on the same draw), with about 17
    global and 4.4 local clusters.  ``benchmarks/hdp.py`` runs the per-data-set baselines too."""
    h = kj.hdp_synthetic_runs([0])
    print(h)
    assert all(h["converged"])
    assert h["hdp"][0] > max(h["kmeans"][0], h["kmeanspp"][0], h["dp_means"][0])
    assert 12 <= h["n_global"][0] <= 26  # KJ: 17 (k = 15 true components)
    assert 3.5 <= h["n_local"][0] <= 5.5  # KJ: 4.4 (5 components per data set)
