import gc
import os

import jax
import pytest

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
