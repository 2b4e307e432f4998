"""MAP-DID: class-conditional mixtures plus the classes' increments law (Aidos & Fred)."""

from __future__ import annotations

import numpy as np
import pytest
from numpyro.infer.util import log_density
from sklearn.model_selection import cross_val_score

import bayesclust
from bayesclust.datasets import load_iris
from bayesclust.graphs import increments
from bayesclust.inference.increments.map_did import map_did_fit, map_did_log_scores, map_did_predict
from bayesclust.models.did import map_did


def test_scores_are_the_programs_joint_density(x64):
    """Summed over the training points (each with its increment inside its class), the
    classifier's joint scores are the NumPyro program's log density at the fitted parameters
    (flat priors add 0)."""
    X, y = load_iris()
    model = map_did_fit(0, X, y, k_max=4)
    w = np.empty(len(y))
    for c in range(3):
        w[y == c] = increments(X[y == c])
    own = np.zeros((len(y), 3))
    own[np.arange(len(y)), y] = w
    scores = map_did_log_scores(model, X, increments_of=own)
    params = {"class_weights": model.class_weights, "component_weights": model.component_weights,
              "means": model.means, "scale_tril": model.scale_tril, "log_lam": np.log(model.lam)}
    lp, _ = log_density(map_did, (X, y, w, 3, model.component_weights.shape[1]), {}, params)
    assert float(lp) == pytest.approx(scores[np.arange(len(y)), y].sum(), rel=1e-9)


def test_fitted_parameters():
    X, y = load_iris()
    model = map_did_fit(0, X, y + 10, k_max=4)
    np.testing.assert_array_equal(model.classes, [10, 11, 12])
    np.testing.assert_allclose(model.class_weights, [1 / 3] * 3)
    np.testing.assert_allclose(model.component_weights.sum(1), 1.0, rtol=1e-6)
    for c in range(3):
        assert model.lam[c] == pytest.approx(increments(X[y == c]).mean(), rel=1e-12)
        g = model.n_components[c]
        assert np.all(model.component_weights[c, g:] == 0)
    assert set(map_did_predict(model, X[:5])) <= {10, 11, 12}


def test_classifier_on_iris_and_its_probabilities():
    X, y = load_iris()
    clf = bayesclust.MAPDIDClassifier(k_max=4, random_state=0)
    acc = cross_val_score(clf, X, y, cv=3).mean()
    assert acc > 0.9
    clf.fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(1)])


def test_bad_input():
    X, y = load_iris()
    with pytest.raises(ValueError, match="two classes"):
        map_did_fit(0, X, np.zeros(len(y), int))
    with pytest.raises(ValueError, match="at least 3 points"):
        map_did_fit(0, X, np.r_[y[:-2], 7, 7])
    with pytest.raises(ValueError, match="one label per row"):
        map_did_fit(0, X, y[:-1])
    model = map_did_fit(0, X, y, k_max=2)
    with pytest.raises(ValueError, match="features"):
        map_did_predict(model, X[:, :3])
    with pytest.raises(ValueError):
        bayesclust.MAPDIDClassifier().fit(X, np.zeros(len(y)))
