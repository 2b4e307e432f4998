"""Quick row of the PPC reproduction (Rota Bulò, Lourenço, Fred & Pelillo 2010, Fig. 2): PPC
against linkage consensus on the union ensemble E_All of §4.4 on Iris; breast cancer and its
Fig. 4 (the malignant cluster's higher assignment entropy) are in the report (``make reproduce
PAPER=simbad_eac``, REPRODUCTION.md).

The ensemble: single, complete and average link and k-means, each run N = 100 times (the paper's
number) for every K of Table 1's list on random 90 % sub-samples; PPC and the three linkages
get the true number of classes.  The paper gives bar plots: PPC on C_All equals or beats the
best linkage.  Measured (consistency index): Iris PPC .907, single .693, average .747, complete
.747.

PPC's quick row in ``make test`` is tests/test_ppc.py's (Fig. 2's k-means ensemble C_KM on Iris):
this union-ensemble run (400 linkage and k-means partitions per K) is the report's rows
``ppc-fig2-iris-vs-linkage`` and ``ppc-fig2-iris-ci`` and runs under ``make test-all``
(docs/testing.md).
"""

import pytest

from reproduce.simbad_eac import ppc_union


@pytest.mark.paper
@pytest.mark.long
def test_ppc_on_the_union_ensemble_at_least_matches_the_best_linkage_iris():
    y, res, ci, links = ppc_union("iris", 0)
    assert res.labels.shape == y.shape
    assert ci >= max(links.values()), (ci, links)
    assert ci > 0.9, ci
    assert not res.isolated.any()
