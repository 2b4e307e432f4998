"""SMIC + LSMI against the second, independent derivation of Sugiyama et al. (2014).

``reproduce/references/smic.py`` was written from the paper alone (a plain NumPy loop of eq. (7),
the eigen-solution and rounding of Fig. 2, LSMI of eqs. (10)-(14) / Fig. 3, the selection of
Fig. 1), without reading the package's implementation.  On the same standardised data and the
same fold split the two must give the same clustering for every candidate t, the same LSMI
values and the same selected t.  (t = 1 and 2 are left out: there the k-NN graph falls apart
into many small components, and the labels of the points outside the top eigenvectors'
components are decided by round-off, docs/deviations.md#smic-toy-b.)
"""

import numpy as np
from sklearn.metrics import adjusted_rand_score

from bayesclust import datasets
from bayesclust._validation import as_rng_key
from bayesclust.inference.information.smic import _lsmi_design, smic_select
from reproduce.references import smic as reference


def test_smic_select_equals_the_independent_reference_on_a_small_toy():
    X, _ = datasets.circle_and_gaussian(0, n_samples=40)
    X = reference.standardize(X)
    candidates = (3, 4, 6)
    sel = smic_select(0, X, 2, candidates=candidates)
    _, fold_ids = _lsmi_design(as_rng_key(0), 40, 200, 5)  # the split smic_select drew
    folds = [np.flatnonzero(fold_ids == m) for m in range(5)]
    ref = reference.smic_with_lsmi(X, 2, 0, ts=candidates, folds=folds)
    for k, t in enumerate(candidates):
        assert adjusted_rand_score(sel.labels[k], ref["labels_by_t"][t]) == 1.0
        np.testing.assert_allclose(sel.lsmi[k], ref["lsmi"][t], rtol=1e-9, atol=1e-12)
    assert sel.t == ref["t"]
    assert adjusted_rand_score(sel.result.labels, ref["labels"]) == 1.0
