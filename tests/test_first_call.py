"""The cost of a first call: what compiles, what is cached on disk, what ``import`` loads.

No timings here: compiles are counted (the jitted functions' own caches), the
persistent cache is checked by its files and JAX's cache-hit log, and the
imports by ``sys.modules`` of a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import bayesclust.inference.hard.dp_means as dpm
from bayesclust.kernels import padded_rows, sum_rows

ROOT = Path(__file__).resolve().parents[1]


def _blobs(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=8.0, size=(k, d))
    return (centres[rng.integers(k, size=n)] + rng.normal(size=(n, d))).astype(np.float32)


def _unpadded(monkeypatch):
    monkeypatch.setattr(dpm, "_pad_to", lambda n: n)


# --- shape buckets ------------------------------------------------------------------------


def test_padded_rows_grid():
    assert [padded_rows(n) for n in (1, 32, 33, 40, 41, 150, 1000)] == [32, 32, 40, 40, 48, 160, 1024]
    for n in range(1, 5000):
        m = padded_rows(n)
        assert n <= m <= max(32, 1.25 * n)


def test_sum_rows_ignores_trailing_zero_rows():
    rng = np.random.default_rng(1)
    for n in (3, 150, 1000, 4097, 20_001):
        v = (rng.normal(size=(n, 3)) * rng.exponential(size=(n, 1))).astype(np.float32)
        padded = np.concatenate([v, np.zeros((padded_rows(n) - n, 3), np.float32)])
        np.testing.assert_array_equal(np.asarray(sum_rows(padded)), np.asarray(sum_rows(v)))
        np.testing.assert_allclose(np.asarray(sum_rows(v)), v.astype(np.float64).sum(0), rtol=1e-4,
                                   atol=1e-3)


@pytest.mark.parametrize(
    "n, d, n_clusters",
    [
        (150, 4, 50),  # iris-sized: a padded tail inside one candidate block
        (3_000, 16, 20),
        # > 16 native blocks of 384 rows: the padded run would split the partial sums
        # differently if the parts were sized from all rows
        (16_500, 3, 10),
    ],
)
def test_padded_fit_equals_unpadded(monkeypatch, n, d, n_clusters):
    X = _blobs(n, d, 8, seed=n)
    assert padded_rows(n) > n
    lam = dpm.farthest_first_lambda(X, n_clusters)
    padded = dpm.dp_means(X, lam)
    _unpadded(monkeypatch)
    assert dpm.farthest_first_lambda(X, n_clusters) == lam
    plain = dpm.dp_means(X, lam)
    np.testing.assert_array_equal(padded.labels, plain.labels)
    np.testing.assert_array_equal(padded.centers, plain.centers)
    assert padded.objective == plain.objective
    np.testing.assert_array_equal(padded.objective_trace, plain.objective_trace)
    assert (padded.n_iter, padded.converged) == (plain.n_iter, plain.converged)


def test_trace_in_pieces_equals_one_buffer(monkeypatch):
    """More iterations than the trace buffer holds: the driver's pieces make one trace."""
    X = _blobs(2_000, 2, 30, seed=3)
    lam = dpm.farthest_first_lambda(X, 40)
    whole = dpm.dp_means(X, lam, max_iter=12)
    monkeypatch.setattr(dpm, "_TRACE_LEN", 4)  # pieces of 3 iterations
    pieces = dpm.dp_means(X, lam, max_iter=12)
    assert whole.n_iter > 3
    assert pieces.n_iter == whole.n_iter
    np.testing.assert_array_equal(pieces.objective_trace, whole.objective_trace)
    np.testing.assert_array_equal(pieces.labels, whole.labels)
    assert pieces.converged == whole.converged


# --- no compile for a new scalar or a few more rows ----------------------------------------


@contextlib.contextmanager
def _compiles():
    """The XLA compilations (jitted or eager, any function) run inside the block, as a list."""
    from jax import monitoring

    seen = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            seen.append(duration)

    monitoring.register_event_duration_secs_listener(listener)
    try:
        yield seen
    finally:
        monitoring.unregister_event_duration_listener(listener)


