import contextlib
import gc
import os

# Under pytest-xdist the workers share the machine's cores: a BLAS thread pool per worker
# busy-waits against the others' (OpenBLAS spins), which cost 3.6x the CPU time of the
# temporal-states test (SciPy eigendecompositions) on 2 busy cores.  One BLAS thread each:
# the variables for the libraries loaded from here on (SciPy's own OpenBLAS), threadpoolctl
# for those already loaded.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)

# XLA:CPU's fusion emitters (its default code generator since 2025) spend about twice the
# CPU time of its loop emitters compiling the thousands of small programs the suite builds
# at its own shapes: tests/test_hard_hdp.py took 86 and 39 CPU-s (compile 118 and 44 s).
# The tests compile with the loop emitters, `make test-xla` too (what it tests is the pure-XLA
# programs' semantics, the code GPUs run; XLA:CPU's emitters and optimisation passes are not
# the GPU's): compiled cheaply it took 398 CPU-s against 652 with the same 363 tests passing.
# A run with BAYESCLUST_TEST_OPTIMIZED=1 compiles as users' programs do.  XLA reads XLA_FLAGS when JAX
# creates its CPU client (the first computation), so this precedes every import of jax;
# subprocesses (notebook kernels, the sharding workers) inherit it.
_COMPILE_CHEAPLY = os.environ.get("BAYESCLUST_TEST_OPTIMIZED", "0") != "1"


def _add_xla_flag(flag: str) -> None:
    name = flag.split("=", 1)[0].lstrip("-")
    if name not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()


if _COMPILE_CHEAPLY:
    _add_xla_flag("--xla_cpu_use_fusion_emitters=false")
# XLA:CPU splits each program's LLVM module to compile the parts on its thread pool: with an
# xdist worker on each core the threads only contend, and one part per program took 5.5 %
# less CPU time and 2.5 % less wall time (tests/test_dp_means.py, test_bad_input.py and
# test_cli.py, 2 workers, twice each).  It changes how a program is compiled, not the program,
# so every run sets it, `make test-xla` too.
_add_xla_flag("--xla_cpu_parallel_codegen_split_count=1")

import jax  # noqa: E402
import pytest  # noqa: E402

# Tests must never pick up a user's GPU/TPU or preallocate memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# bayesclust's own persistent compilation cache (on by default for users) stays off in
# the tests: results never depend on it, and tests/test_first_call.py turns it on in
# subprocesses of its own.  Set before anything imports bayesclust._validation.
os.environ["BAYESCLUST_CACHE"] = "0"

