"""Sharded runs for tests/test_sharding.py, in a process with 8 forced host devices.

Usage: python tests/_sharded_worker.py INPUT.npz OUTPUT.npz

XLA_FLAGS must be set before jax is imported, so this runs as its own process
(the test process already initialised jax with one device).  Reads the inputs
written by the test, runs every case with ``mesh=`` an 8-device mesh, and
writes the outputs; the test compares them with single-device runs.
"""

from __future__ import annotations

import os
import sys


def chains_and_ensembles(inp, mesh, gaussian=True):
    """The samplers' chains and the k-means ensemble with its co-association, on ``mesh``.

    Called by this worker (8 devices), by ``tests/_multihost_worker.py`` (2 processes x 4
    devices) and by tests/test_sharding.py with ``mesh=None`` (the single-device
    references), so that the three run the same calls.  Small on purpose: 8 chains of
    10 sweeps on 36 points, 16 partitions; ``gaussian``: also ``gibbs_dp_gaussian`` (diag,
    no split-merge moves: its cheapest program to compile; full covariances share the
    chain sharding).
    """
    import warnings

    import numpy as np

    import bayesclust
    from bayesclust import gibbs_dp_gaussian
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble

    X, out = inp["chain_X"], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bayesclust.ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)  # "12 clusters merge into 3 under a full model"
        # The spherical model through the estimator (native sweeps on a CPU).
        est = bayesclust.DPGaussianMixture(sigma2=0.01, num_warmup=4, num_samples=6,
                                           num_chains=8, random_state=0, mesh=mesh).fit(X)
        post = est.posterior_
        out["gmm_labels"], out["gmm_point"] = np.asarray(post.labels), est.labels_
        out["gmm_loglik"], out["gmm_means"] = post.log_likelihood, post.params["means"]
        out["gmm_kernels"] = np.array(post.kernels)
        out["gmm_n_clusters"] = np.asarray(post.n_clusters)
        if gaussian:
            post = gibbs_dp_gaussian(1, X, covariance_type="diag", num_warmup=4, num_samples=6,
                                     num_chains=8, progress_bar=False, mesh=mesh)
            out["diag_labels"], out["diag_loglik"] = np.asarray(post.labels), post.log_likelihood
    ens = kmeans_ensemble(2, X, 16, subsample=0.8, backend="jax", mesh=mesh)
    C = coassociation(ens, mesh=mesh)
    out["ens_labels"], out["ens_counts"] = ens.labels, C.counts.toarray()
    out["ens_trials"], out["ens_sampled"] = C.pair_trials.toarray(), C.sampled
    ea = bayesclust.EvidenceAccumulation(n_clusters=3, select=None, n_partitions=16,
                                         subsample=0.8, random_state=2, mesh=mesh)
    if mesh is None:  # the jax loop's ensemble of the estimator's key, counted on the host
        seed = np.random.RandomState(2).randint(np.iinfo(np.int32).max)
        ea.fit(X, ensemble=kmeans_ensemble(seed, X, 16, subsample=0.8, backend="jax"))
    else:
        ea.fit(X)
    out["ea_labels"], out["ea_counts"] = ea.labels_, ea.coassociation_.counts.toarray()
    return out