def test_dp_means_scalars_and_nearby_n_do_not_recompile():
    X = _blobs(300, 5, 4, seed=7)
    lam = dpm.farthest_first_lambda(X, 4)
    dpm.dp_means(X, lam)
    runs, farthest = dpm._run._cache_size(), dpm._farthest_first._cache_size()
    inits = dpm._initial._cache_size()
    lam2 = lam * 1.1
    assert dpm._initial_capacity(X, np.ones(300, np.float32), lam2) == dpm._initial_capacity(
        X, np.ones(300, np.float32), lam)
    dpm.dp_means(X, lam2)  # another penalty
    dpm.dp_means(X, lam, max_iter=7)  # another iteration cap
    dpm.dp_means(X, lam, max_iter=1000)
    dpm.dp_means(X, lam, max_clusters=50)
    dpm.dp_means(np.vstack([X, X[:7] + 0.5]), lam)  # seven more rows, same bucket
    dpm.dp_means(X[:-13], lam)  # a fold
    dpm.farthest_first_lambda(X, 9)  # another number of clusters
    dpm.farthest_first_lambda(X[:-13], 4)
    assert dpm._run._cache_size() == runs
    assert dpm._initial._cache_size() == inits
    assert dpm._farthest_first._cache_size() == farthest


def test_initial_capacity_avoids_a_regrow():
    """Fifty well-separated clusters: the buffer starts big enough, one loop compile."""
    X = _blobs(5_000, 8, 50, seed=11)
    lam = dpm.farthest_first_lambda(X, 50)
    before = dpm._run._cache_size()
    res = dpm.dp_means(X, lam)
    assert res.n_clusters >= 40
    assert dpm._run._cache_size() - before <= 1


def test_estimator_refit_and_predict_do_not_recompile():
    from bayesclust import DPMeans

    X = _blobs(200, 3, 3, seed=5)
    est = DPMeans(n_clusters=3).fit(X)
    est.predict(X)
    sizes = (dpm._run._cache_size(), dpm._farthest_first._cache_size())
    from bayesclust.estimators import _base

    predicts = _base._nearest_index._cache_size()
    with _compiles() as seen:  # any program, eager operations included (k-means++ restarts)
        DPMeans(n_clusters=3, max_iter=50).fit(np.vstack([X, X[:7]])).predict(X[:-5])
    assert seen == []
    assert (dpm._run._cache_size(), dpm._farthest_first._cache_size()) == sizes
    assert _base._nearest_index._cache_size() == predicts


def test_hard_hdp_estimator_refit_on_seven_more_rows_does_not_compile():
    """240 rows (the groups of test_hard_hdp_scalars_do_not_recompile), then 247: one bucket."""
    from bayesclust import HardHDP

    X = np.concatenate([_blobs(80, 3, 3, seed=s) for s in range(3)])
    gid = np.repeat(np.arange(3), 80)
    est = HardHDP(lam_local=4.0, lam_global=30.0)
    first = est.fit(X, group_ids=gid).labels_
    X7, gid7 = np.vstack([X, X[:7] + 0.5]), np.concatenate([gid, np.zeros(7, int)])
    with _compiles() as seen:
        est.fit(X7, group_ids=gid7)
    assert seen == []
    assert est.labels_.shape == (247,) and est.n_clusters_ >= 2
    np.testing.assert_array_equal(HardHDP(lam_local=4.0, lam_global=30.0).fit(
        X, group_ids=gid).labels_, first)


@pytest.mark.parametrize("n", [1, 157, 1700])  # 1700: two rounds of sort keys
def test_bucketed_permutation_is_jax_random_permutation(n):
    import jax

    from bayesclust.inference._driver import permutation

    for key in (jax.random.PRNGKey(n), jax.random.key(n + 1)):
        np.testing.assert_array_equal(permutation(key, n), jax.random.permutation(key, n))


def test_smic_estimator_refit_on_seven_more_rows_does_not_compile():
    from bayesclust import SMIC

    X = _blobs(150, 4, 3, seed=2)
    options = dict(n_clusters=3, t=7, n_basis=20, n_folds=2, random_state=0)
    SMIC(**options).fit(X)
    with _compiles() as seen:
        est = SMIC(**options).fit(np.vstack([X, X[:7] + 0.5]))
    assert seen == []
    assert est.labels_.shape == (157,) and np.isfinite(est.lsmi_).all()


#: Small searches: what compiles, not accuracy.
_CONSENSUS = {
    "PairwiseConsensus": dict(n_clusters=3, n_init=1, max_iter=20),
    "AspectConsensus": dict(n_clusters=3, n_init=1, max_iter=20),
    "ACCCS": dict(n_clusters=3, population=4, generations=2),
}


def _noisy_ensemble(n, m=8, k=3, seed=0):
    """``m`` partitions of ``n`` objects: blocks of ``k`` with a tenth of the labels redrawn."""
    rng = np.random.default_rng(seed)
    parts = np.tile(np.arange(n) % k, (m, 1))
    flip = rng.random((m, n)) < 0.1
    parts[flip] = rng.integers(k, size=int(flip.sum()))
    return parts


