r"""``MKLClassifier``: multiclass SPOM with explicit kernel feature maps, scikit-learn style.

Each kernel becomes one feature block (Martins, Smith, Xing, Aguiar & Figueiredo, 2011,
AISTATS, §2: the sparse-MKL regulariser on the blocks is the kernel
:math:`\sum_m\beta_mK_m`), normalised to unit diagonal as in their §4.1:

* ``"linear"``: standardised inputs, each row scaled to unit norm (the normalised linear kernel);
* ``"rbf"``: a Nyström map of :math:`\exp(-\gamma\|x-x'\|^2)` on the standardised inputs
  (``gamma`` default ``1/n_features``), rows scaled to unit norm;
* ``"poly"``: a Nyström map of :math:`(\gamma\langle x,x'\rangle+1)^{\text{degree}}`
  (degree 2), rows scaled to unit norm;
* a callable ``X -> (n, D)`` array: any explicit feature map.

See docs/deviations.md#spom-explicit-feature-blocks for why explicit maps replace the kernel
expansion.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _validation as V
from .spom import kernel_weights, spom, spom_decision

__all__ = ["MKLClassifier", "KERNELS"]

KERNELS = ("linear", "rbf", "poly")


def _unit_rows(F: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0, norms, 1.0)


class MKLClassifier(ClassifierMixin, BaseEstimator):
    r"""Multiclass sparse multiple-kernel learning by SPOM (Martins et al., 2011, Algorithm 3).

    Minimises :math:`\frac\lambda2(\sum_m\|\theta_m\|)^2+\frac1N\sum_i\max_k(f(x_i,k)-f(x_i,y_i)+[k\ne y_i])`
    online (:func:`bayesclust.spom`), one block :math:`\theta_m` per kernel; predicts with the
    averaged model. The learned kernel weights are :math:`\beta_m\propto\|\theta_m\|`.

    Parameters
    ----------
    kernels : sequence of {"linear", "rbf", "poly"} or callables, default ("linear", "rbf", "poly")
        One feature block each (module docstring).
    lam : float > 0, default 1e-4
        :math:`\lambda`; large values make :math:`\beta` sparse.
    n_epochs : int >= 1, default 20
    eta0 : float > 0, default 1.0
        Step sizes :math:`\eta_t=\eta_0/\sqrt t`.
    combination : {"mkl", "average"}, default "mkl"
        ``"average"`` joins the blocks into one, scaled by :math:`1/\sqrt M` (the kernel
        :math:`\frac1M\sum_mK_m`; the penalty is then the SVM's :math:`\frac\lambda2\|\theta\|^2`).
    n_components : int, default 300
        Nyström components of the ``"rbf"`` and ``"poly"`` maps (at most the training size).
    gamma : float or None
        Kernel width of ``"rbf"`` and ``"poly"``; default ``1 / n_features``.
    degree : int, default 2
        Degree of ``"poly"``.
    random_state : int, RandomState or None
        Nyström landmarks and the order of the examples.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    beta_ : ndarray of shape (n_kernels,)
        Learned kernel weights (on the simplex; uniform for ``"average"``).
    theta_ : list of arrays, the averaged model's blocks
    objective_trace_ : ndarray of shape (n_epochs + 1,)
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 4])
    >>> y = np.repeat([0, 1], 40)
    >>> clf = MKLClassifier(kernels=["linear", "rbf"], n_epochs=5, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95, clf.beta_.shape
    (True, (2,))
    """

    _parameter_constraints: dict = {
        "kernels": ["array-like", list, tuple],
        "lam": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "eta0": [Interval(numbers.Real, 0, None, closed="neither")],
        "combination": [StrOptions({"mkl", "average"})],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, kernels=("linear", "rbf", "poly"), lam=1e-4, n_epochs=20, eta0=1.0,
                 combination="mkl", n_components=300, gamma=None, degree=2, random_state=None):
        self.kernels = kernels
        self.lam = lam
        self.n_epochs = n_epochs
        self.eta0 = eta0
        self.combination = combination
        self.n_components = n_components
        self.gamma = gamma
        self.degree = degree
        self.random_state = random_state

    def _check_kernels(self):
        kernels = self.kernels
        if isinstance(kernels, str) or callable(kernels):
            kernels = [kernels]
        kernels = list(kernels)
        if not kernels:
            raise ValueError("kernels must name at least one kernel")
        for m, k in enumerate(kernels):
            if not callable(k) and k not in KERNELS:
                raise ValueError(f"kernels[{m}] must be one of {KERNELS} or a callable, got {k!r}")
        return kernels

    def _fit_maps(self, X, kernels, seed):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(X)
        Z = scaler.transform(X)
        gamma = self.gamma if self.gamma is not None else 1.0 / X.shape[1]
        n_comp = min(self.n_components, X.shape[0])
        maps = []
        for k in kernels:
            if k == "rbf":
                maps.append(Nystroem(kernel="rbf", gamma=gamma, n_components=n_comp,
                                     random_state=seed).fit(Z))
            elif k == "poly":
                maps.append(Nystroem(kernel="poly", gamma=gamma, degree=self.degree, coef0=1.0,
                                     n_components=n_comp, random_state=seed).fit(Z))
            else:
                maps.append(k)
        return scaler, maps

    def _blocks(self, X):
        Z = self._scaler.transform(X)
        blocks = []
        for m, mp in enumerate(self._maps):
            if mp == "linear":
                F = Z
            elif callable(mp) and not hasattr(mp, "transform"):
                F = V.check_array(mp(X), f"kernels[{m}](X)")
            else:
                F = mp.transform(Z)
            if F.shape[0] != X.shape[0]:
                raise ValueError(f"kernels have mismatched sizes: kernels[{m}] maps {X.shape[0]} "
                                 f"rows to {F.shape[0]}")
            blocks.append(_unit_rows(np.asarray(F, np.float64)).astype(np.float32))
        if self.combination == "average":
            blocks = [np.concatenate(blocks, axis=1) / np.sqrt(len(blocks))]
        return blocks

    def fit(self, X, y):
        """Fit the feature maps and run SPOM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), at least two classes

        Returns
        -------
        self
        """
        from sklearn.utils import check_random_state
        from sklearn.utils.multiclass import check_classification_targets
        from sklearn.utils.validation import validate_data

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("y has one class: MKLClassifier needs at least 2 classes")
        kernels = self._check_kernels()
        rs = check_random_state(self.random_state)
        seed = int(rs.randint(np.iinfo(np.int32).max))
        self._scaler, self._maps = self._fit_maps(X, kernels, seed)
        blocks = self._blocks(X)
        res = spom(seed, blocks, yi, self.lam, n_classes=len(self.classes_),
                   n_epochs=self.n_epochs, eta0=self.eta0)
        self.theta_ = res.theta
        self.beta_ = (np.full(len(kernels), 1.0 / len(kernels)) if self.combination == "average"
                      else kernel_weights(res.theta))
        self.objective_trace_ = res.objective_trace
        self.n_iter_ = res.n_iter
        return self

    def decision_function(self, X):
        """Scores :math:`f_\\theta(x,k)`, shape (n_samples, n_classes) ((n_samples,) for 2 classes)."""
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        s = np.asarray(spom_decision(self.theta_, self._blocks(X)), np.float64)
        return s[:, 1] - s[:, 0] if len(self.classes_) == 2 else s

    def predict(self, X):
        """The class of largest score, shape (n_samples,)."""
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if s.ndim == 1 else np.argmax(s, axis=1)
        return self.classes_[idx]
