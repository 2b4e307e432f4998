"""Sharded DP-means, hard HDP, samplers' chains and ensembles: ``mesh=`` runs equal
single-device runs.

The sharded runs need several devices, and the number of host devices is fixed
when jax initialises: they run in a subprocess (``tests/_sharded_worker.py``)
with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``, while this process
computes the single-device references (float64) with ``mesh=None``.

What "equal" means: labels, cluster counts, iterations and the convergence flag
exactly; in a single pass also the new centres (copied seed points) bit for bit;
centres and objectives of a run to 1e-13 relative, because per-device partial
sums are added in a different order than the single-device sum (floating-point
addition is not associative), and per-point distances to a few ulps (XLA
vectorises the d-term sum differently in the two programs).  The samplers' chains and
the k-means ensemble run whole chains and partitions per device, so their label draws,
partitions and (integer) co-association counts are equal exactly; the samplers'
log-likelihoods to round-off (computed per chain in a differently batched program).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh

import bayesclust
from bayesclust import dp_means, hard_hdp
from bayesclust.inference.hard.dp_means import dp_means_pass

from ._sharded_worker import chains_and_ensembles

WORKER = Path(__file__).with_name("_sharded_worker.py")
MULTIHOST_WORKER = Path(__file__).with_name("_multihost_worker.py")
RTOL = 1e-13


def _inputs():
    rng = np.random.default_rng(7)
    inp = {}
    # DP-means: 203 rows (not a multiple of 8), lam giving > 32 clusters (buffer growth).
    inp["dp_X"] = rng.normal(size=(203, 3)) * 2.0
    inp["dp_lam"] = np.float64(4.0)
    inp["dp_w_weighted"] = rng.uniform(0.5, 2.0, 203)
    w = rng.uniform(0.5, 2.0, 203)
    w[[0, 50, 202]] = 0.0  # 200 positive rows: a multiple of 8
    inp["dp_w_zero"] = w
    # One pass from a random state: more than 256 candidates, spread over all shards.
    inp["pass_X"] = rng.normal(size=(1001, 5))
    inp["pass_w"] = rng.uniform(0.5, 2.0, 1001)
    C = np.zeros((128, 5))
    C[:3] = rng.normal(size=(3, 5))
    inp["pass_centers"] = C
    inp["pass_k"] = np.int64(3)
    inp["pass_lam"] = np.float64(4.0)
    # Hard HDP: 5 data sets of 37 points (185 rows) around 6 shared centres.
    centres = rng.normal(size=(6, 2)) * 3.0
    gid = np.repeat(np.arange(5), 37)
    inp["hdp_X"] = centres[rng.integers(6, size=185)] + 0.5 * rng.normal(size=(185, 2))
    inp["hdp_gid"] = rng.permutation(gid)  # data sets interleaved in the input rows
    for c, (ll, lg) in enumerate([(1.0, 2.0), (0.5, 1.0)]):
        inp[f"hdp_lam_l_{c}"] = np.float64(ll)
        inp[f"hdp_lam_g_{c}"] = np.float64(lg)
    inp["hdp_cases"] = np.int64(2)
    # Chains and ensembles: 12 tight groups of 3 points (more clusters than the samplers'
    # first buffer of 8 slots: it grows).
    grid = 3.0 * np.stack(np.meshgrid(np.arange(4), np.arange(3)), -1).reshape(12, 2)
    inp["chain_X"] = np.repeat(grid, 3, axis=0) + 0.1 * rng.normal(size=(36, 2))
    return inp


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(inputs, single-device results, sharded results from the 8-device worker)."""
    tmp = tmp_path_factory.mktemp("sharding")
    inp = _inputs()
    np.savez(tmp / "in.npz", **inp)
    env = _worker_env()
    cache = jax.config.jax_compilation_cache_dir
    if cache:
        env["BAYESCLUST_TEST_JAX_CACHE"] = cache
    # Started first: the worker compiles while this process computes the references.
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(tmp / "in.npz"), str(tmp / "out.npz")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        with jax.enable_x64(True):
            ref = _references(inp)
        log, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:  # pragma: no cover - only on a hung worker
            proc.kill()
    assert proc.returncode == 0, log[-4000:]
    return inp, ref, dict(np.load(tmp / "out.npz"))


