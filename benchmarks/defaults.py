"""Every clustering estimator with its defaults on real data: a new user's first hour.

Each estimator of :mod:`bayesclust.estimators` is constructed with its defaults (only
``random_state=0`` where it has one) and fitted on iris, wine (raw and standardised), MASS
biopsy, MASS crabs (the four species-sex groups) and digits reduced to 10 principal
components.  A row gives the number of clusters found, the NMI to the classes, the worse
R-hat of k and the log-likelihood for the sampled mixtures, the wall seconds of ``fit`` (the
first call of each program in the process; JAX's persistent compilation cache, on by
default, may already hold it) and the warnings raised, beside scikit-learn's nearest
estimator with *its* defaults.

Exceptions to "defaults only", because the estimator has no default for them:
``DiscriminativeClustering`` needs auxiliary classes (given the classes themselves, so its
NMI is not an unsupervised score), ``EmbeddedConsensus`` needs ``n_clusters`` (given the
number of classes).  ``MAPDIDClassifier`` is a classifier and is left out.

``--quick``: iris and standardised wine only.  ``--estimators A,B`` and ``--data X,Y``: only
those rows (to re-run what a change touched and merge the rows into a saved run by hand).
"""

from __future__ import annotations

import signal
import time
import warnings

import _common

QUICK_DATASETS = ("iris", "wine-std")
DATASETS = ("iris", "wine", "wine-std", "biopsy", "crabs", "digits-pca10")

#: The estimators (by name in bayesclust.estimators) and scikit-learn's nearest peer with its
#: defaults: (module, class, what it shares with ours).
PEERS = {
    "DPMeans": ("sklearn.cluster", "KMeans"),
    "DPGaussianMixture": ("sklearn.mixture", "BayesianGaussianMixture"),
    "HardHDP": ("sklearn.cluster", "KMeans"),
    "HDPGaussianMixture": ("sklearn.mixture", "BayesianGaussianMixture"),
    "DiscriminativeClustering": ("sklearn.cluster", "KMeans"),
    "CECIB": ("sklearn.mixture", "GaussianMixture"),
    "SpectralDPMeans": ("sklearn.cluster", "SpectralClustering"),
    "PenalizedNormalizedCut": ("sklearn.cluster", "SpectralClustering"),
    "SMIC": ("sklearn.cluster", "SpectralClustering"),
    "EvidenceAccumulation": ("sklearn.cluster", "AgglomerativeClustering"),
    "ACCCS": ("sklearn.cluster", "AgglomerativeClustering"),
    "ConstrainedEAC": ("sklearn.cluster", "AgglomerativeClustering"),
    "AspectConsensus": ("sklearn.cluster", "AgglomerativeClustering"),
    "EmbeddedConsensus": ("sklearn.cluster", "AgglomerativeClustering"),
    "HypergraphConsensus": ("sklearn.cluster", "AgglomerativeClustering"),
    "PairwiseConsensus": ("sklearn.cluster", "AgglomerativeClustering"),
    "SLDID": ("sklearn.cluster", "HDBSCAN"),
    "SLAGLO": ("sklearn.cluster", "HDBSCAN"),
    "GMDID": ("sklearn.mixture", "BayesianGaussianMixture"),
}


def load(name: str):
    """``(X, y)`` of one of the data sets, float64."""
    import numpy as np

    from bayesclust import datasets

    if name == "iris":
        X, y = datasets.load_iris()
    elif name in ("wine", "wine-std"):
        X, y = datasets.load_wine()
    elif name == "biopsy":
        X, y = datasets.load_biopsy()
    elif name == "crabs":
        X, y = datasets.load_crabs("group")
    elif name == "digits-pca10":
        from sklearn.decomposition import PCA

        X, y = datasets.load_digits()
        X = PCA(10, random_state=0).fit_transform(X)
    else:
        raise ValueError(f"unknown data set {name!r}")
    X = np.asarray(X, np.float64)
    if name.endswith("-std"):
        X = (X - X.mean(0)) / X.std(0)
    return X, np.asarray(y)


def _construct(name: str, n_classes: int):
    import inspect

    import bayesclust.estimators as E

    cls = getattr(E, name)
    params = inspect.signature(cls).parameters
    options = {"random_state": 0} if "random_state" in params else {}
    if name == "EmbeddedConsensus":
        options["n_clusters"] = n_classes
    return cls(**options)


def _rhat(model) -> float:
    post = getattr(model, "posterior_", None)
    if post is None:
        return float("nan")
    import math

    diag = post.diagnostics()
    values = [float(diag[q]["rhat"]) for q in ("n_clusters", "log_likelihood")
              if q in diag and math.isfinite(diag[q]["rhat"])]
    return max(values) if values else float("nan")