@pytest.mark.parametrize("method", list(_CONSENSUS))
def test_consensus_estimator_refit_on_seven_more_rows_does_not_compile(method):
    """25 objects, then 32 (one shape bucket): PPC's objects, PEnCA's columns of B and
    ACCCS's k-means starts are padded, the co-association's pairs to a power of two."""
    import bayesclust

    X, parts = _blobs(25, 2, 3, seed=2), _noisy_ensemble(25)
    est = getattr(bayesclust, method)(**_CONSENSUS[method], random_state=0)
    est.fit(X, ensemble=parts)
    with _compiles() as seen:
        est.fit(np.vstack([X, X[:7] + 0.5]), ensemble=np.hstack([parts, parts[:, :7]]))
    assert seen == []
    assert est.labels_.shape == (32,) and set(est.labels_.tolist()) <= {0, 1, 2}


def test_kmeans_plus_plus_start_at_seven_more_rows_does_not_compile():
    """CEC-IB's k-means++ start (kmeans_init) is drawn from rows padded to a shape bucket."""
    from bayesclust.inference.hard.kmeans import kmeans_init

    X = _blobs(25, 2, 3, seed=2)
    first = kmeans_init(0, X, 3, init="k-means++")
    with _compiles() as seen:
        kmeans_init(0, np.vstack([X, X[:7] + 0.5]), 3, init="k-means++")
    assert seen == []
    assert first.shape == (3, 2) and all((X == c).all(axis=1).any() for c in first)  # data points


def test_map_did_refit_with_seven_more_rows_in_one_class_does_not_compile():
    """A class of 50 rows grows to 57 (across gmd's own bucket edge at 56): the classes' fits
    pad to powers of two, and the refit reuses the compiled EM."""
    from bayesclust import MAPDIDClassifier

    X = _blobs(150, 4, 3, seed=2)
    y = np.repeat(np.arange(3), 50)
    clf = MAPDIDClassifier(k_max=2, random_state=0).fit(X, y)
    with _compiles() as seen:
        clf.fit(np.vstack([X, X[:7] + 0.01]), np.r_[y, y[:7]])
    assert seen == []
    assert clf.predict(X).shape == (150,)


def test_padded_consensus_fits_equal_unpadded(monkeypatch):
    """k-means, PPC and PEnCA EM on padded rows / objects give the unpadded fit bit for bit."""
    import jax

    import bayesclust.inference.consensus.aspect_em as ae
    import bayesclust.inference.consensus.ppc as pp
    import bayesclust.inference.hard.kmeans as km
    from bayesclust.inference.consensus.coassociation import coassociation

    X = _blobs(37, 3, 3, seed=4)  # padded to 40
    w = np.random.default_rng(0).exponential(size=37).astype(np.float32)
    ens = coassociation(_noisy_ensemble(37, m=6, seed=1))

    def fits():
        with jax.enable_x64(True):
            return (km.kmeans(1, X, 3, init="k-means++", sample_weight=w, n_init=2),
                    km.kmeans_init(2, X, 3),
                    pp.ppc(1, ens, 3, n_init=2, max_iter=40, mask_diagonal=True),
                    ae.aspect_em(1, ens, 3, n_init=2, max_iter=40, alpha_p=1.5, alpha_B=1.5))

    padded = fits()
    for module in (km, pp, ae):
        monkeypatch.setattr(module, "_pad_to", lambda n: n)
    plain = fits()
    for a, b in zip(padded, plain):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


# --- import and the persistent cache, in fresh interpreters -------------------------------