def _worker_env():
    root = str(Path(bayesclust.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    if jax.config.read("jax_disable_most_optimizations"):  # this module compiles cheaply: so do they
        env["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
    return env


def _references(inp):
    ref = {}
    X, lam = inp["dp_X"], float(inp["dp_lam"])
    ref["dp_plain"] = dp_means(X, lam)
    ref["dp_weighted"] = dp_means(X, lam, sample_weight=inp["dp_w_weighted"])
    ref["dp_zero"] = dp_means(X, lam, sample_weight=inp["dp_w_zero"])
    ref["dp_host200"] = dp_means(X[:200], lam)
    ref["pass"] = jax.device_get(dp_means_pass(
        jnp.asarray(inp["pass_X"]), jnp.asarray(inp["pass_w"]), jnp.asarray(inp["pass_centers"]),
        jnp.int32(inp["pass_k"]), jnp.float64(inp["pass_lam"]),
    ))
    ref["est_dp"] = bayesclust.DPMeans(lam=lam, random_state=0).fit(X)
    ref["est_hdp"] = bayesclust.HardHDP(lam_local=1.0, lam_global=2.0).fit(
        inp["hdp_X"], group_ids=inp["hdp_gid"])
    for c in range(int(inp["hdp_cases"])):
        ref[f"hdp{c}"] = hard_hdp(inp["hdp_X"], float(inp[f"hdp_lam_l_{c}"]),
                                  float(inp[f"hdp_lam_g_{c}"]), group_ids=inp["hdp_gid"])
    ref["chains"] = chains_and_ensembles(inp, None)
    return ref


def _assert_same_fit(out, p, a):
    """The worker's run ``p`` has the iterations, convergence, centres, objective and trace of
    the single-device result ``a`` (centres and objectives up to float64 round-off)."""
    assert int(out[p + "n_iter"]) == a.n_iter
    assert bool(out[p + "converged"]) == a.converged
    assert out[p + "centers"].shape == a.centers.shape
    np.testing.assert_allclose(out[p + "centers"], a.centers, rtol=0, atol=RTOL * 10)
    np.testing.assert_allclose(float(out[p + "objective"]), a.objective, rtol=RTOL)
    np.testing.assert_allclose(out[p + "trace"], a.objective_trace, rtol=RTOL)


def test_worker_ran_on_eight_devices_with_this_checkout(runs):
    _, _, out = runs
    assert int(out["n_devices"]) == 8
    assert Path(str(out["module"])).resolve() == Path(bayesclust.__file__).resolve()


@pytest.mark.parametrize("case", ["plain", "weighted", "zero", "host200"])
def test_dp_means_sharded_equals_single_device(runs, case):
    _, ref, out = runs
    a, p = ref[f"dp_{case}"], f"dp_{case}_"
    assert a.n_clusters > 32  # the cluster buffer grew (32 slots at the start)
    assert a.n_iter >= 2
    np.testing.assert_array_equal(out[p + "labels"], a.labels)
    _assert_same_fit(out, p, a)


def test_dp_means_zero_weight_points_sharded(runs):
    # Zero-weight rows are removed before sharding and assigned afterwards:
    # they must not open clusters, and get their nearest final centre.
    inp, ref, out = runs
    labels = out["dp_zero_labels"]
    zero = inp["dp_w_zero"] == 0
    d2 = ((inp["dp_X"][zero][:, None, :] - out["dp_zero_centers"][None]) ** 2).sum(-1)
    np.testing.assert_array_equal(labels[zero], d2.argmin(1))
    assert ref["dp_zero"].n_clusters == len(out["dp_zero_centers"])


def test_dp_means_presharded_input_equals_host_input(runs):
    _, _, out = runs
    for key in ("labels", "centers", "objective", "trace", "n_iter"):
        np.testing.assert_array_equal(out["dp_presharded_" + key], out["dp_host200_" + key])


def test_single_pass_equals_single_device(runs):
    inp, ref, out = runs
    labels, sq, C, k_total, overflow = ref["pass"]
    # The case is not trivial: hundreds of candidates (several blocks of 256) on every shard.
    d_old = ((inp["pass_X"][:, None] - inp["pass_centers"][None, :3]) ** 2).sum(-1).min(1)
    candidates = inp["pass_w"] * d_old > inp["pass_lam"]
    assert candidates.sum() > 512
    assert all(candidates[s: s + 126].any() for s in range(0, 1001, 126))
    assert not overflow and not bool(out["pass_overflow"])
    assert int(k_total) == int(out["pass_k_total"]) > 3 + 8
    np.testing.assert_array_equal(out["pass_labels"], labels)
    np.testing.assert_allclose(out["pass_sq_dist"], sq, rtol=4 * np.finfo(np.float64).eps, atol=0)
    np.testing.assert_array_equal(out["pass_centers"], C)


@pytest.mark.parametrize("c", [0, 1])
def test_hard_hdp_sharded_equals_single_device(runs, c):
    _, ref, out = runs
    a, p = ref[f"hdp{c}"], f"hdp{c}_"
    assert a.n_iter >= 2 and a.n_global >= 3
    np.testing.assert_array_equal(out[p + "flat_labels"], a.flat_labels)
    np.testing.assert_array_equal(out[p + "local_labels"], np.concatenate(a.local_labels))
    np.testing.assert_array_equal(out[p + "local_to_global"], np.concatenate(a.local_to_global))
    assert int(out[p + "n_global"]) == a.n_global
    _assert_same_fit(out, p, a)


def test_estimators_with_mesh_equal_single_device(runs):
    # DPMeans(mesh=...) and HardHDP(mesh=...) on 8 devices: the same fit as without.
    inp, ref, out = runs
    a = ref["est_dp"]
    assert a.n_clusters_ > 32
    np.testing.assert_array_equal(out["est_dp_labels"], a.labels_)
    np.testing.assert_allclose(out["est_dp_centers"], a.cluster_centers_, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(
        out["est_dp_predict"], a.predict(inp["hdp_X"][:, :1].repeat(3, axis=1)))
    h = ref["est_hdp"]
    assert h.n_clusters_ >= 3
    np.testing.assert_array_equal(out["est_hdp_labels"], h.labels_)
    np.testing.assert_array_equal(out["est_hdp_local"], h.local_labels_)


def _assert_same_chains(ref, out, prefix="chains_"):
    """Label draws, point partitions, partitions and counts exactly; log-likelihoods to
    float64 round-off."""
    gaussian = prefix + "diag_labels" in out
    for key in ("gmm_labels", "gmm_point", "ens_labels", "ens_counts", "ens_trials",
                "ens_sampled", "ea_labels", "ea_counts") + ("diag_labels",) * gaussian:
        np.testing.assert_array_equal(out[prefix + key], ref[key], err_msg=key)
    for key in ("gmm_loglik", "gmm_means") + ("diag_loglik",) * gaussian:
        np.testing.assert_allclose(out[prefix + key], ref[key], rtol=RTOL, atol=0, err_msg=key)


def test_chains_and_ensembles_sharded_equal_single_device(runs):
    # 8 chains on 8 devices (one each), 16 partitions (two each): the same draws, the same
    # ensemble and co-association as on one device.
    _, ref, out = runs
    r = ref["chains"]
    # Not trivial: the buffer grew, the chains moved and differ, the partitions differ,
    # objects are missing.
    assert r["gmm_n_clusters"].max() > 8
    assert len({tuple(c[-1]) for c in r["gmm_labels"]}) > 1
    assert len({tuple(c[-1]) for c in r["diag_labels"]}) > 1
    assert "chains_diag_labels" in out
    assert str(r["gmm_kernels"]) == str(out["chains_gmm_kernels"])
    assert (r["ens_labels"] == -1).any() and len({tuple(p) for p in r["ens_labels"]}) == 16
    assert r["ens_trials"].max() < 16
    _assert_same_chains(r, out)


@pytest.mark.parametrize("name, needle", [
    ("gibbs_dp_gmm", "num_chains=4 must be a multiple of the mesh's 8 devices"),
    ("gibbs_dp_gaussian", "num_chains=12 must be a multiple"),
    ("estimator", "num_chains=4 must be a multiple"),
    ("kmeans_ensemble", "n_partitions=12 must be a multiple"),
    ("numpy_backend", "mesh needs backend='jax'"),
    ("coassociation", "n_partitions (the ensemble's partitions)=12 must be a multiple"),
    ("weights", "weights cannot be combined with mesh"),
    ("ea", "n_partitions=12 must be a multiple"),
])
def test_counts_the_mesh_does_not_divide_give_clear_errors(runs, name, needle):
    _, _, out = runs
    assert needle in str(out["err_" + name])


# --------------------------------------------------------------------------- #
# In this (one-device) process
# --------------------------------------------------------------------------- #


def test_one_device_mesh_equals_no_mesh(runs, x64):
    # The sharded code path on a mesh of one device (no padding, psum of one term).
    inp, ref, _ = runs
    mesh = Mesh(np.array(jax.devices()[:1]), ("rows",))
    a = ref["dp_plain"]
    b = dp_means(inp["dp_X"], float(inp["dp_lam"]), mesh=mesh)
    np.testing.assert_array_equal(b.labels, a.labels)
    np.testing.assert_array_equal(b.objective_trace, a.objective_trace)
    np.testing.assert_array_equal(b.centers, a.centers)


@pytest.mark.parametrize("fn", ["dp_means", "hard_hdp", "gibbs_dp_gmm", "gibbs_dp_gaussian",
                                "kmeans_ensemble", "coassociation"])
def test_bad_mesh_gives_clear_error(fn):
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble

    X = np.arange(8.0).reshape(4, 2)
    calls = {
        "dp_means": lambda mesh: dp_means(X, 1.0, mesh=mesh),
        "hard_hdp": lambda mesh: hard_hdp(X, 1.0, 2.0, group_ids=[0, 0, 1, 1], mesh=mesh),
        "gibbs_dp_gmm": lambda mesh: bayesclust.gibbs_dp_gmm(0, X, num_chains=2, mesh=mesh),
        "gibbs_dp_gaussian": lambda mesh: bayesclust.gibbs_dp_gaussian(0, X, mesh=mesh),
        "kmeans_ensemble": lambda mesh: kmeans_ensemble(0, X, 2, backend="jax", mesh=mesh),
        "coassociation": lambda mesh: coassociation([[0, 0, 1, 1], [0, 1, 1, 1]], mesh=mesh),
    }
    call = calls[fn]

    with pytest.raises(TypeError, match="mesh must be a jax.sharding.Mesh"):
        call("data")
    with pytest.raises(TypeError, match="mesh"):
        call(jax.devices())
    two_axes = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("a", "b"))
    with pytest.raises(ValueError, match="exactly one"):
        call(two_axes)


@pytest.mark.parametrize("make", [
    lambda mesh: bayesclust.DPMeans(lam=1.0, mesh=mesh),
    lambda mesh: bayesclust.HardHDP(lam_local=1.0, lam_global=2.0, mesh=mesh),
    lambda mesh: bayesclust.DPGaussianMixture(mesh=mesh),
    lambda mesh: bayesclust.EvidenceAccumulation(mesh=mesh),
], ids=["DPMeans", "HardHDP", "DPGaussianMixture", "EvidenceAccumulation"])
def test_estimator_bad_mesh_gives_clear_error(make):
    from sklearn.utils._param_validation import InvalidParameterError

    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(InvalidParameterError, match="'mesh' parameter.*Mesh"):
        make("data").fit(X)


@pytest.mark.slow
def test_two_processes_via_jax_distributed_equal_single_device(runs, tmp_path):
    # The documented multi-host recipe, on one machine: two processes with 4 host
    # devices each join one 8-device mesh through jax.distributed.initialize.
    inp, ref, _ = runs
    np.savez(tmp_path / "in.npz", dp_X=inp["dp_X"], dp_lam=inp["dp_lam"], chain_X=inp["chain_X"])
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        port = sock.getsockname()[1]
    procs = [
        subprocess.Popen(
            [sys.executable, str(MULTIHOST_WORKER), str(pid), str(port),
             str(tmp_path / "in.npz"), str(tmp_path / f"out{pid}.npz")],
            env=_worker_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for pid in (0, 1)
    ]
    try:
        logs = [p.communicate(timeout=600)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:  # pragma: no cover - only on a hung worker
                p.kill()
    a = ref["dp_plain"]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-4000:]
    for pid in (0, 1):  # every process receives the full result
        out = np.load(tmp_path / f"out{pid}.npz")
        assert int(out["processes"]) == 2
        np.testing.assert_array_equal(out["labels"], a.labels)
        assert int(out["n_iter"]) == a.n_iter
        np.testing.assert_allclose(float(out["objective"]), a.objective, rtol=RTOL)
        np.testing.assert_allclose(out["centers"], a.centers, rtol=0, atol=RTOL * 10)
        _assert_same_chains(ref["chains"], out)
