"""The second derivation of SL-DID and SL-AGLO (``reproduce/references/sl_did.py``, written from
Aidos & Fred 2011 alone) against the package's ``sl_did`` / ``sl_aglo`` on a tiny data set.

The reference is run with the package's three choices where the paper is silent (mean
increments floored at the smallest positive increment of the data, a cluster under 3 points
judged by its points' increments inside the union, ties in distance by smallest point); with
them the two take the same decisions and return the same partition."""

import numpy as np
import pytest

from bayesclust import sl_aglo, sl_did
from bayesclust.datasets import load_biopsy
from reproduce.references import sl_did as ref


def _tiny():
    rng = np.random.default_rng(3)
    truth = np.repeat([0, 1, 2], [14, 10, 8])
    centres = np.array([[0.0, 0.0], [7.0, 0.0], [0.0, 9.0]])
    X = rng.normal(size=(truth.size, 2)) * np.array([1.0, 0.6, 1.4])[truth, None] + centres[truth]
    return X, truth


def test_reference_and_package_sl_did_agree_on_a_tiny_data_set():
    X, truth = _tiny()
    for tail in (2.0, 3.0, 7.0):  # three different partitions: the tail, MDL and small-cluster tests all act
        ours = sl_did(X, tail_factor=tail)
        mine = ref.sl_did(X, floor=True, small_inc="union", ties="points", tail=tail)
        np.testing.assert_array_equal(mine, ours.labels)
    assert ref.consistency_index(truth, mine) == 1.0
    # the paper's literal small-cluster rule (no increments, nothing in the tail: merge) differs
    assert not np.array_equal(ref.sl_did(X, tail=3.0), sl_did(X, tail_factor=3.0).labels)


def test_reference_and_package_sl_aglo_agree_on_a_tiny_data_set():
    X, _ = _tiny()
    for tau in (2.0, 4.0):
        ours = sl_aglo(X, tau=tau)
        mine = ref.sl_aglo(X, tau, small=6, floor=True, ties="points")
        np.testing.assert_array_equal(mine, ours.labels)


def test_reference_did_density_is_the_papers_equation_6():
    w = np.linspace(0.0, 6.0, 13)
    np.testing.assert_allclose(np.exp(ref.did_logpdf(w, 0.8)), ref.did_pdf_direct(w, 0.8), rtol=1e-12, atol=1e-300)
    assert abs(ref.C_FISHER - 1.8869535) < 1e-6


def test_sl_did_keeps_exact_ties_of_integer_data():
    """MASS biopsy's scores are integers: many distances tie exactly, and the order of tied pairs
    decides the partition.  Translating by an integer keeps every tie, so the partition must not
    change (centring the data first broke ties by rounding: 19 clusters, 18 after ``X + 8``)."""
    X, _ = load_biopsy()
    np.testing.assert_array_equal(sl_did(X).labels, sl_did(X + 8.0).labels)


@pytest.mark.long
def test_reference_and_package_agree_on_biopsy():
    X, y = load_biopsy()
    ours = sl_did(X)
    mine = ref.sl_did(X, floor=True, small_inc="union", ties="points")
    np.testing.assert_array_equal(mine, ours.labels)
    assert ours.n_clusters == 18
    for tau in (3.0, 8.0):
        np.testing.assert_array_equal(ref.sl_aglo(X, tau, small=6, floor=True, ties="points"),
                                      sl_aglo(X, tau=tau).labels)