# JAX's persistent compilation cache is off unless BAYESCLUST_TEST_JAX_CACHE names a
# directory (then each xdist worker gets a subdirectory of its own); results never
# depend on it.  It was on by default until a cold CI run lost a worker to a native
# abort while XLA serialised the dp_gmm doctest's executable for the cache.  (With
# the cache off, a later cold run still crashed compiling the hdp_gmm doctest late in
# a worker; pyproject.toml's testpaths therefore run the doctests first.)
_CACHE = os.environ.get("BAYESCLUST_TEST_JAX_CACHE", "")
if _CACHE:
    _CACHE = os.path.join(_CACHE, os.environ.get("PYTEST_XDIST_WORKER", "main"))
    jax.config.update("jax_compilation_cache_dir", _CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


#: Test modules whose time is XLA compilation of many small programs (every test compiles its
#: own at its own shapes) rather than running them: they compile with XLA's optimisation passes
#: mostly off (``jax_disable_most_optimizations``), which cut each one's time by 9-40 % in a
#: full-suite comparison (pytest's per-test times, 2 workers).  The programs compute the same
#: operations, unfused and unvectorised.  The last line's modules (from test_hdp_gibbs on)
#: each cut their CPU time by 11-51 % in one module-by-module comparison (single process,
#: 292 -> 219 CPU-s over the fourteen; test_hdp_gibbs 62 -> 49); test_sharding, whose 8-device
#: and two-process workers inherit the setting, 59 -> 38 CPU-s; test_cli 87 -> 67, test_bad_input
#: 92 -> 51, test_dp_gmm 7.6 -> 4.8, test_discriminative 8.4 -> 7.0, test_kl_means 28.7 -> 20.5
#: (+24 % while its explicit sampler drew log-gammas for padding columns and ran long).
#: Measured the same way and not listed: test_smic, test_temporal,
#: test_metrics and test_draws_point_estimate (within 4 %), and test_kernels, whose chunked
#: nearest-centre comparisons need the optimised programs' bits.
#: The package's doctests compile cheaply too (the root conftest.py).  Modules that run long
#: programs (the consensus EM and enumeration tests, the notebooks), compare bits between two compiled paths (test_hard_dc) or follow chaotic NUTS
#: trajectories to a seed-dependent answer (test_mcmc) are not listed and compile optimised, as
#: users' programs are; so does any run with BAYESCLUST_TEST_OPTIMIZED=1.
COMPILE_BOUND_MODULES = frozenset({
    "test_estimators", "test_mcmc_kernels", "test_hard_hdp", "test_dp_means", "test_gibbs",
    "test_gibbs_gaussian", "test_comparison", "test_dc_inference", "test_defaults",
    "test_dp_means_restarts", "test_scale_invariance", "test_gmd", "test_hdp_gmm",
    "test_dc_baselines", "test_native_gibbs", "test_gibbs_vs_nuts", "test_paper",
    "test_did_program", "test_convergence", "test_consensus", "test_hdp_path", "test_jobs_dc",
    "test_first_call",
    "test_hdp_gibbs", "test_map_did", "test_ppc", "test_aspect_bayes", "test_cecib",
    "test_cecib_compiled", "test_gmdid", "test_did", "test_limits", "test_kmeans", "test_spom",
    "test_proximal", "test_native", "test_hypergraph", "test_sharding", "test_cli",
    "test_bad_input", "test_dp_gmm", "test_discriminative", "test_kl_means",
})


@pytest.fixture(autouse=True, scope="module")
def _compile_quickly(request):
    """Compile a compile-bound module's programs with XLA's optimisations mostly off."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    if not (_COMPILE_CHEAPLY and name in COMPILE_BOUND_MODULES):
        yield
        return
    # No program compiled optimised is reused: _drop_compiled_programs emptied JAX's caches
    # when the worker's previous module ended.
    with compiling_cheaply():
        yield


@contextlib.contextmanager
def compiling_cheaply():
    """XLA's optimisation passes mostly off (``jax_disable_most_optimizations``) inside the block."""
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        yield
    finally:
        jax.config.update("jax_disable_most_optimizations", False)


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs():
    """Free every compiled XLA program after each test module.

    Each XLA:CPU executable keeps about three memory maps of its own code, and
    JAX's caches keep every executable alive: an xdist worker that runs half
    the suite reached tens of thousands of maps, and at the kernel's limit
    (``vm.max_map_count``, 65,530 here) the next compile fails inside LLVM with
    a segmentation fault -- the native crashes that earlier cold CI runs saw
    "late in a worker".  Tests never rely on a warm cache across modules.
    """
    yield
    jax.clear_caches()
    gc.collect()


#: Memory maps at which a test module's compiled programs are freed before it ends.
_MAPS_HIGH = 30_000
_tests_run = [0]


def _memory_maps() -> int:
    try:
        with open("/proc/self/maps", "rb") as f:
            return f.read().count(b"\n")
    except OSError:  # not Linux: nothing to count
        return 0


@pytest.fixture(autouse=True)
def _drop_compiled_programs_when_many():
    """Free the compiled programs inside a module whose tests compile thousands of them.

    ``tests/test_estimators.py`` runs scikit-learn's check suite on every sampled
    estimator at many data shapes: one module alone came within 20 maps of the limit
    above.  Every tenth test counts the maps and frees the caches past ``_MAPS_HIGH``.
    """
    yield
    _tests_run[0] += 1
    if _tests_run[0] % 10 == 0 and _memory_maps() > _MAPS_HIGH:
        jax.clear_caches()
        gc.collect()


@pytest.fixture
def x64():
    """Run a test in float64 (exact comparisons against slow references)."""
    with jax.enable_x64(True):
        yield
