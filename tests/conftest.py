import os

import jax
import pytest

# Tests must never pick up a user's GPU/TPU or preallocate memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

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


@pytest.fixture
def x64():
    """Run a test in float64 (exact comparisons against slow references)."""
    with jax.enable_x64(True):
        yield
