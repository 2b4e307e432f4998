"""One process of a two-process (multi-host style) sharded DP-means run, for tests/test_sharding.py.

Usage: python tests/_multihost_worker.py PROCESS_ID PORT INPUT.npz OUTPUT.npz

Two such processes, each with 4 forced host devices, join one 8-device mesh
through ``jax.distributed.initialize`` (CPU collectives over gloo) and call
``dp_means(X, lam, mesh=mesh)`` exactly as the docstring tells multi-host users, then
the spherical sampler's chains and the k-means ensemble of
``_sharded_worker.chains_and_ensembles``.
"""

from __future__ import annotations

import os
import sys


def main(pid: int, port: int, src: str, dst: str) -> None:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    ).strip()
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import numpy as np
    from jax.sharding import Mesh

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid)
    from bayesclust import dp_means

    assert jax.process_count() == 2 and jax.device_count() == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("data",))
    inp = np.load(src)
    res = dp_means(inp["dp_X"], float(inp["dp_lam"]), mesh=mesh)
    # The samplers' chains and the ensemble: the calls of the 8-device worker.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _sharded_worker import chains_and_ensembles

    # gibbs_dp_gaussian is left to the 8-device worker (its compilation is the costly part).
    chains = {"chains_" + k: v for k, v in chains_and_ensembles(inp, mesh, gaussian=False).items()}
    np.savez(dst, labels=res.labels, objective=res.objective, n_iter=res.n_iter,
             centers=res.centers, processes=jax.process_count(), **chains)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