def bad_counts(inp, mesh):
    """The error messages of chain and partition counts that ``mesh`` does not divide."""
    import numpy as np

    import bayesclust
    from bayesclust import gibbs_dp_gaussian, gibbs_dp_gmm
    from bayesclust.inference.consensus.coassociation import coassociation
    from bayesclust.inference.consensus.ensembles import kmeans_ensemble

    X = inp["chain_X"]
    calls = {
        "gibbs_dp_gmm": lambda: gibbs_dp_gmm(0, X, num_chains=4, mesh=mesh),
        "gibbs_dp_gaussian": lambda: gibbs_dp_gaussian(0, X, num_chains=12, mesh=mesh),
        "estimator": lambda: bayesclust.DPGaussianMixture(num_chains=4, mesh=mesh).fit(X),
        "kmeans_ensemble": lambda: kmeans_ensemble(0, X, 12, backend="jax", mesh=mesh),
        "numpy_backend": lambda: kmeans_ensemble(0, X, 16, mesh=mesh),
        "coassociation": lambda: coassociation(np.zeros((12, 36), int), mesh=mesh),
        "weights": lambda: coassociation(np.zeros((16, 36), int), weights=np.ones(16), mesh=mesh),
        "ea": lambda: bayesclust.EvidenceAccumulation(n_partitions=12, mesh=mesh).fit(X),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out["err_" + name] = np.array("no error")
        except ValueError as e:
            out["err_" + name] = np.array(str(e))
    return out


def main(src: str, dst: str) -> None:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    jax.config.update("jax_enable_x64", True)
    cache = os.environ.get("BAYESCLUST_TEST_JAX_CACHE")
    if cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)

    import bayesclust
    from bayesclust import dp_means, hard_hdp
    from bayesclust.inference.hard.dp_means import dp_means_pass

    assert jax.device_count() == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("data",))
    inp = dict(np.load(src))
    out = {"n_devices": np.int64(jax.device_count()), "module": np.array(bayesclust.__file__)}

    def put(prefix, res):
        out[prefix + "labels"] = np.asarray(res.labels)
        out[prefix + "centers"] = np.asarray(res.centers)
        out[prefix + "objective"] = np.float64(res.objective)
        out[prefix + "trace"] = np.asarray(res.objective_trace)
        out[prefix + "n_iter"] = np.int64(res.n_iter)
        out[prefix + "converged"] = np.bool_(res.converged)

    X, lam = inp["dp_X"], float(inp["dp_lam"])
    for name in ("plain", "weighted", "zero"):
        w = None if name == "plain" else inp[f"dp_w_{name}"]
        put(f"dp_{name}_", dp_means(X, lam, sample_weight=w, mesh=mesh))
    # An already sharded jax.Array (rows not divisible by 8: sharding the first 200).
    Xs = jax.device_put(X[:200], NamedSharding(mesh, P("data")))
    put("dp_presharded_", dp_means(Xs, lam, mesh=mesh))
    put("dp_host200_", dp_means(X[:200], lam, mesh=mesh))

    # One pass from a given state, in shard_map, padded with zero-weight rows.
    Xp, wp = inp["pass_X"], inp["pass_w"]
    n = Xp.shape[0]
    n_pad = -(-n // 8) * 8
    Xp = np.concatenate([Xp, np.zeros((n_pad - n, Xp.shape[1]))])
    wp = np.concatenate([wp, np.zeros(n_pad - n)])
    fn = jax.jit(jax.shard_map(
        lambda X, w, C, k, lam: dp_means_pass(X, w, C, k, lam, axis_name="data", n_rows=n),
        mesh=mesh, in_specs=(P("data"), P("data"), P(), P(), P()),
        out_specs=(P("data"), P("data"), P(), P(), P()), check_vma=False,
    ))
    labels, sq, C, k_total, overflow = fn(
        Xp, wp, inp["pass_centers"], np.int32(inp["pass_k"]), np.float64(inp["pass_lam"])
    )
    out["pass_labels"] = np.asarray(labels)[:n]
    out["pass_sq_dist"] = np.asarray(sq)[:n]
    out["pass_centers"] = np.asarray(C)
    out["pass_k_total"] = np.int64(k_total)
    out["pass_overflow"] = np.bool_(overflow)

    for c in range(int(inp["hdp_cases"])):
        res = hard_hdp(inp["hdp_X"], float(inp[f"hdp_lam_l_{c}"]), float(inp[f"hdp_lam_g_{c}"]),
                       group_ids=inp["hdp_gid"], mesh=mesh)
        p = f"hdp{c}_"
        out[p + "flat_labels"] = res.flat_labels
        out[p + "local_labels"] = np.concatenate(res.local_labels)
        out[p + "local_to_global"] = np.concatenate(res.local_to_global)
        out[p + "centers"] = res.centers
        out[p + "objective"] = np.float64(res.objective)
        out[p + "trace"] = res.objective_trace
        out[p + "n_iter"] = np.int64(res.n_iter)
        out[p + "n_global"] = np.int64(res.n_global)
        out[p + "converged"] = np.bool_(res.converged)
    # The estimators' mesh parameter (float64 data; x64 is on here).
    est = bayesclust.DPMeans(lam=lam, mesh=mesh, random_state=0).fit(X)
    out["est_dp_labels"], out["est_dp_centers"] = est.labels_, est.cluster_centers_
    out["est_dp_predict"] = est.predict(inp["hdp_X"][:, :1].repeat(3, axis=1))
    est = bayesclust.HardHDP(lam_local=1.0, lam_global=2.0, mesh=mesh).fit(
        inp["hdp_X"], group_ids=inp["hdp_gid"])
    out["est_hdp_labels"], out["est_hdp_local"] = est.labels_, est.local_labels_
    out.update({"chains_" + k: v for k, v in chains_and_ensembles(inp, mesh).items()})
    out.update(bad_counts(inp, mesh))
    np.savez(dst, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
