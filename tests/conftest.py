import os

import jax
import pytest

# Tests must never pick up a user's GPU/TPU or preallocate memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# The samplers' compilations dominate the suite's time, and reruns compile the
# same programs again: keep them in JAX's persistent compilation cache (results
# are unaffected; BAYESCLUST_TEST_JAX_CACHE="" disables it).  Each xdist worker
# gets a directory of its own: JAX 0.10's file cache writes an entry in place,
# without a lock or a rename, so a worker could read another's half-written
# executable (a cold-cache CI run once lost a worker to a native crash).
_CACHE = os.environ.get(
    "BAYESCLUST_TEST_JAX_CACHE",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".pytest_cache", "jax"),
)
if _CACHE:
    _CACHE = os.path.join(_CACHE, os.environ.get("PYTEST_XDIST_WORKER", "main"))
    jax.config.update("jax_compilation_cache_dir", _CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


@pytest.fixture
def x64():
    """Run a test in float64 (exact comparisons against slow references)."""
    with jax.enable_x64(True):
        yield