def _python(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR",)}
    full.update(env)
    full["PYTHONPATH"] = str(ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


_FIT = (
    "import logging, numpy as np\n"
    "logging.basicConfig(level=logging.DEBUG)\n"
    "from bayesclust import dp_means\n"
    "X = np.random.default_rng(0).normal(size=(60, 2)).astype(np.float32)\n"
    "print(dp_means(X, 1.0).n_clusters)\n"
)


@pytest.fixture(scope="module")
def fresh_import_then_fit_cache_off(tmp_path_factory):
    """One fresh interpreter for two tests: the modules ``import bayesclust`` loads, then a fit
    with bayesclust's persistent cache off (its directory given).  Returns the printed lines
    and that directory."""
    ours = tmp_path_factory.mktemp("cache_off") / "ours"
    out = _python(
        "import sys, bayesclust\n"
        "print(sorted(m for m in ('jax', 'numpyro', 'sklearn', 'matplotlib', 'scipy')"
        " if m in sys.modules))\n"
        "bayesclust.dp_means\n"
        "print(sorted(m for m in ('sklearn', 'matplotlib', 'numpyro') if m in sys.modules))\n"
        + _FIT, BAYESCLUST_CACHE="0", BAYESCLUST_CACHE_DIR=str(ours),
    ).stdout.split("\n")
    return out, ours


def test_import_loads_no_heavy_dependency(fresh_import_then_fit_cache_off):
    out, _ = fresh_import_then_fit_cache_off
    assert out[0] == "[]"
    assert out[1] == "[]"  # the functional core of DP-means needs neither


def test_persistent_cache_is_hit_by_a_second_process(tmp_path):
    cache = tmp_path / "jax"
    env = {"BAYESCLUST_CACHE": "1", "BAYESCLUST_CACHE_DIR": str(cache)}
    first = _python(_FIT, **env)
    files = sorted(p.name for p in cache.iterdir())
    assert any("_loop" in f for f in files)
    second = _python(_FIT, **env)
    assert second.stdout == first.stdout
    assert "Persistent compilation cache hit for 'jit__loop'" in second.stderr
    assert sorted(p.name for p in cache.iterdir()) == files  # nothing new to write


def test_persistent_cache_off_and_user_dir_kept(tmp_path, fresh_import_then_fit_cache_off):
    out, ours = fresh_import_then_fit_cache_off
    assert out[2].isdigit()  # the fit ran
    assert not ours.exists() or not any(ours.iterdir())
    theirs = tmp_path / "theirs"
    code = ("import jax\n"
            f"jax.config.update('jax_compilation_cache_dir', {str(theirs)!r})\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n") + _FIT
    _python(code, BAYESCLUST_CACHE="1", BAYESCLUST_CACHE_DIR=str(ours))
    assert not ours.exists() or not any(ours.iterdir())
    assert any(theirs.iterdir())


def test_hard_hdp_scalars_do_not_recompile():
    import bayesclust.inference.hard.hard_hdp as hh

    groups = [_blobs(80, 3, 3, seed=s) for s in range(3)]
    hh.hard_hdp(groups, 4.0, 30.0)
    runs, inits = hh._run._cache_size(), hh._initial_state._cache_size()
    hh.hard_hdp(groups, 4.5, 33.0)
    hh.hard_hdp(groups, 4.0, 30.0, max_iter=37)
    hh.hard_hdp(groups, 4.0, 30.0, max_iter=127)
    assert (hh._run._cache_size(), hh._initial_state._cache_size()) == (runs, inits)


@pytest.mark.parametrize("covariance_type", ["spherical", "diag", "full"])
def test_dp_gaussian_mixture_refit_on_seven_more_rows_does_not_compile(covariance_type):
    """20 rows, then 27: one row bucket (32), so the sampler's programs are reused."""
    from bayesclust import DPGaussianMixture

    X = _blobs(20, 2, 2, seed=4)
    options = dict(covariance_type=covariance_type, num_warmup=2, num_samples=2, num_chains=2,
                   random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few draws: a ConvergenceWarning
        DPGaussianMixture(**options).fit(X)
        with _compiles() as seen:
            est = DPGaussianMixture(**options).fit(np.vstack([X, X[:7] + 0.5]))
    assert seen == []
    assert est.labels_.shape == (27,) and est.posterior_.labels.shape[-1] == 27


def test_hdp_gaussian_mixture_refit_on_seven_more_rows_does_not_compile():
    """3 data sets of 24 rows, then 79 rows: one row bucket (80), and the largest data set
    (27 rows) in the bucket of 24 (32), so the CRF sampler's programs are reused.  alpha
    0.1 keeps each data set at a few tables: at 1 a fit's first sweeps could overfill the
    8-table start buffer on either path, and a grown buffer is a compile by design."""
    from bayesclust import HDPGaussianMixture

    X = _blobs(72, 2, 2, seed=6)
    gid = np.arange(72) % 3
    options = dict(alpha=0.1, num_warmup=2, num_samples=2, thin=1, num_chains=2, random_state=0)
    X7, gid7 = np.vstack([X, X[:7] + 0.5]), np.concatenate([gid, gid[:7]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few draws: a ConvergenceWarning
        HDPGaussianMixture(**options).fit(X, group_ids=gid)
        with _compiles() as seen:
            est = HDPGaussianMixture(**options).fit(X7, group_ids=gid7)
    assert seen == []
    assert est.labels_.shape == (79,) and est.posterior_.labels.shape[-1] == 79