def fit_ours(name: str, X, y) -> dict:
    import numpy as np
    from sklearn.metrics import normalized_mutual_info_score

    model = _construct(name, len(np.unique(y)))
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if name == "DiscriminativeClustering":
            model.fit(X, y)
        else:
            model.fit(X)
    seconds = time.perf_counter() - t0
    kinds = sorted({w.category.__name__ for w in caught
                    if issubclass(w.category, UserWarning)})
    return {"k": int(len(np.unique(model.labels_[model.labels_ >= 0]))),
            "nmi": float(normalized_mutual_info_score(y, model.labels_)),
            "rhat": _rhat(model), "seconds": seconds, "warnings": ", ".join(kinds) or "-"}


def fit_peer(name: str, X, y, cache: dict) -> dict:
    import importlib
    import inspect

    import numpy as np
    from sklearn.metrics import normalized_mutual_info_score

    module, cls_name = PEERS[name]
    if cls_name not in cache:
        cls = getattr(importlib.import_module(module), cls_name)
        options = {"random_state": 0} if "random_state" in inspect.signature(cls).parameters else {}
        signal.signal(signal.SIGALRM, _peer_timeout)
        signal.alarm(PEER_TIMEOUT)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = np.asarray(cls(**options).fit_predict(X))
        except TimeoutError:
            # SpectralClustering() on digits-pca10: ARPACK's shift-invert LU solves of the
            # graph Laplacian, still running after minutes (BENCHMARKS.md, spectral.py's note)
            cache[cls_name] = {"peer": f"{cls_name}() (not finished in {PEER_TIMEOUT} s)",
                               "peer_k": -1, "peer_nmi": float("nan")}
            return cache[cls_name]
        finally:
            signal.alarm(0)
        k = len(np.unique(labels[labels >= 0]))
        cache[cls_name] = {"peer": f"{cls_name}()", "peer_k": int(k),
                           "peer_nmi": float(normalized_mutual_info_score(y, labels))}
    return cache[cls_name]


#: Seconds a peer's fit may take before its row says it did not finish.
PEER_TIMEOUT = 300


def _peer_timeout(signum, frame):
    raise TimeoutError


def main():
    p = _common.parser(__doc__, "iris and standardised wine only")
    p.add_argument("--estimators", default=None, help="comma-separated estimator names (default: all)")
    p.add_argument("--data", default=None, help=f"comma-separated data sets of {DATASETS} (default: all)")
    args = p.parse_args()
    import numpy as np

    import bayesclust.estimators as E

    _common.emit(_common.environment("defaults.py", ("jax", "numpyro", "sklearn")))
    _common.emit({"benchmark": "defaults_real", "note": (
        "Every clustering estimator constructed with its defaults (random_state=0) on real data; "
        "k = clusters found, nmi = NMI to the classes, rhat = worse R-hat of k and the "
        "log-likelihood (sampled mixtures), seconds = wall time of fit on the shared 2-core "
        "machine (first call in the process, JAX's persistent compilation cache warm), warnings = the UserWarning classes raised. The peer is "
        "scikit-learn's nearest estimator with its own defaults. DiscriminativeClustering is "
        "given the classes as its auxiliary data, EmbeddedConsensus the number of classes "
        "(neither has a default); wine is raw and standardised, crabs the four species-sex "
        "groups, digits its first 10 principal components.")})
    names = [n for n in E.__all__ if n in PEERS]
    if args.estimators:
        wanted = args.estimators.split(",")
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            raise SystemExit(f"--estimators: unknown {unknown}; known: {names}")
        names = [n for n in names if n in wanted]
    sets = QUICK_DATASETS if args.quick else DATASETS
    if args.data:
        unknown = sorted(set(args.data.split(",")) - set(DATASETS))
        if unknown:
            raise SystemExit(f"--data: unknown {unknown}; known: {DATASETS}")
        sets = [d for d in DATASETS if d in args.data.split(",")]
    for data in sets:
        X, y = load(data)
        cache: dict = {}
        for name in names:
            try:
                ours = fit_ours(name, X, y)
            except Exception as err:  # a default that fails is a result too
                ours = {"k": -1, "nmi": float("nan"), "rhat": float("nan"), "seconds": float("nan"),
                        "warnings": f"error: {type(err).__name__}: {str(err)[:80]}"}
            row = {"benchmark": "defaults_real", "data": data, "n": int(X.shape[0]),
                   "d": int(X.shape[1]), "classes": int(len(np.unique(y))), "estimator": name,
                   **ours, **fit_peer(name, X, y, cache)}
            _common.emit(row)


if __name__ == "__main__":
    main()
