"""SPOM (Martins et al. 2011): time per epoch against scikit-learn's SGDClassifier on the same
features, and the proximity operators at M = 10^6 against NumPy.

Prints JSON lines:

* ``spom_epoch_vs_sgd``: digits (1,797 x 64), the three unit-normalised feature blocks of
  ``MKLClassifier`` (standardised pixels, Nyström RBF and degree-2 polynomial maps, 300
  components each; 664 features in all), 10 classes. One SPOM epoch (Algorithm 3: a
  loss-augmented argmax, a gradient step on the (10, D_m) blocks, Algorithm 2 on the three
  block norms, the projection, the running average; plus the objective of the averaged model
  over all rows, which the driver records every epoch) against one epoch of
  ``SGDClassifier(loss="hinge")`` on the concatenated features (one-vs-rest: 10 binary passes).
  Steady time per epoch = (time of 2E epochs - time of E epochs) / E, compile excluded;
  ratio = SPOM / SGD. Test accuracies (30% held out) after 20 epochs for context.
* ``prox_vs_numpy``: ``prox_l1_squared`` (Alg. 2; as printed, with XLA's sort, and
  ``method="pivot"``, sort-free), ``prox_l1_squared_weighted`` (Alg. 4) and
  ``soft_threshold`` at M = 10^6 (float32, jitted, warm) against a NumPy transcription of the same
  algorithm (sort, cumulative sums); least of ``reps`` calls; ratio = JAX / NumPy and the
  largest difference.

Usage: python benchmarks/spom.py [--quick] [--reps R]

``--quick``: 5 epochs, M = 10^5 (< 60 s).
"""

from __future__ import annotations

import _common as bench
import numpy as np


def numpy_prox_l1_squared(x, lam):
    y = -np.sort(-np.abs(x))
    j = np.arange(1, len(x) + 1)
    c = np.cumsum(y)
    active = y - lam / (1 + j * lam) * c > 0
    rho = np.flatnonzero(active)[-1] + 1 if active.any() else 0
    tau = lam * c[rho - 1] / (1 + rho * lam) if rho else 0.0
    return np.sign(x) * np.maximum(np.abs(x) - tau, 0)


def numpy_prox_weighted(x, lam, d):
    u0, a = np.abs(x) / d, d * d
    o = np.argsort(-u0)
    ca, cau = np.cumsum(a[o]), np.cumsum(a[o] * u0[o])
    active = u0[o] - lam / (1 + lam * ca) * cau > 0
    rho = np.flatnonzero(active)[-1] + 1 if active.any() else 0
    tau = lam * cau[rho - 1] / (1 + lam * ca[rho - 1]) if rho else 0.0
    return np.sign(x) * d * np.maximum(u0 - tau, 0)


def epoch_row(epochs, reps):
    from sklearn.linear_model import SGDClassifier
    from sklearn.model_selection import train_test_split

    from bayesclust import MKLClassifier, datasets, spom, spom_predict

    X, y = datasets.load_digits()
    clf = MKLClassifier(n_epochs=1, random_state=0).fit(X, y)
    blocks = [np.asarray(b) for b in clf._blocks(X)]
    joined = np.concatenate(blocks, axis=1)

    def run_spom(e):
        return spom(0, blocks, y, 1e-4, n_epochs=e).objective

    run_spom(1)  # compile
    t1 = bench.least_seconds(lambda: run_spom(epochs), reps)
    t2 = bench.least_seconds(lambda: run_spom(2 * epochs), reps)
    spom_epoch = (t2 - t1) / epochs

    def run_sgd(e):
        return SGDClassifier(loss="hinge", alpha=1e-4, max_iter=e, tol=None, random_state=0).fit(joined, y)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached: the point
        s1 = bench.least_seconds(lambda: run_sgd(epochs), reps)
        s2 = bench.least_seconds(lambda: run_sgd(2 * epochs), reps)
    sgd_epoch = (s2 - s1) / epochs

    idx_tr, idx_te = train_test_split(np.arange(len(y)), test_size=0.3, random_state=0, stratify=y)
    res = spom(0, [b[idx_tr] for b in blocks], y[idx_tr], 1e-4, n_epochs=20)
    acc_spom = float(np.mean(spom_predict(res.theta, [b[idx_te] for b in blocks]) == y[idx_te]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd = SGDClassifier(loss="hinge", alpha=1e-4, max_iter=20, tol=None, random_state=0)
        acc_sgd = float(sgd.fit(joined[idx_tr], y[idx_tr]).score(joined[idx_te], y[idx_te]))
    return {"benchmark": "spom_epoch_vs_sgd", "n": int(len(y)), "features": int(joined.shape[1]),
            "blocks": len(blocks), "spom_ms_per_epoch": 1e3 * spom_epoch,
            "sgd_ms_per_epoch": 1e3 * sgd_epoch, "ratio": spom_epoch / sgd_epoch,
            "spom_test_acc": acc_spom, "sgd_test_acc": acc_sgd}


def prox_rows(m, reps):
    import jax

    import bayesclust as bc

    rng = np.random.default_rng(0)
    x = rng.normal(size=m).astype(np.float32)
    d = rng.uniform(0.5, 2.0, size=m).astype(np.float32)
    lam = 1e-4
    xj, dj = jax.device_put(x), jax.device_put(d)
    cases = [
        ("prox_l1_squared", lambda: bc.prox_l1_squared(xj, lam), lambda: numpy_prox_l1_squared(x, lam)),
        ("prox_l1_squared pivot", lambda: bc.prox_l1_squared(xj, lam, method="pivot"),
         lambda: numpy_prox_l1_squared(x, lam)),
        ("prox_l1_squared_weighted", lambda: bc.prox_l1_squared_weighted(xj, lam, dj),
         lambda: numpy_prox_weighted(x, lam, d)),
        ("soft_threshold", lambda: bc.soft_threshold(xj, 0.5),
         lambda: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0)),
    ]
    rows = []
    for name, fj, fn in cases:
        got = np.asarray(fj())  # compile
        ref = fn()
        tj = bench.least_seconds(fj, reps)
        tn = bench.least_seconds(fn, reps)
        rows.append({"benchmark": "prox_vs_numpy", "operator": name, "M": m, "jax_ms": 1e3 * tj,
                     "numpy_ms": 1e3 * tn, "ratio": tj / tn,
                     "zeros": int(np.sum(got == 0)),
                     "max_abs_diff": float(np.max(np.abs(got - ref)))})
    return rows


def main():
    p = bench.parser(__doc__, "5 epochs, M = 10^5 (< 60 s)")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    bench.emit(bench.environment("spom.py", ("jax", "sklearn")))
    bench.emit(epoch_row(5 if args.quick else 10, args.reps))
    for row in prox_rows(10**5 if args.quick else 10**6, args.reps):
        bench.emit(row)


if __name__ == "__main__":
    main()
